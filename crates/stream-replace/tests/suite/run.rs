//! Stream drivers: feed a split input through a `Replacer` and check the
//! stream's bookkeeping on every call.

use stream_replace::Replacer;

/// How chunks are fed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    /// `feed` / `flush`.
    Str,
    /// `feed_into` / `flush_into`, appending to one `String`.
    StrInto,
    /// `feed_bytes` / `flush_bytes`.
    Bytes,
    /// `feed_bytes_into` / `flush_bytes_into`, appending to one `Vec`.
    BytesInto,
}

impl Api {
    pub const ALL: [Api; 4] = [Api::Str, Api::StrInto, Api::Bytes, Api::BytesInto];

    /// Whether this API takes `&str` (so splits must fall on character
    /// boundaries).
    pub fn is_str(self) -> bool {
        matches!(self, Api::Str | Api::StrInto)
    }
}

/// Feeds `chunks` (for a `&str` API each must be valid UTF-8), then
/// flushes, and returns the whole output.
///
/// After every feed it checks that `offset()` counts the bytes fed, that
/// `held()` is at most what was fed, and that the released part of the
/// input never shrinks; after the flush, that nothing is held and the
/// stream starts again at offset 0.
pub fn stream(r: &mut Replacer, api: Api, chunks: &[&[u8]]) -> Result<Vec<u8>, String> {
    let mut out_bytes = Vec::new();
    // A non-empty start shows that the `_into` methods append.
    let mut out_string = String::from("#");
    if api == Api::BytesInto {
        out_bytes.push(b'#');
    }
    let mut fed = 0;
    let mut released = 0;
    for (k, chunk) in chunks.iter().enumerate() {
        let result = match api {
            Api::Str => {
                let s = std::str::from_utf8(chunk).map_err(|e| format!("chunk {k}: {e}"))?;
                r.feed(s).map(|o| out_bytes.extend_from_slice(o.as_bytes()))
            }
            Api::StrInto => {
                let s = std::str::from_utf8(chunk).map_err(|e| format!("chunk {k}: {e}"))?;
                r.feed_into(s, &mut out_string)
            }
            Api::Bytes => r.feed_bytes(chunk).map(|o| out_bytes.extend(o)),
            Api::BytesInto => r.feed_bytes_into(chunk, &mut out_bytes),
        };
        result.map_err(|e| format!("feed of chunk {k} failed: {e}"))?;
        fed += chunk.len();
        if r.offset() != fed {
            return Err(format!(
                "after chunk {k}: offset() = {}, but {fed} bytes were fed",
                r.offset()
            ));
        }
        let held = r.held();
        if held > fed {
            return Err(format!(
                "after chunk {k}: held() = {held} > {fed} bytes fed"
            ));
        }
        if fed - held < released {
            return Err(format!(
                "after chunk {k}: released input went back from {released} to {}",
                fed - held
            ));
        }
        released = fed - held;
    }
    let result = match api {
        Api::Str => r.flush().map(|o| out_bytes.extend_from_slice(o.as_bytes())),
        Api::StrInto => r.flush_into(&mut out_string),
        Api::Bytes => r.flush_bytes().map(|o| out_bytes.extend(o)),
        Api::BytesInto => r.flush_bytes_into(&mut out_bytes),
    };
    result.map_err(|e| format!("flush failed: {e}"))?;
    if r.held() != 0 || r.offset() != 0 {
        return Err(format!(
            "after flush: held() = {}, offset() = {} (both should be 0)",
            r.held(),
            r.offset()
        ));
    }
    match api {
        Api::StrInto => Ok(out_string.into_bytes()[1..].to_vec()),
        Api::BytesInto => Ok(out_bytes[1..].to_vec()),
        _ => Ok(out_bytes),
    }
}

/// The chunks of `hay` cut at `cuts` (sorted; a repeated cut makes an
/// empty chunk).
pub fn chunks_at<'a>(hay: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut chunks = Vec::with_capacity(cuts.len() + 1);
    let mut last = 0;
    for &c in cuts {
        chunks.push(&hay[last..c]);
        last = c;
    }
    chunks.push(&hay[last..]);
    chunks
}

/// The character boundaries of `s`, `0` and `s.len()` included.
pub fn char_boundaries(s: &str) -> Vec<usize> {
    (0..=s.len()).filter(|&i| s.is_char_boundary(i)).collect()
}

/// A small deterministic generator (SplitMix64), so a failing split can be
/// reproduced from the case name alone.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: &str) -> Rng {
        // FNV-1a of the seed text.
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        for b in seed.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        Rng(h)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Sorted random cuts drawn from `points`, empty chunks included.
    pub fn cuts(&mut self, points: &[usize]) -> Vec<usize> {
        let n = self.below(points.len().min(12) + 1);
        let mut cuts: Vec<usize> = (0..n).map(|_| points[self.below(points.len())]).collect();
        cuts.sort_unstable();
        cuts
    }
}

/// `points` without its first and last element: the cuts that feed one
/// piece at a time.
pub fn interior(points: &[usize]) -> &[usize] {
    if points.len() > 2 {
        &points[1..points.len() - 1]
    } else {
        &[]
    }
}

/// The adapters over a `Replacer`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Adapter {
    /// `wrap` over an iterator of `&str` chunks.
    Wrap,
    /// `wrap_bytes` over an iterator of byte chunks.
    WrapBytes,
    /// `ReplaceWriter`: one `write_all` per chunk, then `finish`.
    Writer,
    /// `ReplaceReader` over a reader that returns one chunk per `read`.
    Reader,
    /// `wrap_stream` over a stream of `&str` chunks that is pending before
    /// every chunk.
    #[cfg(feature = "stream")]
    Stream,
    /// `wrap_stream_bytes`, likewise.
    #[cfg(feature = "stream")]
    StreamBytes,
}

impl Adapter {
    pub const ALL: &'static [Adapter] = &[
        Adapter::Wrap,
        Adapter::WrapBytes,
        Adapter::Writer,
        Adapter::Reader,
        #[cfg(feature = "stream")]
        Adapter::Stream,
        #[cfg(feature = "stream")]
        Adapter::StreamBytes,
    ];

    /// Whether this adapter takes `&str` chunks.
    pub fn is_str(self) -> bool {
        match self {
            Adapter::Wrap => true,
            #[cfg(feature = "stream")]
            Adapter::Stream => true,
            _ => false,
        }
    }
}

/// A reader that returns one chunk per `read` (empty chunks skipped, since
/// a read of 0 bytes means the end).
struct ChunkReader<'a> {
    chunks: std::collections::VecDeque<&'a [u8]>,
}

impl std::io::Read for ChunkReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while let Some(c) = self.chunks.pop_front() {
            if c.is_empty() {
                continue;
            }
            let n = c.len().min(buf.len());
            buf[..n].copy_from_slice(&c[..n]);
            if n < c.len() {
                self.chunks.push_front(&c[n..]);
            }
            return Ok(n);
        }
        Ok(0)
    }
}

/// A stream of chunks that answers `Pending` (after waking) before each.
#[cfg(feature = "stream")]
struct Pending<T> {
    items: std::collections::VecDeque<T>,
    ready: bool,
}

#[cfg(feature = "stream")]
impl<T: Unpin> futures_core::Stream for Pending<T> {
    type Item = T;

    fn poll_next(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<T>> {
        let this = self.get_mut();
        if !this.ready {
            this.ready = true;
            cx.waker().wake_by_ref();
            return std::task::Poll::Pending;
        }
        this.ready = false;
        std::task::Poll::Ready(this.items.pop_front())
    }
}

/// Polls `s` to the end with a no-op waker.
#[cfg(feature = "stream")]
fn drain_stream<S, T>(mut s: S) -> Result<Vec<T>, String>
where
    S: futures_core::Stream<Item = Result<T, stream_replace::StreamError>> + Unpin,
{
    use std::task::{Context, Poll, Waker};
    let mut cx = Context::from_waker(Waker::noop());
    let mut items = Vec::new();
    loop {
        match std::pin::Pin::new(&mut s).poll_next(&mut cx) {
            Poll::Pending => {}
            Poll::Ready(None) => return Ok(items),
            Poll::Ready(Some(Ok(item))) => items.push(item),
            Poll::Ready(Some(Err(e))) => return Err(e.to_string()),
        }
    }
}

/// Runs `chunks` through `adapter` and returns the whole output. For a
/// `&str` adapter each chunk must be valid UTF-8.
pub fn through(r: Replacer, adapter: Adapter, chunks: &[&[u8]]) -> Result<Vec<u8>, String> {
    let strs = || -> Result<Vec<&str>, String> {
        chunks
            .iter()
            .map(|c| std::str::from_utf8(c).map_err(|e| e.to_string()))
            .collect()
    };
    match adapter {
        Adapter::Wrap => {
            let items: Result<Vec<String>, _> = stream_replace::wrap(r, strs()?).collect();
            let items = items.map_err(|e| e.to_string())?;
            if items.iter().any(|i| i.is_empty()) {
                return Err("wrap yielded an empty item".into());
            }
            Ok(items.concat().into_bytes())
        }
        Adapter::WrapBytes => {
            let items: Result<Vec<Vec<u8>>, _> =
                stream_replace::wrap_bytes(r, chunks.iter().copied()).collect();
            Ok(items.map_err(|e| e.to_string())?.concat())
        }
        Adapter::Writer => {
            use std::io::Write;
            let mut w = stream_replace::ReplaceWriter::new(r, Vec::new());
            for c in chunks {
                w.write_all(c).map_err(|e| e.to_string())?;
                // `flush` must not end the stream.
                w.flush().map_err(|e| e.to_string())?;
            }
            w.finish().map_err(|e| e.to_string())
        }
        Adapter::Reader => {
            use std::io::Read;
            let inner = ChunkReader {
                chunks: chunks.iter().copied().collect(),
            };
            let mut out = Vec::new();
            stream_replace::ReplaceReader::new(r, inner)
                .read_to_end(&mut out)
                .map_err(|e| e.to_string())?;
            Ok(out)
        }
        #[cfg(feature = "stream")]
        Adapter::Stream => {
            let s = Pending {
                items: strs()?.into_iter().collect(),
                ready: false,
            };
            Ok(drain_stream(stream_replace::wrap_stream(r, s))?
                .concat()
                .into_bytes())
        }
        #[cfg(feature = "stream")]
        Adapter::StreamBytes => {
            let s = Pending {
                items: chunks.iter().copied().collect(),
                ready: false,
            };
            Ok(drain_stream(stream_replace::wrap_stream_bytes(r, s))?.concat())
        }
    }
}
