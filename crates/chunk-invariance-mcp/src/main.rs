//! `chunk-invariance-mcp`: a Model Context Protocol server, on standard
//! input and output, that lets a coding assistant check that a streaming
//! filter gives the whole-input output for every split of its input.
//!
//! Its tools are `check_stream_filter` (a filter command, run as the
//! `chunk-invariance` command runs it, or a built-in example),
//! `write_regression_test` (a Rust `#[test]` that replays a failing split)
//! and `explain` (why per-chunk and carry-over designs fail, from the
//! examples' real reports). See the crate's README for how to register it
//! with a client.

#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(missing_debug_implementations)]

mod examples;
mod explain;
mod regression;
mod schema;
mod server;

use std::process::ExitCode;

use rmcp::ServiceExt;

use crate::server::Server;

// One thread is enough for the transport; the checks run on tokio's
// blocking pool, and a command's runs on threads of their own.
#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let served = match Server::new().serve(rmcp::transport::stdio()).await {
        Ok(service) => service.waiting().await.map(drop).map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Standard output is the protocol's: errors go to standard error.
            eprintln!("chunk-invariance-mcp: {e}");
            ExitCode::FAILURE
        }
    }
}
