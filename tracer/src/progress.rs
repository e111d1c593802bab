//! Progress bars on standard error, shown only when it is a terminal, so
//! that piped and redirected output stays quiet and parseable.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress bar that is a no-op when standard error is not a terminal.
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A bar counting to `total` `unit`s (e.g. "objects", "runs"), prefixed
    /// by `what`; hidden unless standard error is a terminal.
    pub fn new(total: u64, what: &str, unit: &str) -> Progress {
        if !std::io::stderr().is_terminal() {
            return Progress { bar: None };
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
        Progress { bar: Some(bar) }
    }

    /// A spinner showing `message` while work of unknown length runs;
    /// hidden unless standard error is a terminal.
    pub fn spinner(message: &str) -> Progress {
        if !std::io::stderr().is_terminal() {
            return Progress { bar: None };
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.set_message(message.to_string());
        bar.enable_steady_tick(Duration::from_millis(120));
        Progress { bar: Some(bar) }
    }

    /// A callback that sets the count done so far, for producers that
    /// report progress from anywhere (it holds its own handle on the bar).
    pub fn setter(&self) -> impl FnMut(u64) + Send + 'static {
        let bar = self.bar.clone();
        move |done| {
            if let Some(bar) = &bar {
                bar.set_position(done);
            }
        }
    }

    /// Adds one to the count done.
    pub fn inc(&self) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }

    /// Shows `message` after the bar (the configuration being run).
    pub fn message(&self, message: impl Into<String>) {
        if let Some(bar) = &self.bar {
            bar.set_message(message.into());
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
