//! Why a stream stopped, and the message and exit status that say so.
//!
//! It sits below `main` and `files`, which both return it, so that neither
//! imports the other's items back.

use std::io;
use std::process::ExitCode;

use stream_replace::{Block, StreamError, StreamErrorKind};

use crate::spec::Spec;

/// Why a stream stopped.
#[derive(Debug)]
pub enum Stop {
    /// A block rule fired; the text before its match has been written.
    Block(Block),
    /// The engine stopped the stream (held text over the limit, or poisoned).
    Stream(StreamError),
    /// Reading the named input failed.
    Read(String, io::Error),
    /// Writing the output failed.
    Write(io::Error),
}

impl Stop {
    /// Prints the message and gives the exit status. `input` names where the
    /// byte offsets count from; `after` ends each message.
    pub fn report(&self, specs: &[Spec], input: &str, after: &str) -> ExitCode {
        match self {
            Stop::Block(block) => {
                let rule = match specs.get(block.rule()) {
                    Some(spec) => spec.name(),
                    None => format!("rule {}", block.id()),
                };
                // Names the rule and where its match started, never the
                // matched text.
                eprintln!(
                    "srep: blocked by {rule}, {}, at byte {} of {input}; nothing from \
                     there on is written{after}",
                    block.reason(),
                    block.span().start
                );
                ExitCode::from(3)
            }
            Stop::Stream(e) => {
                let why = match e.kind() {
                    StreamErrorKind::HeldLimit => format!(
                        "{} bytes were held back for a match not yet decided, more than \
                         the limit of {} (--max-held); they were discarded, not written",
                        e.held(),
                        e.limit()
                    ),
                    _ => format!(
                        "the stream failed; the {} bytes it held were discarded, not written",
                        e.held()
                    ),
                };
                eprintln!("srep: stopped reading {input}: {why}{after}");
                ExitCode::from(4)
            }
            Stop::Read(name, e) => {
                eprintln!("srep: cannot read {name}: {e}{after}");
                ExitCode::from(4)
            }
            Stop::Write(e) => {
                eprintln!("srep: cannot write the output: {e}{after}");
                ExitCode::from(4)
            }
        }
    }
}

impl From<StreamError> for Stop {
    fn from(e: StreamError) -> Stop {
        match e.block() {
            Some(block) => Stop::Block(block.clone()),
            None => Stop::Stream(e),
        }
    }
}
