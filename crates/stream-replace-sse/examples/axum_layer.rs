//! An `axum` app that guards its model responses with the response
//! layer: one `.layer(...)` line.
//!
//! ```sh
//! cargo run -p stream-replace-sse --example axum_layer
//! ```
//!
//! It serves `/v1/chat/completions` on 127.0.0.1:14100 with a canned SSE
//! reply that carries an email address split across events, asks itself
//! for it, and prints what a client gets: the address redacted.

use axum::Router;
use axum::body::Body;
use axum::http::header;
use axum::response::Response;
use axum::routing::post;
use stream_replace::Rules;
use stream_replace_sse::{Api, GuardLayer, ResponseGuard};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

// The app's own handler: a model reply, streamed.
async fn chat() -> Response {
    let events = [
        r#"{"choices":[{"index":0,"delta":{"content":"Write to ann.le"}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"e@example.com today."}}]}"#,
    ];
    let mut body = String::new();
    for e in events {
        body.push_str(&format!("data: {e}\n\n"));
    }
    body.push_str("data: [DONE]\n\n");
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .body(Body::from(body))
        .expect("a valid response")
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let rules = Rules::builder()
        .regex(r"[\w.+-]+@[\w-]+\.\w+", "[EMAIL_REDACTED]")
        .build()?;
    let app = Router::new()
        .route("/v1/chat/completions", post(chat))
        // The one line that guards every response of the app.
        .layer(GuardLayer::new(ResponseGuard::new(&rules), Api::OpenAi));

    let listener = tokio::net::TcpListener::bind("127.0.0.1:14100").await?;
    tokio::spawn(async move { axum::serve(listener, app).await });

    // A client.
    let mut stream = tokio::net::TcpStream::connect("127.0.0.1:14100").await?;
    stream
        .write_all(b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
        .await?;
    let mut reply = String::new();
    stream.read_to_string(&mut reply).await?;
    println!("{reply}");
    assert!(reply.contains("[EMAIL_REDACTED]") && !reply.contains("ann.lee"));
    Ok(())
}
