//! Unsupported engine-specific options: the options of engines iomark does
//! not provide, each naming its engines. (Options of the engines iomark
//! provides, implemented or not, live in `options/engines.rs`.)
//!
//! An option shared by several engines is one entry listing them all.

use crate::job::options::{unsupported, Category::*, Kind, OptDef};

const NET: &str = "it belongs to the net and netsplice engines, which iomark does not provide";
const CEPH: &str = "it belongs to the rbd and rados engines, which iomark does not provide";
const RPMA: &str = "it belongs to the librpma engines, which iomark does not provide";
const SG: &str = "it belongs to the sg engine, which iomark does not provide";
const XNVME: &str = "it belongs to the xnvme engine, which iomark does not provide";
const EXEC: &str = "it belongs to the exec engine, which iomark does not provide";
const CPUIO: &str = "it belongs to the cpuio engine, which iomark does not provide";
const GFAPI: &str = "it belongs to the gfapi engines, which iomark does not provide";
const DFS: &str = "it belongs to the dfs engine, which iomark does not provide";
const HDFS: &str = "it belongs to the libhdfs engine, which iomark does not provide";
const RDMA: &str = "it belongs to the rdma engine, which iomark does not provide";
const E4DEFRAG: &str = "it belongs to the e4defrag engine, which iomark does not provide";
const CUFILE: &str = "it belongs to the libcufile engine, which iomark does not provide";

const NETS: &[&str] = &["net", "netsplice"];
const RPMA_ENGINES: &[&str] = &[
    "librpma_apm_client",
    "librpma_apm_server",
    "librpma_gpspm_client",
    "librpma_gpspm_server",
];

pub const OPTS: &[OptDef] = &[
    // Network engines.
    unsupported(
        "hostname",
        Engine,
        "Host to connect to (or multicast address) for network I/O",
        "it belongs to the net, netsplice and rdma engines, which iomark does not provide",
    )
    .fio_engines(&["net", "netsplice", "rdma"]),
    unsupported(
        "port",
        Engine,
        "Network port to listen on or connect to",
        "it belongs to the net, netsplice, rdma, librpma and libhdfs engines, which iomark does not provide",
    )
    .kind(Kind::Int)
    .fio_engines(&[
        "net",
        "netsplice",
        "rdma",
        "libhdfs",
        "librpma_apm_client",
        "librpma_apm_server",
        "librpma_gpspm_client",
        "librpma_gpspm_server",
    ]),
    unsupported(
        "protocol",
        Engine,
        "Network protocol: tcp, tcpv6, udp, udpv6 or unix",
        NET,
    )
    .alias(&["proto"])
    .fio_engines(NETS),
    unsupported(
        "interface",
        Engine,
        "Network interface address for UDP multicast",
        NET,
    )
    .fio_engines(NETS),
    unsupported(
        "ttl",
        Engine,
        "Time-to-live of outgoing UDP multicast packets",
        NET,
    )
    .kind(Kind::Int)
    .fio_engines(NETS),
    unsupported("nodelay", Engine, "Set TCP_NODELAY on TCP connections", NET)
        .kind(Kind::Bool)
        .fio_engines(NETS),
    unsupported(
        "listen",
        Engine,
        "Wait for an incoming TCP connection instead of connecting",
        NET,
    )
    .kind(Kind::Switch)
    .fio_engines(NETS),
    unsupported(
        "pingpong",
        Engine,
        "Have the reader answer each message before the writer sends the next",
        NET,
    )
    .kind(Kind::Switch)
    .fio_engines(NETS),
    unsupported("window_size", Engine, "Socket buffer size", NET)
        .kind(Kind::Size)
        .fio_engines(NETS),
    unsupported("mss", Engine, "TCP maximum segment size", NET)
        .kind(Kind::Int)
        .fio_engines(NETS),
    // RDMA and librpma.
    unsupported(
        "verb",
        Engine,
        "RDMA operation to use: write, read, send or recv",
        RDMA,
    )
    .fio_engines(&["rdma"]),
    unsupported(
        "bindname",
        Engine,
        "Local address or device to bind the RDMA connection to",
        RDMA,
    )
    .fio_engines(&["rdma"]),
    unsupported(
        "serverip",
        Engine,
        "IP address of the RDMA server",
        RPMA,
    )
    .fio_engines(RPMA_ENGINES),
    unsupported(
        "direct_write_to_pmem",
        Engine,
        "Whether writes on the server go straight to persistent memory",
        RPMA,
    )
    .kind(Kind::Bool)
    .fio_engines(RPMA_ENGINES),
    unsupported(
        "busy_wait_polling",
        Engine,
        "Busy-poll for completions on the server instead of waiting",
        RPMA,
    )
    .kind(Kind::Bool)
    .fio_engines(RPMA_ENGINES),
    // Ceph (rbd, rados) and DAOS (dfs).
    unsupported("clustername", Engine, "Name of the Ceph cluster", CEPH)
        .fio_engines(&["rbd", "rados"]),
    unsupported("rbdname", Engine, "Name of the RBD image", CEPH).fio_engines(&["rbd"]),
    unsupported(
        "clientname",
        Engine,
        "Ceph user name used to connect",
        CEPH,
    )
    .fio_engines(&["rbd", "rados"]),
    unsupported("conf", Engine, "Path of the Ceph configuration file", CEPH)
        .fio_engines(&["rados"]),
    unsupported(
        "busy_poll",
        Engine,
        "Busy-poll for completions instead of sleeping",
        CEPH,
    )
    .kind(Kind::Bool)
    .fio_engines(&["rbd", "rados"]),
    unsupported(
        "touch_objects",
        Engine,
        "Create all objects before the job starts",
        CEPH,
    )
    .kind(Kind::Bool)
    .fio_engines(&["rados"]),
    unsupported(
        "pool",
        Engine,
        "Ceph pool, or DAOS pool label or UUID",
        "it belongs to the rbd, rados and dfs engines, which iomark does not provide",
    )
    .fio_engines(&["rbd", "rados", "dfs"]),
    unsupported("cont", Engine, "DAOS container label or UUID", DFS).fio_engines(&["dfs"]),
    unsupported(
        "object_class",
        Engine,
        "DAOS object class for the file",
        DFS,
    )
    .fio_engines(&["dfs"]),
    unsupported(
        "chunk_size",
        Engine,
        "Chunk size of the DAOS or HDFS file",
        "it belongs to the dfs and libhdfs engines, which iomark does not provide",
    )
    .kind(Kind::Size)
    .fio_engines(&["dfs", "libhdfs"]),
    // HDFS.
    unsupported(
        "namenode",
        Engine,
        "Host name or address of the HDFS namenode",
        HDFS,
    )
    .fio_engines(&["libhdfs"]),
    unsupported(
        "hdfsdirectory",
        Engine,
        "HDFS directory to create chunks in",
        HDFS,
    )
    .fio_engines(&["libhdfs"]),
    // SCSI generic.
    unsupported(
        "readfua",
        Engine,
        "Set the force-unit-access bit on SCSI reads",
        SG,
    )
    .kind(Kind::Bool)
    .fio_engines(&["sg"]),
    unsupported(
        "writefua",
        Engine,
        "Set the force-unit-access bit on SCSI writes",
        SG,
    )
    .kind(Kind::Bool)
    .fio_engines(&["sg"]),
    unsupported(
        "sg_write_mode",
        Engine,
        "SCSI write command to issue: write, write_and_verify, verify, write_same, …",
        SG,
    )
    .fio_engines(&["sg"]),
    unsupported(
        "stream_id",
        Engine,
        "Stream identifier for SCSI WRITE STREAM commands",
        SG,
    )
    .kind(Kind::Int)
    .fio_engines(&["sg"]),
    // NBD, NFS and GPU I/O.
    unsupported(
        "uri",
        Engine,
        "NBD server URI, e.g. nbd://localhost:10809",
        "it belongs to the nbd engine, which iomark does not provide",
    )
    .fio_engines(&["nbd"]),
    unsupported(
        "nfs_url",
        Engine,
        "NFS export URL in libnfs format (nfs://server/path)",
        "it belongs to the nfs engine, which iomark does not provide",
    )
    .fio_engines(&["nfs"]),
    unsupported(
        "gpu_dev_ids",
        Engine,
        "GPU ids, ':'-separated, assigned to the workers in turn",
        CUFILE,
    )
    .fio_engines(&["libcufile"]),
    unsupported(
        "cuda_io",
        Engine,
        "How data reaches the GPU: cufile or posix",
        CUFILE,
    )
    .fio_engines(&["libcufile"]),
    // GlusterFS.
    unsupported("volume", Engine, "GlusterFS volume name", GFAPI)
        .fio_engines(&["gfapi", "gfapi_async"]),
    unsupported("brick", Engine, "GlusterFS brick to connect to", GFAPI)
        .fio_engines(&["gfapi", "gfapi_async"]),
    unsupported(
        "single-instance",
        Engine,
        "Share one GlusterFS connection between jobs",
        GFAPI,
    )
    .kind(Kind::Bool)
    .fio_engines(&["gfapi", "gfapi_async"]),
    // xNVMe.
    unsupported(
        "xnvme_async",
        Engine,
        "xNVMe asynchronous interface: emu, thrpool, io_uring, libaio, posix, …",
        XNVME,
    )
    .fio_engines(&["xnvme"]),
    unsupported(
        "xnvme_sync",
        Engine,
        "xNVMe synchronous interface: nvme or psync",
        XNVME,
    )
    .fio_engines(&["xnvme"]),
    unsupported(
        "xnvme_admin",
        Engine,
        "xNVMe admin command interface: nvme or block",
        XNVME,
    )
    .fio_engines(&["xnvme"]),
    unsupported(
        "xnvme_dev_nsid",
        Engine,
        "NVMe namespace id for user-space drivers",
        XNVME,
    )
    .kind(Kind::Int)
    .fio_engines(&["xnvme"]),
    unsupported(
        "xnvme_iovec",
        Engine,
        "Use vectored read/write commands",
        XNVME,
    )
    .kind(Kind::Int)
    .fio_engines(&["xnvme"]),
    // Engines that do something other than storage I/O.
    unsupported("program", Engine, "Program to run as the job", EXEC).fio_engines(&["exec"]),
    unsupported(
        "arguments",
        Engine,
        "Arguments for the program (%r and %n expand to runtime and job name)",
        EXEC,
    )
    .fio_engines(&["exec"]),
    unsupported(
        "grace_time",
        Engine,
        "Time between SIGTERM and SIGKILL when stopping the program",
        EXEC,
    )
    .kind(Kind::Int)
    .fio_engines(&["exec"]),
    unsupported(
        "std_redirect",
        Engine,
        "Send the program's stdout and stderr to files named after the job",
        EXEC,
    )
    .kind(Kind::Bool)
    .fio_engines(&["exec"]),
    unsupported(
        "cpuload",
        Engine,
        "Percentage of CPU time to burn",
        CPUIO,
    )
    .kind(Kind::Int)
    .fio_engines(&["cpuio"]),
    unsupported(
        "cpuchunks",
        Engine,
        "Length of each CPU burn cycle in microseconds",
        CPUIO,
    )
    .kind(Kind::Int)
    .fio_engines(&["cpuio"]),
    unsupported(
        "cpumode",
        Engine,
        "How to load the CPU: noop or qsort",
        CPUIO,
    )
    .fio_engines(&["cpuio"]),
    unsupported(
        "exit_on_io_done",
        Engine,
        "Stop burning CPU when the I/O jobs are done",
        CPUIO,
    )
    .kind(Kind::Bool)
    .fio_engines(&["cpuio"]),
    unsupported(
        "donorname",
        Engine,
        "File that donates blocks for defragmentation",
        E4DEFRAG,
    )
    .fio_engines(&["e4defrag"]),
    unsupported(
        "inplace",
        Engine,
        "How donor blocks are allocated: 0 up front, 1 per event",
        E4DEFRAG,
    )
    .kind(Kind::Int)
    .fio_engines(&["e4defrag"]),
    unsupported(
        "skip_bad",
        Engine,
        "Skip blocks the MTD device marks as bad",
        "it belongs to the mtd engine, which iomark does not provide",
    )
    .kind(Kind::Bool)
    .fio_engines(&["mtd"]),
];
