//! `stealmark`: generate, inspect, import, trace and benchmark heap snapshots.
//!
//! Exit codes: 0 on success, 2 for a usage error (a bad flag or value), 1 for
//! any other failure (a missing or corrupt file, an I/O error). Every error
//! is one line on standard error saying what to do. A standard output whose
//! reader has gone away (`stealmark ... | head`) ends the command quietly
//! with code 0.

use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{Parser, Subcommand};

mod args;
mod bench;
mod demo;
mod error;
mod gen;
mod heapfile;
mod import;
mod info;
mod mark;
mod output;
mod pause;
mod plot;
mod progress;
mod run;
mod simulate;
mod trace_event;

use error::CliError;

/// Parallel GC marking over work-stealing deques: generate heap snapshots,
/// inspect them, mark them with any deque and balancing policy, and compare
/// pause times and load balance.
#[derive(Parser)]
#[command(
    name = "stealmark",
    version,
    about,
    after_help = "Start with:\n  stealmark demo\n\nOr, step by step:\n  stealmark gen --shape runtime --objects 2000000 -o heap.smk\n  stealmark info heap.smk\n  stealmark mark heap.smk --threads 2 --deque steal-half --runs 20\n  stealmark bench heap.smk --threads 1,2 --deques steal-half,chase-lev,crossbeam"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Generate a synthetic heap and write it as a snapshot file.
    Gen(gen::GenArgs),
    /// Validate a snapshot and report its contents.
    Info(info::InfoArgs),
    /// Mark a snapshot repeatedly and report pause times and balance.
    Mark(mark::MarkArgs),
    /// Compare deques, policies and worker counts on one snapshot.
    Bench(bench::BenchArgs),
    /// Build a runtime-like heap in memory and compare every deque on it.
    Demo(demo::DemoArgs),
    /// Import a foreign heap dump (V8 or HPROF) into a stealmark snapshot.
    Import(import::ImportArgs),
    /// Simulate the balancing models that justify the policies.
    Simulate(simulate::SimulateArgs),
}

/// Replaces the panic message and backtrace hint with one line: a panic is
/// a bug in the tool, never the user's fault, and must not look like a
/// usage problem.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("unknown panic");
        let location = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!(
            "error: internal error in stealmark ({message}{location}); this is a bug, please report it with the command line"
        );
    }));
}

/// Parses the command line. A usage error is printed as one line (clap's
/// message, its hints and the pointer to `--help`, joined) and exits with
/// code 2; `--help`, `--version` and a bare `stealmark` print as clap does.
fn parse() -> Cli {
    match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e)
            if !e.use_stderr()
                || e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand =>
        {
            e.exit()
        }
        Err(e) => {
            eprintln!("error: {}", usage_line(&e.to_string()));
            std::process::exit(i32::from(error::EXIT_USAGE))
        }
    }
}

/// Joins clap's multi-line error message into one line, dropping the usage
/// synopsis (`--help` shows it).
fn usage_line(message: &str) -> String {
    let mut line = String::new();
    for part in message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("Usage:"))
    {
        if !line.is_empty() {
            // A bracketed list continues the sentence before it.
            line.push_str(if part.starts_with('[') { " " } else { "; " });
        }
        line.push_str(part.strip_prefix("error: ").unwrap_or(part));
    }
    line
}

fn main() -> ExitCode {
    install_panic_hook();
    let cli = parse();
    let result = match cli.command {
        Command::Gen(args) => gen::run(args),
        Command::Info(args) => info::run(args),
        Command::Mark(args) => mark::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Demo(args) => demo::run(args),
        Command::Import(args) => import::run(args),
        Command::Simulate(args) => simulate::run(args),
    };
    match result.and_then(|()| output::flush_stdout()) {
        Ok(()) | Err(CliError::StdoutClosed) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {}", err.one_line());
            ExitCode::from(err.exit_code())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn command_tree_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn usage_errors_become_one_line() {
        let err = Cli::try_parse_from(["stealmark", "mark", "f", "--deque", "stealhalf"])
            .err()
            .expect("a bad deque name is an error");
        let line = usage_line(&err.to_string());
        assert!(!line.contains('\n'), "{line}");
        assert!(line.starts_with("invalid value 'stealhalf'"), "{line}");
        assert!(
            line.contains("steal-half"),
            "lists the accepted names: {line}"
        );
        assert!(!line.contains("Usage:"), "{line}");
    }

    /// Checks that `cmd` (reached by `stealmark {path}`) and every
    /// subcommand below it show an example of their own command line, and
    /// returns how many commands were checked.
    fn check_examples(cmd: &clap::Command, path: &str) -> usize {
        let help = cmd
            .get_after_help()
            .map(|h| h.to_string())
            .unwrap_or_default();
        let example = format!("stealmark {path}");
        assert!(
            help.lines().map(str::trim_start).any(|line| line
                .strip_prefix(&example)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(' '))),
            "`stealmark {path} --help` has no example"
        );
        1 + cmd
            .get_subcommands()
            .map(|sub| check_examples(sub, &format!("{path} {}", sub.get_name())))
            .sum::<usize>()
    }

    #[test]
    fn every_subcommand_has_an_example() {
        let checked: usize = Cli::command()
            .get_subcommands()
            .map(|sub| check_examples(sub, sub.get_name()))
            .sum();
        // gen, info, mark, bench, demo, import (v8, hprof), simulate
        // (berenbrink, mitzenmacher, hendler-shavit).
        assert_eq!(checked, 12);
    }
}
