//! Rule descriptions shared by the case files and the property tests, and
//! the reference output computed without `stream-replace`.
//!
//! Matches come from `regex_automata::meta::Regex::new_many` over the
//! patterns (literals escaped), `find_iter`, leftmost-first: the definition
//! of the output the crate promises. Capture groups for templates and closures come
//! from the rule's own `regex::bytes::Regex`, and templates are expanded by
//! `regex`'s `Captures::expand`.

use regex::bytes::Regex as BytesRegex;
use regex_automata::meta;
use stream_replace::{Captures, Config, Error, Pattern, Replacement, Rules};

/// A rule's pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pat {
    Literal(String),
    Regex(String),
}

impl Pat {
    /// The pattern in `regex` syntax.
    pub fn source(&self) -> String {
        match self {
            Pat::Literal(s) => regex_syntax::escape(s),
            Pat::Regex(s) => s.clone(),
        }
    }
}

/// A replacement whose output the oracle can compute on its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Repl {
    /// Literal text, no `$` expansion.
    Text(String),
    /// A `regex`-style template.
    Template(String),
    /// A closure, chosen by name so case files can use one.
    Closure(Named),
}

/// The closures a case file can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Named {
    /// The match in upper case.
    Upper,
    /// `<rule:start-end>`, offsets from the start of the stream.
    Span,
    /// `(g0|g1|…)`, `-` for a group that did not take part.
    Groups,
}

impl Named {
    pub fn parse(name: &str) -> Option<Named> {
        match name {
            "upper" => Some(Named::Upper),
            "span" => Some(Named::Span),
            "groups" => Some(Named::Groups),
            _ => None,
        }
    }

    /// The closure's output from our own captures.
    pub fn apply(self, caps: &Captures<'_>) -> String {
        match self {
            Named::Upper => caps.as_str().to_uppercase(),
            Named::Span => {
                let m = caps.get_match();
                format!("<{}:{}-{}>", caps.rule(), m.start(), m.end())
            }
            Named::Groups => {
                let groups: Vec<&str> = (0..caps.len())
                    .map(|i| caps.get(i).map_or("-", |m| m.as_str()))
                    .collect();
                format!("({})", groups.join("|"))
            }
        }
    }

    /// The closure's output from `regex`'s captures of the same match.
    fn apply_oracle(self, rule: usize, caps: &regex::bytes::Captures<'_>) -> String {
        let text = |m: regex::bytes::Match<'_>| {
            String::from_utf8(m.as_bytes().to_vec()).expect("matches are valid UTF-8")
        };
        let m = caps.get(0).expect("group 0 always takes part");
        match self {
            Named::Upper => text(m).to_uppercase(),
            Named::Span => format!("<{rule}:{}-{}>", m.start(), m.end()),
            Named::Groups => {
                let groups: Vec<String> = caps
                    .iter()
                    .map(|g| g.map_or_else(|| "-".to_string(), text))
                    .collect();
                format!("({})", groups.join("|"))
            }
        }
    }
}

/// One rule: a pattern and its replacement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    pub pat: Pat,
    pub repl: Repl,
}

/// Builds the rules, going through every builder method that fits (the
/// shorthands `literal`, `regex`, `literal_with`, `regex_with`, and `rule`
/// for the other combinations).
pub fn build(rules: &[Rule]) -> Result<Rules, Error> {
    build_with(rules, Config::new())
}

/// [`build`] with a configuration.
pub fn build_with(rules: &[Rule], config: Config) -> Result<Rules, Error> {
    let mut b = Rules::builder();
    b.config(config);
    for r in rules {
        match (&r.pat, &r.repl) {
            (Pat::Literal(p), Repl::Text(t)) => b.literal(p, t.as_str()),
            (Pat::Regex(p), Repl::Template(t)) => b.regex(p, t.as_str()),
            (Pat::Literal(p), Repl::Closure(n)) => {
                let n = *n;
                b.literal_with(p, move |c| n.apply(c))
            }
            (Pat::Regex(p), Repl::Closure(n)) => {
                let n = *n;
                b.regex_with(p, move |c| n.apply(c))
            }
            (Pat::Regex(p), Repl::Text(t)) => {
                b.rule(Pattern::regex(p.as_str()), Replacement::literal(t.as_str()))
            }
            (Pat::Literal(p), Repl::Template(t)) => b.rule(
                Pattern::literal(p.as_str()),
                Replacement::template(t.as_str()),
            ),
        };
    }
    b.build()
}

/// The reference compiled once, for many haystacks.
pub struct Oracle {
    rules: Vec<Rule>,
    all: meta::Regex,
    singles: Vec<BytesRegex>,
}

impl Oracle {
    /// # Panics
    ///
    /// When a pattern does not compile in `regex`.
    pub fn new(rules: &[Rule]) -> Oracle {
        let sources: Vec<String> = rules.iter().map(|r| r.pat.source()).collect();
        // `utf8_empty(false)` plus the filter in `matches` is `find_iter`'s
        // UTF-8 mode as the crate documents it for invalid UTF-8: an empty
        // match never splits a character, and a non-empty match is kept
        // even when a stray continuation byte follows it (where
        // `utf8_empty(true)` would drop it; on valid UTF-8 the two agree).
        let all = meta::Builder::new()
            .configure(meta::Config::new().utf8_empty(false))
            .build_many(&sources)
            .unwrap_or_else(|e| panic!("oracle cannot compile {sources:?}: {e}"));
        let singles = sources
            .iter()
            .map(|s| BytesRegex::new(s).unwrap_or_else(|e| panic!("{s:?}: {e}")))
            .collect();
        Oracle {
            rules: rules.to_vec(),
            all,
            singles,
        }
    }

    /// The matches of the whole haystack: `(rule, start, end)`.
    pub fn matches(&self, hay: &[u8]) -> Vec<(usize, usize, usize)> {
        self.all
            .find_iter(hay)
            .filter(|m| !(m.is_empty() && hay.get(m.start()).is_some_and(|&b| b & 0xC0 == 0x80)))
            .map(|m| (m.pattern().as_usize(), m.start(), m.end()))
            .collect()
    }

    /// The reference output for the whole haystack.
    pub fn replace(&self, hay: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut last = 0;
        for (rule, start, end) in self.matches(hay) {
            out.extend_from_slice(&hay[last..start]);
            match &self.rules[rule].repl {
                Repl::Text(t) => out.extend_from_slice(t.as_bytes()),
                repl => {
                    // The alternation chose rule `rule` at `start`, so the
                    // rule's own leftmost-first search from `start` finds the
                    // same match, with look-around seeing the whole haystack.
                    let caps = self.singles[rule]
                        .captures_at(hay, start)
                        .expect("the rule matches where the alternation chose it");
                    let m = caps.get(0).expect("group 0");
                    assert_eq!(
                        (m.start(), m.end()),
                        (start, end),
                        "oracle: rule {rule} alone disagrees with the alternation"
                    );
                    match repl {
                        Repl::Template(t) => caps.expand(t.as_bytes(), &mut out),
                        Repl::Closure(n) => {
                            out.extend_from_slice(n.apply_oracle(rule, &caps).as_bytes())
                        }
                        Repl::Text(_) => unreachable!(),
                    }
                }
            }
            last = end;
        }
        out.extend_from_slice(&hay[last..]);
        out
    }
}

/// Shows bytes as text where they are UTF-8, with `\xNN` escapes elsewhere.
pub fn show(bytes: &[u8]) -> String {
    let mut s = String::new();
    for chunk in bytes.utf8_chunks() {
        s.push_str(&chunk.valid().escape_debug().to_string());
        for b in chunk.invalid() {
            s.push_str(&format!("\\x{b:02X}"));
        }
    }
    format!("\"{s}\"")
}
