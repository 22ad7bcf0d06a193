//! Hold-back that the case files cannot express: byte feeds cut inside
//! characters, and the bound on held bytes over long streams. (The
//! `&str` examples are in `testdata/holdback.toml`; the general property is
//! checked against the oracle in `differential`.)

use stream_replace::{Replacer, Rules};

fn feed(r: &mut Replacer, chunk: &[u8]) -> Vec<u8> {
    r.feed_bytes(chunk).unwrap()
}

#[test]
fn cut_inside_a_matching_character_is_held() {
    let rules = Rules::builder().literal("é", "e").build().unwrap();
    let mut r = rules.replacer();
    assert_eq!(feed(&mut r, b"caf\xC3"), b"caf");
    assert_eq!(r.held(), 1);
    assert_eq!(feed(&mut r, b"\xA9 x"), b"e x");
    assert_eq!(r.held(), 0);
}

#[test]
fn cut_inside_a_character_no_rule_can_match() {
    // No rule can start at 'Σ' (or at any character with that first byte):
    // the cut character need not be held.
    let rules = Rules::builder().literal("abc", "X").build().unwrap();
    let mut r = rules.replacer();
    assert_eq!(feed(&mut r, b"xy\xCE"), b"xy\xCE");
    assert_eq!(r.held(), 0);
    assert_eq!(feed(&mut r, b"\xA3ab"), b"\xA3");
    assert_eq!(r.held(), 2);
    assert_eq!(r.flush_bytes().unwrap(), b"ab");
}

#[test]
fn str_feed_releases_whole_characters_only() {
    let rules = Rules::builder().literal("中文", "Z").build().unwrap();
    let mut r = rules.replacer();
    assert_eq!(r.feed("ab中").unwrap(), "ab");
    assert_eq!(r.held(), 3);
    assert_eq!(r.feed("国").unwrap(), "中国");
    assert_eq!(r.held(), 0);
}

#[test]
fn invalid_bytes_are_released_at_once() {
    let rules = Rules::builder().regex(r"\w+@\w+", "[E]").build().unwrap();
    let mut r = rules.replacer();
    assert_eq!(feed(&mut r, b"\xFF\xFE ab"), b"\xFF\xFE ");
    assert_eq!(r.held(), 2);
    assert_eq!(feed(&mut r, b"\xFF"), b"ab\xFF");
    assert_eq!(r.held(), 0);
}

#[test]
fn held_is_zero_on_a_fresh_and_reset_stream() {
    let rules = Rules::builder().regex(r"\d+", "N").build().unwrap();
    let mut r = rules.replacer();
    assert_eq!((r.held(), r.offset()), (0, 0));
    assert_eq!(r.feed("").unwrap(), "");
    assert_eq!((r.held(), r.offset()), (0, 0));
    assert_eq!(r.feed("x 12").unwrap(), "x ");
    assert_eq!((r.held(), r.offset()), (2, 4));
    r.reset();
    assert_eq!((r.held(), r.offset()), (0, 0));
}

#[test]
fn completed_match_is_released_at_once() {
    // A complete literal cannot change, whatever follows: it is decided by
    // its last byte, not by the byte after it.
    let rules = Rules::builder().literal("hello", "bye").build().unwrap();
    let mut r = rules.replacer();
    assert_eq!(r.feed("abc hello").unwrap(), "abc bye");
    assert_eq!(r.held(), 0);
    // A greedy match is decided by the byte that ends it.
    let rules = Rules::builder().regex(r"\d+", "N").build().unwrap();
    let mut r = rules.replacer();
    assert_eq!(r.feed("12").unwrap(), "");
    assert_eq!(r.feed(" ").unwrap(), "N ");
    assert_eq!(r.held(), 0);
    // A lazy match needs nothing after it.
    let rules = Rules::builder()
        .regex(r"<think>[\s\S]*?</think>", "")
        .build()
        .unwrap();
    let mut r = rules.replacer();
    assert_eq!(r.feed("a<think>x</think>").unwrap(), "a");
    assert_eq!(r.held(), 0);
}

/// Deterministic prose with PII in it, `n` bytes or a little more.
fn prose(n: usize) -> String {
    const WORDS: &[&str] = &[
        "the",
        "model",
        "said",
        "that",
        "a",
        "gateway",
        "streams",
        "tokens",
        "to",
        "clients",
        "über",
        "naïve",
        "中文",
        "σοφία",
        "and",
        "12",
        "2024",
        "call",
        "me",
        "—",
        "ok.",
        "\n",
    ];
    let mut s = String::with_capacity(n + 64);
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut k = 0;
    while s.len() < n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        k += 1;
        match x % 40 {
            0 => s += &format!("ann{k}@example.com"),
            1 => s += &format!("{:03}-{:02}-{:04}", k % 1000, k % 100, k % 10_000),
            2 => s += &format!("<think>brief {k}</think>"),
            3 => s += &format!("1{}{:09}", 3 + k % 7, k),
            _ => s += WORDS[(x >> 8) as usize % WORDS.len()],
        }
        s.push(' ');
    }
    s
}

#[test]
fn held_stays_small_on_long_prose_in_one_byte_chunks() {
    let rules = Rules::builder()
        .regex(r"<think>[\s\S]*?</think>", "")
        .regex(r"[\w.+-]+@[\w-]+\.\w+", "[EMAIL]")
        .regex(r"\b\d{3}-\d{2}-\d{4}\b", "[SSN]")
        .regex(r"\b1[3-9]\d{9}\b", "[PHONE]")
        .literal("敏感词", "***")
        .build()
        .unwrap();
    let text = prose(100_000);
    let want = rules.replace_all(&text);
    assert!(want.contains("[EMAIL]") && want.contains("[SSN]") && want.contains("[PHONE]"));
    let mut r = rules.replacer();
    let mut out = Vec::with_capacity(want.len());
    let mut max_held = 0;
    for b in text.as_bytes() {
        r.feed_bytes_into(std::slice::from_ref(b), &mut out)
            .unwrap();
        max_held = max_held.max(r.held());
    }
    r.flush_bytes_into(&mut out).unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), want);
    // The longest thing ever held is a think block or an e-mail address
    // (under 40 bytes in this text), never a window that grows.
    assert!(max_held <= 40, "held up to {max_held} bytes");
}

#[test]
fn long_held_region_then_release() {
    // An unclosed block is held in full (and only it), however it is fed,
    // then released or replaced exactly.
    let rules = Rules::builder()
        .regex(r"<think>[\s\S]*?</think>", "[T]")
        .build()
        .unwrap();
    let body = "thoughts ".repeat(20_000);
    for closed in [false, true] {
        let mut r = rules.replacer();
        let mut out = r.feed("before <think>").unwrap();
        for piece in body.as_bytes().chunks(4) {
            out += &r.feed(std::str::from_utf8(piece).unwrap()).unwrap();
        }
        assert_eq!(out, "before ");
        assert_eq!(r.held(), "<think>".len() + body.len());
        if closed {
            out += &r.feed("</think> after").unwrap();
            assert_eq!(r.held(), 0);
            out += &r.flush().unwrap();
            assert_eq!(out, "before [T] after");
        } else {
            out += &r.flush().unwrap();
            assert_eq!(out, format!("before <think>{body}"));
        }
    }
}

/// With a rule that uses Unicode `\b`, the lazy DFA cannot follow non-ASCII
/// bytes, so it cannot prove on its own that a match is finished; the stream
/// must still release a decided match (and the text after it) at once.
#[test]
fn completed_match_is_released_at_once_with_unicode_word_boundaries() {
    let rules = Rules::builder()
        .regex(r"\bcafé\b", "[C]")
        .regex(r"<think>[\s\S]*?</think>", "")
        .build()
        .unwrap();
    let mut r = rules.replacer();
    assert_eq!(r.feed("a <think>x</think>").unwrap(), "a ");
    assert_eq!(r.held(), 0);
    assert_eq!(r.feed("b <think>é</think>!").unwrap(), "b !");
    assert_eq!(r.held(), 0);
    // `\b` after "café" needs the next character.
    assert_eq!(r.feed(" café").unwrap(), " ");
    assert_eq!(r.held(), "café".len());
    assert_eq!(r.feed(" ").unwrap(), "[C] ");
    assert_eq!(r.held(), 0);
    assert_eq!(r.flush().unwrap(), "");
}

/// The NFA fallback (after a cache clear, or for a Unicode `\b` rule on
/// non-ASCII text) held a character cut at the end of a feed although no
/// match can start with it; the DFA path releases it at once. Both must.
#[test]
fn nfa_fallback_releases_a_cut_character_no_match_can_start_with() {
    type Case = (&'static [&'static str], usize, &'static [u8], &'static [u8]);
    let cases: &[Case] = &[
        (&["cd"], 1, b"cd\xF0\x9F", b"<0>\xF0\x9F"),
        (&["cd"], 2 << 20, b"cd\xF0\x9F", b"<0>\xF0\x9F"),
        (
            &[r"\bfoo\b", "cd"],
            2 << 20,
            b"\xC3\xA9 xy\xF0\x9F",
            b"\xC3\xA9 xy\xF0\x9F",
        ),
        (
            &[r"\bfoo\b", "cd"],
            1,
            b"\xC3\xA9 xy\xF0\x9F",
            b"\xC3\xA9 xy\xF0\x9F",
        ),
        (&[r"(?m)\n^"], 1, b"b\n", b"b<0>"),
    ];
    for &(pats, cache, input, want) in cases {
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
            .unwrap();
        let mut r = rules.replacer();
        let out = r.feed_bytes(input).unwrap();
        assert_eq!(
            (out.as_slice(), r.held()),
            (want, 0),
            "{pats:?} with cache {cache} on {input:?}"
        );
    }
    // A cut character that a rule can start with is still held.
    let rules = Rules::builder()
        .literal("😀", "<smile>")
        .regex(r"\bfoo\b", "<foo>")
        .build()
        .unwrap();
    let mut r = rules.replacer();
    assert_eq!(r.feed_bytes(b"\xC3\xA9 \xF0\x9F").unwrap(), b"\xC3\xA9 ");
    assert_eq!(r.held(), 2);
    assert_eq!(r.feed_bytes(b"\x98\x80!").unwrap(), b"<smile>!");
}

/// Builds `pats` (`=text` for a literal, a regex otherwise), rule `i`
/// replaced by `<i>`, with `config`.
fn numbered_rules(pats: &[&str], config: stream_replace::Config) -> Rules {
    let mut b = Rules::builder();
    for (i, p) in pats.iter().enumerate() {
        match p.strip_prefix('=') {
            Some(lit) => b.literal(lit, format!("<{i}>")),
            None => b.regex(p, format!("<{i}>")),
        };
    }
    b.config(config).build().unwrap()
}

/// A literal decided at a start waited for a regex thread of a later rule
/// at the same start (`\w+` after literal `a`), without bound: one feed of
/// `"a1a1a1"` released nothing and held all six bytes. Once one matcher
/// decides a match at `s` for rule `r`, the other matchers' candidates at
/// `s` with a later rule are dead.
#[test]
fn decided_literal_does_not_wait_for_a_later_rule_at_its_start() {
    for lits in [true, false] {
        let config = stream_replace::Config::new().literal_matcher(lits);
        let rules = numbered_rules(&[r"\d", "=a", r"\w+"], config);
        let mut r = rules.replacer();
        assert_eq!(r.feed("a1a1a1").unwrap(), "<1><0><1><0><1><0>", "{lits}");
        assert_eq!(r.held(), 0, "literal matcher {lits}");
        assert_eq!(r.flush().unwrap(), "");
    }
}

/// The same bug over a long benign stream: 2 MiB of `"a1"` in 4 KiB
/// chunks hit the held limit with nothing released.
#[test]
fn decided_literal_does_not_grow_the_held_region_to_the_limit() {
    let rules = numbered_rules(&[r"\d", "=a", r"\w+"], stream_replace::Config::new());
    // 2 MiB, twice the default held limit (a tenth of it in debug builds,
    // with a limit of 64 KiB).
    let (pairs, rules) = if cfg!(debug_assertions) {
        let config = stream_replace::Config::new().max_held(64 << 10);
        (100 << 10, numbered_rules(&[r"\d", "=a", r"\w+"], config))
    } else {
        (1 << 20, rules)
    };
    let text = "a1".repeat(pairs);
    let mut r = rules.replacer();
    let mut out = String::new();
    let mut max_held = 0;
    for piece in text.as_bytes().chunks(4096) {
        r.feed_into(std::str::from_utf8(piece).unwrap(), &mut out)
            .unwrap();
        max_held = max_held.max(r.held());
    }
    out += &r.flush().unwrap();
    assert_eq!(out, "<1><0>".repeat(pairs));
    // At most a `\w+` candidate cut at the end of a chunk.
    assert!(max_held <= 1, "held up to {max_held} bytes");
}

/// The smaller shapes of the same bug, with the literal matcher deciding
/// and with the thread matcher deciding (the mirror): the minimal hold-back
/// the configuration without the literal matcher gives.
#[test]
fn decided_candidate_is_not_blocked_by_a_later_rule_of_another_matcher() {
    type Case = (&'static [&'static str], &'static str, &'static str, usize);
    let cases: &[Case] = &[
        (&["(?i)k", "=a", r"\w+"], "ak", "<1><0>", 0),
        (
            &[r"\b[ab]{2,40}\b", "=ab", "a[ab]{0,63}a"],
            "cabba",
            "c<1>b",
            1,
        ),
        (&["=xy", "[sz]", "=sab"], "s", "<1>", 0),
    ];
    for &(pats, text, want, held) in cases {
        for lits in [true, false] {
            let config = stream_replace::Config::new().literal_matcher(lits);
            let rules = numbered_rules(pats, config);
            let mut r = rules.replacer();
            let out = r.feed(text).unwrap();
            assert_eq!(
                (out.as_str(), r.held()),
                (want, held),
                "{pats:?} on {text:?}, literal matcher {lits}"
            );
            let mut whole = out;
            whole += &r.flush().unwrap();
            assert_eq!(whole, rules.replace_all(text), "{pats:?} on {text:?}");
        }
    }
}

/// With a lazy DFA cache so small that the stream runs on the NFA
/// fallback, a character cut at the end of a byte feed held a match that
/// was already decided before it.
#[test]
fn cut_character_after_a_decided_match_does_not_hold_it_on_the_nfa() {
    type Case = (
        &'static str,
        &'static [&'static [u8]],
        &'static [(&'static [u8], usize)],
    );
    let cases: &[Case] = &[
        (
            "😀+",
            &[b"\xF0\x9F\x98\x80\xE6", b"\x96\x87"],
            &[(b"<0>\xE6", 0), (b"\x96\x87", 0)],
        ),
        (
            r"\w+",
            &[b"k", b"\xF0", b"\x9F", b"\x98"],
            // A word character may follow until `\x98` rules it out.
            &[(b"", 1), (b"", 2), (b"", 3), (b"<0>\xF0\x9F\x98", 0)],
        ),
    ];
    for &(pat, feeds, want) in cases {
        for cache in [2 << 20, 1] {
            let config = stream_replace::Config::new()
                .dfa(stream_replace::DfaKind::Lazy)
                .cache_capacity(cache);
            let rules = numbered_rules(&[pat], config);
            let mut r = rules.replacer();
            for (chunk, &(out, held)) in feeds.iter().zip(want) {
                let got = r.feed_bytes(chunk).unwrap();
                assert_eq!(
                    (got.as_slice(), r.held()),
                    (out, held),
                    "{pat:?} with cache {cache} after {chunk:?}"
                );
            }
        }
    }
}

/// `(?i)σ` (rule 0) then `\w\b.` (rule 1), fed `"σ"`: rule 0 matches both
/// bytes of `σ` and rule 1 can only start at the same place, so whatever
/// follows, the match is rule 0 over `0..2`. The stream held `"σ"`.
#[test]
fn caseless_sigma_before_a_later_rule_at_its_start_is_released_at_once() {
    for dfa in [
        stream_replace::DfaKind::Dense,
        stream_replace::DfaKind::Lazy,
    ] {
        let config = stream_replace::Config::new().dfa(dfa);
        let rules = numbered_rules(&["(?i)σ", r"\w\b."], config);
        let mut r = rules.replacer();
        assert_eq!(r.feed("σ").unwrap(), "<0>", "{dfa:?}");
        assert_eq!(r.held(), 0, "{dfa:?}");
        let mut whole = String::from("<0>");
        whole += &r.flush().unwrap();
        assert_eq!(whole, rules.replace_all("σ"), "{dfa:?}");
    }
}

/// `(?s).` (rule 0), fed `"a"`, with `\w\b.` (rule 1) able to start at
/// the same place: rule 0 matches the whole character, whatever follows, so
/// the match is decided. The stream held `"a"` (and the last character of
/// `"ab"`, `"σ"`, `"1"`) behind rule 1. Alone, `(?s).` was released at once;
/// it still must be.
#[test]
fn any_character_rule_before_a_later_rule_at_its_start_is_released_at_once() {
    type Case = (&'static [&'static str], &'static str, &'static str);
    let cases: &[Case] = &[
        (&["(?s)."], "a", "<0>"),
        (&["(?s).", r"\w\b."], "a", "<0>"),
        (&["(?s).", r"\w\b."], "ab", "<0><0>"),
        (&["(?s).", r"\w\b."], "σ", "<0>"),
        (&["(?s).", r"\w\b."], "1", "<0>"),
    ];
    for &(pats, text, want) in cases {
        for dfa in [
            stream_replace::DfaKind::Dense,
            stream_replace::DfaKind::Lazy,
        ] {
            let config = stream_replace::Config::new().dfa(dfa);
            let rules = numbered_rules(pats, config);
            let mut r = rules.replacer();
            let out = r.feed(text).unwrap();
            assert_eq!(
                (out.as_str(), r.held()),
                (want, 0),
                "{pats:?} on {text:?}, {dfa:?}"
            );
            let mut whole = out;
            whole += &r.flush().unwrap();
            assert_eq!(whole, rules.replace_all(text), "{pats:?} on {text:?}");
        }
    }
}

/// Rules with no literal to search for (an email whose local part is a
/// class common in prose) skip long idle text with a forward search and
/// a reverse search of the rules' prefixes. After a long feed only the
/// last word, which may still begin an email, is held; a character cut by
/// a byte feed keeps the word it ends; a `<think>` block begun anywhere
/// in the feed is held from its start.
#[test]
fn long_feeds_hold_only_what_may_still_begin_a_match() {
    for dfa in [
        stream_replace::DfaKind::Dense,
        stream_replace::DfaKind::Lazy,
    ] {
        let rules = Rules::builder()
            .regex(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}", "[EMAIL]")
            .regex(r"(?-u:\b)\d{3}-\d{2}-\d{4}(?-u:\b)", "[SSN]")
            .regex(r"<think>[\s\S]*?</think>", "")
            .config(stream_replace::Config::new().dfa(dfa))
            .build()
            .unwrap();
        let prose = "Some words, then more words; no address here. ".repeat(20);
        let cases: &[(String, usize)] = &[
            (format!("{prose}last"), "last".len()),
            (
                format!("{prose}mail bob@example.com and then {prose}tail"),
                "tail".len(),
            ),
            (
                format!("{prose}<think> a thought {prose}"),
                "<think> a thought ".len() + prose.len(),
            ),
            (format!("{prose}123-45-"), "123-45-".len()),
            // `é` cannot be in this email's local part.
            (format!("{prose}caf\u{e9}"), 0),
        ];
        for (text, held) in cases {
            let mut r = rules.replacer();
            let out = r.feed(text).unwrap();
            assert_eq!(r.held(), *held, "{dfa:?}: {:?}", &text[text.len() - 30..]);
            let whole = out + &r.flush().unwrap();
            assert_eq!(whole, rules.replace_all(text));
        }
        // A byte feed that cuts `é`, which a `\w` may be: the word it ends
        // is kept with it.
        let rules = Rules::builder()
            .regex(r"[\w.+-]+@\w+\.com", "[EMAIL]")
            .config(stream_replace::Config::new().dfa(dfa))
            .build()
            .unwrap();
        let text = format!("{prose}caf\u{e9}@ex.com");
        let cut = prose.len() + "caf".len() + 1;
        let mut r = rules.replacer();
        let mut out = feed(&mut r, &text.as_bytes()[..cut]);
        assert_eq!(r.held(), "caf".len() + 1, "{dfa:?}");
        out.extend(feed(&mut r, &text.as_bytes()[cut..]));
        out.extend(r.flush_bytes().unwrap());
        assert_eq!(String::from_utf8(out).unwrap(), rules.replace_all(&text));
    }
}

/// A `<think>` found by its head literal while another rule's prefix (a
/// class with `>` and space) covers `think> …` from just after the `<`:
/// the forward skip searched the heads only before the reverse search's
/// start, missed the one it cut, and released the `<`.
#[test]
fn a_think_tag_cut_by_another_rules_prefix_is_held() {
    let rules = Rules::builder()
        .regex(r"[\w> ]+@x", "[AT]")
        .regex(r"<think>[\s\S]*?</think>", "")
        .build()
        .unwrap();
    let first = "zz zz zz zz zz zz zz zz zz zz zz <think> more text";
    let text = format!("{first} and more</think> after");
    let mut r = rules.replacer();
    let mut out = r.feed(first).unwrap();
    assert_eq!(out, "zz zz zz zz zz zz zz zz zz zz zz ");
    assert_eq!(r.held(), "<think> more text".len());
    out += &r.feed(&text[first.len()..]).unwrap();
    out += &r.flush().unwrap();
    assert_eq!(out, rules.replace_all(&text));
}
