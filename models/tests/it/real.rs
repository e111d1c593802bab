//! Smoke tests of the workloads on real threads over every deque this build
//! has (`--real`).

use stealmark_deques::DequeKind;
use stealmark_models::berenbrink::{BerenbrinkConfig, StealFunction};
use stealmark_models::hendler_shavit::{HsConfig, HsSteal};
use stealmark_models::real::{berenbrink_on, hendler_shavit_on};
use stealmark_models::ModelError;
use strum::VariantArray;

fn berenbrink(steal: StealFunction) -> BerenbrinkConfig {
    // K = 1, λn = 3 > 2: steal-one cannot keep up.
    BerenbrinkConfig {
        processors: 4,
        generator_hosts: 1,
        lambda: 0.75,
        steal,
        steps: 3_000,
        seed: 2,
    }
}

#[test]
fn real_threads_reproduce_theorem_22_on_every_deque() {
    for &deque in DequeKind::VARIANTS.iter().filter(|d| d.exactly_once()) {
        let one = berenbrink_on(deque, &berenbrink(StealFunction::One)).unwrap();
        assert!(one.conserved, "{deque}");
        assert!(
            !one.report.stable,
            "{deque}: steal-one growth {}",
            one.report.growth_rate
        );
        assert!(
            one.report.growth_rate > 0.5,
            "{deque}: {}",
            one.report.growth_rate
        );
        let half = berenbrink_on(deque, &berenbrink(StealFunction::Half)).unwrap();
        assert!(half.conserved, "{deque}");
        assert!(
            half.report.stable,
            "{deque}: steal-half growth {}",
            half.report.growth_rate
        );
        assert!(half.steal_successes > 0, "{deque}");
    }
}

#[test]
fn real_threads_balance_probabilistically_on_every_deque() {
    for &deque in DequeKind::VARIANTS.iter().filter(|d| d.exactly_once()) {
        for steal in [HsSteal::Half, HsSteal::One] {
            let c = HsConfig {
                processors: 8,
                mu: 0.5,
                steal,
                steps: 1_000,
                seed: 4,
            };
            let r = hendler_shavit_on(deque, &c).unwrap();
            assert!(r.conserved, "{deque} {steal}");
            assert!(r.report.max_time_averaged_ratio >= 1.0, "{deque} {steal}");
            // One producer of eight: the ratio cannot exceed 8.
            assert!(
                r.report.max_time_averaged_ratio <= 8.0 + 1e-9,
                "{deque} {steal}"
            );
        }
    }
}

#[test]
fn unknown_and_missing_deques_are_typed_errors() {
    let c = berenbrink(StealFunction::One);
    assert!("nope".parse::<DequeKind>().is_err());
    let frac = BerenbrinkConfig {
        steal: StealFunction::Fraction(0.25),
        ..c
    };
    assert!(matches!(
        berenbrink_on(DequeKind::Locked, &frac),
        Err(ModelError::RealUnsupported(_))
    ));
}
