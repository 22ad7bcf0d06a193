//! What counts as personal data, the per-request vault of placeholders, and
//! the request and response rules built from both.

use std::cell::RefCell;
use std::collections::HashMap;

use serde_json::{Map, Value};
use stream_replace::pack::{self, Pack};
use stream_replace::{Config, Pattern, Replacement, Rule, Rules, RulesBuilder};

/// The detectors: [`stream_replace::pack::pii()`], every block turned into
/// a mask, and `us_ssn` without its issuance check.
///
/// A proxy masks rather than stops: a value in a request gets a
/// placeholder, one in a response a redaction. The SSN rule keeps its
/// shape (`123-45-6789`) but drops the validator that rejects the areas
/// `000`, `666` and `9xx`: ITINs are written in the `9xx` area, and a value
/// that looks like an SSN is masked rather than let through. Every other
/// rule keeps its validator (Luhn for cards, check digits for IBANs), so a
/// 13-digit timestamp is not a card.
///
/// # Example
///
/// ```
/// use stream_replace_proxy::detectors;
///
/// let pack = detectors();
/// assert!(pack.get("email").is_some() && pack.get("ipv4").is_some());
/// assert!(pack.get("us_ssn").unwrap().validator.is_none());
/// ```
pub fn detectors() -> Pack {
    let base = pack::pii().without_blocks();
    // Rebuilt rule by rule, so that each keeps its place (the order
    // decides ties).
    let mut out = base.clone();
    for r in base.rules() {
        out = out.without(r.id);
    }
    for r in base.rules() {
        let mut r = *r;
        if r.id == "us_ssn" {
            r.validator = None;
        }
        out = out.with(r);
    }
    out
}

/// The label of a pack rule in placeholders and redactions: its mask
/// without the brackets (`[EMAIL]` gives `EMAIL`).
fn label(mask: &'static str) -> &'static str {
    mask.strip_prefix('[')
        .and_then(|m| m.strip_suffix(']'))
        .unwrap_or(mask)
}

fn labels() -> Vec<&'static str> {
    detectors().rules().iter().map(|r| label(r.mask)).collect()
}

/// The regex of a placeholder of one of `labels`, such as `[EMAIL_12]`.
pub(crate) fn placeholder_pattern(labels: &[&str]) -> String {
    format!(r"\[(?:{})_[0-9]+\]", labels.join("|"))
}

/// Adds the rule for placeholders of `labels` (such as `[EMAIL_12]`)
/// that the caller typed. A typed placeholder is a value too: it gets a
/// fresh placeholder of its own in the lent vault, so it comes back as
/// typed and never stands for another value of the vault.
pub(crate) fn add_typed_placeholders(mask: &mut RulesBuilder, labels: Vec<&'static str>) {
    mask.rule(
        Pattern::regex(placeholder_pattern(&labels)),
        Replacement::with(move |caps| {
            let text = caps.as_str();
            let label = labels
                .iter()
                .copied()
                .filter(|l| text[1..].starts_with(l) && text[1 + l.len()..].starts_with('_'))
                .max_by_key(|l| l.len())
                .unwrap_or("PLACEHOLDER");
            lent_placeholder(label, text)
        }),
    );
}

fn rule_of(r: &pack::PackRule, replacement: Replacement) -> Rule {
    let mut rule = Rule::new(r.pattern(), replacement).id(r.id);
    if let Some(valid) = r.validator {
        rule = rule.validator(valid);
    }
    rule
}

/// Ten bare digits that make a US number (NANP), or eleven with the
/// country code `1` before them (`12125550100`): area code and exchange
/// start with 2-9, with no digit or ASCII letter glued to either end.
///
/// Request side only. A placeholder on the request side comes back as
/// written, so one given to an id that happens to look like a number costs
/// the model a little context and the client nothing; a redaction in a
/// reply cannot be undone, and ten bare digits there are as often an order
/// number or an amount. A 10-digit Unix timestamp (until 2033) starts with
/// `1`, so it is not taken. The pack's `phone` rule comes first, so a
/// number after `+1` is its match.
const BARE_US_PHONE: &str = r"(?-u:\b)1?[2-9][0-9]{2}[2-9][0-9]{6}(?-u:\b)";

/// The rule id of [`BARE_US_PHONE`].
const BARE_US_PHONE_ID: &str = "us_phone_bare";

/// Rejects N11 area codes and exchanges (`211`, `411`, `911`, ...): those
/// are service codes, not assigned to any number. A leading country code
/// `1` is dropped first.
fn nanp(digits: &str) -> bool {
    let digits = match digits.strip_prefix('1') {
        Some(rest) if digits.len() == 11 => rest,
        _ => digits,
    };
    let d = digits.as_bytes();
    let n11 = |i: usize| d.get(i + 1) == Some(&b'1') && d.get(i + 2) == Some(&b'1');
    d.len() == 10 && !n11(0) && !n11(3)
}

/// Adds the request-side rule for ten bare digits of a US number
/// ([`BARE_US_PHONE`]) to the masking and the finding rules: the built-in
/// detectors and every configured set with the `pii` pack end with it.
pub(crate) fn add_bare_us_phone(mask: &mut RulesBuilder, find: &mut RulesBuilder) {
    mask.add(
        Rule::new(
            Pattern::regex(BARE_US_PHONE),
            Replacement::with(|caps| lent_placeholder("PHONE", caps.as_str())),
        )
        .id(BARE_US_PHONE_ID)
        .validator(nanp),
    );
    find.add(
        Rule::new(
            Pattern::regex(BARE_US_PHONE),
            Replacement::literal("[PHONE]"),
        )
        .id(BARE_US_PHONE_ID)
        .validator(nanp),
    );
}

/// The request-side rules, shared by every request: each value found is
/// replaced by its placeholder in the vault lent with [`with_vault`].
#[derive(Debug)]
pub(crate) struct Detectors {
    mask: Rules,
    find: Rules,
}

impl Detectors {
    pub(crate) fn new() -> Result<Detectors, stream_replace::Error> {
        let mut mask = Rules::builder();
        add_typed_placeholders(&mut mask, labels());
        let mut find = Rules::builder();
        for r in detectors().rules() {
            let l = label(r.mask);
            mask.add(rule_of(
                r,
                Replacement::with(move |caps| {
                    VAULT.with(|v| v.borrow_mut().placeholder(l, caps.as_str()))
                }),
            ));
            find.add(rule_of(r, Replacement::literal(r.mask)));
        }
        add_bare_us_phone(&mut mask, &mut find);
        Ok(Detectors {
            mask: mask.build()?,
            find: find.build()?,
        })
    }

    /// Replaces every detected value in `text` by its placeholder in the
    /// vault lent with [`with_vault`].
    pub(crate) fn mask_lent(&self, text: &str) -> String {
        self.mask.replace_all(text)
    }

    /// Whether `text` holds a value a detector finds.
    pub(crate) fn finds(&self, text: &str) -> bool {
        self.find.replace_all(text) != text
    }

    /// Masks every string, every object key and every number of a request
    /// body, but the string values of structural keys and the numbers of
    /// parameter keys (`seed`).
    pub(crate) fn mask_json(&self, value: &mut Value, vault: &mut Vault) {
        with_vault(vault, || self.mask_value(value));
    }

    fn mask_value(&self, value: &mut Value) {
        match value {
            Value::String(s) => {
                let masked = self.mask_lent(s);
                if masked != *s {
                    *s = masked;
                }
            }
            Value::Number(n) => {
                // A number a detector finds (a card, a phone) goes upstream
                // as its placeholder, a string.
                let text = n.to_string();
                let masked = self.mask_lent(&text);
                if masked != text {
                    *value = Value::String(masked);
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.mask_value(v)),
            Value::Object(map) => {
                let old = std::mem::take(map);
                let mut new = Map::with_capacity(old.len());
                for (k, mut v) in old {
                    let structure = (REQUEST_STRUCTURAL_KEYS.contains(&k.as_str())
                        && v.is_string())
                        || (REQUEST_NUMBER_KEYS.contains(&k.as_str()) && v.is_number());
                    if !structure {
                        self.mask_value(&mut v);
                    }
                    new.insert(self.mask_lent(&k), v);
                }
                *map = new;
            }
            Value::Bool(_) | Value::Null => {}
        }
    }
}

/// Keys whose string values in a request are structure, not content.
const REQUEST_STRUCTURAL_KEYS: &[&str] = &["model", "role", "type", "tool_call_id", "id"];

/// Keys whose number values in a request are parameters: a random 32-bit
/// `seed` is often ten digits that make a US number, and a placeholder (a
/// string) there would be refused by the upstream.
const REQUEST_NUMBER_KEYS: &[&str] = &["seed"];

/// The values one request masked, by placeholder.
#[derive(Clone, Debug)]
pub struct Vault {
    by_value: HashMap<String, usize>,
    by_placeholder: HashMap<String, usize>,
    entries: Vec<(String, String)>,
    counts: HashMap<&'static str, usize>,
    limit: usize,
    overflowed: bool,
    tally: Tally,
}

/// What the response rules did for one request: counts and rule ids only,
/// never a value, so that it can be logged and counted.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tally {
    /// Placeholders restored to their values.
    pub(crate) restored: u64,
    /// Redactions, by rule id, in the order the rules first fired.
    pub(crate) redacted: Vec<(&'static str, u64)>,
}

impl Tally {
    /// All redactions, whatever the rule.
    pub(crate) fn redactions(&self) -> u64 {
        self.redacted.iter().map(|(_, n)| n).sum()
    }

    /// The ids of the rules that fired, comma-separated.
    pub(crate) fn rule_ids(&self) -> String {
        let ids: Vec<&str> = self.redacted.iter().map(|(id, _)| *id).collect();
        ids.join(",")
    }
}

impl Default for Vault {
    fn default() -> Vault {
        Vault::with_limit(usize::MAX)
    }
}

impl Vault {
    /// An empty vault.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_proxy::Vault;
    ///
    /// assert!(Vault::new().entries().is_empty());
    /// ```
    pub fn new() -> Vault {
        Vault::default()
    }

    /// An empty vault that keeps at most `limit` values: past it, every new
    /// value gets the placeholder `[LABEL_OVERFLOW]`, which stands for
    /// nothing, and [`overflowed`](Vault::overflowed) says so.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_proxy::Vault;
    ///
    /// let mut vault = Vault::with_limit(1);
    /// assert_eq!(vault.placeholder("EMAIL", "a@b.io"), "[EMAIL_1]");
    /// assert_eq!(vault.placeholder("EMAIL", "c@d.io"), "[EMAIL_OVERFLOW]");
    /// assert!(vault.overflowed() && vault.len() == 1);
    /// ```
    pub fn with_limit(limit: usize) -> Vault {
        Vault {
            by_value: HashMap::new(),
            by_placeholder: HashMap::new(),
            entries: Vec::new(),
            counts: HashMap::new(),
            limit,
            overflowed: false,
            tally: Tally::default(),
        }
    }

    /// What the response rules did with this vault in scope.
    pub(crate) fn tally(&self) -> &Tally {
        &self.tally
    }

    fn note_redaction(&mut self, id: &'static str) {
        match self.tally.redacted.iter_mut().find(|(i, _)| *i == id) {
            Some((_, n)) => *n += 1,
            None => self.tally.redacted.push((id, 1)),
        }
    }

    /// Whether a value was refused a placeholder because the vault was full.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_proxy::Vault;
    ///
    /// assert!(!Vault::new().overflowed());
    /// ```
    pub fn overflowed(&self) -> bool {
        self.overflowed
    }

    /// The placeholder of `value`, made on first use: the same value always
    /// gets the same placeholder.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_proxy::Vault;
    ///
    /// let mut vault = Vault::new();
    /// assert_eq!(vault.placeholder("EMAIL", "a@b.io"), "[EMAIL_1]");
    /// assert_eq!(vault.placeholder("EMAIL", "c@d.io"), "[EMAIL_2]");
    /// assert_eq!(vault.placeholder("EMAIL", "a@b.io"), "[EMAIL_1]");
    /// ```
    pub fn placeholder(&mut self, label: &'static str, value: &str) -> String {
        if let Some(&i) = self.by_value.get(value) {
            return self.entries[i].0.clone();
        }
        if self.entries.len() >= self.limit {
            self.overflowed = true;
            return format!("[{label}_OVERFLOW]");
        }
        let n = self.counts.entry(label).or_insert(0);
        *n += 1;
        let p = format!("[{label}_{n}]");
        let i = self.entries.len();
        self.by_value.insert(value.to_owned(), i);
        self.by_placeholder.insert(p.clone(), i);
        self.entries.push((p.clone(), value.to_owned()));
        p
    }

    /// The value a placeholder stands for.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_proxy::Vault;
    ///
    /// let mut vault = Vault::new();
    /// let p = vault.placeholder("PHONE", "212-555-0100");
    /// assert_eq!(vault.value(&p), Some("212-555-0100"));
    /// assert_eq!(vault.value("[PHONE_2]"), None);
    /// ```
    pub fn value(&self, placeholder: &str) -> Option<&str> {
        self.by_placeholder
            .get(placeholder)
            .map(|&i| self.entries[i].1.as_str())
    }

    /// Every (placeholder, original value), in the order they were made.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_proxy::Vault;
    ///
    /// let mut vault = Vault::new();
    /// vault.placeholder("US_SSN", "900-12-3456");
    /// assert_eq!(vault.entries(), [("[US_SSN_1]".to_owned(), "900-12-3456".to_owned())]);
    /// ```
    pub fn entries(&self) -> &[(String, String)] {
        &self.entries
    }

    /// How many values the vault holds.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_proxy::Vault;
    ///
    /// let mut vault = Vault::new();
    /// vault.placeholder("EMAIL", "a@b.io");
    /// assert_eq!(vault.len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the vault holds no value.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_proxy::Vault;
    ///
    /// assert!(Vault::new().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The rules for responses: each placeholder back to its value in the
/// vault in scope (see [`with_vault`]), then every rule of [`detectors`]
/// to a redaction label (`[EMAIL_REDACTED]`).
///
/// Compiled once and shared by every response; only the vault changes from
/// one request to the next. A placeholder that the vault in scope did not
/// issue (or with no vault in scope) stays as it is. A restored value is a
/// replacement, so it is not scanned again: the caller's own values come
/// back, values the upstream made up do not. `config` sets the cap on held
/// text and what happens there.
///
/// # Errors
///
/// When the rules cannot be compiled (not for the built-in detectors).
///
/// # Example
///
/// ```
/// use stream_replace::Config;
/// use stream_replace_proxy::{response_rules, with_vault, Vault};
///
/// let rules = response_rules(Config::new())?;
/// let mut vault = Vault::new();
/// vault.placeholder("EMAIL", "ann@example.com");
/// let out = with_vault(&mut vault, || rules.replace_all("[EMAIL_1] and bob@example.net"));
/// assert_eq!(out, "ann@example.com and [EMAIL_REDACTED]");
/// assert_eq!(rules.replace_all("[EMAIL_1]"), "[EMAIL_1]"); // no vault in scope
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn response_rules(config: Config) -> Result<Rules, stream_replace::Error> {
    let restore = Replacement::with(|caps| {
        let placeholder = caps.as_str();
        VAULT.with(|vault| {
            let mut vault = vault.borrow_mut();
            match vault.value(placeholder) {
                Some(value) => {
                    let value = value.to_owned();
                    vault.tally.restored += 1;
                    value
                }
                None => placeholder.to_owned(),
            }
        })
    });
    let mut builder = Rules::builder();
    builder.rule(Pattern::regex(placeholder_pattern(&labels())), restore);
    for r in detectors().rules() {
        let redaction = format!("[{}_REDACTED]", label(r.mask));
        let id = r.id;
        // Counted in the vault in scope, by rule id, for the access log
        // and the metrics.
        let replacement = Replacement::with(move |_| {
            VAULT.with(|vault| vault.borrow_mut().note_redaction(id));
            redaction.clone()
        });
        builder.add(rule_of(r, replacement));
    }
    builder.config(config).build()
}

thread_local! {
    // The vault placeholders are made in and restored from. A replacement
    // closure is shared by every stream and sees only the match, and a
    // feed runs on one thread from start to end, so the vault of the
    // request being handled is lent here for the length of the call.
    static VAULT: RefCell<Vault> = RefCell::new(Vault::new());
}

/// A vault is the [`Hooks`](stream_replace_sse::Hooks) of a guarded
/// response that restores its placeholders: each call into the rules runs
/// with the vault lent (see [`with_vault`]).
///
/// # Example
///
/// ```
/// use http_body_util::{BodyExt, Full};
/// use stream_replace_proxy::{Api, RuleSet, Vault};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// let guard = RuleSet::default().response_guard()?;
/// let mut vault = Vault::new();
/// let placeholder = vault.placeholder("EMAIL", "ann@example.com");
/// let upstream = Full::new(bytes::Bytes::from(format!(
///     "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"to {placeholder}, not bob@example.net\"}}}}]}}\n\n"
/// )));
/// let out = guard.sse_with(upstream, Api::OpenAi, vault).collect().await?.to_bytes();
/// let out = String::from_utf8(out.to_vec())?;
/// assert!(out.contains("to ann@example.com, not "), "{out}");
/// assert!(out.contains("[EMAIL_REDACTED]") && !out.contains("bob@"), "{out}");
/// # Ok(())
/// # }
/// ```
impl stream_replace_sse::Hooks for Vault {
    fn scope(&mut self, call: &mut dyn FnMut()) {
        with_vault(self, call)
    }
}

/// Runs `f` with `vault` as the vault [`response_rules`] restore
/// placeholders from, on this thread; the previous one is back afterwards.
///
/// Wrap each `feed`, `flush` or `replace_all` of a response in it.
///
/// # Example
///
/// ```
/// use stream_replace::Config;
/// use stream_replace_proxy::{response_rules, with_vault, Vault};
///
/// let rules = response_rules(Config::new())?;
/// let mut vault = Vault::new();
/// vault.placeholder("US_SSN", "900-12-3456");
/// let mut r = rules.replacer();
/// let mut out = with_vault(&mut vault, || r.feed("SSN [US_SS"))?;
/// out += &with_vault(&mut vault, || r.feed("N_1]."))?;
/// out += &with_vault(&mut vault, || r.flush())?;
/// assert_eq!(out, "SSN 900-12-3456.");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn with_vault<R>(vault: &mut Vault, f: impl FnOnce() -> R) -> R {
    // Puts the vault back even if `f` panics.
    struct Lent<'a>(&'a mut Vault);
    impl Drop for Lent<'_> {
        fn drop(&mut self) {
            VAULT.with(|v| std::mem::swap(&mut *v.borrow_mut(), self.0));
        }
    }
    VAULT.with(|v| std::mem::swap(&mut *v.borrow_mut(), vault));
    let _lent = Lent(vault);
    f()
}

/// The placeholder of `value` under `label` in the vault lent with
/// [`with_vault`]: what a configured mask rule's replacement returns.
pub(crate) fn lent_placeholder(label: &'static str, value: &str) -> String {
    VAULT.with(|v| v.borrow_mut().placeholder(label, value))
}

/// The value the lent vault's `placeholder` stands for, counted as
/// restored; the placeholder itself when the vault did not issue it.
pub(crate) fn lent_restore(placeholder: &str) -> String {
    VAULT.with(|vault| {
        let mut vault = vault.borrow_mut();
        match vault.value(placeholder) {
            Some(value) => {
                let value = value.to_owned();
                vault.tally.restored += 1;
                value
            }
            None => placeholder.to_owned(),
        }
    })
}

/// Counts a redaction by rule `id` in the lent vault.
pub(crate) fn lent_redaction(id: &'static str) {
    VAULT.with(|vault| vault.borrow_mut().note_redaction(id));
}

impl Detectors {
    /// Request-side rules compiled from a configured rule set: `mask`
    /// replaces each value through the lent vault, `find` only finds.
    pub(crate) fn from_rules(mask: Rules, find: Rules) -> Detectors {
        Detectors { mask, find }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn masks_every_string_key_and_number_but_structure() {
        let detectors = Detectors::new().unwrap();
        let mut vault = Vault::new();
        let mut body = json!({
            "model": "ann@example.com",
            "messages": [{"role": "user", "content": "mail ann@example.com, SSN 914-27-6083"}],
            "session_note": "card 4111-1111-1111-1111 and ann%40example.com",
            "tools": [{"type": "function", "function": {"name": "f", "description": "call 212-555-0100"}}],
            "dan@example.com": 4111111111111111u64,
            "n": 1700000000000u64,
            "host": "10.1.2.3",
            "iban": "DE89 3704 0044 0532 0130 00",
        });
        detectors.mask_json(&mut body, &mut vault);
        assert_eq!(
            body,
            json!({
                "model": "ann@example.com",
                "messages": [{"role": "user", "content": "mail [EMAIL_1], SSN [US_SSN_1]"}],
                "session_note": "card [CARD_1] and [EMAIL_2]",
                "tools": [{"type": "function", "function": {"name": "f", "description": "call [PHONE_1]"}}],
                "[EMAIL_3]": "[CARD_2]",
                "n": 1700000000000u64,
                "host": "[IPV4_1]",
                "iban": "[IBAN_1]",
            })
        );
    }

    #[test]
    fn bare_us_phone_numbers_by_nanp() {
        let detectors = Detectors::new().unwrap();
        for yes in [
            "2125550100",
            "(4155550134)",
            "x 9895550199.",
            "12125550100",
            "call 14155550134.",
        ] {
            assert!(detectors.finds(yes), "{yes}");
        }
        for no in [
            "1700000000",
            "1234567890",
            "0125550100",
            "2115550100",
            "9115550100",
            "2124110100",
            "2129110100",
            "2120550100",
            "2121550100",
            "21255501001",
            "12115550100",
            "11255550100",
            "121255501001",
            "1212555010",
            "212555010",
            "ORD2125550100",
            "2125550100x",
            "2125550100_1",
        ] {
            assert!(!detectors.finds(no), "{no}");
        }
        assert!(nanp("2125550100") && !nanp("212555010") && !nanp("21255501000"));
        assert!(nanp("12125550100") && !nanp("12119110100"));
        let mut vault = Vault::new();
        let mut body = json!({"n": 2125550100u64, "seed": 2125550100u64, "t": "+1 212 555 0100"});
        detectors.mask_json(&mut body, &mut vault);
        assert_eq!(
            body,
            json!({"n": "[PHONE_1]", "seed": 2125550100u64, "t": "[PHONE_2]"})
        );
    }

    #[test]
    fn typed_placeholders_get_their_own() {
        let detectors = Detectors::new().unwrap();
        let mut vault = Vault::new();
        let mut body = json!({"content": "[EMAIL_1] is not ann@example.com"});
        detectors.mask_json(&mut body, &mut vault);
        assert_eq!(body, json!({"content": "[EMAIL_1] is not [EMAIL_2]"}));
        assert_eq!(vault.value("[EMAIL_1]"), Some("[EMAIL_1]"));
        assert_eq!(vault.value("[EMAIL_2]"), Some("ann@example.com"));
    }
}
