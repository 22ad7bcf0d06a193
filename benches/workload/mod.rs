//! The gateway workload: many short replies, a fresh stream per reply, fed
//! in token-sized chunks.
//!
//! A gateway does not run one long stream: it runs thousands of concurrent
//! replies of a few KB each, each a fresh stream, fed as a model emits
//! tokens (1 to 12 bytes). This module builds that workload from the
//! LLM-like corpus, deterministically: the replies, their token chunks,
//! and the deny lists (words, CJK and emoji terms, no term a substring of
//! another).

// Each bench binary includes this module and uses a different part of it.
#![allow(dead_code)]

use std::collections::HashSet;

use crate::corpus::{self, Rng, Rule};

/// The environment variable giving the number of replies (default 10,000).
pub const REPLIES_VAR: &str = "STREAM_REPLACE_GATEWAY_REPLIES";

/// The number of replies from [`REPLIES_VAR`], 10,000 when unset.
pub fn replies_from_env() -> usize {
    std::env::var(REPLIES_VAR)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .filter(|&n: &usize| n > 0)
        .unwrap_or(10_000)
}

/// Every deny-list term has this many characters: two distinct terms of
/// the same length cannot be substrings of each other.
pub const TERM_CHARS: usize = 7;

/// The replacement of every deny-list term.
pub const DENY_MASK: &str = "[DENIED]";

/// `n` distinct deny-list terms, each [`TERM_CHARS`] characters long: 80%
/// lowercase ASCII words, 10% CJK, 10% with an emoji. The first terms of a
/// longer list are the terms of a shorter one.
pub fn deny_terms(n: usize) -> Vec<String> {
    const CJK: &[char] = &[
        '机', '密', '项', '目', '代', '号', '甲', '乙', '丙', '丁', '内', '部', '资', '料', '客',
        '户', '名', '单', '财', '务', '报', '表', '秘', '钥', '账', '密', '码', '源',
    ];
    const EMOJI: &[char] = &['🔑', '🦀', '🚀', '🔒', '📎', '🧪', '💳', '🛡'];
    let mut rng = Rng::new(0xDE11_0000_7E55_0001);
    let mut seen = HashSet::with_capacity(n);
    let mut terms = Vec::with_capacity(n);
    while terms.len() < n {
        let term: String = match rng.below(10) {
            0 => (0..TERM_CHARS).map(|_| CJK[rng.below(CJK.len())]).collect(),
            1 => {
                let mut t: String = (0..TERM_CHARS - 1)
                    .map(|_| (b'a' + rng.below(26) as u8) as char)
                    .collect();
                t.insert(rng.below(TERM_CHARS), EMOJI[rng.below(EMOJI.len())]);
                t
            }
            _ => (0..TERM_CHARS)
                .map(|_| (b'a' + rng.below(26) as u8) as char)
                .collect(),
        };
        if seen.insert(term.clone()) {
            terms.push(term);
        }
    }
    terms
}

/// The deny list of `n` terms as literal rules replaced by [`DENY_MASK`].
pub fn deny_rules(n: usize) -> Vec<Rule> {
    deny_terms(n)
        .into_iter()
        .map(|t| Rule {
            pattern: Box::leak(t.into_boxed_str()),
            literal: true,
            replacement: DENY_MASK,
            validator: None,
        })
        .collect()
}

/// The PII set with its default (Unicode) classes, and with ASCII `\b`.
pub fn pii_sets() -> Vec<(&'static str, Vec<Rule>)> {
    vec![
        ("pii_unicode", corpus::PII_UNICODE_B.to_vec()),
        ("pii_ascii", corpus::pii_ascii_b()),
    ]
}

/// The deny-list sizes of the bench.
pub const DENY_SIZES: [usize; 3] = [20, 1_000, 100_000];

/// `count` replies of about 2 KB (1.5 to 2.5 KB, cut at character
/// boundaries) from the corpus, with one of the first 20 deny-list terms
/// put in after a space about every 300 bytes, so every deny list has
/// matches.
pub fn replies(count: usize) -> Vec<String> {
    let text = corpus::corpus(count * 2048 + 4096);
    let terms = deny_terms(20);
    let mut rng = Rng::new(0x9A7E_0000_0000_2048);
    let mut out = Vec::with_capacity(count);
    let mut at = 0;
    while out.len() < count {
        let mut end = (at + rng.range(1536, 2560)).min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let body = &text[at..end];
        at = if end == text.len() { 0 } else { end };
        let mut reply = String::with_capacity(body.len() + 64);
        let mut next = rng.range(100, 500);
        for (i, c) in body.char_indices() {
            reply.push(c);
            if c == ' ' && i >= next {
                reply.push_str(&terms[rng.below(terms.len())]);
                reply.push(' ');
                next = i + rng.range(100, 500);
            }
        }
        out.push(reply);
    }
    out
}

/// Token lengths in bytes: 1 to 12, mean 4.1 (what a tokenizer emits for
/// English prose, code and some non-ASCII text).
const TOKEN_LENGTHS: [usize; 16] = [1, 2, 2, 3, 3, 3, 4, 4, 4, 4, 5, 5, 6, 6, 2, 12];

/// Cuts `text` into token-sized chunks: lengths from [`TOKEN_LENGTHS`] in
/// a deterministic order, each end moved forward to a character boundary.
pub fn tokens<'t>(text: &'t str, rng: &mut Rng) -> Vec<&'t str> {
    let mut out = Vec::with_capacity(text.len() / 3);
    let mut at = 0;
    while at < text.len() {
        let mut end = (at + TOKEN_LENGTHS[rng.below(TOKEN_LENGTHS.len())]).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[at..end]);
        at = end;
    }
    out
}

/// The token chunks of every reply.
pub fn tokenize(replies: &[String]) -> Vec<Vec<&str>> {
    let mut rng = Rng::new(0x70CE_0000_0000_0004);
    replies.iter().map(|r| tokens(r, &mut rng)).collect()
}
