//! Linearity and per-stream costs.
//!
//! `unclosed_think/N`: an unclosed `<think>` of N MB (1, 4 and 16) fed
//! 4 bytes at a time, then flushed. Everything after `<think>` stays held
//! until the flush, so a stream that re-scanned its held region on each
//! feed would be quadratic here; total time should grow about 4x per 4x of
//! input.
//!
//! `replayed_lines/N`: N MB of 64 KiB lines of `<x<x<x…` under
//! `<[^\n]*END` and `x[^\n]*@`, fed 4096 bytes at a time. Each line keeps
//! two long-lived threads that die at its end without a match, so the
//! engine steps the earliest alone and replays the line; a replay that
//! could itself be replayed would be quadratic in the line length.
//!
//! `replacer/*`: making a fresh stream for the PII rules, and resetting one.

use std::hint::black_box;

use criterion::measurement::WallTime;
use criterion::{
    BatchSize, BenchmarkGroup, BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group,
    criterion_main,
};
use stream_replace::{Config, Replacer};

mod corpus;

const MB: usize = 1024 * 1024;

/// Rules for the unclosed think block: the block itself plus two rules that
/// match inside it, so the flush has work to do.
const THINK_RULES: &[corpus::Rule] = &[
    corpus::PII_UNICODE_B[0],
    corpus::PII_UNICODE_B[1],
    corpus::PII_UNICODE_B[2],
];

/// `<think>` followed by `body_len` bytes of corpus text with no other
/// think tags.
fn unclosed_think(body_len: usize) -> String {
    let body = corpus::corpus(body_len)
        .replace("<think>", "<thonk>")
        .replace("</think>", "</thonk>");
    let mut text = String::with_capacity(body.len() + 32);
    text.push_str("Answer: <think>");
    text.push_str(&body);
    text
}

/// Streams `chunks` through `r` and flushes; returns the output and the most
/// bytes held after a feed.
fn stream_all(r: &mut Replacer, chunks: &[&str]) -> (String, usize) {
    let mut out = String::new();
    let mut max_held = 0;
    for chunk in chunks {
        r.feed_into(chunk, &mut out).expect("under the held limit");
        max_held = max_held.max(r.held());
    }
    r.flush_into(&mut out).expect("stream ok");
    (out, max_held)
}

/// Benchmarks `{mb}MB` of `g`: `chunks` fed through `r`, then a flush.
fn bench_stream(
    g: &mut BenchmarkGroup<'_, WallTime>,
    mb: usize,
    r: &mut Replacer,
    chunks: &[&str],
) {
    let mut out = String::new();
    g.bench_with_input(
        BenchmarkId::from_parameter(format!("{mb}MB")),
        chunks,
        |b, chunks| {
            b.iter(|| {
                let mut sent = 0;
                for chunk in black_box(chunks) {
                    r.feed_into(chunk, &mut out).expect("under the held limit");
                    sent += out.len();
                    out.clear();
                }
                r.flush_into(&mut out).expect("stream ok");
                sent += out.len();
                out.clear();
                sent
            })
        },
    );
}

fn linear(c: &mut Criterion) {
    let rules = corpus::build(THINK_RULES, Config::new().max_held(64 * MB));
    let mut g = c.benchmark_group("unclosed_think");
    g.sampling_mode(SamplingMode::Flat);
    for mb in [1, 4, 16] {
        let text = unclosed_think(mb * MB);
        let chunks = corpus::chunks(&text, 4);
        let want = rules.replace_all(&text);
        let mut r = rules.replacer();
        let (all, max_held) = stream_all(&mut r, &chunks);
        assert!(
            all == want,
            "unclosed think of {mb} MB: stream differs from replace_all"
        );
        assert!(
            max_held >= mb * MB,
            "the think block should be held to the end"
        );

        g.throughput(Throughput::Bytes(text.len() as u64));
        bench_stream(&mut g, mb, &mut r, &chunks);
    }
    g.finish();
}

fn replayed_lines(c: &mut Criterion) {
    let rules = corpus::build(
        &[
            corpus::Rule {
                pattern: r"<[^\n]*END",
                literal: false,
                replacement: "[A]",
                validator: None,
            },
            corpus::Rule {
                pattern: r"x[^\n]*@",
                literal: false,
                replacement: "[B]",
                validator: None,
            },
        ],
        Config::new(),
    );
    let line = format!("{}\n", "<x".repeat(32 * 1024 - 1));
    let mut g = c.benchmark_group("replayed_lines");
    g.sampling_mode(SamplingMode::Flat);
    for mb in [1, 4, 16] {
        let text = line.repeat(mb * MB / line.len());
        let chunks = corpus::chunks(&text, 4096);
        let mut r = rules.replacer();
        let (all, _) = stream_all(&mut r, &chunks);
        assert!(
            all == text,
            "replayed lines of {mb} MB: nothing matches, so the output is the input"
        );
        g.throughput(Throughput::Bytes(text.len() as u64));
        bench_stream(&mut g, mb, &mut r, &chunks);
    }
    g.finish();
}

fn replacer(c: &mut Criterion) {
    let mut g = c.benchmark_group("replacer");
    g.sample_size(50);
    for (name, rules) in corpus::rule_sets() {
        let rules = corpus::build(&rules, Config::new());
        g.bench_function(BenchmarkId::new("new", name), |b| {
            b.iter(|| rules.replacer())
        });
        let mut idle = rules.replacer();
        g.bench_function(BenchmarkId::new("reset_idle", name), |b| {
            b.iter(|| idle.reset())
        });
        g.bench_function(BenchmarkId::new("reset_holding", name), |b| {
            b.iter_batched_ref(
                || {
                    let mut r = rules.replacer();
                    r.feed("mail ann@example.org <think>draft")
                        .expect("under the held limit");
                    r
                },
                |r| r.reset(),
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = corpus::criterion_config();
    targets = linear, replayed_lines, replacer
}
criterion_main!(benches);
