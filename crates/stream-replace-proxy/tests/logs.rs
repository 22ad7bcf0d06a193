//! The logs at every level: one access line per request with counts and
//! rule ids, and never a value, a placeholder's original or a body.

mod common;

use std::io::Write;
use std::sync::{Arc, Mutex};

use common::*;
use serde_json::json;
use stream_replace_proxy::Config;

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

// The caller's own values, sent in the request.
const ASKED: &[&str] = &["zyxwvu@example.org", "212-555-0147", "4111 1111 1111 1111"];

#[tokio::test]
async fn the_log_holds_no_value_from_the_reply_or_the_request() {
    let captured = Captured::default();
    let writer = captured.clone();
    // Without timestamps: their digits are not the proxy's to vouch for,
    // and a microsecond field such as `.904006` holds a run of a planted
    // IBAN's digits (`0400`) by chance.
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .without_time()
        .with_writer(move || writer.clone())
        .init();

    // The reply restores the caller's placeholders and plants values of its
    // own, split across events.
    let up = upstream(Arc::new(|_: &Seen| {
        let mut text = String::from("Hi [EMAIL_1], call [PHONE_1]. Also: ");
        text.push_str(&PLANTED.join(" and "));
        let events: Vec<_> = text
            .as_bytes()
            .chunks(5)
            .map(|c| json!({"choices": [{"index": 0, "delta": {"content": String::from_utf8_lossy(c)}}]}))
            .collect();
        pieces(head(200, "text/event-stream", ""), &sse(&events), 7)
    }))
    .await;
    let addr = proxy(Config::new(&up.base).unwrap()).await;
    let body = json!({
        "model": "m",
        "stream": true,
        "messages": [{"role": "user", "content": format!("I am {}, phone {}, card {}", ASKED[0], ASKED[1], ASKED[2])}],
    })
    .to_string();
    let got = send(&addr, "POST", "/v1/chat/completions", &body).await;
    assert_eq!(got.status, 200);
    // The reply itself restored the caller's values and redacted the rest.
    assert_no_planted(&got.body, "reply");
    // A refused path that carries a value, and an unreachable upstream.
    let refused = send(&addr, "POST", &format!("/v1/{}", ASKED[0]), &body).await;
    assert_eq!(refused.status, 403);
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead_base = format!("http://{}/v1", dead.local_addr().unwrap());
    drop(dead);
    let addr2 = proxy(Config::new(&dead_base).unwrap()).await;
    assert_eq!(
        send(&addr2, "POST", "/v1/chat/completions", &body)
            .await
            .status,
        502
    );
    // The stream's line is written when its body is dropped.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;

    let log = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    // The digits the proxy itself writes (each request's duration, the
    // addresses and ports of this test's own listeners) carry no value, yet one of
    // them can hold a run of a planted number's digits by chance: they are
    // blanked before the check, and nothing else is.
    let mut checked = blank_field(&log, "duration_ms=");
    for own in [&addr, &addr2, &dead_base, &up.base] {
        let host = own.trim_start_matches("http://");
        let host = host.split('/').next().unwrap_or(host);
        checked = checked.replace(host, "ADDR");
        // The HTTP client's trace names the port on its own, as
        // `port=Some(Port(44101))`.
        if let Some((_, port)) = host.rsplit_once(':') {
            checked = checked.replace(&format!("Port({port})"), "Port(PORT)");
        }
    }
    assert_no_planted(&checked, "log");
    for value in ASKED {
        for w in value.as_bytes().windows(6) {
            let run = std::str::from_utf8(w).unwrap();
            assert!(
                !checked.contains(run),
                "{run:?} of {value} is in the log: {log}"
            );
        }
    }
    assert!(
        !log.contains("messages"),
        "a request body is in the log: {log}"
    );
    // One access line per request, with its counts and rule ids.
    let access: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("stream_replace_proxy::access"))
        .collect();
    assert_eq!(access.len(), 3, "{log}");
    let stream = access
        .iter()
        .find(|l| l.contains("status=200"))
        .expect(&log);
    assert!(
        stream.contains("endpoint=\"/v1/chat/completions\"")
            || stream.contains("endpoint=/v1/chat/completions"),
        "{stream}"
    );
    assert!(stream.contains("masked=3"), "{stream}");
    assert!(stream.contains("restored=2"), "{stream}");
    assert!(stream.contains("redactions=4"), "{stream}");
    for id in ["email", "us_ssn", "card", "iban"] {
        assert!(stream.contains(id), "rule id {id} missing: {stream}");
    }
    assert!(
        access.iter().any(
            |l| l.contains("status=403") && l.contains("endpoint=\"refused\"")
                || l.contains("status=403") && l.contains("endpoint=refused")
        ),
        "{log}"
    );
    assert!(access.iter().any(|l| l.contains("status=502")), "{log}");
    assert!(
        log.lines()
            .any(|l| l.contains("WARN") && l.contains("unreachable")),
        "{log}"
    );
}

/// `log` with the value of every `name` field (up to the next space) blanked.
fn blank_field(log: &str, name: &str) -> String {
    let mut out = String::with_capacity(log.len());
    let mut rest = log;
    while let Some(at) = rest.find(name) {
        let start = at + name.len();
        out.push_str(&rest[..start]);
        out.push('_');
        let end = rest[start..]
            .find(|c: char| c.is_whitespace())
            .map_or(rest.len(), |e| start + e);
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}
