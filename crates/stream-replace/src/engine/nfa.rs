//! The slow, exact fallback: the lazy DFA's own Thompson NFA simulated one
//! anchored thread set per start position, PikeVM style.
//!
//! It is used where the lazy DFA cannot go on: on a non-ASCII byte when a
//! rule uses Unicode word look-around (a quit byte), and after a cache
//! clear invalidated the DFA states a stream held. It evaluates look-around
//! with `LookMatcher` on the held buffer, so the caller must only step a
//! position once the character after it is complete in the buffer (or the
//! input has ended), and must keep four bytes of look-behind context.

use regex_automata::PatternID;
use regex_automata::nfa::thompson::{NFA, State};
use regex_automata::util::primitives::StateID;

/// A thread of the NFA fallback: the states it reached by the last byte it
/// stepped, not yet closed over epsilon transitions (closing needs the
/// character at the current position for look-around).
#[derive(Debug)]
pub(crate) struct NThread {
    /// The stream offset where it started.
    pub(crate) start: usize,
    pub(crate) targets: Vec<StateID>,
}

/// Per-stream scratch space of the simulation.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    visited: Vec<u32>,
    generation: u32,
    stack: Vec<StateID>,
    /// Spare sets, to avoid an allocation per byte.
    pool: Vec<Vec<StateID>>,
}

impl Scratch {
    pub(crate) fn take_set(&mut self) -> Vec<StateID> {
        let mut v = self.pool.pop().unwrap_or_default();
        v.clear();
        v
    }

    pub(crate) fn give_set(&mut self, v: Vec<StateID>) {
        if self.pool.len() < 64 {
            self.pool.push(v);
        }
    }

    fn next_generation(&mut self, nfa: &NFA) {
        if self.visited.len() != nfa.states().len() || self.generation == u32::MAX {
            self.visited.clear();
            self.visited.resize(nfa.states().len(), 0);
            self.generation = 0;
        }
        self.generation += 1;
    }

    /// Adds the epsilon closure of `start` at haystack position `at` to `out`,
    /// in priority order, keeping only the states that consume a byte or
    /// match. Shares the visited set of the current generation. Without
    /// `looks`, gives up and returns false on the first look-around state
    /// (for when the bytes after `at` are not known yet).
    fn closure(
        &mut self,
        nfa: &NFA,
        start: StateID,
        hay: &[u8],
        at: usize,
        looks: bool,
        out: &mut Vec<StateID>,
    ) -> bool {
        self.stack.push(start);
        while let Some(id) = self.stack.pop() {
            let seen = &mut self.visited[id.as_usize()];
            if *seen == self.generation {
                continue;
            }
            *seen = self.generation;
            match nfa.state(id) {
                State::ByteRange { .. }
                | State::Sparse(_)
                | State::Dense(_)
                | State::Match { .. } => out.push(id),
                State::Look { look, next } => {
                    if !looks {
                        self.stack.clear();
                        return false;
                    }
                    if nfa.look_matcher().matches(*look, hay, at) {
                        self.stack.push(*next);
                    }
                }
                State::Union { alternates } => {
                    self.stack.extend(alternates.iter().rev().copied());
                }
                State::BinaryUnion { alt1, alt2 } => {
                    self.stack.push(*alt2);
                    self.stack.push(*alt1);
                }
                State::Capture { next, .. } => self.stack.push(*next),
                State::Fail => {}
            }
        }
        true
    }

    /// Closes a thread's pending `targets` (in priority order) at position
    /// `at` into the set of states ready to step there. See `closure` for
    /// `looks` and the return value.
    pub(crate) fn close(
        &mut self,
        nfa: &NFA,
        targets: &[StateID],
        hay: &[u8],
        at: usize,
        looks: bool,
        out: &mut Vec<StateID>,
    ) -> bool {
        self.next_generation(nfa);
        targets
            .iter()
            .all(|&t| self.closure(nfa, t, hay, at, looks, out))
    }

    /// Steps a closed set over the byte `b`, writing the (not yet closed)
    /// targets to `out` in priority order. Returns the pattern of a match
    /// ending before `b`, if the set holds one; the states of lower priority
    /// than that match are dropped, as leftmost-first semantics want.
    pub(crate) fn step(
        nfa: &NFA,
        closed: &[StateID],
        b: u8,
        out: &mut Vec<StateID>,
    ) -> Option<PatternID> {
        for &id in closed {
            let next = match nfa.state(id) {
                State::Match { pattern_id } => return Some(*pattern_id),
                State::ByteRange { trans } => trans.matches_byte(b).then_some(trans.next),
                State::Sparse(sparse) => sparse.matches_byte(b),
                State::Dense(dense) => dense.matches_byte(b),
                _ => None,
            };
            // Duplicates are harmless: closing skips states already visited.
            out.extend(next);
        }
        None
    }

    /// The pattern of the first match state of a closed set: the match that
    /// ends where the set was closed, when no more bytes can come (or when
    /// it is the set's first state).
    pub(crate) fn first_match(nfa: &NFA, closed: &[StateID]) -> Option<PatternID> {
        closed.iter().find_map(|&id| match nfa.state(id) {
            State::Match { pattern_id } => Some(*pattern_id),
            _ => None,
        })
    }

    /// Whether `id` is a match state, and for which pattern.
    pub(crate) fn match_of(nfa: &NFA, id: StateID) -> Option<PatternID> {
        match nfa.state(id) {
            State::Match { pattern_id } => Some(*pattern_id),
            _ => None,
        }
    }
}

/// The bytes a match can start with, over-approximated: the bytes that
/// some state reachable from the anchored start by epsilon transitions
/// consumes, every look-around taken as passing. Returns every byte when
/// a match can be empty (its start then depends on look-around alone).
pub(crate) fn first_bytes(nfa: &NFA) -> [u64; 4] {
    let mut set = [0u64; 4];
    let mut add = |lo: u8, hi: u8| {
        for b in lo..=hi {
            set[(b >> 6) as usize] |= 1 << (b & 63);
        }
    };
    let mut seen = vec![false; nfa.states().len()];
    let mut stack = vec![nfa.start_anchored()];
    while let Some(id) = stack.pop() {
        if std::mem::replace(&mut seen[id.as_usize()], true) {
            continue;
        }
        match nfa.state(id) {
            State::ByteRange { trans } => add(trans.start, trans.end),
            State::Sparse(sparse) => {
                for t in sparse.transitions.iter() {
                    add(t.start, t.end);
                }
            }
            State::Dense(dense) => {
                for (b, next) in dense.transitions.iter().enumerate() {
                    if *next != StateID::ZERO {
                        add(b as u8, b as u8);
                    }
                }
            }
            State::Match { .. } => return [u64::MAX; 4],
            state => push_epsilons(state, &mut stack),
        }
    }
    set
}

/// Pushes the states an epsilon transition of `state` leads to onto
/// `stack`, every look-around taken as passing, in no particular order;
/// nothing for a state that consumes a byte, matches or fails.
pub(crate) fn push_epsilons(state: &State, stack: &mut Vec<StateID>) {
    match state {
        State::Look { next, .. } | State::Capture { next, .. } => stack.push(*next),
        State::Union { alternates } => stack.extend(alternates.iter().copied()),
        State::BinaryUnion { alt1, alt2 } => stack.extend([*alt1, *alt2]),
        State::ByteRange { .. }
        | State::Sparse(_)
        | State::Dense(_)
        | State::Match { .. }
        | State::Fail => {}
    }
}
