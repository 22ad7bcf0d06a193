//! Building rules from arbitrary patterns, templates and configs never
//! panics; built rules replace without panicking, a stream over a short
//! text equals `replace_all`, and templates expand as `regex` expands them.

#![no_main]

use arbitrary::{Arbitrary, Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use regex_automata::{meta, Anchored, Input};
use stream_replace::{Config, DfaKind, HeldLimit, Pattern, Replacement, Rules};

const MAX_RULES: usize = 4;
const MAX_PATTERN: usize = 64;
const MAX_TEXT: usize = 256;

/// The smallest lazy DFA cache tried: tiny caches force cache clears and
/// the slow path, which must stay exact.
const MIN_CACHE: usize = 1;

/// Pieces of regexes, so that many patterns parse.
const REGEX_PIECES: &[&str] = &[
    "a",
    "b",
    "é",
    "σ",
    "中",
    ".",
    "*",
    "+",
    "?",
    "|",
    "(",
    ")",
    "(?:",
    "(?<n>",
    "(?P<x>",
    "[",
    "]",
    "^",
    "$",
    r"\b",
    r"\B",
    r"\d",
    r"\w",
    r"\s",
    "{2}",
    "{0,3}",
    "{1000}",
    "(?m)",
    "(?s)",
    "(?i)",
    "(?-u)",
    "(?U)",
    "(?R)",
    r"\z",
    r"\A",
    r"\p{L}",
    r"\p{Greek}",
    r"\x{0}",
    r"\b{end}",
    "<think>",
    r"[\s\S]*?",
    "</think>",
    "@",
];

/// Pieces of templates.
const TEMPLATE_PIECES: &[&str] = &[
    "x", "$0", "$1", "$2", "$n", "$x", "${n}", "${1}", "${x}", "$$", "$", "${", "}", "$1a", " ",
    "é", "${}", "$-",
];

#[derive(Debug)]
enum Action {
    Template(String),
    Literal(String),
    Closure,
}

#[derive(Debug)]
struct RuleInput {
    pattern: String,
    literal: bool,
    action: Action,
}

#[derive(Debug)]
struct Case {
    rules: Vec<RuleInput>,
    text: String,
    chunk: usize,
    size_limit: Option<usize>,
    cache_capacity: Option<usize>,
    max_held: Option<usize>,
    replace_at_limit: bool,
}

fn text_from(u: &mut Unstructured<'_>, pieces: &[&str], max_pieces: usize) -> Result<String> {
    if u.ratio(1, 3)? {
        return String::arbitrary(u);
    }
    let mut s = String::new();
    for _ in 0..u.int_in_range(0..=max_pieces)? {
        s.push_str(u.choose(pieces)?);
    }
    Ok(s)
}

impl<'a> Arbitrary<'a> for Case {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Case> {
        let mut rules = Vec::new();
        for _ in 0..u.int_in_range(0..=MAX_RULES)? {
            let pattern = text_from(u, REGEX_PIECES, 10)?;
            let action = match u.int_in_range(0..=3)? {
                0 | 1 => Action::Template(text_from(u, TEMPLATE_PIECES, 5)?),
                2 => Action::Literal(String::arbitrary(u)?),
                _ => Action::Closure,
            };
            rules.push(RuleInput {
                pattern,
                literal: u.ratio(1, 5)?,
                action,
            });
        }
        let text = text_from(u, REGEX_PIECES, 40)?;
        Ok(Case {
            rules,
            text,
            chunk: u.int_in_range(1..=9)?,
            size_limit: if u.ratio(1, 4)? {
                Some(u.int_in_range(0..=100_000)?)
            } else {
                None
            },
            cache_capacity: if u.ratio(1, 4)? {
                Some(u.int_in_range(MIN_CACHE..=1 << 18)?)
            } else {
                None
            },
            max_held: if u.ratio(1, 4)? {
                Some(u.int_in_range(0..=16)?)
            } else {
                None
            },
            replace_at_limit: u.arbitrary()?,
        })
    }
}

/// Every group of the match, so the stream's captures are compared too.
fn describe(caps: &stream_replace::Captures<'_>) -> String {
    let mut s = format!("[{}:", caps.rule());
    for i in 0..caps.len() {
        match caps.get(i) {
            Some(m) => s.push_str(&format!("{}..{}={:?};", m.start(), m.end(), m.as_str())),
            None => s.push_str("-;"),
        }
    }
    s.push(']');
    s
}

/// Replacement by `meta::Regex` alone: the combined regex picks each match,
/// the rule's own regex gives its groups, templates expand as in `regex`.
fn oracle(case: &Case, sources: &[String], text: &str) -> Option<String> {
    let all = meta::Regex::new_many(sources).ok()?;
    let singles: Vec<meta::Regex> = sources
        .iter()
        .map(|s| meta::Regex::new(s).ok())
        .collect::<Option<_>>()?;
    let mut out = String::new();
    let mut last = 0;
    for m in all.find_iter(text) {
        let i = m.pattern().as_usize();
        out.push_str(&text[last..m.start()]);
        match &case.rules[i].action {
            Action::Literal(t) => out.push_str(t),
            // Closure captures carry stream offsets; only the stream check
            // covers them.
            Action::Closure => return None,
            Action::Template(t) => {
                let mut caps = singles[i].create_captures();
                let input = Input::new(text).span(m.range()).anchored(Anchored::Yes);
                singles[i].search_captures(&input, &mut caps);
                caps.interpolate_string_into(text, t, &mut out);
            }
        }
        last = m.end();
    }
    out.push_str(&text[last..]);
    Some(out)
}

fuzz_target!(|case: Case| {
    if case.rules.iter().any(|r| r.pattern.len() > MAX_PATTERN) || case.text.len() > MAX_TEXT {
        return;
    }
    let mut config = Config::new();
    if let Some(n) = case.size_limit {
        config = config.size_limit(n);
    }
    if let Some(n) = case.cache_capacity {
        config = config.dfa(DfaKind::Lazy).cache_capacity(n);
    }
    if let Some(n) = case.max_held {
        config = config.max_held(n);
        if case.replace_at_limit {
            config = config.on_held_limit(HeldLimit::Replace("[cut]".into()));
        }
    }
    let mut builder = Rules::builder();
    for r in &case.rules {
        let pattern = if r.literal {
            Pattern::literal(r.pattern.as_str())
        } else {
            Pattern::regex(r.pattern.as_str())
        };
        let replacement = match &r.action {
            Action::Template(t) => Replacement::template(t.as_str()),
            Action::Literal(t) => Replacement::literal(t.as_str()),
            Action::Closure => Replacement::with(describe),
        };
        builder.rule(pattern, replacement);
    }
    let rules = match builder.config(config).build() {
        Ok(rules) => rules,
        Err(e) => {
            // The error must be printable and name a rule when one is at
            // fault.
            let _ = e.to_string();
            if let Some(i) = e.rule() {
                assert!(
                    i < case.rules.len(),
                    "error names rule {i} of {}",
                    case.rules.len()
                );
            }
            return;
        }
    };

    let whole = rules.replace_all(&case.text);
    let _ = rules.replace_all_bytes(case.text.as_bytes());

    let mut r = rules.replacer();
    let mut got = String::new();
    let mut failed = false;
    let mut at = 0;
    while at < case.text.len() {
        let mut end = (at + case.chunk).min(case.text.len());
        while !case.text.is_char_boundary(end) {
            end += 1;
        }
        if r.feed_into(&case.text[at..end], &mut got).is_err() {
            failed = true;
            break;
        }
        at = end;
    }
    if r.flush_into(&mut got).is_err() {
        failed = true;
    }
    let limited = case.max_held.is_some();
    if failed {
        assert!(limited, "a stream failed without a held limit");
        return;
    }
    if !limited || !case.replace_at_limit {
        assert!(
            got == whole,
            "stream differs from replace_all\n  text: {:?}\n   got: {got:?}\n  want: {whole:?}",
            case.text
        );
    }

    if case.size_limit.is_none() && case.cache_capacity.is_none() {
        let sources: Vec<String> = case
            .rules
            .iter()
            .map(|r| {
                if r.literal {
                    regex_syntax::escape(&r.pattern)
                } else {
                    r.pattern.clone()
                }
            })
            .collect();
        if let Some(want) = oracle(&case, &sources, &case.text) {
            assert!(
                whole == want,
                "replace_all differs from the oracle\n  text: {:?}\n   got: {whole:?}\n  want: {want:?}",
                case.text
            );
        }
    }
});
