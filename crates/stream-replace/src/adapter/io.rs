//! `std::io` adapters: a writer that replaces what passes through it, and a
//! reader that replaces what it reads.

use std::fmt;
use std::io::{self, BufRead, Read, Write};

use crate::error::StreamError;
use crate::replacer::Replacer;

/// How many bytes a [`ReplaceReader`] asks its inner reader for at a time,
/// unless set with [`ReplaceReader::with_capacity`].
const DEFAULT_CAPACITY: usize = 8 * 1024;

/// A writer that replaces the bytes written to it and writes the result to
/// an inner writer.
///
/// Bytes may be cut anywhere between writes, even inside a UTF-8 character.
/// Each [`write`](Write::write) writes to the inner writer everything that is
/// safe to emit and holds the rest: a possible match cut by the end of the
/// write. [`flush`](Write::flush) only flushes the inner writer; it does
/// **not** end the stream, because a held match may still be completed by
/// later writes. [`finish`](ReplaceWriter::finish) (or
/// [`try_finish`](ReplaceWriter::try_finish)) ends the stream: it writes the
/// rest and flushes the inner writer.
///
/// Dropping the writer without finishing writes nothing more: held bytes are
/// discarded, never written unreplaced (fail closed).
///
/// A `write` that returns `Ok(n)` has consumed all `n` bytes. If the inner
/// writer fails after that, the unwritten output is kept and written first by
/// the next call, which reports the error if it persists. An error returned
/// before any input was consumed (for example `WouldBlock` from the inner
/// writer) means that the call can be retried with the same bytes.
///
/// # Example
///
/// ```
/// use std::io::Write;
/// use stream_replace::{ReplaceWriter, Rules};
///
/// let rules = Rules::builder()
///     .regex(r"[\w.]+@\w+\.com", "[EMAIL]")
///     .regex(r"<think>[\s\S]*?</think>", "")
///     .build()?;
/// let mut w = ReplaceWriter::new(rules.replacer(), Vec::new());
/// w.write_all(b"<think>hmm</think>Mail ann@exa")?;
/// w.flush()?; // does not end the stream
/// assert_eq!(w.get_ref(), b"Mail ");
/// w.write_all(b"mple.com now")?;
/// let out = w.finish()?;
/// assert_eq!(out, b"Mail [EMAIL] now");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ReplaceWriter<W> {
    replacer: Replacer,
    inner: W,
    /// Output not yet taken by the inner writer, from `written` on.
    out: Vec<u8>,
    written: usize,
    /// Whether the stream has been ended and nothing was written since, so
    /// that finishing twice ends the stream once.
    ended: bool,
}

impl<W: Write> ReplaceWriter<W> {
    /// Creates a writer that replaces with `replacer` and writes to `inner`.
    ///
    /// The replacer should be fresh (or [reset](Replacer::reset)): text it
    /// already holds is treated as the start of this stream.
    ///
    /// # Example
    ///
    /// ```
    /// use std::io::Write;
    /// use stream_replace::{ReplaceWriter, Rules};
    ///
    /// let rules = Rules::builder().literal("secret", "******").build()?;
    /// let mut w = ReplaceWriter::new(rules.replacer(), Vec::new());
    /// write!(w, "a {} b", "secret")?;
    /// assert_eq!(w.finish()?, b"a ****** b");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(replacer: Replacer, inner: W) -> ReplaceWriter<W> {
        ReplaceWriter {
            replacer,
            inner,
            out: Vec::new(),
            written: 0,
            ended: false,
        }
    }

    /// Ends the stream, writes the rest of the output, flushes the inner
    /// writer and returns it.
    ///
    /// # Errors
    ///
    /// An error from the inner writer, or an [`io::Error`] of kind
    /// [`InvalidData`](io::ErrorKind::InvalidData) wrapping a
    /// [`StreamError`] when the stream failed (a held-bytes limit, or a
    /// block rule that stopped it: then the text before the block is
    /// written first, nothing after it). The writer is lost either way; use
    /// [`try_finish`](ReplaceWriter::try_finish) to keep it.
    ///
    /// # Example
    ///
    /// ```
    /// use std::io::Write;
    /// use stream_replace::{ReplaceWriter, Rules};
    ///
    /// let rules = Rules::builder().regex(r"\d+", "#").build()?;
    /// let mut w = ReplaceWriter::new(rules.replacer(), Vec::new());
    /// w.write_all(b"call 555 12")?;
    /// assert_eq!(w.get_ref(), b"call # "); // "12" may go on
    /// assert_eq!(w.finish()?, b"call # #");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn finish(mut self) -> io::Result<W> {
        self.try_finish()?;
        Ok(self.inner)
    }

    /// Ends the stream, writes the rest of the output and flushes the inner
    /// writer, keeping the writer.
    ///
    /// Later writes start a new stream. Finishing again without writing in
    /// between only flushes. If the inner writer fails, calling it again
    /// retries writing the rest.
    ///
    /// # Errors
    ///
    /// As [`finish`](ReplaceWriter::finish). A [`StreamError`] is reported
    /// once: the failed stream is then over.
    ///
    /// # Example
    ///
    /// ```
    /// use std::io::Write;
    /// use stream_replace::{ReplaceWriter, Rules};
    ///
    /// let rules = Rules::builder().regex(r"\d+", "#").build()?;
    /// let mut w = ReplaceWriter::new(rules.replacer(), Vec::new());
    /// w.write_all(b"1 2")?;
    /// w.try_finish()?;
    /// w.write_all(b"\n3")?; // a new stream
    /// w.try_finish()?;
    /// assert_eq!(w.get_ref(), b"# #\n#");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn try_finish(&mut self) -> io::Result<()> {
        self.drain()?;
        if !self.ended {
            self.ended = true;
            if let Err(e) = self.replacer.flush_bytes_into(&mut self.out) {
                // The failure is reported once: finishing ends the failed
                // stream, and later writes start a new one.
                self.replacer.reset();
                let _ = self.drain();
                return Err(e.into());
            }
        }
        self.drain()?;
        self.inner.flush()
    }

    /// Writes the pending output to the inner writer.
    fn drain(&mut self) -> io::Result<()> {
        while self.written < self.out.len() {
            match self.inner.write(&self.out[self.written..]) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::WriteZero,
                        "the inner writer accepted no more of the replaced output",
                    ));
                }
                Ok(n) => self.written += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.out.clear();
        self.written = 0;
        Ok(())
    }
}

impl<W> ReplaceWriter<W> {
    /// The inner writer.
    ///
    /// # Example
    ///
    /// ```
    /// use std::io::Write;
    /// use stream_replace::{ReplaceWriter, Rules};
    ///
    /// let rules = Rules::builder().literal("secret", "******").build()?;
    /// let mut w = ReplaceWriter::new(rules.replacer(), Vec::new());
    /// w.write_all(b"a sec")?;
    /// assert_eq!(w.get_ref(), b"a ");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn get_ref(&self) -> &W {
        &self.inner
    }

    /// The inner writer, mutably. Writing to it directly bypasses the
    /// replacement and may interleave with output not yet written.
    ///
    /// # Example
    ///
    /// ```
    /// use std::io::Write;
    /// use stream_replace::{ReplaceWriter, Rules};
    ///
    /// let rules = Rules::builder().literal("secret", "******").build()?;
    /// let mut w = ReplaceWriter::new(rules.replacer(), Vec::new());
    /// w.get_mut().extend_from_slice(b"raw secret, ");
    /// w.write_all(b"secret")?;
    /// assert_eq!(w.finish()?, b"raw secret, ******");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.inner
    }

    /// The replacer, for example to see how many bytes it holds.
    ///
    /// # Example
    ///
    /// ```
    /// use std::io::Write;
    /// use stream_replace::{ReplaceWriter, Rules};
    ///
    /// let rules = Rules::builder().literal("secret", "******").build()?;
    /// let mut w = ReplaceWriter::new(rules.replacer(), Vec::new());
    /// w.write_all(b"a sec")?;
    /// assert_eq!(w.replacer().held(), 3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn replacer(&self) -> &Replacer {
        &self.replacer
    }
}

impl<W: Write> Write for ReplaceWriter<W> {
    /// Replaces `buf` and writes what is safe to emit; returns `Ok(buf.len())`
    /// since the replacer takes all of it.
    ///
    /// # Errors
    ///
    /// An error from the inner writer while writing output left over by an
    /// earlier call (then none of `buf` was taken), or an error of kind
    /// [`InvalidData`](io::ErrorKind::InvalidData) wrapping a
    /// [`StreamError`] when the stream failed (a held-bytes limit, or a
    /// block rule that stopped it: then the text before the block is
    /// written first, nothing after it); every later write fails too,
    /// until the stream is finished.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.drain()?;
        if buf.is_empty() {
            return Ok(0);
        }
        self.ended = false;
        if let Err(e) = self.replacer.feed_bytes_into(buf, &mut self.out) {
            // The text released before the failure (the safe text before a
            // block) is written; nothing after it ever is.
            let _ = self.drain();
            return Err(e.into());
        }
        // `buf` is consumed: reporting an error now would tell the caller
        // that it was not, and invite writing it twice. What is left is
        // written, or the error reported, by the next call.
        let _ = self.drain();
        Ok(buf.len())
    }

    /// Writes pending output and flushes the inner writer. This does **not**
    /// end the stream: held bytes stay held. See
    /// [`finish`](ReplaceWriter::finish).
    fn flush(&mut self) -> io::Result<()> {
        self.drain()?;
        self.inner.flush()
    }
}

impl<W: fmt::Debug> fmt::Debug for ReplaceWriter<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReplaceWriter")
            .field("replacer", &self.replacer)
            .field("inner", &self.inner)
            .field("unwritten", &(self.out.len() - self.written))
            .field("ended", &self.ended)
            .finish()
    }
}

/// A reader that replaces the bytes it reads from an inner reader.
///
/// It reads the inner reader in chunks, serves the output that is safe to
/// emit and, at the inner reader's end, the rest. A read never returns
/// `Ok(0)` before that end (for a non-empty buffer), even while a long
/// possible match is held. Reads interrupted
/// ([`Interrupted`](io::ErrorKind::Interrupted)) are retried.
///
/// After the end, or after a [`StreamError`] (returned by every later read),
/// the reader stays there and does not read the inner reader again.
///
/// It also implements [`BufRead`], serving its output buffer.
///
/// # Example
///
/// ```
/// use std::io::Read;
/// use stream_replace::{ReplaceReader, Rules};
///
/// let rules = Rules::builder()
///     .regex(r"[\w.]+@\w+\.com", "[EMAIL]")
///     .regex(r"<think>[\s\S]*?</think>", "")
///     .build()?;
/// let input: &[u8] = b"<think>hmm</think>Mail ann@example.com now";
/// let mut text = String::new();
/// ReplaceReader::new(rules.replacer(), input).read_to_string(&mut text)?;
/// assert_eq!(text, "Mail [EMAIL] now");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ReplaceReader<R> {
    replacer: Replacer,
    inner: R,
    input: Box<[u8]>,
    /// Output not yet served, from `pos` on.
    out: Vec<u8>,
    pos: usize,
    state: ReadState,
}

#[derive(Debug)]
enum ReadState {
    Reading,
    Ended,
    Failed(StreamError),
}

impl<R: Read> ReplaceReader<R> {
    /// Creates a reader that replaces what it reads from `inner` with
    /// `replacer`, reading 8 KiB at a time.
    ///
    /// The replacer should be fresh (or [reset](Replacer::reset)): text it
    /// already holds is treated as the start of this stream.
    ///
    /// # Example
    ///
    /// ```
    /// use std::io::{BufRead, BufReader};
    /// use stream_replace::{ReplaceReader, Rules};
    ///
    /// let rules = Rules::builder().regex(r"\d{3}-\d{4}", "[PHONE]").build()?;
    /// let input = BufReader::new(&b"call 555-1234\nor 555-9876\n"[..]);
    /// let lines = ReplaceReader::new(rules.replacer(), input)
    ///     .lines()
    ///     .collect::<Result<Vec<_>, _>>()?;
    /// assert_eq!(lines, ["call [PHONE]", "or [PHONE]"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(replacer: Replacer, inner: R) -> ReplaceReader<R> {
        ReplaceReader::with_capacity(DEFAULT_CAPACITY, replacer, inner)
    }

    /// Creates a reader that reads up to `capacity` bytes at a time from
    /// `inner` (at least 1).
    ///
    /// # Example
    ///
    /// ```
    /// use std::io::Read;
    /// use stream_replace::{ReplaceReader, Rules};
    ///
    /// let rules = Rules::builder().literal("secret", "******").build()?;
    /// let mut r = ReplaceReader::with_capacity(2, rules.replacer(), &b"a secret b"[..]);
    /// let mut out = Vec::new();
    /// r.read_to_end(&mut out)?;
    /// assert_eq!(out, b"a ****** b");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_capacity(capacity: usize, replacer: Replacer, inner: R) -> ReplaceReader<R> {
        ReplaceReader {
            replacer,
            inner,
            // A zero-length read would look like the inner reader's end.
            input: vec![0; capacity.max(1)].into_boxed_slice(),
            out: Vec::new(),
            pos: 0,
            state: ReadState::Reading,
        }
    }
}

impl<R> ReplaceReader<R> {
    /// The inner reader.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{ReplaceReader, Rules};
    ///
    /// let rules = Rules::builder().literal("secret", "******").build()?;
    /// let r = ReplaceReader::new(rules.replacer(), &b"abc"[..]);
    /// assert_eq!(r.get_ref(), b"abc");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The inner reader, mutably. Reading from it directly skips those bytes
    /// from the stream.
    ///
    /// # Example
    ///
    /// ```
    /// use std::io::Read;
    /// use stream_replace::{ReplaceReader, Rules};
    ///
    /// let rules = Rules::builder().literal("secret", "******").build()?;
    /// let mut r = ReplaceReader::new(rules.replacer(), &b"HEADER a secret"[..]);
    /// let mut header = [0; 7];
    /// r.get_mut().read_exact(&mut header)?;
    /// let mut body = String::new();
    /// r.read_to_string(&mut body)?;
    /// assert_eq!(body, "a ******");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    /// The replacer, for example to see how many bytes it holds.
    ///
    /// # Example
    ///
    /// ```
    /// use std::io::Read;
    /// use stream_replace::{ReplaceReader, Rules};
    ///
    /// let rules = Rules::builder().literal("secret", "******").build()?;
    /// let mut r = ReplaceReader::with_capacity(5, rules.replacer(), &b"a secret"[..]);
    /// let mut buf = [0; 16];
    /// assert_eq!(r.read(&mut buf)?, 2); // "a "
    /// assert_eq!(r.replacer().held(), 3); // "sec"
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn replacer(&self) -> &Replacer {
        &self.replacer
    }

    /// Gives back the inner reader. Output not yet read and bytes the
    /// replacer holds are dropped.
    ///
    /// # Example
    ///
    /// ```
    /// use std::io::Read;
    /// use stream_replace::{ReplaceReader, Rules};
    ///
    /// let rules = Rules::builder().literal("secret", "******").build()?;
    /// let mut r = ReplaceReader::new(rules.replacer(), &b"a secret"[..]);
    /// let mut out = Vec::new();
    /// r.read_to_end(&mut out)?;
    /// assert!(r.into_inner().is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn into_inner(self) -> R {
        self.inner
    }
}

impl<R: Read> Read for ReplaceReader<R> {
    /// Reads replaced bytes into `buf`.
    ///
    /// # Errors
    ///
    /// An error from the inner reader other than
    /// [`Interrupted`](io::ErrorKind::Interrupted), or an error of kind
    /// [`InvalidData`](io::ErrorKind::InvalidData) wrapping a
    /// [`StreamError`] when the stream failed (a held-bytes limit, or a
    /// block rule that stopped it: then the text before the block is read
    /// first, and the error on the next read).
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let available = self.fill_buf()?;
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl<R: Read> BufRead for ReplaceReader<R> {
    /// Returns replaced output, reading the inner reader until there is some
    /// or it ends; empty only at the end.
    ///
    /// # Errors
    ///
    /// As [`read`](ReplaceReader::read).
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        while self.pos == self.out.len() {
            self.out.clear();
            self.pos = 0;
            match &self.state {
                ReadState::Reading => {}
                ReadState::Ended => break,
                ReadState::Failed(e) => return Err(e.clone().into()),
            }
            let n = match self.inner.read(&mut self.input) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            let result = if n == 0 {
                self.state = ReadState::Ended;
                self.replacer.flush_bytes_into(&mut self.out)
            } else {
                self.replacer
                    .feed_bytes_into(&self.input[..n], &mut self.out)
            };
            if let Err(e) = result {
                self.replacer.reset();
                self.state = ReadState::Failed(e.clone());
                if self.out.is_empty() {
                    return Err(e.into());
                }
                // The text released before the failure (the safe text
                // before a block) is read first; the error comes next.
                break;
            }
        }
        Ok(&self.out[self.pos..])
    }

    fn consume(&mut self, amt: usize) {
        self.pos = (self.pos + amt).min(self.out.len());
    }
}

impl<R: fmt::Debug> fmt::Debug for ReplaceReader<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReplaceReader")
            .field("replacer", &self.replacer)
            .field("inner", &self.inner)
            .field("capacity", &self.input.len())
            .field("unread", &(self.out.len() - self.pos))
            .field("state", &self.state)
            .finish()
    }
}
