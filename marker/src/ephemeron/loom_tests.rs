//! loom models of the key index protocol (module documentation): a
//! registrant and a marker of the same key, with the very `KeyIndex` that
//! ships (two shards, one filter word under loom).
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test -p stealmark-marker --release --lib ephemeron::loom_tests
//! ```
//!
//! Each model counts, over all the interleavings it explores, which side
//! took the entry, and asserts that both paths ran: a model that never
//! reaches the race proves nothing. A last model drops the fences and must
//! fail (loom finds the lost wake-up), which shows that the models do reach
//! the interleaving the fences exist for.

use std::sync::atomic::{AtomicUsize as StdAtomic, Ordering as StdOrdering};

use loom::sync::atomic::{AtomicU64, Ordering};
use loom::sync::Arc;
use loom::thread;
use stealmark_model::ObjRef;

use super::{fence, KeyIndex};

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(3);
    }
    builder.check(f);
}

const KEY: usize = 7;

fn key() -> ObjRef {
    ObjRef::from_index(KEY)
}

/// The registrant's side: insert, fence, take if the key is marked.
/// Returns how many values it took.
fn register(index: &KeyIndex, mark: &AtomicU64, value: usize, fenced: bool) -> usize {
    index.insert(key(), ObjRef::from_index(value));
    if fenced {
        fence();
    }
    // Relaxed: as `MarkBitmap::contains`; the fence orders it.
    if mark.load(Ordering::Relaxed) & 1 != 0 {
        index.take(key(), &mut Vec::new())
    } else {
        0
    }
}

/// The marker's side: mark, fence, take if the filter may hold the key.
fn mark_key(index: &KeyIndex, mark: &AtomicU64, fenced: bool) -> usize {
    // Relaxed: as `MarkBitmap::set`; the fence orders it.
    if mark.fetch_or(1, Ordering::Relaxed) & 1 != 0 {
        return 0;
    }
    if fenced {
        fence();
    }
    if index.may_hold(key()) {
        index.take(key(), &mut Vec::new())
    } else {
        0
    }
}

#[test]
fn a_registrant_and_a_marker_never_both_miss() {
    static REGISTRANT_TOOK: StdAtomic = StdAtomic::new(0);
    static MARKER_TOOK: StdAtomic = StdAtomic::new(0);
    model(|| {
        let index = Arc::new(KeyIndex::new());
        let mark = Arc::new(AtomicU64::new(0));
        let (i2, m2) = (index.clone(), mark.clone());
        let marker = thread::spawn(move || mark_key(&i2, &m2, true));
        let by_registrant = register(&index, &mark, 1, true);
        let by_marker = marker.join().unwrap();
        assert_eq!(by_registrant + by_marker, 1, "taken exactly once");
        assert_eq!(index.waiting(), 0);
        REGISTRANT_TOOK.fetch_add(by_registrant, StdOrdering::Relaxed);
        MARKER_TOOK.fetch_add(by_marker, StdOrdering::Relaxed);
    });
    assert!(
        REGISTRANT_TOOK.load(StdOrdering::Relaxed) > 0,
        "registrant path never ran"
    );
    assert!(
        MARKER_TOOK.load(StdOrdering::Relaxed) > 0,
        "marker path never ran"
    );
}

#[test]
fn two_registrants_and_a_marker_take_each_entry_once() {
    static SPLIT: StdAtomic = StdAtomic::new(0);
    model(|| {
        let index = Arc::new(KeyIndex::new());
        let mark = Arc::new(AtomicU64::new(0));
        let (i2, m2) = (index.clone(), mark.clone());
        let (i3, m3) = (index.clone(), mark.clone());
        let other = thread::spawn(move || register(&i2, &m2, 2, true));
        let marker = thread::spawn(move || mark_key(&i3, &m3, true));
        let a = register(&index, &mark, 1, true);
        let b = other.join().unwrap();
        let c = marker.join().unwrap();
        assert_eq!(a + b + c, 2, "each of the two entries taken exactly once");
        assert_eq!(index.waiting(), 0);
        if c == 1 {
            // The marker took one entry and a registrant the other.
            SPLIT.fetch_add(1, StdOrdering::Relaxed);
        }
    });
    assert!(
        SPLIT.load(StdOrdering::Relaxed) > 0,
        "no interleaving split the entries"
    );
}

#[test]
#[should_panic(expected = "taken exactly once")]
fn without_the_fences_an_entry_can_be_lost() {
    model(|| {
        let index = Arc::new(KeyIndex::new());
        let mark = Arc::new(AtomicU64::new(0));
        let (i2, m2) = (index.clone(), mark.clone());
        let marker = thread::spawn(move || mark_key(&i2, &m2, false));
        let by_registrant = register(&index, &mark, 1, false);
        let by_marker = marker.join().unwrap();
        assert_eq!(by_registrant + by_marker, 1, "taken exactly once");
    });
}
