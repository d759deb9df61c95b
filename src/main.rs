//! The iomark binary: parse the command line, run it, exit with its code.

use iomark::run::output;

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let mut code = match iomark::cli::parse(args) {
        Ok(cmd) => iomark::cli::commands::execute(cmd),
        // Under MPI every rank finds the same error: said once.
        Err(e) => iomark::launch::fail_once(&format!("iomark: {e}")),
    };
    // Standard output redirected to a file: what was written must be there.
    if let Err(e) = output::finish_stdout() {
        output::stderr_line(&format!(
            "iomark: cannot write to standard output: {}",
            output::reason(&e)
        ));
        if code == 0 {
            code = 1;
        }
    }
    std::process::exit(code);
}
