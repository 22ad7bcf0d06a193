//! The thread matcher's program: the NFA, the DFA over it (dense or lazy),
//! the tables its loops read (`Automaton`), what finds where a match may
//! start (prefilter, gate, first bytes), the frozen memos of a dense DFA,
//! and the pool of `Scratch` that streams borrow for one call.
//!
//! Immutable once built and shared by every stream; a stream's state is
//! `state::Core`.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use regex_automata::hybrid::dfa::DFA;
use regex_automata::nfa::thompson::{self, NFA, WhichCaptures};
use regex_automata::util::look::{Look, LookMatcher};
use regex_automata::util::pool::Pool;
use regex_automata::util::prefilter::Prefilter;
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;
use regex_automata::{Anchored, MatchKind};

use super::escape::escapes_of;
use super::forward::Forward;
use super::reverse::Reverse;
use super::state::Best;
use crate::config::{Config, DfaKind};
use crate::engine::automaton::{Automaton, LOOK_BEHINDS, byte_kind, start_row, word_lb_row};
use crate::engine::bytes::is_continuation;
use crate::engine::dfa::{Dense, Dfa, Lazy};
use crate::engine::futures::{Future, Futures, future};
use crate::engine::gate::Gate;
use crate::engine::nfa::{self, NThread};
use crate::engine::tape::Tape;
use crate::engine::{edges, single, tuples};
use crate::error::Error;

/// The immutable part of the thread matcher, shared by every stream: the
/// program over one of the two DFAs.
#[derive(Debug)]
pub(crate) struct Program(pub(super) Progs);

#[derive(Debug)]
pub(super) enum Progs {
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
    pub(super) id: u64,
    pub(super) cache: D::Cache,
    pub(super) nfa: nfa::Scratch,
    /// Spare lists for `run_nfa`, kept empty between calls: the threads
    /// kept by a step, and the closed sets seen in it (for merging).
    pub(super) nfa_kept: Vec<NThread>,
    pub(super) nfa_closed: Vec<Vec<StateID>>,
    /// `Future` of DFA states seen at the end of a feed.
    pub(super) futures: Futures<D::Sid>,
    /// The one-thread loop's memo of configurations.
    pub(super) single: single::Single<D::Sid>,
    /// The many-thread loop's memo of configurations (of DFA states, so
    /// kept with the cache that made them, like `single`).
    pub(super) tuples: tuples::Tuples<D::Sid>,
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
    pub(super) aut: Automaton<D>,
    pub(super) nfa: NFA,
    /// The scratch spaces streams borrow: `regex-automata`'s pool, whose
    /// first user thread gets its own without synchronisation, and other
    /// threads one from a stack.
    pub(super) pool: ScratchPool<D>,
    /// Set for testing: every call gets a new scratch, as if each feed of
    /// a stream ran on another thread.
    pub(super) fresh: bool,
    /// Whether no thread can ever start.
    pub(super) never: bool,
    /// Finds where a match may start, when every rule starts with one of a
    /// small set of literals; used to skip text where nothing is alive.
    pub(super) prefilter: Option<Prefilter>,
    /// Without a prefilter: a literal every match contains near its start
    /// (see `gate`), to skip text where nothing can start.
    pub(super) gate: Option<Gate>,
    /// With a gate: the reverse automaton over its heads, which finds where
    /// a match may start at the earliest between the gate's skip and its
    /// stop (see `reverse`). Built on first use (`Prog::reverse`), as the
    /// forward skip is.
    pub(super) reverse: OnceLock<Option<Box<Reverse>>>,
    /// Without a prefilter or a gate: the rules, parsed, for the forward
    /// skip (see `forward`), which finds where a candidate still alive at
    /// the first match end begins. Built on first use (`Prog::forward`),
    /// so that rules whose streams never scan a long idle stretch do not
    /// pay for its automata.
    pub(super) forward_hirs: Option<Box<[regex_syntax::hir::Hir]>>,
    pub(super) forward: OnceLock<Option<Box<Forward>>>,
    /// The NFA size limit the forward skip's automata are built with.
    pub(super) size_limit: usize,
    /// The bytes a match can start with (an over-approximation from the
    /// NFA; every byte when a rule can match empty).
    pub(super) first: [u64; 4],
    /// Set when the DFA steps the rules with their `\b` rewritten (see
    /// `edges`): for each rule, whether a match of it the DFA decides must
    /// be checked (`Prog::unsure`).
    pub(super) check_after: Box<[bool]>,
    /// Whether some rule, as the DFA sees it, has a Unicode word
    /// assertion: the DFA then quits on non-ASCII bytes, and after one
    /// the NFA keeps going.
    pub(super) quits: bool,
    /// Whether the rules as written (the NFA's) have no Unicode word
    /// assertion: then no look-around needs more than the byte at a
    /// position and the one before, and the NFA can step the first bytes of
    /// a character cut by the end of the tape (see `Core::nfa_ready`).
    pub(super) byte_looks: bool,
    /// Whether the fast paths run (idle scans, the prefilter, the tight
    /// loops, stepping a long-lived thread alone, settling at the end of a
    /// feed). Off, every byte goes through the general thread loop, so the
    /// tests can check each fast path against it.
    pub(super) fast: bool,
    /// For a DFA without a cache (the dense one): the one-thread loop's
    /// memo and which of the DFA's states have an open future, worked out
    /// when the rules are built, so that a feed the tight loops step whole
    /// borrows no scratch space.
    pub(super) frozen: Option<Box<FrozenMemos<D::Sid>>>,
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
pub(super) struct FrozenMemos<S> {
    pub(super) single: single::Frozen<S>,
    /// One bit per state, by `Dfa::index`: whether its future is known to
    /// be `Future::Open`, the one answer the quick path acts on (a bit
    /// test where it looks at the end of nearly every small feed).
    pub(super) open: Box<[u64]>,
    /// The escapes of each state, by `Dfa::index` (see `escape`), for
    /// the pending loop; 0 (`Escapes::NONE`) where there are none.
    pub(super) escapes: Box<[u32]>,
}

impl<S> FrozenMemos<S> {
    /// Whether the future of the state at `index` is known to be open.
    #[inline(always)]
    pub(super) fn is_open(&self, index: Option<usize>) -> bool {
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

    /// Whether a token-sized chunk may be stepped where it is (see
    /// `token`): the fast paths are on, the DFA is dense with its frozen
    /// memos, and the rules have no gate.
    pub(crate) fn takes_tokens(&self) -> bool {
        match &self.0 {
            Progs::Dense(p) => p.fast && p.frozen.is_some() && p.gate.is_none(),
            Progs::Lazy(_) => false,
        }
    }

    /// Whether a feed's scan may leave the gate's last window held idle
    /// (see `window`): the fast paths are on and the rules have a gate.
    pub(crate) fn holds_windows(&self) -> bool {
        match &self.0 {
            Progs::Dense(p) => p.fast && p.gate.is_some(),
            Progs::Lazy(p) => p.fast && p.gate.is_some(),
        }
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
    pub(super) fn new(
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
        let forward_hirs = match (&prefilter, &gate, hirs) {
            (None, None, Some(hirs)) if config.get_fast_paths() && Forward::eligible(hirs) => {
                Some(hirs.to_vec().into_boxed_slice())
            }
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
            reverse: OnceLock::new(),
            forward_hirs,
            forward: OnceLock::new(),
            size_limit: config.get_size_limit(),
            first,
            check_after: Box::default(),
            quits,
            byte_looks,
            fast: config.get_fast_paths(),
            frozen: None,
        }
    }

    /// Works out the frozen memos, for a DFA without a cache.
    pub(super) fn freeze(&mut self) {
        let Some(mut cache) = D::free_cache() else {
            return;
        };
        let single = single::Frozen::new(self, &mut cache);
        let dfa = &self.dfa;
        let mut futures = Futures::new(dfa.none());
        futures.get(dfa.none(), D::clear_count(&cache));
        let mut queue = Vec::new();
        // The bytes of each class, for the escapes.
        let mut members = vec![Vec::new(); dfa.byte_classes().alphabet_len()];
        for b in 0..=255u8 {
            members[dfa.byte_classes().get(b) as usize].push(b);
        }
        let mut escapes: Vec<u32> = Vec::new();
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
            if let (false, Some(i)) = (dfa.is_special(sid), dfa.index(sid)) {
                let reps = dfa.byte_classes().representatives(..);
                let esc = escapes_of(
                    sid,
                    reps.filter_map(|u| u.as_u8()),
                    |x, b| dfa.next_state(&mut cache, x, b).ok(),
                    |x| dfa.is_special(x),
                    |b| dfa.byte_classes().get(b) as usize,
                    &members,
                );
                if esc.is_some() {
                    if escapes.len() <= i {
                        escapes.resize(i + 1, 0);
                    }
                    escapes[i] = esc.word();
                }
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
            escapes: escapes.into_boxed_slice(),
        }));
    }

    /// The bytes of the frozen memos.
    pub(super) fn frozen_size(&self) -> usize {
        self.frozen.as_ref().map_or(0, |f| {
            f.single.memory_usage() + f.open.len() * 8 + f.escapes.len() * 4
        })
    }

    /// The same program over another DFA of the same NFA (built with the
    /// same options, so with the same byte classes and start states).
    pub(super) fn with_dfa<E: Dfa>(self, dfa: E) -> Prog<E> {
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
            reverse: self.reverse,
            forward_hirs: self.forward_hirs,
            forward: self.forward,
            size_limit: self.size_limit,
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
    pub(super) fn with_scratch<R>(&self, f: impl FnOnce(&mut Scratch<D>) -> R) -> R {
        if self.fresh {
            return f(&mut Scratch::new(&self.dfa));
        }
        let mut guard = self.pool.get();
        let s = guard.get_or_insert_with(|| Box::new(Scratch::new(&self.dfa)));
        f(s)
    }

    /// The forward skip, built on first use; `None` where the rules have
    /// none (see `forward_hirs`).
    pub(super) fn forward(&self) -> Option<&Forward> {
        self.forward
            .get_or_init(|| {
                let hirs = self.forward_hirs.as_deref()?;
                Forward::new(hirs, self.size_limit).map(Box::new)
            })
            .as_deref()
    }

    /// The reverse automaton of the gate's heads, built on first use;
    /// `None` without a gate, or where it does not build within its limit.
    #[inline]
    pub(super) fn reverse(&self) -> Option<&Reverse> {
        self.reverse
            .get_or_init(|| Reverse::new(self.gate.as_ref()?.heads()).map(Box::new))
            .as_deref()
    }

    pub(super) fn nfa(&self) -> &NFA {
        &self.nfa
    }

    /// Whether a match the DFA decided may not be one of the rules as
    /// written (see `edges`): a rule whose `\b{end-half}` may have looked
    /// at the byte after the match, which is non-ASCII or not there yet.
    /// Such a match is worked out again on the NFA, from its start.
    #[inline]
    pub(super) fn unsure(&self, tape: &Tape, best: &Best, eof: bool) -> bool {
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
    pub(super) fn start_lb(&self, tape: &Tape, p: usize) -> Option<u8> {
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
    pub(super) fn can_begin(&self, b: u8) -> bool {
        self.first[(b >> 6) as usize] & (1 << (b & 63)) != 0
    }
}
