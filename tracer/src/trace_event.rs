//! Chrome trace-event JSON (the format Perfetto and `chrome://tracing` open).
//!
//! Each measured mark run becomes one process (`pid` = run number, starting
//! at 1) so that runs stack as separate groups in the viewer; each GC worker
//! is one thread of it (thread ids are unique across runs), with complete (`"ph": "X"`) spans for marking,
//! stealing, idle and termination, and a counter track of the grey objects
//! it holds (its private stack, its deque and its prefetch FIFO: the
//! marker's timeline).
//! One extra thread per run carries the whole pause. Timestamps are in
//! microseconds from the start of the run's pause, as the format requires.
//!
//! Reference: "Trace Event Format", the JSON Object Format with the
//! `traceEvents` array and `displayTimeUnit`.

use std::io::{self, Write};

use serde::Serialize;
use stealmark_marker::{MarkStats, Span, SpanKind};

/// A colour name from the viewer's reserved palette, so that the four span
/// kinds read apart at a glance in `chrome://tracing` (Perfetto colours by
/// name on its own).
fn colour(kind: SpanKind) -> &'static str {
    match kind {
        SpanKind::Marking => "good",
        SpanKind::Stealing => "yellow",
        SpanKind::Idle => "grey",
        SpanKind::Termination => "terrible",
        _ => "generic_work",
    }
}

/// One mark phase to put in the trace.
pub struct RunTrace<'a> {
    /// The run's name in the viewer, such as "run 3: steal-half, 2 workers".
    pub label: String,
    /// The phase's statistics, with spans recorded.
    pub stats: &'a MarkStats,
}

#[derive(Serialize)]
struct Event<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    cat: Option<&'static str>,
    ph: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    ts: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dur: Option<f64>,
    pid: usize,
    tid: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    cname: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    args: Option<serde_json::Value>,
}

impl<'a> Event<'a> {
    fn metadata(name: &'a str, pid: usize, tid: usize, args: serde_json::Value) -> Event<'a> {
        Event {
            name,
            cat: None,
            ph: "M",
            ts: None,
            dur: None,
            pid,
            tid,
            cname: None,
            args: Some(args),
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TraceFile<'a> {
    trace_events: Vec<Event<'a>>,
    display_time_unit: &'static str,
    other_data: serde_json::Value,
}

/// The spans sorted so that each one starts after its enclosing span
/// (longer first on equal starts), with any span that overlaps the end of
/// an enclosing one cut at that end: trace viewers require the spans of one
/// thread to nest.
fn nested(spans: &[Span]) -> Vec<Span> {
    let mut sorted: Vec<Span> = spans
        .iter()
        .map(|s| Span {
            end_ns: s.end_ns.max(s.start_ns),
            ..*s
        })
        .collect();
    sorted.sort_by(|a, b| a.start_ns.cmp(&b.start_ns).then(b.end_ns.cmp(&a.end_ns)));
    let mut open: Vec<u64> = Vec::new();
    for span in &mut sorted {
        while open.last().is_some_and(|&end| end <= span.start_ns) {
            open.pop();
        }
        if let Some(&end) = open.last() {
            span.end_ns = span.end_ns.min(end);
        }
        open.push(span.end_ns);
    }
    sorted
}

/// Thread ids reserved per run: the pause track, then one per worker (the
/// marker allows at most 1024 workers).
const TIDS_PER_RUN: usize = 10_000;

fn us(ns: u64) -> f64 {
    ns as f64 / 1e3
}

/// Writes `runs` as one trace-event JSON document. `other` goes into the
/// document's `otherData` (the viewer shows it as metadata).
pub fn write<W: Write>(out: W, runs: &[RunTrace<'_>], other: serde_json::Value) -> io::Result<()> {
    let thread_names: Vec<Vec<String>> = runs
        .iter()
        .map(|run| {
            (0..run.stats.workers.len())
                .map(|w| format!("GC worker {w}"))
                .collect()
        })
        .collect();
    let counter_names: Vec<Vec<String>> = runs
        .iter()
        .map(|run| {
            (0..run.stats.workers.len())
                .map(|w| format!("grey objects held, worker {w}"))
                .collect()
        })
        .collect();
    let mut events = Vec::new();
    for (r, run) in runs.iter().enumerate() {
        let pid = r + 1;
        // Thread ids unique across runs: viewers key threads by tid, and
        // tid 0 means the idle task to some of them.
        let pause_tid = pid * TIDS_PER_RUN;
        let worker_tid = |w: usize| pause_tid + 1 + w;
        events.push(Event::metadata(
            "process_name",
            pid,
            pause_tid,
            serde_json::json!({ "name": run.label }),
        ));
        events.push(Event::metadata(
            "process_sort_index",
            pid,
            pause_tid,
            serde_json::json!({ "sort_index": pid }),
        ));
        events.push(Event::metadata(
            "thread_name",
            pid,
            pause_tid,
            serde_json::json!({ "name": "pause" }),
        ));
        events.push(Event::metadata(
            "thread_sort_index",
            pid,
            pause_tid,
            serde_json::json!({ "sort_index": -1 }),
        ));
        events.push(Event {
            name: "pause",
            cat: Some("gc"),
            ph: "X",
            ts: Some(0.0),
            dur: Some(us(run.stats.pause_ns)),
            pid,
            tid: pause_tid,
            cname: None,
            args: None,
        });
        for (w, worker) in run.stats.workers.iter().enumerate() {
            events.push(Event::metadata(
                "thread_name",
                pid,
                worker_tid(w),
                serde_json::json!({ "name": thread_names[r][w] }),
            ));
            events.push(Event::metadata(
                "thread_sort_index",
                pid,
                worker_tid(w),
                serde_json::json!({ "sort_index": w }),
            ));
            for span in nested(&worker.spans) {
                events.push(Event {
                    name: span.kind.name(),
                    cat: Some("gc"),
                    ph: "X",
                    ts: Some(us(span.start_ns)),
                    dur: Some(us(span.end_ns.saturating_sub(span.start_ns))),
                    pid,
                    tid: worker_tid(w),
                    cname: Some(colour(span.kind)),
                    args: None,
                });
            }
            for sample in &worker.timeline {
                events.push(Event {
                    name: &counter_names[r][w],
                    cat: Some("gc"),
                    ph: "C",
                    ts: Some(us(sample.t_ns)),
                    dur: None,
                    pid,
                    tid: worker_tid(w),
                    cname: None,
                    args: Some(serde_json::json!({ "held": sample.len })),
                });
            }
        }
    }
    let file = TraceFile {
        trace_events: events,
        display_time_unit: "ns",
        other_data: other,
    };
    let mut out = io::BufWriter::new(out);
    serde_json::to_writer(&mut out, &file)?;
    out.write_all(b"\n")?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    use stealmark_marker::{TimelineSample, WorkerRecord};

    fn span(kind: SpanKind, start_ns: u64, end_ns: u64) -> Span {
        Span {
            kind,
            start_ns,
            end_ns,
        }
    }

    #[test]
    fn spans_are_made_to_nest() {
        let spans = [
            span(SpanKind::Idle, 10, 30),
            span(SpanKind::Termination, 10, 50),
            span(SpanKind::Marking, 0, 10),
            span(SpanKind::Stealing, 40, 60),
        ];
        let n = nested(&spans);
        assert_eq!(n[0], span(SpanKind::Marking, 0, 10));
        assert_eq!(n[1], span(SpanKind::Termination, 10, 50));
        assert_eq!(n[2], span(SpanKind::Idle, 10, 30));
        assert_eq!(n[3], span(SpanKind::Stealing, 40, 50));
    }

    fn sample() -> MarkStats {
        let mut rec = WorkerRecord::default();
        rec.spans.push(Span {
            kind: SpanKind::Stealing,
            start_ns: 5_000,
            end_ns: 6_000,
        });
        rec.spans.push(Span {
            kind: SpanKind::Marking,
            start_ns: 0,
            end_ns: 5_000,
        });
        rec.timeline.push(TimelineSample { t_ns: 0, len: 3 });
        rec.timeline.push(TimelineSample {
            t_ns: 2_000,
            len: 1,
        });
        let mut stats = MarkStats::default();
        stats.workers = vec![rec];
        stats.pause_ns = 10_000;
        stats
    }

    #[test]
    fn writes_a_trace_event_document() {
        let mut buf = Vec::new();
        let stats = sample();
        let runs = [RunTrace {
            label: "run 1".into(),
            stats: &stats,
        }];
        write(&mut buf, &runs, serde_json::json!({"deque": "abp"})).unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&buf).unwrap();
        let events = doc["traceEvents"].as_array().unwrap();
        let spans: Vec<&serde_json::Value> = events
            .iter()
            .filter(|e| e["ph"] == "X" && e["tid"] == TIDS_PER_RUN + 1)
            .collect();
        assert_eq!(spans.len(), 2);
        assert_eq!(spans[0]["name"], "marking");
        assert_eq!(spans[0]["dur"], 5.0);
        assert_eq!(spans[1]["ts"], 5.0);
        assert_eq!(events.iter().filter(|e| e["ph"] == "C").count(), 2);
        assert_eq!(doc["otherData"]["deque"], "abp");
    }
}
