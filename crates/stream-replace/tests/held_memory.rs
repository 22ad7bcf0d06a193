//! The cap on held bytes bounds a stream's heap inside one huge feed.
//!
//! Its own test binary, because it counts every allocation with a global
//! allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use stream_replace::{Config, DfaKind, Rules, StreamErrorKind};

/// Counts the bytes live on the heap and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grow(n: usize) {
    let live = LIVE.fetch_add(n, Ordering::Relaxed) + n;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

// SAFETY: every call is forwarded to the system allocator unchanged; the
// counters only observe sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grow(layout.size());
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        grow(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            grow(new_size - layout.size());
        } else {
            LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// The counters are global: tests that read them run one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs `f`, returning its result, the heap it allocated at the peak beyond
/// what was live before, and how long it took.
fn measure<T>(f: impl FnOnce() -> T) -> (T, usize, std::time::Duration) {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let start = std::time::Instant::now();
    let out = f();
    let took = start.elapsed();
    (out, PEAK.load(Ordering::Relaxed) - before, took)
}

/// A 64 MB feed inside an unclosed `<think>` with the default 1 MiB cap:
/// the stream fails closed as soon as the cap is passed, and its heap
/// (beyond the input itself) stays under 8 MiB. Before the cap applied
/// inside a feed, the stream copied the whole chunk and more.
#[test]
fn a_64_mb_feed_stays_within_the_cap() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let rules = Rules::builder()
        .regex(r"<think>[\s\S]*?</think>", "")
        .regex(r"[\w.+-]+@[\w-]+\.\w+", "[EMAIL]")
        .config(Config::new().max_held(1 << 20))
        .build()
        .unwrap();
    let chunk = format!("hi <think>{}", "reasoning goes on ".repeat(64 << 20 >> 4));
    assert!(chunk.len() >= 64 << 20);
    for bytes in [false, true] {
        let mut r = rules.replacer();
        let (err, peak, _) = measure(|| {
            if bytes {
                r.feed_bytes(chunk.as_bytes()).unwrap_err()
            } else {
                r.feed(&chunk).unwrap_err()
            }
        });
        eprintln!("bytes = {bytes}: peak heap during the feed {peak} bytes; {err}");
        assert_eq!(err.kind(), StreamErrorKind::HeldLimit);
        assert!(err.held() <= (1 << 20) + (64 << 10) + 256, "{err}");
        assert!(
            peak < 8 << 20,
            "bytes = {bytes}: the feed peaked at {peak} bytes of heap"
        );
        drop(r);
    }
}

/// `replace_all` with 10,000 literal rules on 64 KB: it once ran a `meta`
/// regex over every rule, whose lazy DFA tried to allocate 27 GB and
/// aborted the process. It now runs the streams' engine: its heap stays
/// within a few MiB beyond the rules themselves.
#[test]
fn replace_all_with_10_000_literals_stays_small() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut b = Rules::builder();
    for i in 0..10_000 {
        b.literal(&format!("t{i:05}z"), "[T]");
    }
    let start = std::time::Instant::now();
    let rules = b.build().unwrap();
    let built = start.elapsed();
    let mut text = String::new();
    let mut i = 0;
    while text.len() < 64 << 10 {
        text += &format!("word t{:05}z and t{:05}y ", i % 10_000, (i * 7) % 10_000);
        i += 1;
    }
    let (out, peak, took) = measure(|| rules.replace_all(&text));
    eprintln!(
        "10,000 literals: build {built:?}; replace_all on {} bytes: {took:?}, peak heap {peak} bytes",
        text.len()
    );
    assert_eq!(out.matches("[T]").count(), i);
    assert!(!out.contains('z'));
    assert!(peak < 16 << 20, "replace_all peaked at {peak} bytes");
}

/// 200 rules of `\w+@\w+` on 64 KB: the `meta` regex over every rule took
/// 7 s and 780 MB. The streams' engine needs a few MiB.
#[test]
fn replace_all_with_200_email_rules_stays_small() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut b = Rules::builder();
    for i in 0..200 {
        b.regex(r"\w+@\w+", format!("[E{i}]"));
    }
    let rules = b.build().unwrap();
    let text = "mail ann@example or bob@host, then more words here. ".repeat(1300);
    let (out, peak, took) = measure(|| rules.replace_all(&text));
    eprintln!(
        "200 x \\w+@\\w+: replace_all on {} bytes: {took:?}, peak heap {peak} bytes",
        text.len()
    );
    assert_eq!(out.matches("[E0]").count(), 2600);
    assert!(peak < 16 << 20, "replace_all peaked at {peak} bytes");
}

/// The gateway's PII rules: a `<think>` block, email, phone, SSN and an
/// `sk-` key, with default (Unicode) classes.
fn gateway_rules(config: Config) -> Rules {
    Rules::builder()
        .regex(r"<think>[\s\S]*?</think>", "")
        .regex(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}", "[EMAIL]")
        .regex(
            r"(?:\+1[ .-]?)?(?:\(\d{3}\) ?|\b\d{3}[ .-])\d{3}[.-]\d{4}\b",
            "[PHONE]",
        )
        .regex(r"\b\d{3}-\d{2}-\d{4}\b", "[SSN]")
        .regex(r"\bsk-[A-Za-z0-9]{32}\b", "[API_KEY]")
        .config(config)
        .build()
        .unwrap()
}

/// About 2 KB of a reply: prose with PII, a closed `<think>` block, a
/// little non-ASCII text, and an unclosed `<think>` at the end when `open`.
fn reply(i: usize, open: bool) -> String {
    let mut s = String::new();
    let mut k = 0;
    while s.len() < 1900 {
        s += &format!(
            "Sure, reply {i} part {k}: write to ann.lee{k}@example{i}.org or call \
             (555) 123-{:04}; SSN 123-45-{:04}, key sk-{:032} — café ok. \
             <think>check {k}</think>Done. ",
            (i + k) % 10_000,
            (i * 7 + k) % 10_000,
            i * 1000 + k
        );
        k += 1;
    }
    if open {
        s += "<think>still thinking about it";
    }
    s
}

/// Token-sized pieces of `text`: 1 to 12 bytes, cut at character
/// boundaries, the same for every run.
fn tokens(text: &str, seed: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut at = 0;
    let mut x = (seed as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    while at < text.len() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let mut end = (at + 1 + (x % 12) as usize).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[at..end]);
        at = end;
    }
    out
}

/// 10,000 live streams, each fed about 2 KB of a reply in token-sized
/// pieces: what each costs on the heap, besides the bytes it holds (the
/// last reply of every tenth stream ends in an unclosed `<think>`), is at
/// most 2 KiB, whichever DFA the rules use. The automaton and the
/// pool's scratch spaces are shared: they are not part of a stream.
#[test]
fn ten_thousand_live_streams_cost_under_2_kib_each() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    const STREAMS: usize = 10_000;
    for (name, config) in [
        ("auto (dense)", Config::new()),
        ("lazy, pooled caches", Config::new().dfa(DfaKind::Lazy)),
    ] {
        let rules = gateway_rules(config);
        let replies: Vec<String> = (0..16).map(|i| reply(i, i % 10 == 9)).collect();
        let mut out = String::new();
        // Warm the shared parts (the pool's scratch) outside the count.
        let mut warm = rules.replacer();
        for t in tokens(&replies[0], 0) {
            warm.feed_into(t, &mut out).unwrap();
        }
        warm.flush_into(&mut out).unwrap();
        drop(warm);
        out = String::with_capacity(64);
        let before = LIVE.load(Ordering::Relaxed);
        let ((streams, held), peak, took) = measure(|| {
            let mut streams = Vec::with_capacity(STREAMS);
            let mut held = 0;
            let mut fed = 0;
            for i in 0..STREAMS {
                let mut r = rules.replacer();
                let text = &replies[i % replies.len()];
                for t in tokens(text, i) {
                    r.feed_into(t, &mut out).unwrap();
                    out.clear();
                }
                fed += text.len();
                held += r.held();
                streams.push(r);
            }
            assert!(fed >= STREAMS * 1900);
            (streams, held)
        });
        let live = LIVE.load(Ordering::Relaxed);
        let bytes = live - before;
        let per_stream = (bytes - held) / STREAMS;
        eprintln!(
            "{name}: {STREAMS} live streams after ~2 KB each: {bytes} bytes live \
             ({peak} at the peak), {held} bytes held in all, {per_stream} bytes per stream \
             besides held bytes \
             (size_of::<Replacer>() = {}); dense DFA: {:?} bytes; {took:?}",
            std::mem::size_of::<stream_replace::Replacer>(),
            rules.dense_dfa_size(),
        );
        assert!(held > 0, "the unclosed blocks are held");
        assert!(
            per_stream <= 2 << 10,
            "{name}: {per_stream} bytes per live stream besides held bytes"
        );
        drop(streams);
        assert!(LIVE.load(Ordering::Relaxed) < live);
    }
}

/// 100,000 literal rules build on the literal matcher with a heap
/// proportional to their text (the rules' own strings and replacements
/// included), and a fresh stream over them allocates nothing.
#[test]
fn one_hundred_thousand_literals_build_small_and_streams_start_empty() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let words: Vec<String> = (0..100_000)
        .map(|mut i: usize| {
            let mut w = String::from("z");
            for _ in 0..4 {
                w.push((b'a' + (i % 26) as u8) as char);
                i /= 26;
            }
            w.push('q');
            w
        })
        .collect();
    let text_bytes: usize = words.iter().map(String::len).sum();
    let before = LIVE.load(Ordering::Relaxed);
    let (rules, peak, _) = measure(|| {
        let mut b = Rules::builder();
        for w in &words {
            b.literal(w, "*");
        }
        b.build().unwrap()
    });
    let kept = LIVE.load(Ordering::Relaxed) - before;
    let ((), stream_heap, _) = measure(|| {
        let r = rules.replacer();
        std::hint::black_box(&r);
    });
    eprintln!(
        "100,000 literals ({text_bytes} bytes of text): peak heap while building {peak} bytes, \
         {kept} bytes kept by the rules; a fresh replacer allocates {stream_heap} bytes"
    );
    assert!(peak < 200 * text_bytes, "{peak}");
    assert!(kept < 100 * text_bytes, "{kept}");
    assert_eq!(stream_heap, 0);
    assert_eq!(rules.replace_all("a zbaaaq b"), "a * b");

    // A stream that matched some of them keeps what it needs for those,
    // not a count per rule: under 2 KiB once its output is taken.
    let mut r = rules.replacer();
    let text: String = words[..40].iter().map(|w| format!("{w} and ")).collect();
    let mut out = Vec::new();
    let before = LIVE.load(Ordering::Relaxed);
    for chunk in text.as_bytes().chunks(3) {
        r.feed_bytes_into(chunk, &mut out).unwrap();
        out.clear();
    }
    let grown = LIVE.load(Ordering::Relaxed) - before - out.capacity();
    assert_eq!(r.counters().matches("7"), 1);
    eprintln!("after 40 matches, the stream's heap grew by {grown} bytes");
    assert!(grown < 2048, "{grown}");
}
