//! Compiled rule sets and their builder.

use std::collections::HashSet;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use regex_automata::meta;
use regex_automata::nfa::thompson;
use regex_automata::util::captures::{Captures as RawCaptures, GroupInfo};
use regex_automata::util::primitives::NonMaxUsize;
use regex_automata::util::syntax;
use regex_automata::{Input, PatternID};
use regex_syntax::hir::{Class, Hir, HirKind};

use crate::config::Config;
use crate::engine::{Program, Source, caseless_too_big};
use crate::error::{Error, ErrorKind};
use crate::replacement::{Captures, Compiled, Replacement, State};

/// A rule's pattern: literal text or a regex in the `regex` crate's syntax.
///
/// # Example
///
/// ```
/// use stream_replace::{Pattern, Replacement, Rules};
///
/// let rules = Rules::builder()
///     .rule(Pattern::literal("a.b"), Replacement::literal("X"))
///     .rule(Pattern::regex(r"a.b"), Replacement::literal("Y"))
///     .build()?;
/// assert_eq!(rules.replace_all("a.b acb"), "X Y");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    source: String,
    literal: bool,
}

impl Pattern {
    /// A literal pattern: matches exactly this text.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Pattern, Replacement, Rules};
    ///
    /// let rules = Rules::builder()
    ///     .rule(Pattern::literal("1+1"), Replacement::literal("2"))
    ///     .build()?;
    /// assert_eq!(rules.replace_all("1+1 11"), "2 11");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn literal(text: impl Into<String>) -> Pattern {
        Pattern {
            source: text.into(),
            literal: true,
        }
    }

    /// A regex pattern, in the syntax of the `regex` crate.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Pattern, Replacement, Rules};
    ///
    /// let rules = Rules::builder()
    ///     .rule(Pattern::regex("1+"), Replacement::literal("N"))
    ///     .build()?;
    /// assert_eq!(rules.replace_all("1+1 11"), "N+N N");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn regex(pattern: impl Into<String>) -> Pattern {
        Pattern {
            source: pattern.into(),
            literal: false,
        }
    }

    /// The pattern as it was given.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Pattern;
    ///
    /// assert_eq!(Pattern::regex(r"\d+").as_str(), r"\d+");
    /// // A literal is kept as given, not escaped.
    /// assert_eq!(Pattern::literal("a.b").as_str(), "a.b");
    /// ```
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Whether this is a literal pattern.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Pattern;
    ///
    /// assert!(Pattern::literal("a.b").is_literal());
    /// assert!(!Pattern::regex("a.b").is_literal());
    /// ```
    pub fn is_literal(&self) -> bool {
        self.literal
    }
}

/// The text a regex matches when it is one literal, and whether its ASCII
/// letters match either case: a concatenation of literal text and
/// classes that are exactly an ASCII letter's two cases (what `(?i)` makes
/// of an ASCII letter whose case folds stay in ASCII). A caseless literal
/// must not also hold a letter that matches one case only.
fn literal_of(hir: &Hir) -> Option<(Vec<u8>, bool)> {
    let parts = match hir.kind() {
        HirKind::Concat(parts) => parts.as_slice(),
        _ => std::slice::from_ref(hir),
    };
    let mut bytes = Vec::new();
    let (mut caseless, mut cased) = (false, false);
    for part in parts {
        match part.kind() {
            HirKind::Literal(lit) => {
                cased |= lit.0.iter().any(u8::is_ascii_alphabetic);
                bytes.extend_from_slice(&lit.0);
            }
            HirKind::Class(class) => {
                bytes.push(ascii_case_pair(class)?);
                caseless = true;
            }
            _ => return None,
        }
    }
    if caseless && cased {
        return None;
    }
    Some((bytes, caseless))
}

/// The lower-case letter of a class that is exactly `[Xx]` for an ASCII
/// letter `x`.
fn ascii_case_pair(class: &Class) -> Option<u8> {
    let (a, b) = match class {
        Class::Unicode(c) => match c.ranges() {
            [r, s] if r.start() == r.end() && s.start() == s.end() => {
                (u8::try_from(r.start()).ok()?, u8::try_from(s.start()).ok()?)
            }
            _ => return None,
        },
        Class::Bytes(c) => match c.ranges() {
            [r, s] if r.start() == r.end() && s.start() == s.end() => (r.start(), s.start()),
            _ => return None,
        },
    };
    (a.is_ascii_uppercase() && b == a.to_ascii_lowercase()).then_some(b)
}

/// Whether `hir` holds a class that is exactly an ASCII letter's case
/// folds, as `(?i)` makes of the letter: `[Aa]`, or `[Kk\u{212A}]` and
/// `[Ss\u{17F}]` for the letters that also fold to the Kelvin sign and the
/// long s. A hand-written `[Aa]` counts too: it costs the engine the same.
fn has_case_fold(hir: &Hir) -> bool {
    let mut stack = vec![hir];
    while let Some(h) = stack.pop() {
        match h.kind() {
            HirKind::Class(class) => {
                if is_case_fold(class) {
                    return true;
                }
            }
            HirKind::Repetition(r) => stack.push(&r.sub),
            HirKind::Capture(c) => stack.push(&c.sub),
            HirKind::Concat(parts) | HirKind::Alternation(parts) => stack.extend(parts),
            HirKind::Empty | HirKind::Literal(_) | HirKind::Look(_) => {}
        }
    }
    false
}

/// Whether `class` is exactly an ASCII letter's case folds (see
/// `has_case_fold`).
fn is_case_fold(class: &Class) -> bool {
    if ascii_case_pair(class).is_some() {
        return true;
    }
    let Class::Unicode(c) = class else {
        return false;
    };
    match c.ranges() {
        [a, b, c] if [a, b, c].iter().all(|r| r.start() == r.end()) => matches!(
            [a.start(), b.start(), c.start()],
            ['K', 'k', '\u{212A}'] | ['S', 's', '\u{17F}']
        ),
        _ => false,
    }
}

/// A builder of [`Rules`]: add rules in priority order, then
/// [`build`](RulesBuilder::build).
///
/// # Example
///
/// ```
/// use stream_replace::Rules;
///
/// let rules = Rules::builder()
///     .literal("敏感词", "***")
///     .regex(r"1[3-9]\d{9}", "[PHONE]")
///     .regex(r"<think>[\s\S]*?</think>", "")
///     .regex_with(r"(\d+)", |caps| format!("#{}", caps[1].len()))
///     .literal_with("secret", |m| "*".repeat(m.as_str().len()))
///     .build()?;
/// assert_eq!(
///     rules.replace_all("<think>hm</think>敏感词 13812345678 42 secret"),
///     "*** [PHONE] #2 ******",
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct RulesBuilder {
    rules: Vec<Rule>,
    allow: Vec<String>,
    config: Config,
}

impl RulesBuilder {
    /// An empty builder with the default [`Config`].
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::RulesBuilder;
    ///
    /// let rules = RulesBuilder::new().literal("cat", "dog").build()?;
    /// assert_eq!(rules.replace_all("a cat"), "a dog");
    /// assert!(RulesBuilder::new().build()?.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new() -> RulesBuilder {
        RulesBuilder::default()
    }

    /// Adds a rule.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Pattern, Replacement, Rules};
    ///
    /// // A literal pattern with a template, which no shorthand method offers.
    /// let rules = Rules::builder()
    ///     .rule(Pattern::literal("a+b"), Replacement::template("[$0]"))
    ///     .build()?;
    /// assert_eq!(rules.replace_all("a+b ab"), "[a+b] ab");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn rule(&mut self, pattern: Pattern, replacement: Replacement) -> &mut RulesBuilder {
        self.add(Rule::new(pattern, replacement))
    }

    /// Adds a rule with its guard metadata (id, action, validator).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Rule, Rules};
    ///
    /// let rules = Rules::builder()
    ///     .add(Rule::regex(r"\d+", "N").id("number"))
    ///     .add(Rule::literal("rm -rf", "").id("shell").block("destructive command"))
    ///     .build()?;
    /// assert_eq!(rules.id(1), "shell");
    /// assert_eq!(rules.replace_all("a 12"), "a N");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn add(&mut self, rule: Rule) -> &mut RulesBuilder {
        self.rules.push(rule);
        self
    }

    /// Allowlists a value: a match whose text is exactly `value` passes
    /// through unchanged, in every stream of these rules, and scanning goes
    /// on after it (no rule matches a part of it). See also
    /// [`Replacer::allow`](crate::Replacer::allow) for one stream's own
    /// values, and the [exact semantics](crate::guard#what-a-match-means-exactly).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder()
    ///     .regex(r"[\w.]+@[\w.]+\.\w+", "[EMAIL]")
    ///     .allow("support@example.com")
    ///     .build()?;
    /// assert_eq!(
    ///     rules.replace_all("support@example.com, ann@x.org"),
    ///     "support@example.com, [EMAIL]",
    /// );
    /// // Not the suffix of an allowlisted address either.
    /// assert_eq!(rules.replace_all("xsupport@example.com"), "[EMAIL]");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn allow(&mut self, value: impl Into<String>) -> &mut RulesBuilder {
        self.allow.push(value.into());
        self
    }

    /// Adds a literal pattern replaced by literal text (no `$` expansion).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().literal("a.b", "$0").build()?;
    /// assert_eq!(rules.replace_all("a.b axb"), "$0 axb");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn literal(&mut self, pattern: &str, replacement: impl Into<String>) -> &mut RulesBuilder {
        self.rule(Pattern::literal(pattern), Replacement::literal(replacement))
    }

    /// Adds a literal pattern whose replacement a closure computes.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder()
    ///     .literal_with("secret", |c| "*".repeat(c.as_str().len()))
    ///     .build()?;
    /// assert_eq!(rules.replace_all("my secret"), "my ******");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn literal_with<F>(&mut self, pattern: &str, f: F) -> &mut RulesBuilder
    where
        F: Fn(&Captures<'_>) -> String + Send + Sync + 'static,
    {
        self.rule(Pattern::literal(pattern), Replacement::with(f))
    }

    /// Adds a regex replaced by a template (`$1`, `${name}`, `$$`; see
    /// [`Replacement::template`]).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().regex(r"(\w+)@(\w+)", "$2/$1").build()?;
    /// assert_eq!(rules.replace_all("to ann@home"), "to home/ann");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn regex(&mut self, pattern: &str, template: impl Into<String>) -> &mut RulesBuilder {
        self.rule(Pattern::regex(pattern), Replacement::template(template))
    }

    /// Adds a regex whose replacement a closure computes from the captures.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder()
    ///     .regex_with("[0-9]+", |c| (c.as_str().parse::<u64>().unwrap() * 2).to_string())
    ///     .build()?;
    /// assert_eq!(rules.replace_all("3 and 21"), "6 and 42");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn regex_with<F>(&mut self, pattern: &str, f: F) -> &mut RulesBuilder
    where
        F: Fn(&Captures<'_>) -> String + Send + Sync + 'static,
    {
        self.rule(Pattern::regex(pattern), Replacement::with(f))
    }

    /// Sets the configuration.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Config, Rules};
    ///
    /// let mut builder = Rules::builder();
    /// builder.literal("x", "y").config(Config::new().max_held(256));
    /// let rules = builder.build()?;
    /// assert_eq!(rules.config().get_max_held(), 256);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn config(&mut self, config: Config) -> &mut RulesBuilder {
        self.config = config;
        self
    }

    /// Compiles the rules.
    ///
    /// # Errors
    ///
    /// An [`Error`] naming the rule when a pattern is not valid `regex`
    /// syntax, when a template names a group its pattern lacks, or when a
    /// pattern or the whole set is bigger than
    /// [`Config::size_limit`].
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{ErrorKind, Rules};
    ///
    /// let rules = Rules::builder().regex(r"(?<y>\d{4})", "${y}!").build()?;
    /// assert_eq!(rules.replace_all("in 2024"), "in 2024!");
    ///
    /// let err = Rules::builder().regex(r"(?<y>\d{4})", "${year}").build().unwrap_err();
    /// assert_eq!(err.kind(), &ErrorKind::UnknownGroup);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn build(&self) -> Result<Rules, Error> {
        let mut sources = Vec::with_capacity(self.rules.len());
        let mut singles = Vec::with_capacity(self.rules.len());
        let mut replacements = Vec::with_capacity(self.rules.len());
        // A literal's only group is the whole match.
        let literal_info = GroupInfo::new([[None::<&str>]])
            .map_err(|e| Error::new(ErrorKind::Build, None, None, e.to_string()))?;
        let mut sure_caseless = 0;
        for (
            i,
            Rule {
                pattern,
                replacement,
                ..
            },
        ) in self.rules.iter().enumerate()
        {
            if pattern.literal {
                // Nothing to parse: a literal needs no regex of its own.
                replacements.push(replacement.compile(i, pattern.as_str(), &literal_info)?);
                singles.push(None);
                sources.push(Source::Literal(&pattern.source));
                continue;
            }
            let blame = |e: Error| e.blame(i, pattern.as_str(), None);
            let hir = syntax::parse_with(&pattern.source, &syntax::Config::new())
                .map_err(|e| blame(Error::from_syntax(e)))?;
            let literal = literal_of(&hir);
            let caseless = has_case_fold(&hir);
            // A caseless rule that is no literal goes to the regex engine
            // whatever the others are: past the limit, fail before building
            // each rule's own regex, which alone takes seconds for 20,000.
            if caseless && (literal.is_none() || !self.config.get_literal_matcher()) {
                sure_caseless += 1;
                if sure_caseless > self.config.get_caseless_regex_limit() {
                    let limit = self.config.get_caseless_regex_limit();
                    return Err(caseless_too_big(i, pattern.as_str(), None, limit));
                }
            }
            // Captures are searched anchored at a decided start, so the
            // UTF-8 empty-match filter has nothing to add; it would only
            // reject a match ending before a stray continuation byte, which
            // the streams keep.
            let single = meta::Builder::new()
                .configure(meta_config(&self.config).utf8_empty(false))
                .build_from_hir(&hir)
                .map_err(|e| blame(Error::from_regex(e)))?;
            replacements.push(replacement.compile(i, pattern.as_str(), single.group_info())?);
            singles.push(Some(single));
            sources.push(Source::Regex {
                source: &pattern.source,
                literal,
                empty: hir.properties().minimum_len().is_none_or(|n| n == 0),
                caseless,
            });
        }
        // The engine's automata, shared by the streams and `replace_all`.
        // (A `meta` regex over every rule would be quicker on whole inputs,
        // but its lazy DFA's memory grows with the rule count: with 10,000
        // literals it tried to allocate 27 GB.)
        let program = Program::new(&sources, &self.config).map_err(|e| {
            if e.rule().is_some() {
                return e;
            }
            self.blame_set(e, &sources, |some| {
                Program::new(some, &self.config).is_err()
            })
        })?;
        let meta = Meta {
            ids: (self.rules.iter().enumerate())
                .map(|(i, r)| r.id.clone().unwrap_or_else(|| i.to_string()).into())
                .collect(),
            actions: self.rules.iter().map(|r| r.action.clone()).collect(),
            validators: self.rules.iter().map(|r| r.validator.clone()).collect(),
            plain: (self.rules.iter())
                .map(|r| r.validator.is_none() && r.action == Action::Replace)
                .collect(),
            allow: (self.allow.iter()).map(|v| v.as_bytes().into()).collect(),
        };
        Ok(Rules {
            inner: Arc::new(Inner {
                patterns: self.rules.iter().map(|r| r.pattern.clone()).collect(),
                meta,
                singles,
                literal_info,
                replacements,
                program,
                config: self.config.clone(),
            }),
        })
    }

    /// Names the rule to blame for `err`, an error building all of
    /// `sources` together, where each rule built alone; `fails` repeats the
    /// build that failed.
    fn blame_set(
        &self,
        err: Error,
        sources: &[Source<'_>],
        fails: impl Fn(&[Source<'_>]) -> bool,
    ) -> Error {
        if err.kind() != &ErrorKind::TooBig {
            return self.blame(err, sources, fails);
        }
        // Over the size limit, rules are tried on the engine's NFA alone
        // (built as `Program::new` builds it), a fraction of a whole build.
        let limit = Some(self.config.get_size_limit());
        let on_ac = self.config.get_literal_matcher();
        let nfa_too_big = |some: &[Source<'_>]| {
            // The literals the Aho-Corasick matcher takes are not in it.
            let regexes: Vec<_> = some
                .iter()
                .filter(|s| !(on_ac && s.is_literal()))
                .map(|s| s.regex())
                .collect();
            thompson::Compiler::new()
                .configure(
                    thompson::Config::new()
                        .nfa_size_limit(limit)
                        .which_captures(thompson::WhichCaptures::None),
                )
                .build_many(&regexes)
                .is_err()
        };
        if nfa_too_big(sources) {
            self.blame(err, sources, nfa_too_big)
        } else {
            err
        }
    }

    /// Names the rule to blame for `err`, an error building all of
    /// `sources` together, where each rule built alone: the first rule `k`
    /// such that rules `0..=k` fail to build together (by `fails`) while
    /// rules `0..k` build. Only on the error path: about `log2(n)` builds
    /// of prefixes, and one of rule `k` alone.
    fn blame(
        &self,
        err: Error,
        sources: &[Source<'_>],
        fails: impl Fn(&[Source<'_>]) -> bool,
    ) -> Error {
        if sources.is_empty() {
            return err;
        }
        // Invariant: `sources[..lo]` builds and `sources[..hi]` fails.
        let (mut lo, mut hi) = (0, sources.len());
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if fails(&sources[..mid]) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        let k = hi - 1;
        let pattern = self.rules[k].pattern.as_str();
        if k == 0 || err.kind() != &ErrorKind::TooBig || fails(&sources[k..hi]) {
            return err.blame(k, pattern, None);
        }
        let message = format!(
            "rules 0 to {k} together exceed the size limit of {} bytes, though rules 0 to {} \
             fit and rule {k} fits alone; raise the limit with Config::size_limit",
            self.config.get_size_limit(),
            k - 1,
        );
        err.blame(k, pattern, Some(message))
    }
}

fn meta_config(config: &Config) -> meta::Config {
    meta::Config::new()
        .nfa_size_limit(Some(config.get_size_limit()))
        .onepass_size_limit(Some(config.get_size_limit()))
        .hybrid_cache_capacity(config.get_cache_capacity())
}

/// A compiled, immutable set of rules.
///
/// Rules are tried in the order they were added: at each position the match
/// that starts earliest wins, and among matches starting at the same place
/// the earlier rule wins, with each regex's own leftmost-first preference
/// (exactly as the alternation `(r1)|(r2)|…` in `regex`). Matches do not
/// overlap and replacements are never scanned again.
///
/// `Rules` is `Send + Sync` and cheap to clone (an `Arc` inside): build it
/// once and make a [`Replacer`](crate::Replacer) per stream with
/// [`Rules::replacer`].
///
/// # Example
///
/// ```
/// use stream_replace::Rules;
///
/// let rules = Rules::builder().regex(r"\d+", "N").literal("12", "twelve").build()?;
/// // The earlier rule wins a tie; the greedy `\d+` takes all three digits.
/// assert_eq!(rules.replace_all("a 123 b"), "a N b");
///
/// let mut r = rules.replacer();
/// let mut out = r.feed("a 1")?;
/// assert_eq!(out, "a ");          // "1" may grow into a longer number
/// out += &r.feed("23 b")?;
/// out += &r.flush()?;
/// assert_eq!(out, rules.replace_all("a 123 b"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Rules {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    patterns: Vec<Pattern>,
    pub(crate) meta: Meta,
    /// Each regex rule's own regex, for its captures (none for a literal,
    /// whose only group is the match).
    singles: Vec<Option<meta::Regex>>,
    /// The groups of a literal rule.
    literal_info: GroupInfo,
    pub(crate) replacements: Vec<Compiled>,
    pub(crate) program: Program,
    pub(crate) config: Config,
}

impl Rules {
    /// A new [`RulesBuilder`].
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().literal("cat", "dog").build()?;
    /// assert_eq!(rules.replace_all("cat"), "dog");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn builder() -> RulesBuilder {
        RulesBuilder::new()
    }

    /// The number of rules.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().literal("a", "b").regex("c+", "d").build()?;
    /// assert_eq!(rules.len(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn len(&self) -> usize {
        self.inner.patterns.len()
    }

    /// Whether there are no rules (every stream then passes its input
    /// through).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().build()?;
    /// assert!(rules.is_empty());
    /// assert_eq!(rules.replace_all("as is"), "as is");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.inner.patterns.is_empty()
    }

    /// The pattern of rule `i`.
    ///
    /// # Panics
    ///
    /// When `i >= self.len()`.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().literal("a.b", "x").regex(r"\d+", "n").build()?;
    /// assert!(rules.pattern(0).is_literal());
    /// assert_eq!(rules.pattern(1).as_str(), r"\d+");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn pattern(&self, i: usize) -> &Pattern {
        &self.inner.patterns[i]
    }

    /// The id of rule `i`: the one given with [`Rule::id`], or its index.
    ///
    /// # Panics
    ///
    /// When `i >= self.len()`.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Rule, Rules};
    ///
    /// let rules = Rules::builder().literal("a", "b").add(Rule::literal("c", "d").id("c")).build()?;
    /// assert_eq!((rules.id(0), rules.id(1)), ("0", "c"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn id(&self, i: usize) -> &str {
        &self.inner.meta.ids[i]
    }

    /// The action of rule `i`.
    ///
    /// # Panics
    ///
    /// When `i >= self.len()`.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Action, Rule, Rules};
    ///
    /// let rules = Rules::builder().literal("a", "b").add(Rule::literal("c", "").block("no c")).build()?;
    /// assert_eq!(rules.action(0), &Action::Replace);
    /// assert_eq!(rules.action(1), &Action::Block("no c".into()));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn action(&self, i: usize) -> &Action {
        &self.inner.meta.actions[i]
    }

    /// The configuration the rules were built with.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{HeldLimit, Rules};
    ///
    /// let rules = Rules::builder().literal("a", "b").build()?;
    /// assert_eq!(rules.config().get_on_held_limit(), &HeldLimit::Fail);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// The bytes of the dense DFA that every stream of these rules shares,
    /// or `None` when the streams build their DFA lazily (see
    /// [`DfaKind`](crate::DfaKind)) or step none (every rule is on the
    /// literal matcher, see [`Config::literal_matcher`]).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Config, DfaKind, Rules};
    ///
    /// let rules = Rules::builder().regex(r"se+cret", "***").build()?;
    /// assert!(rules.dense_dfa_size().is_some());
    /// let lazy = Rules::builder()
    ///     .regex(r"se+cret", "***")
    ///     .config(Config::new().dfa(DfaKind::Lazy))
    ///     .build()?;
    /// assert_eq!(lazy.dense_dfa_size(), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn dense_dfa_size(&self) -> Option<usize> {
        self.inner.program.dense_size()
    }

    /// Appends rule `rule`'s replacement of the decided match
    /// `haystack[span]` to `out`. `offset` is the stream offset of
    /// `haystack[0]`. Look-around in the rule sees the bytes of `haystack`
    /// around the span, so `haystack` must reach one character past `end`
    /// unless `end` is the end of the input. `state` is the stream's.
    pub(crate) fn append_replacement(
        &self,
        haystack: &[u8],
        offset: usize,
        rule: usize,
        span: Range<usize>,
        state: &mut State,
        out: &mut Vec<u8>,
    ) {
        let repl = &self.inner.replacements[rule];
        if !repl.needs_captures() {
            repl.append(None, state, out);
            return;
        }
        let raw = match &self.inner.singles[rule] {
            Some(re) => {
                let mut raw = re.create_captures();
                let input = Input::new(haystack)
                    .span(span)
                    .anchored(regex_automata::Anchored::Yes);
                re.search_captures(&input, &mut raw);
                raw
            }
            None => {
                let mut raw = RawCaptures::all(self.inner.literal_info.clone());
                raw.set_pattern(Some(PatternID::ZERO));
                let slots = raw.slots_mut();
                slots[0] = NonMaxUsize::new(span.start);
                slots[1] = NonMaxUsize::new(span.end);
                raw
            }
        };
        let caps = Captures::new(haystack, offset, rule, &raw);
        repl.append(Some(&caps), state, out);
    }
}

impl fmt::Debug for Rules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rules")
            .field("patterns", &self.inner.patterns)
            .field("replacements", &self.inner.replacements)
            .field("meta", &self.inner.meta)
            .field("config", &self.inner.config)
            .finish()
    }
}

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

    /// A regex replaced by `mask`, literal text: no `$` expansion, so a
    /// mask such as `"$5 fee"` comes out as written. [`Rule::regex`] takes
    /// a template (like [`RulesBuilder::regex`](crate::RulesBuilder::regex)
    /// and `regex`'s `replace_all`), where `$` must be written `$$`.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Rule, Rules};
    ///
    /// let rules = Rules::builder().add(Rule::regex_mask(r"(\d+) USD", "$1")).build()?;
    /// assert_eq!(rules.replace_all("pay 12 USD"), "pay $1");
    /// let templated = Rules::builder().add(Rule::regex(r"(\d+) USD", "$1")).build()?;
    /// assert_eq!(templated.replace_all("pay 12 USD"), "pay 12");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn regex_mask(pattern: &str, mask: impl Into<String>) -> Rule {
        Rule::new(Pattern::regex(pattern), Replacement::literal(mask))
    }

    /// A rule that only counts: each match passes through unchanged, and is
    /// counted in the stream's [`Counters`](crate::Counters) (under the rule's
    /// [`id`](Rule::id)) and reported as a [`Trigger`](crate::Trigger) when triggers are
    /// recorded. Scanning goes on after each match, as after any other.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Pattern, Rule, Rules};
    ///
    /// let rules = Rules::builder().add(Rule::count(Pattern::regex(r"\bTODO\b")).id("todo")).build()?;
    /// let mut r = rules.replacer();
    /// let out = r.feed("TODO: a, TO")? + &r.feed("DO b")? + &r.flush()?;
    /// assert_eq!(out, "TODO: a, TODO b");
    /// assert_eq!(r.counters().matches("todo"), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn count(pattern: Pattern) -> Rule {
        Rule::new(pattern, Replacement::template("$0"))
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
