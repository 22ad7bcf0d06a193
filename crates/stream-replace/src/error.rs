//! Errors from building rules and from running a stream.

use std::fmt;

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
    /// [`Config::size_limit`](crate::Config::size_limit) allows.
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
        }
    }
}

/// An error from a running stream: the held text went over the configured
/// limit, or a panic left the stream poisoned.
///
/// Either way the stream fails closed: the held text is discarded, never
/// emitted, and every later call fails until
/// [`Replacer::reset`](crate::Replacer::reset) (or a
/// [`flush`](crate::Replacer::flush), which returns this error and resets).
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
    kind: StreamErrorKind,
    held: usize,
    limit: usize,
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
}

impl StreamError {
    pub(crate) fn new(held: usize, limit: usize) -> StreamError {
        StreamError {
            kind: StreamErrorKind::HeldLimit,
            held,
            limit,
        }
    }

    pub(crate) fn poisoned(held: usize, limit: usize) -> StreamError {
        StreamError {
            kind: StreamErrorKind::Poisoned,
            held,
            limit,
        }
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
        self.kind
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
        self.held
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
        self.limit
    }
}

impl fmt::Display for StreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            StreamErrorKind::HeldLimit => write!(
                f,
                "stream stopped: {} bytes held, more than the limit of {} (Config::max_held); \
                 the held text was discarded",
                self.held, self.limit
            ),
            StreamErrorKind::Poisoned => write!(
                f,
                "stream poisoned: a panic unwound out of an earlier call; the {} bytes it held \
                 were discarded; reset the replacer to start a new stream",
                self.held
            ),
        }
    }
}

impl std::error::Error for StreamError {}

impl From<StreamError> for std::io::Error {
    fn from(e: StreamError) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::InvalidData, e)
    }
}
