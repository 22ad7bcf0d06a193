//! The thread matcher: one DFA over all rules, with the Thompson NFA as its
//! exact fallback.
//!
//! The DFA (leftmost-first, anchored; dense, built with the rules, or lazy:
//! see `dfa`) is stepped a byte at a time as a
//! set of live threads, one per candidate start position, in start order
//! (which is priority order). A match state records the global best match
//! and drops every later thread; two threads in the same state have the
//! same future, so only the earlier is kept; a match is decided once a best
//! match exists and no thread is left.
//!
//! Where the DFA cannot go on (a quit byte: a non-ASCII byte when a rule
//! uses Unicode word look-around; or a lazy cache clear, which invalidates
//! the states held), the held region is replayed from its earliest live
//! start with the same thread logic over the Thompson NFA (see `nfa`), and
//! the matcher goes back to the DFA once nothing is alive. A `\b` next to
//! a word character (`\b\d{3}`, `sk-…\b`) does not make the DFA quit: it
//! steps such rules rewritten (see `edges`), and the NFA works out again
//! only a match the rewritten rule may have decided wrongly.
//!
//! A stream owns only its threads (start positions and state ids) and
//! positions. What it steps them with, the lazy DFA's cache and the memos
//! below, is a `Scratch` borrowed from the program's pool for one call.
//! Lazy state ids are only valid in the cache, and the generation of it,
//! that made them: a stream that gets another cache, or finds its cache
//! cleared since its last call, works them out again (`Core::resume`).
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
//!
//! Bounded repetitions (`[a-z]{0,200}x`, an email with a 64-byte local
//! part) keep a thread per start alive whose counter states never merge.
//! With several threads and no match recorded, `tuples` memoises the
//! ordered tuple of their states, so a byte costs one lookup whatever the
//! number of threads. And when every rule has a required literal after a
//! part of bounded length (the `@` of that email), the `gate` skips, while
//! nothing is alive, to that many bytes before the next literal; the
//! threads run only in those windows.
//!
//! Why each of these paths gives the general loop's answer: the crate's
//! `DESIGN.md`, section 4.

use std::sync::atomic::{AtomicU64, Ordering};

use regex_automata::hybrid::dfa::DFA;
use regex_automata::nfa::thompson::{self, WhichCaptures, NFA};
use regex_automata::util::look::{Look, LookMatcher};
use regex_automata::util::pool::Pool;
use regex_automata::util::prefilter::Prefilter;
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;
use regex_automata::{Anchored, MatchKind, PatternID, Span};

use super::automaton::{byte_kind, start_row, word_lb_row, Automaton, Thread, LOOK_BEHINDS};
use super::bytes::{is_continuation, utf8_len};
use super::dfa::{Dense, Dfa, GaveUp, Lazy};
use super::futures::{future, Future, Futures};
use super::gate::{Gate, Seen};
use super::matcher::{Decided, Matcher, Scan};
use super::single::{self, Memo};
use super::tape::Tape;
use super::{edges, nfa, tuples};
use crate::config::{Config, DfaKind};
use crate::error::Error;

/// The immutable part of the thread matcher, shared by every stream: the
/// program over one of the two DFAs.
#[derive(Debug)]
pub(crate) struct Program(Progs);

#[derive(Debug)]
enum Progs {
    Dense(Prog<Dense>),
    Lazy(Prog<Lazy>),
}

/// What a stream borrows from its program for the duration of one call:
/// the DFA's cache, the memos of the fast paths (valid for that cache),
/// and the NFA fallback's scratch space. Never owned by a stream, so a
/// stream between calls is only its threads.
#[derive(Debug)]
pub(crate) struct Scratch<D: Dfa> {
    /// Unique among every scratch made: a stream knows whether it got the
    /// same one back.
    id: u64,
    pub(super) cache: D::Cache,
    nfa: nfa::Scratch,
    /// Spare lists for `run_nfa`, kept empty between calls: the threads
    /// kept by a step, and the closed sets seen in it (for merging).
    nfa_kept: Vec<NThread>,
    nfa_closed: Vec<Vec<StateID>>,
    /// `Future` of DFA states seen at the end of a feed.
    futures: Futures<D::Sid>,
    /// The one-thread loop's memo of configurations.
    single: single::Single<D::Sid>,
    /// The many-thread loop's memo of configurations (of DFA states, so
    /// kept with the cache that made them, like `single`).
    tuples: tuples::Tuples<D::Sid>,
}

/// The source of `Scratch::id`; 0 is never given (a fresh stream has seen
/// no scratch).
static SCRATCH_IDS: AtomicU64 = AtomicU64::new(1);

impl<D: Dfa> Scratch<D> {
    fn new(dfa: &D) -> Scratch<D> {
        Scratch {
            id: SCRATCH_IDS.fetch_add(1, Ordering::Relaxed),
            cache: dfa.create_cache(),
            nfa: nfa::Scratch::default(),
            nfa_kept: Vec::new(),
            nfa_closed: Vec::new(),
            futures: Futures::new(dfa.none()),
            single: single::Single::new(),
            tuples: tuples::Tuples::new(),
        }
    }
}

/// The pool's constructor: a scratch is made on first use, by the caller,
/// which has the DFA at hand.
type ScratchPool<D> = Pool<Option<Box<Scratch<D>>>, fn() -> Option<Box<Scratch<D>>>>;

fn no_scratch<D: Dfa>() -> Option<Box<Scratch<D>>> {
    None
}

/// The program over the DFA `D`.
#[derive(Debug)]
pub(crate) struct Prog<D: Dfa> {
    /// The DFA and what the tight loops need of it (`Prog` derefs to it).
    aut: Automaton<D>,
    nfa: NFA,
    /// The scratch spaces streams borrow: `regex-automata`'s pool, whose
    /// first user thread gets its own without synchronisation, and other
    /// threads one from a stack.
    pool: ScratchPool<D>,
    /// Set for testing: every call gets a new scratch, as if each feed of
    /// a stream ran on another thread.
    fresh: bool,
    /// Whether no thread can ever start.
    never: bool,
    /// Finds where a match may start, when every rule starts with one of a
    /// small set of literals; used to skip text where nothing is alive.
    prefilter: Option<Prefilter>,
    /// Without a prefilter: a literal every match contains near its start
    /// (see `gate`), to skip text where nothing can start.
    gate: Option<Gate>,
    /// The bytes a match can start with (an over-approximation from the
    /// NFA; every byte when a rule can match empty).
    first: [u64; 4],
    /// Set when the DFA steps the rules with their `\b` rewritten (see
    /// `edges`): for each rule, whether a match of it the DFA decides must
    /// be checked (`Prog::unsure`).
    check_after: Box<[bool]>,
    /// Whether some rule, as the DFA sees it, has a Unicode word
    /// assertion: the DFA then quits on non-ASCII bytes, and after one
    /// the NFA keeps going.
    quits: bool,
    /// Whether the rules as written (the NFA's) have no Unicode word
    /// assertion: then no look-around needs more than the byte at a
    /// position and the one before, and the NFA can step the first bytes of
    /// a character cut by the end of the tape (see `Core::nfa_ready`).
    byte_looks: bool,
    /// Whether the fast paths run (idle scans, the prefilter, the tight
    /// loops, stepping a long-lived thread alone, settling at the end of a
    /// feed). Off, every byte goes through the general thread loop, so the
    /// tests can check each fast path against it.
    fast: bool,
    /// For a DFA without a cache (the dense one): the one-thread loop's
    /// memo and which of the DFA's states have an open future, worked out
    /// when the rules are built, so that a feed the tight loops step whole
    /// borrows no scratch space.
    frozen: Option<Box<FrozenMemos<D::Sid>>>,
}

impl<D: Dfa> std::ops::Deref for Prog<D> {
    type Target = Automaton<D>;

    #[inline(always)]
    fn deref(&self) -> &Automaton<D> {
        &self.aut
    }
}

impl<D: Dfa> std::ops::DerefMut for Prog<D> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut Automaton<D> {
        &mut self.aut
    }
}

/// See `Prog::frozen`.
#[derive(Debug)]
struct FrozenMemos<S> {
    single: single::Frozen<S>,
    /// One bit per state, by `Dfa::index`: whether its future is known to
    /// be `Future::Open`, the one answer the quick path acts on (a bit
    /// test where it looks at the end of nearly every small feed).
    open: Box<[u64]>,
}

impl<S> FrozenMemos<S> {
    /// Whether the future of the state at `index` is known to be open.
    #[inline(always)]
    fn is_open(&self, index: Option<usize>) -> bool {
        index.is_some_and(|i| {
            self.open
                .get(i / 64)
                .is_some_and(|w| w & (1 << (i % 64)) != 0)
        })
    }
}

/// The most DFA states whose futures are worked out for a frozen memo.
const FROZEN_FUTURES: usize = 1 << 16;

impl Program {
    /// Builds the NFA and the lazy DFA over it and, as `config` asks, a
    /// dense DFA in place of the lazy one.
    pub(crate) fn new(sources: &[String], config: &Config) -> Result<Program, Error> {
        let dfa_config = DFA::config()
            .match_kind(MatchKind::LeftmostFirst)
            .unicode_word_boundary(true)
            .cache_capacity(config.get_cache_capacity())
            .skip_cache_capacity_check(true);
        let nfa_config = thompson::Config::new()
            .nfa_size_limit(Some(config.get_size_limit()))
            .which_captures(WhichCaptures::None);
        let mut lazy = Lazy(
            DFA::builder()
                .configure(dfa_config.clone())
                .thompson(nfa_config.clone())
                .build_many(sources)
                .map_err(Error::from_dfa)?,
        );
        // The NFA of the rules as written: the exact fallback.
        let nfa = lazy.0.get_nfa().clone();
        // Parsed once, for the rewrite (see `edges`) and the prefilter.
        let hirs = regex_automata::util::syntax::parse_many(sources).ok();
        let mut check_after = Vec::new();
        if config.get_fast_paths() {
            if let Some(rewritten) = hirs.as_deref().and_then(edges::rewrite) {
                // Built as the rules were, so it cannot fail where they
                // built; if it does, the DFA keeps the rules as written.
                let dfa = thompson::Compiler::new()
                    .configure(nfa_config)
                    .build_many_from_hir(&rewritten.hirs)
                    .ok()
                    .and_then(|n| DFA::builder().configure(dfa_config).build_from_nfa(n).ok());
                if let Some(dfa) = dfa {
                    lazy = Lazy(dfa);
                    check_after = rewritten.check_after;
                }
            }
        }
        let dfa_nfa = lazy.0.get_nfa().clone();
        let limit = config.get_dense_size_limit();
        let dense = match config.get_dfa() {
            DfaKind::Lazy => None,
            DfaKind::Auto => Dense::build(&dfa_nfa, limit).ok(),
            DfaKind::Dense => {
                Some(Dense::build(&dfa_nfa, limit).map_err(|e| Error::from_dense(*e, limit))?)
            }
        };
        // The tables are the same for both DFAs (one automaton); the lazy
        // one, already built, works them out.
        let rewritten = !check_after.is_empty();
        let mut prog = Prog::new(lazy, nfa, sources, hirs.as_deref(), config);
        if rewritten {
            prog.quits = dfa_nfa.look_set_any().contains_word_unicode();
            prog.check_after = check_after.into_boxed_slice();
            prog.word_lb = Some(Box::new(word_lb_row(&prog.dfa)));
        }
        Ok(Program(match dense {
            Some(dense) => {
                let mut prog = prog.with_dfa(dense);
                if prog.fast {
                    prog.freeze();
                }
                Progs::Dense(prog)
            }
            None => Progs::Lazy(prog),
        }))
    }

    /// Whether the streams step a dense DFA built with the rules (rather
    /// than a lazy one), and its size.
    pub(crate) fn dense_size(&self) -> Option<usize> {
        match &self.0 {
            Progs::Dense(p) => Some(p.dfa.memory_usage() + p.frozen_size()),
            Progs::Lazy(_) => None,
        }
    }
}

impl<D: Dfa> Prog<D> {
    /// The program over `dfa`; `hirs` are the rules parsed, for the
    /// prefilter.
    fn new(
        dfa: D,
        nfa: NFA,
        sources: &[String],
        hirs: Option<&[regex_syntax::hir::Hir]>,
        config: &Config,
    ) -> Prog<D> {
        let mut cache = dfa.create_cache();
        let mut may_start = Box::new([[0u64; 4]; 257]);
        for (lb, row) in may_start.iter_mut().enumerate() {
            *row = start_row(&dfa, &mut cache, (lb > 0).then(|| (lb - 1) as u8));
        }
        let first = nfa::first_bytes(&nfa);
        let quits = nfa.look_set_any().contains_word_unicode();
        let byte_looks = !quits;
        let never = sources.is_empty() || may_start.iter().all(|r| *r == [0; 4]);
        let prefilter = hirs
            .and_then(|hirs| Prefilter::from_hirs_prefix(MatchKind::LeftmostFirst, hirs))
            .filter(|p| p.max_needle_len() > 0);
        let gate = match prefilter {
            None if config.get_fast_paths() => Gate::new(sources),
            _ => None,
        };
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
        Prog {
            aut: Automaton {
                dfa,
                may_start,
                classes,
                nclasses: seen.len(),
                word_lb: None,
            },
            nfa,
            pool: Pool::new(no_scratch::<D> as fn() -> Option<Box<Scratch<D>>>),
            fresh: config.get_scratch_per_call(),
            never,
            prefilter,
            gate,
            first,
            check_after: Box::default(),
            quits,
            byte_looks,
            fast: config.get_fast_paths(),
            frozen: None,
        }
    }

    /// Works out the frozen memos, for a DFA without a cache.
    fn freeze(&mut self) {
        let Some(mut cache) = D::free_cache() else {
            return;
        };
        let single = single::Frozen::new(self, &mut cache);
        let dfa = &self.dfa;
        let mut futures = Futures::new(dfa.none());
        futures.get(dfa.none(), D::clear_count(&cache));
        let mut queue = Vec::new();
        for lb in LOOK_BEHINDS {
            let cfg = start::Config::new().anchored(Anchored::Yes).look_behind(lb);
            if let Ok(sid) = dfa.start_state(&mut cache, &cfg) {
                queue.push(sid);
            }
        }
        while let Some(sid) = queue.pop() {
            if futures.peek(sid).is_some() || futures.len() >= FROZEN_FUTURES {
                continue;
            }
            futures.insert(sid, future(dfa, &mut cache, sid));
            if dfa.is_dead(sid) || dfa.is_quit(sid) {
                continue;
            }
            for unit in dfa.byte_classes().representatives(..) {
                if let Some(b) = unit.as_u8() {
                    if let Ok(next) = dfa.next_state(&mut cache, sid, b) {
                        if futures.peek(next).is_none() {
                            queue.push(next);
                        }
                    }
                }
            }
        }
        let mut open: Vec<u64> = Vec::new();
        for (&sid, &f) in futures.iter() {
            if let (Future::Open, Some(i)) = (f, dfa.index(sid)) {
                if open.len() <= i / 64 {
                    open.resize(i / 64 + 1, 0);
                }
                open[i / 64] |= 1 << (i % 64);
            }
        }
        self.frozen = Some(Box::new(FrozenMemos {
            single,
            open: open.into_boxed_slice(),
        }));
    }

    /// The bytes of the frozen memos.
    fn frozen_size(&self) -> usize {
        self.frozen
            .as_ref()
            .map_or(0, |f| f.single.memory_usage() + f.open.len() * 8)
    }

    /// The same program over another DFA of the same NFA (built with the
    /// same options, so with the same byte classes and start states).
    fn with_dfa<E: Dfa>(self, dfa: E) -> Prog<E> {
        debug_assert_eq!(
            (0..=255u8)
                .map(|b| dfa.byte_classes().get(b))
                .collect::<Vec<_>>(),
            (0..=255u8)
                .map(|b| self.dfa.byte_classes().get(b))
                .collect::<Vec<_>>()
        );
        Prog {
            aut: Automaton {
                dfa,
                may_start: self.aut.may_start,
                classes: self.aut.classes,
                nclasses: self.aut.nclasses,
                word_lb: self.aut.word_lb,
            },
            nfa: self.nfa,
            pool: Pool::new(no_scratch::<E> as fn() -> Option<Box<Scratch<E>>>),
            fresh: self.fresh,
            never: self.never,
            prefilter: self.prefilter,
            gate: self.gate,
            first: self.first,
            check_after: self.check_after,
            quits: self.quits,
            byte_looks: self.byte_looks,
            fast: self.fast,
            frozen: None,
        }
    }

    /// Runs `f` with a scratch borrowed for its duration.
    #[inline(always)]
    fn with_scratch<R>(&self, f: impl FnOnce(&mut Scratch<D>) -> R) -> R {
        if self.fresh {
            return f(&mut Scratch::new(&self.dfa));
        }
        let mut guard = self.pool.get();
        let s = guard.get_or_insert_with(|| Box::new(Scratch::new(&self.dfa)));
        f(s)
    }

    /// The first position in `hay` from `from` where a thread can survive
    /// its first byte, or `hay.len()`; `lb` is the byte before `from`, if
    /// any.
    fn skip_idle(&self, hay: &[u8], from: usize, lb: Option<u8>) -> usize {
        self.skip_idle_seen(hay, 0, from, lb, &mut Seen::default())
    }

    /// `skip_idle`, with what the stream's earlier needle searches found
    /// (`hay[0]` is at stream offset `base`).
    fn skip_idle_seen(
        &self,
        hay: &[u8],
        base: usize,
        from: usize,
        lb: Option<u8>,
        seen: &mut Seen,
    ) -> usize {
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
        } else if let Some(gate) = &self.gate {
            p = gate.skip(hay, base, p, seen);
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

    fn nfa(&self) -> &NFA {
        &self.nfa
    }

    /// Whether a match the DFA decided may not be one of the rules as
    /// written (see `edges`): a rule whose `\b{end-half}` may have looked
    /// at the byte after the match, which is non-ASCII or not there yet.
    /// Such a match is worked out again on the NFA, from its start.
    #[inline]
    fn unsure(&self, tape: &Tape, best: &Best, eof: bool) -> bool {
        if !self.check_after.get(best.rule).copied().unwrap_or(false) {
            return false;
        }
        if best.end < tape.offset() {
            !tape.at(best.end).is_ascii()
        } else {
            !eof
        }
    }

    /// The look-behind a DFA thread starting at `p` is given: the byte
    /// before it, except after a non-ASCII word character when the rules'
    /// `\b` are rewritten, where it is `a`, so that a `\b{start-half}` at
    /// the start sees a word character (see `edges`).
    #[inline]
    fn start_lb(&self, tape: &Tape, p: usize) -> Option<u8> {
        let lb = tape.look_behind(p);
        match lb {
            Some(b) if !b.is_ascii() && self.word_lb.is_some() => {
                // The character before, decoded as `\b` decodes it (an
                // invalid sequence is not a word character), followed by a
                // word character: a boundary there says it is not one.
                let base = tape.base();
                let prev = &tape.bytes()[p.saturating_sub(4).max(base) - base..p - base];
                let mut hay = [b'a'; 5];
                hay[..prev.len()].copy_from_slice(prev);
                let hay = &hay[..prev.len() + 1];
                if LookMatcher::new().matches(Look::WordUnicode, hay, prev.len()) {
                    lb
                } else {
                    Some(b'a')
                }
            }
            _ => lb,
        }
    }

    /// Whether a match can start with byte `b`, whatever surrounds it.
    fn can_begin(&self, b: u8) -> bool {
        self.first[(b >> 6) as usize] & (1 << (b & 63)) != 0
    }
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
pub(crate) struct Core<D: Dfa> {
    /// The next byte to step.
    pos: usize,
    /// The live DFA threads.
    dfa_threads: Vec<Thread<D::Sid>>,
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
    /// Set by `Matcher::exclude` and `Matcher::cap`: at this position
    /// (stepped on the NFA), only the rules in this range of indices may
    /// start a match.
    exclude: Option<(usize, std::ops::Range<usize>)>,
    mode: Mode,
    /// The scratch (its id) and the generation of its cache that the DFA
    /// states in `dfa_threads` belong to (see `Core::resume`).
    seen: (u64, usize),
    /// The row of the frozen memo where the one-thread loop last stopped.
    hint: usize,
    /// What the gate's needle searches found in this stream (positions
    /// only: valid whatever scratch the next call borrows).
    needles: Seen,
    /// Set while more input follows in the same call (see `set_lazy`).
    lazy: bool,
    /// The last state of a stable DFA seen open at the end of a feed (an
    /// email's local part goes on for a word): its memo lookup is skipped.
    open: Option<D::Sid>,
}

impl<D: Dfa> Core<D> {
    fn new() -> Core<D> {
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
            lazy: false,
            open: None,
        }
    }

    /// The common cases of `run` for a small feed, without its general
    /// machinery: one of the tight loops steps the whole feed (at most one
    /// live thread and no match recorded, or one thread stepped alone), and
    /// the thread's future is known to be open. Returns false, having done
    /// part of the work or none, when `run` must go on from where this
    /// stopped.
    #[inline(always)]
    fn run_quick(
        &mut self,
        prog: &Prog<D>,
        cache: &mut D::Cache,
        memo: &mut impl Memo<D::Sid>,
        is_open: impl FnOnce(D::Sid, usize) -> bool,
        tape: &Tape,
    ) -> bool {
        if !prog.fast || self.mode != Mode::Dfa || self.dfa_threads.len() > 1 {
            return false;
        }
        let simple = self.best.is_none() && self.suspended.is_none();
        if !simple && self.dfa_threads.is_empty() {
            return false;
        }
        let run = if simple {
            self.run_simple(prog, cache, memo, tape)
        } else {
            // One thread, stepped alone: it holds a match it may still
            // beat, or it is the earliest of several.
            self.run_pending(prog, cache, tape)
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
        if D::STABLE && self.open == Some(t.sid) {
            return true;
        }
        let open = is_open(t.sid, D::clear_count(cache));
        if D::STABLE && open {
            self.open = Some(t.sid);
        }
        open
    }

    fn clear_nfa_threads(&mut self) {
        // Their sets are dropped: the scratch they came from is not at
        // hand between calls, and this happens once per decided match.
        self.nfa_threads.clear();
    }

    /// Before the DFA states this stream holds are stepped with the
    /// scratch `s`: when they were made in another cache, or in an earlier
    /// generation of this one (the lazy DFA's states are only valid there),
    /// they are worked out again by stepping the held text from the
    /// earliest live start. A short stretch (the usual case: a word under
    /// an email-like rule) is stepped again on the DFA: less than
    /// `SUSPEND_AFTER` bytes per call, so the total work stays linear. A
    /// longer one is replayed on the NFA, which keeps no DFA state and
    /// steps each byte at most once.
    #[inline(always)]
    fn resume(&mut self, s: &Scratch<D>) {
        if D::STABLE {
            return;
        }
        let now = (s.id, D::clear_count(&s.cache));
        if self.seen == now {
            return;
        }
        self.seen = now;
        if self.mode != Mode::Dfa || self.dfa_threads.is_empty() {
            // No DFA state held (a recorded match is only positions).
            return;
        }
        let from = self.replay_from(self.pos);
        if self.suspended.is_none() && self.pos - from < SUSPEND_AFTER {
            self.dfa_threads.clear();
            self.best = None;
            self.pos = from;
        } else {
            let until = self.pos;
            self.enter_nfa(from, until);
        }
    }

    /// Records the scratch and generation the DFA states held now belong to.
    #[inline(always)]
    fn leave(&mut self, s: &Scratch<D>) {
        if !D::STABLE {
            self.seen = (s.id, D::clear_count(&s.cache));
        }
    }

    fn enter_nfa(&mut self, from: usize, until: usize) {
        self.dfa_threads.clear();
        self.clear_nfa_threads();
        self.best = None;
        self.suspended = None;
        self.pos = from;
        self.mode = Mode::Nfa { until };
    }

    /// The decision of the recorded best match: the matcher stops after it
    /// (at `pos`, where its last thread stopped) until `restart`.
    fn decided(best: Best) -> Scan {
        Scan::Decided(Decided {
            rule: best.rule,
            span: best.start..best.end,
        })
    }

    fn run(&mut self, prog: &Prog<D>, s: &mut Scratch<D>, tape: &Tape, eof: bool) -> Scan {
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
    fn skip_idle_to(&mut self, prog: &Prog<D>, tape: &Tape, end: usize) -> usize {
        let base = tape.base();
        let hay = &tape.bytes()[..end - base];
        let lb = tape.look_behind(self.pos);
        let seen = &mut self.needles;
        prog.skip_idle_seen(hay, base, self.pos - base, lb, seen) + base
    }

    /// Runs the DFA to the end of the tape. Returns a decided match (the
    /// matcher then stops), or the position to replay from on the NFA.
    fn run_dfa(
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
                } else if self.dfa_threads.len() == 1 {
                    self.run_pending(prog, &mut s.cache, tape)?;
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

    /// At the end of a feed, settles what the bytes to come cannot change:
    /// drops threads with no possible match ahead and records matches that
    /// end here whatever follows, so a decided match is released without
    /// waiting for one more byte.
    fn settle(
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

    /// The common case of `run_dfa`, in a tight loop: at most one live
    /// thread and no match recorded, where every new thread either dies at
    /// once or merges into the live one (as in a word under a rule like
    /// `\w+@…`). Each byte is one lookup in the `single` memo. Stops,
    /// without stepping it, at the first byte that needs more: a match, a
    /// second thread, a quit, or the end of the buffer.
    #[inline(always)]
    fn run_simple(
        &mut self,
        prog: &Prog<D>,
        cache: &mut D::Cache,
        memo: &mut impl Memo<D::Sid>,
        tape: &Tape,
    ) -> Result<(), Fallback> {
        let base = tape.base();
        let hay = tape.bytes();
        // The thread's start, as an index in `hay` (meaningless while no
        // thread is alive).
        let (mut start, sid) = match self.dfa_threads.first() {
            Some(t) => (t.start - base, t.sid),
            None => (0, prog.dfa.none()),
        };
        let mut i = self.pos - base;
        if sid == prog.dfa.none() && prog.gate.is_some() {
            // Idle: the gate may skip (a segment fed lazily left its last
            // window unscanned, say).
            let lb = tape.look_behind(self.pos);
            i = prog.skip_idle_seen(hay, base, i, lb, &mut self.needles);
            self.pos = i + base;
            if self.lazy_stop(prog, self.pos) {
                return Ok(());
            }
        }
        let clears = D::clear_count(cache);
        memo.prepare(clears);
        let lb = (self.pos > 0).then(|| hay[i - 1]);
        let Some(mut row) = memo.config(prog, sid, prog.kind(lb)) else {
            return Ok(());
        };
        let classes = &prog.classes;
        let skips = prog.prefilter.is_some() || prog.gate.is_some();
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
            let j = prog.skip_idle_seen(hay, base, i, Some(hay[i - 1]), &mut self.needles);
            if j > i {
                i = j;
                let kind = prog.kind(Some(hay[i - 1]));
                match memo.config(prog, prog.dfa.none(), kind) {
                    Some(r) => row = r,
                    None => break,
                }
            }
            if self.lazy
                && prog
                    .gate
                    .as_ref()
                    .is_some_and(|g| g.blind(&self.needles, i + base))
            {
                // Nothing alive, and only the last window is left.
                break;
            }
        }
        let sid = memo.state(prog, row);
        memo.leave(row);
        self.pos = i + base;
        self.dfa_threads.clear();
        if sid != prog.dfa.none() {
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

    /// With `yes`, the bytes fed next are not the last of the caller's
    /// input for this call: where the gate can only tell that nothing
    /// starts before the last few bytes (the window a needle still to come
    /// could reach back into), the scan stops before that window, idle,
    /// instead of stepping it (the stream hands it back to the caller, see
    /// `StreamState::feed_part`).
    pub(crate) fn set_lazy(&mut self, yes: bool) {
        self.lazy = yes;
    }

    /// With a gate, the positions where the gate cannot skip (the window
    /// before the next needle, or before the end of what it searched): the
    /// tuple loop steps through them even while one thread or none is
    /// alive, rather than handing each word to the one-thread loop and the
    /// gate again. Empty under `set_lazy` when the window is the last one.
    #[inline(always)]
    fn gate_window(&self, prog: &Prog<D>) -> Option<(usize, usize)> {
        let gate = prog.gate.as_ref()?;
        Some(gate.window(&self.needles, self.lazy))
    }

    /// Whether a scan that reached `p` with nothing alive may stop there
    /// (see `set_lazy`).
    #[inline(always)]
    fn lazy_stop(&self, prog: &Prog<D>, p: usize) -> bool {
        self.lazy
            && prog
                .gate
                .as_ref()
                .is_some_and(|g| g.blind(&self.needles, p))
    }

    /// The common case of `run_dfa` with several live threads and no
    /// match recorded, in a tight loop over the `tuples` memo.
    #[inline(always)]
    fn run_tuples(
        &mut self,
        prog: &Prog<D>,
        s: &mut Scratch<D>,
        tape: &Tape,
        stay: Option<(usize, usize)>,
    ) -> Result<(), Fallback> {
        let (threads, pos) = (&mut self.dfa_threads, &mut self.pos);
        if s.tuples.run(prog, &mut s.cache, threads, pos, tape, stay) {
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
    fn run_pending(
        &mut self,
        prog: &Prog<D>,
        cache: &mut D::Cache,
        tape: &Tape,
    ) -> Result<(), Fallback> {
        let dfa = &prog.dfa;
        let hay = tape.bytes();
        let mut sid = self.dfa_threads[0].sid;
        let mut i = self.pos - tape.base();
        let clears = D::clear_count(cache);
        while i < hay.len() {
            let Ok(n) = dfa.next_state(cache, sid, hay[i]) else {
                break;
            };
            if dfa.is_special(n) || D::clear_count(cache) != clears {
                // `n` is valid even after a clear, but stepping it here would
                // skip the checks of the general path: leave this byte to it.
                break;
            }
            sid = n;
            i += 1;
        }
        let stale = D::clear_count(cache) != clears;
        self.dfa_threads[0].sid = sid;
        self.pos = i + tape.base();
        if stale {
            return Err(Fallback(self.replay_from(self.pos)));
        }
        Ok(())
    }

    #[inline(never)]
    fn eoi_dfa(&mut self, prog: &Prog<D>, s: &mut Scratch<D>, tape: &Tape) -> Result<(), Fallback> {
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

    /// Whether the NFA may step position `p`: look-around there needs the
    /// whole character at `p`, or the end of input.
    ///
    /// Without a Unicode word assertion in the rules (`Prog::byte_looks`),
    /// every byte on the tape is: stepping the first bytes of a cut
    /// character needs nothing after them, and a match decided before the
    /// cut (or a thread dying on its first byte) is not held for the rest
    /// of the character.
    fn nfa_ready(prog: &Prog<D>, tape: &Tape, p: usize, eof: bool) -> bool {
        let end = tape.offset();
        p < end && (eof || prog.byte_looks || p + utf8_len(tape.at(p)) <= end)
    }

    /// Runs the NFA, until it hands back to the DFA, stops at the end of
    /// what it may step, or decides.
    #[inline(never)]
    fn run_nfa(&mut self, prog: &Prog<D>, s: &mut Scratch<D>, tape: &Tape, eof: bool) -> Nfa {
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
    fn starts_of(
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
    fn eoi_nfa(&mut self, prog: &Prog<D>, s: &mut Scratch<D>, tape: &Tape) {
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

impl<D: Dfa> Matcher for Core<D> {
    type Program = Prog<D>;

    #[inline(always)]
    fn scan_quick(&mut self, prog: &Prog<D>, tape: &Tape) -> bool {
        if let (Some(f), Some(mut cache)) = (prog.frozen.as_deref(), D::free_cache()) {
            // The common feed of a dense DFA: no scratch to borrow.
            let mut hint = self.hint;
            let mut memo = single::FrozenRef {
                frozen: &f.single,
                hint: &mut hint,
            };
            let done = self.run_quick(
                prog,
                &mut cache,
                &mut memo,
                |sid, _| f.is_open(prog.dfa.index(sid)),
                tape,
            );
            self.hint = hint;
            return done;
        }
        prog.with_scratch(|s| {
            self.resume(s);
            let done = self.run_quick(
                prog,
                &mut s.cache,
                &mut s.single,
                |sid, clears| s.futures.get(sid, clears) == Some(Future::Open),
                tape,
            );
            self.leave(s);
            done
        })
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

/// The thread matcher over the program's DFA: a stream's threads and
/// positions, nothing it would need a lock or a cache for between calls.
#[derive(Debug)]
pub(crate) struct Threads(Cores);

#[derive(Debug)]
enum Cores {
    Dense(Core<Dense>),
    Lazy(Core<Lazy>),
}

impl Threads {
    pub(crate) fn new(prog: &Program) -> Threads {
        Threads(match prog.0 {
            Progs::Dense(_) => Cores::Dense(Core::new()),
            Progs::Lazy(_) => Cores::Lazy(Core::new()),
        })
    }

    /// With `yes`, the bytes fed next are not the last of the caller's
    /// input for this call (see `Core::set_lazy`).
    pub(crate) fn set_lazy(&mut self, yes: bool) {
        match &mut self.0 {
            Cores::Dense(c) => c.set_lazy(yes),
            Cores::Lazy(c) => c.set_lazy(yes),
        }
    }
}

/// Calls a `Core` method on the DFA the program has. A stream is only ever
/// run with the program that made it, so the two always agree.
macro_rules! dispatch {
    ($self:ident, $prog:ident, |$c:ident, $p:ident| $e:expr) => {
        match (&mut $self.0, &$prog.0) {
            (Cores::Dense($c), Progs::Dense($p)) => $e,
            (Cores::Lazy($c), Progs::Lazy($p)) => $e,
            _ => unreachable!("a stream runs with the program that made it"),
        }
    };
    ($self:ident, |$c:ident| $e:expr) => {
        match $self.0 {
            Cores::Dense(ref $c) => $e,
            Cores::Lazy(ref $c) => $e,
        }
    };
    (mut $self:ident, |$c:ident| $e:expr) => {
        match $self.0 {
            Cores::Dense(ref mut $c) => $e,
            Cores::Lazy(ref mut $c) => $e,
        }
    };
}

impl Matcher for Threads {
    type Program = Program;

    #[inline(always)]
    fn scan_quick(&mut self, prog: &Program, tape: &Tape) -> bool {
        dispatch!(self, prog, |c, p| c.scan_quick(p, tape))
    }

    fn scan(&mut self, prog: &Program, tape: &Tape, eof: bool) -> Scan {
        dispatch!(self, prog, |c, p| c.scan(p, tape, eof))
    }

    #[inline(always)]
    fn scanned(&self) -> usize {
        dispatch!(self, |c| c.scanned())
    }

    #[inline(always)]
    fn earliest_live(&self, prog: &Program) -> usize {
        match (&self.0, &prog.0) {
            (Cores::Dense(c), Progs::Dense(p)) => c.earliest_live(p),
            (Cores::Lazy(c), Progs::Lazy(p)) => c.earliest_live(p),
            _ => unreachable!("a stream runs with the program that made it"),
        }
    }

    fn earliest_candidate(&self) -> Option<usize> {
        dispatch!(self, |c| c.earliest_candidate())
    }

    #[inline(always)]
    fn recorded_end(&self) -> Option<usize> {
        dispatch!(self, |c| c.recorded_end())
    }

    #[inline(always)]
    fn is_idle(&self) -> bool {
        dispatch!(self, |c| c.is_idle())
    }

    #[inline(always)]
    fn skip_idle(&self, prog: &Program, hay: &[u8], from: usize, lb: Option<u8>) -> usize {
        match &prog.0 {
            Progs::Dense(p) => p.skip_idle(hay, from, lb),
            Progs::Lazy(p) => p.skip_idle(hay, from, lb),
        }
    }

    #[inline(always)]
    fn skip_to(&mut self, at: usize) {
        dispatch!(mut self, |c| c.skip_to(at))
    }

    #[inline(always)]
    fn restart(&mut self, at: usize) {
        dispatch!(mut self, |c| c.restart(at))
    }

    fn exclude(&mut self, at: usize, rule: usize) {
        dispatch!(mut self, |c| c.exclude(at, rule))
    }

    fn cap(&mut self, at: usize, end: usize) {
        dispatch!(mut self, |c| c.cap(at, end))
    }

    fn focus(&mut self, start: usize) {
        dispatch!(mut self, |c| c.focus(start))
    }

    fn discard(&mut self, at: usize) {
        dispatch!(mut self, |c| c.discard(at))
    }

    fn reset(&mut self) {
        dispatch!(mut self, |c| c.reset())
    }

    #[cfg(debug_assertions)]
    fn check_invariants(&self, tape: &Tape) {
        dispatch!(self, |c| c.check_invariants(tape))
    }
}
