//! Root sources as the workers see them: a [`RootSource`] behind a trait
//! object (so that the engine is not monomorphised once more per root type),
//! and the atomic counter through which workers claim its chunks (or their
//! fixed shares of them).

use std::sync::atomic::{AtomicUsize, Ordering};

use crossbeam_utils::CachePadded;
use stealmark_model::{ObjRef, RootSource};

/// A [`RootSource`] with its visitor behind a trait object: one indirect
/// call per reference, inside the source's own (monomorphised) loop.
pub(crate) trait Chunks: Sync {
    /// [`RootSource::chunk_count`].
    fn chunk_count(&self) -> usize;
    /// [`RootSource::scan_chunk`].
    fn scan_chunk(&self, chunk: usize, visit: &mut dyn FnMut(ObjRef));
}

/// A root source, sized so that it can become a `&dyn Chunks` (a slice
/// itself cannot).
pub(crate) struct Erased<'a, R: ?Sized>(pub(crate) &'a R);

impl<R: RootSource + ?Sized> Chunks for Erased<'_, R> {
    #[inline]
    fn chunk_count(&self) -> usize {
        self.0.chunk_count()
    }

    #[inline]
    fn scan_chunk(&self, chunk: usize, visit: &mut dyn FnMut(ObjRef)) {
        self.0.scan_chunk(chunk, visit);
    }
}

/// Hands out the chunks of a source, each once, to whichever worker asks.
pub(crate) struct Claims<'a> {
    source: &'a dyn Chunks,
    count: usize,
    next: CachePadded<AtomicUsize>,
}

impl<'a> Claims<'a> {
    pub(crate) fn new(source: &'a dyn Chunks) -> Claims<'a> {
        Claims {
            source,
            count: source.chunk_count(),
            next: CachePadded::new(AtomicUsize::new(0)),
        }
    }

    /// The source.
    pub(crate) fn source(&self) -> &'a dyn Chunks {
        self.source
    }

    /// The chunks of worker `worker`'s fixed share, of `workers`: every
    /// `workers`th chunk from `worker` on (the counter is not used).
    pub(crate) fn share(&self, worker: usize, workers: usize) -> impl Iterator<Item = usize> {
        (worker..self.count).step_by(workers.max(1))
    }

    /// Claims the next chunk, if any is left.
    #[inline]
    pub(crate) fn claim(&self) -> Option<usize> {
        // Relaxed: a hint that spares the read-modify-write once every
        // chunk is claimed; the `fetch_add` below decides.
        if self.next.load(Ordering::Relaxed) >= self.count {
            return None;
        }
        // Relaxed: the counter only hands out distinct indices; the source
        // itself is immutable during the collection and was published to the
        // workers by the pool's hand-off.
        let c = self.next.fetch_add(1, Ordering::Relaxed);
        (c < self.count).then_some(c)
    }
}
