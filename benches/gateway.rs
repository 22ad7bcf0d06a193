//! The gateway workload: 10,000 replies of about 2 KB, a fresh
//! `replacer()` per reply, fed in token-sized chunks (1 to 12 bytes, mean
//! 4.1, cut at character boundaries). See `workload/mod.rs` for the data.
//!
//! Rule sets: the PII set with default (Unicode) classes (`pii_unicode`)
//! and with ASCII `\b` (`pii_ascii`), and deny lists of 20, 1,000 and
//! 100,000 literal terms (`deny_N`: words, CJK, emoji; no term a substring
//! of another). Rows of group `gateway`, each over all replies:
//!
//! - `fresh/SET`: a fresh `rules.replacer()` per reply, as a gateway does;
//! - `reused/SET`: one replacer for every reply (a flush ends each reply),
//!   the best case of a warm stream;
//! - `aho_corasick_stream/deny_N`: the `aho-corasick` crate's
//!   `try_stream_replace_all` over a reader that returns the same chunks
//!   (its streaming API supports standard match semantics only, which equal
//!   leftmost-first here since no term is a substring of another);
//! - `aho_corasick_whole/deny_N`: whole-input leftmost-first
//!   `AhoCorasick::find_iter` on each reply;
//! - `meta_whole/SET`: whole-input `meta::Regex::new_many` + `find_iter`
//!   on each reply, for sets of up to 10,000 rules (with 100,000 terms,
//!   building the meta regex's PikeVM cache aborts the process).
//!
//! - `step_only/deny_N`: not a filter but a floor for one: each chunk
//!   stepped byte by byte through `aho-corasick`'s leftmost-first DFA of
//!   the list and copied out whole, no match handled (a match or the dead
//!   state goes back to the start state), the check per byte the stream's
//!   own loop makes. A stream that steps an automaton over every byte does
//!   at least this much.
//!
//! Deny lists of more than 10,000 terms, whose automaton is the contiguous
//! NFA (with a front table of DFA rows for its shallowest states) at the
//! default `Config::literal_dfa_size_limit`, also get the rows
//! with a DFA on both sides, for a like-for-like comparison:
//!
//! - `fresh_dfa/deny_N`: as `fresh`, with the literal DFA allowed up to
//!   1 GiB;
//! - `aho_corasick_stream_dfa/deny_N`: as `aho_corasick_stream`, with
//!   `aho-corasick`'s DFA.
//!
//! Every stream's output is checked against the whole-input baseline once,
//! before timing. Build times of each rule set are printed.
//!
//! Knobs: `STREAM_REPLACE_GATEWAY_REPLIES` (default 10,000),
//! `STREAM_REPLACE_GATEWAY_SETS` (comma-separated set names to run, default
//! all), and criterion's own options.

use std::hint::black_box;

use std::time::Instant;

use aho_corasick::automaton::Automaton;
use aho_corasick::{AhoCorasick, AhoCorasickKind, Anchored, MatchKind};
use criterion::{
    BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use stream_replace::{Config, Rules};

mod corpus;
mod workload;

use corpus::Rule;

/// The most rules the `meta_whole` rows run with; bigger literal sets get
/// the `*_dfa` rows.
const META_MAX: usize = 10_000;

/// `Config::literal_dfa_size_limit` of the `fresh_dfa` rows.
const BIG_DFA_LIMIT: usize = 1 << 30;

/// The selected sets from `STREAM_REPLACE_GATEWAY_SETS`, all when unset.
fn selected(name: &str) -> bool {
    match std::env::var("STREAM_REPLACE_GATEWAY_SETS") {
        Ok(v) if !v.trim().is_empty() => v.split(',').any(|s| s.trim() == name),
        _ => true,
    }
}

/// Streams every reply through a fresh replacer, returning the bytes sent.
fn fresh(rules: &Rules, tokens: &[Vec<&str>], out: &mut String) -> usize {
    let mut sent = 0;
    for reply in tokens {
        let mut r = rules.replacer();
        sent += corpus::stream_chunks(&mut r, reply, out);
    }
    sent
}

/// Streams every reply through one reused replacer.
fn reused(r: &mut stream_replace::Replacer, tokens: &[Vec<&str>], out: &mut String) -> usize {
    tokens
        .iter()
        .map(|reply| corpus::stream_chunks(r, reply, out))
        .sum()
}

/// Streams every reply through aho-corasick's stream replacer.
fn aho_stream(ac: &AhoCorasick, tokens: &[Vec<&str>], out: &mut Vec<u8>) -> usize {
    let with = vec![workload::DENY_MASK; ac.patterns_len()];
    let mut sent = 0;
    for reply in tokens {
        out.clear();
        let reader = corpus::ChunkReader::new(reply);
        ac.try_stream_replace_all(reader, &mut *out, &with)
            .expect("in-memory streams do not fail");
        sent += out.len();
    }
    sent
}

/// The `step_only` floor: every chunk stepped through `dfa` and copied out.
fn step_only(dfa: &aho_corasick::dfa::DFA, tokens: &[Vec<&str>], out: &mut String) -> usize {
    let start = dfa
        .start_state(Anchored::No)
        .expect("built with unanchored starts");
    let mut sent = 0;
    for reply in tokens {
        let mut sid = start;
        for chunk in reply {
            for &b in chunk.as_bytes() {
                sid = dfa.next_state(Anchored::No, sid, b);
                if dfa.is_match(sid) || dfa.is_dead(sid) {
                    sid = start;
                }
            }
            out.push_str(chunk);
            sent += out.len();
            out.clear();
        }
        black_box(sid);
    }
    sent
}

/// Whole-input replacement of every reply with the meta baseline.
fn meta_whole(baseline: &corpus::Baseline, replies: &[String], out: &mut String) -> usize {
    let mut sent = 0;
    for reply in replies {
        out.clear();
        baseline.replace_into(reply, out);
        sent += out.len();
    }
    sent
}

/// Whole-input leftmost-first replacement of `reply` with aho-corasick.
fn ac_whole_into(ac: &AhoCorasick, reply: &str, out: &mut String) {
    let mut last = 0;
    for m in ac.find_iter(reply) {
        out.push_str(&reply[last..m.start()]);
        out.push_str(workload::DENY_MASK);
        last = m.end();
    }
    out.push_str(&reply[last..]);
}

/// Whole-input replacement of every reply with aho-corasick.
fn aho_whole(ac: &AhoCorasick, replies: &[String], out: &mut String) -> usize {
    let mut sent = 0;
    for reply in replies {
        out.clear();
        ac_whole_into(ac, reply, out);
        sent += out.len();
    }
    sent
}

fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let v = f();
    eprintln!("{what}: {:.3} s", t.elapsed().as_secs_f64());
    v
}

fn gateway(c: &mut Criterion) {
    let replies = workload::replies(workload::replies_from_env());
    let tokens = workload::tokenize(&replies);
    let total: usize = replies.iter().map(String::len).sum();
    let chunks: usize = tokens.iter().map(Vec::len).sum();
    eprintln!(
        "{} replies, {} bytes, {} chunks (mean {:.2} bytes)",
        replies.len(),
        total,
        chunks,
        total as f64 / chunks as f64
    );

    let mut sets: Vec<(String, Vec<Rule>)> = workload::pii_sets()
        .into_iter()
        .map(|(n, r)| (n.to_string(), r))
        .collect();
    for n in workload::DENY_SIZES {
        sets.push((format!("deny_{n}"), workload::deny_rules(n)));
    }

    let mut group = c.benchmark_group("gateway");
    group
        .throughput(Throughput::Bytes(total as u64))
        .sampling_mode(SamplingMode::Flat);
    let mut out = String::with_capacity(4096);
    for (name, rules) in sets.iter().filter(|(n, _)| selected(n)) {
        let compiled = timed(&format!("{name}: build {} rules", rules.len()), || {
            corpus::try_build(rules, Config::new())
        });
        let compiled = match compiled {
            Ok(c) => Some(c),
            Err(e) => {
                eprintln!("{name}: the rules do not build, no stream rows: {e}");
                None
            }
        };
        // meta's PikeVM cache for 100,000 patterns aborts the process on
        // allocation: no meta row above `META_MAX` rules.
        let baseline = (rules.len() <= META_MAX).then(|| {
            timed(&format!("{name}: meta::Regex::new_many"), || {
                corpus::Baseline::new(rules)
            })
        });
        let literal = rules.iter().all(|r| r.literal);
        let ac_whole = literal.then(|| {
            timed(
                &format!("{name}: aho-corasick leftmost-first build"),
                || {
                    AhoCorasick::builder()
                        .match_kind(MatchKind::LeftmostFirst)
                        .build(rules.iter().map(|r| r.pattern))
                        .expect("aho-corasick builds")
                },
            )
        });
        let ac = literal.then(|| {
            timed(&format!("{name}: aho-corasick build"), || {
                AhoCorasick::builder()
                    .match_kind(MatchKind::Standard)
                    .build(rules.iter().map(|r| r.pattern))
                    .expect("aho-corasick builds")
            })
        });
        let big = literal && rules.len() > META_MAX;
        let compiled_dfa = big.then(|| {
            timed(&format!("{name}: build with the literal DFA"), || {
                corpus::try_build(rules, Config::new().literal_dfa_size_limit(BIG_DFA_LIMIT))
                    .expect("the deny list builds")
            })
        });
        let ac_dfa = big.then(|| {
            timed(&format!("{name}: aho-corasick DFA build"), || {
                AhoCorasick::builder()
                    .match_kind(MatchKind::Standard)
                    .kind(Some(AhoCorasickKind::DFA))
                    .build(rules.iter().map(|r| r.pattern))
                    .expect("aho-corasick builds")
            })
        });
        let floor_dfa = literal.then(|| {
            timed(
                &format!("{name}: aho-corasick leftmost-first DFA build"),
                || {
                    aho_corasick::dfa::DFA::builder()
                        .match_kind(MatchKind::LeftmostFirst)
                        .build(rules.iter().map(|r| r.pattern))
                        .expect("aho-corasick builds")
                },
            )
        });
        for (what, ac) in [("automatic", &ac), ("DFA", &ac_dfa)] {
            if let Some(ac) = ac {
                eprintln!(
                    "{name}: aho-corasick ({what}): {:?}, {} bytes",
                    ac.kind(),
                    ac.memory_usage()
                );
            }
        }

        // Exactness first: every reply, streamed fresh, equals the baseline.
        let mut matches = 0;
        for (reply, toks) in replies.iter().zip(&tokens) {
            let mut want = String::new();
            match (&baseline, &ac_whole) {
                (Some(baseline), _) => {
                    baseline.replace_into(reply, &mut want);
                    matches += baseline.count(reply);
                }
                (None, Some(ac)) => {
                    ac_whole_into(ac, reply, &mut want);
                    matches += ac.find_iter(reply).count();
                }
                (None, None) => unreachable!("every set has a whole-input baseline"),
            }
            for compiled in [&compiled, &compiled_dfa].into_iter().flatten() {
                let got = corpus::collect(&mut compiled.replacer(), toks);
                assert_eq!(
                    got, want,
                    "{name}: a fresh stream differs from the baseline"
                );
            }
            for ac in [&ac, &ac_dfa].into_iter().flatten() {
                let mut bytes = Vec::new();
                let with = vec![workload::DENY_MASK; ac.patterns_len()];
                ac.try_stream_replace_all(corpus::ChunkReader::new(toks), &mut bytes, &with)
                    .expect("in memory");
                assert_eq!(bytes, want.as_bytes(), "{name}: aho-corasick differs");
            }
        }
        eprintln!("{name}: {matches} matches");

        if let Some(compiled) = &compiled {
            group.bench_function(BenchmarkId::new("fresh", name), |b| {
                b.iter(|| black_box(fresh(compiled, &tokens, &mut out)))
            });
            let mut r = compiled.replacer();
            group.bench_function(BenchmarkId::new("reused", name), |b| {
                b.iter(|| black_box(reused(&mut r, &tokens, &mut out)))
            });
        }
        if let Some(compiled) = &compiled_dfa {
            group.bench_function(BenchmarkId::new("fresh_dfa", name), |b| {
                b.iter(|| black_box(fresh(compiled, &tokens, &mut out)))
            });
        }
        for (row, ac) in [
            ("aho_corasick_stream", &ac),
            ("aho_corasick_stream_dfa", &ac_dfa),
        ] {
            if let Some(ac) = ac {
                let mut bytes = Vec::with_capacity(4096);
                group.bench_function(BenchmarkId::new(row, name), |b| {
                    b.iter(|| black_box(aho_stream(ac, &tokens, &mut bytes)))
                });
            }
        }
        if let Some(dfa) = &floor_dfa {
            group.bench_function(BenchmarkId::new("step_only", name), |b| {
                b.iter(|| black_box(step_only(dfa, &tokens, &mut out)))
            });
        }
        if let Some(ac) = &ac_whole {
            group.bench_function(BenchmarkId::new("aho_corasick_whole", name), |b| {
                b.iter(|| black_box(aho_whole(ac, &replies, &mut out)))
            });
        }
        if let Some(baseline) = &baseline {
            group.bench_function(BenchmarkId::new("meta_whole", name), |b| {
                b.iter(|| black_box(meta_whole(baseline, &replies, &mut out)))
            });
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = corpus::criterion_config();
    targets = gateway
}
criterion_main!(benches);
