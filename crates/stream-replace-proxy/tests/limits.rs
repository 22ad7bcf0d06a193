//! It must not fall over: every resource is bounded, every wait has a
//! timeout, and running out of descriptors does not end the server.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream as StdStream;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use common::*;
use serde_json::json;
use stream_replace_proxy::Config;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const CHAT: &str = "/v1/chat/completions";

fn chunk(i: u64, text: &str) -> serde_json::Value {
    json!({"choices": [{"index": i, "delta": {"content": text}, "finish_reason": null}]})
}

async fn sse_upstream(body: Vec<u8>) -> Upstream {
    upstream(Arc::new(move |_: &Seen| {
        pieces(head(200, "text/event-stream", ""), &body, 4096)
    }))
    .await
}

const REQ: &str = r#"{"model":"m","stream":true,"messages":[]}"#;

#[tokio::test]
async fn request_body_over_the_limit_is_refused() {
    let up = sse_upstream(sse(&[chunk(0, "x")])).await;
    let mut config = Config::new(&up.base).unwrap();
    config.max_request_body = 1000;
    let addr = proxy(config).await;
    let big = json!({"messages": [{"role": "user", "content": "a".repeat(2000)}]}).to_string();
    let got = send(&addr, "POST", CHAT, &big).await;
    assert_eq!(got.status, 413);
    assert!(up.seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn request_with_more_values_than_the_limit_is_refused() {
    let up = sse_upstream(sse(&[chunk(0, "x")])).await;
    let mut config = Config::new(&up.base).unwrap();
    config.max_values = 5;
    let addr = proxy(config).await;
    let mails: Vec<String> = (0..10).map(|i| format!("u{i}@example.com")).collect();
    let body = json!({"messages": [{"role": "user", "content": mails.join(" ")}]}).to_string();
    let got = send(&addr, "POST", CHAT, &body).await;
    assert_eq!(got.status, 413);
    assert!(up.seen.lock().unwrap().is_empty());
}

// A reply that opens a new choice per event, each holding text back: the
// cap is on the whole response, not per field.
#[tokio::test]
async fn held_bytes_are_bounded_across_fields() {
    let events: Vec<_> = (0..50).map(|i| chunk(i, &"k".repeat(300))).collect();
    let mut body = format!("data: {}\n\n", chunk(99, "start ")).into_bytes();
    body.extend(sse(&events));
    let up = sse_upstream(body).await;
    let addr = proxy(Config::new(&up.base).unwrap().max_held(1000)).await;
    let got = send(&addr, "POST", CHAT, REQ).await;
    assert_eq!(got.status, 200);
    let last = got.events().pop().unwrap();
    assert_eq!(last["error"]["code"], "held_limit", "{}", got.body);
    assert!(!got.body.contains("kkkk"));
    assert!(!got.body.contains("[DONE]"));
}

// 100,000 choice indexes in one event: refused at the field limit, not
// scanned one by one.
#[tokio::test]
async fn field_streams_are_bounded_per_response() {
    let choices: Vec<_> = (0..100_000u64)
        .map(|i| json!({"index": i, "delta": {"content": "x"}}))
        .collect();
    let body = format!("data: {}\n\n", json!({"choices": choices})).into_bytes();
    let up = sse_upstream(body).await;
    let mut config = Config::new(&up.base).unwrap();
    config.max_event = 16 << 20;
    config.max_fields = 256;
    let addr = proxy(config).await;
    let got = send(&addr, "POST", CHAT, REQ).await;
    assert_eq!(got.status, 502, "{}", got.body);
    assert!(got.body.contains("more fields"), "{}", got.body);
}

#[tokio::test]
async fn sse_event_size_is_bounded() {
    let mut body = format!("data: {}\n\n", chunk(0, "hello ")).into_bytes();
    body.extend(format!("data: {}\n\n", chunk(0, &"y ".repeat(5000))).into_bytes());
    let up = sse_upstream(body).await;
    let mut config = Config::new(&up.base).unwrap();
    config.max_event = 2000;
    let addr = proxy(config).await;
    let got = send(&addr, "POST", CHAT, REQ).await;
    assert_eq!(got.status, 200);
    let last = got.events().pop().unwrap();
    assert_eq!(last["error"]["code"], "event_too_large", "{}", got.body);
    assert!(!got.body.contains("y y y"));
}

#[tokio::test]
async fn whole_response_size_is_bounded() {
    let body =
        json!({"choices": [{"index": 0, "message": {"content": "z".repeat(5000)}}]}).to_string();
    let up = upstream(Arc::new(move |_: &Seen| {
        pieces(head(200, "application/json", ""), body.as_bytes(), 4096)
    }))
    .await;
    let mut config = Config::new(&up.base).unwrap();
    config.max_response_body = 1000;
    let addr = proxy(config).await;
    let got = send(&addr, "POST", CHAT, REQ).await;
    assert_eq!(got.status, 502);
    assert!(!got.body.contains("zzzz"));
}

#[tokio::test]
async fn upstream_first_byte_timeout() {
    let up = upstream(Arc::new(|_: &Seen| vec![Vec::new(), Vec::new()])).await;
    let mut config = Config::new(&up.base).unwrap();
    config.first_byte_timeout = Duration::from_millis(300);
    let addr = proxy(config).await;
    let got = send(&addr, "POST", CHAT, REQ).await;
    assert_eq!(got.status, 504, "{}", got.body);
}

#[tokio::test]
async fn upstream_idle_timeout_ends_the_stream_with_an_error_event() {
    let up = upstream(Arc::new(|_: &Seen| {
        let mut p = pieces(
            head(200, "text/event-stream", ""),
            format!("data: {}\n\n", chunk(0, "first ")).as_bytes(),
            4096,
        );
        p.extend([
            Vec::new(),
            Vec::new(),
            format!("data: {}\n\n", chunk(0, "late")).into_bytes(),
        ]);
        p
    }))
    .await;
    let mut config = Config::new(&up.base).unwrap();
    config.idle_timeout = Duration::from_millis(300);
    let addr = proxy(config).await;
    let got = send(&addr, "POST", CHAT, REQ).await;
    assert_eq!(got.status, 200);
    assert!(got.body.contains("first "));
    assert!(!got.body.contains("late"));
    let last = got.events().pop().unwrap();
    assert_eq!(last["error"]["code"], "upstream_error", "{}", got.body);
}

#[tokio::test]
async fn in_flight_requests_are_bounded() {
    let up = upstream(Arc::new(|_: &Seen| {
        let mut p = pieces(
            head(200, "text/event-stream", ""),
            format!("data: {}\n\n", chunk(0, "a ")).as_bytes(),
            4096,
        );
        p.extend([Vec::new(), Vec::new()]);
        p
    }))
    .await;
    let mut config = Config::new(&up.base).unwrap();
    config.max_in_flight = 1;
    let addr = proxy(config).await;
    let first_addr = addr.clone();
    let first = tokio::spawn(async move { send(&first_addr, "POST", CHAT, REQ).await });
    // The first stream is open (its first event came through) while the
    // second asks.
    while up.seen.lock().unwrap().is_empty() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let second = send(&addr, "POST", CHAT, REQ).await;
    assert_eq!(second.status, 503);
    assert_eq!(first.await.unwrap().status, 200);
    // Once it is done, the next one is served.
    let third = send(&addr, "POST", CHAT, REQ).await;
    assert_eq!(third.status, 200);
}

/// A pass-through response counts as in flight until its body ends, like
/// a scanned stream: a slow `/v1/models` holds its permit.
#[tokio::test]
async fn a_pass_through_response_holds_its_permit_until_it_ends() {
    let up = upstream(Arc::new(|_: &Seen| {
        let mut p = pieces(head(200, "application/json", ""), b"{\"data\":", 4096);
        p.extend([Vec::new(), Vec::new(), b"[]}".to_vec()]);
        p
    }))
    .await;
    let mut config = Config::new(&up.base).unwrap();
    config.max_in_flight = 1;
    let addr = proxy(config).await;
    let first_addr = addr.clone();
    let first = tokio::spawn(async move { send(&first_addr, "GET", "/v1/models", "").await });
    while up.seen.lock().unwrap().is_empty() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let second = send(&addr, "GET", "/v1/models", "").await;
    assert_eq!(second.status, 503, "{}", second.body);
    let first = first.await.unwrap();
    assert_eq!(first.status, 200);
    assert_eq!(first.body, "{\"data\":[]}");
    let third = send(&addr, "GET", "/v1/models", "").await;
    assert_eq!(third.status, 200);
}

// Connections that send half a header are closed at the header timeout.
#[tokio::test]
async fn slow_headers_are_cut_off() {
    let up = sse_upstream(sse(&[chunk(0, "x")])).await;
    let mut config = Config::new(&up.base).unwrap();
    config.header_read_timeout = Duration::from_millis(300);
    let addr = proxy(config).await;
    let mut conns = Vec::new();
    for _ in 0..50 {
        let mut c = TcpStream::connect(&addr).await.unwrap();
        c.write_all(b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\n")
            .await
            .unwrap();
        conns.push(c);
    }
    for mut c in conns {
        let mut buf = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(10), c.read_to_end(&mut buf)).await;
        assert!(
            read.is_ok(),
            "a half-header connection was still open after 10 s"
        );
    }
    assert_eq!(send(&addr, "GET", "/v1/files", "").await.status, 403);
}

// Open connections are bounded: past the cap, the proxy stops accepting
// until one closes.
#[tokio::test]
async fn open_connections_are_bounded() {
    let up = sse_upstream(sse(&[chunk(0, "x")])).await;
    let mut config = Config::new(&up.base).unwrap();
    config.max_connections = 2;
    let addr = proxy(config).await;
    let a = TcpStream::connect(&addr).await.unwrap();
    let b = TcpStream::connect(&addr).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let waiting = addr.clone();
    let third = tokio::spawn(async move { send(&waiting, "GET", "/v1/files", "").await });
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !third.is_finished(),
        "a third connection was served past the cap"
    );
    drop((a, b));
    let got = tokio::time::timeout(Duration::from_secs(10), third)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(got.status, 403);
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn get_status(addr: &str) -> Option<u16> {
    let mut s = StdStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    s.write_all(b"GET /v1/files HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        .ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    out.get(9..12)?.parse().ok()
}

// The proxy under `ulimit -n 64` with 80 idle connections: accept fails
// with EMFILE, the proxy backs off and keeps serving once they close.
#[test]
fn survives_running_out_of_file_descriptors() {
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let mut child = Command::new("bash")
        .arg("-c")
        .arg("ulimit -n 64; exec \"$0\"")
        .arg(env!("CARGO_BIN_EXE_stream-replace-proxy"))
        .env("UPSTREAM_BASE_URL", "http://127.0.0.1:9/v1")
        .env("LISTEN_ADDR", &addr)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut up = false;
    for _ in 0..100 {
        if get_status(&addr) == Some(403) {
            up = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(up, "the proxy did not start");
    let idle: Vec<StdStream> = (0..80)
        .map(|_| StdStream::connect(&addr).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(1000));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the proxy exited at fd exhaustion"
    );
    drop(idle);
    let mut served = None;
    for _ in 0..50 {
        served = get_status(&addr);
        if served.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let alive = child.try_wait().unwrap().is_none();
    child.kill().unwrap();
    let output = child.wait_with_output().unwrap();
    let log = String::from_utf8_lossy(&output.stderr);
    assert!(alive, "the proxy exited: {log}");
    assert_eq!(
        served,
        Some(403),
        "the proxy does not serve after the connections closed: {log}"
    );
    assert!(
        log.contains("accept failed"),
        "accept never failed, so the test tested nothing: {log}"
    );
}
