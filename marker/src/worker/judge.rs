//! J1 and J2: the judging of non-strong slots (`docs/design.md`, "Records
//! and judging"). Each worker judges its own records, in parallel with the
//! others, into its own list of cleared slots.
//!
//! Judging looks only at what `found_weak` noted (`JudgeLists`): records
//! whose referent (ephemerons: key) was unmarked when found. J1 takes out of
//! the lists what it settles for good: the soft and weak records (judged
//! once), and the WeakMap entries whose key it finds marked. So J2 looks
//! only at phantom records, entries whose key was dead at J1, and what was
//! found since. The entries that waited for their keys are looked at only
//! when some registered entry was never released; otherwise every such key
//! is marked. When the lists are incomplete (a mark cycle's preclean
//! reordered the records), judging walks every record from `settled` on.

use stealmark_deques::WorkDeque;
use stealmark_model::{prefetch_read, MarkStore, ObjRef, ObjectModel, SlotKind, WeakRef};

use super::Worker;

/// How many listed records ahead of the one being judged the mark of the
/// object that decides a record is prefetched. The listed records are
/// scattered over a worker's records and their referents over the heap:
/// without the hints, each record costs two cache misses, one after the
/// other (`docs/benchmarks.md`, "Fourth attempt at (c)", for the
/// distances measured).
const AHEAD: usize = 16;
/// How many listed records ahead the record itself is prefetched (it must
/// be in cache by the time its referent's mark is prefetched).
const RECORDS_AHEAD: usize = 48;

/// The object whose mark decides record `r`: an ephemeron's key, else the
/// referent.
#[inline]
fn decider(r: &WeakRef) -> ObjRef {
    match r.kind {
        SlotKind::Ephemeron { key } => key,
        _ => r.target,
    }
}

/// Visits, in order, the records `refs[i - back]` for each `i` in `list`,
/// keeping in `list` the indices for which `visit(i - back, record)`
/// returns true. With `hint`, prefetches the records and the marks ahead.
fn sweep<H: ObjectModel, S: MarkStore<H>>(
    (heap, store, hint): (&H, &S, bool),
    refs: &[WeakRef],
    list: &mut Vec<u32>,
    back: usize,
    mut visit: impl FnMut(usize, &WeakRef) -> bool,
) {
    let mut kept = 0;
    for k in 0..list.len() {
        if hint {
            if let Some(r) = list
                .get(k + RECORDS_AHEAD)
                .and_then(|&i| refs.get(i as usize - back))
            {
                // A record may straddle two cache lines.
                let first: *const u8 = (r as *const WeakRef).cast();
                prefetch_read(first);
                prefetch_read(first.wrapping_add(std::mem::size_of::<WeakRef>() - 1));
            }
            if let Some(r) = list
                .get(k + AHEAD)
                .and_then(|&i| refs.get(i as usize - back))
            {
                store.prefetch(heap, decider(r));
            }
        }
        let i = list[k] as usize - back;
        if visit(i, &refs[i]) {
            list[kept] = list[k];
            kept += 1;
        }
    }
    list.truncate(kept);
}

impl<D: WorkDeque, H: ObjectModel, S: MarkStore<H>> Worker<'_, '_, D, H, S> {
    /// J1: the soft and weak slots found so far whose referents are not
    /// marked are cleared.
    pub(super) fn judge_weak(&mut self) {
        let (heap, store) = (self.phase.heap, self.phase.store);
        let marks = (heap, store, self.phase.config.prefetch > 0);
        let lists = &mut self.slot.contract.judged;
        let rec = &mut self.slot.record;
        let (refs, cleared) = (&rec.weak_refs, &mut rec.cleared);
        if lists.complete {
            // Soft and weak records are judged here, once; phantom ones
            // stay listed for J2.
            sweep(marks, refs, &mut lists.unsettled, 0, |_, r| match r.kind {
                SlotKind::Soft | SlotKind::Weak => {
                    if !store.is_marked(heap, r.target) {
                        cleared.push(*r);
                    }
                    false
                }
                _ => true,
            });
            if self.phase.step.all_released {
                // Every entry that waited has its key marked by now: each
                // one, and its key slot, lives for good.
                lists.pairs.clear();
                lists.entries.clear();
            } else {
                // A pair's key slot is cleared with its dead key; the
                // entries whose key is marked now live for good, and only
                // the others stay listed for J2.
                sweep(marks, refs, &mut lists.pairs, 1, |_, k| {
                    let dead = !store.is_marked(heap, k.target);
                    if dead {
                        cleared.push(*k);
                    }
                    dead
                });
            }
        } else {
            for r in &refs[self.slot.contract.settled..] {
                if matches!(r.kind, SlotKind::Soft | SlotKind::Weak)
                    && !store.is_marked(heap, r.target)
                {
                    cleared.push(*r);
                }
            }
        }
        self.slot.contract.j1_end = refs.len();
        rec.stats.cleared = cleared.len() as u64;
    }

    /// J2: phantom slots whose referents and ephemeron slots whose keys are
    /// not marked are cleared, and so are the soft and weak slots found
    /// since J1 (all of them, when there was no J1) whose referents are not
    /// marked. Counts the live ephemeron entries.
    pub(super) fn judge_rest(&mut self) {
        let (heap, store) = (self.phase.heap, self.phase.store);
        let marks = (heap, store, self.phase.config.prefetch > 0);
        let j1 = self.slot.contract.j1_end;
        let dead = |i: usize, r: &WeakRef| match r.kind {
            SlotKind::Soft | SlotKind::Weak => i >= j1 && !store.is_marked(heap, r.target),
            SlotKind::Phantom => !store.is_marked(heap, r.target),
            SlotKind::Ephemeron { key } => !store.is_marked(heap, key),
            SlotKind::Strong => false,
        };
        let c = &mut self.slot.contract;
        let rec = &mut self.slot.record;
        let (refs, cleared) = (&rec.weak_refs, &mut rec.cleared);
        let live_entries = if c.judged.complete {
            let lists = &mut c.judged;
            sweep(marks, refs, &mut lists.unsettled, 0, |i, r| {
                if dead(i, r) {
                    cleared.push(*r);
                }
                true
            });
            let mut dead_entries = 0;
            if !self.phase.step.all_released {
                sweep(marks, refs, &mut lists.pairs, 0, |i, r| {
                    if dead(i, r) {
                        // The key slot dies with the entry; one found before
                        // J1 was cleared there.
                        if i > j1 {
                            cleared.push(refs[i - 1]);
                        }
                        cleared.push(*r);
                        dead_entries += 1;
                    }
                    true
                });
                sweep(marks, refs, &mut lists.entries, 0, |i, r| {
                    if dead(i, r) {
                        cleared.push(*r);
                        dead_entries += 1;
                    }
                    true
                });
            }
            // Every ephemeron found either had its key marked then, or
            // at J1, or is still listed.
            rec.stats.ephemerons - dead_entries
        } else {
            let mut live = c.settled_entries;
            for (i, r) in refs.iter().enumerate().skip(c.settled) {
                if dead(i, r) {
                    cleared.push(*r);
                } else {
                    live += u64::from(matches!(r.kind, SlotKind::Ephemeron { .. }));
                }
            }
            live
        };
        rec.stats.ephemeron_values_traced = live_entries;
        rec.stats.cleared = cleared.len() as u64;
    }
}
