//! The failure report: which split broke the filter, and how.

use std::fmt;

use crate::split::first_difference;
use crate::text::{back_to_boundary, Shown};

/// Why a check failed.
///
/// # Example
///
/// ```
/// use chunk_invariance::{check_chunk_invariant_with, ErrorKind, Splits};
///
/// let err = check_chunk_invariant_with(
///     |chunks| chunks,
///     |whole: &str| whole.to_owned(),
///     "seventeen chars!!",
///     Splits::All,
/// )
/// .unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::InputTooLong);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A split's streamed output differs from the whole-input output; see
    /// [`ChunkInvarianceError::mismatch`].
    NotInvariant,
    /// [`Splits::All`](crate::Splits::All) was asked of an input longer
    /// than [`ALL_SPLITS_MAX_UNITS`](crate::ALL_SPLITS_MAX_UNITS).
    InputTooLong,
    /// An explicit split does not join back to the input (or has no
    /// chunks, or its cuts decrease or run past the end).
    SplitDoesNotJoin,
    /// An explicit split of a `str` cuts inside a character.
    SplitCutsCharacter,
    /// The splits asked for allow no split at all (`UpTo(0)`, an empty
    /// explicit list).
    NoSplits,
}

/// A check that failed: a split that breaks the filter, or splits that
/// cannot be tried.
///
/// Its `Display` is the report the assertions panic with: for a split
/// that breaks the filter it names the input, the split and its cut
/// offsets, both outputs, where they first differ, and the split's number
/// in the order tried. Long values are shortened in the middle.
///
/// # Example
///
/// ```
/// use chunk_invariance::check_chunk_invariant;
/// use chunk_invariance::examples::{redact, redact_each_chunk};
///
/// let err = check_chunk_invariant(redact_each_chunk, redact, "use sk-AbCd1234 now").unwrap_err();
/// let m = err.mismatch().unwrap();
/// assert_eq!(m.cuts(), [5]);
/// assert_eq!(m.split_number(), 6);
/// assert_eq!(m.whole(), b"use [KEY] now");
/// assert_eq!(m.streamed(), b"use sk-AbCd1234 now");
/// assert_eq!(m.first_difference(), 4);
/// assert!(err.to_string().contains(r#"split:    ["use s", "k-AbCd1234 now"] (cut at 5)"#));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct ChunkInvarianceError {
    kind: ErrorKind,
    repr: Repr,
}

#[derive(Clone, PartialEq, Eq)]
enum Repr {
    Mismatch(Box<Mismatch>),
    Message(String),
}

impl ChunkInvarianceError {
    pub(crate) fn new(kind: ErrorKind, message: String) -> Self {
        ChunkInvarianceError {
            kind,
            repr: Repr::Message(message),
        }
    }

    pub(crate) fn mismatched(mismatch: Mismatch) -> Self {
        ChunkInvarianceError {
            kind: ErrorKind::NotInvariant,
            repr: Repr::Mismatch(Box::new(mismatch)),
        }
    }

    /// Why the check failed.
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance::{check_chunk_invariant_with, ErrorKind, Splits};
    ///
    /// let err = check_chunk_invariant_with(
    ///     |chunks| chunks,
    ///     |whole: &str| whole.to_owned(),
    ///     "abc",
    ///     Splits::explicit([["ab", "d"]]),
    /// )
    /// .unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::SplitDoesNotJoin);
    /// ```
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The split that broke the filter, when that is why the check failed.
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance::check_chunk_invariant;
    ///
    /// let err = check_chunk_invariant(
    ///     |chunks| chunks.map(|c: &str| c.trim().to_owned()),
    ///     |whole: &str| whole.trim().to_owned(),
    ///     "a b",
    /// )
    /// .unwrap_err();
    /// let m = err.mismatch().unwrap();
    /// assert_eq!(m.chunks(), [&b"a"[..], b" b"]);
    /// assert_eq!(m.streamed(), b"ab");
    /// ```
    pub fn mismatch(&self) -> Option<&Mismatch> {
        match &self.repr {
            Repr::Mismatch(m) => Some(m),
            Repr::Message(_) => None,
        }
    }
}

impl fmt::Display for ChunkInvarianceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Mismatch(m) => fmt::Display::fmt(m, f),
            Repr::Message(msg) => f.write_str(msg),
        }
    }
}

/// `Debug` shows the same report as `Display`, so a failing
/// `check_…(…).unwrap()` or a test returning `Result` prints it readably.
impl fmt::Debug for ChunkInvarianceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}", self.kind, self)
    }
}

impl std::error::Error for ChunkInvarianceError {}

/// A split whose streamed output differs from the whole-input output.
///
/// Offsets are byte offsets. The bytes are those of the input and of the
/// joined outputs; for a `str` input they are valid UTF-8.
///
/// # Example
///
/// ```
/// use chunk_invariance::check_chunk_invariant;
/// use chunk_invariance::examples::{redact, redact_with_carry};
///
/// let err = check_chunk_invariant(redact_with_carry, redact, "use sk-AbCd1234 now").unwrap_err();
/// let m = err.mismatch().unwrap();
/// assert_eq!(m.input(), b"use sk-AbCd1234 now");
/// assert_eq!(m.chunks(), [&b"use s"[..], b"k-AbCd1234 now"]);
/// assert_eq!(m.streamed(), b"use sKEY] now");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Mismatch {
    pub(crate) input: Vec<u8>,
    pub(crate) is_text: bool,
    pub(crate) cuts: Vec<usize>,
    pub(crate) whole: Vec<u8>,
    pub(crate) streamed: Vec<u8>,
    pub(crate) split_number: usize,
    pub(crate) generated: bool,
}

impl Mismatch {
    /// The input that was split.
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance::check_chunk_invariant;
    ///
    /// // Each chunk upper-cased alone, but the whole input reversed: wrong.
    /// let err = check_chunk_invariant(
    ///     |chunks| chunks.map(|c: &str| c.chars().rev().collect::<String>()),
    ///     |whole: &str| whole.chars().rev().collect::<String>(),
    ///     "abc",
    /// )
    /// .unwrap_err();
    /// let m = err.mismatch().unwrap();
    /// assert_eq!(m.input(), b"abc");
    /// ```
    pub fn input(&self) -> &[u8] {
        &self.input
    }

    /// Whether the input was a `str` (shown as text) rather than `[u8]`.
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance::check_chunk_invariant;
    ///
    /// // Each chunk upper-cased alone, but the whole input reversed: wrong.
    /// let err = check_chunk_invariant(
    ///     |chunks| chunks.map(|c: &str| c.chars().rev().collect::<String>()),
    ///     |whole: &str| whole.chars().rev().collect::<String>(),
    ///     "abc",
    /// )
    /// .unwrap_err();
    /// let m = err.mismatch().unwrap();
    /// assert!(m.is_text());
    /// ```
    pub fn is_text(&self) -> bool {
        self.is_text
    }

    /// The split's cut offsets; empty when the whole input as one chunk
    /// already fails.
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance::check_chunk_invariant;
    ///
    /// // Each chunk upper-cased alone, but the whole input reversed: wrong.
    /// let err = check_chunk_invariant(
    ///     |chunks| chunks.map(|c: &str| c.chars().rev().collect::<String>()),
    ///     |whole: &str| whole.chars().rev().collect::<String>(),
    ///     "abc",
    /// )
    /// .unwrap_err();
    /// let m = err.mismatch().unwrap();
    /// assert_eq!(m.cuts(), [1]); // the first split that fails: "a" | "bc"
    /// ```
    pub fn cuts(&self) -> &[usize] {
        &self.cuts
    }

    /// The split's chunks, in order.
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance::check_chunk_invariant;
    ///
    /// // Each chunk upper-cased alone, but the whole input reversed: wrong.
    /// let err = check_chunk_invariant(
    ///     |chunks| chunks.map(|c: &str| c.chars().rev().collect::<String>()),
    ///     |whole: &str| whole.chars().rev().collect::<String>(),
    ///     "abc",
    /// )
    /// .unwrap_err();
    /// let m = err.mismatch().unwrap();
    /// assert_eq!(m.chunks(), [&b"a"[..], b"bc"]);
    /// ```
    pub fn chunks(&self) -> Vec<&[u8]> {
        let mut start = 0;
        let mut chunks = Vec::with_capacity(self.cuts.len() + 1);
        for &cut in &self.cuts {
            chunks.push(&self.input[start..cut]);
            start = cut;
        }
        chunks.push(&self.input[start..]);
        chunks
    }

    /// The output of the whole-input filter.
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance::check_chunk_invariant;
    ///
    /// // Each chunk upper-cased alone, but the whole input reversed: wrong.
    /// let err = check_chunk_invariant(
    ///     |chunks| chunks.map(|c: &str| c.chars().rev().collect::<String>()),
    ///     |whole: &str| whole.chars().rev().collect::<String>(),
    ///     "abc",
    /// )
    /// .unwrap_err();
    /// let m = err.mismatch().unwrap();
    /// assert_eq!(m.whole(), b"cba");
    /// ```
    pub fn whole(&self) -> &[u8] {
        &self.whole
    }

    /// The stream filter's output chunks for this split, joined.
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance::check_chunk_invariant;
    ///
    /// // Each chunk upper-cased alone, but the whole input reversed: wrong.
    /// let err = check_chunk_invariant(
    ///     |chunks| chunks.map(|c: &str| c.chars().rev().collect::<String>()),
    ///     |whole: &str| whole.chars().rev().collect::<String>(),
    ///     "abc",
    /// )
    /// .unwrap_err();
    /// let m = err.mismatch().unwrap();
    /// assert_eq!(m.streamed(), b"acb");
    /// ```
    pub fn streamed(&self) -> &[u8] {
        &self.streamed
    }

    /// The first byte offset where the two outputs differ (the shorter
    /// one's length when it is a prefix of the other).
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance::check_chunk_invariant;
    ///
    /// // Each chunk upper-cased alone, but the whole input reversed: wrong.
    /// let err = check_chunk_invariant(
    ///     |chunks| chunks.map(|c: &str| c.chars().rev().collect::<String>()),
    ///     |whole: &str| whole.chars().rev().collect::<String>(),
    ///     "abc",
    /// )
    /// .unwrap_err();
    /// let m = err.mismatch().unwrap();
    /// assert_eq!(m.first_difference(), 0);
    /// ```
    pub fn first_difference(&self) -> usize {
        first_difference(&self.whole, &self.streamed)
    }

    /// The split's number, from 1, in the order the check tried splits.
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance::check_chunk_invariant;
    ///
    /// // Each chunk upper-cased alone, but the whole input reversed: wrong.
    /// let err = check_chunk_invariant(
    ///     |chunks| chunks.map(|c: &str| c.chars().rev().collect::<String>()),
    ///     |whole: &str| whole.chars().rev().collect::<String>(),
    ///     "abc",
    /// )
    /// .unwrap_err();
    /// let m = err.mismatch().unwrap();
    /// assert_eq!(m.split_number(), 2); // after the whole input, #1
    /// ```
    pub fn split_number(&self) -> usize {
        self.split_number
    }

    fn shown<'a>(&self, bytes: &'a [u8]) -> Shown<'a> {
        Shown {
            bytes,
            is_text: self.is_text,
        }
    }
}

/// Chunk lists longer than this show their head and tail only.
const MANY_CHUNKS: usize = 8;
/// How many bytes after the first difference the report shows.
const CONTEXT: usize = 24;

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "stream filter is not chunk-invariant")?;
        writeln!(f, "  input:    {}", self.shown(&self.input))?;
        f.write_str("  split:    [")?;
        let chunks = self.chunks();
        for (i, chunk) in chunks.iter().enumerate() {
            if chunks.len() > MANY_CHUNKS && i == MANY_CHUNKS / 2 {
                write!(f, ", …{} more chunks…", chunks.len() - MANY_CHUNKS)?;
            }
            if chunks.len() > MANY_CHUNKS
                && (MANY_CHUNKS / 2..chunks.len() - MANY_CHUNKS / 2).contains(&i)
            {
                continue;
            }
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}", self.shown(chunk))?;
        }
        f.write_str("] ")?;
        match self.cuts.as_slice() {
            [] => f.write_str("(no cut: the whole input as one chunk)")?,
            [one] => write!(f, "(cut at {one})")?,
            many => {
                f.write_str("(cuts at ")?;
                for (i, cut) in many.iter().enumerate() {
                    if many.len() > 2 * MANY_CHUNKS && i == MANY_CHUNKS {
                        write!(f, ", …{} more…", many.len() - 2 * MANY_CHUNKS)?;
                    }
                    if many.len() > 2 * MANY_CHUNKS
                        && (MANY_CHUNKS..many.len() - MANY_CHUNKS).contains(&i)
                    {
                        continue;
                    }
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{cut}")?;
                }
                f.write_str(")")?;
            }
        }
        writeln!(f)?;
        writeln!(f, "  whole:    {}", self.shown(&self.whole))?;
        writeln!(f, "  streamed: {}", self.shown(&self.streamed))?;
        let at = self.first_difference();
        writeln!(
            f,
            "  differ:   from byte {at}: whole {}, streamed {}",
            self.context(&self.whole, at),
            self.context(&self.streamed, at),
        )?;
        write!(f, "  split #{} in the order ", self.split_number)?;
        if self.generated {
            f.write_str("tried; generated splits run fewest parts first")
        } else {
            f.write_str("given")
        }
    }
}

impl Mismatch {
    /// A short window of `bytes` from `at`, so a difference deep in a
    /// long output is visible even when the full value is shortened.
    fn context<'a>(&self, bytes: &'a [u8], at: usize) -> Context<'a> {
        let start = back_to_boundary(bytes, at.min(bytes.len()));
        let end = back_to_boundary(bytes, (start + CONTEXT).min(bytes.len()));
        Context {
            shown: Shown {
                bytes: &bytes[start..end],
                is_text: self.is_text,
            },
            more: end < bytes.len(),
            at_end: start == bytes.len(),
        }
    }
}

struct Context<'a> {
    shown: Shown<'a>,
    more: bool,
    at_end: bool,
}

impl fmt::Display for Context<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.at_end {
            return f.write_str("ends");
        }
        write!(f, "{}", self.shown)?;
        if self.more {
            f.write_str("…")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mismatch")
            .field("input", &format_args!("{}", self.shown(&self.input)))
            .field("cuts", &self.cuts)
            .field("whole", &format_args!("{}", self.shown(&self.whole)))
            .field("streamed", &format_args!("{}", self.shown(&self.streamed)))
            .field("split_number", &self.split_number)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mismatch(input: &str, cuts: Vec<usize>, whole: &str, streamed: &str) -> Mismatch {
        Mismatch {
            input: input.into(),
            is_text: true,
            cuts,
            whole: whole.into(),
            streamed: streamed.into(),
            split_number: 6,
            generated: true,
        }
    }

    #[test]
    fn report_has_every_line() {
        let m = mismatch(
            "use sk-AbCd1234 now",
            vec![5],
            "use [KEY] now",
            "use sk-AbCd1234 now",
        );
        assert_eq!(
            m.to_string(),
            "stream filter is not chunk-invariant\n\
             \x20 input:    \"use sk-AbCd1234 now\"\n\
             \x20 split:    [\"use s\", \"k-AbCd1234 now\"] (cut at 5)\n\
             \x20 whole:    \"use [KEY] now\"\n\
             \x20 streamed: \"use sk-AbCd1234 now\"\n\
             \x20 differ:   from byte 4: whole \"[KEY] now\", streamed \"sk-AbCd1234 now\"\n\
             \x20 split #6 in the order tried; generated splits run fewest parts first"
        );
    }

    #[test]
    fn report_of_a_short_output_says_it_ends() {
        let m = mismatch("ab", vec![], "ab", "a");
        let text = m.to_string();
        assert!(
            text.contains("(no cut: the whole input as one chunk)"),
            "{text}"
        );
        assert!(
            text.contains("differ:   from byte 1: whole \"b\", streamed ends"),
            "{text}"
        );
    }

    #[test]
    fn report_shortens_many_chunks_and_cuts() {
        let input = "x".repeat(40);
        let cuts: Vec<usize> = (1..40).collect();
        let m = mismatch(&input, cuts, &input, "");
        let text = m.to_string();
        assert!(text.contains("…32 more chunks…"), "{text}");
        assert!(text.contains("…23 more…"), "{text}");
        assert!(text.lines().all(|l| l.chars().count() < 200), "{text}");
    }

    #[test]
    fn report_shows_the_difference_of_long_outputs() {
        let whole = format!("{}A{}", "x".repeat(500), "y".repeat(500));
        let streamed = format!("{}B{}", "x".repeat(500), "y".repeat(500));
        let m = mismatch(&whole, vec![250], &whole, &streamed);
        let text = m.to_string();
        assert!(text.contains("…(941 bytes)…"), "{text}");
        assert!(
            text.contains(&format!(
                "from byte 500: whole \"A{y}\"…, streamed \"B{y}\"…",
                y = "y".repeat(23)
            )),
            "{text}"
        );
    }
}
