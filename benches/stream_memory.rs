//! Bytes per live stream, from the allocator: what each concurrent reply
//! costs a gateway.
//!
//! For each rule set of the gateway workload, it opens 10,000 streams
//! (`STREAM_REPLACE_GATEWAY_REPLIES`), feeds each its reply of about 2 KB
//! in token-sized chunks without flushing, so all are live at once, and
//! prints the heap they hold, per stream: fresh (after `replacer()`), and
//! after the reply, with the bytes held back by the streams
//! (`Replacer::held`) shown apart. A counting global allocator measures
//! the heap; RSS would also count freed pages the allocator keeps.
//!
//! Run: `cargo bench -p stream-replace-benches --bench stream_memory`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use stream_replace::{Config, Replacer};

mod corpus;
mod workload;

/// Counts the bytes live on the heap.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; the
// counter only observes sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size, Ordering::Relaxed);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn live() -> usize {
    LIVE.load(Ordering::Relaxed)
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument picks sets by name.
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let replies = workload::replies(workload::replies_from_env());
    let tokens = workload::tokenize(&replies);
    let n = replies.len();
    let mut sets: Vec<(String, Vec<corpus::Rule>)> = workload::pii_sets()
        .into_iter()
        .map(|(name, r)| (name.to_string(), r))
        .collect();
    for size in workload::DENY_SIZES {
        sets.push((format!("deny_{size}"), workload::deny_rules(size)));
    }

    println!(
        "{n} live streams, replies of {:.0} bytes on average, token chunks",
        replies.iter().map(String::len).sum::<usize>() as f64 / n as f64
    );
    println!(
        "| set | rules heap | fresh stream | after the reply, besides held bytes | held bytes |"
    );
    println!("|---|---:|---:|---:|---:|");
    for (name, rules) in sets {
        if !filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        let before = live();
        let compiled = match corpus::try_build(&rules, Config::new()) {
            Ok(c) => c,
            Err(e) => {
                println!("| {name} | does not build: {e} | | | |");
                continue;
            }
        };
        let rules_heap = live() - before;

        let base = live();
        let mut streams: Vec<Replacer> = Vec::with_capacity(n);
        let vec_heap = live() - base;
        for _ in 0..n {
            streams.push(compiled.replacer());
        }
        let fresh = live() - base - vec_heap;

        let mut out = String::with_capacity(4096);
        for (r, reply) in streams.iter_mut().zip(&tokens) {
            for chunk in reply {
                r.feed_into(chunk, &mut out).expect("under the held limit");
                out.clear();
            }
        }
        let after = live() - base - vec_heap - out.capacity();
        let held: usize = streams.iter().map(Replacer::held).sum();
        println!(
            "| {name} | {} B | {:.0} B | {:.0} B | {:.1} B |",
            rules_heap,
            fresh as f64 / n as f64,
            after.saturating_sub(held) as f64 / n as f64,
            held as f64 / n as f64,
        );
        drop(streams);
        drop(compiled);
    }
}
