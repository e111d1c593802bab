//! The HotSpot comparison's harness, untimed:
//! its parsers on captured JDK 17 output, and a tiny end-to-end run (when a
//! JDK is installed) whose object counts must agree.

use super::{parse_major, Graph, Jdk, Jvm, JvmSpec, Oops, TempDir};
use stealmark_heap::{ArenaLayout, HeapGraph};
use stealmark_marker::{Marker, MarkerConfig};

/// `-Xlog:gc+phases=debug,gc=info` of OpenJDK 17.0.15 running
/// `VsHotspot list 400000 1` with `-Xmn8m`: two young GCs, the heap dump's
/// full GC, two `System.gc()` full GCs, the class histogram's full GC. Most
/// of the per-worker detail lines are left out (three are kept, which the
/// parser must skip); the end-to-end test below parses a whole log that the
/// harness makes afresh.
const SAMPLE_LOG: &str = "\
[0.011s][info][gc] Using Parallel
[0.703s][debug][gc,phases] GC(0) Scavenge 19.904ms
[0.703s][debug][gc,phases] GC(0) Reference Processing 0.110ms
[0.703s][info ][gc       ] GC(0) Pause Young (Allocation Failure) 6M->3M(63M) 20.235ms
[0.775s][debug][gc,phases] GC(1) Scavenge 60.021ms
[0.775s][debug][gc,phases] GC(1) Reference Processing 0.117ms
[0.776s][info ][gc       ] GC(1) Pause Young (Allocation Failure) 9M->9M(63M) 60.379ms
[0.798s][debug][gc,phases] GC(2) Pre Compact 0.016ms
[0.851s][debug][gc,phases] GC(2) Par Mark 52.396ms
[0.851s][debug][gc,phases] GC(2) Reference Processing 0.096ms
[0.851s][debug][gc,phases] GC(2) ClassLoaderData 0.011ms
[0.851s][debug][gc,phases] GC(2) Trigger cleanups 0.000ms
[0.851s][debug][gc,phases] GC(2) Class Unloading 0.470ms
[0.851s][debug][gc,phases] GC(2) Report Object Count 0.001ms
[0.851s][info ][gc,phases] GC(2) Marking Phase 53.137ms
[0.851s][info ][gc,phases] GC(2) Summary Phase 0.007ms
[0.853s][info ][gc,phases] GC(2) Adjust Roots 1.419ms
[0.935s][info ][gc,phases] GC(2) Compaction Phase 81.838ms
[0.935s][info ][gc,phases] GC(2) Post Compact 0.146ms
[0.935s][info ][gc       ] GC(2) Pause Full (Heap Dump Initiated GC) 10M->10M(63M) 136.629ms
[1.095s][debug][gc,phases] GC(3) Pre Compact 0.024ms
[1.127s][debug][gc,phases] GC(3) Par Mark 32.100ms
[1.127s][debug][gc,phases] GC(3) Reference Processing 0.092ms
[1.131s][debug][gc,phases] GC(3)   VM Weak                        Min:  0.0, Avg:  0.0, Max:  0.0, Diff:  0.0, Sum:  0.0, Workers: 2
[1.131s][debug][gc,phases] GC(3)     Dead                           Min: 0, Avg:  0.0, Max: 0, Diff: 0, Sum: 0, Workers: 2
[1.131s][debug][gc,phases] GC(3)     Total                          Min: 0, Avg: 22.0, Max: 44, Diff: 44, Sum: 44, Workers: 2
[1.131s][debug][gc,phases] GC(3) ClassLoaderData 0.019ms
[1.131s][debug][gc,phases] GC(3) Trigger cleanups 0.000ms
[1.131s][debug][gc,phases] GC(3) Class Unloading 0.408ms
[1.131s][debug][gc,phases] GC(3) Report Object Count 0.001ms
[1.131s][info ][gc,phases] GC(3) Marking Phase 35.844ms
[1.131s][info ][gc,phases] GC(3) Summary Phase 0.002ms
[1.132s][info ][gc,phases] GC(3) Adjust Roots 0.505ms
[1.159s][info ][gc,phases] GC(3) Compaction Phase 27.008ms
[1.159s][info ][gc,phases] GC(3) Post Compact 0.054ms
[1.159s][info ][gc       ] GC(3) Pause Full (System.gc()) 10M->10M(63M) 63.500ms
[1.159s][debug][gc,phases] GC(4) Pre Compact 0.008ms
[1.207s][debug][gc,phases] GC(4) Par Mark 47.945ms
[1.207s][debug][gc,phases] GC(4) Reference Processing 0.100ms
[1.207s][debug][gc,phases] GC(4) ClassLoaderData 0.011ms
[1.207s][debug][gc,phases] GC(4) Trigger cleanups 0.000ms
[1.208s][debug][gc,phases] GC(4) Class Unloading 0.479ms
[1.208s][debug][gc,phases] GC(4) Report Object Count 0.001ms
[1.208s][info ][gc,phases] GC(4) Marking Phase 48.726ms
[1.208s][info ][gc,phases] GC(4) Summary Phase 0.002ms
[1.208s][info ][gc,phases] GC(4) Adjust Roots 0.508ms
[1.232s][info ][gc,phases] GC(4) Compaction Phase 23.544ms
[1.232s][info ][gc,phases] GC(4) Post Compact 0.048ms
[1.232s][info ][gc       ] GC(4) Pause Full (System.gc()) 10M->10M(63M) 72.899ms
[1.232s][debug][gc,phases] GC(5) Pre Compact 0.007ms
[1.275s][debug][gc,phases] GC(5) Par Mark 42.560ms
[1.275s][debug][gc,phases] GC(5) Reference Processing 0.102ms
[1.275s][debug][gc,phases] GC(5) ClassLoaderData 0.012ms
[1.275s][debug][gc,phases] GC(5) Trigger cleanups 0.000ms
[1.276s][debug][gc,phases] GC(5) Class Unloading 0.487ms
[1.276s][debug][gc,phases] GC(5) Report Object Count 0.001ms
[1.276s][info ][gc,phases] GC(5) Marking Phase 43.363ms
[1.276s][info ][gc,phases] GC(5) Summary Phase 0.005ms
[1.279s][info ][gc,phases] GC(5) Adjust Roots 3.313ms
[1.303s][info ][gc,phases] GC(5) Compaction Phase 24.165ms
[1.303s][info ][gc,phases] GC(5) Post Compact 0.052ms
[1.303s][info ][gc       ] GC(5) Pause Full (Heap Inspection Initiated GC) 10M->10M(63M) 71.006ms
";

#[test]
fn parses_the_captured_gc_log() {
    let gcs = super::parse_gc_log(SAMPLE_LOG);
    let causes: Vec<(u64, &str)> = gcs.iter().map(|g| (g.id, g.cause.as_str())).collect();
    assert_eq!(
        causes,
        [
            (2, "Heap Dump Initiated GC"),
            (3, "System.gc()"),
            (4, "System.gc()"),
            (5, "Heap Inspection Initiated GC"),
        ],
        "full GCs only, young ones left out"
    );
    let system = super::system_gcs(SAMPLE_LOG, 2).unwrap();
    assert_eq!(system[0].marking_ms, Some(35.844));
    assert_eq!(system[0].par_mark_ms, Some(32.100));
    assert_eq!(system[0].pause_ms, Some(63.500));
    assert_eq!(system[0].heap_after, Some(10 << 20));
    assert_eq!(system[1].marking_ms, Some(48.726));
    assert_eq!(system[1].par_mark_ms, Some(47.945));
    assert!(
        super::system_gcs(SAMPLE_LOG, 3).is_err(),
        "a missing GC is an error"
    );
}

#[test]
fn parses_other_decorations_units_and_broken_lines() {
    let log = "\
[2026-11-23T21:52:10.123+0000][1234][info][gc,phases] GC(7) Marking Phase 1.5s
[2026-11-23T21:52:10.123+0000][1234][debug][gc,phases] GC(7) Par Mark 1400000us
[2026-11-23T21:52:10.123+0000][1234][debug][gc,phases] GC(7)   Par Mark 9.000ms
[2026-11-23T21:52:10.124+0000][1234][info][gc] GC(7) Pause Full (System.gc()) 1G->1G(2G) 2.000s
GC(8) Marking Phase 12.0ms
GC(8) Par Mark
GC(8) Pause Full (System.gc()) 10M->10M(64M) 20.0ms
GC(9) Pause Full (Ergonomics
GC(x) Marking Phase 1.0ms
";
    let gcs = super::parse_gc_log(log);
    assert_eq!(gcs.len(), 2, "the truncated GC(9) line is ignored");
    assert_eq!(gcs[0].marking_ms, Some(1500.0));
    assert_eq!(
        gcs[0].par_mark_ms,
        Some(1400.0),
        "the indented line is not the phase"
    );
    assert_eq!(gcs[0].pause_ms, Some(2000.0));
    assert_eq!(gcs[0].heap_after, Some(1 << 30));
    assert_eq!((gcs[1].marking_ms, gcs[1].par_mark_ms), (Some(12.0), None));
    assert!(
        super::system_gcs(log, 2).is_err(),
        "a GC without its Par Mark time is an error"
    );
}

#[test]
fn reads_the_feature_release_of_java_version() {
    assert_eq!(
        parse_major(r#"openjdk version "17.0.15" 2025-04-15"#),
        Some(17)
    );
    assert_eq!(
        parse_major(r#"openjdk version "25" 2025-09-16 LTS"#),
        Some(25)
    );
    assert_eq!(parse_major(r#"java version "1.8.0_402""#), Some(8));
    assert_eq!(parse_major("unknown"), None);
}

#[test]
fn parses_a_class_histogram() {
    let text = " num     #instances         #bytes  class name (module)
-------------------------------------------------------
   1:        200256        4806144  java.lang.Long (java.base@17.0.15)
   2:        200000        4800000  java.util.LinkedList$Node (java.base@17.0.15)
   3:          4907         245320  [B (java.base@17.0.15)
  43:             1           4112  [Ljava.util.LinkedList; (java.base@17.0.15)
 600:             1             16  VsHotspot$Node
Total        430173       10959312
";
    let h = super::parse_histogram(text).unwrap();
    assert_eq!((h.instances, h.bytes), (430_173, 10_959_312));
    assert_eq!(h.classes["java.util.LinkedList$Node"], 200_000);
    assert_eq!(h.classes["VsHotspot$Node"], 1);
    assert!(super::parse_histogram("   1:  2  3  X\n").is_err());
}

/// Each graph, tiny: the Java side's count of the graph's class, HotSpot's
/// histogram and stealmark's marked set (imported from the JVM's dump,
/// marked from its GC roots) agree exactly; both sides' totals are close.
#[test]
fn tiny_end_to_end_run_agrees_on_object_counts() {
    let jdk = match Jdk::find() {
        Ok(jdk) => jdk,
        Err(why) => {
            println!("skipped: {why}");
            return;
        }
    };
    let tmp = TempDir::new("stealmark-vs-hotspot-test").unwrap();
    let classes = tmp.path().join("classes");
    std::fs::create_dir(&classes).unwrap();
    jdk.compile(&classes).unwrap();
    for graph in Graph::ALL {
        let spec = JvmSpec {
            graph,
            objects: 20_000,
            seed: 3,
            threads: 2,
            oops: Oops::Compressed,
            heap_mb: 64,
            jdk_major: jdk.major(),
        };
        let log = tmp.path().join(format!("{graph}.log"));
        let mut jvm = Jvm::start(&jdk, &classes, &log, &spec).unwrap();
        let dump = tmp.path().join(format!("{graph}.hprof"));
        jvm.dump(&dump).unwrap();
        let mut counts = Vec::new();
        for layout in ArenaLayout::ALL {
            let imported = super::import_hprof(&dump, layout).unwrap();
            let heap = &imported.heap;
            let mut marker = Marker::new(MarkerConfig::with_workers(2)).unwrap();
            marker.mark(&heap.view(), heap.roots());
            let marking = marker.mark(&heap.view(), heap.roots());
            counts.push((
                layout,
                imported.summary.clone(),
                marking.bitmap.count(),
                super::marked_by_type(heap, &marking)
                    .get(&jvm.class)
                    .copied()
                    .unwrap_or(0),
            ));
        }
        std::fs::remove_file(&dump).unwrap();
        jvm.gc().unwrap();
        jvm.gc().unwrap();
        let histogram = jvm.histogram().unwrap();
        let (class, expected) = (jvm.class.clone(), jvm.expected);
        let text = jvm.finish().unwrap();
        let gcs = super::system_gcs(&text, 2).unwrap();
        assert!(gcs
            .iter()
            .all(|g| g.marking_ms.unwrap() >= g.par_mark_ms.unwrap()));
        assert!(expected > 0);
        assert_eq!(histogram.classes.get(&class), Some(&expected), "{graph}");
        for (layout, summary, marked_total, marked_class) in counts.drain(..) {
            println!(
                "{graph}, {layout}: {class}: Java {expected}, HotSpot {}, stealmark {marked_class}; all: HotSpot live {}, dump {}, stealmark marked {marked_total}",
                histogram.classes.get(&class).copied().unwrap_or(0),
                histogram.instances,
                summary.objects,
            );
            assert_eq!(summary.layout, layout);
            assert_eq!(marked_class, expected, "{graph}, {layout}");
            assert_eq!(summary.dropped_roots, 0, "{graph}");
            // The dump holds what HotSpot kept; stealmark reaches all of it
            // but soft-reference caches and what only class-loader data
            // holds (a few thousand objects, whatever the graph's size).
            assert!(marked_total <= summary.objects, "{graph}");
            assert!(
                summary.objects - marked_total < 10_000,
                "{graph}: {} of {} dumped objects unmarked",
                summary.objects - marked_total,
                summary.objects
            );
            assert!(
                histogram.instances.abs_diff(summary.objects) < 1_000,
                "{graph}: HotSpot counts {} live objects, the dump holds {}",
                histogram.instances,
                summary.objects
            );
        }
    }
}
