//! The runtime's mark bits as the engine's [`MarkStore`]: a header byte
//! that the engine sets atomically itself ([`HeaderByte`]), or the
//! runtime's `try_mark` / `is_marked` callbacks ([`MarkCallbacks`]).

use std::ffi::c_void;
use std::sync::atomic::{AtomicU8, Ordering};

use stealmark_marker::model::DEFAULT_PREFETCH_DISTANCE;
use stealmark_marker::{MarkStore, ObjRef};

use crate::model::CModel;
use crate::status::{Error, SM_ERR_MARKS};
use crate::types::{sm_mark_byte, sm_marks};

/// A valid header-byte description: the object is marked iff
/// `byte & test_mask == test_value`; marking makes the byte
/// `(byte & !clear_bits) | set_bits`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderByte {
    offset: isize,
    test_mask: u8,
    test_value: u8,
    set_bits: u8,
    clear_bits: u8,
    /// Marking sets exactly the tested bits and clears none (a plain mark
    /// bit): an atomic OR marks, and leaves a marked byte as it is.
    or_marks: bool,
    /// The store's `prefetch_distance`.
    distance: usize,
}

/// `sm_marks.prefetch_distance` as the engine's: 0 is the default.
fn prefetch_distance(asked: u32) -> usize {
    match asked {
        0 => DEFAULT_PREFETCH_DISTANCE,
        d => d as usize,
    }
}

impl HeaderByte {
    /// Checks a description: see the header's `sm_mark_byte`.
    pub fn new(d: &sm_mark_byte) -> Result<HeaderByte, Error> {
        let bad = |why: &str| {
            Err(Error::new(
                SM_ERR_MARKS,
                format!(
                    "marks.header (test_mask {:#04x}, test_value {:#04x}, set_bits {:#04x}, \
                     clear_bits {:#04x}): {why}",
                    d.test_mask, d.test_value, d.set_bits, d.clear_bits
                ),
            ))
        };
        if d.test_mask == 0 {
            return bad("test_mask is 0, so every object would read as marked");
        }
        if d.test_value & !d.test_mask != 0 {
            return bad("test_value has bits outside test_mask");
        }
        if d.set_bits & d.clear_bits != 0 {
            return bad("set_bits and clear_bits overlap");
        }
        if d.test_mask & !(d.set_bits | d.clear_bits) != 0 {
            return bad("a bit of test_mask is neither set nor cleared by marking");
        }
        if d.set_bits & d.test_mask != d.test_value {
            return bad("marking leaves a byte that does not read as marked");
        }
        Ok(HeaderByte {
            offset: d.offset,
            test_mask: d.test_mask,
            test_value: d.test_value,
            set_bits: d.set_bits,
            clear_bits: d.clear_bits,
            or_marks: d.clear_bits == 0 && d.set_bits == d.test_mask,
            distance: DEFAULT_PREFETCH_DISTANCE,
        })
    }

    /// The header byte `marks` describes, with its prefetch distance.
    pub(crate) fn from_marks(marks: &sm_marks) -> Result<HeaderByte, Error> {
        Ok(HeaderByte {
            distance: prefetch_distance(marks.prefetch_distance),
            ..HeaderByte::new(&marks.header)?
        })
    }

    /// Whether a byte reads as marked.
    #[inline(always)]
    pub fn reads_marked(&self, byte: u8) -> bool {
        byte & self.test_mask == self.test_value
    }

    /// The byte after marking.
    #[inline(always)]
    pub fn marked(&self, byte: u8) -> u8 {
        (byte & !self.clear_bits) | self.set_bits
    }

    /// The mark byte of `obj`.
    #[inline(always)]
    fn byte(&self, obj: ObjRef) -> &AtomicU8 {
        let at = obj.word().wrapping_add_signed(self.offset) as *const AtomicU8;
        // SAFETY: the runtime declared `obj + offset` to be the object's
        // mark byte (`sm_mark_byte.offset`), valid for the collection and
        // accessed only atomically (by the engine) while it runs. `AtomicU8`
        // has alignment 1.
        unsafe { &*at }
    }
}

impl MarkStore<CModel> for HeaderByte {
    #[inline]
    fn try_mark(&self, _: &CModel, obj: ObjRef) -> bool {
        let byte = self.byte(obj);
        // Relaxed: the mark only decides which worker scans the object; the
        // object's contents were written before the collection began (the
        // runtime's threads are stopped), and the engine's deques order the
        // hand-offs. Pairs with the Relaxed load of `is_marked` through the
        // engine's sequentially consistent fences (the ephemeron index).
        let mut cur = byte.load(Ordering::Relaxed);
        if self.or_marks {
            // Relaxed, as the load above. The byte reads as marked iff it
            // has every set bit, so the OR won iff the old byte lacked one.
            return !self.reads_marked(cur)
                && !self.reads_marked(byte.fetch_or(self.set_bits, Ordering::Relaxed));
        }
        loop {
            if self.reads_marked(cur) {
                return false;
            }
            // Relaxed, as the load above.
            match byte.compare_exchange_weak(
                cur,
                self.marked(cur),
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(now) => cur = now,
            }
        }
    }

    /// The mark byte's line: a mark test reads only that byte, where the
    /// model's prefetch covers the bytes a scan reads.
    #[inline]
    fn prefetch(&self, heap: &CModel, obj: ObjRef) {
        heap.prefetch_mark(obj, self.byte(obj).as_ptr().cast_const());
    }

    #[inline]
    fn prefetch_distance(&self) -> usize {
        self.distance
    }

    #[inline]
    fn try_mark_unshared(&self, _: &CModel, obj: ObjRef) -> bool {
        let byte = self.byte(obj);
        // Relaxed load and store: this is the only thread marking (the
        // engine's promise for `try_mark_unshared`), so no pair is needed;
        // atomics keep a broken promise from being undefined behaviour.
        // The store is unconditional (a marked byte is written back as it
        // was), so that the engine's use of the answer as a number compiles
        // without a branch (see `MarkBitmap::set_unshared`).
        let cur = byte.load(Ordering::Relaxed);
        let unmarked = !self.reads_marked(cur);
        let new = if unmarked { self.marked(cur) } else { cur };
        byte.store(new, Ordering::Relaxed);
        unmarked
    }

    #[inline]
    fn is_marked(&self, _: &CModel, obj: ObjRef) -> bool {
        // Relaxed: pairs with the compare-exchange of `try_mark` (see there).
        self.reads_marked(self.byte(obj).load(Ordering::Relaxed))
    }
}

/// The runtime's `try_mark` and `is_marked` callbacks.
pub(crate) struct MarkCallbacks {
    ctx: *mut c_void,
    try_mark: unsafe extern "C" fn(*mut c_void, usize) -> bool,
    is_marked: unsafe extern "C" fn(*mut c_void, usize) -> bool,
    /// The store's `prefetch_distance`.
    distance: usize,
}

impl MarkCallbacks {
    /// The callbacks `marks` gives, with its prefetch distance; an error
    /// names a missing one.
    pub(crate) fn from_marks(marks: &sm_marks) -> Result<MarkCallbacks, Error> {
        Ok(MarkCallbacks {
            ctx: marks.ctx,
            try_mark: marks
                .try_mark
                .ok_or_else(|| Error::null("marks.try_mark"))?,
            is_marked: marks
                .is_marked
                .ok_or_else(|| Error::null("marks.is_marked"))?,
            distance: prefetch_distance(marks.prefetch_distance),
        })
    }
}

// SAFETY: the header requires the callbacks to be callable from any GC
// worker thread, several at once, with this context.
unsafe impl Sync for MarkCallbacks {}

// SAFETY: as for `Sync`, for the length of a mark cycle.
unsafe impl Send for MarkCallbacks {}

impl MarkStore<CModel> for MarkCallbacks {
    #[inline]
    fn try_mark(&self, _: &CModel, obj: ObjRef) -> bool {
        // SAFETY: a present callback, called as the header documents.
        unsafe { (self.try_mark)(self.ctx, obj.word()) }
    }

    #[inline]
    fn is_marked(&self, _: &CModel, obj: ObjRef) -> bool {
        // SAFETY: a present callback, called as the header documents.
        unsafe { (self.is_marked)(self.ctx, obj.word()) }
    }

    #[inline]
    fn prefetch_distance(&self) -> usize {
        self.distance
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    unsafe extern "C" fn never(_: *mut c_void, _: usize) -> bool {
        false
    }

    /// `sm_marks.prefetch_distance` reaches both stores: 0 asks for the
    /// engine's default, another value is passed on (the engine rounds it).
    #[test]
    fn the_prefetch_distance_asked_for_reaches_both_stores() {
        for (asked, distance) in [(0, DEFAULT_PREFETCH_DISTANCE), (8, 8), (100, 100)] {
            let marks = sm_marks {
                mode: 0,
                prefetch_distance: asked,
                header: desc(0x01, 0x01, 0x01, 0x00),
                ctx: std::ptr::null_mut(),
                try_mark: Some(never),
                is_marked: Some(never),
                dense_index: None,
                dense_bound: 0,
            };
            let header = HeaderByte::from_marks(&marks).unwrap();
            let callbacks = MarkCallbacks::from_marks(&marks).unwrap();
            assert_eq!(MarkStore::<CModel>::prefetch_distance(&header), distance);
            assert_eq!(MarkStore::<CModel>::prefetch_distance(&callbacks), distance);
        }
    }

    fn desc(test_mask: u8, test_value: u8, set_bits: u8, clear_bits: u8) -> sm_mark_byte {
        sm_mark_byte {
            offset: 0,
            test_mask,
            test_value,
            set_bits,
            clear_bits,
        }
    }

    #[test]
    fn lua_colour_byte_marks_white_objects_and_keeps_other_bits() {
        let lua = HeaderByte::new(&desc(0x18, 0x00, 0x20, 0x18)).unwrap();
        for byte in 0..=255u8 {
            let white = byte & 0x18 != 0;
            assert_eq!(lua.reads_marked(byte), !white, "{byte:#x}");
            let m = lua.marked(byte);
            assert!(lua.reads_marked(m));
            assert_eq!(m & !0x38, byte & !0x38, "age and other bits kept");
            assert_eq!(m & 0x20, 0x20, "black");
        }
        // Gray (no white, no black) counts as marked: Lua's fixed strings.
        assert!(lua.reads_marked(0x00));
    }

    #[test]
    fn plain_bit_and_every_valid_description_turn_any_byte_marked() {
        let plain = HeaderByte::new(&desc(0x01, 0x01, 0x01, 0x00)).unwrap();
        assert!(!plain.reads_marked(0xfe) && plain.reads_marked(plain.marked(0xfe)));
        // Exhaustively over small masks: a description is accepted exactly
        // when marking always yields a marked byte and some byte is unmarked.
        for (t, v, s, c) in (0..16u8).flat_map(|t| {
            (0..16u8).flat_map(move |v| {
                (0..16u8).flat_map(move |s| (0..16u8).map(move |c| (t, v, s, c)))
            })
        }) {
            let ok = HeaderByte::new(&desc(t, v, s, c));
            let sound = (0..=255u8).all(|b| (((b & !c) | s) & t) == v)
                && (0..=255u8).any(|b| b & t != v)
                && s & c == 0;
            assert_eq!(ok.is_ok(), sound, "t {t:#x} v {v:#x} s {s:#x} c {c:#x}");
        }
    }

    /// More threads than cores mark the same bytes in different orders, with
    /// Lua's description (other bits set at random; a compare-exchange) and
    /// with a plain mark bit (an atomic OR): each byte is won exactly once,
    /// and ends marked with its other bits kept.
    #[test]
    fn each_header_byte_is_marked_exactly_once_by_racing_threads() {
        use std::sync::atomic::AtomicUsize;
        let lua = HeaderByte::new(&desc(0x18, 0x00, 0x20, 0x18)).unwrap();
        let plain = HeaderByte::new(&desc(0x01, 0x01, 0x01, 0x00)).unwrap();
        assert!(plain.or_marks && !lua.or_marks);
        let n = if cfg!(miri) { 64 } else { 20_000 };
        /// An object: its mark byte, 8-aligned as references are.
        #[repr(C, align(8))]
        struct Obj(AtomicU8);
        for (store, unmarked, marked) in [(lua, 0x08u8, 0x20u8), (plain, 0x00, 0x01)] {
            let objects: Vec<Obj> = (0..n)
                .map(|i| Obj(AtomicU8::new(unmarked | (i as u8 & 0x46))))
                .collect();
            let wins: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
            let heap = CModel::for_tests();
            let threads = if cfg!(miri) { 3 } else { 8 };
            std::thread::scope(|s| {
                for t in 0..threads {
                    let (objects, wins, heap) = (&objects, &wins, &heap);
                    s.spawn(move || {
                        for k in 0..n {
                            let i = if t % 2 == 0 { k } else { n - 1 - k };
                            let obj =
                                ObjRef::from_word(&objects[i] as *const Obj as usize).unwrap();
                            if store.try_mark(heap, obj) {
                                wins[i].fetch_add(1, Ordering::Relaxed);
                            }
                            assert!(store.is_marked(heap, obj));
                        }
                    });
                }
            });
            for i in 0..n {
                assert_eq!(wins[i].load(Ordering::Relaxed), 1, "object {i}");
                let b = objects[i].0.load(Ordering::Relaxed);
                assert_eq!(b, marked | (i as u8 & 0x46), "object {i}: {b:#x}");
            }
        }
    }

    #[test]
    fn bad_descriptions_name_the_problem() {
        let e = HeaderByte::new(&desc(0, 0, 1, 0)).unwrap_err();
        assert_eq!(e.status, SM_ERR_MARKS);
        assert!(e.message.contains("test_mask is 0"), "{}", e.message);
        let e = HeaderByte::new(&desc(0x18, 0x00, 0x20, 0x08)).unwrap_err();
        assert!(
            e.message.contains("neither set nor cleared"),
            "{}",
            e.message
        );
        let e = HeaderByte::new(&desc(0x01, 0x01, 0x00, 0x01)).unwrap_err();
        assert!(
            e.message.contains("does not read as marked"),
            "{}",
            e.message
        );
    }
}
