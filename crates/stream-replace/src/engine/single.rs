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

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash};

use super::automaton::{Automaton, LOOK_BEHINDS, MemoStart, byte_kind};
use super::bytes::IdHasher;
use super::dfa::Dfa;

/// Configurations a scratch's memo keeps before it starts over.
const MAX_CONFIGS: usize = 64;

/// The most bytes of table a frozen memo may take.
const FROZEN_BYTES: usize = 1 << 20;

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
    /// The most configurations kept.
    max: usize,
}

/// What the one-thread loop needs of a memo: a scratch's own, which learns
/// as it goes ([`Single`]), or a frozen one shared by every stream
/// ([`FrozenRef`]).
pub(super) trait Memo<S> {
    /// Makes the memo valid for the cache's clear count `clears`.
    fn prepare(&mut self, clears: usize);
    /// The row of a configuration, if the memo has or can add it.
    fn config<D: Dfa<Sid = S>>(&mut self, prog: &Automaton<D>, sid: S, kind: u8) -> Option<usize>;
    /// The table (see [`Single::table`]).
    fn table(&self) -> &[u32];
    /// Works out an unknown entry, if the memo can learn.
    fn step<D: Dfa<Sid = S>>(
        &mut self,
        prog: &Automaton<D>,
        cache: &mut D::Cache,
        row: usize,
        lb: Option<u8>,
        b: u8,
    ) -> Step;
    /// The thread state of the configuration at `row`.
    fn state<D: Dfa<Sid = S>>(&self, prog: &Automaton<D>, row: usize) -> S;
    /// Records where the loop stopped.
    fn leave(&mut self, row: usize);
}

impl<S: Copy + Eq> Memo<S> for Single<S> {
    #[inline(always)]
    fn prepare(&mut self, clears: usize) {
        Single::prepare(self, clears)
    }

    #[inline(always)]
    fn config<D: Dfa<Sid = S>>(&mut self, prog: &Automaton<D>, sid: S, kind: u8) -> Option<usize> {
        Single::config(self, prog, sid, kind)
    }

    #[inline(always)]
    fn table(&self) -> &[u32] {
        Single::table(self)
    }

    #[inline(always)]
    fn step<D: Dfa<Sid = S>>(
        &mut self,
        prog: &Automaton<D>,
        cache: &mut D::Cache,
        row: usize,
        lb: Option<u8>,
        b: u8,
    ) -> Step {
        Single::step(self, prog, cache, row, lb, b)
    }

    #[inline(always)]
    fn state<D: Dfa<Sid = S>>(&self, prog: &Automaton<D>, row: usize) -> S {
        Single::state(self, prog, row)
    }

    #[inline(always)]
    fn leave(&mut self, row: usize) {
        Single::leave(self, row)
    }
}

/// A memo worked out whole (up to `FROZEN_BYTES`) when the rules are built,
/// for a DFA whose state ids are stable: shared, never changed.
#[derive(Debug)]
pub(super) struct Frozen<S> {
    memo: Single<S>,
    /// The row of each configuration (looked up where a feed begins off
    /// the hint, and where the token path's few threads come down to one).
    rows: HashMap<(S, u8), usize, BuildHasherDefault<IdHasher>>,
    /// The row of the configuration with no thread alive, by the kind of
    /// the byte before: its entry on a byte says whether a thread starts
    /// there, and in which state after it.
    idle: [usize; LOOK_BEHINDS.len()],
}

/// A frozen memo and the stream's own hint: the row where its last call
/// stopped, where the next one most often starts.
pub(super) struct FrozenRef<'a, S> {
    pub(super) frozen: &'a Frozen<S>,
    pub(super) hint: &'a mut usize,
}

impl<S: Copy + Eq + Hash> Frozen<S> {
    /// Works out every configuration reachable from the idle ones, in the
    /// order the loop would meet them, up to `FROZEN_BYTES` of table.
    /// Unknown entries (past the limit, or where the DFA cannot tell) send
    /// the loop to the general path.
    pub(super) fn new<D: Dfa<Sid = S>>(prog: &Automaton<D>, cache: &mut D::Cache) -> Frozen<S> {
        let n = prog.nclasses;
        let mut memo = Single::new();
        memo.max = (FROZEN_BYTES / (4 * (n + 1))).max(MAX_CONFIGS);
        // A byte of each class, and a look-behind of each kind.
        let mut reps = vec![0u8; n];
        for b in (0..=255u8).rev() {
            reps[prog.classes[b as usize] as usize] = b;
        }
        let behind = LOOK_BEHINDS;
        debug_assert!(
            LOOK_BEHINDS
                .iter()
                .enumerate()
                .all(|(k, lb)| prog.kind(*lb) as usize == k)
        );
        for lb in behind {
            memo.config(prog, prog.dfa.none(), prog.kind(lb));
        }
        let mut c = 0;
        while c < memo.configs.len() {
            let row = c * (n + 1);
            let lb = behind[memo.configs[c].1 as usize];
            for &b in &reps {
                if let Step::Stale = memo.step(prog, cache, row, lb, b) {
                    unreachable!("a frozen memo is for a DFA without a cache to clear");
                }
            }
            c += 1;
        }
        let rows: HashMap<(S, u8), usize, BuildHasherDefault<IdHasher>> = memo
            .configs
            .iter()
            .enumerate()
            .map(|(i, &c)| (c, i * (n + 1)))
            .collect();
        // The idle configurations were added first, one per kind.
        let idle = std::array::from_fn(|k| rows[&(prog.dfa.none(), k as u8)]);
        Frozen { memo, rows, idle }
    }

    /// The row of the configuration with no thread alive after a byte of
    /// kind `kind` (see `byte_kind`).
    #[inline(always)]
    pub(super) fn idle_row(&self, kind: u8) -> usize {
        self.idle[kind as usize]
    }

    /// The table (see [`Single::table`]).
    #[inline(always)]
    pub(super) fn table(&self) -> &[u32] {
        &self.memo.table
    }

    /// The thread state of the configuration at `row`.
    #[inline(always)]
    pub(super) fn state<D: Dfa<Sid = S>>(&self, prog: &Automaton<D>, row: usize) -> S {
        self.memo.state(prog, row)
    }

    /// The bytes the memo takes.
    pub(super) fn memory_usage(&self) -> usize {
        self.memo.table.len() * 4
            + self.memo.configs.len() * std::mem::size_of::<(S, u8)>()
            + self.rows.len() * (std::mem::size_of::<((S, u8), usize)>() + 1)
    }
}

impl<S: Copy + Eq + Hash> Memo<S> for FrozenRef<'_, S> {
    #[inline(always)]
    fn prepare(&mut self, _: usize) {}

    #[inline(always)]
    fn config<D: Dfa<Sid = S>>(&mut self, prog: &Automaton<D>, sid: S, kind: u8) -> Option<usize> {
        let memo = &self.frozen.memo;
        let n = prog.nclasses;
        let hint = *self.hint;
        if hint + n < memo.table.len() && memo.configs[memo.table[hint + n] as usize] == (sid, kind)
        {
            return Some(hint);
        }
        let row = *self.frozen.rows.get(&(sid, kind))?;
        *self.hint = row;
        Some(row)
    }

    #[inline(always)]
    fn table(&self) -> &[u32] {
        &self.frozen.memo.table
    }

    #[inline(always)]
    fn step<D: Dfa<Sid = S>>(
        &mut self,
        _: &Automaton<D>,
        _: &mut D::Cache,
        _: usize,
        _: Option<u8>,
        _: u8,
    ) -> Step {
        Step::Entry(EXIT)
    }

    #[inline(always)]
    fn state<D: Dfa<Sid = S>>(&self, prog: &Automaton<D>, row: usize) -> S {
        self.frozen.memo.state(prog, row)
    }

    #[inline(always)]
    fn leave(&mut self, row: usize) {
        *self.hint = row;
    }
}

impl<S: Copy + Eq> Single<S> {
    pub(super) fn new() -> Single<S> {
        Single {
            configs: Vec::new(),
            table: Vec::new(),
            hint: 0,
            clears: 0,
            full: false,
            max: MAX_CONFIGS,
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
        prog: &Automaton<D>,
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
        if self.configs.len() == self.max {
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
    pub(super) fn state<D: Dfa<Sid = S>>(&self, prog: &Automaton<D>, row: usize) -> S {
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
        prog: &Automaton<D>,
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
        match prog.memo_start(cache, clears, lb, b) {
            MemoStart::No => {}
            MemoStart::Thread(n0) if next == none => {
                next = n0;
                restart = true;
            }
            MemoStart::Thread(n0) if next == n0 => {}
            MemoStart::Thread(_) | MemoStart::Exit => {
                self.table[slot] = KNOWN | EXIT;
                return Step::Entry(KNOWN | EXIT);
            }
            MemoStart::GaveUp => return Step::Entry(EXIT),
            MemoStart::Stale => return Step::Stale,
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
