//! `simulate hendler-shavit`: asymmetric probabilistic balancing, its table
//! of the most loaded processes and its plot.

use stealmark_deques::DequeKind;
use stealmark_models::hendler_shavit::{self, HsConfig, HsReport, HsSteal};
use stealmark_models::real::{self, RealReport};
use stealmark_models::ModelError;

use super::workload::{self, load_points, Workload};
use super::HendlerShavitArgs;
use crate::error::CliResult;
use crate::output::{count, Align, Table};
use crate::plot::{Panel, Run};

/// Runs `stealmark simulate hendler-shavit`.
pub(super) fn run(a: &HendlerShavitArgs) -> CliResult {
    let config = HsConfig {
        processors: a.processors,
        mu: a.mu,
        steal: a.steal,
        steps: a.run.steps,
        seed: a.run.seed,
    };
    workload::run(config, &a.run)
}

impl Workload for HsConfig {
    type Steal = HsSteal;
    type Report = HsReport;
    const COMPARED: [HsSteal; 2] = [HsSteal::One, HsSteal::Half];
    const TITLE: &'static str = "Hendler-Shavit asymmetric probabilistic balancing";
    const MODEL: &'static str = "the step model of section 3";
    const LABEL_WIDTH: usize = 32;

    fn processors(&self) -> usize {
        self.processors
    }

    fn steps(&self) -> u64 {
        self.steps
    }

    fn steal(&self) -> HsSteal {
        self.steal
    }

    fn with_steal(self, steal: HsSteal) -> Self {
        HsConfig { steal, ..self }
    }

    fn simulate(&self) -> Result<HsReport, ModelError> {
        hendler_shavit::simulate(self)
    }

    fn on_deque(&self, deque: DequeKind) -> Result<RealReport<HsReport>, ModelError> {
        real::hendler_shavit_on(deque, self)
    }

    fn parameters(&self) -> String {
        format!(
            "n = {} processes, µ = {}, steal {}, {} steps, seed {}; {} producers × {} items/step",
            self.processors,
            self.mu,
            self.steal,
            self.steps,
            self.seed,
            self.producers(),
            hendler_shavit::PRODUCER_TASKS
        )
    }

    /// The five processes with the largest time-averaged ratio.
    fn table(&self, r: &HsReport) -> Table {
        let mut order: Vec<usize> = (0..r.time_averaged_ratios.len()).collect();
        order.sort_by(|&x, &y| r.time_averaged_ratios[y].total_cmp(&r.time_averaged_ratios[x]));
        let mut table = Table::new([
            ("process", Align::Right),
            ("role", Align::Left),
            ("mean L_p/A_t", Align::Right),
        ]);
        for &p in order.iter().take(5) {
            let role = if p < self.producers() {
                "producer"
            } else {
                "consumer"
            };
            table.push(vec![
                p.to_string(),
                role.to_string(),
                format!("{:.3}", r.time_averaged_ratios[p]),
            ]);
        }
        table
    }

    fn summary(&self, r: &HsReport) -> Vec<(&'static str, String)> {
        vec![
            (
                "largest time-averaged L_p/A_t",
                format!(
                    "{:.3} (process {})",
                    r.max_time_averaged_ratio, r.argmax_process
                ),
            ),
            ("final total load", count(r.final_total_load)),
            (
                "balancing",
                format!(
                    "{} steals moved {} items",
                    count(r.balances),
                    count(r.moved)
                ),
            ),
        ]
    }

    fn deque_summary(real: &RealReport<HsReport>) -> String {
        format!(
            "{}: {} steal attempts, {} lost a race; items conserved: {}",
            real.deque,
            count(real.steal_attempts),
            count(real.steal_aborts),
            real.conserved
        )
    }

    /// max_p L_p/A_t of both runs, then their total load.
    fn panels(&self, mode: &str, [one, half]: &[HsReport; 2]) -> [Panel; 2] {
        let caption = format!(
            "Hendler-Shavit ({mode}): n={}, µ={}, max_p L_p/A_t",
            self.processors, self.mu
        );
        [
            Panel {
                caption,
                y_label: "max_p L_p / A_t",
                one: Some(ratio_run(one)),
                half: ratio_run(half),
            },
            Panel {
                caption: "total load".to_string(),
                y_label: "total load",
                one: Some(load_run(one)),
                half: load_run(half),
            },
        ]
    }
}

/// A run's max_p L_p/A_t, labelled with its largest time average.
fn ratio_run(r: &HsReport) -> Run {
    Run {
        label: format!(
            "steal {}: largest time-averaged L_p/A_t = {:.2}",
            r.config.steal, r.max_time_averaged_ratio
        ),
        points: r
            .max_ratio
            .iter()
            .map(|s| (s.step as f64, s.max_ratio))
            .collect(),
    }
}

/// A run's total load, labelled with its final value.
fn load_run(r: &HsReport) -> Run {
    Run {
        label: format!(
            "steal {}: final total load {}",
            r.config.steal, r.final_total_load
        ),
        points: load_points(&r.total_load),
    }
}
