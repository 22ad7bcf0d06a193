//! A deterministic, LLM-like corpus and the rule sets the benches run.
//!
//! The corpus imitates model replies: mostly ASCII English prose and code,
//! markdown lists, `<think>` blocks, some accented, CJK and emoji text
//! (a few percent of the bytes), and the PII the rule sets look for
//! (emails, phone numbers, SSNs, two shapes of API key, IPv4 addresses,
//! card-like numbers) plus special tokens. It is generated from a fixed
//! seed with a small PRNG, so every run and every machine sees the same
//! bytes.

// Each bench binary includes this module and uses a different part of it.
#![allow(dead_code)]

use regex_automata::dfa::{Automaton, dense};
use regex_automata::util::primitives::StateID;
use regex_automata::{Anchored, Input, PatternID, meta};
use stream_replace::{Config, Pattern, Replacement, Replacer, Rules};

/// The environment variable giving the corpus size in MB (decimals allowed).
pub const SIZE_VAR: &str = "STREAM_REPLACE_BENCH_MB";

/// The environment variable giving the chunk sizes, comma separated.
pub const CHUNKS_VAR: &str = "STREAM_REPLACE_BENCH_CHUNKS";

/// The corpus size from [`SIZE_VAR`], 4 MB when unset.
pub fn size_from_env() -> usize {
    let mb = std::env::var(SIZE_VAR)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|mb| *mb > 0.0)
        .unwrap_or(4.0);
    (mb * 1024.0 * 1024.0) as usize
}

/// The chunk sizes from [`CHUNKS_VAR`], `1,4,64,4096` when unset.
pub fn chunk_sizes_from_env() -> Vec<usize> {
    let parsed: Vec<usize> = std::env::var(CHUNKS_VAR)
        .unwrap_or_default()
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .filter(|&n| n > 0)
        .collect();
    if parsed.is_empty() {
        vec![1, 4, 64, 4096]
    } else {
        parsed
    }
}

/// A check on a rule's matched text.
pub type Validator = fn(&str) -> bool;

/// One rule: a pattern, its literal replacement text, and a check on the
/// matched text: a match it rejects is not a match (the text is scanned
/// again, as the guard layer defines it).
#[derive(Clone, Copy, Debug)]
pub struct Rule {
    pub pattern: &'static str,
    pub literal: bool,
    pub replacement: &'static str,
    pub validator: Option<Validator>,
}

const fn lit(pattern: &'static str, replacement: &'static str) -> Rule {
    Rule {
        pattern,
        literal: true,
        replacement,
        validator: None,
    }
}

const fn re(pattern: &'static str, replacement: &'static str) -> Rule {
    Rule {
        pattern,
        literal: false,
        replacement,
        validator: None,
    }
}

/// Three literal rules: two special tokens and a leaked password.
pub const LITERALS: &[Rule] = &[
    lit("<|endoftext|>", ""),
    lit("<|im_start|>", ""),
    lit("hunter2-Tr0ub4dor&3", "[PASSWORD]"),
];

/// The eight PII rules, with `\b` in Unicode mode (the `regex` default).
pub const PII_UNICODE_B: &[Rule] = &[
    re(r"<think>[\s\S]*?</think>", ""),
    re(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}", "[EMAIL]"),
    re(r"\b\d{3}-\d{2}-\d{4}\b", "[SSN]"),
    re(
        r"(?:\+1[ .-]?)?(?:\(\d{3}\) ?|\b\d{3}[ .-])\d{3}[.-]\d{4}\b",
        "[PHONE]",
    ),
    re(r"\bsk-[A-Za-z0-9]{32}\b", "[API_KEY]"),
    re(r"\bAKIA[0-9A-Z]{16}\b", "[AWS_KEY]"),
    re(
        r"\b(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\b",
        "[IP]",
    ),
    re(r"\b(?:\d{4}[ -]){3}\d{4}\b", "[CARD]"),
];

/// [`PII_UNICODE_B`] with every `\b` made ASCII-only: `(?-u:\b)`.
pub fn pii_ascii_b() -> Vec<Rule> {
    PII_UNICODE_B
        .iter()
        .map(|r| Rule {
            pattern: Box::leak(r.pattern.replace(r"\b", r"(?-u:\b)").into_boxed_str()),
            ..*r
        })
        .collect()
}

/// The rules of `stream_replace::pack::pii()`, in its order, each replaced
/// by its mask (its blocks turned into masks, so the stream goes on), with
/// its validator.
pub fn pii_pack() -> Vec<Rule> {
    stream_replace::pack::pii()
        .rules()
        .iter()
        .map(|r| Rule {
            pattern: r.pattern,
            literal: false,
            replacement: r.mask,
            validator: r.validator,
        })
        .collect()
}

/// One literal that never occurs in the corpus: a stream's cost per feed
/// when its matcher has nothing to do (the API, the tape and the output),
/// the floor under the literal sets' rows.
pub const FLOOR_LITERAL: &[Rule] = &[lit("\u{1}never\u{1}", "x")];

/// One regex whose first byte never occurs in the corpus: the same floor
/// for the regex sets, whose thread matcher steps every byte.
pub const FLOOR_REGEX: &[Rule] = &[re(r"\x01[a-z]+", "x")];

/// The name of the [`pii_pack`] rule set.
pub const PII_PACK: &str = "pii_pack";

/// Five PII rules as a gateway writes them by hand: an email whose local
/// part is a class common in prose, a phone, an SSN with an ASCII `\b`,
/// an API key and a `<think>` block.
pub const PII_FIVE: &[Rule] = &[
    re(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}", "[EMAIL]"),
    re(r"\(?\d{3}\)?[ -]?\d{3}-\d{4}", "[PHONE]"),
    re(r"(?-u:\b)\d{3}-\d{2}-\d{4}(?-u:\b)", "[SSN]"),
    re(r"sk-[A-Za-z0-9]{20,}", "[API_KEY]"),
    re(r"<think>[\s\S]*?</think>", ""),
];

/// The rule sets of the throughput bench, by name.
pub fn rule_sets() -> Vec<(&'static str, Vec<Rule>)> {
    vec![
        ("literals", LITERALS.to_vec()),
        ("pii_five", PII_FIVE.to_vec()),
        ("pii_ascii_b", pii_ascii_b()),
        ("pii_unicode_b", PII_UNICODE_B.to_vec()),
        (PII_PACK, pii_pack()),
        ("floor_literal", FLOOR_LITERAL.to_vec()),
        ("floor_regex", FLOOR_REGEX.to_vec()),
    ]
}

/// Compiles `rules` into [`Rules`] with literal replacements and their
/// validators.
pub fn build(rules: &[Rule], config: Config) -> Rules {
    try_build(rules, config).expect("bench rules compile")
}

/// [`build`], returning the error where the rules do not compile.
pub fn try_build(rules: &[Rule], config: Config) -> Result<Rules, stream_replace::Error> {
    let mut b = Rules::builder();
    for r in rules {
        let pattern = if r.literal {
            Pattern::literal(r.pattern)
        } else {
            Pattern::regex(r.pattern)
        };
        let mut rule = stream_replace::Rule::new(pattern, Replacement::literal(r.replacement));
        if let Some(valid) = r.validator {
            rule = rule.validator(valid);
        }
        b.add(rule);
    }
    b.config(config).build()
}

/// The whole-input baseline: one `meta::Regex` over all rules, leftmost
/// first, each match replaced by its rule's text. A match its rule's
/// validator rejects is not one: the later rules are tried anchored at its
/// start, and then the search goes on from the next character (rare, so
/// the baseline stays `find_iter`'s speed).
pub struct Baseline {
    re: meta::Regex,
    replacements: Vec<&'static str>,
    validators: Vec<Option<Validator>>,
}

/// The rules' patterns as regexes, literals escaped.
fn regex_patterns(rules: &[Rule]) -> Vec<String> {
    rules
        .iter()
        .map(|r| {
            if r.literal {
                regex_syntax::escape(r.pattern)
            } else {
                r.pattern.to_string()
            }
        })
        .collect()
}

impl Baseline {
    pub fn new(rules: &[Rule]) -> Baseline {
        let patterns = regex_patterns(rules);
        Baseline {
            // No NFA size limit: a deny list of 100,000 terms must build.
            re: meta::Regex::builder()
                .configure(meta::Config::new().nfa_size_limit(None))
                .build_many(&patterns)
                .expect("baseline compiles"),
            replacements: rules.iter().map(|r| r.replacement).collect(),
            validators: rules.iter().map(|r| r.validator).collect(),
        }
    }

    /// Replaces every match in `haystack`, appending to `out`.
    pub fn replace_into(&self, haystack: &str, out: &mut String) {
        let valid = |i: usize, m: &regex_automata::Match| {
            self.validators[i].is_none_or(|v| v(&haystack[m.range()]))
        };
        let (mut last, mut at) = (0, 0);
        while let Some(m) = self.re.find(Input::new(haystack).range(at..)) {
            let i = m.pattern().as_usize();
            let chosen = if valid(i, &m) {
                Some((i, m))
            } else {
                // The later rules, anchored at the rejected start. (No rule
                // of these sets matches the empty string, so `find_iter`'s
                // empty-match rule has nothing to add.)
                (i + 1..self.replacements.len()).find_map(|k| {
                    let input = Input::new(haystack)
                        .range(m.start()..)
                        .anchored(Anchored::Pattern(PatternID::must(k)));
                    let n = self.re.find(input)?;
                    valid(k, &n).then_some((k, n))
                })
            };
            match chosen {
                Some((k, n)) => {
                    out.push_str(&haystack[last..n.start()]);
                    out.push_str(self.replacements[k]);
                    last = n.end();
                    at = n.end();
                }
                None => {
                    at = m.start() + 1;
                    while !haystack.is_char_boundary(at) {
                        at += 1;
                    }
                }
            }
        }
        out.push_str(&haystack[last..]);
    }

    /// How many matches `haystack` holds.
    pub fn count(&self, haystack: &str) -> usize {
        self.re.find_iter(haystack).count()
    }
}

/// Cuts `text` into chunks of `size` bytes, each moved forward to the next
/// character boundary so every chunk is a `&str`.
pub fn chunks(text: &str, size: usize) -> Vec<&str> {
    let mut out = Vec::with_capacity(text.len() / size + 1);
    let mut at = 0;
    while at < text.len() {
        let mut end = (at + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[at..end]);
        at = end;
    }
    out
}

/// splitmix64: tiny, fast and good enough to pick words.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (((self.next_u64() >> 32) * n as u64) >> 32) as usize
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `percent / 100`.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    pub fn pick<'a, T: ?Sized>(&mut self, items: &[&'a T]) -> &'a T {
        items[self.below(items.len())]
    }
}

const WORDS: &[&str] = &[
    "the",
    "a",
    "to",
    "of",
    "and",
    "in",
    "is",
    "that",
    "for",
    "it",
    "with",
    "as",
    "on",
    "this",
    "be",
    "are",
    "you",
    "can",
    "by",
    "or",
    "from",
    "an",
    "we",
    "if",
    "when",
    "which",
    "each",
    "value",
    "function",
    "request",
    "response",
    "model",
    "stream",
    "token",
    "buffer",
    "server",
    "client",
    "example",
    "result",
    "error",
    "data",
    "input",
    "output",
    "user",
    "system",
    "approach",
    "should",
    "would",
    "could",
    "because",
    "however",
    "instead",
    "first",
    "then",
    "finally",
    "note",
    "simple",
    "important",
    "performance",
    "memory",
    "latency",
    "config",
    "database",
    "query",
    "index",
    "cache",
    "thread",
    "async",
    "handler",
    "parse",
    "return",
    "string",
    "number",
    "list",
    "table",
    "field",
    "record",
    "file",
    "path",
    "network",
    "using",
    "here",
    "there",
    "about",
    "more",
    "most",
    "other",
    "some",
    "such",
    "only",
    "also",
    "very",
    "make",
    "sure",
    "check",
    "need",
    "want",
    "works",
    "call",
    "calls",
    "update",
    "version",
];

const ACCENTED: &[&str] = &[
    "café",
    "naïve",
    "résumé",
    "Zürich",
    "São Paulo",
    "Ångström",
    "façade",
    "jalapeño",
    "Málaga",
    "Straße",
    "Øresund",
    "déjà vu",
    "crème brûlée",
    "Kraków",
    "İstanbul",
];

const UNICODE_SENTENCES: &[&str] = &[
    "这是一个测试句子。",
    "请把结果发送给我。",
    "東京の天気は晴れです。",
    "모델이 응답을 생성했습니다.",
    "Привет, как дела?",
    "Ελληνικά γράμματα: αβγ.",
    "ثم أرسل الرسالة.",
];

const EMOJI: &[&str] = &["🚀", "✅", "😀", "👍", "🔥", "⚠️", "📌", "🎉"];

const OPENERS: &[&str] = &[
    "Sure! Here's how you can do it.",
    "Great question.",
    "Let me walk through this step by step.",
    "Here is a summary of the changes:",
    "I'd recommend the following approach.",
    "To fix this, update the configuration as shown below.",
];

const NAMES: &[&str] = &[
    "alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory",
    "oscar", "peggy", "trent", "victor", "walter",
];

const DOMAINS: &[&str] = &[
    "example.com",
    "mail.example.org",
    "corp.test",
    "gmail.com",
    "company.co.uk",
    "uni.edu",
];

const CODE_LINES: &[&str] = &[
    "let mut buf = Vec::with_capacity(1024);",
    "for (i, item) in items.iter().enumerate() {",
    "    if item.len() > max { return Err(Error::TooLong(i)); }",
    "}",
    "fn handle(req: Request) -> Result<Response, Error> {",
    "    let body = req.body().await?;",
    "    Ok(Response::new(body))",
    "def parse(line):",
    "    key, _, value = line.partition('=')",
    "    return key.strip(), value.strip()",
    "const total = items.reduce((a, b) => a + b.price, 0);",
    "SELECT id, name FROM users WHERE created_at > '2024-01-01';",
    "curl -s https://api.example.com/v1/items?limit=50 | jq '.data[]'",
    "# retry with exponential backoff",
    "timeout = 30  # seconds",
    "assert_eq!(parse(\"a=1\"), Some((\"a\", 1)));",
];

const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const UPPER_DIGIT: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

fn push_digits(rng: &mut Rng, out: &mut String, n: usize) {
    for _ in 0..n {
        out.push((b'0' + rng.below(10) as u8) as char);
    }
}

fn push_from(rng: &mut Rng, out: &mut String, set: &[u8], n: usize) {
    for _ in 0..n {
        out.push(set[rng.below(set.len())] as char);
    }
}

/// One piece of PII, special token or near miss.
fn push_sensitive(rng: &mut Rng, out: &mut String) {
    match rng.below(12) {
        0 | 1 => {
            out.push_str(rng.pick(NAMES));
            if rng.chance(50) {
                out.push('.');
                out.push_str(rng.pick(NAMES));
            }
            out.push('@');
            out.push_str(rng.pick(DOMAINS));
        }
        2 => {
            push_digits(rng, out, 3);
            out.push('-');
            push_digits(rng, out, 2);
            out.push('-');
            push_digits(rng, out, 4);
        }
        3 | 4 => {
            match rng.below(3) {
                0 => out.push_str("(555) "),
                1 => out.push_str("+1 555-"),
                _ => out.push_str("555."),
            }
            push_digits(rng, out, 3);
            out.push(if rng.chance(50) { '-' } else { '.' });
            push_digits(rng, out, 4);
        }
        5 => {
            out.push_str("sk-");
            push_from(rng, out, ALNUM, 32);
        }
        6 => {
            out.push_str("AKIA");
            push_from(rng, out, UPPER_DIGIT, 16);
        }
        7 => {
            for i in 0..4 {
                if i > 0 {
                    out.push('.');
                }
                out.push_str(&rng.below(256).to_string());
            }
        }
        8 => {
            for i in 0..4 {
                if i > 0 {
                    out.push(if rng.chance(50) { ' ' } else { '-' });
                }
                push_digits(rng, out, 4);
            }
        }
        9 => out.push_str(rng.pick(&["<|endoftext|>", "<|im_start|>", "<|im_end|>"])),
        10 => out.push_str("hunter2-Tr0ub4dor&3"),
        // Near misses: look like PII to a prefilter but do not match.
        _ => out.push_str(rng.pick(&[
            "v1.2.3",
            "12-34",
            "sk-short",
            "@mention",
            "2024-06-01",
            "<|user|>",
            "hunter2",
        ])),
    }
}

fn push_sentence(rng: &mut Rng, out: &mut String) {
    let n = rng.range(6, 18);
    for i in 0..n {
        if i > 0 {
            out.push(' ');
        }
        let r = rng.below(1000);
        if r < 12 {
            push_sensitive(rng, out);
        } else if r < 50 {
            out.push_str(rng.pick(ACCENTED));
        } else if r < 60 {
            out.push_str(rng.pick(EMOJI));
        } else if r < 100 {
            out.push('`');
            out.push_str(rng.pick(WORDS));
            out.push_str("()`");
        } else {
            let w = rng.pick(WORDS);
            if i == 0 {
                let mut cs = w.chars();
                if let Some(c) = cs.next() {
                    out.extend(c.to_uppercase());
                    out.push_str(cs.as_str());
                }
            } else {
                out.push_str(w);
            }
        }
        if i + 1 < n && rng.chance(8) {
            out.push(',');
        }
    }
    out.push_str(rng.pick(&[".", ".", ".", "!", "?", ":"]));
}

fn push_paragraph(rng: &mut Rng, out: &mut String) {
    for i in 0..rng.range(2, 6) {
        if i > 0 {
            out.push(' ');
        }
        if rng.chance(6) {
            out.push_str(rng.pick(UNICODE_SENTENCES));
        } else {
            push_sentence(rng, out);
        }
    }
    out.push_str("\n\n");
}

fn push_code(rng: &mut Rng, out: &mut String) {
    out.push_str(rng.pick(&["```rust\n", "```python\n", "```js\n", "```sh\n", "```\n"]));
    for _ in 0..rng.range(3, 14) {
        if rng.chance(6) {
            out.push_str("api_key = \"");
            push_sensitive(rng, out);
            out.push_str("\"\n");
        } else {
            out.push_str(rng.pick(CODE_LINES));
            out.push('\n');
        }
    }
    out.push_str("```\n\n");
}

fn push_list(rng: &mut Rng, out: &mut String) {
    let numbered = rng.chance(40);
    for i in 1..=rng.range(3, 7) {
        if numbered {
            out.push_str(&format!("{i}. "));
        } else {
            out.push_str("- ");
        }
        if rng.chance(30) {
            out.push_str("**");
            out.push_str(rng.pick(WORDS));
            out.push_str("**: ");
        }
        push_sentence(rng, out);
        out.push('\n');
    }
    out.push('\n');
}

fn push_think(rng: &mut Rng, out: &mut String) {
    out.push_str("<think>\n");
    let target = out.len() + rng.range(300, 4000);
    while out.len() < target {
        push_sentence(rng, out);
        out.push(if rng.chance(20) { '\n' } else { ' ' });
    }
    out.push_str("\n</think>\n\n");
}

/// Deterministic base64 text in 76-character lines.
pub fn base64(len: usize) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut rng = Rng::new(64);
    let mut out = String::with_capacity(len + 80);
    while out.len() < len {
        for _ in 0..76 {
            out.push(ALPHABET[rng.below(64)] as char);
        }
        out.push('\n');
    }
    out.truncate(len);
    out
}

/// A corpus of at least `len` bytes (cut back to a character boundary at
/// `len` when longer), the same for every call with the same `len`.
pub fn corpus(len: usize) -> String {
    let mut rng = Rng::new(0x5EED_0000_C0FF_EE00);
    let mut out = String::with_capacity(len + 8192);
    while out.len() < len {
        // One reply: a think block, an opener, then mixed content.
        if rng.chance(60) {
            push_think(&mut rng, &mut out);
        }
        out.push_str(rng.pick(OPENERS));
        out.push_str("\n\n");
        for _ in 0..rng.range(3, 10) {
            match rng.below(10) {
                0..=4 => push_paragraph(&mut rng, &mut out),
                5 | 6 => push_code(&mut rng, &mut out),
                _ => push_list(&mut rng, &mut out),
            }
        }
        if rng.chance(30) {
            out.push_str("<|endoftext|>");
        }
        out.push_str("\n\n");
    }
    let mut end = len.min(out.len());
    while !out.is_char_boundary(end) {
        end -= 1;
    }
    out.truncate(end);
    out
}

/// A one-line description of `text`: size and share of non-ASCII bytes.
pub fn describe(text: &str) -> String {
    let non_ascii = text.bytes().filter(|b| !b.is_ascii()).count();
    format!(
        "{:.2} MB, {:.1}% non-ASCII bytes",
        text.len() as f64 / (1024.0 * 1024.0),
        100.0 * non_ascii as f64 / text.len().max(1) as f64
    )
}

/// The criterion settings both benches use: 10 samples, 1 s of warm-up and
/// 3 s of measurement, so a full run fits in minutes on 2 cores (the
/// command line can override them).
pub fn criterion_config() -> criterion::Criterion {
    criterion::Criterion::default()
        .sample_size(10)
        .warm_up_time(std::time::Duration::from_secs(1))
        .measurement_time(std::time::Duration::from_secs(3))
}

/// Feeds `chunks` one by one, taking each piece's output out of `out` as a
/// sender would, and returns the number of bytes emitted. What `out` held
/// on entry stays (see [`stream_out`]); the output goes after it.
pub fn stream_chunks(r: &mut Replacer, chunks: &[&str], out: &mut String) -> usize {
    let keep = out.len();
    let mut sent = 0;
    for chunk in chunks {
        r.feed_into(chunk, out).expect("under the held limit");
        sent += out.len() - keep;
        out.truncate(keep);
    }
    r.flush_into(out).expect("stream ok");
    sent += out.len() - keep;
    out.truncate(keep);
    sent
}

/// A floor under any exact stream of the same rules: one forward DFA over
/// all of them (`regex_automata::dfa::dense`, unanchored, leftmost-first)
/// stepped over each chunk with its state carried from chunk to chunk, and
/// each chunk copied to the output and taken out as [`stream_chunks`] does.
///
/// It finds no starts, holds nothing back and replaces nothing (its output
/// is its input), and where the DFA dies (after a match) it starts again
/// at that byte, so it is not a stream anyone could ship. It is what
/// stepping one DFA per byte and copying each chunk out costs per feed,
/// with nothing else: the `floor_dfa` rows of the `throughput` bench and
/// the `_dfa` workloads of the `instructions` bench.
pub struct DfaFloor {
    dfa: dense::DFA<Vec<u32>>,
    start: StateID,
}

impl DfaFloor {
    /// The DFA of `rules`, or `None` when a dense DFA cannot be built for
    /// them (a Unicode `\b`).
    pub fn new(rules: &[Rule]) -> Option<DfaFloor> {
        let patterns = regex_patterns(rules);
        let dfa = dense::DFA::new_many(&patterns).ok()?;
        let start = dfa
            .start_state_forward(&Input::new("").anchored(Anchored::No))
            .ok()?;
        Some(DfaFloor { dfa, start })
    }

    /// Steps and copies `chunks` as described above; returns the number of
    /// match states seen, so that the stepping is not optimized away.
    pub fn stream_chunks(&self, chunks: &[&str], out: &mut String) -> usize {
        let keep = out.len();
        let (dfa, start) = (&self.dfa, self.start);
        let mut sid = start;
        let mut matches = 0;
        for chunk in chunks {
            for &b in chunk.as_bytes() {
                sid = dfa.next_state(sid, b);
                if dfa.is_special_state(sid) {
                    if dfa.is_match_state(sid) {
                        matches += 1;
                    } else if dfa.is_dead_state(sid) || dfa.is_quit_state(sid) {
                        sid = dfa.next_state(start, b);
                    }
                }
            }
            out.push_str(chunk);
            out.truncate(keep);
        }
        matches
    }
}

/// The bytes [`stream_out`] puts before a stream's output: half a page.
const OUT_PAD: usize = 2048;

/// An output buffer for [`stream_chunks`] over chunks cut from a text of
/// `len` bytes: [`OUT_PAD`] bytes that stay, then room for the output.
///
/// `stream_chunks` writes every piece's output at the same address, and
/// chunks cut at multiples of 4 KiB all start at the same offset in their
/// page as the text. A buffer this large is mapped fresh by the allocator,
/// as the text was, so without the pad it starts at that same page offset,
/// and each chunk's copy into it stalls on 4K aliasing: the CPU takes a
/// load from the source, by its low 12 address bits, for one that depends
/// on the store it just made to the destination. That made the `repeats`
/// stream rows over base64 take 181 µs a pass of 256 KiB instead of
/// 103 µs (the whole-input baseline's one long copy was not slowed). A
/// sender's buffers fall where they fall; the pad keeps the benches from
/// measuring this one coincidence, and costs the stream nothing else.
pub fn stream_out(len: usize) -> String {
    let mut out = String::with_capacity(OUT_PAD + len + 1024);
    out.extend(std::iter::repeat_n(' ', OUT_PAD));
    out
}

/// The whole output of a chunked stream, for the correctness check.
pub fn collect(r: &mut Replacer, chunks: &[&str]) -> String {
    let mut all = String::new();
    let mut out = String::new();
    for chunk in chunks {
        r.feed_into(chunk, &mut out).expect("under the held limit");
        all.push_str(&out);
        out.clear();
    }
    r.flush_into(&mut out).expect("stream ok");
    all.push_str(&out);
    all
}

/// A reader that returns one chunk per `read` call, as a socket returning
/// tokens would: what `aho-corasick`'s stream replacer reads in the benches.
pub struct ChunkReader<'a> {
    chunks: &'a [&'a str],
    next: usize,
    at: usize,
}

impl<'a> ChunkReader<'a> {
    /// A reader over `chunks`, in order.
    pub fn new(chunks: &'a [&'a str]) -> ChunkReader<'a> {
        ChunkReader {
            chunks,
            next: 0,
            at: 0,
        }
    }
}

impl std::io::Read for ChunkReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let Some(chunk) = self.chunks.get(self.next) else {
            return Ok(0);
        };
        let rest = &chunk.as_bytes()[self.at..];
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.at += n;
        if self.at == chunk.len() {
            self.next += 1;
            self.at = 0;
        }
        Ok(n)
    }
}
