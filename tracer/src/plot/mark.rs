//! `mark --plot`: the grey objects each worker holds (private stack, deque
//! and prefetch FIFO) over the median run's pause, above the distribution of
//! pause times over all runs.

use std::ops::Range;
use std::path::Path;

use plotters::coord::types::{RangedCoordf64, RangedCoordu64};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{bar_marker, colour, draw_legend, err, line_marker, render_to_file, PlotResult};
use crate::error::CliResult;
use crate::pause::{percentile, PauseStats};

/// Input of the `mark` plot.
pub struct MarkPlot<'a> {
    /// The title line (heap, deque, policy, worker count).
    pub title: &'a str,
    /// Per worker: sampled (ns from the start of the pause, grey objects
    /// held: private stack + deque + prefetch FIFO).
    pub grey_held: &'a [Vec<(u64, u64)>],
    /// The pause of the run the timeline comes from, in ns.
    pub timeline_pause_ns: u64,
    /// Every measured pause, in milliseconds.
    pub pauses_ms: &'a [f64],
}

/// Writes the `mark` plot: grey objects held over time, then the pause-time
/// distribution.
pub fn write_mark_plot(path: &Path, plot: &MarkPlot<'_>) -> CliResult {
    render_to_file(path, (1000, 900), |root| {
        let root = root.titled(plot.title, ("sans-serif", 22)).map_err(err)?;
        if plot.grey_held.iter().all(Vec::is_empty) {
            // The sequential oracle has no deques: the distribution alone.
            return draw_pause_distribution(&root, plot.pauses_ms);
        }
        let (top, bottom) = root.split_vertically(470);
        draw_grey_timeline(&top, plot.grey_held, plot.timeline_pause_ns)?;
        draw_pause_distribution(&bottom, plot.pauses_ms)
    })
}

/// A chart of the `mark` plot: milliseconds along x, a count from 0 to
/// `y_max` up y.
type CountChart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordu64>>;

/// Builds a [`CountChart`] under `caption` and draws its axes, described by
/// `(x_desc, y_desc)`, with at most eleven labels up y and no minor grid.
fn count_chart<'a, 'b>(
    area: &'a DrawingArea<SVGBackend<'b>, Shift>,
    caption: &str,
    x: Range<f64>,
    y_max: u64,
    (x_desc, y_desc): (&str, &str),
) -> PlotResult<CountChart<'a, 'b>> {
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(x, 0u64..y_max)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .y_labels(y_max.min(10) as usize + 1)
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(err)?;
    Ok(chart)
}

fn draw_grey_timeline(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    series: &[Vec<(u64, u64)>],
    pause_ns: u64,
) -> PlotResult {
    let t_end = series
        .iter()
        .flat_map(|s| s.iter().map(|&(t, _)| t))
        .chain([pause_ns])
        .max()
        .unwrap_or(0);
    let x_max = (t_end as f64 / 1e6).max(1e-3);
    let top = series
        .iter()
        .flat_map(|s| s.iter().map(|&(_, l)| l))
        .max()
        .unwrap_or(0)
        .max(1);
    let y_max = top + top / 12 + 1;
    let mut chart = count_chart(
        area,
        "Grey objects each worker holds (private stack + deque + prefetch FIFO), run with the median pause",
        0f64..x_max,
        y_max,
        (
            "time since the pause started (ms)",
            "grey objects held",
        ),
    )?;
    for (w, samples) in series.iter().enumerate() {
        let c = colour(w);
        // A deque length holds until the next sample: draw steps.
        let mut points = Vec::with_capacity(samples.len() * 2);
        let mut last: Option<u64> = None;
        for &(t, len) in samples {
            let x = t as f64 / 1e6;
            if let Some(prev) = last {
                points.push((x, prev));
            }
            points.push((x, len));
            last = Some(len);
        }
        chart
            .draw_series(LineSeries::new(points, c.stroke_width(2)))
            .map_err(err)?
            .label(format!("worker {w}"))
            .legend(line_marker(c));
    }
    draw_legend(&mut chart, SeriesLabelPosition::UpperRight)
}

fn draw_pause_distribution(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    pauses: &[f64],
) -> PlotResult {
    let Some(stats) = PauseStats::from_ms(pauses) else {
        return Ok(());
    };
    let mut sorted = pauses.to_vec();
    sorted.sort_by(f64::total_cmp);
    // Freedman-Diaconis would give empty bins for a handful of runs; the
    // square-root rule, clamped, reads well from 1 to 1000 runs.
    let bins = (sorted.len() as f64).sqrt().ceil().clamp(1.0, 40.0) as usize;
    let span = (stats.max - stats.min).max(stats.max * 0.02).max(1e-3);
    let lo = (stats.min - span * 0.1).max(0.0);
    let hi = stats.max + span * 0.1;
    let width = (hi - lo) / bins as f64;
    let mut counts = vec![0u64; bins];
    for &p in &sorted {
        let b = (((p - lo) / width) as usize).min(bins - 1);
        counts[b] += 1;
    }
    let top = counts.iter().copied().max().unwrap_or(1);
    let y_max = top + top / 4 + 1;
    let caption = format!(
        "Pause times over {} run{}: p50 {:.3} ms, p99 {:.3} ms",
        sorted.len(),
        if sorted.len() == 1 { "" } else { "s" },
        percentile(&sorted, 0.5),
        percentile(&sorted, 0.99)
    );
    let mut chart = count_chart(area, &caption, lo..hi, y_max, ("pause (ms)", "runs"))?;
    let bar = colour(0);
    chart
        .draw_series(counts.iter().enumerate().map(|(i, &n)| {
            let x0 = lo + width * i as f64;
            Rectangle::new(
                [(x0 + width * 0.04, 0), (x0 + width * 0.96, n)],
                bar.mix(0.75).filled(),
            )
        }))
        .map_err(err)?
        .label("runs per bin")
        .legend(bar_marker(bar));
    for (name, value, c) in [
        ("p50", stats.p50, colour(2)),
        ("p90", stats.p90, colour(1)),
        ("p99", stats.p99, colour(3)),
    ] {
        chart
            .draw_series(LineSeries::new(
                [(value, 0), (value, y_max)],
                c.stroke_width(2),
            ))
            .map_err(err)?
            .label(format!("{name} = {value:.3} ms"))
            .legend(line_marker(c));
    }
    draw_legend(&mut chart, SeriesLabelPosition::UpperRight)
}
