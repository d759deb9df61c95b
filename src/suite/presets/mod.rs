//! Presets: named, documented job sets, one file per preset. A preset is
//! data — its tests and their fio options — and `render` turns it into a
//! fio job file, which is exactly what `iomark suite NAME` parses and runs
//! (and what `--print-jobfile` shows), so the same file runs under fio.
//!
//! Presets own no running logic; `suite::runner` runs the job file.

use crate::job::EngineKind;
pub use crate::results::units::{size_text, time_text};

pub mod ars;
pub mod crystaldiskmark;
pub mod patterns;
pub mod s3;
pub mod server_mix;

/// One test of a preset: a job section.
#[derive(Clone, Copy, Debug)]
pub struct PresetTest {
    /// Section name in the job file (also the job name in results).
    pub section: &'static str,
    /// Short label for tables (e.g. "SEQ1M Q8T1").
    pub label: &'static str,
    /// fio options of this test, in order.
    pub options: &'static [(&'static str, &'static str)],
}

#[derive(Clone, Copy, Debug)]
pub struct Preset {
    pub name: &'static str,
    /// One line for `suite --list`.
    pub summary: &'static str,
    /// A few lines on what it measures and why; written into the job file.
    pub about: &'static str,
    /// A file all tests share (None: each job uses fio's default names).
    pub shared_file: Option<&'static str>,
    /// Defaults that `--size`, `--runtime`, `--passes` and `--warmup` change.
    pub size: &'static str,
    pub runtime_s: u64,
    pub passes: u32,
    pub warmup_s: u64,
    /// Whether the preset uses direct I/O (when the filesystem allows it).
    pub direct: bool,
    /// Engines to prefer, in order, when the kernel allows them.
    pub engines: &'static [EngineKind],
    /// Extra [global] options.
    pub global: &'static [(&'static str, &'static str)],
    pub tests: &'static [PresetTest],
}

pub const ALL: &[&Preset] = &[
    &crystaldiskmark::DEFAULT,
    &crystaldiskmark::NVME,
    &ars::ARS,
    &patterns::PATTERNS,
    &server_mix::SERVER_MIX,
    &s3::S3_PUT,
    &s3::S3_GET,
    &s3::S3_MIXED,
    &s3::S3_LIST,
    &s3::S3_STAT,
];

impl Preset {
    /// Whether the preset runs against an object store (`s3::render`,
    /// `--endpoint` and `--bucket`) rather than files in a directory.
    pub fn is_object(&self) -> bool {
        self.engines.contains(&EngineKind::Http)
    }

    /// The preset's tests as the runner takes them.
    pub fn suite_tests(&self) -> Vec<super::runner::SuiteTest> {
        self.tests
            .iter()
            .map(|t| super::runner::SuiteTest {
                section: t.section.into(),
                label: t.label.into(),
            })
            .collect()
    }
}

pub fn find(name: &str) -> Option<&'static Preset> {
    ALL.iter().copied().find(|p| p.name == name)
}

/// Values that replace a preset's defaults when rendering its job file.
#[derive(Clone, Debug, Default)]
pub struct Render {
    /// Directory for the test files (None: the current directory).
    pub directory: Option<String>,
    pub ioengine: String,
    pub direct: bool,
    /// fio size text (e.g. "1g"); replaces every test's own size.
    pub size: Option<String>,
    /// fio time text (e.g. "2s"); replaces every test's own runtime.
    pub runtime: Option<String>,
    /// Overrides the shared file's name.
    pub file_name: Option<String>,
    /// Extra comment lines for the header.
    pub comments: Vec<String>,
}

/// Comment lines from a paragraph, wrapped at about 76 columns.
pub fn comment_block(text: &str) -> String {
    let mut out = String::new();
    for para in text.split("\n\n") {
        let mut line = String::from(";");
        for w in para.split_whitespace() {
            if line.len() + w.len() + 1 > 76 && line.len() > 1 {
                out.push_str(&line);
                out.push('\n');
                line = String::from(";");
            }
            line.push(' ');
            line.push_str(w);
        }
        out.push_str(&line);
        out.push('\n');
        out.push_str(";\n");
    }
    out
}

/// The fio job file of a preset.
pub fn render(p: &Preset, r: &Render) -> String {
    let mut head = format!("; iomark preset '{}': {}\n;\n", p.name, p.summary);
    head.push_str(&comment_block(p.about));
    head.push_str(&format!(
        "; One pass of each test. `iomark suite {}` runs a discarded warm-up pass\n\
         ; and measured passes of each section; this file also runs unchanged\n\
         ; under fio (fio leaves its test files behind; iomark removes them).\n",
        p.name
    ));
    let tests: Vec<(String, Vec<(String, String)>)> = p
        .tests
        .iter()
        .map(|t| {
            (
                t.section.to_string(),
                t.options
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            )
        })
        .collect();
    let defaults = Defaults {
        shared_file: p.shared_file,
        size: p.size,
        runtime_us: p.runtime_s * 1_000_000,
        global: p.global,
    };
    render_jobfile(&head, &defaults, &tests, r)
}

/// What a job file falls back to when `Render` does not say.
pub struct Defaults<'a> {
    pub shared_file: Option<&'a str>,
    pub size: &'a str,
    pub runtime_us: u64,
    pub global: &'a [(&'a str, &'a str)],
}

/// A job file: the header comment, a [global] section (engine, direct
/// I/O, directory, shared file, size, runtime, time_based,
/// group_reporting, lat_percentiles, stonewall — so each section is one
/// test reported as one job) and one section per test. Options the
/// `Render` overrides are left out of the sections.
pub fn render_jobfile(
    head: &str,
    d: &Defaults,
    tests: &[(String, Vec<(String, String)>)],
    r: &Render,
) -> String {
    let mut out = String::from(head);
    for c in &r.comments {
        out.push_str(&format!("; {c}\n"));
    }
    out.push_str("\n[global]\n");
    out.push_str(&format!("ioengine={}\n", r.ioengine));
    out.push_str(&format!("direct={}\n", u8::from(r.direct)));
    if let Some(dir) = &r.directory {
        out.push_str(&format!("directory={dir}\n"));
    }
    if let Some(f) = r.file_name.as_deref().or(d.shared_file) {
        out.push_str(&format!("filename={f}\n"));
    }
    let size = r.size.clone().unwrap_or_else(|| d.size.to_string());
    out.push_str(&format!("size={size}\n"));
    let runtime = r.runtime.clone().unwrap_or_else(|| time_text(d.runtime_us));
    out.push_str(&format!("runtime={runtime}\n"));
    out.push_str("time_based\n");
    out.push_str("group_reporting\n");
    out.push_str("lat_percentiles=1\n");
    out.push_str("stonewall\n");
    for (k, v) in d.global {
        out.push_str(&format!("{k}={v}\n"));
    }
    for (section, options) in tests {
        out.push_str(&format!("\n[{section}]\n"));
        for (k, v) in options {
            let overridden =
                (k == "size" && r.size.is_some()) || (k == "runtime" && r.runtime.is_some());
            if !overridden {
                out.push_str(&format!("{k}={v}\n"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_documented() {
        let mut names: Vec<&str> = ALL.iter().map(|p| p.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ALL.len());
        for p in ALL {
            assert!(!p.summary.is_empty() && p.about.len() > 80, "{}", p.name);
            assert!(!p.tests.is_empty());
            let mut s: Vec<&str> = p.tests.iter().map(|t| t.section).collect();
            s.sort();
            s.dedup();
            assert_eq!(s.len(), p.tests.len(), "{}: duplicate sections", p.name);
        }
    }

    #[test]
    fn every_preset_renders_a_job_file_iomark_accepts() {
        // Object presets render through `s3::render` (tested there).
        for p in ALL.iter().filter(|p| !p.is_object()) {
            let text = render(
                p,
                &Render {
                    ioengine: "psync".into(),
                    direct: true,
                    size: Some("4m".into()),
                    runtime: Some("1s".into()),
                    ..Render::default()
                },
            );
            let sections =
                crate::job::jobfile::parse_jobfile_text(&text, std::path::Path::new("p.fio"))
                    .unwrap_or_else(|e| panic!("{}: {e}\n{text}", p.name));
            let src = crate::job::JobSources {
                files: vec![("p.fio".into(), sections)],
                ..Default::default()
            };
            let list = crate::workload::checked_jobs(&src)
                .unwrap_or_else(|e| panic!("{}: {e}\n{text}", p.name));
            assert_eq!(list.jobs.len(), p.tests.len(), "{}", p.name);
            for j in &list.jobs {
                assert_eq!(j.time.runtime_us, 1_000_000, "{}", p.name);
                assert!(!text.contains("size=4g"), "{}: size not overridden", p.name);
            }
        }
    }

    #[test]
    fn fio_units() {
        assert_eq!(size_text(1 << 30), "1g");
        assert_eq!(size_text(3 << 20), "3m");
        assert_eq!(size_text(1000), "1000");
        assert_eq!(time_text(2_000_000), "2s");
        assert_eq!(time_text(500_000), "500ms");
    }
}
