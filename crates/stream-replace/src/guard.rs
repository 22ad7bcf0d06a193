//! The guard layer: rules that name themselves, block, validate and report.
//!
//! A [`Rule`] is a pattern and a replacement, plus what a guardrail needs:
//! an id for reports, an [`Action`] (replace, or block the stream), and a
//! validator that can reject a match. A stream reports what its rules did
//! as [`Trigger`]s, a block as a [`Block`], and keeps [`Counters`] for
//! metrics; [`Rules::evaluate`](crate::Rules::evaluate) gives the same
//! verdict, text and triggers on a whole text (the copy of record).
//!
//! # What a match means, exactly
//!
//! The whole-input reference, which every stream reproduces for every split
//! of its input, is the leftmost-first search of [`Rules`]
//! with validators and allowlists added as follows. Scanning goes position
//! by position from the end of the last accepted match (or the start):
//!
//! 1. At position `s`, the candidates are the rules' leftmost-first matches
//!    anchored at `s`, in rule order (each rule with its own greedy or lazy
//!    preference). The first rule that matches at `s` is the candidate.
//!    An empty candidate at the end of the previous accepted match is no
//!    match (as in `regex`'s `find_iter`): `s` is skipped.
//! 2. If the candidate's rule has a validator that rejects the matched
//!    text, it is skipped as if that rule did not match at `s`, and the
//!    next rule in order that matches at `s` is the candidate (step 1's
//!    empty-match rule applies to it too). If no candidate is left, there is
//!    no match at `s`, and the search goes on at the next character (for
//!    look-behind, the text before still counts).
//! 3. An accepted candidate is a match: if its text is on an allowlist, it
//!    passes through unchanged; otherwise its rule acts (replaces, or
//!    blocks). Either way, scanning goes on from its end: an allowlisted
//!    value is not scanned again, so no rule matches a part of it.
//!
//! A rejection is not an allowlisting: rejected text is scanned again, so a
//! shorter match of another rule inside it, or one starting inside it, is
//! found; allowlisted text is not.
//!
//! # Failing closed
//!
//! A block releases nothing from its match on, through every method and
//! adapter; so do the failures that are not blocks. Under
//! [`HeldLimit::Replace`](crate::HeldLimit::Replace), a held candidate's
//! text is dropped as it is scanned: if that candidate turns out to be a
//! block rule's match, the stream still blocks there (its validator cannot
//! run on text that is gone, so it blocks whether or not the validator
//! would have accepted it), and the policy's text is all that stood for it.
//! A stream poisoned by a panic (in a validator, say) refuses every call
//! until it is reset, as a block does.
//!
//! # Example
//!
//! ```
//! use stream_replace::{Rule, Rules, StreamErrorKind};
//!
//! let rules = Rules::builder()
//!     .add(Rule::regex(r"\b\d{3}-\d{2}-\d{4}\b", "[SSN]").id("us_ssn").block("SSN in output"))
//!     .add(Rule::regex(r"[\w.]+@\w+\.\w+", "[EMAIL]").id("email"))
//!     .allow("help@example.com")
//!     .build()?;
//!
//! let mut r = rules.replacer();
//! assert_eq!(r.feed("Ask help@example.com or ann@x.org. ")?, "Ask help@example.com or [EMAIL]. ");
//! let err = r.feed("My SSN is 123-45-6789, and").unwrap_err();
//! assert_eq!(err.kind(), StreamErrorKind::Blocked);
//! assert_eq!(err.released(), b"My SSN is ");
//! let block = err.block().unwrap();
//! assert_eq!((block.id(), block.reason()), ("us_ssn", "SSN in output"));
//! assert_eq!(r.feed(" more").unwrap_err().block(), Some(block)); // and it stays blocked
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::HashSet;
use std::ops::Range;
use std::sync::Arc;

pub use crate::error::Block;
use crate::replacement::State;
pub use crate::rules::{Action, Rule};
use crate::rules::{Meta, Rules};

/// What a stream records of its rules' decisions as [`Trigger`]s (see
/// [`Replacer::set_trigger_recording`](crate::Replacer::set_trigger_recording)).
///
/// # Example
///
/// ```
/// use stream_replace::{Rules, TriggerRecording};
///
/// let rules = Rules::builder().literal("a", "b").build()?;
/// let mut r = rules.replacer();
/// r.set_trigger_recording(TriggerRecording::Values);
/// let _ = r.feed("a")?;
/// assert_eq!(r.take_triggers()[0].value(), Some("a"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TriggerRecording {
    /// Nothing is recorded (the default).
    #[default]
    Off,
    /// Each trigger's rule, id, action and span, without the matched text.
    Spans,
    /// As `Spans`, and each trigger keeps the matched text
    /// ([`Trigger::value`]): keep such triggers out of logs.
    Values,
}

/// One match a rule acted on: which rule, what it did, and where.
///
/// Its [`value`](Trigger::value), the matched text, is kept only when asked
/// for ([`Replacer::record_triggers`](crate::Replacer::record_triggers),
/// [`EvaluateConfig::values`]), so that reports can go to an audit log
/// without the secrets they are about.
///
/// # Example
///
/// ```
/// use stream_replace::{Action, Rule, Rules};
///
/// let rules = Rules::builder().add(Rule::regex(r"\d+", "N").id("num")).build()?;
/// let eval = rules.evaluate("a 12 b 3");
/// let t = &eval.triggers()[0];
/// assert_eq!((t.rule(), t.id(), t.action(), t.span()), (0, "num", &Action::Replace, 2..4));
/// assert_eq!(t.value(), None);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Trigger {
    rule: usize,
    id: Arc<str>,
    action: Action,
    span: Range<usize>,
    value: Option<String>,
}

impl Trigger {
    /// The index of the rule.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().literal("a", "b").literal("c", "d").build()?;
    /// assert_eq!(rules.evaluate("c").triggers()[0].rule(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn rule(&self) -> usize {
        self.rule
    }

    /// The id of the rule.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().literal("a", "b").build()?;
    /// assert_eq!(rules.evaluate("a").triggers()[0].id(), "0");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn id(&self) -> &str {
        &self.id
    }

    /// What the rule did.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Action, Rules};
    ///
    /// let rules = Rules::builder().literal("a", "b").build()?;
    /// assert_eq!(rules.evaluate("a").triggers()[0].action(), &Action::Replace);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn action(&self) -> &Action {
        &self.action
    }

    /// The match, in offsets of the stream's input.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().literal("a", "b").build()?;
    /// assert_eq!(rules.evaluate("xa").triggers()[0].span(), 1..2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn span(&self) -> Range<usize> {
        self.span.clone()
    }

    /// The matched text, when values were asked for (U+FFFD marks bytes that
    /// are not UTF-8, which only byte streams can have next to a match).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{EvaluateConfig, Rules};
    ///
    /// let rules = Rules::builder().regex(r"\d+", "N").build()?;
    /// let eval = rules.evaluate_with("a 12", &EvaluateConfig::new().values(true));
    /// assert_eq!(eval.triggers()[0].value(), Some("12"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn value(&self) -> Option<&str> {
        self.value.as_deref()
    }
}

/// Counts for metrics, kept by each [`Replacer`](crate::Replacer) over its
/// life (across streams; [`Replacer::take_counters`](crate::Replacer::take_counters)
/// starts them afresh). The bytes a stream holds are
/// [`Replacer::held`](crate::Replacer::held).
///
/// # Example
///
/// ```
/// use stream_replace::{Rule, Rules};
///
/// let rules = Rules::builder()
///     .add(Rule::regex(r"\b\d+\b", "N").id("even").validator(|t| t.len() % 2 == 0))
///     .allow("42")
///     .build()?;
/// let mut r = rules.replacer();
/// let _ = r.feed("1 12 42 1234 ")?;
/// let c = r.counters();
/// assert_eq!(c.matches("even"), 2);
/// assert_eq!(c.rejected("even"), 1);
/// assert_eq!(c.allowed(), 1);
/// assert_eq!(c.blocks(), 0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct Counters {
    ids: Arc<[Arc<str>]>,
    /// Matches per rule that has any, sorted by rule index: a stream over
    /// 100,000 rules that matched three of them keeps three entries.
    matches: Vec<(usize, u64)>,
    /// Rejections per rule that has any, sorted by rule index.
    rejected: Vec<(usize, u64)>,
    allowed: u64,
    blocks: u64,
}

impl PartialEq for Counters {
    fn eq(&self, other: &Counters) -> bool {
        self.ids == other.ids
            && self.matches == other.matches
            && self.rejected == other.rejected
            && (self.allowed, self.blocks) == (other.allowed, other.blocks)
    }
}

impl Eq for Counters {}

impl Default for Counters {
    fn default() -> Counters {
        Counters {
            ids: Arc::from(Vec::new()),
            matches: Vec::new(),
            rejected: Vec::new(),
            allowed: 0,
            blocks: 0,
        }
    }
}

impl Counters {
    pub(crate) fn new(meta: &Meta) -> Counters {
        Counters {
            ids: meta.ids.clone(),
            matches: Vec::new(),
            rejected: Vec::new(),
            allowed: 0,
            blocks: 0,
        }
    }

    /// Counts a match of rule `rule`.
    #[inline(always)]
    pub(crate) fn count_match(&mut self, rule: usize) {
        Self::bump(&mut self.matches, rule);
    }

    /// Counts a rejection of rule `rule`.
    fn count_rejected(&mut self, rule: usize) {
        Self::bump(&mut self.rejected, rule);
    }

    fn bump(counts: &mut Vec<(usize, u64)>, rule: usize) {
        match counts.binary_search_by_key(&rule, |&(r, _)| r) {
            Ok(i) => counts[i].1 += 1,
            Err(i) => counts.insert(i, (rule, 1)),
        }
    }

    /// The counts by rule index, one per rule.
    fn dense(&self, counts: &[(usize, u64)]) -> Vec<u64> {
        let mut all = vec![0; self.ids.len()];
        for &(rule, n) in counts {
            all[rule] = n;
        }
        all
    }

    fn sum(&self, counts: &[(usize, u64)], id: &str) -> u64 {
        counts
            .iter()
            .filter(|&&(rule, _)| &*self.ids[rule] == id)
            .map(|&(_, n)| n)
            .sum()
    }

    /// Matches that rules with this id acted on (replaced or blocked; not
    /// allowlisted or rejected ones).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().literal("a", "b").build()?;
    /// let mut r = rules.replacer();
    /// let _ = r.feed("aaa")?;
    /// assert_eq!(r.counters().matches("0"), 3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn matches(&self, id: &str) -> u64 {
        self.sum(&self.matches, id)
    }

    /// Matches of each rule, by index (a vector of one count per rule,
    /// allocated by this call: a stream itself keeps counts only for the
    /// rules that matched).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().literal("a", "b").literal("c", "d").build()?;
    /// let mut r = rules.replacer();
    /// let _ = r.feed("acc")?;
    /// assert_eq!(r.counters().matches_by_rule(), [1, 2]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn matches_by_rule(&self) -> Vec<u64> {
        self.dense(&self.matches)
    }

    /// Candidates of rules with this id that their validator rejected.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Rule, Rules};
    ///
    /// let rules = Rules::builder().add(Rule::literal("a", "b").validator(|_| false)).build()?;
    /// let mut r = rules.replacer();
    /// let _ = r.feed("aa")?;
    /// assert_eq!(r.counters().rejected("0"), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn rejected(&self, id: &str) -> u64 {
        self.sum(&self.rejected, id)
    }

    /// Matches that passed through because their text is allowlisted.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().literal("a", "b").allow("a").build()?;
    /// let mut r = rules.replacer();
    /// assert_eq!(r.feed("a")?, "a");
    /// assert_eq!(r.counters().allowed(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn allowed(&self) -> u64 {
        self.allowed
    }

    /// Streams stopped by a block.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Rule, Rules};
    ///
    /// let rules = Rules::builder().add(Rule::literal("x", "").block("x")).build()?;
    /// let mut r = rules.replacer();
    /// assert!(r.feed("x").is_err());
    /// assert_eq!(r.counters().blocks(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn blocks(&self) -> u64 {
        self.blocks
    }
}

/// Options of [`Rules::evaluate_with`](crate::Rules::evaluate_with).
///
/// # Example
///
/// ```
/// use stream_replace::{EvaluateConfig, Rule, Rules};
///
/// let rules = Rules::builder().add(Rule::literal("x", "").block("x")).build()?;
/// let eval = rules.evaluate_with("a x b", &EvaluateConfig::new().text_on_block(false));
/// assert!(eval.is_blocked());
/// assert_eq!(eval.text(), "");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvaluateConfig {
    values: bool,
    text_on_block: bool,
}

impl Default for EvaluateConfig {
    fn default() -> EvaluateConfig {
        EvaluateConfig {
            values: false,
            text_on_block: true,
        }
    }
}

impl EvaluateConfig {
    /// The defaults: no values in triggers, and on a block the text up to
    /// the block.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{EvaluateConfig, Rules};
    ///
    /// let rules = Rules::builder().literal("a", "b").build()?;
    /// assert_eq!(rules.evaluate_with("a", &EvaluateConfig::new()), rules.evaluate("a"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new() -> EvaluateConfig {
        EvaluateConfig::default()
    }

    /// Whether triggers carry the matched text ([`Trigger::value`]).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{EvaluateConfig, Rules};
    ///
    /// let rules = Rules::builder().literal("a", "b").build()?;
    /// let eval = rules.evaluate_with("a", &EvaluateConfig::new().values(true));
    /// assert_eq!(eval.triggers()[0].value(), Some("a"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn values(mut self, yes: bool) -> EvaluateConfig {
        self.values = yes;
        self
    }

    /// Whether a blocked evaluation keeps the text before the block (the
    /// default, what a stream delivers) or has none.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{EvaluateConfig, Rule, Rules};
    ///
    /// let rules = Rules::builder().add(Rule::literal("x", "").block("x")).build()?;
    /// assert_eq!(rules.evaluate("a x").text(), "a ");
    /// assert_eq!(rules.evaluate_with("a x", &EvaluateConfig::new().text_on_block(false)).text(), "");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn text_on_block(mut self, yes: bool) -> EvaluateConfig {
        self.text_on_block = yes;
        self
    }

    pub(crate) fn get_values(&self) -> bool {
        self.values
    }

    pub(crate) fn get_text_on_block(&self) -> bool {
        self.text_on_block
    }
}

/// The verdict of [`Rules::evaluate`](crate::Rules::evaluate) on a whole
/// text: the remedied text, the triggers, and the block if any.
///
/// # Example
///
/// ```
/// use stream_replace::{Rule, Rules};
///
/// let rules = Rules::builder()
///     .add(Rule::regex(r"\d{3}-\d{2}-\d{4}", "[SSN]").id("us_ssn").block("SSN"))
///     .add(Rule::regex(r"\w+@\w+\.\w+", "[EMAIL]").id("email"))
///     .build()?;
/// let eval = rules.evaluate("ann@x.org: 123-45-6789 and bob@y.org");
/// assert!(eval.is_blocked());
/// assert_eq!(eval.text(), "[EMAIL]: ");
/// let ids: Vec<&str> = eval.triggers().iter().map(|t| t.id()).collect();
/// assert_eq!(ids, ["email", "us_ssn"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evaluation {
    pub(crate) text: String,
    pub(crate) triggers: Vec<Trigger>,
    pub(crate) block: Option<Block>,
}

impl Evaluation {
    /// The remedied text: every match replaced, up to the block if there is
    /// one (or nothing, with [`EvaluateConfig::text_on_block`] off).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().literal("a", "b").build()?;
    /// assert_eq!(rules.evaluate("a cat").text(), "b cbt");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The matches the rules acted on, in order (the block last).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().literal("a", "b").build()?;
    /// assert_eq!(rules.evaluate("a cat").triggers().len(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn triggers(&self) -> &[Trigger] {
        &self.triggers
    }

    /// The block, if a block rule matched.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().literal("a", "b").build()?;
    /// assert!(rules.evaluate("a").block().is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn block(&self) -> Option<&Block> {
        self.block.as_ref()
    }

    /// Whether a block rule matched.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Rule, Rules};
    ///
    /// let rules = Rules::builder().add(Rule::literal("x", "").block("x")).build()?;
    /// assert!(rules.evaluate("x").is_blocked());
    /// assert!(!rules.evaluate("y").is_blocked());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_blocked(&self) -> bool {
        self.block.is_some()
    }

    /// The remedied text, taken.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().literal("a", "b").build()?;
    /// assert_eq!(rules.evaluate("a").into_text(), "b");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn into_text(self) -> String {
        self.text
    }
}

/// One stream's guard state: its allowlist, triggers, counters and block.
#[derive(Debug, Default)]
pub(crate) struct StreamGuard {
    pub(crate) allow: HashSet<Box<[u8]>>,
    /// Recorded triggers, when asked for.
    pub(crate) triggers: Option<Vec<Trigger>>,
    /// Whether triggers keep the matched text.
    pub(crate) values: bool,
    pub(crate) counters: Counters,
    /// Set by a block, until the stream fails with it.
    pub(crate) block: Option<Block>,
    /// Where a `&str` stream builds a replacement before appending it:
    /// here rather than in the sink, so that the sink is one word smaller
    /// (it is built on every feed).
    pub(crate) scratch: Vec<u8>,
    /// The values of `Replacement::with_state` closures: here rather than
    /// beside the guard, so that the sink built on every feed borrows one
    /// field for both.
    pub(crate) state: State,
}

impl StreamGuard {
    pub(crate) fn new(rules: &Rules) -> StreamGuard {
        // Field by field: `Counters::default` would allocate.
        StreamGuard {
            allow: HashSet::new(),
            triggers: None,
            values: false,
            counters: Counters::new(&rules.inner.meta),
            block: None,
            scratch: Vec::new(),
            state: State::default(),
        }
    }

    pub(crate) fn take_counters(&mut self) -> Counters {
        let fresh = Counters {
            ids: self.counters.ids.clone(),
            matches: Vec::new(),
            rejected: Vec::new(),
            allowed: 0,
            blocks: 0,
        };
        std::mem::replace(&mut self.counters, fresh)
    }

    fn allowed(&self, meta: &Meta, text: &[u8]) -> bool {
        (!meta.allow.is_empty() && meta.allow.contains(text))
            || (!self.allow.is_empty() && self.allow.contains(text))
    }

    fn block_at(&mut self, meta: &Meta, rule: usize, reason: &str, span: Range<usize>) {
        self.counters.blocks += 1;
        self.block = Some(Block {
            rule,
            id: meta.ids[rule].clone(),
            reason: reason.into(),
            span,
        });
    }

    fn trigger(&mut self, meta: &Meta, rule: usize, span: Range<usize>, text: &[u8]) {
        if let Some(t) = &mut self.triggers {
            t.push(Trigger {
                rule,
                id: meta.ids[rule].clone(),
                action: meta.actions[rule].clone(),
                span,
                value: self
                    .values
                    .then(|| String::from_utf8_lossy(text).into_owned()),
            });
        }
    }
}

/// What the guard makes of a decided match.
pub(crate) enum Judged {
    /// Rejected by its validator: not a match.
    Rejected,
    /// Allowlisted: passes through unchanged.
    Allowed,
    /// A block: the stream stops.
    Blocked,
    /// Replaced by its rule's replacement.
    Replace,
}

/// Judges rule `rule`'s decided match `hay[start..end]` (`offset` is the
/// stream offset of `hay[0]`), counting it and recording its trigger or
/// block.
pub(crate) fn judge(
    rules: &Rules,
    guard: &mut StreamGuard,
    hay: &[u8],
    offset: usize,
    rule: usize,
    start: usize,
    end: usize,
) -> Judged {
    let meta = &rules.inner.meta;
    let text = &hay[start..end];
    if let Some(valid) = &meta.validators[rule] {
        let ok = match std::str::from_utf8(text) {
            Ok(s) => valid(s),
            Err(_) => valid(&String::from_utf8_lossy(text)),
        };
        if !ok {
            guard.counters.count_rejected(rule);
            return Judged::Rejected;
        }
    }
    if guard.allowed(meta, text) {
        guard.counters.allowed += 1;
        return Judged::Allowed;
    }
    guard.counters.count_match(rule);
    let span = offset + start..offset + end;
    guard.trigger(meta, rule, span.clone(), text);
    match &meta.actions[rule] {
        Action::Replace => Judged::Replace,
        Action::Block(reason) => {
            guard.block_at(meta, rule, reason, span);
            Judged::Blocked
        }
    }
}

/// Judges a decided match whose text a held-limit policy dropped (see
/// `Sink::dropped`): the text is gone, so no validator or allowlist can
/// clear it, and a block rule blocks (failing closed). Returns whether the
/// stream stops.
pub(crate) fn dropped(
    rules: &Rules,
    guard: &mut StreamGuard,
    rule: usize,
    span: Range<usize>,
) -> bool {
    let meta = &rules.inner.meta;
    guard.counters.count_match(rule);
    guard.trigger(meta, rule, span.clone(), b"");
    match &meta.actions[rule] {
        Action::Replace => false,
        Action::Block(reason) => {
            guard.block_at(meta, rule, reason, span);
            true
        }
    }
}

/// Whether every match of `rule` is replaced with no check (no validator,
/// no allowlist, no block, no trigger to record): `apply` then accepts it,
/// whatever its text.
#[inline(always)]
pub(crate) fn is_plain(rules: &Rules, guard: &StreamGuard, rule: usize) -> bool {
    let meta = &rules.inner.meta;
    meta.plain[rule] && guard.triggers.is_none() && guard.allow.is_empty() && meta.allow.is_empty()
}

/// `apply` for a `&str` stream's match of a plain rule (`is_plain`) whose
/// replacement is fixed text: counts the match and appends the text.
/// Returns false, having done nothing, for any other rule.
#[inline(always)]
pub(crate) fn apply_plain_text(
    rules: &Rules,
    guard: &mut StreamGuard,
    rule: usize,
    out: &mut String,
) -> bool {
    if !is_plain(rules, guard, rule) {
        return false;
    }
    let Some(text) = rules.inner.replacements[rule].as_text() else {
        return false;
    };
    guard.counters.count_match(rule);
    out.push_str(text);
    true
}

/// Appends the output of an accepted match: its replacement, or its text
/// when allowlisted. Returns the engine's verdict.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn apply(
    rules: &Rules,
    guard: &mut StreamGuard,
    hay: &[u8],
    offset: usize,
    rule: usize,
    start: usize,
    end: usize,
    out: &mut Vec<u8>,
) -> crate::engine::Verdict {
    use crate::engine::Verdict;
    if is_plain(rules, guard, rule) {
        // The common case, kept short: a replacement and a count.
        guard.counters.count_match(rule);
        rules.append_replacement(hay, offset, rule, start..end, &mut guard.state, out);
        return Verdict::Accept;
    }
    match judge(rules, guard, hay, offset, rule, start, end) {
        Judged::Rejected => Verdict::Reject,
        Judged::Blocked => Verdict::Stop,
        Judged::Allowed => {
            out.extend_from_slice(&hay[start..end]);
            Verdict::Accept
        }
        Judged::Replace => {
            rules.append_replacement(hay, offset, rule, start..end, &mut guard.state, out);
            Verdict::Accept
        }
    }
}
