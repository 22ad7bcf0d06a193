//! The shared case suite: every `testdata/*.toml` file.
//!
//! A file is a list of `[[case]]` tables:
//!
//! ```toml
//! [[case]]
//! name = "digits"                               # unique across all files
//! rules = [
//!   { literal = "hello", replace = "bye" },     # literal text, no `$` expansion
//!   { regex = '\d+', template = "<$0>" },       # `regex` template
//!   { regex = '\w+', literal_replacement = "$1" },
//!   { regex = '\w+', closure = "span" },        # a named closure, see oracle::Named
//!   { literal = "x", template = "[$0]" },
//! ]
//! input = "call 12"            # or input_bytes = [0x61, 0xFF]
//! expected = "call <12>"       # or expected_bytes = [...]
//!                              # only (the rest of the case still runs)
//!
//! [[case.holdback]]            # optional: feeds through `feed`, in order
//! feed = "call 1"
//! emitted = "call "            # optional: what this feed returns
//! held = 1                     # optional: `held()` after it
//! [[case.holdback]]
//! flush = true
//! emitted = "<12>"
//! ```
//!
//! Each case is checked whole (`replace_all`, `replace_all_bytes`, and the
//! oracle, so a wrong hand-written `expected` is caught too), then streamed
//! through every two-part split (at character boundaries for the `&str`
//! methods, at every byte for the byte methods), every three-part byte split
//! of short inputs, one byte and one character at a time, with empty chunks
//! around and between, and through seeded random splits, with each of the
//! four feeding methods. One replacer serves all the splits of a case, so
//! each `flush` must leave it ready for the next stream. Then each adapter
//! (`wrap`, `wrap_bytes`, `ReplaceWriter`, `ReplaceReader`, and with the
//! `stream` feature `wrap_stream`, `wrap_stream_bytes`) runs the case whole,
//! one piece at a time, through every two-part split and random splits.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use stream_replace::Rules;

use crate::oracle::{self, Named, Oracle, Pat, Repl, Rule, show};
use crate::run::{self, Adapter, Api, Rng, chunks_at};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    case: Vec<Case>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    rules: Vec<RuleSpec>,
    input: Option<String>,
    input_bytes: Option<Vec<u8>>,
    expected: Option<String>,
    expected_bytes: Option<Vec<u8>>,
    #[serde(default)]
    holdback: Vec<Step>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleSpec {
    literal: Option<String>,
    regex: Option<String>,
    replace: Option<String>,
    template: Option<String>,
    literal_replacement: Option<String>,
    closure: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Step {
    feed: Option<String>,
    #[serde(default)]
    flush: bool,
    emitted: Option<String>,
    held: Option<usize>,
}

impl RuleSpec {
    fn to_rule(&self, case: &str) -> Rule {
        let pat = match (&self.literal, &self.regex) {
            (Some(l), None) => Pat::Literal(l.clone()),
            (None, Some(r)) => Pat::Regex(r.clone()),
            _ => panic!("case {case:?}: a rule needs exactly one of `literal`, `regex`"),
        };
        let repl = match (
            &self.replace,
            &self.template,
            &self.literal_replacement,
            &self.closure,
        ) {
            (Some(t), None, None, None) => {
                assert!(
                    matches!(pat, Pat::Literal(_)),
                    "case {case:?}: `replace` goes with `literal`; use `template` or \
                     `literal_replacement` with `regex`"
                );
                Repl::Text(t.clone())
            }
            (None, Some(t), None, None) => Repl::Template(t.clone()),
            (None, None, Some(t), None) => Repl::Text(t.clone()),
            (None, None, None, Some(n)) => Repl::Closure(
                Named::parse(n).unwrap_or_else(|| panic!("case {case:?}: no closure {n:?}")),
            ),
            _ => panic!(
                "case {case:?}: a rule needs exactly one of `replace`, `template`, \
                 `literal_replacement`, `closure`"
            ),
        };
        Rule { pat, repl }
    }
}

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata")
}

/// Every case file, by file name.
fn load_all() -> BTreeMap<String, Vec<Case>> {
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(testdata()).expect("testdata/ exists") {
        let path = entry.expect("readable testdata/").path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("readable case file");
        let file: File =
            toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        files.insert(name, file.case);
    }
    files
}

fn load(file: &str) -> Vec<Case> {
    let text =
        std::fs::read_to_string(testdata().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    let parsed: File = toml::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
    parsed.case
}

/// Runs every case of `file` and panics with the list of failures, if any.
fn run_file(file: &str) {
    let cases = load(file);
    assert!(!cases.is_empty(), "{file} has no cases");
    let failures: Vec<String> = cases
        .iter()
        .flat_map(|c| first_few(&c.name, check_case(c)))
        .collect();
    report(file, failures);
}

/// At most four failures of one case, then a count of the rest.
fn first_few(case: &str, fails: Vec<String>) -> Vec<String> {
    let more = fails.len().saturating_sub(4);
    let mut shown: Vec<String> = fails
        .into_iter()
        .take(4)
        .map(|f| format!("[{case}] {f}"))
        .collect();
    if more > 0 {
        shown.push(format!("[{case}] ... and {more} more"));
    }
    shown
}

fn report(what: &str, failures: Vec<String>) {
    if failures.is_empty() {
        return;
    }
    let shown: Vec<&String> = failures.iter().take(30).collect();
    panic!(
        "{what}: {} failure(s){}:\n{}",
        failures.len(),
        if failures.len() > shown.len() {
            ", the first 30"
        } else {
            ""
        },
        shown
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Checks one case, holdback steps included; returns one line per failure.
fn check_case(case: &Case) -> Vec<String> {
    let mut fails = Vec::new();
    let rules: Vec<Rule> = case.rules.iter().map(|r| r.to_rule(&case.name)).collect();
    let input: Vec<u8> = match (&case.input, &case.input_bytes) {
        (Some(s), None) => s.as_bytes().to_vec(),
        (None, Some(b)) => b.clone(),
        _ => panic!(
            "case {:?}: needs exactly one of `input`, `input_bytes`",
            case.name
        ),
    };
    let expected: Vec<u8> = match (&case.expected, &case.expected_bytes) {
        (Some(s), None) => s.as_bytes().to_vec(),
        (None, Some(b)) => b.clone(),
        _ => panic!(
            "case {:?}: needs exactly one of `expected`, `expected_bytes`",
            case.name
        ),
    };
    let compiled = match oracle::build(&rules) {
        Ok(c) => c,
        Err(e) => return vec![format!("rules do not build: {e}")],
    };

    let reference = Oracle::new(&rules).replace(&input);
    if reference != expected {
        fails.push(format!(
            "the oracle gives {}, the case expects {} (fix the case file?)",
            show(&reference),
            show(&expected)
        ));
    }
    let whole = compiled.replace_all_bytes(&input);
    if whole != expected {
        fails.push(format!(
            "replace_all_bytes gives {}, expected {}",
            show(&whole),
            show(&expected)
        ));
    }
    let text = std::str::from_utf8(&input).ok();
    if let Some(text) = text {
        let whole = compiled.replace_all(text);
        if whole.as_bytes() != expected {
            fails.push(format!(
                "replace_all gives {}, expected {}",
                show(whole.as_bytes()),
                show(&expected)
            ));
        }
    }

    let mut r = compiled.replacer();
    let mut check_split = |api: Api, cuts: &[usize], label: &str| {
        let chunks = chunks_at(&input, cuts);
        match run::stream(&mut r, api, &chunks) {
            Ok(out) if out == expected => {}
            Ok(out) => fails.push(format!(
                "{api:?} {label} {:?}: got {}, expected {}",
                chunks.iter().map(|c| show(c)).collect::<Vec<_>>(),
                show(&out),
                show(&expected)
            )),
            Err(e) => {
                fails.push(format!("{api:?} {label} cuts {cuts:?}: {e}"));
                r.reset();
            }
        }
    };

    let n = input.len();
    let every_byte: Vec<usize> = (0..=n).collect();
    let boundaries = match text {
        Some(t) => run::char_boundaries(t),
        None => every_byte.clone(),
    };
    let mut rng = Rng::new(&case.name);
    for api in Api::ALL {
        if api.is_str() && text.is_none() {
            continue;
        }
        let points = if api.is_str() {
            &boundaries
        } else {
            &every_byte
        };
        check_split(api, &[], "whole");
        check_split(api, &[0, n, n], "with empty chunks");
        for &c in points {
            check_split(api, &[c], "two parts");
        }
        // One piece at a time, with an empty chunk after each.
        let mut each: Vec<usize> = points.iter().flat_map(|&c| [c, c]).collect();
        each.sort_unstable();
        check_split(api, run::interior(points), "one at a time");
        check_split(api, &each, "one at a time with empty chunks");
        for _ in 0..16 {
            let cuts = rng.cuts(points);
            check_split(api, &cuts, "random");
        }
    }
    if n <= 24 {
        for a in 0..=n {
            for b in a..=n {
                check_split(Api::Bytes, &[a, b], "three parts");
            }
        }
    }
    for &adapter in Adapter::ALL {
        if adapter.is_str() && text.is_none() {
            continue;
        }
        let points = if adapter.is_str() {
            &boundaries
        } else {
            &every_byte
        };
        let mut splits: Vec<Vec<usize>> = vec![vec![], run::interior(points).to_vec()];
        splits.extend(points.iter().map(|&c| vec![c]));
        splits.extend((0..4).map(|_| rng.cuts(points)));
        for cuts in splits {
            let chunks = chunks_at(&input, &cuts);
            match run::through(compiled.replacer(), adapter, &chunks) {
                Ok(out) if out == expected => {}
                Ok(out) => fails.push(format!(
                    "{adapter:?} {:?}: got {}, expected {}",
                    chunks.iter().map(|c| show(c)).collect::<Vec<_>>(),
                    show(&out),
                    show(&expected)
                )),
                Err(e) => fails.push(format!("{adapter:?} cuts {cuts:?}: {e}")),
            }
        }
    }

    if !case.holdback.is_empty() {
        fails.extend(check_holdback(case, &compiled, &input, &expected));
    }
    fails
}

/// Runs the `[[case.holdback]]` steps on a fresh stream.
fn check_holdback(case: &Case, rules: &Rules, input: &[u8], expected: &[u8]) -> Vec<String> {
    let mut fails = Vec::new();
    let mut r = rules.replacer();
    let mut fed = String::new();
    let mut total = String::new();
    let mut flushed = false;
    for (k, step) in case.holdback.iter().enumerate() {
        assert!(
            !flushed,
            "case {:?}: a holdback step after `flush`",
            case.name
        );
        let out = match (&step.feed, step.flush) {
            (Some(chunk), false) => {
                fed.push_str(chunk);
                r.feed(chunk)
            }
            (None, true) => {
                flushed = true;
                r.flush()
            }
            _ => panic!(
                "case {:?}: step {k} needs `feed` or `flush = true`",
                case.name
            ),
        };
        let out = match out {
            Ok(o) => o,
            Err(e) => {
                fails.push(format!("holdback step {k}: error {e}"));
                return fails;
            }
        };
        total.push_str(&out);
        let what = step
            .feed
            .as_deref()
            .map_or("flush".to_string(), |f| format!("feed {f:?}"));
        if let Some(emitted) = &step.emitted {
            if &out != emitted {
                fails.push(format!(
                    "holdback step {k} ({what}): emitted {out:?}, expected {emitted:?}"
                ));
            }
        }
        if let Some(held) = step.held {
            if r.held() != held {
                fails.push(format!(
                    "holdback step {k} ({what}): held() = {}, expected {held}",
                    r.held()
                ));
            }
        }
    }
    if !flushed {
        total.push_str(&r.flush().unwrap_or_else(|e| format!("<flush error {e}>")));
    }
    if total != rules.replace_all(&fed) {
        fails.push(format!(
            "holdback feeds {fed:?}: stream output {total:?} differs from replace_all {:?}",
            rules.replace_all(&fed)
        ));
    }
    if fed.as_bytes() == input && total.as_bytes() != expected {
        fails.push(format!(
            "holdback stream output {total:?} is not `expected`"
        ));
    }
    fails
}

/// The files each have a test below; a new file must get one too.
const FILES: &[&str] = &[
    "basics.toml",
    "bytes.toml",
    "empty.toml",
    "holdback.toml",
    "lookaround.toml",
    "regex.toml",
    "templates.toml",
    "unicode.toml",
];

#[test]
fn every_file_has_a_test_and_names_are_unique() {
    let files = load_all();
    let names: Vec<&str> = files.keys().map(|s| s.as_str()).collect();
    assert_eq!(names, FILES, "add a #[test] for each new testdata file");
    let mut seen = BTreeMap::new();
    let mut total = 0;
    for (file, cases) in &files {
        for c in cases {
            total += 1;
            if let Some(other) = seen.insert(c.name.clone(), file.clone()) {
                panic!("case name {:?} is used in {other} and {file}", c.name);
            }
        }
    }
    assert!(total >= 60, "only {total} cases");
}

#[test]
fn basics() {
    run_file("basics.toml");
}

#[test]
fn bytes() {
    run_file("bytes.toml");
}

#[test]
fn empty() {
    run_file("empty.toml");
}

#[test]
fn holdback() {
    run_file("holdback.toml");
}

#[test]
fn lookaround() {
    run_file("lookaround.toml");
}

#[test]
fn regex() {
    run_file("regex.toml");
}

#[test]
fn templates() {
    run_file("templates.toml");
}

#[test]
fn unicode() {
    run_file("unicode.toml");
}
