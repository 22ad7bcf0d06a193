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
use regex_automata::nfa::thompson::{NFA, State};
use regex_automata::util::alphabet::ByteClasses;
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;

use super::nfa::push_epsilons;

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

/// How much determinization work a dense build may do, per byte of its size
/// limit, in the units of [`determinize_limit`].
const WORK_PER_LIMIT_BYTE: usize = 32;

/// The closure width up to which one stored NFA state counts once.
const NARROW_CLOSURE: usize = 128;

/// The most of its size limit a dense build's determinizer may use for
/// NFA state sets, as a divisor: an eighth.
const SETS_SHARE: usize = 8;

impl Dense {
    /// Determinizes `nfa` (built with the options the lazy DFA uses), or
    /// fails when the DFA would exceed `limit` bytes, or when the work to
    /// build it would exceed what [`determinize_limit`] allows.
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
            .determinize_size_limit(Some(determinize_limit(nfa, limit)));
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

/// The bound on the determinizer's own memory (the NFA state sets of the
/// DFA states it has made) that keeps a dense build's time in proportion to
/// `limit`.
///
/// The determinizer's memory bounds the DFA's size, not the time it takes:
/// it works out each transition of each DFA state by walking the epsilon
/// closures of the NFA states it stores, so its work is about
///
/// `alphabet classes × stored NFA states × closure width per state`.
///
/// The second factor is its memory. The third is estimated by the widest
/// closure from any byte transition's target, counted as 1 up to
/// [`NARROW_CLOSURE`] (most NFA states stored have closures far narrower
/// than the widest). The product may reach `WORK_PER_LIMIT_BYTE × limit`.
/// A rule such as `[\s\S]*?{1000}<think>{1000}\p{L}` keeps a thousand
/// loops live in every DFA state, each closing over all the others: its
/// dense DFA is under 1 MB but took seconds to build, where its lazy DFA
/// takes milliseconds. Under this bound its dense build stops early and
/// `DfaKind::Auto` falls back to the lazy DFA, while the packs and the
/// PII rule sets still fit.
///
/// The sets may also take at most an eighth of `limit` ([`SETS_SHARE`]).
/// The work per stored NFA state is then bounded as well: it is the
/// alphabet's size at least, even when closures are narrow. The rule sets
/// that fit the limit store few NFA states per DFA state: the sets take
/// 0.05 to 0.11 bytes per byte of the DFA for the packs and the benches'
/// PII rules, whose dense DFAs come closest to the default limit. Rules
/// such as `(?U)[\s\S]*?[\s\S]*?.{1000}` store up to a thousand
/// positions in every DFA state: their sets took four times the DFA's
/// size, or outgrew the limit before the DFA did, after seconds.
///
/// The closure walk itself is bounded by `limit` steps; an NFA whose
/// closures add up to more gets a bound of 1 byte (no dense DFA).
fn determinize_limit(nfa: &NFA, limit: usize) -> usize {
    let classes = nfa.byte_classes().alphabet_len();
    let Some(width) = widest_closure(nfa, limit) else {
        return 1;
    };
    let per_byte = classes.saturating_mul(width.max(NARROW_CLOSURE)) / NARROW_CLOSURE;
    let work = limit.saturating_mul(WORK_PER_LIMIT_BYTE) / per_byte.max(1);
    work.min(limit / SETS_SHARE).max(1)
}

/// The most NFA states one epsilon closure from the target of a byte
/// transition visits (unions and look-around included), or `None` once the
/// walks have taken more than `budget` steps in all.
fn widest_closure(nfa: &NFA, budget: usize) -> Option<usize> {
    let mut targets: Vec<StateID> = Vec::new();
    for state in nfa.states() {
        match state {
            State::ByteRange { trans } => targets.push(trans.next),
            State::Sparse(sparse) => targets.extend(sparse.transitions.iter().map(|t| t.next)),
            // `StateID::ZERO` marks a byte with no transition.
            State::Dense(table) => targets.extend(
                table
                    .transitions
                    .iter()
                    .copied()
                    .filter(|&next| next != StateID::ZERO),
            ),
            _ => {}
        }
    }
    targets.sort_unstable();
    targets.dedup();
    let mut seen = vec![0u32; nfa.states().len()];
    let mut stack = Vec::new();
    let (mut widest, mut steps) = (0, 0usize);
    for (walk, &target) in (1u32..).zip(&targets) {
        let mut width = 0;
        stack.push(target);
        while let Some(id) = stack.pop() {
            if std::mem::replace(&mut seen[id.as_usize()], walk) == walk {
                continue;
            }
            width += 1;
            steps += 1;
            if steps > budget {
                return None;
            }
            push_epsilons(nfa.state(id), &mut stack);
        }
        widest = widest.max(width);
    }
    Some(widest)
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

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use regex_automata::nfa::thompson::{Config, NFA, State, WhichCaptures};
    use regex_automata::util::primitives::StateID;

    use super::{determinize_limit, widest_closure};

    fn nfa(pattern: &str) -> NFA {
        NFA::compiler()
            .configure(Config::new().which_captures(WhichCaptures::None))
            .build(pattern)
            .unwrap()
    }

    /// The naive oracle: every state's epsilon closure, recursively, into a
    /// set of its own, for every state a byte transition leads to.
    fn widest_naive(nfa: &NFA) -> usize {
        fn close(nfa: &NFA, id: StateID, seen: &mut HashSet<StateID>) {
            if !seen.insert(id) {
                return;
            }
            match nfa.state(id) {
                State::Union { alternates } => {
                    for &a in alternates.iter() {
                        close(nfa, a, seen);
                    }
                }
                State::BinaryUnion { alt1, alt2 } => {
                    close(nfa, *alt1, seen);
                    close(nfa, *alt2, seen);
                }
                State::Capture { next, .. } | State::Look { next, .. } => close(nfa, *next, seen),
                _ => {}
            }
        }
        let mut widest = 0;
        for state in nfa.states() {
            let nexts: Vec<StateID> = match state {
                State::ByteRange { trans } => vec![trans.next],
                State::Sparse(s) => s.transitions.iter().map(|t| t.next).collect(),
                State::Dense(d) => d
                    .transitions
                    .iter()
                    .copied()
                    .filter(|&next| next != StateID::ZERO)
                    .collect(),
                _ => vec![],
            };
            for next in nexts {
                let mut seen = HashSet::new();
                close(nfa, next, &mut seen);
                widest = widest.max(seen.len());
            }
        }
        widest
    }

    #[test]
    fn widest_closure_matches_the_naive_walk() {
        for pattern in [
            "abc",
            r"x{100}",
            r"(?:a*){100}b",
            r"[\s\S]*?{50}<think>{20}\p{L}",
            r"\b(?:foo|bar|baz)+\b",
            r"(?:(?:a|b)*c|d?)+e",
            r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]+\.[A-Za-z]{2,}",
            "",
        ] {
            let nfa = nfa(pattern);
            assert_eq!(
                widest_closure(&nfa, usize::MAX),
                Some(widest_naive(&nfa)),
                "{pattern}"
            );
        }
    }

    #[test]
    fn widest_closure_gives_up_past_its_budget() {
        let nfa = nfa(r"(?:a*){100}b");
        let widest = widest_closure(&nfa, usize::MAX).unwrap();
        assert!(widest > 200, "{widest}");
        assert_eq!(widest_closure(&nfa, 150), None);
        assert_eq!(determinize_limit(&nfa, 150), 1);
    }

    #[test]
    fn determinize_limit_shrinks_with_wide_closures_only() {
        let limit = 8 << 20;
        // Narrow closures: the sets' share of the size limit.
        assert_eq!(determinize_limit(&nfa(r"x{100}"), limit), limit / 8);
        assert_eq!(determinize_limit(&nfa(r"x{100}"), 7), 1);
        // A thousand live loops: a small fraction of it.
        let wide = determinize_limit(&nfa(r"[\s\S]*?{1000}<think>{1000}\p{L}"), limit);
        assert!(wide < limit / 32, "{wide}");
    }
}
