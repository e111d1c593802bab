//! `bench --mode --plot`: the minimum mutator utilization curve of each
//! mode at each worker count, over window lengths on a log scale.

use std::path::Path;

use plotters::element::DashedPathElement;
use plotters::prelude::*;

use super::{colour, draw_legend, err, render_to_file};
use crate::error::CliResult;

/// One configuration's MMU curve: (window in ms, utilization) points.
pub struct MmuCurve {
    /// The configuration's name, in the legend.
    pub name: String,
    /// Index of its colour in the palette (curves of a group share one).
    pub colour: usize,
    /// Index of its line style: 0 solid, then the patterns of `DASHES` in turn.
    pub dash: usize,
    /// Points, by increasing window.
    pub points: Vec<(f64, f64)>,
}

/// Dash and gap lengths, in pixels, of the line styles after solid:
/// dashed, dotted, long-dashed, sparsely dotted (then again): with solid,
/// one style for each mode of `bench --mode`.
const DASHES: [(u32, u32); 4] = [(10, 5), (3, 4), (16, 4), (2, 10)];

/// The dash and gap lengths of line style `dash`; `None` for solid (0).
fn dash_pattern(dash: usize) -> Option<(u32, u32)> {
    dash.checked_sub(1).map(|d| DASHES[d % DASHES.len()])
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
        for c in curves {
            let col = colour(c.colour);
            let series = match dash_pattern(c.dash) {
                None => chart
                    .draw_series(LineSeries::new(
                        c.points.iter().copied(),
                        col.stroke_width(2),
                    ))
                    .map_err(err)?,
                Some((on, off)) => chart
                    .draw_series(DashedLineSeries::new(
                        c.points.iter().copied(),
                        on,
                        off,
                        col.stroke_width(2),
                    ))
                    .map_err(err)?,
            };
            // The legend's segment, 18 pixels, dashed as the curve (a dash
            // longer than the segment: solid).
            let (on, off) = dash_pattern(c.dash).unwrap_or((18, 1));
            series.label(c.name.as_str()).legend(move |(x, y)| {
                DashedPathElement::new(vec![(x, y), (x + 18, y)], on, off, col.stroke_width(3))
            });
            chart
                .draw_series(c.points.iter().map(|&p| Circle::new(p, 3, col.filled())))
                .map_err(err)?;
        }
        draw_legend(&mut chart, SeriesLabelPosition::LowerRight)
    })
}
