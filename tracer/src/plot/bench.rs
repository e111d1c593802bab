//! `bench --plot`: median pause per configuration, grouped by worker
//! count, with min..max whiskers and the ratio to the baseline.

use std::path::Path;

use plotters::prelude::*;

use super::{bar_marker, colour, draw_legend, err, render_to_file};
use crate::error::CliResult;

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
