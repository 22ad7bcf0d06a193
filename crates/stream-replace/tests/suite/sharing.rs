//! Compiled rules are shared: `Send + Sync`, cheap to clone, one stream
//! per thread.

use std::sync::Arc;
use std::thread;

use stream_replace::{Replacer, Rules};

const fn assert_send_sync_clone<T: Send + Sync + Clone + 'static>() {}
const fn assert_send<T: Send + 'static>() {}

const _: () = assert_send_sync_clone::<Rules>();
const _: () = assert_send::<Replacer>();
const _: () = assert_send_sync_clone::<stream_replace::Config>();
const _: () = assert_send_sync_clone::<stream_replace::Error>();

fn pii_rules() -> Rules {
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
        .build()
        .unwrap()
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

#[test]
fn one_stream_moves_between_threads() {
    let rules = pii_rules();
    let text = input(3);
    let want = rules.replace_all(&text);
    let mut r = rules.replacer();
    let mut out = String::new();
    let chars: Vec<char> = text.chars().collect();
    for piece in chars.chunks(11) {
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
    assert_eq!(out, want);
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
