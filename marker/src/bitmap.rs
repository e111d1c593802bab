//! Where mark bits live: the [`MarkStore`] trait and the default side
//! bitmap, [`MarkBitmap`].

use std::sync::atomic::{AtomicU64, Ordering};

use stealmark_heap::{ObjRef, ObjectModel};

/// Mark bits for the objects of a heap of type `H`.
///
/// The engine calls [`MarkStore::try_mark`] once per strong reference it
/// finds; exactly one call per reachable object returns `true` during a mark
/// phase, and that caller owns scanning the object. A runtime that keeps mark
/// bits in object headers implements this trait over its headers (see
/// `examples/embed_runtime.rs`); everyone else uses [`MarkBitmap`].
pub trait MarkStore<H: ObjectModel + ?Sized>: Sync {
    /// Sets `obj`'s mark bit. Returns `true` if this call set it, `false` if
    /// it was already set. Must be atomic: two concurrent calls for the same
    /// object return `true` at most once between them.
    fn try_mark(&self, heap: &H, obj: ObjRef) -> bool;

    /// Whether `obj` is marked.
    fn is_marked(&self, heap: &H, obj: ObjRef) -> bool;

    /// Hints that `try_mark(heap, obj)` comes soon. The default prefetches
    /// the object (right for mark bits in headers); side bitmaps prefetch
    /// their word instead.
    #[inline]
    fn prefetch(&self, heap: &H, obj: ObjRef) {
        heap.prefetch(obj);
    }
}

/// A side bitmap of atomic words, one bit per mark index.
///
/// `try_mark` tests the bit with a plain load before the read-modify-write,
/// so marking an already-marked object (the common case in a dense graph)
/// never takes the cache line exclusive.
#[derive(Debug, Default)]
pub struct MarkBitmap {
    words: Vec<AtomicU64>,
    bits: usize,
}

impl MarkBitmap {
    /// An empty bitmap for `bits` indices.
    pub fn new(bits: usize) -> MarkBitmap {
        let mut b = MarkBitmap::default();
        b.reset(bits);
        b
    }

    /// Clears every bit and resizes for `bits` indices. Reuses the storage
    /// when it is large enough, so a steady state allocates nothing.
    pub fn reset(&mut self, bits: usize) {
        let words = bits.div_ceil(64);
        if self.words.len() > words {
            self.words.truncate(words);
        }
        for w in &mut self.words {
            *w.get_mut() = 0;
        }
        self.words.resize_with(words, || AtomicU64::new(0));
        self.bits = bits;
    }

    /// Resizes for `bits` indices without clearing the bits kept (new words
    /// are zero). Reuses the storage when it is large enough.
    pub(crate) fn resize_uncleared(&mut self, bits: usize) {
        self.words
            .resize_with(bits.div_ceil(64), || AtomicU64::new(0));
        self.bits = bits;
    }

    /// Clears part `part` of `parts` equal parts of the words, so that
    /// `parts` threads can clear the bitmap together (each one then finds
    /// its part of the bitmap in its own cache). The caller orders the
    /// stores before any marking (the engine uses a barrier).
    pub(crate) fn clear_part(&self, part: usize, parts: usize) {
        let n = self.words.len();
        let (lo, hi) = (n * part / parts, n * (part + 1) / parts);
        for w in &self.words[lo..hi] {
            // Relaxed: published by the caller's barrier (Release/Acquire).
            w.store(0, Ordering::Relaxed);
        }
    }

    /// The number of indices the bitmap covers.
    pub fn len(&self) -> usize {
        self.bits
    }

    /// Whether the bitmap covers no index.
    pub fn is_empty(&self) -> bool {
        self.bits == 0
    }

    /// Sets bit `index`; `true` if this call set it. Panics if `index` is out
    /// of range (a heap whose `mark_index` breaks its contract).
    #[inline]
    pub fn set(&self, index: usize) -> bool {
        let word = &self.words[index / 64];
        let bit = 1u64 << (index % 64);
        // Relaxed: a mark bit publishes nothing. The object it guards reaches
        // its scanner through a deque push/steal (release/acquire there), and
        // the caller reads the bitmap after the workers' hand-back, which the
        // pool's mutex orders after every store here.
        if word.load(Ordering::Relaxed) & bit != 0 {
            return false;
        }
        // Relaxed: the read-modify-write alone decides the single winner.
        word.fetch_or(bit, Ordering::Relaxed) & bit == 0
    }

    /// Whether bit `index` is set.
    #[inline]
    pub fn get(&self, index: usize) -> bool {
        // Relaxed: see `set`.
        self.words[index / 64].load(Ordering::Relaxed) & (1u64 << (index % 64)) != 0
    }

    /// The number of bits set.
    pub fn count(&self) -> usize {
        self.words
            .iter()
            .map(|w| w.load(Ordering::Relaxed).count_ones() as usize)
            .sum()
    }

    /// The bitmap as words: bit `i % 64` of word `i / 64` is index `i`
    /// (the layout of the heap crate's sequential bitmap, for comparisons).
    pub fn words(&self) -> impl ExactSizeIterator<Item = u64> + '_ {
        // Relaxed: see `set`.
        self.words.iter().map(|w| w.load(Ordering::Relaxed))
    }

    /// The indices of the set bits, in increasing order.
    pub fn iter_set(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(i, w)| {
            let mut bits = w.load(Ordering::Relaxed);
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let tz = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                Some(i * 64 + tz)
            })
        })
    }
}

impl<H: ObjectModel + ?Sized> MarkStore<H> for MarkBitmap {
    #[inline]
    fn try_mark(&self, heap: &H, obj: ObjRef) -> bool {
        self.set(heap.mark_index(obj))
    }

    #[inline]
    fn is_marked(&self, heap: &H, obj: ObjRef) -> bool {
        self.get(heap.mark_index(obj))
    }

    #[inline]
    fn prefetch(&self, heap: &H, obj: ObjRef) {
        if let Some(w) = self.words.get(heap.mark_index(obj) / 64) {
            stealmark_heap::model::prefetch_read((w as *const AtomicU64).cast());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_once_and_count() {
        let mut b = MarkBitmap::new(130);
        assert!(b.set(0));
        assert!(!b.set(0));
        assert!(b.set(129));
        assert!(b.get(129) && !b.get(128));
        assert_eq!(b.count(), 2);
        assert_eq!(b.iter_set().collect::<Vec<_>>(), vec![0, 129]);
        b.reset(10);
        assert_eq!(b.count(), 0);
        assert_eq!(b.len(), 10);
    }
}
