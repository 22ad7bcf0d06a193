//! A fake upstream over raw TCP whose every byte and pause the test
//! decides, and a raw HTTP/1.1 client.

#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use stream_replace_proxy::{Config, serve};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[path = "../../../stream-replace-sse/tests/support/leak_oracle.rs"]
mod leak_oracle;
// Not every test file checks for leaks.
#[allow(unused_imports)]
pub use leak_oracle::{PLANTED, assert_no_planted};

/// One request as the upstream saw it.
#[derive(Clone, Debug)]
pub struct Seen {
    pub head: String,
    pub body: String,
}

impl Seen {
    /// The request target, such as `/v1/chat/completions?x=1`.
    pub fn target(&self) -> &str {
        self.head.split(' ').nth(1).unwrap_or("")
    }
}

/// What the upstream sends for a request: pieces written in turn (an
/// empty one is a pause of a second).
pub type Respond = Arc<dyn Fn(&Seen) -> Vec<Vec<u8>> + Send + Sync>;

pub struct Upstream {
    pub base: String,
    pub addr: String,
    pub seen: Arc<Mutex<Vec<Seen>>>,
}

async fn read_request(stream: &mut TcpStream) -> Option<Seen> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let len = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    while buf.len() < head_end + len {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = String::from_utf8_lossy(&buf[head_end..]).into_owned();
    Some(Seen { head, body })
}

/// An upstream that answers each request with the pieces `respond`
/// returns, written one by one with a pause between them, then closes.
pub async fn upstream(respond: Respond) -> Upstream {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let log = Arc::clone(&seen);
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                continue;
            };
            let respond = Arc::clone(&respond);
            let log = Arc::clone(&log);
            tokio::spawn(async move {
                let Some(req) = read_request(&mut stream).await else {
                    return;
                };
                log.lock().unwrap().push(req.clone());
                for piece in respond(&req) {
                    // An empty piece is a pause of a second.
                    if piece.is_empty() {
                        tokio::time::sleep(Duration::from_secs(1)).await;
                        continue;
                    }
                    if stream.write_all(&piece).await.is_err() {
                        return;
                    }
                    let _ = stream.flush().await;
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                let _ = stream.shutdown().await;
            });
        }
    });
    Upstream {
        base: format!("http://{addr}/v1"),
        addr,
        seen,
    }
}

/// The head of a response with no length: the body ends when the
/// connection does.
pub fn head(status: u16, content_type: &str, extra: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status} X\r\ncontent-type: {content_type}\r\nconnection: close\r\n{extra}\r\n"
    )
    .into_bytes()
}

/// `head` then `body` cut into pieces of `cut` bytes.
pub fn pieces(head: Vec<u8>, body: &[u8], cut: usize) -> Vec<Vec<u8>> {
    let mut out = vec![head];
    out.extend(body.chunks(cut.max(1)).map(<[u8]>::to_vec));
    out
}

/// An SSE body of these data payloads.
pub fn sse(datas: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for d in datas {
        out.extend_from_slice(format!("data: {d}\n\n").as_bytes());
    }
    out.extend_from_slice(b"data: [DONE]\n\n");
    out
}

pub async fn proxy(config: Config) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(serve(listener, config));
    addr
}

/// A response as the client got it.
#[derive(Debug)]
pub struct Got {
    pub status: u16,
    pub head: String,
    pub body: String,
}

impl Got {
    pub fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
        })
    }

    /// The JSON of every `data:` line but `[DONE]`.
    pub fn events(&self) -> Vec<Value> {
        self.body
            .split("\n\n")
            .filter_map(|e| e.lines().find_map(|l| l.strip_prefix("data: ")))
            .filter(|d| *d != "[DONE]")
            .map(|d| serde_json::from_str(d).unwrap_or_else(|e| panic!("{e}: {d}")))
            .collect()
    }

    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(i) = b.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size = std::str::from_utf8(&b[..i])
            .ok()
            .and_then(|s| usize::from_str_radix(s.split(';').next()?.trim(), 16).ok());
        let Some(size) = size else {
            return out;
        };
        if size == 0 || b.len() < i + 2 + size {
            return out;
        }
        out.extend_from_slice(&b[i + 2..i + 2 + size]);
        b = &b[(i + 4 + size).min(b.len())..];
    }
}

/// Sends one request over a fresh connection and reads the whole reply.
pub async fn send(addr: &str, method: &str, target: &str, body: &str) -> Got {
    send_with(addr, method, target, "", body).await
}

pub async fn send_with(addr: &str, method: &str, target: &str, headers: &str, body: &str) -> Got {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let req = format!(
        "{method} {target} HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n{headers}\r\n{body}",
        body.len()
    );
    stream.write_all(req.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut raw))
        .await
        .expect("the proxy answered within 30 s")
        .unwrap();
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a response head")
        + 4;
    let head = String::from_utf8_lossy(&raw[..end]).into_owned();
    let status = head[9..12].parse().unwrap();
    let chunked = head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked");
    let body = if chunked {
        dechunk(&raw[end..])
    } else {
        raw[end..].to_vec()
    };
    Got {
        status,
        head,
        body: String::from_utf8(body).unwrap(),
    }
}
