//! Malformed job files and command lines: each gets exactly one line on
//! stderr naming the problem (with file:line for job files), exit code 1,
//! no panic, and nothing written. The fixtures are written here, one case
//! per row: the files to create, the arguments, the expected error line.

use crate::common::*;

struct Case {
    /// Contents of `job.fio`, if the case has one.
    job: Option<&'static str>,
    /// Other files to create in the case's directory: (name, contents).
    files: &'static [(&'static str, &'static str)],
    args: &'static [&'static str],
    /// Environment variables to set for the run.
    env: &'static [(&'static str, &'static str)],
    /// The whole of stderr, without the "iomark: " prefix and newline;
    /// `{engines}` stands for the list of engines iomark provides.
    err: &'static str,
}

/// A job file `job.fio` with `text`, checked with --parse-only.
const fn file(text: &'static str, err: &'static str) -> Case {
    Case {
        job: Some(text),
        files: &[],
        args: &["--parse-only", "job.fio"],
        env: &[],
        err,
    }
}

/// A command line (no files).
const fn cli(args: &'static [&'static str], err: &'static str) -> Case {
    Case {
        job: None,
        files: &[],
        args,
        env: &[],
        err,
    }
}

const CASES: &[Case] = &[
    // Unknown options and typos.
    file("[a]\nbss=4k\n", "job.fio:2: unknown option 'bss' (did you mean 'bs'?)"),
    file("[a]\niodpeth=4\n", "job.fio:2: unknown option 'iodpeth' (did you mean 'iodepth'?)"),
    file("[a]\nramptime=5\n", "job.fio:2: unknown option 'ramptime' (did you mean 'ramp_time'?)"),
    file("[a]\nBS=4k\n", "job.fio:2: unknown option 'BS' (did you mean 'bs'?)"),
    file("[a]\ntime-based\n", "job.fio:2: unknown option 'time-based' (did you mean 'time_based'?)"),
    file(
        "[a]\nrw=read\nfrobnicate=1\n",
        "job.fio:3: unknown option 'frobnicate' (see iomark --cmdhelp for the list)",
    ),
    cli(
        &["--name=a", "--runtme=5", "--parse-only"],
        "unknown option '--runtme' (did you mean '--runtime'?)",
    ),
    cli(
        &["--outputformat=json", "--name=a"],
        "unknown option '--outputformat' (did you mean '--output-format'?)",
    ),
    cli(&["-x"], "unknown option '-x' (see iomark --help)"),
    // A mistyped command (no job file of that name either).
    cli(
        &["quik"],
        "'quik' is neither a command nor a job file (did you mean 'iomark quick'?)",
    ),
    cli(&["histroy"], "'histroy' is neither a command nor a job file (did you mean 'iomark history'?)"),
    cli(&["./quik"], "cannot read job file './quik': no such file"),
    // A drive path whose colon would split it into two names.
    cli(
        &["--name=a", r"--filename=C:\tmp\y", "--parse-only"],
        r"option 'filename': 'C:\tmp\y' looks like a Windows drive path, but ':' separates names here; escape the drive's colon: C\:\tmp\y",
    ),
    file(
        "[a]\ndirectory=D:\\data\n",
        r"job.fio:2: option 'directory': 'D:\data' looks like a Windows drive path, but ':' separates names here; escape the drive's colon: D\:\data",
    ),
    // The closest name as spelled: an alias, not the option it stands for.
    cli(
        &["--name=a", "--blocksiz=4k"],
        "unknown option '--blocksiz' (did you mean '--blocksize'?)",
    ),
    cli(
        &["--name=a", "--rw=randwrte", "--parse-only"],
        "option 'rw': 'randwrte' is not one of: read, write, trim, randread, randwrite, randtrim, rw, readwrite, randrw, trimwrite, randtrimwrite (did you mean 'randwrite'?)",
    ),
    cli(
        &["--output-format=jsn", "--name=a"],
        "--output-format: 'jsn' is not one of: normal, terse, json, json+ (did you mean 'json'?)",
    ),
    cli(&["--max-jobs=0", "--name=a"], "--max-jobs: must be at least 1"),
    cli(
        &["--inflate-log=nothere.fz"],
        "--inflate-log: cannot read 'nothere.fz': no such file",
    ),
    Case {
        job: None,
        files: &[("plain.log", "0, 1, 0, 4096, 0\n")],
        args: &["--inflate-log=plain.log"],
        env: &[],
        err: "--inflate-log: cannot read 'plain.log': it is not a compressed log (bad zlib data in stream 1, after byte 0)",
    },
    // Sizes.
    file(
        "[a]\nbs=4q\n",
        "job.fio:2: option 'bs': '4q' has an unknown unit 'q' (expected b, k, m, g, t or p, optionally with i or ib)",
    ),
    file("[a]\nsize=-1\n", "job.fio:2: option 'size': '-1' must not be negative"),
    file(
        "[a]\nsize=4k5\n",
        "job.fio:2: option 'size': '4k5' has an unknown unit 'k5' (expected b, k, m, g, t or p, optionally with i or ib)",
    ),
    file(
        "[a]\nsize=lots\n",
        "job.fio:2: option 'size': 'lots' is not a size (expected a number with an optional k/m/g/t/p suffix, e.g. 4k or 1g)",
    ),
    file("[a]\nsize=0\n", "job.fio:2: option 'size': the size must be larger than zero"),
    file("[a]\nbs=0\n", "job.fio:2: option 'bs': the block size must be larger than zero"),
    file("[a]\nsize=200%\n", "job.fio:2: option 'size': '200%' is out of range (expected 0 to 100)"),
    file(
        "[a]\nbs=\n",
        "job.fio:2: option 'bs' needs a value (size, or read,write,trim sizes), not an empty one",
    ),
    file(
        "[a]\nbs=4k,8k,16k,32k\n",
        "job.fio:2: option 'bs': '4k,8k,16k,32k' has more than three comma-separated values (read,write,trim)",
    ),
    // Times.
    file(
        "[a]\nruntime=10x\n",
        "job.fio:2: option 'runtime': '10x' has an unknown time unit 'x' (expected us, ms, s, m, h or d)",
    ),
    file(
        "[a]\nruntime=soon\n",
        "job.fio:2: option 'runtime': 'soon' is not a time (expected a number with an optional unit: us, ms, s, m, h, d)",
    ),
    file(
        "[a]\nstartdelay=1x\n",
        "job.fio:2: option 'startdelay': '1x' has an unknown time unit 'x' (expected us, ms, s, m, h or d)",
    ),
    file(
        "[a]\nthinktime=-5\n",
        "job.fio:2: option 'thinktime': '-5' must not be negative",
    ),
    // Booleans.
    file("[a]\ndirect=2\n", "job.fio:2: option 'direct': '2' is out of range (expected 1 or 0)"),
    file("[a]\ndirect=maybe\n", "job.fio:2: option 'direct': 'maybe' is not a boolean (expected 1 or 0)"),
    file(
        "[a]\ntime_based=always\n",
        "job.fio:2: option 'time_based': 'always' is not a boolean (expected 1 or 0)",
    ),
    // Percentages.
    file(
        "[a]\nrwmixread=101\n",
        "job.fio:2: option 'rwmixread': '101' is out of range (expected 0 to 100)",
    ),
    file("[a]\nrwmixwrite=half\n", "job.fio:2: option 'rwmixwrite': 'half' is not a whole number"),
    file(
        "[a]\npercentage_random=120\n",
        "job.fio:2: option 'percentage_random': '120' is out of range (expected 0 to 100)",
    ),
    file(
        "[a]\nlatency_percentile=most\n",
        "job.fio:2: option 'latency_percentile': 'most' is not a percentage (expected a number from 0 to 100)",
    ),
    // Ranges.
    file(
        "[a]\nbsrange=4k-\n",
        "job.fio:2: option 'bsrange': '4k-' is not a range (expected LOW-HIGH, e.g. 4k-16k)",
    ),
    file(
        "[a]\nbsrange=4k-8k-16k\n",
        "job.fio:2: option 'bsrange': '4k-8k-16k' is not a range (expected LOW-HIGH, e.g. 4k-16k)",
    ),
    file(
        "[a]\nfilesize=1m:x\n",
        "job.fio:2: option 'filesize': 'x' is not a size (expected a number with an optional k/m/g/t/p suffix, e.g. 4k or 1g)",
    ),
    file("[a]\ncpus_allowed=3-1\n", "job.fio:2: option 'cpus_allowed': '3-1' is not a valid CPU range"),
    // Splits.
    file(
        "[a]\nbssplit=4k/60:8k/60\n",
        "job.fio:2: option 'bssplit': '4k/60:8k/60' has shares adding up to 120%, more than 100%",
    ),
    file(
        "[a]\nbssplit=4k/50:8k/20\n",
        "job.fio:2: option 'bssplit': '4k/50:8k/20' has shares adding up to 70%, not 100%",
    ),
    file(
        "[a]\nbssplit=4k/x\n",
        "job.fio:2: option 'bssplit': in split entry '4k/x': 'x' is not a percentage (expected a number from 0 to 100)",
    ),
    file(
        "[a]\nbssplit=:\n",
        "job.fio:2: option 'bssplit': ':' is an empty split (expected SIZE/PERCENT:SIZE/PERCENT…)",
    ),
    // Out-of-range numbers.
    file("[a]\nnumjobs=0\n", "job.fio:2: option 'numjobs': '0' is out of range (expected 1 to 4096)"),
    file("[a]\niodepth=0\n", "job.fio:2: option 'iodepth': '0' is out of range (expected 1 to 65536)"),
    file("[a]\nnice=30\n", "job.fio:2: option 'nice': '30' is out of range (expected -20 to 19)"),
    file("[a]\nprio=8\n", "job.fio:2: option 'prio': '8' is out of range (expected 0 to 7)"),
    file(
        "[a]\nkb_base=1023\n",
        "job.fio:2: option 'kb_base': '1023' is not a valid unit base (expected 1024 or 1000)",
    ),
    file(
        "[a]\nsignificant_figures=11\n",
        "job.fio:2: option 'significant_figures': '11' is out of range (expected 1 to 10)",
    ),
    file("[a]\nnumjobs=2.5\n", "job.fio:2: option 'numjobs': '2.5' is not a whole number"),
    // Choices and structured strings.
    file(
        "[a]\nrw=sideways\n",
        "job.fio:2: option 'rw': 'sideways' is not one of: read, write, trim, randread, randwrite, randtrim, rw, readwrite, randrw, trimwrite, randtrimwrite",
    ),
    file(
        "[a]\nfallocate=maybe\n",
        "job.fio:2: option 'fallocate': 'maybe' is not one of: none, native, posix, keep, truncate, 0, 1",
    ),
    file(
        "[a]\nrandom_distribution=zipf\n",
        "job.fio:2: option 'random_distribution': 'zipf' needs a value, e.g. zipf:1.2",
    ),
    file(
        "[a]\nrandom_distribution=pareto:3\n",
        "job.fio:2: option 'random_distribution': pareto power must be between 0 and 1 (got 'pareto:3')",
    ),
    file(
        "[a]\nsync_file_range=write:0\n",
        "job.fio:2: option 'sync_file_range': the write count must be at least 1",
    ),
    file(
        "[a]\nsteadystate=speed:5\n",
        "job.fio:2: option 'steadystate': 'speed' is not one of: iops, iops_slope, bw, bw_slope",
    ),
    // Missing values.
    file("[a]\nbs\n", "job.fio:2: option 'bs' needs a value (size, or read,write,trim sizes)"),
    cli(
        &["--name=a", "--parse-only", "--bs"],
        "option 'bs' needs a value (size, or read,write,trim sizes)",
    ),
    cli(&["--parse-only", "--name"], "missing argument for option '--name'"),
    cli(&["--name=", "--parse-only"], "--name needs a job name"),
    // Section headers and text outside sections.
    file("[a\nbs=4k\n", "job.fio:1: section header '[a' is missing its closing ']'"),
    file("[]\n", "job.fio:1: empty section name '[]'"),
    file("[a] junk\n", "job.fio:1: section header '[a] junk' has text after its closing ']'"),
    file("bs=4k\n[a]\n", "job.fio:1: 'bs=4k' appears before any [section] header"),
    file("[a]\n=4k\n", "job.fio:2: '=4k' has no option name before '='"),
    // Includes.
    Case {
        job: Some("[a]\ninclude nothere.fio\n"),
        files: &[],
        args: &["--parse-only", "job.fio"],
        env: &[],
        err: "job.fio:2: cannot read included file 'nothere.fio': no such file",
    },
    Case {
        job: Some("[a]\ninclude inc.fio\n"),
        files: &[("inc.fio", "bs=4k\ninclude job.fio\n")],
        args: &["--parse-only", "job.fio"],
        env: &[],
        err: "inc.fio:2: 'job.fio' includes itself",
    },
    Case {
        job: Some("[a]\ninclude inc.fio\n"),
        files: &[("inc.fio", "bs=4k\n[b]\n")],
        args: &["--parse-only", "job.fio"],
        env: &[],
        err: "inc.fio:2: an included file may not contain [sections]",
    },
    Case {
        job: Some("[a]\ninclude inc.fio\n"),
        files: &[("inc.fio", "bs=4q\n")],
        args: &["--parse-only", "job.fio"],
        env: &[],
        err: "inc.fio:1: option 'bs': '4q' has an unknown unit 'q' (expected b, k, m, g, t or p, optionally with i or ib)",
    },
    file("include other.fio\n[a]\n", "job.fio:1: 'include' appears before any [section] header"),
    file("[a]\ninclude\n", "job.fio:2: include needs a file name"),
    file(
        "[a]\ninclude ${IOMARK_BAD_UNSET_INC}\n",
        "job.fio:2: include needs a file name (environment variable IOMARK_BAD_UNSET_INC is not set)",
    ),
    // Arithmetic.
    file(
        "[a]\nsize=(1+\n",
        "job.fio:2: option 'size': '(1+' is not a valid expression: unexpected end at position 4",
    ),
    file(
        "[a]\nsize=(1/0)\n",
        "job.fio:2: option 'size': '(1/0)' is not a valid expression: division by zero at position 5",
    ),
    file(
        "[a]\nsize=(2k*)\n",
        "job.fio:2: option 'size': '(2k*)' is not a valid expression: expected a number or '(' at position 5",
    ),
    file(
        "[a]\nruntime=(1x)\n",
        "job.fio:2: option 'runtime': '(1x)' has an unknown unit 'x' in its expression",
    ),
    file(
        "[a]\nnumjobs=(2k)\n",
        "job.fio:2: option 'numjobs': '(2k)' has an unknown unit 'k' in its expression",
    ),
    file(
        "[a]\nsize=(1-2)\n",
        "job.fio:2: option 'size': '(1-2)' must not be negative",
    ),
    // Engines.
    file(
        "[a]\nioengine=foo\n",
        "job.fio:2: option 'ioengine': unknown ioengine 'foo' (supported: {engines})",
    ),
    file(
        "[a]\nioengine=rbd\nclientname=admin\n",
        "job.fio:2: option 'ioengine': ioengine 'rbd' is not supported by iomark (supported: {engines})",
    ),
    file(
        "[a]\nioengine=psync\nhostname=server\n",
        "job.fio:3: option 'hostname' is not supported by iomark: it belongs to the net, netsplice and rdma engines, which iomark does not provide",
    ),
    file(
        "[a]\nioengine=psync\nfixedbufs\n",
        "job.fio:3: option 'fixedbufs' only applies to ioengine=io_uring,io_uring_cmd (this job uses ioengine=psync)",
    ),
    file(
        "[global]\nuserspace_reap\n[a]\nioengine=io_uring\n",
        "job.fio:2: option 'userspace_reap' only applies to ioengine=libaio (this job uses ioengine=io_uring)",
    ),
    cli(
        &["--name=a", "--parse-only", "--hipri"],
        "option 'hipri' only applies to ioengine=io_uring,io_uring_cmd,pvsync2 (this job uses ioengine=psync)",
    ),
    cli(
        &["--name=a", "--ioengine=sync", "--parse-only", "--proto=udp"],
        "option 'protocol' is not supported by iomark: it belongs to the net and netsplice engines, which iomark does not provide",
    ),
    // Unsupported options.
    file(
        "[a]\ntrim_verify_zero=1\n",
        "job.fio:2: option 'trim_verify_zero' is not supported by iomark: iomark does not trim written blocks to check they read back as zeroes",
    ),
    file(
        "[a]\nverify=md5\nverify_state_load=1\n",
        "job.fio:3: option 'verify_state_load': iomark does not load the write state of a stopped job; only 0 is accepted",
    ),
    file(
        "[global]\nnumruns=2\n[a]\n",
        "job.fio:2: option 'numruns' is not supported by iomark: it belongs to fio's tiobench profile; profiles are not supported (see the iomark presets)",
    ),
    file(
        "[a]\nnuma_mem_policy=prefer\n",
        "job.fio:2: option 'numa_mem_policy': prefer, bind and interleave need nodes (MODE:NODES)",
    ),
    file(
        "[a]\nignore_error=,ENOSPX\n",
        "job.fio:2: option 'ignore_error': 'ENOSPX' is not an error name (like ENOSPC) or a positive number",
    ),
    file(
        "[a]\nflow=1001\n",
        "job.fio:2: option 'flow': '1001' is out of range (expected 0 to 1000)",
    ),
    file(
        "[a]\nmem=mmapx\n",
        "job.fio:2: option 'mem': 'mmapx' is not one of: malloc, shm, shmhuge, mmap, mmaphuge, mmapshared",
    ),
    file(
        "[a]\nclocksource=tsc\n",
        "job.fio:2: option 'clocksource': 'tsc' is not one of: gettimeofday, clock_gettime, cpu",
    ),
    file(
        "[a]\nzonemode=@@\n",
        "job.fio:2: option 'zonemode': '@@' is not one of: none, strided, zbd",
    ),
    file(
        "[a]\nrw=randread:-8\n",
        "job.fio:2: option 'rw': 'randread:-8': a negative ':N' only applies to sequential patterns",
    ),
    cli(
        &["--server"],
        "option '--server' is not supported by iomark: client/server mode is not supported; run one job on many hosts under MPI (mpirun -np N iomark JOB, see --mpi)",
    ),
    cli(
        &["--idle-prof=system", "--name=a"],
        "option '--idle-prof' is not supported by iomark: CPU idleness profiling is not supported",
    ),
    // Environment variables.
    Case {
        job: Some("[a]\nrw=${IOMARK_BAD_UNSET_RW}\n"),
        files: &[],
        args: &["--parse-only", "job.fio"],
        env: &[],
        err: "job.fio:2: option 'rw' needs a value (one of a set of words), not an empty one (environment variable IOMARK_BAD_UNSET_RW is not set)",
    },
    Case {
        job: Some("[a]\nbs=${IOMARK_BAD_UNSET_BS}k\n"),
        files: &[],
        args: &["--parse-only", "job.fio"],
        env: &[],
        err: "job.fio:2: option 'bs': 'k' is not a size (expected a number with an optional k/m/g/t/p suffix, e.g. 4k or 1g) (environment variable IOMARK_BAD_UNSET_BS is not set)",
    },
    Case {
        job: Some("[a]\nnumjobs=${IOMARK_BAD_NJ}\n"),
        files: &[],
        args: &["--parse-only", "job.fio"],
        env: &[("IOMARK_BAD_NJ", "many")],
        err: "job.fio:2: option 'numjobs': 'many' is not a whole number",
    },
    // Run flags.
    cli(
        &["--output-format=xml", "--name=a"],
        "--output-format: 'xml' is not one of: normal, terse, json, json+",
    ),
    cli(&["--terse-version=9", "--name=a"], "--terse-version: '9' is not one of: 2, 3, 4, 5"),
    cli(&["--eta=sometimes", "--name=a"], "--eta: 'sometimes' is not one of: auto, always, never"),
    cli(
        &["--status-interval=5q", "--name=a"],
        "--status-interval: '5q' has an unknown time unit 'q' (expected us, ms, s, m, h or d)",
    ),
    cli(&["--max-jobs=abc", "--name=a"], "--max-jobs: 'abc' is not a number"),
    cli(
        &["--cmdhelp=nosuchoption"],
        "unknown option 'nosuchoption' (see iomark --cmdhelp for the list)",
    ),
    cli(
        &["--enghelp=foo"],
        "unknown ioengine 'foo' (supported: {engines})",
    ),
    cli(
        &["--enghelp=net,bs"],
        "'bs' is not an option of the net engine (see iomark --enghelp=net)",
    ),
    // No jobs, missing files, sections.
    cli(&["--parse-only"], "no jobs defined: give a job file, or options with --name=NAME"),
    file("[global]\nbs=4k\n", "no jobs defined: give a job file, or options with --name=NAME"),
    file("", "no jobs defined: give a job file, or options with --name=NAME"),
    cli(&["nothere.fio"], "cannot read job file 'nothere.fio': no such file"),
    cli(&["."], "cannot read job file '.': is a directory"),
    Case {
        job: Some("[a]\n[b]\n"),
        files: &[],
        args: &["--section=c", "--parse-only", "job.fio"],
        env: &[],
        err: "no job matches --section=c",
    },
    // Refused before anything runs (no --parse-only).
    cli(
        &["--readonly", "--name=w", "--rw=write", "--size=1m"],
        "job 'w' writes (rw=write) but --readonly was given",
    ),
    Case {
        job: Some("[w]\nrw=randwrite\nsize=1m\nbs=4k\nnumjobs=0\n"),
        files: &[],
        args: &["job.fio"],
        env: &[],
        err: "job.fio:5: option 'numjobs': '0' is out of range (expected 1 to 4096)",
    },
    // NUL bytes and control characters (a NUL in a section name used to
    // panic when the job's thread was named).
    Case {
        job: Some("[jo\0b]\nioengine=null\nsize=1m\n"),
        files: &[],
        args: &["job.fio"],
        env: &[],
        err: "job.fio:1: the line contains a NUL byte",
    },
    file("[jo\0b]\nioengine=null\nsize=1m\n", "job.fio:1: the line contains a NUL byte"),
    file("[a]\nfilename=a\0b\n", "job.fio:2: the line contains a NUL byte"),
    file("[a]\n; note\0\nbs=4k\n", "job.fio:2: the line contains a NUL byte"),
    file(
        "[a]\ndescription=x\u{1b}[2Jy\n",
        "job.fio:2: the line contains a control character (U+001B)",
    ),
    cli(&["--name=a\nb"], "--name: the value contains a control character (U+000A)"),
    cli(
        &["--name=a", "--filename=x\ry"],
        "the value of 'filename' contains a control character (U+000D)",
    ),
    // The number of jobs, clones counted (fio's limit is 4096 too).
    cli(
        &["--name=x", "--ioengine=null", "--size=1m", "--numjobs=20000"],
        "option 'numjobs': '20000' is out of range (expected 1 to 4096)",
    ),
    Case {
        job: Some("[a]\nioengine=null\nsize=1m\nnumjobs=4000\n[b]\nioengine=null\nsize=1m\nnumjobs=97\n"),
        files: &[],
        args: &["job.fio"],
        env: &[],
        err: "job.fio:5: job 'b' makes 4097 jobs (numjobs clones counted); iomark runs at most 4096, as fio",
    },
    // Overflow is an error naming the option and the value.
    file("[a]\nsize=16384p\n", "job.fio:2: option 'size': '16384p' is too large"),
    file("[a]\nsize=(2^64)\n", "job.fio:2: option 'size': '(2^64)' is too large"),
    file(
        "[a]\noffset=18446744073709551616\n",
        "job.fio:2: option 'offset': '18446744073709551616' is too large",
    ),
    file(
        "[a]\nbsrange=4k-99999999999999999999k\n",
        "job.fio:2: option 'bsrange': '99999999999999999999k' is too large",
    ),
    file("[a]\nrandseed=(2^70)\n", "job.fio:2: option 'randseed': '(2^70)' is too large"),
    file(
        "[a]\nopenfiles=4294967296\n",
        "job.fio:2: option 'openfiles': '4294967296' is out of range (expected 0 to 4294967295)",
    ),
    file(
        "[a]\nruntime=36501d\n",
        "job.fio:2: option 'runtime': '36501d' is too long (at most 100 years)",
    ),
    file(
        "[a]\nthinktime=(2^60)\n",
        "job.fio:2: option 'thinktime': '(2^60)' is too long (at most 100 years)",
    ),
    file(
        "[a]\nrwmixread=(10^30)%\n",
        "job.fio:2: option 'rwmixread': '(10^30)' is too large",
    ),
    file(
        "[a]\nsize=((2^63)*2)\n",
        "job.fio:2: option 'size': '((2^63)*2)' is too large",
    ),
    cli(
        &["--name=a", "--rate=(2^127)"],
        "option 'rate': '(2^127)' is too large",
    ),
    // Job files and includes that are not regular files.
    cli(
        &["/dev/zero"],
        "cannot read job file '/dev/zero': is a character device, not a regular file",
    ),
    file(
        "[a]\ninclude /dev/zero\n",
        "job.fio:2: cannot read included file '/dev/zero': is a character device, not a regular file",
    ),
    file("[a]\ninclude .\n", "job.fio:2: cannot read included file '.': is a directory"),
    Case {
        job: Some("[a]\ninclude loop.fio\n"),
        files: &[("loop.fio", "bs=4k\ninclude loop.fio\n")],
        args: &["--parse-only", "job.fio"],
        env: &[],
        err: "loop.fio:2: 'loop.fio' includes itself",
    },
];

#[test]
fn malformed_inputs_get_one_clear_line_and_exit_1() {
    assert!(CASES.len() >= 60, "only {} cases", CASES.len());
    let mut failures = Vec::new();
    for (i, case) in CASES.iter().enumerate() {
        if cfg!(windows) && case.err.contains("'/dev/") {
            // Device files are Unix's.
            continue;
        }
        let dir = tempdir();
        if let Some(text) = case.job {
            std::fs::write(dir.path().join("job.fio"), text).unwrap();
        }
        for (name, text) in case.files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        let o = iomark()
            .args(case.args)
            .envs(case.env.iter().copied())
            .current_dir(dir.path())
            .output_bounded()
            .expect("run iomark");
        let err = stderr(&o);
        let engines = iomark::job::engine_kind::supported_list();
        let want = format!("iomark: {}\n", case.err.replace("{engines}", &engines));
        if o.status.code() != Some(1) || err != want {
            failures.push(format!(
                "case {i} {:?}: exit {:?}\n  want: {want}  got:  {err}",
                case.args,
                o.status.code()
            ));
        }
        let out = stdout(&o);
        if !out.is_empty() {
            failures.push(format!(
                "case {i} {:?}: printed to stdout: {out}",
                case.args
            ));
        }
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.retain(|n| n != "job.fio" && !case.files.iter().any(|(f, _)| f == n));
        if !left.is_empty() {
            failures.push(format!("case {i} {:?}: wrote {left:?}", case.args));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Runs iomark with `stdin` as its standard input, killing it after a
/// minute (a hang fails the test instead of blocking it).
fn run_bounded(dir: &std::path::Path, args: &[&str], stdin: Vec<u8>) -> std::process::Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = iomark()
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run iomark");
    let mut input = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        // iomark may stop reading early (too large): a broken pipe is fine.
        let _ = input.write_all(&stdin);
    });
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            panic!("iomark {args:?} hung");
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let _ = writer.join();
    child.wait_with_output().unwrap()
}

#[test]
fn fifos_and_oversized_job_files_are_refused_and_pipes_still_work() {
    let dir = tempdir();
    let d = dir.path();
    // FIFOs and device files are Unix's (cases below marked unix).
    #[cfg(unix)]
    {
        let fifo = std::ffi::CString::new(d.join("fifo").as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    }
    std::fs::write(d.join("inc.fio"), "[a]\ninclude fifo\n").unwrap();
    std::fs::File::create(d.join("big.fio"))
        .unwrap()
        .set_len((16 << 20) + 1)
        .unwrap();
    let job = b"[a]\nioengine=null\nsize=1m\n".to_vec();
    let mut cases: Vec<(&[&str], Vec<u8>, &str)> = vec![
        (
            &["big.fio"],
            vec![],
            "cannot read job file 'big.fio': is larger than 16 MiB",
        ),
        (
            &["-"],
            vec![b'\n'; (16 << 20) + 1],
            "cannot read job file from standard input: is larger than 16 MiB",
        ),
        (
            &["--parse-only", "-"],
            b"[a]\nsize=1\0m\n".to_vec(),
            "<stdin>:2: the line contains a NUL byte",
        ),
    ];
    if cfg!(unix) {
        cases.extend([
            (
                &["fifo"][..],
                vec![],
                "cannot read job file 'fifo': is a named pipe (FIFO), not a regular file",
            ),
            (
                &["--parse-only", "inc.fio"],
                vec![],
                "inc.fio:2: cannot read included file 'fifo': is a named pipe (FIFO), not a regular file",
            ),
            // Traces and result files are input files too: never endless.
            (
                &["--name=r", "--ioengine=null", "--read_iolog=/dev/zero"],
                vec![],
                "job 'r': cannot read read_iolog '/dev/zero': is a character device, not a regular file",
            ),
            (
                &["--name=r", "--ioengine=null", "--read_iolog=fifo"],
                vec![],
                "job 'r': cannot read read_iolog 'fifo': is a named pipe (FIFO), not a regular file",
            ),
        ]);
    }
    for (args, stdin, want) in cases {
        let o = run_bounded(d, args, stdin.clone());
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert_eq!(stderr(&o), format!("iomark: {want}\n"), "{args:?}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    let devices = [
        &["report", "/dev/zero", "-o", "r.html"][..],
        &["compare", "--base", "/dev/zero", "--new", "/dev/zero"][..],
    ];
    for args in devices.into_iter().filter(|_| cfg!(unix)) {
        let o = run_bounded(d, args, vec![]);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert_eq!(
            stderr(&o),
            format!(
                "iomark {}: cannot read '/dev/zero': is a character device, not a regular file\n",
                args[0]
            )
        );
    }
    // A job file from a pipe keeps working: '-', /dev/stdin (Unix).
    let piped = [
        &["--parse-only", "-"][..],
        &["--parse-only", "/dev/stdin"][..],
    ];
    for args in piped.into_iter().filter(|a| cfg!(unix) || a[1] == "-") {
        let o = run_bounded(d, args, job.clone());
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o), "", "{args:?}");
    }
    let mut left: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    if cfg!(unix) {
        assert_eq!(left, ["big.fio", "fifo", "inc.fio"]);
    } else {
        assert_eq!(left, ["big.fio", "inc.fio"]);
    }
}
