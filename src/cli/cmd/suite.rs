//! `iomark suite --list | NAME [PATH] [OPTIONS]`: its table. Running it
//! is `suite::suite_cmd`.

use std::ffi::OsString;

use super::{opt, switch, Complete, Pos, Section, Spec};
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
    if preset.is_object() {
        if let Some(p) = &o.path {
            return Err(format!(
                "preset '{}' runs against an object store: give --endpoint and --bucket, not a PATH ('{}')",
                preset.name,
                crate::job::value::excerpt(p)
            ));
        }
        if o.endpoint.is_none() || o.bucket.is_none() {
            return Err(format!(
                "preset '{}' needs --endpoint URL and --bucket NAME (e.g. --endpoint http://127.0.0.1:8333 --bucket iomark-bench)",
                preset.name
            ));
        }
        let counted = presets::s3::counts_objects(preset);
        if o.objects.is_some() && !counted {
            return Err(format!(
                "--objects is for s3-list and s3-stat (the objects they prepare), not '{}'",
                preset.name
            ));
        }
        if counted && o.run.size.is_some() {
            return Err(format!(
                "--size does not apply to '{}': it prepares --objects objects of 4KiB",
                preset.name
            ));
        }
    } else if o.endpoint.is_some()
        || o.bucket.is_some()
        || o.use_existing_bucket
        || o.objects.is_some()
    {
        return Err(format!(
            "--endpoint, --bucket, --use-existing-bucket and --objects are for the object presets (s3-*), not '{}'",
            preset.name
        ));
    }
    Ok(())
}

/// The options of the object presets: where the store is, which bucket.
fn object_opts() -> Vec<super::Opt<SuiteOpts>> {
    let endpoint = opt(
        "endpoint",
        "URL",
        "object presets: the S3 endpoint, http://HOST[:PORT] or https://HOST[:PORT]",
        Complete::Nothing,
        |o: &mut SuiteOpts, v| {
            crate::suite::suite_cmd::endpoint(v)?;
            o.endpoint = Some(v.to_string());
            Ok(())
        },
    );
    let bucket = opt(
        "bucket",
        "NAME",
        "object presets: the bucket, created and removed by the run (it must not exist)",
        Complete::Nothing,
        |o: &mut SuiteOpts, v| {
            crate::suite::suite_cmd::bucket_name(v)?;
            o.bucket = Some(v.to_string());
            Ok(())
        },
    );
    let existing = switch(
        "use-existing-bucket",
        "object presets: run in the existing --bucket, touching only the run's own prefix",
        |o: &mut SuiteOpts, _| {
            o.use_existing_bucket = true;
            Ok(())
        },
    );
    let objects = opt(
        "objects",
        "N",
        "s3-list, s3-stat: how many objects of 4KiB the prep test writes, 1 to 1000000 (default 1000)",
        Complete::Nothing,
        |o: &mut SuiteOpts, v| {
            let n = v
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|n| (1..=1_000_000).contains(n))
                .ok_or_else(|| {
                    format!(
                        "--objects '{}' is not a count from 1 to 1000000",
                        crate::job::value::excerpt(v)
                    )
                })?;
            o.objects = Some(n);
            Ok(())
        },
    );
    vec![endpoint, bucket, existing, objects]
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
    let options = Section::with_run(
        "Options",
        std::iter::once(list).chain(object_opts()).collect(),
        |o: &mut SuiteOpts| &mut o.run,
    );
    Spec {
        name: "suite",
        usage: vec![
            "suite --list".into(),
            "suite NAME [PATH] [OPTIONS]".into(),
            "suite NAME [PATH] --print-jobfile [OPTIONS]".into(),
            "suite s3-NAME --endpoint URL --bucket NAME [OPTIONS]".into(),
        ],
        about: "Runs a named set of tests on test files in PATH (default: the current \
                directory), or prints it as a fio job file. --size and --runtime replace every \
                test's own size and run time, in the printed job file too. The object \
                presets (s3-*) run against an S3 endpoint and bucket instead of PATH, with \
                credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or the shared \
                credentials file; the run creates the bucket and removes it with every object \
                it wrote."
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
                "iomark suite s3-get --endpoint http://127.0.0.1:8333 --bucket bench --size=64m",
                "GETs of 1 MiB and mixed-size objects from a bucket the run creates and removes",
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
