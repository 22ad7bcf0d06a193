//! The response side of the proxy for any `http_body::Body`: a wrapper and
//! a `tower` layer that Rust gateways embed.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Body;
use hyper::header::{self, HeaderValue};
use hyper::{Request, Response, StatusCode};
use serde_json::json;

use crate::detect::Vault;
use crate::proxy::GuardedBody;
use crate::ruleset::RuleSet;
use crate::scan::{self, Flavor, Limits, SseScan};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Which API's shape an error event takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Api {
    /// OpenAI's: `data: {"error": {...}}`.
    OpenAi,
    /// Anthropic's: `event: error` with `{"type": "error", ...}`.
    Anthropic,
}

impl Api {
    fn flavor(self) -> Flavor {
        match self {
            Api::OpenAi => Flavor::OpenAi,
            Api::Anthropic => Flavor::Anthropic,
        }
    }
}

/// The proxy's response rules and bounds, compiled once, to guard any
/// number of response bodies.
///
/// Every string of every event is scanned (but the values of structural
/// keys such as `id` or `index`), one exact stream per JSON path with its
/// indices, so a value split across events, chunks or bytes is redacted
/// whole; token `logprobs` are dropped; an event that is not SSE or JSON,
/// or past a bound, ends the stream with an error event of the API's
/// shape. Without the proxy's request side there is no vault, so nothing
/// is restored: every value the `pii` pack finds is redacted.
///
/// # Example
///
/// ```
/// use http_body_util::{BodyExt, Full};
/// use stream_replace_proxy::{Api, ResponseGuard};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// let guard = ResponseGuard::new()?;
/// let upstream = Full::new(bytes::Bytes::from(
///     "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"mail ann@example.com\"}}]}\n\n",
/// ));
/// let out = guard.sse(upstream, Api::OpenAi).collect().await?.to_bytes();
/// let out = String::from_utf8(out.to_vec())?;
/// assert!(out.contains("[EMAIL_REDACTED]") && !out.contains("ann@"));
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct ResponseGuard {
    rules: stream_replace::Rules,
    limits: Limits,
    max_body: usize,
}

impl ResponseGuard {
    /// The proxy's response rules with its default bounds: 1 MiB held per
    /// response, 256 field streams, 1 MiB per event, 16 MiB per whole JSON
    /// body.
    ///
    /// # Errors
    ///
    /// When the rules cannot be compiled (not for the built-in detectors).
    ///
    /// # Example
    ///
    /// ```
    /// assert!(stream_replace_proxy::ResponseGuard::new().is_ok());
    /// ```
    pub fn new() -> Result<ResponseGuard, stream_replace::Error> {
        ResponseGuard::with_rules(&RuleSet::default())
    }

    /// The response rules of `rules` (a settings file's `[rules]`, see
    /// [`Settings`](crate::Settings)) with the default bounds of
    /// [`new`](ResponseGuard::new). Without a request side there is no
    /// vault: mask and redact rules both redact, block rules end the
    /// stream with an error event (code `blocked`).
    ///
    /// # Errors
    ///
    /// When the rules cannot be compiled.
    ///
    /// # Example
    ///
    /// ```
    /// use http_body_util::{BodyExt, Full};
    /// use stream_replace_proxy::{Api, ResponseGuard, Settings};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    /// let text = "upstream = 'http://h:1/v1'\n[rules.packs.secrets]";
    /// let settings = Settings::from_toml(text, "proxy.toml", |_| None)?;
    /// let guard = ResponseGuard::with_rules(&settings.config.rules)?;
    /// let upstream = Full::new(bytes::Bytes::from(
    ///     "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5\"}}]}\n\n",
    /// ));
    /// let out = guard.sse(upstream, Api::OpenAi).collect().await?.to_bytes();
    /// assert!(String::from_utf8(out.to_vec())?.contains("[GITHUB_TOKEN_REDACTED]"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_rules(rules: &RuleSet) -> Result<ResponseGuard, stream_replace::Error> {
        let max_held = 1 << 20;
        Ok(ResponseGuard {
            rules: rules.response_rules(stream_replace::Config::new().max_held(max_held))?,
            limits: Limits {
                max_held,
                max_streams: 256,
                max_event: 1 << 20,
            },
            max_body: 16 << 20,
        })
    }

    /// Wraps an SSE response body: what comes out is the scanned stream.
    ///
    /// # Example
    ///
    /// ```
    /// use http_body_util::{BodyExt, Full};
    /// use stream_replace_proxy::{Api, ResponseGuard};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    /// let body = Full::new(bytes::Bytes::from("not sse\n\n"));
    /// let out = ResponseGuard::new()?.sse(body, Api::OpenAi).collect().await?.to_bytes();
    /// assert!(String::from_utf8(out.to_vec())?.contains("\"error\""));
    /// # Ok(())
    /// # }
    /// ```
    pub fn sse<B>(&self, body: B, api: Api) -> GuardedBody<B>
    where
        B: Body<Data = Bytes> + Unpin,
        B::Error: std::fmt::Display,
    {
        let scan = SseScan::new(&self.rules, Vault::new(), self.limits);
        GuardedBody::new(body, scan, api.flavor(), Bytes::new(), false)
    }
}

/// A `tower` layer that guards the responses of the service it wraps:
/// an SSE response (`text/event-stream`) streams through a
/// [`GuardedBody`]; any other response is read whole (up to 16 MiB) and
/// every string of its JSON scanned; a body that is neither SSE nor JSON
/// becomes a 502 with a JSON error. Nothing passes unscanned.
///
/// # Example
///
/// ```
/// use stream_replace_proxy::{Api, GuardLayer, ResponseGuard};
/// use tower_layer::Layer;
///
/// let layer = GuardLayer::new(ResponseGuard::new()?, Api::OpenAi);
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
    /// use stream_replace_proxy::{Api, GuardLayer, ResponseGuard};
    ///
    /// let _layer = GuardLayer::new(ResponseGuard::new()?, Api::Anthropic);
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
    let is_sse = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| {
            ct.trim_start()
                .to_ascii_lowercase()
                .starts_with("text/event-stream")
        });
    if compressed {
        return refused(parts, "the response is compressed, so it cannot be checked");
    }
    if is_sse {
        let body = guard.sse(Box::pin(body), api);
        return Response::from_parts(parts, body.boxed_unsync());
    }
    let Ok(collected) = Limited::new(body, guard.max_body).collect().await else {
        return refused(parts, "the response is larger than the limit, or broke off");
    };
    let bytes = collected.to_bytes();
    let parsed = std::str::from_utf8(&bytes)
        .ok()
        .and_then(|t| scan::parse_json(t).ok());
    let Some(mut value) = parsed else {
        return refused(
            parts,
            "the response is neither SSE nor JSON, so it is not forwarded",
        );
    };
    if let Err(e) = scan::scan_json(&guard.rules, &mut Vault::new(), &mut value) {
        return refused(parts, &e.to_string());
    }
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Response::from_parts(
        parts,
        Full::new(Bytes::from(value.to_string()))
            .map_err(|e| match e {})
            .boxed_unsync(),
    )
}

fn refused(
    mut parts: hyper::http::response::Parts,
    message: &str,
) -> Response<GuardedResponseBody> {
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
