//! stealmark on the heaps of real programs, against the peers' own marking
//! of the same live heaps.
//!
//! ```sh
//! cargo run --release -p stealmark-bench --bin corpus                  # every program
//! cargo run --release -p stealmark-bench --bin corpus -- --programs javac,tsc --threads 1
//! ```
//!
//! The corpus (`bench/corpus/README.md`): three Java programs (`javac`,
//! `strings`, `caches`; `hotspot/Corpus.java`) on HotSpot 17 and on the
//! newest JDK found, and two Node programs (`tsc`, `eslint`;
//! `corpus/node/workload.js`) on the machine's node. Each program builds
//! its working set and holds it while it is captured (an HPROF dump of the
//! live objects, or a V8 heap snapshot) and imported into a stealmark
//! snapshot, cached in `--cache` with a record of the capture; a later run
//! reuses it (`--recapture` makes it again).
//!
//! Then, per heap and thread count, the peer's marking is timed on its own
//! live heap, alternating with stealmark's collection of the snapshot at
//! as many workers:
//! - HotSpot: one JVM per thread count (`-XX:+UseParallelGC
//!   -XX:ParallelGCThreads=N`) builds the working set and makes `--gcs`
//!   full GCs (`System.gc()`), each followed by one stealmark collection;
//!   its time is the `Marking Phase` of `-Xlog:gc+phases=debug`; stealmark
//!   keeps soft referents, as HotSpot does without memory pressure, and
//!   resurrects the finalizable objects.
//! - V8: `--rounds` node processes per thread count, each making `--gcs`
//!   full GCs (`gc()`), its time the `mark=` phase of `--trace-gc-nvp`,
//!   the first GC of each process dropped; after each process, as many
//!   stealmark collections.
//!
//! Last, the engine at 1 worker, its sequential marker and the replay floor
//! mark each snapshot's strong closure in the same rounds, alternated
//! (`--floor-runs`), as `stealmark bench --reference` does. Every table is
//! printed as Markdown, with the counts check: the objects stealmark marks
//! beside the peer's own count of the live heap.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;

use stealmark_bench::hotspot::{self as harness, median, range, Error, Jdk, Jvm, Oops};
use stealmark_bench::v8::{self, Node};
use stealmark_heap::{mark_sequential, oracle, HeapGraph, OracleInput, Snapshot, SnapshotWriter};
use stealmark_import::{self as import, ImportOptions, ImportSummary, InputFile};
use stealmark_marker::bench::{compare, Subject};
use stealmark_marker::model::SoftRefs;
use stealmark_marker::model::{MarkStore, ObjRef, ObjectModel, SlotKind};
use stealmark_marker::sequential::{Replay, SequentialMarker};
use stealmark_marker::{Collection, Marker, MarkerConfig};

/// Command-line options.
#[derive(Parser)]
#[command(
    name = "corpus",
    about = "stealmark against HotSpot's and V8's own marking on the heaps of real programs"
)]
struct Args {
    /// Programs of the corpus.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "javac,strings,caches,tsc,eslint"
    )]
    programs: Vec<Program>,
    /// Where captured heaps, installed packages and extracted sources are
    /// kept [default: $STEALMARK_CORPUS, else $XDG_CACHE_HOME/stealmark-corpus,
    /// else ~/.cache/stealmark-corpus].
    #[arg(long)]
    cache: Option<PathBuf>,
    /// JDK homes for the Java programs [default: JDK 17 and the newest JDK
    /// under /usr/lib/jvm and $JAVA_HOME].
    #[arg(long, value_delimiter = ',')]
    jdks: Vec<PathBuf>,
    /// GC threads (the peer's) and workers (stealmark's).
    #[arg(long, value_delimiter = ',', default_value = "1,2",
          value_parser = clap::value_parser!(u16).range(1..))]
    threads: Vec<u16>,
    /// Full GCs per JVM or node process.
    #[arg(long, default_value_t = 8)]
    gcs: usize,
    /// GCs dropped as warm-up per JVM (node: always the first of each process).
    #[arg(long, default_value_t = 2)]
    warmup: usize,
    /// node processes per thread count.
    #[arg(long, default_value_t = 2)]
    rounds: usize,
    /// Rounds of the floor comparison.
    #[arg(long, default_value_t = 9)]
    floor_runs: usize,
    /// The JVM's heap (`-Xms` = `-Xmx`) and node's old space, MiB.
    #[arg(long, default_value_t = 3072)]
    heap_mb: u64,
    /// Capture every heap again, even if the cache has it.
    #[arg(long)]
    recapture: bool,
}

/// A program of the corpus.
#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
enum Program {
    /// javac attributing a large part of the JDK's own sources.
    Javac,
    /// HashMap- and String-heavy indexes of source text.
    Strings,
    /// WeakHashMap and soft caches over object graphs.
    Caches,
    /// The TypeScript compiler type-checking a large codebase.
    Tsc,
    /// ESLint linting many JavaScript files, keeping their source code
    /// objects.
    Eslint,
}

impl Program {
    fn name(self) -> &'static str {
        match self {
            Program::Javac => "javac",
            Program::Strings => "strings",
            Program::Caches => "caches",
            Program::Tsc => "tsc",
            Program::Eslint => "eslint",
        }
    }

    fn is_java(self) -> bool {
        matches!(self, Program::Javac | Program::Strings | Program::Caches)
    }
}

/// The runtime a program runs on.
enum Peer {
    HotSpot(Java),
    V8 { node: Node, modules: PathBuf },
}

impl Peer {
    fn name(&self) -> String {
        match self {
            Peer::HotSpot(java) => format!("jdk{}", java.major),
            Peer::V8 { node, .. } => format!("node{}", node_major(&node.version())),
        }
    }

    fn label(&self) -> String {
        match self {
            Peer::HotSpot(java) => format!("HotSpot {} Parallel GC `Marking Phase`", java.major),
            Peer::V8 { node, .. } => format!("V8 (node {}) full-GC `mark`", node.version()),
        }
    }
}

/// A JDK with the corpus programs compiled for it.
struct Java {
    jdk: Jdk,
    /// Its feature release.
    major: u32,
    /// The compiled classes.
    classes: PathBuf,
}

impl Java {
    /// Starts `program` with Parallel GC on `threads` GC threads and its GC
    /// log written to `log`, and waits until its working set is built (its
    /// input data in `cache`).
    fn launch(
        &self,
        args: &Args,
        cache: &Path,
        program: Program,
        threads: usize,
        log: &Path,
    ) -> Result<Jvm, Error> {
        let flags = harness::parallel_gc_flags(
            Some(self.major),
            threads,
            Oops::Compressed,
            args.heap_mb,
            log,
        );
        Jvm::launch(
            &self.jdk,
            &self.classes,
            log,
            &flags,
            "Corpus",
            &[program.name().to_owned(), cache.display().to_string()],
        )
    }
}

/// `v20.20.2` → `20`.
fn node_major(version: &str) -> &str {
    version
        .trim_start_matches('v')
        .split('.')
        .next()
        .unwrap_or("")
}

/// A heap of the corpus, captured and imported.
struct Captured {
    name: String,
    snapshot: Snapshot,
    /// The capture's record, a `key: value` line each: the peer's own
    /// counts and the import's summary.
    record: String,
    /// Whether HotSpot's rules apply (else V8's).
    hotspot: bool,
}

impl Captured {
    /// A collection of the snapshot under the peer's rules: HotSpot keeps
    /// recently used soft referents while memory is not short (V8 has
    /// none), and finalizable objects are resurrected.
    fn collection(&self) -> Collection<'_, [ObjRef], [ObjRef]> {
        let soft = if self.hotspot {
            SoftRefs::KeepAll
        } else {
            SoftRefs::ClearAll
        };
        Collection::new(self.snapshot.roots())
            .finalizable(self.snapshot.finalizable())
            .soft_refs(soft)
    }

    /// The value of `key` in the capture's record.
    fn recorded(&self, key: &str) -> Option<&str> {
        self.record
            .lines()
            .find_map(|l| l.strip_prefix(key).and_then(|rest| rest.strip_prefix(": ")))
    }
}

/// One thread count's paired rounds: the peer's time and stealmark's, ms.
struct Cell {
    threads: usize,
    peer_ms: Vec<f64>,
    stealmark_ms: Vec<f64>,
}

/// The floor comparison of one heap.
struct Floor {
    engine_ms: f64,
    sequential_ms: f64,
    floor_ms: f64,
    /// Paired medians: engine / floor, sequential / floor.
    engine_over_floor: f64,
    sequential_over_floor: f64,
    marked: u64,
    /// The objects through which the contract extends the strong closure,
    /// given to the sequential marker and the floor as roots.
    extra_roots: u64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.gcs <= args.warmup || args.gcs < 2 {
        eprintln!("corpus: --gcs must exceed --warmup and be at least 2");
        return ExitCode::from(2);
    }
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("corpus: {e}");
            ExitCode::FAILURE
        }
    }
}

fn cache_dir(args: &Args) -> Result<PathBuf, Error> {
    if let Some(c) = &args.cache {
        return Ok(c.clone());
    }
    if let Some(c) = std::env::var_os("STEALMARK_CORPUS") {
        return Ok(c.into());
    }
    if let Some(c) = std::env::var_os("XDG_CACHE_HOME") {
        return Ok(Path::new(&c).join("stealmark-corpus"));
    }
    let home = std::env::var_os("HOME").ok_or("no --cache, $STEALMARK_CORPUS or $HOME")?;
    Ok(Path::new(&home).join(".cache").join("stealmark-corpus"))
}

/// JDK 17 and the newest JDK: `--jdks`, else `$JAVA_HOME` and every JDK
/// under `/usr/lib/jvm`.
fn jdks(args: &Args) -> Result<Vec<(Jdk, u32)>, Error> {
    let homes: Vec<PathBuf> = if args.jdks.is_empty() {
        let mut h: Vec<PathBuf> = std::env::var_os("JAVA_HOME")
            .map(Into::into)
            .into_iter()
            .collect();
        if let Ok(dir) = fs::read_dir("/usr/lib/jvm") {
            let mut found: Vec<PathBuf> = dir.flatten().map(|e| e.path()).collect();
            found.sort();
            h.extend(found);
        }
        h
    } else {
        args.jdks.clone()
    };
    let mut all: Vec<(Jdk, u32)> = Vec::new();
    for home in &homes {
        if let Some(jdk) = Jdk::at(home) {
            if let Some(major) = jdk.major() {
                if !all.iter().any(|(_, m)| *m == major) {
                    all.push((jdk, major));
                }
            }
        }
    }
    if !args.jdks.is_empty() {
        if all.len() != args.jdks.len() {
            return Err(
                "a --jdks entry is not a JDK home (bin/java and bin/javac) or repeats a release"
                    .into(),
            );
        }
        return Ok(all);
    }
    let newest = all.iter().map(|(_, m)| *m).max();
    all.retain(|(_, m)| *m == 17 || Some(*m) == newest);
    if all.is_empty() {
        return Err("no JDK found under /usr/lib/jvm or $JAVA_HOME (install JDK 17 and a newer one, or give --jdks)".into());
    }
    Ok(all)
}

fn run(args: &Args) -> Result<(), Error> {
    let cache = cache_dir(args)?;
    fs::create_dir_all(&cache)?;
    let started = Instant::now();
    let mut loads: Vec<f64> = harness::load_average().into_iter().collect();
    let mut peers: Vec<Peer> = Vec::new();
    if args.programs.iter().any(|p| p.is_java()) {
        for (jdk, major) in jdks(args)? {
            let classes = cache.join(format!("classes-jdk{major}"));
            fs::create_dir_all(&classes)?;
            jdk.compile(&classes)?;
            peers.push(Peer::HotSpot(Java {
                jdk,
                major,
                classes,
            }));
        }
    }
    if args.programs.iter().any(|p| !p.is_java()) {
        let node = Node::find()?;
        let modules = install_node_packages(&cache)?;
        peers.push(Peer::V8 { node, modules });
    }
    println!("machine: {}", harness::machine());
    for &program in &args.programs {
        for peer in peers
            .iter()
            .filter(|p| matches!(p, Peer::HotSpot(_)) == program.is_java())
        {
            let heap = capture(args, &cache, program, peer)?;
            eprintln!(
                "[{:>5.0} s] {}: timing",
                started.elapsed().as_secs_f64(),
                heap.name
            );
            let cells = time_peer(args, &cache, program, peer, &heap)?;
            eprintln!(
                "[{:>5.0} s] {}: floor",
                started.elapsed().as_secs_f64(),
                heap.name
            );
            let floor = floor(&heap, args.floor_runs)?;
            let mut table = String::new();
            report_heap(&mut table, args, &heap, peer, &cells, &floor)?;
            print!("{table}");
            loads.extend(harness::load_average());
        }
    }
    let (lo, hi) = range(&loads);
    println!(
        "\nload average (1 min) before and after each heap: {lo:.2}–{hi:.2}; {:.0} s in all",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Installs the Node programs' packages (`corpus/node/package-lock.json`)
/// into the cache once; returns their `node_modules`.
fn install_node_packages(cache: &Path) -> Result<PathBuf, Error> {
    let dir = cache.join("node");
    let lock = corpus_dir().join("node").join("package-lock.json");
    let want = fs::read(&lock)?;
    let modules = dir.join("node_modules");
    if modules.is_dir() && fs::read(dir.join("package-lock.json")).ok().as_ref() == Some(&want) {
        return Ok(modules);
    }
    fs::create_dir_all(&dir)?;
    fs::copy(
        corpus_dir().join("node").join("package.json"),
        dir.join("package.json"),
    )?;
    fs::write(dir.join("package-lock.json"), &want)?;
    let status = std::process::Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund"])
        .current_dir(&dir)
        .status()?;
    if !status.success() {
        return Err(format!("npm ci in {} failed ({status})", dir.display()).into());
    }
    Ok(modules)
}

/// The corpus's sources in this repository.
fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus")
}

/// The capture of `program` on `peer`, from the cache or made now.
fn capture(args: &Args, cache: &Path, program: Program, peer: &Peer) -> Result<Captured, Error> {
    let name = format!("{}-{}", program.name(), peer.name());
    let smk = cache.join(format!("{name}.smk"));
    let record_path = cache.join(format!("{name}.txt"));
    if args.recapture || !smk.is_file() || !record_path.is_file() {
        let mut record = String::new();
        let t = Instant::now();
        // HotSpot insists on the extension.
        let dump = cache.join(format!(
            "{name}.{}",
            if program.is_java() {
                "hprof"
            } else {
                "heapsnapshot"
            }
        ));
        match peer {
            Peer::HotSpot(java) => {
                let log = cache.join(format!("{name}-capture.gc.log"));
                let mut jvm = java.launch(args, cache, program, 2, &log)?;
                writeln!(record, "built: {} {}", jvm.class, jvm.expected)?;
                let histogram = jvm.histogram()?;
                writeln!(record, "histogram_instances: {}", histogram.instances)?;
                jvm.dump(&dump)?;
                jvm.finish()?;
                let _ = fs::remove_file(&log);
            }
            Peer::V8 { node, modules } => {
                let text = node.run(
                    2,
                    args.heap_mb,
                    &workload_js(),
                    &node_args(program, modules, 0, Some(&dump)),
                )?;
                let built =
                    v8::built_count(&text).ok_or("the Node program printed no `built` line")?;
                writeln!(record, "built: {} {built}", program.name())?;
            }
        }
        writeln!(record, "capture_s: {:.1}", t.elapsed().as_secs_f64())?;
        writeln!(record, "dump_bytes: {}", fs::metadata(&dump)?.len())?;
        let summary = import_to(&dump, &smk, program.is_java())?;
        fs::remove_file(&dump)?;
        write!(record, "{}", summary_record(&summary))?;
        fs::write(&record_path, &record)?;
    }
    Ok(Captured {
        name,
        snapshot: Snapshot::open(&smk)?,
        record: fs::read_to_string(&record_path)?,
        hotspot: program.is_java(),
    })
}

fn summary_record(s: &ImportSummary) -> String {
    format!(
        "objects: {}\nreferences: {}\nweak: {}\nsoft: {}\nphantom: {}\nephemeron: {}\nfinalizable: {}\nroots: {}\ndropped_references: {}\ndropped_roots: {}\nundecoded_instances: {}\n",
        s.objects,
        s.references,
        s.weak_references,
        s.soft_references,
        s.phantom_references,
        s.ephemeron_references,
        s.finalizable,
        s.roots,
        s.dropped_references,
        s.dropped_roots,
        s.undecoded_instances
    )
}

/// Imports `dump` (HPROF or V8) into the snapshot file `smk`, written
/// beside it first and renamed.
fn import_to(dump: &Path, smk: &Path, hprof: bool) -> Result<ImportSummary, Error> {
    let partial = smk.with_extension("smk.partial");
    let mut writer = SnapshotWriter::create(&partial)?;
    let input = InputFile::open(dump)?;
    let options = ImportOptions::default();
    let summary = if hprof {
        import::hprof_with(&input, &mut writer, &mut |_| {}, &options)?
    } else {
        import::v8_with(input.reader()?, &mut writer, &options)?
    };
    writer.finish()?;
    fs::rename(&partial, smk)?;
    Ok(summary)
}

fn workload_js() -> PathBuf {
    corpus_dir().join("node").join("workload.js")
}

fn node_args(program: Program, modules: &Path, gcs: usize, snapshot: Option<&Path>) -> Vec<String> {
    let mut a = vec![
        program.name().to_owned(),
        modules.display().to_string(),
        gcs.to_string(),
    ];
    a.extend(snapshot.map(|s| s.display().to_string()));
    a
}

/// The pause of stealmark's collection of the snapshot under the peer's
/// rules, ms.
fn collect_ms(marker: &mut Marker, heap: &Captured) -> f64 {
    let marking = marker.collect(&heap.snapshot.view(), &heap.collection());
    marking.stats.pause_ns as f64 / 1e6
}

/// The peer's marking and stealmark's collection, paired, per thread count.
fn time_peer(
    args: &Args,
    cache: &Path,
    program: Program,
    peer: &Peer,
    heap: &Captured,
) -> Result<Vec<Cell>, Error> {
    let mut cells = Vec::new();
    for threads in args.threads.iter().map(|&t| usize::from(t)) {
        let mut marker = Marker::new(MarkerConfig::with_workers(threads))?;
        let mut cell = Cell {
            threads,
            peer_ms: Vec::new(),
            stealmark_ms: Vec::new(),
        };
        match peer {
            Peer::HotSpot(java) => {
                let log = cache.join(format!("{}-{threads}.gc.log", heap.name));
                let mut jvm = java.launch(args, cache, program, threads, &log)?;
                let mut mine = Vec::new();
                for _ in 0..args.gcs {
                    jvm.gc()?;
                    mine.push(collect_ms(&mut marker, heap));
                }
                let text = jvm.finish()?;
                let _ = fs::remove_file(&log);
                let gcs = harness::system_gcs(&text, args.gcs)?;
                cell.peer_ms = gcs
                    .iter()
                    .skip(args.warmup)
                    .map(|g| g.marking_ms.unwrap_or(f64::NAN))
                    .collect();
                cell.stealmark_ms = mine.into_iter().skip(args.warmup).collect();
            }
            Peer::V8 { node, modules } => {
                for _ in 0..args.rounds {
                    let text = node.run(
                        threads,
                        args.heap_mb,
                        &workload_js(),
                        &node_args(program, modules, args.gcs, None),
                    )?;
                    let marks = v8::full_gc_marks(&text);
                    if marks.len() < args.gcs {
                        return Err(format!(
                            "node printed {} full GCs, {} were made",
                            marks.len(),
                            args.gcs
                        )
                        .into());
                    }
                    // The last `gcs` full GCs are ours; the first is a warm-up.
                    let ours = &marks[marks.len() - args.gcs + 1..];
                    for &m in ours {
                        cell.peer_ms.push(m);
                        cell.stealmark_ms.push(collect_ms(&mut marker, heap));
                    }
                }
            }
        }
        cells.push(cell);
    }
    Ok(cells)
}

/// The engine at 1 worker (a collection under the peer's rules, as
/// timed against the peer), the sequential marker and the replay floor,
/// alternated, each counting live objects as the engine does by default.
/// The sequential marker and the floor trace strong slots only, so the
/// objects through which the runtime contract extends the strong closure
/// (kept soft referents, live ephemerons' values, resurrected finalizable
/// objects) are given to them as extra roots: all three mark the same set.
fn floor(heap: &Captured, runs: usize) -> Result<Floor, Error> {
    let snapshot = &heap.snapshot;
    let view = snapshot.view();
    let roots = snapshot.roots();
    let config = MarkerConfig::with_workers(1);
    let prefetch = config.prefetch();
    let mut marker = Marker::new(config)?;
    let collection = heap.collection();
    let mut strong_only = SequentialMarker::new(0);
    let strong = strong_only.mark(&view, roots);
    let mut extended: Vec<ObjRef> = roots.to_vec();
    {
        let marked = &marker.collect(&view, &collection).bitmap;
        let added = |o: ObjRef| marked.is_marked(&view, o) && !strong.is_marked(&view, o);
        for holder in view.objects().filter(|&o| marked.is_marked(&view, o)) {
            view.scan_slots(holder, 0..view.slot_count(holder), |_, target, kind| {
                if matches!(kind, SlotKind::Soft | SlotKind::Ephemeron { .. }) && added(target) {
                    extended.push(target);
                }
            });
        }
        extended.extend(snapshot.finalizable().iter().copied().filter(|&o| added(o)));
    }
    let extended = &extended[..];
    let mut sequential = SequentialMarker::new(prefetch).count_live(true);
    let mut replay = Replay::record(&view, extended).count_live(true);
    let (view_e, view_s, view_r) = (&view, &view, &view);
    let collection = &collection;
    let mut subjects = vec![
        Subject::custom("engine", move || {
            marker.collect(view_e, collection).bitmap.count()
        }),
        Subject::custom("sequential", move || {
            sequential.mark(view_s, extended).count()
        }),
        Subject::custom("floor", move || {
            replay.run(view_r, extended, prefetch).count()
        }),
    ];
    let report = compare(&view, roots, &mut subjects, runs)?;
    let get = |n: &str| report.get(n).map_or(f64::NAN, |r| r.median_ns as f64 / 1e6);
    Ok(Floor {
        engine_ms: get("engine"),
        sequential_ms: get("sequential"),
        floor_ms: get("floor"),
        engine_over_floor: report.ratio("engine", "floor").unwrap_or(f64::NAN),
        sequential_over_floor: report.ratio("sequential", "floor").unwrap_or(f64::NAN),
        marked: report.get("engine").map_or(0, |r| r.marked),
        extra_roots: (extended.len() - roots.len()) as u64,
    })
}

fn per_round(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter().zip(b).map(|(x, y)| x / y).collect()
}

fn report_heap(
    out: &mut String,
    args: &Args,
    heap: &Captured,
    peer: &Peer,
    cells: &[Cell],
    floor: &Floor,
) -> Result<(), Error> {
    let hotspot = heap.hotspot;
    // The engine's count (the floor's rounds checked that every collection
    // marked as many) against the oracle's under the same rules.
    let marked = floor.marked;
    let view = heap.snapshot.view();
    let strong = mark_sequential(&view, heap.snapshot.roots()).objects;
    let collection = heap.collection();
    let contract = oracle(
        &view,
        &OracleInput {
            roots: collection.roots,
            finalizable: collection.finalizable,
            soft_refs: collection.soft_refs,
        },
    )
    .objects;
    writeln!(out, "\n### {} ({})\n", heap.name, peer.label())?;
    writeln!(
        out,
        "capture: {}",
        heap.record.lines().collect::<Vec<_>>().join("; ")
    )?;
    let captured = heap.recorded("objects").unwrap_or("?");
    writeln!(
        out,
        "counts: stealmark's collection marks {marked} objects ({}); the heap crate's oracle under the same rules {contract}; strongly reachable (strong slots, and ephemeron values whose keys are) {strong}; {}\n",
        if hotspot { "soft referents kept, finalizable objects resurrected" } else { "the runtime contract of the snapshot" },
        match heap.recorded("histogram_instances") {
            Some(n) => format!("the dump's {captured} objects, HotSpot's class histogram of the live heap {n} instances"),
            None => format!("the snapshot's {captured} nodes, V8's live heap after its GC"),
        }
    )?;
    writeln!(out, "| threads | peer, ms (median, min–max) | stealmark, ms | peer / stealmark per round, median (min–max) |")?;
    writeln!(out, "|---|---|---|---|")?;
    for c in cells {
        let (plo, phi) = range(&c.peer_ms);
        let (slo, shi) = range(&c.stealmark_ms);
        let ratios = per_round(&c.peer_ms, &c.stealmark_ms);
        let (rlo, rhi) = range(&ratios);
        writeln!(
            out,
            "| {} | {:.1} ({plo:.1}–{phi:.1}) | {:.1} ({slo:.1}–{shi:.1}) | {:.2}× ({rlo:.2}–{rhi:.2}) |",
            c.threads,
            median(&c.peer_ms),
            median(&c.stealmark_ms),
            median(&ratios)
        )?;
    }
    writeln!(
        out,
        "\nthe collection's {} objects, 1 thread, {} alternated rounds (the sequential marker and the floor given as roots the {} objects through which the contract extends the strong closure): engine {:.1} ms, sequential {:.1} ms, floor {:.1} ms; engine / floor {:.2}×, sequential / floor {:.2}×",
        floor.marked,
        args.floor_runs,
        floor.extra_roots,
        floor.engine_ms,
        floor.sequential_ms,
        floor.floor_ms,
        floor.engine_over_floor,
        floor.sequential_over_floor
    )?;
    Ok(())
}
