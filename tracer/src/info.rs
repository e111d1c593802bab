//! `stealmark info`: validate a snapshot and report what it holds.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use serde::Serialize;
use stealmark_heap::{
    mark_sequential, oracle, HeapGraph, ObjectModel, OracleInput, SlotKind, SoftRefs,
};

use crate::error::CliResult;
use crate::heapfile;
use crate::output::{self, outln, Align, Format, Table};

/// Arguments of `stealmark info`.
#[derive(Args)]
#[command(after_help = "Examples:\n  \
    stealmark info heap.smk\n  \
    stealmark info heap.smk --json | jq .reachable_objects\n\n\
    Opening validates the whole file (header, sections, every reference, checksum); \
    a damaged file is reported with the section and byte offset that is wrong. \
    Two counts of what survives: `live` follows the runtime contract (the roots, then the \
    finalizable objects resurrected with what they reach; soft references cleared), \
    `strongly reachable` follows strong slots from the roots alone (and WeakMap values whose \
    keys it reaches; nothing resurrected). Bytes are runtime sizes where the file records them.")]
pub struct InfoArgs {
    /// Snapshot to inspect.
    pub file: PathBuf,
    /// Print one JSON object instead of the report.
    #[arg(long)]
    pub json: bool,
}

/// What `info` reports (the JSON document of `info --json`).
#[derive(Serialize, Debug, Default, PartialEq)]
struct InfoReport {
    file: String,
    file_bytes: u64,
    format_version: u32,
    /// `wide` or `compressed`.
    layout: &'static str,
    objects: u64,
    roots: u64,
    finalizable: u64,
    /// Reference slots of all objects, null ones included.
    reference_slots: u64,
    strong_slots: u64,
    weak_slots: u64,
    soft_slots: u64,
    phantom_slots: u64,
    ephemeron_slots: u64,
    null_slots: u64,
    /// Arena bytes: the objects' headers, slots and payloads.
    bytes: u64,
    /// Whether the file records the runtime's object sizes.
    runtime_sizes: bool,
    /// The objects' sizes as the runtime counts them (the arena bytes of
    /// the objects when the file records none).
    runtime_bytes: u64,
    type_names: u64,
    max_slots: u64,
    max_object_bytes: u64,
    /// Objects live under the runtime contract: the roots' closure, then
    /// the finalizable objects resurrected with theirs, soft references
    /// cleared (the JSON name `reachable_objects` is kept for scripts).
    #[serde(rename = "reachable_objects")]
    live_objects: u64,
    /// Their bytes (runtime sizes where the file records them).
    #[serde(rename = "reachable_bytes")]
    live_bytes: u64,
    /// Objects strongly reachable: from the roots through strong slots (and
    /// ephemeron values whose keys are), nothing resurrected, soft
    /// references cleared.
    strongly_reachable_objects: u64,
    /// Their bytes.
    strongly_reachable_bytes: u64,
    validate_ms: f64,
}

impl InfoReport {
    /// The reference slots of each kind, null ones last, named as the
    /// report names them.
    fn slots_by_kind(&self) -> [(&'static str, u64); 6] {
        [
            ("strong", self.strong_slots),
            ("weak", self.weak_slots),
            ("soft", self.soft_slots),
            ("phantom", self.phantom_slots),
            ("ephemeron", self.ephemeron_slots),
            ("null", self.null_slots),
        ]
    }
}

/// Runs `stealmark info`.
pub fn run(args: InfoArgs) -> CliResult {
    let start = Instant::now();
    let snapshot = heapfile::open(&args.file)?;
    let validate_ms = start.elapsed().as_secs_f64() * 1e3;
    let heap = snapshot.view();
    let roots = snapshot.roots();
    let mut report = InfoReport {
        file: args.file.display().to_string(),
        file_bytes: std::fs::metadata(&args.file).map_or(0, |m| m.len()),
        format_version: snapshot.header().version,
        layout: heap.layout().name(),
        objects: heap.object_count(),
        roots: roots.len() as u64,
        finalizable: snapshot.finalizable().len() as u64,
        bytes: heap.arena_bytes(),
        runtime_sizes: heap.format().runtime_sizes,
        runtime_bytes: heap.runtime_bytes(),
        type_names: snapshot.type_count() as u64,
        validate_ms,
        ..InfoReport::default()
    };
    for obj in heap.objects() {
        let slots = heap.slot_count(obj) as u64;
        report.reference_slots += slots;
        report.max_slots = report.max_slots.max(slots);
        report.max_object_bytes = report.max_object_bytes.max(heap.size_bytes(obj) as u64);
        let mut non_null = 0;
        heap.scan_slots(obj, 0..usize::MAX, |_, _, kind| {
            non_null += 1;
            match kind {
                SlotKind::Strong | SlotKind::StrongLeaf => report.strong_slots += 1,
                SlotKind::Weak => report.weak_slots += 1,
                SlotKind::Soft => report.soft_slots += 1,
                SlotKind::Phantom => report.phantom_slots += 1,
                SlotKind::Ephemeron { .. } => report.ephemeron_slots += 1,
            }
        });
        report.null_slots += slots - non_null;
    }
    let input = OracleInput {
        roots,
        finalizable: snapshot.finalizable(),
        soft_refs: SoftRefs::ClearAll,
    };
    let live = oracle(&heap, &input);
    report.live_objects = live.objects;
    report.live_bytes = live.bytes;
    let strong = mark_sequential(&heap, roots);
    report.strongly_reachable_objects = strong.objects;
    report.strongly_reachable_bytes = strong.bytes;

    if args.json {
        output::print_json(&report)
    } else {
        print_report(&report)
    }
}

fn print_report(r: &InfoReport) -> CliResult {
    outln!(
        "{}: valid stealmark snapshot, {} on disk (validated in {:.1} ms)",
        r.file,
        output::bytes(r.file_bytes),
        r.validate_ms
    )?;
    let mut t = Table::new([("", Align::Left), ("", Align::Left)]);
    let percent = |part: u64, whole: u64| {
        if whole == 0 {
            0.0
        } else {
            100.0 * part as f64 / whole as f64
        }
    };
    let runtime = if r.runtime_sizes {
        format!(
            "{} ({} B) as the runtime counts them",
            output::bytes(r.runtime_bytes),
            output::count(r.runtime_bytes)
        )
    } else {
        "not recorded (sizes are arena sizes)".to_string()
    };
    let rows = [
        (
            "format",
            format!("version {}, {} layout", r.format_version, r.layout),
        ),
        ("objects", output::count(r.objects)),
        ("roots", output::count(r.roots)),
        ("finalizable", output::count(r.finalizable)),
        (
            "reference slots",
            format!(
                "{} ({})",
                output::count(r.reference_slots),
                output::named(r.slots_by_kind().map(|(k, n)| (k, output::count(n))), ", ")
            ),
        ),
        (
            "bytes",
            format!(
                "{} ({} B of arena)",
                output::bytes(r.bytes),
                output::count(r.bytes)
            ),
        ),
        ("runtime bytes", runtime),
        ("type names", output::count(r.type_names)),
        (
            "largest object",
            format!(
                "{} slots, {}",
                output::count(r.max_slots),
                output::bytes(r.max_object_bytes)
            ),
        ),
        (
            "live",
            format!(
                "{} objects ({:.1}%), {} ({:.1}%): under the runtime contract \
                 (roots, then finalizable objects resurrected; soft references cleared)",
                output::count(r.live_objects),
                percent(r.live_objects, r.objects),
                output::bytes(r.live_bytes),
                percent(r.live_bytes, r.runtime_bytes)
            ),
        ),
        (
            "strongly reachable",
            format!(
                "{} objects ({:.1}%), {} ({:.1}%): from the roots through strong slots alone",
                output::count(r.strongly_reachable_objects),
                percent(r.strongly_reachable_objects, r.objects),
                output::bytes(r.strongly_reachable_bytes),
                percent(r.strongly_reachable_bytes, r.runtime_bytes)
            ),
        ),
    ];
    for (k, v) in rows {
        t.push(vec![k.to_string(), v]);
    }
    // Skip the empty header and its rule.
    for line in t.render(Format::Table).lines().skip(2) {
        outln!("  {line}")?;
    }
    Ok(())
}
