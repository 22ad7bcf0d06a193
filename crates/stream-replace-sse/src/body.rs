//! The guarded response body: an upstream `http_body::Body` of SSE,
//! rewritten event by event, with the caller's hooks around it.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};

use crate::scan::{Api, GuardError, SseScan};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What a server adds to a guarded body: a scope around each call into
/// the rules, deadlines, and what it counts. Every method has a default
/// that does nothing, and `()` is the hooks of a body that needs none.
///
/// A stream is in one of two states: streaming, or ended
/// ([`on_end`](Hooks::on_end) was called, once). State that must outlive
/// the body (an access log line, a gauge) goes in the hooks' own `Drop`:
/// a body dropped before its end (the client went away) never gets an
/// `on_end`.
///
/// # Example
///
/// Counting what went out, and restoring placeholders from a
/// per-response map that the rules' replacement closures read (lent
/// through a thread-local for the length of each call):
///
/// ```
/// use std::cell::RefCell;
/// use http_body_util::{BodyExt, Full};
/// use stream_replace::{Pattern, Replacement, Rules};
/// use stream_replace_sse::{Api, GuardError, Hooks, ResponseGuard};
///
/// thread_local!(static LENT: RefCell<Vec<(String, String)>> = RefCell::new(Vec::new()));
///
/// struct Restore { map: Vec<(String, String)>, frames: usize, ended: Option<&'static str> }
///
/// impl Hooks for Restore {
///     fn scope(&mut self, call: &mut dyn FnMut()) {
///         LENT.with(|l| std::mem::swap(&mut *l.borrow_mut(), &mut self.map));
///         call();
///         LENT.with(|l| std::mem::swap(&mut *l.borrow_mut(), &mut self.map));
///     }
///     fn on_frame(&mut self) { self.frames += 1; }
///     fn on_end(&mut self, error: Option<&GuardError>) {
///         self.ended = Some(error.map_or("ok", GuardError::code));
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// let restore = Replacement::with(|caps| {
///     let p = caps.as_str();
///     LENT.with(|l| l.borrow().iter().find(|(k, _)| k == p).map_or(p.to_owned(), |(_, v)| v.clone()))
/// });
/// let mut rules = Rules::builder();
/// rules.rule(Pattern::regex(r"\[NAME_\d+\]"), restore);
/// let guard = ResponseGuard::new(&rules.build()?);
///
/// let hooks = Restore { map: vec![("[NAME_1]".into(), "Ann".into())], frames: 0, ended: None };
/// let upstream = Full::new(bytes::Bytes::from(
///     "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi [NAME_1]!\"}}]}\n\n",
/// ));
/// let mut body = guard.sse_with(upstream, Api::OpenAi, hooks);
/// let mut out = Vec::new();
/// while let Some(frame) = body.frame().await {
///     out.extend_from_slice(&frame?.into_data().unwrap_or_default());
/// }
/// assert!(String::from_utf8(out)?.contains("Hi Ann!"));
/// assert_eq!(body.hooks().ended, Some("ok"));
/// assert!(body.hooks().frames >= 1);
/// # Ok(())
/// # }
/// ```
pub trait Hooks {
    /// Runs `call`, one call into the response's rules (a feed or a
    /// flush of one field), inside whatever per-response scope the rules'
    /// replacement closures read: the place to lend them a request's
    /// placeholder map. The default runs it as it is. A scope that does
    /// not run `call` gets it run outside the scope.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_sse::Hooks;
    ///
    /// struct Depth(u32);
    /// impl Hooks for Depth {
    ///     fn scope(&mut self, call: &mut dyn FnMut()) {
    ///         self.0 += 1;
    ///         call();
    ///     }
    /// }
    /// let mut d = Depth(0);
    /// let mut ran = false;
    /// d.scope(&mut || ran = true);
    /// assert!(ran && d.0 == 1);
    /// ```
    fn scope(&mut self, call: &mut dyn FnMut()) {
        call()
    }

    /// Polled before the upstream each time the body is polled: `Ready`
    /// cuts the stream with that error (a drain deadline), even while the
    /// upstream has data.
    ///
    /// # Example
    ///
    /// ```
    /// use std::task::{Context, Poll};
    /// use stream_replace_sse::{GuardError, Hooks};
    ///
    /// struct Draining;
    /// impl Hooks for Draining {
    ///     fn poll_stop(&mut self, _: &mut Context<'_>) -> Poll<GuardError> {
    ///         Poll::Ready(GuardError::Stopped { code: "shutting_down", message: "draining".into() })
    ///     }
    /// }
    /// ```
    fn poll_stop(&mut self, cx: &mut Context<'_>) -> Poll<GuardError> {
        let _ = cx;
        Poll::Pending
    }

    /// Polled when the upstream has no frame ready: `Ready` cuts the
    /// stream with that error (an idle timeout; restart its clock in
    /// [`on_upstream_data`](Hooks::on_upstream_data)). A slow client
    /// does not trip it: it is polled only while the body is.
    ///
    /// # Example
    ///
    /// ```
    /// use std::task::{Context, Poll};
    /// use stream_replace_sse::{GuardError, Hooks};
    ///
    /// struct NoWait;
    /// impl Hooks for NoWait {
    ///     fn poll_idle(&mut self, _: &mut Context<'_>) -> Poll<GuardError> {
    ///         Poll::Ready(GuardError::Upstream("the upstream went silent".into()))
    ///     }
    /// }
    /// ```
    fn poll_idle(&mut self, cx: &mut Context<'_>) -> Poll<GuardError> {
        let _ = cx;
        Poll::Pending
    }

    /// An upstream data frame arrived (before it is scanned).
    ///
    /// # Example
    ///
    /// ```
    /// struct Frames(usize);
    /// impl stream_replace_sse::Hooks for Frames {
    ///     fn on_upstream_data(&mut self) { self.0 += 1; }
    /// }
    /// ```
    fn on_upstream_data(&mut self) {}

    /// The bytes the response holds back across its fields, after each
    /// upstream frame was scanned.
    ///
    /// # Example
    ///
    /// ```
    /// struct Peak(usize);
    /// impl stream_replace_sse::Hooks for Peak {
    ///     fn on_held(&mut self, held: usize) { self.0 = self.0.max(held); }
    /// }
    /// ```
    fn on_held(&mut self, held: usize) {
        let _ = held;
    }

    /// The body is polled for its next frame: the server wrote the last
    /// one out.
    ///
    /// # Example
    ///
    /// ```
    /// struct Polls(usize);
    /// impl stream_replace_sse::Hooks for Polls {
    ///     fn on_poll(&mut self) { self.0 += 1; }
    /// }
    /// ```
    fn on_poll(&mut self) {}

    /// A frame of safe bytes goes out.
    ///
    /// # Example
    ///
    /// ```
    /// struct Frames(usize);
    /// impl stream_replace_sse::Hooks for Frames {
    ///     fn on_frame(&mut self) { self.0 += 1; }
    /// }
    /// ```
    fn on_frame(&mut self) {}

    /// The stream ended: whole (`None`), or cut by `error`, whose event
    /// is the last thing to go out. Called once.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_sse::GuardError;
    ///
    /// struct Outcome(&'static str);
    /// impl stream_replace_sse::Hooks for Outcome {
    ///     fn on_end(&mut self, error: Option<&GuardError>) {
    ///         self.0 = error.map_or("ok", GuardError::code);
    ///     }
    /// }
    /// ```
    fn on_end(&mut self, error: Option<&GuardError>) {
        let _ = error;
    }
}

impl Hooks for () {}

/// An upstream SSE body rewritten event by event as it arrives: every
/// string of every event scanned, one exact stream per JSON path with its
/// indices, and what cannot be parsed or passes a bound ends the stream
/// with an error event of the API's shape. Made by
/// [`ResponseGuard::sse`](crate::ResponseGuard::sse),
/// [`ResponseGuard::sse_with`](crate::ResponseGuard::sse_with) or
/// [`GuardLayer`](crate::GuardLayer).
///
/// # Example
///
/// ```
/// use http_body_util::{BodyExt, Full};
/// use stream_replace::Rules;
/// use stream_replace_sse::{Api, ResponseGuard};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// let rules = Rules::builder().regex(r"\d{3}-\d{2}-\d{4}", "[SSN]").build()?;
/// let upstream = Full::new(bytes::Bytes::from(concat!(
///     "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"SSN 931-2\"}}]}\n\n",
///     "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"2-4410\"}}]}\n\n",
/// )));
/// let body = ResponseGuard::new(&rules).sse(upstream, Api::OpenAi);
/// let out = String::from_utf8(body.collect().await?.to_bytes().to_vec())?;
/// assert!(out.contains("[SSN]") && !out.contains("4410"));
/// # Ok(())
/// # }
/// ```
pub struct GuardedBody<B, H = ()> {
    upstream: B,
    scan: SseScan,
    api: Api,
    hooks: H,
    // Safe bytes read ahead by `first_output`, sent before anything else.
    first: Option<Bytes>,
    done: bool,
}

// One turn of the scan: what it gave, and whether the stream ended.
enum Step {
    Out(Vec<u8>),
    End(Vec<u8>),
    // The safe bytes before the error, and the error.
    Failed(Vec<u8>, GuardError),
}

impl<B, H: Hooks> GuardedBody<B, H> {
    pub(crate) fn new(upstream: B, scan: SseScan, api: Api, hooks: H) -> GuardedBody<B, H> {
        GuardedBody {
            upstream,
            scan,
            api,
            hooks,
            first: None,
            done: false,
        }
    }

    /// The hooks.
    ///
    /// # Example
    ///
    /// ```
    /// use http_body_util::Empty;
    /// use stream_replace::Rules;
    /// use stream_replace_sse::{Api, ResponseGuard};
    ///
    /// struct Count(u8);
    /// impl stream_replace_sse::Hooks for Count {}
    ///
    /// let guard = ResponseGuard::new(&Rules::builder().literal("x", "y").build()?);
    /// let body = guard.sse_with(Empty::<bytes::Bytes>::new(), Api::OpenAi, Count(7));
    /// assert_eq!(body.hooks().0, 7);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn hooks(&self) -> &H {
        &self.hooks
    }

    /// The hooks, to change (a deadline set once the first bytes are in).
    ///
    /// # Example
    ///
    /// ```
    /// use http_body_util::Empty;
    /// use stream_replace::Rules;
    /// use stream_replace_sse::{Api, ResponseGuard};
    ///
    /// struct Count(u8);
    /// impl stream_replace_sse::Hooks for Count {}
    ///
    /// let guard = ResponseGuard::new(&Rules::builder().literal("x", "y").build()?);
    /// let mut body = guard.sse_with(Empty::<bytes::Bytes>::new(), Api::OpenAi, Count(7));
    /// body.hooks_mut().0 += 1;
    /// assert_eq!(body.hooks().0, 8);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn hooks_mut(&mut self) -> &mut H {
        &mut self.hooks
    }

    /// Bytes held back across the response's fields now.
    ///
    /// # Example
    ///
    /// ```
    /// use http_body_util::Empty;
    /// use stream_replace::Rules;
    /// use stream_replace_sse::{Api, ResponseGuard};
    ///
    /// let guard = ResponseGuard::new(&Rules::builder().literal("x", "y").build()?);
    /// assert_eq!(guard.sse(Empty::<bytes::Bytes>::new(), Api::OpenAi).held(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn held(&self) -> usize {
        self.scan.held()
    }

    fn step(&mut self, cx: &mut Context<'_>) -> Poll<Step>
    where
        B: Body<Data = Bytes> + Unpin,
        B::Error: std::fmt::Display,
    {
        let hooks = &mut self.hooks;
        loop {
            if let Poll::Ready(e) = hooks.poll_stop(cx) {
                return Poll::Ready(Step::Failed(Vec::new(), self.scan.fail(e)));
            }
            let mut out = Vec::new();
            match Pin::new(&mut self.upstream).poll_frame(cx) {
                Poll::Pending => {
                    return match hooks.poll_idle(cx) {
                        Poll::Pending => Poll::Pending,
                        Poll::Ready(e) => Poll::Ready(Step::Failed(out, self.scan.fail(e))),
                    };
                }
                Poll::Ready(Some(Ok(frame))) => {
                    // Trailers carry no text of the reply.
                    let Ok(data) = frame.into_data() else {
                        continue;
                    };
                    hooks.on_upstream_data();
                    let fed = self
                        .scan
                        .feed(&data, &mut out, &mut |call| hooks.scope(call));
                    hooks.on_held(self.scan.held());
                    match fed {
                        Err(e) => return Poll::Ready(Step::Failed(out, e)),
                        Ok(()) if !out.is_empty() => return Poll::Ready(Step::Out(out)),
                        Ok(()) => {}
                    }
                }
                Poll::Ready(Some(Err(e))) => {
                    let e = self.scan.fail(GuardError::Upstream(e.to_string()));
                    return Poll::Ready(Step::Failed(out, e));
                }
                Poll::Ready(None) => {
                    let finished = self.scan.finish(&mut out, &mut |call| hooks.scope(call));
                    return Poll::Ready(match finished {
                        Ok(()) => Step::End(out),
                        Err(e) => Step::Failed(out, e),
                    });
                }
            }
        }
    }

    // What a step that ended the stream sends: its bytes, and the error
    // event when it was cut.
    fn end(&mut self, mut out: Vec<u8>, error: Option<GuardError>) -> Vec<u8> {
        self.done = true;
        self.hooks.on_end(error.as_ref());
        if let Some(e) = &error {
            out.extend_from_slice(&self.api.error_event(e));
        }
        out
    }

    /// Reads the upstream up to the first safe bytes (or the end), so
    /// that a server can still answer with an error status when the
    /// stream fails before any byte would go out: then this returns the
    /// error and the stream is over (the body, if sent all the same,
    /// carries only the error event), and no hook hears of it: reporting
    /// it is the caller's. Bytes read here go out first. Bound the wait
    /// with the runtime's timeout.
    ///
    /// # Errors
    ///
    /// The [`GuardError`] that cut the stream before its first safe byte.
    ///
    /// # Example
    ///
    /// ```
    /// use http_body_util::Full;
    /// use stream_replace::Rules;
    /// use stream_replace_sse::{Api, ResponseGuard};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    /// let guard = ResponseGuard::new(&Rules::builder().literal("x", "y").build()?);
    /// let mut body = guard.sse(Full::new(bytes::Bytes::from("oops: 1\n\n")), Api::OpenAi);
    /// let e = body.first_output().await.unwrap_err();
    /// assert_eq!(e.code(), "invalid_framing"); // answer 502 instead
    /// # Ok(())
    /// # }
    /// ```
    pub async fn first_output(&mut self) -> Result<(), GuardError>
    where
        B: Body<Data = Bytes> + Unpin,
        B::Error: std::fmt::Display,
    {
        std::future::poll_fn(|cx| self.poll_first(cx)).await
    }

    fn poll_first(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), GuardError>>
    where
        B: Body<Data = Bytes> + Unpin,
        B::Error: std::fmt::Display,
    {
        if self.done || self.first.is_some() {
            return Poll::Ready(Ok(()));
        }
        let (out, error) = match std::task::ready!(self.step(cx)) {
            Step::Out(out) => {
                self.first = Some(Bytes::from(out));
                return Poll::Ready(Ok(()));
            }
            Step::End(out) => (out, None),
            Step::Failed(out, e) if out.is_empty() => {
                self.done = true;
                self.first = Some(Bytes::from(self.api.error_event(&e)));
                return Poll::Ready(Err(e));
            }
            Step::Failed(out, e) => (out, Some(e)),
        };
        let out = self.end(out, error);
        self.first = Some(Bytes::from(out));
        Poll::Ready(Ok(()))
    }
}

impl<B, H> std::fmt::Debug for GuardedBody<B, H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GuardedBody")
            .field("api", &self.api)
            .field("done", &self.done)
            .field("held", &self.scan.held())
            .finish_non_exhaustive()
    }
}

impl<B, H> Body for GuardedBody<B, H>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: std::fmt::Display,
    H: Hooks + Unpin,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        this.hooks.on_poll();
        if let Some(first) = this.first.take() {
            if !first.is_empty() {
                this.hooks.on_frame();
                return Poll::Ready(Some(Ok(Frame::data(first))));
            }
        }
        if this.done {
            return Poll::Ready(None);
        }
        let out = match std::task::ready!(this.step(cx)) {
            Step::Out(out) => out,
            Step::End(out) => this.end(out, None),
            Step::Failed(out, e) => this.end(out, Some(e)),
        };
        if out.is_empty() {
            return Poll::Ready(None);
        }
        this.hooks.on_frame();
        Poll::Ready(Some(Ok(Frame::data(Bytes::from(out)))))
    }

    fn is_end_stream(&self) -> bool {
        self.done && self.first.as_ref().is_none_or(Bytes::is_empty)
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}
