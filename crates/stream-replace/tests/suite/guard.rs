//! The guard layer against an independent reference: validators that
//! reject, allowlists, block rules, triggers and `evaluate`.
//!
//! The reference is built on `regex_automata::meta::Regex::new_many` with
//! one anchored search per rule (`Anchored::Pattern`) at each position, as
//! the guard module's docs define it: at position `s`, the first rule in
//! order that matches anchored at `s` and is not rejected by its validator
//! is the match; an empty match at the end of the last match is none; with
//! no match, the search goes on at the next character.

use std::collections::HashSet;
use std::ops::Range;

use proptest::prelude::*;
use proptest::test_runner::Config as ProptestConfig;
use regex_automata::{Anchored, Input, PatternID, meta};
use stream_replace::{
    Action, Block, Config, DfaKind, EvaluateConfig, Pattern, Replacement, Replacer, Rule, Rules,
    StreamError, StreamErrorKind, Trigger, TriggerRecording,
};

use crate::differential::{ATOMS, LITERALS, REGEXES, config_saving_to};
use crate::run::{Rng, char_boundaries, chunks_at};

/// How a test rule checks its matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Check {
    None,
    /// Rejects every match.
    Never,
    /// Rejects a match when a hash of its text and the seed is 0 mod 3.
    Hash(u64),
}

impl Check {
    fn accepts(self, text: &str) -> bool {
        match self {
            Check::None => true,
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
        }
    }
}

/// A test rule: its regex (literals escaped), validator and action.
#[derive(Clone, Debug)]
struct GRule {
    source: String,
    literal: Option<String>,
    check: Check,
    block: bool,
}

impl GRule {
    fn regex(source: &str, check: Check, block: bool) -> GRule {
        GRule {
            source: source.to_string(),
            literal: None,
            check,
            block,
        }
    }

    fn literal(text: &str, check: Check) -> GRule {
        GRule {
            source: regex_syntax::escape(text),
            literal: Some(text.to_string()),
            check,
            block: false,
        }
    }
}

/// A rule set with its allowlist.
#[derive(Clone, Debug)]
struct Set {
    rules: Vec<GRule>,
    allow: Vec<String>,
}

fn build(set: &Set, config: Config) -> Rules {
    let mut b = Rules::builder();
    b.config(config);
    for (i, r) in set.rules.iter().enumerate() {
        let pattern = match &r.literal {
            Some(l) => Pattern::literal(l.as_str()),
            None => Pattern::regex(r.source.as_str()),
        };
        let mut rule =
            Rule::new(pattern, Replacement::literal(format!("<{i}>"))).id(format!("r{i}"));
        let check = r.check;
        if check != Check::None {
            rule = rule.validator(move |t| check.accepts(t));
        }
        if r.block {
            rule = rule.block(format!("reason {i}"));
        }
        b.add(rule);
    }
    for a in &set.allow {
        b.allow(a.as_str());
    }
    b.build().unwrap_or_else(|e| panic!("{set:?}: {e}"))
}

/// What the reference says of a whole text.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Verdict {
    /// The output, up to the block if any.
    text: String,
    /// (rule, span) of every match acted on, the block's last.
    triggers: Vec<(usize, Range<usize>)>,
    /// (rule, span) of the block.
    block: Option<(usize, Range<usize>)>,
}

fn reference(set: &Set, hay: &str) -> Verdict {
    let sources: Vec<&str> = set.rules.iter().map(|r| r.source.as_str()).collect();
    let re = meta::Regex::new_many(&sources).expect("the test patterns build");
    let allow: HashSet<&str> = set.allow.iter().map(String::as_str).collect();
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
        for (k, rule) in set.rules.iter().enumerate() {
            let input = Input::new(hay)
                .range(pos..)
                .anchored(Anchored::Pattern(PatternID::must(k)));
            let Some(m) = re.search(&input) else { continue };
            if m.is_empty() && last_end == Some(pos) {
                // `find_iter` skips it, and no later rule is tried here.
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
            triggers.push((k, span.clone()));
            if set.rules[k].block {
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

fn triggers_of(ts: &[Trigger]) -> Vec<(usize, Range<usize>)> {
    ts.iter().map(|t| (t.rule(), t.span())).collect()
}

fn block_of(b: Option<&Block>) -> Option<(usize, Range<usize>)> {
    b.map(|b| (b.rule(), b.span()))
}

/// Streams `chunks` of text through `r` with `feed` (or `feed_into`), as a
/// caller would: the output released, up to a block if any.
fn stream_str(r: &mut Replacer, chunks: &[&str], into: bool) -> Result<Verdict, String> {
    r.record_triggers(true, false);
    let mut text = String::new();
    let mut block = None;
    for c in chunks {
        let result = if into {
            r.feed_into(c, &mut text)
        } else {
            r.feed(c).map(|s| text.push_str(&s))
        };
        if let Err(e) = result {
            text.push_str(std::str::from_utf8(e.released()).map_err(|e| e.to_string())?);
            block = Some(e);
            break;
        }
    }
    if let Some(first) = &block {
        // Every later call reports the same block and releases nothing.
        let again = r.feed("more").expect_err("a blocked stream stays blocked");
        if again.block() != first.block() || !again.released().is_empty() {
            return Err(format!("a later feed reported {again:?}, not {first:?}"));
        }
        let end = r.flush().expect_err("flush reports the block once more");
        if end.block() != first.block() || !end.released().is_empty() {
            return Err(format!("flush reported {end:?}"));
        }
    } else {
        match r.flush() {
            Ok(s) => text.push_str(&s),
            Err(e) => {
                text.push_str(std::str::from_utf8(e.released()).map_err(|e| e.to_string())?);
                block = Some(e);
            }
        }
    }
    if let Some(e) = &block {
        if e.kind() != StreamErrorKind::Blocked {
            return Err(format!("failed with {e:?}"));
        }
    }
    Ok(Verdict {
        text,
        triggers: triggers_of(&r.take_triggers()),
        block: block_of(block.as_ref().and_then(|e| e.block())),
    })
}

/// As [`stream_str`], with bytes cut anywhere and `feed_bytes_into`.
fn stream_bytes(r: &mut Replacer, chunks: &[&[u8]]) -> Verdict {
    r.record_triggers(true, false);
    let mut out = Vec::new();
    let mut block = None;
    for c in chunks {
        if let Err(e) = r.feed_bytes_into(c, &mut out) {
            block = e.block().cloned();
            break;
        }
    }
    if block.is_none() {
        if let Err(e) = r.flush_bytes_into(&mut out) {
            block = e.block().cloned();
        }
    }
    Verdict {
        text: String::from_utf8(out).expect("whole characters"),
        triggers: triggers_of(&r.take_triggers()),
        block: block_of(block.as_ref()),
    }
}

fn evaluated(rules: &Rules, hay: &str) -> Verdict {
    let eval = rules.evaluate(hay);
    Verdict {
        text: eval.text().to_string(),
        triggers: triggers_of(eval.triggers()),
        block: block_of(eval.block()),
    }
}

/// Each engine, with literal rules on the literal matcher (its DFA, its
/// NFA, and its NFA with a front of a few rows) and off it.
const ENGINES: [fn() -> Config; 8] = [
    Config::new,
    || Config::new().literal_dfa_size_limit(0),
    || Config::new().literal_dfa_size_limit(128),
    || Config::new().fast_paths(false),
    || Config::new().dfa(DfaKind::Lazy).cache_capacity(1),
    || Config::new().literal_matcher(false),
    || Config::new().fast_paths(false).literal_matcher(false),
    || {
        Config::new()
            .dfa(DfaKind::Lazy)
            .cache_capacity(1)
            .literal_matcher(false)
    },
];

/// Checks `evaluate`, `replace_all` and streams over every engine and the
/// given splits against the reference.
fn check(set: &Set, hay: &str, splits: &[Vec<usize>]) -> Result<(), TestCaseError> {
    check_on(set, hay, splits, &ENGINES)
}

/// [`check`] over the given engines.
fn check_on(
    set: &Set,
    hay: &str,
    splits: &[Vec<usize>],
    engines: &[fn() -> Config],
) -> Result<(), TestCaseError> {
    let want = reference(set, hay);
    for engine in engines {
        let rules = build(set, engine());
        let got = evaluated(&rules, hay);
        prop_assert_eq!(&got, &want, "evaluate, {:?} on {:?}", set, hay);
        prop_assert_eq!(rules.replace_all(hay), want.text.clone());
        let mut r = rules.replacer();
        for cuts in splits {
            let chunks = chunks_at(hay.as_bytes(), cuts);
            let strs: Vec<&str> = chunks
                .iter()
                .map(|c| std::str::from_utf8(c).expect("cut at boundaries"))
                .collect();
            let got =
                stream_str(&mut r, &strs, cuts.len() % 2 == 0).map_err(TestCaseError::fail)?;
            prop_assert_eq!(&got, &want, "{:?} on {:?} cut at {:?}", set, hay, cuts);
            r.reset();
        }
        // Byte chunks cut inside characters.
        let bytes: Vec<&[u8]> = hay.as_bytes().chunks(1).collect();
        prop_assert_eq!(&stream_bytes(&mut r, &bytes), &want, "one byte at a time");
        r.reset();
    }
    Ok(())
}

fn grule_strategy() -> impl Strategy<Value = GRule> {
    let check = prop_oneof![
        2 => Just(Check::None),
        1 => Just(Check::Never),
        3 => any::<u64>().prop_map(Check::Hash),
    ];
    let pat = prop_oneof![
        4 => proptest::sample::select(REGEXES).prop_map(|p| (p.to_string(), None)),
        1 => proptest::sample::select(LITERALS)
            .prop_map(|l| (regex_syntax::escape(l), Some(l.to_string()))),
        2 => proptest::sample::select(GUARD_REGEXES).prop_map(|p| (p.to_string(), None)),
    ];
    (pat, check, proptest::bool::weighted(0.15)).prop_map(|((source, literal), check, block)| {
        GRule {
            source,
            literal,
            check,
            block,
        }
    })
}

/// Patterns that overlap each other in every way: same start with
/// different lengths, one inside another, one across another's end.
const GUARD_REGEXES: &[&str] = &[
    r"\d+",
    r"\d",
    r"\d{2}",
    r"a\w*",
    r"\w+",
    "ab",
    "b+",
    "a",
    r"[a-z]+\d",
    r"\d[a-z]",
];

fn set_strategy() -> impl Strategy<Value = Set> {
    (
        proptest::collection::vec(grule_strategy(), 1..=4),
        proptest::collection::vec(
            proptest::sample::select(&["ab", "1", "12", "foo", "a", ""][..]),
            0..3,
        ),
    )
        .prop_map(|(rules, allow)| Set {
            rules,
            allow: allow.into_iter().map(str::to_string).collect(),
        })
}

fn text_strategy() -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(ATOMS), 0..14).prop_map(|a| a.concat())
}

fn config(cases: u32) -> ProptestConfig {
    config_saving_to(
        cases,
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/suite/proptest-regressions/guard.txt"
        ),
    )
}

/// A few random splits at character boundaries, the whole input and one
/// character at a time.
fn some_splits(hay: &str, seed: &str) -> Vec<Vec<usize>> {
    let points = char_boundaries(hay);
    let inner = &points[1..points.len().saturating_sub(1).max(1)];
    let mut rng = Rng::new(seed);
    let mut splits = vec![Vec::new(), inner.to_vec()];
    for _ in 0..6 {
        splits.push(rng.cuts(inner));
    }
    splits
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn streams_and_evaluate_equal_the_reference(set in set_strategy(), hay in text_strategy()) {
        let splits = some_splits(&hay, &format!("{set:?}{hay}"));
        check(&set, &hay, &splits)?;
    }
}

/// Every split into at most three parts of a short input.
fn up_to_three(hay: &str) -> Vec<Vec<usize>> {
    let points = char_boundaries(hay);
    let inner = &points[1..points.len() - 1];
    let mut splits = vec![Vec::new()];
    for (i, &a) in inner.iter().enumerate() {
        splits.push(vec![a]);
        for &b in &inner[i..] {
            splits.push(vec![a, b]);
        }
    }
    splits
}

fn set(rules: &[(&str, Check, bool)]) -> Set {
    Set {
        rules: rules
            .iter()
            .map(|&(p, c, b)| GRule::regex(p, c, b))
            .collect(),
        allow: Vec::new(),
    }
}

fn check_all(set: &Set, hay: &str) -> Verdict {
    check(set, hay, &up_to_three(hay)).unwrap_or_else(|e| panic!("{e}"));
    reference(set, hay)
}

#[test]
fn rejected_match_falls_to_a_later_rule_at_the_same_start() {
    let s = set(&[
        ("abc", Check::Never, false),
        ("ab", Check::None, false),
        (r"\w+", Check::None, false),
    ]);
    assert_eq!(check_all(&s, "abcd abce").text, "<1><2> <1><2>");
}

#[test]
fn rejected_match_then_a_match_inside_it() {
    let s = set(&[(r"a\w+", Check::Never, false), ("b+", Check::None, false)]);
    assert_eq!(check_all(&s, "abbb ab").text, "a<1> a<1>");
}

#[test]
fn rejected_rule_is_excluded_only_at_its_start() {
    // `aa` rejected at 0 may match at 1.
    let s = set(&[("aa", Check::Hash(0), false), ("a", Check::None, false)]);
    let v = check_all(&s, "aaa aa");
    assert_eq!(v, reference(&s, "aaa aa"));
    let s = set(&[
        (r"\d{2}", Check::Never, false),
        (r"\d\d\d", Check::None, false),
    ]);
    assert_eq!(check_all(&s, "1234").text, "<1>4");
}

#[test]
fn rejection_at_the_end_of_input() {
    let s = set(&[(r"\d+", Check::Never, false), (r"\d", Check::None, false)]);
    assert_eq!(check_all(&s, "x 12").text, "x <1><1>");
    let s = set(&[("x$", Check::Never, false), ("$", Check::None, false)]);
    assert_eq!(check_all(&s, "ax").text, "ax<1>");
}

#[test]
fn rejection_whose_rescan_needs_more_input() {
    let s = set(&[("ab", Check::Never, false), (r"a\w*", Check::None, false)]);
    assert_eq!(check_all(&s, "abcd e").text, "<1> e");
    let rules = build(&s, Config::new());
    let mut r = rules.replacer();
    assert_eq!(r.feed("ab").unwrap(), "");
    assert_eq!(r.feed("cd").unwrap(), "");
    assert_eq!(r.feed(" e").unwrap(), "<1> e");
}

#[test]
fn rejected_empty_matches() {
    let s = set(&[("", Check::Never, false), ("a", Check::None, false)]);
    assert_eq!(check_all(&s, "bab").text, "b<1>b");
    let s = set(&[
        ("a*", Check::Hash(7), false),
        ("b", Check::None, false),
        ("", Check::None, false),
    ]);
    let v = check_all(&s, "aabab");
    assert_eq!(v, reference(&s, "aabab"));
}

/// A rejected literal, with the literal matcher on and off: at its start,
/// lower-priority literals that extend it (which the leftmost-first
/// automaton drops, since the rejected one is their prefix) or stop short
/// of it are found in rule order; with none, a literal starting inside the
/// rejected span is; and a longer literal cut by the end of the input
/// holds the text until the end decides it.
#[test]
fn rejected_literal_then_a_later_literal_at_its_start_or_inside_it() {
    let s = Set {
        rules: vec![
            GRule::literal("secret", Check::Never),
            GRule::literal("secretive", Check::None),
            GRule::literal("secrets", Check::None),
            GRule::literal("cre", Check::None),
        ],
        allow: Vec::new(),
    };
    // Every rule on the literal matcher when it is on, none when off.
    assert_eq!(build(&s, Config::new()).dense_dfa_size(), None);
    assert!(
        build(&s, Config::new().literal_matcher(false))
            .dense_dfa_size()
            .is_some()
    );
    let hay = "secretive secrets secretly secretiv";
    assert_eq!(check_all(&s, hay).text, "<1> <2> se<3>tly se<3>tiv");
    for on in [true, false] {
        let rules = build(&s, Config::new().literal_matcher(on));
        let mut r = rules.replacer();
        assert_eq!(r.feed("a secreti").unwrap(), "a ");
        assert_eq!(r.feed("v").unwrap(), "");
        assert_eq!(r.feed("e secretl").unwrap(), "<1> se<3>tl");
        assert_eq!(r.flush().unwrap(), "");
    }
    // The same on a caseless automaton (`(?i)` regexes of one literal).
    let s = set(&[
        ("(?i)ab", Check::Never, false),
        ("(?i)abc", Check::None, false),
        ("(?i)b", Check::None, false),
    ]);
    assert_eq!(build(&s, Config::new()).dense_dfa_size(), None);
    assert_eq!(check_all(&s, "ABC aBd Ab").text, "<1> a<2>d A<2>");
}

#[test]
fn rejection_with_unicode_word_boundaries() {
    let s = set(&[
        (r"\b\w+\b", Check::Never, false),
        (r"\w", Check::None, false),
    ]);
    assert_eq!(check_all(&s, "σé x").text, "<1><1> <1>");
}

/// Rules that each need an `@` within a few bytes of their start, so the
/// engine skips to the `@`s and steps only the bytes before them, with many
/// live candidates there: a rejection at a start must still be rescanned
/// there (with the later rules only), not skipped, on every engine and in
/// segments of a long chunk as well as in small ones.
#[test]
fn rejections_under_gated_bounded_repetitions() {
    let s = set(&[
        (r"[a-z0-9]{1,6}@[a-z]+", Check::Hash(7), false),
        (r"[a-z]{0,3}@[a-z]", Check::Hash(3), false),
        (r"[a-z]@", Check::None, false),
    ]);
    let pieces = [
        "ab@cd ",
        "xyzw@q ",
        "QUJDRA+/",
        "a@b",
        "@",
        "abcdefgh@ij ",
        "é@x ",
        "\n",
    ];
    let mut rng = Rng::new("gated");
    let mut hay = String::new();
    while hay.len() < 5000 {
        hay.push_str(pieces[rng.below(pieces.len())]);
    }
    let want = reference(&s, &hay);
    assert!(want.triggers.len() > 100, "{} matches", want.triggers.len());
    let points = char_boundaries(&hay);
    let pages: Vec<usize> = points.iter().copied().filter(|p| p % 1000 < 7).collect();
    let splits = [Vec::new(), pages, rng.cuts(&points), rng.cuts(&points)];
    let engines: [fn() -> Config; 5] = [
        Config::new,
        || Config::new().fast_paths(false),
        || Config::new().dfa(DfaKind::Lazy),
        || Config::new().dfa(DfaKind::Lazy).scratch_per_call(true),
        || Config::new().dfa(DfaKind::Lazy).cache_capacity(1),
    ];
    check_on(&s, &hay, &splits, &engines).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn block_stops_the_stream_before_the_match() {
    let s = set(&[
        (r"\d{3}-\d{2}-\d{4}", Check::None, true),
        (r"\w+@\w+", Check::None, false),
    ]);
    let v = check_all(&s, "a@b 123-45-6789 c@d");
    assert_eq!(v.text, "<1> ");
    assert_eq!(v.block, Some((0, 4..15)));
    assert_eq!(v.triggers, [(1, 0..3), (0, 4..15)]);
}

#[test]
fn a_rejected_block_does_not_block() {
    let s = set(&[(r"\d+", Check::Never, true), (r"\d", Check::None, false)]);
    let v = check_all(&s, "12 3");
    assert_eq!((v.text.as_str(), v.block), ("<1><1> <1>", None));
}

#[test]
fn allowlisted_text_passes_and_is_not_rescanned() {
    let mut s = set(&[
        (r"[\w.]+@\w+\.\w+", Check::None, false),
        (r"\w+\.\w+", Check::None, false),
    ]);
    s.allow.push("me@home.org".to_string());
    // The suffix `home.org` of the allowlisted address is not masked.
    assert_eq!(check_all(&s, "me@home.org x.y").text, "me@home.org <1>");
}

#[test]
fn per_stream_allowlist_holds_across_splits() {
    let rules = Rules::builder()
        .regex(r"[\w.]+@\w+\.\w+", "[EMAIL]")
        .build()
        .unwrap();
    let hay = "to me@home.org and ann@x.org";
    for cuts in up_to_three(hay) {
        let chunks = chunks_at(hay.as_bytes(), &cuts);
        let mut r = rules.replacer();
        r.allow("me@home.org");
        let mut out = String::new();
        for c in chunks {
            out += &r.feed(std::str::from_utf8(c).unwrap()).unwrap();
        }
        out += &r.flush().unwrap();
        assert_eq!(out, "to me@home.org and [EMAIL]", "{cuts:?}");
    }
}

#[test]
fn block_under_every_held_limit_policy_and_adapter() {
    use std::io::Write;
    use stream_replace::{HeldLimit, ReplaceWriter, wrap};
    let hay = "ok 123-45-6789 secret tail";
    for config in [
        Config::new(),
        Config::new().max_held(4),
        Config::new()
            .max_held(4)
            .on_held_limit(HeldLimit::Replace("[HELD]".into())),
    ] {
        let rules = Rules::builder()
            .add(
                Rule::regex(r"\d{3}-\d{2}-\d{4}", "")
                    .id("us_ssn")
                    .block("SSN"),
            )
            .config(config.clone())
            .build()
            .unwrap();
        for size in 1..hay.len() {
            let chunks: Vec<&str> = hay
                .as_bytes()
                .chunks(size)
                .map(|c| std::str::from_utf8(c).unwrap())
                .collect();
            // The iterator adapter: the safe text, then the block.
            let mut items = wrap(rules.replacer(), chunks.iter().copied());
            let mut out = String::new();
            let mut err = None;
            for item in items.by_ref() {
                match item {
                    Ok(s) => out += &s,
                    Err(e) => err = Some(e),
                }
            }
            let err = err.unwrap_or_else(|| panic!("{config:?} {size}: no error, output {out:?}"));
            assert!(
                !out.contains("45") && !out.contains("secret"),
                "{config:?} {size}: {out:?}"
            );
            assert!(out.starts_with("ok"), "{config:?} {size}: {out:?}");
            // Under the held limit, the stream may have failed first.
            // Under the replacing policy, its text may stand for the held
            // start of the value.
            let safe = ["ok ".to_string(), format!("ok {}", held_text(&config))];
            if err.kind() == StreamErrorKind::Blocked {
                assert_eq!(err.block().unwrap().id(), "us_ssn");
                assert!(safe.contains(&out), "{config:?} {size}: {out:?}");
            }
            // The writer: nothing after the block reaches it.
            let mut w = ReplaceWriter::new(rules.replacer(), Vec::new());
            let mut failed = None;
            for c in &chunks {
                if let Err(e) = w.write_all(c.as_bytes()) {
                    failed = Some(e);
                    break;
                }
            }
            let failed = match failed {
                Some(e) => e,
                None => w.try_finish().expect_err("the stream blocks"),
            };
            let written = String::from_utf8(w.get_ref().clone()).unwrap();
            assert!(
                !written.contains("45") && !written.contains("secret"),
                "{written:?}"
            );
            let inner = failed
                .get_ref()
                .and_then(|e| e.downcast_ref::<StreamError>());
            if let Some(b) = inner.and_then(StreamError::block) {
                assert_eq!((b.id(), b.reason()), ("us_ssn", "SSN"));
                assert!(safe.contains(&written), "{config:?} {size}: {written:?}");
            }
        }
    }
}

fn held_text(config: &Config) -> &str {
    match config.get_on_held_limit() {
        stream_replace::HeldLimit::Replace(t) => t,
        _ => "",
    }
}

#[test]
fn reader_delivers_the_safe_text_then_the_block() {
    use std::io::Read;
    use stream_replace::ReplaceReader;
    let rules = Rules::builder()
        .add(
            Rule::literal("BEGIN PRIVATE KEY", "")
                .id("private_key")
                .block("key"),
        )
        .build()
        .unwrap();
    let mut reader = ReplaceReader::new(rules.replacer(), &b"hello BEGIN PRIVATE KEY abc"[..]);
    let mut out = Vec::new();
    let err = reader.read_to_end(&mut out).unwrap_err();
    assert_eq!(out, b"hello ");
    let block = err
        .get_ref()
        .and_then(|e| e.downcast_ref::<StreamError>())
        .and_then(StreamError::block)
        .unwrap();
    assert_eq!(block.id(), "private_key");
}

#[test]
fn evaluate_without_text_on_block_and_with_values() {
    let rules = Rules::builder()
        .add(Rule::regex(r"\d+", "N").id("num"))
        .add(Rule::literal("STOP", "").id("stop").block("stop word"))
        .build()
        .unwrap();
    let eval = rules.evaluate_with(
        "1 STOP 2",
        &EvaluateConfig::new().values(true).text_on_block(false),
    );
    assert_eq!(eval.text(), "");
    assert_eq!(eval.triggers().len(), 2);
    assert_eq!(eval.triggers()[0].value(), Some("1"));
    assert_eq!(
        eval.triggers()[1].action(),
        &Action::Block("stop word".into())
    );
    let plain = rules.evaluate("1 STOP 2");
    assert_eq!(plain.text(), "N ");
    assert!(plain.triggers().iter().all(|t| t.value().is_none()));
}

#[test]
fn poisoned_stream_stays_closed() {
    let rules = Rules::builder()
        .add(Rule::regex(r"\d+", "N").validator(|t| {
            assert!(t != "666", "validator panics");
            true
        }))
        .build()
        .unwrap();
    let mut r = rules.replacer();
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| r.feed("a 666 b")));
    assert!(caught.is_err());
    let err = r.feed("c").unwrap_err();
    assert_eq!(err.kind(), StreamErrorKind::Poisoned);
}

/// The rule sets of the split tests: a pack-like set with every guard
/// feature, and the counter placeholder.
fn gateway_rules() -> Rules {
    Rules::builder()
        .add(
            Rule::regex(r"\b\d{3}-\d{2}-\d{4}\b", "[SSN]")
                .id("us_ssn")
                .block("SSN"),
        )
        .add(
            Rule::regex(r"\b\d{4}(?:[ -]?\d{4}){3}\b", "[CARD]")
                .id("card")
                .validator(stream_replace::validate::luhn),
        )
        .add(
            Rule::new(
                Pattern::regex(r"[\w.+-]+@[\w-]+\.\w+"),
                Replacement::counter("EMAIL"),
            )
            .id("email"),
        )
        .add(Rule::regex(r"\d+", "[N]").id("number"))
        .allow("help@corp.io")
        .build()
        .unwrap()
}

const SPLIT_INPUTS: &[&str] = &[
    "a@b.cd, 4111 1111 1111 1112, é@x.io a@b.cd",
    "help@corp.io and 4111-1111-1111-1111 then 123-45-6789 tail",
    "σ 12 zz@é.fr 4111111111111111 x@y.zz",
    "id 123-45-67890 ok",
];

/// Streamed text, triggers and block equal `evaluate` on the whole input
/// for every two-part split, every split into at most three parts (short
/// inputs), one character at a time, and bytes cut inside characters.
#[test]
fn triggers_and_text_equal_evaluate_for_every_split() {
    use chunk_invariance::{splits_up_to, two_part_splits};
    let rules = gateway_rules();
    let mut r = rules.replacer();
    let mut tried = 0;
    for &input in SPLIT_INPUTS {
        let want = evaluated(&rules, input);
        let mut check_str = |chunks: Vec<&str>| {
            let got = stream_str(&mut r, &chunks, chunks.len() % 2 == 0).unwrap();
            assert_eq!(got, want, "{chunks:?}");
            r.reset();
            tried += 1;
        };
        let max_parts = if input.chars().count() <= 45 { 3 } else { 2 };
        for split in splits_up_to(input, max_parts) {
            check_str(split);
        }
        check_str(
            input
                .char_indices()
                .map(|(i, c)| &input[i..i + c.len_utf8()])
                .collect(),
        );
        for split in two_part_splits(input.as_bytes()) {
            assert_eq!(stream_bytes(&mut r, &split), want, "{split:?}");
            r.reset();
            tried += 1;
        }
        let bytes: Vec<&[u8]> = input.as_bytes().chunks(1).collect();
        assert_eq!(stream_bytes(&mut r, &bytes), want);
        r.reset();
    }
    assert!(tried > 1500, "{tried} splits");
}

#[test]
fn gateway_verdicts_are_as_expected() {
    let rules = gateway_rules();
    let v = rules.evaluate(SPLIT_INPUTS[0]);
    // The Luhn-invalid number is not a card: its digit runs are numbers.
    assert_eq!(v.text(), "[EMAIL_1], [N] [N] [N] [N], [EMAIL_2] [EMAIL_1]");
    let v = rules.evaluate(SPLIT_INPUTS[1]);
    assert_eq!(v.text(), "help@corp.io and [CARD] then ");
    assert_eq!(v.block().unwrap().id(), "us_ssn");
    assert!(!rules.evaluate(SPLIT_INPUTS[3]).is_blocked());
}

/// The events of a stream over `chunks`, checked for numbering and
/// finality; returns them.
fn events_of(events: &mut stream_replace::Events, chunks: &[&str]) -> Vec<stream_replace::Event> {
    let mut all = Vec::new();
    for c in chunks {
        all.extend(events.feed(c).unwrap());
    }
    all.extend(events.finish().unwrap());
    let indexes: Vec<u64> = all.iter().map(|e| e.index()).collect();
    let want: Vec<u64> = (1..=all.len() as u64).collect();
    assert_eq!(indexes, want, "{chunks:?}");
    assert_eq!(all.iter().filter(|e| e.is_final()).count(), 1, "{chunks:?}");
    assert!(all.last().unwrap().is_final());
    for e in &all {
        assert_eq!(
            e.is_redacted(),
            e.triggers().iter().any(|t| t.action() == &Action::Replace)
        );
        assert!(e.block().is_none() || e.is_final());
    }
    events.reset();
    all
}

#[test]
fn events_join_to_the_output_for_every_split() {
    for rules in [gateway_rules(), {
        // With the block turned off, the value is masked and the stream
        // goes on.
        Rules::builder()
            .add(
                Rule::regex(r"\b\d{3}-\d{2}-\d{4}\b", "[SSN]")
                    .id("us_ssn")
                    .block("SSN")
                    .action(Action::Replace),
            )
            .add(Rule::regex(r"[\w.+-]+@[\w-]+\.\w+", "[EMAIL]").id("email"))
            .build()
            .unwrap()
    }] {
        let mut events = stream_replace::Events::new(rules.replacer());
        for &input in SPLIT_INPUTS {
            let want = rules.evaluate(input);
            let splits = two_parts_and_chars(input);
            for chunks in splits {
                let all = events_of(&mut events, &chunks);
                let text: String = all.iter().map(|e| e.text()).collect();
                assert_eq!(text, want.text(), "{chunks:?}");
                let triggers: Vec<Trigger> =
                    all.iter().flat_map(|e| e.triggers().to_vec()).collect();
                assert_eq!(triggers, want.triggers(), "{chunks:?}");
                assert_eq!(all.last().unwrap().block(), want.block());
            }
        }
    }
    // The turned-off block masks and goes on.
    let off = Rules::builder()
        .add(
            Rule::regex(r"\d{3}-\d{2}-\d{4}", "[SSN]")
                .block("SSN")
                .action(Action::Replace),
        )
        .build()
        .unwrap();
    let eval = off.evaluate("a 123-45-6789 b");
    assert_eq!((eval.text(), eval.is_blocked()), ("a [SSN] b", false));
}

#[test]
fn release_at_words_keeps_the_output_and_cuts_at_delimiters() {
    let rules = gateway_rules();
    let delimiter = |c: char| c.is_ascii_whitespace() || ".,;!?()[]{}".contains(c);
    for cap in [4, 1000] {
        let mut r = rules.replacer();
        r.release_at_words(Some(cap));
        for &input in SPLIT_INPUTS {
            let want = rules.evaluate(input);
            let splits = two_parts_and_chars(input);
            for chunks in splits {
                let mut pieces = Vec::new();
                let mut ended = false;
                for c in &chunks {
                    match r.feed(c) {
                        Ok(s) => pieces.push(s),
                        Err(e) => {
                            pieces.push(String::from_utf8(e.released().to_vec()).unwrap());
                            ended = true;
                            break;
                        }
                    }
                    assert!(r.waiting() <= cap, "{chunks:?}");
                }
                if !ended {
                    pieces.push(r.flush().unwrap());
                }
                r.reset();
                assert_eq!(pieces.concat(), want.text(), "{chunks:?}");
                if cap == 1000 {
                    for p in &pieces[..pieces.len() - 1] {
                        assert!(
                            p.is_empty() || p.ends_with(delimiter),
                            "{p:?} in {chunks:?}"
                        );
                    }
                }
            }
        }
    }
}

/// A fatal value: through every adapter and every two-part split (and one
/// character, or byte, at a time), exactly the text before it comes out,
/// then one error naming the rule; nothing of the value or after it.
#[test]
fn a_fatal_value_stops_every_adapter_on_every_split() {
    use crate::run::{Adapter, through_until_error};
    let rules = gateway_rules();
    let input = "é a@b.cd then 123-45-6789 and é@x.io 4111111111111111";
    let want = rules.evaluate(input);
    assert_eq!(want.text(), "é [EMAIL_1] then ");
    let mut splits: Vec<Vec<usize>> = char_boundaries(input)[1..]
        .iter()
        .map(|&c| vec![c])
        .collect();
    splits.push(char_boundaries(input)[1..input.chars().count()].to_vec());
    for &adapter in Adapter::ALL {
        let mut splits = splits.clone();
        if !adapter.is_str() {
            splits.extend((1..input.len()).map(|c| vec![c]));
            splits.push((1..input.len()).collect());
        }
        for cuts in &splits {
            let chunks = chunks_at(input.as_bytes(), cuts);
            let (out, err) = through_until_error(rules.replacer(), adapter, &chunks);
            assert_eq!(
                String::from_utf8(out).unwrap(),
                want.text(),
                "{adapter:?} {cuts:?}"
            );
            let err = err.unwrap_or_else(|| panic!("{adapter:?} {cuts:?}: no error"));
            assert!(err.contains("us_ssn") && err.contains("SSN"), "{err}");
            assert!(!err.contains("6789"), "{err}");
        }
    }
}

/// Every two-part split of `input`, then its one-character chunks.
fn two_parts_and_chars(input: &str) -> Vec<Vec<&str>> {
    let mut splits: Vec<Vec<&str>> = chunk_invariance::two_part_splits(input).collect();
    splits.push(
        input
            .char_indices()
            .map(|(i, c)| &input[i..i + c.len_utf8()])
            .collect(),
    );
    splits
}

// ---- the sharp edges of the guard API (each decided and pinned here) ----

/// `release_at_words(Some(cap))` bounds the run after the last delimiter,
/// not what one call shows before it: with no rule holding words, a call
/// whose output is longer than the cap showed its trailing half word.
#[test]
fn release_at_words_cap_bounds_the_last_run_only() {
    let rules = Rules::builder().literal("zzz", "Z").build().unwrap();
    let mut r = rules.replacer();
    r.release_at_words(Some(2));
    assert_eq!(r.feed("ab c").unwrap(), "ab ");
    assert_eq!(r.waiting(), 1);
    assert_eq!(r.flush().unwrap(), "c");

    let mut r = rules.replacer();
    r.release_at_words(Some(4));
    assert_eq!(r.feed("abc").unwrap(), "");
    assert_eq!(r.feed("de fg").unwrap(), "abcde ");
    assert_eq!(r.waiting(), 2);
    // A run past the cap is shown whole.
    assert_eq!(r.feed("hij").unwrap(), "fghij");
    assert_eq!(r.waiting(), 0);
    assert_eq!(r.flush().unwrap(), "");
}

/// A block decided in `flush` keeps the stream blocked, as one decided in
/// `feed` does: every later `feed` and `flush` reports it and releases
/// nothing, until `reset`.
#[test]
fn block_decided_in_flush_keeps_later_feeds_blocked() {
    let rules = Rules::builder()
        .add(Rule::regex(r"[^\s]{1,12}", "").id("word").block("word"))
        .build()
        .unwrap();
    let mut r = rules.replacer();
    assert_eq!(r.feed("a").unwrap(), "");
    let first = r.flush().unwrap_err();
    assert_eq!(first.kind(), StreamErrorKind::Blocked);
    assert_eq!(first.block().map(|b| b.id()), Some("word"));
    for _ in 0..2 {
        let again = r.feed("zz").unwrap_err();
        assert_eq!((again.block(), again.released()), (first.block(), &b""[..]));
        let end = r.flush().unwrap_err();
        assert_eq!((end.block(), end.released()), (first.block(), &b""[..]));
        let mut out = String::new();
        assert!(r.feed_into(" ", &mut out).is_err());
        assert_eq!(out, "");
    }
    r.reset();
    assert_eq!(r.feed(" ").unwrap(), " ");
}

/// `flush` after a block in `feed` does not start a new stream: a loop that
/// keeps feeding after the error gets nothing out.
#[test]
fn flush_after_a_block_does_not_reopen_the_stream() {
    let rules = Rules::builder()
        .add(Rule::literal("KEY", "").id("key").block("key"))
        .build()
        .unwrap();
    let mut r = rules.replacer();
    let err = r.feed("ok KEY secret").unwrap_err();
    assert_eq!(err.released(), b"ok ");
    assert!(r.flush().is_err());
    assert!(r.feed("more").is_err());
    assert!(r.flush_bytes().is_err());
    assert!(r.feed_bytes(b"more").is_err());
    r.reset();
    assert_eq!(r.feed("more").unwrap(), "more");
}

/// A stream over its held limit stays failed for `flush` too.
#[test]
fn held_limit_failure_stays_until_reset() {
    let rules = Rules::builder()
        .regex(r"<think>[\s\S]*?</think>", "")
        .config(Config::new().max_held(8))
        .build()
        .unwrap();
    let mut r = rules.replacer();
    let err = r.feed("<think> and on and on").unwrap_err();
    assert_eq!(err.kind(), StreamErrorKind::HeldLimit);
    assert_eq!(r.flush().unwrap_err().kind(), StreamErrorKind::HeldLimit);
    assert_eq!(r.feed("x").unwrap_err().kind(), StreamErrorKind::HeldLimit);
    r.reset();
    assert_eq!(r.feed("x").unwrap(), "x");
}

/// A stream poisoned by a panic in a validator stays poisoned for `feed`
/// and `flush` alike until `reset`.
#[test]
fn poisoned_stream_stays_closed_for_flush_too() {
    let rules = Rules::builder()
        .add(Rule::regex(r"\d+", "N").validator(|t| {
            assert!(t != "13", "unlucky");
            true
        }))
        .build()
        .unwrap();
    let mut r = rules.replacer();
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = r.feed("a 13 b");
    }));
    assert!(panicked.is_err());
    assert_eq!(r.flush().unwrap_err().kind(), StreamErrorKind::Poisoned);
    assert_eq!(r.feed("1 ").unwrap_err().kind(), StreamErrorKind::Poisoned);
    assert_eq!(r.flush().unwrap_err().kind(), StreamErrorKind::Poisoned);
    r.reset();
    assert_eq!(r.feed("1 ").unwrap(), "N ");
}

/// One shape for a failure: as an `io::Error`, the inner error is the
/// `StreamError` for a block as for any other failure, with the block as
/// its `block()` and `source()`.
#[test]
fn io_errors_carry_the_stream_error_for_every_failure() {
    use std::error::Error as _;
    let rules = Rules::builder()
        .add(Rule::literal("KEY", "").id("key").block("key"))
        .config(Config::new().max_held(4))
        .regex(r"<think>[\s\S]*?</think>", "")
        .build()
        .unwrap();
    let blocked: std::io::Error = rules.replacer().feed("a KEY").unwrap_err().into();
    let inner = blocked
        .get_ref()
        .unwrap()
        .downcast_ref::<StreamError>()
        .unwrap();
    assert_eq!(inner.kind(), StreamErrorKind::Blocked);
    assert_eq!(inner.block().map(|b| b.id()), Some("key"));
    let source = inner.source().unwrap().downcast_ref::<Block>().unwrap();
    assert_eq!(source.reason(), "key");
    let limit: std::io::Error = rules.replacer().feed("<think> ...").unwrap_err().into();
    let inner = limit
        .get_ref()
        .unwrap()
        .downcast_ref::<StreamError>()
        .unwrap();
    assert_eq!(inner.kind(), StreamErrorKind::HeldLimit);
}

/// `Rule::regex` takes a template, `Rule::regex_mask` literal text.
#[test]
fn regex_rules_take_a_template_or_a_mask() {
    let rules = Rules::builder()
        .add(Rule::regex(r"(\d+) USD", "$1 dollars, $$5 fee"))
        .add(Rule::regex_mask(r"(\d+) EUR", "$1 euros"))
        .build()
        .unwrap();
    assert_eq!(
        rules.replace_all("7 USD, 8 EUR"),
        "7 dollars, $5 fee, $1 euros"
    );
}

/// `Rule::count` passes its matches through and counts them, on every
/// split, and reports them as triggers.
#[test]
fn count_rules_pass_matches_through_and_count_them() {
    let rules = Rules::builder()
        .add(Rule::count(Pattern::regex(r"\bTODO\b")).id("todo"))
        .add(Rule::count(Pattern::literal("FIXME")).id("fixme"))
        .build()
        .unwrap();
    let text = "TODO a FIXME b TODOS TODO";
    assert_eq!(rules.replace_all(text), text);
    for cut in 0..=text.len() {
        let mut r = rules.replacer();
        r.set_trigger_recording(TriggerRecording::Spans);
        let out =
            r.feed(&text[..cut]).unwrap() + &r.feed(&text[cut..]).unwrap() + &r.flush().unwrap();
        assert_eq!(out, text);
        assert_eq!(
            (r.counters().matches("todo"), r.counters().matches("fixme")),
            (2, 1)
        );
        let spans: Vec<_> = r.take_triggers().iter().map(|t| t.span()).collect();
        assert_eq!(spans, [0..4, 7..12, 21..25]);
    }
}

/// `set_trigger_recording` names what `record_triggers(bool, bool)` does.
#[test]
fn trigger_recording_modes_match_the_two_flags() {
    let rules = Rules::builder().literal("a", "b").build().unwrap();
    for (mode, flags) in [
        (TriggerRecording::Off, (false, true)),
        (TriggerRecording::Spans, (true, false)),
        (TriggerRecording::Values, (true, true)),
    ] {
        let (mut x, mut y) = (rules.replacer(), rules.replacer());
        x.set_trigger_recording(mode);
        y.record_triggers(flags.0, flags.1);
        let _ = (x.feed("a a").unwrap(), y.feed("a a").unwrap());
        assert_eq!(x.take_triggers(), y.take_triggers(), "{mode:?}");
    }
}

/// `reset` ends the stream, not the replacer: counters, the replacer's
/// allowlist and untaken triggers stay; placeholders start again.
#[test]
fn reset_keeps_the_replacers_counters_and_allowlist() {
    let rules = Rules::builder()
        .add(
            Rule::new(
                Pattern::regex(r"\w+@\w+\.\w+"),
                Replacement::counter("EMAIL"),
            )
            .id("email"),
        )
        .build()
        .unwrap();
    let mut r = rules.replacer();
    r.allow("me@home.org");
    r.set_trigger_recording(TriggerRecording::Spans);
    assert_eq!(r.feed("a@x.org b@y.org ").unwrap(), "[EMAIL_1] [EMAIL_2] ");
    r.reset();
    assert_eq!(
        r.feed("b@y.org me@home.org ").unwrap(),
        "[EMAIL_1] me@home.org "
    );
    assert_eq!(r.counters().matches("email"), 3);
    assert_eq!(r.counters().allowed(), 1);
    // Both streams' triggers (an allowlisted match is not one).
    assert_eq!(r.take_triggers().len(), 3);
}

/// `wrap(..).collect::<Result<String, _>>()` fails closed (the error
/// only); the items before the error are the safe text.
#[test]
fn collecting_a_wrapped_stream_gives_the_error_alone() {
    let rules = Rules::builder()
        .add(Rule::literal("KEY", "").id("key").block("key"))
        .build()
        .unwrap();
    let chunks = ["safe ", "text KEY", " after"];
    let all: Result<String, _> = stream_replace::wrap(rules.replacer(), chunks).collect();
    assert_eq!(all.unwrap_err().block().map(|b| b.id()), Some("key"));
    let items: Vec<_> = stream_replace::wrap(rules.replacer(), chunks).collect();
    let safe: String = items
        .iter()
        .filter_map(|i| i.as_ref().ok())
        .cloned()
        .collect();
    assert_eq!(safe, "safe text ");
    assert!(items.last().unwrap().is_err());
}
