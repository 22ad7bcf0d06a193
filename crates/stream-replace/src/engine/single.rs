//! The one-thread tight loop's memo: a small lazily built automaton over
//! configurations.
//!
//! While at most one DFA thread is alive and no match is recorded, what
//! happens on the next byte depends only on the thread's DFA state (or that
//! there is none) and on the kind of the byte before (which picks the start
//! state a new thread would get). Such a pair is a configuration; stepping
//! one on a byte gives the next configuration, and whether the thread alive
//! after it is a new one (started at that byte). Bytes the loop cannot step
//! alone (a match, a quit, two live threads) are marked to exit. Each
//! transition is worked out once and then costs one table lookup.

use regex_automata::util::start;
use regex_automata::Anchored;

use super::dfa::Dfa;
use super::is_continuation;
use super::threads::{byte_kind, Prog};

/// Configurations kept before the memo starts over.
const MAX_CONFIGS: usize = 64;

/// An entry's low bits: the offset in `Single::table` of the next
/// configuration's row (so stepping is a load and a mask).
pub(super) const ROW: u32 = (1 << 24) - 1;
/// An entry is known.
pub(super) const KNOWN: u32 = 1 << 24;
/// The thread alive after the byte started at it.
pub(super) const RESTART: u32 = 1 << 25;
/// No thread is alive after the byte.
pub(super) const IDLE: u32 = 1 << 26;
/// The loop cannot step this byte: leave it to the general path.
pub(super) const EXIT: u32 = 1 << 27;

/// What working out an entry found.
pub(super) enum Step {
    /// The entry (also stored when it holds whatever the cache does).
    Entry(u32),
    /// A cache clear on the way made every state held stale.
    Stale,
}

/// The memo, kept with the DFA cache it was worked out with (in a scratch
/// that streams borrow). Valid while the cache's clear count is `clears`.
#[derive(Debug)]
pub(super) struct Single<S> {
    /// (thread state or `Dfa::none()`, kind of the byte before).
    configs: Vec<(S, u8)>,
    /// `configs.len()` rows of `Program::nclasses` entries (0 is unknown),
    /// each followed by its configuration's index in `configs`.
    table: Vec<u32>,
    /// The row last returned by `config` or given to `leave`: tried first.
    hint: usize,
    clears: usize,
    /// Set when a configuration could not be added: start over at the next
    /// entry to the loop.
    full: bool,
}

impl<S: Copy + Eq> Single<S> {
    pub(super) fn new() -> Single<S> {
        Single {
            configs: Vec::new(),
            table: Vec::new(),
            hint: 0,
            clears: 0,
            full: false,
        }
    }

    /// Makes the memo valid for `clears`, starting over if needed.
    pub(super) fn prepare(&mut self, clears: usize) {
        if self.clears != clears || self.full {
            self.configs.clear();
            self.table.clear();
            self.clears = clears;
            self.full = false;
            self.hint = 0;
        }
    }

    /// Records where the loop stopped, to be found first next time.
    #[inline(always)]
    pub(super) fn leave(&mut self, row: usize) {
        self.hint = row;
    }

    /// The row (offset in `table`) of a configuration, added if new; `None`
    /// when the memo is full.
    pub(super) fn config<D: Dfa<Sid = S>>(
        &mut self,
        prog: &Prog<D>,
        sid: S,
        kind: u8,
    ) -> Option<usize> {
        let n = prog.nclasses;
        if self.hint + n < self.table.len()
            && self.configs[self.table[self.hint + n] as usize] == (sid, kind)
        {
            return Some(self.hint);
        }
        if let Some(i) = self.configs.iter().position(|&c| c == (sid, kind)) {
            self.hint = i * (n + 1);
            return Some(self.hint);
        }
        if self.configs.len() == MAX_CONFIGS {
            self.full = true;
            return None;
        }
        self.configs.push((sid, kind));
        let row = self.table.len();
        self.table.resize(row + n, 0);
        self.table.push((self.configs.len() - 1) as u32);
        self.hint = row;
        Some(row)
    }

    /// The thread state of the configuration at `row` (`Dfa::none()` for
    /// none).
    #[inline(always)]
    pub(super) fn state<D: Dfa<Sid = S>>(&self, prog: &Prog<D>, row: usize) -> S {
        self.configs[self.table[row + prog.nclasses] as usize].0
    }

    /// The table: for the configuration at row `r`, its entry on byte `b`
    /// is at `r + Program::classes[b]` (0 if not known yet).
    #[inline(always)]
    pub(super) fn table(&self) -> &[u32] {
        &self.table
    }

    /// Works out the entry for the configuration at `row` on byte `b`,
    /// whose look-behind is `lb`, and stores it when it does not depend on
    /// the cache.
    pub(super) fn step<D: Dfa<Sid = S>>(
        &mut self,
        prog: &Prog<D>,
        cache: &mut D::Cache,
        row: usize,
        lb: Option<u8>,
        b: u8,
    ) -> Step {
        let dfa = &prog.dfa;
        let clears = D::clear_count(cache);
        let sid = self.state(prog, row);
        let slot = row + prog.classes[b as usize] as usize;
        let none = dfa.none();
        let mut next = none;
        let mut restart = false;
        if sid != none {
            let Ok(n) = dfa.next_state(cache, sid, b) else {
                return Step::Entry(EXIT);
            };
            if D::clear_count(cache) != clears {
                return Step::Stale;
            }
            if dfa.is_special(n) && !dfa.is_dead(n) {
                self.table[slot] = KNOWN | EXIT;
                return Step::Entry(KNOWN | EXIT);
            }
            if !dfa.is_dead(n) {
                next = n;
            }
        }
        if !is_continuation(b) && prog.may_start(lb, b) {
            let cfg = start::Config::new().anchored(Anchored::Yes).look_behind(lb);
            let Ok(s0) = dfa.start_state(cache, &cfg) else {
                return Step::Entry(EXIT);
            };
            let Ok(n0) = dfa.next_state(cache, s0, b) else {
                return Step::Entry(EXIT);
            };
            if D::clear_count(cache) != clears {
                return Step::Stale;
            }
            if !dfa.is_dead(n0) {
                if dfa.is_special(n0) || (next != none && next != n0) {
                    self.table[slot] = KNOWN | EXIT;
                    return Step::Entry(KNOWN | EXIT);
                }
                if next == none {
                    next = n0;
                    restart = true;
                }
            }
        }
        let Some(to) = self.config(prog, next, byte_kind(b)) else {
            return Step::Entry(EXIT);
        };
        let mut e = KNOWN | to as u32;
        if restart {
            e |= RESTART;
        }
        if next == none {
            e |= IDLE;
        }
        self.table[slot] = e;
        Step::Entry(e)
    }
}
