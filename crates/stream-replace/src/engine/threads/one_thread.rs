//! Fast path: the one-thread loop over the `single` memo.
//!
//! Entered in `Core::run_dfa` (and `quick`) when `Prog::fast` is set, at
//! most one thread is alive, no match is recorded and nothing is
//! suspended (`free && dfa_threads.len() <= 1`), and the gate window does
//! not send the bytes to the tuple loop.
//!
//! In that configuration the next step depends only on the thread's DFA
//! state and the kind of the byte before (which picks a new thread's start
//! state): the memo maps the pair and a byte class to the next pair, built
//! with the general loop's own rules (`single::Single::step`). Bytes it
//! cannot step alone (a match, a quit, a second thread) are marked
//! `EXIT` and left to the general loop, unstepped, so the two agree on
//! every byte.

use super::forward::FORWARD_MIN;
use super::program::Prog;
use super::state::{Core, Fallback, entered, path};
use crate::engine::automaton::Thread;
use crate::engine::dfa::Dfa;
use crate::engine::single::{self, Memo};
use crate::engine::tape::Tape;

impl<D: Dfa> Core<D> {
    /// The common case of `run_dfa`, in a tight loop: at most one live
    /// thread and no match recorded, where every new thread either dies at
    /// once or merges into the live one (as in a word under a rule like
    /// `\w+@…`). Each byte is one lookup in the `single` memo. Stops,
    /// without stepping it, at the first byte that needs more: a match, a
    /// second thread, a quit, or the end of the buffer.
    #[inline(always)]
    pub(super) fn run_simple(
        &mut self,
        prog: &Prog<D>,
        cache: &mut D::Cache,
        memo: &mut impl Memo<D::Sid>,
        tape: &Tape,
    ) -> Result<(), Fallback> {
        let from = self.pos;
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
            let blind = !self.lazy;
            i = prog.skip_idle_seen(
                hay,
                base,
                i,
                lb,
                &mut self.needles,
                &mut self.forward,
                blind,
            );
            self.pos = i + base;
            if self.lazy_or_window_stop(prog, self.pos) {
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
        // The forward skip pays only over a long enough stretch.
        let skips = prog.prefilter.is_some()
            || prog.gate.is_some()
            || (prog.forward_hirs.is_some() && hay.len() - i >= FORWARD_MIN);
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
            let (seen, forward) = (&mut self.needles, &mut self.forward);
            let j = prog.skip_idle_seen(hay, base, i, Some(hay[i - 1]), seen, forward, !self.lazy);
            if j > i {
                i = j;
                let kind = prog.kind(Some(hay[i - 1]));
                match memo.config(prog, prog.dfa.none(), kind) {
                    Some(r) => row = r,
                    None => break,
                }
            }
            if self.lazy_or_window_stop(prog, i + base) {
                // Nothing alive, and only the last window is left: under
                // `lazy` the scan stops here, and under `lazy_end` the
                // caller asks `hold_window` whether it may.
                break;
            }
        }
        let sid = memo.state(prog, row);
        memo.leave(row);
        self.pos = i + base;
        if self.pos > from {
            entered(path::ONE_THREAD);
        }
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
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::state::path;
    use super::super::tests::{CASES, same_as_general};

    /// Words under `\w+@…`: every new thread merges into the live one.
    #[test]
    fn words_under_an_email_rule_take_one_thread() {
        let input = b"many words go by before one address: bob@example.com, done";
        let runs = same_as_general(&[r"\w+@\w+\.com"], input, &[33]);
        assert!(runs.iter().all(|r| r.entered[path::ONE_THREAD] > 0));
        assert_eq!(runs[0].decided, vec![(0, 37..52)]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(CASES))]
        #[test]
        fn one_thread_decides_as_the_general_loop(
            input in "[a-c @.,]{0,60}",
            cuts in prop::collection::vec(0usize..70, 0..4),
        ) {
            same_as_general(&[r"\w+@\w+\.[a-c]+", r"c\.a"], input.as_bytes(), &cuts);
        }
    }
}
