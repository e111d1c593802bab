//! loom models of the barrier buffers' queue (module documentation): the
//! hand-off of full buffers to a coordinator that parks while there are
//! none, the back-pressure of a mutator that finds the queue at its bound,
//! and the remark's accounting of buffers still held by a mutator thread
//! when the background marking stops.
//!
//! ```text
//! RUSTFLAGS="--cfg loom --cfg crossbeam_loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test -p stealmark-marker --release --lib satb::loom_tests
//! ```
//!
//! The entries are both barrier families' (`crate::cycle::entry`): objects
//! to shade (the snapshot barrier, and the incremental-update barrier's
//! forward half) and holders to rescan (its backward half); the queue
//! carries them alike, and each model checks that each kind arrives as it
//! was recorded.
//!
//! Each model checks that every entry is taken exactly once (by the
//! coordinator or by the remark), and counts, over all the interleavings it
//! explores, the branches that make it worth running; it fails if one was
//! never taken.

use std::sync::atomic::{AtomicUsize as StdAtomic, Ordering as StdOrdering};

use loom::thread;
use stealmark_model::ObjRef;

use super::{HandOff, Queue, Work};
use crate::cycle::entry::Entry;

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(3);
    }
    builder.check(f);
}

/// Entry `i`: a holder to rescan if `i` is even, else an object to shade.
fn r(i: usize) -> Entry {
    let o = ObjRef::from_index(i);
    if i % 2 == 0 {
        Entry::rescan(o)
    } else {
        Entry::shade(o)
    }
}

/// The number an entry was made from, checking its kind.
fn number(e: &Entry) -> usize {
    let i = e.obj().index();
    assert_eq!(e.is_rescan(), i % 2 == 0, "entry {i} changed its kind");
    i
}

/// The coordinator's loop: every entry of every buffer it is given, until
/// stopped, and how many batches it was given.
fn coordinate(q: &Queue<Entry>) -> (Vec<usize>, usize) {
    let mut seen = Vec::new();
    let mut batches = 0;
    while let Work::Buffers(full) = q.next_work() {
        batches += 1;
        for b in &full {
            seen.extend(b.iter().map(number));
        }
        q.recycle(full.into_iter());
    }
    (seen, batches)
}

/// A queue, its coordinator, and a mutator thread that records entry 1,
/// hands its buffer off, records entry 2 and gives the buffer back.
#[allow(clippy::type_complexity)]
fn start() -> (
    loom::sync::Arc<Queue<Entry>>,
    thread::JoinHandle<(Vec<usize>, usize)>,
    thread::JoinHandle<()>,
) {
    let q = loom::sync::Arc::new(Queue::new(1, 4, Vec::new()));
    let mut buffer = q.acquire().unwrap();
    let coordinator = {
        let q = q.clone();
        thread::spawn(move || coordinate(&q))
    };
    let mutator = {
        let q = q.clone();
        thread::spawn(move || {
            buffer.push(r(1));
            assert_eq!(q.hand_off(&mut buffer), HandOff::Queued);
            buffer.push(r(2));
            assert_eq!(q.hand_off(&mut buffer), HandOff::Queued);
            q.release(buffer, (0, 0));
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
        let rest = q.close().expect("the buffer was given back");
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
        let first = q.close();
        mutator.join().unwrap();
        let rest = q.close().expect("the buffer was given back");
        match &first {
            Err(held) => {
                assert_eq!(*held, 1);
                HELD.fetch_add(1, StdOrdering::Relaxed);
            }
            Ok(full) => {
                seen.extend(full.iter().flatten().map(number));
                GIVEN.fetch_add(1, StdOrdering::Relaxed);
            }
        }
        LATE.fetch_add(usize::from(!rest.is_empty()), StdOrdering::Relaxed);
        seen.extend(rest.iter().flatten().map(number));
        seen.sort();
        assert_eq!(seen, [1, 2]);
    });
    let counts = [&HELD, &LATE, &GIVEN].map(|c| c.load(StdOrdering::Relaxed));
    eprintln!(
        "remark saw a held buffer, entries left after the stop, given back before: {counts:?}"
    );
    assert!(counts.iter().all(|&n| n > 0), "{counts:?}");
}

/// A queue whose bound is one buffer (one marker, one per thread, none
/// held): the mutator's second hand-off is refused while the first waits,
/// and it waits (back-pressure) until the coordinator has taken the first;
/// or the remark closes the queue meanwhile and the waiter returns. Every
/// entry is taken exactly once, and nothing waits forever.
#[test]
fn back_pressure_waits_for_the_coordinator_or_the_remark() {
    static REFUSED: StdAtomic = StdAtomic::new(0);
    static WOKEN_BY_TAKE: StdAtomic = StdAtomic::new(0);
    static QUEUED_AT_ONCE: StdAtomic = StdAtomic::new(0);
    model(|| {
        let q = loom::sync::Arc::new(Queue::new(1, 1, Vec::new()));
        // Held by the mutator thread below: the bound is 1 × (1 + 0),
        // the buffer being counted only once it is acquired.
        let coordinator = {
            let q = q.clone();
            thread::spawn(move || coordinate(&q))
        };
        let mutator = {
            let q = q.clone();
            thread::spawn(move || {
                let mut b = Vec::with_capacity(1);
                let mut refused = false;
                for i in [1, 2, 3] {
                    b.push(r(i));
                    loop {
                        match q.hand_off(&mut b) {
                            HandOff::Queued => break,
                            HandOff::Full { taken } => {
                                refused = true;
                                assert!(q.wait_room(taken, None));
                            }
                            HandOff::Dropped => unreachable!("not closed yet"),
                        }
                    }
                }
                refused
            })
        };
        let refused = mutator.join().unwrap();
        q.stop();
        let (mut seen, _) = coordinator.join().unwrap();
        seen.extend(q.close().unwrap().iter().flatten().map(number));
        seen.sort();
        assert_eq!(seen, [1, 2, 3]);
        let totals = q.totals();
        assert_eq!(totals.refused > 0, refused);
        REFUSED.fetch_add(usize::from(refused), StdOrdering::Relaxed);
        WOKEN_BY_TAKE.fetch_add(
            usize::from(refused && totals.handed_off == 3),
            StdOrdering::Relaxed,
        );
        QUEUED_AT_ONCE.fetch_add(usize::from(!refused), StdOrdering::Relaxed);
    });
    let counts = [&REFUSED, &WOKEN_BY_TAKE, &QUEUED_AT_ONCE].map(|c| c.load(StdOrdering::Relaxed));
    eprintln!("refused and waited, then queued after a take, never refused: {counts:?}");
    assert!(counts.iter().all(|&n| n > 0), "{counts:?}");
}

/// The remark closes the queue while a mutator waits for room (a cycle
/// abandoned, or a protocol violation): the waiter returns, its hand-off
/// is dropped, and nothing hangs.
#[test]
fn closing_the_queue_releases_a_waiting_mutator() {
    static DROPPED: StdAtomic = StdAtomic::new(0);
    static WAITED: StdAtomic = StdAtomic::new(0);
    model(|| {
        let q = loom::sync::Arc::new(Queue::new(1, 1, Vec::new()));
        let mut full = vec![r(1)];
        assert_eq!(q.hand_off(&mut full), HandOff::Queued);
        let mutator = {
            let q = q.clone();
            thread::spawn(move || {
                let mut b = vec![r(2)];
                let mut waited = false;
                loop {
                    match q.hand_off(&mut b) {
                        HandOff::Queued => unreachable!("nobody takes"),
                        HandOff::Full { taken } => {
                            waited = true;
                            q.wait_room(taken, None);
                        }
                        HandOff::Dropped => return waited,
                    }
                }
            })
        };
        q.abandon();
        let waited = mutator.join().unwrap();
        DROPPED.fetch_add(1, StdOrdering::Relaxed);
        WAITED.fetch_add(usize::from(waited), StdOrdering::Relaxed);
    });
    let counts = [&DROPPED, &WAITED].map(|c| c.load(StdOrdering::Relaxed));
    eprintln!("dropped, after waiting: {counts:?}");
    assert!(counts.iter().all(|&n| n > 0), "{counts:?}");
}
