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
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use crate::replacement::{Replacement, State};
use crate::rules::{Pattern, Rules};

/// A check on a decided match's text: `false` rejects the match.
pub(crate) type Validator = Arc<dyn Fn(&str) -> bool + Send + Sync + 'static>;

/// What a rule does with a match.
///
/// # Example
///
/// ```
/// use stream_replace::{Action, Rule};
///
/// assert_eq!(Rule::literal("x", "y").get_action(), &Action::Replace);
/// assert_eq!(Rule::literal("x", "y").block("no x").get_action(), &Action::Block("no x".into()));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Action {
    /// Put the rule's replacement in place of the match.
    Replace,
    /// Stop the stream before the match, with this reason: the match and
    /// everything after it are never released.
    Block(String),
}

/// One rule with its guard metadata: a pattern, a replacement, an id, an
/// action and an optional validator. Add it with
/// [`RulesBuilder::add`](crate::RulesBuilder::add).
///
/// # Example
///
/// ```
/// use stream_replace::{Rule, Rules};
///
/// let even = Rule::regex(r"\b\d+\b", "[EVEN]")
///     .id("even")
///     .validator(|text| text.parse::<u64>().is_ok_and(|n| n % 2 == 0));
/// let rules = Rules::builder().add(even).build()?;
/// assert_eq!(rules.replace_all("1 2 3 4"), "1 [EVEN] 3 [EVEN]");
/// assert_eq!(rules.id(0), "even");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Rule {
    pub(crate) pattern: Pattern,
    pub(crate) replacement: Replacement,
    pub(crate) id: Option<String>,
    pub(crate) action: Action,
    pub(crate) validator: Option<Validator>,
}

impl Rule {
    /// A rule: `pattern` replaced by `replacement`, with no id (its index
    /// stands for it), no validator, and [`Action::Replace`].
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Pattern, Replacement, Rule, Rules};
    ///
    /// let rule = Rule::new(Pattern::literal("a+b"), Replacement::template("[$0]"));
    /// let rules = Rules::builder().add(rule).build()?;
    /// assert_eq!(rules.replace_all("a+b"), "[a+b]");
    /// assert_eq!(rules.id(0), "0");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(pattern: Pattern, replacement: Replacement) -> Rule {
        Rule {
            pattern,
            replacement,
            id: None,
            action: Action::Replace,
            validator: None,
        }
    }

    /// A literal pattern replaced by literal text.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Rule, Rules};
    ///
    /// let rules = Rules::builder().add(Rule::literal("a.b", "X")).build()?;
    /// assert_eq!(rules.replace_all("a.b axb"), "X axb");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn literal(pattern: &str, replacement: impl Into<String>) -> Rule {
        Rule::new(Pattern::literal(pattern), Replacement::literal(replacement))
    }

    /// A regex replaced by a template (`$1`, `${name}`, `$$`).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Rule, Rules};
    ///
    /// let rules = Rules::builder().add(Rule::regex(r"(\d+)", "#$1")).build()?;
    /// assert_eq!(rules.replace_all("a 12"), "a #12");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn regex(pattern: &str, template: impl Into<String>) -> Rule {
        Rule::new(Pattern::regex(pattern), Replacement::template(template))
    }

    /// Names the rule in reports, events and errors (by default, its index
    /// in the rule set).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Rule, Rules};
    ///
    /// let rules = Rules::builder().add(Rule::literal("x", "y").id("ex")).build()?;
    /// assert_eq!(rules.id(0), "ex");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn id(mut self, id: impl Into<String>) -> Rule {
        self.id = Some(id.into());
        self
    }

    /// Makes the rule block the stream, with `reason` (see
    /// [`Action::Block`]). The replacement is then used only where blocks
    /// are turned off (see [`Rule::action`]).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Rule, Rules};
    ///
    /// let rules = Rules::builder().add(Rule::literal("BEGIN KEY", "").block("private key")).build()?;
    /// let mut r = rules.replacer();
    /// let err = r.feed("ok. BEGIN KEY abc").unwrap_err();
    /// assert_eq!(err.released(), b"ok. ");
    /// assert_eq!(err.block().unwrap().reason(), "private key");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn block(self, reason: impl Into<String>) -> Rule {
        self.action(Action::Block(reason.into()))
    }

    /// Sets the rule's action ([`Action::Replace`] turns a block off).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Action, Rule, Rules};
    ///
    /// let rule = Rule::literal("secret", "[X]").block("secret").action(Action::Replace);
    /// let rules = Rules::builder().add(rule).build()?;
    /// assert_eq!(rules.replace_all("a secret"), "a [X]");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn action(mut self, action: Action) -> Rule {
        self.action = action;
        self
    }

    /// Adds a check on the matched text: a match it rejects is not a match
    /// (see the [exact semantics](crate::guard#what-a-match-means-exactly)).
    ///
    /// The check runs once per decided candidate, in stream order; it must
    /// be a function of the text alone for streams to equal the whole-input
    /// reference.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{validate, Rule, Rules};
    ///
    /// let card = Rule::regex(r"\b\d{4}(?: ?\d{4}){3}\b", "[CARD]").validator(validate::luhn);
    /// let rules = Rules::builder().add(card).build()?;
    /// assert_eq!(rules.replace_all("4111 1111 1111 1111, 4111 1111 1111 1112"), "[CARD], 4111 1111 1111 1112");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn validator<F>(mut self, f: F) -> Rule
    where
        F: Fn(&str) -> bool + Send + Sync + 'static,
    {
        self.validator = Some(Arc::new(f));
        self
    }

    /// The rule's action.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Action, Rule};
    ///
    /// assert_eq!(Rule::literal("a", "b").get_action(), &Action::Replace);
    /// ```
    pub fn get_action(&self) -> &Action {
        &self.action
    }
}

impl fmt::Debug for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rule")
            .field("pattern", &self.pattern)
            .field("replacement", &self.replacement)
            .field("id", &self.id)
            .field("action", &self.action)
            .field("validator", &self.validator.as_ref().map(|_| ".."))
            .finish()
    }
}

/// The guard metadata of a built rule set, per rule.
#[derive(Default)]
pub(crate) struct Meta {
    pub(crate) ids: Arc<[Arc<str>]>,
    pub(crate) actions: Vec<Action>,
    pub(crate) validators: Vec<Option<Validator>>,
    pub(crate) allow: HashSet<Box<[u8]>>,
    /// Per rule: no validator and [`Action::Replace`], so that with no
    /// allowlist and no trigger recording its match only needs counting.
    pub(crate) plain: Vec<bool>,
}

impl fmt::Debug for Meta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Meta")
            .field("ids", &self.ids)
            .field("actions", &self.actions)
            .field("allow", &self.allow.len())
            .finish_non_exhaustive()
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
    rule: usize,
    id: Arc<str>,
    reason: Arc<str>,
    span: Range<usize>,
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
    state: &mut State,
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
        rules.append_replacement(hay, offset, rule, start..end, state, out);
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
            rules.append_replacement(hay, offset, rule, start..end, state, out);
            Verdict::Accept
        }
    }
}

/// One piece of a stream's output, for UIs and audit logs: see [`Events`].
///
/// # Example
///
/// ```
/// use stream_replace::{Events, Rules};
///
/// let rules = Rules::builder().regex(r"\d+", "N").build()?;
/// let mut events = Events::new(rules.replacer());
/// let e = events.feed("a 1")?.unwrap();
/// assert_eq!((e.index(), e.text(), e.is_redacted(), e.is_final()), (1, "a ", false, false));
/// let e = events.feed("2 b")?.unwrap();
/// assert_eq!((e.index(), e.text(), e.is_redacted()), (2, "N b", true));
/// assert_eq!(e.triggers()[0].span(), 2..4);
/// let last = events.finish()?.unwrap();
/// assert!(last.is_final() && last.text().is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    index: u64,
    text: String,
    triggers: Vec<Trigger>,
    is_final: bool,
    block: Option<Block>,
}

impl Event {
    /// The piece's number in its stream: 1 for the first, then one more for
    /// each, with no gaps.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Events, Rules};
    ///
    /// let rules = Rules::builder().literal("a", "b").build()?;
    /// let mut events = Events::new(rules.replacer());
    /// assert_eq!(events.feed("xyz")?.unwrap().index(), 1);
    /// assert_eq!(events.finish()?.unwrap().index(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn index(&self) -> u64 {
        self.index
    }

    /// The text of the piece (what a plain stream releases at this point).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Events, Rules};
    ///
    /// let rules = Rules::builder().literal("a", "b").build()?;
    /// let mut events = Events::new(rules.replacer());
    /// assert_eq!(events.feed("cat")?.unwrap().text(), "cbt");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether the piece holds a replacement (of a match a rule replaced).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Events, Rules};
    ///
    /// let rules = Rules::builder().literal("a", "b").build()?;
    /// let mut events = Events::new(rules.replacer());
    /// assert!(events.feed("cat")?.unwrap().is_redacted());
    /// assert!(!events.feed("dog")?.unwrap().is_redacted());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_redacted(&self) -> bool {
        self.triggers.iter().any(|t| t.action == Action::Replace)
    }

    /// The matches rules acted on in this piece (a block's last), with
    /// spans in the stream's input.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Events, Rules};
    ///
    /// let rules = Rules::builder().literal("a", "b").build()?;
    /// let mut events = Events::new(rules.replacer());
    /// assert_eq!(events.feed("aa")?.unwrap().triggers().len(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn triggers(&self) -> &[Trigger] {
        &self.triggers
    }

    /// Whether this is the stream's last piece (its end, or its block).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Events, Rules};
    ///
    /// let rules = Rules::builder().literal("a", "b").build()?;
    /// let mut events = Events::new(rules.replacer());
    /// assert!(!events.feed("a")?.unwrap().is_final());
    /// assert!(events.finish()?.unwrap().is_final());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_final(&self) -> bool {
        self.is_final
    }

    /// The block that ended the stream, on its final piece.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Events, Rule, Rules};
    ///
    /// let rules = Rules::builder().add(Rule::literal("x", "").id("ex").block("no x")).build()?;
    /// let mut events = Events::new(rules.replacer());
    /// let e = events.feed("ab x cd")?.unwrap();
    /// assert_eq!((e.text(), e.is_final()), ("ab ", true));
    /// assert_eq!(e.block().unwrap().id(), "ex");
    /// assert!(events.feed("more")?.is_none() && events.finish()?.is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn block(&self) -> Option<&Block> {
        self.block.as_ref()
    }
}

/// A stream seen as numbered [`Event`]s: each call that releases text (or
/// ends the stream) gives one event, with the triggers decided in it.
///
/// The events' joined text equals the plain stream's output, and each
/// stream has exactly one final event: [`finish`](Events::finish)'s, or the
/// block's. A block ends the stream as an event, not an error: after it,
/// [`feed`](Events::feed) and [`finish`](Events::finish) give nothing until
/// [`reset`](Events::reset). Errors are the other failures of a
/// [`Replacer`](crate::Replacer) (a held limit, a poisoned stream); after
/// one, call [`reset`](Events::reset).
///
/// # Example
///
/// ```
/// use stream_replace::{Events, Rule, Rules};
///
/// let rules = Rules::builder()
///     .add(Rule::regex(r"\w+@\w+\.\w+", "[EMAIL]").id("email"))
///     .build()?;
/// let mut events = Events::new(rules.replacer());
/// let mut all = Vec::new();
/// for chunk in ["Hi ann", "@x.org", ", bye"] {
///     all.extend(events.feed(chunk)?);
/// }
/// all.extend(events.finish()?);
/// let text: String = all.iter().map(|e| e.text()).collect();
/// assert_eq!(text, "Hi [EMAIL], bye");
/// let indexes: Vec<u64> = all.iter().map(|e| e.index()).collect();
/// assert_eq!(indexes, [1, 2, 3]);
/// assert_eq!(all.iter().filter(|e| e.is_redacted()).count(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Events {
    replacer: crate::Replacer,
    next: u64,
    ended: bool,
}

impl Events {
    /// Events over `replacer`'s stream (it records triggers from now on,
    /// without their values).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Events, Rules};
    ///
    /// let rules = Rules::builder().literal("a", "b").build()?;
    /// let events = Events::new(rules.replacer());
    /// assert_eq!(events.replacer().held(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(mut replacer: crate::Replacer) -> Events {
        replacer.record_triggers(true, false);
        Events {
            replacer,
            next: 1,
            ended: false,
        }
    }

    /// The underlying stream.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Events, Rules};
    ///
    /// let rules = Rules::builder().literal("hello", "bye").build()?;
    /// let mut events = Events::new(rules.replacer());
    /// assert!(events.feed("hel")?.is_none());
    /// assert_eq!(events.replacer().held(), 3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn replacer(&self) -> &crate::Replacer {
        &self.replacer
    }

    fn event(&mut self, text: String, is_final: bool, block: Option<Block>) -> Option<Event> {
        let triggers = self.replacer.take_triggers();
        if text.is_empty() && triggers.is_empty() && !is_final {
            return None;
        }
        let index = self.next;
        self.next += 1;
        if is_final {
            self.ended = true;
        }
        Some(Event {
            index,
            text,
            triggers,
            is_final,
            block,
        })
    }

    fn fail(&mut self, e: crate::StreamError) -> Result<Option<Event>, crate::StreamError> {
        match e.block() {
            Some(block) => {
                let block = block.clone();
                // The block is reported here, as the final event.
                self.replacer.reset();
                let text = String::from_utf8_lossy(e.released()).into_owned();
                Ok(self.event(text, true, Some(block)))
            }
            None => Err(e),
        }
    }

    /// Feeds a chunk: the event of the text it releases, if any (none when
    /// it releases nothing and decides nothing, or after the final event).
    ///
    /// # Errors
    ///
    /// As [`Replacer::feed`](crate::Replacer::feed), except for a block,
    /// which is a final event.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Events, Rules};
    ///
    /// let rules = Rules::builder().literal("hello", "bye").build()?;
    /// let mut events = Events::new(rules.replacer());
    /// assert!(events.feed("hel")?.is_none());
    /// assert_eq!(events.feed("lo!")?.unwrap().text(), "bye!");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn feed(&mut self, chunk: &str) -> Result<Option<Event>, crate::StreamError> {
        if self.ended {
            return Ok(None);
        }
        match self.replacer.feed(chunk) {
            Ok(text) => Ok(self.event(text, false, None)),
            Err(e) => self.fail(e),
        }
    }

    /// Ends the stream: its final event, or none when a block already
    /// ended it. The next [`feed`](Events::feed) after a
    /// [`reset`](Events::reset) starts a new stream, numbered from 1.
    ///
    /// # Errors
    ///
    /// As [`Replacer::flush`](crate::Replacer::flush), except for a block,
    /// which is a final event.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Events, Rules};
    ///
    /// let rules = Rules::builder().regex(r"\d+", "N").build()?;
    /// let mut events = Events::new(rules.replacer());
    /// assert!(events.feed("12")?.is_none());
    /// let last = events.finish()?.unwrap();
    /// assert_eq!((last.index(), last.text(), last.is_final()), (1, "N", true));
    /// assert!(events.finish()?.is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn finish(&mut self) -> Result<Option<Event>, crate::StreamError> {
        if self.ended {
            return Ok(None);
        }
        match self.replacer.flush() {
            Ok(text) => Ok(self.event(text, true, None)),
            Err(e) => self.fail(e),
        }
    }

    /// Starts a new stream, numbered from 1 (dropping what is held).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Events, Rules};
    ///
    /// let rules = Rules::builder().literal("a", "b").build()?;
    /// let mut events = Events::new(rules.replacer());
    /// events.feed("x")?;
    /// events.finish()?;
    /// events.reset();
    /// assert_eq!(events.feed("a")?.unwrap().index(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reset(&mut self) {
        self.replacer.reset();
        self.replacer.take_triggers();
        self.next = 1;
        self.ended = false;
    }
}
