//! The failure report: which split broke the filter, and how.

use std::fmt;

use crate::text::{Shown, back_to_boundary, first_difference};

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
    /// A filter gave different results for the same input when run again:
    /// the whole-input filter, or the stream filter on the split that
    /// failed. The failure is still there, with what the second run gave
    /// ([`Mismatch::rerun`], [`FilterFailure::rerun`]).
    NotDeterministic,
    /// A filter panicked; see [`ChunkInvarianceError::failure`].
    Panicked,
    /// A stream filter stopped with an error: one made by
    /// [`try_per_chunk`](crate::try_per_chunk) from a step that returned
    /// `Err`, or by [`fail_split`](crate::fail_split); see
    /// [`ChunkInvarianceError::failure`].
    FilterFailed,
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
    Failure(Box<FilterFailure>),
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
        let kind = match mismatch.rerun {
            Some(_) => ErrorKind::NotDeterministic,
            None => ErrorKind::NotInvariant,
        };
        ChunkInvarianceError {
            kind,
            repr: Repr::Mismatch(Box::new(mismatch)),
        }
    }

    pub(crate) fn failed(failure: FilterFailure) -> Self {
        let kind = match (&failure.rerun, failure.panicked) {
            (Some(_), _) => ErrorKind::NotDeterministic,
            (None, true) => ErrorKind::Panicked,
            (None, false) => ErrorKind::FilterFailed,
        };
        ChunkInvarianceError {
            kind,
            repr: Repr::Failure(Box::new(failure)),
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
            _ => None,
        }
    }

    /// The panic or error that stopped a filter, when that is why the
    /// check failed.
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance::{check_chunk_invariant, ErrorKind};
    ///
    /// let err = check_chunk_invariant(
    ///     |chunks| chunks.map(|c: &str| {
    ///         assert!(!c.starts_with('b'), "a chunk starts with b");
    ///         c.to_owned()
    ///     }),
    ///     |whole: &str| whole.to_owned(),
    ///     "abc",
    /// )
    /// .unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::Panicked);
    /// let failure = err.failure().unwrap();
    /// assert_eq!(failure.cuts(), Some(&[1][..]));
    /// assert_eq!(failure.message(), "a chunk starts with b");
    /// ```
    pub fn failure(&self) -> Option<&FilterFailure> {
        match &self.repr {
            Repr::Failure(failure) => Some(failure),
            _ => None,
        }
    }
}

impl fmt::Display for ChunkInvarianceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Mismatch(m) => fmt::Display::fmt(m, f),
            Repr::Failure(failure) => fmt::Display::fmt(failure, f),
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

/// Where a cut list came from, which decides how a failure on it is
/// reported and whether it is shrunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// Every split up to some number of parts, fewest first: the first
    /// failure is already a smallest one.
    Enumerated,
    /// A random sample: a failure may have cuts it does not need.
    Random,
    /// Listed by the caller, in the caller's order.
    Given,
}

impl Origin {
    /// Whether a failing split of this origin may have needless cuts.
    pub(crate) fn shrinks(self) -> bool {
        self != Origin::Enumerated
    }
}

/// Where a failing split was found, and what shrinking made of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Found {
    /// The cuts of the split reported: the shrunk one, if shrinking ran.
    pub(crate) cuts: Vec<usize>,
    /// The number, in the order tried, of the split the check found.
    pub(crate) split_number: usize,
    pub(crate) origin: Origin,
    pub(crate) shrunk: Option<Shrunk>,
    /// Whether shrinking ran out of runs before the split was locally
    /// minimal.
    pub(crate) shrink_stopped: bool,
}

/// A failing split made smaller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Shrunk {
    /// The cuts of the split as the check found it.
    pub(crate) from: Vec<usize>,
}

/// What a second run of a filter gave, when it was not what the first
/// run gave.
///
/// A check runs the filters again after a failure: the whole-input
/// filter, then the stream filter on the failing split. A different
/// result means a filter is not deterministic (it depends on time,
/// randomness, a hash order, or state shared between runs), and the
/// error's kind is [`ErrorKind::NotDeterministic`].
///
/// # Example
///
/// ```
/// use std::cell::Cell;
/// use chunk_invariance::{check_chunk_invariant, ErrorKind, Rerun};
///
/// // A stream filter that fails on its second stream only.
/// let streams = Cell::new(0);
/// let err = check_chunk_invariant(
///     |chunks| {
///         streams.set(streams.get() + 1);
///         let out: String = chunks.collect();
///         vec![if streams.get() == 2 { out.to_uppercase() } else { out }]
///     },
///     |whole: &str| whole.to_owned(),
///     "abc",
/// )
/// .unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::NotDeterministic);
/// let m = err.mismatch().unwrap();
/// assert_eq!(m.streamed(), b"ABC");
/// assert_eq!(m.rerun(), Some(&Rerun::StreamGave(b"abc".to_vec())));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Rerun {
    /// The whole-input filter gave this other output.
    WholeGave(Vec<u8>),
    /// The stream filter, on the same split, gave this other output (the
    /// whole-input output when the split passed the second time).
    StreamGave(Vec<u8>),
    /// The stream filter, on the same split, panicked or failed with this
    /// message.
    StreamFailed(String),
}

/// A split whose streamed output differs from the whole-input output.
///
/// Offsets are byte offsets. The bytes are those of the input and of the
/// joined outputs; for a `str` input they are valid UTF-8.
///
/// A failing random or explicit split is shrunk before it is reported:
/// cuts are dropped one at a time, then moved earlier, as long as the
/// split still fails, until no cut can be dropped or moved one unit
/// earlier. The report names the split it shrank
/// ([`shrunk_from`](Mismatch::shrunk_from)); generated splits
/// ([`Splits::TwoPart`](crate::Splits::TwoPart), `UpTo`, `All`) need no
/// shrinking, since they run fewest parts first.
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
    pub(crate) found: Found,
    pub(crate) whole: Vec<u8>,
    pub(crate) streamed: Vec<u8>,
    pub(crate) rerun: Option<Rerun>,
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
        &self.found.cuts
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
        chunks_of(&self.input, &self.found.cuts)
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

    /// The number, from 1, in the order the check tried splits, of the
    /// failing split it found: the split before shrinking, when it was
    /// shrunk.
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
        self.found.split_number
    }

    /// The cuts of the split the check found, when it was shrunk to
    /// [`cuts`](Mismatch::cuts); `None` when the split was reported as
    /// found.
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance::{check_chunk_invariant_with, Splits};
    /// use chunk_invariance::examples::{redact, redact_each_chunk};
    ///
    /// let err = check_chunk_invariant_with(
    ///     redact_each_chunk,
    ///     redact,
    ///     "use sk-AbCd1234 now",
    ///     Splits::explicit([["us", "e sk-Ab", "Cd1", "234 now"]]),
    /// )
    /// .unwrap_err();
    /// let m = err.mismatch().unwrap();
    /// assert_eq!(m.shrunk_from(), Some(&[2, 9, 12][..]));
    /// // One cut inside the key is enough, and the earliest such cut is
    /// // right after its first letter.
    /// assert_eq!(m.cuts(), [5]);
    /// ```
    pub fn shrunk_from(&self) -> Option<&[usize]> {
        self.found.shrunk.as_ref().map(|s| s.from.as_slice())
    }

    /// What a second run gave, when it differed from the first: the
    /// filters are then not deterministic, and the error's kind is
    /// [`ErrorKind::NotDeterministic`].
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance::check_chunk_invariant;
    /// use chunk_invariance::examples::{redact, redact_each_chunk};
    ///
    /// let err = check_chunk_invariant(redact_each_chunk, redact, "use sk-AbCd1234 now").unwrap_err();
    /// assert_eq!(err.mismatch().unwrap().rerun(), None);
    /// ```
    pub fn rerun(&self) -> Option<&Rerun> {
        self.rerun.as_ref()
    }

    fn shown<'a>(&self, bytes: &'a [u8]) -> Shown<'a> {
        Shown {
            bytes,
            is_text: self.is_text,
        }
    }
}

/// A filter that panicked or failed instead of giving its output.
///
/// A stream filter's panic is caught and reported with the split that
/// caused it; so is an error from a [`try_per_chunk`](crate::try_per_chunk)
/// step or a [`fail_split`](crate::fail_split). A failing random or
/// explicit split is shrunk as for a [`Mismatch`], keeping only splits on
/// which the filter fails the same way (panics, or fails). A panic of the
/// whole-input filter is reported too, with no split.
///
/// Catching needs unwinding: under `panic = "abort"` a panic ends the
/// test process instead. Each caught panic is still printed by the panic
/// hook, as in any test.
///
/// # Example
///
/// ```
/// use chunk_invariance::{check_chunk_invariant, ErrorKind};
///
/// let err = check_chunk_invariant(
///     |chunks| chunks.map(|c: &str| c[..2].to_owned()),
///     |whole: &str| whole.to_owned(),
///     "ab",
/// )
/// .unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::Panicked);
/// let failure = err.failure().unwrap();
/// assert_eq!(failure.chunks(), Some(vec![&b"a"[..], b"b"]));
/// assert!(failure.message().contains("out of bounds"));
/// assert!(err.to_string().contains(r#"split:    ["a", "b"] (cut at 1)"#));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct FilterFailure {
    pub(crate) input: Vec<u8>,
    pub(crate) is_text: bool,
    /// `None` for the whole-input filter.
    pub(crate) found: Option<Found>,
    pub(crate) message: String,
    pub(crate) panicked: bool,
    pub(crate) rerun: Option<Rerun>,
}

impl FilterFailure {
    /// The input that was split.
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance::check_chunk_invariant;
    ///
    /// let err = check_chunk_invariant(|_| -> Vec<String> { panic!("no") }, str::to_owned, "ab").unwrap_err();
    /// assert_eq!(err.failure().unwrap().input(), b"ab");
    /// ```
    pub fn input(&self) -> &[u8] {
        &self.input
    }

    /// Whether the input was a `str` rather than `[u8]`.
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance::check_chunk_invariant;
    ///
    /// let err = check_chunk_invariant(|_| -> Vec<String> { panic!("no") }, str::to_owned, "ab").unwrap_err();
    /// assert!(err.failure().unwrap().is_text());
    /// ```
    pub fn is_text(&self) -> bool {
        self.is_text
    }

    /// Whether the filter panicked, rather than stopped with an error.
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance::check_chunk_invariant;
    ///
    /// let err = check_chunk_invariant(|_| -> Vec<String> { panic!("no") }, str::to_owned, "ab").unwrap_err();
    /// assert!(err.failure().unwrap().panicked());
    /// ```
    pub fn panicked(&self) -> bool {
        self.panicked
    }

    /// The panic's message (a `&str` or `String` payload), or the
    /// error's `Display`.
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance::check_chunk_invariant;
    ///
    /// let err = check_chunk_invariant(|_| -> Vec<String> { panic!("no {}", 1) }, str::to_owned, "ab").unwrap_err();
    /// assert_eq!(err.failure().unwrap().message(), "no 1");
    /// ```
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The cut offsets of the split the stream filter failed on; `None`
    /// when the whole-input filter failed.
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance::check_chunk_invariant;
    ///
    /// // The whole input as one chunk is split #1, with no cut.
    /// let err = check_chunk_invariant(|_| -> Vec<String> { panic!("no") }, str::to_owned, "ab").unwrap_err();
    /// assert_eq!(err.failure().unwrap().cuts(), Some(&[][..]));
    /// let err = check_chunk_invariant(|c| c, |_: &str| -> String { panic!("no") }, "ab").unwrap_err();
    /// assert_eq!(err.failure().unwrap().cuts(), None);
    /// ```
    pub fn cuts(&self) -> Option<&[usize]> {
        self.found.as_ref().map(|f| f.cuts.as_slice())
    }

    /// The chunks of the split the stream filter failed on; `None` when
    /// the whole-input filter failed.
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance::check_chunk_invariant;
    ///
    /// let err = check_chunk_invariant(|_| -> Vec<String> { panic!("no") }, str::to_owned, "ab").unwrap_err();
    /// assert_eq!(err.failure().unwrap().chunks(), Some(vec![&b"ab"[..]]));
    /// ```
    pub fn chunks(&self) -> Option<Vec<&[u8]>> {
        self.found.as_ref().map(|f| chunks_of(&self.input, &f.cuts))
    }

    /// The failing split's number in the order tried (before shrinking);
    /// `None` when the whole-input filter failed.
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance::check_chunk_invariant;
    ///
    /// let err = check_chunk_invariant(|_| -> Vec<String> { panic!("no") }, str::to_owned, "ab").unwrap_err();
    /// assert_eq!(err.failure().unwrap().split_number(), Some(1));
    /// ```
    pub fn split_number(&self) -> Option<usize> {
        self.found.as_ref().map(|f| f.split_number)
    }

    /// The cuts of the split the check found, when it was shrunk to
    /// [`cuts`](FilterFailure::cuts).
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance::{check_chunk_invariant_with, Splits};
    ///
    /// // Panics on any chunk holding a 'b' but not the whole input.
    /// let err = check_chunk_invariant_with(
    ///     |chunks| chunks.map(|c: &str| {
    ///         assert!(c == "abc" || !c.contains('b'));
    ///         c.to_owned()
    ///     }),
    ///     str::to_owned,
    ///     "abc",
    ///     Splits::Cuts(vec![vec![1, 2]]),
    /// )
    /// .unwrap_err();
    /// let failure = err.failure().unwrap();
    /// assert_eq!(failure.shrunk_from(), Some(&[1, 2][..]));
    /// assert_eq!(failure.cuts(), Some(&[1][..]));
    /// ```
    pub fn shrunk_from(&self) -> Option<&[usize]> {
        self.found
            .as_ref()?
            .shrunk
            .as_ref()
            .map(|s| s.from.as_slice())
    }

    /// What the stream filter gave on the same split when run again, when
    /// it did not fail again: the filter is then not deterministic.
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance::check_chunk_invariant;
    ///
    /// let err = check_chunk_invariant(|_| -> Vec<String> { panic!("no") }, str::to_owned, "ab").unwrap_err();
    /// assert_eq!(err.failure().unwrap().rerun(), None);
    /// ```
    pub fn rerun(&self) -> Option<&Rerun> {
        self.rerun.as_ref()
    }
}

/// The chunks `cuts` make of `input`.
fn chunks_of<'a>(input: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut start = 0;
    let mut chunks = Vec::with_capacity(cuts.len() + 1);
    for &cut in cuts {
        chunks.push(&input[start..cut]);
        start = cut;
    }
    chunks.push(&input[start..]);
    chunks
}

/// Chunk lists longer than this show their head and tail only.
const MANY_CHUNKS: usize = 8;
/// How many bytes after the first difference the report shows.
const CONTEXT: usize = 24;

/// Writes a split as its chunks and its cuts, shortened when long.
fn write_split(
    f: &mut fmt::Formatter<'_>,
    input: &[u8],
    is_text: bool,
    cuts: &[usize],
) -> fmt::Result {
    let shown = |bytes| Shown { bytes, is_text };
    f.write_str("[")?;
    let chunks = chunks_of(input, cuts);
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
        write!(f, "{}", shown(chunk))?;
    }
    f.write_str("] ")?;
    match cuts {
        [] => f.write_str("(no cut: the whole input as one chunk)"),
        [one] => write!(f, "(cut at {one})"),
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
            f.write_str(")")
        }
    }
}

/// Writes the line that says where the split came from: its number in
/// the order tried, and the split it was shrunk from.
fn write_origin(
    f: &mut fmt::Formatter<'_>,
    input: &[u8],
    is_text: bool,
    found: &Found,
) -> fmt::Result {
    let order = match found.origin {
        Origin::Enumerated => "tried; generated splits run fewest parts first",
        Origin::Random => "tried; random splits run fewest parts first",
        Origin::Given => "given",
    };
    match &found.shrunk {
        None if found.shrink_stopped => write!(
            f,
            "  split #{} in the order {order}; shrinking stopped after {SHRINK_RUNS} runs \
             without a smaller split",
            found.split_number
        ),
        None => write!(f, "  split #{} in the order {order}", found.split_number),
        Some(shrunk) => {
            write!(
                f,
                "  shrunk:   from split #{} in the order {order}:\n            ",
                found.split_number
            )?;
            write_split(f, input, is_text, &shrunk.from)?;
            if found.shrink_stopped {
                write!(
                    f,
                    "\n            shrinking stopped after {SHRINK_RUNS} runs, before the split above was minimal"
                )
            } else {
                f.write_str("\n            no cut of the split above can be dropped or moved one unit earlier")
            }
        }
    }
}

/// Writes what a second run gave, for a filter that is not deterministic.
fn write_rerun(f: &mut fmt::Formatter<'_>, is_text: bool, rerun: &Rerun) -> fmt::Result {
    let shown = |bytes| Shown { bytes, is_text };
    match rerun {
        Rerun::WholeGave(out) => write!(
            f,
            "\n  again:    the whole-input filter gave {} when run again",
            shown(out)
        ),
        Rerun::StreamGave(out) => write!(
            f,
            "\n  again:    the same split gave {} when run again",
            shown(out)
        ),
        Rerun::StreamFailed(message) => write!(
            f,
            "\n  again:    the same split failed when run again: {message}"
        ),
    }
}

/// How many filter runs shrinking may take: each run is a whole stream,
/// so the bound keeps a long input's report from taking minutes.
pub(crate) const SHRINK_RUNS: usize = 1000;

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.rerun {
            Some(_) => writeln!(f, "stream filter is not deterministic")?,
            None => writeln!(f, "stream filter is not chunk-invariant")?,
        }
        writeln!(f, "  input:    {}", self.shown(&self.input))?;
        f.write_str("  split:    ")?;
        write_split(f, &self.input, self.is_text, &self.found.cuts)?;
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
        write_origin(f, &self.input, self.is_text, &self.found)?;
        if let Some(rerun) = &self.rerun {
            write_rerun(f, self.is_text, rerun)?;
        }
        Ok(())
    }
}

impl fmt::Display for FilterFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (filter, what) = match (&self.found, self.panicked) {
            (Some(_), true) => ("stream filter", "panicked"),
            (Some(_), false) => ("stream filter", "failed"),
            (None, true) => ("whole-input filter", "panicked"),
            (None, false) => ("whole-input filter", "failed"),
        };
        match self.rerun {
            Some(_) => writeln!(f, "{filter} is not deterministic")?,
            None => writeln!(f, "{filter} {what}")?,
        }
        let shown = Shown {
            bytes: &self.input,
            is_text: self.is_text,
        };
        write!(f, "  input:    {shown}")?;
        if let Some(found) = &self.found {
            f.write_str("\n  split:    ")?;
            write_split(f, &self.input, self.is_text, &found.cuts)?;
        }
        let label = if self.panicked {
            "panic:   "
        } else {
            "error:   "
        };
        write!(f, "\n  {label} {}", self.message)?;
        if let Some(found) = &self.found {
            writeln!(f)?;
            write_origin(f, &self.input, self.is_text, found)?;
        }
        if let Some(rerun) = &self.rerun {
            write_rerun(f, self.is_text, rerun)?;
        }
        Ok(())
    }
}

impl fmt::Debug for FilterFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = |bytes| Shown {
            bytes,
            is_text: self.is_text,
        };
        f.debug_struct("FilterFailure")
            .field("input", &format_args!("{}", shown(&self.input)))
            .field("cuts", &self.cuts())
            .field("message", &self.message)
            .field("panicked", &self.panicked)
            .field("split_number", &self.split_number())
            .finish()
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
            .field("cuts", &self.found.cuts)
            .field("whole", &format_args!("{}", self.shown(&self.whole)))
            .field("streamed", &format_args!("{}", self.shown(&self.streamed)))
            .field("split_number", &self.found.split_number)
            .field("shrunk_from", &self.shrunk_from())
            .field("rerun", &self.rerun)
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
            found: Found {
                cuts,
                split_number: 6,
                origin: Origin::Enumerated,
                shrunk: None,
                shrink_stopped: false,
            },
            whole: whole.into(),
            streamed: streamed.into(),
            rerun: None,
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
