//! The assertion for filters over a `futures_core::Stream` of chunks.

use std::future::{Future, poll_fn};
use std::panic::Location;
use std::pin::pin;

use futures_core::Stream;

use crate::check::check_each_split;
use crate::report::ChunkInvarianceError;
use crate::split::{Chunks, Splits};
use crate::text::private::Append;
use crate::text::{OutputChunk, Text};

/// [`check_chunk_invariant`](crate::check_chunk_invariant) for a filter
/// over a stream: for the whole input and every split into two parts.
///
/// `stream_filter` is given the split's [`Chunks`], which is a
/// [`Stream`] that is always ready, and returns a stream of output
/// chunks. The check awaits that stream, so it runs inside the caller's
/// executor and a filter may await that runtime's timers or channels.
///
/// # Errors
///
/// As [`check_chunk_invariant_with`](crate::check_chunk_invariant_with).
///
/// # Example
///
/// ```
/// use std::pin::{pin, Pin};
/// use std::task::{Context, Poll, Waker};
/// use chunk_invariance::{check_chunk_invariant_async, Chunks};
/// use futures_core::Stream;
///
/// struct Upper<'a>(Chunks<'a, str>);
///
/// impl Stream for Upper<'_> {
///     type Item = String;
///     fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<String>> {
///         Pin::new(&mut self.0).poll_next(cx).map(|c| c.map(str::to_uppercase))
///     }
/// }
///
/// let check = check_chunk_invariant_async(Upper, |whole: &str| whole.to_uppercase(), "abc");
/// // Any executor will do; this future never waits.
/// let Poll::Ready(result) = pin!(check).poll(&mut Context::from_waker(Waker::noop())) else {
///     unreachable!()
/// };
/// assert_eq!(result?, 3);
/// # use std::future::Future;
/// # Ok::<(), chunk_invariance::ChunkInvarianceError>(())
/// ```
pub async fn check_chunk_invariant_async<'a, T, F, S, W, R>(
    stream_filter: F,
    whole_filter: W,
    input: &'a T,
) -> Result<usize, ChunkInvarianceError>
where
    T: ?Sized + Text,
    F: FnMut(Chunks<'a, T>) -> S,
    S: Stream,
    S::Item: OutputChunk<T>,
    W: FnMut(&'a T) -> R,
    R: OutputChunk<T>,
{
    check_chunk_invariant_async_with(stream_filter, whole_filter, input, Splits::TwoPart).await
}

/// [`check_chunk_invariant_with`](crate::check_chunk_invariant_with) for
/// a filter over a stream.
///
/// # Errors
///
/// As [`check_chunk_invariant_with`](crate::check_chunk_invariant_with).
///
/// # Example
///
/// ```
/// use std::future::Future;
/// use std::pin::pin;
/// use std::task::{Context, Poll, Waker};
/// use chunk_invariance::{check_chunk_invariant_async_with, Splits};
///
/// // `Chunks` is itself a stream: the identity filter.
/// let check = check_chunk_invariant_async_with(
///     |chunks| chunks,
///     |whole: &str| whole.to_owned(),
///     "abcd",
///     Splits::All,
/// );
/// let Poll::Ready(result) = pin!(check).poll(&mut Context::from_waker(Waker::noop())) else {
///     unreachable!()
/// };
/// assert_eq!(result?, 8);
/// # Ok::<(), chunk_invariance::ChunkInvarianceError>(())
/// ```
pub async fn check_chunk_invariant_async_with<'a, T, F, S, W, R>(
    mut stream_filter: F,
    whole_filter: W,
    input: &'a T,
    splits: Splits,
) -> Result<usize, ChunkInvarianceError>
where
    T: ?Sized + Text,
    F: FnMut(Chunks<'a, T>) -> S,
    S: Stream,
    S::Item: OutputChunk<T>,
    W: FnMut(&'a T) -> R,
    R: OutputChunk<T>,
{
    check_each_split(whole_filter, input, splits, |chunks, mut streamed| {
        let out = stream_filter(chunks);
        async move {
            let mut out = pin!(out);
            while let Some(chunk) = poll_fn(|cx| out.as_mut().poll_next(cx)).await {
                chunk.append_to(&mut streamed);
            }
            streamed
        }
    })
    .await
}

/// [`assert_chunk_invariant`](crate::assert_chunk_invariant) for a filter
/// over a stream: await it inside an async test.
///
/// The returned future resolves to the number of splits checked.
///
/// # Panics
///
/// When polled to the failure, with the
/// [`ChunkInvarianceError`] report and the line that made the assertion.
///
/// # Example
///
/// ```
/// use std::future::Future;
/// use std::pin::pin;
/// use std::task::{Context, Poll, Waker};
/// use chunk_invariance::assert_chunk_invariant_async;
///
/// let test = async {
///     let n = assert_chunk_invariant_async(|chunks| chunks, |whole: &str| whole.to_owned(), "abc").await;
///     assert_eq!(n, 3);
/// };
/// assert!(pin!(test).poll(&mut Context::from_waker(Waker::noop())).is_ready());
/// ```
#[track_caller]
pub fn assert_chunk_invariant_async<'a, T, F, S, W, R>(
    stream_filter: F,
    whole_filter: W,
    input: &'a T,
) -> impl Future<Output = usize> + use<'a, T, F, S, W, R>
where
    T: ?Sized + Text,
    F: FnMut(Chunks<'a, T>) -> S,
    S: Stream,
    S::Item: OutputChunk<T>,
    W: FnMut(&'a T) -> R,
    R: OutputChunk<T>,
{
    assert_chunk_invariant_async_with(stream_filter, whole_filter, input, Splits::TwoPart)
}

/// [`assert_chunk_invariant_with`](crate::assert_chunk_invariant_with)
/// for a filter over a stream: await it inside an async test.
///
/// The returned future resolves to the number of splits checked.
///
/// # Panics
///
/// When polled to the failure, with the [`ChunkInvarianceError`] report
/// and the line that made the assertion (the panic itself is raised
/// inside this crate, since an `async` body cannot take the caller's
/// location).
///
/// # Example
///
/// ```
/// use std::future::Future;
/// use std::pin::pin;
/// use std::task::{Context, Poll, Waker};
/// use chunk_invariance::{assert_chunk_invariant_async_with, Splits};
///
/// let test = async {
///     let n = assert_chunk_invariant_async_with(
///         |chunks| chunks,
///         |whole: &[u8]| whole.to_vec(),
///         "é".as_bytes(),
///         Splits::All,
///     )
///     .await;
///     assert_eq!(n, 2);
/// };
/// assert!(pin!(test).poll(&mut Context::from_waker(Waker::noop())).is_ready());
/// ```
#[track_caller]
pub fn assert_chunk_invariant_async_with<'a, T, F, S, W, R>(
    stream_filter: F,
    whole_filter: W,
    input: &'a T,
    splits: Splits,
) -> impl Future<Output = usize> + use<'a, T, F, S, W, R>
where
    T: ?Sized + Text,
    F: FnMut(Chunks<'a, T>) -> S,
    S: Stream,
    S::Item: OutputChunk<T>,
    W: FnMut(&'a T) -> R,
    R: OutputChunk<T>,
{
    let caller = Location::caller();
    async move {
        match check_chunk_invariant_async_with(stream_filter, whole_filter, input, splits).await {
            Ok(n) => n,
            Err(err) => panic!("{err}\n  asserted at {caller}"),
        }
    }
}
