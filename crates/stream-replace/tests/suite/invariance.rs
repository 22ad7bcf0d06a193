//! Chunk invariance, checked with `chunk-invariance`: the `Replacer` (text
//! and bytes) and every adapter give `replace_all` (or
//! `replace_all_bytes`) of the whole input for every split tried.
//!
//! The `Replacer` runs short inputs (up to 10 characters, or 10 bytes for
//! byte input) through every split there is, slightly longer ones through
//! every split into at most four parts, and long ones through every split
//! into at most three parts, one unit at a time, and seeded random splits
//! into up to 8 and up to 40 parts. The adapters, thin loops around `feed`
//! and `flush`, run fewer splits of the same inputs. Byte inputs are cut at
//! every byte, so also inside UTF-8 characters, and some are not valid
//! UTF-8. The last test shows that the check catches a per-chunk design
//! built from the same API and names the smallest split that breaks it.
//!
//! The split counts keep the module to a few seconds in a debug build.

use std::collections::VecDeque;
use std::io::{self, Read, Write};

use chunk_invariance::{
    ErrorKind, Splits, assert_chunk_invariant, assert_chunk_invariant_with, check_chunk_invariant,
    per_chunk,
};
use stream_replace::{ReplaceReader, ReplaceWriter, Replacer, Rules, wrap, wrap_bytes};

/// Secrets, PII and a reasoning block, in the order a redactor would list
/// them.
fn pii() -> Rules {
    Rules::builder()
        .regex(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", "[EMAIL]")
        .regex(r"\b\d{3}-\d{2}-\d{4}\b", "[SSN]")
        .regex(r"(?:\+1 |\()?\d{3}\)?[ -]\d{3}-\d{4}", "[PHONE]")
        .regex(r"<think>[\s\S]*?</think>", "")
        .regex(r"sk-[A-Za-z0-9]{8}", "[KEY]")
        .build()
        .expect("the PII rules compile")
}

/// Unicode word boundaries and case folding over multi-byte characters.
fn unicode() -> Rules {
    Rules::builder()
        .regex(r"\bcafé\b", "coffee")
        .regex(r"(?i)σ+", "s")
        .build()
        .expect("the Unicode rules compile")
}

/// Rules that match the empty string: line starts, and runs of `a` that
/// may be empty.
fn empty() -> Rules {
    Rules::builder()
        .regex(r"(?m)^", "> ")
        .regex(r"a*", "<$0>")
        .build()
        .expect("the empty-matching rules compile")
}

// Short inputs of at most `EVERY_SPLIT_UNITS` units (characters for text,
// bytes for byte input) are tried through every split there is, longer
// ones through every split into at most four parts; see `Plan`.

const PII_SHORT: [&str; 9] = [
    "to a@b.io ok",
    "123-45-6789!",
    "1234-45-6789",
    "415 555-0134",
    "sk-AbCd1234",
    "sk-AbCd123 ",
    "a@b.c@d.e",
    "a<think>",
    "<think></think>",
];

const PII_LONG: [&str; 4] = [
    "<think>123-45-6789</think>a@b.io ok",
    "call (415) 555-0134, key sk-AbCd1234",
    "sk-sk-AbCd12345 1234-56-789 x@y.z@w",
    "ok <think>never closed, a@b.io",
];

const UNICODE_SHORT: [&str; 5] = [
    "café cafés",
    "ΣσΣ café!",
    "écafé café",
    "un café.",
    "ΌΣΟΣ σς",
];

const UNICODE_LONG: [&str; 2] = [
    "Un café, deux cafés, un décafé: ΣΟΦΊΑ σοφία — café",
    "カフェ café, naïve café, Café, ς is final",
];

const EMPTY_SHORT: [&str; 5] = ["", "aaa", "ba\naab", "\n\na\n", "é a\nà a"];

const EMPTY_LONG: [&str; 2] = ["a line\nanother aa line\n\nbanana\naaaa", "àa\naé\n\nσa\na"];

/// Byte inputs, some not valid UTF-8.
const UNICODE_BYTES: [&[u8]; 3] = [
    b"caf\xC3\xA9\xFF \xCF\x83\xCF",
    b"\xA9caf\xC3\xA9 \xCF\x83",
    b"\xCF\x83\xCF\xA3\xCF\x83\xCF",
];

const EMPTY_BYTES: [&[u8]; 3] = [b"a\xFFa\n\xC3", b"\xC3\xA9a\n\xFF\na", b"aa\x80\x80aa"];

/// The longest input, in units, tried through every split: 2^9 = 512
/// splits. Longer ones cost too much in a debug build.
const EVERY_SPLIT_UNITS: usize = 10;

// ---- the filters under test, one per API ----

/// `Replacer::feed` and `flush`.
fn replacer_str<'a>(
    rules: &Rules,
) -> impl FnMut(chunk_invariance::Chunks<'a, str>) -> Vec<String> + use<'a> {
    per_chunk(
        |chunk: &str, r: &mut Replacer| r.feed(chunk).expect("no held limit"),
        {
            let rules = rules.clone();
            move || rules.replacer()
        },
        |r| r.flush().expect("no held limit"),
    )
}

/// `Replacer::feed_bytes` and `flush_bytes`.
fn replacer_bytes<'a>(
    rules: &Rules,
) -> impl FnMut(chunk_invariance::Chunks<'a, [u8]>) -> Vec<Vec<u8>> + use<'a> {
    per_chunk(
        |chunk: &[u8], r: &mut Replacer| r.feed_bytes(chunk).expect("no held limit"),
        {
            let rules = rules.clone();
            move || rules.replacer()
        },
        |r| r.flush_bytes().expect("no held limit"),
    )
}

/// `ReplaceWriter`: writes each chunk, takes what reached the inner
/// writer, then finishes.
fn writer(rules: &Rules, chunks: chunk_invariance::Chunks<'_, [u8]>) -> Vec<Vec<u8>> {
    let mut w = ReplaceWriter::new(rules.replacer(), Vec::new());
    let mut out = Vec::new();
    for chunk in chunks {
        w.write_all(chunk).expect("writing to a Vec");
        out.push(std::mem::take(w.get_mut()));
    }
    out.push(w.finish().expect("writing to a Vec"));
    out
}

/// A reader that returns the given chunks, one per read (a chunk longer
/// than the buffer is returned over several reads).
struct ChunkReader<'a> {
    chunks: VecDeque<&'a [u8]>,
}

impl Read for ChunkReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // An empty chunk would read as the end of input.
        while let Some(chunk) = self.chunks.pop_front() {
            if chunk.is_empty() {
                continue;
            }
            let n = chunk.len().min(buf.len());
            buf[..n].copy_from_slice(&chunk[..n]);
            if n < chunk.len() {
                self.chunks.push_front(&chunk[n..]);
            }
            return Ok(n);
        }
        Ok(0)
    }
}

/// `ReplaceReader` over the chunks, read into a small buffer so that one
/// chunk's output may take several reads.
fn reader(rules: &Rules, chunks: chunk_invariance::Chunks<'_, [u8]>) -> Vec<Vec<u8>> {
    let inner = ChunkReader {
        chunks: chunks.collect(),
    };
    let mut r = ReplaceReader::new(rules.replacer(), inner);
    let mut out = Vec::new();
    let mut buf = [0; 5];
    loop {
        match r.read(&mut buf).expect("reading chunks") {
            0 => return out,
            n => out.push(buf[..n].to_vec()),
        }
    }
}

/// Which splits the checks try. The `Replacer` gets the most; the adapters,
/// thin loops around its `feed` and `flush`, fewer, so that the module stays
/// fast in a debug build.
struct Plan {
    replacer: Splits,
    adapters: Splits,
}

impl Plan {
    /// Every split of an input of at most [`EVERY_SPLIT_UNITS`] units for
    /// the `Replacer`, every split into at most four parts of a longer one;
    /// at most three parts for the adapters.
    fn short(units: usize) -> Plan {
        Plan {
            replacer: if units <= EVERY_SPLIT_UNITS {
                Splits::All
            } else {
                Splits::UpTo(4)
            },
            adapters: Splits::UpTo(3),
        }
    }

    /// For a long input with these cut points: one unit per chunk, random
    /// splits into up to 8 and up to 40 parts, and for the `Replacer` every
    /// split into at most three parts, for the adapters into two.
    fn long(cut_points: Vec<usize>, seed: u64) -> Plan {
        let sampled = |count| {
            Splits::Cuts(vec![cut_points.clone()])
                .then(Splits::random(count, seed))
                .then(Splits::Random {
                    count,
                    seed: seed + 1,
                    max_parts: 40,
                })
        };
        Plan {
            replacer: Splits::UpTo(3).then(sampled(60)),
            adapters: Splits::TwoPart.then(sampled(15)),
        }
    }
}

/// Every text API against `replace_all`; returns how many splits the
/// `Replacer` was checked on.
fn check_text(rules: &Rules, input: &str, plan: &Plan) -> usize {
    let whole = |s: &str| rules.replace_all(s);
    let n = assert_chunk_invariant_with(replacer_str(rules), whole, input, plan.replacer.clone());
    assert_chunk_invariant_with(
        |chunks| wrap(rules.replacer(), chunks).map(|r| r.expect("no held limit")),
        whole,
        input,
        plan.adapters.clone(),
    );
    #[cfg(feature = "stream")]
    assert_chunk_invariant_with(
        |chunks| {
            stream::collect(stream_replace::wrap_stream(
                rules.replacer(),
                stream::Source(chunks),
            ))
        },
        whole,
        input,
        plan.adapters.clone(),
    );
    n
}

/// Every byte API against `replace_all_bytes`; returns how many splits the
/// `Replacer` was checked on.
fn check_bytes(rules: &Rules, input: &[u8], plan: &Plan) -> usize {
    let whole = |b: &[u8]| rules.replace_all_bytes(b);
    let n = assert_chunk_invariant_with(replacer_bytes(rules), whole, input, plan.replacer.clone());
    assert_chunk_invariant_with(
        |chunks| wrap_bytes(rules.replacer(), chunks).map(|r| r.expect("no held limit")),
        whole,
        input,
        plan.adapters.clone(),
    );
    assert_chunk_invariant_with(
        |chunks| writer(rules, chunks),
        whole,
        input,
        plan.adapters.clone(),
    );
    assert_chunk_invariant_with(
        |chunks| reader(rules, chunks),
        whole,
        input,
        plan.adapters.clone(),
    );
    #[cfg(feature = "stream")]
    assert_chunk_invariant_with(
        |chunks| {
            stream::collect(stream_replace::wrap_stream_bytes(
                rules.replacer(),
                stream::Source(chunks),
            ))
        },
        whole,
        input,
        plan.adapters.clone(),
    );
    n
}

/// The number of splits the `Replacer` is checked on for a short input.
fn short_count(units: usize) -> usize {
    if units <= EVERY_SPLIT_UNITS {
        1 << units.saturating_sub(1)
    } else {
        // The whole input and every choice of one to three of the cuts.
        let cuts = units - 1;
        1 + cuts + cuts * (cuts - 1) / 2 + cuts * (cuts - 1) * (cuts - 2) / 6
    }
}

fn check_short_bytes(rules: &Rules, input: &[u8]) {
    let n = check_bytes(rules, input, &Plan::short(input.len()));
    assert_eq!(n, short_count(input.len()), "{input:?}");
}

/// Each short input as text and as bytes.
fn check_short(rules: &Rules, inputs: &[&str]) {
    for input in inputs {
        let chars = input.chars().count();
        let n = check_text(rules, input, &Plan::short(chars));
        assert_eq!(n, short_count(chars), "{input:?}");
        check_short_bytes(rules, input.as_bytes());
    }
}

fn check_long(rules: &Rules, inputs: &[&str]) {
    for (seed, input) in (1..).zip(inputs) {
        let chars = input.char_indices().map(|(i, _)| i).skip(1).collect();
        check_text(rules, input, &Plan::long(chars, seed));
        let bytes = input.as_bytes();
        check_bytes(rules, bytes, &Plan::long((1..bytes.len()).collect(), seed));
    }
}

#[test]
fn pii_short_every_split() {
    check_short(&pii(), &PII_SHORT);
}

#[test]
fn pii_long() {
    check_long(&pii(), &PII_LONG);
}

#[test]
fn unicode_short_every_split() {
    let rules = unicode();
    check_short(&rules, &UNICODE_SHORT);
    for input in UNICODE_BYTES {
        check_short_bytes(&rules, input);
    }
}

#[test]
fn unicode_long() {
    check_long(&unicode(), &UNICODE_LONG);
}

#[test]
fn empty_matches_short_every_split() {
    let rules = empty();
    // `^` wins the tie at a line start; as in `regex`, an empty match
    // right where the previous match ended is skipped, and the search
    // then moves on one character, so the `a` after "> " stays as it is.
    assert_eq!(rules.replace_all("ba\na"), "> b<a>\n> a<>");
    check_short(&rules, &EMPTY_SHORT);
    for input in EMPTY_BYTES {
        check_short_bytes(&rules, input);
    }
}

#[test]
fn empty_matches_long() {
    check_long(&empty(), &EMPTY_LONG);
}

#[test]
fn two_part_splits_by_default() {
    let rules = pii();
    let input = PII_LONG[0];
    let n = assert_chunk_invariant(replacer_str(&rules), |s: &str| rules.replace_all(s), input);
    assert_eq!(n, input.chars().count());
    let n = assert_chunk_invariant(
        replacer_bytes(&rules),
        |b: &[u8]| rules.replace_all_bytes(b),
        input.as_bytes(),
    );
    assert_eq!(n, input.len());
}

/// A per-chunk design: each chunk through a fresh replacer, flushed at the
/// chunk's end. Right on whole inputs, it leaks a value cut in two.
#[test]
fn catches_a_per_chunk_design() {
    let rules = pii();
    let per_chunk_design = |chunks: chunk_invariance::Chunks<'_, str>| {
        chunks
            .map(|chunk| {
                let mut r = rules.replacer();
                let mut out = r.feed(chunk).expect("no held limit");
                out += &r.flush().expect("no held limit");
                out
            })
            .collect::<Vec<_>>()
    };
    let input = "to a@b.io";
    let err = check_chunk_invariant(per_chunk_design, |s: &str| rules.replace_all(s), input)
        .expect_err("a per-chunk design is not chunk-invariant");
    assert_eq!(err.kind(), ErrorKind::NotInvariant);
    let m = err.mismatch().expect("a mismatch");
    // Cuts at 1, 2 and 3 leave the address whole in the second chunk; the
    // cut at 4 is the first inside it: "to a" has no match and "@b.io"
    // cannot start one.
    assert_eq!(m.cuts(), [4]);
    assert_eq!(m.chunks(), [&b"to a"[..], b"@b.io"]);
    assert_eq!(m.split_number(), 5);
    assert_eq!(m.whole(), b"to [EMAIL]");
    assert_eq!(m.streamed(), b"to a@b.io");
    let report = err.to_string();
    assert!(
        report.contains(r#"split:    ["to a", "@b.io"] (cut at 4)"#),
        "{report}"
    );

    // The stream itself passes on the same input.
    let n = check_chunk_invariant(replacer_str(&rules), |s: &str| rules.replace_all(s), input)
        .expect("the replacer is chunk-invariant");
    assert_eq!(n, input.len());
}

/// A source stream over the chunks of one split, and a driver that polls
/// a stream to its end.
#[cfg(feature = "stream")]
mod stream {
    use std::pin::Pin;
    use std::task::{Context, Poll, Waker};

    use futures_core::Stream;

    /// A stream of the split's chunks, always ready.
    pub(super) struct Source<I>(pub(super) I);

    impl<I: Iterator + Unpin> Stream for Source<I> {
        type Item = I::Item;

        fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<I::Item>> {
            Poll::Ready(self.0.next())
        }
    }

    /// Polls `s` to its end with a no-op waker; the source is never
    /// pending, so neither is `s`.
    pub(super) fn collect<S, T>(mut s: S) -> Vec<T>
    where
        S: Stream<Item = Result<T, stream_replace::StreamError>> + Unpin,
    {
        let mut cx = Context::from_waker(Waker::noop());
        let mut out = Vec::new();
        loop {
            match Pin::new(&mut s).poll_next(&mut cx) {
                Poll::Ready(Some(item)) => out.push(item.expect("no held limit")),
                Poll::Ready(None) => return out,
                Poll::Pending => panic!("an always-ready source made the stream pending"),
            }
        }
    }
}
