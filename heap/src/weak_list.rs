//! The compressed layout's weak-slot list (the sorted half-word positions
//! of the weak slots of weak-slots objects), and an index over it by arena
//! region, so that a scan finds an object's first entry in a few steps.
//!
//! A binary search of the whole list per object scanned costs about twenty
//! dependent loads, most of them cache misses on a large list: on the heap
//! of a V8 snapshot, where most types hold some weak edge, the search was
//! the larger part of the scan's slow path. The index names, for each
//! region of [`BUCKET_HALVES`] half words, where its entries start: a
//! lookup reads two neighbouring bucket starts and searches only the few
//! entries between them.

/// Half words of arena per bucket of the index (16 KiB): the index takes a
/// word per 16 KiB of arena, and a bucket holds few entries.
const BUCKET_SHIFT: u32 = 12;

/// Half words of arena per bucket of the index.
pub(crate) const BUCKET_HALVES: u64 = 1 << BUCKET_SHIFT;

/// The index of `list` (validated: increasing little-endian half-word
/// positions below `halves`): for each bucket `b`, the first entry at or
/// past half word `b * BUCKET_HALVES`, and the list's length after the
/// last. Empty for an empty list.
pub(crate) fn bucket_starts(list: &[u64], halves: u64) -> Vec<usize> {
    if list.is_empty() {
        return Vec::new();
    }
    let buckets = halves.div_ceil(BUCKET_HALVES) as usize;
    let mut starts = Vec::with_capacity(buckets + 1);
    let mut k = 0;
    for b in 0..buckets as u64 {
        let from = b << BUCKET_SHIFT;
        while k < list.len() && u64::from_le(list[k]) < from {
            k += 1;
        }
        starts.push(k);
    }
    starts.push(list.len());
    starts
}

/// A weak-slot list with its index ([`bucket_starts`]), as a view reads it.
#[derive(Clone, Copy)]
pub(crate) struct WeakList<'a> {
    entries: &'a [u64],
    buckets: &'a [usize],
}

impl<'a> WeakList<'a> {
    /// The list `entries` with its index `buckets`, made by
    /// [`bucket_starts`] from the same list.
    pub(crate) fn new(entries: &'a [u64], buckets: &'a [usize]) -> WeakList<'a> {
        debug_assert_eq!(entries.is_empty(), buckets.is_empty());
        WeakList { entries, buckets }
    }

    /// The index of the first entry at or past half word `j`. A position
    /// past the indexed arena searches the whole list.
    #[inline]
    pub(crate) fn first_at_or_after(&self, j: u64) -> usize {
        let b = (j >> BUCKET_SHIFT) as usize;
        let (lo, hi) = match (self.buckets.get(b), self.buckets.get(b + 1)) {
            (Some(&lo), Some(&hi)) => (lo, hi),
            _ => (0, self.entries.len()),
        };
        lo + self.entries[lo..hi].partition_point(|&e| u64::from_le(e) < j)
    }

    /// Whether entry `k` is half word `j`.
    #[inline]
    pub(crate) fn is_at(&self, k: usize, j: u64) -> bool {
        self.entries.get(k).is_some_and(|&e| u64::from_le(e) == j)
    }

    /// Whether half word `j` is in the list.
    pub(crate) fn contains(&self, j: u64) -> bool {
        self.is_at(self.first_at_or_after(j), j)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lookups through the index agree with a search of the whole list, for
    /// every position of an arena of a few buckets, with entries clustered,
    /// spread, at bucket edges and absent from whole buckets.
    #[test]
    fn the_index_finds_what_a_whole_search_finds() {
        let halves = 5 * BUCKET_HALVES + 17;
        let positions: Vec<u64> = [3, 4, 5, 100]
            .into_iter()
            .chain([BUCKET_HALVES - 1, BUCKET_HALVES, BUCKET_HALVES + 1])
            .chain((0..40).map(|i| 3 * BUCKET_HALVES + 7 * i))
            .chain([5 * BUCKET_HALVES, halves - 1])
            .collect();
        let list: Vec<u64> = positions.iter().map(|p| p.to_le()).collect();
        let buckets = bucket_starts(&list, halves);
        assert_eq!(buckets.len(), halves.div_ceil(BUCKET_HALVES) as usize + 1);
        let weak = WeakList::new(&list, &buckets);
        let step = if cfg!(miri) { 61 } else { 1 };
        for j in (0..halves + 3).step_by(step) {
            let whole = positions.partition_point(|&p| p < j);
            assert_eq!(weak.first_at_or_after(j), whole, "{j}");
            assert_eq!(weak.contains(j), positions.contains(&j), "{j}");
        }
    }

    #[test]
    fn an_empty_list_has_an_empty_index() {
        assert!(bucket_starts(&[], 1 << 20).is_empty());
        let weak = WeakList::new(&[], &[]);
        assert_eq!(weak.first_at_or_after(12_345), 0);
        assert!(!weak.contains(0));
    }
}
