//! The job language end to end: argv and job files become the jobs a user
//! expects (globals, sections, includes, variables, keywords, command-line
//! forms), `--showcmd` round-trips, help output, and the option echo in
//! the JSON report.

use std::path::Path;

use iomark::cli::{self, Command};
use iomark::job::spec::{BlockSizes, JobSpec, RwPattern};
use iomark::job::value::SizeOrPercent;
use iomark::job::{build_jobs, JobList, JobSources};

use crate::common::*;

fn sources(args: &[&str]) -> Result<JobSources, String> {
    let argv = args.iter().map(|a| (*a).into()).collect();
    match cli::parse(argv)? {
        Command::Run(run) => Ok(run.sources),
        other => panic!("not a run: {other:?}"),
    }
}

fn jobs(args: &[&str]) -> Result<JobList, String> {
    iomark::workload::checked_jobs(&sources(args)?).map_err(|e| e.to_string())
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn bs(job: &JobSpec) -> u64 {
    match &job.io.bs[0] {
        BlockSizes::Range { lo, .. } => *lo,
        other => panic!("unexpected {other:?}"),
    }
}

fn names(list: &JobList) -> Vec<&str> {
    list.jobs.iter().map(|j| j.name.as_str()).collect()
}

#[test]
fn each_global_section_applies_to_the_jobs_below_it() {
    let dir = tempdir();
    let f = write(
        dir.path(),
        "g.fio",
        "[global]\nbs=8k\nrw=randread\n[a]\n[global]\nbs=16k\n[b]\n[c]\nbs=32k\n",
    );
    let list = jobs(&[&f]).unwrap();
    assert_eq!(names(&list), ["a", "b", "c"]);
    let sizes: Vec<u64> = list.jobs.iter().map(bs).collect();
    assert_eq!(sizes, [8192, 16384, 32768]);
    assert!(list.jobs.iter().all(|j| j.io.rw == RwPattern::RandRead));
    // The echo holds each global once, with its last value.
    assert_eq!(
        list.global_options,
        [
            ("bs".into(), "16k".into()),
            ("rw".into(), "randread".into())
        ]
    );
    assert_eq!(list.jobs[2].job_options, [("bs".into(), "32k".into())]);
}

#[test]
fn section_selects_file_sections_and_command_line_jobs() {
    let dir = tempdir();
    let f = write(dir.path(), "s.fio", "[global]\nbs=8k\n[a]\n[b]\n[c]\n");
    let list = jobs(&["--section=c", "--section=a", &f]).unwrap();
    assert_eq!(names(&list), ["a", "c"]);
    assert!(list.jobs.iter().all(|j| bs(j) == 8192));
    let list = jobs(&["--section=b", "--name=cli", "--size=1m", &f]).unwrap();
    assert_eq!(names(&list), ["b"]);
    let e = jobs(&["--section=zz", &f]).unwrap_err();
    assert_eq!(e, "no job matches --section=zz");
}

#[test]
fn includes_nest_relative_to_the_including_file() {
    let dir = tempdir();
    write(dir.path(), "inc/common.fio", "bs=16k\ninclude more.fio\n");
    write(dir.path(), "inc/more.fio", "; nested\niodepth=4\n");
    let f = write(
        dir.path(),
        "main.fio",
        "[global]\ninclude inc/common.fio\n[job]\nrw=write\n",
    );
    let list = jobs(&[&f]).unwrap();
    assert_eq!(bs(&list.jobs[0]), 16384);
    assert_eq!(list.jobs[0].io.iodepth, 4);
}

#[test]
fn environment_variables_and_keywords_expand() {
    let dir = tempdir();
    std::env::set_var("IOMARK_JL_BS", "64k");
    let f = write(
        dir.path(),
        "v.fio",
        "[j]\nbs=${IOMARK_JL_BS}\nnumjobs=$ncpus\nsize=8*$mb_memory\nfilesize=$pagesize\ndescription=a${IOMARK_JL_UNSET}b\n",
    );
    let list = jobs(&[&f]).unwrap();
    let j = &list.jobs[0];
    let ncpus = std::thread::available_parallelism().unwrap().get() as u32;
    assert_eq!(bs(j), 65536);
    assert_eq!(j.ctl.numjobs, ncpus);
    assert_eq!(j.description, "ab");
    let page = j.file.filesize.unwrap().0;
    assert!(page.is_power_of_two() && page >= 4096, "{page}");
    match j.file.size {
        Some(SizeOrPercent::Bytes(n)) => assert!(n > 8 && n % 8 == 0, "{n}"),
        other => panic!("{other:?}"),
    }
    // The echo shows values after expansion, as fio's does.
    assert!(j.job_options.contains(&("bs".into(), "64k".into())));
}

#[test]
fn an_unset_variable_is_named_when_its_value_is_rejected() {
    let dir = tempdir();
    write(dir.path(), "u.fio", "[j]\nrw=${IOMARK_JL_NOT_SET}\n");
    let o = run_in(dir.path(), &["--parse-only", "u.fio"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "iomark: u.fio:2: option 'rw' needs a value (one of a set of words), not an empty one (environment variable IOMARK_JL_NOT_SET is not set)\n"
    );
}

#[test]
fn command_line_forms() {
    // Options before the first --name are global; values with or without
    // '='; switches take a value only with '='; bare switches mean on.
    let list = jobs(&[
        "--bs",
        "8k",
        "--time_based",
        "--name=a",
        "--rw",
        "write",
        "--name",
        "b",
        "--group_reporting=0",
        "--iodepth=4",
    ])
    .unwrap();
    assert_eq!(names(&list), ["a", "b"]);
    assert!(list.jobs.iter().all(|j| bs(j) == 8192 && j.time.time_based));
    assert_eq!(list.jobs[0].io.rw, RwPattern::Write);
    assert_eq!(list.jobs[1].io.iodepth, 4);
    assert!(!list.jobs[1].stat.group_reporting);
    // A switch does not swallow the next argument: "1" is a job file here.
    let e = jobs(&["--name=a", "--time_based", "1"]).unwrap_err();
    assert_eq!(e, "cannot read job file '1': no such file");
    // Aliases are echoed under the option's canonical name.
    let list = jobs(&["--name=a", "--readwrite=randwrite", "--blocksize=4k"]).unwrap();
    assert_eq!(
        list.jobs[0].job_options,
        [
            ("name".into(), "a".into()),
            ("rw".into(), "randwrite".into()),
            ("bs".into(), "4k".into())
        ]
    );
}

#[test]
fn a_job_named_global_on_the_command_line_is_a_global_section() {
    let list = jobs(&["--name=x", "--name=global", "--bs=8k", "--name=y"]).unwrap();
    assert_eq!(names(&list), ["x", "y"]);
    assert_eq!(bs(&list.jobs[0]), 4096);
    assert_eq!(bs(&list.jobs[1]), 8192);
}

#[test]
fn job_files_mix_with_command_line_options() {
    let dir = tempdir();
    let a = write(dir.path(), "a.fio", "[global]\nrw=read\n[fa]\n");
    let b = write(dir.path(), "b.fio", "[fb]\nbs=16k\n");
    let list = jobs(&[&a, "--bs=8k", "--name=cli", "--iodepth=2", &b]).unwrap();
    // Command-line jobs first, then each file; later files start a group.
    assert_eq!(names(&list), ["cli", "fa", "fb"]);
    assert_eq!(
        list.jobs.iter().map(bs).collect::<Vec<_>>(),
        [8192, 8192, 16384]
    );
    assert_eq!(list.jobs[0].io.iodepth, 2);
    assert_eq!(list.jobs[1].io.iodepth, 1);
    // A file's globals stay in that file.
    assert_eq!(list.jobs[2].io.rw, RwPattern::Read);
    assert!(list.jobs[1].ctl.stonewall && list.jobs[2].ctl.stonewall);
    assert!(!list.jobs[0].ctl.stonewall);
}

/// Splits a command line the way a POSIX shell would for the quoting
/// `--showcmd` uses (single quotes, `'\''`).
fn shell_split(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    cur.push(q);
                }
            }
            '\\' => {
                in_word = true;
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            ' ' => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            _ => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    out
}

/// The jobs as they run, without the option echo (which differs between a
/// job file section and a command-line job, as it does in fio).
fn comparable(list: &JobList) -> Vec<JobSpec> {
    list.jobs
        .iter()
        .map(|j| JobSpec {
            job_options: Vec::new(),
            set_options: Vec::new(),
            ..j.clone()
        })
        .collect()
}

fn assert_showcmd_round_trips(args: &[&str]) -> String {
    let src = sources(args).unwrap();
    let original = build_jobs(&src).unwrap();
    let line = iomark::cli::help::showcmd(&src);
    let words = shell_split(&line);
    assert_eq!(words[0], "iomark", "{line}");
    let argv: Vec<&str> = words[1..].iter().map(String::as_str).collect();
    let again = jobs(&argv).unwrap_or_else(|e| panic!("{line}: {e}"));
    assert_eq!(comparable(&original), comparable(&again), "{line}");
    line
}

#[test]
fn showcmd_output_parses_back_to_the_same_jobs() {
    let dir = tempdir();
    let one = write(
        dir.path(),
        "one.fio",
        "[global]\nbs=8k\ntime_based\nruntime=2\n[w]\nrw=write\nfilename=/tmp/a\\:b\n\
         description=two words 'quoted'\n[global]\nkb_base=1000\nsize=1m\n[r]\nrw=randread\nstonewall\n",
    );
    let line = assert_showcmd_round_trips(&[&one]);
    assert!(line.contains("--name=global"), "{line}");
    assert_showcmd_round_trips(&["--iodepth=8", &one]);
    assert_showcmd_round_trips(&["--section=r", &one]);
    // Several files: each file's globals are repeated in its jobs. (A
    // kb_base that changes between global sections is the documented
    // exception, so this file has none.)
    let three = write(
        dir.path(),
        "three.fio",
        "[global]\nbs=8k\n[w]\nrw=write\n[global]\nsize=1m\n[r]\nrw=randread\n",
    );
    let two = write(dir.path(), "two.fio", "[x]\nrw=read\n[y]\nstonewall=0\n");
    let line = assert_showcmd_round_trips(&[&three, &two, "--name=c", "--bs=64k"]);
    assert!(line.contains("--stonewall"), "{line}");
    assert_showcmd_round_trips(&[
        "--name=c",
        "--rw=randrw",
        "--rwmixread=70",
        "--name=global",
        "--bs=4k,8k",
        "--name=d",
    ]);
}

#[test]
fn cmdhelp_and_enghelp() {
    let dir = tempdir();
    let o = run_in(dir.path(), &["--cmdhelp"]);
    assert!(o.status.success());
    let all = stdout(&o);
    assert!(all.contains("I/O type, sizes and offsets:"), "{all}");
    assert!(all
        .lines()
        .any(|l| l.trim_start().starts_with("trim_percentage ") && l.ends_with("[not supported]")));
    let o = run_in(dir.path(), &["--cmdhelp=blocksize"]);
    assert!(o.status.success());
    let bs = stdout(&o);
    assert!(
        bs.contains("bs: Block size") && bs.contains("default: 4096"),
        "{bs}"
    );
    let o = run_in(dir.path(), &["--cmdhelp=trim_backlog"]);
    assert!(o.status.success());
    assert!(
        stdout(&o).contains(
            "status: not supported by iomark: iomark does not trim written blocks to check they read back as zeroes"
        ),
        "{}",
        stdout(&o)
    );
    let o = run_in(dir.path(), &["--cmdhelp=iodpeth"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "iomark: unknown option 'iodpeth' (did you mean 'iodepth'?)\n"
    );
    let o = run_in(dir.path(), &["--enghelp"]);
    assert!(stdout(&o).contains("\tpsync\n"), "{}", stdout(&o));
    let o = run_in(dir.path(), &["--enghelp=net"]);
    assert!(o.status.success());
    let net = stdout(&o);
    assert!(
        net.starts_with("ioengine 'net' is not supported by iomark"),
        "{net}"
    );
    assert!(net.contains("\nport "), "{net}");
    let o = run_in(dir.path(), &["--enghelp=nosuchengine"]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn json_report_echoes_canonical_names_and_values_as_written() {
    let dir = tempdir();
    write(
        dir.path(),
        "e.fio",
        "[global]\nioengine=null\nblocksize=4k\nsize=(1m/2)\n[global]\nbs=8k\n[echo]\nreadwrite=read\ntime_based=0\nrw=read\ngroup_reporting\n",
    );
    let j = run_json(dir.path(), &["e.fio"]);
    let g = j["global options"].as_object().unwrap();
    let g: Vec<(&str, &str)> = g
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str().unwrap()))
        .collect();
    assert_eq!(g, [("ioengine", "null"), ("bs", "8k"), ("size", "(1m/2)")]);
    let o = j["jobs"][0]["job options"].as_object().unwrap();
    let o: Vec<(&str, &str)> = o
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str().unwrap()))
        .collect();
    assert_eq!(o, [("rw", "read"), ("time_based", "0")]);
    assert_eq!(j["jobs"][0]["read"]["io_bytes"], 524_288);
}
