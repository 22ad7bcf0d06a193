//! Adapter checks (each case of `testdata` also runs through every adapter
//! in `cases`): every adapter's output equals the whole-input oracle for
//! every two-part split and for 1-byte chunks, plus the io and async edges.

use regex_automata::meta::Regex;
use std::collections::VecDeque;
use std::io::{self, BufRead, Read, Write};
use stream_replace::{Config, ReplaceReader, ReplaceWriter, Rules, StreamError, wrap, wrap_bytes};

const PATTERNS: [&str; 3] = [
    r"[\w.+-]+@[\w-]+\.\w+",
    r"<think>[\s\S]*?</think>",
    "secret",
];
const REPLACEMENTS: [&str; 3] = ["[EMAIL]", "", "******"];

const INPUTS: [&str; 5] = [
    "Mail ann.lee@example.com <think>the secret is x@y.z</think>now, secret!",
    "<think></think>secret@secret.io secretsecret <think>é</think>",
    "ünï@ex-ample.de, <think>a<think>b</think>c</think> secre",
    "plain text, nothing to see",
    "a <think>never closed secret",
];

fn rules() -> Rules {
    let mut b = Rules::builder();
    b.regex(PATTERNS[0], REPLACEMENTS[0])
        .regex(PATTERNS[1], REPLACEMENTS[1])
        .literal(PATTERNS[2], REPLACEMENTS[2]);
    b.build().unwrap()
}

fn limited_rules() -> Rules {
    let mut b = Rules::builder();
    b.regex(PATTERNS[1], "").config(Config::new().max_held(8));
    b.build().unwrap()
}

/// The independent reference: `meta::Regex` over the same rules.
fn oracle(hay: &str) -> String {
    let pats = [
        PATTERNS[0].to_string(),
        PATTERNS[1].to_string(),
        regex::escape(PATTERNS[2]),
    ];
    let re = Regex::new_many(&pats).unwrap();
    let mut out = String::new();
    let mut last = 0;
    for m in re.find_iter(hay) {
        out.push_str(&hay[last..m.start()]);
        out.push_str(REPLACEMENTS[m.pattern().as_usize()]);
        last = m.end();
    }
    out.push_str(&hay[last..]);
    out
}

/// Every two-part split at character boundaries, and 1-character chunks.
fn text_splits(s: &str) -> Vec<Vec<&str>> {
    let mut all: Vec<Vec<&str>> = (0..=s.len())
        .filter(|&i| s.is_char_boundary(i))
        .map(|i| vec![&s[..i], &s[i..]])
        .collect();
    all.push(
        s.char_indices()
            .map(|(i, c)| &s[i..i + c.len_utf8()])
            .collect(),
    );
    all
}

/// Every two-part split at any byte, and 1-byte chunks.
fn byte_splits(s: &[u8]) -> Vec<Vec<&[u8]>> {
    let mut all: Vec<Vec<&[u8]>> = (0..=s.len()).map(|i| vec![&s[..i], &s[i..]]).collect();
    all.push(s.chunks(1).collect());
    all
}

#[test]
fn oracle_agrees_with_replace_all() {
    let rules = rules();
    for input in INPUTS {
        assert_eq!(rules.replace_all(input), oracle(input), "{input:?}");
    }
}

// ---- iterators ----

#[test]
fn wrap_matches_oracle() {
    let rules = rules();
    for input in INPUTS {
        let want = oracle(input);
        for chunks in text_splits(input) {
            let mut it = wrap(rules.replacer(), chunks.iter().copied());
            let mut got = String::new();
            for item in it.by_ref() {
                let item = item.unwrap();
                assert!(!item.is_empty(), "empty item for {chunks:?}");
                got += &item;
            }
            assert_eq!(got, want, "{chunks:?}");
            assert!(it.next().is_none(), "not fused");
            assert_eq!(it.size_hint(), (0, Some(0)));
            let (replacer, _) = it.into_parts();
            assert_eq!(replacer.held(), 0);
        }
    }
}

#[test]
fn wrap_bytes_matches_oracle() {
    let rules = rules();
    for input in INPUTS {
        let want = oracle(input).into_bytes();
        for chunks in byte_splits(input.as_bytes()) {
            let got = wrap_bytes(rules.replacer(), &chunks)
                .collect::<Result<Vec<_>, _>>()
                .unwrap();
            assert!(got.iter().all(|c| !c.is_empty()));
            assert_eq!(got.concat(), want, "{chunks:?}");
        }
    }
}

#[test]
fn wrap_owned_chunks_and_empty_source() {
    let rules = rules();
    let chunks = vec!["a sec".to_string(), String::new(), "ret b".to_string()];
    let got: String = wrap(rules.replacer(), chunks)
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(got, "a ****** b");
    assert!(
        wrap(rules.replacer(), Vec::<String>::new())
            .next()
            .is_none()
    );
}

#[test]
fn wrap_error_is_yielded_once_then_ends() {
    let rules = limited_rules();
    let pulled = std::cell::Cell::new(0);
    let chunks = ["ok <think>", "0123456789", "more", "more"]
        .into_iter()
        .inspect(|_| pulled.set(pulled.get() + 1));
    let mut it = wrap(rules.replacer(), chunks);
    assert_eq!(it.next().unwrap().unwrap(), "ok ");
    let err = it.next().unwrap().unwrap_err();
    assert_eq!(err.limit(), 8);
    assert!(it.next().is_none());
    assert!(it.next().is_none());
    assert_eq!(pulled.get(), 2, "pulled chunks after the error");
    // The replacer is ready for a new stream.
    let (replacer, _) = it.into_parts();
    let again: String = wrap(replacer, ["fine"]).collect::<Result<_, _>>().unwrap();
    assert_eq!(again, "fine");

    let mut it = wrap_bytes(rules.replacer(), [&b"<think>0123456789"[..], b"x"]);
    assert!(it.next().unwrap().is_err());
    assert!(it.next().is_none());
}

// ---- writer ----

/// An inner writer that takes at most `max` bytes per write and fails
/// according to a script first.
struct Flaky {
    data: Vec<u8>,
    max: usize,
    script: VecDeque<io::ErrorKind>,
    flushes: usize,
}

impl Flaky {
    fn new(max: usize, script: &[io::ErrorKind]) -> Flaky {
        Flaky {
            data: Vec::new(),
            max,
            script: script.iter().copied().collect(),
            flushes: 0,
        }
    }
}

impl Write for Flaky {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if let Some(kind) = self.script.pop_front() {
            return Err(kind.into());
        }
        let n = buf.len().min(self.max);
        self.data.extend_from_slice(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.flushes += 1;
        Ok(())
    }
}

#[test]
fn writer_matches_oracle() {
    let rules = rules();
    for input in INPUTS {
        let want = oracle(input).into_bytes();
        for chunks in byte_splits(input.as_bytes()) {
            let mut w = ReplaceWriter::new(rules.replacer(), Vec::new());
            for c in &chunks {
                w.write_all(c).unwrap();
                // Flushing between writes must not end the stream.
                w.flush().unwrap();
            }
            assert_eq!(w.finish().unwrap(), want, "{chunks:?}");
        }
    }
}

#[test]
fn writer_flush_does_not_end_the_stream() {
    let rules = rules();
    let mut w = ReplaceWriter::new(rules.replacer(), Vec::new());
    w.write_all(b"to ann@exa").unwrap();
    w.flush().unwrap();
    assert_eq!(w.get_ref(), b"to ");
    w.write_all(b"mple.com, <think>sec").unwrap();
    w.flush().unwrap();
    w.write_all(b"ret</think> and sec").unwrap();
    w.flush().unwrap();
    w.write_all(b"ret.").unwrap();
    assert_eq!(w.finish().unwrap(), b"to [EMAIL],  and ******.");
}

#[test]
fn writer_finish_emits_the_held_rest() {
    let rules = rules();
    let mut w = ReplaceWriter::new(rules.replacer(), Flaky::new(usize::MAX, &[]));
    w.write_all(b"a <think>never closed").unwrap();
    assert_eq!(w.get_ref().data, b"a ");
    assert!(w.replacer().held() > 0);
    w.try_finish().unwrap();
    assert_eq!(w.get_ref().data, b"a <think>never closed");
    assert_eq!(w.get_ref().flushes, 1);
    assert_eq!(w.replacer().held(), 0);
    // Finishing again only flushes.
    w.try_finish().unwrap();
    assert_eq!(w.get_ref().data, b"a <think>never closed");
    assert_eq!(w.get_ref().flushes, 2);
    // A write after finishing starts a new stream.
    w.write_all(b" secret").unwrap();
    let inner = w.finish().unwrap();
    assert_eq!(inner.data, b"a <think>never closed ******");
}

#[test]
fn writer_drop_without_finish_writes_nothing_more() {
    let rules = rules();
    let mut out = Vec::new();
    {
        let mut w = ReplaceWriter::new(rules.replacer(), &mut out);
        w.write_all(b"ok <think>private").unwrap();
    }
    assert_eq!(out, b"ok ");
}

#[test]
fn writer_with_short_and_failing_inner_writes() {
    let rules = rules();
    let input = INPUTS[0].as_bytes();
    let want = oracle(INPUTS[0]).into_bytes();
    use io::ErrorKind::{Interrupted, WouldBlock};
    let script = [Interrupted, WouldBlock, Interrupted, WouldBlock, WouldBlock];
    let mut w = ReplaceWriter::new(rules.replacer(), Flaky::new(1, &script));
    let mut rest = input;
    let mut would_block = 0;
    while !rest.is_empty() {
        let n = rest.len().min(5);
        match w.write(&rest[..n]) {
            Ok(k) => {
                assert_eq!(k, n);
                rest = &rest[k..];
            }
            Err(e) if e.kind() == WouldBlock => would_block += 1,
            Err(e) => panic!("{e}"),
        }
    }
    loop {
        match w.try_finish() {
            Ok(()) => break,
            Err(e) if e.kind() == WouldBlock => would_block += 1,
            Err(e) => panic!("{e}"),
        }
    }
    assert!(would_block > 0);
    assert_eq!(w.get_ref().data, want);
}

#[test]
fn writer_inner_write_zero_is_an_error() {
    let rules = rules();
    let mut space = [0u8; 2];
    let mut w = ReplaceWriter::new(rules.replacer(), &mut space[..]);
    w.write_all(b"a <think>").unwrap();
    let err = w.try_finish().unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::WriteZero);
}

#[test]
fn writer_error_on_held_limit() {
    let rules = limited_rules();
    let mut w = ReplaceWriter::new(rules.replacer(), Vec::new());
    w.write_all(b"ok <think>").unwrap();
    let err = w.write_all(b"0123456789").unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidData);
    let inner = err
        .get_ref()
        .unwrap()
        .downcast_ref::<StreamError>()
        .unwrap();
    assert_eq!(inner.limit(), 8);
    assert!(w.write(b"more").is_err(), "a failed stream keeps failing");
    assert_eq!(w.get_ref(), b"ok ");
    let err = w.finish().unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidData);
}

// ---- reader ----

/// An inner reader that returns the given chunks one per read (cut to the
/// buffer size), with an `Interrupted` error first when asked.
struct Chunked<'a> {
    chunks: VecDeque<&'a [u8]>,
    interrupt: bool,
}

impl<'a> Chunked<'a> {
    fn new(chunks: &[&'a [u8]], interrupt: bool) -> Chunked<'a> {
        Chunked {
            chunks: chunks.iter().copied().collect(),
            interrupt,
        }
    }
}

impl Read for Chunked<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if std::mem::take(&mut self.interrupt) {
            return Err(io::ErrorKind::Interrupted.into());
        }
        // Empty chunks would read as the end: skip them.
        while self.chunks.front().is_some_and(|c| c.is_empty()) {
            self.chunks.pop_front();
        }
        let Some(chunk) = self.chunks.front_mut() else {
            return Ok(0);
        };
        let n = chunk.len().min(buf.len());
        buf[..n].copy_from_slice(&chunk[..n]);
        *chunk = &chunk[n..];
        Ok(n)
    }
}

#[test]
fn reader_matches_oracle() {
    let rules = rules();
    for input in INPUTS {
        let want = oracle(input).into_bytes();
        for chunks in byte_splits(input.as_bytes()) {
            let mut r = ReplaceReader::new(rules.replacer(), Chunked::new(&chunks, true));
            let mut got = Vec::new();
            r.read_to_end(&mut got).unwrap();
            assert_eq!(got, want, "{chunks:?}");
            let mut buf = [0; 4];
            assert_eq!(r.read(&mut buf).unwrap(), 0, "not at the end");
        }
    }
}

#[test]
fn reader_never_returns_zero_before_the_end() {
    let rules = rules();
    let mut input = b"x <think>".to_vec();
    input.extend(std::iter::repeat_n(b'y', 20_000));
    input.extend(b"</think> tail secret");
    // One byte per inner read and a small read buffer.
    let chunks: Vec<&[u8]> = input.chunks(1).collect();
    let mut r = ReplaceReader::with_capacity(1, rules.replacer(), Chunked::new(&chunks, false));
    let mut got = Vec::new();
    let mut buf = [0; 3];
    loop {
        let n = r.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    assert_eq!(got, b"x  tail ******");
    assert_eq!(r.read(&mut []).unwrap(), 0);
}

#[test]
fn reader_buf_read_and_capacity_zero() {
    let rules = rules();
    let r = ReplaceReader::with_capacity(0, rules.replacer(), &b"secret\nann@x.io\n"[..]);
    let lines = r.lines().collect::<Result<Vec<_>, _>>().unwrap();
    assert_eq!(lines, ["******", "[EMAIL]"]);
}

#[test]
fn reader_error_on_held_limit() {
    let rules = limited_rules();
    let chunks: [&[u8]; 3] = [b"ok <think>", b"0123456789", b"more"];
    let mut r = ReplaceReader::new(rules.replacer(), Chunked::new(&chunks, false));
    let mut buf = [0; 64];
    assert_eq!(r.read(&mut buf).unwrap(), 3);
    assert_eq!(&buf[..3], b"ok ");
    let err = r.read(&mut buf).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidData);
    assert!(err.get_ref().unwrap().is::<StreamError>());
    // Sticky, and the inner reader is not read again.
    assert_eq!(
        r.read(&mut buf).unwrap_err().kind(),
        io::ErrorKind::InvalidData
    );
    let rest = r.into_inner().chunks;
    assert_eq!(rest.iter().filter(|c| !c.is_empty()).count(), 1);
}

#[test]
fn reader_passes_inner_errors_through() {
    struct Broken;
    impl Read for Broken {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            Err(io::ErrorKind::ConnectionReset.into())
        }
    }
    let rules = rules();
    let mut r = ReplaceReader::new(rules.replacer(), Broken);
    let err = r.read(&mut [0; 8]).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::ConnectionReset);
}

// ---- streams ----

/// The `futures_core::Stream` adapters (feature `stream`).
#[cfg(feature = "stream")]
mod stream {
    use super::*;
    use futures_core::Stream;
    use std::pin::Pin;
    use std::task::{Context, Poll, Waker};
    use stream_replace::{wrap_stream, wrap_stream_bytes};

    /// A source stream over chunks that is `Pending` on every other poll (and
    /// wakes the waker, as a real source would once ready).
    struct Source<T> {
        chunks: VecDeque<T>,
        pending: bool,
        pending_next: bool,
        polls_after_end: usize,
    }

    impl<T> Source<T> {
        fn new(chunks: impl IntoIterator<Item = T>, pending: bool) -> Source<T> {
            Source {
                chunks: chunks.into_iter().collect(),
                pending,
                pending_next: pending,
                polls_after_end: 0,
            }
        }
    }

    impl<T: Unpin> Stream for Source<T> {
        type Item = T;

        fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
            if self.pending_next {
                self.pending_next = false;
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            self.pending_next = self.pending;
            let next = self.chunks.pop_front();
            if next.is_none() {
                self.polls_after_end += 1;
            }
            Poll::Ready(next)
        }
    }

    /// Polls `s` to its end with a no-op waker; counts the `Pending`s.
    fn collect<S: Stream + Unpin>(s: &mut S) -> (Vec<S::Item>, usize) {
        let mut cx = Context::from_waker(Waker::noop());
        let mut items = Vec::new();
        let mut pending = 0;
        loop {
            match Pin::new(&mut *s).poll_next(&mut cx) {
                Poll::Ready(Some(item)) => items.push(item),
                Poll::Ready(None) => return (items, pending),
                Poll::Pending => pending += 1,
            }
        }
    }

    #[test]
    fn wrap_stream_matches_oracle() {
        use futures_core::stream::FusedStream;
        let rules = rules();
        for input in INPUTS {
            let want = oracle(input);
            for chunks in text_splits(input) {
                for pending in [false, true] {
                    let source = Source::new(chunks.iter().copied(), pending);
                    let mut s = wrap_stream(rules.replacer(), source);
                    let (items, pendings) = collect(&mut s);
                    assert_eq!(pendings > 0, pending);
                    let items: Vec<String> = items.into_iter().map(Result::unwrap).collect();
                    assert!(items.iter().all(|i| !i.is_empty()));
                    assert_eq!(items.concat(), want, "{chunks:?}");
                    assert!(s.is_terminated());
                    assert_eq!(collect(&mut s).0.len(), 0);
                    assert_eq!(s.into_parts().1.polls_after_end, 1);
                }
            }
        }
    }

    #[test]
    fn wrap_stream_bytes_matches_oracle() {
        let rules = rules();
        for input in INPUTS {
            let want = oracle(input).into_bytes();
            for chunks in byte_splits(input.as_bytes()) {
                let source = Source::new(chunks.iter().copied(), true);
                let mut s = wrap_stream_bytes(rules.replacer(), source);
                let items = collect(&mut s)
                    .0
                    .into_iter()
                    .collect::<Result<Vec<_>, _>>()
                    .unwrap();
                assert_eq!(items.concat(), want, "{chunks:?}");
            }
        }
    }

    #[test]
    fn wrap_stream_over_a_pinned_box() {
        // A source that is not `Unpin` goes through `Box::pin`.
        struct NotUnpin {
            chunks: std::cell::RefCell<VecDeque<&'static str>>,
            _pin: std::marker::PhantomPinned,
        }
        impl Stream for NotUnpin {
            type Item = &'static str;
            fn poll_next(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<&'static str>> {
                Poll::Ready(self.chunks.borrow_mut().pop_front())
            }
        }
        let rules = rules();
        let source = Box::pin(NotUnpin {
            chunks: std::cell::RefCell::new(["a sec", "ret b"].into()),
            _pin: std::marker::PhantomPinned,
        });
        let items = collect(&mut wrap_stream(rules.replacer(), source)).0;
        assert_eq!(
            items.into_iter().collect::<Result<String, _>>().unwrap(),
            "a ****** b"
        );
    }

    #[test]
    fn wrap_stream_error_is_yielded_once_then_ends() {
        let rules = limited_rules();
        let source = Source::new(["ok <think>", "0123456789", "more"], true);
        let mut s = wrap_stream(rules.replacer(), source);
        let (items, _) = collect(&mut s);
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].as_deref().unwrap(), "ok ");
        assert_eq!(items[1].as_ref().unwrap_err().limit(), 8);
        let (replacer, source) = s.into_parts();
        assert_eq!(source.chunks.len(), 1, "polled the source after the error");
        assert_eq!(replacer.held(), 0);
    }
}
