//! Requests that move no object data, for `http_op`: a HEAD of the
//! object a GET would read, and one page of ListObjectsV2 over the path's
//! key as a prefix, going on where the path's last page ended (after its
//! last page, from the first again). Each is one request, counted as a
//! read of 0 bytes; LIST pages count the objects they list.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::{describe, refusal, split_bucket, Client, Fail, Op, Target};
use crate::job::spec::{HttpOp, Secret};

/// Where the next LIST page of each object path starts: the continuation
/// token its listing gave (none: at the first page).
#[derive(Debug, Default)]
pub struct Listing {
    next: HashMap<String, String>,
}

impl Client {
    /// A read of `http_op=head|list` (see the module docs): 0 bytes and
    /// the time to the answer's first byte, or one line naming the
    /// request and what went wrong.
    pub(super) fn meta(
        &self,
        t: &Target,
        offset: u64,
        len: u64,
        listing: &mut Listing,
        start: Instant,
    ) -> Result<(u64, Duration), String> {
        let (method, what, r) = if self.op == HttpOp::List {
            let r = self
                .list_next(t, listing)
                .map(|(n, first)| (format!("200 ({n} objects)"), first));
            ("LIST", t.path.clone(), r)
        } else {
            let object = self.object(t, offset, len);
            let r = self
                .with_retries("HEAD", &object, || self.head(&object))
                .map(|first| ("200".to_string(), first));
            ("HEAD", object, r)
        };
        if self.verbose > 0 {
            let said = match &r {
                Ok((s, _)) => s.as_str(),
                Err(e) => e.as_str(),
            };
            super::super::say(&format!("http: {method} {what}: {said}"));
        }
        match r {
            Ok((_, first)) => Ok((0, first.saturating_duration_since(start))),
            Err(e) => Err(format!("{method} {what}: {e}")),
        }
    }

    /// A HEAD of `object`: when its answer came. A missing object is an
    /// error (there is nothing to stat).
    fn head(&self, object: &str) -> Result<Instant, Fail> {
        let url = self.url(Op::Read, object)?;
        let mut rq = self.agent.head(&url);
        if let Some(a) = self.basic.as_ref().map(Secret::expose) {
            rq = rq.header("authorization", a);
        }
        let mut resp = rq.call().map_err(describe)?;
        let first = Instant::now();
        match resp.status().as_u16() {
            200 => Ok(first),
            404 => Err("HTTP 404 (no such object)".to_string().into()),
            _ => Err(refusal(&mut resp)),
        }
    }

    /// The next page of the listing of `t`'s key as a prefix: the
    /// objects it listed and when its answer came.
    fn list_next(&self, t: &Target, listing: &mut Listing) -> Result<(u64, Instant), String> {
        let (bucket, prefix) = split_bucket(&t.path)
            .ok_or_else(|| "the object path names no bucket and key".to_string())?;
        let token = listing.next.get(&t.path).cloned();
        let (page, first) =
            self.list_page(bucket, prefix, token.as_deref(), Some(self.list_max_keys))?;
        let n = page.contents.len() as u64;
        self.listed.fetch_add(n, Ordering::Relaxed);
        match page.next_continuation_token.filter(|t| !t.is_empty()) {
            Some(next) => {
                listing.next.insert(t.path.clone(), next);
            }
            None => {
                listing.next.remove(&t.path);
            }
        }
        Ok((n, first))
    }
}
