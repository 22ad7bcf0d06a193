//! Errors: a bad JSON pointer, and a stream that had to stop.

use std::fmt;

use stream_replace::{Block, StreamError};

/// Why an [`SseReplacer`](crate::SseReplacer) stream stopped.
///
/// Once a stream has failed, it has already appended an error event to the
/// output and discarded every held fragment; later calls append nothing
/// and return the same error until [`reset`](crate::SseReplacer::reset).
///
/// # Example
///
/// ```
/// use stream_replace::{Config, Rules};
/// use stream_replace_sse::{Format, SseReplacer};
///
/// let rules = Rules::builder()
///     .regex(r"<think>[\s\S]*?</think>", "")
///     .config(Config::new().max_held(8))
///     .build()?;
/// let mut sse = SseReplacer::new(&rules, Format::OpenAiChat);
/// let mut out = Vec::new();
/// let upstream = br#"data: {"choices":[{"index":0,"delta":{"content":"<think>a long thought"}}]}
///
/// "#;
/// let err = sse.feed(upstream, &mut out).unwrap_err();
/// assert!(err.held_limit().is_some());
/// assert!(String::from_utf8(out)?.contains("\"error\""));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
}

/// The kinds of [`Error`].
///
/// # Example
///
/// ```
/// use stream_replace::Rules;
/// use stream_replace_sse::{ErrorKind, Format, SseReplacer};
///
/// let rules = Rules::builder().literal("x", "y").build()?;
/// let mut sse = SseReplacer::new(&rules, Format::OpenAiChat);
/// let err = sse.feed(b"data: {not json\n\n", &mut Vec::new()).unwrap_err();
/// assert!(matches!(err.kind(), ErrorKind::InvalidJson { .. }));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// A field stream held more bytes than its rules'
    /// [`Config::max_held`](stream_replace::Config::max_held) allows, with
    /// the fail-closed policy.
    HeldLimit(StreamError),
    /// A block rule matched in a field: the stream ends with an error event
    /// naming the rule and its reason (never the value), just after the
    /// field's safe text before the match; nothing from the match on is
    /// sent.
    Blocked(Block),
    /// An event's data was neither JSON nor `[DONE]`: its fields cannot be
    /// checked, so it is not forwarded.
    InvalidJson {
        /// The JSON parser's message.
        message: String,
    },
    /// An event was larger than
    /// [`Options::max_event`](crate::Options::max_event).
    EventTooLarge {
        /// The configured limit, in bytes.
        limit: usize,
    },
}

impl Error {
    pub(crate) fn new(kind: ErrorKind) -> Error {
        Error { kind }
    }

    /// What went wrong.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    /// use stream_replace_sse::{ErrorKind, Format, SseReplacer};
    ///
    /// let rules = Rules::builder().literal("x", "y").build()?;
    /// let mut sse = SseReplacer::new(&rules, Format::AnthropicMessages);
    /// let err = sse.feed(b"data: nope\n\n", &mut Vec::new()).unwrap_err();
    /// assert!(matches!(err.kind(), ErrorKind::InvalidJson { .. }));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// The held-limit error of the field stream that stopped, if that is
    /// why the stream failed.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Config, Rules};
    /// use stream_replace_sse::{Format, SseReplacer};
    ///
    /// let rules = Rules::builder()
    ///     .literal("password", "***")
    ///     .config(Config::new().max_held(4))
    ///     .build()?;
    /// let mut sse = SseReplacer::new(&rules, Format::pointers(["/text"])?);
    /// let err = sse.feed(b"data: {\"text\":\"passwo\"}\n\n", &mut Vec::new()).unwrap_err();
    /// assert_eq!(err.held_limit().map(|e| e.limit()), Some(4));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn held_limit(&self) -> Option<&StreamError> {
        match &self.kind {
            ErrorKind::HeldLimit(e) => Some(e),
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::HeldLimit(e) => write!(f, "a field {e}"),
            ErrorKind::Blocked(b) => write!(f, "a field was {b}; the stream was stopped"),
            ErrorKind::InvalidJson { message } => {
                write!(
                    f,
                    "an event's data is not JSON, so it was not forwarded: {message}"
                )
            }
            ErrorKind::EventTooLarge { limit } => write!(
                f,
                "an event is larger than the limit of {limit} bytes, so it was not forwarded"
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ErrorKind::HeldLimit(e) => Some(e),
            ErrorKind::Blocked(b) => Some(b),
            _ => None,
        }
    }
}

/// A JSON pointer given to [`Format::pointers`](crate::Format::pointers)
/// is not valid.
///
/// # Example
///
/// ```
/// use stream_replace_sse::Format;
///
/// let err = Format::pointers(["text"]).unwrap_err();
/// assert_eq!(err.pointer(), "text");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PointerError {
    pointer: String,
}

impl PointerError {
    pub(crate) fn new(pointer: String) -> PointerError {
        PointerError { pointer }
    }

    /// The pointer that was rejected.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_sse::Format;
    ///
    /// assert_eq!(Format::pointers(["/ok", "~bad"]).unwrap_err().pointer(), "~bad");
    /// ```
    pub fn pointer(&self) -> &str {
        &self.pointer
    }
}

impl fmt::Display for PointerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid JSON pointer {:?}: a pointer is empty or starts with '/', \
             and '~' appears only as '~0' or '~1'",
            self.pointer
        )
    }
}

impl std::error::Error for PointerError {}
