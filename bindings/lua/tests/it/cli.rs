//! The interpreters' command line: `-e`, `-l`, `-`, a script with
//! arguments, the `arg` table, `LUA_INIT`, `-E`, `-v`, and errors.

use std::io::Write;
use std::process::{Command, Output, Stdio};

const BINS: [&str; 2] = [
    env!("CARGO_BIN_EXE_stealmark-lua"),
    env!("CARGO_BIN_EXE_stealmark-lua-stock"),
];

fn run(bin: &str, args: &[&str], env: &[(&str, &str)], stdin: &str) -> Output {
    let mut cmd = Command::new(bin);
    cmd.args(args)
        .env_remove("LUA_INIT")
        .env_remove("LUA_INIT_5_4")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("the interpreter starts");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(stdin.as_bytes())
        .expect("stdin takes the input");
    child.wait_with_output().expect("the interpreter ends")
}

fn stdout_of(bin: &str, args: &[&str], env: &[(&str, &str)], stdin: &str) -> String {
    let out = run(bin, args, env, stdin);
    assert!(
        out.status.success(),
        "{bin} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

fn script(body: &str) -> tempfile::NamedTempFile {
    let mut f = tempfile::Builder::new()
        .suffix(".lua")
        .tempfile()
        .expect("a temporary script");
    f.write_all(body.as_bytes()).expect("the script is written");
    f
}

#[test]
fn e_options_run_in_order() {
    for bin in BINS {
        let out = stdout_of(bin, &["-e", "x = 20", "-ex = x + 1 print(x)"], &[], "");
        assert_eq!(out, "21\n");
    }
}

#[test]
fn a_script_gets_its_arguments_and_the_arg_table() {
    let f = script("print(select('#', ...), ...) print(arg[0] == SCRIPT, arg[1], arg[2], arg[-1], arg[-2] ~= nil)");
    let path = f.path().to_str().expect("a UTF-8 path");
    for bin in BINS {
        let setup = format!("SCRIPT = [[{path}]]");
        let out = stdout_of(bin, &["-e", &setup, path, "a", "b c"], &[], "");
        assert_eq!(
            out,
            "2\ta\tb c\ntrue\ta\tb c\tSCRIPT = [[".to_string() + path + "]]\ttrue\n"
        );
    }
}

#[test]
fn l_requires_a_module_into_a_global() {
    for bin in BINS {
        let out = stdout_of(
            bin,
            &[
                "-l",
                "string",
                "-lm=math",
                "-e",
                "print(string.rep('a', 3), m.abs(-2))",
            ],
            &[],
            "",
        );
        assert_eq!(out, "aaa\t2\n");
    }
}

#[test]
fn dash_and_no_script_run_standard_input() {
    for bin in BINS {
        assert_eq!(
            stdout_of(bin, &["-", "x"], &[], "print(arg[1], ...)"),
            "x\tx\n"
        );
        assert_eq!(stdout_of(bin, &[], &[], "print(1 + 1)"), "2\n");
    }
}

#[test]
fn lua_init_runs_first_unless_e_is_given() {
    for bin in BINS {
        let env = [("LUA_INIT", "y = 7")];
        assert_eq!(stdout_of(bin, &["-e", "print(y)"], &env, ""), "7\n");
        assert_eq!(stdout_of(bin, &["-E", "-e", "print(y)"], &env, ""), "nil\n");
        let f = script("z = 9");
        let at = format!("@{}", f.path().to_str().expect("a UTF-8 path"));
        let env = [("LUA_INIT_5_4", at.as_str()), ("LUA_INIT", "z = 1")];
        assert_eq!(stdout_of(bin, &["-e", "print(z)"], &env, ""), "9\n");
    }
}

#[test]
fn v_prints_the_version() {
    for bin in BINS {
        assert!(stdout_of(bin, &["-v"], &[], "").starts_with("Lua 5.4.9"));
    }
}

#[test]
fn errors_and_bad_options_fail_with_a_message() {
    for bin in BINS {
        let out = run(bin, &["-e", "error('boom')"], &[], "");
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("boom") && err.contains("stack traceback"),
            "{err}"
        );
        let out = run(bin, &["-x"], &[], "");
        assert!(!out.status.success());
        assert!(String::from_utf8_lossy(&out.stderr).contains("unrecognized option '-x'"));
        let out = run(bin, &["/nonexistent/script.lua"], &[], "");
        assert!(!out.status.success());
        assert!(String::from_utf8_lossy(&out.stderr).contains("cannot open"));
    }
}

#[test]
fn a_bad_worker_count_is_refused() {
    let out = run(
        BINS[0],
        &["-e", "collectgarbage()"],
        &[("STEALMARK_LUA_WORKERS", "two")],
        "",
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("STEALMARK_LUA_WORKERS='two'"));
}
