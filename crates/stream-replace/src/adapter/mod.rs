//! Adapters from common chunk sources and sinks to a
//! [`Replacer`](crate::Replacer).
//!
//! Each adapter owns one [`Replacer`](crate::Replacer), feeds it every chunk
//! and ends the stream exactly once, at the source's end (iterators, streams,
//! readers) or on an explicit finish (writers). Once the stream has ended,
//! normally or with an error, the replacer is ready for a new stream.

pub(crate) mod io;
pub(crate) mod iter;
#[cfg(feature = "stream")]
pub(crate) mod stream;
