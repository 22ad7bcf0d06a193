//! Bounded repetitions: rules with a live candidate at almost every start
//! (`[a-z]{0,5}x`, an email with a bounded local part), alone and mixed
//! with other rules (a later rule starting earlier, overlapping
//! alternations, `\b`, `$`), against the oracle over random splits and one
//! byte at a time, and the hold-back property, with every engine
//! configuration (fast paths on and off, a tiny cache).

use crate::differential::{
    ENGINES, Engine, LITERALS, REGEXES, check_bytes, check_holdback_with, check_str, check_stream,
    compile_for, config, cuts_strategy, numbered,
};
use crate::oracle::{Oracle, Pat, Repl, Rule, show};
use crate::run::{self, Api};
use proptest::prelude::*;

/// Bounded repetitions before a required literal (what the engine's gate
/// and its many-thread loop are for), and a few without one.
const REPEATS: &[&str] = &[
    r"[a-z0-9.]{1,6}@[a-z]+\.[a-z]{2,}",
    r"[a-z]{0,5}x",
    r"[a-z]{0,5}x$",
    r"(?m)[a-z]{0,4}x$",
    r"\b[a-z]{1,4}@",
    r"[a-z]{2,4}(?:x|yz)",
    r"a{0,3}(?:b|ab)c",
    r"\w{1,5}\.com\b",
    r"[ab]{1,3}@|b@c",
    r"(?i)[a-z]{0,3}σ",
    r"\d{1,3}-\d{2}",
    r"[^\s]{1,8}x",
    r"[a-z]{1,4}",
    r"(?:ab|a){1,3}b",
    r"[a-c]{0,2}(?:ab|c)?[xy]@",
    r"(?:a|bc){0,3}\.?[a-z]{1,2}@",
];

/// Pieces of texts: bytes the repetitions count, their literals, runs that
/// outgrow the bounds, and breaks.
const ATOMS: &[&str] = &[
    "a",
    "b",
    "c",
    "x",
    "y",
    "z",
    "@",
    ".",
    "com",
    "ex.com",
    "-",
    "1",
    "23",
    " ",
    "\n",
    "σ",
    "Σ",
    "é",
    "中",
    "ab",
    "abc",
    "xyz",
    "aaaaaaaaa",
    "bbbbbbb",
    "abcdefghijk",
    "yz",
    "x\n",
];

/// Continuations that complete the repetitions' matches, for the hold-back
/// property (their suffixes are tried too).
const EXAMPLES: &[&str] = &[
    "@ex.com ", "x ", "yz ", "abc ", "1-23 ", "σ", ".com ", "b@c", "abx@ ", "bc.ab@ ",
];

/// Literals the repetitions' matches contain.
const NEEDLES: &[&str] = &["x", "@", "b@", "com", "yz"];

fn pat_strategy() -> impl Strategy<Value = Pat> {
    prop_oneof![
        6 => proptest::sample::select(REPEATS).prop_map(|p| Pat::Regex(p.to_string())),
        1 => proptest::sample::select(LITERALS).prop_map(|p| Pat::Literal(p.to_string())),
        1 => proptest::sample::select(NEEDLES).prop_map(|p| Pat::Literal(p.to_string())),
        1 => proptest::sample::select(REGEXES).prop_map(|p| Pat::Regex(p.to_string())),
    ]
}

fn text_strategy() -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(ATOMS), 0..24).prop_map(|a| a.concat())
}

/// Pieces of byte texts that are not valid UTF-8 on their own.
const BAD: &[&[u8]] = &[b"\xFF", b"\xC3", b"\xE4\xB8"];

fn bytes_strategy() -> impl Strategy<Value = Vec<u8>> {
    let atom = prop_oneof![
        8 => proptest::sample::select(ATOMS).prop_map(|a| a.as_bytes().to_vec()),
        1 => proptest::sample::select(BAD).prop_map(|a| a.to_vec()),
    ];
    proptest::collection::vec(atom, 0..24).prop_map(|a| a.concat())
}

proptest! {
    #![proptest_config(config(256))]

    /// `replace_all` and `&str` streams, cut at random and one character at
    /// a time, equal the oracle.
    #[test]
    fn bounded_repeats_match_oracle(rules in numbered(pat_strategy()), text in text_strategy(), cuts in cuts_strategy()) {
        check_str(&rules, &text, &cuts)?;
    }

    /// The same with byte streams cut anywhere and invalid UTF-8.
    #[test]
    fn bounded_repeats_on_bytes_match_oracle(rules in numbered(pat_strategy()), hay in bytes_strategy(), cuts in cuts_strategy()) {
        check_bytes(&rules, &hay, &cuts)?;
    }

    /// Decided before released, and held only from where a match can still
    /// start.
    #[test]
    fn bounded_repeats_holdback_is_decided_and_minimal(rules in numbered(pat_strategy()), prefix in text_strategy()) {
        check_holdback_with(&rules, &prefix, EXAMPLES)?;
    }
}

/// Texts longer than the segments a feed is cut into (the stream hands
/// back the end of a segment it proved nothing starts before).
fn long_text_strategy() -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(ATOMS), 100..400).prop_map(|a| a.concat())
}

proptest! {
    #![proptest_config(config(48))]

    /// Long texts in chunks of a few KiB cut at random: the stream's
    /// segments end inside the text.
    #[test]
    fn bounded_repeats_over_long_texts_match_oracle(rules in numbered(pat_strategy()), text in long_text_strategy(), cuts in cuts_strategy()) {
        check_str(&rules, &text, &cuts)?;
    }

    /// The same as byte streams.
    #[test]
    fn bounded_repeats_over_long_bytes_match_oracle(rules in numbered(pat_strategy()), text in long_text_strategy(), cuts in cuts_strategy()) {
        check_bytes(&rules, text.as_bytes(), &cuts)?;
    }
}

const EMAIL64: &str = r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]+\.[A-Za-z]{2,}";

/// Deterministic base64 lines with, now and then, an email address (whose
/// local part runs into the base64 before it) or a lone `@`.
fn base64_with_emails(len: usize) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut rng = run::Rng::new("base64");
    let mut out = String::new();
    while out.len() < len {
        for _ in 0..76 {
            match rng.below(400) {
                0 => out.push_str("@ex.com"),
                1 => out.push('@'),
                2 => out.push_str(" ann@mail.example.org "),
                _ => out.push(ALPHABET[rng.below(64)] as char),
            }
        }
        out.push('\n');
    }
    out
}

fn rules_of(pats: &[Pat]) -> Vec<Rule> {
    pats.iter()
        .enumerate()
        .map(|(i, pat)| Rule {
            pat: pat.clone(),
            repl: Repl::Text(format!("<{i}>")),
        })
        .collect()
}

/// The benchmark's email rule over base64 with addresses in it, alone, with
/// a later-listed rule that starts earlier, and with a literal inside it:
/// 4 KiB chunks, random cuts and one byte at a time, every engine.
#[test]
fn email64_over_base64_matches_oracle() {
    let text = base64_with_emails(6000);
    let sets = [
        vec![Pat::Regex(EMAIL64.into())],
        vec![Pat::Literal("com".into()), Pat::Regex(EMAIL64.into())],
        vec![
            Pat::Regex(r"[a-z]{0,200}x".into()),
            Pat::Regex(EMAIL64.into()),
        ],
    ];
    let hay = text.as_bytes();
    let points: Vec<usize> = (0..=hay.len()).collect();
    let mut rng = run::Rng::new("email64");
    for pats in &sets {
        let rules = rules_of(pats);
        let want = Oracle::new(&rules).replace(hay);
        assert!(show(&want).contains("<"), "the text has matches");
        for engine in ENGINES {
            let compiled = compile_for(&rules, engine);
            let pages: Vec<usize> = (4096..hay.len()).step_by(4096).collect();
            check_stream(&compiled, Api::Bytes, hay, &pages, &want).unwrap();
            check_stream(&compiled, Api::Str, hay, &rng.cuts(&points), &want).unwrap();
            check_stream(&compiled, Api::Bytes, hay, run::interior(&points), &want).unwrap();
        }
    }
}

/// After base64 with no `@`, the stream holds exactly the run of bytes the
/// local part allows at its end, at most 64 of them: everything before can
/// no longer be part of a match, whatever follows.
#[test]
fn email64_holds_only_the_last_local_part() {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let local = |b: u8| b.is_ascii_alphanumeric() || b"._%+-".contains(&b);
    let rules = rules_of(&[Pat::Regex(EMAIL64.into())]);
    let mut rng = run::Rng::new("holds");
    for engine in [
        Engine::Fast,
        Engine::General,
        Engine::Lazy,
        Engine::Migrating,
    ] {
        let compiled = compile_for(&rules, engine);
        for len in [1, 2, 63, 64, 65, 100, 5000] {
            for _ in 0..20 {
                let text: Vec<u8> = (0..len)
                    .map(|_| match rng.below(100) {
                        0 => b'\n',
                        _ => ALPHABET[rng.below(64)],
                    })
                    .collect();
                let run = text.iter().rev().take_while(|&&b| local(b)).count();
                let mut r = compiled.replacer();
                let out = r.feed_bytes(&text).unwrap();
                assert_eq!(r.held(), run.min(64), "{engine:?} {}", show(&text));
                assert_eq!(out, text[..len - r.held()]);
            }
        }
    }
}

/// `[a-z]{0,200}x` over a long lowercase run: more live candidates than a
/// memo holds configurations, so it starts over and stays exact.
#[test]
fn long_lowercase_runs_outgrow_the_memo() {
    let run = "abcdefghijklmnopqrstuvw".repeat(40);
    let text = format!("{run}x {run} {run}yx");
    let rules = rules_of(&[
        Pat::Regex(r"[a-z]{0,200}x".into()),
        Pat::Regex(r"[a-z]{3}y".into()),
    ]);
    let want = Oracle::new(&rules).replace(text.as_bytes());
    for engine in ENGINES {
        let compiled = compile_for(&rules, engine);
        for chunk in [1, 7, 64, 4096] {
            let cuts: Vec<usize> = (chunk..text.len()).step_by(chunk).collect();
            check_stream(&compiled, Api::Str, text.as_bytes(), &cuts, &want).unwrap();
        }
    }
}

/// Inputs on which a gate that reached back one byte too few went wrong
/// (found by the properties above against a deliberately broken gate).
#[test]
fn gate_reaches_back_over_the_whole_bounded_part() {
    for (pat, text) in [
        (r"[a-z]{2,4}(?:x|yz)", "abcax"),
        (r"[a-z]{0,5}x", "aaaaaaaaax"),
    ] {
        let rules = rules_of(&[Pat::Regex(pat.into())]);
        check_holdback_with(&rules, text, EXAMPLES).unwrap();
        check_str(&rules, text, &[0.3, 0.6]).unwrap();
        check_bytes(&rules, text.as_bytes(), &[0.5]).unwrap();
    }
}
