//! What the future of a lazy DFA state holds, and a memo of it.
//!
//! At the end of a feed, a thread whose state can lead to no match is
//! dropped, and a match that ends here whatever comes next is decided
//! without waiting for one more byte. Working that out visits a state's
//! transitions on every byte class, so the answers are memoised per
//! generation of the cache.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash};

use super::bytes::IdHasher;
use super::dfa::Dfa;

/// What the future of a DFA state holds, whatever bytes come next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Future {
    /// It depends on the bytes to come.
    Open,
    /// No continuation (bytes or end of input) leads to a match.
    Finished,
    /// A match of this rule ends here for every continuation, and nothing
    /// after it can match.
    EndsHere(usize),
    /// The DFA cannot tell (quit transitions); the NFA can.
    Unknown,
}

/// Works out the `Future` of a DFA state, from its transitions on one byte
/// of each equivalence class and at the end of input. `Open` when some
/// continuation can still change the outcome; `Unknown` when only a quit
/// transition (which the DFA cannot follow) stands in the way of a
/// conclusion, or a cache clear on the way made `sid` stale (the caller
/// sees the clear).
pub(super) fn future<D: Dfa>(dfa: &D, cache: &mut D::Cache, sid: D::Sid) -> Future {
    let clears = D::clear_count(cache);
    let mut unknown = false;
    match finished(dfa, cache, sid) {
        Fin::Yes => return Future::Finished,
        Fin::Stale => return Future::Unknown,
        Fin::Quit => unknown = true,
        Fin::No => {}
    }
    let rule = match dfa.next_eoi_state(cache, sid) {
        Ok(eoi) if D::clear_count(cache) == clears && dfa.is_match(eoi) => {
            dfa.match_rule(cache, eoi)
        }
        _ => {
            return if unknown {
                Future::Unknown
            } else {
                Future::Open
            };
        }
    };
    for unit in dfa.byte_classes().representatives(..) {
        let Some(b) = unit.as_u8() else { continue };
        let Ok(n) = dfa.next_state(cache, sid, b) else {
            return Future::Unknown;
        };
        if D::clear_count(cache) != clears {
            return Future::Unknown;
        }
        if dfa.is_quit(n) {
            unknown = true;
            continue;
        }
        if !dfa.is_match(n) || dfa.match_rule(cache, n) != rule {
            return Future::Open;
        }
        match finished(dfa, cache, n) {
            Fin::Yes => {}
            Fin::No => return Future::Open,
            Fin::Quit | Fin::Stale => unknown = true,
        }
        if D::clear_count(cache) != clears {
            return Future::Unknown;
        }
    }
    if unknown {
        Future::Unknown
    } else {
        Future::EndsHere(rule)
    }
}

/// Whether a DFA state can lead to no match whatever comes next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fin {
    Yes,
    No,
    /// Only quit transitions might lead on.
    Quit,
    /// A cache clear on the way made the state stale.
    Stale,
}

fn finished<D: Dfa>(dfa: &D, cache: &mut D::Cache, sid: D::Sid) -> Fin {
    let clears = D::clear_count(cache);
    let mut quit = false;
    for unit in dfa.byte_classes().representatives(..) {
        let Some(b) = unit.as_u8() else { continue };
        let n = dfa.next_state(cache, sid, b);
        if D::clear_count(cache) != clears {
            return Fin::Stale;
        }
        match n {
            Ok(n) if dfa.is_dead(n) => {}
            Ok(n) if dfa.is_quit(n) => quit = true,
            _ => return Fin::No,
        }
    }
    let eoi = dfa.next_eoi_state(cache, sid);
    if D::clear_count(cache) != clears {
        return Fin::Stale;
    }
    match eoi {
        Ok(eoi) if !dfa.is_match(eoi) && !dfa.is_quit(eoi) => {
            if quit {
                Fin::Quit
            } else {
                Fin::Yes
            }
        }
        _ => Fin::No,
    }
}

/// The memo of DFA states' `Future`s, for one generation of the cache: a
/// map, and the last few entries used, looked at first.
#[derive(Debug)]
pub(super) struct Futures<S> {
    map: HashMap<S, Future, BuildHasherDefault<IdHasher>>,
    recent: [(S, Future); RECENT],
    /// A state id that is never a real state, for the empty slots of
    /// `recent`.
    none: S,
    /// The cache's clear count the entries are valid for.
    clears: usize,
}

/// Entries of `Futures::recent`.
const RECENT: usize = 4;

impl<S: Copy + Eq + Hash> Futures<S> {
    pub(super) fn new(none: S) -> Futures<S> {
        Futures {
            map: HashMap::default(),
            recent: [(none, Future::Open); RECENT],
            none,
            clears: 0,
        }
    }

    /// The memoised future of `sid`; `clears` is the cache's clear count
    /// now (a different one forgets every entry first).
    #[inline(always)]
    pub(super) fn get(&mut self, sid: S, clears: usize) -> Option<Future> {
        if self.clears != clears {
            self.map.clear();
            self.recent = [(self.none, Future::Open); RECENT];
            self.clears = clears;
        }
        if let Some(&(_, f)) = self.recent.iter().find(|(k, _)| *k == sid) {
            return Some(f);
        }
        let f = *self.map.get(&sid)?;
        self.remember(sid, f);
        Some(f)
    }

    /// The memoised future of `sid`, without touching the memo (for a
    /// memo shared by every stream, of a DFA without a cache).
    #[inline(always)]
    pub(super) fn peek(&self, sid: S) -> Option<Future> {
        self.map.get(&sid).copied()
    }

    /// How many futures it holds.
    pub(super) fn len(&self) -> usize {
        self.map.len()
    }

    /// Every future it holds.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&S, &Future)> {
        self.map.iter()
    }

    /// Memoises the future of `sid`, for the clear count last given to
    /// `get`.
    pub(super) fn insert(&mut self, sid: S, f: Future) {
        self.map.insert(sid, f);
        self.remember(sid, f);
    }

    fn remember(&mut self, sid: S, f: Future) {
        self.recent.rotate_right(1);
        self.recent[0] = (sid, f);
    }
}
