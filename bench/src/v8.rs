//! The V8 side of the peer comparisons: running node with the GC flags that
//! fix its marking threads, and reading the full-GC mark times that
//! `--trace-gc-nvp` prints.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::hotspot::{checked_output, on_path, Error};

/// The `node` launcher.
#[derive(Clone, Debug)]
pub struct Node {
    /// Its path.
    pub node: PathBuf,
}

impl Node {
    /// `node` on the `PATH`; `Err` says it is missing.
    pub fn find() -> Result<Node, String> {
        on_path("node")
            .map(|node| Node { node })
            .ok_or_else(|| "no node on the PATH (install Node.js)".to_owned())
    }

    /// `node --version`, for example `v20.20.2`.
    pub fn version(&self) -> String {
        Command::new(&self.node)
            .arg("--version")
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_else(|| "unknown".to_owned())
    }

    /// Runs `script` with `args` under `--expose-gc --trace-gc-nvp` with
    /// V8's garbage collector on `threads` threads and an old space of
    /// `old_space_mb` MiB, and returns its standard output; `Err` if it
    /// fails.
    pub fn run(
        &self,
        threads: usize,
        old_space_mb: u64,
        script: &Path,
        args: &[String],
    ) -> Result<String, Error> {
        let out = checked_output(
            Command::new(&self.node)
                .args(gc_flags(threads, old_space_mb))
                .arg(script)
                .args(args),
            &format!("node {}", script.display()),
        )?;
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

/// node's flags for `threads` GC threads (1: `--single-threaded-gc`; N: the
/// main thread and `--v8-pool-size=N-1` workers), with `gc()` exposed, the
/// phases of every GC printed, and an old space of `old_space_mb` MiB.
pub fn gc_flags(threads: usize, old_space_mb: u64) -> Vec<String> {
    let mut flags = vec![
        "--expose-gc".to_owned(),
        "--trace-gc-nvp".to_owned(),
        format!("--max-old-space-size={old_space_mb}"),
    ];
    if threads <= 1 {
        flags.push("--single-threaded-gc".to_owned());
    } else {
        flags.push(format!("--v8-pool-size={}", threads - 1));
    }
    flags
}

/// The `mark=` phase, ms, of every full (mark-compact, `gc=mc`) GC in the
/// output of `--trace-gc-nvp`, in order. Lines of other GCs and lines that
/// do not parse are skipped.
pub fn full_gc_marks(text: &str) -> Vec<f64> {
    text.lines()
        .filter(|line| line.split_whitespace().any(|w| w == "gc=mc"))
        .filter_map(|line| {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix("mark="))
                .and_then(|v| v.parse::<f64>().ok())
                .filter(|v| v.is_finite())
        })
        .collect()
}

/// The `COUNT` of the line `built NAME COUNT` in a program's output.
pub fn built_count(text: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let mut w = line.split_whitespace();
        match (w.next(), w.next(), w.next()) {
            (Some("built"), Some(_), Some(n)) => n.parse().ok(),
            _ => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_mark_phase_of_full_gcs_only() {
        let text = "\
[1:0x1]  57 ms: pause=13.8 mutator=0.7 gc=mc reduce_memory=0 mark=9.5 mark.roots=0.1 sweep=1.0
[1:0x1]  60 ms: pause=1.1 mutator=2.0 gc=s reduce_memory=0 mark=0.4
built tsc 812
[1:0x1]  67 ms: pause=10.2 mutator=0.1 gc=mc reduce_memory=0 mark.roots=0.2 mark=7.25
[1:0x1]  70 ms: pause=10.2 mutator=0.1 gc=mc reduce_memory=0 mark=nan
[1:0x1]  71 ms: pause=10.2 gc=mc trunc";
        assert_eq!(full_gc_marks(text), vec![9.5, 7.25]);
        assert_eq!(built_count(text), Some(812));
        assert_eq!(built_count("done\n"), None);
    }

    #[test]
    fn one_thread_is_single_threaded_and_more_use_the_pool() {
        assert!(gc_flags(1, 64).contains(&"--single-threaded-gc".to_owned()));
        let two = gc_flags(2, 64);
        assert!(two.contains(&"--v8-pool-size=1".to_owned()));
        assert!(!two.contains(&"--single-threaded-gc".to_owned()));
        assert!(two.contains(&"--max-old-space-size=64".to_owned()));
    }
}
