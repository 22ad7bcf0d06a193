//! Routing on the decoded, normalised path.

use stream_replace_sse::Api;

/// What the proxy does with a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Route {
    /// A model endpoint: the response is scanned.
    Scan(Api),
    /// Listed as pass-through: the response goes back as it came.
    PassThrough,
}

/// The model endpoints, as segments after `/v1`; `*` is any one segment.
const SCANNED: &[(&[&str], Api)] = &[
    (&["chat", "completions"], Api::OpenAi),
    (&["completions"], Api::OpenAi),
    (&["responses"], Api::OpenAi),
    (&["responses", "*"], Api::OpenAi),
    (&["messages"], Api::Anthropic),
];

/// The default pass-through list: responses that carry no generated text.
pub(crate) const DEFAULT_PASS_THROUGH: &[&str] = &["/v1/models", "/v1/models/*", "/v1/embeddings"];

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Decodes `%XX` escapes (and `+` as a space when `plus` is set); `None`
/// for a bad escape or text that is not UTF-8.
pub(crate) fn percent_decode(s: &str, plus: bool) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                let hi = hex(*b.get(i + 1)?)?;
                let lo = hex(*b.get(i + 2)?)?;
                out.push(hi << 4 | lo);
                i += 3;
            }
            b'+' if plus => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// Encodes every byte but the unreserved ones (`A-Z a-z 0-9 - . _ ~`).
pub(crate) fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The path's segments after decoding: `Err` for a path that does not
/// parse (a bad escape, an escape left after decoding, `.` or `..`, an
/// empty segment, a control character or a backslash).
pub(crate) fn normalise(path: &str) -> Result<Vec<String>, &'static str> {
    let decoded = percent_decode(path, false).ok_or("a bad percent escape")?;
    if decoded.contains('%') {
        return Err("an escape left after decoding");
    }
    if decoded.chars().any(|c| c.is_control() || c == '\\') {
        return Err("a control character or backslash");
    }
    let rest = decoded.strip_prefix('/').ok_or("no leading slash")?;
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let mut segments = Vec::new();
    for seg in rest.split('/') {
        if seg.is_empty() || seg == "." || seg == ".." {
            return Err("an empty, . or .. segment");
        }
        segments.push(seg.to_owned());
    }
    Ok(segments)
}

fn matches(pattern: &[&str], segments: &[String]) -> bool {
    pattern.len() == segments.len()
        && pattern
            .iter()
            .zip(segments)
            .all(|(p, s)| *p == "*" || p == s)
}

/// Whether `segments` match the path pattern `path` (`*` is one segment).
fn listed(path: &str, segments: &[String]) -> bool {
    let pattern: Vec<&str> = path.trim_matches('/').split('/').collect();
    matches(&pattern, segments)
}

/// The model endpoints as path patterns, such as `/v1/responses/*`.
pub(crate) fn model_endpoints() -> Vec<String> {
    SCANNED
        .iter()
        .map(|(p, _)| format!("/v1/{}", p.join("/")))
        .collect()
}

/// The route of the normalised `segments`, if any: `None` for a path the
/// proxy does not know or one listed in `refused`.
pub(crate) fn route(
    segments: &[String],
    pass_through: &[String],
    refused: &[String],
) -> Option<Route> {
    let (first, rest) = segments.split_first()?;
    if first != "v1" || refused.iter().any(|p| listed(p, segments)) {
        return None;
    }
    for (pattern, api) in SCANNED {
        if matches(pattern, rest) {
            return Some(Route::Scan(*api));
        }
    }
    pass_through
        .iter()
        .any(|p| listed(p, segments))
        .then_some(Route::PassThrough)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(path: &str) -> Option<Route> {
        let pass: Vec<String> = DEFAULT_PASS_THROUGH.iter().map(|s| s.to_string()).collect();
        route(&normalise(path).ok()?, &pass, &[])
    }

    #[test]
    fn spellings_of_a_model_endpoint_route_to_it() {
        for p in [
            "/v1/chat/completions",
            "/v1/chat/completion%73",
            "/v1/chat%2Fcompletions",
            "/v1/chat/completions/",
            "/%76%31/chat/completions",
        ] {
            assert_eq!(r(p), Some(Route::Scan(Api::OpenAi)), "{p}");
        }
        assert_eq!(r("/v1/messages"), Some(Route::Scan(Api::Anthropic)));
        assert_eq!(r("/v1/models/gpt-4o"), Some(Route::PassThrough));
    }

    #[test]
    fn refused_paths_do_not_route() {
        let pass = vec!["/v1/models/*".to_owned()];
        let refused = vec!["/v1/completions".to_owned(), "/v1/models/*".to_owned()];
        let r = |p: &str| route(&normalise(p).unwrap(), &pass, &refused);
        assert_eq!(r("/v1/completions"), None);
        assert_eq!(r("/v1/complet%69ons"), None);
        assert_eq!(r("/v1/models/m"), None);
        assert_eq!(r("/v1/chat/completions"), Some(Route::Scan(Api::OpenAi)));
        assert_eq!(
            model_endpoints(),
            [
                "/v1/chat/completions",
                "/v1/completions",
                "/v1/responses",
                "/v1/responses/*",
                "/v1/messages"
            ]
        );
    }

    #[test]
    fn other_paths_do_not_route() {
        for p in [
            "/v1@127.0.0.1:1/internal/admin",
            "/v1/chat/../completions",
            "/v1//chat/completions",
            "/v1/chat/completions%2500",
            "/v1/files",
            "/v2/chat/completions",
            "/v1/chat/completions%ZZ",
        ] {
            assert_eq!(r(p), None, "{p}");
        }
    }
}
