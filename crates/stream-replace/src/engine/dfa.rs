//! The two DFAs the thread matcher can step, behind one trait.
//!
//! A dense DFA ([`Dense`]) is built whole when the rules are built. Its
//! state ids are plain indexes into one shared table: a stream holds them
//! between feeds with no cache, and any thread may step them.
//!
//! The lazy DFA ([`Lazy`]) builds its states as text is seen, into a cache.
//! Its state ids are only valid in the cache that made them, and only until
//! that cache is cleared; streams borrow a cache for the duration of one
//! call (see `threads`), so a stream checks, before it steps the ids it
//! holds, that it got the same cache back, in the same generation.
//!
//! Both are built from one Thompson NFA with the same options (anchored,
//! leftmost-first, every non-ASCII byte a quit byte when a rule uses a
//! Unicode word boundary), so they step the same automaton.

use std::fmt::Debug;
use std::hash::Hash;

use regex_automata::MatchKind;
use regex_automata::dfa::{Automaton, StartKind, dense};
use regex_automata::hybrid;
use regex_automata::nfa::thompson::NFA;
use regex_automata::util::alphabet::ByteClasses;
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;

/// The DFA could not give a state: a quit, or a lazy cache that gave up.
/// Either way the NFA takes over.
#[derive(Debug)]
pub(crate) struct GaveUp;

/// What the thread matcher needs of a DFA.
pub(crate) trait Dfa: Debug + Send + Sync + 'static {
    /// A state id.
    type Sid: Copy + Eq + Hash + Debug + Send + Sync + 'static;
    /// The mutable part a stream borrows to step the DFA.
    type Cache: Debug + Send + 'static;
    /// Whether state ids stay valid whatever cache steps them (the dense
    /// DFA's do; the lazy DFA's belong to one generation of one cache).
    const STABLE: bool;

    fn create_cache(&self) -> Self::Cache;
    /// A cache for free, when the DFA needs none: streams then step it
    /// without borrowing a scratch space.
    fn free_cache() -> Option<Self::Cache>;
    /// How many times the cache was cleared: every state id taken before
    /// the last clear is stale.
    fn clear_count(cache: &Self::Cache) -> usize;
    fn next_state(
        &self,
        cache: &mut Self::Cache,
        sid: Self::Sid,
        b: u8,
    ) -> Result<Self::Sid, GaveUp>;
    fn next_eoi_state(&self, cache: &mut Self::Cache, sid: Self::Sid) -> Result<Self::Sid, GaveUp>;
    fn start_state(
        &self,
        cache: &mut Self::Cache,
        cfg: &start::Config,
    ) -> Result<Self::Sid, GaveUp>;
    /// A state that is never a real state: "no thread".
    fn none(&self) -> Self::Sid;
    /// The index of a state in the DFA's table, for a DFA whose state ids
    /// are stable (`None` for the others): a table indexed by it stands in
    /// for a map keyed by state.
    fn index(&self, sid: Self::Sid) -> Option<usize>;
    /// Whether `sid` is one of the states below (or unknown): the check on
    /// the hot path, before the exact ones.
    fn is_special(&self, sid: Self::Sid) -> bool;
    fn is_dead(&self, sid: Self::Sid) -> bool;
    fn is_quit(&self, sid: Self::Sid) -> bool;
    fn is_match(&self, sid: Self::Sid) -> bool;
    /// The rule of a match state (the first one, leftmost-first).
    fn match_rule(&self, cache: &Self::Cache, sid: Self::Sid) -> usize;
    fn byte_classes(&self) -> &ByteClasses;
}

/// The lazy DFA, built as text is seen.
#[derive(Debug)]
pub(crate) struct Lazy(pub(super) hybrid::dfa::DFA);

impl Dfa for Lazy {
    type Sid = hybrid::LazyStateID;
    type Cache = hybrid::dfa::Cache;
    const STABLE: bool = false;

    fn create_cache(&self) -> Self::Cache {
        self.0.create_cache()
    }

    #[inline(always)]
    fn free_cache() -> Option<Self::Cache> {
        None
    }

    #[inline(always)]
    fn clear_count(cache: &Self::Cache) -> usize {
        cache.clear_count()
    }

    #[inline(always)]
    fn next_state(
        &self,
        cache: &mut Self::Cache,
        sid: Self::Sid,
        b: u8,
    ) -> Result<Self::Sid, GaveUp> {
        self.0.next_state(cache, sid, b).map_err(|_| GaveUp)
    }

    #[inline(always)]
    fn next_eoi_state(&self, cache: &mut Self::Cache, sid: Self::Sid) -> Result<Self::Sid, GaveUp> {
        self.0.next_eoi_state(cache, sid).map_err(|_| GaveUp)
    }

    #[inline(always)]
    fn start_state(
        &self,
        cache: &mut Self::Cache,
        cfg: &start::Config,
    ) -> Result<Self::Sid, GaveUp> {
        self.0.start_state(cache, cfg).map_err(|_| GaveUp)
    }

    #[inline(always)]
    fn none(&self) -> Self::Sid {
        // Index 0 of the transition table is the unknown state, whose id is
        // always tagged and never a thread's.
        hybrid::LazyStateID::default()
    }

    #[inline(always)]
    fn index(&self, _: Self::Sid) -> Option<usize> {
        None
    }

    #[inline(always)]
    fn is_special(&self, sid: Self::Sid) -> bool {
        sid.is_tagged()
    }

    #[inline(always)]
    fn is_dead(&self, sid: Self::Sid) -> bool {
        sid.is_dead()
    }

    #[inline(always)]
    fn is_quit(&self, sid: Self::Sid) -> bool {
        sid.is_quit()
    }

    #[inline(always)]
    fn is_match(&self, sid: Self::Sid) -> bool {
        sid.is_match()
    }

    #[inline(always)]
    fn match_rule(&self, cache: &Self::Cache, sid: Self::Sid) -> usize {
        self.0.match_pattern(cache, sid, 0).as_usize()
    }

    fn byte_classes(&self) -> &ByteClasses {
        self.0.byte_classes()
    }
}

/// The dense DFA, built whole at `build()`.
#[derive(Debug)]
pub(crate) struct Dense(pub(super) dense::DFA<Vec<u32>>);

impl Dense {
    /// Determinizes `nfa` (built with the options the lazy DFA uses), or
    /// fails when the DFA, or the work to build it, would exceed `limit`
    /// bytes.
    pub(super) fn build(nfa: &NFA, limit: usize) -> Result<Dense, Box<dense::BuildError>> {
        let config = dense::Config::new()
            .match_kind(MatchKind::LeftmostFirst)
            .unicode_word_boundary(true)
            .start_kind(StartKind::Anchored)
            // Accelerated states would be special states too: every thread
            // step would leave the hot path for them.
            .accelerate(false)
            .minimize(false)
            .dfa_size_limit(Some(limit))
            .determinize_size_limit(Some(limit));
        dense::Builder::new()
            .configure(config)
            .build_from_nfa(nfa)
            .map(Dense)
            .map_err(Box::new)
    }

    /// The heap the DFA uses.
    pub(super) fn memory_usage(&self) -> usize {
        self.0.memory_usage()
    }
}

impl Dfa for Dense {
    type Sid = StateID;
    type Cache = ();
    const STABLE: bool = true;

    fn create_cache(&self) -> Self::Cache {}

    #[inline(always)]
    fn free_cache() -> Option<Self::Cache> {
        Some(())
    }

    #[inline(always)]
    fn clear_count(_: &Self::Cache) -> usize {
        0
    }

    #[inline(always)]
    fn next_state(&self, _: &mut Self::Cache, sid: Self::Sid, b: u8) -> Result<Self::Sid, GaveUp> {
        Ok(self.0.next_state(sid, b))
    }

    #[inline(always)]
    fn next_eoi_state(&self, _: &mut Self::Cache, sid: Self::Sid) -> Result<Self::Sid, GaveUp> {
        Ok(self.0.next_eoi_state(sid))
    }

    #[inline(always)]
    fn start_state(&self, _: &mut Self::Cache, cfg: &start::Config) -> Result<Self::Sid, GaveUp> {
        self.0.start_state(cfg).map_err(|_| GaveUp)
    }

    #[inline(always)]
    fn none(&self) -> Self::Sid {
        // State ids are multiples of the stride, far below this.
        StateID::MAX
    }

    #[inline(always)]
    fn index(&self, sid: Self::Sid) -> Option<usize> {
        // Ids are premultiplied by the stride.
        Some(sid.as_usize() >> self.0.stride2())
    }

    #[inline(always)]
    fn is_special(&self, sid: Self::Sid) -> bool {
        self.0.is_special_state(sid) || sid == StateID::MAX
    }

    #[inline(always)]
    fn is_dead(&self, sid: Self::Sid) -> bool {
        self.0.is_dead_state(sid)
    }

    #[inline(always)]
    fn is_quit(&self, sid: Self::Sid) -> bool {
        self.0.is_quit_state(sid)
    }

    #[inline(always)]
    fn is_match(&self, sid: Self::Sid) -> bool {
        self.0.is_match_state(sid)
    }

    #[inline(always)]
    fn match_rule(&self, _: &Self::Cache, sid: Self::Sid) -> usize {
        self.0.match_pattern(sid, 0).as_usize()
    }

    fn byte_classes(&self) -> &ByteClasses {
        self.0.byte_classes()
    }
}
