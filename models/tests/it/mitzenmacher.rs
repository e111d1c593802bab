//! The simulation against the fluid-limit fixed points (Mitzenmacher 1998),
//! with 128 processors as in the paper's tables.

use stealmark_models::mitzenmacher::{fluid, run, MitzenmacherConfig, MitzenmacherReport};

/// Long enough that the estimate's noise is far below the 3% tolerance (the
/// measured errors at this length are below 1%).
const TIME: f64 = 40_000.0;

fn simple(lambda: f64) -> MitzenmacherConfig {
    MitzenmacherConfig {
        time: TIME,
        seed: 5,
        ..MitzenmacherConfig::simple(lambda)
    }
}

/// Checks that `r`'s fixed point came from `method` and that the simulated
/// time in system is within 3% of it; `what` names the run.
fn assert_within_3_percent(r: &MitzenmacherReport, method: fluid::Method, what: &str) {
    assert_eq!(r.fixed_point_method, method, "{what}");
    assert!(
        r.relative_error < 0.03,
        "{what}: simulated {} fixed point {}",
        r.simulated_time_in_system,
        r.fixed_point_time_in_system
    );
}

#[test]
fn simple_model_matches_its_closed_form_within_3_percent() {
    for lambda in [0.1, 0.5, 0.7, 0.8, 0.9] {
        let r = run(&simple(lambda)).unwrap();
        assert_within_3_percent(&r, fluid::Method::ClosedForm, &format!("λ={lambda}"));
        // The tails agree too (π_1 = λ, π_2 from the closed form).
        assert!((r.simulated_tails[0] - lambda).abs() < 0.01, "λ={lambda}");
        assert!(
            (r.simulated_tails[1] - fluid::simple_pi2(lambda)).abs() < 0.01,
            "λ={lambda}"
        );
    }
}

#[test]
fn threshold_stealing_matches_its_closed_form_within_3_percent() {
    for lambda in [0.5, 0.9] {
        let c = MitzenmacherConfig {
            threshold: 4,
            ..simple(lambda)
        };
        let r = run(&c).unwrap();
        assert_within_3_percent(&r, fluid::Method::ClosedForm, &format!("λ={lambda}"));
    }
}

#[test]
fn integrated_variants_match_within_3_percent() {
    let variants = [
        (
            "3.2 transfer delay",
            MitzenmacherConfig {
                threshold: 4,
                transfer_rate: Some(0.25),
                ..simple(0.9)
            },
        ),
        (
            "3.3 multiple choices",
            MitzenmacherConfig {
                choices: 2,
                ..simple(0.9)
            },
        ),
        (
            "3.4 multiple steals",
            MitzenmacherConfig {
                threshold: 4,
                steal_count: 2,
                ..simple(0.9)
            },
        ),
        (
            "2.4 repeated steal attempts",
            MitzenmacherConfig {
                threshold: 3,
                retry_rate: 1.0,
                ..simple(0.9)
            },
        ),
        (
            "2.5 preemptive stealing",
            MitzenmacherConfig {
                threshold: 4,
                preempt_at: 1,
                ..simple(0.9)
            },
        ),
    ];
    for (section, c) in variants {
        let r = run(&c).unwrap();
        assert_eq!(r.section, section);
        assert_within_3_percent(&r, fluid::Method::Ode, section);
    }
}

#[test]
fn bad_parameters_are_named() {
    let err = run(&MitzenmacherConfig {
        steal_count: 2,
        ..simple(0.5)
    })
    .unwrap_err();
    assert!(err.to_string().contains("steal-count"), "{err}");
    let err = run(&MitzenmacherConfig {
        lambda: 1.0,
        ..simple(0.5)
    })
    .unwrap_err();
    assert!(err.to_string().contains("lambda"), "{err}");
    let err = run(&MitzenmacherConfig {
        transfer_rate: Some(0.0),
        ..simple(0.5)
    })
    .unwrap_err();
    assert!(err.to_string().contains("transfer-rate"), "{err}");
}
