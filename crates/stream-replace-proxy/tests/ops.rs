//! The program as an operator runs it: the command line, health checks,
//! and a drain on SIGTERM that lets streams finish.

mod common;

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use serde_json::json;
use stream_replace_proxy::{Config, Metrics, serve_metrics};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const BIN: &str = env!("CARGO_BIN_EXE_stream-replace-proxy");
const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/proxy.toml");

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BIN)
        .args(args)
        .env_remove("UPSTREAM_BASE_URL")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn version_and_help_print_and_exit() {
    let (code, out, _) = run(&["--version"]);
    assert_eq!(code, 0);
    assert_eq!(
        out.trim(),
        format!("stream-replace-proxy {}", env!("CARGO_PKG_VERSION"))
    );
    let (code, out, _) = run(&["--help"]);
    assert_eq!(code, 0);
    for flag in [
        "--config",
        "--listen",
        "--upstream",
        "--check-config",
        "--version",
    ] {
        assert!(out.contains(flag), "{flag} missing from --help: {out}");
    }
}

#[test]
fn check_config_prints_a_summary_and_exits() {
    let (code, out, err) = run(&[
        "--config",
        EXAMPLE,
        "--check-config",
        "--upstream",
        "http://127.0.0.1:9/v1",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("upstream http://127.0.0.1:9/v1"), "{out}");
    assert!(out.contains("listen 127.0.0.1:14000"), "{out}");
    assert!(out.contains("compiled"), "{out}");
    assert!(
        out.contains("rules: 18 (packs: pii (blocks off); extra: none)"),
        "{out}"
    );
    assert!(out.contains("request masking: on; logprobs: drop"), "{out}");
}

#[test]
fn a_bad_config_fails_at_start_with_file_key_and_reason() {
    let dir = std::env::temp_dir().join(format!("srp-ops-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.toml");
    std::fs::write(
        &file,
        "upstream = \"http://127.0.0.1:9/v1\"\n[limits]\nmax_held_bytes = \"big\"\n",
    )
    .unwrap();
    let path = file.to_str().unwrap();
    // Serving, not only checking, refuses it.
    let (code, out, err) = run(&["--config", path]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains(&format!(
            "{path}: limits.max_held_bytes: expected a whole number"
        )),
        "{err}"
    );
    let (code, _, err) = run(&["--config", path, "--check-config"]);
    assert_eq!(code, 2);
    assert!(err.contains("limits.max_held_bytes"), "{err}");

    // A rule that does not compile, the same way.
    std::fs::write(
        &file,
        "upstream = \"http://127.0.0.1:9/v1\"\n[[rules.extra]]\nid = \"t\"\nregex = \"(unclosed\"\n",
    )
    .unwrap();
    for args in [
        &["--config", path][..],
        &["--config", path, "--check-config"],
    ] {
        let (code, out, err) = run(args);
        assert_eq!(code, 2, "{out}{err}");
        assert!(
            err.contains(&format!("{path}: rules.extra[0].regex: does not compile")),
            "{err}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn healthz_and_readyz() {
    let up = upstream(Arc::new(|_: &Seen| {
        vec![head(200, "application/json", ""), b"{}".to_vec()]
    }))
    .await;
    let addr = proxy(Config::new(&up.base).unwrap()).await;
    let got = send(&addr, "GET", "/healthz", "").await;
    assert_eq!(got.status, 200);
    assert_eq!(got.json()["status"], "up");
    let got = send(&addr, "GET", "/readyz", "").await;
    assert_eq!(got.status, 200, "{}", got.body);
    assert_eq!(got.json()["status"], "ready");
    // Answered by the proxy itself: nothing reached the upstream.
    assert!(up.seen.lock().unwrap().is_empty());
    // Only those exact paths: a neighbour is still refused.
    assert_eq!(send(&addr, "GET", "/healthz/x", "").await.status, 403);

    // An upstream nobody listens on: up, but not ready.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}/v1", closed.local_addr().unwrap());
    drop(closed);
    let addr = proxy(Config::new(&dead).unwrap()).await;
    assert_eq!(send(&addr, "GET", "/healthz", "").await.status, 200);
    let got = send(&addr, "GET", "/readyz", "").await;
    assert_eq!(got.status, 503, "{}", got.body);
    assert_eq!(got.json()["status"], "not ready");
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

struct Proxy {
    child: Child,
    addr: String,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn start(upstream: &str, drain_ms: u64) -> Proxy {
    let addr = format!("127.0.0.1:{}", free_port());
    let child = Command::new(BIN)
        .args([
            "--config",
            EXAMPLE,
            "--listen",
            &addr,
            "--upstream",
            upstream,
        ])
        .env("DRAIN_TIMEOUT_MS", drain_ms.to_string())
        .env("METRICS_LISTEN_ADDR", format!("127.0.0.1:{}", free_port()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while TcpStream::connect(&addr).await.is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the proxy did not start"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Proxy { child, addr }
}

fn sigterm(proxy: &Proxy) {
    let status = Command::new("kill")
        .args(["-TERM", &proxy.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

// The upstream streams three chunks a second apart.
async fn slow_upstream() -> Upstream {
    upstream(Arc::new(|_: &Seen| {
        let chunk = |t: &str| json!({"choices": [{"index": 0, "delta": {"content": t}, "finish_reason": null}]});
        let body = sse(&[chunk("one "), chunk("two "), chunk("three")]);
        let text = String::from_utf8(body).unwrap();
        let mut out = vec![head(200, "text/event-stream", "")];
        for event in text.split_inclusive("\n\n") {
            out.push(event.as_bytes().to_vec());
            out.push(Vec::new()); // a second's pause
        }
        out
    }))
    .await
}

// Sends a streamed chat request; returns the connection once the first
// bytes of the reply arrived, with them.
async fn open_stream(addr: &str) -> (TcpStream, Vec<u8>) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let body = r#"{"model":"m","stream":true,"messages":[]}"#;
    let req = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(req.as_bytes()).await.unwrap();
    let mut buf = vec![0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(20), stream.read(&mut buf))
        .await
        .unwrap()
        .unwrap();
    buf.truncate(n);
    (stream, buf)
}

async fn read_rest(stream: &mut TcpStream, got: &mut Vec<u8>) {
    tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(got))
        .await
        .expect("the stream ended within 20 s")
        .unwrap();
}

fn wait_exit(proxy: &mut Proxy, within: Duration) -> i32 {
    let started = Instant::now();
    loop {
        if let Some(status) = proxy.child.try_wait().unwrap() {
            return status.code().unwrap_or(-1);
        }
        assert!(
            started.elapsed() < within,
            "the proxy did not exit within {within:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test]
async fn sigterm_lets_a_stream_finish_within_the_deadline() {
    let up = slow_upstream().await;
    let mut proxy = start(&up.base, 20_000).await;
    let (mut stream, mut got) = open_stream(&proxy.addr).await;
    sigterm(&proxy);
    // New connections are no longer accepted once it drains.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let refused = TcpStream::connect(&proxy.addr).await.is_err();
    read_rest(&mut stream, &mut got).await;
    let text = String::from_utf8_lossy(&got);
    for part in ["one ", "two ", "three", "data: [DONE]"] {
        assert!(text.contains(part), "{part:?} missing: {text}");
    }
    assert!(!text.contains("shutting_down"), "{text}");
    assert_eq!(wait_exit(&mut proxy, Duration::from_secs(10)), 0);
    assert!(refused, "a new connection was accepted after SIGTERM");
}

#[tokio::test]
async fn sigterm_ends_a_stream_past_the_deadline_with_an_error_event() {
    let up = slow_upstream().await;
    let mut proxy = start(&up.base, 500).await;
    let (mut stream, mut got) = open_stream(&proxy.addr).await;
    let signalled = Instant::now();
    sigterm(&proxy);
    read_rest(&mut stream, &mut got).await;
    let text = String::from_utf8_lossy(&got);
    assert!(text.contains("\"code\":\"shutting_down\""), "{text}");
    assert!(!text.contains("[DONE]"), "{text}");
    assert!(!text.contains("three"), "{text}");
    assert_eq!(wait_exit(&mut proxy, Duration::from_secs(10)), 0);
    assert!(signalled.elapsed() < Duration::from_secs(10));
}

// A counter's value in the text format, 0 when it is not there yet.
fn sample(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or(0.0)
}

#[tokio::test]
async fn a_redaction_and_a_block_each_move_their_counters() {
    let chunk = |i: u64, t: &str| json!({"choices": [{"index": i, "delta": {"content": t}, "finish_reason": null}]});
    let redacted = sse(&[chunk(0, "write to qwzx"), chunk(0, "jkvb@example.com now")]);
    // Text held past the cap: the response ends closed.
    let mut held = format!("data: {}\n\n", chunk(9, "start ")).into_bytes();
    held.extend(sse(&(0..20)
        .map(|i| chunk(i, &"k".repeat(300)))
        .collect::<Vec<_>>()));
    let up = upstream(Arc::new(move |seen: &Seen| {
        let body = if seen.body.contains("held") {
            &held
        } else {
            &redacted
        };
        pieces(head(200, "text/event-stream", ""), body, 9)
    }))
    .await;
    let metrics = Metrics::new();
    let mut config = Config::new(&up.base).unwrap().max_held(1000);
    config.metrics = Some(metrics.clone());
    let addr = proxy(config).await;
    let scrape = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let scrape_addr = scrape.local_addr().unwrap().to_string();
    tokio::spawn(serve_metrics(scrape, metrics.clone()));

    let before = send(&scrape_addr, "GET", "/metrics", "").await;
    assert_eq!(before.status, 200);
    let email = "stream_replace_proxy_redactions_total{rule=\"email\"}";
    let block = "stream_replace_proxy_blocked_total{code=\"held_limit\"}";
    let ok =
        "stream_replace_proxy_requests_total{endpoint=\"/v1/chat/completions\",status=\"200\"}";
    assert_eq!(sample(&before.body, email), 0.0);
    assert_eq!(sample(&before.body, block), 0.0);

    let got = send(
        &addr,
        "POST",
        "/v1/chat/completions",
        r#"{"model":"m","stream":true}"#,
    )
    .await;
    assert!(got.body.contains("[EMAIL_REDACTED]"), "{}", got.body);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let after = send(&scrape_addr, "GET", "/metrics", "").await.body;
    assert_eq!(sample(&after, email), 1.0, "{after}");
    assert_eq!(sample(&after, block), 0.0, "{after}");
    assert_eq!(sample(&after, ok), 1.0, "{after}");

    let got = send(
        &addr,
        "POST",
        "/v1/chat/completions",
        r#"{"model":"m","stream":true,"note":"held"}"#,
    )
    .await;
    assert!(got.body.contains("held_limit"), "{}", got.body);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let after = send(&scrape_addr, "GET", "/metrics", "").await.body;
    assert_eq!(sample(&after, email), 1.0, "{after}");
    assert_eq!(sample(&after, block), 1.0, "{after}");
    assert_eq!(sample(&after, ok), 2.0, "{after}");
    assert_eq!(
        sample(&after, "stream_replace_proxy_open_streams"),
        0.0,
        "{after}"
    );
    assert_eq!(
        sample(&after, "stream_replace_proxy_held_bytes"),
        0.0,
        "{after}"
    );
    assert!(
        sample(&after, "stream_replace_proxy_chunk_latency_seconds_count") >= 2.0,
        "{after}"
    );
    // The values never reach the metrics either.
    assert!(
        !after.contains("qwzx") && !after.contains("kkkk"),
        "{after}"
    );

    // An unreachable upstream is counted.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}/v1", closed.local_addr().unwrap());
    drop(closed);
    let mut config = Config::new(&dead).unwrap();
    config.metrics = Some(metrics.clone());
    let addr = proxy(config).await;
    assert_eq!(
        send(&addr, "POST", "/v1/chat/completions", "{}")
            .await
            .status,
        502
    );
    let after = send(&scrape_addr, "GET", "/metrics", "").await.body;
    assert_eq!(
        sample(
            &after,
            "stream_replace_proxy_upstream_errors_total{kind=\"unreachable\"}"
        ),
        1.0,
        "{after}"
    );
}

// A pass-through response that outlasts the drain deadline: the upstream
// sends a piece a second for ten seconds.
#[tokio::test]
async fn sigterm_cuts_a_pass_through_response_at_the_deadline() {
    let up = upstream(Arc::new(|_: &Seen| {
        let mut out = vec![head(200, "application/json", ""), b"{\"data\":[".to_vec()];
        for i in 0..10 {
            out.push(Vec::new());
            out.push(format!("{{\"id\":\"m{i}\"}},").into_bytes());
        }
        out.push(b"{\"id\":\"last\"}]}".to_vec());
        out
    }))
    .await;
    let mut proxy = start(&up.base, 500).await;
    let mut stream = TcpStream::connect(&proxy.addr).await.unwrap();
    let req = format!("GET /v1/models HTTP/1.1\r\nhost: {}\r\n\r\n", proxy.addr);
    stream.write_all(req.as_bytes()).await.unwrap();
    let mut got = vec![0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(20), stream.read(&mut got))
        .await
        .unwrap()
        .unwrap();
    got.truncate(n);
    let signalled = Instant::now();
    sigterm(&proxy);
    // The connection ends, cleanly or reset, well before the upstream does.
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout(Duration::from_secs(20), stream.read(&mut buf))
            .await
            .expect("the response ended within 20 s")
        {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    let ended = signalled.elapsed();
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(!text.contains("last"), "{text}");
    // Cut, not ended: no last chunk of a chunked body.
    assert!(!text.ends_with("0\r\n\r\n"), "{text}");
    // The drain deadline is 0.5 s; the process exits right after, not
    // after the 5 s it gives the connections left.
    assert!(ended < Duration::from_secs(4), "{ended:?}");
    assert_eq!(wait_exit(&mut proxy, Duration::from_secs(4)), 0);
    assert!(signalled.elapsed() < Duration::from_secs(4));
}
