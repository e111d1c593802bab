//! [`prefetch_read`]: a cache hint that never faults.

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
