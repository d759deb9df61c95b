//! Memory for a job's I/O buffers (`mem`/`iomem`, `hugepage-size`) and
//! memory pinned to shrink the machine (`lockmem`).
//!
//! - **Planned before it is had** ([`check_plan`]): the memory each clone
//!   will take (its buffers: iodepth × the largest block size, plus the
//!   `iomem_align` padding, its `lockmem`, its random map) is added up over
//!   the clones that run at once, and a run that would need more than
//!   [`RAM_SHARE_PERCENT`] % of the machine's memory is refused with one
//!   line before anything is allocated or written.
//! - **Alignment costs nothing it does not use**: `iomem_align` aligns
//!   the start of the pool (at most [`MAX_IOMEM_ALIGN`]); the padding is
//!   reserved address space in an anonymous mapping, never touched.
//! - **A buffer file is the user's unless the run made it**
//!   (`mem=mmap:FILE`, `mmapshared:FILE`, `mmaphuge:FILE`): a file that
//!   does not exist is created exclusively (no link followed, through its
//!   directory's handle), sized, and removed when the job ends, as fio
//!   removes the file it created. `mmap:FILE` maps an existing file
//!   privately, as fio does: its contents are never changed, and it is
//!   neither truncated nor extended (fio truncates it to the buffers'
//!   size). The shared types write the buffers into the file, so an
//!   existing file is refused unless iomark created it or
//!   `allow_destroy_data=1` (checked before the run, see [`check_plan`]).

use crate::sys::{Area, AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::Arc;

use crate::job::spec::MemType;

/// The largest `iomem_align` accepted (bytes).
pub use crate::job::options::MAX_IOMEM_ALIGN;

/// The share of the machine's memory the clones that run at once may
/// plan to take for buffers, pinned memory and random maps.
pub const RAM_SHARE_PERCENT: u64 = 75;

enum Backing {
    Heap(std::alloc::Layout),
    /// A mapping (anonymous, shared, huge or of a file; on Windows
    /// committed pages or a view) or an attached System V segment,
    /// released when dropped.
    Area(Area),
    /// Released (while the memory is dropped).
    Released,
}

/// A zeroed, aligned area for `size` bytes of buffers.
pub struct BufferMemory {
    /// Start of the area the buffers use (aligned).
    pub ptr: *mut u8,
    pub size: usize,
    base: *mut u8,
    backing: Backing,
    /// The buffer file this job created (removed when dropped).
    made: Option<MadeFile>,
}

/// A buffer file the job created: its directory's handle and its name.
struct MadeFile {
    dir: Arc<OwnedFd>,
    name: std::ffi::CString,
}

// SAFETY: the memory belongs to this value; one thread uses it at a time.
unsafe impl Send for BufferMemory {}

/// Why memory for buffers (`mem`) or `lockmem` cannot be had; the job
/// reports ENOMEM.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("{0}")]
    Layout(#[from] std::alloc::LayoutError),
    #[error("cannot allocate {0} bytes of I/O buffers")]
    Heap(usize),
    #[error("mem={mem}: cannot get a {len}-byte shared memory segment: {source}{}", hint(*huge))]
    ShmGet {
        mem: &'static str,
        len: usize,
        source: std::io::Error,
        huge: bool,
    },
    #[error("mem={mem}: cannot attach the shared memory segment: {source}")]
    ShmAttach {
        mem: &'static str,
        source: std::io::Error,
    },
    #[error("mem={mem}: cannot map {len} bytes: {source}{}", hint(*huge))]
    Map {
        mem: &'static str,
        len: usize,
        source: std::io::Error,
        huge: bool,
    },
    /// The file behind `mem=mmap:FILE` cannot be opened or sized (`what`).
    #[error("mem={mem}: cannot {what} '{}': {source}", path.display())]
    Backing {
        mem: &'static str,
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// The file behind `mem=…:FILE` is not one the job may use.
    #[error("mem={mem}: refusing to use '{}': {why}", path.display())]
    BackingRefused {
        mem: &'static str,
        path: PathBuf,
        why: String,
    },
    /// A memory type this system does not have.
    #[error("mem={0} is not available on {os}", os = crate::sys::OS_NAME)]
    Platform(&'static str),
    #[error("lockmem: cannot map {len} bytes: {source}")]
    LockMap { len: usize, source: std::io::Error },
    #[error("lockmem: cannot lock {len} bytes: {source} (see ulimit -l)")]
    Lock { len: usize, source: std::io::Error },
}

/// What a buffer file may do to a file (`mem=mmap:FILE` and the like):
/// write into an existing one iomark did not create (`allow_destroy`,
/// `allow_destroy_data=1`), and the run token a file it creates carries
/// (`Placement::run_token`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Consent<'a> {
    pub allow_destroy: bool,
    pub run_token: Option<&'a str>,
}

impl BufferMemory {
    /// Allocates `size` bytes aligned to `align` from `mem`; huge-page
    /// types round the area up to whole pages of `huge` bytes. Only the
    /// `size` bytes used are ever touched: the alignment padding is
    /// address space (an anonymous mapping for a large alignment).
    pub fn new(size: usize, align: usize, mem: &MemType, huge: u64) -> Result<Self, MemoryError> {
        Self::with_consent(size, align, mem, huge, Consent::default())
    }

    /// As [`BufferMemory::new`]; `consent.allow_destroy` (`allow_destroy_data=1`)
    /// lets a shared mapping write into an existing file iomark did not
    /// create.
    pub fn with_consent(
        size: usize,
        align: usize,
        mem: &MemType,
        huge: u64,
        consent: Consent<'_>,
    ) -> Result<Self, MemoryError> {
        let size = size.max(1);
        let page = crate::sys::page_size() as usize;
        if let MemType::Malloc = mem {
            if align <= page {
                return Self::heap(size, align);
            }
        }
        // Mappings and segments start on a page: leave room to align further.
        let pad = if align > page { align } else { 0 };
        let mut len = size.checked_add(pad).ok_or(MemoryError::Heap(usize::MAX))?;
        let is_huge = matches!(mem, MemType::ShmHuge | MemType::MmapHuge(_));
        if is_huge {
            let h = huge.max(page as u64) as usize;
            len = len.div_ceil(h) * h;
        }
        let mut made = None;
        let (area, fresh) = match mem {
            MemType::Malloc => (padded(mem, len)?, true),
            MemType::Shm | MemType::ShmHuge => (shm_segment(mem, len, is_huge)?, true),
            MemType::Mmap(file) | MemType::MmapHuge(file) | MemType::MmapShared(file) => {
                let file = file.as_ref().map(|f| (f, consent));
                (mapping(mem, file, len, is_huge, &mut made)?, file.is_none())
            }
        };
        let base = area.ptr();
        let backing = Backing::Area(area);
        let off = base.align_offset(align);
        // SAFETY: `len` leaves room for the offset.
        let ptr = unsafe { base.add(off) };
        if !fresh {
            // A file's pages may hold its contents: clear what is used (a
            // private mapping copies the pages; the file is not changed).
            // SAFETY: `size` bytes from `ptr` are inside the area.
            unsafe { std::ptr::write_bytes(ptr, 0, size) };
        }
        Ok(BufferMemory {
            ptr,
            size,
            base,
            backing,
            made,
        })
    }

    /// `mem=malloc` with at most a page of alignment: zeroed heap memory.
    fn heap(size: usize, align: usize) -> Result<Self, MemoryError> {
        let layout = std::alloc::Layout::from_size_align(size, align)?;
        // SAFETY: non-zero size, valid alignment.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(MemoryError::Heap(size));
        }
        Ok(BufferMemory {
            ptr,
            size,
            base: ptr,
            backing: Backing::Heap(layout),
            made: None,
        })
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: `size` bytes from `ptr` belong to self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.size) }
    }
}

/// `mem=shm`, `shmhuge`: a private System V segment of `len` bytes.
fn shm_segment(mem: &MemType, len: usize, is_huge: bool) -> Result<Area, MemoryError> {
    if !crate::sys::HAS_SHM {
        return Err(MemoryError::Platform(mem.name()));
    }
    Area::shm(len, is_huge).map_err(|e| match e {
        crate::sys::ShmError::Get(source) => MemoryError::ShmGet {
            mem: mem.name(),
            len,
            source,
            huge: is_huge,
        },
        crate::sys::ShmError::Attach(source) => MemoryError::ShmAttach {
            mem: mem.name(),
            source,
        },
    })
}

/// `mem=malloc` aligned beyond a page: `len` bytes of zeroed address
/// space, whose padding is never touched.
fn padded(mem: &MemType, len: usize) -> Result<Area, MemoryError> {
    Area::reserve(len).map_err(|source| MemoryError::Map {
        mem: mem.name(),
        len,
        source,
        huge: false,
    })
}

/// `mem=mmap`, `mmaphuge`, `mmapshared`: an anonymous mapping of `len`
/// bytes, or one of `file`: private for `mmap` (over an anonymous area
/// where the file is shorter, where the system can), shared for the
/// others. A file the job creates is noted in `made`. Huge pages are
/// refused before the run where the system has none, and here again.
fn mapping(
    mem: &MemType,
    file: Option<(&PathBuf, Consent<'_>)>,
    len: usize,
    is_huge: bool,
    made: &mut Option<MadeFile>,
) -> Result<Area, MemoryError> {
    if is_huge && !crate::sys::HAS_HUGE_MAPS {
        return Err(MemoryError::Platform(mem.name()));
    }
    let shared = matches!(mem, MemType::MmapShared(_) | MemType::MmapHuge(_));
    let map_err = |source: std::io::Error| MemoryError::Map {
        mem: mem.name(),
        len,
        source,
        huge: is_huge,
    };
    let Some((path, consent)) = file else {
        return Area::anonymous(len, shared, is_huge).map_err(map_err);
    };
    let (fd, file_len) = open_backing(path, len, mem, consent, made)?;
    if !shared && file_len < len as u64 && !crate::sys::PRIVATE_MAP_PAST_END {
        return Err(MemoryError::BackingRefused {
            mem: mem.name(),
            path: path.clone(),
            why: format!(
                "it holds {file_len} bytes, fewer than the {len} the buffers take, and Windows \
                 cannot map a file privately past its end without extending it (name a larger \
                 file, or a new one)"
            ),
        });
    }
    Area::of_file(fd.as_raw_fd(), file_len, len, shared).map_err(map_err)
}

/// What a failure with huge pages (`huge`) adds to its message.
fn hint(huge: bool) -> &'static str {
    if huge {
        " (huge pages must be reserved: see /proc/sys/vm/nr_hugepages and hugepage-size)"
    } else {
        ""
    }
}

/// Opens the file behind `mem=…:FILE` through its directory's handle,
/// never following a link: an existing one as it is (read-write only
/// when the mapping is shared), a missing one created exclusively and
/// sized to `len` (noted in `made`, to be removed). Returns the
/// descriptor and the file's size.
fn open_backing(
    path: &std::path::Path,
    len: usize,
    mem: &MemType,
    consent: Consent<'_>,
    made: &mut Option<MadeFile>,
) -> Result<(OwnedFd, u64), MemoryError> {
    use super::dirs;
    let fail = |what: &'static str, source: std::io::Error| MemoryError::Backing {
        mem: mem.name(),
        what,
        path: path.to_path_buf(),
        source,
    };
    let dir = dirs::Dir::of(path).map_err(|e| fail("open", e))?;
    let dfd = dir.get(false).map_err(|e| match e {
        dirs::DirError::Sys { source, .. } => fail("open", source),
        e => fail("open", std::io::Error::other(e.to_string())),
    })?;
    let name = dirs::file_name(path).map_err(|e| fail("open", e))?;
    let shared = !matches!(mem, MemType::Mmap(_));
    let key = super::owned::NameKey::new(dfd.as_raw_fd(), &name);
    let mut claim = super::owned::creating(key);
    let (fd, new) = create_or_open(&dfd, &name, shared).map_err(|(what, e)| fail(what, e))?;
    let refuse = |why: String| MemoryError::BackingRefused {
        mem: mem.name(),
        path: path.to_path_buf(),
        why,
    };
    if let Some(fs) = super::safety::pseudo_filesystem(fd.as_raw_fd()) {
        return Err(refuse(format!("it is on {fs}, a kernel interface")));
    }
    let meta = std::fs::File::from(fd.try_clone().map_err(|e| fail("open", e))?)
        .metadata()
        .map_err(|e| fail("open", e))?;
    if !meta.is_file() {
        return Err(refuse("it is not a regular file".into()));
    }
    // Through the handle: on Windows the metadata holds no file index.
    let id = super::safety::FileId::of_fd(fd.as_raw_fd()).map_err(|e| fail("open", e))?;
    let ours = super::owned::created_this_run(&id) || super::safety::marked(fd.as_raw_fd());
    if shared && !new && !ours && !consent.allow_destroy {
        return Err(refuse(
            "it exists and iomark did not create it, and the buffers would be written into it \
             (name a new file, or set allow_destroy_data=1)"
                .into(),
        ));
    }
    if new {
        claim.made(id, consent.run_token);
        super::safety::mark_created(fd.as_raw_fd(), consent.run_token);
        *made = Some(MadeFile {
            dir: dfd.clone(),
            name: name.clone(),
        });
    }
    let mut size = meta.len();
    // Only a file the job may write is sized (its own, or one allowed for
    // a shared mapping); a private mapping never needs it.
    if size < len as u64 && (new || shared) {
        std::fs::File::from(fd.try_clone().map_err(|e| fail("size", e))?)
            .set_len(len as u64)
            .map_err(|e| fail("size", e))?;
        size = len as u64;
    }
    Ok((fd, size))
}

/// Creates `name` in `dir` exclusively (true), or opens what is there
/// without following a link (read-write only for a `shared` mapping);
/// the failure says what was tried.
fn create_or_open(
    dir: &OwnedFd,
    name: &std::ffi::CStr,
    shared: bool,
) -> Result<(OwnedFd, bool), (&'static str, std::io::Error)> {
    use super::dirs::open_at;
    let base = crate::sys::O_NOFOLLOW | crate::sys::O_NONBLOCK | crate::sys::O_NOCTTY;
    let new = base | crate::sys::O_RDWR | crate::sys::O_CREAT | crate::sys::O_EXCL;
    match open_at(dir.as_raw_fd(), name, new, 0o600) {
        Ok(fd) => Ok((fd, true)),
        Err(e) if crate::sys::errno_of(&e) == Some(libc::EEXIST) => {
            let mode = if shared {
                crate::sys::O_RDWR
            } else {
                crate::sys::O_RDONLY
            };
            open_at(dir.as_raw_fd(), name, base | mode, 0)
                .map(|fd| (fd, false))
                .map_err(|e| ("open", e))
        }
        Err(e) => Err(("create", e)),
    }
}

impl Drop for BufferMemory {
    fn drop(&mut self) {
        match std::mem::replace(&mut self.backing, Backing::Released) {
            // SAFETY: the heap memory `heap` allocated with this layout.
            Backing::Heap(layout) => unsafe { std::alloc::dealloc(self.base, layout) },
            // Released before the file goes: Windows cannot remove a
            // file while it is mapped.
            Backing::Area(area) => drop(area),
            Backing::Released => {}
        }
        // The buffer file the job created goes, as fio removes it (only
        // while its name still is that file).
        if let Some(m) = self.made.take() {
            let _ = super::owned::remove(m.dir.as_raw_fd(), &m.name, None);
        }
    }
}

/// The memory one clone plans to take, by what takes it (bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Planned {
    /// The buffer pool: iodepth units of the largest block size (whole
    /// pages, or huge pages), and the `iomem_align` padding.
    pub buffers: u128,
    /// `lockmem`.
    pub locked: u128,
    /// The random maps of its files (one bit per block).
    pub random_map: u128,
    /// The blocks those maps cover.
    pub map_blocks: u128,
}

impl Planned {
    pub fn total(&self) -> u128 {
        self.buffers + self.locked + self.random_map
    }

    fn add(&mut self, o: &Planned) {
        self.buffers += o.buffers;
        self.locked += o.locked;
        self.random_map += o.random_map;
        self.map_blocks += o.map_blocks;
    }
}

/// What `job` will allocate, computed from its options as the worker
/// allocates it (an upper bound: a page of alignment per unit).
pub fn planned(job: &super::plan::PlannedJob) -> Planned {
    let s = &job.spec;
    let info = s.io.ioengine.info();
    let offload = super::offload::OffloadEngine::wanted(s);
    let depth = if info.caps.sync && !offload {
        1
    } else {
        u128::from(s.io.iodepth.max(1))
    };
    let page = u128::from(crate::sys::page_size());
    let max_bs = s.io.bs.iter().map(|b| b.max()).max().unwrap_or(4096);
    let unit = u128::from(max_bs).div_ceil(page) * page;
    let mut buffers = depth * unit;
    if u128::from(s.buf.iomem_align) > page {
        buffers += u128::from(s.buf.iomem_align);
    }
    if matches!(s.buf.mem, MemType::ShmHuge | MemType::MmapHuge(_)) {
        let h = u128::from(s.buf.hugepage_size.max(4096));
        buffers = buffers.div_ceil(h) * h;
    }
    let map_blocks = random_map_blocks(job);
    Planned {
        buffers,
        locked: u128::from(s.buf.lockmem),
        // One bit per block, and the levels above it (1/63 more).
        random_map: map_blocks.div_ceil(8) * 64 / 63,
        map_blocks,
    }
}

/// The blocks the random maps of a job cover (none without random I/O,
/// with `norandommap`, `blockalign`, the LFSR generator, or
/// `softrandommap`, which goes on without one when it does not fit).
fn random_map_blocks(job: &super::plan::PlannedJob) -> u128 {
    let io = &job.spec.io;
    let uses_map = io.rw.is_random()
        && !io.norandommap
        && !io.softrandommap
        && io.blockalign.iter().all(|a| a.is_none())
        && io.random_generator != crate::job::spec::RandomGenerator::Lfsr;
    if !uses_map {
        return 0;
    }
    let min_bs = crate::job::spec::Ddir::ALL
        .iter()
        .filter(|d| io.rw.has(**d))
        .map(|d| io.bs[d.idx()].min())
        .min()
        .unwrap_or(4096)
        .max(1);
    job.files
        .iter()
        .map(|f| u128::from(f.region.len / min_bs))
        .sum()
}

/// The machine's memory in bytes (0 when unknown).
pub fn ram_bytes() -> u64 {
    crate::sys::ram_bytes()
}

/// `n` bytes in the unit that reads best (one decimal).
fn readable(n: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if n < 1024 {
        return format!("{n}B");
    }
    let mut v = n as f64 / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1}{}", UNITS[u])
}

/// Refuses, before anything is allocated, a plan whose clones that run
/// at once (one stonewall phase) would take more than
/// [`RAM_SHARE_PERCENT`] % of `ram` bytes of memory; one line naming the
/// phase's largest job and what takes the memory.
pub fn check_plan(plan: &super::plan::Plan, ram: u64) -> Result<(), super::error::RunError> {
    if ram == 0 {
        return Ok(());
    }
    let limit = u128::from(ram) * u128::from(RAM_SHARE_PERCENT) / 100;
    for phase in 0..plan.phases() {
        let mut sum = Planned::default();
        let mut largest: Option<(&str, Planned)> = None;
        for job in plan.jobs.iter().filter(|j| j.phase == phase) {
            let p = planned(job);
            sum.add(&p);
            if largest.is_none_or(|(_, l)| p.total() > l.total()) {
                largest = Some((job.name(), p));
            }
        }
        if sum.total() <= limit {
            continue;
        }
        let h = |n: u128| readable(u64::try_from(n).unwrap_or(u64::MAX));
        let (name, p) = largest.unwrap_or(("?", sum));
        if p.random_map > p.buffers + p.locked {
            return Err(super::error::RunError::Plan(format!(
                "job '{name}': no memory for the random map of {} blocks ({}, and the jobs that \
                 run at once would take {}, more than {RAM_SHARE_PERCENT}% of this machine's \
                 {}): set norandommap=1, or softrandommap=1 to go on without it",
                p.map_blocks,
                h(p.random_map),
                h(sum.total()),
                h(u128::from(ram))
            )));
        }
        return Err(super::error::RunError::Plan(format!(
            "the jobs that run at once would take {} of memory, more than {RAM_SHARE_PERCENT}% \
             of this machine's {}; each clone of job '{name}' takes {} ({} of buffers: iodepth \
             × largest block size, {} pinned by lockmem, {} of random maps): lower iodepth, bs, \
             numjobs or lockmem (norandommap=1 drops the random map)",
            h(sum.total()),
            h(u128::from(ram)),
            h(p.total()),
            h(p.buffers),
            h(p.locked),
            h(p.random_map)
        )));
    }
    Ok(())
}

/// Refuses, before the run, a buffer file (`mem=…:FILE`) the job may not
/// use: a link, a file on a pseudo-filesystem, or (for the shared
/// mappings, which write the buffers into it) an existing file iomark
/// did not create, unless `allow_destroy_data=1`.
pub fn check_buffer_file(spec: &crate::job::JobSpec) -> Result<(), super::error::Refusal> {
    let (path, shared) = match &spec.buf.mem {
        MemType::Mmap(Some(f)) => (f, false),
        MemType::MmapShared(Some(f)) | MemType::MmapHuge(Some(f)) => (f, true),
        _ => return Ok(()),
    };
    let mem = spec.buf.mem.name();
    let refuse = |why: &str| {
        super::error::Refusal(format!(
            "job '{}': mem={mem}: refusing to use '{}': {why}",
            spec.name,
            path.display()
        ))
    };
    let fs = super::dirs::Dir::of(path)
        .ok()
        .and_then(|d| super::safety::pseudo_filesystem(d.base_fd()));
    if let Some(fs) = fs {
        return Err(refuse(&format!("it is on {fs}, a kernel interface")));
    }
    match std::fs::symlink_metadata(path) {
        Err(_) => Ok(()),
        Ok(m) if m.file_type().is_symlink() => Err(refuse(
            "it is a symbolic link, and iomark does not follow links to buffer files",
        )),
        Ok(m) if !m.is_file() => Err(refuse("it is not a regular file")),
        Ok(_)
            if shared
                && !spec.file.allow_destroy_data
                && !super::safety::created_by_iomark(path) =>
        {
            Err(refuse(
                "it exists and iomark did not create it, and the buffers would be written into \
                 it (name a new file, or set allow_destroy_data=1)",
            ))
        }
        Ok(_) => Ok(()),
    }
}

/// `lockmem`: this many bytes pinned (mlock(2), `VirtualLock`) while
/// the job runs.
pub struct LockedMemory {
    _area: Area,
}

impl LockedMemory {
    pub fn new(len: usize) -> Result<Self, MemoryError> {
        let mut area =
            Area::committed(len).map_err(|source| MemoryError::LockMap { len, source })?;
        area.lock()
            .map_err(|source| MemoryError::Lock { len, source })?;
        Ok(LockedMemory { _area: area })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    // Unix files: links, FIFOs, devices, modes.
    #[cfg(unix)]
    fn every_backing_gives_zeroed_aligned_memory() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("buf");
        std::fs::write(&file, vec![7u8; 1 << 16]).unwrap();
        for mem in [
            MemType::Malloc,
            MemType::Shm,
            MemType::Mmap(None),
            MemType::MmapShared(None),
            MemType::Mmap(Some(file.clone())),
        ] {
            for align in [512usize, 4096, 65536] {
                let mut m = BufferMemory::new(40_000, align, &mem, 2 << 20).unwrap();
                assert_eq!(m.ptr as usize % align, 0, "{mem:?}");
                let s = m.as_mut_slice();
                assert!(s.len() >= 40_000);
                assert!(s.iter().all(|b| *b == 0), "{mem:?}");
                s.fill(0xa5);
            }
        }
        // The file behind the private mapping kept its contents.
        assert_eq!(std::fs::read(&file).unwrap(), vec![7u8; 1 << 16]);
        let locked = LockedMemory::new(1 << 20);
        // Pinning needs RLIMIT_MEMLOCK room (root has it).
        // SAFETY: geteuid has no precondition.
        if unsafe { libc::geteuid() } == 0 {
            assert!(locked.is_ok(), "{:?}", locked.err());
        }
    }

    /// Resident memory of this process, in bytes.
    fn rss() -> u64 {
        let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
        let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
        pages * crate::sys::page_size()
    }

    #[test]
    fn alignment_padding_is_never_touched() {
        let before = rss();
        let mut m = BufferMemory::new(1 << 20, 1 << 30, &MemType::Malloc, 2 << 20).unwrap();
        assert_eq!(m.ptr as usize % (1 << 30), 0);
        m.as_mut_slice().fill(1);
        // 1 MiB used; the 1 GiB of padding stays address space.
        assert!(rss() < before + (256 << 20), "{} -> {}", before, rss());
    }

    #[test]
    #[cfg(windows)]
    fn windows_maps_anonymous_buffers_from_the_paging_file() {
        for mem in [MemType::Mmap(None), MemType::MmapShared(None)] {
            for align in [4096, 1 << 20] {
                let mut m = BufferMemory::new(3 << 16, align, &mem, 0).unwrap();
                assert!(
                    matches!(&m.backing, Backing::Area(a) if a.is_view()),
                    "{mem:?}"
                );
                assert_eq!(m.ptr as usize % align, 0, "{mem:?} {align}");
                assert!(m.as_mut_slice().iter().all(|b| *b == 0));
                m.as_mut_slice().fill(0x5a);
                assert!(m.as_mut_slice().iter().all(|b| *b == 0x5a));
            }
        }
    }

    #[test]
    #[cfg(windows)]
    fn windows_maps_buffer_files_privately_or_shared() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("user.db");
        let data: Vec<u8> = (0..(128u32 << 10)).map(|i| (i % 251) as u8).collect();
        std::fs::write(&file, &data).unwrap();
        // Private: zeroed buffers, the file unchanged.
        let mut m =
            BufferMemory::new(64 << 10, 4096, &MemType::Mmap(Some(file.clone())), 0).unwrap();
        assert!(matches!(&m.backing, Backing::Area(a) if a.is_view()));
        assert!(m.as_mut_slice().iter().all(|b| *b == 0));
        m.as_mut_slice().fill(0xa5);
        drop(m);
        assert_eq!(std::fs::read(&file).unwrap(), data);
        // Shorter than the buffers: refused, unchanged.
        let e = BufferMemory::new(256 << 10, 4096, &MemType::Mmap(Some(file.clone())), 0)
            .err()
            .unwrap();
        assert!(e.to_string().contains("past its end"), "{e}");
        assert_eq!(std::fs::read(&file).unwrap(), data);
        // A user's file is not written by a shared mapping.
        let shared = MemType::MmapShared(Some(file.clone()));
        let e = BufferMemory::new(4096, 4096, &shared, 0).err().unwrap();
        assert!(e.to_string().contains("iomark did not create it"), "{e}");
        // A file the job makes: sized, written through, removed.
        let new = dir.path().join("new.buf");
        for mem in [
            MemType::Mmap(Some(new.clone())),
            MemType::MmapShared(Some(new.clone())),
        ] {
            let mut m = BufferMemory::new(64 << 10, 4096, &mem, 0).unwrap();
            m.as_mut_slice().fill(3);
            assert_eq!(std::fs::metadata(&new).unwrap().len(), 64 << 10, "{mem:?}");
            drop(m);
            assert!(!new.exists(), "{mem:?}");
        }
        assert_eq!(std::fs::read(&file).unwrap(), data);
    }

    #[test]
    // mem=mmap:FILE is Unix-only.
    #[cfg(unix)]
    fn a_private_buffer_file_keeps_its_contents_and_size() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("user.db");
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&file, &data).unwrap();
        let mut m =
            BufferMemory::new(64 << 10, 4096, &MemType::Mmap(Some(file.clone())), 0).unwrap();
        let s = m.as_mut_slice();
        assert!(s.iter().all(|b| *b == 0));
        s.fill(0xa5);
        drop(m);
        assert_eq!(std::fs::read(&file).unwrap(), data);
    }

    #[test]
    // Unix files: links, FIFOs, devices, modes.
    #[cfg(unix)]
    fn a_buffer_file_the_job_made_goes_and_a_users_shared_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("new.buf");
        for mem in [
            MemType::Mmap(Some(file.clone())),
            MemType::MmapShared(Some(file.clone())),
        ] {
            let mut m = BufferMemory::new(64 << 10, 4096, &mem, 0).unwrap();
            m.as_mut_slice().fill(3);
            assert!(file.exists());
            drop(m);
            assert!(!file.exists(), "{mem:?}");
        }
        std::fs::write(&file, b"precious").unwrap();
        let shared = MemType::MmapShared(Some(file.clone()));
        let e = BufferMemory::new(4096, 4096, &shared, 0).err().unwrap();
        assert!(e.to_string().contains("iomark did not create it"), "{e}");
        assert_eq!(std::fs::read(&file).unwrap(), b"precious");
        let link = dir.path().join("link.buf");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        let e = BufferMemory::new(4096, 4096, &MemType::Mmap(Some(link)), 0).err();
        assert!(e.is_some());
        assert_eq!(std::fs::read(&file).unwrap(), b"precious");
    }

    #[test]
    fn a_plan_over_the_share_of_memory_is_refused_before_allocating() {
        let spec = crate::job::test_spec(&[
            ("ioengine", "null"),
            ("size", "64m"),
            ("bs", "1m"),
            ("iodepth", "16"),
            ("numjobs", "4"),
        ]);
        let plan = super::super::plan::plan(&[spec]).unwrap();
        assert_eq!(planned(&plan.jobs[0]).buffers, 16 << 20);
        let e = check_plan(&plan, 64 << 20).unwrap_err().to_string();
        assert!(
            e.contains("64.0MiB of memory, more than 75% of this machine's 64.0MiB"),
            "{e}"
        );
        assert!(e.contains("each clone of job 't' takes 16.0MiB"), "{e}");
        assert!(check_plan(&plan, 1 << 30).is_ok());
        let spec = crate::job::test_spec(&[
            ("ioengine", "null"),
            ("size", "1t"),
            ("bs", "512"),
            ("rw", "randread"),
        ]);
        let plan = super::super::plan::plan(&[spec]).unwrap();
        // One bit per 512-byte block of 1 TiB: 256 MiB, and 1/63 more.
        assert_eq!(planned(&plan.jobs[0]).random_map, (256u128 << 20) * 64 / 63);
    }
}
