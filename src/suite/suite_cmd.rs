//! `iomark suite`: list the presets, print one as a fio job file, or run
//! it (warm-up and measured passes per test, table, JSON and HTML).

use std::ffi::OsString;

use serde_json::json;

use super::presets::{self, Preset};
use super::{args, Bench};

pub fn usage() -> String {
    use crate::cli::{help, text};
    let mut s = String::from(
        "Usage: iomark suite --list\n\
         \x20      iomark suite NAME [PATH] [OPTIONS]\n\
         \x20      iomark suite NAME [PATH] --print-jobfile [OPTIONS]\n\n",
    );
    s.push_str(&text::wrap(
        "Runs a named set of tests on test files in PATH (default: the current directory), \
         or prints it as a fio job file. --size and --runtime replace every test's own size \
         and run time, in the printed job file too.",
        0,
        text::WIDTH,
    ));
    s.push_str("\nPresets:\n");
    let presets: Vec<(&str, &str)> = presets::ALL.iter().map(|p| (p.name, p.summary)).collect();
    s.push_str(&text::options(&presets, args::OPTION_COLUMN + 2));
    s.push_str("\nOptions:\n");
    s.push_str(&args::shared_help(&[(
        "--list",
        "list the presets with their tests and defaults",
    )]));
    s.push_str("\nExamples:\n");
    for (cmd, what) in [
        (
            "iomark suite --list",
            "the presets, their tests and defaults",
        ),
        (
            "iomark suite ars /mnt/data",
            "Ars Technica's four write tests in /mnt/data",
        ),
        (
            "iomark suite crystaldiskmark --size=256m --runtime=2s",
            "a shorter CrystalDiskMark run",
        ),
        (
            "iomark suite patterns --print-jobfile > patterns.fio",
            "the fio job file a preset runs",
        ),
    ] {
        s.push_str(&help::example(cmd, what));
    }
    s
}

fn list() -> String {
    let mut s = String::new();
    for p in presets::ALL {
        s.push_str(&format!("{}\n  {}\n", p.name, p.summary));
        s.push_str(&format!(
            "  defaults: size {}, {} s per test, {} pass(es), {} s warm-up, {} I/O\n",
            p.size,
            p.runtime_s,
            p.passes,
            p.warmup_s,
            if p.direct { "direct" } else { "buffered" }
        ));
        for t in p.tests {
            let opts: Vec<String> = t.options.iter().map(|(k, v)| format!("{k}={v}")).collect();
            s.push_str(&format!("    {:<28} {}\n", t.section, opts.join(" ")));
        }
        s.push('\n');
    }
    s
}

pub fn main(argv: Vec<OsString>) -> i32 {
    let mut want_list = false;
    let flags = match args::parse(argv, "suite", &mut |name, _| {
        if name == "list" {
            want_list = true;
            Ok(true)
        } else {
            Ok(false)
        }
    }) {
        Ok(f) => f,
        Err(e) => return super::fail_early("suite", &e),
    };
    if flags.help {
        return super::print("suite", &usage());
    }
    if want_list {
        return super::print("suite", &list());
    }
    let Some(name) = flags.positionals.first() else {
        return super::fail_early("suite", "name a preset (iomark suite --list shows them)");
    };
    let Some(preset) = presets::find(name) else {
        let names: Vec<&str> = presets::ALL.iter().map(|p| p.name).collect();
        return super::fail_early(
            "suite",
            &format!("unknown preset '{name}' (presets: {})", names.join(", ")),
        );
    };
    if flags.positionals.len() > 2 {
        return super::fail_early("suite", "give a preset NAME and at most one PATH");
    }
    let launch = match super::join("suite", &flags) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let code = run_preset(
        preset,
        flags.positionals.get(1).map(String::as_str),
        &flags,
        &launch,
    );
    launch.end(code)
}

fn run_preset(
    preset: &Preset,
    path: Option<&str>,
    flags: &args::RunFlags,
    launch: &crate::launch::Launch,
) -> i32 {
    let target = match super::agreed(
        "suite",
        launch,
        "every rank to check PATH",
        super::target(path, flags, preset.direct, preset.engines),
    ) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let jobfile = presets::render(
        preset,
        &presets::Render {
            directory: target.directory.clone(),
            ioengine: target.engine.kind.name().to_string(),
            direct: target.direct,
            size: flags.size.map(presets::size_text),
            runtime: flags.runtime_us.map(presets::time_text),
            // Under MPI each rank its own file (clones' own files are
            // named by their global clone numbers already).
            file_name: preset
                .shared_file
                .filter(|_| launch.ranks().is_some())
                .map(|f| launch.own_file(f)),
            comments: Vec::new(),
        },
    );
    if flags.print_jobfile {
        return super::print_on(launch, "suite", &jobfile);
    }
    let passes = flags.passes.unwrap_or(preset.passes);
    let warmup = flags.warmup_us.unwrap_or(preset.warmup_s * 1_000_000);
    let tests = preset.suite_tests();
    let settings = json!({
        "preset": preset.name,
        "path": target.path.display().to_string(),
        "ioengine": target.engine.kind.name(),
        "direct": target.direct,
        "size": flags.size.map(presets::size_text).unwrap_or_else(|| preset.size.to_string()),
        "runtime_us": flags.runtime_us.unwrap_or(preset.runtime_s * 1_000_000),
        "passes": passes,
        "warmup_us": warmup,
    });
    let bench = Bench {
        kind: "suite",
        title: format!("preset '{}'", preset.name),
        jobfile,
        tests,
        passes,
        warmup_us: warmup,
        settings,
        target,
        sweep: None,
        launch,
    };
    super::run_bench(bench, flags)
}
