//! The inputs a check can split and the outputs it can join.

use std::fmt;

/// An input the checks can cut into chunks: `str` or `[u8]`.
///
/// The two differ in where a cut may fall. A `str` is cut only at
/// character boundaries, since a `&str` chunk cannot hold half a
/// character. A `[u8]` is cut at every byte, so a byte filter also meets
/// chunks that end inside a UTF-8 character. Offsets are byte offsets in
/// both cases, the ones Rust slices with.
///
/// The trait is sealed: the checks rely on exactly these two meanings.
///
/// # Example
///
/// ```
/// use chunk_invariance::two_part_splits;
///
/// // "é" is two bytes: the text has one cut, the bytes have two.
/// assert_eq!(two_part_splits("é!").count(), 2);
/// assert_eq!(two_part_splits("é!".as_bytes()).count(), 3);
/// ```
pub trait Text: private::Sealed {}

impl Text for str {}
impl Text for [u8] {}

/// An output chunk a filter may return for input `T`.
///
/// For `str` input that is anything `AsRef<str>` (`String`, `&str`,
/// `Cow<str>`, `Box<str>`); for `[u8]` input, anything `AsRef<[u8]>`
/// (`Vec<u8>`, `&[u8]`, and also `String` and `&str`). The checks join the
/// chunks of one stream and compare the result byte for byte.
///
/// The trait is sealed and implemented through those two blanket rules.
///
/// # Example
///
/// ```
/// use std::borrow::Cow;
/// use chunk_invariance::check_chunk_invariant;
///
/// // Borrowed output chunks work as well as owned ones.
/// let n = check_chunk_invariant(
///     |chunks| chunks.map(Cow::Borrowed),
///     |whole: &str| whole.to_owned(),
///     "abc",
/// )?;
/// assert_eq!(n, 3);
/// # Ok::<(), chunk_invariance::ChunkInvarianceError>(())
/// ```
pub trait OutputChunk<T: ?Sized + Text>: private::Append<T> {}

impl<O: AsRef<str>> OutputChunk<str> for O {}
impl<O: AsRef<[u8]>> OutputChunk<[u8]> for O {}

pub(crate) mod private {
    /// What the crate needs from an input, kept out of the public API.
    pub trait Sealed {
        /// Whether the input is text (cut at characters) or raw bytes.
        const IS_TEXT: bool;
        /// The bytes of the input.
        fn bytes(&self) -> &[u8];
        /// Byte offsets strictly inside the input where a cut may fall,
        /// increasing.
        fn cut_points(&self) -> Vec<usize>;
        /// The number of units (characters or bytes).
        fn unit_count(&self) -> usize;
        /// Whether a cut at byte offset `at` is allowed (`0..=len`).
        fn is_cut_point(&self, at: usize) -> bool;
        /// The part between two allowed cut points.
        fn part(&self, start: usize, end: usize) -> &Self;
    }

    /// How an output chunk adds its bytes to the joined output.
    pub trait Append<T: ?Sized> {
        fn append_to(&self, out: &mut Vec<u8>);
    }

    impl<O: AsRef<str>> Append<str> for O {
        fn append_to(&self, out: &mut Vec<u8>) {
            out.extend_from_slice(self.as_ref().as_bytes());
        }
    }

    impl<O: AsRef<[u8]>> Append<[u8]> for O {
        fn append_to(&self, out: &mut Vec<u8>) {
            out.extend_from_slice(self.as_ref());
        }
    }

    impl Sealed for str {
        const IS_TEXT: bool = true;

        fn bytes(&self) -> &[u8] {
            self.as_bytes()
        }

        fn cut_points(&self) -> Vec<usize> {
            self.char_indices().map(|(i, _)| i).skip(1).collect()
        }

        fn unit_count(&self) -> usize {
            self.chars().count()
        }

        fn is_cut_point(&self, at: usize) -> bool {
            self.is_char_boundary(at)
        }

        fn part(&self, start: usize, end: usize) -> &Self {
            &self[start..end]
        }
    }

    impl Sealed for [u8] {
        const IS_TEXT: bool = false;

        fn bytes(&self) -> &[u8] {
            self
        }

        fn cut_points(&self) -> Vec<usize> {
            (1..self.len()).collect()
        }

        fn unit_count(&self) -> usize {
            self.len()
        }

        fn is_cut_point(&self, at: usize) -> bool {
            at <= self.len()
        }

        fn part(&self, start: usize, end: usize) -> &Self {
            &self[start..end]
        }
    }
}

/// The name of one unit of `T`, for messages.
pub(crate) fn unit_name<T: ?Sized + Text>(plural: bool) -> &'static str {
    match (<T as private::Sealed>::IS_TEXT, plural) {
        (true, false) => "character",
        (true, true) => "characters",
        (false, false) => "byte",
        (false, true) => "bytes",
    }
}

/// Shows bytes the way `Debug` shows a string, for messages.
///
/// Text is shown as a quoted, escaped string. Bytes are shown the same way
/// with a `b` prefix, their valid UTF-8 as characters and any other byte
/// as `\xNN`. Values longer than [`LONG`] bytes keep their head and tail
/// and name how many bytes were left out of the middle, so a report stays
/// readable however large the input.
pub(crate) struct Shown<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) is_text: bool,
}

/// Values up to this many bytes are shown whole.
pub(crate) const LONG: usize = 72;
/// How many bytes of a long value's head and of its tail are shown.
const KEEP: usize = 30;

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.is_text {
            f.write_str("b")?;
        }
        f.write_str("\"")?;
        let bytes = self.bytes;
        if bytes.len() <= LONG {
            write_escaped(f, bytes)?;
        } else {
            let head = back_to_boundary(bytes, KEEP);
            let tail = back_to_boundary(bytes, bytes.len() - KEEP);
            write_escaped(f, &bytes[..head])?;
            write!(f, "…({} bytes)…", tail - head)?;
            write_escaped(f, &bytes[tail..])?;
        }
        f.write_str("\"")
    }
}

/// Moves `at` back to the start of a UTF-8 character, so shortening does
/// not split one into escapes. Gives up after three bytes: past that the
/// bytes are not UTF-8 anyway.
pub(crate) fn back_to_boundary(bytes: &[u8], mut at: usize) -> usize {
    let floor = at.saturating_sub(3);
    while at > floor && at < bytes.len() && bytes[at] & 0b1100_0000 == 0b1000_0000 {
        at -= 1;
    }
    at
}

/// The first byte offset where `a` and `b` differ, or the shorter length
/// when one is a prefix of the other.
pub(crate) fn first_difference(a: &[u8], b: &[u8]) -> usize {
    a.iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()))
}

fn write_escaped(f: &mut fmt::Formatter<'_>, bytes: &[u8]) -> fmt::Result {
    for piece in bytes.utf8_chunks() {
        let quoted = format!("{:?}", piece.valid());
        f.write_str(&quoted[1..quoted.len() - 1])?;
        for b in piece.invalid() {
            write!(f, "\\x{b:02x}")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(bytes: &[u8], is_text: bool) -> String {
        Shown { bytes, is_text }.to_string()
    }

    #[test]
    fn shows_text_escaped() {
        assert_eq!(show(b"a\"b\n\t", true), r#""a\"b\n\t""#);
        assert_eq!(show("é".as_bytes(), true), "\"é\"");
    }

    #[test]
    fn shows_bytes_with_invalid_utf8_as_hex() {
        assert_eq!(show(b"ab\xc3", false), r#"b"ab\xc3""#);
        assert_eq!(show(b"\xa9z", false), r#"b"\xa9z""#);
    }

    #[test]
    fn shortens_long_values_in_the_middle() {
        let long = "x".repeat(100);
        let shown = show(long.as_bytes(), true);
        assert_eq!(
            shown,
            format!("\"{}…(40 bytes)…{}\"", "x".repeat(30), "x".repeat(30))
        );
    }

    #[test]
    fn shortening_keeps_characters_whole() {
        let long = "é".repeat(60);
        let shown = show(long.as_bytes(), true);
        assert!(!shown.contains("\\x"), "{shown}");
        assert!(shown.contains("…(60 bytes)…"), "{shown}");
    }
}
