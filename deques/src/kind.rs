//! The deque kinds by name, and the one dispatch from a kind chosen at run
//! time to code monomorphised for its [`WorkDeque`] type.
//!
//! Every crate that picks a deque by name (the marker, the balancing
//! models, the command line) parses a [`DequeKind`] and hands a
//! [`DequeVisitor`] to [`DequeKind::dispatch`], which calls the visitor's
//! generic method with the kind's type. The visitor's body is compiled once
//! per kind, so what it runs (a mark loop, a simulation) inlines the deque's
//! operations: the only run-time choice is the one `match` in `dispatch`.
//!
//! ```
//! use stealmark_deques::{DequeKind, DequeVisitor, Owner, WorkDeque};
//!
//! /// Pushes `n` items into a new deque and returns its length.
//! struct Fill(usize);
//! impl DequeVisitor for Fill {
//!     type Output = usize;
//!     fn visit<D: WorkDeque>(self) -> usize {
//!         let (mut owner, _thief) = D::with_capacity(self.0);
//!         for i in 0..self.0 {
//!             owner.push(i).unwrap();
//!         }
//!         owner.len()
//!     }
//! }
//!
//! let kind: DequeKind = "steal-half-q".parse().unwrap();
//! assert_eq!(kind, DequeKind::StealHalfQuiescent);
//! assert_eq!(kind.dispatch(Fill(100)), 100);
//! ```

use std::fmt;
use std::str::FromStr;

use crate::abp::Abp;
use crate::chase_lev::{ChaseLev, ChaseLevQuiescent};
#[cfg(feature = "baselines")]
use crate::idempotent::Idempotent;
#[cfg(feature = "baselines")]
use crate::locked::Locked;
#[cfg(feature = "baselines")]
use crate::peer::Crossbeam;
use crate::steal_half::{StealHalf, StealHalfQuiescent};
use crate::WorkDeque;

/// A deque kind, by its command-line name: one per [`WorkDeque`] type of
/// this crate.
///
/// [`FromStr`], [`Display`](fmt::Display), [`DequeKind::name`] and
/// `Into<&'static str>` all use the names below (and so does `Serialize`,
/// with the `serde` feature); [`DequeKind::NAMES`] lists them and
/// [`DequeKind::ALL`] lists every kind, in declaration order.
/// [`DequeKind::ALGORITHMS`] leaves out the two quiescent-reclamation
/// variants.
///
/// The mission's deques (StealHalf, Chase-Lev, ABP) are always built; the
/// `locked` and `crossbeam` baselines and the `idempotent` mode only with
/// the crate's `baselines` feature, so a runtime compiles none of them.
/// Kinds may be added, so a `match` on a kind needs a wildcard arm.
///
/// ```
/// use stealmark_deques::DequeKind;
///
/// assert_eq!(DequeKind::ChaseLevQuiescent.to_string(), "chase-lev-q");
/// assert!(DequeKind::NAMES.contains(&"steal-half"));
/// let e = "stealhalf".parse::<DequeKind>().unwrap_err();
/// assert!(e.to_string().contains("steal-half, chase-lev"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DequeKind {
    /// `steal-half`: [`StealHalf`], the Hendler-Shavit extended deque with
    /// epoch-based reclamation.
    StealHalf,
    /// `chase-lev`: [`ChaseLev`], the Chase-Lev dynamic circular deque with
    /// epoch-based reclamation.
    ChaseLev,
    /// `abp`: [`Abp`], the bounded Arora-Blumofe-Plaxton deque.
    Abp,
    /// `locked`: [`Locked`], a mutex around a `VecDeque` (the baseline;
    /// `baselines` feature).
    #[cfg(feature = "baselines")]
    Locked,
    /// `crossbeam`: [`Crossbeam`], crossbeam-deque (the peer; `baselines`
    /// feature).
    #[cfg(feature = "baselines")]
    Crossbeam,
    /// `steal-half-q`: [`StealHalfQuiescent`], StealHalf with
    /// quiescent-point reclamation.
    StealHalfQuiescent,
    /// `chase-lev-q`: [`ChaseLevQuiescent`], Chase-Lev with quiescent-point
    /// reclamation.
    ChaseLevQuiescent,
    /// `idempotent`: [`Idempotent`], a steal-half deque whose owner uses no
    /// fence and no CAS, and whose items come out **at least once**: an
    /// item may be returned twice (see [`DequeKind::exactly_once`];
    /// `baselines` feature).
    #[cfg(feature = "baselines")]
    Idempotent,
}

impl DequeKind {
    /// Every kind of this build, in declaration order.
    pub const ALL: &'static [DequeKind] = &[
        DequeKind::StealHalf,
        DequeKind::ChaseLev,
        DequeKind::Abp,
        #[cfg(feature = "baselines")]
        DequeKind::Locked,
        #[cfg(feature = "baselines")]
        DequeKind::Crossbeam,
        DequeKind::StealHalfQuiescent,
        DequeKind::ChaseLevQuiescent,
        #[cfg(feature = "baselines")]
        DequeKind::Idempotent,
    ];

    /// The names of [`DequeKind::ALL`], in the same order.
    pub const NAMES: &'static [&'static str] = &[
        "steal-half",
        "chase-lev",
        "abp",
        #[cfg(feature = "baselines")]
        "locked",
        #[cfg(feature = "baselines")]
        "crossbeam",
        "steal-half-q",
        "chase-lev-q",
        #[cfg(feature = "baselines")]
        "idempotent",
    ];

    /// One kind per algorithm: every kind except `steal-half-q` and
    /// `chase-lev-q`, which run the algorithms of `steal-half` and
    /// `chase-lev` and differ only in when they free retired arrays. The
    /// default set of the comparisons that run each kind (the marker's test
    /// matrices, `stealmark bench` and `stealmark demo`).
    pub const ALGORITHMS: &'static [DequeKind] = &[
        DequeKind::StealHalf,
        DequeKind::ChaseLev,
        DequeKind::Abp,
        #[cfg(feature = "baselines")]
        DequeKind::Locked,
        #[cfg(feature = "baselines")]
        DequeKind::Crossbeam,
        #[cfg(feature = "baselines")]
        DequeKind::Idempotent,
    ];

    /// The kind's command-line name.
    pub const fn name(self) -> &'static str {
        match self {
            DequeKind::StealHalf => "steal-half",
            DequeKind::ChaseLev => "chase-lev",
            DequeKind::Abp => "abp",
            #[cfg(feature = "baselines")]
            DequeKind::Locked => "locked",
            #[cfg(feature = "baselines")]
            DequeKind::Crossbeam => "crossbeam",
            DequeKind::StealHalfQuiescent => "steal-half-q",
            DequeKind::ChaseLevQuiescent => "chase-lev-q",
            #[cfg(feature = "baselines")]
            DequeKind::Idempotent => "idempotent",
        }
    }

    /// Whether every pushed item comes out exactly once. False only for
    /// `DequeKind::Idempotent` (`baselines` feature), whose items come out
    /// at least once (an item may be returned to the owner and to a thief,
    /// or to two thieves): a user of that kind must tolerate taking an item
    /// twice.
    pub const fn exactly_once(self) -> bool {
        match self {
            #[cfg(feature = "baselines")]
            DequeKind::Idempotent => false,
            _ => true,
        }
    }

    /// Runs `visitor` with this kind's [`WorkDeque`] type: the one place
    /// where a kind chosen at run time becomes a type.
    pub fn dispatch<V: DequeVisitor>(self, visitor: V) -> V::Output {
        match self {
            DequeKind::StealHalf => visitor.visit::<StealHalf>(),
            DequeKind::ChaseLev => visitor.visit::<ChaseLev>(),
            DequeKind::Abp => visitor.visit::<Abp>(),
            #[cfg(feature = "baselines")]
            DequeKind::Locked => visitor.visit::<Locked>(),
            #[cfg(feature = "baselines")]
            DequeKind::Crossbeam => visitor.visit::<Crossbeam>(),
            DequeKind::StealHalfQuiescent => visitor.visit::<StealHalfQuiescent>(),
            DequeKind::ChaseLevQuiescent => visitor.visit::<ChaseLevQuiescent>(),
            #[cfg(feature = "baselines")]
            DequeKind::Idempotent => visitor.visit::<Idempotent>(),
        }
    }
}

impl fmt::Display for DequeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl From<DequeKind> for &'static str {
    fn from(kind: DequeKind) -> &'static str {
        kind.name()
    }
}

impl FromStr for DequeKind {
    type Err = UnknownDequeKind;

    fn from_str(given: &str) -> Result<DequeKind, UnknownDequeKind> {
        DequeKind::ALL
            .iter()
            .copied()
            .find(|kind| kind.name() == given)
            .ok_or_else(|| UnknownDequeKind::new(given))
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for DequeKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

#[cfg(feature = "strum")]
impl strum::VariantArray for DequeKind {
    const VARIANTS: &'static [DequeKind] = DequeKind::ALL;
}

#[cfg(feature = "strum")]
impl strum::VariantNames for DequeKind {
    const VARIANTS: &'static [&'static str] = DequeKind::NAMES;
}

/// A computation generic over the deque type, for [`DequeKind::dispatch`]
/// to run with the type of a kind chosen at run time. Its fields carry the
/// computation's arguments.
pub trait DequeVisitor {
    /// What the computation returns.
    type Output;
    /// Runs the computation over deque type `D`.
    fn visit<D: WorkDeque>(self) -> Self::Output;
}

/// A name that is not a [`DequeKind`]'s: the error of parsing one. It says
/// what was given and which names are accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownDequeKind {
    /// The text given.
    pub given: String,
}

impl UnknownDequeKind {
    /// The error for `given`.
    fn new(given: &str) -> UnknownDequeKind {
        UnknownDequeKind {
            given: given.to_owned(),
        }
    }
}

impl fmt::Display for UnknownDequeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown deque `{}`; expected one of: {}",
            self.given,
            DequeKind::NAMES.join(", ")
        )
    }
}

impl std::error::Error for UnknownDequeKind {}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// The kind that a deque type says it is.
    struct KindOf;
    impl DequeVisitor for KindOf {
        type Output = DequeKind;
        fn visit<D: WorkDeque>(self) -> DequeKind {
            D::KIND
        }
    }

    #[test]
    fn dispatch_and_kind_agree_and_names_round_trip() {
        for &kind in DequeKind::ALL {
            assert_eq!(kind.dispatch(KindOf), kind);
            assert_eq!(kind.to_string().parse::<DequeKind>(), Ok(kind));
            let name: &'static str = kind.into();
            assert_eq!(name, kind.to_string());
        }
        let names: Vec<&str> = DequeKind::ALL.iter().map(|k| k.name()).collect();
        assert_eq!(names, DequeKind::NAMES);
        assert_eq!(
            DequeKind::NAMES,
            [
                "steal-half",
                "chase-lev",
                "abp",
                "locked",
                "crossbeam",
                "steal-half-q",
                "chase-lev-q",
                "idempotent"
            ]
        );
    }

    #[cfg(feature = "strum")]
    #[test]
    fn strum_lists_the_same_kinds_and_names() {
        assert_eq!(<DequeKind as strum::VariantArray>::VARIANTS, DequeKind::ALL);
        assert_eq!(
            <DequeKind as strum::VariantNames>::VARIANTS,
            DequeKind::NAMES
        );
    }

    #[test]
    fn only_the_idempotent_kind_may_return_an_item_twice() {
        for &kind in DequeKind::ALL {
            assert_eq!(kind.exactly_once(), kind != DequeKind::Idempotent, "{kind}");
        }
    }

    #[test]
    fn the_algorithms_are_every_kind_but_the_quiescent_variants() {
        let quiescent = [DequeKind::StealHalfQuiescent, DequeKind::ChaseLevQuiescent];
        for &kind in DequeKind::ALL {
            assert_ne!(
                DequeKind::ALGORITHMS.contains(&kind),
                quiescent.contains(&kind),
                "{kind}"
            );
        }
    }
}
