//! Rules as the user wrote them: flags and rules files.

use std::fmt;
use std::path::Path;

use serde::Deserialize;

/// One rule before compilation, with where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    pub kind: Kind,
    pub pattern: String,
    pub replacement: String,
    /// For messages: `-e #2`, `rules.toml rule 3`.
    pub origin: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A regex; the replacement is a template (`$1`, `${name}`, `$$`).
    Regex,
    /// A literal; the replacement is literal text.
    Literal,
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
/// written in a rules file.
pub fn from_flag(kind: Kind, flag: &str, n: usize, arg: &str) -> Result<Spec, SpecError> {
    let origin = format!("{flag} #{n}");
    let Some((pattern, replacement)) = arg.rsplit_once('=') else {
        return Err(SpecError(format!(
            "{origin} {arg:?}: expected PATTERN=REPLACEMENT (split at the last '='; \
             use an empty replacement, PATTERN=, to delete)"
        )));
    };
    if pattern.is_empty() {
        return Err(SpecError(format!(
            "{origin} {arg:?}: the pattern before '=' is empty"
        )));
    }
    Ok(Spec {
        kind,
        pattern: pattern.to_owned(),
        replacement: replacement.to_owned(),
        origin,
    })
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
/// `.toml`, JSON (a list, or `{"rule": [...]}`) otherwise.
pub fn from_file(path: &Path) -> Result<Vec<Spec>, SpecError> {
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
            let origin = format!("{shown} rule {}", i + 1);
            let (kind, pattern) = match (r.pattern, r.literal) {
                (Some(p), None) => (Kind::Regex, p),
                (None, Some(l)) => (Kind::Literal, l),
                _ => {
                    return Err(SpecError(format!(
                        "{origin}: give exactly one of \"pattern\" (a regex) or \"literal\""
                    )))
                }
            };
            if pattern.is_empty() {
                return Err(SpecError(format!("{origin}: the pattern is empty")));
            }
            Ok(Spec {
                kind,
                pattern,
                replacement: r.replacement,
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
        let s = from_flag(Kind::Regex, "-e", 1, r"password=\S+=***").unwrap();
        assert_eq!(
            (s.pattern.as_str(), s.replacement.as_str()),
            (r"password=\S+", "***")
        );
        let s = from_flag(Kind::Literal, "--literal", 2, "a=b=").unwrap();
        assert_eq!((s.pattern.as_str(), s.replacement.as_str()), ("a=b", ""));
        assert!(from_flag(Kind::Regex, "-e", 3, "no-equals").is_err());
        assert!(from_flag(Kind::Regex, "-e", 4, "=x").is_err());
    }
}
