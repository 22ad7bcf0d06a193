//! The stream loop of the thread matcher: `Core::run` (the DFA or the NFA
//! to the end of the tape, `settle`, the end of input) and `Core::run_dfa`,
//! the general DFA loop, which also chooses among the fast paths.
//!
//! The general loop steps every live thread on the byte at `pos` in start
//! order, records a match and drops every later thread, drops a thread
//! whose state an earlier one has, and starts a thread at `pos` unless a
//! match is recorded or a thread is suspended. With `Prog::fast` off it is
//! the only loop (with the NFA fallback): the reference the fast paths are
//! tested against.

use regex_automata::Anchored;
use regex_automata::util::start;

use super::fallback::Nfa;
use super::program::{Prog, Scratch};
use super::settle::Settled;
use super::state::{Core, Fallback, Mode, entered, path};
use crate::engine::automaton::Thread;
use crate::engine::bytes::is_continuation;
use crate::engine::dfa::{Dfa, GaveUp};
use crate::engine::gate::Seen;
use crate::engine::matcher::{Matcher, Scan};
use crate::engine::tape::Tape;
use crate::engine::tuples;

impl<D: Dfa> Core<D> {
    pub(super) fn run(
        &mut self,
        prog: &Prog<D>,
        s: &mut Scratch<D>,
        tape: &Tape,
        eof: bool,
    ) -> Scan {
        loop {
            let end = tape.offset();
            match self.mode {
                Mode::Dfa => match self.run_dfa(prog, s, tape) {
                    Ok(Some(scan)) => return scan,
                    Ok(None) => {}
                    Err(Fallback(r)) => {
                        let until = self.pos;
                        self.enter_nfa(r, until);
                        continue;
                    }
                },
                Mode::Nfa { .. } => match self.run_nfa(prog, s, tape, eof) {
                    Nfa::HandedBack => continue,
                    Nfa::Stopped => {}
                    Nfa::Stop(scan) => return scan,
                },
            }
            if !eof {
                match self.settle(prog, s, tape) {
                    Ok(Settled::Again) => continue,
                    Ok(Settled::Stop(scan)) => return scan,
                    Ok(Settled::Open) => return Scan::Done,
                    Err(Fallback(r)) => {
                        self.enter_nfa(r, end);
                        continue;
                    }
                }
            }
            debug_assert_eq!(self.pos, end);
            let eoi = match self.mode {
                Mode::Dfa => self.eoi_dfa(prog, s, tape),
                Mode::Nfa { .. } => {
                    self.eoi_nfa(prog, s, tape);
                    Ok(())
                }
            };
            if let Err(Fallback(r)) = eoi {
                self.enter_nfa(r, end);
                continue;
            }
            self.dfa_threads.clear();
            self.clear_nfa_threads();
            match self.best.take() {
                Some(best) if self.mode == Mode::Dfa && prog.unsure(tape, &best, true) => {
                    self.enter_nfa(best.start, end);
                }
                Some(best) => return Self::decided(best),
                None => match self.suspended.take() {
                    // The earliest thread died at the end: replay without it.
                    Some(r) => self.replay(r),
                    None => return Scan::Done,
                },
            }
        }
    }

    /// Runs the DFA to the end of the tape. Returns a decided match (the
    /// matcher then stops), or the position to replay from on the NFA.
    pub(super) fn run_dfa(
        &mut self,
        prog: &Prog<D>,
        s: &mut Scratch<D>,
        tape: &Tape,
    ) -> Result<Option<Scan>, Fallback> {
        let dfa = &prog.dfa;
        loop {
            let end = tape.offset();
            if self.dfa_threads.is_empty() && self.best.is_none() {
                self.pos = self.skip_idle_to(prog, tape, end);
                if self.lazy_stop(prog, self.pos) {
                    return Ok(None);
                }
                if self.lazy_end && self.hold_window_in(prog, s, tape) {
                    return Ok(None);
                }
            }
            if prog.fast {
                let free = self.best.is_none() && self.suspended.is_none();
                let stay = self.gate_window(prog);
                let in_window = stay.is_some_and(|(lo, hi)| lo <= self.pos && self.pos <= hi);
                let many = self.dfa_threads.len() >= tuples::MIN_THREADS;
                if free && self.pos < end && (many || in_window) {
                    let from = self.pos;
                    self.run_tuples(prog, s, tape, stay)?;
                    if self.pos != from {
                        // Back to the top: at most one thread is left, or
                        // none (then idle text is skipped).
                        continue;
                    }
                } else if free && self.dfa_threads.len() <= 1 {
                    self.run_simple(prog, &mut s.cache, &mut s.single, tape)?;
                    if self.lazy_end && self.hold_window_in(prog, s, tape) {
                        return Ok(None);
                    }
                } else if self.dfa_threads.len() == 1 {
                    self.run_pending(prog, &mut s.cache, tape)?;
                }
            }
            let p = self.pos;
            if p >= end {
                return Ok(None);
            }
            if self.may_suspend(prog, p) {
                self.suspend();
                continue;
            }
            let from = self.replay_from(p);
            let b = tape.at(p);
            let clears = D::clear_count(&s.cache);
            let mut kept = 0;
            let mut i = 0;
            while i < self.dfa_threads.len() {
                let t = self.dfa_threads[i];
                i += 1;
                let next = dfa
                    .next_state(&mut s.cache, t.sid, b)
                    .map_err(|GaveUp| Fallback(from))?;
                if D::clear_count(&s.cache) != clears {
                    return Err(Fallback(from));
                }
                if dfa.is_special(next) {
                    if dfa.is_dead(next) {
                        continue;
                    }
                    if dfa.is_quit(next) {
                        return Err(Fallback(from));
                    }
                    if dfa.is_match(next) {
                        let rule = dfa.match_rule(&s.cache, next);
                        if self.record(tape, t.start, p, rule) {
                            // A match of an earlier start beats every later
                            // thread.
                            self.dfa_threads[kept] = Thread {
                                start: t.start,
                                sid: next,
                            };
                            kept += 1;
                            break;
                        }
                    }
                }
                if self.dfa_threads[..kept].iter().any(|k| k.sid == next) {
                    continue;
                }
                self.dfa_threads[kept] = Thread {
                    start: t.start,
                    sid: next,
                };
                kept += 1;
            }
            self.dfa_threads.truncate(kept);
            if self.best.is_none() && self.suspended.is_none() && !is_continuation(b) {
                let lb = prog.start_lb(tape, p);
                if !prog.fast || prog.may_start(lb, b) {
                    let cfg = start::Config::new().anchored(Anchored::Yes).look_behind(lb);
                    let sid = dfa
                        .start_state(&mut s.cache, &cfg)
                        .map_err(|GaveUp| Fallback(from))?;
                    let next = dfa
                        .next_state(&mut s.cache, sid, b)
                        .map_err(|GaveUp| Fallback(from))?;
                    if D::clear_count(&s.cache) != clears || dfa.is_quit(next) {
                        return Err(Fallback(from));
                    }
                    if !dfa.is_dead(next) {
                        if dfa.is_match(next) {
                            let rule = dfa.match_rule(&s.cache, next);
                            self.record(tape, p, p, rule);
                        }
                        if !self.dfa_threads.iter().any(|k| k.sid == next) {
                            self.dfa_threads.push(Thread {
                                start: p,
                                sid: next,
                            });
                        }
                    }
                }
            }
            self.pos = p + 1;
            if self.dfa_threads.is_empty() {
                if let Some(best) = self.best.take() {
                    if prog.unsure(tape, &best, false) {
                        return Err(Fallback(best.start));
                    }
                    return Ok(Some(Self::decided(best)));
                } else if let Some(r) = self.suspended.take() {
                    self.replay(r);
                }
            }
        }
    }

    #[inline(never)]
    pub(super) fn eoi_dfa(
        &mut self,
        prog: &Prog<D>,
        s: &mut Scratch<D>,
        tape: &Tape,
    ) -> Result<(), Fallback> {
        let dfa = &prog.dfa;
        let p = self.pos;
        let from = self.replay_from(p);
        let clears = D::clear_count(&s.cache);
        for i in 0..self.dfa_threads.len() {
            let t = self.dfa_threads[i];
            let next = dfa
                .next_eoi_state(&mut s.cache, t.sid)
                .map_err(|GaveUp| Fallback(from))?;
            if D::clear_count(&s.cache) != clears || dfa.is_quit(next) {
                return Err(Fallback(from));
            }
            if dfa.is_match(next) {
                let rule = dfa.match_rule(&s.cache, next);
                if self.record(tape, t.start, p, rule) {
                    return Ok(());
                }
            }
        }
        if self.best.is_none() && self.suspended.is_none() {
            let lb = prog.start_lb(tape, p);
            let cfg = start::Config::new().anchored(Anchored::Yes).look_behind(lb);
            let sid = dfa
                .start_state(&mut s.cache, &cfg)
                .map_err(|GaveUp| Fallback(from))?;
            let next = dfa
                .next_eoi_state(&mut s.cache, sid)
                .map_err(|GaveUp| Fallback(from))?;
            if D::clear_count(&s.cache) != clears || dfa.is_quit(next) {
                return Err(Fallback(from));
            }
            if dfa.is_match(next) {
                let rule = dfa.match_rule(&s.cache, next);
                self.record(tape, p, p, rule);
            }
        }
        Ok(())
    }
}

impl<D: Dfa> Matcher for Core<D> {
    type Program = Prog<D>;

    #[inline(always)]
    fn scan_quick(&mut self, prog: &Prog<D>, tape: &Tape) -> bool {
        let done = self.quick(prog, tape);
        if done {
            entered(path::QUICK);
        }
        done
    }

    fn scan(&mut self, prog: &Prog<D>, tape: &Tape, eof: bool) -> Scan {
        prog.with_scratch(|s| {
            self.resume(s);
            let scan = self.run(prog, s, tape, eof);
            self.leave(s);
            scan
        })
    }

    #[inline(always)]
    fn scanned(&self) -> usize {
        self.pos
    }

    #[inline(always)]
    fn earliest_live(&self, _prog: &Self::Program) -> usize {
        let mut live = self.pos;
        if let Some(t) = self.dfa_threads.first() {
            live = live.min(t.start);
        }
        if let Some(t) = self.nfa_threads.first() {
            live = live.min(t.start);
        }
        if let Some(b) = self.best {
            live = live.min(b.start);
        }
        live
    }

    fn earliest_candidate(&self) -> Option<usize> {
        [
            self.dfa_threads.first().map(|t| t.start),
            self.nfa_threads.first().map(|t| t.start),
            self.best.map(|b| b.start),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    #[inline(always)]
    fn recorded_end(&self) -> Option<usize> {
        self.best.map(|b| b.end)
    }

    #[inline(always)]
    fn is_idle(&self) -> bool {
        self.mode == Mode::Dfa && self.dfa_threads.is_empty() && self.best.is_none()
    }

    #[inline(always)]
    fn skip_idle(&self, prog: &Prog<D>, hay: &[u8], from: usize, lb: Option<u8>) -> usize {
        prog.skip_idle(hay, from, lb)
    }

    #[inline(always)]
    fn skip_to(&mut self, at: usize) {
        debug_assert!(self.is_idle() && self.suspended.is_none() && self.focus.is_none());
        self.pos = at;
    }

    #[inline(always)]
    fn restart(&mut self, at: usize) {
        self.dfa_threads.clear();
        if !self.nfa_threads.is_empty() {
            self.clear_nfa_threads();
        }
        self.best = None;
        self.suspended = None;
        self.focus = None;
        self.exclude = None;
        self.pos = at;
    }

    fn exclude(&mut self, at: usize, rule: usize) {
        // On the NFA, which has a start state per rule; it hands back to
        // the DFA once nothing is alive after `at`.
        self.restart(at);
        self.enter_nfa(at, at);
        self.exclude = Some((at, rule + 1..usize::MAX));
    }

    fn cap(&mut self, at: usize, end: usize) {
        // As `exclude`; an exclusion at `at` still stands.
        let first = match &self.exclude {
            Some((a, rules)) if *a == at => rules.start,
            _ => 0,
        };
        self.restart(at);
        self.enter_nfa(at, at);
        self.exclude = Some((at, first..end));
    }

    fn focus(&mut self, start: usize) {
        // From its start on the NFA: the DFA may need a replay later (a
        // quit byte, a cache clear), which the dropped text would no
        // longer allow.
        let until = self.pos;
        self.enter_nfa(start, until);
        self.focus = Some(start);
    }

    fn discard(&mut self, at: usize) {
        self.restart(at);
        self.mode = Mode::Dfa;
    }

    fn reset(&mut self) {
        self.restart(0);
        self.replayed_to = 0;
        self.needles = Seen::default();
        self.forward = 0;
        self.mode = Mode::Dfa;
    }

    #[cfg(debug_assertions)]
    fn check_invariants(&self, tape: &Tape) {
        match self.mode {
            Mode::Dfa => debug_assert!(self.nfa_threads.is_empty()),
            Mode::Nfa { .. } => debug_assert!(self.dfa_threads.is_empty()),
        }
        // Only one of the lists is non-empty.
        let starts = || {
            let dfa = self.dfa_threads.iter().map(|t| t.start);
            dfa.chain(self.nfa_threads.iter().map(|t| t.start))
        };
        debug_assert!(starts().zip(starts().skip(1)).all(|(a, b)| a < b));
        debug_assert!(starts().all(|s| s < self.pos), "{self:?}");
        if let Some(b) = self.best {
            debug_assert!(b.start <= b.end && b.end <= self.pos, "{self:?}");
            // Otherwise it would have been decided.
            debug_assert!(starts().next().is_some(), "{self:?}");
        }
        debug_assert!(self.pos <= tape.offset());
    }
}
