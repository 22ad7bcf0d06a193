//! The `pii` + `secrets` packs against `cerberust` 0.2.2 on the samples of
//! the packs' issue table, on every positive sample of the secrets pack's
//! tests, and streaming the packs bench's LLM-like replies at token chunks.
//!
//! A sample is caught when the part a rule is meant to mask (between `|`
//! in the test cases) no longer appears whole in the output. cerberust runs
//! as an output guard: `PiiScanner::sensitive_output()` and a
//! `SecretScanner` on the output direction, through `run_output` for whole
//! texts and `StreamOutput` for streams.
//!
//! Run from this folder: `cargo run --release` (knob:
//! `STREAM_REPLACE_PACKS_REPLIES`, default 200 replies, 0 for the tables
//! only; `SHOW=1` prints each table sample's outputs).

#![allow(dead_code)]

use std::time::Instant;

use cerberust::{Direction, PiiScanner, Scanner, ScannerStack, SecretScanner};
use stream_replace::pack::{self, Pack};
use stream_replace::Rules;

#[path = "../../corpus/mod.rs"]
mod corpus;
#[path = "../../workload/mod.rs"]
mod workload;

struct Case {
    id: &'static str,
    pos: &'static [&'static str],
    neg: &'static [&'static str],
}

include!("../../../crates/stream-replace/tests/suite/secrets_cases.rs");

fn stack() -> ScannerStack {
    let scanners: Vec<Box<dyn Scanner>> = vec![
        Box::new(PiiScanner::sensitive_output()),
        Box::new(SecretScanner::new().with_direction(Direction::Output)),
    ];
    ScannerStack::new(scanners, true)
}

fn theirs(text: &str) -> String {
    stack().run_output(text).unwrap_or_else(|_| String::new())
}

fn build(pack: &Pack) -> Rules {
    let mut builder = Rules::builder();
    pack.clone().without_blocks().add_to(&mut builder);
    builder
        .config(pack.config())
        .build()
        .expect("the packs compile")
}

/// The example without its bars, and the part between them.
fn split(example: &str) -> (String, &str) {
    let parts: Vec<&str> = example.split('|').collect();
    (parts.concat(), parts[1])
}

fn caught(out: &str, secret: &str) -> bool {
    !out.contains(secret)
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// The table rows: a label, the texts, and the part of each that
/// must not survive.
const ROWS: &[(&str, &[&str])] = &[
    (
        "credentials by label (the issue's forms)",
        &[
            "password=|hunter2hunter2|",
            "api_key: \"|Zx81mQpL0vTr77wq|\"",
            "Authorization: Bearer |7f3kQ9zLm2Xw8Rt5Yp1V|",
        ],
    ),
    (
        "credentials by label in code and JSON",
        &[
            "DB_PASSWORD=|hunter2hunter2|",
            "config: {\"api_key\": \"|Zx81mQpL0vTr77wq|\"}",
            "curl -H \"Authorization: Bearer |7f3kQ9zLm2Xw8Rt5Yp1V|\" https://api.example.com",
        ],
    ),
    (
        "password in a URL",
        &["url: postgres://admin:|S3cr3tPw|@db.example.com/app"],
    ),
    (
        "spaced international phones",
        &[
            "call |+44 20 7946 0958| today",
            "Paris: |+33 1 23 45 67 89|.",
            "Berlin |+49 30 12345678|",
            "Tokyo |+81 3-1234-5678|",
            "Mumbai |+91 98765 43210|",
        ],
    ),
    (
        "high-entropy token, no prefix",
        &["X-Trace |q8Zt2Lw9XcV4bN1mR7kP0sJd| done"],
    ),
    (
        "BIP39 seed phrase (12 words, valid checksum)",
        &["my words: |legal winner thank year wave sausage worth useful legal winner thank yellow|."],
    ),
    ("IPv6", &["host |2001:db8:85a3::8a2e:370:7334| up"]),
    ("valid SSN", &["SSN |123-45-6789| on file"]),
    (
        "typed AI and code-host keys",
        &[
            "|sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z|",
            "|sk-ant-api03-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z|",
            "|github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ01|",
            "|xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOp|",
        ],
    ),
];

fn main() {
    let ours = build(&pack::pii().and(pack::secrets()));
    let extra = build(
        &pack::pii()
            .and(pack::secrets())
            .and(pack::seed_phrases())
            .with(pack::high_entropy()),
    );
    println!(
        "rules: pii + secrets {}, + seed_phrases() + high_entropy() {}",
        pack::pii().and(pack::secrets()).rules().len(),
        pack::pii()
            .and(pack::secrets())
            .and(pack::seed_phrases())
            .with(pack::high_entropy())
            .rules()
            .len()
    );
    println!();
    println!("| sample | ours (pii + secrets) | ours + optional detectors | cerberust 0.2.2 |");
    println!("|---|---|---|---|");
    for (label, texts) in ROWS {
        let (mut a, mut b, mut c) = (0, 0, 0);
        for t in *texts {
            let (text, secret) = split(t);
            a += caught(&ours.replace_all(&text), secret) as usize;
            b += caught(&extra.replace_all(&text), secret) as usize;
            let theirs = theirs(&text);
            c += caught(&theirs, secret) as usize;
            if std::env::var("SHOW").is_ok() {
                println!(
                    "  {text:?}\n    ours {:?}\n    theirs {theirs:?}",
                    ours.replace_all(&text)
                );
            }
        }
        let n = texts.len();
        println!("| {label} | {a} of {n} | {b} of {n} | {c} of {n} |");
    }

    // Every positive and negative sample of the secrets pack's tests.
    let (mut rules, mut rules_ours, mut rules_theirs) = (0, 0, 0);
    let (mut pos, mut pos_ours, mut pos_theirs) = (0, 0, 0);
    let (mut neg, mut neg_ours, mut neg_theirs) = (0, 0, 0);
    let mut missed = Vec::new();
    for case in SECRET_CASES {
        rules += 1;
        let (mut all_ours, mut any_theirs) = (true, false);
        for p in case.pos {
            let (text, secret) = split(p);
            pos += 1;
            let o = caught(&ours.replace_all(&text), secret);
            let t = caught(&theirs(&text), secret);
            pos_ours += o as usize;
            pos_theirs += t as usize;
            all_ours &= o;
            any_theirs |= t;
        }
        rules_ours += all_ours as usize;
        rules_theirs += any_theirs as usize;
        if !any_theirs {
            missed.push(case.id);
        }
        for n in case.neg {
            neg += 1;
            neg_ours += (ours.replace_all(n) != *n) as usize;
            neg_theirs += (theirs(n) != *n) as usize;
        }
    }
    println!(
        "| secrets pack test rules with a sample caught | {rules_ours} of {rules} | | {rules_theirs} of {rules} |"
    );
    println!("| their positive samples caught | {pos_ours} of {pos} | | {pos_theirs} of {pos} |");
    println!("| their negative samples changed | {neg_ours} of {neg} | | {neg_theirs} of {neg} |");
    println!();
    println!(
        "rules of which cerberust catches no sample: {}",
        missed.join(", ")
    );

    // Streaming at token chunks.
    if std::env::var("STREAM_REPLACE_PACKS_REPLIES").as_deref() == Ok("0") {
        return;
    }
    let count = std::env::var("STREAM_REPLACE_PACKS_REPLIES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(200);
    let replies = workload::replies(count);
    let tokens = workload::tokenize(&replies);
    let total: usize = replies.iter().map(String::len).sum();
    let mb = total as f64 / (1 << 20) as f64;
    let mut out = String::new();
    let mut best_ours = f64::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        for reply in &tokens {
            let mut r = ours.replacer();
            for chunk in reply {
                r.feed_into(chunk, &mut out).expect("no held limit");
                out.clear();
            }
            r.flush_into(&mut out).expect("no held limit");
            out.clear();
        }
        best_ours = best_ours.min(t.elapsed().as_secs_f64());
    }
    let mut stack = stack();
    let mut best_theirs = f64::MAX;
    for _ in 0..2 {
        let t = Instant::now();
        for reply in &tokens {
            let mut s = cerberust::middleware::stream::StreamOutput::new(&stack);
            for chunk in reply {
                std::hint::black_box(s.push(&mut stack, chunk).ok());
            }
            std::hint::black_box(s.finish(&mut stack).ok());
        }
        best_theirs = best_theirs.min(t.elapsed().as_secs_f64());
    }
    println!();
    println!(
        "streaming {} replies, {} bytes, token chunks: ours {:.2} MB/s ({:.1} ms), cerberust {:.3} MB/s ({:.1} ms), ratio {:.1}",
        replies.len(),
        total,
        mb / best_ours,
        best_ours * 1e3,
        mb / best_theirs,
        best_theirs * 1e3,
        best_theirs / best_ours
    );
}
