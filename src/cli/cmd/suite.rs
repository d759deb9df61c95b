//! `iomark suite --list | NAME [PATH] [OPTIONS]`: its table. Running it
//! is `suite::suite_cmd`.

use std::ffi::OsString;

use super::{switch, Complete, Pos, Section, Spec};
use crate::suite::presets;
pub use crate::suite::suite_cmd::SuiteOpts;

/// The presets' names, from the preset registry.
pub fn preset_names() -> Vec<&'static str> {
    presets::ALL.iter().map(|p| p.name).collect()
}

fn finish(o: &mut SuiteOpts, pos: Vec<OsString>) -> Result<(), String> {
    o.run.check()?;
    let pos = super::strings(pos)?;
    if o.list {
        return Ok(());
    }
    let Some(name) = pos.first() else {
        return Err("name a preset (iomark suite --list shows them)".into());
    };
    let Some(preset) = presets::find(name) else {
        return Err(format!(
            "unknown preset '{}' (presets: {})",
            crate::job::value::excerpt(name),
            preset_names().join(", ")
        ));
    };
    if pos.len() > 2 {
        return Err("give a preset NAME and at most one PATH".into());
    }
    o.preset = Some(preset);
    o.path = pos.get(1).cloned();
    Ok(())
}

pub fn spec() -> Spec<SuiteOpts> {
    let list = switch(
        "list",
        "list the presets with their tests and defaults",
        |o: &mut SuiteOpts, _| {
            o.list = true;
            Ok(())
        },
    );
    let options = Section::with_run("Options", vec![list], |o: &mut SuiteOpts| &mut o.run);
    Spec {
        name: "suite",
        usage: vec![
            "suite --list".into(),
            "suite NAME [PATH] [OPTIONS]".into(),
            "suite NAME [PATH] --print-jobfile [OPTIONS]".into(),
        ],
        about: "Runs a named set of tests on test files in PATH (default: the current \
                directory), or prints it as a fio job file. --size and --runtime replace every \
                test's own size and run time, in the printed job file too."
            .into(),
        lists: vec![(
            "Presets",
            presets::ALL
                .iter()
                .map(|p| (p.name.to_string(), p.summary.to_string()))
                .collect(),
        )],
        sections: vec![options],
        after: String::new(),
        positionals: vec![
            Pos {
                name: "NAME",
                complete: Complete::Words(preset_names),
            },
            Pos {
                name: "PATH",
                complete: Complete::Dir,
            },
        ],
        examples: vec![
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
        ],
        finish,
    }
}

pub fn main(argv: Vec<OsString>) -> i32 {
    super::drive(
        &spec(),
        SuiteOpts::default(),
        argv,
        crate::suite::suite_cmd::main,
    )
}
