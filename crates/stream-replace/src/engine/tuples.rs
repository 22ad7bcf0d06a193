//! The many-thread tight loop's memo: a lazily built automaton over ordered
//! tuples of thread states.
//!
//! A bounded repetition keeps a thread per start alive (`[a-z]{0,200}x` in
//! a long word, `[\w.%+-]{1,64}@…` in base64), and their counter states
//! never merge, so the general loop steps each of them on every byte. But
//! while no match is recorded, what happens on the next byte depends only
//! on the live threads' DFA states in start order (duplicates already
//! merged, the earliest kept) and on the kind of the byte before (which
//! picks the start state of a new thread): such a tuple is a configuration.
//! Stepping one on a byte gives the next configuration and which of the
//! old threads survive, in order; that is worked out once, by the same
//! rules as the general loop, and then costs one table lookup per byte plus
//! an update of the ring of start offsets, O(1) amortised when the
//! survivors are contiguous (the oldest threads die, a new one is
//! appended), which is the case for counters. Bytes that need more (a
//! match, a quit) are marked to exit to the general loop, and the memo
//! starts over when it outgrows its budget, so the general loop stays the
//! reference and the fallback.
//!
//! The memo holds DFA states, so it lives with the cache that made them, in
//! the scratch space a stream borrows for a call (see `threads`), and
//! starts over when that cache is cleared; between calls a stream keeps
//! only its threads.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};

use super::automaton::{Automaton, MemoStart, Thread, byte_kind};
use super::bytes::IdHasher;
use super::dfa::Dfa;
use super::tape::Tape;

/// An entry's low bits: the offset in `Tuples::table` of the next
/// configuration's row.
const NEXT: u64 = (1 << 32) - 1;
/// An entry is known.
const KNOWN: u64 = 1 << 32;
/// The loop cannot step this byte: leave it to the general loop.
const EXIT: u64 = 1 << 33;
/// A thread started at this byte is appended.
const NEW: u64 = 1 << 34;
/// At most one thread is alive after the byte: the one-thread loop goes on
/// (outside a gate's window).
const SMALL: u64 = 1 << 35;
/// No thread is alive after the byte: the gate may skip (outside its
/// window).
const IDLE: u64 = 1 << 37;
/// The survivors are not contiguous: bits 40.. index `Tuples::remaps`.
const GENERAL: u64 = 1 << 36;
/// Without `GENERAL`: how many of the oldest threads die (bits 40..52) and
/// how many of the newest (bits 52..64).
const FRONT: u32 = 40;
const BACK: u32 = 52;
const DROP_MASK: u64 = (1 << 12) - 1;

/// The fewest live threads for which the loop is entered outside a gate's
/// window: a few threads that soon merge or die (digits under overlapping
/// phone and card rules) cost less in the general loop than the loop's
/// entry and exit.
pub(super) const MIN_THREADS: usize = 4;

/// The most threads a configuration holds (so drop counts fit 12 bits);
/// more go to the general loop.
const MAX_THREADS: usize = 1024;
/// The most thread states kept over all configurations before the memo
/// starts over (a few hundred KiB at most per scratch space).
const MAX_STATES: usize = 1 << 14;
/// The most table entries kept before the memo starts over.
const MAX_ENTRIES: usize = 1 << 15;

/// Dead entries at the front of the ring of starts that make the loop drop
/// them (so the ring holds at most this plus `MAX_THREADS` entries).
const RING_SLACK: usize = 1024;

/// In a remap list: the thread started at this byte.
const NEW_THREAD: u32 = u32::MAX;

/// No configuration (the end of a hash chain).
const NONE: u32 = u32::MAX;

/// The index's keys are hashes already.
#[derive(Default)]
struct Passthrough(u64);

impl Hasher for Passthrough {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// What working out an entry found.
enum Step {
    /// The entry (stored when it holds whatever the cache does).
    Entry(u64),
    /// A cache clear on the way made every state held stale.
    Stale,
}

/// The memo, kept with the DFA cache it was worked out with (in a scratch
/// space that streams borrow, as `single`'s). Valid while the cache's
/// clear count is `clears`.
#[derive(Debug)]
pub(super) struct Tuples<S> {
    /// (kind of the byte before, thread states in start order).
    configs: Vec<(u8, Box<[S]>)>,
    /// A configuration's hash to the last configuration added with it;
    /// `chain` links each to the previous one with the same hash.
    index: HashMap<u64, u32, BuildHasherDefault<Passthrough>>,
    chain: Vec<u32>,
    /// `configs.len()` rows of `Program::nclasses` entries (0 is unknown).
    table: Vec<u64>,
    /// For each general remap: where each survivor was in the old tuple.
    remaps: Vec<Box<[u32]>>,
    /// Thread states held by `configs`.
    states: usize,
    clears: usize,
    /// Set when a configuration could not be added: start over at the next
    /// entry to the loop.
    full: bool,
    /// The live threads' starts while the loop runs, oldest first, from
    /// `head` on (a ring that drops its oldest entries by moving `head`).
    starts: Vec<usize>,
    head: usize,
    /// The configuration the loop last stopped in, if the cache has not
    /// been cleared since: looked at first when the loop is entered again.
    last: Option<u32>,
    /// For each configuration: whether every thread's future is known to
    /// be open (see `all_open`).
    open: Vec<bool>,
    /// Spare lists.
    sids: Vec<S>,
    moved: Vec<usize>,
}

impl<S: Copy + Eq + Hash> Tuples<S> {
    pub(super) fn new() -> Tuples<S> {
        Tuples {
            configs: Vec::new(),
            index: HashMap::default(),
            chain: Vec::new(),
            table: Vec::new(),
            remaps: Vec::new(),
            states: 0,
            clears: 0,
            full: false,
            starts: Vec::new(),
            head: 0,
            last: None,
            open: Vec::new(),
            sids: Vec::new(),
            moved: Vec::new(),
        }
    }

    /// Makes the memo valid for `clears`, starting over if needed.
    fn prepare(&mut self, clears: usize) {
        if self.clears != clears || self.full {
            self.configs.clear();
            self.index.clear();
            self.chain.clear();
            self.open.clear();
            self.last = None;
            self.table.clear();
            self.remaps.clear();
            self.states = 0;
            self.clears = clears;
            self.full = false;
        }
    }

    /// The index of a configuration, added if new; `None` when the memo is
    /// full.
    fn config<D: Dfa<Sid = S>>(
        &mut self,
        prog: &Automaton<D>,
        kind: u8,
        sids: &[S],
    ) -> Option<u32> {
        if let Some(c) = self.last {
            let (k, s) = &self.configs[c as usize];
            if *k == kind && **s == *sids {
                return Some(c);
            }
        }
        // One multiplication per state: a bounded repetition keeps dozens.
        let mut h = IdHasher(u64::from(kind));
        for sid in sids {
            sid.hash(&mut h);
        }
        let h = h.finish();
        let mut at = self.index.get(&h).copied().unwrap_or(NONE);
        while at != NONE {
            let (k, s) = &self.configs[at as usize];
            if *k == kind && **s == *sids {
                return Some(at);
            }
            at = self.chain[at as usize];
        }
        if sids.len() > MAX_THREADS
            || self.states + sids.len() > MAX_STATES
            || self.table.len() + prog.nclasses > MAX_ENTRIES
        {
            self.full = true;
            return None;
        }
        let c = self.configs.len() as u32;
        self.states += sids.len();
        self.configs.push((kind, sids.into()));
        self.open.push(false);
        self.chain.push(self.index.insert(h, c).unwrap_or(NONE));
        self.table.resize(self.table.len() + prog.nclasses, 0);
        Some(c)
    }

    /// Steps the live threads (no match recorded, nothing stepped alone)
    /// from `pos` until a byte needs the general loop, the tape ends, or
    /// fewer threads are left than this loop is for: without `stay`, at
    /// most one (the one-thread loop takes over); with `stay`, a gate's
    /// window `lo..=hi` (stream offsets), none outside the window (the gate
    /// may skip from there). Returns true when a cache clear made the
    /// states stale (the threads' starts are still right).
    pub(super) fn run<D: Dfa<Sid = S>>(
        &mut self,
        prog: &Automaton<D>,
        cache: &mut D::Cache,
        threads: &mut Vec<Thread<S>>,
        pos: &mut usize,
        tape: &Tape,
        stay: Option<(usize, usize)>,
    ) -> bool {
        let base = tape.base();
        let hay = tape.bytes();
        let mut i = *pos - base;
        self.prepare(D::clear_count(cache));
        let kind = tape.look_behind(*pos).map_or(0, byte_kind);
        let mut sids = std::mem::take(&mut self.sids);
        sids.clear();
        sids.extend(threads.iter().map(|t| t.sid));
        let entry = self.config(prog, kind, &sids);
        self.sids = sids;
        let Some(c) = entry else {
            return false;
        };
        self.starts.clear();
        self.head = 0;
        self.starts.extend(threads.iter().map(|t| t.start));
        let n = prog.nclasses;
        let classes = &prog.classes;
        let mut stale = false;
        // The offset of the current configuration's row in `table`.
        let mut row = c as usize * n;
        // What stops the tight loop: an entry not known, an exit, a remap
        // that is not contiguous, and (where the loop may stop) too few
        // threads left.
        let stop = KNOWN
            | EXIT
            | GENERAL
            | match stay {
                None => SMALL,
                Some(_) => IDLE,
            };
        loop {
            let mut e = 0;
            {
                // The hot loop: one load per byte, and the ring's update.
                let table = &self.table[..];
                let starts = &mut self.starts;
                let mut head = self.head;
                while i < hay.len() {
                    e = table[row + classes[hay[i] as usize] as usize];
                    if e & stop != KNOWN {
                        break;
                    }
                    head += ((e >> FRONT) & DROP_MASK) as usize;
                    if head >= RING_SLACK {
                        // Drop the dead entries, amortised over the pushes
                        // that made them.
                        starts.drain(..head);
                        head = 0;
                    }
                    let back = ((e >> BACK) & DROP_MASK) as usize;
                    if back != 0 {
                        starts.truncate(starts.len() - back);
                    }
                    if head >= starts.len() {
                        starts.clear();
                        head = 0;
                    }
                    if e & NEW != 0 {
                        starts.push(i + base);
                    }
                    row = (e & NEXT) as usize;
                    i += 1;
                }
                self.head = head;
            }
            if i >= hay.len() {
                break;
            }
            let b = hay[i];
            if e & KNOWN == 0 {
                match self.step(prog, cache, (row / n) as u32, tape.look_behind(i + base), b) {
                    Step::Entry(x) => e = x,
                    Step::Stale => {
                        stale = true;
                        break;
                    }
                }
            }
            if e & EXIT != 0 {
                break;
            }
            let p = i + base;
            if e & GENERAL == 0 {
                self.head += ((e >> FRONT) & DROP_MASK) as usize;
                let back = ((e >> BACK) & DROP_MASK) as usize;
                self.starts.truncate(self.starts.len() - back);
                if self.head >= self.starts.len() {
                    self.starts.clear();
                    self.head = 0;
                }
                if e & NEW != 0 {
                    self.starts.push(p);
                }
            } else {
                let remap = &self.remaps[(e >> FRONT) as usize];
                self.moved.clear();
                for &k in remap.iter() {
                    self.moved.push(match k {
                        NEW_THREAD => p,
                        k => self.starts[self.head + k as usize],
                    });
                }
                self.starts.clear();
                self.head = 0;
                self.starts.extend(self.moved.iter().copied());
            }
            row = (e & NEXT) as usize;
            i += 1;
            match stay {
                None if e & SMALL != 0 => break,
                Some((lo, hi)) if e & IDLE != 0 && !(lo <= p + 1 && p < hi) => break,
                _ => {}
            }
        }
        let c = (row / n) as u32;
        self.last = Some(c);
        let sids = &self.configs[c as usize].1;
        let starts = &self.starts[self.head..];
        debug_assert_eq!(sids.len(), starts.len());
        threads.clear();
        threads.extend(
            starts
                .iter()
                .zip(sids.iter())
                .map(|(&start, &sid)| Thread { start, sid }),
        );
        *pos = i + base;
        stale
    }

    /// The configuration the loop last stopped in, if the threads are still
    /// in it (same states, and the cache not cleared since).
    #[inline]
    pub(super) fn current(&self, threads: &[Thread<S>], clears: usize) -> Option<u32> {
        let c = self.last?;
        let (_, sids) = &self.configs[c as usize];
        let same = self.clears == clears
            && !self.full
            && sids.len() == threads.len()
            && sids.iter().zip(threads).all(|(&s, t)| s == t.sid);
        same.then_some(c)
    }

    /// Whether every thread of configuration `c` is known to have an open
    /// future (so settling at the end of a feed changes nothing).
    #[inline]
    pub(super) fn all_open(&self, c: u32) -> bool {
        self.open[c as usize]
    }

    /// Records that every thread of configuration `c` has an open future.
    pub(super) fn set_all_open(&mut self, c: u32) {
        self.open[c as usize] = true;
    }

    /// Works out the entry of configuration `c` on byte `b`, whose
    /// look-behind is `lb`, by the general loop's rules with no match
    /// recorded; stores it when it does not depend on the cache.
    fn step<D: Dfa<Sid = S>>(
        &mut self,
        prog: &Automaton<D>,
        cache: &mut D::Cache,
        c: u32,
        lb: Option<u8>,
        b: u8,
    ) -> Step {
        let dfa = &prog.dfa;
        let clears = D::clear_count(cache);
        let slot = c as usize * prog.nclasses + prog.classes[b as usize] as usize;
        // (where it was in the old tuple, its state after `b`)
        let mut kept: Vec<(u32, S)> = Vec::new();
        let old = self.configs[c as usize].1.len();
        for k in 0..old {
            let s = self.configs[c as usize].1[k];
            let Ok(next) = dfa.next_state(cache, s, b) else {
                return Step::Entry(KNOWN | EXIT);
            };
            if D::clear_count(cache) != clears {
                return Step::Stale;
            }
            if dfa.is_special(next) {
                if dfa.is_dead(next) {
                    continue;
                }
                // A quit or a match: the general loop's business.
                self.table[slot] = KNOWN | EXIT;
                return Step::Entry(KNOWN | EXIT);
            }
            if !kept.iter().any(|&(_, q)| q == next) {
                kept.push((k as u32, next));
            }
        }
        match prog.memo_start(cache, clears, lb, b) {
            MemoStart::No => {}
            MemoStart::Thread(next) => {
                if !kept.iter().any(|&(_, q)| q == next) {
                    kept.push((NEW_THREAD, next));
                }
            }
            MemoStart::Exit => {
                self.table[slot] = KNOWN | EXIT;
                return Step::Entry(KNOWN | EXIT);
            }
            MemoStart::GaveUp => return Step::Entry(KNOWN | EXIT),
            MemoStart::Stale => return Step::Stale,
        }
        let mut sids = std::mem::take(&mut self.sids);
        sids.clear();
        sids.extend(kept.iter().map(|&(_, q)| q));
        let to = self.config(prog, byte_kind(b), &sids);
        self.sids = sids;
        let Some(to) = to else {
            return Step::Entry(KNOWN | EXIT);
        };
        let mut e = KNOWN | (u64::from(to) * prog.nclasses as u64);
        if kept.len() <= 1 {
            e |= SMALL;
        }
        if kept.is_empty() {
            e |= IDLE;
        }
        let new = kept.last().is_some_and(|&(k, _)| k == NEW_THREAD);
        let olds = &kept[..kept.len() - usize::from(new)];
        let contiguous = olds.windows(2).all(|w| w[1].0 == w[0].0 + 1);
        if contiguous {
            let (front, back) = match (olds.first(), olds.last()) {
                (Some(f), Some(l)) => (f.0 as usize, old - 1 - l.0 as usize),
                _ => (old, 0),
            };
            e |= (front as u64) << FRONT | (back as u64) << BACK;
            if new {
                e |= NEW;
            }
        } else {
            e |= GENERAL | (self.remaps.len() as u64) << FRONT;
            self.remaps.push(kept.iter().map(|&(k, _)| k).collect());
        }
        self.table[slot] = e;
        Step::Entry(e)
    }
}
