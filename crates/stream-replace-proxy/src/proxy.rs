//! The HTTP side: accept, mask, forward, and rewrite the response.

use std::convert::Infallible;
use std::error::Error as StdError;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Body, Frame, Incoming};
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{json, Value};
use stream_replace::Rules;
use stream_replace_sse::{Format, SseReplacer};
use tokio::net::TcpListener;

use crate::detect::{response_rules, with_vault, Detectors, Vault};

type BoxError = Box<dyn StdError + Send + Sync>;
type ProxyBody = BoxBody<Bytes, BoxError>;

/// The largest request body the proxy reads.
const MAX_REQUEST: usize = 8 << 20;
/// The largest non-streaming response body the proxy reads.
const MAX_RESPONSE: usize = 64 << 20;

/// Where the proxy sends requests.
///
/// # Example
///
/// ```
/// use stream_replace_proxy::Config;
///
/// let config = Config::new("http://127.0.0.1:18799/v1")?;
/// assert_eq!(config.upstream_base(), "http://127.0.0.1:18799/v1");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct Config {
    upstream_base: String,
    max_held: usize,
}

impl Config {
    /// A proxy in front of `upstream_base`, an OpenAI-compatible `/v1`
    /// base URL (`http://` only: the proxy speaks plain HTTP/1.1).
    ///
    /// # Errors
    ///
    /// When `upstream_base` is not an `http://` URL.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_proxy::Config;
    ///
    /// assert!(Config::new("http://localhost:8000/v1/").is_ok());
    /// assert!(Config::new("localhost:8000").is_err());
    /// ```
    pub fn new(upstream_base: &str) -> Result<Config, String> {
        let base = upstream_base.trim_end_matches('/');
        let ok = base
            .strip_prefix("http://")
            .is_some_and(|rest| !rest.is_empty())
            && base.parse::<hyper::Uri>().is_ok();
        if !ok {
            return Err(format!(
                "UPSTREAM_BASE_URL must be an http:// URL such as http://127.0.0.1:18799/v1, not {upstream_base:?}"
            ));
        }
        Ok(Config {
            upstream_base: base.to_owned(),
            max_held: stream_replace::Config::new().get_max_held(),
        })
    }

    /// The upstream `/v1` base URL, without a trailing `/`.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_proxy::Config;
    ///
    /// assert_eq!(Config::new("http://h:1/v1/")?.upstream_base(), "http://h:1/v1");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn upstream_base(&self) -> &str {
        &self.upstream_base
    }

    /// The most bytes one response field may hold back (1 MiB by
    /// default). Past it the response fails closed: an SSE stream ends
    /// with an error event and no `[DONE]`, the held text is never sent.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_proxy::Config;
    ///
    /// let config = Config::new("http://127.0.0.1:18799/v1")?.max_held(64 << 10);
    /// assert_eq!(config.get_max_held(), 64 << 10);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn max_held(mut self, bytes: usize) -> Config {
        self.max_held = bytes;
        self
    }

    /// The cap set by [`max_held`](Config::max_held).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_proxy::Config;
    ///
    /// assert_eq!(Config::new("http://h:1/v1")?.get_max_held(), 1 << 20);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn get_max_held(&self) -> usize {
        self.max_held
    }
}

struct Shared {
    config: Config,
    detectors: Detectors,
    rules: Rules,
    client: Client<HttpConnector, Full<Bytes>>,
}

/// Serves the proxy on `listener` until the task is dropped.
///
/// Every path under `/v1/` is forwarded to the same path under the upstream
/// base (a URL in which a detector finds a value is refused with 400). A JSON request body has every string masked (see
/// [`DETECTORS`](crate::DETECTORS)) but the values of `model`, `name`,
/// `role`, `type`, `id` and `tool_call_id`. For `/v1/chat/completions`, the
/// response (SSE or JSON) gets each placeholder back as its value and every
/// other detected value redacted, in every string field of each choice's
/// delta or message, exactly across any split.
///
/// # Errors
///
/// When accepting a connection fails, or the response rules cannot be
/// compiled (not for the built-in detectors).
///
/// # Example
///
/// ```no_run
/// use stream_replace_proxy::{serve, Config};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:14000").await?;
/// serve(listener, Config::new("http://127.0.0.1:18799/v1")?).await?;
/// # Ok(())
/// # }
/// ```
pub async fn serve(listener: TcpListener, config: Config) -> std::io::Result<()> {
    let rules = response_rules(stream_replace::Config::new().max_held(config.max_held))
        .map_err(std::io::Error::other)?;
    let shared = Arc::new(Shared {
        config,
        detectors: Detectors::new(),
        rules,
        client: Client::builder(TokioExecutor::new()).build_http(),
    });
    loop {
        let (stream, _) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        let shared = Arc::clone(&shared);
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let shared = Arc::clone(&shared);
                async move { Ok::<_, Infallible>(handle(&shared, req).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

async fn handle(shared: &Shared, req: Request<Incoming>) -> Response<ProxyBody> {
    match forward(shared, req).await {
        Ok(response) => response,
        Err((status, message)) => error_response(status, &message),
    }
}

fn error_response(status: StatusCode, message: &str) -> Response<ProxyBody> {
    let body = json!({"error": {"message": message, "type": "proxy_error"}}).to_string();
    let mut response = Response::new(full(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn full(body: impl Into<Bytes>) -> ProxyBody {
    Full::new(body.into()).map_err(|e| match e {}).boxed()
}

// The request headers passed upstream: the ones that say who the caller
// is and what it sends, not hop-by-hop or encoding ones (a compressed
// response could not be scanned).
const FORWARDED_HEADERS: &[&str] = &[
    "authorization",
    "content-type",
    "accept",
    "user-agent",
    "x-api-key",
    "openai-organization",
    "openai-project",
    "anthropic-version",
];

async fn forward(
    shared: &Shared,
    req: Request<Incoming>,
) -> Result<Response<ProxyBody>, (StatusCode, String)> {
    let (parts, body) = req.into_parts();
    let path_and_query = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let Some(rest) = path_and_query.strip_prefix("/v1") else {
        return Err((
            StatusCode::NOT_FOUND,
            "only /v1/ paths are proxied".to_owned(),
        ));
    };
    // A URL cannot carry a placeholder, so one that carries a value is
    // refused rather than sent.
    if shared.detectors.finds(rest) {
        return Err((
            StatusCode::BAD_REQUEST,
            "the URL carries personal data; send it in the body".to_owned(),
        ));
    }
    let is_chat = parts.method == Method::POST
        && parts.uri.path().trim_end_matches('/') == "/v1/chat/completions";
    let body = Limited::new(body, MAX_REQUEST)
        .collect()
        .await
        .map_err(|e| {
            (
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("cannot read the request body: {e}"),
            )
        })?
        .to_bytes();

    let mut vault = Vault::new();
    let body = if body.is_empty() {
        body
    } else {
        match serde_json::from_slice::<Value>(&body) {
            Ok(mut value) => {
                shared.detectors.mask_json(&mut value, &mut vault);
                Bytes::from(value.to_string())
            }
            // A body that is not JSON cannot be masked, so it is not sent.
            Err(_) => {
                return Err((
                    StatusCode::BAD_REQUEST,
                    "the request body is not JSON, so it cannot be checked".to_owned(),
                ))
            }
        }
    };

    let uri = format!("{}{rest}", shared.config.upstream_base);
    let mut upstream_req = Request::builder().method(parts.method.clone()).uri(&uri);
    for name in FORWARDED_HEADERS {
        for value in parts.headers.get_all(*name) {
            upstream_req = upstream_req.header(*name, value);
        }
    }
    let upstream_req = upstream_req
        .header(header::ACCEPT_ENCODING, "identity")
        .body(Full::new(body))
        .map_err(|e| {
            (
                StatusCode::BAD_GATEWAY,
                format!("bad upstream request: {e}"),
            )
        })?;
    let upstream = shared.client.request(upstream_req).await.map_err(|e| {
        (
            StatusCode::BAD_GATEWAY,
            format!("upstream unreachable: {e}"),
        )
    })?;

    let (mut parts, body) = upstream.into_parts();
    for name in [
        header::CONTENT_LENGTH,
        header::TRANSFER_ENCODING,
        header::CONNECTION,
    ] {
        parts.headers.remove(name);
    }
    let is_sse = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.to_ascii_lowercase().starts_with("text/event-stream"));
    if !is_chat || !parts.status.is_success() {
        return Ok(Response::from_parts(
            parts,
            body.map_err(BoxError::from).boxed(),
        ));
    }
    let rules = &shared.rules;
    if is_sse {
        let body = SseBody {
            upstream: body,
            sse: SseReplacer::new(rules, Format::OpenAiChat),
            vault,
            done: false,
        };
        return Ok(Response::from_parts(parts, body.boxed()));
    }
    let bytes = Limited::new(body, MAX_RESPONSE)
        .collect()
        .await
        .map_err(|e| {
            (
                StatusCode::BAD_GATEWAY,
                format!("cannot read the upstream response: {e}"),
            )
        })?
        .to_bytes();
    let Ok(mut value) = serde_json::from_slice::<Value>(&bytes) else {
        return Err((
            StatusCode::BAD_GATEWAY,
            "the upstream response is neither SSE nor JSON, so it cannot be checked".to_owned(),
        ));
    };
    with_vault(&mut vault, || rewrite_completion(rules, &mut value));
    Ok(Response::from_parts(parts, full(value.to_string())))
}

// A whole chat completion: every string of each choice's message (and the
// legacy `text`) but `role`.
fn rewrite_completion(rules: &Rules, value: &mut Value) {
    fn walk(rules: &Rules, v: &mut Value) {
        match v {
            Value::String(s) => *s = rules.replace_all(s),
            Value::Array(items) => items.iter_mut().for_each(|v| walk(rules, v)),
            Value::Object(map) => {
                for (k, v) in map.iter_mut() {
                    if !(matches!(k.as_str(), "role" | "type" | "id" | "name") && v.is_string()) {
                        walk(rules, v);
                    }
                }
            }
            _ => {}
        }
    }
    let Some(choices) = value.get_mut("choices").and_then(Value::as_array_mut) else {
        return;
    };
    for choice in choices {
        for key in ["message", "text", "delta"] {
            if let Some(v) = choice.get_mut(key) {
                walk(rules, v);
            }
        }
    }
}

/// An upstream SSE body rewritten event by event as it arrives.
struct SseBody {
    upstream: Incoming,
    sse: SseReplacer,
    // The request's placeholders, lent to the rules for each feed.
    vault: Vault,
    done: bool,
}

impl Body for SseBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        loop {
            if this.done {
                return Poll::Ready(None);
            }
            let mut out = Vec::new();
            match Pin::new(&mut this.upstream).poll_frame(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Ok(frame))) => {
                    let Ok(data) = frame.into_data() else {
                        continue;
                    };
                    // On failure `out` ends with an error event; nothing after it.
                    let sse = &mut this.sse;
                    if with_vault(&mut this.vault, || sse.feed(&data, &mut out)).is_err() {
                        this.done = true;
                    }
                }
                Poll::Ready(Some(Err(e))) => {
                    this.done = true;
                    return Poll::Ready(Some(Err(e.into())));
                }
                Poll::Ready(None) => {
                    this.done = true;
                    let sse = &mut this.sse;
                    let _ = with_vault(&mut this.vault, || sse.finish(&mut out));
                }
            }
            if !out.is_empty() {
                return Poll::Ready(Some(Ok(Frame::data(Bytes::from(out)))));
            }
        }
    }
}
