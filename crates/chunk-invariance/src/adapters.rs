//! Ways to turn other filter shapes into a stream filter.

use std::fmt;

use crate::check::SplitFailed;
use crate::split::Chunks;
use crate::text::{OutputChunk, Text};

/// A stream filter from a per-chunk step over a state: `process(chunk,
/// &mut state)` for each chunk, then `flush(&mut state)` at the end.
///
/// Each stream (each split the check tries) gets a fresh state from
/// `state_factory`, so a filter checked this way cannot leak state from
/// one split into the next. A filter with nothing to flush passes
/// [`no_flush`].
///
/// # Example
///
/// ```
/// use chunk_invariance::{assert_chunk_invariant, per_chunk};
/// use chunk_invariance::examples::{redact, HoldBack};
///
/// // The shape of a `feed` / `flush` type, one line to check.
/// assert_chunk_invariant(
///     per_chunk(|chunk, r: &mut HoldBack| r.feed(chunk), HoldBack::new, HoldBack::flush),
///     redact,
///     "use sk-AbCd1234 now",
/// );
/// ```
pub fn per_chunk<'a, T, S, O, P, N, G>(
    mut process: P,
    mut state_factory: N,
    mut flush: G,
) -> impl FnMut(Chunks<'a, T>) -> Vec<O>
where
    T: ?Sized + Text + 'a,
    O: OutputChunk<T>,
    P: FnMut(&'a T, &mut S) -> O,
    N: FnMut() -> S,
    G: FnMut(&mut S) -> O,
{
    move |chunks| {
        let mut state = state_factory();
        let mut out = Vec::with_capacity(chunks.len() + 1);
        for chunk in chunks {
            out.push(process(chunk, &mut state));
        }
        out.push(flush(&mut state));
        out
    }
}

/// [`per_chunk`] with each stream's state made by `S::default()`.
///
/// # Example
///
/// ```
/// use chunk_invariance::{assert_chunk_invariant, per_chunk_default};
/// use chunk_invariance::examples::{redact, HoldBack};
///
/// assert_chunk_invariant(
///     per_chunk_default(|chunk, r: &mut HoldBack| r.feed(chunk), HoldBack::flush),
///     redact,
///     "use sk-AbCd1234 now",
/// );
/// ```
pub fn per_chunk_default<'a, T, S, O, P, G>(
    process: P,
    flush: G,
) -> impl FnMut(Chunks<'a, T>) -> Vec<O>
where
    T: ?Sized + Text + 'a,
    S: Default,
    O: OutputChunk<T>,
    P: FnMut(&'a T, &mut S) -> O,
    G: FnMut(&mut S) -> O,
{
    per_chunk(process, S::default, flush)
}

/// [`per_chunk`] for a step and a flush that return a `Result`, as the
/// `feed` and `flush` of a streaming replacer with a cap on what it holds
/// do.
///
/// An `Err` ends the stream: the check reports it as a
/// [`FilterFailure`](crate::FilterFailure) of kind
/// [`ErrorKind::FilterFailed`](crate::ErrorKind::FilterFailed), with the
/// split it happened on, which chunk, and the error's `Display`. (It
/// unwinds out of the filter through [`fail_split`], so it needs
/// unwinding, as the checks' panic reports do.)
///
/// # Example
///
/// A type whose `feed` and `flush` return a `Result` checks in one line.
/// `Redactor` here stands for any such type, for instance
/// `stream_replace::Replacer`, whose state is made by
/// `rules.replacer()`: `try_per_chunk(|c, r: &mut Replacer| r.feed(c), ||
/// rules.replacer(), Replacer::flush)`.
///
/// ```
/// use std::fmt;
/// use chunk_invariance::{assert_chunk_invariant, check_chunk_invariant, try_per_chunk, ErrorKind};
/// use chunk_invariance::examples::{redact, HoldBack};
///
/// /// A redactor that refuses to hold more than `cap` bytes.
/// struct Redactor {
///     inner: HoldBack,
///     cap: usize,
/// }
///
/// #[derive(Debug)]
/// struct TooMuchHeld(usize);
///
/// impl fmt::Display for TooMuchHeld {
///     fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
///         write!(f, "{} bytes held, over the cap", self.0)
///     }
/// }
///
/// impl Redactor {
///     fn new(cap: usize) -> Self {
///         Redactor { inner: HoldBack::new(), cap }
///     }
///
///     fn feed(&mut self, chunk: &str) -> Result<String, TooMuchHeld> {
///         let out = self.inner.feed(chunk);
///         match self.inner.held().len() {
///             held if held > self.cap => Err(TooMuchHeld(held)),
///             _ => Ok(out),
///         }
///     }
///
///     fn flush(&mut self) -> Result<String, TooMuchHeld> {
///         Ok(self.inner.flush())
///     }
/// }
///
/// let input = "use sk-AbCd1234 now";
/// assert_chunk_invariant(
///     try_per_chunk(|c, r: &mut Redactor| r.feed(c), || Redactor::new(64), Redactor::flush),
///     redact,
///     input,
/// );
/// // A cap below a key's length fails where the stream holds a key's start.
/// let err = check_chunk_invariant(
///     try_per_chunk(|c, r: &mut Redactor| r.feed(c), || Redactor::new(4), Redactor::flush),
///     redact,
///     input,
/// )
/// .unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::FilterFailed);
/// let failure = err.failure().unwrap();
/// assert_eq!(failure.chunks(), Some(vec![&b"use sk-Ab"[..], b"Cd1234 now"]));
/// assert_eq!(failure.message(), "chunk 1 of 2: 5 bytes held, over the cap");
/// ```
pub fn try_per_chunk<'a, T, S, O, E, P, N, G>(
    mut process: P,
    mut state_factory: N,
    mut flush: G,
) -> impl FnMut(Chunks<'a, T>) -> Vec<O>
where
    T: ?Sized + Text + 'a,
    O: OutputChunk<T>,
    E: fmt::Display,
    P: FnMut(&'a T, &mut S) -> Result<O, E>,
    N: FnMut() -> S,
    G: FnMut(&mut S) -> Result<O, E>,
{
    move |chunks| {
        let mut state = state_factory();
        let count = chunks.len();
        let mut out = Vec::with_capacity(count + 1);
        for (i, chunk) in chunks.enumerate() {
            match process(chunk, &mut state) {
                Ok(o) => out.push(o),
                Err(e) => fail_split(format_args!("chunk {} of {count}: {e}", i + 1)),
            }
        }
        match flush(&mut state) {
            Ok(o) => out.push(o),
            Err(e) => fail_split(format_args!("flush after {count} chunks: {e}")),
        }
        out
    }
}

/// Stops the stream filter on the current split, and makes the check
/// report `message` as the filter's error for that split.
///
/// For a filter that can fail: a harness that runs a process and sees
/// it crash or time out, or a `feed` that returns `Err` (which
/// [`try_per_chunk`] handles for you). The check reports a
/// [`FilterFailure`](crate::FilterFailure) of kind
/// [`ErrorKind::FilterFailed`](crate::ErrorKind::FilterFailed) with the
/// split, shrunk like any other failure of a random or explicit split.
///
/// It unwinds, without calling the panic hook, to the check that runs the
/// filter; called outside a check, it unwinds like a panic that prints
/// nothing. It needs unwinding (not `panic = "abort"`).
///
/// # Example
///
/// ```
/// use chunk_invariance::{check_chunk_invariant, fail_split, ErrorKind};
///
/// let err = check_chunk_invariant(
///     |chunks| {
///         chunks
///             .map(|c: &str| match c.len() {
///                 1 => fail_split("one-byte chunks are not supported"),
///                 _ => c.to_owned(),
///             })
///             .collect::<Vec<_>>()
///     },
///     str::to_owned,
///     "abc",
/// )
/// .unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::FilterFailed);
/// assert_eq!(err.failure().unwrap().cuts(), Some(&[1][..]));
/// assert!(err.to_string().contains("error:    one-byte chunks are not supported"));
/// ```
pub fn fail_split(message: impl fmt::Display) -> ! {
    std::panic::resume_unwind(Box::new(SplitFailed(message.to_string())))
}

/// The flush of a [`per_chunk`] filter that holds nothing back: it
/// returns an empty output chunk.
///
/// # Example
///
/// ```
/// use chunk_invariance::{assert_chunk_invariant, no_flush, per_chunk};
///
/// // Counts the characters seen so far: state, but nothing held back.
/// let n = assert_chunk_invariant(
///     per_chunk(
///         |chunk: &str, seen: &mut usize| {
///             *seen += chunk.chars().count();
///             chunk.to_uppercase()
///         },
///         || 0,
///         no_flush,
///     ),
///     |whole: &str| whole.to_uppercase(),
///     "hello",
/// );
/// assert_eq!(n, 5);
/// ```
pub fn no_flush<S, O: Default>(_state: &mut S) -> O {
    O::default()
}

/// A synchronous stream filter from an async one, for the synchronous
/// assertions.
///
/// `stream_filter` takes the chunks as a [`futures_core::Stream`] and
/// returns a stream of output chunks; the adapter drives that stream to
/// its end on the calling thread, parking between wakes. The stream must
/// make progress on its own wakers: one that waits on a runtime's timer
/// or I/O needs that runtime, so check it with the async assertions
/// ([`check_chunk_invariant_async`](crate::check_chunk_invariant_async))
/// inside an async test instead.
///
/// # Example
///
/// ```
/// use std::pin::Pin;
/// use std::task::{Context, Poll};
/// use chunk_invariance::{assert_chunk_invariant, blocking, Chunks};
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
/// assert_chunk_invariant(blocking(Upper), |whole: &str| whole.to_uppercase(), "abc");
/// ```
#[cfg(feature = "stream")]
pub fn blocking<'a, T, F, S>(mut stream_filter: F) -> impl FnMut(Chunks<'a, T>) -> Vec<S::Item>
where
    T: ?Sized + Text + 'a,
    F: FnMut(Chunks<'a, T>) -> S,
    S: futures_core::Stream,
    S::Item: OutputChunk<T>,
{
    move |chunks| block_on_stream(stream_filter(chunks))
}

/// Collects a stream on this thread, parking until a waker fires.
#[cfg(feature = "stream")]
fn block_on_stream<S: futures_core::Stream>(stream: S) -> Vec<S::Item> {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::task::{Context, Poll, Wake, Waker};

    struct Unpark {
        thread: std::thread::Thread,
        woken: AtomicBool,
    }

    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.wake_by_ref();
        }

        fn wake_by_ref(self: &Arc<Self>) {
            self.woken.store(true, Ordering::Release);
            self.thread.unpark();
        }
    }

    let unpark = Arc::new(Unpark {
        thread: std::thread::current(),
        woken: AtomicBool::new(false),
    });
    let waker = Waker::from(Arc::clone(&unpark));
    let mut cx = Context::from_waker(&waker);
    let mut stream = std::pin::pin!(stream);
    let mut out = Vec::new();
    loop {
        match stream.as_mut().poll_next(&mut cx) {
            Poll::Ready(Some(item)) => out.push(item),
            Poll::Ready(None) => return out,
            Poll::Pending => {
                // `park` may return spuriously; the flag says a wake came.
                while !unpark.woken.swap(false, Ordering::Acquire) {
                    std::thread::park();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::check_chunk_invariant;

    #[test]
    fn per_chunk_starts_each_stream_with_fresh_state() {
        let mut fresh = 0;
        let n = check_chunk_invariant(
            per_chunk(
                |chunk: &str, seen: &mut Vec<String>| {
                    seen.push(chunk.to_owned());
                    String::new()
                },
                || {
                    fresh += 1;
                    Vec::new()
                },
                |seen| seen.concat(),
            ),
            |whole: &str| whole.to_owned(),
            "abcd",
        )
        .unwrap();
        assert_eq!(n, 4);
        assert_eq!(fresh, 4);
    }

    #[test]
    fn per_chunk_flush_output_comes_last() {
        let err = check_chunk_invariant(
            per_chunk(
                |c: &str, _: &mut ()| c.to_owned(),
                || (),
                |_| "!".to_owned(),
            ),
            |whole: &str| whole.to_owned(),
            "ab",
        )
        .unwrap_err();
        let m = err.mismatch().unwrap();
        assert_eq!(m.split_number(), 1);
        assert_eq!(m.streamed(), b"ab!");
    }
}
