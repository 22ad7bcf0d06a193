#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(missing_debug_implementations)]

mod check;
mod json;
mod pool;
mod run;
mod splits;

pub use crate::check::Outcome;
pub use crate::run::{FilterCommand, Framing, RunFailure, RunOutput};
pub use crate::splits::{ParseSplitsError, parse_splits};
