//! Compiled rule sets and their builder.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use regex_automata::meta;
use regex_automata::nfa::thompson;
use regex_automata::util::syntax;
use regex_automata::Input;

use crate::engine::{Program, Sink};
use crate::error::{Error, ErrorKind};
use crate::replacement::{Captures, Compiled, Replacement, State};
use crate::replacer::Replacer;

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

    fn to_regex(&self) -> String {
        if self.literal {
            regex_syntax::escape(&self.source)
        } else {
            self.source.clone()
        }
    }
}

/// What a stream does when its held text exceeds
/// [`Config::max_held`].
///
/// # Example
///
/// ```
/// use stream_replace::{Config, HeldLimit, Rules};
///
/// let rules = Rules::builder()
///     .regex(r"<think>[\s\S]*?</think>", "")
///     .config(Config::new().max_held(8).on_held_limit(HeldLimit::Replace("[cut]".into())))
///     .build()?;
/// let mut r = rules.replacer();
/// let mut out = r.feed("a <think>")?;
/// out += &r.feed("long thoughts")?; // held past the limit: cut
/// out += &r.feed(" and more</think> b")?; // dropped up to the block's end
/// out += &r.flush()?;
/// assert_eq!(out, "a [cut] b");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum HeldLimit {
    /// Fail closed (the default): the feed that went over the limit returns
    /// a [`StreamError`](crate::StreamError), the held text is discarded and
    /// never emitted, and every later call fails until
    /// [`Replacer::reset`](crate::Replacer::reset).
    #[default]
    Fail,
    /// Emit this text in place of everything held, and keep dropping the
    /// text of the pending match (the earliest one still possible) until
    /// it is decided or can no longer match; then go on as usual. The
    /// output then differs from [`Rules::replace_all`], but nothing a rule
    /// covers is released: with `<think>[\s\S]*?</think>` removed and a
    /// 5 MB unclosed `<think>` block, `hello <think>…</think> bye` gives
    /// `hello [cut] bye`, not the block's tail.
    ///
    /// While dropping, the pending match is followed on the slower NFA
    /// (its text is not kept for a replay). A greedy match that could
    /// still grow after a first end keeps the text after that end; if that
    /// passes the limit too, it is dropped as well, up to where the match
    /// can no longer grow (for `[\s\S]*`, the end of the input).
    Replace(String),
}

/// Options for compiling [`Rules`] and running their streams.
///
/// Setters take and return `Config` by value, so they chain.
///
/// # Example
///
/// ```
/// use stream_replace::{Config, Rules};
///
/// let rules = Rules::builder()
///     .literal("secret", "***")
///     .config(Config::new().max_held(1 << 20).size_limit(1 << 20))
///     .build()?;
/// assert_eq!(rules.config().get_max_held(), 1 << 20);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct Config {
    max_held: usize,
    on_held_limit: HeldLimit,
    size_limit: usize,
    cache_capacity: usize,
    fast_paths: bool,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            max_held: 1 << 20,
            on_held_limit: HeldLimit::Fail,
            size_limit: 10 << 20,
            cache_capacity: 2 << 20,
            fast_paths: true,
        }
    }
}

impl Config {
    /// The default configuration: at most 1 MiB held per stream, fail closed
    /// at that limit, a 10 MiB compiled size limit and a 2 MiB lazy DFA cache
    /// per stream.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Config, HeldLimit};
    ///
    /// let config = Config::new();
    /// assert_eq!(config.get_max_held(), 1 << 20);
    /// assert_eq!(config.get_on_held_limit(), &HeldLimit::Fail);
    /// assert_eq!(config.get_size_limit(), 10 << 20);
    /// assert_eq!(config.get_cache_capacity(), 2 << 20);
    /// ```
    pub fn new() -> Config {
        Config::default()
    }

    /// The most bytes a stream may hold back before
    /// [`on_held_limit`](Config::on_held_limit) applies.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Config, Rules};
    ///
    /// let rules = Rules::builder()
    ///     .literal("password", "***")
    ///     .config(Config::new().max_held(4))
    ///     .build()?;
    /// let mut r = rules.replacer();
    /// assert_eq!(r.feed("pass")?, ""); // 4 bytes held: at the limit
    /// assert!(r.feed("wor").is_err()); // 7 bytes held: over it
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn max_held(mut self, bytes: usize) -> Config {
        self.max_held = bytes;
        self
    }

    /// What a stream does when it would hold more than
    /// [`max_held`](Config::max_held) bytes.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Config, HeldLimit, Rules};
    ///
    /// let rules = Rules::builder()
    ///     .literal("password", "***")
    ///     .config(Config::new().max_held(4).on_held_limit(HeldLimit::Replace("[?]".into())))
    ///     .build()?;
    /// let mut r = rules.replacer();
    /// assert_eq!(r.feed("passwor")?, "[?]");
    /// assert_eq!(r.feed("d!")?, "!"); // the rest of the cut match is dropped
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn on_held_limit(mut self, policy: HeldLimit) -> Config {
        self.on_held_limit = policy;
        self
    }

    /// The limit, in bytes, on the size of each compiled pattern and of the
    /// compiled rule set.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Config, ErrorKind, Rules};
    ///
    /// let err = Rules::builder()
    ///     .regex(r"\w{1000}", "x")
    ///     .config(Config::new().size_limit(1 << 10))
    ///     .build()
    ///     .unwrap_err();
    /// assert_eq!(err.kind(), &ErrorKind::TooBig);
    /// ```
    pub fn size_limit(mut self, bytes: usize) -> Config {
        self.size_limit = bytes;
        self
    }

    /// The capacity, in bytes, of each stream's lazy DFA cache. When it
    /// fills, the cache is cleared and the stream replays what it holds on
    /// a slower engine, so results stay exact.
    ///
    /// Besides this cache, a stream memoises the transitions it takes while
    /// at most one match is in progress: at most 64 rows of 4 bytes per
    /// byte class of the rules (about 36 KiB at most for a rule set with
    /// 140 classes), built as text is seen and cleared with the cache.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Config, Rules};
    ///
    /// let rules = Rules::builder()
    ///     .regex(r"\w+@\w+\.com", "[EMAIL]")
    ///     .config(Config::new().cache_capacity(1 << 10))
    ///     .build()?;
    /// let mut r = rules.replacer();
    /// let out = r.feed("mail ann@exa")? + &r.feed("mple.com!")? + &r.flush()?;
    /// assert_eq!(out, "mail [EMAIL]!");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cache_capacity(mut self, bytes: usize) -> Config {
        self.cache_capacity = bytes;
        self
    }

    /// Turns the engine's fast paths off (or on again), for testing only:
    /// every byte then goes through the general thread loop, which must
    /// give the same output (matches may be released one byte later). The
    /// differential tests and the fuzz targets run both ways, so a bug in a
    /// fast path cannot hide behind the general path, nor the other way
    /// round. Not part of the stable API.
    #[doc(hidden)]
    pub fn fast_paths(mut self, yes: bool) -> Config {
        self.fast_paths = yes;
        self
    }

    #[doc(hidden)]
    pub fn get_fast_paths(&self) -> bool {
        self.fast_paths
    }

    /// See [`max_held`](Config::max_held).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Config;
    ///
    /// assert_eq!(Config::new().max_held(64).get_max_held(), 64);
    /// ```
    pub fn get_max_held(&self) -> usize {
        self.max_held
    }

    /// See [`on_held_limit`](Config::on_held_limit).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Config, HeldLimit};
    ///
    /// let config = Config::new().on_held_limit(HeldLimit::Replace("[cut]".into()));
    /// assert_eq!(config.get_on_held_limit(), &HeldLimit::Replace("[cut]".into()));
    /// ```
    pub fn get_on_held_limit(&self) -> &HeldLimit {
        &self.on_held_limit
    }

    /// See [`size_limit`](Config::size_limit).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Config;
    ///
    /// assert_eq!(Config::new().size_limit(1 << 16).get_size_limit(), 1 << 16);
    /// ```
    pub fn get_size_limit(&self) -> usize {
        self.size_limit
    }

    /// See [`cache_capacity`](Config::cache_capacity).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Config;
    ///
    /// assert_eq!(Config::new().cache_capacity(1 << 16).get_cache_capacity(), 1 << 16);
    /// ```
    pub fn get_cache_capacity(&self) -> usize {
        self.cache_capacity
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
    rules: Vec<(Pattern, Replacement)>,
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
        self.rules.push((pattern, replacement));
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
        for (i, (pattern, replacement)) in self.rules.iter().enumerate() {
            let source = pattern.to_regex();
            // Captures are searched anchored at a decided start, so the
            // UTF-8 empty-match filter has nothing to add; it would only
            // reject a match ending before a stray continuation byte, which
            // the streams keep.
            let single = meta::Builder::new()
                .configure(meta_config(&self.config).utf8_empty(false))
                .syntax(syntax::Config::new())
                .build(&source)
                .map_err(|e| Error::from_regex(e).blame(i, pattern.as_str(), None))?;
            replacements.push(replacement.compile(i, pattern.as_str(), single.group_info())?);
            singles.push(single);
            sources.push(source);
        }
        // One automaton over every rule, shared by the streams and
        // `replace_all`. (A `meta` regex over every rule would be quicker
        // on whole inputs, but its lazy DFA's memory grows with the rule
        // count: with 10,000 literals it tried to allocate 27 GB.)
        let program = Program::new(&sources, &self.config).map_err(|e| {
            self.blame_set(e, &sources, |some| {
                Program::new(some, &self.config).is_err()
            })
        })?;
        Ok(Rules {
            inner: Arc::new(Inner {
                patterns: self.rules.iter().map(|(p, _)| p.clone()).collect(),
                singles,
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
        sources: &[String],
        fails: impl Fn(&[String]) -> bool,
    ) -> Error {
        if err.kind() != &ErrorKind::TooBig {
            return self.blame(err, sources, fails);
        }
        // Over the size limit, rules are tried on the engine's NFA alone
        // (built as `Program::new` builds it), a fraction of a whole build.
        let limit = Some(self.config.get_size_limit());
        let nfa_too_big = |some: &[String]| {
            thompson::Compiler::new()
                .configure(
                    thompson::Config::new()
                        .nfa_size_limit(limit)
                        .which_captures(thompson::WhichCaptures::None),
                )
                .build_many(some)
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
    fn blame(&self, err: Error, sources: &[String], fails: impl Fn(&[String]) -> bool) -> Error {
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
        let pattern = self.rules[k].0.as_str();
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
        .nfa_size_limit(Some(config.size_limit))
        .onepass_size_limit(Some(config.size_limit))
        .hybrid_cache_capacity(config.cache_capacity)
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
/// once and make a [`Replacer`] per stream with [`Rules::replacer`].
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
    singles: Vec<meta::Regex>,
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

    /// A fresh stream over these rules.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().literal("cat", "dog").build()?;
    /// let (mut a, mut b) = (rules.replacer(), rules.replacer());
    /// assert_eq!(a.feed("ca")?, "");
    /// assert_eq!(b.feed("cow")?, "cow"); // streams do not share state
    /// assert_eq!(a.feed("t")?, "dog");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn replacer(&self) -> Replacer {
        Replacer::new(self.clone())
    }

    /// A fresh stream over these rules whose
    /// [`Replacement::with_state`] closures taking an `S` start from
    /// `state` instead of `S::default()`.
    ///
    /// Use it to carry a conversation's state from one stream to the next
    /// (take it back with [`Replacer::take_state`]), or to start a stream
    /// from a value that is not the default.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Pattern, Replacement, Rules};
    ///
    /// let rules = Rules::builder()
    ///     .rule(
    ///         Pattern::regex(r"\d{3}-\d{4}"),
    ///         Replacement::with_state(|_, n: &mut u32| {
    ///             *n += 1;
    ///             format!("[PHONE_{n}]")
    ///         }),
    ///     )
    ///     .build()?;
    ///
    /// let mut first = rules.replacer();
    /// assert_eq!(first.feed("call 555-0100 or 555-0199.")?, "call [PHONE_1] or [PHONE_2].");
    /// let seen = first.take_state::<u32>().unwrap_or_default();
    ///
    /// // The next reply of the same conversation goes on numbering.
    /// let mut next = rules.replacer_with(seen);
    /// assert_eq!(next.feed("555-0123!")?, "[PHONE_3]!");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn replacer_with<S: Send + Sync + 'static>(&self, state: S) -> Replacer {
        let mut r = Replacer::new(self.clone());
        r.set_state(state);
        r
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

    /// Replaces every match in the whole of `haystack`: the reference output
    /// every stream reproduces, however its input is split.
    ///
    /// It runs the streams' own engine over the whole input, with no limit
    /// on held bytes: its memory is the input's size plus the output, and
    /// its time is linear in the input, whatever the number of rules.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().literal("ab", "1").literal("abc", "2").regex("b+", "B").build()?;
    /// assert_eq!(rules.replace_all("abc bbb"), "1c B");
    ///
    /// let mut r = rules.replacer();
    /// assert_eq!(r.feed("abc b")? + &r.feed("bb")? + &r.flush()?, "1c B");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn replace_all(&self, haystack: &str) -> String {
        let out = self.replace_all_bytes(haystack.as_bytes());
        // Matches and replacements are valid UTF-8 and sit between
        // character boundaries, so the output is valid UTF-8.
        String::from_utf8(out)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }

    /// Replaces every match in the whole of `haystack`, which need not be
    /// valid UTF-8: patterns match only valid UTF-8, and every other byte is
    /// copied through unchanged.
    ///
    /// On invalid UTF-8 with a rule that can match the empty string, the
    /// output differs from `regex`'s `find_iter` in one corner (see
    /// [`Replacer`]): a match that ends just before a stray continuation byte
    /// is kept.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().literal("ok", "OK").build()?;
    /// assert_eq!(rules.replace_all_bytes(b"ok\xFFok"), b"OK\xFFOK");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn replace_all_bytes(&self, haystack: &[u8]) -> Vec<u8> {
        Replacer::replace_whole(self, haystack)
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
        let re = &self.inner.singles[rule];
        let mut raw = re.create_captures();
        let input = Input::new(haystack)
            .span(span)
            .anchored(regex_automata::Anchored::Yes);
        re.search_captures(&input, &mut raw);
        let caps = Captures::new(haystack, offset, rule, &raw);
        repl.append(Some(&caps), state, out);
    }
}

/// The sink that turns decided text and matches into output.
pub(crate) struct Out<'a> {
    pub(crate) rules: &'a Rules,
    pub(crate) state: &'a mut State,
    pub(crate) out: &'a mut Vec<u8>,
}

impl Sink for Out<'_> {
    fn text(&mut self, bytes: &[u8]) {
        crate::engine::extend_small(self.out, bytes);
    }

    fn matched(&mut self, hay: &[u8], offset: usize, rule: usize, start: usize, end: usize) {
        self.rules
            .append_replacement(hay, offset, rule, start..end, self.state, self.out);
    }
}

/// The sink of `&str` streams: like [`Out`], but appends to a `String`,
/// checking that the text is UTF-8 (it is, unless byte and `&str` feeds
/// were mixed on one stream and left a character cut).
pub(crate) struct StrOut<'a> {
    pub(crate) rules: &'a Rules,
    pub(crate) state: &'a mut State,
    pub(crate) out: &'a mut String,
    /// Where a replacement is built before it is appended.
    pub(crate) scratch: &'a mut Vec<u8>,
}

impl Sink for StrOut<'_> {
    fn text(&mut self, bytes: &[u8]) {
        crate::replacer::push_text(self.out, bytes);
    }

    fn matched(&mut self, hay: &[u8], offset: usize, rule: usize, start: usize, end: usize) {
        self.scratch.clear();
        self.rules
            .append_replacement(hay, offset, rule, start..end, self.state, self.scratch);
        crate::replacer::push_text(self.out, self.scratch);
    }
}

impl fmt::Debug for Rules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rules")
            .field("patterns", &self.inner.patterns)
            .field("replacements", &self.inner.replacements)
            .field("config", &self.inner.config)
            .finish()
    }
}
