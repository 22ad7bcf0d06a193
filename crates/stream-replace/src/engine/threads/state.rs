//! A stream's state in the thread matcher (`Core`): its threads, the best
//! match recorded, and the few steps every loop shares (recording a match,
//! deciding it, going over to the NFA). It knows nothing of the program:
//! the loops that step it (`stream`, `fallback`) and the fast paths take
//! the program as an argument.

use crate::engine::automaton::Thread;
use crate::engine::dfa::Dfa;
use crate::engine::gate::Seen;
use crate::engine::matcher::{Decided, Scan};
use crate::engine::nfa::NThread;
use crate::engine::tape::Tape;

/// The fast paths and the fallback, as counted by `entered` in the unit
/// tests: a test of a fast path fails if the path is never taken.
pub(super) mod path {
    pub(crate) const IDLE: usize = 0;
    pub(crate) const QUICK: usize = 1;
    pub(crate) const ONE_THREAD: usize = 2;
    pub(crate) const MANY_THREADS: usize = 3;
    pub(crate) const SUSPEND: usize = 4;
    pub(crate) const PENDING: usize = 5;
    pub(crate) const SETTLE: usize = 6;
    pub(crate) const RESUME: usize = 7;
    pub(crate) const NFA: usize = 8;
    pub(crate) const FORWARD: usize = 9;
    pub(crate) const ESCAPE: usize = 10;
    pub(crate) const REVERSE: usize = 11;
    pub(crate) const WINDOW: usize = 12;
    pub(crate) const TOKEN: usize = 13;
    pub(crate) const TOKEN_FEW: usize = 14;
    #[cfg(test)]
    pub(crate) const COUNT: usize = 15;
}

#[cfg(test)]
thread_local! {
    /// How often each path of `path` did some work on this thread.
    pub(super) static ENTERED: std::cell::Cell<[usize; path::COUNT]> =
        const { std::cell::Cell::new([0; path::COUNT]) };
}

/// Counts a fast path that did some work (see `path`); nothing outside
/// the unit tests.
#[inline(always)]
pub(super) fn entered(which: usize) {
    #[cfg(test)]
    ENTERED.with(|c| {
        let mut counts = c.get();
        counts[which] += 1;
        c.set(counts);
    });
    #[cfg(not(test))]
    let _ = which;
}

/// A match recorded by a thread, decided once no thread may beat it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Best {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) rule: usize,
}

/// Which automaton steps the threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Mode {
    Dfa,
    /// The NFA runs at least until this position has been stepped.
    Nfa {
        until: usize,
    },
}

/// Signals that the DFA cannot go on; holds the position to replay from.
pub(super) struct Fallback(pub(super) usize);

/// The thread matcher's per-stream state. Positions are stream offsets.
///
/// Invariants: `dfa_threads` is non-empty only in `Mode::Dfa` and
/// `nfa_threads` only in `Mode::Nfa`; both are in strictly increasing start
/// order; every start, and `best`'s, is before `pos`; `best` is set only
/// while some thread that started before it, or at its start, may still
/// beat or extend it (otherwise it is decided at once).
#[derive(Debug)]
pub(super) struct Core<D: Dfa> {
    /// The next byte to step.
    pub(super) pos: usize,
    /// The live DFA threads.
    pub(super) dfa_threads: Vec<Thread<D::Sid>>,
    /// The live threads of the NFA fallback.
    pub(super) nfa_threads: Vec<NThread>,
    /// The best match recorded, not yet decided.
    pub(super) best: Option<Best>,
    /// Set while only the earliest thread is stepped (see
    /// `SUSPEND_AFTER`): where to replay from if it dies without a match.
    pub(super) suspended: Option<usize>,
    /// The end of the last such replay: only a thread started there or
    /// later is stepped alone, so no byte is replayed twice.
    pub(super) replayed_to: usize,
    /// Set under `Matcher::focus`: the start of the one candidate followed.
    /// Only that candidate's thread runs (on the NFA, which needs no
    /// replay of the text the stream drops meanwhile), until its match is
    /// decided or it dies.
    pub(super) focus: Option<usize>,
    /// Set by `Matcher::exclude` and `Matcher::cap`: at this position
    /// (stepped on the NFA), only the rules in this range of indices may
    /// start a match.
    pub(super) exclude: Option<(usize, std::ops::Range<usize>)>,
    pub(super) mode: Mode,
    /// The scratch (its id) and the generation of its cache that the DFA
    /// states in `dfa_threads` belong to (see `Core::resume`).
    pub(super) seen: (u64, usize),
    /// The row of the frozen memo where the one-thread loop last stopped.
    pub(super) hint: usize,
    /// What the gate's needle searches found in this stream (positions
    /// only: valid whatever scratch the next call borrows).
    pub(super) needles: Seen,
    /// The end of the last forward search (see `forward`): no match
    /// starting where it began ends before it. While idle before it, the
    /// idle scan does not search forward again.
    pub(super) forward: usize,
    /// Set while more input follows in the same call (see `set_lazy`).
    pub(super) lazy: bool,
    /// Set while the last bytes of a call are scanned and more input may
    /// follow in later calls (see `set_lazy_end`).
    pub(super) lazy_end: bool,
    /// The last state of a stable DFA seen open at the end of a feed (an
    /// email's local part goes on for a word): its memo lookup is skipped.
    pub(super) open: Option<D::Sid>,
}

impl<D: Dfa> Core<D> {
    pub(super) fn new() -> Core<D> {
        Core {
            pos: 0,
            dfa_threads: Vec::new(),
            nfa_threads: Vec::new(),
            best: None,
            suspended: None,
            replayed_to: 0,
            focus: None,
            exclude: None,
            mode: Mode::Dfa,
            seen: (0, 0),
            hint: 0,
            needles: Seen::default(),
            forward: 0,
            lazy: false,
            lazy_end: false,
            open: None,
        }
    }

    pub(super) fn clear_nfa_threads(&mut self) {
        // Their sets are dropped: the scratch they came from is not at
        // hand between calls, and this happens once per decided match.
        self.nfa_threads.clear();
    }

    pub(super) fn enter_nfa(&mut self, from: usize, until: usize) {
        entered(path::NFA);
        self.dfa_threads.clear();
        self.clear_nfa_threads();
        self.best = None;
        self.suspended = None;
        self.pos = from;
        self.mode = Mode::Nfa { until };
    }

    /// The decision of the recorded best match: the matcher stops after it
    /// (at `pos`, where its last thread stopped) until `restart`.
    pub(super) fn decided(best: Best) -> Scan {
        Scan::Decided(Decided {
            rule: best.rule,
            span: best.start..best.end,
        })
    }

    /// Where a replay must start: the earliest live start, best match start
    /// or the given position.
    pub(super) fn replay_from(&self, p: usize) -> usize {
        let mut r = p;
        if let Some(t) = self.dfa_threads.first() {
            r = r.min(t.start);
        }
        if let Some(b) = self.best {
            r = r.min(b.start);
        }
        r
    }

    /// Records a match of the thread that started at `start`, ending at `end`,
    /// unless it is an empty match at the end of the previous match (which
    /// `find_iter` skips). Returns whether it was recorded.
    #[inline(always)]
    pub(super) fn record(&mut self, tape: &Tape, start: usize, end: usize, rule: usize) -> bool {
        if start == end && tape.last_end() == Some(end) {
            return false;
        }
        self.best = Some(Best { start, end, rule });
        // A match of the earliest thread beats every later one: nothing
        // needs replaying.
        self.suspended = None;
        true
    }
}
