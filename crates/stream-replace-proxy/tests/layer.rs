//! The response path as an embeddable body wrapper and `tower` layer.

mod common;

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use common::{assert_no_planted, sse, PLANTED};
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Frame};
use hyper::{Request, Response};
use serde_json::json;
use stream_replace_proxy::{Api, GuardLayer, ResponseGuard};
use tower_layer::Layer;
use tower_service::Service;

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
    let guard = ResponseGuard::new().unwrap();
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
    let guard = ResponseGuard::new().unwrap();
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
    let layer = GuardLayer::new(ResponseGuard::new().unwrap(), Api::OpenAi);
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
