//! loom models of the barrier buffers' queue (module documentation): the
//! hand-off of full buffers to a coordinator that parks while there are
//! none, and the remark's accounting of buffers still held by a mutator
//! thread when the background marking stops.
//!
//! ```text
//! RUSTFLAGS="--cfg loom --cfg crossbeam_loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test -p stealmark-marker --release --lib satb::loom_tests
//! ```
//!
//! Each model checks that every entry is taken exactly once (by the
//! coordinator or by the remark), and counts, over all the interleavings it
//! explores, the branches that make it worth running; it fails if one was
//! never taken.

use std::sync::atomic::{AtomicUsize as StdAtomic, Ordering as StdOrdering};

use loom::thread;
use stealmark_model::ObjRef;

use super::{Queue, Work};

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(3);
    }
    builder.check(f);
}

fn r(i: usize) -> ObjRef {
    ObjRef::from_index(i)
}

/// The coordinator's loop: every entry of every buffer it is given, until
/// stopped, and how many batches it was given.
fn coordinate(q: &Queue) -> (Vec<usize>, usize) {
    let mut seen = Vec::new();
    let mut batches = 0;
    while let Work::Buffers(full) = q.next_work() {
        batches += 1;
        for b in &full {
            seen.extend(b.iter().map(|o| o.index()));
        }
        q.recycle(full.into_iter());
    }
    (seen, batches)
}

/// A queue, its coordinator, and a mutator thread that records entry 1,
/// hands its buffer off, records entry 2 and gives the buffer back.
#[allow(clippy::type_complexity)]
fn start() -> (
    loom::sync::Arc<Queue>,
    thread::JoinHandle<(Vec<usize>, usize)>,
    thread::JoinHandle<()>,
) {
    let q = loom::sync::Arc::new(Queue::new());
    let mut buffer = q.acquire();
    let coordinator = {
        let q = q.clone();
        thread::spawn(move || coordinate(&q))
    };
    let mutator = {
        let q = q.clone();
        thread::spawn(move || {
            buffer.push(r(1));
            q.hand_off(&mut buffer);
            buffer.push(r(2));
            q.release(buffer, 0);
        })
    };
    (q, coordinator, mutator)
}

/// Entries recorded by a thread, taken by the coordinator (parked or not)
/// or left to the remark: each exactly once.
#[test]
fn hand_off_wakes_a_parked_coordinator() {
    static PARKED: StdAtomic = StdAtomic::new(0);
    static WOKE: StdAtomic = StdAtomic::new(0);
    static ONE_BATCH: StdAtomic = StdAtomic::new(0);
    static TWO_BATCHES: StdAtomic = StdAtomic::new(0);
    model(|| {
        let (q, coordinator, mutator) = start();
        mutator.join().unwrap();
        q.stop();
        let (mut seen, batches) = coordinator.join().unwrap();
        // Every hand-off happened before the stop: the coordinator took
        // every buffer before it returned.
        let rest = q.take_remaining().expect("the buffer was given back");
        assert!(rest.is_empty());
        seen.sort();
        assert_eq!(seen, [1, 2]);
        let (parked, woke) = q.branch_counts();
        PARKED.fetch_add(usize::from(parked > 0), StdOrdering::Relaxed);
        WOKE.fetch_add(usize::from(woke > 0), StdOrdering::Relaxed);
        ONE_BATCH.fetch_add(usize::from(batches == 1), StdOrdering::Relaxed);
        TWO_BATCHES.fetch_add(usize::from(batches == 2), StdOrdering::Relaxed);
    });
    let counts = [&PARKED, &WOKE, &ONE_BATCH, &TWO_BATCHES].map(|c| c.load(StdOrdering::Relaxed));
    eprintln!("parked, woken by a hand-off, both buffers in one batch, in two: {counts:?}");
    assert!(counts.iter().all(|&n| n > 0), "{counts:?}");
}

/// The background marking stops while a thread still holds a buffer with
/// entries: the remark sees it held (and fails) until the thread gives it
/// back, and then takes its entries; nothing is lost, nothing is taken
/// twice.
#[test]
fn termination_accounts_for_buffers_still_held() {
    static HELD: StdAtomic = StdAtomic::new(0);
    static LATE: StdAtomic = StdAtomic::new(0);
    static GIVEN: StdAtomic = StdAtomic::new(0);
    model(|| {
        let (q, coordinator, mutator) = start();
        q.stop();
        let (mut seen, _) = coordinator.join().unwrap();
        let first = q.take_remaining();
        mutator.join().unwrap();
        let rest = q.take_remaining().expect("the buffer was given back");
        match &first {
            Err(held) => {
                assert_eq!(*held, 1);
                HELD.fetch_add(1, StdOrdering::Relaxed);
            }
            Ok(full) => {
                seen.extend(full.iter().flatten().map(|o| o.index()));
                GIVEN.fetch_add(1, StdOrdering::Relaxed);
            }
        }
        LATE.fetch_add(usize::from(!rest.is_empty()), StdOrdering::Relaxed);
        seen.extend(rest.iter().flatten().map(|o| o.index()));
        seen.sort();
        assert_eq!(seen, [1, 2]);
    });
    let counts = [&HELD, &LATE, &GIVEN].map(|c| c.load(StdOrdering::Relaxed));
    eprintln!(
        "remark saw a held buffer, entries left after the stop, given back before: {counts:?}"
    );
    assert!(counts.iter().all(|&n| n > 0), "{counts:?}");
}
