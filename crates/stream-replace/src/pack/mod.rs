//! Ready rules for PII and secrets (feature `pii`).
//!
//! [`pii()`] and [`secrets()`] are [`Pack`]s, combined with
//! [`Pack::and`]; [`high_entropy()`] and [`seed_phrases()`] are optional
//! detectors. A pack is an ordered list of [`PackRule`]s, each with an
//! id, a regex, the text that replaces a match (its mask), an action, and
//! for some a validator from [`validate`](crate::validate). Each rule documents what it
//! catches ([`PackRule::what`]) and what it misses ([`PackRule::misses`]).
//! [`Pack::add_to`] adds the rules to a [`RulesBuilder`]; add your own
//! rules before or after them.
//!
//! ```
//! use stream_replace::{pack, Rules};
//!
//! let mut builder = Rules::builder();
//! pack::pii().add_to(&mut builder);
//! let rules = builder.build()?;
//!
//! let mut r = rules.replacer();
//! let mut out = String::new();
//! for chunk in ["Mail ann@exa", "mple.org, key sk-ant-api03-", "AbCdEfGhIjKlMnOpQrStUv", "wx, card 4111 1111 1111 1111."] {
//!     out += &r.feed(chunk)?;
//! }
//! out += &r.flush()?;
//! assert_eq!(out, "Mail [EMAIL], key [ANTHROPIC_KEY], card [CARD].");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The rules
//!
//! In the order [`pii()`] lists them:
//!
//! | id | mask | action | validator |
//! |---|---|---|---|
//! | `private_key` | `[PRIVATE_KEY]` | block | |
//! | `anthropic_key` | `[ANTHROPIC_KEY]` | mask | |
//! | `openai_key` | `[OPENAI_KEY]` | mask | |
//! | `aws_access_key_id` | `[AWS_KEY]` | mask | |
//! | `github_token` | `[GITHUB_TOKEN]` | mask | |
//! | `slack_token` | `[SLACK_TOKEN]` | mask | |
//! | `google_api_key` | `[GOOGLE_KEY]` | mask | |
//! | `stripe_key` | `[STRIPE_KEY]` | mask | |
//! | `jwt` | `[JWT]` | mask | |
//! | `email` | `[EMAIL]` | mask | |
//! | `iban` | `[IBAN]` | mask | [`iban`](crate::validate::iban) |
//! | `us_ssn` | `[US_SSN]` | block | [`us_ssn`](crate::validate::us_ssn) |
//! | `payment_card` | `[CARD]` | mask | [`luhn`](crate::validate::luhn) |
//! | `phone` | `[PHONE]` | mask | |
//! | `phone_intl` | `[PHONE]` | mask | [`phone`](crate::validate::phone) |
//! | `phone_national` | `[PHONE]` | mask | [`phone`](crate::validate::phone) |
//! | `ipv6` | `[IPV6]` | mask | |
//! | `ipv4` | `[IPV4]` | mask | |
//!
//! [`think()`] (id `think`, removes `<think>…</think>`) is not in the list:
//! add it when the text comes from a reasoning model and its reasoning must
//! not reach the reader.
//!
//! # The secrets pack
//!
//! [`secrets()`] finds credentials by their label and keys and tokens by
//! their vendor's documented format. Its first rules are the credentials
//! found by label, which keep the label and mask the value with a
//! [`template`](PackRule::template) (`password=hunter2` becomes
//! `password=[SECRET]`, `postgres://admin:pw@db` becomes
//! `postgres://admin:[PASSWORD]@db`); then the vendor formats, the
//! specific before the general (`sk-ant-`, `sk-or-v1-` before `sk-`); then
//! `jwt` and the catch-all `credential_assignment`. It shares
//! `private_key`, `jwt` and the eight vendor rules of [`pii()`] (same ids,
//! same patterns): `pii().and(secrets())` has each once.
//!
//! In the order [`secrets()`] lists them:
//!
//! | id | mask | action | validator | template |
//! |---|---|---|---|---|
//! | `private_key` | `[PRIVATE_KEY]` | block | | |
//! | `url_password` | `[PASSWORD]` | mask | | `://${user}:[PASSWORD]@` |
//! | `auth_header` | `[CREDENTIAL]` | mask | [`credential`](crate::validate::credential) | `${label}[CREDENTIAL]` |
//! | `cookie_header` | `[COOKIE]` | mask | | `${label}[COOKIE]` |
//! | `bearer_token` | `[TOKEN]` | mask | | `${label}[TOKEN]` |
//! | `anthropic_key` | `[ANTHROPIC_KEY]` | mask | | |
//! | `openrouter_key` | `[OPENROUTER_KEY]` | mask | | |
//! | `openai_key` | `[OPENAI_KEY]` | mask | | |
//! | `aws_access_key_id` | `[AWS_KEY]` | mask | | |
//! | `aws_sts_key_id` | `[AWS_KEY]` | mask | | |
//! | `github_token` | `[GITHUB_TOKEN]` | mask | | |
//! | `slack_token` | `[SLACK_TOKEN]` | mask | | |
//! | `slack_app_token` | `[SLACK_TOKEN]` | mask | | |
//! | `slack_webhook` | `[SLACK_WEBHOOK]` | mask | | |
//! | `google_api_key` | `[GOOGLE_KEY]` | mask | | |
//! | `google_oauth_client_secret` | `[GOOGLE_SECRET]` | mask | | |
//! | `google_oauth_access_token` | `[GOOGLE_TOKEN]` | mask | | |
//! | `stripe_key` | `[STRIPE_KEY]` | mask | | |
//! | `stripe_webhook_secret` | `[STRIPE_KEY]` | mask | | |
//! | `azure_storage_key` | `[AZURE_KEY]` | mask | | |
//! | `digitalocean_token` | `[DIGITALOCEAN_TOKEN]` | mask | | |
//! | `alibaba_access_key_id` | `[ALIBABA_KEY]` | mask | | |
//! | `databricks_token` | `[DATABRICKS_TOKEN]` | mask | | |
//! | `hashicorp_vault_token` | `[VAULT_TOKEN]` | mask | | |
//! | `terraform_cloud_token` | `[TERRAFORM_TOKEN]` | mask | [`terraform_token_id`](crate::validate::terraform_token_id) | |
//! | `doppler_token` | `[DOPPLER_TOKEN]` | mask | | |
//! | `pulumi_token` | `[PULUMI_TOKEN]` | mask | | |
//! | `grafana_token` | `[GRAFANA_TOKEN]` | mask | | |
//! | `new_relic_key` | `[NEW_RELIC_KEY]` | mask | | |
//! | `sentry_token` | `[SENTRY_TOKEN]` | mask | | |
//! | `gitlab_token` | `[GITLAB_TOKEN]` | mask | | |
//! | `gitlab_trigger_token` | `[GITLAB_TOKEN]` | mask | | |
//! | `atlassian_token` | `[ATLASSIAN_TOKEN]` | mask | | |
//! | `npm_token` | `[NPM_TOKEN]` | mask | | |
//! | `pypi_token` | `[PYPI_TOKEN]` | mask | | |
//! | `rubygems_key` | `[RUBYGEMS_KEY]` | mask | | |
//! | `nuget_key` | `[NUGET_KEY]` | mask | | |
//! | `docker_hub_token` | `[DOCKER_TOKEN]` | mask | | |
//! | `postman_key` | `[POSTMAN_KEY]` | mask | | |
//! | `shopify_token` | `[SHOPIFY_TOKEN]` | mask | | |
//! | `linear_key` | `[LINEAR_KEY]` | mask | | |
//! | `notion_token` | `[NOTION_TOKEN]` | mask | | |
//! | `figma_token` | `[FIGMA_TOKEN]` | mask | | |
//! | `airtable_token` | `[AIRTABLE_TOKEN]` | mask | | |
//! | `square_token` | `[SQUARE_TOKEN]` | mask | | |
//! | `braintree_token` | `[BRAINTREE_TOKEN]` | mask | | |
//! | `razorpay_key` | `[RAZORPAY_KEY]` | mask | | |
//! | `flutterwave_key` | `[FLUTTERWAVE_KEY]` | mask | | |
//! | `plaid_token` | `[PLAID_TOKEN]` | mask | | |
//! | `discord_webhook` | `[DISCORD_WEBHOOK]` | mask | | |
//! | `discord_bot_token` | `[DISCORD_TOKEN]` | mask | | |
//! | `telegram_bot_token` | `[TELEGRAM_TOKEN]` | mask | | |
//! | `twilio_api_key` | `[TWILIO_KEY]` | mask | | |
//! | `sendgrid_key` | `[SENDGRID_KEY]` | mask | | |
//! | `mailgun_key` | `[MAILGUN_KEY]` | mask | | |
//! | `mailchimp_key` | `[MAILCHIMP_KEY]` | mask | | |
//! | `huggingface_token` | `[HUGGINGFACE_TOKEN]` | mask | | |
//! | `groq_key` | `[GROQ_KEY]` | mask | | |
//! | `replicate_token` | `[REPLICATE_TOKEN]` | mask | | |
//! | `perplexity_key` | `[PERPLEXITY_KEY]` | mask | | |
//! | `xai_key` | `[XAI_KEY]` | mask | | |
//! | `langsmith_key` | `[LANGSMITH_KEY]` | mask | | |
//! | `tavily_key` | `[TAVILY_KEY]` | mask | | |
//! | `pinecone_key` | `[PINECONE_KEY]` | mask | | |
//! | `planetscale_token` | `[PLANETSCALE_TOKEN]` | mask | | |
//! | `supabase_key` | `[SUPABASE_KEY]` | mask | | |
//! | `age_secret_key` | `[AGE_KEY]` | mask | | |
//! | `onepassword_token` | `[1PASSWORD_TOKEN]` | mask | | |
//! | `mapbox_secret_token` | `[MAPBOX_TOKEN]` | mask | | |
//! | `facebook_access_token` | `[FACEBOOK_TOKEN]` | mask | | |
//! | `shippo_token` | `[SHIPPO_TOKEN]` | mask | | |
//! | `easypost_key` | `[EASYPOST_KEY]` | mask | | |
//! | `dropbox_token` | `[DROPBOX_TOKEN]` | mask | | |
//! | `jwt` | `[JWT]` | mask | | |
//! | `credential_assignment` | `[SECRET]` | mask | [`credential`](crate::validate::credential) | `${label}${dq}${sq}[SECRET]` |
//!
//! Formats a vendor documents without a prefix (Datadog and Twilio auth
//! tokens, AWS secret access keys, Heroku API keys: 32 or 40 hex digits or
//! a UUID) are not rules: a bare string of that shape is any hash or id.
//! They are caught by their label (`DD_API_KEY=…`, `aws_secret_access_key
//! = …`) by `credential_assignment`, or by [`high_entropy()`].
//!
//! # Optional detectors
//!
//! Two detectors need a validator and have a cost, so no pack has them:
//!
//! * [`high_entropy()`]: a run of 20 or more base64 or hex characters that
//!   looks random, for keys with no known prefix. Noisy on code and logs
//!   (see the table below).
//! * [`seed_phrases()`]: BIP39 mnemonics of 12 to 24 English list words,
//!   checked against the list and the checksum, blocking the stream. Every
//!   run of lower-case words is a candidate, so a stream holds up to 24
//!   words of prose back until it is decided.
//!
//! # Rule order
//!
//! The leftmost match wins; among matches that start at the same byte, the
//! rule listed first wins (see [`Rules`](crate::Rules)). The order above is
//! chosen for those ties:
//!
//! * Secrets with a vendor prefix come first, the specific before the
//!   general: `anthropic_key` (`sk-ant-`) before `openai_key` (`sk-`).
//!   Today's `openai_key` cannot match an Anthropic key, but a looser `sk-`
//!   rule of your own added after the pack would tie with it and lose.
//! * `email` before `iban` and `payment_card`: `4111111111111111@x.com` is
//!   an address.
//! * `us_ssn` before `payment_card`: `123-45-6789-0123` is an SSN (the
//!   stricter action) followed by `-0123`, not a 13-digit card candidate.
//!
//! A rule added with [`Pack::with`] or after [`Pack::add_to`] loses every
//! tie to the pack's rules; add it before the pack to win them.
//!
//! # Blocks and validators
//!
//! A rule's [`action`](PackRule::action) says what a guardrail does with
//! its match: mask it, or stop the stream ([`Action::Block`](crate::Action::Block)).
//! [`Pack::add_to`] adds each rule as a [`Rule`](crate::Rule) with its id, its action
//! and its validator; [`Pack::without_blocks`] turns the blocks into masks,
//! for a stream that must go on.
//!
//! A validator rejects a match that is not what the rule is after (a
//! 16-digit number that fails Luhn): the match is then not a match, and the
//! text is scanned again as if the rule had not matched there (see the
//! [exact semantics](crate::guard#what-a-match-means-exactly)), so a
//! rejected number passes unchanged unless another rule matches it or part
//! of it.
//!
//! # False positives
//!
//! Matches per MB on three clean corpora, each pack with its blocks turned
//! into masks, measured with `cargo bench -p stream-replace-benches --bench
//! pack_fp` (the bench's docs say how each corpus is made):
//!
//! | corpus | size | `pii` | `pii` + `secrets` | + `high_entropy()` | + `seed_phrases()` |
//! |---|---|---|---|---|---|
//! | LLM-like prose, outside `api_key = "…"` lines | 4.00 MB | 0 | 0 | 0 | 0 |
//! | the same prose, `api_key = "…"` lines | 730 lines | 0 | 665 | 665 | 665 |
//! | the repository's `.rs` files (70, tests and pack sources left out) | 1.00 MB | 90 (14 false) | 90 (14 false) | 95 (19 false) | 90 (14 false) |
//! | generated server log, planted fields cut | 1.83 MB | 0 | 0 | 0 | 0 |
//!
//! * Prose: the corpus plants PII of the shapes the `pii` pack had before
//!   `phone_intl` and `phone_national`; a match whose span is not one of
//!   that pack's is counted. The only ones are `credential_assignment` on
//!   the corpus's code lines `api_key = "…"`, which hold its planted values
//!   and near misses (`"v1.2.3"`, `"@mention"`): a quoted value in a
//!   credential slot is masked whatever it is (65 of the 730 lines hold
//!   special tokens, `"<|endoftext|>"`, which the credential check reads as
//!   placeholders).
//! * Code: 76 of the 90 are the sample values of doc comments and unit
//!   tests (`ann@x.org`, `127.0.0.1`, `123-45-6789`, `4111-1111-1111-1111`):
//!   real shapes. The 14 false ones are `ipv6` on Rust paths made of hex
//!   letters (`dfa::DFA`, `dfa::`). The secrets pack adds none;
//!   `high_entropy()` adds 5, all false (alphabet constants such as
//!   `ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789` and
//!   a made-up key `sk-AbCd1234sk-EfGh5678`).
//! * Logs: timestamps (`2026-03-01T00:00:00.000Z`), request ids, paths,
//!   durations and status codes give no match.
//!
//! Recall on the same log's planted fields with `pii` + `secrets`: `user=`
//! 3316 of 3316, `ip=` 4004 of 4004, `auth=` 407 of 407, `ssn=` 137 of 137,
//! `password=` 118 of 119 (the miss, `rxyYvrwhiTht`, is random letters
//! that read as a `camelCase` name to the credential check). Recall on 5 generated
//! samples of every documented format of every secrets rule is tested:
//! all are caught.
//!
//! # Speed
//!
//! Packs are data and validators over the same engine: one automaton for
//! all rules, no second matcher. More rules cost build time and stream
//! speed. Build each pack with its [`Pack::config`]: `pii` with the
//! default (a dense DFA of about 1 MB), any pack holding `secrets` with a
//! lazy DFA, since their dense DFA (over 90 MB) never fits
//! [`Config::dense_size_limit`] and the
//! default's attempt at one took most of the build.
//!
//! Medians of `cargo bench -p stream-replace-benches --bench packs` (2,000
//! LLM-like replies, 4,222,523 bytes, a fresh replacer per reply,
//! token-sized chunks of 1 to 12 bytes), run back to back on a 2-core
//! machine under a load average of 13 to 15 from other builds, so take
//! the ratios within a column more than the values; the default rows ask
//! for `STREAM_REPLACE_PACKS_DFA=auto`:
//!
//! | rules | count | build, `Pack::config` | build, default | stream | throughput |
//! |---|---|---|---|---|---|
//! | `pii` without `phone_intl` and `phone_national` | 16 | 99.427 ms | 108.01 ms | 389.40 ms | 10.341 MiB/s |
//! | `pii` | 18 | 153.66 ms | 119.04 ms | 325.28 ms | 12.380 MiB/s |
//! | `pii` + `secrets` | 84 | 98.928 ms | 410.75 ms | 907.99 ms | 4.4350 MiB/s |
//!
//! (`pii` and the first row build the same way in both columns.) With its
//! lazy DFA, `pii` + `secrets` builds in a quarter of the default's time,
//! and streams as before: the default fell back to the same lazy DFA. It
//! streams at about 0.43 times the speed of the 16-rule pack (907.99 ms
//! against 389.40 ms). Two of its rules cost most of that in the shapes
//! they had then: `credential_assignment` and `terraform_cloud_token`
//! started at every word (a label such as `db_password`, a 14-character
//! token id), so a second match attempt lived through each word beside the
//! one an address could start. Now the first starts at its keyword (or the
//! `_`, `.`, `-` before it) and the second counts its id in a validator,
//! which takes 40% off the stream's instructions (255,970,932 to
//! 154,995,365 over 200 replies; 1.97 times `pii` without the phone
//! rules, whose dense DFA the lazy one of `pii` + `secrets` cannot match:
//! `BENCHMARKS.md`, "Packs").
//! Build the rules once and share them (`Rules` is cheap to clone), and
//! keep only the rules a deployment needs ([`Pack::without`] drops rules
//! by id).
//!
//! The patterns use ASCII classes (`[0-9]`, `[A-Za-z0-9]`) and ASCII word
//! boundaries (`(?-u:\b)`), which keep every byte of non-ASCII text on the
//! streams' fast path. The price is stated in each rule's
//! [`misses`](PackRule::misses): non-ASCII letters do not count as part of
//! a word, an address or a key.

use crate::config::{Config, DfaKind};
use crate::rules::RulesBuilder;

mod credentials;
mod optional;
mod pii;
mod rule;
mod secrets;

pub use rule::{PackAction, PackRule};

/// An ordered list of [`PackRule`]s.
///
/// # Example
///
/// ```
/// use stream_replace::{pack, Rules};
///
/// // Version numbers such as 1.2.3.4 look like IPv4 addresses: drop the rule.
/// let pii = pack::pii().without("ipv4").with(pack::think());
/// assert!(pii.get("ipv4").is_none());
/// assert_eq!(pii.rules().last().unwrap().id, "think");
///
/// let mut builder = Rules::builder();
/// pii.add_to(&mut builder);
/// let rules = builder.build()?;
/// assert_eq!(rules.replace_all("<think>hm</think>v1.2.3.4 at 10.0.0.1"), "v1.2.3.4 at 10.0.0.1");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct Pack {
    rules: Vec<PackRule>,
    /// Whether the rules are built best with a lazy DFA (see
    /// [`Pack::config`]).
    lazy: bool,
}

impl Pack {
    /// The rules, in order.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::pack;
    ///
    /// let ids: Vec<&str> = pack::pii().rules().iter().map(|r| r.id).collect();
    /// assert_eq!(ids[..3], ["private_key", "anthropic_key", "openai_key"]);
    /// ```
    pub fn rules(&self) -> &[PackRule] {
        &self.rules
    }

    /// The rule with this id.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::pack;
    ///
    /// assert_eq!(pack::pii().get("email").unwrap().mask, "[EMAIL]");
    /// assert!(pack::pii().get("think").is_none());
    /// ```
    pub fn get(&self, id: &str) -> Option<&PackRule> {
        self.rules.iter().find(|r| r.id == id)
    }

    /// The pack with `rule` added last (it then loses ties to every rule
    /// already there).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::pack;
    ///
    /// let n = pack::pii().rules().len();
    /// assert_eq!(pack::pii().with(pack::think()).rules().len(), n + 1);
    /// ```
    pub fn with(mut self, rule: PackRule) -> Pack {
        self.rules.push(rule);
        self
    }

    /// The pack with the rules of `other` added last, in their order, except
    /// those whose id is already in the pack: `pii().and(secrets())` has
    /// each shared rule once, where `pii()` puts it.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::pack;
    ///
    /// let both = pack::pii().and(pack::secrets());
    /// assert_eq!(both.rules()[0].id, "private_key");
    /// assert_eq!(both.rules().iter().filter(|r| r.id == "jwt").count(), 1);
    /// assert!(both.get("url_password").is_some() && both.get("email").is_some());
    /// ```
    pub fn and(mut self, other: Pack) -> Pack {
        self.lazy |= other.lazy;
        for rule in other.rules {
            if self.get(rule.id).is_none() {
                self.rules.push(rule);
            }
        }
        self
    }

    /// The pack without the rule with this id (unchanged if there is none).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::pack;
    ///
    /// assert!(pack::pii().without("phone").get("phone").is_none());
    /// ```
    pub fn without(mut self, id: &str) -> Pack {
        self.rules.retain(|r| r.id != id);
        self
    }

    /// The pack with every block turned into a mask: a stream that meets a
    /// blocking value masks it and goes on.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{pack, Rules};
    ///
    /// let mut builder = Rules::builder();
    /// pack::pii().without_blocks().add_to(&mut builder);
    /// let rules = builder.build()?;
    /// assert_eq!(rules.replace_all("SSN 123-45-6789, ok"), "SSN [US_SSN], ok");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn without_blocks(mut self) -> Pack {
        for r in &mut self.rules {
            r.action = PackAction::Mask;
        }
        self
    }

    /// The configuration to build the pack's rules with:
    /// [`Config::new`] with a lazy DFA
    /// ([`DfaKind::Lazy`]) when the pack holds
    /// [`secrets()`], the default otherwise. Change its other settings with
    /// its by-value setters.
    ///
    /// The default ([`DfaKind::Auto`]) first tries a
    /// dense DFA. For `pii()` that DFA is about 1 MB and streams faster
    /// than a lazy one. With `secrets()` it would be over 90 MB, so the
    /// attempt stops at [`Config::dense_size_limit`]
    /// and falls back to a lazy DFA: the same streams, after more than
    /// twice the build time (see [Speed](self#speed)).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{pack, DfaKind, Rules};
    ///
    /// let guard = pack::pii().and(pack::secrets());
    /// assert_eq!(guard.config().get_dfa(), DfaKind::Lazy);
    /// assert_eq!(pack::pii().config().get_dfa(), DfaKind::Auto);
    ///
    /// let mut builder = Rules::builder();
    /// guard.add_to(&mut builder).config(guard.config().max_held(1 << 16));
    /// let rules = builder.build()?;
    /// assert_eq!(rules.replace_all("token=ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"), "token=[SECRET]");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn config(&self) -> Config {
        let config = Config::new();
        if self.lazy {
            config.dfa(DfaKind::Lazy)
        } else {
            config
        }
    }

    /// Adds every rule, in order, to `builder`, after the rules already
    /// there, each with its id, action and validator ([`PackRule::rule`]).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{pack, Rules};
    ///
    /// let mut builder = Rules::builder();
    /// pack::pii().add_to(&mut builder).literal("Project X", "[PROJECT]");
    /// let rules = builder.build()?;
    /// assert_eq!(
    ///     rules.replace_all("Project X: call +1 415-555-0134 or mail x%40corp.io"),
    ///     "[PROJECT]: call [PHONE] or mail [EMAIL]",
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn add_to<'b>(&self, builder: &'b mut RulesBuilder) -> &'b mut RulesBuilder {
        for rule in &self.rules {
            rule.add_to(builder);
        }
        builder
    }
}

impl<'a> IntoIterator for &'a Pack {
    type Item = &'a PackRule;
    type IntoIter = std::slice::Iter<'a, PackRule>;

    fn into_iter(self) -> Self::IntoIter {
        self.rules.iter()
    }
}

/// The PII and secrets pack: every rule of the table in the
/// [module docs](self#the-rules), in that order.
///
/// # Example
///
/// ```
/// use stream_replace::{pack, Rules};
///
/// let mut builder = Rules::builder();
/// pack::pii().add_to(&mut builder);
/// let rules = builder.build()?;
/// let eval = rules.evaluate("IBAN GB82 WEST 1234 5698 7654 32, host 10.0.0.1, SSN 123-45-6789!");
/// assert_eq!(eval.text(), "IBAN [IBAN], host [IPV4], SSN ");
/// assert_eq!(eval.block().unwrap().id(), "us_ssn");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn pii() -> Pack {
    use pii::*;
    Pack {
        lazy: false,
        rules: vec![
            PRIVATE_KEY,
            ANTHROPIC_KEY,
            OPENAI_KEY,
            AWS_ACCESS_KEY_ID,
            GITHUB_TOKEN,
            SLACK_TOKEN,
            GOOGLE_API_KEY,
            STRIPE_KEY,
            JWT,
            EMAIL,
            IBAN,
            US_SSN,
            PAYMENT_CARD,
            PHONE,
            PHONE_INTL,
            PHONE_NATIONAL,
            IPV6,
            IPV4,
        ],
    }
}

/// The rule that removes a reasoning block, `<think>` to the first
/// `</think>` (id `think`, mask empty); not part of [`pii()`].
///
/// A block that is never closed is held until the stream ends, and then
/// released unchanged, or until the cap on held bytes
/// ([`Config::max_held`]).
///
/// # Example
///
/// ```
/// use stream_replace::{pack, Rules};
///
/// let mut builder = Rules::builder();
/// pack::pii().with(pack::think()).add_to(&mut builder);
/// let rules = builder.build()?;
/// assert_eq!(rules.replace_all("<think>ann@x.org?</think>Done."), "Done.");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn think() -> PackRule {
    pii::THINK
}

/// The secrets pack: credentials by label and vendor keys and tokens, in
/// the order of the [table](self#the-secrets-pack). It shares its first
/// rules (`private_key` and the vendor rules of [`pii()`]) with `pii`:
/// combine the two with [`Pack::and`], which adds each id once.
///
/// Build it with its [`Pack::config`] (a lazy DFA): with the default
/// configuration, the build first spends longer on a dense DFA that does
/// not fit.
///
/// # Example
///
/// ```
/// use stream_replace::{pack, Rules};
///
/// let guard = pack::pii().and(pack::secrets());
/// let mut builder = Rules::builder();
/// guard.add_to(&mut builder).config(guard.config());
/// let rules = builder.build()?;
/// assert_eq!(
///     rules.replace_all("DB_PASSWORD=hunter2hunter2\nurl: postgres://admin:S3cr3tPw@db.example.com/app"),
///     "DB_PASSWORD=[SECRET]\nurl: postgres://admin:[PASSWORD]@db.example.com/app",
/// );
/// assert_eq!(
///     rules.replace_all(r#"curl -H "Authorization: Bearer 7f3kQ9zLm2Xw8Rt5Yp1V" -d '{"password": "opensesame"}'"#),
///     r#"curl -H "Authorization: Bearer [CREDENTIAL]" -d '{"password": "[SECRET]"}'"#,
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn secrets() -> Pack {
    use credentials::*;
    use pii::{
        ANTHROPIC_KEY, AWS_ACCESS_KEY_ID, GITHUB_TOKEN, GOOGLE_API_KEY, JWT, OPENAI_KEY,
        PRIVATE_KEY, SLACK_TOKEN, STRIPE_KEY,
    };
    use secrets::*;
    Pack {
        // Its dense DFA outgrows the default limit (over 90 MB with
        // `pii`): see `Pack::config`.
        lazy: true,
        rules: vec![
            PRIVATE_KEY,
            URL_PASSWORD,
            AUTH_HEADER,
            COOKIE_HEADER,
            BEARER_TOKEN,
            ANTHROPIC_KEY,
            OPENROUTER_KEY,
            OPENAI_KEY,
            AWS_ACCESS_KEY_ID,
            AWS_KEY_ID_OTHER,
            GITHUB_TOKEN,
            SLACK_TOKEN,
            SLACK_APP_TOKEN,
            SLACK_WEBHOOK,
            GOOGLE_API_KEY,
            GCP_OAUTH_SECRET,
            GCP_ACCESS_TOKEN,
            STRIPE_KEY,
            STRIPE_WEBHOOK_SECRET,
            AZURE_STORAGE_KEY,
            DIGITALOCEAN_TOKEN,
            ALIBABA_KEY_ID,
            DATABRICKS_TOKEN,
            VAULT_TOKEN,
            TERRAFORM_TOKEN,
            DOPPLER_TOKEN,
            PULUMI_TOKEN,
            GRAFANA_TOKEN,
            NEW_RELIC_KEY,
            SENTRY_TOKEN,
            GITLAB_TOKEN,
            GITLAB_TRIGGER_TOKEN,
            BITBUCKET_APP_PASSWORD,
            NPM_TOKEN,
            PYPI_TOKEN,
            RUBYGEMS_KEY,
            NUGET_KEY,
            DOCKER_TOKEN,
            POSTMAN_KEY,
            SHOPIFY_TOKEN,
            LINEAR_KEY,
            NOTION_TOKEN,
            FIGMA_TOKEN,
            AIRTABLE_TOKEN,
            SQUARE_TOKEN,
            BRAINTREE_TOKEN,
            RAZORPAY_KEY,
            FLUTTERWAVE_KEY,
            PLAID_TOKEN,
            DISCORD_WEBHOOK,
            DISCORD_BOT_TOKEN,
            TELEGRAM_BOT_TOKEN,
            TWILIO_KEY,
            SENDGRID_KEY,
            MAILGUN_KEY,
            MAILCHIMP_KEY,
            HUGGINGFACE_TOKEN,
            GROQ_KEY,
            REPLICATE_TOKEN,
            PERPLEXITY_KEY,
            XAI_KEY,
            LANGSMITH_KEY,
            TAVILY_KEY,
            PINECONE_KEY,
            PLANETSCALE_TOKEN,
            SUPABASE_KEY,
            AGE_SECRET_KEY,
            ONEPASSWORD_TOKEN,
            MAPBOX_SECRET_TOKEN,
            FACEBOOK_TOKEN,
            SHIPPO_TOKEN,
            EASYPOST_KEY,
            DROPBOX_TOKEN,
            JWT,
            CREDENTIAL_ASSIGNMENT,
        ],
    }
}

/// The high-entropy detector (id `high_entropy`): a run of 20 or more
/// base64 or hex characters that looks random (see
/// [`validate::high_entropy`](crate::validate::high_entropy)), for keys
/// with no known prefix. Not part of any pack: it is noisy (hashes, long
/// identifiers and base64 data look random too; see the
/// [false-positive table](self#false-positives)). Add it last, so the
/// rules that name what they catch win their ties.
///
/// # Example
///
/// ```
/// use stream_replace::{pack, Rules};
///
/// let mut builder = Rules::builder();
/// pack::secrets().with(pack::high_entropy()).add_to(&mut builder);
/// let rules = builder.build()?;
/// assert_eq!(
///     rules.replace_all("X-Trace q8Zt2Lw9XcV4bN1mR7kP0sJd, key ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"),
///     "X-Trace [HIGH_ENTROPY], key [GITHUB_TOKEN]",
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn high_entropy() -> PackRule {
    optional::HIGH_ENTROPY
}

/// The BIP39 seed-phrase detector: five rules, `seed_phrase_24` down to
/// `seed_phrase_12`, one per word count, each a run of English list words
/// checked by [`validate::bip39`](crate::validate::bip39) (list and
/// checksum), blocking the stream. Not part of any pack: every run of
/// lower-case words is a candidate, so a stream holds back up to 24 words
/// of prose while it decides; add it where a seed phrase must never pass.
///
/// # Example
///
/// ```
/// use stream_replace::{pack, Rules};
///
/// let mut builder = Rules::builder();
/// pack::seed_phrases().without_blocks().add_to(&mut builder);
/// let rules = builder.build()?;
/// let phrase = "legal winner thank year wave sausage worth useful legal winner thank yellow";
/// assert_eq!(rules.replace_all(&format!("my words: {phrase}.")), "my words: [SEED_PHRASE].");
/// // List words whose checksum does not hold pass.
/// let words = "legal winner thank year wave sausage worth useful legal winner thank year";
/// assert_eq!(rules.replace_all(words), words);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn seed_phrases() -> Pack {
    use optional::*;
    Pack {
        lazy: false,
        rules: vec![SEED_24, SEED_21, SEED_18, SEED_15, SEED_12],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every rule of every pack and detector.
    fn everything() -> Pack {
        pii()
            .with(think())
            .and(secrets())
            .and(seed_phrases())
            .with(high_entropy())
    }

    #[test]
    fn ids_are_unique_and_masks_bracketed() {
        let pack = everything();
        for (i, r) in pack.rules().iter().enumerate() {
            assert!(
                pack.rules()[..i].iter().all(|s| s.id != r.id),
                "{} twice",
                r.id
            );
            assert!(
                r.id.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
                "{}",
                r.id
            );
            if r.id != "think" {
                assert!(r.mask.starts_with('[') && r.mask.ends_with(']'), "{}", r.id);
            }
            assert!(!r.what.is_empty() && !r.misses.is_empty(), "{}", r.id);
            if let Some(t) = r.template {
                assert!(t.contains(r.mask), "{}", r.id);
            }
        }
    }

    #[test]
    fn every_pattern_compiles_alone() {
        for r in everything().rules() {
            crate::Rules::builder()
                .rule(r.pattern(), r.replacement())
                .build()
                .unwrap_or_else(|e| panic!("{}: {e}", r.id));
        }
    }

    /// The table rows (`//! | `id` | …`) of the module docs between the
    /// heading `from` and the next heading.
    fn table<'d>(docs: &'d str, from: &str) -> Vec<&'d str> {
        docs.lines()
            .skip_while(|l| *l != from)
            .skip(1)
            .take_while(|l| !l.starts_with("//! # "))
            .filter(|l| l.starts_with("//! | `"))
            .collect()
    }

    #[test]
    fn the_docs_tables_list_every_rule_in_order() {
        let docs = include_str!("mod.rs");
        for (heading, pack) in [
            ("//! # The rules", pii()),
            ("//! # The secrets pack", secrets()),
        ] {
            let rows = table(docs, heading);
            let ids: Vec<&str> = rows
                .iter()
                .map(|l| {
                    let l = &l["//! | `".len()..];
                    &l[..l.find('`').unwrap()]
                })
                .collect();
            let want: Vec<&str> = pack.rules().iter().map(|r| r.id).collect();
            assert_eq!(ids, want, "{heading}");
            for (r, row) in pack.rules().iter().zip(&rows) {
                assert!(row.contains(&format!("`{}`", r.mask)), "{row}");
                let action = match r.action {
                    PackAction::Mask => "| mask |",
                    PackAction::Block(_) => "| block |",
                };
                assert!(row.contains(action), "{row}");
                assert_eq!(r.validator.is_some(), row.contains("validate::"), "{row}");
                if let Some(t) = r.template {
                    assert!(row.contains(&format!("`{t}`")), "{row}");
                }
            }
        }
    }
}
