//! Ready rules for PII and secrets (feature `pii`).
//!
//! [`pii()`] is a [`Pack`]: an ordered list of [`PackRule`]s, each with an
//! id, a regex, the text that replaces a match (its mask), an action, and
//! for some a validator from [`validate`]. Each rule documents what it
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
//! | `ipv6` | `[IPV6]` | mask | |
//! | `ipv4` | `[IPV4]` | mask | |
//!
//! [`think()`] (id `think`, removes `<think>…</think>`) is not in the list:
//! add it when the text comes from a reasoning model and its reasoning must
//! not reach the reader.
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
//! [`Pack::add_to`] adds each rule as a [`Rule`] with its id, its action
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
//! # Speed
//!
//! The patterns use ASCII classes (`[0-9]`, `[A-Za-z0-9]`) and ASCII word
//! boundaries (`(?-u:\b)`), which keep every byte of non-ASCII text on the
//! streams' fast path. The price is stated in each rule's
//! [`misses`](PackRule::misses): non-ASCII letters do not count as part of
//! a word, an address or a key.

use std::fmt;

use crate::guard::Rule;
use crate::rules::{Pattern, RulesBuilder};
use crate::validate;
use crate::Replacement;

/// What a guardrail does with a rule's match.
///
/// # Example
///
/// ```
/// use stream_replace::pack::{self, PackAction};
///
/// let pii = pack::pii();
/// let blocking: Vec<&str> = pii
///     .rules()
///     .iter()
///     .filter(|r| matches!(r.action, PackAction::Block(_)))
///     .map(|r| r.id)
///     .collect();
/// assert_eq!(blocking, ["private_key", "us_ssn"]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PackAction {
    /// Replace the match by the rule's [`mask`](PackRule::mask).
    Mask,
    /// Stop the stream before the match, with this reason (see
    /// [`Action::Block`](crate::Action::Block)).
    Block(&'static str),
}

/// One ready rule: a regex, the mask that replaces its match, an action
/// and an optional validator.
///
/// # Example
///
/// ```
/// use stream_replace::{pack, Rules};
///
/// let card = pack::pii().get("payment_card").unwrap().clone();
/// assert_eq!(card.mask, "[CARD]");
/// let check = card.validator.unwrap();
/// assert!(check("4111 1111 1111 1111") && !check("4111 1111 1111 1112"));
///
/// let mut builder = Rules::builder();
/// card.add_to(&mut builder);
/// let rules = builder.build()?;
/// assert_eq!(
///     rules.replace_all("4111-1111-1111-1111 or 4111-1111-1111-1112"),
///     "[CARD] or 4111-1111-1111-1112",
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy)]
#[non_exhaustive]
pub struct PackRule {
    /// A short name for reports and events, such as `email` or `us_ssn`.
    pub id: &'static str,
    /// The regex, in the `regex` crate's syntax.
    pub pattern: &'static str,
    /// The text that replaces a match, such as `[EMAIL]`.
    pub mask: &'static str,
    /// Mask or block.
    pub action: PackAction,
    /// A check on the matched text; a match it rejects is not a match.
    pub validator: Option<fn(&str) -> bool>,
    /// What the rule catches, in a sentence or two.
    pub what: &'static str,
    /// What it misses or wrongly catches, in a sentence or two.
    pub misses: &'static str,
}

impl PackRule {
    /// The rule's pattern as a [`Pattern`].
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::pack;
    ///
    /// let email = pack::pii().get("email").unwrap().pattern();
    /// assert!(!email.is_literal());
    /// ```
    pub fn pattern(&self) -> Pattern {
        Pattern::regex(self.pattern)
    }

    /// The replacement that puts the mask in place of a match.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{pack, Rules};
    ///
    /// let ssn = pack::pii().get("us_ssn").unwrap().clone();
    /// // The pattern and the mask alone: no validator, no block.
    /// let rules = Rules::builder().rule(ssn.pattern(), ssn.replacement()).build()?;
    /// assert_eq!(rules.replace_all("123-45-6789, 666-45-6789"), "[US_SSN], [US_SSN]");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn replacement(&self) -> Replacement {
        Replacement::literal(self.mask)
    }

    /// The rule as a [`Rule`]: its pattern, mask, id, action and validator.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{pack, Rules};
    ///
    /// let ssn = pack::pii().get("us_ssn").unwrap().rule();
    /// let rules = Rules::builder().add(ssn).build()?;
    /// let eval = rules.evaluate("666-45-6789 is not valid; 123-45-6789 is");
    /// assert_eq!(eval.text(), "666-45-6789 is not valid; ");
    /// assert_eq!(eval.block().unwrap().id(), "us_ssn");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn rule(&self) -> Rule {
        let mut rule = Rule::new(self.pattern(), self.replacement()).id(self.id);
        if let PackAction::Block(reason) = self.action {
            rule = rule.block(reason);
        }
        if let Some(valid) = self.validator {
            rule = rule.validator(valid);
        }
        rule
    }

    /// Adds this rule to `builder`, after the rules already there.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{pack, Rules};
    ///
    /// let mut builder = Rules::builder();
    /// builder.literal("ACME", "[COMPANY]");
    /// pack::think().add_to(&mut builder);
    /// let rules = builder.build()?;
    /// assert_eq!(rules.replace_all("<think>ACME?</think>ACME."), "[COMPANY].");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn add_to<'b>(&self, builder: &'b mut RulesBuilder) -> &'b mut RulesBuilder {
        builder.add(self.rule())
    }
}

impl fmt::Debug for PackRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PackRule")
            .field("id", &self.id)
            .field("pattern", &self.pattern)
            .field("mask", &self.mask)
            .field("action", &self.action)
            .field("validator", &self.validator.map(|_| ".."))
            .finish_non_exhaustive()
    }
}

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
    Pack {
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
/// ([`Config::max_held`](crate::Config::max_held)).
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
    THINK
}

/// The pattern of an IPv4 address, for `concat!`.
macro_rules! ipv4 {
    () => {
        r"(?:(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
    };
}

const THINK: PackRule = PackRule {
    id: "think",
    pattern: r"<think>(?s:.)*?</think>",
    mask: "",
    action: PackAction::Mask,
    validator: None,
    what: "A reasoning block from `<think>` to the first `</think>` after it, across lines.",
    misses: "Other tag names (`<thinking>`, `<reasoning>`), tags with attributes or in \
             another case, and a block never closed (released unchanged at the end).",
};

const PRIVATE_KEY: PackRule = PackRule {
    id: "private_key",
    pattern: r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?s:.)*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----",
    mask: "[PRIVATE_KEY]",
    action: PackAction::Block("a private key"),
    validator: None,
    what: "A PEM private key from its BEGIN line to the first END line after it: \
           `PRIVATE KEY`, `RSA`, `EC`, `DSA`, `OPENSSH`, `ENCRYPTED` and PGP \
           (`PGP PRIVATE KEY BLOCK`) blocks.",
    misses: "A key with no END line (held until the stream ends, then released), a \
             key whose lines were re-wrapped or prefixed (`> ` quoting), and keys \
             in other encodings (JSON `\\n` escapes, PuTTY `.ppk`, raw base64).",
};

const ANTHROPIC_KEY: PackRule = PackRule {
    id: "anthropic_key",
    pattern: r"(?-u:\b)sk-ant-[a-z]{2,8}[0-9]{2}-[A-Za-z0-9_-]{20,}",
    mask: "[ANTHROPIC_KEY]",
    action: PackAction::Mask,
    validator: None,
    what: "Anthropic API and admin keys: `sk-ant-`, a kind and version such as \
           `api03` or `admin01`, a dash, then 20 or more of `[A-Za-z0-9_-]`.",
    misses: "A key cut short to under 20 characters after its kind, or glued to a \
             preceding letter, digit or `_`.",
};

const OPENAI_KEY: PackRule = PackRule {
    id: "openai_key",
    pattern: r"(?-u:\b)sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|[A-Za-z0-9]{20,})",
    mask: "[OPENAI_KEY]",
    action: PackAction::Mask,
    validator: None,
    what: "OpenAI keys: project, service-account and admin keys (`sk-proj-`, \
           `sk-svcacct-`, `sk-admin-` and 20 or more of `[A-Za-z0-9_-]`) and \
           legacy user keys (`sk-` and 20 or more letters and digits).",
    misses: "Keys with another `sk-xxx-` prefix, keys cut short, and keys glued to \
             a preceding letter, digit or `_`. Any other vendor's `sk-` key of the \
             same shape is caught as an OpenAI key.",
};

const AWS_ACCESS_KEY_ID: PackRule = PackRule {
    id: "aws_access_key_id",
    pattern: r"(?-u:\b)(?:AKIA|ASIA)[A-Z0-9]{16}(?-u:\b)",
    mask: "[AWS_KEY]",
    action: PackAction::Mask,
    validator: None,
    what: "AWS access key ids, long-term (`AKIA`) and temporary (`ASIA`): the \
           prefix and 16 upper-case letters or digits, as a whole word.",
    misses: "The secret access key that goes with the id (40 characters of base64 \
             with no marker: too close to other random strings), and other id \
             prefixes (`AROA`, `AIDA`: role and user ids, not credentials).",
};

const GITHUB_TOKEN: PackRule = PackRule {
    id: "github_token",
    pattern: r"(?-u:\b)(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
    mask: "[GITHUB_TOKEN]",
    action: PackAction::Mask,
    validator: None,
    what: "GitHub tokens: classic personal (`ghp_`), OAuth (`gho_`), user-to-server \
           (`ghu_`), server-to-server (`ghs_`) and refresh (`ghr_`) tokens with 36 \
           or more letters and digits, and fine-grained personal tokens \
           (`github_pat_`).",
    misses: "Tokens from before 2021 (40 hex digits, no prefix), and tokens glued to \
             a preceding letter, digit or `_`.",
};

const SLACK_TOKEN: PackRule = PackRule {
    id: "slack_token",
    pattern: r"(?-u:\b)xox[abprs]-[A-Za-z0-9-]{10,}",
    mask: "[SLACK_TOKEN]",
    action: PackAction::Mask,
    validator: None,
    what: "Slack bot, user, app-level legacy, refresh and session tokens \
           (`xoxb-`, `xoxp-`, `xoxa-`, `xoxr-`, `xoxs-`) and the 10 or more \
           letters, digits and dashes after the prefix.",
    misses: "App-level tokens (`xapp-`), configuration tokens (`xoxe.`), and webhook \
             URLs (`hooks.slack.com/services/...`). A dash right after the token is \
             taken as part of it.",
};

const GOOGLE_API_KEY: PackRule = PackRule {
    id: "google_api_key",
    pattern: r"(?-u:\b)AIza[0-9A-Za-z_-]{35}",
    mask: "[GOOGLE_KEY]",
    action: PackAction::Mask,
    validator: None,
    what: "Google API keys: `AIza` and 35 of `[0-9A-Za-z_-]`.",
    misses: "OAuth client secrets (`GOCSPX-`), OAuth access tokens (`ya29.`) and \
             service-account JSON keys (caught by `private_key` only when the PEM \
             block is not JSON-escaped).",
};

const STRIPE_KEY: PackRule = PackRule {
    id: "stripe_key",
    pattern: r"(?-u:\b)[rs]k_live_[0-9A-Za-z]{20,}",
    mask: "[STRIPE_KEY]",
    action: PackAction::Mask,
    validator: None,
    what: "Stripe live secret (`sk_live_`) and restricted (`rk_live_`) keys with 20 \
           or more letters and digits.",
    misses: "Test-mode keys (`sk_test_`, harmless by design) and publishable keys \
             (`pk_live_`, public by design); webhook secrets (`whsec_`).",
};

const JWT: PackRule = PackRule {
    id: "jwt",
    pattern: r"(?-u:\b)eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*",
    mask: "[JWT]",
    action: PackAction::Mask,
    validator: None,
    what: "JSON Web Tokens in compact form: a base64url header and payload that both \
           start with `{\"` (`eyJ`), and the signature (empty for unsigned tokens).",
    misses: "Tokens whose header or payload does not start with `{\"` (extra \
             whitespace before the first key), and the last two parts of a \
             five-part encrypted token (JWE).",
};

const EMAIL: PackRule = PackRule {
    id: "email",
    pattern: r"[A-Za-z0-9._%+-]+(?:@|%40)[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}",
    mask: "[EMAIL]",
    action: PackAction::Mask,
    validator: None,
    what: "Email addresses with an ASCII local part and a domain with a dot and a \
           letter-only top-level domain, with `@` written as is or percent-encoded \
           (`ann%40example.org`, as in URLs and `mailto:` links).",
    misses: "Non-ASCII addresses: a local part that ends in a non-ASCII letter \
             (`zoë@example.de`) is not caught, one with such letters earlier is \
             masked only after the last of them (`zoëann@x.de` keeps `zoë`). Quoted local parts, \
             IP-literal domains (`ann@[10.0.0.1]`) and spelled-out forms (`ann at \
             example dot org`). Text that only looks like an address \
             (`v1@2.0.js`) is masked.",
};

const IBAN: PackRule = PackRule {
    id: "iban",
    pattern: r"(?-u:\b)[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?-u:\b)",
    mask: "[IBAN]",
    action: PackAction::Mask,
    validator: Some(validate::iban),
    what: "IBANs in electronic form (`GB82WEST12345698765432`) and in print form, \
           in groups of four separated by single spaces, whose length and mod-97 \
           check digits are right (see `validate::iban`).",
    misses: "Lower-case IBANs, other groupings (dashes, groups of other sizes), and \
             an IBAN directly followed by a space and a word that could continue its \
             last group of four (`... 1234 CODE`: the candidate fails its check and \
             is left unchanged).",
};

const US_SSN: PackRule = PackRule {
    id: "us_ssn",
    pattern: r"(?-u:\b)[0-9]{3}-[0-9]{2}-[0-9]{4}(?-u:\b)",
    mask: "[US_SSN]",
    action: PackAction::Block("a US Social Security number"),
    validator: Some(validate::us_ssn),
    what: "US Social Security numbers written `AAA-GG-SSSS`, as a whole word, that \
           pass the Social Security Administration's range rules (see \
           `validate::us_ssn`).",
    misses: "Numbers written with spaces or without separators (as frequent in \
             other numbers as in SSNs, too many false blocks); SSNs the \
             administration voided but that pass the range rules. A dashed number \
             of that shape inside a longer one (`123-45-6789-01`) is caught.",
};

const PAYMENT_CARD: PackRule = PackRule {
    id: "payment_card",
    pattern: r"(?-u:\b)[0-9](?:[ -]?[0-9]){12,18}(?-u:\b)",
    mask: "[CARD]",
    action: PackAction::Mask,
    validator: Some(validate::luhn),
    what: "Payment card numbers: 13 to 19 digits as a whole word, single spaces or \
           dashes allowed between digits (`4111 1111 1111 1111`, \
           `3782-822463-10005`), that pass the Luhn check.",
    misses: "Numbers written with other separators (dots, two spaces) or glued to \
             letters, and a card followed by more digits that make a 13-19 digit run \
             failing Luhn (left unchanged whole). One in ten 13-19 digit numbers \
             that are not cards (order or tracking numbers) passes Luhn and is \
             masked.",
};

const PHONE: PackRule = PackRule {
    id: "phone",
    pattern: concat!(
        // +1 and a US number, separators optional.
        r"(?-u:\B)\+1[ .-]?(?:\([2-9][0-9]{2}\) ?|[2-9][0-9]{2}[ .-]?)[2-9][0-9]{2}[ .-]?[0-9]{4}(?-u:\b)",
        // 1 and a US number, with separators.
        r"|(?-u:\b)1[ .-](?:\([2-9][0-9]{2}\) ?|[2-9][0-9]{2}[ .-])[2-9][0-9]{2}[ .-][0-9]{4}(?-u:\b)",
        // (415) 555-0134
        r"|\([2-9][0-9]{2}\) ?[2-9][0-9]{2}[ .-][0-9]{4}(?-u:\b)",
        // 415-555-0134, 415.555.0134, 415 555 0134
        r"|(?-u:\b)[2-9][0-9]{2}[ .-][2-9][0-9]{2}[ .-][0-9]{4}(?-u:\b)",
        // E.164: + and 8 to 15 digits.
        r"|(?-u:\B)\+[1-9][0-9]{7,14}(?-u:\b)",
    ),
    mask: "[PHONE]",
    action: PackAction::Mask,
    validator: None,
    what: "US numbers with an area code, written `(415) 555-0134`, `415-555-0134`, \
           `415.555.0134`, `415 555 0134`, optionally after `1-` or `+1 `, with area \
           code and exchange starting 2-9; and E.164 numbers (`+` and 8 to 15 \
           digits, no separators).",
    misses: "US numbers without separators and without `+1` (ten bare digits look \
             like any other id), numbers without an area code, extensions, and \
             international numbers written with spaces (`+44 20 7946 0958`). \
             Three groups of 3, 3 and 4 digits that are not a phone number (a \
             table row) are masked.",
};

const IPV6: PackRule = PackRule {
    id: "ipv6",
    pattern: concat!(
        // Forms ending in an IPv4 address come first: every other form
        // matches their start and would win the tie.
        r"(?-u:\b)(?:[0-9A-Fa-f]{1,4}:){6}",
        ipv4!(),
        r"|(?-u:\b)(?:[0-9A-Fa-f]{1,4}:){1,4}:",
        ipv4!(),
        r"|(?-u:\B)::(?:[Ff]{4}(?::0{1,4})?:)?",
        ipv4!(),
        // Eight groups, then the forms with `::` inside, ordered by how
        // many groups may follow `::`, most first: at most one of them can
        // take every group after the `::` and it must come before those
        // that would stop short.
        r"|(?-u:\b)(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}(?-u:\b)",
        r"|(?-u:\b)[0-9A-Fa-f]{1,4}:(?::[0-9A-Fa-f]{1,4}){1,6}(?-u:\b)",
        r"|(?-u:\b)(?:[0-9A-Fa-f]{1,4}:){1,2}(?::[0-9A-Fa-f]{1,4}){1,5}(?-u:\b)",
        r"|(?-u:\b)(?:[0-9A-Fa-f]{1,4}:){1,3}(?::[0-9A-Fa-f]{1,4}){1,4}(?-u:\b)",
        r"|(?-u:\b)(?:[0-9A-Fa-f]{1,4}:){1,4}(?::[0-9A-Fa-f]{1,4}){1,3}(?-u:\b)",
        r"|(?-u:\b)(?:[0-9A-Fa-f]{1,4}:){1,5}(?::[0-9A-Fa-f]{1,4}){1,2}(?-u:\b)",
        r"|(?-u:\b)(?:[0-9A-Fa-f]{1,4}:){1,6}:[0-9A-Fa-f]{1,4}(?-u:\b)",
        // Groups then `::` at the end (a prefix such as `2001:db8::/32`),
        // not followed by a word character (`abc::new` is code).
        r"|(?-u:\b)(?:[0-9A-Fa-f]{1,4}:){1,7}:(?-u:\B)",
        // `::` then groups, not preceded by a word character (`std::io`).
        r"|(?-u:\B)::[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{1,4}){0,6}(?-u:\b)",
    ),
    mask: "[IPV6]",
    action: PackAction::Mask,
    validator: None,
    what: "IPv6 addresses: eight groups, every `::` shortening, and the forms that \
           end in an IPv4 address (`::ffff:192.0.2.1`, `64:ff9b::192.0.2.33`), \
           as a whole word.",
    misses: "The unspecified address `::` alone, a zone after `%` (`fe80::1%eth0` \
             keeps `%eth0`), and the forms ending in an IPv4 address with five \
             groups before it. Code whose identifiers are all hex digits \
             (`dead::beef`, `a::b`) is masked.",
};

const IPV4: PackRule = PackRule {
    id: "ipv4",
    pattern: concat!(r"(?-u:\b)", ipv4!(), r"(?-u:\b)"),
    mask: "[IPV4]",
    action: PackAction::Mask,
    validator: None,
    what: "IPv4 addresses in dotted-decimal form, each number 0 to 255 without a \
           leading zero, as a whole word.",
    misses: "Numbers with leading zeros (`010.0.0.1`), other notations (`0x0A000001`, \
             `10.1`), and a port or CIDR suffix is left in place (`10.0.0.1:8080` \
             keeps `:8080`). Version numbers of four parts (`1.2.3.4`) are masked.",
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_masks_bracketed() {
        let pack = pii().with(think());
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
        }
    }

    #[test]
    fn every_pattern_compiles_alone() {
        for r in pii().with(think()).rules() {
            crate::Rules::builder()
                .rule(r.pattern(), r.replacement())
                .build()
                .unwrap_or_else(|e| panic!("{}: {e}", r.id));
        }
    }

    #[test]
    fn the_docs_table_lists_every_rule_in_order() {
        let docs = include_str!("pack.rs");
        let rows: Vec<&str> = docs
            .lines()
            .filter_map(|l| l.strip_prefix("//! | `"))
            .map(|l| &l[..l.find('`').unwrap()])
            .collect();
        let ids: Vec<&str> = pii().rules().iter().map(|r| r.id).collect();
        assert_eq!(rows, ids);
        for r in pii().rules() {
            let row = docs
                .lines()
                .find(|l| l.starts_with(&format!("//! | `{}`", r.id)))
                .unwrap();
            assert!(row.contains(&format!("`{}`", r.mask)), "{row}");
            let action = match r.action {
                PackAction::Mask => "| mask |",
                PackAction::Block(_) => "| block |",
            };
            assert!(row.contains(action), "{row}");
            assert_eq!(r.validator.is_some(), row.contains("validate::"), "{row}");
        }
    }
}
