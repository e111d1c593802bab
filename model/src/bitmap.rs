//! [`MarkBitmap`]: a side bitmap of mark bits, one per mark index.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::mark_store::MarkStore;
use crate::obj_ref::ObjRef;
use crate::object_model::{MarkIndex, ObjectModel};
use crate::prefetch::prefetch_read;

/// A bitmap over mark indices `0..len`, stored as atomic words (bit `i % 64`
/// of word `i / 64` is index `i`).
///
/// It is the engine's default [`MarkStore`]: [`MarkBitmap::set`] is atomic
/// and tests the bit with a plain load before the read-modify-write, so
/// marking an already-marked object (the common case in a dense graph)
/// never takes the cache line exclusive. A single thread that owns the
/// bitmap uses [`MarkBitmap::insert`] instead, and one that is the only
/// thread marking in it while others hold it shared uses
/// [`MarkBitmap::set_unshared`]: neither has an atomic read-modify-write.
/// Bits at or past `len` are always zero, so `==` is set equality.
///
/// ```
/// use stealmark_model::MarkBitmap;
///
/// let mut b = MarkBitmap::new(130);
/// assert!(b.set(129));
/// assert!(!b.set(129));
/// assert!(b.insert(3));
/// assert_eq!(b.count(), 2);
/// assert_eq!(b.iter().collect::<Vec<_>>(), vec![3, 129]);
/// ```
#[derive(Default)]
pub struct MarkBitmap {
    words: Vec<AtomicU64>,
    bits: usize,
}

impl MarkBitmap {
    /// An empty bitmap for indices `0..bits`.
    pub fn new(bits: usize) -> MarkBitmap {
        let mut b = MarkBitmap::default();
        b.reset(bits);
        b
    }

    /// A bitmap from its words (bit `i % 64` of word `i / 64` is index `i`).
    /// Returns `None` if `words` is not `bits.div_ceil(64)` long or has a bit
    /// set at or past `bits`.
    pub fn from_words(words: Vec<u64>, bits: usize) -> Option<MarkBitmap> {
        if words.len() != bits.div_ceil(64) {
            return None;
        }
        if bits % 64 != 0 && words.last().is_some_and(|&last| last >> (bits % 64) != 0) {
            return None;
        }
        Some(MarkBitmap {
            words: words.into_iter().map(AtomicU64::new).collect(),
            bits,
        })
    }

    /// Clears every bit and resizes for `bits` indices. Reuses the storage
    /// when it is large enough, so a steady state allocates nothing.
    pub fn reset(&mut self, bits: usize) {
        let words = bits.div_ceil(64);
        self.words.truncate(words);
        for w in &mut self.words {
            *w.get_mut() = 0;
        }
        self.words.resize_with(words, || AtomicU64::new(0));
        self.bits = bits;
    }

    /// Resizes for `bits` indices without clearing the words kept (new words
    /// are zero), for a caller that clears them itself, in parallel, with
    /// [`MarkBitmap::clear_part`]. Reuses the storage when it is large enough.
    pub fn resize_uncleared(&mut self, bits: usize) {
        self.words
            .resize_with(bits.div_ceil(64), || AtomicU64::new(0));
        self.bits = bits;
    }

    /// Clears part `part` of `parts` equal parts of the words, so that
    /// `parts` threads can clear the bitmap together (each one then finds
    /// its part of the bitmap in its own cache). The caller orders these
    /// stores before any marking (the engine uses a barrier).
    pub fn clear_part(&self, part: usize, parts: usize) {
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

    /// Sets bit `index` atomically; `true` if this call set it. Of several
    /// threads setting the same bit at once, exactly one gets `true`.
    ///
    /// # Panics
    ///
    /// If `index >= len` (a heap whose [`MarkIndex::mark_index`] breaks its
    /// contract), with a message that says so.
    #[inline]
    pub fn set(&self, index: usize) -> bool {
        let (word, bit) = self.word_and_bit(index);
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

    /// The word that holds bit `index`, and the bit's mask in it.
    ///
    /// # Panics
    ///
    /// If `index >= len`, naming the broken [`MarkIndex`] contract.
    ///
    /// One test per mark: the slice's own bounds check would be a second
    /// compare and branch on every strong slot a marker visits.
    #[inline(always)]
    fn word_and_bit(&self, index: usize) -> (&AtomicU64, u64) {
        if index >= self.bits {
            index_out_of_range(index, self.bits);
        }
        // SAFETY: `index < bits`, and `words.len() == bits.div_ceil(64)`
        // (every constructor and resize sets the two together, and nothing
        // else changes either), so `index / 64 < words.len()`.
        let word = unsafe { self.words.get_unchecked(index / 64) };
        (word, 1u64 << (index % 64))
    }

    /// Sets bit `index` with a plain load and store, no atomic
    /// read-modify-write; `true` if this call set it. For a caller that is
    /// the only thread touching the bitmap while it marks (see
    /// [`MarkStore::try_mark_unshared`]) but holds it shared. If another
    /// thread sets bits in the same word meanwhile, one of the two may be
    /// lost (never undefined behaviour: the accesses stay atomic).
    ///
    /// # Panics
    ///
    /// If `index >= len`, as [`MarkBitmap::set`].
    #[inline]
    pub fn set_unshared(&self, index: usize) -> bool {
        let (word, bit) = self.word_and_bit(index);
        // Relaxed load and store: the caller is the only thread marking, so
        // nothing can change the word between the two; and, as in `set`, a
        // mark bit publishes nothing (the caller's hand-back orders these
        // stores before anyone else reads the bitmap).
        // The store is unconditional (it rewrites a set bit as it was), so
        // that a caller that uses the answer as a number, not a branch
        // (`newly as usize`), compiles to code without a branch: a marker's
        // test of whether it set a target's bit is the least predictable
        // branch of its loop.
        let old = word.load(Ordering::Relaxed);
        word.store(old | bit, Ordering::Relaxed);
        old & bit == 0
    }

    /// Sets bit `index` through exclusive access (no atomic
    /// read-modify-write); returns whether it was clear before.
    ///
    /// # Panics
    ///
    /// If `index >= len`.
    #[inline]
    pub fn insert(&mut self, index: usize) -> bool {
        if index >= self.bits {
            index_out_of_range(index, self.bits);
        }
        let word = self.words[index / 64].get_mut();
        let bit = 1u64 << (index % 64);
        let was_clear = *word & bit == 0;
        *word |= bit;
        was_clear
    }

    /// Whether bit `index` is set (`false` at or past the end).
    #[inline]
    pub fn contains(&self, index: usize) -> bool {
        // Relaxed: see `set`.
        index < self.bits
            && self.words[index / 64].load(Ordering::Relaxed) & (1u64 << (index % 64)) != 0
    }

    /// The number of bits set.
    pub fn count(&self) -> u64 {
        self.words().map(|w| u64::from(w.count_ones())).sum()
    }

    /// The words: bit `i % 64` of word `i / 64` is index `i`.
    pub fn words(&self) -> impl ExactSizeIterator<Item = u64> + '_ {
        // Relaxed: see `set`.
        self.words.iter().map(|w| w.load(Ordering::Relaxed))
    }

    /// The indices of the set bits, in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words().enumerate().flat_map(|(i, w)| {
            let mut rest = w;
            std::iter::from_fn(move || {
                if rest == 0 {
                    return None;
                }
                let bit = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                Some(i * 64 + bit)
            })
        })
    }

    /// The smallest index set in exactly one of the two bitmaps, for
    /// reporting a mismatch. `None` if they are equal (lengths aside).
    pub fn first_difference(&self, other: &MarkBitmap) -> Option<usize> {
        let n = self.words.len().max(other.words.len());
        let word = |b: &MarkBitmap, i: usize| {
            // Relaxed: see `set`.
            b.words.get(i).map_or(0, |w| w.load(Ordering::Relaxed))
        };
        (0..n).find_map(|i| {
            let diff = word(self, i) ^ word(other, i);
            (diff != 0).then(|| i * 64 + diff.trailing_zeros() as usize)
        })
    }
}

impl Clone for MarkBitmap {
    fn clone(&self) -> MarkBitmap {
        MarkBitmap {
            words: self.words().map(AtomicU64::new).collect(),
            bits: self.bits,
        }
    }
}

impl PartialEq for MarkBitmap {
    fn eq(&self, other: &MarkBitmap) -> bool {
        self.bits == other.bits && self.words().eq(other.words())
    }
}

impl Eq for MarkBitmap {}

impl fmt::Debug for MarkBitmap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MarkBitmap")
            .field("len", &self.bits)
            .field("count", &self.count())
            .finish()
    }
}

impl<H: ObjectModel + MarkIndex + ?Sized> MarkStore<H> for MarkBitmap {
    #[inline]
    fn try_mark(&self, heap: &H, obj: ObjRef) -> bool {
        self.set(heap.mark_index(obj))
    }

    /// [`MarkBitmap::set_unshared`]: a plain load and store.
    #[inline]
    fn try_mark_unshared(&self, heap: &H, obj: ObjRef) -> bool {
        self.set_unshared(heap.mark_index(obj))
    }

    /// # Panics
    ///
    /// If the object's mark index is out of range, as [`MarkBitmap::set`]
    /// does: a weak referent or an ephemeron key outside the heap is a
    /// broken contract, not a dead object.
    #[inline]
    fn is_marked(&self, heap: &H, obj: ObjRef) -> bool {
        let index = heap.mark_index(obj);
        if index >= self.bits {
            index_out_of_range(index, self.bits);
        }
        self.contains(index)
    }

    /// Eight: one bit per granule packs the marks of neighbouring objects
    /// into one cache line, so most tests hit, and a longer delay only
    /// holds back pushes (on generated 8M random and 4M binary-tree heaps
    /// at one worker, 32 took 4% and 25% longer than 8).
    #[inline]
    fn prefetch_distance(&self) -> usize {
        8
    }

    /// Without a bounds check: the address of a word past the end is only
    /// computed (wrapping) and hinted, never read, and a hint never faults.
    #[inline]
    fn prefetch(&self, heap: &H, obj: ObjRef) {
        let word = self.words.as_ptr().wrapping_add(heap.mark_index(obj) / 64);
        prefetch_read(word.cast());
    }

    /// The bitmap's length: every object's mark index is below it.
    #[inline]
    fn dense_bound(&self, _heap: &H) -> Option<usize> {
        Some(self.bits)
    }

    /// The object's mark index.
    #[inline]
    fn dense_index(&self, heap: &H, obj: ObjRef) -> Option<usize> {
        Some(heap.mark_index(obj))
    }
}

/// The panic of a mark index out of range: the heap broke its contract.
#[cold]
#[inline(never)]
#[track_caller]
fn index_out_of_range(index: usize, bits: usize) -> ! {
    panic!(
        "mark index {index} is out of range 0..{bits}: the heap's MarkIndex::mark_index \
         broke its contract (every object the marker reaches has an index below \
         mark_index_bound, which sized the bitmap); is a reference pointing outside the heap?"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_operations() {
        let mut b = MarkBitmap::new(130);
        assert!(b.insert(0));
        assert!(b.set(129));
        assert!(!b.insert(129));
        assert!(!b.set(0));
        assert!(b.insert(64));
        assert!(b.set_unshared(65));
        assert!(!b.set_unshared(65) && !b.set_unshared(0));
        assert!(!b.set(65));
        assert_eq!(b.count(), 4);
        assert!(b.contains(65) && !b.contains(66) && !b.contains(1000));
        assert_eq!(b.iter().collect::<Vec<_>>(), vec![0, 64, 65, 129]);
        let c = MarkBitmap::from_words(b.words().collect(), 130).unwrap();
        assert_eq!(b, c);
        let mut d = c.clone();
        d.insert(7);
        assert_eq!(b.first_difference(&d), Some(7));
        assert_eq!(b.first_difference(&c), None);
        assert_ne!(b, d);
        assert!(MarkBitmap::from_words(vec![0; 3], 130).is_some());
        assert!(MarkBitmap::from_words(vec![0, 0, 1 << 2], 130).is_none());
        assert!(MarkBitmap::from_words(vec![0; 2], 130).is_none());
        b.reset(10);
        assert_eq!((b.count(), b.len()), (0, 10));
    }

    #[test]
    #[should_panic(expected = "MarkIndex::mark_index broke its contract")]
    fn an_index_past_the_end_names_the_contract() {
        // 70 bits: index 100 lies inside the second word, so only the
        // contract check catches it.
        MarkBitmap::new(70).set(100);
    }

    #[test]
    #[should_panic(expected = "MarkIndex::mark_index broke its contract")]
    fn an_unshared_index_past_the_end_names_the_contract() {
        MarkBitmap::new(70).set_unshared(100);
    }

    #[test]
    #[should_panic(expected = "MarkIndex::mark_index broke its contract")]
    fn is_marked_past_the_end_names_the_contract() {
        struct Numbered;
        impl ObjectModel for Numbered {
            fn size_bytes(&self, _: ObjRef) -> usize {
                8
            }
            fn slot_count(&self, _: ObjRef) -> usize {
                0
            }
            fn scan_slots<V: FnMut(usize, ObjRef, crate::SlotKind)>(
                &self,
                _: ObjRef,
                _: std::ops::Range<usize>,
                _: V,
            ) {
            }
        }
        impl MarkIndex for Numbered {
            fn mark_index_bound(&self) -> usize {
                70
            }
            fn mark_index(&self, o: ObjRef) -> usize {
                o.index()
            }
        }
        MarkBitmap::new(70).is_marked(&Numbered, ObjRef::from_index(100));
    }

    #[test]
    fn parts_clear_everything_between_them() {
        let mut b = MarkBitmap::new(1000);
        for i in (0..1000).step_by(7) {
            b.insert(i);
        }
        b.resize_uncleared(700);
        for part in 0..3 {
            b.clear_part(part, 3);
        }
        assert_eq!(b.count(), 0);
        assert_eq!(b.len(), 700);
    }

    /// Two threads breaking `set_unshared`'s rule (marking the same words
    /// at once): marks may be lost, but every access stays atomic, so Miri
    /// finds no data race; each thread still sees its own bits as new.
    #[test]
    fn unshared_sets_that_race_stay_defined() {
        let b = MarkBitmap::new(256);
        let fresh: Vec<usize> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..2)
                .map(|t| {
                    let b = &b;
                    s.spawn(move || (t..256).step_by(2).filter(|&i| b.set_unshared(i)).count())
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(fresh, vec![128, 128]);
        // Alone again, it sets exactly the bits still clear (those lost).
        let kept = b.count();
        let again = (0..256).filter(|&i| b.set_unshared(i)).count() as u64;
        assert_eq!((b.count(), again), (256, 256 - kept));
    }

    #[test]
    fn concurrent_sets_have_one_winner_per_bit() {
        let b = MarkBitmap::new(4096);
        let wins: u64 = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|_| s.spawn(|| (0..4096).filter(|&i| b.set(i)).count() as u64))
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert_eq!(wins, 4096);
        assert_eq!(b.count(), 4096);
    }
}
