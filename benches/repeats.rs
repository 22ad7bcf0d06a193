//! Bounded repetition: rules whose candidate matches start at almost every
//! byte and live for up to the repetition's bound, which a thread-per-start
//! stream pays for per byte.
//!
//! Two patterns, an email-like rule with a 64-byte bounded local part and
//! `[a-z]{0,200}x`, over two texts: base64 (what a model emits for an image
//! or a file) and the LLM-like prose corpus of the throughput bench. For
//! each, the whole-input `meta` baseline and a stream fed 4096-byte chunks;
//! the target is a stream at 0.25x the baseline or better.
//!
//! Knob: `STREAM_REPLACE_BENCH_REPEATS_KB` (text size, default 256).

use std::hint::black_box;

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use stream_replace::Config;

mod corpus;

const PATTERNS: &[(&str, &str)] = &[
    (
        "email64",
        r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]+\.[A-Za-z]{2,}",
    ),
    ("az200x", r"[a-z]{0,200}x"),
];

fn repeats(c: &mut Criterion) {
    let kb = std::env::var("STREAM_REPLACE_BENCH_REPEATS_KB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256usize);
    let texts = [
        ("base64", corpus::base64(kb << 10)),
        ("prose", corpus::corpus(kb << 10)),
    ];
    for (pname, pattern) in PATTERNS {
        let rules = [corpus::Rule {
            pattern,
            literal: false,
            replacement: "[X]",
            validator: None,
        }];
        let baseline = corpus::Baseline::new(&rules);
        let compiled = corpus::build(&rules, Config::new());
        for (tname, text) in &texts {
            let chunks = corpus::chunks(text, 4096);
            let mut want = String::new();
            baseline.replace_into(text, &mut want);
            let mut r = compiled.replacer();
            let got = corpus::collect(&mut r, &chunks);
            assert!(got == want, "{pname} on {tname}: the stream differs");

            let mut g = c.benchmark_group(format!("repeats/{pname}/{tname}"));
            g.throughput(Throughput::Bytes(text.len() as u64));
            g.sampling_mode(SamplingMode::Flat);
            let mut out = String::with_capacity(text.len() + 1024);
            g.bench_function("baseline_meta_whole", |b| {
                b.iter(|| {
                    out.clear();
                    baseline.replace_into(black_box(text), &mut out);
                    out.len()
                })
            });
            let mut out = corpus::stream_out(text.len());
            g.bench_function("stream_chunk/4096", |b| {
                b.iter(|| corpus::stream_chunks(&mut r, black_box(&chunks), &mut out))
            });
            g.finish();
        }
    }
}

criterion_group! {
    name = benches;
    config = corpus::criterion_config();
    targets = repeats
}
criterion_main!(benches);
