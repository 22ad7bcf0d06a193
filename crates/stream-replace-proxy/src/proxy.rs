//! The HTTP side: accept, route, mask, forward, and rewrite the response.

use std::convert::Infallible;
use std::error::Error as StdError;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Body, Frame, Incoming};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode, Uri};
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use serde_json::{Value, json};
use stream_replace_sse::{Api, GuardError, Hooks, Limits, ResponseGuard};
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio::time::Sleep;

use crate::detect::{Detectors, Vault, with_vault};
use crate::metrics::Metrics;
use crate::route::{self, DEFAULT_PASS_THROUGH, Route};
use crate::ruleset::{self, LogprobsPolicy, RuleSet};

type BoxError = Box<dyn StdError + Send + Sync>;
type ProxyBody = UnsyncBoxBody<Bytes, BoxError>;

/// The header set on a response whose `logprobs` were dropped.
pub const LOGPROBS_HEADER: &str = "x-stream-replace-logprobs";

/// Where the proxy sends requests, and its bounds.
///
/// Every limit and timeout has a default; change them on the value:
///
/// ```
/// use std::time::Duration;
/// use stream_replace_proxy::Config;
///
/// let mut config = Config::new("http://127.0.0.1:18799/v1")?;
/// config.idle_timeout = Duration::from_secs(30);
/// config.max_connections = 4096;
/// assert_eq!(config.upstream_base(), "http://127.0.0.1:18799/v1");
/// assert_eq!(config.max_in_flight, 1024);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Config {
    upstream_base: String,
    upstream_authority: hyper::http::uri::Authority,
    upstream_path: String,
    upstream_tls: bool,
    /// A PEM file of root certificates trusted for an `https://` upstream
    /// (a private CA), besides the webpki roots (none).
    pub upstream_ca_file: Option<std::path::PathBuf>,
    /// Bytes one response may hold back across all its fields, with the
    /// copy of the event that carries each field's rest (1 MiB). Past it
    /// the response fails closed.
    pub max_held: usize,
    /// Field streams one response may have open at once (256).
    pub max_fields: usize,
    /// Bytes of one upstream SSE event (1 MiB).
    pub max_event: usize,
    /// Bytes of a request body (8 MiB); past it, 413.
    pub max_request_body: usize,
    /// Bytes of a whole (non-streamed) upstream response (16 MiB); past it, 502.
    pub max_response_body: usize,
    /// Distinct values one request may mask (10,000); past it, 413.
    pub max_values: usize,
    /// Time for a client to send a request's headers (10 s).
    pub header_read_timeout: Duration,
    /// Time to connect to the upstream (5 s).
    pub connect_timeout: Duration,
    /// Time from sending a request upstream to its response headers, and
    /// to the first event of a stream (120 s).
    pub first_byte_timeout: Duration,
    /// Longest silence inside a request or response body (60 s).
    pub idle_timeout: Duration,
    /// Client connections open at once (1024); past it the proxy stops
    /// accepting until one closes.
    pub max_connections: usize,
    /// Requests being handled at once, streams and pass-through bodies
    /// included (1024); past it, 503.
    pub max_in_flight: usize,
    /// After a shutdown signal, how long in-flight responses may go on
    /// (30 s); the streams still open then end with an error event.
    pub drain_timeout: Duration,
    /// How long `/readyz` waits for a connection to the upstream (2 s).
    pub ready_timeout: Duration,
    /// Where the proxy counts what it does (none by default); see
    /// [`serve_metrics`].
    pub metrics: Option<Arc<Metrics>>,
    /// Paths whose responses are passed back unscanned (`/v1/models`,
    /// `/v1/models/*`, `/v1/embeddings`); `*` is one path segment.
    pub pass_through: Vec<String>,
    /// Paths refused with a 403 although the proxy knows them (a model
    /// endpoint such as `/v1/completions`, or a pass-through path); `*` is
    /// one path segment (none).
    pub refused: Vec<String>,
    /// The detectors and the request-side policies (the built-in `pii`
    /// set; see [`RuleSet`]).
    pub rules: RuleSet,
}

impl Config {
    /// A proxy in front of `upstream_base`, an OpenAI-compatible `/v1`
    /// base URL, `http://` or `https://` (HTTP/1.1, or HTTP/2 when the
    /// server offers it over TLS), with the default limits.
    ///
    /// # Errors
    ///
    /// When `upstream_base` is not an `http://` or `https://` URL with a
    /// host, or has a query or user information.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_proxy::Config;
    ///
    /// assert!(Config::new("http://localhost:8000/v1/").is_ok());
    /// assert!(Config::new("http://localhost:8000").is_ok());
    /// assert!(Config::new("https://api.openai.com/v1").is_ok());
    /// assert!(Config::new("localhost:8000").is_err());
    /// ```
    pub fn new(upstream_base: &str) -> Result<Config, String> {
        let base = upstream_base.trim_end_matches('/');
        let err = || {
            format!(
                "UPSTREAM_BASE_URL must be an http:// or https:// URL such as http://127.0.0.1:18799/v1, not {upstream_base:?}"
            )
        };
        let tls = base.starts_with("https://");
        if !tls && !base.starts_with("http://") {
            return Err(err());
        }
        let uri: Uri = base.parse().map_err(|_| err())?;
        let authority = uri.authority().cloned().ok_or_else(err)?;
        if authority.as_str().contains('@') || uri.query().is_some() {
            return Err(err());
        }
        let path = uri.path().trim_end_matches('/').to_owned();
        Ok(Config {
            upstream_base: base.to_owned(),
            upstream_authority: authority,
            upstream_path: path,
            upstream_tls: tls,
            upstream_ca_file: None,
            max_held: 1 << 20,
            max_fields: 256,
            max_event: 1 << 20,
            max_request_body: 8 << 20,
            max_response_body: 16 << 20,
            max_values: 10_000,
            header_read_timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(5),
            first_byte_timeout: Duration::from_secs(120),
            idle_timeout: Duration::from_secs(60),
            max_connections: 1024,
            max_in_flight: 1024,
            drain_timeout: Duration::from_secs(30),
            ready_timeout: Duration::from_secs(2),
            metrics: None,
            pass_through: DEFAULT_PASS_THROUGH
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
            refused: Vec::new(),
            rules: RuleSet::default(),
        })
    }

    /// The upstream base URL, without a trailing `/`.
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

    /// Sets [`max_held`](Config::max_held).
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

    fn limits(&self) -> Limits {
        Limits::new()
            .max_held(self.max_held)
            .max_streams(self.max_fields)
            .max_event(self.max_event)
            .max_body(self.max_response_body)
    }
}

struct Shared {
    config: Config,
    detectors: Detectors,
    guard: ResponseGuard,
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    // The upstream's TLS settings, for `/readyz`'s handshake.
    tls: Arc<rustls::ClientConfig>,
    in_flight: Arc<Semaphore>,
    // Set when the drain deadline has passed: open streams end.
    force: watch::Receiver<bool>,
    next_id: AtomicU64,
}

/// Serves the proxy on `listener` until the task is dropped.
///
/// Routes on the decoded, normalised path: the model endpoints
/// (`/v1/chat/completions`, `/v1/completions`, `/v1/responses`,
/// `/v1/responses/{id}`, `/v1/messages`) are scanned, the
/// [`pass_through`](Config::pass_through) paths are forwarded as they are,
/// every other path gets a 403 and one that does not parse a 400. A JSON
/// request body has every string, object key and number masked but the
/// values of `model`, `role`, `type`, `id` and `tool_call_id`, and so has
/// the query string. A scanned response (SSE or JSON, any status) has
/// every string but those of structural keys scanned: placeholders this
/// request issued are restored, every other detected value redacted,
/// exactly across any split; what cannot be parsed is refused.
///
/// An error accepting a connection (such as running out of file
/// descriptors) is logged and retried with a growing pause; it does not
/// end `serve`.
///
/// # Errors
///
/// When the rules cannot be compiled (not for the built-in detectors).
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
    serve_with_shutdown(listener, config, std::future::pending()).await
}

/// Serves the proxy like [`serve`] until `shutdown` completes, then
/// drains: stops accepting, lets the requests in flight finish for up to
/// [`drain_timeout`](Config::drain_timeout), ends the streams still open
/// then with an error event of their API's shape, and returns.
///
/// # Errors
///
/// As [`serve`].
///
/// # Example
///
/// ```no_run
/// use stream_replace_proxy::{serve_with_shutdown, Config};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:14000").await?;
/// let ctrl_c = async {
///     let _ = tokio::signal::ctrl_c().await;
/// };
/// serve_with_shutdown(listener, Config::new("http://127.0.0.1:18799/v1")?, ctrl_c).await?;
/// # Ok(())
/// # }
/// ```
pub async fn serve_with_shutdown(
    listener: TcpListener,
    config: Config,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let rules = config
        .rules
        .response_rules(stream_replace::Config::new().max_held(config.max_held))
        .map_err(std::io::Error::other)?;
    let detectors = config.rules.detectors().map_err(std::io::Error::other)?;
    let tls = Arc::new(tls_config(config.upstream_ca_file.as_deref())?);
    let mut connector = HttpConnector::new();
    connector.set_connect_timeout(Some(config.connect_timeout));
    connector.set_nodelay(true);
    connector.enforce_http(false);
    let connector = HttpsConnectorBuilder::new()
        .with_tls_config((*tls).clone())
        .https_or_http()
        .enable_http1()
        .enable_http2()
        .wrap_connector(connector);
    let client = Client::builder(TokioExecutor::new())
        .pool_timer(TokioTimer::new())
        .pool_idle_timeout(Duration::from_secs(30))
        .build(connector);
    let max_connections = config
        .max_connections
        .clamp(1, Semaphore::MAX_PERMITS.min(u32::MAX as usize));
    let connections = Arc::new(Semaphore::new(max_connections));
    let (drain_tx, drain_rx) = watch::channel(false);
    let (force_tx, force_rx) = watch::channel(false);
    let drain_timeout = config.drain_timeout;
    let guard = ResponseGuard::new(&rules).with_limits(config.limits());
    let shared = Arc::new(Shared {
        in_flight: Arc::new(Semaphore::new(config.max_in_flight.max(1))),
        config,
        detectors,
        guard,
        client,
        tls,
        force: force_rx,
        next_id: AtomicU64::new(1),
    });
    let mut pause = Duration::from_millis(5);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            () = &mut shutdown => break,
            permit = Arc::clone(&connections).acquire_owned() => {
                permit.map_err(std::io::Error::other)?
            }
        };
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => {
                pause = Duration::from_millis(5);
                stream
            }
            Err(e) => {
                // Out of descriptors or memory, or a connection that died
                // in the backlog: wait and go on serving.
                if !matches!(
                    e.kind(),
                    std::io::ErrorKind::ConnectionAborted | std::io::ErrorKind::ConnectionReset
                ) {
                    tracing::warn!(error = %e, ?pause, "accept failed; retrying");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(1));
                }
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let shared = Arc::clone(&shared);
        let mut drain = drain_rx.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let header_timeout = shared.config.header_read_timeout;
            let service = hyper::service::service_fn(move |req| {
                let shared = Arc::clone(&shared);
                async move { Ok::<_, Infallible>(handle(&shared, req).await) }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout)
                .serve_connection(TokioIo::new(stream), service);
            let mut conn = std::pin::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                Ok(()) = async { drain.wait_for(|d| *d).await.map(drop) } => {
                    // Finish the response in flight, then close.
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
            }
        });
    }
    // Draining: no new connections; each open one ends after its response.
    drop(listener);
    let _ = drain_tx.send(true);
    let in_use = u32::try_from(max_connections).unwrap_or(u32::MAX);
    tracing::info!(deadline = ?drain_timeout, "shutting down: draining open connections");
    if tokio::time::timeout(drain_timeout, connections.acquire_many(in_use))
        .await
        .is_err()
    {
        tracing::warn!("drain deadline passed: ending the streams still open");
        let _ = force_tx.send(true);
        let _ =
            tokio::time::timeout(Duration::from_secs(5), connections.acquire_many(in_use)).await;
    }
    tracing::info!("shut down");
    Ok(())
}

/// The TLS settings for an `https://` upstream: the webpki roots, and the
/// certificates of `ca_file` if given.
fn tls_config(ca_file: Option<&std::path::Path>) -> std::io::Result<rustls::ClientConfig> {
    use rustls_pki_types::CertificateDer;
    use rustls_pki_types::pem::PemObject;

    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    if let Some(path) = ca_file {
        let bad =
            |e: String| std::io::Error::other(format!("upstream_ca_file {}: {e}", path.display()));
        let mut added = 0;
        for cert in CertificateDer::pem_file_iter(path).map_err(|e| bad(e.to_string()))? {
            let cert = cert.map_err(|e| bad(e.to_string()))?;
            roots.add(cert).map_err(|e| bad(e.to_string()))?;
            added += 1;
        }
        if added == 0 {
            return Err(bad("holds no PEM certificate".to_owned()));
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(std::io::Error::other)?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

// The paths the proxy answers itself, outside the proxied `/v1` namespace.
const HEALTH: &str = "/healthz";
const READY: &str = "/readyz";

async fn health(shared: &Shared, path: &str) -> Response<ProxyBody> {
    let (status, body) = if path == HEALTH {
        (StatusCode::OK, json!({"status": "up"}))
    } else {
        // The rules were compiled before the first connection was
        // accepted; what is left to check is the upstream: a connection,
        // and for an https:// upstream a TLS handshake with the proxy's
        // own trust roots, so that a certificate the requests would refuse
        // makes the proxy not ready.
        let authority = &shared.config.upstream_authority;
        let tls = shared.config.upstream_tls;
        let port = authority.port_u16().unwrap_or(if tls { 443 } else { 80 });
        let connect = async {
            let tcp = tokio::net::TcpStream::connect((authority.host(), port))
                .await
                .map_err(|_| "the upstream refused the connection")?;
            if !tls {
                return Ok(());
            }
            let host = authority
                .host()
                .trim_start_matches('[')
                .trim_end_matches(']');
            let name = rustls_pki_types::ServerName::try_from(host.to_owned())
                .map_err(|_| "the upstream's host is not a TLS server name")?;
            tokio_rustls::TlsConnector::from(Arc::clone(&shared.tls))
                .connect(name, tcp)
                .await
                .map_err(|_| "the TLS handshake with the upstream failed")?;
            Ok::<(), &'static str>(())
        };
        match tokio::time::timeout(shared.config.ready_timeout, connect).await {
            Ok(Ok(())) => (StatusCode::OK, json!({"status": "ready"})),
            Ok(Err(reason)) => (
                StatusCode::SERVICE_UNAVAILABLE,
                json!({"status": "not ready", "reason": reason}),
            ),
            Err(_) => (
                StatusCode::SERVICE_UNAVAILABLE,
                json!({"status": "not ready", "reason": "the upstream did not answer in time"}),
            ),
        }
    };
    let mut response = Response::new(full(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// One request's line in the access log: counts, ids and names only,
/// never a value, a path as sent or a body.
struct Access {
    metrics: Option<Arc<Metrics>>,
    id: u64,
    method: &'static str,
    endpoint: &'static str,
    start: Instant,
    masked: usize,
}

impl Access {
    fn log(&self, status: StatusCode, outcome: &str, vault: Option<&Vault>) {
        let tally = vault.map(Vault::tally).cloned().unwrap_or_default();
        if let Some(m) = &self.metrics {
            m.requests
                .get_or_create(&vec![
                    ("endpoint", self.endpoint.to_owned()),
                    ("status", status.as_u16().to_string()),
                ])
                .inc();
            for (rule, n) in &tally.redacted {
                m.redactions
                    .get_or_create(&vec![("rule", (*rule).to_owned())])
                    .inc_by(*n);
            }
            m.restored.inc_by(tally.restored);
        }
        tracing::info!(
            target: "stream_replace_proxy::access",
            request_id = self.id,
            method = self.method,
            endpoint = self.endpoint,
            status = status.as_u16(),
            duration_ms = self.start.elapsed().as_secs_f64() * 1000.0,
            masked = self.masked,
            restored = tally.restored,
            redactions = tally.redactions(),
            rules = %tally.rule_ids(),
            outcome,
        );
    }
}

// The method's name if it is a standard one: a client's own token is not
// logged.
fn method_name(method: &Method) -> &'static str {
    const KNOWN: &[Method] = &[
        Method::GET,
        Method::POST,
        Method::PUT,
        Method::DELETE,
        Method::PATCH,
        Method::HEAD,
        Method::OPTIONS,
    ];
    const NAMES: &[&str] = &["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"];
    KNOWN
        .iter()
        .position(|m| m == method)
        .map_or("other", |i| NAMES[i])
}

async fn handle(shared: &Shared, req: Request<Incoming>) -> Response<ProxyBody> {
    let path = req.uri().path();
    if req.method() == Method::GET && (path == HEALTH || path == READY) {
        return health(shared, path).await;
    }
    let mut access = Some(Access {
        metrics: shared.config.metrics.clone(),
        id: shared.next_id.fetch_add(1, Ordering::Relaxed),
        method: method_name(req.method()),
        endpoint: "refused",
        start: Instant::now(),
        masked: 0,
    });
    let Ok(permit) = Arc::clone(&shared.in_flight).try_acquire_owned() else {
        let status = StatusCode::SERVICE_UNAVAILABLE;
        if let Some(access) = &access {
            access.log(status, "busy", None);
        }
        return error_response(
            status,
            "the proxy is handling as many requests as it may; retry later",
        );
    };
    match forward(shared, req, permit, &mut access).await {
        Ok((response, vault)) => {
            // A streamed response logs its line when it ends.
            if let Some(access) = &access {
                access.log(response.status(), "ok", vault.as_ref());
            }
            response
        }
        Err((status, message)) => {
            if let Some(access) = &access {
                access.log(status, &message, None);
            }
            error_response(status, &message)
        }
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
    Full::new(body.into())
        .map_err(|e| match e {})
        .boxed_unsync()
}

// The request headers passed upstream: the ones that say who the caller
// is and what it sends, not hop-by-hop or encoding ones.
const FORWARDED_HEADERS: &[&str] = &[
    "authorization",
    "content-type",
    "accept",
    "user-agent",
    "x-api-key",
    "openai-organization",
    "openai-project",
    "openai-beta",
    "anthropic-version",
    "anthropic-beta",
];

// The response headers not passed back: hop-by-hop ones and those the
// rewrite makes wrong.
const DROPPED_RESPONSE_HEADERS: &[&str] = &[
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "upgrade",
];

type Refusal = (StatusCode, String);

fn refuse<T>(status: StatusCode, message: &str) -> Result<T, Refusal> {
    Err((status, message.to_owned()))
}

// Whether the request asks for token log-probabilities.
fn asks_logprobs(body: &Value) -> bool {
    let truthy = |v: Option<&Value>| {
        v.is_some_and(|v| !(v.is_null() || v == &Value::Bool(false) || v == &json!(0)))
    };
    truthy(body.get("logprobs"))
        || truthy(body.get("top_logprobs"))
        || body
            .get("include")
            .and_then(Value::as_array)
            .is_some_and(|a| {
                a.iter()
                    .any(|v| v.as_str().is_some_and(|s| s.contains("logprobs")))
            })
}

// The query string with every name and value masked.
fn mask_query(shared: &Shared, query: &str, vault: &mut Vault) -> Result<String, Refusal> {
    let mut out = Vec::new();
    for pair in query.split('&') {
        let (name, value) = match pair.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (pair, None),
        };
        let decode = |s: &str| {
            route::percent_decode(s, true).ok_or((
                StatusCode::BAD_REQUEST,
                "the query string does not parse".to_owned(),
            ))
        };
        let name = decode(name)?;
        let name = with_vault(vault, || shared.detectors.mask_lent(&name));
        let mut part = route::percent_encode(&name);
        if let Some(v) = value {
            let v = decode(v)?;
            let v = with_vault(vault, || shared.detectors.mask_lent(&v));
            part.push('=');
            part.push_str(&route::percent_encode(&v));
        }
        out.push(part);
    }
    Ok(out.join("&"))
}

// The name of a routed endpoint in logs and metrics: a fixed string, not
// the path as sent.
fn endpoint_name(segments: &[String], route: Route) -> &'static str {
    let rest: Vec<&str> = segments.iter().skip(1).map(String::as_str).collect();
    match (route, rest.as_slice()) {
        (Route::Scan(_), ["chat", "completions"]) => "/v1/chat/completions",
        (Route::Scan(_), ["completions"]) => "/v1/completions",
        (Route::Scan(_), ["responses"]) => "/v1/responses",
        (Route::Scan(_), ["responses", _]) => "/v1/responses/{id}",
        (Route::Scan(_), ["messages"]) => "/v1/messages",
        (Route::Scan(_), _) => "scanned",
        (Route::PassThrough, _) => "pass_through",
    }
}

type Forwarded = (Response<ProxyBody>, Option<Vault>);

async fn forward(
    shared: &Shared,
    req: Request<Incoming>,
    permit: OwnedSemaphorePermit,
    access: &mut Option<Access>,
) -> Result<Forwarded, Refusal> {
    let config = &shared.config;
    let (parts, body) = req.into_parts();
    let Ok(segments) = route::normalise(parts.uri.path()) else {
        return refuse(StatusCode::BAD_REQUEST, "the request path does not parse");
    };
    let Some(route) = route::route(&segments, &config.pass_through, &config.refused) else {
        return refuse(
            StatusCode::FORBIDDEN,
            "this path is not proxied: only the model endpoints and the pass-through list are",
        );
    };
    if let Some(access) = access.as_mut() {
        access.endpoint = endpoint_name(&segments, route);
    }
    // A path segment cannot carry a placeholder, so one that carries a
    // value is refused rather than sent.
    if segments.iter().any(|s| shared.detectors.finds(s)) {
        return refuse(
            StatusCode::BAD_REQUEST,
            "the URL path carries personal data; send it in the body",
        );
    }
    if parts
        .headers
        .get(header::CONTENT_ENCODING)
        .is_some_and(|v| v.as_bytes() != b"identity")
    {
        return refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "a compressed request body cannot be checked; send it uncompressed",
        );
    }
    let body = match tokio::time::timeout(
        config.idle_timeout,
        Limited::new(body, config.max_request_body).collect(),
    )
    .await
    {
        Err(_) => return refuse(StatusCode::REQUEST_TIMEOUT, "the request body was too slow"),
        Ok(Err(_)) => {
            return refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                "the request body is larger than the proxy's limit, or broke off",
            );
        }
        Ok(Ok(body)) => body.to_bytes(),
    };

    let mut vault = Vault::with_limit(config.max_values);
    let mut logprobs = false;
    // A block flag left by an earlier request on this thread is not this
    // one's.
    let _ = ruleset::take_request_block();
    let body = if body.is_empty() {
        body
    } else {
        let Ok(mut value) = serde_json::from_slice::<Value>(&body) else {
            // A body that is not JSON cannot be masked, so it is not sent.
            return refuse(
                StatusCode::BAD_REQUEST,
                "the request body is not JSON, so it cannot be checked",
            );
        };
        logprobs = asks_logprobs(&value);
        if logprobs && config.rules.logprobs == LogprobsPolicy::Refuse {
            return refuse(
                StatusCode::BAD_REQUEST,
                "this proxy does not pass token logprobs; send the request without them",
            );
        }
        if config.rules.request_masking {
            shared.detectors.mask_json(&mut value, &mut vault);
            Bytes::from(value.to_string())
        } else {
            // Masking is off, but a block rule still refuses the request:
            // a copy is scanned for it, into a vault that is thrown away,
            // and the body goes up as it came.
            let mut scratch = Vault::with_limit(config.max_values);
            shared.detectors.mask_json(&mut value, &mut scratch);
            body
        }
    };
    let query = match parts.uri.query() {
        Some(q) if !q.is_empty() && config.rules.request_masking => {
            Some(mask_query(shared, q, &mut vault)?)
        }
        Some(q) if !q.is_empty() => {
            // As for the body: scanned for block rules, sent as it came.
            let mut scratch = Vault::with_limit(config.max_values);
            mask_query(shared, q, &mut scratch)?;
            Some(q.to_owned())
        }
        _ => None,
    };
    if let Some(rule) = ruleset::take_request_block() {
        if let Some(m) = &config.metrics {
            m.rule_blocks
                .get_or_create(&vec![("rule", rule.to_owned())])
                .inc();
        }
        return Err((
            StatusCode::BAD_REQUEST,
            format!("the request holds a value the rule {rule} blocks, so it is not sent"),
        ));
    }
    if let Some(access) = access.as_mut() {
        access.masked = vault.len();
    }
    if vault.overflowed() {
        return refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            "the request carries more personal values than the proxy's limit",
        );
    }

    // The upstream URL: its scheme and authority are the configured ones,
    // whatever the request path says.
    let mut path = config.upstream_path.clone();
    for seg in &segments[1..] {
        path.push('/');
        path.push_str(&route::percent_encode(seg));
    }
    if let Some(q) = &query {
        path.push('?');
        path.push_str(q);
    }
    let Ok(uri) = Uri::builder()
        .scheme(if config.upstream_tls { "https" } else { "http" })
        .authority(config.upstream_authority.clone())
        .path_and_query(path)
        .build()
    else {
        return refuse(StatusCode::BAD_REQUEST, "the request path does not parse");
    };
    let mut upstream_req = Request::builder().method(parts.method.clone()).uri(uri);
    for name in FORWARDED_HEADERS {
        for value in parts.headers.get_all(*name) {
            upstream_req = upstream_req.header(*name, value);
        }
    }
    let Ok(upstream_req) = upstream_req
        .header(header::ACCEPT_ENCODING, "identity")
        .body(Full::new(body))
    else {
        return refuse(StatusCode::BAD_REQUEST, "the request cannot be forwarded");
    };
    let upstream = match tokio::time::timeout(
        config.first_byte_timeout,
        shared.client.request(upstream_req),
    )
    .await
    {
        Err(_) => {
            tracing::warn!(
                request_id = access.as_ref().map_or(0, |a| a.id),
                timeout = ?config.first_byte_timeout,
                "the upstream did not answer in time"
            );
            upstream_error(shared, "timeout");
            return refuse(
                StatusCode::GATEWAY_TIMEOUT,
                "the upstream did not answer in time",
            );
        }
        Ok(Err(e)) => {
            tracing::warn!(
                request_id = access.as_ref().map_or(0, |a| a.id),
                error = %e,
                "the upstream is unreachable"
            );
            upstream_error(shared, "unreachable");
            return refuse(StatusCode::BAD_GATEWAY, "the upstream is unreachable");
        }
        Ok(Ok(response)) => response,
    };

    let (mut parts, body) = upstream.into_parts();
    for name in DROPPED_RESPONSE_HEADERS {
        parts.headers.remove(*name);
    }
    let Route::Scan(api) = route else {
        let body = Cut {
            body,
            force: drain_deadline(shared),
            _permit: permit,
        };
        return Ok((Response::from_parts(parts, body.boxed_unsync()), None));
    };
    match parts.headers.remove(header::CONTENT_ENCODING) {
        None => {}
        Some(v) if v.as_bytes().eq_ignore_ascii_case(b"identity") => {}
        Some(_) => {
            return refuse(
                StatusCode::BAD_GATEWAY,
                "the upstream sent a compressed response, which the proxy cannot check",
            );
        }
    }
    if logprobs {
        parts
            .headers
            .insert(LOGPROBS_HEADER, HeaderValue::from_static("dropped"));
    }
    let is_sse = content_type_is(&parts.headers, "text/event-stream");
    if is_sse {
        let access = access.take();
        return match stream_response(shared, parts, body, vault, api, permit, access).await {
            Ok(response) => Ok((response, None)),
            Err((refusal, access)) => {
                if let Some(access) = access {
                    access.log(refusal.0, &refusal.1, None);
                }
                Err(refusal)
            }
        };
    }
    let status = parts.status;
    let bytes = match tokio::time::timeout(
        config.idle_timeout,
        Limited::new(body, config.max_response_body).collect(),
    )
    .await
    {
        Err(_) => return refuse(StatusCode::GATEWAY_TIMEOUT, "the upstream response stalled"),
        Ok(Err(_)) => {
            return refuse(
                StatusCode::BAD_GATEWAY,
                "the upstream response is larger than the proxy's limit, or broke off",
            );
        }
        Ok(Ok(b)) => b.to_bytes(),
    };
    let scanned = match shared.guard.json(&bytes, &mut vault) {
        Ok(scanned) => scanned,
        Err(GuardError::InvalidJson(_)) => {
            blocked(shared, "invalid_json");
            let status = if status.is_success() {
                StatusCode::BAD_GATEWAY
            } else {
                status
            };
            return Err((
                status,
                format!(
                    "the upstream answered {} with a body that is neither SSE nor JSON, so it is not forwarded",
                    parts.status.as_u16()
                ),
            ));
        }
        Err(e) => {
            count_failure(&config.metrics, &e);
            return Err((StatusCode::BAD_GATEWAY, e.to_string()));
        }
    };
    if scanned.logprobs_dropped {
        parts
            .headers
            .insert(LOGPROBS_HEADER, HeaderValue::from_static("dropped"));
    }
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Ok((Response::from_parts(parts, full(scanned.text)), Some(vault)))
}

fn content_type_is(headers: &HeaderMap, ty: &str) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.trim_start().to_ascii_lowercase().starts_with(ty))
}

// Reads the stream up to its first safe bytes before answering, so that a
// body the proxy cannot parse is a 502, not a broken stream.
async fn stream_response(
    shared: &Shared,
    parts: hyper::http::response::Parts,
    body: Incoming,
    vault: Vault,
    api: Api,
    permit: OwnedSemaphorePermit,
    access: Option<Access>,
) -> Result<Response<ProxyBody>, (Refusal, Option<Access>)> {
    let config = &shared.config;
    let hooks = ProxyHooks {
        vault,
        metrics: config.metrics.clone(),
        gauges: false,
        held: 0,
        idle: None,
        force: None,
        _permit: permit,
        access: access.map(|a| (a, parts.status)),
        outcome: "client_gone",
        since: None,
        handed: None,
    };
    let mut body = shared.guard.sse_with(body, api, hooks);
    let first = tokio::time::timeout(config.first_byte_timeout, body.first_output())
        .await
        .unwrap_or_else(|_| Err(GuardError::Upstream(FIRST_EVENT_LATE.to_owned())));
    if let Err(e) = first {
        count_failure(&config.metrics, &e);
        let access = body.hooks_mut().access.take().map(|(a, _)| a);
        if let GuardError::Upstream(what) = &e {
            tracing::warn!(
                request_id = access.as_ref().map_or(0, |a| a.id),
                error = %what,
                "the upstream stream failed before its first event"
            );
            upstream_error(
                shared,
                if what == FIRST_EVENT_LATE {
                    "timeout"
                } else {
                    "broke_off"
                },
            );
        }
        return Err(((StatusCode::BAD_GATEWAY, e.to_string()), access));
    }
    // From the first byte on: the idle timeout, the drain, the gauges.
    let held = body.held() as i64;
    let hooks = body.hooks_mut();
    if let Some(m) = &hooks.metrics {
        m.open_streams.inc();
        m.held_bytes.inc_by(held);
    }
    hooks.gauges = true;
    hooks.held = held;
    hooks.force = Some(drain_deadline(shared));
    hooks.idle = Some((
        config.idle_timeout,
        Box::pin(tokio::time::sleep(config.idle_timeout)),
    ));
    Ok(Response::from_parts(parts, body.boxed_unsync()))
}

/// What the proxy adds to a streamed response's `GuardedBody`: the
/// request's vault lent to the response rules, the idle timeout, the
/// drain deadline, a permit held while the response streams (it counts as
/// in flight), the metrics and the access log line.
struct ProxyHooks {
    vault: Vault,
    metrics: Option<Arc<Metrics>>,
    // Whether the open-streams and held-bytes gauges count this response.
    gauges: bool,
    // The bytes held as last counted in the metrics.
    held: i64,
    idle: Option<(Duration, Pin<Box<Sleep>>)>,
    force: Option<Deadline>,
    _permit: OwnedSemaphorePermit,
    // Logged when the body is dropped, with the outcome.
    access: Option<(Access, StatusCode)>,
    outcome: &'static str,
    // The arrival of the earliest upstream chunk whose bytes have not
    // gone out yet, and of the one whose output was just handed to the
    // server: the clock of the latency histogram.
    since: Option<Instant>,
    handed: Option<Instant>,
}

impl Hooks for ProxyHooks {
    fn scope(&mut self, call: &mut dyn FnMut()) {
        with_vault(&mut self.vault, call)
    }

    fn poll_stop(&mut self, cx: &mut Context<'_>) -> Poll<GuardError> {
        let Some(force) = &mut self.force else {
            return Poll::Pending;
        };
        force.as_mut().poll(cx).map(|()| GuardError::Stopped {
            code: "shutting_down",
            message:
                "the proxy is shutting down and the response did not end within its drain deadline"
                    .to_owned(),
        })
    }

    fn poll_idle(&mut self, cx: &mut Context<'_>) -> Poll<GuardError> {
        let Some((_, sleep)) = &mut self.idle else {
            return Poll::Pending;
        };
        sleep
            .as_mut()
            .poll(cx)
            .map(|()| GuardError::Upstream("the upstream went silent".to_owned()))
    }

    fn on_upstream_data(&mut self) {
        if let Some((idle, sleep)) = &mut self.idle {
            sleep.as_mut().reset(tokio::time::Instant::now() + *idle);
        }
        self.since.get_or_insert_with(Instant::now);
    }

    fn on_held(&mut self, held: usize) {
        if let (true, Some(m)) = (self.gauges, &self.metrics) {
            m.held_bytes.inc_by(held as i64 - self.held);
            self.held = held as i64;
        }
    }

    // The server asks for the next frame once it wrote the last one out:
    // that write ends the clock of the chunks it carried.
    fn on_poll(&mut self) {
        if let (Some(arrived), Some(m)) = (self.handed.take(), &self.metrics) {
            m.chunk_latency.observe(arrived.elapsed().as_secs_f64());
        }
    }

    fn on_frame(&mut self) {
        self.handed = self.since.take();
    }

    fn on_end(&mut self, error: Option<&GuardError>) {
        let Some(e) = error else {
            self.outcome = "ok";
            return;
        };
        self.outcome = e.code();
        count_failure(&self.metrics, e);
        if let GuardError::Upstream(what) = e {
            tracing::warn!(
                request_id = self.access.as_ref().map_or(0, |(a, _)| a.id),
                error = %what,
                "the upstream stream broke off"
            );
            if let Some(m) = &self.metrics {
                m.upstream_errors
                    .get_or_create(&vec![("kind", "broke_off".to_owned())])
                    .inc();
            }
        }
    }
}

impl Drop for ProxyHooks {
    fn drop(&mut self) {
        if let (true, Some(m)) = (self.gauges, &self.metrics) {
            m.open_streams.dec();
            m.held_bytes.dec_by(self.held);
        }
        if let Some((access, status)) = self.access.take() {
            access.log(status, self.outcome, Some(&self.vault));
        }
    }
}

const FIRST_EVENT_LATE: &str = "no event in time";

type Deadline = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Completes when the drain deadline has passed.
fn drain_deadline(shared: &Shared) -> Deadline {
    let mut force = shared.force.clone();
    Box::pin(async move {
        // Only an explicit end of the drain ends a response.
        if force.wait_for(|f| *f).await.is_err() {
            std::future::pending::<()>().await;
        }
    })
}

/// A pass-through body that fails when the drain deadline passes: the
/// server then closes the connection without ending the body, so the
/// client sees a cut response, never one that looks complete. (Its format
/// is the upstream's, so there is no error event to write into it.) It
/// holds its request's permit until it ends: a pass-through response
/// counts as in flight, like a scanned stream.
struct Cut<B> {
    body: B,
    force: Deadline,
    _permit: OwnedSemaphorePermit,
}

impl<B> Body for Cut<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        if self.force.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Some(Err(BoxError::from(
                "the proxy's drain deadline passed",
            ))));
        }
        Pin::new(&mut self.body).poll_frame(cx).map_err(Into::into)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

fn upstream_error(shared: &Shared, kind: &'static str) {
    if let Some(m) = &shared.config.metrics {
        m.upstream_errors
            .get_or_create(&vec![("kind", kind.to_owned())])
            .inc();
    }
}

fn blocked(shared: &Shared, code: &'static str) {
    if let Some(m) = &shared.config.metrics {
        m.failed
            .get_or_create(&vec![("code", code.to_owned())])
            .inc();
    }
}

// Counts a response ended closed, and the rule that ended it if one did.
fn count_failure(metrics: &Option<Arc<Metrics>>, e: &GuardError) {
    let Some(m) = metrics else {
        return;
    };
    m.failed
        .get_or_create(&vec![("code", e.code().to_owned())])
        .inc();
    if let GuardError::Blocked { rule, .. } = e {
        m.rule_blocks
            .get_or_create(&vec![("rule", rule.clone())])
            .inc();
    }
}

/// Serves `metrics` in the Prometheus text format on `listener`, at any
/// path, until the task is dropped: put it on an address of its own, not
/// the proxy's.
///
/// # Example
///
/// ```no_run
/// use stream_replace_proxy::{serve, serve_metrics, Config, Metrics};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let metrics = Metrics::new();
/// let mut config = Config::new("http://127.0.0.1:18799/v1")?;
/// config.metrics = Some(metrics.clone());
/// let scrape = tokio::net::TcpListener::bind("127.0.0.1:14090").await?;
/// tokio::spawn(serve_metrics(scrape, metrics));
/// serve(tokio::net::TcpListener::bind("127.0.0.1:14000").await?, config).await?;
/// # Ok(())
/// # }
/// ```
pub async fn serve_metrics(listener: TcpListener, metrics: Arc<Metrics>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let metrics = Arc::clone(&metrics);
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |_req: Request<Incoming>| {
                let text = metrics.render();
                async move {
                    let mut response = Response::new(Full::new(Bytes::from(text)));
                    response.headers_mut().insert(
                        header::CONTENT_TYPE,
                        HeaderValue::from_static(
                            "application/openmetrics-text; version=1.0.0; charset=utf-8",
                        ),
                    );
                    Ok::<_, Infallible>(response)
                }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(Duration::from_secs(10))
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
