//! `Replacement::keyed_hash`: HMAC-SHA256 placeholders, the same for the
//! same value and key in every stream and rule set, checked against the
//! published HMAC-SHA256 test vectors (RFC 4231).

use stream_replace::{Pattern, Replacement, Rules};

fn rules(entity: &str, key: &[u8], digits: Option<usize>) -> Rules {
    let replacement = match digits {
        Some(d) => Replacement::keyed_hash_len(entity, key, d),
        None => Replacement::keyed_hash(entity, key),
    };
    Rules::builder()
        .rule(Pattern::regex(r"[a-z]+@[a-z]+\.[a-z]+"), replacement)
        .build()
        .unwrap()
}

#[test]
fn the_placeholder_is_hmac_sha256_of_the_match() {
    // RFC 4231, test case 2: key "Jefe", data "what do ya want for nothing?".
    let rules = Rules::builder()
        .rule(
            Pattern::literal("what do ya want for nothing?"),
            Replacement::keyed_hash_len("X", b"Jefe", 64),
        )
        .build()
        .unwrap();
    assert_eq!(
        rules.replace_all("> what do ya want for nothing?"),
        "> [X_5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843]"
    );
    // Test case 6: a key longer than the block size (131 bytes of 0xaa).
    let key = [0xaa_u8; 131];
    let rules = Rules::builder()
        .rule(
            Pattern::literal("Test Using Larger Than Block-Size Key - Hash Key First"),
            Replacement::keyed_hash("K", &key),
        )
        .build()
        .unwrap();
    assert_eq!(
        rules.replace_all("Test Using Larger Than Block-Size Key - Hash Key First"),
        "[K_60e431591ee0]"
    );
}

#[test]
fn the_length_is_the_one_asked_for_within_1_to_64() {
    for (asked, got) in [
        (0, 1),
        (1, 1),
        (6, 6),
        (12, 12),
        (63, 63),
        (64, 64),
        (65, 64),
        (1000, 64),
    ] {
        let out = rules("E", b"k", Some(asked)).replace_all("ann@x.org");
        let hex = out.strip_prefix("[E_").unwrap().strip_suffix(']').unwrap();
        assert_eq!(hex.len(), got, "{asked}");
        assert!(
            hex.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
    }
    let short = rules("E", b"k", Some(6)).replace_all("ann@x.org");
    let long = rules("E", b"k", Some(64)).replace_all("ann@x.org");
    assert_eq!(short[3..9], long[3..9], "a prefix of the same tag");
}

#[test]
fn same_value_and_key_same_placeholder_across_streams_and_rule_sets() {
    let input = "ann@x.org, bob@y.org, ann@x.org";
    let a = rules("EMAIL", b"tenant key", None);
    let b = rules("EMAIL", b"tenant key", None);
    let whole = a.replace_all(input);
    let tags: Vec<&str> = whole.split(", ").collect();
    assert_eq!(tags[0], tags[2]);
    assert_ne!(tags[0], tags[1]);
    // Another stream, another build of the same rules, chunks of one byte:
    // the same placeholders (no state carried between them).
    let mut r = b.replacer();
    let mut streamed = String::new();
    for ch in input.chars() {
        streamed += &r.feed(&ch.to_string()).unwrap();
    }
    streamed += &r.flush().unwrap();
    assert_eq!(streamed, whole);
    r.reset();
    assert_eq!(r.feed("bob@y.org").unwrap() + &r.flush().unwrap(), tags[1]);
    // Another key: other placeholders.
    let other = rules("EMAIL", b"other key", None).replace_all(input);
    assert_ne!(other, whole);
}

#[test]
fn counters_stay_per_stream_beside_hashes() {
    let rules = Rules::builder()
        .rule(
            Pattern::regex(r"[a-z]+@[a-z]+\.[a-z]+"),
            Replacement::counter("EMAIL"),
        )
        .rule(
            Pattern::regex(r"\d{3}-\d{4}"),
            Replacement::keyed_hash("PHONE", b"k"),
        )
        .build()
        .unwrap();
    let mut one = rules.replacer();
    let mut two = rules.replacer();
    let a = one.feed("bob@y.org 555-0134").unwrap() + &one.flush().unwrap();
    let b = two.feed("ann@x.org 555-0134").unwrap() + &two.flush().unwrap();
    assert!(a.starts_with("[EMAIL_1] [PHONE_") && b.starts_with("[EMAIL_1] [PHONE_"));
    assert_eq!(a, b, "each stream numbers from 1; the hash is the same");
}
