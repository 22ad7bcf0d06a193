//! Detectors that need a validator and are not in the default packs:
//! high-entropy tokens and BIP39 seed phrases.

use super::rule::{PackAction, PackRule};
use crate::validate;

pub(super) const HIGH_ENTROPY: PackRule = PackRule {
    id: "high_entropy",
    pattern: r"(?-u:\b)[A-Za-z0-9+/_-]{20,}={0,2}",
    mask: "[HIGH_ENTROPY]",
    action: PackAction::Mask,
    validator: Some(validate::high_entropy),
    template: None,
    what: "A run of 20 or more base64, base64url or hex characters with no known \
           prefix whose characters look random (see `validate::high_entropy`): \
           an unknown vendor's key, a session id, a password generator's output.",
    misses: "Random strings under 20 characters, strings split by other \
             characters (`.`, `:`), and low-entropy secrets (`aaaa1111…`). \
             Noisy: long identifiers, hashes (git commits, checksums), UUIDs \
             without dashes and base64 data are masked too.",
};

/// One seed-phrase rule per word count, longest first: at a position where
/// the 24-word candidate fails its checksum, the 21-word one is tried, and
/// so on, so a 12-word phrase followed by more words is still found.
macro_rules! seed {
    ($id:literal, $rest:literal) => {
        PackRule {
            id: $id,
            pattern: concat!(r"(?-u:\b)[a-z]{3,8}(?: [a-z]{3,8}){", $rest, r"}(?-u:\b)"),
            mask: "[SEED_PHRASE]",
            action: PackAction::Block("a wallet seed phrase"),
            validator: Some(validate::bip39),
            template: None,
            what: concat!(
                "A BIP39 mnemonic of 1 + ",
                $rest,
                " English list words separated by single spaces whose checksum \
                 holds (see `validate::bip39`)."
            ),
            misses: "Phrases in other word lists or languages, in upper case, \
                     numbered or over several lines, words separated by two \
                     spaces or commas. When the word before a phrase is a list \
                     word too, the window that starts one word early passes the \
                     checksum by chance (1 time in 16 for 12 words, 1 in 256 for \
                     24): that window is the match, and the phrase's last word is \
                     outside it (the block still stops the stream before it).",
        }
    };
}

pub(super) const SEED_24: PackRule = seed!("seed_phrase_24", "23");
pub(super) const SEED_21: PackRule = seed!("seed_phrase_21", "20");
pub(super) const SEED_18: PackRule = seed!("seed_phrase_18", "17");
pub(super) const SEED_15: PackRule = seed!("seed_phrase_15", "14");
pub(super) const SEED_12: PackRule = seed!("seed_phrase_12", "11");
