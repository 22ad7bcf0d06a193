//! The splits syntax of `--splits`: `two`, `all`, `upto:K`,
//! `random:N:SEED`.

use std::fmt;

use chunk_invariance::Splits;

/// Parses the `--splits` syntax: `two` (the whole input, then every
/// single cut), `all` (every split), `upto:K` (every split into at most K
/// parts), `random:N:SEED` (N seeded random splits).
///
/// # Errors
///
/// When `arg` is none of these, a number in it is not a whole number, or
/// it is `upto:0`, which allows no split.
///
/// # Example
///
/// ```
/// use chunk_invariance::Splits;
/// use chunk_invariance_cli::parse_splits;
///
/// assert_eq!(parse_splits("upto:3")?, Splits::UpTo(3));
/// assert_eq!(parse_splits("random:20:7")?, Splits::random(20, 7));
/// assert!(parse_splits("some").is_err());
/// # Ok::<(), chunk_invariance_cli::ParseSplitsError>(())
/// ```
pub fn parse_splits(arg: &str) -> Result<Splits, ParseSplitsError> {
    let error = |message: String| Err(ParseSplitsError { message });
    let number = |s: &str, what: &str| {
        s.parse::<usize>().map_err(|_| ParseSplitsError {
            message: format!("{what} must be a whole number, not {s:?}"),
        })
    };
    let parts: Vec<&str> = arg.split(':').collect();
    match parts.as_slice() {
        ["two"] => Ok(Splits::TwoPart),
        ["all"] => Ok(Splits::All),
        ["upto", k] => match number(k, "K")? {
            0 => error("upto:0 allows no split; use upto:1 or more".to_owned()),
            k => Ok(Splits::UpTo(k)),
        },
        ["random", n, seed] => {
            let seed = seed.parse::<u64>().map_err(|_| ParseSplitsError {
                message: format!("SEED must be a whole number, not {seed:?}"),
            })?;
            Ok(Splits::random(number(n, "N")?, seed))
        }
        _ => error(format!(
            "{arg:?} is not one of two, all, upto:K, random:N:SEED"
        )),
    }
}

/// A splits argument that [`parse_splits`] does not accept; its `Display`
/// says why.
///
/// # Example
///
/// ```
/// let err = chunk_invariance_cli::parse_splits("upto:x").unwrap_err();
/// assert_eq!(err.to_string(), r#"K must be a whole number, not "x""#);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseSplitsError {
    message: String,
}

impl fmt::Display for ParseSplitsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ParseSplitsError {}
