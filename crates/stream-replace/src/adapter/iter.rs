//! Adapters over iterators of chunks.

use std::iter::FusedIterator;
use std::ops::ControlFlow;

use crate::adapter::{Driver, Unit};
use crate::error::StreamError;
use crate::replacer::Replacer;

/// Wraps an iterator of text chunks: the result yields the replaced text as
/// it becomes safe to emit, and the rest once the chunks run out.
///
/// Each item is the output of one [`Replacer::feed`], or at the end of
/// [`Replacer::flush`]; empty outputs are skipped, so one call to `next` may
/// pull several chunks (a chunk that only extends a held match yields
/// nothing). Joined, the items equal [`Rules::replace_all`] on the joined
/// chunks.
///
/// The iterator is fused. After an error (a block, or the held text
/// exceeded [`Config::max_held`]) it yields the text released before it,
/// if any, then that error once, and then ends without pulling more chunks.
/// Either way, once it has ended the replacer is ready for a new stream;
/// [`Wrap::into_parts`] gives it back.
///
/// `collect::<Result<String, _>>()` fails closed: on an error it gives the
/// error alone, and the safe text yielded before it is dropped with the
/// rest. To keep that text (say, to send the part of a reply before a
/// block), take the items one by one.
///
/// For chunks of bytes, cut anywhere, use [`wrap_bytes`].
///
/// [`Rules::replace_all`]: crate::Rules::replace_all
/// [`Config::max_held`]: crate::Config::max_held
///
/// # Example
///
/// ```
/// use stream_replace::{wrap, Rules};
///
/// let rules = Rules::builder()
///     .regex(r"[\w.]+@\w+\.com", "[EMAIL]")
///     .regex(r"<think>[\s\S]*?</think>", "")
///     .build()?;
/// let chunks = ["Mail ann@exa", "mple.com <thi", "nk>hmm</think>", "now!"];
/// let mut out = wrap(rules.replacer(), chunks);
/// assert_eq!(out.next().transpose()?.as_deref(), Some("Mail "));
/// assert_eq!(out.next().transpose()?.as_deref(), Some("[EMAIL] "));
/// assert_eq!(out.next().transpose()?.as_deref(), Some("now!"));
/// assert_eq!(out.next().transpose()?, None);
///
/// // A block: `collect` gives the error only; a loop keeps the safe text.
/// use stream_replace::Rule;
/// let rules = Rules::builder().add(Rule::literal("KEY", "").block("key")).build()?;
/// let all: Result<String, _> = wrap(rules.replacer(), ["ok ", "KEY"]).collect();
/// assert!(all.is_err());
/// let mut safe = String::new();
/// for item in wrap(rules.replacer(), ["ok ", "KEY"]) {
///     match item {
///         Ok(text) => safe += &text,
///         Err(e) => assert_eq!(e.block().unwrap().reason(), "key"),
///     }
/// }
/// assert_eq!(safe, "ok ");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn wrap<I>(replacer: Replacer, chunks: I) -> Wrap<I::IntoIter>
where
    I: IntoIterator,
    I::Item: AsRef<str>,
{
    Wrap {
        driver: Driver::new(replacer),
        chunks: chunks.into_iter(),
    }
}

/// Wraps an iterator of byte chunks, cut anywhere (even inside a UTF-8
/// character): the result yields the replaced bytes as they become safe to
/// emit, and the rest once the chunks run out.
///
/// As [`wrap`], with [`Replacer::feed_bytes`] and [`Replacer::flush_bytes`]:
/// empty outputs are skipped, an error is yielded once and ends the
/// iterator.
///
/// # Example
///
/// ```
/// use stream_replace::{wrap_bytes, Rules};
///
/// let rules = Rules::builder().literal("café", "bar").build()?;
/// let chunks: [&[u8]; 3] = [b"a caf\xC3", b"\xA9 and a ", b"caf\xC3"];
/// let out = wrap_bytes(rules.replacer(), chunks).collect::<Result<Vec<_>, _>>()?;
/// assert_eq!(out.concat(), b"a bar and a caf\xC3");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn wrap_bytes<I>(replacer: Replacer, chunks: I) -> WrapBytes<I::IntoIter>
where
    I: IntoIterator,
    I::Item: AsRef<[u8]>,
{
    WrapBytes {
        driver: Driver::new(replacer),
        chunks: chunks.into_iter(),
    }
}

/// The iterator returned by [`wrap`]: replaced text, as it becomes safe to
/// emit.
///
/// # Example
///
/// ```
/// use stream_replace::{wrap, Rules};
///
/// let rules = Rules::builder().literal("secret", "******").build()?;
/// let text = wrap(rules.replacer(), ["a sec", "ret b"]).collect::<Result<String, _>>()?;
/// assert_eq!(text, "a ****** b");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Wrap<I> {
    driver: Driver,
    chunks: I,
}

/// The iterator returned by [`wrap_bytes`]: replaced bytes, as they become
/// safe to emit.
///
/// # Example
///
/// ```
/// use stream_replace::{wrap_bytes, Rules};
///
/// let rules = Rules::builder().literal("secret", "******").build()?;
/// let out = wrap_bytes(rules.replacer(), [b"a sec", b"ret b"]).collect::<Result<Vec<_>, _>>()?;
/// assert_eq!(out.concat(), b"a ****** b");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct WrapBytes<I> {
    driver: Driver,
    chunks: I,
}

impl<I> Wrap<I> {
    /// The replacer, for example to see how many bytes it holds.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{wrap, Rules};
    ///
    /// let rules = Rules::builder().literal("secret", "******").build()?;
    /// let mut it = wrap(rules.replacer(), ["a sec", "ret b"]);
    /// assert_eq!(it.next().transpose()?.as_deref(), Some("a "));
    /// assert_eq!(it.replacer().held(), "sec".len());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn replacer(&self) -> &Replacer {
        self.driver.replacer()
    }

    /// Gives back the replacer and the rest of the chunks.
    ///
    /// Text the replacer holds is dropped unless the iterator has ended, in
    /// which case the replacer is ready for a new stream.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{wrap, Rules};
    ///
    /// let rules = Rules::builder().literal("secret", "******").build()?;
    /// let mut it = wrap(rules.replacer(), ["a secret"]);
    /// assert_eq!(it.by_ref().collect::<Result<String, _>>()?, "a ******");
    /// let (replacer, _) = it.into_parts();
    /// let again = wrap(replacer, ["no secret"]).collect::<Result<String, _>>()?;
    /// assert_eq!(again, "no ******");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn into_parts(self) -> (Replacer, I) {
        (self.driver.into_replacer(), self.chunks)
    }
}

impl<I> Iterator for Wrap<I>
where
    I: Iterator,
    I::Item: AsRef<str>,
{
    type Item = Result<String, StreamError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.driver.next::<str, _>(&mut self.chunks)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.driver.size_hint(self.chunks.size_hint())
    }
}

impl<I> FusedIterator for Wrap<I>
where
    I: Iterator,
    I::Item: AsRef<str>,
{
}

impl<I> WrapBytes<I> {
    /// The replacer, for example to see how many bytes it holds.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{wrap_bytes, Rules};
    ///
    /// let rules = Rules::builder().literal("secret", "******").build()?;
    /// let mut it = wrap_bytes(rules.replacer(), [b"a sec", b"ret b"]);
    /// assert_eq!(it.next().transpose()?.as_deref(), Some(&b"a "[..]));
    /// assert_eq!(it.replacer().held(), "sec".len());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn replacer(&self) -> &Replacer {
        self.driver.replacer()
    }

    /// Gives back the replacer and the rest of the chunks.
    ///
    /// Bytes the replacer holds are dropped unless the iterator has ended,
    /// in which case the replacer is ready for a new stream.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{wrap_bytes, Rules};
    ///
    /// let rules = Rules::builder().literal("secret", "******").build()?;
    /// let mut it = wrap_bytes(rules.replacer(), [b"a secret b"]);
    /// assert_eq!(it.next().transpose()?.as_deref(), Some(&b"a ****** b"[..]));
    /// assert!(it.next().is_none());
    /// let (replacer, _) = it.into_parts();
    /// assert_eq!(replacer.held(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn into_parts(self) -> (Replacer, I) {
        (self.driver.into_replacer(), self.chunks)
    }
}

impl<I> Iterator for WrapBytes<I>
where
    I: Iterator,
    I::Item: AsRef<[u8]>,
{
    type Item = Result<Vec<u8>, StreamError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.driver.next::<[u8], _>(&mut self.chunks)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.driver.size_hint(self.chunks.size_hint())
    }
}

impl<I> FusedIterator for WrapBytes<I>
where
    I: Iterator,
    I::Item: AsRef<[u8]>,
{
}

impl Driver {
    /// The next non-empty output, pulling chunks until there is one or the
    /// source ends.
    fn next<U, I>(&mut self, chunks: &mut I) -> Option<Result<U::Out, StreamError>>
    where
        U: Unit + ?Sized,
        I: Iterator,
        I::Item: AsRef<U>,
    {
        while !self.is_done() {
            if let Some(e) = self.take_pending() {
                return Some(Err(e));
            }
            let chunk = chunks.next();
            if let ControlFlow::Break(item) = self.step(chunk.as_ref().map(AsRef::as_ref)) {
                return item;
            }
        }
        None
    }
}
