//! `simulate mitzenmacher`: the discrete-event simulation beside the
//! fluid-limit fixed point.

use stealmark_models::mitzenmacher::{self, MitzenmacherConfig, MitzenmacherReport};

use super::MitzenmacherArgs;
use crate::error::CliResult;
use crate::output::{count, out, outln, print_json, Align, Format, Table};

/// Runs `stealmark simulate mitzenmacher`.
pub(super) fn run(a: &MitzenmacherArgs) -> CliResult {
    let config = MitzenmacherConfig {
        lambda: a.lambda,
        processors: a.processors,
        threshold: a.threshold,
        steal_count: a.steal_count,
        choices: a.choices,
        transfer_rate: a.transfer_rate,
        retry_rate: 0.0,
        preempt_at: 0,
        time: a.time,
        seed: a.seed,
    };
    let r: MitzenmacherReport = mitzenmacher::run(&config)?;
    if a.json {
        return print_json(&r);
    }
    let delay = match config.transfer_rate {
        Some(rate) => format!("transfer rate {rate}"),
        None => "instantaneous transfers".to_string(),
    };
    outln!(
        "Mitzenmacher, {}\n  λ = {}, {} processors, T = {}, K = {}, D = {}, {delay}, time {} (warm-up {}), seed {}\n",
        r.section,
        config.lambda,
        config.processors,
        config.threshold,
        config.steal_count,
        config.choices,
        config.time,
        config.time * mitzenmacher::WARMUP_FRACTION,
        config.seed
    )?;
    let method = match r.fixed_point_method {
        mitzenmacher::fluid::Method::ClosedForm => "closed form",
        mitzenmacher::fluid::Method::Ode => "integrated ODEs",
    };
    let mut summary = Table::new([("", Align::Left), ("time in system", Align::Right)]);
    summary.push(vec![
        format!("simulated ({} tasks)", count(r.tasks_measured)),
        format!("{:.4}", r.simulated_time_in_system),
    ]);
    summary.push(vec![
        format!("fixed point ({method})"),
        format!("{:.4}", r.fixed_point_time_in_system),
    ]);
    summary.push(vec![
        "relative error".to_string(),
        format!("{:.2}%", 100.0 * r.relative_error),
    ]);
    out!("{}", summary.render(Format::Table))?;
    outln!()?;
    let mut tails = Table::new([
        ("i", Align::Right),
        ("simulated s_i", Align::Right),
        ("fixed point π_i", Align::Right),
    ]);
    for (i, fp) in r.fixed_point_tails.iter().enumerate().take(12) {
        let sim = r.simulated_tails.get(i).copied().unwrap_or(0.0);
        tails.push(vec![
            (i + 1).to_string(),
            format!("{sim:.5}"),
            format!("{fp:.5}"),
        ]);
    }
    out!("{}", tails.render(Format::Table))?;
    outln!(
        "\nsteal attempts that found a victim: {:.1}%",
        100.0 * r.steal_success_ratio
    )?;
    Ok(())
}
