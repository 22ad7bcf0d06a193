// This split of the input (cut at 5) once streamed another output than the whole input.
#[test]
fn chunk_invariant_cut_at_5() {
    use chunk_invariance::{assert_chunk_invariant_with, Splits};

    let input = "use sk-AbCd1234 now";
    let split = vec!["use s", "k-AbCd1234 now"];
    assert_chunk_invariant_with(
        chunk_invariance::examples::redact_holding_back,
        chunk_invariance::examples::redact,
        input,
        Splits::explicit([split]),
    );
}
