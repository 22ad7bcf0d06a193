//! An OpenAI-compatible redacting proxy built on `stream-replace`.
//!
//! The proxy sits between an application and an OpenAI-compatible model
//! server and keeps personal data away from the model while the application
//! still sees its own values:
//!
//! * **Routing.** The path is percent-decoded and normalised before it is
//!   routed: the model endpoints (`/v1/chat/completions`,
//!   `/v1/completions`, `/v1/responses`, `/v1/messages`) are scanned, a
//!   short pass-through list (`/v1/models`, `/v1/embeddings`) is forwarded
//!   as it is, every other path is refused (403), and so is a path that
//!   does not parse (400). The upstream's host and port are the
//!   configured ones, whatever the path says.
//! * **Request.** Every string, object key and number of a JSON request
//!   body, and the query string, is scanned by the [`detectors`] (the
//!   `pii` pack of `stream-replace`); each value found is replaced by a
//!   placeholder such as `[EMAIL_1]`, kept in a per-request [`Vault`]. The
//!   upstream never sees the values.
//! * **Response.** Every string of a model endpoint's JSON or SSE body is
//!   scanned, except the values of a fixed list of structural keys, by
//!   [`response_rules`] (compiled once for all requests; each request's
//!   [`Vault`] is lent to them with [`with_vault`]): the request's
//!   placeholders are restored to their values, and any other value the
//!   detectors find is redacted, exactly, however the upstream splits it
//!   across events (one stream per JSON path with its indices). Token
//!   `logprobs` are dropped. What the proxy cannot parse (unknown SSE
//!   fields, data that is not JSON, a compressed body) ends the response
//!   with an error: a 502 before the first byte, an error event after.
//!   That path is `stream-replace-sse`'s response layer,
//!   re-exported here ([`ResponseGuard`], [`GuardedBody`], [`GuardLayer`],
//!   [`Hooks`]); the proxy plugs its vault, deadlines, metrics and access
//!   log into it as [`Hooks`], and a gateway can embed the same path with
//!   [`RuleSet::response_guard`].
//! * **Rules.** The detectors and the request-side policies are a
//!   [`RuleSet`] on the [`Config`]: the built-in `pii` set by default, or
//!   the packs, extra rules, allowlist, request masking and logprobs
//!   policy of a settings file's `[rules]` table ([`Settings`]), compiled
//!   once at start.
//! * **Bounds.** Every resource has a limit and every wait a timeout (see
//!   [`Config`]); an error accepting a connection does not stop the
//!   server.
//!
//! # Example
//!
//! ```no_run
//! use stream_replace_proxy::{serve, Config};
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let listener = tokio::net::TcpListener::bind("127.0.0.1:14000").await?;
//!     serve(listener, Config::new("http://127.0.0.1:18799/v1")?).await?;
//!     Ok(())
//! }
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![warn(missing_debug_implementations)]

mod detect;
mod metrics;
mod proxy;
mod route;
mod ruleset;
mod settings;

pub use crate::detect::{Vault, detectors, response_rules, with_vault};
pub use crate::metrics::Metrics;
pub use crate::proxy::{Config, LOGPROBS_HEADER, serve, serve_metrics, serve_with_shutdown};
pub use crate::ruleset::{LogprobsPolicy, RuleSet};
pub use crate::settings::{Settings, SettingsError};
/// The response layer this proxy is built on, from `stream-replace-sse`:
/// see [`RuleSet::response_guard`] for a guard with the proxy's rules.
pub use stream_replace_sse::{
    Api, GuardError, GuardLayer, Guarded, GuardedBody, GuardedResponseBody, Hooks, Limits,
    ResponseGuard,
};
