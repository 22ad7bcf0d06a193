//! Fast path: the gate's last window, held idle at the end of a feed.
//!
//! Entered at the end of a feed that more input may follow (the stream's
//! `advance`, through `Core::set_lazy_end`, for a thread matcher alone and
//! no suppression), with `Prog::fast` and a gate, when nothing is alive
//! (on the DFA: no thread, no recorded match, nothing suspended, focused
//! or excluded) and the idle scan stopped in the gate's last window, where
//! its needle search was blind: a match may start there only if the bytes
//! to come hold a needle.
//!
//! The general loop steps a thread from every position of that window
//! that may start one (up to 64 for `[\w.%+-]{1,64}@…` at the end of each
//! chunk of base64), and the next feed steps them on until they die.
//! Instead, the scan stops idle at the position `p` where the idle scan
//! left it, if a thread started at `p` and stepped alone to the end of
//! the tape is alive and open (its future depends on the bytes to come).
//! The stream holds from `p`, and the next feed's idle scan goes on from
//! `p` over the bytes held and those that came.
//!
//! Exact, with the same hold-back: the idle scan's skip is exact whatever
//! bytes follow, so no match starts before `p`; the thread from `p` is one
//! the general loop would start, step and keep at the end of the feed
//! (nothing before it is alive to merge it or to win), so its hold-back
//! starts at `p` too. Nothing in the window is decided either way: every
//! match holds a needle, and the search saw none whole there. Where the
//! thread from `p` dies, reaches a match, a quit or a state that needs
//! more care, or its future is not known to be open, the window is
//! stepped as before.

use regex_automata::Anchored;
use regex_automata::util::start;

use super::program::{Prog, Scratch};
use super::state::{Core, Mode, entered, path};
use crate::engine::bytes::is_continuation;
use crate::engine::dfa::Dfa;
use crate::engine::futures::{Future, Futures, future};
use crate::engine::tape::Tape;

impl<D: Dfa> Core<D> {
    /// With `yes`, the feed being scanned is the last of a call, and more
    /// input may follow in later calls: the scan may stop idle in the
    /// gate's last window where `hold_window` allows it (see the module
    /// docs). Cleared with `set_lazy(false)`; no effect under
    /// `set_lazy(true)`, which stops before that window anyway.
    pub(crate) fn set_lazy_end(&mut self, yes: bool) {
        self.lazy_end = yes && !self.lazy;
    }

    /// Whether the scan, idle at `self.pos`, may stop there and leave the
    /// rest of the tape held, unscanned (see the module docs). `is_open`
    /// tells whether a DFA state's future is known to be open. A call
    /// steps a thread for this at most once: after a thread that fails,
    /// the window is stepped as before until the call ends, so the check
    /// costs at most one more pass over the window.
    #[inline(never)]
    pub(super) fn hold_window(
        &mut self,
        prog: &Prog<D>,
        cache: &mut D::Cache,
        tape: &Tape,
        is_open: impl FnOnce(&mut D::Cache, D::Sid) -> bool,
    ) -> bool {
        let p = self.pos;
        let end = tape.offset();
        if !self.lazy_end
            || !prog.fast
            || p >= end
            || self.mode != Mode::Dfa
            || !self.dfa_threads.is_empty()
            || self.best.is_some()
            || self.suspended.is_some()
            || self.focus.is_some()
            || self.exclude.is_some()
        {
            return false;
        }
        let Some(gate) = &prog.gate else {
            return false;
        };
        if !gate.blind(&self.needles, p) {
            return false;
        }
        let hay = &tape.bytes()[p - tape.base()..];
        let first = hay[0];
        let lb = prog.start_lb(tape, p);
        if is_continuation(first) || !prog.may_start(lb, first) {
            return false;
        }
        // One attempt per call, whatever it finds.
        self.lazy_end = false;
        let dfa = &prog.dfa;
        let clears = D::clear_count(cache);
        let cfg = start::Config::new().anchored(Anchored::Yes).look_behind(lb);
        let Ok(mut sid) = dfa.start_state(cache, &cfg) else {
            return false;
        };
        for &b in hay {
            match dfa.next_state(cache, sid, b) {
                Ok(next) if !dfa.is_special(next) => sid = next,
                _ => return false,
            }
        }
        if D::clear_count(cache) != clears || !is_open(cache, sid) {
            return false;
        }
        self.lazy_end = true;
        entered(path::WINDOW);
        true
    }

    /// `hold_window`, with the futures memo of the scratch `s` (a future
    /// not known yet is worked out and memoised).
    #[inline(always)]
    pub(super) fn hold_window_in(
        &mut self,
        prog: &Prog<D>,
        s: &mut Scratch<D>,
        tape: &Tape,
    ) -> bool {
        let futures = &mut s.futures;
        self.hold_window(prog, &mut s.cache, tape, |cache, sid| {
            open_future(&prog.dfa, futures, cache, sid, true)
        })
    }
}

/// Whether the future of `sid` is open, as `futures` memoises it; with
/// `work_out`, a future not memoised yet is worked out and memoised (false
/// if that clears the cache).
#[inline(always)]
pub(super) fn open_future<D: Dfa>(
    dfa: &D,
    futures: &mut Futures<D::Sid>,
    cache: &mut D::Cache,
    sid: D::Sid,
    work_out: bool,
) -> bool {
    let clears = D::clear_count(cache);
    if let Some(f) = futures.get(sid, clears) {
        return f == Future::Open;
    }
    if !work_out {
        return false;
    }
    let f = future(dfa, cache, sid);
    if D::clear_count(cache) != clears {
        return false;
    }
    futures.insert(sid, f);
    f == Future::Open
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::state::path;
    use super::super::tests::{CASES, configs, run_with, same_as_general, split};

    /// The naive oracle: the same matcher with the window always stepped
    /// (never `lazy_end`) holds from the same place after every chunk and
    /// decides the same; and both decide as the general loop. Returns
    /// whether the window was held in some configuration.
    fn same_as_stepped(rules: &[&str], input: &[u8], cuts: &[usize]) -> bool {
        let chunks = split(input, cuts);
        let mut held_once = false;
        for config in configs() {
            let held = run_with(rules, &config, &chunks, true);
            let stepped = run_with(rules, &config, &chunks, false);
            let text = String::from_utf8_lossy(input);
            assert_eq!(
                held.decided, stepped.decided,
                "{rules:?} on {text:?} cut {cuts:?} ({config:?})"
            );
            assert_eq!(
                held.live, stepped.live,
                "{rules:?} on {text:?} cut {cuts:?} ({config:?})"
            );
            held_once |= held.entered[path::WINDOW] > 0;
        }
        same_as_general(rules, input, cuts);
        held_once
    }

    /// Base64 under an email rule with a 64-byte local part: the end of
    /// each chunk is held idle, from where the local part could begin.
    #[test]
    fn base64_chunks_end_with_the_window_held() {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut text: Vec<u8> = (0..700).map(|i| ALPHABET[(i * 37 + i / 5) % 64]).collect();
        text.extend_from_slice(b" then bob.smith@example.com and more");
        let cuts: Vec<usize> = (1..18).map(|i| i * 41).collect();
        let email = r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]+\.[A-Za-z]{2,}";
        assert!(same_as_stepped(&[email], &text, &cuts));
    }

    /// A window whose thread dies at its last byte, or whose text could
    /// begin no head at all, is stepped (or skipped) as before.
    #[test]
    fn a_window_that_cannot_be_held_is_stepped() {
        let rules = [r"[a-c]{1,6}@[a-c]+"];
        // `x` at the end kills every thread of the window.
        same_as_stepped(&rules, b"abcabcabcx", &[10]);
        same_as_stepped(&rules, b"abcabc abc", &[7, 10]);
        same_as_stepped(&rules, b"abcab@abc", &[4, 5, 6]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(CASES))]
        #[test]
        fn the_held_window_holds_as_the_stepped_one(
            input in "[a-c@./x é]{0,80}",
            cuts in prop::collection::vec(0usize..100, 0..8),
            set in 0usize..5,
        ) {
            let rules: &[&[&str]] = &[
                &[r"[a-c.]{1,6}@[a-c]+\.[a-c]{2}"],
                &[r"[a-c]{1,4}\.?@x", r"[a-c]{2,5}/@"],
                &[r"\b[a-c]{1,5}@[a-c]", r"x{0,3}[a-c]{1,3}@"],
                &[r"(?:ab|b){1,3}@[a-c]", r"\w{1,3}\.@"],
                &[r"[^@ ]{1,5}@\w", r"(?m)^[a-c]{1,2}@"],
            ];
            same_as_stepped(rules[set], input.as_bytes(), &cuts);
        }
    }
}
