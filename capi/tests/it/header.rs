//! `include/stealmark.h` against the Rust side: a C program compiled with
//! the system compiler prints the size and field offsets of every struct and
//! the value of every constant, and they must equal Rust's; the functions
//! the header declares must be the ones the library exports.

use std::collections::BTreeMap;
use std::mem::{offset_of, size_of};
use std::path::{Path, PathBuf};
use std::process::Command;

use stealmark_capi::*;

/// `(name, value)` for every size, offset and constant, as Rust sees them.
fn rust_side() -> BTreeMap<String, i128> {
    let mut m = BTreeMap::new();
    macro_rules! layout {
        ($t:ident { $($f:ident),* }) => {
            m.insert(format!("sizeof {}", stringify!($t)), size_of::<$t>() as i128);
            $(m.insert(format!("offsetof {}.{}", stringify!($t), stringify!($f)), offset_of!($t, $f) as i128);)*
        };
    }
    layout!(sm_slot {
        index,
        target,
        key,
        kind,
        reserved
    });
    layout!(sm_object_model {
        ctx,
        size_bytes,
        slot_count,
        scan_slots,
        type_count,
        type_id,
        prefetch,
        prefetch_off,
        prefetch_bytes,
        heap_start,
        heap_end,
        prefetch_slots,
        scan_clamps_end
    });
    layout!(sm_mark_byte {
        offset,
        test_mask,
        test_value,
        set_bits,
        clear_bits
    });
    layout!(sm_marks {
        mode,
        prefetch_distance,
        header,
        ctx,
        try_mark,
        is_marked,
        dense_index,
        dense_bound
    });
    layout!(sm_refs {
        refs,
        len,
        ctx,
        chunk_count,
        visit_chunk,
        scan_chunk
    });
    layout!(sm_soft_policy {
        mode,
        reserved,
        ctx,
        keep
    });
    layout!(sm_config {
        workers,
        count_live,
        deque,
        solo_below
    });
    layout!(sm_collection {
        model,
        marks,
        roots,
        finalizable,
        soft
    });
    layout!(sm_report { marker, collection });
    layout!(sm_weak_ref {
        holder,
        slot,
        target,
        key,
        kind,
        reserved
    });
    layout!(sm_stats {
        pause_ns,
        live_objects,
        live_bytes,
        roots,
        cleared,
        to_finalize,
        soft_kept,
        ephemerons,
        items_stolen,
        steps,
        workers,
        workers_used,
        reserved
    });
    layout!(sm_type_count { objects, bytes });
    layout!(sm_cycle_options {
        backpressure,
        parallel_steps,
        buffers_per_thread,
        assist_budget,
        black_allocation,
        solo
    });
    layout!(sm_remark {
        roots,
        finalizable,
        soft
    });
    m.insert("sizeof sm_ref".into(), size_of::<sm_ref>() as i128);
    m.insert("sizeof sm_status".into(), size_of::<sm_status>() as i128);
    macro_rules! consts {
        ($($c:ident),*) => { $(m.insert(stringify!($c).to_owned(), $c as i128);)* };
    }
    consts!(
        SM_OK,
        SM_ERR_NULL,
        SM_ERR_CONFIG,
        SM_ERR_MARKS,
        SM_ERR_CONTRACT,
        SM_ERR_PANIC,
        SM_ERR_POISONED,
        SM_ERR_BUSY,
        SM_ERR_STALE,
        SM_ERR_RANGE,
        SM_ERR_RESOURCE,
        SM_ERR_ENDED,
        SM_BACKPRESSURE_ASSIST,
        SM_BACKPRESSURE_WAIT,
        SM_SLOT_STRONG,
        SM_SLOT_SOFT,
        SM_SLOT_WEAK,
        SM_SLOT_PHANTOM,
        SM_SLOT_EPHEMERON,
        SM_SLOT_STRONG_LEAF,
        SM_SCAN_FAILED,
        SM_SLOTS_ALL,
        SM_MARKS_HEADER_BYTE,
        SM_MARKS_CALLBACKS,
        SM_MARKS_SIDE_BITMAP,
        SM_SOFT_CLEAR_ALL,
        SM_SOFT_KEEP_ALL,
        SM_SOFT_ASK
    );
    m
}

/// The C program that prints the same table, from the Rust table's keys.
fn c_program(keys: &BTreeMap<String, i128>) -> String {
    let mut c = String::from(
        "#include <stdio.h>\n#include <stddef.h>\n#include \"stealmark.h\"\nint main(void) {\n",
    );
    for key in keys.keys() {
        let expr = if let Some(t) = key.strip_prefix("sizeof ") {
            format!("(long long)sizeof({t})")
        } else if let Some(tf) = key.strip_prefix("offsetof ") {
            let (t, f) = tf.split_once('.').unwrap();
            format!("(long long)offsetof({t}, {f})")
        } else if key == "SM_SCAN_FAILED" || key == "SM_SLOTS_ALL" {
            // SIZE_MAX does not fit a long long: compare it as size_t.
            format!("(long long)({key} == (size_t)-1 ? -1 : 0)")
        } else {
            format!("(long long)({key})")
        };
        c.push_str(&format!("  printf(\"{key}=%lld\\n\", {expr});\n"));
    }
    c.push_str("  return 0;\n}\n");
    c
}

fn include_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("include")
}

/// The system C compiler, if there is one.
fn cc() -> Option<String> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    Command::new(&cc).arg("--version").output().ok()?;
    Some(cc)
}

#[test]
fn struct_layouts_and_constants_match_the_header() {
    let Some(cc) = cc() else {
        eprintln!("SKIPPED: no C compiler (set CC)");
        return;
    };
    let mut want = rust_side();
    let dir = tempdir();
    let src = dir.join("layout.c");
    std::fs::write(&src, c_program(&want)).unwrap();
    let exe = dir.join("layout");
    let out = Command::new(&cc)
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-I"])
        .arg(include_dir())
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new(&exe).output().unwrap();
    assert!(out.status.success());
    let got: BTreeMap<String, i128> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (k, v) = l.split_once('=').unwrap();
            (k.to_owned(), v.parse().unwrap())
        })
        .collect();
    want.insert("SM_SCAN_FAILED".into(), -1);
    want.insert("SM_SLOTS_ALL".into(), -1);
    assert_eq!(got, want);
}

#[test]
fn the_header_declares_exactly_the_exported_functions() {
    let header = std::fs::read_to_string(include_dir().join("stealmark.h")).unwrap();
    // Declarations: a line that starts a prototype `... sm_name(`.
    let mut declared: Vec<&str> = header
        .lines()
        .filter(|l| !l.starts_with(' ') && !l.starts_with('/') && !l.starts_with('#'))
        .filter_map(|l| {
            let name = l.split('(').next()?.rsplit([' ', '*']).next()?;
            (name.starts_with("sm_") && l.contains('(')).then_some(name)
        })
        .collect();
    declared.sort();
    // Taking each function's address checks that it exists with this name.
    let exported: [(&str, usize); 31] = [
        ("sm_collect", sm_collect as *const () as usize),
        ("sm_config_init", sm_config_init as *const () as usize),
        ("sm_cycle_finish", sm_cycle_finish as *const () as usize),
        ("sm_cycle_free", sm_cycle_free as *const () as usize),
        ("sm_cycle_is_quiet", sm_cycle_is_quiet as *const () as usize),
        (
            "sm_cycle_options_init",
            sm_cycle_options_init as *const () as usize,
        ),
        ("sm_cycle_start", sm_cycle_start as *const () as usize),
        (
            "sm_cycle_start_background",
            sm_cycle_start_background as *const () as usize,
        ),
        ("sm_cycle_step", sm_cycle_step as *const () as usize),
        (
            "sm_cycle_stop_background",
            sm_cycle_stop_background as *const () as usize,
        ),
        (
            "sm_cycle_wait_quiet",
            sm_cycle_wait_quiet as *const () as usize,
        ),
        ("sm_last_error", sm_last_error as *const () as usize),
        ("sm_marker_free", sm_marker_free as *const () as usize),
        ("sm_marker_new", sm_marker_new as *const () as usize),
        (
            "sm_marker_run_tasks",
            sm_marker_run_tasks as *const () as usize,
        ),
        (
            "sm_mutator_allocate_black",
            sm_mutator_allocate_black as *const () as usize,
        ),
        ("sm_mutator_detach", sm_mutator_detach as *const () as usize),
        ("sm_mutator_flush", sm_mutator_flush as *const () as usize),
        ("sm_mutator_free", sm_mutator_free as *const () as usize),
        ("sm_mutator_new", sm_mutator_new as *const () as usize),
        (
            "sm_mutator_pre_write",
            sm_mutator_pre_write as *const () as usize,
        ),
        ("sm_mutator_rescan", sm_mutator_rescan as *const () as usize),
        ("sm_mutator_shade", sm_mutator_shade as *const () as usize),
        ("sm_report_cleared", sm_report_cleared as *const () as usize),
        (
            "sm_report_cleared_by_worker",
            sm_report_cleared_by_worker as *const () as usize,
        ),
        (
            "sm_report_is_marked",
            sm_report_is_marked as *const () as usize,
        ),
        (
            "sm_report_live_by_type",
            sm_report_live_by_type as *const () as usize,
        ),
        ("sm_report_stats", sm_report_stats as *const () as usize),
        (
            "sm_report_to_finalize",
            sm_report_to_finalize as *const () as usize,
        ),
        ("sm_report_workers", sm_report_workers as *const () as usize),
        ("sm_status_name", sm_status_name as *const () as usize),
    ];
    assert!(exported.iter().all(|e| e.1 != 0));
    let exported: Vec<&str> = exported.iter().map(|e| e.0).collect();
    assert_eq!(declared, exported);
}

/// A fresh directory under the target directory for this test's files.
fn tempdir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("header-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
