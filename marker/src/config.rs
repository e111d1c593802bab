//! Run-time configuration of the mark engine: [`MarkerConfig`], with a
//! getter and a setter per knob. The knobs a runtime sets (workers, deque
//! kind and capacity, array chunks, live counting) are always there; the
//! research knobs (balancing, stealing, prefetching, private work,
//! ephemeron rounds, timeline, spans, seed) need the `research` feature.
//! The named options are in [`crate::options`].

pub use stealmark_deques::DequeKind;

pub use crate::options::{BalancePolicy, ConfigError, StealAmount, VictimSelection};

/// The full engine configuration: [`MarkerConfig::with_workers`], then the
/// setters, which chain; [`crate::Marker::new`] checks the result
/// ([`MarkerConfig::validate`]).
///
/// ```
/// use stealmark_marker::{DequeKind, MarkerConfig};
/// let mut c = MarkerConfig::with_workers(4);
/// c.set_deque("chase-lev".parse().unwrap()).set_count_live(false);
/// assert_eq!(c.deque(), DequeKind::ChaseLev);
/// assert!(!c.count_live());
/// c.validate().unwrap();
/// ```
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct MarkerConfig {
    /// Number of GC workers (at least 1).
    pub(crate) workers: usize,
    /// The deque kind.
    pub(crate) deque: DequeKind,
    /// The balancing policy for workers that still have work.
    pub(crate) policy: BalancePolicy,
    /// Items taken per steal.
    pub(crate) steal: StealAmount,
    /// Victim selection.
    pub(crate) victim: VictimSelection,
    /// µ of the probabilistic policy.
    pub(crate) mu: f64,
    /// The constant factor of the threshold policy (> 1).
    pub(crate) threshold_factor: f64,
    /// Objects scanned between two evaluations of the balancing policy.
    pub(crate) balance_interval: u32,
    /// Depth of the prefetch FIFO (0 turns prefetching off).
    pub(crate) prefetch: usize,
    /// Keep new grey objects on a private stack.
    pub(crate) private_work: bool,
    /// With private work: the items a busy worker keeps in its deque.
    pub(crate) deque_reserve: usize,
    /// Capacity of each worker's deque.
    pub(crate) deque_capacity: usize,
    /// The chunk size of large arrays.
    pub(crate) array_chunk: usize,
    /// Count live objects, their bytes and a histogram by type.
    pub(crate) count_live: bool,
    /// Rounds of ephemeron resolution with a frozen key index.
    pub(crate) ephemeron_frozen_rounds: u32,
    /// Objects scanned between two timeline samples (0: off).
    pub(crate) timeline_interval: u32,
    /// Record timestamped spans.
    pub(crate) spans: bool,
    /// Base seed of the workers' random number generators.
    pub(crate) seed: u64,
}

/// A getter and a chaining setter per knob, documented by `$doc`; `$gate`
/// puts both behind a feature.
macro_rules! knobs {
    ($($(#[$gate:meta])* $field:ident, $setter:ident: $ty:ty, $doc:literal;)+) => {
        impl MarkerConfig {
            $(
                #[doc = $doc]
                $(#[$gate])*
                #[inline]
                pub fn $field(&self) -> $ty {
                    self.$field
                }

                #[doc = concat!("Sets [`", stringify!($field), "`](MarkerConfig::", stringify!($field), ").")]
                $(#[$gate])*
                pub fn $setter(&mut self, value: $ty) -> &mut MarkerConfig {
                    self.$field = value;
                    self
                }
            )+
        }
    };
}

knobs! {
    workers, set_workers: usize,
    "Number of GC workers (1 to 1024): the thread that calls a collection \
     and `workers - 1` persistent threads.";
    deque, set_deque: DequeKind,
    "The deque kind (default `steal-half`).";
    deque_capacity, set_deque_capacity: usize,
    "Capacity of each worker's deque (16 to 2^26): fixed for `abp`, initial \
     for the others.";
    array_chunk, set_array_chunk: usize,
    "Arrays with more than twice this many slots (at least 16) are scanned \
     in chunks of this many slots, claimed by any worker (default 2048).";
    count_live, set_count_live: bool,
    "Whether the workers count live bytes and a histogram by type while \
     marking ([`Report::live_bytes`](crate::Report::live_bytes), \
     [`Report::live_by_type`](crate::Report::live_by_type)). It costs a few \
     percent of the pause; a runtime that counts live bytes in its sweep can \
     turn it off, and then live bytes are zero and the histogram empty (live \
     objects are still counted: the workers count objects scanned anyway).";
    #[cfg(feature = "research")]
    policy, set_policy: BalancePolicy,
    "The balancing policy for workers that still have work (default \
     `on-empty`).";
    #[cfg(feature = "research")]
    steal, set_steal: StealAmount,
    "Items taken per steal (default `half`).";
    #[cfg(feature = "research")]
    victim, set_victim: VictimSelection,
    "How a thief picks its victim (default `random`).";
    #[cfg(feature = "research")]
    mu, set_mu: f64,
    "µ of the probabilistic policy (positive): balance with probability \
     min(1, µ/len).";
    #[cfg(feature = "research")]
    threshold_factor, set_threshold_factor: f64,
    "The constant factor of the threshold policy (above 1).";
    #[cfg(feature = "research")]
    balance_interval, set_balance_interval: u32,
    "Objects scanned between two evaluations of the balancing policy (at \
     least 1).";
    #[cfg(feature = "research")]
    prefetch, set_prefetch: usize,
    "Depth of the prefetch FIFO between the mark stack and the scan (0 turns \
     prefetching off; at most [`MarkerConfig::MAX_PREFETCH`]).";
    #[cfg(feature = "research")]
    private_work, set_private_work: bool,
    "Whether new grey objects go on a private stack, the oldest of them \
     shared through the deque (see [`deque_reserve`](MarkerConfig::deque_reserve)); \
     `false` pushes every object onto the deque, as in Flood et al.";
    #[cfg(feature = "research")]
    deque_reserve, set_deque_reserve: usize,
    "With private work: the items a busy worker keeps in its deque while no \
     worker is idle. While any worker is idle, busy workers share half of \
     their private items.";
    #[cfg(feature = "research")]
    ephemeron_frozen_rounds, set_ephemeron_frozen_rounds: u32,
    "Rounds of ephemeron resolution per collection that register waiting \
     ephemerons in a step of their own and then read the key index without \
     locks or fences; a later round shares the index and registers \
     ephemerons as it finds them (fenced), ending the rounds. 0 shares it \
     from the first round.";
    #[cfg(feature = "research")]
    timeline_interval, set_timeline_interval: u32,
    "Objects scanned between two samples of the deque-length timeline (0 \
     turns the timeline off).";
    #[cfg(feature = "research")]
    spans, set_spans: bool,
    "Whether the workers record timestamped spans (marking, stealing, idle, \
     termination) for trace files.";
    #[cfg(feature = "research")]
    seed, set_seed: u64,
    "Base seed of the workers' random number generators; worker `i` uses a \
     stream derived from this and `i`.";
}

impl MarkerConfig {
    /// The largest prefetch FIFO depth.
    pub const MAX_PREFETCH: usize = 16;

    /// The default configuration with `workers` workers.
    pub fn with_workers(workers: usize) -> MarkerConfig {
        MarkerConfig {
            workers,
            ..MarkerConfig::default()
        }
    }

    /// Checks every numeric field. Every deque kind is accepted: with
    /// `idempotent`, which may return an item twice, an object may be
    /// scanned twice, and the marker keeps its results exact.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let range = |ok: bool, field, value: String, reason| {
            if ok {
                Ok(())
            } else {
                Err(ConfigError::OutOfRange {
                    field,
                    value,
                    reason,
                })
            }
        };
        range(
            (1..=1024).contains(&self.workers),
            "workers",
            self.workers.to_string(),
            "1 to 1024",
        )?;
        range(
            self.prefetch <= Self::MAX_PREFETCH,
            "prefetch",
            self.prefetch.to_string(),
            "0 (off) to 16",
        )?;
        range(
            (16..=1 << 26).contains(&self.deque_capacity),
            "deque_capacity",
            self.deque_capacity.to_string(),
            "16 to 2^26",
        )?;
        range(
            self.array_chunk >= 16,
            "array_chunk",
            self.array_chunk.to_string(),
            "at least 16",
        )?;
        range(
            self.mu.is_finite() && self.mu > 0.0,
            "mu",
            self.mu.to_string(),
            "a positive number",
        )?;
        range(
            self.threshold_factor.is_finite() && self.threshold_factor > 1.0,
            "threshold_factor",
            self.threshold_factor.to_string(),
            "a number above 1",
        )?;
        range(
            self.balance_interval >= 1,
            "balance_interval",
            self.balance_interval.to_string(),
            "at least 1",
        )
    }
}

impl Default for MarkerConfig {
    fn default() -> MarkerConfig {
        MarkerConfig {
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            deque: DequeKind::StealHalf,
            policy: BalancePolicy::OnEmpty,
            steal: StealAmount::Half,
            victim: VictimSelection::Random,
            mu: 1.0,
            threshold_factor: 2.0,
            balance_interval: 16,
            prefetch: 8,
            private_work: true,
            deque_reserve: 32,
            deque_capacity: 4096,
            array_chunk: 2048,
            count_live: true,
            ephemeron_frozen_rounds: 4,
            timeline_interval: 4096,
            spans: false,
            seed: 0x5EED_57EA_1A4C,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{DequeKind, MarkerConfig};

    #[cfg(feature = "serde")]
    #[test]
    fn serialises_under_the_command_line_names() {
        let mut c = MarkerConfig::with_workers(2);
        c.set_deque(DequeKind::ChaseLevQuiescent);
        let json = serde_json::to_value(&c).unwrap();
        assert_eq!(json["workers"], 2);
        assert_eq!(json["deque"], "chase-lev-q");
        assert_eq!(json["policy"], "on-empty");
        assert_eq!(json["steal"], "half");
        assert_eq!(json["victim"], "random");
    }

    #[test]
    fn setters_chain_and_getters_read_back() {
        let mut c = MarkerConfig::with_workers(3);
        c.set_deque(DequeKind::Abp)
            .set_deque_capacity(64)
            .set_array_chunk(32)
            .set_count_live(false)
            .set_workers(5);
        assert_eq!(c.workers(), 5);
        assert_eq!(c.deque(), DequeKind::Abp);
        assert_eq!(c.deque_capacity(), 64);
        assert_eq!(c.array_chunk(), 32);
        assert!(!c.count_live());
        c.validate().unwrap();
    }

    #[test]
    fn validation_names_the_field() {
        let mut c = MarkerConfig::with_workers(0);
        assert!(c.validate().unwrap_err().to_string().contains("workers"));
        c.set_workers(2).set_array_chunk(15);
        assert!(c
            .validate()
            .unwrap_err()
            .to_string()
            .contains("array_chunk"));
        c.set_array_chunk(16).set_deque_capacity(1 << 27);
        let e = c.validate().unwrap_err().to_string();
        assert_eq!(e, "deque_capacity = 134217728 is out of range: 16 to 2^26");
    }

    #[cfg(feature = "research")]
    #[test]
    fn research_knobs_are_validated() {
        use super::VictimSelection;
        let mut c = MarkerConfig::with_workers(2);
        c.set_prefetch(17);
        assert!(c.validate().unwrap_err().to_string().contains("prefetch"));
        c.set_prefetch(16).set_mu(0.0);
        assert!(c.validate().unwrap_err().to_string().contains("mu"));
        c.set_mu(1.0).set_threshold_factor(1.0);
        assert!(c
            .validate()
            .unwrap_err()
            .to_string()
            .contains("threshold_factor"));
        c.set_threshold_factor(2.0).set_balance_interval(0);
        assert!(c
            .validate()
            .unwrap_err()
            .to_string()
            .contains("balance_interval"));
        c.set_balance_interval(1)
            .set_victim(VictimSelection::BestOf2);
        assert_eq!(c.victim(), VictimSelection::BestOf2);
        c.validate().unwrap();
    }

    #[cfg(feature = "baselines")]
    #[test]
    fn every_deque_kind_is_accepted() {
        for &kind in DequeKind::ALL {
            let mut c = MarkerConfig::with_workers(2);
            c.set_deque(kind);
            c.validate().unwrap();
        }
    }
}
