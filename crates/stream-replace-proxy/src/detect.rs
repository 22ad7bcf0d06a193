//! What counts as personal data, the per-request vault of placeholders, and
//! the response rules built from both.

use std::cell::RefCell;
use std::collections::HashMap;

use regex_automata::meta::Regex;
use serde_json::Value;
use stream_replace::{Config, Pattern, Replacement, Rules};

/// One kind of value the proxy protects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Detector {
    /// The label in placeholders (`[EMAIL_1]`) and redactions
    /// (`[EMAIL_REDACTED]`).
    pub label: &'static str,
    /// The regex, in the `regex` crate's syntax.
    pub pattern: &'static str,
}

/// The detectors, in priority order: at one position the first wins.
///
/// E-mail addresses (also with `@` percent-encoded as `%40`), US social
/// security numbers, US phone numbers, card numbers (13 to 19 digits, with
/// optional single spaces or dashes between them) and the common API key
/// shapes (OpenAI, AWS access key IDs, GitHub and Slack tokens).
///
/// # Example
///
/// ```
/// use stream_replace_proxy::DETECTORS;
///
/// assert!(DETECTORS.iter().any(|d| d.label == "EMAIL"));
/// ```
pub const DETECTORS: &[Detector] = &[
    Detector {
        label: "EMAIL",
        pattern: r"[A-Za-z0-9._+-]+(?:@|%40)[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}",
    },
    Detector {
        label: "SSN",
        pattern: r"\b\d{3}-\d{2}-\d{4}\b",
    },
    Detector {
        label: "PHONE",
        pattern: r"\b\d{3}[-. ]\d{3}[-. ]\d{4}\b",
    },
    Detector {
        label: "CARD",
        pattern: r"\b\d(?:[ -]?\d){12,18}\b",
    },
    Detector {
        label: "KEY",
        pattern: r"\b(?:sk-[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16}|ghp_[A-Za-z0-9_]{36}|xox[abprs]-(?:\d+-)+[A-Za-z0-9]+)\b",
    },
];

/// Keys whose values are structure, not content: never masked.
const STRUCTURAL_KEYS: &[&str] = &["model", "name", "role", "type", "tool_call_id", "id"];

/// The compiled detectors, shared by every request.
#[derive(Debug)]
pub(crate) struct Detectors {
    regex: Regex,
}

impl Detectors {
    pub(crate) fn new() -> Detectors {
        let patterns: Vec<&str> = DETECTORS.iter().map(|d| d.pattern).collect();
        let regex = Regex::new_many(&patterns).expect("the built-in detectors compile");
        Detectors { regex }
    }

    /// Replaces every detected value in `text` by its placeholder.
    fn mask(&self, text: &str, vault: &mut Vault) -> Option<String> {
        let mut out = String::new();
        let mut last = 0;
        for m in self.regex.find_iter(text) {
            let label = DETECTORS[m.pattern().as_usize()].label;
            out.push_str(&text[last..m.start()]);
            out.push_str(&vault.placeholder(label, &text[m.range()]));
            last = m.end();
        }
        if last == 0 {
            return None;
        }
        out.push_str(&text[last..]);
        Some(out)
    }

    /// Whether `text` holds a value a detector finds.
    pub(crate) fn finds(&self, text: &str) -> bool {
        self.regex.is_match(text)
    }

    /// Masks every string of a request body but those under structural keys.
    pub(crate) fn mask_json(&self, value: &mut Value, vault: &mut Vault) {
        match value {
            Value::String(s) => {
                if let Some(masked) = self.mask(s, vault) {
                    *s = masked;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.mask_json(v, vault)),
            Value::Object(map) => {
                for (k, v) in map.iter_mut() {
                    if !(STRUCTURAL_KEYS.contains(&k.as_str()) && v.is_string()) {
                        self.mask_json(v, vault);
                    }
                }
            }
            _ => {}
        }
    }
}

/// The values one request masked, by placeholder.
#[derive(Clone, Debug, Default)]
pub struct Vault {
    by_value: HashMap<String, String>,
    by_placeholder: HashMap<String, String>,
    entries: Vec<(String, String)>,
    counts: HashMap<&'static str, usize>,
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
        if let Some(p) = self.by_value.get(value) {
            return p.clone();
        }
        let n = self.counts.entry(label).or_insert(0);
        *n += 1;
        let p = format!("[{label}_{n}]");
        self.by_value.insert(value.to_owned(), p.clone());
        self.by_placeholder.insert(p.clone(), value.to_owned());
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
        self.by_placeholder.get(placeholder).map(String::as_str)
    }

    /// Every (placeholder, original value), in the order they were made.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_proxy::Vault;
    ///
    /// let mut vault = Vault::new();
    /// vault.placeholder("SSN", "900-12-3456");
    /// assert_eq!(vault.entries(), [("[SSN_1]".to_owned(), "900-12-3456".to_owned())]);
    /// ```
    pub fn entries(&self) -> &[(String, String)] {
        &self.entries
    }
}

/// The rules for responses: each placeholder back to its value in the
/// vault in scope (see [`with_vault`]), then every detector to a redaction
/// label (`[EMAIL_REDACTED]`).
///
/// Compiled once and shared by every response; only the vault changes from
/// one request to the next. A placeholder that the vault in scope does not
/// know (or with no vault in scope) stays as it is. A restored value is a
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
    let labels: Vec<&str> = DETECTORS.iter().map(|d| d.label).collect();
    let placeholder = format!(r"\[(?:{})_[0-9]+\]", labels.join("|"));
    let restore = Replacement::with(|caps| {
        let placeholder = caps.as_str();
        VAULT.with(|vault| match vault.borrow().value(placeholder) {
            Some(value) => value.to_owned(),
            None => placeholder.to_owned(),
        })
    });
    let mut builder = Rules::builder();
    builder.rule(Pattern::regex(placeholder), restore);
    for d in DETECTORS {
        builder.rule(
            Pattern::regex(d.pattern),
            Replacement::literal(format!("[{}_REDACTED]", d.label)),
        );
    }
    builder.config(config).build()
}

thread_local! {
    // The vault placeholders are restored from. A replacement closure is
    // shared by every stream and sees only the match, and a feed runs on
    // one thread from start to end, so the vault of the stream being fed
    // is lent here for the length of the call.
    static VAULT: RefCell<Vault> = RefCell::new(Vault::new());
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
/// vault.placeholder("SSN", "900-12-3456");
/// let mut r = rules.replacer();
/// let mut out = with_vault(&mut vault, || r.feed("SSN [SS"))?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn masks_every_string_but_structure() {
        let detectors = Detectors::new();
        let mut vault = Vault::new();
        let mut body = json!({
            "model": "ann@example.com",
            "messages": [{"role": "user", "content": "mail ann@example.com, SSN 914-27-6083"}],
            "session_note": "card 4111-1111-1111-1111 and ann%40example.com",
            "tools": [{"type": "function", "function": {"name": "f", "description": "call 212-555-0100"}}],
        });
        detectors.mask_json(&mut body, &mut vault);
        assert_eq!(
            body,
            json!({
                "model": "ann@example.com",
                "messages": [{"role": "user", "content": "mail [EMAIL_1], SSN [SSN_1]"}],
                "session_note": "card [CARD_1] and [EMAIL_2]",
                "tools": [{"type": "function", "function": {"name": "f", "description": "call [PHONE_1]"}}],
            })
        );
        assert_eq!(
            vault.entries()[3],
            ("[EMAIL_2]".to_owned(), "ann%40example.com".to_owned())
        );
    }
}
