//! stealmark against HotSpot's Parallel GC, marking the same object graph.
//!
//! ```sh
//! cargo run --release -p stealmark-bench --bin vs_hotspot  # everything, defaults
//! cargo run --release -p stealmark-bench --bin vs_hotspot -- --graphs tree --gcs 20 --threads 1
//! ```
//!
//! For every graph (`random`, `tree`, `list`; `hotspot/VsHotspot.java`
//! builds them, seeded) and every reference encoding (compressed and
//! uncompressed oops) and GC thread count (1 and 2), one JVM with
//! `-XX:+UseParallelGC` builds the graph and then makes `--gcs` full GCs
//! (`System.gc()`). After each one, stealmark marks the same graph, imported
//! from the JVM's own heap dump, with as many workers, once per snapshot
//! layout: GC and marks alternate, so that load on the machine falls on
//! both alike. HotSpot's time is the `Marking Phase` (and its `Par Mark`
//! sub-phase) of `-Xlog:gc+phases=debug`; stealmark's is the pause of
//! `Marker::mark`. The first `--warmup` rounds of each JVM are dropped; the
//! table gives medians and the median and range of the per-round ratios.
//!
//! The graph's first JVM (compressed oops) dumps its live objects
//! (`HotSpotDiagnosticMXBean.dumpHeap(path, true)`, which runs a full GC
//! first) before its measured GCs; the dump is imported and deleted at once,
//! and the later JVMs, which build the same seeded graph, are compared with
//! that import. Each JVM's class histogram (`GC.class_histogram`, live
//! objects) is checked against what stealmark marked from the dump's GC
//! roots. Without `java` and `javac` (`$JAVA_HOME/bin` or the `PATH`) the
//! example says so and exits successfully.

use stealmark_bench::hotspot as harness;

use std::process::ExitCode;

use clap::{CommandFactory, Parser};

use harness::{median, range, Error, Graph, Imported, Jdk, Jvm, JvmSpec, Oops, TempDir};
use stealmark_heap::{ArenaLayout, HeapGraph};
use stealmark_import::ImportSummary;
use stealmark_marker::{Marker, MarkerConfig};

/// Command-line options.
#[derive(Parser)]
#[command(
    name = "vs_hotspot",
    about = "stealmark against HotSpot's Parallel GC on the same object graphs"
)]
struct Args {
    /// Graphs the Java side builds.
    #[arg(long, value_delimiter = ',', default_value = "random,tree,list")]
    graphs: Vec<Graph>,
    /// HotSpot reference encodings.
    #[arg(long, value_delimiter = ',', default_value = "compressed,uncompressed")]
    oops: Vec<Oops>,
    /// GC threads (HotSpot's `-XX:ParallelGCThreads`, stealmark's workers).
    #[arg(long, value_delimiter = ',', default_value = "1,2",
          value_parser = clap::value_parser!(u16).range(1..))]
    threads: Vec<u16>,
    /// Factor on each graph's default object count.
    #[arg(long, default_value_t = 1.0, value_parser = positive_factor)]
    scale: f64,
    /// Full GCs per JVM (the first `--warmup` are dropped).
    #[arg(long, default_value_t = 12)]
    gcs: usize,
    /// Rounds of each JVM dropped as warm-up.
    #[arg(long, default_value_t = 2)]
    warmup: usize,
    /// Times each (graph, oops, threads) JVM is run.
    #[arg(long, default_value_t = 1)]
    repeat: usize,
    /// The JVM's heap (`-Xms` = `-Xmx`), MiB.
    #[arg(long, default_value_t = 1024)]
    heap_mb: u64,
    /// The graphs' seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// A `--scale` value: a positive, finite factor.
fn positive_factor(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if f > 0.0 && f.is_finite() => Ok(f),
        _ => Err(format!("not a positive factor: {s}")),
    }
}

/// One stealmark snapshot layout of the imported dump.
struct Layout {
    name: &'static str,
    imported: Imported,
}

/// Whether the stealmark layout `name` pairs with HotSpot's `oops` (the
/// others are cross pairings).
fn paired(name: &str, oops: Oops) -> bool {
    matches!(
        (name, oops),
        ("compressed", Oops::Compressed) | ("wide", Oops::Uncompressed)
    )
}

/// One round: a HotSpot full GC, then stealmark's marks.
struct Round {
    marking_ms: f64,
    par_mark_ms: f64,
    /// Pause per layout, ms.
    stealmark_ms: Vec<f64>,
}

/// A cell of the table: graph, HotSpot's oops, thread count.
type Cell = (Graph, Oops, usize);

/// One layout's import: its name, the importer's summary, arena bytes.
type LayoutImport = (&'static str, ImportSummary, u64);

/// Everything measured, for the report.
struct Results {
    /// Rounds per cell, cells in run order.
    cells: Vec<(Cell, Vec<Round>)>,
    sanity: Vec<Sanity>,
    /// Each graph's import, per layout.
    imports: Vec<(Graph, Vec<LayoutImport>)>,
    layouts: Vec<&'static str>,
    /// 1-minute load averages sampled during the run.
    loads: Vec<f64>,
    elapsed: std::time::Duration,
}

/// One JVM's counts.
struct Sanity {
    /// The JVM's repetition (1-based).
    run: usize,
    graph: Graph,
    oops: Oops,
    threads: usize,
    class: String,
    expected: u64,
    histogram_class: u64,
    histogram_total: u64,
    /// HotSpot's heap in use after its measured GCs (median), bytes.
    heap_after: u64,
    /// Per layout: marked objects of the class, and in all.
    marked: Vec<(u64, u64)>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.gcs <= args.warmup {
        Args::command()
            .error(
                clap::error::ErrorKind::ValueValidation,
                "--gcs must exceed --warmup",
            )
            .exit();
    }
    let jdk = match Jdk::find() {
        Ok(j) => j,
        Err(why) => {
            println!("vs_hotspot: skipped: {why}");
            return ExitCode::SUCCESS;
        }
    };
    match run(&args, &jdk) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vs_hotspot: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args, jdk: &Jdk) -> Result<(), Error> {
    let tmp = TempDir::new("stealmark-vs-hotspot")?;
    let classes = tmp.path().join("classes");
    std::fs::create_dir(&classes)?;
    jdk.compile(&classes)?;
    let mut loads: Vec<f64> = harness::load_average().into_iter().collect();
    let started = std::time::Instant::now();

    let mut cells: Vec<(Cell, Vec<Round>)> = Vec::new();
    let mut sanity: Vec<Sanity> = Vec::new();
    let mut imports: Vec<(Graph, Vec<LayoutImport>)> = Vec::new();
    let mut layout_names: Vec<&'static str> = Vec::new();

    for &graph in &args.graphs {
        let objects = (graph.default_objects() as f64 * args.scale)
            .round()
            .max(16.0) as u64;
        let mut layouts: Vec<Layout> = Vec::new();
        for rep in 0..args.repeat {
            for &oops in &args.oops {
                for threads in args.threads.iter().map(|&t| usize::from(t)) {
                    let spec = JvmSpec {
                        graph,
                        objects,
                        seed: args.seed,
                        threads,
                        oops,
                        heap_mb: args.heap_mb,
                        jdk_major: jdk.major(),
                    };
                    eprintln!(
                        "[{:>5.0} s] {graph} ({objects} objects), {} oops, {threads} thread(s), run {}",
                        started.elapsed().as_secs_f64(),
                        oops.name(),
                        rep + 1
                    );
                    let log = tmp
                        .path()
                        .join(format!("gc-{graph}-{}-{threads}-{rep}.log", oops.name()));
                    let mut jvm = Jvm::start(jdk, &classes, &log, &spec)?;
                    if layouts.is_empty() {
                        layouts = dump_and_import(&mut jvm, tmp.path(), graph)?;
                        imports.push((
                            graph,
                            layouts
                                .iter()
                                .map(|l| {
                                    (
                                        l.name,
                                        l.imported.summary.clone(),
                                        l.imported.heap.view().arena_bytes(),
                                    )
                                })
                                .collect(),
                        ));
                        layout_names = layouts.iter().map(|l| l.name).collect();
                    }
                    let (rounds, s) = measure(&mut jvm, &layouts, args.gcs, threads)?;
                    let histogram = jvm.histogram()?;
                    let class = jvm.class.clone();
                    let expected = jvm.expected;
                    let text = jvm.finish()?;
                    let gcs = harness::system_gcs(&text, args.gcs)?;
                    let heap_after: Vec<f64> = gcs
                        .iter()
                        .filter_map(|g| g.heap_after)
                        .map(|b| b as f64)
                        .collect();
                    let heap_after = median(&heap_after) as u64;
                    let rounds: Vec<Round> = rounds
                        .into_iter()
                        .zip(gcs)
                        .map(|(sm, gc)| Round {
                            marking_ms: gc.marking_ms.unwrap_or(f64::NAN),
                            par_mark_ms: gc.par_mark_ms.unwrap_or(f64::NAN),
                            stealmark_ms: sm,
                        })
                        .skip(args.warmup)
                        .collect();
                    match cells.iter_mut().find(|(k, _)| *k == (graph, oops, threads)) {
                        Some((_, r)) => r.extend(rounds),
                        None => cells.push(((graph, oops, threads), rounds)),
                    }
                    sanity.push(Sanity {
                        run: rep + 1,
                        graph,
                        oops,
                        threads,
                        histogram_class: histogram.classes.get(&class).copied().unwrap_or(0),
                        histogram_total: histogram.instances,
                        heap_after,
                        class,
                        expected,
                        marked: s,
                    });
                    loads.extend(harness::load_average());
                }
            }
        }
    }

    let results = Results {
        cells,
        sanity,
        imports,
        layouts: layout_names,
        loads,
        elapsed: started.elapsed(),
    };
    report(args, jdk, &results);
    let bad: Vec<&Sanity> = results
        .sanity
        .iter()
        .filter(|s| {
            s.histogram_class != s.expected || s.marked.iter().any(|&(c, _)| c != s.expected)
        })
        .collect();
    if !bad.is_empty() {
        return Err(format!(
            "{} JVM run(s) where HotSpot, stealmark and the Java side disagree on the graph's objects",
            bad.len()
        )
        .into());
    }
    Ok(())
}

/// Dumps the JVM's live heap, imports it in every layout (compressed
/// first), deletes the dump.
fn dump_and_import(
    jvm: &mut Jvm,
    dir: &std::path::Path,
    graph: Graph,
) -> Result<Vec<Layout>, Error> {
    let path = dir.join(format!("{graph}.hprof"));
    jvm.dump(&path)?;
    let bytes = std::fs::metadata(&path)?.len();
    let mut layouts = Vec::new();
    for layout in [ArenaLayout::Compressed, ArenaLayout::Wide] {
        let t = std::time::Instant::now();
        let imported = harness::import_hprof(&path, layout)?;
        eprintln!(
            "         dump {:.1} MB, imported ({layout}) in {:.1} s: {} objects, {} roots, arena {:.1} MiB",
            bytes as f64 / 1e6,
            t.elapsed().as_secs_f64(),
            imported.summary.objects,
            imported.summary.roots,
            imported.heap.view().arena_bytes() as f64 / (1u64 << 20) as f64,
        );
        layouts.push(Layout {
            name: layout.name(),
            imported,
        });
    }
    std::fs::remove_file(&path)?;
    Ok(layouts)
}

/// `gcs` rounds of one full GC and one mark per layout (the layouts in
/// turn first); returns each round's pauses (ms) and, from the first round,
/// each layout's marked objects of the graph's class and in all.
#[allow(clippy::type_complexity)]
fn measure(
    jvm: &mut Jvm,
    layouts: &[Layout],
    gcs: usize,
    threads: usize,
) -> Result<(Vec<Vec<f64>>, Vec<(u64, u64)>), Error> {
    let mut markers = layouts
        .iter()
        .map(|_| Marker::new(MarkerConfig::with_workers(threads)))
        .collect::<Result<Vec<_>, _>>()?;
    let mut rounds = Vec::with_capacity(gcs);
    let mut counts = vec![(0, 0); layouts.len()];
    for round in 0..gcs {
        jvm.gc()?;
        let mut pauses = vec![0.0; layouts.len()];
        for k in 0..layouts.len() {
            let i = (k + round) % layouts.len();
            let heap = &layouts[i].imported.heap;
            let marking = markers[i].mark(&heap.view(), heap.roots());
            pauses[i] = marking.stats.pause_ns as f64 / 1e6;
            if round == 0 {
                let by_type = harness::marked_by_type(heap, &marking);
                counts[i] = (
                    by_type.get(&jvm.class).copied().unwrap_or(0),
                    marking.bitmap.count(),
                );
            }
        }
        rounds.push(pauses);
    }
    Ok((rounds, counts))
}

fn report(args: &Args, jdk: &Jdk, results: &Results) {
    let Results {
        cells,
        sanity,
        imports,
        layouts,
        loads,
        elapsed,
    } = results;
    let (lo, hi) = range(loads);
    println!();
    println!("machine: {}; {}", harness::machine(), jdk.version());
    println!(
        "load average (1 min) sampled before and after each JVM: {lo:.2}–{hi:.2} (median {:.2}); {:.0} s in all",
        median(loads),
        elapsed.as_secs_f64()
    );
    let probe = JvmSpec {
        graph: Graph::Random,
        objects: 0,
        seed: args.seed,
        threads: 0,
        oops: Oops::Compressed,
        heap_mb: args.heap_mb,
        jdk_major: jdk.major(),
    };
    let threads: Vec<String> = args.threads.iter().map(|t| t.to_string()).collect();
    println!(
        "JVM flags: {} (N = {})",
        probe
            .flags(std::path::Path::new("GC.log"))
            .join(" ")
            .replace("ParallelGCThreads=0", "ParallelGCThreads=N")
            .replace("-XX:+UseCompressedOops", "-XX:±UseCompressedOops"),
        threads.join(", ")
    );
    println!(
        "rounds per cell: {} GCs per JVM, first {} dropped, {} JVM(s) per cell",
        args.gcs, args.warmup, args.repeat
    );
    println!();
    println!("HotSpot Marking Phase (and its Par Mark) against stealmark's pause, medians in ms; ratio = HotSpot / stealmark per round, median (min–max); fastest = the fastest Marking Phase over the fastest stealmark pause (ms / ms):");
    println!();
    println!("| graph | oops | threads | stealmark layout | rounds | HotSpot Marking Phase | HotSpot Par Mark | stealmark | ratio Marking Phase | ratio Par Mark | fastest |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for ((graph, oops, threads), rounds) in cells {
        for (i, name) in layouts.iter().enumerate() {
            let marking: Vec<f64> = rounds.iter().map(|r| r.marking_ms).collect();
            let par: Vec<f64> = rounds.iter().map(|r| r.par_mark_ms).collect();
            let sm: Vec<f64> = rounds.iter().map(|r| r.stealmark_ms[i]).collect();
            let ratio =
                |hs: &[f64]| -> Vec<f64> { hs.iter().zip(&sm).map(|(h, s)| h / s).collect() };
            let (rm, rp) = (ratio(&marking), ratio(&par));
            let (rm_lo, rm_hi) = range(&rm);
            let (rp_lo, rp_hi) = range(&rp);
            let (best_hs, best_sm) = (range(&marking).0, range(&sm).0);
            println!(
                "| {graph} | {} | {threads} | {name}{} | {} | {:.1} | {:.1} | {:.1} | **{:.2}×** ({rm_lo:.2}–{rm_hi:.2}) | {:.2}× ({rp_lo:.2}–{rp_hi:.2}) | {:.2}× ({best_hs:.1} / {best_sm:.1}) |",
                oops.name(),
                if paired(name, *oops) { "" } else { " (cross)" },
                rounds.len(),
                median(&marking),
                median(&par),
                median(&sm),
                median(&rm),
                median(&rp),
                best_hs / best_sm,
            );
        }
    }
    println!();
    println!("Dumps (live objects, dumpHeap(path, true)) as imported:");
    println!();
    println!("| graph | layout | objects | references (weak, soft, phantom) | roots | dropped references | dropped roots | arena MiB |");
    println!("|---|---|---|---|---|---|---|---|");
    for (graph, summaries) in imports {
        for (name, s, arena) in summaries {
            println!(
                "| {graph} | {name} | {} | {} ({}, {}, {}) | {} | {} | {} | {:.1} |",
                s.objects,
                s.references,
                s.weak_references,
                s.soft_references,
                s.phantom_references,
                s.roots,
                s.dropped_references,
                s.dropped_roots,
                *arena as f64 / (1u64 << 20) as f64
            );
        }
    }
    println!();
    println!("Objects: the Java side's own count of the graph's class, HotSpot's class histogram (live), stealmark's marked set from the dump's GC roots:");
    println!();
    let per_layout = layouts.join(" / ");
    println!("| graph | oops | threads | run | class | Java side | HotSpot histogram | stealmark marked ({per_layout}) | HotSpot live, all classes | stealmark marked, all ({per_layout}) | HotSpot heap after GC, MiB |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for s in sanity {
        let per = |f: fn(&(u64, u64)) -> u64| {
            s.marked
                .iter()
                .map(|m| f(m).to_string())
                .collect::<Vec<_>>()
                .join(" / ")
        };
        println!(
            "| {} | {} | {} | {} | `{}` | {} | {} | {} | {} | {} | {:.0} |",
            s.graph,
            s.oops.name(),
            s.threads,
            s.run,
            s.class,
            s.expected,
            s.histogram_class,
            per(|m| m.0),
            s.histogram_total,
            per(|m| m.1),
            s.heap_after as f64 / (1u64 << 20) as f64,
        );
    }
}
