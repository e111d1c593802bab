//! `stealmark import`: convert a V8 heap snapshot or a Java HPROF heap dump
//! into a stealmark snapshot, streaming both files.
//!
//! The snapshot is written to `OUT.partial` beside `OUT` and renamed when
//! complete, so a failed or interrupted import never leaves a truncated file
//! under the name asked for. Before reading, `import` checks that the input
//! is not the output (see [`outpath`]) and is not plainly of the other
//! format. The input may be a pipe, a FIFO or standard input (`-`): it is
//! opened once, and the bytes the format check looks at are read again by
//! the importer (an HPROF stream is copied beside the output for the
//! importer's later passes).

mod checks;

use std::cell::{Cell, RefCell};
use std::fs;
use std::io;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Instant;

use clap::{Args, Subcommand};
use stealmark_heap::{
    mark_sequential, oracle, ArenaLayout, HeapGraph, OracleInput, SnapshotWriter, SoftRefs,
};
use stealmark_import::{
    self as import, ImportError, ImportOptions, ImportSummary, InputFile, Malformed,
};

use self::checks::{check_input, check_special_output, check_stream_output, open_input, STDIN};
use crate::error::{CliError, CliResult};
use crate::heapfile;
use crate::outpath;
use crate::output::{self, outln};
use crate::partial::PartialFile;
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
        Every node is an object of its self_size, every edge a slot (`weak` and `shortcut` edges \
        weak), node 0 the root; WeakMap and WeakSet entries are ephemerons (the value lives while \
        both the table and the key do).")]
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
    /// The heap dump to read (gzip compression is detected from its bytes):
    /// a file, a pipe or FIFO, or `-` for standard input.
    #[arg(value_name = "IN")]
    input: PathBuf,
    /// The snapshot file to write.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    output: PathBuf,
    /// Afterwards, open the snapshot and count the objects strongly
    /// reachable (from the roots through strong slots alone) and those live
    /// under the runtime contract (also what the finalizable objects reach
    /// once resurrected; soft references cleared), as `stealmark info` does.
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
    /// Replace OUT even if it is not a stealmark snapshot (OUT is never
    /// allowed to be the input).
    #[arg(long)]
    force: bool,
}

/// Runs `stealmark import`.
pub fn run(args: ImportArgs) -> CliResult {
    let (files, v8) = match args.format {
        Format::V8(f) => (f, true),
        Format::Hprof(f) => (f, false),
    };
    if files.output.as_os_str() == STDIN {
        return Err(CliError::advised(
            "-o - would write the snapshot to standard output, which `import` cannot do: a \
             snapshot is written beside its name and renamed when complete",
            "give the snapshot a file name, such as -o heap.smk",
        ));
    }
    // Only a regular input is opened by the check: opening a FIFO to
    // compare it would take its writer's data or block.
    let regular = fs::metadata(&files.input).is_ok_and(|m| m.is_file());
    if !regular && files.input.as_os_str() != STDIN {
        check_stream_output(&files.input, &files.output)?;
    }
    check_special_output(&files.output)?;
    let input_path = regular.then_some(files.input.as_path());
    outpath::check_snapshot_output(&files.output, input_path, files.force)?;
    let input = open_input(&files.input)?;
    check_input(&input, &files.input, v8)?;
    let start = Instant::now();
    let (summary, read) = convert(input, &files, v8)?;
    let seconds = start.elapsed().as_secs_f64();
    let written = fs::metadata(&files.output).map_or(0, |m| m.len());
    print_summary(&files, v8, &summary, read, written, seconds)?;
    if files.reachable {
        let snap = heapfile::open(&files.output)?;
        let view = snap.view();
        let strong = mark_sequential(&view, snap.roots());
        let input = OracleInput {
            roots: snap.roots(),
            finalizable: snap.finalizable(),
            soft_refs: SoftRefs::ClearAll,
        };
        let live = oracle(&view, &input);
        outln!(
            "  strongly reachable {:>9}  ({}: from the roots through strong slots alone)",
            output::count(strong.objects),
            output::bytes(strong.bytes)
        )?;
        outln!(
            "  live          {:>14}  ({}: under the runtime contract, finalizable objects \
             resurrected, soft references cleared)",
            output::count(live.objects),
            output::bytes(live.bytes)
        )?;
    }
    Ok(())
}

/// The format's name on the command line.
fn format_name(v8: bool) -> &'static str {
    if v8 {
        "v8"
    } else {
        "hprof"
    }
}

/// The error of a failed import of `input` into `output`, with what to do.
fn import_failure(e: ImportError, files: &Files, v8: bool) -> CliError {
    let input = files.input.display();
    let truncated = match &e {
        ImportError::Malformed { kind, .. } => matches!(kind, Malformed::UnexpectedEof { .. }),
        ImportError::Read { source, .. } => source.kind() == io::ErrorKind::UnexpectedEof,
        ImportError::Sink(_) | ImportError::TooLarge { .. } => false,
    };
    if truncated {
        return CliError::advised(
            format!("{input} is truncated: {e}"),
            "the dump ends early (an interrupted dump or copy?); dump or copy it again completely",
        );
    }
    match e {
        ImportError::Malformed { .. } => CliError::advised(
            format!("cannot import {input}: {e}"),
            if v8 {
                "check that it is a complete V8 .heapsnapshot (Node.js v8.writeHeapSnapshot, Chrome DevTools); Java heap dumps are imported with `stealmark import hprof`"
            } else {
                "check that it is a complete HPROF heap dump (jmap, jcmd GC.heap_dump); V8 heap snapshots are imported with `stealmark import v8`"
            },
        ),
        ImportError::Read { .. } => CliError::advised(
            format!("cannot read {input}: {e}"),
            "check the file and its permissions",
        ),
        ImportError::TooLarge { layout, .. } => CliError::advised(
            format!("cannot import {input}: {e}"),
            if layout == stealmark_heap::ArenaLayout::Compressed {
                "the heap does not fit in 32 GiB with 4-byte references; import it with --wide"
            } else {
                "the heap is larger than any snapshot can hold"
            },
        ),
        ImportError::Sink(_) => CliError::advised(
            format!("cannot write {}: {e}", files.output.display()),
            "check the free space and permissions of its directory, or write elsewhere with -o",
        ),
    }
}

/// Writes the snapshot; returns what was imported and the bytes of the
/// input read (of the file on disk; of the stream's first pass).
fn convert(input: InputFile, files: &Files, v8: bool) -> CliResult<(ImportSummary, u64)> {
    let passes = if v8 { 1 } else { 3 };
    let len = input.len();
    // The bytes the first pass has read, for a stream whose size is known
    // only once read.
    let (streamed, first_pass) = (Rc::new(Cell::new(0u64)), Rc::new(Cell::new(true)));
    // One bar over all passes, in bytes of the file on disk.
    let progress = Progress::new(len * passes, "import", "bytes");
    let pass_base = Rc::new(Cell::new(0u64));
    let partial = PartialFile::beside(&files.output, ".partial");
    // A compressed or streamed HPROF dump is read once, into a file beside
    // the output that the second and third passes read (a leftover of a
    // killed run is ours to replace). The `InputFile` deletes it when dropped, and
    // the guard when a signal ends the import.
    let spill = PartialFile::beside(&files.output, ".dump.partial");
    let input = if v8 {
        input
    } else {
        let _ = fs::remove_file(spill.path());
        input.spill_to(spill.path())
    };
    let input = {
        let (set, base) = (RefCell::new(progress.setter()), Rc::clone(&pass_base));
        let (seen, first) = (Rc::clone(&streamed), Rc::clone(&first_pass));
        input.on_progress(move |done| {
            if first.get() {
                seen.set(done);
            }
            (set.borrow_mut())(base.get() + done)
        })
    };

    let options = ImportOptions::layout(if files.wide {
        Some(ArenaLayout::Wide)
    } else if files.compressed {
        Some(ArenaLayout::Compressed)
    } else {
        None
    });
    let output = &files.output;
    let mut writer = SnapshotWriter::create(partial.path())
        .map_err(|e| CliError::failed(format!("creating {}", partial.path().display()), e))?;
    let summary = if v8 {
        let reader = input.reader().map_err(|e| {
            import_failure(
                ImportError::Read {
                    offset: 0,
                    source: e,
                },
                files,
                v8,
            )
        })?;
        import::v8_with(reader, &mut writer, &options).map_err(|e| import_failure(e, files, v8))?
    } else {
        let mut pass_no = 0u64;
        let mut pass = |name| {
            pass_base.set(pass_no * len);
            first_pass.set(pass_no == 0);
            pass_no += 1;
            progress.message(format!("pass {pass_no}/3: {name}"));
        };
        import::hprof_with(&input, &mut writer, &mut pass, &options)
            .map_err(|e| import_failure(e, files, v8))?
    };
    writer
        .finish()
        .map_err(|e| CliError::failed(format!("writing {}", output.display()), e))?;
    // Deletes the spill file, if any.
    drop(input);
    progress.finish();
    partial
        .commit(output)
        .map_err(|e| CliError::io("create", output, e))?;
    // A stream's size is what its first pass read.
    Ok((summary, if len == 0 { streamed.get() } else { len }))
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
            "  ({} weak, {} soft, {} phantom, {} ephemeron)",
            output::count(s.weak_references),
            output::count(s.soft_references),
            output::count(s.phantom_references),
            output::count(s.ephemeron_references)
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
