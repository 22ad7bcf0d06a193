//! Streaming equals whole-input replacement equals an independent oracle.
//!
//! A case is 1 to 4 rules (picked from patterns known to be hard for a
//! streaming engine, pieces of one word that overlap each other as
//! prefixes, suffixes and infixes, or short arbitrary literals and
//! regexes), an engine choice (the default, the fast paths off, or a small
//! lazy DFA cache that forces cache clears mid-stream), whether literal
//! rules run on the Aho-Corasick literal matcher, and up to 16 texts
//! made mostly from the word's pieces and a small alphabet with multi-byte
//! characters and sometimes invalid bytes, each with its cut points. The
//! rules are compiled once per case, which dominates its cost. The oracle is
//! `meta::Regex::new_many` over the same patterns with each match of rule
//! `i` replaced by `<i>`.

#![no_main]

use arbitrary::{Arbitrary, Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use regex_automata::meta;
use stream_replace::{Config, DfaKind, ErrorKind, Pattern, Replacement, Rules};

const MAX_TEXT: usize = 512;

/// Texts checked per compiled rule set: compiling dominates a case, so one
/// rule set is checked on many texts.
const MAX_TEXTS: usize = 16;

/// The smallest lazy DFA cache tried: tiny caches force cache clears and
/// the slow path, which must stay exact.
const MIN_CACHE: usize = 1;

const TRICKY: &[&str] = &[
    "",
    "a*",
    "^",
    "$",
    "(?m)^",
    "(?m)$",
    r"\b",
    r"\B",
    r"(?-u:\b)",
    r"\d+",
    r"<think>[\s\S]*?</think>",
    r"[\w.+-]+@[\w-]+\.\w+",
    r"\b\d{3}-\d{2}-\d{4}\b",
    "(?i)σ",
    r"\p{Greek}",
    "a|ab",
    "ab|a",
    "y*(?:x|ab)cd|a",
    "x*?",
    r"\w+",
    "[^a]",
    ".",
    "(?s).",
    r"\z",
    r"\A",
    r"\ba\b",
    r"a\b",
    r"\Ba",
    "(?m)^a$",
    "(?R)$",
    r"(?Rm)^$",
    r"\d{3}-\d{2}",
    "é+",
    "中文?",
    r"[\p{L}--a]+",
    "(?U)a+",
    "a+?b",
    r"(?-u:\B)",
    r"\b{start}\w",
    r"\w\b{end}",
    // A `\b` next to a word character, which the DFA steps in its ASCII
    // half forms (inside the rule only after ASCII).
    r"\b\w+\b",
    r"(?:\d|\d\d)\b",
    r"(?:\+1 ?)?\b\d{2}",
    r"\bé\w*",
    "<think>",
    "</think>",
    r"(?:ab)+c",
    "b|",
    "|b",
    "(a)|b",
    // Threads that live past the engine's 64-byte threshold for stepping
    // the earliest alone, and more one-thread states than its memo keeps.
    r"<[^\n]*END",
    r"[a-z\n ]+@",
    r"x[a-z ]{70}y",
    r"<think>[\s\S]*</think>",
];

/// Pieces of text; multi-byte characters are cut by the byte cuts.
const ALPHABET: &[&str] = &[
    "a",
    "a",
    "b",
    "c",
    "d",
    "x",
    "y",
    " ",
    "-",
    "@",
    ".",
    "1",
    "2",
    "3",
    "\n",
    "\r\n",
    "_",
    "<think>",
    "</think>",
    "<th",
    "ink>",
    "σ",
    "Σ",
    "ς",
    "é",
    "中",
    "文",
    "😀",
    "٣",
    "。",
    "ab",
    "cd",
    "END",
    "<",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "the quick brown fox jumps over a lazy dog ",
];

/// Pieces of arbitrary regexes.
const REGEX_ALPHABET: &[&str] = &[
    "a",
    "b",
    "c",
    "x",
    ".",
    "*",
    "+",
    "?",
    "??",
    "|",
    "(",
    ")",
    "(?:",
    "[",
    "]",
    "^",
    "$",
    r"\b",
    r"\B",
    r"\d",
    r"\w",
    r"\s",
    r"\W",
    "{2}",
    "{1,3}",
    "(?m)",
    "(?s)",
    "(?i)",
    "(?-u)",
    "(?U)",
    "(?R)",
    "é",
    "σ",
    "中",
    r"\z",
    r"\A",
    "-",
    "0-9",
    r"\p{Greek}",
    r"\x{FF}",
];

/// Words whose pieces become rules that overlap: a prefix, suffix or
/// infix of another rule, a later-listed rule starting earlier, case folds.
const WORDS: &[&str] = &[
    "password",
    "hello",
    "straße",
    "STRASSE",
    "123-45-6789",
    "abcde",
    "λόγος",
    "ﬀhello",
    "ΣΑΣ",
    "<think>",
    "ann@ex.com",
];

#[derive(Debug)]
struct Rule {
    pattern: String,
    literal: bool,
}

/// Which engine paths a case runs on.
#[derive(Clone, Copy, Debug)]
enum Engine {
    /// The default configuration (a dense DFA when it fits).
    Default,
    /// The literal matcher on its contiguous NFA rather than its DFA.
    LiteralNfa,
    /// The literal matcher on its NFA with a front table of a few rows.
    LiteralFront,
    /// The fast paths off: every byte through the general thread loop.
    General,
    /// The lazy DFA with a new cache for every call, as if each feed ran
    /// on another thread: the stream works its DFA states out again.
    Migrating,
    /// A small lazy DFA cache, which forces cache clears mid-stream and the
    /// NFA fallback.
    Cache(usize),
}

/// One text and where it is cut.
struct Text {
    bytes: Vec<u8>,
    cuts: Vec<usize>,
}

/// A rule set, compiled once, and many texts streamed through it.
struct Case {
    rules: Vec<Rule>,
    engine: Engine,
    /// `Config::literal_matcher`.
    literal_matcher: bool,
    texts: Vec<Text>,
}

impl std::fmt::Debug for Case {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let texts: Vec<_> = self
            .texts
            .iter()
            .map(|t| (String::from_utf8_lossy(&t.bytes), &t.cuts))
            .collect();
        f.debug_struct("Case")
            .field("rules", &self.rules)
            .field("engine", &self.engine)
            .field("literal_matcher", &self.literal_matcher)
            .field("texts", &texts)
            .finish()
    }
}

fn pieces(u: &mut Unstructured<'_>, alphabet: &[&str], max: usize) -> Result<String> {
    let n = u.int_in_range(0..=max)?;
    let mut s = String::new();
    for _ in 0..n {
        s.push_str(u.choose(alphabet)?);
    }
    Ok(s)
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

fn rule(u: &mut Unstructured<'_>, word: &str) -> Result<Rule> {
    let regex = |pattern: String| Rule {
        pattern,
        literal: false,
    };
    Ok(match u.int_in_range(0..=13)? {
        0..=4 => regex(u.choose(TRICKY)?.to_string()),
        5 => Rule {
            pattern: pieces(u, ALPHABET, 3)?,
            literal: true,
        },
        6 => regex(pieces(u, REGEX_ALPHABET, 6)?),
        7 => Rule {
            pattern: String::arbitrary(u)?.chars().take(8).collect(),
            literal: u.arbitrary()?,
        },
        8 => regex(format!("{}{}", u.choose(TRICKY)?, u.choose(TRICKY)?)),
        9 | 10 => Rule {
            pattern: piece(u, word)?,
            literal: true,
        },
        11 => regex(format!("(?i){}", regex_syntax::escape(&piece(u, word)?))),
        12 => regex(format!(
            "{}|{}",
            regex_syntax::escape(&piece(u, word)?),
            regex_syntax::escape(&piece(u, word)?)
        )),
        _ => regex(format!(
            "{}{}",
            regex_syntax::escape(&piece(u, word)?),
            u.choose(&[r"\w*", r"\b", "+", "[a-z]{0,3}", r"\d+", "$"])?
        )),
    })
}

fn text(u: &mut Unstructured<'_>, word: &str) -> Result<Text> {
    let mut bytes = Vec::new();
    for _ in 0..u.int_in_range(0..=24)? {
        match u.int_in_range(0..=15)? {
            0 => bytes.push(u.arbitrary::<u8>()?),
            1..=3 => bytes.extend_from_slice(word.as_bytes()),
            4..=6 => bytes.extend_from_slice(piece(u, word)?.as_bytes()),
            7 => bytes.extend_from_slice(word.to_uppercase().as_bytes()),
            _ => bytes.extend_from_slice(u.choose(ALPHABET)?.as_bytes()),
        }
    }
    let mut cuts = Vec::new();
    for _ in 0..u.int_in_range(0..=8)? {
        cuts.push(u.int_in_range(0..=bytes.len())?);
    }
    if u.ratio(1, 4)? {
        // Every byte its own chunk.
        cuts.extend(0..=bytes.len());
    }
    cuts.sort_unstable();
    Ok(Text { bytes, cuts })
}

impl<'a> Arbitrary<'a> for Case {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Case> {
        let word = if u.ratio(3, 4)? {
            u.choose(WORDS)?.to_string()
        } else {
            let w = pieces(u, ALPHABET, 4)?;
            if w.is_empty() {
                "ab".to_string()
            } else {
                w
            }
        };
        let mut rules = Vec::new();
        for _ in 0..u.int_in_range(1..=4)? {
            rules.push(rule(u, &word)?);
        }
        let engine = match u.int_in_range(0..=7)? {
            0 | 1 => Engine::Default,
            2 => Engine::LiteralNfa,
            3 | 4 => Engine::General,
            5 => Engine::Migrating,
            6 => Engine::LiteralFront,
            _ => Engine::Cache(*u.choose(&[MIN_CACHE, 1 << 10, 1 << 16])?),
        };
        let literal_matcher = u.ratio(2, 3)?;
        let mut texts = Vec::new();
        for _ in 0..u.int_in_range(1..=MAX_TEXTS)? {
            texts.push(text(u, &word)?);
        }
        Ok(Case {
            rules,
            engine,
            literal_matcher,
            texts,
        })
    }
}

/// `find_iter` in UTF-8 mode as stream-replace documents it for invalid
/// UTF-8: `re` is built with `utf8_empty(false)`, and empty matches that
/// split a character are dropped here, so a match that ends before a stray
/// continuation byte is kept (on valid UTF-8 this is plain `find_iter`).
fn oracle(re: &meta::Regex, text: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut last = 0;
    let splits = |m: &regex_automata::Match| {
        m.is_empty() && text.get(m.start()).is_some_and(|&b| b & 0xC0 == 0x80)
    };
    for m in re.find_iter(text).filter(|m| !splits(m)) {
        out.extend_from_slice(&text[last..m.start()]);
        out.extend_from_slice(format!("<{}>", m.pattern().as_usize()).as_bytes());
        last = m.end();
    }
    out.extend_from_slice(&text[last..]);
    out
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

fn show(bytes: &[u8]) -> String {
    format!("{:?}", String::from_utf8_lossy(bytes))
}

fuzz_target!(|case: Case| {
    if case.texts.iter().any(|t| t.bytes.len() > MAX_TEXT) {
        return;
    }
    let rules: Vec<&Rule> = case
        .rules
        .iter()
        .filter(|r| r.literal || meta::Regex::new(&r.pattern).is_ok())
        .collect();
    let sources: Vec<String> = rules
        .iter()
        .map(|r| {
            if r.literal {
                regex_syntax::escape(&r.pattern)
            } else {
                r.pattern.clone()
            }
        })
        .collect();
    let Ok(re) = meta::Builder::new()
        .configure(meta::Config::new().utf8_empty(false))
        .build_many(&sources)
    else {
        return;
    };

    let config = match case.engine {
        Engine::Default => Config::new(),
        Engine::LiteralNfa => Config::new().literal_dfa_size_limit(0),
        Engine::LiteralFront => Config::new().literal_dfa_size_limit(128),
        Engine::General => Config::new().fast_paths(false),
        Engine::Migrating => Config::new().dfa(DfaKind::Lazy).scratch_per_call(true),
        Engine::Cache(n) => Config::new().dfa(DfaKind::Lazy).cache_capacity(n),
    }
    .literal_matcher(case.literal_matcher);
    let mut builder = Rules::builder();
    for (i, r) in rules.iter().enumerate() {
        let pattern = if r.literal {
            Pattern::literal(r.pattern.as_str())
        } else {
            Pattern::regex(r.pattern.as_str())
        };
        builder.rule(pattern, Replacement::literal(format!("<{i}>")));
    }
    let compiled = match builder.config(config).build() {
        Ok(compiled) => compiled,
        Err(e) if *e.kind() == ErrorKind::TooBig => return,
        Err(e) => panic!("the oracle compiles {sources:?} but the rules do not: {e}"),
    };
    let mut r = compiled.replacer();
    for t in &case.texts {
        check(&compiled, &mut r, &re, &sources, case.engine, t);
    }
});

/// Checks one text: `replace_all_bytes`, a byte stream cut at the text's
/// cuts, the same replacer after a reset fed 1-byte chunks, and `&str`
/// streams and `replace_all` where the text is UTF-8. `r` is reused across
/// texts, as a gateway reuses a stream after `flush`.
fn check(
    compiled: &Rules,
    r: &mut stream_replace::Replacer,
    re: &meta::Regex,
    sources: &[String],
    engine: Engine,
    t: &Text,
) {
    let want = oracle(re, &t.bytes);
    let whole = compiled.replace_all_bytes(&t.bytes);
    assert!(
        whole == want,
        "replace_all_bytes differs from the oracle\n rules: {sources:?}\n  text: {}\n   got: {}\n  want: {}",
        show(&t.bytes),
        show(&whole),
        show(&want),
    );

    let chunks = split(&t.bytes, &t.cuts);
    let mut got = Vec::new();
    for chunk in &chunks {
        r.feed_bytes_into(chunk, &mut got)
            .expect("far under the held limit");
    }
    r.flush_bytes_into(&mut got).expect("stream ok");
    assert!(
        got == want,
        "byte stream differs from the oracle ({engine:?})\n rules: {sources:?}\n  text: {}\nchunks: {:?}\n   got: {}\n  want: {}",
        show(&t.bytes),
        chunks.iter().map(|c| show(c)).collect::<Vec<_>>(),
        show(&got),
        show(&want),
    );

    // The same replacer after a reset mid-stream must behave as a fresh
    // one.
    let half = &t.bytes[..t.bytes.len() / 2];
    let _ = r.feed_bytes(half).expect("far under the held limit");
    r.reset();
    let mut again = Vec::new();
    for b in t.bytes.chunks(1) {
        r.feed_bytes_into(b, &mut again)
            .expect("far under the held limit");
    }
    r.flush_bytes_into(&mut again).expect("stream ok");
    assert!(
        again == want,
        "byte stream after reset (1-byte chunks) differs from the oracle ({engine:?})\n rules: {sources:?}\n  text: {}\n   got: {}\n  want: {}",
        show(&t.bytes),
        show(&again),
        show(&want),
    );

    let Ok(text) = std::str::from_utf8(&t.bytes) else {
        return;
    };
    let cuts: Vec<usize> = t
        .cuts
        .iter()
        .map(|&c| {
            (0..=c)
                .rev()
                .find(|&c| text.is_char_boundary(c))
                .unwrap_or(0)
        })
        .collect();
    let mut got = String::new();
    let mut at = 0;
    let mut str_chunks = Vec::new();
    for &c in cuts.iter().chain(std::iter::once(&text.len())) {
        str_chunks.push(&text[at..c]);
        r.feed_into(&text[at..c], &mut got)
            .expect("far under the held limit");
        at = c;
    }
    r.flush_into(&mut got).expect("stream ok");
    assert!(
        got.as_bytes() == want,
        "str stream differs from the oracle ({engine:?})\n rules: {sources:?}\n  text: {text:?}\nchunks: {str_chunks:?}\n   got: {got:?}\n  want: {}",
        show(&want),
    );
    assert!(compiled.replace_all(text).as_bytes() == want);
}
