//! Fast path: a token-sized chunk stepped where it is, before it goes on
//! the tape.
//!
//! Entered from the stream's `feed_threads_token` for a chunk of at most
//! `SMALL_CHUNK` bytes, with the thread matcher alone (no literal
//! matcher), nothing decided or suppressed in the stream, and
//! `Program::takes_tokens`: the fast paths on, a dense DFA with its frozen
//! memos, and no gate. The matcher must be on the DFA, with at most `FEW`
//! threads alive, nothing focused or excluded, and everything on the tape
//! stepped.
//!
//! With no match recorded and nothing suspended, it steps the chunk's
//! bytes with the frozen `single` memo, from the configuration the last
//! feed ended in, while at most one thread is alive. Where a second
//! thread begins inside the first one's run of bytes (an `s` inside a
//! word, under an email rule and a key rule `sk-…`; a digit, under a phone
//! rule), it steps the few threads on the DFA as the general loop does,
//! each byte's new thread taken from the memo's idle configuration, until
//! one is left and the memo takes over again. With one thread stepped
//! alone (a match recorded that it may beat, or suspended, as in a long
//! `<think>` block), it steps that thread's DFA state, as `suspend`'s
//! pending loop does. Either way it runs without the stream's general
//! machinery (the quick scan, the merge of matchers, the release from
//! `earliest_live`). It applies the chunk only if every byte is one those
//! loops step (a known memo entry with no match, quit or second thread;
//! DFA states that are not special, at most `FEW` threads, the earliest
//! not old enough for `suspend` to step it alone) and, at the end, no
//! thread is alive or every live thread's future is known to be open.
//! Otherwise it changes nothing, and the stream feeds the chunk the
//! general way.
//!
//! Exact, with the same hold-back: the entries are the one-thread loop's
//! own (`one_thread`), the few-thread steps are the general loop's (step
//! each thread in start order, drop the dead, keep the earlier of two in
//! one state, then start one at the byte), and the pending steps are
//! `run_pending`'s, so after the chunk the matcher holds the threads the
//! general loop would hold, from the same starts. The loop may skip idle
//! text with a prefilter or a forward search; a skip passes no position
//! whose thread is still alive where the skip lands, and the threads step
//! on from there (`forward`, `idle`), so it ends with the same threads.
//! At the end, `settle` keeps every thread whose future is open, and the
//! quick path (`quick`) answers that a one-thread feed is done on the same
//! condition, so `Core::run` would step and settle nothing more, and the
//! stream would release up to the same earliest live position.

use super::program::{FrozenMemos, Prog};
use super::state::{Core, Mode, entered, path};
use super::suspend::SUSPEND_AFTER;
use crate::engine::automaton::{Thread, byte_kind};
use crate::engine::dfa::Dfa;
use crate::engine::single;
use crate::engine::tape::Tape;

/// The most threads the token path steps at once; with more, the chunk
/// goes the general way (whose many-thread loop starts at
/// `tuples::MIN_THREADS`).
const FEW: usize = 4;

/// The few threads `step_token_few` steps, in start order.
struct Few<S> {
    threads: [Thread<S>; FEW],
    len: usize,
}

impl<S: Copy> Few<S> {
    fn new<D: Dfa<Sid = S>>(prog: &Prog<D>, threads: &[Thread<S>]) -> Few<S> {
        let mut few = Few {
            threads: [Thread {
                start: 0,
                sid: prog.dfa.none(),
            }; FEW],
            len: threads.len(),
        };
        few.threads[..threads.len()].copy_from_slice(threads);
        few
    }
}

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
        self.step_token_with::<false>(prog, tape, chunk)
    }

    /// `step_token` again, for a chunk it left to the general path: where
    /// that was for a second thread (begun in the chunk, or left by the
    /// last feed), it steps the few threads as the general loop does
    /// (`step_token_few`). Out of line, so that `step_token`, on every
    /// token-sized feed, stays as small as the one-thread loop.
    #[inline(never)]
    pub(super) fn step_token_again(
        &mut self,
        prog: &Prog<D>,
        tape: &Tape,
        chunk: &[u8],
    ) -> Option<usize> {
        self.step_token_with::<true>(prog, tape, chunk)
    }

    /// `step_token`, and with `FEW_THREADS` `step_token_again`.
    #[inline(always)]
    fn step_token_with<const FEW_THREADS: bool>(
        &mut self,
        prog: &Prog<D>,
        tape: &Tape,
        chunk: &[u8],
    ) -> Option<usize> {
        debug_assert!(prog.fast && prog.gate.is_none());
        let f = prog.frozen.as_deref()?;
        let offset = tape.offset();
        let most = if FEW_THREADS { FEW } else { 1 };
        if self.mode != Mode::Dfa
            || self.dfa_threads.len() > most
            || self.focus.is_some()
            || self.exclude.is_some()
            || self.pos != offset
        {
            return None;
        }
        let end = offset + chunk.len();
        if self.best.is_some() || self.suspended.is_some() {
            if FEW_THREADS {
                // `step_token` tried it.
                return None;
            }
            return self.step_token_pending(prog, f, chunk, end);
        }
        let kind = prog.kind(tape.look_behind(offset));
        if FEW_THREADS && self.dfa_threads.len() > 1 {
            // Left with a few threads by the last feed.
            return self.step_token_few(prog, f, chunk, 0, kind, Few::new(prog, &self.dfa_threads));
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
        let mut row = single::Memo::config(&mut memo, prog, sid, kind)?;
        let table = single::Memo::table(&memo);
        let classes = &prog.classes;
        for (k, &b) in chunk.iter().enumerate() {
            let e = table[row + classes[b as usize] as usize];
            // One test for the common byte (known, no exit, no restart).
            if e & (single::KNOWN | single::EXIT | single::RESTART) != single::KNOWN {
                if e & (single::KNOWN | single::EXIT) != single::KNOWN {
                    // A second thread, a match or a quit: the few-thread
                    // loop goes on from this byte if it can.
                    if FEW_THREADS && e & single::KNOWN != 0 {
                        return self.step_token_exit(prog, f, chunk, k, kind, row, start);
                    }
                    return None;
                }
                start = offset + k;
            }
            row = (e & single::ROW) as usize;
        }
        if FEW_THREADS {
            // `step_token` stepped the same bytes and met no exit: what
            // sent the chunk here is at its end.
            return None;
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

    /// The one-thread memo's loop in `step_token` met, at byte `k`, an
    /// entry it cannot step (the row before it is `row`, its live thread
    /// if any started at `start`; the chunk's look-behind is of kind
    /// `kind`): `step_token_few` goes on from there if a thread is alive.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn step_token_exit(
        &mut self,
        prog: &Prog<D>,
        f: &FrozenMemos<D::Sid>,
        chunk: &[u8],
        k: usize,
        kind: u8,
        row: usize,
        start: usize,
    ) -> Option<usize> {
        let sid = f.single.state(prog, row);
        if sid == prog.dfa.none() {
            // A thread begun at the byte alone matches or quits.
            return None;
        }
        let before = if k == 0 {
            kind
        } else {
            byte_kind(chunk[k - 1])
        };
        let few = Few::new(prog, &[Thread { start, sid }]);
        self.step_token_few(prog, f, chunk, k, before, few)
    }

    /// `step_token` from byte `k` of `chunk` on, with the threads in `few`
    /// (the byte before `k` of kind `before`): each byte steps them as the
    /// general loop does, until at most one is left, when the one-thread
    /// memo takes over again. Gives up, having changed nothing, where the
    /// general loop would do more than step, drop and merge: a match, a
    /// quit, more than `FEW` threads, or the earliest of them old enough to
    /// be suspended.
    #[inline(never)]
    fn step_token_few(
        &mut self,
        prog: &Prog<D>,
        f: &FrozenMemos<D::Sid>,
        chunk: &[u8],
        mut k: usize,
        mut before: u8,
        mut few: Few<D::Sid>,
    ) -> Option<usize> {
        let offset = self.pos;
        let end = offset + chunk.len();
        let mut cache = D::free_cache()?;
        let dfa = &prog.dfa;
        let none = dfa.none();
        let table = f.single.table();
        let classes = &prog.classes;
        let mut hint = self.hint;
        'few: loop {
            // Several threads alive before byte `k`.
            while k < chunk.len() {
                let p = offset + k;
                let first = few.threads[0].start;
                if few.len > 1 && p - first >= SUSPEND_AFTER && first >= self.replayed_to {
                    return None;
                }
                let b = chunk[k];
                let mut kept = 0;
                for i in 0..few.len {
                    let t = few.threads[i];
                    let next = dfa.next_state(&mut cache, t.sid, b).ok()?;
                    if dfa.is_special(next) {
                        if dfa.is_dead(next) {
                            continue;
                        }
                        return None;
                    }
                    if few.threads[..kept].iter().any(|t| t.sid == next) {
                        continue;
                    }
                    few.threads[kept] = Thread {
                        start: t.start,
                        sid: next,
                    };
                    kept += 1;
                }
                // A thread started at `p`: the idle configuration's entry
                // says whether one survives the byte, and in which state.
                let e = table[f.single.idle_row(before) + classes[b as usize] as usize];
                if e & (single::KNOWN | single::EXIT) != single::KNOWN {
                    return None;
                }
                if e & single::IDLE == 0 {
                    let sid = f.single.state(prog, (e & single::ROW) as usize);
                    if !few.threads[..kept].iter().any(|t| t.sid == sid) {
                        if kept == FEW {
                            return None;
                        }
                        few.threads[kept] = Thread { start: p, sid };
                        kept += 1;
                    }
                }
                few.len = kept;
                before = byte_kind(b);
                k += 1;
                if kept > 1 {
                    continue;
                }
                // One thread or none: back to the one-thread memo.
                let (mut start, sid) = match kept {
                    1 => (few.threads[0].start, few.threads[0].sid),
                    _ => (p + 1, none),
                };
                let mut memo = single::FrozenRef {
                    frozen: &f.single,
                    hint: &mut hint,
                };
                let mut row = single::Memo::config(&mut memo, prog, sid, before)?;
                // `step_token`'s loop, byte for byte, with its exits taken
                // here. Kept apart from it on purpose: a shared inlined
                // helper cost both loops instructions (BENCHMARKS.md, "A
                // few threads on the token path").
                while k < chunk.len() {
                    let b = chunk[k];
                    let e = table[row + classes[b as usize] as usize];
                    if e & (single::KNOWN | single::EXIT | single::RESTART) != single::KNOWN {
                        if e & (single::KNOWN | single::EXIT) != single::KNOWN {
                            let sid = single::Memo::state(&memo, prog, row);
                            if e & single::KNOWN == 0 || sid == none {
                                return None;
                            }
                            few.threads[0] = Thread { start, sid };
                            few.len = 1;
                            continue 'few;
                        }
                        start = offset + k;
                    }
                    row = (e & single::ROW) as usize;
                    before = byte_kind(b);
                    k += 1;
                }
                // The end of the chunk, in the one-thread memo.
                let sid = single::Memo::state(&memo, prog, row);
                let alive = sid != none;
                if alive && !self.known_open(sid, || f.is_open(dfa.index(sid))) {
                    return None;
                }
                single::Memo::leave(&mut memo, row);
                few.len = 0;
                if alive {
                    few.threads[0] = Thread { start, sid };
                    few.len = 1;
                }
                break 'few;
            }
            // The end of the chunk with several threads: `settle` would
            // keep them all only if every one's future is open.
            if few.threads[..few.len]
                .iter()
                .any(|t| !f.is_open(dfa.index(t.sid)))
            {
                return None;
            }
            break;
        }
        self.hint = hint;
        self.pos = end;
        entered(path::TOKEN);
        entered(path::TOKEN_FEW);
        self.dfa_threads.clear();
        self.dfa_threads.extend_from_slice(&few.threads[..few.len]);
        Some(
            few.threads
                .first()
                .filter(|_| few.len > 0)
                .map_or(end, |t| t.start),
        )
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
    /// every chunk. Returns how many chunks took the token path, and how
    /// many of them stepped several threads.
    fn same_with_tokens_few(rules: &[&str], input: &[u8], cuts: &[usize]) -> (usize, usize) {
        let chunks = split(input, cuts);
        let mut taken = 0;
        let mut few = 0;
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
            assert!(
                on.entered[path::TOKEN_FEW] <= on.entered[path::TOKEN],
                "{what}"
            );
            taken += on.entered[path::TOKEN];
            few += on.entered[path::TOKEN_FEW];
        }
        (taken, few)
    }

    /// `same_with_tokens_few`'s count of chunks that took the token path.
    fn same_with_tokens(rules: &[&str], input: &[u8], cuts: &[usize]) -> usize {
        same_with_tokens_few(rules, input, cuts).0
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

    /// Under an email-like rule, a key rule that starts with `s` begins a
    /// second thread at every `s` inside a word, and a phone-like rule one
    /// at every digit: they die or merge with the word's thread a byte or
    /// a few later, or match. The token path steps them as the general
    /// loop does, across chunks too, and leaves a match, a fifth thread
    /// and a thread old enough to be suspended to the general path.
    #[test]
    fn a_few_threads_inside_a_word_take_the_token_path() {
        let rules = [
            r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}",
            r"\(?\d{3}\)?[ -]?\d{3}-\d{4}",
            r"sk-[A-Za-z0-9]{20,}",
        ];
        let mut input = b"this is ask-abcdefghij and xs1234567 then bob@ex.com, ".to_vec();
        input.extend_from_slice(b"sk-1234567890abcdefghij end 555-123-4567 and ");
        input.extend_from_slice(&[b'w'; 70]);
        input.extend_from_slice(b"sks 12a34 end");
        for step in 1..6 {
            let cuts: Vec<usize> = (1..input.len()).step_by(step).collect();
            let (taken, few) = same_with_tokens_few(&rules, &input, &cuts);
            assert!(taken > 0 && few > 0, "{step}: {taken} {few}");
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
            set in 0usize..8,
        ) {
            let rules: &[&str] = match set {
                0 => &[r"\w+@\w+\.[a-c]+", r"c\.a"],
                1 => &[r"\b\d{3}-\d{2}\b", r"[a-c]+@[a-c]+"],
                2 => &[r"<a>[\s\S]*?</a>", r"(?m)^\d+$"],
                3 => &[r"a(?:b|bc)c?", r"\d{2,}", r"é+"],
                4 => &[r"ab", r"\d{3}", r"c+"],
                // Threads that begin inside another's run of bytes.
                6 => &[r"[a-c0-9.-]+@[a-c]+\.[a-c]{2,}", r"b-[a-c0-9]{3,}", r"\d{2}-\d"],
                7 => &[r"[\w.-]+@\w+", r"a\w*b", r"\d+\.\d"],
                _ => &[r"(?-u)\w+\b-x", r"\bab\b"],
            };
            same_with_tokens(rules, input.as_bytes(), &cuts);
        }
    }
}
