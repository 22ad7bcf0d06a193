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
//! For the sets in `FLOOR_DFA_SETS`, `floor_dfa_chunk/N` runs
//! `corpus::DfaFloor` over the same chunks: one forward DFA stepped over
//! each chunk and the chunk copied out, with no starts, no hold-back and
//! no replacement. No exact stream can be cheaper per feed; it is the
//! floor the token-sized rows are measured against.
//!
//! Each stream hands its output to a reused `String` that is cleared after
//! every feed, as a proxy forwarding each piece would. The outputs are
//! checked against the baseline once, before timing.
//!
//! The `replies` groups (`replies_fresh_vs_reused/<rules>`) run the
//! gateway's shape on a small scale: 1,000 replies of about 2 KB of the
//! corpus, fed in token-sized pieces (1 to 12 bytes, cut at character
//! boundaries, the same every run) and flushed, either through one reused
//! stream (`reused`, `reset` by each flush) or through a fresh
//! `Rules::replacer()` per reply (`fresh`), with the default configuration
//! and with lazy DFA caches.
//!
//! Knobs: `STREAM_REPLACE_BENCH_MB` (corpus size, default 4),
//! `STREAM_REPLACE_BENCH_CHUNKS` (default `1,4,64,4096`), and criterion's
//! own `--sample-size`, `--warm-up-time`, `--measurement-time`.

use std::hint::black_box;

use criterion::{
    BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use stream_replace::{Config, DfaKind};

mod corpus;

/// The chunk sizes the `pii_pack` set runs at: a token stream and a
/// socket read. Its sixteen rules make each size cost more than the other
/// sets' do.
const PACK_CHUNKS: [usize; 2] = [4, 4096];

/// The sets that also run `floor_dfa_chunk/N`. The five rules only: a
/// dense DFA of the 8 PII rules (`pii_ascii_b`) took 280 s and 400 MB to
/// build on the bench machine (at low priority beside two busy processes).
const FLOOR_DFA_SETS: [&str; 1] = ["pii_five"];

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
        let mut out = corpus::stream_out(text.len());
        g.bench_function("stream_whole", |b| {
            b.iter(|| corpus::stream_chunks(&mut r, &[black_box(&text)], &mut out))
        });
        for (n, chunks) in &chunked {
            g.bench_with_input(BenchmarkId::new("stream_chunk", n), chunks, |b, chunks| {
                b.iter(|| corpus::stream_chunks(&mut r, black_box(chunks), &mut out))
            });
        }
        if FLOOR_DFA_SETS.contains(&name) {
            let floor = corpus::DfaFloor::new(&rules).expect("a dense DFA of the set builds");
            for (n, chunks) in &chunked {
                g.bench_with_input(
                    BenchmarkId::new("floor_dfa_chunk", n),
                    chunks,
                    |b, chunks| b.iter(|| floor.stream_chunks(black_box(chunks), &mut out)),
                );
            }
        }
        g.finish();
    }
}

/// About 2 KB of the corpus per reply.
const REPLY: usize = 2 << 10;

/// Replies per run.
const REPLIES: usize = 1_000;

/// Token-sized pieces of `text`: 1 to 12 bytes (mean about 6), each moved
/// forward to the next character boundary.
fn tokens<'a>(text: &'a str, rng: &mut corpus::Rng) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let mut end = (at + rng.range(1, 12)).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[at..end]);
        at = end;
    }
    out
}

/// Feeds each reply's tokens and flushes, through `r` when given (one
/// reused stream) or a fresh stream per reply; returns the bytes emitted.
fn run_replies(
    rules: &stream_replace::Rules,
    mut reused: Option<&mut stream_replace::Replacer>,
    replies: &[Vec<&str>],
    out: &mut String,
) -> usize {
    let mut sent = 0;
    for reply in replies {
        let mut fresh;
        let r = match reused.as_deref_mut() {
            Some(r) => r,
            None => {
                fresh = rules.replacer();
                &mut fresh
            }
        };
        sent += corpus::stream_chunks(r, reply, out);
        r.flush_into(out).expect("under the held limit");
        sent += out.len();
        out.clear();
    }
    sent
}

fn replies(c: &mut Criterion) {
    let text = corpus::corpus(REPLY * REPLIES);
    let mut rng = corpus::Rng::new(9);
    let replies: Vec<Vec<&str>> = corpus::chunks(&text, REPLY)
        .into_iter()
        .map(|reply| tokens(reply, &mut rng))
        .collect();
    let sets = [
        (
            "pii_unicode_b",
            corpus::PII_UNICODE_B.to_vec(),
            DfaKind::Auto,
        ),
        ("pii_ascii_b", corpus::pii_ascii_b(), DfaKind::Auto),
        (
            "pii_unicode_b_lazy",
            corpus::PII_UNICODE_B.to_vec(),
            DfaKind::Lazy,
        ),
    ];
    for (name, rules, kind) in sets {
        let compiled = corpus::build(&rules, Config::new().dfa(kind));
        let mut out = String::with_capacity(4 * REPLY);
        let mut r = compiled.replacer();
        let want = run_replies(&compiled, Some(&mut r), &replies, &mut out);
        assert_eq!(run_replies(&compiled, None, &replies, &mut out), want);
        let mut g = c.benchmark_group(format!("replies_fresh_vs_reused/{name}"));
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.sampling_mode(SamplingMode::Flat);
        g.bench_function("reused", |b| {
            b.iter(|| run_replies(&compiled, Some(&mut r), black_box(&replies), &mut out))
        });
        g.bench_function("fresh", |b| {
            b.iter(|| run_replies(&compiled, None, black_box(&replies), &mut out))
        });
        g.finish();
    }
}

criterion_group! {
    name = benches;
    config = corpus::criterion_config();
    targets = throughput, replies
}
criterion_main!(benches);
