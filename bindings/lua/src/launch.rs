//! Hands the command line to the C main of the interpreter.

use std::ffi::{c_char, c_int, CString};
use std::os::unix::ffi::OsStringExt;

extern "C" {
    /// The interpreter's C main (`smlua_main.c`): runs the command line
    /// `argv[0..argc]` and returns the process's exit status.
    fn smlua_main(argc: c_int, argv: *mut *mut c_char) -> c_int;
}

/// Runs the interpreter on this process's arguments and exits with its
/// status. An argument with an interior NUL byte cannot reach C: it is
/// reported and the process exits with status 1.
pub fn run() -> ! {
    let mut args = Vec::new();
    for arg in std::env::args_os() {
        match CString::new(arg.into_vec()) {
            Ok(arg) => args.push(arg),
            Err(_) => {
                eprintln!("stealmark-lua: an argument holds a NUL byte");
                std::process::exit(1);
            }
        }
    }
    let mut argv: Vec<*mut c_char> = args.iter().map(|a| a.as_ptr().cast_mut()).collect();
    argv.push(std::ptr::null_mut());
    let argc = c_int::try_from(args.len()).unwrap_or(c_int::MAX);
    // SAFETY: `argv` holds `argc` pointers to NUL-terminated strings that
    // live until after the call (`args`), then a null pointer, as a C main
    // expects; the C side never writes through them.
    let status = unsafe { smlua_main(argc, argv.as_mut_ptr()) };
    std::process::exit(status)
}
