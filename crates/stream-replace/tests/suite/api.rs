//! The API's promises: build errors name their rule, keep their cause and
//! say which limit to raise; `Captures` indexing panics like `regex`'s;
//! `Replacer` is not `Clone`; per-stream state of replacement closures;
//! stream adapters over sources that are not `Unpin`.

use std::error::Error as _;

use regex_automata::nfa::thompson;
use stream_replace::{Config, Error, ErrorKind, Pattern, Replacement, Replacer, Rules};

fn err(b: &mut stream_replace::RulesBuilder) -> Error {
    match b.build() {
        Ok(r) => panic!("expected an error, built {r:?}"),
        Err(e) => e,
    }
}

/// The size limit reported by the first `thompson::BuildError` among the
/// error's sources.
fn nfa_size_limit(e: &Error) -> Option<usize> {
    let mut next = e.source();
    while let Some(s) = next {
        if let Some(nfa) = s.downcast_ref::<thompson::BuildError>() {
            return nfa.size_limit();
        }
        next = s.source();
    }
    None
}

fn words(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("w{i:05}x")).collect()
}

// ---- build errors ----

#[test]
fn huge_alternation_names_its_rule_cause_and_limit() {
    // 4,000 literals in one regex: `meta` matches such a pattern with
    // Aho-Corasick alone, so the rule builds on its own there, and it is
    // the streaming engine's NFA that goes over the limit.
    let limit = 64 << 10;
    let alternation = words(4000).join("|");
    let e = err(Rules::builder()
        .literal("a", "b")
        .regex(&alternation, "X")
        .config(Config::new().size_limit(limit)));
    assert_eq!(e.kind(), &ErrorKind::TooBig, "{e}");
    assert_eq!(e.rule(), Some(1));
    assert_eq!(e.pattern(), Some(alternation.as_str()));
    assert_eq!(nfa_size_limit(&e), Some(limit), "{:?}", e.source());
    let shown = e.to_string();
    assert!(shown.starts_with("rule 1 ("), "{shown}");
    assert!(shown.contains("Config::size_limit"), "{shown}");
    assert!(shown.contains(&limit.to_string()), "{shown}");
    // The pattern is shortened in the message, not repeated whole.
    assert!(shown.len() < 400, "{} bytes: {shown}", shown.len());
    assert!(shown.contains(&format!("{} bytes in all", alternation.len())));
}

#[test]
fn rules_too_big_together_name_the_first_over_the_limit() {
    let limit = 64 << 10;
    // The limit is the regex engine's: literals go there only with the
    // literal matcher off (see `literals_on_their_matcher_ignore_the_size_limit`).
    let config = || Config::new().size_limit(limit).literal_matcher(false);
    let literals = words(2000);
    let mut b = Rules::builder();
    for w in &literals {
        b.literal(w, "X");
    }
    let e = err(b.config(config()));
    assert_eq!(e.kind(), &ErrorKind::TooBig, "{e}");
    let k = e.rule().expect("a rule to blame");
    assert!(k > 0 && k < literals.len(), "{k}");
    assert_eq!(e.pattern(), Some(literals[k].as_str()));
    assert_eq!(nfa_size_limit(&e), Some(limit), "{:?}", e.source());
    let shown = e.to_string();
    assert!(
        shown.contains(&format!("rules 0 to {k} together")),
        "{shown}"
    );
    assert!(shown.contains("Config::size_limit"), "{shown}");
    // What the message says holds: the rules before `k` build, and with
    // rule `k` they do not.
    let prefix = |n: usize| {
        let mut b = Rules::builder();
        for w in &literals[..n] {
            b.literal(w, "X");
        }
        b.config(config()).build()
    };
    assert!(prefix(k).is_ok());
    assert_eq!(prefix(k + 1).unwrap_err().rule(), Some(k));
    // And a larger limit is the cure.
    let mut b = Rules::builder();
    for w in &literals {
        b.literal(w, "X");
    }
    b.config(Config::new().size_limit(limit * 64))
        .build()
        .unwrap();
}

#[test]
fn a_rule_too_big_alone_is_named() {
    let limit = 16 << 10;
    let e = err(Rules::builder()
        .literal("ok", "fine")
        .regex(r"\w{50}", "x")
        .regex(r"\d{2}", "y")
        .config(Config::new().size_limit(limit)));
    assert_eq!(e.kind(), &ErrorKind::TooBig, "{e}");
    assert_eq!(e.rule(), Some(1));
    assert_eq!(nfa_size_limit(&e), Some(limit));
    let shown = e.to_string();
    assert!(
        shown.contains("rule 1") && shown.contains("Config::size_limit"),
        "{shown}"
    );
    assert!(!shown.contains("together"), "{shown}");
}

#[test]
fn syntax_error_keeps_the_regex_syntax_error() {
    let e = err(Rules::builder().literal("x", "y").regex(r"a{2,1}", "z"));
    assert_eq!(e.kind(), &ErrorKind::Syntax);
    let syntax = e
        .source()
        .and_then(|s| s.downcast_ref::<regex_syntax::Error>())
        .expect("a regex_syntax::Error as the source");
    // The message shows the syntax error itself.
    assert!(e.to_string().contains(&syntax.to_string()), "{e}");
    // The error can still be cloned, with its cause.
    assert!(e.clone().source().is_some());
}

#[test]
fn template_with_a_stray_dollar_suggests_double_dollar() {
    let e = err(Rules::builder().regex(r"\d+ USD", "cost $5"));
    assert_eq!(e.kind(), &ErrorKind::UnknownGroup);
    assert_eq!(e.rule(), Some(0));
    assert!(e.source().is_none());
    let shown = e.to_string();
    assert!(shown.contains(r#"write "$$""#), "{shown}");
    assert!(shown.contains(r#""$5""#), "{shown}");
    // As the message says, `$$` gives a dollar sign.
    let rules = Rules::builder()
        .regex(r"\d+ USD", "cost $$5")
        .build()
        .unwrap();
    assert_eq!(rules.replace_all("pay 5 USD"), "pay cost $5");

    // `$USD` too; a braced name is clearly a reference, and gets no such
    // hint.
    let e = err(Rules::builder().regex(r"\d+", "$USD"));
    assert!(e.to_string().contains(r#"write "$$""#), "{e}");
    let e = err(Rules::builder().regex(r"(?<n>\d+)", "${nmae}"));
    assert!(!e.to_string().contains("$$"), "{e}");
    // `$1a` suggests both readings.
    let e = err(Rules::builder().regex(r"(\d)", "$1a"));
    let shown = e.to_string();
    assert!(
        shown.contains("${1}") && shown.contains(r#"write "$$""#),
        "{shown}"
    );
}

// ---- Captures indexing ----

fn run_closure(
    pattern: &str,
    f: fn(&stream_replace::Captures<'_>) -> String,
    text: &str,
) -> String {
    Rules::builder()
        .regex_with(pattern, f)
        .build()
        .unwrap()
        .replace_all(text)
}

#[test]
#[should_panic(expected = "no group named 'usr'")]
fn indexing_an_unknown_name_panics() {
    run_closure(r"(?<user>\w+)@\w+", |c| c["usr"].to_string(), "ann@home");
}

#[test]
#[should_panic(expected = "no group at index '2'")]
fn indexing_an_unknown_number_panics() {
    run_closure(r"(\w+)@\w+", |c| c[2].to_string(), "ann@home");
}

#[test]
#[should_panic(expected = "no group at index '2'")]
fn indexing_a_group_that_did_not_take_part_panics() {
    run_closure(r"(a)|(b)", |c| c[2].to_string(), "a");
}

#[test]
#[should_panic(expected = "no group named 'b'")]
fn indexing_a_named_group_that_did_not_take_part_panics_in_a_stream() {
    let rules = Rules::builder()
        .regex_with(r"(?<a>a)|(?<b>b)", |c| c["b"].to_string())
        .build()
        .unwrap();
    let _ = rules.replacer().feed("a");
}

#[test]
fn get_and_name_return_none_where_indexing_panics() {
    let out = run_closure(
        r"(?<a>a)|(?<b>b)",
        |c| {
            format!(
                "{}{}{}{}|{}",
                c.get(1).is_some() as u8,
                c.get(2).is_some() as u8,
                c.name("b").is_some() as u8,
                c.get(3).is_some() as u8,
                c.name("nope").is_some() as u8,
            )
        },
        "a",
    );
    assert_eq!(out, "1000|0");
    // Participating groups index as their text, an empty group included.
    let out = run_closure(r"(\w)(\d*)", |c| format!("{}[{}]", &c[1], &c[2]), "x");
    assert_eq!(out, "x[]");
}

/// Whether a type implements a trait, decided at compile time: an
/// inherent constant, defined only where the bound holds, takes precedence
/// over the trait's default.
macro_rules! implements {
    ($t:ty: $bound:path) => {{
        struct Probe<T: ?Sized>(std::marker::PhantomData<T>);
        #[allow(dead_code)]
        trait Fallback {
            const YES: bool = false;
        }
        impl<T: ?Sized> Fallback for Probe<T> {}
        impl<T: ?Sized + $bound> Probe<T> {
            #[allow(dead_code)]
            const YES: bool = true;
        }
        <Probe<$t>>::YES
    }};
}

// ---- Replacer is not Clone ----

#[test]
fn replacer_is_not_clone_and_a_fresh_stream_is_one_call_away() {
    assert!(!implements!(Replacer: Clone));
    // The probe does see an implementation where there is one.
    assert!(implements!(Rules: Clone));

    let rules = Rules::builder().literal("secret", "***").build().unwrap();
    let mut a = rules.replacer();
    assert_eq!(a.feed("my sec").unwrap(), "my ");
    let mut b = a.rules().replacer();
    assert_eq!(b.held(), 0);
    assert_eq!(b.offset(), 0);
    assert_eq!(b.feed("ret").unwrap(), "ret");
    assert_eq!(a.feed("ret").unwrap(), "***");
}

// ---- per-stream state ----

#[derive(Default, Debug, PartialEq)]
struct Numbers {
    next: usize,
}

fn numbering_rules() -> Rules {
    Rules::builder()
        .rule(
            Pattern::regex(r"[\w.+-]+@[\w-]+\.\w+"),
            Replacement::with_state(|_, n: &mut Numbers| {
                n.next += 1;
                format!("[EMAIL_{}]", n.next)
            }),
        )
        .rule(
            Pattern::regex(r"\b\d{3}-\d{4}\b"),
            Replacement::with_state(|_, n: &mut Numbers| {
                n.next += 1;
                format!("[PHONE_{}]", n.next)
            }),
        )
        .rule(
            Pattern::literal("!"),
            Replacement::with_state(|_, bangs: &mut u32| {
                *bangs += 1;
                "!".repeat(*bangs as usize)
            }),
        )
        .literal("secret", "***")
        .build()
        .unwrap()
}

#[test]
fn two_streams_number_independently() {
    let rules = numbering_rules();
    let a_text = "mail ann@x.org or call 555-0100! secret ann@y.org!";
    let b_text = "bob@z.io! 555-0199 and 555-0123.";
    // The whole-input reference: each call is one stream.
    let a_want = "mail [EMAIL_1] or call [PHONE_2]! *** [EMAIL_3]!!";
    let b_want = "[EMAIL_1]! [PHONE_2] and [PHONE_3].";
    assert_eq!(rules.replace_all(a_text), a_want);
    assert_eq!(rules.replace_all(b_text), b_want);
    // Again: `replace_all` starts each call afresh.
    assert_eq!(rules.replace_all(a_text), a_want);

    // Interleaved, byte by byte in turn, for every pair of cut points.
    for cut_a in 0..=a_text.len() {
        for cut_b in [0, 3, 7, b_text.len()] {
            let (mut a, mut b) = (rules.replacer(), rules.replacer());
            let (mut a_out, mut b_out) = (Vec::new(), Vec::new());
            let a_chunks = [&a_text.as_bytes()[..cut_a], &a_text.as_bytes()[cut_a..]];
            let b_chunks = [&b_text.as_bytes()[..cut_b], &b_text.as_bytes()[cut_b..]];
            for i in 0..2 {
                a_out.extend(a.feed_bytes(a_chunks[i]).unwrap());
                b_out.extend(b.feed_bytes(b_chunks[i]).unwrap());
            }
            b_out.extend(b.flush_bytes().unwrap());
            a_out.extend(a.flush_bytes().unwrap());
            assert_eq!(
                String::from_utf8(a_out).unwrap(),
                a_want,
                "a cut at {cut_a}"
            );
            assert_eq!(
                String::from_utf8(b_out).unwrap(),
                b_want,
                "b cut at {cut_b}"
            );
            assert_eq!(a.state::<Numbers>(), Some(&Numbers { next: 3 }));
            assert_eq!(a.state::<u32>(), Some(&2));
            assert_eq!(b.state::<u32>(), Some(&1));
        }
    }
}

#[test]
fn state_outlives_flush_and_reset_until_taken() {
    let rules = numbering_rules();
    let mut r = rules.replacer();
    assert_eq!(r.state::<Numbers>(), None);
    assert_eq!(r.feed("a@b.io ").unwrap(), "[EMAIL_1] ");
    assert_eq!(r.flush().unwrap(), "");
    // The next stream of the same replacer goes on numbering.
    assert_eq!(r.feed("c@d.io ").unwrap(), "[EMAIL_2] ");
    assert_eq!(r.feed("e@f.").unwrap(), "");
    r.reset();
    assert_eq!(r.feed("555-0100 ").unwrap(), "[PHONE_3] ");
    assert_eq!(r.take_state::<Numbers>(), Some(Numbers { next: 3 }));
    assert_eq!(r.state::<Numbers>(), None);
    assert_eq!(r.feed("g@h.io ").unwrap(), "[EMAIL_1] ");
    // Another type's value was left alone.
    assert_eq!(r.feed("!").unwrap(), "!");
    assert_eq!(r.take_state::<u32>(), Some(1));
    assert_eq!(r.take_state::<u32>(), None);
}

#[test]
fn replacer_with_starts_from_the_given_state() {
    let rules = numbering_rules();
    let mut r = rules.replacer_with(Numbers { next: 41 });
    assert_eq!(r.state::<Numbers>(), Some(&Numbers { next: 41 }));
    assert_eq!(
        r.feed("x@y.io 555-0100 ").unwrap(),
        "[EMAIL_42] [PHONE_43] "
    );
    r.state_mut::<Numbers>().unwrap().next = 0;
    assert_eq!(r.feed("x@y.io ").unwrap(), "[EMAIL_1] ");
    // A value no closure asks for is kept and does no harm.
    let mut r = rules.replacer_with(String::from("unused"));
    assert_eq!(r.feed("x@y.io ").unwrap(), "[EMAIL_1] ");
    assert_eq!(r.state::<String>().map(String::as_str), Some("unused"));
}

#[test]
fn rules_without_state_keep_none() {
    let rules = Rules::builder()
        .regex_with(r"\d+", |c| format!("<{}>", c.as_str()))
        .literal("x", "y")
        .build()
        .unwrap();
    let mut r = rules.replacer();
    assert_eq!(r.feed("a 12 x ").unwrap(), "a <12> y ");
    assert_eq!(r.state::<usize>(), None);
    assert_eq!(r.take_state::<usize>(), None);
}

// ---- stream adapters over sources that are not `Unpin` ----

#[cfg(feature = "stream")]
mod stream {
    use std::cell::RefCell;
    use std::collections::VecDeque;
    use std::marker::PhantomPinned;
    use std::pin::Pin;
    use std::task::{Context, Poll, Waker};

    use futures_core::Stream;
    use stream_replace::{Rules, wrap_stream, wrap_stream_bytes};

    /// A source that is not `Unpin` (as an `async` block's state is). It
    /// reaches its queue through a shared reference, which a pinned value
    /// gives without `unsafe`.
    struct Pinned<T> {
        chunks: RefCell<VecDeque<T>>,
        _pin: PhantomPinned,
    }

    impl<T> Pinned<T> {
        fn new(chunks: impl IntoIterator<Item = T>) -> Pinned<T> {
            Pinned {
                chunks: RefCell::new(chunks.into_iter().collect()),
                _pin: PhantomPinned,
            }
        }
    }

    impl<T> Stream for Pinned<T> {
        type Item = T;

        fn poll_next(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<T>> {
            Poll::Ready(self.chunks.borrow_mut().pop_front())
        }
    }

    fn drain<S: Stream + Unpin>(s: &mut S) -> Vec<S::Item> {
        let mut cx = Context::from_waker(Waker::noop());
        let mut items = Vec::new();
        while let Poll::Ready(Some(item)) = Pin::new(&mut *s).poll_next(&mut cx) {
            items.push(item);
        }
        items
    }

    #[test]
    fn wrap_stream_takes_a_source_that_is_not_unpin() {
        assert!(!implements!(Pinned<&str>: Unpin));
        let rules = Rules::builder()
            .literal("secret", "******")
            .build()
            .unwrap();
        let mut s = wrap_stream(rules.replacer(), Pinned::new(["a sec", "ret", " b"]));
        let items = drain(&mut s);
        assert_eq!(
            items.into_iter().collect::<Result<Vec<_>, _>>().unwrap(),
            ["a ", "******", " b"]
        );
        let (replacer, source) = s.into_parts();
        assert_eq!(replacer.held(), 0);
        assert!(source.chunks.borrow().is_empty());
    }

    #[test]
    fn wrap_stream_bytes_takes_a_source_that_is_not_unpin() {
        let rules = Rules::builder().literal("café", "bar").build().unwrap();
        let source = Pinned::new([&b"a caf\xC3"[..], b"\xA9!"]);
        let mut s = wrap_stream_bytes(rules.replacer(), source);
        let items = drain(&mut s);
        assert_eq!(
            items
                .into_iter()
                .collect::<Result<Vec<_>, _>>()
                .unwrap()
                .concat(),
            b"a bar!"
        );
    }
}
