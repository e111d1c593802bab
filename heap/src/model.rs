//! The object model: what the marker needs to know about a heap.
//!
//! The marker is generic over [`ObjectModel`] and monomorphised per model, so
//! every call here inlines into the mark loop: the trait costs nothing at run
//! time.

use std::num::NonZeroUsize;
use std::ops::Range;

/// A reference to an object: a non-null word that is a multiple of
/// [`ObjRef::ALIGN`].
///
/// For a runtime this is usually the object's address; for a memory-mapped
/// snapshot it is the address of the object's header inside the mapping. The
/// low bits are always zero, so a mark stack may use them as tags.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[repr(transparent)]
pub struct ObjRef(NonZeroUsize);

impl ObjRef {
    /// Every object reference is a multiple of this many bytes.
    pub const ALIGN: usize = 8;

    /// Wraps a word. Returns `None` for zero or a word that is not a
    /// multiple of [`ObjRef::ALIGN`].
    #[inline]
    pub const fn from_word(word: usize) -> Option<ObjRef> {
        if word % Self::ALIGN != 0 {
            return None;
        }
        match NonZeroUsize::new(word) {
            Some(w) => Some(ObjRef(w)),
            None => None,
        }
    }

    /// Wraps a non-zero word that the caller knows is a multiple of
    /// [`ObjRef::ALIGN`] (an aligned base plus an aligned offset).
    #[inline(always)]
    pub(crate) const fn from_aligned(word: NonZeroUsize) -> ObjRef {
        debug_assert!(word.get() % Self::ALIGN == 0);
        ObjRef(word)
    }

    /// The reference as a word.
    #[inline]
    pub const fn word(self) -> usize {
        self.0.get()
    }

    /// The reference as an address, for models whose references are addresses.
    #[inline]
    pub fn addr(self) -> *const u8 {
        self.0.get() as *const u8
    }
}

/// Whether a reference slot keeps its target alive.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum SlotKind {
    /// A strong reference: the marker traces it.
    Strong,
    /// A weak reference: the marker does not trace it, but reports it.
    Weak,
}

/// A heap the marker can trace.
///
/// Implementations must be consistent: for an object `o`, `slot_count(o)` and
/// `scan_slots` describe the same slots on every call during a mark phase,
/// and `mark_index(o) < mark_index_bound()` for every object reachable from
/// the roots. Distinct objects have distinct mark indices.
pub trait ObjectModel: Sync {
    /// One past the largest mark-bitmap index of any object.
    fn mark_index_bound(&self) -> usize;

    /// The object's index in the mark bitmap.
    fn mark_index(&self, obj: ObjRef) -> usize;

    /// The object's size in bytes, header included.
    fn size_bytes(&self, obj: ObjRef) -> usize;

    /// The number of reference slots the object has (null ones included).
    fn slot_count(&self, obj: ObjRef) -> usize;

    /// Calls `visit(target, kind)` for every non-null reference slot whose
    /// index lies in `slots`, in slot order. `slots` is clamped to
    /// `0..slot_count(obj)`, so a marker can scan a large array in chunks.
    fn scan_slots<V: FnMut(ObjRef, SlotKind)>(&self, obj: ObjRef, slots: Range<usize>, visit: V);

    /// Hints that `obj` will be scanned soon. The default prefetches the
    /// word as an address, which suits models whose references are addresses
    /// (a prefetch never faults, whatever the address).
    #[inline]
    fn prefetch(&self, obj: ObjRef) {
        prefetch_read(obj.addr());
    }
}

/// Issues a read prefetch for the cache line holding `addr`, where the target
/// supports one. Never faults, whatever the address.
#[inline(always)]
pub fn prefetch_read(addr: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetcht0` is a hint; it never faults and never reads memory
    // architecturally, so any address is sound. SSE is baseline on x86_64.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(addr.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = addr;
}
