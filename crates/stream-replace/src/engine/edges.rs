//! Unicode word boundaries next to word characters, for the DFA.
//!
//! Neither DFA can see a Unicode `\b` next to a non-ASCII byte (it quits
//! there: a non-ASCII character could be a word character or not), so with
//! such a rule every stretch of non-ASCII text went to the NFA. Yet the
//! usual `\b` sits next to something that always matches a word character:
//! `\b\d{3}`, `sk-…\b`. Before a word character, `\b` only asks whether the
//! character before it is not a word character (`\b{start-half}`); after
//! one, whether the character after it is not (`\b{end-half}`). The DFA
//! gets the rule with those written as their ASCII forms, which look at one
//! byte and never quit. They decide as the Unicode forms wherever the byte
//! they look at is ASCII, so a `\b` is rewritten only where that byte is:
//!
//! - inside the match, the characters the rule can have on that side are
//!   all ASCII;
//! - before the match, the engine gives the DFA's start state the look-behind
//!   `a` when the character before is a non-ASCII word character (see
//!   `Prog::start_lb`; no rule may then use an ASCII word assertion, which
//!   that would fool);
//! - after the match, the engine checks each match the DFA decides of such
//!   a rule (`Rewritten::check_after`, `Prog::unsure`): when the byte
//!   after it is non-ASCII (or not there yet), the match is worked out
//!   again by the NFA of the rules as written, from its start. There, the DFA accepts a superset of the
//!   rule's matches, and the leftmost-first match of a superset, when it is
//!   a match of the rule, is the rule's leftmost-first match; none of the
//!   rules starts earlier.

use regex_syntax::hir::{self, Class, Hir, HirKind, Look};

/// The rules the DFA steps, with their `\b` rewritten, and for each rule
/// whether a match it decides must be checked (a `\b{end-half}` may have
/// looked at the byte after it).
pub(super) struct Rewritten {
    pub(super) hirs: Vec<Hir>,
    pub(super) check_after: Vec<bool>,
}

/// Rewrites the rules' Unicode `\b` next to a word character, where that
/// is exact (see the module docs). Returns `None` when no rule changes,
/// when some Unicode word assertion would be left (the DFA would quit on
/// non-ASCII bytes anyway), or when a rule uses an ASCII word assertion.
pub(super) fn rewrite(hirs: &[Hir]) -> Option<Rewritten> {
    let looks = |h: &Hir| h.properties().look_set();
    if !hirs.iter().any(|h| looks(h).contains_word_unicode())
        || hirs.iter().any(|h| looks(h).contains_word_ascii())
    {
        return None;
    }
    let word = word_class()?;
    let mut out = Rewritten {
        hirs: Vec::with_capacity(hirs.len()),
        check_after: Vec::with_capacity(hirs.len()),
    };
    for h in hirs {
        let mut after = false;
        let r = walk(h, &word, true, true, &mut after);
        if looks(&r).contains_word_unicode() {
            return None;
        }
        out.hirs.push(r);
        out.check_after.push(after);
    }
    Some(out)
}

/// The Unicode `\w` class, or `None` when it is not available.
fn word_class() -> Option<hir::ClassUnicode> {
    let h = regex_syntax::parse(r"\w").ok()?;
    match h.into_kind() {
        HirKind::Class(Class::Unicode(c)) => Some(c),
        _ => None,
    }
}

/// Rewrites `h`. `before`: every character the match can have just before
/// `h` is ASCII (or there is none: the match starts there); `after` the
/// same after it. Sets `check` when a `\b{end-half}` may end the match.
fn walk(h: &Hir, word: &hir::ClassUnicode, before: bool, after: bool, check: &mut bool) -> Hir {
    if !h.properties().look_set().contains_word_unicode() {
        return h.clone();
    }
    match h.kind() {
        HirKind::Concat(xs) => {
            let mut out = Vec::with_capacity(xs.len());
            for (i, x) in xs.iter().enumerate() {
                let (head, tail) = (&xs[..i], &xs[i + 1..]);
                let before = ascii(head, End::Last).is_ok_with(before);
                let after = ascii(tail, End::First).is_ok_with(after);
                if let HirKind::Look(Look::WordUnicode) = x.kind() {
                    if before && edge(tail, word, End::First) == Edge::Word {
                        out.push(Hir::look(Look::WordStartHalfAscii));
                        continue;
                    }
                    if after && edge(head, word, End::Last) == Edge::Word {
                        out.push(Hir::look(Look::WordEndHalfAscii));
                        // Whether it can end the match: only then it looks
                        // past it.
                        if ascii(tail, End::First) != Ascii::Yes {
                            *check = true;
                        }
                        continue;
                    }
                }
                out.push(walk(x, word, before, after, check));
            }
            Hir::concat(out)
        }
        HirKind::Alternation(xs) => Hir::alternation(
            xs.iter()
                .map(|x| walk(x, word, before, after, check))
                .collect(),
        ),
        HirKind::Repetition(r) => {
            // A body repeated follows itself.
            let again = r.max.is_none_or(|m| m > 1);
            let sub = std::slice::from_ref(&*r.sub);
            let before = before && (!again || ascii(sub, End::Last) != Ascii::No);
            let after = after && (!again || ascii(sub, End::First) != Ascii::No);
            Hir::repetition(hir::Repetition {
                min: r.min,
                max: r.max,
                greedy: r.greedy,
                sub: Box::new(walk(&r.sub, word, before, after, check)),
            })
        }
        HirKind::Capture(c) => Hir::capture(hir::Capture {
            index: c.index,
            name: c.name.clone(),
            sub: Box::new(walk(&c.sub, word, before, after, check)),
        }),
        _ => h.clone(),
    }
}

/// Whether every character a sequence can have at one end is ASCII.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ascii {
    /// At least one character, and the one at that end is always ASCII.
    Yes,
    /// Possibly nothing; any character at that end is ASCII.
    MaybeEmpty,
    /// Anything else.
    No,
}

impl Ascii {
    /// Whether the neighbour on this side is ASCII or beyond the sequence,
    /// where `outer` says whether that one is.
    fn is_ok_with(self, outer: bool) -> bool {
        match self {
            Ascii::Yes => true,
            Ascii::MaybeEmpty => outer,
            Ascii::No => false,
        }
    }
}

/// [`Ascii`] of the concatenation of `xs`.
fn ascii(xs: &[Hir], end: End) -> Ascii {
    let mut seq: Box<dyn Iterator<Item = &Hir>> = match end {
        End::First => Box::new(xs.iter()),
        End::Last => Box::new(xs.iter().rev()),
    };
    seq.try_fold(Ascii::MaybeEmpty, |_, x| match ascii_of(x, end) {
        Ascii::MaybeEmpty => Ok(Ascii::MaybeEmpty),
        a => Err(a),
    })
    .unwrap_or_else(|a| a)
}

fn ascii_of(h: &Hir, end: End) -> Ascii {
    let is = |a: bool| if a { Ascii::Yes } else { Ascii::No };
    match h.kind() {
        HirKind::Empty | HirKind::Look(_) => Ascii::MaybeEmpty,
        HirKind::Literal(hir::Literal(bytes)) => is(match end {
            End::First => bytes.first(),
            End::Last => bytes.last(),
        }
        .is_some_and(u8::is_ascii)),
        HirKind::Class(Class::Unicode(c)) => is(c.ranges().iter().all(|r| r.end().is_ascii())),
        HirKind::Class(Class::Bytes(c)) => is(c.ranges().iter().all(|r| r.end().is_ascii())),
        HirKind::Repetition(r) => match ascii_of(&r.sub, end) {
            Ascii::Yes if r.min == 0 => Ascii::MaybeEmpty,
            a => a,
        },
        HirKind::Capture(c) => ascii_of(&c.sub, end),
        HirKind::Concat(xs) => ascii(xs, end),
        HirKind::Alternation(xs) => {
            let mut all = Ascii::Yes;
            for x in xs {
                match ascii_of(x, end) {
                    Ascii::No => return Ascii::No,
                    Ascii::MaybeEmpty => all = Ascii::MaybeEmpty,
                    Ascii::Yes => {}
                }
            }
            all
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum End {
    First,
    Last,
}

/// What a sequence of items matches at one end.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Edge {
    /// At least one character, and the one at that end is always a word
    /// character.
    Word,
    /// Possibly nothing, but every character it may have at that end is a
    /// word character.
    MaybeEmpty,
    /// Anything else.
    Other,
}

/// [`Edge`] of the concatenation of `xs`.
fn edge(xs: &[Hir], word: &hir::ClassUnicode, end: End) -> Edge {
    let mut seq: Box<dyn Iterator<Item = &Hir>> = match end {
        End::First => Box::new(xs.iter()),
        End::Last => Box::new(xs.iter().rev()),
    };
    seq.try_fold(Edge::MaybeEmpty, |_, x| match edge_of(x, word, end) {
        Edge::MaybeEmpty => Ok(Edge::MaybeEmpty),
        e => Err(e),
    })
    .unwrap_or_else(|e| e)
}

fn edge_of(h: &Hir, word: &hir::ClassUnicode, end: End) -> Edge {
    let is = |w: bool| if w { Edge::Word } else { Edge::Other };
    match h.kind() {
        HirKind::Empty | HirKind::Look(_) => Edge::MaybeEmpty,
        HirKind::Literal(hir::Literal(bytes)) => is(literal_edge(bytes, end)),
        HirKind::Class(Class::Unicode(c)) => {
            let mut rest = c.clone();
            rest.difference(word);
            is(rest.ranges().is_empty())
        }
        HirKind::Class(Class::Bytes(c)) => is(c
            .ranges()
            .iter()
            .all(|r| (r.start()..=r.end()).all(is_word_byte))),
        HirKind::Repetition(r) => match edge_of(&r.sub, word, end) {
            Edge::Word if r.min == 0 => Edge::MaybeEmpty,
            e => e,
        },
        HirKind::Capture(c) => edge_of(&c.sub, word, end),
        HirKind::Concat(xs) => edge(xs, word, end),
        HirKind::Alternation(xs) => {
            let mut all = Edge::Word;
            for x in xs {
                match edge_of(x, word, end) {
                    Edge::Other => return Edge::Other,
                    Edge::MaybeEmpty => all = Edge::MaybeEmpty,
                    Edge::Word => {}
                }
            }
            all
        }
    }
}

/// Whether the literal's first (or last) character is a word character.
fn literal_edge(bytes: &[u8], end: End) -> bool {
    // A literal of the rules' syntax is valid UTF-8 unless written with
    // `(?-u)` escapes; then only an ASCII end counts.
    let c = match std::str::from_utf8(bytes) {
        Ok(s) => match end {
            End::First => s.chars().next(),
            End::Last => s.chars().next_back(),
        },
        Err(_) => match end {
            End::First => bytes.first().filter(|b| b.is_ascii()).map(|&b| b as char),
            End::Last => bytes.last().filter(|b| b.is_ascii()).map(|&b| b as char),
        },
    };
    c.is_some_and(regex_syntax::is_word_character)
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rewritten rule and whether its matches are checked.
    fn rw(p: &str) -> Option<(String, bool)> {
        let h = regex_syntax::parse(p).unwrap();
        rewrite(&[h]).map(|r| (r.hirs[0].to_string(), r.check_after[0]))
    }

    #[test]
    fn edges_next_to_word_characters_become_half_boundaries() {
        let (h, check) = rw(r"\b\d{3}-\d{4}\b").unwrap();
        assert!(check);
        assert!(
            h.contains(r"\b{start-half}") && h.contains(r"\b{end-half}"),
            "{h}"
        );
        let (_, check) = rw(r"\bsk-[a-z]+").unwrap();
        assert!(!check);
        // Inside the rule, before a word character, after ASCII only.
        let (_, check) = rw(r"(?:\+1 ?)?(?:\(\d{3}\)|\b\d{3})").unwrap();
        assert!(!check);
        // An end-half boundary before more of the rule, which is ASCII.
        let (_, check) = rw(r"\w+\b-x").unwrap();
        assert!(!check);
    }

    #[test]
    fn other_boundaries_stay_and_turn_the_rewrite_off() {
        // Next to something that may be empty or a non-word character.
        assert_eq!(rw(r"\b\d*"), None);
        assert_eq!(rw(r"\b-x"), None);
        assert_eq!(rw(r"x-?\b"), None);
        assert_eq!(rw(r"\B\d"), None);
        // The other side, inside the match, may be non-ASCII.
        assert_eq!(rw(r"\w\b\w"), None);
        assert_eq!(rw(r"a\b."), None);
        assert_eq!(rw(r"(?:\w\b)+"), None);
        // One rule left as written keeps the DFA quitting: no rewrite.
        let hs = [
            regex_syntax::parse(r"\b\d+\b").unwrap(),
            regex_syntax::parse(r"\b.").unwrap(),
        ];
        assert!(rewrite(&hs).is_none());
        // An ASCII word assertion would be fooled by the look-behind the
        // engine gives after a non-ASCII word character.
        let hs = [
            regex_syntax::parse(r"\b\d+\b").unwrap(),
            regex_syntax::parse(r"(?-u:\b)x").unwrap(),
        ];
        assert!(rewrite(&hs).is_none());
        // Nothing to rewrite.
        assert_eq!(rw(r"(?-u:\b)\d"), None);
    }
}
