//! `sm_marker_run_tasks`: every task runs once, on the marker's threads;
//! misuse (NULL arguments, a marker a cycle holds, a call from inside a
//! task) comes back as a status; the last report stays readable.

use crate::common;

use std::collections::HashSet;
use std::ffi::c_void;
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use std::sync::Mutex;
use std::thread::ThreadId;

use common::*;
use stealmark_capi::*;

/// What the tasks of one call record: runs per index, and the threads.
struct Runs {
    counts: Vec<AtomicU32>,
    threads: Mutex<HashSet<ThreadId>>,
}

unsafe extern "C" fn count_run(ctx: *mut c_void, index: usize) {
    // SAFETY: `ctx` is the `Runs` of the call, alive across it.
    let runs = unsafe { &*(ctx as *const Runs) };
    runs.counts[index].fetch_add(1, Ordering::Relaxed);
    runs.threads
        .lock()
        .unwrap()
        .insert(std::thread::current().id());
    // Long enough that one thread cannot take every task before the others
    // wake.
    std::thread::sleep(std::time::Duration::from_millis(2));
}

fn run(marker: *mut sm_marker, tasks: usize) -> (sm_status, Runs) {
    let runs = Runs {
        counts: (0..tasks).map(|_| AtomicU32::new(0)).collect(),
        threads: Mutex::new(HashSet::new()),
    };
    // SAFETY: a live marker; `runs` outlives the call.
    let s = unsafe {
        sm_marker_run_tasks(
            marker,
            tasks,
            Some(count_run),
            &runs as *const Runs as *mut c_void,
        )
    };
    (s, runs)
}

#[test]
fn every_task_runs_once_and_several_threads_share_them() {
    for workers in [1u32, 2, 4] {
        let marker = new_marker(&config(workers, 0));
        for tasks in [0, 1, 7, 64] {
            let (s, runs) = run(marker, tasks);
            assert_eq!(s, SM_OK, "{}", last_error());
            for (i, c) in runs.counts.iter().enumerate() {
                assert_eq!(
                    c.load(Ordering::Relaxed),
                    1,
                    "task {i} of {tasks}, {workers} workers"
                );
            }
            let threads = runs.threads.lock().unwrap().len();
            if workers == 1 || tasks <= 1 {
                assert!(
                    threads <= 1,
                    "{threads} threads for {tasks} tasks at {workers} workers"
                );
            } else if tasks >= 7 {
                assert!(
                    threads >= 2,
                    "{threads} threads for {tasks} tasks at {workers} workers"
                );
            }
        }
        // SAFETY: a live marker, no call running.
        unsafe { sm_marker_free(marker) };
    }
}

#[test]
fn the_last_report_stays_readable() {
    let heap = Heap::random(300, 9);
    heap.clear_marks();
    let marker = new_marker(&config(2, 0));
    let mut report = sm_report::default();
    let s = collect(
        &heap,
        marker,
        &c_model(&heap),
        &c_marks(&heap, SM_MARKS_HEADER_BYTE),
        &mut report,
    );
    assert_eq!(s, SM_OK, "{}", last_error());
    let stats = |report: &sm_report| {
        let mut stats = sm_stats::default();
        // SAFETY: valid pointers.
        let s = unsafe { sm_report_stats(report, &mut stats) };
        assert_eq!(s, SM_OK, "{}", last_error());
        (stats.live_objects, stats.pause_ns)
    };
    let before = stats(&report);
    assert!(before.0 > 0);
    assert_eq!(run(marker, 8).0, SM_OK, "{}", last_error());
    assert_eq!(stats(&report), before);
    // SAFETY: a live marker, no call running.
    unsafe { sm_marker_free(marker) };
}

/// A task that calls its own marker again, and the status it got.
struct Reenter {
    marker: *mut sm_marker,
    status: AtomicI32,
}

unsafe extern "C" fn reenter(ctx: *mut c_void, _: usize) {
    // SAFETY: `ctx` is the `Reenter` of the call, alive across it.
    let r = unsafe { &*(ctx as *const Reenter) };
    // SAFETY: a live marker; the nested call is refused before any task.
    let s = unsafe { sm_marker_run_tasks(r.marker, 1, Some(count_run), std::ptr::null_mut()) };
    r.status.store(s, Ordering::Relaxed);
}

#[test]
fn misuse_comes_back_as_statuses() {
    let marker = new_marker(&config(2, 0));
    // SAFETY: NULL arguments are what is tested; the marker is live.
    unsafe {
        assert_eq!(
            sm_marker_run_tasks(
                std::ptr::null_mut(),
                1,
                Some(count_run),
                std::ptr::null_mut()
            ),
            SM_ERR_NULL
        );
        assert_eq!(last_error(), "marker is NULL");
        assert_eq!(
            sm_marker_run_tasks(marker, 3, None, std::ptr::null_mut()),
            SM_ERR_NULL
        );
        assert_eq!(last_error(), "task is NULL");
        assert_eq!(
            sm_marker_run_tasks(marker, 0, None, std::ptr::null_mut()),
            SM_OK
        );
    }
    let ctx = Reenter {
        marker,
        status: AtomicI32::new(SM_OK),
    };
    // SAFETY: a live marker; `ctx` outlives the call.
    let s = unsafe {
        sm_marker_run_tasks(
            marker,
            1,
            Some(reenter),
            &ctx as *const Reenter as *mut c_void,
        )
    };
    assert_eq!(s, SM_OK, "{}", last_error());
    assert_eq!(ctx.status.load(Ordering::Relaxed), SM_ERR_BUSY);

    // A marker that a mark cycle holds refuses, and serves again once the
    // cycle is freed.
    let heap = Heap::random(200, 4);
    heap.clear_marks();
    let model = c_model(&heap);
    let marks = c_marks(&heap, SM_MARKS_HEADER_BYTE);
    let root_addrs = heap.root_addrs();
    let roots = c_refs(&root_addrs);
    let mut cycle = std::ptr::null_mut();
    // SAFETY: valid pointers; the heap outlives the cycle.
    let s = unsafe { sm_cycle_start(marker, &model, &marks, &roots, std::ptr::null(), &mut cycle) };
    assert_eq!(s, SM_OK, "{}", last_error());
    let (s, runs) = run(marker, 4);
    assert_eq!(s, SM_ERR_BUSY);
    assert!(last_error().contains("mark cycle"), "{}", last_error());
    assert!(runs.counts.iter().all(|c| c.load(Ordering::Relaxed) == 0));
    // SAFETY: the cycle is live and no call on it runs.
    unsafe { sm_cycle_free(cycle) };
    assert_eq!(run(marker, 4).0, SM_OK, "{}", last_error());
    // SAFETY: a live marker, no call running.
    unsafe { sm_marker_free(marker) };
}
