//! Compiled rules are shared: `Send + Sync`, cheap to clone, one stream
//! per thread.

use std::sync::Arc;
use std::thread;

use stream_replace::{Config, DfaKind, Replacer, Rules};

const fn assert_send_sync_clone<T: Send + Sync + Clone + 'static>() {}
const fn assert_send<T: Send + 'static>() {}

const _: () = assert_send_sync_clone::<Rules>();
const _: () = assert_send::<Replacer>();
const _: () = assert_send_sync_clone::<stream_replace::Config>();
const _: () = assert_send_sync_clone::<stream_replace::Error>();

fn pii_rules() -> Rules {
    pii_rules_with(Config::new())
}

fn pii_rules_with(config: Config) -> Rules {
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    Rules::builder()
        .regex(r"<think>[\s\S]*?</think>", "")
        .regex(r"[\w.+-]+@[\w-]+\.\w+", "[EMAIL]")
        .regex(r"\b\d{3}-\d{2}-\d{4}\b", "[SSN]")
        .literal("敏感词", "***")
        .regex_with(r"\p{Greek}+", move |c| {
            calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            c.as_str().to_uppercase()
        })
        .config(config)
        .build()
        .unwrap()
}

/// The automata a stream can step: dense, lazy with the pool's caches, and
/// lazy with caches small enough to be cleared during a reply.
fn configs() -> [(&'static str, Config); 4] {
    [
        ("dense", Config::new().dfa(DfaKind::Dense)),
        ("lazy", Config::new().dfa(DfaKind::Lazy)),
        (
            "lazy, 8 KiB caches",
            Config::new().dfa(DfaKind::Lazy).cache_capacity(8 << 10),
        ),
        (
            "lazy, tiny caches",
            Config::new().dfa(DfaKind::Lazy).cache_capacity(1),
        ),
    ]
}

fn input(i: usize) -> String {
    let mut s = String::new();
    for k in 0..40 {
        s += &format!(
            "line {k} of {i}: mail u{k}@host{i}.org <think>t{k}</think>ssn 123-45-{:04} αβ{k} 敏感词 é\n",
            (i * 97 + k) % 10_000
        );
    }
    s
}

#[test]
fn clones_stream_concurrently() {
    let rules = pii_rules();
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let rules = rules.clone();
            thread::spawn(move || {
                let text = input(i);
                let want = rules.replace_all(&text);
                let bytes = text.as_bytes();
                let mut r = rules.replacer();
                for size in [1, 2, 3, 7, 64, 4096] {
                    let mut out = Vec::new();
                    for c in bytes.chunks(size + i) {
                        out.extend(r.feed_bytes(c).unwrap());
                    }
                    out.extend(r.flush_bytes().unwrap());
                    assert_eq!(
                        String::from_utf8(out).unwrap(),
                        want,
                        "thread {i} chunk {size}"
                    );
                }
                want
            })
        })
        .collect();
    for (i, h) in handles.into_iter().enumerate() {
        let got = h.join().unwrap();
        assert_eq!(got, rules.replace_all(&input(i)));
        assert!(!got.contains("<think>") && !got.contains("@host") && !got.contains("敏感词"));
        assert!(got.contains("ΑΒ"));
    }
}

/// A stream fed from a new thread for each piece: with a lazy DFA, each
/// feed borrows another thread's cache, so the DFA states the stream holds
/// from its last feed are not valid there, and the stream must work them
/// out again from the text it holds.
#[test]
fn one_stream_moves_between_threads() {
    for (name, config) in configs() {
        let rules = pii_rules_with(config);
        assert_eq!(rules.dense_dfa_size().is_some(), name == "dense");
        let text = input(3);
        let want = rules.replace_all(&text);
        for size in [1, 3, 11] {
            let mut r = rules.replacer();
            let mut out = String::new();
            let chars: Vec<char> = text.chars().collect();
            for piece in chars.chunks(size) {
                let piece: String = piece.iter().collect();
                let (back, o) = thread::spawn(move || {
                    let o = r.feed(&piece).unwrap();
                    (r, o)
                })
                .join()
                .unwrap();
                r = back;
                out += &o;
            }
            out += &r.flush().unwrap();
            assert_eq!(out, want, "{name}, {size}-char pieces");
        }
    }
}

/// Streams fed in turn on one thread share its cache: between two feeds of
/// one stream, the others fill the cache, which is cleared (with the small
/// caches) and holds states the stream never saw. Each stream's output is
/// still the whole input's.
#[test]
fn interleaved_streams_share_one_cache() {
    for (name, config) in configs() {
        let rules = pii_rules_with(config);
        let texts: Vec<String> = (0..4).map(input).collect();
        let mut streams: Vec<(Replacer, String, usize)> = texts
            .iter()
            .map(|_| (rules.replacer(), String::new(), 0))
            .collect();
        let mut live = streams.len();
        let mut turn = 0;
        while live > 0 {
            for (i, (r, out, at)) in streams.iter_mut().enumerate() {
                let text = &texts[i];
                if *at == text.len() {
                    continue;
                }
                // Pieces of 1 to 13 bytes, cut at character boundaries.
                let mut end = (*at + 1 + (turn * 7 + i * 5) % 13).min(text.len());
                while !text.is_char_boundary(end) {
                    end += 1;
                }
                *out += &r.feed(&text[*at..end]).unwrap();
                *at = end;
                if end == text.len() {
                    *out += &r.flush().unwrap();
                    live -= 1;
                }
            }
            turn += 1;
        }
        for (i, (_, out, _)) in streams.iter().enumerate() {
            assert_eq!(*out, rules.replace_all(&texts[i]), "{name}, stream {i}");
        }
    }
}

#[test]
fn another_stream_from_a_replacer_is_fresh() {
    let rules = pii_rules();
    let mut a = rules.replacer();
    assert_eq!(a.feed("x <think>abc").unwrap(), "x ");
    let mut b = a.rules().replacer();
    assert_eq!(b.held(), 0);
    assert_eq!(b.feed("plain ").unwrap(), "plain ");
    let rest = a.feed("</think>y").unwrap() + &a.flush().unwrap();
    assert_eq!(rest, "y");
    assert_eq!(a.rules().len(), rules.len());
}
