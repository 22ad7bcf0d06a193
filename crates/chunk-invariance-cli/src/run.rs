//! One run of the filter command: spawn it, feed it the chunks of one
//! split over standard input, and read its standard output, within a time
//! limit.

use std::fmt;
use std::io::{Read, Write};
use std::num::NonZeroUsize;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// How the chunks of one split are written to the filter's standard input.
///
/// # Example
///
/// ```
/// use chunk_invariance_cli::{FilterCommand, Framing};
///
/// // `head -n 1` reads the first frame's length line.
/// let filter = FilterCommand::new("head -n 1").framing(Framing::LengthPrefixed);
/// assert_eq!(filter.run(&[b"abc", b"de"])?, b"3\n");
/// # Ok::<(), chunk_invariance_cli::RunFailure>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Framing {
    /// Each chunk's bytes as they are, written and flushed on their own.
    #[default]
    Raw,
    /// Each chunk as its length in ASCII decimal, a newline, then its
    /// bytes; for filters that must see where the chunks end.
    LengthPrefixed,
}

/// A program run as a stream filter: a command line that reads its input
/// on standard input and writes its output on standard output.
///
/// Built with by-value setters; [`run`](FilterCommand::run) runs it once
/// on the chunks of one split, and
/// [`check_text`](FilterCommand::check_text) and
/// [`check_bytes`](FilterCommand::check_bytes) check it over many.
///
/// # Example
///
/// ```
/// use std::time::Duration;
/// use chunk_invariance_cli::FilterCommand;
///
/// let filter = FilterCommand::new("tr a-z A-Z").timeout(Duration::from_secs(5));
/// assert_eq!(filter.run(&[b"ab", b"c"])?, b"ABC");
/// # Ok::<(), chunk_invariance_cli::RunFailure>(())
/// ```
#[derive(Clone, Debug)]
pub struct FilterCommand {
    /// The command line, given to the platform's shell.
    cmd: String,
    framing: Framing,
    /// How long to wait between two chunks.
    pause: Duration,
    /// How long one run may take, from spawn to the end of its output.
    timeout: Duration,
    /// How many runs a check may have going on at once.
    pub(crate) jobs: NonZeroUsize,
}

/// Why a run gave no output to compare.
///
/// # Example
///
/// ```
/// use chunk_invariance_cli::{FilterCommand, RunFailure};
///
/// let failure = FilterCommand::new("exit 3").run(&[b"abc"]).unwrap_err();
/// assert_eq!(failure, RunFailure::Crash("the filter exited with status 3".to_owned()));
/// assert_eq!(failure.kind(), "crash");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RunFailure {
    /// The run did not finish in time: the filter hangs (or is too slow)
    /// on this split. It was killed.
    Timeout(Duration),
    /// The filter could not start, exited with an error status, or was
    /// killed by a signal; why, with the end of its standard error.
    Crash(String),
}

impl RunFailure {
    /// The name a machine reads in a JSON report: `timeout` or `crash`.
    ///
    /// # Example
    ///
    /// ```
    /// use std::time::Duration;
    /// use chunk_invariance_cli::RunFailure;
    ///
    /// assert_eq!(RunFailure::Timeout(Duration::from_secs(1)).kind(), "timeout");
    /// ```
    pub fn kind(&self) -> &'static str {
        match self {
            RunFailure::Timeout(_) => "timeout",
            RunFailure::Crash(_) => "crash",
        }
    }
}

impl fmt::Display for RunFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunFailure::Timeout(limit) => write!(
                f,
                "no result after {} ms: the filter hangs; it was killed",
                limit.as_millis()
            ),
            RunFailure::Crash(why) => f.write_str(why),
        }
    }
}

/// How much of a failed filter's standard error a report quotes.
const STDERR_SHOWN: usize = 300;

impl FilterCommand {
    /// A filter that runs `cmd` with `sh -c` (`cmd /C` off Unix): raw
    /// framing, no pause, a 10 s time limit per run, and as many runs at
    /// once as there are CPUs.
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance_cli::FilterCommand;
    ///
    /// assert_eq!(FilterCommand::new("cat").run(&[b"a", b"b"])?, b"ab");
    /// # Ok::<(), chunk_invariance_cli::RunFailure>(())
    /// ```
    pub fn new(cmd: impl Into<String>) -> FilterCommand {
        FilterCommand {
            cmd: cmd.into(),
            framing: Framing::Raw,
            pause: Duration::ZERO,
            timeout: Duration::from_secs(10),
            jobs: thread::available_parallelism().unwrap_or(NonZeroUsize::MIN),
        }
    }

    /// How the chunks are written to the filter's standard input.
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance_cli::{FilterCommand, Framing};
    ///
    /// let filter = FilterCommand::new("cat").framing(Framing::LengthPrefixed);
    /// assert_eq!(filter.run(&[b"ab", b""])?, b"2\nab0\n");
    /// # Ok::<(), chunk_invariance_cli::RunFailure>(())
    /// ```
    pub fn framing(mut self, framing: Framing) -> FilterCommand {
        self.framing = framing;
        self
    }

    /// How long to wait between two chunks, so that the filter's reads
    /// are likely to see the chunks apart.
    ///
    /// # Example
    ///
    /// ```
    /// use std::time::Duration;
    /// use chunk_invariance_cli::FilterCommand;
    ///
    /// let filter = FilterCommand::new("cat").pause(Duration::from_millis(1));
    /// assert_eq!(filter.run(&[b"a", b"b"])?, b"ab");
    /// # Ok::<(), chunk_invariance_cli::RunFailure>(())
    /// ```
    pub fn pause(mut self, pause: Duration) -> FilterCommand {
        self.pause = pause;
        self
    }

    /// How long one run may take before it is killed and reported as a
    /// hang.
    ///
    /// # Example
    ///
    /// ```
    /// use std::time::Duration;
    /// use chunk_invariance_cli::{FilterCommand, RunFailure};
    ///
    /// let limit = Duration::from_millis(50);
    /// let failure = FilterCommand::new("sleep 5").timeout(limit).run(&[b"a"]).unwrap_err();
    /// assert_eq!(failure, RunFailure::Timeout(limit));
    /// ```
    pub fn timeout(mut self, timeout: Duration) -> FilterCommand {
        self.timeout = timeout;
        self
    }

    /// How many runs a check may have going on at once.
    ///
    /// # Example
    ///
    /// ```
    /// use std::num::NonZeroUsize;
    /// use chunk_invariance_cli::FilterCommand;
    ///
    /// let n = FilterCommand::new("cat").jobs(NonZeroUsize::MIN).check_text("abc", &Default::default())?;
    /// assert_eq!(n.splits_checked(), Some(3));
    /// # Ok::<(), chunk_invariance::ChunkInvarianceError>(())
    /// ```
    pub fn jobs(mut self, jobs: NonZeroUsize) -> FilterCommand {
        self.jobs = jobs;
        self
    }

    /// Runs the filter once, feeding it `chunks`, and returns its
    /// standard output.
    ///
    /// # Errors
    ///
    /// When the run takes longer than the time limit (the filter is
    /// killed), or the filter cannot start or exits with an error status.
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance_cli::FilterCommand;
    ///
    /// assert_eq!(FilterCommand::new("wc -c").run(&[b"ab", b"cd"])?.trim_ascii(), b"4");
    /// # Ok::<(), chunk_invariance_cli::RunFailure>(())
    /// ```
    pub fn run(&self, chunks: &[&[u8]]) -> Result<Vec<u8>, RunFailure> {
        let deadline = Instant::now() + self.timeout;
        let mut child = self
            .command()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| RunFailure::Crash(format!("could not start the command: {e}")))?;
        let mut stdin = child.stdin.take().expect("stdin is piped");
        let mut stdout = child.stdout.take().expect("stdout is piped");
        let mut stderr = child.stderr.take().expect("stderr is piped");
        let frames: Vec<Vec<u8>> = chunks.iter().map(|c| self.frame(c)).collect();
        let pause = self.pause;
        // The writer, the readers and the wait run apart, so a filter that
        // writes before it has read everything cannot deadlock the run.
        // On a timeout they are left to end on their own once the killed
        // process's pipes close.
        thread::spawn(move || {
            for (i, frame) in frames.iter().enumerate() {
                if i > 0 && !pause.is_zero() {
                    thread::sleep(pause);
                }
                // A filter may stop reading early; what it wrote is its
                // output all the same.
                if stdin.write_all(frame).and_then(|()| stdin.flush()).is_err() {
                    break;
                }
            }
        });
        let (out_tx, out_rx) = mpsc::channel();
        thread::spawn(move || {
            let mut out = Vec::new();
            let read = stdout.read_to_end(&mut out).map(|_| out);
            let _ = out_tx.send(read);
        });
        let (err_tx, err_rx) = mpsc::channel();
        thread::spawn(move || {
            let mut err = Vec::new();
            let _ = stderr.read_to_end(&mut err);
            let _ = err_tx.send(err);
        });
        let remaining = deadline.saturating_duration_since(Instant::now());
        let output = match out_rx.recv_timeout(remaining) {
            Ok(Ok(output)) => output,
            Ok(Err(e)) => {
                kill(&mut child);
                return Err(RunFailure::Crash(format!("reading its output failed: {e}")));
            }
            Err(_) => {
                kill(&mut child);
                return Err(RunFailure::Timeout(self.timeout));
            }
        };
        let status = match wait_until(&mut child, deadline) {
            Some(status) => status,
            None => {
                kill(&mut child);
                return Err(RunFailure::Timeout(self.timeout));
            }
        };
        if status.success() {
            return Ok(output);
        }
        let remaining = deadline.saturating_duration_since(Instant::now());
        let err = err_rx.recv_timeout(remaining).unwrap_or_default();
        Err(RunFailure::Crash(describe_failure(status, &err)))
    }

    fn frame(&self, chunk: &[u8]) -> Vec<u8> {
        match self.framing {
            Framing::Raw => chunk.to_vec(),
            Framing::LengthPrefixed => {
                let mut frame = format!("{}\n", chunk.len()).into_bytes();
                frame.extend_from_slice(chunk);
                frame
            }
        }
    }

    #[cfg(unix)]
    fn command(&self) -> Command {
        use std::os::unix::process::CommandExt;
        let mut command = Command::new("sh");
        command.arg("-c").arg(&self.cmd);
        // Its own process group, so that a timeout kills what the shell
        // started too (a `sleep` holding the output pipe open).
        command.process_group(0);
        command
    }

    #[cfg(not(unix))]
    fn command(&self) -> Command {
        let mut command = Command::new("cmd");
        command.arg("/C").arg(&self.cmd);
        command
    }
}

/// Waits for the child's exit until `deadline`; `None` when it has not
/// exited by then.
fn wait_until(child: &mut Child, deadline: Instant) -> Option<ExitStatus> {
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(2)),
            Ok(None) | Err(_) => return None,
        }
    }
}

/// Kills the child and everything in its process group.
fn kill(child: &mut Child) {
    #[cfg(unix)]
    {
        // The group's id is the child's pid (see `process_group(0)`); std
        // has no call for a group, and the `kill` utility is POSIX.
        let _ = Command::new("kill")
            .arg("-KILL")
            .arg("--")
            .arg(format!("-{}", child.id()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    let _ = child.kill();
    let _ = child.wait();
}

fn describe_failure(status: ExitStatus, stderr: &[u8]) -> String {
    let mut why = match status.code() {
        Some(code) => format!("the filter exited with status {code}"),
        None => format!("the filter was stopped: {status}"),
    };
    let text = String::from_utf8_lossy(stderr);
    let text = text.trim();
    if !text.is_empty() {
        let mut start = text.len().saturating_sub(STDERR_SHOWN);
        while !text.is_char_boundary(start) {
            start += 1;
        }
        let more = if start > 0 { "…" } else { "" };
        why.push_str(&format!("; its stderr ends {more}{:?}", &text[start..]));
    }
    why
}
