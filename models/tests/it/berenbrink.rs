//! Theorem 22 (instability of bounded steals) and Theorem 10 (stability of
//! steal-half) on the chain of Berenbrink et al., Fig. 1.

use stealmark_models::berenbrink::{simulate, BerenbrinkConfig, Prediction, StealFunction};
use stealmark_models::growth_rate;

fn config(processors: usize, hosts: usize, lambda: f64, steal: StealFunction) -> BerenbrinkConfig {
    BerenbrinkConfig {
        processors,
        generator_hosts: hosts,
        lambda,
        steal,
        steps: 20_000,
        seed: 11,
    }
}

#[test]
fn theorem_22_steal_one_with_one_host_grows_linearly() {
    // K = 1 and λn > 2: at most K(j + 1) = 2 tasks are served per step, so
    // the load grows by at least λn − 2 per step.
    for (n, lambda) in [(8, 0.3), (16, 0.25), (64, 0.5), (128, 0.9)] {
        let c = config(n, 1, lambda, StealFunction::One);
        assert_eq!(c.prediction(), Prediction::Transient);
        let r = simulate(&c).unwrap();
        let lambda_n = lambda * n as f64;
        assert!(!r.stable, "n={n} λ={lambda}: {}", r.growth_rate);
        // Linear growth: the slope is at least λn − 2 (what cannot be served)
        // and at most λn, and the first and second halves grow alike.
        assert!(
            r.growth_rate >= lambda_n - 2.0 - 0.05,
            "n={n}: {}",
            r.growth_rate
        );
        assert!(r.growth_rate <= lambda_n, "n={n}: {}", r.growth_rate);
        let expected_final = (lambda_n - 2.0) * c.steps as f64;
        assert!(
            r.final_total_load as f64 >= 0.95 * expected_final,
            "n={n}: {}",
            r.final_total_load
        );
    }
}

#[test]
fn theorem_22_holds_for_bounded_batches_on_several_hosts() {
    // K = 4, j = 3: K(j + 1) = 16 < λn = 32.
    let c = config(64, 4, 0.5, StealFunction::Const(3));
    assert_eq!(c.prediction(), Prediction::Transient);
    let r = simulate(&c).unwrap();
    assert!(!r.stable);
    assert!(r.growth_rate >= 32.0 - 16.0 - 0.1, "{}", r.growth_rate);
}

#[test]
fn steal_half_stays_bounded_where_steal_one_diverges() {
    for (n, hosts, lambda) in [
        (8, 1, 0.3),
        (16, 1, 0.25),
        (64, 1, 0.5),
        (128, 1, 0.9),
        (64, 4, 0.9),
    ] {
        let c = config(n, hosts, lambda, StealFunction::Half);
        assert_eq!(c.prediction(), Prediction::Stable);
        let r = simulate(&c).unwrap();
        assert!(
            r.stable,
            "n={n} K={hosts} λ={lambda}: growth {}",
            r.growth_rate
        );
        // Bounded: the last sampled loads are no larger than a few times the
        // mean load over the run (no trend), and far below what steal-one keeps.
        let one = simulate(&BerenbrinkConfig {
            steal: StealFunction::One,
            ..c
        })
        .unwrap();
        assert!(
            (r.final_total_load as f64) < 0.01 * one.final_total_load as f64 + 10.0 * n as f64,
            "n={n}: half {} one {}",
            r.final_total_load,
            one.final_total_load
        );
    }
}

#[test]
fn steal_one_is_stable_well_below_its_capacity() {
    // λn = 1.2: Theorem 22 does not apply. The host serves one task per step
    // and a thief one more when some empty processor's request hits the host
    // (probability 1 − (15/16)^15 ≈ 0.62), so about 1.6 tasks per step can
    // be served. (At λn = 1.6 with n = 8 the margin is nil and the chain is
    // near-critical.)
    let c = config(16, 1, 0.075, StealFunction::One);
    assert_eq!(c.prediction(), Prediction::None);
    assert!(simulate(&c).unwrap().stable);
}

#[test]
fn growth_rate_is_the_slope_of_the_second_half() {
    let loads: Vec<u64> = (0..1000u64)
        .map(|t| if t < 500 { 0 } else { 2 * t })
        .collect();
    assert!((growth_rate(&loads) - 2.0).abs() < 1e-9);
}
