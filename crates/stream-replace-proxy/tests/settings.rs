//! The settings file, the environment over it, and each kind of bad
//! setting rejected with its origin, key and reason.

use std::time::Duration;

use stream_replace_proxy::{LogprobsPolicy, Settings, SettingsError};

const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/proxy.toml");

fn no_env(_: &str) -> Option<String> {
    None
}

fn bad(text: &str) -> SettingsError {
    Settings::from_toml(text, "proxy.toml", no_env).unwrap_err()
}

#[test]
fn example_file_parses_with_its_documented_values() {
    let s = Settings::from_file(EXAMPLE, no_env).unwrap();
    assert_eq!(s.listen, "127.0.0.1:14000");
    assert_eq!(s.config.upstream_base(), "http://127.0.0.1:18799/v1");
    assert_eq!(s.log_level, "info");
    assert_eq!(s.metrics_listen.as_deref(), Some("127.0.0.1:14090"));
    assert_eq!(s.config.max_held, 1 << 20);
    assert_eq!(s.config.max_in_flight, 1024);
    assert_eq!(s.config.drain_timeout, Duration::from_secs(30));
    assert_eq!(s.config.ready_timeout, Duration::from_secs(2));
    assert_eq!(
        s.config.pass_through,
        ["/v1/models", "/v1/models/*", "/v1/embeddings"]
    );
}

#[test]
fn every_key_of_the_file_is_applied() {
    let text = r#"
        listen = "127.0.0.1:15000"
        upstream = "http://127.0.0.1:1/base"
        log_level = "warn"
        [limits]
        max_held_bytes = 11
        max_fields = 12
        max_event_bytes = 13
        max_request_bytes = 14
        max_response_bytes = 15
        max_values = 16
        max_connections = 17
        max_in_flight = 18
        [timeouts]
        header_read_ms = 21
        connect_ms = 22
        first_byte_ms = 23
        idle_ms = 24
        drain_ms = 25
        ready_ms = 26
        [endpoints]
        pass_through = ["/v1/models"]
    "#;
    let s = Settings::from_toml(text, "proxy.toml", no_env).unwrap();
    let c = &s.config;
    assert_eq!(
        (s.listen.as_str(), s.log_level.as_str()),
        ("127.0.0.1:15000", "warn")
    );
    assert_eq!(c.upstream_base(), "http://127.0.0.1:1/base");
    assert_eq!(
        [
            c.max_held,
            c.max_fields,
            c.max_event,
            c.max_request_body,
            c.max_response_body,
            c.max_values,
            c.max_connections,
            c.max_in_flight
        ],
        [11, 12, 13, 14, 15, 16, 17, 18]
    );
    let ms = |d: Duration| d.as_millis();
    assert_eq!(
        [
            ms(c.header_read_timeout),
            ms(c.connect_timeout),
            ms(c.first_byte_timeout),
            ms(c.idle_timeout),
            ms(c.drain_timeout),
            ms(c.ready_timeout)
        ],
        [21, 22, 23, 24, 25, 26]
    );
    assert_eq!(c.pass_through, ["/v1/models"]);
}

#[test]
fn environment_overrides_single_keys() {
    let env = |k: &str| match k {
        "UPSTREAM_BASE_URL" => Some("http://127.0.0.1:2/v1".to_owned()),
        "MAX_HELD_BYTES" => Some("4096".to_owned()),
        "DRAIN_TIMEOUT_MS" => Some("1500".to_owned()),
        "PASS_THROUGH" => Some("/v1/models, /v1/embeddings".to_owned()),
        _ => None,
    };
    let s = Settings::from_file(EXAMPLE, env).unwrap();
    assert_eq!(s.config.upstream_base(), "http://127.0.0.1:2/v1");
    assert_eq!(s.config.max_held, 4096);
    assert_eq!(s.config.drain_timeout, Duration::from_millis(1500));
    assert_eq!(s.config.pass_through, ["/v1/models", "/v1/embeddings"]);
    // The keys the environment does not name keep the file's values.
    assert_eq!(s.config.max_fields, 256);
    assert_eq!(s.listen, "127.0.0.1:14000");
}

#[test]
fn no_file_and_upstream_from_the_environment_is_enough() {
    let env = |k: &str| (k == "UPSTREAM_BASE_URL").then(|| "http://127.0.0.1:3/v1".to_owned());
    let s = Settings::from_toml("", "(no config file)", env).unwrap();
    assert_eq!(s.config.upstream_base(), "http://127.0.0.1:3/v1");
    let e = Settings::from_toml("", "(no config file)", no_env).unwrap_err();
    assert_eq!(
        (e.origin.as_str(), e.key.as_str()),
        ("(no config file)", "upstream")
    );
    assert!(e.reason.contains("required"), "{e}");
}

const UP: &str = "upstream = \"http://127.0.0.1:1/v1\"\n";

#[test]
fn bad_syntax_names_the_file_and_line() {
    let e = bad(&format!("{UP}[limits\nmax_fields = 3"));
    assert_eq!(e.origin, "proxy.toml");
    assert_eq!(e.key, "(syntax)");
    assert!(e.reason.contains("line 2"), "{e}");
}

#[test]
fn unknown_keys_are_rejected() {
    for (text, key) in [
        (format!("{UP}listn = \"127.0.0.1:1\""), "listn"),
        (format!("{UP}[rules]\nemail = true"), "rules.email"),
        (
            format!("{UP}[rules.packs.pii]\nblock = true"),
            "rules.packs.pii.block",
        ),
        (
            format!("{UP}[[rules.extra]]\nid = \"x\"\nliteral = \"y\"\npattern = \"z\""),
            "rules.extra[0].pattern",
        ),
        (format!("{UP}[limits]\nmax_held = 3"), "limits.max_held"),
        (format!("{UP}[timeouts]\nidle = 3"), "timeouts.idle"),
        (
            format!("{UP}[endpoints]\nhandled = []"),
            "endpoints.handled",
        ),
    ] {
        let e = bad(&text);
        assert_eq!(e.key, key, "{e}");
        assert!(e.reason.contains("unknown key"), "{e}");
        assert!(
            e.to_string().starts_with(&format!("proxy.toml: {key}: ")),
            "{e}"
        );
    }
}

#[test]
fn wrong_types_and_ranges_are_rejected() {
    for (text, key, reason) in [
        ("upstream = 3".to_owned(), "upstream", "expected a string"),
        (format!("{UP}limits = 3"), "limits", "expected a table"),
        (
            format!("{UP}[limits]\nmax_fields = \"many\""),
            "limits.max_fields",
            "whole number",
        ),
        (
            format!("{UP}[limits]\nmax_fields = 0"),
            "limits.max_fields",
            "whole number above 0",
        ),
        (
            format!("{UP}[limits]\nmax_fields = -4"),
            "limits.max_fields",
            "whole number above 0",
        ),
        (
            format!("{UP}[timeouts]\nidle_ms = 1.5"),
            "timeouts.idle_ms",
            "milliseconds",
        ),
        (
            format!("{UP}[endpoints]\npass_through = \"/v1/models\""),
            "endpoints.pass_through",
            "list of paths",
        ),
        (
            format!("{UP}[endpoints]\npass_through = [\"/admin\"]"),
            "endpoints.pass_through",
            "under /v1/",
        ),
        (
            format!("{UP}log_level = \"loud\""),
            "log_level",
            "expected one of",
        ),
        (
            format!("{UP}listen = \"everywhere\""),
            "listen",
            "an address",
        ),
    ] {
        let e = bad(&text);
        assert_eq!(e.origin, "proxy.toml");
        assert_eq!(e.key, key, "{e}");
        assert!(e.reason.contains(reason), "{e}");
    }
}

#[test]
fn bad_upstreams_are_rejected() {
    for url in [
        "localhost:8000",
        "ftp://h/v1",
        "http://user@h/v1",
        "http://h/v1?x=1",
    ] {
        let e = bad(&format!("upstream = {url:?}"));
        assert_eq!(
            (e.origin.as_str(), e.key.as_str()),
            ("proxy.toml", "upstream"),
            "{e}"
        );
        assert!(e.reason.contains("http:// or https:// URL"), "{e}");
    }
}

#[test]
fn bad_environment_values_name_the_variable() {
    let env = |k: &str| (k == "IDLE_TIMEOUT_MS").then(|| "soon".to_owned());
    let e = Settings::from_file(EXAMPLE, env).unwrap_err();
    assert_eq!(e.origin, "environment variable IDLE_TIMEOUT_MS");
    assert_eq!(e.key, "timeouts.idle_ms");
    assert!(e.reason.contains("\"soon\""), "{e}");

    let env = |k: &str| (k == "UPSTREAM_BASE_URL").then(|| "h:1".to_owned());
    let e = Settings::from_file(EXAMPLE, env).unwrap_err();
    assert_eq!(e.origin, "environment variable UPSTREAM_BASE_URL");
    assert_eq!(e.key, "upstream");
}

#[test]
fn unreadable_file_is_named() {
    let e = Settings::from_file("does/not/exist.toml", no_env).unwrap_err();
    assert_eq!(e.origin, "does/not/exist.toml");
    assert!(e.reason.contains("cannot be read"), "{e}");
}

#[test]
fn a_ca_file_that_is_missing_or_not_pem_is_rejected() {
    let e = bad(&format!("{UP}upstream_ca_file = \"no/such/ca.pem\""));
    assert_eq!(
        (e.origin.as_str(), e.key.as_str()),
        ("proxy.toml", "upstream_ca_file")
    );
    assert!(e.reason.contains("cannot be read"), "{e}");
    let e = bad(&format!("{UP}upstream_ca_file = {:?}", EXAMPLE));
    assert_eq!(e.key, "upstream_ca_file");
    assert!(e.reason.contains("no PEM certificate"), "{e}");
}

// The example's commented-out [rules] section, made live: every key it
// documents is one the settings read.
fn example_rules_uncommented() -> String {
    let text = std::fs::read_to_string(EXAMPLE).unwrap();
    let start = text
        .find("\n#[rules]")
        .expect("a commented [rules] section");
    let mut out = String::from(UP);
    for line in text[start..].lines() {
        match line.strip_prefix('#') {
            Some(rest) if rest.starts_with(|c: char| c.is_ascii_alphabetic() || c == '[') => {
                out.push_str(rest);
                out.push('\n');
            }
            _ => {}
        }
    }
    out
}

#[test]
fn the_example_rules_section_parses_and_is_applied() {
    let text = example_rules_uncommented();
    let s =
        Settings::from_toml(&text, "proxy.toml", no_env).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let ids: Vec<&str> = s.config.rules.ids().collect();
    for id in ["email", "github_token", "ticket", "codename"] {
        assert!(ids.contains(&id), "{id} missing: {ids:?}");
    }
    assert!(!ids.contains(&"ipv4"), "{ids:?}");
    // A rule in both packs is there once.
    assert_eq!(ids.iter().filter(|id| **id == "github_token").count(), 1);
    assert!(
        s.summary()
            .contains("packs: pii (blocks off), secrets (blocks off)"),
        "{}",
        s.summary()
    );
    assert!(
        s.summary().contains("extra: ticket, codename"),
        "{}",
        s.summary()
    );
    // The file's example is the built-in set: the rules are left as they
    // are and the policies at their defaults.
    let s = Settings::from_file(EXAMPLE, no_env).unwrap();
    assert_eq!(
        s.config.rules.len(),
        stream_replace_proxy::detectors().rules().len()
    );
    assert!(s.config.rules.request_masking);
    assert_eq!(s.config.rules.logprobs, LogprobsPolicy::Drop);
    assert!(s.config.refused.is_empty());
}

#[test]
fn rule_policies_and_refused_paths_are_applied_and_overridden() {
    let text = format!(
        "{UP}[endpoints]\nrefused = [\"/v1/completions\", \"/v1/models/*\"]\n[rules]\nrequest_masking = false\nlogprobs = \"refuse\"\n"
    );
    let s = Settings::from_toml(&text, "proxy.toml", no_env).unwrap();
    assert!(!s.config.rules.request_masking);
    assert_eq!(s.config.rules.logprobs, LogprobsPolicy::Refuse);
    assert_eq!(s.config.refused, ["/v1/completions", "/v1/models/*"]);
    let env = |k: &str| match k {
        "REQUEST_MASKING" => Some("true".to_owned()),
        "LOGPROBS" => Some("drop".to_owned()),
        "REFUSED_PATHS" => Some("/v1/messages".to_owned()),
        _ => None,
    };
    let s = Settings::from_toml(&text, "proxy.toml", env).unwrap();
    assert!(s.config.rules.request_masking);
    assert_eq!(s.config.rules.logprobs, LogprobsPolicy::Drop);
    assert_eq!(s.config.refused, ["/v1/messages"]);
    let env = |k: &str| (k == "LOGPROBS").then(|| "keep".to_owned());
    let e = Settings::from_toml(UP, "proxy.toml", env).unwrap_err();
    assert_eq!(e.origin, "environment variable LOGPROBS");
    assert_eq!(e.key, "rules.logprobs");
}

fn extra(body: &str) -> String {
    format!("{UP}[[rules.extra]]\n{body}")
}

#[test]
fn each_kind_of_bad_rule_is_rejected_with_file_key_and_reason() {
    for (text, key, reason) in [
        (
            extra("id = \"t\"\nregex = \"TCK-[0-9\""),
            "rules.extra[0].regex",
            "does not compile",
        ),
        (
            extra("id = \"t\"\nliteral = \"x\"\nvalidator = \"lunh\""),
            "rules.extra[0].validator",
            "unknown validator \"lunh\" (known: luhn,",
        ),
        (
            format!("{UP}[rules.packs.pyi]\n"),
            "rules.packs.pyi",
            "unknown pack \"pyi\" (known: pii, secrets)",
        ),
        (
            extra("id = \"email\"\nliteral = \"x\""),
            "rules.extra[0].id",
            "duplicate rule id \"email\" (also in the pii pack)",
        ),
        (
            format!(
                "{}[[rules.extra]]\nid = \"t\"\nliteral = \"y\"\n",
                extra("id = \"t\"\nliteral = \"x\"\n")
            ),
            "rules.extra[1].id",
            "duplicate rule id \"t\" (also in another extra rule)",
        ),
        (
            format!("{UP}[rules.packs.pii]\nexclude = [\"ipv5\"]\n"),
            "rules.packs.pii.exclude",
            "no rule \"ipv5\" in the pii pack",
        ),
        (
            extra("id = \"t\"\nliteral = \"x\"\naction = \"drop\""),
            "rules.extra[0].action",
            "expected mask, redact or block",
        ),
        (
            extra("id = \"t\"\nliteral = \"x\"\nreason = \"why\""),
            "rules.extra[0].reason",
            "for action = \"block\"",
        ),
        (
            extra("id = \"t\"\nliteral = \"x\"\nlabel = \"tck\""),
            "rules.extra[0].label",
            "upper-case letters",
        ),
        (
            extra("id = \"t\""),
            "rules.extra[0]",
            "a literal or a regex",
        ),
        (extra("literal = \"x\""), "rules.extra[0].id", "required"),
        (
            extra("id = \"a b\"\nliteral = \"x\""),
            "rules.extra[0].id",
            "expected letters, digits",
        ),
        (
            format!("{UP}[rules]\nlogprobs = \"keep\""),
            "rules.logprobs",
            "\"drop\" or \"refuse\"",
        ),
        (
            format!("{UP}[rules]\nallow = [\"\"]"),
            "rules.allow",
            "non-empty strings",
        ),
        (
            format!("{UP}[endpoints]\npass_through = [\"/v1/chat/completions\"]"),
            "endpoints.pass_through",
            "always scanned",
        ),
        (
            format!("{UP}[endpoints]\nrefused = [\"/v1/files\"]"),
            "endpoints.refused",
            "not a path the proxy routes",
        ),
    ] {
        let e = bad(&text);
        assert_eq!(e.origin, "proxy.toml", "{e}");
        assert_eq!(e.key, key, "{e}");
        assert!(e.reason.contains(reason), "{e}");
        assert!(
            e.to_string().starts_with(&format!("proxy.toml: {key}: ")),
            "{e}"
        );
    }
}
