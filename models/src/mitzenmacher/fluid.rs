//! The fluid limits of Mitzenmacher's models and their fixed points.
//!
//! State: `s_i`, the fraction of processors with at least `i` tasks that are
//! not waiting for a stolen transfer, and (with a transfer delay, §3.2) `w_i`,
//! the same for processors that are waiting. Without delay `w ≡ 0` and
//! `s_0 = 1`.
//!
//! One set of equations covers every variant of the paper and reduces to each
//! of its printed systems when the other knobs are at their defaults. With
//! `S_i = s_i + w_i`, the steal attempts per unit time made by processors at
//! post-completion load `j ≤ B` are `a_j = (s_{j+1} − s_{j+2}) + [j = 0]
//! r_retry (s_0 − s_1)`, `A = Σ a_j`, an attempt succeeds with probability
//! `P = 1 − (1 − S_T)^d`, and it picks a victim of load `j ≥ T` with
//! probability `q_j = (1 − S_{j+1})^d − (1 − S_j)^d` (split between the
//! waiting and non-waiting classes in proportion to their shares at load `j`).
//! Then, without delay,
//!
//! ```text
//! ds_i/dt = λ(s_{i−1} − s_i) − (s_i − s_{i+1})
//!         + P Σ_{j = max(0, i−k)}^{min(B, i−1)} a_j        (the thief goes j → j + k)
//!         − A Σ_{j = max(T, i)}^{i+k−1} q_j                (the victim goes j → j − k)
//! ```
//!
//! With T = 2, k = 1, d = 1, B = 0 and no retries this is (2)–(3) of §2.2;
//! general T gives (4)–(6); `retry_rate` gives §2.4; B gives (8)–(10) of
//! §2.5 (whose last equation reads `−(s_i − s_{i+1})(1 + s_1 − s_{B+2})`: the
//! printed copy we have drops the `s_1` term, which (8)–(10) need to reduce to
//! (6) at B = 0); d gives §3.3 and k gives §3.4. With a transfer delay of rate
//! r (§3.2), a successful thief moves to the waiting class, and its k tasks
//! join its queue at rate r:
//!
//! ```text
//! ds_0/dt = r w_0 − P Σ_{j=0}^{B} a_j
//! ds_i/dt = λ(s_{i−1} − s_i) − (s_i − s_{i+1}) + r w_{max(0, i−k)}
//!         − P Σ_{j=i}^{B} a_j − A Σ_{j = max(T, i)}^{i+k−1} q^s_j
//! dw_0/dt = −r w_0 + P Σ_{j=0}^{B} a_j
//! dw_i/dt = λ(w_{i−1} − w_i) − (w_i − w_{i+1}) − r w_i
//!         + P Σ_{j=i}^{B} a_j − A Σ_{j = max(T, i)}^{i+k−1} q^w_j
//! ```
//!
//! which is the system printed in §3.2 when B = 0, k = 1, d = 1. The
//! expected number of tasks per processor is `Σ_{i≥1} (s_i + w_i) + k w_0`
//! (`w_0` counts the transfers in flight) and, by Little's law, the expected
//! time in system is that divided by λ.

use serde::Serialize;

use super::MitzenmacherConfig;
use crate::ModelError;

/// How a fixed point was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// The paper's closed form (§2.2, §2.3).
    ClosedForm,
    /// Numerical integration of the differential equations from the empty
    /// system until every derivative is below [`ODE_TOLERANCE`].
    Ode,
}

/// The largest |ds_i/dt| accepted as a fixed point.
pub const ODE_TOLERANCE: f64 = 1e-12;

/// A fixed point of the fluid limit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FixedPoint {
    /// `π_i = s_i` at the fixed point, `i = 0, 1, ...` (truncated where
    /// negligible).
    pub s: Vec<f64>,
    /// `w_i` at the fixed point (empty without transfer delay).
    pub w: Vec<f64>,
    /// The expected number of tasks per processor.
    pub expected_load: f64,
    /// The expected time a task spends in the system.
    pub time_in_system: f64,
    /// How it was found.
    pub method: Method,
}

impl FixedPoint {
    /// The tails `S_i = s_i + w_i` for `i ≥ 1`, while they are at least `cutoff`.
    pub fn tails(&self, cutoff: f64) -> Vec<f64> {
        (1..self.s.len())
            .map(|i| self.s[i] + self.w.get(i).copied().unwrap_or(0.0))
            .take_while(|&v| v >= cutoff)
            .collect()
    }
}

/// π₂ of the simple model (§2.2): `(1 + λ − √(1 + 2λ − 3λ²)) / 2`.
pub fn simple_pi2(lambda: f64) -> f64 {
    (1.0 + lambda - (1.0 + 2.0 * lambda - 3.0 * lambda * lambda).sqrt()) / 2.0
}

/// π_T of threshold stealing (§2.3): the root in [0, 1] of
/// `π_T² − (1 + λ)π_T + λ^T = 0`.
pub fn threshold_pi_t(lambda: f64, threshold: u32) -> f64 {
    let b = 1.0 + lambda;
    (b - (b * b - 4.0 * lambda.powi(threshold as i32)).sqrt()) / 2.0
}

/// The closed-form fixed point of threshold stealing (§2.3; T = 2 is the
/// simple model of §2.2): `π_1 = λ`, `π_i = (λ^i − λπ_T)/(1 − π_T)` for
/// `2 ≤ i ≤ T`, and `π_i = π_T ρ^{i−T}` with `ρ = λ/(1 + λ − π_2)` beyond.
/// The expected load sums the geometric tail exactly.
pub fn threshold_fixed_point(lambda: f64, threshold: u32) -> FixedPoint {
    let t = threshold as usize;
    let pi_t = threshold_pi_t(lambda, threshold);
    let mut s = vec![1.0, lambda];
    for i in 2..=t {
        s.push((lambda.powi(i as i32) - lambda * pi_t) / (1.0 - pi_t));
    }
    // At i = T the recurrence gives π_T back; keep the root itself.
    s[t] = pi_t;
    let rho = lambda / (1.0 + lambda - s[2]);
    let head: f64 = s[1..t].iter().sum();
    let expected_load = head + pi_t / (1.0 - rho);
    let mut v = pi_t * rho;
    while v > 1e-17 {
        s.push(v);
        v *= rho;
    }
    FixedPoint {
        s,
        w: Vec::new(),
        expected_load,
        time_in_system: expected_load / lambda,
        method: Method::ClosedForm,
    }
}

/// Whether the configuration is one the paper solves in closed form.
pub fn has_closed_form(config: &MitzenmacherConfig) -> bool {
    config.steal_count == 1
        && config.choices == 1
        && config.transfer_rate.is_none()
        && config.retry_rate == 0.0
        && config.preempt_at == 0
}

/// The fixed point of the configuration's fluid limit: closed form where the
/// paper has one, numerical integration otherwise.
pub fn fixed_point(config: &MitzenmacherConfig) -> Result<FixedPoint, ModelError> {
    config.validate()?;
    if has_closed_form(config) {
        Ok(threshold_fixed_point(config.lambda, config.threshold))
    } else {
        integrate(config)
    }
}

/// The right-hand side of the equations for one configuration.
struct Equations {
    lambda: f64,
    t: usize,
    k: usize,
    d: i32,
    b: usize,
    retry: f64,
    transfer: Option<f64>,
}

impl Equations {
    fn new(c: &MitzenmacherConfig) -> Self {
        Equations {
            lambda: c.lambda,
            t: c.threshold as usize,
            k: c.steal_count as usize,
            d: c.choices as i32,
            b: c.preempt_at as usize,
            retry: c.retry_rate,
            transfer: c.transfer_rate,
        }
    }

    /// Computes `dx` for `x = [s_0..=s_L, w_0..=w_L]` (values beyond L are 0).
    /// `scratch` must hold 3(L + 1) values.
    fn drift(&self, x: &[f64], dx: &mut [f64], scratch: &mut [f64]) {
        let m = x.len() / 2;
        let (s, w) = x.split_at(m);
        let (ds, dw) = dx.split_at_mut(m);
        let get = |v: &[f64], i: usize| v.get(i).copied().unwrap_or(0.0);
        let total = |i: usize| get(s, i) + get(w, i);
        let lambda = self.lambda;
        // Attempt rates a_j at post-completion loads j = 0..=B.
        let attempts = |j: usize| {
            let mut a = get(s, j + 1) - get(s, j + 2);
            if j == 0 {
                a += self.retry * (s[0] - get(s, 1));
            }
            a
        };
        let big_a: f64 = (0..=self.b).map(attempts).sum();
        let p = 1.0 - (1.0 - total(self.t)).powi(self.d);
        // Victim probabilities by class, and their prefix sums:
        // scratch[0..m] = Σ_{j<i} q^s_j, scratch[m..2m] = Σ_{j<i} q^w_j.
        let (prefix_s, rest) = scratch.split_at_mut(m);
        let prefix_w = &mut rest[..m];
        prefix_s[0] = 0.0;
        prefix_w[0] = 0.0;
        for j in 0..m - 1 {
            let (qs, qw) = if j >= self.t {
                let q = (1.0 - total(j + 1)).powi(self.d) - (1.0 - total(j)).powi(self.d);
                let ps = get(s, j) - get(s, j + 1);
                let pw = get(w, j) - get(w, j + 1);
                if self.d == 1 {
                    (ps, pw)
                } else if ps + pw > 0.0 {
                    (q * ps / (ps + pw), q * pw / (ps + pw))
                } else {
                    (0.0, 0.0)
                }
            } else {
                (0.0, 0.0)
            };
            prefix_s[j + 1] = prefix_s[j] + qs;
            prefix_w[j + 1] = prefix_w[j] + qw;
        }
        let victim = |prefix: &[f64], i: usize| {
            let lo = i.max(self.t);
            let hi = (i + self.k).min(m - 1); // exclusive
            if hi > lo {
                prefix[hi] - prefix[lo]
            } else {
                0.0
            }
        };
        match self.transfer {
            None => {
                ds[0] = 0.0;
                for i in 1..m {
                    let mut v = lambda * (s[i - 1] - s[i]) - (s[i] - get(s, i + 1));
                    let lo = i.saturating_sub(self.k);
                    let hi = self.b.min(i - 1);
                    if lo <= hi {
                        v += p * (lo..=hi).map(attempts).sum::<f64>();
                    }
                    v -= big_a * victim(prefix_s, i);
                    ds[i] = v;
                }
                dw.fill(0.0);
            }
            Some(r) => {
                // Out_i = P Σ_{j=i}^{B} a_j: successful thieves leaving s_i for w_i.
                let out = |i: usize| -> f64 {
                    if i <= self.b {
                        p * (i..=self.b).map(attempts).sum::<f64>()
                    } else {
                        0.0
                    }
                };
                ds[0] = r * w[0] - out(0);
                dw[0] = -r * w[0] + out(0);
                for i in 1..m {
                    let o = out(i);
                    ds[i] = lambda * (s[i - 1] - s[i]) - (s[i] - get(s, i + 1))
                        + r * w[i.saturating_sub(self.k)]
                        - o
                        - big_a * victim(prefix_s, i);
                    dw[i] = lambda * (w[i - 1] - w[i]) - (w[i] - get(w, i + 1)) - r * w[i] + o
                        - big_a * victim(prefix_w, i);
                }
            }
        }
    }

    /// A step size inside RK4's stability region for these rates.
    fn step(&self) -> f64 {
        let rate = 1.0
            + self.lambda
            + self.retry
            + self.transfer.unwrap_or(0.0)
            + (self.d as f64) * (1.0 + self.retry) * self.k as f64;
        0.5 / rate
    }

    fn expected_load(&self, x: &[f64]) -> f64 {
        let m = x.len() / 2;
        let (s, w) = x.split_at(m);
        s[1..].iter().sum::<f64>() + w[1..].iter().sum::<f64>() + self.k as f64 * w[0]
    }
}

/// Integrates the equations from the empty system (RK4) until every
/// derivative is below [`ODE_TOLERANCE`], doubling the truncation length L
/// while `S_L` is not negligible.
///
/// The work is bounded by [`ODE_WORK_LIMIT`] component updates (a few tens
/// of seconds): systems that relax very slowly (λ near 1 with slow
/// transfers, where relaxation times reach 10⁴ and more) end with
/// [`ModelError::NotConverged`] instead of running on.
pub fn integrate(config: &MitzenmacherConfig) -> Result<FixedPoint, ModelError> {
    config.validate()?;
    let eq = Equations::new(config);
    const MAX_LEN: usize = 1 << 14;
    const MAX_TIME: f64 = 1e7;
    let mut work = 0u64;
    let mut len = 64usize.max(4 * (eq.t + eq.k + eq.b));
    let mut x = vec![0.0; 2 * len];
    x[0] = 1.0;
    let dt = eq.step();
    let mut time = 0.0;
    loop {
        let m = len;
        let mut k1 = vec![0.0; 2 * m];
        let mut k2 = k1.clone();
        let mut k3 = k1.clone();
        let mut k4 = k1.clone();
        let mut tmp = k1.clone();
        let mut scratch = vec![0.0; 3 * m];
        let mut residual = f64::INFINITY;
        let check_every = (1.0 / dt).ceil() as usize;
        let mut iter = 0usize;
        while time < MAX_TIME && work < ODE_WORK_LIMIT {
            work += 2 * m as u64;
            eq.drift(&x, &mut k1, &mut scratch);
            if iter % check_every == 0 {
                residual = k1.iter().fold(0.0f64, |a, &v| a.max(v.abs()));
                if residual < ODE_TOLERANCE {
                    break;
                }
            }
            iter += 1;
            for i in 0..2 * m {
                tmp[i] = x[i] + 0.5 * dt * k1[i];
            }
            eq.drift(&tmp, &mut k2, &mut scratch);
            for i in 0..2 * m {
                tmp[i] = x[i] + 0.5 * dt * k2[i];
            }
            eq.drift(&tmp, &mut k3, &mut scratch);
            for i in 0..2 * m {
                tmp[i] = x[i] + dt * k3[i];
            }
            eq.drift(&tmp, &mut k4, &mut scratch);
            for i in 0..2 * m {
                x[i] += dt / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
            }
            time += dt;
        }
        if residual >= ODE_TOLERANCE {
            return Err(ModelError::NotConverged {
                time,
                residual,
                tolerance: ODE_TOLERANCE,
            });
        }
        let tail = x[m - 1] + x[2 * m - 1];
        if tail < 1e-13 || 2 * len > MAX_LEN {
            let (s, w) = x.split_at(m);
            let expected_load = eq.expected_load(&x);
            return Ok(FixedPoint {
                s: s.to_vec(),
                w: if config.transfer_rate.is_some() {
                    w.to_vec()
                } else {
                    Vec::new()
                },
                expected_load,
                time_in_system: expected_load / config.lambda,
                method: Method::Ode,
            });
        }
        // Double L, keeping the state, and integrate on.
        let mut wider = vec![0.0; 4 * len];
        wider[..m].copy_from_slice(&x[..m]);
        wider[2 * m..3 * m].copy_from_slice(&x[m..]);
        x = wider;
        len *= 2;
    }
}

/// The most state-component updates one integration may take.
pub const ODE_WORK_LIMIT: u64 = 2_000_000_000;

#[cfg(test)]
mod tests {
    use super::*;

    fn config(lambda: f64) -> MitzenmacherConfig {
        MitzenmacherConfig::simple(lambda)
    }

    #[test]
    fn simple_pi2_matches_hand_computed_values() {
        // λ = 0.5: (1.5 − √(1 + 1 − 0.75))/2 = (1.5 − √1.25)/2.
        assert!((simple_pi2(0.5) - (1.5 - 1.25f64.sqrt()) / 2.0).abs() < 1e-15);
        assert!((simple_pi2(0.5) - 0.190_983_005_625_052_6).abs() < 1e-15);
        // λ = 0.9: (1.9 − √(1 + 1.8 − 2.43))/2 = (1.9 − √0.37)/2.
        assert!((simple_pi2(0.9) - 0.645_861_873_485_088_9).abs() < 1e-15);
        // π₂ solves λ(1 − λ) − (λ − π₂)(1 − π₂) = 0.
        for lambda in [0.1, 0.3, 0.7, 0.99] {
            let p = simple_pi2(lambda);
            assert!((lambda * (1.0 - lambda) - (lambda - p) * (1.0 - p)).abs() < 1e-14);
            assert!((0.0..=lambda).contains(&p));
        }
    }

    #[test]
    fn simple_fixed_point_is_geometric_with_the_papers_ratio() {
        // λ = 0.5: π₂ = 0.190983, ρ = 0.5/(1.5 − π₂) = 0.381966 (= π₂·2),
        // E[load] = 0.5 + π₂/(1 − ρ) = 0.809017, time = 1.618034 (the golden ratio).
        let fp = threshold_fixed_point(0.5, 2);
        assert_eq!(fp.s[0], 1.0);
        assert_eq!(fp.s[1], 0.5);
        assert!((fp.s[3] / fp.s[2] - 0.381_966_011_250_105_1).abs() < 1e-12);
        assert!((fp.time_in_system - 1.618_033_988_749_895).abs() < 1e-12);
        // The closed form is a fixed point of the equations.
        let eq = Equations::new(&config(0.5));
        let mut x = fp.s.clone();
        let m = x.len();
        x.extend(std::iter::repeat_n(0.0, m));
        let mut dx = vec![0.0; 2 * m];
        let mut scratch = vec![0.0; 3 * m];
        eq.drift(&x, &mut dx, &mut scratch);
        assert!(dx.iter().all(|v| v.abs() < 1e-14), "{dx:?}");
    }

    #[test]
    fn threshold_pi_t_matches_hand_computed_values() {
        // λ = 0.9, T = 4: π_T = (1.9 − √(3.61 − 4·0.6561))/2 = (1.9 − √0.9856)/2.
        let expect = (1.9 - 0.9856f64.sqrt()) / 2.0;
        assert!((threshold_pi_t(0.9, 4) - expect).abs() < 1e-15);
        assert!((threshold_pi_t(0.9, 4) - 0.453_613_054_160_365_7).abs() < 1e-12);
        // T = 2 reduces to the simple model.
        assert!((threshold_pi_t(0.7, 2) - simple_pi2(0.7)).abs() < 1e-15);
        // π_T = λπ_{T−1}/(1 + π_1 − π_2) (the telescoped sum of §2.3).
        let fp = threshold_fixed_point(0.8, 5);
        let lhs = fp.s[5];
        let rhs = 0.8 * fp.s[4] / (1.0 + fp.s[1] - fp.s[2]);
        assert!((lhs - rhs).abs() < 1e-14);
    }

    #[test]
    fn integration_reproduces_the_closed_forms() {
        for (lambda, t) in [(0.5, 2), (0.9, 2), (0.9, 4), (0.7, 3)] {
            let c = MitzenmacherConfig {
                threshold: t,
                ..config(lambda)
            };
            let closed = threshold_fixed_point(lambda, t);
            let ode = integrate(&c).unwrap();
            assert!(
                (closed.time_in_system - ode.time_in_system).abs() < 1e-8 * closed.time_in_system,
                "λ={lambda} T={t}: {} vs {}",
                closed.time_in_system,
                ode.time_in_system
            );
        }
    }

    #[test]
    fn repeated_steals_tail_ratio_matches_section_2_4() {
        let (lambda, r, t) = (0.9, 2.0, 3);
        let c = MitzenmacherConfig {
            threshold: t,
            retry_rate: r,
            ..config(lambda)
        };
        let fp = integrate(&c).unwrap();
        let rho = lambda / (1.0 + r * (1.0 - lambda) + lambda - fp.s[2]);
        for i in (t as usize + 1)..(t as usize + 6) {
            assert!((fp.s[i + 1] / fp.s[i] - rho).abs() < 1e-8, "i={i}");
        }
        assert!((fp.s[1] - lambda).abs() < 1e-10);
    }

    #[test]
    fn preemptive_steals_tail_ratio_matches_section_2_5() {
        let (lambda, b, t) = (0.9, 1, 4);
        let c = MitzenmacherConfig {
            threshold: t,
            preempt_at: b,
            ..config(lambda)
        };
        let fp = integrate(&c).unwrap();
        let rho = lambda / (1.0 + lambda - fp.s[b as usize + 2]);
        for i in (t as usize + 1)..(t as usize + 6) {
            assert!((fp.s[i + 1] / fp.s[i] - rho).abs() < 1e-8, "i={i}");
        }
        assert!((fp.s[1] - lambda).abs() < 1e-10);
    }

    #[test]
    fn more_choices_and_more_steals_help_and_delay_hurts() {
        let base = MitzenmacherConfig {
            threshold: 4,
            ..config(0.9)
        };
        let plain = fixed_point(&base).unwrap().time_in_system;
        let two = integrate(&MitzenmacherConfig { choices: 2, ..base }).unwrap();
        let steal2 = integrate(&MitzenmacherConfig {
            steal_count: 2,
            ..base
        })
        .unwrap();
        let delayed = integrate(&MitzenmacherConfig {
            transfer_rate: Some(0.25),
            ..base
        })
        .unwrap();
        assert!(two.time_in_system < plain);
        assert!(steal2.time_in_system < plain);
        assert!(delayed.time_in_system > plain);
        // Conservation at the fixed point: busy processors = λ.
        for fp in [&two, &steal2, &delayed] {
            let busy = fp.s[1] + fp.w.get(1).copied().unwrap_or(0.0);
            assert!((busy - 0.9).abs() < 1e-9, "{busy}");
        }
        // With transfers, s_0 + w_0 = 1.
        assert!((delayed.s[0] + delayed.w[0] - 1.0).abs() < 1e-12);
    }

    #[test]
    fn one_choice_multiple_steal_equations_match_section_3_4() {
        // k = 2, T = 4, d = 1: check the printed equations at the fixed point.
        let (lambda, k, t) = (0.85, 2usize, 4usize);
        let c = MitzenmacherConfig {
            threshold: t as u32,
            steal_count: k as u32,
            ..config(lambda)
        };
        let s = integrate(&c).unwrap().s;
        let g = |i: usize| s.get(i).copied().unwrap_or(0.0);
        let base = |i: usize| lambda * (g(i - 1) - g(i)) - (g(i) - g(i + 1));
        let e = g(1) - g(2);
        assert!((lambda * (1.0 - g(1)) - e * (1.0 - g(t))).abs() < 1e-10);
        for i in 2..=k {
            assert!((base(i) + e * g(t)).abs() < 1e-10);
        }
        for i in (k + 1)..=(t - k) {
            assert!(base(i).abs() < 1e-10);
        }
        for i in (t - k + 1)..=t {
            assert!((base(i) - e * (g(t) - g(i + k))).abs() < 1e-10);
        }
        for i in (t + 1)..(t + 10) {
            assert!((base(i) - e * (g(i) - g(i + k))).abs() < 1e-10);
        }
    }
}
