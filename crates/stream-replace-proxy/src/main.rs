//! `stream-replace-proxy`: the redacting proxy as a program.
//!
//! Reads `UPSTREAM_BASE_URL` (the upstream's `/v1` base, required),
//! `LISTEN_ADDR` (default `127.0.0.1:14000`) and `MAX_HELD_BYTES` (the cap
//! on the text one response field may hold back, default 1 MiB) from the
//! environment.

#![forbid(unsafe_code)]

use std::process::ExitCode;

use stream_replace_proxy::{serve, Config};

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
    if let Ok(max) = std::env::var("MAX_HELD_BYTES") {
        match max.parse() {
            Ok(max) => config = config.max_held(max),
            Err(_) => {
                eprintln!(
                    "stream-replace-proxy: MAX_HELD_BYTES must be a number of bytes, not {max:?}"
                );
                return ExitCode::from(2);
            }
        }
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
