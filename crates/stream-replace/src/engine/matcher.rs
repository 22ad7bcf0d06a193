//! The seam between the stream and its matchers.
//!
//! A matcher follows some of the rules over the tape. It never releases
//! anything and never calls back: it reports, as values, where one of its
//! rules could still start a match (its earliest live position) and the
//! candidates it has decided. The stream merges what its matchers report
//! (see [`pick`]), releases text, and tells every matcher where to go on.
//! `DESIGN.md` (section 2, "The merge", and section 5, "Adding a matcher")
//! says what a new matcher must provide.

use std::ops::Range;

use super::tape::Tape;

/// What a sink makes of a decided match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The match stands (the sink wrote its output); the stream goes on
    /// from its end.
    Accept,
    /// The match is not a match: the stream scans again from its start as
    /// if its rule, and every rule before it, did not match there (rules
    /// before it did not: it won there). See [`Matcher::exclude`].
    Reject,
    /// The stream stops before the match: nothing from its start on is
    /// released, by this call or any later one, until a reset.
    Stop,
}

/// A match a matcher has decided: no continuation of the stream can change
/// it, as far as that matcher's rules go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Decided {
    /// The rule's index in the rule set.
    pub(crate) rule: usize,
    /// Stream offsets of the match.
    pub(crate) span: Range<usize>,
}

/// Why a matcher's scan stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Scan {
    /// It stepped everything it may step (the end of the tape, or a
    /// character cut by it); nothing more is decided until more input or
    /// the end of input.
    Done,
    /// It decided a candidate and stopped there. It is frozen until the
    /// stream calls [`Matcher::restart`].
    Decided(Decided),
    /// Under [`Matcher::focus`]: the focused candidate can no longer
    /// match; nothing of it is left alive after this position.
    Died(usize),
}

/// Where a matcher could still start a match, and which rules it follows:
/// what [`pick`] needs to know of a matcher that has no decided candidate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Live {
    /// The earliest position where one of its rules could still start a
    /// match ([`Matcher::earliest_live`]).
    pub(crate) start: usize,
    /// The lowest index of the rules it follows.
    pub(crate) first_rule: usize,
}

/// A matcher: one strategy for following rules over the tape.
///
/// Positions are stream offsets. A matcher steps the tape's bytes from
/// [`scanned`](Matcher::scanned) on; what it keeps alive (threads, a
/// recorded match that may still be beaten or extended) starts at or after
/// the tape's `emitted` position, except under [`focus`](Matcher::focus).
///
/// Its methods are called once per feed or per decided match, never per
/// byte; the per-byte loops live inside [`scan`](Matcher::scan), so the
/// stream holds concrete matcher types and nothing here needs dynamic
/// dispatch.
pub(crate) trait Matcher {
    /// The immutable part, shared by every stream of a rule set.
    type Program;

    /// The cheap part of [`scan`](Matcher::scan), for a small feed: steps
    /// the bytes of `tape` from `scanned()` on with the matcher's fastest
    /// path, and returns true when that stepped all of them and `scan`
    /// would return [`Scan::Done`] without stepping anything more.
    /// Otherwise it has stepped part of the tape or none, and `scan` goes
    /// on from there. The stream calls it once per feed, so the per-feed
    /// cost of the common case stays that of the matcher's own loop.
    fn scan_quick(&mut self, prog: &Self::Program, tape: &Tape) -> bool;

    /// Steps the bytes of `tape` from `scanned()` on. Returns when it has
    /// decided a candidate (and then stops: the stream must call
    /// [`restart`](Matcher::restart) before the next scan), when the
    /// focused candidate died, or when it stepped all it may. With `eof`,
    /// the input has ended: the scan decides everything, and after it
    /// returns [`Scan::Done`] nothing is alive.
    fn scan(&mut self, prog: &Self::Program, tape: &Tape, eof: bool) -> Scan;

    /// The next position it will step.
    fn scanned(&self) -> usize;

    /// The start of its earliest live candidate (a thread or a recorded
    /// match not yet decided), if any.
    fn earliest_candidate(&self) -> Option<usize>;

    /// The end of a match it recorded but has not decided (a longer match
    /// of the same start, or an earlier start, may still win).
    fn recorded_end(&self) -> Option<usize>;

    /// The earliest position where one of its rules could still start a
    /// match: its earliest candidate, or the earliest start of what it
    /// stepped and still follows (a literal's prefix, a thread), or the
    /// first position it has not stepped. Exact: the stream releases
    /// everything before it, so a later position loses text and an earlier
    /// one holds more than needed.
    fn earliest_live(&self, prog: &Self::Program) -> usize;

    /// Whether nothing is alive, so it may be moved over idle text with
    /// [`skip_to`](Matcher::skip_to).
    fn is_idle(&self) -> bool;

    /// The first position in `hay` from `from` where one of its rules may
    /// start a match, or `hay.len()`; `lb` is the byte before `from`, if
    /// any. Never a UTF-8 continuation byte.
    fn skip_idle(&self, prog: &Self::Program, hay: &[u8], from: usize, lb: Option<u8>) -> usize;

    /// Moves an idle matcher (see [`is_idle`](Matcher::is_idle)) to `at`,
    /// over text released without being stepped (no rule can start in it,
    /// as [`skip_idle`](Matcher::skip_idle) found).
    fn skip_to(&mut self, at: usize);

    /// Goes on from `at` with nothing alive: a match ending there was
    /// decided (by this matcher or another), or the text before `at` was
    /// released unscanned. Keeps what the matcher needs to stay linear
    /// (which of its paths it is on, and what it already replayed).
    fn restart(&mut self, at: usize);

    /// Goes on from `at`, where a match (of this matcher or another) was
    /// accepted, as [`restart`](Matcher::restart) does; a matcher may keep
    /// what it found after `at` when nothing of it starts before, which
    /// keeps a stream linear when another matcher decides many matches
    /// behind this one's position. `decided` is this matcher's candidate
    /// the stream holds: it is dropped unless it still stands.
    fn restart_after(&mut self, prog: &Self::Program, at: usize, decided: &mut Option<Decided>) {
        let _ = prog;
        self.restart(at);
        *decided = None;
    }

    /// Goes on from `at` with nothing alive, as [`restart`](Matcher::restart),
    /// except that no rule with an index up to `rule` may start a match at
    /// `at` (a match of `rule` there was rejected; rules before it did not
    /// match there). Matches of later rules at `at`, and of every rule
    /// after it, are found as usual, with their usual priorities. Rejections
    /// are rare: this may take a slow path, as long as each rejection
    /// costs time linear in the text it scans again.
    fn exclude(&mut self, at: usize, rule: usize);

    /// Goes on from `at` with nothing alive, as [`restart`](Matcher::restart),
    /// except that only rules with an index below `end` may start a match
    /// at `at` (and an exclusion at `at` still stands): another matcher
    /// decided a match of a rule listed before the others at `at`, so only
    /// these can still beat it there (see [`pick`]). Every rule starts as
    /// usual after `at`. Called at most once per decided candidate; may
    /// take a slow path, as [`exclude`](Matcher::exclude) does.
    fn cap(&mut self, at: usize, end: usize);

    /// Follows only the candidate that starts at `start` (at or after the
    /// tape's `emitted`), stepping again from there, until it is decided
    /// or reported [`Scan::Died`]. The stream drops the text it scans
    /// meanwhile, so the matcher must not need to replay it.
    fn focus(&mut self, start: usize);

    /// Drops everything alive and goes on from `at`, as a fresh matcher
    /// would after released text.
    fn discard(&mut self, at: usize);

    /// Forgets the stream; keeps allocations.
    fn reset(&mut self);

    /// Checks the matcher's own invariants against the tape (debug builds
    /// only).
    #[cfg(debug_assertions)]
    fn check_invariants(&self, tape: &Tape);
}

/// Picks the candidate the stream may decide, among the matchers' decided
/// candidates (`decided[i]` of matcher `i`) and the live positions of the
/// matchers without one (`live[i]`, ignored where `decided[i]` is set).
///
/// Leftmost-first: the earliest start wins, and the rule listed first
/// breaks ties at one start. The candidate with the least (start, rule) is
/// decided only when no other matcher could still start a match before its
/// start, or at its start with a lower rule index; otherwise nothing is
/// decided yet (the blocking matcher needs more input). Returns the index
/// of the matcher whose candidate is decided.
pub(crate) fn pick(decided: &[Option<Decided>], live: &[Live]) -> Option<usize> {
    debug_assert_eq!(decided.len(), live.len());
    let (best, d) = decided
        .iter()
        .enumerate()
        .filter_map(|(i, d)| Some((i, d.as_ref()?)))
        .min_by_key(|(_, d)| (d.span.start, d.rule))?;
    let blocked = decided.iter().zip(live).enumerate().any(|(i, (o, l))| {
        i != best
            && o.is_none()
            && (l.start < d.span.start || (l.start == d.span.start && l.first_rule < d.rule))
    });
    (!blocked).then_some(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(rule: usize, start: usize, end: usize) -> Option<Decided> {
        Some(Decided {
            rule,
            span: start..end,
        })
    }

    fn live(start: usize, first_rule: usize) -> Live {
        Live { start, first_rule }
    }

    #[test]
    fn one_matcher_decides_its_candidate() {
        assert_eq!(pick(&[d(3, 5, 9)], &[live(5, 0)]), Some(0));
        assert_eq!(pick(&[None], &[live(5, 0)]), None);
    }

    #[test]
    fn earliest_start_wins_then_lowest_rule() {
        let early = [live(0, 0), live(0, 0), live(0, 0)];
        assert_eq!(pick(&[d(0, 4, 6), d(2, 3, 9), d(1, 5, 6)], &early), Some(1));
        let later = [live(0, 0), live(0, 0), live(9, 0)];
        assert_eq!(pick(&[d(2, 3, 4), d(1, 3, 9), None], &later), Some(1));
    }

    #[test]
    fn a_live_start_before_blocks() {
        // `hello` (rule 1) is still alive from 2; `ell` (rule 0) from 3 must
        // wait.
        assert_eq!(pick(&[d(0, 3, 6), None], &[live(3, 0), live(2, 1)]), None);
    }

    #[test]
    fn a_live_start_at_the_same_place_blocks_only_a_later_rule() {
        assert_eq!(pick(&[d(2, 3, 6), None], &[live(3, 0), live(3, 1)]), None);
        assert_eq!(
            pick(&[d(0, 3, 6), None], &[live(3, 0), live(3, 1)]),
            Some(0)
        );
    }

    #[test]
    fn a_live_start_after_does_not_block() {
        assert_eq!(
            pick(&[d(5, 3, 6), None], &[live(3, 0), live(4, 0)]),
            Some(0)
        );
    }
}
