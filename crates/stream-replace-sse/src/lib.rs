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
//! Nothing here is async: call it from any runtime's read loop.

#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![warn(missing_debug_implementations)]

mod error;
mod format;
mod replacer;
mod sse;

pub use crate::error::{Error, ErrorKind, PointerError};
pub use crate::format::{Format, Pointers};
pub use crate::replacer::{Options, SseReplacer};
pub use crate::sse::{Event, Parser};
