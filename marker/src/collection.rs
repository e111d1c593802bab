//! [`Collection`]: what one collection starts from, beyond the heap.

use stealmark_model::{ObjRef, RootSource, SoftRefs};

/// The inputs of a collection: the roots, the registered finalizable
/// objects, and what to do with soft references.
///
/// Roots and finalizable objects are any [`RootSource`]: a slice of
/// references (split into chunks of
/// [`ROOT_CHUNK`](stealmark_model::ROOT_CHUNK)), a slice of per-thread
/// stacks (one chunk each), or the runtime's own type. The workers claim
/// chunks in parallel.
///
/// ```
/// use stealmark_marker::{Collection, ObjRef};
/// use stealmark_marker::model::SoftRefs;
///
/// let stacks: Vec<Vec<ObjRef>> = vec![vec![ObjRef::from_index(0)], vec![ObjRef::from_index(5)]];
/// let finalizable = [ObjRef::from_index(9)];
/// let c = Collection::new(stacks.as_slice())
///     .finalizable(&finalizable[..])
///     .soft_refs(SoftRefs::KeepAll);
/// assert!(matches!(c.soft_refs, SoftRefs::KeepAll));
/// assert!(!c.solo && c.solo(true).solo);
/// ```
#[derive(Debug)]
pub struct Collection<'a, R: ?Sized = [ObjRef], F: ?Sized = [ObjRef]> {
    /// The roots.
    pub roots: &'a R,
    /// The registered finalizable objects (duplicates allowed: an object
    /// registered twice is reported once).
    pub finalizable: &'a F,
    /// The soft-reference policy.
    pub soft_refs: SoftRefs<'a>,
    /// Mark on the calling thread alone, without waking the marker's other
    /// workers: for a heap the runtime knows is small (a few thousand
    /// objects), where waking parked threads costs more than marking.
    /// Every step then runs as on a one-worker marker; the report has the
    /// configured number of worker lists, all but the first empty. (A mark
    /// cycle's counterpart is [`CycleOptions::solo`](crate::CycleOptions::solo).)
    pub solo: bool,
}

impl<'a, R: RootSource + ?Sized> Collection<'a, R> {
    /// A collection from `roots`: nothing finalizable, soft references
    /// cleared.
    pub fn new(roots: &'a R) -> Self {
        Collection {
            roots,
            finalizable: &[],
            soft_refs: SoftRefs::ClearAll,
            solo: false,
        }
    }
}

impl<'a, R: ?Sized, F: ?Sized> Collection<'a, R, F> {
    /// The same collection with `finalizable` registered for finalization.
    pub fn finalizable<G: RootSource + ?Sized>(self, finalizable: &'a G) -> Collection<'a, R, G> {
        Collection {
            roots: self.roots,
            finalizable,
            soft_refs: self.soft_refs,
            solo: self.solo,
        }
    }

    /// The same collection with another soft-reference policy.
    pub fn soft_refs(self, soft_refs: SoftRefs<'a>) -> Self {
        Collection { soft_refs, ..self }
    }

    /// The same collection, marked on the calling thread alone
    /// ([`Collection::solo`]) or not.
    pub fn solo(self, solo: bool) -> Self {
        Collection { solo, ..self }
    }
}

impl<R: ?Sized, F: ?Sized> Clone for Collection<'_, R, F> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<R: ?Sized, F: ?Sized> Copy for Collection<'_, R, F> {}
