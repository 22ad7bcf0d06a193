//! The tape: the bytes a stream holds, and how far it has released them.
//!
//! Positions are stream offsets (bytes fed since the stream started). The
//! tape keeps every byte from `emitted` on, plus up to `CONTEXT` released
//! bytes before it as look-behind, so that look-around at the first held
//! byte sees the character before it (a literal-only stream, whose matcher
//! never looks behind, may keep none: `Tape::restart`). Matchers read the
//! tape; only the stream moves `emitted`.

use super::bytes::is_continuation;

/// Bytes of already-released text kept before the held region, as
/// look-behind context (the longest UTF-8 character).
const CONTEXT: usize = 4;

/// Released bytes kept in the buffer before `Tape::compact` drops them.
const COMPACT_MIN: usize = 256;

/// The held bytes of one stream. `buf[0]` is at stream offset `base`;
/// `base <= emitted <= offset()`, and `emitted - base <= CONTEXT` right
/// after a compaction that dropped anything.
#[derive(Debug, Default)]
pub(crate) struct Tape {
    buf: Vec<u8>,
    base: usize,
    /// Everything before this has been released (given to the sink, or
    /// dropped by a held-limit policy).
    emitted: usize,
    /// The end of the last decided match, if the stream went on from there
    /// (an empty match there is not a match: `find_iter` skips it).
    last_end: Option<usize>,
}

/// Appends `bytes` to `v`; a few bytes are pushed one by one, which is
/// cheaper than the call to `memcpy` that `extend_from_slice` makes where
/// the loop is inlined: the literal token path (`Tape::restart`) and the
/// byte sink. The tape's other pushes (`push`, `append_released`,
/// `push_released`), inlined into the large `feed_general`, call
/// `extend_from_slice` instead: there the loop was left a call of its
/// own, about 50 instructions for four bytes on the thread matcher's
/// token path, where `memcpy` takes about 14.
#[inline(always)]
pub(crate) fn extend_small(v: &mut Vec<u8>, bytes: &[u8]) {
    if bytes.len() <= 16 {
        // One capacity check, then a plain loop (a trusted-length extend).
        v.extend(bytes.iter().copied());
    } else {
        v.extend_from_slice(bytes);
    }
}

impl Tape {
    /// Forgets the stream; keeps the allocation.
    pub(crate) fn reset(&mut self) {
        self.buf.clear();
        self.base = 0;
        self.emitted = 0;
        self.last_end = None;
    }

    /// Bytes received but not yet released.
    #[inline(always)]
    pub(crate) fn held(&self) -> usize {
        self.offset().saturating_sub(self.emitted)
    }

    /// The total number of bytes fed so far: the end of the tape.
    #[inline(always)]
    pub(crate) fn offset(&self) -> usize {
        self.base + self.buf.len()
    }

    /// Everything before this has been released.
    #[inline(always)]
    pub(crate) fn emitted(&self) -> usize {
        self.emitted
    }

    /// The stream offset of `bytes()[0]`.
    #[inline(always)]
    pub(crate) fn base(&self) -> usize {
        self.base
    }

    /// The bytes kept, from `base()` to `offset()`.
    #[inline(always)]
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.buf
    }

    /// The byte at stream offset `p`, which must be kept.
    #[inline(always)]
    pub(crate) fn at(&self, p: usize) -> u8 {
        self.buf[p - self.base]
    }

    /// The byte before stream offset `p`, or `None` at the start of input.
    /// Only for streams with a thread matcher, whose tape always keeps it.
    #[inline(always)]
    pub(crate) fn look_behind(&self, p: usize) -> Option<u8> {
        (p > 0).then(|| self.buf[p - 1 - self.base])
    }

    /// The end of the last decided match, when the stream went on from it.
    #[inline(always)]
    pub(crate) fn last_end(&self) -> Option<usize> {
        self.last_end
    }

    /// Records that a match ending at `end` was decided.
    pub(crate) fn set_last_end(&mut self, end: Option<usize>) {
        self.last_end = end;
    }

    /// Appends a chunk of input.
    #[inline(always)]
    pub(crate) fn push(&mut self, chunk: &[u8]) {
        self.buf.extend_from_slice(chunk);
    }

    /// Appends a chunk of input as `push` does, but a fresh tape first
    /// takes room for what it keeps between compactions, so that a stream
    /// fed tokens allocates once, not at each doubling. For the literal
    /// matcher's token path (`feed_token_matches`, `commit_literals`).
    #[inline(always)]
    pub(crate) fn push_reserving(&mut self, chunk: &[u8]) {
        if self.buf.capacity() == 0 {
            self.buf.reserve(2 * COMPACT_MIN);
        }
        self.buf.extend_from_slice(chunk);
    }

    /// The bytes received but not yet released before stream offset
    /// `upto` (at least `emitted`, at most `offset()`).
    #[inline(always)]
    pub(crate) fn held_before(&self, upto: usize) -> &[u8] {
        &self.buf[self.emitted - self.base..upto - self.base]
    }

    /// Marks everything before `end - tail.len()` released and makes
    /// `tail` the tape's only bytes, ending at stream offset `end`: for a
    /// stream whose matchers never look behind the held bytes (all of
    /// them released up to `end - tail.len()`).
    #[inline(always)]
    pub(crate) fn restart(&mut self, end: usize, tail: &[u8]) {
        self.buf.clear();
        self.base = end - tail.len();
        self.emitted = self.base;
        if !tail.is_empty() {
            if self.buf.capacity() == 0 {
                self.buf.reserve(2 * COMPACT_MIN);
            }
            extend_small(&mut self.buf, tail);
        }
    }

    /// Takes back the last `n` bytes pushed, none of them released.
    pub(crate) fn unpush(&mut self, n: usize) {
        debug_assert!(self.offset() - n >= self.emitted && n <= self.buf.len());
        self.buf.truncate(self.buf.len() - n);
    }

    /// Marks everything before `upto` released and returns the bytes this
    /// released (empty when `upto <= emitted`).
    #[inline(always)]
    pub(crate) fn release(&mut self, upto: usize) -> &[u8] {
        if upto <= self.emitted {
            return &[];
        }
        let from = self.emitted - self.base;
        self.emitted = upto;
        &self.buf[from..upto - self.base]
    }

    /// Moves `emitted` to `p` without giving anything out (the bytes
    /// before are dropped, or were given out as a match).
    pub(crate) fn skip_to(&mut self, p: usize) {
        debug_assert!(p <= self.offset());
        self.emitted = p;
    }

    /// Records `bytes` as received and released, keeping the look-behind
    /// context; returns the new end of the tape.
    #[inline(always)]
    pub(crate) fn append_released(&mut self, bytes: &[u8]) -> usize {
        let end = self.offset() + bytes.len();
        if bytes.len() >= CONTEXT {
            self.buf.clear();
            self.buf.extend_from_slice(&bytes[bytes.len() - CONTEXT..]);
            self.base = end - CONTEXT;
        } else {
            self.buf.extend_from_slice(bytes);
            let dead = self.buf.len().saturating_sub(CONTEXT);
            if dead > 0 {
                // A copy of fixed size, cheaper than `drain`'s move.
                let mut context = [0; CONTEXT];
                context.copy_from_slice(&self.buf[dead..]);
                self.buf.clear();
                self.buf.extend_from_slice(&context);
                self.base += dead;
            }
        }
        self.emitted = end;
        end
    }

    /// Appends `chunk`, whose first `cut` bytes are released with
    /// everything before them (the caller gave them out in place), keeping
    /// the look-behind context: one copy where `append_released` and
    /// `push` would make two.
    #[inline(always)]
    pub(crate) fn push_released(&mut self, chunk: &[u8], cut: usize) {
        debug_assert!(self.emitted == self.offset() && cut <= chunk.len());
        let emitted = self.offset() + cut;
        if cut >= CONTEXT {
            self.buf.clear();
            self.buf.extend_from_slice(&chunk[cut - CONTEXT..]);
            self.base = emitted - CONTEXT;
            self.emitted = emitted;
        } else {
            self.buf.extend_from_slice(chunk);
            self.emitted = emitted;
            self.compact();
        }
    }

    /// Drops released bytes that are no longer needed as context, when they
    /// are at least half the buffer (so the cost is amortised linear) and
    /// at least `COMPACT_MIN` (so token-sized feeds do not move bytes each
    /// time).
    pub(crate) fn compact(&mut self) {
        let keep = self.emitted.saturating_sub(CONTEXT).max(self.base);
        let dead = keep - self.base;
        if dead >= COMPACT_MIN && dead >= self.buf.len() - dead {
            self.buf.drain(..dead);
            self.base = keep;
        }
    }

    /// Checks `base <= emitted <= offset()` (debug builds only).
    #[cfg(debug_assertions)]
    pub(crate) fn check_invariants(&self) {
        debug_assert!(self.base <= self.emitted && self.emitted <= self.offset());
    }

    /// Moves `p` (at or after `emitted`) forward past UTF-8 continuation
    /// bytes, to the next character boundary the tape can see.
    pub(crate) fn boundary_after(&self, p: usize) -> usize {
        let end = self.offset();
        let mut p = p.max(self.emitted);
        while p < end && is_continuation(self.at(p)) {
            p += 1;
        }
        p
    }

    /// Moves `p` (after `emitted`) back to the start of a character cut by
    /// it, not before `emitted`.
    pub(crate) fn boundary_before(&self, p: usize) -> usize {
        let end = self.offset();
        let mut p = p;
        while p > self.emitted && p < end && is_continuation(self.at(p)) {
            p -= 1;
        }
        p
    }

    /// The end of the tape, less a UTF-8 character cut by it (whose head is
    /// after `emitted`): what can be dropped without leaving the tail of a
    /// character whose head was dropped.
    pub(crate) fn end_before_cut(&self) -> usize {
        let mut end = self.offset();
        let back = (end - self.emitted).min(3);
        for k in 1..=back {
            let b = self.at(end - k);
            if !is_continuation(b) {
                if super::bytes::utf8_len(b) > k {
                    end -= k;
                }
                break;
            }
        }
        end
    }
}
