//! `bench --mode --plot`: the minimum mutator utilization curve of each
//! mode, over window lengths on a log scale.

use std::path::Path;

use plotters::prelude::*;

use super::{colour, draw_legend, err, line_marker, render_to_file};
use crate::error::CliResult;

/// One mode's MMU curve: (window in ms, utilization) points.
pub struct MmuCurve {
    /// The mode's name.
    pub name: String,
    /// Points, by increasing window.
    pub points: Vec<(f64, f64)>,
}

/// Writes the MMU plot.
pub fn write_mmu_plot(path: &Path, title: &str, curves: &[MmuCurve]) -> CliResult {
    render_to_file(path, (900, 560), |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, ("sans-serif", 18))
            .margin(14)
            .x_label_area_size(45)
            .y_label_area_size(60)
            .build_cartesian_2d((0.5f64..2000.0).log_scale(), 0f64..1.05)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("window (ms)")
            .y_desc("minimum mutator utilization")
            .draw()
            .map_err(err)?;
        for (i, c) in curves.iter().enumerate() {
            let col = colour(i);
            chart
                .draw_series(LineSeries::new(
                    c.points.iter().copied(),
                    col.stroke_width(2),
                ))
                .map_err(err)?
                .label(c.name.as_str())
                .legend(line_marker(col));
            chart
                .draw_series(c.points.iter().map(|&p| Circle::new(p, 3, col.filled())))
                .map_err(err)?;
        }
        draw_legend(&mut chart, SeriesLabelPosition::LowerRight)
    })
}
