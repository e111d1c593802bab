//! Tables allocated zeroed: one `calloc`, for which the allocator maps
//! fresh zero pages when the table is large (pages never written cost
//! nothing), instead of values built one by one.

use std::alloc::{alloc_zeroed, handle_alloc_error, Layout};
use std::sync::atomic::AtomicU32;

/// A type whose value of all zero bytes is valid (and is the value a fresh
/// table wants).
///
/// # Safety
///
/// All zero bytes must be a valid value of the type: a primitive or
/// `repr(C)` type made of integers and atomic integers.
pub(crate) unsafe trait Zeroable: Sized {}

// SAFETY: `AtomicU32` has the size, alignment and bit validity of `u32` (its
// documentation guarantees it), and zero is a `u32`.
unsafe impl Zeroable for AtomicU32 {}

/// `n` values of `T`, every byte zero, in one zeroed allocation.
pub(crate) fn zeroed<T: Zeroable>(n: usize) -> Box<[T]> {
    let layout = Layout::array::<T>(n).expect("a table's size overflows isize");
    if layout.size() == 0 {
        return Box::new([]);
    }
    // SAFETY: the layout's size is not zero.
    let table = unsafe { alloc_zeroed(layout) }.cast::<T>();
    if table.is_null() {
        handle_alloc_error(layout);
    }
    // SAFETY: `table` comes from the global allocator with the layout of
    // `n` values of `T` (the layout a `Box<[T]>` of length `n` frees), and
    // its zero bytes are `n` valid values (`Zeroable`'s contract); nothing
    // else refers to it.
    unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(table, n)) }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use super::*;

    #[test]
    fn tables_of_every_size_hold_zeros() {
        for n in [0, 1, 7, 4096] {
            let t: Box<[AtomicU32]> = zeroed(n);
            assert_eq!(t.len(), n);
            assert!(t.iter().all(|v| v.load(Ordering::Relaxed) == 0));
        }
    }
}
