//! Exact find-and-replace over text that arrives in chunks.
//!
//! LLM gateways, proxies, guardrails and log redactors receive text in
//! pieces (model tokens, SSE events, socket reads) and must replace or block
//! secrets, PII and special tokens before any byte reaches the client. This
//! crate compiles a list of rules (literals and regexes, each with a
//! replacement) into [`Rules`], and runs one [`Replacer`] per stream.
//!
//! The contract, for every rule set and every input:
//!
//! * **Exact.** However the input is split into chunks (empty chunks, 1-byte
//!   chunks, cuts inside UTF-8 characters included), the concatenated output
//!   equals [`Rules::replace_all`] on the whole input, byte for byte: the
//!   leftmost match wins, the earlier rule wins a tie, matches do not
//!   overlap, each regex keeps its own greedy or lazy preference, and `\b`,
//!   `$`, empty matches behave as in the `regex` crate.
//! * **Decided before released.** A match is replaced only once no
//!   continuation of the stream can change it.
//! * **Minimal hold-back.** After each feed, everything before the earliest
//!   position where a match could still start is emitted; the point is
//!   derived from the automaton, not from a guessed window.
//! * **Linear and bounded.** Each byte is stepped a bounded number of times
//!   between two matches, whatever the chunking; held text is capped by
//!   [`Config::max_held`], failing closed by default.
//!
//! # Example
//!
//! ```
//! use stream_replace::Rules;
//!
//! let rules = Rules::builder()
//!     .regex(r"[\w.+-]+@[\w-]+\.\w+", "[EMAIL]")
//!     .regex(r"\b\d{3}-\d{2}-\d{4}\b", "[SSN]")
//!     .regex(r"<think>[\s\S]*?</think>", "")
//!     .build()?;
//!
//! let mut r = rules.replacer();
//! let mut seen = String::new();
//! for chunk in ["<thi", "nk>hmm</th", "ink>Write to ann@", "example.org or call", " 123-45-6789."] {
//!     seen += &r.feed(chunk)?;
//! }
//! seen += &r.flush()?;
//! assert_eq!(seen, "Write to [EMAIL] or call [SSN].");
//! assert_eq!(seen, rules.replace_all("<think>hmm</think>Write to ann@example.org or call 123-45-6789."));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Overview
//!
//! * [`Rules`] / [`RulesBuilder`]: the compiled, shareable rule set
//!   (`Send + Sync`, an `Arc` inside), with [`Rules::replace_all`] as the
//!   whole-input reference.
//! * [`Pattern`] and [`Replacement`]: a rule's two halves; replacements are
//!   literal text, templates (`$1`, `${name}`, `$$`) or closures receiving
//!   the decided match's [`Captures`].
//! * [`Replacer`]: one stream, with [`feed`](Replacer::feed),
//!   [`flush`](Replacer::flush), [`reset`](Replacer::reset), byte variants
//!   and allocation-free `_into` variants.
//! * [`Config`] and [`HeldLimit`]: the cap on held bytes and what happens
//!   there; size limits; [`DfaKind`], the automaton the streams step (a
//!   dense DFA shared by every stream, or a lazy one with pooled caches).
//! * Adapters: [`wrap`] and [`wrap_bytes`] over an iterator of chunks,
//!   [`ReplaceWriter`] and [`ReplaceReader`] for `std::io`, and
//!   `wrap_stream` and `wrap_stream_bytes` over a `futures_core::Stream`
//!   (feature `stream`).
//! * The guard layer ([`guard`]): a [`Rule`] names itself, may
//!   [block](Action::Block) the stream (a [`StreamError`] carrying the
//!   [`Block`], with the safe text before it released) and may carry a
//!   validator that rejects a match (the text is then scanned again, exactly
//!   as the whole-input reference defines); allowlists per rule set and per
//!   stream; [`Trigger`]s and [`Counters`] for audit and metrics;
//!   [`Events`], a stream seen as numbered pieces for UIs; and
//!   [`Rules::evaluate`], the copy of record of a whole text.
//! * [`validate`]: Luhn, US SSN and IBAN checks on matched text; `pack`
//!   (feature `pii`): ready rules for PII and secrets that use them.
//!
//! Our [`Replacer`] is a stream, not the `regex` crate's `Replacer` trait.
//!
//! # Crate features
//!
//! * `stream`: `wrap_stream`, an adapter over `futures_core::Stream`
//!   (adds a dependency on `futures-core`).
//! * `pii`: the `pack` module, ready rules for PII and secrets (adds no
//!   dependency).

#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![warn(missing_debug_implementations)]

mod adapter;
mod config;
mod engine;
mod error;
mod events;
pub mod guard;
#[cfg(feature = "pii")]
pub mod pack;
mod replacement;
mod replacer;
mod rules;
pub mod validate;

pub use crate::adapter::io::{ReplaceReader, ReplaceWriter};
pub use crate::adapter::iter::{Wrap, WrapBytes, wrap, wrap_bytes};
#[cfg(feature = "stream")]
pub use crate::adapter::stream::{WrapStream, WrapStreamBytes, wrap_stream, wrap_stream_bytes};
pub use crate::config::{Config, DfaKind, HeldLimit};
pub use crate::error::{Block, Error, ErrorKind, StreamError, StreamErrorKind};
pub use crate::events::{Event, Events};
pub use crate::guard::{Counters, EvaluateConfig, Evaluation, Trigger, TriggerRecording};
pub use crate::replacement::{Captures, Match, Replacement};
pub use crate::replacer::Replacer;
pub use crate::rules::{Action, Rule};
pub use crate::rules::{Pattern, Rules, RulesBuilder};

// The README's Rust blocks are compiled and run as doctests of this crate.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;
