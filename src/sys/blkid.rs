//! libblkid, util-linux's prober of filesystem, RAID, volume and
//! partition-table signatures, through its C API (`blkid.h`), loaded at
//! run time with `dlopen("libblkid.so.1")`.
//!
//! Loaded, not linked: building iomark needs no libblkid headers or
//! development link (`libblkid.so`), the binary starts where the library
//! is missing (minimal containers, an initramfs), and only a run that
//! checks a block device it writes to loads it. Every function used has
//! been in libblkid since util-linux 2.18 (2010); `BLKID_SUBLKS_BADCSUM`
//! since 2.26 (older versions ignore the flag). Where the library cannot
//! be loaded, [`probe`] says why and the caller falls back to iomark's
//! own list of signatures.
//!
//! Only reads: libblkid reads the descriptor it is given (`pread`) and
//! asks the kernel for the device's sizes; it never writes.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::OnceLock;

type Probe = *mut c_void;
type PartList = *mut c_void;
type Partition = *mut c_void;

/// `blkid.h`'s flags.
const SUBLKS_TYPE: c_int = 1 << 5;
const SUBLKS_USAGE: c_int = 1 << 7;
const SUBLKS_VERSION: c_int = 1 << 8;
const SUBLKS_MAGIC: c_int = 1 << 9;
const SUBLKS_BADCSUM: c_int = 1 << 10;
const PARTS_FORCE_GPT: c_int = 1 << 1;

// The C prototypes (blkid.h) of the functions iomark calls: probes,
// partition lists and partitions are opaque pointers, blkid_loff_t is
// int64_t, flags and results are int, sizes size_t.
type NewProbe = unsafe extern "C" fn() -> Probe;
type FreeProbe = unsafe extern "C" fn(Probe);
type SetDevice = unsafe extern "C" fn(Probe, c_int, i64, i64) -> c_int;
type SetInt = unsafe extern "C" fn(Probe, c_int) -> c_int;
type DoProbe = unsafe extern "C" fn(Probe) -> c_int;
type LookupValue =
    unsafe extern "C" fn(Probe, *const c_char, *mut *const c_char, *mut usize) -> c_int;
type GetPartitions = unsafe extern "C" fn(Probe) -> PartList;
type NumOf = unsafe extern "C" fn(PartList) -> c_int;
type GetPartition = unsafe extern "C" fn(PartList, c_int) -> Partition;
type PartitionLoff = unsafe extern "C" fn(Partition) -> i64;

/// The functions of libblkid iomark calls, found in the library loaded.
struct Lib {
    new_probe: NewProbe,
    free_probe: FreeProbe,
    set_device: SetDevice,
    enable_superblocks: SetInt,
    set_superblocks_flags: SetInt,
    enable_partitions: SetInt,
    set_partitions_flags: SetInt,
    do_probe: DoProbe,
    lookup_value: LookupValue,
    get_partitions: GetPartitions,
    numof_partitions: NumOf,
    get_partition: GetPartition,
    partition_get_start: PartitionLoff,
    partition_get_size: PartitionLoff,
}

// SAFETY: the library's handle is never closed, so the function pointers
// stay valid for the whole run; the functions themselves keep no global
// state between calls on different probes (each call here gets its own).
unsafe impl Send for Lib {}
// SAFETY: as above; `Lib` is only read after it is built.
unsafe impl Sync for Lib {}

fn dlerror() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated message owned by
    // the C library, valid until the next dl* call on this thread; it is
    // copied at once.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown error".to_string()
    } else {
        // SAFETY: non-NULL, NUL-terminated (see above).
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

/// The library's name as the dynamic linker knows it (Debian: package
/// libblkid1, part of every installation).
pub const LIBRARY: &str = "libblkid.so.1";

/// Why libblkid could not be loaded or could not probe (its message).
#[derive(Clone, Debug, thiserror::Error)]
#[error("{0}")]
pub struct BlkidError(String);

fn load() -> Result<Lib, BlkidError> {
    // SAFETY: a NUL-terminated name; the handle is kept for the run.
    let h = unsafe { libc::dlopen(c"libblkid.so.1".as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if h.is_null() {
        return Err(BlkidError(dlerror()));
    }
    let sym = |name: &CStr| -> Result<*mut c_void, BlkidError> {
        // SAFETY: a handle dlopen returned and a NUL-terminated name.
        let p = unsafe { libc::dlsym(h, name.as_ptr()) };
        if p.is_null() {
            Err(BlkidError(format!(
                "{LIBRARY} has no {}",
                name.to_string_lossy()
            )))
        } else {
            Ok(p)
        }
    };
    macro_rules! f {
        ($name:literal, $ty:ty) => {
            // SAFETY: the symbol is libblkid's function of that name, whose
            // C prototype (blkid.h) is `$ty` (see the types above).
            unsafe { std::mem::transmute::<*mut c_void, $ty>(sym($name)?) }
        };
    }
    Ok(Lib {
        new_probe: f!(c"blkid_new_probe", NewProbe),
        free_probe: f!(c"blkid_free_probe", FreeProbe),
        set_device: f!(c"blkid_probe_set_device", SetDevice),
        enable_superblocks: f!(c"blkid_probe_enable_superblocks", SetInt),
        set_superblocks_flags: f!(c"blkid_probe_set_superblocks_flags", SetInt),
        enable_partitions: f!(c"blkid_probe_enable_partitions", SetInt),
        set_partitions_flags: f!(c"blkid_probe_set_partitions_flags", SetInt),
        do_probe: f!(c"blkid_do_probe", DoProbe),
        lookup_value: f!(c"blkid_probe_lookup_value", LookupValue),
        get_partitions: f!(c"blkid_probe_get_partitions", GetPartitions),
        numof_partitions: f!(c"blkid_partlist_numof_partitions", NumOf),
        get_partition: f!(c"blkid_partlist_get_partition", GetPartition),
        partition_get_start: f!(c"blkid_partition_get_start", PartitionLoff),
        partition_get_size: f!(c"blkid_partition_get_size", PartitionLoff),
    })
}

fn lib() -> Result<&'static Lib, BlkidError> {
    static LIB: OnceLock<Result<Lib, BlkidError>> = OnceLock::new();
    LIB.get_or_init(load).as_ref().map_err(Clone::clone)
}

/// Whether libblkid can be used here (or why not).
pub fn available() -> Result<(), BlkidError> {
    lib().map(|_| ())
}

/// One signature libblkid found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// libblkid's name of it (`TYPE`, or `PTTYPE` for a partition table):
    /// "ext4", "LVM2_member", "crypto_LUKS", "gpt".
    pub name: String,
    /// Whether it is a partition table.
    pub table: bool,
    /// `USAGE`: "filesystem", "raid", "crypto", "other".
    pub usage: Option<String>,
    /// `VERSION` ("1.2" for an MD RAID superblock, "1" for LUKS1).
    pub version: Option<String>,
    /// Where its magic is, in bytes from the start of the window probed
    /// (`SBMAGIC_OFFSET` / `PTMAGIC_OFFSET`), when libblkid says.
    pub magic_at: Option<u64>,
}

/// A probe, freed when dropped.
struct Guard<'a>(&'a Lib, Probe);

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        // SAFETY: a probe blkid_new_probe returned, freed once.
        unsafe { (self.0.free_probe)(self.1) }
    }
}

fn new_probe(lib: &Lib, fd: c_int, off: u64, size: u64) -> Result<Guard<'_>, BlkidError> {
    // SAFETY: no arguments; NULL is checked.
    let pr = unsafe { (lib.new_probe)() };
    if pr.is_null() {
        return Err(BlkidError(
            "libblkid could not allocate a probe".to_string(),
        ));
    }
    let g = Guard(lib, pr);
    // SAFETY: a live probe and an open descriptor the caller keeps open
    // while the probe lives (it is freed before this module returns).
    let r = unsafe { (lib.set_device)(pr, fd, off as i64, size as i64) };
    if r != 0 {
        return Err(BlkidError(format!(
            "libblkid cannot probe {size} bytes at offset {off}: {}",
            std::io::Error::last_os_error()
        )));
    }
    Ok(g)
}

fn value(lib: &Lib, pr: Probe, name: &CStr) -> Option<String> {
    let mut data: *const c_char = std::ptr::null();
    let mut len = 0usize;
    // SAFETY: a live probe, a NUL-terminated name and two out-pointers
    // to locals; the value returned is owned by the probe and copied at
    // once, before the probe changes.
    let r = unsafe { (lib.lookup_value)(pr, name.as_ptr(), &mut data, &mut len) };
    if r != 0 || data.is_null() {
        return None;
    }
    // SAFETY: libblkid's values are NUL-terminated strings.
    let s = unsafe { CStr::from_ptr(data) }
        .to_string_lossy()
        .into_owned();
    Some(s)
}

/// Every superblock (filesystem, RAID member, volume, encrypted volume,
/// swap...) and partition table libblkid knows, found in the window of
/// `size` bytes at `off` of the open device `fd` (size 0: to its end).
/// Bad checksums are accepted (a damaged superblock is still data) and a
/// GPT is looked for even with no protective MBR (so a GPT whose MBR is
/// gone, or whose primary header is, by its backup at the end).
pub fn probe(fd: c_int, off: u64, size: u64) -> Result<Vec<Found>, BlkidError> {
    let lib = lib()?;
    let g = new_probe(lib, fd, off, size)?;
    let pr = g.1;
    // SAFETY: a live probe; flags from blkid.h (all four calls).
    unsafe {
        (lib.enable_superblocks)(pr, 1);
        (lib.set_superblocks_flags)(
            pr,
            SUBLKS_TYPE | SUBLKS_USAGE | SUBLKS_VERSION | SUBLKS_MAGIC | SUBLKS_BADCSUM,
        );
        (lib.enable_partitions)(pr, 1);
        (lib.set_partitions_flags)(pr, PARTS_FORCE_GPT);
    }
    let mut out = Vec::new();
    // Each call finds the next signature; 1: nothing more. (The bound
    // only guards against a library that never ends.)
    for _ in 0..1024 {
        // SAFETY: a live probe set up above.
        let r = unsafe { (lib.do_probe)(pr) };
        if r == 1 {
            break;
        }
        if r != 0 {
            return Err(BlkidError(format!(
                "libblkid could not probe it: {}",
                std::io::Error::last_os_error()
            )));
        }
        let at = |name: &CStr| value(lib, pr, name).and_then(|v| v.trim().parse::<u64>().ok());
        if let Some(name) = value(lib, pr, c"TYPE") {
            out.push(Found {
                name,
                table: false,
                usage: value(lib, pr, c"USAGE"),
                version: value(lib, pr, c"VERSION"),
                magic_at: at(c"SBMAGIC_OFFSET"),
            });
        } else if let Some(name) = value(lib, pr, c"PTTYPE") {
            out.push(Found {
                name,
                table: true,
                usage: None,
                version: None,
                magic_at: at(c"PTMAGIC_OFFSET"),
            });
        }
    }
    Ok(out)
}

/// The partitions (start and size in bytes) of the partition table
/// libblkid finds on the whole device `fd` — its primary or, where that
/// is gone, its backup (GPT) — empty when there is none.
pub fn partitions(fd: c_int) -> Result<Vec<(u64, u64)>, BlkidError> {
    let lib = lib()?;
    let g = new_probe(lib, fd, 0, 0)?;
    let pr = g.1;
    // SAFETY: a live probe; flags from blkid.h. Only the partitions chain
    // runs for the list below.
    unsafe {
        (lib.enable_superblocks)(pr, 0);
        (lib.enable_partitions)(pr, 1);
        (lib.set_partitions_flags)(pr, PARTS_FORCE_GPT);
    }
    // SAFETY: a live probe; the list is owned by the probe (not freed
    // here) and read before the probe is.
    let ls = unsafe { (lib.get_partitions)(pr) };
    if ls.is_null() {
        return Ok(Vec::new());
    }
    // SAFETY: a list the probe returned.
    let n = unsafe { (lib.numof_partitions)(ls) };
    let mut out = Vec::new();
    for i in 0..n.max(0) {
        // SAFETY: an index below the list's length.
        let p = unsafe { (lib.get_partition)(ls, i) };
        if p.is_null() {
            continue;
        }
        // SAFETY: a partition of the list (both in 512-byte sectors).
        let (start, len) = unsafe { ((lib.partition_get_start)(p), (lib.partition_get_size)(p)) };
        if start >= 0 && len > 0 {
            out.push((start as u64 * 512, len as u64 * 512));
        }
    }
    Ok(out)
}
