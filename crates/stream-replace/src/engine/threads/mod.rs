//! The thread matcher: one DFA over all rules, with the Thompson NFA as its
//! exact fallback.
//!
//! The DFA (leftmost-first, anchored; dense, built with the rules, or lazy:
//! see `dfa`) is stepped a byte at a time as a
//! set of live threads, one per candidate start position, in start order
//! (which is priority order). A match state records the global best match
//! and drops every later thread; two threads in the same state have the
//! same future, so only the earlier is kept; a match is decided once a best
//! match exists and no thread is left.
//!
//! Where the DFA cannot go on (a quit byte: a non-ASCII byte when a rule
//! uses Unicode word look-around; or a lazy cache clear, which invalidates
//! the states held), the held region is replayed from its earliest live
//! start with the same thread logic over the Thompson NFA (see `nfa`), and
//! the matcher goes back to the DFA once nothing is alive. A `\b` next to
//! a word character (`\b\d{3}`, `sk-…\b`) does not make the DFA quit: it
//! steps such rules rewritten (see `edges`), and the NFA works out again
//! only a match the rewritten rule may have decided wrongly.
//!
//! A stream owns only its threads (start positions and state ids) and
//! positions. What it steps them with, the lazy DFA's cache and the memos
//! below, is a `Scratch` borrowed from the program's pool for one call.
//! Lazy state ids are only valid in the cache, and the generation of it,
//! that made them: a stream that gets another cache, or finds its cache
//! cleared since its last call, works them out again (`Core::resume`).
//!
//! Two fast paths keep the common cases cheap. With at most one live thread
//! and no recorded match, the next step depends only on that thread's state
//! and the kind of the byte before; `single` memoises these configurations
//! and their transitions, so such text costs one table lookup per byte.
//! When the earliest of several threads has lived `SUSPEND_AFTER` bytes (an
//! open `<think>` with words inside), its match would beat every later
//! thread, so it is stepped alone; if it dies without a match, the text
//! after its start is replayed with every thread, at most once per byte.
//! At the end of a feed, `settle` drops threads that can no longer match and
//! decides matches that end there whatever follows (see `futures`).
//!
//! Bounded repetitions (`[a-z]{0,200}x`, an email with a 64-byte local
//! part) keep a thread per start alive whose counter states never merge.
//! With several threads and no match recorded, `tuples` memoises the
//! ordered tuple of their states, so a byte costs one lookup whatever the
//! number of threads. And when every rule has a required literal after a
//! part of bounded length (the `@` of that email), the `gate` skips, while
//! nothing is alive, to that many bytes before the next literal, and
//! `reverse` searches back from the literal for where such a part can
//! begin at the earliest (the local part before the `@`); the threads run
//! only from there. At the end of a call, `window` leaves the gate's last
//! window idle and held rather than step a thread from each of its bytes.
//!
//! The files, as `regex-automata` keeps a DFA apart from its search loops:
//!
//! - `program`: the immutable program (NFA, DFA, tables, memos frozen for
//!   a dense DFA) and the `Scratch` a call borrows;
//! - `state`: a stream's `Core` (threads, recorded match, mode) and the
//!   steps every loop shares;
//! - `stream`: `Core::run` and the general DFA loop, which chooses among
//!   the fast paths; `fallback`: the NFA loop;
//! - one file per fast path, each saying on top when it is entered and why
//!   it is exact: `idle`, `forward`, `quick`, `one_thread`,
//!   `many_threads`, `suspend`, `escape`, `settle`, `resume`, `reverse`,
//!   `window`, `token` (the memos they read are the engine's `single`,
//!   `tuples`, `futures` and `gate`);
//! - this file: `Threads`, the matcher the stream holds, over either DFA.
//!
//! Why each of these paths gives the general loop's answer: the crate's
//! `DESIGN.md`, section 4, and the top of each file; the unit tests
//! (`tests`) run each fast path against the general loop.

mod escape;
mod fallback;
mod forward;
mod idle;
mod many_threads;
mod one_thread;
mod program;
mod quick;
mod resume;
mod reverse;
mod settle;
mod state;
mod stream;
mod suspend;
mod token;
mod window;

#[cfg(test)]
mod tests;

pub(crate) use program::Program;

use program::Progs;
use state::Core;

use super::dfa::{Dense, Lazy};
use super::matcher::{Matcher, Scan};
use super::tape::Tape;

/// The thread matcher over the program's DFA: a stream's threads and
/// positions, nothing it would need a lock or a cache for between calls.
#[derive(Debug)]
pub(crate) struct Threads(Cores);

#[derive(Debug)]
enum Cores {
    Dense(Core<Dense>),
    Lazy(Core<Lazy>),
}

impl Threads {
    pub(crate) fn new(prog: &Program) -> Threads {
        Threads(match prog.0 {
            Progs::Dense(_) => Cores::Dense(Core::new()),
            Progs::Lazy(_) => Cores::Lazy(Core::new()),
        })
    }

    /// With `yes`, the bytes fed next are not the last of the caller's
    /// input for this call (see `Core::set_lazy`).
    pub(crate) fn set_lazy(&mut self, yes: bool) {
        match &mut self.0 {
            Cores::Dense(c) => c.set_lazy(yes),
            Cores::Lazy(c) => c.set_lazy(yes),
        }
    }

    /// With `yes`, the bytes fed next are the last of the caller's input
    /// for this call, and more may follow in later calls (see
    /// `Core::set_lazy_end`).
    pub(crate) fn set_lazy_end(&mut self, yes: bool) {
        match &mut self.0 {
            Cores::Dense(c) => c.set_lazy_end(yes),
            Cores::Lazy(c) => c.set_lazy_end(yes),
        }
    }

    /// The token path (see `token`): steps `chunk`, the bytes that follow
    /// `tape`, where it is. Returns the earliest position where a match may
    /// still start when it applied the chunk (the caller then puts it on
    /// the tape); `None`, having changed nothing, when the chunk needs the
    /// general path. Only for a program that `takes_tokens`.
    ///
    /// With `AGAIN`, the second try for a chunk the first gave `None` for
    /// (`Core::step_token_again`, out of line): it steps the chunk where a
    /// few threads are alive at once (a second thread begun inside the
    /// first one's run of bytes), as the general loop would.
    #[inline(always)]
    pub(crate) fn step_token<const AGAIN: bool>(
        &mut self,
        prog: &Program,
        tape: &Tape,
        chunk: &[u8],
    ) -> Option<usize> {
        match (&mut self.0, &prog.0) {
            (Cores::Dense(c), Progs::Dense(p)) if AGAIN => c.step_token_again(p, tape, chunk),
            (Cores::Dense(c), Progs::Dense(p)) => c.step_token(p, tape, chunk),
            _ => None,
        }
    }
}

/// Calls a `Core` method on the DFA the program has. A stream is only ever
/// run with the program that made it, so the two always agree.
macro_rules! dispatch {
    ($self:ident, $prog:ident, |$c:ident, $p:ident| $e:expr) => {
        match (&mut $self.0, &$prog.0) {
            (Cores::Dense($c), Progs::Dense($p)) => $e,
            (Cores::Lazy($c), Progs::Lazy($p)) => $e,
            _ => unreachable!("a stream runs with the program that made it"),
        }
    };
    ($self:ident, |$c:ident| $e:expr) => {
        match $self.0 {
            Cores::Dense(ref $c) => $e,
            Cores::Lazy(ref $c) => $e,
        }
    };
    (mut $self:ident, |$c:ident| $e:expr) => {
        match $self.0 {
            Cores::Dense(ref mut $c) => $e,
            Cores::Lazy(ref mut $c) => $e,
        }
    };
}

impl Matcher for Threads {
    type Program = Program;

    #[inline(always)]
    fn scan_quick(&mut self, prog: &Program, tape: &Tape) -> bool {
        dispatch!(self, prog, |c, p| c.scan_quick(p, tape))
    }

    fn scan(&mut self, prog: &Program, tape: &Tape, eof: bool) -> Scan {
        dispatch!(self, prog, |c, p| c.scan(p, tape, eof))
    }

    #[inline(always)]
    fn scanned(&self) -> usize {
        dispatch!(self, |c| c.scanned())
    }

    #[inline(always)]
    fn earliest_live(&self, prog: &Program) -> usize {
        match (&self.0, &prog.0) {
            (Cores::Dense(c), Progs::Dense(p)) => c.earliest_live(p),
            (Cores::Lazy(c), Progs::Lazy(p)) => c.earliest_live(p),
            _ => unreachable!("a stream runs with the program that made it"),
        }
    }

    fn earliest_candidate(&self) -> Option<usize> {
        dispatch!(self, |c| c.earliest_candidate())
    }

    #[inline(always)]
    fn recorded_end(&self) -> Option<usize> {
        dispatch!(self, |c| c.recorded_end())
    }

    #[inline(always)]
    fn is_idle(&self) -> bool {
        dispatch!(self, |c| c.is_idle())
    }

    #[inline(always)]
    fn skip_idle(&self, prog: &Program, hay: &[u8], from: usize, lb: Option<u8>) -> usize {
        match &prog.0 {
            Progs::Dense(p) => p.skip_idle(hay, from, lb),
            Progs::Lazy(p) => p.skip_idle(hay, from, lb),
        }
    }

    #[inline(always)]
    fn skip_to(&mut self, at: usize) {
        dispatch!(mut self, |c| c.skip_to(at))
    }

    #[inline(always)]
    fn restart(&mut self, at: usize) {
        dispatch!(mut self, |c| c.restart(at))
    }

    fn exclude(&mut self, at: usize, rule: usize) {
        dispatch!(mut self, |c| c.exclude(at, rule))
    }

    fn cap(&mut self, at: usize, end: usize) {
        dispatch!(mut self, |c| c.cap(at, end))
    }

    fn focus(&mut self, start: usize) {
        dispatch!(mut self, |c| c.focus(start))
    }

    fn discard(&mut self, at: usize) {
        dispatch!(mut self, |c| c.discard(at))
    }

    fn reset(&mut self) {
        dispatch!(mut self, |c| c.reset())
    }

    #[cfg(debug_assertions)]
    fn check_invariants(&self, tape: &Tape) {
        dispatch!(self, |c| c.check_invariants(tape))
    }
}
