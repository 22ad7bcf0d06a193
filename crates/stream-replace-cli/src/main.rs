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

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser};
use stream_replace::pack::{PackAction, PackRule};
use stream_replace::{Config, Pattern, Replacement, Rules};

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
    let triggers = args.check.then_some(&triggers);
    let sentinel = Sentinel::new();
    let rules = match build(&specs, &args, triggers, &sentinel) {
        Ok(rules) => rules,
        Err(e) => return usage_error(&e),
    };
    let mut sink = Sink {
        output: io::stdout().lock(),
        specs: &specs,
        triggers,
        // Output is searched for markers only when a rule can make one.
        sentinel: (triggers.is_none() && specs.iter().any(|s| block_reason(s).is_some()))
            .then_some(&sentinel),
        found: false,
    };
    match run(&rules, &mut sink) {
        Ok(Some(block)) => {
            report_block(&specs, block);
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

// How a block rule's match shows in the replaced text: `prefix`, the rule
// index, `:`, the match's start offset, `\u{1}`.
//
// This makes the block exact without a stop in the library. A replacement
// is computed only once its match is decided, and it is appended to the
// output right after exactly the text that is safe before the match (every
// byte before it decided, earlier matches replaced) and as one piece, never
// split across two outputs. So the text before the first marker is what
// replacing the whole input would give before the match, and none of the
// match or what follows has been written when srep sees the marker and
// stops. The prefix holds 128 bits this process drew at start and never
// prints; input that contained it anyway would only stop srep early, which
// fails safe.
#[derive(Clone, Debug)]
struct Sentinel {
    prefix: String,
}

impl Sentinel {
    fn new() -> Sentinel {
        // Each `RandomState` is keyed from the OS's randomness (then stepped
        // per instance): two SipHash outputs make a nonce that input cannot
        // predict. Not a secret against this process's own memory, and it
        // need not be.
        let time = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let half = |n: u8| RandomState::new().hash_one((n, time, std::process::id()));
        Sentinel {
            prefix: format!("\u{1}srep-block-{:016x}{:016x}:", half(0), half(1)),
        }
    }

    fn marker(&self, rule: usize, start: usize) -> String {
        format!("{}{rule}:{start}\u{1}", self.prefix)
    }

    // The offset of the first marker in `out`, and the (rule, start) it
    // names, if it parses.
    fn find(&self, out: &[u8]) -> Option<(usize, Option<(usize, usize)>)> {
        let prefix = self.prefix.as_bytes();
        let at = out
            .iter()
            .enumerate()
            .filter(|&(_, &b)| b == prefix[0])
            .map(|(i, _)| i)
            .find(|&i| out[i..].starts_with(prefix))?;
        let rest = &out[at + prefix.len()..];
        let named = rest
            .iter()
            .position(|&b| b == b'\x01')
            .and_then(|end| std::str::from_utf8(&rest[..end]).ok())
            .and_then(|s| s.split_once(':'))
            .and_then(|(rule, start)| Some((rule.parse().ok()?, start.parse().ok()?)));
        Some((at, named))
    }
}

fn build(
    specs: &[Spec],
    args: &Args,
    triggers: Option<&Triggers>,
    sentinel: &Sentinel,
) -> Result<Rules, String> {
    let mut builder = Rules::builder();
    for (i, spec) in specs.iter().enumerate() {
        let pattern = match spec.kind {
            Kind::Regex | Kind::Pack(_) => Pattern::regex(&spec.pattern),
            Kind::Literal => Pattern::literal(&spec.pattern),
        };
        let replacement = match (triggers, spec.kind) {
            (Some(triggers), kind) => {
                let triggers = Arc::clone(triggers);
                let valid = match kind {
                    Kind::Pack(rule) => rule.validator,
                    Kind::Regex | Kind::Literal => None,
                };
                Replacement::with(move |caps| {
                    // A match the validator rejects would pass unchanged:
                    // not a trigger.
                    if valid.is_some_and(|valid| !valid(caps.as_str())) {
                        return String::new();
                    }
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
            (None, Kind::Pack(rule)) => match block_reason(spec) {
                None => rule.replacement(),
                Some(_) => {
                    let sentinel = sentinel.clone();
                    let valid = rule.validator;
                    Replacement::with(move |caps| {
                        let text = caps.as_str();
                        // As the pack's own replacement does: a match the
                        // validator rejects passes unchanged.
                        if valid.is_some_and(|valid| !valid(text)) {
                            return text.to_owned();
                        }
                        sentinel.marker(i, caps.get_match().start())
                    })
                }
            },
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

// Where replaced text goes: stdout, or with `triggers` the report of them.
struct Sink<'a, W> {
    output: W,
    specs: &'a [Spec],
    triggers: Option<&'a Triggers>,
    sentinel: Option<&'a Sentinel>,
    // Whether any trigger was reported.
    found: bool,
}

// A block rule fired: (rule, start of the match) when the marker names
// them.
type Block = Option<(usize, usize)>;

// Streams stdin into `sink`. Returns the block that stopped the stream, if
// one did.
fn run<W: Write>(rules: &Rules, sink: &mut Sink<'_, W>) -> io::Result<Option<Block>> {
    let mut input = io::stdin().lock();
    let mut replacer = rules.replacer();
    let mut buf = vec![0; 256 << 10];
    let mut out = Vec::with_capacity(buf.len() + 1024);
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
        if let Some(block) = sink.emit(&mut out)? {
            return Ok(Some(block));
        }
        fed?;
    }
    let flushed = replacer.flush_bytes_into(&mut out);
    if let Some(block) = sink.emit(&mut out)? {
        return Ok(Some(block));
    }
    flushed?;
    Ok(None)
}

impl<W: Write> Sink<'_, W> {
    // Writes `out` (or the triggers) and clears it; at a block marker,
    // writes only the text before it and returns the block.
    fn emit(&mut self, out: &mut Vec<u8>) -> io::Result<Option<Block>> {
        let mut block = None;
        match self.triggers {
            None => {
                let mut text = &out[..];
                if let Some((at, named)) = self.sentinel.and_then(|s| s.find(out)) {
                    text = &out[..at];
                    block = Some(named);
                }
                self.output.write_all(text)?;
            }
            Some(triggers) => {
                let mut triggers = triggers.lock().unwrap_or_else(|e| e.into_inner());
                self.found |= !triggers.is_empty();
                for (rule, start, end) in triggers.drain(..) {
                    let spec = &self.specs[rule];
                    let pattern = serde_json::to_string(&spec.pattern).map_err(io::Error::other)?;
                    let id = match spec.kind {
                        Kind::Pack(rule) => rule.id,
                        Kind::Regex | Kind::Literal => "",
                    };
                    writeln!(self.output, "{rule}\t{start}\t{end}\t{pattern}\t{id}")?;
                }
            }
        }
        out.clear();
        self.output.flush()?;
        Ok(block)
    }
}

// Names the rule and where its match started, never the matched text.
fn report_block(specs: &[Spec], block: Block) {
    let named = block.and_then(|(rule, start)| {
        let spec = specs.get(rule)?;
        let reason = block_reason(spec)?;
        let Kind::Pack(pack_rule) = spec.kind else {
            return None;
        };
        Some((pack_rule.id, reason, start))
    });
    match named {
        Some((id, reason, start)) => eprintln!(
            "srep: blocked by rule {id} ({reason}) at byte {start} of the input; \
             nothing from there on is written"
        ),
        None => eprintln!(
            "srep: blocked: the input holds this run's block marker; \
             nothing from there on is written"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentinel_finds_its_first_marker_and_no_other_runs() {
        let s = Sentinel::new();
        let other = Sentinel::new();
        assert_ne!(s.prefix, other.prefix);
        let mut out = b"safe \x01 text ".to_vec();
        let at = out.len();
        out.extend(other.marker(1, 2).as_bytes());
        assert_eq!(s.find(&out), None);
        let at2 = out.len();
        out.extend(s.marker(11, 4242).as_bytes());
        out.extend(b"after");
        out.extend(s.marker(3, 9).as_bytes());
        assert_eq!(s.find(&out), Some((at2, Some((11, 4242)))));
        assert_eq!(other.find(&out), Some((at, Some((1, 2)))));
        // A prefix without a well-formed rest still stops the stream.
        let forged = format!("x{}oops", s.prefix);
        assert_eq!(s.find(forged.as_bytes()), Some((1, None)));
    }
}
