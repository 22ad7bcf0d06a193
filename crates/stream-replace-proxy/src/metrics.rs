//! The proxy's counters, in the Prometheus text format.

use std::fmt;
use std::sync::Arc;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

type Labels = Vec<(&'static str, String)>;

/// The proxy's metrics: set one on [`Config::metrics`](crate::Config::metrics)
/// and serve [`render`](Metrics::render) where a Prometheus server scrapes
/// (the program does on `metrics_listen`).
///
/// Every label is a fixed name (an endpoint, a status, a rule id, an error
/// code), never text from a request or a response.
///
/// # Example
///
/// ```
/// use stream_replace_proxy::Metrics;
///
/// let metrics = Metrics::new();
/// assert!(metrics.render().contains("stream_replace_proxy_open_streams 0"));
/// ```
pub struct Metrics {
    registry: Registry,
    pub(crate) requests: Family<Labels, Counter>,
    pub(crate) upstream_errors: Family<Labels, Counter>,
    pub(crate) redactions: Family<Labels, Counter>,
    pub(crate) restored: Counter,
    pub(crate) failed: Family<Labels, Counter>,
    pub(crate) open_streams: Gauge,
    pub(crate) held_bytes: Gauge,
    pub(crate) chunk_latency: Histogram,
    pub(crate) rule_blocks: Family<Labels, Counter>,
}

impl fmt::Debug for Metrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics::build()
    }
}

impl Metrics {
    /// A fresh set of metrics, all at zero, in an `Arc` to share with the
    /// proxy.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_proxy::{Config, Metrics};
    ///
    /// let mut config = Config::new("http://127.0.0.1:18799/v1")?;
    /// config.metrics = Some(Metrics::new());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new() -> Arc<Metrics> {
        Arc::new(Metrics::build())
    }

    fn build() -> Metrics {
        let mut registry = Registry::with_prefix("stream_replace_proxy");
        let m = Metrics {
            requests: Family::default(),
            upstream_errors: Family::default(),
            redactions: Family::default(),
            restored: Counter::default(),
            failed: Family::default(),
            open_streams: Gauge::default(),
            held_bytes: Gauge::default(),
            // 1 µs to about 16 s.
            chunk_latency: Histogram::new(exponential_buckets(1e-6, 4.0, 13)),
            rule_blocks: Family::default(),
            registry: Registry::default(),
        };
        registry.register(
            "requests",
            "Requests answered, by endpoint (the route's name) and status",
            m.requests.clone(),
        );
        registry.register(
            "upstream_errors",
            "Upstream failures, by kind (unreachable, timeout, broke_off)",
            m.upstream_errors.clone(),
        );
        registry.register(
            "redactions",
            "Values redacted in responses, by rule id",
            m.redactions.clone(),
        );
        registry.register(
            "restored",
            "Placeholders restored to the request's values in responses",
            m.restored.clone(),
        );
        registry.register(
            "blocked",
            "Responses ended closed (an error event or a 502), by code (held_limit, invalid_framing, shutting_down, ...)",
            m.failed.clone(),
        );
        registry.register(
            "open_streams",
            "Scanned streams being sent",
            m.open_streams.clone(),
        );
        registry.register(
            "held_bytes",
            "Bytes held back by the scanned streams being sent",
            m.held_bytes.clone(),
        );
        registry.register(
            "rule_blocks",
            "Requests refused and responses ended by a block rule, by rule id",
            m.rule_blocks.clone(),
        );
        registry.register(
            "chunk_latency_seconds",
            "Time a scanned stream adds to each upstream chunk: from its arrival to the write to the client of the bytes it released (scanning, text held back while a match may be in progress, and the write)",
            m.chunk_latency.clone(),
        );
        Metrics { registry, ..m }
    }

    /// The metrics in the Prometheus text exposition format.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_proxy::Metrics;
    ///
    /// let text = Metrics::new().render();
    /// assert!(text.contains("# TYPE stream_replace_proxy_requests counter"));
    /// assert!(text.ends_with("# EOF\n"));
    /// ```
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing to a String does not fail.
        let _ = encode(&mut out, &self.registry);
        out
    }
}
