//! The feed pipeline: the one loop that takes a chunk of input through the
//! matchers, the held limit and the sink (`StreamState::feed_chunk`).
//!
//! A chunk's trip, in order (`DESIGN.md`, section 4, says why each step is
//! exact):
//!
//! 1. **Token path.** A token-sized chunk of a literal-only stream whose
//!    automaton only follows its own state is stepped where it is
//!    (`step_literals`, `commit_literals`); one in which literals match is
//!    decided without the merge when every match is plain
//!    (`feed_token_matches`).
//! 2. **General path.** Otherwise the chunk goes through one loop: matches
//!    of a literal-only stream that the chunk decides alone are decided in
//!    place (`feed_literals_in_place`); while the stream is idle, the text
//!    before the first place a match may start goes to the sink as it is
//!    (`idle_prefix`); the rest is fed in segments that double while the
//!    stream stays busy (`feed_segment`).
//!
//! The held limit is checked once per segment (`check_limit`), so a huge
//! chunk holds at most the limit plus one segment; a stopped stream ends
//! the loop at once.

use super::bytes::is_continuation;
use super::matcher::{Matcher, Verdict};
use super::{Halt, LITERAL, NONE_DECIDED, Program, Sink, StreamState};
use crate::config::HeldLimit;

/// Bytes fed to the matchers at a time when both run: a decision of one
/// makes the other scan again from the match's end what it scanned beyond
/// it, so this bounds that waste per decided match.
const PIECE: usize = 128;

/// The longest chunk `StreamState::step_literals` takes: token-sized
/// feeds, whose per-feed cost it cuts. Longer chunks go the general way,
/// where the prefilter skips text in place.
const SMALL_FEED: usize = 32;

/// A token-sized feed the literal matcher stepped (`step_literals`).
#[derive(Clone, Copy, Debug)]
struct LiteralFeed {
    /// The literal matcher's state after the chunk.
    state: Option<aho_corasick::automaton::StateID>,
    /// How many bytes the stream holds after the chunk.
    held: usize,
    /// The stream offset after the chunk.
    end: usize,
    /// Everything the stream held before this is released.
    safe: usize,
    /// And the chunk up to this.
    cut: usize,
}

/// What `StreamState::feed_token` did with a chunk.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TokenFed {
    /// The length of the chunk's prefix that is released (after the text
    /// the stream held before).
    pub(crate) cut: usize,
    /// How many bytes the stream holds after the chunk.
    pub(crate) held: usize,
}

/// The longest chunk fed to the matchers whole, without the in-place scan
/// of the general path: token-sized feeds, whose per-feed cost that scan
/// would raise.
const SMALL_CHUNK: usize = 16;

/// The first segment of input fed to the matchers where a match may start;
/// segments double while the stream stays busy, so the per-segment cost is
/// amortised, and the stream goes back to scanning in place once idle.
const SEGMENT: usize = 256;

/// The largest segment: the held limit is checked after each one, so a
/// stream never holds more than its limit plus this.
const MAX_SEGMENT: usize = 64 << 10;

impl StreamState {
    /// Feeds a chunk and gives the sink what it decides: the only way input
    /// enters a stream. With `whole_chars` (a `&str` stream), the release
    /// point never falls inside a UTF-8 character. The sink's `input` gets
    /// `chunk` itself with the range of text it passes through unchanged.
    ///
    /// `sink` makes the sink, once, where output is first written: the
    /// token path then builds only the part of it that it uses (a sink is
    /// several borrows; building it whole costs a token-sized feed about a
    /// tenth of its work).
    ///
    /// The stream holds at most `max_held` bytes after each segment
    /// (`Config::max_held`); past that, the program's policy applies
    /// (`Config::on_held_limit`, see `over_limit`).
    ///
    /// # Errors
    ///
    /// [`Halt`] when the sink stopped the stream or the held limit failed
    /// it; what was decided before that is given to the sink.
    #[inline(always)]
    pub(crate) fn feed_chunk<S: Sink>(
        &mut self,
        prog: &Program,
        chunk: &[u8],
        whole_chars: bool,
        max_held: usize,
        sink: impl FnOnce() -> S,
    ) -> Result<(), Halt> {
        // A stopped stream is failed and reset by its owner before any
        // other feed.
        debug_assert!(!self.stopped);
        if let Some(feed) = self.step_literals(prog, chunk, whole_chars) {
            let mut sink = sink();
            let held = self.tape.held_before(feed.safe);
            if !held.is_empty() {
                sink.text(held);
            }
            let (cut, held) = (feed.cut, feed.held);
            self.commit_literals(prog, chunk, feed);
            // Last, so that little is live across the copy's call.
            if cut > 0 {
                sink.input(chunk, 0..cut);
            }
            // What the automaton holds is at most the longest literal, but
            // the limit may be lower.
            if held > max_held {
                return self.over_limit(prog, max_held, whole_chars, &mut sink);
            }
            return Ok(());
        }
        self.feed_general(prog, chunk, whole_chars, max_held, &mut sink())
    }

    /// `feed_chunk`'s token path alone, for a caller that writes its
    /// output without a sink: when it applies (`step_literals`), gives
    /// `held_text` the text the stream held that is now released, applies
    /// the chunk, and returns how long the prefix of the chunk is that
    /// follows that text in the output (the caller writes it) and how many
    /// bytes the stream then holds (the caller checks the limit:
    /// `over_limit`). `None`, having changed nothing, when it does not
    /// apply. The prefix is left to the caller, after the commit, so that
    /// little is live across the copy's call.
    #[inline(always)]
    pub(crate) fn feed_token(
        &mut self,
        prog: &Program,
        chunk: &[u8],
        whole_chars: bool,
        held_text: impl FnOnce(&[u8]),
    ) -> Option<TokenFed> {
        let feed = self.step_literals(prog, chunk, whole_chars)?;
        held_text(self.tape.held_before(feed.safe));
        let fed = TokenFed {
            cut: feed.cut,
            held: feed.held,
        };
        self.commit_literals(prog, chunk, feed);
        Some(fed)
    }

    /// `feed_chunk` past its token path; also called by a caller whose
    /// `feed_token` gave `None`. Out of line, so that the token path's
    /// callers stay small.
    #[inline(never)]
    pub(crate) fn feed_general(
        &mut self,
        prog: &Program,
        chunk: &[u8],
        whole_chars: bool,
        max_held: usize,
        sink: &mut impl Sink,
    ) -> Result<(), Halt> {
        if self.token && self.feed_token_matches(prog, chunk, whole_chars, sink) {
            return self.check_limit(prog, max_held, whole_chars, sink);
        }
        if chunk.len() <= SMALL_CHUNK {
            if prog.thread_tokens
                && (self.feed_threads_token::<false>(prog, chunk, whole_chars, sink)
                    || self.feed_threads_few(prog, chunk, whole_chars, sink))
            {
                return self.check_limit(prog, max_held, whole_chars, sink);
            }
            return self.feed_small(prog, chunk, whole_chars, max_held, sink);
        }
        self.feed_segments(prog, chunk, whole_chars, max_held, sink)
    }

    /// The thread matcher's token path (`threads::token`), for a program
    /// whose rules are all on it (`Program::thread_tokens`): when nothing
    /// is decided or suppressed and the matcher can step `chunk` where it
    /// is, releases what comes before the earliest live position, as
    /// `advance` would, and returns true. Returns false, having changed
    /// nothing, otherwise.
    ///
    /// Where that position is in the chunk, the held text and the chunk's
    /// prefix are given to the sink as they are, and only the rest of the
    /// chunk goes on the tape, after the look-behind the matcher needs.
    ///
    /// With `AGAIN`, the matcher's `step_token_again`: the chunk where
    /// the first try met a second thread.
    #[inline(always)]
    fn feed_threads_token<const AGAIN: bool>(
        &mut self,
        prog: &Program,
        chunk: &[u8],
        whole_chars: bool,
        sink: &mut impl Sink,
    ) -> bool {
        debug_assert!(!self.stopped);
        if chunk.is_empty() || self.suppress.is_some() || self.decided != NONE_DECIDED {
            return false;
        }
        // A `&str` feed after a byte feed that cut a character: the
        // general path moves the release point back over the cut.
        if whole_chars && is_continuation(chunk[0]) {
            return false;
        }
        let (Some(t), Some(p)) = (&mut self.threads, &prog.threads) else {
            return false;
        };
        let Some(live) = t.step_token::<AGAIN>(p, &self.tape, chunk) else {
            return false;
        };
        self.token = false;
        let offset = self.tape.offset();
        match live.checked_sub(offset) {
            Some(mut cut) => {
                // Nothing before the chunk is held: the tape's text is
                // released, then the chunk up to `cut` in place.
                while whole_chars && cut > 0 && cut < chunk.len() && is_continuation(chunk[cut]) {
                    cut -= 1;
                }
                self.release(offset, sink);
                if cut > 0 {
                    sink.input(chunk, 0..cut);
                }
                self.tape.push_released(chunk, cut);
            }
            None => {
                self.tape.push(chunk);
                if live > self.tape.emitted() {
                    self.release_live(prog, live, whole_chars, sink);
                } else {
                    // Held from where the last feed released to (a
                    // thread begun in an earlier chunk: a long word, a
                    // `<think>` block): `release_live` would release
                    // nothing. Its compaction waits for the next feed
                    // that releases: the tape's dead bytes grow only with
                    // a release.
                    self.check_invariants(prog);
                }
                return true;
            }
        }
        self.check_invariants(prog);
        true
    }

    /// `feed_threads_token` again, for a chunk the first try left to the
    /// general path: it takes the chunk where a few threads are alive at
    /// once. Out of line, so that the first try stays small.
    #[inline(never)]
    fn feed_threads_few(
        &mut self,
        prog: &Program,
        chunk: &[u8],
        whole_chars: bool,
        sink: &mut impl Sink,
    ) -> bool {
        self.feed_threads_token::<true>(prog, chunk, whole_chars, sink)
    }

    /// A token-sized chunk, fed whole as one piece: scanning it in place
    /// first would save a copy of a few bytes at the price of more work per
    /// feed than the copy, and releases the same text. Out of line, so that
    /// the matchers' quick scans and the release inline here.
    #[inline(never)]
    fn feed_small(
        &mut self,
        prog: &Program,
        chunk: &[u8],
        whole_chars: bool,
        max_held: usize,
        sink: &mut impl Sink,
    ) -> Result<(), Halt> {
        self.feed_piece(prog, chunk, whole_chars, sink);
        self.check_limit(prog, max_held, whole_chars, sink)
    }

    /// The main loop over a chunk longer than a token: decided literals
    /// where the chunk is, idle text passed through, the rest fed in
    /// segments, the limit checked after each.
    #[inline(never)]
    fn feed_segments(
        &mut self,
        prog: &Program,
        chunk: &[u8],
        whole_chars: bool,
        max_held: usize,
        sink: &mut impl Sink,
    ) -> Result<(), Halt> {
        let mut at = 0;
        let mut segment = SEGMENT;
        while at < chunk.len() {
            at = self.feed_literals_in_place(prog, chunk, at, whole_chars, sink);
            if self.stopped {
                return Err(Halt::Stopped);
            }
            if at == chunk.len() {
                // Idle: nothing is held, so there is no limit to check.
                return Ok(());
            }
            if self.is_idle(prog) {
                // Text that no match can touch goes straight from `chunk` to
                // the sink, with no copy into the stream (a thread never
                // starts inside a character, so this is a boundary).
                let q = self.idle_prefix(prog, &chunk[at..]);
                if q > 0 {
                    sink.input(chunk, at..at + q);
                    at += q;
                }
                if at == chunk.len() {
                    return Ok(());
                }
            }
            let rest = &chunk[at..];
            let mut n = segment.min(rest.len());
            while whole_chars && n < rest.len() && is_continuation(rest[n]) {
                n += 1;
            }
            segment = (segment * 2).min(MAX_SEGMENT);
            let now = &rest[..n];
            // With more to come, the stream may hand back the end of `now`
            // (bytes it proved no match starts before, left unscanned), to
            // be scanned in place with what follows.
            let back = if n < rest.len() {
                self.feed_part(prog, now, whole_chars, sink)
            } else {
                self.feed(prog, now, whole_chars, sink);
                0
            };
            at += n - back;
            self.check_limit(prog, max_held, whole_chars, sink)?;
        }
        Ok(())
    }

    /// After a segment: the stopped check, and the held limit.
    #[inline(always)]
    fn check_limit(
        &mut self,
        prog: &Program,
        max_held: usize,
        whole_chars: bool,
        sink: &mut impl Sink,
    ) -> Result<(), Halt> {
        if self.stopped {
            return Err(Halt::Stopped);
        }
        if self.tape.held() > max_held {
            return self.over_limit(prog, max_held, whole_chars, sink);
        }
        Ok(())
    }

    /// Applies the held-limit policy: fails (dropping the held text), or
    /// releases the policy's text in place of what is held and pending.
    #[cold]
    #[inline(never)]
    pub(crate) fn over_limit(
        &mut self,
        prog: &Program,
        max_held: usize,
        whole_chars: bool,
        sink: &mut impl Sink,
    ) -> Result<(), Halt> {
        let held = self.tape.held();
        if held <= max_held {
            return Ok(());
        }
        match &prog.held_policy {
            HeldLimit::Fail => {
                self.discard_held(prog);
                Err(Halt::HeldLimit { held })
            }
            HeldLimit::Replace(text) => {
                self.suppress_pending(prog, text.as_bytes(), whole_chars, sink);
                if self.stopped {
                    return Err(Halt::Stopped);
                }
                Ok(())
            }
        }
    }

    /// Feeds a chunk and releases what is decided. With `whole_chars`, the
    /// release point never falls inside a UTF-8 character. While the stream
    /// is idle, callers first give the chunk to `idle_prefix`, which
    /// releases in place what comes before the first place a match could
    /// start, and feed the rest.
    #[inline(always)]
    fn feed(&mut self, prog: &Program, chunk: &[u8], whole_chars: bool, sink: &mut impl Sink) {
        self.token = false;
        if chunk.len() > PIECE && prog.threads.is_some() && prog.literal.is_some() {
            let mut rest = chunk;
            while !rest.is_empty() {
                let mut n = PIECE.min(rest.len());
                // A `&str` stream's tape ends on a character boundary.
                while whole_chars && n < rest.len() && is_continuation(rest[n]) {
                    n += 1;
                }
                self.feed_piece(prog, &rest[..n], whole_chars, sink);
                if self.stopped {
                    return;
                }
                rest = &rest[n..];
            }
            return;
        }
        self.feed_piece(prog, chunk, whole_chars, sink);
    }

    /// `feed` without the cut into pieces: for a chunk both matchers take
    /// at once (at most `PIECE` bytes, or any chunk with one matcher), the
    /// common small feed.
    #[inline(always)]
    fn feed_piece(
        &mut self,
        prog: &Program,
        chunk: &[u8],
        whole_chars: bool,
        sink: &mut impl Sink,
    ) {
        self.token = false;
        // A stopped stream is failed and reset by its owner before any
        // other feed.
        debug_assert!(!self.stopped);
        if chunk.is_empty() {
            return;
        }
        self.tape.push(chunk);
        self.advance(prog, whole_chars, sink);
    }

    /// Steps a token-sized chunk when every rule is a literal and the
    /// literal matcher only follows its automaton (the usual state between
    /// feeds), where it is, without changing the stream: when no literal
    /// matches in it, returns what the general path would do, for
    /// `commit_literals`. The caller emits, in this order,
    /// `tape.held_before(feed.safe)` (bytes the stream held before) and
    /// `chunk[..feed.cut]` (with `whole_chars`, a character boundary: no
    /// literal starts inside a character), then commits.
    ///
    /// Returns `None` when this does not apply or a literal matches in the
    /// chunk: the caller then feeds the chunk the general way, which
    /// decides the match. With one matcher and nothing decided there is
    /// nothing to merge, so this is the general path's result at a
    /// fraction of its cost. (Two steps rather than a callback, so that
    /// the caller's output code inlines.)
    #[inline(always)]
    fn step_literals(
        &self,
        prog: &Program,
        chunk: &[u8],
        whole_chars: bool,
    ) -> Option<LiteralFeed> {
        let p = prog.literal.as_ref()?;
        // Where a literal starts inside a character (a regex's bytes), the
        // general path moves the release point back to a boundary.
        let tokens = if whole_chars {
            prog.literal_tokens_str
        } else {
            prog.literal_tokens
        };
        // `chunk.len()` from 1 to `SMALL_FEED`, in one comparison; the
        // flag implies `tokens` (see `commit_literals`).
        if chunk.len().wrapping_sub(1) >= SMALL_FEED
            || !(self.token || tokens && self.token_ready())
        {
            return None;
        }
        debug_assert!(tokens);
        debug_assert!(self.token_ready());
        debug_assert!(!self.stopped && self.decided == NONE_DECIDED);
        let sid = self.literals.step_plain(p, chunk)?;
        let offset = self.tape.offset();
        let end = offset + chunk.len();
        // The least live position: what the general path releases up to.
        let held = p.held_in(sid);
        Some(match chunk.len().checked_sub(held) {
            // All the tape held is released, and the chunk up to `cut`.
            Some(cut) => LiteralFeed {
                state: p.plain_state(sid),
                held,
                end,
                safe: offset,
                cut,
            },
            // The held prefix starts before the chunk: only what the tape
            // held before it is released.
            None => LiteralFeed {
                state: p.plain_state(sid),
                held,
                end,
                safe: end - held,
                cut: 0,
            },
        })
    }

    /// `step_literals` for a chunk in which literals match (it returned
    /// `None`): when each match in it is decided where it ends (no longer
    /// literal goes on from its state), ends at a character boundary (with
    /// `whole_chars`) and is of a rule the sink accepts unchecked
    /// (`Sink::plain`), puts the chunk on the tape and gives the sink the
    /// text and the matches, as the general path does, and returns true.
    /// Returns false, having done nothing, otherwise (or when
    /// `step_literals` does not apply).
    fn feed_token_matches(
        &mut self,
        prog: &Program,
        chunk: &[u8],
        whole_chars: bool,
        sink: &mut impl Sink,
    ) -> bool {
        let Some(p) = prog.literal.as_ref() else {
            return false;
        };
        // The conditions of `step_literals`.
        let tokens = if whole_chars {
            prog.literal_tokens_str
        } else {
            prog.literal_tokens
        };
        if !tokens || chunk.is_empty() || chunk.len() > SMALL_FEED || !self.token_ready() {
            return false;
        }
        debug_assert!(!self.stopped && self.decided == NONE_DECIDED);
        let from = self.literals.plain_sid(p);
        // Found before anything changes, so that nothing does when this
        // does not apply.
        let Some(found) = p.token_matches(from, chunk, whole_chars, |rule| sink.plain(rule)) else {
            return false;
        };
        let offset = self.tape.offset();
        let end = offset + chunk.len();
        self.tape.compact();
        self.tape.push_reserving(chunk);
        for &(n, rule, len) in &found.matches[..found.len] {
            let (m_start, m_end) = (offset + n - len, offset + n);
            self.tape.set_last_end(Some(m_end));
            self.release(m_start, sink);
            let base = self.tape.base();
            let verdict = sink.matched(self.tape.bytes(), base, rule, m_start - base, m_end - base);
            debug_assert!(matches!(verdict, Verdict::Accept), "a plain rule");
            self.tape.skip_to(m_end);
        }
        let sid = found.sid;
        // Everything before the literal prefix the automaton holds.
        let held = p.held_in(sid);
        debug_assert!(end - held >= self.tape.emitted());
        self.release(end - held, sink);
        self.literals.go_to(p.plain_state(sid), end);
        self.token = prog.literal_tokens_str;
        self.check_invariants(prog);
        true
    }

    /// The stream's conditions of `step_literals`: the literal matcher
    /// only follows its automaton, up to the end of the tape, and nothing
    /// is decided or suppressed.
    fn token_ready(&self) -> bool {
        self.suppress.is_none()
            && self.decided[LITERAL].is_none()
            && self.literals.is_plain()
            && self.literals.scanned() == self.tape.offset()
    }

    /// Applies `feed`, from `step_literals` on `chunk`, once the caller has
    /// emitted what it releases.
    #[inline(always)]
    fn commit_literals(&mut self, prog: &Program, chunk: &[u8], feed: LiteralFeed) {
        let end = feed.end;
        self.literals.go_to(feed.state, end);
        if feed.safe + chunk.len() == end {
            // The tape starts again with the rest of the chunk. (No
            // released byte is kept as look-behind: no literal looks
            // behind.)
            self.tape.restart(end, &chunk[feed.cut..]);
        } else {
            // The chunk goes on the tape, whose bytes before the held
            // prefix are released.
            debug_assert!(feed.cut == 0 && feed.safe >= self.tape.emitted());
            self.tape.compact();
            self.tape.push_reserving(chunk);
            self.tape.skip_to(feed.safe);
        }
        // Only where `&str` feeds may take the path too (no literal
        // starts inside a character), so that the flag stands for the
        // program's condition as well.
        self.token = prog.literal_tokens_str;
        debug_assert_eq!(self.held(), feed.held);
        self.check_invariants(prog);
    }

    /// With the stream idle (`is_idle`), every rule a literal and no
    /// held-limit policy dropping text: scans `hay[at..]`, the next input
    /// (`hay[..at]`, the chunk's start, is fed already), where it is,
    /// deciding each match it decides alone (every literal that could
    /// start at or before its start ends inside `hay`), and gives the sink
    /// the text before it and the match, as `decide` would, without
    /// copying the text onto the tape. Returns where in `hay` it stopped:
    /// the stream is then idle there (the rest is the last few bytes, where
    /// a literal cut by the end of `hay` could start), or at a rejected
    /// match's start, its rule excluded there, or stopped. Returns `at`
    /// when this does not apply. With `whole_chars`, it stops at character
    /// boundaries only, so every text it gives the sink is whole characters.
    fn feed_literals_in_place(
        &mut self,
        prog: &Program,
        hay: &[u8],
        at: usize,
        whole_chars: bool,
        sink: &mut impl Sink,
    ) -> usize {
        self.token = false;
        let Some(p) = prog.literal.as_ref() else {
            return at;
        };
        if !prog.literals_only
            || self.suppress.is_some()
            // A literal starting inside a character could make the text
            // before it end inside one.
            || (whole_chars && p.starts_in_char())
            || !self.is_idle(prog)
        {
            return at;
        }
        debug_assert!(self.threads.is_none() && !self.stopped);
        let mut from = at;
        loop {
            let (rule, start, end) = match p.find_in_place(hay, from) {
                Ok(m) => m,
                Err(mut t) => {
                    // No literal starts inside a character: moving back
                    // to a boundary only releases less.
                    while whole_chars && t > from && t < hay.len() && is_continuation(hay[t]) {
                        t -= 1;
                    }
                    self.release_in_place(hay, from, t, sink);
                    return t;
                }
            };
            if whole_chars && end < hay.len() && is_continuation(hay[end]) {
                // A literal (a regex's bytes) ending inside a character:
                // the tape's path moves the release point to a boundary.
                return from;
            }
            self.release_in_place(hay, from, start, sink);
            let base = self.tape.offset() - start;
            match sink.matched(hay, base, rule, start, end) {
                Verdict::Accept => {
                    let end_at = self.tape.append_released(&hay[start..end]);
                    self.literals.skip_to(end_at);
                    self.tape.set_last_end(Some(end_at));
                    from = end;
                }
                Verdict::Reject => {
                    self.exclude_all(prog, base + start, rule);
                    self.check_invariants(prog);
                    return start;
                }
                Verdict::Stop => {
                    self.stopped = true;
                    return start;
                }
            }
            self.check_invariants(prog);
        }
    }

    /// Gives the sink `hay[from..to]`, text of no match, and records it as
    /// received and released (`feed_literals_in_place`).
    fn release_in_place(&mut self, hay: &[u8], from: usize, to: usize, sink: &mut impl Sink) {
        if to > from {
            sink.input(hay, from..to);
        }
        let end = self.tape.append_released(&hay[from..to]);
        self.literals.skip_to(end);
    }

    /// Feeds a part of the caller's input that more input follows in the
    /// same call, and hands back what it did not take: the hold-back need
    /// not be minimal after this part, so where nothing is alive and the
    /// matchers can only tell that no match starts before the last few
    /// bytes (the window a later needle could reach back into), the stream
    /// stops before them and gives them back, idle, for the caller to scan
    /// in place with what follows. Returns how many bytes at the end of
    /// `chunk` it gave back (a position where a thread may start: never
    /// inside a character).
    fn feed_part(
        &mut self,
        prog: &Program,
        chunk: &[u8],
        whole_chars: bool,
        sink: &mut impl Sink,
    ) -> usize {
        self.token = false;
        // Only the thread matcher can give text back: with the literal
        // matcher too, the part is simply fed.
        let lazy = prog.literal.is_none() && self.suppress.is_none();
        if let Some(t) = &mut self.threads {
            t.set_lazy(lazy);
        }
        self.feed(prog, chunk, whole_chars, sink);
        // `advance` clears it, but an empty chunk never gets there.
        let Some(t) = &mut self.threads else {
            return 0;
        };
        t.set_lazy(false);
        if self.stopped || prog.literal.is_some() {
            return 0;
        }
        let (end, pos) = (self.tape.offset(), t.scanned());
        let back = end - pos;
        let idle = t.is_idle() && self.decided == NONE_DECIDED && self.tape.emitted() == pos;
        if back == 0 || back > chunk.len() || !idle || self.suppress.is_some() {
            return 0;
        }
        if whole_chars && is_continuation(self.tape.at(pos)) {
            // Not reached (a thread never starts inside a character); the
            // caller's slices need a boundary.
            return 0;
        }
        self.tape.unpush(back);
        self.check_invariants(prog);
        back
    }

    /// With nothing held, scans `chunk` where it is and records as released
    /// its part before the first place a match could start, without copying
    /// it; returns the length of that part (which the caller emits). That
    /// place is never a UTF-8 continuation byte.
    #[inline(always)]
    fn idle_prefix(&mut self, prog: &Program, chunk: &[u8]) -> usize {
        self.token = false;
        if !self.is_idle(prog) {
            return 0;
        }
        let mut q = chunk.len();
        if let (Some(t), Some(p)) = (&self.threads, &prog.threads) {
            let lb = self.tape.look_behind(self.tape.offset());
            q = t.skip_idle(p, chunk, 0, lb);
        }
        let mut stepped = false;
        if let Some(p) = &prog.literal {
            // The literal matcher never looks behind (and a literal-only
            // stream's tape may keep no byte before the held ones:
            // `Tape::restart`).
            q = self.literals.skip_idle(p, &chunk[..q], 0, None);
            if prog.threads.is_none() && q < chunk.len() {
                // Only literals: step the automaton over the chunk where it
                // is, so that only what it holds at the end is copied.
                let base = self.tape.offset();
                if let Some(held) = self.literals.run_in_place(p, chunk, q, base) {
                    q = held;
                    stepped = true;
                }
            }
        }
        if q > 0 {
            let end = self.tape.append_released(&chunk[..q]);
            if let Some(t) = &mut self.threads {
                t.skip_to(end);
            }
            if !stepped {
                self.literals.skip_to(end);
            }
        }
        q
    }

    /// Whether nothing is held or alive, so input can be scanned in place.
    #[inline(always)]
    fn is_idle(&self, prog: &Program) -> bool {
        let end = self.tape.offset();
        self.tape.emitted() == end
            && self.decided == NONE_DECIDED
            && self
                .threads
                .as_ref()
                .is_none_or(|t| t.is_idle() && t.scanned() == end)
            && (prog.literal.is_none()
                || (self.literals.is_idle() && self.literals.scanned() == end))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use regex_automata::meta;

    use super::super::{LITERAL, Program, Sink, Source, StreamState, THREADS};
    use super::{PIECE, SEGMENT, SMALL_CHUNK, SMALL_FEED};
    use crate::config::Config;
    use crate::engine::matcher::{Matcher, Verdict};

    /// Writes text as it is and a match as `<rule>`; rejects the matches
    /// of `reject`, and says every other rule is plain.
    #[derive(Default)]
    struct Record {
        out: Vec<u8>,
        reject: Option<usize>,
    }

    impl Sink for Record {
        fn text(&mut self, bytes: &[u8]) {
            self.out.extend_from_slice(bytes);
        }

        fn matched(&mut self, hay: &[u8], _: usize, rule: usize, s: usize, e: usize) -> Verdict {
            if self.reject == Some(rule) {
                return Verdict::Reject;
            }
            assert!(s <= e && e <= hay.len());
            self.out.extend_from_slice(format!("<{rule}>").as_bytes());
            Verdict::Accept
        }

        fn dropped(&mut self, _: usize, _: std::ops::Range<usize>) -> bool {
            unreachable!("no held limit is reached")
        }

        fn plain(&self, rule: usize) -> bool {
            self.reject != Some(rule)
        }
    }

    /// The naive oracle: leftmost-first over the whole input (`=text` as
    /// the escaped text), each match replaced by `<rule>`.
    fn oracle(rules: &[&str], input: &[u8]) -> Vec<u8> {
        let patterns: Vec<String> = rules
            .iter()
            .map(|r| match r.strip_prefix('=') {
                Some(lit) => regex_syntax::escape(lit),
                None => r.to_string(),
            })
            .collect();
        let re = meta::Regex::new_many(&patterns).unwrap();
        let mut out = Vec::new();
        let mut last = 0;
        for m in re.find_iter(input) {
            out.extend_from_slice(&input[last..m.start()]);
            out.extend_from_slice(format!("<{}>", m.pattern().as_usize()).as_bytes());
            last = m.end();
        }
        out.extend_from_slice(&input[last..]);
        out
    }

    /// `rules` as the engine sees them: `=text` is a literal, anything
    /// else a regex.
    fn sources<'a>(rules: &[&'a str]) -> Vec<Source<'a>> {
        rules
            .iter()
            .map(|r| match r.strip_prefix('=') {
                Some(lit) => Source::Literal(lit),
                None => Source::Regex {
                    source: r,
                    literal: None,
                    empty: false,
                    // What the rule set's caseless-regex limit counts;
                    // none of these tests comes near it.
                    caseless: r.contains("(?i"),
                },
            })
            .collect()
    }

    /// Feeds `chunks` through `feed_chunk` and ends the input.
    fn feed(prog: &Program, chunks: &[&[u8]], reject: Option<usize>) -> (Vec<u8>, StreamState) {
        let mut state = StreamState::new(prog);
        let mut sink = Record {
            out: Vec::new(),
            reject,
        };
        for chunk in chunks {
            let done = state.feed_chunk(prog, chunk, false, usize::MAX, || &mut sink);
            assert_eq!(done, Ok(()));
            state.check_invariants(prog);
        }
        assert_eq!(
            state.offset(),
            chunks.iter().map(|c| c.len()).sum::<usize>()
        );
        state.finish(prog, &mut sink);
        (sink.out, state)
    }

    impl Sink for &mut Record {
        fn text(&mut self, bytes: &[u8]) {
            (**self).text(bytes)
        }

        fn matched(&mut self, hay: &[u8], o: usize, rule: usize, s: usize, e: usize) -> Verdict {
            (**self).matched(hay, o, rule, s, e)
        }

        fn dropped(&mut self, rule: usize, span: std::ops::Range<usize>) -> bool {
            (**self).dropped(rule, span)
        }

        fn plain(&self, rule: usize) -> bool {
            (**self).plain(rule)
        }
    }

    /// Cases of the property: each builds a program and runs 300 bytes.
    const CASES: u32 = 64;

    /// `input` cut at `cuts` (modulo its length).
    fn split<'a>(input: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
        let mut at: Vec<usize> = cuts.iter().map(|c| c % (input.len() + 1)).collect();
        at.extend([0, input.len()]);
        at.sort_unstable();
        at.dedup();
        at.windows(2).map(|w| &input[w[0]..w[1]]).collect()
    }

    /// Rule sets for each branch of the loop: literals only (the token
    /// path, in-place literals), regexes only (the in-place idle scan,
    /// segments), both matchers (pieces, the merge and the cap).
    const SETS: &[&[&str]] = &[
        &["=key", "=secret", "=sec"],
        &[r"\w+@\w+\.com", r"\d{3}-\d{4}"],
        &[r"\d", "=a", r"\w+", "=key"],
        &["=key", r"k\w*", r"\d{3}-\d{4}"],
    ];

    /// A long input with matches of every set at both ends of segments
    /// and pieces.
    fn long_input() -> Vec<u8> {
        let mut v = Vec::new();
        let mut i = 0;
        while v.len() < 4 * SEGMENT + 3 * PIECE {
            let word: &[u8] = match i % 7 {
                0 => b"key ",
                1 => b"bob@example.com ",
                2 => b"555-1234 ",
                3 => b"secrets ",
                4 => b"a1 ",
                _ => b"plain text here ",
            };
            v.extend_from_slice(word);
            i += 1;
        }
        v
    }

    /// The loop's branches, against the oracle, for chunk sizes around
    /// each threshold (the token path's, the small chunk's, a segment's, a
    /// piece's) and one chunk of everything.
    #[test]
    fn every_branch_gives_the_whole_text_output() {
        let input = long_input();
        for rules in SETS {
            let want = oracle(rules, &input);
            for config in [Config::new(), Config::new().literal_matcher(false)] {
                let prog = Program::new(&sources(rules), &config).unwrap();
                for size in [
                    1,
                    5,
                    SMALL_CHUNK,
                    SMALL_FEED + 1,
                    PIECE + 3,
                    SEGMENT + 1,
                    input.len(),
                ] {
                    let chunks: Vec<&[u8]> = input.chunks(size).collect();
                    let (out, _) = feed(&prog, &chunks, None);
                    assert!(
                        out == want,
                        "{rules:?}, chunks of {size}: {}",
                        String::from_utf8_lossy(&out)
                    );
                }
            }
        }
    }

    /// A rejected match is scanned again from its start without its rule
    /// (and every rule before it, which did not match there).
    #[test]
    fn a_rejected_match_is_scanned_again() {
        let rules = [r"\w+@\w+\.com", r"\w+"];
        let input = b"mail bob@example.com now";
        let prog = Program::new(&sources(&rules), &Config::new()).unwrap();
        for size in [1, 3, input.len()] {
            let chunks: Vec<&[u8]> = input.chunks(size).collect();
            let (out, _) = feed(&prog, &chunks, Some(0));
            assert_eq!(out, b"<1> <1>@<1>.<1> <1>".to_vec(), "chunks of {size}");
        }
    }

    /// The matcher list: every rule is on exactly one matcher, listed by
    /// its slot; a program builds only the matchers it has rules for, and
    /// a stream holds only those.
    #[test]
    fn every_rule_is_on_one_listed_matcher() {
        let both = Program::new(&sources(&[r"\d", "=a", r"\w+"]), &Config::new()).unwrap();
        assert_eq!(both.rules[THREADS], vec![0, 2]);
        assert_eq!(both.rules[LITERAL], vec![1]);
        let literals = Program::new(&sources(&["=a", "=b"]), &Config::new()).unwrap();
        assert!(literals.threads.is_none() && literals.literal.is_some());
        assert_eq!(literals.rules[LITERAL], vec![0, 1]);
        assert!(StreamState::new(&literals).threads.is_none());
        let regexes = Program::new(&sources(&[r"\d+", r"[a-z]+"]), &Config::new()).unwrap();
        assert!(regexes.literal.is_none() && regexes.threads.is_some());
        assert_eq!(regexes.rules[THREADS], vec![0, 1]);
        let off = Program::new(
            &sources(&["=a", "=b"]),
            &Config::new().literal_matcher(false),
        );
        assert_eq!(off.unwrap().rules[THREADS], vec![0, 1]);
    }

    /// Both matchers follow the text: after a feed each has scanned to
    /// the end of the tape (nothing decided), and a literal `a` decided
    /// at a start where the threads' `\w+` is alive waits for it (the cap
    /// of the merge), then loses to the earlier rule `\d` only where it
    /// matches.
    #[test]
    fn both_listed_matchers_scan_and_merge() {
        let rules = [r"\d", "=a", r"\w+"];
        let prog = Program::new(&sources(&rules), &Config::new()).unwrap();
        let (out, state) = feed(&prog, &[b"xa a", b"b 1a"], None);
        assert_eq!(out, oracle(&rules, b"xa ab 1a"));
        assert_eq!(out, b"<2> <1><2> <0><1>".to_vec());
        assert_eq!(state.offset(), 0, "finish resets the stream");
        let mut state = StreamState::new(&prog);
        let mut sink = Record::default();
        let done = state.feed_chunk(&prog, b"zz yy", false, usize::MAX, || &mut sink);
        assert_eq!(done, Ok(()));
        let threads = state.threads.as_ref().unwrap();
        assert_eq!(threads.scanned(), 5);
        assert_eq!(state.literals.scanned(), 5);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(CASES))]
        #[test]
        fn any_split_gives_the_whole_text_output(
            input in "[a-z0-9 @.-]{0,300}",
            cuts in prop::collection::vec(0usize..400, 0..8),
            set in 0usize..SETS.len(),
            literal_matcher in any::<bool>(),
        ) {
            let rules = SETS[set];
            let config = Config::new().literal_matcher(literal_matcher);
            let prog = Program::new(&sources(rules), &config).unwrap();
            let (out, _) = feed(&prog, &split(input.as_bytes(), &cuts), None);
            prop_assert_eq!(out, oracle(rules, input.as_bytes()));
        }
    }
}
