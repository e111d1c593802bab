//! The HotSpot comparison's harness (`examples/vs_hotspot.rs`), untimed:
//! its parsers on captured JDK 17 output, and a tiny end-to-end run (when a
//! JDK is installed) whose object counts must agree.

#[path = "../benches/hotspot/harness.rs"]
mod harness;

use harness::{Graph, Jdk, Jvm, JvmSpec, Oops, TempDir};
use stealmark::heap::{ArenaLayout, HeapGraph};
use stealmark::marker::{Marker, MarkerConfig};

/// `-Xlog:gc+phases=debug,gc=info` of OpenJDK 17.0.15 running
/// `VsHotspot list 400000 1` with `-Xmn8m`: two young GCs, the heap dump's
/// full GC, two `System.gc()` full GCs, the class histogram's full GC.
const SAMPLE_LOG: &str = include_str!("../benches/hotspot/sample-gc-phases.log");

#[test]
fn parses_the_captured_gc_log() {
    let gcs = harness::parse_gc_log(SAMPLE_LOG);
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
    let system = harness::system_gcs(SAMPLE_LOG, 2).unwrap();
    assert_eq!(system[0].marking_ms, Some(35.844));
    assert_eq!(system[0].par_mark_ms, Some(32.100));
    assert_eq!(system[0].pause_ms, Some(63.500));
    assert_eq!(system[0].heap_after, Some(10 << 20));
    assert_eq!(system[1].marking_ms, Some(48.726));
    assert_eq!(system[1].par_mark_ms, Some(47.945));
    assert!(
        harness::system_gcs(SAMPLE_LOG, 3).is_err(),
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
    let gcs = harness::parse_gc_log(log);
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
        harness::system_gcs(log, 2).is_err(),
        "a GC without its Par Mark time is an error"
    );
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
    let h = harness::parse_histogram(text).unwrap();
    assert_eq!((h.instances, h.bytes), (430_173, 10_959_312));
    assert_eq!(h.classes["java.util.LinkedList$Node"], 200_000);
    assert_eq!(h.classes["VsHotspot$Node"], 1);
    assert!(harness::parse_histogram("   1:  2  3  X\n").is_err());
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
        };
        let log = tmp.path().join(format!("{graph}.log"));
        let mut jvm = Jvm::start(&jdk, &classes, &log, &spec).unwrap();
        let dump = tmp.path().join(format!("{graph}.hprof"));
        jvm.dump(&dump).unwrap();
        let mut counts = Vec::new();
        for layout in ArenaLayout::ALL {
            let imported = harness::import_hprof(&dump, layout).unwrap();
            let heap = &imported.heap;
            let mut marker = Marker::new(MarkerConfig::with_workers(2)).unwrap();
            marker.mark(&heap.view(), heap.roots());
            let marking = marker.mark(&heap.view(), heap.roots());
            counts.push((
                layout,
                imported.summary.clone(),
                marking.bitmap.count(),
                harness::marked_by_type(heap, &marking)
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
        let gcs = harness::system_gcs(&text, 2).unwrap();
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
