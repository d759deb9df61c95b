//! The iomark binary: parse the command line, run it, exit with its code.

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let code = match iomark::cli::parse(args) {
        Ok(cmd) => iomark::cli::commands::execute(cmd),
        Err(e) => {
            eprintln!("iomark: {e}");
            1
        }
    };
    std::process::exit(code);
}
