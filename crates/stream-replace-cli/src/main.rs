//! `srep`: exact streaming find-and-replace from stdin to stdout.
//!
//! Each read of stdin is fed to one `stream_replace::Replacer` and the text
//! that is safe now is written and flushed at once, so `tail -f app.log |
//! srep -e '...'` shows each line as soon as no rule can still match in it,
//! not at end of input. The output is, byte for byte, what replacing the
//! whole input at once gives.
//!
//! Exit status: 0 on success (with `--check`: no rule triggered), 1 when
//! `--check` found a trigger, 2 on a usage or rule error, 3 when a block
//! rule fired (the text before the match is written, nothing from it on),
//! 4 when the stream stopped (held text over `--max-held`, which is
//! discarded, or an I/O error).

#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![warn(missing_debug_implementations)]

mod spec;

use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser};
use stream_replace::pack::{PackAction, PackRule};
use stream_replace::{Action, Block, Config, Pattern, Replacement, Replacer, Rule, Rules};

use crate::spec::{Kind, Spec, SpecError};

const LONG_ABOUT: &str = "\
Exact streaming find-and-replace: reads stdin, writes stdout, and releases \
each byte as soon as no rule can still match it (so `tail -f app.log | srep \
...` shows lines as they come). The output equals replacing the whole input \
at once: the leftmost match wins, the earlier rule wins a tie, matches do not \
overlap, replacements are not scanned again.

Rules apply in the order given on the command line, rules files and packs \
included. Regexes use the syntax of Rust's `regex` crate.";

const AFTER_HELP: &str = "\
Rules files: TOML, as [[rule]] tables, when the name ends in .toml; JSON \
otherwise, as a list (or {\"rule\": [...]}). Each rule has \"pattern\" (a \
regex) or \"literal\", and \"replacement\":

  [[rule]]
  pattern = '\\b\\d{3}-\\d{2}-\\d{4}\\b'
  replacement = \"[SSN]\"

  [{\"literal\": \"hunter2\", \"replacement\": \"***\"}]

Exit status: 0 success (--check: nothing found), 1 --check found a trigger, \
2 usage or rule error, 3 a block rule fired (the text before the match is \
written, nothing from it on), 4 the stream stopped (held text over \
--max-held, discarded; or an I/O error).";

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

    /// Add a ready pack of rules, in the pack's order, at this place among
    /// the other rules. `pii`: keys, tokens and personal data, each masked
    /// (`[EMAIL]`, `[CARD]`), except a private key or a US Social Security
    /// number, which stops the stream with status 3.
    #[arg(long = "pack", value_name = "NAME", value_parser = spec::PACKS)]
    pack: Vec<String>,

    /// Report triggers instead of rewriting: for each match, print one line
    /// of five tab-separated columns, RULE START END PATTERN ID (the 0-based
    /// rule index in command-line order, the match's byte offsets in the
    /// input, the pattern JSON-quoted, a pack rule's id or nothing) to
    /// stdout, and not the text. Block rules are reported as the others.
    /// The matched text itself is never printed.
    #[arg(long)]
    check: bool,

    /// The most bytes held back at once (default 1 MiB). Above it the held
    /// text is discarded, never printed, and srep exits with status 4.
    #[arg(long, value_name = "BYTES")]
    max_held: Option<usize>,
}

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
    let rules = match build(&specs, &args) {
        Ok(rules) => rules,
        Err(e) => return usage_error(&e),
    };
    let mut sink = Sink {
        output: io::stdout().lock(),
        specs: &specs,
        check: args.check,
        found: false,
    };
    match run(&rules, &mut sink) {
        Ok(Some(block)) => {
            report_block(&block);
            ExitCode::from(3)
        }
        Ok(None) if sink.found => ExitCode::from(1),
        Ok(None) => ExitCode::SUCCESS,
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
    for (at, name) in indices("pack").into_iter().zip(&args.pack) {
        sources.push((at, spec::from_pack(name)?));
    }
    sources.sort_by_key(|(at, _)| *at);
    Ok(sources.into_iter().flat_map(|(_, specs)| specs).collect())
}

// The reason a rule stops the stream, or `None` for a rule that rewrites.
fn block_reason(spec: &Spec) -> Option<&'static str> {
    match spec.kind {
        Kind::Pack(PackRule {
            action: PackAction::Mask,
            ..
        })
        | Kind::Regex
        | Kind::Literal => None,
        Kind::Pack(PackRule {
            action: PackAction::Block(reason),
            ..
        }) => Some(reason),
        // An action this build does not know: stopping is the safe reading.
        Kind::Pack(_) => Some("a rule whose action srep does not know"),
    }
}

// The rules, each with its id (a pack rule's, or its index), its
// validator and its action. With `--check`, nothing blocks: every match is a
// trigger to report.
fn build(specs: &[Spec], args: &Args) -> Result<Rules, String> {
    let mut builder = Rules::builder();
    for spec in specs {
        let rule = match spec.kind {
            Kind::Regex => Rule::new(
                Pattern::regex(&spec.pattern),
                Replacement::template(&spec.replacement),
            ),
            Kind::Literal => Rule::new(
                Pattern::literal(&spec.pattern),
                Replacement::literal(&spec.replacement),
            ),
            Kind::Pack(rule) => {
                let mut r = rule.rule();
                // An action this build does not know: stopping is the safe
                // reading.
                if let Some(reason) = block_reason(spec) {
                    r = r.block(reason);
                }
                r
            }
        };
        builder.add(if args.check {
            rule.action(Action::Replace)
        } else {
            rule
        });
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

// Where replaced text goes: stdout, or with `triggers` the report of them.
struct Sink<'a, W> {
    output: W,
    specs: &'a [Spec],
    // Report triggers instead of the text.
    check: bool,
    // Whether any trigger was reported.
    found: bool,
}

// Streams stdin into `sink`. Returns the block that stopped the stream, if
// one did: the text before it has been written, nothing from it on.
fn run<W: Write>(rules: &Rules, sink: &mut Sink<'_, W>) -> io::Result<Option<Block>> {
    let mut input = io::stdin().lock();
    let mut replacer = rules.replacer();
    replacer.record_triggers(sink.check, false);
    let mut buf = vec![0; 256 << 10];
    let mut out = Vec::with_capacity(buf.len() + 1024);
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        // On an error `out` still gets the text decided before the held
        // region or the blocked match, which is safe to send; the rest is
        // gone.
        let fed = replacer.feed_bytes_into(&buf[..n], &mut out);
        sink.emit(&mut replacer, &mut out)?;
        if let Err(e) = fed {
            return match e.block() {
                Some(block) => Ok(Some(block.clone())),
                None => Err(e.into()),
            };
        }
    }
    let flushed = replacer.flush_bytes_into(&mut out);
    sink.emit(&mut replacer, &mut out)?;
    match flushed {
        Ok(()) => Ok(None),
        Err(e) => match e.block() {
            Some(block) => Ok(Some(block.clone())),
            None => Err(e.into()),
        },
    }
}

impl<W: Write> Sink<'_, W> {
    // Writes `out` (or the triggers) and clears it.
    fn emit(&mut self, replacer: &mut Replacer, out: &mut Vec<u8>) -> io::Result<()> {
        if self.check {
            let triggers = replacer.take_triggers();
            self.found |= !triggers.is_empty();
            for t in triggers {
                let (rule, span) = (t.rule(), t.span());
                let spec = &self.specs[rule];
                let pattern = serde_json::to_string(&spec.pattern).map_err(io::Error::other)?;
                let id = match spec.kind {
                    Kind::Pack(rule) => rule.id,
                    Kind::Regex | Kind::Literal => "",
                };
                writeln!(
                    self.output,
                    "{rule}\t{}\t{}\t{pattern}\t{id}",
                    span.start, span.end
                )?;
            }
        } else {
            self.output.write_all(out)?;
        }
        out.clear();
        self.output.flush()
    }
}

// Names the rule and where its match started, never the matched text.
fn report_block(block: &Block) {
    eprintln!(
        "srep: blocked by rule {} ({}) at byte {} of the input; nothing from there on is written",
        block.id(),
        block.reason(),
        block.span().start
    );
}
