//! The thread matcher's DFA and what its tight loops need of it: which
//! bytes can start a thread after which look-behind, the byte classes and
//! look-behind kinds the memos (`single`, `tuples`) key on, and the start
//! of a thread as those memos see it.
//!
//! The program (`threads::program::Prog`) derefs to this; the memos take only this,
//! so they do not depend on the thread loop.

use regex_automata::Anchored;
use regex_automata::util::start;

use super::bytes::is_continuation;
use super::dfa::Dfa;

/// A DFA thread: where it started, and its state.
#[derive(Clone, Copy, Debug)]
pub(super) struct Thread<S> {
    pub(super) start: usize,
    pub(super) sid: S,
}

/// The DFA the thread matcher steps, with its start tables.
#[derive(Debug)]
pub(crate) struct Automaton<D: Dfa> {
    pub(super) dfa: D,
    /// For each look-behind (index 0: start of input, `1 + b`: byte `b`),
    /// 256 bits: whether a thread started after it survives its first
    /// byte. Quit bytes and unknown starts are set.
    pub(super) may_start: Box<[[u64; 4]; 257]>,
    /// Byte classes for `single`: bytes in one class step every DFA state
    /// alike, are all UTF-8 continuation bytes or none, and are of one
    /// look-behind kind.
    pub(super) classes: [u8; 256],
    pub(super) nclasses: usize,
    /// Set when the DFA steps the rules with their `\b` rewritten: the
    /// bytes whose thread, started after a non-ASCII character, steps
    /// differently when that character is a word character (see
    /// `Prog::start_lb`). The tight loops leave such a start to the
    /// general loop, which decodes the character.
    pub(super) word_lb: Option<Box<[u64; 4]>>,
}

impl<D: Dfa> Automaton<D> {
    /// Whether a thread starting with byte `b` after the byte `lb` needs
    /// `start_lb`, which the tight loops leave to the general loop.
    #[inline]
    pub(super) fn needs_start_lb(&self, lb: Option<u8>, b: u8) -> bool {
        match (&self.word_lb, lb) {
            (Some(row), Some(x)) if !x.is_ascii() => row[(b >> 6) as usize] & (1 << (b & 63)) != 0,
            _ => false,
        }
    }

    /// For the memos of the tight loops (`single`, `tuples`): what they
    /// make of the thread the general loop would start at byte `b`, whose
    /// look-behind is `lb`, with the cache at `clears` clears.
    #[inline]
    pub(super) fn memo_start(
        &self,
        cache: &mut D::Cache,
        clears: usize,
        lb: Option<u8>,
        b: u8,
    ) -> MemoStart<D::Sid> {
        if is_continuation(b) || !self.may_start(lb, b) {
            return MemoStart::No;
        }
        if self.needs_start_lb(lb, b) {
            return MemoStart::Exit;
        }
        let cfg = start::Config::new().anchored(Anchored::Yes).look_behind(lb);
        let Ok(s0) = self.dfa.start_state(cache, &cfg) else {
            return MemoStart::GaveUp;
        };
        let Ok(n0) = self.dfa.next_state(cache, s0, b) else {
            return MemoStart::GaveUp;
        };
        if D::clear_count(cache) != clears {
            return MemoStart::Stale;
        }
        if self.dfa.is_dead(n0) {
            MemoStart::No
        } else if self.dfa.is_special(n0) {
            MemoStart::Exit
        } else {
            MemoStart::Thread(n0)
        }
    }

    /// The look-behind kind of the byte before a position.
    #[inline(always)]
    pub(super) fn kind(&self, lb: Option<u8>) -> u8 {
        lb.map_or(KIND_TEXT, byte_kind)
    }

    /// Whether a thread may survive its first byte `b` after `lb`.
    #[inline(always)]
    pub(super) fn may_start(&self, lb: Option<u8>, b: u8) -> bool {
        let row = &self.may_start[lb.map_or(0, |b| b as usize + 1)];
        row[(b >> 6) as usize] & (1 << (b & 63)) != 0
    }
}

/// Look-behind kinds, finer than the DFA's start states: start of input,
/// `\n`, `\r`, ASCII word byte, other ASCII byte, non-ASCII byte.
pub(super) const KIND_TEXT: u8 = 0;

/// See `Prog::memo_start`.
pub(super) enum MemoStart<S> {
    /// No thread starts there, or it dies on its first byte.
    No,
    /// A thread starts, in this state after its first byte.
    Thread(S),
    /// The general loop's business, whatever the cache: the thread is in
    /// a match or quit state after its first byte, or its start state
    /// depends on the character before (`Prog::start_lb`).
    Exit,
    /// The lazy DFA gave up: the general loop's business this time.
    GaveUp,
    /// The cache was cleared on the way.
    Stale,
}

/// A look-behind of each kind, in the order of the kinds (`byte_kind`).
pub(super) const LOOK_BEHINDS: [Option<u8>; 6] = [
    None,
    Some(b'\n'),
    Some(b'\r'),
    Some(b'a'),
    Some(b' '),
    Some(0xC3),
];

/// The look-behind kind of a byte.
#[inline(always)]
pub(super) fn byte_kind(b: u8) -> u8 {
    // One load, where the one-thread loop enters on every small feed.
    BYTE_KINDS[b as usize]
}

/// `byte_kind` of every byte.
const BYTE_KINDS: [u8; 256] = {
    let mut kinds = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        kinds[b] = match b as u8 {
            b'\n' => 1,
            b'\r' => 2,
            b'0'..=b'9' | b'A'..=b'Z' | b'a'..=b'z' | b'_' => 3,
            0..=0x7F => 4,
            _ => 5,
        };
        b += 1;
    }
    kinds
};

/// `Prog::word_lb`: the bytes after which a thread started after a
/// non-ASCII word character (look-behind `a`) is in another state than
/// one started after another non-ASCII character.
pub(super) fn word_lb_row<D: Dfa>(dfa: &D) -> [u64; 4] {
    let mut cache = dfa.create_cache();
    let mut row = [0u64; 4];
    for b in 0..=255u8 {
        let mut after = |lb: u8| {
            let cfg = start::Config::new()
                .anchored(Anchored::Yes)
                .look_behind(Some(lb));
            let s = dfa.start_state(&mut cache, &cfg).ok()?;
            let n = dfa.next_state(&mut cache, s, b).ok()?;
            Some((n, D::clear_count(&cache)))
        };
        let (word, other) = (after(b'a'), after(0xC3));
        // Different, unknown, or made in different generations of the
        // cache (their ids then say nothing): left to the general loop.
        let same = matches!((word, other), (Some(w), Some(o)) if w == o);
        if !same {
            row[(b >> 6) as usize] |= 1 << (b & 63);
        }
    }
    row
}

/// The row of `Program::may_start` for one look-behind. A cache clear
/// invalidates the start state held here, so it is fetched again; each
/// transition's answer is valid whatever the cache did meanwhile.
pub(super) fn start_row<D: Dfa>(dfa: &D, cache: &mut D::Cache, lb: Option<u8>) -> [u64; 4] {
    let cfg = start::Config::new().anchored(Anchored::Yes).look_behind(lb);
    let mut row = [0u64; 4];
    let mut sid = None;
    let mut clears = D::clear_count(cache);
    for b in 0..=255u8 {
        if D::clear_count(cache) != clears {
            sid = None;
        }
        let s = match sid {
            Some(s) => s,
            None => match dfa.start_state(cache, &cfg) {
                Ok(s) => {
                    clears = D::clear_count(cache);
                    sid = Some(s);
                    s
                }
                // A quit look-behind: any byte may start a thread, except a
                // continuation byte (0x80..=0xBF, the third word), where no
                // thread ever starts.
                Err(_) => return [u64::MAX, u64::MAX, 0, u64::MAX],
            },
        };
        if dfa.is_dead(s) {
            return row;
        }
        let alive = match dfa.next_state(cache, s, b) {
            Ok(next) => !dfa.is_dead(next),
            Err(_) => true,
        };
        if alive && !is_continuation(b) {
            row[(b >> 6) as usize] |= 1 << (b & 63);
        }
    }
    row
}
