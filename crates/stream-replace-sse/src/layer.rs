//! The response path for any `http_body::Body`: the compiled guard, and a
//! `tower` layer over a service's responses.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::header::{self, HeaderValue};
use http::{Request, Response, StatusCode};
use http_body::Body;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, Limited};
use serde_json::json;
use stream_replace::Rules;

use crate::body::{GuardedBody, Hooks};
use crate::scan::{self, Api, GuardError, Limits, SseScan};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Response rules and bounds, compiled once, to guard any number of
/// response bodies.
///
/// Every string of every event is scanned (but the values of structural
/// keys such as `id`, `index` or `finish_reason`), one exact stream per
/// JSON path with its indices, so a value split across events, chunks or
/// bytes is replaced whole; token `logprobs` are dropped; an event that is
/// not SSE or JSON, or past a bound, ends the stream with an error event
/// of the API's shape; a block rule's match does too.
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
/// let rules = Rules::builder().regex(r"[\w.+-]+@[\w-]+\.\w+", "[EMAIL]").build()?;
/// let guard = ResponseGuard::new(&rules);
/// let upstream = Full::new(bytes::Bytes::from(
///     "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"mail ann@example.com\"}}]}\n\n",
/// ));
/// let out = guard.sse(upstream, Api::OpenAi).collect().await?.to_bytes();
/// let out = String::from_utf8(out.to_vec())?;
/// assert!(out.contains("[EMAIL]") && !out.contains("ann@"));
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct ResponseGuard {
    rules: Rules,
    limits: Limits,
}

/// A whole JSON body, scanned: see [`ResponseGuard::json`].
///
/// # Example
///
/// ```
/// use stream_replace::Rules;
/// use stream_replace_sse::ResponseGuard;
///
/// let guard = ResponseGuard::new(&Rules::builder().literal("secret", "***").build()?);
/// let scanned = guard.json(br#"{"a":"my secret","logprobs":[1]}"#, &mut ())?;
/// assert_eq!(scanned.text, r#"{"a":"my ***","logprobs":null}"#);
/// assert!(scanned.logprobs_dropped);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct JsonBody {
    /// The scanned JSON text.
    pub text: String,
    /// Whether a non-empty `logprobs` or `top_logprobs` was set to `null`.
    pub logprobs_dropped: bool,
}

impl ResponseGuard {
    /// A guard running `rules` on every response, with the bounds of
    /// [`Limits::new`].
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    /// use stream_replace_sse::{Limits, ResponseGuard};
    ///
    /// let guard = ResponseGuard::new(&Rules::builder().literal("x", "y").build()?);
    /// assert_eq!(guard.limits(), Limits::new());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(rules: &Rules) -> ResponseGuard {
        ResponseGuard {
            rules: rules.clone(),
            limits: Limits::new(),
        }
    }

    /// The same guard with other bounds.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    /// use stream_replace_sse::{Limits, ResponseGuard};
    ///
    /// let rules = Rules::builder().literal("x", "y").build()?;
    /// let guard = ResponseGuard::new(&rules).with_limits(Limits::new().max_streams(8));
    /// assert_eq!(guard.limits().get_max_streams(), 8);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_limits(mut self, limits: Limits) -> ResponseGuard {
        self.limits = limits;
        self
    }

    /// The bounds of each response.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    /// use stream_replace_sse::ResponseGuard;
    ///
    /// let guard = ResponseGuard::new(&Rules::builder().literal("x", "y").build()?);
    /// assert_eq!(guard.limits().get_max_body(), 16 << 20);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The rules.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    /// use stream_replace_sse::ResponseGuard;
    ///
    /// let guard = ResponseGuard::new(&Rules::builder().literal("x", "y").build()?);
    /// assert_eq!(guard.rules().replace_all("x"), "y");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// Wraps an SSE response body: what comes out is the scanned stream.
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
    /// let guard = ResponseGuard::new(&Rules::builder().literal("x", "y").build()?);
    /// let body = Full::new(bytes::Bytes::from("not sse\n\n"));
    /// let out = guard.sse(body, Api::OpenAi).collect().await?.to_bytes();
    /// assert!(String::from_utf8(out.to_vec())?.contains("\"error\""));
    /// # Ok(())
    /// # }
    /// ```
    pub fn sse<B>(&self, body: B, api: Api) -> GuardedBody<B>
    where
        B: Body<Data = Bytes> + Unpin,
        B::Error: std::fmt::Display,
    {
        self.sse_with(body, api, ())
    }

    /// Wraps an SSE response body with `hooks` around it: a scope for
    /// the rules' calls, deadlines, counters (see [`Hooks`]).
    ///
    /// # Example
    ///
    /// ```
    /// use http_body_util::{BodyExt, Full};
    /// use stream_replace::Rules;
    /// use stream_replace_sse::{Api, GuardError, Hooks, ResponseGuard};
    ///
    /// #[derive(Default)]
    /// struct Ended(Option<&'static str>);
    /// impl Hooks for Ended {
    ///     fn on_end(&mut self, e: Option<&GuardError>) { self.0 = Some(e.map_or("ok", GuardError::code)); }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    /// let guard = ResponseGuard::new(&Rules::builder().literal("x", "y").build()?);
    /// let mut body = guard.sse_with(Full::new(bytes::Bytes::from("data: [DONE]\n\n")), Api::OpenAi, Ended::default());
    /// while let Some(frame) = body.frame().await { frame?; }
    /// assert_eq!(body.hooks().0, Some("ok"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn sse_with<B, H: Hooks>(&self, body: B, api: Api, hooks: H) -> GuardedBody<B, H> {
        GuardedBody::new(body, SseScan::new(&self.rules, self.limits), api, hooks)
    }

    /// Scans a whole JSON body: every string and object key but the
    /// values of structural keys, each on its own; token `logprobs` are
    /// set to `null`. `hooks` gives the scope of the rules' calls (see
    /// [`Hooks::scope`]); pass `&mut ()` for none.
    ///
    /// # Errors
    ///
    /// [`GuardError::InvalidJson`] when `body` is not UTF-8 JSON;
    /// [`GuardError::Blocked`] when a block rule matched.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    /// use stream_replace_sse::ResponseGuard;
    ///
    /// let guard = ResponseGuard::new(&Rules::builder().literal("x", "y").build()?);
    /// let scanned = guard.json(br#"{"model":"x","content":"x"}"#, &mut ())?;
    /// assert_eq!(scanned.text, r#"{"model":"x","content":"y"}"#);
    /// assert_eq!(guard.json(b"not json", &mut ()).unwrap_err().code(), "invalid_json");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn json<H: Hooks + ?Sized>(
        &self,
        body: &[u8],
        hooks: &mut H,
    ) -> Result<JsonBody, GuardError> {
        let text = std::str::from_utf8(body)
            .map_err(|e| GuardError::InvalidJson(format!("the body is not UTF-8: {e}")))?;
        let mut value = scan::parse_json(text)?;
        let dropped = scan::scan_json(&self.rules, &mut |call| hooks.scope(call), &mut value)?;
        Ok(JsonBody {
            text: value.to_string(),
            logprobs_dropped: dropped,
        })
    }
}

/// A `tower` layer that guards the responses of the service it wraps:
/// an SSE response (`text/event-stream`) streams through a
/// [`GuardedBody`]; any other response is read whole (up to
/// [`Limits::max_body`]) and every string of its JSON scanned; a body that
/// is neither SSE nor JSON, or is compressed, becomes a 502 with a JSON
/// error. Nothing passes unscanned.
///
/// # Example
///
/// ```
/// use stream_replace::Rules;
/// use stream_replace_sse::{Api, GuardLayer, ResponseGuard};
/// use tower_layer::Layer;
///
/// let rules = Rules::builder().literal("x", "y").build()?;
/// let layer = GuardLayer::new(ResponseGuard::new(&rules), Api::OpenAi);
/// let _service = layer.layer(tower_service_fn());
/// # fn tower_service_fn() {}
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct GuardLayer {
    guard: Arc<ResponseGuard>,
    api: Api,
}

impl GuardLayer {
    /// A layer guarding responses with `guard`, errors in `api`'s shape.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    /// use stream_replace_sse::{Api, GuardLayer, ResponseGuard};
    ///
    /// let rules = Rules::builder().literal("x", "y").build()?;
    /// let _layer = GuardLayer::new(ResponseGuard::new(&rules), Api::Anthropic);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(guard: ResponseGuard, api: Api) -> GuardLayer {
        GuardLayer {
            guard: Arc::new(guard),
            api,
        }
    }
}

impl<S> tower_layer::Layer<S> for GuardLayer {
    type Service = Guarded<S>;

    fn layer(&self, inner: S) -> Guarded<S> {
        Guarded {
            inner,
            guard: Arc::clone(&self.guard),
            api: self.api,
        }
    }
}

/// The service a [`GuardLayer`] makes.
///
/// # Example
///
/// ```
/// use stream_replace::Rules;
/// use stream_replace_sse::{Api, GuardLayer, Guarded, ResponseGuard};
/// use tower_layer::Layer;
///
/// let rules = Rules::builder().literal("x", "y").build()?;
/// let _service: Guarded<()> = GuardLayer::new(ResponseGuard::new(&rules), Api::OpenAi).layer(());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct Guarded<S> {
    inner: S,
    guard: Arc<ResponseGuard>,
    api: Api,
}

/// The body of a guarded response.
pub type GuardedResponseBody = UnsyncBoxBody<Bytes, BoxError>;

impl<S, ReqBody, ResBody> tower_service::Service<Request<ReqBody>> for Guarded<S>
where
    S: tower_service::Service<Request<ReqBody>, Response = Response<ResBody>>,
    S::Future: Send + 'static,
    ResBody: Body<Data = Bytes> + Send + 'static,
    ResBody::Error: std::fmt::Display + Into<BoxError>,
{
    type Response = Response<GuardedResponseBody>;
    type Error = S::Error;
    type Future =
        Pin<Box<dyn Future<Output = Result<Response<GuardedResponseBody>, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<ReqBody>) -> Self::Future {
        let future = self.inner.call(req);
        let guard = Arc::clone(&self.guard);
        let api = self.api;
        Box::pin(async move {
            let response = future.await?;
            Ok(guard_response(&guard, api, response).await)
        })
    }
}

async fn guard_response<B>(
    guard: &ResponseGuard,
    api: Api,
    response: Response<B>,
) -> Response<GuardedResponseBody>
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: std::fmt::Display + Into<BoxError>,
{
    let (mut parts, body) = response.into_parts();
    parts.headers.remove(header::CONTENT_LENGTH);
    let compressed = parts
        .headers
        .get(header::CONTENT_ENCODING)
        .is_some_and(|v| !v.as_bytes().eq_ignore_ascii_case(b"identity"));
    if compressed {
        return refused(parts, "the response is compressed, so it cannot be checked");
    }
    if is_sse(&parts.headers) {
        let body = guard.sse(Box::pin(body), api);
        return Response::from_parts(parts, body.boxed_unsync());
    }
    let Ok(collected) = Limited::new(body, guard.limits.get_max_body())
        .collect()
        .await
    else {
        return refused(parts, "the response is larger than the limit, or broke off");
    };
    let scanned = match guard.json(&collected.to_bytes(), &mut ()) {
        Ok(scanned) => scanned,
        Err(GuardError::InvalidJson(_)) => {
            return refused(
                parts,
                "the response is neither SSE nor JSON, so it is not forwarded",
            );
        }
        Err(e) => return refused(parts, &e.to_string()),
    };
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Response::from_parts(
        parts,
        Full::new(Bytes::from(scanned.text))
            .map_err(|e| match e {})
            .boxed_unsync(),
    )
}

// Whether `headers` say the body is an SSE stream (`text/event-stream`,
// any parameters, any case).
fn is_sse(headers: &http::HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| {
            ct.trim_start()
                .to_ascii_lowercase()
                .starts_with("text/event-stream")
        })
}

fn refused(mut parts: http::response::Parts, message: &str) -> Response<GuardedResponseBody> {
    parts.status = StatusCode::BAD_GATEWAY;
    parts.headers.remove(header::CONTENT_ENCODING);
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    let body = json!({"error": {"message": message, "type": "proxy_error"}}).to_string();
    Response::from_parts(
        parts,
        Full::new(Bytes::from(body))
            .map_err(|e| match e {})
            .boxed_unsync(),
    )
}
