//! The rules of the [`pii`](super::pii) pack, and [`think`](super::think).

use super::rule::{PackAction, PackRule};
use crate::validate;

/// The pattern of an IPv4 address, for `concat!`.
macro_rules! ipv4 {
    () => {
        r"(?:(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
    };
}

pub(super) const THINK: PackRule = PackRule {
    id: "think",
    pattern: r"<think>(?s:.)*?</think>",
    mask: "",
    action: PackAction::Mask,
    validator: None,
    template: None,
    what: "A reasoning block from `<think>` to the first `</think>` after it, across lines.",
    misses: "Other tag names (`<thinking>`, `<reasoning>`), tags with attributes or in \
             another case, and a block never closed (released unchanged at the end).",
};

pub(super) const PRIVATE_KEY: PackRule = PackRule {
    id: "private_key",
    pattern: r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?s:.)*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----",
    mask: "[PRIVATE_KEY]",
    action: PackAction::Block("a private key"),
    validator: None,
    template: None,
    what: "A PEM private key from its BEGIN line to the first END line after it: \
           `PRIVATE KEY`, `RSA`, `EC`, `DSA`, `OPENSSH`, `ENCRYPTED` and PGP \
           (`PGP PRIVATE KEY BLOCK`) blocks.",
    misses: "A key with no END line (held until the stream ends, then released), a \
             key whose lines were re-wrapped or prefixed (`> ` quoting), and keys \
             in other encodings (JSON `\\n` escapes, PuTTY `.ppk`, raw base64).",
};

pub(super) const ANTHROPIC_KEY: PackRule = PackRule {
    id: "anthropic_key",
    pattern: r"(?-u:\b)sk-ant-[a-z]{2,8}[0-9]{2}-[A-Za-z0-9_-]{20,}",
    mask: "[ANTHROPIC_KEY]",
    action: PackAction::Mask,
    validator: None,
    template: None,
    what: "Anthropic API and admin keys: `sk-ant-`, a kind and version such as \
           `api03` or `admin01`, a dash, then 20 or more of `[A-Za-z0-9_-]`.",
    misses: "A key cut short to under 20 characters after its kind, or glued to a \
             preceding letter, digit or `_`.",
};

pub(super) const OPENAI_KEY: PackRule = PackRule {
    id: "openai_key",
    pattern: r"(?-u:\b)sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|[A-Za-z0-9]{20,})",
    mask: "[OPENAI_KEY]",
    action: PackAction::Mask,
    validator: None,
    template: None,
    what: "OpenAI keys: project, service-account and admin keys (`sk-proj-`, \
           `sk-svcacct-`, `sk-admin-` and 20 or more of `[A-Za-z0-9_-]`) and \
           legacy user keys (`sk-` and 20 or more letters and digits).",
    misses: "Keys with another `sk-xxx-` prefix, keys cut short, and keys glued to \
             a preceding letter, digit or `_`. Any other vendor's `sk-` key of the \
             same shape is caught as an OpenAI key.",
};

pub(super) const AWS_ACCESS_KEY_ID: PackRule = PackRule {
    id: "aws_access_key_id",
    pattern: r"(?-u:\b)(?:AKIA|ASIA)[A-Z0-9]{16}(?-u:\b)",
    mask: "[AWS_KEY]",
    action: PackAction::Mask,
    validator: None,
    template: None,
    what: "AWS access key ids, long-term (`AKIA`) and temporary (`ASIA`): the \
           prefix and 16 upper-case letters or digits, as a whole word.",
    misses: "The secret access key that goes with the id (40 characters of base64 \
             with no marker: too close to other random strings), and other id \
             prefixes (`AROA`, `AIDA`: role and user ids, not credentials).",
};

pub(super) const GITHUB_TOKEN: PackRule = PackRule {
    id: "github_token",
    pattern: r"(?-u:\b)(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
    mask: "[GITHUB_TOKEN]",
    action: PackAction::Mask,
    validator: None,
    template: None,
    what: "GitHub tokens: classic personal (`ghp_`), OAuth (`gho_`), user-to-server \
           (`ghu_`), server-to-server (`ghs_`) and refresh (`ghr_`) tokens with 36 \
           or more letters and digits, and fine-grained personal tokens \
           (`github_pat_`).",
    misses: "Tokens from before 2021 (40 hex digits, no prefix), and tokens glued to \
             a preceding letter, digit or `_`.",
};

pub(super) const SLACK_TOKEN: PackRule = PackRule {
    id: "slack_token",
    pattern: r"(?-u:\b)xox[abprs]-[A-Za-z0-9-]{10,}",
    mask: "[SLACK_TOKEN]",
    action: PackAction::Mask,
    validator: None,
    template: None,
    what: "Slack bot, user, app-level legacy, refresh and session tokens \
           (`xoxb-`, `xoxp-`, `xoxa-`, `xoxr-`, `xoxs-`) and the 10 or more \
           letters, digits and dashes after the prefix.",
    misses: "App-level tokens (`xapp-`), configuration tokens (`xoxe.`), and webhook \
             URLs (`hooks.slack.com/services/...`). A dash right after the token is \
             taken as part of it.",
};

pub(super) const GOOGLE_API_KEY: PackRule = PackRule {
    id: "google_api_key",
    pattern: r"(?-u:\b)AIza[0-9A-Za-z_-]{35}",
    mask: "[GOOGLE_KEY]",
    action: PackAction::Mask,
    validator: None,
    template: None,
    what: "Google API keys: `AIza` and 35 of `[0-9A-Za-z_-]`.",
    misses: "OAuth client secrets (`GOCSPX-`), OAuth access tokens (`ya29.`) and \
             service-account JSON keys (caught by `private_key` only when the PEM \
             block is not JSON-escaped).",
};

pub(super) const STRIPE_KEY: PackRule = PackRule {
    id: "stripe_key",
    pattern: r"(?-u:\b)[rs]k_live_[0-9A-Za-z]{20,}",
    mask: "[STRIPE_KEY]",
    action: PackAction::Mask,
    validator: None,
    template: None,
    what: "Stripe live secret (`sk_live_`) and restricted (`rk_live_`) keys with 20 \
           or more letters and digits.",
    misses: "Test-mode keys (`sk_test_`, harmless by design) and publishable keys \
             (`pk_live_`, public by design); webhook secrets (`whsec_`).",
};

pub(super) const JWT: PackRule = PackRule {
    id: "jwt",
    pattern: r"(?-u:\b)eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*",
    mask: "[JWT]",
    action: PackAction::Mask,
    validator: None,
    template: None,
    what: "JSON Web Tokens in compact form: a base64url header and payload that both \
           start with `{\"` (`eyJ`), and the signature (empty for unsigned tokens).",
    misses: "Tokens whose header or payload does not start with `{\"` (extra \
             whitespace before the first key), and the last two parts of a \
             five-part encrypted token (JWE).",
};

pub(super) const EMAIL: PackRule = PackRule {
    id: "email",
    pattern: r"[A-Za-z0-9._%+-]+(?:@|%40)[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}",
    mask: "[EMAIL]",
    action: PackAction::Mask,
    validator: None,
    template: None,
    what: "Email addresses with an ASCII local part and a domain with a dot and a \
           letter-only top-level domain, with `@` written as is or percent-encoded \
           (`ann%40example.org`, as in URLs and `mailto:` links).",
    misses: "Non-ASCII addresses: a local part that ends in a non-ASCII letter \
             (`zoë@example.de`) is not caught, one with such letters earlier is \
             masked only after the last of them (`zoëann@x.de` keeps `zoë`). Quoted local parts, \
             IP-literal domains (`ann@[10.0.0.1]`) and spelled-out forms (`ann at \
             example dot org`). Text that only looks like an address \
             (`v1@2.0.js`) is masked.",
};

pub(super) const IBAN: PackRule = PackRule {
    id: "iban",
    pattern: r"(?-u:\b)[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?-u:\b)",
    mask: "[IBAN]",
    action: PackAction::Mask,
    validator: Some(validate::iban),
    template: None,
    what: "IBANs in electronic form (`GB82WEST12345698765432`) and in print form, \
           in groups of four separated by single spaces, whose length and mod-97 \
           check digits are right (see `validate::iban`).",
    misses: "Lower-case IBANs, other groupings (dashes, groups of other sizes), and \
             an IBAN directly followed by a space and a word that could continue its \
             last group of four (`... 1234 CODE`: the candidate fails its check and \
             is left unchanged).",
};

pub(super) const US_SSN: PackRule = PackRule {
    id: "us_ssn",
    pattern: r"(?-u:\b)[0-9]{3}-[0-9]{2}-[0-9]{4}(?-u:\b)",
    mask: "[US_SSN]",
    action: PackAction::Block("a US Social Security number"),
    validator: Some(validate::us_ssn),
    template: None,
    what: "US Social Security numbers written `AAA-GG-SSSS`, as a whole word, that \
           pass the Social Security Administration's range rules (see \
           `validate::us_ssn`).",
    misses: "Numbers written with spaces or without separators (as frequent in \
             other numbers as in SSNs, too many false blocks); SSNs the \
             administration voided but that pass the range rules. A dashed number \
             of that shape inside a longer one (`123-45-6789-01`) is caught.",
};

pub(super) const PAYMENT_CARD: PackRule = PackRule {
    id: "payment_card",
    // The common groupings come first: where a card is followed by more
    // digit groups, the longest run fails Luhn, and the scan would move on
    // to a later start where a shorter run can pass by chance, releasing
    // the card's first groups (`4111 1111 [CARD]`). Leftmost-first tries
    // `4111 1111 1111 1111` whole at the card's own start instead.
    pattern: concat!(
        r"(?-u:\b)(?:[0-9]{4} [0-9]{4} [0-9]{4} [0-9]{4}",
        r"|[0-9]{4}-[0-9]{4}-[0-9]{4}-[0-9]{4}",
        r"|[0-9]{4}[ -][0-9]{6}[ -][0-9]{5}",
        r"|[0-9](?:[ -]?[0-9]){12,18})(?-u:\b)"
    ),
    mask: "[CARD]",
    action: PackAction::Mask,
    validator: Some(validate::luhn),
    template: None,
    what: "Payment card numbers: 13 to 19 digits as a whole word, single spaces or \
           dashes allowed between digits (`4111 1111 1111 1111`, \
           `3782-822463-10005`), that pass the Luhn check.",
    misses: "Numbers written with other separators (dots, two spaces) or glued to \
             letters, and a card not grouped 4-4-4-4 or 4-6-5 followed by more digits \
             that make a 13-19 digit run failing Luhn (left unchanged whole). One in ten 13-19 digit numbers \
             that are not cards (order or tracking numbers) passes Luhn and is \
             masked.",
};

pub(super) const PHONE: PackRule = PackRule {
    id: "phone",
    pattern: concat!(
        // +1 and a US number, separators optional.
        r"(?-u:\B)\+1[ .-]?(?:\([2-9][0-9]{2}\) ?|[2-9][0-9]{2}[ .-]?)[2-9][0-9]{2}[ .-]?[0-9]{4}(?-u:\b)",
        // 1 and a US number, with separators.
        r"|(?-u:\b)1[ .-](?:\([2-9][0-9]{2}\) ?|[2-9][0-9]{2}[ .-])[2-9][0-9]{2}[ .-][0-9]{4}(?-u:\b)",
        // (415) 555-0134
        r"|\([2-9][0-9]{2}\) ?[2-9][0-9]{2}[ .-][0-9]{4}(?-u:\b)",
        // 415-555-0134, 415.555.0134, 415 555 0134
        r"|(?-u:\b)[2-9][0-9]{2}[ .-][2-9][0-9]{2}[ .-][0-9]{4}(?-u:\b)",
        // E.164: + and 8 to 15 digits.
        r"|(?-u:\B)\+[1-9][0-9]{7,14}(?-u:\b)",
    ),
    mask: "[PHONE]",
    action: PackAction::Mask,
    validator: None,
    template: None,
    what: "US numbers with an area code, written `(415) 555-0134`, `415-555-0134`, \
           `415.555.0134`, `415 555 0134`, optionally after `1-` or `+1 `, with area \
           code and exchange starting 2-9; and E.164 numbers (`+` and 8 to 15 \
           digits, no separators).",
    misses: "US numbers without separators and without `+1` (ten bare digits look \
             like any other id), numbers without an area code, and extensions \
             (international numbers with separators are `phone_intl`). \
             Three groups of 3, 3 and 4 digits that are not a phone number (a \
             table row) are masked.",
};

pub(super) const PHONE_INTL: PackRule = PackRule {
    id: "phone_intl",
    pattern: concat!(
        // The country code, then the first group: after a `(0)` trunk
        // prefix, or after a separator. Every later group follows a
        // separator, so a run of digits splits into groups one way only
        // (which keeps the automaton small).
        r"(?-u:\B)\+[2-9][0-9]{0,3}",
        r"(?:[ .-]?\(0\)[ .-]?[0-9]{1,8}|[ .-]\(?[0-9]{1,8}\)?)",
        r"(?:[ .-]\(?[0-9]{1,8}\)?){0,5}(?-u:\b)",
    ),
    mask: "[PHONE]",
    action: PackAction::Mask,
    validator: Some(validate::phone),
    template: None,
    what: "International numbers written with `+` and separators: `+44 20 7946 \
           0958`, `+49 30 1234567`, `+33 1 23 45 67 89`, `+81 3-1234-5678`, \
           `+44 (0)20 7946 0958`, `+55 (11) 91234-5678`: a country code and 1 to \
           6 groups of 1 to 8 digits, each after a single space, dot or dash \
           (the first may follow a `(0)` directly), with 8 \
           to 15 digits in all (E.164's limit; a `(0)` trunk prefix not counted). \
           Numbers with `+1` (North America) are the `phone` rule's, which \
           checks their area code and exchange.",
    misses: "A number followed, after a single space, by more digits that take it \
             past 15 (`+44 20 7946 0958 2024 1234`: the candidate is rejected whole, \
             and the number passes); \
             numbers written with `00` instead of `+`, with two separators in a \
             row, or with the country code glued to the next digits \
             (`+4420 7946 0958`; with no separator at all, `+442079460958` is the \
             `phone` rule's). A number of 8 to 15 digits after a `+` (`+12 34 56 78` as a \
             score) is masked, and digits after a phone, separated by one space \
             (`+44 20 7946 0958 12 times`), are masked with it.",
};

pub(super) const PHONE_NATIONAL: PackRule = PackRule {
    id: "phone_national",
    pattern: concat!(
        // French: 0X XX XX XX XX, spaces or dots.
        r"(?-u:\b)0[1-9](?: [0-9]{2}){4}(?-u:\b)",
        r"|(?-u:\b)0[1-9](?:\.[0-9]{2}){4}(?-u:\b)",
        // Trunk prefix 0 (UK, Germany, Japan, Italy, Australia, ...): an area
        // code, then groups of 3 to 8 digits.
        r"|(?-u:\b)0[1-9][0-9]{0,4}(?:[ -][0-9]{3,8}){1,3}(?-u:\b)",
        r"|\(0[1-9][0-9]{0,4}\) ?[0-9]{3,8}(?:[ -][0-9]{3,4})?(?-u:\b)",
        // Chinese mobiles: 1[3-9]X XXXX XXXX, with separators.
        r"|(?-u:\b)1[3-9][0-9][ -][0-9]{4}[ -][0-9]{4}(?-u:\b)",
        // Indian mobiles: XXXXX XXXXX starting 6-9.
        r"|(?-u:\b)[6-9][0-9]{4}[ -][0-9]{5}(?-u:\b)",
        // Brazilian: (AA) 9XXXX-XXXX or (AA) XXXX-XXXX.
        r"|\([1-9][0-9]\) ?9?[0-9]{4}-[0-9]{4}(?-u:\b)",
    ),
    mask: "[PHONE]",
    action: PackAction::Mask,
    validator: Some(validate::phone),
    template: None,
    what: "National numbers of the largest countries, in their written forms: \
           French `01 23 45 67 89` (or with dots), numbers with a trunk `0` and \
           groups of 3 to 8 digits (UK `020 7946 0958`, `07700 900123`; Germany \
           `030 12345678`, `(030) 1234567`; Japan `03-1234-5678`; Australia \
           `02 9876 5432`), Chinese mobiles `138 0013 8000`, Indian mobiles \
           `98765 43210`, Brazilian `(11) 91234-5678`; with 10 or 11 digits in \
           all, or 12 in two groups (German mobiles, `0151 12345678`).",
    misses: "National numbers of other lengths (German and Italian numbers of \
             small towns, 12-digit numbers written in three groups), groups of 2 \
             digits outside the French form, \
             forms of other countries, and numbers without separators (bare \
             digits look like any other id). Dates and times (`01-12-2024 10:30`, \
             `03-12-2024`) are not taken, nor the tail of a longer grouped number \
             (`1234 0964 5425 6462`); a dashed or spaced order number that starts \
             with `0` and has 10 or 11 digits (`0123-4567890`) is masked.",
};

pub(super) const IPV6: PackRule = PackRule {
    id: "ipv6",
    pattern: concat!(
        // Forms ending in an IPv4 address come first: every other form
        // matches their start and would win the tie.
        r"(?-u:\b)(?:[0-9A-Fa-f]{1,4}:){6}",
        ipv4!(),
        r"|(?-u:\b)(?:[0-9A-Fa-f]{1,4}:){1,4}:",
        ipv4!(),
        r"|(?-u:\B)::(?:[Ff]{4}(?::0{1,4})?:)?",
        ipv4!(),
        // Eight groups, then the forms with `::` inside, ordered by how
        // many groups may follow `::`, most first: at most one of them can
        // take every group after the `::` and it must come before those
        // that would stop short.
        r"|(?-u:\b)(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}(?-u:\b)",
        r"|(?-u:\b)[0-9A-Fa-f]{1,4}:(?::[0-9A-Fa-f]{1,4}){1,6}(?-u:\b)",
        r"|(?-u:\b)(?:[0-9A-Fa-f]{1,4}:){1,2}(?::[0-9A-Fa-f]{1,4}){1,5}(?-u:\b)",
        r"|(?-u:\b)(?:[0-9A-Fa-f]{1,4}:){1,3}(?::[0-9A-Fa-f]{1,4}){1,4}(?-u:\b)",
        r"|(?-u:\b)(?:[0-9A-Fa-f]{1,4}:){1,4}(?::[0-9A-Fa-f]{1,4}){1,3}(?-u:\b)",
        r"|(?-u:\b)(?:[0-9A-Fa-f]{1,4}:){1,5}(?::[0-9A-Fa-f]{1,4}){1,2}(?-u:\b)",
        r"|(?-u:\b)(?:[0-9A-Fa-f]{1,4}:){1,6}:[0-9A-Fa-f]{1,4}(?-u:\b)",
        // Groups then `::` at the end (a prefix such as `2001:db8::/32`),
        // not followed by a word character (`abc::new` is code).
        r"|(?-u:\b)(?:[0-9A-Fa-f]{1,4}:){1,7}:(?-u:\B)",
        // `::` then groups, not preceded by a word character (`std::io`).
        r"|(?-u:\B)::[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{1,4}){0,6}(?-u:\b)",
    ),
    mask: "[IPV6]",
    action: PackAction::Mask,
    validator: None,
    template: None,
    what: "IPv6 addresses: eight groups, every `::` shortening, and the forms that \
           end in an IPv4 address (`::ffff:192.0.2.1`, `64:ff9b::192.0.2.33`), \
           as a whole word.",
    misses: "The unspecified address `::` alone, a zone after `%` (`fe80::1%eth0` \
             keeps `%eth0`), and the forms ending in an IPv4 address with five \
             groups before it. Code whose identifiers are all hex digits \
             (`dead::beef`, `a::b`) is masked.",
};

pub(super) const IPV4: PackRule = PackRule {
    id: "ipv4",
    pattern: concat!(r"(?-u:\b)", ipv4!(), r"(?-u:\b)"),
    mask: "[IPV4]",
    action: PackAction::Mask,
    validator: None,
    template: None,
    what: "IPv4 addresses in dotted-decimal form, each number 0 to 255 without a \
           leading zero, as a whole word.",
    misses: "Numbers with leading zeros (`010.0.0.1`), other notations (`0x0A000001`, \
             `10.1`), and a port or CIDR suffix is left in place (`10.0.0.1:8080` \
             keeps `:8080`). Version numbers of four parts (`1.2.3.4`) are masked.",
};
