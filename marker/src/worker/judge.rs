//! J1 and J2: the judging of non-strong slots ([`crate::StepKind::Finalize`],
//! [`crate::StepKind::Judge`]). Each worker judges its own records, in parallel with the
//! others, into its own list of cleared slots.
//!
//! Judging looks only at what `found_weak` noted (`JudgeLists`): every
//! soft, weak and phantom record, and the ephemeron records whose key was
//! unmarked when found, each with the object whose mark decides it, so
//! that judging walks the lists in order and reads marks, never the
//! records. J1 takes out of the lists what it settles for good: the
//! soft and weak records (judged once), and the WeakMap entries whose key
//! it finds marked. So J2 looks only at phantom records, entries whose key
//! was dead at J1, and what was found since. The entries that waited for
//! their keys are looked at only when some registered entry was never
//! released; otherwise every such key is marked. When the lists are
//! incomplete (a mark cycle's preclean reordered the records), judging
//! walks every record from `settled` on.

use stealmark_deques::WorkDeque;
use stealmark_model::{MarkStore, ObjRef, ObjectModel, SlotKind, WeakRef};

use super::Worker;

/// What judging must look at, noted by `found_weak` as each record is
/// found: every soft, weak and phantom record (its referent's mark is
/// tested by judging, not when found: see `Worker::note_unsettled`), and
/// the ephemeron records whose key was unmarked when found. Every other
/// record is an ephemeron whose key was marked when found (and the key slot
/// of its WeakMap entry), and marks only grow within a collection, so it is
/// never cleared.
#[derive(Default)]
pub(crate) struct JudgeLists {
    /// Whether the lists are complete: no preclean has reordered the
    /// records (a mark cycle's) and every index fits in a `u32`. When not,
    /// judging walks every record.
    pub(super) complete: bool,
    /// Soft and weak records (not the key slots of WeakMap entries: see
    /// `pairs`); J1 judges and empties it.
    pub(super) weak: Vec<Listed>,
    /// Phantom records.
    pub(super) phantom: Vec<Listed>,
    /// Ephemeron records whose key was unmarked when found (pending or
    /// registered), and whose key slot is not a record just before them:
    /// each is live if and only if the key was marked later, which is
    /// certain for all of them when every registered entry was released.
    pub(super) entries: Vec<Listed>,
    /// The same, for ephemeron records whose entry's key slot is the record
    /// just before them (a WeakMap entry: a weak key slot, then the value
    /// slot; `contract::is_key_slot`): that weak record lives or dies with the
    /// entry, is judged with it, and is not in `weak`. J1 takes out the
    /// entries whose key is marked then.
    pub(super) pairs: Vec<Listed>,
}

/// A record on a judging list: its position in `weak_refs`, and the object
/// whose mark decides it (its referent; an ephemeron's key), copied so that
/// judging reads the lists in order and the marks, not the records.
#[derive(Clone, Copy)]
pub(crate) struct Listed {
    pub(super) at: u32,
    pub(super) decider: ObjRef,
}

impl JudgeLists {
    pub(super) fn clear(&mut self) {
        self.complete = true;
        self.weak.clear();
        self.phantom.clear();
        self.entries.clear();
        self.pairs.clear();
    }

    /// Notes record `i`, decided by `decider`'s mark, in `list`, or marks
    /// the lists incomplete when `i` does not fit.
    #[inline]
    pub(super) fn note(complete: &mut bool, list: &mut Vec<Listed>, i: usize, decider: ObjRef) {
        match u32::try_from(i) {
            Ok(at) => list.push(Listed { at, decider }),
            Err(_) => *complete = false,
        }
    }
}

/// How many listed records ahead of the one being judged the mark of the
/// object that decides a record is prefetched. The lists are read in order,
/// but the objects they name are scattered over the heap: without the
/// hints, each record costs a cache miss on its mark, one after the other
/// (this distance was the best of those measured).
const AHEAD: usize = 32;

/// Visits, in order, each listed record's position and deciding object,
/// keeping on `list` those for which `visit` returns true. With `hint`,
/// prefetches the marks ahead.
fn sweep<H: ObjectModel, S: MarkStore<H>>(
    (heap, store, hint): (&H, &S, bool),
    list: &mut Vec<Listed>,
    mut visit: impl FnMut(usize, ObjRef) -> bool,
) {
    let mut kept = 0;
    for k in 0..list.len() {
        if hint {
            if let Some(ahead) = list.get(k + AHEAD) {
                store.prefetch(heap, ahead.decider);
            }
        }
        let l = list[k];
        if visit(l.at as usize, l.decider) {
            list[kept] = l;
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
        let lists = &mut self.state.contract.judged;
        let rec = &mut self.state.record;
        let (refs, cleared) = (&rec.weak_refs, &mut rec.cleared);
        if lists.complete {
            // Soft and weak records are judged here, once.
            sweep(marks, &mut lists.weak, |at, target| {
                if !store.is_marked(heap, target) {
                    cleared.push(at);
                }
                false
            });
            if self.phase.step.all_released {
                // Every entry that waited has its key marked by now: each
                // one, and its key slot, lives for good.
                lists.pairs.clear();
                lists.entries.clear();
            } else {
                // A pair's key slot (the record before its entry) is
                // cleared with its dead key; the entries whose key is
                // marked now live for good, and only the others stay
                // listed for J2.
                sweep(marks, &mut lists.pairs, |at, key| {
                    let dead = !store.is_marked(heap, key);
                    if dead {
                        cleared.push(at - 1);
                    }
                    dead
                });
            }
        } else {
            let settled = self.state.contract.settled;
            for (i, r) in refs.iter().enumerate().skip(settled) {
                if matches!(r.kind, SlotKind::Soft | SlotKind::Weak)
                    && !store.is_marked(heap, r.target)
                {
                    cleared.push(i);
                }
            }
        }
        self.state.contract.j1_end = refs.len();
        rec.stats.cleared = cleared.len() as u64;
    }

    /// J2: phantom slots whose referents and ephemeron slots whose keys are
    /// not marked are cleared, and so are the soft and weak slots found
    /// since J1 (all of them, when there was no J1) whose referents are not
    /// marked. Counts the live ephemeron entries.
    pub(super) fn judge_rest(&mut self) {
        let (heap, store) = (self.phase.heap, self.phase.store);
        let marks = (heap, store, self.phase.config.prefetch > 0);
        let j1 = self.state.contract.j1_end;
        let c = &mut self.state.contract;
        let rec = &mut self.state.record;
        let (refs, cleared) = (&rec.weak_refs, &mut rec.cleared);
        let live_entries = if c.judged.complete {
            let lists = &mut c.judged;
            // Only soft and weak records found since J1 are still listed.
            for list in [&mut lists.weak, &mut lists.phantom] {
                sweep(marks, list, |at, target| {
                    if !store.is_marked(heap, target) {
                        cleared.push(at);
                    }
                    true
                });
            }
            let mut dead_entries = 0;
            if !self.phase.step.all_released {
                sweep(marks, &mut lists.pairs, |at, key| {
                    if !store.is_marked(heap, key) {
                        // The key slot dies with the entry; one found before
                        // J1 was cleared there.
                        if at > j1 {
                            cleared.push(at - 1);
                        }
                        cleared.push(at);
                        dead_entries += 1;
                    }
                    true
                });
                sweep(marks, &mut lists.entries, |at, key| {
                    if !store.is_marked(heap, key) {
                        cleared.push(at);
                        dead_entries += 1;
                    }
                    true
                });
            }
            // Every ephemeron found either had its key marked then, or
            // at J1, or is still listed.
            rec.stats.ephemerons - dead_entries
        } else {
            let dead = |i: usize, r: &WeakRef| match r.kind {
                SlotKind::Soft | SlotKind::Weak => i >= j1 && !store.is_marked(heap, r.target),
                SlotKind::Phantom => !store.is_marked(heap, r.target),
                SlotKind::Ephemeron { key } => !store.is_marked(heap, key),
                SlotKind::Strong | SlotKind::StrongLeaf => false,
            };
            let mut live = c.settled_entries;
            for (i, r) in refs.iter().enumerate().skip(c.settled) {
                if dead(i, r) {
                    cleared.push(i);
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
