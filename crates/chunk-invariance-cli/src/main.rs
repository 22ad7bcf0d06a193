//! The `chunk-invariance` command: see the crate's README, or `--help`.

#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(missing_debug_implementations)]

use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use chunk_invariance::Splits;
use chunk_invariance_cli::{FilterCommand, Framing, parse_splits};
use clap::{ArgGroup, Args, Parser, Subcommand, ValueEnum};

/// Check that a streaming filter program is chunk-invariant.
///
/// Exit status: 0 when every split gave the whole-input output, 1 when one
/// did not (or the filter hung, stopped reading, or crashed), 2 on a usage
/// error, 3 when every split passed but the chunk boundaries could not be
/// confirmed to have reached the filter (raw framing off Linux).
#[derive(Debug, Parser)]
#[command(name = "chunk-invariance", version, about, long_about)]
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
    #[arg(long, value_enum, default_value_t = FramingArg::Raw)]
    framing: FramingArg,
    /// Milliseconds to wait between two chunks, on top of waiting (on
    /// Linux, with raw framing) until the filter has taken each chunk from
    /// the pipe.
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

/// The values of `--framing`, as [`Framing`]'s.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum FramingArg {
    /// Each chunk's bytes as they are, written and flushed on their own.
    Raw,
    /// Each chunk as its length in ASCII decimal, a newline, then its
    /// bytes; for filters that must see where the chunks end.
    LengthPrefixed,
}

impl From<FramingArg> for Framing {
    fn from(arg: FramingArg) -> Framing {
        match arg {
            FramingArg::Raw => Framing::Raw,
            FramingArg::LengthPrefixed => Framing::LengthPrefixed,
        }
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
    let mut filter = FilterCommand::new(&args.cmd)
        .framing(args.framing.into())
        .pause(Duration::from_millis(args.pause_ms))
        .timeout(Duration::from_millis(args.timeout_ms));
    if let Some(jobs) = args.jobs {
        filter = filter.jobs(jobs);
    }
    let outcome = if args.bytes {
        filter.check_bytes(&input, &args.splits)
    } else {
        let text = std::str::from_utf8(&input).map_err(|e| {
            format!("the input is not UTF-8 ({e}); pass --bytes to check it as bytes")
        })?;
        filter.check_text(text, &args.splits)
    }
    // The splits asked for cannot be tried on this input.
    .map_err(|err| err.to_string())?;
    if args.json {
        println!("{}", outcome.to_json());
    } else {
        println!("{}", outcome.report());
    }
    Ok(if outcome.is_ok() {
        ExitCode::SUCCESS
    } else if outcome.error().is_none() {
        // Every split passed, but the filter may not have seen the
        // boundaries: not a pass, and not a failure of the filter either.
        ExitCode::from(3)
    } else {
        ExitCode::from(1)
    })
}
