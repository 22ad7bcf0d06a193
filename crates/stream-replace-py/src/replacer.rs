//! Bindings of the engine's `Rules` and `Replacer`: `Rules` (compiled once,
//! shared) and `Stream` (one stream, locked while the engine runs on it).
//!
//! The Python package translates patterns and templates before they get
//! here: this module takes patterns in the engine's syntax and templates in
//! its `$1` / `${1}` / `$$` syntax.

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::{PyDict, PyString, PyTuple};
use stream_replace::{
    Captures, Config, Pattern, Replacement, Replacer as EngineReplacer, Rules as EngineRules,
    StreamErrorKind,
};

pyo3::create_exception!(
    _engine,
    StreamError,
    PyRuntimeError,
    "A stream failed: more text held back than `max_held` allows, or a \
     replacement function raised in an earlier call. The stream refuses \
     every call but `reset` from then on."
);

/// Chunks at least this long are scanned with the GIL released (the
/// engine runs at tens of MB/s, so 4 KiB takes tens of microseconds, far
/// more than releasing and taking back the GIL costs).
const DETACH_AT: usize = 4096;

/// How a rule's replacement is given.
const REPL_LITERAL: u8 = 0;
const REPL_TEMPLATE: u8 = 1;
const REPL_CALL_STR: u8 = 2;
const REPL_CALL_MATCH: u8 = 3;

/// The stream's own state for replacement functions: the first error one
/// raised, and the input text needed to turn byte offsets into character
/// offsets.
#[derive(Default)]
struct Calls {
    /// The first exception a replacement function raised in this stream.
    error: Option<PyErr>,
    /// Whether character offsets are wanted (a regex rule has a function).
    track: bool,
    /// The input from byte offset `base_byte` (character `base_char`) on.
    pending: Vec<u8>,
    base_byte: usize,
    base_char: usize,
}

impl Calls {
    fn new(track: bool) -> Calls {
        Calls {
            track,
            ..Calls::default()
        }
    }

    /// The character offset of stream byte offset `byte`, at or after
    /// `base_byte` and inside the text received so far.
    fn char_at(&self, byte: usize) -> usize {
        let rel = byte.saturating_sub(self.base_byte).min(self.pending.len());
        self.base_char + count_chars(&self.pending[..rel])
    }

    /// Forgets the input before stream byte offset `byte`: no match can
    /// start before it any more.
    fn advance(&mut self, byte: usize) {
        let rel = byte.saturating_sub(self.base_byte).min(self.pending.len());
        if rel == 0 {
            return;
        }
        self.base_char += count_chars(&self.pending[..rel]);
        self.base_byte += rel;
        self.pending.drain(..rel);
    }
}

/// Characters in UTF-8 text: the bytes that do not continue a character.
fn count_chars(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| (b & 0xC0) != 0x80).count()
}

/// Runs a replacement function, keeping the first exception in `calls`.
fn call_str(
    calls: &mut Calls,
    rule: usize,
    f: &Py<PyAny>,
    args: impl for<'py> FnOnce(Python<'py>, &Calls) -> PyResult<Bound<'py, PyTuple>>,
) -> String {
    if calls.error.is_some() {
        return String::new();
    }
    let result = Python::attach(|py| -> PyResult<String> {
        let args = args(py, calls)?;
        let out = f.bind(py).call1(args)?;
        match out.cast::<PyString>() {
            Ok(s) => Ok(s.to_cow()?.into_owned()),
            Err(_) => Err(PyTypeError::new_err(format!(
                "rule {rule}: the replacement function returned {}, not str",
                out.get_type().name()?
            ))),
        }
    });
    result.unwrap_or_else(|e| {
        calls.error = Some(e);
        String::new()
    })
}

/// The arguments of a regex rule's function: the groups' texts and their
/// spans (character offsets in the stream when tracked, else byte offsets).
fn match_args<'py>(
    py: Python<'py>,
    calls: &Calls,
    caps: &Captures<'_>,
) -> PyResult<Bound<'py, PyTuple>> {
    let mut texts = Vec::with_capacity(caps.len());
    let mut spans = Vec::with_capacity(caps.len());
    for i in 0..caps.len() {
        match caps.get(i) {
            Some(m) => {
                texts.push(Some(m.as_str()));
                spans.push(Some(if calls.track {
                    (calls.char_at(m.start()), calls.char_at(m.end()))
                } else {
                    (m.start(), m.end())
                }));
            }
            None => {
                texts.push(None);
                spans.push(None);
            }
        }
    }
    let texts = PyTuple::new(py, texts)?;
    let spans = PyTuple::new(py, spans)?;
    PyTuple::new(py, [texts.into_any(), spans.into_any()])
}

/// A build error as `ValueError(message, rule)`: the message without the
/// engine's "rule N (pattern): " prefix, which names the translated
/// pattern (the package names the rule with the user's), and the rule's
/// index or `None`.
fn build_error(e: stream_replace::Error) -> PyErr {
    let shown = e.to_string();
    let Some(i) = e.rule() else {
        return PyValueError::new_err((shown, None::<usize>));
    };
    let mut prefix = format!("rule {i}");
    if let Some(p) = e.pattern() {
        match p.char_indices().nth(80) {
            Some((cut, _)) => prefix += &format!(" ({:?}... {} bytes in all)", &p[..cut], p.len()),
            None => prefix += &format!(" ({p:?})"),
        }
    }
    prefix += ": ";
    let rest = shown.strip_prefix(&prefix).unwrap_or(&shown).to_owned();
    PyValueError::new_err((rest, Some(i)))
}

/// A compiled, immutable rule set, shared by any number of streams and
/// threads.
///
/// `rules` is a list of `(is_regex, pattern, kind, replacement)`: `kind` 0
/// is literal text, 1 an engine template, 2 a function of the matched
/// str, 3 a function of `(texts, spans)` (the groups of a regex match).
#[pyclass(frozen, module = "stream_replace._engine")]
pub struct Rules {
    rules: EngineRules,
    calls: bool,
    track: bool,
}

#[pymethods]
impl Rules {
    #[new]
    #[pyo3(signature = (rules, max_held=None))]
    fn new(
        py: Python<'_>,
        rules: Vec<(bool, String, u8, Py<PyAny>)>,
        max_held: Option<usize>,
    ) -> PyResult<Rules> {
        let mut builder = EngineRules::builder();
        let (mut calls, mut track) = (false, false);
        for (i, (is_regex, pattern, kind, repl)) in rules.into_iter().enumerate() {
            let pat = if is_regex {
                Pattern::regex(pattern)
            } else {
                Pattern::literal(pattern)
            };
            let replacement = match kind {
                REPL_LITERAL => Replacement::literal(repl.extract::<String>(py)?),
                REPL_TEMPLATE => Replacement::template(repl.extract::<String>(py)?),
                REPL_CALL_STR => {
                    calls = true;
                    Replacement::with_state(move |caps, calls: &mut Calls| {
                        call_str(calls, i, &repl, |py, _| PyTuple::new(py, [caps.as_str()]))
                    })
                }
                REPL_CALL_MATCH => {
                    calls = true;
                    track |= is_regex;
                    Replacement::with_state(move |caps, calls: &mut Calls| {
                        call_str(calls, i, &repl, |py, calls| match_args(py, calls, caps))
                    })
                }
                _ => {
                    return Err(PyValueError::new_err(format!(
                        "rule {i}: unknown replacement kind {kind}"
                    )))
                }
            };
            builder.rule(pat, replacement);
        }
        if let Some(n) = max_held {
            builder.config(Config::new().max_held(n));
        }
        let rules = py.detach(|| builder.build()).map_err(build_error)?;
        Ok(Rules {
            rules,
            calls,
            track,
        })
    }

    /// A new stream over these rules.
    fn stream(&self) -> Stream {
        Stream::over(self)
    }

    /// The size in bytes of the dense DFA the streams step, or `None` when
    /// they step a lazy DFA (the rules' automaton was too big for a dense
    /// one).
    #[getter]
    fn dense_dfa_size(&self) -> Option<usize> {
        self.rules.dense_dfa_size()
    }

    /// The number of rules.
    fn __len__(&self) -> usize {
        self.rules.len()
    }
}

struct Inner {
    replacer: EngineReplacer,
    /// Set when a replacement function raised: every call but `reset`
    /// refuses until then.
    failed: bool,
    /// The output of the call in progress (kept to reuse its allocation).
    out: String,
}

impl Inner {
    fn new(rules: &EngineRules, track: bool) -> Inner {
        Inner {
            replacer: rules.replacer_with(Calls::new(track)),
            failed: false,
            out: String::new(),
        }
    }

    /// The engine's error, or the failure of an earlier call, as Python's.
    fn fail(&mut self, e: Option<stream_replace::StreamError>) -> PyErr {
        self.failed = true;
        match e {
            Some(e) if e.kind() != StreamErrorKind::Poisoned => StreamError::new_err(e.to_string()),
            Some(_) => {
                StreamError::new_err("the stream is poisoned: an earlier call failed; reset it")
            }
            None => StreamError::new_err(
                "the stream failed in an earlier call; reset it before feeding it again",
            ),
        }
    }

    /// Runs `step` on the engine into `self.out`. With replacement
    /// functions, reports the first exception one raised (the call's output
    /// is then dropped and the stream fails) and forgets the input no match
    /// can reach any more.
    fn run(
        &mut self,
        calls: bool,
        step: impl FnOnce(&mut EngineReplacer, &mut String) -> Result<(), stream_replace::StreamError>,
    ) -> PyResult<()> {
        if self.failed {
            return Err(self.fail(None));
        }
        self.out.clear();
        let result = step(&mut self.replacer, &mut self.out);
        if calls {
            let start = self.replacer.offset() - self.replacer.held();
            let state = (self.replacer.state_mut::<Calls>()).expect("made with the stream");
            if let Some(e) = state.error.take() {
                self.failed = true;
                self.out.clear();
                return Err(e);
            }
            if state.track {
                state.advance(start);
            }
        }
        result.map_err(|e| {
            self.out.clear();
            self.fail(Some(e))
        })
    }
}

/// One stream over a rule set: `feed` chunks, `flush` at the end, `reset`
/// to start over. Calls on one stream from several threads take turns.
///
/// The package's `Replacer` is a subclass, made from a list of rules.
#[pyclass(frozen, subclass, weakref, module = "stream_replace._engine")]
pub struct Stream {
    inner: Mutex<Inner>,
    /// The thread holding `inner` (see `thread_token`), or 0.
    owner: AtomicUsize,
    rules: EngineRules,
    /// Whether a rule has a replacement function.
    calls: bool,
    /// Whether a regex rule has one (it gets character offsets).
    track: bool,
}

impl Stream {
    fn over(rules: &Rules) -> Stream {
        Stream {
            inner: Mutex::new(Inner::new(&rules.rules, rules.track)),
            owner: AtomicUsize::new(0),
            rules: rules.rules.clone(),
            calls: rules.calls,
            track: rules.track,
        }
    }

    /// Locks the stream, waiting without the GIL if another thread has it
    /// (that thread may need the GIL to finish). A replacement function
    /// that calls its own stream gets an error, not a deadlock.
    fn lock(&self, py: Python<'_>) -> PyResult<Locked<'_>> {
        let me = thread_token();
        if self.owner.load(Ordering::Acquire) == me {
            return Err(PyRuntimeError::new_err(
                "a replacement function called the stream that is running it",
            ));
        }
        let guard = (self.inner.lock_py_attached(py)).unwrap_or_else(|p| p.into_inner());
        self.owner.store(me, Ordering::Release);
        Ok(Locked {
            guard,
            owner: &self.owner,
        })
    }
}

/// A locked stream; unlocking clears the owner.
struct Locked<'a> {
    guard: MutexGuard<'a, Inner>,
    owner: &'a AtomicUsize,
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        self.owner.store(0, Ordering::Release);
    }
}

impl Deref for Locked<'_> {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.guard
    }
}

impl DerefMut for Locked<'_> {
    fn deref_mut(&mut self) -> &mut Inner {
        &mut self.guard
    }
}

thread_local! {
    static TOKEN: u8 = const { 0 };
}

/// A number unique to the calling thread among live threads (the address
/// of a thread-local), never 0.
fn thread_token() -> usize {
    TOKEN.with(|t| std::ptr::from_ref(t) as usize)
}

#[pymethods]
impl Stream {
    /// A new stream over `rules` (extra arguments are for subclasses).
    #[new]
    #[pyo3(signature = (rules, *_args, **_kwargs))]
    fn new(
        rules: &Bound<'_, Rules>,
        _args: &Bound<'_, PyTuple>,
        _kwargs: Option<&Bound<'_, PyDict>>,
    ) -> Stream {
        Stream::over(rules.get())
    }

    /// Feeds one chunk; returns the text now safe to emit.
    ///
    /// Raises what a replacement function raised; the stream then fails
    /// (every later call raises `StreamError`) until `reset`.
    fn feed<'py>(
        &self,
        py: Python<'py>,
        chunk: &Bound<'py, PyString>,
    ) -> PyResult<Bound<'py, PyString>> {
        let chunk = crate::text::utf8(chunk)?;
        let text: &str = &chunk;
        let mut inner = self.lock(py)?;
        let track = self.track;
        inner.run(self.calls, |r, out| {
            if track {
                let calls = r.state_mut::<Calls>().expect("made with the stream");
                calls.pending.extend_from_slice(text.as_bytes());
            }
            if text.len() >= DETACH_AT {
                py.detach(|| r.feed_into(text, out))
            } else {
                r.feed_into(text, out)
            }
        })?;
        Ok(PyString::new(py, &inner.out))
    }

    /// Ends the stream: returns the rest of the text, replaced. The next
    /// `feed` starts a new stream (offsets count from 0 again).
    fn flush<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyString>> {
        let mut inner = self.lock(py)?;
        inner.run(self.calls, |r, out| r.flush_into(out))?;
        let text = PyString::new(py, &inner.out);
        if self.track {
            inner.replacer = self.rules.replacer_with(Calls::new(true));
        }
        Ok(text)
    }

    /// Drops any held text (never emitted) and clears a failure.
    fn reset(&self, py: Python<'_>) -> PyResult<()> {
        let mut inner = self.lock(py)?;
        *inner = Inner::new(&self.rules, self.track);
        Ok(())
    }

    /// How many bytes (UTF-8) are held back, waiting for more text.
    #[getter]
    fn held(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.lock(py)?.replacer.held())
    }

    /// Whether the stream failed and refuses calls until `reset`.
    #[getter]
    fn failed(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.lock(py)?.failed)
    }
}

/// Adds this file's classes and functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Rules>()?;
    m.add_class::<Stream>()?;
    m.add("StreamError", m.py().get_type::<StreamError>())?;
    m.add("DETACH_AT", DETACH_AT)?;
    Ok(())
}
