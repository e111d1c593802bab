//! The CPU time of a pause, user and system, as HotSpot's GC logs report it
//! beside the wall time (`[Times: user=0.12 sys=0.01, real=0.05 secs]`).
//!
//! The tool measures it from outside the engine: the process's resource
//! usage (`getrusage(RUSAGE_SELF)`, which sums every thread, live ones
//! included) read before and after each `mark` call. During the call the
//! process runs nothing but the GC workers (the calling thread is worker 0;
//! the others are parked between phases and use no CPU), so the difference
//! is the workers' CPU time summed. On a quiet machine with every worker
//! busy, user + sys is close to the worker count times the wall time; much
//! less than the workers' busy time means the scheduler gave their CPUs to
//! someone else, and the wall time overstates the marker's cost.

use serde::Serialize;

/// User and system CPU time, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CpuTime {
    /// Time in user mode.
    pub user_ns: u64,
    /// Time in the kernel on the process's behalf.
    pub sys_ns: u64,
}

impl CpuTime {
    /// The CPU time the whole process has used so far, all threads summed;
    /// `None` where the platform does not report it.
    pub fn of_process() -> Option<CpuTime> {
        process_cpu_time()
    }

    /// The CPU time used since `earlier`.
    pub fn since(self, earlier: CpuTime) -> CpuTime {
        CpuTime {
            user_ns: self.user_ns.saturating_sub(earlier.user_ns),
            sys_ns: self.sys_ns.saturating_sub(earlier.sys_ns),
        }
    }

    /// User plus system time.
    pub fn total_ns(self) -> u64 {
        self.user_ns + self.sys_ns
    }
}

/// Runs `f` and returns its result with the CPU time the process used
/// meanwhile (`None` where the platform does not report it).
pub fn measure<T>(f: impl FnOnce() -> T) -> (T, Option<CpuTime>) {
    let before = CpuTime::of_process();
    let value = f();
    let used = before.zip(CpuTime::of_process()).map(|(b, a)| a.since(b));
    (value, used)
}

#[cfg(unix)]
fn process_cpu_time() -> Option<CpuTime> {
    use nix::sys::resource::{getrusage, UsageWho};
    use nix::sys::time::TimeValLike;

    let usage = getrusage(UsageWho::RUSAGE_SELF).ok()?;
    let ns = |t: nix::sys::time::TimeVal| u64::try_from(t.num_microseconds()).unwrap_or(0) * 1000;
    Some(CpuTime {
        user_ns: ns(usage.user_time()),
        sys_ns: ns(usage.system_time()),
    })
}

#[cfg(not(unix))]
fn process_cpu_time() -> Option<CpuTime> {
    None
}

/// The smallest share of the workers' busy and stealing time that they
/// must have spent on a CPU for a pause to count as undisturbed.
pub const MIN_ON_CPU: f64 = 0.75;

/// Whether a pause's workers were descheduled: their CPU time `cpu` is well
/// below `active_ns`, the wall time they spent marking or stealing, summed
/// over the workers (each of those nanoseconds is one the worker wanted a
/// CPU for). A worker parked for lack of work (a long list, say) is not
/// active, so a heap with little parallelism does not count as disturbed.
pub fn descheduled(cpu: CpuTime, active_ns: u64) -> bool {
    active_ns > 0 && (cpu.total_ns() as f64) < MIN_ON_CPU * active_ns as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_work_uses_cpu_time() {
        let ((), cpu) = measure(|| {
            let mut x = 0u64;
            for i in 0..20_000_000u64 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
            }
        });
        if cfg!(unix) {
            assert!(cpu.expect("unix reports CPU time").total_ns() > 0);
        }
    }

    #[test]
    fn since_subtracts_and_never_underflows() {
        let a = CpuTime {
            user_ns: 10,
            sys_ns: 5,
        };
        let b = CpuTime {
            user_ns: 25,
            sys_ns: 4,
        };
        assert_eq!(
            b.since(a),
            CpuTime {
                user_ns: 15,
                sys_ns: 0
            }
        );
        assert_eq!(b.total_ns(), 29);
    }

    #[test]
    fn descheduled_compares_cpu_with_active_time() {
        let cpu = |ms: u64| CpuTime {
            user_ns: ms * 1_000_000,
            sys_ns: 0,
        };
        // Two workers busy 10 ms each: 20 ms of CPU wanted.
        assert!(!descheduled(cpu(19), 20_000_000));
        assert!(descheduled(cpu(8), 20_000_000));
        // Nothing active (the sequential oracle measured elsewhere).
        assert!(!descheduled(cpu(0), 0));
    }
}
