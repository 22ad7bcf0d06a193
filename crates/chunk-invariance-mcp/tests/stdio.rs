//! The server as a client sees it: the binary started as a child process,
//! spoken to in JSON-RPC messages, one a line, over its standard input and
//! output.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::Duration;

use serde_json::{Value, json};

// The test the server writes for the holding-back example on the cut after
// the key's `s`, compiled and run here: the emitted source builds, and
// passes for a chunk-invariant filter.
mod emitted {
    include!("emitted/holding_back_cut_at_5.rs");
}

const KEY_INPUT: &str = "use sk-AbCd1234 now";

/// A running server and the lines it has written.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
}

impl Server {
    fn start() -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_chunk-invariance-mcp"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the server starts");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Server {
            child,
            stdin,
            lines,
            next_id: 1,
        }
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{message}").expect("the server reads its stdin");
        stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str) {
        self.send(&json!({"jsonrpc": "2.0", "method": method}));
    }

    /// Sends a request and returns its response, skipping the server's
    /// own notifications.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            // Not a time limit on the server's speed: a guard, so that a
            // server that never answers fails the test instead of hanging
            // it.
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(120))
                .unwrap_or_else(|e| panic!("no response to {method}: {e}"));
            let message: Value =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
            assert_eq!(message["jsonrpc"], "2.0", "{message}");
            if message["id"] == json!(id) {
                return message;
            }
            assert!(
                message.get("id").is_none(),
                "a response to another request: {message}"
            );
        }
    }

    /// Calls a tool and returns its result.
    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let response = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        assert!(response.get("error").is_none(), "{response}");
        response["result"].clone()
    }

    /// Ends the session by closing the server's input, as a client does,
    /// and checks that it exits cleanly.
    fn close(mut self) {
        drop(self.stdin.take());
        let status = self.child.wait().unwrap();
        assert!(status.success(), "{status}");
    }
}

/// The text of a tool result's content block `i`.
fn text(result: &Value, i: usize) -> &str {
    assert_eq!(result["content"][i]["type"], "text", "{result}");
    result["content"][i]["text"].as_str().unwrap()
}

fn is_error(result: &Value) -> bool {
    result["isError"] == json!(true)
}

/// Whether `value` conforms to `schema`, for the keywords the server's
/// output schemas use; `Err` names the first place it does not.
fn conforms(value: &Value, schema: &Value, at: &str) -> Result<(), String> {
    let type_name = match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_u64() || n.is_i64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    let types: Vec<&str> = match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        other => return Err(format!("{at}: a schema without a type: {other}")),
    };
    if !types.contains(&type_name) {
        return Err(format!("{at}: a {type_name}, not one of {types:?}"));
    }
    if let Some(allowed) = schema["enum"].as_array()
        && !allowed.contains(value)
    {
        return Err(format!("{at}: {value} is not one of {allowed:?}"));
    }
    if let (Some(n), Some(min)) = (value.as_u64(), schema["minimum"].as_u64())
        && n < min
    {
        return Err(format!("{at}: {n} is below {min}"));
    }
    if let Value::Array(items) = value {
        for (i, item) in items.iter().enumerate() {
            conforms(item, &schema["items"], &format!("{at}[{i}]"))?;
        }
    }
    if let Value::Object(fields) = value {
        for required in schema["required"].as_array().into_iter().flatten() {
            let name = required.as_str().unwrap();
            if !fields.contains_key(name) {
                return Err(format!("{at}: no {name}"));
            }
        }
        for (name, field) in fields {
            match schema["properties"].get(name) {
                Some(field_schema) => conforms(field, field_schema, &format!("{at}.{name}"))?,
                None if schema["additionalProperties"] == json!(false) => {
                    return Err(format!("{at}: {name} is not in the schema"));
                }
                None => {}
            }
        }
    }
    Ok(())
}

/// Checks a successful tool result's structured content against the
/// tool's output schema.
fn assert_conforms(result: &Value, tool: &Value) {
    assert!(!is_error(result), "{result}");
    let schema = &tool["outputSchema"];
    assert_eq!(schema["type"], "object", "{tool}");
    if let Err(why) = conforms(&result["structuredContent"], schema, "structuredContent") {
        panic!("{why}: {result}");
    }
}

/// The property names of a tool's input schema, sorted.
fn properties(tool: &Value) -> Vec<&str> {
    let mut names: Vec<&str> = tool["inputSchema"]["properties"]
        .as_object()
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default();
    names.sort_unstable();
    names
}

#[test]
fn a_client_lists_and_calls_each_tool() {
    let mut server = Server::start();

    let init = server.request(
        "initialize",
        json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test-client", "version": "0"}
        }),
    );
    let info = &init["result"];
    assert_eq!(info["serverInfo"]["name"], "chunk-invariance-mcp", "{init}");
    assert_eq!(info["protocolVersion"], "2025-06-18", "{init}");
    assert!(info["capabilities"]["tools"].is_object(), "{init}");
    assert!(
        info["instructions"].as_str().unwrap().contains("synthetic"),
        "{init}"
    );
    server.notify("notifications/initialized");

    let listed = server.request("tools/list", json!({}));
    let tools = listed["result"]["tools"].as_array().unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        ["check_stream_filter", "explain", "write_regression_test"]
    );
    let tool = |name: &str| tools.iter().find(|t| t["name"] == name).unwrap();
    let check = tool("check_stream_filter");
    assert_eq!(
        properties(check),
        [
            "bytes",
            "command",
            "example",
            "framing",
            "input",
            "jobs",
            "pause_ms",
            "splits",
            "timeout_ms"
        ]
    );
    assert_eq!(check["inputSchema"]["required"], json!(["input"]));
    let examples: Vec<&Value> = check["inputSchema"]["$defs"]["Example"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| &v["const"])
        .collect();
    assert_eq!(examples, ["each_chunk", "carry_over", "holding_back"]);
    let regression = tool("write_regression_test");
    assert_eq!(
        properties(regression),
        [
            "cuts",
            "encoding",
            "example",
            "input",
            "split",
            "stream_filter",
            "test_name",
            "whole_filter"
        ]
    );
    assert_eq!(regression["inputSchema"]["required"], json!(["input"]));
    assert!(properties(tool("explain")).is_empty());
    assert!(
        tool("explain").get("outputSchema").is_none(),
        "it returns text only"
    );
    // The schema itself is checked against the results below; here, that it
    // names each field a report can have.
    let fields: Vec<&str> = check["outputSchema"]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    for field in [
        "ok",
        "kind",
        "splits_checked",
        "unconfirmed_runs",
        "split",
        "cuts",
        "report",
    ] {
        assert!(fields.contains(&field), "{field} in {check}");
    }
    for tool in tools {
        assert!(
            tool["description"].as_str().is_some_and(|d| d.len() > 100),
            "{tool}"
        );
    }

    // The per-chunk example: the report names the cut after the key's `s`.
    let checked = server.call(
        "check_stream_filter",
        json!({"example": "each_chunk", "input": KEY_INPUT}),
    );
    assert!(!is_error(&checked), "{checked}");
    let report = &checked["structuredContent"];
    assert_eq!(report["ok"], false, "{checked}");
    assert_eq!(report["kind"], "not_invariant", "{checked}");
    assert_eq!(
        report["split"],
        json!(["use s", "k-AbCd1234 now"]),
        "{checked}"
    );
    assert_eq!(report["cuts"], json!([5]), "{checked}");
    assert_eq!(report["whole"], "use [KEY] now", "{checked}");
    assert_eq!(report["streamed"], KEY_INPUT, "{checked}");
    assert!(
        text(&checked, 0).contains(r#"split:    ["use s", "k-AbCd1234 now"] (cut at 5)"#),
        "{checked}"
    );
    assert_eq!(text(&checked, 0), report["report"], "{checked}");
    assert_conforms(&checked, check);
    assert_eq!(
        serde_json::from_str::<Value>(text(&checked, 1)).unwrap(),
        *report
    );

    // The same design as a command: sed on each length-prefixed frame.
    let per_frame_sed = r#"while IFS= read -r n; do dd bs=1 count="$n" 2>/dev/null | sed -E 's/sk-[A-Za-z0-9]{8}/[KEY]/g'; done"#;
    let checked = server.call(
        "check_stream_filter",
        json!({"command": per_frame_sed, "framing": "length-prefixed", "input": KEY_INPUT}),
    );
    assert_eq!(
        checked["structuredContent"]["split"],
        json!(["use s", "k-AbCd1234 now"]),
        "{checked}"
    );
    assert_conforms(&checked, check);
    let checked = server.call(
        "check_stream_filter",
        json!({"command": "cat", "input": KEY_INPUT, "splits": "upto:3", "jobs": 2}),
    );
    assert_eq!(
        checked["structuredContent"],
        json!({"ok": true, "splits_checked": 1 + 18 + 153}),
        "{checked}"
    );
    assert_eq!(
        text(&checked, 0),
        "chunk-invariant: 172 splits checked, each gave the whole-input output"
    );
    assert_conforms(&checked, check);

    // A filter slow to start that replaces "secret" in each read on its
    // own: its reads see the cuts, so the check fails it (Linux, where the
    // pipe tells when a chunk has been taken).
    #[cfg(target_os = "linux")]
    {
        let per_read = "python3 -c 'import os, time\ntime.sleep(0.3)\nwhile True:\n    d = \
            os.read(0, 65536)\n    if not d: break\n    os.write(1, d.replace(b\"secret\", \
            b\"[X]\"))'";
        let checked = server.call(
            "check_stream_filter",
            json!({"command": per_read, "input": "my secret is here"}),
        );
        let report = &checked["structuredContent"];
        assert_eq!(report["ok"], false, "{checked}");
        assert_eq!(report["kind"], "not_invariant", "{checked}");
        assert_eq!(
            report["split"],
            json!(["my s", "ecret is here"]),
            "{checked}"
        );
        assert_conforms(&checked, check);

        let checked = server.call(
            "check_stream_filter",
            json!({"command": "sleep 60", "input": "abc", "timeout_ms": 300}),
        );
        assert_eq!(
            checked["structuredContent"]["kind"], "not_reading",
            "{checked}"
        );
        assert_conforms(&checked, check);
    }

    // Arguments the tool cannot use are an error the caller reads.
    for arguments in [
        json!({"example": "each_chunk", "command": "cat", "input": "x"}),
        json!({"input": "x"}),
        json!({"example": "each_chunk", "input": "x", "bytes": true}),
        json!({"command": "cat", "input": "x", "splits": "upto:0"}),
        json!({"command": "cat", "input": "seventeen chars!!", "splits": "all"}),
    ] {
        let failed = server.call("check_stream_filter", arguments.clone());
        assert!(is_error(&failed), "{arguments}: {failed}");
        assert!(!text(&failed, 0).is_empty(), "{failed}");
    }
    let failed = server.call("check_stream_filter", json!({"input": "x", "colour": 1}));
    assert!(is_error(&failed), "{failed}");
    assert!(
        text(&failed, 0).contains("unknown field `colour`"),
        "{failed}"
    );

    // A regression test for the failing split, from the check's report.
    let written = server.call(
        "write_regression_test",
        json!({"example": "each_chunk", "input": report["input"], "cuts": report["cuts"]}),
    );
    assert!(!is_error(&written), "{written}");
    assert!(text(&written, 0).contains("It fails today"), "{written}");
    assert!(
        text(&written, 0).contains(r#"split:    ["use s", "k-AbCd1234 now"] (cut at 5)"#),
        "{written}"
    );
    let source = text(&written, 1);
    assert_conforms(&written, regression);
    assert_eq!(written["structuredContent"]["source"], source, "{written}");
    assert_eq!(
        written["structuredContent"]["note"],
        text(&written, 0),
        "{written}"
    );
    for part in [
        "#[test]\nfn chunk_invariant_cut_at_5() {",
        "use chunk_invariance::{assert_chunk_invariant_with, Splits};",
        r#"let input = "use sk-AbCd1234 now";"#,
        r#"let split = vec!["use s", "k-AbCd1234 now"];"#,
        "chunk_invariance::examples::redact_each_chunk,",
        "chunk_invariance::examples::redact,",
        "Splits::explicit([split])",
    ] {
        assert!(source.contains(part), "{part:?} in {source}");
    }
    // The same split given as chunks, for the right design: the test the
    // `emitted` module compiles and runs.
    let written = server.call(
        "write_regression_test",
        json!({"example": "holding_back", "input": KEY_INPUT, "split": report["split"]}),
    );
    assert!(text(&written, 0).contains("It passes today"), "{written}");
    assert_eq!(
        text(&written, 1),
        include_str!("emitted/holding_back_cut_at_5.rs")
    );
    // Filters of the caller's own, and a byte input cut inside a character.
    let written = server.call(
        "write_regression_test",
        json!({
            "input": "c3a9",
            "split": ["c3", "a9"],
            "encoding": "hex",
            "stream_filter": "my_stream_filter",
            "whole_filter": "my_whole_filter",
            "test_name": "e_acute_cut_inside"
        }),
    );
    let source = text(&written, 1);
    assert!(source.contains("fn e_acute_cut_inside()"), "{source}");
    assert!(
        source.contains(r#"let input = &b"\xc3\xa9"[..];"#),
        "{source}"
    );
    assert!(
        source.contains(r#"let split = vec![&b"\xc3"[..], &b"\xa9"[..]];"#),
        "{source}"
    );
    assert!(
        source.contains("my_stream_filter,\n        my_whole_filter,"),
        "{source}"
    );
    for arguments in [
        json!({"example": "each_chunk", "input": "ab", "cuts": [3]}),
        json!({"example": "each_chunk", "input": "ab", "split": ["a", "c"]}),
        json!({"example": "each_chunk", "input": "é", "cuts": [1]}),
        json!({"input": "ab", "cuts": [1], "stream_filter": "f"}),
        json!({"example": "each_chunk", "input": "ab", "cuts": [1], "test_name": "a-b"}),
    ] {
        let failed = server.call("write_regression_test", arguments.clone());
        assert!(is_error(&failed), "{arguments}: {failed}");
    }

    // Why the designs fail, from the examples' real reports.
    let explained = server.call("explain", json!({}));
    let explanation = text(&explained, 0);
    for part in [
        "## redact_each_chunk (fails)",
        "Each chunk alone",
        "## redact_with_carry (fails)",
        "A fixed carry-over",
        r#"streamed: "use sKEY] now""#,
        "## redact_holding_back (passes)",
        "chunk-invariant: 19 splits checked",
    ] {
        assert!(explanation.contains(part), "{part:?} in {explanation}");
    }

    server.close();
}
