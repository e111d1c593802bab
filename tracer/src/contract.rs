//! The runtime contract's outputs in `stealmark mark`: weak-slot clearing,
//! ephemerons, finalization, live bytes (runtime and arena sizes) and the
//! per-type live histogram, taken from the engine's report (nothing walks
//! the heap after the pause); and `--verify`'s comparison of them with the
//! sequential oracle.

use serde::Serialize;
use stealmark_heap::{HeapGraph, OracleResult, SlotKind};
use stealmark_marker::model::SoftRefs;
use stealmark_marker::{Marking, TypeCount};
use strum::{Display, EnumString, IntoStaticStr, VariantNames};

use crate::error::CliResult;
use crate::output::{self, out, outln, Align, Format, Table};

/// `--soft-refs`: what the collection does with soft references.
#[derive(Display, EnumString, IntoStaticStr, VariantNames, Serialize)]
#[strum(serialize_all = "kebab-case")]
#[serde(into = "&'static str")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SoftRefsArg {
    /// `clear`: every soft referent that only soft references reach is
    /// cleared, as a runtime does under memory pressure.
    #[default]
    Clear,
    /// `keep`: every soft referent is kept and traced.
    Keep,
}

impl SoftRefsArg {
    /// The engine's and the oracle's policy.
    pub fn policy(self) -> SoftRefs<'static> {
        match self {
            SoftRefsArg::Clear => SoftRefs::ClearAll,
            SoftRefsArg::Keep => SoftRefs::KeepAll,
        }
    }
}

/// The contract's figures of one collection, as `mark --json` reports them
/// (flattened into the report).
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Contract {
    /// The soft-reference policy.
    pub soft_refs: SoftRefsArg,
    /// Bytes of the live objects: sizes as the runtime counted them where
    /// the file records them (`runtime_sizes`), else arena bytes.
    pub live_bytes: u64,
    /// Bytes the live objects take in the snapshot's arena.
    pub live_arena_bytes: u64,
    /// Whether the file records runtime sizes.
    pub runtime_sizes: bool,
    /// Non-strong slots (soft, weak, phantom, ephemeron) of live objects.
    pub weak: WeakFigures,
    /// Ephemeron entries of live tables.
    pub ephemerons: EphemeronFigures,
    /// Finalizable objects.
    pub finalizable: FinalizableFigures,
    /// Types with live objects.
    pub live_types: u64,
    /// The types with the most live bytes, most first (`--histogram N`
    /// entries, 20 by default), as `jmap -histo:live` lists them.
    pub live_by_type: Vec<TypeRow>,
}

/// Non-strong slots of live objects.
#[derive(Serialize, Debug, Clone, Copy, PartialEq, Eq)]
pub struct WeakFigures {
    /// Soft, weak, phantom and ephemeron slots found in live objects.
    pub slots: u64,
    /// The slots the runtime must clear (dead referent or key).
    pub cleared: u64,
}

/// Ephemeron entries.
#[derive(Serialize, Debug, Clone, Copy, PartialEq, Eq)]
pub struct EphemeronFigures {
    /// Entries (ephemeron slots) of live tables.
    pub pairs: u64,
    /// Entries whose key is live, so that their value was traced.
    pub values_traced: u64,
    /// Rounds of the engine's resolve step (`null` for the oracle, which
    /// has no rounds).
    pub rounds: Option<u64>,
}

/// Finalizable objects.
#[derive(Serialize, Debug, Clone, Copy, PartialEq, Eq)]
pub struct FinalizableFigures {
    /// Registrations in the file (an object may be registered twice).
    pub registered: u64,
    /// Registered objects found unreachable: their finalizers are due, and
    /// they were marked again with what they reach.
    pub resurrected: u64,
}

/// One line of the live histogram.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct TypeRow {
    /// The type id.
    pub type_id: u32,
    /// The type's name, if the file names it.
    pub name: Option<String>,
    /// Live objects of the type.
    pub objects: u64,
    /// Their bytes (runtime sizes where the file records them).
    pub bytes: u64,
}

/// The entries `live_by_type` has without `--histogram N`.
pub const DEFAULT_TOP: usize = 20;

impl Contract {
    /// The figures of the engine's collection `marking` of `heap`, with the
    /// `top` types of most live bytes.
    pub fn of_engine<G: HeapGraph>(
        marking: &Marking<'_>,
        heap: &G,
        soft_refs: SoftRefsArg,
        top: usize,
    ) -> Contract {
        let report = marking.report();
        let e = report.ephemerons();
        let counts: Vec<(u64, u64)> = report
            .live_by_type()
            .iter()
            .map(|&TypeCount { objects, bytes, .. }| (objects, bytes))
            .collect();
        Contract {
            soft_refs,
            live_bytes: report.live_bytes(),
            live_arena_bytes: report.live_footprint_bytes(),
            runtime_sizes: heap.view().format().runtime_sizes,
            weak: WeakFigures {
                slots: report.weak_refs().count() as u64,
                cleared: report.cleared().count() as u64,
            },
            ephemerons: EphemeronFigures {
                pairs: e.pairs,
                values_traced: e.values_traced,
                rounds: Some(e.rounds),
            },
            finalizable: FinalizableFigures {
                registered: heap.finalizable().len() as u64,
                resurrected: report.to_finalize().count() as u64,
            },
            live_types: counts.iter().filter(|c| c.0 > 0).count() as u64,
            live_by_type: histogram(heap, &counts, top),
        }
    }

    /// The figures of the oracle's result `o` for `heap`.
    pub fn of_oracle<G: HeapGraph>(
        o: &OracleResult,
        heap: &G,
        soft_refs: SoftRefsArg,
        top: usize,
    ) -> Contract {
        let pairs = o
            .weak_refs
            .iter()
            .filter(|w| matches!(w.kind, SlotKind::Ephemeron { .. }))
            .count() as u64;
        Contract {
            soft_refs,
            live_bytes: o.bytes,
            live_arena_bytes: o.footprint_bytes,
            runtime_sizes: heap.view().format().runtime_sizes,
            weak: WeakFigures {
                slots: o.weak_refs.len() as u64,
                cleared: o.cleared.len() as u64,
            },
            ephemerons: EphemeronFigures {
                pairs,
                values_traced: o.ephemeron_values_traced,
                rounds: None,
            },
            finalizable: FinalizableFigures {
                registered: heap.finalizable().len() as u64,
                resurrected: o.to_finalize.len() as u64,
            },
            live_types: o.live_by_type.iter().filter(|c| c.0 > 0).count() as u64,
            live_by_type: histogram(heap, &o.live_by_type, top),
        }
    }

    /// Whether the heap has anything the contract acts on: non-strong slots
    /// in live objects, or finalizable objects.
    fn has_contract_slots(&self) -> bool {
        self.weak.slots > 0 || self.finalizable.registered > 0
    }
}

/// The `top` types of most live bytes (then most objects, then lowest id)
/// among `counts` (objects, bytes per type id), with their names.
fn histogram<G: HeapGraph>(heap: &G, counts: &[(u64, u64)], top: usize) -> Vec<TypeRow> {
    let mut ids: Vec<usize> = (0..counts.len()).filter(|&t| counts[t].0 > 0).collect();
    ids.sort_by_key(|&t| {
        (
            std::cmp::Reverse(counts[t].1),
            std::cmp::Reverse(counts[t].0),
            t,
        )
    });
    ids.truncate(top);
    ids.into_iter()
        .map(|t| TypeRow {
            type_id: t as u32,
            name: heap.type_name(t as u32).map(str::to_owned),
            objects: counts[t].0,
            bytes: counts[t].1,
        })
        .collect()
}

/// What differs between the engine's collection and the oracle's, named
/// (empty when they agree): the marked set, the slots to clear, the
/// objects to finalize, the live objects, bytes, arena bytes and types,
/// the non-strong slots found and the live ephemerons.
pub fn differences(marking: &Marking<'_>, o: &OracleResult) -> Vec<&'static str> {
    let report = marking.report();
    let mut cleared: Vec<_> = report.cleared().copied().collect();
    cleared.sort_unstable();
    let mut to_finalize: Vec<_> = report.to_finalize().collect();
    to_finalize.sort_unstable();
    let by_type: Vec<(u64, u64)> = report
        .live_by_type()
        .iter()
        .map(|t| (t.objects, t.bytes))
        .collect();
    let checks = [
        ("marked set", *marking.bitmap == o.marked),
        ("cleared slots", cleared == o.cleared),
        ("objects to finalize", to_finalize == o.to_finalize),
        ("live objects", report.live_objects() == o.objects),
        ("live bytes", report.live_bytes() == o.bytes),
        (
            "live arena bytes",
            report.live_footprint_bytes() == o.footprint_bytes,
        ),
        ("live objects by type", by_type == o.live_by_type),
        (
            "non-strong slots",
            report.weak_refs().count() == o.weak_refs.len(),
        ),
        (
            "ephemeron values traced",
            report.ephemerons().values_traced == o.ephemeron_values_traced,
        ),
    ];
    checks
        .into_iter()
        .filter(|&(_, same)| !same)
        .map(|(what, _)| what)
        .collect()
}

/// The live bytes as the text report says them: `1.2 MiB`, or, with runtime
/// sizes, `1.2 MiB as the runtime counts them, 1.5 MiB in the arena`.
pub fn live_bytes_text(c: &Contract) -> String {
    if c.runtime_sizes {
        format!(
            "{} as the runtime counts them, {} in the arena",
            output::bytes(c.live_bytes),
            output::bytes(c.live_arena_bytes)
        )
    } else {
        output::bytes(c.live_bytes)
    }
}

/// Prints the contract's line of the text report (nothing for a heap with
/// only strong slots and nothing finalizable).
pub fn print_summary(c: &Contract) -> CliResult {
    if !c.has_contract_slots() {
        return Ok(());
    }
    let rounds = c.ephemerons.rounds.map_or_else(String::new, |r| {
        format!(", {}", output::counted(r, "round"))
    });
    outln!(
        "runtime contract (--soft-refs {}): {} non-strong slots, {} cleared; ephemerons: {} pairs, {} values traced{rounds}; finalizable: {} registered, {} resurrected",
        c.soft_refs,
        output::count(c.weak.slots),
        output::count(c.weak.cleared),
        output::count(c.ephemerons.pairs),
        output::count(c.ephemerons.values_traced),
        output::count(c.finalizable.registered),
        output::count(c.finalizable.resurrected)
    )
}

/// Prints the live histogram as `jmap -histo:live` does: rank, objects,
/// bytes and type, most bytes first, then the totals.
pub fn print_histogram(c: &Contract, live_objects: u64) -> CliResult {
    outln!(
        "\nlive objects by type ({} of {} types with live objects, most bytes first):",
        c.live_by_type.len(),
        c.live_types
    )?;
    let mut table = Table::new([
        ("num", Align::Right),
        ("#instances", Align::Right),
        ("#bytes", Align::Right),
        ("type", Align::Left),
    ]);
    for (i, row) in c.live_by_type.iter().enumerate() {
        table.push(vec![
            format!("{}:", i + 1),
            row.objects.to_string(),
            row.bytes.to_string(),
            row.name
                .clone()
                .unwrap_or_else(|| format!("type {}", row.type_id)),
        ]);
    }
    table.push(vec![
        "Total".into(),
        live_objects.to_string(),
        c.live_bytes.to_string(),
        String::new(),
    ]);
    out!("{}", table.render(Format::Table))
}
