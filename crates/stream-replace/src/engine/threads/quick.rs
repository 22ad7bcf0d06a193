//! Fast path: a small feed without the general machinery.
//!
//! Entered from `Matcher::scan_quick` (the stream calls it for a feed the
//! tight loops may finish) when `Prog::fast` is set, the stream is on the
//! DFA (`Mode::Dfa`) and at most one thread is alive. It runs one of the
//! tight loops over the whole feed: `one_thread` when no match is
//! recorded and nothing is suspended, `suspend`'s pending loop when one
//! thread holds a recorded match or is suspended. It answers true only if
//! the loop reached the end of the tape and the live thread's future (see
//! `settle`) is known to be open, or nothing is alive: then `Core::run`
//! would step nothing more and settle nothing, so its answer would be the
//! same `Scan::Done`. Otherwise the stream calls `scan`, which goes on
//! from where this stopped.
//!
//! For a dense DFA with frozen memos it borrows no scratch.

use super::program::{Prog, Scratch};
use super::state::{Core, Fallback, Mode};
use super::window::open_future;
use crate::engine::dfa::Dfa;
use crate::engine::single::{self, Memo};
use crate::engine::tape::Tape;

impl<D: Dfa> Core<D> {
    /// `Matcher::scan_quick`: true when the feed is done, as `run_quick`
    /// says.
    #[inline(always)]
    pub(super) fn quick(&mut self, prog: &Prog<D>, tape: &Tape) -> bool {
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
                |_, sid, _| f.is_open(prog.dfa.index(sid)),
                tape,
            );
            self.hint = hint;
            return done;
        }
        prog.with_scratch(|s: &mut Scratch<D>| {
            self.resume(s);
            let futures = &mut s.futures;
            let done = self.run_quick(
                prog,
                &mut s.cache,
                &mut s.single,
                |cache, sid, work_out| open_future(&prog.dfa, futures, cache, sid, work_out),
                tape,
            );
            self.leave(s);
            done
        })
    }

    /// The common cases of `run` for a small feed, without its general
    /// machinery: one of the tight loops steps the whole feed (at most one
    /// live thread and no match recorded, or one thread stepped alone), and
    /// the thread's future is known to be open, or the loop stopped idle
    /// where `window` may hold the rest of the feed. Returns false, having
    /// done part of the work or none, when `run` must go on from where
    /// this stopped. `is_open` tells whether a state's future is known to
    /// be open; with its last argument, one not known yet may be worked
    /// out.
    #[inline(always)]
    pub(super) fn run_quick(
        &mut self,
        prog: &Prog<D>,
        cache: &mut D::Cache,
        memo: &mut impl Memo<D::Sid>,
        is_open: impl FnOnce(&mut D::Cache, D::Sid, bool) -> bool,
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
            return self.lazy_end && self.quick_window(prog, cache, tape, is_open);
        }
        let Some(&t) = self.dfa_threads.first() else {
            return true;
        };
        self.known_open(t.sid, || is_open(cache, t.sid, false))
    }

    /// Whether the future of `sid`, the live thread's state at the end of
    /// a feed, is known to be open (`is_open` asks the memo): the last
    /// such state of a stable DFA is remembered, and its lookup skipped.
    #[inline(always)]
    pub(super) fn known_open(&mut self, sid: D::Sid, is_open: impl FnOnce() -> bool) -> bool {
        if D::STABLE && self.open == Some(sid) {
            return true;
        }
        let open = is_open();
        if D::STABLE && open {
            self.open = Some(sid);
        }
        open
    }

    /// `run_quick` stopped idle before the end of the tape: whether
    /// `window` may hold the rest. Out of line, to keep the quick path's
    /// code small.
    #[cold]
    #[inline(never)]
    fn quick_window(
        &mut self,
        prog: &Prog<D>,
        cache: &mut D::Cache,
        tape: &Tape,
        is_open: impl FnOnce(&mut D::Cache, D::Sid, bool) -> bool,
    ) -> bool {
        self.hold_window(prog, cache, tape, |cache, sid| is_open(cache, sid, true))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::state::path;
    use super::super::tests::{CASES, same_as_general};

    /// Small feeds of words under an email-like rule, and a thread alive
    /// across them, end in the quick path.
    #[test]
    fn small_feeds_take_the_quick_path() {
        let input = b"some words then bob@exam ple.com and more words";
        let cuts = [3, 8, 13, 20, 22, 30, 40];
        let runs = same_as_general(&[r"\w+@\w+\.com"], input, &cuts);
        // Not with a new scratch every call: the stream resumes its
        // state there and the future of the state it reaches is not known
        // yet in that scratch, which the quick path needs.
        for i in [0, 1, 3] {
            assert!(runs[i].entered[path::QUICK] > 0, "configuration {i}");
        }
        assert_eq!(runs[2].entered[path::QUICK], 0);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(CASES))]
        #[test]
        fn quick_feeds_decide_as_the_general_loop(
            input in "[a-c @.]{0,40}",
            cuts in prop::collection::vec(0usize..50, 0..12),
        ) {
            same_as_general(&[r"\w+@\w+\.[a-c]"], input.as_bytes(), &cuts);
        }
    }
}
