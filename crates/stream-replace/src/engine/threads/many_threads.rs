//! Fast path: the many-thread loop over the `tuples` memo.
//!
//! Entered in `Core::run_dfa` when `Prog::fast` is set, no match is
//! recorded and nothing is suspended, a byte is left, and either
//! `tuples::MIN_THREADS` threads or more are alive or the position is
//! inside the gate's window (`Core::gate_window`).
//!
//! The ordered tuple of live states, with the kind of the byte before,
//! determines the next tuple (`tuples::Tuples::run` builds each step with
//! the general loop's rules, and exits on a match, a quit or a budget).
//! Exact for the same reason as `one_thread`.

use super::program::{Prog, Scratch};
use super::state::{Core, Fallback, entered, path};
use crate::engine::dfa::Dfa;
use crate::engine::tape::Tape;

impl<D: Dfa> Core<D> {
    /// The common case of `run_dfa` with several live threads and no
    /// match recorded, in a tight loop over the `tuples` memo.
    #[inline(always)]
    pub(super) fn run_tuples(
        &mut self,
        prog: &Prog<D>,
        s: &mut Scratch<D>,
        tape: &Tape,
        stay: Option<(usize, usize)>,
    ) -> Result<(), Fallback> {
        let from = self.pos;
        let (threads, pos) = (&mut self.dfa_threads, &mut self.pos);
        let stale = s.tuples.run(prog, &mut s.cache, threads, pos, tape, stay);
        if self.pos > from {
            entered(path::MANY_THREADS);
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

    /// A bounded repetition keeps a thread per start whose states never
    /// merge: the tuple loop steps them together.
    #[test]
    fn a_bounded_repetition_takes_many_threads() {
        let input = b"abcabcabcabcabcabcabc x abcabcx";
        let runs = same_as_general(&[r"[a-c]{0,6}x"], input, &[11]);
        // Not with the tiny cache, cleared under the stream: the NFA
        // steps these bytes there.
        assert!(runs[..3].iter().all(|r| r.entered[path::MANY_THREADS] > 0));
        assert!(runs[3].entered[path::NFA] > 0);
        assert_eq!(runs[0].decided, vec![(0, 22..23), (0, 24..31)]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(CASES))]
        #[test]
        fn many_threads_decide_as_the_general_loop(
            input in "[a-c x@]{0,60}",
            cuts in prop::collection::vec(0usize..70, 0..4),
        ) {
            same_as_general(&[r"[a-c]{0,6}x", r"[a-c]{1,4}@"], input.as_bytes(), &cuts);
        }
    }
}
