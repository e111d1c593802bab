//! Class layouts: where the reference fields of an instance lie in its
//! INSTANCE_DUMP field data, and which of them is the weak `referent`.

use std::cell::Cell;

use super::reader::{basic_type_size, TYPE_OBJECT};
use crate::import::error::{ImportError, Malformed};

/// Entries in the class look-up cache.
const CACHE_LEN: usize = 1024;
/// A cache entry that holds nothing.
const EMPTY: u32 = u32::MAX;

/// A class as pass 1 keeps it.
pub(crate) struct ClassInfo {
    pub(crate) id: u64,
    pub(crate) super_id: u64,
    /// Declared instance fields: (name string id, basic type).
    pub(crate) fields: Vec<(u64, u8)>,
    /// Where the CLASS_DUMP starts, for errors.
    pub(crate) offset: u64,
}

/// A reference field of an instance layout.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct RefField {
    /// Byte offset in the field data.
    pub(crate) offset: u32,
    /// Whether this is `java.lang.ref.Reference.referent`.
    pub(crate) weak: bool,
}

/// The layout of a class's instances, superclass fields included.
pub(crate) struct Layout {
    /// Bytes of field data an instance has.
    pub(crate) data_len: u64,
    pub(crate) refs: Vec<RefField>,
}

/// Every dumped class, indexed by class id.
pub(crate) struct Classes {
    /// `(class id, index into layouts)`, sorted by id: a few thousand
    /// classes, searched in cache.
    index: Vec<(u64, u32)>,
    /// A direct-mapped cache of `index` look-ups, one per instance record:
    /// `(class id, index)`, with [`EMPTY`] for an unused entry.
    cache: Box<[Cell<(u64, u32)>]>,
    /// Per class: its instance layout, or `None` when a superclass is
    /// missing from the dump, so that its instances cannot be decoded.
    pub(crate) layouts: Vec<Option<Layout>>,
}

impl Classes {
    /// Resolves the layouts. `reference_classes` are the ids of
    /// `java.lang.ref.Reference` (normally one), `referent_names` the string
    /// ids of `referent`.
    pub(crate) fn new(
        classes: &[ClassInfo],
        id_size: u32,
        reference_classes: &[u64],
        referent_names: &[u64],
    ) -> Result<Classes, ImportError> {
        let mut index: Vec<(u64, u32)> = classes
            .iter()
            .enumerate()
            .map(|(i, c)| (c.id, i as u32))
            .collect();
        index.sort_unstable();
        if let Some(w) = index.windows(2).find(|w| w[0].0 == w[1].0) {
            let c = &classes[w[1].1 as usize];
            return Err(super::reader::malformed(
                c.offset,
                Malformed::DuplicateId(c.id),
            ));
        }
        let mut layouts = Vec::with_capacity(classes.len());
        for c in classes {
            layouts.push(layout(
                c,
                classes,
                &index,
                id_size,
                reference_classes,
                referent_names,
            )?);
        }
        let cache = vec![Cell::new((0, EMPTY)); CACHE_LEN].into_boxed_slice();
        Ok(Classes {
            index,
            cache,
            layouts,
        })
    }

    /// The dump-order index of the class `class_id`, if it is dumped.
    #[inline]
    pub(crate) fn find(&self, class_id: u64) -> Option<u32> {
        // Class ids are addresses: drop the alignment bits, fold the rest.
        let h = ((class_id >> 3) ^ (class_id >> 13)) as usize % CACHE_LEN;
        let (id, i) = self.cache[h].get();
        if id == class_id && i != EMPTY {
            return Some(i);
        }
        let found = find(&self.index, class_id)?;
        self.cache[h].set((class_id, found));
        Some(found)
    }

    /// The layout of the class with dump-order index `i`, if resolvable.
    #[inline]
    pub(crate) fn layout(&self, i: u32) -> Option<&Layout> {
        self.layouts.get(i as usize)?.as_ref()
    }
}

/// Walks the superclass chain of `c`, laying out its own fields first, then
/// its superclass's, and so on, as INSTANCE_DUMP orders them.
fn layout(
    c: &ClassInfo,
    classes: &[ClassInfo],
    index: &[(u64, u32)],
    id_size: u32,
    reference_classes: &[u64],
    referent_names: &[u64],
) -> Result<Option<Layout>, ImportError> {
    let mut refs = Vec::new();
    let mut offset = 0u64;
    let mut cur = c;
    let mut steps = 0usize;
    loop {
        let is_reference = reference_classes.contains(&cur.id);
        for &(name, ty) in &cur.fields {
            if ty == TYPE_OBJECT {
                let off = u32::try_from(offset).map_err(|_| {
                    super::reader::malformed(c.offset, Malformed::TooMany("instance fields"))
                })?;
                refs.push(RefField {
                    offset: off,
                    weak: is_reference && referent_names.contains(&name),
                });
            }
            // Types were checked when the class dump was read.
            offset += u64::from(basic_type_size(ty, id_size).unwrap_or(0));
        }
        if cur.super_id == 0 {
            return Ok(Some(Layout {
                data_len: offset,
                refs,
            }));
        }
        steps += 1;
        if steps > classes.len() {
            return Err(super::reader::malformed(
                c.offset,
                Malformed::SuperclassCycle(c.id),
            ));
        }
        match find(index, cur.super_id) {
            Some(i) => cur = &classes[i as usize],
            None => return Ok(None),
        }
    }
}

/// Binary search of a sorted `(id, index)` table.
#[inline]
fn find(index: &[(u64, u32)], id: u64) -> Option<u32> {
    index
        .binary_search_by_key(&id, |p| p.0)
        .ok()
        .map(|i| index[i].1)
}
