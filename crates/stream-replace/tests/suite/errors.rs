//! Building rules: every bad rule gives an error that names it, and
//! nothing panics.

use stream_replace::{Config, Error, ErrorKind, Pattern, Replacement, Rules};

fn err(b: &mut stream_replace::RulesBuilder) -> Error {
    match b.build() {
        Ok(r) => panic!("expected an error, built {r:?}"),
        Err(e) => e,
    }
}

#[test]
fn invalid_regex_names_rule_and_pattern() {
    let e = err(Rules::builder()
        .literal("ok", "fine")
        .regex(r"\d+", "N")
        .regex(r"(unclosed", "x"));
    assert_eq!(e.kind(), &ErrorKind::Syntax);
    assert_eq!(e.rule(), Some(2));
    assert_eq!(e.pattern(), Some("(unclosed"));
    let shown = e.to_string();
    assert!(shown.contains("rule 2"), "{shown}");
    assert!(shown.contains("(unclosed"), "{shown}");
    assert!(shown.contains("invalid pattern"), "{shown}");
}

#[test]
fn syntax_errors_of_many_shapes() {
    for bad in [
        "(unclosed",
        "unopened)",
        "[a-",
        "a{2,1}",
        r"\p{NoSuchClass}",
        r"\",
        "*a",
        "(?<n>a)(?<n>b)",
        // Look-around the regex crate does not support.
        "(?=a)",
        "(?<!a)b",
        r"\1",
        // Would match invalid UTF-8.
        r"(?-u:\xFF)",
    ] {
        let e = err(Rules::builder().literal("x", "y").regex(bad, "z"));
        assert_eq!(e.kind(), &ErrorKind::Syntax, "{bad:?}: {e}");
        assert_eq!(e.rule(), Some(1), "{bad:?}");
        assert_eq!(e.pattern(), Some(bad));
        assert!(e.to_string().contains("rule 1"), "{e}");
        // The same pattern as a literal is fine.
        let rules = Rules::builder().literal(bad, "<lit>").build().unwrap();
        assert_eq!(rules.replace_all(&format!("a{bad}b")), "a<lit>b");
    }
}

#[test]
fn unknown_named_group() {
    let e = err(Rules::builder().regex(r"(?<name>\w+)", "${nmae}"));
    assert_eq!(e.kind(), &ErrorKind::UnknownGroup);
    assert_eq!(e.rule(), Some(0));
    assert_eq!(e.pattern(), Some(r"(?<name>\w+)"));
    let shown = e.to_string();
    assert!(
        shown.contains("rule 0") && shown.contains("nmae"),
        "{shown}"
    );
}

#[test]
fn group_number_followed_by_text_is_a_name() {
    // As in `regex`, `$1a` names the group "1a"; that is an error here
    // rather than a silent empty string, and the message says how to write
    // group 1 followed by "a".
    let e = err(Rules::builder().literal("q", "r").regex(r"(\d)", "$1a"));
    assert_eq!(e.kind(), &ErrorKind::UnknownGroup);
    assert_eq!(e.rule(), Some(1));
    let shown = e.to_string();
    assert!(shown.contains("1a"), "{shown}");
    assert!(shown.contains("${1}"), "{shown}");
}

#[test]
fn group_number_out_of_range() {
    let e = err(Rules::builder().regex(r"(\d)", "$2"));
    assert_eq!(e.kind(), &ErrorKind::UnknownGroup);
    assert_eq!(e.rule(), Some(0));
    // A literal pattern has only group 0.
    let e = err(Rules::builder().rule(Pattern::literal("ab"), Replacement::template("$1")));
    assert_eq!(e.kind(), &ErrorKind::UnknownGroup);
    assert_eq!(e.pattern(), Some("ab"));
    // Group 0 and `$$` are always fine, and so is a `$` before a
    // character that cannot start a name.
    Rules::builder()
        .rule(
            Pattern::literal("ab"),
            Replacement::template("$0 $$1 $ ${0}"),
        )
        .build()
        .unwrap();
}

#[test]
fn literal_replacement_is_never_parsed() {
    let rules = Rules::builder()
        .rule(Pattern::regex(r"\d"), Replacement::literal("${nmae} $9"))
        .build()
        .unwrap();
    assert_eq!(rules.replace_all("1"), "${nmae} $9");
}

#[test]
fn too_big_pattern_names_rule() {
    let e = err(Rules::builder()
        .literal("a", "b")
        .regex(r"\w{1000}{1000}", "x"));
    assert_eq!(e.kind(), &ErrorKind::TooBig, "{e}");
    assert_eq!(e.rule(), Some(1));
    assert_eq!(e.pattern(), Some(r"\w{1000}{1000}"));
    let shown = e.to_string();
    assert!(
        shown.contains("rule 1") && shown.contains("size_limit"),
        "{shown}"
    );
}

#[test]
fn small_size_limit() {
    let e = err(Rules::builder()
        .regex(r"\w+", "w")
        .config(Config::new().size_limit(100)));
    assert_eq!(e.kind(), &ErrorKind::TooBig, "{e}");
    assert_eq!(e.rule(), Some(0));
    assert!(e.to_string().contains("100"), "{e}");
}

#[test]
fn rule_set_too_big_as_a_whole() {
    // Each rule fits the limit on its own, the set does not.
    let pattern = r"[a-z]{20}";
    let one = Rules::builder()
        .regex(pattern, "x")
        .config(Config::new().size_limit(usize::MAX))
        .build()
        .unwrap();
    drop(one);
    let mut limit = 1000;
    let fits = loop {
        let r = Rules::builder()
            .regex(pattern, "x")
            .config(Config::new().size_limit(limit))
            .build();
        if r.is_ok() {
            break limit;
        }
        limit *= 2;
        assert!(limit < 1 << 30, "a single small rule never fits");
    };
    let mut b = Rules::builder();
    b.config(Config::new().size_limit(fits));
    for _ in 0..64 {
        b.regex(pattern, "x");
    }
    let e = err(&mut b);
    assert_eq!(e.kind(), &ErrorKind::TooBig, "{e}");
    assert!(e.to_string().contains("size"), "{e}");
}

#[test]
fn errors_are_std_errors_and_send() {
    fn is_error<E: std::error::Error + Send + Sync + 'static>() {}
    is_error::<Error>();
    is_error::<stream_replace::StreamError>();
    let boxed: Box<dyn std::error::Error + Send + Sync> =
        Box::new(err(Rules::builder().regex("(", "")));
    assert!(boxed.to_string().contains("rule 0"));
}

#[test]
fn empty_and_odd_rule_sets_build() {
    let rules = Rules::builder().build().unwrap();
    assert!(rules.is_empty());
    assert_eq!(rules.replace_all("abc"), "abc");
    let mut r = rules.replacer();
    assert_eq!(r.feed("abc").unwrap(), "abc");
    assert_eq!(r.held(), 0);
    assert_eq!(r.flush().unwrap(), "");

    // Patterns that can never match, or only match empty.
    let rules = Rules::builder()
        .regex(r"[^\s\S]", "never")
        .regex(r"\b\B", "never")
        .regex(r"(?:)", "")
        .build()
        .unwrap();
    assert_eq!(rules.len(), 3);
    assert_eq!(rules.pattern(1).as_str(), r"\b\B");
    assert!(!rules.pattern(1).is_literal());
    assert_eq!(rules.replace_all("ab"), "ab");
}

/// Fuzz regressions: with a lazy DFA cache too small for the rule set,
/// building panicked on a stale state after a cache clear (`^` and `""`
/// with a 1-byte cache) or never finished (`a\b` and `""` at 800 bytes,
/// `\w+` at 16 KiB, an email rule at 32 KiB). Such rules must build and
/// stream exactly (on the slow path where the cache cannot hold the DFA).
#[test]
fn fuzz_tiny_cache_builds_and_streams_exactly() {
    let cases: &[(&[&str], usize)] = &[
        (&["^", ""], 1),
        (&["(?m)^", ""], 1),
        (&["(?Rm)^$", ""], 1),
        (&[r"a\b", ""], 800),
        (&[r"\w+"], 16 << 10),
        (&[r"[\w.+-]+@[\w-]+\.[\w.-]+"], 32 << 10),
    ];
    let text = "ab a\nann@x.io é\r\nσ a a1 _ b@c.d";
    for (pats, cache) in cases {
        let mut b = Rules::builder();
        for (i, p) in pats.iter().enumerate() {
            b.regex(p, format!("<{i}>"));
        }
        let rules = b
            .config(
                stream_replace::Config::new()
                    .dfa(stream_replace::DfaKind::Lazy)
                    .cache_capacity(*cache),
            )
            .build()
            .unwrap_or_else(|e| panic!("{pats:?} with cache {cache}: {e}"));
        let want = regex_automata::meta::Regex::new_many(pats).unwrap();
        let mut expected = String::new();
        let mut last = 0;
        for m in want.find_iter(text) {
            expected.push_str(&text[last..m.start()]);
            expected.push_str(&format!("<{}>", m.pattern().as_usize()));
            last = m.end();
        }
        expected.push_str(&text[last..]);
        assert_eq!(rules.replace_all(text), expected, "{pats:?}");
        let mut r = rules.replacer();
        let mut out = Vec::new();
        for b in text.as_bytes() {
            out.extend(r.feed_bytes(&[*b]).unwrap());
        }
        out.extend(r.flush_bytes().unwrap());
        assert_eq!(
            String::from_utf8(out).unwrap(),
            expected,
            "{pats:?} with cache {cache}, 1-byte chunks"
        );
    }
}

/// Fuzz regression (`stream_vs_whole`, `build_rules`): with a small cache,
/// the end-of-feed check of whether a match is already decided held a state
/// across a cache clear and panicked inside the lazy DFA. Every rule set
/// here must stream exactly with 1-byte chunks and with chunks that end
/// right after a completed match.
#[test]
fn fuzz_small_cache_settle_after_clear() {
    let sets: &[&[&str]] = &[
        &[
            r"<think>[\s\S]*?</think>",
            r"[\w.+-]+@[\w-]+\.\w+",
            r"\b\d{3}-\d{2}-\d{4}\b",
            r"sk-[A-Za-z0-9]{8}",
        ],
        &[r"\d+", r"[a-z]+\b", r"(?i)σ+", "x*?"],
        &[r"\w+", "", r"(?m)$"],
    ];
    let text = "a <think>x@y.io</think> 123-45-6789 sk-AbCd1234 ann@ex.io σΣ 42 done";
    for pats in sets {
        for cache in [1usize, 300, 1 << 10, 4 << 10] {
            let mut b = Rules::builder();
            for (i, p) in pats.iter().enumerate() {
                b.regex(p, format!("<{i}>"));
            }
            let rules = b
                .config(
                    stream_replace::Config::new()
                        .dfa(stream_replace::DfaKind::Lazy)
                        .cache_capacity(cache),
                )
                .build()
                .unwrap_or_else(|e| panic!("{pats:?} with cache {cache}: {e}"));
            let want = rules.replace_all(text);
            let re = regex_automata::meta::Regex::new_many(pats).unwrap();
            let mut expected = String::new();
            let mut last = 0;
            for m in re.find_iter(text) {
                expected.push_str(&text[last..m.start()]);
                expected.push_str(&format!("<{}>", m.pattern().as_usize()));
                last = m.end();
            }
            expected.push_str(&text[last..]);
            assert_eq!(want, expected, "{pats:?}");
            for size in [1usize, 2, 3, 5, 7] {
                let mut r = rules.replacer();
                let mut out = Vec::new();
                for chunk in text.as_bytes().chunks(size) {
                    out.extend(r.feed_bytes(chunk).unwrap());
                }
                out.extend(r.flush_bytes().unwrap());
                assert_eq!(
                    String::from_utf8_lossy(&out),
                    expected,
                    "{pats:?} cache {cache} chunks of {size}"
                );
            }
        }
    }
}

/// Fuzz regression (`build_rules`): `${}` is a reference to the group named
/// "" (as in `regex`, whose expansion gives nothing), not literal text; no
/// pattern has such a group, so building fails and names the rule.
#[test]
fn fuzz_empty_braced_group_name_is_unknown() {
    let e = err(Rules::builder().literal("x", "y").regex("E", "${}é"));
    assert_eq!(e.kind(), &ErrorKind::UnknownGroup);
    assert_eq!(e.rule(), Some(1));
    // A `$` that starts no reference stays literal, as in `regex`.
    let rules = Rules::builder().regex("E", "$ ${ $-").build().unwrap();
    assert_eq!(rules.replace_all("E"), "$ ${ $-");
}

/// Fuzz regressions (`build_rules`): rules whose dense DFA is small, or
/// never fits, but slow to determinize, because every DFA state stands for
/// many NFA states. `[\s\S]*?{1000}<think>{1000}\p{L}` keeps a thousand
/// live loops in each, every one closing over the others: its dense DFA is
/// under 1 MB and took seconds to build (a minute in the instrumented fuzz
/// build), where its lazy DFA takes milliseconds. The others keep up to a
/// thousand positions of `.{1000}` live in each state. The dense build is
/// bounded by its work as well as its size: the default `DfaKind::Auto`
/// gives the first two up early and streams on the lazy DFA, and
/// `DfaKind::Dense` fails with `TooBig` instead of working for seconds.
/// Every one of these rules must build and replace exactly.
#[test]
fn fuzz_slow_dense_builds_are_bounded() {
    use stream_replace::DfaKind;
    let build = |pattern: &str, kind: DfaKind| {
        Rules::builder()
            .regex(pattern, "[x]")
            .config(Config::new().dfa(kind))
            .build()
    };
    let live_loops = r"[\s\S]*?{1000}<think>{1000}\p{L}";
    let positions = r"(?U)[\s\S]*?[\s\S]*?.{1000}";
    for pattern in [live_loops, positions] {
        let auto = build(pattern, DfaKind::Auto).expect("builds on the lazy DFA");
        assert_eq!(auto.dense_dfa_size(), None, "{pattern}");
        let e = build(pattern, DfaKind::Dense).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::TooBig, "{pattern}: {e}");
    }

    let closes = format!("a<think{}é.", ">".repeat(1000));
    let short = format!("a<think{}é.", ">".repeat(999));
    let line = format!("@x y{}", "z".repeat(1200));
    let letters = format!("Éa{}", "A".repeat(1000));
    let cases: &[(&str, &[&str])] = &[
        (live_loops, &[&closes, &short]),
        (positions, &[&line, &line[..999]]),
        (r"\A@[\s\S]*?.[\s\S]*?\s.{1000}", &[&line, &line[..900]]),
        (r"\A@[\s\S]*?.[\s\S]*?(?m).{1000}", &[&line]),
        (
            r"[\s\S]*?(?i)\p{L}[\s\S]*?a{1000}",
            &[&letters, &letters[..900]],
        ),
    ];
    for &(pattern, texts) in cases {
        let rules = build(pattern, DfaKind::Auto).expect("builds");
        let re = regex_automata::meta::Regex::new(pattern).unwrap();
        for text in texts {
            let mut expected = String::new();
            let mut last = 0;
            for m in re.find_iter(*text) {
                expected.push_str(&text[last..m.start()]);
                expected.push_str("[x]");
                last = m.end();
            }
            expected.push_str(&text[last..]);
            assert_eq!(
                rules.replace_all(text),
                expected,
                "{pattern} on {} bytes",
                text.len()
            );
            let mut r = rules.replacer();
            let mut out = String::new();
            for c in text.chars() {
                out.push_str(&r.feed(c.encode_utf8(&mut [0; 4])).unwrap());
            }
            out.push_str(&r.flush().unwrap());
            assert_eq!(out, expected, "{pattern}, one character per feed");
        }
    }
}
