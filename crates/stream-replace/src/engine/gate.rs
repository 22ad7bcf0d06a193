//! The gate: a required literal that a match must contain near its start.
//!
//! When every rule is a concatenation whose parts before some part `C`
//! match at most `before` bytes, and every match of `C` starts with one of
//! a finite set of non-empty literals (its needles), then a match that
//! starts at `s` has a needle starting in `s..=s + before`. So where the
//! next needle starts at `h`, no match starts before `h - before`, and the
//! text before it can be released without stepping it: an email-like rule
//! `[\w.%+-]{1,64}@…` skips base64 or prose at the speed of `memchr` for
//! `@`, where a thread per start would step every byte of up to 64 live
//! candidates.
//!
//! The analysis is done once per rule set (see [`Gate::new`]); when any rule
//! fails it (an unbounded part before every required literal, or a part
//! that can match the empty string), there is no gate and the thread
//! matcher runs as without it.

use regex_automata::util::prefilter::Prefilter;
use regex_automata::{MatchKind, Span};
use regex_syntax::hir::literal::{ExtractKind, Extractor};
use regex_syntax::hir::{Hir, HirKind};

/// The gate of a rule set: the union of its rules' needles, and the
/// longest text a rule can match before its needle.
#[derive(Debug)]
pub(super) struct Gate {
    needles: Prefilter,
    /// The most bytes any rule matches before its needle starts.
    before: usize,
    /// Each rule's part before its needle (its head), for the reverse
    /// search from a needle (`threads::reverse`).
    heads: Box<[Hir]>,
}

impl Gate {
    /// The gate of the rules `sources`, when every rule has one and a fast
    /// search for their needles exists.
    pub(super) fn new(sources: &[String]) -> Option<Gate> {
        let hirs = regex_automata::util::syntax::parse_many(sources).ok()?;
        let mut needles: Vec<Vec<u8>> = Vec::new();
        let mut heads = Vec::with_capacity(hirs.len());
        let mut before = 0;
        for hir in &hirs {
            let (lits, b, head) = rule_gate(hir)?;
            before = usize::max(before, b);
            needles.extend(lits);
            heads.push(head);
        }
        needles.sort();
        needles.dedup();
        let needles = Prefilter::new(MatchKind::LeftmostFirst, &needles)?;
        (needles.max_needle_len() > 0).then(|| Gate {
            needles,
            before,
            heads: heads.into_boxed_slice(),
        })
    }

    /// The first position from `from` in `hay` where a match may start, as
    /// far as the needles in `hay` tell (`hay.len()` is not the end of
    /// input: more bytes may follow). `hay[0]` is at stream offset `base`;
    /// `seen` is what earlier calls on this stream found, so that a needle
    /// search never scans the same bytes twice while `from` moves forward.
    ///
    /// A needle found within the last `max_needle_len - 1` bytes proves
    /// nothing about the positions before it (a longer needle cut by the
    /// end of `hay` may start earlier), so the search trusts only needles
    /// that start before `decided`, where every needle is whole.
    #[inline]
    pub(super) fn skip(&self, hay: &[u8], base: usize, from: usize, seen: &mut Seen) -> usize {
        let end = hay.len();
        let decided = end.saturating_sub(self.needles.max_needle_len() - 1);
        let at = base + from;
        let next = if seen.lo <= at && at <= seen.hi && seen.hi <= base + end {
            let hi = seen.hi - base;
            if seen.found || hi >= decided {
                hi
            } else {
                self.search(hay, hi, decided, seen)
            }
        } else {
            seen.lo = at;
            self.search(hay, from, decided, seen)
        };
        seen.hi = base + next;
        next.saturating_sub(self.before).max(from)
    }

    /// Where the search `seen` records stopped, in `hay` of a `skip` whose
    /// `hay[0]` is at stream offset `base`: at the needle found, or where
    /// it was blind (every needle before it would have been whole). A
    /// match that starts between `skip`'s position and this stop has no
    /// needle before the stop.
    #[inline]
    pub(super) fn stop(&self, seen: &Seen, base: usize) -> usize {
        seen.hi - base
    }

    /// Each rule's part before its needle (at most `before` bytes).
    pub(super) fn heads(&self) -> &[Hir] {
        &self.heads
    }

    /// Whether the search `seen` records stopped at a needle, not blind.
    #[inline]
    pub(super) fn found(&self, seen: &Seen) -> bool {
        seen.found
    }

    /// Whether a position `p` that `skip` gave is in the last `before`
    /// bytes before where its search was blind (the end of the bytes it
    /// had, not a needle): a match may start there only if the bytes to
    /// come hold a needle.
    #[inline]
    pub(super) fn blind(&self, seen: &Seen, p: usize) -> bool {
        !seen.found && p + self.before >= seen.hi
    }

    /// The stream offsets `lo..=hi` where `skip`, as of `seen`, would
    /// skip nothing: the `before` bytes before the needle found, or before
    /// where the search was blind. With `lazy`, a blind window is empty
    /// (`lo > hi`): the scan stops there rather than stepping it.
    #[inline]
    pub(super) fn window(&self, seen: &Seen, lazy: bool) -> (usize, usize) {
        if lazy && !seen.found {
            return (1, 0);
        }
        (seen.hi.saturating_sub(self.before), seen.hi)
    }

    /// The start of the first needle in `hay` from `from` that starts before
    /// `decided`, or `decided` (or `from`, if later) when there is none.
    fn search(&self, hay: &[u8], from: usize, decided: usize, seen: &mut Seen) -> usize {
        seen.found = false;
        if from >= decided {
            return from;
        }
        match self.needles.find(hay, Span::from(from..hay.len())) {
            Some(m) if m.start < decided => {
                seen.found = true;
                m.start
            }
            _ => decided,
        }
    }
}

/// What a stream's needle searches found, in stream offsets: no needle
/// starts in `lo..hi`, and, when `found`, one starts at `hi`.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Seen {
    lo: usize,
    hi: usize,
    found: bool,
}

/// A rule's needles, the most bytes it can match before them and the part
/// before them (its head): the first part of its top-level concatenation
/// (looking through a group around the whole) whose matches all start with
/// one of a finite set of non-empty literals, where every part before it
/// has a bounded length.
fn rule_gate(hir: &Hir) -> Option<(Vec<Vec<u8>>, usize, Hir)> {
    let parts = match hir.kind() {
        HirKind::Concat(parts) => parts.as_slice(),
        HirKind::Capture(cap) => return rule_gate(&cap.sub),
        _ => std::slice::from_ref(hir),
    };
    let mut before = 0usize;
    for (i, part) in parts.iter().enumerate() {
        if let Some(lits) = needles(part) {
            return Some((lits, before, Hir::concat(parts[..i].to_vec())));
        }
        before = before.checked_add(part.properties().maximum_len()?)?;
    }
    None
}

/// The literals every match of `hir` starts with, when they are finitely
/// many and none is empty.
fn needles(hir: &Hir) -> Option<Vec<Vec<u8>>> {
    let seq = Extractor::new().kind(ExtractKind::Prefix).extract(hir);
    let lits = seq.literals()?;
    if lits.is_empty() || lits.iter().any(|l| l.as_bytes().is_empty()) {
        return None;
    }
    Some(lits.iter().map(|l| l.as_bytes().to_vec()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(patterns: &[&str]) -> Option<Gate> {
        let sources: Vec<String> = patterns.iter().map(|p| p.to_string()).collect();
        Gate::new(&sources)
    }

    #[test]
    fn a_bounded_part_before_a_literal_gates() {
        let g = gate(&[r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]+\.[A-Za-z]{2,}"]).unwrap();
        assert_eq!(g.before, 64);
        let g = gate(&[r"[a-z]{0,200}x", "<think>"]).unwrap();
        assert_eq!(g.before, 200);
        let g = gate(&[r"\b[a-z]{1,3} ?ab\b"]).unwrap();
        assert_eq!(g.before, 4);
    }

    #[test]
    fn no_gate_when_a_rule_has_none() {
        assert!(gate(&[r"\w+@\w+"]).is_none());
        assert!(gate(&[r"[a-z]{0,3}x", r"\d*"]).is_none());
        assert!(gate(&[""]).is_none());
        assert!(gate(&[r"[a-z]{0,3}"]).is_none());
    }

    fn skip(g: &Gate, hay: &[u8], from: usize) -> usize {
        g.skip(hay, 0, from, &mut Seen::default())
    }

    #[test]
    fn skip_stops_before_a_needle_and_trusts_only_whole_ones() {
        let g = gate(&[r"[a-z]{0,2}xyz"]).unwrap();
        // The needle at 10: a match may start at 8.
        assert_eq!(skip(&g, b"aaaaaaaaaaxyz", 0), 8);
        // No whole needle: a needle may start at 10 (`xy` cut by the end).
        assert_eq!(skip(&g, b"aaaaaaaaaaxy", 0), 8);
        assert_eq!(skip(&g, b"aaaaaaaaaaaa", 0), 8);
        assert_eq!(skip(&g, b"aaaaaaaaaaaa", 9), 9);
        assert_eq!(skip(&g, b"", 0), 0);
    }

    #[test]
    fn what_was_seen_carries_over_as_the_stream_grows() {
        let g = gate(&[r"[a-z]{0,2}xyz"]).unwrap();
        let mut seen = Seen::default();
        let text = b"aaaaaaaaaaaaaaaaxyzaaaaaaaaaaaaaxyza";
        // Cut before the needle, then the whole text, then from a later
        // base (the tape dropped its first 4 bytes).
        assert_eq!(g.skip(&text[..12], 0, 0, &mut seen), 8);
        assert_eq!(g.skip(&text[..20], 0, 8, &mut seen), 14);
        assert_eq!(g.skip(&text[..20], 0, 15, &mut seen), 15);
        assert_eq!(g.skip(&text[4..], 4, 20 - 4, &mut seen), 30 - 4);
        assert_eq!(g.skip(&text[4..], 4, 0, &mut seen), 14 - 4);
        // As a stream grows and its scan moves forward, what was seen
        // gives what a fresh search gives.
        for lag in 0..8 {
            let mut seen = Seen::default();
            for end in 0..=text.len() {
                let from = end.saturating_sub(lag);
                assert_eq!(
                    g.skip(&text[..end], 0, from, &mut seen),
                    g.skip(&text[..end], 0, from, &mut Seen::default()),
                    "{from}..{end}"
                );
            }
        }
    }
}
