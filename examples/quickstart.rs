//! Redact a model reply as it streams, chunk by chunk.
//!
//! A fake reply arrives in token-sized chunks that cut its private values
//! in pieces: a `<think>` block of private reasoning, an email address, a
//! phone number and an API key. One [`Replacer`] per stream removes the
//! reasoning and replaces the values, holding back only what could still
//! become a match. The example prints the rules, then for each chunk what
//! came in, what the user sees now and how many bytes are held, and, when
//! some are, which rules the held text could still become a match of; then
//! the final flush, and a check that the streamed text equals
//! [`Rules::replace_all`] on the whole reply. The key at the very end stays
//! held until the flush: with its `.`, it could still grow into an email
//! address.
//!
//! The second section runs the same chunks through `replace_all` one chunk
//! at a time, the design that looks right on whole inputs, and lists what
//! it leaks.
//!
//! Run it with `cargo run --example quickstart`.

use std::error::Error;

use stream_replace::{Replacer, Rules};

/// The reply the model "streams".
const REPLY: &str = "<think>The user is Lee (lee@corp.example); keep that private.</think>\
Sure! Email ann.lee@example.org or call +1 415-555-0134. Your key: sk-AbCd1234EfGh.";

/// Chunk sizes in bytes, used in turn: a fixed pattern, so every run cuts
/// the reply in the same places.
const SIZES: [usize; 10] = [3, 5, 2, 6, 4, 1, 5, 3, 6, 2];

/// The rules, in priority order: what each finds (for the printout), its
/// pattern and its replacement template.
const RULES: [(&str, &str, &str); 4] = [
    ("a think block", r"<think>[\s\S]*?</think>", ""),
    (
        "an email address",
        r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+",
        "[EMAIL]",
    ),
    ("a phone number", r"\+\d{1,3} \d{3}-\d{3}-\d{4}", "[PHONE]"),
    ("an API key", r"sk-[A-Za-z0-9]{8,}", "[KEY]"),
];

/// What must never reach the user, to find in the naive output.
const PRIVATE: [&str; 5] = [
    "<think>",
    "lee@corp.example",
    "ann.lee@example.org",
    "+1 415-555-0134",
    "sk-AbCd1234EfGh",
];

fn main() -> Result<(), Box<dyn Error>> {
    let mut builder = Rules::builder();
    for (_, pattern, replacement) in RULES {
        builder.regex(pattern, replacement);
    }
    let rules = builder.build()?;
    // Each rule on its own, to say which rules the held text could still
    // become a match of.
    let alone = RULES
        .iter()
        .map(|&(_, pattern, replacement)| Rules::builder().regex(pattern, replacement).build())
        .collect::<Result<Vec<_>, _>>()?;
    let chunks = token_chunks(REPLY);

    println!("Rules (the leftmost match wins; at the same start, the earlier rule):");
    for (i, (what, pattern, replacement)) in RULES.iter().enumerate() {
        println!("  {}. {what:<16} {pattern:<32} -> {replacement:?}", i + 1);
    }
    println!();
    println!(
        "Streaming {} bytes in {} chunks.",
        REPLY.len(),
        chunks.len()
    );
    println!("held = bytes received but not yet safe to show");
    let mut replacer: Replacer = rules.replacer();
    let mut received = String::new();
    let mut seen = String::new();
    for (i, chunk) in chunks.iter().enumerate() {
        let out = replacer.feed(chunk)?;
        received += chunk;
        println!(
            "chunk {:>2} in: {:<10} out: {:<12} held: {}",
            i + 1,
            format!("{chunk:?}"),
            format!("{out:?}"),
            replacer.held(),
        );
        if replacer.held() > 0 {
            // The held bytes are the tail of the input, from the earliest
            // position where a match could still start; a `&str` stream
            // emits whole characters, so this is a character boundary.
            let held = &received[received.len() - replacer.held()..];
            println!(
                "{:>13} {} could still become {}",
                "",
                shorten(held),
                becomes(&alone, held)
            );
        }
        seen += &out;
    }
    let rest = replacer.flush()?;
    println!("flush          out: {rest:?}");
    seen += &rest;

    println!();
    println!("The user saw:");
    println!("  {seen}");
    let whole = rules.replace_all(REPLY);
    if seen != whole {
        return Err(format!(
            "streamed output differs from replace_all on the whole reply:\n  \
             streamed: {seen:?}\n  whole:    {whole:?}"
        )
        .into());
    }
    println!("which is exactly rules.replace_all(reply).");

    println!();
    println!("The same chunks, each passed to replace_all on its own:");
    let naive: String = chunks.iter().map(|c| rules.replace_all(c)).collect();
    println!("  {naive}");
    for secret in PRIVATE {
        if naive.contains(secret) {
            println!(
                "  leaked {secret:?}, cut as {:?}",
                pieces(&chunks, REPLY, secret)
            );
        }
    }
    Ok(())
}

/// Which rules `held` could still become a match of, in words.
///
/// A rule counts when, run alone over `held`, it still holds every byte of
/// it: a match of that rule could still start at its first byte. The
/// replacer's own hold-back decides, not a second implementation of it.
fn becomes(alone: &[Rules], held: &str) -> String {
    let whats: Vec<&str> = alone
        .iter()
        .zip(RULES)
        .filter(|(rules, _)| {
            let mut r = rules.replacer();
            r.feed(held).is_ok() && r.held() == held.len()
        })
        .map(|(_, (what, _, _))| what)
        .collect();
    match whats.split_last() {
        None => "a match, though no rule run alone holds all of it".to_string(),
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// `text` quoted, cut after its first 32 characters.
fn shorten(text: &str) -> String {
    match text.char_indices().nth(32) {
        Some((at, _)) => format!("{:?}...", &text[..at]),
        None => format!("{text:?}"),
    }
}

/// Cuts `text` into chunks of [`SIZES`] bytes in turn, moving each cut
/// forward to a character boundary.
fn token_chunks(text: &str) -> Vec<&str> {
    let mut chunks = Vec::new();
    let mut start = 0;
    for size in SIZES.iter().cycle() {
        if start == text.len() {
            break;
        }
        let mut end = (start + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        chunks.push(&text[start..end]);
        start = end;
    }
    chunks
}

/// The chunks that carry a part of `secret`'s first occurrence in `text`.
fn pieces<'a>(chunks: &[&'a str], text: &str, secret: &str) -> Vec<&'a str> {
    let Some(from) = text.find(secret) else {
        return Vec::new();
    };
    let to = from + secret.len();
    let mut at = 0;
    let mut out = Vec::new();
    for chunk in chunks {
        let end = at + chunk.len();
        if at < to && from < end {
            out.push(*chunk);
        }
        at = end;
    }
    out
}
