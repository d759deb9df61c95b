//! The http engine's options (fio's `http_*` and `https`): where the
//! objects are, which protocol, and the credentials. Credentials are
//! marked secret: the "job options" echo and `--showcmd` hide them.

use super::{opt, size, uint_in, unsupported, Category::*, Kind, OptDef};
use crate::job::engine_kind::EngineKind;
use crate::job::spec::{HttpMode, HttpOp, Https, ObjectMode, Secret};
use crate::job::value::parse_choice;

const HTTP: &[EngineKind] = &[EngineKind::Http];

/// An empty value is no value (the default), so that a job file's
/// `${S3_KEY}` with the variable unset falls through to the `AWS_*`
/// variables and the shared credentials file (and, if those have none
/// either, the run says that no credentials were found).
fn given(v: &str) -> Option<String> {
    (!v.is_empty()).then(|| v.to_string())
}

pub const OPTS: &[OptDef] = &[
    opt(
        "http_host",
        Engine,
        Kind::Str,
        "Host name, or host:port, the URLs start with (for virtual-hosted S3, the bucket's host name)",
        |s, v| {
            if v.is_empty() || v.contains(['/', ' ', '?', '#', '@']) {
                return Err(format!(
                    "'{v}' is not a host name or host:port (no scheme, path or user)"
                )
                .into());
            }
            s.engine.http.host = v.to_string();
            Ok(())
        },
    )
    .default("localhost")
    .engines(HTTP),
    opt(
        "https",
        Engine,
        Kind::Choice(&[
            ("off", "plain HTTP"),
            ("on", "HTTPS, checking the server's certificate"),
            ("insecure", "HTTPS without checking the server's certificate"),
        ]),
        "Use HTTPS: off, on, or insecure (no certificate check)",
        |s, v| {
            s.engine.http.https = parse_choice(
                v,
                &[
                    ("off", Https::Off),
                    ("on", Https::On),
                    ("insecure", Https::Insecure),
                ],
            )?;
            Ok(())
        },
    )
    .default("off")
    .engines(HTTP),
    opt(
        "http_mode",
        Engine,
        Kind::Choice(&[
            ("webdav", "plain HTTP PUT, GET and DELETE (basic authentication with http_user and http_pass)"),
            ("s3", "S3, requests signed with AWS Signature Version 4"),
        ]),
        "HTTP protocol flavour: webdav or s3 (swift is not supported by iomark)",
        |s, v| {
            if v.trim().eq_ignore_ascii_case("swift") {
                return Err("http_mode=swift is not supported by iomark (s3 and webdav are)".into());
            }
            s.engine.http.mode =
                parse_choice(v, &[("webdav", HttpMode::Webdav), ("s3", HttpMode::S3)])?;
            Ok(())
        },
    )
    .default("webdav")
    .engines(HTTP),
    opt(
        "http_user",
        Engine,
        Kind::Str,
        "User name for HTTP basic authentication (webdav)",
        |s, v| {
            s.engine.http.user = given(v);
            Ok(())
        },
    )
    .engines(HTTP),
    opt(
        "http_pass",
        Engine,
        Kind::Str,
        "Password for HTTP basic authentication (webdav); never shown",
        |s, v| {
            s.engine.http.pass = given(v).map(Secret::new);
            Ok(())
        },
    )
    .secret()
    .engines(HTTP),
    opt(
        "http_s3_keyid",
        Engine,
        Kind::Str,
        "S3 access key id (default: AWS_ACCESS_KEY_ID, then the shared credentials file)",
        |s, v| {
            s.engine.http.s3_keyid = given(v);
            Ok(())
        },
    )
    .engines(HTTP),
    opt(
        "http_s3_key",
        Engine,
        Kind::Str,
        "S3 secret key (default: AWS_SECRET_ACCESS_KEY, then the shared credentials file); never shown",
        |s, v| {
            s.engine.http.s3_key = given(v).map(Secret::new);
            Ok(())
        },
    )
    .secret()
    .engines(HTTP),
    opt(
        "http_s3_security_token",
        Engine,
        Kind::Str,
        "S3 session token of temporary credentials (default: AWS_SESSION_TOKEN); never shown",
        |s, v| {
            s.engine.http.s3_security_token = given(v).map(Secret::new);
            Ok(())
        },
    )
    .secret()
    .engines(HTTP),
    opt(
        "http_s3_region",
        Engine,
        Kind::Str,
        "S3 region the requests are signed for (default: AWS_REGION, else us-east-1)",
        |s, v| {
            s.engine.http.s3_region = given(v);
            Ok(())
        },
    )
    .engines(HTTP),
    opt(
        "http_s3_storage_class",
        Engine,
        Kind::Str,
        "S3 storage class each PUT asks for (x-amz-storage-class)",
        |s, v| {
            s.engine.http.s3_storage_class = given(v);
            Ok(())
        },
    )
    .engines(HTTP),
    opt(
        "http_verbose",
        Engine,
        Kind::Int,
        "1: one line per request on stderr (method, path, status, bytes); 2: also the headers sent, credentials hidden",
        |s, v| {
            s.engine.http.verbose = uint_in(v, 0, 2)? as u32;
            Ok(())
        },
    )
    .default("0")
    .engines(HTTP),
    opt(
        "http_object_mode",
        Engine,
        Kind::Choice(&[
            ("block", "one object per block, named FILENAME_OFFSET_LENGTH"),
            ("range", "one object per file: reads are ranged GETs, a write replaces the object"),
        ]),
        "How blocks map to objects: block or range",
        |s, v| {
            s.engine.http.object_mode = parse_choice(
                v,
                &[("block", ObjectMode::Block), ("range", ObjectMode::Range)],
            )?;
            Ok(())
        },
    )
    .default("block")
    .engines(HTTP),
    opt(
        "http_retries",
        Engine,
        Kind::Int,
        "How often a request the server answers busy (HTTP 429, 500, 502, 503 SlowDown, 504) is sent again, after a pause doubling from 50ms (iomark's own; 0: never)",
        |s, v| {
            s.engine.http.retries = uint_in(v, 0, 20)? as u32;
            Ok(())
        },
    )
    .default("4")
    .engines(HTTP),
    opt(
        "http_s3_part_size",
        Engine,
        Kind::Size,
        "S3: a PUT of an object larger than this is a multipart upload in parts of this size, at least 5MiB as S3 requires (iomark's own; 0: one PUT, as fio)",
        |s, v| {
            let n = size(s, v)?;
            if n != 0 && n < 5 << 20 {
                return Err(format!(
                    "{v} is below S3's smallest part (5MiB); give 5m or more, or 0 for single PUTs"
                )
                .into());
            }
            s.engine.http.s3_part_size = n;
            Ok(())
        },
    )
    .default("0")
    .engines(HTTP),
    opt(
        "http_ca_file",
        Engine,
        Kind::Str,
        "PEM file of the certificate authorities https=on trusts instead of the built-in list, e.g. a private CA or a self-signed server's certificate (iomark's own)",
        |s, v| {
            s.engine.http.ca_file = given(v);
            Ok(())
        },
    )
    .engines(HTTP),
    opt(
        "http_op",
        Engine,
        Kind::Choice(&[
            ("data", "reads are GETs (writes PUTs, trims DELETEs), as fio"),
            ("head", "each read is a HEAD of the object a GET would read: 0 bytes of data"),
            ("list", "each read is one page of ListObjectsV2 over the path's prefix (S3): 0 bytes of data, the objects listed counted"),
        ]),
        "What a read asks the server: data (GET), head or list; head and list take jobs that only read (iomark's own)",
        |s, v| {
            s.engine.http.op = parse_choice(
                v,
                &[
                    ("data", HttpOp::Data),
                    ("head", HttpOp::Head),
                    ("list", HttpOp::List),
                ],
            )?;
            Ok(())
        },
    )
    .default("data")
    .engines(HTTP),
    opt(
        "http_list_max_keys",
        Engine,
        Kind::Int,
        "Most keys one LIST page asks for (max-keys, 1 to 1000; iomark's own)",
        |s, v| {
            s.engine.http.list_max_keys = uint_in(v, 1, 1000)? as u32;
            Ok(())
        },
    )
    .default("1000")
    .engines(HTTP),
    unsupported(
        "http_s3_sse_customer_key",
        Engine,
        "Customer key for S3 server-side encryption",
        "iomark's http engine does not send server-side encryption keys",
    )
    .secret()
    .engines(HTTP),
    unsupported(
        "http_s3_sse_customer_algorithm",
        Engine,
        "Algorithm for S3 server-side encryption with a customer key",
        "iomark's http engine does not send server-side encryption keys",
    )
    .engines(HTTP),
    unsupported(
        "http_swift_auth_token",
        Engine,
        "Authentication token for Swift",
        "iomark's http engine does not speak Swift (http_mode=s3 or webdav)",
    )
    .secret()
    .engines(HTTP),
];
