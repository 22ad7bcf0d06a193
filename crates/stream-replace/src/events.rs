//! A stream seen as numbered events, for UIs and audit logs.

use crate::error::{Block, StreamError};
use crate::guard::Trigger;
use crate::replacer::Replacer;
use crate::rules::Action;

/// One piece of a stream's output, for UIs and audit logs: see [`Events`].
///
/// # Example
///
/// ```
/// use stream_replace::{Events, Rules};
///
/// let rules = Rules::builder().regex(r"\d+", "N").build()?;
/// let mut events = Events::new(rules.replacer());
/// let e = events.feed("a 1")?.unwrap();
/// assert_eq!((e.index(), e.text(), e.is_redacted(), e.is_final()), (1, "a ", false, false));
/// let e = events.feed("2 b")?.unwrap();
/// assert_eq!((e.index(), e.text(), e.is_redacted()), (2, "N b", true));
/// assert_eq!(e.triggers()[0].span(), 2..4);
/// let last = events.finish()?.unwrap();
/// assert!(last.is_final() && last.text().is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    index: u64,
    text: String,
    triggers: Vec<Trigger>,
    is_final: bool,
    block: Option<Block>,
}

impl Event {
    /// The piece's number in its stream: 1 for the first, then one more for
    /// each, with no gaps.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Events, Rules};
    ///
    /// let rules = Rules::builder().literal("a", "b").build()?;
    /// let mut events = Events::new(rules.replacer());
    /// assert_eq!(events.feed("xyz")?.unwrap().index(), 1);
    /// assert_eq!(events.finish()?.unwrap().index(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn index(&self) -> u64 {
        self.index
    }

    /// The text of the piece (what a plain stream releases at this point).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Events, Rules};
    ///
    /// let rules = Rules::builder().literal("a", "b").build()?;
    /// let mut events = Events::new(rules.replacer());
    /// assert_eq!(events.feed("cat")?.unwrap().text(), "cbt");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether the piece holds a replacement (of a match a rule replaced).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Events, Rules};
    ///
    /// let rules = Rules::builder().literal("a", "b").build()?;
    /// let mut events = Events::new(rules.replacer());
    /// assert!(events.feed("cat")?.unwrap().is_redacted());
    /// assert!(!events.feed("dog")?.unwrap().is_redacted());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_redacted(&self) -> bool {
        self.triggers.iter().any(|t| *t.action() == Action::Replace)
    }

    /// The matches rules acted on in this piece (a block's last), with
    /// spans in the stream's input.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Events, Rules};
    ///
    /// let rules = Rules::builder().literal("a", "b").build()?;
    /// let mut events = Events::new(rules.replacer());
    /// assert_eq!(events.feed("aa")?.unwrap().triggers().len(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn triggers(&self) -> &[Trigger] {
        &self.triggers
    }

    /// Whether this is the stream's last piece (its end, or its block).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Events, Rules};
    ///
    /// let rules = Rules::builder().literal("a", "b").build()?;
    /// let mut events = Events::new(rules.replacer());
    /// assert!(!events.feed("a")?.unwrap().is_final());
    /// assert!(events.finish()?.unwrap().is_final());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_final(&self) -> bool {
        self.is_final
    }

    /// The block that ended the stream, on its final piece.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Events, Rule, Rules};
    ///
    /// let rules = Rules::builder().add(Rule::literal("x", "").id("ex").block("no x")).build()?;
    /// let mut events = Events::new(rules.replacer());
    /// let e = events.feed("ab x cd")?.unwrap();
    /// assert_eq!((e.text(), e.is_final()), ("ab ", true));
    /// assert_eq!(e.block().unwrap().id(), "ex");
    /// assert!(events.feed("more")?.is_none() && events.finish()?.is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn block(&self) -> Option<&Block> {
        self.block.as_ref()
    }
}

/// A stream seen as numbered [`Event`]s: each call that releases text (or
/// ends the stream) gives one event, with the triggers decided in it.
///
/// The events' joined text equals the plain stream's output, and each
/// stream has exactly one final event: [`finish`](Events::finish)'s, or the
/// block's. A block ends the stream as an event, not an error: after it,
/// [`feed`](Events::feed) and [`finish`](Events::finish) give nothing until
/// [`reset`](Events::reset). Errors are the other failures of a
/// [`Replacer`](Replacer) (a held limit, a poisoned stream); after
/// one, call [`reset`](Events::reset).
///
/// # Example
///
/// ```
/// use stream_replace::{Events, Rule, Rules};
///
/// let rules = Rules::builder()
///     .add(Rule::regex(r"\w+@\w+\.\w+", "[EMAIL]").id("email"))
///     .build()?;
/// let mut events = Events::new(rules.replacer());
/// let mut all = Vec::new();
/// for chunk in ["Hi ann", "@x.org", ", bye"] {
///     all.extend(events.feed(chunk)?);
/// }
/// all.extend(events.finish()?);
/// let text: String = all.iter().map(|e| e.text()).collect();
/// assert_eq!(text, "Hi [EMAIL], bye");
/// let indexes: Vec<u64> = all.iter().map(|e| e.index()).collect();
/// assert_eq!(indexes, [1, 2, 3]);
/// assert_eq!(all.iter().filter(|e| e.is_redacted()).count(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Events {
    replacer: Replacer,
    next: u64,
    ended: bool,
}

impl Events {
    /// Events over `replacer`'s stream (it records triggers from now on,
    /// without their values).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Events, Rules};
    ///
    /// let rules = Rules::builder().literal("a", "b").build()?;
    /// let events = Events::new(rules.replacer());
    /// assert_eq!(events.replacer().held(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(mut replacer: Replacer) -> Events {
        replacer.record_triggers(true, false);
        Events {
            replacer,
            next: 1,
            ended: false,
        }
    }

    /// The underlying stream.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Events, Rules};
    ///
    /// let rules = Rules::builder().literal("hello", "bye").build()?;
    /// let mut events = Events::new(rules.replacer());
    /// assert!(events.feed("hel")?.is_none());
    /// assert_eq!(events.replacer().held(), 3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn replacer(&self) -> &Replacer {
        &self.replacer
    }

    fn event(&mut self, text: String, is_final: bool, block: Option<Block>) -> Option<Event> {
        let triggers = self.replacer.take_triggers();
        if text.is_empty() && triggers.is_empty() && !is_final {
            return None;
        }
        let index = self.next;
        self.next += 1;
        if is_final {
            self.ended = true;
        }
        Some(Event {
            index,
            text,
            triggers,
            is_final,
            block,
        })
    }

    fn fail(&mut self, e: StreamError) -> Result<Option<Event>, StreamError> {
        match e.block() {
            Some(block) => {
                let block = block.clone();
                // The block is reported here, as the final event.
                self.replacer.reset();
                let text = String::from_utf8_lossy(e.released()).into_owned();
                Ok(self.event(text, true, Some(block)))
            }
            None => Err(e),
        }
    }

    /// Feeds a chunk: the event of the text it releases, if any (none when
    /// it releases nothing and decides nothing, or after the final event).
    ///
    /// # Errors
    ///
    /// As [`Replacer::feed`](Replacer::feed), except for a block,
    /// which is a final event.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Events, Rules};
    ///
    /// let rules = Rules::builder().literal("hello", "bye").build()?;
    /// let mut events = Events::new(rules.replacer());
    /// assert!(events.feed("hel")?.is_none());
    /// assert_eq!(events.feed("lo!")?.unwrap().text(), "bye!");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn feed(&mut self, chunk: &str) -> Result<Option<Event>, StreamError> {
        if self.ended {
            return Ok(None);
        }
        match self.replacer.feed(chunk) {
            Ok(text) => Ok(self.event(text, false, None)),
            Err(e) => self.fail(e),
        }
    }

    /// Ends the stream: its final event, or none when a block already
    /// ended it. The next [`feed`](Events::feed) after a
    /// [`reset`](Events::reset) starts a new stream, numbered from 1.
    ///
    /// # Errors
    ///
    /// As [`Replacer::flush`](Replacer::flush), except for a block,
    /// which is a final event.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Events, Rules};
    ///
    /// let rules = Rules::builder().regex(r"\d+", "N").build()?;
    /// let mut events = Events::new(rules.replacer());
    /// assert!(events.feed("12")?.is_none());
    /// let last = events.finish()?.unwrap();
    /// assert_eq!((last.index(), last.text(), last.is_final()), (1, "N", true));
    /// assert!(events.finish()?.is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn finish(&mut self) -> Result<Option<Event>, StreamError> {
        if self.ended {
            return Ok(None);
        }
        match self.replacer.flush() {
            Ok(text) => Ok(self.event(text, true, None)),
            Err(e) => self.fail(e),
        }
    }

    /// Starts a new stream, numbered from 1 (dropping what is held).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Events, Rules};
    ///
    /// let rules = Rules::builder().literal("a", "b").build()?;
    /// let mut events = Events::new(rules.replacer());
    /// events.feed("x")?;
    /// events.finish()?;
    /// events.reset();
    /// assert_eq!(events.feed("a")?.unwrap().index(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reset(&mut self) {
        self.replacer.reset();
        self.replacer.take_triggers();
        self.next = 1;
        self.ended = false;
    }
}
