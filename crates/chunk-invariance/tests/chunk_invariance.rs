//! The crate's behaviour, pinned: split counts and order, the reports for
//! the classic wrong designs, explicit splits, text against bytes, the
//! adapters, the reports of panics, shrinking and non-determinism, and
//! (with features) the async path and the strategies.

use std::borrow::Cow;
use std::cell::Cell;

use chunk_invariance::examples::{
    HoldBack, redact, redact_each_chunk, redact_holding_back, redact_with_carry,
};
use chunk_invariance::{
    ALL_SPLITS_MAX_UNITS, Chunks, ErrorKind, Rerun, Splits, assert_chunk_invariant,
    assert_chunk_invariant_with, check_chunk_invariant, check_chunk_invariant_with, per_chunk,
    per_chunk_default, splits_up_to, try_per_chunk, two_part_splits,
};

const INPUT: &str = "use sk-AbCd1234 now";

fn identity(chunks: Chunks<'_, str>) -> Chunks<'_, str> {
    chunks
}

fn keep(whole: &str) -> &str {
    whole
}

// ---- split counts ----------------------------------------------------

#[test]
fn two_part_on_19_characters_is_19_splits() {
    assert_eq!(INPUT.chars().count(), 19);
    assert_eq!(two_part_splits(INPUT).count(), 19);
    assert_eq!(check_chunk_invariant(identity, keep, INPUT), Ok(19));
    assert_eq!(
        assert_chunk_invariant(redact_holding_back, redact, INPUT),
        19
    );
}

#[test]
fn all_splits_of_16_characters_is_2_pow_15() {
    let input = "abcdefghijklmnop";
    assert_eq!(input.len(), ALL_SPLITS_MAX_UNITS);
    let calls = Cell::new(0);
    let n = check_chunk_invariant_with(
        |chunks: Chunks<'_, str>| {
            calls.set(calls.get() + 1);
            chunks
        },
        keep,
        input,
        Splits::All,
    );
    assert_eq!(n, Ok(1 << 15));
    assert_eq!(calls.get(), 1 << 15);
    assert_eq!(splits_up_to(input, 16).count(), 1 << 15);
}

#[test]
fn all_splits_of_17_characters_is_an_error_suggesting_a_parts_limit() {
    let err =
        check_chunk_invariant_with(identity, keep, "abcdefghijklmnopq", Splits::All).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InputTooLong);
    assert!(err.mismatch().is_none());
    let message = err.to_string();
    assert!(message.contains("has 17 characters"), "{message}");
    assert!(message.contains("Splits::UpTo(k)"), "{message}");
    // Units are characters for text: 16 two-byte characters are fine.
    assert_eq!(
        check_chunk_invariant_with(identity, keep, &"é".repeat(16), Splits::All),
        Ok(1 << 15)
    );
    // And bytes for bytes: the same 32 bytes are too many.
    let err = check_chunk_invariant_with(
        |c: Chunks<'_, [u8]>| c,
        |w: &[u8]| w.to_vec(),
        "é".repeat(16).as_bytes(),
        Splits::All,
    )
    .unwrap_err();
    assert!(err.to_string().contains("has 32 bytes"), "{err}");
}

#[test]
fn up_to_k_counts_binomials() {
    // 10 units, 9 cut points: 1 + 9 + 36.
    assert_eq!(
        check_chunk_invariant_with(identity, keep, "abcdefghij", Splits::UpTo(3)),
        Ok(46)
    );
    assert_eq!(
        check_chunk_invariant_with(identity, keep, "abcdefghij", Splits::UpTo(2)),
        check_chunk_invariant(identity, keep, "abcdefghij"),
    );
    assert_eq!(
        check_chunk_invariant_with(identity, keep, "abcdefghij", Splits::UpTo(1)),
        Ok(1)
    );
    // More parts than units is every split.
    assert_eq!(
        check_chunk_invariant_with(identity, keep, "abcd", Splits::UpTo(99)),
        Ok(8)
    );
}

#[test]
fn empty_input_is_one_split_of_one_empty_chunk() {
    let splits: Vec<Vec<&str>> = two_part_splits("").collect();
    assert_eq!(splits, [vec![""]]);
    assert_eq!(
        check_chunk_invariant_with(identity, keep, "", Splits::All),
        Ok(1)
    );
}

// ---- split order -----------------------------------------------------

#[test]
fn splits_run_whole_input_first_then_fewest_parts_first() {
    let splits: Vec<Vec<&str>> = splits_up_to("abcd", 4).collect();
    assert_eq!(
        splits,
        [
            vec!["abcd"],
            vec!["a", "bcd"],
            vec!["ab", "cd"],
            vec!["abc", "d"],
            vec!["a", "b", "cd"],
            vec!["a", "bc", "d"],
            vec!["ab", "c", "d"],
            vec!["a", "b", "c", "d"],
        ]
    );
    let two: Vec<Vec<&str>> = two_part_splits("abc").collect();
    assert_eq!(two, [vec!["abc"], vec!["a", "bc"], vec!["ab", "c"]]);
}

#[test]
fn the_check_tries_splits_in_the_enumerated_order() {
    let seen = std::cell::RefCell::new(Vec::new());
    check_chunk_invariant_with(
        |chunks: Chunks<'_, str>| {
            seen.borrow_mut().push(chunks.clone().collect::<Vec<_>>());
            chunks
        },
        keep,
        "abcde",
        Splits::All,
    )
    .unwrap();
    let expected: Vec<Vec<&str>> = splits_up_to("abcde", 5).collect();
    assert_eq!(seen.into_inner(), expected);
}

#[test]
fn whole_filter_runs_once_and_stream_filter_once_per_split() {
    let whole_calls = Cell::new(0);
    let n = check_chunk_invariant(
        identity,
        |w: &str| {
            whole_calls.set(whole_calls.get() + 1);
            w.to_owned()
        },
        "abcdef",
    )
    .unwrap();
    assert_eq!((n, whole_calls.get()), (6, 1));
}

// ---- the classic wrong designs ---------------------------------------

#[test]
fn each_chunk_alone_fails_at_cut_5_as_split_6() {
    let err = check_chunk_invariant(redact_each_chunk, redact, INPUT).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotInvariant);
    let m = err.mismatch().unwrap();
    assert_eq!(m.chunks(), [&b"use s"[..], b"k-AbCd1234 now"]);
    assert_eq!(m.cuts(), [5]);
    assert_eq!(m.whole(), b"use [KEY] now");
    assert_eq!(m.streamed(), b"use sk-AbCd1234 now");
    assert_eq!(m.first_difference(), 4);
    assert_eq!(m.split_number(), 6);
    assert!(m.is_text());
    assert_eq!(
        err.to_string(),
        r#"stream filter is not chunk-invariant
  input:    "use sk-AbCd1234 now"
  split:    ["use s", "k-AbCd1234 now"] (cut at 5)
  whole:    "use [KEY] now"
  streamed: "use sk-AbCd1234 now"
  differ:   from byte 4: whole "[KEY] now", streamed "sk-AbCd1234 now"
  split #6 in the order tried; generated splits run fewest parts first"#
    );
}

#[test]
fn fixed_carry_over_fails_at_cut_5_as_split_6() {
    let err = check_chunk_invariant(redact_with_carry, redact, INPUT).unwrap_err();
    let m = err.mismatch().unwrap();
    assert_eq!(m.chunks(), [&b"use s"[..], b"k-AbCd1234 now"]);
    assert_eq!(m.split_number(), 6);
    assert_eq!(m.streamed(), b"use sKEY] now");
    assert_eq!(m.first_difference(), 4);
    let text = err.to_string();
    assert!(text.contains(r#"streamed: "use sKEY] now""#), "{text}");
    assert!(
        text.contains(r#"differ:   from byte 4: whole "[KEY] now", streamed "sKEY] now""#),
        "{text}"
    );
}

#[test]
fn hold_back_passes_every_split_the_wrong_designs_fail() {
    assert_eq!(
        check_chunk_invariant_with(redact_holding_back, redact, "sk-sk-AbCd1234", Splits::All),
        Ok(1 << 13)
    );
    let long = format!("{} sk-AbCd1234 {}", "é".repeat(30), "sk-EfGh5678".repeat(3));
    assert_eq!(long.chars().count(), 76);
    assert_eq!(
        check_chunk_invariant_with(redact_holding_back, redact, long.as_str(), Splits::UpTo(3)),
        Ok(1 + 75 + 75 * 74 / 2)
    );
    assert!(
        check_chunk_invariant_with(redact_each_chunk, redact, long.as_str(), Splits::UpTo(3))
            .is_err()
    );
}

/// A hold-back redactor that remembers only the previous chunk: whatever
/// it held from earlier chunks is let go.
#[derive(Default)]
struct OneChunkMemory(HoldBack);

impl OneChunkMemory {
    fn feed(&mut self, chunk: &str) -> String {
        let mut out = self.0.feed(chunk);
        // Held text is a possible start of a key, so ASCII: any cut is fine.
        let held = self.0.flush();
        let excess = held.len().saturating_sub(chunk.len());
        out.push_str(&held[..excess]);
        out.push_str(&self.0.feed(&held[excess..]));
        out
    }
}

#[test]
fn two_part_splits_miss_a_filter_that_remembers_one_chunk() {
    let filter = || {
        per_chunk(
            |c, r: &mut OneChunkMemory| r.feed(c),
            OneChunkMemory::default,
            |r| r.0.flush(),
        )
    };
    assert_eq!(check_chunk_invariant(filter(), redact, INPUT), Ok(19));
    let err = check_chunk_invariant_with(filter(), redact, INPUT, Splits::UpTo(3)).unwrap_err();
    let m = err.mismatch().unwrap();
    assert_eq!(m.chunks(), [&b"use s"[..], b"k", b"-AbCd1234 now"]);
    // After the 19 splits of at most two parts, the cut pairs (1, _) to
    // (4, _), then (5, 6).
    assert_eq!(m.split_number(), 19 + (17 + 16 + 15 + 14) + 1);
}

#[test]
#[should_panic(expected = r#"split:    ["use s", "k-AbCd1234 now"] (cut at 5)"#)]
fn the_assertion_panics_with_the_report() {
    assert_chunk_invariant(redact_each_chunk, redact, INPUT);
}

#[test]
fn a_filter_broken_on_the_whole_input_fails_at_split_1() {
    let err = check_chunk_invariant(
        |chunks: Chunks<'_, str>| chunks.map(str::to_uppercase),
        keep,
        "ab",
    )
    .unwrap_err();
    let m = err.mismatch().unwrap();
    assert_eq!(m.split_number(), 1);
    assert!(m.cuts().is_empty());
    assert!(
        err.to_string()
            .contains(r#"split:    ["ab"] (no cut: the whole input as one chunk)"#),
        "{err}"
    );
}

#[test]
fn long_values_are_shortened_in_the_report() {
    let input = format!("{}sk-AbCd1234{}", "a".repeat(400), "b".repeat(400));
    let err = check_chunk_invariant_with(
        redact_each_chunk,
        redact,
        input.as_str(),
        Splits::Cuts(vec![vec![405]]),
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("…(751 bytes)…"), "{text}");
    assert!(text.contains("…(745 bytes)…"), "{text}");
    assert!(text.contains("from byte 400:"), "{text}");
    // Shrunk to the first cut inside the key; the split given follows.
    assert!(text.contains("(cut at 401)\n"), "{text}");
    assert!(
        text.contains("shrunk:   from split #1 in the order given:"),
        "{text}"
    );
    assert!(text.contains("(cut at 405)\n"), "{text}");
    assert!(text.lines().all(|l| l.chars().count() < 200), "{text}");
}

// ---- explicit splits -------------------------------------------------

#[test]
fn explicit_splits_run_in_the_order_given() {
    let splits = Splits::explicit([
        vec!["use ", "sk-AbCd1234 now"],
        vec!["use sk-Ab", "Cd1234 now"],
        vec!["use s", "k-AbCd1234 now"],
    ]);
    let err = check_chunk_invariant_with(redact_each_chunk, redact, INPUT, splits).unwrap_err();
    let m = err.mismatch().unwrap();
    assert_eq!(m.split_number(), 2);
    // Split #2 is reported shrunk: its cut moved to the first place
    // inside the key where the filter still fails.
    assert_eq!(m.shrunk_from(), Some(&[9][..]));
    assert_eq!(m.cuts(), [5]);
    assert!(
        err.to_string().contains(
            "\n  shrunk:   from split #2 in the order given:\n            \
             [\"use sk-Ab\", \"Cd1234 now\"] (cut at 9)\n            \
             no cut of the split above can be dropped or moved one unit earlier"
        ),
        "{err}"
    );
}

#[test]
fn explicit_splits_may_have_empty_chunks() {
    let splits = Splits::explicit([vec!["", INPUT, ""], vec!["use ", "", "sk-AbCd1234 now"]]);
    assert_eq!(
        check_chunk_invariant_with(redact_holding_back, redact, INPUT, splits),
        Ok(2)
    );
}

#[test]
fn explicit_splits_that_do_not_join_back_are_rejected() {
    let splits = Splits::explicit([
        vec!["use s", "k-AbCd1234 now"],
        vec!["use s", "k-AbCd1234 later"],
    ]);
    let err = check_chunk_invariant_with(redact_holding_back, redact, INPUT, splits).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::SplitDoesNotJoin);
    let text = err.to_string();
    assert!(text.contains("explicit split #2"), "{text}");
    assert!(
        text.contains("every split must join back to the input"),
        "{text}"
    );
    assert!(text.contains("differ from byte 16"), "{text}");

    let missing = Splits::explicit([vec!["use s"]]);
    let err = check_chunk_invariant_with(identity, keep, INPUT, missing).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::SplitDoesNotJoin);

    let no_chunks = Splits::Explicit(vec![vec![]]);
    let err = check_chunk_invariant_with(identity, keep, INPUT, no_chunks).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::SplitDoesNotJoin);
    assert!(err.to_string().contains("has no chunks"), "{err}");
}

#[test]
fn explicit_cuts_are_checked() {
    let ok = Splits::Cuts(vec![vec![5], vec![0, 4, 4, 19]]);
    assert_eq!(check_chunk_invariant_with(identity, keep, INPUT, ok), Ok(2));
    for bad in [vec![5, 4], vec![20]] {
        let err =
            check_chunk_invariant_with(identity, keep, INPUT, Splits::Cuts(vec![bad])).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::SplitDoesNotJoin, "{err}");
    }
}

#[test]
fn no_splits_at_all_is_an_error() {
    for splits in [
        Splits::explicit(Vec::<Vec<&str>>::new()),
        Splits::UpTo(0),
        Splits::Random {
            count: 3,
            seed: 1,
            max_parts: 0,
        },
    ] {
        let err = check_chunk_invariant_with(identity, keep, INPUT, splits).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NoSplits, "{err}");
    }
}

// ---- text against bytes ----------------------------------------------

#[test]
fn str_splits_never_cut_a_character() {
    let input = "aé€😀";
    assert_eq!(two_part_splits(input).count(), 4);
    for split in splits_up_to(input, 4) {
        assert_eq!(split.concat(), input);
    }
    let err = check_chunk_invariant_with(
        identity,
        keep,
        input,
        Splits::explicit([vec![&input.as_bytes()[..2], &input.as_bytes()[2..]]]),
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::SplitCutsCharacter);
    assert!(err.to_string().contains("at byte 2"), "{err}");
    let err =
        check_chunk_invariant_with(identity, keep, input, Splits::Cuts(vec![vec![4]])).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::SplitCutsCharacter);
}

#[test]
fn byte_splits_cut_inside_characters() {
    let input = "aé€😀".as_bytes();
    assert_eq!(input.len(), 10);
    assert_eq!(two_part_splits(input).count(), 10);
    // A byte filter that decodes each chunk on its own breaks on the
    // first cut inside a character: after the first byte of "é".
    let err = check_chunk_invariant(
        |chunks: Chunks<'_, [u8]>| chunks.map(|c| String::from_utf8_lossy(c).into_owned()),
        |whole: &[u8]| String::from_utf8_lossy(whole).into_owned(),
        input,
    )
    .unwrap_err();
    let m = err.mismatch().unwrap();
    assert_eq!(m.cuts(), [2]);
    assert_eq!(m.split_number(), 3);
    assert!(!m.is_text());
    let text = err.to_string();
    assert!(
        text.contains(r#"split:    [b"a\xc3", b"\xa9€😀"] (cut at 2)"#),
        "{text}"
    );
    // Byte splits go inside characters for random splits too.
    let n = check_chunk_invariant_with(
        |c: Chunks<'_, [u8]>| c,
        |w: &[u8]| w,
        input,
        Splits::random(20, 9),
    )
    .unwrap();
    assert!(n > 10, "{n}");
}

#[test]
fn output_chunks_may_be_owned_or_borrowed() {
    assert_eq!(
        check_chunk_invariant(
            |chunks| chunks.map(Cow::Borrowed).collect::<Vec<_>>(),
            String::from,
            "abc"
        ),
        Ok(3)
    );
    assert_eq!(
        check_chunk_invariant(
            |chunks| chunks.map(Box::<str>::from),
            |w: &str| Cow::Borrowed(w),
            "abc"
        ),
        Ok(3)
    );
    let bytes = b"abc".as_slice();
    assert_eq!(
        check_chunk_invariant(|chunks| chunks.map(<[u8]>::to_vec), |w: &[u8]| w, bytes),
        Ok(3)
    );
    // Bytes in, text out.
    assert_eq!(
        check_chunk_invariant(
            |chunks| chunks.map(|c: &[u8]| String::from_utf8(c.to_vec()).unwrap()),
            |_: &[u8]| "abc",
            bytes
        ),
        Ok(3)
    );
}

// ---- random and chained splits ---------------------------------------

#[test]
fn random_splits_are_seeded_and_find_bugs_in_long_inputs() {
    let input = format!("{}sk-AbCd1234{}", "x".repeat(40), "y".repeat(40));
    let run = |seed| {
        check_chunk_invariant_with(
            redact_each_chunk,
            redact,
            input.as_str(),
            Splits::Random {
                count: 300,
                seed,
                max_parts: 4,
            },
        )
        .unwrap_err()
    };
    let (a, b) = (run(7), run(7));
    assert_eq!(a, b);
    let m = a.mismatch().unwrap();
    assert!(m.cuts().iter().any(|&c| (41..51).contains(&c)), "{a}");
    assert!(a.to_string().contains("in the order tried"), "{a}");
    assert_eq!(
        check_chunk_invariant_with(
            redact_holding_back,
            redact,
            input.as_str(),
            Splits::random(300, 7)
        ),
        Ok(301)
    );
}

#[test]
fn chained_splits_number_on() {
    let splits = Splits::Cuts(vec![vec![1]]).then(Splits::TwoPart);
    let err =
        check_chunk_invariant_with(redact_each_chunk, redact, INPUT, splits.clone()).unwrap_err();
    assert_eq!(err.mismatch().unwrap().split_number(), 7);
    let longer = splits.then(Splits::UpTo(1));
    assert_eq!(
        check_chunk_invariant_with(identity, keep, "abc", longer),
        Ok(5)
    );
}

// ---- adapters --------------------------------------------------------

#[test]
fn per_chunk_checks_a_feed_flush_type_in_one_line() {
    assert_eq!(
        assert_chunk_invariant_with(
            per_chunk(
                |c, r: &mut HoldBack| r.feed(c),
                HoldBack::new,
                HoldBack::flush
            ),
            redact,
            "sk-AbCd1234 sk-EfGh5678",
            Splits::UpTo(3),
        ),
        1 + 22 + 231
    );
    // And the wrong design written the same way fails the same way.
    let err = check_chunk_invariant(
        per_chunk(
            |c: &str, _: &mut ()| redact(c),
            || (),
            chunk_invariance::no_flush,
        ),
        redact,
        INPUT,
    )
    .unwrap_err();
    assert_eq!(err.mismatch().unwrap().split_number(), 6);
}

#[test]
fn per_chunk_without_a_flush_loses_the_held_back_tail() {
    let err = check_chunk_invariant(
        per_chunk(
            |c, r: &mut HoldBack| r.feed(c),
            HoldBack::new,
            chunk_invariance::no_flush,
        ),
        redact,
        "a sk-",
    )
    .unwrap_err();
    let m = err.mismatch().unwrap();
    assert_eq!(m.split_number(), 1);
    assert_eq!(m.streamed(), b"a ");
}

#[test]
fn state_leaking_between_streams_is_caught() {
    // A marker meant for the start of each stream, kept in state shared
    // by every split: the second stream goes without it.
    let mut started = false;
    let err = check_chunk_invariant(
        |chunks: Chunks<'_, str>| {
            chunks
                .map(|c| match std::mem::replace(&mut started, true) {
                    false => format!(">{c}"),
                    true => c.to_owned(),
                })
                .collect::<Vec<_>>()
        },
        |w: &str| format!(">{w}"),
        "abc",
    )
    .unwrap_err();
    assert_eq!(err.mismatch().unwrap().split_number(), 2);
}

// ---- panics and errors -----------------------------------------------

#[test]
fn a_panicking_stream_filter_is_reported_with_its_split_and_message() {
    // Slices each chunk at a fixed length: fine on the whole input, a
    // panic on the first chunk shorter than that.
    let err = check_chunk_invariant(
        |chunks: Chunks<'_, str>| {
            chunks
                .map(|c| {
                    assert!(c.len() >= 3, "chunk {c:?} is too short");
                    c[..3].to_owned()
                })
                .collect::<Vec<_>>()
        },
        |w: &str| w[..3].to_owned(),
        "abcd",
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Panicked);
    assert!(err.mismatch().is_none());
    let f = err.failure().unwrap();
    assert!(f.panicked());
    assert_eq!(f.cuts(), Some(&[1][..]));
    assert_eq!(f.split_number(), Some(2));
    assert_eq!(f.shrunk_from(), None);
    assert_eq!(f.rerun(), None);
    assert_eq!(f.message(), r#"chunk "a" is too short"#);
    assert_eq!(
        err.to_string(),
        "stream filter panicked\n\
         \x20 input:    \"abcd\"\n\
         \x20 split:    [\"a\", \"bcd\"] (cut at 1)\n\
         \x20 panic:    chunk \"a\" is too short\n\
         \x20 split #2 in the order tried; generated splits run fewest parts first"
    );
}

#[test]
fn a_panicking_whole_filter_is_reported_without_a_split() {
    let streams = Cell::new(0);
    let err = check_chunk_invariant(
        |chunks: Chunks<'_, str>| {
            streams.set(streams.get() + 1);
            chunks
        },
        |_: &str| -> String { panic!("whole filter broke") },
        "ab",
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Panicked);
    let f = err.failure().unwrap();
    assert_eq!((f.cuts(), f.chunks(), f.split_number()), (None, None, None));
    assert_eq!(
        err.to_string(),
        "whole-input filter panicked\n  input:    \"ab\"\n  panic:    whole filter broke"
    );
    assert_eq!(streams.get(), 0);
}

#[test]
fn a_panic_with_a_payload_that_is_not_a_string_is_still_reported() {
    let err = check_chunk_invariant(
        |_: Chunks<'_, str>| -> Vec<String> { std::panic::panic_any(7_u32) },
        keep,
        "ab",
    )
    .unwrap_err();
    let f = err.failure().unwrap();
    assert_eq!(f.cuts(), Some(&[][..]));
    assert_eq!(f.message(), "(a panic whose payload is not a string)");
}

/// A hold-back redactor whose steps return a `Result`: `feed` fails once
/// it holds more than `cap` bytes, `flush` fails when `fail_flush`.
struct Capped {
    inner: HoldBack,
    cap: usize,
    fail_flush: bool,
}

impl Capped {
    fn feed(&mut self, chunk: &str) -> Result<String, String> {
        let out = self.inner.feed(chunk);
        match self.inner.held().len() {
            n if n > self.cap => Err(format!("{n} bytes held")),
            _ => Ok(out),
        }
    }

    fn flush(&mut self) -> Result<String, String> {
        match self.fail_flush {
            true => Err("flush refused".to_owned()),
            false => Ok(self.inner.flush()),
        }
    }
}

#[test]
fn try_per_chunk_passes_when_every_step_is_ok_and_reports_the_first_err() {
    let capped = |cap, fail_flush| {
        try_per_chunk(
            |c, r: &mut Capped| r.feed(c),
            move || Capped {
                inner: HoldBack::new(),
                cap,
                fail_flush,
            },
            Capped::flush,
        )
    };
    assert_eq!(
        check_chunk_invariant_with(capped(16, false), redact, INPUT, Splits::UpTo(3)),
        Ok(1 + 18 + 153)
    );
    let err = check_chunk_invariant(capped(2, false), redact, INPUT).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::FilterFailed);
    let f = err.failure().unwrap();
    assert!(!f.panicked());
    assert_eq!(f.chunks(), Some(vec![&b"use sk-"[..], b"AbCd1234 now"]));
    assert_eq!(f.message(), "chunk 1 of 2: 3 bytes held");
    assert!(
        err.to_string()
            .contains("\n  error:    chunk 1 of 2: 3 bytes held\n"),
        "{err}"
    );
    let err = check_chunk_invariant(capped(16, true), redact, INPUT).unwrap_err();
    let f = err.failure().unwrap();
    assert_eq!(f.cuts(), Some(&[][..]));
    assert_eq!(f.message(), "flush after 1 chunks: flush refused");
}

#[test]
fn per_chunk_default_makes_each_stream_a_default_state() {
    let err = check_chunk_invariant(
        per_chunk_default(
            |c: &str, seen: &mut String| {
                seen.push_str(c);
                seen.to_uppercase()
            },
            |_| String::new(),
        ),
        |w: &str| w.to_uppercase(),
        "abc",
    )
    .unwrap_err();
    // "a" then "abc" upper-cased: the state starts empty on each stream.
    assert_eq!(err.mismatch().unwrap().streamed(), b"AABC");
    assert_eq!(err.mismatch().unwrap().split_number(), 2);
}

// ---- shrinking -------------------------------------------------------

#[test]
fn a_random_failure_shrinks_to_the_first_cut_inside_the_key() {
    let input = format!("{}sk-AbCd1234{}", "x".repeat(40), "y".repeat(40));
    for seed in 0..8 {
        let err = check_chunk_invariant_with(
            redact_each_chunk,
            redact,
            input.as_str(),
            Splits::Random {
                count: 300,
                seed,
                max_parts: 6,
            },
        )
        .unwrap_err();
        let m = err.mismatch().unwrap();
        // Every failing split has a cut inside the key (41..=50); one cut
        // is enough, and the earliest that fails is after its "s".
        assert_eq!(m.cuts(), [41], "seed {seed}: {err}");
        if let Some(from) = m.shrunk_from() {
            assert!(from.iter().any(|c| (41..=50).contains(c)), "{err}");
        }
        assert_eq!(m.streamed(), input.as_bytes());
    }
}

#[test]
fn shrinking_keeps_the_cuts_a_bug_needs_and_is_locally_minimal() {
    // The filter that remembers one chunk needs two cuts to fail.
    let filter = || {
        per_chunk(
            |c, r: &mut OneChunkMemory| r.feed(c),
            OneChunkMemory::default,
            |r| r.0.flush(),
        )
    };
    let given = vec![2, 5, 6, 9, 12, 16];
    let err =
        check_chunk_invariant_with(filter(), redact, INPUT, Splits::Cuts(vec![given.clone()]))
            .unwrap_err();
    let m = err.mismatch().unwrap();
    assert_eq!(m.shrunk_from(), Some(given.as_slice()));
    let cuts = m.cuts().to_vec();
    assert_eq!(cuts.len(), 2, "{err}");
    // Locally minimal, checked by running the neighbours: dropping any
    // cut, or moving any cut one character earlier, passes.
    let passes = |cuts: Vec<usize>| {
        check_chunk_invariant_with(filter(), redact, INPUT, Splits::Cuts(vec![cuts])).is_ok()
    };
    for i in 0..cuts.len() {
        let mut dropped = cuts.clone();
        dropped.remove(i);
        assert!(passes(dropped), "{err}");
        let floor = if i == 0 { 0 } else { cuts[i - 1] };
        if cuts[i] - 1 > floor {
            let mut moved = cuts.clone();
            moved[i] -= 1;
            assert!(passes(moved), "{err}");
        }
    }
    assert!(!passes(cuts));
}

#[test]
fn a_panic_on_a_given_split_shrinks_to_a_split_that_panics() {
    // Panics on any chunk that holds a "-" but is not the whole input.
    let err = check_chunk_invariant_with(
        |chunks: Chunks<'_, str>| {
            chunks
                .map(|c| {
                    assert!(c == INPUT || !c.contains('-'), "a dash in {c:?}");
                    c.to_owned()
                })
                .collect::<Vec<_>>()
        },
        keep,
        INPUT,
        Splits::Cuts(vec![vec![3, 8, 12]]),
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Panicked);
    let f = err.failure().unwrap();
    assert_eq!(f.shrunk_from(), Some(&[3, 8, 12][..]));
    assert_eq!(f.cuts(), Some(&[1][..]));
    assert_eq!(f.message(), r#"a dash in "se sk-AbCd1234 now""#);
}

#[test]
fn shrinking_stops_after_its_run_budget() {
    // Fails only on splits of exactly 2,000 chunks: no cut of the split
    // given can be dropped, and trying each one would take 1,999 runs.
    let input = "a".repeat(2000);
    let runs = Cell::new(0);
    let err = check_chunk_invariant_with(
        |chunks: Chunks<'_, str>| {
            runs.set(runs.get() + 1);
            let many = chunks.len() == 2000;
            chunks.map(move |c| if many { c.to_uppercase() } else { c.to_owned() })
        },
        keep,
        input.as_str(),
        Splits::Cuts(vec![(1..2000).collect()]),
    )
    .unwrap_err();
    let m = err.mismatch().unwrap();
    assert_eq!(m.shrunk_from(), None);
    assert_eq!(m.cuts().len(), 1999);
    let text = err.to_string();
    assert!(
        text.ends_with(
            "split #1 in the order given; shrinking stopped after 1000 runs without a smaller split"
        ),
        "{text}"
    );
    // The split, its re-run, and the budget.
    assert_eq!(runs.get(), 2 + 1000);
}

// ---- non-determinism -------------------------------------------------

#[test]
fn a_whole_filter_that_changes_between_runs_is_called_out() {
    let calls = Cell::new(0);
    let err = check_chunk_invariant(
        identity,
        |w: &str| {
            calls.set(calls.get() + 1);
            format!("{w}{}", calls.get())
        },
        "ab",
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotDeterministic);
    let m = err.mismatch().unwrap();
    assert_eq!(m.whole(), b"ab1");
    assert_eq!(m.rerun(), Some(&Rerun::WholeGave(b"ab2".to_vec())));
    let text = err.to_string();
    assert!(
        text.starts_with("stream filter is not deterministic\n"),
        "{text}"
    );
    assert!(
        text.ends_with("\n  again:    the whole-input filter gave \"ab2\" when run again"),
        "{text}"
    );
}

#[test]
fn a_failing_split_that_passes_on_a_rerun_is_called_out_and_not_shrunk() {
    // Drops the last character of the third stream only.
    let streams = Cell::new(0);
    let err = check_chunk_invariant_with(
        |chunks: Chunks<'_, str>| {
            streams.set(streams.get() + 1);
            let mut out: String = chunks.collect();
            if streams.get() == 3 {
                out.pop();
            }
            vec![out]
        },
        keep,
        "abcd",
        Splits::Cuts(vec![vec![], vec![1], vec![1, 2, 3]]),
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotDeterministic);
    let m = err.mismatch().unwrap();
    assert_eq!(m.cuts(), [1, 2, 3]);
    assert_eq!(m.shrunk_from(), None);
    assert_eq!(m.streamed(), b"abc");
    assert_eq!(m.rerun(), Some(&Rerun::StreamGave(b"abcd".to_vec())));
    assert!(
        err.to_string()
            .ends_with("\n  again:    the same split gave \"abcd\" when run again"),
        "{err}"
    );
    // The split, its re-run, and nothing more.
    assert_eq!(streams.get(), 4);
}

#[test]
fn a_split_that_panics_only_sometimes_is_called_out() {
    let streams = Cell::new(0);
    let err = check_chunk_invariant(
        |chunks: Chunks<'_, str>| {
            streams.set(streams.get() + 1);
            assert!(streams.get() != 2, "second stream");
            chunks
        },
        keep,
        "abc",
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotDeterministic);
    let f = err.failure().unwrap();
    assert_eq!(f.message(), "second stream");
    assert_eq!(f.rerun(), Some(&Rerun::StreamGave(b"abc".to_vec())));
    assert!(
        err.to_string()
            .starts_with("stream filter is not deterministic\n"),
        "{err}"
    );
}

// ---- async -----------------------------------------------------------

#[cfg(feature = "stream")]
mod async_path {
    use std::future::Future;
    use std::pin::{Pin, pin};
    use std::task::{Context, Poll, Waker};

    use chunk_invariance::examples::{HoldBack, redact};
    use chunk_invariance::{
        Chunks, Splits, assert_chunk_invariant, assert_chunk_invariant_async, blocking,
        check_chunk_invariant_async, check_chunk_invariant_async_with,
    };
    use futures_core::Stream;

    /// A minimal executor: polls with a no-op waker until ready. The
    /// streams below wake themselves, so polling again is all they need.
    fn block_on<F: Future>(future: F) -> F::Output {
        let mut future = pin!(future);
        let mut cx = Context::from_waker(Waker::noop());
        loop {
            if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
                return out;
            }
        }
    }

    /// An async filter that is pending once before each output chunk,
    /// as a filter awaiting I/O would be.
    struct Yielding<'a, P> {
        chunks: Chunks<'a, str>,
        process: P,
        ready: bool,
        done: bool,
    }

    impl<'a, P: FnMut(Option<&'a str>) -> String> Yielding<'a, P> {
        fn new(chunks: Chunks<'a, str>, process: P) -> Self {
            Yielding {
                chunks,
                process,
                ready: false,
                done: false,
            }
        }
    }

    impl<'a, P: FnMut(Option<&'a str>) -> String + Unpin> Stream for Yielding<'a, P> {
        type Item = String;

        fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<String>> {
            if self.done {
                return Poll::Ready(None);
            }
            if !self.ready {
                self.ready = true;
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            self.ready = false;
            let next = Pin::new(&mut self.chunks).poll_next(cx);
            let Poll::Ready(chunk) = next else {
                unreachable!("Chunks is always ready")
            };
            if chunk.is_none() {
                self.done = true;
            }
            Poll::Ready(Some((self.process)(chunk)))
        }
    }

    fn hold_back(chunks: Chunks<'_, str>) -> impl Stream<Item = String> + '_ {
        let mut r = HoldBack::new();
        Yielding::new(chunks, move |c| match c {
            Some(c) => r.feed(c),
            None => r.flush(),
        })
    }

    fn each_alone(chunks: Chunks<'_, str>) -> impl Stream<Item = String> + '_ {
        Yielding::new(chunks, |c| c.map(redact).unwrap_or_default())
    }

    #[test]
    fn async_check_passes_a_right_filter() {
        assert_eq!(
            block_on(check_chunk_invariant_async(
                hold_back,
                redact,
                "use sk-AbCd1234 now"
            )),
            Ok(19)
        );
        assert_eq!(
            block_on(check_chunk_invariant_async_with(
                hold_back,
                redact,
                "sk-AbCd1234",
                Splits::All
            )),
            Ok(1024)
        );
    }

    #[test]
    fn async_check_reports_the_same_split_as_the_sync_one() {
        let err = block_on(check_chunk_invariant_async(
            each_alone,
            redact,
            "use sk-AbCd1234 now",
        ))
        .unwrap_err();
        let m = err.mismatch().unwrap();
        assert_eq!(m.cuts(), [5]);
        assert_eq!(m.split_number(), 6);
    }

    #[test]
    fn async_assertion_resolves_to_the_count_and_panics_naming_the_caller() {
        assert_eq!(
            block_on(assert_chunk_invariant_async(hold_back, redact, "abc sk-")),
            7
        );
        let future = assert_chunk_invariant_async(each_alone, redact, "use sk-AbCd1234 now");
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| block_on(future)));
        let payload = caught.unwrap_err();
        let message = payload.downcast_ref::<String>().unwrap();
        assert!(message.contains("(cut at 5)"), "{message}");
        assert!(message.contains("asserted at"), "{message}");
        assert!(message.contains(file!()), "{message}");
    }

    #[test]
    fn async_checks_of_send_filters_are_send() {
        // A multi-threaded runtime spawns only `Send` futures.
        fn send<F: Future + Send>(future: F) -> F {
            future
        }
        assert_eq!(
            block_on(send(check_chunk_invariant_async(
                hold_back, redact, "abc sk-"
            ))),
            Ok(7)
        );
        assert_eq!(
            block_on(send(assert_chunk_invariant_async(
                hold_back, redact, "abc sk-"
            ))),
            7
        );
    }

    #[test]
    fn blocking_runs_an_async_filter_under_the_sync_assertion() {
        assert_eq!(
            assert_chunk_invariant(blocking(hold_back), redact, "use sk-AbCd1234 now"),
            19
        );
        let err = chunk_invariance::check_chunk_invariant(
            blocking(each_alone),
            redact,
            "use sk-AbCd1234 now",
        )
        .unwrap_err();
        assert_eq!(err.mismatch().unwrap().split_number(), 6);
    }

    #[test]
    fn a_panic_while_the_async_filter_is_polled_is_reported_with_its_split() {
        fn fragile(chunks: Chunks<'_, str>) -> impl Stream<Item = String> + '_ {
            Yielding::new(chunks, |c| {
                let c = c.unwrap_or_default();
                assert!(!c.starts_with('k'), "a chunk starts with k");
                c.to_owned()
            })
        }
        let err = block_on(check_chunk_invariant_async(
            fragile,
            str::to_owned,
            "use sk-AbCd1234 now",
        ))
        .unwrap_err();
        assert_eq!(err.kind(), chunk_invariance::ErrorKind::Panicked);
        let f = err.failure().unwrap();
        assert_eq!(f.cuts(), Some(&[5][..]));
        assert_eq!(f.message(), "a chunk starts with k");
    }

    #[test]
    fn blocking_waits_for_a_wake_from_another_thread() {
        /// Pending until a thread it started wakes it.
        struct Later<'a> {
            chunks: Chunks<'a, str>,
            woken: std::sync::Arc<std::sync::atomic::AtomicBool>,
            started: bool,
        }

        impl Stream for Later<'_> {
            type Item = String;

            fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<String>> {
                use std::sync::atomic::Ordering;
                if !self.started {
                    self.started = true;
                    let (woken, waker) = (self.woken.clone(), cx.waker().clone());
                    std::thread::spawn(move || {
                        std::thread::sleep(std::time::Duration::from_millis(5));
                        woken.store(true, Ordering::SeqCst);
                        waker.wake();
                    });
                }
                if !self.woken.load(Ordering::SeqCst) {
                    return Poll::Pending;
                }
                Poll::Ready(self.chunks.next().map(str::to_uppercase))
            }
        }

        let n = assert_chunk_invariant(
            blocking(|chunks| Later {
                chunks,
                woken: Default::default(),
                started: false,
            }),
            |w: &str| w.to_uppercase(),
            "abc",
        );
        assert_eq!(n, 3);
    }
}

// ---- proptest strategies ---------------------------------------------

#[cfg(feature = "proptest")]
mod strategies {
    use chunk_invariance::examples::{redact, redact_each_chunk, redact_holding_back};
    use chunk_invariance::strategy::{
        input_and_split, input_and_split_up_to, split_of, split_of_up_to,
    };
    use chunk_invariance::{Splits, check_chunk_invariant_with};
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestError, TestRunner};

    const INPUT: &str = "use sk-AbCd1234 now";

    fn runner() -> TestRunner {
        TestRunner::new_with_rng(
            Config {
                cases: 256,
                failure_persistence: None,
                ..Config::default()
            },
            proptest::test_runner::TestRng::deterministic_rng(
                proptest::test_runner::RngAlgorithm::ChaCha,
            ),
        )
    }

    #[test]
    fn split_of_shrinks_to_one_cut_inside_the_key() {
        let result = runner().run(&split_of(INPUT), |split| {
            assert_eq!(split.concat(), INPUT);
            check_chunk_invariant_with(redact_each_chunk, redact, INPUT, Splits::explicit([&split]))
                .map(|_| ())
                .map_err(TestCaseError::from)
        });
        let Err(TestError::Fail(_, minimal)) = result else {
            panic!("the broken redactor passed: {result:?}")
        };
        assert_eq!(minimal.len(), 2, "{minimal:?}");
        let cut = minimal[0].len();
        assert!((5..=14).contains(&cut), "{minimal:?}");
    }

    #[test]
    fn split_of_passes_the_right_filter() {
        let result = runner().run(&split_of(INPUT), |split| {
            check_chunk_invariant_with(
                redact_holding_back,
                redact,
                INPUT,
                Splits::explicit([&split]),
            )
            .map(|_| ())
            .map_err(TestCaseError::from)
        });
        assert!(result.is_ok(), "{result:?}");
    }

    #[test]
    fn split_of_bytes_cuts_inside_characters() {
        let input = "é€".as_bytes();
        let seen_inside = std::cell::Cell::new(false);
        runner()
            .run(&split_of(input), |split| {
                prop_assert_eq!(split.concat(), input);
                if split.iter().any(|c| std::str::from_utf8(c).is_err()) {
                    seen_inside.set(true);
                }
                Ok(())
            })
            .unwrap();
        assert!(seen_inside.get());
    }

    #[test]
    fn input_and_split_shrinks_input_and_split() {
        let inputs = "[a-z ]{0,8}sk-[A-Za-z0-9]{8}[a-z ]{0,8}";
        let result = runner().run(&input_and_split(inputs), |(input, split)| {
            assert_eq!(split.concat(), input);
            check_chunk_invariant_with(
                redact_each_chunk,
                redact,
                input.as_str(),
                Splits::explicit([&split]),
            )
            .map(|_| ())
            .map_err(TestCaseError::from)
        });
        let Err(TestError::Fail(_, (input, split))) = result else {
            panic!("the broken redactor passed: {result:?}")
        };
        assert_eq!(input.len(), 11, "{input:?}");
        assert_eq!(split.len(), 2, "{split:?}");
    }

    #[test]
    fn split_of_up_to_bounds_the_parts_and_shrinks_to_one_cut() {
        let seen_most = std::cell::Cell::new(false);
        runner()
            .run(&split_of_up_to(INPUT, 4), |split| {
                prop_assert!(split.len() <= 4);
                prop_assert_eq!(split.concat(), INPUT);
                seen_most.set(seen_most.get() || split.len() == 4);
                Ok(())
            })
            .unwrap();
        assert!(seen_most.get());
        let result = runner().run(&split_of_up_to(INPUT, 4), |split| {
            check_chunk_invariant_with(redact_each_chunk, redact, INPUT, Splits::explicit([&split]))
                .map(|_| ())
                .map_err(TestCaseError::from)
        });
        let Err(TestError::Fail(_, minimal)) = result else {
            panic!("the broken redactor passed: {result:?}")
        };
        assert_eq!(minimal.len(), 2, "{minimal:?}");
        // An input with no cut point has only itself.
        runner()
            .run(&split_of_up_to("x", 3), |split| {
                prop_assert_eq!(split, vec!["x".to_owned()]);
                Ok(())
            })
            .unwrap();
    }

    #[test]
    fn input_and_split_up_to_bounds_the_parts() {
        runner()
            .run(
                &input_and_split_up_to("[a-z]{0,12}", 2),
                |(input, split)| {
                    prop_assert!(split.len() <= 2);
                    prop_assert_eq!(split.concat(), input);
                    Ok(())
                },
            )
            .unwrap();
    }

    #[test]
    fn input_and_split_works_on_bytes() {
        let inputs = proptest::collection::vec(any::<u8>(), 0..12);
        runner()
            .run(&input_and_split(inputs), |(input, split)| {
                prop_assert_eq!(split.concat(), input);
                Ok(())
            })
            .unwrap();
    }
}
