//! The assertion, its non-panicking twin, and the split loop the async
//! forms share.

use std::future::{self, Future};
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use crate::report::{ChunkInvarianceError, ErrorKind, Mismatch};
use crate::split::{Chunks, Splits};
use crate::text::private::Append;
use crate::text::{OutputChunk, Text};

/// Checks that `stream_filter` gives `whole_filter`'s output for the whole
/// input and for every split into two parts.
///
/// This is [`check_chunk_invariant_with`] with [`Splits::TwoPart`]: an
/// input of `n` units is tried as `n` splits.
///
/// # Errors
///
/// A [`ChunkInvarianceError`] naming the first split whose joined output
/// differs; splits run fewest parts first, so it is a smallest one.
///
/// # Example
///
/// ```
/// use chunk_invariance::check_chunk_invariant;
/// use chunk_invariance::examples::{redact, redact_each_chunk, redact_holding_back};
///
/// assert_eq!(check_chunk_invariant(redact_holding_back, redact, "use sk-AbCd1234 now")?, 19);
/// let err = check_chunk_invariant(redact_each_chunk, redact, "use sk-AbCd1234 now").unwrap_err();
/// assert_eq!(err.mismatch().unwrap().split_number(), 6);
/// # Ok::<(), chunk_invariance::ChunkInvarianceError>(())
/// ```
pub fn check_chunk_invariant<'a, T, F, I, W, R>(
    stream_filter: F,
    whole_filter: W,
    input: &'a T,
) -> Result<usize, ChunkInvarianceError>
where
    T: ?Sized + Text,
    F: FnMut(Chunks<'a, T>) -> I,
    I: IntoIterator,
    I::Item: OutputChunk<T>,
    W: FnOnce(&'a T) -> R,
    R: OutputChunk<T>,
{
    check_chunk_invariant_with(stream_filter, whole_filter, input, Splits::TwoPart)
}

/// Checks that `stream_filter` gives `whole_filter`'s output for every
/// split in `splits`, and returns how many splits it checked.
///
/// `whole_filter` runs once, on the whole input. `stream_filter` runs once
/// per split, given that split's [`Chunks`]; it must start fresh each
/// time (a new redactor, a new state). Its output chunks are joined and
/// compared byte for byte with the whole-input output.
///
/// # Errors
///
/// A [`ChunkInvarianceError`] of kind [`ErrorKind::NotInvariant`] for the
/// first split whose output differs, or of another kind when `splits`
/// cannot be tried on this input: [`Splits::All`] on a long input, an
/// explicit split that does not join back to the input or cuts a
/// character, or no split at all.
///
/// # Example
///
/// ```
/// use chunk_invariance::{check_chunk_invariant_with, Splits};
/// use chunk_invariance::examples::{redact, redact_holding_back};
///
/// let n = check_chunk_invariant_with(redact_holding_back, redact, "sk-AbCd1234", Splits::All)?;
/// assert_eq!(n, 1024);
/// # Ok::<(), chunk_invariance::ChunkInvarianceError>(())
/// ```
pub fn check_chunk_invariant_with<'a, T, F, I, W, R>(
    mut stream_filter: F,
    whole_filter: W,
    input: &'a T,
    splits: Splits,
) -> Result<usize, ChunkInvarianceError>
where
    T: ?Sized + Text,
    F: FnMut(Chunks<'a, T>) -> I,
    I: IntoIterator,
    I::Item: OutputChunk<T>,
    W: FnOnce(&'a T) -> R,
    R: OutputChunk<T>,
{
    let check = check_each_split(whole_filter, input, splits, |chunks, mut streamed| {
        for chunk in stream_filter(chunks) {
            chunk.append_to(&mut streamed);
        }
        future::ready(streamed)
    });
    ready_now(check)
}

/// The check behind both the synchronous and the async forms.
///
/// `whole_filter` runs once, then `stream_split` once per split: it is
/// given the split's chunks and an empty buffer, and hands the buffer back
/// holding the joined streamed output. The buffer goes by value so that
/// the future `stream_split` returns can own it across its awaits, and one
/// allocation serves every split.
pub(crate) async fn check_each_split<'a, T, W, R, S, Fut>(
    whole_filter: W,
    input: &'a T,
    splits: Splits,
    mut stream_split: S,
) -> Result<usize, ChunkInvarianceError>
where
    T: ?Sized + Text,
    W: FnOnce(&'a T) -> R,
    R: OutputChunk<T>,
    S: FnMut(Chunks<'a, T>, Vec<u8>) -> Fut,
    Fut: Future<Output = Vec<u8>>,
{
    // Splits that cannot be tried on this input fail before any filter runs.
    let lists = splits.cuts(input)?;
    let mut whole = Vec::new();
    whole_filter(input).append_to(&mut whole);
    let mut streamed = Vec::with_capacity(whole.len());
    let mut tried = 0;
    for (cuts, generated) in lists {
        tried += 1;
        streamed.clear();
        streamed = stream_split(Chunks::new(input, cuts.clone()), streamed).await;
        if streamed != whole {
            return Err(ChunkInvarianceError::mismatched(Mismatch {
                input: input.bytes().to_vec(),
                is_text: T::IS_TEXT,
                cuts,
                whole,
                streamed,
                split_number: tried,
                generated,
            }));
        }
    }
    // A check that tried nothing proves nothing: say so.
    if tried == 0 {
        return Err(ChunkInvarianceError::new(
            ErrorKind::NoSplits,
            "no split to check: the explicit split list is empty".to_owned(),
        ));
    }
    Ok(tried)
}

/// The output of a future that never waits: the shared check over a
/// synchronous filter, whose only awaits are on values already there.
fn ready_now<F: Future>(future: F) -> F::Output {
    match pin!(future).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(output) => output,
        Poll::Pending => unreachable!("the check of a synchronous filter never waits"),
    }
}

/// Asserts that `stream_filter` gives `whole_filter`'s output for the
/// whole input and for every split into two parts; returns the number of
/// splits checked.
///
/// This is [`check_chunk_invariant`] that panics with the report instead
/// of returning it.
///
/// # Panics
///
/// With the [`ChunkInvarianceError`] report, at the caller's line, when a
/// split's streamed output differs from the whole-input output.
///
/// # Example
///
/// ```
/// use chunk_invariance::assert_chunk_invariant;
///
/// // A filter with no state across chunks is invariant when it maps
/// // units one to one.
/// assert_chunk_invariant(
///     |chunks| chunks.map(str::to_ascii_uppercase),
///     |whole: &str| whole.to_ascii_uppercase(),
///     "use sk-AbCd1234 now",
/// );
/// ```
#[track_caller]
pub fn assert_chunk_invariant<'a, T, F, I, W, R>(
    stream_filter: F,
    whole_filter: W,
    input: &'a T,
) -> usize
where
    T: ?Sized + Text,
    F: FnMut(Chunks<'a, T>) -> I,
    I: IntoIterator,
    I::Item: OutputChunk<T>,
    W: FnOnce(&'a T) -> R,
    R: OutputChunk<T>,
{
    assert_chunk_invariant_with(stream_filter, whole_filter, input, Splits::TwoPart)
}

/// Asserts that `stream_filter` gives `whole_filter`'s output for every
/// split in `splits`; returns the number of splits checked.
///
/// This is [`check_chunk_invariant_with`] that panics with the report
/// instead of returning it.
///
/// # Panics
///
/// With the [`ChunkInvarianceError`] report, at the caller's line, when a
/// split's streamed output differs, or when `splits` cannot be tried on
/// this input (see the errors of [`check_chunk_invariant_with`]).
///
/// # Example
///
/// ```
/// use chunk_invariance::{assert_chunk_invariant_with, Splits};
/// use chunk_invariance::examples::{redact, HoldBack};
///
/// // A type with `feed` and `flush` checks in one closure.
/// let n = assert_chunk_invariant_with(
///     |chunks| {
///         let mut r = HoldBack::new();
///         let mut out: Vec<String> = chunks.map(|c| r.feed(c)).collect();
///         out.push(r.flush());
///         out
///     },
///     redact,
///     "key: sk-AbCd1234",
///     Splits::UpTo(3),
/// );
/// assert_eq!(n, 1 + 15 + 105);
/// ```
#[track_caller]
pub fn assert_chunk_invariant_with<'a, T, F, I, W, R>(
    stream_filter: F,
    whole_filter: W,
    input: &'a T,
    splits: Splits,
) -> usize
where
    T: ?Sized + Text,
    F: FnMut(Chunks<'a, T>) -> I,
    I: IntoIterator,
    I::Item: OutputChunk<T>,
    W: FnOnce(&'a T) -> R,
    R: OutputChunk<T>,
{
    match check_chunk_invariant_with(stream_filter, whole_filter, input, splits) {
        Ok(n) => n,
        Err(err) => panic!("{err}"),
    }
}
