//! Rules as the user wrote them: flags and rules files.

use std::fmt;
use std::path::Path;

use serde::Deserialize;
use stream_replace::pack::{self, PackRule};

/// One rule before compilation, with where it came from.
#[derive(Clone, Debug)]
pub struct Spec {
    pub kind: Kind,
    pub pattern: String,
    pub replacement: String,
    /// The rule's place among all rules, from 1, in command-line order
    /// (a file's or a pack's rules taking the flag's place): the one way
    /// srep counts rules, in messages and in `--check`.
    pub number: usize,
    /// Where it was written, for messages: `-e "a.c"`, `--literal`,
    /// `the 3rd rule of rules.toml`, `--pack pii: us_ssn`. A literal's
    /// text is not shown: it may be the secret the rule is for.
    pub origin: String,
}

impl Spec {
    /// How messages name the rule: `rule 2 (-e "a.c")`.
    pub fn name(&self) -> String {
        format!("rule {} ({})", self.number, self.origin)
    }
}

#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// A regex; the replacement is a template (`$1`, `${name}`, `$$`).
    Regex,
    /// A literal; the replacement is literal text.
    Literal,
    /// A rule of a ready pack: its mask, validator and action apply.
    Pack(PackRule),
}

/// A rule that cannot be read; the message is for the user.
#[derive(Debug)]
pub struct SpecError(pub String);

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Splits `PATTERN=REPLACEMENT` at the last `=`: patterns often contain
/// `=` (`password=\S+`), replacements rarely do, and one that does can be
/// written in a rules file. `number` is the rule's place among all rules.
pub fn from_flag(kind: Kind, number: usize, arg: &str) -> Result<Spec, SpecError> {
    let (flag, shown, what) = match kind {
        Kind::Literal => ("--literal", String::new(), "TEXT=REPLACEMENT"),
        _ => (
            "-e",
            format!(" {}", shown_pattern(arg)),
            "PATTERN=REPLACEMENT",
        ),
    };
    let Some((pattern, replacement)) = arg.rsplit_once('=') else {
        return Err(SpecError(format!(
            "rule {number} ({flag}{shown}): expected {what} (split at the last '='; \
             use an empty replacement, {}=, to delete)",
            what.split('=').next().unwrap_or(what)
        )));
    };
    if pattern.is_empty() {
        return Err(SpecError(format!(
            "rule {number} ({flag}{shown}): the {} before '=' is empty",
            if matches!(kind, Kind::Literal) {
                "text"
            } else {
                "pattern"
            }
        )));
    }
    let origin = match kind {
        Kind::Literal => flag.to_owned(),
        _ => format!("{flag} {}", shown_pattern(pattern)),
    };
    Ok(Spec {
        kind,
        pattern: pattern.to_owned(),
        replacement: replacement.to_owned(),
        number,
        origin,
    })
}

/// The pattern quoted for a message; a long one cut after 60 characters.
fn shown_pattern(pattern: &str) -> String {
    match pattern.char_indices().nth(60) {
        Some((cut, _)) => format!("{:?}... ({} bytes)", &pattern[..cut], pattern.len()),
        None => format!("{pattern:?}"),
    }
}

/// `1st`, `2nd`, `3rd`, `4th`, ... `11th`, `21st`.
fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// The names `--pack` accepts.
pub const PACKS: [&str; 1] = ["pii"];

/// The rules of the pack `name` (one of [`PACKS`]), in the pack's order,
/// numbered from `first`.
pub fn from_pack(name: &str, first: usize) -> Result<Vec<Spec>, SpecError> {
    let pack = match name {
        "pii" => pack::pii(),
        _ => {
            return Err(SpecError(format!(
                "--pack {name:?}: unknown pack (known: {})",
                PACKS.join(", ")
            )));
        }
    };
    Ok(pack
        .rules()
        .iter()
        .enumerate()
        .map(|(i, r)| Spec {
            kind: Kind::Pack(*r),
            pattern: r.pattern.to_owned(),
            replacement: r.mask.to_owned(),
            number: first + i,
            origin: format!("--pack {name}: {}", r.id),
        })
        .collect())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRule {
    pattern: Option<String>,
    literal: Option<String>,
    replacement: String,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum JsonFile {
    List(Vec<FileRule>),
    Table(TomlFile),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlFile {
    rule: Vec<FileRule>,
}

/// Reads a rules file: TOML (`[[rule]]` tables) when its name ends in
/// `.toml`, JSON (a list, or `{"rule": [...]}`) otherwise. Its rules are
/// numbered from `first`.
pub fn from_file(path: &Path, first: usize) -> Result<Vec<Spec>, SpecError> {
    let shown = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| SpecError(format!("cannot read rules file {shown}: {e}")))?;
    let is_toml = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"));
    let rules = if is_toml {
        toml::from_str::<TomlFile>(&text)
            .map_err(|e| SpecError(format!("rules file {shown}: {e}")))?
            .rule
    } else {
        match serde_json::from_str::<JsonFile>(&text)
            .map_err(|e| SpecError(format!("rules file {shown}: {e}")))?
        {
            JsonFile::List(rules) => rules,
            JsonFile::Table(t) => t.rule,
        }
    };
    rules
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            let number = first + i;
            let origin = format!("the {} rule of {shown}", ordinal(i + 1));
            let (kind, pattern) = match (r.pattern, r.literal) {
                (Some(p), None) => (Kind::Regex, p),
                (None, Some(l)) => (Kind::Literal, l),
                _ => {
                    return Err(SpecError(format!(
                        "rule {number} ({origin}): give exactly one of \"pattern\" (a regex) \
                         or \"literal\""
                    )));
                }
            };
            if pattern.is_empty() {
                return Err(SpecError(format!(
                    "rule {number} ({origin}): the pattern is empty"
                )));
            }
            Ok(Spec {
                kind,
                pattern,
                replacement: r.replacement,
                number,
                origin,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_splits_at_the_last_equals() {
        let s = from_flag(Kind::Regex, 1, r"password=\S+=***").unwrap();
        assert_eq!(
            (s.pattern.as_str(), s.replacement.as_str()),
            (r"password=\S+", "***")
        );
        assert_eq!(s.name(), r#"rule 1 (-e "password=\\S+")"#);
        let s = from_flag(Kind::Literal, 2, "a=b=").unwrap();
        assert_eq!((s.pattern.as_str(), s.replacement.as_str()), ("a=b", ""));
        assert_eq!(s.name(), "rule 2 (--literal)");
        assert!(from_flag(Kind::Regex, 3, "no-equals").is_err());
        assert!(from_flag(Kind::Regex, 4, "=x").is_err());
    }

    #[test]
    fn a_literal_that_fails_to_split_is_not_shown() {
        let e = from_flag(Kind::Literal, 5, "hunter2")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("rule 5 (--literal): expected TEXT=REPLACEMENT"),
            "{e}"
        );
        assert!(!e.contains("hunter2"), "{e}");
    }

    #[test]
    fn a_long_pattern_is_cut_in_messages() {
        let long = "a".repeat(100);
        let s = from_flag(Kind::Regex, 1, &format!("{long}=x")).unwrap();
        assert_eq!(
            s.name(),
            format!("rule 1 (-e \"{}\"... (100 bytes))", &long[..60])
        );
    }

    #[test]
    fn ordinals() {
        let got: Vec<String> = [1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111]
            .map(ordinal)
            .into();
        assert_eq!(
            got,
            [
                "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st",
                "111th"
            ]
        );
    }
}
