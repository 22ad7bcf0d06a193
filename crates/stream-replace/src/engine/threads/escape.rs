//! Fast path: a thread stepped alone through text that leaves its state
//! as it is, skipped with `memchr`.
//!
//! Entered in the pending loop (`Core::run_pending`, see `suspend`), over
//! at least `ESCAPE_MIN` bytes not yet stepped, on a
//! dense DFA with frozen memos (so with `Prog::fast` set), when the one
//! thread it steps is in a state that every byte but at most three ASCII
//! bytes (its *escapes*; and, for some states, the non-ASCII bytes) keeps
//! where it is: the inside of an open `<think>[\s\S]*?</think>`, which
//! only `<` leaves. ("Where it is" allows for the two states a DFA keeps
//! when its rules look at word boundaries, after a word byte and after
//! any other: see `escapes_of`.) The loop then finds the next escape with
//! `memchr` instead of stepping each byte, as
//! `regex-automata` does for the accelerated states of its dense DFAs
//! (which the streams' DFA is built without: an accelerated state is a
//! special state, and every loop would leave its hot path for it).
//!
//! Exact because each skipped byte steps every state the thread can be in
//! during the run to the same non-special state, so the pending loop would
//! have stepped it and gone on: no match, no death, no quit. After the run
//! the thread is in the state the last skipped byte leads to from where it
//! was, which the loop steps once (`escapes_of` says why), and it reaches
//! the escape byte in the state the byte-by-byte loop would have.
//!
//! The escapes are worked out when the memos are frozen (`Prog::freeze`),
//! for each state the frozen futures reach, from its transition on each
//! byte class: no work while streaming, and none for a lazy DFA.

use memchr::{memchr, memchr2, memchr3};

use super::state::{entered, path};
use crate::engine::dfa::Dfa;

/// The shortest stretch of text the pending loop searches for escapes:
/// over a token-sized feed, a search costs more than the steps it saves.
pub(super) const ESCAPE_MIN: usize = 16;

/// The escapes of one DFA state (see `escapes_of`), packed in a word: 0
/// when the state has none worked out (more than three ASCII bytes are
/// escapes, or it was not reached when the memos were frozen); otherwise
/// the `n` ASCII escape bytes (0 to 3) in the low bytes, `n + 1` in bits
/// 24 to 27, and bit 28 set when some non-ASCII byte is an escape too (the
/// search then also stops at the first non-ASCII byte: stopping early is
/// always exact, since the loop steps that byte as it would have).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Escapes(u32);

/// See `Escapes`: some non-ASCII byte leaves the state.
const NON_ASCII: u32 = 1 << 28;

impl Escapes {
    /// No escapes known: the state is stepped byte by byte.
    pub(super) const NONE: Escapes = Escapes(0);

    /// The most ASCII escapes a state may have to be skipped through.
    pub(super) const MAX: usize = 3;

    /// A state that only the ASCII `bytes` leave (at most `MAX` of them;
    /// none for a state that every ASCII byte keeps), and with
    /// `non_ascii`, some non-ASCII bytes.
    pub(super) fn new(bytes: &[u8], non_ascii: bool) -> Escapes {
        debug_assert!(bytes.len() <= Self::MAX && bytes.is_ascii());
        let mut word = ((bytes.len() as u32) + 1) << 24;
        for (i, &b) in bytes.iter().enumerate() {
            word |= u32::from(b) << (8 * i);
        }
        if non_ascii {
            word |= NON_ASCII;
        }
        Escapes(word)
    }

    /// The packed word, as the frozen memos keep it.
    pub(super) fn word(self) -> u32 {
        self.0
    }

    /// The escapes of the state at `index` in a table of packed words
    /// (`FrozenMemos::escapes`), if it has any.
    #[inline(always)]
    pub(super) fn of(table: &[u32], index: Option<usize>) -> Escapes {
        index
            .and_then(|i| table.get(i))
            .map_or(Escapes::NONE, |&e| Escapes(e))
    }

    /// Whether the state can be skipped through.
    #[inline(always)]
    pub(super) fn is_some(self) -> bool {
        self.0 != 0
    }

    /// The index in `hay` of the first escape (with non-ASCII escapes, of
    /// the first escape or non-ASCII byte), or `hay.len()` if there is
    /// none. Only for `is_some()`.
    #[inline(always)]
    pub(super) fn find(self, hay: &[u8]) -> usize {
        debug_assert!(self.is_some());
        let [b0, b1, b2, _] = self.0.to_le_bytes();
        let found = match (self.0 >> 24) & 0xF {
            1 => None,
            2 => memchr(b0, hay),
            3 => memchr2(b0, b1, hay),
            _ => memchr3(b0, b1, b2, hay),
        };
        let end = found.unwrap_or(hay.len());
        if self.0 & NON_ASCII == 0 || hay[..end].is_ascii() {
            return end;
        }
        hay[..end].iter().position(|b| !b.is_ascii()).unwrap_or(end)
    }
}

/// The pending loop (`Core::run_pending`) over `hay` from `i`, for a
/// thread in state `sid` of a DFA with frozen memos, whose table of
/// escapes is `escapes` (`FrozenMemos::escapes`): steps it byte by
/// byte, and where its state has escapes, skips to the next of them.
/// Stops, without stepping it, at the first byte that leads to a special
/// state, or at the end. Returns where it stopped and the state there.
#[inline(always)]
pub(super) fn step_escaping<D: Dfa>(
    dfa: &D,
    cache: &mut D::Cache,
    escapes: &[u32],
    hay: &[u8],
    mut i: usize,
    mut sid: D::Sid,
) -> (usize, D::Sid) {
    // Frozen memos are only made for a DFA without a cache to clear.
    debug_assert!(D::STABLE);
    let mut esc = Escapes::of(escapes, dfa.index(sid));
    while i < hay.len() {
        if esc.is_some() {
            let k = esc.find(&hay[i..]);
            if k > 0 {
                // After the run, the thread is in the state its last byte
                // leads to (`escapes_of`).
                let Ok(n) = dfa.next_state(cache, sid, hay[i + k - 1]) else {
                    break;
                };
                debug_assert!(!dfa.is_special(n));
                entered(path::ESCAPE);
                i += k;
                sid = n;
                esc = Escapes::of(escapes, dfa.index(sid));
                if i == hay.len() {
                    break;
                }
            }
        }
        let Ok(n) = dfa.next_state(cache, sid, hay[i]) else {
            break;
        };
        if dfa.is_special(n) {
            break;
        }
        if n != sid {
            esc = Escapes::of(escapes, dfa.index(n));
        }
        sid = n;
        i += 1;
    }
    (i, sid)
}

/// Works out the escapes of a non-special state `sid`, given `next`, the
/// DFA's transition (`None` where it cannot say), a representative of
/// each byte class and `members`, the bytes of each class (by class
/// index, `class(b)`).
///
/// A DFA whose rules look at word boundaries keeps two states where
/// others keep one: after a word byte and after any other byte. So the
/// states a run of ordinary bytes keeps a thread in are two, `a` (after
/// `a`) and `b` (after a space), and a byte is not an escape when every
/// state of the three (`sid`, `a`, `b`) steps it to the same state, `a`
/// or `b`: after a run of such bytes the thread is in `next(sid, last)`,
/// whatever the run. `NONE` when `a` or `b` is special or more than
/// `Escapes::MAX` ASCII bytes are escapes.
pub(super) fn escapes_of<S: Copy + Eq>(
    sid: S,
    representatives: impl Iterator<Item = u8>,
    mut next: impl FnMut(S, u8) -> Option<S>,
    is_special: impl Fn(S) -> bool,
    class: impl Fn(u8) -> usize,
    members: &[Vec<u8>],
) -> Escapes {
    let (Some(a), Some(b)) = (next(sid, b'a'), next(sid, b' ')) else {
        return Escapes::NONE;
    };
    if is_special(a) || is_special(b) {
        return Escapes::NONE;
    }
    let mut bytes = [0u8; Escapes::MAX];
    let mut n = 0;
    let mut non_ascii = false;
    for r in representatives {
        let Some(to) = next(sid, r) else {
            return Escapes::NONE;
        };
        if (to == a || to == b) && next(a, r) == Some(to) && next(b, r) == Some(to) {
            continue;
        }
        for &m in &members[class(r)] {
            if !m.is_ascii() {
                non_ascii = true;
                continue;
            }
            if n == Escapes::MAX {
                return Escapes::NONE;
            }
            bytes[n] = m;
            n += 1;
        }
    }
    Escapes::new(&bytes[..n], non_ascii)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::Program;
    use super::super::program::Progs;
    use super::super::state::path;
    use super::super::tests::{CASES, same_as_general, took};
    use super::*;
    use crate::config::{Config, DfaKind};

    /// The naive oracle of `find`: the first byte of `hay` in `bytes`
    /// (or, with `non_ascii`, not ASCII).
    fn naive_find(bytes: &[u8], non_ascii: bool, hay: &[u8]) -> usize {
        hay.iter()
            .position(|b| bytes.contains(b) || non_ascii && !b.is_ascii())
            .unwrap_or(hay.len())
    }

    /// Every state given escapes in the frozen memos of a dense program
    /// steps to itself on every other byte and leaves on each escape; the
    /// inside of an open `<think>` is one of them, with `<` its escape.
    #[test]
    fn frozen_escapes_are_the_bytes_that_leave_the_state() {
        // The second set looks at word boundaries: its DFA keeps two
        // states inside the block.
        for second in [r"\w+@\w+", r"(?-u:\b)\d{3}-\d{2}(?-u:\b)"] {
            frozen_escapes_in(&[r"<think>[\s\S]*?</think>".to_string(), second.to_string()]);
        }
    }

    fn frozen_escapes_in(rules: &[String]) {
        let prog = Program::new(rules, &Config::new().dfa(DfaKind::Dense)).unwrap();
        let Progs::Dense(p) = &prog.0 else {
            panic!("a dense program was asked for");
        };
        let frozen = p
            .frozen
            .as_deref()
            .expect("a dense program freezes its memos");
        let dfa = &p.dfa;
        let mut with = 0;
        let mut only_lt = false;
        // Every state id of a dense DFA is its index times the stride.
        for index in 0..frozen.escapes.len() {
            let esc = Escapes(frozen.escapes[index]);
            if !esc.is_some() {
                continue;
            }
            with += 1;
            let sid =
                regex_automata::util::primitives::StateID::new(index << dfa.0.stride2()).unwrap();
            assert!(!dfa.is_special(sid));
            let step = |x, c| dfa.next_state(&mut (), x, c).unwrap();
            let (a, b) = (step(sid, b'a'), step(sid, b' '));
            // The bytes a skip may not pass: those on which the three
            // states disagree or which lead elsewhere.
            let mut leave = Vec::new();
            for c in 0..=255u8 {
                let to = step(sid, c);
                if !((to == a || to == b) && step(a, c) == to && step(b, c) == to) {
                    leave.push(c);
                }
            }
            let ascii: Vec<u8> = leave.iter().copied().filter(u8::is_ascii).collect();
            let non_ascii = ascii.len() < leave.len();
            assert!(ascii.len() <= Escapes::MAX, "state {index}");
            assert_eq!(esc, Escapes::new(&ascii, non_ascii), "state {index}");
            // Every byte, in several orders; and the state a skip lands
            // in is the one stepping each byte reaches.
            let mut hay: Vec<u8> = (0..=255u8).collect();
            hay.extend(b"words and <more words>, \xc3\xa9 some<".iter());
            for _ in 0..5 {
                let k = esc.find(&hay);
                assert_eq!(k, naive_find(&ascii, non_ascii, &hay));
                if k > 0 {
                    let stepped = hay[..k].iter().fold(sid, |x, &c| step(x, c));
                    assert_eq!(stepped, step(sid, hay[k - 1]), "state {index}");
                }
                hay.rotate_left(97);
            }
            only_lt |= ascii == [b'<'];
        }
        assert!(with > 0 && only_lt, "{rules:?}: {with} states with escapes");
    }

    /// A long `<think>` block, suspended and then stepped alone, is
    /// skipped to each `<`; closed or not, the matches are the general
    /// loop's.
    #[test]
    fn a_long_think_block_is_skipped_to_each_lt() {
        let body = "some words a<b and more words, x@y.org 123-45, ".repeat(6);
        for second in [r"\w+@\w+\.com", r"(?-u:\b)\d{3}-\d{2}(?-u:\b)"] {
            let rules = [r"<think>[\s\S]*?</think>", second];
            for close in ["</think> a@b.com 123-45", "</thin a@b.com 123-45", ""] {
                let input = format!("pre <think>{body}{close}");
                let runs = same_as_general(&rules, input.as_bytes(), &[9, 100, 170]);
                // Dense only: the other configurations step a lazy DFA.
                assert!(runs[0].entered[path::ESCAPE] > 0, "{second} {close:?}");
                assert!(!took(&runs[1..], path::ESCAPE));
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(CASES))]
        #[test]
        fn find_is_the_first_escape(
            bytes in prop::collection::vec(0u8..128, 0..=3),
            non_ascii in any::<bool>(),
            hay in prop::collection::vec(prop_oneof![Just(b'<'), Just(b'a'), any::<u8>()], 0..80),
        ) {
            let esc = Escapes::new(&bytes, non_ascii);
            prop_assert_eq!(esc.find(&hay), naive_find(&bytes, non_ascii, &hay));
        }

        #[test]
        fn skipping_to_escapes_decides_as_the_general_loop(
            head in "[a-c <>/@.]{0,8}",
            body in "[a-c <>/@.\né😀]{60,120}",
            tail in "(</a>|</b>|</|[a-c@. ]{0,5})",
            cuts in prop::collection::vec(0usize..150, 0..5),
        ) {
            let input = format!("{head}<a>{body}{tail}");
            same_as_general(&[r"<a>[\s\S]*?</a>", r"<b>[^<]*</b>", r"\w+@\w+\.[a-c]"], input.as_bytes(), &cuts);
        }
    }
}
