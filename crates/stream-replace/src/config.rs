//! How a rule set is built and how its streams behave: [`Config`], and the
//! policy at the held-text limit, [`HeldLimit`].

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
    literal_matcher: bool,
    fast_paths: bool,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            max_held: 1 << 20,
            on_held_limit: HeldLimit::Fail,
            size_limit: 10 << 20,
            cache_capacity: 2 << 20,
            literal_matcher: true,
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

    /// Whether rules that are plain literals run on an Aho-Corasick
    /// automaton (the default) rather than on the regex engine.
    ///
    /// On (the default), every literal rule goes to the automaton: those
    /// added with [`RulesBuilder::literal`](crate::RulesBuilder::literal)
    /// or [`Pattern::literal`](crate::Pattern::literal), and regexes that
    /// match one literal text, such as `abc` or `(?i)abc`. A `(?i)` regex
    /// counts only when each of its letters is ASCII and folds to nothing
    /// but its two ASCII cases (`k` and `s` do not: Unicode folds `k` with
    /// the Kelvin sign and `s` with the long s), and only when no
    /// case-sensitive literal is in the set (the automaton is caseless
    /// for all its literals or for none). The other rules go to the regex
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
