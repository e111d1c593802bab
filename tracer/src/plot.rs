//! SVG plots drawn with plotters:
//! - `mark --plot`: each worker's deque length over the last run's pause,
//!   above the distribution of pause times over all runs;
//! - `bench --plot`: median pause per configuration, grouped by worker
//!   count, with min..max whiskers and the ratio to the baseline.
//!
//! The SVG is rendered into memory first and written in one go, so an I/O
//! error names the file.

use std::fs;
use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::error::{CliError, CliResult};
use crate::pause::{percentile, PauseStats};

/// Ten colours that stay distinguishable, also for most colour-blind
/// readers (the Tableau 10 palette).
const COLOURS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

fn colour(i: usize) -> RGBColor {
    COLOURS[i % COLOURS.len()]
}

/// The result of a drawing step; the error is plotters' reason as text.
pub(crate) type PlotResult<T = ()> = Result<T, String>;

/// Turns a plotters error into its reason as text.
pub(crate) fn err<E: std::fmt::Debug>(e: E) -> String {
    format!("{e:?}")
}

/// Renders with `draw` into an SVG of `size` pixels and writes it to `path`.
pub(crate) fn render_to_file(
    path: &Path,
    size: (u32, u32),
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> PlotResult,
) -> CliResult {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE)
            .map_err(err)
            .and_then(|()| draw(&root))
            .and_then(|()| root.present().map_err(err))
            .map_err(|reason| CliError::failed(format!("drawing {}", path.display()), reason))?;
    }
    fs::write(path, svg).map_err(|e| CliError::io("write", path, e))
}

/// Draws the legend of the labelled series, on a translucent box.
fn draw_legend<'a, X: Ranged, Y: Ranged>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
    position: SeriesLabelPosition,
) -> PlotResult {
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .draw()
        .map_err(err)
}

/// A legend marker for a line series.
fn line_marker(c: RGBColor) -> impl Fn((i32, i32)) -> PathElement<(i32, i32)> {
    move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(3))
}

/// A legend marker for a bar series.
fn bar_marker(c: RGBColor) -> impl Fn((i32, i32)) -> Rectangle<(i32, i32)> {
    move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], c.filled())
}

/// Input of the `mark` plot.
pub struct MarkPlot<'a> {
    /// The title line (heap, deque, policy, worker count).
    pub title: &'a str,
    /// Per worker: sampled (ns from the start of the pause, deque length).
    pub deque_length: &'a [Vec<(u64, u64)>],
    /// The pause of the run the timeline comes from, in ns.
    pub timeline_pause_ns: u64,
    /// Every measured pause, in milliseconds.
    pub pauses_ms: &'a [f64],
}

/// Writes the `mark` plot: deque lengths over time, then the pause-time
/// distribution.
pub fn write_mark_plot(path: &Path, plot: &MarkPlot<'_>) -> CliResult {
    render_to_file(path, (1000, 900), |root| {
        let root = root.titled(plot.title, ("sans-serif", 22)).map_err(err)?;
        if plot.deque_length.iter().all(Vec::is_empty) {
            // The sequential oracle has no deques: the distribution alone.
            return draw_pause_distribution(&root, plot.pauses_ms);
        }
        let (top, bottom) = root.split_vertically(470);
        draw_deque_timeline(&top, plot.deque_length, plot.timeline_pause_ns)?;
        draw_pause_distribution(&bottom, plot.pauses_ms)
    })
}

fn draw_deque_timeline(
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
    let mut chart = ChartBuilder::on(area)
        .caption(
            "Deque length of each worker during the run with the median pause",
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..x_max, 0u64..y_max)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("time since the pause started (ms)")
        .y_desc("grey objects in the deque")
        .y_labels(y_max.min(10) as usize + 1)
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(err)?;
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
    let mut counts = vec![0u32; bins];
    for &p in &sorted {
        let b = (((p - lo) / width) as usize).min(bins - 1);
        counts[b] += 1;
    }
    let top = counts.iter().copied().max().unwrap_or(1);
    let y_max = top + top / 4 + 1;
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!(
                "Pause times over {} run{}: p50 {:.3} ms, p99 {:.3} ms",
                sorted.len(),
                if sorted.len() == 1 { "" } else { "s" },
                percentile(&sorted, 0.5),
                percentile(&sorted, 0.99)
            ),
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(lo..hi, 0u32..y_max)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("pause (ms)")
        .y_desc("runs")
        .y_labels(y_max.min(10) as usize + 1)
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(err)?;
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

/// One bar of the `bench` chart.
pub struct Bar {
    /// The configuration's name (deque and policy), one colour each.
    pub config: String,
    /// Worker count: bars are grouped by it.
    pub threads: usize,
    /// Median pause, ms.
    pub median_ms: f64,
    /// Shortest pause, ms (whisker).
    pub min_ms: f64,
    /// Longest pause, ms (whisker).
    pub max_ms: f64,
    /// Median over the baseline's median.
    pub ratio: f64,
}

/// Writes the `bench` bar chart.
pub fn write_bench_plot(path: &Path, title: &str, bars: &[Bar]) -> CliResult {
    let mut threads: Vec<usize> = bars.iter().map(|b| b.threads).collect();
    threads.sort_unstable();
    threads.dedup();
    let mut configs: Vec<&str> = Vec::new();
    for b in bars {
        if !configs.contains(&b.config.as_str()) {
            configs.push(&b.config);
        }
    }
    let width = (160 + threads.len() * configs.len() * 46).clamp(900, 2400) as u32;
    render_to_file(path, (width, 620), |root| {
        let y_max = bars
            .iter()
            .map(|b| b.max_ms.max(b.median_ms))
            .fold(0.0, f64::max)
            .max(1e-3)
            * (1.18 + 0.04 * configs.len() as f64);
        let groups = threads.len().max(1);
        let mut chart = ChartBuilder::on(root)
            .caption(title, ("sans-serif", 20))
            .margin(14)
            .x_label_area_size(45)
            .y_label_area_size(65)
            .build_cartesian_2d(-0.5f64..groups as f64 - 0.5, 0f64..y_max)
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(groups + 1)
            .x_label_formatter(&|x| {
                let k = x.round();
                if (x - k).abs() < 1e-6 && k >= 0.0 && (k as usize) < threads.len() {
                    let n = threads[k as usize];
                    format!("{n} worker{}", if n == 1 { "" } else { "s" })
                } else {
                    String::new()
                }
            })
            .y_desc("median pause (ms); whiskers: min..max")
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(err)?;
        let slot = 0.84 / configs.len().max(1) as f64;
        let label_ratios = threads.len() * configs.len() <= 40;
        for (ci, config) in configs.iter().enumerate() {
            let c = colour(ci);
            let mine: Vec<(f64, &Bar)> = bars
                .iter()
                .filter(|b| b.config == *config)
                .map(|b| {
                    let g = threads.iter().position(|&t| t == b.threads).unwrap_or(0);
                    (g as f64 - 0.42 + slot * ci as f64, b)
                })
                .collect();
            chart
                .draw_series(mine.iter().map(|&(x0, b)| {
                    Rectangle::new(
                        [(x0 + slot * 0.08, 0.0), (x0 + slot * 0.92, b.median_ms)],
                        c.filled(),
                    )
                }))
                .map_err(err)?
                .label(config.to_string())
                .legend(bar_marker(c));
            chart
                .draw_series(mine.iter().map(|&(x0, b)| {
                    let xc = x0 + slot * 0.5;
                    PathElement::new(vec![(xc, b.min_ms), (xc, b.max_ms)], BLACK.stroke_width(1))
                }))
                .map_err(err)?;
            if label_ratios {
                chart
                    .draw_series(mine.iter().map(|&(x0, b)| {
                        Text::new(
                            format!("{:.2}×", b.ratio),
                            (x0 + slot * 0.1, b.max_ms.max(b.median_ms) + y_max * 0.015),
                            ("sans-serif", 11),
                        )
                    }))
                    .map_err(err)?;
            }
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperRight)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mark_plot_is_an_svg_document() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.svg");
        let timeline = vec![vec![(0, 5), (1_000_000, 3)], vec![(500_000, 1)]];
        write_mark_plot(
            &path,
            &MarkPlot {
                title: "test",
                deque_length: &timeline,
                timeline_pause_ns: 2_000_000,
                pauses_ms: &[1.0, 1.5, 2.0],
            },
        )
        .unwrap();
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.contains("<svg"));
        assert!(text.contains("worker 1"));
    }

    #[test]
    fn bench_plot_is_an_svg_document() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.svg");
        let bars = vec![Bar {
            config: "abp".into(),
            threads: 2,
            median_ms: 1.0,
            min_ms: 0.9,
            max_ms: 1.2,
            ratio: 1.0,
        }];
        write_bench_plot(&path, "t", &bars).unwrap();
        assert!(fs::read_to_string(&path).unwrap().contains("2 workers"));
    }

    #[test]
    fn unwritable_path_is_an_io_error() {
        let err = write_bench_plot(Path::new("/nonexistent-dir/x.svg"), "t", &[]).unwrap_err();
        assert_eq!(err.exit_code(), 1);
    }
}
