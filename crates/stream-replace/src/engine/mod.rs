//! The streaming engine.
//!
//! One lazy DFA over all rules (leftmost-first, anchored) is stepped a byte
//! at a time as a set of live threads, one per candidate start position,
//! in start order (which is priority order). A match state records the
//! global best match and drops every later thread; two threads in the same
//! state have the same future, so only the earlier is kept; a match is
//! decided once a best match exists and no thread is left. Everything
//! before the earliest live thread (or best match) can no longer be part of
//! a match and is released at once.
//!
//! Where the lazy DFA cannot go on (a quit byte: a non-ASCII byte when a
//! rule uses Unicode word look-around; or a cache clear, which invalidates
//! the states held), the held region is replayed from its earliest live
//! start with the same thread logic over the Thompson NFA (see `nfa`), and
//! the stream goes back to the DFA once nothing is alive.
//!
//! Two fast paths keep the common cases cheap. With at most one live thread
//! and no recorded match, the next step depends only on that thread's state
//! and the kind of the byte before; `single` memoises these configurations
//! and their transitions, so such text costs one table lookup per byte.
//! When the earliest of several threads has lived `SUSPEND_AFTER` bytes (an
//! open `<think>` with words inside), its match would beat every later
//! thread, so it is stepped alone; if it dies without a match, the text
//! after its start is replayed with every thread, at most once per byte.

mod nfa;
mod single;

use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::hybrid::LazyStateID;
use regex_automata::nfa::thompson::{self, WhichCaptures, NFA};
use regex_automata::util::prefilter::Prefilter;
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;
use regex_automata::{Anchored, MatchKind, Span};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::error::Error;
use crate::rules::Config;

/// Bytes of already-released text kept before the held region, as
/// look-behind context (the longest UTF-8 character).
const CONTEXT: usize = 4;

/// The immutable, shared part of the engine.
#[derive(Debug)]
pub(crate) struct Program {
    dfa: DFA,
    /// For each look-behind (index 0: start of input, `1 + b`: byte `b`),
    /// 256 bits: whether a thread started after it survives its first
    /// byte. Quit bytes and unknown starts are set.
    may_start: Box<[[u64; 4]; 257]>,
    /// Whether no thread can ever start.
    never: bool,
    /// Finds where a match may start, when every rule starts with one of a
    /// small set of literals; used to skip text where nothing is alive.
    prefilter: Option<Prefilter>,
    /// Byte classes for `single`: bytes in one class step every DFA state
    /// alike, are all UTF-8 continuation bytes or none, and are of one
    /// look-behind kind.
    classes: [u8; 256],
    nclasses: usize,
    /// The bytes a match can start with (an over-approximation from the
    /// NFA; every byte when a rule can match empty).
    first: [u64; 4],
    /// Whether the fast paths run (idle scans, the prefilter, the tight
    /// loops, stepping a long-lived thread alone, settling at the end of a
    /// feed). Off, every byte goes through the general thread loop, so the
    /// tests can check each fast path against it.
    fast: bool,
}

/// Look-behind kinds, finer than the DFA's start states: start of input,
/// `\n`, `\r`, ASCII word byte, other ASCII byte, non-ASCII byte.
const KIND_TEXT: u8 = 0;

/// The look-behind kind of a byte.
#[inline(always)]
fn byte_kind(b: u8) -> u8 {
    match b {
        b'\n' => 1,
        b'\r' => 2,
        b'0'..=b'9' | b'A'..=b'Z' | b'a'..=b'z' | b'_' => 3,
        0..=0x7F => 4,
        _ => 5,
    }
}

impl Program {
    pub(crate) fn new(sources: &[String], config: &Config) -> Result<Program, Error> {
        let dfa = DFA::builder()
            .configure(
                DFA::config()
                    .match_kind(MatchKind::LeftmostFirst)
                    .unicode_word_boundary(true)
                    .cache_capacity(config.get_cache_capacity())
                    .skip_cache_capacity_check(true),
            )
            .thompson(
                thompson::Config::new()
                    .nfa_size_limit(Some(config.get_size_limit()))
                    .which_captures(WhichCaptures::None),
            )
            .build_many(sources)
            .map_err(Error::from_dfa)?;
        let mut cache = dfa.create_cache();
        let mut may_start = Box::new([[0u64; 4]; 257]);
        for (lb, row) in may_start.iter_mut().enumerate() {
            *row = start_row(&dfa, &mut cache, (lb > 0).then(|| (lb - 1) as u8));
        }
        let first = nfa::first_bytes(dfa.get_nfa());
        let never = sources.is_empty() || may_start.iter().all(|r| *r == [0; 4]);
        let prefilter = regex_automata::util::syntax::parse_many(sources)
            .ok()
            .and_then(|hirs| Prefilter::from_hirs_prefix(MatchKind::LeftmostFirst, &hirs))
            .filter(|p| p.max_needle_len() > 0);
        let mut classes = [0u8; 256];
        let mut seen: Vec<(u8, bool, u8)> = Vec::new();
        for b in 0..=255u8 {
            let key = (dfa.byte_classes().get(b), is_continuation(b), byte_kind(b));
            let class = match seen.iter().position(|k| *k == key) {
                Some(i) => i,
                None => {
                    seen.push(key);
                    seen.len() - 1
                }
            };
            // At most 256 classes: each byte is in one.
            classes[b as usize] = class as u8;
        }
        Ok(Program {
            dfa,
            may_start,
            never,
            prefilter,
            classes,
            nclasses: seen.len(),
            first,
            fast: config.get_fast_paths(),
        })
    }

    /// The first position in `hay` from `from` where a thread can survive
    /// its first byte, or `hay.len()`; `lb` is the byte before `from`, if
    /// any.
    fn skip_idle(&self, hay: &[u8], from: usize, lb: Option<u8>) -> usize {
        let end = hay.len();
        let mut p = from;
        if self.never {
            return end;
        }
        if !self.fast {
            return p;
        }
        let behind = |p: usize| if p == from { lb } else { Some(hay[p - 1]) };
        if let Some(pre) = &self.prefilter {
            // A literal that starts within the last `tail` bytes may be cut
            // by the end of `hay`: the prefilter cannot see it, so it is
            // blind there. Those positions are checked byte by byte below
            // (once: the next chunk starts after them). A hit inside the
            // tail proves nothing about the tail's earlier positions (a
            // short needle found after the cut-off start of a longer one),
            // so it counts as no hit.
            let tail = pre.max_needle_len() - 1;
            while p + tail < end {
                match pre.find(hay, Span::from(p..end)) {
                    Some(m) if m.start + tail < end => p = m.start,
                    _ => {
                        p = end - tail;
                        break;
                    }
                }
                if self.may_start(behind(p), hay[p]) {
                    return p;
                }
                p += 1;
            }
        }
        let mut row = &self.may_start[behind(p).map_or(0, |b| b as usize + 1)];
        while p < end {
            let b = hay[p];
            if row[(b >> 6) as usize] & (1 << (b & 63)) != 0 {
                break;
            }
            row = &self.may_start[b as usize + 1];
            p += 1;
        }
        p
    }

    pub(crate) fn create_cache(&self) -> Cache {
        self.dfa.create_cache()
    }

    fn nfa(&self) -> &NFA {
        self.dfa.get_nfa()
    }

    /// The look-behind kind of the byte before a position.
    #[inline(always)]
    fn kind(&self, lb: Option<u8>) -> u8 {
        lb.map_or(KIND_TEXT, byte_kind)
    }

    /// Whether a match can start with byte `b`, whatever surrounds it.
    fn can_begin(&self, b: u8) -> bool {
        self.first[(b >> 6) as usize] & (1 << (b & 63)) != 0
    }

    #[inline(always)]
    fn may_start(&self, lb: Option<u8>, b: u8) -> bool {
        let row = &self.may_start[lb.map_or(0, |b| b as usize + 1)];
        row[(b >> 6) as usize] & (1 << (b & 63)) != 0
    }
}

/// Works out the `Future` of a DFA state, from its transitions on one byte
/// of each equivalence class and at the end of input. `Open` when some
/// continuation can still change the outcome; `Unknown` when only a quit
/// transition (which the DFA cannot follow) stands in the way of a
/// conclusion, or a cache clear on the way made `sid` stale (the caller
/// sees the clear).
fn future(dfa: &DFA, cache: &mut Cache, sid: LazyStateID) -> Future {
    let clears = cache.clear_count();
    let mut unknown = false;
    match finished(dfa, cache, sid) {
        Fin::Yes => return Future::Finished,
        Fin::Stale => return Future::Unknown,
        Fin::Quit => unknown = true,
        Fin::No => {}
    }
    let rule = match dfa.next_eoi_state(cache, sid) {
        Ok(eoi) if cache.clear_count() == clears && eoi.is_match() => {
            dfa.match_pattern(cache, eoi, 0)
        }
        _ => {
            return if unknown {
                Future::Unknown
            } else {
                Future::Open
            }
        }
    };
    for unit in dfa.byte_classes().representatives(..) {
        let Some(b) = unit.as_u8() else { continue };
        let Ok(n) = dfa.next_state(cache, sid, b) else {
            return Future::Unknown;
        };
        if cache.clear_count() != clears {
            return Future::Unknown;
        }
        if n.is_quit() {
            unknown = true;
            continue;
        }
        if !n.is_match() || dfa.match_pattern(cache, n, 0) != rule {
            return Future::Open;
        }
        match finished(dfa, cache, n) {
            Fin::Yes => {}
            Fin::No => return Future::Open,
            Fin::Quit | Fin::Stale => unknown = true,
        }
        if cache.clear_count() != clears {
            return Future::Unknown;
        }
    }
    if unknown {
        Future::Unknown
    } else {
        Future::EndsHere(rule.as_usize())
    }
}

/// Whether a DFA state can lead to no match whatever comes next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fin {
    Yes,
    No,
    /// Only quit transitions might lead on.
    Quit,
    /// A cache clear on the way made the state stale.
    Stale,
}

fn finished(dfa: &DFA, cache: &mut Cache, sid: LazyStateID) -> Fin {
    let clears = cache.clear_count();
    let mut quit = false;
    for unit in dfa.byte_classes().representatives(..) {
        let Some(b) = unit.as_u8() else { continue };
        let n = dfa.next_state(cache, sid, b);
        if cache.clear_count() != clears {
            return Fin::Stale;
        }
        match n {
            Ok(n) if n.is_dead() => {}
            Ok(n) if n.is_quit() => quit = true,
            _ => return Fin::No,
        }
    }
    let eoi = dfa.next_eoi_state(cache, sid);
    if cache.clear_count() != clears {
        return Fin::Stale;
    }
    match eoi {
        Ok(eoi) if !eoi.is_match() && !eoi.is_quit() => {
            if quit {
                Fin::Quit
            } else {
                Fin::Yes
            }
        }
        _ => Fin::No,
    }
}

/// The row of `Program::may_start` for one look-behind. A cache clear
/// invalidates the start state held here, so it is fetched again; each
/// transition's answer is valid whatever the cache did meanwhile.
fn start_row(dfa: &DFA, cache: &mut Cache, lb: Option<u8>) -> [u64; 4] {
    let cfg = start::Config::new().anchored(Anchored::Yes).look_behind(lb);
    let mut row = [0u64; 4];
    let mut sid = None;
    let mut clears = cache.clear_count();
    for b in 0..=255u8 {
        if cache.clear_count() != clears {
            sid = None;
        }
        let s = match sid {
            Some(s) => s,
            None => match dfa.start_state(cache, &cfg) {
                Ok(s) => {
                    clears = cache.clear_count();
                    sid = Some(s);
                    s
                }
                // A quit look-behind: any byte may start a thread, except a
                // continuation byte (0x80..=0xBF, the third word), where no
                // thread ever starts.
                Err(_) => return [u64::MAX, u64::MAX, 0, u64::MAX],
            },
        };
        if s.is_dead() {
            return row;
        }
        let alive = match dfa.next_state(cache, s, b) {
            Ok(next) => !next.is_dead(),
            Err(_) => true,
        };
        if alive && !is_continuation(b) {
            row[(b >> 6) as usize] |= 1 << (b & 63);
        }
    }
    row
}

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

/// Where decided text goes: raw text, and decided matches with their rule.
pub(crate) trait Sink {
    /// Text that is part of no match.
    fn text(&mut self, bytes: &[u8]);
    /// A decided match of `rule` over `hay[start..end]`; `offset` is the
    /// stream offset of `hay[0]`, and `hay` reaches past `end` far enough for
    /// look-ahead (or to the end of input).
    fn matched(&mut self, hay: &[u8], offset: usize, rule: usize, start: usize, end: usize);
}

#[derive(Clone, Copy, Debug)]
struct Thread {
    start: usize,
    sid: LazyStateID,
}

/// A thread of the NFA fallback: the states it reached by the last byte it
/// stepped, not yet closed over epsilon transitions (closing needs the
/// character at the current position for look-around).
#[derive(Debug)]
struct NThread {
    start: usize,
    targets: Vec<StateID>,
}

#[derive(Clone, Copy, Debug)]
struct Best {
    start: usize,
    end: usize,
    rule: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Dfa,
    /// The NFA runs at least until this position has been stepped.
    Nfa {
        until: usize,
    },
}

/// What the future of a DFA state holds, whatever bytes come next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Future {
    /// It depends on the bytes to come.
    Open,
    /// No continuation (bytes or end of input) leads to a match.
    Finished,
    /// A match of this rule ends here for every continuation, and nothing
    /// after it can match.
    EndsHere(usize),
    /// The DFA cannot tell (quit transitions); the NFA can.
    Unknown,
}

/// Keeps the targets `next` of an NFA thread started at `start`, or gives
/// the set back to `scratch` when the thread died.
fn keep_nthread(
    kept: &mut Vec<NThread>,
    scratch: &mut nfa::Scratch,
    start: usize,
    next: Vec<StateID>,
) {
    if next.is_empty() {
        scratch.give_set(next);
    } else {
        kept.push(NThread {
            start,
            targets: next,
        });
    }
}

/// Signals that the DFA cannot go on; holds the position to replay from.
struct Fallback(usize);

/// One stream's state. Positions are stream offsets; `buf[0]` is at `base`.
#[derive(Debug)]
pub(crate) struct Stream {
    cache: Cache,
    buf: Vec<u8>,
    base: usize,
    /// Everything before this has been given to the sink.
    emitted: usize,
    /// The next byte to step.
    pos: usize,
    threads: Vec<Thread>,
    nthreads: Vec<NThread>,
    best: Option<Best>,
    last_end: Option<usize>,
    /// Set while only the earliest thread is stepped (see
    /// `SUSPEND_AFTER`): where to replay from if it dies without a match.
    suspended: Option<usize>,
    /// The end of the last such replay: only a thread started there or
    /// later is stepped alone, so no byte is replayed twice.
    replayed_to: usize,
    /// Set after the held limit was hit under a replacing policy: the start
    /// of the pending candidate whose text is being dropped. Only that
    /// candidate's thread runs (on the NFA, which needs no replay), and
    /// its text is dropped as it is scanned, until its match is decided or
    /// it dies; then the stream goes on from there.
    suppress: Option<usize>,
    /// Set when the limit was hit again while a suppressed candidate had a
    /// match and might grow it: the text after that match was dropped, so
    /// the suppression ends where the candidate stops, not at its match.
    suppress_tail: bool,
    mode: Mode,
    scratch: Option<Box<nfa::Scratch>>,
    /// `Future` of DFA states seen at the end of a feed.
    futures: Futures,
    /// The one-thread loop's memo of configurations.
    single: single::Single,
}

/// Appends `bytes` to `v`; a few bytes are pushed one by one, which is
/// cheaper than the call to `memcpy` that `extend_from_slice` makes.
#[inline(always)]
pub(crate) fn extend_small(v: &mut Vec<u8>, bytes: &[u8]) {
    if bytes.len() <= 16 {
        for &b in bytes {
            v.push(b);
        }
    } else {
        v.extend_from_slice(bytes);
    }
}

/// Released bytes kept in the buffer before `Stream::compact` drops them.
const COMPACT_MIN: usize = 256;

/// The memo of DFA states' `Future`s, for one generation of the cache: a
/// map, and the last few entries used, looked at first.
#[derive(Debug)]
struct Futures {
    map: HashMap<LazyStateID, Future, BuildHasherDefault<IdHasher>>,
    recent: [(LazyStateID, Future); RECENT],
    /// The cache's clear count the entries are valid for.
    clears: usize,
}

/// Entries of `Futures::recent`.
const RECENT: usize = 4;

impl Default for Futures {
    fn default() -> Futures {
        Futures {
            map: HashMap::default(),
            recent: [(single::no_thread(), Future::Open); RECENT],
            clears: 0,
        }
    }
}

impl Futures {
    /// The memoised future of `sid`; `clears` is the cache's clear count
    /// now (a different one forgets every entry first).
    #[inline(always)]
    fn get(&mut self, sid: LazyStateID, clears: usize) -> Option<Future> {
        if self.clears != clears {
            self.map.clear();
            self.recent = [(single::no_thread(), Future::Open); RECENT];
            self.clears = clears;
        }
        if let Some(&(_, f)) = self.recent.iter().find(|(k, _)| *k == sid) {
            return Some(f);
        }
        let f = *self.map.get(&sid)?;
        self.remember(sid, f);
        Some(f)
    }

    /// Memoises the future of `sid`, for the clear count last given to
    /// `get`.
    fn insert(&mut self, sid: LazyStateID, f: Future) {
        self.map.insert(sid, f);
        self.remember(sid, f);
    }

    fn remember(&mut self, sid: LazyStateID, f: Future) {
        self.recent.rotate_right(1);
        self.recent[0] = (sid, f);
    }
}

/// How long the earliest of several threads must have lived before the
/// others are dropped and it is stepped alone (replaying the rest if it
/// dies without a match). Short-lived threads (a word under `\w+@…`) would
/// only pay for the replay.
const SUSPEND_AFTER: usize = 64;

/// Hashes a `LazyStateID` (one `u32`) with one multiplication: the memo of
/// futures is looked up at the end of every feed, where SipHash showed.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        // The low bits of the product, which pick the bucket, are weak.
        self.0 ^ (self.0 >> 29)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.0 = (self.0 ^ u64::from(n)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

impl Stream {
    pub(crate) fn new(prog: &Program) -> Stream {
        Stream {
            cache: prog.create_cache(),
            buf: Vec::new(),
            base: 0,
            emitted: 0,
            pos: 0,
            threads: Vec::new(),
            nthreads: Vec::new(),
            best: None,
            last_end: None,
            suspended: None,
            replayed_to: 0,
            suppress: None,
            suppress_tail: false,
            mode: Mode::Dfa,
            scratch: None,
            futures: Futures::default(),
            single: single::Single::default(),
        }
    }

    /// Forgets the stream; keeps the allocations and the DFA cache.
    pub(crate) fn reset(&mut self) {
        self.buf.clear();
        self.base = 0;
        self.emitted = 0;
        self.pos = 0;
        self.threads.clear();
        self.clear_nthreads();
        self.best = None;
        self.last_end = None;
        self.suspended = None;
        self.replayed_to = 0;
        self.suppress = None;
        self.suppress_tail = false;
        self.mode = Mode::Dfa;
    }

    /// Bytes received but not yet released.
    pub(crate) fn held(&self) -> usize {
        (self.base + self.buf.len()).saturating_sub(self.emitted)
    }

    /// The total number of bytes fed so far.
    pub(crate) fn offset(&self) -> usize {
        self.base + self.buf.len()
    }

    /// Feeds a chunk and releases what is decided. With `whole_chars`, the
    /// release point never falls inside a UTF-8 character. While the stream
    /// is idle, callers first give the chunk to `idle_prefix`, which
    /// releases in place what comes before the first place a thread could
    /// start, and feed the rest.
    #[inline(always)]
    pub(crate) fn feed(
        &mut self,
        prog: &Program,
        chunk: &[u8],
        whole_chars: bool,
        sink: &mut impl Sink,
    ) {
        if chunk.is_empty() {
            return;
        }
        extend_small(&mut self.buf, chunk);
        self.advance(prog, whole_chars, sink);
    }

    /// Steps what was fed and releases what is decided.
    #[inline(always)]
    fn advance(&mut self, prog: &Program, whole_chars: bool, sink: &mut impl Sink) {
        if !self.run_quick(prog) {
            self.run(prog, false, sink);
        }
        if self.suppress.is_some() {
            // Drop what is scanned, except after a recorded match, which
            // the thread may not extend (the text after it is then
            // scanned again).
            let upto = self.best.map_or(self.pos, |b| b.end.min(self.pos));
            self.release(upto, sink);
            self.compact();
            return;
        }
        let mut safe = self.pos;
        if let Some(t) = self.threads.first() {
            safe = safe.min(t.start);
        }
        if let Some(t) = self.nthreads.first() {
            safe = safe.min(t.start);
        }
        if let Some(b) = self.best {
            safe = safe.min(b.start);
        }
        if whole_chars {
            let end = self.offset();
            while safe > self.emitted && safe < end && is_continuation(self.buf[safe - self.base]) {
                safe -= 1;
            }
        }
        self.release(safe, sink);
        self.compact();
    }

    /// The common cases of `run` for a small feed, without its general
    /// machinery: one of the tight loops steps the whole feed (at most one
    /// live thread and no match recorded, or one thread stepped alone), and
    /// the thread's future is known to be open. Returns false, having done
    /// part of the work or none, when `run` must go on from where this
    /// stopped.
    #[inline(always)]
    fn run_quick(&mut self, prog: &Program) -> bool {
        if !prog.fast || self.mode != Mode::Dfa || self.threads.len() > 1 {
            return false;
        }
        let simple = self.best.is_none() && self.suspended.is_none();
        if !simple && self.threads.is_empty() {
            return false;
        }
        let run = if simple {
            self.run_simple(prog)
        } else {
            // One thread, stepped alone: it holds a match it may still
            // beat, or it is the earliest of several.
            self.run_pending(prog)
        };
        if let Err(Fallback(r)) = run {
            // As `run` does: replay on the NFA.
            let until = self.pos;
            self.enter_nfa(r, until);
            return false;
        }
        if self.pos != self.offset() {
            return false;
        }
        let Some(&t) = self.threads.first() else {
            return true;
        };
        let clears = self.cache.clear_count();
        self.futures.get(t.sid, clears) == Some(Future::Open)
    }

    /// Ends the input and releases everything.
    pub(crate) fn finish(&mut self, prog: &Program, sink: &mut impl Sink) {
        self.run(prog, true, sink);
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
        let mut end = self.offset();
        let back = (end - self.emitted).min(3);
        for k in 1..=back {
            let b = self.buf[end - k - self.base];
            if !is_continuation(b) {
                if utf8_len(b) > k {
                    end -= k;
                }
                break;
            }
        }
        self.threads.clear();
        self.clear_nthreads();
        self.best = None;
        self.emitted = end;
        self.pos = end;
        self.last_end = None;
        self.suspended = None;
        self.suppress = None;
        self.suppress_tail = false;
        self.mode = Mode::Dfa;
        self.compact();
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
            let upto = self.pos;
            self.suppress_tail = true;
            self.release(upto, sink);
            self.compact();
            return;
        }
        let earliest = [
            self.threads.first().map(|t| t.start),
            self.nthreads.first().map(|t| t.start),
            self.best.map(|b| b.start),
        ]
        .into_iter()
        .flatten()
        .min();
        let Some(start) = earliest else {
            self.discard_held();
            sink.text(text);
            return;
        };
        // The candidate is followed on the NFA from its start: the DFA may
        // need a replay later (a quit byte, a cache clear), which the
        // dropped text would no longer allow. `emitted` is at or before
        // `start`, so the bytes are still there.
        self.release(start, sink);
        sink.text(text);
        let until = self.pos;
        self.enter_nfa(start, until);
        self.suppress = Some(start);
        self.advance(prog, whole_chars, sink);
    }

    /// Ends a suppression at `p`: what comes before is dropped, and the
    /// stream goes on from the next character boundary.
    fn end_suppress(&mut self, mut p: usize) {
        let end = self.offset();
        p = p.max(self.emitted);
        while p < end && is_continuation(self.buf[p - self.base]) {
            p += 1;
        }
        self.emitted = p;
        self.pos = p;
        self.suppress = None;
        self.suppress_tail = false;
    }

    /// With nothing held, scans `chunk` where it is and records as released
    /// its part before the first place a thread could start, without copying
    /// it; returns the length of that part (which the caller emits). That
    /// place is never a UTF-8 continuation byte.
    #[inline(always)]
    pub(crate) fn idle_prefix(&mut self, prog: &Program, chunk: &[u8]) -> usize {
        if !self.is_idle() {
            return 0;
        }
        let q = prog.skip_idle(chunk, 0, self.look_behind(self.pos));
        if q > 0 {
            self.append_released(&chunk[..q]);
        }
        q
    }

    /// Whether nothing is held or alive, so input can be scanned in place.
    #[inline(always)]
    pub(crate) fn is_idle(&self) -> bool {
        self.mode == Mode::Dfa
            && self.threads.is_empty()
            && self.best.is_none()
            && self.pos == self.offset()
            && self.emitted == self.pos
    }

    /// Records `bytes` as received and released, keeping the look-behind
    /// context.
    fn append_released(&mut self, bytes: &[u8]) {
        let end = self.offset() + bytes.len();
        if bytes.len() >= CONTEXT {
            self.buf.clear();
            extend_small(&mut self.buf, &bytes[bytes.len() - CONTEXT..]);
            self.base = end - CONTEXT;
        } else {
            extend_small(&mut self.buf, bytes);
            let dead = self.buf.len().saturating_sub(CONTEXT);
            self.buf.drain(..dead);
            self.base += dead;
        }
        self.emitted = end;
        self.pos = end;
    }

    fn release(&mut self, upto: usize, sink: &mut impl Sink) {
        if upto > self.emitted {
            if self.suppress.is_none() {
                sink.text(&self.buf[self.emitted - self.base..upto - self.base]);
            }
            self.emitted = upto;
        }
    }

    /// Drops released bytes that are no longer needed as context, when they
    /// are at least half the buffer (so the cost is amortised linear) and
    /// at least `COMPACT_MIN` (so token-sized feeds do not move bytes each
    /// time).
    fn compact(&mut self) {
        let keep = self.emitted.saturating_sub(CONTEXT).max(self.base);
        let dead = keep - self.base;
        if dead >= COMPACT_MIN && dead >= self.buf.len() - dead {
            self.buf.drain(..dead);
            self.base = keep;
        }
    }

    fn clear_nthreads(&mut self) {
        if let Some(s) = self.scratch.as_mut() {
            for t in self.nthreads.drain(..) {
                s.give_set(t.targets);
            }
        }
        self.nthreads.clear();
    }

    fn decide(&mut self, best: Best, rules_sink: &mut impl Sink) {
        debug_assert!(self.threads.is_empty() && self.nthreads.is_empty());
        if self.suppress.is_some() {
            // The suppressed candidate's match: its text and replacement
            // are dropped (the policy's text stands for them).
            self.last_end = Some(best.end);
            let end = if self.suppress_tail {
                // `pos` is where the candidate stopped.
                best.end.max(self.pos)
            } else {
                best.end
            };
            self.end_suppress(end);
            return;
        }
        self.release(best.start, rules_sink);
        rules_sink.matched(
            &self.buf,
            self.base,
            best.rule,
            best.start - self.base,
            best.end - self.base,
        );
        self.emitted = best.end;
        self.last_end = Some(best.end);
        self.pos = best.end;
    }

    fn enter_nfa(&mut self, from: usize, until: usize) {
        self.threads.clear();
        self.clear_nthreads();
        self.best = None;
        self.suspended = None;
        self.pos = from;
        self.mode = Mode::Nfa { until };
        if self.scratch.is_none() {
            self.scratch = Some(Box::default());
        }
    }

    fn run(&mut self, prog: &Program, eof: bool, sink: &mut impl Sink) {
        loop {
            let end = self.offset();
            match self.mode {
                Mode::Dfa => {
                    if let Err(Fallback(r)) = self.run_dfa(prog, sink) {
                        let until = self.pos;
                        self.enter_nfa(r, until);
                        continue;
                    }
                }
                Mode::Nfa { .. } => {
                    if self.run_nfa(prog, eof, sink) {
                        continue;
                    }
                }
            }
            if !eof {
                match self.settle(prog, sink) {
                    Ok(true) => continue,
                    Ok(false) => return,
                    Err(Fallback(r)) => {
                        self.enter_nfa(r, end);
                        continue;
                    }
                }
            }
            debug_assert_eq!(self.pos, end);
            let eoi = match self.mode {
                Mode::Dfa => self.eoi_dfa(prog),
                Mode::Nfa { .. } => {
                    self.eoi_nfa(prog);
                    Ok(())
                }
            };
            if let Err(Fallback(r)) = eoi {
                self.enter_nfa(r, end);
                continue;
            }
            self.threads.clear();
            self.clear_nthreads();
            match self.best.take() {
                Some(best) => self.decide(best, sink),
                None => match self.suspended.take() {
                    // The earliest thread died at the end: replay without it.
                    Some(r) => self.replay(r),
                    None => return,
                },
            }
        }
    }

    /// A thread stepped alone died without a match at `self.pos`: steps
    /// again from `from` (just after its start) with every thread.
    fn replay(&mut self, from: usize) {
        self.replayed_to = self.pos;
        self.pos = from;
    }

    /// Where a replay must start: the earliest live start, best match start
    /// or the given position.
    fn replay_from(&self, p: usize) -> usize {
        let mut r = p;
        if let Some(t) = self.threads.first() {
            r = r.min(t.start);
        }
        if let Some(b) = self.best {
            r = r.min(b.start);
        }
        r
    }

    #[inline(always)]
    fn look_behind(&self, p: usize) -> Option<u8> {
        (p > 0).then(|| self.buf[p - 1 - self.base])
    }

    /// Records a match of the thread that started at `start`, ending at `end`,
    /// unless it is an empty match at the end of the previous match (which
    /// `find_iter` skips). Returns whether it was recorded.
    #[inline(always)]
    fn record(&mut self, start: usize, end: usize, rule: usize) -> bool {
        if start == end && self.last_end == Some(end) {
            return false;
        }
        self.best = Some(Best { start, end, rule });
        // A match of the earliest thread beats every later one: nothing
        // needs replaying.
        self.suspended = None;
        true
    }

    /// With nothing alive, the next position from `self.pos` where a thread
    /// can survive its first byte (or `end`).
    fn skip_idle(&self, prog: &Program, end: usize) -> usize {
        let hay = &self.buf[..end - self.base];
        let from = self.pos - self.base;
        prog.skip_idle(hay, from, self.look_behind(self.pos)) + self.base
    }

    fn run_dfa(&mut self, prog: &Program, sink: &mut impl Sink) -> Result<(), Fallback> {
        let dfa = &prog.dfa;
        loop {
            let end = self.offset();
            if self.threads.is_empty() && self.best.is_none() {
                self.pos = self.skip_idle(prog, end);
            }
            if prog.fast {
                if self.threads.len() <= 1 && self.best.is_none() && self.suspended.is_none() {
                    self.run_simple(prog)?;
                } else if self.threads.len() == 1 {
                    self.run_pending(prog)?;
                }
            }
            let p = self.pos;
            if p >= end {
                return Ok(());
            }
            if prog.fast
                && self.threads.len() > 1
                && self.best.is_none()
                && p - self.threads[0].start >= SUSPEND_AFTER
                && self.threads[0].start >= self.replayed_to
            {
                // A long-lived earliest thread (an open `<think>`, say): its
                // match would beat every later thread, so step it alone, and
                // replay the rest only if it dies without one.
                self.suspended = Some(self.threads[0].start + 1);
                self.threads.truncate(1);
                continue;
            }
            let from = self.replay_from(p);
            let b = self.buf[p - self.base];
            let clears = self.cache.clear_count();
            let mut kept = 0;
            let mut i = 0;
            while i < self.threads.len() {
                let t = self.threads[i];
                i += 1;
                let next = dfa
                    .next_state(&mut self.cache, t.sid, b)
                    .map_err(|_| Fallback(from))?;
                if self.cache.clear_count() != clears {
                    return Err(Fallback(from));
                }
                if next.is_tagged() {
                    if next.is_dead() {
                        continue;
                    }
                    if next.is_quit() {
                        return Err(Fallback(from));
                    }
                    if next.is_match() {
                        let rule = dfa.match_pattern(&self.cache, next, 0).as_usize();
                        if self.record(t.start, p, rule) {
                            // A match of an earlier start beats every later
                            // thread.
                            self.threads[kept] = Thread {
                                start: t.start,
                                sid: next,
                            };
                            kept += 1;
                            break;
                        }
                    }
                }
                if self.threads[..kept].iter().any(|k| k.sid == next) {
                    continue;
                }
                self.threads[kept] = Thread {
                    start: t.start,
                    sid: next,
                };
                kept += 1;
            }
            self.threads.truncate(kept);
            if self.best.is_none() && self.suspended.is_none() && !is_continuation(b) {
                let lb = self.look_behind(p);
                if !prog.fast || prog.may_start(lb, b) {
                    let cfg = start::Config::new().anchored(Anchored::Yes).look_behind(lb);
                    let sid = dfa
                        .start_state(&mut self.cache, &cfg)
                        .map_err(|_| Fallback(from))?;
                    let next = dfa
                        .next_state(&mut self.cache, sid, b)
                        .map_err(|_| Fallback(from))?;
                    if self.cache.clear_count() != clears || next.is_quit() {
                        return Err(Fallback(from));
                    }
                    if !next.is_dead() {
                        if next.is_match() {
                            let rule = dfa.match_pattern(&self.cache, next, 0).as_usize();
                            self.record(p, p, rule);
                        }
                        if !self.threads.iter().any(|k| k.sid == next) {
                            self.threads.push(Thread {
                                start: p,
                                sid: next,
                            });
                        }
                    }
                }
            }
            self.pos = p + 1;
            if self.threads.is_empty() {
                if let Some(best) = self.best.take() {
                    self.decide(best, sink);
                } else if let Some(r) = self.suspended.take() {
                    self.replay(r);
                }
            }
        }
    }

    /// At the end of a feed, settles what the bytes to come cannot change:
    /// drops threads with no possible match ahead and records matches that
    /// end here whatever follows, so a decided match is released without
    /// waiting for one more byte. Returns whether a match was decided (the
    /// caller then scans on from its end).
    fn settle(&mut self, prog: &Program, sink: &mut impl Sink) -> Result<bool, Fallback> {
        if !prog.fast {
            // Without it, a match is decided one byte late or at the end
            // of input: the same output, a longer hold-back.
            return Ok(false);
        }
        let p = self.pos;
        match self.mode {
            Mode::Dfa => {
                if self.threads.is_empty() {
                    return Ok(false);
                }
                let from = self.replay_from(p);
                let clears = self.cache.clear_count();
                let mut kept = 0;
                for i in 0..self.threads.len() {
                    let t = self.threads[i];
                    let future = match self.futures.get(t.sid, clears) {
                        Some(f) => f,
                        None => {
                            let f = future(&prog.dfa, &mut self.cache, t.sid);
                            if self.cache.clear_count() != clears {
                                return Err(Fallback(from));
                            }
                            self.futures.insert(t.sid, f);
                            f
                        }
                    };
                    match future {
                        Future::Unknown => {
                            // Let the NFA, which follows every byte, settle
                            // what is held.
                            return Err(Fallback(from));
                        }
                        Future::Open => {
                            self.threads[kept] = t;
                            kept += 1;
                        }
                        Future::Finished => {}
                        Future::EndsHere(rule) => {
                            self.best = Some(Best {
                                start: t.start,
                                end: p,
                                rule,
                            });
                            self.suspended = None;
                            break;
                        }
                    }
                }
                self.threads.truncate(kept);
            }
            Mode::Nfa { .. } => {
                let nfa = prog.nfa();
                let mut scratch = self.scratch.take().unwrap_or_default();
                let mut kept = Vec::with_capacity(self.nthreads.len());
                let mut old = std::mem::take(&mut self.nthreads).into_iter();
                for t in old.by_ref() {
                    let mut closed = scratch.take_set();
                    let known = scratch.close(
                        nfa,
                        &t.targets,
                        &self.buf,
                        p - self.base,
                        false,
                        &mut closed,
                    );
                    let first = closed
                        .first()
                        .and_then(|&id| nfa::Scratch::match_of(nfa, id));
                    let empty = closed.is_empty();
                    scratch.give_set(closed);
                    if !known {
                        kept.push(t);
                    } else if let Some(pid) = first {
                        self.best = Some(Best {
                            start: t.start,
                            end: p,
                            rule: pid.as_usize(),
                        });
                        scratch.give_set(t.targets);
                        break;
                    } else if empty {
                        scratch.give_set(t.targets);
                    } else {
                        kept.push(t);
                    }
                }
                for t in old {
                    scratch.give_set(t.targets);
                }
                self.nthreads = kept;
                self.scratch = Some(scratch);
            }
        }
        if self.threads.is_empty() && self.nthreads.is_empty() {
            if let Some(best) = self.best.take() {
                self.decide(best, sink);
                return Ok(true);
            }
            if let Some(r) = self.suspended.take() {
                // The earliest thread cannot match: replay without it.
                self.replay(r);
                return Ok(true);
            }
            if self.suppress.is_some() {
                // The suppressed candidate can no longer match.
                self.end_suppress(p);
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The common case of `run_dfa`, in a tight loop: at most one live
    /// thread and no match recorded, where every new thread either dies at
    /// once or merges into the live one (as in a word under a rule like
    /// `\w+@…`). Each byte is one lookup in the `single` memo. Stops,
    /// without stepping it, at the first byte that needs more: a match, a
    /// second thread, a quit, or the end of the buffer.
    #[inline(always)]
    fn run_simple(&mut self, prog: &Program) -> Result<(), Fallback> {
        let base = self.base;
        let hay = &self.buf[..];
        let cache = &mut self.cache;
        let memo = &mut self.single;
        // The thread's start, as an index in `hay` (meaningless while no
        // thread is alive).
        let (mut start, sid) = match self.threads.first() {
            Some(t) => (t.start - base, t.sid),
            None => (0, single::no_thread()),
        };
        let mut i = self.pos - base;
        let clears = cache.clear_count();
        memo.prepare(clears);
        let lb = (self.pos > 0).then(|| hay[i - 1]);
        let Some(mut row) = memo.config(prog, sid, prog.kind(lb)) else {
            return Ok(());
        };
        let classes = &prog.classes;
        let skips = prog.prefilter.is_some();
        let mut stale = false;
        loop {
            // The hot loop: one load and a mask per byte.
            let table = memo.table();
            let mut e = 0;
            while i < hay.len() {
                e = table[row + classes[hay[i] as usize] as usize];
                if e & (single::KNOWN | single::EXIT) != single::KNOWN {
                    break;
                }
                if e & single::RESTART != 0 {
                    start = i;
                }
                row = (e & single::ROW) as usize;
                i += 1;
                if skips && e & single::IDLE != 0 {
                    break;
                }
            }
            if i >= hay.len() {
                break;
            }
            if e & single::KNOWN == 0 {
                // Not known yet: work it out, then go on (the same byte).
                let lb = (base + i > 0).then(|| hay[i - 1]);
                match memo.step(prog, cache, row, lb, hay[i]) {
                    single::Step::Entry(entry) if entry & single::KNOWN != 0 => continue,
                    single::Step::Entry(_) => break,
                    single::Step::Stale => {
                        stale = true;
                        break;
                    }
                }
            }
            if e & single::EXIT != 0 {
                break;
            }
            // Idle, with a prefilter to skip to the next possible start.
            let j = prog.skip_idle(hay, i, Some(hay[i - 1]));
            if j > i {
                i = j;
                let kind = prog.kind(Some(hay[i - 1]));
                match memo.config(prog, single::no_thread(), kind) {
                    Some(r) => row = r,
                    None => break,
                }
            }
        }
        let sid = memo.state(prog, row);
        memo.leave(row);
        self.pos = i + base;
        self.threads.clear();
        if sid != single::no_thread() {
            self.threads.push(Thread {
                start: start + base,
                sid,
            });
        }
        if stale {
            return Err(Fallback(self.replay_from(self.pos)));
        }
        Ok(())
    }

    /// Another common case of `run_dfa`, in a tight loop: a match is
    /// recorded (so no new thread starts) and one thread is alive, which may
    /// still beat or extend it (an unclosed `<think>` around a matched
    /// email, say). Steps that thread until a byte needs more: a match, its
    /// death, a quit, or the end of the buffer.
    #[inline(always)]
    fn run_pending(&mut self, prog: &Program) -> Result<(), Fallback> {
        let dfa = &prog.dfa;
        let hay = &self.buf[..];
        let cache = &mut self.cache;
        let mut sid = self.threads[0].sid;
        let mut i = self.pos - self.base;
        let clears = cache.clear_count();
        while i < hay.len() {
            let Ok(n) = dfa.next_state(cache, sid, hay[i]) else {
                break;
            };
            if n.is_tagged() || cache.clear_count() != clears {
                // `n` is valid even after a clear, but stepping it here would
                // skip the checks of the general path: leave this byte to it.
                break;
            }
            sid = n;
            i += 1;
        }
        let stale = cache.clear_count() != clears;
        self.threads[0].sid = sid;
        self.pos = i + self.base;
        if stale {
            return Err(Fallback(self.replay_from(self.pos)));
        }
        Ok(())
    }

    fn eoi_dfa(&mut self, prog: &Program) -> Result<(), Fallback> {
        let dfa = &prog.dfa;
        let p = self.pos;
        let from = self.replay_from(p);
        let clears = self.cache.clear_count();
        for i in 0..self.threads.len() {
            let t = self.threads[i];
            let next = dfa
                .next_eoi_state(&mut self.cache, t.sid)
                .map_err(|_| Fallback(from))?;
            if self.cache.clear_count() != clears || next.is_quit() {
                return Err(Fallback(from));
            }
            if next.is_match() {
                let rule = dfa.match_pattern(&self.cache, next, 0).as_usize();
                if self.record(t.start, p, rule) {
                    return Ok(());
                }
            }
        }
        if self.best.is_none() && self.suspended.is_none() {
            let lb = self.look_behind(p);
            let cfg = start::Config::new().anchored(Anchored::Yes).look_behind(lb);
            let sid = dfa
                .start_state(&mut self.cache, &cfg)
                .map_err(|_| Fallback(from))?;
            let next = dfa
                .next_eoi_state(&mut self.cache, sid)
                .map_err(|_| Fallback(from))?;
            if self.cache.clear_count() != clears || next.is_quit() {
                return Err(Fallback(from));
            }
            if next.is_match() {
                let rule = dfa.match_pattern(&self.cache, next, 0).as_usize();
                self.record(p, p, rule);
            }
        }
        Ok(())
    }

    /// Whether the NFA may step position `p`: look-around there needs the
    /// whole character at `p`, or the end of input.
    fn nfa_ready(&self, p: usize, eof: bool) -> bool {
        let end = self.offset();
        p < end && (eof || p + utf8_len(self.buf[p - self.base]) <= end)
    }

    /// Runs the NFA. Returns true when it handed back to the DFA (the caller
    /// loops), false when it stopped at the end of what it may step.
    fn run_nfa(&mut self, prog: &Program, eof: bool, sink: &mut impl Sink) -> bool {
        let nfa = prog.nfa();
        let Mode::Nfa { until } = self.mode else {
            return false;
        };
        let mut scratch = self.scratch.take().unwrap_or_default();
        // Reused across bytes: the threads kept by a step, and the closed
        // sets seen in it (for merging).
        let mut kept: Vec<NThread> = Vec::new();
        let mut closed_sets: Vec<Vec<StateID>> = Vec::new();
        let handed_back = loop {
            let end = self.offset();
            let p = self.pos;
            if self.nthreads.is_empty()
                && self.best.is_none()
                && p > until
                && self.look_behind(p).is_none_or(|b| b < 0x80)
            {
                self.mode = Mode::Dfa;
                break true;
            }
            if p >= end {
                break false;
            }
            let b = self.buf[p - self.base];
            if !self.nfa_ready(p, eof) {
                // The character at `p` is cut by the end of the buffer, so
                // look-around there cannot be judged yet. With nothing alive
                // and no match able to start with its first byte, its bytes
                // belong to no match: step over them (releasing them), as
                // the DFA would.
                if self.nthreads.is_empty() && self.best.is_none() && !prog.can_begin(b) {
                    self.pos = p + 1;
                    continue;
                }
                break false;
            }
            let hay = &self.buf[..];
            let at = p - self.base;
            let mut old = std::mem::take(&mut self.nthreads);
            let mut threads = old.drain(..);
            for t in threads.by_ref() {
                let mut closed = scratch.take_set();
                scratch.close(nfa, &t.targets, hay, at, true, &mut closed);
                scratch.give_set(t.targets);
                if closed.is_empty() || closed_sets.contains(&closed) {
                    scratch.give_set(closed);
                    continue;
                }
                let mut next = scratch.take_set();
                let matched = nfa::Scratch::step(nfa, &closed, b, &mut next);
                closed_sets.push(closed);
                if let Some(pid) = matched {
                    self.best = Some(Best {
                        start: t.start,
                        end: p,
                        rule: pid.as_usize(),
                    });
                }
                keep_nthread(&mut kept, &mut scratch, t.start, next);
                if matched.is_some() {
                    // A match of an earlier start beats every later thread.
                    break;
                }
            }
            for t in threads {
                scratch.give_set(t.targets);
            }
            if self.best.is_none()
                && self.suppress.is_none_or(|s| s == p)
                && !is_continuation(b)
                && (!prog.fast || prog.may_start(self.look_behind(p), b))
            {
                let mut closed = scratch.take_set();
                scratch.close(nfa, &[nfa.start_anchored()], hay, at, true, &mut closed);
                if !closed.is_empty() && !closed_sets.contains(&closed) {
                    let mut next = scratch.take_set();
                    let matched = nfa::Scratch::step(nfa, &closed, b, &mut next);
                    if let Some(pid) = matched {
                        if self.last_end != Some(p) {
                            self.best = Some(Best {
                                start: p,
                                end: p,
                                rule: pid.as_usize(),
                            });
                        }
                    }
                    keep_nthread(&mut kept, &mut scratch, p, next);
                }
                scratch.give_set(closed);
            }
            for c in closed_sets.drain(..) {
                scratch.give_set(c);
            }
            // Swap buffers rather than allocate a thread list per byte.
            self.nthreads = std::mem::replace(&mut kept, old);
            self.pos = p + 1;
            if self.nthreads.is_empty() {
                if let Some(best) = self.best.take() {
                    // Where the last thread stopped, for a suppression that
                    // ends there (`decide` moves on from the match's end).
                    self.pos = p;
                    self.decide(best, sink);
                } else if self.suppress.is_some() {
                    // The suppressed candidate died on byte `p`.
                    self.end_suppress(p);
                }
            }
        };
        self.scratch = Some(scratch);
        handed_back
    }

    fn eoi_nfa(&mut self, prog: &Program) {
        let nfa = prog.nfa();
        let p = self.pos;
        let at = p - self.base;
        let mut scratch = self.scratch.take().unwrap_or_default();
        let mut closed = scratch.take_set();
        for t in &self.nthreads {
            closed.clear();
            scratch.close(nfa, &t.targets, &self.buf, at, true, &mut closed);
            if let Some(pid) = nfa::Scratch::first_match(nfa, &closed) {
                self.best = Some(Best {
                    start: t.start,
                    end: p,
                    rule: pid.as_usize(),
                });
                break;
            }
        }
        if self.best.is_none() && self.suppress.is_none() {
            closed.clear();
            scratch.close(
                nfa,
                &[nfa.start_anchored()],
                &self.buf,
                at,
                true,
                &mut closed,
            );
            if let Some(pid) = nfa::Scratch::first_match(nfa, &closed) {
                if self.last_end != Some(p) {
                    self.best = Some(Best {
                        start: p,
                        end: p,
                        rule: pid.as_usize(),
                    });
                }
            }
        }
        scratch.give_set(closed);
        self.scratch = Some(scratch);
    }
}
