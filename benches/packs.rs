//! The packs on the gateway workload: replies of about 2 KB, a fresh
//! `replacer()` per reply, fed in token-sized chunks (1 to 12 bytes, mean
//! 4.1; see `workload/mod.rs`), and the time to build each pack's rules.
//!
//! Rows, each pack with its blocks turned into masks (the corpus holds
//! valid SSNs, which would stop the stream):
//!
//! - `packs_build/SET`: `RulesBuilder::build` of the pack;
//! - `packs_stream/SET`: every reply streamed through a fresh replacer.
//!
//! Sets: `pii_before` (the `pii` pack without the two phone rules added
//! with the secrets pack: the pack as it was before them), `pii`,
//! `pii_secrets` (`pii().and(secrets())`, the default guardrail), and the
//! optional detectors on top: `pii_secrets_high_entropy`,
//! `pii_secrets_seed_phrases`.
//!
//! Every stream's output is checked against `replace_all` once, before
//! timing.
//!
//! Knobs: `STREAM_REPLACE_PACKS_REPLIES` (default 2,000),
//! `STREAM_REPLACE_PACKS_SETS` (comma-separated set names, default all),
//! `STREAM_REPLACE_PACKS_WITHOUT` (comma-separated rule ids left out of
//! every set, to find what a rule costs), `STREAM_REPLACE_PACKS_DFA`
//! (`auto`, `lazy` or `dense`: the `Config::dfa` of every set; unset, each
//! set is built with its own `Pack::config`),
//! `STREAM_REPLACE_PACKS_DENSE_LIMIT` (bytes: the `Config::dense_size_limit`
//! of every set), and criterion's own options.
//!
//! Run: `cargo bench -p stream-replace-benches --bench packs`.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use stream_replace::pack::{self, Pack};
use stream_replace::{Config, DfaKind, Rules};

mod corpus;
mod workload;

fn sets() -> Vec<(&'static str, Pack)> {
    let pii_secrets = || pack::pii().and(pack::secrets());
    vec![
        (
            "pii_before",
            pack::pii().without("phone_intl").without("phone_national"),
        ),
        ("pii", pack::pii()),
        ("pii_secrets", pii_secrets()),
        (
            "pii_secrets_high_entropy",
            pii_secrets().with(pack::high_entropy()),
        ),
        (
            "pii_secrets_seed_phrases",
            pii_secrets().and(pack::seed_phrases()),
        ),
    ]
}

fn selected(name: &str) -> bool {
    match std::env::var("STREAM_REPLACE_PACKS_SETS") {
        Ok(v) if !v.trim().is_empty() => v.split(',').any(|s| s.trim() == name),
        _ => true,
    }
}

/// The configuration of `pack`: its own [`Pack::config`], with the DFA
/// kind from `STREAM_REPLACE_PACKS_DFA` (`auto`, `lazy` or `dense`) and the
/// dense size limit from `STREAM_REPLACE_PACKS_DENSE_LIMIT` when set.
fn config(pack: &Pack) -> Config {
    let config = match std::env::var("STREAM_REPLACE_PACKS_DFA").as_deref() {
        Ok("auto") => pack.config().dfa(DfaKind::Auto),
        Ok("lazy") => pack.config().dfa(DfaKind::Lazy),
        Ok("dense") => pack.config().dfa(DfaKind::Dense),
        _ => pack.config(),
    };
    match std::env::var("STREAM_REPLACE_PACKS_DENSE_LIMIT")
        .ok()
        .and_then(|v| v.trim().parse().ok())
    {
        Some(bytes) => config.dense_size_limit(bytes),
        None => config,
    }
}

fn build(pack: &Pack, config: &Config) -> Rules {
    let mut builder = Rules::builder();
    pack.add_to(&mut builder);
    builder
        .config(config.clone())
        .build()
        .expect("the packs compile")
}

fn fresh(rules: &Rules, tokens: &[Vec<&str>], out: &mut String) -> usize {
    tokens
        .iter()
        .map(|reply| corpus::stream_chunks(&mut rules.replacer(), reply, out))
        .sum()
}

fn packs(c: &mut Criterion) {
    let count = std::env::var("STREAM_REPLACE_PACKS_REPLIES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(2_000);
    let replies = workload::replies(count);
    let tokens = workload::tokenize(&replies);
    let total: usize = replies.iter().map(String::len).sum();
    eprintln!("{} replies, {} bytes", replies.len(), total);

    let without = std::env::var("STREAM_REPLACE_PACKS_WITHOUT").unwrap_or_default();
    let sets: Vec<(&str, Pack)> = sets()
        .into_iter()
        .filter(|(n, _)| selected(n))
        .map(|(n, p)| {
            let p = without
                .split(',')
                .map(str::trim)
                .filter(|id| !id.is_empty())
                .fold(p, |p, id| p.without(id));
            (n, p.without_blocks())
        })
        .collect();

    let mut group = c.benchmark_group("packs_build");
    for (name, pack) in &sets {
        let config = config(pack);
        eprintln!(
            "{name}: {} rules, {:?} DFA, dense DFA {:?} bytes",
            pack.rules().len(),
            config.get_dfa(),
            build(pack, &config).dense_dfa_size()
        );
        group.bench_function(BenchmarkId::from_parameter(name), |b| {
            b.iter(|| black_box(build(pack, &config)))
        });
    }
    group.finish();

    let mut group = c.benchmark_group("packs_stream");
    group.throughput(Throughput::Bytes(total as u64));
    let mut out = String::with_capacity(4096);
    for (name, pack) in &sets {
        let rules = build(pack, &config(pack));
        let mut matches = 0;
        for (reply, toks) in replies.iter().zip(&tokens) {
            let want = rules.replace_all(reply);
            let got = corpus::collect(&mut rules.replacer(), toks);
            assert_eq!(got, want, "{name}: a stream differs from replace_all");
            matches += rules.evaluate(reply).triggers().len();
        }
        eprintln!("{name}: {matches} matches");
        group.bench_function(BenchmarkId::from_parameter(name), |b| {
            b.iter(|| black_box(fresh(&rules, &tokens, &mut out)))
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = corpus::criterion_config();
    targets = packs
}
criterion_main!(benches);
