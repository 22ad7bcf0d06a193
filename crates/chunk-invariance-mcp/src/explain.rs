//! Why per-chunk and carry-over designs fail: the built-in examples, run,
//! with their real reports.

use std::fmt::Write;

use chunk_invariance::Splits;
use chunk_invariance::examples::MASK;

use crate::examples::{Example, KEY_INPUT};

/// The explanation: for each example design, what it does at a chunk
/// boundary and what the check says of it on [`KEY_INPUT`].
pub(crate) fn explanation() -> String {
    let mut text = format!(
        "A streaming filter (a redactor, a guardrail, a rewriter) is correct only if, for every \
         way its input is split into chunks, the joined streamed output equals the output of \
         filtering the whole input at once. Below, three redactors from the Rust crate \
         chunk-invariance (module chunk_invariance::examples) hide an API key, `sk-` and 8 \
         letters or digits, behind {MASK:?}. Each is checked just now on the input \
         {KEY_INPUT:?} against the redactor run on the whole input, over every two-part split; \
         the reports are the check's own.\n"
    );
    for example in Example::ALL {
        let result = example.check(KEY_INPUT, Splits::TwoPart);
        let verdict = match &result {
            Ok(_) => "passes",
            Err(_) => "fails",
        };
        let _ = write!(
            text,
            "\n## {} ({verdict})\n\n{}\n\n",
            example.function(),
            example.design()
        );
        match result {
            Ok(n) => {
                let _ = writeln!(
                    text,
                    "chunk-invariant: {n} splits checked, each gave the whole-input output"
                );
            }
            Err(err) => {
                let _ = writeln!(text, "{err}");
            }
        }
    }
    text.push_str(
        "\nThe fix is the third design: emit only output that no later chunk can change, hold \
         back the rest, and let it go at the end of the stream. Check a filter with the \
         check_stream_filter tool, and keep a failing split as a test with \
         write_regression_test.\n",
    );
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wrong_designs_fail_on_the_cut_after_the_s_and_the_right_one_passes() {
        let text = explanation();
        assert!(text.contains("## redact_each_chunk (fails)"), "{text}");
        assert!(text.contains("## redact_with_carry (fails)"), "{text}");
        assert!(text.contains("## redact_holding_back (passes)"), "{text}");
        assert_eq!(
            text.matches(r#"split:    ["use s", "k-AbCd1234 now"] (cut at 5)"#)
                .count(),
            2,
            "{text}"
        );
        assert!(text.contains(r#"streamed: "use sKEY] now""#), "{text}");
        assert!(
            text.contains("chunk-invariant: 19 splits checked"),
            "{text}"
        );
    }
}
