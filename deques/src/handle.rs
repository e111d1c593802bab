//! What the deques' handles implement alike, written once as two macros:
//!
//! - `owner_methods!`, inside an `impl Owner` block: `stats`,
//!   `reset_stats`, for the handles that share an `Arc`, `thief`, and for
//!   those whose array grows (a `SharedBuffer`), `quiesce`;
//! - `array_methods!`, inside an owner's own `impl` block: `capacity` and
//!   `retired`, for the owners whose array grows;
//! - `work_deque!`: `WorkDeque` for a kind whose handles the module's
//!   `new(capacity, before_wrap)` makes;
//! - `arc_handles!`: `Clone` for a thief handle that holds only an `Arc`
//!   of the shared deque, and `Debug` for it and its owner.
//!
//! Neither touches a deque's algorithm: they read the `stats` field, clone
//! the `Arc`, and call the public `len` and accessor methods.

/// Implements, inside an `impl Owner for ...` block, the
/// [`Owner`](crate::Owner) methods that every owner handle implements the
/// same way:
///
/// - `owner_methods!()`: [`stats`](crate::Owner::stats) and
///   [`reset_stats`](crate::Owner::reset_stats), over the handle's field
///   `stats: OwnerStats`;
/// - `owner_methods!(thief: Thief { field })`: those two and
///   [`thief`](crate::Owner::thief), which returns `Thief { field }` with a
///   new reference to the owner's `Arc` field `field` (the thief handle's
///   only field);
/// - `owner_methods!(thief: Thief { field }, quiesce)`: those three and
///   [`quiesce`](crate::Owner::quiesce), which frees the arrays retired in
///   the `SharedBuffer` at `field.buffer`.
macro_rules! owner_methods {
    () => {
        fn stats(&self) -> &$crate::OwnerStats {
            &self.stats
        }

        fn reset_stats(&mut self) {
            self.stats = $crate::OwnerStats::default();
        }
    };
    (thief: $thief:ident { $field:ident }) => {
        fn thief(&self) -> Self::Thief {
            $thief {
                $field: ::std::sync::Arc::clone(&self.$field),
            }
        }

        $crate::handle::owner_methods!();
    };
    (thief: $thief:ident { $field:ident }, quiesce) => {
        $crate::handle::owner_methods!(thief: $thief { $field });

        /// Frees the arrays retired by resizes so far (see
        /// [`Owner::quiesce`](crate::Owner::quiesce)).
        unsafe fn quiesce(&mut self) {
            // SAFETY: the caller guarantees that no thief is inside a steal
            // from this deque, so no thread holds a retired array.
            unsafe { self.$field.buffer.free_retired() }
        }
    };
}

/// Implements, inside an owner handle's own `impl` block, the accessors of
/// the growable array held as `SharedBuffer` in `inner.buffer`:
/// `capacity` (its current capacity) and `retired` (the arrays retired by
/// resizes and not freed yet).
macro_rules! array_methods {
    () => {
        /// The current capacity of the circular array.
        pub fn capacity(&self) -> usize {
            self.inner.buffer.owner_load().capacity()
        }

        /// The number of retired arrays not freed yet (always zero with
        /// epoch-based reclamation, except under Miri).
        pub fn retired(&self) -> usize {
            self.inner.buffer.retired_len()
        }
    };
}

/// Implements `Clone` and `Debug` for the handles of a deque whose thief
/// handle holds only an `Arc` of the shared deque:
///
/// ```text
/// arc_handles!(Owner, Thief, field, [method, ...]);
/// arc_handles!(Owner, Thief<R: Bound>, field, [method, ...]);
/// ```
///
/// - `Clone` for `Thief`: a new handle on the same deque (a new reference
///   to the `Arc` in `field`), with no bound on the type parameter `R`,
///   which a derived `Clone` would require to be `Clone`;
/// - `Debug` for `Thief`: its [`len`](crate::Thief::len);
/// - `Debug` for `Owner` (which takes the same type parameter): its
///   [`len`](crate::Owner::len), the value of each listed method (such as
///   `capacity`), and its `stats` field.
macro_rules! arc_handles {
    (
        $owner:ident,
        $thief:ident $(<$param:ident: $bound:path>)?,
        $field:ident,
        [$($method:ident),* $(,)?]
    ) => {
        impl $(<$param: $bound>)? Clone for $thief $(<$param>)? {
            fn clone(&self) -> Self {
                $thief {
                    $field: ::std::sync::Arc::clone(&self.$field),
                }
            }
        }

        impl $(<$param: $bound>)? ::std::fmt::Debug for $owner $(<$param>)? {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.debug_struct(stringify!($owner))
                    .field("len", &$crate::Owner::len(self))
                    $(.field(stringify!($method), &self.$method()))*
                    .field("stats", &self.stats)
                    .finish()
            }
        }

        impl $(<$param: $bound>)? ::std::fmt::Debug for $thief $(<$param>)? {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.debug_struct(stringify!($thief))
                    .field("len", &$crate::Thief::len(self))
                    .finish()
            }
        }
    };
}

/// Implements [`WorkDeque`](crate::WorkDeque) for the kind `Kind`, whose
/// handles are `Owner<R>` and `Thief<R>` for the reclamation `R`, made by
/// the calling module's `fn new(capacity, before_wrap)`:
///
/// ```text
/// work_deque!(Kind: Owner<R>, Thief<R>, DequeKind::Variant);
/// ```
///
/// `with_capacity(c)` is `new(c, 0)`; `with_capacity_near_wrap(c, w)` is
/// `new(c, w)`.
macro_rules! work_deque {
    ($kind:ident: $owner:ident<$r:ty>, $thief:ident<$r2:ty>, $tag:path) => {
        impl $crate::WorkDeque for $kind {
            type Owner = $owner<$r>;
            type Thief = $thief<$r2>;
            const KIND: $crate::DequeKind = $tag;

            fn with_capacity(capacity: usize) -> (Self::Owner, Self::Thief) {
                new(capacity, 0)
            }

            fn with_capacity_near_wrap(
                capacity: usize,
                before_wrap: usize,
            ) -> (Self::Owner, Self::Thief) {
                new(capacity, before_wrap)
            }
        }
    };
}

pub(crate) use {arc_handles, array_methods, owner_methods, work_deque};
