//! The slow, exact fallback: the lazy DFA's own Thompson NFA simulated one
//! anchored thread set per start position, PikeVM style.
//!
//! It is used where the lazy DFA cannot go on: on a non-ASCII byte when a
//! rule uses Unicode word look-around (a quit byte), and after a cache
//! clear invalidated the DFA states a stream held. It evaluates look-around
//! with `LookMatcher` on the held buffer, so the caller must only step a
//! position once the character after it is complete in the buffer (or the
//! input has ended), and must keep four bytes of look-behind context.

use regex_automata::nfa::thompson::{State, NFA};
use regex_automata::util::primitives::StateID;
use regex_automata::PatternID;

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
    /// match. Shares the visited set of the current generation.
    fn closure(
        &mut self,
        nfa: &NFA,
        start: StateID,
        hay: &[u8],
        at: usize,
        out: &mut Vec<StateID>,
    ) {
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
    }

    /// The thread set of an anchored search starting at `at`.
    pub(crate) fn start(&mut self, nfa: &NFA, hay: &[u8], at: usize, out: &mut Vec<StateID>) {
        self.next_generation(nfa);
        self.closure(nfa, nfa.start_anchored(), hay, at, out);
    }

    /// Steps the set `curr` (at position `at`) over the byte `hay[at]`,
    /// writing the set at `at + 1` to `out`. Returns the pattern of a match
    /// ending at `at`, if the set holds one; the states of lower priority than
    /// that match are dropped, as leftmost-first semantics want.
    pub(crate) fn step(
        &mut self,
        nfa: &NFA,
        curr: &[StateID],
        hay: &[u8],
        at: usize,
        out: &mut Vec<StateID>,
    ) -> Option<PatternID> {
        self.next_generation(nfa);
        let b = hay[at];
        for &id in curr {
            let next = match nfa.state(id) {
                State::Match { pattern_id } => return Some(*pattern_id),
                State::ByteRange { trans } => trans.matches_byte(b).then_some(trans.next),
                State::Sparse(sparse) => sparse.matches_byte(b),
                State::Dense(dense) => dense.matches_byte(b),
                _ => None,
            };
            if let Some(next) = next {
                self.closure(nfa, next, hay, at + 1, out);
            }
        }
        None
    }

    /// The pattern of a match ending at the end of input, if `curr` (the set
    /// at the end of input) holds one.
    pub(crate) fn eoi(nfa: &NFA, curr: &[StateID]) -> Option<PatternID> {
        curr.iter().find_map(|&id| match nfa.state(id) {
            State::Match { pattern_id } => Some(*pattern_id),
            _ => None,
        })
    }
}
