//! Bindings of the engine's guard layer: rule sets with ids, actions,
//! validators and allowlists; push-based sessions; `evaluate`.
//!
//! The classes here are the low-level half of `stream_replace.guard`, which
//! builds their arguments from its `Rule`, action and pack objects and turns
//! their tuples into its `Chunk`, `Trigger` and `Evaluation` objects.
//!
//! Offsets: the engine reports spans in bytes of the UTF-8 input; Python
//! users index `str` by code points, so every span crossing this boundary is
//! converted to code points of the stream's (or the text's) input.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use stream_replace::{
    pack, validate, Action, Block, Config, Pattern, Replacement, Replacer, Rule, Rules,
    StreamError, StreamErrorKind, Trigger,
};

pyo3::create_exception!(
    _engine,
    GuardError,
    crate::replacer::StreamError,
    "A guarded stream failed: more text held than its cap allows, or a \
     validator raised. The stream stays closed until it is reset."
);

thread_local! {
    /// The exception a Python validator raised, for the call that runs it
    /// (validators run on the thread that feeds the stream).
    static VALIDATOR_ERROR: RefCell<Option<PyErr>> = const { RefCell::new(None) };
}

/// Adds this file's classes and functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<GuardRules>()?;
    m.add_class::<GuardSession>()?;
    m.add("GuardError", m.py().get_type::<GuardError>())?;
    m.add_function(wrap_pyfunction!(pii_pack, m)?)?;
    Ok(())
}

/// A pack rule as Python gets it:
/// `(id, pattern, mask, block_reason_or_None, has_validator, what, misses)`.
type PyPackRule = (
    &'static str,
    &'static str,
    &'static str,
    Option<&'static str>,
    bool,
    &'static str,
    &'static str,
);

/// The rules of the `pii` pack, in order.
#[pyfunction]
fn pii_pack() -> Vec<PyPackRule> {
    pack::pii()
        .rules()
        .iter()
        .map(|r| {
            let reason = match r.action {
                pack::PackAction::Block(reason) => Some(reason),
                _ => None,
            };
            (
                r.id,
                r.pattern,
                r.mask,
                reason,
                r.validator.is_some(),
                r.what,
                r.misses,
            )
        })
        .collect()
}

/// One rule as `stream_replace.guard` sends it:
/// `(source, pattern, (action, text, n, key), id, validator)`.
type RuleSpec<'py> = (
    String,
    String,
    (String, Option<String>, Option<usize>, Option<Vec<u8>>),
    Option<String>,
    Option<Bound<'py, PyAny>>,
);

fn value_error(index: usize, msg: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(format!("rule {index}: {msg}"))
}

/// A validator that calls a Python callable. An exception it raises is kept
/// for the calling thread and turned into a panic, which poisons the stream
/// (fail closed); the binding catches the panic and raises the exception.
fn python_validator(f: Py<PyAny>) -> impl Fn(&str) -> bool + Send + Sync + 'static {
    move |text: &str| {
        let result = Python::attach(|py| f.bind(py).call1((text,))?.is_truthy());
        match result {
            Ok(ok) => ok,
            Err(e) => {
                VALIDATOR_ERROR.with(|slot| *slot.borrow_mut() = Some(e));
                std::panic::panic_any(ValidatorRaised);
            }
        }
    }
}

/// The panic payload of a validator that raised.
struct ValidatorRaised;

fn builtin_validator(name: &str) -> Option<fn(&str) -> bool> {
    match name {
        "luhn" => Some(validate::luhn),
        "us_ssn" => Some(validate::us_ssn),
        "iban" => Some(validate::iban),
        _ => None,
    }
}

fn build_rule(index: usize, spec: RuleSpec<'_>) -> PyResult<Rule> {
    let (source, pattern, (action, text, n, key), id, validator) = spec;
    let packed = if source == "pack" {
        let all = pack::pii();
        let found = all.get(&pattern).copied();
        Some(found.ok_or_else(|| value_error(index, format!("no pack rule {pattern:?}")))?)
    } else {
        None
    };
    let pat = match (source.as_str(), &packed) {
        ("regex", _) => Pattern::regex(pattern.clone()),
        ("literal", _) => Pattern::literal(pattern.clone()),
        ("pack", Some(p)) => p.pattern(),
        _ => return Err(value_error(index, format!("unknown source {source:?}"))),
    };
    let need_text = || {
        text.clone()
            .ok_or_else(|| value_error(index, format!("action {action:?} needs a text")))
    };
    let default_mask = || match &packed {
        Some(p) => p.mask.to_owned(),
        None => String::new(),
    };
    let (replacement, act) = match action.as_str() {
        "pack" => match &packed {
            Some(p) => (
                p.replacement(),
                match p.action {
                    pack::PackAction::Block(reason) => Action::Block(reason.to_owned()),
                    _ => Action::Replace,
                },
            ),
            None => return Err(value_error(index, "only a pack rule has a pack action")),
        },
        "mask" => (Replacement::literal(need_text()?), Action::Replace),
        "counter" => (Replacement::counter(need_text()?), Action::Replace),
        "keep_last" => {
            let mask = need_text()?;
            let mut chars = mask.chars();
            let (Some(c), None) = (chars.next(), chars.next()) else {
                return Err(value_error(index, "keep_last's mask must be one character"));
            };
            (Replacement::keep_last(n.unwrap_or(4), c), Action::Replace)
        }
        "keyed_hash" => {
            let key = key.ok_or_else(|| value_error(index, "keyed_hash needs a key"))?;
            (Replacement::keyed_hash(need_text()?, &key), Action::Replace)
        }
        "block" => (
            Replacement::literal(default_mask()),
            Action::Block(need_text()?),
        ),
        other => return Err(value_error(index, format!("unknown action {other:?}"))),
    };
    let mut rule = Rule::new(pat, replacement).action(act);
    match (id, &packed) {
        (Some(id), _) => rule = rule.id(id),
        (None, Some(p)) => rule = rule.id(p.id),
        (None, None) => {}
    }
    match validator {
        None => {
            if let Some(valid) = packed.and_then(|p| p.validator) {
                rule = rule.validator(valid);
            }
        }
        Some(v) => {
            if let Ok(name) = v.extract::<String>() {
                if name != "none" {
                    let valid = builtin_validator(&name).ok_or_else(|| {
                        value_error(index, format!("no built-in validator {name:?}"))
                    })?;
                    rule = rule.validator(valid);
                }
            } else if v.is_callable() {
                rule = rule.validator(python_validator(v.unbind()));
            } else {
                return Err(value_error(
                    index,
                    "a validator is a callable or one of \"luhn\", \"us_ssn\", \"iban\", \"none\"",
                ));
            }
        }
    }
    Ok(rule)
}

/// The code-point offsets of byte offsets into a text, for offsets given in
/// increasing order (a restart from the beginning otherwise).
struct CharCursor<'t> {
    text: &'t str,
    byte: usize,
    chars: usize,
}

impl<'t> CharCursor<'t> {
    fn new(text: &'t str) -> CharCursor<'t> {
        CharCursor {
            text,
            byte: 0,
            chars: 0,
        }
    }

    fn at(&mut self, byte: usize) -> usize {
        if byte < self.byte {
            self.byte = 0;
            self.chars = 0;
        }
        let byte = byte.min(self.text.len());
        self.chars += self.text[self.byte..byte].chars().count();
        self.byte = byte;
        self.chars
    }
}

/// A trigger as Python gets it: `(rule_index, rule_id, action, reason, (start, end))`.
type PyTrigger = (usize, String, &'static str, Option<String>, (usize, usize));

/// A block as Python gets it: `(rule_index, rule_id, reason, (start, end))`.
type PyBlock = (usize, String, String, (usize, usize));

fn trigger_tuple(t: &Trigger, span: (usize, usize)) -> PyTrigger {
    let (action, reason) = match t.action() {
        Action::Block(reason) => ("block", Some(reason.clone())),
        _ => ("mask", None),
    };
    (t.rule(), t.id().to_owned(), action, reason, span)
}

fn block_tuple(b: &Block, span: (usize, usize)) -> PyBlock {
    (b.rule(), b.id().to_owned(), b.reason().to_owned(), span)
}

/// Runs `f`, turning a panic into the Python exception a validator raised,
/// or into a `GuardError`.
fn guarded<T>(f: impl FnOnce() -> T) -> PyResult<T> {
    VALIDATOR_ERROR.with(|slot| slot.borrow_mut().take());
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => Ok(v),
        Err(payload) => {
            let raised = VALIDATOR_ERROR.with(|slot| slot.borrow_mut().take());
            match raised {
                Some(e) if payload.is::<ValidatorRaised>() => {
                    let err = GuardError::new_err(
                        "a validator raised; the stream is closed until it is reset",
                    );
                    Python::attach(|py| err.set_cause(py, Some(e)));
                    Err(err)
                }
                _ => Err(GuardError::new_err(
                    "the engine panicked; the stream is closed until it is reset",
                )),
            }
        }
    }
}

/// A compiled guard rule set: immutable, shared by every session made from
/// it, safe to use from several threads.
///
/// ```python
/// from stream_replace._engine import GuardRules
/// rules = GuardRules([("regex", r"\d{3}-\d{2}-\d{4}", ("block", "SSN", None, None), "ssn", None)], [], None)
/// text, triggers, block = rules.evaluate("SSN 123-45-6789")
/// assert (text, block[1]) == ("SSN ", "ssn")
/// ```
#[pyclass(name = "GuardRules", module = "stream_replace._engine", frozen)]
pub struct GuardRules {
    rules: Rules,
}

#[pymethods]
impl GuardRules {
    /// Builds a rule set from rule specs, an allowlist (values passed
    /// unchanged) and an optional cap on held bytes per stream.
    #[new]
    #[pyo3(signature = (specs, allow, max_held=None))]
    fn new(
        specs: Vec<RuleSpec<'_>>,
        allow: Vec<String>,
        max_held: Option<usize>,
    ) -> PyResult<GuardRules> {
        let mut builder = Rules::builder();
        for (i, spec) in specs.into_iter().enumerate() {
            builder.add(build_rule(i, spec)?);
        }
        for value in allow {
            builder.allow(value);
        }
        if let Some(bytes) = max_held {
            builder.config(Config::new().max_held(bytes));
        }
        let rules = builder.build().map_err(|e| match e.rule() {
            Some(i) => value_error(i, &e),
            None => PyValueError::new_err(e.to_string()),
        })?;
        Ok(GuardRules { rules })
    }

    /// The number of rules.
    fn __len__(&self) -> usize {
        self.rules.len()
    }

    /// The rules' ids, in order.
    fn ids(&self) -> Vec<String> {
        (0..self.rules.len())
            .map(|i| self.rules.id(i).to_owned())
            .collect()
    }

    /// The copy of record of `text`: `(text, triggers, block_or_None)`, with
    /// spans in code points of `text`. On a block, `text` is the remedied
    /// text before the blocked match.
    fn evaluate(&self, text: &str) -> PyResult<(String, Vec<PyTrigger>, Option<PyBlock>)> {
        let eval = guarded(|| self.rules.evaluate(text))?;
        let mut cursor = CharCursor::new(text);
        let mut triggers = Vec::with_capacity(eval.triggers().len());
        for t in eval.triggers() {
            let span = t.span();
            let s = (cursor.at(span.start), cursor.at(span.end));
            triggers.push(trigger_tuple(t, s));
        }
        let block = eval.block().map(|b| {
            let span = b.span();
            let mut cursor = CharCursor::new(text);
            block_tuple(b, (cursor.at(span.start), cursor.at(span.end)))
        });
        Ok((eval.text().to_owned(), triggers, block))
    }

    /// A new session on these rules; `words` releases text only at word
    /// boundaries, holding at most that many bytes of a word.
    #[pyo3(signature = (words=None))]
    fn session(&self, words: Option<usize>) -> GuardSession {
        GuardSession::new(&self.rules, words)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Open,
    Blocked,
    Ended,
}

/// The input chunks a future trigger can still point into, for byte to
/// code point conversion: `(byte_start, char_start, text)`.
struct Inputs {
    chunks: VecDeque<(usize, usize, String)>,
    bytes: usize,
    chars: usize,
}

impl Inputs {
    fn new() -> Inputs {
        Inputs {
            chunks: VecDeque::new(),
            bytes: 0,
            chars: 0,
        }
    }

    fn push(&mut self, text: &str) {
        let n = text.chars().count();
        self.chunks
            .push_back((self.bytes, self.chars, text.to_owned()));
        self.bytes += text.len();
        self.chars += n;
    }

    /// The code-point offset of a byte offset of the stream's input.
    fn char_at(&self, byte: usize) -> usize {
        if byte >= self.bytes {
            return self.chars + (byte - self.bytes);
        }
        for (start, chars, text) in self.chunks.iter().rev() {
            if byte >= *start {
                let within = (byte - start).min(text.len());
                return chars + text.get(..within).map_or(within, |t| t.chars().count());
            }
        }
        // Before every kept chunk: cannot happen for a live trigger (see
        // `prune`); the oldest kept offset is the closest answer.
        self.chunks.front().map_or(self.chars, |c| c.1)
    }

    /// Drops the chunks that end before `byte`, the first byte a future
    /// match can start at.
    fn prune(&mut self, byte: usize) {
        while let Some((start, _, text)) = self.chunks.front() {
            if start + text.len() <= byte && self.chunks.len() > 1 {
                self.chunks.pop_front();
            } else {
                break;
            }
        }
    }

    fn clear(&mut self) {
        *self = Inputs::new();
    }
}

struct Inner {
    replacer: Replacer,
    state: State,
    next: usize,
    inputs: Inputs,
    block: Option<PyBlock>,
}

/// A raw chunk: `(index, text, redacted, blocked, triggers, is_final, block)`.
type PyChunk = (
    usize,
    String,
    bool,
    bool,
    Vec<PyTrigger>,
    bool,
    Option<PyBlock>,
);

impl Inner {
    fn span(&self, span: std::ops::Range<usize>) -> (usize, usize) {
        (
            self.inputs.char_at(span.start),
            self.inputs.char_at(span.end),
        )
    }

    fn chunk(&mut self, text: String, triggers: Vec<PyTrigger>, is_final: bool) -> PyChunk {
        let redacted = triggers.iter().any(|t| t.2 == "mask");
        let index = self.next;
        self.next += 1;
        (index, text, redacted, false, triggers, is_final, None)
    }

    /// The chunks for a call that released `text` (or failed), with the
    /// triggers it recorded.
    fn settle(
        &mut self,
        result: Result<String, StreamError>,
        is_final: bool,
    ) -> PyResult<Vec<PyChunk>> {
        let triggers: Vec<(Trigger, (usize, usize))> = self
            .replacer
            .take_triggers()
            .into_iter()
            .map(|t| {
                let s = self.span(t.span());
                (t, s)
            })
            .collect();
        let mut out = Vec::new();
        match result {
            Ok(text) => {
                let triggers: Vec<PyTrigger> =
                    triggers.iter().map(|(t, s)| trigger_tuple(t, *s)).collect();
                if is_final {
                    self.state = State::Ended;
                }
                if !text.is_empty() || !triggers.is_empty() || is_final {
                    out.push(self.chunk(text, triggers, is_final));
                }
                let start = self.replacer.offset() - self.replacer.held();
                self.inputs.prune(start);
                Ok(out)
            }
            Err(e) => {
                let Some(block) = e.block() else {
                    // The stream refuses every call until reset: keep
                    // nothing for offsets that will never be asked for.
                    self.inputs.clear();
                    return Err(stream_error(&e));
                };
                let released = String::from_utf8_lossy(e.released()).into_owned();
                let (masks, blocks): (Vec<_>, Vec<_>) = triggers
                    .iter()
                    .partition(|(t, _)| matches!(t.action(), Action::Replace));
                let masks: Vec<PyTrigger> =
                    masks.iter().map(|(t, s)| trigger_tuple(t, *s)).collect();
                if !released.is_empty() || !masks.is_empty() {
                    out.push(self.chunk(released, masks, false));
                }
                let span = self.span(block.span());
                let b = block_tuple(block, span);
                let blocks: Vec<PyTrigger> =
                    blocks.iter().map(|(t, s)| trigger_tuple(t, *s)).collect();
                let index = self.next;
                self.next += 1;
                out.push((
                    index,
                    String::new(),
                    false,
                    true,
                    blocks,
                    true,
                    Some(b.clone()),
                ));
                self.block = Some(b);
                self.state = State::Blocked;
                // Nothing held is ever released: drop it now.
                self.replacer.reset();
                self.inputs.clear();
                Ok(out)
            }
        }
    }
}

fn stream_error(e: &StreamError) -> PyErr {
    let what = match e.kind() {
        StreamErrorKind::HeldLimit => "held_limit",
        StreamErrorKind::Poisoned => "poisoned",
        _ => "failed",
    };
    GuardError::new_err((what, e.to_string()))
}

/// One guarded stream: `push` text as it arrives, `flush` at its end.
///
/// Thread-safe: a session used by two threads at once refuses the second
/// call with `GuardError` rather than interleave their text.
#[pyclass(name = "GuardSession", module = "stream_replace._engine", frozen)]
pub struct GuardSession {
    inner: Mutex<Inner>,
}

impl GuardSession {
    fn new(rules: &Rules, words: Option<usize>) -> GuardSession {
        let mut replacer = rules.replacer();
        replacer.record_triggers(true, false);
        if let Some(cap) = words {
            replacer.release_at_words(Some(cap));
        }
        GuardSession {
            inner: Mutex::new(Inner {
                replacer,
                state: State::Open,
                next: 1,
                inputs: Inputs::new(),
                block: None,
            }),
        }
    }

    fn lock(&self) -> PyResult<std::sync::MutexGuard<'_, Inner>> {
        match self.inner.try_lock() {
            Ok(g) => Ok(g),
            Err(std::sync::TryLockError::WouldBlock) => Err(GuardError::new_err((
                "busy",
                "the session is in use by another thread",
            ))),
            // A panic is caught inside the lock; a poisoned mutex means one
            // escaped: refuse, as a poisoned stream does.
            Err(std::sync::TryLockError::Poisoned(_)) => Err(GuardError::new_err((
                "poisoned",
                "the session failed in another call",
            ))),
        }
    }
}

#[pymethods]
impl GuardSession {
    /// Feeds `text`; returns the raw chunks now safe to emit.
    fn push(&self, py: Python<'_>, text: &str) -> PyResult<Vec<PyChunk>> {
        let mut inner = self.lock()?;
        match inner.state {
            State::Blocked => return Ok(Vec::new()),
            State::Ended => {
                return Err(GuardError::new_err((
                    "ended",
                    "push after flush: the stream ended; reset it to start another",
                )))
            }
            State::Open => {}
        }
        inner.inputs.push(text);
        let inner = &mut *inner;
        let replacer = &mut inner.replacer;
        let result = if text.len() >= 1 << 16 {
            py.detach(|| guarded(|| replacer.feed(text)))?
        } else {
            guarded(|| replacer.feed(text))?
        };
        inner.settle(result, false)
    }

    /// Ends the stream; returns the last chunks, the last one final.
    fn flush(&self) -> PyResult<Vec<PyChunk>> {
        let mut inner = self.lock()?;
        if inner.state != State::Open {
            return Ok(Vec::new());
        }
        let result = guarded(|| inner.replacer.flush())?;
        inner.settle(result, true)
    }

    /// Whether a block rule stopped the stream.
    #[getter]
    fn is_blocked(&self) -> PyResult<bool> {
        Ok(self.lock()?.state == State::Blocked)
    }

    /// Whether the stream ended (flushed or blocked).
    #[getter]
    fn is_ended(&self) -> PyResult<bool> {
        Ok(self.lock()?.state != State::Open)
    }

    /// The block that stopped the stream, or `None`.
    #[getter]
    fn block(&self) -> PyResult<Option<PyBlock>> {
        Ok(self.lock()?.block.clone())
    }

    /// Bytes of input held back, not yet released.
    #[getter]
    fn held(&self) -> PyResult<usize> {
        let inner = self.lock()?;
        Ok(inner.replacer.held() + inner.replacer.waiting())
    }

    /// Starts the stream again: clears a block, a failure, held text and
    /// counters' placeholders; chunk indexes restart at 1.
    fn reset(&self) -> PyResult<()> {
        let mut inner = self.lock()?;
        inner.replacer.reset();
        inner.replacer.take_triggers();
        inner.state = State::Open;
        inner.next = 1;
        inner.inputs.clear();
        inner.block = None;
        Ok(())
    }

    /// Lets `value` pass unchanged in this session.
    fn allow(&self, value: String) -> PyResult<()> {
        self.lock()?.replacer.allow(value);
        Ok(())
    }

    /// The session's counts: `{"matches": {id: n}, "rejected": {id: n},
    /// "allowed": n, "blocks": n}`.
    fn counters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let inner = self.lock()?;
        let c = inner.replacer.counters();
        let rules = inner.replacer.rules();
        let matches = PyDict::new(py);
        let rejected = PyDict::new(py);
        for i in 0..rules.len() {
            let id = rules.id(i);
            matches.set_item(id, c.matches(id))?;
            rejected.set_item(id, c.rejected(id))?;
        }
        let out = PyDict::new(py);
        out.set_item("matches", matches)?;
        out.set_item("rejected", rejected)?;
        out.set_item("allowed", c.allowed())?;
        out.set_item("blocks", c.blocks())?;
        Ok(out)
    }
}
