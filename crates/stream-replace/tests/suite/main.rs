//! The integration test suite of `stream-replace`.
//!
//! * `cases`: the shared case suite in `testdata/*.toml`, each case run on
//!   the whole input, through every two-part split, one byte and one
//!   character at a time, and through random splits, with `&str` and byte
//!   input and each feeding method.
//! * `differential`: property tests against an independent oracle
//!   (`regex_automata::meta::Regex::new_many` and `find_iter`).
//! * `holdback`: what a stream releases and holds after each feed.
//! * `errors`, `limits`, `closures`, `sharing`: building errors, the cap on
//!   held bytes, replacement closures, and `Rules` shared across threads.
//!
//! * `keyed_hash`: HMAC-SHA256 placeholders against RFC 4231's vectors,
//!   stable across streams and rule sets, beside per-stream counters.
//! * `literal`: the literal matcher's regressions, `(?i)` routing, big sets.
//! * `adapters`: edges of the iterator, `std::io` and stream adapters.
//! * `api`: promises of the public API beyond matching: what build errors
//!   say, `Replacer` and `Captures` semantics, per-stream closure state,
//!   adapters over sources that are not `Unpin`.
//! * `pack` (feature `pii`): every rule of the PII and secrets pack on
//!   positive and negative examples, against an oracle and through splits.
//! * `secrets` (feature `pii`): the secrets pack with the PII pack, every
//!   rule on positive and negative examples against an oracle and through
//!   splits, and recall on generated samples of every documented format.
//! * `repeats`: bounded repetitions (a live candidate per start), mixed
//!   with other rules, against the oracle and the hold-back property, with
//!   each fast path on and off.
//! * `imports`: the crate's modules import each other without cycles.
//! * `invariance`: the `Replacer` and every adapter checked with
//!   `chunk-invariance` against `replace_all`, over every split of short
//!   inputs and bounded or random splits of longer ones.
//!
//! `oracle` and `run` are the shared pieces: the reference replacement
//! computed with the `regex` crates, and stream drivers that check the
//! stream's own invariants (`offset`, `held`) on every call.

mod adapters;
mod api;
mod cases;
mod closures;
mod differential;
mod errors;
mod guard;
mod holdback;
mod imports;
mod invariance;
mod keyed_hash;
mod limits;
mod literal;
mod oracle;
#[cfg(feature = "pii")]
mod pack;
mod repeats;
mod run;
#[cfg(feature = "pii")]
mod secrets;
mod sharing;
