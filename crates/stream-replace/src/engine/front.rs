//! The stepping interface of the literal matcher's automata, and the
//! front table: DFA rows for the contiguous NFA's states nearest the start.
//!
//! A big literal set (100,000 deny-list terms) does not fit as a DFA, whose
//! table has a row per trie node; its contiguous NFA steps a byte with
//! several lookups spread over megabytes, following failure links. But
//! text spends most of its bytes in the trie's first levels: the longest
//! suffix of text that is a prefix of some literal is short. The front
//! table gives each of those states, as many as fit the size limit in
//! order of depth, a row with the NFA's transition for every byte class,
//! resolved once at build time. A row's entries are themselves front
//! states (offsets of their rows) or, tagged with `NFA_STATE`, the NFA's
//! own state IDs: deeper states, match states and the dead state. Stepping
//! from a front state is one lookup; from a tagged state, the NFA's step,
//! and its result is mapped back to its row if it has one. Each row has one
//! more entry after the classes: the state's depth entry (see
//! `literal::Program::entry`).
//!
//! The table is exact by construction: every entry is the NFA's own
//! transition, so the front steps through the same states as the NFA.

use aho_corasick::automaton::{Automaton, StateID};
use aho_corasick::nfa::contiguous;
use aho_corasick::{Anchored, PatternID, dfa};

/// The flag of a state's depth entry (`literal`'s depth map, a row's last
/// entry) when a trie edge goes out of it: a longer literal goes on.
pub(super) const HAS_CHILD: u32 = 1 << 31;

/// The tag of a front automaton's state that is the NFA's own: a state
/// without a row, whose ID is the NFA's.
pub(crate) const NFA_STATE: u32 = 1 << 30;

/// What the literal matcher asks of an automaton: `aho-corasick`'s
/// `Automaton` trait (sealed, so the front cannot implement it), narrowed
/// to unanchored stepping.
pub(crate) trait Step {
    /// The unanchored start state, if the automaton has one.
    fn start(&self) -> Option<StateID>;
    /// The state after `byte` from `sid`.
    fn next(&self, sid: StateID, byte: u8) -> StateID;
    /// Whether `sid` is a dead, match or (with a prefilter) start state.
    fn is_special(&self, sid: StateID) -> bool;
    fn is_dead(&self, sid: StateID) -> bool;
    fn is_match(&self, sid: StateID) -> bool;
    fn is_start(&self, sid: StateID) -> bool;
    /// How many patterns match in match state `sid`.
    fn match_len(&self, sid: StateID) -> usize;
    /// The `index`th pattern matching in match state `sid`.
    fn match_pattern(&self, sid: StateID, index: usize) -> PatternID;
    fn pattern_len(&self, pid: PatternID) -> usize;
}

/// `Step` for `aho-corasick`'s own automata, by their `Automaton` methods.
macro_rules! step_by_automaton {
    ($t:ty) => {
        impl Step for $t {
            #[inline(always)]
            fn start(&self) -> Option<StateID> {
                self.start_state(Anchored::No).ok()
            }
            #[inline(always)]
            fn next(&self, sid: StateID, byte: u8) -> StateID {
                self.next_state(Anchored::No, sid, byte)
            }
            #[inline(always)]
            fn is_special(&self, sid: StateID) -> bool {
                Automaton::is_special(self, sid)
            }
            #[inline(always)]
            fn is_dead(&self, sid: StateID) -> bool {
                Automaton::is_dead(self, sid)
            }
            #[inline(always)]
            fn is_match(&self, sid: StateID) -> bool {
                Automaton::is_match(self, sid)
            }
            #[inline(always)]
            fn is_start(&self, sid: StateID) -> bool {
                Automaton::is_start(self, sid)
            }
            #[inline(always)]
            fn match_len(&self, sid: StateID) -> usize {
                Automaton::match_len(self, sid)
            }
            #[inline(always)]
            fn match_pattern(&self, sid: StateID, index: usize) -> PatternID {
                Automaton::match_pattern(self, sid, index)
            }
            #[inline(always)]
            fn pattern_len(&self, pid: PatternID) -> usize {
                Automaton::pattern_len(self, pid)
            }
        }
    };
}

step_by_automaton!(dfa::DFA);
step_by_automaton!(contiguous::NFA);

/// The contiguous NFA with its front table.
#[derive(Debug)]
pub(crate) struct Front {
    nfa: contiguous::NFA,
    /// The class of each byte: bytes that no literal has (in either case,
    /// when caseless) lead to the same state from every state, so they
    /// share class 0 (unless every byte value occurs: then each byte is
    /// its own class).
    classes: [u8; 256],
    /// The number of classes: a row's depth entry is at this offset.
    width: usize,
    /// The rows, `width + 1` entries each; the start state's is the first,
    /// so the start state is 0.
    rows: Vec<u32>,
    /// The NFA's ID of each row's state, to map a state the NFA steps to
    /// back to its row: open addressing, `u32::MAX` for an empty slot.
    keys: Vec<u32>,
    /// The row offset of the state in the same slot of `keys`.
    offsets: Vec<u32>,
    /// Whether the NFA's start state is special (it is with a prefilter).
    start_special: bool,
}

/// The slot of NFA state `key` in a table of `mask + 1` slots.
#[inline(always)]
fn slot(key: u32, mask: usize) -> usize {
    (key.wrapping_mul(0x9E37_79B1) >> 8) as usize & mask
}

impl Front {
    /// Gives rows to `nfa`'s start state and then to its other states
    /// but the dead and match states, by depth, as many as fit in `limit`
    /// bytes. `entries` are the states' depth entries (as in
    /// `literal::DepthMap`); every byte of `literals` is a class of its
    /// own (both cases of ASCII letters with `caseless`). Returns the NFA
    /// back when not even the start state's row fits, or when its state
    /// IDs would not leave room for the tag.
    // Called once per rule set: the size of the NFA given back does not
    // matter.
    #[allow(clippy::result_large_err)]
    pub(crate) fn new(
        nfa: contiguous::NFA,
        entries: impl Iterator<Item = (u32, u32)>,
        literals: &[&[u8]],
        caseless: bool,
        limit: usize,
    ) -> Result<Front, contiguous::NFA> {
        let Ok(start) = nfa.start_state(Anchored::No) else {
            return Err(nfa);
        };
        // (depth, ID, entry), the start state first.
        let mut order: Vec<(u32, u32, u32)> = entries
            .filter(|&(sid, _)| {
                let sid = StateID::new_unchecked(sid as usize);
                sid != start && !Automaton::is_special(&nfa, sid)
            })
            .map(|(sid, e)| (e & !HAS_CHILD, sid, e))
            .collect();
        order.push((0, start.as_u32(), 0));
        order.sort_unstable();
        let mut seen = [false; 256];
        for l in literals {
            for &b in *l {
                seen[b as usize] = true;
                if caseless {
                    seen[b.to_ascii_lowercase() as usize] = true;
                    seen[b.to_ascii_uppercase() as usize] = true;
                }
            }
        }
        let mut classes = [0u8; 256];
        let width = if seen.iter().all(|&s| s) {
            for (b, c) in classes.iter_mut().enumerate() {
                *c = b as u8;
            }
            256
        } else {
            let mut n = 1;
            for b in 0..256 {
                if seen[b] {
                    // At most 255 bytes are seen here.
                    classes[b] = n as u8;
                    n += 1;
                }
            }
            n
        };
        let row_bytes = (width + 1) * 4;
        let count = (limit / row_bytes).min(order.len());
        // Every NFA state ID is below the NFA's size in 4-byte words, and
        // every tagged one must stay a valid `StateID`.
        let ids = Automaton::memory_usage(&nfa) / 4;
        if count == 0
            || ids >= (NFA_STATE - 1) as usize
            || count * (width + 1) >= NFA_STATE as usize
        {
            return Err(nfa);
        }
        let order = &order[..count];
        let size = (2 * count).next_power_of_two();
        let mut keys = vec![u32::MAX; size];
        let mut offsets = vec![0; size];
        for (i, &(_, sid, _)) in order.iter().enumerate() {
            let mut j = slot(sid, size - 1);
            while keys[j] != u32::MAX {
                j = (j + 1) & (size - 1);
            }
            keys[j] = sid;
            offsets[j] = (i * (width + 1)) as u32;
        }
        let start_special = Automaton::is_special(&nfa, start);
        let mut front = Front {
            nfa,
            classes,
            width,
            rows: Vec::new(),
            keys,
            offsets,
            start_special,
        };
        let mut rows = vec![0; count * (width + 1)];
        // One byte of each class stands for all of it.
        let mut stands = [None; 256];
        for b in 0..=255u8 {
            stands[front.classes[b as usize] as usize].get_or_insert(b);
        }
        for (row, &(_, sid, entry)) in rows.chunks_exact_mut(width + 1).zip(order) {
            let sid = StateID::new_unchecked(sid as usize);
            for (c, b) in stands[..width].iter().enumerate() {
                let b = b.expect("every class has a byte");
                row[c] = front.encode(front.nfa.next_state(Anchored::No, sid, b));
            }
            row[width] = entry;
        }
        front.rows = rows;
        Ok(front)
    }

    /// The NFA under the table.
    #[inline(always)]
    pub(crate) fn nfa(&self) -> &contiguous::NFA {
        &self.nfa
    }

    /// The front state of NFA state `sid`: its row's offset, or `sid`
    /// tagged when it has none (it is deeper, or a dead or match state).
    #[inline(always)]
    fn encode(&self, sid: StateID) -> u32 {
        let key = sid.as_u32();
        let mask = self.keys.len() - 1;
        let mut j = slot(key, mask);
        loop {
            match self.keys[j] {
                k if k == key => return self.offsets[j],
                u32::MAX => return key | NFA_STATE,
                _ => j = (j + 1) & mask,
            }
        }
    }

    /// The NFA's ID of a tagged state.
    #[inline(always)]
    fn untag(sid: StateID) -> StateID {
        debug_assert!(sid.as_u32() & NFA_STATE != 0);
        StateID::new_unchecked((sid.as_u32() & !NFA_STATE) as usize)
    }

    /// The depth entry of `sid` when it has a row, or the NFA's ID of the
    /// tagged state.
    #[inline(always)]
    pub(crate) fn entry(&self, sid: StateID) -> Result<u32, u32> {
        let s = sid.as_u32();
        if s & NFA_STATE == 0 {
            Ok(self.rows[s as usize + self.width])
        } else {
            Err(s & !NFA_STATE)
        }
    }

    /// The NFA's step from a tagged state, mapped to the front.
    #[inline(never)]
    fn next_tagged(&self, sid: StateID, byte: u8) -> StateID {
        let to = self.nfa.next_state(Anchored::No, Self::untag(sid), byte);
        StateID::new_unchecked(self.encode(to) as usize)
    }

    /// The NFA's ID of `sid`, for the tests.
    #[cfg(test)]
    fn nfa_state(&self, sid: StateID) -> StateID {
        match self.entry(sid) {
            Err(s) => StateID::new_unchecked(s as usize),
            Ok(_) => {
                let j = self
                    .offsets
                    .iter()
                    .zip(&self.keys)
                    .position(|(&o, &k)| o == sid.as_u32() && k != u32::MAX)
                    .expect("a row is in the map");
                StateID::new_unchecked(self.keys[j] as usize)
            }
        }
    }

    /// How many states have rows.
    #[cfg(test)]
    fn rows(&self) -> usize {
        self.rows.len() / (self.width + 1)
    }
}

impl Step for Front {
    #[inline(always)]
    fn start(&self) -> Option<StateID> {
        Some(StateID::ZERO)
    }

    #[inline(always)]
    fn next(&self, sid: StateID, byte: u8) -> StateID {
        let s = sid.as_u32();
        if s & NFA_STATE == 0 {
            let c = self.classes[byte as usize] as usize;
            StateID::new_unchecked(self.rows[s as usize + c] as usize)
        } else {
            self.next_tagged(sid, byte)
        }
    }

    #[inline(always)]
    fn is_special(&self, sid: StateID) -> bool {
        if sid.as_u32() & NFA_STATE == 0 {
            sid == StateID::ZERO && self.start_special
        } else {
            Automaton::is_special(&self.nfa, Self::untag(sid))
        }
    }

    #[inline(always)]
    fn is_dead(&self, sid: StateID) -> bool {
        sid.as_u32() & NFA_STATE != 0 && Automaton::is_dead(&self.nfa, Self::untag(sid))
    }

    #[inline(always)]
    fn is_match(&self, sid: StateID) -> bool {
        sid.as_u32() & NFA_STATE != 0 && Automaton::is_match(&self.nfa, Self::untag(sid))
    }

    /// Only the start state's row is the start: the NFA's start state
    /// always maps to it.
    #[inline(always)]
    fn is_start(&self, sid: StateID) -> bool {
        sid == StateID::ZERO
    }

    #[inline(always)]
    fn match_len(&self, sid: StateID) -> usize {
        Automaton::match_len(&self.nfa, Self::untag(sid))
    }

    #[inline(always)]
    fn match_pattern(&self, sid: StateID, index: usize) -> PatternID {
        Automaton::match_pattern(&self.nfa, Self::untag(sid), index)
    }

    #[inline(always)]
    fn pattern_len(&self, pid: PatternID) -> usize {
        Automaton::pattern_len(&self.nfa, pid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aho_corasick::MatchKind;

    /// Stepped in lockstep with its NFA over random text, the front is in
    /// the NFA's state after every byte, with the same special states and
    /// matches, whether every state has a row, some, or only the start
    /// state; for ASCII, multibyte and caseless sets.
    #[test]
    fn front_steps_as_the_nfa() {
        let sets: Vec<(Vec<&[u8]>, bool)> = vec![
            (vec![b"password", b"pass", b"token", b"ok"], false),
            (vec![b"password", b"pass", b"token", b"ok"], true),
            (
                vec!["敏感词".as_bytes(), "😀x".as_bytes(), b"abc", b"bcd", b"b"],
                false,
            ),
            (vec![b"aaa", b"aab", b"ab", b"ba"], false),
        ];
        let mut rng = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        for (set, caseless) in sets {
            let alphabet: Vec<u8> = set
                .iter()
                .flat_map(|l| l.iter().copied())
                .chain(*b"zT ")
                .collect();
            for rows in [1, 2, 5, usize::MAX] {
                for prefilter in [false, true] {
                    let nnfa = aho_corasick::nfa::noncontiguous::NFA::builder()
                        .match_kind(MatchKind::LeftmostFirst)
                        .ascii_case_insensitive(caseless)
                        .prefilter(prefilter)
                        .build(&set)
                        .unwrap();
                    let build = || {
                        contiguous::NFA::builder()
                            .build_from_noncontiguous(&nnfa)
                            .unwrap()
                    };
                    let nfa = build();
                    // Every state a literal's prefix reaches, with a depth
                    // entry naming it.
                    let mut entries = std::collections::HashMap::new();
                    for l in &set {
                        let mut sid = nfa.start().unwrap();
                        for (k, &b) in l.iter().enumerate() {
                            sid = Step::next(&nfa, sid, b);
                            entries.entry(sid.as_u32()).or_insert(k as u32 + 1);
                        }
                    }
                    let width = Front::new(
                        build(),
                        entries.clone().into_iter(),
                        &set,
                        caseless,
                        usize::MAX,
                    )
                    .unwrap()
                    .width;
                    let limit = rows.saturating_mul((width + 1) * 4);
                    let front =
                        Front::new(build(), entries.clone().into_iter(), &set, caseless, limit)
                            .unwrap_or_else(|_| panic!("{set:?}: a row fits in {limit}"));
                    assert!(front.rows() >= 1);
                    assert!(front.rows() <= rows);
                    if rows == usize::MAX {
                        // Every state but the dead and match ones has a row.
                        for &k in entries.keys() {
                            let sid = StateID::new_unchecked(k as usize);
                            let tagged = front.encode(sid) & NFA_STATE != 0;
                            assert_eq!(
                                tagged,
                                Automaton::is_special(&nfa, sid) && !Automaton::is_start(&nfa, sid)
                            );
                        }
                    }
                    for _ in 0..300 {
                        let mut a = nfa.start().unwrap();
                        let mut f = front.start().unwrap();
                        for _ in 0..24 {
                            let b = alphabet[next() as usize % alphabet.len()];
                            let b = if next() % 5 == 0 {
                                b.to_ascii_uppercase()
                            } else {
                                b
                            };
                            a = Step::next(&nfa, a, b);
                            f = front.next(f, b);
                            assert_eq!(front.nfa_state(f), a, "{set:?}, {rows} rows");
                            assert_eq!(front.is_special(f), Step::is_special(&nfa, a));
                            assert_eq!(front.is_dead(f), Step::is_dead(&nfa, a));
                            assert_eq!(front.is_match(f), Step::is_match(&nfa, a));
                            assert_eq!(front.is_start(f), Step::is_start(&nfa, a));
                            if front.is_match(f) {
                                assert_eq!(front.match_len(f), Step::match_len(&nfa, a));
                                assert_eq!(
                                    front.match_pattern(f, 0),
                                    Step::match_pattern(&nfa, a, 0)
                                );
                            }
                            if let Ok(e) = front.entry(f) {
                                assert_eq!(e, entries.get(&a.as_u32()).copied().unwrap_or(0));
                            }
                            if front.is_dead(f) {
                                a = nfa.start().unwrap();
                                f = front.start().unwrap();
                            }
                        }
                    }
                }
            }
        }
    }

    /// A limit below one row gives the NFA back.
    #[test]
    fn no_row_no_front() {
        let set: [&[u8]; 2] = [b"abc", b"bcd"];
        let nfa = contiguous::NFA::builder()
            .match_kind(MatchKind::LeftmostFirst)
            .build(set)
            .unwrap();
        assert!(Front::new(nfa, std::iter::empty(), &set, false, 19).is_err());
    }
}
