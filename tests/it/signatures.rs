//! Signatures where they live: each case builds one signature on a small
//! loop device (the bytes written into its image, or a real filesystem
//! made with mkfs.ext4), then runs a job that writes at 8 MiB, far from
//! the signature. The job must be refused in one line naming the family,
//! and the image must be unchanged (hashed before and after). A zeroed
//! device of the same size is accepted (no false alarm). Needs root and
//! losetup (see `loopdev`).

use crate::common::*;
use crate::loopdev::{poke, LoopDev};

/// Not a multiple of 64 KiB (nor of 256 KiB), as real devices often are:
/// the end offsets are computed, not assumed.
const SIZE: u64 = (64 << 20) + (36 << 10);

const MD_MAGIC: [u8; 4] = [0xfc, 0x4e, 0x2b, 0xa9];

fn hash(path: &std::path::Path) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    std::fs::read(path).unwrap().hash(&mut h);
    h.finish()
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
