//! Runs the splits a check will ask for ahead of it, on a few threads.
//!
//! The check itself (ordering, shrinking, re-runs, the report) is the
//! library's and asks for one split at a time. The workers run the splits
//! in the same order a bounded distance ahead, so the check mostly finds
//! its result ready. A split the check asks for that was not scheduled (a
//! re-run, a shrinking candidate) runs on the check's own thread.

use std::collections::HashMap;
use std::iter::Peekable;
use std::sync::{Condvar, Mutex, MutexGuard};

use chunk_invariance::{SplitIter, Text};

use crate::run::{FilterCommand, RunFailure, RunOutput};

/// A run's result.
pub(crate) type RunResult = Result<RunOutput, RunFailure>;

/// The splits ahead of the check, and the results of those started.
pub(crate) struct Pool<'a, T: ?Sized + Text> {
    state: Mutex<State<'a, T>>,
    changed: Condvar,
    runner: &'a FilterCommand,
    /// How many splits may be started beyond those the check has taken.
    window: usize,
}

struct State<'a, T: ?Sized + Text> {
    /// The splits not yet started, in the check's order.
    splits: Peekable<SplitIter<'a, T>>,
    started: usize,
    taken: usize,
    /// Started splits by their cuts: `None` while running.
    results: HashMap<Vec<usize>, Option<RunResult>>,
    stopped: bool,
}

/// The cut offsets of a chunk list.
pub(crate) fn cuts_of(chunks: &[&[u8]]) -> Vec<usize> {
    let mut at = 0;
    let mut cuts = Vec::with_capacity(chunks.len().saturating_sub(1));
    for chunk in &chunks[..chunks.len().saturating_sub(1)] {
        at += chunk.len();
        cuts.push(at);
    }
    cuts
}

impl<'a, T: ?Sized + AsRef<[u8]> + Text> Pool<'a, T> {
    pub(crate) fn new(splits: SplitIter<'a, T>, runner: &'a FilterCommand, jobs: usize) -> Self {
        Pool {
            state: Mutex::new(State {
                splits: splits.peekable(),
                started: 0,
                taken: 0,
                results: HashMap::new(),
                stopped: false,
            }),
            changed: Condvar::new(),
            runner,
            window: 2 * jobs,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<'a, T>> {
        // A worker that panicked left nothing half-changed that matters:
        // at worst a split stays "running", and the check runs it itself.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A worker: runs the next split while the window allows, until the
    /// splits run out or the pool stops.
    pub(crate) fn work(&self) {
        loop {
            let (cuts, chunks) = {
                let mut state = self.lock();
                while !state.stopped && state.started >= state.taken + self.window {
                    state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
                }
                if state.stopped {
                    return;
                }
                let Some(split) = state.splits.next() else {
                    return;
                };
                let chunks: Vec<&[u8]> = split.into_iter().map(|c| c.as_ref()).collect();
                let cuts = cuts_of(&chunks);
                state.started += 1;
                state.results.insert(cuts.clone(), None);
                (cuts, chunks)
            };
            let result = self.runner.run(&chunks);
            self.lock().results.insert(cuts, Some(result));
            self.changed.notify_all();
        }
    }

    /// The result for one split the check asks for: a worker's, waited
    /// for, or a run on this thread.
    pub(crate) fn take(&self, chunks: &[&[u8]]) -> RunResult {
        let cuts = cuts_of(chunks);
        let mut state = self.lock();
        if !state.results.contains_key(&cuts) {
            // The next split in order, not started yet: start it here, so
            // no worker runs it again.
            let is_next = state.splits.peek().is_some_and(|next| {
                let next: Vec<&[u8]> = next.iter().map(|c| c.as_ref()).collect();
                cuts_of(&next) == cuts
            });
            if is_next {
                state.splits.next();
                state.started += 1;
                state.taken += 1;
                drop(state);
                self.changed.notify_all();
            } else {
                drop(state);
            }
            return self.runner.run(chunks);
        }
        loop {
            if let Some(Some(_)) = state.results.get(&cuts) {
                let result = state.results.remove(&cuts).flatten();
                state.taken += 1;
                drop(state);
                self.changed.notify_all();
                return result.expect("a finished run has a result");
            }
            state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Stops the workers once their current runs end.
    pub(crate) fn stop(&self) {
        self.lock().stopped = true;
        self.changed.notify_all();
    }
}
