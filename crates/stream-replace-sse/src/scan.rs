//! The response scanner: every string of a JSON or SSE body is scanned
//! but those under a structural key, one exact stream per streamed field.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

use serde_json::{Value, json};
use stream_replace::{Replacer, Rules};

use crate::sse::{Event, Parser};

/// The caller's scope around each call into the rules: see
/// [`Hooks::scope`](crate::Hooks::scope).
pub(crate) type Lend<'a> = dyn FnMut(&mut dyn FnMut()) + 'a;

// Runs `f` inside the caller's scope. A scope that does not make the call
// gets it made here, outside the scope, so the text is scanned all the same.
fn lent<R>(lend: &mut Lend<'_>, f: impl FnOnce() -> R) -> R {
    let mut f = Some(f);
    let mut out = None;
    lend(&mut || {
        if let Some(f) = f.take() {
            out = Some(f());
        }
    });
    match (out, f) {
        (Some(r), _) => r,
        (None, Some(f)) => f(),
        // `f` was taken but gave nothing back only if it panicked, and then
        // this line is never reached.
        (None, None) => unreachable!("the call was made and returned"),
    }
}

/// Keys whose string values are structure, not text: never scanned.
pub(crate) const EXEMPT_KEYS: &[&str] = &[
    "object",
    "created",
    "created_at",
    "model",
    "role",
    "type",
    "index",
    "finish_reason",
    "stop_reason",
    "status",
    "system_fingerprint",
    "service_tier",
    "output_index",
    "content_index",
    "summary_index",
    "sequence_number",
];

/// Keys whose string values are whole in each event (identifiers, names):
/// scanned on their own, never joined with the next event's.
pub(crate) const WHOLE_KEYS: &[&str] = &[
    "id",
    "item_id",
    "call_id",
    "tool_call_id",
    "response_id",
    "name",
    "obfuscation",
];

/// Keys whose value is dropped (set to `null`) when it is not empty: token
/// lists that cut a value across entries.
pub(crate) const DROPPED_KEYS: &[&str] = &["logprobs", "top_logprobs"];

/// The keys of an event's root object that say which item, content part
/// or block a streamed field belongs to.
const IDENTITY_KEYS: &[&str] = &[
    "index",
    "output_index",
    "content_index",
    "summary_index",
    "item_id",
];

/// Which API's shape an error event takes.
///
/// # Example
///
/// ```
/// use stream_replace_sse::{Api, GuardError};
///
/// let e = GuardError::EventTooLarge;
/// let openai = String::from_utf8(Api::OpenAi.error_event(&e))?;
/// assert!(openai.starts_with("data: {\"error\":"));
/// let anthropic = String::from_utf8(Api::Anthropic.error_event(&e))?;
/// assert!(anthropic.starts_with("event: error\n"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Api {
    /// OpenAI's: `data: {"error": {...}}`.
    OpenAi,
    /// Anthropic's: `event: error` with `{"type": "error", ...}`.
    Anthropic,
}

/// The bounds of one response, with by-value setters.
///
/// # Example
///
/// ```
/// use stream_replace_sse::Limits;
///
/// let limits = Limits::new().max_held(64 << 10).max_streams(32);
/// assert_eq!(limits.get_max_held(), 64 << 10);
/// assert_eq!(limits.get_max_event(), 1 << 20);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    max_held: usize,
    max_streams: usize,
    max_event: usize,
    max_body: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits::new()
    }
}

impl Limits {
    /// 1 MiB held per response, 256 field streams, 1 MiB per event, 16 MiB
    /// per whole (not streamed) body.
    ///
    /// # Example
    ///
    /// ```
    /// assert_eq!(stream_replace_sse::Limits::new().get_max_streams(), 256);
    /// ```
    pub fn new() -> Limits {
        Limits {
            max_held: 1 << 20,
            max_streams: 256,
            max_event: 1 << 20,
            max_body: 16 << 20,
        }
    }

    /// Bytes held back across every field stream of a response. The
    /// skeletons of the events that will carry the fields' rests are
    /// bounded by the larger of this and [`max_event`](Limits::max_event),
    /// in all.
    ///
    /// # Example
    ///
    /// ```
    /// let limits = stream_replace_sse::Limits::new().max_held(4096);
    /// assert_eq!(limits.get_max_held(), 4096);
    /// ```
    pub fn max_held(mut self, bytes: usize) -> Limits {
        self.max_held = bytes;
        self
    }

    /// Field streams open at once in a response.
    ///
    /// # Example
    ///
    /// ```
    /// let limits = stream_replace_sse::Limits::new().max_streams(8);
    /// assert_eq!(limits.get_max_streams(), 8);
    /// ```
    pub fn max_streams(mut self, streams: usize) -> Limits {
        self.max_streams = streams;
        self
    }

    /// Bytes of one SSE event, its pending part included.
    ///
    /// # Example
    ///
    /// ```
    /// let limits = stream_replace_sse::Limits::new().max_event(1 << 16);
    /// assert_eq!(limits.get_max_event(), 1 << 16);
    /// ```
    pub fn max_event(mut self, bytes: usize) -> Limits {
        self.max_event = bytes;
        self
    }

    /// Bytes of a body that is read whole (a JSON reply) by the layer.
    ///
    /// # Example
    ///
    /// ```
    /// let limits = stream_replace_sse::Limits::new().max_body(1 << 20);
    /// assert_eq!(limits.get_max_body(), 1 << 20);
    /// ```
    pub fn max_body(mut self, bytes: usize) -> Limits {
        self.max_body = bytes;
        self
    }

    /// See [`max_held`](Limits::max_held).
    ///
    /// # Example
    ///
    /// ```
    /// assert_eq!(stream_replace_sse::Limits::new().get_max_held(), 1 << 20);
    /// ```
    pub fn get_max_held(&self) -> usize {
        self.max_held
    }

    /// See [`max_streams`](Limits::max_streams).
    ///
    /// # Example
    ///
    /// ```
    /// assert_eq!(stream_replace_sse::Limits::new().get_max_streams(), 256);
    /// ```
    pub fn get_max_streams(&self) -> usize {
        self.max_streams
    }

    /// See [`max_event`](Limits::max_event).
    ///
    /// # Example
    ///
    /// ```
    /// assert_eq!(stream_replace_sse::Limits::new().get_max_event(), 1 << 20);
    /// ```
    pub fn get_max_event(&self) -> usize {
        self.max_event
    }

    /// See [`max_body`](Limits::max_body).
    ///
    /// # Example
    ///
    /// ```
    /// assert_eq!(stream_replace_sse::Limits::new().get_max_body(), 16 << 20);
    /// ```
    pub fn get_max_body(&self) -> usize {
        self.max_body
    }
}

/// Why a guarded response was cut: the stream ends with an error event
/// of the API's shape that says so ([`Api::error_event`]).
///
/// # Example
///
/// ```
/// use stream_replace_sse::GuardError;
///
/// let e = GuardError::Framing("a field named \"x\"".to_owned());
/// assert_eq!(e.code(), "invalid_framing");
/// assert!(e.to_string().contains("not SSE"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum GuardError {
    /// The stream is not SSE that can be checked (an unknown field, data
    /// after `[DONE]`): what was wrong.
    Framing(String),
    /// An event's data, or a whole body, is not JSON: the parser's word.
    InvalidJson(String),
    /// The response held more text than [`Limits::max_held`], or a rule's
    /// own cap on held text was passed.
    HeldLimit,
    /// The response opened more field streams than [`Limits::max_streams`].
    TooManyStreams,
    /// An event is larger than [`Limits::max_event`].
    EventTooLarge,
    /// The upstream body failed: its error.
    Upstream(String),
    /// The caller's [`Hooks`](crate::Hooks) stopped the stream (a
    /// deadline): a code for the error event and a message.
    Stopped {
        /// The error event's code, such as `shutting_down`.
        code: &'static str,
        /// What the client reads.
        message: String,
    },
    /// A block rule matched: its id and reason (configured text, never
    /// the match).
    Blocked {
        /// The rule's id.
        rule: String,
        /// The rule's configured reason.
        reason: String,
    },
}

impl GuardError {
    /// A short code for logs, metrics and the OpenAI error event's `code`.
    ///
    /// # Example
    ///
    /// ```
    /// assert_eq!(stream_replace_sse::GuardError::HeldLimit.code(), "held_limit");
    /// ```
    pub fn code(&self) -> &'static str {
        match self {
            GuardError::Framing(_) => "invalid_framing",
            GuardError::InvalidJson(_) => "invalid_json",
            GuardError::HeldLimit => "held_limit",
            GuardError::TooManyStreams => "too_many_fields",
            GuardError::EventTooLarge => "event_too_large",
            GuardError::Upstream(_) => "upstream_error",
            GuardError::Stopped { code, .. } => code,
            GuardError::Blocked { .. } => "blocked",
        }
    }
}

impl fmt::Display for GuardError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GuardError::Framing(what) => {
                write!(
                    f,
                    "the upstream stream is not SSE that can be checked: {what}"
                )
            }
            GuardError::InvalidJson(what) => {
                write!(f, "the upstream sent data that is not JSON: {what}")
            }
            GuardError::HeldLimit => f.write_str("the response held more text than the limit"),
            GuardError::TooManyStreams => {
                f.write_str("the response opened more fields than the limit")
            }
            GuardError::EventTooLarge => f.write_str("an upstream event is larger than the limit"),
            GuardError::Upstream(what) => write!(f, "the upstream response broke off: {what}"),
            GuardError::Stopped { message, .. } => f.write_str(message),
            GuardError::Blocked { rule, reason } => {
                write!(f, "the response was stopped by the rule {rule}: {reason}")
            }
        }
    }
}

impl std::error::Error for GuardError {}

impl Api {
    /// `e` as an SSE event of this API's shape: what a guarded stream
    /// ends with when it is cut.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_sse::{Api, GuardError};
    ///
    /// let event = Api::OpenAi.error_event(&GuardError::TooManyStreams);
    /// assert!(String::from_utf8(event)?.contains("\"code\":\"too_many_fields\""));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn error_event(self, e: &GuardError) -> Vec<u8> {
        error_event(self, e)
    }
}

fn error_event(flavor: Api, e: &GuardError) -> Vec<u8> {
    let message = e.to_string();
    let mut event = Event::new();
    match flavor {
        Api::OpenAi => event.set_data(
            &json!({"error": {"message": message, "type": "proxy_error", "code": e.code()}})
                .to_string(),
        ),
        Api::Anthropic => {
            event.set_event_type("error");
            event.set_data(
                &json!({"type": "error", "error": {"type": "api_error", "message": message}})
                    .to_string(),
            );
        }
    }
    event.to_bytes()
}

/// Replaces every lone UTF-16 surrogate escape (`\ud83d` without its pair)
/// of a JSON text by `\ufffd`, which a JSON parser accepts.
pub(crate) fn fix_lone_surrogates(text: &str) -> Cow<'_, str> {
    fn hex4(b: &[u8]) -> Option<u16> {
        let s = std::str::from_utf8(b.get(..4)?).ok()?;
        u16::from_str_radix(s, 16).ok()
    }
    let b = text.as_bytes();
    if memchr::memmem::find(b, b"\\u").is_none() {
        return Cow::Borrowed(text);
    }
    let mut out: Option<String> = None;
    let mut last = 0;
    let mut i = 0;
    while i + 1 < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        if b[i + 1] != b'u' {
            i += 2;
            continue;
        }
        let Some(unit) = hex4(&b[i + 2..]) else {
            i += 2;
            continue;
        };
        let lone = match unit {
            0xD800..=0xDBFF => {
                let pair = b.get(i + 6..i + 8) == Some(b"\\u")
                    && hex4(&b[i + 8..]).is_some_and(|u| (0xDC00..=0xDFFF).contains(&u));
                if pair {
                    i += 12;
                    continue;
                }
                true
            }
            0xDC00..=0xDFFF => true,
            _ => false,
        };
        if lone {
            let o = out.get_or_insert_with(|| String::with_capacity(text.len()));
            o.push_str(&text[last..i]);
            o.push_str("\\ufffd");
            last = i + 6;
        }
        i += 6;
    }
    match out {
        None => Cow::Borrowed(text),
        Some(mut o) => {
            o.push_str(&text[last..]);
            Cow::Owned(o)
        }
    }
}

impl GuardError {
    fn from_stream(e: &stream_replace::StreamError) -> GuardError {
        match e.block() {
            Some(b) => GuardError::Blocked {
                rule: b.id().to_owned(),
                reason: b.reason().to_owned(),
            },
            None => GuardError::HeldLimit,
        }
    }
}

/// Whether any of `rules` blocks.
pub(crate) fn has_blocks(rules: &Rules) -> bool {
    (0..rules.len()).any(|i| matches!(rules.action(i), stream_replace::Action::Block(_)))
}

/// Scans one whole value. `blocks` says whether a rule may block: then a
/// match of a block rule is an error instead of a cut in the text.
fn whole(rules: &Rules, blocks: bool, text: &str) -> Result<String, GuardError> {
    if !blocks {
        return Ok(rules.replace_all(text));
    }
    let eval = rules.evaluate(text);
    match eval.block() {
        Some(b) => Err(GuardError::Blocked {
            rule: b.id().to_owned(),
            reason: b.reason().to_owned(),
        }),
        None => Ok(eval.into_text()),
    }
}

pub(crate) fn parse_json(text: &str) -> Result<Value, GuardError> {
    serde_json::from_str(&fix_lone_surrogates(text))
        .map_err(|e| GuardError::InvalidJson(e.to_string()))
}

// One string of an event, found by the walk.
struct Frag<'v> {
    key: String,
    pointer: String,
    streamed: bool,
    text: &'v mut String,
}

fn escape_pointer(k: &str) -> Cow<'_, str> {
    if k.contains(['~', '/']) {
        Cow::Owned(k.replace('~', "~0").replace('/', "~1"))
    } else {
        Cow::Borrowed(k)
    }
}

fn is_empty_value(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

// Every string of `v` but the exempt ones, with its stream key and JSON
// pointer; dropped keys are nulled.
fn walk<'v>(
    v: &'v mut Value,
    key: &mut String,
    pointer: &mut String,
    streamed: bool,
    dropped: &mut bool,
    out: &mut Vec<Frag<'v>>,
) {
    match v {
        Value::String(s) => out.push(Frag {
            key: key.clone(),
            pointer: pointer.clone(),
            streamed,
            text: s,
        }),
        Value::Array(items) => {
            for (pos, item) in items.iter_mut().enumerate() {
                let (klen, plen) = (key.len(), pointer.len());
                match item.get("index").and_then(Value::as_u64) {
                    Some(i) => key.push_str(&format!("/#{i}")),
                    None => key.push_str(&format!("/[{pos}]")),
                }
                pointer.push_str(&format!("/{pos}"));
                walk(item, key, pointer, streamed, dropped, out);
                key.truncate(klen);
                pointer.truncate(plen);
            }
        }
        Value::Object(map) => {
            for (k, child) in map.iter_mut() {
                if DROPPED_KEYS.contains(&k.as_str()) {
                    if !is_empty_value(child) {
                        *child = Value::Null;
                        *dropped = true;
                    }
                    continue;
                }
                if child.is_string() && EXEMPT_KEYS.contains(&k.as_str()) {
                    continue;
                }
                let (klen, plen) = (key.len(), pointer.len());
                // An Anthropic block's start carries the first text of
                // the stream its deltas go on with.
                let step = if k == "content_block" { "delta" } else { k };
                key.push('/');
                key.push_str(step);
                pointer.push('/');
                pointer.push_str(&escape_pointer(k));
                let child_streamed = (streamed || step == "delta" || step == "choices")
                    && !(child.is_string() && WHOLE_KEYS.contains(&k.as_str()));
                walk(child, key, pointer, child_streamed, dropped, out);
                key.truncate(klen);
                pointer.truncate(plen);
            }
        }
        Value::Number(_) | Value::Bool(_) | Value::Null => {}
    }
}

// Scans every object key of `v` on its own (a key is whole in each event).
// A key of lower-case letters and `_` cannot hold a value or a placeholder
// and is skipped.
fn scan_keys(rules: &Rules, blocks: bool, v: &mut Value) -> Result<(), GuardError> {
    match v {
        Value::Array(items) => items
            .iter_mut()
            .try_for_each(|v| scan_keys(rules, blocks, v)),
        Value::Object(map) => {
            let plain = |k: &str| k.bytes().all(|b| b.is_ascii_lowercase() || b == b'_');
            if !map.keys().all(|k| plain(k)) {
                let old = std::mem::take(map);
                for (k, child) in old {
                    let k = if plain(&k) {
                        k
                    } else {
                        whole(rules, blocks, &k)?
                    };
                    map.insert(k, child);
                }
            }
            map.values_mut()
                .try_for_each(|v| scan_keys(rules, blocks, v))
        }
        _ => Ok(()),
    }
}

/// Scans a whole JSON body: every string but the exempt ones, on its own.
/// Returns whether a dropped key was nulled.
///
/// # Errors
///
/// [`GuardError::Blocked`] when a block rule matched.
pub(crate) fn scan_json(
    rules: &Rules,
    lend: &mut Lend<'_>,
    value: &mut Value,
) -> Result<bool, GuardError> {
    let blocks = has_blocks(rules);
    lent(lend, || scan_keys(rules, blocks, value))?;
    let mut frags = Vec::new();
    let mut dropped = false;
    walk(
        value,
        &mut String::new(),
        &mut String::new(),
        false,
        &mut dropped,
        &mut frags,
    );
    lent(lend, || {
        for f in frags {
            let out = whole(rules, blocks, f.text)?;
            if out != *f.text {
                *f.text = out;
            }
        }
        Ok(())
    })?;
    Ok(dropped)
}

// The event that carries a field's rest, made from the last event that
// carried the field: see `skeleton`.
#[derive(Debug)]
struct Template {
    event_type: Option<String>,
    root: Value,
    pointer: String,
    size: usize,
}

// The part of `root` on the way to the string at `pointer` (blanked), with
// the scalars beside it at each level (ids, indexes, types): the JSON of
// an event that carries only that field. Text of other fields, `usage`
// and long strings are left out.
fn skeleton(root: &Value, pointer: &str) -> Value {
    fn build(v: &Value, steps: &[String]) -> Value {
        let Some((step, rest)) = steps.split_first() else {
            return Value::String(String::new());
        };
        match v {
            Value::Object(map) => {
                let mut out = serde_json::Map::new();
                for (k, child) in map {
                    if k == step {
                        out.insert(k.clone(), build(child, rest));
                    } else if k == "usage" {
                        continue;
                    } else {
                        match child {
                            Value::String(s)
                                if EXEMPT_KEYS.contains(&k.as_str())
                                    || (WHOLE_KEYS.contains(&k.as_str()) && s.len() <= 256) =>
                            {
                                out.insert(k.clone(), child.clone());
                            }
                            Value::Number(_) | Value::Bool(_) | Value::Null => {
                                out.insert(k.clone(), child.clone());
                            }
                            _ => {}
                        }
                    }
                }
                Value::Object(out)
            }
            Value::Array(items) => {
                let item = step
                    .parse::<usize>()
                    .ok()
                    .and_then(|i| items.get(i))
                    .map_or(Value::Null, |item| build(item, rest));
                Value::Array(vec![item])
            }
            _ => Value::String(String::new()),
        }
    }
    let steps: Vec<String> = pointer
        .split('/')
        .skip(1)
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect();
    build(root, &steps)
}

// The pointer of the same string in a skeleton: every array there has one
// element.
fn skeleton_pointer(pointer: &str, root: &Value) -> String {
    let mut out = String::new();
    let mut v = root;
    for raw in pointer.split('/').skip(1) {
        let step = raw.replace("~1", "/").replace("~0", "~");
        match v {
            Value::Array(items) => {
                out.push_str("/0");
                v = items.first().unwrap_or(&Value::Null);
            }
            Value::Object(map) => {
                out.push('/');
                out.push_str(raw);
                v = map.get(&step).unwrap_or(&Value::Null);
            }
            _ => break,
        }
    }
    out
}

#[derive(Debug)]
struct FieldStream {
    replacer: Replacer,
    seq: u64,
    held: usize,
    template: Option<Template>,
}

/// An SSE response, rewritten event by event.
#[derive(Debug)]
pub(crate) struct SseScan {
    rules: Rules,
    blocks: bool,
    limits: Limits,
    parser: Parser,
    streams: HashMap<String, FieldStream>,
    seq: u64,
    held: usize,
    template_bytes: usize,
    failed: Option<GuardError>,
    done: bool,
    parsed: Vec<Event>,
}

fn is_token(s: &str) -> bool {
    s.len() <= 256
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._:-/".contains(&b))
}

impl SseScan {
    /// Bytes held back across the response's fields.
    pub(crate) fn held(&self) -> usize {
        self.held
    }

    pub(crate) fn new(rules: &Rules, limits: Limits) -> SseScan {
        SseScan {
            rules: rules.clone(),
            blocks: has_blocks(rules),
            limits,
            parser: Parser::new(),
            streams: HashMap::new(),
            seq: 0,
            held: 0,
            template_bytes: 0,
            failed: None,
            done: false,
            parsed: Vec::new(),
        }
    }

    /// Feeds upstream bytes; appends the safe bytes to `out`. On error the
    /// stream is closed: nothing more is appended, ever.
    pub(crate) fn feed(
        &mut self,
        chunk: &[u8],
        out: &mut Vec<u8>,
        lend: &mut Lend<'_>,
    ) -> Result<(), GuardError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let mut parsed = std::mem::take(&mut self.parsed);
        self.parser.feed(chunk, &mut parsed);
        let mut result = Ok(());
        for event in parsed.drain(..) {
            result = self.event(event, out, lend);
            if result.is_err() {
                break;
            }
        }
        parsed.clear();
        self.parsed = parsed;
        if result.is_ok() && self.parser.pending() > self.limits.max_event {
            result = Err(GuardError::EventTooLarge);
        }
        self.settle(result)
    }

    /// The upstream ended: the last event, then every field's rest.
    pub(crate) fn finish(
        &mut self,
        out: &mut Vec<u8>,
        lend: &mut Lend<'_>,
    ) -> Result<(), GuardError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let mut result = Ok(());
        if let Some(event) = self.parser.finish() {
            result = self.event(event, out, lend);
        }
        if result.is_ok() {
            result = self.flush_all(out, lend);
        }
        self.settle(result)
    }

    /// Closes the stream with `e` (an upstream failure).
    pub(crate) fn fail(&mut self, e: GuardError) -> GuardError {
        let _ = self.settle(Err(e.clone()));
        e
    }

    fn settle(&mut self, result: Result<(), GuardError>) -> Result<(), GuardError> {
        if let Err(e) = &result {
            self.streams.clear();
            self.held = 0;
            self.template_bytes = 0;
            self.parser = Parser::new();
            self.failed = Some(e.clone());
        }
        result
    }

    fn event(
        &mut self,
        event: Event,
        out: &mut Vec<u8>,
        lend: &mut Lend<'_>,
    ) -> Result<(), GuardError> {
        if event.byte_len() > self.limits.max_event {
            return Err(GuardError::EventTooLarge);
        }
        // Only the fields SSE defines, with values that carry no text but
        // the data; comments are dropped.
        let mut clean = Event::new();
        let mut data: Option<String> = None;
        for (name, value) in event.fields() {
            match name {
                "data" => match &mut data {
                    // Lines of one data field are joined with `\n`.
                    Some(d) => {
                        d.push('\n');
                        d.push_str(value);
                    }
                    None => data = Some(value.to_owned()),
                },
                "event" | "id" if is_token(value) => clean.push_field(name, value),
                "retry" if value.bytes().all(|b| b.is_ascii_digit()) => {
                    clean.push_field(name, value)
                }
                _ => {
                    return Err(GuardError::Framing(format!(
                        "a field named {:?} ({} bytes)",
                        name.chars().take(16).collect::<String>(),
                        name.len()
                    )));
                }
            }
        }
        let Some(data) = data else {
            if clean.fields().next().is_some() {
                clean.write_to(out);
            }
            return Ok(());
        };
        if self.done {
            return Err(GuardError::Framing(
                "data after the end of the stream".to_owned(),
            ));
        }
        let trimmed = data.trim();
        if trimmed == "[DONE]" {
            self.flush_all(out, lend)?;
            self.done = true;
            clean.set_data(&data);
            clean.write_to(out);
            return Ok(());
        }
        let mut root = parse_json(&data)?;
        let event_type = clean.event_type().map(str::to_owned);
        self.json_event(&mut root, event_type, out, lend)?;
        clean.set_data(&root.to_string());
        clean.write_to(out);
        Ok(())
    }

    fn json_event(
        &mut self,
        root: &mut Value,
        event_type: Option<String>,
        out: &mut Vec<u8>,
        lend: &mut Lend<'_>,
    ) -> Result<(), GuardError> {
        let root_type = root
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        // The prefix of every key: the event family (`response.output_text`
        // for `response.output_text.delta`) and the root's identity.
        let mut prefix = String::new();
        if let Some((family, _)) = root_type.rsplit_once('.') {
            prefix.push_str(family);
        }
        prefix.push('{');
        for k in IDENTITY_KEYS {
            match root.get(*k) {
                Some(Value::Number(n)) => prefix.push_str(&format!("{k}={n},")),
                Some(Value::String(s)) => prefix.push_str(&format!("{k}={s:?},")),
                _ => {}
            }
        }
        prefix.push('}');

        // What this event ends, after its own text is fed.
        let mut ends: Vec<String> = Vec::new();
        let mut ends_all = false;
        match root_type.as_str() {
            "content_block_stop" => ends.push(prefix.clone()),
            "message_delta" | "message_stop" | "error" => ends_all = true,
            t if t.starts_with("response.")
                && matches!(
                    t.rsplit('.').next(),
                    Some("completed" | "failed" | "incomplete")
                )
                && t.matches('.').count() == 1 =>
            {
                ends_all = true
            }
            t if t.ends_with(".done") => ends.push(prefix.clone()),
            _ => {}
        }
        if let Some(choices) = root.get("choices").and_then(Value::as_array) {
            for (pos, c) in choices.iter().enumerate() {
                if c.get("finish_reason").is_some_and(|f| !f.is_null()) {
                    let step = match c.get("index").and_then(Value::as_u64) {
                        Some(i) => format!("/#{i}"),
                        None => format!("/[{pos}]"),
                    };
                    ends.push(format!("{prefix}/choices{step}/"));
                }
            }
        }

        let rules = &self.rules;
        let blocks = self.blocks;
        lent(lend, || scan_keys(rules, blocks, root))?;
        let mut dropped = false;
        let mut frags = Vec::new();
        let mut key = prefix.clone();
        walk(
            root,
            &mut key,
            &mut String::new(),
            false,
            &mut dropped,
            &mut frags,
        );
        let new = frags
            .iter()
            .filter(|f| f.streamed && !self.streams.contains_key(&f.key))
            .count();
        if self.streams.len() + new > self.limits.max_streams {
            return Err(GuardError::TooManyStreams);
        }
        let rules = &self.rules;
        let streams = &mut self.streams;
        let held = &mut self.held;
        let seq = &mut self.seq;
        let max_held = self.limits.max_held;
        let result: Result<(), GuardError> = lent(lend, || {
            for f in frags.iter_mut() {
                if !f.streamed {
                    let safe = whole(rules, blocks, f.text)?;
                    if safe != *f.text {
                        *f.text = safe;
                    }
                    continue;
                }
                let stream = streams.entry(f.key.clone()).or_insert_with(|| {
                    *seq += 1;
                    FieldStream {
                        replacer: rules.replacer(),
                        seq: *seq,
                        held: 0,
                        template: None,
                    }
                });
                let safe = stream
                    .replacer
                    .feed(f.text)
                    .map_err(|e| GuardError::from_stream(&e))?;
                let now = stream.replacer.held();
                *held = *held + now - stream.held;
                stream.held = now;
                *f.text = safe;
                if *held > max_held {
                    return Err(GuardError::HeldLimit);
                }
            }
            Ok(())
        });
        result?;

        // The streamed fields of this event: the template of their rest.
        let streamed: Vec<(String, String)> = frags
            .iter()
            .filter(|f| f.streamed)
            .map(|f| (f.key.clone(), f.pointer.clone()))
            .collect();
        drop(frags);
        for (k, p) in &streamed {
            let skeleton = skeleton(root, p);
            let size = skeleton.to_string().len();
            if let Some(s) = self.streams.get_mut(k) {
                let old = s.template.as_ref().map_or(0, |t| t.size);
                self.template_bytes = self.template_bytes + size - old;
                s.template = Some(Template {
                    event_type: event_type.clone(),
                    root: skeleton,
                    pointer: p.clone(),
                    size,
                });
            }
        }
        // The copies are bounded by one event's worth in all.
        if self.template_bytes > self.limits.max_event.max(self.limits.max_held) {
            return Err(GuardError::HeldLimit);
        }

        if ends_all || !ends.is_empty() {
            let carried: HashMap<String, String> = streamed.into_iter().collect();
            let rests = self.flush_where(
                |k| ends_all || ends.iter().any(|p| k.starts_with(p.as_str())),
                lend,
            )?;
            for (key, rest, template) in rests {
                match carried.get(&key) {
                    // The ending event carries the field: its rest goes there.
                    Some(p) => {
                        if let Some(Value::String(s)) = root.pointer_mut(p) {
                            s.push_str(&rest);
                        }
                    }
                    // Otherwise in a copy of the last event that did, before
                    // this one.
                    None => out.extend_from_slice(&rest_event(rest, template)),
                }
            }
        }
        Ok(())
    }

    /// Flushes every stream, writing each rest as its own event.
    fn flush_all(&mut self, out: &mut Vec<u8>, lend: &mut Lend<'_>) -> Result<(), GuardError> {
        for (_, rest, template) in self.flush_where(|_| true, lend)? {
            out.extend_from_slice(&rest_event(rest, template));
        }
        Ok(())
    }

    // Flushes (and closes) the matching streams in the order they opened:
    // each non-empty rest with its key and template.
    #[allow(clippy::type_complexity)]
    fn flush_where(
        &mut self,
        which: impl Fn(&str) -> bool,
        lend: &mut Lend<'_>,
    ) -> Result<Vec<(String, String, Option<Template>)>, GuardError> {
        let mut keys: Vec<(u64, String)> = self
            .streams
            .iter()
            .filter(|(k, _)| which(k))
            .map(|(k, s)| (s.seq, k.clone()))
            .collect();
        keys.sort_unstable();
        let mut rests = Vec::new();
        for (_, key) in keys {
            let Some(mut stream) = self.streams.remove(&key) else {
                continue;
            };
            self.held -= stream.held;
            if let Some(t) = &stream.template {
                self.template_bytes -= t.size;
            }
            let rest =
                lent(lend, || stream.replacer.flush()).map_err(|e| GuardError::from_stream(&e))?;
            if !rest.is_empty() {
                rests.push((key, rest, stream.template));
            }
        }
        Ok(rests)
    }
}

// The event that carries a field's rest: a copy of its template with the
// rest at the field's place.
fn rest_event(rest: String, template: Option<Template>) -> Vec<u8> {
    let Some(template) = template else {
        return Vec::new();
    };
    let mut root = template.root;
    let pointer = skeleton_pointer(&template.pointer, &root);
    if let Some(Value::String(s)) = root.pointer_mut(&pointer) {
        *s = rest;
    }
    let mut event = Event::new();
    if let Some(t) = &template.event_type {
        event.set_event_type(t);
    }
    event.set_data(&root.to_string());
    event.to_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(input: &str) -> (String, Result<(), GuardError>) {
        let rules = Rules::builder()
            .regex(r"[\w.+-]+@[\w-]+\.\w+", "[EMAIL_REDACTED]")
            .build()
            .unwrap();
        let mut s = SseScan::new(&rules, Limits::new().max_streams(16));
        let mut out = Vec::new();
        let mut r = Ok(());
        let lend = &mut |call: &mut dyn FnMut()| call();
        for b in input.as_bytes().chunks(3) {
            r = r.and_then(|()| s.feed(b, &mut out, lend));
        }
        let r = r.and_then(|()| s.finish(&mut out, lend));
        (String::from_utf8(out).unwrap(), r)
    }

    #[test]
    fn data_lines_are_joined() {
        let (out, r) = scan("data: {\"a\":\ndata: \"x@example.com\"}\n\n");
        assert_eq!(r, Ok(()));
        assert_eq!(out, "data: {\"a\":\"[EMAIL_REDACTED]\"}\n\n");
    }

    #[test]
    fn a_rest_goes_out_in_a_copy_of_the_last_event_that_carried_it() {
        let (out, r) = scan(concat!(
            "data: {\"id\":\"c\",\"choices\":[{\"index\":1,\"delta\":{\"content\":\"hi bob\"}},{\"index\":2,\"delta\":{\"content\":\"x\"}}],\"usage\":{\"n\":1}}\n\n",
            "data: {\"id\":\"c\",\"choices\":[{\"index\":1,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
        ));
        assert_eq!(r, Ok(()));
        assert_eq!(
            out,
            concat!(
                "data: {\"id\":\"c\",\"choices\":[{\"index\":1,\"delta\":{\"content\":\"hi \"}},{\"index\":2,\"delta\":{\"content\":\"\"}}],\"usage\":{\"n\":1}}\n\n",
                "data: {\"id\":\"c\",\"choices\":[{\"index\":1,\"delta\":{\"content\":\"bob\"}}]}\n\n",
                "data: {\"id\":\"c\",\"choices\":[{\"index\":1,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
                "data: {\"id\":\"c\",\"choices\":[{\"index\":2,\"delta\":{\"content\":\"x\"}}]}\n\n",
            )
        );
    }

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        assert_eq!(fix_lone_surrogates(r#""a\ud83d""#), r#""a\ufffd""#);
        assert_eq!(
            fix_lone_surrogates(r#""\ud83d\ude00""#),
            r#""\ud83d\ude00""#
        );
        assert_eq!(fix_lone_surrogates(r#""\\ud83d""#), r#""\\ud83d""#);
        assert_eq!(
            fix_lone_surrogates(r#""\ude00x\u0041""#),
            r#""\ufffdx\u0041""#
        );
    }
}
