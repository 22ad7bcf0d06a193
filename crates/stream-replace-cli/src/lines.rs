//! Line mode: each rule matches within one line, as a `sed` script does.
//!
//! The engine sees the input as one text, so a rule is rewritten before it
//! is compiled: its syntax tree loses every `\n` from its classes (`[^ ]`,
//! `\s`, `\W`, `.` under `(?s)`), and its text anchors (`^`, `$`, `\A`,
//! `\z`) become line anchors. A match can then neither contain a `\n` nor
//! see past one, so matching the whole input with the rewritten rule gives,
//! line for line, what matching each line on its own gives. `\r` stays part
//! of the line, as in `sed`: a CRLF line's `$` is after its `\r`.
//!
//! A rule that asks for a newline (a literal `\n`) or for every character
//! (`[\s\S]`, `(?s:.)`) is refused rather than silently narrowed: it was
//! written to cross lines, which needs `-z`.

use regex_syntax::ParserBuilder;
use regex_syntax::hir::{
    Capture, Class, ClassBytes, ClassBytesRange, ClassUnicode, ClassUnicodeRange, Hir, HirKind,
    Look, Repetition,
};

/// How a rule sees the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Within one line: no match contains or looks past a `\n`.
    Lines,
    /// The whole input as one text (`-z`).
    Whole,
}

/// Parses `pattern` as the library will (the `regex` crate's syntax, its
/// default flags) and returns the pattern to compile in `mode`: the pattern
/// itself in [`Mode::Whole`], or when line mode changes nothing; otherwise
/// the rewritten tree, printed in the same syntax.
///
/// # Errors
///
/// A message for the user: the syntax error, or why the rule cannot run in
/// line mode.
pub fn pattern_for(pattern: &str, mode: Mode) -> Result<String, String> {
    let hir = ParserBuilder::new()
        .build()
        .parse(pattern)
        .map_err(|e| format!("invalid regex:\n{e}"))?;
    if mode == Mode::Whole {
        return Ok(pattern.to_owned());
    }
    let lines = within_a_line(&hir)?;
    Ok(if lines == hir {
        pattern.to_owned()
    } else {
        lines.to_string()
    })
}

/// Whether `pattern` can match the empty string (`^`, `$`, `x*`). In line
/// mode such a rule could match after the input's last newline, where sed
/// sees no line, so srep holds that newline back from the engine until
/// more input follows (see `run` in main.rs). A pattern that does not parse
/// is taken to match empty, the safe reading.
pub fn can_match_empty(pattern: &str) -> bool {
    ParserBuilder::new()
        .build()
        .parse(pattern)
        .map_or(true, |hir| hir.properties().minimum_len() == Some(0))
}

/// Checks that a literal rule can match within a line.
///
/// # Errors
///
/// When `text` holds a `\n`, which no line does.
pub fn literal_for(text: &str, mode: Mode) -> Result<(), String> {
    if mode == Mode::Lines && text.contains('\n') {
        return Err(NEWLINE.to_owned());
    }
    Ok(())
}

const NEWLINE: &str = "it matches a newline (\\n), and rules match within a line unless \
                       -z is given: give -z to match across lines";

const EVERY_CHAR: &str = "it has a class of every character ([\\s\\S], (?s:.), \\p{Any}), \
                          which would stop at a line end, as rules match within a line \
                          unless -z is given: give -z to match across lines, or write . \
                          for any character within a line";

/// `hir` with `\n` taken out of every class and its text anchors made line
/// anchors.
fn within_a_line(hir: &Hir) -> Result<Hir, String> {
    Ok(match hir.kind() {
        HirKind::Empty => hir.clone(),
        HirKind::Literal(lit) => {
            if lit.0.contains(&b'\n') {
                return Err(NEWLINE.to_owned());
            }
            hir.clone()
        }
        HirKind::Class(Class::Unicode(class)) => {
            let mut all = ClassUnicode::new([ClassUnicodeRange::new('\0', char::MAX)]);
            all.difference(class);
            if all.ranges().is_empty() {
                return Err(EVERY_CHAR.to_owned());
            }
            let mut class = class.clone();
            class.difference(&ClassUnicode::new([ClassUnicodeRange::new('\n', '\n')]));
            Hir::class(Class::Unicode(class))
        }
        HirKind::Class(Class::Bytes(class)) => {
            let mut all = ClassBytes::new([ClassBytesRange::new(0, 0xFF)]);
            all.difference(class);
            if all.ranges().is_empty() {
                return Err(EVERY_CHAR.to_owned());
            }
            let mut class = class.clone();
            class.difference(&ClassBytes::new([ClassBytesRange::new(b'\n', b'\n')]));
            Hir::class(Class::Bytes(class))
        }
        HirKind::Look(look) => Hir::look(match look {
            Look::Start => Look::StartLF,
            Look::End => Look::EndLF,
            other => *other,
        }),
        HirKind::Repetition(rep) => Hir::repetition(Repetition {
            sub: Box::new(within_a_line(&rep.sub)?),
            ..rep.clone()
        }),
        HirKind::Capture(cap) => Hir::capture(Capture {
            sub: Box::new(within_a_line(&cap.sub)?),
            ..cap.clone()
        }),
        HirKind::Concat(subs) => {
            Hir::concat(subs.iter().map(within_a_line).collect::<Result<_, _>>()?)
        }
        HirKind::Alternation(subs) => {
            Hir::alternation(subs.iter().map(within_a_line).collect::<Result<_, _>>()?)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(p: &str) -> String {
        pattern_for(p, Mode::Lines).unwrap()
    }

    // The rewritten pattern, run by the `regex` crate over a whole text,
    // against the original run over each line alone: the naive oracle.
    fn per_line(p: &str, text: &str, with: &str) -> String {
        let re = regex::Regex::new(p).unwrap();
        let mut out = String::new();
        for (i, line) in text.split('\n').enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(&re.replace_all(line, with));
        }
        out
    }

    fn whole(p: &str, text: &str, with: &str) -> String {
        regex::Regex::new(&lines(p))
            .unwrap()
            .replace_all(text, with)
            .into_owned()
    }

    #[test]
    fn unchanged_patterns_are_passed_as_given() {
        for p in [
            r"sk-[A-Za-z0-9]{20}",
            r"\d+",
            r"a.b",
            r"(?P<k>\w+)=\S+?",
            r"[^\n]+",
        ] {
            assert_eq!(lines(p), p);
        }
    }

    #[test]
    fn the_rewrite_matches_as_each_line_alone() {
        let text = "x\nAuthorization: Bearer sk-1\r\npassword=abc\nnext line\n\n$ end\r\nlast";
        let cases = [
            r"^Authorization: .*",
            r"password=[^ ]+",
            r"\s+",
            r"\W+",
            r"^",
            r"$",
            r"\A\w+",
            r"\w+\z",
            r"(?-m)^.",
            r"e\b",
            r"[^a-z]*",
            r"\S+$",
            r"\r$",
        ];
        for p in cases {
            assert_eq!(whole(p, text, "<$0>"), per_line(p, text, "<$0>"), "{p}");
        }
    }

    #[test]
    fn a_rule_written_to_cross_lines_is_refused() {
        for p in [
            r"a\nb",
            r"<think>[\s\S]*?</think>",
            r"(?s:.)+",
            r"\p{Any}",
            r"[\n]",
        ] {
            let err = pattern_for(p, Mode::Lines).unwrap_err();
            assert!(err.contains("-z"), "{p}: {err}");
            assert_eq!(pattern_for(p, Mode::Whole).unwrap(), p);
        }
        assert!(literal_for("a\nb", Mode::Lines).is_err());
        assert!(literal_for("a\nb", Mode::Whole).is_ok());
        assert!(literal_for("a\rb", Mode::Lines).is_ok());
    }

    #[test]
    fn rules_that_match_empty_text() {
        for p in ["^", "$", "x*", r"^\w*", "a|", r"\b", "(?:)"] {
            assert!(can_match_empty(p), "{p}");
        }
        for p in ["x", "^a", r"\w+$", "a|b", "password=[^ ]+", "["] {
            assert_eq!(can_match_empty(p), p == "[", "{p}");
        }
    }

    #[test]
    fn syntax_errors_show_the_pattern() {
        let err = pattern_for("a(b", Mode::Lines).unwrap_err();
        assert!(err.starts_with("invalid regex:\n"), "{err}");
        assert!(err.contains("a(b"), "{err}");
    }

    // The README says the pack's rules are not rewritten: all but the one
    // written to span lines could not match a newline anyway.
    #[test]
    fn pack_rules_but_private_key_cannot_match_a_newline() {
        let mut spanning = Vec::new();
        for rule in stream_replace::pack::pii().rules() {
            match pattern_for(rule.pattern, Mode::Lines) {
                Ok(p) => assert_eq!(p, rule.pattern, "{}", rule.id),
                Err(_) => spanning.push(rule.id),
            }
        }
        spanning.sort_unstable();
        assert_eq!(spanning, ["private_key"]);
    }

    // Rules whose line-mode meaning differs from their whole-input one,
    // with replacements that show where each match was.
    const RULES: &[(&str, &str)] = &[
        (r"^Authorization: .*", "A:***"),
        (r"(password=)[^ ]+", "${1}***"),
        (r"(?P<k>password=)[^ ]+", "${k}#"),
        (r"\s+", "_"),
        (r"\S+$", "<$0>"),
        (r"^\w*", "[$0]"),
        (r"$", "|"),
        (r"\A.", "{$0}"),
        (r"[^a]*b", "($0)"),
        (r"(?i)A[^=]*", "($0)"),
        (r"\W+", "~"),
        (r"(b+)\r?$", "${1}!"),
        (r"é[^b]{0,3}", "(e)"),
    ];

    fn text() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("a"),
            Just("b"),
            Just(" "),
            Just("\t"),
            Just("\n"),
            Just("\r\n"),
            Just("\r"),
            Just("="),
            Just("é"),
            Just("Authorization: "),
            Just("password="),
        ];
        proptest::collection::vec(piece, 0..24).prop_map(|p| p.concat())
    }

    use proptest::prelude::*;

    // RULES, rewritten and compiled once.
    fn compiled() -> &'static [stream_replace::Rules] {
        static RULES_BUILT: std::sync::OnceLock<Vec<stream_replace::Rules>> =
            std::sync::OnceLock::new();
        RULES_BUILT.get_or_init(|| {
            RULES
                .iter()
                .map(|&(p, with)| {
                    stream_replace::Rules::builder()
                        .regex(&lines(p), with)
                        .build()
                        .unwrap()
                })
                .collect()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        // The rewritten rule over the whole text, run by the engine srep
        // uses and streamed in two to four pieces, gives what the `regex`
        // crate gives for the original rule on each line alone.
        #[test]
        fn engine_streams_each_line_as_if_alone(
            text in text(),
            cuts in proptest::collection::vec(any::<prop::sample::Index>(), 1..4),
        ) {
            for (&(p, with), rules) in RULES.iter().zip(compiled()) {
                let want = per_line(p, &text, with);
                prop_assert_eq!(&rules.replace_all(&text), &want, "{}", p);
                let mut at: Vec<usize> = cuts
                    .iter()
                    .map(|i| i.index(text.len() + 1))
                    .filter(|&i| text.is_char_boundary(i))
                    .collect();
                at.sort_unstable();
                let mut r = rules.replacer();
                let (mut out, mut from) = (String::new(), 0);
                for &to in at.iter().chain([&text.len()]) {
                    out += &r.feed(&text[from..to]).unwrap();
                    from = to;
                }
                out += &r.flush().unwrap();
                prop_assert_eq!(&out, &want, "{} cut at {:?}", p, at);
            }
        }
    }
}
