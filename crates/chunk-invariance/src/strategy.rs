//! Proptest strategies for splits (feature `proptest`).
//!
//! [`split_of`] draws random splits of one input; [`input_and_split`]
//! draws an input from your strategy and then a split of it; their
//! `_up_to` forms ([`split_of_up_to`], [`input_and_split_up_to`]) bound
//! the number of parts. All shrink
//! toward fewer cuts, so a failing case ends as a smallest split, and the
//! second also shrinks the input. Check a drawn split with
//! [`Splits::explicit`](crate::Splits::explicit); a
//! [`ChunkInvarianceError`](crate::ChunkInvarianceError) is a
//! `std::error::Error`, so proptest turns it into a failing case and `?`
//! works inside `proptest!`.
//!
//! # Example
//!
//! ```
//! use chunk_invariance::strategy::split_of;
//! use chunk_invariance::{check_chunk_invariant_with, Splits};
//! use chunk_invariance::examples::{redact, redact_holding_back};
//! use proptest::prelude::*;
//!
//! proptest! {
//!     # #![proptest_config(ProptestConfig { cases: 32, failure_persistence: None, ..ProptestConfig::default() })]
//!     // In a test module, this fn takes `#[test]`.
//!     fn hold_back_is_invariant(split in split_of("a key sk-AbCd1234 and sk-EfGh5678")) {
//!         let input = "a key sk-AbCd1234 and sk-EfGh5678";
//!         check_chunk_invariant_with(redact_holding_back, redact, input, Splits::explicit([&split]))?;
//!     }
//! }
//! # hold_back_is_invariant();
//! ```

use std::borrow::Borrow;
use std::fmt;

use proptest::prelude::*;

use crate::split::Chunks;
use crate::text::Text;

/// Random splits of `input`, as owned chunks (`Vec<String>` for a `str`,
/// `Vec<Vec<u8>>` for bytes) that join back to it.
///
/// Each cut point is taken on its own with a probability that gives about
/// three cuts on average, whatever the input's length. Shrinking drops
/// cuts one at a time, so a failing case shrinks to a split in which
/// every remaining cut is needed for the failure: for a bug at one
/// boundary, a single cut. Cuts fall where [`Text`] allows: between
/// characters of a `str`, at any byte of a `[u8]`.
///
/// # Example
///
/// ```
/// use chunk_invariance::strategy::split_of;
/// use proptest::strategy::{Strategy, ValueTree};
/// use proptest::test_runner::TestRunner;
///
/// let mut runner = TestRunner::deterministic();
/// let split = split_of("héllo").new_tree(&mut runner).unwrap().current();
/// assert_eq!(split.concat(), "héllo");
/// ```
pub fn split_of<T>(input: &T) -> impl Strategy<Value = Vec<T::Owned>> + use<T>
where
    T: ?Sized + Text + ToOwned,
    T::Owned: fmt::Debug,
{
    let points = input.cut_points();
    let owned: T::Owned = input.to_owned();
    let chance = if points.is_empty() {
        0.0
    } else {
        (3.0 / points.len() as f64).min(0.5)
    };
    proptest::collection::vec(proptest::bool::weighted(chance), points.len()).prop_map(
        move |flags| {
            let cuts = points
                .iter()
                .zip(flags)
                .filter_map(|(&p, cut)| cut.then_some(p))
                .collect();
            Chunks::new(owned.borrow(), cuts)
                .map(ToOwned::to_owned)
                .collect()
        },
    )
}

/// Random splits of `input` into at most `max_parts` parts, as owned
/// chunks that join back to it.
///
/// The number of cuts is drawn first, uniformly from `0` to
/// `max_parts - 1` (fewer when the input has fewer cut points), then
/// which cut points. Shrinking drops cuts one at a time, so a failing case
/// ends as a split in which every remaining cut is needed. Use it
/// where [`split_of`]'s unbounded number of cuts makes long inputs slow,
/// or to look for bugs that need exactly a few boundaries.
///
/// # Panics
///
/// If `max_parts` is zero: no split has no parts.
///
/// # Example
///
/// ```
/// use chunk_invariance::strategy::split_of_up_to;
/// use proptest::strategy::{Strategy, ValueTree};
/// use proptest::test_runner::TestRunner;
///
/// let mut runner = TestRunner::deterministic();
/// for _ in 0..32 {
///     let split = split_of_up_to("hello world", 3).new_tree(&mut runner).unwrap().current();
///     assert!(split.len() <= 3);
///     assert_eq!(split.concat(), "hello world");
/// }
/// ```
pub fn split_of_up_to<T>(
    input: &T,
    max_parts: usize,
) -> impl Strategy<Value = Vec<T::Owned>> + use<T>
where
    T: ?Sized + Text + ToOwned,
    T::Owned: fmt::Debug,
{
    assert!(
        max_parts > 0,
        "split_of_up_to: max_parts must be at least 1"
    );
    let points = input.cut_points();
    let owned: T::Owned = input.to_owned();
    let max_cuts = (max_parts - 1).min(points.len());
    proptest::sample::subsequence(points, 0..=max_cuts).prop_map(move |cuts| {
        Chunks::new(owned.borrow(), cuts)
            .map(ToOwned::to_owned)
            .collect()
    })
}

/// An owned input a strategy can draw: `String` or `Vec<u8>`.
///
/// Sealed; it names the borrowed [`Text`] that [`input_and_split`] splits.
pub trait OwnedText: Clone + fmt::Debug + Borrow<Self::Text> + sealed::Sealed {
    /// The borrowed form: `str` or `[u8]`.
    type Text: ?Sized + Text + ToOwned<Owned = Self>;
}

impl OwnedText for String {
    type Text = str;
}

impl OwnedText for Vec<u8> {
    type Text = [u8];
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for String {}
    impl Sealed for Vec<u8> {}
}

/// An input drawn from `inputs`, then a random split of it as by
/// [`split_of`].
///
/// Shrinking first shrinks the input (drawing a new split of the smaller
/// input), then drops cuts.
///
/// # Example
///
/// ```
/// use chunk_invariance::strategy::input_and_split;
/// use chunk_invariance::{check_chunk_invariant_with, Splits};
/// use chunk_invariance::examples::{redact, redact_holding_back};
/// use proptest::prelude::*;
///
/// proptest! {
///     # #![proptest_config(ProptestConfig { cases: 32, failure_persistence: None, ..ProptestConfig::default() })]
///     // In a test module, this fn takes `#[test]`.
///     fn hold_back_is_invariant((input, split) in input_and_split("[a-z ]{0,8}(sk-[A-Za-z0-9]{8})?[a-z ]{0,8}")) {
///         check_chunk_invariant_with(redact_holding_back, redact, input.as_str(), Splits::explicit([&split]))?;
///     }
/// }
/// # hold_back_is_invariant();
/// ```
pub fn input_and_split<S>(inputs: S) -> impl Strategy<Value = (S::Value, Vec<S::Value>)>
where
    S: Strategy,
    S::Value: OwnedText,
{
    inputs.prop_flat_map(|input| {
        let split = split_of::<<S::Value as OwnedText>::Text>(input.borrow());
        (Just(input), split)
    })
}

/// An input drawn from `inputs`, then a random split of it into at most
/// `max_parts` parts, as by [`split_of_up_to`].
///
/// # Panics
///
/// If `max_parts` is zero.
///
/// # Example
///
/// ```
/// use chunk_invariance::strategy::input_and_split_up_to;
/// use chunk_invariance::{check_chunk_invariant_with, Splits};
/// use chunk_invariance::examples::{redact, redact_holding_back};
/// use proptest::prelude::*;
///
/// proptest! {
///     # #![proptest_config(ProptestConfig { cases: 32, failure_persistence: None, ..ProptestConfig::default() })]
///     // In a test module, this fn takes `#[test]`.
///     fn hold_back_is_invariant((input, split) in input_and_split_up_to("[a-z ]{0,8}(sk-[A-Za-z0-9]{8})?[a-z ]{0,8}", 3)) {
///         prop_assert!(split.len() <= 3);
///         check_chunk_invariant_with(redact_holding_back, redact, input.as_str(), Splits::explicit([&split]))?;
///     }
/// }
/// # hold_back_is_invariant();
/// ```
pub fn input_and_split_up_to<S>(
    inputs: S,
    max_parts: usize,
) -> impl Strategy<Value = (S::Value, Vec<S::Value>)>
where
    S: Strategy,
    S::Value: OwnedText,
{
    assert!(
        max_parts > 0,
        "input_and_split_up_to: max_parts must be at least 1"
    );
    inputs.prop_flat_map(move |input| {
        let split = split_of_up_to::<<S::Value as OwnedText>::Text>(input.borrow(), max_parts);
        (Just(input), split)
    })
}
