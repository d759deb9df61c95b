//! Data safety on block devices: a write or trim job is refused before
//! anything is written when the device holds a filesystem or partition
//! table signature, or is mounted, unless the user says so. Uses loop
//! devices over small images; without root or losetup they go through
//! `common::missing` (fail in strict mode, else skip).

use crate::common::*;
use crate::loopdev::{poke, LoopDev, Mount};

fn write_job(dev: &str, extra: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = [
        "--name=danger",
        "--ioengine=psync",
        "--rw=write",
        "--bs=64k",
        "--size=1m",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.push(format!("--filename={dev}"));
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

fn run(dir: &std::path::Path, args: &[String]) -> std::process::Output {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    run_in(dir, &a)
}

fn run_ok(dir: &std::path::Path, args: &[String]) -> serde_json::Value {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    run_json(dir, &a)
}

/// Reads `len` bytes of the image at `offset`.
fn peek(path: &std::path::Path, offset: u64, len: usize) -> Vec<u8> {
    use std::os::unix::fs::FileExt;
    let f = std::fs::File::open(path).unwrap();
    let mut b = vec![0u8; len];
    f.read_exact_at(&mut b, offset).unwrap();
    b
}

#[test]
fn a_device_with_an_ext4_signature_is_refused_and_left_untouched() {
    let dir = tempdir();
    let Some(dev) = LoopDev::new(dir.path(), 4 << 20) else {
        return;
    };
    poke(&dev.image, 1080, &[0x53, 0xEF]);
    let o = run(dir.path(), &write_job(dev.as_str(), &[]));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains(dev.as_str()), "{err}");
    assert!(err.contains("ext2/3/4"), "{err}");
    assert!(err.contains("allow_destroy_data=1"), "{err}");
    assert!(stdout(&o).is_empty());
    // Nothing was written: the first block is still zero.
    assert!(peek(&dev.image, 0, 1024).iter().all(|b| *b == 0));

    // Trims are writes too.
    let o = run_in(
        dir.path(),
        &[
            "--name=t",
            "--rw=trim",
            "--bs=64k",
            "--size=1m",
            &format!("--filename={}", dev.as_str()),
        ],
    );
    assert_eq!(o.status.code(), Some(1));

    // Reading is fine.
    let j = run_json(
        dir.path(),
        &[
            "--name=r",
            "--rw=read",
            "--bs=64k",
            "--size=1m",
            &format!("--filename={}", dev.as_str()),
        ],
    );
    assert_eq!(j["jobs"][0]["read"]["io_bytes"], 1 << 20);

    // The override lets the write through.
    let j = run_ok(
        dir.path(),
        &write_job(dev.as_str(), &["--allow_destroy_data=1"]),
    );
    assert_eq!(j["jobs"][0]["write"]["io_bytes"], 1 << 20);
    assert!(peek(&dev.image, 0, 1024).iter().any(|b| *b != 0));
}

#[test]
fn a_zeroed_device_is_accepted() {
    let dir = tempdir();
    let Some(dev) = LoopDev::new(dir.path(), 4 << 20) else {
        return;
    };
    let j = run_ok(dir.path(), &write_job(dev.as_str(), &[]));
    assert_eq!(j["jobs"][0]["write"]["io_bytes"], 1 << 20);
}

#[test]
fn partition_tables_and_other_signatures_are_refused() {
    let dir = tempdir();
    let Some(dev) = LoopDev::new(dir.path(), 4 << 20) else {
        return;
    };
    for (off, magic, name) in [
        (510u64, &[0x55u8, 0xAA][..], "MBR"),
        (512, b"EFI PART", "GPT"),
        (0, b"XFSB", "XFS"),
        (4086, b"SWAPSPACE2", "swap"),
    ] {
        poke(&dev.image, off, magic);
        let o = run(dir.path(), &write_job(dev.as_str(), &[]));
        assert_eq!(o.status.code(), Some(1), "{name}");
        assert!(stderr(&o).contains(name), "{name}: {}", stderr(&o));
        poke(&dev.image, off, &vec![0u8; magic.len()]);
    }
}

fn have(tool: &str) -> bool {
    std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {tool}"))
        .output_bounded()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

#[test]
fn a_mounted_device_or_partition_is_refused() {
    if !have("mkfs.ext4") {
        crate::common::missing("mkfs.ext4 is not installed (apt-get install e2fsprogs)");
        return;
    }
    let dir = tempdir();
    // An image with one partition (an MBR entry at 1 MiB) holding ext4.
    let Some(dev) = LoopDev::with_image(dir.path(), "disk.img", 8 << 20, true) else {
        return;
    };
    let mut entry = [0u8; 16];
    entry[4] = 0x83;
    entry[8..12].copy_from_slice(&2048u32.to_le_bytes());
    entry[12..16].copy_from_slice(&(14336u32).to_le_bytes());
    poke(&dev.image, 446, &entry);
    poke(&dev.image, 510, &[0x55, 0xAA]);
    let rescan = std::process::Command::new("partx")
        .args(["-u", dev.as_str()])
        .status();
    let part = format!("{}p1", dev.as_str());
    let mut tries = 0;
    while !std::path::Path::new(&part).exists() && tries < 50 {
        std::thread::sleep(std::time::Duration::from_millis(20));
        tries += 1;
    }
    if !std::path::Path::new(&part).exists() {
        crate::common::missing(&format!(
            "no partition node for {} ({rescan:?})",
            dev.as_str()
        ));
        return;
    }
    let ok = std::process::Command::new("mkfs.ext4")
        .args(["-q", "-F", &part])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(ok, "mkfs.ext4 {part}");
    let Some(_m) = Mount::new(std::path::Path::new(&part), &dir.path().join("mnt")) else {
        return;
    };
    // The partition itself: mounted wins over the signature.
    let o = run(dir.path(), &write_job(&part, &["--allow_destroy_data=1"]));
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("mounted on") && err.contains("allow_mounted_write=1"),
        "{err}"
    );
    // The whole disk, whose partition is mounted.
    let o = run(
        dir.path(),
        &write_job(dev.as_str(), &["--allow_destroy_data=1"]),
    );
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("p1") && err.contains("mounted on"), "{err}");
    // allow_mounted_write alone still meets the MBR signature.
    let o = run(
        dir.path(),
        &write_job(dev.as_str(), &["--allow_mounted_write=1"]),
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("MBR"), "{}", stderr(&o));
}

/// Regular files: an existing file iomark did not create is not
/// overwritten, truncated or deleted without allow_destroy_data=1; files
/// iomark created are reused freely.
#[test]
fn existing_files_iomark_did_not_create_are_protected() {
    let dir = tempdir();
    let d = dir.path();
    let precious = d.join("precious.db");
    std::fs::write(&precious, b"customer records\n").unwrap();
    let name = precious.to_str().unwrap();
    for extra in [
        vec!["--rw=randwrite"],
        vec!["--rw=trim", "--ioengine=falloc"],
        vec!["--rw=write", "--ioengine=ftruncate"],
        vec!["--rw=read", "--unlink=1"],
    ] {
        let filename = format!("--filename={name}");
        let mut args: Vec<&str> = vec!["--name=t", "--size=64k", &filename];
        args.extend(extra.iter().copied());
        let o = run_in(d, &args);
        assert_eq!(o.status.code(), Some(1), "{extra:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.contains("iomark did not create it") && err.contains("allow_destroy_data=1"),
            "{extra:?}: {err}"
        );
        assert_eq!(
            std::fs::read(&precious).unwrap(),
            b"customer records\n",
            "{extra:?}"
        );
    }
    // Reading it is fine (it is never extended for a read: a read past
    // its end is refused), and so is writing with consent.
    run_json(
        d,
        &[
            "--name=t",
            "--size=17",
            "--bs=1",
            &format!("--filename={name}"),
            "--rw=read",
        ],
    );
    let o = run_in(
        d,
        &[
            "--name=t",
            "--size=16k",
            &format!("--filename={name}"),
            "--rw=read",
        ],
    );
    assert!(stderr(&o).contains("is 17 bytes"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&precious).unwrap(), b"customer records\n");
    run_json(
        d,
        &[
            "--name=t",
            "--size=64k",
            &format!("--filename={name}"),
            "--rw=write",
            "--allow_destroy_data=1",
        ],
    );
    assert_ne!(std::fs::read(&precious).unwrap(), b"customer records\n");
    // A file iomark laid out itself can be written again and again.
    let ours = d.join("ours.dat");
    let arg = format!("--filename={}", ours.display());
    for _ in 0..2 {
        run_json(d, &["--name=t", "--size=64k", &arg, "--rw=randwrite"]);
    }
}

/// A file fio left behind (`fio --name=rw2 …` writes `rw2.0.0`) is still
/// refused, and the message says where it probably came from and how to
/// go on.
#[test]
fn a_file_fio_left_behind_is_refused_with_a_way_forward() {
    crate::require_fio!();
    let dir = tempdir();
    let d = dir.path();
    let job = ["--name=rw2", "--rw=write", "--size=256k"];
    let o = fio_output(std::process::Command::new("fio").args(job).current_dir(d));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let before = std::fs::read(d.join("rw2.0.0")).unwrap();
    let o = run_in(d, &job);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "iomark: refusing to overwrite 'rw2.0.0' (job 'rw2'): the file already exists and \
         iomark did not create it (its name is the one fio gives this job's file: probably left \
         by an earlier fio run); delete it, or set allow_destroy_data=1 if you really want it \
         overwritten\n"
    );
    assert_eq!(std::fs::read(d.join("rw2.0.0")).unwrap(), before);
    // Another job's name says nothing about fio.
    let o = run_in(
        d,
        &[
            "--name=x",
            "--rw=write",
            "--size=256k",
            "--filename=rw2.0.0",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(!stderr(&o).contains("fio"), "{}", stderr(&o));
}
