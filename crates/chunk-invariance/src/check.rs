//! The assertion, its non-panicking twin, and the split loop the async
//! forms share.

use std::any::Any;
use std::future::{self, Future, poll_fn};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use crate::report::{
    ChunkInvarianceError, ErrorKind, FilterFailure, Found, Mismatch, Rerun, SHRINK_RUNS, Shrunk,
};
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
    W: FnMut(&'a T) -> R,
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
    W: FnMut(&'a T) -> R,
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
/// allocation serves every split. After a failure both filters run again
/// to tell a non-deterministic filter from a chunking bug, and a random or
/// explicit split is shrunk.
pub(crate) async fn check_each_split<'a, T, W, R, S, Fut>(
    mut whole_filter: W,
    input: &'a T,
    splits: Splits,
    mut stream_split: S,
) -> Result<usize, ChunkInvarianceError>
where
    T: ?Sized + Text,
    W: FnMut(&'a T) -> R,
    R: OutputChunk<T>,
    S: FnMut(Chunks<'a, T>, Vec<u8>) -> Fut,
    Fut: Future<Output = Vec<u8>>,
{
    // Splits that cannot be tried on this input fail before any filter runs.
    let lists = splits.cuts(input)?;
    let whole = run_whole(&mut whole_filter, input)?;
    let mut buffer = Vec::with_capacity(whole.len());
    let mut tried = 0;
    for (cuts, origin) in lists {
        tried += 1;
        buffer.clear();
        match run_split(&mut stream_split, input, &cuts, buffer).await {
            Outcome::Output(out) if out == whole => buffer = out,
            first => {
                let found = Found {
                    cuts,
                    split_number: tried,
                    origin,
                    shrunk: None,
                    shrink_stopped: false,
                };
                let mut run = Run {
                    input,
                    whole,
                    stream_split,
                };
                return Err(run.diagnose(&mut whole_filter, found, first).await);
            }
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

/// How one run of the stream filter on one split ended.
#[derive(Clone, Debug)]
enum Outcome {
    /// The joined output chunks.
    Output(Vec<u8>),
    /// A panic, with its message.
    Panicked(String),
    /// A [`fail_split`](crate::fail_split), with its message.
    Failed(String),
}

impl Outcome {
    /// Whether two failing runs failed the same way: a wrong output is
    /// like any wrong output, a panic like any panic.
    fn is_like(&self, other: &Outcome, whole: &[u8]) -> bool {
        match (self, other) {
            (Outcome::Output(a), Outcome::Output(b)) => (a == whole) == (b == whole),
            (Outcome::Panicked(_), Outcome::Panicked(_)) => true,
            (Outcome::Failed(_), Outcome::Failed(_)) => true,
            _ => false,
        }
    }

    fn from_panic(payload: Box<dyn Any + Send>) -> Outcome {
        match payload.downcast::<SplitFailed>() {
            Ok(failed) => Outcome::Failed(failed.0),
            Err(payload) => Outcome::Panicked(panic_message(&*payload)),
        }
    }
}

/// The payload of [`fail_split`](crate::fail_split): unwinds out of the
/// stream filter to the check, which reports it as the filter's error.
pub(crate) struct SplitFailed(pub(crate) String);

fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(a panic whose payload is not a string)".to_owned()
    }
}

/// Runs the whole-input filter, turning a panic into the error to report.
fn run_whole<'a, T, W, R>(
    whole_filter: &mut W,
    input: &'a T,
) -> Result<Vec<u8>, ChunkInvarianceError>
where
    T: ?Sized + Text,
    W: FnMut(&'a T) -> R,
    R: OutputChunk<T>,
{
    // The filter is not used again after a panic, except to be re-run
    // after a failure, which is what a test would do too.
    catch_unwind(AssertUnwindSafe(|| {
        let mut whole = Vec::new();
        whole_filter(input).append_to(&mut whole);
        whole
    }))
    .map_err(|payload| {
        let (message, panicked) = match payload.downcast::<SplitFailed>() {
            Ok(failed) => (failed.0, false),
            Err(payload) => (panic_message(&*payload), true),
        };
        ChunkInvarianceError::failed(FilterFailure {
            input: input.bytes().to_vec(),
            is_text: T::IS_TEXT,
            found: None,
            message,
            panicked,
            rerun: None,
        })
    })
}

/// Runs the stream filter on one split, catching a panic in the call
/// that makes the future and in every poll of it.
async fn run_split<'a, T, S, Fut>(
    stream_split: &mut S,
    input: &'a T,
    cuts: &[usize],
    buffer: Vec<u8>,
) -> Outcome
where
    T: ?Sized + Text,
    S: FnMut(Chunks<'a, T>, Vec<u8>) -> Fut,
    Fut: Future<Output = Vec<u8>>,
{
    let chunks = Chunks::new(input, cuts.to_vec());
    let future = match catch_unwind(AssertUnwindSafe(|| stream_split(chunks, buffer))) {
        Ok(future) => future,
        Err(payload) => return Outcome::from_panic(payload),
    };
    let mut future = pin!(future);
    poll_fn(
        |cx| match catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
            Ok(Poll::Ready(out)) => Poll::Ready(Outcome::Output(out)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => Poll::Ready(Outcome::from_panic(payload)),
        },
    )
    .await
}

/// What the diagnosis of a failure needs.
struct Run<'a, T: ?Sized, S> {
    input: &'a T,
    whole: Vec<u8>,
    stream_split: S,
}

impl<'a, T, S, Fut> Run<'a, T, S>
where
    T: ?Sized + Text,
    S: FnMut(Chunks<'a, T>, Vec<u8>) -> Fut,
    Fut: Future<Output = Vec<u8>>,
{
    async fn split(&mut self, cuts: &[usize]) -> Outcome {
        run_split(&mut self.stream_split, self.input, cuts, Vec::new()).await
    }

    /// The error for a split that failed: both filters run again, and a
    /// split that fails the same way again is shrunk if it may have cuts
    /// it does not need.
    async fn diagnose<W, R>(
        &mut self,
        whole_filter: &mut W,
        mut found: Found,
        first: Outcome,
    ) -> ChunkInvarianceError
    where
        W: FnMut(&'a T) -> R,
        R: OutputChunk<T>,
    {
        let mut rerun = match run_whole(whole_filter, self.input) {
            Ok(again) if again != self.whole => Some(Rerun::WholeGave(again)),
            Ok(_) => None,
            Err(err) => return err,
        };
        if rerun.is_none() {
            match self.split(&found.cuts).await {
                Outcome::Output(again) if !matches!(&first, Outcome::Output(out) if *out == again) =>
                {
                    rerun = Some(Rerun::StreamGave(again));
                }
                Outcome::Panicked(message) | Outcome::Failed(message)
                    if matches!(first, Outcome::Output(_)) =>
                {
                    rerun = Some(Rerun::StreamFailed(message));
                }
                _ => {}
            }
        }
        let mut outcome = first;
        if rerun.is_none() && found.origin.shrinks() {
            let (cuts, stopped, last) = self.shrink(found.cuts.clone(), outcome).await;
            outcome = last;
            found.shrink_stopped = stopped;
            if cuts != found.cuts {
                found.shrunk = Some(Shrunk {
                    from: std::mem::replace(&mut found.cuts, cuts),
                });
            }
        }
        let input = self.input.bytes().to_vec();
        let is_text = T::IS_TEXT;
        match outcome {
            Outcome::Output(streamed) => ChunkInvarianceError::mismatched(Mismatch {
                input,
                is_text,
                found,
                whole: std::mem::take(&mut self.whole),
                streamed,
                rerun,
            }),
            Outcome::Panicked(message) => ChunkInvarianceError::failed(FilterFailure {
                input,
                is_text,
                found: Some(found),
                message,
                panicked: true,
                rerun,
            }),
            Outcome::Failed(message) => ChunkInvarianceError::failed(FilterFailure {
                input,
                is_text,
                found: Some(found),
                message,
                panicked: false,
                rerun,
            }),
        }
    }

    /// Shrinks a failing split to a locally minimal one that fails the
    /// same way: drops cuts one at a time, then moves each cut earlier,
    /// and repeats until neither helps. Returns the cuts, whether the run
    /// budget stopped it, and the outcome on the cuts returned.
    async fn shrink(
        &mut self,
        mut cuts: Vec<usize>,
        mut outcome: Outcome,
    ) -> (Vec<usize>, bool, Outcome) {
        let points = self.input.cut_points();
        let mut runs = 0;
        loop {
            let mut changed = false;
            let mut i = 0;
            while i < cuts.len() {
                if runs == SHRINK_RUNS {
                    return (cuts, true, outcome);
                }
                runs += 1;
                let mut candidate = cuts.clone();
                candidate.remove(i);
                let got = self.split(&candidate).await;
                if got.is_like(&outcome, &self.whole) {
                    (cuts, outcome, changed) = (candidate, got, true);
                } else {
                    i += 1;
                }
            }
            for i in 0..cuts.len() {
                // A cut moves only between the previous cut and itself,
                // so cuts stay in order and no chunk becomes empty. The
                // farthest move is tried first, then ever shorter ones:
                // few runs when a cut can go far, and the last try, one
                // unit, is what makes the result locally minimal.
                'moving: loop {
                    let floor = if i == 0 { 0 } else { cuts[i - 1] };
                    let lo = points.partition_point(|&p| p <= floor);
                    let hi = points.partition_point(|&p| p < cuts[i]);
                    let mut step = hi.saturating_sub(lo);
                    while step > 0 {
                        if runs == SHRINK_RUNS {
                            return (cuts, true, outcome);
                        }
                        runs += 1;
                        let mut candidate = cuts.clone();
                        candidate[i] = points[hi - step];
                        let got = self.split(&candidate).await;
                        if got.is_like(&outcome, &self.whole) {
                            (cuts, outcome, changed) = (candidate, got, true);
                            continue 'moving;
                        }
                        step /= 2;
                    }
                    break;
                }
            }
            if !changed {
                return (cuts, false, outcome);
            }
        }
    }
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
    W: FnMut(&'a T) -> R,
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
    W: FnMut(&'a T) -> R,
    R: OutputChunk<T>,
{
    match check_chunk_invariant_with(stream_filter, whole_filter, input, splits) {
        Ok(n) => n,
        Err(err) => panic!("{err}"),
    }
}
