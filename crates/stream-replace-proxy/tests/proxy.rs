//! The proxy between a client and a fake upstream, both in this process.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Frame, Incoming};
use hyper::{Request, Response};
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{Value, json};
use stream_replace_proxy::{Config, serve};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// A response body fed from a channel, so a test decides when each piece
/// goes out.
struct ChannelBody(mpsc::UnboundedReceiver<Bytes>);

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.0.poll_recv(cx).map(|b| b.map(|b| Ok(Frame::data(b))))
    }
}

type Responder = Arc<dyn Fn(Value, mpsc::UnboundedSender<Bytes>) -> &'static str + Send + Sync>;

/// A fake upstream: records each request body, answers with what `respond`
/// sends (its return value is the content type).
async fn upstream(respond: Responder) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let bodies = Arc::clone(&seen);
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let respond = Arc::clone(&respond);
            let bodies = Arc::clone(&bodies);
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                    let respond = Arc::clone(&respond);
                    let bodies = Arc::clone(&bodies);
                    async move {
                        let raw = req.into_body().collect().await.unwrap().to_bytes();
                        let text = String::from_utf8(raw.to_vec()).unwrap();
                        bodies.lock().unwrap().push(text.clone());
                        let (tx, rx) = mpsc::unbounded_channel();
                        let content_type = respond(serde_json::from_str(&text).unwrap(), tx);
                        let mut response = Response::new(ChannelBody(rx));
                        response
                            .headers_mut()
                            .insert("content-type", content_type.parse().unwrap());
                        Ok::<_, Infallible>(response)
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    (format!("http://{addr}/v1"), seen)
}

async fn proxy(upstream_base: &str) -> String {
    proxy_with(Config::new(upstream_base).unwrap()).await
}

async fn proxy_with(config: Config) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(serve(listener, config));
    format!("http://{addr}/v1")
}

fn sse_event(delta: Value) -> Bytes {
    Bytes::from(format!(
        "data: {}\n\n",
        json!({"choices": [{"index": 0, "delta": delta}]})
    ))
}

const ANN: &str = "jrmccalx@example.com";
const SSN: &str = "914-27-6083";
const CARD: &str = "4111-1111-1111-1111";
// Values only the upstream knows.
const INJECTED: [&str; 3] = ["qwertyui@example.com", "931-22-4410", "212-555-0147"];

fn prompt() -> String {
    format!("Synthetic record: contact {ANN}, SSN {SSN}, card {CARD}")
}

fn request(stream: bool) -> Value {
    json!({
        "model": "m",
        "stream": stream,
        "messages": [{"role": "system", "content": format!("Known: {ANN}")}, {"role": "user", "content": prompt()}],
        "session_note": format!("also {SSN}"),
    })
}

// Echoes the masked prompt one character per event, then streams each
// injected value cut into pieces of 3 in a sibling field of the delta.
fn echo_and_inject(body: Value, tx: mpsc::UnboundedSender<Bytes>) -> &'static str {
    let masked = body["messages"][1]["content"].as_str().unwrap().to_owned();
    tx.send(sse_event(json!({"role": "assistant", "content": ""})))
        .unwrap();
    for c in format!("You sent: {masked}").chars() {
        tx.send(sse_event(json!({"content": c.to_string()})))
            .unwrap();
    }
    for value in INJECTED {
        let chars: Vec<char> = value.chars().collect();
        for piece in chars.chunks(3) {
            tx.send(sse_event(
                json!({"content": "", "record_field": piece.iter().collect::<String>()}),
            ))
            .unwrap();
        }
        tx.send(sse_event(json!({"content": " ", "record_field": " "})))
            .unwrap();
    }
    tx.send(Bytes::from_static(
        b"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"total_tokens\":7}}\n\n",
    ))
    .unwrap();
    tx.send(Bytes::from_static(b"data: [DONE]\n\n")).unwrap();
    "text/event-stream"
}

async fn post(url: &str, body: &Value) -> (u16, String) {
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let req = Request::post(format!("{url}/chat/completions"))
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    let response = client.request(req).await.unwrap();
    let status = response.status().as_u16();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8(bytes.to_vec()).unwrap())
}

fn assert_upstream_saw_no_value(seen: &[String]) {
    assert!(!seen.is_empty());
    for body in seen {
        for value in [ANN, SSN, CARD, "jrmccalx%40example.com"] {
            assert!(
                !body.contains(value),
                "{value} reached the upstream: {body}"
            );
        }
    }
}

fn joined_fields(sse: &str) -> (String, String, Vec<Value>) {
    let (mut content, mut record) = (String::new(), String::new());
    let mut events = Vec::new();
    for data in sse.split("\n\n").filter_map(|e| e.strip_prefix("data: ")) {
        if data == "[DONE]" {
            events.push(Value::String(data.to_owned()));
            continue;
        }
        let v: Value = serde_json::from_str(data).unwrap();
        for choice in v["choices"].as_array().unwrap() {
            content += choice["delta"]["content"].as_str().unwrap_or("");
            record += choice["delta"]["record_field"].as_str().unwrap_or("");
        }
        events.push(v);
    }
    (content, record, events)
}

#[tokio::test]
async fn streamed_echo_is_restored_and_injected_values_redacted() {
    let (base, seen) = upstream(Arc::new(echo_and_inject)).await;
    let url = proxy(&base).await;
    let (status, sse) = post(&url, &request(true)).await;
    assert_eq!(status, 200);
    assert_upstream_saw_no_value(&seen.lock().unwrap());
    let (content, record, events) = joined_fields(&sse);
    assert_eq!(content, format!("You sent: {}   ", prompt()));
    assert_eq!(
        record,
        "[EMAIL_REDACTED] [US_SSN_REDACTED] [PHONE_REDACTED] "
    );
    for value in INJECTED {
        // No run of 4 characters of an injected value reaches the client.
        let chars: Vec<char> = value.chars().collect();
        for w in chars.windows(4) {
            let run: String = w.iter().collect();
            assert!(
                !sse.contains(&run) || prompt().contains(&run),
                "{run:?} of {value} leaked"
            );
        }
    }
    // Role, finish, usage and [DONE] are kept.
    assert_eq!(events[0]["choices"][0]["delta"]["role"], "assistant");
    let finish = events
        .iter()
        .find(|e| e["choices"][0]["finish_reason"] == "stop")
        .unwrap();
    assert_eq!(finish["usage"]["total_tokens"], 7);
    assert_eq!(events.last().unwrap(), &Value::String("[DONE]".to_owned()));
}

#[tokio::test]
async fn whole_json_response_is_restored_and_redacted() {
    let respond: Responder = Arc::new(|body: Value, tx: mpsc::UnboundedSender<Bytes>| {
        let masked = body["messages"][1]["content"].as_str().unwrap().to_owned();
        let completion = json!({
            "id": "c1", "object": "chat.completion",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {
                "role": "assistant",
                "content": format!("{masked} / {}", INJECTED[0]),
                "note": INJECTED[1],
            }}],
        });
        tx.send(Bytes::from(completion.to_string())).unwrap();
        "application/json"
    });
    let (base, seen) = upstream(respond).await;
    let url = proxy(&base).await;
    let (status, body) = post(&url, &request(false)).await;
    assert_eq!(status, 200);
    assert_upstream_saw_no_value(&seen.lock().unwrap());
    let v: Value = serde_json::from_str(&body).unwrap();
    let message = &v["choices"][0]["message"];
    assert_eq!(
        message["content"],
        format!("{} / [EMAIL_REDACTED]", prompt())
    );
    assert_eq!(message["note"], "[US_SSN_REDACTED]");
    assert_eq!(message["role"], "assistant");
    assert_eq!(v["id"], "c1");
}

// The first event reaches the client while the upstream is still open: the
// upstream sends the rest only after the client has seen it.
#[tokio::test]
async fn events_are_not_buffered_until_the_end() {
    let (gate_tx, gate_rx) = std::sync::mpsc::channel::<mpsc::UnboundedSender<Bytes>>();
    let gate_tx = Mutex::new(gate_tx);
    let respond: Responder = Arc::new(move |_body, tx: mpsc::UnboundedSender<Bytes>| {
        tx.send(sse_event(json!({"content": "Hello "}))).unwrap();
        gate_tx.lock().unwrap().send(tx).unwrap();
        "text/event-stream"
    });
    let (base, _) = upstream(respond).await;
    let url = proxy(&base).await;
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let req = Request::post(format!("{url}/chat/completions"))
        .body(Full::new(Bytes::from(request(true).to_string())))
        .unwrap();
    let mut body = client.request(req).await.unwrap().into_body();
    let first = body.frame().await.unwrap().unwrap().into_data().unwrap();
    assert!(String::from_utf8_lossy(&first).contains("Hello "));
    let tx = gate_rx.recv().unwrap();
    tx.send(sse_event(json!({"content": "again"}))).unwrap();
    tx.send(Bytes::from_static(b"data: [DONE]\n\n")).unwrap();
    drop(tx);
    let rest = body.collect().await.unwrap().to_bytes();
    let rest = String::from_utf8(rest.to_vec()).unwrap();
    assert!(
        rest.contains("again") && rest.ends_with("data: [DONE]\n\n"),
        "{rest}"
    );
}

// The upstream's bytes cut at every offset of a short stream: the client
// gets the same bytes each time.
#[tokio::test]
async fn every_split_of_the_upstream_bytes() {
    let stream = concat!(
        "data: {\"choices\":[{\"delta\":{\"content\":\"Mail [EM\"}}]}\n\n",
        "data: {\"choices\":[{\"delta\":{\"content\":\"AIL_1] or qw@ex\"}}]}\n\n",
        "data: {\"choices\":[{\"delta\":{\"content\":\"ample.com.\"}}]}\n\n",
        "data: [DONE]\n\n",
    );
    let cut = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let upstream_stream = stream;
    let next_cut = Arc::clone(&cut);
    let respond: Responder = Arc::new(move |_body, tx: mpsc::UnboundedSender<Bytes>| {
        let at = next_cut.load(std::sync::atomic::Ordering::SeqCst);
        let bytes = Bytes::from_static(upstream_stream.as_bytes());
        tx.send(bytes.slice(..at)).unwrap();
        tx.send(bytes.slice(at..)).unwrap();
        "text/event-stream"
    });
    let (base, _) = upstream(respond).await;
    let url = proxy(&base).await;
    let mut first: Option<String> = None;
    for at in 0..=stream.len() {
        cut.store(at, std::sync::atomic::Ordering::SeqCst);
        let (status, sse) = post(&url, &request(true)).await;
        assert_eq!(status, 200);
        let (content, _, _) = joined_fields(&sse);
        assert_eq!(
            content,
            format!("Mail {ANN} or [EMAIL_REDACTED]."),
            "cut at {at}"
        );
        match &first {
            None => first = Some(sse),
            Some(first) => assert_eq!(&sse, first, "cut at {at}"),
        }
    }
}

// A value that never ends holds more than the cap: the client gets an
// error event, no [DONE], and none of the held text.
#[tokio::test]
async fn held_limit_ends_the_stream_with_an_error_event() {
    let respond: Responder = Arc::new(|_body, tx: mpsc::UnboundedSender<Bytes>| {
        tx.send(sse_event(json!({"role": "assistant", "content": "ok "})))
            .unwrap();
        for _ in 0..10 {
            tx.send(sse_event(json!({"content": "secretsecret."})))
                .unwrap();
        }
        tx.send(sse_event(json!({"content": "@example.com"})))
            .unwrap();
        tx.send(Bytes::from_static(b"data: [DONE]\n\n")).unwrap();
        "text/event-stream"
    });
    let (base, _) = upstream(respond).await;
    let url = proxy_with(Config::new(&base).unwrap().max_held(64)).await;
    let (status, sse) = post(&url, &request(true)).await;
    assert_eq!(status, 200);
    assert!(
        !sse.contains("secret") && !sse.contains("example.com"),
        "{sse}"
    );
    assert!(!sse.contains("[DONE]"), "{sse}");
    let last = sse.trim_end().rsplit("\n\n").next().unwrap();
    let error: Value = serde_json::from_str(last.strip_prefix("data: ").unwrap()).unwrap();
    assert_eq!(error["error"]["code"], "held_limit");
    assert!(sse.contains(r#""content":"ok ""#));
}
