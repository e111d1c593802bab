//! SVG plots drawn with plotters, one module a command: [`mark`] (deque
//! lengths and pause times), [`bench`](mod@bench) (median pause per
//! configuration), [`mmu`] (`bench --mode`: minimum mutator utilization)
//! and [`simulate`] (a balancing model's steal-one and
//! steal-half runs).
//!
//! The SVG is rendered into memory first and written in one go, so an I/O
//! error names the file.

use std::fs;
use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::error::{CliError, CliResult};

mod bench;
mod mark;
mod mmu;
mod simulate;

pub use bench::{write_bench_plot, Bar};
pub use mark::{write_mark_plot, MarkPlot};
pub use mmu::{write_mmu_plot, MmuCurve};
pub use simulate::{write_simulate_plot, Panel, Run};

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
type PlotResult<T = ()> = Result<T, String>;

/// Turns a plotters error into its reason as text.
fn err<E: std::fmt::Debug>(e: E) -> String {
    format!("{e:?}")
}

/// Renders with `draw` into an SVG of `size` pixels and writes it to `path`.
fn render_to_file(
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
fn draw_legend<'a, 'b: 'a, X: Ranged, Y: Ranged>(
    chart: &mut ChartContext<'a, SVGBackend<'b>, Cartesian2d<X, Y>>,
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
                grey_held: &timeline,
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
