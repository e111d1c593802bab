//! `simulate --plot`: a balancing model's steal-one and steal-half runs over
//! time, in two charts one above the other.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{err, render_to_file, PlotResult, COLOURS};
use crate::error::CliResult;

/// The colour of the steal-one run.
const ONE_COLOUR: RGBColor = COLOURS[3];
/// The colour of the steal-half run.
const HALF_COLOUR: RGBColor = COLOURS[0];

/// One run's line in a chart.
pub struct Run {
    /// The legend's label.
    pub label: String,
    /// (step, value) points.
    pub points: Vec<(f64, f64)>,
}

/// One chart of a `simulate` plot.
pub struct Panel {
    /// The title above the chart.
    pub caption: String,
    /// What the y axis measures.
    pub y_label: &'static str,
    /// The steal-one run; `None` draws steal-half alone.
    pub one: Option<Run>,
    /// The steal-half run.
    pub half: Run,
}

/// Writes the `simulate` plot of a run over `steps` steps: `panels[0]`
/// above `panels[1]`.
pub fn write_simulate_plot(path: &Path, steps: u64, panels: &[Panel; 2]) -> CliResult {
    let x_max = steps as f64;
    render_to_file(path, (1000, 800), |root| {
        let (top, bottom) = root.split_vertically(440);
        draw_panel(&top, x_max, &panels[0])?;
        draw_panel(&bottom, x_max, &panels[1])
    })
}

fn draw_panel(area: &DrawingArea<SVGBackend<'_>, Shift>, x_max: f64, panel: &Panel) -> PlotResult {
    let lines: Vec<(&Run, RGBColor)> = panel
        .one
        .iter()
        .map(|one| (one, ONE_COLOUR))
        .chain([(&panel.half, HALF_COLOUR)])
        .collect();
    let y_max = lines
        .iter()
        .flat_map(|(run, _)| run.points.iter().map(|p| p.1))
        .fold(1.0f64, f64::max)
        * 1.05;
    let mut chart = ChartBuilder::on(area)
        .caption(&panel.caption, ("sans-serif", 18))
        .margin(12)
        .margin_right(40)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("step")
        .y_desc(panel.y_label)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| {
            if y_max >= 20.0 {
                format!("{y:.0}")
            } else {
                format!("{y:.1}")
            }
        })
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(err)?;
    for (run, colour) in lines {
        chart
            .draw_series(LineSeries::new(
                run.points.iter().copied(),
                colour.stroke_width(2),
            ))
            .map_err(err)?
            .label(run.label.clone())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], colour.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()
        .map_err(err)
}
