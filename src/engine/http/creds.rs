//! Where S3 credentials and the region come from, in the order AWS tools
//! use: the job (`http_s3_keyid`, `http_s3_key`,
//! `http_s3_security_token`), the environment (`AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`), then the shared
//! credentials file (`AWS_SHARED_CREDENTIALS_FILE`, else
//! `~/.aws/credentials`, profile `AWS_PROFILE` or `default`). Messages
//! name where a credential was looked for, never its value.

use std::path::PathBuf;

use crate::job::spec::{HttpOpts, Secret};

/// A key pair and its optional session token.
#[derive(Debug)]
pub struct Creds {
    pub keyid: String,
    pub key: Secret,
    pub token: Option<Secret>,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The region requests are signed for.
pub fn region(o: &HttpOpts) -> String {
    o.s3_region
        .clone()
        .or_else(|| env("AWS_REGION"))
        .or_else(|| env("AWS_DEFAULT_REGION"))
        .unwrap_or_else(|| "us-east-1".into())
}

/// The credentials of a job, or one line saying what is missing.
pub fn resolve(o: &HttpOpts) -> Result<Creds, String> {
    match (&o.s3_keyid, &o.s3_key) {
        (Some(id), Some(key)) => {
            return Ok(Creds {
                keyid: id.clone(),
                key: key.clone(),
                token: o.s3_security_token.clone(),
            })
        }
        (Some(_), None) => {
            return Err("http_s3_keyid is given without http_s3_key: give both or neither".into())
        }
        (None, Some(_)) => {
            return Err("http_s3_key is given without http_s3_keyid: give both or neither".into())
        }
        (None, None) => {}
    }
    if let (Some(id), Some(key)) = (env("AWS_ACCESS_KEY_ID"), env("AWS_SECRET_ACCESS_KEY")) {
        return Ok(Creds {
            keyid: id,
            key: Secret::new(key),
            token: o
                .s3_security_token
                .clone()
                .or_else(|| env("AWS_SESSION_TOKEN").map(Secret::new)),
        });
    }
    let profile = env("AWS_PROFILE").unwrap_or_else(|| "default".into());
    let file = shared_file();
    if let Some(path) = &file {
        if let Ok(text) = std::fs::read_to_string(path) {
            if let Some(c) = from_profile(&text, &profile, o) {
                return Ok(c);
            }
        }
    }
    let place = file.map_or("~/.aws/credentials".into(), |p| p.display().to_string());
    Err(format!(
        "http_mode=s3 needs credentials: http_s3_keyid and http_s3_key, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or profile [{profile}] in {place}"
    ))
}

fn shared_file() -> Option<PathBuf> {
    if let Some(p) = env("AWS_SHARED_CREDENTIALS_FILE") {
        return Some(PathBuf::from(p));
    }
    #[cfg(windows)]
    let home = env("USERPROFILE");
    #[cfg(not(windows))]
    let home = env("HOME");
    home.map(|h| PathBuf::from(h).join(".aws").join("credentials"))
}

/// The keys of `[profile]` in a shared credentials file's text.
fn from_profile(text: &str, profile: &str, o: &HttpOpts) -> Option<Creds> {
    let mut inside = false;
    let (mut id, mut key, mut token) = (None, None, None);
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') || line.starts_with(';') || line.is_empty() {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            inside = name.trim() == profile;
            continue;
        }
        if !inside {
            continue;
        }
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        let v = v.trim().to_string();
        match k.trim() {
            "aws_access_key_id" => id = Some(v),
            "aws_secret_access_key" => key = Some(v),
            "aws_session_token" => token = Some(v),
            _ => {}
        }
    }
    Some(Creds {
        keyid: id.filter(|v| !v.is_empty())?,
        key: Secret::new(key.filter(|v| !v.is_empty())?),
        token: o.s3_security_token.clone().or(token.map(Secret::new)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_job_comes_first_and_halves_are_refused() {
        let mut o = HttpOpts {
            s3_keyid: Some("AKJOB".into()),
            s3_key: Some(Secret::new("SKJOB")),
            ..HttpOpts::default()
        };
        let c = resolve(&o).unwrap();
        assert_eq!((c.keyid.as_str(), c.key.expose()), ("AKJOB", "SKJOB"));
        o.s3_key = None;
        let e = resolve(&o).unwrap_err();
        assert!(e.contains("without http_s3_key"), "{e}");
    }

    #[test]
    fn a_profile_is_read_and_others_are_not() {
        let text = "[other]\naws_access_key_id = AKO\naws_secret_access_key = SKO\n\n\
                    # comment\n[default]\naws_access_key_id=AKD\naws_secret_access_key = SKD\naws_session_token = T\n";
        let o = HttpOpts::default();
        let c = from_profile(text, "default", &o).unwrap();
        assert_eq!((c.keyid.as_str(), c.key.expose()), ("AKD", "SKD"));
        assert_eq!(c.token.unwrap().expose(), "T");
        let c = from_profile(text, "other", &o).unwrap();
        assert_eq!(c.keyid, "AKO");
        assert!(from_profile(text, "missing", &o).is_none());
        assert!(from_profile("[default]\naws_access_key_id=A\n", "default", &o).is_none());
    }

    #[test]
    fn secrets_do_not_show_in_debug_output() {
        let c = Creds {
            keyid: "AK".into(),
            key: Secret::new("very-secret"),
            token: Some(Secret::new("tok-secret")),
        };
        let d = format!("{c:?}");
        assert!(
            !d.contains("very-secret") && !d.contains("tok-secret"),
            "{d}"
        );
    }
}
