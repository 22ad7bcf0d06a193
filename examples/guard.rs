//! A gateway's guard over a model reply, in three scenarios.
//!
//! 1. **Contact details masked in flight.** A reply with an email address
//!    and a phone number arrives in token-sized chunks; the PII pack masks
//!    them as they stream, and the stream reports which rule fired where
//!    (ids and spans, no values).
//! 2. **An SSN halts the stream.** A reply that goes on to quote a US
//!    Social Security number: the user sees everything before it, the
//!    stream stops with the rule named and its reason, and nothing of the
//!    number or after it is shown, by this feed or any later one.
//! 3. **One-character tokens show exactly the stored copy.** The same
//!    replies fed one character at a time give exactly the text and the
//!    triggers of [`Rules::evaluate`] on the whole reply, the copy a
//!    gateway stores for audit.
//!
//! Run it with `cargo run --example guard`.

use std::error::Error;

use stream_replace::{Replacer, Rules, StreamErrorKind, Trigger, pack};

const CONTACT: &str = "Sure! Write to ann.lee@example.org or call +1 415-555-0134 before Friday.";

const SSN: &str = "Your file says SSN 123-45-6789, born 1984; I hope that helps.";

/// Chunk sizes in bytes, used in turn (a fixed pattern, so every run cuts
/// the replies in the same places).
const SIZES: [usize; 8] = [3, 5, 2, 6, 4, 1, 5, 3];

/// The reply cut in chunks of `SIZES` bytes (at character boundaries).
fn chunks(reply: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = reply;
    for &n in SIZES.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let mut n = n.min(rest.len());
        while !rest.is_char_boundary(n) {
            n += 1;
        }
        let (head, tail) = rest.split_at(n);
        out.push(head);
        rest = tail;
    }
    out
}

/// What a stream shows, chunk by chunk, until it ends or blocks.
struct Shown {
    text: String,
    triggers: Vec<Trigger>,
    blocked: Option<stream_replace::Block>,
}

fn stream(r: &mut Replacer, chunks: &[&str], verbose: bool) -> Shown {
    r.record_triggers(true, false);
    let mut text = String::new();
    let mut blocked = None;
    for chunk in chunks {
        match r.feed(chunk) {
            Ok(out) => {
                if verbose {
                    println!(
                        "  in {:<9} shown {:<12} held {}",
                        format!("{chunk:?}"),
                        format!("{out:?}"),
                        r.held()
                    );
                }
                text += &out;
            }
            Err(e) if e.kind() == StreamErrorKind::Blocked => {
                let safe = String::from_utf8_lossy(e.released());
                if verbose {
                    println!(
                        "  in {:<9} shown {:<12} BLOCKED",
                        format!("{chunk:?}"),
                        format!("{safe:?}")
                    );
                }
                text += &safe;
                blocked = e.block().cloned();
                break;
            }
            Err(e) => panic!("unexpected failure: {e}"),
        }
    }
    if blocked.is_some() {
        // Later calls report the same block and show nothing more.
        let again = r.feed(" more").unwrap_err();
        assert_eq!(again.block(), blocked.as_ref());
        assert!(again.released().is_empty());
        r.reset();
    } else {
        let out = r.flush().expect("no block at the end");
        if verbose {
            println!("  flush        shown {out:?}");
        }
        text += &out;
    }
    Shown {
        text,
        triggers: r.take_triggers(),
        blocked,
    }
}

fn show_triggers(triggers: &[Trigger]) {
    for t in triggers {
        println!(
            "  trigger: rule {:?} ({:?}) at bytes {:?}",
            t.id(),
            t.action(),
            t.span()
        );
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    let mut builder = Rules::builder();
    pack::pii().add_to(&mut builder);
    let rules = builder.build()?;
    let mut r = rules.replacer();

    println!("1. Contact details masked in flight\n");
    let shown = stream(&mut r, &chunks(CONTACT), true);
    println!("\n  the user saw: {:?}", shown.text);
    show_triggers(&shown.triggers);
    assert!(shown.blocked.is_none());
    assert!(!shown.text.contains("ann.lee") && !shown.text.contains("555-0134"));

    println!("\n2. An SSN halts the stream\n");
    let shown = stream(&mut r, &chunks(SSN), true);
    let block = shown.blocked.as_ref().expect("the SSN blocks");
    println!("\n  the user saw: {:?}", shown.text);
    println!(
        "  stopped by rule {:?}: {} (bytes {:?} of the reply)",
        block.id(),
        block.reason(),
        block.span()
    );
    assert_eq!(block.id(), "us_ssn");
    assert_eq!(shown.text, "Your file says SSN ");
    assert!(!shown.text.contains("123") && !shown.text.contains("born"));

    println!("\n3. One-character tokens show exactly the stored copy\n");
    for reply in [CONTACT, SSN] {
        let stored = rules.evaluate(reply);
        let ones: Vec<&str> = reply
            .char_indices()
            .map(|(i, c)| &reply[i..i + c.len_utf8()])
            .collect();
        let shown = stream(&mut r, &ones, false);
        println!("  stored copy: {:?}", stored.text());
        println!("  streamed:    {:?}", shown.text);
        assert_eq!(shown.text, stored.text());
        assert_eq!(shown.triggers, stored.triggers());
        assert_eq!(shown.blocked.as_ref(), stored.block());
    }
    println!("\n  identical, triggers and verdict included.");
    let c = r.counters();
    println!(
        "\ncounters: email {}, phone {}, us_ssn {}; blocks {}",
        c.matches("email"),
        c.matches("phone"),
        c.matches("us_ssn"),
        c.blocks(),
    );
    Ok(())
}
