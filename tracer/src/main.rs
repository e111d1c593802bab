//! `stealmark`: generate, inspect, import, trace and benchmark heap snapshots.
//!
//! Exit codes: 0 on success, 2 for a usage error (a bad flag or value), 1 for
//! any other failure (a missing or corrupt file, an I/O error). Every error
//! is one line on standard error saying what to do. A standard output whose
//! reader has gone away (`stealmark ... | head`) ends the command quietly
//! with code 0.

use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

mod args;
mod bench;
mod contract;
mod cputime;
mod demo;
mod error;
mod files;
mod gen;
mod heapfile;
mod import;
mod info;
mod mark;
mod mark_runs;
mod outpath;
mod output;
mod partial;
mod pause;
mod plot;
mod progress;
mod simulate;
mod trace_event;

use error::CliError;
use files::Files;

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

impl Command {
    /// The subcommand's name, as `stealmark NAME --help` takes it.
    fn name(&self) -> &'static str {
        match self {
            Command::Gen(_) => "gen",
            Command::Info(_) => "info",
            Command::Mark(_) => "mark",
            Command::Bench(_) => "bench",
            Command::Demo(_) => "demo",
            Command::Import(_) => "import",
            Command::Simulate(_) => "simulate",
        }
    }

    /// The files the command line reads and writes, checked before any
    /// work ([`Files::check`]). `import` compares its output with its
    /// input itself, with its other checks of a snapshot output.
    fn files(&self) -> Files<'_> {
        match self {
            Command::Gen(a) => Files::new().output("-o", Some(&a.output)),
            Command::Info(a) => Files::new().input("FILE", &a.file),
            Command::Mark(a) => Files::new()
                .input("FILE", &a.file)
                .output("--trace-out", a.trace_out.as_deref())
                .output("--plot", a.plot.as_deref()),
            Command::Bench(a) => Files::new()
                .input("FILE", &a.file)
                .output("--plot", a.plot.as_deref()),
            Command::Demo(_) | Command::Import(_) => Files::new(),
            Command::Simulate(a) => Files::new().output("--plot", a.plot()),
        }
    }
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

/// The command-line interface as clap parses it: the derived one, with
/// every option that takes a value also taking negative-looking values, so
/// that `--objects -5` reaches the value parser and is reported as "must be
/// positive" rather than as an unknown argument.
fn cli_command() -> clap::Command {
    fn accept_negative_numbers(cmd: clap::Command) -> clap::Command {
        cmd.mut_args(|arg| {
            if arg.get_action().takes_values() {
                arg.allow_negative_numbers(true)
            } else {
                arg
            }
        })
        .mut_subcommands(accept_negative_numbers)
    }
    accept_negative_numbers(Cli::command())
}

/// Parses the command line. A usage error is printed as one line (clap's
/// message, its hints and the pointer to the subcommand's `--help`, joined)
/// and exits with code 2; `--help`, `--version` and a bare `stealmark`
/// print as clap does.
fn parse() -> Cli {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let error = match cli_command().try_get_matches_from(&args) {
        Ok(matches) => match Cli::from_arg_matches(&matches) {
            Ok(cli) => return cli,
            Err(e) => e,
        },
        Err(e) => e,
    };
    if !error.use_stderr() || error.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        error.exit()
    }
    let path = subcommand_path(&cli_command(), &args[1..]);
    eprintln!("error: {}", usage_line(&error.to_string(), &path));
    std::process::exit(i32::from(error::EXIT_USAGE))
}

/// The subcommands named on the command line, as `--help` would be asked
/// for them (`mark`, `import v8`), or empty for the top level.
fn subcommand_path(cmd: &clap::Command, args: &[std::ffi::OsString]) -> String {
    let mut names = Vec::new();
    let mut cmd = cmd;
    for arg in args {
        let Some(sub) = arg.to_str().and_then(|a| cmd.find_subcommand(a)) else {
            continue;
        };
        names.push(sub.get_name());
        cmd = sub;
    }
    names.join(" ")
}

/// Joins clap's multi-line error message into one line: a list under a
/// line ending in `:` becomes a comma-separated list after it, the usage
/// synopsis is dropped, and clap's "For more information, try '--help'"
/// names the subcommand's `--help` (`path`).
fn usage_line(message: &str, path: &str) -> String {
    let mut parts: Vec<String> = Vec::new();
    for paragraph in message.split("\n\n") {
        let mut lines = paragraph.lines().map(str::trim).filter(|l| !l.is_empty());
        let Some(first) = lines.next() else {
            continue;
        };
        if first.starts_with("Usage:") {
            continue;
        }
        if first.starts_with("For more information") {
            let command = if path.is_empty() {
                "stealmark --help".to_string()
            } else {
                format!("stealmark {path} --help")
            };
            parts.push(format!("see `{command}`"));
            continue;
        }
        let mut text = first.strip_prefix("error: ").unwrap_or(first).to_string();
        let rest: Vec<&str> = lines.collect();
        if text.ends_with(':') && !rest.is_empty() {
            text.push(' ');
            text.push_str(&rest.join(", "));
        } else {
            for line in rest {
                // A bracketed list continues the sentence before it.
                text.push_str(if line.starts_with('[') { " " } else { "; " });
                text.push_str(line);
            }
        }
        parts.push(text);
    }
    parts.join("; ")
}

fn main() -> ExitCode {
    install_panic_hook();
    let cli = parse();
    let name = cli.command.name();
    let checked = cli.command.files().check();
    let result = checked.and_then(|()| match cli.command {
        Command::Gen(args) => gen::run(args),
        Command::Info(args) => info::run(args),
        Command::Mark(args) => mark::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Demo(args) => demo::run(args),
        Command::Import(args) => import::run(args),
        Command::Simulate(args) => simulate::run(args),
    });
    match result.and_then(|()| output::flush_stdout()) {
        Ok(()) | Err(CliError::StdoutClosed) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {}", err.one_line(name));
            ExitCode::from(err.exit_code())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_tree_is_consistent() {
        cli_command().debug_assert();
    }

    /// The one-line usage error of `args` (after `stealmark`).
    fn usage_error(args: &[&str]) -> String {
        let argv: Vec<&str> = std::iter::once("stealmark")
            .chain(args.iter().copied())
            .collect();
        let err = cli_command()
            .try_get_matches_from(&argv)
            .expect_err("a usage error");
        let os: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
        usage_line(&err.to_string(), &subcommand_path(&cli_command(), &os))
    }

    #[test]
    fn usage_errors_become_one_line() {
        let line = usage_error(&["mark", "f", "--deque", "stealhalf"]);
        assert!(!line.contains('\n'), "{line}");
        assert!(line.starts_with("invalid value 'stealhalf'"), "{line}");
        assert!(
            line.contains("steal-half"),
            "lists the accepted names: {line}"
        );
        assert!(!line.contains("Usage:"), "{line}");
        assert!(line.ends_with("see `stealmark mark --help`"), "{line}");
    }

    #[test]
    fn a_list_after_a_colon_is_joined_with_commas() {
        let line = usage_error(&[
            "mark",
            "f",
            "--sequential",
            "--deque",
            "abp",
            "--threads",
            "2",
        ]);
        assert!(
            line.starts_with(
                "the argument '--sequential' cannot be used with: --deque <KIND>, --threads <N>; "
            ),
            "{line}"
        );
        assert!(!line.contains(":;"), "{line}");
    }

    #[test]
    fn the_help_pointer_names_nested_subcommands() {
        let line = usage_error(&["import", "v8", "in.heapsnapshot"]);
        assert!(line.contains("not provided: --output <OUT>"), "{line}");
        assert!(line.ends_with("see `stealmark import v8 --help`"), "{line}");
        let line = usage_error(&["frobnicate"]);
        assert!(line.ends_with("see `stealmark --help`"), "{line}");
    }

    #[test]
    fn negative_numbers_reach_the_value_parser() {
        let line = usage_error(&["gen", "--shape", "list", "--objects", "-5", "-o", "x.smk"]);
        assert!(line.contains("must be positive"), "{line}");
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
        let checked: usize = cli_command()
            .get_subcommands()
            .map(|sub| check_examples(sub, sub.get_name()))
            .sum();
        // gen, info, mark, bench, demo, import (v8, hprof), simulate
        // (berenbrink, mitzenmacher, hendler-shavit).
        assert_eq!(checked, 12);
    }
}
