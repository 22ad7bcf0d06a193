//! The thread matcher: one lazy DFA over all rules, with the Thompson NFA
//! as its exact fallback.
//!
//! The lazy DFA (leftmost-first, anchored) is stepped a byte at a time as a
//! set of live threads, one per candidate start position, in start order
//! (which is priority order). A match state records the global best match
//! and drops every later thread; two threads in the same state have the
//! same future, so only the earlier is kept; a match is decided once a best
//! match exists and no thread is left.
//!
//! Where the lazy DFA cannot go on (a quit byte: a non-ASCII byte when a
//! rule uses Unicode word look-around; or a cache clear, which invalidates
//! the states held), the held region is replayed from its earliest live
//! start with the same thread logic over the Thompson NFA (see `nfa`), and
//! the matcher goes back to the DFA once nothing is alive.
//!
//! Two fast paths keep the common cases cheap. With at most one live thread
//! and no recorded match, the next step depends only on that thread's state
//! and the kind of the byte before; `single` memoises these configurations
//! and their transitions, so such text costs one table lookup per byte.
//! When the earliest of several threads has lived `SUSPEND_AFTER` bytes (an
//! open `<think>` with words inside), its match would beat every later
//! thread, so it is stepped alone; if it dies without a match, the text
//! after its start is replayed with every thread, at most once per byte.
//! At the end of a feed, `settle` drops threads that can no longer match and
//! decides matches that end there whatever follows (see `futures`).

use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::hybrid::LazyStateID;
use regex_automata::nfa::thompson::{self, WhichCaptures, NFA};
use regex_automata::util::prefilter::Prefilter;
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;
use regex_automata::{Anchored, MatchKind, Span};

use super::futures::{future, Future, Futures};
use super::matcher::{Decided, Matcher, Scan};
use super::tape::Tape;
use super::{is_continuation, nfa, single, utf8_len};
use crate::config::Config;
use crate::error::Error;

/// The immutable part of the thread matcher, shared by every stream.
#[derive(Debug)]
pub(crate) struct Program {
    pub(super) dfa: DFA,
    /// For each look-behind (index 0: start of input, `1 + b`: byte `b`),
    /// 256 bits: whether a thread started after it survives its first
    /// byte. Quit bytes and unknown starts are set.
    may_start: Box<[[u64; 4]; 257]>,
    /// Whether no thread can ever start.
    never: bool,
    /// Finds where a match may start, when every rule starts with one of a
    /// small set of literals; used to skip text where nothing is alive.
    prefilter: Option<Prefilter>,
    /// Byte classes for `single`: bytes in one class step every DFA state
    /// alike, are all UTF-8 continuation bytes or none, and are of one
    /// look-behind kind.
    pub(super) classes: [u8; 256],
    pub(super) nclasses: usize,
    /// The bytes a match can start with (an over-approximation from the
    /// NFA; every byte when a rule can match empty).
    first: [u64; 4],
    /// Whether the fast paths run (idle scans, the prefilter, the tight
    /// loops, stepping a long-lived thread alone, settling at the end of a
    /// feed). Off, every byte goes through the general thread loop, so the
    /// tests can check each fast path against it.
    fast: bool,
}

/// Look-behind kinds, finer than the DFA's start states: start of input,
/// `\n`, `\r`, ASCII word byte, other ASCII byte, non-ASCII byte.
const KIND_TEXT: u8 = 0;

/// The look-behind kind of a byte.
#[inline(always)]
pub(super) fn byte_kind(b: u8) -> u8 {
    match b {
        b'\n' => 1,
        b'\r' => 2,
        b'0'..=b'9' | b'A'..=b'Z' | b'a'..=b'z' | b'_' => 3,
        0..=0x7F => 4,
        _ => 5,
    }
}

impl Program {
    pub(crate) fn new(sources: &[String], config: &Config) -> Result<Program, Error> {
        let dfa = DFA::builder()
            .configure(
                DFA::config()
                    .match_kind(MatchKind::LeftmostFirst)
                    .unicode_word_boundary(true)
                    .cache_capacity(config.get_cache_capacity())
                    .skip_cache_capacity_check(true),
            )
            .thompson(
                thompson::Config::new()
                    .nfa_size_limit(Some(config.get_size_limit()))
                    .which_captures(WhichCaptures::None),
            )
            .build_many(sources)
            .map_err(Error::from_dfa)?;
        let mut cache = dfa.create_cache();
        let mut may_start = Box::new([[0u64; 4]; 257]);
        for (lb, row) in may_start.iter_mut().enumerate() {
            *row = start_row(&dfa, &mut cache, (lb > 0).then(|| (lb - 1) as u8));
        }
        let first = nfa::first_bytes(dfa.get_nfa());
        let never = sources.is_empty() || may_start.iter().all(|r| *r == [0; 4]);
        let prefilter = regex_automata::util::syntax::parse_many(sources)
            .ok()
            .and_then(|hirs| Prefilter::from_hirs_prefix(MatchKind::LeftmostFirst, &hirs))
            .filter(|p| p.max_needle_len() > 0);
        let mut classes = [0u8; 256];
        let mut seen: Vec<(u8, bool, u8)> = Vec::new();
        for b in 0..=255u8 {
            let key = (dfa.byte_classes().get(b), is_continuation(b), byte_kind(b));
            let class = match seen.iter().position(|k| *k == key) {
                Some(i) => i,
                None => {
                    seen.push(key);
                    seen.len() - 1
                }
            };
            // At most 256 classes: each byte is in one.
            classes[b as usize] = class as u8;
        }
        Ok(Program {
            dfa,
            may_start,
            never,
            prefilter,
            classes,
            nclasses: seen.len(),
            first,
            fast: config.get_fast_paths(),
        })
    }

    /// The first position in `hay` from `from` where a thread can survive
    /// its first byte, or `hay.len()`; `lb` is the byte before `from`, if
    /// any.
    fn skip_idle(&self, hay: &[u8], from: usize, lb: Option<u8>) -> usize {
        let end = hay.len();
        let mut p = from;
        if self.never {
            return end;
        }
        if !self.fast {
            return p;
        }
        let behind = |p: usize| if p == from { lb } else { Some(hay[p - 1]) };
        if let Some(pre) = &self.prefilter {
            // A literal that starts within the last `tail` bytes may be cut
            // by the end of `hay`: the prefilter cannot see it, so it is
            // blind there. Those positions are checked byte by byte below
            // (once: the next chunk starts after them). A hit inside the
            // tail proves nothing about the tail's earlier positions (a
            // short needle found after the cut-off start of a longer one),
            // so it counts as no hit.
            let tail = pre.max_needle_len() - 1;
            while p + tail < end {
                match pre.find(hay, Span::from(p..end)) {
                    Some(m) if m.start + tail < end => p = m.start,
                    _ => {
                        p = end - tail;
                        break;
                    }
                }
                if self.may_start(behind(p), hay[p]) {
                    return p;
                }
                p += 1;
            }
        }
        let mut row = &self.may_start[behind(p).map_or(0, |b| b as usize + 1)];
        while p < end {
            let b = hay[p];
            if row[(b >> 6) as usize] & (1 << (b & 63)) != 0 {
                break;
            }
            row = &self.may_start[b as usize + 1];
            p += 1;
        }
        p
    }

    pub(crate) fn create_cache(&self) -> Cache {
        self.dfa.create_cache()
    }

    fn nfa(&self) -> &NFA {
        self.dfa.get_nfa()
    }

    /// The look-behind kind of the byte before a position.
    #[inline(always)]
    fn kind(&self, lb: Option<u8>) -> u8 {
        lb.map_or(KIND_TEXT, byte_kind)
    }

    /// Whether a match can start with byte `b`, whatever surrounds it.
    fn can_begin(&self, b: u8) -> bool {
        self.first[(b >> 6) as usize] & (1 << (b & 63)) != 0
    }

    #[inline(always)]
    pub(super) fn may_start(&self, lb: Option<u8>, b: u8) -> bool {
        let row = &self.may_start[lb.map_or(0, |b| b as usize + 1)];
        row[(b >> 6) as usize] & (1 << (b & 63)) != 0
    }
}

/// The row of `Program::may_start` for one look-behind. A cache clear
/// invalidates the start state held here, so it is fetched again; each
/// transition's answer is valid whatever the cache did meanwhile.
fn start_row(dfa: &DFA, cache: &mut Cache, lb: Option<u8>) -> [u64; 4] {
    let cfg = start::Config::new().anchored(Anchored::Yes).look_behind(lb);
    let mut row = [0u64; 4];
    let mut sid = None;
    let mut clears = cache.clear_count();
    for b in 0..=255u8 {
        if cache.clear_count() != clears {
            sid = None;
        }
        let s = match sid {
            Some(s) => s,
            None => match dfa.start_state(cache, &cfg) {
                Ok(s) => {
                    clears = cache.clear_count();
                    sid = Some(s);
                    s
                }
                // A quit look-behind: any byte may start a thread, except a
                // continuation byte (0x80..=0xBF, the third word), where no
                // thread ever starts.
                Err(_) => return [u64::MAX, u64::MAX, 0, u64::MAX],
            },
        };
        if s.is_dead() {
            return row;
        }
        let alive = match dfa.next_state(cache, s, b) {
            Ok(next) => !next.is_dead(),
            Err(_) => true,
        };
        if alive && !is_continuation(b) {
            row[(b >> 6) as usize] |= 1 << (b & 63);
        }
    }
    row
}

#[derive(Clone, Copy, Debug)]
struct Thread {
    start: usize,
    sid: LazyStateID,
}

/// A thread of the NFA fallback: the states it reached by the last byte it
/// stepped, not yet closed over epsilon transitions (closing needs the
/// character at the current position for look-around).
#[derive(Debug)]
struct NThread {
    start: usize,
    targets: Vec<StateID>,
}

#[derive(Clone, Copy, Debug)]
struct Best {
    start: usize,
    end: usize,
    rule: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Dfa,
    /// The NFA runs at least until this position has been stepped.
    Nfa {
        until: usize,
    },
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

/// Where `run_nfa` stopped.
enum Nfa {
    /// Nothing is alive: back on the DFA (the caller goes on).
    HandedBack,
    /// At the end of what it may step.
    Stopped,
    /// A decision, or the focused candidate's death.
    Stop(Scan),
}

/// What `settle` found.
enum Settled {
    /// Every thread left may still match, depending on the bytes to come.
    Open,
    /// A replay is due: run again.
    Again,
    /// A decision, or the focused candidate's death.
    Stop(Scan),
}

/// Signals that the DFA cannot go on; holds the position to replay from.
struct Fallback(usize);

/// How long the earliest of several threads must have lived before the
/// others are dropped and it is stepped alone (replaying the rest if it
/// dies without a match). Short-lived threads (a word under `\w+@…`) would
/// only pay for the replay.
const SUSPEND_AFTER: usize = 64;

/// The thread matcher's per-stream state. Positions are stream offsets.
///
/// Invariants: `dfa_threads` is non-empty only in `Mode::Dfa` and
/// `nfa_threads` only in `Mode::Nfa`; both are in strictly increasing start
/// order; every start, and `best`'s, is before `pos`; `best` is set only
/// while some thread that started before it, or at its start, may still
/// beat or extend it (otherwise it is decided at once).
#[derive(Debug)]
pub(crate) struct Threads {
    cache: Cache,
    /// The next byte to step.
    pos: usize,
    /// The live DFA threads.
    dfa_threads: Vec<Thread>,
    /// The live threads of the NFA fallback.
    nfa_threads: Vec<NThread>,
    /// The best match recorded, not yet decided.
    best: Option<Best>,
    /// Set while only the earliest thread is stepped (see
    /// `SUSPEND_AFTER`): where to replay from if it dies without a match.
    suspended: Option<usize>,
    /// The end of the last such replay: only a thread started there or
    /// later is stepped alone, so no byte is replayed twice.
    replayed_to: usize,
    /// Set under `Matcher::focus`: the start of the one candidate followed.
    /// Only that candidate's thread runs (on the NFA, which needs no
    /// replay of the text the stream drops meanwhile), until its match is
    /// decided or it dies.
    focus: Option<usize>,
    mode: Mode,
    scratch: Option<Box<nfa::Scratch>>,
    /// Spare lists for `run_nfa`, kept empty between calls: the threads
    /// kept by a step, and the closed sets seen in it (for merging).
    nfa_kept: Vec<NThread>,
    nfa_closed: Vec<Vec<StateID>>,
    /// `Future` of DFA states seen at the end of a feed.
    futures: Futures,
    /// The one-thread loop's memo of configurations.
    single: single::Single,
}

impl Threads {
    pub(crate) fn new(prog: &Program) -> Threads {
        Threads {
            cache: prog.create_cache(),
            pos: 0,
            dfa_threads: Vec::new(),
            nfa_threads: Vec::new(),
            best: None,
            suspended: None,
            replayed_to: 0,
            focus: None,
            mode: Mode::Dfa,
            scratch: None,
            nfa_kept: Vec::new(),
            nfa_closed: Vec::new(),
            futures: Futures::default(),
            single: single::Single::default(),
        }
    }

    /// The common cases of `run` for a small feed, without its general
    /// machinery: one of the tight loops steps the whole feed (at most one
    /// live thread and no match recorded, or one thread stepped alone), and
    /// the thread's future is known to be open. Returns false, having done
    /// part of the work or none, when `run` must go on from where this
    /// stopped.
    #[inline(always)]
    fn run_quick(&mut self, prog: &Program, tape: &Tape) -> bool {
        if !prog.fast || self.mode != Mode::Dfa || self.dfa_threads.len() > 1 {
            return false;
        }
        let simple = self.best.is_none() && self.suspended.is_none();
        if !simple && self.dfa_threads.is_empty() {
            return false;
        }
        let run = if simple {
            self.run_simple(prog, tape)
        } else {
            // One thread, stepped alone: it holds a match it may still
            // beat, or it is the earliest of several.
            self.run_pending(prog, tape)
        };
        if let Err(Fallback(r)) = run {
            // As `run` does: replay on the NFA.
            let until = self.pos;
            self.enter_nfa(r, until);
            return false;
        }
        if self.pos != tape.offset() {
            return false;
        }
        let Some(&t) = self.dfa_threads.first() else {
            return true;
        };
        let clears = self.cache.clear_count();
        self.futures.get(t.sid, clears) == Some(Future::Open)
    }

    fn clear_nfa_threads(&mut self) {
        if let Some(s) = self.scratch.as_mut() {
            for t in self.nfa_threads.drain(..) {
                s.give_set(t.targets);
            }
        }
        self.nfa_threads.clear();
    }

    fn enter_nfa(&mut self, from: usize, until: usize) {
        self.dfa_threads.clear();
        self.clear_nfa_threads();
        self.best = None;
        self.suspended = None;
        self.pos = from;
        self.mode = Mode::Nfa { until };
        if self.scratch.is_none() {
            self.scratch = Some(Box::default());
        }
    }

    /// The decision of the recorded best match: the matcher stops after it
    /// (at `pos`, where its last thread stopped) until `restart`.
    fn decided(best: Best) -> Scan {
        Scan::Decided(Decided {
            rule: best.rule,
            span: best.start..best.end,
        })
    }

    fn run(&mut self, prog: &Program, tape: &Tape, eof: bool) -> Scan {
        loop {
            let end = tape.offset();
            match self.mode {
                Mode::Dfa => match self.run_dfa(prog, tape) {
                    Ok(Some(scan)) => return scan,
                    Ok(None) => {}
                    Err(Fallback(r)) => {
                        let until = self.pos;
                        self.enter_nfa(r, until);
                        continue;
                    }
                },
                Mode::Nfa { .. } => match self.run_nfa(prog, tape, eof) {
                    Nfa::HandedBack => continue,
                    Nfa::Stopped => {}
                    Nfa::Stop(scan) => return scan,
                },
            }
            if !eof {
                match self.settle(prog, tape) {
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
                Mode::Dfa => self.eoi_dfa(prog, tape),
                Mode::Nfa { .. } => {
                    self.eoi_nfa(prog, tape);
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
                Some(best) => return Self::decided(best),
                None => match self.suspended.take() {
                    // The earliest thread died at the end: replay without it.
                    Some(r) => self.replay(r),
                    None => return Scan::Done,
                },
            }
        }
    }

    /// A thread stepped alone died without a match at `self.pos`: steps
    /// again from `from` (just after its start) with every thread.
    fn replay(&mut self, from: usize) {
        self.replayed_to = self.pos;
        self.pos = from;
    }

    /// Where a replay must start: the earliest live start, best match start
    /// or the given position.
    fn replay_from(&self, p: usize) -> usize {
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
    fn record(&mut self, tape: &Tape, start: usize, end: usize, rule: usize) -> bool {
        if start == end && tape.last_end() == Some(end) {
            return false;
        }
        self.best = Some(Best { start, end, rule });
        // A match of the earliest thread beats every later one: nothing
        // needs replaying.
        self.suspended = None;
        true
    }

    /// With nothing alive, the next position from `self.pos` where a thread
    /// can survive its first byte (or `end`).
    fn skip_idle_to(&self, prog: &Program, tape: &Tape, end: usize) -> usize {
        let base = tape.base();
        let hay = &tape.bytes()[..end - base];
        prog.skip_idle(hay, self.pos - base, tape.look_behind(self.pos)) + base
    }

    /// Runs the DFA to the end of the tape. Returns a decided match (the
    /// matcher then stops), or the position to replay from on the NFA.
    fn run_dfa(&mut self, prog: &Program, tape: &Tape) -> Result<Option<Scan>, Fallback> {
        let dfa = &prog.dfa;
        loop {
            let end = tape.offset();
            if self.dfa_threads.is_empty() && self.best.is_none() {
                self.pos = self.skip_idle_to(prog, tape, end);
            }
            if prog.fast {
                if self.dfa_threads.len() <= 1 && self.best.is_none() && self.suspended.is_none() {
                    self.run_simple(prog, tape)?;
                } else if self.dfa_threads.len() == 1 {
                    self.run_pending(prog, tape)?;
                }
            }
            let p = self.pos;
            if p >= end {
                return Ok(None);
            }
            if prog.fast
                && self.dfa_threads.len() > 1
                && self.best.is_none()
                && p - self.dfa_threads[0].start >= SUSPEND_AFTER
                && self.dfa_threads[0].start >= self.replayed_to
            {
                // A long-lived earliest thread (an open `<think>`, say): its
                // match would beat every later thread, so step it alone, and
                // replay the rest only if it dies without one.
                self.suspended = Some(self.dfa_threads[0].start + 1);
                self.dfa_threads.truncate(1);
                continue;
            }
            let from = self.replay_from(p);
            let b = tape.at(p);
            let clears = self.cache.clear_count();
            let mut kept = 0;
            let mut i = 0;
            while i < self.dfa_threads.len() {
                let t = self.dfa_threads[i];
                i += 1;
                let next = dfa
                    .next_state(&mut self.cache, t.sid, b)
                    .map_err(|_| Fallback(from))?;
                if self.cache.clear_count() != clears {
                    return Err(Fallback(from));
                }
                if next.is_tagged() {
                    if next.is_dead() {
                        continue;
                    }
                    if next.is_quit() {
                        return Err(Fallback(from));
                    }
                    if next.is_match() {
                        let rule = dfa.match_pattern(&self.cache, next, 0).as_usize();
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
                let lb = tape.look_behind(p);
                if !prog.fast || prog.may_start(lb, b) {
                    let cfg = start::Config::new().anchored(Anchored::Yes).look_behind(lb);
                    let sid = dfa
                        .start_state(&mut self.cache, &cfg)
                        .map_err(|_| Fallback(from))?;
                    let next = dfa
                        .next_state(&mut self.cache, sid, b)
                        .map_err(|_| Fallback(from))?;
                    if self.cache.clear_count() != clears || next.is_quit() {
                        return Err(Fallback(from));
                    }
                    if !next.is_dead() {
                        if next.is_match() {
                            let rule = dfa.match_pattern(&self.cache, next, 0).as_usize();
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
                    return Ok(Some(Self::decided(best)));
                } else if let Some(r) = self.suspended.take() {
                    self.replay(r);
                }
            }
        }
    }

    /// At the end of a feed, settles what the bytes to come cannot change:
    /// drops threads with no possible match ahead and records matches that
    /// end here whatever follows, so a decided match is released without
    /// waiting for one more byte.
    fn settle(&mut self, prog: &Program, tape: &Tape) -> Result<Settled, Fallback> {
        if !prog.fast {
            // Without it, a match is decided one byte late or at the end
            // of input: the same output, a longer hold-back.
            return Ok(Settled::Open);
        }
        let p = self.pos;
        match self.mode {
            Mode::Dfa => {
                if self.dfa_threads.is_empty() {
                    return Ok(Settled::Open);
                }
                let from = self.replay_from(p);
                let clears = self.cache.clear_count();
                let mut kept = 0;
                for i in 0..self.dfa_threads.len() {
                    let t = self.dfa_threads[i];
                    let future = match self.futures.get(t.sid, clears) {
                        Some(f) => f,
                        None => {
                            let f = future(&prog.dfa, &mut self.cache, t.sid);
                            if self.cache.clear_count() != clears {
                                return Err(Fallback(from));
                            }
                            self.futures.insert(t.sid, f);
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
                self.dfa_threads.truncate(kept);
            }
            Mode::Nfa { .. } => {
                let nfa = prog.nfa();
                let mut scratch = self.scratch.take().unwrap_or_default();
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
                    if !known {
                        kept.push(t);
                    } else if let Some(pid) = first {
                        self.best = Some(Best {
                            start: t.start,
                            end: p,
                            rule: pid.as_usize(),
                        });
                        scratch.give_set(t.targets);
                        break;
                    } else if empty {
                        scratch.give_set(t.targets);
                    } else {
                        kept.push(t);
                    }
                }
                for t in old {
                    scratch.give_set(t.targets);
                }
                self.nfa_threads = kept;
                self.scratch = Some(scratch);
            }
        }
        if self.dfa_threads.is_empty() && self.nfa_threads.is_empty() {
            if let Some(best) = self.best.take() {
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

    /// The common case of `run_dfa`, in a tight loop: at most one live
    /// thread and no match recorded, where every new thread either dies at
    /// once or merges into the live one (as in a word under a rule like
    /// `\w+@…`). Each byte is one lookup in the `single` memo. Stops,
    /// without stepping it, at the first byte that needs more: a match, a
    /// second thread, a quit, or the end of the buffer.
    #[inline(always)]
    fn run_simple(&mut self, prog: &Program, tape: &Tape) -> Result<(), Fallback> {
        let base = tape.base();
        let hay = tape.bytes();
        let cache = &mut self.cache;
        let memo = &mut self.single;
        // The thread's start, as an index in `hay` (meaningless while no
        // thread is alive).
        let (mut start, sid) = match self.dfa_threads.first() {
            Some(t) => (t.start - base, t.sid),
            None => (0, single::no_thread()),
        };
        let mut i = self.pos - base;
        let clears = cache.clear_count();
        memo.prepare(clears);
        let lb = (self.pos > 0).then(|| hay[i - 1]);
        let Some(mut row) = memo.config(prog, sid, prog.kind(lb)) else {
            return Ok(());
        };
        let classes = &prog.classes;
        let skips = prog.prefilter.is_some();
        let mut stale = false;
        loop {
            // The hot loop: one load and a mask per byte.
            let table = memo.table();
            let mut e = 0;
            while i < hay.len() {
                e = table[row + classes[hay[i] as usize] as usize];
                if e & (single::KNOWN | single::EXIT) != single::KNOWN {
                    break;
                }
                if e & single::RESTART != 0 {
                    start = i;
                }
                row = (e & single::ROW) as usize;
                i += 1;
                if skips && e & single::IDLE != 0 {
                    break;
                }
            }
            if i >= hay.len() {
                break;
            }
            if e & single::KNOWN == 0 {
                // Not known yet: work it out, then go on (the same byte).
                let lb = (base + i > 0).then(|| hay[i - 1]);
                match memo.step(prog, cache, row, lb, hay[i]) {
                    single::Step::Entry(entry) if entry & single::KNOWN != 0 => continue,
                    single::Step::Entry(_) => break,
                    single::Step::Stale => {
                        stale = true;
                        break;
                    }
                }
            }
            if e & single::EXIT != 0 {
                break;
            }
            // Idle, with a prefilter to skip to the next possible start.
            let j = prog.skip_idle(hay, i, Some(hay[i - 1]));
            if j > i {
                i = j;
                let kind = prog.kind(Some(hay[i - 1]));
                match memo.config(prog, single::no_thread(), kind) {
                    Some(r) => row = r,
                    None => break,
                }
            }
        }
        let sid = memo.state(prog, row);
        memo.leave(row);
        self.pos = i + base;
        self.dfa_threads.clear();
        if sid != single::no_thread() {
            self.dfa_threads.push(Thread {
                start: start + base,
                sid,
            });
        }
        if stale {
            return Err(Fallback(self.replay_from(self.pos)));
        }
        Ok(())
    }

    /// Another common case of `run_dfa`, in a tight loop: a match is
    /// recorded (so no new thread starts) and one thread is alive, which may
    /// still beat or extend it (an unclosed `<think>` around a matched
    /// email, say). Steps that thread until a byte needs more: a match, its
    /// death, a quit, or the end of the buffer.
    #[inline(always)]
    fn run_pending(&mut self, prog: &Program, tape: &Tape) -> Result<(), Fallback> {
        let dfa = &prog.dfa;
        let hay = tape.bytes();
        let cache = &mut self.cache;
        let mut sid = self.dfa_threads[0].sid;
        let mut i = self.pos - tape.base();
        let clears = cache.clear_count();
        while i < hay.len() {
            let Ok(n) = dfa.next_state(cache, sid, hay[i]) else {
                break;
            };
            if n.is_tagged() || cache.clear_count() != clears {
                // `n` is valid even after a clear, but stepping it here would
                // skip the checks of the general path: leave this byte to it.
                break;
            }
            sid = n;
            i += 1;
        }
        let stale = cache.clear_count() != clears;
        self.dfa_threads[0].sid = sid;
        self.pos = i + tape.base();
        if stale {
            return Err(Fallback(self.replay_from(self.pos)));
        }
        Ok(())
    }

    fn eoi_dfa(&mut self, prog: &Program, tape: &Tape) -> Result<(), Fallback> {
        let dfa = &prog.dfa;
        let p = self.pos;
        let from = self.replay_from(p);
        let clears = self.cache.clear_count();
        for i in 0..self.dfa_threads.len() {
            let t = self.dfa_threads[i];
            let next = dfa
                .next_eoi_state(&mut self.cache, t.sid)
                .map_err(|_| Fallback(from))?;
            if self.cache.clear_count() != clears || next.is_quit() {
                return Err(Fallback(from));
            }
            if next.is_match() {
                let rule = dfa.match_pattern(&self.cache, next, 0).as_usize();
                if self.record(tape, t.start, p, rule) {
                    return Ok(());
                }
            }
        }
        if self.best.is_none() && self.suspended.is_none() {
            let lb = tape.look_behind(p);
            let cfg = start::Config::new().anchored(Anchored::Yes).look_behind(lb);
            let sid = dfa
                .start_state(&mut self.cache, &cfg)
                .map_err(|_| Fallback(from))?;
            let next = dfa
                .next_eoi_state(&mut self.cache, sid)
                .map_err(|_| Fallback(from))?;
            if self.cache.clear_count() != clears || next.is_quit() {
                return Err(Fallback(from));
            }
            if next.is_match() {
                let rule = dfa.match_pattern(&self.cache, next, 0).as_usize();
                self.record(tape, p, p, rule);
            }
        }
        Ok(())
    }

    /// Whether the NFA may step position `p`: look-around there needs the
    /// whole character at `p`, or the end of input.
    fn nfa_ready(tape: &Tape, p: usize, eof: bool) -> bool {
        let end = tape.offset();
        p < end && (eof || p + utf8_len(tape.at(p)) <= end)
    }

    /// Runs the NFA, until it hands back to the DFA, stops at the end of
    /// what it may step, or decides.
    fn run_nfa(&mut self, prog: &Program, tape: &Tape, eof: bool) -> Nfa {
        let nfa = prog.nfa();
        let Mode::Nfa { until } = self.mode else {
            return Nfa::Stopped;
        };
        let mut scratch = self.scratch.take().unwrap_or_default();
        let mut kept = std::mem::take(&mut self.nfa_kept);
        let mut closed_sets = std::mem::take(&mut self.nfa_closed);
        let stop = loop {
            let end = tape.offset();
            let p = self.pos;
            if self.nfa_threads.is_empty()
                && self.best.is_none()
                && p > until
                && tape.look_behind(p).is_none_or(|b| b < 0x80)
            {
                self.mode = Mode::Dfa;
                break Nfa::HandedBack;
            }
            if p >= end {
                break Nfa::Stopped;
            }
            let b = tape.at(p);
            if !Self::nfa_ready(tape, p, eof) {
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
                scratch.close(nfa, &[nfa.start_anchored()], hay, at, true, &mut closed);
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
        self.nfa_kept = kept;
        self.nfa_closed = closed_sets;
        self.scratch = Some(scratch);
        stop
    }

    fn eoi_nfa(&mut self, prog: &Program, tape: &Tape) {
        let nfa = prog.nfa();
        let p = self.pos;
        let at = p - tape.base();
        let mut scratch = self.scratch.take().unwrap_or_default();
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
            scratch.close(
                nfa,
                &[nfa.start_anchored()],
                tape.bytes(),
                at,
                true,
                &mut closed,
            );
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
        self.scratch = Some(scratch);
    }
}

impl Matcher for Threads {
    type Program = Program;

    #[inline(always)]
    fn scan_quick(&mut self, prog: &Program, tape: &Tape) -> bool {
        self.run_quick(prog, tape)
    }

    fn scan(&mut self, prog: &Program, tape: &Tape, eof: bool) -> Scan {
        self.run(prog, tape, eof)
    }

    #[inline(always)]
    fn scanned(&self) -> usize {
        self.pos
    }

    #[inline(always)]
    fn earliest_live(&self) -> usize {
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
    fn skip_idle(&self, prog: &Program, hay: &[u8], from: usize, lb: Option<u8>) -> usize {
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
        self.pos = at;
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
