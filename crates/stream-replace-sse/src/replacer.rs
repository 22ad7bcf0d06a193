//! The field streams of one SSE response.

use serde_json::{Map, Value, json};
use stream_replace::{Replacer, Rules, StreamError};

use crate::error::{Error, ErrorKind};
use crate::format::Format;
use crate::sse::{Event, Parser};

/// Options of an [`SseReplacer`].
///
/// Setters take and return `Options` by value, so they chain.
///
/// # Example
///
/// ```
/// use stream_replace_sse::Options;
///
/// let options = Options::new().hold_empty(true);
/// assert!(options.get_hold_empty());
/// ```
#[derive(Clone, Debug)]
pub struct Options {
    hold_empty: bool,
    max_event: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            hold_empty: false,
            max_event: 16 << 20,
        }
    }
}

impl Options {
    /// The defaults: an event whose fragments all come out empty is still
    /// forwarded; an event may take up to 16 MiB.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_sse::Options;
    ///
    /// assert!(!Options::new().get_hold_empty());
    /// ```
    pub fn new() -> Options {
        Options::default()
    }

    /// Whether to hold back an event whose fragments all came out empty
    /// (their text is held by the rules) and that carries nothing else.
    ///
    /// Off (the default), such an event is forwarded with empty fragments,
    /// so the client sees one event per upstream event. On, it is not
    /// forwarded: its text comes out in a later event of the same field.
    /// "Nothing else" means, for OpenAI, a chunk whose choices have no
    /// `finish_reason`, no `logprobs`, and deltas with only the rewritten
    /// fragments (and tool call `index`es), and no `usage`; for Anthropic,
    /// a `content_block_delta`. With [`Format::Pointers`] the rest of the
    /// event is not inspected: hold only if it carries nothing you need.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    /// use stream_replace_sse::{Format, Options, SseReplacer};
    ///
    /// let rules = Rules::builder().literal("secret", "***").build()?;
    /// let options = Options::new().hold_empty(true);
    /// let mut sse = SseReplacer::with_options(&rules, Format::pointers(["/t"])?, options);
    /// let mut out = Vec::new();
    /// sse.feed(b"data: {\"t\":\"sec\"}\n\n", &mut out)?;
    /// assert!(out.is_empty());
    /// sse.feed(b"data: {\"t\":\"ret!\"}\n\n", &mut out)?;
    /// assert_eq!(out, b"data: {\"t\":\"***!\"}\n\n");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn hold_empty(mut self, yes: bool) -> Options {
        self.hold_empty = yes;
        self
    }

    /// Whether [`hold_empty`](Options::hold_empty) is on.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_sse::Options;
    ///
    /// assert!(Options::new().hold_empty(true).get_hold_empty());
    /// ```
    pub fn get_hold_empty(&self) -> bool {
        self.hold_empty
    }

    /// The largest event, in bytes of its lines, the stream accepts (16
    /// MiB by default). An event is buffered whole before it is checked,
    /// so this bounds the memory one stream can take; a larger event fails
    /// the stream closed.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    /// use stream_replace_sse::{ErrorKind, Format, Options, SseReplacer};
    ///
    /// let rules = Rules::builder().literal("secret", "***").build()?;
    /// let options = Options::new().max_event(16);
    /// let mut sse = SseReplacer::with_options(&rules, Format::OpenAiChat, options);
    /// let err = sse.feed(b"data: {\"choices\": [", &mut Vec::new()).unwrap_err();
    /// assert_eq!(err.kind(), &ErrorKind::EventTooLarge { limit: 16 });
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn max_event(mut self, bytes: usize) -> Options {
        self.max_event = bytes;
        self
    }

    /// The limit set by [`max_event`](Options::max_event).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_sse::Options;
    ///
    /// assert_eq!(Options::new().get_max_event(), 16 << 20);
    /// ```
    pub fn get_max_event(&self) -> usize {
        self.max_event
    }
}

// The identity of one field stream within a response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Key {
    Chat { choice: u64, field: ChatField },
    Block { index: u64, field: BlockField },
    Pointer(usize),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ChatField {
    Content,
    Reasoning,
    Arguments(u64),
    FunctionCall,
    // Any other string of the delta but `role`, by its index in
    // `SseReplacer::delta_keys`.
    Other(usize),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BlockField {
    Text,
    PartialJson,
    Thinking,
}

impl BlockField {
    fn delta_type(self) -> &'static str {
        match self {
            BlockField::Text => "text_delta",
            BlockField::PartialJson => "input_json_delta",
            BlockField::Thinking => "thinking_delta",
        }
    }

    fn delta_key(self) -> &'static str {
        match self {
            BlockField::Text => "text",
            BlockField::PartialJson => "partial_json",
            BlockField::Thinking => "thinking",
        }
    }
}

#[derive(Debug)]
struct FieldStream {
    key: Key,
    replacer: Replacer,
    // For `Format::Pointers`: the last event that carried this field and
    // its parsed data, the template of the event that carries the rest.
    template: Option<(Event, Value)>,
}

/// Rewrites the text fields of a Server-Sent Events stream with
/// [`Rules`], exactly, however the fields are split across events and the
/// events across reads.
///
/// Bytes of the upstream response go in through [`feed`](SseReplacer::feed)
/// and [`finish`](SseReplacer::finish); the bytes that are safe to send to
/// the client come out. Each field ([`Format`] says which) is one stream
/// of text, run through its own [`Replacer`]: an event's fragment is
/// decoded from JSON, fed, and replaced by the text that is safe now,
/// encoded as a JSON string again. A value cut across two events is thus
/// redacted like one cut across two chunks of plain text, and a
/// replacement containing quotes stays valid JSON.
///
/// # Events
///
/// * An event with none of the fields passes through unchanged (re-written
///   with `\n` line ends). An event with a field is re-serialised from its
///   parsed JSON: keys keep their order and values their meaning, numbers
///   their exact value (an integer past `u64` stays as written; an
///   exponent is written `e+`/`e-`: `1.5e3` becomes `1.5e+3`), but
///   insignificant whitespace and escapes are normalised, and a duplicated
///   key keeps only the value that was checked (the last).
/// * When a fragment's safe text is empty, the event still goes out with an
///   empty fragment, so role, usage and finish events are never lost
///   ([`Options::hold_empty`] holds it instead).
/// * When a field ends (a `finish_reason`, `content_block_stop`,
///   `message_delta`, `message_stop`, `[DONE]` or [`finish`](SseReplacer::finish)),
///   its stream is flushed. If the ending event itself carries the field,
///   the rest is appended to its fragment; otherwise, if the rest is not
///   empty, an extra event carrying it is sent just before the ending
///   event: for OpenAI a chunk with the last chunk's `id`, `model` and
///   other top-level fields and a single choice whose delta has only that
///   field; for Anthropic a `content_block_delta` of the block's delta
///   type; for pointers a copy of the last event that carried the field,
///   with the rest at the pointer.
///
/// # Failing closed
///
/// When a field stream holds more than its rules'
/// [`Config::max_held`](stream_replace::Config::max_held) (with the
/// default fail-closed policy), an event's data is neither JSON nor
/// `[DONE]`, or an event is larger than [`Options::max_event`], the
/// stream stops: the call appends an error event (an
/// OpenAI `{"error":{…}}` chunk, an Anthropic `event: error`, or for
/// pointers an `event: error` with `{"error":{…}}`), discards every held
/// fragment, and returns the [`Error`]. The events of the same read that
/// came before are still appended; nothing after is, not even `[DONE]`.
/// Later calls append nothing and return the same error until
/// [`reset`](SseReplacer::reset). Send what was appended, then close the
/// response.
///
/// A block rule's match in a field stops the stream the same way. The text
/// of that field before the match, which
/// [`StreamError::released`](stream_replace::StreamError::released) gives
/// a plain stream, goes out just before the error event as the field's last
/// fragment (in the event that carried it for Anthropic, or an extra event
/// as for a field's rest); nothing from the match on is sent.
///
/// # Example
///
/// ```
/// use stream_replace::Rules;
/// use stream_replace_sse::{Format, SseReplacer};
///
/// let rules = Rules::builder().regex(r"[\w.]+@[\w.]+\.\w+", "[EMAIL]").build()?;
/// let mut sse = SseReplacer::new(&rules, Format::OpenAiChat);
/// let mut out = Vec::new();
/// for read in [
///     &br#"data: {"choices":[{"index":0,"delta":{"content":"mail ann@exa"}}]}"#[..],
///     b"\n\n",
///     br#"data: {"choices":[{"index":0,"delta":{"content":"mple.org now"}}]}"#,
///     b"\n\n",
///     br#"data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
///     b"\n\ndata: [DONE]\n\n",
/// ] {
///     sse.feed(read, &mut out)?;
/// }
/// sse.finish(&mut out)?;
/// let out = String::from_utf8(out)?;
/// assert_eq!(
///     out,
///     concat!(
///         "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"mail \"}}]}\n\n",
///         "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"[EMAIL] \"}}]}\n\n",
///         // "now" could start an address: held until the choice finishes.
///         "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"now\"},\"finish_reason\":null}]}\n\n",
///         "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
///         "data: [DONE]\n\n",
///     )
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct SseReplacer {
    rules: Rules,
    format: Format,
    options: Options,
    parser: Parser,
    streams: Vec<FieldStream>,
    // The latest OpenAI chunk's top-level object, `choices` and `usage`
    // nulled: the template of a synthesised chunk.
    chat_meta: Option<Map<String, Value>>,
    // The names of the other delta fields seen, for `ChatField::Other`.
    delta_keys: Vec<String>,
    failed: Option<Error>,
    parsed: Vec<Event>,
    events: Vec<Event>,
}

impl SseReplacer {
    /// A stream for `format` with `rules` and the default [`Options`].
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    /// use stream_replace_sse::{Format, SseReplacer};
    ///
    /// let rules = Rules::builder().literal("secret", "***").build()?;
    /// let mut sse = SseReplacer::new(&rules, Format::AnthropicMessages);
    /// let mut out = Vec::new();
    /// sse.feed(b"event: ping\ndata: {\"type\":\"ping\"}\n\n", &mut out)?;
    /// assert_eq!(out, b"event: ping\ndata: {\"type\":\"ping\"}\n\n");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(rules: &Rules, format: Format) -> SseReplacer {
        SseReplacer::with_options(rules, format, Options::new())
    }

    /// A stream for `format` with `rules` and `options`.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    /// use stream_replace_sse::{Format, Options, SseReplacer};
    ///
    /// let rules = Rules::builder().literal("secret", "***").build()?;
    /// let sse = SseReplacer::with_options(&rules, Format::OpenAiChat, Options::new().hold_empty(true));
    /// assert_eq!(sse.held(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_options(rules: &Rules, format: Format, options: Options) -> SseReplacer {
        SseReplacer {
            rules: rules.clone(),
            format,
            options,
            parser: Parser::new(),
            streams: Vec::new(),
            chat_meta: None,
            delta_keys: Vec::new(),
            failed: None,
            parsed: Vec::new(),
            events: Vec::new(),
        }
    }

    /// Feeds upstream bytes; appends to `out` the SSE bytes now safe to
    /// send.
    ///
    /// Only whole events come out: an event is processed once its ending
    /// empty line has arrived.
    ///
    /// # Errors
    ///
    /// When the stream fails closed (see [Failing
    /// closed](SseReplacer#failing-closed)): `out` then ends with an error
    /// event.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    /// use stream_replace_sse::{Format, SseReplacer};
    ///
    /// let rules = Rules::builder().literal("secret", "***").build()?;
    /// let mut sse = SseReplacer::new(&rules, Format::AnthropicMessages);
    /// let mut out = Vec::new();
    /// sse.feed(br#"data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a sec"}}"#, &mut out)?;
    /// assert!(out.is_empty()); // the event is not complete yet
    /// sse.feed(b"\n\n", &mut out)?;
    /// assert_eq!(
    ///     String::from_utf8(out)?,
    ///     "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a \"}}\n\n",
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), Error> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let mut parsed = std::mem::take(&mut self.parsed);
        self.parser.feed(chunk, &mut parsed);
        let mut result = self.process_all(parsed.drain(..), out);
        parsed.clear();
        self.parsed = parsed;
        if result.is_ok() && self.parser.pending() > self.options.max_event {
            let mut events = Vec::new();
            result = self.settle(Err(self.too_large()), &mut events);
            events.iter().for_each(|e| e.write_to(out));
        }
        result
    }

    /// Ends the upstream stream: processes an event left without its
    /// ending empty line, flushes every field stream that is still open
    /// (sending its rest in an extra event), appends the result to `out`,
    /// and readies the replacer for a new stream.
    ///
    /// # Errors
    ///
    /// When the stream fails closed (see [Failing
    /// closed](SseReplacer#failing-closed)): `out` then ends with an error
    /// event.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    /// use stream_replace_sse::{Format, SseReplacer};
    ///
    /// let rules = Rules::builder().literal("secret", "***").build()?;
    /// let mut sse = SseReplacer::new(&rules, Format::pointers(["/t"])?);
    /// let mut out = Vec::new();
    /// sse.feed(b"data: {\"t\":\"a se\",\"n\":1}\n\n", &mut out)?;
    /// sse.finish(&mut out)?;
    /// assert_eq!(out, b"data: {\"t\":\"a \",\"n\":1}\n\ndata: {\"t\":\"se\",\"n\":1}\n\n");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn finish(&mut self, out: &mut Vec<u8>) -> Result<(), Error> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let last = self.parser.finish();
        self.process_all(last.into_iter(), out)?;
        let mut events = std::mem::take(&mut self.events);
        let result = self.flush_all(&mut events);
        let result = self.settle(result, &mut events);
        for event in events.drain(..) {
            event.write_to(out);
        }
        self.events = events;
        result?;
        self.reset();
        Ok(())
    }

    /// Processes one already-parsed event; appends the events to send.
    ///
    /// For callers with their own SSE client. Don't mix with
    /// [`feed`](SseReplacer::feed) on the same stream.
    ///
    /// # Errors
    ///
    /// When the stream fails closed (see [Failing
    /// closed](SseReplacer#failing-closed)): `out` then ends with an error
    /// event.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    /// use stream_replace_sse::{Event, Format, SseReplacer};
    ///
    /// let rules = Rules::builder().literal("secret", "***").build()?;
    /// let mut sse = SseReplacer::new(&rules, Format::pointers(["/t"])?);
    /// let mut out = Vec::new();
    /// sse.feed_event(Event::from_data(r#"{"t":"my secret"}"#), &mut out)?;
    /// assert_eq!(out[0].data().as_deref(), Some(r#"{"t":"my ***"}"#));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn feed_event(&mut self, event: Event, out: &mut Vec<Event>) -> Result<(), Error> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let result = self.process(event, out);
        self.settle(result, out)
    }

    /// Ends the stream of events: flushes every open field stream into
    /// `out` and readies the replacer for a new stream.
    ///
    /// # Errors
    ///
    /// When the stream fails closed (see [Failing
    /// closed](SseReplacer#failing-closed)): `out` then ends with an error
    /// event.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    /// use stream_replace_sse::{Event, Format, SseReplacer};
    ///
    /// let rules = Rules::builder().literal("secret", "***").build()?;
    /// let mut sse = SseReplacer::new(&rules, Format::pointers(["/t"])?);
    /// let mut out = Vec::new();
    /// sse.feed_event(Event::from_data(r#"{"t":"my sec"}"#), &mut out)?;
    /// sse.finish_events(&mut out)?;
    /// assert_eq!(out[1].data().as_deref(), Some(r#"{"t":"sec"}"#));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn finish_events(&mut self, out: &mut Vec<Event>) -> Result<(), Error> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let result = self.flush_all(out);
        self.settle(result, out)?;
        self.reset();
        Ok(())
    }

    /// Abandons the current stream (held fragments are dropped, a failure
    /// is forgotten) and readies the replacer for a new one.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    /// use stream_replace_sse::{Format, SseReplacer};
    ///
    /// let rules = Rules::builder().literal("x", "y").build()?;
    /// let mut sse = SseReplacer::new(&rules, Format::OpenAiChat);
    /// assert!(sse.feed(b"data: ?\n\n", &mut Vec::new()).is_err());
    /// sse.reset();
    /// assert!(sse.error().is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reset(&mut self) {
        self.parser = Parser::new();
        self.streams.clear();
        self.chat_meta = None;
        self.delta_keys.clear();
        self.failed = None;
    }

    /// The total number of fragment bytes held back by the field streams.
    ///
    /// Bytes of an incomplete event waiting for its end are not counted.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    /// use stream_replace_sse::{Format, SseReplacer};
    ///
    /// let rules = Rules::builder().literal("secret", "***").build()?;
    /// let mut sse = SseReplacer::new(&rules, Format::pointers(["/t"])?);
    /// sse.feed(b"data: {\"t\":\"a secr\"}\n\n", &mut Vec::new())?;
    /// assert_eq!(sse.held(), 4);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn held(&self) -> usize {
        self.streams.iter().map(|s| s.replacer.held()).sum()
    }

    /// The error the stream failed with, if it did.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    /// use stream_replace_sse::{Format, SseReplacer};
    ///
    /// let rules = Rules::builder().literal("x", "y").build()?;
    /// let mut sse = SseReplacer::new(&rules, Format::OpenAiChat);
    /// assert!(sse.error().is_none());
    /// let _ = sse.feed(b"data: {\n\n", &mut Vec::new());
    /// assert!(sse.error().is_some());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn error(&self) -> Option<&Error> {
        self.failed.as_ref()
    }

    fn process_all(
        &mut self,
        parsed: impl Iterator<Item = Event>,
        out: &mut Vec<u8>,
    ) -> Result<(), Error> {
        let mut events = std::mem::take(&mut self.events);
        let mut result = Ok(());
        for event in parsed {
            result = self.process(event, &mut events);
            if result.is_err() {
                break;
            }
        }
        let result = self.settle(result, &mut events);
        for event in events.drain(..) {
            event.write_to(out);
        }
        self.events = events;
        result
    }

    // On failure: drop every held fragment, remember the error, and end the
    // output with the error event.
    fn settle(&mut self, result: Result<(), Error>, out: &mut Vec<Event>) -> Result<(), Error> {
        if let Err(e) = &result {
            self.streams.clear();
            self.chat_meta = None;
            self.parser = Parser::new();
            self.failed = Some(e.clone());
            out.push(self.error_event(e));
        }
        result
    }

    fn error_event(&self, e: &Error) -> Event {
        let code = match e.kind() {
            ErrorKind::HeldLimit(_) => "held_limit",
            ErrorKind::Blocked(_) => "blocked",
            ErrorKind::EventTooLarge { .. } => "event_too_large",
            _ => "invalid_json",
        };
        let message = e.to_string();
        match self.format {
            Format::OpenAiChat => Event::from_data(
                &json!({"error": {"message": message, "type": "server_error", "code": code}})
                    .to_string(),
            ),
            Format::AnthropicMessages => {
                let mut event = Event::new();
                event.set_event_type("error");
                event.set_data(
                    &json!({"type": "error", "error": {"type": "api_error", "message": message}})
                        .to_string(),
                );
                event
            }
            Format::Pointers(_) => {
                let mut event = Event::new();
                event.set_event_type("error");
                event.set_data(&json!({"error": {"message": message, "code": code}}).to_string());
                event
            }
        }
    }

    fn too_large(&self) -> Error {
        Error::new(ErrorKind::EventTooLarge {
            limit: self.options.max_event,
        })
    }

    fn process(&mut self, event: Event, out: &mut Vec<Event>) -> Result<(), Error> {
        if event.byte_len() > self.options.max_event {
            return Err(self.too_large());
        }
        let Some(data) = event.data() else {
            out.push(event);
            return Ok(());
        };
        let trimmed = data.trim();
        if trimmed == "[DONE]" {
            self.flush_all(out)?;
            out.push(event);
            return Ok(());
        }
        if trimmed.is_empty() {
            out.push(event);
            return Ok(());
        }
        let root: Value = serde_json::from_str(&data).map_err(|e| {
            Error::new(ErrorKind::InvalidJson {
                message: e.to_string(),
            })
        })?;
        match &self.format {
            Format::OpenAiChat => self.chat_event(root, event, out),
            Format::AnthropicMessages => self.anthropic_event(root, event, out),
            Format::Pointers(_) => self.pointer_event(root, event, out),
        }
    }

    fn stream(&mut self, key: Key) -> &mut FieldStream {
        let i = match self.streams.iter().position(|s| s.key == key) {
            Some(i) => i,
            None => {
                self.streams.push(FieldStream {
                    key,
                    replacer: self.rules.replacer(),
                    template: None,
                });
                self.streams.len() - 1
            }
        };
        &mut self.streams[i]
    }

    fn chat_event(
        &mut self,
        mut root: Value,
        mut event: Event,
        out: &mut Vec<Event>,
    ) -> Result<(), Error> {
        if let Some(top) = root.as_object() {
            // Keys keep their places; the choices and usage are not copied.
            let meta = top
                .iter()
                .map(|(k, v)| match k.as_str() {
                    "choices" | "usage" => (k.clone(), Value::Null),
                    _ => (k.clone(), v.clone()),
                })
                .collect();
            self.chat_meta = Some(meta);
        }
        let mut finished = Vec::new();
        let mut extra = Vec::new();
        let mut all_empty = true;
        {
            let mut fragments = chat_fragments(&mut root, &mut finished, &mut self.delta_keys);
            if fragments.is_empty() && finished.is_empty() {
                out.push(event);
                return Ok(());
            }
            for (key, text) in fragments.iter_mut() {
                let safe = self
                    .stream(*key)
                    .replacer
                    .feed(text)
                    .map_err(|e| self.field_failed(*key, e, None, out))?;
                **text = safe;
            }
            for choice in finished.iter().copied() {
                let mut i = 0;
                while i < self.streams.len() {
                    let Key::Chat { choice: c, field } = self.streams[i].key else {
                        i += 1;
                        continue;
                    };
                    if c != choice {
                        i += 1;
                        continue;
                    }
                    let mut stream = self.streams.remove(i);
                    let rest = stream
                        .replacer
                        .flush()
                        .map_err(|e| self.field_failed(stream.key, e, None, out))?;
                    match fragments.iter_mut().find(|(k, _)| *k == stream.key) {
                        Some((_, text)) => text.push_str(&rest),
                        None if !rest.is_empty() => extra.push(self.chat_extra(c, field, rest)),
                        None => {}
                    }
                }
            }
            for (_, text) in &fragments {
                all_empty &= text.is_empty();
            }
        }
        out.append(&mut extra);
        if self.options.hold_empty && all_empty && finished.is_empty() && chat_is_bare(&root) {
            return Ok(());
        }
        event.set_data(&root.to_string());
        out.push(event);
        Ok(())
    }

    fn chat_extra(&self, choice: u64, field: ChatField, rest: String) -> Event {
        let delta = match field {
            ChatField::Content => json!({"content": rest}),
            ChatField::Reasoning => json!({"reasoning_content": rest}),
            ChatField::Arguments(index) => {
                json!({"tool_calls": [{"index": index, "function": {"arguments": rest}}]})
            }
            ChatField::FunctionCall => json!({"function_call": {"arguments": rest}}),
            ChatField::Other(k) => {
                let mut delta = Map::new();
                delta.insert(self.delta_keys[k].clone(), Value::String(rest));
                Value::Object(delta)
            }
        };
        let choices = json!([{"index": choice, "delta": delta, "finish_reason": null}]);
        let mut chunk = self.chat_meta.clone().unwrap_or_default();
        chunk.insert("choices".to_owned(), choices);
        Event::from_data(&Value::Object(chunk).to_string())
    }

    fn anthropic_event(
        &mut self,
        mut root: Value,
        mut event: Event,
        out: &mut Vec<Event>,
    ) -> Result<(), Error> {
        let kind = root
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let index = root.get("index").and_then(Value::as_u64);
        match (kind.as_str(), index) {
            ("content_block_start", Some(index)) | ("content_block_delta", Some(index)) => {
                let is_delta = kind == "content_block_delta";
                let Some((field, text)) = block_fragment(&mut root, is_delta) else {
                    out.push(event);
                    return Ok(());
                };
                let safe = match self.stream(Key::Block { index, field }).replacer.feed(text) {
                    Ok(safe) => safe,
                    Err(e) => {
                        // The event carries this one fragment: on a block it
                        // goes out with the safe text before the match.
                        if let Some(released) = released_on_block(&e) {
                            *text = released;
                            event.set_data(&root.to_string());
                            out.push(event);
                        }
                        return Err(held_limit(e));
                    }
                };
                *text = safe;
                if self.options.hold_empty
                    && is_delta
                    && text.is_empty()
                    && block_delta_is_bare(&root)
                {
                    return Ok(());
                }
                event.set_data(&root.to_string());
                out.push(event);
            }
            ("content_block_stop", Some(index)) => {
                self.flush_where(
                    |k| matches!(k, Key::Block { index: i, .. } if i == index),
                    out,
                )?;
                out.push(event);
            }
            ("message_delta" | "message_stop", _) => {
                self.flush_all(out)?;
                out.push(event);
            }
            _ => out.push(event),
        }
        Ok(())
    }

    fn pointer_event(
        &mut self,
        mut root: Value,
        mut event: Event,
        out: &mut Vec<Event>,
    ) -> Result<(), Error> {
        let Format::Pointers(pointers) = &self.format else {
            unreachable!("pointer_event is called for Format::Pointers only")
        };
        let pointers = pointers.as_slice().to_vec();
        let mut any = false;
        let mut all_empty = true;
        for (k, pointer) in pointers.iter().enumerate() {
            let Some(Value::String(text)) = root.pointer_mut(pointer) else {
                continue;
            };
            any = true;
            let safe = match self.stream(Key::Pointer(k)).replacer.feed(text) {
                Ok(safe) => safe,
                Err(e) => {
                    let template = Some((event, root));
                    return Err(self.field_failed(Key::Pointer(k), e, template, out));
                }
            };
            all_empty &= safe.is_empty();
            *text = safe;
        }
        if !any {
            out.push(event);
            return Ok(());
        }
        for (k, _) in pointers.iter().enumerate() {
            if let Some(s) = self.streams.iter_mut().find(|s| s.key == Key::Pointer(k)) {
                if matches!(root.pointer(&pointers[k]), Some(Value::String(_))) {
                    s.template = Some((event.clone(), root.clone()));
                }
            }
        }
        if self.options.hold_empty && all_empty {
            return Ok(());
        }
        event.set_data(&root.to_string());
        out.push(event);
        Ok(())
    }

    fn flush_all(&mut self, out: &mut Vec<Event>) -> Result<(), Error> {
        self.flush_where(|_| true, out)
    }

    // Flushes (and closes) the streams whose key matches, in the order they
    // opened, appending an event for each non-empty rest.
    fn flush_where(
        &mut self,
        mut which: impl FnMut(Key) -> bool,
        out: &mut Vec<Event>,
    ) -> Result<(), Error> {
        let mut i = 0;
        while i < self.streams.len() {
            if !which(self.streams[i].key) {
                i += 1;
                continue;
            }
            let mut stream = self.streams.remove(i);
            let template = stream.template.take();
            let rest = stream
                .replacer
                .flush()
                .map_err(|e| self.field_failed(stream.key, e, template.clone(), out))?;
            if rest.is_empty() {
                continue;
            }
            out.push(self.rest_event(stream.key, rest, template));
        }
        Ok(())
    }

    // A field stream failed. On a block, the safe text that the failing call
    // released before the match goes out as the field's last fragment, as a
    // plain stream delivers it; what the field held, from the match on, is
    // dropped with the stream.
    fn field_failed(
        &self,
        key: Key,
        e: StreamError,
        template: Option<(Event, Value)>,
        out: &mut Vec<Event>,
    ) -> Error {
        if let Some(released) = released_on_block(&e) {
            out.push(self.rest_event(key, released, template));
        }
        held_limit(e)
    }

    // The event that carries `rest`, the last text of the field `key`: see
    // [Events](SseReplacer#events). A pointer field's event is a copy of
    // `template`, the last event that carried it.
    fn rest_event(&self, key: Key, mut rest: String, template: Option<(Event, Value)>) -> Event {
        match key {
            Key::Chat { choice, field } => self.chat_extra(choice, field, rest),
            Key::Block { index, field } => {
                let mut event = Event::new();
                event.set_event_type("content_block_delta");
                let data = json!({
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": field.delta_type(), field.delta_key(): rest},
                });
                event.set_data(&data.to_string());
                event
            }
            Key::Pointer(k) => {
                let Format::Pointers(pointers) = &self.format else {
                    unreachable!("pointer keys exist for Format::Pointers only")
                };
                let (mut event, mut root) =
                    template.expect("a pointer stream records its template when it opens");
                // The other fields' text in the copy belongs to their
                // own streams, which already sent it.
                for (j, pointer) in pointers.as_slice().iter().enumerate() {
                    if let Some(Value::String(text)) = root.pointer_mut(pointer) {
                        *text = if j == k {
                            std::mem::take(&mut rest)
                        } else {
                            String::new()
                        };
                    }
                }
                event.set_data(&root.to_string());
                event
            }
        }
    }
}

// A field stream's failure: a block, or its held limit. Either way the
// stream fails closed: what the field held is dropped with it.
fn held_limit(e: StreamError) -> Error {
    match e.block() {
        Some(block) => Error::new(ErrorKind::Blocked(block.clone())),
        None => Error::new(ErrorKind::HeldLimit(e)),
    }
}

// The text a blocked call released before the match, if any.
fn released_on_block(e: &StreamError) -> Option<String> {
    if e.block().is_none() || e.released().is_empty() {
        return None;
    }
    // A `&str` stream releases whole characters.
    Some(String::from_utf8_lossy(e.released()).into_owned())
}

// Every fragment of an OpenAI chunk, keyed; the choices that finish in it
// go to `finished`.
fn chat_fragments<'v>(
    root: &'v mut Value,
    finished: &mut Vec<u64>,
    delta_keys: &mut Vec<String>,
) -> Vec<(Key, &'v mut String)> {
    let mut out = Vec::new();
    let Some(choices) = root.get_mut("choices").and_then(Value::as_array_mut) else {
        return out;
    };
    for (pos, choice) in choices.iter_mut().enumerate() {
        let Some(choice) = choice.as_object_mut() else {
            continue;
        };
        let c = choice
            .get("index")
            .and_then(Value::as_u64)
            .unwrap_or(pos as u64);
        if choice.get("finish_reason").is_some_and(|f| !f.is_null()) {
            finished.push(c);
        }
        let Some(delta) = choice.get_mut("delta").and_then(Value::as_object_mut) else {
            continue;
        };
        for (name, value) in delta.iter_mut() {
            let chat = |field| Key::Chat { choice: c, field };
            match (name.as_str(), value) {
                ("content", Value::String(s)) => out.push((chat(ChatField::Content), s)),
                ("reasoning_content", Value::String(s)) => {
                    out.push((chat(ChatField::Reasoning), s))
                }
                ("function_call", Value::Object(call)) => {
                    if let Some(Value::String(s)) = call.get_mut("arguments") {
                        out.push((chat(ChatField::FunctionCall), s));
                    }
                }
                ("tool_calls", Value::Array(calls)) => {
                    for (tpos, call) in calls.iter_mut().enumerate() {
                        let Some(call) = call.as_object_mut() else {
                            continue;
                        };
                        let t = call
                            .get("index")
                            .and_then(Value::as_u64)
                            .unwrap_or(tpos as u64);
                        if let Some(Value::String(s)) = call
                            .get_mut("function")
                            .and_then(|f| f.get_mut("arguments"))
                        {
                            out.push((chat(ChatField::Arguments(t)), s));
                        }
                    }
                }
                (name, Value::String(s)) if name != "role" => {
                    let k = match delta_keys.iter().position(|k| k == name) {
                        Some(k) => k,
                        None => {
                            delta_keys.push(name.to_owned());
                            delta_keys.len() - 1
                        }
                    };
                    out.push((chat(ChatField::Other(k)), s));
                }
                _ => {}
            }
        }
    }
    out
}

// Whether an OpenAI chunk carries nothing but its (emptied) fragments and
// the stream's top-level metadata.
fn chat_is_bare(root: &Value) -> bool {
    if root.get("usage").is_some_and(|u| !u.is_null()) {
        return false;
    }
    let Some(choices) = root.get("choices").and_then(Value::as_array) else {
        return false;
    };
    choices.iter().all(|choice| {
        let Some(choice) = choice.as_object() else {
            return false;
        };
        choice.iter().all(|(k, v)| match k.as_str() {
            "index" => true,
            "finish_reason" | "logprobs" => v.is_null(),
            "delta" => v.as_object().is_some_and(|d| {
                d.iter().all(|(k, v)| match k.as_str() {
                    "role" => false,
                    "function_call" => v.as_object().is_some_and(|f| {
                        f.len() == 1 && f.get("arguments").and_then(Value::as_str) == Some("")
                    }),
                    "tool_calls" => v.as_array().is_some_and(|calls| {
                        calls.iter().all(|call| {
                            call.as_object().is_some_and(|call| {
                                call.iter().all(|(k, v)| match k.as_str() {
                                    "index" => true,
                                    "function" => v.as_object().is_some_and(|f| {
                                        f.len() == 1
                                            && f.get("arguments").and_then(Value::as_str)
                                                == Some("")
                                    }),
                                    _ => false,
                                })
                            })
                        })
                    }),
                    // `content`, `reasoning_content` and any other field.
                    _ => v.as_str() == Some(""),
                })
            }),
            _ => false,
        })
    })
}

// The fragment of a `content_block_start` or `content_block_delta` event.
fn block_fragment(root: &mut Value, is_delta: bool) -> Option<(BlockField, &mut String)> {
    let (holder, type_key) = if is_delta {
        (root.get_mut("delta")?, "type")
    } else {
        (root.get_mut("content_block")?, "type")
    };
    let field = match (is_delta, holder.get(type_key).and_then(Value::as_str)?) {
        (true, "text_delta") | (false, "text") => BlockField::Text,
        (true, "input_json_delta") => BlockField::PartialJson,
        (true, "thinking_delta") | (false, "thinking") => BlockField::Thinking,
        _ => return None,
    };
    match holder.get_mut(field.delta_key()) {
        Some(Value::String(s)) => Some((field, s)),
        _ => None,
    }
}

fn block_delta_is_bare(root: &Value) -> bool {
    let top = root.as_object().is_some_and(|o| {
        o.keys()
            .all(|k| matches!(k.as_str(), "type" | "index" | "delta"))
    });
    let delta = root
        .get("delta")
        .and_then(Value::as_object)
        .is_some_and(|d| d.len() == 2);
    top && delta
}
