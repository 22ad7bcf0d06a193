//! Property tests against the independent oracle: random rule sets drawn
//! from a list of tricky patterns, random texts with multi-byte characters
//! (and invalid bytes for the byte API), random splits.

use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, FileFailurePersistence};
use stream_replace::{Config, DfaKind, ErrorKind, Rules};

use crate::oracle::{self, Oracle, Pat, Repl, Rule, show};
use crate::run::{self, Api, chunks_at};

/// Patterns chosen to exercise the hard parts of the contract: empty
/// matches, anchors, both kinds of word boundary, greedy and lazy
/// repetition, unbounded held regions, Unicode classes and case folding.
pub const REGEXES: &[&str] = &[
    "",
    "a*",
    "^",
    "$",
    "(?m)^",
    "(?m)$",
    "(?Rm)$",
    r"\b",
    r"\B",
    r"(?-u:\b)",
    r"(?-u:\B)",
    r"\d+",
    r"<think>[\s\S]*?</think>",
    r"<think>[\s\S]*</think>",
    r"[\w.+-]+@[\w-]+\.\w+",
    r"\b\d{3}-\d{2}-\d{4}\b",
    "(?i)σ",
    r"\p{Greek}+",
    "a|ab",
    "ab|a",
    r"y*(?:x|ab)cd|a",
    "x*?",
    r"\bfoo\b",
    r"\w+",
    r"a\z",
    r"\Aa",
    "(?s).",
    r"[^\s]+?",
    r"(?i)foo\B",
    r"\b\w",
    // A `\b` next to a word character, which the DFA sees in its ASCII
    // half forms: at both ends, with ends of several lengths in priority
    // order, inside the rule after ASCII only; and one left as written
    // (what follows it may be a non-ASCII word character).
    r"\b\w+\b",
    r"(?:\d|\d\d)\b",
    r"\b\d+",
    r"(?:\+1 ?)?\b\d{2}",
    r"\bé\w*",
    r"\w\b.",
];

pub const LITERALS: &[&str] = &["hello", "敏感词", "ab", "<think>", "σ", "😀", "a.b", "é"];

/// Pieces texts are made of.
pub const ATOMS: &[&str] = &[
    "a", "b", "c", "d", "x", "y", "f", "o", "1", "2", "3", " ", "-", "@", ".", "\n", "\r\n",
    "<think>", "</think>", "<", "é", "σ", "Σ", "ς", "中", "😀", "敏感", "词", "hel", "lo", "foo",
    "45", "6789", "com", "\t", "٣", "。",
];

/// Pieces of byte texts that are not valid UTF-8 on their own.
const BAD_ATOMS: &[&[u8]] = &[b"\xFF", b"\xC3", b"\x80", b"\xE4\xB8", b"\xF0\x9F\x98"];

/// Continuations tried after a prefix: each atom alone and followed by a
/// space, and every suffix of these examples (so a partial match can be
/// completed).
const EXAMPLES: &[&str] = &[
    "<think>x</think> ",
    "ann@ex.com ",
    "123-45-6789 ",
    "hello ",
    "敏感词",
    "foo ",
    "foox ",
    "yabcd",
    "a.b",
    "σ😀é",
    "END",
];

fn rule_strategy() -> impl Strategy<Value = Pat> {
    prop_oneof![
        4 => proptest::sample::select(REGEXES).prop_map(|p| Pat::Regex(p.to_string())),
        1 => proptest::sample::select(LITERALS).prop_map(|p| Pat::Literal(p.to_string())),
    ]
}

fn rules_strategy() -> impl Strategy<Value = Vec<Rule>> {
    numbered(rule_strategy())
}

/// One to three rules drawn from `pat`, rule `i` replaced by `<i>`.
pub(crate) fn numbered(pat: impl Strategy<Value = Pat>) -> impl Strategy<Value = Vec<Rule>> {
    proptest::collection::vec(pat, 1..=3).prop_map(|pats| {
        pats.into_iter()
            .enumerate()
            .map(|(i, pat)| Rule {
                pat,
                repl: Repl::Text(format!("<{i}>")),
            })
            .collect()
    })
}

fn text_strategy() -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(ATOMS), 0..16).prop_map(|a| a.concat())
}

fn bytes_strategy() -> impl Strategy<Value = Vec<u8>> {
    let atom = prop_oneof![
        6 => proptest::sample::select(ATOMS).prop_map(|a| a.as_bytes().to_vec()),
        1 => proptest::sample::select(BAD_ATOMS).prop_map(|a| a.to_vec()),
    ];
    proptest::collection::vec(atom, 0..16).prop_map(|a| a.concat())
}

/// Random cut points in `0..=1` (scaled to the input later), sorted.
pub(crate) fn cuts_strategy() -> impl Strategy<Value = Vec<f64>> {
    proptest::collection::vec(0.0..=1.0f64, 0..8).prop_map(|mut v| {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v
    })
}

/// Scales `cuts` to `points` (the allowed cut positions).
fn scale(cuts: &[f64], points: &[usize]) -> Vec<usize> {
    cuts.iter()
        .map(|&f| points[((points.len() - 1) as f64 * f).round() as usize])
        .collect()
}

fn compile(rules: &[Rule]) -> Rules {
    compile_for(rules, Engine::Fast)
}

/// The engine configurations every stream property runs through, so a bug
/// in one path cannot hide behind another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Engine {
    /// The default: a dense DFA for these small rule sets, with idle
    /// scans, the prefilter, the tight loops, settling at the end of a
    /// feed.
    Fast,
    /// The dense DFA with every byte through the general thread loop.
    General,
    /// The lazy DFA, its cache borrowed from the rule set's pool.
    Lazy,
    /// The lazy DFA with a brand new cache for every call, as if each feed
    /// ran on another thread: the stream works its DFA states out again
    /// each time.
    Migrating,
    /// A lazy DFA cache so small that it is cleared all the time, which
    /// sends the stream to the NFA fallback.
    TinyCache,
    /// Literal rules on the regex engine with the others, not on the
    /// Aho-Corasick matcher.
    NoLiterals,
    /// The literal matcher on its contiguous NFA rather than its DFA (a
    /// DFA size limit of 0).
    LiteralNfa,
    /// The literal matcher on its NFA with a front table of a few rows (a
    /// size limit of `FRONT_LIMIT` bytes, below nearly every set's DFA).
    LiteralFront,
}

/// The literal DFA size limit of `Engine::LiteralFront`: a row of the
/// front takes 4 bytes per byte class and 4 more, so a few rows fit.
pub(crate) const FRONT_LIMIT: usize = 128;

pub(crate) const ENGINES: [Engine; 8] = [
    Engine::Fast,
    Engine::General,
    Engine::Lazy,
    Engine::Migrating,
    Engine::TinyCache,
    Engine::NoLiterals,
    Engine::LiteralNfa,
    Engine::LiteralFront,
];

/// The environment variable that turns the engine's fast paths off in
/// every configuration of [`ENGINES`] (any value), for a long run where no
/// fast path can cover for the general one's bug. The output properties
/// obey it; the minimal hold-back ones do not (see `check_holdback_on`).
const NO_FAST_PATHS_VAR: &str = "STREAM_REPLACE_TEST_NO_FAST_PATHS";

impl Engine {
    fn config(self) -> Config {
        let config = self.own_config();
        if std::env::var_os(NO_FAST_PATHS_VAR).is_some() {
            config.fast_paths(false)
        } else {
            config
        }
    }

    /// The configuration itself, whatever `NO_FAST_PATHS_VAR` says.
    fn own_config(self) -> Config {
        match self {
            Engine::Fast => Config::new().dfa(DfaKind::Dense),
            Engine::General => Config::new().dfa(DfaKind::Dense).fast_paths(false),
            Engine::Lazy => Config::new().dfa(DfaKind::Lazy),
            Engine::Migrating => Config::new().dfa(DfaKind::Lazy).scratch_per_call(true),
            Engine::TinyCache => Config::new().dfa(DfaKind::Lazy).cache_capacity(1),
            Engine::NoLiterals => Config::new().literal_matcher(false),
            Engine::LiteralNfa => Config::new().literal_dfa_size_limit(0),
            Engine::LiteralFront => Config::new().literal_dfa_size_limit(FRONT_LIMIT),
        }
    }
}

pub(crate) fn compile_for(rules: &[Rule], engine: Engine) -> Rules {
    build_on(rules, engine, engine.config())
}

/// Builds `rules` with `config`, the configuration of `engine`. A forced
/// dense DFA that would outgrow `Config::dense_size_limit` is refused with
/// `TooBig`, as documented: such a rule set (a few Unicode `\w` repeats can
/// make one) is checked as `DfaKind::Auto` builds it, on the lazy DFA,
/// rather than failing the property or building tens of MiB per case.
fn build_on(rules: &[Rule], engine: Engine, config: Config) -> Rules {
    match oracle::build_with(rules, config.clone()) {
        Err(e) if *e.kind() == ErrorKind::TooBig && config.get_dfa() == DfaKind::Dense => {
            oracle::build_with(rules, config.dfa(DfaKind::Auto))
        }
        built => built,
    }
    .unwrap_or_else(|e| panic!("{rules:?} do not build ({engine:?}): {e}"))
}

/// `cases` cases, unless `PROPTEST_CASES` asks for another number (for a
/// longer search: `PROPTEST_CASES=5000 cargo test --release --test suite`).
pub(crate) fn config(cases: u32) -> ProptestConfig {
    config_saving_to(
        cases,
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/suite/proptest-regressions/differential.txt"
        ),
    )
}

/// [`config`], with the failures saved to `regressions` (a path).
pub(crate) fn config_saving_to(cases: u32, regressions: &'static str) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(cases);
    ProptestConfig {
        cases,
        max_shrink_iters: 2000,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(regressions))),
        ..ProptestConfig::default()
    }
}

fn hir(rule: &Rule) -> regex_syntax::hir::Hir {
    regex_syntax::parse(&rule.pat.source()).expect("the tricky patterns parse")
}

/// Whether the rule can match the empty string somewhere.
fn can_match_empty(rule: &Rule) -> bool {
    hir(rule).properties().minimum_len() == Some(0)
}

/// Streams `hay` cut at `cuts` through `api` and compares with `want`.
pub(crate) fn check_stream(
    rules: &Rules,
    api: Api,
    hay: &[u8],
    cuts: &[usize],
    want: &[u8],
) -> Result<(), TestCaseError> {
    let chunks = chunks_at(hay, cuts);
    let got = run::stream(&mut rules.replacer(), api, &chunks).map_err(TestCaseError::fail)?;
    prop_assert!(
        got == want,
        "{api:?} ({:?}) split {:?}: got {}, the oracle gives {}",
        rules.config(),
        chunks.iter().map(|c| show(c)).collect::<Vec<_>>(),
        show(&got),
        show(want)
    );
    Ok(())
}

/// `replace_all` and `&str` streams, cut at `cuts` and one character at a
/// time, equal the oracle.
pub(crate) fn check_str(rules: &[Rule], text: &str, cuts: &[f64]) -> Result<(), TestCaseError> {
    let points = run::char_boundaries(text);
    check_apis(
        rules,
        text.as_bytes(),
        &points,
        cuts,
        [Api::Str, Api::StrInto],
    )
}

/// `replace_all` (on valid UTF-8) or `replace_all_bytes`, then the stream
/// methods `apis` cut at `cuts` (scaled to `points`) and at every point,
/// equal the oracle.
fn check_apis(
    rules: &[Rule],
    hay: &[u8],
    points: &[usize],
    cuts: &[f64],
    [api, api_into]: [Api; 2],
) -> Result<(), TestCaseError> {
    let compiled = compile(rules);
    let want = Oracle::new(rules).replace(hay);
    let whole = if api == Api::Str {
        let text = std::str::from_utf8(hay).expect("a &str stream's input is UTF-8");
        compiled.replace_all(text).into_bytes()
    } else {
        compiled.replace_all_bytes(hay)
    };
    prop_assert!(
        whole == want,
        "replace_all gives {}, the oracle {}",
        show(&whole),
        show(&want)
    );
    for engine in ENGINES {
        let compiled = compile_for(rules, engine);
        check_stream(&compiled, api, hay, &scale(cuts, points), &want)?;
        check_stream(&compiled, api_into, hay, run::interior(points), &want)?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(256))]

    /// `replace_all` and `&str` streams equal the oracle.
    #[test]
    fn str_streams_match_oracle(rules in rules_strategy(), text in text_strategy(), cuts in cuts_strategy()) {
        check_str(&rules, &text, &cuts)?;
    }

    /// Byte streams of valid UTF-8, cut anywhere (inside characters too),
    /// equal the oracle.
    #[test]
    fn byte_streams_cut_inside_characters_match_oracle(rules in rules_strategy(), text in text_strategy(), cuts in cuts_strategy()) {
        check_bytes(&rules, text.as_bytes(), &cuts)?;
    }

    /// Invalid UTF-8, with rules that cannot match the empty string (see
    /// `byte_streams_match_oracle` for the rest).
    #[test]
    fn byte_streams_with_invalid_utf8_match_oracle(
        rules in rules_strategy().prop_filter("no rule matches empty", |r| !r.iter().any(can_match_empty)),
        hay in bytes_strategy(),
        cuts in cuts_strategy(),
    ) {
        check_bytes(&rules, &hay, &cuts)?;
    }
}

/// `replace_all_bytes` and byte streams, cut anywhere and fed invalid
/// UTF-8, equal the oracle.
pub(crate) fn check_bytes(rules: &[Rule], hay: &[u8], cuts: &[f64]) -> Result<(), TestCaseError> {
    let points: Vec<usize> = (0..=hay.len()).collect();
    check_apis(rules, hay, &points, cuts, [Api::Bytes, Api::BytesInto])
}

proptest! {
    #![proptest_config(config(256))]

    /// Every rule set on invalid UTF-8.
    #[test]
    fn byte_streams_match_oracle(rules in rules_strategy(), hay in bytes_strategy(), cuts in cuts_strategy()) {
        check_bytes(&rules, &hay, &cuts)?;
    }
}

/// Patterns whose threads live long over [`LONG_ATOMS`], so that the
/// engine steps its earliest thread alone and replays the others when that
/// thread dies without a match (at a newline, an invalid byte or the end).
const LONG_REGEXES: &[&str] = &[
    r"<think>[\s\S]*?</think>",
    r"<think>[\s\S]*</think>",
    r"[^\n]*END",
    r"\w+",
    r"\d+",
    r"(?s)x.*?y",
    r"[a-z ]+@",
    r"<[^\n]*END",
    r"[a-z\n ]+@",
];

/// Pieces of long texts: [`ATOMS`] and runs of 60 to 100 bytes.
const LONG_ATOMS: &[&str] = &[
    "the quick brown fox mails ann@ex.com and calls 123-45-6789 about foo and hello there",
    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "1234567890123456789012345678901234567890123456789012345678901234567890",
    "σσσσσσσσσσσσσσσσσσσσσσσσσσσσσσσσσσσσ 中中中中中中中中中中中中中中中中中中中中",
    "a b c d e f g h i j k l m n o p q r s t u v w x y z a b c d e f g h i j",
];

fn long_rules_strategy() -> impl Strategy<Value = Vec<Rule>> {
    let pat = prop_oneof![
        3 => proptest::sample::select(LONG_REGEXES).prop_map(|p| Pat::Regex(p.to_string())),
        2 => proptest::sample::select(REGEXES).prop_map(|p| Pat::Regex(p.to_string())),
        1 => proptest::sample::select(LITERALS).prop_map(|p| Pat::Literal(p.to_string())),
    ];
    numbered(pat)
}

fn long_atom() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        3 => proptest::sample::select(ATOMS),
        1 => proptest::sample::select(LONG_ATOMS),
        1 => Just("END"),
    ]
}

fn long_text_strategy() -> impl Strategy<Value = String> {
    proptest::collection::vec(long_atom(), 0..14).prop_map(|a| a.concat())
}

fn long_bytes_strategy() -> impl Strategy<Value = Vec<u8>> {
    let atom = prop_oneof![
        6 => long_atom().prop_map(|a| a.as_bytes().to_vec()),
        1 => proptest::sample::select(BAD_ATOMS).prop_map(|a| a.to_vec()),
    ];
    proptest::collection::vec(atom, 0..14).prop_map(|a| a.concat())
}

proptest! {
    #![proptest_config(config(128))]

    /// Long texts, where threads outlive the engine's threshold for
    /// stepping the earliest one alone: `&str` streams, cut at random and
    /// one character at a time, equal the oracle.
    #[test]
    fn long_lived_threads_match_oracle(rules in long_rules_strategy(), text in long_text_strategy(), cuts in cuts_strategy()) {
        check_str(&rules, &text, &cuts)?;
    }

    /// The same with byte streams that hold invalid UTF-8 (where a
    /// `[\s\S]` thread dies mid-stream).
    #[test]
    fn long_lived_threads_on_bytes_match_oracle(rules in long_rules_strategy(), hay in long_bytes_strategy(), cuts in cuts_strategy()) {
        check_bytes(&rules, &hay, &cuts)?;
    }

    /// Decided before released and minimal hold-back after a long prefix.
    #[test]
    fn long_holdback_is_decided_and_minimal(rules in long_rules_strategy(), prefix in long_text_strategy()) {
        check_holdback(&rules, &prefix)?;
    }
}

/// Cut points that make token-sized pieces of `hay`: sizes taken in turn
/// from `sizes` (1 to 16 bytes, as a model's tokens and the thread
/// matcher's token path take them), each moved forward to the next of
/// `points`.
fn token_cuts(points: &[usize], sizes: &[usize]) -> Vec<usize> {
    let end = *points.last().expect("0 is a point");
    let mut cuts = Vec::new();
    let mut at = 0;
    for &size in sizes.iter().cycle() {
        let want = at + size;
        if want >= end {
            break;
        }
        at = *points
            .iter()
            .find(|&&p| p >= want)
            .expect("the end is a point");
        if at == end {
            break;
        }
        cuts.push(at);
    }
    cuts
}

/// Streams fed token-sized pieces, in every engine configuration, equal
/// the oracle: `&str` streams cut at character boundaries, byte streams
/// anywhere.
fn check_tokens(
    rules: &[Rule],
    hay: &[u8],
    sizes: &[usize],
    str_api: bool,
) -> Result<(), TestCaseError> {
    let want = Oracle::new(rules).replace(hay);
    let (points, apis) = if str_api {
        let text = std::str::from_utf8(hay).expect("a &str stream's input is UTF-8");
        (run::char_boundaries(text), [Api::Str, Api::StrInto])
    } else {
        ((0..=hay.len()).collect(), [Api::Bytes, Api::BytesInto])
    };
    let cuts = token_cuts(&points, sizes);
    for engine in ENGINES {
        let compiled = compile_for(rules, engine);
        for api in apis {
            check_stream(&compiled, api, hay, &cuts, &want)?;
        }
    }
    Ok(())
}

fn token_sizes_strategy() -> impl Strategy<Value = Vec<usize>> {
    proptest::collection::vec(1usize..=16, 1..8)
}

proptest! {
    #![proptest_config(config(128))]

    /// Long texts fed in token-sized pieces, where a thread lives across
    /// many feeds (and is stepped alone inside a long block): `&str`
    /// streams equal the oracle.
    #[test]
    fn token_pieces_match_oracle(rules in long_rules_strategy(), text in long_text_strategy(), sizes in token_sizes_strategy()) {
        check_tokens(&rules, text.as_bytes(), &sizes, true)?;
    }

    /// The same with byte streams that hold invalid UTF-8, cut anywhere.
    #[test]
    fn token_pieces_on_bytes_match_oracle(rules in long_rules_strategy(), hay in long_bytes_strategy(), sizes in token_sizes_strategy()) {
        check_tokens(&rules, &hay, &sizes, false)?;
    }
}

/// Patterns with a bounded part before a required literal (a gate): at
/// the end of a feed that leaves nothing alive before their last window,
/// the stream may hold that window idle instead of stepping it.
const GATED_REGEXES: &[&str] = &[
    r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]+\.[A-Za-z]{2,}",
    r"[a-z]{1,6}@[a-z]+",
    r"\b[a-z0-9]{2,8}@\w",
    r"[a-zé]{1,5}\.?@x",
    r"(?:ab|b){1,3}@[a-c]",
    r"x{0,3}[a-c]{1,3}@",
    r"[^@\s]{1,10}@@",
    r"(?m)^[a-c]{1,2}@",
    r"\d{3}-\d{2}-\d{4}",
    r"[a-z]{0,20}x",
];

/// Pieces of texts for [`GATED_REGEXES`]: base64, prose, the literals and
/// what ends a head.
const GATED_ATOMS: &[&str] = &[
    "QUJDRGVmZ2hp",
    "aGVsbG8gd29y",
    "+/",
    "/",
    "=",
    "\n",
    " ",
    "@",
    "@@",
    ".",
    "ab",
    "b",
    "x",
    "abc",
    "é",
    "中",
    "123",
    "-",
    "45",
    "6789",
    "ann",
    "ex.com",
    "xyz",
];

fn gated_rules_strategy() -> impl Strategy<Value = Vec<Rule>> {
    numbered(proptest::sample::select(GATED_REGEXES).prop_map(|p| Pat::Regex(p.to_string())))
}

fn gated_text_strategy() -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(GATED_ATOMS), 0..40).prop_map(|a| a.concat())
}

fn gated_bytes_strategy() -> impl Strategy<Value = Vec<u8>> {
    let atom = prop_oneof![
        8 => proptest::sample::select(GATED_ATOMS).prop_map(|a| a.as_bytes().to_vec()),
        1 => proptest::sample::select(BAD_ATOMS).prop_map(|a| a.to_vec()),
    ];
    proptest::collection::vec(atom, 0..40).prop_map(|a| a.concat())
}

/// Continuations that complete the heads of [`GATED_REGEXES`] (with
/// their suffixes: `"c@ex.com "`, `"@x "`, ...).
const GATED_CONTINUATIONS: &[&str] = &[
    "abc@ex.com ",
    "ab.@x ",
    "ab@@",
    "bab@ab ",
    "é@x ",
    "abcx",
    "123-45-6789 ",
];

proptest! {
    #![proptest_config(config(128))]

    /// Rules with a gate over base64 and prose, where a feed ends with the
    /// gate's last window held: `&str` streams cut at random.
    #[test]
    fn gated_rules_match_oracle(rules in gated_rules_strategy(), text in gated_text_strategy(), cuts in cuts_strategy()) {
        check_str(&rules, &text, &cuts)?;
    }

    /// The same on byte streams with invalid UTF-8.
    #[test]
    fn gated_rules_on_bytes_match_oracle(rules in gated_rules_strategy(), hay in gated_bytes_strategy(), cuts in cuts_strategy()) {
        check_bytes(&rules, &hay, &cuts)?;
    }

    /// Decided before released and minimal hold-back where the last
    /// window is held idle.
    #[test]
    fn gated_holdback_is_decided_and_minimal(rules in gated_rules_strategy(), prefix in gated_text_strategy()) {
        check_holdback_with(&rules, &prefix, GATED_CONTINUATIONS)?;
    }
}

/// `\w+` then `""` on `"é\x80"`: `meta::Regex`'s own `find_iter` drops the
/// match `é` because it ends before a byte that continues no character
/// (`regex-automata` leaves invalid UTF-8 unspecified there). We keep it, in
/// streams and in `replace_all_bytes` alike, so no match is dropped.
#[test]
fn invalid_utf8_after_match_with_empty_rule() {
    let rules = [
        Rule {
            pat: Pat::Regex(r"\w+".into()),
            repl: Repl::Text("<0>".into()),
        },
        Rule {
            pat: Pat::Regex(String::new()),
            repl: Repl::Text("<1>".into()),
        },
    ];
    let compiled = compile(&rules);
    let hay = b"\xC3\xA9\x80";
    let whole = compiled.replace_all_bytes(hay);
    let mut r = compiled.replacer();
    let mut streamed = r.feed_bytes(hay).unwrap();
    streamed.extend(r.flush_bytes().unwrap());
    assert_eq!(show(&streamed), show(&whole));
    assert_eq!(show(&whole), show(b"<0>\x80<1>"));
}

/// The continuations tried after a prefix; `extra` adds more examples.
fn continuations(extra: &[&str]) -> Vec<String> {
    let mut c = vec![String::new()];
    for a in ATOMS {
        c.push(a.to_string());
        c.push(format!("{a} "));
    }
    for e in EXAMPLES.iter().chain(extra) {
        for (i, _) in e.char_indices().skip(1) {
            c.push(e[i..].to_string());
        }
        c.push(e.to_string());
    }
    c.sort();
    c.dedup();
    c
}

/// Feeds `prefix` as one chunk and checks the hold-back against the
/// oracle: what was emitted is a prefix of the output for every
/// continuation tried (decided before released), and, when something is
/// held, some continuation makes a match start exactly where the held
/// region starts (minimal hold-back).
fn check_holdback(rules: &[Rule], prefix: &str) -> Result<(), TestCaseError> {
    check_holdback_with(rules, prefix, &[])
}

/// [`check_holdback`], trying the suffixes of `extra` as continuations too.
pub(crate) fn check_holdback_with(
    rules: &[Rule],
    prefix: &str,
    extra: &[&str],
) -> Result<(), TestCaseError> {
    let continuations = continuations(extra);
    // The NFA fallback (forced by a tiny cache) must hold no more than the
    // DFA path.
    for engine in [
        Engine::Fast,
        Engine::Migrating,
        Engine::TinyCache,
        Engine::NoLiterals,
        Engine::LiteralNfa,
        Engine::LiteralFront,
    ] {
        check_holdback_on(rules, prefix, &continuations, engine)?;
    }
    Ok(())
}

fn check_holdback_on(
    rules: &[Rule],
    prefix: &str,
    continuations: &[String],
    engine: Engine,
) -> Result<(), TestCaseError> {
    // Minimal hold-back is the fast paths' promise (with them off, a
    // match may be released a byte later): `NO_FAST_PATHS_VAR` does not
    // apply here.
    let compiled = build_on(rules, engine, engine.own_config());
    let oracle = Oracle::new(rules);
    let mut r = compiled.replacer();
    let emitted = r
        .feed(prefix)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let held = r.held();
    prop_assert!(held <= prefix.len());
    let h = prefix.len() - held;
    let starts_at_h = |text: &str| {
        continuations.iter().any(|c| {
            let whole = format!("{text}{c}");
            oracle.matches(whole.as_bytes()).iter().any(|m| m.1 == h)
        })
    };
    for c in continuations {
        let whole = format!("{prefix}{c}");
        let out = oracle.replace(whole.as_bytes());
        prop_assert!(
            out.starts_with(emitted.as_bytes()),
            "after feed({prefix:?}) the stream emitted {emitted:?}, but with the continuation \
             {c:?} the output is {}",
            show(&out)
        );
    }
    let witness = held == 0 || starts_at_h(prefix);
    prop_assert!(
        witness,
        "after feed({prefix:?}) the stream ({engine:?}) holds {:?}, but no continuation tried \
         makes a match start there",
        &prefix[h..]
    );
    // And that match is not decided yet: some continuations give another
    // match there, or none (a match every continuation agrees on is one the
    // stream can release, whichever matcher found it).
    if held > 0 {
        let at_h = |c: &str| {
            let whole = format!("{prefix}{c}");
            let m = oracle.matches(whole.as_bytes());
            m.into_iter().find(|m| m.1 == h).map(|m| (m.0, m.2))
        };
        let first = at_h(&continuations[0]);
        let open = continuations[1..].iter().any(|c| at_h(c) != first);
        prop_assert!(
            open,
            "after feed({prefix:?}) the stream ({engine:?}) holds {:?}, but every continuation \
             tried gives the match {first:?} there: it is decided",
            &prefix[h..]
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(128))]

    /// Decided before released and minimal hold-back, strictly.
    #[test]
    fn holdback_is_decided_and_minimal(rules in rules_strategy(), prefix in text_strategy()) {
        check_holdback(&rules, &prefix)?;
    }
}

/// A `\b` next to a word character (which the DFA steps as a one-byte
/// half boundary) next to non-ASCII text: word characters (`é`, the
/// Arabic-Indic digits, which `\d` matches), others (`。`), and invalid
/// UTF-8, on every side of a match and inside it, through every split.
#[test]
fn word_boundaries_next_to_non_ascii_text() {
    let rule_sets: &[&[&str]] = &[
        &[r"\b\d{3}\b"],
        &[r"\b\d{3}-\d{2}\b", r"\d+"],
        &[r"(?:\d|\d\d)\b", r"\w"],
        &[r"(?:\+1 ?)?\b\d{2}", r"\bsk-\w{2}"],
        &[r"\b\w+\b"],
    ];
    let texts = [
        "123 é123 123é ١٢٣ x١٢٣ ١٢٣x 。123。 a123 123-45é 123-45。",
        "é12 12é 1١ ١1 +1 ١٢ +112 sk-éé sk-ab。 sk-abé",
        "١٢٣-٤٥ 12-34é55 。12。 é。12",
    ];
    for pats in rule_sets {
        let rules = numbered_rules(&pats.iter().map(|p| re(p)).collect::<Vec<_>>());
        for text in texts {
            check_str(&rules, text, &[0.25, 0.5, 0.75]).unwrap();
            check_bytes(&rules, text.as_bytes(), &[0.2, 0.4, 0.6, 0.8]).unwrap();
            let mut bad = text.as_bytes().to_vec();
            bad.splice(3..3, *b"\xC3");
            bad.extend_from_slice(b"12\xE4\xB8");
            check_bytes(&rules, &bad, &[0.1, 0.5, 0.9]).unwrap();
        }
    }
}

/// Inputs that once tripped an engine (among them the case where merging
/// threads in one state loses a match unless the best match is kept for the
/// whole stream, not per thread), replayed by name through every split.
#[test]
fn regressions() {
    let cases: &[(&[&str], &str)] = &[
        (&[r"y*(?:x|ab)cd|a"], "yabcz"),
        (&[r"y*(?:x|ab)cd", "a"], "yabcz yyabcd"),
        (&["", r"\b"], "é a"),
    ];
    // The engine steps a thread that has lived 64 bytes alone and replays
    // the others if it dies without a match: mid-stream, at the end, and
    // with a match of its own.
    let long = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    let words = "hello world ".repeat(8);
    let long_cases = [
        (vec![r"<[^\n]*END", r"[a-z\n ]+@"], format!("<{long}\nb@ c")),
        (vec![r"<[^\n]*END", r"[a-z\n ]+@"], format!("<{long}END b@")),
        // Cut after `x`, the earliest thread can no longer match, which
        // only the end-of-feed check sees.
        (
            vec![r"<a{72}x(?-u:\b\w)", r"[a-z\n ]+@"],
            format!("<{long}x\nb@"),
        ),
        (
            vec![r"<think>[\s\S]*?</think>", r"[\w.+-]+@[\w-]+\.\w+"],
            format!("<think>{words}ann@ex.com"),
        ),
        (
            vec![r"<think>[\s\S]*?</think>", r"[\w.+-]+@[\w-]+\.\w+"],
            format!("<think>{words}ann@ex.com</think> bob@ex.com"),
        ),
    ];
    // More one-thread configurations (a counter of 100 states) than the
    // engine memoises: it starts its memo over and stays exact.
    let bs = "b".repeat(100);
    let long_cases: Vec<(Vec<&str>, String)> = long_cases
        .into_iter()
        .chain([
            (
                vec![r"x[a-z]{100}y", r"\d+"],
                format!("x{bs}y 12 x{bs}z 3 x{bs}y"),
            ),
            (vec![r"x[a-z]{100}y", r"[a-z]{3}"], format!("x{bs}y x{bs}")),
        ])
        .collect();
    let long_cases: Vec<(Vec<&str>, &str)> = long_cases
        .iter()
        .map(|(p, t)| (p.clone(), t.as_str()))
        .collect();
    let cases = cases
        .iter()
        .map(|(p, t)| (p.to_vec(), *t))
        .chain(long_cases);
    for (pats, text) in cases {
        let rules = numbered_rules(&pats.iter().map(|p| re(p)).collect::<Vec<_>>());
        let compiled = compile(&rules);
        let want = Oracle::new(&rules).replace(text.as_bytes());
        let points: Vec<usize> = (0..=text.len()).collect();
        for &c in &points {
            check_stream(&compiled, Api::Bytes, text.as_bytes(), &[c], &want).unwrap();
        }
        check_stream(
            &compiled,
            Api::Bytes,
            text.as_bytes(),
            run::interior(&points),
            &want,
        )
        .unwrap();
    }
}

/// Fuzz regression (`stream_vs_whole`): `(?m)$` (which can match empty) and
/// `é` on `é`, a stray continuation byte, then text. `meta::Regex`'s own
/// `find_iter` drops the match `é`; streams and `replace_all_bytes` keep it,
/// as documented, and agree with the oracle of this suite.
#[test]
fn fuzz_match_before_stray_continuation_byte_is_kept() {
    let rules = [
        Rule {
            pat: Pat::Regex("(?m)$".into()),
            repl: Repl::Text("<0>".into()),
        },
        Rule {
            pat: Pat::Regex("é".into()),
            repl: Repl::Text("<1>".into()),
        },
    ];
    let compiled = compile(&rules);
    let hay = b"\xC3\xA9\x80ba\0\0";
    let want = Oracle::new(&rules).replace(hay);
    assert_eq!(show(&want), show(b"<1>\x80ba\0\0<0>"));
    assert_eq!(show(&compiled.replace_all_bytes(hay)), show(&want));
    for cut in 0..=hay.len() {
        let mut r = compiled.replacer();
        let mut got = r.feed_bytes(&hay[..cut]).unwrap();
        got.extend(r.feed_bytes(&hay[cut..]).unwrap());
        got.extend(r.flush_bytes().unwrap());
        assert_eq!(show(&got), show(&want), "cut at {cut}");
    }
}

/// Words whose pieces become overlapping rules: one rule's match inside
/// another's, a later-listed rule starting earlier, case folds (`ß`, `ﬀ`,
/// `Σ`/`ς`), non-ASCII pieces.
const WORDS: &[&str] = &[
    "password",
    "hello",
    "straße",
    "123-45-6789",
    "abcde",
    "λόγος",
    "ﬀhello",
    "ΣΑΣ",
];

/// A piece of `word`: a substring at character boundaries.
fn piece(word: &'static str) -> impl Strategy<Value = String> {
    let points = run::char_boundaries(word);
    let n = points.len();
    (0..n - 1, 1..n).prop_map(move |(a, b)| {
        let (a, b) = if a < b {
            (a, b)
        } else {
            (b, (a + 1).min(n - 1))
        };
        word[points[a]..points[b]].to_string()
    })
}

/// A rule over pieces of `word`: a literal, a case-insensitive literal, an
/// alternation of two pieces, or a piece followed by a repetition.
fn overlap_rule(word: &'static str) -> impl Strategy<Value = Pat> {
    prop_oneof![
        4 => piece(word).prop_map(Pat::Literal),
        2 => piece(word).prop_map(|p| Pat::Regex(format!("(?i){}", regex_syntax::escape(&p)))),
        2 => (piece(word), piece(word)).prop_map(|(a, b)| Pat::Regex(format!(
            "{}|{}",
            regex_syntax::escape(&a),
            regex_syntax::escape(&b)
        ))),
        1 => piece(word).prop_map(|p| Pat::Regex(format!("{}\\w*", regex_syntax::escape(&p)))),
        1 => proptest::sample::select(REGEXES).prop_map(|p| Pat::Regex(p.to_string())),
    ]
}

/// Two to four rules over pieces of one word (rule `i` replaced by `<i>`).
fn overlap_rules_strategy() -> impl Strategy<Value = (&'static str, Vec<Rule>)> {
    proptest::sample::select(WORDS).prop_flat_map(|word| {
        let rules = proptest::collection::vec(overlap_rule(word), 2..=4).prop_map(|pats| {
            pats.into_iter()
                .enumerate()
                .map(|(i, pat)| Rule {
                    pat,
                    repl: Repl::Text(format!("<{i}>")),
                })
                .collect::<Vec<_>>()
        });
        (Just(word), rules)
    })
}

/// Text around `word`: the word, its pieces, its case variants and atoms.
fn overlap_text_strategy(word: &'static str) -> impl Strategy<Value = String> {
    let atom = prop_oneof![
        3 => Just(word.to_string()),
        3 => piece(word),
        1 => Just(word.to_uppercase()),
        3 => proptest::sample::select(ATOMS).prop_map(str::to_string),
    ];
    proptest::collection::vec(atom, 0..8).prop_map(|a| a.concat())
}

proptest! {
    #![proptest_config(config(256))]

    /// Rules that overlap in every way (one match inside another's, a
    /// later-listed rule starting earlier, case folds) over texts full of
    /// their pieces: `&str` streams equal the oracle.
    #[test]
    fn overlapping_rules_match_oracle(
        (rules, text, cuts) in overlap_rules_strategy().prop_flat_map(|(word, rules)| {
            (Just(rules), overlap_text_strategy(word), cuts_strategy())
        })
    ) {
        check_str(&rules, &text, &cuts)?;
    }

    /// The same as byte streams cut anywhere, inside characters too.
    #[test]
    fn overlapping_rules_on_bytes_match_oracle(
        (rules, text, cuts) in overlap_rules_strategy().prop_flat_map(|(word, rules)| {
            (Just(rules), overlap_text_strategy(word), cuts_strategy())
        })
    ) {
        check_bytes(&rules, text.as_bytes(), &cuts)?;
    }

    /// Decided before released and minimal hold-back with overlapping rules.
    #[test]
    fn overlapping_holdback_is_decided_and_minimal(
        (word, rules, prefix) in overlap_rules_strategy().prop_flat_map(|(word, rules)| {
            (Just(word), Just(rules), overlap_text_strategy(word))
        })
    ) {
        let upper = word.to_uppercase();
        check_holdback_with(&rules, &prefix, &[word, &upper])?;
    }
}

/// Streams `text` cut at `cuts` (byte offsets) through every engine and
/// every API that fits, and checks the output against the oracle and the
/// output the case states.
fn check_named(rules: &[Rule], text: &str, cuts: &[usize], expected: &str) {
    let want = Oracle::new(rules).replace(text.as_bytes());
    assert_eq!(show(&want), show(expected.as_bytes()), "the oracle");
    let on_chars = cuts.iter().all(|&c| text.is_char_boundary(c));
    for engine in ENGINES {
        let compiled = compile_for(rules, engine);
        assert_eq!(
            compiled.replace_all(text),
            expected,
            "replace_all ({engine:?})"
        );
        let chunks = chunks_at(text.as_bytes(), cuts);
        for api in Api::ALL {
            if api.is_str() && !on_chars {
                continue;
            }
            let got = run::stream(&mut compiled.replacer(), api, &chunks).unwrap();
            assert_eq!(
                show(&got),
                show(&want),
                "{api:?} ({engine:?}) cuts {cuts:?}"
            );
        }
        for cut in 0..=text.len() {
            let chunks = chunks_at(text.as_bytes(), &[cut]);
            let got = run::stream(&mut compiled.replacer(), Api::Bytes, &chunks).unwrap();
            assert_eq!(show(&got), show(&want), "({engine:?}) cut at {cut}");
        }
    }
}

fn numbered_rules(pats: &[Pat]) -> Vec<Rule> {
    pats.iter()
        .enumerate()
        .map(|(i, pat)| Rule {
            pat: pat.clone(),
            repl: Repl::Text(format!("<{i}>")),
        })
        .collect()
}

fn lit(s: &str) -> Pat {
    Pat::Literal(s.to_string())
}

fn re(s: &str) -> Pat {
    Pat::Regex(s.to_string())
}

/// The prefilter found a short needle complete near the end of a chunk and
/// the stream jumped to it, past the start of a longer needle that the
/// chunk end had cut off: `ell` was decided inside `hello`.
#[test]
fn priority_literal_inside_earlier_later_listed_literal() {
    let rules = numbered_rules(&[lit("ell"), lit("hello")]);
    check_named(&rules, "ﬀhello</think>", &[7, 16], "ﬀ<1></think>");
}

/// The same hole with a case-insensitive rule whose match starts earlier
/// than the alternation listed after it.
#[test]
fn priority_case_folded_literal_before_alternation() {
    let rules = numbered_rules(&[re("(?i)straße"), re("ab|a")]);
    check_named(
        &rules,
        " world</think>straße12",
        &[0, 5, 20],
        " world</think><0>12",
    );
}

/// The same hole with three rules, the third starting before the first.
#[test]
fn priority_later_rule_starting_earlier_among_three() {
    let rules = numbered_rules(&[lit("b"), re(r"\x{1F600}"), lit("abc")]);
    let text = "λόγος345\u{301}-abc\u{301}٣";
    let expected = "λόγος345\u{301}-<2>\u{301}٣";
    check_named(&rules, text, &[4, 6, 8, 18], expected);
}

/// `password` cut after `passw`: the prefilter found `ass` and skipped the
/// `p`, replacing `ass` instead of `password`.
#[test]
fn priority_password_cut_before_its_end() {
    let rules = numbered_rules(&[lit("password"), lit("ass")]);
    check_named(&rules, "my password is", &[8], "my <0> is");
}

/// An SSN literal cut after `67` leaked whole: the prefilter jumped to the
/// `-` of `-+\B`, past the SSN's start.
#[test]
fn priority_ssn_literal_not_leaked_past_a_later_needle() {
    let rules = numbered_rules(&[lit("123-45-6789"), re(r"-+\B")]);
    check_named(&rules, " <123-45-6789", &[11], " <<0>");
}

/// Alternations in one regex whose short branch lies inside the long one.
#[test]
fn priority_alternation_branches_inside_each_other() {
    for (pat, text) in [
        ("abc|b", "xxabc"),
        ("abcd|bc", "xxabcd"),
        ("c|bcd|abcde", "xxabcde"),
    ] {
        let rules = numbered_rules(&[re(pat)]);
        let want = Oracle::new(&rules).replace(text.as_bytes());
        let want = String::from_utf8(want).unwrap();
        for cut in 0..=text.len() {
            check_named(&rules, text, &[cut], &want);
        }
    }
    let rules = numbered_rules(&[lit("bc"), lit("abcd")]);
    check_named(&rules, "xxabcd", &[4], "xx<1>");
}

// ---- literal rules on their own matcher, mixed with regexes ----

/// Literals that overlap each other in every way: prefixes (`abc` of
/// `abcd`), suffixes and infixes (`bc`, `cd`, `b`), a later literal
/// starting earlier (`abcd` after `bc`), multi-byte characters and
/// characters cut by other literals.
const OVERLAPPING_LITERALS: &[&str] = &[
    "abcd",
    "bc",
    "b",
    "abc",
    "cd",
    "hello",
    "hell",
    "ell",
    "lo",
    "敏感词",
    "敏感",
    "感",
    "😀",
    "😀😀",
    "a.b",
    "foo",
    "oo",
    "<think>",
    "think",
    "σ",
    "é",
    "password",
    "ass",
    "123-45-6789",
];

/// Continuations for the hold-back checks of literal sets: the literals,
/// and what completes the regexes mixed with them.
const LITERAL_CONTINUATIONS: &[&str] = &[
    "abcd",
    "bc",
    "b",
    "abc",
    "cd",
    "hello",
    "hell",
    "ell",
    "lo",
    "敏感词",
    "敏感",
    "感",
    "😀",
    "😀😀",
    "a.b",
    "foo",
    "oo",
    "<think>",
    "think",
    "σ",
    "é",
    "password",
    "ass",
    "123-45-6789",
    "kiss",
    "abcde",
    "hellllo",
];

/// Regexes that overlap the literals: literals written as regexes (some
/// `(?i)`, which the literal matcher takes only when exact), alternations
/// covering a literal, matches that contain one, and empty matches.
const LITERAL_REGEXES: &[&str] = &[
    "(?i)hello",
    "(?i)abc",
    "(?i)foo",
    "(?i)kiss",
    "(?i)ss",
    "abc",
    "a|ab",
    "abc|b",
    "abcd|bc",
    "c|bcd|abcde",
    r"\w+",
    "b+",
    "[a-c]+d",
    "hel+o",
    r"<think>[\s\S]*?</think>",
    "(?i)σ",
    r"\bfoo\b",
    r"-+\B",
    r"\d+",
    "x*",
    "",
];

/// Pieces of texts for the literal rule sets.
const LITERAL_ATOMS: &[&str] = &[
    "a", "b", "c", "d", "ab", "bc", "cd", "abcd", "abcde", "hel", "lo", "hello", "HELLO", "Hel",
    "敏", "感", "词", "😀", "foo", "FOO", "oo", "<think>", "</think>", " ", "σ", "Σ", "é", "K",
    "k", "\u{212A}", "ſ", "s", "iss", "pass", "word", "123-", "45-", "6789", "-", "\n",
];

fn mixed_rules_strategy() -> impl Strategy<Value = Vec<Rule>> {
    let pat = prop_oneof![
        3 => proptest::sample::select(OVERLAPPING_LITERALS).prop_map(|p| Pat::Literal(p.to_string())),
        2 => proptest::sample::select(LITERAL_REGEXES).prop_map(|p| Pat::Regex(p.to_string())),
    ];
    proptest::collection::vec(pat, 1..=6).prop_map(|pats| {
        pats.into_iter()
            .enumerate()
            .map(|(i, pat)| Rule {
                pat,
                repl: Repl::Text(format!("<{i}>")),
            })
            .collect()
    })
}

fn literal_rules_strategy() -> impl Strategy<Value = Vec<Rule>> {
    let pat =
        proptest::sample::select(OVERLAPPING_LITERALS).prop_map(|p| Pat::Literal(p.to_string()));
    proptest::collection::vec(pat, 1..=8).prop_map(|pats| {
        pats.into_iter()
            .enumerate()
            .map(|(i, pat)| Rule {
                pat,
                repl: Repl::Text(format!("<{i}>")),
            })
            .collect()
    })
}

fn literal_text_strategy() -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(LITERAL_ATOMS), 0..24)
        .prop_map(|a| a.concat())
}

fn literal_bytes_strategy() -> impl Strategy<Value = Vec<u8>> {
    let atom = prop_oneof![
        6 => proptest::sample::select(LITERAL_ATOMS).prop_map(|a| a.as_bytes().to_vec()),
        1 => proptest::sample::select(BAD_ATOMS).prop_map(|a| a.to_vec()),
    ];
    proptest::collection::vec(atom, 0..24).prop_map(|a| a.concat())
}

proptest! {
    #![proptest_config(config(256))]

    /// Literals and regexes that overlap, `&str` streams: every engine,
    /// with the literal matcher on and off, equals the oracle.
    #[test]
    fn mixed_literal_rules_match_oracle(rules in mixed_rules_strategy(), text in literal_text_strategy(), cuts in cuts_strategy()) {
        check_str(&rules, &text, &cuts)?;
    }

    /// The same on byte streams cut anywhere, with invalid UTF-8.
    #[test]
    fn mixed_literal_rules_on_bytes_match_oracle(rules in mixed_rules_strategy(), hay in literal_bytes_strategy(), cuts in cuts_strategy()) {
        check_bytes(&rules, &hay, &cuts)?;
    }

    /// Sets of literals only (no regex engine at all).
    #[test]
    fn literal_sets_match_oracle(rules in literal_rules_strategy(), text in literal_text_strategy(), cuts in cuts_strategy()) {
        check_str(&rules, &text, &cuts)?;
    }

    /// Sets of literals only on byte streams cut anywhere, inside
    /// characters too, with invalid UTF-8.
    #[test]
    fn literal_sets_on_bytes_match_oracle(rules in literal_rules_strategy(), hay in literal_bytes_strategy(), cuts in cuts_strategy()) {
        check_bytes(&rules, &hay, &cuts)?;
    }

    /// Decided before released, and minimal hold-back, for literal sets:
    /// what is held is exactly what the automaton's depth says.
    #[test]
    fn literal_sets_holdback_is_decided_and_minimal(rules in literal_rules_strategy(), prefix in literal_text_strategy()) {
        check_holdback_with(&rules, &prefix, LITERAL_CONTINUATIONS)?;
    }

    /// The same for literals mixed with regexes.
    #[test]
    fn mixed_literal_rules_holdback_is_decided_and_minimal(rules in mixed_rules_strategy(), prefix in literal_text_strategy()) {
        check_holdback_with(&rules, &prefix, LITERAL_CONTINUATIONS)?;
    }
}

// ---- caseless literals without letters ----

/// Literals with and without ASCII letters, caseless and case-sensitive,
/// overlapping: a letterless literal matches the same text either way, so
/// it joins whichever automaton takes the lettered ones, and a mixed set
/// keeps the more numerous kind on it. `(?i)a1` before or after `(?i)1`
/// (and `1-`, `-1`) checks rule priority across the two matchers.
const CASE_MIX: &[&str] = &[
    "(?i)12", "(?i)1", "(?i)--", "(?i)-1", "(?i)a1", "(?i)ab", "(?i)b1", "(?i)1b", "l:12", "l:1-",
    "l:a1", "l:A", "l:b", "(?i)a", "1+",
];

/// Pieces of texts for `CASE_MIX`.
const CASE_MIX_ATOMS: &[&str] = &[
    "a", "A", "b", "B", "1", "2", "-", "12", " ", "é", "\u{212A}",
];

fn case_mix_rules_strategy() -> impl Strategy<Value = Vec<Rule>> {
    proptest::collection::vec(proptest::sample::select(CASE_MIX), 1..=7).prop_map(|pats| {
        pats.into_iter()
            .enumerate()
            .map(|(i, p)| Rule {
                pat: match p.strip_prefix("l:") {
                    Some(l) => Pat::Literal(l.to_string()),
                    None => Pat::Regex(p.to_string()),
                },
                repl: Repl::Text(format!("<{i}>")),
            })
            .collect()
    })
}

fn case_mix_text_strategy() -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(CASE_MIX_ATOMS), 0..24)
        .prop_map(|a| a.concat())
}

proptest! {
    #![proptest_config(config(256))]

    /// Caseless and case-sensitive literals with and without letters:
    /// `replace_all` equals the `meta` oracle, and every engine's streams,
    /// literal matcher on and off, over random splits, equal it.
    #[test]
    fn letterless_caseless_literals_match_oracle(rules in case_mix_rules_strategy(), text in case_mix_text_strategy(), cuts in cuts_strategy()) {
        check_str(&rules, &text, &cuts)?;
    }

    /// Decided before released, and minimal hold-back, on the same sets.
    #[test]
    fn letterless_caseless_literals_holdback_is_decided_and_minimal(rules in case_mix_rules_strategy(), prefix in case_mix_text_strategy()) {
        check_holdback_with(&rules, &prefix, CASE_MIX_ATOMS)?;
    }
}

// ---- a literal listed between regexes ----

/// Regexes around a literal: a later rule that runs on where an earlier
/// literal is decided (`\w+` after literal `a`), an earlier one that may
/// still win at the same start (`\d`, `(?i)k`), bounded repetitions, a
/// boundary-guarded class.
const AROUND_LITERAL_REGEXES: &[&str] = &[
    r"\d",
    r"\w+",
    "(?i)k",
    r"\b[ab]{2,40}\b",
    "a[ab]{0,63}a",
    "[sz]",
    r"[^\s]{1,12}",
    r"a\w*b",
    r"\d+",
];

/// Literals for `AROUND_LITERAL_REGEXES`.
const AROUND_LITERALS: &[&str] = &["a", "ab", "xy", "sab", "1", "k", "abba"];

/// Continuations for the hold-back checks of rules around a literal (with
/// their suffixes): the literals, and what completes or ends the regexes.
const AROUND_CONTINUATIONS: &[&str] = &[
    "a", "ab", "xy", "sab", "1", "k", "abba", "aab", "a1", "ba a", "abbbba ", "123 ",
];

/// Atoms of the texts for rules around a literal.
const AROUND_ATOMS: &[&str] = &[
    "a", "1", "b", "k", "K", "s", "z", "c", "ab", "ba", "a1", "xy", " ", "é", "😀",
];

/// A regex, a literal, a regex (or more, alternating): a literal listed
/// between rules of the thread matcher.
fn around_literal_rules_strategy() -> impl Strategy<Value = Vec<Rule>> {
    let regex =
        || proptest::sample::select(AROUND_LITERAL_REGEXES).prop_map(|p| Pat::Regex(p.into()));
    let literal = || proptest::sample::select(AROUND_LITERALS).prop_map(|p| Pat::Literal(p.into()));
    (regex(), literal(), regex(), proptest::option::of(literal())).prop_map(|(a, b, c, d)| {
        [Some(a), Some(b), Some(c), d]
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(i, pat)| Rule {
                pat,
                repl: Repl::Text(format!("<{i}>")),
            })
            .collect()
    })
}

fn around_literal_text_strategy() -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(AROUND_ATOMS), 0..16)
        .prop_map(|a| a.concat())
}

proptest! {
    #![proptest_config(config(64))]

    /// A literal between regexes: every engine equals the oracle.
    #[test]
    fn literal_between_regexes_matches_oracle(rules in around_literal_rules_strategy(), text in around_literal_text_strategy(), cuts in cuts_strategy()) {
        check_str(&rules, &text, &cuts)?;
    }

    /// And holds back no more than what is undecided, with the literal
    /// matcher on (`Engine::Fast`, `LiteralNfa`, `LiteralFront`) and off.
    #[test]
    fn literal_between_regexes_holdback_is_decided_and_minimal(rules in around_literal_rules_strategy(), prefix in around_literal_text_strategy()) {
        check_holdback_with(&rules, &prefix, AROUND_CONTINUATIONS)?;
    }
}
