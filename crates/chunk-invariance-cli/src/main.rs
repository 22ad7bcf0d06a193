#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(missing_debug_implementations)]

mod json;
mod pool;
mod run;

use std::cell::RefCell;
use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::process::ExitCode;
use std::thread;
use std::time::Duration;

use chunk_invariance::{
    check_chunk_invariant_with, fail_split, ChunkInvarianceError, Chunks, ErrorKind, OutputChunk,
    Rerun, Splits, Text,
};
use clap::{ArgGroup, Args, Parser, Subcommand};

use crate::pool::{cuts_of, Pool};
use crate::run::{Framing, RunFailure, Runner};

/// Check that a streaming filter program is chunk-invariant.
#[derive(Debug, Parser)]
#[command(name = "chunk-invariance", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a filter command on the whole input and on each split of it,
    /// and report the smallest split whose output differs.
    Check(CheckArgs),
}

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("source").required(true).args(["input", "text"])))]
struct CheckArgs {
    /// The filter: a command line run by `sh -c`, reading the input on
    /// stdin and writing its output on stdout.
    #[arg(long, value_name = "COMMAND")]
    cmd: String,
    /// Read the input from this file.
    #[arg(long, value_name = "FILE")]
    input: Option<PathBuf>,
    /// The input, given on the command line.
    #[arg(long, value_name = "TEXT")]
    text: Option<String>,
    /// Which splits to try: `two` (the whole input, then every single cut),
    /// `all` (every split, inputs up to 16 units), `upto:K` (at most K
    /// parts), `random:N:SEED` (N seeded random splits).
    #[arg(long, default_value = "two", value_parser = parse_splits, value_name = "SPLITS")]
    splits: Splits,
    /// Cut between any two bytes, also inside UTF-8 characters; without
    /// it the input must be UTF-8 and is cut only between characters.
    #[arg(long)]
    bytes: bool,
    /// How chunks are written to the filter's stdin.
    #[arg(long, value_enum, default_value_t = Framing::Raw)]
    framing: Framing,
    /// Milliseconds to wait between two chunks.
    #[arg(long, default_value_t = 0, value_name = "MS")]
    pause_ms: u64,
    /// Milliseconds one run may take before it is killed and reported as a
    /// hang.
    #[arg(long, default_value_t = 10_000, value_name = "MS")]
    timeout_ms: u64,
    /// How many runs go on at once [default: the number of CPUs].
    #[arg(long, value_name = "N")]
    jobs: Option<NonZeroUsize>,
    /// Print the result as one JSON object.
    #[arg(long)]
    json: bool,
}

fn parse_splits(arg: &str) -> Result<Splits, String> {
    let number = |s: &str, what: &str| {
        s.parse::<usize>()
            .map_err(|_| format!("{what} must be a whole number, not {s:?}"))
    };
    let parts: Vec<&str> = arg.split(':').collect();
    match parts.as_slice() {
        ["two"] => Ok(Splits::TwoPart),
        ["all"] => Ok(Splits::All),
        ["upto", k] => match number(k, "K")? {
            0 => Err("upto:0 allows no split; use upto:1 or more".to_owned()),
            k => Ok(Splits::UpTo(k)),
        },
        ["random", n, seed] => {
            let seed = seed
                .parse::<u64>()
                .map_err(|_| format!("SEED must be a whole number, not {seed:?}"))?;
            Ok(Splits::random(number(n, "N")?, seed))
        }
        _ => Err(format!(
            "{arg:?} is not one of two, all, upto:K, random:N:SEED"
        )),
    }
}

fn main() -> ExitCode {
    let Command::Check(args) = Cli::parse().command;
    match check(&args) {
        Ok(code) => code,
        Err(usage) => {
            eprintln!("error: {usage}");
            ExitCode::from(2)
        }
    }
}

/// Runs the check; `Err` is a usage error.
fn check(args: &CheckArgs) -> Result<ExitCode, String> {
    let input = match (&args.input, &args.text) {
        (Some(path), _) => std::fs::read(path)
            .map_err(|e| format!("cannot read the input file {}: {e}", path.display()))?,
        (None, Some(text)) => text.clone().into_bytes(),
        (None, None) => unreachable!("clap requires --input or --text"),
    };
    let runner = Runner {
        cmd: args.cmd.clone(),
        framing: args.framing,
        pause: Duration::from_millis(args.pause_ms),
        timeout: Duration::from_millis(args.timeout_ms),
    };
    let jobs = args
        .jobs
        .or_else(|| thread::available_parallelism().ok())
        .map_or(1, NonZeroUsize::get);
    let checked = if args.bytes {
        check_input(&runner, input.as_slice(), &args.splits, jobs)
    } else {
        let text = std::str::from_utf8(&input).map_err(|e| {
            format!("the input is not UTF-8 ({e}); pass --bytes to check it as bytes")
        })?;
        check_input(&runner, text, &args.splits, jobs)
    };
    let (result, failures) = checked;
    let err = match result {
        Ok(n) => {
            if args.json {
                let mut o = json::Object::new(false);
                o.bool("ok", true);
                o.number("splits_checked", n);
                println!("{}", o.finish());
            } else {
                println!("chunk-invariant: {n} splits checked, each gave the whole-input output");
            }
            return Ok(ExitCode::SUCCESS);
        }
        Err(err) => err,
    };
    match err.kind() {
        ErrorKind::NotInvariant
        | ErrorKind::NotDeterministic
        | ErrorKind::Panicked
        | ErrorKind::FilterFailed => {}
        // The splits asked for cannot be tried on this input.
        _ => return Err(err.to_string()),
    }
    if args.json {
        println!("{}", report_json(&err, &failures));
    } else {
        println!("{err}");
    }
    Ok(ExitCode::from(1))
}

/// The run failures seen, by the split's cuts (`None`: the whole input).
type Failures = HashMap<Option<Vec<usize>>, RunFailure>;

/// An input the command checks: text, whose outputs must be text too, or
/// bytes.
trait Input: Text + AsRef<[u8]> + Sync {
    /// An output chunk for this input.
    type Output: OutputChunk<Self>;

    /// The filter's output as an output chunk, or why it cannot be one.
    fn output(bytes: Vec<u8>) -> Result<Self::Output, RunFailure>;
}

impl Input for str {
    type Output = String;

    fn output(bytes: Vec<u8>) -> Result<String, RunFailure> {
        String::from_utf8(bytes).map_err(|e| {
            RunFailure::Crash(format!(
                "the filter's output is not UTF-8 ({}); check with --bytes to compare it as bytes",
                e.utf8_error()
            ))
        })
    }
}

impl Input for [u8] {
    type Output = Vec<u8>;

    fn output(bytes: Vec<u8>) -> Result<Vec<u8>, RunFailure> {
        Ok(bytes)
    }
}

/// Checks `input` with the library's check, the runs going on ahead of it
/// on `jobs` threads.
fn check_input<T>(
    runner: &Runner,
    input: &T,
    splits: &Splits,
    jobs: usize,
) -> (Result<usize, ChunkInvarianceError>, Failures)
where
    T: ?Sized + Input,
{
    let failures = RefCell::new(Failures::new());
    let ahead = match splits.iter(input) {
        Ok(ahead) => ahead,
        Err(err) => return (Err(err), Failures::new()),
    };
    let pool = Pool::new(ahead, runner, jobs);
    let result = thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| pool.work());
        }
        // A failed run ends its split through `fail_split`, which the check
        // reports with the split.
        let output = |cuts: Option<Vec<usize>>, result: Result<Vec<u8>, RunFailure>| match result
            .and_then(T::output)
        {
            Ok(output) => output,
            Err(failure) => {
                let message = failure.to_string();
                failures.borrow_mut().insert(cuts, failure);
                fail_split(message)
            }
        };
        let result = check_chunk_invariant_with(
            |chunks: Chunks<'_, T>| {
                let chunks: Vec<&[u8]> = chunks.map(AsRef::as_ref).collect();
                vec![output(Some(cuts_of(&chunks)), pool.take(&chunks))]
            },
            |whole: &T| output(None, runner.run(&[whole.as_ref()])),
            input,
            splits.clone(),
        );
        pool.stop();
        result
    });
    (result, failures.into_inner())
}

/// The failure as one JSON object.
fn report_json(err: &ChunkInvarianceError, failures: &Failures) -> String {
    let texts: Vec<&[u8]> = match (err.mismatch(), err.failure()) {
        (Some(m), _) => vec![m.input(), m.whole(), m.streamed()],
        (None, Some(f)) => vec![f.input()],
        (None, None) => Vec::new(),
    };
    let hex = texts.iter().any(|t| std::str::from_utf8(t).is_err())
        || err
            .mismatch()
            .is_some_and(|m| m.chunks().iter().any(|c| std::str::from_utf8(c).is_err()));
    let mut o = json::Object::new(hex);
    o.bool("ok", false);
    o.str("encoding", if hex { "hex" } else { "utf-8" });
    if let Some(m) = err.mismatch() {
        o.str("kind", kind_name(err.kind()));
        o.bytes("input", m.input());
        o.byte_list("split", &m.chunks());
        o.numbers("cuts", m.cuts());
        o.number("split_number", m.split_number());
        o.bytes("whole", m.whole());
        o.bytes("streamed", m.streamed());
        o.number("first_difference", m.first_difference());
        match m.shrunk_from() {
            Some(from) => o.numbers("shrunk_from", from),
            None => o.null("shrunk_from"),
        }
        rerun_json(&mut o, m.rerun());
    } else if let Some(f) = err.failure() {
        let cuts = f.cuts().map(<[usize]>::to_vec);
        let kind = match failures.get(&cuts) {
            Some(failure) if err.kind() == ErrorKind::FilterFailed => failure.kind(),
            _ => kind_name(err.kind()),
        };
        o.str("kind", kind);
        o.bytes("input", f.input());
        match (f.chunks(), f.cuts(), f.split_number()) {
            (Some(chunks), Some(cuts), Some(number)) => {
                o.byte_list("split", &chunks);
                o.numbers("cuts", cuts);
                o.number("split_number", number);
            }
            _ => {
                // The whole-input run failed: no split to name.
                o.null("split");
                o.null("cuts");
                o.null("split_number");
            }
        }
        o.str("message", f.message());
        match f.shrunk_from() {
            Some(from) => o.numbers("shrunk_from", from),
            None => o.null("shrunk_from"),
        }
        rerun_json(&mut o, f.rerun());
    }
    o.str("report", &err.to_string());
    o.finish()
}

fn rerun_json(o: &mut json::Object, rerun: Option<&Rerun>) {
    match rerun {
        Some(Rerun::WholeGave(out)) => o.bytes("whole_again", out),
        Some(Rerun::StreamGave(out)) => o.bytes("streamed_again", out),
        Some(Rerun::StreamFailed(message)) => o.str("failed_again", message),
        Some(_) | None => o.null("rerun"),
    }
}

fn kind_name(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::NotInvariant => "not_invariant",
        ErrorKind::NotDeterministic => "not_deterministic",
        ErrorKind::Panicked => "panicked",
        ErrorKind::FilterFailed => "failed",
        _ => "error",
    }
}
