//! Credentials found by their label (`password=…`, `Authorization: …`,
//! `scheme://user:pass@host`): each rule keeps the label and masks the
//! value, with a template.

use super::rule::{PackAction, PackRule};
use crate::validate;

pub(super) const URL_PASSWORD: PackRule = PackRule {
    id: "url_password",
    pattern: r#"://(?P<user>[^\s:/?#@"'<>\[\]]{0,128}):[^\s/?#@"'<>]{1,256}@"#,
    mask: "[PASSWORD]",
    action: PackAction::Mask,
    validator: None,
    template: Some("://${user}:[PASSWORD]@"),
    what: "The password of a URL's user information, in any scheme: \
           `postgres://admin:S3cr3t@db` becomes `postgres://admin:[PASSWORD]@db`, \
           `redis://:pw@cache` keeps its empty user.",
    misses: "A password containing an unencoded `/`, `?`, `#`, `@`, a quote or \
             whitespace (stops the match, so nothing is masked), one longer than \
             256 characters, and a URL without `://` (`user:pass@host` in an scp \
             path).",
};

pub(super) const AUTH_HEADER: PackRule = PackRule {
    id: "auth_header",
    pattern: r#"(?-u:\b)(?P<label>(?i-u:(?:proxy-)?authorization)["']?[ \t]*[:=][ \t]*["']?(?:(?i-u:bearer|basic|token|digest|negotiate|apikey|sso-key)[ \t]+)?)[\x21-\x7E&&[^"',;]]{8,}"#,
    mask: "[CREDENTIAL]",
    action: PackAction::Mask,
    validator: Some(validate::credential),
    template: Some("${label}[CREDENTIAL]"),
    what: "The credential of an `Authorization` or `Proxy-Authorization` header \
           (any case, as a header line, a JSON or YAML key, or `-H` argument) \
           after its scheme (`Bearer`, `Basic`, `Token`, ...): 8 or more \
           printable ASCII characters up to a quote, `,` or `;`.",
    misses: "Parameters after the first one in multi-part schemes (`Digest \
             username=\"x\", response=\"…\"` masks only `username=\"x\"`; AWS \
             SigV4 keeps its `Signature=`), credentials under 8 characters, and \
             values the credential check takes for words or code (see \
             `validate::credential`).",
};

pub(super) const COOKIE_HEADER: PackRule = PackRule {
    id: "cookie_header",
    pattern: r#"(?-u:\b)(?P<label>(?i-u:(?:set-)?cookie)["']?[ \t]*:[ \t]*["']?)[^\r\n"';=]+=[^\r\n"']*"#,
    mask: "[COOKIE]",
    action: PackAction::Mask,
    validator: None,
    template: Some("${label}[COOKIE]"),
    what: "The whole value of a `Cookie` or `Set-Cookie` header (any case) that \
           holds at least one `name=value`, up to the end of the line or a quote.",
    misses: "Cookies in other places (`document.cookie = …`, a cookie jar file), \
             and the rest of a value after a quote inside it. Attributes \
             (`Path=/`, `HttpOnly`) are masked with the cookie.",
};

pub(super) const BEARER_TOKEN: PackRule = PackRule {
    id: "bearer_token",
    pattern: r"(?-u:\b)(?P<label>(?:Bearer|bearer|BEARER)[ \t]+)[A-Za-z0-9._~+/-]{16,}=*",
    mask: "[TOKEN]",
    action: PackAction::Mask,
    validator: None,
    template: Some("${label}[TOKEN]"),
    what: "A bearer token (RFC 6750 `b64token`, 16 or more characters) after the \
           word `Bearer`, wherever it stands (a header is caught whole by \
           `auth_header` first).",
    misses: "Tokens under 16 characters, and tokens written after another word \
             (`token abc…`). A 16-character word after `bearer` in prose is masked.",
};

// The match starts at the keyword or at the `_`, `.` or `-` before it,
// not at the start of the key (`DB_PASSWORD`): the label is written back
// as it was, so the output is the same, and no match attempt has to live
// through every word of prose to find out whether a keyword ends it
// (BENCHMARKS.md, "Packs", measures what that attempt costs).
pub(super) const CREDENTIAL_ASSIGNMENT: PackRule = PackRule {
    id: "credential_assignment",
    pattern: concat!(
        r#"(?P<label>(?:(?-u:\b)|[_.-])"#,
        r"(?i-u:password|passwd|passphrase|secret|secret[_-]?key|token|auth|api[_-]?key|apikey|access[_-]?key|credentials?|session[_-]?id|sessionid)",
        r#"["']?[ \t]*(?:=|:|:=|=>)[ \t]*)"#,
        r#"(?:(?P<dq>")[^"\r\n]{4,}|(?P<sq>')[^'\r\n]{4,}|[\x21-\x7E&&[^"'`,;]]{4,})"#,
    ),
    mask: "[SECRET]",
    action: PackAction::Mask,
    validator: Some(validate::credential),
    template: Some("${label}${dq}${sq}[SECRET]"),
    what: "The value of a key that names a credential: `password`, `passwd`, \
           `passphrase`, `secret`, `secret_key`, `token`, `auth`, `api_key`, \
           `apikey`, `access_key`, `credential(s)`, `session_id`, in any case and \
           with any prefix (`DB_PASSWORD`, `AWS_SECRET_ACCESS_KEY`, `X-Api-Key`, \
           `client.secret`), then `=`, `:`, `:=` or `=>`: `.env` and shell \
           lines, `key: value` (YAML, HTTP headers, logs), JSON and Python \
           `\"key\": \"value\"`. A quoted value is masked up to its closing quote \
           (4 or more characters), a bare one as a run of printable ASCII \
           characters up to a quote, `,` or `;` (6 or more). The match starts at \
           the keyword or at the `_`, `.` or `-` before it (`_PASSWORD=…` in \
           `DB_PASSWORD=…`); the key is written back whole.",
    misses: "Keys with another name (`DATABASE_URL`, `STRIPE_SK`, `pin`) or a \
             suffix (`password_hash`, `token_id`); a bare value that reads as code \
             or a word, a placeholder and short values (see \
             `validate::credential`); the part of a bare value after a `,`, `;` or a \
             non-ASCII character, \
             and the part of a quoted one after an escaped quote (`\\\"`).",
};
