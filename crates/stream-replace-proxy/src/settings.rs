//! The operator's settings: a TOML file, environment variables over single
//! keys, and the command line over both.

use std::fmt;
use std::time::Duration;

use toml::{Table, Value};

use crate::proxy::Config;
use crate::route;
use crate::ruleset::{self, LogprobsPolicy, RuleAction, RuleSet, VALIDATORS};

/// Everything an operator sets: where to listen, and the proxy's
/// [`Config`].
///
/// Read from a TOML file (see `examples/proxy.toml` in the crate), then
/// overridden key by key by environment variables. A key the proxy does
/// not know is an error, not ignored.
///
/// # Example
///
/// ```
/// use stream_replace_proxy::Settings;
///
/// let text = r#"
/// upstream = "http://127.0.0.1:18799/v1"
/// listen = "127.0.0.1:14001"
/// [limits]
/// max_in_flight = 64
/// "#;
/// let settings = Settings::from_toml(text, "proxy.toml", |_| None)?;
/// assert_eq!(settings.listen, "127.0.0.1:14001");
/// assert_eq!(settings.config.max_in_flight, 64);
///
/// let bad = Settings::from_toml("[limits]\nmax_in_flight = -1", "proxy.toml", |_| None);
/// assert!(bad.unwrap_err().to_string().contains("limits.max_in_flight"));
/// # Ok::<(), stream_replace_proxy::SettingsError>(())
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Settings {
    /// The address the proxy listens on (`127.0.0.1:14000`).
    pub listen: String,
    /// The upstream and the limits.
    pub config: Config,
    /// Where the metrics are served in the Prometheus text format (none by
    /// default): an address of its own, not the proxy's.
    pub metrics_listen: Option<String>,
    /// The most detailed log level printed: `error`, `warn`, `info`
    /// (the default), `debug` or `trace`.
    pub log_level: String,
}

/// A setting that cannot be used: where it came from, the key, and why.
///
/// # Example
///
/// ```
/// use stream_replace_proxy::Settings;
///
/// let e = Settings::from_toml("upstream = 3", "proxy.toml", |_| None).unwrap_err();
/// assert_eq!(e.key, "upstream");
/// assert!(e.to_string().starts_with("proxy.toml: upstream:"));
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct SettingsError {
    /// The file, or the environment variable, the value came from.
    pub origin: String,
    /// The key, dotted (`limits.max_held_bytes`).
    pub key: String,
    /// What is wrong with it.
    pub reason: String,
}

impl fmt::Display for SettingsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.origin, self.key, self.reason)
    }
}

impl std::error::Error for SettingsError {}

// A count: (key in [limits], environment variable).
const COUNTS: &[(&str, &str)] = &[
    ("max_held_bytes", "MAX_HELD_BYTES"),
    ("max_fields", "MAX_FIELDS"),
    ("max_event_bytes", "MAX_EVENT_BYTES"),
    ("max_request_bytes", "MAX_REQUEST_BYTES"),
    ("max_response_bytes", "MAX_RESPONSE_BYTES"),
    ("max_values", "MAX_VALUES"),
    ("max_connections", "MAX_CONNECTIONS"),
    ("max_in_flight", "MAX_IN_FLIGHT"),
];

// A time in milliseconds: (key in [timeouts], environment variable).
const TIMES: &[(&str, &str)] = &[
    ("header_read_ms", "HEADER_READ_TIMEOUT_MS"),
    ("connect_ms", "CONNECT_TIMEOUT_MS"),
    ("first_byte_ms", "FIRST_BYTE_TIMEOUT_MS"),
    ("idle_ms", "IDLE_TIMEOUT_MS"),
    ("drain_ms", "DRAIN_TIMEOUT_MS"),
    ("ready_ms", "READY_TIMEOUT_MS"),
];

const LEVELS: &[&str] = &["error", "warn", "info", "debug", "trace"];

type Err<'a> = &'a dyn Fn(&str, String) -> SettingsError;

fn string_list(v: &Value) -> Option<Vec<String>> {
    v.as_array()?
        .iter()
        .map(|s| s.as_str().filter(|s| !s.is_empty()).map(str::to_owned))
        .collect()
}

fn paths_under_v1(v: &Value, key: &str, err: Err<'_>) -> Result<Vec<String>, SettingsError> {
    let list = v.as_array().ok_or_else(|| {
        err(
            key,
            format!("expected a list of paths, found {}", v.type_str()),
        )
    })?;
    let mut paths = Vec::new();
    for p in list {
        match p.as_str() {
            Some(p) if p.starts_with("/v1/") => paths.push(p.to_owned()),
            _ => return Err(err(key, format!("expected paths under /v1/, found {p}"))),
        }
    }
    Ok(paths)
}

fn logprobs_policy(v: &str) -> Option<LogprobsPolicy> {
    match v {
        "drop" => Some(LogprobsPolicy::Drop),
        "refuse" => Some(LogprobsPolicy::Refuse),
        _ => None,
    }
}

/// The `[rules]` table: packs first (listing any replaces the built-in
/// `pii` set), then the policies, the allowlist and the extra rules.
fn parse_rules(value: &Value, err: Err<'_>) -> Result<RuleSet, SettingsError> {
    let table = value.as_table().ok_or_else(|| {
        err(
            "rules",
            format!("expected a table, found {}", value.type_str()),
        )
    })?;
    let mut set = RuleSet::default();
    if let Some(packs) = table.get("packs") {
        let packs = packs.as_table().ok_or_else(|| {
            err(
                "rules.packs",
                format!(
                    "expected a table of packs such as [rules.packs.pii], found {}",
                    packs.type_str()
                ),
            )
        })?;
        set.clear_rules();
        for (name, options) in packs {
            let key = format!("rules.packs.{name}");
            let options = options.as_table().ok_or_else(|| {
                err(
                    &key,
                    format!(
                        "expected a table (blocks, exclude), found {}",
                        options.type_str()
                    ),
                )
            })?;
            let mut blocks = false;
            let mut exclude = Vec::new();
            for (k, v) in options {
                let dotted = format!("{key}.{k}");
                match k.as_str() {
                    "blocks" => {
                        blocks = v.as_bool().ok_or_else(|| {
                            err(&dotted, format!("expected true or false, found {v}"))
                        })?
                    }
                    "exclude" => {
                        exclude = string_list(v).ok_or_else(|| {
                            err(&dotted, format!("expected a list of rule ids, found {v}"))
                        })?
                    }
                    _ => {
                        return Err(err(
                            &dotted,
                            "unknown key (a pack reads blocks and exclude)".to_owned(),
                        ));
                    }
                }
            }
            set.add_pack(name, blocks, &exclude).map_err(|reason| {
                if reason.starts_with("unknown pack") {
                    err(&key, reason)
                } else {
                    err(&format!("{key}.exclude"), reason)
                }
            })?;
        }
    }
    for (k, v) in table {
        let dotted = format!("rules.{k}");
        match k.as_str() {
            "packs" => {}
            "request_masking" => {
                set.request_masking = v
                    .as_bool()
                    .ok_or_else(|| err(&dotted, format!("expected true or false, found {v}")))?
            }
            "logprobs" => {
                set.logprobs = v.as_str().and_then(logprobs_policy).ok_or_else(|| {
                    err(
                        &dotted,
                        format!("expected \"drop\" or \"refuse\", found {v}"),
                    )
                })?
            }
            "allow" => {
                let values = string_list(v).ok_or_else(|| {
                    err(
                        &dotted,
                        format!("expected a list of non-empty strings, found {v}"),
                    )
                })?;
                values.into_iter().for_each(|v| set.allow(v));
            }
            "extra" => {
                let rules = v.as_array().ok_or_else(|| {
                    err(
                        &dotted,
                        format!(
                            "expected a list of rules ([[rules.extra]]), found {}",
                            v.type_str()
                        ),
                    )
                })?;
                for (i, rule) in rules.iter().enumerate() {
                    parse_extra(&mut set, i, rule, err)?;
                }
            }
            _ => {
                return Err(err(
                    &dotted,
                    "unknown key ([rules] reads packs, extra, allow, request_masking and logprobs)"
                        .to_owned(),
                ));
            }
        }
    }
    Ok(set)
}

/// One `[[rules.extra]]` table.
fn parse_extra(
    set: &mut RuleSet,
    i: usize,
    rule: &Value,
    err: Err<'_>,
) -> Result<(), SettingsError> {
    let key = format!("rules.extra[{i}]");
    let table = rule
        .as_table()
        .ok_or_else(|| err(&key, format!("expected a table, found {}", rule.type_str())))?;
    let text = |k: &str| -> Result<Option<String>, SettingsError> {
        match table.get(k) {
            None => Ok(None),
            Some(v) => v
                .as_str()
                .filter(|s| !s.is_empty())
                .map(|s| Some(s.to_owned()))
                .ok_or_else(|| {
                    err(
                        &format!("{key}.{k}"),
                        format!("expected a non-empty string, found {v}"),
                    )
                }),
        }
    };
    if let Some(k) = table.keys().find(|k| {
        ![
            "id",
            "literal",
            "regex",
            "action",
            "reason",
            "label",
            "validator",
        ]
        .contains(&k.as_str())
    }) {
        return Err(err(
            &format!("{key}.{k}"),
            "unknown key (a rule reads id, literal or regex, action, reason, label and validator)"
                .to_owned(),
        ));
    }
    let id = text("id")?.ok_or_else(|| err(&format!("{key}.id"), "required".to_owned()))?;
    if !ruleset::valid_id(&id) {
        return Err(err(
            &format!("{key}.id"),
            format!("expected letters, digits, _, - or . (at most 64), found {id:?}"),
        ));
    }
    let (pattern, pattern_key) = match (text("literal")?, text("regex")?) {
        (Some(l), None) => (stream_replace::Pattern::literal(l), "literal"),
        (None, Some(r)) => (stream_replace::Pattern::regex(r), "regex"),
        (None, None) => return Err(err(&key, "expected a literal or a regex".to_owned())),
        (Some(_), Some(_)) => {
            return Err(err(
                &key,
                "expected a literal or a regex, not both".to_owned(),
            ));
        }
    };
    let reason = text("reason")?;
    let action = match text("action")?.as_deref() {
        None | Some("mask") => RuleAction::Mask,
        Some("redact") => RuleAction::Redact,
        Some("block") => RuleAction::Block(reason.clone().unwrap_or_else(|| format!("rule {id}"))),
        Some(other) => {
            return Err(err(
                &format!("{key}.action"),
                format!("expected mask, redact or block, found {other:?}"),
            ));
        }
    };
    if reason.is_some() && !matches!(action, RuleAction::Block(_)) {
        return Err(err(
            &format!("{key}.reason"),
            "a reason is for action = \"block\"".to_owned(),
        ));
    }
    let label = match text("label")? {
        Some(l) => l,
        None => id
            .bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() {
                    b.to_ascii_uppercase() as char
                } else {
                    '_'
                }
            })
            .collect(),
    };
    if !ruleset::valid_label(&label) {
        return Err(err(
            &format!("{key}.label"),
            format!("expected upper-case letters, digits and _, from a letter, found {label:?}"),
        ));
    }
    let validator = match text("validator")? {
        None => None,
        Some(name) => Some(
            VALIDATORS
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, f)| *f)
                .ok_or_else(|| {
                    let known: Vec<&str> = VALIDATORS.iter().map(|(n, _)| *n).collect();
                    err(
                        &format!("{key}.validator"),
                        format!("unknown validator {name:?} (known: {})", known.join(", ")),
                    )
                })?,
        ),
    };
    let spec = ruleset::extra_rule(id, pattern, label, action, validator);
    ruleset::compile_one(&spec).map_err(|e| {
        err(
            &format!("{key}.{pattern_key}"),
            format!("does not compile: {e}"),
        )
    })?;
    set.add_rule(spec)
        .map_err(|reason| err(&format!("{key}.id"), reason))
}

fn count_mut<'a>(config: &'a mut Config, key: &str) -> &'a mut usize {
    match key {
        "max_held_bytes" => &mut config.max_held,
        "max_fields" => &mut config.max_fields,
        "max_event_bytes" => &mut config.max_event,
        "max_request_bytes" => &mut config.max_request_body,
        "max_response_bytes" => &mut config.max_response_body,
        "max_values" => &mut config.max_values,
        "max_connections" => &mut config.max_connections,
        _ => &mut config.max_in_flight,
    }
}

fn time_mut<'a>(config: &'a mut Config, key: &str) -> &'a mut Duration {
    match key {
        "header_read_ms" => &mut config.header_read_timeout,
        "connect_ms" => &mut config.connect_timeout,
        "first_byte_ms" => &mut config.first_byte_timeout,
        "idle_ms" => &mut config.idle_timeout,
        "drain_ms" => &mut config.drain_timeout,
        _ => &mut config.ready_timeout,
    }
}

impl Settings {
    /// Reads settings from the TOML `text` of the file named `origin`, then
    /// applies the environment variables `env` returns (`env` is
    /// `|k| std::env::var(k).ok()` in the program).
    ///
    /// The file's keys: `listen`, `upstream`, `upstream_ca_file` (a PEM
    /// file of roots trusted for an `https://` upstream), `metrics_listen`,
    /// `log_level`; in `[limits]`,
    /// `max_held_bytes`, `max_fields`, `max_event_bytes`,
    /// `max_request_bytes`, `max_response_bytes`, `max_values`,
    /// `max_connections`, `max_in_flight`; in `[timeouts]` (milliseconds),
    /// `header_read_ms`, `connect_ms`, `first_byte_ms`, `idle_ms`,
    /// `drain_ms`, `ready_ms`; in `[endpoints]`, `pass_through` and
    /// `refused` (lists of paths, `*` for one segment); in `[rules]`,
    /// `request_masking`, `logprobs` (`"drop"` or `"refuse"`), `allow` (a
    /// list of values), `[rules.packs.pii]` and `[rules.packs.secrets]`
    /// (each with `blocks` and `exclude`), and `[[rules.extra]]` tables
    /// (`id`, `literal` or `regex`, `action`, `reason`, `label`,
    /// `validator`); see [`RuleSet`]. The variables: `LISTEN_ADDR`,
    /// `METRICS_LISTEN_ADDR`, `UPSTREAM_CA_FILE`,
    /// `UPSTREAM_BASE_URL`, `LOG_LEVEL`, `PASS_THROUGH` and
    /// `REFUSED_PATHS` (comma-separated), `REQUEST_MASKING`, `LOGPROBS`,
    /// and one per limit and timeout in upper case (`MAX_HELD_BYTES`,
    /// `IDLE_TIMEOUT_MS`, `DRAIN_TIMEOUT_MS`, ...).
    ///
    /// # Errors
    ///
    /// A [`SettingsError`] naming the file or variable, the key and the
    /// reason: TOML that does not parse, an unknown key or table, a value
    /// of the wrong type or out of range, an upstream that is not an
    /// `http://` or `https://` URL, an unknown log level, a rule that does
    /// not compile, an unknown validator or pack, a duplicate rule id.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_proxy::Settings;
    ///
    /// let env = |k: &str| (k == "IDLE_TIMEOUT_MS").then(|| "500".to_owned());
    /// let text = "upstream = 'http://127.0.0.1:18799/v1'\n[timeouts]\nidle_ms = 9000";
    /// let s = Settings::from_toml(text, "proxy.toml", env)?;
    /// assert_eq!(s.config.idle_timeout.as_millis(), 500);
    ///
    /// let e = Settings::from_toml("[rules]\nx = 1", "proxy.toml", |_| None).unwrap_err();
    /// assert_eq!(e.key, "rules.x");
    ///
    /// let text = "upstream = 'http://h:1/v1'\n[[rules.extra]]\nid = 't'\nregex = '(a'";
    /// let e = Settings::from_toml(text, "proxy.toml", |_| None).unwrap_err();
    /// assert_eq!(e.key, "rules.extra[0].regex");
    /// # Ok::<(), stream_replace_proxy::SettingsError>(())
    /// ```
    pub fn from_toml(
        text: &str,
        origin: &str,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Settings, SettingsError> {
        let err = |key: &str, reason: String| SettingsError {
            origin: origin.to_owned(),
            key: key.to_owned(),
            reason,
        };
        let table: Table = text.parse().map_err(|e: toml::de::Error| {
            let reason = e.message().to_owned();
            let at = e
                .span()
                .map(|s| {
                    let line = text[..s.start.min(text.len())].matches('\n').count() + 1;
                    format!(" (line {line})")
                })
                .unwrap_or_default();
            err("(syntax)", format!("not valid TOML{at}: {reason}"))
        })?;

        let string = |key: &str, v: &Value| -> Result<String, SettingsError> {
            v.as_str()
                .map(str::to_owned)
                .ok_or_else(|| err(key, format!("expected a string, found {}", v.type_str())))
        };
        let mut listen = "127.0.0.1:14000".to_owned();
        let mut upstream = None;
        let mut log_level = "info".to_owned();
        let mut metrics_listen = None;
        let mut ca_file: Option<String> = None;
        let mut counts: Vec<(&str, usize)> = Vec::new();
        let mut times: Vec<(&str, u64)> = Vec::new();
        let mut pass_through = None;
        let mut refused = None;
        let mut rules = None;
        for (key, value) in &table {
            match key.as_str() {
                "listen" => listen = string(key, value)?,
                "upstream" => upstream = Some(string(key, value)?),
                "log_level" => log_level = string(key, value)?,
                "metrics_listen" => metrics_listen = Some(string(key, value)?),
                "upstream_ca_file" => ca_file = Some(string(key, value)?),
                "rules" => rules = Some(parse_rules(value, &err)?),
                "limits" | "timeouts" | "endpoints" => {
                    let Some(section) = value.as_table() else {
                        return Err(err(key, format!("expected a table, found {}", value.type_str())));
                    };
                    for (k, v) in section {
                        let dotted = format!("{key}.{k}");
                        match (key.as_str(), k.as_str()) {
                            ("limits", k) if COUNTS.iter().any(|(n, _)| *n == k) => {
                                let n = v
                                    .as_integer()
                                    .filter(|n| *n > 0)
                                    .and_then(|n| usize::try_from(n).ok())
                                    .ok_or_else(|| {
                                        err(&dotted, format!("expected a whole number above 0, found {v}"))
                                    })?;
                                counts.push((COUNTS.iter().find(|(n, _)| *n == k).unwrap().0, n));
                            }
                            ("timeouts", k) if TIMES.iter().any(|(n, _)| *n == k) => {
                                let n = v
                                    .as_integer()
                                    .filter(|n| *n > 0)
                                    .and_then(|n| u64::try_from(n).ok())
                                    .ok_or_else(|| {
                                        err(&dotted, format!("expected milliseconds above 0, found {v}"))
                                    })?;
                                times.push((TIMES.iter().find(|(n, _)| *n == k).unwrap().0, n));
                            }
                            ("endpoints", "pass_through") => {
                                pass_through = Some(paths_under_v1(v, &dotted, &err)?);
                            }
                            ("endpoints", "refused") => {
                                refused = Some(paths_under_v1(v, &dotted, &err)?);
                            }
                            _ => return Err(err(&dotted, "unknown key".to_owned())),
                        }
                    }
                }
                _ => {
                    return Err(err(
                        key,
                        "unknown key (this version reads listen, upstream, upstream_ca_file, metrics_listen, log_level, [limits], [timeouts], [endpoints] and [rules])"
                            .to_owned(),
                    ))
                }
            }
        }

        // The environment, key by key.
        let env_err = |var: &str, key: &str, reason: String| SettingsError {
            origin: format!("environment variable {var}"),
            key: key.to_owned(),
            reason,
        };
        if let Some(v) = env("LISTEN_ADDR") {
            listen = v;
        }
        if let Some(v) = env("UPSTREAM_CA_FILE") {
            ca_file = Some(v);
        }
        if let Some(v) = env("METRICS_LISTEN_ADDR") {
            metrics_listen = Some(v);
        }
        if let Some(v) = env("LOG_LEVEL") {
            log_level = v;
        }
        let mut upstream_origin = origin.to_owned();
        if let Some(v) = env("UPSTREAM_BASE_URL") {
            upstream = Some(v);
            upstream_origin = "environment variable UPSTREAM_BASE_URL".to_owned();
        }
        for (key, var) in COUNTS {
            if let Some(v) = env(var) {
                let n = v.trim().parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                    env_err(
                        var,
                        &format!("limits.{key}"),
                        format!("expected a whole number above 0, found {v:?}"),
                    )
                })?;
                counts.push((key, n));
            }
        }
        for (key, var) in TIMES {
            if let Some(v) = env(var) {
                let n = v.trim().parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                    env_err(
                        var,
                        &format!("timeouts.{key}"),
                        format!("expected milliseconds above 0, found {v:?}"),
                    )
                })?;
                times.push((key, n));
            }
        }
        let split = |list: String| -> Vec<String> {
            list.split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(str::to_owned)
                .collect()
        };
        if let Some(list) = env("PASS_THROUGH") {
            pass_through = Some(split(list));
        }
        if let Some(list) = env("REFUSED_PATHS") {
            refused = Some(split(list));
        }
        let mut rules = rules.unwrap_or_default();
        if let Some(v) = env("REQUEST_MASKING") {
            rules.request_masking = match v.trim() {
                "true" | "1" | "on" => true,
                "false" | "0" | "off" => false,
                _ => {
                    return Err(env_err(
                        "REQUEST_MASKING",
                        "rules.request_masking",
                        format!("expected true or false, found {v:?}"),
                    ));
                }
            };
        }
        if let Some(v) = env("LOGPROBS") {
            rules.logprobs = logprobs_policy(v.trim()).ok_or_else(|| {
                env_err(
                    "LOGPROBS",
                    "rules.logprobs",
                    format!("expected drop or refuse, found {v:?}"),
                )
            })?;
        }

        if !LEVELS.contains(&log_level.as_str()) {
            return Err(err(
                "log_level",
                format!("expected one of {}, found {log_level:?}", LEVELS.join(", ")),
            ));
        }
        if listen.parse::<std::net::SocketAddr>().is_err() {
            return Err(err(
                "listen",
                format!("expected an address such as 127.0.0.1:14000, found {listen:?}"),
            ));
        }
        if let Some(addr) = &metrics_listen {
            if addr.parse::<std::net::SocketAddr>().is_err() || *addr == listen {
                return Err(err(
                    "metrics_listen",
                    format!(
                        "expected an address other than listen, such as 127.0.0.1:14090, found {addr:?}"
                    ),
                ));
            }
        }
        let Some(upstream) = upstream else {
            return Err(err(
                "upstream",
                "required: the upstream's /v1 base URL (or UPSTREAM_BASE_URL, or --upstream)"
                    .to_owned(),
            ));
        };
        let mut config = Config::new(&upstream).map_err(|reason| SettingsError {
            origin: upstream_origin,
            key: "upstream".to_owned(),
            reason,
        })?;
        for (key, n) in counts {
            *count_mut(&mut config, key) = n;
        }
        for (key, ms) in times {
            *time_mut(&mut config, key) = Duration::from_millis(ms);
        }
        if let Some(paths) = pass_through {
            // Passing a model endpoint through would send its replies
            // unscanned: it can be refused, not exempted.
            if let Some(p) = paths.iter().find(|p| {
                route::normalise(p).is_ok_and(|s| {
                    matches!(route::route(&s, &[], &[]), Some(route::Route::Scan(_)))
                })
            }) {
                return Err(err(
                    "endpoints.pass_through",
                    format!(
                        "{p} is a model endpoint, which is always scanned; list it in endpoints.refused to turn it off"
                    ),
                ));
            }
            config.pass_through = paths;
        }
        if let Some(paths) = refused {
            let models = route::model_endpoints();
            if let Some(p) = paths
                .iter()
                .find(|p| !models.contains(p) && !config.pass_through.contains(p))
            {
                return Err(err(
                    "endpoints.refused",
                    format!(
                        "{p} is not a path the proxy routes (the model endpoints {} and the pass-through list); other paths are refused already",
                        models.join(", ")
                    ),
                ));
            }
            config.refused = paths;
        }
        config.rules = rules;
        if let Some(path) = ca_file {
            match std::fs::read_to_string(&path) {
                Ok(text) if text.contains("-----BEGIN CERTIFICATE-----") => {}
                Ok(_) => {
                    return Err(err(
                        "upstream_ca_file",
                        format!("{path} holds no PEM certificate"),
                    ));
                }
                Err(e) => {
                    return Err(err(
                        "upstream_ca_file",
                        format!("{path} cannot be read: {e}"),
                    ));
                }
            }
            config.upstream_ca_file = Some(path.into());
        }
        Ok(Settings {
            listen,
            metrics_listen,
            config,
            log_level,
        })
    }

    /// Reads the TOML file at `path` as [`from_toml`](Settings::from_toml)
    /// does its text.
    ///
    /// # Errors
    ///
    /// As [`from_toml`](Settings::from_toml), and when the file cannot be
    /// read.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_proxy::Settings;
    ///
    /// let e = Settings::from_file("no-such-file.toml", |_| None).unwrap_err();
    /// assert!(e.to_string().starts_with("no-such-file.toml"));
    /// ```
    pub fn from_file(
        path: &str,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Settings, SettingsError> {
        let text = std::fs::read_to_string(path).map_err(|e| SettingsError {
            origin: path.to_owned(),
            key: "(file)".to_owned(),
            reason: format!("cannot be read: {e}"),
        })?;
        Settings::from_toml(&text, path, env)
    }

    /// A summary of the settings, one line per setting, for
    /// `--check-config`.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_proxy::Settings;
    ///
    /// let s = Settings::from_toml("upstream = 'http://127.0.0.1:18799/v1'", "proxy.toml", |_| None)?;
    /// assert!(s.summary().contains("upstream http://127.0.0.1:18799/v1"));
    /// # Ok::<(), stream_replace_proxy::SettingsError>(())
    /// ```
    pub fn summary(&self) -> String {
        let c = &self.config;
        format!(
            "listen {}\nupstream {}\nmetrics_listen {}\nlog_level {}\n\
             limits: held {} B, fields {}, event {} B, request {} B, response {} B, values {}, connections {}, in flight {}\n\
             timeouts: header read {:?}, connect {:?}, first byte {:?}, idle {:?}, drain {:?}, ready {:?}\n\
             pass-through: {}\n\
             refused: {}\n\
             {}",
            self.listen,
            c.upstream_base(),
            self.metrics_listen.as_deref().unwrap_or("(none)"),
            self.log_level,
            c.max_held,
            c.max_fields,
            c.max_event,
            c.max_request_body,
            c.max_response_body,
            c.max_values,
            c.max_connections,
            c.max_in_flight,
            c.header_read_timeout,
            c.connect_timeout,
            c.first_byte_timeout,
            c.idle_timeout,
            c.drain_timeout,
            c.ready_timeout,
            c.pass_through.join(", "),
            if c.refused.is_empty() {
                "(none)".to_owned()
            } else {
                c.refused.join(", ")
            },
            c.rules.summary(),
        )
    }
}
