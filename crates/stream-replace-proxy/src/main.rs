//! `stream-replace-proxy`: the redacting proxy as a program.
//!
//! Reads its settings from the environment: `UPSTREAM_BASE_URL` (the
//! upstream's `/v1` base, required), `LISTEN_ADDR` (default
//! `127.0.0.1:14000`), and the limits and timeouts of [`Config`], each
//! optional (see the crate README for the defaults): `MAX_HELD_BYTES`,
//! `MAX_FIELDS`, `MAX_EVENT_BYTES`, `MAX_REQUEST_BYTES`,
//! `MAX_RESPONSE_BYTES`, `MAX_VALUES`, `MAX_CONNECTIONS`, `MAX_IN_FLIGHT`
//! (counts), `HEADER_READ_TIMEOUT_MS`, `CONNECT_TIMEOUT_MS`,
//! `FIRST_BYTE_TIMEOUT_MS`, `IDLE_TIMEOUT_MS` (milliseconds) and
//! `PASS_THROUGH` (comma-separated paths, `*` for one segment).

#![forbid(unsafe_code)]

use std::process::ExitCode;
use std::time::Duration;

use stream_replace_proxy::{serve, Config};

fn number(name: &str) -> Result<Option<usize>, String> {
    match std::env::var(name) {
        Err(_) => Ok(None),
        Ok(v) => v
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| format!("{name} must be a whole number, not {v:?}")),
    }
}

fn configure(config: &mut Config) -> Result<(), String> {
    let counts: [(&str, &mut usize); 8] = [
        ("MAX_HELD_BYTES", &mut config.max_held),
        ("MAX_FIELDS", &mut config.max_fields),
        ("MAX_EVENT_BYTES", &mut config.max_event),
        ("MAX_REQUEST_BYTES", &mut config.max_request_body),
        ("MAX_RESPONSE_BYTES", &mut config.max_response_body),
        ("MAX_VALUES", &mut config.max_values),
        ("MAX_CONNECTIONS", &mut config.max_connections),
        ("MAX_IN_FLIGHT", &mut config.max_in_flight),
    ];
    for (name, field) in counts {
        if let Some(n) = number(name)? {
            *field = n;
        }
    }
    let times: [(&str, &mut Duration); 4] = [
        ("HEADER_READ_TIMEOUT_MS", &mut config.header_read_timeout),
        ("CONNECT_TIMEOUT_MS", &mut config.connect_timeout),
        ("FIRST_BYTE_TIMEOUT_MS", &mut config.first_byte_timeout),
        ("IDLE_TIMEOUT_MS", &mut config.idle_timeout),
    ];
    for (name, field) in times {
        if let Some(ms) = number(name)? {
            *field = Duration::from_millis(ms as u64);
        }
    }
    if let Ok(list) = std::env::var("PASS_THROUGH") {
        config.pass_through = list
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(str::to_owned)
            .collect();
    }
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    let Ok(upstream) = std::env::var("UPSTREAM_BASE_URL") else {
        eprintln!("stream-replace-proxy: set UPSTREAM_BASE_URL to the upstream's /v1 base URL");
        return ExitCode::from(2);
    };
    let mut config = match Config::new(&upstream) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("stream-replace-proxy: {e}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = configure(&mut config) {
        eprintln!("stream-replace-proxy: {e}");
        return ExitCode::from(2);
    }
    let addr = std::env::var("LISTEN_ADDR").unwrap_or_else(|_| "127.0.0.1:14000".to_owned());
    let listener = match tokio::net::TcpListener::bind(&addr).await {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("stream-replace-proxy: cannot listen on {addr}: {e}");
            return ExitCode::from(2);
        }
    };
    eprintln!(
        "stream-replace-proxy: listening on {addr}, upstream {}",
        config.upstream_base()
    );
    match serve(listener, config).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("stream-replace-proxy: {e}");
            ExitCode::from(1)
        }
    }
}
