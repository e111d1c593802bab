//! [`prefetch_read`] and [`prefetch_object`]: cache hints that never fault.

/// Issues a read prefetch for the cache line holding `addr`, where the target
/// supports one. Never faults, whatever the address.
///
/// ```
/// let x = 7u64;
/// stealmark_model::prefetch_read((&x as *const u64).cast());
/// stealmark_model::prefetch_read(std::ptr::null()); // still fine
/// ```
#[inline(always)]
pub fn prefetch_read(addr: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetcht0` is a hint; it never faults and never reads memory
    // architecturally, so any address is sound. SSE is baseline on x86_64.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(addr.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = addr;
}

/// Prefetches the first 64 bytes of an object at `addr`: the cache line
/// holding `addr` and, where those bytes cross into it, the next one. An
/// object of up to 64 bytes lies in those two lines whatever its offset in
/// its line, and a larger one has its header and first slots there, which a
/// scan reads first. Never faults, whatever the address.
///
/// For [`ObjectModel::prefetch`](crate::ObjectModel::prefetch) where one
/// line is not enough: at 8-byte alignment an object of 32 bytes crosses a
/// line boundary at 3 of its 8 possible offsets, one of 48 bytes at 5, and
/// the scan then misses on the second line. Whether the second hint pays
/// for itself depends on the heap: measure (where allocation is sequential,
/// the hardware may fetch the next line anyway).
///
/// ```
/// let x = [0u64; 16];
/// stealmark_model::prefetch_object(x.as_ptr().cast());
/// stealmark_model::prefetch_object(std::ptr::null()); // still fine
/// ```
#[inline(always)]
pub fn prefetch_object(addr: *const u8) {
    prefetch_read(addr);
    // The last word of the 64 bytes: on the next line exactly when they
    // cross into it (else a second hint for the same line, which is free).
    prefetch_read(addr.wrapping_add(56));
}
