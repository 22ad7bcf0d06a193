//! The harness of the thread matcher's unit tests: a matcher driven over a
//! tape as the stream drives it (quick scan, then scan; on a decision,
//! restart at its end), with the fast paths on and, as the naive oracle,
//! off (`Config::fast_paths(false)`: every byte through the general loop
//! and the NFA fallback). Each fast path's file tests its own shapes
//! with it; the properties here cover every path at once.

use proptest::prelude::*;

use super::state::{ENTERED, path};
use super::{Program, Threads};
use crate::config::{Config, DfaKind};
use crate::engine::matcher::{Matcher, Scan};
use crate::engine::tape::Tape;

/// Cases per property: each case builds every configuration twice, so
/// the default would make these the slowest tests of the crate. The
/// integration suite's differential properties run many more.
pub(super) const CASES: u32 = 24;

/// What one run decided, and how often each path did work in it.
#[derive(Debug)]
pub(super) struct Run {
    /// The decided matches: rule and span, in order.
    pub(super) decided: Vec<(usize, std::ops::Range<usize>)>,
    /// Indexed by the constants of `path`.
    pub(super) entered: [usize; path::COUNT],
    /// After each chunk: the earliest position where a match could still
    /// start (what the stream would hold from).
    pub(super) live: Vec<usize>,
}

/// The DFA configurations the fast paths run on: dense, lazy, lazy with a
/// new scratch every call (a stream that migrates), lazy with a cache so
/// small that it is cleared under the streams.
pub(super) fn configs() -> [Config; 4] {
    [
        Config::new().dfa(DfaKind::Dense),
        Config::new().dfa(DfaKind::Lazy),
        Config::new().dfa(DfaKind::Lazy).scratch_per_call(true),
        Config::new().dfa(DfaKind::Lazy).cache_capacity(1),
    ]
}

/// Feeds `chunks` to a thread matcher over `rules`, then ends the input.
/// Each chunk is scanned as the stream scans the last bytes of a call
/// (`set_lazy_end`).
pub(super) fn run(rules: &[&str], config: &Config, chunks: &[&[u8]]) -> Run {
    run_with(rules, config, chunks, true)
}

/// `run`, with `lazy_end` saying whether each chunk is scanned as the
/// last bytes of a call (the stream's `advance`) or not (then the gate's
/// last window is always stepped).
pub(super) fn run_with(rules: &[&str], config: &Config, chunks: &[&[u8]], lazy_end: bool) -> Run {
    run_all(rules, config, chunks, lazy_end, false)
}

/// `run`, with each chunk first offered to the token path (see `token`)
/// when `token` is set and the program takes it, as the stream's small
/// feeds are: a chunk it applies goes on the tape unscanned by the rest.
pub(super) fn run_tokens(rules: &[&str], config: &Config, chunks: &[&[u8]], token: bool) -> Run {
    run_all(rules, config, chunks, true, token)
}

fn run_all(rules: &[&str], config: &Config, chunks: &[&[u8]], lazy_end: bool, token: bool) -> Run {
    let sources: Vec<String> = rules.iter().map(|r| r.to_string()).collect();
    let prog = Program::new(&sources, config).expect("the rules build");
    let token = token && prog.takes_tokens();
    let mut m = Threads::new(&prog);
    let mut tape = Tape::default();
    let mut decided = Vec::new();
    let mut live = Vec::new();
    ENTERED.with(|c| c.set([0; path::COUNT]));
    for chunk in chunks {
        if token {
            // As the stream does: the first try, then the second.
            let step = m
                .step_token::<false>(&prog, &tape, chunk)
                .or_else(|| m.step_token::<true>(&prog, &tape, chunk));
            if let Some(l) = step {
                tape.push(chunk);
                m.check_invariants(&tape);
                assert_eq!(l, m.earliest_live(&prog));
                live.push(l);
                continue;
            }
        }
        tape.push(chunk);
        m.set_lazy_end(lazy_end);
        drive(&mut m, &prog, &mut tape, false, &mut decided);
        m.set_lazy(false);
        live.push(m.earliest_live(&prog));
    }
    drive(&mut m, &prog, &mut tape, true, &mut decided);
    Run {
        decided,
        entered: ENTERED.with(|c| c.get()),
        live,
    }
}

fn drive(
    m: &mut Threads,
    prog: &Program,
    tape: &mut Tape,
    eof: bool,
    decided: &mut Vec<(usize, std::ops::Range<usize>)>,
) {
    if !eof && m.scan_quick(prog, tape) {
        m.check_invariants(tape);
        return;
    }
    loop {
        let scan = m.scan(prog, tape, eof);
        m.check_invariants(tape);
        match scan {
            Scan::Done => return,
            Scan::Decided(d) => {
                let (start, end) = (d.span.start, d.span.end);
                assert!(start <= end && end <= tape.offset(), "{d:?}");
                decided.push((d.rule, d.span));
                tape.set_last_end(Some(end));
                tape.release(start);
                tape.skip_to(end);
                m.restart(end);
            }
            Scan::Died(at) => panic!("no candidate is focused, yet one died at {at}"),
        }
    }
}

/// `input` cut at `cuts` (taken modulo its length, in any order).
pub(super) fn split<'a>(input: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut at: Vec<usize> = cuts.iter().map(|c| c % (input.len() + 1)).collect();
    at.push(0);
    at.push(input.len());
    at.sort_unstable();
    at.dedup();
    at.windows(2).map(|w| &input[w[0]..w[1]]).collect()
}

/// Runs `rules` on `input` cut at `cuts` in every configuration, with the
/// fast paths on and off, and checks that both decide the same matches.
/// Returns the runs with the fast paths on, for the callers that check
/// which path was taken.
pub(super) fn same_as_general(rules: &[&str], input: &[u8], cuts: &[usize]) -> Vec<Run> {
    let chunks = split(input, cuts);
    let mut fast = Vec::new();
    for config in configs() {
        let general = run(rules, &config.clone().fast_paths(false), &chunks);
        let on = run(rules, &config, &chunks);
        assert_eq!(
            on.decided,
            general.decided,
            "{rules:?} on {:?} cut {cuts:?} ({config:?})",
            String::from_utf8_lossy(input)
        );
        fast.push(on);
    }
    fast
}

/// Whether path `which` did work in some run of `runs`.
pub(super) fn took(runs: &[Run], which: usize) -> bool {
    runs.iter().any(|r| r.entered[which] > 0)
}

/// The general loop takes no fast path: the counters can tell.
#[test]
fn the_general_loop_takes_no_fast_path() {
    let chunks: [&[u8]; 2] = [b"mail bob@example.com and ", b"alice@example.org now"];
    for config in configs() {
        let r = run(
            &[r"\w+@\w+\.com"],
            &config.clone().fast_paths(false),
            &chunks,
        );
        assert_eq!(r.decided, vec![(0, 5..20)]);
        for which in [
            path::IDLE,
            path::QUICK,
            path::ONE_THREAD,
            path::MANY_THREADS,
            path::SUSPEND,
            path::PENDING,
            path::SETTLE,
            path::FORWARD,
            path::ESCAPE,
        ] {
            assert_eq!(r.entered[which], 0, "path {which} in {config:?}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]
    /// Every fast path together against the general loop, on rule sets
    /// that reach each of them: words under an email-like rule (one
    /// thread, idle scan), a bounded repetition (many threads), a long
    /// delimited span (suspend), a match that a longer alternative may
    /// extend (pending), fixed-width numbers (settle).
    #[test]
    fn fast_paths_decide_as_the_general_loop(
        input in "[a-c <>/@.0-9x-]{0,80}",
        cuts in prop::collection::vec(0usize..100, 0..6),
        set in 0usize..5,
    ) {
        let rules: &[&[&str]] = &[
            &[r"\w+@\w+\.[a-c]+"],
            &[r"[a-c]{0,6}x", r"\d{3}"],
            &[r"<a>[^<]*</a>", r"\w+@b"],
            &[r"x[a-c]*@|x"],
            &[r"\d{2}-\d{2}", r"b+c"],
        ];
        same_as_general(rules[set], input.as_bytes(), &cuts);
    }
}
