//! `stealmark gen`: generate a synthetic heap and stream it to a snapshot.
//!
//! The snapshot is written to `FILE.partial` beside `FILE` and renamed when
//! complete, so a failed or interrupted run never leaves a truncated file
//! under the name asked for.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::Args;
use stealmark_heap::{generate, ArenaLayout, GenConfig, GenError, GenInfo, Shape, SnapshotWriter};

use crate::args;
use crate::error::{CliError, CliResult};
use crate::heapfile::partial_path;
use crate::output::{self, outln};
use crate::progress::Progress;

/// Arguments of `stealmark gen`.
#[derive(Args)]
#[command(after_help = "Examples:\n  \
    stealmark gen --shape runtime --objects 2M -o heap.smk\n  \
    stealmark gen --shape random --objects 10000000 --seed 42 -o random.smk\n  \
    stealmark gen --shape binary-tree --objects 1M --garbage 0.3 -o tree.smk\n  \
    stealmark gen --shape dag --objects 1M --branch 13 -o dag.smk\n  \
    stealmark gen --shape weak --objects 8M --all-strong -o strong.smk\n\n\
    Shapes: random (uniform out-degree), power-law (preferential attachment), binary-tree, \
    list (long chains), wide (one root, many children), big-array (an array of at least 2^20 slots), \
    dag (the Chase-Lev benchmark DAG), runtime (size classes, arrays, cycles, weak references, garbage), \
    weak (soft, weak and phantom references, WeakMap-like ephemeron tables with chains holding 5% of \
    the objects, finalizable objects), ephemeron-chain (one ephemeron chain as long as the heap; \
    compare with list).\n\n\
    Layout: compressed (4-byte references, as HotSpot's compressed oops) whenever the heap fits in \
    32 GiB of arena, which is the default; --wide writes 8-byte references.")]
pub struct GenArgs {
    /// Heap shape.
    #[arg(long, value_name = "SHAPE", value_parser = shape())]
    pub shape: Shape,
    /// Objects, garbage included (`250k`, `2M` and `1_000_000` work).
    #[arg(long, value_name = "N", value_parser = args::count)]
    pub objects: u64,
    /// Random seed: the same seed gives the same file, on every platform.
    #[arg(long, value_name = "S", default_value_t = GenConfig::DEFAULT_SEED)]
    pub seed: u64,
    /// Fraction of the objects that are unreachable garbage, in [0, 1)
    /// [default: 0.2 for runtime and weak, 0 otherwise].
    #[arg(long, value_name = "FRAC", value_parser = fraction)]
    pub garbage: Option<f64>,
    /// Reference slots per object (random, power-law).
    #[arg(long, value_name = "D")]
    pub degree: Option<u32>,
    /// Maximum branching B (dag).
    #[arg(long, value_name = "B")]
    pub branch: Option<u32>,
    /// Maximum depth D (dag) [default: the smallest that reaches N objects].
    #[arg(long, value_name = "D", requires = "branch")]
    pub depth: Option<u32>,
    /// Write 8-byte references (the wide layout) [default: compressed, 4-byte
    /// references, whenever the heap fits in 32 GiB].
    #[arg(long, conflicts_with = "compressed")]
    pub wide: bool,
    /// Write 4-byte references, and fail if the heap does not fit in 32 GiB
    /// [default: compressed when it fits, else wide].
    #[arg(long)]
    pub compressed: bool,
    /// weak, ephemeron-chain: make every soft, weak, phantom and ephemeron
    /// slot strong and register no finalizable objects (the same graph
    /// without reference processing).
    #[arg(long)]
    pub all_strong: bool,
    /// The snapshot file to write.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
}

/// The shape names, parsed into the heap's [`Shape`].
fn shape() -> impl TypedValueParser<Value = Shape> {
    PossibleValuesParser::new(Shape::EVERY.iter().map(|s| s.name())).try_map(|s| s.parse::<Shape>())
}

/// Parses a garbage fraction in [0, 1).
fn fraction(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(f) if (0.0..1.0).contains(&f) => Ok(f),
        _ => Err(format!(
            "`{s}` is not a fraction in [0, 1); give one such as 0.2"
        )),
    }
}

/// Runs `stealmark gen`.
pub fn run(args: GenArgs) -> CliResult {
    let mut config = GenConfig::new(args.shape, args.objects).seed(args.seed);
    if let Some(g) = args.garbage {
        config = config.garbage(g);
    }
    if let Some(d) = args.degree {
        config = config.degree(d);
    }
    if let Some(b) = args.branch {
        config.branch = b;
        config.depth = args.depth;
    }
    config = config.all_strong(args.all_strong).layout(if args.wide {
        Some(ArenaLayout::Wide)
    } else if args.compressed {
        Some(ArenaLayout::Compressed)
    } else {
        None
    });
    let start = Instant::now();
    let info = write_snapshot(&config, &args.output)?;
    let bytes = fs::metadata(&args.output).map_or(0, |m| m.len());
    let reachable = info
        .reachable
        .map(|r| format!(", {} reachable", output::count(r)))
        .unwrap_or_default();
    outln!(
        "wrote {}: {} heap, {} ({} garbage{reachable}), {}, {} layout, {} in {:.1} s",
        args.output.display(),
        info.shape,
        output::counted(info.objects, "object"),
        output::count(info.garbage),
        output::counted(info.roots, "root"),
        info.layout,
        output::bytes(bytes),
        start.elapsed().as_secs_f64()
    )
}

/// Streams the heap of `config` to `path` with a progress bar, through a
/// temporary file renamed on success.
fn write_snapshot(config: &GenConfig, path: &Path) -> CliResult<GenInfo> {
    if path.file_name().is_none() {
        return Err(CliError::usage(format!(
            "-o {} is not a file name",
            path.display()
        )));
    }
    let partial = partial_path(path, ".partial");
    let progress = Progress::new(config.objects, "gen", "objects");
    let result = (|| {
        let mut set = progress.setter();
        let mut writer = SnapshotWriter::create(&partial)
            .map_err(|e| CliError::failed(format!("creating {}", path.display()), e))?
            .on_progress(move |p| set(p.objects));
        let info = generate(config, &mut writer).map_err(|e| match e {
            GenError::Config(message) => CliError::usage(message),
            GenError::Sink(e) => CliError::failed(format!("writing {}", path.display()), e),
        })?;
        writer
            .finish()
            .map_err(|e| CliError::failed(format!("writing {}", path.display()), e))?;
        fs::rename(&partial, path).map_err(|e| CliError::io("create", path, e))?;
        Ok(info)
    })();
    progress.finish();
    if result.is_err() {
        let _ = fs::remove_file(&partial);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions() {
        assert_eq!(fraction("0.25"), Ok(0.25));
        assert_eq!(fraction("0"), Ok(0.0));
        assert!(fraction("1").is_err());
        assert!(fraction("-0.1").is_err());
        assert!(fraction("NaN").is_err());
    }

    #[test]
    fn partial_file_sits_beside_the_output() {
        assert_eq!(
            partial_path(Path::new("/a/b/heap.smk"), ".partial"),
            Path::new("/a/b/heap.smk.partial")
        );
    }
}
