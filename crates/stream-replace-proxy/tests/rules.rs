//! Rules from the settings file change what the client and the upstream
//! see: extra rules, the allowlist, packs, blocks, and the request-side
//! policies.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use stream_replace_proxy::{Config, Metrics, Settings, serve_metrics};

fn config(up: &Upstream, rules: &str) -> Config {
    let text = format!("upstream = {:?}\n{rules}", up.base);
    Settings::from_toml(&text, "proxy.toml", |_| None)
        .unwrap()
        .config
}

/// An upstream that answers `reply` as a stream of 3-character deltas cut
/// every 7 bytes when the request asks for a stream, else as one JSON
/// message.
async fn replying(reply: &'static str) -> Upstream {
    upstream(Arc::new(move |seen: &Seen| {
        if seen.body.contains("\"stream\":true") {
            let chars: Vec<char> = reply.chars().collect();
            let events: Vec<Value> = chars
                .chunks(3)
                .map(|c| {
                    let t: String = c.iter().collect();
                    json!({"choices": [{"index": 0, "delta": {"content": t}, "finish_reason": null}]})
                })
                .collect();
            pieces(head(200, "text/event-stream", ""), &sse(&events), 7)
        } else {
            let body = json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}]});
            vec![
                head(200, "application/json", ""),
                body.to_string().into_bytes(),
            ]
        }
    }))
    .await
}

/// The reply's text as the client got it, streamed or not.
async fn reply_text(addr: &str, stream: bool, content: &str) -> String {
    let body =
        json!({"model": "m", "stream": stream, "messages": [{"role": "user", "content": content}]});
    let got = send(addr, "POST", "/v1/chat/completions", &body.to_string()).await;
    assert_eq!(got.status, 200, "{}", got.body);
    if stream {
        got.events()
            .iter()
            .filter_map(|e| {
                e["choices"][0]["delta"]["content"]
                    .as_str()
                    .map(str::to_owned)
            })
            .collect()
    } else {
        got.json()["choices"][0]["message"]["content"]
            .as_str()
            .unwrap()
            .to_owned()
    }
}

const EXTRA_AND_ALLOW: &str = r#"
[rules]
allow = ["support@example.com"]
[[rules.extra]]
id = "ticket"
regex = "TCK-[0-9]{6}"
action = "redact"
"#;

#[tokio::test]
async fn an_extra_rule_and_the_allowlist_change_what_the_client_sees() {
    let up = replying("Mail support@example.com or ann@example.org about TCK-123456 today.").await;
    let built_in = proxy(Config::new(&up.base).unwrap()).await;
    let configured = proxy(config(&up, EXTRA_AND_ALLOW)).await;
    for stream in [true, false] {
        assert_eq!(
            reply_text(&built_in, stream, "hi").await,
            "Mail [EMAIL_REDACTED] or [EMAIL_REDACTED] about TCK-123456 today.",
            "stream: {stream}"
        );
        assert_eq!(
            reply_text(&configured, stream, "hi").await,
            "Mail support@example.com or [EMAIL_REDACTED] about [TICKET_REDACTED] today.",
            "stream: {stream}"
        );
    }
    // The request side too: the allowlisted address goes up as it is, the
    // ticket redacted, other values masked.
    reply_text(
        &configured,
        false,
        "ticket TCK-654321 from support@example.com and bob@example.net, call 2125550100",
    )
    .await;
    let seen = up.seen.lock().unwrap().last().unwrap().body.clone();
    assert!(
        seen.contains("ticket [TICKET_REDACTED] from support@example.com and [EMAIL_1]"),
        "{seen}"
    );
    // A configured set with the `pii` pack keeps the built-in request-side
    // rule for ten bare digits of a US number.
    assert!(
        !seen.contains("2125550100") && seen.contains("call [PHONE_1]"),
        "{seen}"
    );
}

#[tokio::test]
async fn the_secrets_pack_from_the_file_catches_a_github_token() {
    let token = "ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5";
    let up = replying("use ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5 or ann@example.org").await;
    let addr = proxy(config(&up, "[rules.packs.secrets]\n")).await;
    for stream in [true, false] {
        let text = reply_text(&addr, stream, "hi").await;
        // Only the secrets pack is listed: the address is not its to mask.
        assert_eq!(
            text, "use [GITHUB_TOKEN_REDACTED] or ann@example.org",
            "stream: {stream}"
        );
        assert!(!text.contains(&token[4..12]), "{text}");
    }
}

/// A rule that blocks the codename `Falcon`.
const CODENAME_BLOCK: &str = r#"
[[rules.extra]]
id = "codename"
literal = "Falcon"
action = "block"
reason = "an internal codename"
"#;

#[tokio::test]
async fn a_block_rule_refuses_the_request_and_ends_the_response() {
    let up = replying("The plan is Falcon, say nothing").await;
    let metrics = Metrics::new();
    let mut config = config(&up, CODENAME_BLOCK);
    config.metrics = Some(metrics.clone());
    let addr = proxy(config).await;

    let body =
        r#"{"model":"m","stream":true,"messages":[{"role":"user","content":"about Falcon"}]}"#;
    let got = send(&addr, "POST", "/v1/chat/completions", body).await;
    assert_eq!(got.status, 400, "{}", got.body);
    assert!(got.body.contains("codename"), "{}", got.body);
    assert!(up.seen.lock().unwrap().is_empty());

    let body = r#"{"model":"m","stream":true,"messages":[]}"#;
    let got = send(&addr, "POST", "/v1/chat/completions", body).await;
    assert_eq!(got.status, 200, "{}", got.body);
    assert!(got.body.contains("\"code\":\"blocked\""), "{}", got.body);
    assert!(got.body.contains("an internal codename"), "{}", got.body);
    for part in ["Falc", "nothing", "[DONE]"] {
        assert!(!got.body.contains(part), "{part}: {}", got.body);
    }
    let got = send(&addr, "POST", "/v1/chat/completions", r#"{"model":"m"}"#).await;
    assert_eq!(got.status, 502, "{}", got.body);
    assert!(!got.body.contains("Falc"), "{}", got.body);

    tokio::time::sleep(Duration::from_millis(100)).await;
    let scrape = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let scrape_addr = scrape.local_addr().unwrap().to_string();
    tokio::spawn(serve_metrics(scrape, metrics));
    let text = send(&scrape_addr, "GET", "/metrics", "").await.body;
    assert!(
        text.contains("stream_replace_proxy_rule_blocks_total{rule=\"codename\"} 3"),
        "{text}"
    );
}

#[tokio::test]
async fn masking_off_logprobs_refused_and_endpoints_refused() {
    let up = replying("hello").await;
    let rules = r#"
[endpoints]
refused = ["/v1/completions"]
[rules]
request_masking = false
logprobs = "refuse"
"#;
    let addr = proxy(config(&up, rules)).await;
    reply_text(&addr, false, "from ann@example.org").await;
    let seen = up.seen.lock().unwrap().last().unwrap().body.clone();
    assert!(seen.contains("from ann@example.org"), "{seen}");

    let body = r#"{"model":"m","logprobs":true,"messages":[]}"#;
    let got = send(&addr, "POST", "/v1/chat/completions", body).await;
    assert_eq!(got.status, 400, "{}", got.body);
    assert!(got.body.contains("logprobs"), "{}", got.body);

    let got = send(&addr, "POST", "/v1/completions", r#"{"model":"m"}"#).await;
    assert_eq!(got.status, 403, "{}", got.body);
    assert_eq!(up.seen.lock().unwrap().len(), 1);
}

/// Masking off sends a request as it came, but never one that holds a
/// value a block rule exists to stop: in the body or in the query.
#[tokio::test]
async fn masking_off_still_refuses_a_request_a_block_rule_stops() {
    let up = replying("hello").await;
    let rules = format!("[rules]\nrequest_masking = false\n{CODENAME_BLOCK}");
    let addr = proxy(config(&up, &rules)).await;
    reply_text(&addr, false, "from ann@example.org").await;
    let seen = up.seen.lock().unwrap().last().unwrap().body.clone();
    assert!(seen.contains("from ann@example.org"), "{seen}");

    let body = r#"{"model":"m","messages":[{"role":"user","content":"about Falcon"}]}"#;
    let got = send(&addr, "POST", "/v1/chat/completions", body).await;
    assert_eq!(got.status, 400, "{}", got.body);
    assert!(got.body.contains("codename"), "{}", got.body);
    assert!(!got.body.contains("Falc"), "{}", got.body);

    // In the query: a blocked value is refused; a query that does not
    // decode cannot be checked, so it is not sent either; one without a
    // blocked value goes up as it came.
    for (query, status, says) in [
        ("tag=Fal%63on", 400, "codename"),
        ("tag=%ZZ", 400, "does not parse"),
        ("tag=ann%40example.org", 200, "hello"),
    ] {
        let target = format!("/v1/chat/completions?{query}");
        let sent_before = up.seen.lock().unwrap().len();
        let got = send(&addr, "POST", &target, r#"{"model":"m"}"#).await;
        assert_eq!(got.status, status, "{query}: {}", got.body);
        assert!(got.body.contains(says), "{query}: {}", got.body);
        assert!(!got.body.contains("Falc"), "{}", got.body);
        let seen = up.seen.lock().unwrap();
        if status == 200 {
            assert_eq!(seen.last().unwrap().target(), target);
        } else {
            assert_eq!(seen.len(), sent_before, "{query} reached the upstream");
        }
    }
}

#[tokio::test]
async fn pii_blocks_on_make_an_ssn_block_instead_of_mask() {
    let up = replying("Her SSN is 123-45-6789, filed.").await;
    let masking = proxy(config(&up, "[rules.packs.pii]\nexclude = [\"ipv6\"]\n")).await;
    assert_eq!(
        reply_text(&masking, true, "hi").await,
        "Her SSN is [US_SSN_REDACTED], filed."
    );
    let blocking = proxy(config(&up, "[rules.packs.pii]\nblocks = true\n")).await;
    let body = r#"{"model":"m","stream":true,"messages":[]}"#;
    let got = send(&blocking, "POST", "/v1/chat/completions", body).await;
    assert!(got.body.contains("\"code\":\"blocked\""), "{}", got.body);
    for part in ["123-", "6789", "filed"] {
        assert!(!got.body.contains(part), "{part}: {}", got.body);
    }
    let seen_before = up.seen.lock().unwrap().len();
    let body = r#"{"model":"m","messages":[{"role":"user","content":"mine is 123-45-6789"}]}"#;
    let got = send(&blocking, "POST", "/v1/chat/completions", body).await;
    assert_eq!(got.status, 400, "{}", got.body);
    assert!(got.body.contains("us_ssn"), "{}", got.body);
    assert!(!got.body.contains("6789"), "{}", got.body);
    assert_eq!(up.seen.lock().unwrap().len(), seen_before);
}
