//! The engine's named options (balancing policy, steal amount, victim
//! selection) and the error of a configuration value that is not accepted.
//!
//! Every option has a command-line name: [`FromStr`], [`Display`](fmt::Display)
//! and `name()` agree on it, `NAMES` lists the names and `ALL` the values,
//! in declaration order (with the `serde` feature, `Serialize` writes the
//! name; with `strum`, strum's `VariantArray` and `VariantNames` give the
//! same lists). The deque kinds are the deques crate's [`DequeKind`], named
//! the same way.
//!
//! [`DequeKind`]: stealmark_deques::DequeKind

use std::fmt;
use std::str::FromStr;

/// A configuration value that could not be parsed or is out of range.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// A name that is not one of the option's values.
    UnknownName {
        /// The option being parsed (`policy`, `steal amount`, ...).
        option: &'static str,
        /// The text given.
        given: String,
        /// The accepted names.
        expected: &'static [&'static str],
    },
    /// A numeric field outside its accepted range.
    OutOfRange {
        /// The configuration field.
        field: &'static str,
        /// The value given.
        value: String,
        /// What the field accepts.
        reason: &'static str,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::UnknownName {
                option,
                given,
                expected,
            } => write!(
                f,
                "unknown {option} `{given}`; expected one of: {}",
                expected.join(", ")
            ),
            ConfigError::OutOfRange {
                field,
                value,
                reason,
            } => write!(f, "{field} = {value} is out of range: {reason}"),
        }
    }
}

impl std::error::Error for ConfigError {}

/// Gives an option enum its names: `ALL`, `NAMES`, `name()`, `Display`,
/// `FromStr` (whose error is [`ConfigError::UnknownName`] for `$option`),
/// `Into<&'static str>`, and `Serialize` and strum's lists with their
/// features.
macro_rules! named {
    ($ty:ident, $option:literal, { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl $ty {
            /// Every value, in declaration order.
            pub const ALL: &'static [$ty] = &[$($ty::$variant),+];

            /// The names of `ALL`, in the same order.
            pub const NAMES: &'static [&'static str] = &[$($name),+];

            /// The value's command-line name.
            pub const fn name(self) -> &'static str {
                match self {
                    $($ty::$variant => $name),+
                }
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }

        impl From<$ty> for &'static str {
            fn from(value: $ty) -> &'static str {
                value.name()
            }
        }

        impl FromStr for $ty {
            type Err = ConfigError;

            fn from_str(given: &str) -> Result<$ty, ConfigError> {
                $ty::ALL
                    .iter()
                    .copied()
                    .find(|value| value.name() == given)
                    .ok_or_else(|| ConfigError::UnknownName {
                        option: $option,
                        given: given.to_owned(),
                        expected: $ty::NAMES,
                    })
            }
        }

        #[cfg(feature = "serde")]
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.name())
            }
        }

        #[cfg(feature = "strum")]
        impl strum::VariantArray for $ty {
            const VARIANTS: &'static [$ty] = $ty::ALL;
        }

        #[cfg(feature = "strum")]
        impl strum::VariantNames for $ty {
            const VARIANTS: &'static [&'static str] = $ty::NAMES;
        }
    };
}

/// When a worker that still has work tries to balance with another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BalancePolicy {
    /// `on-empty`: steal only when the local stack is empty (Arora et al.),
    /// already while the prefetch FIFO holds the last objects: a worker
    /// tracing a linked list, one object at a time, then takes work to
    /// overlap with its misses.
    OnEmpty,
    /// `probabilistic`: try to balance with probability µ/len (Rudolph et
    /// al.; Hendler-Shavit §2.2.1).
    Probabilistic,
    /// `threshold`: balance when the local load has changed by a constant
    /// factor since the last balance (Lüling-Monien; Berenbrink et al.).
    Threshold,
}

named!(BalancePolicy, "policy", {
    OnEmpty => "on-empty",
    Probabilistic => "probabilistic",
    Threshold => "threshold",
});

/// How many items a steal takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StealAmount {
    /// `one`: one item per steal.
    One,
    /// `half`: half of the victim's items per steal.
    Half,
}

named!(StealAmount, "steal amount", {
    One => "one",
    Half => "half",
});

/// How a thief picks its victim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum VictimSelection {
    /// `random`: another worker chosen uniformly at random (the "random
    /// victim" of the literature).
    Random,
    /// `best-of-2`: two random other workers; the one with the longer deque.
    BestOf2,
}

named!(VictimSelection, "victim selection", {
    Random => "random",
    BestOf2 => "best-of-2",
});

#[cfg(test)]
mod tests {
    use super::{BalancePolicy, ConfigError, StealAmount, VictimSelection};
    use stealmark_deques::DequeKind;

    #[test]
    fn names_round_trip() {
        for d in DequeKind::ALL {
            assert_eq!(d.to_string().parse::<DequeKind>().unwrap(), *d);
        }
        for p in BalancePolicy::ALL {
            assert_eq!(p.to_string().parse::<BalancePolicy>().unwrap(), *p);
        }
        for s in StealAmount::ALL {
            assert_eq!(s.to_string().parse::<StealAmount>().unwrap(), *s);
        }
        for v in VictimSelection::ALL {
            assert_eq!(v.to_string().parse::<VictimSelection>().unwrap(), *v);
        }
        assert_eq!(
            BalancePolicy::NAMES,
            ["on-empty", "probabilistic", "threshold"]
        );
        assert_eq!(StealAmount::NAMES, ["one", "half"]);
        assert_eq!(VictimSelection::NAMES, ["random", "best-of-2"]);
        let into: &str = VictimSelection::BestOf2.into();
        assert_eq!(into, "best-of-2");
    }

    #[cfg(feature = "strum")]
    #[test]
    fn strum_lists_the_same_values_and_names() {
        use strum::{VariantArray, VariantNames};
        assert_eq!(
            <BalancePolicy as VariantArray>::VARIANTS,
            BalancePolicy::ALL
        );
        assert_eq!(<StealAmount as VariantNames>::VARIANTS, StealAmount::NAMES);
        assert_eq!(
            <VictimSelection as VariantNames>::VARIANTS,
            VictimSelection::NAMES
        );
    }

    #[test]
    fn unknown_name_is_a_typed_error() {
        let e = "stealhalf".parse::<DequeKind>().unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("stealhalf") && msg.contains("steal-half"),
            "{msg}"
        );
        let e = "uniform".parse::<VictimSelection>().unwrap_err();
        assert_eq!(
            e,
            ConfigError::UnknownName {
                option: "victim selection",
                given: "uniform".into(),
                expected: &["random", "best-of-2"],
            }
        );
        assert_eq!(
            e.to_string(),
            "unknown victim selection `uniform`; expected one of: random, best-of-2"
        );
        let e = "Half".parse::<StealAmount>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown steal amount `Half`; expected one of: one, half"
        );
    }
}
