//! The harness of the HotSpot comparisons (the `vs_hotspot` and `corpus`
//! programs): finding and running JDKs, talking to the Java side
//! (`hotspot/VsHotspot.java`, `hotspot/Corpus.java`), parsing HotSpot's
//! unified GC log and class histogram, and importing and marking the heap
//! dump with stealmark.

use std::collections::HashMap;
use std::fmt;
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Output, Stdio};

use stealmark_heap::{ArenaLayout, Heap, HeapBuilder, HeapGraph, MarkIndex};
use stealmark_import::{self as import, ImportOptions, ImportSummary, InputFile};
use stealmark_marker::Marking;

/// The Java sources, compiled at run time with the JDK under measurement:
/// the graph builder and the corpus programs, which share its command loop.
pub const JAVA_SOURCES: [&str; 2] = [
    concat!(env!("CARGO_MANIFEST_DIR"), "/hotspot/VsHotspot.java"),
    concat!(env!("CARGO_MANIFEST_DIR"), "/hotspot/Corpus.java"),
];
/// The graph builder's main class.
pub const JAVA_MAIN: &str = "VsHotspot";

/// An error of the harness, as text: every one is reported and ends the run.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// The JDK's `java` and `javac`.
#[derive(Clone, Debug)]
pub struct Jdk {
    /// The `java` launcher.
    pub java: PathBuf,
    /// The compiler.
    pub javac: PathBuf,
}

impl Jdk {
    /// The JDK installed at `home` (`home/bin/java` and `home/bin/javac`),
    /// if both are there.
    pub fn at(home: &Path) -> Option<Jdk> {
        let (java, javac) = (
            home.join("bin").join("java"),
            home.join("bin").join("javac"),
        );
        (java.is_file() && javac.is_file()).then_some(Jdk { java, javac })
    }

    /// `$JAVA_HOME/bin`, else the `PATH`; `Err` says what is missing.
    pub fn find() -> Result<Jdk, String> {
        let find = |name: &str| -> Option<PathBuf> {
            if let Some(home) = std::env::var_os("JAVA_HOME") {
                let p = Path::new(&home).join("bin").join(name);
                if p.is_file() {
                    return Some(p);
                }
            }
            on_path(name)
        };
        match (find("java"), find("javac")) {
            (Some(java), Some(javac)) => Ok(Jdk { java, javac }),
            (java, javac) => Err(format!(
                "no {} in $JAVA_HOME/bin or on the PATH (a JDK 17 or later is needed)",
                match (java, javac) {
                    (None, None) => "java and no javac",
                    (None, _) => "java",
                    _ => "javac",
                }
            )),
        }
    }

    /// The first line of `java -version` (it prints to standard error).
    pub fn version(&self) -> String {
        Command::new(&self.java)
            .arg("-version")
            .output()
            .ok()
            .and_then(|o| {
                String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .next()
                    .map(str::to_owned)
            })
            .unwrap_or_else(|| "unknown".to_owned())
    }

    /// The feature release, from `java -version`'s first line
    /// (`openjdk version "17.0.15"` gives 17, `"1.8.0_402"` gives 8).
    pub fn major(&self) -> Option<u32> {
        parse_major(&self.version())
    }

    /// Compiles [`JAVA_SOURCES`] into `classes`.
    pub fn compile(&self, classes: &Path) -> Result<(), Error> {
        checked_output(
            Command::new(&self.javac)
                .arg("-d")
                .arg(classes)
                .args(JAVA_SOURCES),
            "javac",
        )?;
        Ok(())
    }
}

/// The file `name` in the first directory of the `PATH` that has it.
pub fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// Runs `cmd` to its end and returns its output; `Err` with its standard
/// error, named `what`, if it fails.
pub fn checked_output(cmd: &mut Command, what: &str) -> Result<Output, Error> {
    let out = cmd.output()?;
    if !out.status.success() {
        return Err(format!(
            "{what} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    Ok(out)
}

/// The feature release named by the first line of `java -version`.
pub fn parse_major(version: &str) -> Option<u32> {
    let quoted = version.split('"').nth(1)?;
    let mut parts = quoted.split(|c: char| !c.is_ascii_digit());
    match parts.next()?.parse().ok()? {
        1 => parts.next()?.parse().ok(),
        major => Some(major),
    }
}

/// The graphs the Java side builds.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, clap::ValueEnum)]
pub enum Graph {
    /// Nodes of four uniformly random references, eight roots.
    Random,
    /// A complete binary tree, allocated breadth-first.
    Tree,
    /// 1024 `java.util.LinkedList`s of boxed `Long`s, appended round-robin.
    List,
}

impl Graph {
    /// Every graph.
    pub const ALL: [Graph; 3] = [Graph::Random, Graph::Tree, Graph::List];

    /// The name the Java side and the command line use.
    pub fn name(self) -> &'static str {
        match self {
            Graph::Random => "random",
            Graph::Tree => "tree",
            Graph::List => "list",
        }
    }

    /// Objects allocated by default (the Java side's `OBJECTS` argument):
    /// sizes that HotSpot marks in a few hundred milliseconds on one thread
    /// of the 2-vCPU benchmark machine under load.
    pub fn default_objects(self) -> u64 {
        match self {
            Graph::Random => 1_000_000,
            Graph::Tree => 4_000_000,
            Graph::List => 2_000_000,
        }
    }
}

impl fmt::Display for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// HotSpot's reference encoding.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, clap::ValueEnum)]
pub enum Oops {
    /// `-XX:+UseCompressedOops`: 32-bit references.
    Compressed,
    /// `-XX:-UseCompressedOops`: 64-bit references.
    Uncompressed,
}

impl Oops {
    /// Both, compressed first.
    pub const ALL: [Oops; 2] = [Oops::Compressed, Oops::Uncompressed];

    /// The JVM flag.
    pub fn flag(self) -> &'static str {
        match self {
            Oops::Compressed => "-XX:+UseCompressedOops",
            Oops::Uncompressed => "-XX:-UseCompressedOops",
        }
    }

    /// A short name for tables.
    pub fn name(self) -> &'static str {
        match self {
            Oops::Compressed => "compressed",
            Oops::Uncompressed => "uncompressed",
        }
    }
}

/// One JVM to run.
#[derive(Clone, Debug)]
pub struct JvmSpec {
    /// The graph it builds.
    pub graph: Graph,
    /// Its `OBJECTS` argument.
    pub objects: u64,
    /// The graph's seed.
    pub seed: u64,
    /// `-XX:ParallelGCThreads`.
    pub threads: usize,
    /// Reference encoding.
    pub oops: Oops,
    /// `-Xms` = `-Xmx`, in MiB.
    pub heap_mb: u64,
    /// The JDK's feature release, if known ([`Jdk::major`]): some flags
    /// exist only in some releases.
    pub jdk_major: Option<u32>,
}

impl JvmSpec {
    /// The JVM flags, the GC log going to `log`.
    pub fn flags(&self, log: &Path) -> Vec<String> {
        parallel_gc_flags(self.jdk_major, self.threads, self.oops, self.heap_mb, log)
    }
}

/// The flags of a measured JVM of release `jdk_major`: Parallel GC with
/// exactly `threads` GC threads, `oops`, a fixed pre-touched heap of
/// `heap_mb` MiB, and the unified GC log with phase times written to `log`.
pub fn parallel_gc_flags(
    jdk_major: Option<u32>,
    threads: usize,
    oops: Oops,
    heap_mb: u64,
    log: &Path,
) -> Vec<String> {
    let mut flags = vec![
        "-XX:+UseParallelGC".to_owned(),
        format!("-XX:ParallelGCThreads={threads}"),
        "-XX:-UseDynamicNumberOfGCThreads".to_owned(),
        oops.flag().to_owned(),
        format!("-Xms{heap_mb}m"),
        format!("-Xmx{heap_mb}m"),
        "-XX:+AlwaysPreTouch".to_owned(),
        format!(
            "-Xlog:gc+phases=debug,gc=info:file={}:uptime,level,tags:filecount=0",
            log.display()
        ),
    ];
    // System.gc() is then one full GC, without a young GC before it. From
    // JDK 23 on the flag is gone (25 refuses to start with it), and a full
    // GC never scavenges first.
    if jdk_major.is_none_or(|m| m < 23) {
        flags.push("-XX:-ScavengeBeforeFullGC".to_owned());
    }
    flags
}

/// A running JVM with its graph or working set built, obeying the commands
/// of `VsHotspot.java`.
pub struct Jvm {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    log: PathBuf,
    /// The graph's main class, as the class histogram names it (a corpus
    /// program: its name).
    pub class: String,
    /// How many of its instances the graph keeps reachable, as the Java side
    /// computed it (a corpus program: the size of its working set in its
    /// own unit).
    pub expected: u64,
    /// `System.gc()` calls made.
    pub gcs: usize,
}

impl Jvm {
    /// Starts a JVM for `spec` (classes in `classes`, its GC log written to
    /// `log`) and waits until its graph is built.
    pub fn start(jdk: &Jdk, classes: &Path, log: &Path, spec: &JvmSpec) -> Result<Jvm, Error> {
        let args = [
            spec.graph.name().to_owned(),
            spec.objects.to_string(),
            spec.seed.to_string(),
        ];
        Jvm::launch(jdk, classes, log, &spec.flags(log), JAVA_MAIN, &args)
    }

    /// Starts `main` (a class in `classes`) with `flags` and `args`, its GC
    /// log written to `log`, and waits for its `built CLASS COUNT` line.
    pub fn launch(
        jdk: &Jdk,
        classes: &Path,
        log: &Path,
        flags: &[String],
        main: &str,
        args: &[String],
    ) -> Result<Jvm, Error> {
        let mut child = Command::new(&jdk.java)
            .args(flags)
            .arg("-cp")
            .arg(classes)
            .arg(main)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let stdin = child.stdin.take().ok_or("no JVM standard input")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("no JVM standard output")?);
        let mut jvm = Jvm {
            child,
            stdin,
            stdout,
            log: log.to_owned(),
            class: String::new(),
            expected: 0,
            gcs: 0,
        };
        let built = jvm.line()?;
        let mut words = built.split_whitespace();
        match (words.next(), words.next(), words.next().map(str::parse)) {
            (Some("built"), Some(class), Some(Ok(n))) => {
                jvm.class = class.to_owned();
                jvm.expected = n;
                Ok(jvm)
            }
            _ => Err(format!("unexpected first line from the JVM: {built:?}").into()),
        }
    }

    /// The next line of output, without its end.
    fn line(&mut self) -> Result<String, Error> {
        let mut s = String::new();
        if self.stdout.read_line(&mut s)? == 0 {
            let status = self.child.wait()?;
            return Err(format!("the JVM exited early ({status}); see its messages above").into());
        }
        Ok(s.trim_end_matches(['\r', '\n']).to_owned())
    }

    /// Sends `cmd` and waits for the line `answer`.
    fn command(&mut self, cmd: &str, answer: &str) -> Result<(), Error> {
        writeln!(self.stdin, "{cmd}")?;
        self.stdin.flush()?;
        let got = self.line()?;
        if got != answer {
            return Err(format!("the JVM answered {got:?} to {cmd:?}").into());
        }
        Ok(())
    }

    /// One `System.gc()`: a full GC.
    pub fn gc(&mut self) -> Result<(), Error> {
        self.command("gc", "gc")?;
        self.gcs += 1;
        Ok(())
    }

    /// Dumps the live objects to `path` (`dumpHeap(path, true)`).
    pub fn dump(&mut self, path: &Path) -> Result<(), Error> {
        let path = path.to_str().ok_or("the dump path is not UTF-8")?;
        self.command(&format!("dump {path}"), "dumped")
    }

    /// The class histogram of the live objects (a full GC first).
    pub fn histogram(&mut self) -> Result<Histogram, Error> {
        writeln!(self.stdin, "histo")?;
        self.stdin.flush()?;
        let first = self.line()?;
        if first != "histo-begin" {
            return Err(format!("the JVM answered {first:?} to \"histo\"").into());
        }
        let mut text = String::new();
        loop {
            let line = self.line()?;
            if line == "histo-end" {
                break;
            }
            text.push_str(&line);
            text.push('\n');
        }
        parse_histogram(&text)
    }

    /// Ends the JVM and returns its GC log.
    pub fn finish(mut self) -> Result<String, Error> {
        writeln!(self.stdin, "quit")?;
        self.stdin.flush()?;
        let status = self.child.wait()?;
        if !status.success() {
            return Err(format!("the JVM exited with {status}").into());
        }
        Ok(std::fs::read_to_string(&self.log)?)
    }
}

impl Drop for Jvm {
    fn drop(&mut self) {
        // After an error: do not leave the JVM behind.
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// One full GC from the unified log (`-Xlog:gc+phases=debug,gc=info`).
#[derive(Clone, Debug, PartialEq)]
pub struct FullGc {
    /// The GC's number, `GC(n)`.
    pub id: u64,
    /// The cause from the `Pause Full (...)` line (`System.gc()`,
    /// `Heap Dump Initiated GC`, ...).
    pub cause: String,
    /// The `Marking Phase` (info), ms: everything `PSParallelCompact::marking_phase` does.
    pub marking_ms: Option<f64>,
    /// The `Par Mark` sub-phase (debug), ms: the parallel trace alone.
    pub par_mark_ms: Option<f64>,
    /// The whole pause, ms.
    pub pause_ms: Option<f64>,
    /// The heap in use after the GC (`before->after(capacity)`), bytes, at
    /// the log's resolution (whole `K`, `M` or `G`).
    pub heap_after: Option<u64>,
}

/// A size as unified logging prints it (`120M`, `512K`, `2G`, `100B`), in
/// bytes.
fn parse_size(s: &str) -> Option<u64> {
    let unit = match s.chars().last()? {
        'B' => 1,
        'K' => 1 << 10,
        'M' => 1 << 20,
        'G' => 1 << 30,
        _ => return None,
    };
    s[..s.len() - 1].parse::<u64>().ok()?.checked_mul(unit)
}

/// A duration as unified logging prints it (`12.345ms`; also `s`, `us`,
/// `µs`, `ns`), in ms.
fn parse_duration_ms(s: &str) -> Option<f64> {
    let s = s.trim();
    let (num, scale) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix("us").or_else(|| s.strip_suffix("µs")) {
        (n, 1e-3)
    } else if let Some(n) = s.strip_suffix("ns") {
        (n, 1e-6)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1e3)
    } else {
        return None;
    };
    let v: f64 = num.trim().parse().ok()?;
    v.is_finite().then_some(v * scale)
}

/// The full GCs of a ParallelGC unified log, in log order: every GC with a
/// `Pause Full (cause)` line, with its `Marking Phase` and `Par Mark` times
/// when logged. Any decorations before `GC(n)` are skipped; lines that do
/// not parse (other tags, indented per-worker lines, truncated lines) are
/// ignored.
pub fn parse_gc_log(text: &str) -> Vec<FullGc> {
    let mut gcs: Vec<FullGc> = Vec::new();
    let mut index: HashMap<u64, usize> = HashMap::new();
    let mut phases: HashMap<u64, (Option<f64>, Option<f64>)> = HashMap::new();
    for line in text.lines() {
        let Some(at) = line.find("GC(") else { continue };
        let rest = &line[at + 3..];
        let Some(close) = rest.find(')') else {
            continue;
        };
        let Ok(id) = rest[..close].parse::<u64>() else {
            continue;
        };
        // Exactly one space: indented lines are sub-phases and workers.
        let Some(msg) = rest[close + 1..].strip_prefix(' ') else {
            continue;
        };
        let last = msg.rsplit(' ').next().unwrap_or("");
        if let Some(after) = msg.strip_prefix("Pause Full (") {
            let Some(end) = after.find(") ") else {
                continue;
            };
            // `131M->120M(1963M)`, the word before the duration.
            let heap_after = after[end + 2..]
                .split(' ')
                .next()
                .and_then(|w| w.split_once("->"))
                .and_then(|(_, a)| a.split_once('('))
                .and_then(|(a, _)| parse_size(a));
            let gc = FullGc {
                id,
                cause: after[..end].to_owned(),
                marking_ms: None,
                par_mark_ms: None,
                pause_ms: parse_duration_ms(last),
                heap_after,
            };
            index.insert(id, gcs.len());
            gcs.push(gc);
        } else if msg.starts_with("Marking Phase ") {
            phases.entry(id).or_default().0 = parse_duration_ms(last);
        } else if msg.starts_with("Par Mark ") {
            phases.entry(id).or_default().1 = parse_duration_ms(last);
        }
    }
    for (id, (marking, par_mark)) in phases {
        if let Some(&i) = index.get(&id) {
            gcs[i].marking_ms = marking;
            gcs[i].par_mark_ms = par_mark;
        }
    }
    gcs
}

/// The full GCs that `System.gc()` caused, in order, each with both phase
/// times; `Err` if there are not `expected` of them or one lacks a time.
pub fn system_gcs(text: &str, expected: usize) -> Result<Vec<FullGc>, Error> {
    let gcs: Vec<FullGc> = parse_gc_log(text)
        .into_iter()
        .filter(|g| g.cause == "System.gc()")
        .collect();
    if gcs.len() != expected {
        return Err(format!(
            "the GC log has {} System.gc() full GCs, {expected} were made",
            gcs.len()
        )
        .into());
    }
    if let Some(g) = gcs
        .iter()
        .find(|g| g.marking_ms.is_none() || g.par_mark_ms.is_none())
    {
        return Err(format!(
            "GC({}) has no Marking Phase or Par Mark time in the log",
            g.id
        )
        .into());
    }
    Ok(gcs)
}

/// A `GC.class_histogram` of live objects.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Histogram {
    /// The `Total` line's instances.
    pub instances: u64,
    /// The `Total` line's bytes.
    pub bytes: u64,
    /// Instances per class, by the histogram's name (module suffix dropped).
    pub classes: HashMap<String, u64>,
}

/// Parses the text of `GC.class_histogram`.
pub fn parse_histogram(text: &str) -> Result<Histogram, Error> {
    let mut h = Histogram::default();
    let mut total = false;
    for line in text.lines() {
        let mut w = line.split_whitespace();
        match w.next() {
            Some("Total") => {
                let (Some(Ok(n)), Some(Ok(b))) =
                    (w.next().map(str::parse), w.next().map(str::parse))
                else {
                    return Err(format!("bad histogram total line {line:?}").into());
                };
                (h.instances, h.bytes) = (n, b);
                total = true;
            }
            Some(num) if num.ends_with(':') => {
                if let (Some(Ok(n)), Some(_), Some(name)) =
                    (w.next().map(str::parse::<u64>), w.next(), w.next())
                {
                    *h.classes.entry(name.to_owned()).or_default() += n;
                }
            }
            _ => {}
        }
    }
    if !total {
        return Err("the class histogram has no Total line".into());
    }
    Ok(h)
}

/// A heap dump imported into memory.
pub struct Imported {
    /// The heap.
    pub heap: Heap,
    /// What the importer found.
    pub summary: ImportSummary,
}

/// Imports the HPROF dump at `path` into an in-memory heap in `layout`.
pub fn import_hprof(path: &Path, layout: ArenaLayout) -> Result<Imported, Error> {
    let input = InputFile::open(path)?;
    let mut builder = HeapBuilder::new();
    let options = ImportOptions::layout(Some(layout));
    let summary = import::hprof_with(&input, &mut builder, &mut |_| {}, &options)?;
    Ok(Imported {
        heap: builder.finish()?,
        summary,
    })
}

/// Marked objects per type name.
pub fn marked_by_type(heap: &Heap, marking: &Marking<'_>) -> HashMap<String, u64> {
    let view = heap.view();
    let mut by_type: HashMap<u32, u64> = HashMap::new();
    for o in view.objects() {
        if marking.bitmap.contains(view.mark_index(o)) {
            *by_type.entry(view.type_id(o)).or_default() += 1;
        }
    }
    by_type
        .into_iter()
        .map(|(t, n)| (heap.type_name(t).unwrap_or("?").to_owned(), n))
        .collect()
}

/// The median of `v` (the mean of the middle two for an even count);
/// `NaN` for none.
pub fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The smallest and largest of `v`.
pub fn range(v: &[f64]) -> (f64, f64) {
    v.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        })
}

/// The 1-minute load average.
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The CPU model and the number of CPUs.
pub fn machine() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines().find_map(|l| {
                l.strip_prefix("model name")?
                    .split_once(':')
                    .map(|x| x.1.trim().to_owned())
            })
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{model}, {cpus} CPUs")
}

/// Creates a fresh directory under the system temporary directory, removed
/// with everything in it when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    /// A new directory named after `prefix` and this process.
    pub fn new(prefix: &str) -> io::Result<TempDir> {
        let base = std::env::temp_dir();
        for n in 0..1000u32 {
            let p = base.join(format!("{prefix}-{}-{n}", std::process::id()));
            match std::fs::create_dir(&p) {
                Ok(()) => return Ok(TempDir(p)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::other("no free temporary directory name"))
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests;
