//! A regression test for one split: Rust source that replays the split
//! with `assert_chunk_invariant_with` and `Splits::explicit`.

use std::fmt::Write;

/// An input as the tools take it: text, or bytes when a split cuts inside
/// a UTF-8 character.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Input {
    Text(String),
    Bytes(Vec<u8>),
}

impl Input {
    pub(crate) fn as_bytes(&self) -> &[u8] {
        match self {
            Input::Text(text) => text.as_bytes(),
            Input::Bytes(bytes) => bytes,
        }
    }

    /// A Rust literal for `bytes`, a part of this input: a `&str` literal
    /// for text, a `&[u8]` for bytes.
    fn literal(&self, bytes: &[u8]) -> String {
        match self {
            Input::Text(_) => {
                let text = std::str::from_utf8(bytes).expect("text is cut between characters");
                // `Debug` escapes exactly as a Rust string literal may.
                format!("{text:?}")
            }
            Input::Bytes(_) => format!("&b\"{}\"[..]", bytes.escape_ascii()),
        }
    }
}

/// Decodes the `hex` encoding of the check's JSON report.
pub(crate) fn from_hex(hex: &str) -> Result<Vec<u8>, String> {
    if !hex.len().is_multiple_of(2) {
        return Err(format!(
            "{hex:?} is not hex: it has an odd number of digits"
        ));
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| {
            hex.get(i..i + 2)
                .and_then(|pair| u8::from_str_radix(pair, 16).ok())
                .ok_or_else(|| format!("{hex:?} is not hex"))
        })
        .collect()
}

/// The cut offsets of a split given as chunks, which must join back to
/// `input`.
pub(crate) fn cuts_of_split(input: &[u8], chunks: &[Vec<u8>]) -> Result<Vec<usize>, String> {
    if chunks.concat() != input {
        return Err("the split's chunks do not join back to the input".to_owned());
    }
    let mut at = 0;
    Ok(chunks[..chunks.len().saturating_sub(1)]
        .iter()
        .map(|chunk| {
            at += chunk.len();
            at
        })
        .collect())
}

/// Checks that `cuts` are a split of `input`: non-decreasing, within it,
/// and on a text input between characters.
pub(crate) fn check_cuts(input: &Input, cuts: &[usize]) -> Result<(), String> {
    let len = input.as_bytes().len();
    if cuts.windows(2).any(|w| w[0] > w[1]) {
        return Err(format!("the cuts {cuts:?} decrease"));
    }
    if let Some(&cut) = cuts.iter().find(|&&cut| cut > len) {
        return Err(format!(
            "the cut at {cut} is past the end of the input ({len} bytes)"
        ));
    }
    if let Input::Text(text) = input
        && let Some(&cut) = cuts.iter().find(|&&cut| !text.is_char_boundary(cut))
    {
        return Err(format!(
            "the cut at {cut} is inside a character: give the input and split as hex \
             (encoding \"hex\") to cut inside characters"
        ));
    }
    Ok(())
}

/// The default name of the test for a split with these cuts.
pub(crate) fn test_name(cuts: &[usize]) -> String {
    match cuts {
        [] => "chunk_invariant_whole_input".to_owned(),
        [cut] => format!("chunk_invariant_cut_at_{cut}"),
        cuts => {
            let mut name = "chunk_invariant_cuts_at".to_owned();
            for cut in cuts {
                let _ = write!(name, "_{cut}");
            }
            name
        }
    }
}

/// Whether `name` can name a Rust function.
pub(crate) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
        && name != "_"
}

/// The source of a `#[test]` that checks `stream_filter` against
/// `whole_filter` (Rust expressions) on `input` split at `cuts`.
///
/// `cuts` must have passed [`check_cuts`].
pub(crate) fn regression_test(
    input: &Input,
    cuts: &[usize],
    stream_filter: &str,
    whole_filter: &str,
    name: &str,
) -> String {
    let bytes = input.as_bytes();
    let mut bounds = vec![0];
    bounds.extend_from_slice(cuts);
    bounds.push(bytes.len());
    let chunks: Vec<String> = bounds
        .windows(2)
        .map(|w| input.literal(&bytes[w[0]..w[1]]))
        .collect();
    let at = match cuts {
        [] => "no cut".to_owned(),
        [cut] => format!("cut at {cut}"),
        cuts => format!(
            "cuts at {}",
            cuts.iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    format!(
        "// This split of the input ({at}) once streamed another output than the whole input.
#[test]
fn {name}() {{
    use chunk_invariance::{{assert_chunk_invariant_with, Splits}};

    let input = {input};
    let split = vec![{chunks}];
    assert_chunk_invariant_with(
        {stream_filter},
        {whole_filter},
        input,
        Splits::explicit([split]),
    );
}}
",
        input = input.literal(bytes),
        chunks = chunks.join(", "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_decodes_and_rejects() {
        assert_eq!(from_hex("c3a9"), Ok(vec![0xc3, 0xa9]));
        assert_eq!(from_hex(""), Ok(vec![]));
        assert!(from_hex("c3a").is_err());
        assert!(from_hex("zz").is_err());
        assert!(from_hex("é1").is_err());
    }

    #[test]
    fn cuts_come_from_chunks_that_join_back() {
        let chunks = [b"ab".to_vec(), b"".to_vec(), b"c".to_vec()];
        assert_eq!(cuts_of_split(b"abc", &chunks), Ok(vec![2, 2]));
        assert!(cuts_of_split(b"abd", &chunks).is_err());
        assert_eq!(cuts_of_split(b"", &[b"".to_vec()]), Ok(vec![]));
    }

    #[test]
    fn cuts_must_be_a_split_of_the_input() {
        let text = Input::Text("é!".to_owned());
        assert_eq!(check_cuts(&text, &[2, 2, 3]), Ok(()));
        assert!(check_cuts(&text, &[1]).unwrap_err().contains("hex"));
        assert!(check_cuts(&text, &[3, 2]).is_err());
        assert!(check_cuts(&text, &[4]).is_err());
        assert_eq!(check_cuts(&Input::Bytes("é!".into()), &[1]), Ok(()));
    }

    #[test]
    fn names_are_identifiers() {
        assert_eq!(test_name(&[5, 9]), "chunk_invariant_cuts_at_5_9");
        assert!(is_identifier(&test_name(&[])));
        assert!(is_identifier("_x1"));
        assert!(!is_identifier("1x"));
        assert!(!is_identifier("a-b"));
        assert!(!is_identifier("_"));
        assert!(!is_identifier(""));
    }

    #[test]
    fn the_test_replays_the_split_with_literals_that_escape() {
        let input = Input::Text("a \"q\"\nb".to_owned());
        let source = regression_test(&input, &[2], "f", "g", "t");
        assert!(source.contains(r#"let input = "a \"q\"\nb";"#), "{source}");
        assert!(
            source.contains(r#"let split = vec!["a ", "\"q\"\nb"];"#),
            "{source}"
        );
        assert!(source.contains("Splits::explicit([split])"), "{source}");
        assert!(source.contains("(cut at 2)"), "{source}");
        let input = Input::Bytes("é".into());
        let source = regression_test(&input, &[1], "f", "g", "t");
        assert!(
            source.contains(r#"let split = vec![&b"\xc3"[..], &b"\xa9"[..]];"#),
            "{source}"
        );
    }
}
