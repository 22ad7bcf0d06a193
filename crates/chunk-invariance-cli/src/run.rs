//! One run of the filter command: spawn it, feed it the chunks of one
//! split over standard input, and read its standard output, within a time
//! limit.

use std::fmt;
use std::io::{Read, Write};
use std::num::NonZeroUsize;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, MutexGuard, mpsc};
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
/// assert_eq!(filter.run(&[b"abc", b"de"])?.output(), b"3\n");
/// # Ok::<(), chunk_invariance_cli::RunFailure>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Framing {
    /// Each chunk's bytes as they are, written and flushed on their own;
    /// on Linux each only once the filter has taken the one before out of
    /// the pipe, so that its reads see the chunks apart.
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
/// assert_eq!(filter.run(&[b"ab", b"c"])?.output(), b"ABC");
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
/// use std::time::Duration;
/// use chunk_invariance_cli::{FilterCommand, RunFailure};
///
/// let failure = FilterCommand::new("cat >/dev/null; exit 3").run(&[b"abc"]).unwrap_err();
/// assert_eq!(failure, RunFailure::Crash("the filter exited with status 3".to_owned()));
/// assert_eq!(failure.kind(), "crash");
///
/// // A filter that reads no input at all.
/// let failure = FilterCommand::new("sleep 5").timeout(Duration::from_millis(50)).run(&[b"a"]).unwrap_err();
/// # #[cfg(target_os = "linux")]
/// assert_eq!(failure.kind(), "not_reading");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RunFailure {
    /// The run did not finish in time: the filter hangs (or is too slow)
    /// on this split. It was killed.
    Timeout(Duration),
    /// The run did not finish in time, and by then the filter was not
    /// taking its input (it never read, or stopped reading): a chunk was
    /// still in the pipe to its standard input. It was killed. Raw framing
    /// on Linux only, where the pipe can tell.
    NotReading {
        /// The time limit of the run.
        limit: Duration,
        /// The chunk not taken, counted from 1.
        chunk: usize,
        /// How many chunks the run had.
        chunks: usize,
    },
    /// The filter could not start, exited with an error status, or was
    /// killed by a signal; why, with the end of its standard error.
    Crash(String),
}

impl RunFailure {
    /// The name a machine reads in a JSON report: `timeout`,
    /// `not_reading` or `crash`.
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
            RunFailure::NotReading { .. } => "not_reading",
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
            RunFailure::NotReading {
                limit,
                chunk,
                chunks,
            } => write!(
                f,
                "no result after {} ms: the filter was not reading its input: chunk {chunk} of \
                 {chunks} was still in the pipe to its standard input; it was killed (a filter \
                 that is only slow to start needs a longer time limit)",
                limit.as_millis()
            ),
            RunFailure::Crash(why) => f.write_str(why),
        }
    }
}

/// The output of one run of the filter, and whether its reads saw the
/// chunks apart.
///
/// # Example
///
/// ```
/// use chunk_invariance_cli::FilterCommand;
///
/// let run = FilterCommand::new("cat").run(&[b"a", b"b"])?;
/// assert_eq!(run.output(), b"ab");
/// # #[cfg(target_os = "linux")]
/// assert!(run.boundaries_seen());
/// # Ok::<(), chunk_invariance_cli::RunFailure>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunOutput {
    output: Vec<u8>,
    boundaries_seen: bool,
}

impl RunOutput {
    /// What the filter wrote on its standard output.
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance_cli::FilterCommand;
    ///
    /// assert_eq!(FilterCommand::new("tr a-z A-Z").run(&[b"ab"])?.output(), b"AB");
    /// # Ok::<(), chunk_invariance_cli::RunFailure>(())
    /// ```
    pub fn output(&self) -> &[u8] {
        &self.output
    }

    /// The output, owned.
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance_cli::FilterCommand;
    ///
    /// let output: Vec<u8> = FilterCommand::new("cat").run(&[b"ab"])?.into_output();
    /// assert_eq!(output, b"ab");
    /// # Ok::<(), chunk_invariance_cli::RunFailure>(())
    /// ```
    pub fn into_output(self) -> Vec<u8> {
        self.output
    }

    /// Whether no read of the filter can have joined two chunks: the run
    /// had one chunk, or length-prefixed framing, or (raw framing, on
    /// Linux) each chunk was written only once the filter had taken the
    /// one before out of the pipe, or had stopped reading for good.
    ///
    /// `false` when that could not be confirmed (raw framing on another
    /// platform): a filter slow to start may have read the whole input in
    /// one read, and then its output says nothing about the boundaries.
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance_cli::{FilterCommand, Framing};
    ///
    /// let filter = FilterCommand::new("cat").framing(Framing::LengthPrefixed);
    /// assert!(filter.run(&[b"a", b"b"])?.boundaries_seen());
    /// # Ok::<(), chunk_invariance_cli::RunFailure>(())
    /// ```
    pub fn boundaries_seen(&self) -> bool {
        self.boundaries_seen
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
    /// assert_eq!(FilterCommand::new("cat").run(&[b"a", b"b"])?.output(), b"ab");
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
    /// assert_eq!(filter.run(&[b"ab", b""])?.output(), b"2\nab0\n");
    /// # Ok::<(), chunk_invariance_cli::RunFailure>(())
    /// ```
    pub fn framing(mut self, framing: Framing) -> FilterCommand {
        self.framing = framing;
        self
    }

    /// How long to wait between two chunks, on top of the wait for the
    /// filter to take each chunk. Where that wait is not possible (raw
    /// framing off Linux), a pause longer than the filter takes to read a
    /// chunk is what makes its reads likely to see the chunks apart.
    ///
    /// # Example
    ///
    /// ```
    /// use std::time::Duration;
    /// use chunk_invariance_cli::FilterCommand;
    ///
    /// let filter = FilterCommand::new("cat").pause(Duration::from_millis(1));
    /// assert_eq!(filter.run(&[b"a", b"b"])?.output(), b"ab");
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
    /// // It reads all its input, then hangs.
    /// let filter = FilterCommand::new("cat >/dev/null; sleep 5").timeout(limit);
    /// let failure = filter.run(&[b"a"]).unwrap_err();
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
    /// standard output and whether its reads saw the chunks apart.
    ///
    /// With [`Framing::Raw`] on Linux, chunk `i + 1` is written only once
    /// the filter has taken all of chunk `i` out of the pipe (the bytes
    /// left in it are read with `FIONREAD`), so no read of the filter can
    /// span two chunks, however slow it is to start. Elsewhere that cannot
    /// be confirmed, and [`RunOutput::boundaries_seen`] says so.
    ///
    /// # Errors
    ///
    /// When the run takes longer than the time limit (the filter is
    /// killed), [`RunFailure::NotReading`] when by then it had stopped
    /// taking its input, or when the filter cannot start or exits with an
    /// error status.
    ///
    /// # Example
    ///
    /// ```
    /// use chunk_invariance_cli::FilterCommand;
    ///
    /// let run = FilterCommand::new("wc -c").run(&[b"ab", b"cd"])?;
    /// assert_eq!(run.output().trim_ascii(), b"4");
    /// # Ok::<(), chunk_invariance_cli::RunFailure>(())
    /// ```
    pub fn run(&self, chunks: &[&[u8]]) -> Result<RunOutput, RunFailure> {
        let deadline = Instant::now() + self.timeout;
        let mut child = self
            .command()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| RunFailure::Crash(format!("could not start the command: {e}")))?;
        let stdin = child.stdin.take().expect("stdin is piped");
        let mut stdout = child.stdout.take().expect("stdout is piped");
        let mut stderr = child.stderr.take().expect("stderr is piped");
        let frames: Vec<Vec<u8>> = chunks.iter().map(|c| self.frame(c)).collect();
        let writer = Writer {
            frames,
            pause: self.pause,
            // Length-prefixed frames say where each chunk ends, whatever
            // the reads see.
            wait_taken: self.framing == Framing::Raw,
            deadline,
            progress: Arc::new(Mutex::new(Progress::default())),
        };
        let progress = Arc::clone(&writer.progress);
        // The writer, the readers and the wait run apart, so a filter that
        // writes before it has read everything cannot deadlock the run.
        // On a timeout they are left to end on their own once the killed
        // process's pipes close.
        let (done_tx, done_rx) = mpsc::channel();
        thread::spawn(move || {
            writer.write(stdin);
            let _ = done_tx.send(());
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
        let timed_out = |child: &mut Child| {
            kill(child);
            let progress = lock(&progress).clone();
            Err(progress.timeout_failure(self.timeout, chunks.len()))
        };
        let remaining = deadline.saturating_duration_since(Instant::now());
        let output = match out_rx.recv_timeout(remaining) {
            Ok(Ok(output)) => output,
            Ok(Err(e)) => {
                kill(&mut child);
                return Err(RunFailure::Crash(format!("reading its output failed: {e}")));
            }
            Err(_) => return timed_out(&mut child),
        };
        let Some(status) = wait_until(&mut child, deadline) else {
            return timed_out(&mut child);
        };
        if !status.success() {
            let remaining = deadline.saturating_duration_since(Instant::now());
            let err = err_rx.recv_timeout(remaining).unwrap_or_default();
            let mut why = describe_failure(status, &err);
            if let Some(chunk) = lock(&progress).stopped_at {
                why.push_str(&format!(
                    "; it closed its input with chunk {} of {} not taken",
                    chunk + 1,
                    chunks.len()
                ));
            }
            return Err(RunFailure::Crash(why));
        }
        // The filter has exited, so the writer ends at once: its pipe has
        // no reader left (unless the filter left a process behind that
        // holds it, which the time limit covers).
        let remaining = deadline.saturating_duration_since(Instant::now());
        if done_rx.recv_timeout(remaining).is_err() {
            return timed_out(&mut child);
        }
        let progress = lock(&progress).clone();
        Ok(RunOutput {
            output,
            boundaries_seen: !progress.unconfirmed,
        })
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

/// The chunks of one run on their way to the filter's standard input.
struct Writer {
    frames: Vec<Vec<u8>>,
    pause: Duration,
    /// Whether to write a chunk only once the one before has left the
    /// pipe.
    wait_taken: bool,
    deadline: Instant,
    progress: Arc<Mutex<Progress>>,
}

/// How far the writer got, for the report of a run that failed.
#[derive(Clone, Debug, Default)]
struct Progress {
    /// The chunk (from 0) being written or waited on to leave the pipe.
    waiting: Option<usize>,
    /// The chunk the filter had not taken when it closed its standard
    /// input (it exited, or closed it).
    stopped_at: Option<usize>,
    /// Whether a chunk was written without confirming that the filter had
    /// taken the one before.
    unconfirmed: bool,
}

impl Progress {
    /// The failure of a run that did not finish in time.
    fn timeout_failure(&self, limit: Duration, chunks: usize) -> RunFailure {
        match self.waiting {
            Some(chunk) => RunFailure::NotReading {
                limit,
                chunk: chunk + 1,
                chunks,
            },
            None => RunFailure::Timeout(limit),
        }
    }
}

/// How long the writer may hold the filter's input open past the run's
/// deadline, waiting for the run to kill it: were it to close the input
/// first, a slow filter would see an early end of input and could finish
/// with a wrong output just before the deadline.
const WRITER_GRACE: Duration = Duration::from_secs(5);

/// The longest nap between two looks at the pipe.
const MAX_NAP: Duration = Duration::from_millis(1);

impl Writer {
    fn write(self, mut stdin: ChildStdin) {
        let last = self.frames.len().saturating_sub(1);
        for (i, frame) in self.frames.iter().enumerate() {
            if i > 0 && !self.pause.is_zero() {
                thread::sleep(self.pause);
            }
            lock(&self.progress).waiting = Some(i);
            // A filter may stop reading early; what it wrote is its
            // output all the same.
            if stdin.write_all(frame).and_then(|()| stdin.flush()).is_err() {
                lock(&self.progress).stopped_at = Some(i);
                return;
            }
            if !self.wait_taken {
                continue;
            }
            // The last chunk too: the end of input then comes as a read of
            // its own, and a run that times out can tell a filter that
            // stopped reading from one that hangs after its input.
            match taken(&stdin, self.deadline + WRITER_GRACE) {
                Taken::Yes => {}
                Taken::ReaderGone => {
                    lock(&self.progress).stopped_at = Some(i);
                    return;
                }
                Taken::NotYet => return,
                // No read can join the last chunk to another.
                Taken::Unknown if i == last => {}
                Taken::Unknown => lock(&self.progress).unconfirmed = true,
            }
        }
        lock(&self.progress).waiting = None;
    }
}

/// Whether the filter has taken a chunk out of the pipe.
enum Taken {
    /// The pipe is empty.
    Yes,
    /// The filter has closed its end: it takes nothing more.
    ReaderGone,
    /// The time ran out with bytes still in the pipe.
    NotYet,
    /// The platform cannot tell.
    Unknown,
}

/// Waits until the pipe to the filter is empty, its reader is gone, or
/// `until`.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn taken(pipe: &ChildStdin, until: Instant) -> Taken {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let mut nap = Duration::from_micros(10);
    loop {
        // On Linux both ends of a pipe report the bytes still in it.
        match rustix::io::ioctl_fionread(pipe) {
            Ok(0) => return Taken::Yes,
            Ok(_) => {}
            Err(_) => return Taken::Unknown,
        }
        let mut fds = [PollFd::new(pipe, PollFlags::OUT)];
        let now = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // A write end whose reader is gone polls as an error.
        if poll(&mut fds, Some(&now)).is_ok()
            && fds[0].revents().intersects(PollFlags::ERR | PollFlags::HUP)
        {
            return Taken::ReaderGone;
        }
        if Instant::now() >= until {
            return Taken::NotYet;
        }
        thread::sleep(nap);
        nap = (nap * 2).min(MAX_NAP);
    }
}

/// Elsewhere the write end of a pipe does not tell how much is left in
/// it.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn taken(_pipe: &ChildStdin, _until: Instant) -> Taken {
    Taken::Unknown
}

/// The writer's progress, also after a panic elsewhere: it holds plain
/// values only.
fn lock(progress: &Mutex<Progress>) -> MutexGuard<'_, Progress> {
    progress.lock().unwrap_or_else(|e| e.into_inner())
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
