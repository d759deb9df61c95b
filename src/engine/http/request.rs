//! One request of the http engine: its object name, URL, signature or
//! authorization, the HTTP exchange, and what its status means (fio's
//! rules: a GET of a missing object reads zeroes, a DELETE of one is
//! done).
//!
//! The connection pool (`ureq::Agent`) is shared by the job's senders, so
//! connections are kept alive across requests. URLs carry signatures and
//! are never shown: messages and `http_verbose` lines name the method and
//! the object path.

use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rusty_s3::actions::{DeleteObject, GetObject, HeadObject, ListObjectsV2, PutObject};
use rusty_s3::{Bucket, Credentials, S3Action, UrlStyle};

mod bucket;
mod meta;
mod multipart;

pub use bucket::Removed;
pub use meta::Listing;

use super::creds;
use super::{Op, Target};
use crate::job::spec::{HttpMode, HttpOp, Https, ObjectMode, Secret};
use crate::job::JobSpec;

/// The metadata every S3 PUT of iomark carries (`x-amz-meta-iomark`): the
/// consent check lets iomark overwrite or delete only objects that hold
/// it.
const MARK: &str = "x-amz-meta-iomark";

/// Most objects the consent check looks at per object path.
const CONSENT_LIMIT: usize = 1000;

/// How long a signed URL stays valid (S3 checks it against its clock).
const EXPIRY: Duration = Duration::from_secs(3600);

/// The first pause before a request is sent again; it doubles with each
/// retry, up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(50);

/// The longest pause between two tries (also caps a server's
/// `Retry-After`).
const MAX_PAUSE: Duration = Duration::from_secs(5);

/// A failed exchange: one line, and whether the server said it was busy
/// (sending the request again later may succeed).
pub struct Fail {
    msg: String,
    busy: bool,
    /// The server's `Retry-After`, when it gave one in seconds.
    retry_after: Option<Duration>,
}

impl From<String> for Fail {
    fn from(msg: String) -> Fail {
        Fail {
            msg,
            busy: false,
            retry_after: None,
        }
    }
}

/// Whether an HTTP status says "busy, try again": throttled (429, S3's
/// 503 SlowDown) or unavailable for now (500, 502, 503, 504), as AWS's
/// SDKs treat them.
fn is_busy(status: u16) -> bool {
    matches!(status, 429 | 500 | 502 | 503 | 504)
}

/// The pause before retry `n` (1, 2, ...): [`FIRST_PAUSE`] doubled per
/// retry, capped, with its upper half jittered so that senders that failed
/// together do not come back together.
fn pause(n: u32) -> Duration {
    let full = FIRST_PAUSE
        .saturating_mul(1 << n.saturating_sub(1).min(16))
        .min(MAX_PAUSE);
    let jitter = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos())
        % 1000;
    full / 2 + full / 2 * jitter / 1000
}

/// The S3 side of a client.
struct S3 {
    creds: Credentials,
    region: String,
}

/// What every request of a job shares.
pub struct Client {
    agent: ureq::Agent,
    /// `http://host` or `https://host`.
    endpoint: url::Url,
    object_mode: ObjectMode,
    s3: Option<S3>,
    /// WebDAV basic authorization header value.
    basic: Option<Secret>,
    storage_class: Option<String>,
    verbose: u32,
    /// How often a busy answer is retried.
    retries: u32,
    /// PUTs above this size are multipart uploads (0: never).
    part_size: u64,
    /// Requests sent again, over the job.
    pub retried: AtomicU64,
    /// What reads ask (`http_op`), and the most keys a LIST page asks
    /// for.
    op: HttpOp,
    list_max_keys: u32,
    /// Objects listed by LIST pages (`http_op=list`), over the job.
    pub listed: AtomicU64,
}

/// `/bucket/key` → (`bucket`, `key`); None when there is no key.
pub fn split_bucket(path: &str) -> Option<(&str, &str)> {
    let rest = path.strip_prefix('/')?;
    let (bucket, key) = rest.split_once('/')?;
    if bucket.is_empty() || key.is_empty() {
        return None;
    }
    Some((bucket, key))
}

impl Client {
    pub fn new(spec: &JobSpec) -> Result<Client, String> {
        let o = &spec.engine.http;
        let scheme = if o.https == Https::Off {
            "http"
        } else {
            "https"
        };
        let endpoint = url::Url::parse(&format!("{scheme}://{}", o.host))
            .map_err(|e| format!("http_host '{}' is not a host name: {e}", o.host))?;
        let s3 = if o.mode == HttpMode::S3 {
            let c = creds::resolve(o)?;
            let creds = match c.token {
                Some(t) => Credentials::new_with_token(c.keyid, c.key.expose(), t.expose()),
                None => Credentials::new(c.keyid, c.key.expose()),
            };
            Some(S3 {
                creds,
                region: creds::region(o),
            })
        } else {
            None
        };
        let basic = match (&o.user, &o.pass) {
            (Some(u), Some(p)) => Some(Secret::new(format!(
                "Basic {}",
                base64(format!("{u}:{}", p.expose()).as_bytes())
            ))),
            _ => None,
        };
        let depth = spec.io.iodepth.max(1) as usize;
        let mut tls =
            ureq::tls::TlsConfig::builder().disable_verification(o.https == Https::Insecure);
        if o.https == Https::On {
            if let Some(roots) = ca_roots(o.ca_file.as_deref())? {
                tls = tls.root_certs(roots);
            }
        }
        let tls = tls.build();
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .max_idle_connections(depth.max(4))
            .max_idle_connections_per_host(depth.max(4))
            .timeout_connect(Some(Duration::from_secs(10)))
            .timeout_recv_response(Some(Duration::from_secs(60)))
            .tls_config(tls)
            .user_agent("iomark")
            .build()
            .new_agent();
        Ok(Client {
            agent,
            endpoint,
            object_mode: o.object_mode,
            s3,
            basic,
            storage_class: o.s3_storage_class.clone(),
            verbose: o.verbose,
            retries: o.retries,
            part_size: o.s3_part_size,
            retried: AtomicU64::new(0),
            op: o.op,
            list_max_keys: o.list_max_keys,
            listed: AtomicU64::new(0),
        })
    }

    /// The object an I/O of `len` bytes at `offset` of `t` goes to.
    fn object(&self, t: &Target, offset: u64, len: u64) -> String {
        match self.object_mode {
            ObjectMode::Block => format!("{}_{offset}_{len}", t.path),
            ObjectMode::Range => t.path.clone(),
        }
    }

    /// The bucket of an S3 object path, and the object's key in it.
    fn bucket<'o>(&self, s3: &S3, object: &'o str) -> Result<(Bucket, &'o str), String> {
        let (bucket, key) = split_bucket(object)
            .ok_or_else(|| format!("object path '{object}' names no bucket and key"))?;
        let bucket = Bucket::new(
            self.endpoint.clone(),
            UrlStyle::Path,
            bucket.to_string(),
            s3.region.clone(),
        )
        .map_err(|e| format!("bucket of '{object}': {e}"))?;
        Ok((bucket, key))
    }

    /// The URL of `method` on `object`, signed for S3.
    fn url(&self, op: Op, object: &str) -> Result<String, String> {
        let Some(s3) = &self.s3 else {
            let mut u = self.endpoint.clone();
            u.set_path(object);
            return Ok(u.into());
        };
        let (bucket, key) = self.bucket(s3, object)?;
        let c = Some(&s3.creds);
        let url = match op {
            Op::Write => {
                let mut a = PutObject::new(&bucket, c, key);
                a.headers_mut().insert(MARK, "1");
                if let Some(sc) = &self.storage_class {
                    a.headers_mut().insert("x-amz-storage-class", sc.as_str());
                }
                a.sign(EXPIRY)
            }
            Op::Read if self.op == HttpOp::Head => HeadObject::new(&bucket, c, key).sign(EXPIRY),
            Op::Read => GetObject::new(&bucket, c, key).sign(EXPIRY),
            _ => DeleteObject::new(&bucket, c, key).sign(EXPIRY),
        };
        Ok(url.into())
    }

    /// The first object a job writing or trimming under `path` would
    /// overwrite or delete that iomark did not write (it lacks iomark's
    /// mark), or None. Looks at up to [`CONSENT_LIMIT`] objects.
    pub fn foreign_object(&self, path: &str) -> Result<Option<String>, String> {
        let Some(s3) = &self.s3 else {
            return Ok(None);
        };
        let (bucket_name, key) =
            split_bucket(path).ok_or_else(|| format!("object path '{path}' names no object"))?;
        let bucket = Bucket::new(
            self.endpoint.clone(),
            UrlStyle::Path,
            bucket_name.to_string(),
            s3.region.clone(),
        )
        .map_err(|e| format!("bucket of '{path}': {e}"))?;
        let c = Some(&s3.creds);
        let prefix = match self.object_mode {
            ObjectMode::Block => format!("{key}_"),
            ObjectMode::Range => key.to_string(),
        };
        let mut list = ListObjectsV2::new(&bucket, c);
        list.with_prefix(prefix.as_str());
        list.with_max_keys(CONSENT_LIMIT);
        let url: String = list.sign(EXPIRY).into();
        let listing = format!("/{bucket_name}/{prefix}");
        let resp = self.with_retries("LIST", &listing, || {
            let mut resp = self.agent.get(&url).call().map_err(describe)?;
            match resp.status().as_u16() {
                // No bucket: nothing to overwrite (the run will say so).
                200 | 404 => Ok(resp),
                _ => Err(refusal(&mut resp)),
            }
        });
        let mut resp = resp.map_err(|e| format!("listing {listing}: {e}"))?;
        if resp.status().as_u16() == 404 {
            return Ok(None);
        }
        let text = resp
            .body_mut()
            .with_config()
            .limit(64 << 20)
            .read_to_string()
            .map_err(|e| format!("listing /{bucket_name}/{prefix}: {}", describe(e)))?;
        let listed = ListObjectsV2::parse_response(&text)
            .map_err(|e| format!("listing /{bucket_name}/{prefix}: {e}"))?;
        for o in &listed.contents {
            if self.object_mode == ObjectMode::Range && o.key != key {
                continue;
            }
            let url: String = HeadObject::new(&bucket, c, &o.key).sign(EXPIRY).into();
            let head = self
                .agent
                .head(&url)
                .call()
                .map_err(|e| format!("HEAD /{bucket_name}/{}: {}", o.key, describe(e)))?;
            if head.status().as_u16() == 404 {
                continue;
            }
            if !head.headers().contains_key(MARK) {
                return Ok(Some(format!("/{bucket_name}/{}", o.key)));
            }
        }
        Ok(None)
    }

    /// Does one I/O: `buf` is the data to PUT or the room a GET fills
    /// (with `http_op=head|list` a read is a HEAD or a LIST page, going
    /// on from `listing`). Returns the bytes moved and the time from the
    /// request's start to its answer's first byte (the status line;
    /// pauses before retries included, as in the I/O's latency), or one
    /// line saying what went wrong.
    pub fn execute(
        &self,
        op: Op,
        t: &Target,
        offset: u64,
        buf: &mut [u8],
        listing: &mut Listing,
    ) -> Result<(u64, Duration), String> {
        let start = Instant::now();
        let len = buf.len() as u64;
        if op == Op::Read && self.op != HttpOp::Data {
            return self.meta(t, offset, len, listing, start);
        }
        let object = self.object(t, offset, len);
        let method = match op {
            Op::Write => "PUT",
            Op::Read => "GET",
            _ => "DELETE",
        };
        let r = match (&self.s3, op) {
            (Some(s3), Op::Write) if self.part_size > 0 && len > self.part_size => {
                self.multipart(s3, &object, buf)
            }
            _ => self.with_retries(method, &object, || {
                self.exchange(op, &object, offset, t.size, buf)
            }),
        };
        if self.verbose > 0 {
            let what = match &r {
                Ok((status, n, _)) => format!("{status} ({n} bytes)"),
                Err(e) => e.clone(),
            };
            super::say(&format!("http: {method} {object}: {what}"));
        }
        match r {
            Ok((_, n, first)) => Ok((n, first.saturating_duration_since(start))),
            Err(e) => Err(format!("{method} {object}: {e}")),
        }
    }

    /// Runs `f` (one request) until it succeeds, fails for good, or the
    /// server stayed busy through `http_retries` retries, pausing between
    /// tries. Each retry is counted (`retried`) and, with
    /// `http_verbose`, said.
    fn with_retries<T>(
        &self,
        method: &str,
        object: &str,
        mut f: impl FnMut() -> Result<T, Fail>,
    ) -> Result<T, String> {
        let mut n = 0;
        loop {
            match f() {
                Ok(v) => return Ok(v),
                Err(e) if e.busy && n < self.retries => {
                    n += 1;
                    self.retried.fetch_add(1, Ordering::Relaxed);
                    let wait = e.retry_after.unwrap_or_else(|| pause(n)).min(MAX_PAUSE);
                    if self.verbose > 0 {
                        super::say(&format!(
                            "http: {method} {object}: {}; retry {n} of {} in {}ms",
                            e.msg,
                            self.retries,
                            wait.as_millis()
                        ));
                    }
                    std::thread::sleep(wait);
                }
                Err(e) if n > 0 => {
                    let s = if n == 1 { "y" } else { "ies" };
                    return Err(format!("{} (after {n} retr{s})", e.msg));
                }
                Err(e) => return Err(e.msg),
            }
        }
    }

    /// The exchange itself: (status, bytes moved, when the answer's
    /// first byte came).
    fn exchange(
        &self,
        op: Op,
        object: &str,
        offset: u64,
        size: u64,
        buf: &mut [u8],
    ) -> Result<(u16, u64, Instant), Fail> {
        let url = self.url(op, object)?;
        let len = buf.len() as u64;
        let auth = self.basic.as_ref().map(Secret::expose);
        let mut resp = match op {
            Op::Write => {
                let mut rq = self.agent.put(&url);
                if let Some(a) = auth {
                    rq = rq.header("authorization", a);
                }
                if self.s3.is_some() {
                    rq = rq.header(MARK, "1");
                }
                if let Some(sc) = self.storage_class.as_deref().filter(|_| self.s3.is_some()) {
                    rq = rq.header("x-amz-storage-class", sc);
                }
                rq.send(&buf[..]).map_err(describe)?
            }
            Op::Read => {
                let mut rq = self.agent.get(&url);
                if let Some(a) = auth {
                    rq = rq.header("authorization", a);
                }
                if self.object_mode == ObjectMode::Range && offset < size {
                    let end = (offset + len).min(size) - 1;
                    rq = rq.header("range", format!("bytes={offset}-{end}"));
                }
                rq.call().map_err(describe)?
            }
            _ => {
                let mut rq = self.agent.delete(&url);
                if let Some(a) = auth {
                    rq = rq.header("authorization", a);
                }
                rq.call().map_err(describe)?
            }
        };
        // ureq returns the response once its status line and headers
        // have come: the first byte is at most a few header lines back.
        let first = Instant::now();
        let status = resp.status().as_u16();
        if self.verbose > 1 {
            for (k, v) in resp.headers() {
                super::say(&format!(
                    "http:   < {k}: {}",
                    String::from_utf8_lossy(v.as_bytes())
                ));
            }
        }
        let ok = match op {
            Op::Write => (200..=204).contains(&status),
            Op::Read => status == 200 || status == 206 || status == 404,
            _ => matches!(status, 200 | 202 | 204 | 404),
        };
        if !ok {
            return Err(refusal(&mut resp));
        }
        match op {
            Op::Read if status == 404 => {
                // As fio does: a missing object reads as zeroes (like a
                // hole in a file); a missing bucket is an error.
                no_bucket(&mut resp)?;
                buf.fill(0);
                Ok((status, len, first))
            }
            Op::Read => {
                let mut body = resp.body_mut().as_reader();
                let mut got = 0usize;
                while got < buf.len() {
                    match body.read(&mut buf[got..]) {
                        Ok(0) => break,
                        Ok(n) => got += n,
                        Err(e) => return Err(format!("reading the body: {e}").into()),
                    }
                }
                // More than asked for: the object is larger than the block.
                let mut extra = [0u8; 1];
                match body.read(&mut extra) {
                    Ok(0) => {}
                    Ok(_) => {
                        return Err(format!(
                            "HTTP {status}: the object holds more than the {len} bytes asked for"
                        )
                        .into())
                    }
                    Err(e) => return Err(format!("reading the body: {e}").into()),
                }
                Ok((status, got as u64, first))
            }
            Op::Write => {
                drain(&mut resp);
                Ok((status, len, first))
            }
            _ if status == 404 => {
                // A missing object is no error for a DELETE (it is gone
                // either way); a missing bucket is: nothing was deleted.
                no_bucket(&mut resp)?;
                Ok((status, len, first))
            }
            _ => {
                drain(&mut resp);
                Ok((status, len, first))
            }
        }
    }
}

/// A 404 answer that says the bucket is missing, as an error (one of a
/// missing object is not).
fn no_bucket(resp: &mut ureq::http::Response<ureq::Body>) -> Result<(), Fail> {
    let code = error_code(resp);
    if code == " (NoSuchBucket)" {
        return Err(format!("HTTP 404{code}").into());
    }
    Ok(())
}

/// A response whose status says the request failed: `HTTP 503
/// (SlowDown)`, busy or not, with the server's `Retry-After`.
fn refusal(resp: &mut ureq::http::Response<ureq::Body>) -> Fail {
    let status = resp.status().as_u16();
    let retry_after = resp
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    Fail {
        msg: format!("HTTP {status}{}", error_code(resp)),
        busy: is_busy(status),
        retry_after,
    }
}

/// The certificate authorities `https=on` trusts: those of
/// `http_ca_file`, else of `SSL_CERT_FILE`, else (None) the built-in
/// list. One line when the file cannot be read or holds no certificate.
fn ca_roots(file: Option<&str>) -> Result<Option<ureq::tls::RootCerts>, String> {
    let (path, whence) = match file {
        Some(f) => (f.to_string(), "http_ca_file"),
        None => match std::env::var("SSL_CERT_FILE") {
            Ok(f) if !f.trim().is_empty() => (f, "SSL_CERT_FILE"),
            _ => return Ok(None),
        },
    };
    let pem = std::fs::read(&path).map_err(|e| {
        format!(
            "{whence} '{path}' cannot be read: {}",
            crate::sys::error_text(&e)
        )
    })?;
    let mut certs = Vec::new();
    for item in ureq::tls::parse_pem(&pem) {
        match item {
            Ok(ureq::tls::PemItem::Certificate(c)) => certs.push(c),
            Ok(_) => {}
            Err(e) => return Err(format!("{whence} '{path}' is not a PEM file: {e}")),
        }
    }
    if certs.is_empty() {
        return Err(format!(
            "{whence} '{path}' holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
        ));
    }
    Ok(Some(ureq::tls::RootCerts::new_with_certs(&certs)))
}

/// Reads what is left of a response, so its connection can be reused.
fn drain(resp: &mut ureq::http::Response<ureq::Body>) {
    let _ = std::io::copy(
        &mut resp.body_mut().as_reader().take(1 << 20),
        &mut std::io::sink(),
    );
}

/// ` (Code)` of an S3 error document, or "" when there is none.
fn error_code(resp: &mut ureq::http::Response<ureq::Body>) -> String {
    let text = resp
        .body_mut()
        .with_config()
        .limit(64 << 10)
        .read_to_string()
        .unwrap_or_default();
    code_of(&text)
}

/// ` (Code)` of the S3 error document `text`, or "" when it has none
/// (or one that is not a plain word).
fn code_of(text: &str) -> String {
    let code = text
        .split_once("<Code>")
        .and_then(|(_, r)| r.split_once("</Code>"))
        .map(|(c, _)| c.trim());
    match code {
        Some(c) if !c.is_empty() && c.len() < 80 && !c.contains(['<', '\n']) => format!(" ({c})"),
        _ => String::new(),
    }
}

/// One line for a failed exchange, without the URL (it holds the
/// signature).
fn describe(e: ureq::Error) -> String {
    use ureq::Error as E;
    match e {
        E::Io(io) if io.to_string().contains("invalid peer certificate") => format!(
            "TLS: the server's certificate is not trusted ({}): give its authority with http_ca_file=, or https=insecure",
            io.to_string().replace("invalid peer certificate: ", "")
        ),
        E::Io(io) => io.to_string(),
        E::Timeout(t) => format!("timed out ({t})"),
        E::HostNotFound => "host not found".into(),
        E::ConnectionFailed => "connection failed".into(),
        E::Tls(m) => format!("TLS: {m}"),
        E::Rustls(r) => format!("TLS: {r}"),
        E::BadUri(_) => "not a valid URL".into(),
        other => {
            // Variants that could quote the URL are named, not shown.
            let s = other.to_string();
            if s.contains("X-Amz-") || s.contains("://") {
                "request failed".into()
            } else {
                s
            }
        }
    }
}

/// Standard base64 (RFC 4648) of `data`, for a basic authorization
/// header.
fn base64(data: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for c in data.chunks(3) {
        let b = [c[0], *c.get(1).unwrap_or(&0), *c.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= c.len() {
                out.push(T[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648() {
        for (i, o) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(i.as_bytes()), o, "{i}");
        }
    }

    #[test]
    fn the_code_of_an_s3_error_document_is_one_plain_word() {
        let doc =
            "<?xml version=\"1.0\"?><Error><Code>InvalidPart</Code><Message>m</Message></Error>";
        assert_eq!(code_of(doc), " (InvalidPart)");
        assert_eq!(code_of("<Error><Message>m</Message></Error>"), "");
        assert_eq!(code_of("<Code>a<b></Code>"), "");
        assert_eq!(code_of(""), "");
    }

    #[test]
    fn object_paths_split_into_bucket_and_key() {
        assert_eq!(split_bucket("/b/k/e.y"), Some(("b", "k/e.y")));
        assert_eq!(split_bucket("/b/"), None);
        assert_eq!(split_bucket("/b"), None);
        assert_eq!(split_bucket("b/k"), None);
    }

    fn client(mode: ObjectMode) -> Client {
        let mut spec = JobSpec::default();
        spec.io.ioengine = crate::job::EngineKind::Http;
        spec.engine.http.mode = HttpMode::S3;
        spec.engine.http.host = "127.0.0.1:9".into();
        spec.engine.http.s3_keyid = Some("AKIDEXAMPLE".into());
        spec.engine.http.s3_key = Some(Secret::new("wJalrXUtnFEMI-secret"));
        spec.engine.http.object_mode = mode;
        Client::new(&spec).unwrap()
    }

    #[test]
    fn objects_are_named_as_fio_names_them() {
        let t = Target {
            path: "/bkt/obj".into(),
            size: 1 << 20,
        };
        assert_eq!(
            client(ObjectMode::Block).object(&t, 8192, 4096),
            "/bkt/obj_8192_4096"
        );
        assert_eq!(client(ObjectMode::Range).object(&t, 8192, 4096), "/bkt/obj");
    }

    #[test]
    fn signed_urls_are_path_style_and_hold_no_secret() {
        let c = client(ObjectMode::Block);
        let u = c.url(Op::Write, "/bkt/dir/obj_0_4096").unwrap();
        assert!(
            u.starts_with("http://127.0.0.1:9/bkt/dir/obj_0_4096?"),
            "{u}"
        );
        assert!(u.contains("X-Amz-Signature="), "{u}");
        assert!(!u.contains("wJalrXUtnFEMI-secret"), "{u}");
    }

    #[test]
    fn a_refused_connection_is_one_line_naming_method_and_object() {
        let c = client(ObjectMode::Block);
        let t = Target {
            path: "/bkt/obj".into(),
            size: 4096,
        };
        let mut buf = vec![0u8; 4096];
        let e = c
            .execute(Op::Write, &t, 0, &mut buf, &mut Listing::default())
            .unwrap_err();
        assert!(e.starts_with("PUT /bkt/obj_0_4096: "), "{e}");
        assert!(!e.contains('\n') && !e.contains("X-Amz"), "{e}");
    }
}
