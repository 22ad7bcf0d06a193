//! The rules an operator configures (packs, extra rules, an allowlist) and
//! the request-side policies, compiled into the request and response rules
//! once, at start.

use std::cell::Cell;
use std::collections::HashSet;
use std::fmt;
use std::sync::{Mutex, OnceLock};

use stream_replace::pack::{self, PackAction};
use stream_replace::{Pattern, Replacement, Rule, Rules, validate};

use crate::detect::{self, Detectors};

/// The packs a settings file may name.
pub(crate) const PACKS: &[&str] = &["pii", "secrets"];

/// A check on a match's text.
pub(crate) type Validator = fn(&str) -> bool;

/// The validators a configured rule may name, from
/// `stream_replace::validate`.
pub(crate) const VALIDATORS: &[(&str, Validator)] = &[
    ("luhn", validate::luhn),
    ("us_ssn", validate::us_ssn),
    ("iban", validate::iban),
    ("phone", validate::phone),
    ("credential", validate::credential),
    ("high_entropy", validate::high_entropy),
    ("bip39", validate::bip39),
];

/// What the proxy does with a request that asks for token log-probabilities.
///
/// # Example
///
/// ```
/// use stream_replace_proxy::{LogprobsPolicy, RuleSet};
///
/// assert_eq!(RuleSet::default().logprobs, LogprobsPolicy::Drop);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum LogprobsPolicy {
    /// Forward the request; set every non-empty `logprobs` and
    /// `top_logprobs` of the response to `null` (token lists cut a value
    /// across entries, so their text cannot be scanned).
    #[default]
    Drop,
    /// Refuse the request with a 400 before it reaches the upstream.
    Refuse,
}

/// What a configured rule does with a match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum RuleAction {
    /// A placeholder in a request (`[EMAIL_1]`), restored in the response;
    /// a redaction (`[EMAIL_REDACTED]`) for a value new in a response.
    Mask,
    /// `[LABEL_REDACTED]` in requests and responses alike: nothing is
    /// restored.
    Redact,
    /// A request with a match is refused (400); a response with one ends
    /// there (502 before its first byte, an error event after).
    Block(String),
}

/// One rule of a [`RuleSet`].
#[derive(Clone)]
pub(crate) struct RuleSpec {
    pub(crate) id: String,
    pub(crate) pattern: Pattern,
    pub(crate) label: String,
    pub(crate) action: RuleAction,
    pub(crate) validator: Option<Validator>,
    // Where the rule comes from, for the summary: a pack's name or `extra`.
    pub(crate) source: &'static str,
}

impl fmt::Debug for RuleSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RuleSpec")
            .field("id", &self.id)
            .field("pattern", &self.pattern)
            .field("label", &self.label)
            .field("action", &self.action)
            .field("validator", &self.validator.is_some())
            .finish()
    }
}

impl RuleSpec {
    fn rule(&self, replacement: Replacement) -> Rule {
        let mut rule = Rule::new(self.pattern.clone(), replacement).id(self.id.clone());
        if let Some(valid) = self.validator {
            rule = rule.validator(valid);
        }
        rule
    }
}

/// The detectors the proxy runs and its request-side policies: which
/// packs, extra rules and allowlisted values, whether request values are
/// masked, and what a request for logprobs gets.
///
/// The default is the built-in set: the `pii` pack with every block
/// turned into a mask (see [`detectors`](crate::detectors)), no
/// allowlist, request masking on, logprobs dropped. Other sets come from
/// the `[rules]` table of a settings file
/// ([`Settings::from_toml`](crate::Settings::from_toml)), which checks
/// every rule before the proxy starts.
///
/// # Example
///
/// ```
/// use stream_replace_proxy::Settings;
///
/// let text = r#"
///     upstream = "http://127.0.0.1:18799/v1"
///     [rules]
///     allow = ["support@example.com"]
///     [rules.packs.secrets]
///     [[rules.extra]]
///     id = "ticket"
///     regex = "TCK-[0-9]{6}"
/// "#;
/// let s = Settings::from_toml(text, "proxy.toml", |_| None)?;
/// assert!(s.config.rules.ids().any(|id| id == "github_token"));
/// assert!(s.config.rules.ids().any(|id| id == "ticket"));
/// assert!(!s.config.rules.ids().any(|id| id == "email")); // pii is not listed
/// # Ok::<(), stream_replace_proxy::SettingsError>(())
/// ```
#[derive(Clone, Debug)]
pub struct RuleSet {
    pub(crate) rules: Vec<RuleSpec>,
    pub(crate) allow: Vec<String>,
    // Each pack used, with whether its blocks are on.
    pub(crate) packs: Vec<(&'static str, bool)>,
    // The rules and allowlist are the built-in ones: the proxy then runs
    // the built-in detectors themselves.
    builtin: bool,
    /// Whether request values are masked (replaced by placeholders) before
    /// the request goes upstream (`true`). Off, the request goes as it
    /// came, but a block rule still refuses a request that holds its
    /// value (it is scanned, not changed); responses are still scanned.
    pub request_masking: bool,
    /// What a request for token log-probabilities gets.
    pub logprobs: LogprobsPolicy,
}

impl Default for RuleSet {
    fn default() -> RuleSet {
        let mut set = RuleSet {
            rules: Vec::new(),
            allow: Vec::new(),
            packs: Vec::new(),
            builtin: false,
            request_masking: true,
            logprobs: LogprobsPolicy::Drop,
        };
        // The built-in pack always loads.
        let _ = set.add_pack("pii", false, &[]);
        set.builtin = true;
        set
    }
}

/// Names the label of a pack rule: its mask without the brackets, or its
/// id in upper case for a rule that masks with nothing.
fn pack_label(mask: &str, id: &str) -> String {
    let inner = mask
        .strip_prefix('[')
        .and_then(|m| m.strip_suffix(']'))
        .unwrap_or(mask);
    if inner.is_empty() || !valid_label(inner) {
        id.to_ascii_uppercase()
    } else {
        inner.to_owned()
    }
}

/// Whether `label` can stand in a placeholder: `[A-Z][A-Z0-9_]*`.
pub(crate) fn valid_label(label: &str) -> bool {
    let mut bytes = label.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_uppercase())
        && bytes.all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// Whether `id` can be a rule id: it appears in metric labels and logs.
pub(crate) fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b))
}

// Rule ids and labels live as long as the process: the vault and the
// tallies hold `&'static str`. Interned, so that compiling the same rules
// again (tests, a library serving twice) does not grow memory.
fn intern(s: &str) -> &'static str {
    static SEEN: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut seen = SEEN
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(s) = seen.get(s) {
        return s;
    }
    let s: &'static str = Box::leak(s.to_owned().into_boxed_str());
    seen.insert(s);
    s
}

thread_local! {
    // The first block rule a request matched, set by the request rules'
    // replacements; read and cleared by `take_request_block` on the same
    // thread, right after the request is masked.
    static REQUEST_BLOCK: Cell<Option<&'static str>> = const { Cell::new(None) };
}

/// The id of the first block rule the request rules matched on this thread
/// since the last call, if any.
pub(crate) fn take_request_block() -> Option<&'static str> {
    REQUEST_BLOCK.with(Cell::take)
}

impl RuleSet {
    /// Drops every rule and the allowlist: the start of a set the settings
    /// file lists packs for.
    pub(crate) fn clear_rules(&mut self) {
        self.rules.clear();
        self.allow.clear();
        self.packs.clear();
        self.builtin = false;
    }

    /// Adds the rules of pack `name`, but those of `exclude`; a rule
    /// already in the set (packs share some) is kept as it was.
    pub(crate) fn add_pack(
        &mut self,
        name: &str,
        blocks: bool,
        exclude: &[String],
    ) -> Result<(), String> {
        let (name, pack) = match name {
            "pii" => ("pii", pack::pii()),
            "secrets" => ("secrets", pack::secrets()),
            _ => {
                return Err(format!(
                    "unknown pack {name:?} (known: {})",
                    PACKS.join(", ")
                ));
            }
        };
        if let Some(id) = exclude.iter().find(|id| pack.get(id).is_none()) {
            return Err(format!("no rule {id:?} in the {name} pack"));
        }
        self.builtin = false;
        self.packs.push((name, blocks));
        for r in pack.rules() {
            if exclude.iter().any(|e| e == r.id) || self.rules.iter().any(|s| s.id == r.id) {
                continue;
            }
            let action = match r.action {
                PackAction::Block(reason) if blocks => RuleAction::Block(reason.to_owned()),
                _ => RuleAction::Mask,
            };
            // As in the built-in set: ITINs are written in the `9xx` area
            // the SSN check rejects, so the proxy keeps the shape only.
            let validator = if r.id == "us_ssn" { None } else { r.validator };
            self.rules.push(RuleSpec {
                id: r.id.to_owned(),
                pattern: r.pattern(),
                label: pack_label(r.mask, r.id),
                action,
                validator,
                source: name,
            });
        }
        Ok(())
    }

    /// Adds an extra rule.
    pub(crate) fn add_rule(&mut self, spec: RuleSpec) -> Result<(), String> {
        if let Some(other) = self.rules.iter().find(|s| s.id == spec.id) {
            let place = if other.source == "extra" {
                "another extra rule".to_owned()
            } else {
                format!("the {} pack", other.source)
            };
            return Err(format!("duplicate rule id {:?} (also in {place})", spec.id));
        }
        self.builtin = false;
        self.rules.push(spec);
        Ok(())
    }

    /// Allowlists a value: a match whose text is exactly it is never masked.
    pub(crate) fn allow(&mut self, value: String) {
        self.builtin = false;
        self.allow.push(value);
    }

    /// The ids of the rules, in order.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_proxy::RuleSet;
    ///
    /// assert!(RuleSet::default().ids().any(|id| id == "email"));
    /// ```
    pub fn ids(&self) -> impl Iterator<Item = &str> + '_ {
        self.rules.iter().map(|r| r.id.as_str())
    }

    /// How many rules the set has.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_proxy::{detectors, RuleSet};
    ///
    /// assert_eq!(RuleSet::default().len(), detectors().rules().len());
    /// ```
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// Whether the set has no rule (every response is then scanned for
    /// nothing but placeholders).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_proxy::RuleSet;
    ///
    /// assert!(!RuleSet::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Compiles the request and the response rules, as the proxy does at
    /// start; `--check-config` calls it.
    ///
    /// # Errors
    ///
    /// When a rule does not compile (a pattern past the size limit; a bad
    /// regex is refused by the settings already).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_proxy::RuleSet;
    ///
    /// assert!(RuleSet::default().check().is_ok());
    /// ```
    pub fn check(&self) -> Result<(), stream_replace::Error> {
        self.detectors()?;
        self.response_rules(stream_replace::Config::new())?;
        Ok(())
    }

    /// One line on the rules and one on the policies, for `--check-config`.
    pub(crate) fn summary(&self) -> String {
        let packs: Vec<String> = self
            .packs
            .iter()
            .map(|(name, blocks)| format!("{name} (blocks {})", if *blocks { "on" } else { "off" }))
            .collect();
        let extra: Vec<&str> = self
            .rules
            .iter()
            .filter(|r| r.source == "extra")
            .map(|r| r.id.as_str())
            .collect();
        format!(
            "rules: {} (packs: {}; extra: {}); allowlist: {} values\n\
             request masking: {}; logprobs: {}\n",
            self.rules.len(),
            if packs.is_empty() {
                "none".to_owned()
            } else {
                packs.join(", ")
            },
            if extra.is_empty() {
                "none".to_owned()
            } else {
                extra.join(", ")
            },
            self.allow.len(),
            if self.request_masking { "on" } else { "off" },
            match self.logprobs {
                LogprobsPolicy::Drop => "drop",
                LogprobsPolicy::Refuse => "refuse",
            },
        )
    }

    // The labels placeholders are made with: those of the mask rules.
    fn mask_labels(&self) -> Vec<&'static str> {
        let mut labels: Vec<&'static str> = Vec::new();
        for r in &self.rules {
            let l = intern(&r.label);
            if r.action == RuleAction::Mask && !labels.contains(&l) {
                labels.push(l);
            }
        }
        labels
    }

    /// The request-side rules.
    pub(crate) fn detectors(&self) -> Result<Detectors, stream_replace::Error> {
        if self.builtin {
            return Detectors::new();
        }
        let labels = self.mask_labels();
        let mut mask = Rules::builder();
        let mut find = Rules::builder();
        if !labels.is_empty() {
            detect::add_typed_placeholders(&mut mask, labels);
        }
        for spec in &self.rules {
            let label = intern(&spec.label);
            let replacement = match &spec.action {
                RuleAction::Mask => {
                    Replacement::with(move |caps| detect::lent_placeholder(label, caps.as_str()))
                }
                RuleAction::Redact => Replacement::literal(format!("[{label}_REDACTED]")),
                RuleAction::Block(_) => {
                    let id = intern(&spec.id);
                    Replacement::with(move |_| {
                        REQUEST_BLOCK.with(|b| {
                            if b.get().is_none() {
                                b.set(Some(id));
                            }
                        });
                        format!("[{label}_BLOCKED]")
                    })
                }
            };
            mask.add(spec.rule(replacement));
            find.add(spec.rule(Replacement::literal(format!("[{label}]"))));
        }
        // The pack's phone rules need separators; on the request side the
        // built-in set also takes ten bare digits of a US number, and so
        // does every configured set that lists `pii`.
        if self.packs.iter().any(|(name, _)| *name == "pii") {
            detect::add_bare_us_phone(&mut mask, &mut find);
        }
        for value in &self.allow {
            mask.allow(value.clone());
            find.allow(value.clone());
        }
        Ok(Detectors::from_rules(mask.build()?, find.build()?))
    }

    /// A [`ResponseGuard`](stream_replace_sse::ResponseGuard) running the
    /// response side of these rules, with the bounds of
    /// [`Limits::new`](stream_replace_sse::Limits::new): for a gateway
    /// that embeds the proxy's response path. Without the proxy's request
    /// side there is no vault, so nothing is restored: mask and redact
    /// rules both redact, and block rules end the stream with an error
    /// event (code `blocked`). Pass a [`Vault`](crate::Vault) as the
    /// hooks of [`sse_with`](stream_replace_sse::ResponseGuard::sse_with)
    /// to restore its placeholders.
    ///
    /// # Errors
    ///
    /// When the rules cannot be compiled (not for the built-in detectors).
    ///
    /// # Example
    ///
    /// ```
    /// use http_body_util::{BodyExt, Full};
    /// use stream_replace_proxy::{Api, RuleSet, Settings};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    /// let text = "upstream = 'http://h:1/v1'\n[rules.packs.secrets]";
    /// let settings = Settings::from_toml(text, "proxy.toml", |_| None)?;
    /// let guard = settings.config.rules.response_guard()?;
    /// let upstream = Full::new(bytes::Bytes::from(
    ///     "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5\"}}]}\n\n",
    /// ));
    /// let out = guard.sse(upstream, Api::OpenAi).collect().await?.to_bytes();
    /// assert!(String::from_utf8(out.to_vec())?.contains("[GITHUB_TOKEN_REDACTED]"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn response_guard(
        &self,
    ) -> Result<stream_replace_sse::ResponseGuard, stream_replace::Error> {
        let limits = stream_replace_sse::Limits::new();
        let rules =
            self.response_rules(stream_replace::Config::new().max_held(limits.get_max_held()))?;
        Ok(stream_replace_sse::ResponseGuard::new(&rules).with_limits(limits))
    }

    /// The response-side rules: the request's placeholders restored, every
    /// other match redacted, block rules blocking.
    pub(crate) fn response_rules(
        &self,
        config: stream_replace::Config,
    ) -> Result<Rules, stream_replace::Error> {
        if self.builtin {
            return detect::response_rules(config);
        }
        let labels = self.mask_labels();
        let mut builder = Rules::builder();
        if !labels.is_empty() {
            builder.rule(
                Pattern::regex(detect::placeholder_pattern(&labels)),
                Replacement::with(|caps| detect::lent_restore(caps.as_str())),
            );
        }
        for spec in &self.rules {
            let id = intern(&spec.id);
            let redaction = format!("[{}_REDACTED]", spec.label);
            let mut rule = spec.rule(Replacement::with(move |_| {
                detect::lent_redaction(id);
                redaction.clone()
            }));
            if let RuleAction::Block(reason) = &spec.action {
                rule = rule.block(reason.clone());
            }
            builder.add(rule);
        }
        for value in &self.allow {
            builder.allow(value.clone());
        }
        builder.config(config).build()
    }
}

/// The regex of a placeholder of any of `labels`, such as `[EMAIL_12]`.
/// Labels are `[A-Z][A-Z0-9_]*`, so they need no escaping.
/// An extra rule as the settings file gives it.
pub(crate) fn extra_rule(
    id: String,
    pattern: Pattern,
    label: String,
    action: RuleAction,
    validator: Option<Validator>,
) -> RuleSpec {
    RuleSpec {
        id,
        pattern,
        label,
        action,
        validator,
        source: "extra",
    }
}

/// Compiles one rule on its own, to name it in an error.
pub(crate) fn compile_one(spec: &RuleSpec) -> Result<(), stream_replace::Error> {
    Rules::builder()
        .add(spec.rule(Replacement::literal("")))
        .build()
        .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::{Vault, with_vault};

    #[test]
    fn the_default_set_is_the_built_in_detectors() {
        let set = RuleSet::default();
        let ids: Vec<&str> = set.ids().collect();
        let built_in: Vec<&str> = crate::detectors().rules().iter().map(|r| r.id).collect();
        assert_eq!(ids, built_in);
        // The same set, not marked built-in, compiles to the same rules.
        let mut copy = set.clone();
        copy.builtin = false;
        let (a, b) = (
            set.response_rules(stream_replace::Config::new()).unwrap(),
            copy.response_rules(stream_replace::Config::new()).unwrap(),
        );
        let mut vault = Vault::new();
        vault.placeholder("EMAIL", "ann@example.com");
        let text = "[EMAIL_1], bob@example.net, 900-12-3456, 4111 1111 1111 1111, 10.1.2.3";
        let mut v2 = vault.clone();
        assert_eq!(
            with_vault(&mut vault, || a.replace_all(text)),
            with_vault(&mut v2, || b.replace_all(text))
        );
    }

    #[test]
    fn a_request_block_is_reported_once_and_cleared() {
        let mut set = RuleSet::default();
        set.add_rule(extra_rule(
            "codename".into(),
            Pattern::literal("Falcon"),
            "CODENAME".into(),
            RuleAction::Block("codename".into()),
            None,
        ))
        .unwrap();
        let d = set.detectors().unwrap();
        let mut vault = Vault::new();
        let out = with_vault(&mut vault, || d.mask_lent("Falcon and Falcon"));
        assert_eq!(out, "[CODENAME_BLOCKED] and [CODENAME_BLOCKED]");
        assert_eq!(take_request_block(), Some("codename"));
        assert_eq!(take_request_block(), None);
    }
}
