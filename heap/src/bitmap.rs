//! [`MarkBitmap`]: a set of mark indices, one bit each.

use std::fmt;

/// A plain (non-atomic) bitmap over mark indices `0..len`.
///
/// The oracle returns its marked set as one; a parallel marker converts its
/// atomic bitmap with [`MarkBitmap::from_words`] and compares with `==`.
/// Bits at or past `len` are always zero, so equality is set equality.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct MarkBitmap {
    words: Vec<u64>,
    len: usize,
}

impl fmt::Debug for MarkBitmap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MarkBitmap")
            .field("len", &self.len)
            .field("count", &self.count())
            .finish()
    }
}

impl MarkBitmap {
    /// An empty bitmap for indices `0..len`.
    pub fn new(len: usize) -> MarkBitmap {
        MarkBitmap {
            words: vec![0; len.div_ceil(64)],
            len,
        }
    }

    /// A bitmap from its words (bit `i % 64` of word `i / 64` is index `i`).
    /// Returns `None` if `words` is not `len.div_ceil(64)` long or has a bit
    /// set at or past `len`.
    pub fn from_words(words: Vec<u64>, len: usize) -> Option<MarkBitmap> {
        if words.len() != len.div_ceil(64) {
            return None;
        }
        if len % 64 != 0 {
            if let Some(&last) = words.last() {
                if last >> (len % 64) != 0 {
                    return None;
                }
            }
        }
        Some(MarkBitmap { words, len })
    }

    /// The number of indices the bitmap covers.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the bitmap covers no index at all.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The words, as in [`MarkBitmap::from_words`].
    pub fn as_words(&self) -> &[u64] {
        &self.words
    }

    /// Sets bit `index`; returns whether it was clear before.
    ///
    /// # Panics
    ///
    /// If `index >= len`.
    #[inline]
    pub fn insert(&mut self, index: usize) -> bool {
        assert!(
            index < self.len,
            "mark index {index} out of range 0..{}",
            self.len
        );
        let word = &mut self.words[index / 64];
        let bit = 1u64 << (index % 64);
        let was_clear = *word & bit == 0;
        *word |= bit;
        was_clear
    }

    /// Whether bit `index` is set (`false` past the end).
    #[inline]
    pub fn contains(&self, index: usize) -> bool {
        index < self.len && self.words[index / 64] & (1 << (index % 64)) != 0
    }

    /// The number of set bits.
    pub fn count(&self) -> u64 {
        self.words.iter().map(|w| u64::from(w.count_ones())).sum()
    }

    /// The set indices, in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| {
            let mut rest = w;
            std::iter::from_fn(move || {
                if rest == 0 {
                    return None;
                }
                let bit = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                Some(i * 64 + bit)
            })
        })
    }

    /// The smallest index set in exactly one of the two bitmaps, for
    /// reporting a mismatch. `None` if they are equal (lengths aside).
    pub fn first_difference(&self, other: &MarkBitmap) -> Option<usize> {
        let n = self.words.len().max(other.words.len());
        (0..n).find_map(|i| {
            let a = self.words.get(i).copied().unwrap_or(0);
            let b = other.words.get(i).copied().unwrap_or(0);
            let diff = a ^ b;
            (diff != 0).then(|| i * 64 + diff.trailing_zeros() as usize)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bitmap_set_operations() {
        let mut b = MarkBitmap::new(130);
        assert!(b.insert(0));
        assert!(b.insert(129));
        assert!(!b.insert(129));
        assert!(b.insert(64));
        assert_eq!(b.count(), 3);
        assert!(b.contains(64) && !b.contains(65) && !b.contains(1000));
        assert_eq!(b.iter().collect::<Vec<_>>(), vec![0, 64, 129]);
        let c = MarkBitmap::from_words(b.as_words().to_vec(), 130).unwrap();
        assert_eq!(b, c);
        let mut d = c.clone();
        d.insert(7);
        assert_eq!(b.first_difference(&d), Some(7));
        assert_eq!(b.first_difference(&c), None);
        assert!(MarkBitmap::from_words(vec![0; 3], 130).is_some());
        assert!(MarkBitmap::from_words(vec![0, 0, 1 << 2], 130).is_none());
        assert!(MarkBitmap::from_words(vec![0; 2], 130).is_none());
    }
}
