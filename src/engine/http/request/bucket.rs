//! Buckets and prefixes, for the object presets (`iomark suite s3-*`):
//! whether a bucket exists, creating and removing the bucket a run owns,
//! and removing what a run wrote under its own prefix. Every request is
//! signed as the engine's are (SigV4) and retried when the server is
//! busy; none deletes an object that lacks iomark's mark.

use std::time::Instant;

use rusty_s3::actions::{
    CreateBucket, DeleteBucket, DeleteObject, HeadBucket, HeadObject, ListObjectsV2,
    ListObjectsV2Response,
};
use rusty_s3::{Bucket, S3Action, UrlStyle};

use super::{code_of, describe, drain, refusal, Client, Fail, EXPIRY, MARK, S3};

/// What removing a prefix did: objects removed, and objects left (not
/// iomark's, or their DELETE failed) with the first reason.
#[derive(Debug, Default)]
pub struct Removed {
    pub removed: u64,
    pub left: u64,
    pub why: Option<String>,
}

impl Client {
    fn s3(&self) -> Result<&S3, String> {
        self.s3
            .as_ref()
            .ok_or_else(|| "buckets need http_mode=s3".to_string())
    }

    fn named(&self, s3: &S3, name: &str) -> Result<Bucket, String> {
        Bucket::new(
            self.endpoint.clone(),
            UrlStyle::Path,
            name.to_string(),
            s3.region.clone(),
        )
        .map_err(|e| format!("bucket '{name}': {e}"))
    }

    /// Whether bucket `name` exists (and these credentials may see it).
    pub fn bucket_exists(&self, name: &str) -> Result<bool, String> {
        let s3 = self.s3()?;
        let b = self.named(s3, name)?;
        let url: String = HeadBucket::new(&b, Some(&s3.creds)).sign(EXPIRY).into();
        self.with_retries("HEAD", &format!("/{name}"), || {
            let mut resp = self.agent.head(&url).call().map_err(describe)?;
            match resp.status().as_u16() {
                200 => Ok(true),
                404 => Ok(false),
                _ => Err(refusal(&mut resp)),
            }
        })
        .map_err(|e| format!("HEAD /{name}: {e}"))
    }

    /// Creates bucket `name`; an error when it exists already.
    pub fn create_bucket(&self, name: &str) -> Result<(), String> {
        let s3 = self.s3()?;
        let b = self.named(s3, name)?;
        let a = CreateBucket::new(&b, &s3.creds);
        let url: String = a.sign(EXPIRY).into();
        let body = a.body();
        self.with_retries("PUT", &format!("/{name}"), || {
            let mut resp = self
                .agent
                .put(&url)
                .send(body.as_bytes())
                .map_err(describe)?;
            if !resp.status().is_success() {
                return Err(refusal(&mut resp));
            }
            drain(&mut resp);
            Ok(())
        })
        .map_err(|e| format!("creating bucket /{name}: {e}"))
    }

    /// Removes the empty bucket `name`.
    pub fn delete_bucket(&self, name: &str) -> Result<(), String> {
        let s3 = self.s3()?;
        let b = self.named(s3, name)?;
        let url: String = DeleteBucket::new(&b, &s3.creds).sign(EXPIRY).into();
        self.with_retries("DELETE", &format!("/{name}"), || {
            let mut resp = self.agent.delete(&url).call().map_err(describe)?;
            if !resp.status().is_success() {
                return Err(refusal(&mut resp));
            }
            drain(&mut resp);
            Ok(())
        })
        .map_err(|e| format!("removing bucket /{name}: {e}"))
    }

    /// The keys under `prefix` in bucket `name` (every page of the
    /// listing).
    pub fn list_prefix(&self, name: &str, prefix: &str) -> Result<Vec<String>, String> {
        let mut keys = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let (page, _) = self
                .list_page(name, prefix, token.as_deref(), None)
                .map_err(|e| format!("listing /{name}/{prefix}: {e}"))?;
            keys.extend(page.contents.into_iter().map(|o| o.key));
            match page.next_continuation_token {
                Some(t) if !t.is_empty() => token = Some(t),
                _ => return Ok(keys),
            }
        }
    }

    /// One page of the listing of `prefix` in bucket `name`, from
    /// `token` (None: the first page), of at most `max_keys` keys (None:
    /// as many as the server gives, 1000 in S3), and when its answer
    /// came (busy answers retried).
    pub(super) fn list_page(
        &self,
        name: &str,
        prefix: &str,
        token: Option<&str>,
        max_keys: Option<u32>,
    ) -> Result<(ListObjectsV2Response, Instant), String> {
        let s3 = self.s3()?;
        let b = self.named(s3, name)?;
        let mut list = ListObjectsV2::new(&b, Some(&s3.creds));
        list.with_prefix(prefix);
        if let Some(t) = token {
            list.with_continuation_token(t);
        }
        if let Some(k) = max_keys {
            list.with_max_keys(k as usize);
        }
        let url: String = list.sign(EXPIRY).into();
        let (text, first) = self.with_retries("LIST", &format!("/{name}/{prefix}"), || {
            let mut resp = self.agent.get(&url).call().map_err(describe)?;
            let first = Instant::now();
            if resp.status().as_u16() != 200 {
                return Err(refusal(&mut resp));
            }
            let text = resp
                .body_mut()
                .with_config()
                .limit(64 << 20)
                .read_to_string()
                .map_err(|e| Fail::from(describe(e)))?;
            Ok((text, first))
        })?;
        if text.contains("<Error>") {
            return Err(format!("refused{}", code_of(&text)));
        }
        let page = ListObjectsV2::parse_response(&text).map_err(|e| e.to_string())?;
        Ok((page, first))
    }

    /// Deletes every object under `prefix` in bucket `name` that carries
    /// iomark's mark; others are left and counted.
    pub fn remove_prefix(&self, name: &str, prefix: &str) -> Result<Removed, String> {
        let s3 = self.s3()?;
        let b = self.named(s3, name)?;
        let mut r = Removed::default();
        for key in self.list_prefix(name, prefix)? {
            let object = format!("/{name}/{key}");
            let head: String = HeadObject::new(&b, Some(&s3.creds), &key)
                .sign(EXPIRY)
                .into();
            let marked = self.with_retries("HEAD", &object, || {
                let mut resp = self.agent.head(&head).call().map_err(describe)?;
                match resp.status().as_u16() {
                    200 => Ok(Some(resp.headers().contains_key(MARK))),
                    404 => Ok(None),
                    _ => Err(refusal(&mut resp)),
                }
            });
            let outcome = match marked {
                Ok(None) => continue,
                Ok(Some(false)) => Err(format!("{object} was not written by iomark")),
                Ok(Some(true)) => {
                    let url: String = DeleteObject::new(&b, Some(&s3.creds), &key)
                        .sign(EXPIRY)
                        .into();
                    self.with_retries("DELETE", &object, || {
                        let mut resp = self.agent.delete(&url).call().map_err(describe)?;
                        if !matches!(resp.status().as_u16(), 200 | 202 | 204 | 404) {
                            return Err(refusal(&mut resp));
                        }
                        drain(&mut resp);
                        Ok(())
                    })
                    .map_err(|e| format!("DELETE {object}: {e}"))
                }
                Err(e) => Err(format!("HEAD {object}: {e}")),
            };
            match outcome {
                Ok(()) => r.removed += 1,
                Err(e) => {
                    r.left += 1;
                    r.why.get_or_insert(e);
                }
            }
        }
        Ok(r)
    }
}
