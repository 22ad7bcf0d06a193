//! Load figures for the proxy, on loopback, in separate processes (this
//! driver, which is the load generator, and fake upstreams and proxies,
//! all started from this same binary):
//!
//! * added latency per chunk and to the first byte (p50/p99), through the
//!   proxy against the upstream direct (plain HTTP/1.1);
//! * the proxy's RSS with 1,000 and with `STREAMS` (default 10,000)
//!   concurrent open streams, each mid-reply with text held back, to an
//!   HTTPS upstream that speaks HTTP/2 (a CA made here with `rcgen`,
//!   trusted through `upstream_ca_file`), so the upstream streams share a
//!   few connections and the proxy needs about one descriptor per stream;
//! * the proxy under `ulimit -n 256` with 400 idle connections (fd
//!   exhaustion), and under 1,000 connections that send half a header.
//!
//! ```sh
//! cargo run --release -p stream-replace-proxy --example load
//! ```
//!
//! Every loop is bounded; nothing leaves 127.0.0.1.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream as StdStream;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Frame, Incoming};
use hyper::{Request, Response};
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use serde_json::{Value, json};
use stream_replace_proxy::{Config, serve};
use tokio::net::TcpListener;

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

// ---- the fake upstream -------------------------------------------------

// The request body says what to send: `events` chat chunks `gap_ms` apart,
// each stamped with the time it was written, then either [DONE] or, with
// `hold`, an event whose content is `tail` (if any) and nothing more until
// the client goes away (at most 600 s).
async fn reply(req: Request<Incoming>) -> Result<Response<ChannelBody>, hyper::Error> {
    let body = req.into_body().collect().await?.to_bytes();
    let spec: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let events = spec["events"].as_u64().unwrap_or(1);
    let gap = Duration::from_millis(spec["gap_ms"].as_u64().unwrap_or(0));
    let hold = spec["hold"].as_bool().unwrap_or(false);
    let tail = spec["tail"].as_str().map(str::to_owned);
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(4);
    tokio::spawn(async move {
        let chunk = |content: String| {
            let event = json!({"id": "c", "object": "chat.completion.chunk", "t": now_ns(),
                "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": null}]});
            Bytes::from(format!("data: {event}\n\n"))
        };
        for i in 0..events {
            if i > 0 && !gap.is_zero() {
                tokio::time::sleep(gap).await;
            }
            if tx.send(chunk(format!("word{i} "))).await.is_err() {
                return;
            }
        }
        if hold {
            if let Some(tail) = tail {
                if tx.send(chunk(tail)).await.is_err() {
                    return;
                }
            }
            tokio::select! {
                _ = tx.closed() => {}
                _ = tokio::time::sleep(Duration::from_secs(600)) => {}
            }
            return;
        }
        let _ = tx.send(Bytes::from_static(b"data: [DONE]\n\n")).await;
    });
    let mut response = Response::new(ChannelBody(rx));
    response
        .headers_mut()
        .insert("content-type", "text/event-stream".parse().unwrap());
    Ok(response)
}

// Plain HTTP/1.1 on `addr`; with `tls_dir`, HTTPS instead, HTTP/2 by ALPN
// (HTTP/1.1 offered too), with a certificate for 127.0.0.1 signed by a CA
// made here and written to `tls_dir/ca.pem`.
async fn upstream_main(addr: String, tls_dir: Option<PathBuf>) {
    let acceptor = tls_dir.map(|dir| tokio_rustls::TlsAcceptor::from(Arc::new(tls_server(&dir))));
    let listener = TcpListener::bind(&addr).await.unwrap();
    println!("ready");
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let _ = stream.set_nodelay(true);
        let acceptor = acceptor.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(reply);
            let Some(acceptor) = acceptor else {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
                return;
            };
            let Ok(tls) = acceptor.accept(stream).await else {
                return;
            };
            if tls.get_ref().1.alpn_protocol() == Some(b"h2") {
                // hyper's default is 200 streams per connection; the proxy
                // is to put all of its streams on one.
                let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                    .max_concurrent_streams(100_000)
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            } else {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            }
        });
    }
}

fn tls_server(dir: &Path) -> rustls::ServerConfig {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned()]).unwrap();
    let cert = params.signed_by(&key, &ca, &ca_key).unwrap();
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut server = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![CertificateDer::from(cert.der().to_vec())],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        )
        .unwrap();
    server.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    server
}

// A response body fed from a channel.
struct ChannelBody(tokio::sync::mpsc::Receiver<Bytes>);

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        self.0.poll_recv(cx).map(|b| b.map(|b| Ok(Frame::data(b))))
    }
}

// ---- the proxy -----------------------------------------------------------

async fn proxy_main(addr: String, upstream: String, ca_file: Option<PathBuf>) {
    let mut config = Config::new(&upstream).unwrap();
    config.upstream_ca_file = ca_file;
    config.max_connections = 20_000;
    config.max_in_flight = 20_000;
    // Opening 10,000 streams takes longer than the default 60 s of silence
    // allowed inside a reply.
    config.idle_timeout = Duration::from_secs(600);
    // Warnings only (accept errors, upstream failures): no access lines.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(tracing::Level::WARN)
        .init();
    let listener = TcpListener::bind(&addr).await.unwrap();
    println!("ready");
    serve(listener, config).await.unwrap();
}

// ---- the driver ----------------------------------------------------------

fn spawn(role: &str, args: &[&str], ulimit: Option<u32>) -> Child {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = match ulimit {
        Some(n) => {
            let mut c = Command::new("bash");
            c.arg("-c")
                .arg(format!("ulimit -n {n}; exec \"$0\" \"$@\""))
                .arg(&exe);
            c
        }
        None => Command::new(&exe),
    };
    let mut child = cmd
        .arg(role)
        .args(args)
        .stdout(Stdio::piped())
        // Read back only where the accept errors are counted; elsewhere
        // a warning shows beside the figures.
        .stderr(if ulimit.is_some() {
            Stdio::piped()
        } else {
            Stdio::inherit()
        })
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "ready", "{role} did not start");
    child
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap()
}

fn free_addr() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().to_string()
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

type HttpClient = Client<hyper_util::client::legacy::connect::HttpConnector, Full<Bytes>>;

fn client() -> HttpClient {
    Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(0)
        .build_http()
}

fn chat(addr: &str, spec: &Value) -> Request<Full<Bytes>> {
    Request::post(format!("http://{addr}/v1/chat/completions"))
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(spec.to_string())))
        .unwrap()
}

// One streamed request: (time to the first event, per-event latency from
// the upstream's stamp to arrival, in µs).
async fn one_stream(client: &HttpClient, addr: &str, spec: &Value) -> (f64, Vec<f64>) {
    let start = Instant::now();
    let response = client.request(chat(addr, spec)).await.unwrap();
    assert_eq!(response.status(), 200);
    let mut body = response.into_body();
    let mut buf = Vec::new();
    let mut first = None;
    let mut lat = Vec::new();
    while let Some(frame) = body.frame().await {
        let arrived = now_ns();
        let Ok(data) = frame.unwrap().into_data() else {
            continue;
        };
        first.get_or_insert_with(|| start.elapsed().as_secs_f64() * 1e6);
        buf.extend_from_slice(&data);
        while let Some(i) = buf.windows(2).position(|w| w == b"\n\n") {
            let event: Vec<u8> = buf.drain(..i + 2).collect();
            let text = String::from_utf8_lossy(&event);
            let Some(d) = text.strip_prefix("data: ") else {
                continue;
            };
            if let Ok(v) = serde_json::from_str::<Value>(d.trim()) {
                if let Some(t) = v["t"].as_u64() {
                    lat.push((arrived.saturating_sub(t)) as f64 / 1e3);
                }
            }
        }
    }
    (first.unwrap_or(f64::NAN), lat)
}

async fn latency(upstream: &str, proxy: &str) {
    let client = client();
    // Warm up both paths.
    for addr in [upstream, proxy] {
        one_stream(&client, addr, &json!({"events": 5})).await;
    }
    // Direct and proxied requests alternate, so that both see the same
    // background load.
    let paths = [("direct", upstream), ("proxy", proxy)];
    let mut chunks = [Vec::new(), Vec::new()];
    let mut ttfb = [Vec::new(), Vec::new()];
    for _ in 0..20 {
        for (k, (_, addr)) in paths.iter().enumerate() {
            let (_, lat) = one_stream(&client, addr, &json!({"events": 100, "gap_ms": 5})).await;
            chunks[k].extend(lat);
        }
    }
    for _ in 0..200 {
        for (k, (_, addr)) in paths.iter().enumerate() {
            ttfb[k].push(one_stream(&client, addr, &json!({"events": 1})).await.0);
        }
    }
    let mut p = [[0.0; 4]; 2];
    for k in 0..2 {
        chunks[k].sort_by(f64::total_cmp);
        ttfb[k].sort_by(f64::total_cmp);
        p[k] = [
            percentile(&chunks[k], 0.5),
            percentile(&chunks[k], 0.99),
            percentile(&ttfb[k], 0.5),
            percentile(&ttfb[k], 0.99),
        ];
        println!(
            "{:>6}: per chunk p50 {:.1} µs p99 {:.1} µs ({} chunks); first byte p50 {:.1} µs p99 {:.1} µs ({} requests)",
            paths[k].0,
            p[k][0],
            p[k][1],
            chunks[k].len(),
            p[k][2],
            p[k][3],
            ttfb[k].len()
        );
    }
    println!(
        " added: per chunk p50 {:.1} µs p99 {:.1} µs; first byte p50 {:.1} µs p99 {:.1} µs",
        p[1][0] - p[0][0],
        p[1][1] - p[0][1],
        p[1][2] - p[0][2],
        p[1][3] - p[0][3]
    );
}

// The proxy holds this back in every open stream: it could still become an
// address (`...@example.com`), so it is neither released nor redacted yet.
const HELD: &str = "ann.marie.lee.accounts.payable.west.wing@exam";

fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0)
}

// `n` streams open at once through the proxy, each mid-reply with text held
// back: its RSS and descriptors.
async fn concurrent(proxy: &str, pid: u32, n: usize) {
    let before = rss_kib(pid);
    let client = client();
    let mut bodies = Vec::with_capacity(n);
    let started = Instant::now();
    let spec = json!({"events": 1, "hold": true, "tail": format!("mail {HELD}")});
    for batch in (0..n).collect::<Vec<_>>().chunks(250) {
        let mut tasks = Vec::new();
        for _ in batch {
            let client = client.clone();
            let req = chat(proxy, &spec);
            tasks.push(tokio::spawn(async move {
                let response = client.request(req).await.unwrap();
                assert_eq!(response.status(), 200);
                let mut body = response.into_body();
                // Once the text before the held part is through, the proxy
                // has scanned the event that carries it.
                let mut seen = Vec::new();
                while !String::from_utf8_lossy(&seen).contains("mail ") {
                    let frame = tokio::time::timeout(Duration::from_secs(60), body.frame())
                        .await
                        .expect("no event in 60 s")
                        .expect("the stream ended")
                        .unwrap();
                    if let Ok(data) = frame.into_data() {
                        seen.extend_from_slice(&data);
                    }
                }
                let text = String::from_utf8_lossy(&seen);
                assert!(!text.contains("ann.marie"), "not held back: {text}");
                body
            }));
        }
        for t in tasks {
            bodies.push(t.await.unwrap());
        }
    }
    let opened = started.elapsed();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let during = rss_kib(pid);
    println!(
        "{n} concurrent streams: proxy RSS {before} KiB idle, {during} KiB ({:.1} MiB) with them open ({:.1} KiB per stream; {} fds open in the proxy; opened in {:.1} s)",
        during as f64 / 1024.0,
        (during.saturating_sub(before)) as f64 / n as f64,
        open_fds(pid),
        opened.as_secs_f64()
    );
    drop(bodies);
    tokio::time::sleep(Duration::from_secs(2)).await;
}

fn get_status(addr: &str) -> Option<u16> {
    let mut s = StdStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(15))).ok()?;
    s.write_all(b"GET /v1/files HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        .ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    out.get(9..12)?.parse().ok()
}

fn fd_exhaustion(upstream: &str) {
    let addr = free_addr();
    let mut child = spawn("proxy", &[&addr, upstream], Some(256));
    let idle: Vec<StdStream> = (0..400)
        .filter_map(|_| StdStream::connect(&addr).ok())
        .collect();
    std::thread::sleep(Duration::from_secs(2));
    let alive = child.try_wait().unwrap().is_none();
    drop(idle);
    let t = Instant::now();
    let mut status = None;
    for _ in 0..100 {
        status = get_status(&addr);
        if status.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let served_after = t.elapsed();
    child.kill().unwrap();
    let out = child.wait_with_output().unwrap();
    let errors = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains("accept failed"))
        .count();
    println!(
        "fd exhaustion (ulimit -n 256, 400 idle connections): alive {alive}, {errors} accept errors logged, next request answered {status:?} {:.0} ms after they closed",
        served_after.as_secs_f64() * 1e3
    );
}

async fn slow_headers(proxy: &str) {
    let mut conns = Vec::new();
    for _ in 0..1000 {
        let mut s = StdStream::connect(proxy).unwrap();
        s.write_all(b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\n")
            .unwrap();
        conns.push(s);
    }
    let opened = Instant::now();
    let client = client();
    let (ttfb, _) = one_stream(&client, proxy, &json!({"events": 1})).await;
    let closers: Vec<_> = conns
        .into_iter()
        .map(|mut s| {
            std::thread::spawn(move || {
                s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
                let mut buf = Vec::new();
                let _ = s.read_to_end(&mut buf);
            })
        })
        .collect();
    for c in closers {
        c.join().unwrap();
    }
    println!(
        "1000 slow-header connections: a normal stream's first byte {:.1} µs meanwhile; all 1000 closed by the proxy {:.1} s after they opened",
        ttfb,
        opened.elapsed().as_secs_f64()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    match args.get(1).map(String::as_str) {
        Some("upstream") => {
            return rt.block_on(upstream_main(
                args[2].clone(),
                args.get(3).map(PathBuf::from),
            ));
        }
        Some("proxy") => {
            return rt.block_on(proxy_main(
                args[2].clone(),
                args[3].clone(),
                args.get(4).map(PathBuf::from),
            ));
        }
        _ => {}
    }
    let streams: usize = std::env::var("STREAMS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000);
    let up_addr = free_addr();
    let up_base = format!("http://{up_addr}/v1");
    let mut upstream = spawn("upstream", &[&up_addr], None);
    let proxy_addr = free_addr();
    let mut proxy = spawn("proxy", &[&proxy_addr, &up_base], None);
    let tls_dir = std::env::temp_dir().join(format!("srp-load-{}", std::process::id()));
    let tls_addr = free_addr();
    let mut tls_upstream = spawn("upstream", &[&tls_addr, tls_dir.to_str().unwrap()], None);
    let ca_file = tls_dir.join("ca.pem");
    let tls_proxy_addr = free_addr();
    let mut tls_proxy = spawn(
        "proxy",
        &[
            &tls_proxy_addr,
            &format!("https://{tls_addr}/v1"),
            ca_file.to_str().unwrap(),
        ],
        None,
    );
    rt.block_on(async {
        latency(&up_addr, &proxy_addr).await;
        println!("streams to an HTTPS upstream over HTTP/2:");
        concurrent(&tls_proxy_addr, tls_proxy.id(), 1_000).await;
        concurrent(&tls_proxy_addr, tls_proxy.id(), streams).await;
        slow_headers(&proxy_addr).await;
    });
    fd_exhaustion(&up_base);
    for child in [&mut proxy, &mut upstream, &mut tls_proxy, &mut tls_upstream] {
        let _ = child.kill();
        let _ = child.wait();
    }
    let _ = std::fs::remove_dir_all(&tls_dir);
}
