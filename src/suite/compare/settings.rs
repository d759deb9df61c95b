//! Before any verdict: did both sides measure the same thing? The
//! defining settings of every run are compared with those of the first
//! base run:
//!
//! - per test: the job options that change the I/O (engine, direct, block
//!   size, depth, jobs, rate limits, …; every option given except those in
//!   `history::run::NOT_DEFINING`: names, paths, run time, logging);
//! - per run: the tool and its version, the target's device model and
//!   filesystem.
//!
//! A difference makes the comparison "not comparable" (exit 3) unless
//! `--allow-different`. Other differences in the environment (host,
//! kernel, firmware, serial, mount options) are what a comparison is
//! usually about (a new kernel, a firmware update): they are shown, never
//! blocking.

use std::collections::BTreeMap;

use crate::history::Run;

/// One setting that differs between the reference run and another.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    /// A test's key, or "run" for run-wide settings.
    pub scope: String,
    pub key: String,
    /// The reference's value (None: not set).
    pub base: Option<String>,
    pub other: Option<String>,
    /// Where the other value comes from ("new: b.json", "base: #3").
    pub runs: Vec<String>,
}

fn run_settings(r: &Run) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    m.insert(
        "tool".into(),
        format!("{} {}", r.tool, r.version).trim().into(),
    );
    if !r.target.model.is_empty() || !r.target.device.is_empty() {
        m.insert("device".into(), r.device_shown());
    }
    if !r.target.fs_type.is_empty() {
        m.insert("filesystem".into(), r.target.fs_type.clone());
    }
    m
}

/// Context that may differ without blocking: (name, value).
fn context(r: &Run) -> Vec<(&'static str, String)> {
    vec![
        ("host", r.host.clone()),
        ("kernel", r.kernel.clone()),
        ("firmware", r.target.firmware.clone()),
        ("serial", r.target.serial.clone()),
        ("mount options", r.target.mount_options.clone()),
    ]
}

fn diff_maps(
    scope: &str,
    a: &BTreeMap<String, String>,
    b: &BTreeMap<String, String>,
    run: &str,
    out: &mut Vec<Difference>,
) {
    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for k in keys {
        let (x, y) = (a.get(k), b.get(k));
        if x == y {
            continue;
        }
        let d = Difference {
            scope: scope.to_string(),
            key: k.clone(),
            base: x.cloned(),
            other: y.cloned(),
            runs: vec![run.to_string()],
        };
        match out.iter_mut().find(|e| {
            e.scope == d.scope && e.key == d.key && e.base == d.base && e.other == d.other
        }) {
            Some(e) => {
                if !e.runs.contains(&d.runs[0]) {
                    e.runs.push(d.runs[0].clone());
                }
            }
            None => out.push(d),
        }
    }
}

/// The defining settings in which any run differs from the first base
/// run (for the tests it has in common with it).
pub fn differences(base: &[Run], new: &[Run]) -> Vec<Difference> {
    let mut out = Vec::new();
    let Some(reference) = base.first() else {
        return out;
    };
    let sides = base
        .iter()
        .skip(1)
        .map(|r| ("base", r))
        .chain(new.iter().map(|r| ("new", r)));
    for (side, r) in sides {
        let who = format!("{side}: {}", r.source);
        // The device and filesystem are compared when both runs know
        // them (fio's own JSON says nothing of either).
        let (mut a, mut b) = (run_settings(reference), run_settings(r));
        for k in ["device", "filesystem"] {
            if !(a.contains_key(k) && b.contains_key(k)) {
                a.remove(k);
                b.remove(k);
            }
        }
        diff_maps("run", &a, &b, &who, &mut out);
        for t in &reference.tests {
            if let Some(o) = r.test(&t.key) {
                diff_maps(&t.key, &t.settings, &o.settings, &who, &mut out);
            }
        }
    }
    out
}

/// Environment differences that do not block: "kernel: A → B".
pub fn context_differences(base: &[Run], new: &[Run]) -> Vec<String> {
    let mut out = Vec::new();
    let all: Vec<&Run> = base.iter().chain(new).collect();
    let Some(first) = all.first() else {
        return out;
    };
    for (i, (name, v)) in context(first).into_iter().enumerate() {
        let mut values = vec![v];
        for r in &all[1..] {
            let x = context(r).swap_remove(i).1;
            if !values.contains(&x) {
                values.push(x);
            }
        }
        if values.len() > 1 {
            let shown: Vec<String> = values
                .iter()
                .map(|v| {
                    if v.is_empty() {
                        "(unknown)".into()
                    } else {
                        v.clone()
                    }
                })
                .collect();
            out.push(format!("{name}: {}", shown.join(" | ")));
        }
    }
    out
}

/// The differences as a diff: per scope, `-` the reference's value and
/// `+` the other's, with the runs that have it.
pub fn render_diff(diffs: &[Difference], reference: &str) -> String {
    // Names and values as read back from files, shown escaped.
    use crate::job::error::printable;
    let mut s = format!("--- {} (the reference)\n", printable(reference));
    let mut scopes: Vec<&str> = Vec::new();
    for d in diffs {
        if !scopes.contains(&d.scope.as_str()) {
            scopes.push(&d.scope);
        }
    }
    let shown = |k: &str, v: &Option<String>| match v {
        Some(v) => format!("{}={}", printable(k), printable(v)),
        None => format!("{} (not set)", printable(k)),
    };
    for scope in scopes {
        if scope == "run" {
            s.push_str("@@ every test\n");
        } else {
            s.push_str(&format!("@@ test {}\n", printable(scope)));
        }
        for d in diffs.iter().filter(|d| d.scope == scope) {
            s.push_str(&format!("- {}\n", shown(&d.key, &d.base)));
            s.push_str(&format!(
                "+ {}    ({})\n",
                shown(&d.key, &d.other),
                printable(&d.runs.join(", "))
            ));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{TargetInfo, TestRun};

    fn run(src: &str, tool: &str, rate: Option<&str>) -> Run {
        let mut settings: BTreeMap<String, String> = [("bs".to_string(), "4k".to_string())].into();
        if let Some(r) = rate {
            settings.insert("rate_iops".into(), r.into());
        }
        Run {
            source: src.into(),
            tool: tool.into(),
            version: "1".into(),
            kernel: format!("k-{src}"),
            target: TargetInfo {
                model: "M".into(),
                fs_type: "ext4".into(),
                ..TargetInfo::default()
            },
            tests: vec![TestRun {
                key: "a/read".into(),
                settings,
                ..TestRun::default()
            }],
            ..Run::default()
        }
    }

    #[test]
    fn a_rate_limit_and_another_tool_are_named() {
        let base = [run("a1", "iomark", None), run("a2", "iomark", None)];
        let new = [run("b1", "fio", Some("400"))];
        let d = differences(&base, &new);
        assert_eq!(d.len(), 2, "{d:?}");
        assert!(d.iter().any(|x| x.key == "rate_iops"
            && x.base.is_none()
            && x.other.as_deref() == Some("400")));
        assert!(d
            .iter()
            .any(|x| x.key == "tool" && x.other.as_deref() == Some("fio 1")));
        let text = render_diff(&d, "base: a1");
        assert!(
            text.contains("- rate_iops (not set)\n+ rate_iops=400    (new: b1)"),
            "{text}"
        );
        assert!(text.contains("@@ test a/read"), "{text}");
        assert!(differences(&base, &[run("b", "iomark", None)]).is_empty());
        // An unknown device is no difference; another one is.
        let mut unknown = run("c", "iomark", None);
        unknown.target = TargetInfo::default();
        assert!(differences(&base, &[unknown.clone()]).is_empty());
        unknown.target.model = "N".into();
        assert_eq!(differences(&base, &[unknown])[0].key, "device");
        // The kernel differs: shown, not blocking.
        assert_eq!(context_differences(&base, &[])[0], "kernel: k-a1 | k-a2");
    }
}
