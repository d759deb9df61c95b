//! Loop devices for tests: a block device over a small image file in a
//! temporary directory, detached when the guard drops (also when the test
//! panics). Needs root and `losetup`; otherwise `LoopDev::new` returns
//! `None` after `common::missing` (which fails the test in strict mode),
//! so tests can skip.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{missing, Bounded};

pub struct LoopDev {
    pub path: PathBuf,
    pub image: PathBuf,
}

impl LoopDev {
    /// Attaches a loop device over a new image of `size` bytes (zeroed,
    /// sparse) named `name` in `dir`. `partscan` asks for partition nodes.
    pub fn with_image(dir: &Path, name: &str, size: u64, partscan: bool) -> Option<LoopDev> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            missing("loop devices need root");
            return None;
        }
        let image = dir.join(name);
        let f = std::fs::File::create(&image).expect("create image");
        f.set_len(size).expect("size image");
        drop(f);
        Self::attach(&image, partscan)
    }

    pub fn new(dir: &Path, size: u64) -> Option<LoopDev> {
        Self::with_image(dir, "loop.img", size, false)
    }

    /// Attaches an existing image file.
    pub fn attach(image: &Path, partscan: bool) -> Option<LoopDev> {
        let mut cmd = Command::new("losetup");
        cmd.arg("-f").arg("--show");
        if partscan {
            cmd.arg("-P");
        }
        let out = match cmd.arg(image).output_bounded() {
            Ok(o) => o,
            Err(e) => {
                missing(&format!(
                    "cannot run losetup (apt-get install util-linux): {e}"
                ));
                return None;
            }
        };
        if !out.status.success() {
            missing(&format!(
                "losetup failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
            return None;
        }
        let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        Some(LoopDev {
            path,
            image: image.to_path_buf(),
        })
    }

    pub fn as_str(&self) -> &str {
        self.path.to_str().expect("utf-8 device path")
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.path).status();
    }
}

/// Writes `bytes` at `offset` of a file (an image), without truncating.
pub fn poke(path: &Path, offset: u64, bytes: &[u8]) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .expect("open image");
    f.write_all_at(bytes, offset).expect("write image");
    f.sync_all().expect("sync image");
}

/// A mount of a device on a directory, unmounted when dropped.
pub struct Mount {
    pub dir: PathBuf,
}

impl Mount {
    pub fn new(dev: &Path, dir: &Path) -> Option<Mount> {
        Self::with_options(dev, dir, "defaults")
    }

    /// Mounts with `mount -o options` (e.g. "ro").
    pub fn with_options(dev: &Path, dir: &Path, options: &str) -> Option<Mount> {
        if let Err(e) = std::fs::create_dir_all(dir) {
            missing(&format!("cannot create {}: {e}", dir.display()));
            return None;
        }
        let ok = Command::new("mount")
            .args(["-o", options])
            .arg(dev)
            .arg(dir)
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !ok {
            missing(&format!("cannot mount {}", dev.display()));
            return None;
        }
        Some(Mount {
            dir: dir.to_path_buf(),
        })
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let done = Command::new("umount")
            .arg(&self.dir)
            .status()
            .is_ok_and(|s| s.success());
        if !done {
            // Still busy (a process the test started has not exited):
            // detach it now, the kernel finishes when it is free.
            let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
        }
    }
}
