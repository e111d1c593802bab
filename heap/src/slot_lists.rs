//! A heap given as plain slot lists: the smallest [`ObjectModel`] that has
//! every slot kind of the runtime contract, for tests and examples that
//! write a graph by hand.

use std::ops::Range;

use stealmark_model::{MarkIndex, ObjRef, ObjectModel, SlotKind};

/// A slot's kind, with an ephemeron's key given by object number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListKind {
    /// A strong reference.
    Strong,
    /// A soft reference.
    Soft,
    /// A weak reference.
    Weak,
    /// A phantom reference.
    Phantom,
    /// An ephemeron value, kept alive only through the key object.
    Ephemeron(usize),
}

/// A heap of slot lists: object `i` is [`ObjRef::from_index`]`(i)` and holds
/// the slots `self.0[i]`, each a target object number and a [`ListKind`].
/// Object `i` has type `i % 2` and takes `16 + 8 * slots` bytes.
///
/// ```
/// use stealmark_heap::{oracle, ListGraph, ListKind, ObjRef, OracleInput};
///
/// // 0 -> 1 strongly; 0 -> 2 weakly.
/// let g = ListGraph(vec![vec![(1, ListKind::Strong), (2, ListKind::Weak)], vec![], vec![]]);
/// let roots = [ObjRef::from_index(0)];
/// let res = oracle(&g, &OracleInput::roots(&roots));
/// assert_eq!(res.marked.iter().collect::<Vec<_>>(), vec![0, 1]);
/// assert_eq!(res.cleared.len(), 1);
/// ```
#[derive(Clone, Debug, Default)]
pub struct ListGraph(pub Vec<Vec<(usize, ListKind)>>);

impl ObjectModel for ListGraph {
    fn size_bytes(&self, obj: ObjRef) -> usize {
        16 + 8 * self.0[obj.index()].len()
    }

    fn slot_count(&self, obj: ObjRef) -> usize {
        self.0[obj.index()].len()
    }

    fn scan_slots<V: FnMut(usize, ObjRef, SlotKind)>(
        &self,
        obj: ObjRef,
        slots: Range<usize>,
        mut visit: V,
    ) {
        let all = &self.0[obj.index()];
        let end = slots.end.min(all.len());
        let start = slots.start.min(end);
        for (i, &(t, k)) in all.iter().enumerate().take(end).skip(start) {
            let kind = match k {
                ListKind::Strong => SlotKind::Strong,
                ListKind::Soft => SlotKind::Soft,
                ListKind::Weak => SlotKind::Weak,
                ListKind::Phantom => SlotKind::Phantom,
                ListKind::Ephemeron(key) => SlotKind::Ephemeron {
                    key: ObjRef::from_index(key),
                },
            };
            visit(i, ObjRef::from_index(t), kind);
        }
    }

    fn type_count(&self) -> usize {
        2
    }

    fn type_id(&self, obj: ObjRef) -> usize {
        obj.index() % 2
    }

    fn prefetch(&self, _: ObjRef) {}
}

impl MarkIndex for ListGraph {
    fn mark_index_bound(&self) -> usize {
        self.0.len()
    }

    fn mark_index(&self, obj: ObjRef) -> usize {
        obj.index()
    }
}
