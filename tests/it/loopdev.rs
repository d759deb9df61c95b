//! Loop devices for tests: a block device over a small image file in a
//! temporary directory, detached when the guard drops (also when the test
//! panics). Needs root and `losetup`; `LoopDev::new` returns `None` with a
//! message otherwise, so tests can skip.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

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
            eprintln!("skipped: loop devices need root");
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
        let out = match cmd.arg(image).output() {
            Ok(o) => o,
            Err(e) => {
                eprintln!("skipped: cannot run losetup: {e}");
                return None;
            }
        };
        if !out.status.success() {
            eprintln!(
                "skipped: losetup failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
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
        std::fs::create_dir_all(dir).ok()?;
        let ok = Command::new("mount")
            .arg(dev)
            .arg(dir)
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !ok {
            eprintln!("skipped: cannot mount {}", dev.display());
            return None;
        }
        Some(Mount {
            dir: dir.to_path_buf(),
        })
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dir).status();
    }
}
