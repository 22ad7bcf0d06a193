//! Throughput of streams against the fastest whole-input replacement.
//!
//! For each rule set (see `corpus::rule_sets`): the baseline
//! (`baseline_meta_whole`: one `meta::Regex::new_many` over the rules,
//! `find_iter`, each match replaced by its rule's text), one feed of the
//! whole input (`stream_whole`), and feeds of `&str` chunks of 1, 4, 64 and
//! 4096 bytes (`stream_chunk/N`, cut at character boundaries). The
//! `pii_pack` set (`stream_replace::pack::pii()`, validators included) runs
//! at 4 and 4096 bytes only, of the sizes asked for.
//!
//! Each stream hands its output to a reused `String` that is cleared after
//! every feed, as a proxy forwarding each piece would. The outputs are
//! checked against the baseline once, before timing.
//!
//! Knobs: `STREAM_REPLACE_BENCH_MB` (corpus size, default 4),
//! `STREAM_REPLACE_BENCH_CHUNKS` (default `1,4,64,4096`), and criterion's
//! own `--sample-size`, `--warm-up-time`, `--measurement-time`.

use std::hint::black_box;

use criterion::{
    criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode, Throughput,
};
use stream_replace::Config;

mod corpus;

/// The chunk sizes the `pii_pack` set runs at: a token stream and a
/// socket read. Its sixteen rules make each size cost more than the other
/// sets' do.
const PACK_CHUNKS: [usize; 2] = [4, 4096];

/// Panics with the first difference when a stream disagrees with the baseline.
fn check(set: &str, how: &str, got: &str, want: &str) {
    if got == want {
        return;
    }
    let at = got
        .bytes()
        .zip(want.bytes())
        .position(|(a, b)| a != b)
        .unwrap_or(got.len().min(want.len()));
    let from = at.saturating_sub(40);
    panic!(
        "{set}: stream ({how}) differs from the baseline at byte {at}:\n got: {:?}\nwant: {:?}",
        String::from_utf8_lossy(&got.as_bytes()[from..(at + 40).min(got.len())]),
        String::from_utf8_lossy(&want.as_bytes()[from..(at + 40).min(want.len())]),
    );
}

fn throughput(c: &mut Criterion) {
    let text = corpus::corpus(corpus::size_from_env());
    let sizes = corpus::chunk_sizes_from_env();
    eprintln!("corpus: {}", corpus::describe(&text));

    for (name, rules) in corpus::rule_sets() {
        let baseline = corpus::Baseline::new(&rules);
        let compiled = corpus::build(&rules, Config::new());
        let mut want = String::with_capacity(text.len());
        baseline.replace_into(&text, &mut want);
        eprintln!(
            "{name}: {} matches, output {} bytes",
            baseline.count(&text),
            want.len()
        );

        let mut r = compiled.replacer();
        check(name, "one feed", &corpus::collect(&mut r, &[&text]), &want);
        let chunked: Vec<(usize, Vec<&str>)> = sizes
            .iter()
            .filter(|n| name != corpus::PII_PACK || PACK_CHUNKS.contains(n))
            .map(|&n| (n, corpus::chunks(&text, n)))
            .collect();
        for (n, chunks) in &chunked {
            check(
                name,
                &format!("{n}-byte chunks"),
                &corpus::collect(&mut r, chunks),
                &want,
            );
        }

        let mut g = c.benchmark_group(name);
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.sampling_mode(SamplingMode::Flat);
        let mut out = String::with_capacity(text.len() + 1024);

        g.bench_function("baseline_meta_whole", |b| {
            b.iter(|| {
                out.clear();
                baseline.replace_into(black_box(&text), &mut out);
                out.len()
            })
        });
        g.bench_function("stream_whole", |b| {
            b.iter(|| corpus::stream_chunks(&mut r, &[black_box(&text)], &mut out))
        });
        for (n, chunks) in &chunked {
            g.bench_with_input(BenchmarkId::new("stream_chunk", n), chunks, |b, chunks| {
                b.iter(|| corpus::stream_chunks(&mut r, black_box(chunks), &mut out))
            });
        }
        g.finish();
    }
}

criterion_group! {
    name = benches;
    config = corpus::criterion_config();
    targets = throughput
}
criterion_main!(benches);
