//! The JSON Schemas of the tools' structured results, declared as their
//! `outputSchema` so that a client can rely on the fields.

use std::sync::Arc;

use rmcp::model::JsonObject;
use rmcp::serde_json::{Value, json};

/// The schema of `check_stream_filter`'s result: the object of
/// `chunk_invariance_cli::Outcome::to_json`.
pub(crate) fn check_output() -> Arc<JsonObject> {
    let bytes = "UTF-8 text, or lowercase hex (two digits a byte) when encoding is hex";
    object(json!({
        "type": "object",
        "description": "What the check found. ok is true only when every split gave the \
            whole-input output and the filter's reads saw every chunk boundary.",
        "properties": {
            "ok": {"type": "boolean"},
            "kind": {
                "type": "string",
                "enum": [
                    "not_invariant", "not_deterministic", "panicked", "failed",
                    "timeout", "not_reading", "crash", "unconfirmed"
                ],
                "description": "Why ok is false: a split gave another output (not_invariant), \
                    a re-run gave another output (not_deterministic), the filter panicked, \
                    failed, hung (timeout), stopped taking its input (not_reading) or \
                    crashed, or every split passed but the boundaries could not be confirmed \
                    to have reached the filter (unconfirmed)."
            },
            "splits_checked": {"type": "integer", "minimum": 0},
            "unconfirmed_runs": {
                "type": "integer",
                "minimum": 1,
                "description": "Runs in which a chunk was written before the filter was seen \
                    to take the one before."
            },
            "encoding": {"type": "string", "enum": ["utf-8", "hex"]},
            "input": {"type": "string", "description": bytes},
            "split": {
                "type": ["array", "null"],
                "items": {"type": "string"},
                "description": "The failing split's chunks; null when the whole-input run failed."
            },
            "cuts": {"type": ["array", "null"], "items": {"type": "integer", "minimum": 0}},
            "split_number": {"type": ["integer", "null"], "minimum": 0},
            "whole": {"type": "string", "description": bytes},
            "streamed": {"type": "string", "description": bytes},
            "first_difference": {"type": "integer", "minimum": 0},
            "message": {"type": "string"},
            "shrunk_from": {"type": ["array", "null"], "items": {"type": "integer", "minimum": 0}},
            "whole_again": {"type": "string"},
            "streamed_again": {"type": "string"},
            "failed_again": {"type": "string"},
            "rerun": {"type": "null"},
            "report": {"type": "string", "description": "The report as text."}
        },
        "required": ["ok"],
        "additionalProperties": false
    }))
}

/// The schema of `write_regression_test`'s result.
pub(crate) fn regression_output() -> Arc<JsonObject> {
    object(json!({
        "type": "object",
        "properties": {
            "note": {
                "type": "string",
                "description": "Where to save the test and, for a built-in example, whether it \
                    fails today."
            },
            "source": {"type": "string", "description": "The Rust source of the #[test]."}
        },
        "required": ["note", "source"],
        "additionalProperties": false
    }))
}

fn object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(object) => Arc::new(object),
        _ => unreachable!("a schema written as an object"),
    }
}
