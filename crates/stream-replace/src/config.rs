//! How a rule set is built and how its streams behave: [`Config`], the
//! automaton the streams step, [`DfaKind`], and the policy at the
//! held-text limit, [`HeldLimit`].

/// Which DFA the streams of a rule set step.
///
/// Both are the same automaton over every rule; they differ in when it is
/// built and where its memory lives.
///
/// * A **dense** DFA is built whole by
///   [`RulesBuilder::build`](crate::RulesBuilder::build) and shared by every
///   stream: a stream holds only a few state ids and positions, and a fresh
///   stream runs as fast as a reused one. It costs build time and memory
///   once per rule set, which grow with the rules (the eight PII rules of
///   this crate's benches: 0.2 MB and about 3 ms with Unicode `\b`, 6.6 MB
///   and about 75 ms with ASCII `\b`, whose Unicode `\w` is then
///   determinized in full).
/// * A **lazy** DFA is built as text is seen, into caches of
///   [`Config::cache_capacity`] bytes. Streams borrow a cache from a pool
///   for the duration of each call (one per thread that feeds streams, in
///   the common case), so a stream owns none. A cache starts cold and is
///   cleared when full; a stream that finds its cache changed since its
///   last call works its states out again from the text it holds. Building
///   costs only the NFA, whatever the rules.
///
/// # Example
///
/// ```
/// use stream_replace::{Config, DfaKind, Rules};
///
/// for kind in [DfaKind::Auto, DfaKind::Dense, DfaKind::Lazy] {
///     let rules = Rules::builder()
///         .regex(r"[\w.+-]+@[\w-]+\.\w+", "[EMAIL]")
///         .config(Config::new().dfa(kind))
///         .build()?;
///     assert_eq!(rules.replace_all("to ann@example.com"), "to [EMAIL]");
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DfaKind {
    /// A dense DFA when it fits [`Config::dense_size_limit`], otherwise a
    /// lazy one (the default). Building stops as soon as the dense DFA
    /// outgrows the limit, or its build outgrows the work the limit allows
    /// (see [`Config::dense_size_limit`]), so the attempt costs a bounded
    /// time whatever the rules.
    #[default]
    Auto,
    /// Always a dense DFA; [`build`](crate::RulesBuilder::build) fails with
    /// [`ErrorKind::TooBig`](crate::ErrorKind::TooBig) when it, or the work
    /// to build it, would exceed [`Config::dense_size_limit`].
    Dense,
    /// Always a lazy DFA, with pooled caches.
    Lazy,
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
    /// output then differs from
    /// [`Rules::replace_all`](crate::Rules::replace_all), but nothing a
    /// rule covers is released: with `<think>[\s\S]*?</think>` removed and a
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

/// Options for compiling [`Rules`](crate::Rules) and running their streams.
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
    dfa: DfaKind,
    dense_size_limit: usize,
    literal_matcher: bool,
    literal_dfa_size_limit: usize,
    split_literal_limit: usize,
    caseless_regex_limit: usize,
    fast_paths: bool,
    scratch_per_call: bool,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            max_held: 1 << 20,
            on_held_limit: HeldLimit::Fail,
            size_limit: 10 << 20,
            cache_capacity: 2 << 20,
            dfa: DfaKind::Auto,
            dense_size_limit: 8 << 20,
            literal_matcher: true,
            literal_dfa_size_limit: 16 << 20,
            split_literal_limit: 2_000,
            caseless_regex_limit: 2_000,
            fast_paths: true,
            scratch_per_call: false,
        }
    }
}

impl Config {
    /// The default configuration: at most 1 MiB held per stream, fail closed
    /// at that limit, a 10 MiB compiled size limit, a dense DFA when it
    /// takes at most 8 MiB, and otherwise lazy DFA caches of 2 MiB (one per
    /// thread that feeds streams, not one per stream).
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
    /// assert_eq!(config.get_dense_size_limit(), 8 << 20);
    /// assert_eq!(config.get_literal_dfa_size_limit(), 16 << 20);
    /// assert_eq!(config.get_split_literal_limit(), 2_000);
    /// assert_eq!(config.get_caseless_regex_limit(), 2_000);
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
    /// compiled rule set on the regex engine. Literal rules on the literal
    /// matcher (see [`literal_matcher`](Config::literal_matcher)) do not
    /// count: their automaton grows linearly with their total length.
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

    /// The capacity, in bytes, of each lazy DFA cache (see [`DfaKind`]).
    /// Streams borrow caches from a pool shared by the rule set, one call
    /// at a time: there is about one cache per thread feeding streams at
    /// once, whatever the number of streams. When a cache fills, it is
    /// cleared and the streams replay what they hold (on the DFA when it
    /// is short, otherwise on a slower engine), so results stay exact.
    ///
    /// Besides this cache, each pooled scratch space memoises the
    /// transitions taken while at most one match is in progress: at most 64
    /// rows of 4 bytes per byte class of the rules (about 36 KiB at most
    /// for a rule set with 140 classes), built as text is seen and cleared
    /// with the cache. A dense DFA has the same memo, never cleared.
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

    /// Which DFA the streams step: dense, built with the rules, or lazy,
    /// built as text is seen (see [`DfaKind`] for the trade-off).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Config, DfaKind, Rules};
    ///
    /// let rules = Rules::builder()
    ///     .regex(r"se+cret", "***")
    ///     .config(Config::new().dfa(DfaKind::Lazy))
    ///     .build()?;
    /// assert_eq!(rules.replace_all("a seecret"), "a ***");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn dfa(mut self, kind: DfaKind) -> Config {
        self.dfa = kind;
        self
    }

    /// The most bytes a dense DFA may take, and the most its build may use
    /// (see [`DfaKind`]). Over it, [`DfaKind::Auto`] uses a lazy DFA and
    /// [`DfaKind::Dense`] fails to build.
    ///
    /// The limit also bounds the build's time. Building a dense DFA works
    /// out each transition of each of its states by walking the epsilon
    /// closures of the NFA states it stands for, so a small DFA can still
    /// take long to build when its states stand for many NFA states:
    /// `[\s\S]*?{1000}<think>{1000}\p{L}` has a dense DFA under 1 MB that
    /// took seconds to build, against milliseconds for its lazy DFA. The
    /// build's memory for those NFA states is therefore bounded too: to an
    /// eighth of the limit (the packs' sets take about a tenth of their
    /// DFA's size), and further by the alphabet's size and the closures'
    /// width. Such rules fall back to a lazy DFA within a fraction of a
    /// second, while this crate's packs keep their dense DFA. Raising the
    /// limit raises every bound.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Config, DfaKind, ErrorKind, Rules};
    ///
    /// let config = Config::new().dfa(DfaKind::Dense).dense_size_limit(1 << 10);
    /// let err = Rules::builder()
    ///     .regex(r"\w{20}", "x")
    ///     .config(config.clone())
    ///     .build()
    ///     .unwrap_err();
    /// assert_eq!(err.kind(), &ErrorKind::TooBig);
    /// // The automatic choice falls back to a lazy DFA.
    /// let rules = Rules::builder()
    ///     .regex(r"\w{20}", "x")
    ///     .config(config.dfa(DfaKind::Auto))
    ///     .build()?;
    /// assert_eq!(rules.replace_all("abcdefghijklmnopqrst!"), "x!");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn dense_size_limit(mut self, bytes: usize) -> Config {
        self.dense_size_limit = bytes;
        self
    }

    /// Makes every call of every stream borrow a brand new scratch space
    /// (lazy DFA cache, memos), for testing only: each feed then behaves
    /// as if the stream had moved to a thread whose cache it never used,
    /// so the tests check that streams resume exactly. Slow. Not part of
    /// the stable API.
    #[doc(hidden)]
    pub fn scratch_per_call(mut self, yes: bool) -> Config {
        self.scratch_per_call = yes;
        self
    }

    #[doc(hidden)]
    pub fn get_scratch_per_call(&self) -> bool {
        self.scratch_per_call
    }

    /// Whether rules that are plain literals run on an Aho-Corasick
    /// automaton (the default) rather than on the regex engine.
    ///
    /// On (the default), every literal rule goes to the automaton: those
    /// added with [`RulesBuilder::literal`](crate::RulesBuilder::literal)
    /// or [`Pattern::literal`](crate::Pattern::literal), and regexes that
    /// match one literal text, such as `abc` or `(?i)abc`. A `(?i)` regex
    /// counts only when each of its letters is ASCII and folds to nothing
    /// but its two ASCII cases (`k` and `s` do not: Unicode folds `k` with
    /// the Kelvin sign and `s` with the long s). The automaton is caseless
    /// for all its literals or for none: when literals with letters are of
    /// both kinds, the fewer go to the regex engine (see
    /// [`split_literal_limit`](Config::split_literal_limit)). The other rules go to the regex
    /// engine, which is not built at all when every rule is a literal. A
    /// literal costs the automaton a few bytes per byte of text, builds in
    /// linear time (100,000 words in well under a second) and leaves
    /// nothing per stream but a state number and a few offsets.
    ///
    /// Off, every rule goes to the regex engine: slower to build and, for
    /// a stream, to warm up, with the same output. The tests run both ways.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Config, Rules};
    ///
    /// for on in [true, false] {
    ///     let rules = Rules::builder()
    ///         .literal("password", "[P]")
    ///         .literal("ass", "[A]")
    ///         .config(Config::new().literal_matcher(on))
    ///         .build()?;
    ///     let mut r = rules.replacer();
    ///     let out = r.feed("my passw")? + &r.feed("ord is")? + &r.flush()?;
    ///     assert_eq!(out, "my [P] is");
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn literal_matcher(mut self, yes: bool) -> Config {
        self.literal_matcher = yes;
        self
    }

    /// See [`literal_matcher`](Config::literal_matcher).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Config;
    ///
    /// assert!(Config::new().get_literal_matcher());
    /// assert!(!Config::new().literal_matcher(false).get_literal_matcher());
    /// ```
    pub fn get_literal_matcher(&self) -> bool {
        self.literal_matcher
    }

    /// The most memory the literal matcher's automaton may take as a DFA
    /// (default 16 MiB); a set of literals whose DFA would be bigger gets
    /// the contiguous NFA instead, with a front table of at most this
    /// size: DFA rows for the NFA's states nearest the start. Either is
    /// built once, in [`build`](crate::RulesBuilder::build), and shared by
    /// every stream.
    ///
    /// The DFA steps a byte with one table lookup; the NFA's states are
    /// several times smaller but a byte may take several lookups, spread
    /// over the automaton, so a big set runs at the speed of memory. The
    /// DFA's table takes about 4 bytes per trie node per byte class (the
    /// distinct bytes of the literals, rounded up to a power of two):
    /// 20 words of a deny list take 90 KB as a DFA, 1,000 take 3.7 MB, but
    /// 100,000 seven-character terms (words, CJK, emoji) take 277 MB as a
    /// DFA against 7.6 MB as an NFA. The front gives the NFA's shallowest
    /// states (those of the shortest prefixes, where text spends most of
    /// its bytes) a row each of 4 bytes per byte class, as many as fit in
    /// the limit: a byte from such a state takes one lookup, the others
    /// take the NFA's. For the 100,000 terms, 16 MiB of rows cover every
    /// state of depth up to 3 and part of depth 4, and a fresh stream per
    /// reply of LLM-token chunks runs about 1.5 times as fast as on the
    /// bare NFA, within a few percent of the 277 MB DFA (see the README's
    /// gateway figures). A limit of 0 always gives the bare NFA. The
    /// output is the same whichever automaton runs.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Config, Rules};
    ///
    /// // The bare NFA, the NFA with a front of a few rows, the DFA.
    /// for limit in [0, 256, 1 << 30] {
    ///     let rules = Rules::builder()
    ///         .literal("password", "[P]")
    ///         .literal("token", "[T]")
    ///         .config(Config::new().literal_dfa_size_limit(limit))
    ///         .build()?;
    ///     let mut r = rules.replacer();
    ///     let out = r.feed("a pass")? + &r.feed("word, a tok")? + &r.feed("en")? + &r.flush()?;
    ///     assert_eq!(out, "a [P], a [T]");
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn literal_dfa_size_limit(mut self, bytes: usize) -> Config {
        self.literal_dfa_size_limit = bytes;
        self
    }

    /// See [`literal_dfa_size_limit`](Config::literal_dfa_size_limit).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Config;
    ///
    /// let config = Config::new().literal_dfa_size_limit(0);
    /// assert_eq!(config.get_literal_dfa_size_limit(), 0);
    /// ```
    pub fn get_literal_dfa_size_limit(&self) -> usize {
        self.literal_dfa_size_limit
    }

    /// The most literal rules with ASCII letters that the regex engine
    /// takes from the literal matcher when a set mixes caseless literals
    /// (`(?i)abc`) and case-sensitive ones (default 2,000).
    ///
    /// The literal matcher's automaton is caseless for all its literals or
    /// for none, so such a set keeps the more numerous kind on it (with
    /// every literal without letters) and sends the others to the regex
    /// engine. There they match exactly the same, but their build grows
    /// about quadratically with their number (about 3 s for 1,000 and 11 s
    /// for 2,000 caseless literals), so past this limit
    /// [`build`](crate::RulesBuilder::build) fails at once with
    /// [`ErrorKind::TooBig`](crate::ErrorKind::TooBig), blaming the first
    /// literal past it, rather than build for minutes. Raise the limit to
    /// accept the build time, or keep the literals with letters all
    /// caseless or all case-sensitive (or in two rule sets). Literals that
    /// go to the regex engine because the literal matcher is off do not
    /// count.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Config, ErrorKind, Rules};
    ///
    /// let build = |config: Config| {
    ///     Rules::builder()
    ///         .regex("(?i)alpha", "[A]")
    ///         .regex("(?i)beta", "[B]")
    ///         .literal("Gamma", "[G]")
    ///         .config(config)
    ///         .build()
    /// };
    /// // The two caseless literals stay on the automaton; "Gamma" would be
    /// // the regex engine's, over a limit of 0.
    /// let err = build(Config::new().split_literal_limit(0)).unwrap_err();
    /// assert_eq!(err.kind(), &ErrorKind::TooBig);
    /// assert_eq!(err.rule(), Some(2));
    /// assert!(err.to_string().contains("Config::split_literal_limit"));
    /// let rules = build(Config::new().split_literal_limit(1))?;
    /// assert_eq!(rules.replace_all("ALPHA Beta Gamma gamma"), "[A] [B] [G] gamma");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn split_literal_limit(mut self, literals: usize) -> Config {
        self.split_literal_limit = literals;
        self
    }

    /// See [`split_literal_limit`](Config::split_literal_limit).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Config;
    ///
    /// assert_eq!(Config::new().split_literal_limit(10).get_split_literal_limit(), 10);
    /// ```
    pub fn get_split_literal_limit(&self) -> usize {
        self.split_literal_limit
    }

    /// The most caseless rules the regex engine takes (default 2,000): the
    /// rules whose pattern matches some ASCII letter in either case, as
    /// `(?i)` makes it, that do not go to the literal matcher.
    ///
    /// Caseless regexes such as `(?i)ask\d` stay on the regex engine, and
    /// so do caseless literals with a `k` or an `s` (`(?i)k` also matches
    /// the Kelvin sign, `(?i)s` the long s), and caseless literals sent
    /// there by [`split_literal_limit`](Config::split_literal_limit) or
    /// with the literal matcher off. The engine's build grows about
    /// quadratically with their number (each such rule starts with many
    /// spellings, and the search for the literals that every match starts
    /// with compares them across rules): about 3 s for 1,000 and 11 s for
    /// 2,000 rules, minutes for 20,000. Past this limit
    /// [`build`](crate::RulesBuilder::build) fails at once with
    /// [`ErrorKind::TooBig`](crate::ErrorKind::TooBig), blaming the first
    /// rule past it. Raise the limit to accept the build time, or split
    /// the rules between rule sets.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Config, ErrorKind, Rules};
    ///
    /// let build = |config: Config| {
    ///     Rules::builder()
    ///         .regex(r"(?i)ask\d", "[A]")
    ///         .regex(r"\d{3}", "[N]")
    ///         .regex("(?i)kiss", "[K]")
    ///         .config(config)
    ///         .build()
    /// };
    /// let err = build(Config::new().caseless_regex_limit(1)).unwrap_err();
    /// assert_eq!(err.kind(), &ErrorKind::TooBig);
    /// assert_eq!(err.rule(), Some(2));
    /// assert!(err.to_string().contains("Config::caseless_regex_limit"));
    /// let rules = build(Config::new().caseless_regex_limit(2))?;
    /// assert_eq!(rules.replace_all("ASK1 123 Kiss"), "[A] [N] [K]");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn caseless_regex_limit(mut self, rules: usize) -> Config {
        self.caseless_regex_limit = rules;
        self
    }

    /// See [`caseless_regex_limit`](Config::caseless_regex_limit).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Config;
    ///
    /// assert_eq!(Config::new().caseless_regex_limit(10).get_caseless_regex_limit(), 10);
    /// ```
    pub fn get_caseless_regex_limit(&self) -> usize {
        self.caseless_regex_limit
    }

    /// Turns the engine's fast paths off (or on again), for testing only:
    /// every byte then goes through the general thread loop, and the DFA
    /// steps every rule as written (no `\b` rewritten as a one-byte half
    /// boundary), which must give the same output (matches may be
    /// released one byte later). The
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

    /// See [`dfa`](Config::dfa).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Config, DfaKind};
    ///
    /// assert_eq!(Config::new().get_dfa(), DfaKind::Auto);
    /// assert_eq!(Config::new().dfa(DfaKind::Lazy).get_dfa(), DfaKind::Lazy);
    /// ```
    pub fn get_dfa(&self) -> DfaKind {
        self.dfa
    }

    /// See [`dense_size_limit`](Config::dense_size_limit).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Config;
    ///
    /// assert_eq!(Config::new().dense_size_limit(1 << 16).get_dense_size_limit(), 1 << 16);
    /// ```
    pub fn get_dense_size_limit(&self) -> usize {
        self.dense_size_limit
    }
}
