//! The streaming engine: a tape and its matchers.
//!
//! The [`tape`] holds the bytes a stream has received and not yet released
//! (plus a few released ones as look-behind). Matchers (see [`matcher`])
//! follow the rules over it and report, as values, where a match could
//! still start and which candidates they have decided. The stream
//! ([`StreamState`]) merges their reports by (start, rule index), gives
//! decided text and matches to a [`Sink`], and releases everything before
//! the earliest position where a match could still start.
//!
//! The sink judges each decided match ([`Verdict`]): it accepts it (its
//! output written, the stream goes on from its end), rejects it (the match
//! is not one: every matcher goes on from its start with the rejected rule
//! and those before it excluded there, `Matcher::exclude`), or stops the
//! stream before it (nothing more is scanned or released until a reset).
//!
//! One matcher follows every rule today: [`threads`], a DFA (see `dfa`) stepped
//! as a set of threads, with the Thompson NFA (`nfa`) as its exact
//! fallback, three memos for its fast paths (`single` for one live thread,
//! `tuples` for many, `futures`), and a `gate` that skips text where no
//! match can start when every rule has a required literal near its start.
//!
//! # Invariants of a stream
//!
//! Between calls (checked by `StreamState::check_invariants` in debug
//! builds), with `emitted` the tape's release point, `offset` its end
//! (bytes received), and for each matcher `scanned` the next byte it steps
//! and `live` its earliest live position (`Matcher::earliest_live`):
//!
//! - `held == offset - emitted`;
//! - `emitted <= scanned <= offset` for every matcher;
//! - `emitted <= live <= scanned` for every matcher, except while a
//!   held-limit policy drops a pending candidate's text (`suppress`): then
//!   the text from the candidate's start is dropped as it is scanned;
//! - after a feed, `emitted` is the least `live` (moved back to a character
//!   boundary for `&str` streams): hold-back is minimal;
//! - a candidate is decided only when no matcher has a live start before
//!   its start, or at its start with a lower rule index (see
//!   [`matcher::pick`]); with one matcher, a decided candidate is released
//!   at once, so none is pending between calls.

mod dfa;
mod futures;
mod gate;
mod matcher;
mod nfa;
mod single;
mod tape;
mod threads;
mod tuples;

pub(crate) use tape::extend_small;

use matcher::{Decided, Live, Matcher, Scan};
use tape::Tape;
use threads::Threads;

use crate::config::Config;
use crate::error::Error;

#[inline(always)]
fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

/// The length of the UTF-8 encoding that starts with `b`, or 1 where `b`
/// cannot start one (as `regex-automata`'s own decoder sees it).
fn utf8_len(b: u8) -> usize {
    match b {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => 1,
    }
}

/// What a sink makes of a decided match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The match stands (the sink wrote its output); the stream goes on
    /// from its end.
    Accept,
    /// The match is not a match: the stream scans again from its start as
    /// if its rule, and every rule before it, did not match there (rules
    /// before it did not: it won there). See `Matcher::exclude`.
    Reject,
    /// The stream stops before the match: nothing from its start on is
    /// released, by this call or any later one, until a reset.
    Stop,
}

/// Where decided text goes: raw text, and decided matches with their rule.
pub(crate) trait Sink {
    /// Text that is part of no match.
    fn text(&mut self, bytes: &[u8]);
    /// A decided match of `rule` over `hay[start..end]`; `offset` is the
    /// stream offset of `hay[0]`, and `hay` reaches past `end` far enough for
    /// look-ahead (or to the end of input). On [`Verdict::Accept`] the sink
    /// has written the match's output.
    fn matched(
        &mut self,
        hay: &[u8],
        offset: usize,
        rule: usize,
        start: usize,
        end: usize,
    ) -> Verdict;
    /// A decided match of `rule` over the stream offsets `span`, whose text
    /// a held-limit policy dropped (it is no longer on the tape, and has no
    /// output): returns true when the stream must stop there all the same.
    fn dropped(&mut self, rule: usize, span: std::ops::Range<usize>) -> bool;
}

/// The immutable, shared part of the engine: each matcher's program.
#[derive(Debug)]
pub(crate) struct Program {
    threads: threads::Program,
}

impl Program {
    /// Compiles the rules' patterns.
    pub(crate) fn new(sources: &[String], config: &Config) -> Result<Program, Error> {
        Ok(Program {
            threads: threads::Program::new(sources, config)?,
        })
    }

    /// The size of the dense DFA the streams step, if they step one.
    pub(crate) fn dense_size(&self) -> Option<usize> {
        self.threads.dense_size()
    }
}

/// One stream's state: the tape and its matchers. Positions are stream
/// offsets. See the module docs for its invariants.
#[derive(Debug)]
pub(crate) struct StreamState {
    tape: Tape,
    threads: Threads,
    /// A candidate `threads` decided that the stream has not released yet
    /// (another matcher could still beat it).
    decided: Option<Decided>,
    /// Set after the held limit was hit under a replacing policy: the start
    /// of the pending candidate whose text is being dropped. The matchers
    /// follow only that candidate (`Matcher::focus`), and its text is
    /// dropped as it is scanned, until its match is decided or it dies;
    /// then the stream goes on from there.
    suppress: Option<usize>,
    /// Set when the limit was hit again while a suppressed candidate had a
    /// match and might grow it: the text after that match was dropped, so
    /// the suppression ends where the candidate stops, not at its match.
    suppress_tail: bool,
    /// Set when the sink stopped the stream (`Verdict::Stop`): nothing is
    /// scanned or released until a reset.
    stopped: bool,
}

impl StreamState {
    pub(crate) fn new(prog: &Program) -> StreamState {
        StreamState {
            tape: Tape::default(),
            threads: Threads::new(&prog.threads),
            decided: None,
            suppress: None,
            suppress_tail: false,
            stopped: false,
        }
    }

    /// Forgets the stream; keeps the allocations and the DFA cache.
    pub(crate) fn reset(&mut self) {
        self.tape.reset();
        self.threads.reset();
        self.decided = None;
        self.suppress = None;
        self.suppress_tail = false;
        self.stopped = false;
    }

    /// Whether the sink stopped the stream (see [`Verdict::Stop`]).
    pub(crate) fn is_stopped(&self) -> bool {
        self.stopped
    }

    /// Bytes received but not yet released.
    pub(crate) fn held(&self) -> usize {
        self.tape.held()
    }

    /// The total number of bytes fed so far.
    pub(crate) fn offset(&self) -> usize {
        self.tape.offset()
    }

    /// Feeds a chunk and releases what is decided. With `whole_chars`, the
    /// release point never falls inside a UTF-8 character. While the stream
    /// is idle, callers first give the chunk to `idle_prefix`, which
    /// releases in place what comes before the first place a match could
    /// start, and feed the rest.
    #[inline(always)]
    pub(crate) fn feed(
        &mut self,
        prog: &Program,
        chunk: &[u8],
        whole_chars: bool,
        sink: &mut impl Sink,
    ) {
        // A stopped stream is failed and reset by its owner before any
        // other feed.
        debug_assert!(!self.stopped);
        if chunk.is_empty() {
            return;
        }
        self.tape.push(chunk);
        self.advance(prog, whole_chars, sink);
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
    pub(crate) fn feed_part(
        &mut self,
        prog: &Program,
        chunk: &[u8],
        whole_chars: bool,
        sink: &mut impl Sink,
    ) -> usize {
        self.threads.set_lazy(self.suppress.is_none());
        self.feed(prog, chunk, whole_chars, sink);
        // `advance` clears it, but an empty chunk never gets there.
        self.threads.set_lazy(false);
        if self.stopped {
            return 0;
        }
        let (end, pos) = (self.tape.offset(), self.threads.scanned());
        let back = end - pos;
        let idle = self.threads.is_idle() && self.decided.is_none() && self.tape.emitted() == pos;
        if back == 0 || back > chunk.len() || !idle || self.suppress.is_some() {
            return 0;
        }
        if whole_chars && is_continuation(self.tape.at(pos)) {
            // Not reached (a thread never starts inside a character); the
            // caller's slices need a boundary.
            return 0;
        }
        self.tape.unpush(back);
        self.check_invariants();
        back
    }

    /// Steps what was fed and releases what is decided.
    #[inline(always)]
    fn advance(&mut self, prog: &Program, whole_chars: bool, sink: &mut impl Sink) {
        // Most feeds end with nothing decided: the quick path keeps them
        // out of the merge.
        if self.decided.is_some() || !self.threads.scan_quick(&prog.threads, &self.tape) {
            self.run(prog, false, sink);
        }
        self.threads.set_lazy(false);
        if self.stopped {
            return;
        }
        if self.suppress.is_some() {
            // Drop what is scanned, except after a recorded match, which
            // the candidate may not extend (the text after it is then
            // scanned again).
            let pos = self.threads.scanned();
            let upto = self.threads.recorded_end().map_or(pos, |e| e.min(pos));
            self.release(upto, sink);
            self.tape.compact();
            self.check_invariants();
            return;
        }
        let mut safe = self.earliest_live();
        if whole_chars {
            safe = self.tape.boundary_before(safe);
        }
        self.release(safe, sink);
        self.tape.compact();
        self.check_invariants();
    }

    /// The earliest position where a match could still start.
    #[inline(always)]
    fn earliest_live(&self) -> usize {
        match &self.decided {
            Some(d) => d.span.start,
            None => self.threads.earliest_live(),
        }
    }

    /// Scans with every matcher and decides what can be decided, until the
    /// matchers need more input (or, with `eof`, until everything is
    /// decided).
    fn run(&mut self, prog: &Program, eof: bool, sink: &mut impl Sink) {
        loop {
            if self.stopped {
                return;
            }
            if self.decided.is_none() {
                match self.threads.scan(&prog.threads, &self.tape, eof) {
                    Scan::Done => {}
                    Scan::Decided(d) => self.decided = Some(d),
                    Scan::Died(p) => {
                        self.end_suppress(p);
                        continue;
                    }
                }
            }
            if self.decided.is_none() {
                // No matcher decided anything: nothing to merge.
                return;
            }
            let live = [Live {
                start: self.threads.earliest_live(),
                first_rule: self.threads.first_rule(),
            }];
            if matcher::pick(std::slice::from_ref(&self.decided), &live).is_none() {
                return;
            }
            if let Some(d) = self.decided.take() {
                self.decide(d, sink);
            }
        }
    }

    /// Ends the input and releases everything.
    pub(crate) fn finish(&mut self, prog: &Program, sink: &mut impl Sink) {
        if self.stopped {
            return;
        }
        self.run(prog, true, sink);
        if self.stopped {
            return;
        }
        debug_assert!(self.decided.is_none() && self.threads.earliest_candidate().is_none());
        self.check_invariants();
        let end = self.offset();
        self.release(end, sink);
        self.reset();
    }

    /// Drops everything held and continues as if the stream had been
    /// released up to here (used by the held-limit policies).
    pub(crate) fn discard_held(&mut self) {
        // A UTF-8 character cut at the end of the buffer is kept as input,
        // so the output does not carry the tail of a character whose head
        // was discarded.
        let end = self.tape.end_before_cut();
        self.tape.skip_to(end);
        self.tape.set_last_end(None);
        self.threads.discard(end);
        self.decided = None;
        self.suppress = None;
        self.suppress_tail = false;
        self.tape.compact();
        self.check_invariants();
    }

    /// Applies a replacing held-limit policy: drops the held text and keeps
    /// dropping the pending candidate's text until its match is decided or
    /// it can no longer match, so nothing a rule covers is released.
    /// `text` is released in place of the held text when this starts a
    /// suppression; when one is already running, the text it holds is
    /// dropped too, with no second `text`.
    pub(crate) fn suppress_pending(
        &mut self,
        prog: &Program,
        text: &[u8],
        whole_chars: bool,
        sink: &mut impl Sink,
    ) {
        if self.suppress.is_some() {
            // A greedy match that keeps growing after its first end: the
            // text held after that end goes too, and so does the rest of
            // the candidate.
            let upto = self.threads.scanned();
            self.suppress_tail = true;
            self.release(upto, sink);
            self.tape.compact();
            return;
        }
        let earliest = match &self.decided {
            Some(d) => Some(d.span.start),
            None => self.threads.earliest_candidate(),
        };
        let Some(start) = earliest else {
            self.discard_held();
            sink.text(text);
            return;
        };
        // `emitted` is at or before `start`, so the candidate's bytes are
        // still on the tape for the matchers to follow it from there.
        self.release(start, sink);
        sink.text(text);
        self.decided = None;
        self.threads.focus(start);
        self.suppress = Some(start);
        self.advance(prog, whole_chars, sink);
    }

    /// Ends a suppression at `p`: what comes before is dropped, and the
    /// stream goes on from the next character boundary.
    fn end_suppress(&mut self, p: usize) {
        let p = self.tape.boundary_after(p);
        self.tape.skip_to(p);
        self.threads.restart(p);
        self.suppress = None;
        self.suppress_tail = false;
    }

    /// With nothing held, scans `chunk` where it is and records as released
    /// its part before the first place a match could start, without copying
    /// it; returns the length of that part (which the caller emits). That
    /// place is never a UTF-8 continuation byte.
    #[inline(always)]
    pub(crate) fn idle_prefix(&mut self, prog: &Program, chunk: &[u8]) -> usize {
        if !self.is_idle() {
            return 0;
        }
        let lb = self.tape.look_behind(self.tape.offset());
        let q = self.threads.skip_idle(&prog.threads, chunk, 0, lb);
        if q > 0 {
            let end = self.tape.append_released(&chunk[..q]);
            self.threads.skip_to(end);
        }
        q
    }

    /// Whether nothing is held or alive, so input can be scanned in place.
    #[inline(always)]
    pub(crate) fn is_idle(&self) -> bool {
        let end = self.tape.offset();
        self.threads.is_idle()
            && self.threads.scanned() == end
            && self.tape.emitted() == end
            && self.decided.is_none()
    }

    /// Releases the text before `upto`: gives it to the sink, or drops it
    /// under a suppression.
    fn release(&mut self, upto: usize, sink: &mut impl Sink) {
        let suppressed = self.suppress.is_some();
        let bytes = self.tape.release(upto);
        if !suppressed && !bytes.is_empty() {
            sink.text(bytes);
        }
    }

    /// Releases a decided candidate: the text before it, then the match;
    /// every matcher goes on from its end. Under a suppression, the
    /// candidate is the suppressed one: its text and replacement are
    /// dropped (the policy's text stands for them).
    fn decide(&mut self, d: Decided, sink: &mut impl Sink) {
        let (start, end) = (d.span.start, d.span.end);
        let last_end = self.tape.last_end();
        self.tape.set_last_end(Some(end));
        if self.suppress.is_some() {
            if sink.dropped(d.rule, d.span.clone()) {
                self.stopped = true;
                return;
            }
            let stop = if self.suppress_tail {
                // Where the candidate stopped.
                end.max(self.threads.scanned())
            } else {
                end
            };
            self.end_suppress(stop);
            return;
        }
        self.release(start, sink);
        let base = self.tape.base();
        match sink.matched(self.tape.bytes(), base, d.rule, start - base, end - base) {
            Verdict::Accept => {
                self.tape.skip_to(end);
                self.threads.restart(end);
            }
            Verdict::Reject => {
                // Not a match: an empty match at the previous end is still
                // skipped, and the text from `start` is scanned again.
                self.tape.set_last_end(last_end);
                self.threads.exclude(start, d.rule);
            }
            Verdict::Stop => self.stopped = true,
        }
    }

    /// Checks the invariants in the module docs (debug builds only).
    #[inline(always)]
    fn check_invariants(&self) {
        #[cfg(debug_assertions)]
        {
            let tape = &self.tape;
            let (emitted, offset) = (tape.emitted(), tape.offset());
            tape.check_invariants();
            debug_assert_eq!(tape.held(), offset - emitted);
            let scanned = self.threads.scanned();
            debug_assert!(emitted <= scanned && scanned <= offset, "{self:?}");
            debug_assert!(self.decided.is_none(), "one matcher: decided at once");
            let live = self.threads.earliest_live();
            debug_assert!(live <= scanned, "{self:?}");
            if self.suppress.is_none() {
                debug_assert!(emitted <= live, "{self:?}");
            }
            self.threads.check_invariants(tape);
        }
    }
}
