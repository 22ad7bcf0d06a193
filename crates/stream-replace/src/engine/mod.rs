//! The streaming engine: a tape and its matchers.
//!
//! The crate's `DESIGN.md` describes the whole design: the semantics, the
//! merge, each fast path and why it is exact, and how to add a matcher.
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
//! Two matchers share the rules: [`literal`], an Aho-Corasick automaton
//! over the rules that are plain literals, and [`threads`], a DFA (see
//! `dfa`) stepped as a set of threads over the others, with the Thompson NFA
//! (`nfa`) as its exact fallback, three memos for its fast paths (`single`
//! for one live thread, `tuples` for many, `futures`), and a `gate` that
//! skips text where no match can start when every rule has a required
//! literal near its start. Either matcher may be absent: a set of literals
//! builds no regex at all, and `Config::literal_matcher(false)` gives every
//! rule to the threads.
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
//!   [`matcher::pick`]); a decided candidate that another matcher still
//!   blocks stays pending in its matcher's slot, and the stream holds
//!   everything from its start.

mod automaton;
mod bytes;
mod dfa;
mod edges;
mod feed;
mod front;
mod futures;
mod gate;
mod literal;
mod matcher;
mod nfa;
mod single;
mod tape;
mod threads;
mod tuples;

pub(crate) use tape::extend_small;

use std::borrow::Cow;

use literal::Literals;
pub(crate) use matcher::Verdict;
use matcher::{Decided, Live, Matcher, Scan};
use tape::Tape;
use threads::Threads;

use crate::config::{Config, HeldLimit};
use crate::error::{Error, ErrorKind};

/// Where decided text goes: raw text, and decided matches with their rule.
pub(crate) trait Sink {
    /// Text that is part of no match.
    fn text(&mut self, bytes: &[u8]);
    /// Text that is part of no match, `hay[range]`, where `hay` is the
    /// caller's input (scanned in place): a sink that knows that input
    /// can take the text from it as it is.
    fn input(&mut self, hay: &[u8], range: std::ops::Range<usize>) {
        self.text(&hay[range]);
    }
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
    /// Whether `matched` accepts every match of `rule` whatever its text
    /// (a replacement with no check): the token path then decides such
    /// matches itself (`StreamState::feed_token_matches`).
    fn plain(&self, _rule: usize) -> bool {
        false
    }
}

/// Why a feed stopped before the end of its chunk. The stream keeps its
/// state (the caller resets it, or keeps it failed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Halt {
    /// The sink stopped the stream ([`Verdict::Stop`]).
    Stopped,
    /// The stream held `held` bytes, over the limit, under the failing
    /// policy; the held text is dropped.
    HeldLimit {
        /// How many bytes it held.
        held: usize,
    },
}

/// A rule's pattern, as the engine sees it.
#[derive(Clone, Debug)]
pub(crate) enum Source<'a> {
    /// Literal text.
    Literal(&'a str),
    /// A regex; `literal` is the text it matches when it is a literal
    /// (bytes, and whether ASCII letters match either case); `empty`
    /// whether it can match the empty string; `caseless` whether it
    /// matches some ASCII letter in either case, as `(?i)` makes it (see
    /// `Config::caseless_regex_limit`).
    Regex {
        source: &'a str,
        literal: Option<(Vec<u8>, bool)>,
        empty: bool,
        caseless: bool,
    },
}

impl Source<'_> {
    /// The pattern as the rule gave it.
    fn source(&self) -> &str {
        match self {
            Source::Literal(s) | Source::Regex { source: s, .. } => s,
        }
    }

    /// The pattern in `regex` syntax.
    pub(crate) fn regex(&self) -> Cow<'_, str> {
        match self {
            Source::Literal(s) => Cow::Owned(regex_syntax::escape(s)),
            Source::Regex { source, .. } => Cow::Borrowed(source),
        }
    }

    /// Whether it can match the empty string.
    fn can_be_empty(&self) -> bool {
        match self {
            Source::Literal(s) => s.is_empty(),
            Source::Regex { empty, .. } => *empty,
        }
    }

    /// Whether it matches some ASCII letter in either case.
    fn caseless(&self) -> bool {
        matches!(self, Source::Regex { caseless: true, .. })
    }

    /// Whether the Aho-Corasick matcher can take it.
    pub(crate) fn is_literal(&self) -> bool {
        self.literal().is_some()
    }

    /// The literal the Aho-Corasick matcher can take, if any: non-empty
    /// text, and whether ASCII letters match either case.
    fn literal(&self) -> Option<(&[u8], bool)> {
        let (bytes, caseless) = match self {
            Source::Literal(s) => (s.as_bytes(), false),
            Source::Regex { literal, .. } => {
                let (b, c) = literal.as_ref()?;
                (b.as_slice(), *c)
            }
        };
        (!bytes.is_empty()).then_some((bytes, caseless))
    }
}

/// The immutable, shared part of the engine: each matcher's program.
#[derive(Debug)]
pub(crate) struct Program {
    threads: Option<threads::Program>,
    literal: Option<literal::Program>,
    /// Per matcher (by slot, see `each_matcher!`): the index in the rule
    /// set of each of its rules, in increasing order. A matcher speaks of
    /// its own rules (0, 1, ...); the stream maps at the seam.
    rules: [Vec<usize>; MATCHERS],
    /// Whether every rule is on the literal matcher and its fast paths
    /// run: then token-sized feeds take `StreamState::step_literals`.
    literals_only: bool,
    /// `step_literals` applies to this program: every rule is on the
    /// literal matcher, with its fast paths...
    literal_tokens: bool,
    /// ...and, for `&str` feeds, no literal starts inside a character.
    literal_tokens_str: bool,
    /// What a stream does past its held limit (`Config::on_held_limit`):
    /// kept here, so that a feed takes only the limit's size.
    held_policy: HeldLimit,
    /// The thread matcher alone, which may leave the gate's last window
    /// of a call held idle (see `threads::window`).
    holds_windows: bool,
    /// The thread matcher alone, which may step a token-sized chunk where
    /// it is (see `threads::token`).
    thread_tokens: bool,
}

/// The slot of each matcher in the stream's per-matcher arrays, in the
/// order `each_matcher!` lists them.
const THREADS: usize = 0;
const LITERAL: usize = 1;
/// How many matchers there are.
const MATCHERS: usize = 2;

/// No matcher has a decided candidate.
const NONE_DECIDED: [Option<Decided>; MATCHERS] = [None, None];

/// Runs `$body` once for each matcher the program has, in slot order: the
/// list of matchers. `$i` is the matcher's slot in the stream's
/// per-matcher arrays, `$m` the matcher (used through the [`Matcher`]
/// trait only), `$p` its program. A list written out at compile time
/// rather than a `dyn` one, so that each matcher's calls stay static and
/// inline; a new matcher is one more arm here (`DESIGN.md`, section 5).
/// With `ref`, the matchers are borrowed shared.
macro_rules! each_matcher {
    ($s:ident, $prog:expr, |$i:ident, $m:ident, $p:ident| $body:block) => {{
        if let (Some($m), Some($p)) = ($s.threads.as_mut(), $prog.threads.as_ref()) {
            let $i = THREADS;
            let _ = ($i, &$p, &$m);
            $body
        }
        if let Some($p) = $prog.literal.as_ref() {
            let $m = &mut $s.literals;
            let $i = LITERAL;
            let _ = ($i, &$p, &$m);
            $body
        }
    }};
    (ref $s:ident, $prog:expr, |$i:ident, $m:ident, $p:ident| $body:block) => {{
        if let (Some($m), Some($p)) = ($s.threads.as_ref(), $prog.threads.as_ref()) {
            let $i = THREADS;
            let _ = ($i, &$p, &$m);
            $body
        }
        if let Some($p) = $prog.literal.as_ref() {
            let $m = &$s.literals;
            let $i = LITERAL;
            let _ = ($i, &$p, &$m);
            $body
        }
    }};
}

impl Program {
    /// Compiles the rules' patterns. With `Config::literal_matcher` on, the
    /// literals go to the Aho-Corasick matcher (all of them unless some
    /// with ASCII letters are caseless and some case-sensitive: see
    /// `split_by_case`) and the rest to the threads.
    ///
    /// A literal listed after a rule that can match the empty string stays
    /// with the threads: where that rule matches empty, `find_iter` skips
    /// every match starting there when the empty match is not allowed (it
    /// ends the previous match), or takes the empty one; both depend on the
    /// priority between the two rules at that position, which only one
    /// automaton over both sees.
    pub(crate) fn new(sources: &[Source<'_>], config: &Config) -> Result<Program, Error> {
        let mut lits: Vec<(usize, &[u8], bool)> = Vec::new();
        if config.get_literal_matcher() {
            let first_empty = sources
                .iter()
                .position(Source::can_be_empty)
                .unwrap_or(sources.len());
            lits = sources[..first_empty]
                .iter()
                .enumerate()
                .filter_map(|(i, s)| s.literal().map(|(b, c)| (i, b, c)))
                .collect();
        }
        let caseless = split_by_case(&mut lits, sources, config.get_split_literal_limit())?;
        let mut on_ac = vec![false; sources.len()];
        for l in &lits {
            on_ac[l.0] = true;
        }
        check_caseless_regexes(sources, &on_ac, config.get_caseless_regex_limit())?;
        let literal = if lits.is_empty() {
            None
        } else {
            let bytes: Vec<&[u8]> = lits.iter().map(|l| l.1).collect();
            let rules = lits.iter().map(|l| l.0).collect();

            let p = literal::Program::new(
                &bytes,
                rules,
                caseless,
                config.get_literal_dfa_size_limit(),
                config.get_fast_paths(),
            )
            .map_err(|e| Error::new(ErrorKind::Build, None, None, e.to_string()))?;
            Some(p)
        };
        let thread_rules: Vec<usize> = (0..sources.len()).filter(|&i| !on_ac[i]).collect();
        let threads = if thread_rules.is_empty() {
            None
        } else {
            let regexes: Vec<String> = thread_rules
                .iter()
                .map(|&i| sources[i].regex().into_owned())
                .collect();
            let p = threads::Program::new(&regexes, config).map_err(|e| match e.rule() {
                // The error names a pattern of the threads' subset.
                Some(k) => {
                    let i = thread_rules[k];
                    e.blame(i, &regexes[k], None)
                }
                None => e,
            })?;
            Some(p)
        };
        let literals_only = threads.is_none() && literal.as_ref().is_some_and(|p| p.is_fast());
        let literal_rules = lits.iter().map(|l| l.0).collect();
        // Alone, as in `feed_part`, so that no merge with the literal
        // matcher meets a thread matcher that stopped short of the tape's
        // end.
        let holds_windows = literal.is_none()
            && threads
                .as_ref()
                .is_some_and(threads::Program::holds_windows);
        let thread_tokens =
            literal.is_none() && threads.as_ref().is_some_and(threads::Program::takes_tokens);
        Ok(Program {
            holds_windows,
            thread_tokens,
            threads,
            rules: [thread_rules, literal_rules],
            literal_tokens: literals_only,
            literal_tokens_str: literals_only
                && literal.as_ref().is_some_and(|p| !p.starts_in_char()),
            literal,
            literals_only,
            held_policy: config.get_on_held_limit().clone(),
        })
    }

    /// The size of the dense DFA the streams step, if they step one.
    pub(crate) fn dense_size(&self) -> Option<usize> {
        self.threads.as_ref().and_then(threads::Program::dense_size)
    }
}

/// Keeps in `lits` (rule, bytes, caseless) the literals the one automaton
/// takes and returns whether it is caseless; the others go to the threads.
///
/// A literal without ASCII letters matches the same text either way, so it
/// goes with the others whatever its flag. When literals with letters are
/// of both kinds, the more numerous kind stays (the case-sensitive one on
/// a tie): the threads build and step the rest, exactly, as they would any
/// regex, but slower the more there are (about quadratically in caseless
/// literals: 3 s for 1,000, 11.5 s for 2,000, 45 s for 4,000, release, the
/// `caseless` bench's mixed sets); past `limit`
/// (`Config::split_literal_limit`) this fails rather than build for
/// minutes.
fn split_by_case(
    lits: &mut Vec<(usize, &[u8], bool)>,
    sources: &[Source<'_>],
    limit: usize,
) -> Result<bool, Error> {
    let lettered = |b: &[u8]| b.iter().any(u8::is_ascii_alphabetic);
    let caseless = lits.iter().filter(|l| l.2 && lettered(l.1)).count();
    let cased = lits.iter().filter(|l| !l.2 && lettered(l.1)).count();
    let keep_caseless = caseless > cased;
    let moved = caseless.min(cased);
    if moved > limit {
        // Blames the first literal past the limit.
        let (rule, ..) = lits
            .iter()
            .filter(|l| l.2 != keep_caseless && lettered(l.1))
            .nth(limit)
            .copied()
            .unwrap_or((0, &[], false));
        let (kind, other) = if keep_caseless {
            ("case-sensitive", "caseless")
        } else {
            ("caseless", "case-sensitive")
        };
        let message = format!(
            "{caseless} caseless and {cased} case-sensitive literals: one automaton takes the \
             {other} ones, and the {moved} {kind} ones would go to the regex engine, over the \
             limit of {limit} such literals; raise it with Config::split_literal_limit (the \
             build then takes longer), make the literals with letters all caseless or all \
             case-sensitive, or split them between two rule sets"
        );
        return Err(Error::new(
            ErrorKind::TooBig,
            Some(rule),
            Some(sources[rule].source()),
            message,
        ));
    }
    lits.retain(|l| l.2 == keep_caseless || !lettered(l.1));
    Ok(keep_caseless)
}

/// Fails when more than `limit` (`Config::caseless_regex_limit`) caseless
/// rules would go to the threads (`on_ac` marks those that do not).
///
/// The threads' build grows about quadratically with them: each starts
/// with many spellings (`(?i)karimo` with 2 * 2 * 2 * 2 * 2 * 3, since `k`
/// also folds to the Kelvin sign), and the prefilter's literal search
/// merges each rule's set of prefixes into the union of the earlier
/// ones', a pass over that union per rule (1,000 such rules: 3.8 s of a
/// 6.4 s build; 2,000: 17.4 s of 22.5 s, on a loaded machine). Counting
/// them costs nothing, so the limit fails before any of that work.
fn check_caseless_regexes(
    sources: &[Source<'_>],
    on_ac: &[bool],
    limit: usize,
) -> Result<(), Error> {
    let mut caseless = sources
        .iter()
        .enumerate()
        .filter(|&(i, s)| !on_ac[i] && s.caseless())
        .map(|(i, _)| i);
    let Some(rule) = caseless.nth(limit) else {
        return Ok(());
    };
    let count = limit + 1 + caseless.count();
    Err(caseless_too_big(
        rule,
        sources[rule].source(),
        Some(count),
        limit,
    ))
}

/// The error of `Config::caseless_regex_limit`, blaming `rule`: `count`
/// caseless rules would go to the regex engine, or more than `limit` when
/// the count is not known (the build stopped at the first past it).
pub(crate) fn caseless_too_big(
    rule: usize,
    pattern: &str,
    count: Option<usize>,
    limit: usize,
) -> Error {
    let count = match count {
        Some(n) => n.to_string(),
        None => format!("more than {limit}"),
    };
    let message = format!(
        "{count} caseless rules (matching ASCII letters in either case, as (?i) makes them) \
         would go to the regex engine, over the limit of {limit}, past which its build takes \
         more than seconds; raise it with Config::caseless_regex_limit (the build then takes \
         longer), or split the rules between rule sets"
    );
    Error::new(ErrorKind::TooBig, Some(rule), Some(pattern), message)
}

/// One stream's state: the tape and its matchers. Positions are stream
/// offsets. See the module docs for its invariants.
#[derive(Debug)]
pub(crate) struct StreamState {
    tape: Tape,
    /// The thread matcher (a few words until it steps), when the program
    /// has one.
    threads: Option<Threads>,
    /// The literal matcher (a few words; unused when the program has none).
    literals: Literals,
    /// Per matcher: a candidate it decided that the stream has not
    /// released yet (another matcher could still beat it).
    decided: [Option<Decided>; MATCHERS],
    /// Under a suppression (see `suppress`): per matcher, where it stopped
    /// following the suppressed candidate (it died there, or it never had
    /// a candidate there).
    died: [Option<usize>; MATCHERS],
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
    /// Per matcher: the start and rule of the decided candidate it was
    /// last capped for (`Matcher::cap`), so that it is capped once per
    /// candidate. Cleared whenever the matchers go on from a new position.
    capped: [Option<(usize, usize)>; MATCHERS],
    /// Set when the sink stopped the stream (`Verdict::Stop`): nothing is
    /// scanned or released until a reset.
    stopped: bool,
    /// Set by `commit_literals` and `feed_token_matches`, cleared by every
    /// other change: the conditions of `step_literals` hold (`token_ready`,
    /// and the program takes `&str` and byte feeds that way), so the next
    /// token-sized feed need not check them one by one.
    token: bool,
}

impl StreamState {
    /// A fresh stream; allocates nothing.
    pub(crate) fn new(prog: &Program) -> StreamState {
        StreamState {
            tape: Tape::default(),
            threads: prog.threads.as_ref().map(Threads::new),
            literals: Literals::new(),
            decided: [None, None],
            died: [None, None],
            suppress: None,
            suppress_tail: false,
            capped: [None, None],
            stopped: false,
            token: false,
        }
    }

    /// Forgets the stream; keeps the allocations and the DFA cache.
    pub(crate) fn reset(&mut self) {
        self.token = false;
        self.tape.reset();
        if let Some(t) = &mut self.threads {
            t.reset();
        }
        self.literals.reset();
        self.decided = NONE_DECIDED;
        self.died = [None; MATCHERS];
        self.suppress = None;
        self.suppress_tail = false;
        self.capped = [None; MATCHERS];
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

    /// The cheap scans of every matcher (`Matcher::scan_quick`): true when
    /// they stepped the whole tape and nothing is decided.
    #[inline(always)]
    fn scan_quick(&mut self, prog: &Program) -> bool {
        each_matcher!(self, prog, |i, m, p| {
            if !m.scan_quick(p, &self.tape) {
                return false;
            }
        });
        true
    }

    /// Steps what was fed and releases what is decided.
    #[inline(always)]
    fn advance(&mut self, prog: &Program, whole_chars: bool, sink: &mut impl Sink) {
        // The thread matcher may leave the gate's last window held and
        // unscanned (see `threads::window`).
        if prog.holds_windows && self.suppress.is_none() {
            if let Some(t) = &mut self.threads {
                t.set_lazy_end(true);
            }
        }
        // Most feeds end with nothing decided: the quick path keeps them
        // out of the merge.
        if self.suppress.is_some() || self.decided != NONE_DECIDED || !self.scan_quick(prog) {
            self.run(prog, false, sink);
        }
        if let Some(t) = &mut self.threads {
            t.set_lazy(false);
        }
        if self.stopped {
            return;
        }
        if self.suppress.is_some() {
            self.advance_suppressed(prog, sink);
            return;
        }
        let live = self.earliest_live(prog);
        self.release_live(prog, live, whole_chars, sink);
    }

    /// Releases what comes before `live`, the earliest position where a
    /// match may still start (moved back to a character boundary with
    /// `whole_chars`), and compacts the tape: the end of a feed.
    #[inline(always)]
    fn release_live(
        &mut self,
        prog: &Program,
        live: usize,
        whole_chars: bool,
        sink: &mut impl Sink,
    ) {
        let safe = if whole_chars {
            self.tape.boundary_before(live)
        } else {
            live
        };
        self.release(safe, sink);
        self.tape.compact();
        self.check_invariants(prog);
    }

    /// The end of `advance` under a suppression: drops what is scanned,
    /// except after a recorded match, which the candidate may not extend
    /// (the text after it is then scanned again). Out of line: rare, and
    /// the common feed's code stays small.
    #[cold]
    #[inline(never)]
    fn advance_suppressed(&mut self, prog: &Program, sink: &mut impl Sink) {
        let upto = self.suppressed_upto(prog);
        self.release(upto, sink);
        self.tape.compact();
        self.check_invariants(prog);
    }

    /// Under a suppression: how far the text can be dropped, the least
    /// over the matchers still following the candidate of where they
    /// scanned to (or of their recorded match's end).
    fn suppressed_upto(&self, prog: &Program) -> usize {
        let mut upto = usize::MAX;
        each_matcher!(ref self, prog, |i, m, p| {
            if self.died[i].is_none() {
                let pos = m.scanned();
                upto = upto.min(m.recorded_end().map_or(pos, |e| e.min(pos)));
            }
        });
        if upto == usize::MAX {
            self.tape.emitted()
        } else {
            upto
        }
    }

    /// What `pick` needs of each matcher: where it could still start a
    /// match, and its first rule. An absent matcher, or one that stopped
    /// following a suppressed candidate, blocks nothing; nor does any at
    /// the end of input (`eof`), where a scan that decided nothing leaves
    /// nothing alive.
    fn lives(&self, prog: &Program, eof: bool) -> [Live; MATCHERS] {
        let none = Live {
            start: usize::MAX,
            first_rule: usize::MAX,
        };
        let mut live = [none; MATCHERS];
        if eof {
            return live;
        }
        each_matcher!(ref self, prog, |i, m, p| {
            if self.died[i].is_none() {
                live[i] = Live {
                    start: m.earliest_live(p),
                    first_rule: prog.rules[i][0],
                };
            }
        });
        live
    }

    /// The earliest position where a match could still start.
    #[inline(always)]
    fn earliest_live(&self, prog: &Program) -> usize {
        let mut live = self.tape.offset();
        each_matcher!(ref self, prog, |i, m, p| {
            live = live.min(match &self.decided[i] {
                Some(d) => d.span.start,
                None => m.earliest_live(p),
            });
        });
        live
    }

    /// Scans with every matcher and decides what can be decided, until the
    /// matchers need more input (or, with `eof`, until everything is
    /// decided).
    fn run(&mut self, prog: &Program, eof: bool, sink: &mut impl Sink) {
        loop {
            if self.stopped {
                return;
            }
            each_matcher!(self, prog, |i, m, p| {
                if self.decided[i].is_none() && self.died[i].is_none() {
                    match m.scan(p, &self.tape, eof) {
                        Scan::Done => {}
                        Scan::Decided(mut d) => {
                            d.rule = prog.rules[i][d.rule];
                            self.decided[i] = Some(d);
                        }
                        Scan::Died(at) => self.died[i] = Some(at),
                    }
                }
            });
            if self.suppress.is_some() && self.decided == NONE_DECIDED && self.all_died(prog) {
                // Every matcher following the suppressed candidate lost it.
                let at = self.died.iter().flatten().copied().max().unwrap_or(0);
                self.end_suppress(prog, at);
                continue;
            }
            if self.decided == NONE_DECIDED {
                // No matcher decided anything: nothing to merge.
                return;
            }
            let live = self.lives(prog, eof);
            let Some(i) = matcher::pick(&self.decided, &live) else {
                if self.cap_blockers(prog, &live) {
                    continue;
                }
                return;
            };
            if let Some(d) = self.decided[i].take() {
                self.decide(prog, d, sink);
            }
        }
    }

    /// When `pick` decided nothing: a matcher that blocks the least
    /// decided candidate only at its start, with a rule listed before the
    /// candidate's, may have nothing alive there but later rules, which
    /// that candidate beats (leftmost-first). Each such matcher is capped
    /// there (`Matcher::cap`): only its rules before the candidate's may
    /// still start a match at its start. Returns whether one was, so the
    /// matchers scan again. Each matcher is capped once per candidate, so
    /// this ends. Not under a suppression, which follows one candidate.
    fn cap_blockers(&mut self, prog: &Program, live: &[Live; MATCHERS]) -> bool {
        if self.suppress.is_some() {
            return false;
        }
        let Some(d) = self
            .decided
            .iter()
            .flatten()
            .min_by_key(|d| (d.span.start, d.rule))
        else {
            return false;
        };
        let (start, rule) = (d.span.start, d.rule);
        let mut capped = false;
        each_matcher!(self, prog, |i, m, p| {
            let l = &live[i];
            if self.decided[i].is_none()
                && l.start == start
                && l.first_rule < rule
                && self.capped[i] != Some((start, rule))
            {
                self.capped[i] = Some((start, rule));
                m.cap(start, prog.rules[i].partition_point(|&r| r < rule));
                capped = true;
            }
        });
        capped
    }

    /// Whether every matcher the program has stopped following the
    /// suppressed candidate.
    fn all_died(&self, prog: &Program) -> bool {
        let mut all = true;
        each_matcher!(ref self, prog, |i, m, p| {
            all &= self.died[i].is_some();
        });
        all
    }

    /// Ends the input and releases everything.
    pub(crate) fn finish(&mut self, prog: &Program, sink: &mut impl Sink) {
        self.token = false;
        if self.stopped {
            return;
        }
        self.run(prog, true, sink);
        if self.stopped {
            return;
        }
        debug_assert!(self.decided == NONE_DECIDED, "{self:?}");
        each_matcher!(ref self, prog, |i, m, p| {
            // Nothing is alive after a scan to the end of input.
            debug_assert_eq!(m.earliest_live(p), m.scanned(), "{self:?}");
        });
        self.check_invariants(prog);
        let end = self.offset();
        self.release(end, sink);
        self.reset();
    }

    /// Drops everything held and continues as if the stream had been
    /// released up to here (used by the held-limit policies).
    fn discard_held(&mut self, prog: &Program) {
        self.token = false;
        // A UTF-8 character cut at the end of the buffer is kept as input,
        // so the output does not carry the tail of a character whose head
        // was discarded.
        let end = self.tape.end_before_cut();
        self.tape.skip_to(end);
        self.tape.set_last_end(None);
        each_matcher!(self, prog, |i, m, p| {
            m.discard(end);
        });
        self.decided = NONE_DECIDED;
        self.died = [None; MATCHERS];
        self.capped = [None; MATCHERS];
        self.suppress = None;
        self.suppress_tail = false;
        self.tape.compact();
    }

    /// Applies a replacing held-limit policy: drops the held text and keeps
    /// dropping the pending candidate's text until its match is decided or
    /// it can no longer match, so nothing a rule covers is released.
    /// `text` is released in place of the held text when this starts a
    /// suppression; when one is already running, the text it holds is
    /// dropped too, with no second `text`.
    fn suppress_pending(
        &mut self,
        prog: &Program,
        text: &[u8],
        whole_chars: bool,
        sink: &mut impl Sink,
    ) {
        self.token = false;
        if self.suppress.is_some() {
            // A greedy match that keeps growing after its first end: the
            // text held after that end goes too, and so does the rest of
            // the candidate.
            let mut upto = self.tape.offset();
            each_matcher!(ref self, prog, |i, m, p| {
                if self.died[i].is_none() {
                    upto = upto.min(m.scanned());
                }
            });
            self.suppress_tail = true;
            self.release(upto, sink);
            self.tape.compact();
            return;
        }
        // Each matcher's earliest candidate: a decided one, or the earliest
        // start of what it follows (a thread, a recorded match, a literal's
        // prefix).
        let mut cand: [Option<usize>; MATCHERS] = [None; MATCHERS];
        each_matcher!(ref self, prog, |i, m, p| {
            cand[i] = match &self.decided[i] {
                Some(d) => Some(d.span.start),
                None => {
                    let live = m.earliest_live(p);
                    (live < m.scanned()).then_some(live)
                }
            };
        });
        let Some(start) = cand.iter().flatten().copied().min() else {
            self.discard_held(prog);
            sink.text(text);
            return;
        };
        // `emitted` is at or before `start`, so the candidate's bytes are
        // still on the tape for the matchers to follow it from there.
        self.release(start, sink);
        sink.text(text);
        self.decided = NONE_DECIDED;
        self.died = [None; MATCHERS];
        each_matcher!(self, prog, |i, m, p| {
            if cand[i] == Some(start) {
                m.focus(start);
            } else {
                m.restart(start);
                self.died[i] = Some(start);
            }
        });
        self.suppress = Some(start);
        self.advance(prog, whole_chars, sink);
    }

    /// Ends a suppression at `p`: what comes before is dropped, and the
    /// stream goes on from the next character boundary.
    fn end_suppress(&mut self, prog: &Program, p: usize) {
        let p = self.tape.boundary_after(p);
        self.tape.skip_to(p);
        self.restart_all(prog, p, false);
        self.suppress = None;
        self.suppress_tail = false;
    }

    /// Every matcher goes on from `at`, where a decided match ended (or a
    /// suppression did); `keep` lets a matcher keep what it found after
    /// `at` when nothing of it starts before.
    fn restart_all(&mut self, prog: &Program, at: usize, keep: bool) {
        each_matcher!(self, prog, |i, m, p| {
            if keep {
                m.restart_after(p, at, &mut self.decided[i]);
            } else {
                m.restart(at);
                self.decided[i] = None;
            }
        });
        self.died = [None; MATCHERS];
        self.capped = [None; MATCHERS];
    }

    /// Releases the text before `upto`: gives it to the sink, or drops it
    /// under a suppression. Inlined: every feed ends here.
    #[inline(always)]
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
    fn decide(&mut self, prog: &Program, d: Decided, sink: &mut impl Sink) {
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
                let mut stop = end;
                each_matcher!(ref self, prog, |i, m, p| {
                    if self.died[i].is_none() {
                        stop = stop.max(m.scanned());
                    }
                });
                stop
            } else {
                end
            };
            self.end_suppress(prog, stop);
            return;
        }
        self.release(start, sink);
        let base = self.tape.base();
        match sink.matched(self.tape.bytes(), base, d.rule, start - base, end - base) {
            Verdict::Accept => {
                self.tape.skip_to(end);
                self.restart_all(prog, end, true);
            }
            Verdict::Reject => {
                // Not a match: an empty match at the previous end is still
                // skipped, and the text from `start` is scanned again.
                self.tape.set_last_end(last_end);
                self.exclude_all(prog, start, d.rule);
            }
            Verdict::Stop => self.stopped = true,
        }
    }

    /// Every matcher goes on from `at`, where a match of `rule` was
    /// rejected, with the rules up to `rule` excluded there (each matcher
    /// excludes its own rules among them: the rules before `rule` did not
    /// match at `at`, or were excluded there by an earlier rejection).
    /// What either matcher decided is dropped: nothing before `at` is
    /// pending, and everything from `at` is scanned again.
    fn exclude_all(&mut self, prog: &Program, at: usize, rule: usize) {
        each_matcher!(self, prog, |i, m, p| {
            match prog.rules[i].partition_point(|&r| r <= rule) {
                0 => m.restart(at),
                k => m.exclude(at, k - 1),
            }
        });
        self.decided = NONE_DECIDED;
        self.died = [None; MATCHERS];
        self.capped = [None; MATCHERS];
    }

    /// Checks the invariants in the module docs (debug builds only).
    #[inline(always)]
    fn check_invariants(&self, prog: &Program) {
        #[cfg(debug_assertions)]
        {
            let tape = &self.tape;
            let (emitted, offset) = (tape.emitted(), tape.offset());
            tape.check_invariants();
            debug_assert_eq!(tape.held(), offset - emitted);
            each_matcher!(ref self, prog, |i, m, p| {
                let scanned = m.scanned();
                debug_assert!(scanned <= offset, "{self:?}");
                // A matcher left out of a suppression waits where it was.
                if self.died[i].is_none() {
                    debug_assert!(emitted <= scanned, "{self:?}");
                }
                let live = m.earliest_live(p);
                debug_assert!(live <= scanned, "{self:?}");
                if self.suppress.is_none() {
                    debug_assert!(emitted <= live, "{self:?}");
                }
                m.check_invariants(tape);
            });
            if self.suppress.is_none() {
                for d in self.decided.iter().flatten() {
                    debug_assert!(emitted <= d.span.start, "{self:?}");
                }
            }
        }
        #[cfg(not(debug_assertions))]
        let _ = prog;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` distinct words of lowercase ASCII letters.
    fn words(n: usize) -> Vec<Vec<u8>> {
        (0..n)
            .map(|mut i| {
                let mut w = b"w".to_vec();
                loop {
                    w.push(b'a' + (i % 26) as u8);
                    i /= 26;
                    if i == 0 {
                        return w;
                    }
                }
            })
            .collect()
    }

    /// A regex rule that is the literal `bytes`, caseless or not.
    fn lit(bytes: &[u8], caseless: bool) -> Source<'static> {
        Source::Regex {
            source: "(literal)",
            literal: Some((bytes.to_vec(), caseless)),
            empty: false,
            caseless: caseless && bytes.iter().any(u8::is_ascii_alphabetic),
        }
    }

    /// A caseless regex rule that is not a literal.
    fn caseless_regex() -> Source<'static> {
        Source::Regex {
            source: r"(?i)ask\d",
            literal: None,
            empty: false,
            caseless: true,
        }
    }

    /// The rules on the literal matcher, whether it is caseless, and the
    /// rules on the threads.
    fn partition(sources: &[Source<'_>]) -> (Vec<usize>, bool, Vec<usize>) {
        let prog = Program::new(sources, &Config::new()).unwrap();
        let caseless = prog.literal.as_ref().is_some_and(|p| p.caseless());
        let [threads, literal] = prog.rules;
        (literal, caseless, threads)
    }

    /// The cliff: one letterless `(?i)` term (which the parser reports as
    /// case-sensitive) among 1,624 caseless ones sent all of them to the
    /// threads. All of them stay on one caseless automaton, and no regex
    /// is built.
    #[test]
    fn letterless_term_keeps_caseless_literals_on_the_automaton() {
        let words = words(1_624);
        for at in [0, 800, 1_624] {
            let mut sources: Vec<Source<'_>> = words.iter().map(|w| lit(w, true)).collect();
            sources.insert(at, lit(b"12", false));
            let prog = Program::new(&sources, &Config::new()).unwrap();
            assert!(prog.threads.is_none(), "letterless term at {at}");
            assert!(prog.literal.as_ref().is_some_and(|p| p.caseless()));
            assert_eq!(prog.rules[LITERAL], (0..1_625).collect::<Vec<_>>());
            assert!(prog.literals_only);
        }
        // Flagged caseless, it goes with case-sensitive literals just the
        // same.
        let sources = [lit(b"ab", false), lit(b"--", true), lit(b"cd", false)];
        assert_eq!(partition(&sources), (vec![0, 1, 2], false, vec![]));
    }

    /// Lettered literals of both kinds: the more numerous kind stays on the
    /// automaton (the case-sensitive one on a tie) with every letterless
    /// one; the rest go to the threads.
    #[test]
    fn mixed_case_literals_keep_the_larger_kind() {
        let sources = [
            lit(b"ab", true),
            lit(b"12", false),
            lit(b"cd", true),
            lit(b"Ef", false),
            lit(b"gh", true),
        ];
        assert_eq!(partition(&sources), (vec![0, 1, 2, 4], true, vec![3]));
        let sources = [
            lit(b"ab", true),
            lit(b"Cd", false),
            lit(b"-", true),
            lit(b"ef", false),
        ];
        assert_eq!(partition(&sources), (vec![1, 2, 3], false, vec![0]));
        let sources = [lit(b"ab", true), lit(b"Cd", false)];
        assert_eq!(partition(&sources), (vec![1], false, vec![0]));
    }

    /// More lettered literals of the smaller kind than
    /// `Config::split_literal_limit` fail at once with `TooBig`, blaming
    /// the first one past the limit and naming the limit and its setter;
    /// a limit raised to their number lets the set build.
    #[test]
    fn too_many_literals_for_the_threads_fail_fast() {
        assert_eq!(Config::new().get_split_literal_limit(), 2_000);
        let words = words(9);
        let (a, b) = words.split_at(4);
        let mut sources: Vec<Source<'_>> = a.iter().map(|w| lit(w, true)).collect();
        sources.extend(b.iter().map(|w| lit(w, false)));
        let config = Config::new().split_literal_limit(3);
        let err = Program::new(&sources, &config).unwrap_err();
        assert_eq!(err.kind(), &ErrorKind::TooBig);
        assert_eq!(err.rule(), Some(3));
        let message = err.to_string();
        assert!(
            message.contains("limit of 3 ")
                && message.contains("Config::split_literal_limit")
                && message.contains("caseless"),
            "{message}"
        );
        let prog = Program::new(&sources, &config.clone().split_literal_limit(4)).unwrap();
        assert_eq!(prog.rules, [vec![0, 1, 2, 3], vec![4, 5, 6, 7, 8]]);
        // Without the literal matcher every rule is a regex of the threads
        // as asked: no such limit.
        assert!(Program::new(&sources, &config.literal_matcher(false)).is_ok());
    }

    /// More caseless rules on the threads than
    /// `Config::caseless_regex_limit` fail at once with `TooBig`, blaming
    /// the first one past the limit and naming the limit and its setter;
    /// caseless literals on the automaton and case-sensitive rules do not
    /// count, caseless literals sent to the threads do.
    #[test]
    fn too_many_caseless_regexes_fail_fast() {
        assert_eq!(Config::new().get_caseless_regex_limit(), 2_000);
        let words = words(6);
        // Rules 0, 2 and 4 are caseless regexes; 1 and 3 caseless literals
        // on the automaton; 5 a case-sensitive literal, sent to the threads
        // by the split, where it does not count.
        let sources = [
            caseless_regex(),
            lit(&words[0], true),
            caseless_regex(),
            lit(&words[1], true),
            caseless_regex(),
            lit(&words[2], false),
        ];
        let err = Program::new(&sources, &Config::new().caseless_regex_limit(2)).unwrap_err();
        assert_eq!(err.kind(), &ErrorKind::TooBig);
        assert_eq!(err.rule(), Some(4));
        assert_eq!(err.pattern(), Some(r"(?i)ask\d"));
        let message = err.to_string();
        assert!(
            message.contains("3 caseless rules")
                && message.contains("limit of 2,")
                && message.contains("Config::caseless_regex_limit"),
            "{message}"
        );
        let prog = Program::new(&sources, &Config::new().caseless_regex_limit(3)).unwrap();
        assert_eq!(prog.rules, [vec![0, 2, 4, 5], vec![1, 3]]);
        // Sent to the threads by the split, caseless literals count: two
        // caseless literals against three case-sensitive ones.
        let sources = [
            lit(&words[0], true),
            lit(&words[1], false),
            lit(&words[2], true),
            lit(&words[3], false),
            lit(&words[4], false),
        ];
        let err = Program::new(&sources, &Config::new().caseless_regex_limit(1)).unwrap_err();
        assert_eq!(err.rule(), Some(2));
        assert!(Program::new(&sources, &Config::new().caseless_regex_limit(2)).is_ok());
        // Without the literal matcher, every caseless literal counts.
        let sources = [lit(&words[0], true), lit(&words[1], true)];
        let config = Config::new().caseless_regex_limit(1);
        assert!(Program::new(&sources, &config).is_ok());
        let err = Program::new(&sources, &config.literal_matcher(false)).unwrap_err();
        assert_eq!(err.rule(), Some(1));
    }
}
