//! Cliffs: rule and text shapes an adversarial search found slow, each
//! against whole-input `meta` over the same rules.
//!
//! - `alt50_word64`: `(?:a|ab){1,50}c` and `\w{1,64}\b` on words of `a`s
//!   and `b`s, a `c` now and then;
//! - `word_b_dash_x`: `\b\w{3,8}\b-x` on Cyrillic, Greek and CJK words,
//!   a `-x` after some;
//! - `email_at`: the email rule with a 64-byte local part on text full of
//!   `@` (`a@b@c.d@...`);
//! - `x_ac_40_y`: `x[a-c]{3,40}y` on runs of `a` to `c` between `x`s, a
//!   `y` now and then.
//!
//! Per row: `baseline_meta_whole`, and streams fed 4-byte and 4096-byte
//! chunks. The stream's output is checked against the baseline first.
//!
//! `cliffs_build/SHAPE/{auto,lazy}`: `RulesBuilder::build` of one rule whose
//! dense DFA is small but slow to determinize, under the default
//! `DfaKind::Auto` and with `DfaKind::Lazy`:
//!
//! - `live_loops`: `[\s\S]*?{1000}<think>{1000}\p{L}`, a thousand lazy
//!   loops live in every DFA state (the dense build is given up early);
//! - `positions`: `(?U)[\s\S]*?[\s\S]*?.{1000}`, a thousand positions
//!   live in every DFA state (the dense build is given up early too).
//!
//! Knob: `STREAM_REPLACE_BENCH_CLIFFS_KB` (text size, default 64).

use std::hint::black_box;

use criterion::{
    BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use stream_replace::{Config, DfaKind, Rules};

mod corpus;

/// A text of about `len` bytes: pieces from `piece`, joined as they come.
fn text(len: usize, seed: u64, mut piece: impl FnMut(&mut corpus::Rng) -> String) -> String {
    let mut rng = corpus::Rng::new(seed);
    let mut out = String::with_capacity(len + 128);
    while out.len() < len {
        out.push_str(&piece(&mut rng));
    }
    out
}

/// `n` characters picked from `alphabet`.
fn run(rng: &mut corpus::Rng, alphabet: &[&str], n: usize) -> String {
    (0..n).map(|_| rng.pick(alphabet)).collect()
}

fn cliffs(c: &mut Criterion) {
    let kb = std::env::var("STREAM_REPLACE_BENCH_CLIFFS_KB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64usize);
    let len = kb << 10;
    let rows: Vec<(&str, Vec<&'static str>, String)> = vec![
        (
            "alt50_word64",
            vec![r"(?:a|ab){1,50}c", r"\w{1,64}\b"],
            text(len, 1, |rng| {
                let n = rng.range(1, 90);
                let mut w = run(rng, &["a", "b", "ab"], n);
                if rng.chance(20) {
                    w.push('c');
                }
                w.push(' ');
                w
            }),
        ),
        (
            "word_b_dash_x",
            vec![r"\b\w{3,8}\b-x"],
            text(len, 2, |rng| {
                let n = rng.range(1, 12);
                let mut w = run(rng, &["д", "ж", "ы", "λ", "ω", "中", "文", "é"], n);
                w.push_str(if rng.chance(10) { "-x " } else { " " });
                w
            }),
        ),
        (
            "email_at",
            vec![r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]+\.[A-Za-z]{2,}"],
            text(len, 3, |rng| {
                let n = rng.range(1, 6);
                let mut w = run(rng, &["a", "b", "7", ".", "_"], n);
                w.push('@');
                if rng.chance(2) {
                    w.push_str("c.de ");
                }
                w
            }),
        ),
        (
            "x_ac_40_y",
            vec![r"x[a-c]{3,40}y"],
            text(len, 4, |rng| {
                let n = rng.range(1, 60);
                let mut w = String::from("x");
                w.push_str(&run(rng, &["a", "b", "c"], n));
                if rng.chance(10) {
                    w.push('y');
                }
                w
            }),
        ),
    ];
    for (name, patterns, text) in &rows {
        let rules: Vec<corpus::Rule> = patterns
            .iter()
            .map(|&pattern| corpus::Rule {
                pattern,
                literal: false,
                replacement: "[X]",
                validator: None,
            })
            .collect();
        let baseline = corpus::Baseline::new(&rules);
        let compiled = corpus::build(&rules, Config::new());
        let mut want = String::new();
        baseline.replace_into(text, &mut want);
        let mut g = c.benchmark_group(format!("cliffs/{name}"));
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
        for size in [4, 4096] {
            let chunks = corpus::chunks(text, size);
            let mut r = compiled.replacer();
            let got = corpus::collect(&mut r, &chunks);
            assert!(
                got == want,
                "{name}, {size}-byte chunks: the stream differs"
            );
            g.bench_with_input(
                BenchmarkId::new("stream_chunk", size),
                &chunks,
                |b, chunks| b.iter(|| corpus::stream_chunks(&mut r, black_box(chunks), &mut out)),
            );
        }
        g.finish();
    }
}

/// Builds of single rules whose dense DFA is slow to determinize.
fn builds(c: &mut Criterion) {
    for (name, pattern) in [
        ("live_loops", r"[\s\S]*?{1000}<think>{1000}\p{L}"),
        ("positions", r"(?U)[\s\S]*?[\s\S]*?.{1000}"),
    ] {
        let mut g = c.benchmark_group(format!("cliffs_build/{name}"));
        g.sampling_mode(SamplingMode::Flat).sample_size(10);
        for (kind, dfa) in [("auto", DfaKind::Auto), ("lazy", DfaKind::Lazy)] {
            let build = || {
                Rules::builder()
                    .regex(black_box(pattern), "[X]")
                    .config(Config::new().dfa(dfa))
                    .build()
                    .expect("the rule builds")
            };
            eprintln!(
                "cliffs_build/{name}/{kind}: dense DFA {:?}",
                build().dense_dfa_size()
            );
            g.bench_function(kind, |b| b.iter(build));
        }
        g.finish();
    }
}

criterion_group! {
    name = benches;
    config = corpus::criterion_config();
    targets = cliffs, builds
}
criterion_main!(benches);
