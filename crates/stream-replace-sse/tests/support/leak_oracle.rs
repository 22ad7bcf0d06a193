//! The leak oracle of the response layers' tests: values only the
//! upstream knows, and a check that none of their bytes reached a client.
//!
//! `tests/layer.rs` here and the proxy's `tests/common/mod.rs` include
//! this file with `#[path]`, so both layers are held to one oracle.

use serde_json::Value;

/// Values only the upstream knows: none of their bytes may reach a client.
pub const PLANTED: &[&str] = &[
    "qwzxjkvb@example.com",
    "931-22-4410",
    "4242 4242 4242 4242",
    "DE89370400440532013000",
];

/// Panics if a run of 4 characters of a planted value (from an address's
/// local part only: its domain is not its own) is in `text`: raw, in the
/// decoded keys and strings of a JSON document in it (the whole text, or
/// one line, after an SSE `data: `), or as a list of byte values.
pub fn assert_no_planted(text: &str, context: &str) {
    let mut views = vec![text.to_owned()];
    let mut add_json = |data: &str| {
        if let Ok(v) = serde_json::from_str::<Value>(data) {
            let mut all = String::new();
            collect_strings(&v, &mut all);
            views.push(all);
        }
    };
    for line in text.lines() {
        add_json(line.strip_prefix("data: ").unwrap_or(line));
    }
    add_json(text);
    for value in PLANTED {
        let chars: Vec<char> = value.chars().collect();
        let local = value.find('@').unwrap_or(value.len());
        for (at, w) in chars.windows(4).enumerate() {
            if at >= local {
                break;
            }
            let run: String = w.iter().collect();
            for view in &views {
                assert!(
                    !view.contains(&run),
                    "{context}: {run:?} of {value} reached the client: {text}"
                );
            }
            let bytes: Vec<String> = run.bytes().map(|b| b.to_string()).collect();
            assert!(
                !text.contains(&bytes.join(",")),
                "{context}: the bytes of {run:?} of {value} reached the client: {text}"
            );
        }
    }
}

/// Appends every key and string in `v`, in order.
fn collect_strings(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => out.push_str(s),
        Value::Array(items) => items.iter().for_each(|v| collect_strings(v, out)),
        Value::Object(map) => map.iter().for_each(|(k, v)| {
            out.push_str(k);
            collect_strings(v, out);
        }),
        _ => {}
    }
}
