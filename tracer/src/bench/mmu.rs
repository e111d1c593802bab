//! Minimum mutator utilization (Cheng and Blelloch, PLDI 2001): for a window
//! length `w`, the least fraction of any window of length `w` within a run
//! in which the mutator runs (no pause).

use serde::Serialize;

/// A pause: `[start, end)`, in seconds since the run's start.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Pause {
    /// Start, seconds.
    pub start: f64,
    /// End, seconds.
    pub end: f64,
}

/// MMU at one window length.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct MmuPoint {
    /// Window length, milliseconds.
    pub window_ms: f64,
    /// The least mutator fraction over the windows of that length (0..=1).
    pub utilization: f64,
}

/// The window lengths reported, in milliseconds: 1 ms to 1 s, three a
/// decade.
pub const WINDOWS_MS: [f64; 10] = [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0];

/// Time paused within `[a, a + w)`, for pauses sorted by start and not
/// overlapping.
fn paused_in(pauses: &[Pause], a: f64, w: f64) -> f64 {
    let b = a + w;
    pauses
        .iter()
        .map(|p| (p.end.min(b) - p.start.max(a)).max(0.0))
        .sum()
}

/// MMU at window `w` (seconds) over a run of length `len` (seconds) with
/// `pauses` (sorted, disjoint, within the run). A window longer than the
/// run is the whole run. The worst window starts or ends at a pause
/// boundary (sliding a window whose ends are both inside mutator time or
/// both inside pauses does not lower its utilization below that of a
/// neighbouring candidate), so only those windows are evaluated.
pub fn mmu(pauses: &[Pause], len: f64, w: f64) -> f64 {
    let w = w.min(len);
    if w <= 0.0 {
        return 1.0;
    }
    let last = len - w;
    let mut worst: f64 = 1.0;
    let mut eval = |a: f64| {
        let a = a.clamp(0.0, last);
        worst = worst.min(1.0 - paused_in(pauses, a, w) / w);
    };
    eval(0.0);
    eval(last);
    for p in pauses {
        eval(p.start);
        eval(p.end);
        eval(p.start - w);
        eval(p.end - w);
    }
    worst.clamp(0.0, 1.0)
}

/// The MMU curve of one run at [`WINDOWS_MS`] (windows up to the run's
/// length).
pub fn curve(pauses: &[Pause], len: f64) -> Vec<MmuPoint> {
    WINDOWS_MS
        .iter()
        .filter(|&&w| w / 1e3 <= len)
        .map(|&window_ms| MmuPoint {
            window_ms,
            utilization: mmu(pauses, len, window_ms / 1e3),
        })
        .collect()
}

/// The pointwise minimum of curves (the worst run at each window).
pub fn worst(curves: &[Vec<MmuPoint>]) -> Vec<MmuPoint> {
    let mut out: Vec<MmuPoint> = Vec::new();
    for c in curves {
        for p in c {
            match out.iter_mut().find(|q| q.window_ms == p.window_ms) {
                Some(q) => q.utilization = q.utilization.min(p.utilization),
                None => out.push(*p),
            }
        }
    }
    out.sort_by(|a, b| a.window_ms.total_cmp(&b.window_ms));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute(pauses: &[Pause], len: f64, w: f64) -> f64 {
        let steps = 20_000;
        (0..=steps)
            .map(|i| (len - w) * i as f64 / steps as f64)
            .map(|a| 1.0 - paused_in(pauses, a, w) / w)
            .fold(1.0, f64::min)
    }

    #[test]
    fn one_pause_gives_zero_inside_and_the_fraction_outside() {
        let p = [Pause {
            start: 0.5,
            end: 0.6,
        }];
        assert_eq!(mmu(&p, 1.0, 0.05), 0.0);
        assert!((mmu(&p, 1.0, 0.2) - 0.5).abs() < 1e-12);
        assert!((mmu(&p, 1.0, 1.0) - 0.9).abs() < 1e-12);
        assert_eq!(mmu(&[], 1.0, 0.01), 1.0);
    }

    #[test]
    fn boundary_candidates_match_a_fine_sweep() {
        let p = [
            Pause {
                start: 0.010,
                end: 0.012,
            },
            Pause {
                start: 0.013,
                end: 0.0135,
            },
            Pause {
                start: 0.020,
                end: 0.026,
            },
            Pause {
                start: 0.090,
                end: 0.091,
            },
        ];
        for w in [0.001, 0.003, 0.0075, 0.012, 0.05] {
            let fast = mmu(&p, 0.1, w);
            let slow = brute(&p, 0.1, w);
            assert!(
                fast <= slow + 1e-9 && slow - fast < 1e-3,
                "w {w}: {fast} vs {slow}"
            );
        }
    }

    #[test]
    fn worst_takes_the_minimum_per_window() {
        let a = vec![MmuPoint {
            window_ms: 1.0,
            utilization: 0.5,
        }];
        let b = vec![
            MmuPoint {
                window_ms: 1.0,
                utilization: 0.2,
            },
            MmuPoint {
                window_ms: 2.0,
                utilization: 0.7,
            },
        ];
        let w = worst(&[a, b]);
        assert_eq!(w.len(), 2);
        assert_eq!(w[0].utilization, 0.2);
        assert_eq!(w[1].utilization, 0.7);
    }
}
