//! An OpenAI-compatible redacting proxy built on `stream-replace`.
//!
//! The proxy sits between an application and an OpenAI-compatible model
//! server and keeps personal data away from the model while the application
//! still sees its own values:
//!
//! * **Request.** Every string of a JSON request body (messages, system
//!   prompts, tool descriptions, keys it has never heard of) is scanned by
//!   the [`DETECTORS`]; each value found is replaced by a placeholder such
//!   as `[EMAIL_1]`, kept in a per-request [`Vault`]. The upstream never sees
//!   the values.
//! * **Response.** For `/v1/chat/completions`, streamed (SSE) or not, every
//!   string field of each choice's delta or message runs through
//!   [`response_rules`] (compiled once for all requests; each request's
//!   [`Vault`] is lent to them with [`with_vault`]): the request's
//!   placeholders are restored to their values, and any other value the detectors find (one the model made up
//!   or was given elsewhere) is redacted, exactly, however the upstream
//!   splits it across events. Each event goes out as soon as its text is
//!   safe, so the time to the first event stays the upstream's.
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
mod proxy;
mod route;
mod scan;

pub use crate::detect::{detectors, response_rules, with_vault, Vault};
pub use crate::proxy::{serve, Config, LOGPROBS_HEADER};
