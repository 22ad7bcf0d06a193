//! A check of a filter command over the splits of one input, and its
//! outcome as text and as JSON.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::thread;

use chunk_invariance::{
    ChunkInvarianceError, Chunks, ErrorKind, OutputChunk, Rerun, Splits, Text,
    check_chunk_invariant_with, fail_split,
};

use crate::json;
use crate::pool::{Pool, cuts_of};
use crate::run::{FilterCommand, RunFailure, RunOutput};

/// The run failures seen, by the split's cuts (`None`: the whole input).
type Failures = HashMap<Option<Vec<usize>>, RunFailure>;

/// What a check found: every split gave the whole-input output, or the
/// library's report of the one that did not.
///
/// A pass counts only if the filter's reads saw the chunk boundaries: when
/// that could not be confirmed for some runs (raw framing off Linux), the
/// outcome is not ok, and its report says so and how to make the
/// boundaries reach the filter.
///
/// [`report`](Outcome::report) is the text the `chunk-invariance` command
/// prints, [`to_json`](Outcome::to_json) what it prints with `--json`.
///
/// # Example
///
/// ```
/// use chunk_invariance::Splits;
/// use chunk_invariance_cli::FilterCommand;
///
/// let outcome = FilterCommand::new("cat").check_text("abc", &Splits::All)?;
/// assert!(outcome.is_ok());
/// assert_eq!(outcome.report(), "chunk-invariant: 4 splits checked, each gave the whole-input output");
/// assert_eq!(outcome.to_json(), r#"{"ok":true,"splits_checked":4}"#);
/// # Ok::<(), chunk_invariance::ChunkInvarianceError>(())
/// ```
#[derive(Debug)]
pub struct Outcome {
    result: Result<usize, ChunkInvarianceError>,
    failures: Failures,
    /// How many runs wrote a chunk before the filter was seen to take the
    /// one before.
    unconfirmed: usize,
}

impl Outcome {
    /// The outcome of a check run in this process, such as one of a
    /// filter from [`chunk_invariance::examples`].
    ///
    /// # Errors
    ///
    /// Returns `result`'s error when it says the splits could not be tried
    /// (an input too long for [`Splits::All`], an explicit split that does
    /// not join back to the input, ...) rather than that the filter
    /// failed them.
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance::check_chunk_invariant;
    /// use chunk_invariance::examples::{redact, redact_each_chunk};
    /// use chunk_invariance_cli::Outcome;
    ///
    /// let outcome = Outcome::from_result(check_chunk_invariant(redact_each_chunk, redact, "use sk-AbCd1234 now"))?;
    /// assert!(outcome.to_json().contains(r#""split":["use s","k-AbCd1234 now"]"#));
    /// # Ok::<(), chunk_invariance::ChunkInvarianceError>(())
    /// ```
    pub fn from_result(
        result: Result<usize, ChunkInvarianceError>,
    ) -> Result<Outcome, ChunkInvarianceError> {
        Outcome::new(result, Failures::new(), 0)
    }

    fn new(
        result: Result<usize, ChunkInvarianceError>,
        failures: Failures,
        unconfirmed: usize,
    ) -> Result<Outcome, ChunkInvarianceError> {
        match &result {
            Ok(_) => {}
            Err(err) => match err.kind() {
                ErrorKind::NotInvariant
                | ErrorKind::NotDeterministic
                | ErrorKind::Panicked
                | ErrorKind::FilterFailed => {}
                _ => return Err(result.unwrap_err()),
            },
        }
        Ok(Outcome {
            result,
            failures,
            unconfirmed,
        })
    }

    /// Whether every split gave the whole-input output, and the filter's
    /// reads saw the chunk boundaries of every run.
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance_cli::FilterCommand;
    ///
    /// assert!(!FilterCommand::new("exit 1").check_text("ab", &Default::default())?.is_ok());
    /// # Ok::<(), chunk_invariance::ChunkInvarianceError>(())
    /// ```
    pub fn is_ok(&self) -> bool {
        self.result.is_ok() && self.unconfirmed == 0
    }

    /// How many runs of a split wrote a chunk without confirming that the
    /// filter had taken the one before (raw framing off Linux), so that
    /// its reads may have joined chunks; 0 when every boundary was seen.
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance_cli::FilterCommand;
    ///
    /// let outcome = FilterCommand::new("cat").check_text("abc", &Default::default())?;
    /// # #[cfg(target_os = "linux")]
    /// assert_eq!(outcome.unconfirmed_runs(), 0);
    /// # Ok::<(), chunk_invariance::ChunkInvarianceError>(())
    /// ```
    pub fn unconfirmed_runs(&self) -> usize {
        self.unconfirmed
    }

    /// How many splits were checked, when all of them gave the
    /// whole-input output (see also
    /// [`unconfirmed_runs`](Outcome::unconfirmed_runs)).
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance_cli::FilterCommand;
    ///
    /// let outcome = FilterCommand::new("cat").check_bytes("é".as_bytes(), &Default::default())?;
    /// assert_eq!(outcome.splits_checked(), Some(2));
    /// # Ok::<(), chunk_invariance::ChunkInvarianceError>(())
    /// ```
    pub fn splits_checked(&self) -> Option<usize> {
        self.result.as_ref().ok().copied()
    }

    /// The library's report of the failure, if the check failed.
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance::ErrorKind;
    /// use chunk_invariance_cli::FilterCommand;
    ///
    /// let outcome = FilterCommand::new("exit 1").check_text("ab", &Default::default())?;
    /// assert_eq!(outcome.error().map(|e| e.kind()), Some(ErrorKind::FilterFailed));
    /// # Ok::<(), chunk_invariance::ChunkInvarianceError>(())
    /// ```
    pub fn error(&self) -> Option<&ChunkInvarianceError> {
        self.result.as_ref().err()
    }

    /// Why the run that failed gave no output, when the failure is a run
    /// of the filter command that hung or crashed.
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance_cli::FilterCommand;
    ///
    /// let outcome = FilterCommand::new("exit 1").check_text("ab", &Default::default())?;
    /// assert_eq!(outcome.run_failure().map(|f| f.kind()), Some("crash"));
    /// # Ok::<(), chunk_invariance::ChunkInvarianceError>(())
    /// ```
    pub fn run_failure(&self) -> Option<&RunFailure> {
        let err = self.error()?;
        if err.kind() != ErrorKind::FilterFailed {
            return None;
        }
        let cuts = err.failure()?.cuts().map(<[usize]>::to_vec);
        self.failures.get(&cuts)
    }

    /// The outcome as text: the library's report of the failure, a line
    /// that says how many splits passed, or that they passed but the
    /// boundaries may not have reached the filter, and how to make them.
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance_cli::FilterCommand;
    ///
    /// let outcome = FilterCommand::new("exit 1").check_text("ab", &Default::default())?;
    /// assert!(outcome.report().starts_with("whole-input filter failed"));
    /// # Ok::<(), chunk_invariance::ChunkInvarianceError>(())
    /// ```
    pub fn report(&self) -> String {
        match &self.result {
            Ok(n) if self.unconfirmed > 0 => format!(
                "not confirmed: {n} splits checked, each gave the whole-input output, but the \
                 chunk boundaries may not have reached the filter: in {u} of the runs a chunk \
                 was written before the filter was seen to take the one before, so one read \
                 may have joined them. To make the boundaries reach it, use length-prefixed \
                 framing (--framing length-prefixed), or a pause between chunks (--pause-ms) \
                 longer than the filter takes to start and read one",
                u = self.unconfirmed
            ),
            Ok(n) => {
                format!("chunk-invariant: {n} splits checked, each gave the whole-input output")
            }
            Err(err) => err.to_string(),
        }
    }

    /// The outcome as one JSON object.
    ///
    /// On success: `ok` (`true`) and `splits_checked`. When every split
    /// passed but the boundaries were not confirmed: `ok` (`false`),
    /// `kind` (`unconfirmed`), `splits_checked`, `unconfirmed_runs` and
    /// `report`. On a failure: `ok` (`false`), `kind` (`not_invariant`,
    /// `not_deterministic`, `panicked`, `failed`, or for a run of a
    /// command `timeout`, `not_reading` or `crash`), `encoding`, `input`, `split`, `cuts`, `split_number`
    /// (`null` for the whole input), `whole`, `streamed` and
    /// `first_difference` for a wrong output, `message` for a failed run,
    /// `shrunk_from`, what a re-run gave if it differed (`whole_again`,
    /// `streamed_again`, `failed_again`, else `rerun: null`), and `report`,
    /// the text of [`report`](Outcome::report). Byte strings are UTF-8
    /// text, or lowercase hex when `encoding` is `hex` (an input cut
    /// inside a character).
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance_cli::FilterCommand;
    ///
    /// let json = FilterCommand::new("exit 1").check_text("ab", &Default::default())?.to_json();
    /// assert!(json.starts_with(r#"{"ok":false,"encoding":"utf-8","kind":"crash","input":"ab","split":null"#));
    /// # Ok::<(), chunk_invariance::ChunkInvarianceError>(())
    /// ```
    pub fn to_json(&self) -> String {
        match &self.result {
            Ok(n) if self.unconfirmed > 0 => {
                let mut o = json::Object::new(false);
                o.bool("ok", false);
                o.str("kind", "unconfirmed");
                o.number("splits_checked", *n);
                o.number("unconfirmed_runs", self.unconfirmed);
                o.str("report", &self.report());
                o.finish()
            }
            Ok(n) => {
                let mut o = json::Object::new(false);
                o.bool("ok", true);
                o.number("splits_checked", *n);
                o.finish()
            }
            Err(err) => report_json(err, self.run_failure()),
        }
    }
}

impl FilterCommand {
    /// Checks the filter on a text input, cut only between characters; its
    /// outputs must be UTF-8 too.
    ///
    /// Runs the command once on the whole input and once per split, on up
    /// to [`jobs`](FilterCommand::jobs) threads a bounded distance ahead of
    /// the library's check, which orders, shrinks, re-runs and reports as
    /// it does for a filter in this process. A run that hangs or crashes
    /// (or, here, writes invalid UTF-8) fails the split it ran.
    ///
    /// # Errors
    ///
    /// When `splits` cannot be tried on `input` (see [`Outcome::from_result`]).
    /// A filter that fails is an `Ok` outcome that says so.
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance::Splits;
    /// use chunk_invariance_cli::FilterCommand;
    ///
    /// let outcome = FilterCommand::new("cat").check_text("use sk-AbCd1234 now", &Splits::UpTo(3))?;
    /// assert_eq!(outcome.splits_checked(), Some(1 + 18 + 153));
    /// assert!(FilterCommand::new("cat").check_text("seventeen chars!!", &Splits::All).is_err());
    /// # Ok::<(), chunk_invariance::ChunkInvarianceError>(())
    /// ```
    pub fn check_text(
        &self,
        input: &str,
        splits: &Splits,
    ) -> Result<Outcome, ChunkInvarianceError> {
        let (result, failures, unconfirmed) = check_input(self, input, splits);
        Outcome::new(result, failures, unconfirmed)
    }

    /// Checks the filter on a byte input, cut between any two bytes, also
    /// inside UTF-8 characters; its outputs are compared as bytes.
    ///
    /// # Errors
    ///
    /// When `splits` cannot be tried on `input`, as for
    /// [`check_text`](FilterCommand::check_text).
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance::Splits;
    /// use chunk_invariance_cli::FilterCommand;
    ///
    /// let outcome = FilterCommand::new("cat").check_bytes("é€".as_bytes(), &Splits::All)?;
    /// assert_eq!(outcome.splits_checked(), Some(16));
    /// # Ok::<(), chunk_invariance::ChunkInvarianceError>(())
    /// ```
    pub fn check_bytes(
        &self,
        input: &[u8],
        splits: &Splits,
    ) -> Result<Outcome, ChunkInvarianceError> {
        let (result, failures, unconfirmed) = check_input(self, input, splits);
        Outcome::new(result, failures, unconfirmed)
    }
}

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
                "the filter's output is not UTF-8 ({}); check the input as bytes to compare outputs as bytes",
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
/// on the filter's `jobs` threads.
fn check_input<T>(
    filter: &FilterCommand,
    input: &T,
    splits: &Splits,
) -> (Result<usize, ChunkInvarianceError>, Failures, usize)
where
    T: ?Sized + Input,
{
    let jobs = filter.jobs.get();
    let failures = RefCell::new(Failures::new());
    let unconfirmed = Cell::new(0);
    let ahead = match splits.iter(input) {
        Ok(ahead) => ahead,
        Err(err) => return (Err(err), Failures::new(), 0),
    };
    let pool = Pool::new(ahead, filter, jobs);
    let result = thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| pool.work());
        }
        // A failed run ends its split through `fail_split`, which the check
        // reports with the split.
        let output = |cuts: Option<Vec<usize>>, result: Result<RunOutput, RunFailure>| match result
            .and_then(|run| {
                if !run.boundaries_seen() {
                    unconfirmed.set(unconfirmed.get() + 1);
                }
                T::output(run.into_output())
            }) {
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
            |whole: &T| output(None, filter.run(&[whole.as_ref()])),
            input,
            splits.clone(),
        );
        pool.stop();
        result
    });
    (result, failures.into_inner(), unconfirmed.get())
}

/// The failure as one JSON object; `run_failure` names a failed run's
/// kind.
fn report_json(err: &ChunkInvarianceError, run_failure: Option<&RunFailure>) -> String {
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
        o.str(
            "kind",
            run_failure.map_or_else(|| kind_name(err.kind()), RunFailure::kind),
        );
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
