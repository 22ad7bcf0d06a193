//! Errors from building rules and from running a stream.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use regex_automata::dfa::dense;
use regex_automata::nfa::thompson;
use regex_automata::{hybrid, meta};

/// An error from building [`Rules`](crate::Rules).
///
/// It names the rule at fault (its index in the order the rules were added)
/// where there is one, keeps the underlying error as its
/// [`source`](std::error::Error::source) (a `regex_syntax::Error` for a
/// syntax error, a `regex_automata` build error otherwise), and its message
/// says which [`Config`](crate::Config) limit to raise when one was hit.
///
/// # Example
///
/// ```
/// use std::error::Error as _;
/// use stream_replace::{ErrorKind, Rules};
///
/// let err = Rules::builder()
///     .literal("ok", "fine")
///     .regex(r"(unclosed", "x")
///     .build()
///     .unwrap_err();
/// assert_eq!(err.rule(), Some(1));
/// assert_eq!(err.kind(), &ErrorKind::Syntax);
/// assert!(err.to_string().contains("rule 1"));
/// assert!(err.source().is_some());
/// ```
#[derive(Clone, Debug)]
pub struct Error {
    kind: ErrorKind,
    rule: Option<usize>,
    pattern: Option<String>,
    message: String,
    /// Boxed: the syntax error alone is larger than the rest.
    cause: Option<Box<Cause>>,
}

/// The error an [`Error`] was made from.
#[derive(Clone, Debug)]
enum Cause {
    Syntax(regex_syntax::Error),
    Regex(meta::BuildError),
    Dfa(hybrid::BuildError),
    Dense(dense::BuildError),
}

/// What went wrong when building [`Rules`](crate::Rules).
///
/// # Example
///
/// ```
/// use stream_replace::{ErrorKind, Rules};
///
/// let kind = |b: &mut stream_replace::RulesBuilder| b.build().unwrap_err().kind().clone();
/// assert_eq!(kind(Rules::builder().regex("[", "x")), ErrorKind::Syntax);
/// assert_eq!(kind(Rules::builder().regex("(a)", "$2")), ErrorKind::UnknownGroup);
/// ```
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// A regex rule's pattern is not valid `regex` syntax.
    Syntax,
    /// A replacement template names a capture group the rule's pattern
    /// does not have (for example `${nmae}`, `$1a`, or `$5` in `"cost $5"`,
    /// where `$$` was meant).
    UnknownGroup,
    /// The rule, or the whole rule set, is larger than
    /// [`Config::size_limit`](crate::Config::size_limit) allows, or than
    /// another of the limits of [`Config`](crate::Config) that bound the
    /// build: [`dense_size_limit`](crate::Config::dense_size_limit),
    /// [`split_literal_limit`](crate::Config::split_literal_limit),
    /// [`caseless_regex_limit`](crate::Config::caseless_regex_limit). The
    /// message names the limit and the setter that raises it.
    TooBig,
    /// Building the matching engine failed for another reason.
    Build,
}

/// Patterns longer than this are shortened in messages (a 100,000-word
/// alternation would otherwise make a message of a megabyte).
const SHOWN_PATTERN: usize = 80;

impl Error {
    pub(crate) fn new(
        kind: ErrorKind,
        rule: Option<usize>,
        pattern: Option<&str>,
        message: impl Into<String>,
    ) -> Error {
        Error {
            kind,
            rule,
            pattern: pattern.map(str::to_owned),
            message: message.into(),
            cause: None,
        }
    }

    /// An error of `regex_automata`'s `meta` engine (a syntax error, or a
    /// compiled pattern over the size limit).
    pub(crate) fn from_regex(e: meta::BuildError) -> Error {
        if let Some(se) = e.syntax_error() {
            return Error::from_syntax(se.clone());
        }
        let mut err = match e.size_limit() {
            Some(limit) => Error::too_big(limit),
            None => Error::new(ErrorKind::Build, None, None, chain(&e)),
        };
        err.cause = Some(Box::new(Cause::Regex(e)));
        err
    }

    /// A pattern that is not valid `regex` syntax.
    pub(crate) fn from_syntax(se: regex_syntax::Error) -> Error {
        let mut err = Error::new(ErrorKind::Syntax, None, None, se.to_string());
        err.cause = Some(Box::new(Cause::Syntax(se)));
        err
    }

    /// An error of the streaming engine's lazy DFA build: most often its NFA
    /// went over the size limit.
    pub(crate) fn from_dfa(e: hybrid::BuildError) -> Error {
        let limit = std::error::Error::source(&e)
            .and_then(|s| s.downcast_ref::<thompson::BuildError>())
            .and_then(thompson::BuildError::size_limit);
        let mut err = match limit {
            Some(limit) => Error::too_big(limit),
            None => Error::new(ErrorKind::Build, None, None, chain(&e)),
        };
        err.cause = Some(Box::new(Cause::Dfa(e)));
        err
    }

    /// An error of the dense DFA's build, when
    /// [`DfaKind::Dense`](crate::DfaKind::Dense) asks for one: most often it
    /// went over [`Config::dense_size_limit`](crate::Config::dense_size_limit).
    pub(crate) fn from_dense(e: dense::BuildError, limit: usize) -> Error {
        let mut err = if e.is_size_limit_exceeded() {
            Error::new(
                ErrorKind::TooBig,
                None,
                None,
                format!(
                    "its dense DFA exceeds the limit of {limit} bytes; raise it with \
                     Config::dense_size_limit, or let the streams build their DFA lazily \
                     with DfaKind::Auto or DfaKind::Lazy"
                ),
            )
        } else {
            Error::new(ErrorKind::Build, None, None, chain(&e))
        };
        err.cause = Some(Box::new(Cause::Dense(e)));
        err
    }

    fn too_big(limit: usize) -> Error {
        Error::new(
            ErrorKind::TooBig,
            None,
            None,
            format!(
                "its compiled form exceeds the size limit of {limit} bytes; \
                 raise the limit with Config::size_limit"
            ),
        )
    }

    /// Names the rule to blame, with a message that replaces the current
    /// one when given.
    pub(crate) fn blame(mut self, rule: usize, pattern: &str, message: Option<String>) -> Error {
        self.rule = Some(rule);
        self.pattern = Some(pattern.to_owned());
        if let Some(m) = message {
            self.message = m;
        }
        self
    }

    /// What kind of error this is.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{ErrorKind, Rules};
    ///
    /// let err = Rules::builder().regex(r"(\d+)", "$2").build().unwrap_err();
    /// assert_eq!(err.kind(), &ErrorKind::UnknownGroup);
    /// ```
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// The index of the rule at fault, in the order the rules were added.
    ///
    /// When the rules are too big only together, this is the first rule
    /// that takes them over the limit: the rules before it fit. It is
    /// `None` only when no rule can be blamed.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let err = Rules::builder()
    ///     .literal("a", "b")
    ///     .regex("x", "y")
    ///     .regex(r"(\d+)", "${nmae}")
    ///     .build()
    ///     .unwrap_err();
    /// assert_eq!(err.rule(), Some(2));
    /// ```
    pub fn rule(&self) -> Option<usize> {
        self.rule
    }

    /// The pattern of the rule at fault, when there is one.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let err = Rules::builder().regex("(unclosed", "x").build().unwrap_err();
    /// assert_eq!(err.pattern(), Some("(unclosed"));
    /// ```
    pub fn pattern(&self) -> Option<&str> {
        self.pattern.as_deref()
    }
}

/// The messages of `e` and of its sources, for an error with no better
/// description (`regex_automata`'s say "error building NFA" and leave the
/// reason to their source).
fn chain(e: &dyn std::error::Error) -> String {
    let mut message = e.to_string();
    let mut next = e.source();
    while let Some(s) = next {
        message.push_str(": ");
        message.push_str(&s.to_string());
        next = s.source();
    }
    message
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            ErrorKind::Syntax => "invalid pattern",
            ErrorKind::UnknownGroup => "replacement names an unknown capture group",
            ErrorKind::TooBig => "too big",
            ErrorKind::Build => "cannot build rules",
        };
        if let Some(i) = self.rule {
            write!(f, "rule {i}")?;
            if let Some(p) = &self.pattern {
                match p.char_indices().nth(SHOWN_PATTERN) {
                    Some((cut, _)) => write!(f, " ({:?}... {} bytes in all)", &p[..cut], p.len())?,
                    None => write!(f, " ({p:?})")?,
                }
            }
            f.write_str(": ")?;
        }
        write!(f, "{what}: {}", self.message)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self.cause.as_deref()? {
            Cause::Syntax(e) => Some(e),
            Cause::Regex(e) => Some(e),
            Cause::Dfa(e) => Some(e),
            Cause::Dense(e) => Some(e),
        }
    }
}

/// An error from a running stream: a block rule stopped it, the held text
/// went over the configured limit, or a panic left the stream poisoned.
///
/// Every way the stream fails closed: the held text is discarded, never
/// emitted, and every later call, [`feed`](crate::Replacer::feed) and
/// [`flush`](crate::Replacer::flush) alike, returns the same error and
/// releases nothing until [`Replacer::reset`](crate::Replacer::reset).
///
/// # Reporting a failure
///
/// A failure, a block included, has one shape: this error, whose
/// [`kind`](StreamError::kind) says which, with the [`Block`] (rule id,
/// reason, span) as [`block`](StreamError::block) and as `source()`. The
/// text the failing call released before it (on a block, the safe text
/// before the blocked match) goes where that call's output goes: in
/// [`released`](StreamError::released) for the methods that return their
/// output (`feed`, `flush`, …), appended to `out` for the `_into` methods,
/// first in the output of the adapters (an item, a write, a read), the error
/// after it. As an [`std::io::Error`] (kind `InvalidData`), the inner error
/// is this error. [`Events`](crate::Events) is a view of the same stream as
/// events: there a block is the stream's final event, whose
/// [`block`](crate::Event::block) is the same [`Block`], and the other
/// failures are this error.
///
/// # Example
///
/// ```
/// use stream_replace::{Config, Rules, StreamErrorKind};
///
/// let rules = Rules::builder()
///     .regex(r"<think>[\s\S]*?</think>", "")
///     .config(Config::new().max_held(16))
///     .build()?;
/// let mut r = rules.replacer();
/// assert_eq!(r.feed("a <think>")?, "a ");
/// let err = r.feed("this goes on and on").unwrap_err();
/// assert_eq!(err.kind(), StreamErrorKind::HeldLimit);
/// assert_eq!(err.limit(), 16);
/// assert!(r.feed("more").is_err());
/// r.reset();
/// assert_eq!(r.feed("fresh")?, "fresh");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamError {
    // Boxed: a stream's calls return `Result<(), StreamError>` on the hot
    // path, where an 8-byte result is cheaper to pass than the error.
    inner: Box<StreamErrorInner>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct StreamErrorInner {
    kind: StreamErrorKind,
    held: usize,
    limit: usize,
    block: Option<Block>,
    released: Vec<u8>,
}

/// What stopped a stream: the kind of a [`StreamError`].
///
/// # Example
///
/// ```
/// use stream_replace::{Config, Rules, StreamErrorKind};
///
/// let rules = Rules::builder()
///     .literal("password", "***")
///     .config(Config::new().max_held(4))
///     .build()?;
/// let err = rules.replacer().feed("passwo").unwrap_err();
/// assert_eq!(err.kind(), StreamErrorKind::HeldLimit);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamErrorKind {
    /// More than [`Config::max_held`](crate::Config::max_held) bytes were
    /// held under [`HeldLimit::Fail`](crate::HeldLimit::Fail).
    HeldLimit,
    /// A panic (in a replacement closure, say) unwound out of an earlier
    /// call on this stream, leaving it in an unknown state. As a
    /// `std::sync::Mutex` is poisoned, the stream refuses every later call
    /// until it is reset, and nothing it held when the panic struck is
    /// released.
    Poisoned,
    /// A block rule matched ([`StreamError::block`] says which, why and
    /// where). Everything before the match was released; the match and
    /// everything after it never are, and every later call reports the same
    /// block until the stream ends (a [`flush`](crate::Replacer::flush),
    /// which reports it once more, or a [`reset`](crate::Replacer::reset)).
    Blocked,
}

impl StreamError {
    pub(crate) fn new(held: usize, limit: usize) -> StreamError {
        StreamError::of(StreamErrorKind::HeldLimit, held, limit, None)
    }

    pub(crate) fn blocked(block: Block, held: usize, limit: usize) -> StreamError {
        StreamError::of(StreamErrorKind::Blocked, held, limit, Some(block))
    }

    /// The same error, carrying `released`, the output of the failing call
    /// before the failure.
    #[cold]
    fn of(kind: StreamErrorKind, held: usize, limit: usize, block: Option<Block>) -> StreamError {
        StreamError {
            inner: Box::new(StreamErrorInner {
                kind,
                held,
                limit,
                block,
                released: Vec::new(),
            }),
        }
    }

    pub(crate) fn with_released(mut self, released: Vec<u8>) -> StreamError {
        self.inner.released = released;
        self
    }

    /// The block, when a block rule stopped the stream.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Rule, Rules};
    ///
    /// let rules = Rules::builder().add(Rule::literal("x", "").id("ex").block("no x")).build()?;
    /// let err = rules.replacer().feed("a x b").unwrap_err();
    /// assert_eq!(err.block().unwrap().id(), "ex");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn block(&self) -> Option<&crate::Block> {
        self.inner.block.as_ref()
    }

    /// The text that the failing call released before it failed, when the
    /// call returns its output ([`feed`](crate::Replacer::feed),
    /// [`feed_bytes`](crate::Replacer::feed_bytes),
    /// [`flush`](crate::Replacer::flush),
    /// [`flush_bytes`](crate::Replacer::flush_bytes)): on a block, the safe
    /// text before the blocked match. The `_into` methods append that text
    /// to their `out` before they return the error, and leave this empty;
    /// so do the later calls that report the same failure. A `&str` stream's
    /// text is UTF-8.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Rule, Rules};
    ///
    /// let rules = Rules::builder().add(Rule::literal("x", "").block("no x")).build()?;
    /// let mut r = rules.replacer();
    /// assert_eq!(r.feed("a x b").unwrap_err().released(), b"a ");
    /// assert_eq!(r.feed("c").unwrap_err().released(), b"");
    ///
    /// let mut out = String::new();
    /// r.reset();
    /// assert!(r.feed_into("a x b", &mut out).is_err());
    /// assert_eq!(out, "a ");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn released(&self) -> &[u8] {
        &self.inner.released
    }

    pub(crate) fn poisoned(held: usize, limit: usize) -> StreamError {
        StreamError::of(StreamErrorKind::Poisoned, held, limit, None)
    }

    /// What stopped the stream.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Config, Rules, StreamErrorKind};
    ///
    /// let rules = Rules::builder()
    ///     .literal("password", "***")
    ///     .config(Config::new().max_held(4))
    ///     .build()?;
    /// let err = rules.replacer().feed("passwo").unwrap_err();
    /// assert_eq!(err.kind(), StreamErrorKind::HeldLimit);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn kind(&self) -> StreamErrorKind {
        self.inner.kind
    }

    /// How many bytes were held (and discarded) when the stream stopped.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Config, Rules};
    ///
    /// let rules = Rules::builder()
    ///     .literal("password", "***")
    ///     .config(Config::new().max_held(4))
    ///     .build()?;
    /// let err = rules.replacer().feed("passwo").unwrap_err();
    /// assert_eq!(err.held(), 6);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn held(&self) -> usize {
        self.inner.held
    }

    /// The configured limit on held bytes.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Config, Rules};
    ///
    /// let rules = Rules::builder()
    ///     .literal("password", "***")
    ///     .config(Config::new().max_held(4))
    ///     .build()?;
    /// let err = rules.replacer().feed("passwo").unwrap_err();
    /// assert_eq!(err.limit(), 4);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn limit(&self) -> usize {
        self.inner.limit
    }
}

impl fmt::Display for StreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.inner.kind {
            StreamErrorKind::HeldLimit => write!(
                f,
                "stream stopped: {} bytes held, more than the limit of {} (Config::max_held); \
                 the held text was discarded",
                self.inner.held, self.inner.limit
            ),
            StreamErrorKind::Blocked => match &self.inner.block {
                Some(b) => write!(f, "stream {b}; nothing from the match on was released"),
                None => f.write_str("stream blocked"),
            },
            StreamErrorKind::Poisoned => write!(
                f,
                "stream poisoned: a panic unwound out of an earlier call; the {} bytes it held \
                 were discarded; reset the replacer to start a new stream",
                self.inner.held
            ),
        }
    }
}

impl std::error::Error for StreamError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.inner.block.as_ref().map(|b| b as _)
    }
}

/// An `io::Error` of kind `InvalidData` whose inner error is the
/// `StreamError`, for every kind of failure (a block's [`Block`] is its
/// [`block`](StreamError::block), and its `source()`).
///
/// # Example
///
/// ```
/// use stream_replace::{Rule, Rules, StreamError};
///
/// let rules = Rules::builder().add(Rule::literal("x", "").id("no_x").block("no x")).build()?;
/// let err: std::io::Error = rules.replacer().feed("a x").unwrap_err().into();
/// let inner = err.get_ref().and_then(|e| e.downcast_ref::<StreamError>()).unwrap();
/// assert_eq!(inner.block().map(|b| b.id()), Some("no_x"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl From<StreamError> for std::io::Error {
    fn from(e: StreamError) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::InvalidData, e)
    }
}

/// A stream stopped by a block rule: which rule, why, and where.
///
/// Everything before [`span`](Block::span)'s start was released; the match
/// and everything after it never are.
///
/// # Example
///
/// ```
/// use stream_replace::{Rule, Rules};
///
/// let rules = Rules::builder().add(Rule::literal("DROP", "").id("sql").block("SQL")).build()?;
/// let eval = rules.evaluate("ok; DROP TABLE x");
/// let block = eval.block().unwrap();
/// assert_eq!((block.rule(), block.id(), block.reason(), block.span()), (0, "sql", "SQL", 4..8));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Block {
    pub(crate) rule: usize,
    pub(crate) id: Arc<str>,
    pub(crate) reason: Arc<str>,
    pub(crate) span: Range<usize>,
}

impl Block {
    /// The index of the rule that blocked.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Rule, Rules};
    ///
    /// let rules = Rules::builder().literal("a", "b").add(Rule::literal("x", "").block("x")).build()?;
    /// assert_eq!(rules.evaluate("ax").block().unwrap().rule(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn rule(&self) -> usize {
        self.rule
    }

    /// The id of the rule that blocked.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Rule, Rules};
    ///
    /// let rules = Rules::builder().add(Rule::literal("x", "").block("x")).build()?;
    /// assert_eq!(rules.evaluate("x").block().unwrap().id(), "0");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The rule's reason.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Rule, Rules};
    ///
    /// let rules = Rules::builder().add(Rule::literal("x", "").block("no x")).build()?;
    /// assert_eq!(rules.evaluate("x").block().unwrap().reason(), "no x");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// The blocked match, in offsets of the stream's input.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Rule, Rules};
    ///
    /// let rules = Rules::builder().add(Rule::literal("x", "").block("x")).build()?;
    /// assert_eq!(rules.evaluate("abx").block().unwrap().span(), 2..3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn span(&self) -> Range<usize> {
        self.span.clone()
    }
}

impl fmt::Display for Block {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "blocked by rule {} at bytes {}..{}: {}",
            self.id, self.span.start, self.span.end, self.reason
        )
    }
}

impl std::error::Error for Block {}
