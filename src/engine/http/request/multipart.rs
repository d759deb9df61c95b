//! Multipart uploads (`http_s3_part_size`): the PUT of an object larger
//! than the part size is one CreateMultipartUpload, an UploadPart per
//! part (each retried on its own when the server is busy), then a
//! CompleteMultipartUpload. An upload that fails is aborted, so that no
//! parts are left stored (and billed) on the server.

use std::time::Instant;

use rusty_s3::actions::{
    AbortMultipartUpload, CompleteMultipartUpload, CreateMultipartUpload, UploadPart,
};
use rusty_s3::{Bucket, S3Action};

use super::{code_of, describe, drain, refusal, Client, Fail, EXPIRY, MARK, S3};

/// S3's most parts in one upload.
const MAX_PARTS: u64 = 10_000;

impl Client {
    /// PUTs `data` as `object` in parts of `self.part_size` bytes:
    /// (status, bytes, when the completing answer's first byte came).
    pub(super) fn multipart(
        &self,
        s3: &S3,
        object: &str,
        data: &[u8],
    ) -> Result<(u16, u64, Instant), String> {
        let part = self.part_size;
        let len = data.len() as u64;
        let parts = len.div_ceil(part);
        if parts > MAX_PARTS {
            return Err(format!(
                "an object of {len} bytes takes {parts} parts of {part}: S3 allows {MAX_PARTS}; give a larger http_s3_part_size"
            ));
        }
        let (bucket, key) = self.bucket(s3, object)?;
        let id = self.create(s3, &bucket, key, object)?;
        let r = self.upload(s3, &bucket, key, object, &id, data);
        if r.is_err() {
            // Best effort: the upload's failure is what is reported.
            let url: String = AbortMultipartUpload::new(&bucket, Some(&s3.creds), key, &id)
                .sign(EXPIRY)
                .into();
            if let Ok(mut resp) = self.agent.delete(&url).call() {
                drain(&mut resp);
            }
        }
        r
    }

    /// Starts an upload; its id.
    fn create(&self, s3: &S3, bucket: &Bucket, key: &str, object: &str) -> Result<String, String> {
        let mut a = CreateMultipartUpload::new(bucket, Some(&s3.creds), key);
        a.headers_mut().insert(MARK, "1");
        if let Some(sc) = &self.storage_class {
            a.headers_mut().insert("x-amz-storage-class", sc.as_str());
        }
        let url: String = a.sign(EXPIRY).into();
        self.with_retries("POST (start of a multipart upload)", object, || {
            let mut rq = self.agent.post(&url).header(MARK, "1");
            if let Some(sc) = &self.storage_class {
                rq = rq.header("x-amz-storage-class", sc);
            }
            let mut resp = rq.send_empty().map_err(describe)?;
            if !resp.status().is_success() {
                return Err(refusal(&mut resp));
            }
            let text = body_text(&mut resp)?;
            CreateMultipartUpload::parse_response(&text)
                .map(|r| r.upload_id().to_string())
                .map_err(|e| Fail::from(format!("no upload id in the answer: {e}")))
        })
    }

    /// Sends every part, then completes the upload.
    fn upload(
        &self,
        s3: &S3,
        bucket: &Bucket,
        key: &str,
        object: &str,
        id: &str,
        data: &[u8],
    ) -> Result<(u16, u64, Instant), String> {
        let chunks = data.chunks(self.part_size as usize);
        let total = chunks.len();
        let mut etags = Vec::with_capacity(total);
        for (i, chunk) in chunks.enumerate() {
            let n = u16::try_from(i + 1).expect("at most 10,000 parts");
            let url: String = UploadPart::new(bucket, Some(&s3.creds), key, n, id)
                .sign(EXPIRY)
                .into();
            let what = format!("{object} part {n} of {total}");
            let etag = self.with_retries("PUT", &what, || {
                let mut resp = self.agent.put(&url).send(chunk).map_err(describe)?;
                if !resp.status().is_success() {
                    return Err(refusal(&mut resp));
                }
                let etag = resp
                    .headers()
                    .get("etag")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string)
                    .ok_or_else(|| Fail::from("the answer has no ETag".to_string()))?;
                drain(&mut resp);
                Ok(etag)
            });
            let etag = etag.map_err(|e| format!("part {n} of {total}: {e}"))?;
            if self.verbose > 0 {
                super::super::say(&format!(
                    "http: PUT {what}: {} bytes, ETag {etag}",
                    chunk.len()
                ));
            }
            etags.push(etag);
        }
        let a = CompleteMultipartUpload::new(
            bucket,
            Some(&s3.creds),
            key,
            id,
            etags.iter().map(String::as_str),
        );
        let url: String = a.sign(EXPIRY).into();
        let body = a.body();
        self.with_retries("POST (end of a multipart upload)", object, || {
            let mut resp = self
                .agent
                .post(&url)
                .send(body.as_bytes())
                .map_err(describe)?;
            let first = Instant::now();
            let status = resp.status().as_u16();
            if !resp.status().is_success() {
                return Err(refusal(&mut resp));
            }
            // S3 may answer 200 and still fail the upload, in the body.
            let text = body_text(&mut resp)?;
            if text.contains("<Error>") {
                return Err(Fail::from(format!(
                    "the upload was not completed{}",
                    code_of(&text)
                )));
            }
            Ok((status, data.len() as u64, first))
        })
    }
}

/// The body of a successful answer (an S3 XML document), at most 1 MiB.
fn body_text(resp: &mut ureq::http::Response<ureq::Body>) -> Result<String, Fail> {
    resp.body_mut()
        .with_config()
        .limit(1 << 20)
        .read_to_string()
        .map_err(|e| Fail::from(describe(e)))
}
