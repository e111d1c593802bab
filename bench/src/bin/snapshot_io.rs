//! Snapshot I/O figures:
//!
//! 1. resident memory of opening and marking a mapped snapshot: anonymous
//!    memory added beyond the mapped file pages, against the mark bitmap, for
//!    the parallel engine (all cores) and for the sequential oracle;
//! 2. generating N `random` objects in memory, and streamed to a file;
//! 3. `Snapshot::open` (map + full validation) throughput in GB/s, with the
//!    checksum's share.
//!
//! ```sh
//! cargo run --release -p stealmark-bench --bin snapshot_io -- [--objects 10000000] [--shape random] [--dir /tmp] [--runs 5]
//! ```

use std::path::PathBuf;
use std::time::{Duration, Instant};

use stealmark_heap::snapshot::format::file_checksum;
use stealmark_heap::{
    generate, generate_heap, mark_sequential, GenConfig, HeapGraph, MarkIndex, Shape, Snapshot,
    SnapshotWriter,
};
use stealmark_marker::{Marker, MarkerConfig};

struct Args {
    objects: u64,
    shape: Shape,
    dir: PathBuf,
    runs: usize,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        objects: 10_000_000,
        shape: Shape::Random,
        dir: std::env::temp_dir(),
        runs: 5,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--objects" => args.objects = value.parse().map_err(|e| format!("--objects: {e}"))?,
            "--shape" => args.shape = value.parse().map_err(|e| format!("--shape: {e}"))?,
            "--dir" => args.dir = value.into(),
            "--runs" => args.runs = value.parse().map_err(|e| format!("--runs: {e}"))?,
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(args)
}

/// A field of `/proc/self/status`, in bytes (Linux only; 0 elsewhere).
fn status_bytes(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches(" kB").parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1 << 20) as f64
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = parse_args()?;
    let config = GenConfig::new(args.shape, args.objects);
    let path = args
        .dir
        .join(format!("stealmark-snapshot-io-{}.smh", std::process::id()));
    println!(
        "shape {} objects {} runs {} file {}",
        args.shape,
        args.objects,
        args.runs,
        path.display()
    );

    // 1. Stream the heap to the file (the writer holds a 1 MiB buffer, the
    //    generator a few bytes per object at most).
    let t = Instant::now();
    let mut w = SnapshotWriter::create(&path)?;
    generate(&config, &mut w)?;
    let file_len = w.finish()?.file_len;
    let first_stream = t.elapsed();

    // 2. Resident memory of opening and marking the mapped snapshot, measured
    //    first, before any large allocation of this process could be reused.
    let anon0 = status_bytes("RssAnon");
    let file0 = status_bytes("RssFile");
    let snap = Snapshot::open(&path)?;
    let anon1 = status_bytes("RssAnon");
    let file1 = status_bytes("RssFile");
    let view = snap.view();
    // The engine first, kept alive while the oracle runs, so that neither
    // reuses memory the other freed.
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut marker = Marker::new(MarkerConfig::with_workers(workers))?;
    let t = Instant::now();
    let engine_objects = marker.mark(&view, snap.roots()).stats.objects_marked();
    let engine_mark = t.elapsed();
    let anon_engine = status_bytes("RssAnon");
    let t = Instant::now();
    let result = mark_sequential(&view, snap.roots());
    let mark = t.elapsed();
    let anon2 = status_bytes("RssAnon");
    assert_eq!(engine_objects, result.objects, "engine and oracle disagree");
    let bitmap = view.mark_index_bound().div_ceil(64) as u64 * 8;
    let roots = std::mem::size_of_val(snap.roots()) as u64;
    println!(
        "mapped file pages resident after open: +{:.1} MiB (file {:.1} MiB)",
        mib(file1.saturating_sub(file0)),
        mib(file_len)
    );
    println!(
        "anonymous memory: open +{:.1} MiB (roots {:.3} MiB); mark bitmap {:.1} MiB",
        mib(anon1.saturating_sub(anon0)),
        mib(roots),
        mib(bitmap)
    );
    println!(
        "  engine, {workers} workers: marking +{:.1} MiB (bitmap, deques, private stacks, weak list, \
         thread stacks) in {:.2} s",
        mib(anon_engine.saturating_sub(anon1)),
        engine_mark.as_secs_f64()
    );
    println!(
        "  oracle: marking +{:.1} MiB (bitmap, depth-first stack, weak list)",
        mib(anon2.saturating_sub(anon_engine))
    );
    println!(
        "oracle marked {} objects ({:.1} MiB) in {:.2} s",
        result.objects,
        mib(result.bytes),
        mark.as_secs_f64()
    );
    drop(result);
    drop(marker);
    drop(snap);

    // 3. Generation in memory and streamed to the file, alternated.
    let mut in_memory = Vec::new();
    let mut streamed = vec![first_stream];
    for run in 0..args.runs.max(1) {
        let t = Instant::now();
        let g = generate_heap(&config)?;
        in_memory.push(t.elapsed());
        drop(g);
        if run + 1 < args.runs {
            let t = Instant::now();
            let mut w = SnapshotWriter::create(&path)?;
            generate(&config, &mut w)?;
            w.finish()?;
            streamed.push(t.elapsed());
        }
    }
    let gen_mem = median(in_memory);
    let gen_file = median(streamed);
    println!(
        "generate in memory: {:.2} s   streamed to file: {:.2} s   file {:.1} MiB",
        gen_mem.as_secs_f64(),
        gen_file.as_secs_f64(),
        mib(file_len)
    );

    // 4. Open + validate (page cache warm after the write), and the checksum
    //    alone over the same mapped bytes.
    let mut opens = Vec::new();
    let mut crcs = Vec::new();
    for _ in 0..args.runs.max(1) {
        let t = Instant::now();
        let snap = Snapshot::open(&path)?;
        opens.push(t.elapsed());
        let t = Instant::now();
        let bytes = snap
            .bytes()
            .ok_or("a read-only snapshot exposes its bytes")?;
        std::hint::black_box(file_checksum(bytes));
        crcs.push(t.elapsed());
    }
    let gbps = |d: Duration| file_len as f64 / d.as_secs_f64() / 1e9;
    let best = *opens.iter().min().expect("one run");
    let open = median(opens);
    let crc = median(crcs);
    println!(
        "open+validate: median {:.3} s = {:.2} GB/s, best {:.2} GB/s   (checksum alone {:.3} s = {:.2} GB/s)",
        open.as_secs_f64(),
        gbps(open),
        gbps(best),
        crc.as_secs_f64(),
        gbps(crc)
    );
    std::fs::remove_file(&path)?;
    Ok(())
}
