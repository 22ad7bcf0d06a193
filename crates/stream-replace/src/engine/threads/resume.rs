//! Fast path: resuming a stream's DFA states in the scratch it borrowed.
//!
//! Entered at the start of every call (`Matcher::scan`, `scan_quick`) for
//! a lazy DFA (`!D::STABLE`) when the scratch differs from the one the
//! stream last used, or its cache was cleared since (`Core::seen`), and
//! DFA threads are held. Lazy state ids are valid only in the cache, and
//! the generation of it, that made them.
//!
//! A short stretch (less than `SUSPEND_AFTER` bytes from the earliest live
//! start, nothing suspended) is stepped again on the DFA from that start,
//! with the threads and the recorded match dropped: exact because the
//! general loop rebuilds them from the same bytes; linear because a call
//! replays fewer than `SUSPEND_AFTER` bytes. A longer stretch is replayed
//! on the NFA (`fallback`), which holds no DFA state and steps each byte
//! at most once.

use super::program::Scratch;
use super::state::{Core, Mode, entered, path};
use super::suspend::SUSPEND_AFTER;
use crate::engine::dfa::Dfa;

impl<D: Dfa> Core<D> {
    /// Before the DFA states this stream holds are stepped with the
    /// scratch `s`: when they were made in another cache, or in an earlier
    /// generation of this one (the lazy DFA's states are only valid there),
    /// they are worked out again by stepping the held text from the
    /// earliest live start. A short stretch (the usual case: a word under
    /// an email-like rule) is stepped again on the DFA: less than
    /// `SUSPEND_AFTER` bytes per call, so the total work stays linear. A
    /// longer one is replayed on the NFA, which keeps no DFA state and
    /// steps each byte at most once.
    #[inline(always)]
    pub(super) fn resume(&mut self, s: &Scratch<D>) {
        if D::STABLE {
            return;
        }
        let now = (s.id, D::clear_count(&s.cache));
        if self.seen == now {
            return;
        }
        self.seen = now;
        if self.mode != Mode::Dfa || self.dfa_threads.is_empty() {
            // No DFA state held (a recorded match is only positions).
            return;
        }
        entered(path::RESUME);
        let from = self.replay_from(self.pos);
        if self.suspended.is_none() && self.pos - from < SUSPEND_AFTER {
            self.dfa_threads.clear();
            self.best = None;
            self.pos = from;
        } else {
            let until = self.pos;
            self.enter_nfa(from, until);
        }
    }

    /// Records the scratch and generation the DFA states held now belong to.
    #[inline(always)]
    pub(super) fn leave(&mut self, s: &Scratch<D>) {
        if !D::STABLE {
            self.seen = (s.id, D::clear_count(&s.cache));
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::state::path;
    use super::super::tests::{CASES, same_as_general};
    use super::SUSPEND_AFTER;

    /// A stream that gets another scratch each call (the third
    /// configuration) works its DFA states out again: a short stretch on
    /// the DFA, a long one on the NFA.
    #[test]
    fn a_migrating_stream_resumes() {
        let runs = same_as_general(
            &[r"\w+@\w+\.com"],
            b"mail bob@exa mple.com bob@ex.com",
            &[10, 14],
        );
        assert!(runs[2].entered[path::RESUME] > 0);
        assert_eq!(runs[2].entered[path::NFA], 0);
        let mut long = vec![b'a'; 2 * SUSPEND_AFTER];
        long.extend_from_slice(b"@b.com");
        let runs = same_as_general(&[r"\w+@\w+\.com"], &long, &[SUSPEND_AFTER + 10]);
        assert!(runs[2].entered[path::RESUME] > 0);
        assert!(runs[2].entered[path::NFA] > 0);
        assert_eq!(runs[2].decided, vec![(0, 0..long.len())]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(CASES))]
        #[test]
        fn resuming_decides_as_the_general_loop(
            input in "[a-c @.]{0,100}",
            cuts in prop::collection::vec(0usize..110, 0..8),
        ) {
            same_as_general(&[r"\w+@\w+\.[a-c]", r"[a-c]{3}\.@"], input.as_bytes(), &cuts);
        }
    }
}
