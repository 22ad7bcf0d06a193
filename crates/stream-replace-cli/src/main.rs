//! `srep`: exact streaming find-and-replace, as `sed` users expect it.
//!
//! The input (stdin, or files one after the other) is fed read by read to
//! one `stream_replace::Replacer`, and the text that is safe now is written
//! and flushed at once, so `tail -f app.log | srep -e '...'` shows each line
//! as soon as no rule can still match in it, not at end of input. The
//! output is, byte for byte, what replacing the whole input at once gives.
//! Rules match within a line unless `-z` is given (see `lines`); `-i` edits
//! files in place, each replaced atomically by a rename.
//!
//! Exit status: 0 on success (with `--check`: no rule triggered), 1 when
//! `--check` found a trigger, 2 on a usage or rule error, 3 when a block
//! rule fired (the text before the match is written, nothing from it on),
//! 4 when the stream stopped (held text over `--max-held`, which is
//! discarded, or an I/O error).

#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![warn(missing_debug_implementations)]

mod files;
mod lines;
mod spec;
mod stop;

use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser};
use stream_replace::pack::{PackAction, PackRule};
use stream_replace::{Action, Config, ErrorKind, Pattern, Replacement, Replacer, Rule, Rules};

use crate::lines::Mode;
use crate::spec::{Kind, Spec, SpecError};
use crate::stop::Stop;

const LONG_ABOUT: &str = "\
Exact streaming find-and-replace: reads the FILEs one after the other (stdin \
when there are none, and for `-`), writes stdout, and releases each byte as \
soon as no rule can still match it (so `tail -f app.log | srep ...` shows \
lines as they come). The output equals replacing the whole input at once: \
the leftmost match wins, the earlier rule wins a tie, matches do not \
overlap, replacements are not scanned again.

Rules apply in the order given on the command line, rules files and packs \
included, and are numbered from 1 in that order (in messages and --check).

Lines, as in sed: unless -z is given, a -e, --literal or rules-file rule \
matches within one line. `^` and `$` (and `\\A`, `\\z`) match at the start \
and end of each line; `.` and every class (`[^ ]`, `\\s`, `\\W`) leave out \
`\\n`, so no match runs into the next line. As in sed, `\\r` is part of the \
line: on a CRLF line `$` is after the `\\r`, and `[^ ]+` at the end of one \
takes it (write `[^ \\r]+`). A rule that names a newline (`\\n`) or every \
character (`[\\s\\S]`, `(?s:.)`) is refused without -z. As in sed, nothing \
comes after the last newline: `^=> ` prefixes each line and no more. With -z the input is \
one text, as sed -z sees text without NUL bytes: `^`/`$` match only at its ends (unless `(?m)`) \
and `[^ ]`, `\\s` match newlines; a rule such as `<think>[\\s\\S]*?</think>` \
needs it. --pack rules always run as the pack defines them (a PEM private \
key spans lines).

Regexes use the syntax of Rust's `regex` crate (`\\d`, `\\w`, `(?i)`, \
`{m,n}`, no backreferences). Its POSIX classes are ASCII-only, unlike sed's \
in a UTF-8 locale: `[[:alnum:]]` does not match `ë`, so `zoë@example.org` \
would be missed by `[[:alnum:]]+@...`. For letters and digits of any script \
use `\\w` (with `_`), `\\p{L}` or `\\p{Alphabetic}`.";

const AFTER_HELP: &str = "\
Rules files: TOML, as [[rule]] tables, when the name ends in .toml; JSON \
otherwise, as a list (or {\"rule\": [...]}). Each rule has \"pattern\" (a \
regex) or \"literal\", and \"replacement\":

  [[rule]]
  pattern = '\\b\\d{3}-\\d{2}-\\d{4}\\b'
  replacement = \"[SSN]\"

  [{\"literal\": \"hunter2\", \"replacement\": \"***\"}]

Files: read one after the other as one input. As in sed, a file whose last \
line has no newline gets one when more input follows (not with -z, where \
files are joined byte for byte). Every FILE is checked to be readable before \
anything is written; one that is not is a usage error. With --check, offsets \
count in the joined input.

Exit status: 0 success (--check: nothing found), 1 --check found a trigger, \
2 usage or rule error, 3 a block rule fired (the text before the match is \
written, nothing from it on; with -i the file is left as it was), 4 the \
stream stopped (held text over --max-held, discarded; or an I/O error; \
with -i the file is left as it was).";

/// Command-line arguments.
#[derive(Debug, Parser)]
#[command(name = "srep", version, about = "Exact streaming find-and-replace, like sed -E 's/.../.../g' on each line", long_about = LONG_ABOUT, after_help = AFTER_HELP)]
struct Args {
    /// A regex rule. Split at the LAST '=': the pattern may contain '=', the
    /// replacement may not (use a rules file for that). The replacement is a
    /// template: $1, ${name}, $$ for a literal '$'. Matches within a line
    /// unless -z.
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
    /// number, which stops the stream with status 3. Its rules run as the
    /// pack defines them, with or without -z.
    #[arg(long = "pack", value_name = "NAME", value_parser = spec::PACKS)]
    pack: Vec<String>,

    /// Whole-input rules (like sed -z): the input is one text, `^` and `$`
    /// match at its ends, `[^ ]`, `\s` and `(?s:.)` match newlines, and a
    /// match may span lines. Without it, rules match within a line.
    #[arg(short = 'z', long = "whole")]
    whole: bool,

    /// Edit each FILE in place: its output goes to a new file in the same
    /// directory, which then replaces it by a rename, keeping its
    /// permissions (a symbolic link's target is edited). A file whose
    /// stream stops (a block rule, --max-held, an I/O error) is left as it
    /// was, and srep stops there. Each file is a stream of its own.
    #[arg(
        short = 'i',
        long = "in-place",
        requires = "files",
        conflicts_with = "check"
    )]
    in_place: bool,

    /// Report triggers instead of rewriting: for each match, print one line
    /// of five tab-separated columns, RULE START END PATTERN ID (the rule's
    /// number, from 1 in command-line order, the match's byte offsets in the
    /// input, the pattern JSON-quoted, a pack rule's id or nothing) to
    /// stdout, and not the text. Block rules are reported as the others.
    /// The matched text itself is never printed.
    #[arg(long)]
    check: bool,

    /// The most bytes held back at once (default 1 MiB). Above it the held
    /// text is discarded, never printed, and srep exits with status 4.
    #[arg(long, value_name = "BYTES")]
    max_held: Option<usize>,

    /// Input files, read one after the other as one input; `-` is stdin.
    /// Stdin when none is given.
    #[arg(value_name = "FILE")]
    files: Vec<OsString>,
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
    let mode = if args.whole { Mode::Whole } else { Mode::Lines };
    let rules = match build(&specs, &args, mode) {
        Ok(rules) => rules,
        Err(e) => return usage_error(&e),
    };
    // See `run`: only a rule that can match empty text could match after
    // the last newline.
    let lines = Lines {
        mode,
        hold_last_newline: mode == Mode::Lines
            && specs
                .iter()
                .any(|s| !matches!(s.kind, Kind::Literal) && lines::can_match_empty(&s.pattern)),
    };
    if args.in_place {
        return in_place(&rules, lines, &specs, &args.files);
    }
    let inputs = match files::open_all(&args.files) {
        Ok(inputs) => inputs,
        Err(e) => return usage_error(&e),
    };
    let mut sink = Sink {
        output: io::stdout().lock(),
        specs: &specs,
        check: args.check,
        found: false,
        flush: true,
    };
    match run(&rules, lines, inputs, &mut sink) {
        Ok(()) if sink.found => ExitCode::from(1),
        Ok(()) => ExitCode::SUCCESS,
        Err(Stop::Write(e)) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(stop) => stop.report(&specs, "the input", ""),
    }
}

fn usage_error(message: &str) -> ExitCode {
    eprintln!("srep: {message}");
    ExitCode::from(2)
}

// Each file its own stream, written to a new file that replaces it only
// when its stream ended cleanly.
fn in_place(rules: &Rules, lines: Lines, specs: &[Spec], paths: &[OsString]) -> ExitCode {
    let targets = match files::in_place_targets(paths) {
        Ok(targets) => targets,
        Err(e) => return usage_error(&e),
    };
    for (shown, target) in &targets {
        let result = files::replace_atomically(target, |input, output| {
            let mut sink = Sink {
                output,
                specs,
                check: false,
                found: false,
                flush: false,
            };
            run(rules, lines, vec![input], &mut sink)
        });
        if let Err(stop) = result {
            return stop.report(specs, shown, "; the file is left as it was");
        }
    }
    ExitCode::SUCCESS
}

// The rules from -e, --literal, --rules and --pack, in the order they were
// given, numbered from 1.
fn specs_in_order(args: &Args, matches: &ArgMatches) -> Result<Vec<Spec>, SpecError> {
    enum Source<'a> {
        Flag(Kind, &'a str),
        File(&'a Path),
        Pack(&'a str),
    }
    let indices = |id: &str| -> Vec<usize> {
        matches
            .indices_of(id)
            .map(Iterator::collect)
            .unwrap_or_default()
    };
    let mut sources: Vec<(usize, Source<'_>)> = Vec::new();
    for (at, arg) in indices("regex").into_iter().zip(&args.regex) {
        sources.push((at, Source::Flag(Kind::Regex, arg)));
    }
    for (at, arg) in indices("literal").into_iter().zip(&args.literal) {
        sources.push((at, Source::Flag(Kind::Literal, arg)));
    }
    for (at, path) in indices("rules").into_iter().zip(&args.rules) {
        sources.push((at, Source::File(path)));
    }
    for (at, name) in indices("pack").into_iter().zip(&args.pack) {
        sources.push((at, Source::Pack(name)));
    }
    sources.sort_by_key(|(at, _)| *at);
    let mut specs = Vec::new();
    for (_, source) in sources {
        let next = specs.len() + 1;
        match source {
            Source::Flag(kind, arg) => specs.push(spec::from_flag(kind, next, arg)?),
            Source::File(path) => specs.extend(spec::from_file(path, next)?),
            Source::Pack(name) => specs.extend(spec::from_pack(name, next)?),
        }
    }
    Ok(specs)
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
// validator and its action, in `mode`. With `--check`, nothing blocks:
// every match is a trigger to report.
fn build(specs: &[Spec], args: &Args, mode: Mode) -> Result<Rules, String> {
    let mut rules = Vec::with_capacity(specs.len());
    for spec in specs {
        let rule = match spec.kind {
            Kind::Regex => Rule::new(
                Pattern::regex(
                    lines::pattern_for(&spec.pattern, mode)
                        .map_err(|e| format!("{}: {e}", spec.name()))?,
                ),
                Replacement::template(&spec.replacement),
            ),
            Kind::Literal => {
                lines::literal_for(&spec.pattern, mode)
                    .map_err(|e| format!("{}: {e}", spec.name()))?;
                Rule::new(
                    Pattern::literal(&spec.pattern),
                    Replacement::literal(&spec.replacement),
                )
            }
            Kind::Pack(rule) => {
                let mut r = rule.rule();
                if let Some(reason) = block_reason(spec) {
                    r = r.block(reason);
                }
                r
            }
        };
        rules.push(if args.check {
            rule.action(Action::Replace)
        } else {
            rule
        });
    }
    let mut config = Config::new();
    if let Some(max) = args.max_held {
        config = config.max_held(max);
    }
    let build = |rules: &[Rule]| {
        let mut builder = Rules::builder();
        for rule in rules {
            builder.add(rule.clone());
        }
        builder.config(config.clone());
        builder.build()
    };
    build(&rules).map_err(|e| {
        let Some(i) = e.rule().filter(|&i| i < specs.len()) else {
            return match e.kind() {
                ErrorKind::TooBig => format!(
                    "too big: the rules together compile to more than {} bytes; give \
                     fewer rules",
                    config.get_size_limit()
                ),
                _ => format!("cannot build the rules: {}", message_of(&e)),
            };
        };
        let name = specs[i].name();
        match e.kind() {
            ErrorKind::Syntax => match std::error::Error::source(&e) {
                Some(cause) => format!("{name}: invalid regex:\n{cause}"),
                None => format!("{name}: invalid regex: {}", message_of(&e)),
            },
            ErrorKind::TooBig => {
                let limit = config.get_size_limit();
                if i > 0 && build(&rules[i..=i]).is_ok() {
                    format!(
                        "{name}: too big: rules 1 to {} together compile to more than \
                         {limit} bytes, though rules 1 to {i} fit and this one fits \
                         alone; give fewer rules",
                        i + 1
                    )
                } else {
                    format!(
                        "{name}: too big: it compiles to more than {limit} bytes; make \
                         it smaller (fewer or smaller counted repetitions, ASCII classes \
                         such as [A-Za-z0-9_] for \\w)"
                    )
                }
            }
            _ => format!("{name}: {}", message_of(&e)),
        }
    })
}

// A build error's message without the library's own naming of the rule
// (`rule 0 ("pattern"): `): srep names rules its own way.
fn message_of(e: &stream_replace::Error) -> String {
    let full = e.to_string();
    let Some(i) = e.rule() else {
        return full;
    };
    let mut prefixes = vec![format!("rule {i}: ")];
    if let Some(p) = e.pattern() {
        prefixes.push(format!("rule {i} ({p:?}): "));
        // The library shows a long pattern's first 80 characters.
        if let Some((cut, _)) = p.char_indices().nth(80) {
            prefixes.push(format!(
                "rule {i} ({:?}... {} bytes in all): ",
                &p[..cut],
                p.len()
            ));
        }
    }
    for prefix in prefixes.iter().rev() {
        if let Some(rest) = full.strip_prefix(prefix.as_str()) {
            return rest.to_owned();
        }
    }
    full
}

// Where replaced text goes: the output, or with `check` the report of
// triggers.
struct Sink<'a, W> {
    output: W,
    specs: &'a [Spec],
    // Report triggers instead of the text.
    check: bool,
    // Whether any trigger was reported.
    found: bool,
    // Flush after each read, for a reader at the other end of a pipe.
    flush: bool,
}

// How `run` treats line ends.
#[derive(Clone, Copy, Debug)]
struct Lines {
    mode: Mode,
    // Hold each read's final newline back from the engine until more input
    // follows, and write the input's last one after the engine's output.
    hold_last_newline: bool,
}

// A newline `run` owes the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Owed {
    // None.
    Nothing,
    // The input's own, held back: fed before more input, or written after
    // the engine's output at the end.
    Held,
    // One that ends a file's unended last line: fed only before more input.
    Added,
}

// Streams the inputs, one after the other, into `sink`. When a block rule
// fires, the text before its match has been written, nothing from it on.
//
// In line mode the input's lines are sed's: a last line without a newline
// is ended when another file follows, and nothing comes after the last
// newline. A rule that can match empty text (`^`, `$`) would otherwise match
// once more there (`printf 'a\n' | srep -e '^=> '` giving `> a\n> `), so
// with such a rule each read's final newline reaches the engine only with
// the next read, and the input's last one is written after the engine's
// output. No line rule can match a newline or see past one, and the end of
// the input looks to every rule as the newline it stands for, so this
// changes no other match. The cost: a line's last bytes may wait for the
// next read. For the same reason an empty input gives an empty output.
fn run<W: Write>(
    rules: &Rules,
    lines: Lines,
    inputs: Vec<files::Input>,
    sink: &mut Sink<'_, W>,
) -> Result<(), Stop> {
    let mut replacer = rules.replacer();
    replacer.record_triggers(sink.check, false);
    let mut buf = vec![0; 256 << 10];
    let mut out = Vec::with_capacity(buf.len() + 1024);
    let mut owed = Owed::Nothing;
    let mut fed_any = false;
    for input in inputs {
        let name = input.name();
        let mut input = input.open().map_err(|e| Stop::Read(name.clone(), e))?;
        // The last byte of this input, once it has one.
        let mut last = None;
        loop {
            let n = match input.read(&mut buf) {
                Ok(0) => {
                    // Only the end of an input ends a line: a read may stop
                    // anywhere.
                    if lines.mode == Mode::Lines && last.is_some_and(|b| b != b'\n') {
                        owed = Owed::Added;
                    }
                    break;
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Stop::Read(name, e)),
            };
            last = Some(buf[n - 1]);
            let mut data = &buf[..n];
            let mut now = Owed::Nothing;
            if lines.hold_last_newline && data.ends_with(b"\n") {
                data = &data[..n - 1];
                now = Owed::Held;
            }
            if owed != Owed::Nothing {
                let fed = replacer.feed_bytes_into(b"\n", &mut out);
                sink.emit(&mut replacer, &mut out).map_err(Stop::Write)?;
                fed?;
            }
            owed = now;
            fed_any = true;
            // On an error `out` still gets the text decided before the held
            // region or the blocked match, which is safe to send; the rest
            // is gone.
            let fed = replacer.feed_bytes_into(data, &mut out);
            sink.emit(&mut replacer, &mut out).map_err(Stop::Write)?;
            fed?;
        }
    }
    if lines.mode == Mode::Whole || fed_any {
        let flushed = replacer.flush_bytes_into(&mut out);
        sink.emit(&mut replacer, &mut out).map_err(Stop::Write)?;
        flushed?;
    }
    if owed == Owed::Held && !sink.check {
        sink.output.write_all(b"\n").map_err(Stop::Write)?;
    }
    sink.output.flush().map_err(Stop::Write)
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
                    "{}\t{}\t{}\t{pattern}\t{id}",
                    spec.number, span.start, span.end
                )?;
            }
        } else {
            self.output.write_all(out)?;
        }
        out.clear();
        if self.flush {
            self.output.flush()?;
        }
        Ok(())
    }
}
