//! Redact a model reply as it streams, chunk by chunk.
//!
//! A fake reply arrives in token-sized chunks that cut its private values
//! in pieces: a `<think>` block of private reasoning, an email address, a
//! phone number and an API key. One [`Replacer`] per stream removes the
//! reasoning and replaces the values, holding back only what could still
//! become a match. For each chunk the example prints what came in, what
//! the user sees now, and how many bytes are held; then the final flush,
//! and a check that the streamed text equals [`Rules::replace_all`] on the
//! whole reply. The key at the very end stays held until the flush: with
//! its `.`, it could still grow into an email address.
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

/// What must never reach the user, to find in the naive output.
const PRIVATE: [&str; 5] = [
    "<think>",
    "lee@corp.example",
    "ann.lee@example.org",
    "+1 415-555-0134",
    "sk-AbCd1234EfGh",
];

fn main() -> Result<(), Box<dyn Error>> {
    let rules = Rules::builder()
        .regex(r"<think>[\s\S]*?</think>", "")
        .regex(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", "[EMAIL]")
        .regex(r"\+\d{1,3} \d{3}-\d{3}-\d{4}", "[PHONE]")
        .regex(r"sk-[A-Za-z0-9]{8,}", "[KEY]")
        .build()?;
    let chunks = token_chunks(REPLY);

    println!(
        "Streaming {} bytes in {} chunks.",
        REPLY.len(),
        chunks.len()
    );
    println!("held = bytes received but not yet safe to show");
    let mut replacer: Replacer = rules.replacer();
    let mut seen = String::new();
    for (i, chunk) in chunks.iter().enumerate() {
        let out = replacer.feed(chunk)?;
        println!(
            "chunk {:>2} in: {:<10} out: {:<12} held: {}",
            i + 1,
            format!("{chunk:?}"),
            format!("{out:?}"),
            replacer.held(),
        );
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
