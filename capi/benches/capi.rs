//! Benchmarks of the C interface, as paired, alternated runs (each round
//! times both sides back to back, in alternating order; the ratios of the
//! rounds are reported with their median):
//!
//! - (a) `abi-vs-rust`: marking one heap through the C interface (C-style
//!   callbacks reading an arena) against the Rust API (a monomorphised
//!   `ObjectModel` reading the same arena), both with the header-byte mark
//!   store, at 1 and 2 workers;
//! - (b) `small`: the latency of a call collecting a 1,000-object heap
//!   through the C interface, solo (calling thread only) and with the pool
//!   woken, beside the Rust API's solo collection, and the two paired;
//! - (c) `header-vs-callbacks`: the header byte that the engine sets itself
//!   against the runtime's `try_mark`/`is_marked` callbacks.
//!
//! `cargo bench -p stealmark-capi --bench capi [-- a|b|c]`;
//! `STEALMARK_CAPI_OBJECTS` sets the heap of (a) and (c) (default 8M),
//! `STEALMARK_CAPI_ROUNDS` the rounds (default 11). Every time is the
//! wall-clock time of the collecting call. Timings need a quiet machine.

use std::ffi::c_void;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::time::Instant;

use stealmark_capi::*;
use stealmark_marker::{
    Collection, MarkStore, Marker, MarkerConfig, ObjRef, ObjectModel, SlotKind,
};

/// Helpers shared with the integration tests.
#[path = "../tests/it/common/ffi.rs"]
mod ffi;
use ffi::{bit0, c_refs, clear_all, config, new_marker};

/// A heap in one arena of words: object `i` starts at `starts[i]` with a
/// header word (mark byte in its low byte, slot count above), then its
/// slots, each the address of its target's header or 0.
struct Arena {
    words: Vec<AtomicU64>,
    starts: Vec<usize>,
}

impl Arena {
    /// `n` objects: a binary tree (object `i` points to `2i+1`, `2i+2`)
    /// plus one pseudo-random edge per object.
    fn new(n: usize) -> Arena {
        let mut starts = Vec::with_capacity(n);
        let mut len = 0;
        for _ in 0..n {
            starts.push(len);
            len += 4;
        }
        let words: Vec<AtomicU64> = (0..len).map(|_| AtomicU64::new(0)).collect();
        let base = words.as_ptr() as usize;
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for (i, &s) in starts.iter().enumerate() {
            words[s].store(3 << 8, Ordering::Relaxed);
            for (k, child) in [2 * i + 1, 2 * i + 2].into_iter().enumerate() {
                if child < n {
                    words[s + 1 + k].store((base + 8 * starts[child]) as u64, Ordering::Relaxed);
                }
            }
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let t = (x % n as u64) as usize;
            words[s + 3].store((base + 8 * starts[t]) as u64, Ordering::Relaxed);
        }
        Arena { words, starts }
    }

    fn root(&self) -> usize {
        self.words.as_ptr() as usize + 8 * self.starts[0]
    }

    fn clear_marks(&self) {
        for &s in &self.starts {
            self.words[s].fetch_and(!0xff, Ordering::Relaxed);
        }
    }
}

/// The word at address `a` of the arena.
///
/// # Safety
///
/// `a` is the address of a word of a live arena.
#[inline(always)]
unsafe fn word<'a>(a: usize) -> &'a AtomicU64 {
    // SAFETY: the caller's promise.
    unsafe { &*(a as *const AtomicU64) }
}

// ---- the C side -----------------------------------------------------------

unsafe extern "C" fn c_size(_: *mut c_void, r: usize) -> usize {
    // SAFETY: the engine passes object addresses of the arena.
    8 + 8 * (unsafe { word(r) }.load(Ordering::Relaxed) >> 8) as usize
}

unsafe extern "C" fn c_count(_: *mut c_void, r: usize) -> usize {
    // SAFETY: as above.
    (unsafe { word(r) }.load(Ordering::Relaxed) >> 8) as usize
}

unsafe extern "C" fn c_scan(
    _: *mut c_void,
    r: usize,
    start: usize,
    end: usize,
    out: *mut sm_slot,
    cap: usize,
) -> usize {
    let mut n = 0;
    for i in start..end {
        if n == cap {
            break;
        }
        // SAFETY: slot `i < slot_count` of an arena object.
        let t = unsafe { word(r + 8 + 8 * i) }.load(Ordering::Relaxed) as usize;
        if t != 0 {
            // SAFETY: `n < cap`.
            unsafe {
                out.add(n).write(sm_slot {
                    index: i,
                    target: t,
                    key: 0,
                    kind: SM_SLOT_STRONG,
                    reserved: 0,
                })
            };
            n += 1;
        }
    }
    n
}

unsafe extern "C" fn c_try_mark(_: *mut c_void, r: usize) -> bool {
    // SAFETY: as above; the mark byte is the header word's low byte.
    let b = unsafe { &*(r as *const AtomicU8) };
    b.load(Ordering::Relaxed) & 1 == 0 && b.fetch_or(1, Ordering::Relaxed) & 1 == 0
}

unsafe extern "C" fn c_is_marked(_: *mut c_void, r: usize) -> bool {
    // SAFETY: as above.
    unsafe { &*(r as *const AtomicU8) }.load(Ordering::Relaxed) & 1 != 0
}

/// One collection of `arena` through the C interface; the call's time in
/// ns (the engine's pause and the interface's own work).
fn through_c(arena: &Arena, marker: *mut sm_marker, mode: u32) -> u64 {
    arena.clear_marks();
    let model = sm_object_model {
        ctx: std::ptr::null_mut(),
        size_bytes: Some(c_size),
        slot_count: Some(c_count),
        scan_slots: Some(c_scan),
        type_count: 0,
        type_id: None,
        prefetch: None,
        prefetch_off: 0,
        prefetch_bytes: 0,
        heap_start: 0,
        heap_end: 0,
        prefetch_slots: None,
        scan_clamps_end: 0,
    };
    let marks = sm_marks {
        mode,
        prefetch_distance: 0,
        header: bit0(0),
        ctx: std::ptr::null_mut(),
        try_mark: Some(c_try_mark),
        is_marked: Some(c_is_marked),
        dense_index: None,
        dense_bound: 0,
    };
    let root = [arena.root()];
    let roots = c_refs(&root);
    let c = sm_collection {
        model: &model,
        marks: &marks,
        roots: &roots,
        finalizable: std::ptr::null(),
        soft: clear_all(),
    };
    let mut report = sm_report::default();
    let mut stats = sm_stats::default();
    let t0 = Instant::now();
    // SAFETY: valid pointers; the arena outlives the call.
    let status = unsafe { sm_collect(marker, &c, &mut report) };
    let ns = t0.elapsed().as_nanos() as u64;
    assert_eq!(status, SM_OK);
    // SAFETY: a current report.
    assert_eq!(unsafe { sm_report_stats(&report, &mut stats) }, SM_OK);
    assert_eq!(stats.live_objects as usize, arena.starts.len());
    ns
}

// ---- the Rust side --------------------------------------------------------

struct RustArena;

impl ObjectModel for RustArena {
    #[inline]
    fn size_bytes(&self, o: ObjRef) -> usize {
        // SAFETY: the engine passes object addresses of the arena.
        8 + 8 * (unsafe { word(o.word()) }.load(Ordering::Relaxed) >> 8) as usize
    }
    #[inline]
    fn slot_count(&self, o: ObjRef) -> usize {
        // SAFETY: as above.
        (unsafe { word(o.word()) }.load(Ordering::Relaxed) >> 8) as usize
    }
    #[inline]
    fn scan_slots<V: FnMut(usize, ObjRef, SlotKind)>(&self, o: ObjRef, s: Range<usize>, mut v: V) {
        for i in s.start..s.end.min(self.slot_count(o)) {
            // SAFETY: slot `i < slot_count` of an arena object.
            let t = unsafe { word(o.word() + 8 + 8 * i) }.load(Ordering::Relaxed) as usize;
            if let Some(t) = ObjRef::from_word(t) {
                v(i, t, SlotKind::Strong);
            }
        }
    }
}

/// Bit 0 of the header's low byte, as the C side's header description.
struct RustMarks;

impl MarkStore<RustArena> for RustMarks {
    #[inline]
    fn try_mark(&self, _: &RustArena, o: ObjRef) -> bool {
        // SAFETY: the header word's low byte of an arena object.
        let b = unsafe { &*(o.word() as *const AtomicU8) };
        b.load(Ordering::Relaxed) & 1 == 0 && b.fetch_or(1, Ordering::Relaxed) & 1 == 0
    }
    #[inline]
    fn try_mark_unshared(&self, _: &RustArena, o: ObjRef) -> bool {
        // SAFETY: as above.
        let b = unsafe { &*(o.word() as *const AtomicU8) };
        let v = b.load(Ordering::Relaxed);
        b.store(v | 1, Ordering::Relaxed);
        v & 1 == 0
    }
    #[inline]
    fn is_marked(&self, _: &RustArena, o: ObjRef) -> bool {
        // SAFETY: as above.
        unsafe { &*(o.word() as *const AtomicU8) }.load(Ordering::Relaxed) & 1 != 0
    }
}

/// One collection of `arena` through the Rust API (solo or not); the call's
/// time in ns.
fn through_rust(arena: &Arena, marker: &mut Marker, solo: bool) -> u64 {
    arena.clear_marks();
    let root = [ObjRef::from_word(arena.root()).unwrap()];
    let t0 = Instant::now();
    let r = marker.collect_with(
        &RustArena,
        &RustMarks,
        &Collection::new(&root[..]).solo(solo),
    );
    let ns = t0.elapsed().as_nanos() as u64;
    assert_eq!(r.live_objects() as usize, arena.starts.len());
    ns
}

// ---- the harness ----------------------------------------------------------

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Times `a` and `b` in `rounds` alternated pairs; prints the median
/// times and the median of the ratios a/b.
fn paired(what: &str, rounds: usize, mut a: impl FnMut() -> u64, mut b: impl FnMut() -> u64) {
    a();
    b();
    let (mut ta, mut tb, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let (x, y) = if round % 2 == 0 {
            (a(), b())
        } else {
            let y = b();
            (a(), y)
        };
        ta.push(x);
        tb.push(y);
        ratios.push(x as f64 / y as f64);
    }
    let med = |v: &mut Vec<u64>| {
        v.sort();
        v[v.len() / 2]
    };
    ratios.sort_by(f64::total_cmp);
    println!(
        "{what}: {:.3} ms / {:.3} ms, ratio median {:.3} (min {:.3}, max {:.3}, {rounds} pairs)",
        med(&mut ta) as f64 / 1e6,
        med(&mut tb) as f64 / 1e6,
        ratios[rounds / 2],
        ratios[0],
        ratios[rounds - 1]
    );
}

fn main() {
    let which: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let run = |w: &str| which.is_empty() || which.iter().any(|a| a == w);
    let objects = env("STEALMARK_CAPI_OBJECTS", 8 << 20);
    let rounds = env("STEALMARK_CAPI_ROUNDS", 11).max(1);
    if run("a") || run("c") {
        let arena = Arena::new(objects);
        for workers in [1u32, 2] {
            let cm = new_marker(&config(workers, 0));
            if run("a") {
                let mut rm = Marker::new(MarkerConfig::with_workers(workers as usize)).unwrap();
                paired(
                    &format!("(a) {objects} objects, {workers} worker(s), C ABI / Rust API"),
                    rounds,
                    || through_c(&arena, cm, SM_MARKS_HEADER_BYTE),
                    || through_rust(&arena, &mut rm, false),
                );
            }
            if run("c") {
                paired(
                    &format!("(c) {objects} objects, {workers} worker(s), header byte / callbacks"),
                    rounds,
                    || through_c(&arena, cm, SM_MARKS_HEADER_BYTE),
                    || through_c(&arena, cm, SM_MARKS_CALLBACKS),
                );
            }
            // SAFETY: a marker from `sm_marker_new`.
            unsafe { sm_marker_free(cm) };
        }
    }
    if run("b") {
        let small = Arena::new(1000);
        let solo = new_marker(&config(2, u64::MAX));
        let pool = new_marker(&config(2, 0));
        let mut rust = Marker::new(MarkerConfig::with_workers(2)).unwrap();
        let lat = |f: &mut dyn FnMut() -> u64| {
            let mut v: Vec<u64> = (0..2000).map(|_| f()).collect();
            v.sort();
            (v[v.len() / 2], v[v.len() * 99 / 100])
        };
        let runs: [(&str, &mut dyn FnMut() -> u64); 3] = [
            ("C ABI, solo", &mut || {
                through_c(&small, solo, SM_MARKS_HEADER_BYTE)
            }),
            ("C ABI, pool woken", &mut || {
                through_c(&small, pool, SM_MARKS_HEADER_BYTE)
            }),
            ("Rust API, solo", &mut || {
                through_rust(&small, &mut rust, true)
            }),
        ];
        for (name, f) in runs {
            let (p50, p99) = lat(f);
            println!(
                "(b) 1000 objects, 2 workers, {name}: median {:.1} us, p99 {:.1} us per call \
                 (target < 50 us through the C ABI)",
                p50 as f64 / 1e3,
                p99 as f64 / 1e3
            );
        }
        paired(
            "(b) 1000 objects, solo, C ABI / Rust API (x1000 calls)",
            rounds,
            || {
                (0..1000)
                    .map(|_| through_c(&small, solo, SM_MARKS_HEADER_BYTE))
                    .sum()
            },
            || {
                (0..1000)
                    .map(|_| through_rust(&small, &mut rust, true))
                    .sum()
            },
        );
        // SAFETY: markers from `sm_marker_new`.
        unsafe {
            sm_marker_free(solo);
            sm_marker_free(pool);
        }
    }
}
