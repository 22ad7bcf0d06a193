//! One stream's state: the public face of the engine (argument checks, `&str`
//! and byte output, the held limit, failures). The fast paths taken here,
//! and why each is exact, are in the crate's `DESIGN.md`, section 4.

use std::fmt;
use std::ops::Range;

use crate::engine::{Halt, Sink, StreamState, Verdict, extend_small};
use crate::error::StreamError;
use crate::guard::{
    self, Counters, EvaluateConfig, Evaluation, StreamGuard, Trigger, TriggerRecording,
};
use crate::replacement::Placeholders;
use crate::rules::Rules;

/// The byte sink ([`Out`]) over a replacer's fields, appending to `$out`:
/// a macro, so that its borrows stay apart from the replacer's stream.
macro_rules! byte_out {
    ($r:ident, $out:expr) => {
        Out {
            rules: &$r.rules,
            guard: &mut $r.guard,
            out: $out,
        }
    };
}

// The constructors of streams live here rather than in `rules`, so that
// `rules` does not depend on `replacer` (which depends on `rules`).
impl Rules {
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
    /// [`Replacement::with_state`](crate::Replacement::with_state) closures taking an `S` start from
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

    /// Replaces every match in the whole of `haystack`: the reference output
    /// every stream reproduces, however its input is split.
    ///
    /// It runs the streams' own engine over the whole input, with no limit
    /// on held bytes: its memory is the input's size plus the output, and
    /// its time is linear in the input, whatever the number of rules.
    ///
    /// With a block rule, the output ends before the blocked match, as a
    /// stream's does; [`Rules::evaluate`] says whether that happened.
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
        Replacer::replace_whole(self, haystack).0
    }

    /// Evaluates a whole text: the copy of record of what a stream over it
    /// does, for every split of the text. See [`Rules::evaluate_with`].
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Rule, Rules};
    ///
    /// let rules = Rules::builder()
    ///     .add(Rule::regex(r"\w+@\w+\.\w+", "[EMAIL]").id("email"))
    ///     .build()?;
    /// let eval = rules.evaluate("mail ann@x.org");
    /// assert!(!eval.is_blocked());
    /// assert_eq!(eval.text(), "mail [EMAIL]");
    /// assert_eq!(eval.triggers()[0].span(), 5..14);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn evaluate(&self, text: &str) -> Evaluation {
        self.evaluate_with(text, &EvaluateConfig::new())
    }

    /// Evaluates a whole text with options: the verdict (a block, or none),
    /// the remedied text (up to the block, or nothing on a block if so
    /// configured), and every trigger, with the matched text only when
    /// asked for. A stream fed the same text in any split releases the same
    /// text (see [`StreamError::released`] for the part before a block)
    /// and records the same triggers.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{EvaluateConfig, Rule, Rules};
    ///
    /// let rules = Rules::builder()
    ///     .add(Rule::literal("sk-live", "").id("key").block("API key"))
    ///     .build()?;
    /// let config = EvaluateConfig::new().values(true).text_on_block(false);
    /// let eval = rules.evaluate_with("use sk-live now", &config);
    /// assert_eq!(eval.text(), "");
    /// assert_eq!(eval.block().unwrap().span(), 4..11);
    /// assert_eq!(eval.triggers()[0].value(), Some("sk-live"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn evaluate_with(&self, text: &str, config: &EvaluateConfig) -> Evaluation {
        let mut r = Replacer::new(self.clone());
        r.max_held = usize::MAX;
        r.guard.triggers = Some(Vec::new());
        r.guard.values = config.get_values();
        let (out, block) = r.run_whole(text.as_bytes());
        let text = if block.is_some() && !config.get_text_on_block() {
            String::new()
        } else {
            // As in `replace_all`: whole characters only.
            String::from_utf8(out)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
        };
        Evaluation {
            text,
            triggers: r.guard.triggers.take().unwrap_or_default(),
            block,
        }
    }
}

/// One stream: feed it chunks, get back the text that is safe to emit.
///
/// For every way the input is split into chunks, the concatenated output of
/// the `feed` calls and the final `flush` equals
/// [`Rules::replace_all`] on the whole input. After each `feed`, everything
/// before the earliest position where a match could still start (for some
/// continuation of the stream) has been returned; the rest is held.
///
/// Not to be confused with the `regex` crate's `Replacer` trait: this is a
/// stream, not a replacement strategy.
///
/// The `&str` methods ([`feed`](Replacer::feed), [`flush`](Replacer::flush))
/// return only whole characters. The byte methods
/// ([`feed_bytes`](Replacer::feed_bytes), [`flush_bytes`](Replacer::flush_bytes))
/// accept any bytes, cut anywhere, even inside a UTF-8 character: patterns
/// match only valid UTF-8, and invalid bytes are passed through unchanged.
/// Use one family per stream.
///
/// On invalid UTF-8 the output is that of `regex`'s `find_iter` with one
/// exception, made so that no match is silently dropped: when some rule can
/// match the empty string, `regex` rejects a match that ends just before a
/// stray continuation byte (it treats that end as splitting a character);
/// streams and [`Rules::replace_all_bytes`] keep and replace it.
///
/// A `Replacer` is not `Clone`: a copy of a stream midway would have to
/// hold the same text and replay it, and a fresh stream is what is
/// usually wanted. Make one with [`Rules::replacer`] (or
/// `replacer.rules().replacer()`).
///
/// # Example
///
/// ```
/// use stream_replace::Rules;
///
/// let rules = Rules::builder()
///     .regex(r"[\w.]+@\w+\.com", "[EMAIL]")
///     .regex(r"<think>[\s\S]*?</think>", "")
///     .build()?;
/// let mut r = rules.replacer();
/// assert_eq!(r.feed("Mail ann.lee@exa")?, "Mail ");
/// assert_eq!(r.held(), "ann.lee@exa".len());
/// assert_eq!(r.feed("mple.com now <thi")?, "[EMAIL] now ");
/// assert_eq!(r.feed("nk>secret</think>!")?, "!");
/// assert_eq!(r.flush()?, "");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Replacer {
    rules: Rules,
    stream: StreamState,
    failed: Option<StreamError>,
    /// `BUSY`, `FAILED` and `WORDS`: a feed checks this one byte, and goes
    /// its usual way when it is clear.
    flags: u8,
    /// Reused output buffer of the `&str` methods.
    text_out: Vec<u8>,
    /// `Config::max_held`, or no limit for `Rules::replace_all`.
    max_held: usize,
    /// Allowlist, triggers, counters, and the block that stopped the stream.
    guard: StreamGuard,
    /// With release at word boundaries: the cap on a delimiter-free run.
    word_cap: Option<usize>,
    /// Output decided but not shown yet: what follows the last delimiter.
    words: Vec<u8>,
}

impl Replacer {
    pub(crate) fn new(rules: Rules) -> Replacer {
        let stream = StreamState::new(&rules.inner.program);
        Replacer {
            stream,
            failed: None,
            flags: 0,
            text_out: Vec::new(),
            max_held: rules.inner.config.get_max_held(),
            guard: StreamGuard::new(&rules),
            word_cap: None,
            words: Vec::new(),
            rules,
        }
    }

    /// Replaces every match in `haystack`, the whole input: a stream with
    /// no limit on held bytes, fed in segments so that its buffer holds no
    /// more than the longest undecided stretch plus one segment.
    pub(crate) fn replace_whole(rules: &Rules, haystack: &[u8]) -> (Vec<u8>, Option<guard::Block>) {
        let mut r = Replacer::new(rules.clone());
        r.max_held = usize::MAX;
        r.run_whole(haystack)
    }

    /// Feeds the whole of `haystack` to this fresh stream and ends it:
    /// the output (up to the block, if any) and the block.
    fn run_whole(&mut self, haystack: &[u8]) -> (Vec<u8>, Option<guard::Block>) {
        let mut out = Vec::with_capacity(haystack.len());
        // Only a block can fail them: there is no limit, and the stream is
        // new.
        let result = self
            .feed_raw(haystack, &mut out)
            .and_then(|()| self.flush_raw(&mut out));
        let block = result.err().and_then(|e| e.block().cloned());
        (out, block)
    }

    /// The rules this stream applies.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().literal("a", "b").build()?;
    /// let r = rules.replacer();
    /// assert_eq!(r.rules().len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// How many bytes the stream holds back: received, not yet emitted.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().literal("hello", "bye").build()?;
    /// let mut r = rules.replacer();
    /// assert_eq!(r.feed("say hel")?, "say ");
    /// assert_eq!(r.held(), 3);
    /// assert_eq!(r.feed("p")?, "help");
    /// assert_eq!(r.held(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn held(&self) -> usize {
        self.stream.held()
    }

    /// How many bytes have been fed since the stream started.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().literal("hello", "bye").build()?;
    /// let mut r = rules.replacer();
    /// assert_eq!(r.feed("say hel")?, "say ");
    /// assert_eq!(r.offset(), 7); // held bytes count too
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn offset(&self) -> usize {
        self.stream.offset()
    }

    /// Feeds a chunk and returns the text now safe to emit.
    ///
    /// # Errors
    ///
    /// A [`StreamError`] when the held text exceeds
    /// [`Config::max_held`](crate::Config::max_held) under the default
    /// [`HeldLimit::Fail`](crate::HeldLimit::Fail) policy, or when the stream failed before and has
    /// not been [reset](Replacer::reset).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().literal("hello", "bye").build()?;
    /// let mut r = rules.replacer();
    /// assert_eq!(r.feed("oh hel")?, "oh ");
    /// assert_eq!(r.feed("lo there")?, "bye there");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use = "the returned text is the stream's output: dropping it loses text"]
    pub fn feed(&mut self, chunk: &str) -> Result<String, StreamError> {
        let mut out = String::new();
        match self.feed_into(chunk, &mut out) {
            Ok(()) => Ok(out),
            Err(e) => Err(e.with_released(out.into_bytes())),
        }
    }

    /// Feeds a chunk and appends the text now safe to emit to `out`, with no
    /// allocation once the stream's buffers have grown.
    ///
    /// # Errors
    ///
    /// As [`feed`](Replacer::feed).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().literal("hello", "bye").build()?;
    /// let mut r = rules.replacer();
    /// let mut out = String::new();
    /// for chunk in ["abc hel", "lo!"] {
    ///     r.feed_into(chunk, &mut out)?;
    /// }
    /// r.flush_into(&mut out)?;
    /// assert_eq!(out, "abc bye!");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn feed_into(&mut self, chunk: &str, out: &mut String) -> Result<(), StreamError> {
        if self.flags != 0 {
            return self.feed_flagged(chunk, out);
        }
        // `call` with its checks folded into the one above.
        self.flags = BUSY;
        let result = self.feed_str(chunk, out);
        self.flags &= !BUSY;
        result
    }

    /// `feed_into` on a stream that is failed, poisoned or releases at word
    /// boundaries.
    #[cold]
    #[inline(never)]
    fn feed_flagged(&mut self, chunk: &str, out: &mut String) -> Result<(), StreamError> {
        if self.word_cap.is_some() {
            return self.feed_words(chunk, out);
        }
        self.call(|r| r.feed_str(chunk, out))
    }

    /// `feed_into` with release at word boundaries.
    #[cold]
    fn feed_words(&mut self, chunk: &str, out: &mut String) -> Result<(), StreamError> {
        self.call(|r| {
            let start = out.len();
            let result = r.feed_str(chunk, out);
            let mut bytes = out.split_off(start).into_bytes();
            r.hold_words(&mut bytes, 0, result.is_err());
            push_text(out, &bytes);
            result
        })
    }

    /// Feeds a `&str` chunk to the engine, its output appended to `out`.
    #[inline(always)]
    fn feed_str(&mut self, chunk: &str, out: &mut String) -> Result<(), StreamError> {
        // The literal token path, before the sink is made:
        // without this shortcut the 1,000-term deny list at token chunks
        // runs 4% more instructions (`benches/instructions.rs`). The same
        // path as `feed_chunk`'s first branch.
        let prog = &self.rules.inner.program;
        let token = self
            .stream
            .feed_token(prog, chunk.as_bytes(), true, |held| {
                if !held.is_empty() {
                    push_text(out, held);
                }
            });
        if let Some(fed) = token {
            out.push_str(&chunk[..fed.cut]);
            if fed.held <= self.max_held {
                return Ok(());
            }
            return self.held_limit_str(out);
        }
        // The token path did not apply: straight to the general path, so
        // that `feed_chunk`'s own copy of the token path is not compiled
        // in here a second time (its registers spill into the one above).
        let (rules, guard) = (&self.rules, &mut self.guard);
        let prog = &self.rules.inner.program;
        let fed = self.stream.feed_general(
            prog,
            chunk.as_bytes(),
            true,
            self.max_held,
            &mut StrInput {
                sink: StrOut { rules, guard, out },
                chunk,
            },
        );
        match fed {
            Ok(()) => Ok(()),
            Err(halt) => Err(self.fail(halt)),
        }
    }

    /// Feeds bytes, cut anywhere, and returns the bytes now safe to emit.
    ///
    /// # Errors
    ///
    /// As [`feed`](Replacer::feed).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().literal("é", "e").build()?;
    /// let mut r = rules.replacer();
    /// let mut out = r.feed_bytes(b"caf\xC3")?; // 'é' cut in two
    /// out.extend(r.feed_bytes(b"\xA9 \xFF")?); // 0xFF is invalid, kept as is
    /// out.extend(r.flush_bytes()?);
    /// assert_eq!(out, b"cafe \xFF");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use = "the returned text is the stream's output: dropping it loses text"]
    pub fn feed_bytes(&mut self, chunk: &[u8]) -> Result<Vec<u8>, StreamError> {
        let mut out = Vec::new();
        match self.feed_raw(chunk, &mut out) {
            Ok(()) => Ok(out),
            Err(e) => Err(e.with_released(out)),
        }
    }

    /// Feeds bytes and appends the bytes now safe to emit to `out`.
    ///
    /// # Errors
    ///
    /// As [`feed`](Replacer::feed).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().literal("é", "e").build()?;
    /// let mut r = rules.replacer();
    /// let mut out = b"> ".to_vec();
    /// r.feed_bytes_into(b"caf\xC3", &mut out)?;
    /// r.feed_bytes_into(b"\xA9!", &mut out)?;
    /// assert_eq!(out, b"> cafe!");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn feed_bytes_into(&mut self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), StreamError> {
        self.feed_raw(chunk, out)
    }

    /// Ends the input and returns the rest of the output. The replacer is
    /// then ready for a new stream.
    ///
    /// # Errors
    ///
    /// A [`StreamError`] when a block rule stops the stream at its end, or
    /// when the stream failed before and has not been
    /// [reset](Replacer::reset). A failed stream (blocked, over its held
    /// limit, or poisoned by a panic) stays failed for every later `feed`
    /// and `flush` alike, which return the same error and release nothing,
    /// until [`reset`](Replacer::reset): see
    /// [Reporting a failure](crate::StreamError#reporting-a-failure).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().regex(r"\d+", "N").build()?;
    /// let mut r = rules.replacer();
    /// assert_eq!(r.feed("a 12")?, "a ");
    /// assert_eq!(r.flush()?, "N"); // no more digits can follow
    /// assert_eq!(r.feed("3")?, ""); // a new stream
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use = "the returned text is the stream's output: dropping it loses text"]
    pub fn flush(&mut self) -> Result<String, StreamError> {
        let mut out = String::new();
        match self.flush_into(&mut out) {
            Ok(()) => Ok(out),
            Err(e) => Err(e.with_released(out.into_bytes())),
        }
    }

    /// Ends the input and appends the rest of the output to `out`.
    ///
    /// # Errors
    ///
    /// As [`flush`](Replacer::flush).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().regex(r"\d+", "N").build()?;
    /// let mut r = rules.replacer();
    /// let mut out = String::new();
    /// r.feed_into("a 12", &mut out)?;
    /// r.flush_into(&mut out)?;
    /// assert_eq!(out, "a N");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn flush_into(&mut self, out: &mut String) -> Result<(), StreamError> {
        self.with_string(out, |r, bytes| r.flush_raw(bytes))
    }

    /// Releases text at word boundaries only (or not, with `None`): each
    /// call shows the output up to its last delimiter (whitespace or one of
    /// `.,;!?()[]{}`), and keeps the rest until a later call shows a
    /// delimiter after it, the stream ends or fails, or the run without a
    /// delimiter grows past `cap` bytes (then it is shown whole). `cap`
    /// bounds that run only, the text after the last delimiter: a call may
    /// show more than `cap` bytes before it. A UI then
    /// never shows half a word or half a placeholder. The joined output
    /// does not change; the text kept this way (at most `cap` bytes plus one
    /// call's output) is not counted in [`held`](Replacer::held): see
    /// [`waiting`](Replacer::waiting).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().regex(r"\w+@\w+\.\w+", "[EMAIL]").build()?;
    /// let mut r = rules.replacer();
    /// r.release_at_words(Some(64));
    /// assert_eq!(r.feed("Hello wor")?, "Hello ");
    /// assert_eq!(r.feed("ld, mail ann@x.org")?, "world, mail ");
    /// assert_eq!(r.feed(" now")?, "[EMAIL] ");
    /// assert_eq!(r.flush()?, "now");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn release_at_words(&mut self, cap: Option<usize>) {
        self.word_cap = cap;
        if cap.is_some() {
            self.flags |= WORDS;
        } else {
            self.flags &= !WORDS;
        }
    }

    /// Bytes of output decided but kept back by
    /// [`release_at_words`](Replacer::release_at_words).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().literal("x", "y").build()?;
    /// let mut r = rules.replacer();
    /// r.release_at_words(Some(64));
    /// assert_eq!(r.feed("one tw")?, "one ");
    /// assert_eq!((r.held(), r.waiting()), (0, 2));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn waiting(&self) -> usize {
        self.words.len()
    }

    /// With release at word boundaries, moves `out[start..]`, this call's
    /// output, behind the text kept back, and puts back in `out` what ends
    /// at the last delimiter: everything with `all` (the stream ended or
    /// failed) or once the run without a delimiter is over the cap.
    fn hold_words(&mut self, out: &mut Vec<u8>, start: usize, all: bool) {
        let Some(cap) = self.word_cap else { return };
        let old = self.words.len();
        self.words.extend_from_slice(&out[start..]);
        out.truncate(start);
        // The text kept back has no delimiter: only the new part can. The
        // cap bounds the run after the last delimiter, not what this call
        // shows before it.
        let len = self.words.len();
        let cut = if all {
            len
        } else {
            let last = self.words[old..]
                .iter()
                .rposition(|&b| is_delimiter(b))
                .map_or(0, |j| old + j + 1);
            if len - last > cap { len } else { last }
        };
        out.extend_from_slice(&self.words[..cut]);
        self.words.drain(..cut);
    }

    /// Ends the input and returns the rest of the output as bytes.
    ///
    /// # Errors
    ///
    /// As [`flush`](Replacer::flush).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().regex(r"\d+", "N").build()?;
    /// let mut r = rules.replacer();
    /// assert_eq!(r.feed_bytes(b"\xFF 12")?, b"\xFF ");
    /// assert_eq!(r.flush_bytes()?, b"N");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use = "the returned text is the stream's output: dropping it loses text"]
    pub fn flush_bytes(&mut self) -> Result<Vec<u8>, StreamError> {
        let mut out = Vec::new();
        match self.flush_raw(&mut out) {
            Ok(()) => Ok(out),
            Err(e) => Err(e.with_released(out)),
        }
    }

    /// Ends the input and appends the rest of the output to `out`.
    ///
    /// # Errors
    ///
    /// As [`flush`](Replacer::flush).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().regex(r"\d+", "N").build()?;
    /// let mut r = rules.replacer();
    /// let mut out = Vec::new();
    /// r.feed_bytes_into(b"\xFF 12", &mut out)?;
    /// r.flush_bytes_into(&mut out)?;
    /// assert_eq!(out, b"\xFF N");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn flush_bytes_into(&mut self, out: &mut Vec<u8>) -> Result<(), StreamError> {
        self.flush_raw(out)
    }

    /// Abandons the current stream: drops what is held (without emitting
    /// it) and makes the replacer ready for a new stream. The only way out
    /// of a failed stream (blocked, over its held limit, or poisoned).
    ///
    /// What belongs to the stream goes: the held text, the offset, the
    /// failure and its block, the placeholders numbered so far
    /// ([`Replacement::counter`](crate::Replacement::counter) starts again
    /// from 1), the output kept back by
    /// [`release_at_words`](Replacer::release_at_words). What belongs to
    /// the replacer stays: its own allowlist ([`allow`](Replacer::allow)),
    /// the [`counters`](Replacer::counters) (totals over its life: take
    /// them with [`take_counters`](Replacer::take_counters)), the trigger
    /// recording mode and the triggers not yet taken (take them before a
    /// reset to keep streams apart), the `release_at_words` setting, and
    /// the values of [`Replacement::with_state`](crate::Replacement::with_state)
    /// closures (see [`take_state`](Replacer::take_state) to clear one).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().literal("hello", "bye").build()?;
    /// let mut r = rules.replacer();
    /// r.allow("hello there");
    /// assert_eq!(r.feed("hello ")?, "bye ");
    /// assert_eq!(r.feed("hel")?, "");
    /// r.reset(); // "hel" is dropped, never emitted
    /// assert_eq!(r.feed("lo")?, "lo");
    /// assert_eq!(r.offset(), 2);
    /// assert_eq!(r.counters().matches("0"), 1); // counters stay
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reset(&mut self) {
        self.stream.reset();
        self.failed = None;
        self.flags &= WORDS;
        self.guard.block = None;
        self.guard.state.remove::<Placeholders>();
        self.words.clear();
    }

    /// Allowlists a value for this replacer's streams (besides the rules'
    /// own, [`RulesBuilder::allow`](crate::RulesBuilder::allow)): a match
    /// whose text is exactly `value` passes through unchanged, and scanning
    /// goes on after it. The list outlives [`flush`](Replacer::flush) and
    /// [`reset`](Replacer::reset); [`clear_allowlist`](Replacer::clear_allowlist)
    /// empties it.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().regex(r"\w+@\w+\.\w+", "[EMAIL]").build()?;
    /// let mut r = rules.replacer();
    /// r.allow("me@home.org"); // the user's own address, pasted in their prompt
    /// let out = r.feed("from me@ho")? + &r.feed("me.org to ann@x.org")? + &r.flush()?;
    /// assert_eq!(out, "from me@home.org to [EMAIL]");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn allow(&mut self, value: impl Into<String>) {
        self.guard
            .allow
            .insert(value.into().into_bytes().into_boxed_slice());
    }

    /// Empties this replacer's own allowlist (see [`allow`](Replacer::allow)).
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().literal("a", "b").build()?;
    /// let mut r = rules.replacer();
    /// r.allow("a");
    /// assert_eq!(r.feed("a")?, "a");
    /// r.clear_allowlist();
    /// assert_eq!(r.feed("a")?, "b");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn clear_allowlist(&mut self) {
        self.guard.allow.clear();
    }

    /// Turns the recording of [`Trigger`]s on or off; with `values`, each
    /// keeps the matched text. Recorded triggers accumulate until
    /// [`take_triggers`](Replacer::take_triggers). The same as
    /// [`set_trigger_recording`](Replacer::set_trigger_recording), which
    /// names the three choices (`(false, _)` is
    /// [`Off`](TriggerRecording::Off), `(true, false)`
    /// [`Spans`](TriggerRecording::Spans), `(true, true)`
    /// [`Values`](TriggerRecording::Values)); prefer it in new code.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Rule, Rules};
    ///
    /// let rules = Rules::builder().add(Rule::regex(r"\d+", "N").id("num")).build()?;
    /// let mut r = rules.replacer();
    /// r.record_triggers(true, false);
    /// let out = r.feed("a 1")? + &r.feed("2 b")? + &r.flush()?;
    /// assert_eq!(out, "a N b");
    /// let triggers = r.take_triggers();
    /// assert_eq!(triggers, rules.evaluate("a 12 b").triggers());
    /// assert_eq!((triggers[0].id(), triggers[0].span()), ("num", 2..4));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn record_triggers(&mut self, on: bool, values: bool) {
        self.guard.values = values;
        if !on {
            self.guard.triggers = None;
        } else if self.guard.triggers.is_none() {
            self.guard.triggers = Some(Vec::new());
        }
    }

    /// Sets what the stream records as [`Trigger`]s from now on. Recorded
    /// triggers accumulate until [`take_triggers`](Replacer::take_triggers);
    /// turning recording off drops those not taken.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Rule, Rules, TriggerRecording};
    ///
    /// let rules = Rules::builder().add(Rule::regex(r"\d+", "N").id("num")).build()?;
    /// let mut r = rules.replacer();
    /// r.set_trigger_recording(TriggerRecording::Spans);
    /// let _ = r.feed("a 12 b")?;
    /// let t = r.take_triggers();
    /// assert_eq!((t[0].id(), t[0].span(), t[0].value()), ("num", 2..4, None));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_trigger_recording(&mut self, mode: TriggerRecording) {
        match mode {
            TriggerRecording::Off => self.record_triggers(false, false),
            TriggerRecording::Spans => self.record_triggers(true, false),
            TriggerRecording::Values => self.record_triggers(true, true),
        }
    }

    /// Takes the triggers recorded so far (see
    /// [`record_triggers`](Replacer::record_triggers)); empty when
    /// recording is off.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().literal("a", "b").build()?;
    /// let mut r = rules.replacer();
    /// r.record_triggers(true, true);
    /// let _ = r.feed("a")?;
    /// assert_eq!(r.take_triggers()[0].value(), Some("a"));
    /// assert!(r.take_triggers().is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn take_triggers(&mut self) -> Vec<Trigger> {
        match &mut self.guard.triggers {
            Some(t) => std::mem::take(t),
            None => Vec::new(),
        }
    }

    /// The replacer's counters (matches per rule, rejections, allowlisted
    /// matches, blocks), over its life.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().literal("a", "b").build()?;
    /// let mut r = rules.replacer();
    /// let _ = r.feed("a a")?;
    /// assert_eq!(r.counters().matches("0"), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn counters(&self) -> &Counters {
        &self.guard.counters
    }

    /// Takes the counters, starting them afresh.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::Rules;
    ///
    /// let rules = Rules::builder().literal("a", "b").build()?;
    /// let mut r = rules.replacer();
    /// let _ = r.feed("a")?;
    /// assert_eq!(r.take_counters().matches("0"), 1);
    /// assert_eq!(r.counters().matches("0"), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn take_counters(&mut self) -> Counters {
        self.guard.take_counters()
    }

    /// This stream's value of type `S` for
    /// [`Replacement::with_state`](crate::Replacement::with_state) closures,
    /// if a closure made one or [`Rules::replacer_with`] gave one.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Pattern, Replacement, Rules};
    ///
    /// let rules = Rules::builder()
    ///     .rule(
    ///         Pattern::literal("?"),
    ///         Replacement::with_state(|_, n: &mut usize| {
    ///             *n += 1;
    ///             "!".to_string()
    ///         }),
    ///     )
    ///     .build()?;
    /// let mut r = rules.replacer();
    /// assert_eq!(r.state::<usize>(), None);
    /// assert_eq!(r.feed("what? why?")?, "what! why!");
    /// assert_eq!(r.state::<usize>(), Some(&2));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn state<S: Send + Sync + 'static>(&self) -> Option<&S> {
        self.guard.state.get()
    }

    /// This stream's value of type `S`, to change.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Pattern, Replacement, Rules};
    ///
    /// let rules = Rules::builder()
    ///     .rule(Pattern::literal("?"), Replacement::with_state(|_, n: &mut usize| {
    ///         *n += 1;
    ///         n.to_string()
    ///     }))
    ///     .build()?;
    /// let mut r = rules.replacer_with(0usize);
    /// assert_eq!(r.feed("a?")?, "a1");
    /// *r.state_mut::<usize>().unwrap() = 10;
    /// assert_eq!(r.feed("b?")?, "b11");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn state_mut<S: Send + Sync + 'static>(&mut self) -> Option<&mut S> {
        self.guard.state.get_mut()
    }

    /// Takes this stream's value of type `S` out: the next closure that
    /// needs one starts from `S::default()`.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{Pattern, Replacement, Rules};
    ///
    /// let rules = Rules::builder()
    ///     .rule(Pattern::literal("?"), Replacement::with_state(|_, n: &mut usize| {
    ///         *n += 1;
    ///         n.to_string()
    ///     }))
    ///     .build()?;
    /// let mut r = rules.replacer();
    /// assert_eq!(r.feed("??")?, "12");
    /// assert_eq!(r.take_state::<usize>(), Some(2));
    /// assert_eq!(r.feed("?")?, "1"); // a new conversation
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn take_state<S: Send + Sync + 'static>(&mut self) -> Option<S> {
        self.guard.state.remove()
    }

    /// Sets this stream's value of type `S` (see [`Rules::replacer_with`]).
    pub(crate) fn set_state<S: Send + Sync + 'static>(&mut self, value: S) {
        self.guard.state.insert(value);
    }

    /// Applies the held-limit policy after the token path of `feed_str`.
    #[cold]
    #[inline(never)]
    fn held_limit_str(&mut self, out: &mut String) -> Result<(), StreamError> {
        let mut sink = StrOut {
            rules: &self.rules,
            guard: &mut self.guard,
            out,
        };
        let prog = &self.rules.inner.program;
        match self.stream.over_limit(prog, self.max_held, true, &mut sink) {
            Ok(()) => Ok(()),
            Err(halt) => Err(self.fail(halt)),
        }
    }

    /// Runs one call on the stream: refuses it when the stream failed or
    /// was poisoned by a panic in an earlier call (then what it held is
    /// dropped, never released), and marks the stream busy while `f` runs,
    /// so that a panic out of `f` poisons it. (`feed_into` does the same
    /// inline.)
    #[inline(always)]
    fn call<T>(
        &mut self,
        f: impl FnOnce(&mut Replacer) -> Result<T, StreamError>,
    ) -> Result<T, StreamError> {
        if self.flags & (BUSY | FAILED) != 0 {
            return Err(self.refuse());
        }
        self.flags |= BUSY;
        let result = f(self);
        self.flags &= !BUSY;
        result
    }

    /// The rare part of `call`: a poisoned or failed stream.
    #[cold]
    #[inline(never)]
    fn refuse(&mut self) -> StreamError {
        if self.flags & BUSY != 0 {
            let e = StreamError::poisoned(self.stream.held(), self.max_held);
            self.stream.reset();
            self.failed = Some(e);
            self.flags = self.flags & !BUSY | FAILED;
        }
        self.failed
            .clone()
            .unwrap_or_else(|| StreamError::poisoned(self.stream.held(), self.max_held))
    }

    fn feed_raw(&mut self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), StreamError> {
        self.call(|r| {
            let start = out.len();
            let (rules, guard) = (&r.rules, &mut r.guard);
            let prog = &r.rules.inner.program;
            let fed = r.stream.feed_chunk(prog, chunk, false, r.max_held, || Out {
                rules,
                guard,
                out: &mut *out,
            });
            let result = match fed {
                Ok(()) => Ok(()),
                Err(halt) => Err(r.fail(halt)),
            };
            if r.word_cap.is_some() {
                r.hold_words(out, start, result.is_err());
            }
            result
        })
    }

    fn flush_raw(&mut self, out: &mut Vec<u8>) -> Result<(), StreamError> {
        let start = out.len();
        // A failed stream stays failed, for `flush` as for `feed`, until an
        // explicit `reset`.
        let result = self.call(|r| {
            let mut sink = byte_out!(r, out);
            r.stream.finish(&r.rules.inner.program, &mut sink);
            if r.stream.is_stopped() {
                return Err(r.fail(Halt::Stopped));
            }
            Ok(())
        });
        if self.word_cap.is_some() {
            self.hold_words(out, start, true);
        }
        result
    }

    /// Fails the stream where the engine halted: on the block the sink
    /// recorded (what it holds is dropped, unreleased), or over the held
    /// limit; every later call is refused with the same error until a
    /// reset.
    #[cold]
    #[inline(never)]
    fn fail(&mut self, halt: Halt) -> StreamError {
        let e = match halt {
            Halt::Stopped => {
                let held = self.stream.held();
                self.stream.reset();
                let block = self
                    .guard
                    .block
                    .take()
                    .expect("a stopped stream has a block");
                StreamError::blocked(block, held, self.max_held)
            }
            Halt::HeldLimit { held } => StreamError::new(held, self.max_held),
        };
        self.failed = Some(e.clone());
        self.flags |= FAILED;
        e
    }

    /// Runs `f` with a byte buffer and appends its output to `out` as text.
    fn with_string(
        &mut self,
        out: &mut String,
        f: impl FnOnce(&mut Replacer, &mut Vec<u8>) -> Result<(), StreamError>,
    ) -> Result<(), StreamError> {
        let mut bytes = std::mem::take(&mut self.text_out);
        bytes.clear();
        let result = f(self, &mut bytes);
        push_text(out, &bytes);
        self.text_out = bytes;
        result
    }
}

/// Appends the engine's output for a `&str` stream to `out`.
#[inline(always)]
pub(crate) fn push_text(out: &mut String, bytes: &[u8]) {
    if bytes.len() <= SHORT && bytes.is_ascii() {
        // Cheaper than a call to `from_utf8` for the few bytes a
        // token-sized feed releases.
        for &b in bytes {
            // The mask, a no-op on ASCII, tells the compiler the char
            // takes one byte.
            out.push(char::from(b & 0x7f));
        }
    } else {
        match std::str::from_utf8(bytes) {
            Ok(s) => out.push_str(s),
            // Only reachable when `&str` and byte methods are mixed on one
            // stream and a character was left cut: mark the cut as U+FFFD,
            // as `from_utf8_lossy` does.
            Err(_) => out.push_str(&String::from_utf8_lossy(bytes)),
        }
    }
}

/// Whether `b` ends a word for [`Replacer::release_at_words`].
fn is_delimiter(b: u8) -> bool {
    b.is_ascii_whitespace() || b".,;!?()[]{}".contains(&b)
}

/// Output of at most this many ASCII bytes is appended char by char.
const SHORT: usize = 16;

/// `Replacer::flags`: a call is under way (still set on entry means a
/// panic unwound out of the last call, and the stream is poisoned)...
const BUSY: u8 = 1;
/// ...the stream failed (`Replacer::failed` says how)...
const FAILED: u8 = 2;
/// ...output is released at word boundaries (`Replacer::word_cap`).
const WORDS: u8 = 4;

/// The sink that turns decided text and matches into output.
struct Out<'a> {
    rules: &'a Rules,
    guard: &'a mut StreamGuard,
    out: &'a mut Vec<u8>,
}

impl Sink for Out<'_> {
    #[inline(always)]
    fn text(&mut self, bytes: &[u8]) {
        extend_small(self.out, bytes);
    }

    fn matched(
        &mut self,
        hay: &[u8],
        offset: usize,
        rule: usize,
        start: usize,
        end: usize,
    ) -> Verdict {
        guard::apply(
            self.rules, self.guard, hay, offset, rule, start, end, self.out,
        )
    }

    fn dropped(&mut self, rule: usize, span: Range<usize>) -> bool {
        guard::dropped(self.rules, self.guard, rule, span)
    }

    fn plain(&self, rule: usize) -> bool {
        guard::is_plain(self.rules, self.guard, rule)
    }
}

/// The sink of `&str` streams: like [`Out`], but appends to a `String`,
/// checking that the text is UTF-8 (it is, unless byte and `&str` feeds
/// were mixed on one stream and left a character cut).
struct StrOut<'a> {
    rules: &'a Rules,
    guard: &'a mut StreamGuard,
    out: &'a mut String,
}

impl Sink for StrOut<'_> {
    #[inline(always)]
    fn text(&mut self, bytes: &[u8]) {
        push_text(self.out, bytes);
    }

    fn matched(
        &mut self,
        hay: &[u8],
        offset: usize,
        rule: usize,
        start: usize,
        end: usize,
    ) -> Verdict {
        if guard::apply_plain_text(self.rules, self.guard, rule, self.out) {
            return Verdict::Accept;
        }
        let mut scratch = std::mem::take(&mut self.guard.scratch);
        scratch.clear();
        let verdict = guard::apply(
            self.rules,
            self.guard,
            hay,
            offset,
            rule,
            start,
            end,
            &mut scratch,
        );
        push_text(self.out, &scratch);
        self.guard.scratch = scratch;
        verdict
    }

    fn dropped(&mut self, rule: usize, span: Range<usize>) -> bool {
        guard::dropped(self.rules, self.guard, rule, span)
    }

    fn plain(&self, rule: usize) -> bool {
        guard::is_plain(self.rules, self.guard, rule)
    }
}

/// The sink of a `&str` chunk scanned in place: text of no match is taken
/// from the chunk as it is, with no UTF-8 check (the engine stops only at
/// character boundaries there).
struct StrInput<'a, 'c> {
    sink: StrOut<'a>,
    chunk: &'c str,
}

impl Sink for StrInput<'_, '_> {
    #[inline(always)]
    fn text(&mut self, bytes: &[u8]) {
        self.sink.text(bytes);
    }

    #[inline(always)]
    fn input(&mut self, hay: &[u8], range: Range<usize>) {
        match self.chunk.get(range.clone()) {
            Some(text) => self.sink.out.push_str(text),
            // Not reached (see above); the checked path stays exact.
            None => self.sink.text(&hay[range]),
        }
    }

    fn matched(
        &mut self,
        hay: &[u8],
        offset: usize,
        rule: usize,
        start: usize,
        end: usize,
    ) -> Verdict {
        self.sink.matched(hay, offset, rule, start, end)
    }

    fn dropped(&mut self, rule: usize, span: Range<usize>) -> bool {
        self.sink.dropped(rule, span)
    }

    fn plain(&self, rule: usize) -> bool {
        self.sink.plain(rule)
    }
}

impl fmt::Debug for Replacer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Replacer")
            .field("offset", &self.offset())
            .field("held", &self.held())
            .field("failed", &self.failed)
            .finish()
    }
}
