//! Fast path: one thread stepped alone.
//!
//! Entered in `Core::run_dfa` in two shapes, with `Prog::fast` set:
//!
//! - **Suspend** (`Core::may_suspend`): several threads are alive, no
//!   match is recorded, the earliest has lived `SUSPEND_AFTER` bytes and
//!   started at or after `replayed_to`. The others are dropped and it is
//!   stepped alone. Exact because a match of the earliest thread beats
//!   every later one (leftmost-first); if it dies without one, the text
//!   after its start is replayed with every thread (`Core::replay`). A
//!   replay moves `replayed_to` to where it stopped and only a thread
//!   started there or later is suspended again, so no byte is replayed
//!   twice: the work stays linear.
//! - **Pending** (`Core::run_pending`): exactly one thread is alive and a
//!   match is recorded or the thread is suspended, so no new thread
//!   starts. The thread is stepped on the plain DFA until a byte needs the
//!   general loop (a special state: match, dead, quit; or a cache clear),
//!   which is exact because the general loop would do the same step and
//!   start no thread. A state that only a few bytes leave (the inside of
//!   an open `<think>`) is skipped to the next of them (`escape`).

use super::escape::{ESCAPE_MIN, step_escaping};
use super::program::Prog;
use super::state::{Core, Fallback, entered, path};
use crate::engine::dfa::Dfa;
use crate::engine::tape::Tape;

/// How long the earliest of several threads must have lived before the
/// others are dropped and it is stepped alone (replaying the rest if it
/// dies without a match). Short-lived threads (a word under `\w+@…`) would
/// only pay for the replay.
pub(super) const SUSPEND_AFTER: usize = 64;

impl<D: Dfa> Core<D> {
    /// Whether the earliest of several threads, at `p`, is to be stepped
    /// alone: it has lived `SUSPEND_AFTER` bytes (an open `<think>`, say)
    /// and no replay has covered its start.
    #[inline(always)]
    pub(super) fn may_suspend(&self, prog: &Prog<D>, p: usize) -> bool {
        prog.fast
            && self.dfa_threads.len() > 1
            && self.best.is_none()
            && p - self.dfa_threads[0].start >= SUSPEND_AFTER
            && self.dfa_threads[0].start >= self.replayed_to
    }

    /// Steps the earliest thread alone: its match would beat every later
    /// thread, and the rest is replayed only if it dies without one.
    #[inline(always)]
    pub(super) fn suspend(&mut self) {
        entered(path::SUSPEND);
        self.suspended = Some(self.dfa_threads[0].start + 1);
        self.dfa_threads.truncate(1);
    }

    /// A thread stepped alone died without a match at `self.pos`: steps
    /// again from `from` (just after its start) with every thread.
    pub(super) fn replay(&mut self, from: usize) {
        self.replayed_to = self.pos;
        self.pos = from;
    }

    /// Another common case of `run_dfa`, in a tight loop: a match is
    /// recorded (so no new thread starts) and one thread is alive, which may
    /// still beat or extend it (an unclosed `<think>` around a matched
    /// email, say). Steps that thread until a byte needs more: a match, its
    /// death, a quit, or the end of the buffer.
    #[inline(always)]
    pub(super) fn run_pending(
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
        match prog.frozen.as_deref() {
            // A state most bytes keep is skipped to its next escape (see
            // `escape`; only a dense DFA's frozen memos have them), but not
            // over a token-sized feed, where the search costs more than the
            // steps it saves.
            Some(frozen) if hay.len() - i >= ESCAPE_MIN => {
                (i, sid) = step_escaping(dfa, cache, &frozen.escapes, hay, i, sid);
            }
            _ => {
                while i < hay.len() {
                    let Ok(n) = dfa.next_state(cache, sid, hay[i]) else {
                        break;
                    };
                    if dfa.is_special(n) || D::clear_count(cache) != clears {
                        // `n` is valid even after a clear, but stepping it
                        // here would skip the checks of the general path:
                        // leave this byte to it.
                        break;
                    }
                    sid = n;
                    i += 1;
                }
            }
        }
        let stale = D::clear_count(cache) != clears;
        self.dfa_threads[0].sid = sid;
        if i + tape.base() > self.pos {
            entered(path::PENDING);
        }
        self.pos = i + tape.base();
        if stale {
            return Err(Fallback(self.replay_from(self.pos)));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::state::path;
    use super::super::tests::{CASES, same_as_general};
    use super::SUSPEND_AFTER;

    fn long(open: &str, close: &str) -> Vec<u8> {
        let mut v = open.as_bytes().to_vec();
        while v.len() < 2 * SUSPEND_AFTER {
            v.extend_from_slice(b"word ");
        }
        v.extend_from_slice(close.as_bytes());
        v
    }

    /// A long open span is stepped alone; closed, it is the match; never
    /// closed, the words inside are replayed and a match among them found.
    #[test]
    fn a_long_lived_thread_is_suspended() {
        let rules = [r"<a>[^<]*</a>", r"\w+d b"];
        for close in ["</a>", "b"] {
            let input = long("x <a>", close);
            let runs = same_as_general(&rules, &input, &[40, 100]);
            assert!(runs.iter().all(|r| r.entered[path::SUSPEND] > 0), "{close}");
            let first = &runs[0].decided[0];
            if close == "</a>" {
                assert_eq!(*first, (0, 2..input.len()));
            } else {
                assert_eq!(*first, (1, input.len() - 6..input.len()));
            }
        }
    }

    /// A recorded match a longer alternative may still extend: the one
    /// thread left is stepped alone until it matches or dies.
    #[test]
    fn a_pending_match_steps_one_thread() {
        for (input, span) in [(&b"xabcabcabc@ yz"[..], 0..11), (b"xabcabcabc yz", 0..1)] {
            let runs = same_as_general(&[r"x[a-c]*@|x"], input, &[]);
            // Not with the tiny cache: the NFA steps these bytes there.
            assert!(runs[..3].iter().all(|r| r.entered[path::PENDING] > 0));
            assert_eq!(runs[0].decided[0], (0, span));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(CASES))]
        #[test]
        fn stepping_alone_decides_as_the_general_loop(
            head in "[a-c <>/d]{0,10}",
            body in "[a-c d]{60,90}",
            tail in "(</a>|<b|[a-c ]{0,5})",
            cuts in prop::collection::vec(0usize..120, 0..4),
        ) {
            let input = format!("{head}<a>{body}{tail}");
            same_as_general(&[r"<a>[^<]*</a>", r"\w+d b", r"x[a-c]*@|x"], input.as_bytes(), &cuts);
        }
    }
}
