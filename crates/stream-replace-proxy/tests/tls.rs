//! An HTTPS upstream: a local rustls server whose certificate a CA made in
//! the test signed, trusted through the settings' `upstream_ca_file`.

mod common;

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use common::{PLANTED, assert_no_planted, proxy, send, sse};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use serde_json::json;
use stream_replace_proxy::Settings;
use tokio::net::TcpListener;

struct Tls {
    base: String,
    ca_file: std::path::PathBuf,
    connections: Arc<AtomicUsize>,
    versions: Arc<std::sync::Mutex<Vec<String>>>,
}

/// A TLS upstream offering `alpn`, answering every request with a stream
/// that carries the planted values split across events.
async fn tls_upstream(alpn: &[&[u8]]) -> Tls {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned()]).unwrap();
    let cert = params.signed_by(&key, &ca, &ca_key).unwrap();

    let dir = std::env::temp_dir().join(format!("srp-tls-{}-{}", std::process::id(), alpn.len()));
    std::fs::create_dir_all(&dir).unwrap();
    let ca_file = dir.join("ca.pem");
    std::fs::write(&ca_file, ca.pem()).unwrap();

    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut server = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![CertificateDer::from(cert.der().to_vec())],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        )
        .unwrap();
    server.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(server));

    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let connections = Arc::new(AtomicUsize::new(0));
    let versions: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let (count, seen) = (Arc::clone(&connections), Arc::clone(&versions));
    tokio::spawn(async move {
        loop {
            let (tcp, _) = listener.accept().await.unwrap();
            let acceptor = acceptor.clone();
            count.fetch_add(1, Ordering::SeqCst);
            let seen = Arc::clone(&seen);
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
                let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                    let seen = Arc::clone(&seen);
                    async move {
                        seen.lock().unwrap().push(format!("{:?}", req.version()));
                        let _ = req.into_body().collect().await;
                        let text = format!("Here: {}.", PLANTED.join(", "));
                        let events: Vec<_> = text
                            .as_bytes()
                            .chunks(4)
                            .map(|c| json!({"choices": [{"index": 0, "delta": {"content": String::from_utf8_lossy(c)}}]}))
                            .collect();
                        let response = Response::builder()
                            .header("content-type", "text/event-stream")
                            .body(Full::new(Bytes::from(sse(&events))))
                            .unwrap();
                        Ok::<_, Infallible>(response)
                    }
                });
                let io = TokioIo::new(tls);
                if h2 {
                    let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                        .serve_connection(io, service)
                        .await;
                } else {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, service)
                        .await;
                }
            });
        }
    });
    Tls {
        base: format!("https://{addr}/v1"),
        ca_file,
        connections,
        versions,
    }
}

fn settings(up: &Tls, with_ca: bool) -> Settings {
    let mut text = format!("upstream = {:?}\n", up.base);
    if with_ca {
        text.push_str(&format!(
            "upstream_ca_file = {:?}\n",
            up.ca_file.to_str().unwrap()
        ));
    }
    Settings::from_toml(&text, "proxy.toml", |_| None).unwrap()
}

const REQ: &str = r#"{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}"#;

async fn streamed_end_to_end(alpn: &[&[u8]], version: &str) {
    let up = tls_upstream(alpn).await;
    let addr = proxy(settings(&up, true).config).await;
    for _ in 0..2 {
        let got = send(&addr, "POST", "/v1/chat/completions", REQ).await;
        assert_eq!(got.status, 200, "{}", got.body);
        assert_no_planted(&got.body, "https upstream");
        assert!(got.body.contains("[EMAIL_REDACTED]"), "{}", got.body);
        assert!(got.body.ends_with("data: [DONE]\n\n"), "{}", got.body);
    }
    assert_eq!(*up.versions.lock().unwrap(), [version, version]);
    // Two requests, one TLS connection: it was reused.
    assert_eq!(up.connections.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn https_upstream_http1_streamed_end_to_end() {
    streamed_end_to_end(&[b"http/1.1"], "HTTP/1.1").await;
}

#[tokio::test]
async fn https_upstream_http2_streamed_end_to_end() {
    streamed_end_to_end(&[b"h2", b"http/1.1"], "HTTP/2.0").await;
}

#[tokio::test]
async fn an_untrusted_upstream_certificate_is_refused() {
    let up = tls_upstream(&[b"http/1.1", b"h2", b"x"]).await;
    let addr = proxy(settings(&up, false).config).await;
    let got = send(&addr, "POST", "/v1/chat/completions", REQ).await;
    assert_eq!(got.status, 502, "{}", got.body);
    assert!(up.versions.lock().unwrap().is_empty());
}

#[tokio::test]
async fn readyz_completes_a_tls_handshake_with_an_https_upstream() {
    // Four protocols: a directory of its own (see `tls_upstream`).
    let up = tls_upstream(&[b"http/1.1", b"h2", b"x", b"y"]).await;
    let addr = proxy(settings(&up, true).config).await;
    let got = send(&addr, "GET", "/readyz", "").await;
    assert_eq!(got.status, 200, "{}", got.body);
    assert_eq!(got.json()["status"], "ready");

    // The port answers, but its certificate is not one the proxy trusts:
    // requests would fail, so it is not ready.
    let addr = proxy(settings(&up, false).config).await;
    let got = send(&addr, "GET", "/readyz", "").await;
    assert_eq!(got.status, 503, "{}", got.body);
    assert_eq!(
        got.json()["reason"],
        "the TLS handshake with the upstream failed"
    );

    // A server that accepts the connection but does not speak TLS.
    let plain = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let plain_addr = plain.local_addr().unwrap();
    tokio::spawn(async move {
        use tokio::io::AsyncWriteExt;
        while let Ok((mut s, _)) = plain.accept().await {
            let _ = s
                .write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
                .await;
        }
    });
    let text = format!("upstream = \"https://{plain_addr}/v1\"\n");
    let config = Settings::from_toml(&text, "proxy.toml", |_| None)
        .unwrap()
        .config;
    let addr = proxy(config).await;
    let got = send(&addr, "GET", "/readyz", "").await;
    assert_eq!(got.status, 503, "{}", got.body);
    assert_eq!(
        got.json()["reason"],
        "the TLS handshake with the upstream failed"
    );
}
