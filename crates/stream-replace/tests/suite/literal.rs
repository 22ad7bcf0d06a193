//! The literal matcher: named regressions, routing of `(?i)` literals,
//! captures of literal rules, and big literal sets. Each check runs with
//! the literal matcher on and off, against the oracle, through every
//! two-part split and one byte at a time.

use stream_replace::{Config, Pattern, Replacement, Rules};

use crate::oracle::{self, Oracle, Pat, Repl, Rule, show};
use crate::run::{self, Api, chunks_at};

/// Rules numbered `<i>`: `l:` makes a literal, anything else a regex.
fn rules(pats: &[&str]) -> Vec<Rule> {
    pats.iter()
        .enumerate()
        .map(|(i, p)| Rule {
            pat: match p.strip_prefix("l:") {
                Some(l) => Pat::Literal(l.to_string()),
                None => Pat::Regex(p.to_string()),
            },
            repl: Repl::Text(format!("<{i}>")),
        })
        .collect()
}

/// The literal matcher with its DFA, with its NFA (a DFA size limit of
/// 0), with its NFA and a front table of a few rows, and off, with a
/// label for each.
fn literal_configs() -> [(Config, &'static str); 4] {
    [
        (Config::new(), "literal matcher, DFA"),
        (
            Config::new().literal_dfa_size_limit(0),
            "literal matcher, NFA",
        ),
        (
            Config::new().literal_dfa_size_limit(128),
            "literal matcher, NFA with a front",
        ),
        (Config::new().literal_matcher(false), "no literal matcher"),
    ]
}

/// Checks `text` against the oracle: `replace_all`, every two-part split,
/// one byte at a time, and the given chunks, with the literal matcher's
/// DFA, its NFA, its NFA with a front, and the literal matcher off.
fn check(pats: &[&str], chunks: &[&str]) {
    let rules = rules(pats);
    let text = chunks.concat();
    let hay = text.as_bytes();
    let want = Oracle::new(&rules).replace(hay);
    for (config, name) in literal_configs() {
        let compiled = oracle::build_with(&rules, config).unwrap();
        let label = format!("{pats:?} on {text:?}, {name}");
        assert_eq!(
            show(compiled.replace_all(&text).as_bytes()),
            show(&want),
            "{label}"
        );
        let given: Vec<&[u8]> = chunks.iter().map(|c| c.as_bytes()).collect();
        let got = run::stream(&mut compiled.replacer(), Api::Str, &given).unwrap();
        assert_eq!(show(&got), show(&want), "{label}, chunks {chunks:?}");
        let points: Vec<usize> = (0..=hay.len()).collect();
        for &cut in &points {
            let got = run::stream(
                &mut compiled.replacer(),
                Api::Bytes,
                &chunks_at(hay, &[cut]),
            )
            .unwrap();
            assert_eq!(show(&got), show(&want), "{label}, cut at {cut}");
        }
        let got = run::stream(
            &mut compiled.replacer(),
            Api::Bytes,
            &chunks_at(hay, run::interior(&points)),
        )
        .unwrap();
        assert_eq!(show(&got), show(&want), "{label}, one byte at a time");
    }
}

/// A short literal found inside a longer one cut by the end of a feed
/// must not win over it (the prefilter bug of an earlier engine).
#[test]
fn longer_literal_cut_by_a_feed_wins() {
    check(&["l:password", "l:ass"], &["my passw", "ord is"]);
    check(&["l:password", "l:ass"], &["my passw", "ord"]);
    check(&["l:password", "l:ass"], &["my passw", "ork"]);
    check(&["l:bc", "l:abcd"], &["xab", "cd"]);
    check(&["l:bc", "l:abcd"], &["xab", "ce"]);
}

/// A chunk of many matches, each decided where it is in the chunk, with
/// literals overlapping in every way: a later-listed one starting earlier,
/// one inside another, and a longer one cut by the end of the chunk that
/// must win over a shorter one the chunk holds whole.
#[test]
fn long_chunk_of_matches_decided_in_place() {
    let pats = ["l:password", "l:ass", "l:word", "l:swo", "l:密码"];
    check(
        &pats,
        &["a pass, a password, swords, 密码 and a passwo", "rds; pass"],
    );
    check(&pats, &["words swords passwords 密", "码 pas", "s"]);
    check(&pats, &["x".repeat(40).as_str(), " passwor", "d ass"]);
}

/// A literal whose match a regex rule could still extend or beat: the
/// SSN shape of the same bug.
#[test]
fn literal_with_a_regex_sharing_its_text() {
    check(&["l:123-45-6789", r"-+\B"], &[" <123-45-67", "89"]);
    check(&[r"-+\B", "l:123-45-6789"], &[" <123-45-67", "89"]);
    check(&["abc|b", "l:bc"], &["xab", "c"]);
    check(&["l:bc", "abcd|bc"], &["ab", "cd"]);
    check(&["c|bcd|abcde", "l:bcd", "l:cd"], &["abcd", "e"]);
    check(&["l:b", "c|bcd|abcde"], &["abcd", "f"]);
}

/// A literal inside a regex's match, and a regex alternation covering a
/// literal: the earliest start wins, then the lower rule.
#[test]
fn literal_inside_a_regex_match() {
    check(
        &["l:foo", r"<think>[\s\S]*?</think>"],
        &["<think>a foo", " b</think> foo"],
    );
    check(
        &[r"<think>[\s\S]*?</think>", "l:foo"],
        &["<think>a foo", " b</think> foo"],
    );
    check(&[r"\w+", "l:hello"], &["say hel", "lo there"]);
    check(&["l:hello", r"\w+"], &["say hel", "lo there"]);
    check(&["a|ab", "l:abc"], &["ab", "c abc"]);
}

/// Regression: a literal listed after a rule that matches the empty string.
/// Where that rule's empty match is decided (or skipped, after the previous
/// match), `find_iter` takes no match starting there, so such literals stay
/// on the regex engine.
#[test]
fn literal_after_an_empty_rule() {
    check(&["", "l:<think>"], &["a<thi", "nk>a"]);
    check(&["x*", "l:ab"], &["ab", "ab"]);
    check(&["l:ab", "x*"], &["ab", "ab"]);
}

/// Regression: at the end of input, a literal matcher with nothing alive
/// blocked a decided empty match at the end (its position counted as a
/// place a literal could still start).
#[test]
fn literal_before_an_empty_rule_at_end_of_input() {
    check(&["l:a", ""], &["b", "a", "b"]);
    check(&["l:a", "x*?"], &["ba"]);
}

/// Regression: a complete literal with no longer one going on from it is
/// released by its last byte, not by the byte after it.
#[test]
fn complete_literal_is_released_at_once() {
    for (config, _) in literal_configs() {
        let rules = Rules::builder()
            .literal("hello", "bye")
            .literal("hell", "HELL")
            .regex(r"\d+", "N")
            .config(config)
            .build()
            .unwrap();
        let mut r = rules.replacer();
        assert_eq!(r.feed("abc hello").unwrap(), "abc bye");
        assert_eq!(r.held(), 0);
        // `hell` is complete but `hello` may still come: held.
        assert_eq!(r.feed(" hell").unwrap(), " ");
        assert_eq!(r.held(), 4);
        assert_eq!(r.feed("!").unwrap(), "HELL!");
    }
}

/// Regression: with both matchers, a long chunk is stepped in pieces; a
/// `&str` stream's pieces must end on character boundaries.
#[test]
fn pieces_of_a_long_chunk_keep_characters_whole() {
    let long =
        "σσσσσσσσσσσσσσσσσσσσσσσσσσσσσσσσσσσσ 中中中中中中中中中中中中中中中中中中中中".repeat(4);
    check(&["l:敏感词", r"\d+"], &[long.as_str(), "敏感", "词 12"]);
    check(&["l:中中", r"<think>[\s\S]*?</think>"], &[long.as_str()]);
}

/// `(?i)` literals go to the literal matcher only when ASCII case folding
/// is exact: `k` and `s` also fold to the Kelvin sign and the long s.
#[test]
fn caseless_literals_fold_exactly() {
    check(&["(?i)kiss"], &["KISS \u{212A}i\u{17F}\u{17F} kiss"]);
    check(&["(?i)hello", "(?i)abc"], &["HeLLo aBc ABC", " hello"]);
    check(&["(?i)hello", "l:abc"], &["HeLLo aBc abc"]);
    check(&["(?i:a)b", "l:x"], &["Ab AB ab x"]);
    check(&["(?i)é", "l:x"], &["É é x"]);
    check(&["(?i)中文", "(?i)ab"], &["中文 AB"]);
    check(&["(?-u:(?i)ab)", "l:x"], &["aB x"]);
}

/// A caseless literal without letters (`(?i)12`, which the parser reports
/// as case-sensitive, and `(?i)--`) joins the caseless literals' automaton
/// (the cliff: it used to send them all to the regex engine); listed
/// before or after a lettered literal that overlaps it, rule order holds.
#[test]
fn letterless_caseless_literal_among_caseless_ones() {
    check(&["(?i)ab", "(?i)12", "(?i)cd"], &["AB 12 cD", "1", "2 aB"]);
    check(&["(?i)a1", "(?i)1"], &["A1 a1 1 xa", "1"]);
    check(&["(?i)1", "(?i)a1"], &["A1 a1 1 xa", "1"]);
    check(&["(?i)--", "(?i)x-", "(?i)-x"], &["X--X x-x -", "-X"]);
    check(&["l:12", "(?i)a12", "(?i)b"], &["A12 12 B a1", "2b"]);
}

/// Lettered literals of both kinds: the larger kind stays on the literal
/// matcher, with the letterless ones, and the other goes to the regex
/// engine; matches are the same whichever it is.
#[test]
fn mixed_case_literals_with_letterless_ones() {
    check(
        &["(?i)ab", "l:Ab", "(?i)b1", "(?i)1", "l:A1", "(?i)cd"],
        &["AB Ab ab B1 A1 a1 1", "CD cd", "A", "b1"],
    );
    check(
        &["l:Ab", "l:b1", "(?i)1", "(?i)ab", "l:aB"],
        &["AB Ab aB ab B1 b1", "A", "b1"],
    );
}

/// CJK and emoji literals, cut inside their characters by byte streams.
#[test]
fn multibyte_literals() {
    check(
        &["l:敏感词", "l:感", "l:😀😀", "l:😀"],
        &["敏感敏感词😀😀😀"],
    );
    check(&["l:感", "l:敏感词"], &["敏感", "词"]);
}

/// A literal rule's replacement closure and template see the match as
/// group 0, with no other group, as a regex rule of the escaped literal
/// would.
#[test]
fn literal_captures() {
    for (config, _) in literal_configs() {
        let rules = Rules::builder()
            .literal_with("a.b", |c| {
                format!("[{}@{} of {}]", c.as_str(), c.get_match().start(), c.len())
            })
            .rule(Pattern::literal("x+y"), Replacement::template("<$0>"))
            .config(config)
            .build()
            .unwrap();
        assert_eq!(rules.replace_all("1 a.b x+y"), "1 [a.b@2 of 1] <x+y>");
        let mut r = rules.replacer();
        let out = r.feed("1 a.").unwrap()
            + &r.feed("b x+").unwrap()
            + &r.feed("y").unwrap()
            + &r.flush().unwrap();
        assert_eq!(out, "1 [a.b@2 of 1] <x+y>");
    }
}

/// Words `w0000`-style but made of letters, none a substring of another
/// (all the same length and distinct).
fn words(n: usize) -> Vec<String> {
    (0..n)
        .map(|mut i| {
            let mut w = String::from("q");
            for _ in 0..4 {
                w.push((b'a' + (i % 26) as u8) as char);
                i /= 26;
            }
            w
        })
        .collect()
}

/// `replace_all` with 10,000 literal rules on 64 KB runs on the literal
/// matcher (a `meta` regex over every rule once tried to allocate 27 GB),
/// and agrees with streams of the same input, on the literal matcher's DFA
/// and on its NFA.
#[test]
fn replace_all_with_ten_thousand_literals() {
    let words = words(10_000);
    let mut text = String::new();
    let mut i = 0;
    while text.len() < 64 << 10 {
        text += &words[(i * 7919) % words.len()];
        text += if i % 3 == 0 { " and " } else { " " };
        i += 1;
    }
    let mut outputs = Vec::new();
    for limit in [16 << 20, 0] {
        let mut b = Rules::builder();
        for w in &words {
            b.literal(w, "*");
        }
        let rules = b
            .config(Config::new().literal_dfa_size_limit(limit))
            .build()
            .unwrap();
        let whole = rules.replace_all(&text);
        assert!(!whole.contains('q'), "every word is replaced");
        let mut r = rules.replacer();
        let mut streamed = String::new();
        for chunk in text.as_bytes().chunks(5) {
            streamed += &String::from_utf8_lossy(&r.feed_bytes(chunk).unwrap());
        }
        streamed += &r.flush().unwrap();
        assert_eq!(streamed, whole, "DFA size limit {limit}");
        outputs.push(whole);
    }
    assert_eq!(outputs[0], outputs[1], "the DFA and the NFA agree");
}

/// A set of literals builds no regex: a literal that would be too big for
/// the regex engine's size limit builds on the literal matcher.
#[test]
fn literals_on_their_matcher_ignore_the_size_limit() {
    let words = words(2000);
    let build = |on: bool| {
        let mut b = Rules::builder();
        for w in &words {
            b.literal(w, "X");
        }
        b.config(Config::new().size_limit(64 << 10).literal_matcher(on))
            .build()
    };
    assert!(build(false).is_err());
    let rules = build(true).unwrap();
    assert_eq!(rules.replace_all(&format!("a {} b", words[1999])), "a X b");
}

/// A set of literals steps an idle chunk in place and copies only what it
/// holds at the end; a held part longer than that path allows goes through
/// the tape instead. Both stay exact.
#[test]
fn long_literal_held_across_chunks() {
    let long = format!("{}y", "x".repeat(100));
    let pat = format!("l:{long}");
    let text = format!("a {} b {long} c", "x".repeat(150));
    check(&[pat.as_str(), "l:xy"], &[text.as_str()]);
    let (a, b) = text.split_at(120);
    check(&[pat.as_str(), "l:xxy"], &[a, b]);
}

/// Caseless and case-sensitive literals with letters, more of one kind:
/// past `Config::split_literal_limit` of the fewer kind the build fails
/// at once, naming the limit and its setter; raised, the set builds and
/// agrees with the regex engine alone and with the oracle.
#[test]
fn split_literal_limit_names_its_setter() {
    let pats = ["(?i)alpha", "l:Beta", "(?i)gamma", "l:Delta", "(?i)omega"];
    let build =
        |limit: usize| oracle::build_with(&rules(&pats), Config::new().split_literal_limit(limit));
    let err = build(1).unwrap_err();
    assert_eq!(err.kind(), &stream_replace::ErrorKind::TooBig);
    assert_eq!(err.rule(), Some(3));
    assert_eq!(err.pattern(), Some("Delta"));
    let message = err.to_string();
    assert!(
        message.contains("limit of 1 ") && message.contains("Config::split_literal_limit"),
        "{message}"
    );
    let text = "ALPHA Beta beta gAmMa Delta DELTA Omega";
    assert_eq!(
        build(2).unwrap().replace_all(text),
        "<0> <1> beta <2> <3> DELTA <4>"
    );
    check(&pats, &["ALPHA Beta beta gAm", "Ma Delta DELTA Omega"]);
}

/// Rules that match an ASCII letter in either case and go to the regex
/// engine count against `Config::caseless_regex_limit`: caseless regexes
/// and caseless literals with `k` or `s`, not caseless literals on the
/// literal matcher, letterless ones or case-sensitive regexes. Past the
/// limit the build fails at once, naming it and its setter; raised, the
/// set builds.
#[test]
fn caseless_regex_limit_names_its_setter() {
    let pats = [
        "(?i)kiss",
        r"(?i)ab\d",
        "(?i)hello",
        "(?i)12",
        r"[a-z]x\d",
        r"(?i:[a-z])x\d",
        "(?i)sky",
    ];
    let build =
        |limit: usize| oracle::build_with(&rules(&pats), Config::new().caseless_regex_limit(limit));
    let err = build(2).unwrap_err();
    assert_eq!(err.kind(), &stream_replace::ErrorKind::TooBig);
    assert_eq!(err.rule(), Some(6));
    let message = err.to_string();
    assert!(
        message.contains("more than 2 caseless rules")
            && message.contains("limit of 2,")
            && message.contains("Config::caseless_regex_limit"),
        "{message}"
    );
    let text = "\u{212A}I\u{17F}S AB1 Hello 12 ax1 Bx2 \u{17F}\u{212A}y";
    assert_eq!(
        build(3).unwrap().replace_all(text),
        "<0> <1> <2> <3> <4> <5> <6>"
    );
    check(&pats, &[&text[..9], &text[9..]]);
}

/// The split, differentially: random sets of caseless and case-sensitive
/// literals (with `k` and `s`, which keep caseless ones on the regex
/// engine, and letterless ones) on text of those words in random case,
/// with Kelvin signs and long s's, give the oracle's output with the
/// literal matcher on (the split) and off (the regex engine alone).
#[test]
fn caseless_split_agrees_with_the_regex_engine() {
    const SYLLABLES: &[&str] = &["ka", "ri", "mo", "tes", "lu", "12", "-", "sar", "bo"];
    let mut seed = 0x5EED_u64;
    let mut next = |n: usize| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((seed >> 33) % n as u64) as usize
    };
    for _ in 0..6 {
        let mut words = Vec::new();
        let mut pats = Vec::new();
        for _ in 0..12 {
            let w: String = (0..1 + next(3))
                .map(|_| SYLLABLES[next(SYLLABLES.len())])
                .collect();
            pats.push(match next(3) {
                0 => format!("l:{}", w.to_uppercase()),
                1 => format!("l:{w}"),
                _ => format!("(?i){}", regex_syntax::escape(&w)),
            });
            words.push(w);
        }
        let mut text = String::new();
        for _ in 0..16 {
            let w = &words[next(words.len())];
            for c in w.chars() {
                text.push(match (c, next(4)) {
                    ('k', 0) => '\u{212A}',
                    ('s', 0) => '\u{17F}',
                    (c, 1) => c.to_ascii_uppercase(),
                    (c, _) => c,
                });
            }
            text.push(if next(2) == 0 { ' ' } else { 'k' });
        }
        let pats: Vec<&str> = pats.iter().map(String::as_str).collect();
        let cut = text.char_indices().nth(text.chars().count() / 2).unwrap().0;
        check(&pats, &[&text[..cut], &text[cut..]]);
    }
}
