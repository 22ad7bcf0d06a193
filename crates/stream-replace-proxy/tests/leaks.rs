//! One regression test per leak of issue 23, each with its repro input,
//! against a fake upstream that sends exactly the bytes the test says.

mod common;

use std::sync::Arc;

use common::*;
use serde_json::{Value, json};
use stream_replace_proxy::{Config, LOGPROBS_HEADER};

const CHAT: &str = "/v1/chat/completions";

type MakeEvent = Box<dyn Fn(&str) -> Value>;

fn chunk(delta: Value) -> Value {
    json!({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
           "choices": [{"index": 0, "delta": delta, "finish_reason": null}]})
}

fn finish() -> Value {
    json!({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
           "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
}

/// An upstream that streams `body` as SSE, `cut` bytes per write.
async fn sse_upstream(body: Vec<u8>, cut: usize) -> Upstream {
    upstream(Arc::new(move |_: &Seen| {
        pieces(head(200, "text/event-stream", ""), &body, cut)
    }))
    .await
}

async fn json_upstream(status: u16, body: Value) -> Upstream {
    let body = body.to_string().into_bytes();
    upstream(Arc::new(move |_: &Seen| {
        pieces(head(status, "application/json", ""), &body, 7)
    }))
    .await
}

fn config(up: &Upstream) -> Config {
    Config::new(&up.base).unwrap()
}

fn chat_request() -> String {
    json!({"model": "m", "stream": true, "logprobs": true, "messages": [{"role": "user", "content": "hi"}]})
        .to_string()
}

fn joined_content(got: &Got) -> String {
    got.events()
        .iter()
        .filter_map(|e| {
            e["choices"][0]["delta"]["content"]
                .as_str()
                .map(str::to_owned)
        })
        .collect()
}

// 1. logprobs carry the model's tokens: content is redacted, the token
// list is dropped (null) and the response says so.
#[tokio::test]
async fn leak_logprobs_tokens() {
    let tokens = ["Mail ", "qwzx", "jkvb", "@example", ".com", " now"];
    let mut events = Vec::new();
    for t in tokens {
        let mut e = chunk(json!({"content": t}));
        e["choices"][0]["logprobs"] = json!({"content": [{
            "token": t, "logprob": -0.1, "bytes": t.bytes().collect::<Vec<u8>>(),
            "top_logprobs": [{"token": t, "logprob": -0.1, "bytes": t.bytes().collect::<Vec<u8>>()}],
        }]});
        events.push(e);
    }
    events.push(finish());
    let up = sse_upstream(sse(&events), 5).await;
    let addr = proxy(config(&up)).await;
    let got = send(&addr, "POST", CHAT, &chat_request()).await;
    assert_eq!(got.status, 200);
    assert_no_planted(&got.body, "logprobs stream");
    assert_eq!(joined_content(&got), "Mail [EMAIL_REDACTED] now");
    assert_eq!(got.header(LOGPROBS_HEADER).as_deref(), Some("dropped"));
    for e in got.events() {
        assert!(e["choices"][0]["logprobs"].is_null(), "{e}");
    }

    // The same, whole.
    let whole = json!({"id": "c1", "object": "chat.completion", "choices": [{
        "index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": "Mail qwzxjkvb@example.com now"},
        "logprobs": {"content": tokens.iter().map(|t| json!({"token": t, "logprob": -0.1, "bytes": t.bytes().collect::<Vec<u8>>(), "top_logprobs": []})).collect::<Vec<_>>()},
    }]});
    let up = json_upstream(200, whole).await;
    let addr = proxy(config(&up)).await;
    let got = send(&addr, "POST", CHAT, &chat_request()).await;
    assert_eq!(got.status, 200);
    assert_no_planted(&got.body, "logprobs whole");
    assert!(got.json()["choices"][0]["logprobs"].is_null());
    assert_eq!(got.header(LOGPROBS_HEADER).as_deref(), Some("dropped"));
}

// 2. Another spelling of the path is the same endpoint, scanned; what the
// upstream gets is the canonical path.
#[tokio::test]
async fn leak_path_percent_encoded() {
    let reply = json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "at qwzxjkvb@example.com"}}]});
    let up = json_upstream(200, reply).await;
    let addr = proxy(config(&up)).await;
    for target in [
        "/v1/chat/completion%73",
        "/v1/chat%2Fcompletions",
        "/v1/chat%2fcompletions/",
        "/%76%31/chat/completions",
    ] {
        let got = send(&addr, "POST", target, &chat_request()).await;
        assert_eq!(got.status, 200, "{target}");
        assert_no_planted(&got.body, target);
        assert_eq!(
            got.json()["choices"][0]["message"]["content"],
            "at [EMAIL_REDACTED]"
        );
    }
    for seen in up.seen.lock().unwrap().iter() {
        assert_eq!(seen.target(), "/v1/chat/completions");
    }
    // Paths that do not parse, or that no route knows, are refused and
    // never reach the upstream.
    let before = up.seen.lock().unwrap().len();
    for (target, status) in [
        ("/v1/chat/completions%ZZ", 400),
        ("/v1/chat/../completions", 400),
        ("/v1//chat/completions", 400),
        ("/v1/chat/completions%252F", 400),
        ("/v1/files", 403),
        ("/v1/chat/completions/x", 403),
        ("/admin", 403),
    ] {
        let got = send(&addr, "POST", target, &chat_request()).await;
        assert_eq!(got.status, status, "{target}");
        assert_eq!(got.json()["error"]["type"], "proxy_error");
    }
    assert_eq!(up.seen.lock().unwrap().len(), before);
}

// 3. The other model endpoints are scanned, streamed and whole.
#[tokio::test]
async fn leak_other_endpoints() {
    // /v1/completions: choices[].text, streamed.
    let events = [
        json!({"id": "c", "object": "text_completion", "choices": [{"index": 0, "text": "mail qwzx", "finish_reason": null}]}),
        json!({"id": "c", "object": "text_completion", "choices": [{"index": 0, "text": "jkvb@exam", "finish_reason": null}]}),
        json!({"id": "c", "object": "text_completion", "choices": [{"index": 0, "text": "ple.com ok", "finish_reason": "stop"}]}),
    ];
    let up = sse_upstream(sse(&events), 3).await;
    let addr = proxy(config(&up)).await;
    let got = send(
        &addr,
        "POST",
        "/v1/completions",
        r#"{"prompt":"x","stream":true}"#,
    )
    .await;
    assert_eq!(got.status, 200);
    assert_no_planted(&got.body, "completions");
    let text: String = got
        .events()
        .iter()
        .filter_map(|e| e["choices"][0]["text"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(text, "mail [EMAIL_REDACTED] ok");

    // /v1/responses: output_text deltas, the done text, and the final object.
    let item = json!({"item_id": "msg_1", "output_index": 0, "content_index": 0});
    let mut events = Vec::new();
    for (i, d) in ["card 4242 42", "42 4242 4242", " end"].iter().enumerate() {
        let mut e = item.clone();
        e["type"] = json!("response.output_text.delta");
        e["sequence_number"] = json!(i);
        e["delta"] = json!(d);
        e["logprobs"] = json!([]);
        events.push(e);
    }
    let full_text = "card 4242 4242 4242 4242 end";
    let mut done = item.clone();
    done["type"] = json!("response.output_text.done");
    done["text"] = json!(full_text);
    events.push(done);
    events.push(json!({"type": "response.completed", "response": {"id": "r1", "object": "response", "status": "completed",
        "output": [{"id": "msg_1", "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": full_text, "annotations": []}]}],
        "usage": {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}}}));
    let up = sse_upstream(sse(&events), 11).await;
    let addr = proxy(config(&up)).await;
    let got = send(
        &addr,
        "POST",
        "/v1/responses",
        r#"{"input":"x","stream":true}"#,
    )
    .await;
    assert_eq!(got.status, 200);
    assert_no_planted(&got.body, "responses");
    let evs = got.events();
    let deltas: String = evs
        .iter()
        .filter(|e| e["type"] == "response.output_text.delta")
        .filter_map(|e| e["delta"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(deltas, "card [CARD_REDACTED] end");
    let done = evs
        .iter()
        .find(|e| e["type"] == "response.output_text.done")
        .unwrap();
    assert_eq!(done["text"], "card [CARD_REDACTED] end");
    let completed = evs
        .iter()
        .find(|e| e["type"] == "response.completed")
        .unwrap();
    assert_eq!(
        completed["response"]["output"][0]["content"][0]["text"],
        "card [CARD_REDACTED] end"
    );
    assert_eq!(completed["response"]["usage"]["total_tokens"], 3);

    // Anthropic /v1/messages.
    let body = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"c\"}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"SSN 931-2\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"2-4410\"}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    );
    let up = sse_upstream(body.as_bytes().to_vec(), 4).await;
    let addr = proxy(config(&up)).await;
    let got = send(
        &addr,
        "POST",
        "/v1/messages",
        r#"{"model":"c","max_tokens":9,"messages":[]}"#,
    )
    .await;
    assert_eq!(got.status, 200);
    assert_no_planted(&got.body, "messages");
    let text: String = got
        .events()
        .iter()
        .filter_map(|e| e["delta"]["text"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(text, "SSN [US_SSN_REDACTED]");
    assert!(got.body.contains("event: content_block_stop"));
}

// 4. Streamed fields that were not scanned: each is one exact stream.
#[tokio::test]
async fn leak_unscanned_stream_fields() {
    let split = |a: &str, b: &str, make: &dyn Fn(&str) -> Value| vec![make(a), make(b)];
    let cases: Vec<(&str, Vec<Value>)> = vec![
        (
            "audio.transcript",
            split("mail qwzxjk", "vb@example.com.", &|t| {
                chunk(json!({"audio": {"id": "a1", "transcript": t}}))
            }),
        ),
        (
            "content parts",
            split("mail qwzxjk", "vb@example.com.", &|t| {
                chunk(json!({"content": [{"type": "text", "text": t}]}))
            }),
        ),
        (
            "reasoning_details",
            split("mail qwzxjk", "vb@example.com.", &|t| {
                chunk(json!({"reasoning_details": [{"type": "reasoning.text", "text": t}]}))
            }),
        ),
        (
            "choices.text",
            split(
                "mail qwzxjk",
                "vb@example.com.",
                &|t| json!({"choices": [{"index": 0, "text": t}]}),
            ),
        ),
        (
            "choices.message",
            split(
                "mail qwzxjk",
                "vb@example.com.",
                &|t| json!({"choices": [{"index": 0, "message": {"content": t}}]}),
            ),
        ),
        (
            "tool call arguments",
            split("{\"to\":\"qwzxjk", "vb@example.com\"}", &|t| {
                chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": t}}]}))
            }),
        ),
        (
            "unknown top-level",
            split(
                "mail qwzxjk",
                "vb@example.com.",
                &|t| json!({"choices": [], "x_note": {"delta": t}}),
            ),
        ),
        (
            "unknown delta field",
            split("mail qwzxjk", "vb@example.com.", &|t| {
                chunk(json!({"x_extra": t}))
            }),
        ),
    ];
    for (name, mut events) in cases {
        events.push(finish());
        for cut in [1, 7, 1000] {
            let up = sse_upstream(sse(&events), cut).await;
            let addr = proxy(config(&up)).await;
            let got = send(&addr, "POST", CHAT, &chat_request()).await;
            assert_eq!(got.status, 200, "{name}");
            assert_no_planted(&got.body, name);
            assert!(
                got.body.contains("[EMAIL_REDACTED]"),
                "{name}: {}",
                got.body
            );
        }
    }
    // Whole values inside a stream: a tool call's id and name, an unknown
    // top-level string.
    let events = [
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_qwzxjkvb@example.com", "type": "function", "function": {"name": "lookup-931-22-4410", "arguments": ""}}]}),
        ),
        json!({"choices": [], "x_meta": "owner qwzxjkvb@example.com"}),
        finish(),
    ];
    let up = sse_upstream(sse(&events), 9).await;
    let addr = proxy(config(&up)).await;
    let got = send(&addr, "POST", CHAT, &chat_request()).await;
    assert_eq!(got.status, 200);
    assert_no_planted(&got.body, "tool call id and name");
    let evs = got.events();
    assert_eq!(
        evs[0]["choices"][0]["delta"]["tool_calls"][0]["id"],
        "[EMAIL_REDACTED]"
    );
    assert_eq!(
        evs[0]["choices"][0]["delta"]["tool_calls"][0]["function"]["name"],
        "lookup-[US_SSN_REDACTED]"
    );
}

// 5. Framing the proxy does not understand is refused: a 502 before any
// byte, an error event after some; an SSE error body is scanned.
#[tokio::test]
async fn leak_framing() {
    let value_event = format!("{}", chunk(json!({"content": "mail qwzxjkvb@example.com"})));
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "json under text/event-stream",
            value_event.clone().into_bytes(),
            "text/event-stream",
        ),
        (
            "leading space",
            format!(" data: {value_event}\n\n").into_bytes(),
            "text/event-stream",
        ),
        (
            "BOM mid-stream",
            format!(
                "data: {}\n\n\u{feff}data: {value_event}\n\n",
                chunk(json!({"content": "hi "}))
            )
            .into_bytes(),
            "text/event-stream",
        ),
        (
            "plain text",
            b"mail qwzxjkvb@example.com".to_vec(),
            "text/plain",
        ),
        (
            "SSE under application/json",
            format!("data: {value_event}\n\n").into_bytes(),
            "application/json",
        ),
        (
            "unknown field",
            format!("x-data: {value_event}\n\n").into_bytes(),
            "text/event-stream",
        ),
        (
            "data that is not JSON",
            b"data: mail qwzxjkvb@example.com\n\n".to_vec(),
            "text/event-stream",
        ),
    ];
    for (name, body, ct) in cases {
        let up = upstream(Arc::new(move |_: &Seen| {
            pieces(head(200, ct, ""), &body, 13)
        }))
        .await;
        let addr = proxy(config(&up)).await;
        let got = send(&addr, "POST", CHAT, &chat_request()).await;
        assert_no_planted(&got.body, name);
        if got.status == 200 {
            // Some bytes went out first: the stream ends with an error event.
            let last = got.events().pop().unwrap();
            assert_eq!(last["error"]["type"], "proxy_error", "{name}: {}", got.body);
            assert!(!got.body.contains("[DONE]"), "{name}");
        } else {
            assert_eq!(got.status, 502, "{name}: {}", got.body);
        }
    }
    // An SSE body with an error status is scanned like any other.
    let body = sse(&[json!({"error": {"message": "no access for qwzxjkvb@example.com"}})]);
    let up = upstream(Arc::new(move |_: &Seen| {
        pieces(head(400, "text/event-stream", ""), &body, 5)
    }))
    .await;
    let addr = proxy(config(&up)).await;
    let got = send(&addr, "POST", CHAT, &chat_request()).await;
    assert_eq!(got.status, 400);
    assert_no_planted(&got.body, "SSE with status 400");
    assert!(got.body.contains("[EMAIL_REDACTED]"), "{}", got.body);
    // A JSON error body too; a non-JSON one is replaced.
    let up = json_upstream(
        404,
        json!({"error": {"message": "no user qwzxjkvb@example.com"}}),
    )
    .await;
    let addr = proxy(config(&up)).await;
    let got = send(&addr, "POST", CHAT, &chat_request()).await;
    assert_eq!(got.status, 404);
    assert_no_planted(&got.body, "JSON 404");
    let up = upstream(Arc::new(|_: &Seen| {
        pieces(
            head(500, "text/html", ""),
            b"<p>qwzxjkvb@example.com</p>",
            5,
        )
    }))
    .await;
    let addr = proxy(config(&up)).await;
    let got = send(&addr, "POST", CHAT, &chat_request()).await;
    assert_eq!(got.status, 500);
    assert_no_planted(&got.body, "HTML 500");
}

// 6. Request side: object keys, JSON numbers and the query string are
// masked before the upstream sees them.
#[tokio::test]
async fn leak_request_keys_numbers_query() {
    let up = upstream(Arc::new(|seen: &Seen| {
        // Echo what the upstream got, so the client sees it restored.
        let reply = json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": format!("{} {}", seen.target(), seen.body)}}]});
        pieces(head(200, "application/json", ""), reply.to_string().as_bytes(), 50)
    }))
    .await;
    let addr = proxy(config(&up)).await;
    let body = r#"{"model":"m","messages":[{"role":"user","content":"hi"}],"metadata":{"dan@example.com":"x","card":4111111111111111,"phone":2125550100,"ts":1700000000000}}"#;
    let got = send(
        &addr,
        "POST",
        "/v1/chat/completions?user=dan%40example.com&ip=10.1.2.3&n=2125550100",
        body,
    )
    .await;
    assert_eq!(got.status, 200);
    let seen = up.seen.lock().unwrap()[0].clone();
    // Ten bare digits (`2125550100`) are a US phone number to the request
    // side, as a number and in the query (see `leak_bare_us_phone_number`).
    for value in [
        "dan@example.com",
        "dan%40example.com",
        "4111111111111111",
        "10.1.2.3",
        "10%2E1",
        "2125550100",
    ] {
        assert!(
            !seen.body.contains(value) && !seen.target().contains(value),
            "{value} reached the upstream: {seen:?}"
        );
    }
    // A 13-digit timestamp is not a card.
    assert!(seen.body.contains("1700000000000"), "{}", seen.body);
    assert!(
        seen.target()
            .starts_with("/v1/chat/completions?user=%5BEMAIL_1%5D&ip=%5BIPV4_1%5D"),
        "{}",
        seen.target()
    );
    // The client gets its own values back, keys included.
    let content = got.json()["choices"][0]["message"]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        content.contains("dan@example.com")
            && content.contains("4111111111111111")
            && content.contains("\"phone\":\"2125550100\""),
        "{content}"
    );
}

// 6b. A US number written as ten bare digits, in text and as a JSON
// number, went upstream as it was: the `pii` pack's phone rule needs
// separators or `+1`. The request side masks it (a NANP check: area code
// and exchange start with 2-9 and are not N11, with no digit or letter
// glued to either end); the response side does not (see the README's
// table), so a number the model writes comes back as written.
#[tokio::test]
async fn leak_bare_us_phone_number() {
    let up = upstream(Arc::new(|seen: &Seen| {
        let reply = json!({"choices": [{"index": 0, "message": {"role": "assistant",
            "content": format!("{} | new 3125550199", seen.body)}}]});
        pieces(
            head(200, "application/json", ""),
            reply.to_string().as_bytes(),
            50,
        )
    }))
    .await;
    let addr = proxy(config(&up)).await;
    let negatives = [
        "1700000000",  // a Unix timestamp: the area code starts with 1
        "1234567890",  // area code starts with 1
        "21255501001", // 11 digits
        "ORD2125550100",
        "2125550100x",
        "2115550100", // area code N11
        "2124110100", // exchange N11
        "2120550100", // exchange starts with 0
        "20212555010",
        "21255501",
        "121255501001", // 12 digits
        "12115550100",  // 1, then area code N11
    ];
    let body = json!({
        "model": "m",
        "messages": [{"role": "user", "content": format!("call 2125550100 or (2125550100) or 12125550100; not {}", negatives.join(" "))}],
        "n": 2125550100u64,
        "metadata": {"ts": 1700000000u64, "id": 1234567890u64, "long": 21255501001u64, "other": 4155550134u64},
    })
    .to_string();
    let got = send(&addr, "POST", CHAT, &body).await;
    assert_eq!(got.status, 200, "{}", got.body);
    let seen = up.seen.lock().unwrap()[0].clone();
    let sent: Value = serde_json::from_str(&seen.body).unwrap();
    assert_eq!(
        sent["messages"][0]["content"],
        format!(
            "call [PHONE_1] or ([PHONE_1]) or [PHONE_2]; not {}",
            negatives.join(" ")
        )
    );
    // The number goes upstream as its placeholder, a string.
    assert_eq!(sent["n"], "[PHONE_1]");
    assert_eq!(sent["metadata"]["other"], "[PHONE_3]");
    for number in ["ts", "id", "long"] {
        assert!(sent["metadata"][number].is_u64(), "{}", seen.body);
    }
    assert!(
        seen.body
            .contains(r#""ts":1700000000,"id":1234567890,"long":21255501001"#),
        "{}",
        seen.body
    );
    // The client gets its numbers back; one the model wrote passes as it
    // came (ten bare digits in a reply are as often an id or an amount).
    let content = got.json()["choices"][0]["message"]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        content.contains("call 2125550100 or (2125550100) or 12125550100;")
            && content.contains(r#""n":"2125550100""#)
            && content.contains(r#""other":"4155550134""#)
            && content.ends_with(" | new 3125550199"),
        "{content}"
    );
    assert!(!content.contains("[PHONE_"), "{content}");
}

// Object keys of a response are scanned too: the request's placeholders
// come back, other values are redacted, streamed or whole.
#[tokio::test]
async fn response_object_keys_are_scanned() {
    let up = upstream(Arc::new(|seen: &Seen| {
        let v: Value = serde_json::from_str(&seen.body).unwrap();
        let stream = v["stream"].as_bool().unwrap();
        let echo = v["metadata"].clone();
        let body =
            json!({"object": "response", "metadata": echo, "extra": {"qwzxjkvb@example.com": 1}});
        if stream {
            let events = vec![json!({"type": "response.created", "response": body})];
            pieces(head(200, "text/event-stream", ""), &sse(&events), 5)
        } else {
            pieces(
                head(200, "application/json", ""),
                body.to_string().as_bytes(),
                5,
            )
        }
    }))
    .await;
    let addr = proxy(config(&up)).await;
    for stream in [false, true] {
        let req = json!({"model": "m", "stream": stream, "input": "x", "metadata": {"dan@example.com": "v"}});
        let got = send(&addr, "POST", "/v1/responses", &req.to_string()).await;
        assert_eq!(got.status, 200);
        assert_no_planted(&got.body, "response keys");
        assert!(
            !up.seen
                .lock()
                .unwrap()
                .iter()
                .any(|s| s.body.contains("dan@example.com"))
        );
        assert!(
            got.body.contains("\"dan@example.com\":\"v\""),
            "{}",
            got.body
        );
        assert!(got.body.contains("\"[EMAIL_REDACTED]\":1"), "{}", got.body);
    }
}

// 7. A compressed reply from an upstream that ignored `accept-encoding`
// is refused, not forwarded.
#[tokio::test]
async fn leak_gzip_response() {
    for encoding in ["gzip", "br", "deflate"] {
        let up = upstream(Arc::new(move |_: &Seen| {
            pieces(
                head(
                    200,
                    "application/json",
                    &format!("content-encoding: {encoding}\r\n"),
                ),
                b"\x1f\x8b\x08\x00qwzxjkvb@example.com",
                4,
            )
        }))
        .await;
        let addr = proxy(config(&up)).await;
        let got = send(&addr, "POST", CHAT, &chat_request()).await;
        assert_eq!(got.status, 502, "{encoding}");
        assert!(got.header("content-encoding").is_none());
        assert_no_planted(&got.body, encoding);
        let seen = up.seen.lock().unwrap()[0].clone();
        assert!(
            seen.head
                .to_ascii_lowercase()
                .contains("accept-encoding: identity")
        );
    }
}

// A placeholder the user typed comes back as typed: only the ones this
// request issued are restored.
#[tokio::test]
async fn typed_placeholders_are_not_restored() {
    let up = upstream(Arc::new(|seen: &Seen| {
        let v: Value = serde_json::from_str(&seen.body).unwrap();
        let masked = v["messages"][0]["content"].as_str().unwrap().to_owned();
        let events = vec![
            chunk(json!({"content": format!("{masked} [EMAIL_9]")})),
            finish(),
        ];
        pieces(head(200, "text/event-stream", ""), &sse(&events), 3)
    }))
    .await;
    let addr = proxy(config(&up)).await;
    let typed = "[EMAIL_1] and [US_SSN_1] are mine, ann@example.com too";
    let body =
        json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": typed}]});
    let got = send(&addr, "POST", CHAT, &body.to_string()).await;
    assert_eq!(got.status, 200);
    assert_eq!(joined_content(&got), format!("{typed} [EMAIL_9]"));
}

// Fidelity: big integers as written, no `usage: null` added, and a lone
// surrogate escape does not end the stream.
#[tokio::test]
async fn fidelity_of_numbers_usage_and_surrogates() {
    let body = concat!(
        "data: {\"id\":\"c\",\"seed\":123456789012345678901234567890,\"x\":1.50,\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a \\ud83d b \"},\"finish_reason\":null}]}\n\n",
        "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\\ud83d\\ude00 ok\"},\"finish_reason\":null}]}\n\n",
        "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
        "data: [DONE]\n\n",
    );
    let up = sse_upstream(body.as_bytes().to_vec(), 6).await;
    let addr = proxy(config(&up)).await;
    let got = send(&addr, "POST", CHAT, &chat_request()).await;
    assert_eq!(got.status, 200);
    assert!(
        got.body
            .contains("\"seed\":123456789012345678901234567890,\"x\":1.50"),
        "{}",
        got.body
    );
    assert!(!got.body.contains("usage"), "{}", got.body);
    assert_eq!(joined_content(&got), "a \u{fffd} b \u{1f600} ok");
    assert!(got.body.ends_with("data: [DONE]\n\n"));

    let up = upstream(Arc::new(|_: &Seen| {
        pieces(head(200, "application/json", ""), br#"{"id":"c","n":98765432109876543210987654321,"choices":[{"index":0,"message":{"content":"x\ud83d"}}]}"#, 9)
    }))
    .await;
    let addr = proxy(config(&up)).await;
    let got = send(&addr, "POST", CHAT, &chat_request()).await;
    assert_eq!(got.status, 200);
    assert!(
        got.body.contains("\"n\":98765432109876543210987654321"),
        "{}",
        got.body
    );
}

// The SSRF of issue 23: a path that names another authority stays on the
// configured upstream, and is refused there.
#[tokio::test]
async fn ssrf_path_cannot_change_the_authority() {
    let victim = upstream(Arc::new(|_: &Seen| {
        pieces(head(200, "application/json", ""), b"{\"secret\":1}", 99)
    }))
    .await;
    let up = json_upstream(200, json!({"ok": true})).await;
    // The base has no path: the case that used to join into another host.
    let addr = proxy(Config::new(&format!("http://{}", up.addr)).unwrap()).await;
    let port = victim.addr.rsplit(':').next().unwrap();
    for target in [
        format!("/v1@127.0.0.1:{port}/internal/admin"),
        format!("/v1/models@127.0.0.1:{port}/x"),
        format!("/v1/models/..%2F..%2F@127.0.0.1:{port}"),
        format!("//127.0.0.1:{port}/v1/models"),
    ] {
        let got = send(&addr, "GET", &target, "").await;
        assert!(
            got.status == 403 || got.status == 400,
            "{target}: {}",
            got.status
        );
    }
    assert!(victim.seen.lock().unwrap().is_empty());
    // A pass-through path goes to the upstream, under its base (here none:
    // the path after `/v1`).
    let got = send(&addr, "GET", "/v1/models/gpt-x", "").await;
    assert_eq!(got.status, 200);
    assert_eq!(up.seen.lock().unwrap()[0].target(), "/models/gpt-x");
}

// Every combination of field, endpoint, framing and encoding in the list:
// no byte of a planted value reaches the client.
#[tokio::test]
async fn no_planted_value_in_any_shape() {
    let values = PLANTED;
    let mut shapes: Vec<(String, &str, &'static str, Vec<u8>, &'static str)> = Vec::new();
    for (vi, value) in values.iter().enumerate() {
        let text = format!("ok {value} done");
        let (a, b) = text.split_at(text.len() / 2);
        // (name, path, content type, body, content-encoding)
        let chat_fields: Vec<(&str, MakeEvent)> = vec![
            ("content", Box::new(|t| chunk(json!({"content": t})))),
            (
                "reasoning_content",
                Box::new(|t| chunk(json!({"reasoning_content": t}))),
            ),
            ("refusal", Box::new(|t| chunk(json!({"refusal": t})))),
            (
                "arguments",
                Box::new(|t| {
                    chunk(json!({"tool_calls": [{"index": 1, "function": {"arguments": t}}]}))
                }),
            ),
            (
                "audio",
                Box::new(|t| chunk(json!({"audio": {"transcript": t}}))),
            ),
            (
                "parts",
                Box::new(|t| chunk(json!({"content": [{"type": "text", "text": t}]}))),
            ),
            (
                "second choice",
                Box::new(|t| json!({"choices": [{"index": 3, "delta": {"content": t}}]})),
            ),
            ("unknown", Box::new(|t| chunk(json!({"x": {"y": [t]}})))),
        ];
        for (field, make) in &chat_fields {
            shapes.push((
                format!("chat sse {field} {vi}"),
                CHAT,
                "text/event-stream",
                sse(&[make(a), make(b), finish()]),
                "",
            ));
            let mut whole = make(&text);
            whole["object"] = json!("chat.completion");
            shapes.push((
                format!("chat json {field} {vi}"),
                CHAT,
                "application/json",
                whole.to_string().into_bytes(),
                "",
            ));
        }
        shapes.push((
            format!("completions sse {vi}"),
            "/v1/completions",
            "text/event-stream",
            sse(&[
                json!({"choices": [{"index": 0, "text": a}]}),
                json!({"choices": [{"index": 0, "text": b}]}),
            ]),
            "",
        ));
        shapes.push((format!("responses sse {vi}"), "/v1/responses", "text/event-stream",
            sse(&[json!({"type": "response.output_text.delta", "item_id": "m", "output_index": 0, "content_index": 0, "delta": a}),
                  json!({"type": "response.output_text.delta", "item_id": "m", "output_index": 0, "content_index": 0, "delta": b}),
                  json!({"type": "response.output_text.done", "item_id": "m", "output_index": 0, "content_index": 0, "text": text})]), ""));
        shapes.push((format!("responses json {vi}"), "/v1/responses", "application/json",
            json!({"object": "response", "output": [{"type": "message", "content": [{"type": "output_text", "text": text}]}]}).to_string().into_bytes(), ""));
        shapes.push((format!("messages sse {vi}"), "/v1/messages", "text/event-stream",
            format!("event: content_block_delta\ndata: {}\n\nevent: content_block_delta\ndata: {}\n\n",
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": a}}),
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": b}})).into_bytes(), ""));
        shapes.push((
            format!("messages json {vi}"),
            "/v1/messages",
            "application/json",
            json!({"type": "message", "content": [{"type": "text", "text": text}]})
                .to_string()
                .into_bytes(),
            "",
        ));
        for enc in ["gzip", "br"] {
            shapes.push((
                format!("chat {enc} {vi}"),
                CHAT,
                "text/event-stream",
                sse(&[chunk(json!({"content": text}))]),
                enc,
            ));
        }
        shapes.push((
            format!("chat sse status 500 {vi}"),
            CHAT,
            "text/event-stream",
            sse(&[chunk(json!({"content": text}))]),
            "500",
        ));
    }
    let shapes = Arc::new(shapes);
    let table = Arc::clone(&shapes);
    let up = upstream(Arc::new(move |seen: &Seen| {
        let v: Value = serde_json::from_str(&seen.body).unwrap();
        let (_, _, ct, body, enc) = &table[v["shape"].as_u64().unwrap() as usize];
        let cut = v["cut"].as_u64().unwrap() as usize;
        let (status, extra) = match *enc {
            "" => (200, String::new()),
            "500" => (500, String::new()),
            e => (200, format!("content-encoding: {e}\r\n")),
        };
        pieces(head(status, ct, &extra), body, cut)
    }))
    .await;
    let addr = proxy(config(&up)).await;
    let mut runs = 0;
    for (i, (name, path, _, _, enc)) in shapes.iter().enumerate() {
        for cut in [4, 64] {
            let req = json!({"model": "m", "stream": true, "shape": i, "cut": cut, "messages": []});
            let got = send(&addr, "POST", path, &req.to_string()).await;
            assert_no_planted(&got.body, &format!("{name} cut {cut}"));
            // Scanned, not refused: the value is there as its redaction.
            match *enc {
                "" | "500" => {
                    assert_eq!(got.status, if enc.is_empty() { 200 } else { 500 }, "{name}");
                    assert!(
                        got.body.contains("_REDACTED]"),
                        "{name} cut {cut}: {}",
                        got.body
                    );
                }
                _ => assert_eq!(got.status, 502, "{name}"),
            }
            runs += 1;
        }
    }
    assert_eq!(runs, shapes.len() * 2);
    assert!(shapes.len() >= 80, "{}", shapes.len());
}
