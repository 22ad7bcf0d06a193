//! What a rule puts in place of its match: literal text, a template with
//! capture references, or a closure.

use std::any::Any;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use regex_automata::PatternID;
use regex_automata::util::captures::{Captures as RawCaptures, GroupInfo};

use crate::error::{Error, ErrorKind};

type Callback = dyn Fn(&Captures<'_>) -> String + Send + Sync + 'static;
type StateCallback = dyn Fn(&Captures<'_>, &mut State) -> String + Send + Sync + 'static;

/// The replacement of a rule.
///
/// Build one with [`Replacement::literal`], [`Replacement::template`],
/// [`Replacement::with`] or [`Replacement::with_state`], and pass it to
/// [`RulesBuilder::rule`](crate::RulesBuilder::rule). The shorthand builder
/// methods pick one for you: [`literal`](crate::RulesBuilder::literal) takes
/// literal text, [`regex`](crate::RulesBuilder::regex) a template.
///
/// # Example
///
/// ```
/// use stream_replace::{Pattern, Replacement, Rules};
///
/// let rules = Rules::builder()
///     .rule(Pattern::regex(r"(\w+)@(\w+)\.com"), Replacement::template("$2:$1"))
///     .rule(Pattern::regex(r"\$\d+"), Replacement::literal("$$$"))
///     .rule(Pattern::literal("hi"), Replacement::with(|c| c.as_str().to_uppercase()))
///     .build()?;
/// assert_eq!(rules.replace_all("hi bob@home.com, $5"), "HI home:bob, $$$");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Replacement {
    kind: Kind,
}

#[derive(Clone)]
enum Kind {
    Literal(Arc<str>),
    Template(Arc<str>),
    Closure(Arc<Callback>),
    Stateful(Arc<StateCallback>),
}

impl Replacement {
    /// Literal text: inserted as it is, with no `$` expansion.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Pattern, Replacement, Rules};
    ///
    /// let rules = Rules::builder()
    ///     .rule(Pattern::regex(r"\d+"), Replacement::literal("$0"))
    ///     .build()?;
    /// assert_eq!(rules.replace_all("n=42"), "n=$0");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn literal(text: impl Into<String>) -> Replacement {
        Replacement {
            kind: Kind::Literal(text.into().into()),
        }
    }

    /// A template: `$1`, `$name`, `${name}` and `${1}` insert a capture
    /// group (the empty string when the group did not take part in the
    /// match), `$$` inserts a `$`; a `$` followed by anything else is kept
    /// as it is. The syntax is that of `regex`'s `Captures::expand`, with one
    /// difference: a group name the pattern does not define is an error when
    /// the rules are built, not a silent empty string.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Pattern, Replacement, Rules};
    ///
    /// let rules = Rules::builder()
    ///     .rule(Pattern::regex(r"(?<k>\w+)=(\w+)"), Replacement::template("${2}_$k costs $$1"))
    ///     .build()?;
    /// assert_eq!(rules.replace_all("a=b"), "b_a costs $1");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn template(template: impl Into<String>) -> Replacement {
        Replacement {
            kind: Kind::Template(template.into().into()),
        }
    }

    /// A closure that receives the decided match, with its capture groups,
    /// and returns the text to put in its place.
    ///
    /// In a stream the closure runs once per match, when the match is
    /// decided, in stream order.
    ///
    /// # Example
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use stream_replace::{Pattern, Replacement, Rules};
    ///
    /// let n = AtomicUsize::new(0);
    /// let number = Replacement::with(move |_| format!("#{}", n.fetch_add(1, Ordering::Relaxed)));
    /// let rules = Rules::builder().rule(Pattern::literal("?"), number).build()?;
    /// assert_eq!(rules.replace_all("a? b? c?"), "a#0 b#1 c#2");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with<F>(f: F) -> Replacement
    where
        F: Fn(&Captures<'_>) -> String + Send + Sync + 'static,
    {
        Replacement {
            kind: Kind::Closure(Arc::new(f)),
        }
    }

    /// A closure that also receives the stream's own value of type `S`: a
    /// counter, a map from each secret to its placeholder, anything one
    /// conversation needs to remember between matches.
    ///
    /// Each [`Replacer`](crate::Replacer) keeps its own `S`, made with
    /// `S::default()` at its first such match, or given with
    /// [`Rules::replacer_with`](crate::Rules::replacer_with); every rule
    /// whose closure takes an `S` shares it, while a closure taking another
    /// type gets a value of its own. The value outlives
    /// [`flush`](crate::Replacer::flush) and
    /// [`reset`](crate::Replacer::reset) (a conversation may span several
    /// streams); read it with [`Replacer::state`](crate::Replacer::state)
    /// and start afresh with
    /// [`Replacer::take_state`](crate::Replacer::take_state).
    /// [`Rules::replace_all`](crate::Rules::replace_all) is one stream: its
    /// closures share one fresh `S` for the call.
    ///
    /// The closure runs once per match, when the match is decided, in
    /// stream order, so a stream's output still does not depend on how its
    /// input is split. Rules without such closures do no work for them.
    ///
    /// # Example
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use stream_replace::{Pattern, Replacement, Rules};
    ///
    /// /// Each address gets a number, the same one each time it comes back.
    /// #[derive(Default)]
    /// struct Emails(HashMap<String, usize>);
    ///
    /// let rules = Rules::builder()
    ///     .rule(
    ///         Pattern::regex(r"[\w.+-]+@[\w-]+\.\w+"),
    ///         Replacement::with_state(|caps, seen: &mut Emails| {
    ///             let next = seen.0.len() + 1;
    ///             let n = *seen.0.entry(caps.as_str().to_owned()).or_insert(next);
    ///             format!("[EMAIL_{n}]")
    ///         }),
    ///     )
    ///     .build()?;
    ///
    /// // Two conversations at once, numbered independently.
    /// let (mut a, mut b) = (rules.replacer(), rules.replacer());
    /// assert_eq!(a.feed("from ann@x.org to bob@")?, "from [EMAIL_1] to ");
    /// assert_eq!(b.feed("cc bob@y.org")?, "cc ");
    /// assert_eq!(a.feed("y.org, ann@x.org")?, "[EMAIL_2], ");
    /// assert_eq!(a.flush()?, "[EMAIL_1]");
    /// assert_eq!(b.flush()?, "[EMAIL_1]");
    ///
    /// // The map says what each placeholder stands for.
    /// assert_eq!(a.state::<Emails>().unwrap().0["bob@y.org"], 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_state<S, F>(f: F) -> Replacement
    where
        S: Default + Send + Sync + 'static,
        F: Fn(&Captures<'_>, &mut S) -> String + Send + Sync + 'static,
    {
        Replacement {
            kind: Kind::Stateful(Arc::new(move |caps: &Captures<'_>, state: &mut State| {
                f(caps, state.get_or_default::<S>())
            })),
        }
    }

    /// A per-entity counter placeholder: `[ENTITY_1]` for the first value
    /// a stream meets, `[ENTITY_2]` for the next different one, and the same
    /// placeholder again whenever a value comes back (so `[EMAIL_1]` stands
    /// for one address throughout). Rules sharing an `entity` share its
    /// numbering.
    ///
    /// The numbering belongs to the stream: it starts afresh with each
    /// [`Replacer`](crate::Replacer) and at [`reset`](crate::Replacer::reset),
    /// and goes on across [`flush`](crate::Replacer::flush) (the replies of
    /// one conversation). Nothing restores the values: the map from
    /// placeholders back to them is not kept anywhere you can read.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Pattern, Replacement, Rules};
    ///
    /// let rules = Rules::builder()
    ///     .rule(Pattern::regex(r"\w+@\w+\.\w+"), Replacement::counter("EMAIL"))
    ///     .build()?;
    /// let mut r = rules.replacer();
    /// let out = r.feed("ann@x.org, bob@y.org, ann@")? + &r.feed("x.org")? + &r.flush()?;
    /// assert_eq!(out, "[EMAIL_1], [EMAIL_2], [EMAIL_1]");
    /// r.reset();
    /// assert_eq!(r.feed("bob@y.org!")?, "[EMAIL_1]!");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn counter(entity: impl Into<String>) -> Replacement {
        let entity: Arc<str> = entity.into().into();
        Replacement::with_state(move |caps, seen: &mut Placeholders| {
            let values = match seen.0.iter_mut().find(|(e, _)| *e == entity) {
                Some((_, v)) => v,
                None => {
                    seen.0.push((entity.clone(), HashMap::new()));
                    &mut seen.0.last_mut().expect("just pushed").1
                }
            };
            let next = values.len() + 1;
            let n = *values
                .entry(caps.get_match().as_bytes().into())
                .or_insert(next);
            format!("[{entity}_{n}]")
        })
    }

    /// A mask that keeps the last `n` characters of the match and puts
    /// `mask` in place of each character before them (a card number shown
    /// as `************1111`). Separators are masked too; a match of `n`
    /// characters or fewer is masked whole.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Pattern, Replacement, Rules};
    ///
    /// let rules = Rules::builder()
    ///     .rule(Pattern::regex(r"\d{4}(?:-\d{4}){3}"), Replacement::keep_last(4, '*'))
    ///     .rule(Pattern::regex(r"#\d+"), Replacement::keep_last(4, '*'))
    ///     .build()?;
    /// assert_eq!(rules.replace_all("4111-1111-1111-1111"), format!("{}1111", "*".repeat(15)));
    /// assert_eq!(rules.replace_all("#123"), "****"); // no longer than 4: all masked
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn keep_last(n: usize, mask: char) -> Replacement {
        Replacement::with(move |caps| {
            let text = caps.as_str();
            let count = text.chars().count();
            if count <= n {
                return mask.to_string().repeat(count);
            }
            let cut = text
                .char_indices()
                .nth(count - n)
                .map_or(text.len(), |(i, _)| i);
            let mut out = mask.to_string().repeat(count - n);
            out.push_str(&text[cut..]);
            out
        })
    }

    /// A keyed hash placeholder, `[ENTITY_3f9a1c0b27de]`: the first 12 hex
    /// digits (48 bits) of HMAC-SHA256 of the matched text under `key`.
    /// The same value and key give the same placeholder in every stream,
    /// process and replica, with nothing stored, so logs and conversations
    /// can be joined on it without the value; a different key gives
    /// unrelated placeholders. [`keyed_hash_len`](Replacement::keyed_hash_len)
    /// sets another length.
    ///
    /// HMAC-SHA256 (RFC 2104 over FIPS 180-4) is a keyed pseudo-random
    /// function: without the key, a placeholder tells nothing about its
    /// value, and nobody can compute the placeholder of a value they guess.
    /// Whoever holds the key can: a short value (a phone number, an SSN)
    /// can be found again by hashing every candidate, so keep the key as
    /// secret as the values. Two values share a placeholder with a chance
    /// of about `n² / 2^49` among `n` distinct values (about 0.2% for a
    /// million), so use it to correlate, not as a unique id.
    ///
    /// Unlike [`counter`](Replacement::counter), it keeps no state: the
    /// counters stay per stream, the hashes are the same everywhere.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Pattern, Replacement, Rules};
    ///
    /// let rules = Rules::builder()
    ///     .rule(Pattern::regex(r"\w+@\w+\.\w+"), Replacement::keyed_hash("EMAIL", b"tenant-7 key"))
    ///     .build()?;
    /// let out = rules.replace_all("ann@x.org ann@x.org bob@y.org");
    /// let tags: Vec<&str> = out.split(' ').collect();
    /// assert_eq!(tags[0], tags[1]);
    /// assert_ne!(tags[0], tags[2]);
    /// assert!(tags[0].starts_with("[EMAIL_") && tags[0].len() == "[EMAIL_]".len() + 12);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn keyed_hash(entity: impl Into<String>, key: &[u8]) -> Replacement {
        Replacement::keyed_hash_len(entity, key, 12)
    }

    /// A keyed hash placeholder with `hex_digits` hex digits of
    /// HMAC-SHA256 (clamped to `1..=64`), as
    /// [`keyed_hash`](Replacement::keyed_hash) otherwise: `[ENTITY_3f9a1c]`
    /// for 6. Each hex digit is 4 bits: with `d` digits, two of `n`
    /// distinct values share a placeholder with a chance of about
    /// `n² / 2^(4d + 1)`.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Pattern, Replacement, Rules};
    ///
    /// let rules = Rules::builder()
    ///     .rule(Pattern::regex(r"\w+@\w+\.\w+"), Replacement::keyed_hash_len("EMAIL", b"k", 6))
    ///     .build()?;
    /// let out = rules.replace_all("ann@x.org");
    /// assert!(out.starts_with("[EMAIL_") && out.len() == "[EMAIL_]".len() + 6);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn keyed_hash_len(entity: impl Into<String>, key: &[u8], hex_digits: usize) -> Replacement {
        use hmac::{KeyInit, Mac};
        let digits = hex_digits.clamp(1, 64);
        // Keyed once; each match clones the keyed state (the inner and
        // outer pads already absorbed) instead of hashing the key again.
        let keyed = hmac::Hmac::<sha2::Sha256>::new_from_slice(key)
            .expect("HMAC takes a key of any length");
        let prefix: Arc<str> = format!("[{}_", entity.into()).into();
        Replacement::with(move |caps| {
            let mut mac = keyed.clone();
            mac.update(caps.get_match().as_bytes());
            let tag = mac.finalize().into_bytes();
            let mut out = String::with_capacity(prefix.len() + digits + 1);
            out.push_str(&prefix);
            for i in 0..digits {
                let nibble = (tag[i / 2] >> if i % 2 == 0 { 4 } else { 0 }) & 0xf;
                out.push(char::from(b"0123456789abcdef"[usize::from(nibble)]));
            }
            out.push(']');
            out
        })
    }

    pub(crate) fn compile(
        &self,
        rule: usize,
        pattern: &str,
        info: &GroupInfo,
    ) -> Result<Compiled, Error> {
        Ok(match &self.kind {
            Kind::Literal(s) => Compiled::Literal(Box::from(&**s)),
            Kind::Closure(f) => Compiled::Closure(f.clone()),
            Kind::Stateful(f) => Compiled::Stateful(f.clone()),
            Kind::Template(t) => {
                let parts = parse_template(t.as_bytes(), |name, braced| {
                    let idx = match name.parse::<usize>() {
                        Ok(i) if i < info.group_len(PatternID::ZERO) => Some(i),
                        Ok(_) => None,
                        Err(_) => info.to_index(PatternID::ZERO, name),
                    };
                    idx.ok_or_else(|| {
                        let written = if braced {
                            format!("${{{name}}}")
                        } else {
                            format!("${name}")
                        };
                        let mut message = format!(
                            "the template {t:?} refers to group {name:?} with {written:?}, \
                             which the pattern does not define"
                        );
                        if let Some(k) = name.find(|c: char| !c.is_ascii_digit()) {
                            if k > 0 && !braced {
                                let group = &name[..k];
                                message += &format!(
                                    "; to follow group {group} by text, write ${{{group}}}"
                                );
                            }
                        }
                        // `"cost $5"` most likely meant a dollar sign.
                        if !braced {
                            message += "; to insert a literal \"$\", write \"$$\"";
                        }
                        Error::new(ErrorKind::UnknownGroup, Some(rule), Some(pattern), message)
                    })
                })?;
                let text: Option<Vec<u8>> = parts
                    .iter()
                    .map(|p| match p {
                        Part::Text(t) => Some(t.as_slice()),
                        Part::Group(_) => None,
                    })
                    .collect::<Option<Vec<&[u8]>>>()
                    .map(|texts| texts.concat());
                // The template's text between its `$` references is UTF-8,
                // cut at ASCII bytes.
                match text.map(String::from_utf8) {
                    Some(Ok(text)) => Compiled::Literal(text.into()),
                    _ => Compiled::Template(parts.into()),
                }
            }
        })
    }
}

impl fmt::Debug for Replacement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Literal(s) => f.debug_tuple("Literal").field(s).finish(),
            Kind::Template(s) => f.debug_tuple("Template").field(s).finish(),
            Kind::Closure(_) | Kind::Stateful(_) => f.write_str("Closure(..)"),
        }
    }
}

/// A piece of a parsed template.
#[derive(Clone, Debug)]
pub(crate) enum Part {
    Text(Vec<u8>),
    Group(usize),
}

/// A replacement ready to run.
#[derive(Clone)]
pub(crate) enum Compiled {
    Literal(Box<str>),
    Template(Box<[Part]>),
    Closure(Arc<Callback>),
    Stateful(Arc<StateCallback>),
}

impl Compiled {
    /// Whether running this replacement needs the capture groups.
    /// The text of a replacement that is fixed text.
    pub(crate) fn as_text(&self) -> Option<&str> {
        match self {
            Compiled::Literal(t) => Some(t),
            _ => None,
        }
    }

    pub(crate) fn needs_captures(&self) -> bool {
        !matches!(self, Compiled::Literal(_))
    }

    /// Appends the replacement of the match described by `caps` to `out`;
    /// `state` is the stream's, for stateful closures.
    pub(crate) fn append(&self, caps: Option<&Captures<'_>>, state: &mut State, out: &mut Vec<u8>) {
        match self {
            Compiled::Literal(t) => out.extend_from_slice(t.as_bytes()),
            Compiled::Template(parts) => {
                for p in parts.iter() {
                    match p {
                        Part::Text(t) => out.extend_from_slice(t),
                        Part::Group(i) => {
                            if let Some(m) = caps.and_then(|c| c.get(*i)) {
                                out.extend_from_slice(m.as_bytes());
                            }
                        }
                    }
                }
            }
            Compiled::Closure(f) => {
                if let Some(c) = caps {
                    out.extend_from_slice(f(c).as_bytes());
                }
            }
            Compiled::Stateful(f) => {
                if let Some(c) = caps {
                    out.extend_from_slice(f(c, state).as_bytes());
                }
            }
        }
    }
}

impl fmt::Debug for Compiled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Compiled::Literal(t) => f.debug_tuple("Literal").field(t).finish(),
            Compiled::Template(p) => f.debug_tuple("Template").field(p).finish(),
            Compiled::Closure(_) | Compiled::Stateful(_) => f.write_str("Closure(..)"),
        }
    }
}

/// The numbering of [`Replacement::counter`]: per entity, each value's
/// number. Reset with the stream.
#[derive(Default)]
pub(crate) struct Placeholders(Vec<(Arc<str>, Numbers)>);

/// Each value's number, for one entity.
type Numbers = HashMap<Box<[u8]>, usize>;

/// One stream's values for [`Replacement::with_state`] closures: at most
/// one value of each type, made when a closure first asks for it. Empty,
/// it costs nothing (no allocation).
#[derive(Default)]
pub(crate) struct State {
    values: Vec<Box<dyn Any + Send + Sync>>,
}

impl State {
    pub(crate) fn get<S: Any>(&self) -> Option<&S> {
        self.values.iter().find_map(|v| v.downcast_ref())
    }

    pub(crate) fn get_mut<S: Any>(&mut self) -> Option<&mut S> {
        self.values.iter_mut().find_map(|v| v.downcast_mut())
    }

    /// Sets the value of type `S`, dropping the one it replaces.
    pub(crate) fn insert<S: Any + Send + Sync>(&mut self, value: S) {
        self.remove::<S>();
        self.values.push(Box::new(value));
    }

    pub(crate) fn remove<S: Any>(&mut self) -> Option<S> {
        let i = self.values.iter().position(|v| v.is::<S>())?;
        self.values.swap_remove(i).downcast().ok().map(|b| *b)
    }

    fn get_or_default<S: Default + Send + Sync + 'static>(&mut self) -> &mut S {
        if !self.values.iter().any(|v| v.is::<S>()) {
            self.values.push(Box::new(S::default()));
        }
        self.get_mut()
            .expect("a value of this type was found or just added")
    }
}

impl fmt::Debug for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("State")
            .field("values", &self.values.len())
            .finish()
    }
}

/// Parses a template in the syntax of `regex`'s `Captures::expand`,
/// resolving each group reference with `resolve` (given the name, and
/// whether it was written in braces).
fn parse_template(
    mut t: &[u8],
    mut resolve: impl FnMut(&str, bool) -> Result<usize, Error>,
) -> Result<Vec<Part>, Error> {
    let mut parts = Vec::new();
    let mut text = Vec::new();
    while !t.is_empty() {
        let Some(i) = memchr::memchr(b'$', t) else {
            text.extend_from_slice(t);
            break;
        };
        text.extend_from_slice(&t[..i]);
        t = &t[i..];
        if t.get(1) == Some(&b'$') {
            text.push(b'$');
            t = &t[2..];
            continue;
        }
        // As in `regex`: `${name}` takes anything up to `}` as the name (even
        // nothing); `$name` takes the longest run of `[_0-9A-Za-z]`; a `$`
        // that starts neither is literal.
        let braced = if t.get(1) == Some(&b'{') {
            memchr::memchr(b'}', &t[2..]).map(|j| (&t[2..2 + j], &t[3 + j..]))
        } else {
            None
        };
        let (name, rest) = match braced {
            Some(found) => found,
            None => {
                let n = t[1..]
                    .iter()
                    .take_while(|&&b| b == b'_' || b.is_ascii_alphanumeric())
                    .count();
                if n == 0 {
                    text.push(b'$');
                    t = &t[1..];
                    continue;
                }
                (&t[1..1 + n], &t[1 + n..])
            }
        };
        // A name is valid UTF-8: it is ASCII or sits between `{` and `}`
        // of a template that came from a `String`.
        let name = std::str::from_utf8(name).unwrap_or("");
        if !text.is_empty() {
            parts.push(Part::Text(std::mem::take(&mut text)));
        }
        parts.push(Part::Group(resolve(name, braced.is_some())?));
        t = rest;
    }
    if !text.is_empty() {
        parts.push(Part::Text(text));
    }
    Ok(parts)
}

/// A decided match: its position in the stream and its text.
///
/// Offsets count bytes from the start of the stream (or of the haystack for
/// [`Rules::replace_all`](crate::Rules::replace_all)).
///
/// # Example
///
/// ```
/// use stream_replace::Rules;
///
/// let rules = Rules::builder()
///     .regex_with(r"\d+", |c| {
///         let m = c.get(0).unwrap();
///         format!("<{}@{}>", m.as_str(), m.start())
///     })
///     .build()?;
/// let mut r = rules.replacer();
/// let mut out = r.feed("ab 12")?;
/// out += &r.feed("3 cd")?;
/// out += &r.flush()?;
/// assert_eq!(out, "ab <123@3> cd");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Match<'h> {
    start: usize,
    bytes: &'h [u8],
}

impl<'h> Match<'h> {
    /// The offset of the first byte of the match.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder()
    ///     .regex_with("[0-9]+", |c| c.get_match().start().to_string())
    ///     .build()?;
    /// let mut r = rules.replacer();
    /// assert_eq!(r.feed("ab 1")? + &r.feed("23 4")? + &r.flush()?, "ab 3 7");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn start(&self) -> usize {
        self.start
    }

    /// The offset just past the last byte of the match.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder()
    ///     .regex_with("[0-9]+", |c| c.get_match().end().to_string())
    ///     .build()?;
    /// assert_eq!(rules.replace_all("ab 123"), "ab 6");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn end(&self) -> usize {
        self.start + self.bytes.len()
    }

    /// The length of the match in bytes.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder()
    ///     .regex_with(r"\w+", |c| c.get_match().len().to_string())
    ///     .build()?;
    /// assert_eq!(rules.replace_all("héllo"), "6"); // 'é' is 2 bytes
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether the match is empty.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder()
    ///     .regex_with("x*", |c| if c.get_match().is_empty() { "-" } else { "X" }.to_string())
    ///     .build()?;
    /// assert_eq!(rules.replace_all("ab"), "-a-b-");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The matched text.
    ///
    /// Every pattern matches only valid UTF-8 (as in `regex`), so this never
    /// loses anything, even when the stream is fed invalid UTF-8 bytes.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder()
    ///     .regex_with(r"\w+", |c| format!("<{}>", c.get_match().as_str()))
    ///     .build()?;
    /// let mut r = rules.replacer();
    /// let mut out = r.feed_bytes(b"caf\xC3")?; // 'é' cut in two
    /// out.extend(r.feed_bytes(b"\xA9!")?);
    /// out.extend(r.flush_bytes()?);
    /// assert_eq!(out, "<café>!".as_bytes());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn as_str(&self) -> &'h str {
        match std::str::from_utf8(self.bytes) {
            Ok(s) => s,
            // Unreachable: rules are compiled in UTF-8 mode, where a match
            // and each of its groups always spans valid UTF-8.
            Err(e) => std::str::from_utf8(&self.bytes[..e.valid_up_to()]).unwrap_or_default(),
        }
    }

    /// The matched bytes.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder()
    ///     .regex_with(r"\w", |c| format!("{:?}", c.get_match().as_bytes()))
    ///     .build()?;
    /// assert_eq!(rules.replace_all("é"), "[195, 169]");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn as_bytes(&self) -> &'h [u8] {
        self.bytes
    }
}

/// The capture groups of a decided match, handed to replacement closures.
///
/// Group 0 is the whole match. As in `regex`, `caps[i]` and `caps["name"]`
/// panic when the group does not exist or did not take part in the match,
/// so a typo in a group name cannot silently redact nothing;
/// [`get`](Captures::get) and [`name`](Captures::name) return `None`
/// instead.
///
/// # Example
///
/// ```
/// use stream_replace::Rules;
///
/// let rules = Rules::builder()
///     .regex_with(r"(?<user>\w+)@(\w+)", |c| {
///         format!("{}@{} (rule {})", &c["user"][..1], &c[2], c.rule())
///     })
///     .build()?;
/// assert_eq!(rules.replace_all("mail ann@home"), "mail a@home (rule 0)");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Captures<'h> {
    haystack: &'h [u8],
    offset: usize,
    rule: usize,
    raw: &'h RawCaptures,
}

impl<'h> Captures<'h> {
    pub(crate) fn new(
        haystack: &'h [u8],
        offset: usize,
        rule: usize,
        raw: &'h RawCaptures,
    ) -> Captures<'h> {
        Captures {
            haystack,
            offset,
            rule,
            raw,
        }
    }

    /// The index of the rule that matched, in the order the rules were added.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder()
    ///     .regex_with("[0-9]+", |c| format!("r{}", c.rule()))
    ///     .regex_with("[a-z]+", |c| format!("r{}", c.rule()))
    ///     .build()?;
    /// assert_eq!(rules.replace_all("ab 12"), "r1 r0");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn rule(&self) -> usize {
        self.rule
    }

    /// The whole match (group 0).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder()
    ///     .regex_with(r"#(\w+)", |c| format!("{}..{}", c.get_match().start(), c.get_match().end()))
    ///     .build()?;
    /// assert_eq!(rules.replace_all("a #tag"), "a 2..6");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn get_match(&self) -> Match<'h> {
        self.get(0).unwrap_or(Match {
            start: self.offset,
            bytes: &[],
        })
    }

    /// The text of the whole match.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder()
    ///     .regex_with(r"(\w+)@\w+", |c| format!("<{}>", c.as_str()))
    ///     .build()?;
    /// assert_eq!(rules.replace_all("to ann@home"), "to <ann@home>");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn as_str(&self) -> &'h str {
        self.get_match().as_str()
    }

    /// Group `i`, or `None` when the group did not take part in the match or
    /// does not exist.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder()
    ///     .regex_with("([0-9]+)(%)?", |c| format!("{}:{}", &c[1], c.get(2).is_some()))
    ///     .build()?;
    /// assert_eq!(rules.replace_all("5 and 7%"), "5:false and 7:true");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn get(&self, i: usize) -> Option<Match<'h>> {
        let span = self.raw.get_group(i)?;
        Some(Match {
            start: self.offset + span.start,
            bytes: &self.haystack[span.start..span.end],
        })
    }

    /// The group named `name`, or `None` when it did not take part in the
    /// match or does not exist.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder()
    ///     .regex_with(r"(?<user>\w+)@\w+", |c| c.name("user").unwrap().as_str().to_uppercase())
    ///     .build()?;
    /// assert_eq!(rules.replace_all("to ann@home"), "to ANN");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn name(&self, name: &str) -> Option<Match<'h>> {
        let span = self.raw.get_group_by_name(name)?;
        Some(Match {
            start: self.offset + span.start,
            bytes: &self.haystack[span.start..span.end],
        })
    }

    /// The number of groups of the rule's pattern, group 0 included.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder()
    ///     .regex_with("(a)(b)?", |c| c.len().to_string())
    ///     .build()?;
    /// assert_eq!(rules.replace_all("a"), "3"); // group 2 counts, though it did not take part
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn len(&self) -> usize {
        self.raw.group_len()
    }

    /// Always false: a match has at least group 0.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder()
    ///     .regex_with("x*", |c| format!("{}/{}", c.is_empty(), c.get_match().is_empty()))
    ///     .build()?;
    /// assert_eq!(rules.replace_all(""), "false/true");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        false
    }
}

impl fmt::Debug for Captures<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let groups: Vec<Option<&str>> = (0..self.len())
            .map(|i| self.get(i).map(|m| m.as_str()))
            .collect();
        f.debug_struct("Captures")
            .field("rule", &self.rule)
            .field("groups", &groups)
            .finish()
    }
}

/// The text of group `i`.
///
/// # Panics
///
/// When the pattern has no group `i`, or group `i` did not take part in the
/// match (as in `regex`); use [`Captures::get`] to handle either case.
///
/// # Example
///
/// ```
/// use stream_replace::Rules;
///
/// let rules = Rules::builder()
///     .regex_with(r"(\w+)@(\w+)", |c| format!("{} at {}", &c[1], &c[2]))
///     .build()?;
/// assert_eq!(rules.replace_all("ann@home"), "ann at home");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl<'h> std::ops::Index<usize> for Captures<'h> {
    type Output = str;

    fn index(&self, i: usize) -> &str {
        match self.get(i) {
            Some(m) => m.as_str(),
            None => panic!("no group at index '{i}'"),
        }
    }
}

/// The text of the group named `name`.
///
/// # Panics
///
/// When the pattern has no group named `name`, or that group did not take
/// part in the match (as in `regex`); use [`Captures::name`] to handle
/// either case.
///
/// # Example
///
/// ```
/// use stream_replace::Rules;
///
/// let rules = Rules::builder()
///     .regex_with(r"(?<user>\w+)@\w+", |c| format!("[{}]", &c["user"]))
///     .build()?;
/// assert_eq!(rules.replace_all("ann@home"), "[ann]");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl<'h, 'n> std::ops::Index<&'n str> for Captures<'h> {
    type Output = str;

    fn index(&self, name: &'n str) -> &str {
        match self.name(name) {
            Some(m) => m.as_str(),
            None => panic!("no group named '{name}'"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn try_parse(t: &str) -> Result<Vec<Part>, Error> {
        parse_template(t.as_bytes(), |n, _| {
            n.parse::<usize>()
                .or_else(|_| if n == "x" { Ok(7) } else { Err(()) })
                .map_err(|_| Error::new(ErrorKind::UnknownGroup, None, None, n))
        })
    }

    fn parse(t: &str) -> Vec<String> {
        try_parse(t)
            .unwrap()
            .into_iter()
            .map(|p| match p {
                Part::Text(t) => String::from_utf8(t).unwrap(),
                Part::Group(i) => format!("<{i}>"),
            })
            .collect()
    }

    #[test]
    fn template_syntax() {
        assert_eq!(parse("a$1 b"), vec!["a", "<1>", " b"]);
        // As in `regex`, the longest run of name characters is the name.
        assert!(try_parse("a$1b").is_err());
        assert_eq!(parse("a${1}b"), vec!["a", "<1>", "b"]);
        assert_eq!(parse("$$1"), vec!["$1"]);
        assert_eq!(parse("$x-$"), vec!["<7>", "-$"]);
        // `${}` names the group "", which no pattern has (`regex` expands it
        // to nothing; here it is an unknown group).
        assert!(try_parse("${}").is_err());
        assert_eq!(parse("${x"), vec!["${x"]);
        assert_eq!(parse("$ x"), vec!["$ x"]);
    }
}
