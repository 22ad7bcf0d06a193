//! Checks on matched text that a regex cannot express: check digits and
//! number ranges ([`luhn`], [`us_ssn`], [`iban`]), digit counts
//! ([`phone`]), whether a labelled value is a value ([`credential`]), the
//! id length of a Terraform token ([`terraform_token_id`]),
//! randomness ([`high_entropy`], [`shannon_entropy`]) and the BIP39 word
//! list and checksum ([`bip39`]).
//!
//! A pattern finds text shaped like a card number, an SSN or an IBAN; these
//! functions say whether the text can actually be one. Each takes the
//! matched `&str`, allocates nothing (but [`bip39`], which builds its word
//! index once), and never panics. They are plain
//! functions (`fn(&str) -> bool`), so they fit wherever a validator is
//! expected, for example in a [`Replacement::with`](crate::Replacement::with)
//! closure that keeps a rejected match unchanged:
//!
//! ```
//! use stream_replace::{validate, Rules};
//!
//! let rules = Rules::builder()
//!     .regex_with(r"(?-u:\b)[0-9](?:[ -]?[0-9]){12,18}(?-u:\b)", |c| {
//!         if validate::luhn(c.as_str()) { "[CARD]".to_owned() } else { c.as_str().to_owned() }
//!     })
//!     .build()?;
//! assert_eq!(
//!     rules.replace_all("paid with 4111 1111 1111 1111, order 4111 1111 1111 1112"),
//!     "paid with [CARD], order 4111 1111 1111 1112",
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

/// Whether `s` is a number that passes the Luhn check (ISO/IEC 7812), as
/// payment card numbers do.
///
/// `s` is ASCII digits, where a single space or dash may separate two
/// digits (`4111 1111 1111 1111`, `4111-1111-1111-1111`). Anything else,
/// fewer than two digits, a leading or trailing separator, or two
/// separators in a row is rejected. The length is not checked: card
/// numbers have 13 to 19 digits, which is the pattern's job.
///
/// The check catches every single-digit error and most swaps of two
/// adjacent digits; one random number in ten passes it.
///
/// # Example
///
/// ```
/// use stream_replace::validate::luhn;
///
/// assert!(luhn("4111 1111 1111 1111"));
/// assert!(luhn("79927398713"));
/// assert!(!luhn("4111 1111 1111 1112"));
/// assert!(!luhn("4111  1111 1111 1111"));
/// ```
pub fn luhn(s: &str) -> bool {
    let mut sum = 0u32;
    let mut digits = 0usize;
    let mut after_digit = false;
    // From the right, every second digit is doubled.
    for b in s.bytes().rev() {
        match b {
            b'0'..=b'9' => {
                let mut d = u32::from(b - b'0');
                if digits % 2 == 1 {
                    d *= 2;
                    if d > 9 {
                        d -= 9;
                    }
                }
                sum += d;
                digits += 1;
                after_digit = true;
            }
            b' ' | b'-' if after_digit => after_digit = false,
            _ => return false,
        }
    }
    after_digit && digits >= 2 && sum % 10 == 0
}

/// Whether `s` is a US Social Security number that can have been issued.
///
/// `s` is nine ASCII digits, `AAA-GG-SSSS`, `AAA GG SSSS` or `AAAGGSSSS`
/// (both separators the same). The area `AAA` is not `000`, `666` or in
/// `900..=999`; the group `GG` is not `00`; the serial `SSSS` is not
/// `0000`. These are the Social Security Administration's rules since
/// 2011; a number that passes them may still never have been issued.
///
/// # Example
///
/// ```
/// use stream_replace::validate::us_ssn;
///
/// assert!(us_ssn("123-45-6789"));
/// assert!(us_ssn("123456789"));
/// assert!(!us_ssn("666-45-6789"));
/// assert!(!us_ssn("123-00-6789"));
/// assert!(!us_ssn("123-45 6789"));
/// ```
pub fn us_ssn(s: &str) -> bool {
    let b = s.as_bytes();
    let (area, group, serial) = match b.len() {
        9 => (&b[0..3], &b[3..5], &b[5..9]),
        11 if (b[3] == b'-' || b[3] == b' ') && b[6] == b[3] => (&b[0..3], &b[4..6], &b[7..11]),
        _ => return false,
    };
    let all_digits = |part: &[u8]| part.iter().all(u8::is_ascii_digit);
    let all_zero = |part: &[u8]| part.iter().all(|&d| d == b'0');
    all_digits(area)
        && all_digits(group)
        && all_digits(serial)
        && !all_zero(area)
        && area != b"666"
        && area[0] != b'9'
        && !all_zero(group)
        && !all_zero(serial)
}

/// Whether `s` is an IBAN (ISO 13616) with valid check digits.
///
/// `s` is the electronic form (`GB82WEST12345698765432`) or the print
/// form, where single spaces may separate the characters
/// (`GB82 WEST 1234 5698 7654 32`); letters are upper case, as both forms
/// write them. It must start with two letters (the country) and two check
/// digits, followed by letters and digits; its length without spaces must
/// be the country's length in the IBAN registry for the countries listed
/// there as of 2024, and 15 to 34 for other country codes; and the ISO
/// 7064 mod-97 check must give 1. The country's own BBAN format (which of
/// its characters are letters) is not checked.
///
/// The mod-97 check catches every single-character error and every swap
/// of two adjacent digits.
///
/// # Example
///
/// ```
/// use stream_replace::validate::iban;
///
/// assert!(iban("GB82 WEST 1234 5698 7654 32"));
/// assert!(iban("DE89370400440532013000"));
/// assert!(!iban("GB82 WEST 1234 5698 7654 33"));
/// assert!(!iban("GB82 WEST 1234 5698 7654"));
/// ```
pub fn iban(s: &str) -> bool {
    let b = s.as_bytes();
    if b.first() == Some(&b' ') || b.last() == Some(&b' ') || s.contains("  ") {
        return false;
    }
    let mut chars = b.iter().copied().filter(|&c| c != b' ');
    let mut head = [0u8; 4];
    for h in &mut head {
        match chars.next() {
            Some(c) => *h = c,
            None => return false,
        }
    }
    if !head[..2].iter().all(u8::is_ascii_uppercase) || !head[2..].iter().all(u8::is_ascii_digit) {
        return false;
    }
    let len = b.iter().filter(|&&c| c != b' ').count();
    let len_ok = match country_length([head[0], head[1]]) {
        Some(want) => len == want,
        None => (15..=34).contains(&len),
    };
    if !len_ok {
        return false;
    }
    // The check moves the first four characters to the end, reads letters
    // as 10..=35, and takes the resulting number mod 97, one character at
    // a time so that it never overflows.
    let mut rem = 0u32;
    for c in chars.chain(head) {
        rem = match c {
            b'0'..=b'9' => (rem * 10 + u32::from(c - b'0')) % 97,
            b'A'..=b'Z' => (rem * 100 + u32::from(c - b'A') + 10) % 97,
            _ => return false,
        };
    }
    rem == 1
}

/// Whether `s`, a phone number as written, has a plausible number of
/// digits: 8 to 15 when it starts with `+` (E.164's limit, country code
/// included; a trunk prefix written `(0)` after the country code, as in
/// `+44 (0)20 …`, is not counted); otherwise (national forms, trunk `0`
/// included) 10 or 11, or 12 written as two groups (German mobiles,
/// `0151 12345678`). Only digits, spaces, `.`, `-`, `(`, `)` and a leading
/// `+` are allowed.
///
/// The national bounds keep dates and times (8 digits or fewer with their
/// separators) and the tail of a longer grouped number (three groups of
/// four: 12 digits) out.
///
/// # Example
///
/// ```
/// use stream_replace::validate::phone;
///
/// assert!(phone("+44 20 7946 0958"));
/// assert!(phone("+44 (0)20 7946 0958"));
/// assert!(phone("020 7946 0958"));
/// assert!(phone("0151 12345678"));
/// assert!(!phone("+44 20 7946 0958 2024 11")); // 17 digits
/// assert!(!phone("03-12-2024")); // 8 digits: a date
/// assert!(!phone("0964 5425 6462")); // the tail of a 16-digit number
/// ```
pub fn phone(s: &str) -> bool {
    let (international, rest) = match s.strip_prefix('+') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    if !rest
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b' ' | b'.' | b'-' | b'(' | b')'))
    {
        return false;
    }
    let digits = rest.bytes().filter(u8::is_ascii_digit).count();
    if international {
        let trunk = usize::from(rest.contains("(0)"));
        (8..=15).contains(&(digits - trunk))
    } else {
        let groups = rest
            .split(|c: char| !c.is_ascii_digit())
            .filter(|g| !g.is_empty())
            .count();
        (10..=11).contains(&digits) || (digits == 12 && groups == 2)
    }
}

/// Whether the value of a labelled credential (`password=…`,
/// `"api_key": "…"`, `token: …`) looks like a value rather than code,
/// prose or a placeholder.
///
/// `s` is a whole match of the credential rules: a label of ASCII letters,
/// digits, `_`, `.` and `-`, an optional closing quote, a separator (`=`,
/// `:`, `:=`, `=>`, with spaces or tabs around it), an optional opening
/// quote, then the value. It is rejected when the value:
///
/// * refers to a value instead of being one: starts with `$`, `{`, `<`,
///   `%`, `[`, `*`, `&` or `\` (`${DB_PASSWORD}`, `{{ .token }}`,
///   `<your key>`, `[REDACTED]`, `&str`, a regex `\S+`);
/// * is one character repeated (`********`, `xxxxxx`);
/// * is a word that stands for no value: `null`, `none`, `nil`, `true`,
///   `false`, `undefined`, `empty`, `redacted`, `hidden`, `required`,
///   `optional`, `string`, `secret`, `password`, `token` (any case);
/// * is not quoted and reads as code or prose: a name (`snake_case`,
///   `SCREAMING_CASE`, or `camelCase` where each capital starts a run of
///   lower-case letters: `token = token_value`, `secret: String`), names
///   joined by dots (`self.api_key`), or anything with brackets or
///   parentheses (`tokens[i]`, `get_token()`, `Option<String>`); or is
///   shorter than 6 characters. A bare password of lower-case letters only
///   (`password=hunter`) is taken for a word and passes.
///
/// A quoted value is a value: it is accepted unless one of the first three
/// rules rejects it.
///
/// # Example
///
/// ```
/// use stream_replace::validate::credential;
///
/// assert!(credential("password=hunter2hunter2"));
/// assert!(credential(r#"password": "opensesame"#));
/// assert!(!credential("password = password_hash"));
/// assert!(!credential("token: String"));
/// assert!(!credential("api_key=${API_KEY}"));
/// assert!(!credential(r#""secret": "********"#));
/// ```
pub fn credential(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'_' | b'.' | b'-')) {
        i += 1;
    }
    if i == 0 {
        return false;
    }
    if i < b.len() && matches!(b[i], b'"' | b'\'') {
        i += 1;
    }
    let blanks = |mut i: usize| {
        while i < b.len() && matches!(b[i], b' ' | b'\t') {
            i += 1;
        }
        i
    };
    i = blanks(i);
    let sep_start = i;
    while i < b.len() && matches!(b[i], b':' | b'=' | b'>') {
        i += 1;
    }
    if i == sep_start {
        return false;
    }
    i = blanks(i);
    let quoted = i < b.len() && matches!(b[i], b'"' | b'\'');
    if quoted {
        i += 1;
    }
    credential_value(&s[i..], quoted)
}

/// Whether `s`, a match of the `terraform_cloud_token` pack rule, has the
/// 14-character id of an HCP Terraform (Terraform Cloud) API token:
/// exactly 14 bytes before its first `.` (`xrA5qg1saRCcNB.atlasv1.…`).
///
/// The rule matches the id as a run of letters and digits of any length
/// and leaves the count to this check, so that no match attempt has to
/// count 14 characters from the start of every word; a longer run is
/// rejected at each start until its last 14 remain.
///
/// # Example
///
/// ```
/// use stream_replace::validate::terraform_token_id;
///
/// assert!(terraform_token_id("xrA5qg1saRCcNB.atlasv1.iYdOoJfO"));
/// assert!(!terraform_token_id("axrA5qg1saRCcNB.atlasv1.iYdOoJfO"));
/// assert!(!terraform_token_id("rA5qg1saRCcNB.atlasv1.iYdOoJfO"));
/// assert!(!terraform_token_id("no dot at all"));
/// ```
pub fn terraform_token_id(s: &str) -> bool {
    s.find('.') == Some(14)
}

/// Whether `part` reads as a name in code or a word: `snake_case`,
/// `SCREAMING_CASE`, or `camelCase`/`PascalCase` where each upper-case
/// letter starts a run of at least two lower-case ones (`String`,
/// `tokenValue`). Random letters rarely read so: 1.5% of 12 random ASCII
/// letters do.
fn reads_as_a_name(part: &str) -> bool {
    let b = part.as_bytes();
    if b.is_empty() || !b.iter().all(|&c| c.is_ascii_alphabetic() || c == b'_') {
        return false;
    }
    let lower = b.iter().all(|&c| !c.is_ascii_uppercase());
    let upper = b.iter().all(|&c| !c.is_ascii_lowercase());
    let camel = !b.contains(&b'_')
        && b.iter().enumerate().all(|(i, c)| {
            !c.is_ascii_uppercase()
                || (b.len() >= i + 3
                    && b[i + 1].is_ascii_lowercase()
                    && b[i + 2].is_ascii_lowercase())
        });
    lower || upper || camel
}

/// The value part of [`credential`].
fn credential_value(v: &str, quoted: bool) -> bool {
    let b = v.as_bytes();
    let Some(&first) = b.first() else {
        return false;
    };
    if matches!(
        first,
        b'$' | b'{' | b'<' | b'%' | b'[' | b'*' | b'&' | b'\\'
    ) || b.iter().all(|&c| c == first)
    {
        return false;
    }
    const NOT_VALUES: &[&str] = &[
        "null",
        "none",
        "nil",
        "true",
        "false",
        "undefined",
        "empty",
        "redacted",
        "hidden",
        "required",
        "optional",
        "string",
        "secret",
        "password",
        "token",
    ];
    if NOT_VALUES.iter().any(|w| v.eq_ignore_ascii_case(w)) {
        return false;
    }
    if quoted {
        return true;
    }
    let code = v.split('.').all(reads_as_a_name)
        || b.iter()
            .any(|c| matches!(c, b'(' | b')' | b'[' | b']' | b'<' | b'>' | b'{' | b'}'));
    !code && v.len() >= 6
}

/// The Shannon entropy of the characters of `s`, in bits per character:
/// `-Σ p·log2(p)` over the frequency `p` of each distinct byte. 0 for an
/// empty string or one character repeated; at most `log2(len)`.
///
/// # Example
///
/// ```
/// use stream_replace::validate::shannon_entropy;
///
/// assert_eq!(shannon_entropy("aaaa"), 0.0);
/// assert_eq!(shannon_entropy("abab"), 1.0);
/// assert_eq!(shannon_entropy("0123456789abcdef"), 4.0);
/// ```
pub fn shannon_entropy(s: &str) -> f64 {
    let mut counts = [0u32; 256];
    for &b in s.as_bytes() {
        counts[usize::from(b)] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

/// Whether `s` looks like a random token: 20 or more characters of base64
/// or base64url (`=` padding at the end allowed), with at least one letter
/// and one digit, and a [Shannon entropy](shannon_entropy) of at least 4.0
/// bits per character, or, for hex digits only, 32 or more characters and
/// at least 3.0 bits per character.
///
/// For a sense of the thresholds: 20 random base64 characters have about
/// 4.0 to 4.3 bits per character, 32 random hex digits about 3.4 to 3.8;
/// English words and most identifiers stay under 3.8 (they repeat letters).
/// It is a heuristic: long random-looking identifiers, hashes and base64
/// data pass it.
///
/// # Example
///
/// ```
/// use stream_replace::validate::high_entropy;
///
/// assert!(high_entropy("q8Zt2Lw9XcV4bN1mR7kP0sJd"));
/// assert!(high_entropy("3f9a1c0b27de4f6a8b9c0d1e2f3a4b5c"));
/// assert!(!high_entropy("stream_replace_benches_linear"));
/// assert!(!high_entropy("aaaaaaaaaaaaaaaaaaaaaaa1"));
/// ```
pub fn high_entropy(s: &str) -> bool {
    let body = s.trim_end_matches('=');
    let b = body.as_bytes();
    if b.len() < 20
        || s.len() - body.len() > 2
        || !b
            .iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'_' | b'-'))
        || !b.iter().any(u8::is_ascii_digit)
        || !b.iter().any(u8::is_ascii_alphabetic)
    {
        return false;
    }
    let h = shannon_entropy(body);
    if b.iter().all(u8::is_ascii_hexdigit) {
        b.len() >= 32 && h >= 3.0
    } else {
        h >= 4.0
    }
}

/// The English BIP39 word list, sorted, one word a line (from BIP 0039,
/// public domain).
const BIP39_ENGLISH: &str = include_str!("validate/bip39_english.txt");

/// The index of `word` in the English BIP39 list.
fn bip39_index(word: &str) -> Option<usize> {
    use std::sync::OnceLock;
    static WORDS: OnceLock<Vec<&'static str>> = OnceLock::new();
    let words = WORDS.get_or_init(|| BIP39_ENGLISH.lines().collect());
    words.binary_search(&word).ok()
}

/// Whether `s` is a BIP39 mnemonic in the English list: 12, 15, 18, 21 or
/// 24 list words separated by single spaces, whose checksum holds (the
/// last `words / 3` bits are the first bits of the SHA-256 of the rest).
///
/// Words outside the list, another count, or a wrong checksum reject it,
/// so a sentence of list words passes only with the checksum's chance:
/// 1 in 16 for 12 words, 1 in 256 for 24.
///
/// # Example
///
/// ```
/// use stream_replace::validate::bip39;
///
/// let phrase = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about";
/// assert!(bip39(phrase));
/// assert!(!bip39(&phrase.replace("about", "above"))); // checksum fails
/// assert!(!bip39("abandon abandon abandon"));
/// ```
pub fn bip39(s: &str) -> bool {
    use sha2::{Digest, Sha256};
    let mut bits = [0u8; 33];
    let mut n = 0usize;
    for word in s.split(' ') {
        let Some(index) = bip39_index(word) else {
            return false;
        };
        if n == 24 {
            return false;
        }
        for k in 0..11 {
            if index >> (10 - k) & 1 == 1 {
                let bit = n * 11 + k;
                bits[bit / 8] |= 0x80 >> (bit % 8);
            }
        }
        n += 1;
    }
    if n < 12 || n % 3 != 0 {
        return false;
    }
    let checksum_bits = n / 3;
    let entropy_bytes = (n * 11 - checksum_bits) / 8;
    let digest = Sha256::digest(&bits[..entropy_bytes]);
    (0..checksum_bits).all(|k| {
        let bit = entropy_bytes * 8 + k;
        (bits[bit / 8] >> (7 - bit % 8)) & 1 == (digest[k / 8] >> (7 - k % 8)) & 1
    })
}

/// IBAN lengths by country code, from the SWIFT IBAN registry, sorted by
/// code for a binary search.
const IBAN_LENGTHS: &[([u8; 2], u8)] = &[
    (*b"AD", 24),
    (*b"AE", 23),
    (*b"AL", 28),
    (*b"AT", 20),
    (*b"AZ", 28),
    (*b"BA", 20),
    (*b"BE", 16),
    (*b"BG", 22),
    (*b"BH", 22),
    (*b"BI", 27),
    (*b"BR", 29),
    (*b"BY", 28),
    (*b"CH", 21),
    (*b"CR", 22),
    (*b"CY", 28),
    (*b"CZ", 24),
    (*b"DE", 22),
    (*b"DJ", 27),
    (*b"DK", 18),
    (*b"DO", 28),
    (*b"EE", 20),
    (*b"EG", 29),
    (*b"ES", 24),
    (*b"FI", 18),
    (*b"FK", 18),
    (*b"FO", 18),
    (*b"FR", 27),
    (*b"GB", 22),
    (*b"GE", 22),
    (*b"GI", 23),
    (*b"GL", 18),
    (*b"GR", 27),
    (*b"GT", 28),
    (*b"HN", 28),
    (*b"HR", 21),
    (*b"HU", 28),
    (*b"IE", 22),
    (*b"IL", 23),
    (*b"IQ", 23),
    (*b"IS", 26),
    (*b"IT", 27),
    (*b"JO", 30),
    (*b"KW", 30),
    (*b"KZ", 20),
    (*b"LB", 28),
    (*b"LC", 32),
    (*b"LI", 21),
    (*b"LT", 20),
    (*b"LU", 20),
    (*b"LV", 21),
    (*b"LY", 25),
    (*b"MC", 27),
    (*b"MD", 24),
    (*b"ME", 22),
    (*b"MK", 19),
    (*b"MN", 20),
    (*b"MR", 27),
    (*b"MT", 31),
    (*b"MU", 30),
    (*b"NI", 28),
    (*b"NL", 18),
    (*b"NO", 15),
    (*b"OM", 23),
    (*b"PK", 24),
    (*b"PL", 28),
    (*b"PS", 29),
    (*b"PT", 25),
    (*b"QA", 29),
    (*b"RO", 24),
    (*b"RS", 22),
    (*b"RU", 33),
    (*b"SA", 24),
    (*b"SC", 31),
    (*b"SD", 18),
    (*b"SE", 24),
    (*b"SI", 19),
    (*b"SK", 24),
    (*b"SM", 27),
    (*b"SO", 23),
    (*b"ST", 25),
    (*b"SV", 28),
    (*b"TL", 23),
    (*b"TN", 24),
    (*b"TR", 26),
    (*b"UA", 29),
    (*b"VA", 22),
    (*b"VG", 24),
    (*b"XK", 20),
    (*b"YE", 30),
];

/// The IBAN length of a country in the registry.
fn country_length(code: [u8; 2]) -> Option<usize> {
    IBAN_LENGTHS
        .binary_search_by_key(&code, |&(c, _)| c)
        .ok()
        .map(|i| usize::from(IBAN_LENGTHS[i].1))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Card-like numbers that pass Luhn: the networks' published test
    /// numbers and the textbook example.
    const LUHN_VALID: &[&str] = &[
        "4111111111111111",
        "4111 1111 1111 1111",
        "4111-1111-1111-1111",
        "4012888888881881",
        "4222222222222",
        "5555555555554444",
        "5105105105105100",
        "378282246310005",
        "371449635398431",
        "3782 822463 10005",
        "6011111111111117",
        "6011000990139424",
        "3530111333300000",
        "30569309025904",
        "79927398713",
        "00",
        "18",
        "059",
    ];

    #[test]
    fn luhn_accepts_valid_numbers() {
        for s in LUHN_VALID {
            assert!(luhn(s), "{s:?} passes Luhn");
        }
    }

    #[test]
    fn luhn_rejects_each_single_digit_change() {
        for s in LUHN_VALID {
            for (i, b) in s.bytes().enumerate() {
                if !b.is_ascii_digit() {
                    continue;
                }
                for d in b'0'..=b'9' {
                    if d == b {
                        continue;
                    }
                    let mut changed = s.as_bytes().to_vec();
                    changed[i] = d;
                    let changed = String::from_utf8(changed).unwrap();
                    assert!(!luhn(&changed), "{changed:?} (from {s:?}) fails Luhn");
                }
            }
        }
    }

    #[test]
    fn luhn_rejects_bad_shapes() {
        for s in [
            "",
            "0",
            " ",
            "-",
            "4111 1111 1111 1112",
            "79927398710",
            " 4111111111111111",
            "4111111111111111 ",
            "-4111111111111111",
            "4111111111111111-",
            "4111  1111 1111 1111",
            "4111 -1111 1111 1111",
            "4111_1111_1111_1111",
            "4111.1111.1111.1111",
            "4111\t1111 1111 1111",
            "411111111111111a",
            "４１１１",
            "+4111111111111111",
        ] {
            assert!(!luhn(s), "{s:?} is rejected");
        }
    }

    #[test]
    fn luhn_matches_a_naive_definition() {
        // Luhn from its definition, on digits only: double every second
        // digit from the right, sum the digits of the results.
        fn naive(digits: &[u8]) -> bool {
            let mut sum = 0;
            for (i, &d) in digits.iter().rev().enumerate() {
                let v = if i % 2 == 1 { 2 * d } else { d };
                sum += v / 10 + v % 10;
            }
            digits.len() >= 2 && sum % 10 == 0
        }
        for n in 0u32..20_000 {
            for width in [2, 5, 6] {
                let s = format!("{n:0width$}");
                let digits: Vec<u8> = s.bytes().map(|b| b - b'0').collect();
                assert_eq!(luhn(&s), naive(&digits), "{s:?}");
            }
        }
    }

    #[test]
    fn us_ssn_accepts_valid_numbers() {
        for s in [
            "123-45-6789",
            "123 45 6789",
            "123456789",
            "001-01-0001",
            "665-99-9999",
            "667-01-0001",
            "899-99-9999",
        ] {
            assert!(us_ssn(s), "{s:?} is a valid SSN");
        }
    }

    #[test]
    fn us_ssn_rejects_reserved_ranges() {
        for s in [
            "000-45-6789",
            "000456789",
            "666-45-6789",
            "666456789",
            "900-45-6789",
            "950-45-6789",
            "999-45-6789",
            "999456789",
            "123-00-6789",
            "123006789",
            "123-45-0000",
            "123450000",
        ] {
            assert!(!us_ssn(s), "{s:?} is reserved");
        }
    }

    #[test]
    fn us_ssn_checks_every_area() {
        for area in 0..1000 {
            let s = format!("{area:03}-45-6789");
            let want = area != 0 && area != 666 && area < 900;
            assert_eq!(us_ssn(&s), want, "{s:?}");
        }
        for group in 0..100 {
            assert_eq!(us_ssn(&format!("123-{group:02}-6789")), group != 0);
        }
    }

    #[test]
    fn us_ssn_rejects_bad_shapes() {
        for s in [
            "",
            "123-45-678",
            "123-45-67890",
            "12345678",
            "1234567890",
            "123-45 6789",
            "123 45-6789",
            "123-456-789",
            "12-345-6789",
            "123.45.6789",
            "123--5-6789",
            "12a-45-6789",
            "123-4b-6789",
            "123-45-678c",
            " 23-45-6789",
            "１２３-45-6789",
        ] {
            assert!(!us_ssn(s), "{s:?} is rejected");
        }
    }

    /// IBANs whose check digits are right: the registry's examples for a
    /// spread of countries and lengths.
    const IBAN_VALID: &[&str] = &[
        "GB82 WEST 1234 5698 7654 32",
        "GB82WEST12345698765432",
        "DE89 3704 0044 0532 0130 00",
        "FR14 2004 1010 0505 0001 3M02 606",
        "NL91 ABNA 0417 1643 00",
        "BE68 5390 0754 7034",
        "NO93 8601 1117 947",
        "CH93 0076 2011 6238 5295 7",
        "ES91 2100 0418 4502 0005 1332",
        "IT60 X054 2811 1010 0000 0123 456",
        "AT61 1904 3002 3457 3201",
        "PL61 1090 1014 0000 0712 1981 2874",
        "MT84 MALT 0110 0001 2345 MTLC AST0 01S",
        "SA03 8000 0000 6080 1016 7519",
    ];

    #[test]
    fn iban_accepts_valid_numbers() {
        for s in IBAN_VALID {
            assert!(iban(s), "{s:?} is a valid IBAN");
        }
    }

    #[test]
    fn iban_rejects_each_single_character_change() {
        for s in IBAN_VALID {
            for (i, b) in s.bytes().enumerate() {
                let others: &[u8] = match b {
                    b'0'..=b'9' => b"0123456789",
                    b'A'..=b'Z' => b"ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                    _ => continue,
                };
                for &c in others {
                    if c == b {
                        continue;
                    }
                    let mut changed = s.as_bytes().to_vec();
                    changed[i] = c;
                    let changed = String::from_utf8(changed).unwrap();
                    // A changed country code may be another valid country
                    // of the same length only if the check still holds,
                    // which mod 97 rules out for one changed character.
                    assert!(!iban(&changed), "{changed:?} (from {s:?}) is rejected");
                }
            }
        }
    }

    #[test]
    fn iban_rejects_adjacent_swaps() {
        for s in IBAN_VALID {
            let compact: Vec<u8> = s.bytes().filter(|&b| b != b' ').collect();
            for i in 4..compact.len() - 1 {
                if compact[i] == compact[i + 1] {
                    continue;
                }
                let mut swapped = compact.clone();
                swapped.swap(i, i + 1);
                let swapped = String::from_utf8(swapped).unwrap();
                assert!(!iban(&swapped), "{swapped:?} (from {s:?}) is rejected");
            }
        }
    }

    #[test]
    fn iban_checks_the_country_length() {
        // Valid mod 97, but one character short of Germany's 22.
        assert!(!iban("DE14 3704 0044 0532 0130 0"));
        // An unlisted country code is held to 15..=34 only.
        assert!(iban(&with_check_digits("ZZ", "1234567890A")));
        assert!(!iban(&with_check_digits("ZZ", "1234567890")));
        assert!(iban(&with_check_digits("ZZ", &"7".repeat(30))));
        assert!(!iban(&with_check_digits("ZZ", &"7".repeat(31))));
    }

    /// `country` + the check digits that make `bban` valid + `bban`.
    fn with_check_digits(country: &str, bban: &str) -> String {
        let mut rem = 0u32;
        for c in bban.bytes().chain(country.bytes()).chain(*b"00") {
            rem = match c {
                b'0'..=b'9' => (rem * 10 + u32::from(c - b'0')) % 97,
                _ => (rem * 100 + u32::from(c - b'A') + 10) % 97,
            };
        }
        format!("{country}{:02}{bban}", 98 - rem)
    }

    #[test]
    fn iban_rejects_bad_shapes() {
        for s in [
            "",
            "GB82",
            "GB82 ",
            " GB82 WEST 1234 5698 7654 32",
            "GB82 WEST 1234 5698 7654 32 ",
            "GB82  WEST 1234 5698 7654 32",
            "gb82 west 1234 5698 7654 32",
            "GB82 west 1234 5698 7654 32",
            "G882 WEST 1234 5698 7654 32",
            "GBX2 WEST 1234 5698 7654 32",
            "GB82-WEST-1234-5698-7654-32",
            "GB82 WEST 1234 5698 7654 3é",
            "1282 WEST 1234 5698 7654 32",
        ] {
            assert!(!iban(s), "{s:?} is rejected");
        }
    }

    #[test]
    fn iban_length_table_is_sorted_and_in_range() {
        for w in IBAN_LENGTHS.windows(2) {
            assert!(w[0].0 < w[1].0, "{:?} before {:?}", w[0].0, w[1].0);
        }
        for (code, len) in IBAN_LENGTHS {
            assert!(code.iter().all(u8::is_ascii_uppercase));
            assert!((15..=34).contains(len), "{code:?}");
        }
        assert_eq!(country_length(*b"GB"), Some(22));
        assert_eq!(country_length(*b"NO"), Some(15));
        assert_eq!(country_length(*b"RU"), Some(33));
        assert_eq!(country_length(*b"ZZ"), None);
    }
}
