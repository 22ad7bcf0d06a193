//! Deny lists: streams over 20, 1,000 and 100,000 literal terms.
//!
//! The terms are words, CJK words and emoji triples, none a substring of
//! another; the text is the LLM-like corpus with a term after every 20 to
//! 40 words. For each list (group `deny_N`):
//!
//! - `stream_chunk/4` and `stream_chunk/4096`: a stream fed `&str` chunks of
//!   that many bytes (cut at character boundaries);
//! - `aho_corasick_stream/4` and `/4096`: `aho-corasick`'s own
//!   `try_stream_replace_all` over a reader that returns the same chunks,
//!   one per `read` (its streaming needs the standard match kind, which
//!   agrees with leftmost-first on such a list);
//! - `baseline_meta_whole`: `meta::Regex::new_many` over the escaped terms
//!   and `find_iter` on the whole input, for 20 terms. With 1,000 terms it
//!   is too slow to sample on this text (its lazy DFA thrashes): one run
//!   over the first 256 KiB is timed and printed instead. With 10,000 terms
//!   its memory grows past 20 GB: not run.
//!
//! Group `deny_build`: `Rules` of 10,000 and 100,000 terms built with the
//! default configuration. Group `replacer`: the cost of a fresh stream
//! (`rules.replacer()`, dropped) for 20 and 100,000 terms.
//!
//! Knobs: `STREAM_REPLACE_BENCH_MB` (corpus size, default 4) and
//! criterion's own `--warm-up-time`, `--measurement-time`.

use std::collections::HashSet;
use std::hint::black_box;

use aho_corasick::AhoCorasick;
use criterion::{
    BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use regex_automata::meta;
use stream_replace::{Config, Rules};

mod corpus;

/// The list sizes.
const SIZES: [usize; 3] = [20, 1_000, 100_000];

/// The largest list `meta` is sampled on, and the largest it is run on
/// once (see the module docs).
const META_MAX: usize = 20;
const META_ONCE_MAX: usize = 1_000;

/// The chunk sizes: a token, and a socket read.
const CHUNKS: [usize; 2] = [4, 4096];

const SYLLABLES: &[&str] = &[
    "ka", "ri", "mo", "tes", "lun", "vor", "pe", "zan", "dul", "qi", "bex", "ho", "ny", "sar",
    "tu", "fim", "gor", "wel", "jo", "cra",
];

/// `n` terms: about 70% words, 20% CJK words and 10% emoji triples, none
/// a substring of another, in a fixed order.
fn terms(n: usize) -> Vec<String> {
    let mut m = n + n / 2;
    loop {
        let kept = candidates(n, m);
        if kept.len() >= n {
            return kept.into_iter().take(n).collect();
        }
        m *= 2;
    }
}

/// `m` distinct terms, less those that hold another one.
fn candidates(n: usize, m: usize) -> Vec<String> {
    let mut rng = corpus::Rng::new(0xDE11_7157 + n as u64);
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(m);
    while out.len() < m {
        let t = match rng.below(10) {
            0..=6 => {
                let mut w = String::new();
                for _ in 0..rng.range(3, 5) {
                    w.push_str(rng.pick(SYLLABLES));
                }
                w
            }
            7 | 8 => (0..rng.range(3, 4))
                .map(|_| char::from_u32(0x4E00 + rng.below(0x5000) as u32).unwrap())
                .collect(),
            _ => (0..3)
                .map(|_| char::from_u32(0x1F300 + rng.below(0x200) as u32).unwrap())
                .collect(),
        };
        if seen.insert(t.clone()) {
            out.push(t);
        }
    }
    let ac = AhoCorasick::new(&out).expect("terms build");
    let keep: Vec<bool> = out
        .iter()
        .map(|t| ac.find_overlapping_iter(t).all(|m| m.len() == t.len()))
        .collect();
    out.into_iter()
        .zip(keep)
        .filter_map(|(t, k)| k.then_some(t))
        .collect()
}

/// The corpus with a term after every 20 to 40 words.
fn text(terms: &[String]) -> String {
    let base = corpus::corpus(corpus::size_from_env());
    let mut rng = corpus::Rng::new(0x7E47);
    let mut out = String::with_capacity(base.len() + base.len() / 20);
    let mut words = 0;
    let mut next = rng.range(20, 40);
    for piece in base.split_inclusive(' ') {
        out.push_str(piece);
        words += 1;
        if words == next {
            out.push_str(&terms[rng.below(terms.len())]);
            out.push(' ');
            words = 0;
            next = rng.range(20, 40);
        }
    }
    out
}

fn build(terms: &[String]) -> Rules {
    let mut b = Rules::builder();
    for t in terms {
        b.literal(t, "[X]");
    }
    b.config(Config::new()).build().expect("terms build")
}

fn ac_stream(ac: &AhoCorasick, chunks: &[&str], out: &mut Vec<u8>, with: &[&str]) -> usize {
    out.clear();
    let rdr = corpus::ChunkReader::new(chunks);
    ac.try_stream_replace_all(rdr, &mut *out, with)
        .expect("in-memory streams do not fail");
    out.len()
}

fn literals(c: &mut Criterion) {
    for n in SIZES {
        let terms = terms(n);
        let text = text(&terms);
        let rules = build(&terms);
        let mut r = rules.replacer();
        let want = rules.replace_all(&text);
        let ac = AhoCorasick::new(&terms).expect("terms build");
        let with = vec!["[X]"; terms.len()];
        let mut ac_out = Vec::with_capacity(text.len());
        let chunked: Vec<(usize, Vec<&str>)> = CHUNKS
            .iter()
            .map(|&k| (k, corpus::chunks(&text, k)))
            .collect();
        for (k, chunks) in &chunked {
            assert!(
                corpus::collect(&mut r, chunks) == want,
                "deny_{n}: {k}-byte chunks differ from replace_all"
            );
            ac_stream(&ac, chunks, &mut ac_out, &with);
            assert!(
                ac_out == want.as_bytes(),
                "deny_{n}: aho-corasick's stream differs from replace_all"
            );
        }
        let escaped: Vec<String> = terms.iter().map(|t| regex_syntax::escape(t)).collect();
        let meta = (terms.len() <= META_MAX)
            .then(|| meta::Regex::new_many(&escaped).expect("meta builds"));
        if terms.len() > META_MAX && terms.len() <= META_ONCE_MAX {
            let re = meta::Regex::new_many(&escaped).expect("meta builds");
            let mut end = 256 << 10;
            while !text.is_char_boundary(end) {
                end += 1;
            }
            let mut out = String::new();
            let t = std::time::Instant::now();
            meta_replace(&re, &text[..end], &mut out);
            let secs = t.elapsed().as_secs_f64();
            eprintln!(
                "deny_{n}: meta, one run over {end} bytes: {secs:.3} s, {:.3} MiB/s",
                end as f64 / secs / (1024.0 * 1024.0)
            );
        }
        let matches = want.matches("[X]").count();
        eprintln!(
            "deny_{n}: {} terms, {} matches, {}",
            terms.len(),
            matches,
            corpus::describe(&text)
        );

        let mut g = c.benchmark_group(format!("deny_{n}"));
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.sampling_mode(SamplingMode::Flat);
        let mut out = String::with_capacity(text.len() + 1024);
        if let Some(re) = &meta {
            let mut check = String::new();
            meta_replace(re, &text, &mut check);
            assert!(check == want, "deny_{n}: meta differs from replace_all");
            g.bench_function("baseline_meta_whole", |b| {
                b.iter(|| {
                    out.clear();
                    meta_replace(re, black_box(&text), &mut out);
                    out.len()
                })
            });
        }
        let mut stream_out = corpus::stream_out(text.len());
        for (k, chunks) in &chunked {
            g.bench_with_input(BenchmarkId::new("stream_chunk", k), chunks, |b, chunks| {
                b.iter(|| corpus::stream_chunks(&mut r, black_box(chunks), &mut stream_out))
            });
            g.bench_with_input(
                BenchmarkId::new("aho_corasick_stream", k),
                chunks,
                |b, chunks| b.iter(|| ac_stream(&ac, black_box(chunks), &mut ac_out, &with)),
            );
        }
        g.finish();
    }

    let mut g = c.benchmark_group("deny_build");
    g.sampling_mode(SamplingMode::Flat);
    for n in [10_000, 100_000] {
        let terms = terms(n);
        g.bench_with_input(BenchmarkId::from_parameter(n), &terms, |b, terms| {
            b.iter(|| build(black_box(terms)))
        });
    }
    g.finish();

    let mut g = c.benchmark_group("replacer");
    for n in [20, 100_000] {
        let rules = build(&terms(n));
        g.bench_with_input(BenchmarkId::from_parameter(n), &rules, |b, rules| {
            b.iter(|| black_box(rules.replacer()))
        });
    }
    g.finish();
}

/// Replaces every match of `re` in `text` by `[X]`, appending to `out`.
fn meta_replace(re: &meta::Regex, text: &str, out: &mut String) {
    let mut last = 0;
    for m in re.find_iter(text) {
        out.push_str(&text[last..m.start()]);
        out.push_str("[X]");
        last = m.end();
    }
    out.push_str(&text[last..]);
}

criterion_group! {
    name = benches;
    config = corpus::criterion_config();
    targets = literals
}
criterion_main!(benches);
