//! Class layouts: where the reference fields of an instance lie in its
//! INSTANCE_DUMP field data, which of them is `Reference.referent`, and
//! which classes are soft, weak, phantom or final references.

use std::cell::Cell;

use super::reader::malformed;
use super::reader::{basic_type_size, TYPE_OBJECT};
use crate::error::{ImportError, Malformed};
use stealmark_heap::TypeKind;

/// What kind of `java.lang.ref.Reference` a class is, by its nearest
/// ancestor among the reference classes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum RefKind {
    /// `SoftReference`.
    Soft,
    /// `WeakReference`, and `Reference` itself (or a subclass of none of the
    /// four, which Java does not allow).
    Weak,
    /// `PhantomReference`.
    Phantom,
    /// `FinalReference` (`java.lang.ref.Finalizer`): the referent is
    /// registered finalizable.
    Final,
}

impl RefKind {
    /// The type kind of the class's instances. A `FinalReference`'s referent
    /// is phantom: never traced through the reference, never cleared (the
    /// referent is finalizable, so it is marked by the time phantom
    /// references are judged), as HotSpot keeps a finalizer's referent
    /// until the finalizer has run.
    pub(crate) fn type_kind(self) -> TypeKind {
        match self {
            RefKind::Soft => TypeKind::SoftRef,
            RefKind::Weak => TypeKind::WeakRef,
            RefKind::Phantom | RefKind::Final => TypeKind::PhantomRef,
        }
    }
}

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

/// A reference field among a class's own fields.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct RefField {
    /// Byte offset from the start of the class's own fields.
    offset: u32,
    /// Whether this is `java.lang.ref.Reference.referent`.
    referent: bool,
}

/// A class's own instance fields (its superclasses' are not included).
struct Own {
    refs: Vec<RefField>,
    /// Bytes of field data the class itself declares.
    size: u64,
}

/// Marks "no class" in [`Classes::first`] and [`Classes::next`].
const NONE: u32 = u32::MAX;

/// Every dumped class, indexed by class id, with what decoding an instance
/// needs.
///
/// An instance's field data is its class's own fields, then its
/// superclass's, and so on. Layouts are not flattened per class (a deep
/// chain would make that quadratic in memory); instead each class links to
/// the next class up its chain that declares fields, so decoding an
/// instance takes one step per class with fields, at most one per byte of
/// field data.
pub(crate) struct Classes {
    /// `(class id, dump-order index)`, sorted by id: a few thousand classes,
    /// searched in cache.
    index: Vec<(u64, u32)>,
    /// A direct-mapped cache of `index` look-ups, one per instance record:
    /// `(class id, index)`, with [`EMPTY`] for an unused entry.
    cache: Box<[Cell<(u64, u32)>]>,
    own: Vec<Own>,
    /// Bytes of field data of an instance (superclasses included), or
    /// `None` when a superclass is missing from the dump.
    data_len: Vec<Option<u64>>,
    /// Reference fields of an instance (superclasses included, when known).
    ref_fields: Vec<u64>,
    /// The reference kind, from the nearest reference class up the chain.
    ref_kind: Vec<Option<RefKind>>,
    /// The first class with fields in the chain from the class up,
    /// itself included.
    first: Vec<u32>,
    /// The first class with fields strictly above the class.
    next: Vec<u32>,
}

impl Classes {
    /// Resolves every class's chain. `reference_classes` are the ids of
    /// `java.lang.ref.Reference` (normally one), `referent_names` the string
    /// ids of `referent`, `ref_roots` the ids of the classes that start a
    /// reference kind (`Reference` itself, `SoftReference`,
    /// `WeakReference`, `PhantomReference`, `FinalReference`); all sorted.
    pub(crate) fn new(
        classes: &[ClassInfo],
        id_size: u32,
        reference_classes: &[u64],
        referent_names: &[u64],
        ref_roots: &[(u64, RefKind)],
    ) -> Result<Classes, ImportError> {
        let mut index: Vec<(u64, u32)> = classes
            .iter()
            .enumerate()
            .map(|(i, c)| (c.id, i as u32))
            .collect();
        index.sort_unstable();
        if let Some(w) = index.windows(2).find(|w| w[0].0 == w[1].0) {
            let c = &classes[w[1].1 as usize];
            return Err(malformed(c.offset, Malformed::DuplicateId(c.id)));
        }
        let own = classes
            .iter()
            .map(|c| own_fields(c, id_size, reference_classes, referent_names))
            .collect();
        let n = classes.len();
        let mut this = Classes {
            index,
            cache: vec![Cell::new((0, EMPTY)); CACHE_LEN].into_boxed_slice(),
            own,
            data_len: vec![None; n],
            ref_fields: vec![0; n],
            ref_kind: vec![None; n],
            first: vec![NONE; n],
            next: vec![NONE; n],
        };
        this.resolve(classes, ref_roots)?;
        Ok(this)
    }

    /// Fills `data_len`, `ref_fields`, `ref_kind`, `first` and `next` in
    /// one walk up each chain, stopping at classes already resolved: linear
    /// in the number of classes, without recursion, and detecting cycles.
    fn resolve(
        &mut self,
        classes: &[ClassInfo],
        ref_roots: &[(u64, RefKind)],
    ) -> Result<(), ImportError> {
        const NEW: u8 = 0;
        const ON_PATH: u8 = 1;
        const DONE: u8 = 2;
        let mut state = vec![NEW; classes.len()];
        let mut path = Vec::new();
        for start in 0..classes.len() {
            let mut k = start;
            // The resolved class the path ends on, if any: `Ok(None)` for
            // the root of the hierarchy, `Err(())` for a missing superclass.
            let above: Result<Option<usize>, ()> = loop {
                match state[k] {
                    DONE => break Ok(Some(k)),
                    ON_PATH => {
                        let c = &classes[k];
                        return Err(malformed(c.offset, Malformed::SuperclassCycle(c.id)));
                    }
                    _ => {}
                }
                state[k] = ON_PATH;
                path.push(k);
                let super_id = classes[k].super_id;
                if super_id == 0 {
                    break Ok(None);
                }
                match find(&self.index, super_id) {
                    Some(s) => k = s as usize,
                    None => break Err(()),
                }
            };
            let mut above = above;
            // `path` ends with the class just below `above`; resolve it
            // downwards.
            while let Some(k) = path.pop() {
                let (len, first, refs, kind) = match above {
                    Ok(Some(s)) => (
                        self.data_len[s],
                        self.first[s],
                        self.ref_fields[s],
                        self.ref_kind[s],
                    ),
                    Ok(None) => (Some(0), NONE, 0, None),
                    Err(()) => (None, NONE, 0, None),
                };
                let own_kind = ref_roots
                    .binary_search_by_key(&classes[k].id, |r| r.0)
                    .ok()
                    .map(|i| ref_roots[i].1);
                self.ref_kind[k] = own_kind.or(kind);
                let own = &self.own[k];
                self.ref_fields[k] = refs + own.refs.len() as u64;
                self.data_len[k] = match len {
                    Some(l) => Some(l.checked_add(own.size).ok_or_else(|| {
                        malformed(classes[k].offset, Malformed::TooMany("instance fields"))
                    })?),
                    None => None,
                };
                self.next[k] = first;
                self.first[k] = if own.size > 0 { k as u32 } else { first };
                state[k] = DONE;
                above = Ok(Some(k));
            }
        }
        Ok(())
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

    /// The bytes of field data an instance of class `i` has, or `None` if a
    /// superclass is missing from the dump.
    #[inline]
    pub(crate) fn data_len(&self, i: u32) -> Option<u64> {
        *self.data_len.get(i as usize)?
    }

    /// The reference fields of an instance of class `i` (superclasses'
    /// included, as far as they are in the dump).
    #[inline]
    pub(crate) fn ref_fields(&self, i: u32) -> u64 {
        self.ref_fields.get(i as usize).copied().unwrap_or(0)
    }

    /// The reference kind of class `i`, if it is a `java.lang.ref.Reference`.
    #[inline]
    pub(crate) fn ref_kind(&self, i: u32) -> Option<RefKind> {
        self.ref_kind.get(i as usize).copied().flatten()
    }

    /// Calls `f(offset, referent)` for each reference field of an instance
    /// of class `i`, in field-data order; `referent` marks
    /// `Reference.referent`.
    #[inline]
    pub(crate) fn for_each_ref_field(&self, i: u32, mut f: impl FnMut(u64, bool)) {
        let mut k = self.first.get(i as usize).copied().unwrap_or(NONE);
        let mut base = 0u64;
        while k != NONE {
            let own = &self.own[k as usize];
            for r in &own.refs {
                f(base + u64::from(r.offset), r.referent);
            }
            base += own.size;
            k = self.next[k as usize];
        }
    }
}

/// A class's own fields: the reference fields and the size.
fn own_fields(
    c: &ClassInfo,
    id_size: u32,
    reference_classes: &[u64],
    referent_names: &[u64],
) -> Own {
    let is_reference = reference_classes.binary_search(&c.id).is_ok();
    let mut refs = Vec::new();
    let mut size = 0u64;
    for &(name, ty) in &c.fields {
        if ty == TYPE_OBJECT {
            // At most 65,535 fields of at most 8 bytes: fits in u32.
            refs.push(RefField {
                offset: size as u32,
                referent: is_reference && referent_names.binary_search(&name).is_ok(),
            });
        }
        // Types were checked when the class dump was read.
        size += u64::from(basic_type_size(ty, id_size).unwrap_or(0));
    }
    Own { refs, size }
}

/// Binary search of a sorted `(id, index)` table.
#[inline]
fn find(index: &[(u64, u32)], id: u64) -> Option<u32> {
    index
        .binary_search_by_key(&id, |p| p.0)
        .ok()
        .map(|i| index[i].1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(id: u64, super_id: u64, fields: &[(u64, u8)]) -> ClassInfo {
        ClassInfo {
            id,
            super_id,
            fields: fields.to_vec(),
            offset: id,
        }
    }

    #[test]
    fn chains_lay_out_own_fields_first() {
        // 0x30 extends 0x20 (no fields) extends 0x10 (java.lang.ref.Reference).
        let classes = [
            class(0x30, 0x20, &[(7, 10), (8, 2)]),
            class(0x10, 0, &[(1, 2), (2, 2)]),
            class(0x20, 0x10, &[]),
            class(0x40, 0x99, &[(8, 2)]),
        ];
        let roots = [(0x10, RefKind::Weak), (0x20, RefKind::Soft)];
        let c = Classes::new(&classes, 8, &[0x10], &[1], &roots).unwrap();
        let i = c.find(0x30).unwrap();
        assert_eq!(c.data_len(i), Some(4 + 8 + 16));
        assert_eq!(c.ref_fields(i), 3);
        assert_eq!(c.ref_kind(i), Some(RefKind::Soft));
        assert_eq!(c.ref_kind(c.find(0x10).unwrap()), Some(RefKind::Weak));
        assert_eq!(c.ref_kind(c.find(0x40).unwrap()), None);
        let mut refs = Vec::new();
        c.for_each_ref_field(i, |o, w| refs.push((o, w)));
        assert_eq!(refs, [(4, false), (12, true), (20, false)]);
        let mut refs = Vec::new();
        c.for_each_ref_field(c.find(0x20).unwrap(), |o, w| refs.push((o, w)));
        assert_eq!(refs, [(0, true), (8, false)]);
        // A missing superclass: no layout.
        assert_eq!(c.data_len(c.find(0x40).unwrap()), None);
        assert_eq!(c.find(0x99), None);
    }

    #[test]
    fn deep_chains_are_linear_and_cycles_are_errors() {
        let n = 100_000u64;
        let classes: Vec<ClassInfo> = (1..=n)
            .map(|i| class(i * 8, if i == 1 { 0 } else { (i - 1) * 8 }, &[(1, 2)]))
            .collect();
        let c = Classes::new(&classes, 4, &[], &[], &[]).unwrap();
        assert_eq!(c.data_len(c.find(n * 8).unwrap()), Some(4 * n));
        let cyc = [class(8, 16, &[]), class(16, 24, &[]), class(24, 16, &[])];
        assert!(matches!(
            Classes::new(&cyc, 4, &[], &[], &[]),
            Err(ImportError::Malformed {
                kind: Malformed::SuperclassCycle(_),
                ..
            })
        ));
    }
}
