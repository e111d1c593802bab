//! Standard output, and tabular output in the formats `--format` offers: an
//! aligned plain-text table for people, Markdown for documents, CSV for
//! spreadsheets. (JSON is written by each command from its own serde types.)
//!
//! Every command writes its results through [`out!`], [`outln!`] or
//! [`print_json`], never `print!`: a reader that goes away (`stealmark ... |
//! head`) then ends the command quietly instead of panicking.

use std::fmt::{self, Write as _};
use std::io::{self, Write as _};

use clap::ValueEnum;
use serde::Serialize;

use crate::error::{CliError, CliResult};

/// Writes formatted text to standard output. A closed pipe becomes
/// [`CliError::StdoutClosed`]; any other write error is a failure.
pub fn write_stdout(text: fmt::Arguments<'_>) -> CliResult {
    io::stdout().lock().write_fmt(text).map_err(stdout_error)
}

/// Flushes standard output (at the end of a command), with the errors of
/// [`write_stdout`].
pub fn flush_stdout() -> CliResult {
    io::stdout().lock().flush().map_err(stdout_error)
}

fn stdout_error(e: io::Error) -> CliError {
    if e.kind() == io::ErrorKind::BrokenPipe {
        CliError::StdoutClosed
    } else {
        CliError::failed("writing to standard output", e)
    }
}

/// `print!` through [`write_stdout`]; evaluates to a [`CliResult`].
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::write_stdout(format_args!($($arg)*))
    };
}

/// `println!` through [`write_stdout`]; evaluates to a [`CliResult`].
macro_rules! outln {
    () => {
        $crate::output::write_stdout(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::output::write_stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}

pub(crate) use {out, outln};

/// Writes `value` to standard output as one pretty-printed JSON document,
/// with every wall or CPU time in milliseconds: each number under a key
/// ending in `_ns` (the engine's counters, the per-run samples) is
/// converted and its key renamed to end in `_ms`, and a document with such
/// times says so with `"time_unit": "ms"` (the models' documents, whose
/// times are simulated steps, have none).
pub fn print_json<T: Serialize>(value: &T) -> CliResult {
    let mut doc =
        serde_json::to_value(value).map_err(|e| CliError::failed("writing the JSON report", e))?;
    in_milliseconds(&mut doc);
    let timed = has_ms_key(&doc);
    if let (serde_json::Value::Object(map), true) = (&mut doc, timed) {
        map.insert("time_unit".into(), "ms".into());
    }
    let text = serde_json::to_string_pretty(&doc)
        .map_err(|e| CliError::failed("writing the JSON report", e))?;
    outln!("{text}")
}

/// Converts every number or null under a key ending in `_ns`, at any
/// depth, to milliseconds under the key ending in `_ms` instead.
fn in_milliseconds(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            // Rebuilt entry by entry, so that a renamed key keeps its place.
            let entries = std::mem::take(map);
            for (key, mut v) in entries {
                match (key.strip_suffix("_ns"), &v) {
                    (Some(stem), Value::Number(n)) => {
                        let ms = n
                            .as_f64()
                            .and_then(|ns| serde_json::Number::from_f64(ns / 1e6))
                            .map_or(Value::Null, Value::Number);
                        map.insert(format!("{stem}_ms"), ms);
                    }
                    (Some(stem), Value::Null) => {
                        map.insert(format!("{stem}_ms"), Value::Null);
                    }
                    // Not a time after all: left as it is.
                    _ => {
                        in_milliseconds(&mut v);
                        map.insert(key, v);
                    }
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(in_milliseconds),
        _ => {}
    }
}

/// Whether a key at any depth of `value` ends in `_ms`.
fn has_ms_key(value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::Object(map) => {
            map.iter().any(|(k, v)| k.ends_with("_ms") || has_ms_key(v))
        }
        serde_json::Value::Array(items) => items.iter().any(has_ms_key),
        _ => false,
    }
}

/// Failures to write output files (`--plot`, `--trace-out`), kept until the
/// results are printed: a long run is not thrown away because its plot
/// could not be written.
#[derive(Default)]
pub struct Deferred(Vec<CliError>);

impl Deferred {
    /// Keeps the failure of `result`, if any.
    pub fn keep(&mut self, result: CliResult) {
        if let Err(e) = result {
            self.0.push(e);
        }
    }

    /// Puts `error` before the others: it is the one the command ends with.
    pub fn first(&mut self, error: CliError) {
        self.0.insert(0, error);
    }

    /// Ends the command of `command`: `Ok` if nothing failed; otherwise
    /// prints every failure but the first on standard error and returns
    /// the first.
    pub fn finish(self, command: &str) -> CliResult {
        let mut errors = self.0.into_iter();
        let Some(first) = errors.next() else {
            return Ok(());
        };
        for other in errors {
            eprintln!("error: {}", other.one_line(command));
        }
        Err(first)
    }
}

/// An output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned columns, for a terminal.
    Table,
    /// A GitHub-flavoured Markdown table.
    Markdown,
    /// Comma-separated values with a header row (RFC 4180 quoting).
    Csv,
    /// One JSON document.
    Json,
}

/// How a column's cells line up in the plain-text and Markdown forms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Text columns.
    Left,
    /// Number columns.
    Right,
}

/// A table of already-formatted cells.
#[derive(Clone, Debug, Default)]
pub struct Table {
    headers: Vec<(String, Align)>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these columns.
    pub fn new<S: Into<String>>(columns: impl IntoIterator<Item = (S, Align)>) -> Table {
        Table {
            headers: columns.into_iter().map(|(h, a)| (h.into(), a)).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row; it must have one cell per column.
    pub fn push(&mut self, row: Vec<String>) {
        debug_assert_eq!(row.len(), self.headers.len(), "row width");
        self.rows.push(row);
    }

    /// Renders the table in `format`. [`Format::Json`] renders an array of
    /// objects keyed by column name, with every cell a string.
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Table => self.render_plain(),
            Format::Markdown => self.render_markdown(),
            Format::Csv => self.render_csv(),
            Format::Json => self.render_json(),
        }
    }

    fn widths(&self) -> Vec<usize> {
        self.headers
            .iter()
            .enumerate()
            .map(|(i, (h, _))| {
                self.rows
                    .iter()
                    .map(|r| r[i].chars().count())
                    .chain([h.chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect()
    }

    fn render_plain(&self) -> String {
        let widths = self.widths();
        let mut out = String::new();
        let line = |out: &mut String, cells: &mut dyn Iterator<Item = &str>| {
            let mut first = true;
            let mut text = String::new();
            for ((cell, width), (_, align)) in cells.zip(&widths).zip(&self.headers) {
                if !first {
                    text.push_str("  ");
                }
                first = false;
                match align {
                    Align::Left => write!(text, "{cell:<width$}"),
                    Align::Right => write!(text, "{cell:>width$}"),
                }
                .expect("writing to a String cannot fail");
            }
            out.push_str(text.trim_end());
            out.push('\n');
        };
        line(&mut out, &mut self.headers.iter().map(|(h, _)| h.as_str()));
        let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        line(&mut out, &mut rule.iter().map(String::as_str));
        for row in &self.rows {
            line(&mut out, &mut row.iter().map(String::as_str));
        }
        out
    }

    fn render_markdown(&self) -> String {
        let escape = |s: &str| s.replace('|', "\\|");
        let mut out = String::new();
        let heads: Vec<String> = self.headers.iter().map(|(h, _)| escape(h)).collect();
        writeln!(out, "| {} |", heads.join(" | ")).expect("String write");
        let rules: Vec<&str> = self
            .headers
            .iter()
            .map(|(_, a)| match a {
                Align::Left => "---",
                Align::Right => "---:",
            })
            .collect();
        writeln!(out, "|{}|", rules.join("|")).expect("String write");
        for row in &self.rows {
            let cells: Vec<String> = row.iter().map(|c| escape(c)).collect();
            writeln!(out, "| {} |", cells.join(" | ")).expect("String write");
        }
        out
    }

    fn render_csv(&self) -> String {
        fn field(s: &str) -> String {
            if s.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", s.replace('"', "\"\""))
            } else {
                s.to_string()
            }
        }
        let mut out = String::new();
        let heads: Vec<String> = self.headers.iter().map(|(h, _)| field(h)).collect();
        out.push_str(&heads.join(","));
        out.push('\n');
        for row in &self.rows {
            let cells: Vec<String> = row.iter().map(|c| field(c)).collect();
            out.push_str(&cells.join(","));
            out.push('\n');
        }
        out
    }

    fn render_json(&self) -> String {
        let rows: Vec<serde_json::Map<String, serde_json::Value>> = self
            .rows
            .iter()
            .map(|row| {
                self.headers
                    .iter()
                    .zip(row)
                    .map(|((h, _), c)| (h.clone(), serde_json::Value::String(c.clone())))
                    .collect()
            })
            .collect();
        let mut text = serde_json::to_string_pretty(&rows).expect("strings serialise");
        text.push('\n');
        text
    }
}

/// Formats milliseconds with three significant decimals for tables.
pub fn ms(value: f64) -> String {
    if value >= 100.0 {
        format!("{value:.1}")
    } else if value >= 10.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.3}")
    }
}

/// Formats a count with thousands separators (`12,345,678`).
pub fn count(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Formats a count and a noun, plural unless the count is one (`1 root`,
/// `1,024 roots`).
pub fn counted(value: u64, noun: &str) -> String {
    if value == 1 {
        format!("1 {noun}")
    } else {
        format!("{} {noun}s", count(value))
    }
}

/// Formats named figures on one line, each as `name value`, with
/// `separator` between them (`strong 3, weak 1`).
pub fn named<'a>(figures: impl IntoIterator<Item = (&'a str, String)>, separator: &str) -> String {
    let figures: Vec<String> = figures
        .into_iter()
        .map(|(name, value)| format!("{name} {value}"))
        .collect();
    figures.join(separator)
}

/// Formats a byte count with a binary unit (`1.5 MiB`).
pub fn bytes(value: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = value as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{value} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t = Table::new([("deque", Align::Left), ("p50 ms", Align::Right)]);
        t.push(vec!["steal-half".into(), "1.250".into()]);
        t.push(vec!["a,\"b\"".into(), "10.00".into()]);
        t
    }

    #[test]
    fn plain_columns_line_up() {
        let text = sample().render(Format::Table);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "deque       p50 ms");
        assert_eq!(lines[1], "----------  ------");
        assert_eq!(lines[2], "steal-half   1.250");
    }

    #[test]
    fn markdown_right_aligns_numbers_and_escapes_pipes() {
        let text = sample().render(Format::Markdown);
        assert!(text.starts_with("| deque | p50 ms |\n|---|---:|\n"));
    }

    #[test]
    fn csv_quotes_fields_that_need_it() {
        let text = sample().render(Format::Csv);
        assert_eq!(
            text,
            "deque,p50 ms\nsteal-half,1.250\n\"a,\"\"b\"\"\",10.00\n"
        );
    }

    #[test]
    fn json_rows_are_objects() {
        let v: serde_json::Value = serde_json::from_str(&sample().render(Format::Json)).unwrap();
        assert_eq!(v[0]["deque"], "steal-half");
    }

    #[test]
    fn json_times_are_milliseconds() {
        let mut doc = serde_json::json!({
            "pause_ms": 2.0,
            "per_run": [{"pause_ns": 1_500_000, "user_ns": null, "marked_objects": 3}],
            "workers": {"busy_ns": 2_000_000u64, "nested": {"idle_ns": 500_000}},
            "label_ns": "not a time",
        });
        in_milliseconds(&mut doc);
        assert_eq!(doc["per_run"][0]["pause_ms"], 1.5);
        assert!(doc["per_run"][0]["user_ms"].is_null());
        assert_eq!(doc["per_run"][0]["marked_objects"], 3);
        assert_eq!(doc["workers"]["busy_ms"], 2.0);
        assert_eq!(doc["workers"]["nested"]["idle_ms"], 0.5);
        assert_eq!(doc["label_ns"], "not a time");
        // The key keeps its place.
        let keys: Vec<&String> = doc["per_run"][0].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["pause_ms", "user_ms", "marked_objects"]);
        assert!(has_ms_key(&doc));
        assert!(!has_ms_key(&serde_json::json!({"steps": [{"load": 3}]})));
    }

    #[test]
    fn deferred_failures_end_with_the_first() {
        assert!(Deferred::default().finish("mark").is_ok());
        let mut d = Deferred::default();
        d.keep(Ok(()));
        d.keep(Err(CliError::usage("second")));
        d.first(CliError::usage("first"));
        assert_eq!(d.finish("mark").unwrap_err().to_string(), "first");
    }

    #[test]
    fn numbers_format_for_people() {
        assert_eq!(count(12_345_678), "12,345,678");
        assert_eq!(count(999), "999");
        assert_eq!(counted(1, "root"), "1 root");
        assert_eq!(counted(1200, "root"), "1,200 roots");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(12), "12 B");
        assert_eq!(ms(0.12345), "0.123");
        let figures = [("strong", count(1200)), ("weak", count(0))];
        assert_eq!(named(figures, ", "), "strong 1,200, weak 0");
        assert_eq!(named([("p50", ms(1.5))], "  "), "p50 1.500");
    }
}
