//! Fast path: the forward skip. Finds, at DFA speed, where stepping
//! threads must begin: the earliest start of a candidate that is still
//! alive where the first match ends (or at the end of the text).
//!
//! Entered from the idle scan (`Prog::skip_idle_seen`) while nothing is
//! alive, with `Prog::fast` set, when the program has no prefilter and no
//! gate (each of those skips by itself), no rule can match the empty
//! string, and at least `FORWARD_MIN` bytes are left; and, in the threads'
//! own idle scans, only at or past the end of their previous forward
//! search (`Core::forward`), so that the threads do not search again what
//! they are stepping.
//!
//! Two lazy DFAs over the rules with every look-around assertion removed,
//! counted repetitions unbounded and classes of non-ASCII characters
//! widened to bytes (`widen`), which can only add matches:
//!
//! - `fwd`, unanchored, finds the end `m` of the earliest-ending match
//!   starting at `from` or later (`Input::earliest`), or none before the
//!   end of the text (then `m` is the end);
//! - `rev`, built from the rules' prefix languages (`prefix`: every
//!   string a match can begin with, down to a character cut by the end of
//!   a byte feed), reversed and anchored at `m`, finds the least `s >= from`
//!   such that `hay[s..m]` is such a prefix (the empty one always is, so
//!   `s <= m`).
//!
//! Exact: take a match of the rules as written starting at `x` with
//! `from <= x < s`, ending at `e`. It is a match of the widened rules, so
//! `e >= m` (no match ends before `m`), and `hay[x..m]` begins a match:
//! it is in the prefix language, so the reverse search would have found
//! `s <= x`. So no match starts before `s`, and the threads go on from
//! `s` as over released text, the way the idle scan moves them. The
//! threads then step `s..` as always, so what they hold at the end of the
//! feed (its minimal hold-back) is what they would hold without the skip.
//!
//! Cost: the forward search reads `from..m` once; the reverse one reads at
//! most `s..m`, which the threads then step anyway. A thread that dies
//! before `m` leaves the stream idle before `m` again: it takes the other
//! idle scans there, not this one (`Core::forward`). The stream's in-place
//! scan of a new chunk (`Prog::skip_idle`) does not record its `m` in the
//! threads, so the threads may search the stretch after `s` once more:
//! each byte is searched forward at most twice per feed, and the total
//! stays linear.

use aho_corasick::{AhoCorasick, MatchKind as AcKind};
use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::nfa::thompson::{self, WhichCaptures};
use regex_automata::util::pool::Pool;
use regex_automata::{Anchored, Input, MatchKind};
use regex_syntax::hir::literal::{ExtractKind, Extractor};
use regex_syntax::hir::{Class, ClassBytes, ClassBytesRange, Hir, HirKind, Repetition};

/// Fewer bytes than this left after the idle scan: the two searches cost
/// more than stepping them.
pub(super) const FORWARD_MIN: usize = 32;

/// The two DFAs and the caches their searches borrow.
#[derive(Debug)]
pub(crate) struct Forward {
    fwd: DFA,
    rev: DFA,
    /// The literals that begin every match of the spanning rules (see
    /// `spans`), found in place of their prefixes.
    heads: Option<AhoCorasick>,
    caches: CachePool,
}

/// A forward and a reverse cache, made on first use by the caller, which
/// has the DFAs at hand.
#[derive(Debug)]
struct Caches {
    fwd: Cache,
    rev: Cache,
}

type CachePool = Pool<Option<Box<Caches>>, fn() -> Option<Box<Caches>>>;

fn no_caches() -> Option<Box<Caches>> {
    None
}

impl Forward {
    /// Whether the skip can help rules `hirs`: not where a rule matches
    /// the empty string (then a match ends at every position).
    pub(super) fn eligible(hirs: &[Hir]) -> bool {
        !hirs.is_empty() && hirs.iter().all(|h| h.properties().minimum_len() != Some(0))
    }

    /// The skip for rules `hirs`, or `None` where it cannot help (see
    /// `eligible`) or does not build within `size_limit`.
    pub(super) fn new(hirs: &[Hir], size_limit: usize) -> Option<Forward> {
        if !Forward::eligible(hirs) {
            return None;
        }
        let widened: Vec<Hir> = hirs.iter().map(widen).collect();
        // A spanning rule's prefixes run over any text (`<think>[\s\S]*?`):
        // reversed, they would read back to `from` every time. Where every
        // match of one begins with one of a few literals, those literals
        // are searched for instead, and only their own prefixes (cut by
        // `m`) are left to the reverse DFA.
        let mut heads: Vec<Vec<u8>> = Vec::new();
        let mut prefixes = Vec::new();
        for (hir, wide) in hirs.iter().zip(&widened) {
            match spans(hir).then(|| head_literals(hir)).flatten() {
                Some(lits) => {
                    for lit in lits {
                        prefixes.push(prefix(&Hir::literal(lit.clone())));
                        heads.push(lit);
                    }
                }
                None => prefixes.push(prefix(wide)),
            }
        }
        let heads = match heads.is_empty() {
            true => None,
            false => Some(
                AhoCorasick::builder()
                    .match_kind(AcKind::LeftmostFirst)
                    .build(&heads)
                    .ok()?,
            ),
        };
        let prefixes = Hir::alternation(prefixes);
        let nfa = |reverse: bool| {
            thompson::Config::new()
                .nfa_size_limit(Some(size_limit))
                .which_captures(WhichCaptures::None)
                .utf8(false)
                .reverse(reverse)
        };
        let dfa = |kind: MatchKind| {
            DFA::config()
                .match_kind(kind)
                .skip_cache_capacity_check(true)
                // Give up (and skip nothing) where the cache thrashes, as
                // `meta` does, rather than step slower than the threads.
                .minimum_cache_clear_count(Some(8))
                .minimum_bytes_per_state(Some(10))
        };
        let fwd_nfa = thompson::Compiler::new()
            .configure(nfa(false))
            .build_many_from_hir(&widened)
            .ok()?;
        let rev_nfa = thompson::Compiler::new()
            .configure(nfa(true))
            .build_from_hir(&prefixes)
            .ok()?;
        let fwd = DFA::builder()
            .configure(dfa(MatchKind::LeftmostFirst))
            .build_from_nfa(fwd_nfa)
            .ok()?;
        let rev = DFA::builder()
            .configure(dfa(MatchKind::All))
            .build_from_nfa(rev_nfa)
            .ok()?;
        Some(Forward {
            fwd,
            rev,
            heads,
            caches: Pool::new(no_caches as fn() -> Option<Box<Caches>>),
        })
    }

    /// The least position `s` in `from..=hay.len()` before which no match
    /// of the rules starts (given that none is alive at `from`), and the
    /// end `m >= s` of the forward search: no match starting at `from` or
    /// later ends before `m`. On a search error (a thrashing cache),
    /// nothing is skipped.
    pub(super) fn skip(&self, hay: &[u8], from: usize) -> (usize, usize) {
        let mut guard = self.caches.get();
        let caches = guard.get_or_insert_with(|| {
            Box::new(Caches {
                fwd: self.fwd.create_cache(),
                rev: self.rev.create_cache(),
            })
        });
        let input = Input::new(hay).range(from..).earliest(true);
        let m = match self.fwd.try_search_fwd(&mut caches.fwd, &input) {
            Ok(Some(hm)) => hm.offset(),
            Ok(None) => hay.len(),
            // Not searched again before the end (see `Core::forward`).
            Err(_) => return (from, hay.len()),
        };
        let input = Input::new(hay).range(from..m).anchored(Anchored::Yes);
        let s = match self.rev.try_search_rev(&mut caches.rev, &input) {
            Ok(Some(hm)) => hm.offset(),
            // The empty prefix matches at `m`: not reached.
            Ok(None) | Err(_) => return (from, m),
        };
        // A spanning rule's head found whole before `m`.
        let head = self.heads.as_ref().and_then(|ac| {
            ac.find(aho_corasick::Input::new(&hay[..m]).span(from..m))
                .map(|h| h.start())
        });
        (head.map_or(s, |h| h.min(s)), m)
    }
}

/// `hir` with every look-around assertion removed, every counted
/// repetition unbounded, and each class of non-ASCII characters widened
/// to its ASCII part or one to four non-ASCII bytes, as bytes: it matches
/// everything `hir` matches, and more. The widened classes keep both DFAs small (a reversed Unicode
/// `\w` alone is thousands of states), and every prefix of a non-ASCII
/// character, cut by the end of a byte feed, is a prefix of the widened
/// class.
pub(super) fn widen(hir: &Hir) -> Hir {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => Hir::empty(),
        HirKind::Literal(_) => hir.clone(),
        HirKind::Class(Class::Bytes(_)) => hir.clone(),
        HirKind::Class(Class::Unicode(c)) => {
            let ascii = c
                .ranges()
                .iter()
                .filter(|r| r.start() <= '\x7F')
                .map(|r| ClassBytesRange::new(r.start() as u8, r.end().min('\x7F') as u8));
            let ascii = Hir::class(Class::Bytes(ClassBytes::new(ascii)));
            if c.ranges().last().is_some_and(|r| r.end() > '\x7F') {
                let wide = Hir::class(Class::Bytes(ClassBytes::new([ClassBytesRange::new(
                    0x80, 0xFF,
                )])));
                Hir::alternation(vec![
                    ascii,
                    Hir::repetition(Repetition {
                        min: 1,
                        max: Some(4),
                        greedy: true,
                        sub: Box::new(wide),
                    }),
                ])
            } else {
                ascii
            }
        }
        // A counted repetition, unbounded: `\d{3}-\d{4}` as `\d+-\d+`. An
        // unanchored DFA would otherwise count for every overlapping start
        // (an IP address's octets, a card's groups: thousands of states to
        // build before it runs at speed).
        HirKind::Repetition(r) => Hir::repetition(Repetition {
            min: r.min.min(1),
            max: r.max.filter(|&n| n <= 1),
            greedy: true,
            sub: Box::new(widen(&r.sub)),
        }),
        HirKind::Capture(c) => widen(&c.sub),
        HirKind::Concat(parts) => Hir::concat(parts.iter().map(widen).collect()),
        HirKind::Alternation(alts) => Hir::alternation(alts.iter().map(widen).collect()),
    }
}

/// Whether some match of a rule can run over ordinary text of any
/// length: a repetition without bound over a class with a space, a letter,
/// a digit and a period.
fn spans(hir: &Hir) -> bool {
    match hir.kind() {
        HirKind::Repetition(r) => {
            let has = |b: u8| match r.sub.kind() {
                HirKind::Class(Class::Bytes(c)) => {
                    c.ranges().iter().any(|r| r.start() <= b && b <= r.end())
                }
                HirKind::Class(Class::Unicode(c)) => c
                    .ranges()
                    .iter()
                    .any(|r| r.start() <= b as char && b as char <= r.end()),
                _ => false,
            };
            let wide = r.max.is_none() && b" a0.".iter().all(|&b| has(b));
            wide || spans(&r.sub)
        }
        HirKind::Capture(c) => spans(&c.sub),
        HirKind::Concat(parts) | HirKind::Alternation(parts) => parts.iter().any(spans),
        _ => false,
    }
}

/// The literals that begin every match of `hir` (at most 16, none empty),
/// or `None`.
fn head_literals(hir: &Hir) -> Option<Vec<Vec<u8>>> {
    let seq = Extractor::new().kind(ExtractKind::Prefix).extract(hir);
    let lits = seq.literals()?;
    if lits.is_empty() || lits.len() > 16 || lits.iter().any(|l| l.as_bytes().is_empty()) {
        return None;
    }
    Some(lits.iter().map(|l| l.as_bytes().to_vec()).collect())
}

/// `hir`, or nothing.
fn optional(hir: Hir) -> Hir {
    Hir::repetition(Repetition {
        min: 0,
        max: Some(1),
        greedy: true,
        sub: Box::new(hir),
    })
}

/// The prefix language of a widened `hir` (see `widen`: no assertions,
/// byte classes): every string that some match of it begins with.
pub(super) fn prefix(hir: &Hir) -> Hir {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => Hir::empty(),
        HirKind::Literal(lit) => {
            // ε | b0 (ε | b1 (ε | …)): each byte once.
            let mut acc = Hir::empty();
            for &b in lit.0.iter().rev() {
                acc = optional(Hir::concat(vec![Hir::literal([b]), acc]));
            }
            acc
        }
        HirKind::Class(_) => optional(hir.clone()),
        HirKind::Repetition(r) => match r.max {
            Some(0) => Hir::empty(),
            max => Hir::concat(vec![
                // Whole copies, then the beginning of one more.
                Hir::repetition(Repetition {
                    min: 0,
                    max: max.map(|n| n - 1),
                    greedy: true,
                    sub: r.sub.clone(),
                }),
                prefix(&r.sub),
            ]),
        },
        HirKind::Capture(c) => prefix(&c.sub),
        HirKind::Concat(parts) => {
            // P(a1 … an) = P(a1) | a1 P(a2 … an), from the end.
            let Some((last, init)) = parts.split_last() else {
                return Hir::empty();
            };
            let mut acc = prefix(last);
            for part in init.iter().rev() {
                acc = Hir::alternation(vec![prefix(part), Hir::concat(vec![part.clone(), acc])]);
            }
            acc
        }
        HirKind::Alternation(alts) => Hir::alternation(alts.iter().map(prefix).collect()),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use regex_automata::{Anchored, Input, meta};

    use super::super::state::path;
    use super::super::tests::{CASES, same_as_general, took};
    use regex_syntax::hir::{Hir, Look};

    use super::{Forward, prefix, widen};

    fn forward(rules: &[&str]) -> Forward {
        let hirs = regex_automata::util::syntax::parse_many(rules).unwrap();
        Forward::new(&hirs, 10 << 20).expect("the skip builds")
    }

    /// The naive oracle of the skip: no match of the rules as written (an
    /// anchored search with the text before as look-behind) starts before
    /// the position it returns.
    fn check_skip(rules: &[&str], hay: &[u8], from: usize) -> usize {
        let re = meta::Regex::new_many(rules).unwrap();
        let (s, m) = forward(rules).skip(hay, from);
        assert!(from <= s && s <= m && m <= hay.len(), "{s} {m}");
        for q in from..s {
            // Every match starting at q: an anchored search with each end.
            for end in q..=hay.len() {
                let input = Input::new(&hay[..end]).range(q..).anchored(Anchored::Yes);
                assert!(
                    re.search(&input).is_none(),
                    "{rules:?} on {:?}: a match at {q} (skipped to {s})",
                    String::from_utf8_lossy(hay)
                );
            }
        }
        // Nor does a candidate alive at the end start there: text that
        // may follow cannot make a match start before `s`.
        for more in CONTINUATIONS {
            let mut longer = hay.to_vec();
            longer.extend_from_slice(more.as_bytes());
            for q in from..s {
                let input = Input::new(&longer).range(q..).anchored(Anchored::Yes);
                assert!(
                    re.search(&input).is_none(),
                    "{rules:?} on {:?} then {more:?}: a match at {q} (skipped to {s})",
                    String::from_utf8_lossy(hay)
                );
            }
        }
        s - from
    }

    /// Text that completes a candidate of the test rules.
    const CONTINUATIONS: &[&str] = &["</a>", "/", "@x", "@a.cc", ".", ">", "1-", "-1", "c", "é"];

    /// Every beginning of every match is in the prefix language.
    fn check_prefix(rule: &str, hay: &[u8]) {
        let hir = regex_automata::util::syntax::parse(rule).unwrap();
        // The whole text must be a prefix: `^(?:P)$`.
        let whole = Hir::concat(vec![
            Hir::look(Look::Start),
            prefix(&widen(&hir)),
            Hir::look(Look::End),
        ]);
        let p = meta::Regex::builder()
            .syntax(regex_automata::util::syntax::Config::new().utf8(false))
            .configure(meta::Regex::config().utf8_empty(false))
            .build_from_hir(&whole)
            .unwrap();
        let re = meta::Regex::new(rule).unwrap();
        for m in re.find_iter(hay) {
            for k in m.start()..=m.end() {
                let begun = &hay[m.start()..k];
                assert!(
                    p.is_match(begun),
                    "{rule}: {:?} begins a match but is not a prefix",
                    String::from_utf8_lossy(begun)
                );
            }
        }
    }

    /// A `<think>` block's rule is found by its head; an email's is not
    /// spanning.
    #[test]
    fn spanning_rules_are_found_by_their_heads() {
        let parse = |r| regex_automata::util::syntax::parse(r).unwrap();
        assert!(super::spans(&parse(r"<think>[\s\S]*?</think>")));
        assert!(super::spans(&parse(r"(?:<a>|<b>).*end")));
        assert!(!super::spans(&parse(r"[\w.+-]+@\w+")));
        assert!(!super::spans(&parse(r"x[a-z ]{0,40}y")));
        assert_eq!(
            super::head_literals(&parse(r"<think>[\s\S]*?</think>")),
            Some(vec![b"<think>".to_vec()])
        );
        let f = forward(&[r"<think>[\s\S]*?</think>", r"\d+"]);
        assert!(f.heads.is_some());
        let hay = b"some text <think> and a long thought, with no end yet";
        assert_eq!(f.skip(hay, 0).0, 10);
        assert_eq!(
            check_skip(&[r"<think>[\s\S]*?</think>", r"\d+"], hay, 0),
            10
        );
    }

    /// A head that begins before the reverse search's start and ends
    /// after it (another rule's prefix covers `think> …`) is still found:
    /// the heads are searched up to `m`, not up to `s`.
    #[test]
    fn a_head_cut_by_another_rules_prefix_is_found() {
        let rules = [r"[\w> ]+@x", r"<think>[\s\S]*?</think>"];
        let text = b"zz zz zz zz zz zz zz zz zz zz zz <think> more text";
        let at = text.len() - b"<think> more text".len();
        assert_eq!(forward(&rules).skip(text, 0).0, at);
        let mut input = text.to_vec();
        input.extend_from_slice(b" and more</think> after");
        same_as_general(&rules, &input, &[text.len()]);
    }

    #[test]
    fn prose_before_an_email_is_skipped() {
        let rules = [
            r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}",
            r"\b\d{3}-\d{2}-\d{4}\b",
        ];
        let mut hay = b"some words and more words, ".repeat(4);
        let at = hay.len();
        hay.extend_from_slice(b"bob@example.com then more");
        // Skips to the start of the email's local part.
        assert_eq!(check_skip(&rules, &hay, 0), at);
        // At the end, the last word may still begin an email.
        let tail = b"no match here at all, only a last word";
        let skipped = check_skip(&rules, tail, 0);
        assert_eq!(skipped, tail.len() - "word".len());
        // A character cut by the end: the word before it is kept.
        let cut = "plain text, then caf\u{e9}".as_bytes();
        let cut = &cut[..cut.len() - 1];
        let rules = [r"\w+@\w+\.com"];
        assert_eq!(check_skip(&rules, cut, 0), cut.len() - 4);
        let runs = same_as_general(&[r"[a-z]+@[a-z]+\.com"], &hay, &[3, 70]);
        assert!(took(&runs, path::FORWARD));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(CASES * 8))]
        #[test]
        fn skipped_text_holds_no_match_start(
            hay in "[a-c @.0-9é<>/-]{0,40}(<a>[a-c> ]{0,8})?",
            from in 0usize..60,
            set in 0usize..7,
        ) {
            let rules: &[&[&str]] = &[
                &[r"[a-c]+@[a-c]+\.[a-c]{2,}"],
                &[r"\b\d{2}-\d\b", r"c\w{1,4}\b"],
                &[r"(?:a|ab){1,3}c", r"\bé+"],
                &[r"b[a-c]*?\.", r"\d+-"],
                // Spanning rules: their heads are searched for.
                &[r"<a>[\s\S]*?</a>", r"\d+-", r"(?:<b>|c<)[^/]*/"],
                &[r"a@[\s\S]*?\.|b\.[\s\S]+>", r"[a-c]+@[a-c]+"],
                // A class that covers the end of a head.
                &[r"[a-c> ]+@x", r"<a>[\s\S]*?</a>"],
            ];
            let from = from % (hay.len() + 1);
            check_skip(rules[set], hay.as_bytes(), from);
        }

        #[test]
        fn every_beginning_of_a_match_is_a_prefix(
            hay in "[a-c @.0-9é-]{0,40}",
            set in 0usize..5,
        ) {
            let rules = [
                r"[a-c]+@[a-c]+\.[a-c]{2,}",
                r"\b\d{2}-\d\b",
                r"(?:a|ab){1,3}c",
                r"é+[a-c]?\d{0,2}",
                r"(a|b.)*c",
            ];
            check_prefix(rules[set], hay.as_bytes());
        }

        #[test]
        fn fast_paths_with_the_skip_decide_as_the_general_loop(
            words in prop::collection::vec("[a-c ]{1,12}|[a-c]{1,4}@[a-c]{1,3}\\.com|\\d{2}-\\d|<a>|</a>", 1..12),
            cuts in prop::collection::vec(0usize..200, 0..6),
            set in 0usize..4,
        ) {
            let rules: &[&[&str]] = &[
                &[r"[a-c]+@[a-c]+\.com"],
                &[r"\b\d{2}-\d\b", r"[a-c]+@[a-c]+\.com"],
                &[r"[a-c]{1,3}@[a-c]+\.com\b", r"c\w+?-"],
                &[r"<a>[\s\S]*?</a>", r"[a-c]+@[a-c]+\.com", r"\d{2}-"],
            ];
            let input = words.join(" ");
            same_as_general(rules[set], input.as_bytes(), &cuts);
        }
    }
}
