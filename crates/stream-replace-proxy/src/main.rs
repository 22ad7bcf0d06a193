//! `stream-replace-proxy`: the redacting proxy as a program.
//!
//! Settings come from a TOML file (`--config`, see
//! `examples/proxy.toml`), then environment variables over single keys
//! (`UPSTREAM_BASE_URL`, `LISTEN_ADDR`, `MAX_HELD_BYTES`,
//! `IDLE_TIMEOUT_MS`, ...: see [`Settings::from_toml`]), then the
//! command line (`--listen`, `--upstream`). SIGTERM or SIGINT drains the
//! proxy and exits 0.

#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::Parser;
use stream_replace_proxy::{Metrics, Settings, serve_metrics, serve_with_shutdown};

/// An OpenAI-compatible redacting proxy: masks personal data in requests,
/// restores it and redacts new values in streamed responses.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Cli {
    /// The TOML settings file (see examples/proxy.toml in the crate).
    #[arg(long, value_name = "FILE")]
    config: Option<String>,
    /// The address to listen on, over the file and LISTEN_ADDR.
    #[arg(long, value_name = "ADDR")]
    listen: Option<String>,
    /// The upstream's /v1 base URL, over the file and UPSTREAM_BASE_URL.
    #[arg(long, value_name = "URL")]
    upstream: Option<String>,
    /// Read the settings, compile the rules, print a summary and exit.
    #[arg(long)]
    check_config: bool,
}

fn level(name: &str) -> tracing::Level {
    match name {
        "error" => tracing::Level::ERROR,
        "warn" => tracing::Level::WARN,
        "debug" => tracing::Level::DEBUG,
        "trace" => tracing::Level::TRACE,
        _ => tracing::Level::INFO,
    }
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    // The command line over the environment over the file.
    let env = |key: &str| match key {
        "LISTEN_ADDR" if cli.listen.is_some() => cli.listen.clone(),
        "UPSTREAM_BASE_URL" if cli.upstream.is_some() => cli.upstream.clone(),
        _ => std::env::var(key).ok(),
    };
    let settings = match &cli.config {
        Some(path) => Settings::from_file(path, env),
        None => Settings::from_toml("", "(no config file)", env),
    };
    let mut settings = match settings {
        Ok(settings) => settings,
        Err(e) => {
            eprintln!("stream-replace-proxy: {e}");
            return ExitCode::from(2);
        }
    };
    if cli.check_config {
        // Compiling the rules is the rest of what serving needs.
        if let Err(e) = settings.config.rules.check() {
            eprintln!("stream-replace-proxy: the rules do not compile: {e}");
            return ExitCode::from(2);
        }
        print!("{}", settings.summary());
        println!("rules compiled");
        return ExitCode::SUCCESS;
    }
    tracing_subscriber::fmt()
        .with_max_level(level(&settings.log_level))
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    let listener = match tokio::net::TcpListener::bind(&settings.listen).await {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!(
                "stream-replace-proxy: cannot listen on {}: {e}",
                settings.listen
            );
            return ExitCode::from(2);
        }
    };
    if let Some(addr) = &settings.metrics_listen {
        let metrics = Metrics::new();
        settings.config.metrics = Some(metrics.clone());
        match tokio::net::TcpListener::bind(addr).await {
            Ok(scrape) => {
                tokio::spawn(serve_metrics(scrape, metrics));
            }
            Err(e) => {
                eprintln!("stream-replace-proxy: cannot serve metrics on {addr}: {e}");
                return ExitCode::from(2);
            }
        }
    }
    tracing::info!(
        listen = %settings.listen,
        metrics = settings.metrics_listen.as_deref().unwrap_or("off"),
        upstream = settings.config.upstream_base(),
        "stream-replace-proxy listening"
    );
    match serve_with_shutdown(listener, settings.config, shutdown_signal()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("stream-replace-proxy: {e}");
            ExitCode::from(1)
        }
    }
}
