//! The NFA loop: the exact fallback of the DFA loop (`stream`).
//!
//! Entered (`Mode::Nfa`) where the DFA cannot go on: a quit byte (a
//! non-ASCII byte next to a Unicode `\b`), a lazy cache cleared under the
//! stream, a match the rewritten `\b` may have decided wrongly
//! (`Prog::unsure`), a future the DFA cannot tell (`settle`), and under
//! `Matcher::exclude`, `cap` and `focus`, which need a start state per
//! rule. It replays the held text from the earliest live start with the
//! same thread logic as the DFA loop (PikeVM style: one closed set per
//! thread, a set seen earlier in the same step is dropped), and hands back
//! to the DFA once nothing is alive past the position it had to reach.

use regex_automata::PatternID;
use regex_automata::nfa::thompson::NFA;
use regex_automata::util::primitives::StateID;

use super::program::{Prog, Scratch};
use super::state::{Best, Core, Mode};
use crate::engine::bytes::{is_continuation, utf8_len};
use crate::engine::dfa::Dfa;
use crate::engine::matcher::Scan;
use crate::engine::nfa::{self, NThread};
use crate::engine::tape::Tape;

/// Where `run_nfa` stopped.
pub(super) enum Nfa {
    /// Nothing is alive: back on the DFA (the caller goes on).
    HandedBack,
    /// At the end of what it may step.
    Stopped,
    /// A decision, or the focused candidate's death.
    Stop(Scan),
}

/// Keeps the targets `next` of an NFA thread started at `start`, or gives
/// the set back to `scratch` when the thread died.
fn keep_nfa_thread(
    kept: &mut Vec<NThread>,
    scratch: &mut nfa::Scratch,
    start: usize,
    next: Vec<StateID>,
) {
    if next.is_empty() {
        scratch.give_set(next);
    } else {
        kept.push(NThread {
            start,
            targets: next,
        });
    }
}

impl<D: Dfa> Core<D> {
    /// Whether the NFA may step position `p`: look-around there needs the
    /// whole character at `p`, or the end of input.
    ///
    /// Without a Unicode word assertion in the rules (`Prog::byte_looks`),
    /// every byte on the tape is: stepping the first bytes of a cut
    /// character needs nothing after them, and a match decided before the
    /// cut (or a thread dying on its first byte) is not held for the rest
    /// of the character.
    pub(super) fn nfa_ready(prog: &Prog<D>, tape: &Tape, p: usize, eof: bool) -> bool {
        let end = tape.offset();
        p < end && (eof || prog.byte_looks || p + utf8_len(tape.at(p)) <= end)
    }

    /// Runs the NFA, until it hands back to the DFA, stops at the end of
    /// what it may step, or decides.
    #[inline(never)]
    pub(super) fn run_nfa(
        &mut self,
        prog: &Prog<D>,
        s: &mut Scratch<D>,
        tape: &Tape,
        eof: bool,
    ) -> Nfa {
        let nfa = prog.nfa();
        let Mode::Nfa { until } = self.mode else {
            return Nfa::Stopped;
        };
        let mut scratch = std::mem::take(&mut s.nfa);
        let mut kept = std::mem::take(&mut s.nfa_kept);
        let mut closed_sets = std::mem::take(&mut s.nfa_closed);
        let stop = loop {
            let end = tape.offset();
            let p = self.pos;
            if self.nfa_threads.is_empty()
                && self.best.is_none()
                && p > until
                && (!prog.quits || tape.look_behind(p).is_none_or(|b| b < 0x80))
            {
                self.mode = Mode::Dfa;
                break Nfa::HandedBack;
            }
            if p >= end {
                break Nfa::Stopped;
            }
            let b = tape.at(p);
            if !Self::nfa_ready(prog, tape, p, eof) {
                // The character at `p` is cut by the end of the buffer, so
                // look-around there cannot be judged yet. With nothing alive
                // and no match able to start with its first byte, its bytes
                // belong to no match: step over them (releasing them), as
                // the DFA would.
                if self.nfa_threads.is_empty() && self.best.is_none() && !prog.can_begin(b) {
                    self.pos = p + 1;
                    continue;
                }
                break Nfa::Stopped;
            }
            let hay = tape.bytes();
            let at = p - tape.base();
            let mut old = std::mem::take(&mut self.nfa_threads);
            let mut threads = old.drain(..);
            for t in threads.by_ref() {
                let mut closed = scratch.take_set();
                scratch.close(nfa, &t.targets, hay, at, true, &mut closed);
                scratch.give_set(t.targets);
                if closed.is_empty() || closed_sets.contains(&closed) {
                    scratch.give_set(closed);
                    continue;
                }
                let mut next = scratch.take_set();
                let matched = nfa::Scratch::step(nfa, &closed, b, &mut next);
                closed_sets.push(closed);
                if let Some(pid) = matched {
                    self.best = Some(Best {
                        start: t.start,
                        end: p,
                        rule: pid.as_usize(),
                    });
                }
                keep_nfa_thread(&mut kept, &mut scratch, t.start, next);
                if matched.is_some() {
                    // A match of an earlier start beats every later thread.
                    break;
                }
            }
            for t in threads {
                scratch.give_set(t.targets);
            }
            if self.best.is_none()
                && self.focus.is_none_or(|s| s == p)
                && !is_continuation(b)
                && (!prog.fast || prog.may_start(tape.look_behind(p), b))
            {
                let mut closed = scratch.take_set();
                match &self.exclude {
                    Some((s, rules)) if *s == p => {
                        let starts = Self::starts_of(nfa, rules.clone(), &mut scratch);
                        scratch.close(nfa, &starts, hay, at, true, &mut closed);
                        scratch.give_set(starts);
                    }
                    _ => {
                        scratch.close(nfa, &[nfa.start_anchored()], hay, at, true, &mut closed);
                    }
                }
                if !closed.is_empty() && !closed_sets.contains(&closed) {
                    let mut next = scratch.take_set();
                    let matched = nfa::Scratch::step(nfa, &closed, b, &mut next);
                    if let Some(pid) = matched {
                        if tape.last_end() != Some(p) {
                            self.best = Some(Best {
                                start: p,
                                end: p,
                                rule: pid.as_usize(),
                            });
                        }
                    }
                    keep_nfa_thread(&mut kept, &mut scratch, p, next);
                }
                scratch.give_set(closed);
            }
            for c in closed_sets.drain(..) {
                scratch.give_set(c);
            }
            // Swap buffers rather than allocate a thread list per byte.
            self.nfa_threads = std::mem::replace(&mut kept, old);
            self.pos = p + 1;
            if self.nfa_threads.is_empty() {
                if let Some(best) = self.best.take() {
                    // Where the last thread stopped, for a suppression that
                    // ends there (`restart` moves on from the match's end).
                    self.pos = p;
                    break Nfa::Stop(Self::decided(best));
                } else if self.focus.is_some() {
                    // The focused candidate died on byte `p`.
                    break Nfa::Stop(Scan::Died(p));
                }
            }
        };
        s.nfa_kept = kept;
        s.nfa_closed = closed_sets;
        s.nfa = scratch;
        stop
    }

    /// The anchored start states of the rules in `rules`, in rule order:
    /// the priority order of their alternation.
    pub(super) fn starts_of(
        nfa: &NFA,
        rules: std::ops::Range<usize>,
        scratch: &mut nfa::Scratch,
    ) -> Vec<StateID> {
        let mut starts = scratch.take_set();
        let rules = rules.start..rules.end.min(nfa.pattern_len());
        starts.extend(rules.filter_map(|k| nfa.start_pattern(PatternID::new(k).ok()?)));
        starts
    }

    #[inline(never)]
    pub(super) fn eoi_nfa(&mut self, prog: &Prog<D>, s: &mut Scratch<D>, tape: &Tape) {
        let nfa = prog.nfa();
        let p = self.pos;
        let at = p - tape.base();
        let mut scratch = std::mem::take(&mut s.nfa);
        let mut closed = scratch.take_set();
        for t in &self.nfa_threads {
            closed.clear();
            scratch.close(nfa, &t.targets, tape.bytes(), at, true, &mut closed);
            if let Some(pid) = nfa::Scratch::first_match(nfa, &closed) {
                self.best = Some(Best {
                    start: t.start,
                    end: p,
                    rule: pid.as_usize(),
                });
                break;
            }
        }
        if self.best.is_none() && self.focus.is_none() {
            closed.clear();
            let starts = match &self.exclude {
                Some((s, rules)) if *s == p => Self::starts_of(nfa, rules.clone(), &mut scratch),
                _ => {
                    let mut one = scratch.take_set();
                    one.push(nfa.start_anchored());
                    one
                }
            };
            scratch.close(nfa, &starts, tape.bytes(), at, true, &mut closed);
            scratch.give_set(starts);
            if let Some(pid) = nfa::Scratch::first_match(nfa, &closed) {
                if tape.last_end() != Some(p) {
                    self.best = Some(Best {
                        start: p,
                        end: p,
                        rule: pid.as_usize(),
                    });
                }
            }
        }
        scratch.give_set(closed);
        s.nfa = scratch;
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::state::path;
    use super::super::tests::{CASES, same_as_general};

    /// A Unicode `\b` between two characters of either kind, next to a
    /// non-ASCII byte, makes the DFA quit: the NFA takes over and decides
    /// what the general loop decides. (A `\b` the rule always has a word
    /// character beside is rewritten and stays on the DFA.)
    #[test]
    fn a_quit_byte_goes_to_the_nfa() {
        let input = "xa xé é x.é xb".as_bytes();
        let runs = same_as_general(&[r"x.\b"], input, &[3, 9]);
        assert!(runs.iter().all(|r| r.entered[path::NFA] > 0));
        assert_eq!(
            runs[0].decided,
            vec![(0, 0..2), (0, 3..6), (0, 10..12), (0, 15..17)]
        );
        let runs = same_as_general(&[r"\bé\w+"], "a é café étoile".as_bytes(), &[3, 9]);
        assert_eq!(runs[0].entered[path::NFA], 0);
        assert_eq!(runs[0].decided, vec![(0, 11..18)]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(CASES))]
        #[test]
        fn the_nfa_decides_as_the_general_loop(
            input in "[aé ü.1-]{0,30}",
            cuts in prop::collection::vec(0usize..40, 0..6),
        ) {
            same_as_general(&[r"\bé\w*\b", r"\d+", r"a\B."], input.as_bytes(), &cuts);
        }
    }
}
