//! `simulate berenbrink`: the work-stealing chain of Berenbrink, Friedetzky
//! and Goldberg, its table of the total load and its plot.

use stealmark_deques::DequeKind;
use stealmark_models::berenbrink::{self, BerenbrinkConfig, BerenbrinkReport, StealFunction};
use stealmark_models::real::{self, RealReport};
use stealmark_models::{ModelError, StabilityRule, STABILITY_RULE};

use super::workload::{self, load_points, Workload};
use super::BerenbrinkArgs;
use crate::error::CliResult;
use crate::output::{count, Align, Table};
use crate::plot::{Panel, Run};

/// Runs `stealmark simulate berenbrink`.
pub(super) fn run(a: &BerenbrinkArgs) -> CliResult {
    let config = BerenbrinkConfig {
        processors: a.processors,
        generator_hosts: a.generator_hosts,
        lambda: a.lambda,
        steal: a.steal,
        steps: a.run.steps,
        seed: a.run.seed,
    };
    workload::run(config, &a.run)
}

impl Workload for BerenbrinkConfig {
    type Steal = StealFunction;
    type Report = BerenbrinkReport;
    const COMPARED: [StealFunction; 2] = [StealFunction::One, StealFunction::Half];
    const TITLE: &'static str = "Berenbrink et al.";
    const MODEL: &'static str = "the Markov chain of Fig. 1";
    const LABEL_WIDTH: usize = 22;

    fn processors(&self) -> usize {
        self.processors
    }

    fn steps(&self) -> u64 {
        self.steps
    }

    fn steal(&self) -> StealFunction {
        self.steal
    }

    fn with_steal(self, steal: StealFunction) -> Self {
        BerenbrinkConfig { steal, ..self }
    }

    fn simulate(&self) -> Result<BerenbrinkReport, ModelError> {
        berenbrink::simulate(self)
    }

    fn on_deque(&self, deque: DequeKind) -> Result<RealReport<BerenbrinkReport>, ModelError> {
        real::berenbrink_on(deque, self)
    }

    fn parameters(&self) -> String {
        format!(
            "n = {} processors, K = {} generator hosts, λ = {} (λn = {}), steal {}, {} steps, seed {}",
            self.processors,
            self.generator_hosts,
            self.lambda,
            self.arrival_rate(),
            self.steal,
            self.steps,
            self.seed
        )
    }

    /// The total load at about ten steps, the last one included.
    fn table(&self, r: &BerenbrinkReport) -> Table {
        let mut table = Table::new([("step", Align::Right), ("total load", Align::Right)]);
        let stride = r.total_load.len().div_ceil(10).max(1);
        for (i, s) in r.total_load.iter().enumerate() {
            if i % stride == stride - 1 || i + 1 == r.total_load.len() {
                table.push(vec![count(s.step), count(s.load)]);
            }
        }
        table
    }

    fn summary(&self, r: &BerenbrinkReport) -> Vec<(&'static str, String)> {
        let threshold = StabilityRule::DEFAULT.max_growth_fraction * self.arrival_rate();
        vec![
            ("final total load", count(r.final_total_load)),
            (
                "growth rate",
                format!(
                    "{:.3} tasks/step over the second half (unstable above {:.3})",
                    r.growth_rate, threshold
                ),
            ),
            ("stable", r.stable.to_string()),
            ("paper predicts", r.prediction.to_string()),
            (
                "tasks",
                format!(
                    "{} generated, {} served, {} moved by steals",
                    count(r.generated),
                    count(r.serviced),
                    count(r.stolen)
                ),
            ),
        ]
    }

    fn deque_summary(real: &RealReport<BerenbrinkReport>) -> String {
        format!(
            "{}: {} steal attempts, {} succeeded, {} lost a race; tasks conserved: {}",
            real.deque,
            count(real.steal_attempts),
            count(real.steal_successes),
            count(real.steal_aborts),
            real.conserved
        )
    }

    fn note(&self) -> Option<String> {
        Some(format!("Stability rule: {STABILITY_RULE}"))
    }

    /// The total load of both runs, then steal-half's alone (its scale
    /// is lost beside a diverging steal-one).
    fn panels(&self, mode: &str, [one, half]: &[BerenbrinkReport; 2]) -> [Panel; 2] {
        let caption = format!(
            "Berenbrink et al. ({mode}): n={}, K={}, λ={} (λn={}), total load",
            self.processors,
            self.generator_hosts,
            self.lambda,
            self.arrival_rate()
        );
        [
            Panel {
                caption,
                y_label: "total load",
                one: Some(load_run(one)),
                half: load_run(half),
            },
            Panel {
                caption: "steal-half alone (zoomed)".to_string(),
                y_label: "total load",
                one: None,
                half: load_run(half),
            },
        ]
    }
}

/// A run's total load, labelled with its outcome.
fn load_run(r: &BerenbrinkReport) -> Run {
    Run {
        label: format!(
            "steal {}: final {}, growth {:.2}/step, {}",
            r.config.steal,
            r.final_total_load,
            r.growth_rate,
            if r.stable { "stable" } else { "unstable" }
        ),
        points: load_points(&r.total_load),
    }
}
