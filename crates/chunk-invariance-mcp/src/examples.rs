//! The built-in example filters of `chunk_invariance::examples`, by name.

use chunk_invariance::examples::{
    redact, redact_each_chunk, redact_holding_back, redact_with_carry,
};
use chunk_invariance::{ChunkInvarianceError, Splits, check_chunk_invariant_with};
use rmcp::schemars::JsonSchema;
use rmcp::serde::Deserialize;

/// The input the explanation checks the examples on: a key that a cut
/// after its `s` splits in two.
pub(crate) const KEY_INPUT: &str = "use sk-AbCd1234 now";

/// A stream filter of `chunk_invariance::examples`, each a redactor that
/// hides `sk-` and 8 letters or digits behind `[KEY]`, checked against
/// `redact` on the whole input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(crate = "rmcp::serde", rename_all = "snake_case")]
#[schemars(crate = "rmcp::schemars")]
pub(crate) enum Example {
    /// `redact_each_chunk`: redacts every chunk on its own (wrong).
    EachChunk,
    /// `redact_with_carry`: prepends a fixed carry-over from the previous
    /// chunk, redacts, and drops the carried part again (wrong).
    CarryOver,
    /// `redact_holding_back`: holds back a tail that could still become a
    /// key (right).
    HoldingBack,
}

impl Example {
    pub(crate) const ALL: [Example; 3] =
        [Example::EachChunk, Example::CarryOver, Example::HoldingBack];

    /// The stream filter's name in `chunk_invariance::examples`.
    pub(crate) fn function(self) -> &'static str {
        match self {
            Example::EachChunk => "redact_each_chunk",
            Example::CarryOver => "redact_with_carry",
            Example::HoldingBack => "redact_holding_back",
        }
    }

    /// What the design does at a chunk boundary, in one sentence.
    pub(crate) fn design(self) -> &'static str {
        match self {
            Example::EachChunk => {
                "Each chunk alone: the filter redacts every chunk on its own, as if it were the whole input."
            }
            Example::CarryOver => {
                "A fixed carry-over: the filter prepends the last bytes of the previous chunk (one less \
                 than a key) to the next, redacts that, and drops the carried part again."
            }
            Example::HoldingBack => {
                "Holding back: the filter emits only text that no later chunk can change, and holds back \
                 a tail that could still be the start of a key until the next chunk or the end of the \
                 stream settles it."
            }
        }
    }

    /// Checks the example's stream filter against `redact` on `input`.
    pub(crate) fn check(self, input: &str, splits: Splits) -> Result<usize, ChunkInvarianceError> {
        match self {
            Example::EachChunk => {
                check_chunk_invariant_with(redact_each_chunk, redact, input, splits)
            }
            Example::CarryOver => {
                check_chunk_invariant_with(redact_with_carry, redact, input, splits)
            }
            Example::HoldingBack => {
                check_chunk_invariant_with(redact_holding_back, redact, input, splits)
            }
        }
    }
}
