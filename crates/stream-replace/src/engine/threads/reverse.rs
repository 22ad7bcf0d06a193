//! Fast path: the earliest start before a gate's needle, found backwards.
//!
//! Entered in the idle scan (`Prog::skip_idle_seen`) after the gate's skip,
//! when the program has a gate (so with `Prog::fast` set, see `gate`): from
//! a needle the gate found and, in the threads' own idle scans, from where
//! its search was blind (not in a part fed under `set_lazy`, which hands
//! that window back unscanned). Each rule's part before its needle is its *head*
//! (at most the gate's `before` bytes).
//!
//! The gate alone skips to `before` bytes before the next needle (or
//! before the end of what it could search), and the threads step every
//! byte of that window: for `[\w.%+-]{1,64}@…` that is 64 bytes before
//! each `@`, each with up to 64 live threads. But a match that starts at
//! `s` before that stop `h` has no needle in `s..h` (the gate's search
//! found none there), so its head covers all of `s..h`: `hay[s..h]` is a
//! prefix of a string some rule's head matches. The reverse automaton is
//! a dense DFA over those prefixes (the forward skip's `prefix` of each
//! head `widen`ed: no assertions, non-ASCII classes as bytes, so every
//! prefix cut inside a character is one too), built backwards and
//! anchored, that keeps every match (`MatchKind::All`). Searched from `h`
//! back to where the gate's skip landed, it gives the earliest such `s`,
//! as `meta` finds a match's start with a reverse DFA from its end. No
//! match starts before it, so the threads start there: at the local part
//! of the address before an `@`, a few bytes, instead of 64.
//!
//! Exact because the language searched contains every head's prefixes
//! (widening only adds strings), so the earliest position it accepts is at
//! or before every match start in the window; the threads then step from
//! there as always, so what they decide and hold is what they would
//! without the skip. The automaton is built on a stream's first idle scan
//! with a gate, not with the rules.

use regex_automata::dfa::{Automaton, StartKind, dense};
use regex_automata::nfa::thompson;
use regex_automata::{Anchored, Input, MatchKind};
use regex_syntax::hir::Hir;

use super::forward::{prefix, widen};
use super::state::{entered, path};

/// The most heap the reverse automaton's NFA and DFA may take each; heads
/// whose prefixes need more get no reverse automaton (the gate's skip
/// alone is exact).
const SIZE_LIMIT: usize = 1 << 20;

/// The reverse automaton of the heads' prefixes (see the module docs).
#[derive(Debug)]
pub(super) struct Reverse {
    dfa: dense::DFA<Vec<u32>>,
}

impl Reverse {
    /// The reverse automaton over the prefixes of `heads` (one per rule:
    /// the part of the rule before its needle), when it fits its limit.
    pub(super) fn new(heads: &[Hir]) -> Option<Reverse> {
        let prefixes: Vec<Hir> = heads.iter().map(|h| prefix(&widen(h))).collect();
        let nfa = thompson::Compiler::new()
            .configure(
                thompson::Config::new()
                    .reverse(true)
                    .utf8(false)
                    .which_captures(thompson::WhichCaptures::None)
                    .nfa_size_limit(Some(SIZE_LIMIT)),
            )
            .build_many_from_hir(&prefixes)
            .ok()?;
        let dfa = dense::Builder::new()
            .configure(
                dense::Config::new()
                    .match_kind(MatchKind::All)
                    .start_kind(StartKind::Anchored)
                    .accelerate(false)
                    .dfa_size_limit(Some(SIZE_LIMIT))
                    .determinize_size_limit(Some(SIZE_LIMIT)),
            )
            .build_from_nfa(&nfa)
            .ok()?;
        Some(Reverse { dfa })
    }

    /// The earliest `s` in `lo..=hi` such that `hay[s..hi]` is a prefix of
    /// some widened head's match (the empty prefix is one, so `hi` at the
    /// latest).
    ///
    /// The DFA is stepped here rather than through `try_search_rev`, which
    /// checks more per byte than this automaton needs (no look-around, no
    /// quit byte, no accelerated state). A match state marks a match that
    /// starts one byte after the byte that led to it (the DFA reports
    /// matches one byte late); the byte before `lo` (or the end of input)
    /// gives the one that starts at `lo`.
    pub(super) fn start(&self, hay: &[u8], lo: usize, hi: usize) -> usize {
        if lo >= hi {
            return lo;
        }
        let dfa = &self.dfa;
        let input = Input::new(hay).range(lo..hi).anchored(Anchored::Yes);
        let Ok(mut sid) = dfa.start_state_reverse(&input) else {
            return lo;
        };
        let mut start = hi;
        let mut i = hi;
        while i > lo {
            i -= 1;
            sid = dfa.next_state(sid, hay[i]);
            if dfa.is_special_state(sid) {
                if dfa.is_match_state(sid) {
                    start = i + 1;
                } else if dfa.is_dead_state(sid) {
                    return self.moved(lo, start);
                }
            }
        }
        let last = match lo.checked_sub(1) {
            Some(b) => dfa.next_state(sid, hay[b]),
            None => dfa.next_eoi_state(sid),
        };
        if dfa.is_match_state(last) {
            start = lo;
        }
        self.moved(lo, start)
    }

    /// `start`, counted as this path's work when it moved past `lo`.
    #[inline(always)]
    fn moved(&self, lo: usize, start: usize) -> usize {
        if start > lo {
            entered(path::REVERSE);
        }
        start
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use regex_automata::dfa::{Automaton, dense};
    use regex_automata::{Anchored, Input, MatchKind};

    use super::super::state::path;
    use super::super::tests::{CASES, same_as_general, took};
    use super::*;

    fn reverse(heads: &[&str]) -> Reverse {
        let hirs: Vec<Hir> = heads
            .iter()
            .map(|h| regex_syntax::parse(h).unwrap())
            .collect();
        Reverse::new(&hirs).expect("the heads build")
    }

    /// The naive oracle: whether `hay[s..hi]` is a prefix of a match of
    /// one of `heads` as written: each head's forward DFA (all matches
    /// kept), stepped from `s` over those bytes, is in a state from which a
    /// match state is one step or more away (a match state marks a match
    /// that ended one byte before: here, at `hi` or later).
    fn is_prefix(heads: &[&str], hay: &[u8], s: usize, hi: usize) -> bool {
        heads.iter().any(|h| {
            let dfa = dense::Builder::new()
                .configure(dense::Config::new().match_kind(MatchKind::All))
                .syntax(regex_automata::util::syntax::Config::new().utf8(false))
                .thompson(regex_automata::nfa::thompson::Config::new().utf8(false))
                .build(h)
                .unwrap();
            let input = Input::new(hay).range(s..).anchored(Anchored::Yes);
            let mut sid = dfa.start_state_forward(&input).unwrap();
            for &b in &hay[s..hi] {
                sid = dfa.next_state(sid, b);
                if dfa.is_dead_state(sid) {
                    return false;
                }
            }
            let mut seen = std::collections::HashSet::from([sid]);
            let mut todo = vec![sid];
            while let Some(q) = todo.pop() {
                if dfa.is_match_state(dfa.next_eoi_state(q)) {
                    return true;
                }
                for b in 0..=255u8 {
                    let r = dfa.next_state(q, b);
                    if dfa.is_match_state(r) {
                        return true;
                    }
                    if !dfa.is_dead_state(r) && seen.insert(r) {
                        todo.push(r);
                    }
                }
            }
            false
        })
    }

    /// The search from `hi` down to `lo`, checked against the oracle: no
    /// position it skips begins a prefix of a head (the widened heads may
    /// accept earlier positions than the heads as written, never later).
    fn check(heads: &[&str], hay: &[u8], lo: usize, hi: usize) -> usize {
        let s = reverse(heads).start(hay, lo, hi);
        assert!(lo <= s && s <= hi);
        for q in lo..s {
            assert!(!is_prefix(heads, hay, q, hi), "{heads:?}: skipped {q}");
        }
        s
    }

    #[test]
    fn the_start_is_the_local_part_before_the_at_sign() {
        let hay = b"write to bob.smith@example.com now";
        let at = hay.iter().position(|&b| b == b'@').unwrap();
        assert_eq!(check(&[r"[A-Za-z0-9._%+-]{1,64}"], hay, 0, at), 9);
        // From where the gate's skip landed (its bound, not the search's).
        assert_eq!(check(&[r"[a-z.]{1,3}"], hay, at - 3, at), at - 3);
        // Nothing before `hi` begins `[0-9]{2}`.
        assert_eq!(check(&[r"[0-9]{2}"], hay, 0, at), at);
        // A concatenation, an alternation and a literal: `to bo` begins
        // `to [a-z]+`.
        assert_eq!(check(&[r"to [a-z]+|xyz"], b"go to bo", 0, 8), 3);
        assert_eq!(check(&[r"ab(?:cd){0,2}c"], b"zzabcdcdc", 0, 9), 2);
    }

    /// Look-around is dropped and non-ASCII classes become bytes: the
    /// search still finds the word before the needle, and a character cut
    /// by `hi` begins a head.
    #[test]
    fn widened_heads_keep_words_and_cut_characters() {
        assert_eq!(check(&[r"(?-u:\b)[a-z]{1,3}"], b"xx abc", 0, 6), 3);
        assert_eq!(check(&[r"\w{1,8}"], "a héllo".as_bytes(), 0, 7), 2);
        // `é` cut after its first byte.
        assert_eq!(check(&[r"[a-zé]{1,3}"], "x é".as_bytes(), 0, 3), 2);
        assert_eq!(
            check(&[r"[0-9]{1,3}", r"é{1,2}"], "zé9".as_bytes(), 0, 3),
            1
        );
        assert_eq!(
            check(&[r"[0-9]{1,3}", r"é{1,2}"], "zé9".as_bytes(), 0, 4),
            3
        );
    }

    /// The email-like rule over text with several `@`: the threads start
    /// at each local part, and decide as the general loop.
    #[test]
    fn a_gated_rule_starts_at_its_local_part() {
        let mut text = b"some words, ".repeat(6);
        text.extend_from_slice(b"bob@ex.org, then more words and x.y@a.bc end");
        let rules = [r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]+\.[A-Za-z]{2,}"];
        for cuts in [&[][..], &[70], &[3, 75, 80]] {
            let runs = same_as_general(&rules, &text, cuts);
            assert!(took(&runs, path::REVERSE), "{cuts:?}");
            assert_eq!(runs[0].decided.len(), 2);
        }
        let runs = same_as_general(
            &[r"[a-z]{0,20}x", r"q[0-9]{1,3}@"],
            b"a box, q12@, q9x",
            &[5],
        );
        assert!(took(&runs, path::REVERSE));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(CASES * 8))]
        #[test]
        fn no_skipped_position_begins_a_head(
            hay in "[a-c@x. ]{0,40}",
            lo in 0usize..40,
            hi in 0usize..40,
            set in 0usize..4,
        ) {
            let heads: &[&[&str]] = &[
                &[r"[a-c.]{1,6}"],
                &[r"(?-u:\b)[a-c]{0,8}"],
                &[r"(?:ab|b)c?", r"x{1,2}\.?"],
                &[r"a[a-c]{0,3}b ?", r"c"],
            ];
            let hay = hay.as_bytes();
            let hi = hi % (hay.len() + 1);
            let lo = lo % (hi + 1);
            check(heads[set], hay, lo, hi);
        }

        #[test]
        fn gated_rules_decide_as_the_general_loop(
            input in "[a-c@x. ]{0,60}",
            cuts in prop::collection::vec(0usize..70, 0..4),
            set in 0usize..3,
        ) {
            let rules: &[&[&str]] = &[
                &[r"[a-c.]{1,6}@[a-c]+"],
                &[r"[a-c]{0,8}x", r"b{1,2}@"],
                &[r"[a-c@]{0,3}x", r"(?:ab|b){1,2}@", r"[a-c]{1,4}@"],
            ];
            same_as_general(rules[set], input.as_bytes(), &cuts);
        }
    }
}
