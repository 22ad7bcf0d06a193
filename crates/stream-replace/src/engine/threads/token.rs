//! Fast path: a token-sized chunk stepped where it is, before it goes on
//! the tape.
//!
//! Entered from the stream's `feed_threads_token` for a chunk of at most
//! `SMALL_CHUNK` bytes, with the thread matcher alone (no literal
//! matcher), nothing decided or suppressed in the stream, and
//! `Program::takes_tokens`: the fast paths on, a dense DFA with its frozen
//! memos, and no gate. The matcher must be where the one-thread loop starts: on
//! the DFA, at most one thread alive, nothing focused or excluded, and
//! everything on the tape stepped.
//!
//! With no match recorded and nothing suspended, it steps the chunk's
//! bytes with the frozen `single` memo, from the configuration the last
//! feed ended in; with one thread stepped alone (a match recorded that it
//! may beat, or suspended, as in a long `<think>` block), it steps that
//! thread's DFA state, as `suspend`'s pending loop does. Either way it
//! runs without the stream's general machinery (the quick scan, the merge
//! of matchers, the release from `earliest_live`). It applies the chunk
//! only if every byte is one those loops step alone (a known memo entry
//! with no match, quit or second thread; a DFA state that is not special)
//! and, at the end, no thread is alive or the live thread's future is
//! known to be open. Otherwise it changes nothing, and the stream feeds
//! the chunk the general way.
//!
//! Exact, with the same hold-back: the entries are the one-thread loop's
//! own (`one_thread`), and the pending steps are `run_pending`'s, so after
//! the chunk the matcher holds the thread the loop would hold, from the
//! same start. The loop may skip idle text with
//! a prefilter or a forward search; a skip passes no position whose thread
//! is still alive where the skip lands, and the threads step on from there
//! (`forward`, `idle`), so it ends with the same thread.
//! At the end, the quick path (`quick`) would answer that the feed is done
//! on the same condition (the thread's future open, or nothing alive), so
//! `Core::run` would step and settle nothing more, and the stream would
//! release up to the same earliest live position.

use super::program::{FrozenMemos, Prog};
use super::state::{Core, Mode, entered, path};
use crate::engine::automaton::Thread;
use crate::engine::dfa::Dfa;
use crate::engine::single;
use crate::engine::tape::Tape;

impl<D: Dfa> Core<D> {
    /// Steps `chunk`, the bytes that follow the tape, as the module docs
    /// say. Returns the earliest position where a match may still start
    /// (the live thread's start, a recorded match's, or the end of the
    /// chunk) when it applied the chunk; the caller then puts the chunk on
    /// the tape. `None`, having changed nothing, when the chunk needs the
    /// general path.
    #[inline(always)]
    pub(super) fn step_token(
        &mut self,
        prog: &Prog<D>,
        tape: &Tape,
        chunk: &[u8],
    ) -> Option<usize> {
        debug_assert!(prog.fast && prog.gate.is_none());
        let f = prog.frozen.as_deref()?;
        let offset = tape.offset();
        if self.mode != Mode::Dfa
            || self.dfa_threads.len() > 1
            || self.focus.is_some()
            || self.exclude.is_some()
            || self.pos != offset
        {
            return None;
        }
        let end = offset + chunk.len();
        if self.best.is_some() || self.suspended.is_some() {
            return self.step_token_pending(prog, f, chunk, end);
        }
        let (mut start, sid) = match self.dfa_threads.first() {
            Some(t) => (t.start, t.sid),
            None => (offset, prog.dfa.none()),
        };
        let mut hint = self.hint;
        let mut memo = single::FrozenRef {
            frozen: &f.single,
            hint: &mut hint,
        };
        let kind = prog.kind(tape.look_behind(offset));
        let mut row = single::Memo::config(&mut memo, prog, sid, kind)?;
        let table = single::Memo::table(&memo);
        let classes = &prog.classes;
        for (k, &b) in chunk.iter().enumerate() {
            let e = table[row + classes[b as usize] as usize];
            // One test for the common byte (known, no exit, no restart).
            if e & (single::KNOWN | single::EXIT | single::RESTART) != single::KNOWN {
                if e & (single::KNOWN | single::EXIT) != single::KNOWN {
                    return None;
                }
                start = offset + k;
            }
            row = (e & single::ROW) as usize;
        }
        let sid = single::Memo::state(&memo, prog, row);
        let alive = sid != prog.dfa.none();
        if alive && !self.known_open(sid, || f.is_open(prog.dfa.index(sid))) {
            return None;
        }
        single::Memo::leave(&mut memo, row);
        self.hint = hint;
        self.pos = end;
        entered(path::TOKEN);
        if !alive {
            self.dfa_threads.clear();
            return Some(end);
        }
        let thread = Thread { start, sid };
        match self.dfa_threads.first_mut() {
            Some(t) => *t = thread,
            None => self.dfa_threads.push(thread),
        }
        Some(start)
    }

    /// `step_token` where the one thread alive is stepped alone (`suspend`'s
    /// pending loop): a match is recorded that it may still beat or
    /// extend, or it is the earliest of several and the rest wait for a
    /// replay. Each byte is a DFA step; a special state (a match, its
    /// death, a quit) is left to the general path.
    #[inline(never)]
    fn step_token_pending(
        &mut self,
        prog: &Prog<D>,
        f: &FrozenMemos<D::Sid>,
        chunk: &[u8],
        end: usize,
    ) -> Option<usize> {
        let mut cache = D::free_cache()?;
        let t = *self.dfa_threads.first()?;
        let dfa = &prog.dfa;
        let mut sid = t.sid;
        for &b in chunk {
            let n = dfa.next_state(&mut cache, sid, b).ok()?;
            if dfa.is_special(n) {
                return None;
            }
            sid = n;
        }
        if !self.known_open(sid, || f.is_open(prog.dfa.index(sid))) {
            return None;
        }
        self.dfa_threads[0].sid = sid;
        self.pos = end;
        entered(path::TOKEN);
        Some(self.best.map_or(t.start, |b| b.start.min(t.start)))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::state::path;
    use super::super::tests::{CASES, configs, run_tokens, split};

    /// Runs `rules` over `input` cut at `cuts` in every configuration,
    /// with the token path and without it (the naive oracle: the same
    /// matcher, every chunk put on the tape and scanned), and checks that
    /// both decide the same matches and hold from the same position after
    /// every chunk. Returns how many chunks took the token path.
    fn same_with_tokens(rules: &[&str], input: &[u8], cuts: &[usize]) -> usize {
        let chunks = split(input, cuts);
        let mut taken = 0;
        for config in configs() {
            let on = run_tokens(rules, &config, &chunks, true);
            let off = run_tokens(rules, &config, &chunks, false);
            let general = run_tokens(rules, &config.clone().fast_paths(false), &chunks, true);
            let what = format!(
                "{rules:?} on {:?} cut {cuts:?} ({config:?})",
                String::from_utf8_lossy(input)
            );
            assert_eq!(on.decided, off.decided, "{what}");
            assert_eq!(on.live, off.live, "{what}");
            assert_eq!(on.decided, general.decided, "{what}");
            assert_eq!(off.entered[path::TOKEN], 0, "{what}");
            assert_eq!(general.entered[path::TOKEN], 0, "{what}");
            taken += on.entered[path::TOKEN];
        }
        taken
    }

    /// Words fed a few bytes at a time under an email-like rule: a thread
    /// alive across chunks, chunks where it dies, and a match, which the
    /// token path leaves to the general one.
    #[test]
    fn word_tokens_take_the_token_path() {
        let input = b"some words then bob@example.com and more words to end";
        let cuts: Vec<usize> = (1..input.len()).step_by(3).collect();
        let taken = same_with_tokens(&[r"\w+@\w+\.com", r"\d{3}-\d{4}"], input, &cuts);
        assert!(taken > 0);
    }

    /// A long open `<a>` block in token-sized chunks: its thread is
    /// suspended after `SUSPEND_AFTER` bytes and then stepped alone, chunk
    /// by chunk, on the token path; closed, it is the match (which may go
    /// on), and never closed, the words inside are replayed.
    #[test]
    fn a_suspended_thread_takes_the_token_path() {
        for close in ["</a> end", " b end", "</a>yzq end", "</a>yzw end"] {
            let mut input = b"x <a>".to_vec();
            while input.len() < 400 {
                input.extend_from_slice(b"word ");
            }
            input.extend_from_slice(close.as_bytes());
            for step in 2..5 {
                let cuts: Vec<usize> = (1..input.len()).step_by(step).collect();
                // After `</a>` the thread goes on: the pending loop must
                // stop at the match, or the match is lost.
                let rules = [r"<a>[^<]*</a>(?:yzw)?", r"\w+d b"];
                let taken = same_with_tokens(&rules, &input, &cuts);
                // Every chunk after the first 64 bytes of the block, in the
                // one configuration that takes the path (the dense DFA).
                assert!(taken > (400 - 80) / step, "{close}: {taken}");
            }
        }
    }

    /// A rule set with a gate never takes it (its window path is the
    /// stream's own), nor does a lazy DFA.
    #[test]
    fn gated_and_lazy_rules_do_not_take_it() {
        let input = b"aaa bbb@ccc.dd eee";
        let cuts: Vec<usize> = (1..input.len()).collect();
        let chunks = split(input, &cuts);
        let gated = [r"[a-z]{1,8}@[a-z]+\.[a-z]{2}"];
        for config in configs() {
            let run = run_tokens(&gated, &config, &chunks, true);
            assert_eq!(run.entered[path::TOKEN], 0, "{config:?}");
        }
        let run = run_tokens(&[r"\w+@\w+\.com"], &configs()[1], &chunks, true);
        assert_eq!(run.entered[path::TOKEN], 0);
    }

    /// A thread whose future is not known to be open at the end of the
    /// chunk goes to the general path, which settles it: after `ab` the
    /// DFA has not reported the match yet (a byte late), but it is decided
    /// whatever follows, and the stream releases it at once. A match of
    /// `ab` that may still become `abc` is stepped on.
    #[test]
    fn a_thread_at_a_match_is_left_to_the_general_path() {
        for rules in [&[r"ab", r"\d{3}"][..], &[r"abc|ab", r"\bx+\b"][..]] {
            let input = b"xx ab abc ab 123 ab";
            for step in 1..4 {
                let cuts: Vec<usize> = (1..input.len()).step_by(step).collect();
                same_with_tokens(rules, input, &cuts);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(CASES))]
        #[test]
        fn token_feeds_decide_and_hold_as_without(
            input in "[a-c0-9 @.é<>/-]{0,40}",
            cuts in prop::collection::vec(0usize..50, 0..20),
            set in 0usize..6,
        ) {
            let rules: &[&str] = match set {
                0 => &[r"\w+@\w+\.[a-c]+", r"c\.a"],
                1 => &[r"\b\d{3}-\d{2}\b", r"[a-c]+@[a-c]+"],
                2 => &[r"<a>[\s\S]*?</a>", r"(?m)^\d+$"],
                3 => &[r"a(?:b|bc)c?", r"\d{2,}", r"é+"],
                4 => &[r"ab", r"\d{3}", r"c+"],
                _ => &[r"(?-u)\w+\b-x", r"\bab\b"],
            };
            same_with_tokens(rules, input.as_bytes(), &cuts);
        }
    }
}
