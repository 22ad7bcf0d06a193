//! The response layer: a hand-made `http_body::Body` of
//! an SSE reply through `ResponseGuard` and `GuardLayer`.
//!
//! The oracle: no run of 4 characters of a planted value (from an
//! address's local part only) comes out, raw or in the decoded strings of
//! any JSON in the output; and the output is the same for every cut of the
//! upstream bytes.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Request, Response};
use http_body::{Body, Frame};
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};
use stream_replace::{Rule, Rules};
use stream_replace_sse::{Api, GuardLayer, ResponseGuard};
use tower_layer::Layer;
use tower_service::Service;

#[path = "support/leak_oracle.rs"]
mod leak_oracle;
use leak_oracle::{PLANTED, assert_no_planted};

fn rules() -> Rules {
    Rules::builder()
        .regex(r"[\w.+-]+@[\w-]+\.\w+", "[EMAIL_REDACTED]")
        .regex(r"\b\d{3}-\d{2}-\d{4}\b", "[SSN_REDACTED]")
        .regex(r"\b\d{4}(?: \d{4}){3}\b", "[CARD_REDACTED]")
        .regex(r"\b[A-Z]{2}\d{2}[A-Z0-9]{12,30}\b", "[IBAN_REDACTED]")
        .build()
        .unwrap()
}

fn guard() -> ResponseGuard {
    ResponseGuard::new(&rules())
}

fn sse(datas: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for d in datas {
        out.extend_from_slice(format!("data: {d}\n\n").as_bytes());
    }
    out.extend_from_slice(b"data: [DONE]\n\n");
    out
}

/// A body that yields the given pieces, one frame each.
struct Pieces(VecDeque<Bytes>);

impl Body for Pieces {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.0.pop_front().map(|b| Ok(Frame::data(b))))
    }
}

// The planted values streamed `size` bytes per event, and with
// `tool_calls` in a second choice's tool call too, interleaved.
fn reply_with(size: usize, tool_calls: bool) -> Vec<u8> {
    let text = format!("Values: {}.", PLANTED.join(", "));
    let mut events = Vec::new();
    for piece in text.as_bytes().chunks(size) {
        let piece = String::from_utf8_lossy(piece).into_owned();
        events.push(json!({"id": "c", "choices": [{"index": 0, "delta": {"content": piece}}]}));
        if tool_calls {
            events.push(json!({"choices": [{"index": 1, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}}]}));
        }
    }
    sse(&events)
}

fn reply() -> Vec<u8> {
    reply_with(3, true)
}

async fn run(guard: &ResponseGuard, pieces: Vec<Bytes>) -> String {
    let body = guard.sse(Pieces(pieces.into()), Api::OpenAi);
    let out = body.collect().await.unwrap().to_bytes();
    String::from_utf8(out.to_vec()).unwrap()
}

#[tokio::test]
async fn body_cut_at_every_byte_lets_no_value_out() {
    let guard = guard();
    let reply = reply();
    // One byte per frame.
    let bytes: Vec<Bytes> = reply
        .iter()
        .map(|b| Bytes::copy_from_slice(&[*b]))
        .collect();
    let out = run(&guard, bytes).await;
    assert_no_planted(&out, "one byte per frame");
    assert!(
        out.contains("[EMAIL_REDACTED]") && out.ends_with("data: [DONE]\n\n"),
        "{out}"
    );
    // Two frames, cut at every byte (of a shorter reply: each run scans
    // the whole of it).
    let reply = reply_with(12, false);
    let whole = run(&guard, vec![Bytes::from(reply.clone())]).await;
    assert_no_planted(&whole, "whole");
    for cut in 0..=reply.len() {
        let pieces = vec![
            Bytes::copy_from_slice(&reply[..cut]),
            Bytes::copy_from_slice(&reply[cut..]),
        ];
        let got = run(&guard, pieces).await;
        assert_no_planted(&got, &format!("cut at {cut}"));
        assert_eq!(got, whole, "cut at {cut}");
    }
}

#[tokio::test]
async fn what_cannot_be_parsed_ends_with_an_error_event_of_the_api_shape() {
    let guard = guard();
    let body = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok \"}}]}\n\n data: raw 931-22-4410\n\n".to_vec();
    let out = run(&guard, vec![Bytes::from(body.clone())]).await;
    assert!(out.contains("\"code\":\"invalid_framing\""), "{out}");
    assert!(!out.contains("931-22"), "{out}");
    let anthropic = guard.sse(Pieces(vec![Bytes::from(body)].into()), Api::Anthropic);
    let out = String::from_utf8(anthropic.collect().await.unwrap().to_bytes().to_vec()).unwrap();
    assert!(out.contains("event: error"), "{out}");
    assert!(!out.contains("931-22"), "{out}");
}

/// An app's handler: answers with the given content type and body.
#[derive(Clone)]
struct App(&'static str, Vec<u8>);

impl Service<Request<()>> for App {
    type Response = Response<Full<Bytes>>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: Request<()>) -> Self::Future {
        let response = Response::builder()
            .header("content-type", self.0)
            .body(Full::new(Bytes::from(self.1.clone())))
            .unwrap();
        Box::pin(async move { Ok(response) })
    }
}

async fn through_layer(app: App) -> (u16, String) {
    let layer = GuardLayer::new(guard(), Api::OpenAi);
    let mut service = layer.layer(app);
    let response = service.call(Request::new(())).await.unwrap();
    let status = response.status().as_u16();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8(body.to_vec()).unwrap())
}

#[tokio::test]
async fn the_layer_guards_sse_json_and_refuses_the_rest() {
    let (status, out) = through_layer(App("text/event-stream", reply())).await;
    assert_eq!(status, 200);
    assert_no_planted(&out, "layer sse");
    assert!(out.contains("[IBAN_REDACTED]"), "{out}");

    let json = json!({"choices": [{"message": {"content": PLANTED.join(" ")}}]}).to_string();
    let (status, out) = through_layer(App("application/json", json.into_bytes())).await;
    assert_eq!(status, 200);
    assert_no_planted(&out, "layer json");
    assert!(out.contains("[EMAIL_REDACTED]"), "{out}");

    let (status, out) = through_layer(App("text/plain", PLANTED.join(" ").into_bytes())).await;
    assert_eq!(status, 502);
    assert_no_planted(&out, "layer text");
}

#[tokio::test]
async fn a_block_ends_the_stream_with_the_api_error_event() {
    let rules = Rules::builder()
        .add(
            Rule::regex(r"\b\d{3}-\d{2}-\d{4}\b", "[SSN]")
                .id("ssn")
                .block("no SSNs"),
        )
        .build()
        .unwrap();
    let guard = ResponseGuard::new(&rules);
    let events = [
        json!({"choices": [{"index": 0, "delta": {"content": "ok, SSN 931-2"}}]}),
        json!({"choices": [{"index": 0, "delta": {"content": "2-4410 and more"}}]}),
    ];
    let body = sse(&events);
    for api in [Api::OpenAi, Api::Anthropic] {
        for cut in 0..=body.len() {
            let pieces = vec![
                Bytes::copy_from_slice(&body[..cut]),
                Bytes::copy_from_slice(&body[cut..]),
            ];
            let out = guard.sse(Pieces(pieces.into()), api).collect().await;
            let out = String::from_utf8(out.unwrap().to_bytes().to_vec()).unwrap();
            assert_no_planted(&out, &format!("{api:?} cut at {cut}"));
            assert!(!out.contains("more"), "{api:?} cut at {cut}: {out}");
            assert!(!out.contains("[DONE]"), "{api:?} cut at {cut}: {out}");
            match api {
                Api::OpenAi => assert!(
                    out.ends_with("\n\n")
                        && out.contains("\"code\":\"blocked\"")
                        && out.contains("ssn: no SSNs"),
                    "cut at {cut}: {out}"
                ),
                _ => assert!(
                    out.contains("event: error\ndata: {\"type\":\"error\"")
                        && out.contains("ssn: no SSNs"),
                    "cut at {cut}: {out}"
                ),
            }
        }
    }
}

#[tokio::test]
async fn a_block_in_a_json_body_is_a_502_through_the_layer() {
    let rules = Rules::builder()
        .add(
            Rule::literal("DE89370400440532013000", "[IBAN]")
                .id("iban")
                .block("no IBANs"),
        )
        .build()
        .unwrap();
    let layer = GuardLayer::new(ResponseGuard::new(&rules), Api::OpenAi);
    let json = json!({"choices": [{"message": {"content": PLANTED.join(" ")}}]}).to_string();
    let response = layer
        .layer(App("application/json", json.into_bytes()))
        .call(Request::new(()))
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 502);
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let out = String::from_utf8(body.to_vec()).unwrap();
    assert!(out.contains("iban: no IBANs"), "{out}");
    assert!(!out.contains("DE89") && !out.contains("qwzx"), "{out}");
}

#[tokio::test]
async fn unknown_fields_bad_json_and_data_after_done_are_refused() {
    let guard = guard();
    let cases: [(&[u8], &str); 4] = [
        (
            b"dta: {\"a\":\"qwzxjkvb@example.com\"}\n\n",
            "invalid_framing",
        ),
        (b"data: {\"a\": qwzxjkvb@example.com}\n\n", "invalid_json"),
        (
            b"data: [DONE]\n\ndata: {\"a\":\"931-22-4410\"}\n\n",
            "invalid_framing",
        ),
        (b"data: {\"a\":\"x\"}\r\nweird\n\n", "invalid_framing"),
    ];
    for (body, code) in cases {
        let out = guard
            .sse(Pieces(vec![Bytes::from_static(body)].into()), Api::OpenAi)
            .collect()
            .await
            .unwrap()
            .to_bytes();
        let out = String::from_utf8(out.to_vec()).unwrap();
        assert!(out.contains(&format!("\"code\":\"{code}\"")), "{out}");
        assert_no_planted(&out, code);
        // Read ahead: the error comes back instead of bytes, and the body
        // still carries only the error event.
        let mut body = guard.sse(Pieces(vec![Bytes::from_static(body)].into()), Api::OpenAi);
        match body.first_output().await {
            Err(e) => {
                assert_eq!(e.code(), code);
                let rest = body.collect().await.unwrap().to_bytes();
                assert_eq!(rest, Api::OpenAi.error_event(&e));
            }
            // The `[DONE]` went out before the bad event.
            Ok(()) => assert_eq!(code, "invalid_framing"),
        }
    }
}

/// Hooks that restore `[NAME_1]` from a map lent for each call, stop the
/// stream after `stop_after` upstream frames, and record what they hear.
#[derive(Default)]
struct Recorder {
    map: Option<String>,
    frames_in: usize,
    frames_out: usize,
    stop_after: Option<usize>,
    ended: Vec<Option<&'static str>>,
}

thread_local!(static LENT: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) });

impl stream_replace_sse::Hooks for Recorder {
    fn scope(&mut self, call: &mut dyn FnMut()) {
        LENT.with(|l| std::mem::swap(&mut *l.borrow_mut(), &mut self.map));
        call();
        LENT.with(|l| std::mem::swap(&mut *l.borrow_mut(), &mut self.map));
    }
    fn poll_stop(&mut self, _: &mut Context<'_>) -> Poll<stream_replace_sse::GuardError> {
        match self.stop_after {
            Some(n) if self.frames_in >= n => {
                Poll::Ready(stream_replace_sse::GuardError::Stopped {
                    code: "shutting_down",
                    message: "stopped".to_owned(),
                })
            }
            _ => Poll::Pending,
        }
    }
    fn on_upstream_data(&mut self) {
        self.frames_in += 1;
    }
    fn on_frame(&mut self) {
        self.frames_out += 1;
    }
    fn on_end(&mut self, error: Option<&stream_replace_sse::GuardError>) {
        self.ended.push(error.map(|e| e.code()));
    }
}

fn restoring_rules() -> Rules {
    let restore = stream_replace::Replacement::with(|caps| {
        let p = caps.as_str().to_owned();
        LENT.with(|l| match &*l.borrow() {
            Some(v) if p == "[NAME_1]" => v.clone(),
            _ => p,
        })
    });
    let mut b = Rules::builder();
    b.rule(stream_replace::Pattern::regex(r"\[NAME_\d+\]"), restore);
    b.regex(r"[\w.+-]+@[\w-]+\.\w+", "[EMAIL_REDACTED]");
    b.build().unwrap()
}

#[tokio::test]
async fn hooks_lend_a_restore_map_and_hear_the_end() {
    let guard = ResponseGuard::new(&restoring_rules());
    let events = [
        json!({"choices": [{"index": 0, "delta": {"content": "Dear [NAM"}}]}),
        json!({"choices": [{"index": 0, "delta": {"content": "E_1], mail qwzxjkvb@exa"}}]}),
        json!({"choices": [{"index": 0, "delta": {"content": "mple.com"}, "finish_reason": "stop"}]}),
    ];
    let reply = sse(&events);
    let pieces: Vec<Bytes> = reply.chunks(5).map(Bytes::copy_from_slice).collect();
    let frames = pieces.len();
    let hooks = Recorder {
        map: Some("Ann".to_owned()),
        ..Recorder::default()
    };
    let mut body = guard.sse_with(Pieces(pieces.into()), Api::OpenAi, hooks);
    let mut out = Vec::new();
    while let Some(frame) = body.frame().await {
        out.extend_from_slice(&frame.unwrap().into_data().unwrap());
    }
    let out = String::from_utf8(out).unwrap();
    assert!(out.contains("Dear ") && out.contains("Ann"), "{out}");
    assert!(!out.contains("[NAME_1]"), "{out}");
    assert_no_planted(&out, "restored");
    let hooks = body.hooks();
    assert_eq!(hooks.ended, vec![None]);
    assert_eq!(hooks.frames_in, frames);
    assert!(
        hooks.frames_out >= 2 && hooks.frames_out <= frames,
        "{}",
        hooks.frames_out
    );
    // Without the map in scope the placeholder stays as it came.
    let pieces = vec![Bytes::from(sse(&events))];
    let out = guard
        .sse(Pieces(pieces.into()), Api::OpenAi)
        .collect()
        .await;
    let out = String::from_utf8(out.unwrap().to_bytes().to_vec()).unwrap();
    assert!(out.contains("\"[NAME_1], mail \""), "{out}");
}

#[tokio::test]
async fn a_hook_stop_cuts_the_stream_with_its_code() {
    let guard = guard();
    let reply = reply();
    let pieces: Vec<Bytes> = reply.chunks(40).map(Bytes::copy_from_slice).collect();
    let hooks = Recorder {
        stop_after: Some(3),
        ..Recorder::default()
    };
    let mut body = guard.sse_with(Pieces(pieces.into()), Api::Anthropic, hooks);
    let mut out = Vec::new();
    while let Some(frame) = body.frame().await {
        out.extend_from_slice(&frame.unwrap().into_data().unwrap());
    }
    let out = String::from_utf8(out).unwrap();
    assert!(out.ends_with("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"stopped\"}}\n\n"), "{out}");
    assert!(!out.contains("[DONE]"), "{out}");
    assert_eq!(body.hooks().frames_in, 3);
    assert_eq!(body.hooks().ended, vec![Some("shutting_down")]);
    assert_no_planted(&out, "stopped");
}
