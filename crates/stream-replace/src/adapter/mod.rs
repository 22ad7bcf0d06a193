//! Adapters from common chunk sources and sinks to a
//! [`Replacer`](crate::Replacer).
//!
//! Each adapter owns one [`Replacer`](crate::Replacer), feeds it every chunk
//! and ends the stream exactly once, at the source's end (iterators, streams,
//! readers) or on an explicit finish (writers). Once the stream has ended,
//! normally or with an error, the replacer is ready for a new stream.

use std::ops::ControlFlow;

use crate::error::StreamError;
use crate::replacer::Replacer;

pub(crate) mod io;
pub(crate) mod iter;
#[cfg(feature = "stream")]
pub(crate) mod stream;

/// What the chunks of a source are made of: text, fed in whole characters,
/// or bytes, cut anywhere.
trait Unit {
    /// The output of one feed or flush, in the same unit.
    type Out: AsRef<[u8]>;

    fn feed(replacer: &mut Replacer, chunk: &Self) -> Result<Self::Out, StreamError>;

    fn flush(replacer: &mut Replacer) -> Result<Self::Out, StreamError>;

    /// The output a failed call released before it failed.
    fn released(bytes: &[u8]) -> Self::Out;
}

impl Unit for str {
    type Out = String;

    fn feed(replacer: &mut Replacer, chunk: &str) -> Result<String, StreamError> {
        replacer.feed(chunk)
    }

    fn flush(replacer: &mut Replacer) -> Result<String, StreamError> {
        replacer.flush()
    }

    fn released(bytes: &[u8]) -> String {
        // A `&str` stream releases whole characters.
        String::from_utf8_lossy(bytes).into_owned()
    }
}

impl Unit for [u8] {
    type Out = Vec<u8>;

    fn feed(replacer: &mut Replacer, chunk: &[u8]) -> Result<Vec<u8>, StreamError> {
        replacer.feed_bytes(chunk)
    }

    fn flush(replacer: &mut Replacer) -> Result<Vec<u8>, StreamError> {
        replacer.flush_bytes()
    }

    fn released(bytes: &[u8]) -> Vec<u8> {
        bytes.to_vec()
    }
}

/// The part of an iterator or stream adapter that does not depend on how
/// chunks are pulled: the replacer, and whether the stream has ended.
///
/// Invariant: once `done` is set, the replacer is ready for a new stream (it
/// was flushed, or reset after an error) and no more chunks are taken, which
/// makes the adapters fused.
#[derive(Debug)]
struct Driver {
    replacer: Replacer,
    done: bool,
    /// An error to yield next: the stream failed after releasing text
    /// (the safe text before a block), which was yielded first.
    pending: Option<StreamError>,
}

impl Driver {
    fn new(replacer: Replacer) -> Driver {
        Driver {
            replacer,
            done: false,
            pending: None,
        }
    }

    fn replacer(&self) -> &Replacer {
        &self.replacer
    }

    fn into_replacer(self) -> Replacer {
        self.replacer
    }

    fn is_done(&self) -> bool {
        self.done && self.pending.is_none()
    }

    /// The error to yield now, if the last item was the text released
    /// before it.
    fn take_pending(&mut self) -> Option<StreamError> {
        self.pending.take()
    }

    /// Yields a failure: the text the failing call released, if any, then
    /// (on the next call) the error.
    fn fail<U: Unit + ?Sized>(&mut self, e: StreamError) -> Option<Result<U::Out, StreamError>> {
        self.done = true;
        if e.released().is_empty() {
            return Some(Err(e));
        }
        let out = U::released(e.released());
        self.pending = Some(e.with_released(Vec::new()));
        Some(Ok(out))
    }

    /// Takes the next chunk from the source, `None` at its end.
    ///
    /// Breaks with the item to yield (`None` when the stream ends with no
    /// more output), or continues when the chunk gave no output, so that an
    /// adapter never yields an empty item.
    fn step<U: Unit + ?Sized>(
        &mut self,
        chunk: Option<&U>,
    ) -> ControlFlow<Option<Result<U::Out, StreamError>>> {
        let Some(chunk) = chunk else {
            self.done = true;
            return ControlFlow::Break(match U::flush(&mut self.replacer) {
                Ok(out) if out.as_ref().is_empty() => None,
                Err(e) => {
                    // The adapter ends here; its replacer is handed back
                    // ready for a new stream (see `done`).
                    self.replacer.reset();
                    self.fail::<U>(e)
                }
                result => Some(result),
            });
        };
        match U::feed(&mut self.replacer, chunk) {
            Ok(out) if out.as_ref().is_empty() => ControlFlow::Continue(()),
            Err(e) => {
                self.replacer.reset();
                ControlFlow::Break(self.fail::<U>(e))
            }
            result => ControlFlow::Break(Some(result)),
        }
    }

    /// At most one item per chunk plus the flush, at least none: every chunk
    /// may be held or skipped as empty.
    fn size_hint(&self, source: (usize, Option<usize>)) -> (usize, Option<usize>) {
        if self.done {
            (0, Some(0))
        } else {
            (0, source.1.and_then(|n| n.checked_add(1)))
        }
    }
}
