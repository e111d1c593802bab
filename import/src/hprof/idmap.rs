//! A compact map from HPROF object ids to a 64-bit value (an object's
//! ordinal, then its arena position).
//!
//! Sorted `(id, value)` pairs, 16 bytes per object, with a directory on the
//! high bits of the id: dump ids are addresses packed into a few heap
//! regions, so the directory narrows most look-ups to a handful of pairs and
//! a look-up costs one or two cache misses instead of a full binary search.

/// The id → value map.
pub(crate) struct IdMap {
    pairs: Vec<(u64, u64)>,
    min: u64,
    shift: u32,
    /// `dir[b]` is the index of the first pair whose bucket is `b` or more.
    dir: Vec<u32>,
}

impl IdMap {
    /// Sorts `pairs` and builds the directory. Returns the smallest id that
    /// occurs twice, if any, as the error.
    pub(crate) fn new(mut pairs: Vec<(u64, u64)>) -> Result<IdMap, u64> {
        // Dumps list objects in long runs of ascending addresses (classes
        // first, then each heap region or segment in address order): the
        // stable sort finds the runs and merges them in near-linear time.
        pairs.sort();
        if let Some(w) = pairs.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(w[0].0);
        }
        let (min, max) = match (pairs.first(), pairs.last()) {
            (Some(a), Some(b)) => (a.0, b.0),
            _ => (0, 0),
        };
        // About one bucket per object: the smallest shift that maps the id
        // range onto at most `pairs.len()` buckets.
        let span = max - min;
        let target = (pairs.len() as u64).max(1);
        let mut shift = 0;
        while shift < 64 && (span >> shift) >= target {
            shift += 1;
        }
        let buckets = if shift >= 64 {
            1
        } else {
            (span >> shift) as usize + 1
        };
        let mut dir = Vec::with_capacity(buckets + 1);
        let mut i = 0usize;
        for b in 0..=buckets as u64 {
            while i < pairs.len() && bucket(pairs[i].0, min, shift) < b {
                i += 1;
            }
            dir.push(i as u32);
        }
        Ok(IdMap {
            pairs,
            min,
            shift,
            dir,
        })
    }

    /// The index in `pairs` of `id`, if it is in the map.
    #[inline]
    fn find(&self, id: u64) -> Option<usize> {
        if id < self.min {
            return None;
        }
        let b = bucket(id, self.min, self.shift) as usize;
        let (&lo, &hi) = (self.dir.get(b)?, self.dir.get(b + 1)?);
        let slice = self.pairs.get(lo as usize..hi as usize)?;
        slice
            .binary_search_by_key(&id, |p| p.0)
            .ok()
            .map(|i| lo as usize + i)
    }

    /// The value of `id`, if it is in the map.
    #[inline]
    pub(crate) fn get(&self, id: u64) -> Option<u64> {
        self.find(id).map(|i| self.pairs[i].1)
    }

    /// The value of `id`, for update.
    #[inline]
    pub(crate) fn get_mut(&mut self, id: u64) -> Option<&mut u64> {
        self.find(id).map(|i| &mut self.pairs[i].1)
    }
}

#[inline]
fn bucket(id: u64, min: u64, shift: u32) -> u64 {
    (id - min).checked_shr(shift).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_id_and_only_those() {
        let ids: Vec<u64> = (0..5000u64)
            .map(|i| 0x7f00_0000_0000 + i * i * 24 + (i % 7) * 8)
            .collect();
        let pairs: Vec<(u64, u64)> = ids
            .iter()
            .rev()
            .enumerate()
            .map(|(o, &id)| (id, o as u64))
            .collect();
        let mut m = IdMap::new(pairs.clone()).unwrap();
        for &(id, o) in &pairs {
            assert_eq!(m.get(id), Some(o));
            assert_eq!(m.get(id + 1), None);
        }
        assert_eq!(m.get(0), None);
        assert_eq!(m.get(u64::MAX), None);
        *m.get_mut(pairs[7].0).unwrap() = 99;
        assert_eq!(m.get(pairs[7].0), Some(99));
        assert!(m.get_mut(1).is_none());
    }

    #[test]
    fn extremes_and_duplicates() {
        let m = IdMap::new(vec![(u64::MAX, 0), (1, 1)]).unwrap();
        assert_eq!(m.get(u64::MAX), Some(0));
        assert_eq!(m.get(1), Some(1));
        assert_eq!(m.get(2), None);
        let m = IdMap::new(Vec::new()).unwrap();
        assert_eq!(m.get(5), None);
        assert_eq!(IdMap::new(vec![(3, 0), (9, 1), (3, 2)]).err(), Some(3));
    }
}
