//! `iomark suite`: list the presets, print one as a fio job file, or run
//! it (warm-up and measured passes per test, table, JSON and HTML).

use serde_json::json;

use super::flags::RunFlags;
use super::presets::{self, Preset};
use super::Bench;

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

/// Runs `iomark suite` as asked (parsed by `cli::cmd::suite`).
pub fn main(opts: SuiteOpts) -> i32 {
    if opts.list {
        return super::print("suite", &list());
    }
    let Some(preset) = opts.preset else {
        return super::fail_early("suite", "name a preset (iomark suite --list shows them)");
    };
    let launch = match super::join("suite", &opts.run) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let code = run_preset(preset, opts.path.as_deref(), &opts.run, &launch);
    launch.end(code)
}

fn run_preset(
    preset: &Preset,
    path: Option<&str>,
    flags: &RunFlags,
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

/// What `iomark suite` was asked.
#[derive(Clone, Debug, Default)]
pub struct SuiteOpts {
    pub run: RunFlags,
    /// `--list`: list the presets.
    pub list: bool,
    /// The preset to run (None only with `--list`).
    pub preset: Option<&'static Preset>,
    pub path: Option<String>,
}
