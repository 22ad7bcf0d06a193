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

/// Like [`through`], but keeps what the adapter delivered before an error:
/// the output, and the error's message if it failed. Checks that nothing
/// comes after the error.
pub fn through_until_error(
    r: Replacer,
    adapter: Adapter,
    chunks: &[&[u8]],
) -> (Vec<u8>, Option<String>) {
    let strs: Vec<&str> = chunks
        .iter()
        .map(|c| std::str::from_utf8(c).unwrap_or(""))
        .collect();
    // Items until the first error; an iterator must end right after it.
    fn items<T>(
        mut it: impl Iterator<Item = Result<T, stream_replace::StreamError>>,
    ) -> (Vec<T>, Option<String>) {
        let mut out = Vec::new();
        for item in it.by_ref() {
            match item {
                Ok(x) => out.push(x),
                Err(e) => {
                    assert!(it.next().is_none(), "an item after the error");
                    return (out, Some(e.to_string()));
                }
            }
        }
        (out, None)
    }
    match adapter {
        Adapter::Wrap => {
            let (out, e) = items(stream_replace::wrap(r, strs));
            (out.concat().into_bytes(), e)
        }
        Adapter::WrapBytes => {
            let (out, e) = items(stream_replace::wrap_bytes(r, chunks.iter().copied()));
            (out.concat(), e)
        }
        Adapter::Writer => {
            use std::io::Write;
            let mut w = stream_replace::ReplaceWriter::new(r, Vec::new());
            for c in chunks {
                if let Err(e) = w.write_all(c) {
                    let out = w.get_ref().clone();
                    // Later writes fail too, and write nothing.
                    assert!(w.write_all(b"more").is_err());
                    assert_eq!(w.get_ref(), &out);
                    return (out, Some(e.to_string()));
                }
            }
            match w.try_finish() {
                Ok(()) => (w.get_ref().clone(), None),
                Err(e) => (w.get_ref().clone(), Some(e.to_string())),
            }
        }
        Adapter::Reader => {
            use std::io::Read;
            let inner = ChunkReader {
                chunks: chunks.iter().copied().collect(),
            };
            let mut out = Vec::new();
            let mut reader = stream_replace::ReplaceReader::new(r, inner);
            match reader.read_to_end(&mut out) {
                Ok(_) => (out, None),
                Err(e) => {
                    let mut more = Vec::new();
                    assert!(reader.read_to_end(&mut more).is_err() && more.is_empty());
                    (out, Some(e.to_string()))
                }
            }
        }
        #[cfg(feature = "stream")]
        Adapter::Stream | Adapter::StreamBytes => {
            use std::task::{Context, Poll, Waker};
            let mut cx = Context::from_waker(Waker::noop());
            let mut out = Vec::new();
            let mut poll_all = |mut s: std::pin::Pin<
                Box<dyn futures_core::Stream<Item = Result<Vec<u8>, stream_replace::StreamError>>>,
            >| loop {
                match s.as_mut().poll_next(&mut cx) {
                    Poll::Pending => {}
                    Poll::Ready(None) => return None,
                    Poll::Ready(Some(Ok(item))) => out.extend(item),
                    Poll::Ready(Some(Err(e))) => {
                        assert!(matches!(s.as_mut().poll_next(&mut cx), Poll::Ready(None)));
                        return Some(e.to_string());
                    }
                }
            };
            let e = if adapter == Adapter::Stream {
                let s = Pending {
                    items: strs.into_iter().collect(),
                    ready: false,
                };
                poll_all(Box::pin(futures_map(stream_replace::wrap_stream(r, s))))
            } else {
                let s = Pending {
                    items: chunks.iter().copied().collect(),
                    ready: false,
                };
                poll_all(Box::pin(stream_replace::wrap_stream_bytes(r, s)))
            };
            (out, e)
        }
    }
}

/// A stream of `String` items as one of bytes.
#[cfg(feature = "stream")]
fn futures_map<S>(
    s: S,
) -> impl futures_core::Stream<Item = Result<Vec<u8>, stream_replace::StreamError>>
where
    S: futures_core::Stream<Item = Result<String, stream_replace::StreamError>> + Unpin,
{
    struct Map<S>(S);
    impl<S> futures_core::Stream for Map<S>
    where
        S: futures_core::Stream<Item = Result<String, stream_replace::StreamError>> + Unpin,
    {
        type Item = Result<Vec<u8>, stream_replace::StreamError>;
        fn poll_next(
            mut self: std::pin::Pin<&mut Self>,
            cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<Self::Item>> {
            std::pin::Pin::new(&mut self.0)
                .poll_next(cx)
                .map(|o| o.map(|r| r.map(String::into_bytes)))
        }
    }
    Map(s)
}
