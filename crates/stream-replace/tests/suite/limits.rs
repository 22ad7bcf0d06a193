//! The cap on held bytes and the policy at the cap.

use stream_replace::{Config, HeldLimit, Rules, StreamError};

const THINK: &str = r"<think>[\s\S]*?</think>";

fn think_rules(max_held: usize, policy: HeldLimit) -> Rules {
    Rules::builder()
        .regex(THINK, "")
        .literal("secret", "***")
        .config(Config::new().max_held(max_held).on_held_limit(policy))
        .build()
        .unwrap()
}

#[test]
fn default_policy_fails_closed() {
    let rules = Rules::builder().regex(THINK, "").build().unwrap();
    assert_eq!(rules.config().get_on_held_limit(), &HeldLimit::Fail);
    assert_eq!(rules.config().get_max_held(), 1 << 20);
}

#[test]
fn fail_never_emits_held_text_and_stays_failed() {
    let rules = think_rules(16, HeldLimit::Fail);
    let mut r = rules.replacer();
    let mut emitted = String::new();
    emitted += &r.feed("a <think>").unwrap();
    assert_eq!(emitted, "a ");
    let e = r.feed("PRIVATE goes on").unwrap_err();
    assert_eq!(e.limit(), 16);
    assert_eq!(e.held(), "<think>PRIVATE goes on".len());
    assert_eq!(r.held(), 0, "the held text is discarded");
    let shown = e.to_string();
    assert!(shown.contains("16"), "{shown}");
    // Every later call fails, with the same error, and emits nothing.
    assert_eq!(r.feed("</think> visible").unwrap_err(), e);
    assert_eq!(r.feed_bytes(b"more").unwrap_err(), e);
    let mut out = String::from("kept");
    assert_eq!(r.feed_into("x", &mut out).unwrap_err(), e);
    assert_eq!(out, "kept");
    assert_eq!(r.flush().unwrap_err(), e);
    assert!(!emitted.contains("PRIVATE"));
    // `flush` reports the failure and does not end it: the stream stays
    // failed until `reset`.
    assert_eq!(r.flush().unwrap_err(), e);
    assert_eq!(r.feed("fresh secret").unwrap_err(), e);
    r.reset();
    let mut out = r.feed("fresh secret").unwrap();
    out += &r.flush().unwrap();
    assert_eq!(out, "fresh ***");
}

#[test]
fn fail_until_reset() {
    let rules = think_rules(8, HeldLimit::Fail);
    let mut r = rules.replacer();
    assert!(r.feed("<think>PRIVATE").is_err());
    assert!(r.feed("x").is_err());
    assert!(r.feed("y").is_err());
    r.reset();
    assert_eq!(r.held(), 0);
    assert_eq!(r.offset(), 0);
    assert_eq!(r.feed("a secret b").unwrap(), "a *** b");
    assert_eq!(r.feed("<think>1").unwrap(), "");
    assert_eq!(r.held(), 8);
    assert_eq!(r.flush().unwrap(), "<think>1");
}

#[test]
fn limit_is_inclusive() {
    // Holding exactly `max_held` bytes is allowed; one more is not.
    let rules = think_rules(9, HeldLimit::Fail);
    let mut r = rules.replacer();
    assert_eq!(r.feed("x<think>a").unwrap(), "x");
    assert_eq!(r.held(), 8);
    assert_eq!(r.feed("b").unwrap(), "");
    assert_eq!(r.held(), 9);
    let e = r.feed("c").unwrap_err();
    assert_eq!(e.held(), 10);
    assert_eq!(e.limit(), 9);
}

#[test]
fn fail_with_byte_chunks_never_leaks() {
    let rules = think_rules(32, HeldLimit::Fail);
    let input = "ok <think>PRIVATE PRIVATE PRIVATE PRIVATE</think> after";
    let mut r = rules.replacer();
    let mut out = Vec::new();
    let mut failed_at = None;
    for (i, b) in input.as_bytes().iter().enumerate() {
        match r.feed_bytes(std::slice::from_ref(b)) {
            Ok(o) => {
                assert!(failed_at.is_none(), "feed {i} succeeded after a failure");
                out.extend(o);
            }
            Err(e) => {
                assert_eq!(e.limit(), 32);
                failed_at.get_or_insert(i);
            }
        }
    }
    assert_eq!(failed_at, Some(3 + 32));
    assert!(r.flush_bytes().is_err());
    assert_eq!(out, b"ok ");
}

#[test]
fn fail_while_greedy_match_grows() {
    let rules = Rules::builder()
        .regex(r"\d+", "N")
        .config(Config::new().max_held(4))
        .build()
        .unwrap();
    let mut r = rules.replacer();
    for d in ["1", "2", "3", "4"] {
        assert_eq!(r.feed(d).unwrap(), "");
    }
    let e: StreamError = r.feed("5").unwrap_err();
    assert_eq!((e.held(), e.limit()), (5, 4));
    let io: std::io::Error = e.into();
    assert_eq!(io.kind(), std::io::ErrorKind::InvalidData);
}

#[test]
fn text_that_is_not_held_is_never_limited() {
    let rules = think_rules(4, HeldLimit::Fail);
    let mut r = rules.replacer();
    let long = "plain text without any tag, ".repeat(100);
    assert_eq!(r.feed(&long).unwrap(), long);
    assert_eq!(r.flush().unwrap(), "");
}

#[test]
fn replace_policy_cuts_and_goes_on() {
    let rules = think_rules(8, HeldLimit::Replace("[cut]".into()));
    let mut r = rules.replacer();
    let mut out = r.feed("a <think>").unwrap();
    assert_eq!(out, "a ");
    let cut = r.feed("long thoughts").unwrap();
    assert_eq!(cut, "[cut]");
    assert_eq!(r.held(), 0);
    out += &cut;
    // The cut block is dropped up to its end, its closing tag included;
    // then the rules apply as before.
    out += &r.feed("more</think> b <think>x</think>c secret").unwrap();
    out += &r.flush().unwrap();
    assert_eq!(out, "a [cut] b c ***");
    assert!(!out.contains("long"));
}

#[test]
fn replace_policy_with_empty_text_and_bytes() {
    let rules = think_rules(8, HeldLimit::Replace(String::new()));
    let mut r = rules.replacer();
    let mut out = Vec::new();
    for chunk in [&b"x<think>"[..], b"PRIVATE", b" y \xFF"] {
        out.extend(r.feed_bytes(chunk).unwrap());
    }
    out.extend(r.flush_bytes().unwrap());
    // The unclosed block is dropped up to the invalid byte, where it can
    // no longer match.
    assert_eq!(out, b"x\xFF");
}

#[test]
fn replace_policy_each_time_the_limit_is_hit() {
    // The rest of a cut block is dropped too, up to its end.
    let rules = think_rules(10, HeldLimit::Replace("~".into()));
    let mut r = rules.replacer();
    let mut out = String::new();
    for c in "<think>0123</think>x<think>4567".chars() {
        out += &r.feed(&c.to_string()).unwrap();
        assert!(r.held() <= 10);
    }
    out += &r.flush().unwrap();
    assert_eq!(out, "~x~");
}

#[test]
fn replace_policy_cut_inside_a_character_keeps_output_valid() {
    // Valid UTF-8 in, cut inside 'é' by the byte chunks: the text put in
    // place of the held region must not leave half a character behind.
    let rules = think_rules(8, HeldLimit::Replace("[cut]".into()));
    let mut r = rules.replacer();
    let mut out = Vec::new();
    for chunk in [&b"x<think>PRIVATE\xC3"[..], b"\xA9 y"] {
        out.extend(r.feed_bytes(chunk).unwrap());
    }
    out.extend(r.flush_bytes().unwrap());
    assert!(
        std::str::from_utf8(&out).is_ok(),
        "output {out:?} is not UTF-8"
    );
    assert!(!out.windows(7).any(|w| w == b"PRIVATE"));
}

/// A stream's own state, outside its buffers and the lazy DFA cache whose
/// struct it embeds, stays under 1 KiB.
#[test]
fn stream_state_outside_buffers_and_dfa_cache_is_under_1_kib() {
    let own = std::mem::size_of::<stream_replace::Replacer>()
        - std::mem::size_of::<regex_automata::hybrid::dfa::Cache>();
    assert!(
        own < 1024,
        "a Replacer holds {own} bytes besides its DFA cache"
    );
}

/// One huge feed inside an unclosed `<think>`: the limit is applied after
/// every segment of the feed, not once at its end, so the stream stops
/// with little more than the limit held, whatever the chunk's size.
#[test]
fn held_limit_applies_inside_one_feed() {
    let limit = 1 << 10;
    let rules = think_rules(limit, HeldLimit::Fail);
    let chunk = format!("a <think>{}", "x".repeat(4 << 20));
    for api in ["str", "bytes"] {
        let mut r = rules.replacer();
        let e = match api {
            "str" => r.feed(&chunk).unwrap_err(),
            _ => r.feed_bytes(chunk.as_bytes()).unwrap_err(),
        };
        assert_eq!(e.kind(), stream_replace::StreamErrorKind::HeldLimit);
        assert!(e.held() > limit, "{api}: {e}");
        assert!(
            e.held() <= limit + (64 << 10) + 256,
            "{api}: {} bytes held before the limit applied",
            e.held()
        );
        assert_eq!(r.held(), 0, "{api}: the held text is discarded");
    }
}

/// The fuzz-found shape of a validator bug: a replacement closure that
/// panics on one value. A caller that catches the panic (as async runtimes
/// and web frameworks do) and feeds on must get errors, never the value.
#[test]
fn a_panic_in_a_closure_poisons_the_stream() {
    use std::panic::{AssertUnwindSafe, catch_unwind};
    use stream_replace::StreamErrorKind;

    let rules = Rules::builder()
        .regex_with(r"\d{3}-\d{2}-\d{4}", |c| {
            assert!(!c.as_str().starts_with("900"), "validator bug");
            "[SSN]".to_string()
        })
        .build()
        .unwrap();
    for api in ["str", "str_into", "bytes", "flush"] {
        let mut r = rules.replacer();
        let mut shown = Vec::new();
        let first = catch_unwind(AssertUnwindSafe(|| match api {
            "str" => r.feed("900-12-3456 ok").map(String::into_bytes),
            "str_into" => {
                let mut out = String::new();
                r.feed_into("900-12-3456 ok", &mut out)
                    .map(|()| out.into_bytes())
            }
            "bytes" => r.feed_bytes(b"900-12-3456 ok"),
            _ => {
                let mut out = r.feed("x 900-12-3456").unwrap().into_bytes();
                out.extend(r.flush().unwrap().into_bytes());
                Ok(out)
            }
        }));
        assert!(first.is_err(), "{api}: the closure panics");
        let e = r.feed("; next 123-45-6789 end").unwrap_err();
        assert_eq!(e.kind(), StreamErrorKind::Poisoned, "{api}");
        assert!(e.to_string().contains("poisoned"), "{e}");
        assert_eq!(r.feed_bytes(b"more").unwrap_err(), e, "{api}");
        let mut out = String::new();
        assert_eq!(r.feed_into("more", &mut out).unwrap_err(), e, "{api}");
        shown.extend(out.into_bytes());
        assert_eq!(r.held(), 0, "{api}: what was held is dropped");
        // `flush` reports the poisoning, and the stream stays poisoned
        // until `reset`.
        assert_eq!(r.flush().unwrap_err(), e, "{api}");
        assert_eq!(r.feed("fresh").unwrap_err(), e, "{api}");
        assert_eq!(r.flush().unwrap_err(), e, "{api}");
        r.reset();
        shown.extend(r.feed("fresh 123-45-6789").unwrap().into_bytes());
        shown.extend(r.flush().unwrap().into_bytes());
        let shown = String::from_utf8(shown).unwrap();
        assert_eq!(shown, "fresh [SSN]", "{api}");
    }
    // `reset` also clears the poisoning.
    let mut r = rules.replacer();
    let _ = catch_unwind(AssertUnwindSafe(|| r.feed("900-12-3456 ")));
    r.reset();
    assert_eq!(r.feed("123-45-6789 ").unwrap(), "[SSN] ");
}

/// Rules for the cap tests: a block to remove, a Unicode `\b` rule (which
/// makes the lazy DFA give up on non-ASCII text, so the NFA fallback is
/// exercised too) and a literal.
fn cut_rules(think: &str, max_held: usize) -> Rules {
    Rules::builder()
        .regex(think, "")
        .regex(r"\b\d{3}-\d{2}-\d{4}\b", "[SSN]")
        .literal("secret", "***")
        .config(
            Config::new()
                .max_held(max_held)
                .on_held_limit(HeldLimit::Replace("[cut]".into())),
        )
        .build()
        .unwrap()
}

/// `HeldLimit::Replace` never releases what a pending match covers: for
/// every split of a short stream into up to three parts, one character
/// at a time and as bytes cut inside characters, a block held past the
/// limit is replaced by the policy's text once and dropped up to its end,
/// and the rules go on after it.
#[test]
fn replace_policy_never_releases_a_pending_match() {
    let input = "hello <think>PRIVATE réasoning 123-45-6789 PRIVATE</think> bye secret";
    let want = "hello [cut] bye ***";
    for think in [r"<think>[\s\S]*?</think>", r"<think>[\s\S]*</think>"] {
        let rules = cut_rules(think, 8);
        let check = |chunks: &[&[u8]]| {
            let mut r = rules.replacer();
            let mut out = Vec::new();
            for c in chunks {
                out.extend(r.feed_bytes(c).unwrap());
                assert!(r.held() <= 8 + 64, "held {}", r.held());
            }
            out.extend(r.flush_bytes().unwrap());
            // A split that puts the whole block in one segment of a feed
            // never holds it past the limit: the rule removes it. A greedy
            // block may grow after its first end until the input ends; held
            // past the limit again, all of it is dropped.
            let out = String::from_utf8_lossy(&out);
            let greedy = !think.contains("*?");
            assert!(
                out == want || out == "hello  bye ***" || (greedy && out == "hello [cut]"),
                "{think} split {:?}: {out:?}",
                chunks
                    .iter()
                    .map(|c| String::from_utf8_lossy(c))
                    .collect::<Vec<_>>()
            );
            out.starts_with("hello [cut]")
        };
        let b = input.as_bytes();
        // In one feed the lazy block is decided within a segment; the
        // greedy one holds the text after it, which could extend it.
        assert_eq!(check(&[b]), think.contains('*') && !think.contains("*?"));
        assert!(check(&b.chunks(1).collect::<Vec<_>>()));
        for i in 0..=b.len() {
            for j in i..=b.len() {
                let cut = check(&[&b[..i], &b[i..j], &b[j..]]);
                // Cut inside the block, far enough from its ends, the
                // stream holds more than the limit.
                if (20..40).contains(&i) {
                    assert!(cut, "{think}: cut at {i} and {j}");
                }
            }
        }
        let mut r = rules.replacer();
        let mut out = String::new();
        for c in input.chars() {
            out += &r.feed(c.encode_utf8(&mut [0; 4])).unwrap();
        }
        out += &r.flush().unwrap();
        assert!(
            out == want || out == "hello [cut]",
            "{think}, one character at a time: {out}"
        );
    }
}

/// The adopter's report: a 5 MB unclosed `<think>` under
/// `Replace("[cut]")` gave `hello [cut]` followed by megabytes of the
/// reasoning and the closing tag. Now nothing of the block is released.
#[test]
fn replace_policy_drops_a_long_block_to_its_end() {
    let rules = cut_rules(r"<think>[\s\S]*?</think>", 1 << 20);
    let mut r = rules.replacer();
    let mut out = r.feed("hello <think>").unwrap();
    let piece = "the reasoning goes on, é and 中 and 123-45-6789 too. ".repeat(1000);
    while r.offset() < 5 << 20 {
        out += &r.feed(&piece).unwrap();
        assert!(r.held() <= (1 << 20) + (64 << 10) + 256);
    }
    out += &r.feed("</think> bye").unwrap();
    out += &r.flush().unwrap();
    assert_eq!(out, "hello [cut] bye");
}

/// A greedy block that has matched once and may still grow: the text
/// after its first end is held while it might be part of it. Held past the
/// limit again, that text is dropped too, and so is the rest of the
/// candidate, up to where it can no longer grow (for `[\s\S]*`, the end of
/// input): never released, at the cost of text after the block.
#[test]
fn replace_policy_with_a_greedy_block_that_keeps_growing() {
    let rules = cut_rules(r"<think>[\s\S]*</think>", 16);
    for (input, want) in [
        (
            "a <think>0123456789</think> x 0123456789 </think> z",
            "a [cut]",
        ),
        ("a <think>0123456789</think> x y", "a [cut] x y"),
    ] {
        let mut r = rules.replacer();
        let mut out = String::new();
        for c in input.chars() {
            out += &r.feed(c.encode_utf8(&mut [0; 4])).unwrap();
        }
        out += &r.flush().unwrap();
        assert_eq!(out, want);
    }
    // Held past the first end until a second cap: that text is dropped.
    let mut r = rules.replacer();
    let mut out = r.feed("a <think>0123456789</think>").unwrap();
    out += &r.feed(" later text past the cap ").unwrap();
    out += &r.flush().unwrap();
    assert_eq!(out, "a [cut]");
}
