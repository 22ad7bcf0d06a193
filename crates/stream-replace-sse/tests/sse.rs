//! Field streams against hand-written upstream streams.
//!
//! The oracle: for every field, the text the client joins from the output
//! events equals `Rules::replace_all` of the text joined from the upstream
//! events; every upstream event comes out, in order, with only its
//! fragments changed; and the output is the same for every split of the
//! upstream bytes.

use std::collections::BTreeMap;

use chunk_invariance::{Splits, assert_chunk_invariant_with, per_chunk};
use serde_json::{Value, json};
use stream_replace::{Config, Rule, Rules};
use stream_replace_sse::{ErrorKind, Event, Format, Options, Parser, SseReplacer};

fn rules() -> Rules {
    Rules::builder()
        .regex(r"[\w.+-]+@[\w-]+\.\w+", "[EMAIL]")
        .regex(r"\b\d{3}-\d{2}-\d{4}\b", "[SSN]")
        .regex(r"sk-[A-Za-z0-9]{8}", "[KEY]")
        .literal("Voldemort", "He-Who-Must-Not-Be-Named")
        .build()
        .unwrap()
}

fn sse(data: &Value) -> String {
    format!("data: {data}\n\n")
}

fn named(event: &str, data: &Value) -> String {
    format!("event: {event}\ndata: {data}\n\n")
}

fn chunk(choice: u64, delta: Value, finish: Value) -> String {
    sse(&json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000,
        "model": "m", "choices": [{"index": choice, "delta": delta, "finish_reason": finish}],
    }))
}

fn run(
    rules: &Rules,
    format: Format,
    options: Options,
    reads: &[&[u8]],
) -> (Vec<u8>, Option<stream_replace_sse::Error>) {
    let mut s = SseReplacer::with_options(rules, format, options);
    let mut out = Vec::new();
    for read in reads {
        if let Err(e) = s.feed(read, &mut out) {
            return (out, Some(e));
        }
    }
    let e = s.finish(&mut out).err();
    (out, e)
}

fn whole(rules: &Rules, format: Format, input: &[u8]) -> Vec<u8> {
    let (out, err) = run(rules, format, Options::new(), &[input]);
    assert!(err.is_none(), "{err:?}");
    out
}

fn events(bytes: &[u8]) -> Vec<Event> {
    let mut parser = Parser::new();
    let mut events = Vec::new();
    parser.feed(bytes, &mut events);
    events.extend(parser.finish());
    events
}

fn json_of(event: &Event) -> Option<Value> {
    event.data().and_then(|d| serde_json::from_str(&d).ok())
}

// The fragments of one event, keyed by a path naming the field stream;
// written apart from the library's own walk.
fn fragments(format: &str, v: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    match format {
        "chat" => {
            for (pos, choice) in v["choices"].as_array().into_iter().flatten().enumerate() {
                let c = choice["index"].as_u64().unwrap_or(pos as u64);
                let d = &choice["delta"];
                for (f, v) in d.as_object().into_iter().flatten() {
                    if let (Some(s), false) = (v.as_str(), f == "role") {
                        out.push((format!("{c}/{f}"), s.to_owned()));
                    }
                }
                for (tpos, call) in d["tool_calls"].as_array().into_iter().flatten().enumerate() {
                    let t = call["index"].as_u64().unwrap_or(tpos as u64);
                    if let Some(s) = call["function"]["arguments"].as_str() {
                        out.push((format!("{c}/tool/{t}"), s.to_owned()));
                    }
                }
            }
        }
        "anthropic" => {
            let i = v["index"].as_u64().unwrap_or(0);
            let d = match v["type"].as_str() {
                Some("content_block_delta") => &v["delta"],
                Some("content_block_start") => &v["content_block"],
                _ => return out,
            };
            for f in ["text", "partial_json", "thinking"] {
                if let Some(s) = d[f].as_str() {
                    out.push((format!("{i}/{f}"), s.to_owned()));
                }
            }
        }
        _ => unreachable!(),
    }
    out
}

fn joined(format: &str, bytes: &[u8]) -> BTreeMap<String, String> {
    let mut fields: BTreeMap<String, String> = BTreeMap::new();
    for event in events(bytes) {
        if let Some(v) = json_of(&event) {
            for (k, s) in fragments(format, &v) {
                fields.entry(k).or_default().push_str(&s);
            }
        }
    }
    fields
}

// Blank every fragment, so events can be compared on everything else.
fn blanked(format: &str, event: &Event) -> String {
    let Some(mut v) = json_of(event) else {
        return String::from_utf8(event.to_bytes()).unwrap();
    };
    let keys: Vec<String> = fragments(format, &v).into_iter().map(|(k, _)| k).collect();
    if !keys.is_empty() {
        blank(&mut v);
    }
    let mut event = event.clone();
    event.set_data(&v.to_string());
    String::from_utf8(event.to_bytes()).unwrap()
}

fn blank(v: &mut Value) {
    blank_in(v, false)
}

// Under a `delta` or `content_block`, every string but the structural ones
// is a fragment.
fn blank_in(v: &mut Value, in_delta: bool) {
    match v {
        Value::Object(m) => {
            for (k, v) in m.iter_mut() {
                let structural =
                    matches!(k.as_str(), "role" | "type" | "id" | "name" | "signature");
                if in_delta && !structural && v.is_string() {
                    *v = Value::String(String::new());
                } else {
                    blank_in(v, in_delta || k == "delta" || k == "content_block");
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|v| blank_in(v, in_delta)),
        _ => {}
    }
}

// The whole oracle for one upstream stream and its output.
fn check(format_name: &str, rules: &Rules, upstream: &str, out: &[u8]) {
    let want: BTreeMap<String, String> = joined(format_name, upstream.as_bytes())
        .into_iter()
        .map(|(k, s)| (k, rules.replace_all(&s)))
        .collect();
    let got = joined(format_name, out);
    assert_eq!(got, want, "joined fields\n{}", String::from_utf8_lossy(out));
    // Every upstream event comes out, in order, with only fragments changed;
    // whatever else comes out carries only a fragment.
    let up: Vec<String> = events(upstream.as_bytes())
        .iter()
        .map(|e| blanked(format_name, e))
        .collect();
    let down: Vec<String> = events(out)
        .iter()
        .map(|e| blanked(format_name, e))
        .collect();
    let mut i = 0;
    for d in &down {
        if i < up.len() && *d == up[i] {
            i += 1;
        } else {
            let extra = events(d.as_bytes()).pop().unwrap();
            assert!(
                !fragments(format_name, &json_of(&extra).unwrap()).is_empty(),
                "an event neither upstream nor carrying a rest: {d}"
            );
        }
    }
    assert_eq!(
        i,
        up.len(),
        "upstream events lost\nout:\n{}",
        String::from_utf8_lossy(out)
    );
    assert!(down.len() - up.len() <= want.len());
}

fn chat_two_choices() -> String {
    let mut s = String::new();
    s += &chunk(0, json!({"role": "assistant", "content": ""}), Value::Null);
    s += &chunk(1, json!({"role": "assistant", "content": ""}), Value::Null);
    s += &chunk(0, json!({"content": "Mail ann@exa"}), Value::Null);
    s += &chunk(1, json!({"content": "SSN 123-4"}), Value::Null);
    s += &chunk(0, json!({"content": "mple.org, or"}), Value::Null);
    s += &chunk(1, json!({"content": "5-6789 and 123-4"}), Value::Null);
    s += &chunk(0, json!({"content": " Voldem"}), Value::Null);
    s += &chunk(0, json!({}), json!("stop"));
    s += &chunk(1, json!({"content": "5-67"}), json!("length"));
    s += &sse(
        &json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000,
        "model": "m", "choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 12, "total_tokens": 21}}),
    );
    s += "data: [DONE]\n\n";
    s
}

#[test]
fn openai_two_choices() {
    let rules = rules();
    let upstream = chat_two_choices();
    let out = whole(&rules, Format::OpenAiChat, upstream.as_bytes());
    check("chat", &rules, &upstream, &out);
    let got = joined("chat", &out);
    assert_eq!(got["0/content"], "Mail [EMAIL], or Voldem");
    assert_eq!(got["1/content"], "SSN [SSN] and 123-45-67");
    let text = String::from_utf8(out).unwrap();
    assert!(!text.contains("ann@"), "{text}");
    // Choice 0's held "Voldem" comes out in an extra chunk before its finish.
    let evs = events(text.as_bytes());
    let finish0 = evs
        .iter()
        .position(|e| json_of(e).is_some_and(|v| v["choices"][0]["finish_reason"] == "stop"))
        .unwrap();
    let before = json_of(&evs[finish0 - 1]).unwrap();
    assert_eq!(before["choices"][0]["delta"], json!({"content": "Voldem"}));
    assert_eq!(before["id"], "chatcmpl-1");
    assert_eq!(before["model"], "m");
    // The finishing chunk of choice 1 carries its own rest.
    let finish1 = json_of(&evs[finish0 + 1]).unwrap();
    assert_eq!(finish1["choices"][0]["finish_reason"], "length");
    assert_eq!(finish1["choices"][0]["delta"]["content"], "123-45-67");
    // Role, usage and [DONE] are kept, in place.
    assert_eq!(
        json_of(&evs[0]).unwrap()["choices"][0]["delta"]["role"],
        "assistant"
    );
    assert_eq!(
        json_of(&evs[evs.len() - 2]).unwrap()["usage"]["total_tokens"],
        21
    );
    assert_eq!(evs.last().unwrap().data().as_deref(), Some("[DONE]"));
}

#[test]
fn openai_empty_safe_text_is_forwarded_or_held() {
    let rules = rules();
    let mut upstream = String::new();
    upstream += &chunk(0, json!({"role": "assistant", "content": ""}), Value::Null);
    upstream += &chunk(0, json!({"content": "ann@"}), Value::Null);
    upstream += &chunk(0, json!({"content": "example.org"}), Value::Null);
    upstream += &chunk(0, json!({"content": "!"}), Value::Null);
    upstream += &chunk(0, json!({}), json!("stop"));
    upstream += "data: [DONE]\n\n";

    let (out, err) = run(
        &rules,
        Format::OpenAiChat,
        Options::new(),
        &[upstream.as_bytes()],
    );
    assert!(err.is_none());
    check("chat", &rules, &upstream, &out);
    let evs = events(&out);
    assert_eq!(evs.len(), events(upstream.as_bytes()).len());
    let contents: Vec<Value> = evs
        .iter()
        .filter_map(json_of)
        .map(|v| v["choices"][0]["delta"]["content"].clone())
        .collect();
    assert_eq!(
        contents,
        [
            json!(""),
            json!(""),
            json!(""),
            json!("[EMAIL]!"),
            Value::Null
        ]
    );

    let (held, err) = run(
        &rules,
        Format::OpenAiChat,
        Options::new().hold_empty(true),
        &[upstream.as_bytes()],
    );
    assert!(err.is_none());
    assert_eq!(joined("chat", &held), joined("chat", &out));
    // The role chunk is kept though its content is empty; the two chunks
    // whose text is all held are not forwarded.
    let evs = events(&held);
    assert_eq!(evs.len(), events(upstream.as_bytes()).len() - 2);
    assert_eq!(
        json_of(&evs[0]).unwrap()["choices"][0]["delta"]["role"],
        "assistant"
    );
}

#[test]
fn openai_tool_call_arguments_stay_valid_json() {
    let rules = rules();
    let args = r#"{"to": "ann@example.org", "cc": ["bob@example.net"], "note": "key sk-AbCd1234, say \"hi\" to Voldemort"}"#;
    let mut upstream = String::new();
    upstream += &chunk(
        0,
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"index": 0, "id": "call_1", "type": "function", "function": {"name": "send", "arguments": ""}}]}),
        Value::Null,
    );
    // Fragments cut inside the values, the escapes and the key.
    for piece in [
        &args[..9],
        &args[9..17],
        &args[17..40],
        &args[40..62],
        &args[62..75],
        &args[75..86],
        &args[86..],
    ] {
        upstream += &chunk(
            0,
            json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}),
            Value::Null,
        );
    }
    // A second call, in parallel.
    upstream += &chunk(
        0,
        json!({"tool_calls": [{"index": 1, "id": "call_2", "type": "function",
            "function": {"name": "log", "arguments": "{\"ssn\": \"123-45-"}}]}),
        Value::Null,
    );
    upstream += &chunk(
        0,
        json!({"tool_calls": [{"index": 1, "function": {"arguments": "6789\"}"}}]}),
        Value::Null,
    );
    upstream += &chunk(0, json!({}), json!("tool_calls"));
    upstream += "data: [DONE]\n\n";

    let out = whole(&rules, Format::OpenAiChat, upstream.as_bytes());
    check("chat", &rules, &upstream, &out);
    let got = joined("chat", &out);
    let call0: Value = serde_json::from_str(&got["0/tool/0"]).unwrap();
    assert_eq!(
        call0,
        json!({"to": "[EMAIL]", "cc": ["[EMAIL]"], "note": "key [KEY], say \"hi\" to He-Who-Must-Not-Be-Named"})
    );
    let call1: Value = serde_json::from_str(&got["0/tool/1"]).unwrap();
    assert_eq!(call1, json!({"ssn": "[SSN]"}));
    // The name and id of each call are kept.
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains(r#""id":"call_1","type":"function","function":{"name":"send","arguments":"#)
    );
    assert!(text.contains(r#""name":"log""#));
}

#[test]
fn replacement_with_quotes_is_escaped_in_the_event() {
    let rules = Rules::builder()
        .literal("secret", "\"[redacted]\"\\")
        .build()
        .unwrap();
    let mut upstream = String::new();
    upstream += &chunk(0, json!({"content": "a sec"}), Value::Null);
    upstream += &chunk(0, json!({"content": "ret b"}), json!("stop"));
    let out = whole(&rules, Format::OpenAiChat, upstream.as_bytes());
    check("chat", &rules, &upstream, &out);
    assert_eq!(joined("chat", &out)["0/content"], "a \"[redacted]\"\\ b");
}

fn anthropic_stream() -> String {
    let mut s = String::new();
    s += &named(
        "message_start",
        &json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
        "role": "assistant", "content": [], "model": "claude", "usage": {"input_tokens": 10, "output_tokens": 1}}}),
    );
    s += &named(
        "content_block_start",
        &json!({"type": "content_block_start", "index": 0,
        "content_block": {"type": "thinking", "thinking": ""}}),
    );
    s += &named(
        "content_block_delta",
        &json!({"type": "content_block_delta", "index": 0,
        "delta": {"type": "thinking_delta", "thinking": "their SSN is 123-45-67"}}),
    );
    s += &named(
        "content_block_delta",
        &json!({"type": "content_block_delta", "index": 0,
        "delta": {"type": "thinking_delta", "thinking": "89, so"}}),
    );
    s += &named(
        "content_block_delta",
        &json!({"type": "content_block_delta", "index": 0,
        "delta": {"type": "signature_delta", "signature": "c2ln"}}),
    );
    s += &named(
        "content_block_stop",
        &json!({"type": "content_block_stop", "index": 0}),
    );
    s += &named(
        "content_block_start",
        &json!({"type": "content_block_start", "index": 1,
        "content_block": {"type": "text", "text": ""}}),
    );
    s += "event: ping\ndata: {\"type\": \"ping\"}\n\n";
    s += &named(
        "content_block_delta",
        &json!({"type": "content_block_delta", "index": 1,
        "delta": {"type": "text_delta", "text": "Writing to ann@exam"}}),
    );
    s += &named(
        "content_block_delta",
        &json!({"type": "content_block_delta", "index": 1,
        "delta": {"type": "text_delta", "text": "ple.org"}}),
    );
    s += &named(
        "content_block_stop",
        &json!({"type": "content_block_stop", "index": 1}),
    );
    s += &named(
        "content_block_start",
        &json!({"type": "content_block_start", "index": 2,
        "content_block": {"type": "tool_use", "id": "toolu_1", "name": "send", "input": {}}}),
    );
    for piece in [
        "{\"to\": \"bob@",
        "example.net\", \"body\": \"",
        "hi Voldem",
        "ort\"}",
    ] {
        s += &named(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": 2,
            "delta": {"type": "input_json_delta", "partial_json": piece}}),
        );
    }
    s += &named(
        "content_block_stop",
        &json!({"type": "content_block_stop", "index": 2}),
    );
    s += &named(
        "message_delta",
        &json!({"type": "message_delta",
        "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 42}}),
    );
    s += &named("message_stop", &json!({"type": "message_stop"}));
    s
}

#[test]
fn anthropic_text_thinking_and_input_json() {
    let rules = rules();
    let upstream = anthropic_stream();
    let out = whole(&rules, Format::AnthropicMessages, upstream.as_bytes());
    check("anthropic", &rules, &upstream, &out);
    let got = joined("anthropic", &out);
    assert_eq!(got["0/thinking"], "their SSN is [SSN], so");
    assert_eq!(got["1/text"], "Writing to [EMAIL]");
    let input: Value = serde_json::from_str(&got["2/partial_json"]).unwrap();
    assert_eq!(
        input,
        json!({"to": "[EMAIL]", "body": "hi He-Who-Must-Not-Be-Named"})
    );
    let evs = events(&out);
    // Block 1's held email comes out in a content_block_delta right before
    // its content_block_stop.
    let stop1 = evs
        .iter()
        .position(|e| {
            json_of(e).is_some_and(|v| v["type"] == "content_block_stop" && v["index"] == 1)
        })
        .unwrap();
    assert_eq!(evs[stop1 - 1].event_type(), Some("content_block_delta"));
    assert_eq!(
        json_of(&evs[stop1 - 1]).unwrap(),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "[EMAIL]"}})
    );
    // Signature, ping, usage and stop are kept.
    let text = String::from_utf8(out.clone()).unwrap();
    assert!(text.contains(r#""signature":"c2ln""#));
    assert!(text.contains("event: ping\ndata: {\"type\": \"ping\"}\n\n"));
    assert!(text.contains(r#""usage":{"output_tokens":42}"#));
    assert!(text.ends_with("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"));
}

// Every cut of a short upstream stream, and random cuts of the longer
// ones, give the same output as one read.
#[test]
fn every_split_of_short_streams() {
    let rules = rules();
    let short_chat = {
        let mut s = chunk(
            0,
            json!({"role": "assistant", "content": "é ann@ex"}),
            Value::Null,
        );
        s += &chunk(0, json!({"content": "ample.org ü"}), json!("stop"));
        s += "data: [DONE]\n\n";
        s.replace('\n', "\r\n")
    };
    let short_anthropic = [
        named(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": "{\"to\": \"bob@"}}),
        ),
        named(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": "ex.net\"}"}}),
        ),
        named(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": 0}),
        ),
    ]
    .concat();
    let cases = [
        ("chat", Format::OpenAiChat, short_chat, Splits::TwoPart),
        (
            "anthropic",
            Format::AnthropicMessages,
            short_anthropic,
            Splits::TwoPart,
        ),
        (
            "chat",
            Format::OpenAiChat,
            chat_two_choices(),
            Splits::random(60, 7),
        ),
        (
            "anthropic",
            Format::AnthropicMessages,
            anthropic_stream(),
            Splits::random(60, 8),
        ),
    ];
    for (name, format, upstream, splits) in cases {
        let want = whole(&rules, format.clone(), upstream.as_bytes());
        check(name, &rules, &upstream, &want);
        let n = assert_chunk_invariant_with(
            per_chunk(
                |read: &[u8], s: &mut SseReplacer| {
                    let mut out = Vec::new();
                    s.feed(read, &mut out).unwrap();
                    out
                },
                || SseReplacer::new(&rules, format.clone()),
                |s| {
                    let mut out = Vec::new();
                    s.finish(&mut out).unwrap();
                    out
                },
            ),
            |_: &[u8]| want.clone(),
            upstream.as_bytes(),
            splits,
        );
        assert!(n >= 60);
    }
}

#[test]
fn line_endings_comments_and_fields() {
    let rules = rules();
    let format = Format::pointers(["/t"]).unwrap();
    let lf = ": hello\n\nid: 1\nevent: m\nretry: 500\ndata: {\"t\":\ndata: \"mail ann@ex\"}\n\n\
               data: {\"t\": \"ample.org\", \"n\": 1.5e3}\n\n";
    let out = whole(&rules, format.clone(), lf.as_bytes());
    // "ample.org" could still go on, so its event is sent empty and the
    // rest comes out at the end, in a copy of it. The number keeps its
    // exact value, written with an explicit exponent sign.
    let want = ": hello\n\nid: 1\nevent: m\nretry: 500\ndata: {\"t\":\"mail \"}\n\n\
                data: {\"t\":\"\",\"n\":1.5e+3}\n\n\
                data: {\"t\":\"[EMAIL]\",\"n\":1.5e+3}\n\n";
    assert_eq!(String::from_utf8(out.clone()).unwrap(), want);
    for ending in ["\r\n", "\r"] {
        let other = lf.replace('\n', ending);
        assert_eq!(
            whole(&rules, format.clone(), other.as_bytes()),
            out,
            "{ending:?}"
        );
    }
    // A byte-order mark at the start is skipped.
    let bom = format!("\u{feff}{lf}");
    assert_eq!(whole(&rules, format, bom.as_bytes()), out);
}

#[test]
fn pointer_rest_goes_out_before_done() {
    let rules = rules();
    let format = Format::pointers(["/delta/text", "/note"]).unwrap();
    let mut upstream = String::new();
    upstream += &named(
        "x",
        &json!({"delta": {"text": "to ann@"}, "note": "sk-AbCd", "n": 1}),
    );
    upstream += &named("x", &json!({"delta": {"text": "example.org"}, "n": 2}));
    upstream += "data: [DONE]\n\n";
    let out = String::from_utf8(whole(&rules, format, upstream.as_bytes())).unwrap();
    let want = [
        "event: x\ndata: {\"delta\":{\"text\":\"to \"},\"note\":\"\",\"n\":1}\n\n",
        "event: x\ndata: {\"delta\":{\"text\":\"\"},\"n\":2}\n\n",
        // Each rest in a copy of the last event that had its field (the
        // other fields' text blanked), in the order the streams opened.
        "event: x\ndata: {\"delta\":{\"text\":\"[EMAIL]\"},\"n\":2}\n\n",
        "event: x\ndata: {\"delta\":{\"text\":\"\"},\"note\":\"sk-AbCd\",\"n\":1}\n\n",
        "data: [DONE]\n\n",
    ]
    .concat();
    assert_eq!(out, want);
}

#[test]
fn held_limit_fails_closed() {
    let rules = Rules::builder()
        .regex(r"<think>[\s\S]*?</think>", "")
        .config(Config::new().max_held(24))
        .build()
        .unwrap();
    let mut upstream = String::new();
    upstream += &chunk(
        0,
        json!({"role": "assistant", "content": "ok <think>the user's"}),
        Value::Null,
    );
    upstream += &chunk(
        0,
        json!({"content": " password is hunter2 and"}),
        Value::Null,
    );
    upstream += &chunk(0, json!({"content": " extra</think> done"}), json!("stop"));
    upstream += "data: [DONE]\n\n";
    for cut in 0..=upstream.len() {
        let (out, err) = run(
            &rules,
            Format::OpenAiChat,
            Options::new(),
            &[&upstream.as_bytes()[..cut], &upstream.as_bytes()[cut..]],
        );
        let err = err.expect("the stream must fail");
        assert_eq!(err.held_limit().map(|e| e.limit()), Some(24));
        let text = String::from_utf8(out).unwrap();
        for leaked in [
            "think", "user", "password", "hunter2", "extra", "done", "[DONE]",
        ] {
            assert!(!text.contains(leaked), "{leaked:?} in {text}");
        }
        let evs = events(text.as_bytes());
        let last = json_of(evs.last().unwrap()).unwrap();
        assert_eq!(last["error"]["code"], "held_limit");
        assert_eq!(evs[0].data().map(|d| d.contains("\"ok \"")), Some(true));
    }
    // After a failure nothing more comes out.
    let mut s = SseReplacer::new(&rules, Format::OpenAiChat);
    let mut out = Vec::new();
    assert!(s.feed(upstream.as_bytes(), &mut out).is_err());
    let mut more = Vec::new();
    assert!(s.feed(b"data: [DONE]\n\n", &mut more).is_err());
    assert!(s.finish(&mut more).is_err());
    assert!(more.is_empty());
}

#[test]
fn a_block_fails_closed_with_the_rule_named() {
    let rules = Rules::builder()
        .add(
            Rule::regex(r"\d{3}-\d{2}-\d{4}", "[SSN]")
                .id("us_ssn")
                .block("SSN"),
        )
        .build()
        .unwrap();
    let mut upstream = String::new();
    upstream += &chunk(
        0,
        json!({"role": "assistant", "content": "ok. SSN 123-4"}),
        Value::Null,
    );
    upstream += &chunk(0, json!({"content": "5-6789 and the rest"}), json!("stop"));
    upstream += "data: [DONE]\n\n";
    for cut in 0..=upstream.len() {
        let (out, err) = run(
            &rules,
            Format::OpenAiChat,
            Options::new(),
            &[&upstream.as_bytes()[..cut], &upstream.as_bytes()[cut..]],
        );
        let err = err.expect("the stream must fail");
        let ErrorKind::Blocked(block) = err.kind() else {
            panic!("{err:?}");
        };
        assert_eq!((block.id(), block.reason()), ("us_ssn", "SSN"));
        let text = String::from_utf8(out).unwrap();
        for leaked in ["123", "45", "6789", "rest", "[DONE]"] {
            assert!(!text.contains(leaked), "{leaked:?} in {text}");
        }
        let evs = events(text.as_bytes());
        let last = json_of(evs.last().unwrap()).unwrap();
        assert_eq!(last["error"]["code"], "blocked");
        assert_eq!(joined("chat", text.as_bytes())["0/content"], "ok. SSN ");
    }
}

/// The joined text of every field of `out` but the error event, which
/// must be its last event.
fn before_error(format: &str, out: &[u8]) -> BTreeMap<String, String> {
    let evs = events(out);
    let (last, rest) = evs.split_last().expect("an error event");
    let error = json_of(last).unwrap();
    match format {
        "anthropic" => {
            assert_eq!(last.event_type(), Some("error"));
            assert_eq!(error["type"], "error");
        }
        _ => assert_eq!(error["error"]["code"], "blocked"),
    }
    let mut fields: BTreeMap<String, String> = BTreeMap::new();
    for event in rest {
        let v = json_of(event).unwrap();
        let frags = match format {
            "pointers" => v["t"]
                .as_str()
                .map(|t| vec![("t".to_owned(), t.to_owned())])
                .unwrap_or_default(),
            _ => fragments(format, &v),
        };
        for (k, s) in frags {
            fields.entry(k).or_default().push_str(&s);
        }
    }
    fields
}

/// Streams `upstream` cut once at every byte and checks that a block rule
/// stops it with the field's safe text before the match (what `evaluate`
/// gives for the field's whole text), then the error event, and nothing
/// else: not `leaked`, nor any event after.
fn check_block(
    rules: &Rules,
    format: (&str, Format),
    upstream: &str,
    field: (&str, &str),
    leaked: &[&str],
) {
    let (name, format) = format;
    let want = rules.evaluate(field.1);
    assert!(want.is_blocked(), "the case must block");
    for cut in 0..=upstream.len() {
        let (out, err) = run(
            rules,
            format.clone(),
            Options::new(),
            &[&upstream.as_bytes()[..cut], &upstream.as_bytes()[cut..]],
        );
        let err = err.expect("the stream must fail");
        assert!(
            matches!(err.kind(), ErrorKind::Blocked(b) if Some(b) == want.block()),
            "{err:?}"
        );
        let text = String::from_utf8(out).unwrap();
        for leaked in leaked {
            assert!(!text.contains(leaked), "{leaked:?} in {text}");
        }
        let fields = before_error(name, text.as_bytes());
        assert_eq!(
            fields.get(field.0).map(String::as_str).unwrap_or(""),
            want.text(),
            "cut at {cut}: {text}"
        );
    }
}

#[test]
fn a_block_sends_the_safe_text_before_the_match_then_the_error() {
    let rules = Rules::builder()
        .add(Rule::regex(r"\d{3}-\d{2}-\d{4}", "[SSN]").block("SSN"))
        .add(Rule::literal("ok", "OK"))
        .build()
        .unwrap();
    let leaked = ["123", "45", "6789", "rest", "[DONE]", "message_stop"];
    let field = "ok. SSN 123-45-6789 and the rest";

    let mut chat = chunk(
        0,
        json!({"role": "assistant", "content": "ok. SSN 123-4"}),
        Value::Null,
    );
    chat += &chunk(0, json!({"content": "5-6789 and the rest"}), json!("stop"));
    chat += "data: [DONE]\n\n";
    check_block(
        &rules,
        ("chat", Format::OpenAiChat),
        &chat,
        ("0/content", field),
        &leaked,
    );

    let start = |text: &str| {
        named(
            "content_block_start",
            &json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "text", "text": text}}),
        )
    };
    let delta = |text: &str| {
        named(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": text}}),
        )
    };
    let stop = named(
        "content_block_stop",
        &json!({"type": "content_block_stop", "index": 0}),
    ) + &named("message_stop", &json!({"type": "message_stop"}));
    let anthropic = start("") + &delta("ok. SSN 123-4") + &delta("5-6789 and the rest") + &stop;
    let format = ("anthropic", Format::AnthropicMessages);
    check_block(
        &rules,
        format.clone(),
        &anthropic,
        ("0/text", field),
        &leaked,
    );
    // Blocked in a block's first event: that event goes out with the safe
    // text.
    let anthropic = start(field) + &stop;
    check_block(&rules, format, &anthropic, ("0/text", field), &leaked);

    let pointers = sse(&json!({"t": "ok. SSN 123-4", "n": 1}))
        + &sse(&json!({"t": "5-6789 and the rest", "n": 2}));
    let format = ("pointers", Format::pointers(["/t"]).unwrap());
    check_block(&rules, format, &pointers, ("t", field), &leaked);
}

#[test]
fn a_block_decided_when_a_field_ends_sends_the_safe_text_before_it() {
    // `ab` is held for `abc` until the field ends; then `b$` blocks, and
    // `a` is safe.
    let rules = Rules::builder()
        .add(Rule::literal("abc", "X"))
        .add(Rule::regex("b$", "").block("ends in b"))
        .build()
        .unwrap();
    let field = "x ab";
    assert_eq!(rules.evaluate(field).text(), "x a");

    let chat = chunk(0, json!({"content": "x a"}), Value::Null)
        + &chunk(0, json!({"content": "b"}), Value::Null)
        + &chunk(0, json!({}), json!("stop"))
        + "data: [DONE]\n\n";
    let leaked = ["b\"", "[DONE]"];
    check_block(
        &rules,
        ("chat", Format::OpenAiChat),
        &chat,
        ("0/content", field),
        &leaked,
    );

    let anthropic = named(
        "content_block_delta",
        &json!({"type": "content_block_delta", "index": 0,
        "delta": {"type": "text_delta", "text": field}}),
    ) + &named(
        "content_block_stop",
        &json!({"type": "content_block_stop", "index": 0}),
    );
    let format = ("anthropic", Format::AnthropicMessages);
    check_block(&rules, format, &anthropic, ("0/text", field), &leaked);

    let pointers = sse(&json!({"t": "x a"})) + &sse(&json!({"t": "b"}));
    let format = ("pointers", Format::pointers(["/t"]).unwrap());
    check_block(&rules, format, &pointers, ("t", field), &leaked);
}

#[test]
fn anthropic_failure_is_an_error_event() {
    let rules = Rules::builder()
        .literal("password", "***")
        .config(Config::new().max_held(3))
        .build()
        .unwrap();
    let upstream = named(
        "content_block_delta",
        &json!({"type": "content_block_delta", "index": 0,
        "delta": {"type": "text_delta", "text": "passw"}}),
    );
    let (out, err) = run(
        &rules,
        Format::AnthropicMessages,
        Options::new(),
        &[upstream.as_bytes()],
    );
    assert!(err.is_some());
    let evs = events(&out);
    assert_eq!(evs.len(), 1);
    assert_eq!(evs[0].event_type(), Some("error"));
    assert_eq!(json_of(&evs[0]).unwrap()["error"]["type"], "api_error");
    assert!(!String::from_utf8(out).unwrap().contains("pass"));
}

#[test]
fn data_that_is_not_json_fails_closed() {
    let rules = rules();
    let mut upstream = chunk(0, json!({"content": "hi ann@"}), Value::Null);
    upstream += "data: {\"choices\": [{\"delta\": {\"content\": \"example.org\"}}\n\n";
    upstream += "data: [DONE]\n\n";
    let (out, err) = run(
        &rules,
        Format::OpenAiChat,
        Options::new(),
        &[upstream.as_bytes()],
    );
    assert!(matches!(err.unwrap().kind(), ErrorKind::InvalidJson { .. }));
    let text = String::from_utf8(out).unwrap();
    assert!(
        !text.contains("ann@") && !text.contains("example") && !text.contains("[DONE]"),
        "{text}"
    );
}

// Any string of the delta is text, as in a provider's own field.
#[test]
fn openai_other_delta_fields_are_streams_too() {
    let rules = rules();
    let mut upstream = String::new();
    upstream += &sse(
        &json!({"choices": [{"delta": {"content": "Record attached.", "role": "assistant"}}]}),
    );
    for piece in ["ann", "@exam", "ple.o", "rg"] {
        upstream += &sse(&json!({"choices": [{"delta": {"content": "", "record_field": piece}}]}));
    }
    upstream += "data: [DONE]\n\n";
    let out = whole(&rules, Format::OpenAiChat, upstream.as_bytes());
    check("chat", &rules, &upstream, &out);
    let got = joined("chat", &out);
    assert_eq!(got["0/record_field"], "[EMAIL]");
    assert_eq!(got["0/content"], "Record attached.");
    let text = String::from_utf8(out).unwrap();
    assert!(!text.contains("ann") && !text.contains("exam"), "{text}");
    assert!(text.contains(r#""role":"assistant""#));
}

#[test]
fn an_event_over_the_size_limit_fails_closed() {
    let rules = rules();
    let options = Options::new().max_event(300);
    let mut upstream = chunk(0, json!({"content": "fine "}), Value::Null);
    upstream += &format!(
        "data: {{\"choices\":[{{\"delta\":{{\"content\":\"{}",
        "ann@example.org ".repeat(30)
    );
    let (out, err) = run(
        &rules,
        Format::OpenAiChat,
        options.clone(),
        &[upstream.as_bytes()],
    );
    assert_eq!(
        err.unwrap().kind(),
        &ErrorKind::EventTooLarge { limit: 300 }
    );
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("\"fine \"") && text.contains("event_too_large") && !text.contains("ann@"),
        "{text}"
    );
    // A whole event over the limit, in one read, fails the same way.
    let big = chunk(0, json!({"content": "x".repeat(400)}), Value::Null);
    let (out, err) = run(&rules, Format::OpenAiChat, options, &[big.as_bytes()]);
    assert!(err.is_some());
    assert!(!String::from_utf8(out).unwrap().contains("xxxx"));
}

#[test]
fn numbers_keep_their_exact_value() {
    let rules = rules();
    let upstream = "data: {\"t\":\"hi \",\"seed\":123456789012345678901234567890,\"p\":0.1000000000000000055511151231257827}\n\n";
    let out = whole(
        &rules,
        Format::pointers(["/t"]).unwrap(),
        upstream.as_bytes(),
    );
    assert_eq!(String::from_utf8(out).unwrap(), upstream);
}
