//! The literal matcher: an Aho-Corasick automaton over the rules that are
//! plain literals, stepped a byte at a time with its state carried across
//! feeds.
//!
//! The automaton is built leftmost-first (`aho-corasick`'s DFA when it fits
//! `Config::literal_dfa_size_limit`, its contiguous NFA otherwise, with a
//! front table of DFA rows for its shallowest states in the same limit: see
//! `front`), unanchored. Stepping it is
//! `aho-corasick`'s own leftmost search loop, cut into feeds: a match state
//! records a match (a later one replaces it: under leftmost-first semantics
//! the automaton only reaches a match state again on a longer or
//! higher-priority match of the same or an earlier start), and the dead
//! state decides the recorded match. The state between feeds is a state ID,
//! the recorded match and the position.
//!
//! Hold-back. While nothing is recorded, the state is the trie node of the
//! longest suffix of the text that is a prefix of some literal; its depth
//! says where the earliest literal that can still match starts. The depth
//! of each state is worked out at build time by walking every literal
//! through the automaton (a literal that can never match under
//! leftmost-first, one with an earlier literal as a prefix, stops there, as
//! the trie does), and looked up once per feed. After a match is recorded,
//! the automaton follows only trie edges from a node that starts at or
//! before it (fail transitions lead to the dead state), so the same depth
//! still gives the earliest live start.
//!
//! Rejections. After a rejected match (`Matcher::exclude`), the matcher
//! must find the literals that match at the rejected start other than the
//! excluded ones, in rule order. The automaton cannot: under leftmost-first
//! it drops a literal that has an earlier one as a prefix, and reports
//! only the first literal matching at a start. So the program keeps the
//! literals' bytes, and the matcher compares them, in rule order, with the
//! text at that start: the first that matches is decided; one the tape ends
//! inside of holds everything from that start until more text (or the end
//! of input) settles it; when none matches, the automaton goes on from the
//! next byte. Rejections are rare: each costs a pass over the literals
//! after the excluded ones, each compared up to its first differing byte.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use aho_corasick::automaton::{Automaton, Candidate, Prefilter};
use aho_corasick::nfa::{contiguous, noncontiguous};
use aho_corasick::{MatchKind, Span, StartKind, dfa};

use super::bytes::IdHasher;
use super::bytes::is_continuation;
use super::front::{Front, HAS_CHILD, Step};
use super::matcher::{Decided, Matcher, Scan};
use super::tape::Tape;

/// The most a chunk stepped in place (`Literals::run_in_place`) may leave
/// held; less than the first segment the stream is fed of a chunk.
const IN_PLACE_HELD: usize = 64;

/// Maps a state to its depth, with `HAS_CHILD` set when a longer literal
/// goes on from it.
type DepthMap = HashMap<u32, u32, BuildHasherDefault<IdHasher>>;

/// The depth table: indexed by state ID where the IDs are dense enough
/// (the DFA's, a multiple of its stride), hashed otherwise (the
/// contiguous NFA's, offsets of states of varied sizes).
#[derive(Debug)]
enum Depths {
    /// A byte per entry (the depth, and `NARROW_CHILD` for `HAS_CHILD`)
    /// when every depth fits: a quarter of the cache lines of `Dense`,
    /// which matters to a big automaton's one lookup per feed.
    Narrow {
        shift: u32,
        table: Vec<u8>,
    },
    Dense {
        shift: u32,
        table: Vec<u32>,
    },
    Sparse(DepthMap),
    /// The front's states with rows keep their entries in their rows; the
    /// table gives the NFA's other states'.
    Front(Box<Depths>),
}

/// `HAS_CHILD` in a `Depths::Narrow` entry.
const NARROW_CHILD: u8 = 0x80;

impl Depths {
    /// A dense table when it takes at most a few entries per state.
    fn new(map: DepthMap) -> Depths {
        let shift = map.keys().map(|&k| k.trailing_zeros()).min().unwrap_or(0);
        let len = map
            .keys()
            .map(|&k| (k >> shift) as usize + 1)
            .max()
            .unwrap_or(0);
        if len > 4 * map.len() + 64 {
            return Depths::Sparse(map);
        }
        if map
            .values()
            .all(|&d| d & !HAS_CHILD < u32::from(NARROW_CHILD))
        {
            let mut table = vec![0; len];
            for (&k, &d) in &map {
                let child = if d & HAS_CHILD != 0 { NARROW_CHILD } else { 0 };
                // Below `NARROW_CHILD`: the check above.
                table[(k >> shift) as usize] = (d & !HAS_CHILD) as u8 | child;
            }
            return Depths::Narrow { shift, table };
        }
        let mut table = vec![0; len];
        for (&k, &d) in &map {
            table[(k >> shift) as usize] = d;
        }
        Depths::Dense { shift, table }
    }

    /// The entry of state `key` (0 for a state the table does not hold).
    #[inline(always)]
    fn lookup(&self, key: usize) -> u32 {
        match self {
            Depths::Narrow { shift, table } => {
                let e = table.get(key >> shift).copied().unwrap_or(0);
                u32::from(e & !NARROW_CHILD) | (u32::from(e & NARROW_CHILD) << 24)
            }
            Depths::Dense { shift, table } => table.get(key >> shift).copied().unwrap_or(0),
            Depths::Sparse(map) => map.get(&(key as u32)).copied().unwrap_or(0),
            Depths::Front(table) => table.lookup(key),
        }
    }
}

/// The size of the transition table of the DFA of `literals`, worked out
/// without building it: a row of 4-byte state IDs per trie node, a row as
/// wide as the byte classes rounded up to a power of two, as
/// `aho-corasick` lays it out. The DFA's other parts (match lists, the
/// prefilter) are small beside it.
fn dfa_table_bytes(literals: &[&[u8]], ascii_case_insensitive: bool) -> usize {
    // A caseless automaton has one trie node for both cases of a letter.
    let fold = |b: &u8| {
        if ascii_case_insensitive {
            b.to_ascii_lowercase()
        } else {
            *b
        }
    };
    // Trie nodes: the root, and a node per distinct prefix, counted over
    // the sorted literals as the bytes past each one's common prefix with
    // the one before.
    let mut sorted = literals.to_vec();
    sorted.sort_unstable_by(|a, b| a.iter().map(fold).cmp(b.iter().map(fold)));
    let mut nodes = 1usize;
    let mut prev: &[u8] = &[];
    for &l in &sorted {
        let common = l
            .iter()
            .map(fold)
            .zip(prev.iter().map(fold))
            .take_while(|(a, b)| a == b)
            .count();
        nodes += l.len() - common;
        prev = l;
    }
    // Byte classes: a class boundary after every byte a transition uses
    // and after the byte before it.
    let mut boundary = [false; 256];
    for l in literals {
        for &b in *l {
            let mut mark = |b: u8| {
                boundary[usize::from(b)] = true;
                if b > 0 {
                    boundary[usize::from(b - 1)] = true;
                }
            };
            mark(b);
            if ascii_case_insensitive {
                mark(b.to_ascii_lowercase());
                mark(b.to_ascii_uppercase());
            }
        }
    }
    let classes = boundary[..255].iter().filter(|&&b| b).count() + 1;
    // The DFA's dead and fail states come on top of the trie's.
    (nodes + 2)
        .saturating_mul(classes.next_power_of_two())
        .saturating_mul(4)
}

/// One of the two automata `aho-corasick` offers for stepping by hand, or
/// the NFA with a front table.
// One per rule set, moved once: the variants' sizes do not matter. An
// explicit tag (rather than a niche in a variant's fields) makes the
// dispatch each feed makes one byte compare.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
#[repr(u8)]
enum Aut {
    Dfa(dfa::DFA),
    Nfa(contiguous::NFA),
    /// The contiguous NFA with DFA rows for the states nearest the start:
    /// see `front`.
    Front(Front),
}

/// The immutable part of the literal matcher, shared by every stream.
#[derive(Debug)]
pub(crate) struct Program {
    aut: Aut,
    /// The rule of each pattern of the automaton, in increasing order.
    rules: Vec<usize>,
    /// The depth of every state but the start state (which has depth 0),
    /// and whether it has children in the trie.
    depth: Depths,
    /// The bytes a literal can start with.
    first: [u64; 4],
    /// The longest literal, in bytes.
    max_len: usize,
    /// The literals' bytes, one after the other, for the checks after a
    /// rejection (see the module docs); `ends[k]` is where pattern `k`'s
    /// end.
    bytes: Vec<u8>,
    ends: Vec<usize>,
    /// The unanchored start state.
    start: aho_corasick::automaton::StateID,
    /// Whether a literal starts with a UTF-8 continuation byte (a regex's
    /// bytes), so a held prefix may start inside a character.
    starts_in_char: bool,
    /// Whether ASCII letters match either case.
    caseless: bool,
    /// Whether the fast paths (skipping idle text with the prefilter) run;
    /// see `Config::fast_paths`.
    fast: bool,
}

impl Program {
    /// Builds the automaton of `literals` (non-empty byte strings), whose
    /// rule indices are `rules`; with `ascii_case_insensitive`, each ASCII
    /// letter matches either case. The automaton is the DFA (one table
    /// lookup per byte) when it takes at most `dfa_limit` bytes, the
    /// contiguous NFA (several times smaller) otherwise, with a front
    /// table of at most `dfa_limit` bytes when a row fits.
    pub(crate) fn new(
        literals: &[&[u8]],
        rules: Vec<usize>,
        ascii_case_insensitive: bool,
        dfa_limit: usize,
        fast: bool,
    ) -> Result<Program, aho_corasick::BuildError> {
        debug_assert_eq!(literals.len(), rules.len());
        debug_assert!(literals.iter().all(|l| !l.is_empty()));
        let nnfa = noncontiguous::NFA::builder()
            .match_kind(MatchKind::LeftmostFirst)
            .ascii_case_insensitive(ascii_case_insensitive)
            .prefilter(true)
            .build(literals)?;
        let mut dfa = None;
        // The estimate spares building a DFA only to find it too big.
        if dfa_table_bytes(literals, ascii_case_insensitive) <= dfa_limit {
            let d = dfa::DFA::builder()
                .start_kind(StartKind::Unanchored)
                .build_from_noncontiguous(&nnfa)?;
            if d.memory_usage() <= dfa_limit {
                dfa = Some(d);
            }
        }
        // The DFA, or else the NFA; the noncontiguous NFA is not needed
        // any more.
        let built = match dfa {
            Some(d) => Ok(d),
            None => Err(contiguous::NFA::builder().build_from_noncontiguous(&nnfa)?),
        };
        drop(nnfa);
        let (aut, depth, start) = match built {
            Ok(d) => {
                let depth = depths(&d, literals);
                let start = d.start();
                (Aut::Dfa(d), Depths::new(depth), start)
            }
            Err(nfa) => {
                let depth = depths(&nfa, literals);
                // The NFA gets a front table in the same size limit, when
                // a row fits in it.
                let entries = depth.iter().map(|(&k, &e)| (k, e));
                match Front::new(nfa, entries, literals, ascii_case_insensitive, dfa_limit) {
                    Ok(front) => {
                        let start = front.start();
                        let depth = Depths::Front(Box::new(Depths::new(depth)));
                        (Aut::Front(front), depth, start)
                    }
                    Err(nfa) => {
                        let start = nfa.start();
                        (Aut::Nfa(nfa), Depths::new(depth), start)
                    }
                }
            }
        };
        let start = start.unwrap_or_default();
        let mut first = [0u64; 4];
        for l in literals {
            let mut set = |b: u8| first[(b >> 6) as usize] |= 1 << (b & 63);
            set(l[0]);
            if ascii_case_insensitive {
                set(l[0].to_ascii_lowercase());
                set(l[0].to_ascii_uppercase());
            }
        }
        let max_len = literals.iter().map(|l| l.len()).max().unwrap_or(0);
        let mut bytes = Vec::with_capacity(literals.iter().map(|l| l.len()).sum());
        let mut ends = Vec::with_capacity(literals.len());
        for l in literals {
            bytes.extend_from_slice(l);
            ends.push(bytes.len());
        }
        Ok(Program {
            aut,
            rules,
            depth,
            first,
            max_len,
            bytes,
            ends,
            start,
            starts_in_char: literals.iter().any(|l| l[0] & 0xC0 == 0x80),
            caseless: ascii_case_insensitive,
            fast,
        })
    }

    /// The bytes of pattern `k`.
    fn literal(&self, k: usize) -> &[u8] {
        let from = if k == 0 { 0 } else { self.ends[k - 1] };
        &self.bytes[from..self.ends[k]]
    }

    /// Compares the patterns `from..to`, in order, with `hay` (the text
    /// from a start on, to the end of the tape; `eof` when the input ends
    /// there): the first that matches there, unless one before it runs
    /// past the end of `hay` while agreeing with it (then more text must
    /// settle that one first).
    fn anchored(&self, hay: &[u8], from: usize, to: usize, eof: bool) -> AtStart {
        let mut died = 0;
        for k in from..to.min(self.ends.len()) {
            let lit = self.literal(k);
            let n = lit.len().min(hay.len());
            let same = if self.caseless {
                lit[..n]
                    .iter()
                    .zip(&hay[..n])
                    .position(|(a, b)| !a.eq_ignore_ascii_case(b))
            } else {
                lit[..n].iter().zip(&hay[..n]).position(|(a, b)| a != b)
            };
            match same {
                None if n == lit.len() => return AtStart::Match(k, n),
                None if !eof => return AtStart::Pending(k),
                None => died = died.max(n),
                Some(j) => died = died.max(j),
            }
        }
        AtStart::None(died)
    }

    /// Searches `hay[from..]` where it is, leftmost-first from the start
    /// state, for a match that `hay` alone decides: `Ok((rule, start,
    /// end))`, the first match in the whole input from `from` on, when
    /// every literal that could start at or before its start fits in
    /// `hay` (a longer literal cut by the end of `hay` could otherwise
    /// start before it, or win at its start). Otherwise `Err(t)`: no match
    /// starts in `hay[from..t]`, where `t` is the first position a literal
    /// cut by the end of `hay` could start at (or `from`).
    pub(crate) fn find_in_place(
        &self,
        hay: &[u8],
        from: usize,
    ) -> Result<(usize, usize, usize), usize> {
        // Every literal starting before `visible` ends within `hay`.
        let visible = (hay.len() + 1).saturating_sub(self.max_len);
        if visible <= from {
            return Err(from);
        }
        let input = aho_corasick::Input::new(hay).span(from..hay.len());
        let found = match &self.aut {
            Aut::Dfa(a) => a.try_find(&input),
            Aut::Nfa(a) => a.try_find(&input),
            Aut::Front(a) => a.nfa().try_find(&input),
        };
        // An unanchored leftmost search of an automaton built with an
        // unanchored start does not fail; stay exact if it ever did, by
        // deciding nothing here.
        let Ok(found) = found else {
            return Err(from);
        };
        match found {
            // Any match starting before it ends within `hay`, where the
            // search saw it; so does every literal starting there.
            Some(m) if m.start() < visible => {
                Ok((self.rules[m.pattern().as_usize()], m.start(), m.end()))
            }
            _ => Err(visible),
        }
    }

    /// Whether ASCII letters match either case.
    #[cfg(test)]
    pub(crate) fn caseless(&self) -> bool {
        self.caseless
    }

    /// Whether a literal starts with a UTF-8 continuation byte.
    #[inline(always)]
    pub(crate) fn starts_in_char(&self) -> bool {
        self.starts_in_char
    }

    /// Whether the fast paths run (see `Config::fast_paths`).
    pub(crate) fn is_fast(&self) -> bool {
        self.fast
    }

    /// The entry of a state in the depth table (0 for a state it does not
    /// hold: the start state, or one no literal reaches).
    #[inline(always)]
    fn entry(&self, sid: aho_corasick::automaton::StateID) -> u32 {
        match &self.depth {
            // The front's own check comes only on the front's path.
            Depths::Front(table) => self.front_entry(table, sid),
            depth => depth.lookup(sid.as_usize()),
        }
    }

    /// `entry` on the front: from the state's row, or from `table` for a
    /// state of the NFA's own.
    fn front_entry(&self, table: &Depths, sid: aho_corasick::automaton::StateID) -> u32 {
        match &self.aut {
            Aut::Front(f) => match f.entry(sid) {
                Ok(e) => e,
                Err(nfa_sid) => table.lookup(nfa_sid as usize),
            },
            _ => table.lookup(sid.as_usize()),
        }
    }

    /// The matcher's state for `sid`, a state `Literals::step_plain`
    /// returned: `None` for the start state. (Stepping unanchored never
    /// enters the anchored start state: the unanchored one is the only
    /// start state it can be in.)
    #[inline(always)]
    pub(crate) fn plain_state(
        &self,
        sid: aho_corasick::automaton::StateID,
    ) -> Option<aho_corasick::automaton::StateID> {
        (sid != self.start).then_some(sid)
    }

    /// Steps `hay` from `sid`, the automaton going on from the start state
    /// after each match: when every match it meets is decided where it
    /// ends (its state a leaf: no longer literal goes on, so the next byte
    /// would kill it), ends at a character boundary of `hay` (with
    /// `whole_chars`; `hay` ends at one) and is of a rule for which `plain`
    /// holds, and there are at most `TOKEN_MATCHES` of them, returns them
    /// (for each, how many bytes of `hay` it ends after, its rule and its
    /// length) and the state at the end of `hay`.
    pub(crate) fn token_matches(
        &self,
        sid: aho_corasick::automaton::StateID,
        hay: &[u8],
        whole_chars: bool,
        plain: impl Fn(usize) -> bool,
    ) -> Option<TokenMatches> {
        match &self.aut {
            Aut::Dfa(a) => self.token_matches_in(a, sid, hay, whole_chars, plain),
            Aut::Nfa(a) => self.token_matches_in(a, sid, hay, whole_chars, plain),
            Aut::Front(a) => self.token_matches_in(a, sid, hay, whole_chars, plain),
        }
    }

    #[inline(always)]
    fn token_matches_in<A: Step>(
        &self,
        aut: &A,
        mut sid: aho_corasick::automaton::StateID,
        hay: &[u8],
        whole_chars: bool,
        plain: impl Fn(usize) -> bool,
    ) -> Option<TokenMatches> {
        let mut found = TokenMatches {
            matches: [(0, 0, 0); TOKEN_MATCHES],
            len: 0,
            sid,
        };
        for (i, &b) in hay.iter().enumerate() {
            sid = aut.next(sid, b);
            if aut.is_special(sid) {
                if aut.is_dead(sid) {
                    return None;
                }
                if aut.is_match(sid) {
                    let pattern = aut.match_pattern(sid, 0);
                    let rule = self.rules[pattern.as_usize()];
                    if !self.is_leaf(sid)
                        || !plain(rule)
                        || found.len == TOKEN_MATCHES
                        || (whole_chars && hay.get(i + 1).is_some_and(|&c| is_continuation(c)))
                    {
                        return None;
                    }
                    found.matches[found.len] = (i + 1, rule, aut.pattern_len(pattern));
                    found.len += 1;
                    sid = self.start;
                }
            }
        }
        found.sid = sid;
        Some(found)
    }

    /// How many bytes before the end of the text stepped the earliest
    /// literal that can still match starts, in `sid` (the depth table
    /// gives the start state 0).
    #[inline(always)]
    pub(crate) fn held_in(&self, sid: aho_corasick::automaton::StateID) -> usize {
        self.depth(sid)
    }

    /// The depth of a state other than the start state.
    #[inline(always)]
    fn depth(&self, sid: aho_corasick::automaton::StateID) -> usize {
        (self.entry(sid) & !HAS_CHILD) as usize
    }

    /// Whether no longer literal goes on from a state, so a match there
    /// is decided whatever follows (the next byte leads to the dead state).
    #[inline(always)]
    fn is_leaf(&self, sid: aho_corasick::automaton::StateID) -> bool {
        self.entry(sid) & HAS_CHILD == 0
    }

    #[inline(always)]
    fn can_begin(&self, b: u8) -> bool {
        self.first[(b >> 6) as usize] & (1 << (b & 63)) != 0
    }

    fn prefilter(&self) -> Option<&Prefilter> {
        match &self.aut {
            Aut::Dfa(a) => a.prefilter(),
            Aut::Nfa(a) => a.prefilter(),
            Aut::Front(a) => a.nfa().prefilter(),
        }
    }

    /// The first position in `hay` from `from` where a literal may start,
    /// or `hay.len()`.
    fn skip_idle(&self, hay: &[u8], from: usize) -> usize {
        let end = hay.len();
        let mut p = from;
        if !self.fast {
            return p;
        }
        if let Some(pre) = self.prefilter() {
            // A literal that starts within the last `tail` bytes may be cut
            // by the end of `hay`, where the prefilter cannot see it; and a
            // candidate it reports proves nothing about the positions before
            // it that such a literal could start at. So it may only skip to
            // where every literal starting before fits in `hay`.
            let tail = self.max_len - 1;
            if p + tail < end {
                let to = match pre.find_in(hay, Span::from(p..end)) {
                    Candidate::None => end - tail,
                    Candidate::Match(m) => m.start().min(end - tail),
                    Candidate::PossibleStartOfMatch(s) => s.min(end - tail),
                };
                p = p.max(to);
            }
        }
        while p < end && !self.can_begin(hay[p]) {
            p += 1;
        }
        p
    }
}

/// The depth of every state a literal's prefix leads to, walking each
/// literal from the start state while the trie has it; and the start
/// state's, 0. (No literal's walk comes back to the start state; its
/// entry lets `held_in` look any state up without a branch.)
fn depths<A: Step>(aut: &A, literals: &[&[u8]]) -> DepthMap {
    let mut map = DepthMap::default();
    let Some(start) = aut.start() else {
        return map;
    };
    map.insert(start.as_u32(), 0);
    for (pid, lit) in literals.iter().enumerate() {
        let mut sid = start;
        for (k, &b) in lit.iter().enumerate() {
            if k > 0 && own_match_before(aut, sid, k, pid) {
                // An earlier literal is a prefix of this one: under
                // leftmost-first this one never matches, and the trie
                // stops here.
                break;
            }
            let parent = sid;
            sid = aut.next(sid, b);
            if aut.is_dead(sid) {
                break;
            }
            if k > 0 {
                if let Some(d) = map.get_mut(&parent.as_u32()) {
                    *d |= HAS_CHILD;
                }
            }
            map.entry(sid.as_u32()).or_insert(k as u32 + 1);
        }
    }
    map.shrink_to_fit();
    map
}

/// Whether state `sid`, at depth `k`, is the end of an earlier literal
/// than `pid` (a match of length `k` in a state of depth `k` is the
/// state's own).
fn own_match_before<A: Step>(
    aut: &A,
    sid: aho_corasick::automaton::StateID,
    k: usize,
    pid: usize,
) -> bool {
    if !aut.is_match(sid) {
        return false;
    }
    (0..aut.match_len(sid)).any(|i| {
        let m = aut.match_pattern(sid, i);
        aut.pattern_len(m) == k && m.as_usize() < pid
    })
}

/// The most matches a token-sized chunk may hold for
/// `Program::token_matches`.
pub(crate) const TOKEN_MATCHES: usize = 4;

/// The matches `Program::token_matches` found in a chunk.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TokenMatches {
    /// For each match, in order: the chunk's bytes up to its end, its rule
    /// and its length.
    pub(crate) matches: [(usize, usize, usize); TOKEN_MATCHES],
    pub(crate) len: usize,
    /// The automaton's state at the end of the chunk.
    pub(crate) sid: aho_corasick::automaton::StateID,
}

/// What `Program::anchored` found.
#[derive(Clone, Copy, Debug)]
enum AtStart {
    /// Pattern `.0` matches, with length `.1`.
    Match(usize, usize),
    /// Pattern `.0` runs past the text and agrees with it so far; the ones
    /// before it do not match.
    Pending(usize),
    /// None matches; the last one died on the byte at this distance from
    /// the start (at the end of the text, at the end of input).
    None(usize),
}

/// A match the automaton recorded and has not decided.
#[derive(Clone, Copy, Debug)]
struct Pending {
    start: usize,
    end: usize,
    /// The pattern index in the automaton.
    pattern: u32,
}

/// The literal matcher's per-stream state. Positions are stream offsets.
///
/// Invariants: `state` is the automaton's state after stepping the bytes
/// from `from` to `pos` (`None` stands for the start state, so a fresh
/// stream needs no automaton call); a pending match ends at or before
/// `pos`; `decided` is set only when the automaton reached the dead state
/// or the input ended, and then the matcher is frozen.
#[derive(Debug, Default)]
pub(crate) struct Literals {
    state: Option<aho_corasick::automaton::StateID>,
    pos: usize,
    pending: Option<Pending>,
    decided: Option<Decided>,
    /// Set under `Matcher::focus`: only a match starting there counts.
    focus: Option<usize>,
    /// Set by `Matcher::exclude` and `Matcher::cap`: a start, the first
    /// pattern not yet known to fail there (the ones before it were
    /// excluded, or compared and did not match), and the end of the
    /// patterns that may still start there (the ones from it on lose to a
    /// match another matcher decided there). Kept once the check decided a
    /// match, so that `focus` on the same start repeats it.
    exclude: Option<(usize, usize, usize)>,
}

impl Literals {
    pub(crate) fn new() -> Literals {
        Literals::default()
    }

    /// The depth of the current state: how many bytes before `pos` the
    /// earliest literal that can still match starts.
    #[inline(always)]
    fn depth(&self, prog: &Program) -> usize {
        match self.state {
            None => 0,
            Some(sid) => prog.depth(sid),
        }
    }

    #[inline(always)]
    fn start_state(prog: &Program) -> aho_corasick::automaton::StateID {
        prog.start
    }

    fn run(&mut self, prog: &Program, tape: &Tape, eof: bool) -> Scan {
        if let Some(d) = &self.decided {
            return Scan::Decided(d.clone());
        }
        if let Some((at, from, to)) = self.exclude {
            match prog.anchored(&tape.bytes()[at - tape.base()..], from, to, eof) {
                AtStart::Match(k, len) => {
                    let d = Decided {
                        rule: k,
                        span: at..at + len,
                    };
                    self.pos = at + len;
                    self.decided = Some(d.clone());
                    return Scan::Decided(d);
                }
                AtStart::Pending(k) => {
                    self.exclude = Some((at, k, to));
                    self.pos = tape.offset();
                    return Scan::Done;
                }
                AtStart::None(died) => {
                    self.exclude = None;
                    if self.focus.is_some() {
                        // The one candidate followed is gone.
                        self.pos = (at + died + 1).min(tape.offset());
                        return Scan::Died(at + died);
                    }
                    // Nothing starts at `at`: the automaton goes on from
                    // the next byte.
                    self.pos = (at + 1).min(tape.offset());
                }
            }
        }
        if let Some(f) = self.focus {
            let died = match &prog.aut {
                Aut::Dfa(a) => self.step_focus(prog, a, tape, f),
                Aut::Nfa(a) => self.step_focus(prog, a, tape, f),
                Aut::Front(a) => self.step_focus(prog, a, tape, f),
            };
            if let Some(p) = died {
                return Scan::Died(p);
            }
        }
        let stop = match &prog.aut {
            Aut::Dfa(a) => self.step(prog, a, tape),
            Aut::Nfa(a) => self.step(prog, a, tape),
            Aut::Front(a) => self.step(prog, a, tape),
        };
        if stop || eof {
            if let Some(m) = self.pending.take() {
                let d = Decided {
                    rule: m.pattern as usize,
                    span: m.start..m.end,
                };
                self.decided = Some(d.clone());
                return Scan::Decided(d);
            }
            if eof {
                self.state = None;
            }
        }
        Scan::Done
    }

    /// Under `Matcher::focus`: steps the tape while nothing else is needed
    /// than following the literals that start at `f`. Returns the byte on
    /// which the last of them died, if none matched; otherwise stops at
    /// the end of the tape or where its match is pending (the general loop
    /// then goes on: after a match, the automaton follows only that
    /// match's node and its extensions).
    fn step_focus<A: Step>(
        &mut self,
        prog: &Program,
        aut: &A,
        tape: &Tape,
        f: usize,
    ) -> Option<usize> {
        let base = tape.base();
        let hay = tape.bytes();
        let mut sid = self.state.unwrap_or_else(|| Self::start_state(prog));
        let mut i = self.pos - base;
        while i < hay.len() && self.pending.is_none() {
            sid = aut.next(sid, hay[i]);
            i += 1;
            let depth = if aut.is_dead(sid) || aut.is_start(sid) {
                0
            } else {
                prog.depth(sid)
            };
            if aut.is_match(sid) {
                let pattern = aut.match_pattern(sid, 0);
                if i - aut.pattern_len(pattern) + base == f {
                    self.pending = Some(Pending {
                        start: f,
                        end: i + base,
                        pattern: pattern.as_u32(),
                    });
                    break;
                }
            }
            if i + base - depth > f {
                self.pos = i + base;
                self.state = None;
                return Some(i - 1 + base);
            }
        }
        self.pos = i + base;
        self.state = (!aut.is_start(sid)).then_some(sid);
        None
    }

    /// Steps the tape from `pos` to its end, or until the dead state (then
    /// returns true, with a match pending).
    #[inline(always)]
    fn step<A: Step>(&mut self, prog: &Program, aut: &A, tape: &Tape) -> bool {
        let base = tape.base();
        let hay = tape.bytes();
        let end = hay.len();
        let mut i = self.pos - base;
        let mut sid = match self.state {
            Some(s) => s,
            None => {
                if self.focus.is_none() {
                    let j = prog.skip_idle(hay, i);
                    if j == end {
                        self.pos = end + base;
                        return false;
                    }
                    i = j;
                }
                Self::start_state(prog)
            }
        };
        let pre = if prog.fast && self.focus.is_none() {
            prog.prefilter()
        } else {
            None
        };
        let mut dead = false;
        while i < end {
            sid = aut.next(sid, hay[i]);
            i += 1;
            if aut.is_special(sid) {
                if aut.is_dead(sid) {
                    dead = true;
                    break;
                }
                if aut.is_match(sid) {
                    let pattern = aut.match_pattern(sid, 0);
                    let start = i - aut.pattern_len(pattern);
                    if self.focus.is_none_or(|f| f == start + base) {
                        self.pending = Some(Pending {
                            start: start + base,
                            end: i + base,
                            pattern: pattern.as_u32(),
                        });
                        if prog.is_leaf(sid) {
                            // Nothing longer can follow: decided now.
                            dead = true;
                            break;
                        }
                    }
                } else if aut.is_start(sid) && pre.is_some() && self.pending.is_none() {
                    let j = prog.skip_idle(hay, i);
                    if j > i {
                        i = j;
                    }
                }
            }
        }
        self.pos = i + base;
        self.state = if dead || aut.is_start(sid) {
            None
        } else {
            Some(sid)
        };
        dead
    }
}

impl Matcher for Literals {
    type Program = Program;

    #[inline(always)]
    fn scan_quick(&mut self, prog: &Program, tape: &Tape) -> bool {
        matches!(self.run(prog, tape, false), Scan::Done)
    }

    fn scan(&mut self, prog: &Program, tape: &Tape, eof: bool) -> Scan {
        self.run(prog, tape, eof)
    }

    #[inline(always)]
    fn scanned(&self) -> usize {
        self.pos
    }

    fn earliest_candidate(&self) -> Option<usize> {
        // A decided or recorded match only: a literal's prefix held by the
        // automaton needs the program's depth table (`earliest_live`).
        match (&self.decided, &self.pending) {
            (Some(d), _) => Some(d.span.start),
            (None, Some(m)) => Some(m.start),
            (None, None) => None,
        }
    }

    #[inline(always)]
    fn earliest_live(&self, prog: &Program) -> usize {
        self.live(prog)
    }

    fn recorded_end(&self) -> Option<usize> {
        self.pending.map(|m| m.end)
    }

    fn is_idle(&self) -> bool {
        self.state.is_none()
            && self.pending.is_none()
            && self.decided.is_none()
            && self.exclude.is_none()
    }

    fn skip_idle(&self, prog: &Program, hay: &[u8], from: usize, _lb: Option<u8>) -> usize {
        prog.skip_idle(hay, from)
    }

    fn skip_to(&mut self, at: usize) {
        debug_assert!(self.is_idle());
        self.pos = at;
    }

    fn restart(&mut self, at: usize) {
        self.state = None;
        self.pending = None;
        self.decided = None;
        self.focus = None;
        self.exclude = None;
        self.pos = at;
    }

    fn exclude(&mut self, at: usize, rule: usize) {
        self.restart(at);
        self.exclude = Some((at, rule + 1, usize::MAX));
    }

    fn cap(&mut self, at: usize, end: usize) {
        // An exclusion at `at` still stands: the patterns it left, below
        // `end`, are compared there.
        let from = match self.exclude {
            Some((a, from, _)) if a == at => from,
            _ => 0,
        };
        self.restart(at);
        self.exclude = Some((at, from, end));
    }

    fn focus(&mut self, start: usize) {
        // A rejection at `start` still stands while its candidate is
        // followed: the check starts over, with the same exclusion.
        let exclude = self.exclude.filter(|e| e.0 == start);
        self.restart(start);
        self.focus = Some(start);
        self.exclude = exclude;
    }

    fn restart_after(&mut self, prog: &Program, at: usize, decided: &mut Option<Decided>) {
        self.keep_after(prog, at);
        if decided.as_ref().is_some_and(|d| d.span.start < at) {
            *decided = None;
        }
    }

    fn discard(&mut self, at: usize) {
        self.restart(at);
    }

    fn reset(&mut self) {
        self.restart(0);
    }

    #[cfg(debug_assertions)]
    fn check_invariants(&self, tape: &Tape) {
        debug_assert!(self.pos <= tape.offset());
        if let Some(m) = self.pending {
            debug_assert!(m.start < m.end && m.end <= self.pos, "{self:?}");
        }
    }
}

impl Literals {
    /// With the matcher idle, steps `hay[from..]` (where `hay[0]` is at
    /// stream offset `base`) in place, without the tape, as long as no
    /// literal matches. If none does, the matcher is left at the end of
    /// `hay` and this returns where the held part starts (the start of
    /// the longest suffix that a literal could still complete), a
    /// character boundary since no literal starts inside one. Otherwise
    /// the matcher is left as it was and this returns `None`: the tape's
    /// path takes the chunk.
    pub(crate) fn run_in_place(
        &mut self,
        prog: &Program,
        hay: &[u8],
        from: usize,
        base: usize,
    ) -> Option<usize> {
        debug_assert!(self.is_idle() && self.focus.is_none());
        if !prog.fast {
            return None;
        }
        let sid = match &prog.aut {
            Aut::Dfa(a) => Self::step_in_place(prog, a, hay, from)?,
            Aut::Nfa(a) => Self::step_in_place(prog, a, hay, from)?,
            Aut::Front(a) => Self::step_in_place(prog, a, hay, from)?,
        };
        let depth = sid.map_or(0, |s| prog.depth(s));
        if depth > IN_PLACE_HELD {
            // The caller feeds the held part in segments: keep it within
            // the first one, so the matcher is never ahead of the tape.
            return None;
        }
        self.pos = base + hay.len();
        self.state = sid;
        Some(hay.len() - depth)
    }

    /// The loop of `run_in_place`: the state at the end of `hay`, or
    /// `None` at the first match.
    #[inline(always)]
    fn step_in_place<A: Step>(
        prog: &Program,
        aut: &A,
        hay: &[u8],
        from: usize,
    ) -> Option<Option<aho_corasick::automaton::StateID>> {
        let pre = prog.prefilter().is_some();
        let mut sid = Self::start_state(prog);
        let mut i = from;
        while i < hay.len() {
            sid = aut.next(sid, hay[i]);
            i += 1;
            if aut.is_special(sid) {
                if aut.is_match(sid) || aut.is_dead(sid) {
                    return None;
                }
                if aut.is_start(sid) && pre {
                    i = prog.skip_idle(hay, i);
                }
            }
        }
        Some((!aut.is_start(sid)).then_some(sid))
    }

    /// Whether the matcher only follows the automaton: nothing recorded,
    /// decided, focused on or excluded, so its state is the automaton's
    /// state and its position.
    #[inline(always)]
    pub(crate) fn is_plain(&self) -> bool {
        self.pending.is_none()
            && self.decided.is_none()
            && self.focus.is_none()
            && self.exclude.is_none()
    }

    /// With the matcher plain (see `is_plain`) and the fast paths on, steps
    /// `hay`, the bytes from its position on, where it is, without moving
    /// the matcher: the state at the end of `hay` when no literal matches
    /// in it, for `go_to`. At the first match, `None`: the tape's path
    /// records and decides it.
    #[inline(always)]
    pub(crate) fn step_plain(
        &self,
        prog: &Program,
        hay: &[u8],
    ) -> Option<aho_corasick::automaton::StateID> {
        debug_assert!(self.is_plain() && prog.fast);
        let sid = self.state.unwrap_or(prog.start);
        match &prog.aut {
            Aut::Dfa(a) => Self::step_from(a, sid, hay),
            Aut::Nfa(a) => Self::step_from(a, sid, hay),
            Aut::Front(a) => Self::step_from(a, sid, hay),
        }
    }

    /// The automaton's state of the plain matcher.
    #[inline(always)]
    pub(crate) fn plain_sid(&self, prog: &Program) -> aho_corasick::automaton::StateID {
        debug_assert!(self.is_plain());
        self.state.unwrap_or(prog.start)
    }

    /// Moves the plain matcher to `pos`, in `state` (from `plain_state`).
    #[inline(always)]
    pub(crate) fn go_to(&mut self, state: Option<aho_corasick::automaton::StateID>, pos: usize) {
        debug_assert!(self.is_plain());
        self.state = state;
        self.pos = pos;
    }

    /// The loop of `step_plain`: the state after `hay` from `sid`, or
    /// `None` at the first match. It does not skip bytes no literal begins
    /// with: on a few bytes that costs more mispredicted branches than the
    /// automaton's steps it saves.
    #[inline(always)]
    fn step_from<A: Step>(
        aut: &A,
        mut sid: aho_corasick::automaton::StateID,
        hay: &[u8],
    ) -> Option<aho_corasick::automaton::StateID> {
        for &b in hay {
            sid = aut.next(sid, b);
            if aut.is_match(sid) || aut.is_dead(sid) {
                return None;
            }
        }
        debug_assert!(aut.is_start(sid) == (sid == aut.start().unwrap()));
        Some(sid)
    }

    /// The earliest position where a literal could still start a match
    /// (`Matcher::earliest_live`): its candidates, an exclusion's position,
    /// and the start of the longest literal prefix the automaton holds.
    #[inline(always)]
    pub(crate) fn live(&self, prog: &Program) -> usize {
        let mut p = self.pos - self.depth(prog);
        if let Some(s) = self.earliest_candidate() {
            p = p.min(s);
        }
        if let Some((at, ..)) = self.exclude {
            p = p.min(at);
        }
        p
    }

    /// Goes on from `at` after a match ending there was decided: keeps the
    /// state when nothing of it starts before `at` (the automaton run from
    /// `at` would be in the same state, with the same match pending), and
    /// starts over from `at` otherwise. This keeps a stream linear when the
    /// other matcher decides many matches behind this one's position.
    fn keep_after(&mut self, prog: &Program, at: usize) {
        if self.pos >= at && self.live(prog) >= at && self.focus.is_none() && self.exclude.is_none()
        {
            return;
        }
        self.restart(at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The DFA a set of literals builds to, as `Program::new` builds it.
    fn built(literals: &[&[u8]], caseless: bool) -> dfa::DFA {
        let nnfa = noncontiguous::NFA::builder()
            .match_kind(MatchKind::LeftmostFirst)
            .ascii_case_insensitive(caseless)
            .prefilter(true)
            .build(literals)
            .unwrap();
        dfa::DFA::builder()
            .start_kind(StartKind::Unanchored)
            .build_from_noncontiguous(&nnfa)
            .unwrap()
    }

    /// The size estimate that decides between the DFA and the NFA is close
    /// to the DFA's real size (within 30%, besides a few KiB of match
    /// lists and prefilter), for ASCII, multibyte and caseless sets, and
    /// sets where one literal is a prefix of another.
    #[test]
    fn dfa_size_estimate_is_close() {
        let words: Vec<String> = (0..500u32)
            .map(|i| format!("w{}x{}", i * 7919 % 1000, i % 13))
            .collect();
        let sets: Vec<(Vec<&[u8]>, bool)> = vec![
            (vec![b"password", b"pass", b"token"], false),
            (vec![b"password", b"pass", b"token"], true),
            (
                vec!["敏感词".as_bytes(), "😀x".as_bytes(), b"abc", b"ab"],
                false,
            ),
            (words.iter().map(|w| w.as_bytes()).collect(), false),
            (words.iter().map(|w| w.as_bytes()).collect(), true),
        ];
        for (set, caseless) in sets {
            let estimate = dfa_table_bytes(&set, caseless);
            let real = built(&set, caseless).memory_usage();
            let slack = 16 << 10;
            assert!(
                estimate * 10 <= real * 13 + slack && real * 7 <= estimate * 10 + slack,
                "{set:?} (caseless {caseless}): estimate {estimate}, real {real}"
            );
        }
    }

    /// A limit of 0 gives the NFA, a large one the DFA, one in between
    /// (the DFA takes 256 bytes, a row of the front 24) the NFA with a
    /// front.
    #[test]
    fn dfa_limit_picks_the_automaton() {
        let set: [&[u8]; 2] = [b"abc", b"bcd"];
        let nfa = Program::new(&set, vec![0, 1], false, 0, true).unwrap();
        assert!(matches!(nfa.aut, Aut::Nfa(_)));
        let front = Program::new(&set, vec![0, 1], false, 100, true).unwrap();
        assert!(matches!(front.aut, Aut::Front(_)));
        let dfa = Program::new(&set, vec![0, 1], false, 1 << 20, true).unwrap();
        assert!(matches!(dfa.aut, Aut::Dfa(_)));
    }

    /// The longest suffix of `text` that is a proper prefix of a literal.
    fn naive_held(literals: &[&[u8]], text: &[u8]) -> usize {
        (1..=text.len())
            .rev()
            .find(|&d| {
                let suffix = &text[text.len() - d..];
                literals
                    .iter()
                    .any(|l| l.len() > d && l.starts_with(suffix))
            })
            .unwrap_or(0)
    }

    /// The depth table gives the held prefix of every state, in its byte
    /// form (depths below 128) and its word form (a longer literal), on
    /// the three automata (the front with a few rows, so that both its
    /// rows and the NFA's table give depths).
    #[test]
    fn depth_tables_give_the_held_prefix() {
        let long = [b"c".repeat(200), b"d".to_vec()].concat();
        let short: Vec<&[u8]> = vec![b"abcab", b"bcx", b"cca"];
        let with_long: Vec<&[u8]> = vec![b"abcab", b"bcx", &long];
        let mut rng = 0x9E37_79B9_7F4A_7C15u64;
        for (set, narrow) in [(&short, true), (&with_long, false)] {
            for limit in [0, 100, 1 << 20] {
                let rules = (0..set.len()).collect();
                let prog = Program::new(set, rules, false, limit, true).unwrap();
                assert_eq!(matches!(prog.aut, Aut::Front(_)), limit == 100);
                let table = match &prog.depth {
                    Depths::Front(t) => t,
                    t => t,
                };
                assert_eq!(matches!(table, Depths::Narrow { .. }), narrow);
                for _ in 0..200 {
                    let mut text = Vec::new();
                    let runs = if narrow { 1 } else { 150 };
                    for _ in 0..12 {
                        rng ^= rng << 13;
                        rng ^= rng >> 7;
                        rng ^= rng << 17;
                        let b = b"abcx"[(rng % 4) as usize];
                        let n = if b == b'c' {
                            1 + (rng >> 8) as usize % runs
                        } else {
                            1
                        };
                        text.extend(std::iter::repeat_n(b, n));
                    }
                    for end in 1..=text.len() {
                        let hay = &text[..end];
                        let state = match &prog.aut {
                            Aut::Dfa(a) => Literals::step_from(a, prog.start, hay),
                            Aut::Nfa(a) => Literals::step_from(a, prog.start, hay),
                            Aut::Front(a) => Literals::step_from(a, prog.start, hay),
                        };
                        // A literal matched: the general path decides it.
                        let Some(state) = state else { break };
                        assert_eq!(
                            prog.held_in(state),
                            naive_held(set, hay),
                            "limit {limit}, text {:?}",
                            String::from_utf8_lossy(hay)
                        );
                    }
                }
            }
        }
    }
}
