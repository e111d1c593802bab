//! What the deques' handles implement alike, written once as two macros:
//!
//! - `owner_methods!`, inside an `impl Owner` block: `stats`,
//!   `reset_stats` and, for the handles that share an `Arc`, `thief`;
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
///   only field).
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

pub(crate) use {arc_handles, owner_methods};
