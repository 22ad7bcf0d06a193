//! `srep`: exact streaming find-and-replace from stdin to stdout.
//!
//! Each read of stdin is fed to one `stream_replace::Replacer` and the text
//! that is safe now is written and flushed at once, so `tail -f app.log |
//! srep -e '...'` shows each line as soon as no rule can still match in it,
//! not at end of input. The output is, byte for byte, what replacing the
//! whole input at once gives.
//!
//! Exit status: 0 on success (with `--check`: no rule triggered), 1 when
//! `--check` found a trigger, 2 on a usage or rule error, 4 when the stream
//! stopped (held text over `--max-held`, which is discarded, or an I/O
//! error).

#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![warn(missing_debug_implementations)]

mod spec;

use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser};
use stream_replace::{Config, Pattern, Replacement, Rules};

use crate::spec::{Kind, Spec, SpecError};

const LONG_ABOUT: &str = "\
Exact streaming find-and-replace: reads stdin, writes stdout, and releases \
each byte as soon as no rule can still match it (so `tail -f app.log | srep \
...` shows lines as they come). The output equals replacing the whole input \
at once: the leftmost match wins, the earlier rule wins a tie, matches do not \
overlap, replacements are not scanned again.

Rules apply in the order given on the command line, rules files included.
Regexes use the syntax of Rust's `regex` crate.";

const AFTER_HELP: &str = "\
Rules files: TOML, as [[rule]] tables, when the name ends in .toml; JSON \
otherwise, as a list (or {\"rule\": [...]}). Each rule has \"pattern\" (a \
regex) or \"literal\", and \"replacement\":

  [[rule]]
  pattern = '\\b\\d{3}-\\d{2}-\\d{4}\\b'
  replacement = \"[SSN]\"

  [{\"literal\": \"hunter2\", \"replacement\": \"***\"}]

Exit status: 0 success (--check: nothing found), 1 --check found a trigger, \
2 usage or rule error, 4 the stream stopped (held text over --max-held, \
discarded; or an I/O error).";

/// Command-line arguments.
#[derive(Debug, Parser)]
#[command(name = "srep", version, about = "Exact streaming find-and-replace, stdin to stdout", long_about = LONG_ABOUT, after_help = AFTER_HELP)]
struct Args {
    /// A regex rule. Split at the LAST '=': the pattern may contain '=', the
    /// replacement may not (use a rules file for that). The replacement is a
    /// template: $1, ${name}, $$ for a literal '$'.
    #[arg(short = 'e', long = "regex", value_name = "PATTERN=REPLACEMENT")]
    regex: Vec<String>,

    /// A literal rule, split at the last '=' as for -e; the replacement is
    /// literal text.
    #[arg(short = 'l', long = "literal", value_name = "TEXT=REPLACEMENT")]
    literal: Vec<String>,

    /// Read rules from a TOML (.toml) or JSON file.
    #[arg(short = 'f', long = "rules", value_name = "FILE")]
    rules: Vec<PathBuf>,

    /// Report triggers instead of rewriting: for each match, print one line
    /// of four tab-separated columns, RULE START END PATTERN (the 0-based rule
    /// index in command-line order, the match's byte offsets in the input,
    /// the pattern JSON-quoted) to stdout, and not the text. The matched
    /// text itself is never printed.
    #[arg(long)]
    check: bool,

    /// The most bytes held back at once (default 1 MiB). Above it the held
    /// text is discarded, never printed, and srep exits with status 4.
    #[arg(long, value_name = "BYTES")]
    max_held: Option<usize>,
}

// A trigger recorded by a `--check` rule: (rule, start, end).
type Triggers = Arc<Mutex<Vec<(usize, usize, usize)>>>;

fn main() -> ExitCode {
    let matches = Args::command().get_matches();
    let args = match Args::from_arg_matches(&matches) {
        Ok(args) => args,
        Err(e) => e.exit(),
    };
    let specs = match specs_in_order(&args, &matches) {
        Ok(specs) => specs,
        Err(e) => return usage_error(&e.to_string()),
    };
    if specs.is_empty() {
        return usage_error(
            "no rules: give -e PATTERN=REPLACEMENT, --literal TEXT=REPLACEMENT or --rules FILE",
        );
    }
    let triggers: Triggers = Arc::default();
    let rules = match build(&specs, &args, args.check.then_some(&triggers)) {
        Ok(rules) => rules,
        Err(e) => return usage_error(&e),
    };
    match run(&rules, &specs, args.check.then_some(&triggers)) {
        Ok(found) if found => ExitCode::from(1),
        Ok(_) => ExitCode::SUCCESS,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("srep: {e}");
            ExitCode::from(4)
        }
    }
}

fn usage_error(message: &str) -> ExitCode {
    eprintln!("srep: {message}");
    ExitCode::from(2)
}

// The rules from -e, --literal and --rules, in the order they were given.
fn specs_in_order(args: &Args, matches: &ArgMatches) -> Result<Vec<Spec>, SpecError> {
    let indices = |id: &str| -> Vec<usize> {
        matches
            .indices_of(id)
            .map(Iterator::collect)
            .unwrap_or_default()
    };
    let mut sources: Vec<(usize, Vec<Spec>)> = Vec::new();
    for (n, (at, arg)) in indices("regex").into_iter().zip(&args.regex).enumerate() {
        sources.push((at, vec![spec::from_flag(Kind::Regex, "-e", n + 1, arg)?]));
    }
    for (n, (at, arg)) in indices("literal")
        .into_iter()
        .zip(&args.literal)
        .enumerate()
    {
        sources.push((
            at,
            vec![spec::from_flag(Kind::Literal, "--literal", n + 1, arg)?],
        ));
    }
    for (at, path) in indices("rules").into_iter().zip(&args.rules) {
        sources.push((at, spec::from_file(path)?));
    }
    sources.sort_by_key(|(at, _)| *at);
    Ok(sources.into_iter().flat_map(|(_, specs)| specs).collect())
}

fn build(specs: &[Spec], args: &Args, triggers: Option<&Triggers>) -> Result<Rules, String> {
    let mut builder = Rules::builder();
    for (i, spec) in specs.iter().enumerate() {
        let pattern = match spec.kind {
            Kind::Regex => Pattern::regex(&spec.pattern),
            Kind::Literal => Pattern::literal(&spec.pattern),
        };
        let replacement = match (triggers, spec.kind) {
            (Some(triggers), _) => {
                let triggers = Arc::clone(triggers);
                Replacement::with(move |caps| {
                    let m = caps.get_match();
                    triggers.lock().unwrap_or_else(|e| e.into_inner()).push((
                        i,
                        m.start(),
                        m.end(),
                    ));
                    String::new()
                })
            }
            (None, Kind::Regex) => Replacement::template(&spec.replacement),
            (None, Kind::Literal) => Replacement::literal(&spec.replacement),
        };
        builder.rule(pattern, replacement);
    }
    let mut config = Config::new();
    if let Some(max) = args.max_held {
        config = config.max_held(max);
    }
    builder.config(config);
    builder
        .build()
        .map_err(|e| match e.rule().and_then(|i| specs.get(i)) {
            Some(spec) => format!("{}: {e}", spec.origin),
            None => e.to_string(),
        })
}

// Streams stdin to stdout; with `triggers`, prints them instead of the
// text. Returns whether any trigger was seen.
fn run(rules: &Rules, specs: &[Spec], triggers: Option<&Triggers>) -> io::Result<bool> {
    let mut input = io::stdin().lock();
    let mut output = io::stdout().lock();
    let mut replacer = rules.replacer();
    let mut buf = vec![0; 256 << 10];
    let mut out = Vec::with_capacity(buf.len() + 1024);
    let mut found = false;
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        // On a held-limit error `out` still gets the text decided before
        // the held region, which is safe to send; the held text is gone.
        let fed = replacer.feed_bytes_into(&buf[..n], &mut out);
        found |= emit(&mut output, &mut out, specs, triggers)?;
        fed?;
    }
    let flushed = replacer.flush_bytes_into(&mut out);
    found |= emit(&mut output, &mut out, specs, triggers)?;
    flushed?;
    Ok(found)
}

fn emit(
    output: &mut impl Write,
    out: &mut Vec<u8>,
    specs: &[Spec],
    triggers: Option<&Triggers>,
) -> io::Result<bool> {
    let mut found = false;
    match triggers {
        None => output.write_all(out)?,
        Some(triggers) => {
            let mut triggers = triggers.lock().unwrap_or_else(|e| e.into_inner());
            found = !triggers.is_empty();
            for (rule, start, end) in triggers.drain(..) {
                let pattern =
                    serde_json::to_string(&specs[rule].pattern).map_err(io::Error::other)?;
                writeln!(output, "{rule}\t{start}\t{end}\t{pattern}")?;
            }
        }
    }
    out.clear();
    output.flush()?;
    Ok(found)
}
