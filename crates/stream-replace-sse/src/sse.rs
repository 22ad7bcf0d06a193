//! Server-Sent Events: an incremental parser and the event it yields.

use std::fmt;

/// One Server-Sent Event: its lines, in the order they arrived.
///
/// An event keeps every line it was parsed from (comments, `event:`,
/// `id:`, `retry:`, `data:` and unknown fields), so writing it back gives the
/// same event. [`Event::set_data`] replaces only the `data:` lines.
///
/// # Example
///
/// ```
/// use stream_replace_sse::Event;
///
/// let mut event = Event::from_data("{\"a\":1}");
/// event.set_event_type("update");
/// assert_eq!(event.to_bytes(), b"data: {\"a\":1}\nevent: update\n\n");
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Event {
    lines: Vec<Line>,
}

#[derive(Clone, PartialEq, Eq)]
enum Line {
    // The text after the `:`, verbatim.
    Comment(String),
    Field { name: String, value: String },
}

impl Event {
    /// An event with no lines.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_sse::Event;
    ///
    /// let event = Event::new();
    /// assert_eq!(event.data(), None);
    /// assert!(event.is_empty());
    /// ```
    pub fn new() -> Event {
        Event::default()
    }

    /// An event whose data is `data` (one `data:` line per line of it).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_sse::Event;
    ///
    /// let event = Event::from_data("one\ntwo");
    /// assert_eq!(event.to_bytes(), b"data: one\ndata: two\n\n");
    /// assert_eq!(event.data().as_deref(), Some("one\ntwo"));
    /// ```
    pub fn from_data(data: &str) -> Event {
        let mut event = Event::new();
        event.set_data(data);
        event
    }

    /// Whether the event has no lines at all.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_sse::Event;
    ///
    /// assert!(Event::new().is_empty());
    /// assert!(!Event::from_data("").is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// The event's data: its `data:` values joined by `\n`, or `None` when
    /// it has no `data:` line.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_sse::Event;
    ///
    /// let mut parser = stream_replace_sse::Parser::new();
    /// let mut events = Vec::new();
    /// parser.feed(b": keep-alive\n\ndata: a\ndata:b\n\n", &mut events);
    /// assert_eq!(events[0].data(), None);
    /// assert_eq!(events[1].data().as_deref(), Some("a\nb"));
    /// ```
    pub fn data(&self) -> Option<String> {
        let mut data: Option<String> = None;
        for value in self.values("data") {
            match &mut data {
                None => data = Some(value.to_owned()),
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
            }
        }
        data
    }

    /// Replaces the event's `data:` lines with one line per line of `data`,
    /// placed where the first `data:` line was (at the end if there was
    /// none). Other lines keep their place.
    ///
    /// Lines of `data` may end in `\n`, `\r\n` or `\r`, as on the wire.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_sse::Parser;
    ///
    /// let mut events = Vec::new();
    /// Parser::new().feed(b"id: 7\ndata: old\nevent: x\n\n", &mut events);
    /// events[0].set_data("new");
    /// assert_eq!(events[0].to_bytes(), b"id: 7\ndata: new\nevent: x\n\n");
    /// ```
    pub fn set_data(&mut self, data: &str) {
        let at = self
            .lines
            .iter()
            .position(|l| matches!(l, Line::Field { name, .. } if name == "data"))
            .unwrap_or(self.lines.len());
        self.lines
            .retain(|l| !matches!(l, Line::Field { name, .. } if name == "data"));
        let new = split_lines(data).map(|value| Line::Field {
            name: "data".to_owned(),
            value: value.to_owned(),
        });
        self.lines.splice(at..at, new);
    }

    /// The event type: the value of the last `event:` line, if any.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_sse::Parser;
    ///
    /// let mut events = Vec::new();
    /// Parser::new().feed(b"event: ping\ndata: {}\n\n", &mut events);
    /// assert_eq!(events[0].event_type(), Some("ping"));
    /// ```
    pub fn event_type(&self) -> Option<&str> {
        self.values("event").last()
    }

    /// Sets the event type, replacing any `event:` lines by one, placed
    /// first if there was none.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_sse::Event;
    ///
    /// let mut event = Event::from_data("{}");
    /// event.set_event_type("error");
    /// event.set_event_type("done");
    /// assert_eq!(event.event_type(), Some("done"));
    /// assert_eq!(event.to_bytes(), b"data: {}\nevent: done\n\n");
    /// ```
    pub fn set_event_type(&mut self, event_type: &str) {
        self.set_single("event", event_type);
    }

    /// The last event ID: the value of the last `id:` line, if any.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_sse::Parser;
    ///
    /// let mut events = Vec::new();
    /// Parser::new().feed(b"id: 41\nid: 42\ndata: x\n\n", &mut events);
    /// assert_eq!(events[0].id(), Some("42"));
    /// ```
    pub fn id(&self) -> Option<&str> {
        self.values("id").last()
    }

    /// The values of every field named `name`, in order.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_sse::Parser;
    ///
    /// let mut events = Vec::new();
    /// Parser::new().feed(b"retry: 3000\ndata: x\n\n", &mut events);
    /// assert_eq!(events[0].values("retry").collect::<Vec<_>>(), ["3000"]);
    /// ```
    pub fn values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.lines.iter().filter_map(move |l| match l {
            Line::Field { name: n, value } if n == name => Some(value.as_str()),
            _ => None,
        })
    }

    /// Appends a field line `name: value`.
    ///
    /// # Panics
    ///
    /// When `name` is empty or contains `:`, `\r` or `\n`, or `value`
    /// contains `\r` or `\n`: such a line would not read back as one field.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_sse::Event;
    ///
    /// let mut event = Event::new();
    /// event.push_field("retry", "1000");
    /// assert_eq!(event.to_bytes(), b"retry: 1000\n\n");
    /// ```
    pub fn push_field(&mut self, name: &str, value: &str) {
        assert!(
            !name.is_empty() && !name.contains([':', '\r', '\n']),
            "invalid SSE field name {name:?}"
        );
        assert!(
            !value.contains(['\r', '\n']),
            "an SSE field value cannot span lines"
        );
        self.lines.push(Line::Field {
            name: name.to_owned(),
            value: value.to_owned(),
        });
    }

    /// Appends a comment line (`:` then `text`).
    ///
    /// # Panics
    ///
    /// When `text` contains `\r` or `\n`.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_sse::Event;
    ///
    /// let mut event = Event::new();
    /// event.push_comment(" ping");
    /// assert_eq!(event.to_bytes(), b": ping\n\n");
    /// ```
    pub fn push_comment(&mut self, text: &str) {
        assert!(
            !text.contains(['\r', '\n']),
            "an SSE comment cannot span lines"
        );
        self.lines.push(Line::Comment(text.to_owned()));
    }

    /// Appends the event's wire form to `out`: each line ended by `\n`,
    /// then an empty line.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_sse::Event;
    ///
    /// let mut out = b"data: earlier\n\n".to_vec();
    /// Event::from_data("[DONE]").write_to(&mut out);
    /// assert_eq!(out, b"data: earlier\n\ndata: [DONE]\n\n");
    /// ```
    pub fn write_to(&self, out: &mut Vec<u8>) {
        for line in &self.lines {
            match line {
                Line::Comment(text) => {
                    out.push(b':');
                    out.extend_from_slice(text.as_bytes());
                }
                Line::Field { name, value } => {
                    out.extend_from_slice(name.as_bytes());
                    out.push(b':');
                    // One space is what a reader strips; a value that
                    // itself starts with a space keeps it after this one.
                    if !value.is_empty() {
                        out.push(b' ');
                        out.extend_from_slice(value.as_bytes());
                    }
                }
            }
            out.push(b'\n');
        }
        out.push(b'\n');
    }

    /// The event's wire form (see [`Event::write_to`]).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_sse::Event;
    ///
    /// assert_eq!(Event::from_data("hi").to_bytes(), b"data: hi\n\n");
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_to(&mut out);
        out
    }

    /// Every field of the event as (name, value), in order; comments are
    /// not fields and are left out.
    ///
    /// A reader that refuses what it does not know checks the names here:
    /// ` data` (with a leading space) is a field of its own, not `data`.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_sse::Parser;
    ///
    /// let mut events = Vec::new();
    /// Parser::new().feed(b": ping\nevent: x\n data: {}\n\n", &mut events);
    /// let fields: Vec<(&str, &str)> = events[0].fields().collect();
    /// assert_eq!(fields, [("event", "x"), (" data", "{}")]);
    /// ```
    pub fn fields(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        self.lines.iter().filter_map(|l| match l {
            Line::Field { name, value } => Some((name.as_str(), value.as_str())),
            Line::Comment(_) => None,
        })
    }

    /// The size of the event's lines, one line end each (without the
    /// blank line that ends it): what [`Options::max_event`](crate::Options::max_event) bounds.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_sse::Event;
    ///
    /// assert_eq!(Event::from_data("{}").byte_len(), "data: {}\n".len());
    /// ```
    pub fn byte_len(&self) -> usize {
        self.lines
            .iter()
            .map(|l| match l {
                Line::Comment(text) => 1 + text.len() + 1,
                Line::Field { name, value } => name.len() + 2 + value.len() + 1,
            })
            .sum()
    }

    fn set_single(&mut self, name: &str, value: &str) {
        let at = self
            .lines
            .iter()
            .position(|l| matches!(l, Line::Field { name: n, .. } if n == name));
        self.lines
            .retain(|l| !matches!(l, Line::Field { name: n, .. } if n == name));
        let line = Line::Field {
            name: name.to_owned(),
            value: value.to_owned(),
        };
        match at {
            Some(at) => self.lines.insert(at, line),
            None => self.lines.push(line),
        }
    }

    fn push_line(&mut self, line: &str) {
        if let Some(text) = line.strip_prefix(':') {
            self.lines.push(Line::Comment(text.to_owned()));
            return;
        }
        let (name, value) = match line.split_once(':') {
            Some((name, value)) => (name, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        self.lines.push(Line::Field {
            name: name.to_owned(),
            value: value.to_owned(),
        });
    }
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Event")
            .field(&String::from_utf8_lossy(&self.to_bytes()))
            .finish()
    }
}

// Lines as SSE splits them: at `\r\n`, `\n` or `\r`. An empty text is one
// empty line, so `Event::from_data("")` still carries a `data:` line.
fn split_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let text = rest?;
        match memchr::memchr2(b'\r', b'\n', text.as_bytes()) {
            None => {
                rest = None;
                Some(text)
            }
            Some(i) => {
                let skip = if text[i..].starts_with("\r\n") { 2 } else { 1 };
                rest = Some(&text[i + skip..]);
                Some(&text[..i])
            }
        }
    })
}

/// An incremental Server-Sent Events parser: bytes in, whole events out.
///
/// Events may be cut anywhere across [`feed`](Parser::feed) calls,
/// including inside a line ending or a UTF-8 character. Lines end in
/// `\r\n`, `\n` or `\r`; an empty line ends an event; a leading byte-order
/// mark is skipped; lines are decoded as UTF-8, invalid bytes becoming
/// U+FFFD, as the SSE standard says. Unlike a browser, the parser keeps
/// events without data (a comment used as a keep-alive, a lone `retry:`),
/// so a proxy can forward them; consecutive empty lines yield nothing.
///
/// # Example
///
/// ```
/// use stream_replace_sse::Parser;
///
/// let mut parser = Parser::new();
/// let mut events = Vec::new();
/// parser.feed(b"data: hel", &mut events);
/// assert!(events.is_empty());
/// parser.feed(b"lo\r\n\r", &mut events);
/// assert_eq!(events[0].data().as_deref(), Some("hello"));
/// parser.feed(b"\ndata: tail", &mut events);
/// assert_eq!(events.len(), 1);
/// let last = parser.finish().expect("an unterminated event");
/// assert_eq!(last.data().as_deref(), Some("tail"));
/// ```
#[derive(Clone, Debug, Default)]
pub struct Parser {
    line: Vec<u8>,
    event: Event,
    // The previous byte was a `\r`: a `\n` right after it ends nothing.
    after_cr: bool,
    // Whether a line has been completed: only the first may carry a BOM.
    seen_line: bool,
    // Bytes of the lines of `event`.
    event_bytes: usize,
}

impl Parser {
    /// A parser at the start of a stream.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_sse::Parser;
    ///
    /// let mut events = Vec::new();
    /// Parser::new().feed(b"data: x\n\n", &mut events);
    /// assert_eq!(events.len(), 1);
    /// ```
    pub fn new() -> Parser {
        Parser::default()
    }

    /// Parses `bytes` and appends every event they complete to `events`.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_sse::Parser;
    ///
    /// let mut parser = Parser::new();
    /// let mut events = Vec::new();
    /// for byte in b"event: a\ndata: 1\n\ndata: 2\n\n" {
    ///     parser.feed(&[*byte], &mut events);
    /// }
    /// assert_eq!(events.len(), 2);
    /// assert_eq!(events[0].event_type(), Some("a"));
    /// ```
    pub fn feed(&mut self, mut bytes: &[u8], events: &mut Vec<Event>) {
        if self.after_cr && !bytes.is_empty() {
            self.after_cr = false;
            if bytes[0] == b'\n' {
                bytes = &bytes[1..];
            }
        }
        while let Some(i) = memchr::memchr2(b'\r', b'\n', bytes) {
            self.line.extend_from_slice(&bytes[..i]);
            self.end_line(events);
            if bytes[i] == b'\r' {
                match bytes.get(i + 1) {
                    Some(b'\n') => bytes = &bytes[i + 2..],
                    Some(_) => bytes = &bytes[i + 1..],
                    None => {
                        self.after_cr = true;
                        bytes = &[];
                    }
                }
            } else {
                bytes = &bytes[i + 1..];
            }
        }
        self.line.extend_from_slice(bytes);
    }

    /// Ends the stream: returns the event still being read, if it has any
    /// line, and readies the parser for a new stream.
    ///
    /// The SSE standard drops an event that is not followed by an empty
    /// line; a proxy usually wants to see it, so it is returned, and the
    /// caller decides.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_sse::Parser;
    ///
    /// let mut parser = Parser::new();
    /// let mut events = Vec::new();
    /// parser.feed(b"data: [DONE]", &mut events);
    /// assert!(events.is_empty());
    /// assert_eq!(parser.finish().and_then(|e| e.data()).as_deref(), Some("[DONE]"));
    /// assert!(parser.finish().is_none());
    /// ```
    pub fn finish(&mut self) -> Option<Event> {
        if !self.line.is_empty() {
            let mut sink = Vec::new();
            self.end_line(&mut sink);
        }
        let event = std::mem::take(&mut self.event);
        *self = Parser::new();
        (!event.is_empty()).then_some(event)
    }

    /// How many bytes of the event being read are buffered: what a caller
    /// caps to bound the memory one event can take.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_sse::Parser;
    ///
    /// let mut parser = Parser::new();
    /// let mut events = Vec::new();
    /// parser.feed(b"data: 12\ndata: 3", &mut events);
    /// assert_eq!(parser.pending(), 9 + 7);
    /// parser.feed(b"\n\n", &mut events);
    /// assert_eq!(parser.pending(), 0);
    /// ```
    pub fn pending(&self) -> usize {
        self.event_bytes + self.line.len()
    }

    fn end_line(&mut self, events: &mut Vec<Event>) {
        let mut line: &[u8] = &self.line;
        if !self.seen_line {
            self.seen_line = true;
            line = line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line);
        }
        if line.is_empty() {
            if !self.event.is_empty() {
                events.push(std::mem::take(&mut self.event));
            }
            self.event_bytes = 0;
        } else {
            self.event_bytes += self.line.len() + 1;
            self.event.push_line(&String::from_utf8_lossy(line));
        }
        self.line.clear();
    }
}
