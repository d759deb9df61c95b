//! Job description and control: names, clones, groups, dependencies,
//! units, CPU placement and priority.

use super::{boolean, opt, uint, uint_in, Category::*, Kind, OptDef};
use crate::job::spec::{CpusPolicy, ExitWhat};
use crate::job::value::{parse_choice, parse_index_list};

pub const OPTS: &[OptDef] = &[
    opt(
        "name",
        Job,
        Kind::Str,
        "Name of the job (starts a new job on the command line)",
        |s, v| {
            if v.trim().is_empty() {
                return Err("the job name must not be empty".into());
            }
            s.name = v.to_string();
            Ok(())
        },
    ),
    opt(
        "description",
        Job,
        Kind::Str,
        "Free-text description printed with the job",
        |s, v| {
            s.description = v.to_string();
            Ok(())
        },
    ),
    opt(
        "numjobs",
        Job,
        Kind::Int,
        "Number of clones of this job, each doing the same workload (all jobs together, clones counted, at most 4096)",
        |s, v| {
            s.ctl.numjobs = uint_in(v, 1, crate::job::MAX_JOBS.into())? as u32;
            Ok(())
        },
    )
    .default("1"),
    opt(
        "stonewall",
        Job,
        Kind::Switch,
        "Wait for all earlier jobs to finish before starting; starts a new reporting group",
        |s, v| {
            s.ctl.stonewall = boolean(v)?;
            Ok(())
        },
    )
    .alias(&["wait_for_previous"]),
    opt(
        "new_group",
        Job,
        Kind::Switch,
        "Start a new reporting group with this job",
        |s, v| {
            s.ctl.new_group = boolean(v)?;
            Ok(())
        },
    ),
    opt(
        "wait_for",
        Job,
        Kind::Str,
        "Start only after the named job has finished",
        |s, v| {
            s.ctl.wait_for = Some(v.trim().to_string()).filter(|n| !n.is_empty());
            Ok(())
        },
    ),
    opt(
        "exitall",
        Job,
        Kind::Switch,
        "When this job finishes, stop all other running jobs",
        |s, v| {
            s.ctl.exitall = boolean(v)?;
            Ok(())
        },
    ),
    opt(
        "exit_what",
        Job,
        Kind::Choice(&[
            ("group", "stop the jobs of the finishing job's group"),
            (
                "stonewall",
                "stop every running job; later stonewalled jobs still run",
            ),
            ("all", "stop every job, including those not started yet"),
        ]),
        "Which jobs exitall stops",
        |s, v| {
            s.ctl.exit_what = parse_choice(
                v,
                &[
                    ("group", ExitWhat::Group),
                    ("stonewall", ExitWhat::Stonewall),
                    ("all", ExitWhat::All),
                ],
            )?;
            Ok(())
        },
    )
    .default("group"),
    opt(
        "continue_on_error",
        Job,
        Kind::Choice(&[
            ("none", "stop the job at the first error"),
            ("read", "count read errors and carry on"),
            ("write", "count write errors and carry on"),
            ("io", "count read, write and sync errors and carry on"),
            ("verify", "count verify errors and carry on"),
            ("all", "count every error and carry on"),
            ("0", "same as none"),
            ("1", "same as all"),
        ]),
        "Keep running after non-fatal I/O errors (EIO, EILSEQ), counting them",
        |s, v| {
            s.ctl.continue_on_error = parse_choice(
                v,
                &[
                    ("none", "none"),
                    ("read", "read"),
                    ("write", "write"),
                    ("io", "io"),
                    ("verify", "verify"),
                    ("all", "all"),
                    ("0", "none"),
                    ("1", "all"),
                ],
            )?
            .to_string();
            Ok(())
        },
    )
    .default("none"),
    opt(
        "ignore_error",
        Job,
        Kind::Str,
        "Errors to count and carry on after, per type: READ,WRITE,VERIFY lists of errno names or numbers joined by ':' (e.g. EAGAIN,ENOSPC:122); a list replaces the default EIO:EILSEQ for its type and turns continue_on_error on for it",
        |s, v| {
            let parts: Vec<&str> = v.split(',').collect();
            if parts.len() > 3 {
                return Err(format!(
                    "expected at most 3 comma-separated lists (read,write,verify), got {}",
                    parts.len()
                ).into());
            }
            let mut lists = [None, None, None];
            for (i, part) in parts.iter().enumerate() {
                if part.trim().is_empty() {
                    continue;
                }
                let list = part
                    .split(':')
                    .map(|e| {
                        crate::job::errno::parse(e).ok_or_else(|| {
                            format!("'{}' is not an error name (like ENOSPC) or a positive number", e.trim())
                        })
                    })
                    .collect::<Result<Vec<i32>, String>>()?;
                lists[i] = Some(list);
            }
            s.ctl.ignore_error = lists;
            Ok(())
        },
    ),
    opt(
        "error_dump",
        Job,
        Kind::Bool,
        "Print every error as it happens, also those the job carries on after",
        |s, v| {
            s.ctl.error_dump = boolean(v)?;
            Ok(())
        },
    )
    .default("1"),
    opt(
        "exec_prerun",
        Job,
        Kind::Str,
        "Shell command each clone runs before it starts (output in JOBNAME.prerun.txt; a failure fails the job)",
        |s, v| {
            s.ctl.exec_prerun = Some(v.to_string()).filter(|c| !c.trim().is_empty());
            Ok(())
        },
    ),
    opt(
        "exec_postrun",
        Job,
        Kind::Str,
        "Shell command each clone runs after it ends (output in JOBNAME.postrun.txt)",
        |s, v| {
            s.ctl.exec_postrun = Some(v.to_string()).filter(|c| !c.trim().is_empty());
            Ok(())
        },
    ),
    opt(
        "flow",
        Job,
        Kind::Int,
        "Weight of this job in its flow group (0-1000; 0: no flow control): jobs sharing a flow_id issue I/O in proportion to their weights",
        |s, v| {
            s.ctl.flow = uint_in(v, 0, 1000)?;
            Ok(())
        },
    )
    .default("0"),
    opt(
        "flow_id",
        Job,
        Kind::Int,
        "Flow group of this job (see flow)",
        |s, v| {
            s.ctl.flow_id = uint_in(v, 0, u32::MAX as u64)? as u32;
            Ok(())
        },
    )
    .default("0"),
    opt(
        "flow_sleep",
        Job,
        Kind::Int,
        "Microseconds to pause when flow control holds the job back (0: yield the CPU and retry)",
        |s, v| {
            s.ctl.flow_sleep_us = uint_in(v, 0, crate::job::value::MAX_TIME_US)?;
            Ok(())
        },
    )
    .default("0"),
    opt(
        "exitall_on_error",
        Job,
        Kind::Switch,
        "When this job fails with an I/O error, stop all other running jobs",
        |s, v| {
            s.ctl.exitall_on_error = boolean(v)?;
            Ok(())
        },
    ),
    opt(
        "thread",
        Job,
        Kind::Switch,
        "Run jobs as threads (iomark always runs jobs as threads; accepted for compatibility)",
        |s, v| {
            s.ctl.thread = boolean(v)?;
            Ok(())
        },
    ),
    opt(
        "threads",
        Job,
        Kind::Int,
        "Option of fio's tiobench profile, which fio ignores in other jobs; job files write it for 'thread'. Accepted with a warning; it changes nothing (iomark always runs jobs as threads)",
        |s, v| {
            uint(v)?;
            s.ctl.threads_given = true;
            Ok(())
        },
    ),
    opt(
        "kb_base",
        Job,
        Kind::Choice(&[
            ("1024", "k means 1024 (IEC binary units)"),
            ("1000", "k means 1000 (SI decimal units)"),
        ]),
        "Unit base for k/m/g in values and for printed sizes",
        |s, v| {
            s.ctl.kb_base = match uint(v)? {
                b @ (1000 | 1024) => b,
                _ => {
                    return Err(format!(
                        "'{v}' is not a valid unit base (expected 1024 or 1000)"
                    ).into())
                }
            };
            Ok(())
        },
    )
    .default("1024")
    .early(),
    opt(
        "unit_base",
        Job,
        Kind::Choice(&[
            ("0", "auto-detect (bytes)"),
            ("8", "report in bytes"),
            ("1", "report in bits"),
        ]),
        "Report bandwidth in bytes (8) or bits (1)",
        |s, v| {
            s.ctl.unit_base = match uint(v)? {
                b @ (0 | 1 | 8) => b as u32,
                _ => {
                    return Err(format!(
                        "'{v}' is not a valid unit base (expected 0, 1 or 8)"
                    ).into())
                }
            };
            Ok(())
        },
    )
    .default("0"),
    opt(
        "cpus_allowed",
        Cpu,
        Kind::List,
        "CPUs the job may run on, as a list with ranges (0,2-3)",
        |s, v| {
            s.ctl.cpus_allowed = Some(parse_index_list(v, "CPU")?);
            Ok(())
        },
    )
    .alias(&["cpumask_list"]),
    opt(
        "cpumask",
        Cpu,
        Kind::Int,
        "CPUs the job may run on, as a bit mask",
        |s, v| {
            let mask = uint(v)?;
            if mask == 0 {
                return Err("the CPU mask must select at least one CPU".into());
            }
            s.ctl.cpus_allowed = Some((0..64).filter(|i| mask & (1u64 << i) != 0).collect());
            Ok(())
        },
    ),
    opt(
        "numa_cpu_nodes",
        Cpu,
        Kind::Str,
        "Run the job on the CPUs of these NUMA nodes (0,2-3 or all; replaces cpus_allowed)",
        |s, v| {
            s.ctl.numa_cpu_nodes = Some(crate::job::value::parse_nodes(v)?);
            Ok(())
        },
    ),
    opt(
        "numa_mem_policy",
        Cpu,
        Kind::Str,
        "Memory policy of the job's thread and buffers: default, local, prefer:NODE, bind:NODES or interleave:NODES",
        |s, v| {
            use crate::job::spec::{MemPolicy, MemPolicyMode as M, Nodes};
            let (mode, nodes) = v.split_once(':').unwrap_or((v, ""));
            let mode = parse_choice(
                mode.trim(),
                &[
                    ("default", M::Default),
                    ("prefer", M::Prefer),
                    ("bind", M::Bind),
                    ("interleave", M::Interleave),
                    ("local", M::Local),
                ],
            )?;
            let nodes = match (mode, nodes.trim()) {
                (M::Default | M::Local, "") => Nodes::List(Vec::new()),
                (M::Default | M::Local, _) => {
                    return Err("default and local take no node list".into())
                }
                (_, "") => return Err("prefer, bind and interleave need nodes (MODE:NODES)".into()),
                (_, n) => crate::job::value::parse_nodes(n)?,
            };
            if mode == M::Prefer && !matches!(&nodes, Nodes::List(n) if n.len() == 1) {
                return Err("prefer takes exactly one node".into());
            }
            s.ctl.numa_mem_policy = Some(MemPolicy { mode, nodes });
            Ok(())
        },
    ),
    opt(
        "cpus_allowed_policy",
        Cpu,
        Kind::Choice(&[
            ("shared", "all clones share the CPU set"),
            ("split", "each clone gets its own CPU from the set"),
        ]),
        "How clones use the cpus_allowed set",
        |s, v| {
            s.ctl.cpus_allowed_policy = parse_choice(
                v,
                &[("shared", CpusPolicy::Shared), ("split", CpusPolicy::Split)],
            )?;
            Ok(())
        },
    )
    .default("shared"),
    opt(
        "nice",
        Cpu,
        Kind::Int,
        "Run the job at this nice value (-20 to 19)",
        |s, v| {
            let n = crate::job::value::parse_int(v)?;
            if !(-20..=19).contains(&n) {
                return Err(format!("'{v}' is out of range (expected -20 to 19)").into());
            }
            s.ctl.nice = n as i32;
            Ok(())
        },
    )
    .default("0"),
    opt(
        "prio",
        Cpu,
        Kind::Int,
        "The job's I/O priority level within its class, 0 (highest) to 7; without prioclass, of the best-effort class",
        |s, v| {
            s.ctl.prio = Some(uint_in(v, 0, 7)? as u32);
            Ok(())
        },
    ),
    opt(
        "prioclass",
        Cpu,
        Kind::Int,
        "The job's I/O priority class: 1 realtime (needs CAP_SYS_NICE), 2 best effort (also 0), 3 idle; without prio, at level 0",
        |s, v| {
            s.ctl.prioclass = Some(uint_in(v, 0, 3)? as u32);
            Ok(())
        },
    ),
];
