//! Adapters over `futures_core::Stream`s of chunks (feature `stream`).

use std::ops::ControlFlow;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures_core::stream::{FusedStream, Stream};

use crate::adapter::{Driver, Unit};
use crate::error::StreamError;
use crate::replacer::Replacer;

/// Wraps a [`Stream`] of text chunks: the result yields the replaced text as
/// it becomes safe to emit, and the rest once the source stream ends.
///
/// The same as [`wrap`](crate::wrap), asynchronously: each item is the
/// output of one [`Replacer::feed`], or at the end of [`Replacer::flush`];
/// empty outputs are skipped, so one poll may take several ready chunks from
/// the source. After an error the stream yields it once and ends without
/// polling the source again. Once it has ended, the replacer is ready for a
/// new stream.
///
/// Any source stream will do, [`Unpin`] or not: it is pinned in a box (one
/// allocation per wrapped stream, since this crate has no unsafe code to
/// project a pin), and the result is always `Unpin`.
///
/// Available with the `stream` feature.
///
/// # Example
///
/// ```
/// use std::pin::Pin;
/// use std::task::{Context, Poll, Waker};
///
/// use futures_core::Stream;
/// use stream_replace::{wrap_stream, Rules};
///
/// // A source stream over an iterator, to keep the example self-contained.
/// struct Chunks<I>(I);
///
/// impl<I: Iterator + Unpin> Stream for Chunks<I> {
///     type Item = I::Item;
///     fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<I::Item>> {
///         Poll::Ready(self.0.next())
///     }
/// }
///
/// let rules = Rules::builder()
///     .regex(r"[\w.]+@\w+\.com", "[EMAIL]")
///     .regex(r"<think>[\s\S]*?</think>", "")
///     .build()?;
/// let source = Chunks(["Mail ann@exa", "mple.com <thi", "nk>hmm</think>", "now!"].into_iter());
/// let mut replaced = wrap_stream(rules.replacer(), source);
///
/// // An executor would poll with a real waker; this source is never pending.
/// let mut cx = Context::from_waker(Waker::noop());
/// let mut out = Vec::new();
/// while let Poll::Ready(Some(item)) = Pin::new(&mut replaced).poll_next(&mut cx) {
///     out.push(item?);
/// }
/// assert_eq!(out, ["Mail ", "[EMAIL] ", "now!"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn wrap_stream<S>(replacer: Replacer, stream: S) -> WrapStream<S>
where
    S: Stream,
    S::Item: AsRef<str>,
{
    WrapStream {
        driver: Driver::new(replacer),
        stream: Box::pin(stream),
    }
}

/// Wraps a [`Stream`] of byte chunks, cut anywhere (even inside a UTF-8
/// character): the result yields the replaced bytes as they become safe to
/// emit, and the rest once the source stream ends.
///
/// As [`wrap_stream`], with [`Replacer::feed_bytes`] and
/// [`Replacer::flush_bytes`]. Any source stream will do, [`Unpin`] or not.
///
/// Available with the `stream` feature.
///
/// # Example
///
/// ```
/// use std::pin::Pin;
/// use std::task::{Context, Poll, Waker};
///
/// use futures_core::Stream;
/// use stream_replace::{wrap_stream_bytes, Rules};
///
/// struct Chunks<I>(I);
///
/// impl<I: Iterator + Unpin> Stream for Chunks<I> {
///     type Item = I::Item;
///     fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<I::Item>> {
///         Poll::Ready(self.0.next())
///     }
/// }
///
/// let rules = Rules::builder().literal("café", "bar").build()?;
/// let source = Chunks([&b"a caf\xC3"[..], b"\xA9!"].into_iter());
/// let mut replaced = wrap_stream_bytes(rules.replacer(), source);
///
/// let mut cx = Context::from_waker(Waker::noop());
/// let mut out = Vec::new();
/// while let Poll::Ready(Some(item)) = Pin::new(&mut replaced).poll_next(&mut cx) {
///     out.extend(item?);
/// }
/// assert_eq!(out, b"a bar!");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn wrap_stream_bytes<S>(replacer: Replacer, stream: S) -> WrapStreamBytes<S>
where
    S: Stream,
    S::Item: AsRef<[u8]>,
{
    WrapStreamBytes {
        driver: Driver::new(replacer),
        stream: Box::pin(stream),
    }
}

/// The stream returned by [`wrap_stream`]: replaced text, as it becomes
/// safe to emit.
///
/// Available with the `stream` feature.
///
/// # Example
///
/// ```
/// use std::pin::Pin;
/// use std::task::{Context, Poll, Waker};
///
/// use futures_core::Stream;
/// use stream_replace::{wrap_stream, Rules, WrapStream};
///
/// struct One(Option<&'static str>);
///
/// impl Stream for One {
///     type Item = &'static str;
///     fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<&'static str>> {
///         Poll::Ready(self.0.take())
///     }
/// }
///
/// let rules = Rules::builder().literal("secret", "******").build()?;
/// let mut s: WrapStream<One> = wrap_stream(rules.replacer(), One(Some("a secret b")));
/// let mut cx = Context::from_waker(Waker::noop());
/// let first = Pin::new(&mut s).poll_next(&mut cx);
/// assert_eq!(first, Poll::Ready(Some(Ok("a ****** b".to_string()))));
/// assert_eq!(Pin::new(&mut s).poll_next(&mut cx), Poll::Ready(None));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct WrapStream<S> {
    driver: Driver,
    stream: Pin<Box<S>>,
}

/// The stream returned by [`wrap_stream_bytes`]: replaced bytes, as they
/// become safe to emit.
///
/// Available with the `stream` feature.
///
/// # Example
///
/// ```
/// use std::pin::Pin;
/// use std::task::{Context, Poll, Waker};
///
/// use futures_core::Stream;
/// use stream_replace::{wrap_stream_bytes, Rules, WrapStreamBytes};
///
/// struct One(Option<Vec<u8>>);
///
/// impl Stream for One {
///     type Item = Vec<u8>;
///     fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Vec<u8>>> {
///         Poll::Ready(self.0.take())
///     }
/// }
///
/// let rules = Rules::builder().literal("secret", "******").build()?;
/// let source = One(Some(b"a secret b".to_vec()));
/// let mut s: WrapStreamBytes<One> = wrap_stream_bytes(rules.replacer(), source);
/// let mut cx = Context::from_waker(Waker::noop());
/// let first = Pin::new(&mut s).poll_next(&mut cx);
/// assert_eq!(first, Poll::Ready(Some(Ok(b"a ****** b".to_vec()))));
/// assert_eq!(Pin::new(&mut s).poll_next(&mut cx), Poll::Ready(None));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct WrapStreamBytes<S> {
    driver: Driver,
    stream: Pin<Box<S>>,
}

impl<S> WrapStream<S> {
    /// The replacer, for example to see how many bytes it holds.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{wrap_stream, Rules};
    ///
    /// # struct Empty;
    /// # impl futures_core::Stream for Empty {
    /// #     type Item = &'static str;
    /// #     fn poll_next(self: std::pin::Pin<&mut Self>, _: &mut std::task::Context<'_>)
    /// #         -> std::task::Poll<Option<Self::Item>> { std::task::Poll::Ready(None) }
    /// # }
    /// let rules = Rules::builder().literal("x", "y").build()?;
    /// let s = wrap_stream(rules.replacer(), Empty);
    /// assert_eq!(s.replacer().held(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn replacer(&self) -> &Replacer {
        self.driver.replacer()
    }

    /// Gives back the replacer and the source stream, still pinned
    /// (`Pin::into_inner` unboxes an [`Unpin`] one).
    ///
    /// Text the replacer holds is dropped unless the stream has ended, in
    /// which case the replacer is ready for a new stream.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{wrap_stream, Rules};
    ///
    /// # struct Empty;
    /// # impl futures_core::Stream for Empty {
    /// #     type Item = &'static str;
    /// #     fn poll_next(self: std::pin::Pin<&mut Self>, _: &mut std::task::Context<'_>)
    /// #         -> std::task::Poll<Option<Self::Item>> { std::task::Poll::Ready(None) }
    /// # }
    /// let rules = Rules::builder().literal("x", "y").build()?;
    /// let (mut replacer, _source) = wrap_stream(rules.replacer(), Empty).into_parts();
    /// assert_eq!(replacer.feed("x")?, "y");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn into_parts(self) -> (Replacer, Pin<Box<S>>) {
        (self.driver.into_replacer(), self.stream)
    }
}

impl<S> WrapStreamBytes<S> {
    /// The replacer, for example to see how many bytes it holds.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{wrap_stream_bytes, Rules};
    ///
    /// # struct Empty;
    /// # impl futures_core::Stream for Empty {
    /// #     type Item = &'static [u8];
    /// #     fn poll_next(self: std::pin::Pin<&mut Self>, _: &mut std::task::Context<'_>)
    /// #         -> std::task::Poll<Option<Self::Item>> { std::task::Poll::Ready(None) }
    /// # }
    /// let rules = Rules::builder().literal("x", "y").build()?;
    /// let s = wrap_stream_bytes(rules.replacer(), Empty);
    /// assert_eq!(s.replacer().held(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn replacer(&self) -> &Replacer {
        self.driver.replacer()
    }

    /// Gives back the replacer and the source stream, still pinned
    /// (`Pin::into_inner` unboxes an [`Unpin`] one).
    ///
    /// Bytes the replacer holds are dropped unless the stream has ended, in
    /// which case the replacer is ready for a new stream.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{wrap_stream_bytes, Rules};
    ///
    /// # struct Empty;
    /// # impl futures_core::Stream for Empty {
    /// #     type Item = &'static [u8];
    /// #     fn poll_next(self: std::pin::Pin<&mut Self>, _: &mut std::task::Context<'_>)
    /// #         -> std::task::Poll<Option<Self::Item>> { std::task::Poll::Ready(None) }
    /// # }
    /// let rules = Rules::builder().literal("x", "y").build()?;
    /// let (mut replacer, _source) = wrap_stream_bytes(rules.replacer(), Empty).into_parts();
    /// assert_eq!(replacer.feed("x")?, "y");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn into_parts(self) -> (Replacer, Pin<Box<S>>) {
        (self.driver.into_replacer(), self.stream)
    }
}

impl<S> Stream for WrapStream<S>
where
    S: Stream,
    S::Item: AsRef<str>,
{
    type Item = Result<String, StreamError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        this.driver.poll_next::<str, _>(this.stream.as_mut(), cx)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.driver.size_hint(self.stream.size_hint())
    }
}

impl<S> Stream for WrapStreamBytes<S>
where
    S: Stream,
    S::Item: AsRef<[u8]>,
{
    type Item = Result<Vec<u8>, StreamError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        this.driver.poll_next::<[u8], _>(this.stream.as_mut(), cx)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.driver.size_hint(self.stream.size_hint())
    }
}

impl<S> FusedStream for WrapStream<S>
where
    S: Stream,
    S::Item: AsRef<str>,
{
    fn is_terminated(&self) -> bool {
        self.driver.is_done()
    }
}

impl<S> FusedStream for WrapStreamBytes<S>
where
    S: Stream,
    S::Item: AsRef<[u8]>,
{
    fn is_terminated(&self) -> bool {
        self.driver.is_done()
    }
}

impl Driver {
    /// The next non-empty output, taking chunks while the source has them
    /// ready; `Pending` when it has not (it has then arranged a wake-up).
    fn poll_next<U, S>(
        &mut self,
        mut stream: Pin<&mut S>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<U::Out, StreamError>>>
    where
        U: Unit + ?Sized,
        S: Stream + ?Sized,
        S::Item: AsRef<U>,
    {
        while !self.is_done() {
            if let Some(e) = self.take_pending() {
                return Poll::Ready(Some(Err(e)));
            }
            let chunk = ready!(stream.as_mut().poll_next(cx));
            if let ControlFlow::Break(item) = self.step(chunk.as_ref().map(AsRef::as_ref)) {
                return Poll::Ready(item);
            }
        }
        Poll::Ready(None)
    }
}
