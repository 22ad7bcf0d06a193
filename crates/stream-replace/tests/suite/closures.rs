//! Replacement closures: what they receive, when and how often they run.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use stream_replace::{Captures, Pattern, Replacement, Rules};

/// One closure call: rule, span of the whole match, and every group as
/// `(start, end, text)`.
type Call = (usize, usize, usize, Vec<Option<(usize, usize, String)>>);

fn record(log: &Arc<Mutex<Vec<Call>>>) -> impl Fn(&Captures<'_>) -> String + Send + Sync + use<> {
    let log = Arc::clone(log);
    move |c: &Captures<'_>| {
        let m = c.get_match();
        let groups = (0..c.len())
            .map(|i| {
                c.get(i)
                    .map(|g| (g.start(), g.end(), g.as_str().to_string()))
            })
            .collect();
        let mut log = log.lock().unwrap();
        log.push((c.rule(), m.start(), m.end(), groups));
        format!("[{}]", log.len())
    }
}

fn logged_rules(log: &Arc<Mutex<Vec<Call>>>) -> Rules {
    Rules::builder()
        .regex_with(r"(?<user>[\w.]+)@(?<host>\w+)\.com", record(log))
        .regex_with(r"\d+", record(log))
        .literal_with("敏感词", record(log))
        .regex_with(r"\bend\b", record(log))
        .build()
        .unwrap()
}

const TEXT: &str = "mail ann.lee@example.com, 42 or 7; 敏感词 é12 end endless, bo@x.com end";

fn run_chunks(rules: &Rules, chunks: &[&[u8]]) -> Vec<u8> {
    let mut r = rules.replacer();
    let mut out = Vec::new();
    for c in chunks {
        out.extend(r.feed_bytes(c).unwrap());
    }
    out.extend(r.flush_bytes().unwrap());
    out
}

#[test]
fn closure_sees_absolute_offsets_in_every_split() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let rules = logged_rules(&log);
    let want = rules.replace_all(TEXT);
    let want_log = std::mem::take(&mut *log.lock().unwrap());

    // The whole-input calls, checked by hand against the text.
    let spans: Vec<(usize, &str)> = want_log
        .iter()
        .map(|(rule, s, e, _)| (*rule, &TEXT[*s..*e]))
        .collect();
    assert_eq!(
        spans,
        [
            (0, "ann.lee@example.com"),
            (1, "42"),
            (1, "7"),
            (2, "敏感词"),
            (1, "12"),
            (3, "end"),
            (0, "bo@x.com"),
            (3, "end"),
        ]
    );
    let user = want_log[0].3[1].as_ref().unwrap();
    assert_eq!((user.0, user.1, user.2.as_str()), (5, 12, "ann.lee"));
    assert_eq!(want, "mail [1], [2] or [3]; [4] é[5] [6] endless, [7] [8]");

    let bytes = TEXT.as_bytes();
    let mut splits: Vec<Vec<&[u8]>> = (0..=bytes.len())
        .map(|c| vec![&bytes[..c], &bytes[c..]])
        .collect();
    splits.push(bytes.chunks(1).collect());
    splits.push(bytes.chunks(5).collect());
    for split in splits {
        let out = run_chunks(&rules, &split);
        let got_log = std::mem::take(&mut *log.lock().unwrap());
        assert_eq!(String::from_utf8(out).unwrap(), want, "split {split:?}");
        assert_eq!(got_log, want_log, "split {split:?}");
    }
}

#[test]
fn closure_runs_once_when_decided() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    let rules = Rules::builder()
        .regex_with(r"\d+", move |c| {
            counter.fetch_add(1, Ordering::SeqCst);
            format!("<{}>", c.as_str())
        })
        .build()
        .unwrap();
    let mut r = rules.replacer();
    assert_eq!(r.feed("a 1").unwrap(), "a ");
    assert_eq!(r.feed("2").unwrap(), "");
    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "an undecided match ran its closure"
    );
    assert_eq!(r.feed("3 b 4").unwrap(), "<123> b ");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(r.flush().unwrap(), "<4>");
    assert_eq!(calls.load(Ordering::SeqCst), 2);

    // Abandoned by `reset`: the held match never runs its closure.
    assert_eq!(r.feed("99").unwrap(), "");
    r.reset();
    assert_eq!(r.flush().unwrap(), "");
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[test]
fn offsets_restart_with_each_stream() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let rules = Rules::builder()
        .regex_with(r"\d+", record(&log))
        .build()
        .unwrap();
    let mut r = rules.replacer();
    let mut out = r.feed("ab 12 ").unwrap();
    out += &r.flush().unwrap();
    assert_eq!(out, "ab [1] ");
    // After `flush`, a new stream: offsets count from 0 again.
    let mut out = r.feed("3").unwrap();
    out += &r.flush().unwrap();
    assert_eq!(out, "[2]");
    // After `reset`, too.
    r.feed("xxxx").unwrap();
    r.reset();
    let mut out = r.feed("x5").unwrap();
    out += &r.flush().unwrap();
    assert_eq!(out, "x[3]");
    let log = log.lock().unwrap();
    let spans: Vec<(usize, usize)> = log.iter().map(|c| (c.1, c.2)).collect();
    assert_eq!(spans, [(3, 5), (0, 1), (1, 2)]);
}

#[test]
fn captures_accessors() {
    let rules = Rules::builder()
        .regex_with(r"(?<k>\w+)=(?<v>\d+)?(x)?", |c| {
            assert_eq!(c.len(), 4);
            assert!(!c.is_empty());
            assert_eq!(&c[0], c.as_str());
            assert_eq!(c.get_match().as_str(), c.as_str());
            assert_eq!(
                c.name("k").map(|m| m.as_str()),
                c.get(1).map(|m| m.as_str())
            );
            assert_eq!(&c["k"], &c[1]);
            // Missing groups: `None` (indexing panics: see `api.rs`).
            assert!(c.get(9).is_none());
            assert!(c.name("nope").is_none());
            let m = c.get_match();
            assert_eq!(m.len(), m.end() - m.start());
            assert_eq!(m.as_bytes(), m.as_str().as_bytes());
            assert!(!m.is_empty());
            format!(
                "{}:{}:{}",
                &c["k"],
                c.name("v").map_or("", |m| m.as_str()),
                c.get(3).map_or("-", |m| m.as_str())
            )
        })
        .build()
        .unwrap();
    assert_eq!(rules.replace_all("a=1 b= cé=2x"), "a:1:- b::- cé:2:x");
    let mut r = rules.replacer();
    let mut out = String::new();
    for ch in "a=1 b= cé=2x".chars() {
        out += &r.feed(&ch.to_string()).unwrap();
    }
    out += &r.flush().unwrap();
    assert_eq!(out, "a:1:- b::- cé:2:x");
}

#[test]
fn closure_on_empty_matches() {
    let rules = Rules::builder()
        .rule(
            Pattern::regex(r"\b"),
            Replacement::with(|c| {
                assert!(c.get_match().is_empty());
                format!("{}", c.get_match().start())
            }),
        )
        .build()
        .unwrap();
    let want = "0ab2 3é5";
    assert_eq!(rules.replace_all("ab é"), want);
    let bytes = "ab é".as_bytes();
    for cut in 0..=bytes.len() {
        let out = run_chunks(&rules, &[&bytes[..cut], &bytes[cut..]]);
        assert_eq!(String::from_utf8(out).unwrap(), want, "cut at {cut}");
    }
}

#[test]
fn closure_sees_look_around_context_across_chunks() {
    // The closure re-runs the rule on the decided span; its `\b` must see
    // the text before and after the span even when it came in another
    // chunk.
    let rules = Rules::builder()
        .regex_with(r"\b(\w)(\w*)\b", |c| format!("{}{}", &c[2], &c[1]))
        .build()
        .unwrap();
    let text = "ab cd é";
    let want = "ba dc é";
    assert_eq!(rules.replace_all(text), want);
    let bytes = text.as_bytes();
    for cut in 0..=bytes.len() {
        let out = run_chunks(&rules, &[&bytes[..cut], &bytes[cut..]]);
        assert_eq!(String::from_utf8(out).unwrap(), want, "cut at {cut}");
    }
}
