//! `stealmark import`: convert a V8 heap snapshot or a Java HPROF heap dump
//! into a stealmark snapshot, streaming both files.
//!
//! The snapshot is written to `OUT.partial` beside `OUT` and renamed when
//! complete, so a failed import never leaves a truncated file under the name
//! asked for.

use std::cell::{Cell, RefCell};
use std::fs;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Instant;

use clap::{Args, Subcommand};
use stealmark_heap::{mark_sequential, ArenaLayout, HeapGraph, Snapshot, SnapshotWriter};
use stealmark_import::{self as import, ImportOptions, ImportSummary, InputFile};

use crate::error::{CliError, CliResult};
use crate::heapfile::partial_path;
use crate::output::{self, outln};
use crate::progress::Progress;

/// Arguments of `stealmark import`.
#[derive(Args)]
#[command(after_help = "Examples:\n  \
    stealmark import v8 app.heapsnapshot -o app.smk\n  \
    stealmark import hprof java_pid4242.hprof.gz -o java.smk --reachable\n\n\
    `stealmark import v8 --help` and `stealmark import hprof --help` say how each format maps \
    to objects and slots. Snapshots record the runtime's object sizes, and use the compressed \
    layout (4-byte references) whenever the heap fits in 32 GiB; --wide writes 8-byte references.")]
pub struct ImportArgs {
    #[command(subcommand)]
    format: Format,
}

/// The input formats.
#[derive(Subcommand)]
enum Format {
    /// Import a V8 `.heapsnapshot` (Node.js `v8.writeHeapSnapshot`, Chrome
    /// DevTools), optionally gzip-compressed.
    #[command(after_help = "Example:\n  \
        stealmark import v8 app.heapsnapshot -o app.smk\n\n\
        Every node is an object of its self_size, every edge a slot (`weak` edges weak), \
        node 0 the root.")]
    V8(Files),
    /// Import a Java HPROF heap dump (`JAVA PROFILE 1.0.1` or `1.0.2`, as
    /// written by jmap, jcmd GC.heap_dump or HotSpotDiagnosticMXBean), or a
    /// gzip-compressed one.
    #[command(after_help = "Example:\n  \
        stealmark import hprof java_pid4242.hprof.gz -o java.smk --reachable\n\n\
        Classes, instances and arrays are objects; fields (superclasses' included), \
        class, super, loader, signers, protection domain, constant-pool and static references \
        are slots; the referent of a SoftReference, WeakReference or PhantomReference is soft, \
        weak or phantom, a FinalReference's referent is finalizable (and phantom); ROOT_* records \
        name the roots; references to objects missing from the dump are dropped and counted; \
        sizes estimate HotSpot's layout (compressed oops for the compressed layout).")]
    Hprof(Files),
}

/// The input and output files.
#[derive(Args)]
struct Files {
    /// The heap dump to read (gzip compression is detected from its bytes).
    #[arg(value_name = "IN")]
    input: PathBuf,
    /// The snapshot file to write.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    output: PathBuf,
    /// Afterwards, open the snapshot and count the objects reachable from
    /// the roots through strong slots (the sequential oracle).
    #[arg(long)]
    reachable: bool,
    /// Write 8-byte references (the wide layout) [default: compressed, 4-byte
    /// references, whenever the heap fits in 32 GiB].
    #[arg(long, conflicts_with = "compressed")]
    wide: bool,
    /// Write 4-byte references, and fail if the heap does not fit in 32 GiB
    /// [default: compressed when it fits, else wide].
    #[arg(long)]
    compressed: bool,
}

/// Runs `stealmark import`.
pub fn run(args: ImportArgs) -> CliResult {
    let (files, v8) = match args.format {
        Format::V8(f) => (f, true),
        Format::Hprof(f) => (f, false),
    };
    let start = Instant::now();
    let (summary, read) = convert(&files, v8).map_err(|e| CliError::failed("import", e))?;
    let seconds = start.elapsed().as_secs_f64();
    let written = fs::metadata(&files.output).map_or(0, |m| m.len());
    print_summary(&files, v8, &summary, read, written, seconds)?;
    if files.reachable {
        let snap = Snapshot::open(&files.output).map_err(|e| CliError::failed("import", e))?;
        let oracle = mark_sequential(&snap.view(), snap.roots());
        outln!(
            "  reachable     {:>14}  ({} of the heap, strong slots only)",
            output::count(oracle.objects),
            output::bytes(oracle.bytes)
        )?;
    }
    Ok(())
}

/// Writes the snapshot; returns what was imported and the bytes of the
/// input file.
fn convert(files: &Files, v8: bool) -> Result<(ImportSummary, u64), Box<dyn std::error::Error>> {
    if files.output.file_name().is_none() {
        return Err(format!("-o {} is not a file name", files.output.display()).into());
    }
    let passes = if v8 { 1 } else { 3 };
    let input = InputFile::open(&files.input)
        .map_err(|e| format!("cannot open {}: {e}", files.input.display()))?;
    let len = input.len();
    // One bar over all passes, in bytes of the file on disk.
    let progress = Progress::new(len * passes, "import", "bytes");
    let pass_base = Rc::new(Cell::new(0u64));
    let partial = partial_path(&files.output, ".partial");
    // A compressed HPROF dump is decompressed once, into a file beside the
    // output that the second and third passes read (a leftover of a killed
    // run is ours to replace).
    let input = if v8 {
        input
    } else {
        let spill = partial_path(&files.output, ".dump.partial");
        let _ = fs::remove_file(&spill);
        input.spill_to(spill)
    };
    let input = {
        let (set, base) = (RefCell::new(progress.setter()), Rc::clone(&pass_base));
        input.on_progress(move |done| (set.borrow_mut())(base.get() + done))
    };

    let options = ImportOptions::layout(if files.wide {
        Some(ArenaLayout::Wide)
    } else if files.compressed {
        Some(ArenaLayout::Compressed)
    } else {
        None
    });
    let result = (|| -> Result<ImportSummary, Box<dyn std::error::Error>> {
        let mut writer = SnapshotWriter::create(&partial)
            .map_err(|e| format!("cannot create {}: {e}", partial.display()))?;
        let cannot = |e| format!("cannot import {}: {e}", files.input.display());
        let summary = if v8 {
            let reader = input
                .reader()
                .map_err(|e| format!("cannot read {}: {e}", files.input.display()))?;
            import::v8_with(reader, &mut writer, &options).map_err(cannot)?
        } else {
            let mut pass_no = 0u64;
            let mut pass = |name| {
                pass_base.set(pass_no * len);
                pass_no += 1;
                progress.message(format!("pass {pass_no}/3: {name}"));
            };
            import::hprof_with(&input, &mut writer, &mut pass, &options).map_err(cannot)?
        };
        writer
            .finish()
            .map_err(|e| format!("cannot write {}: {e}", partial.display()))?;
        fs::rename(&partial, &files.output)
            .map_err(|e| format!("cannot create {}: {e}", files.output.display()))?;
        Ok(summary)
    })();
    // Deletes the spill file, if any.
    drop(input);
    progress.finish();
    if result.is_err() {
        let _ = fs::remove_file(&partial);
    }
    result.map(|summary| (summary, len))
}

/// Prints what was imported and anything dropped.
fn print_summary(
    files: &Files,
    v8: bool,
    s: &ImportSummary,
    read: u64,
    written: u64,
    seconds: f64,
) -> CliResult {
    let rate = |bytes: u64| bytes as f64 / 1e6 / seconds.max(1e-9);
    // For a compressed file, the rate of the dump data says how fast the
    // importer is; the file's own rate is given beside it.
    let (size, speed) = if s.input_bytes != read {
        (
            format!(
                "{}, {} decompressed",
                output::bytes(read),
                output::bytes(s.input_bytes)
            ),
            format!(
                "{:.0} MB/s of dump data, {:.0} MB/s of the compressed file",
                rate(s.input_bytes),
                rate(read)
            ),
        )
    } else {
        (output::bytes(read), format!("{:.0} MB/s", rate(read)))
    };
    let format = if v8 {
        "V8 heap snapshot"
    } else {
        "HPROF heap dump"
    };
    outln!(
        "imported {format} {} ({size}) into {} ({}) in {seconds:.1} s, {speed}",
        files.input.display(),
        files.output.display(),
        output::bytes(written),
    )?;
    let line =
        |what: &str, n: u64, note: &str| outln!("  {what:<13} {:>14}{note}", output::count(n));
    line("objects", s.objects, &format!("  ({} layout)", s.layout))?;
    line(
        "references",
        s.references,
        &format!(
            "  ({} weak, {} soft, {} phantom)",
            output::count(s.weak_references),
            output::count(s.soft_references),
            output::count(s.phantom_references)
        ),
    )?;
    line("finalizable", s.finalizable, "")?;
    line("roots", s.roots, "")?;
    line("types", s.types, "")?;
    if v8 {
        line("dropped", 0, "")
    } else {
        line(
            "dropped",
            s.dropped_references,
            "  references to objects missing from the dump",
        )?;
        line("", s.dropped_roots, "  roots missing from the dump")?;
        line(
            "",
            s.undecoded_instances,
            "  instances of classes missing from the dump (fields not scanned)",
        )
    }
}
