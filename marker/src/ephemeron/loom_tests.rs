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

use super::dense::Dense;
use super::{fence, KeyIndex};

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(3);
    }
    builder.check(f);
}

const KEY: usize = 7;

/// Asserts that some interleaving of a model reached the branch that
/// `counter` counts.
fn reached(counter: &StdAtomic, branch: &str) {
    assert!(counter.load(StdOrdering::Relaxed) > 0, "{branch}");
}

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
        index.take(key(), None, &mut Vec::new())
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
        index.take(key(), None, &mut Vec::new())
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
    reached(&REGISTRANT_TOOK, "registrant path never ran");
    reached(&MARKER_TOOK, "marker path never ran");
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
    reached(&SPLIT, "no interleaving split the entries");
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

/// The dense table's heads in the models: above `KEY`.
const BOUND: usize = 16;

/// Two workers of a `register` step insert entries for the same key into
/// the dense table at once (the heads' swaps); after the step (the join),
/// the key's list holds both, each once, in either order.
#[test]
fn dense_registrants_of_one_key_link_both_entries() {
    static FIRST_NEWEST: StdAtomic = StdAtomic::new(0);
    static SECOND_NEWEST: StdAtomic = StdAtomic::new(0);
    model(|| {
        let mut dense = Dense::new();
        dense.reset(BOUND);
        dense.reserve(2);
        let dense = Arc::new(dense);
        let d2 = dense.clone();
        let other = thread::spawn(move || {
            let id = d2.claim(1);
            d2.insert(id, KEY, 2, false);
        });
        let id = dense.claim(1);
        dense.insert(id, KEY, 1, false);
        other.join().unwrap();
        let mut got = Vec::new();
        dense.take_marked(KEY, |v| got.push(v));
        assert_eq!(dense.waiting(), 0);
        // Newest first: the entry whose swap came last.
        match got[..] {
            [1, 2] => FIRST_NEWEST.fetch_add(1, StdOrdering::Relaxed),
            [2, 1] => SECOND_NEWEST.fetch_add(1, StdOrdering::Relaxed),
            _ => panic!("both entries, each once: {got:?}"),
        };
    });
    reached(&FIRST_NEWEST, "never linked 2 then 1");
    reached(&SECOND_NEWEST, "never linked 1 then 2");
}

/// Two takers of one key with entries in the dense table (the shared
/// protocol's marker and a registrant re-reading the key): exactly one
/// gets the whole list, and each of them does in some interleaving.
#[test]
fn dense_takers_of_one_key_take_its_list_once() {
    static MAIN_TOOK: StdAtomic = StdAtomic::new(0);
    static OTHER_TOOK: StdAtomic = StdAtomic::new(0);
    model(|| {
        let mut dense = Dense::new();
        dense.reset(BOUND);
        dense.reserve(2);
        let base = dense.claim(2);
        dense.insert(base, KEY, 1, true);
        dense.insert(base + 1, KEY, 2, true);
        let dense = Arc::new(dense);
        let d2 = dense.clone();
        let other = thread::spawn(move || {
            let mut n = 0;
            d2.take(KEY, |_| n += 1);
            n
        });
        let mut mine = 0;
        dense.take(KEY, |_| mine += 1);
        let theirs = other.join().unwrap();
        assert!(
            (mine, theirs) == (2, 0) || (mine, theirs) == (0, 2),
            "one taker gets both entries: {mine} and {theirs}"
        );
        MAIN_TOOK.fetch_add(usize::from(mine > 0), StdOrdering::Relaxed);
        OTHER_TOOK.fetch_add(usize::from(theirs > 0), StdOrdering::Relaxed);
    });
    reached(&MAIN_TOOK, "main never took");
    reached(&OTHER_TOOK, "other never took");
}

/// The shared protocol over an index whose earlier frozen round registered
/// an entry in the dense table: a registrant adds a second entry for the
/// key (hashed shards) while a marker marks it; both entries are taken,
/// each once, and the dense one by either side in some interleaving.
#[test]
fn shared_round_after_a_dense_round_takes_each_entry_once() {
    static DENSE_BY_REGISTRANT: StdAtomic = StdAtomic::new(0);
    static DENSE_BY_MARKER: StdAtomic = StdAtomic::new(0);
    model(|| {
        let mut index = KeyIndex::new();
        index.reset(1, Some(BOUND));
        assert!(index.is_dense());
        index.reserve(1);
        let number = |k: ObjRef| Some(k.index());
        let registered = index.register(
            &mut vec![(key(), ObjRef::from_index(9))],
            |_| false,
            number,
            true,
            &mut Vec::new(),
            &mut Vec::new(),
        );
        assert_eq!(registered, 1);
        let index = Arc::new(index);
        let mark = Arc::new(AtomicU64::new(0));
        let (i2, m2) = (index.clone(), mark.clone());
        let marker = thread::spawn(move || {
            // Relaxed: as `MarkBitmap::set`; the fence orders it.
            if m2.fetch_or(1, Ordering::Relaxed) & 1 != 0 {
                return Vec::new();
            }
            fence();
            let mut out = Vec::new();
            if i2.may_hold(key()) {
                i2.take(key(), Some(KEY), &mut out);
            }
            out
        });
        index.insert(key(), ObjRef::from_index(1));
        fence();
        let mut mine = Vec::new();
        // Relaxed: as `MarkBitmap::contains`; the fence orders it.
        if mark.load(Ordering::Relaxed) & 1 != 0 {
            index.take(key(), Some(KEY), &mut mine);
        }
        let theirs = marker.join().unwrap();
        let mut all: Vec<usize> = mine.iter().chain(&theirs).map(|v| v.index()).collect();
        all.sort_unstable();
        assert_eq!(all, [1, 9], "each entry taken exactly once");
        assert_eq!(index.waiting(), 0);
        if mine.iter().any(|v| v.index() == 9) {
            DENSE_BY_REGISTRANT.fetch_add(1, StdOrdering::Relaxed);
        } else {
            DENSE_BY_MARKER.fetch_add(1, StdOrdering::Relaxed);
        }
    });
    reached(
        &DENSE_BY_REGISTRANT,
        "the registrant never took the dense entry",
    );
    reached(&DENSE_BY_MARKER, "the marker never took the dense entry");
}
