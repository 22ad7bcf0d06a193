//! False positives of the packs on three clean corpora, per MB, and the
//! planted values of the server log they catch. Not a timing bench: it
//! prints a table.
//!
//! - `prose`: the LLM-like corpus of the other benches (`corpus/mod.rs`).
//!   It plants PII of the shapes the `pii` pack had before the phone rules
//!   were added (the `pii_before` rows): a match of another configuration
//!   whose span is not a `pii_before` match is counted as a false positive.
//! - `code`: the workspace's own `.rs` files, without the files that hold
//!   samples on purpose (`tests/` directories, the pack and validator
//!   sources, this file). Every match is counted; the docs say which are
//!   false.
//! - `logs`: the CLI's log generator
//!   (`crates/stream-replace-cli/scripts/gen_log.py`, run with `python3`),
//!   with its planted fields (`user=`, `ip=`, `auth=`, `ssn=`,
//!   `password=`) cut out of each line for the false-positive count, and
//!   kept for the recall count.
//!
//! Knobs: `STREAM_REPLACE_PACKS_MB` (prose size, default 4),
//! `STREAM_REPLACE_PACKS_LOG_MB` (log size, default 2, whole MB),
//! `STREAM_REPLACE_PACKS_SHOW=1` (print each counted match of the
//! `pii+secrets` row and of the rules that `pii_before` lacks, for
//! inspection).
//!
//! Run: `cargo bench -p stream-replace-benches --bench pack_fp`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use stream_replace::Rules;
use stream_replace::pack::{self, Pack};

mod corpus;

fn build(pack: &Pack) -> Rules {
    let mut builder = Rules::builder();
    pack.clone().without_blocks().add_to(&mut builder);
    builder.build().expect("the packs compile")
}

/// The `pii` pack as it was before the phone rules were added.
fn pii_before() -> Pack {
    pack::pii().without("phone_intl").without("phone_national")
}

fn configs() -> Vec<(&'static str, Pack)> {
    vec![
        ("pii_before", pii_before()),
        ("pii", pack::pii()),
        ("pii+secrets", pack::pii().and(pack::secrets())),
        (
            "pii+secrets+high_entropy",
            pack::pii().and(pack::secrets()).with(pack::high_entropy()),
        ),
        (
            "pii+secrets+seed_phrases",
            pack::pii().and(pack::secrets()).and(pack::seed_phrases()),
        ),
    ]
}

type Spans = Vec<(String, std::ops::Range<usize>)>;

fn matches(rules: &Rules, text: &str) -> Spans {
    rules
        .evaluate(text)
        .triggers()
        .iter()
        .map(|t| (t.id().to_owned(), t.span()))
        .collect()
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("benches/ sits in the workspace")
        .to_owned()
}

fn rust_sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if !matches!(name.as_str(), "target" | "tests" | ".git" | "pack") {
                rust_sources(&path, out);
            }
        } else if name.ends_with(".rs") && name != "validate.rs" && name != "pack_fp.rs" {
            out.push(path);
        }
    }
}

fn code_corpus() -> String {
    let root = workspace();
    let mut files = Vec::new();
    for dir in ["crates", "benches", "examples", "fuzz"] {
        rust_sources(&root.join(dir), &mut files);
    }
    let mut text = String::new();
    for f in &files {
        text.push_str(&std::fs::read_to_string(f).expect("a readable source"));
        text.push('\n');
    }
    eprintln!("code: {} files", files.len());
    text
}

fn env_usize(name: &str, default: f64) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

/// The generated log, and the same log with its planted fields cut out.
fn log_corpora() -> (String, String) {
    let mb = env_usize("STREAM_REPLACE_PACKS_LOG_MB", 2.0) as usize;
    let script = workspace().join("crates/stream-replace-cli/scripts/gen_log.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(mb.to_string())
        .output()
        .expect("python3 runs the log generator");
    assert!(out.status.success(), "gen_log.py failed");
    let log = String::from_utf8(out.stdout).expect("an ASCII log");
    let planted = ["user=", "ip=", "auth=", "ssn=", "password="];
    let mut clean = String::with_capacity(log.len());
    for line in log.lines() {
        let kept: Vec<&str> = line
            .split(' ')
            .filter(|field| !planted.iter().any(|p| field.starts_with(p)))
            .collect();
        clean.push_str(&kept.join(" "));
        clean.push('\n');
    }
    (log, clean)
}

fn per_mb(n: usize, bytes: usize) -> f64 {
    n as f64 / (bytes as f64 / 1e6)
}

fn report(corpus: &str, text: &str, baseline: Option<&Spans>, show: bool) {
    for (name, pack) in configs() {
        let rules = build(&pack);
        let found = matches(&rules, text);
        let counted: Vec<&(String, std::ops::Range<usize>)> = found
            .iter()
            .filter(|m| baseline.is_none_or(|b| !b.contains(m)))
            .collect();
        let mut by_rule: BTreeMap<&str, usize> = BTreeMap::new();
        for (id, span) in &counted {
            // The prose corpus's code blocks assign its planted values
            // (and its near misses) to `api_key = "…"`: a credential slot,
            // whose value the credential rule masks by design.
            let slot = text[span.clone()].starts_with("api_key = \"");
            let key = if slot {
                "credential_assignment in api_key slots"
            } else {
                id.as_str()
            };
            *by_rule.entry(key).or_default() += 1;
            if show
                && (name == "pii+secrets"
                    || (name != "pii_before" && pii_before().get(id).is_none()))
            {
                eprintln!("  {corpus}/{name}/{id}: {:?}", &text[span.clone()]);
            }
        }
        println!(
            "| {corpus} | {name} | {:.2} | {} | {:.2} | {:?} |",
            text.len() as f64 / 1e6,
            counted.len(),
            per_mb(counted.len(), text.len()),
            by_rule
        );
    }
}

fn main() {
    // `cargo bench` passes `--bench`; this target takes no arguments.
    let show = std::env::var("STREAM_REPLACE_PACKS_SHOW").is_ok_and(|v| v == "1");
    let prose_mb = env_usize("STREAM_REPLACE_PACKS_MB", 4.0);
    let prose = corpus::corpus((prose_mb * 1e6) as usize);
    let code = code_corpus();
    let (log, clean_log) = log_corpora();

    println!("| corpus | packs | MB | counted | per MB | by rule |");
    println!("|---|---|---|---|---|---|");
    let before = matches(&build(&pii_before()), &prose);
    eprintln!(
        "prose: {} `api_key = \"` slots",
        prose.matches("api_key = \"").count()
    );
    report("prose", &prose, Some(&before), show);
    report("code", &code, None, show);
    report("logs (planted fields cut)", &clean_log, None, show);

    // Recall on the planted fields of the full log: each planted value
    // must be inside a match.
    let rules = build(&pack::pii().and(pack::secrets()));
    let found = matches(&rules, &log);
    let mut planted = BTreeMap::<&str, (usize, usize)>::new();
    let mut offset = 0;
    let mut m = 0;
    for line in log.split_inclusive('\n') {
        let mut at = offset;
        for field in line.trim_end_matches('\n').split(' ') {
            let key = ["user=", "ip=", "auth=", "ssn=", "password="]
                .into_iter()
                .find(|p| field.starts_with(p));
            if let Some(key) = key {
                let value = at + key.len()..at + field.len();
                while m < found.len() && found[m].1.end <= value.start {
                    m += 1;
                }
                let hit = found[m..]
                    .iter()
                    .take_while(|f| f.1.start < value.end)
                    .any(|f| f.1.start <= value.start && value.end <= f.1.end);
                let e = planted.entry(key).or_default();
                e.0 += 1;
                e.1 += usize::from(hit);
            }
            at += field.len() + 1;
        }
        offset += line.len();
    }
    println!();
    println!("| planted log field | values | caught by pii+secrets |");
    println!("|---|---|---|");
    for (key, (n, hit)) in planted {
        println!("| `{key}` | {n} | {hit} |");
    }
}
