//! Exact streaming find-and-replace inside the text fields of Server-Sent
//! Events: OpenAI chat completions, Anthropic messages, or the string at a
//! JSON pointer.
//!
//! A model's reply does not reach a gateway as text: it arrives as SSE
//! events whose JSON carries the text in fragments (`delta.content`,
//! `delta.tool_calls[j].function.arguments`, `text_delta.text`, …). A value
//! cut across two events is in neither; redacting each event alone leaks
//! it, and redacting the raw bytes breaks the JSON. [`SseReplacer`] parses
//! the events as they arrive, runs one
//! [`stream_replace::Replacer`] per field (per choice, tool call or content
//! block), and rewrites each fragment with the text that is safe now, so
//! the joined text of each field is exactly what
//! [`Rules::replace_all`](stream_replace::Rules::replace_all) gives for the
//! whole of it, and every event stays valid JSON with its other fields as
//! they were.
//!
//! # Example
//!
//! ```
//! use stream_replace::Rules;
//! use stream_replace_sse::{Format, SseReplacer};
//!
//! let rules = Rules::builder().regex(r"\b\d{3}-\d{2}-\d{4}\b", "[SSN]").build()?;
//! let mut sse = SseReplacer::new(&rules, Format::AnthropicMessages);
//! let upstream = concat!(
//!     "event: content_block_delta\n",
//!     "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"SSN 123-4\"}}\n\n",
//!     "event: content_block_delta\n",
//!     "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"5-6789.\"}}\n\n",
//!     "event: content_block_stop\n",
//!     "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
//! );
//! let mut out = Vec::new();
//! for read in upstream.as_bytes().chunks(7) {
//!     sse.feed(read, &mut out)?;
//! }
//! sse.finish(&mut out)?;
//! let out = String::from_utf8(out)?;
//! assert!(out.contains(r#""text":"SSN ""#));
//! assert!(out.contains(r#""text":"[SSN].""#));
//! assert!(!out.contains("6789"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Overview
//!
//! * [`SseReplacer`]: one response stream; bytes in, safe bytes out
//!   ([`feed`](SseReplacer::feed), [`finish`](SseReplacer::finish)), or
//!   parsed events in and out ([`feed_event`](SseReplacer::feed_event)).
//!   Its docs say how fields end, where the rest of a field goes, and how a
//!   stream fails closed.
//! * [`Format`]: which fields are text: [`Format::OpenAiChat`],
//!   [`Format::AnthropicMessages`], or [`Format::pointers`].
//! * [`Options`]: forward or hold events whose fragments came out empty.
//! * [`Parser`] and [`Event`]: the incremental SSE parser underneath, for
//!   other uses.
//! * [`Error`], [`ErrorKind`], [`PointerError`].
//!
//! Nothing of the above is async: call it from any runtime's read loop.
#![doc = r##"
# The response layer

A gateway that holds an `http_body::Body` of a model's reply, or a
`tower` service that answers with one, gets the whole response path of
`stream-replace-proxy` without the proxy, fail-closed:

* [`ResponseGuard`]: the rules and [`Limits`], compiled once.
  [`sse`](ResponseGuard::sse) wraps an SSE body in a [`GuardedBody`];
  [`json`](ResponseGuard::json) scans a whole JSON body.
* Scan by default, exempt by name: every string of every event (and
  every object key) is scanned, but the values of structural keys such
  as `id`, `index`, `model` or `finish_reason`; one exact stream per
  JSON path with its indices (per choice, tool call, content block or
  output item), so a value split across events or bytes is replaced
  whole; token `logprobs` are dropped.
* Fail closed: an SSE field other than `data`, `event`, `id`, `retry`,
  data that is not JSON, a block rule's match, or a response past a
  bound ends the stream with a [`GuardError`] written as an error event
  of the [`Api`]'s own shape (OpenAI's `{"error":...}`, Anthropic's
  `event: error`).
* [`GuardLayer`]: a `tower` layer; SSE responses stream through a
  [`GuardedBody`], other responses are read whole and their JSON
  scanned, anything else (or a compressed body) becomes a 502.
* [`Hooks`]: what a server adds to each body (a scope for its
  replacement closures, such as a request's placeholder map; deadlines;
  counters). `stream-replace-proxy` is built on these.

```
# #[tokio::main(flavor = "current_thread")]
# async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
use http_body_util::{BodyExt, Full};
use stream_replace::Rules;
use stream_replace_sse::{Api, ResponseGuard};

let rules = Rules::builder().regex(r"\b\d{3}-\d{2}-\d{4}\b", "[SSN]").build()?;
let guard = ResponseGuard::new(&rules);
let upstream = Full::new(bytes::Bytes::from(concat!(
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"SSN 931-2\"}}]}\n\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"2-4410.\"}}]}\n\n",
    "data: [DONE]\n\n",
)));
let out = guard.sse(upstream, Api::OpenAi).collect().await?.to_bytes();
let out = String::from_utf8(out.to_vec())?;
assert!(out.contains("[SSN]") && !out.contains("4410"));
# Ok(())
# }
```
"##]
#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![warn(missing_debug_implementations)]

mod body;
mod error;
mod format;
mod layer;
mod replacer;
mod scan;
mod sse;

pub use crate::body::{GuardedBody, Hooks};

pub use crate::error::{Error, ErrorKind, PointerError};
pub use crate::format::{Format, Pointers};
pub use crate::layer::{GuardLayer, Guarded, GuardedResponseBody, JsonBody, ResponseGuard};
pub use crate::replacer::{Options, SseReplacer};
pub use crate::scan::{Api, GuardError, Limits};
pub use crate::sse::{Event, Parser};
