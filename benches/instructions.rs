//! Fixed workloads for instruction counts, where timings are too noisy.
//!
//! Each workload streams a fixed input through one rule set; the stream
//! part runs in `stream_workload`, so that a profiler can count only it:
//!
//! ```text
//! cargo bench -p stream-replace-benches --bench instructions --no-run
//! valgrind --tool=callgrind --toggle-collect='*stream_workload*' \
//!     --callgrind-out-file=/dev/null target/release/deps/instructions-<hash> deny_1000_tokens
//! ```
//!
//! Workloads (the first argument; all by default):
//!
//! - `deny_1000_tokens`: the gateway bench's 1,000-term deny list, 200
//!   replies fed in token-sized chunks through one reused stream;
//! - `pii_tokens`: the PII set (Unicode `\b`) over the same replies;
//! - `pii_4k`: the PII set over 1 MB of the corpus in 4 KiB chunks;
//! - `five_4k`, `five_4b`, `ascii_4k`, `ascii_4b`, `unicode_4k`,
//!   `unicode_4b`: the five hand-written PII rules (`corpus::PII_FIVE`),
//!   the PII set with ASCII `\b` and with Unicode `\b`, over the same
//!   1 MB in 4 KiB and 4-byte chunks, after one pass that is not counted
//!   (a warm-up: the lazy DFAs' states are built by then, as in a
//!   process that has served a few replies);
//! - `literals_4k`, `literals_4b`: the throughput bench's three literals
//!   (`corpus::LITERALS`) over the same 1 MB in 4 KiB and 4-byte chunks,
//!   after one uncounted pass: the literal matcher's token path with
//!   matches, beside the deny list's;
//! - `floor_literal_4b`, `floor_regex_4b`: the same 1 MB in 4-byte chunks
//!   under one rule that never matches, a literal or a regex whose first
//!   byte never occurs: what a token-sized feed costs when the matcher has
//!   nothing to do (the API, the tape and the output), the floor under
//!   the `_4b` rows;
//! - `five_dfa_4k`, `five_dfa_4b`: the DFA floor (`corpus::DfaFloor`: one
//!   forward DFA stepped over each chunk and the chunk copied out, no
//!   starts, no hold-back, not exact) of the five rules over the same 1 MB,
//!   after one uncounted pass, in `stream_workload_floor`: what no exact
//!   stream of those rules can undercut per feed (a dense DFA of the 8 PII
//!   rules is too costly to build for a bench);
//! - `five_whole`, `ascii_whole`: the whole-input baseline
//!   (`corpus::Baseline`, one `meta::Regex` over the rules) on that 1 MB,
//!   after one uncounted pass, in `stream_workload_whole`, for the ratio;
//! - `email64_base64`, `email64_prose`, `az200x_base64`, `az200x_prose`:
//!   the `repeats` bench's rows (one rule with a bounded repetition, 256 KB
//!   of base64 or of the corpus in 4 KiB chunks, after one uncounted
//!   pass), and each with `_whole` after it: the whole-input baseline on
//!   the same text, in `stream_workload_whole`;
//! - `pack_pii_before_tokens`, `pack_pii_secrets_tokens`: the packs bench's
//!   `pii_before` and `pii_secrets` sets (blocks turned into masks, each
//!   pack's own `Pack::config`) over the same 200 replies, a fresh stream
//!   per reply as in that bench.
//!
//! Each prints the bytes it sent, a check that the work was done.

use std::hint::black_box;

use stream_replace::pack::{self, Pack};
use stream_replace::{Config, Replacer, Rules};

mod corpus;
mod workload;

/// Feeds every reply's chunks through `r`, flushing after each.
#[inline(never)]
fn stream_workload(r: &mut Replacer, replies: &[Vec<&str>], out: &mut String) -> usize {
    let mut sent = 0;
    for chunks in replies {
        sent += corpus::stream_chunks(r, chunks, out);
    }
    sent
}

/// The rules of a warmed-up workload, by its name's first part.
fn warm_rules(name: &str) -> Vec<corpus::Rule> {
    match name.split('_').next() {
        Some("five") => corpus::PII_FIVE.to_vec(),
        Some("ascii") => corpus::pii_ascii_b(),
        Some("floor") if name.contains("literal") => corpus::FLOOR_LITERAL.to_vec(),
        Some("floor") => corpus::FLOOR_REGEX.to_vec(),
        Some("literals") => corpus::LITERALS.to_vec(),
        _ => corpus::PII_UNICODE_B.to_vec(),
    }
}

/// The DFA floor (`corpus::DfaFloor`) over `chunks`.
#[inline(never)]
fn stream_workload_floor(floor: &corpus::DfaFloor, chunks: &[&str], out: &mut String) -> usize {
    floor.stream_chunks(chunks, out)
}

/// The whole-input baseline over `text`.
#[inline(never)]
fn stream_workload_whole(baseline: &corpus::Baseline, text: &str, out: &mut String) -> usize {
    out.clear();
    baseline.replace_into(text, out);
    text.len()
}

/// Streams every reply through a fresh replacer of `rules`, as the packs
/// bench does.
#[inline(never)]
fn stream_workload_fresh(rules: &Rules, replies: &[Vec<&str>], out: &mut String) -> usize {
    let mut sent = 0;
    for chunks in replies {
        sent += corpus::stream_chunks(&mut rules.replacer(), chunks, out);
    }
    sent
}

fn run_pack(name: &str, pack: Pack) {
    let pack = pack.without_blocks();
    let mut builder = Rules::builder();
    pack.add_to(&mut builder);
    let rules = builder
        .config(pack.config())
        .build()
        .expect("the packs compile");
    let replies = workload::replies(200);
    let input = workload::tokenize(&replies);
    let mut out = String::with_capacity(8192);
    let sent = stream_workload_fresh(&rules, black_box(&input), &mut out);
    println!("{name}: sent {sent} bytes");
}

/// The `repeats` bench's rule and text, by a workload's first two parts.
fn repeats_input(name: &str) -> (corpus::Rule, String) {
    let mut parts = name.split('_');
    let pattern = match parts.next() {
        Some("email64") => r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]+\.[A-Za-z]{2,}",
        _ => r"[a-z]{0,200}x",
    };
    let text = match parts.next() {
        Some("base64") => corpus::base64(256 << 10),
        _ => corpus::corpus(256 << 10),
    };
    let rule = corpus::Rule {
        pattern,
        literal: false,
        replacement: "[X]",
        validator: None,
    };
    (rule, text)
}

fn run_repeats(name: &str) {
    let (rule, text) = repeats_input(name);
    let rules = [rule];
    let mut out = String::with_capacity(text.len() + 4096);
    let sent = if name.ends_with("_whole") {
        let baseline = corpus::Baseline::new(&rules);
        baseline.replace_into(&text, &mut out);
        stream_workload_whole(&baseline, black_box(&text), &mut out)
    } else {
        let input = vec![corpus::chunks(&text, 4096)];
        let compiled = corpus::build(&rules, Config::new());
        let mut r = compiled.replacer();
        corpus::stream_chunks(&mut r, &input[0], &mut out);
        stream_workload(&mut r, black_box(&input), &mut out)
    };
    println!("{name}: sent {sent} bytes");
}

fn run(name: &str) {
    if name.starts_with("email64_") || name.starts_with("az200x_") {
        return run_repeats(name);
    }
    match name {
        "pack_pii_before_tokens" => {
            return run_pack(
                name,
                pack::pii().without("phone_intl").without("phone_national"),
            );
        }
        "pack_pii_secrets_tokens" => return run_pack(name, pack::pii().and(pack::secrets())),
        "five_whole" | "ascii_whole" => {
            let rules = warm_rules(name);
            let baseline = corpus::Baseline::new(&rules);
            let text = corpus::corpus(1 << 20);
            let mut out = String::with_capacity(text.len() + 4096);
            baseline.replace_into(&text, &mut out);
            let sent = stream_workload_whole(&baseline, black_box(&text), &mut out);
            println!("{name}: sent {sent} bytes");
            return;
        }
        "five_dfa_4k" | "five_dfa_4b" => {
            let floor = corpus::DfaFloor::new(&warm_rules(name)).expect("a dense DFA builds");
            let text = corpus::corpus(1 << 20);
            let size = if name.ends_with("_4b") { 4 } else { 4096 };
            let chunks = corpus::chunks(&text, size);
            let mut out = String::with_capacity(8192);
            floor.stream_chunks(&chunks, &mut out);
            let seen = stream_workload_floor(&floor, black_box(&chunks), &mut out);
            println!("{name}: {seen} match states seen");
            return;
        }
        "five_4k" | "five_4b" | "ascii_4k" | "ascii_4b" | "unicode_4k" | "unicode_4b"
        | "floor_literal_4b" | "floor_regex_4b" | "literals_4k" | "literals_4b" => {
            let text = corpus::corpus(1 << 20);
            let size = if name.ends_with("_4b") { 4 } else { 4096 };
            let input = vec![corpus::chunks(&text, size)];
            let compiled = corpus::build(&warm_rules(name), Config::new());
            let mut r = compiled.replacer();
            let mut out = String::with_capacity(8192);
            for chunks in &input {
                corpus::stream_chunks(&mut r, chunks, &mut out);
            }
            let sent = stream_workload(&mut r, black_box(&input), &mut out);
            println!("{name}: sent {sent} bytes");
            return;
        }
        _ => {}
    }
    let (rules, input): (Vec<corpus::Rule>, Vec<Vec<&str>>);
    let replies;
    let text;
    match name {
        "deny_1000_tokens" | "pii_tokens" => {
            replies = workload::replies(200);
            input = workload::tokenize(&replies);
            rules = if name == "pii_tokens" {
                corpus::PII_UNICODE_B.to_vec()
            } else {
                workload::deny_rules(1_000)
            };
        }
        "pii_4k" => {
            text = corpus::corpus(1 << 20);
            input = vec![corpus::chunks(&text, 4096)];
            rules = corpus::PII_UNICODE_B.to_vec();
        }
        _ => {
            eprintln!(
                "unknown workload {name}: deny_1000_tokens, pii_tokens, pii_4k, \
                 five_4k, five_4b, five_whole, ascii_4k, ascii_4b, ascii_whole, \
                 unicode_4k, unicode_4b, floor_literal_4b, floor_regex_4b, \
                 email64_base64[_whole], email64_prose[_whole], \
                 az200x_base64[_whole], az200x_prose[_whole], \
                 pack_pii_before_tokens, pack_pii_secrets_tokens"
            );
            std::process::exit(2);
        }
    }
    let compiled = corpus::build(&rules, Config::new());
    let mut r = compiled.replacer();
    let mut out = String::with_capacity(8192);
    let sent = stream_workload(&mut r, black_box(&input), &mut out);
    println!("{name}: sent {sent} bytes");
}

fn main() {
    // `cargo bench` passes `--bench`; only a workload name selects.
    let names: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    if names.is_empty() {
        for name in [
            "deny_1000_tokens",
            "pii_tokens",
            "pii_4k",
            "five_4k",
            "five_4b",
            "five_whole",
            "five_dfa_4k",
            "five_dfa_4b",
            "ascii_4k",
            "ascii_4b",
            "ascii_whole",
            "unicode_4k",
            "unicode_4b",
            "literals_4k",
            "literals_4b",
            "floor_literal_4b",
            "floor_regex_4b",
            "email64_base64",
            "email64_base64_whole",
            "email64_prose",
            "email64_prose_whole",
            "az200x_base64",
            "az200x_base64_whole",
            "az200x_prose",
            "az200x_prose_whole",
            "pack_pii_before_tokens",
            "pack_pii_secrets_tokens",
        ] {
            run(name);
        }
    } else {
        for name in &names {
            run(name);
        }
    }
}
