//! Fast path: settling at the end of a feed.
//!
//! Entered from `Core::run` once the loops have stepped every byte of the
//! tape and more input may follow (`!eof`), with `Prog::fast` set; off,
//! it returns `Settled::Open` and changes nothing.
//!
//! Drops the threads whose state can reach no match, and records a match
//! that ends here whatever follows, so that it is decided now rather than
//! one byte later. Exact because the answer is a property of the DFA state
//! alone (`futures::future` visits all its transitions and its end of
//! input), memoised per cache generation; where the DFA cannot tell (a
//! state with quit transitions), it falls back to the NFA, whose closure
//! stops at the first look-around that needs the bytes to come: a match
//! that leads the closed prefix (priority order) leads the full set too.

use super::program::{Prog, Scratch};
use super::state::{Best, Core, Fallback, Mode, entered, path};
use crate::engine::dfa::Dfa;
use crate::engine::futures::{Future, future};
use crate::engine::matcher::Scan;
use crate::engine::nfa;
use crate::engine::tape::Tape;

/// What `settle` found.
pub(super) enum Settled {
    /// Every thread left may still match, depending on the bytes to come.
    Open,
    /// A replay is due: run again.
    Again,
    /// A decision, or the focused candidate's death.
    Stop(Scan),
}

impl<D: Dfa> Core<D> {
    /// At the end of a feed, settles what the bytes to come cannot change:
    /// drops threads with no possible match ahead and records matches that
    /// end here whatever follows, so a decided match is released without
    /// waiting for one more byte.
    pub(super) fn settle(
        &mut self,
        prog: &Prog<D>,
        s: &mut Scratch<D>,
        tape: &Tape,
    ) -> Result<Settled, Fallback> {
        if !prog.fast {
            // Without it, a match is decided one byte late or at the end
            // of input: the same output, a longer hold-back.
            return Ok(Settled::Open);
        }
        let p = self.pos;
        let before = (
            self.dfa_threads.len() + self.nfa_threads.len(),
            self.best.is_some(),
        );
        match self.mode {
            Mode::Dfa => {
                if self.dfa_threads.is_empty() {
                    return Ok(Settled::Open);
                }
                let from = self.replay_from(p);
                let clears = D::clear_count(&s.cache);
                // Bounded repetitions keep dozens of threads at the end of
                // a feed: their configuration remembers that all are open.
                let config = s.tuples.current(&self.dfa_threads, clears);
                if config.is_some_and(|c| s.tuples.all_open(c)) {
                    return Ok(Settled::Open);
                }
                let mut kept = 0;
                for i in 0..self.dfa_threads.len() {
                    let t = self.dfa_threads[i];
                    let future = match s.futures.get(t.sid, clears) {
                        Some(f) => f,
                        None => {
                            let f = future(&prog.dfa, &mut s.cache, t.sid);
                            if D::clear_count(&s.cache) != clears {
                                return Err(Fallback(from));
                            }
                            s.futures.insert(t.sid, f);
                            f
                        }
                    };
                    match future {
                        Future::Unknown => {
                            // Let the NFA, which follows every byte, settle
                            // what is held.
                            return Err(Fallback(from));
                        }
                        Future::Open => {
                            self.dfa_threads[kept] = t;
                            kept += 1;
                        }
                        Future::Finished => {}
                        Future::EndsHere(rule) => {
                            self.best = Some(Best {
                                start: t.start,
                                end: p,
                                rule,
                            });
                            self.suspended = None;
                            break;
                        }
                    }
                }
                if kept == self.dfa_threads.len() && self.best.is_none() {
                    if let Some(c) = config {
                        s.tuples.set_all_open(c);
                    }
                }
                self.dfa_threads.truncate(kept);
            }
            Mode::Nfa { .. } => {
                let nfa = prog.nfa();
                let mut scratch = std::mem::take(&mut s.nfa);
                let mut kept = Vec::with_capacity(self.nfa_threads.len());
                let mut old = std::mem::take(&mut self.nfa_threads).into_iter();
                for t in old.by_ref() {
                    let mut closed = scratch.take_set();
                    let known = scratch.close(
                        nfa,
                        &t.targets,
                        tape.bytes(),
                        p - tape.base(),
                        false,
                        &mut closed,
                    );
                    let first = closed
                        .first()
                        .and_then(|&id| nfa::Scratch::match_of(nfa, id));
                    let empty = closed.is_empty();
                    scratch.give_set(closed);
                    // Closing stops at the first look-around that needs the
                    // bytes to come, so `closed` is then a prefix (in
                    // priority order) of the full set: a match leading it
                    // leads the full set too, and is decided already.
                    if let Some(pid) = first {
                        self.best = Some(Best {
                            start: t.start,
                            end: p,
                            rule: pid.as_usize(),
                        });
                        scratch.give_set(t.targets);
                        break;
                    } else if known && empty {
                        scratch.give_set(t.targets);
                    } else {
                        kept.push(t);
                    }
                }
                for t in old {
                    scratch.give_set(t.targets);
                }
                self.nfa_threads = kept;
                s.nfa = scratch;
            }
        }
        let after = (
            self.dfa_threads.len() + self.nfa_threads.len(),
            self.best.is_some(),
        );
        if after.0 < before.0 || after.1 != before.1 {
            entered(path::SETTLE);
        }
        if self.dfa_threads.is_empty() && self.nfa_threads.is_empty() {
            if let Some(best) = self.best.take() {
                if self.mode == Mode::Dfa && prog.unsure(tape, &best, false) {
                    return Err(Fallback(best.start));
                }
                return Ok(Settled::Stop(Self::decided(best)));
            }
            if let Some(r) = self.suspended.take() {
                // The earliest thread cannot match: replay without it.
                self.replay(r);
                return Ok(Settled::Again);
            }
            if self.focus.is_some() {
                // The focused candidate can no longer match.
                return Ok(Settled::Stop(Scan::Died(p)));
            }
        }
        Ok(Settled::Open)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::state::path;
    use super::super::tests::{CASES, same_as_general};

    /// A fixed-width number ends at the end of a feed whatever follows,
    /// and a word that cannot go on is dropped.
    #[test]
    fn a_feed_that_ends_a_match_settles_it() {
        let runs = same_as_general(&[r"\d{2}-\d{2}"], b"call 12-34 now", &[10]);
        assert!(runs.iter().all(|r| r.entered[path::SETTLE] > 0));
        assert_eq!(runs[0].decided, vec![(0, 5..10)]);
        let runs = same_as_general(&[r"ab+c|abd"], b"xx abd yy", &[6]);
        assert!(runs.iter().all(|r| r.entered[path::SETTLE] > 0));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(CASES))]
        #[test]
        fn settling_decides_as_the_general_loop(
            input in "[0-9 a-c-]{0,40}",
            cuts in prop::collection::vec(0usize..50, 0..8),
        ) {
            same_as_general(&[r"\d{2}-\d{2}", r"ab+c|abd", r"c\b"], input.as_bytes(), &cuts);
        }
    }
}
