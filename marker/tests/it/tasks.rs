//! `Marker::run_tasks`: the runtime's own parallel work on the marker's
//! threads. Every task runs exactly once, on more than one thread when
//! there are several workers, a task's panic reaches the caller after the
//! others ran, and the marker then marks as before.

use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use stealmark_heap::{generate_heap, mark_sequential, GenConfig, HeapGraph, Shape};
use stealmark_marker::{Marker, MarkerConfig};

#[test]
fn every_task_runs_exactly_once() {
    for workers in [1, 2, 5] {
        let mut marker = Marker::new(MarkerConfig::with_workers(workers)).expect("valid config");
        for tasks in [0, 1, 2, 3, 17, 200] {
            let runs: Vec<AtomicU32> = (0..tasks).map(|_| AtomicU32::new(0)).collect();
            marker.run_tasks(tasks, |i| {
                runs[i].fetch_add(1, Ordering::Relaxed);
            });
            for (i, r) in runs.iter().enumerate() {
                let n = r.load(Ordering::Relaxed);
                assert_eq!(
                    n, 1,
                    "task {i} of {tasks} at {workers} workers ran {n} times"
                );
            }
        }
    }
}

/// Two tasks that wait for each other finish only if two threads run
/// them: the tasks are really spread over the workers.
#[test]
fn tasks_run_on_more_than_one_thread() {
    let mut marker = Marker::new(MarkerConfig::with_workers(2)).expect("valid config");
    let started = AtomicUsize::new(0);
    let threads = Mutex::new(HashSet::new());
    marker.run_tasks(2, |_| {
        threads.lock().unwrap().insert(std::thread::current().id());
        started.fetch_add(1, Ordering::SeqCst);
        let deadline = Instant::now() + Duration::from_secs(60);
        while started.load(Ordering::SeqCst) < 2 {
            assert!(Instant::now() < deadline, "the other task never started");
            std::thread::yield_now();
        }
    });
    assert_eq!(threads.into_inner().unwrap().len(), 2);
}

#[test]
fn a_panicking_task_is_raised_after_the_others_ran() {
    let g = generate_heap(&GenConfig::new(Shape::Random, 2_000).seed(5)).expect("generator");
    let view = g.heap.view();
    let expected = mark_sequential(&view, g.heap.roots()).objects;
    for workers in [1, 3] {
        let mut marker = Marker::new(MarkerConfig::with_workers(workers)).expect("valid config");
        let ran = AtomicUsize::new(0);
        let result = catch_unwind(AssertUnwindSafe(|| {
            marker.run_tasks(10, |i| {
                if i == 4 {
                    panic!("task 4 fails");
                }
                ran.fetch_add(1, Ordering::Relaxed);
            })
        }));
        let payload = result.expect_err("the panic reaches the caller");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"task 4 fails"));
        assert_eq!(ran.load(Ordering::Relaxed), 9, "{workers} workers");
        let marked = marker.mark(&view, g.heap.roots()).bitmap.count();
        assert_eq!(marked as u64, expected, "{workers} workers");
    }
}
