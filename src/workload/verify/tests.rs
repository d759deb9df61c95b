use super::*;
use crate::job::options::{apply, lookup};

fn spec(opts: &[(&str, &str)]) -> JobSpec {
    let mut s = JobSpec::default();
    for (k, v) in opts {
        apply(&mut s, lookup(k).unwrap(), Some(v)).unwrap();
    }
    s
}

fn verifier(opts: &[(&str, &str)]) -> Verifier {
    let s = spec(opts);
    check_job(&s).unwrap();
    Verifier::new(&s, 1, 42).unwrap()
}

const KINDS: &[&str] = &[
    "md5",
    "crc64",
    "crc32c",
    "crc32c-intel",
    "crc32",
    "crc16",
    "crc7",
    "xxhash",
    "sha1",
    "sha256",
    "sha512",
    "sha3-224",
    "sha3-256",
    "sha3-384",
    "sha3-512",
    "meta",
];

fn stamped(v: &Verifier, len: usize, offset: u64, numberio: u64) -> Vec<u8> {
    let mut buf = vec![0u8; len];
    let s = Stamp {
        seed: v.seed_for(numberio),
        numberio,
        time_ns: 1_500_000_000,
    };
    v.stamp(&mut buf, offset, s);
    buf
}

fn problems(v: &Verifier, buf: &[u8], exp: Expect) -> Vec<Mismatch> {
    let mut b = buf.to_vec();
    let mut out = Vec::new();
    v.check(&mut b, &exp, |m| {
        out.push(m.clone());
        true
    });
    out
}

fn exp(offset: u64) -> Expect {
    Expect {
        offset,
        write: None,
    }
}

#[test]
fn every_method_checks_what_it_wrote() {
    for k in KINDS {
        for extra in [
            &[][..],
            &[("verify_interval", "1k")][..],
            &[("verify_offset", "200")][..],
        ] {
            let mut opts = vec![("verify", *k)];
            opts.extend_from_slice(extra);
            let v = verifier(&opts);
            let buf = stamped(&v, 4096, 8192, 3);
            let e = Expect {
                offset: 8192,
                write: Some((v.seed_for(3), 3)),
            };
            assert_eq!(problems(&v, &buf, e), [], "{opts:?}");
            if v.kind() != VerifyKind::Meta {
                // A flipped data byte is caught in the interval holding it.
                let mut bad = buf.clone();
                bad[3000] ^= 1;
                let p = problems(&v, &bad, e);
                assert_eq!(p.len(), 1, "{opts:?}");
                assert!(
                    matches!(p[0].problem, Problem::Checksum { .. }),
                    "{opts:?}: {p:?}"
                );
                assert!(p[0].at <= 3000 && 3000 < p[0].at + p[0].len);
            }
        }
    }
}

#[test]
fn header_layout_is_the_documented_one() {
    let v = verifier(&[("verify", "crc32c"), ("verify_interval", "1k")]);
    let buf = stamped(&v, 4096, 1 << 20, 0x1_0005);
    for i in 0..4 {
        let h = &buf[i * 1024..];
        assert_eq!(&h[0..2], &[0xca, 0xac]);
        assert_eq!(u16::from_le_bytes([h[2], h[3]]), 5);
        assert_eq!(u32::from_le_bytes(h[4..8].try_into().unwrap()), 1024);
        assert_eq!(
            u64::from_le_bytes(h[16..24].try_into().unwrap()),
            (1 << 20) + i as u64 * 1024
        );
        assert_eq!(u32::from_le_bytes(h[24..28].try_into().unwrap()), 1);
        assert_eq!(
            u32::from_le_bytes(h[28..32].try_into().unwrap()),
            500_000_000
        );
        assert_eq!(u16::from_le_bytes([h[32], h[33]]), 1);
        // The write number keeps its low 16 bits.
        assert_eq!(u16::from_le_bytes([h[34], h[35]]), 5);
        assert_eq!(
            u32::from_le_bytes(h[36..40].try_into().unwrap()),
            checksum::header_crc(&h[..36])
        );
    }
}

#[test]
fn header_faults_are_named() {
    let v = verifier(&[("verify", "md5")]);
    let buf = stamped(&v, 4096, 4096, 7);
    let first = |b: &[u8], e: Expect| problems(&v, b, e).remove(0).problem;
    assert!(matches!(
        first(&buf, exp(0)),
        Problem::Offset { want: 0, got: 4096 }
    ));
    let with = |seed, n| Expect {
        offset: 4096,
        write: Some((seed, n)),
    };
    assert!(matches!(
        first(&buf, with(v.seed_for(7), 8)),
        Problem::NumberIo { want: 8, got: 7 }
    ));
    assert!(matches!(first(&buf, with(1, 7)), Problem::Seed { .. }));
    let mut bad = buf.clone();
    bad[0] = 0;
    assert!(matches!(first(&bad, exp(4096)), Problem::Magic { .. }));
    let mut bad = buf.clone();
    bad[25] ^= 0x10; // the time
    assert!(matches!(first(&bad, exp(4096)), Problem::HeaderCrc { .. }));
    // Read with another method: the header says which one wrote it.
    let other = verifier(&[("verify", "sha1")]);
    let p = problems(&other, &buf, exp(4096)).remove(0).problem;
    assert_eq!(p, Problem::Method { want: 16, got: 2 });
    assert!(p.to_string().contains("verify=md5"), "{p}");
    // meta checks the header only, whatever method wrote the block.
    let meta = verifier(&[("verify", "meta")]);
    assert_eq!(problems(&meta, &buf, exp(4096)), []);
}

#[test]
fn patterns_are_checked_with_and_without_headers() {
    let v = verifier(&[("verify", "pattern"), ("verify_pattern", "0xff%o\"abcd\"")]);
    let buf = stamped(&v, 4096, 12288, 0);
    assert_eq!(&buf[..2], &[0xff, 0x00]);
    assert_eq!(&buf[2..4], &[0x30, 0x00]);
    assert_eq!(problems(&v, &buf, exp(12288)), []);
    // The block at another offset carries another offset.
    assert!(!problems(&v, &buf, exp(0)).is_empty());
    let mut bad = buf.clone();
    bad[100] ^= 0xff;
    let p = problems(&v, &bad, exp(12288)).remove(0);
    assert!(
        matches!(p.problem, Problem::Pattern { pos: 100, .. }),
        "{p:?}"
    );

    let meta = verifier(&[
        ("verify", "meta"),
        ("verify_pattern", "0x11223344"),
        ("verify_interval", "512"),
    ]);
    let buf = stamped(&meta, 4096, 0, 0);
    assert_eq!(&buf[40..44], &[0x11, 0x22, 0x33, 0x44]);
    assert_eq!(u64::from_le_bytes(buf[8..16].try_into().unwrap()), 0);
    let mut bad = buf.clone();
    bad[1000] = 0;
    let p = problems(&meta, &bad, exp(0));
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].at, 512);
}

#[test]
fn verify_offset_moves_the_header() {
    let plain = verifier(&[("verify", "crc32c")]);
    let moved = verifier(&[("verify", "crc32c"), ("verify_offset", "100")]);
    let a = stamped(&plain, 4096, 0, 1);
    let b = stamped(&moved, 4096, 0, 1);
    assert_eq!(&b[100..144], &a[..44]);
    assert_eq!(&b[..44], &a[100..144]);
    assert_eq!(&b[144..], &a[144..]);
}

#[test]
fn dumps_rebuild_what_was_written() {
    let v = verifier(&[("verify", "crc32c"), ("verify_offset", "64")]);
    let good = stamped(&v, 4096, 4096, 2);
    let mut bad = good.clone();
    bad[2000] ^= 4;
    let e = exp(4096);
    let mut read = bad.clone();
    let mut seen = Vec::new();
    v.check(&mut read, &e, |m| {
        seen.push(m.clone());
        false
    });
    let m = &seen[0];
    assert_eq!(v.received(&read, m), bad);
    assert_eq!(v.expected(&read, &e, m).unwrap(), good);
    let mut hdr = good.clone();
    hdr[64] = 0;
    let mut read = hdr.clone();
    let mut seen = Vec::new();
    v.check(&mut read, &e, |m| {
        seen.push(m.clone());
        true
    });
    assert!(v.expected(&read, &e, &seen[0]).is_none());
}

#[test]
fn short_last_intervals_join_the_one_before() {
    let v = verifier(&[("verify", "crc32c"), ("verify_interval", "1020")]);
    let iv: Vec<_> = v.intervals(4096).collect();
    assert_eq!(iv, [(0, 1020), (1020, 1020), (2040, 1020), (3060, 1036)]);
    let iv: Vec<_> = v.intervals(4500).collect();
    assert_eq!(iv.last(), Some(&(4080, 420)));
    assert_eq!(v.intervals(0).count(), 0);
}

#[test]
fn impossible_layouts_are_rejected() {
    for (opts, want) in [
        (&[("verify", "pattern")][..], "needs verify_pattern"),
        (
            &[("verify", "sha512"), ("bs", "128")][..],
            "larger than its 168-byte header",
        ),
        (
            &[("verify", "crc32c"), ("verify_offset", "4090")][..],
            "leaves no room",
        ),
        (
            &[("verify", "md5"), ("verify_offset", "40")][..],
            "at least the 56-byte header",
        ),
        (
            &[("verify", "md5"), ("verify_only", "1"), ("time_based", "1")][..],
            "time_based",
        ),
        (
            &[("verify_only", "1"), ("rw", "write")][..],
            "verify_only=1 needs verify=",
        ),
        (
            &[("verify_only", "1")][..],
            "nothing to verify (fio would just read)",
        ),
    ] {
        let e = check_job(&spec(opts)).unwrap_err();
        assert!(e.to_string().contains(want), "{opts:?}: {e}");
    }
}

#[test]
fn overridden_buffer_options_are_named() {
    let mut s = spec(&[("verify", "md5"), ("rw", "write"), ("zero_buffers", "1")]);
    s.set_options = vec!["verify", "rw", "zero_buffers"];
    let n = notes(&s);
    assert_eq!(n.len(), 1);
    assert!(
        n[0].contains("zero_buffers has no effect with verify=md5"),
        "{n:?}"
    );
    s.verify.verify_async = 2;
    assert!(notes(&s)[1].contains("own thread"));
    s.set_options.clear();
    s.verify.verify_async = 0;
    assert!(notes(&s).is_empty());
}
