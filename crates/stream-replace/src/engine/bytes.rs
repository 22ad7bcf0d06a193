//! Byte-level helpers shared by the tape and the matchers: UTF-8 lengths,
//! and the hasher of automaton state ids.

/// Whether `b` is a UTF-8 continuation byte.
#[inline(always)]
pub(super) fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

/// A multiplicative hash for automaton state ids and tuples of them
/// (small integers from the automaton, no adversary), where SipHash
/// showed in the profiles of the memos looked up per feed or per byte.
/// `IdHasher(seed)` starts a tuple's hash from a seed.
#[derive(Default)]
pub(super) struct IdHasher(pub(super) u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        // The low bits of the product, which pick the bucket, are weak.
        self.0 ^ (self.0 >> 29)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u32(&mut self, n: u32) {
        // The rotation makes a tuple's hash depend on its order.
        self.0 = (self.0.rotate_left(5) ^ u64::from(n)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// The length of the UTF-8 encoding that starts with `b`, or 1 where `b`
/// cannot start one (as `regex-automata`'s own decoder sees it).
pub(super) fn utf8_len(b: u8) -> usize {
    match b {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => 1,
    }
}
