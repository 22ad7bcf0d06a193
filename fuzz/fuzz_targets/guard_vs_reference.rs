//! The guard layer (validators, allowlists, block rules, triggers) against
//! an independent reference, and every stream against `evaluate`.
//!
//! A case is 1 to 4 rules made from pieces of one word (prefixes, suffixes
//! and infixes of each other, case folds, alternations, `\w*`, `\b`, `$`,
//! `+`, `{0,3}`) or a few patterns hard for a stream (empty matches, `\d+`,
//! `\w+`), each with a validator or none (accept all, reject all, by a hash
//! of the matched text, by the parity of its length) and a replace or block
//! action; an allowlist of values mostly cut from the case's texts; an
//! engine choice (the default, the fast paths off, or a small lazy DFA
//! cache); and up to 16 UTF-8 texts with their byte cuts. The rules are
//! compiled once per case.
//!
//! For each text, `Rules::evaluate` (text, triggers with values, block) must
//! equal the reference: `meta::Regex::new_many` over the same patterns,
//! searched one rule at a time anchored at each position
//! (`Anchored::Pattern`), exactly as the guard module documents the
//! semantics. Then byte and `&str` streams cut at the text's cuts, and a
//! byte stream fed one byte at a time, must release `evaluate`'s text (and
//! nothing after a block), record its triggers, report its block, and
//! report that same block, releasing nothing, on every later call.

#![no_main]

use std::collections::HashSet;
use std::ops::Range;

use arbitrary::{Arbitrary, Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use regex_automata::{meta, Anchored, Input, PatternID};
use stream_replace::{
    Block, Config, DfaKind, ErrorKind, EvaluateConfig, Pattern, Replacement, Replacer, Rule, Rules,
    StreamError, StreamErrorKind, Trigger,
};

const MAX_TEXT: usize = 512;

/// Texts checked per compiled rule set: compiling dominates a case.
const MAX_TEXTS: usize = 16;

/// Words whose pieces become rules that overlap one another.
const WORDS: &[&str] = &[
    "password",
    "hello",
    "abcab",
    "aaa",
    "straße",
    "123-45-6789",
    "λόγος",
    "ΣΑΣ",
    "ann@ex.com",
    "sk-live",
];

/// Patterns whose matches are empty, nested in others' or cross them.
const TRICKY: &[&str] = &[
    "", "a*", "$", r"\b", r"\d+", r"\d", r"\w+", r"\w", "[a-z]+", "(?m)^", "x*?", r"\B", ".",
];

/// Filler between the word's pieces.
const ALPHABET: &[&str] = &[
    "a", "b", " ", "-", "@", ".", "1", "12", "\n", "_", "σ", "é", "中", "😀", "x", "END",
];

/// How a rule checks its decided matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Check {
    /// No validator.
    None,
    /// A validator that accepts every match.
    Always,
    /// A validator that rejects every match.
    Never,
    /// Rejects when a seeded hash of the text is 0 mod 3.
    Hash(u64),
    /// Accepts texts whose length in bytes has this parity (0 or 1).
    Parity(usize),
}

impl Check {
    fn accepts(self, text: &str) -> bool {
        match self {
            Check::None | Check::Always => true,
            Check::Never => false,
            Check::Hash(seed) => {
                // FNV-1a, seeded.
                let mut h = 0xcbf2_9ce4_8422_2325u64 ^ seed;
                for &b in text.as_bytes() {
                    h ^= u64::from(b);
                    h = h.wrapping_mul(0x0100_0000_01b3);
                }
                h % 3 != 0
            }
            Check::Parity(p) => text.len() % 2 == p,
        }
    }
}

#[derive(Debug)]
struct GRule {
    pattern: String,
    literal: bool,
    check: Check,
    block: bool,
}

impl GRule {
    fn source(&self) -> String {
        if self.literal {
            regex_syntax::escape(&self.pattern)
        } else {
            self.pattern.clone()
        }
    }
}

/// Which engine paths a case runs on.
#[derive(Clone, Copy, Debug)]
enum Engine {
    Default,
    /// The literal matcher on its contiguous NFA rather than its DFA.
    LiteralNfa,
    /// The literal matcher on its NFA with a front table of a few rows.
    LiteralFront,
    /// The fast paths off: every byte through the general thread loop.
    General,
    /// Literal rules on the thread matcher, not the Aho-Corasick one.
    NoLiterals,
    /// The lazy DFA instead of the dense one.
    Lazy,
    /// A small lazy DFA cache, which forces cache clears and the NFA
    /// fallback.
    Cache(usize),
}

struct Text {
    text: String,
    cuts: Vec<usize>,
}

struct Case {
    rules: Vec<GRule>,
    allow: Vec<String>,
    engine: Engine,
    texts: Vec<Text>,
}

impl std::fmt::Debug for Case {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let texts: Vec<_> = self.texts.iter().map(|t| (&t.text, &t.cuts)).collect();
        f.debug_struct("Case")
            .field("rules", &self.rules)
            .field("allow", &self.allow)
            .field("engine", &self.engine)
            .field("texts", &texts)
            .finish()
    }
}

/// A non-empty substring of `word` at character boundaries.
fn piece(u: &mut Unstructured<'_>, word: &str) -> Result<String> {
    let points: Vec<usize> = (0..=word.len())
        .filter(|&i| word.is_char_boundary(i))
        .collect();
    let a = u.int_in_range(0..=points.len() - 2)?;
    let b = u.int_in_range(a + 1..=points.len() - 1)?;
    Ok(word[points[a]..points[b]].to_string())
}

fn pattern(u: &mut Unstructured<'_>, word: &str) -> Result<(String, bool)> {
    let esc = |s: String| regex_syntax::escape(&s);
    Ok(match u.int_in_range(0..=9)? {
        0 | 1 => (piece(u, word)?, true),
        2 => (word.to_string(), true),
        3 => (format!("(?i){}", esc(piece(u, word)?)), false),
        4 => (
            format!("{}|{}", esc(piece(u, word)?), esc(piece(u, word)?)),
            false,
        ),
        5 | 6 => (
            format!(
                "{}{}",
                esc(piece(u, word)?),
                u.choose(&[r"\w*", r"\b", "$", "+", "{0,3}", r"[a-z]{0,3}", r"\w*?"])?
            ),
            false,
        ),
        7 => (format!(r"\b{}", esc(piece(u, word)?)), false),
        _ => (u.choose(TRICKY)?.to_string(), false),
    })
}

fn check(u: &mut Unstructured<'_>) -> Result<Check> {
    Ok(match u.int_in_range(0..=7)? {
        0..=2 => Check::None,
        3 => Check::Always,
        4 => Check::Never,
        5 | 6 => Check::Hash(u.arbitrary()?),
        _ => Check::Parity(u.int_in_range(0..=1)?),
    })
}

fn text(u: &mut Unstructured<'_>, word: &str) -> Result<Text> {
    let mut text = String::new();
    for _ in 0..u.int_in_range(0..=20)? {
        match u.int_in_range(0..=12)? {
            0 => text.push(u.arbitrary::<char>()?),
            1..=3 => text.push_str(word),
            4..=6 => text.push_str(&piece(u, word)?),
            7 => text.push_str(&word.to_uppercase()),
            _ => text.push_str(u.choose(ALPHABET)?),
        }
    }
    let mut cuts = Vec::new();
    for _ in 0..u.int_in_range(0..=8)? {
        cuts.push(u.int_in_range(0..=text.len())?);
    }
    cuts.sort_unstable();
    Ok(Text { text, cuts })
}

/// A value for the allowlist: mostly a piece of a text, so that it can be
/// some rule's whole match.
fn allowed(u: &mut Unstructured<'_>, word: &str, texts: &[Text]) -> Result<String> {
    Ok(match u.int_in_range(0..=5)? {
        0 => word.to_string(),
        1 => piece(u, word)?,
        _ => {
            let t = &u.choose(texts)?.text;
            let points: Vec<usize> = (0..=t.len()).filter(|&i| t.is_char_boundary(i)).collect();
            let a = u.int_in_range(0..=points.len() - 1)?;
            let b = u.int_in_range(a..=(a + 6).min(points.len() - 1))?;
            t[points[a]..points[b]].to_string()
        }
    })
}

impl<'a> Arbitrary<'a> for Case {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Case> {
        let word = u.choose(WORDS)?.to_string();
        let mut rules = Vec::new();
        for _ in 0..u.int_in_range(1..=4)? {
            let (pattern, literal) = pattern(u, &word)?;
            rules.push(GRule {
                pattern,
                literal,
                check: check(u)?,
                block: u.ratio(1, 5)?,
            });
        }
        let engine = match u.int_in_range(0..=8)? {
            0 => Engine::Default,
            1 => Engine::LiteralNfa,
            2 | 3 => Engine::General,
            4 => Engine::NoLiterals,
            5 => Engine::Lazy,
            6 => Engine::LiteralFront,
            _ => Engine::Cache(*u.choose(&[1, 1 << 10])?),
        };
        let mut texts = Vec::new();
        for _ in 0..u.int_in_range(1..=MAX_TEXTS)? {
            texts.push(text(u, &word)?);
        }
        let mut allow = Vec::new();
        for _ in 0..u.int_in_range(0..=3)? {
            allow.push(allowed(u, &word, &texts)?);
        }
        Ok(Case {
            rules,
            allow,
            engine,
            texts,
        })
    }
}

/// What a whole text comes to: the output up to the block if any, the
/// triggers as (rule, span, value), the block as (rule, span).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Verdict {
    text: String,
    triggers: Vec<(usize, Range<usize>, String)>,
    block: Option<(usize, Range<usize>)>,
}

/// The guard module's semantics, position by position: at `pos`, the first
/// rule in order whose anchored match is not rejected is the match (an
/// empty match at the end of the last match is none, and stops the search
/// at `pos`); an allowlisted match passes through; with no match, the
/// search goes on at the next character.
fn reference(re: &meta::Regex, rules: &[GRule], allow: &HashSet<&str>, hay: &str) -> Verdict {
    let mut text = String::new();
    let mut triggers = Vec::new();
    let mut last_end: Option<usize> = None;
    let (mut pos, mut copied) = (0, 0);
    while pos <= hay.len() {
        if !hay.is_char_boundary(pos) {
            pos += 1;
            continue;
        }
        let mut found = None;
        for (k, rule) in rules.iter().enumerate() {
            let input = Input::new(hay)
                .range(pos..)
                .anchored(Anchored::Pattern(PatternID::must(k)));
            let Some(m) = re.search(&input) else {
                continue;
            };
            if m.is_empty() && last_end == Some(pos) {
                break;
            }
            if rule.check.accepts(&hay[m.range()]) {
                found = Some((k, m.range()));
                break;
            }
        }
        let Some((k, span)) = found else {
            pos += 1;
            continue;
        };
        text.push_str(&hay[copied..span.start]);
        let value = &hay[span.clone()];
        if allow.contains(value) {
            text.push_str(value);
        } else {
            triggers.push((k, span.clone(), value.to_string()));
            if rules[k].block {
                return Verdict {
                    text,
                    triggers,
                    block: Some((k, span)),
                };
            }
            text.push_str(&format!("<{k}>"));
        }
        copied = span.end;
        last_end = Some(span.end);
        pos = span.end;
    }
    text.push_str(&hay[copied..]);
    Verdict {
        text,
        triggers,
        block: None,
    }
}

fn triggers_of(ts: &[Trigger]) -> Vec<(usize, Range<usize>, String)> {
    ts.iter()
        .map(|t| {
            (
                t.rule(),
                t.span(),
                t.value().expect("values recorded").to_string(),
            )
        })
        .collect()
}

fn block_of(b: Option<&Block>) -> Option<(usize, Range<usize>)> {
    b.map(|b| (b.rule(), b.span()))
}

/// How a stream is fed.
#[derive(Clone, Copy, Debug)]
enum Feed {
    /// `feed_bytes_into`, `flush_bytes_into`.
    BytesInto,
    /// `feed_bytes`, `flush_bytes`: the released text comes in the error.
    Bytes,
    /// `feed_into`, `flush_into`.
    StrInto,
    /// `feed`, `flush`.
    Str,
}

/// One call on `r`: the text it released, appended to `out`.
fn call(
    r: &mut Replacer,
    feed: Feed,
    chunk: Option<&[u8]>,
    out: &mut Vec<u8>,
) -> Result<(), StreamError> {
    let result = match (feed, chunk) {
        (Feed::BytesInto, Some(c)) => r.feed_bytes_into(c, out),
        (Feed::BytesInto, None) => r.flush_bytes_into(out),
        (Feed::Bytes, Some(c)) => r.feed_bytes(c).map(|b| out.extend_from_slice(&b)),
        (Feed::Bytes, None) => r.flush_bytes().map(|b| out.extend_from_slice(&b)),
        (Feed::StrInto | Feed::Str, c) => {
            let c = c.map(|c| std::str::from_utf8(c).expect("cut at boundaries"));
            let mut s = String::new();
            let result = match (feed, c) {
                (Feed::StrInto, Some(c)) => r.feed_into(c, &mut s),
                (Feed::StrInto, None) => r.flush_into(&mut s),
                (_, Some(c)) => r.feed(c).map(|t| s.push_str(&t)),
                (_, None) => r.flush().map(|t| s.push_str(&t)),
            };
            out.extend_from_slice(s.as_bytes());
            result
        }
    };
    if let Err(e) = &result {
        out.extend_from_slice(e.released());
        let into = matches!(feed, Feed::BytesInto | Feed::StrInto);
        assert!(
            !into || e.released().is_empty(),
            "an `_into` call returned released text in its error: {e:?}"
        );
    }
    result
}

/// Streams `chunks` through `r` (reset first) and checks it came to `want`.
fn stream(
    r: &mut Replacer,
    feed: Feed,
    chunks: &[&[u8]],
    want: &Verdict,
    what: &dyn Fn() -> String,
) {
    r.reset();
    r.record_triggers(true, true);
    let mut out = Vec::new();
    let mut block = None;
    for c in chunks {
        if let Err(e) = call(r, feed, Some(c), &mut out) {
            block = Some(e);
            break;
        }
    }
    // A block, in a feed or in the flush: every later call of the stream,
    // `feed` and `flush` alike, reports the same block and releases
    // nothing, until a reset.
    let later: &[Option<&[u8]>] = if block.is_some() {
        &[Some(b"more"), Some(b""), None, Some(b"more"), None]
    } else {
        block = call(r, feed, None, &mut out).err();
        &[Some(b"more"), None, Some(b"")]
    };
    if let Some(first) = &block {
        assert_eq!(
            first.kind(),
            StreamErrorKind::Blocked,
            "{feed:?} stream failed with {first:?}\n{}",
            what()
        );
        for &later in later {
            let mut more = Vec::new();
            let again =
                call(r, feed, later, &mut more).expect_err("a blocked stream stays blocked");
            assert!(
                again.block() == first.block() && more.is_empty(),
                "{feed:?}: a call after the block reported {again:?} and released {more:?}, not {first:?}\n{}",
                what()
            );
        }
    }
    let got = Verdict {
        text: String::from_utf8(out)
            .unwrap_or_else(|e| panic!("{feed:?} released {e}\n{}", what())),
        triggers: triggers_of(&r.take_triggers()),
        block: block_of(block.as_ref().and_then(|e| e.block())),
    };
    assert!(
        &got == want,
        "{feed:?} stream differs from evaluate\nchunks: {:?}\n   got: {got:?}\n  want: {want:?}\n{}",
        chunks.iter().map(|c| String::from_utf8_lossy(c)).collect::<Vec<_>>(),
        what()
    );
}

/// The chunks between consecutive cuts (empty chunks included).
fn split<'t>(text: &'t [u8], cuts: &[usize]) -> Vec<&'t [u8]> {
    let mut chunks = Vec::new();
    let mut at = 0;
    for &c in cuts {
        chunks.push(&text[at..c]);
        at = c;
    }
    chunks.push(&text[at..]);
    chunks
}

fn build(rules: &[GRule], allow: &[String], config: Config) -> Option<Rules> {
    let mut b = Rules::builder();
    b.config(config);
    for (i, r) in rules.iter().enumerate() {
        let pattern = if r.literal {
            Pattern::literal(r.pattern.as_str())
        } else {
            Pattern::regex(r.pattern.as_str())
        };
        let mut rule = Rule::new(pattern, Replacement::literal(format!("<{i}>")));
        let check = r.check;
        if check != Check::None {
            rule = rule.validator(move |t| check.accepts(t));
        }
        if r.block {
            rule = rule.block(format!("reason {i}"));
        }
        b.add(rule);
    }
    for a in allow {
        b.allow(a.as_str());
    }
    match b.build() {
        Ok(rules) => Some(rules),
        Err(e) if *e.kind() == ErrorKind::TooBig => None,
        Err(e) => panic!("the reference compiles {rules:?} but the rules do not: {e}"),
    }
}

fuzz_target!(|case: Case| {
    if case.texts.iter().any(|t| t.text.len() > MAX_TEXT) {
        return;
    }
    let sources: Vec<String> = case.rules.iter().map(GRule::source).collect();
    let Ok(re) = meta::Regex::new_many(&sources) else {
        return;
    };
    let config = match case.engine {
        Engine::Default => Config::new(),
        Engine::LiteralNfa => Config::new().literal_dfa_size_limit(0),
        Engine::LiteralFront => Config::new().literal_dfa_size_limit(128),
        Engine::General => Config::new().fast_paths(false),
        Engine::NoLiterals => Config::new().literal_matcher(false),
        Engine::Lazy => Config::new().dfa(DfaKind::Lazy),
        // The cache size only applies to the lazy DFA.
        Engine::Cache(n) => Config::new().dfa(DfaKind::Lazy).cache_capacity(n),
    };
    let Some(compiled) = build(&case.rules, &case.allow, config) else {
        return;
    };
    let allow: HashSet<&str> = case.allow.iter().map(String::as_str).collect();
    let mut r = compiled.replacer();
    let values = EvaluateConfig::new().values(true);
    for t in &case.texts {
        let what = || {
            format!(
                " rules: {:?}\n allow: {:?}\nengine: {:?}\n  text: {:?}",
                case.rules, case.allow, case.engine, t.text
            )
        };
        let want = reference(&re, &case.rules, &allow, &t.text);
        let eval = compiled.evaluate_with(&t.text, &values);
        let got = Verdict {
            text: eval.text().to_string(),
            triggers: triggers_of(eval.triggers()),
            block: block_of(eval.block()),
        };
        assert!(
            got == want,
            "evaluate differs from the reference\n   got: {got:?}\n  want: {want:?}\n{}",
            what()
        );
        assert!(
            compiled.replace_all(&t.text) == want.text,
            "replace_all differs from evaluate\n{}",
            what()
        );

        let bytes = t.text.as_bytes();
        let chunks = split(bytes, &t.cuts);
        stream(&mut r, Feed::BytesInto, &chunks, &want, &what);
        stream(&mut r, Feed::Bytes, &chunks, &want, &what);
        let ones: Vec<&[u8]> = bytes.chunks(1).collect();
        stream(&mut r, Feed::BytesInto, &ones, &want, &what);

        // `&str` feeds at the cuts moved back to character boundaries.
        let cuts: Vec<usize> = t
            .cuts
            .iter()
            .map(|&c| {
                (0..=c)
                    .rev()
                    .find(|&c| t.text.is_char_boundary(c))
                    .unwrap_or(0)
            })
            .collect();
        let chunks = split(bytes, &cuts);
        stream(&mut r, Feed::StrInto, &chunks, &want, &what);
        stream(&mut r, Feed::Str, &chunks, &want, &what);
    }
});
