//! Caseless deny lists with one letterless term: `N` `(?i)` word terms
//! plus `(?i)12`.
//!
//! A caseless literal without ASCII letters matches the same text with or
//! without `(?i)`, so it must not split the set between the literal
//! matcher and the regex threads. Groups:
//!
//! - `caseless_1624`: 1,624 `(?i)` terms and `(?i)12`: `build` (the
//!   `Rules`), `replace_all` on the whole text and `stream_chunk/4096`;
//!   the same without `(?i)12` as `build_lettered_only` for comparison.
//!   The text is the LLM-like corpus with a term (in a random case) after
//!   every 20 to 40 words, and `12` now and then.
//! - after the groups, one build of 20,000 terms and `(?i)12` is timed
//!   and printed; it is abandoned after 60 s (the process then goes on
//!   with a core busy). Then mixed sets, `n` `(?i)` words and `n + 1`
//!   case-sensitive ones, for `n` = 1,000, 2,000 and 4,000: the caseless
//!   words go to the regex engine, and the build time is printed.
//!
//! The `fold_builds` target then times one build of each shape whose
//! case folding leaves ASCII (`(?i)k` also matches the Kelvin sign,
//! `(?i)s` the long s), with words that all hold a `k` or an `s`:
//! `(?i)word\d` (not literals) and `(?i)word` (caseless literals the
//! literal matcher cannot take), 2,000 and 20,000 of each. All of them
//! stay on the regex engine, whose build is about quadratic in caseless
//! rules: past `Config::caseless_regex_limit` (2,000) the build fails at
//! once with `TooBig`. Each is abandoned after 60 s.
//!
//! The syllables `ka`, `tes` and `sar` make about half the words regexes
//! rather than literals: `(?i)k` and `(?i)s` also match the Kelvin sign
//! and the long s, so those words stay with the regex engine whatever the
//! letterless term does, and dominate the 20,000-term build.
//!
//! Knobs: `STREAM_REPLACE_BENCH_MB` (corpus size, default 4) and
//! criterion's own `--warm-up-time`, `--measurement-time`.

use std::collections::HashSet;
use std::hint::black_box;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use criterion::{
    BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use stream_replace::{Config, Rules};

mod corpus;

const SYLLABLES: &[&str] = &[
    "ka", "ri", "mo", "tes", "lun", "vor", "pe", "zan", "dul", "qi", "bex", "ho", "ny", "sar",
    "tu", "fim", "gor", "wel", "jo", "cra",
];

/// `n` distinct lowercase words of 3 to 5 syllables, in a fixed order.
fn words(n: usize) -> Vec<String> {
    let mut rng = corpus::Rng::new(0xCA5E_1E55 + n as u64);
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let mut w = String::new();
        for _ in 0..rng.range(3, 5) {
            w.push_str(rng.pick(SYLLABLES));
        }
        if seen.insert(w.clone()) {
            out.push(w);
        }
    }
    out
}

/// `n` distinct words as `words` makes them, each with a `k` or an `s`.
fn ks_words(n: usize) -> Vec<String> {
    let mut rng = corpus::Rng::new(0x4B_E1F1 + n as u64);
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let mut w = String::new();
        for _ in 0..rng.range(3, 5) {
            w.push_str(rng.pick(SYLLABLES));
        }
        if (w.contains('k') || w.contains('s')) && seen.insert(w.clone()) {
            out.push(w);
        }
    }
    out
}

/// The rules: each word as `(?i)word`, then `(?i)12` when `letterless`.
fn build(words: &[String], letterless: bool) -> Result<Rules, stream_replace::Error> {
    let mut b = Rules::builder();
    for w in words {
        b.regex(&format!("(?i){w}"), "[X]");
    }
    if letterless {
        b.regex("(?i)12", "[N]");
    }
    b.config(Config::new()).build()
}

/// The corpus with a word (in a random case) after every 20 to 40 words,
/// and `12` after one in ten of those.
fn text(words: &[String]) -> String {
    let base = corpus::corpus(corpus::size_from_env());
    let mut rng = corpus::Rng::new(0x7E47);
    let mut out = String::with_capacity(base.len() + base.len() / 20);
    let mut count = 0;
    let mut next = rng.range(20, 40);
    for piece in base.split_inclusive(' ') {
        out.push_str(piece);
        count += 1;
        if count == next {
            let w = &words[rng.below(words.len())];
            match rng.below(3) {
                0 => out.push_str(w),
                1 => out.push_str(&w.to_uppercase()),
                _ => out.extend(w.chars().enumerate().map(|(i, c)| {
                    if i % 2 == 0 {
                        c.to_ascii_uppercase()
                    } else {
                        c
                    }
                })),
            }
            out.push(' ');
            if rng.chance(10) {
                out.push_str("12 ");
            }
            count = 0;
            next = rng.range(20, 40);
        }
    }
    out
}

/// Times one build of `n` words and `(?i)12`, giving up after `limit`.
fn time_build(n: usize, limit: Duration) {
    let words = words(n);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let t = Instant::now();
        let r = build(&words, true).map(drop);
        let _ = tx.send((t.elapsed(), r));
    });
    match rx.recv_timeout(limit) {
        Ok((d, Ok(()))) => eprintln!("caseless_{n}: build {:.3} s", d.as_secs_f64()),
        Ok((d, Err(e))) => eprintln!(
            "caseless_{n}: build failed in {:.3} s: {e}",
            d.as_secs_f64()
        ),
        Err(_) => eprintln!("caseless_{n}: build not done after {} s", limit.as_secs()),
    }
}

fn caseless(c: &mut Criterion) {
    let n = 1_624;
    let words = words(n);
    let text = text(&words);
    let t = Instant::now();
    let rules = build(&words, true).expect("terms build");
    eprintln!("caseless_{n}: one build {:.3} s", t.elapsed().as_secs_f64());
    let want = rules.replace_all(&text);
    let chunks = corpus::chunks(&text, 4096);
    let mut r = rules.replacer();
    assert!(
        corpus::collect(&mut r, &chunks) == want,
        "caseless_{n}: 4096-byte chunks differ from replace_all"
    );
    eprintln!(
        "caseless_{n}: {} matches, {} numbers, {}",
        want.matches("[X]").count(),
        want.matches("[N]").count(),
        corpus::describe(&text)
    );

    let mut g = c.benchmark_group(format!("caseless_{n}"));
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(10);
    g.bench_function("build", |b| b.iter(|| build(black_box(&words), true)));
    g.bench_function("build_lettered_only", |b| {
        b.iter(|| build(black_box(&words), false))
    });
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("replace_all", |b| {
        b.iter(|| rules.replace_all(black_box(&text)).len())
    });
    let mut out = corpus::stream_out(text.len());
    g.bench_with_input(
        BenchmarkId::new("stream_chunk", 4096),
        &chunks,
        |b, chunks| b.iter(|| corpus::stream_chunks(&mut r, black_box(chunks), &mut out)),
    );
    g.finish();

    time_build(20_000, Duration::from_secs(60));
    for n in [1_000, 2_000, 4_000] {
        time_mixed(n);
    }
}

/// Times one build of `n` `(?i)` words and `n + 1` case-sensitive ones,
/// with the `n` caseless ones on the regex engine.
fn time_mixed(n: usize) {
    let all = words(2 * n + 1);
    let mut b = Rules::builder();
    for (i, w) in all.iter().enumerate() {
        if i < n {
            b.regex(&format!("(?i){w}"), "[X]");
        } else {
            b.literal(w, "[X]");
        }
    }
    let t = Instant::now();
    let r = b.config(Config::new()).build().map(drop);
    let d = t.elapsed().as_secs_f64();
    match r {
        Ok(()) => eprintln!("mixed_{n}: {n} caseless words on the regex engine: build {d:.3} s"),
        Err(e) => eprintln!("mixed_{n}: build failed in {d:.3} s: {e}"),
    }
}

/// Times one build of each shape whose folds leave ASCII (see the
/// module docs), giving up on each after 60 s.
fn fold_builds(_: &mut Criterion) {
    for n in [2_000, 20_000] {
        let words = ks_words(n);
        for (shape, suffix) in [("digit", r"\d"), ("literal", "")] {
            let patterns: Vec<String> = words.iter().map(|w| format!("(?i){w}{suffix}")).collect();
            let (tx, rx) = mpsc::channel();
            std::thread::spawn(move || {
                let mut b = Rules::builder();
                for p in &patterns {
                    b.regex(p, "[X]");
                }
                let t = Instant::now();
                let r = b.config(Config::new()).build().map(drop);
                let _ = tx.send((t.elapsed(), r));
            });
            let name = format!("fold_{shape}_{n}");
            match rx.recv_timeout(Duration::from_secs(60)) {
                Ok((d, Ok(()))) => eprintln!("{name}: build {:.3} s", d.as_secs_f64()),
                Ok((d, Err(e))) => {
                    eprintln!("{name}: build failed in {:.6} s: {e}", d.as_secs_f64())
                }
                Err(_) => eprintln!("{name}: build not done after 60 s"),
            }
        }
    }
}

criterion_group! {
    name = benches;
    config = corpus::criterion_config();
    targets = caseless, fold_builds
}
criterion_main!(benches);
