/*!
Assert that a streaming filter is chunk-invariant.

A streaming filter (a redactor, a guardrail, a rewriter) is correct only if,
for every way of splitting an input into chunks, the concatenated streamed
output equals the output of filtering the whole input at once. This crate
turns that rule into one assertion, and when it fails, names the smallest
split that breaks it.

# Quickstart

A redactor that filters each chunk on its own looks right on whole inputs
and leaks a key the moment the key is cut across two chunks:

```should_panic
use chunk_invariance::assert_chunk_invariant;

// The filter on the whole input.
fn redact(text: &str) -> String {
    text.replace("sk-AbCd1234", "[KEY]")
}

// The filter on a stream: takes chunks, gives chunks. It redacts each
// chunk alone.
assert_chunk_invariant(|chunks| chunks.map(redact), redact, "use sk-AbCd1234 now");
```

That assertion panics with:

```text
stream filter is not chunk-invariant
  input:    "use sk-AbCd1234 now"
  split:    ["use s", "k-AbCd1234 now"] (cut at 5)
  whole:    "use [KEY] now"
  streamed: "use sk-AbCd1234 now"
  differ:   from byte 4: whole "[KEY] now", streamed "sk-AbCd1234 now"
  split #6 in the order tried; generated splits run fewest parts first
```

A filter that holds back a tail that could still become a key passes, and
the assertion returns how many splits it checked:

```
use chunk_invariance::{assert_chunk_invariant, per_chunk};

#[derive(Default)]
struct Redactor {
    pending: String,
}

impl Redactor {
    const KEY: &'static str = "sk-AbCd1234";

    fn feed(&mut self, chunk: &str) -> String {
        self.pending.push_str(chunk);
        let text = self.pending.replace(Self::KEY, "[KEY]");
        // Hold back the longest tail that is a start of the key.
        let hold = (1..Self::KEY.len())
            .rev()
            .find(|&n| text.ends_with(&Self::KEY[..n]))
            .unwrap_or(0);
        self.pending = text[text.len() - hold..].to_owned();
        text[..text.len() - hold].to_owned()
    }

    fn flush(&mut self) -> String {
        std::mem::take(&mut self.pending)
    }
}

let checked = assert_chunk_invariant(
    per_chunk(|chunk, r: &mut Redactor| r.feed(chunk), Redactor::default, Redactor::flush),
    |whole: &str| whole.replace(Redactor::KEY, "[KEY]"),
    "use sk-AbCd1234 now",
);
assert_eq!(checked, 19);
```

The [`examples`] module works through the same comparison for a real key
pattern: the filter that redacts each chunk alone, the one that prepends a
fixed carry-over from the previous chunk, and the one that holds back.

# The filters

* `stream_filter` is anything that turns the chunks of one split into output
  chunks: a closure `FnMut(Chunks<'_, T>) -> impl IntoIterator`. The check
  calls it once per split, so it must start fresh each time (a new redactor,
  a new state). [`per_chunk`] builds one from a `process(chunk, &mut state)`
  step, a state factory and a `flush`; [`per_chunk_default`] makes the state
  with `Default`; [`try_per_chunk`] takes a step and a flush that return a
  `Result`.
* `whole_filter` takes the whole input: `FnMut(&T) -> output`. It runs once,
  and once more after a failure, to tell a non-deterministic filter from a
  chunking bug.
* The input is a `&str` (cut only between characters) or a `&[u8]` (cut at
  every byte, so also inside UTF-8 characters). Output chunks may be owned
  or borrowed: `String`, `&str`, `Cow<str>` for text; those and `Vec<u8>`,
  `&[u8]` for bytes. See [`Text`] and [`OutputChunk`]. An owned input is
  passed as `s.as_str()` or `v.as_slice()`: the input type is generic, so
  `&String` does not coerce.

A type whose `feed` and `flush` return a `Result` (as
`stream_replace::Replacer`'s do, since a stream may hit its cap on held
bytes) checks in one line with [`try_per_chunk`]. The `Replacer` below is a
stand-in with that shape, so that this example compiles on its own:

```
use chunk_invariance::{assert_chunk_invariant, try_per_chunk};
use chunk_invariance::examples::{redact, HoldBack};

/// Stands for a streaming replacer whose calls can fail.
#[derive(Default)]
struct Replacer(HoldBack);

impl Replacer {
    fn feed(&mut self, chunk: &str) -> Result<String, std::fmt::Error> {
        Ok(self.0.feed(chunk))
    }

    fn flush(&mut self) -> Result<String, std::fmt::Error> {
        Ok(self.0.flush())
    }
}

let make_replacer = Replacer::default;
assert_chunk_invariant(
    try_per_chunk(|c, r: &mut Replacer| r.feed(c), make_replacer, Replacer::flush),
    redact,
    "use sk-AbCd1234 now",
);
```

An `Err` from `feed` or `flush` fails the check, naming the split and the
chunk it happened on.

# Sharper reports

* **Panics.** A stream filter that panics is caught: the report names the
  split that caused it and the panic's message ([`FilterFailure`], kind
  [`ErrorKind::Panicked`]); so is a whole-input filter that panics.
* **Shrinking.** A failing random or explicit split is shrunk before it is
  reported: cuts are dropped one at a time, then moved earlier, while the
  split still fails the same way, until no cut can be dropped or moved one
  unit earlier. The report shows the shrunk split and the one it was found
  as ([`Mismatch::shrunk_from`]). Generated splits need none: they run
  fewest parts first.
* **Non-determinism.** After a failure both filters run again. When the
  whole-input filter gives another output, or the failing split gives
  another result (passes, or fails differently), the report says so
  ([`ErrorKind::NotDeterministic`], [`Mismatch::rerun`]): the bug is
  then in the filter's dependence on time, randomness or shared state,
  not (only) in its chunking.

# The splits

[`Splits`] chooses which splits a check tries. The default,
[`Splits::TwoPart`], is the whole input and then every single cut: `n`
splits for an input of `n` units, and it already catches most boundary
bugs. [`Splits::All`] tries every split of inputs up to 16 units,
[`Splits::UpTo`] every split into at most `k` parts, [`Splits::explicit`]
and [`Splits::Cuts`] the splits you list, and [`Splits::random`] a seeded
sample for long inputs; [`Splits::then`] runs several in sequence.

Generated splits run fewest parts first, whole input first, so the first
failure found is a minimal one. The report numbers it in that order, and
[`two_part_splits`] and [`splits_up_to`] enumerate the same order.

# What it catches and what it cannot

It catches any filter whose output depends on where the chunk boundaries
fall, among the splits it tries:

* a filter that evaluates each chunk alone, so a value cut across two chunks
  matches neither half;
* a filter that prepends a fixed carry-over from the previous chunk: the
  match fires, but the start of the value was already emitted with the
  previous chunk;
* a hold-back buffer that is too short, forgets to flush, or flushes twice;
* a byte filter that assumes chunks end on UTF-8 character boundaries;
* state that leaks between streams: every split after the first runs on a
  filter that has already seen another stream.

What it cannot do:

* It tests filters callable in-process with a chunk list. A filter in
  another language can be checked as a process with the `chunk-invariance`
  command (crate `chunk-invariance-cli`), which feeds it the chunks over
  standard input; one behind a network service needs a harness that feeds it
  the chunks, and can report a failed run with [`fail_split`].
* It checks only the splits it is given. Two-part splits miss bugs that need
  more than one boundary, such as a filter that remembers only the previous
  chunk (with one cut, the previous chunk is all there was); use
  [`Splits::UpTo`]`(3)`, [`Splits::All`] on a short input, or random
  splits, and choose inputs that contain the patterns your filter handles.
  A passing check is evidence for those inputs, not a proof for all.
* It compares outputs only; it does not check that a filter emits early
  (a filter that holds everything until `flush` passes).

# API

| Item | What it does |
| --- | --- |
| [`assert_chunk_invariant`] | panics with the report unless every two-part split matches; returns the number of splits |
| [`assert_chunk_invariant_with`] | the same over the given [`Splits`] |
| [`check_chunk_invariant`], [`check_chunk_invariant_with`] | the same, returning `Result<usize, ChunkInvarianceError>` |
| [`ChunkInvarianceError`], [`ErrorKind`] | the failure: its report (`Display`) and why |
| [`Mismatch`], [`FilterFailure`], [`Rerun`] | its parts: a split with the wrong output, a filter that panicked or failed, a second run that differed |
| [`Splits`] | which splits to try: `TwoPart`, `All`, `UpTo(k)`, `Random`, `Explicit`, `Cuts`, `Chain` |
| [`two_part_splits`], [`splits_up_to`] | enumerate splits as chunk lists, whole input first |
| [`Chunks`] | the chunks of one split, given to the stream filter (an `Iterator`, and with `stream` a `Stream`) |
| [`per_chunk`], [`per_chunk_default`], [`no_flush`] | a stream filter from a per-chunk step with fresh state per stream |
| [`try_per_chunk`], [`fail_split`] | the same for a step that returns a `Result`; stop a split with an error |
| [`Text`], [`OutputChunk`] | the input and output types the checks accept |
| `assert_chunk_invariant_async`, `check_chunk_invariant_async`, and their `_with` forms | the checks for a filter over a `futures_core::Stream` (feature `stream`) |
| `blocking` | runs an async filter under the synchronous assertions (feature `stream`) |
| `strategy::split_of`, `strategy::input_and_split`, and their `_up_to` forms | proptest strategies (feature `proptest`) |
| [`examples`] | three redactors, a worked comparison |

# Crate features

* `stream`: the checks for filters over a `futures_core::Stream` of chunks,
  to await in an async test, and the `blocking` adapter. Adds
  `futures-core`.
* `proptest`: the `strategy` module, strategies for
  random splits that shrink toward fewer cuts. Adds `proptest`.
*/

#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![warn(missing_debug_implementations)]

// The README's examples compile and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

mod adapters;
#[cfg(feature = "stream")]
mod async_check;
mod check;
pub mod examples;
mod report;
mod split;
#[cfg(feature = "proptest")]
pub mod strategy;
mod text;

#[cfg(feature = "stream")]
pub use crate::adapters::blocking;
pub use crate::adapters::{fail_split, no_flush, per_chunk, per_chunk_default, try_per_chunk};
#[cfg(feature = "stream")]
pub use crate::async_check::{
    assert_chunk_invariant_async, assert_chunk_invariant_async_with, check_chunk_invariant_async,
    check_chunk_invariant_async_with,
};
pub use crate::check::{
    assert_chunk_invariant, assert_chunk_invariant_with, check_chunk_invariant,
    check_chunk_invariant_with,
};
pub use crate::report::{ChunkInvarianceError, ErrorKind, FilterFailure, Mismatch, Rerun};
pub use crate::split::{
    ALL_SPLITS_MAX_UNITS, Chunks, SplitIter, Splits, splits_up_to, two_part_splits,
};
pub use crate::text::{OutputChunk, Text};
