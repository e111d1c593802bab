//! [`HeapGraph`]: a validated heap with its roots and finalizable objects.

use crate::view::HeapView;
use stealmark_model::ObjRef;

/// A validated heap with its roots and finalizable objects: what a marker
/// traces.
///
/// Implemented by the in-memory [`Heap`](crate::Heap) and by the
/// memory-mapped [`Snapshot`](crate::Snapshot). The view and the roots
/// borrow from the heap.
pub trait HeapGraph {
    /// The arena, as an [`ObjectModel`](stealmark_model::ObjectModel).
    fn view(&self) -> HeapView<'_>;
    /// The roots, as references into [`HeapGraph::view`].
    fn roots(&self) -> &[ObjRef];
    /// The registered finalizable objects (duplicates allowed), as
    /// references into [`HeapGraph::view`]: what
    /// [`OracleInput::finalizable`](crate::OracleInput::finalizable) takes.
    fn finalizable(&self) -> &[ObjRef];
    /// The number of type names (0 if the heap has no type-name table).
    fn type_count(&self) -> usize;
    /// The name of a type id, if the heap has one for it.
    fn type_name(&self, type_id: u32) -> Option<&str>;
}
