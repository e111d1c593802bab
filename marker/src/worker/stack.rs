//! The primitives that mark an object and move words ([`Word`]) onto and
//! off a worker's mark stack: its private stack, its deque and, when a
//! bounded deque is full, the overflow storage.

use stealmark_deques::copies::Ticket;
use stealmark_deques::{Owner, WorkDeque};
use stealmark_model::{MarkStore, ObjRef, ObjectModel};

use super::modes::KeyWatch;
use super::stealing::WAKE_GRAIN;
use super::word::Word;
use super::{Phase, Worker, WorkerState};

/// How many objects ahead of the one being shaded [`Worker::shade_each`]
/// and the shading of released values (`contract`) prefetch the mark.
pub(super) const MARKS_AHEAD: usize = 16;

/// Sets `obj`'s mark; whether this call set it. `unshared` (a step whose
/// worker is the only thread marking, `Phase::unshared`) marks without an
/// atomic read-modify-write.
#[inline(always)]
pub(super) fn mark<H: ObjectModel, S: MarkStore<H>>(
    heap: &H,
    store: &S,
    unshared: bool,
    obj: ObjRef,
) -> bool {
    if unshared {
        store.try_mark_unshared(heap, obj)
    } else {
        store.try_mark(heap, obj)
    }
}

impl<D: WorkDeque, H: ObjectModel, S: MarkStore<H>> Worker<'_, '_, D, H, S> {
    /// Marks `obj`; if this worker set the bit, pushes it and (while `W`
    /// watches the key index) queues it for the key-index check. Returns
    /// whether it did.
    #[inline]
    pub(super) fn shade<W: KeyWatch>(&mut self, obj: ObjRef) -> bool {
        let phase = self.phase;
        if !mark(phase.heap, phase.store, phase.unshared, obj) {
            return false;
        }
        self.state.record.stats.objects_marked += 1;
        self.push(Word::object(obj));
        if W::ON {
            self.state.contract.check(obj);
        }
        true
    }

    /// Shades each of `objs` in order, hinting the mark of the one
    /// [`MARKS_AHEAD`] further on (the lists shaded this way, ready values
    /// and finalizable candidates, are scattered over the heap); calls
    /// `marked` with each one this worker marked.
    pub(super) fn shade_each<W: KeyWatch>(
        &mut self,
        objs: &[ObjRef],
        mut marked: impl FnMut(&mut Self, ObjRef),
    ) {
        let (heap, store) = (self.phase.heap, self.phase.store);
        let hint = self.phase.config.prefetch > 0;
        for (k, &obj) in objs.iter().enumerate() {
            if hint {
                if let Some(&ahead) = objs.get(k + MARKS_AHEAD) {
                    store.prefetch(heap, ahead);
                }
            }
            if self.shade::<W>(obj) {
                marked(self, obj);
            }
        }
    }

    /// This worker's load: private and shared items.
    #[inline]
    pub(super) fn load(&self) -> usize {
        self.state.private.len() + self.state.owner.len()
    }

    /// Pops the newest private word, else the newest word of the deque,
    /// with its deque ticket (a private word's is [`Ticket::ONLY`]).
    #[inline(always)]
    pub(super) fn pop(&mut self) -> Option<(Word, Ticket)> {
        match self.state.private.pop() {
            Some(w) => Some((Word::from_raw(w), Ticket::ONLY)),
            None => {
                let (w, ticket) = self.state.owner.pop_ticketed()?;
                #[cfg(feature = "inject-delays")]
                let ticket = self.inject_duplicate(Word::from_raw(w), ticket);
                Some((Word::from_raw(w), ticket))
            }
        }
    }

    /// Pushes a newly grey object: onto the private stack, or straight onto
    /// the deque when private work is off.
    #[inline]
    pub(super) fn push(&mut self, w: Word) {
        if self.settings.private {
            self.state.private.push(w.raw());
        } else {
            self.push_shared(w);
        }
    }

    /// Pushes onto the deque, spilling to the overflow storage when full.
    #[inline]
    pub(super) fn push_shared(&mut self, w: Word) {
        Self::push_to_deque(self.phase, self.state, w);
    }

    /// Pushes onto the deque an item that may have another copy (one taken
    /// by a single steal): the deque marks its ticket.
    #[inline]
    pub(super) fn push_copy(&mut self, w: Word) {
        if let Err(w) = self.state.owner.push_copy(w.raw()) {
            Self::spill(self.phase, self.state, w);
        }
    }

    /// [`Worker::push_shared`] on the parts of the worker it uses, for the
    /// slot loop, which holds the rest borrowed.
    #[inline(always)]
    pub(super) fn push_to_deque(phase: &Phase<'_, D, H, S>, state: &mut WorkerState<D>, w: Word) {
        if let Err(w) = state.owner.push(w.raw()) {
            Self::spill(phase, state, w);
        }
    }

    /// The bounded deque is full: move the item and half the deque to the
    /// shared overflow storage, and wake a parked worker to take some.
    #[cold]
    fn spill(phase: &Phase<'_, D, H, S>, state: &mut WorkerState<D>, raw: usize) {
        let moved =
            phase
                .engine
                .overflow
                .spill(raw, &mut state.owner, phase.config.deque_capacity / 2);
        state.record.stats.overflow_pushes += moved as u64;
        if phase.term.sleepers() > 0 {
            let k = phase.term.wake(moved / WAKE_GRAIN);
            state.record.stats.wakeups_sent += k as u64;
        }
    }
}
