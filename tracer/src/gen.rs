//! `stealmark gen`: generate a synthetic heap and stream it to a snapshot.
//!
//! The snapshot is written to `FILE.partial` beside `FILE` and renamed when
//! complete, so a failed or interrupted run never leaves a truncated file
//! under the name asked for (Ctrl-C and SIGTERM remove `FILE.partial`).
//! Before writing, `gen` checks `-o` (see [`outpath`]), the options against
//! the shape, and the free space against the snapshot's size.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::Args;
use stealmark_heap::{
    generate, ArenaFormat, ArenaLayout, GenConfig, GenError, GenInfo, HeapSink, ObjectHeader, Pos,
    Shape, SnapshotWriter, TypeKind,
};

use crate::args;
use crate::error::{CliError, CliResult};
use crate::outpath;
use crate::output::{self, outln};
use crate::partial::PartialFile;
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
    #[arg(long, value_name = "S", default_value_t = GenConfig::DEFAULT_SEED, value_parser = args::whole::<u64>)]
    pub seed: u64,
    /// Fraction of the objects that are unreachable garbage, in [0, 1)
    /// [default: 0.2 for runtime and weak, 0 otherwise].
    #[arg(long, value_name = "FRAC", value_parser = fraction)]
    pub garbage: Option<f64>,
    /// Reference slots per object (random, power-law).
    #[arg(long, value_name = "D", value_parser = args::positive::<u32>)]
    pub degree: Option<u32>,
    /// Maximum branching B (dag).
    #[arg(long, value_name = "B", value_parser = args::positive::<u32>)]
    pub branch: Option<u32>,
    /// Maximum depth D (dag) [default: the smallest that reaches N objects].
    #[arg(long, value_name = "D", requires = "branch", value_parser = args::positive::<u32>)]
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
    /// Replace FILE even if it is not a stealmark snapshot, and write even
    /// if its file system seems to have too little free space.
    #[arg(long)]
    pub force: bool,
}

/// The shape names, parsed into the heap's [`Shape`].
fn shape() -> impl TypedValueParser<Value = Shape> {
    PossibleValuesParser::new(Shape::ALL.iter().map(|s| s.name())).try_map(|s| s.parse::<Shape>())
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
    reject_unused_options(&args)?;
    outpath::check_snapshot_output(&args.output, None, args.force)?;
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
    check_free_space(&config, &args.output, args.force)?;
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
    let partial = PartialFile::beside(path, ".partial");
    let progress = Progress::new(config.objects, "gen", "objects");
    let mut set = progress.setter();
    let mut writer = SnapshotWriter::create(partial.path())
        .map_err(|e| CliError::failed(format!("creating {}", path.display()), e))?
        .on_progress(move |p| set(p.objects));
    let info = generate(config, &mut writer).map_err(|e| match e {
        GenError::Config(message) => CliError::usage(message),
        GenError::Sink(e) => CliError::failed(format!("writing {}", path.display()), e),
    })?;
    writer
        .finish()
        .map_err(|e| CliError::failed(format!("writing {}", path.display()), e))?;
    progress.finish();
    partial
        .commit(path)
        .map_err(|e| CliError::io("create", path, e))?;
    Ok(info)
}

// ---- Safety checks made before writing (options, free space) ----

/// Rejects an option the shape does not use (it would be silently
/// ignored).
fn reject_unused_options(args: &GenArgs) -> CliResult {
    let shape = args.shape;
    let uses_degree = matches!(shape, Shape::Random | Shape::PowerLaw);
    let unused = [
        (
            "--degree",
            args.degree.is_some() && !uses_degree,
            "random and power-law",
        ),
        (
            "--branch",
            args.branch.is_some() && shape != Shape::Dag,
            "dag",
        ),
        (
            "--depth",
            args.depth.is_some() && shape != Shape::Dag,
            "dag",
        ),
    ];
    match unused.into_iter().find(|&(_, given, _)| given) {
        Some((flag, _, shapes)) => Err(CliError::usage(format!(
            "{flag} applies to the {shapes} shapes only, not to {shape}; leave it out"
        ))),
        None => Ok(()),
    }
}

/// Room left free beyond the arena, for the header, the section table, the
/// roots and the type names.
const SPACE_MARGIN: u64 = 1 << 20;

/// Refuses, unless `force`, to start a snapshot that the free space of
/// `path`'s file system cannot hold: the arena's size (exact: the
/// generators lay out the arena before emitting it) plus 1 MiB.
fn check_free_space(config: &GenConfig, path: &Path, force: bool) -> CliResult {
    if force {
        return Ok(());
    }
    let Some(needed) = estimated_bytes(config)? else {
        return Ok(());
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    // A file system that cannot report its free space is not checked.
    let Ok(available) = fs4::available_space(dir) else {
        return Ok(());
    };
    if needed <= available {
        return Ok(());
    }
    Err(CliError::advised(
        format!(
            "{} would need about {} for {} objects, but its file system ({}) has {} free",
            path.display(),
            output::bytes(needed),
            output::count(config.objects),
            dir.display(),
            output::bytes(available)
        ),
        "free some space, write to another file system with -o, generate fewer objects, or add --force to try anyway",
    ))
}

/// The size of the snapshot of `config`, in bytes, or `None` if the
/// generator does not announce its arena. A usage error for a
/// configuration the generator rejects.
fn estimated_bytes(config: &GenConfig) -> CliResult<Option<u64>> {
    let mut probe = SizeProbe::default();
    match generate(config, &mut probe) {
        Err(GenError::Config(message)) => Err(CliError::usage(message)),
        _ => Ok(probe.arena_words.map(|w| w * 8 + SPACE_MARGIN)),
    }
}

/// A sink that keeps the size the generator announces
/// ([`HeapSink::reserve`], before its first object) and stops it at the
/// first object, so that the size is known before anything is written.
#[derive(Default)]
struct SizeProbe {
    arena_words: Option<u64>,
    types: u32,
    format: ArenaFormat,
}

/// The error that stops the generator at its first object.
#[derive(Debug, thiserror::Error)]
#[error("size probed")]
struct Probed;

impl HeapSink for SizeProbe {
    type Error = Probed;

    fn set_format(&mut self, format: ArenaFormat) -> Result<(), Probed> {
        self.format = format;
        Ok(())
    }

    fn format(&self) -> ArenaFormat {
        self.format
    }

    fn finalizable(&mut self, _target: Pos) -> Result<(), Probed> {
        Ok(())
    }

    fn type_kind(&mut self, _type_id: u32, _kind: TypeKind) -> Result<(), Probed> {
        Ok(())
    }

    fn reserve(&mut self, _objects: u64, arena_words: u64) {
        self.arena_words = Some(arena_words);
    }

    fn begin_object(&mut self, _header: ObjectHeader) -> Result<Pos, Probed> {
        Err(Probed)
    }

    fn slots(&mut self, _slots: &[stealmark_heap::Slot]) -> Result<(), Probed> {
        Err(Probed)
    }

    fn too_many_slots(&self, _count: usize) -> Probed {
        Probed
    }

    fn root(&mut self, _target: Pos) -> Result<(), Probed> {
        Ok(())
    }

    fn type_name(&mut self, _name: &str) -> Result<u32, Probed> {
        self.types += 1;
        Ok(self.types - 1)
    }

    fn next_pos(&self) -> Pos {
        Pos::FIRST
    }
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
    fn the_size_estimate_is_the_arena_announced_before_the_first_object() {
        let config = GenConfig::new(Shape::Random, 10_000).degree(4);
        let estimate = estimated_bytes(&config)
            .unwrap()
            .expect("random announces its arena");
        let mut builder = stealmark_heap::HeapBuilder::new();
        let info = generate(&config, &mut builder).unwrap();
        assert_eq!(estimate, info.arena_words * 8 + SPACE_MARGIN);
        // The probe stops at once, also for the largest heap.
        let huge = GenConfig::new(Shape::Random, u64::from(u32::MAX)).degree(1024);
        let huge = estimated_bytes(&huge).unwrap().unwrap();
        assert!(huge > 1u64 << 45, "{huge}");
    }
}
