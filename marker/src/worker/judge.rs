//! J1 and J2: the judging of non-strong slots (`docs/design.md`, "Records
//! and judging"). Each worker judges its own records, in parallel with the
//! others, into its own list of cleared slots.
//!
//! Judging looks only at what `found_weak` noted (`JudgeLists`): records
//! whose referent (ephemerons: key) was unmarked when found. The entries
//! that waited for their keys (and the key slots paired with them) are
//! looked at only when some registered entry was never released; otherwise
//! every such key is marked. When the lists
//! are incomplete (a mark cycle's preclean reordered the records), judging
//! walks every record from `settled` on.

use stealmark_deques::WorkDeque;
use stealmark_model::{MarkStore, ObjectModel, SlotKind, WeakRef};

use super::Worker;

impl<D: WorkDeque, H: ObjectModel, S: MarkStore<H>> Worker<'_, '_, D, H, S> {
    /// J1: the soft and weak slots found so far whose referents are not
    /// marked are cleared.
    pub(super) fn judge_weak(&mut self) {
        let (heap, store) = (self.phase.heap, self.phase.store);
        let dead = |r: &WeakRef| {
            matches!(r.kind, SlotKind::Soft | SlotKind::Weak) && !store.is_marked(heap, r.target)
        };
        let c = &self.slot.contract;
        let rec = &mut self.slot.record;
        if c.judged.complete {
            for &i in &c.judged.unsettled {
                let r = &rec.weak_refs[i as usize];
                if dead(r) {
                    rec.cleared.push(*r);
                }
            }
            if !self.phase.step.all_released {
                for &i in &c.judged.pairs {
                    let r = &rec.weak_refs[i as usize - 1];
                    if dead(r) {
                        rec.cleared.push(*r);
                    }
                }
            }
        } else {
            for r in &rec.weak_refs[c.settled..] {
                if dead(r) {
                    rec.cleared.push(*r);
                }
            }
        }
        self.slot.contract.j1_end = rec.weak_refs.len();
        rec.stats.cleared = rec.cleared.len() as u64;
    }

    /// J2: phantom slots whose referents and ephemeron slots whose keys are
    /// not marked are cleared, and so are the soft and weak slots found
    /// since J1 (all of them, when there was no J1) whose referents are not
    /// marked. Counts the live ephemeron entries.
    pub(super) fn judge_rest(&mut self) {
        let (heap, store) = (self.phase.heap, self.phase.store);
        let j1 = self.slot.contract.j1_end;
        let dead = |i: usize, r: &WeakRef| match r.kind {
            SlotKind::Soft | SlotKind::Weak => i >= j1 && !store.is_marked(heap, r.target),
            SlotKind::Phantom => !store.is_marked(heap, r.target),
            SlotKind::Ephemeron { key } => !store.is_marked(heap, key),
            SlotKind::Strong => false,
        };
        let c = &self.slot.contract;
        let rec = &mut self.slot.record;
        let live_entries = if c.judged.complete {
            for &i in &c.judged.unsettled {
                let (i, r) = (i as usize, &rec.weak_refs[i as usize]);
                if dead(i, r) {
                    rec.cleared.push(*r);
                }
            }
            let mut dead_entries = 0;
            if !self.phase.step.all_released {
                for &i in &c.judged.pairs {
                    let (i, k) = (i as usize - 1, &rec.weak_refs[i as usize - 1]);
                    if dead(i, k) {
                        rec.cleared.push(*k);
                    }
                }
                for &i in c.judged.entries.iter().chain(&c.judged.pairs) {
                    let (i, r) = (i as usize, &rec.weak_refs[i as usize]);
                    if dead(i, r) {
                        rec.cleared.push(*r);
                        dead_entries += 1;
                    }
                }
            }
            // Every ephemeron found either had its key marked then or is
            // in `entries`.
            rec.stats.ephemerons - dead_entries
        } else {
            let mut live = c.settled_entries;
            for (i, r) in rec.weak_refs.iter().enumerate().skip(c.settled) {
                if dead(i, r) {
                    rec.cleared.push(*r);
                } else {
                    live += u64::from(matches!(r.kind, SlotKind::Ephemeron { .. }));
                }
            }
            live
        };
        rec.stats.ephemeron_values_traced = live_entries;
        rec.stats.cleared = rec.cleared.len() as u64;
    }
}
