//! The secrets pack (feature `pii`): credentials by label, vendor keys and
//! tokens, and the optional detectors, run together with the `pii` pack as
//! a guardrail would run them (`pii().and(secrets())`).
//!
//! Every rule has positive examples (the part between `|` is what the rule
//! masks; for rules with a template, the text around it stays) and negative
//! ones, left unchanged by both packs. Each example is checked alone and in
//! a few contexts: `replace_all` against the expected text and against an
//! independent oracle (`regex_automata::meta`, anchored per rule, with the
//! rule's validator and template), and a stream against `replace_all` in
//! one feed, in every two-part split, one character per feed and one byte
//! per feed.
//!
//! The recall test generates 5 samples of every documented format from a
//! seeded generator, independent of the patterns.

use std::sync::LazyLock;

use chunk_invariance::{Splits, assert_chunk_invariant_with};
use regex_automata::{Anchored, Input, PatternID, meta};
use stream_replace::Rules;
use stream_replace::pack::{self, Pack, PackRule};

/// The default packs, blocks turned into masks (the blocks are the `pii`
/// tests' concern).
static RULES: LazyLock<Rules> = LazyLock::new(|| build(&default_packs().without_blocks()));

static ORACLE: LazyLock<Oracle> = LazyLock::new(|| Oracle::new(default_packs()));

fn default_packs() -> Pack {
    pack::pii().and(pack::secrets())
}

fn build(pack: &Pack) -> Rules {
    let mut builder = Rules::builder();
    pack.add_to(&mut builder);
    builder.build().expect("the packs compile")
}

struct Oracle {
    re: meta::Regex,
    rules: Vec<PackRule>,
}

impl Oracle {
    fn new(pack: Pack) -> Oracle {
        let patterns: Vec<&str> = pack.rules().iter().map(|r| r.pattern).collect();
        Oracle {
            re: meta::Regex::new_many(&patterns).expect("the oracle compiles"),
            rules: pack.rules().to_vec(),
        }
    }

    /// At `at`: the first rule that matches anchored there and whose
    /// validator accepts the match, with its replacement text.
    fn at(&self, haystack: &str, at: usize) -> Option<(std::ops::Range<usize>, String)> {
        let mut caps = self.re.create_captures();
        (0..self.rules.len()).find_map(|k| {
            let input = Input::new(haystack)
                .range(at..)
                .anchored(Anchored::Pattern(PatternID::must(k)));
            self.re.search_captures(&input, &mut caps);
            let m = caps.get_match()?;
            let rule = &self.rules[k];
            if !rule.validator.is_none_or(|v| v(&haystack[m.range()])) {
                return None;
            }
            assert!(!m.is_empty());
            let text = match rule.template {
                Some(t) => caps.interpolate_string(haystack, t),
                None => rule.mask.to_owned(),
            };
            Some((m.range(), text))
        })
    }

    fn replace_all(&self, haystack: &str) -> String {
        let mut out = String::new();
        let (mut pos, mut last) = (0, 0);
        while pos < haystack.len() {
            match self.at(haystack, pos) {
                Some((span, text)) => {
                    out.push_str(&haystack[last..span.start]);
                    out.push_str(&text);
                    pos = span.end;
                    last = span.end;
                }
                None => {
                    pos += 1;
                    while !haystack.is_char_boundary(pos) {
                        pos += 1;
                    }
                }
            }
        }
        out.push_str(&haystack[last..]);
        out
    }
}

/// Checks `input` against `want`, the oracle, and streams: every two-part
/// split, one character per feed, one byte per feed.
fn check(rules: &Rules, input: &str, want: &str) {
    let got = rules.replace_all(input);
    assert_eq!(got, want, "replace_all of {input:?}");
    assert_eq!(got, ORACLE.replace_all(input), "oracle on {input:?}");
    let one_char: Vec<usize> = input.char_indices().skip(1).map(|(i, _)| i).collect();
    let mut r = rules.replacer();
    assert_chunk_invariant_with(
        |chunks: chunk_invariance::Chunks<'_, str>| {
            let mut out: Vec<String> = chunks.map(|c| r.feed(c).expect("no held limit")).collect();
            out.push(r.flush().expect("no held limit"));
            out
        },
        |s: &str| rules.replace_all(s),
        input,
        Splits::TwoPart.then(Splits::Cuts(vec![one_char])),
    );
    let one_byte: Vec<usize> = (1..input.len()).collect();
    let mut r = rules.replacer();
    assert_chunk_invariant_with(
        |chunks: chunk_invariance::Chunks<'_, [u8]>| {
            let mut out: Vec<Vec<u8>> = chunks
                .map(|c| r.feed_bytes(c).expect("no held limit"))
                .collect();
            out.push(r.flush_bytes().expect("no held limit"));
            out
        },
        |b: &[u8]| rules.replace_all_bytes(b),
        input.as_bytes(),
        Splits::Cuts(vec![one_byte]),
    );
}

/// The contexts each example is put in.
const CONTEXTS: [(&str, &str); 4] = [
    ("", ""),
    ("see ", ", then."),
    ("«", "» — ok"),
    ("a\n", "\n"),
];

/// Rules that mask to the end of the line: only contexts that end the
/// line right after the example apply.
const TO_END_OF_LINE: &[&str] = &["cookie_header"];

/// `example` with its `|…|` part replaced by `mask`, and without the bars.
fn expected(example: &str, mask: &str) -> (String, String) {
    let parts: Vec<&str> = example.split('|').collect();
    assert_eq!(parts.len(), 3, "{example:?} marks one masked part");
    (parts.concat(), format!("{}{mask}{}", parts[0], parts[2]))
}

struct Case {
    id: &'static str,
    pos: &'static [&'static str],
    neg: &'static [&'static str],
}

fn rule(id: &str) -> PackRule {
    *pack::secrets()
        .get(id)
        .unwrap_or_else(|| panic!("no rule {id}"))
}

fn contexts(id: &str) -> impl Iterator<Item = (&'static str, &'static str)> + '_ {
    CONTEXTS.into_iter().filter(move |(_, after)| {
        !TO_END_OF_LINE.contains(&id) || after.is_empty() || *after == "\n"
    })
}

#[test]
fn every_secrets_rule_has_cases_and_formats() {
    let ids: Vec<&str> = SECRET_CASES.iter().map(|c| c.id).collect();
    let formats: Vec<&str> = SECRET_FORMATS.iter().map(|f| f.0).collect();
    let pii = pack::pii();
    for r in pack::secrets().rules() {
        if pii.get(r.id).is_some() {
            // Shared with `pii`: its cases are in the `pack` tests.
            continue;
        }
        assert!(ids.contains(&r.id), "no cases for {}", r.id);
        assert!(formats.contains(&r.id), "no format for {}", r.id);
    }
    for case in SECRET_CASES {
        assert!(!case.pos.is_empty() && !case.neg.is_empty(), "{}", case.id);
    }
}

#[test]
fn secrets_positives_are_masked_by_their_rule() {
    for case in SECRET_CASES {
        let rule = rule(case.id);
        for example in case.pos {
            let (input, want) = expected(example, rule.mask);
            for (before, after) in contexts(case.id) {
                check(
                    &RULES,
                    &format!("{before}{input}{after}"),
                    &format!("{before}{want}{after}"),
                );
            }
        }
    }
}

#[test]
fn secrets_negatives_pass_unchanged() {
    for case in SECRET_CASES {
        for v in case.neg {
            for (before, after) in CONTEXTS {
                let input = format!("{before}{v}{after}");
                check(&RULES, &input, &input);
            }
        }
    }
}

/// A small deterministic generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % n as u64) as usize
    }
}

/// `format` with each `{c:n}` replaced by `n` random characters of class `c`.
fn fill(format: &str, rng: &mut Rng) -> String {
    let class = |c: char| -> &'static str {
        match c {
            'A' => "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
            'H' => "0123456789abcdef",
            'X' => "0123456789ABCDEF",
            'U' => "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
            'L' => "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
            'B' => "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-",
            'b' => "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
            'D' => "0123456789",
            'l' => "abcdefghijklmnopqrstuvwxyz0123456789",
            'C' => "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
            _ => panic!("unknown class {c}"),
        }
    };
    let mut out = String::new();
    let mut rest = format;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = open + rest[open..].find('}').expect("a closed {");
        let spec = &rest[open + 1..close];
        let (c, n) = spec.split_once(':').expect("{c:n}");
        let chars = class(c.chars().next().unwrap()).as_bytes();
        for _ in 0..n.parse::<usize>().unwrap() {
            out.push(char::from(chars[rng.below(chars.len())]));
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

/// 5 samples of each documented format of each rule, each masked by its
/// rule in the default packs (recall 100%, or the test names the misses).
#[test]
fn recall_on_generated_formats() {
    let mut rng = Rng(26);
    let mut misses = Vec::new();
    let mut total = 0;
    for (id, formats) in SECRET_FORMATS {
        let rule = rule(id);
        let mut n = 0;
        while n < 5 {
            for format in *formats {
                let (input, want) = expected(&fill(format, &mut rng), rule.mask);
                let input = format!("value: {input}\n");
                let want = format!("value: {want}\n");
                if RULES.replace_all(&input) != want {
                    misses.push(input);
                }
                n += 1;
                total += 1;
            }
        }
    }
    assert!(total >= 5 * SECRET_FORMATS.len());
    assert!(
        misses.is_empty(),
        "{} of {total} missed: {misses:#?}",
        misses.len()
    );
}

include!("secrets_cases.rs");
