//! Progress on standard error: a bar when it is a terminal; otherwise (a
//! log file, a CI job) one line every few seconds once a run has been
//! going that long, so that piped and redirected output stays short but a
//! long run still shows it is alive.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::output;

/// The environment variable that sets the seconds between two progress
/// lines off a terminal (0 turns them off).
pub const LINES_ENV: &str = "STEALMARK_PROGRESS_SECS";
/// The seconds between two progress lines off a terminal, by default.
const LINES_EVERY_S: f64 = 5.0;

/// A progress bar on a terminal, progress lines elsewhere.
pub struct Progress {
    bar: Option<ProgressBar>,
    lines: Option<Arc<Lines>>,
}

impl Progress {
    /// Progress counting to `total` `unit`s (e.g. "objects", "runs"),
    /// prefixed by `what`.
    pub fn new(total: u64, what: &str, unit: &str) -> Progress {
        if !std::io::stderr().is_terminal() {
            return Progress {
                bar: None,
                lines: Lines::new(total, what, unit).map(Arc::new),
            };
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        let template = format!(
            "{{prefix}} [{{bar:40.cyan/blue}}] {{human_pos}}/{{human_len}} {unit} ({{percent}}%, {{elapsed}}, eta {{eta}}) {{msg}}"
        );
        bar.set_style(
            ProgressStyle::with_template(&template)
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        bar.set_prefix(what.to_string());
        bar.enable_steady_tick(Duration::from_millis(200));
        Progress {
            bar: Some(bar),
            lines: None,
        }
    }

    /// A spinner showing `message` while work of unknown length runs;
    /// hidden unless standard error is a terminal.
    pub fn spinner(message: &str) -> Progress {
        if !std::io::stderr().is_terminal() {
            return Progress {
                bar: None,
                lines: None,
            };
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.set_message(message.to_string());
        bar.enable_steady_tick(Duration::from_millis(120));
        Progress {
            bar: Some(bar),
            lines: None,
        }
    }

    /// A callback that sets the count done so far, for producers that
    /// report progress from anywhere (it holds its own handle).
    pub fn setter(&self) -> impl FnMut(u64) + Send + 'static {
        let bar = self.bar.clone();
        let lines = self.lines.clone();
        move |done| {
            if let Some(bar) = &bar {
                bar.set_position(done);
            }
            if let Some(lines) = &lines {
                lines.set(done);
            }
        }
    }

    /// Adds one to the count done.
    pub fn inc(&self) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
        if let Some(lines) = &self.lines {
            lines.set(lines.done.fetch_add(1, Ordering::Relaxed) + 1);
        }
    }

    /// Shows `message` after the count (the configuration being run).
    pub fn message(&self, message: impl Into<String>) {
        let message = message.into();
        if let Some(lines) = &self.lines {
            *lines.message.lock().unwrap_or_else(PoisonError::into_inner) = message.clone();
        }
        if let Some(bar) = &self.bar {
            bar.set_message(message);
        }
    }

    /// Removes the bar from the terminal.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Progress lines: `gen: 12,345,678 of 50,000,000 objects (24%) after
/// 10 s, about 31 s left`.
struct Lines {
    what: String,
    unit: String,
    total: u64,
    start: Instant,
    every: Duration,
    /// The count done.
    done: AtomicU64,
    /// Nanoseconds after `start` when the next line is due.
    next_ns: AtomicU64,
    message: Mutex<String>,
}

impl Lines {
    /// Lines every [`LINES_ENV`] seconds (default 5); `None` if that is 0.
    fn new(total: u64, what: &str, unit: &str) -> Option<Lines> {
        let every_s = std::env::var(LINES_ENV)
            .ok()
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .unwrap_or(LINES_EVERY_S);
        if every_s == 0.0 {
            return None;
        }
        let every = Duration::from_secs_f64(every_s);
        Some(Lines {
            what: what.to_string(),
            unit: unit.to_string(),
            total,
            start: Instant::now(),
            every,
            done: AtomicU64::new(0),
            next_ns: AtomicU64::new(every.as_nanos() as u64),
            message: Mutex::new(String::new()),
        })
    }

    /// Records the count done, and prints a line if one is due.
    fn set(&self, done: u64) {
        self.done.store(done, Ordering::Relaxed);
        let now = self.start.elapsed();
        let now_ns = now.as_nanos() as u64;
        let due = self.next_ns.load(Ordering::Relaxed);
        if now_ns < due {
            return;
        }
        // One line per interval, also with several producers.
        let next = now_ns + self.every.as_nanos() as u64;
        if self
            .next_ns
            .compare_exchange(due, next, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            return;
        }
        eprintln!("{}", self.line(done, now));
    }

    fn line(&self, done: u64, elapsed: Duration) -> String {
        let secs = elapsed.as_secs_f64();
        let mut line = format!(
            "{}: {} of {} {}",
            self.what,
            output::count(done),
            output::count(self.total),
            self.unit
        );
        if self.total > 0 {
            let fraction = done.min(self.total) as f64 / self.total as f64;
            line.push_str(&format!(
                " ({:.0}%) after {}",
                fraction * 100.0,
                seconds(secs)
            ));
            if fraction > 0.0 {
                line.push_str(&format!(
                    ", about {} left",
                    seconds(secs / fraction * (1.0 - fraction))
                ));
            }
        }
        let message = self.message.lock().unwrap_or_else(PoisonError::into_inner);
        if !message.is_empty() {
            line.push_str(&format!("; {message}"));
        }
        line
    }
}

/// Seconds for a progress line: one decimal below ten.
fn seconds(s: f64) -> String {
    if s < 10.0 {
        format!("{s:.1} s")
    } else {
        format!("{s:.0} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_says_how_far_and_how_long() {
        let lines = Lines {
            what: "gen".into(),
            unit: "objects".into(),
            total: 4_000_000,
            start: Instant::now(),
            every: Duration::from_secs(5),
            done: AtomicU64::new(0),
            next_ns: AtomicU64::new(0),
            message: Mutex::new("pass 1/3".into()),
        };
        assert_eq!(
            lines.line(1_000_000, Duration::from_secs(10)),
            "gen: 1,000,000 of 4,000,000 objects (25%) after 10 s, about 30 s left; pass 1/3"
        );
        assert_eq!(
            lines.line(3_000_000, Duration::from_millis(1500)),
            "gen: 3,000,000 of 4,000,000 objects (75%) after 1.5 s, about 0.5 s left; pass 1/3"
        );
    }
}
