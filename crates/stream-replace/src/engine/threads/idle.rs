//! Fast path: the idle scan. Skips the text where no thread can start.
//!
//! Entered while nothing is alive: no DFA thread and no recorded match
//! (`dfa_threads.is_empty() && best.is_none()` in `Core::run_dfa`,
//! `Core::run_simple` with no thread, and the stream's `idle_prefix`
//! through `Matcher::skip_idle`), with `Prog::fast` set.
//!
//! Exact because a position is skipped only when no match can start there:
//! the prefilter finds every start of a match that begins with one of its
//! literals (its blind tail, where a literal may be cut by the end of the
//! text, is checked byte by byte); the gate (see `gate`) proves that no
//! match starts more than its reach before the next needle; and the
//! `may_start` row of the byte before says which first bytes a thread
//! survives, which is the DFA's own start state stepped once. A skipped
//! position would have started a thread that died on its first byte.
//! Where the rules have neither a prefilter nor a gate, the forward skip
//! (see `forward`) goes on from there to the earliest candidate still
//! alive where the first match ends.

use regex_automata::Span;

use super::forward::FORWARD_MIN;
use super::program::Prog;
use super::state::{Core, entered, path};
use crate::engine::bytes::is_continuation;
use crate::engine::dfa::Dfa;
use crate::engine::gate::Seen;
use crate::engine::tape::Tape;

impl<D: Dfa> Prog<D> {
    /// The first position in `hay` from `from` where a thread can survive
    /// its first byte, or `hay.len()`; `lb` is the byte before `from`, if
    /// any.
    pub(super) fn skip_idle(&self, hay: &[u8], from: usize, lb: Option<u8>) -> usize {
        let p = self.skip_idle_seen(hay, 0, from, lb, &mut Seen::default(), &mut 0, false);
        if p > from {
            entered(path::IDLE);
        }
        p
    }

    /// `skip_idle`, with what the stream's earlier needle searches found
    /// and where its last forward search ended (`hay[0]` is at stream
    /// offset `base`). With `blind`, the reverse automaton also searches
    /// back from where the gate's search was blind, not only from a needle
    /// (see `reverse`: the stream's own scan, which steps that window
    /// next; a scan of a chunk in place releases up to the window and
    /// leaves it to the stream's scan, which would search it again).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn skip_idle_seen(
        &self,
        hay: &[u8],
        base: usize,
        from: usize,
        lb: Option<u8>,
        seen: &mut Seen,
        forward: &mut usize,
        blind: bool,
    ) -> usize {
        let end = hay.len();
        let mut p = from;
        if self.never {
            return end;
        }
        if !self.fast {
            return p;
        }
        let behind = |p: usize| if p == from { lb } else { Some(hay[p - 1]) };
        if let Some(pre) = &self.prefilter {
            // A literal that starts within the last `tail` bytes may be cut
            // by the end of `hay`: the prefilter cannot see it, so it is
            // blind there. Those positions are checked byte by byte below
            // (once: the next chunk starts after them). A hit inside the
            // tail proves nothing about the tail's earlier positions (a
            // short needle found after the cut-off start of a longer one),
            // so it counts as no hit.
            let tail = pre.max_needle_len() - 1;
            while p + tail < end {
                match pre.find(hay, Span::from(p..end)) {
                    Some(m) if m.start + tail < end => p = m.start,
                    _ => {
                        p = end - tail;
                        break;
                    }
                }
                if self.may_start(behind(p), hay[p]) {
                    return p;
                }
                p += 1;
            }
        } else if let Some(gate) = &self.gate {
            p = gate.skip(hay, base, p, seen);
            if blind || gate.found(seen) {
                if let Some(reverse) = self.reverse() {
                    p = reverse.start(hay, p, gate.stop(seen, base));
                }
            }
        }
        let mut row = &self.may_start[behind(p).map_or(0, |b| b as usize + 1)];
        while p < end {
            let b = hay[p];
            if row[(b >> 6) as usize] & (1 << (b & 63)) != 0 {
                break;
            }
            row = &self.may_start[b as usize + 1];
            p += 1;
        }
        if self.forward_hirs.is_some() && end - p >= FORWARD_MIN && base + p >= *forward {
            if let Some(f) = self.forward() {
                let (mut s, m) = f.skip(hay, p);
                *forward = base + m;
                // A byte class may begin a prefix inside a character.
                while s > p && s < end && is_continuation(hay[s]) {
                    s -= 1;
                }
                if s > p {
                    entered(path::FORWARD);
                    p = s;
                }
            }
        }
        p
    }
}

impl<D: Dfa> Core<D> {
    /// With nothing alive, the next position from `self.pos` where a thread
    /// can survive its first byte (or `end`).
    pub(super) fn skip_idle_to(&mut self, prog: &Prog<D>, tape: &Tape, end: usize) -> usize {
        let base = tape.base();
        let hay = &tape.bytes()[..end - base];
        let lb = tape.look_behind(self.pos);
        // Under `set_lazy` a blind window is handed back unscanned: no
        // reverse search there.
        let blind = !self.lazy;
        let (seen, forward) = (&mut self.needles, &mut self.forward);
        let p = prog.skip_idle_seen(hay, base, self.pos - base, lb, seen, forward, blind) + base;
        if p > self.pos {
            entered(path::IDLE);
        }
        p
    }

    /// With `yes`, the bytes fed next are not the last of the caller's
    /// input for this call: where the gate can only tell that nothing
    /// starts before the last few bytes (the window a needle still to come
    /// could reach back into), the scan stops before that window, idle,
    /// instead of stepping it (the stream hands it back to the caller, see
    /// `StreamState::feed_part`).
    pub(crate) fn set_lazy(&mut self, yes: bool) {
        self.lazy = yes;
        if !yes {
            self.lazy_end = false;
        }
    }

    /// With a gate, the positions where the gate cannot skip (the window
    /// before the next needle, or before the end of what it searched): the
    /// tuple loop steps through them even while one thread or none is
    /// alive, rather than handing each word to the one-thread loop and the
    /// gate again. Empty under `set_lazy` when the window is the last one.
    #[inline(always)]
    pub(super) fn gate_window(&self, prog: &Prog<D>) -> Option<(usize, usize)> {
        let gate = prog.gate.as_ref()?;
        Some(gate.window(&self.needles, self.lazy))
    }

    /// Whether a scan that reached `p` with nothing alive may stop there
    /// (`lazy_stop`), or, under `set_lazy_end`, is in the gate's last
    /// blind window, where its caller asks `hold_window` whether it may
    /// stop (see `window`).
    #[inline(always)]
    pub(super) fn lazy_or_window_stop(&self, prog: &Prog<D>, p: usize) -> bool {
        (self.lazy || self.lazy_end)
            && prog
                .gate
                .as_ref()
                .is_some_and(|g| g.blind(&self.needles, p))
    }

    /// Whether a scan that reached `p` with nothing alive may stop there
    /// (see `set_lazy`).
    #[inline(always)]
    pub(super) fn lazy_stop(&self, prog: &Prog<D>, p: usize) -> bool {
        self.lazy
            && prog
                .gate
                .as_ref()
                .is_some_and(|g| g.blind(&self.needles, p))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use regex_automata::{Anchored, Input, meta};

    use super::super::Program;
    use super::super::state::path;
    use super::super::tests::{CASES, configs, same_as_general, took};
    use crate::config::Config;

    /// The naive oracle: at no skipped position does a match start (an
    /// anchored search there, with the text before as look-behind).
    fn check_skip(rules: &[&str], hay: &[u8], from: usize) -> usize {
        let re = meta::Regex::new_many(rules).unwrap();
        let sources: Vec<String> = rules.iter().map(|r| r.to_string()).collect();
        let mut skipped = 0;
        for config in configs()
            .into_iter()
            .chain([Config::new().fast_paths(false)])
        {
            let prog = Program::new(&sources, &config).unwrap();
            let lb = from.checked_sub(1).map(|i| hay[i]);
            let to = match &prog.0 {
                super::super::program::Progs::Dense(p) => p.skip_idle(hay, from, lb),
                super::super::program::Progs::Lazy(p) => p.skip_idle(hay, from, lb),
            };
            assert!(from <= to && to <= hay.len());
            for q in from..to {
                let input = Input::new(hay).range(q..).anchored(Anchored::Yes);
                assert!(re.search(&input).is_none(), "{rules:?}: a match at {q}");
            }
            skipped = skipped.max(to - from);
        }
        skipped
    }

    /// A prefilter (every match starts with `key-`), the gate (a required
    /// `@` near the start) and the first-byte table each skip idle text.
    #[test]
    fn idle_text_is_skipped() {
        let hay = b"nothing to see here, then key-12 and more";
        assert!(check_skip(&[r"key-\d+"], hay, 0) >= 26);
        let words = b"no at sign in here at all, ".repeat(4);
        assert!(check_skip(&[r"\w{1,8}@\w+"], &words, 0) > 0);
        assert!(check_skip(&[r"\d+[a-z]"], b"words only then 12a", 2) > 0);
        let runs = same_as_general(&[r"key-\d+"], hay, &[10, 28]);
        assert!(runs.iter().all(|r| r.entered[path::IDLE] > 0));
        let mut words = b"some words, ".repeat(8);
        words.extend_from_slice(b"bob@ex and more");
        let runs = same_as_general(&[r"\w{1,8}@\w+"], &words, &[4]);
        assert!(took(&runs, path::IDLE));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(CASES))]
        #[test]
        fn skipped_text_holds_no_match_start(
            hay in "[a-z -]{0,30}(key-[0-9]{1,3})?[a-z@ ]{0,20}",
            from in 0usize..60,
            set in 0usize..3,
        ) {
            let rules: &[&[&str]] = &[&[r"key-\d+"], &[r"\w{1,8}@\w+"], &[r"\d+[a-z]", r"k\w"]];
            let from = from % (hay.len() + 1);
            check_skip(rules[set], hay.as_bytes(), from);
        }
    }
}
