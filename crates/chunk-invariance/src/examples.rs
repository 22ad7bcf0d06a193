//! A worked comparison: three streaming redactors, one right and two
//! wrong, and what the assertion says about each.
//!
//! Each hides an API key, `sk-` followed by 8 ASCII letters or digits,
//! behind [`MASK`]. [`redact`] does it to a whole input and is the
//! reference. The three stream filters differ in what they do at a chunk
//! boundary.
//!
//! # Each chunk alone: wrong
//!
//! [`redact_each_chunk`] redacts every chunk on its own. A key cut across
//! two chunks matches in neither, and leaks.
//!
//! ```should_panic
//! use chunk_invariance::assert_chunk_invariant;
//! use chunk_invariance::examples::{redact, redact_each_chunk};
//!
//! // Panics:
//! //   split:    ["use s", "k-AbCd1234 now"] (cut at 5)
//! //   whole:    "use [KEY] now"
//! //   streamed: "use sk-AbCd1234 now"
//! assert_chunk_invariant(redact_each_chunk, redact, "use sk-AbCd1234 now");
//! ```
//!
//! # A fixed carry-over: wrong
//!
//! [`redact_with_carry`] prepends the last 10 bytes of the previous chunk
//! (one less than a key) to the next, redacts that, and drops the carried
//! part again. The match now fires, but the start of the key was already
//! emitted with the previous chunk, and dropping the carry cuts into the
//! mask.
//!
//! ```should_panic
//! use chunk_invariance::assert_chunk_invariant;
//! use chunk_invariance::examples::{redact, redact_with_carry};
//!
//! // Panics:
//! //   split:    ["use s", "k-AbCd1234 now"] (cut at 5)
//! //   whole:    "use [KEY] now"
//! //   streamed: "use sKEY] now"
//! assert_chunk_invariant(redact_with_carry, redact, "use sk-AbCd1234 now");
//! ```
//!
//! # Holding back: right
//!
//! [`redact_holding_back`] (built on [`HoldBack`]) emits only text that
//! no later chunk can change: it holds back a tail that could still be
//! the start of a key, and lets it go when the next chunk settles it or
//! the stream ends.
//!
//! ```
//! use chunk_invariance::{assert_chunk_invariant, assert_chunk_invariant_with, Splits};
//! use chunk_invariance::examples::{redact, redact_holding_back};
//!
//! assert_chunk_invariant(redact_holding_back, redact, "use sk-AbCd1234 now");
//! // And for every split of a shorter input, and up to four parts of a longer one.
//! assert_chunk_invariant_with(redact_holding_back, redact, "sk-sk-AbCd12345", Splits::All);
//! assert_chunk_invariant_with(redact_holding_back, redact, "a sk-AbCd1234sk-EfGh5678 b", Splits::UpTo(4));
//! ```

use std::iter::FusedIterator;

/// What a key is replaced with.
///
/// # Example
///
/// ```
/// use chunk_invariance::examples::{redact, MASK};
///
/// assert_eq!(redact("use sk-AbCd1234 now"), format!("use {MASK} now"));
/// ```
pub const MASK: &str = "[KEY]";

const PREFIX: &[u8] = b"sk-";
/// `sk-` and 8 letters or digits.
const KEY_LEN: usize = 11;

/// Whether a key starts at the start of `bytes`.
fn key_at(bytes: &[u8]) -> bool {
    bytes.len() >= KEY_LEN
        && bytes.starts_with(PREFIX)
        && bytes[PREFIX.len()..KEY_LEN]
            .iter()
            .all(u8::is_ascii_alphanumeric)
}

/// Whether `bytes`, shorter than a key, could still grow into one.
fn could_become_key(bytes: &[u8]) -> bool {
    bytes.len() < KEY_LEN
        && bytes.iter().enumerate().all(|(i, b)| match PREFIX.get(i) {
            Some(p) => b == p,
            None => b.is_ascii_alphanumeric(),
        })
}

/// Redacts every key in the whole input: the reference the stream
/// filters are checked against.
///
/// Keys are found left to right without overlap, like a regex search for
/// `sk-[A-Za-z0-9]{8}`; letters or digits after the eighth stay.
///
/// # Example
///
/// ```
/// use chunk_invariance::examples::redact;
///
/// assert_eq!(redact("use sk-AbCd1234 now"), "use [KEY] now");
/// assert_eq!(redact("sk-sk-AbCd12345"), "sk-[KEY]5");
/// ```
pub fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let done = scan(text, &mut out, true);
    debug_assert_eq!(done, text.len());
    out
}

/// Redacts keys from the start of `text` into `out`, and returns how far
/// it got. Unless `at_end`, it stops where a key could still start, as
/// more text may complete it.
fn scan(text: &str, out: &mut String, at_end: bool) -> usize {
    let bytes = text.as_bytes();
    let (mut i, mut copied) = (0, 0);
    while i < bytes.len() {
        if key_at(&bytes[i..]) {
            // Keys are ASCII, so `i` and `i + KEY_LEN` are char boundaries.
            out.push_str(&text[copied..i]);
            out.push_str(MASK);
            i += KEY_LEN;
            copied = i;
        } else if !at_end && could_become_key(&bytes[i..]) {
            break;
        } else {
            i += 1;
        }
    }
    out.push_str(&text[copied..i]);
    i
}

/// The first wrong design: redacts each chunk alone.
///
/// # Example
///
/// ```
/// use chunk_invariance::examples::redact_each_chunk;
///
/// let out: String = redact_each_chunk(["use sk-AbCd1234", " now"]).collect();
/// assert_eq!(out, "use [KEY] now");
/// // A key cut across chunks leaks.
/// let out: String = redact_each_chunk(["use s", "k-AbCd1234 now"]).collect();
/// assert_eq!(out, "use sk-AbCd1234 now");
/// ```
pub fn redact_each_chunk<'a>(
    chunks: impl IntoIterator<Item = &'a str>,
) -> impl Iterator<Item = String> {
    chunks.into_iter().map(redact)
}

/// The second wrong design: prepends a fixed carry-over from the
/// previous chunk, redacts, then drops the carried part.
///
/// # Example
///
/// ```
/// use chunk_invariance::examples::redact_with_carry;
///
/// // The key is caught, but its start was already sent.
/// let out: String = redact_with_carry(["use s", "k-AbCd1234 now"]).collect();
/// assert_eq!(out, "use sKEY] now");
/// ```
pub fn redact_with_carry<'a, I>(chunks: I) -> impl Iterator<Item = String> + use<'a, I>
where
    I: IntoIterator<Item = &'a str>,
{
    let mut carry = String::new();
    chunks.into_iter().map(move |chunk| {
        let joined = redact(&format!("{carry}{chunk}"));
        let mut from = carry.len().min(joined.len());
        while !joined.is_char_boundary(from) {
            from += 1;
        }
        let mut keep = chunk.len().saturating_sub(KEY_LEN - 1);
        while !chunk.is_char_boundary(keep) {
            keep += 1;
        }
        carry = chunk[keep..].to_owned();
        joined[from..].to_owned()
    })
}

/// The right design as an iterator adapter over [`HoldBack`].
///
/// # Example
///
/// ```
/// use chunk_invariance::examples::redact_holding_back;
///
/// let out: String = redact_holding_back(["use s", "k-AbCd12", "34 now"]).collect();
/// assert_eq!(out, "use [KEY] now");
/// ```
pub fn redact_holding_back<'a, I>(chunks: I) -> HoldingBack<I::IntoIter>
where
    I: IntoIterator<Item = &'a str>,
{
    HoldingBack {
        chunks: chunks.into_iter(),
        redactor: Some(HoldBack::new()),
    }
}

/// The iterator of [`redact_holding_back`]: one output chunk per input
/// chunk, and a last one with what was held back.
///
/// # Example
///
/// ```
/// use chunk_invariance::examples::redact_holding_back;
///
/// let out: Vec<String> = redact_holding_back(["use s", "k-AbCd1234 now"]).collect();
/// assert_eq!(out.concat(), "use [KEY] now");
/// ```
#[derive(Debug)]
pub struct HoldingBack<I> {
    chunks: I,
    /// `None` once flushed.
    redactor: Option<HoldBack>,
}

impl<'a, I: Iterator<Item = &'a str>> Iterator for HoldingBack<I> {
    type Item = String;

    fn next(&mut self) -> Option<String> {
        let redactor = self.redactor.as_mut()?;
        match self.chunks.next() {
            Some(chunk) => Some(redactor.feed(chunk)),
            None => self.redactor.take().map(|mut r| r.flush()),
        }
    }
}

impl<'a, I: Iterator<Item = &'a str>> FusedIterator for HoldingBack<I> {}

/// A streaming redactor that holds back what could still be a key.
///
/// The shape most streaming filters have: `feed` a chunk, get the output
/// that is final; `flush` at the end of the stream. Checking one is a
/// one-line [`per_chunk`](crate::per_chunk).
///
/// # Example
///
/// ```
/// use chunk_invariance::examples::HoldBack;
///
/// let mut r = HoldBack::new();
/// assert_eq!(r.feed("use sk-AbCd"), "use ");
/// assert_eq!(r.feed("1234 now"), "[KEY] now");
/// assert_eq!(r.feed(" sk-"), " ");
/// assert_eq!(r.flush(), "sk-");
/// ```
#[derive(Debug, Default, Clone)]
pub struct HoldBack {
    /// Input not yet emitted: a possible start of a key, shorter than one.
    pending: String,
}

impl HoldBack {
    /// A redactor at the start of a stream.
    ///
    /// # Example
    ///
    /// ```
    /// assert_eq!(chunk_invariance::examples::HoldBack::new().flush(), "");
    /// ```
    pub fn new() -> Self {
        HoldBack::default()
    }

    /// Takes the next chunk and returns the output that no later chunk
    /// can change.
    ///
    /// # Example
    ///
    /// ```
    /// let mut r = chunk_invariance::examples::HoldBack::new();
    /// assert_eq!(r.feed("ask sk"), "ask ");
    /// ```
    pub fn feed(&mut self, chunk: &str) -> String {
        self.pending.push_str(chunk);
        let mut out = String::with_capacity(self.pending.len());
        let done = scan(&self.pending, &mut out, false);
        self.pending.drain(..done);
        out
    }

    /// The text held back now: a possible start of a key.
    ///
    /// # Example
    ///
    /// ```
    /// let mut r = chunk_invariance::examples::HoldBack::new();
    /// assert_eq!(r.feed("ask sk-A"), "ask ");
    /// assert_eq!(r.held(), "sk-A");
    /// ```
    pub fn held(&self) -> &str {
        &self.pending
    }

    /// Ends the stream and returns what was held back; the redactor is
    /// then ready for a new stream.
    ///
    /// # Example
    ///
    /// ```
    /// let mut r = chunk_invariance::examples::HoldBack::new();
    /// r.feed("sk-AbCd123");
    /// assert_eq!(r.flush(), "sk-AbCd123");
    /// ```
    pub fn flush(&mut self) -> String {
        let mut out = String::with_capacity(self.pending.len());
        scan(&std::mem::take(&mut self.pending), &mut out, true);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redact_finds_keys_left_to_right() {
        assert_eq!(redact(""), "");
        assert_eq!(redact("sk-AbCd123"), "sk-AbCd123");
        assert_eq!(redact("sk-AbCd1234sk-EfGh5678"), "[KEY][KEY]");
        assert_eq!(redact("ésk-AbCd1234é"), "é[KEY]é");
        assert_eq!(redact("sk-AbCd12é4"), "sk-AbCd12é4");
    }

    #[test]
    fn hold_back_holds_only_possible_keys() {
        let mut r = HoldBack::new();
        assert_eq!(r.feed("xs"), "x");
        assert_eq!(r.feed("x"), "sx");
        assert_eq!(r.feed("é"), "é");
        assert_eq!(r.flush(), "");
    }

    #[test]
    fn carry_never_panics_on_multibyte_text() {
        let out: String = redact_with_carry(["ééééééé", "sk-AbCd1234", "ééé"]).collect();
        assert!(out.ends_with("ééé"), "{out}");
    }
}
