//! [`Entry`]: a word of a barrier buffer. The snapshot barrier and the
//! incremental-update barrier's forward half record objects to shade; the
//! backward half records holders to scan again. One tag bit, in the low
//! bits an object reference always has clear, tells them apart.

use stealmark_model::ObjRef;

/// An entry of a mutator's barrier buffer: an object to shade (mark and
/// trace, unless already marked) or a holder to rescan (scan its slots
/// again, marked or not).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub(crate) struct Entry(usize);

impl Entry {
    /// The tag of a holder to rescan ([`ObjRef::ALIGN`] leaves it clear).
    const RESCAN: usize = 1;

    /// An object to shade.
    #[inline(always)]
    pub(crate) const fn shade(obj: ObjRef) -> Entry {
        Entry(obj.word())
    }

    /// A holder to scan again.
    #[inline(always)]
    pub(crate) const fn rescan(holder: ObjRef) -> Entry {
        Entry(holder.word() | Self::RESCAN)
    }

    /// Whether the entry names a holder to scan again.
    #[inline(always)]
    pub(crate) const fn is_rescan(self) -> bool {
        self.0 & Self::RESCAN != 0
    }

    /// The object (to shade) or holder (to rescan) the entry names.
    #[inline(always)]
    pub(crate) fn obj(self) -> ObjRef {
        match ObjRef::from_word(self.0 & !Self::RESCAN) {
            Some(o) => o,
            None => unreachable!("an entry's word names an object"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip() {
        let o = ObjRef::from_index(9);
        let (s, r) = (Entry::shade(o), Entry::rescan(o));
        assert!(!s.is_rescan() && r.is_rescan());
        assert_eq!((s.obj(), r.obj()), (o, o));
        assert_ne!(s, r);
    }
}
