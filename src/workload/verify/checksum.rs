//! The checksums a verification header can carry, each stored in the
//! fixed-size area that follows the header, in the byte layout fio 3.33
//! uses on disk (observed from files it wrote), so blocks written by one
//! tool check with the other.
//!
//! md5, sha1, sha2, sha3, crc32c and xxhash come from crates; the CRCs
//! fio defines its own way (crc7, crc16, crc32, crc64) are small table
//! implementations here. `compute` hashes into a caller-provided array and
//! never allocates. The sha256 and sha512 areas hold the standard digest
//! followed by zeros: fio 3.33 stores something else there (not a
//! standard digest), so those two methods only check with iomark.

use crate::job::spec::VerifyKind;
use md5::Digest as _;

/// Largest checksum area (sha512).
pub const MAX_AREA: usize = 128;

/// The type number stored in the header, and the checksum area's size.
pub fn layout(kind: VerifyKind) -> Option<(u16, usize)> {
    use VerifyKind::*;
    Some(match kind {
        Meta => (1, 0),
        Md5 => (2, 16),
        Crc64 => (3, 8),
        Crc32 => (4, 4),
        Crc32c | Crc32cIntel => (5, 4),
        Crc16 => (7, 2),
        Crc7 => (8, 1),
        Sha256 => (9, 64),
        Sha512 => (10, 128),
        Sha3_224 => (11, 28),
        Sha3_256 => (12, 32),
        Sha3_384 => (13, 48),
        Sha3_512 => (14, 64),
        XxHash => (15, 4),
        Sha1 => (16, 20),
        None | Pattern | Null => return Option::None,
    })
}

/// The method's name as the `verify` option spells it.
pub fn name(kind: VerifyKind) -> &'static str {
    use VerifyKind::*;
    match kind {
        None => "none",
        Md5 => "md5",
        Crc64 => "crc64",
        Crc32c | Crc32cIntel => "crc32c",
        Crc32 => "crc32",
        Crc16 => "crc16",
        Crc7 => "crc7",
        XxHash => "xxhash",
        Sha1 => "sha1",
        Sha256 => "sha256",
        Sha512 => "sha512",
        Sha3_224 => "sha3-224",
        Sha3_256 => "sha3-256",
        Sha3_384 => "sha3-384",
        Sha3_512 => "sha3-512",
        Meta => "meta",
        Pattern => "pattern",
        Null => "null",
    }
}

/// The method whose header type number is `code`, for messages.
pub fn kind_of_code(code: u16) -> Option<VerifyKind> {
    use VerifyKind::*;
    [
        Meta, Md5, Crc64, Crc32, Crc32c, Crc16, Crc7, Sha256, Sha512, Sha3_224, Sha3_256, Sha3_384,
        Sha3_512, XxHash, Sha1,
    ]
    .into_iter()
    .find(|k| layout(*k).map(|l| l.0) == Some(code))
}

/// Computes the checksum of `data` into `out[..area]` as stored on disk;
/// returns the area's size (0 for methods without a checksum).
pub fn compute(kind: VerifyKind, data: &[u8], out: &mut [u8; MAX_AREA]) -> usize {
    use VerifyKind::*;
    let Some((_, area)) = layout(kind) else {
        return 0;
    };
    out[..area].fill(0);
    match kind {
        Md5 => out[..16].copy_from_slice(&md5::Md5::digest(data)),
        Crc64 => out[..8].copy_from_slice(&crc64(data).to_le_bytes()),
        Crc32 => out[..4].copy_from_slice(&crc32(data).to_le_bytes()),
        // fio's crc32c skips the final inversion.
        Crc32c | Crc32cIntel => out[..4].copy_from_slice(&(!crc32c::crc32c(data)).to_le_bytes()),
        Crc16 => out[..2].copy_from_slice(&crc16(data).to_le_bytes()),
        Crc7 => out[0] = crc7(data),
        XxHash => out[..4].copy_from_slice(&xxhash_rust::xxh32::xxh32(data, 1).to_le_bytes()),
        Sha1 => {
            // Five 32-bit words, each stored little-endian.
            let d = sha1::Sha1::digest(data);
            for (o, w) in out[..20].chunks_exact_mut(4).zip(d.chunks_exact(4)) {
                o.copy_from_slice(&[w[3], w[2], w[1], w[0]]);
            }
        }
        Sha256 => out[..32].copy_from_slice(&sha2::Sha256::digest(data)),
        Sha512 => out[..64].copy_from_slice(&sha2::Sha512::digest(data)),
        Sha3_224 => out[..28].copy_from_slice(&sha3::Sha3_224::digest(data)),
        Sha3_256 => out[..32].copy_from_slice(&sha3::Sha3_256::digest(data)),
        Sha3_384 => out[..48].copy_from_slice(&sha3::Sha3_384::digest(data)),
        Sha3_512 => out[..64].copy_from_slice(&sha3::Sha3_512::digest(data)),
        Meta | None | Pattern | Null => {}
    }
    area
}

/// A stored checksum as text: CRCs and xxhash as hexadecimal numbers,
/// digests as hex bytes.
pub fn describe(kind: VerifyKind, stored: &[u8]) -> String {
    use VerifyKind::*;
    let n = |k: usize| {
        let mut b = [0u8; 8];
        b[..k].copy_from_slice(&stored[..k]);
        u64::from_le_bytes(b)
    };
    match kind {
        Crc64 => format!("{:016x}", n(8)),
        Crc32 | Crc32c | Crc32cIntel | XxHash => format!("{:08x}", n(4)),
        Crc16 => format!("{:04x}", n(2)),
        Crc7 => format!("{:02x}", n(1)),
        Sha256 => hex(&stored[..32]),
        Sha512 => hex(&stored[..64]),
        _ => hex(stored),
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The header's own check: crc32c without the final inversion.
pub fn header_crc(bytes: &[u8]) -> u32 {
    !crc32c::crc32c(bytes)
}

const fn reflected_table64(poly: u64) -> [u64; 256] {
    let mut t = [0u64; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u64;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { (c >> 1) ^ poly } else { c >> 1 };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
}

const fn msb_table32(poly: u32) -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = (i as u32) << 24;
        let mut k = 0;
        while k < 8 {
            c = if c & 0x8000_0000 != 0 {
                (c << 1) ^ poly
            } else {
                c << 1
            };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
}

const fn reflected_table16(poly: u16) -> [u16; 256] {
    let mut t = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u16;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { (c >> 1) ^ poly } else { c >> 1 };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
}

/// A 7-bit CRC kept in the top bits of a byte.
const fn crc7_table(poly: u8) -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u8;
        let mut k = 0;
        while k < 8 {
            c = if c & 0x80 != 0 {
                (c << 1) ^ (poly << 1)
            } else {
                c << 1
            };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
}

/// CRC-64 with the Jones polynomial, reflected, no initial or final
/// inversion (CRC-64/REDIS in the usual catalogues).
static CRC64: [u64; 256] = reflected_table64(0x95AC_9329_AC4B_C9B5);
/// CRC-32 with the IEEE polynomial processed most significant bit first,
/// starting from 0, no final inversion.
static CRC32: [u32; 256] = msb_table32(0x04C1_1DB7);
/// CRC-16/ARC.
static CRC16: [u16; 256] = reflected_table16(0xA001);
/// CRC-7/MMC.
static CRC7: [u8; 256] = crc7_table(0x09);

pub fn crc64(data: &[u8]) -> u64 {
    data.iter().fold(0u64, |c, &b| {
        CRC64[((c ^ b as u64) & 0xff) as usize] ^ (c >> 8)
    })
}

pub fn crc32(data: &[u8]) -> u32 {
    data.iter().fold(0u32, |c, &b| {
        (c << 8) ^ CRC32[((c >> 24) as u8 ^ b) as usize]
    })
}

pub fn crc16(data: &[u8]) -> u16 {
    data.iter().fold(0u16, |c, &b| {
        CRC16[((c ^ b as u16) & 0xff) as usize] ^ (c >> 8)
    })
}

pub fn crc7(data: &[u8]) -> u8 {
    data.iter().fold(0u8, |c, &b| CRC7[(c ^ b) as usize]) >> 1
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHECK: &[u8] = b"123456789";

    #[test]
    fn crcs_match_their_catalogue_check_values() {
        assert_eq!(crc64(CHECK), 0xe9c6_d914_c4b8_d9ca);
        assert_eq!(crc16(CHECK), 0xbb3d);
        assert_eq!(crc7(CHECK), 0x75);
        // CRC-32/MPEG-2 starts from all ones; from zero the value differs.
        assert_eq!(crc32(CHECK), 0x89a1_897f);
        assert_eq!(header_crc(CHECK), !0xe306_9283);
    }

    #[test]
    fn areas_hold_the_stored_form() {
        let mut out = [0u8; MAX_AREA];
        assert_eq!(compute(VerifyKind::Crc32c, CHECK, &mut out), 4);
        assert_eq!(&out[..4], &(!0xe306_9283u32).to_le_bytes());
        assert_eq!(compute(VerifyKind::XxHash, b"", &mut out), 4);
        assert_eq!(
            u32::from_le_bytes(out[..4].try_into().unwrap()),
            0x0b2c_b792
        );
        // sha1("abc") = a9993e36 4706816a ba3e2571 7850c26c 9cd0d89d, per word reversed.
        assert_eq!(compute(VerifyKind::Sha1, b"abc", &mut out), 20);
        assert_eq!(&out[..8], &[0x36, 0x3e, 0x99, 0xa9, 0x6a, 0x81, 0x06, 0x47]);
        assert_eq!(compute(VerifyKind::Sha512, b"abc", &mut out), 128);
        assert!(out[64..128].iter().all(|b| *b == 0));
        assert_eq!(compute(VerifyKind::Meta, b"abc", &mut out), 0);
    }

    #[test]
    fn type_numbers_round_trip() {
        for k in [VerifyKind::Md5, VerifyKind::Sha1, VerifyKind::Meta] {
            assert_eq!(kind_of_code(layout(k).unwrap().0), Some(k));
        }
        assert_eq!(kind_of_code(6), None);
    }
}
