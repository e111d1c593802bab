//! The tool's errors: each one prints as a single line that says what went
//! wrong and what to do about it, and maps to an exit code.

use std::fmt::Display;
use std::io;
use std::path::{Path, PathBuf};

/// Exit code for a bad argument (clap uses the same code for its own errors).
pub const EXIT_USAGE: u8 = 2;
/// Exit code for every other failure: a bad file, an I/O error.
pub const EXIT_FAILURE: u8 = 1;

/// An error that ends the command.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// An argument value that parsed but makes no sense with the others.
    #[error("{message}")]
    Usage {
        /// What is wrong, and what to pass instead.
        message: String,
    },
    /// A file could not be read, created or written.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done ("create", "write", ...).
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        source: io::Error,
    },
    /// A snapshot file is missing, truncated or corrupt.
    #[error("{} is not a usable stealmark snapshot: {reason}", path.display())]
    Snapshot {
        /// The file.
        path: PathBuf,
        /// The loader's diagnosis (names the section and byte offset).
        reason: String,
    },
    /// A library operation failed (the heap writer, the marker).
    #[error("{context}: {reason}")]
    Failed {
        /// What the tool was doing.
        context: String,
        /// The library's reason.
        reason: String,
    },
    /// A failure whose advice depends on the case (a foreign file format, a
    /// truncated dump, an output that would destroy a file).
    #[error("{message}")]
    Advised {
        /// What went wrong.
        message: String,
        /// What to do about it.
        hint: String,
    },
    /// An output that is one of the inputs, or the same file as another
    /// output (a usage error: checked before any work).
    #[error("{}", same_file_message(flag, path, other, other_path, *other_is_input))]
    SameFile {
        /// The output's flag (`--plot`).
        flag: &'static str,
        /// The output's path as given.
        path: PathBuf,
        /// The flag of the input or earlier output it is the same file as.
        other: &'static str,
        /// That file's path as given.
        other_path: PathBuf,
        /// Whether that file is an input (else an output).
        other_is_input: bool,
    },
    /// Standard output's reader went away (`stealmark ... | head`): the
    /// command stops quietly and exits 0, as after a complete run.
    #[error("standard output was closed")]
    StdoutClosed,
}

/// The message of [`CliError::SameFile`].
fn same_file_message(
    flag: &str,
    path: &Path,
    other: &str,
    other_path: &Path,
    other_is_input: bool,
) -> String {
    if other_is_input {
        format!(
            "{flag} {} is the input {other} {}: writing it would destroy the input",
            path.display(),
            other_path.display()
        )
    } else {
        format!(
            "{flag} {} and {other} {} are one file: one output would replace the other",
            path.display(),
            other_path.display()
        )
    }
}

impl CliError {
    /// A usage error with the given message.
    pub fn usage(message: impl Into<String>) -> CliError {
        CliError::Usage {
            message: message.into(),
        }
    }

    /// An I/O error on `path`.
    pub fn io(action: &'static str, path: &Path, source: io::Error) -> CliError {
        CliError::Io {
            action,
            path: path.to_path_buf(),
            source,
        }
    }

    /// A snapshot that could not be opened.
    pub fn snapshot(path: &Path, reason: impl Display) -> CliError {
        CliError::Snapshot {
            path: path.to_path_buf(),
            reason: reason.to_string(),
        }
    }

    /// A failure of the library while doing `context`.
    pub fn failed(context: impl Into<String>, reason: impl Display) -> CliError {
        CliError::Failed {
            context: context.into(),
            reason: reason.to_string(),
        }
    }

    /// A failure with its own advice `hint`.
    pub fn advised(message: impl Into<String>, hint: impl Into<String>) -> CliError {
        CliError::Advised {
            message: message.into(),
            hint: hint.into(),
        }
    }

    /// The process exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Usage { .. } | CliError::SameFile { .. } => EXIT_USAGE,
            CliError::StdoutClosed => 0,
            _ => EXIT_FAILURE,
        }
    }

    /// What the user can do about it, if the message alone does not say;
    /// `command` is the subcommand that failed (`mark`, `import v8`).
    pub fn hint(&self, command: &str) -> Option<String> {
        match self {
            CliError::Usage { .. } => Some(format!("see `stealmark {command} --help`")),
            // Only an input is opened; outputs are created or written.
            CliError::Io { action: "open", source, .. }
                if source.kind() == io::ErrorKind::NotFound =>
            {
                Some("check the path, or create a snapshot with `stealmark gen --shape runtime --objects 1000000 -o heap.smk`".into())
            }
            CliError::Io { action: "open", .. } => Some("check the path and its permissions".into()),
            CliError::Io { .. } => Some(
                "check that the directory exists, is writable and has free space, or choose another path".into(),
            ),
            CliError::Snapshot { .. } => Some(
                "regenerate it with `stealmark gen` or `stealmark import`; `stealmark info FILE` checks a file".into(),
            ),
            CliError::Advised { hint, .. } => Some(hint.clone()),
            CliError::SameFile { flag, .. } => Some(format!("give {flag} another path")),
            CliError::Failed { .. } | CliError::StdoutClosed => None,
        }
    }

    /// The whole error as one line: the message, then the hint for
    /// `command`.
    pub fn one_line(&self, command: &str) -> String {
        let message = self.to_string().replace(['\n', '\r'], " ");
        match self.hint(command) {
            Some(hint) => format!("{message}; {hint}"),
            None => message,
        }
    }
}

/// The result of a subcommand.
pub type CliResult<T = ()> = Result<T, CliError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_errors_exit_2_and_others_exit_1() {
        assert_eq!(CliError::usage("bad").exit_code(), 2);
        let missing = io::Error::from(io::ErrorKind::NotFound);
        assert_eq!(CliError::io("open", Path::new("x"), missing).exit_code(), 1);
        assert_eq!(CliError::snapshot(Path::new("x"), "short").exit_code(), 1);
    }

    #[test]
    fn one_line_has_no_newlines_and_a_hint() {
        let err = CliError::snapshot(Path::new("a.smk"), "header:\ntruncated at byte 12");
        let line = err.one_line("info");
        assert!(!line.contains('\n'));
        assert!(line.contains("a.smk"));
        assert!(line.contains("stealmark gen"));
    }

    #[test]
    fn usage_hint_names_the_command() {
        let line = CliError::usage("bad").one_line("bench");
        assert!(line.ends_with("see `stealmark bench --help`"), "{line}");
    }

    #[test]
    fn a_missing_output_directory_does_not_suggest_gen() {
        let missing = || io::Error::from(io::ErrorKind::NotFound);
        let input = CliError::io("open", Path::new("h.smk"), missing()).one_line("mark");
        assert!(input.contains("stealmark gen"), "{input}");
        let output = CliError::io("write", Path::new("/x/b.svg"), missing()).one_line("bench");
        assert!(!output.contains("stealmark gen"), "{output}");
        assert!(output.contains("directory exists"), "{output}");
    }
}
