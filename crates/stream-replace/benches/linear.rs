//! Linearity and per-stream costs.
//!
//! `unclosed_think/N`: an unclosed `<think>` of N MB (1, 4 and 16) fed
//! 4 bytes at a time, then flushed. Everything after `<think>` stays held
//! until the flush, so a stream that re-scanned its held region on each
//! feed would be quadratic here; total time should grow about 4x per 4x of
//! input.
//!
//! `replacer/*`: making a fresh stream for the PII rules, and resetting one.

use std::hint::black_box;

use criterion::{
    criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, SamplingMode, Throughput,
};
use stream_replace::Config;

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

fn linear(c: &mut Criterion) {
    let rules = corpus::build(THINK_RULES, Config::new().max_held(64 * MB));
    let mut g = c.benchmark_group("unclosed_think");
    g.sampling_mode(SamplingMode::Flat);
    for mb in [1, 4, 16] {
        let text = unclosed_think(mb * MB);
        let chunks = corpus::chunks(&text, 4);
        let want = rules.replace_all(&text);
        let mut r = rules.replacer();
        let mut out = String::new();
        let mut all = String::new();
        let mut max_held = 0;
        for chunk in &chunks {
            r.feed_into(chunk, &mut out).expect("under the held limit");
            max_held = max_held.max(r.held());
            all.push_str(&out);
            out.clear();
        }
        r.flush_into(&mut out).expect("stream ok");
        all.push_str(&out);
        assert!(
            all == want,
            "unclosed think of {mb} MB: stream differs from replace_all"
        );
        assert!(
            max_held >= mb * MB,
            "the think block should be held to the end"
        );

        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_with_input(
            BenchmarkId::from_parameter(format!("{mb}MB")),
            &chunks,
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
    targets = linear, replacer
}
criterion_main!(benches);
