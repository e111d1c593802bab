//! Statistics of a mark phase: per-worker counters (always on), a sampled
//! timeline of deque lengths, and optional timestamped spans.

use stealmark_model::{ObjRef, WeakRef};

use crate::config::MarkerConfig;

/// Counters kept by one worker during one mark phase. Times are in
/// nanoseconds since the start of the phase or as durations.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct WorkerStats {
    /// Mark bits this worker set (objects it turned grey), roots included.
    pub objects_marked: u64,
    /// Objects this worker scanned (turned black). An array scanned in chunks
    /// counts once, for the worker that first claimed it. With a deque
    /// that may deliver an item twice (`idempotent`) an object may be
    /// scanned twice, so the total may exceed the objects marked
    /// ([`MarkStats::duplicate_scans`]); with the other deques they are
    /// equal.
    pub objects_scanned: u64,
    /// With a deque that may deliver an item twice: scans by this worker of
    /// objects with non-strong slots (or large arrays) that another scan
    /// had already claimed, whose records it dropped (the first claim keeps
    /// them, so each slot is judged once). Always 0 with the other deques.
    pub duplicate_holders: u64,
    /// Reference slots visited, null ones excluded.
    pub slots_scanned: u64,
    /// Weak references found (reported, not traced).
    pub weak_refs: u64,
    /// Chunks of large arrays scanned.
    pub array_chunks: u64,
    /// Pushes onto the worker's own deque.
    pub pushes: u64,
    /// Pops from the worker's own deque.
    pub pops: u64,
    /// Steal attempts (single or half).
    pub steal_attempts: u64,
    /// Steal attempts that took something.
    pub steal_successes: u64,
    /// Steal attempts that lost a race.
    pub steal_aborts: u64,
    /// Items moved by successful steals.
    pub items_stolen: u64,
    /// Compare-and-swap operations by the owner and the thief (attempted).
    pub cas: u64,
    /// Items moved into the shared overflow storage.
    pub overflow_pushes: u64,
    /// Items taken back from the shared overflow storage.
    pub overflow_takes: u64,
    /// Balancing attempts made while the worker still had work.
    pub balance_attempts: u64,
    /// Parked workers this worker woke because it had surplus work.
    pub wakeups_sent: u64,
    /// Times this worker parked.
    pub parks: u64,
    /// Time spent with work in hand (marking and scanning).
    pub busy_ns: u64,
    /// Time spent looking for work (stealing) while still counted active.
    pub steal_ns: u64,
    /// Time spent in the termination protocol (counted idle).
    pub idle_ns: u64,
    /// Times this worker entered the termination protocol.
    pub termination_attempts: u64,
    /// Time from this worker's last termination entry to the end of its mark phase.
    pub termination_ns: u64,
    /// When this worker finished scanning its last object.
    pub last_work_ns: u64,
    /// Bytes of the objects this worker scanned (their `size_bytes`): its
    /// share of the live bytes. With a deque that may deliver an item
    /// twice, of the objects it marked instead (each is marked once).
    pub live_bytes: u64,
    /// The [`footprint_bytes`](stealmark_model::ObjectModel::footprint_bytes)
    /// of the objects this worker scanned.
    pub live_footprint_bytes: u64,
    /// References this worker read from root chunks.
    pub roots: u64,
    /// Root chunks this worker claimed.
    pub root_chunks: u64,
    /// Time spent marking roots (claiming chunks and marking their
    /// references, not tracing from them).
    pub root_ns: u64,
    /// Entries of the write barrier's buffers (and root snapshot) shaded
    /// in a mark cycle's `satb` and `increment` steps.
    pub satb_entries: u64,
    /// Holders scanned again in a mark cycle's `satb` and `increment`
    /// steps (the incremental-update barrier's backward entries).
    pub rescans: u64,
    /// Ephemeron slots this worker found in marked objects.
    pub ephemerons: u64,
    /// Ephemeron entries this worker put in the key index (their key was
    /// unmarked after the strong closure, or when found later).
    pub ephemerons_registered: u64,
    /// Values this worker took from the key index because it marked their
    /// key.
    pub ephemerons_released: u64,
    /// Ephemeron slots this worker judged live (key marked at the end).
    pub ephemeron_values_traced: u64,
    /// Soft referents this worker kept alive by the soft-reference policy.
    pub soft_kept: u64,
    /// Slots this worker reported cleared.
    pub cleared: u64,
    /// Objects this worker reported to finalize.
    pub finalized: u64,
}

/// One sample of a worker's deque length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct TimelineSample {
    /// Nanoseconds since the start of the mark phase.
    pub t_ns: u64,
    /// Items in the worker's deque (as the owner sees it) plus its prefetch FIFO.
    pub len: u32,
}

/// What a worker was doing during a [`Span`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
#[non_exhaustive]
pub enum SpanKind {
    /// Scanning objects with work in hand.
    Marking,
    /// Looking for work while counted active.
    Stealing,
    /// Counted idle, spinning, yielding or parked, waiting for work.
    Idle,
    /// From the worker's last idle entry to the end of the phase.
    Termination,
}

impl SpanKind {
    /// The name used in trace files.
    pub const fn name(self) -> &'static str {
        match self {
            SpanKind::Marking => "marking",
            SpanKind::Stealing => "stealing",
            SpanKind::Idle => "idle",
            SpanKind::Termination => "termination",
        }
    }
}

/// A timestamped interval of one worker's activity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Span {
    /// The activity.
    pub kind: SpanKind,
    /// Start, nanoseconds since the start of the mark phase.
    pub start_ns: u64,
    /// End, nanoseconds since the start of the mark phase.
    pub end_ns: u64,
}

/// The records one worker keeps besides its counters. Their buffers are
/// reused from one mark phase to the next.
#[derive(Debug, Clone, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct WorkerRecord {
    /// The counters.
    pub stats: WorkerStats,
    /// Sampled deque lengths (decimated to at most [`WorkerRecord::MAX_SAMPLES`]).
    pub timeline: Vec<TimelineSample>,
    /// Activity spans, when the configuration asks for them (at most
    /// [`WorkerRecord::MAX_SPANS`]; later ones are counted in `spans_dropped`).
    pub spans: Vec<Span>,
    /// Spans not recorded because the buffer was full.
    pub spans_dropped: u64,
    /// Every soft, weak, phantom and ephemeron slot this worker found in a
    /// marked object, in the order found (a mark cycle moves those with
    /// marked referents to the front; not serialised: they are heap
    /// addresses, meaningless outside the process).
    #[cfg_attr(feature = "serde", serde(skip))]
    pub weak_refs: Vec<WeakRef>,
    /// The slots this worker judged cleared (J1 and J2 of the runtime
    /// contract), as indices into `weak_refs` (the judging copies no
    /// record; [`Report::cleared`](crate::Report::cleared) gives the
    /// records).
    #[cfg_attr(feature = "serde", serde(skip))]
    pub cleared: Vec<usize>,
    /// The finalizable objects this worker found unreachable (and
    /// resurrected); no object is in two workers' lists.
    #[cfg_attr(feature = "serde", serde(skip))]
    pub to_finalize: Vec<ObjRef>,
    /// Per type id, the objects this worker scanned (empty when the heap has
    /// no types).
    #[cfg_attr(feature = "serde", serde(skip))]
    pub live_by_type: Vec<TypeCount>,
}

impl WorkerRecord {
    /// Timeline samples kept per worker; when full, every other sample is
    /// dropped and the sampling interval doubles.
    pub const MAX_SAMPLES: usize = 2048;
    /// Spans kept per worker.
    pub const MAX_SPANS: usize = 1 << 16;

    /// Empties the record for a new collection of a heap with `types` types,
    /// keeping every buffer.
    pub(crate) fn clear(&mut self, types: usize) {
        self.stats = WorkerStats::default();
        self.timeline.clear();
        self.spans.clear();
        self.spans_dropped = 0;
        self.weak_refs.clear();
        self.cleared.clear();
        self.to_finalize.clear();
        self.live_by_type.clear();
        self.live_by_type.resize(types, TypeCount::default());
    }
}

/// Statistics and records of one collection (every step of it).
#[derive(Debug, Clone, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct MarkStats {
    /// The configuration that produced them.
    pub config: Option<MarkerConfig>,
    /// Per-worker records, indexed by worker.
    pub workers: Vec<WorkerRecord>,
    /// Wall time of the whole call (`mark`, `collect`, ...): every step,
    /// with its hand-off and hand-back, and the bookkeeping between.
    pub pause_ns: u64,
    /// Wall time from the first hand-off to the workers to the end of the
    /// last step.
    pub phase_ns: u64,
    /// From the last object scanned (by any worker) to the end of the first
    /// step (the strong closure from the roots): the termination latency.
    pub termination_latency_ns: u64,
    /// Roots read (every reference of every root chunk).
    pub roots: u64,
    /// Objects marked: the live objects.
    pub live_objects: u64,
    /// Scans beyond one per live object: objects scanned minus objects
    /// marked, summed over the workers. Only a deque that may deliver an
    /// item twice (`idempotent`) makes them; neither the deque nor the
    /// worker can tell which of its scans was the second (that would take
    /// the read-modify-write such a deque saves), so the figure is the
    /// collection's, not a worker's.
    pub duplicate_scans: u64,
    /// Bytes of the objects marked (their `size_bytes`): the live bytes.
    pub live_bytes: u64,
    /// The live objects'
    /// [`footprint_bytes`](stealmark_model::ObjectModel::footprint_bytes)
    /// (their storage in a heap snapshot; the live bytes for a runtime's
    /// heap).
    pub live_footprint_bytes: u64,
    /// Per type id, the live objects and bytes (empty when the heap has no
    /// types): the workers' counts, summed.
    pub live_by_type: Vec<TypeCount>,
    /// The steps of the collection, in order (see [`StepKind`]).
    pub steps: Vec<StepRecord>,
}

/// Live objects and bytes of one type.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct TypeCount {
    /// Objects.
    pub objects: u64,
    /// Bytes (the sum of their `size_bytes`).
    pub bytes: u64,
}

/// A step of a collection: one parallel job of every worker, with its own
/// termination. A collection runs `roots`; then, until nothing changes,
/// `register` and `resolve` (while ephemerons wait for unmarked keys) and
/// `soft` (while soft slots wait for the policy's answer); then `finalize`,
/// with `register` and `resolve` again if needed; then `judge`. A step with
/// nothing to do does not run. A mark cycle runs `satb`, `increment` and
/// `preclean` steps before its remark, which runs the same sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
#[non_exhaustive]
pub enum StepKind {
    /// Mark the roots, chunk by chunk, and trace (the strong closure; soft
    /// slots too when every soft referent is kept).
    Roots,
    /// Register the ephemerons found waiting for their keys in the key
    /// index (nothing is marked).
    Register,
    /// Trace the values of the waiting ephemerons whose keys were marked by
    /// then, and trace, releasing the values of every key marked (the
    /// rounds of ephemeron resolution). After many rounds, one that
    /// registers ephemerons as it finds them instead.
    Resolve,
    /// Ask the soft-reference policy about the soft slots found since the
    /// last time, mark the referents it keeps, and trace.
    Soft,
    /// Judge soft and weak slots (J1), take the unreachable finalizable
    /// objects, resurrect them, and trace.
    Finalize,
    /// Judge the remaining slots (J2): phantom and ephemeron slots, and soft
    /// and weak slots found since J1.
    Judge,
    /// A mark cycle's step of every worker (in the background, or at the
    /// remark): shade the entries of the write barrier's buffers (and, first,
    /// the roots snapshotted at the start), and trace.
    Satb,
    /// An incremental step of a mark cycle, on the caller's thread alone:
    /// shade some pending entries and scan up to a budget of objects.
    Increment,
    /// A mark cycle's step between background marking steps (increments do
    /// the same with what is left of their budget): set aside the
    /// non-strong slots found so far whose referents (ephemerons: keys) are
    /// marked, which no judging can clear, so that the remark judges only
    /// the others (nothing is marked).
    Preclean,
}

/// One step of a collection, as it ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct StepRecord {
    /// What the step did.
    pub kind: StepKind,
    /// Whether newly marked objects were checked against the ephemeron key
    /// index (every marking step after the first `register`, unless every
    /// entry registered by then was released).
    pub watch: bool,
    /// Wall time, from the hand-off to the workers to the last one's return.
    pub ns: u64,
}

/// Ephemeron figures of a collection (see [`crate::Report::ephemerons`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct EphemeronStats {
    /// Ephemeron slots found in marked objects.
    pub pairs: u64,
    /// Entries that waited in the key index.
    pub registered: u64,
    /// Values released from the key index by the marking of their keys.
    pub released: u64,
    /// Ephemeron slots whose key was marked at the end (the live entries;
    /// their values were traced through them).
    pub values_traced: u64,
    /// `resolve` steps: the rounds of ephemeron resolution.
    pub rounds: u64,
}

impl MarkStats {
    /// The sum of all workers' counters (time fields summed too, except
    /// `last_work_ns`, which is the maximum).
    pub fn total(&self) -> WorkerStats {
        let mut t = WorkerStats::default();
        for r in &self.workers {
            let s = &r.stats;
            t.objects_marked += s.objects_marked;
            t.objects_scanned += s.objects_scanned;
            t.duplicate_holders += s.duplicate_holders;
            t.slots_scanned += s.slots_scanned;
            t.weak_refs += s.weak_refs;
            t.array_chunks += s.array_chunks;
            t.pushes += s.pushes;
            t.pops += s.pops;
            t.steal_attempts += s.steal_attempts;
            t.steal_successes += s.steal_successes;
            t.steal_aborts += s.steal_aborts;
            t.items_stolen += s.items_stolen;
            t.cas += s.cas;
            t.overflow_pushes += s.overflow_pushes;
            t.overflow_takes += s.overflow_takes;
            t.balance_attempts += s.balance_attempts;
            t.wakeups_sent += s.wakeups_sent;
            t.parks += s.parks;
            t.busy_ns += s.busy_ns;
            t.steal_ns += s.steal_ns;
            t.idle_ns += s.idle_ns;
            t.termination_attempts += s.termination_attempts;
            t.termination_ns += s.termination_ns;
            t.last_work_ns = t.last_work_ns.max(s.last_work_ns);
            t.live_bytes += s.live_bytes;
            t.live_footprint_bytes += s.live_footprint_bytes;
            t.roots += s.roots;
            t.root_chunks += s.root_chunks;
            t.satb_entries += s.satb_entries;
            t.rescans += s.rescans;
            t.root_ns += s.root_ns;
            t.ephemerons += s.ephemerons;
            t.ephemerons_registered += s.ephemerons_registered;
            t.ephemerons_released += s.ephemerons_released;
            t.ephemeron_values_traced += s.ephemeron_values_traced;
            t.soft_kept += s.soft_kept;
            t.cleared += s.cleared;
            t.finalized += s.finalized;
        }
        t
    }

    /// The longest root phase of any worker: the time until every root was
    /// marked.
    pub fn root_phase_ns(&self) -> u64 {
        self.workers
            .iter()
            .map(|r| r.stats.root_ns)
            .max()
            .unwrap_or(0)
    }

    /// Objects marked in total.
    pub fn objects_marked(&self) -> u64 {
        self.workers.iter().map(|r| r.stats.objects_marked).sum()
    }

    /// Load balance: the maximum over the mean of objects scanned per worker
    /// (1.0 is perfect; 0.0 when nothing was scanned).
    pub fn balance(&self) -> f64 {
        let n = self.workers.len() as f64;
        let total: u64 = self.workers.iter().map(|r| r.stats.objects_scanned).sum();
        let max = self
            .workers
            .iter()
            .map(|r| r.stats.objects_scanned)
            .max()
            .unwrap_or(0);
        if total == 0 {
            0.0
        } else {
            max as f64 / (total as f64 / n)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn balance() {
        let mut st = MarkStats::default();
        assert_eq!(st.balance(), 0.0);
        for n in [10, 30] {
            let mut r = WorkerRecord::default();
            r.stats.objects_scanned = n;
            st.workers.push(r);
        }
        assert!((st.balance() - 1.5).abs() < 1e-9);
    }
}
