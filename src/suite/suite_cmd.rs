//! `iomark suite`: list the presets, print one as a fio job file, or run
//! it (warm-up and measured passes per test, table, JSON and HTML).

use serde_json::json;

use super::flags::RunFlags;
use super::presets::{self, Preset};

fn list() -> String {
    let mut s = String::new();
    for p in presets::ALL {
        s.push_str(&format!("{}\n  {}\n", p.name, p.summary));
        if p.is_object() {
            let set = if presets::s3::counts_objects(p) {
                format!(
                    "{} objects of 4KiB (--objects N)",
                    presets::s3::DEFAULT_OBJECTS
                )
            } else {
                format!("{} per object set", p.size)
            };
            s.push_str(&format!(
                "  defaults: {set}, {} s per test (prep tests write their set once), \
                 {} pass(es), http engine, 8 requests in flight; needs --endpoint URL --bucket NAME\n",
                p.runtime_s, p.passes
            ));
            for t in p.tests {
                let opts: Vec<String> = t
                    .options
                    .iter()
                    .map(|(k, v)| match (*k, v.is_empty()) {
                        ("object_set", _) => format!("objects={v}"),
                        (k, true) => k.to_string(),
                        (k, false) => format!("{k}={v}"),
                    })
                    .collect();
                s.push_str(&format!("    {:<28} {}\n", t.section, opts.join(" ")));
            }
            s.push('\n');
            continue;
        }
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
    let code = if preset.is_object() {
        run_object(preset, &opts, &launch)
    } else {
        run_preset(preset, opts.path.as_deref(), &opts.run, &launch)
    };
    launch.end(code)
}

/// `--endpoint`: (host[:port], https).
pub fn endpoint(v: &str) -> Result<(String, bool), String> {
    let shown = crate::job::value::excerpt(v);
    let (https, rest) = if let Some(r) = v.strip_prefix("https://") {
        (true, r)
    } else if let Some(r) = v.strip_prefix("http://") {
        (false, r)
    } else {
        return Err(format!(
            "--endpoint '{shown}' must start with http:// or https:// (e.g. http://127.0.0.1:8333)"
        ));
    };
    let host = rest.strip_suffix('/').unwrap_or(rest);
    let bad = |c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']'));
    if host.is_empty() || host.contains(bad) {
        return Err(format!(
            "--endpoint '{shown}' must be http(s)://HOST[:PORT], with no path (the bucket is --bucket)"
        ));
    }
    Ok((host.to_string(), https))
}

/// `--bucket`: an S3 bucket name (3 to 63 lowercase letters, digits,
/// dots and hyphens, beginning and ending with a letter or digit).
pub fn bucket_name(v: &str) -> Result<(), String> {
    let ok = (3..=63).contains(&v.len())
        && v.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '-')
        && v.starts_with(|c: char| c.is_ascii_alphanumeric())
        && v.ends_with(|c: char| c.is_ascii_alphanumeric());
    if ok {
        Ok(())
    } else {
        Err(format!(
            "--bucket '{}' is not an S3 bucket name (3 to 63 of a-z, 0-9, '.' and '-', beginning and ending with a letter or digit)",
            crate::job::value::excerpt(v)
        ))
    }
}

/// The bucket and prefix a run owns, removed when the run is over
/// (also on an early return or a panic): every object under the prefix
/// that carries iomark's mark, then the bucket if the run created it.
struct Owned {
    client: crate::engine::http::Client,
    bucket: String,
    prefix: String,
    created: bool,
    done: bool,
}

impl Owned {
    /// Removes what the run wrote; false (after one line on standard
    /// error saying what is left) when something stays.
    fn remove(&mut self) -> bool {
        self.done = true;
        let (b, p) = (&self.bucket, &self.prefix);
        let left = match self.client.remove_prefix(b, &format!("{p}/")) {
            Ok(r) if r.left == 0 => None,
            Ok(r) => Some(format!(
                "{} object(s) under /{b}/{p}/ ({})",
                r.left,
                r.why.unwrap_or_default()
            )),
            Err(e) => Some(format!("objects under /{b}/{p}/ ({e})")),
        };
        let line = match (left, self.created) {
            (None, false) => return true,
            (None, true) => match self.client.delete_bucket(b) {
                Ok(()) => return true,
                Err(e) => format!("left bucket /{b}: {e}"),
            },
            (Some(what), false) => format!("left {what}"),
            (Some(what), true) => format!("left bucket /{b} with {what}"),
        };
        crate::run::output::stderr_line(&format!("iomark suite: {line}"));
        false
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        if !self.done {
            self.remove();
        }
    }
}

/// Checks the bucket and takes it: refuses an existing bucket unless
/// `use_existing` (and a missing one if so), else creates it.
fn claim(
    host: &str,
    https: bool,
    bucket: &str,
    prefix: &str,
    use_existing: bool,
) -> Result<Owned, String> {
    let mut spec = crate::job::JobSpec::default();
    spec.io.ioengine = crate::job::EngineKind::Http;
    spec.engine.http.mode = crate::job::spec::HttpMode::S3;
    spec.engine.http.host = host.to_string();
    if https {
        spec.engine.http.https = crate::job::spec::Https::On;
    }
    let client = crate::engine::http::Client::new(&spec)?;
    let exists = client.bucket_exists(bucket)?;
    match (exists, use_existing) {
        (true, false) => {
            return Err(format!(
                "bucket '{bucket}' already exists: the run creates a bucket of its own and removes it at the end; give a new name, or --use-existing-bucket to run in it under a prefix of the run's own (only those objects are written and removed)"
            ))
        }
        (false, true) => {
            return Err(format!(
                "bucket '{bucket}' does not exist (--use-existing-bucket uses one that does; without it the run creates it)"
            ))
        }
        (false, false) => {
            client.create_bucket(bucket)?;
        }
        (true, true) => {}
    }
    Ok(Owned {
        client,
        bucket: bucket.to_string(),
        prefix: prefix.to_string(),
        created: !exists,
        done: false,
    })
}

/// Runs an object preset: checks the bucket (refusing an existing one
/// unless told), creates it, runs the job file, then removes what the run
/// wrote and the bucket it created.
fn run_object(preset: &'static Preset, opts: &SuiteOpts, launch: &crate::launch::Launch) -> i32 {
    let fail = |m: &str| super::fail_on(launch, "suite", m);
    if launch.ranks().is_some() {
        return fail("the object presets run on one host, not under MPI (run a job file of the http engine on many ranks instead)");
    }
    let (Some(ep), Some(bucket)) = (opts.endpoint.as_deref(), opts.bucket.as_deref()) else {
        return fail("the object presets need --endpoint and --bucket");
    };
    let (host, https) = match endpoint(ep) {
        Ok(e) => e,
        Err(e) => return fail(&e),
    };
    let flags = &opts.run;
    let store = presets::s3::Store {
        host: host.clone(),
        https,
        bucket: bucket.to_string(),
        prefix: format!("iomark-{}-{}", super::local_stamp(), std::process::id()),
    };
    // s3-list and s3-stat: the size is --objects objects of 4 KiB.
    let size = if presets::s3::counts_objects(preset) {
        let n = opts.objects.unwrap_or(presets::s3::DEFAULT_OBJECTS);
        Some(n * presets::s3::COUNTED_OBJECT)
    } else {
        flags.size
    };
    let jobfile = presets::s3::render(
        preset,
        &presets::Render {
            size: size.map(presets::size_text),
            runtime: flags.runtime_us.map(presets::time_text),
            ..presets::Render::default()
        },
        &store,
    );
    if flags.print_jobfile {
        return super::print_on(launch, "suite", &jobfile);
    }
    if flags.engine.as_deref().is_some_and(|e| e != "http") {
        return fail("the object presets run with the http engine (--engine does not apply)");
    }
    if flags.buffered {
        return fail(
            "--buffered does not apply to the object presets (objects have no page cache here)",
        );
    }
    let mut owned = match claim(
        &host,
        https,
        bucket,
        &store.prefix,
        opts.use_existing_bucket,
    ) {
        Ok(o) => o,
        Err(e) => return fail(&e),
    };
    let exists = !owned.created;
    let shown = format!("{}://{host}/{bucket}", if https { "https" } else { "http" });
    let target = super::Target {
        path: std::path::PathBuf::from(&shown),
        shown,
        directory: None,
        engine: super::probe::EngineChoice {
            kind: crate::job::EngineKind::Http,
            note: None,
        },
        direct: false,
        notes: vec![format!(
            "objects under /{bucket}/{}/; {}",
            store.prefix,
            if exists {
                "the bucket existed and is kept"
            } else {
                "the bucket is the run's own and is removed at the end"
            }
        )],
        warnings: Vec::new(),
    };
    let code = run_bench(preset, jobfile, target, size, flags, launch);
    if owned.remove() {
        code
    } else {
        code.max(1)
    }
}

fn run_preset(
    preset: &'static Preset,
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
    run_bench(preset, jobfile, target, flags.size, flags, launch)
}

/// Runs a preset's job file on its target with the values in force
/// (`size`: the size the job file was given, None: the preset's).
fn run_bench(
    preset: &'static Preset,
    jobfile: String,
    target: super::Target,
    size: Option<u64>,
    flags: &RunFlags,
    launch: &crate::launch::Launch,
) -> i32 {
    let size = size
        .map(presets::size_text)
        .unwrap_or_else(|| preset.size.to_string());
    let bench = super::PresetBench {
        kind: "suite",
        title: format!("preset '{}'", preset.name),
        preset,
        jobfile,
        target,
        size: ("size", json!(size)),
        runtime_us: flags.runtime_us.unwrap_or(preset.runtime_s * 1_000_000),
        passes: flags.passes.unwrap_or(preset.passes),
        warmup_us: flags.warmup_us.unwrap_or(preset.warmup_s * 1_000_000),
        launch,
    };
    super::run_preset_bench(bench, flags)
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
    /// `--endpoint`: the S3 endpoint of an object preset.
    pub endpoint: Option<String>,
    /// `--bucket`: its bucket.
    pub bucket: Option<String>,
    /// `--use-existing-bucket`: run in an existing bucket.
    pub use_existing_bucket: bool,
    /// `--objects`: how many objects `s3-list` and `s3-stat` prepare.
    pub objects: Option<u64>,
}
