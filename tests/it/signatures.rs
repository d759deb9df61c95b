//! Signatures where they live: each case builds one signature on a small
//! loop device (the bytes written into its image, or the real thing made
//! by its own tool: mkfs.ext4, pvcreate, cryptsetup, mkswap, mkfs.jfs,
//! mkreiserfs, sfdisk), then runs a job that writes at 8 MiB, far from
//! the signature. The job must be refused in one line naming the family,
//! and the image must be unchanged (SHA-256 before and after). A zeroed
//! device of the same size is accepted (no false alarm). Needs root and
//! losetup (see `loopdev`); the tools as `.ci/run` installs them.

use crate::common::*;
use crate::loopdev::{poke, LoopDev};

/// Not a multiple of 64 KiB (nor of 256 KiB), as real devices often are:
/// the end offsets are computed, not assumed.
const SIZE: u64 = (64 << 20) + (36 << 10);

const MD_MAGIC: [u8; 4] = [0xfc, 0x4e, 0x2b, 0xa9];

fn hash(path: &std::path::Path) -> Vec<u8> {
    use sha2::Digest;
    sha2::Sha256::digest(std::fs::read(path).unwrap()).to_vec()
}

/// A write job at 8 MiB on `dev`.
fn write_at_8m(dev: &LoopDev) -> Vec<String> {
    [
        "--name=w",
        "--ioengine=psync",
        "--rw=write",
        "--bs=4k",
        "--size=64k",
        "--offset=8m",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([format!("--filename={}", dev.as_str())])
    .collect()
}

/// Builds a device with `build` (given its image), runs the write job and
/// checks the refusal names `family` and nothing changed; then zeroes the
/// image and checks the same job runs.
fn refused(name: &str, family: &str, build: impl Fn(&std::path::Path)) {
    let dir = tempdir();
    let Some(dev) = LoopDev::with_image(dir.path(), "sig.img", SIZE, false) else {
        return;
    };
    build(&dev.image);
    let before = hash(&dev.image);
    let args = write_at_8m(&dev);
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = run_in(dir.path(), &a);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{name}: {err}");
    assert_eq!(err.trim().lines().count(), 1, "{name}: {err}");
    assert!(err.contains(family), "{name}: {err}");
    assert!(err.contains("allow_destroy_data=1"), "{name}: {err}");
    assert_eq!(hash(&dev.image), before, "{name}: the image changed");
    // The same job on the device zeroed again is accepted.
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&dev.image)
        .unwrap();
    f.set_len(0).unwrap();
    f.set_len(SIZE).unwrap();
    drop(f);
    let o = run_in(dir.path(), &a);
    assert!(o.status.success(), "{name}, zeroed: {}", stderr(&o));
}

#[test]
fn md_superblocks_at_the_end_are_found() {
    refused("MD 0.90", "superblock 0.90, at its end", |img| {
        let off = (SIZE & !0xFFFF) - 0x10000;
        poke(img, off, &MD_MAGIC);
        poke(img, off + 4, &0u32.to_le_bytes());
    });
    refused("MD 1.0", "superblock 1.0, at its end", |img| {
        let off = ((SIZE / 512 - 16) & !7) * 512;
        poke(img, off, &MD_MAGIC);
        poke(img, off + 4, &1u32.to_le_bytes());
    });
}

#[test]
fn md_superblocks_at_the_start_are_found() {
    refused("MD 1.1", "superblock 1.1", |img| {
        poke(img, 0, &MD_MAGIC);
        poke(img, 4, &1u32.to_le_bytes());
    });
    refused("MD 1.2", "superblock 1.2", |img| {
        poke(img, 4096, &MD_MAGIC);
        poke(img, 4100, &1u32.to_le_bytes());
    });
}

#[test]
fn a_gpt_backup_header_alone_is_found() {
    refused("GPT backup", "backup header, at its end", |img| {
        poke(img, SIZE - 512, b"EFI PART");
    });
}

#[test]
fn a_luks2_secondary_header_alone_is_found() {
    for off in [0x4000u64, 0x40000, 0x400000] {
        refused("LUKS2 secondary", "LUKS2", |img| {
            poke(img, off, b"SKUL\xba\xbe\x00\x02");
        });
    }
}

#[test]
fn zfs_labels_at_the_end_are_found() {
    let aligned = SIZE & !((256 << 10) - 1);
    for label in [aligned - (512 << 10), aligned - (256 << 10)] {
        refused("ZFS L2/L3", "ZFS pool member (labels at its end)", |img| {
            // An uberblock in the label's ring, 128 KiB into the label.
            poke(
                img,
                label + (128 << 10) + 3 * 1024,
                &0x00ba_b10cu64.to_le_bytes(),
            );
        });
    }
}

#[test]
fn a_bcache_superblock_is_found() {
    refused("bcache", "bcache", |img| {
        poke(
            img,
            4096 + 24,
            &[
                0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca, 0x82, 0x65, 0xf5, 0x7f, 0x48, 0xba,
                0x6d, 0x81,
            ],
        );
    });
}

#[test]
fn a_filesystem_at_1mib_without_a_partition_table_is_found() {
    let have_mkfs = std::process::Command::new("mkfs.ext4")
        .arg("-V")
        .output_bounded()
        .is_ok_and(|o| o.status.success());
    if !have_mkfs {
        missing("mkfs.ext4 is not installed (apt-get install e2fsprogs)");
        return;
    }
    refused(
        "ext4 at 1 MiB",
        "ext2/3/4 filesystem starting at 1 MiB",
        |img| {
            let o = std::process::Command::new("mkfs.ext4")
                .args(["-q", "-F", "-E", "offset=1048576"])
                .arg(img)
                .arg("4M")
                .output_bounded()
                .expect("run mkfs.ext4");
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            // Nothing before the filesystem: no partition table.
            let head = std::fs::read(img).unwrap();
            assert!(head[..1 << 20].iter().all(|b| *b == 0));
        },
    );
}

/// Runs `cmd` (a tool that makes a signature), failing the test with its
/// output when it fails. `None` (after `missing`): not installed.
fn make(cmd: &mut std::process::Command) -> Option<()> {
    let name = cmd.get_program().to_string_lossy().into_owned();
    match cmd.output_bounded() {
        Ok(o) => {
            assert!(
                o.status.success(),
                "{name}: {}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            Some(())
        }
        Err(e) => {
            missing(&format!("cannot run {name} ({e}); .ci/run installs it"));
            None
        }
    }
}

/// A loop device over `img` from `off` on: a partition whose partition
/// table is gone, as a tool making a signature sees it. Detached when
/// dropped.
struct Window(String);

impl Window {
    fn new(img: &std::path::Path, off: u64) -> Window {
        let o = std::process::Command::new("losetup")
            .args(["-f", "--show", "-o", &off.to_string()])
            .arg(img)
            .output_bounded()
            .expect("run losetup");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        Window(String::from_utf8_lossy(&o.stdout).trim().to_string())
    }
}

impl Drop for Window {
    fn drop(&mut self) {
        let _ = std::process::Command::new("losetup")
            .args(["-d", &self.0])
            .status();
    }
}

/// `tool` run on a partition at 1 MiB of the image, with no table before.
fn at_1mib(img: &std::path::Path, tool: &str, args: &[&str]) {
    let w = Window::new(img, 1 << 20);
    let mut cmd = std::process::Command::new(tool);
    cmd.args(args).arg(&w.0);
    make(&mut cmd).expect("tool installed");
    drop(w);
    let head = std::fs::read(img).unwrap();
    assert!(head[..1 << 20].iter().all(|b| *b == 0), "{tool}: no table");
}

fn have(tool: &str, arg: &str) -> bool {
    let ok = std::process::Command::new(tool)
        .arg(arg)
        .output_bounded()
        .is_ok();
    if !ok {
        missing(&format!("{tool} is not installed (.ci/run installs it)"));
    }
    ok
}

#[test]
fn an_lvm_physical_volume_at_1mib_is_found() {
    if !have("pvcreate", "--version") {
        return;
    }
    refused(
        "LVM2 at 1 MiB",
        "LVM physical volume starting at 1 MiB",
        |img| {
            // No devices file, no udev: only the device named.
            at_1mib(
                img,
                "pvcreate",
                &[
                    "-q",
                    "-y",
                    "-ff",
                    "--config",
                    "devices { use_devicesfile=0 obtain_device_list_from_udev=0 } \
                 global { use_lvmlockd=0 }",
                ],
            );
        },
    );
}

#[test]
fn an_md_1_2_superblock_at_1mib_is_found() {
    // No MD driver here (mdadm --create needs /dev/md*): the superblock's
    // fields libblkid checks, as mdadm writes them, at 4 KiB into a
    // partition at 1 MiB: magic, major version 1, super_offset 8 sectors.
    refused(
        "MD 1.2 at 1 MiB",
        "MD RAID member starting at 1 MiB",
        |img| {
            let sb = (1u64 << 20) + 4096;
            poke(img, sb, &MD_MAGIC);
            poke(img, sb + 4, &1u32.to_le_bytes());
            poke(img, sb + 16, b"iomark-test-uuid");
            poke(img, sb + 32, b"iomark:0");
            poke(img, sb + 92, &2u32.to_le_bytes());
            poke(img, sb + 128, &2048u64.to_le_bytes());
            poke(img, sb + 144, &8u64.to_le_bytes());
            let o = std::process::Command::new("blkid")
                .args(["-p", "-O", "1048576"])
                .arg(img)
                .output_bounded()
                .expect("run blkid");
            let text = String::from_utf8_lossy(&o.stdout);
            assert!(text.contains("linux_raid_member"), "blkid -p: {text}");
        },
    );
}

#[test]
fn a_luks1_volume_at_1mib_is_found() {
    if !have("cryptsetup", "--version") {
        return;
    }
    refused(
        "LUKS1 at 1 MiB",
        "LUKS1 encrypted volume starting at 1 MiB",
        |img| {
            let w = Window::new(img, 1 << 20);
            let key = img.with_extension("key");
            std::fs::write(&key, b"iomark test key").unwrap();
            let mut cmd = std::process::Command::new("cryptsetup");
            cmd.args([
                "luksFormat",
                "-q",
                "--type",
                "luks1",
                "--pbkdf-force-iterations",
                "1000",
                "--key-file",
            ])
            .arg(&key)
            .arg(&w.0);
            make(&mut cmd).expect("cryptsetup installed");
            drop(w);
            std::fs::remove_file(&key).unwrap();
        },
    );
}

#[test]
fn a_swap_area_at_1mib_is_found() {
    refused("swap at 1 MiB", "swap area starting at 1 MiB", |img| {
        at_1mib(img, "mkswap", &["-q"]);
    });
}

#[test]
fn ext4_at_2mib_is_found() {
    if !have("mkfs.ext4", "-V") {
        return;
    }
    refused(
        "ext4 at 2 MiB",
        "ext2/3/4 filesystem starting at 2 MiB",
        |img| {
            let mut cmd = std::process::Command::new("mkfs.ext4");
            cmd.args(["-q", "-F", "-E", "offset=2097152"])
                .arg(img)
                .arg("4M");
            make(&mut cmd).expect("mkfs.ext4 installed");
        },
    );
}

#[test]
fn hfs_plus_jfs_and_reiserfs_are_found() {
    // hfsprogs is not in Debian 12: the volume header's fields libblkid
    // checks ("H+", version 4, a block size of 4 KiB), verified with
    // blkid -p.
    refused("HFS+", "HFS+ filesystem", |img| {
        poke(img, 1024, b"H+\x00\x04");
        poke(img, 1024 + 40, &4096u32.to_be_bytes());
        poke(img, 1024 + 44, &(SIZE as u32 / 4096).to_be_bytes());
        let o = std::process::Command::new("blkid")
            .arg("-p")
            .arg(img)
            .output_bounded()
            .expect("run blkid");
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(text.contains("hfsplus"), "blkid -p: {text}");
    });
    if have("mkfs.jfs", "-V") {
        refused("JFS", "JFS filesystem", |img| {
            let mut cmd = std::process::Command::new("mkfs.jfs");
            cmd.arg("-q").arg(img);
            make(&mut cmd).unwrap();
        });
    }
    if have("mkreiserfs", "-V") {
        refused("ReiserFS", "ReiserFS filesystem", |img| {
            let mut cmd = std::process::Command::new("mkreiserfs");
            cmd.args(["-q", "-ff"]).arg(img);
            make(&mut cmd).unwrap();
        });
    }
}

#[test]
fn a_bcachefs_superblock_is_found() {
    // bcachefs-tools is not in Debian 12, and its libblkid (2.38) does not
    // know bcachefs (2.39 does): iomark's own check, on the magic at
    // 4 KiB + 24 where bcachefs writes its superblock.
    refused("bcachefs", "bcachefs filesystem", |img| {
        poke(
            img,
            4096 + 24,
            &[
                0xc6, 0x85, 0x73, 0xf6, 0x66, 0xce, 0x90, 0xa9, 0xd9, 0x6a, 0x60, 0xcf, 0x80, 0x3d,
                0xf7, 0xef,
            ],
        );
    });
}

#[test]
fn a_partition_of_a_gpt_known_by_its_backup_alone_is_probed() {
    // A GPT with one partition at 3 MiB (no offset iomark probes by
    // itself) holding ext4; then the protective MBR and the primary
    // header are erased: the backup header at the end still lists the
    // partition, and what it holds is named.
    if !have("sfdisk", "--version") || !have("mkfs.ext4", "-V") {
        return;
    }
    refused(
        "GPT backup + ext4",
        "ext2/3/4 filesystem in partition 1 at 3 MiB",
        |img| {
            let mut cmd = std::process::Command::new("sfdisk");
            cmd.args(["-q", "--label", "gpt"])
                .arg(img)
                .stdin(std::process::Stdio::piped());
            let mut child = cmd.spawn().expect("run sfdisk");
            use std::io::Write;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(b"start=6144, size=16384\n")
                .unwrap();
            assert!(child.wait().unwrap().success());
            let mut cmd = std::process::Command::new("mkfs.ext4");
            cmd.args(["-q", "-F", "-E", "offset=3145728"])
                .arg(img)
                .arg("4M");
            make(&mut cmd).unwrap();
            poke(img, 0, &[0u8; 1024]);
        },
    );
}

#[test]
fn without_libblkid_the_own_list_refuses_and_says_so_once() {
    // libblkid made unloadable for one run: a private mount namespace in
    // which the library's file is /dev/null (dlopen fails). The own list
    // still finds an MD 1.2 magic, and a warning says the check is the
    // own list alone.
    let Ok(lib) = std::fs::canonicalize("/lib/x86_64-linux-gnu/libblkid.so.1") else {
        missing("no /lib/x86_64-linux-gnu/libblkid.so.1 (Debian's libblkid1)");
        return;
    };
    let dir = tempdir();
    let Some(dev) = LoopDev::with_image(dir.path(), "sig.img", SIZE, false) else {
        return;
    };
    poke(&dev.image, 4096, &MD_MAGIC);
    poke(&dev.image, 4100, &1u32.to_le_bytes());
    let before = hash(&dev.image);
    let mut cmd = std::process::Command::new("unshare");
    cmd.args([
        "-m",
        "sh",
        "-c",
        "mount --bind /dev/null \"$0\" && exec \"$@\"",
    ])
    .arg(&lib)
    .arg(env!("CARGO_BIN_EXE_iomark"))
    .args(write_at_8m(&dev))
    .current_dir(dir.path());
    let o = output_of(&mut cmd);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let lines: Vec<&str> = err.trim().lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].contains("libblkid.so.1 could not be loaded")
            && lines[0].contains("own list of signatures only"),
        "{err}"
    );
    assert!(lines[1].contains("superblock 1.2"), "{err}");
    assert_eq!(hash(&dev.image), before);
}
