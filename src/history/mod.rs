//! The results history: every run of `quick`, `suite` and `sweep` (and
//! job runs given `--label` or `--history`) kept in one SQLite database,
//! so that last month's run of the same test on the same device can be
//! found, drawn as a trend and compared.
//!
//! - Where: `--history-db PATH`, else `IOMARK_HISTORY_DB`, else
//!   `iomark/history.sqlite` in the user's data folder ([`db_path`]):
//!   `$XDG_DATA_HOME`, else `~/.local/share` (Linux and other Unix
//!   systems); the local application-data folder (`%LOCALAPPDATA%`) on
//!   Windows; `~/Library/Application Support` on macOS (these two from
//!   the `dirs` crate).
//! - What: per run its label, time, host, kernel, target (device, model,
//!   serial, firmware, filesystem, mount options), tool and version, job
//!   file and its digest, and per test its defining settings, its
//!   figures, each pass's figures and the merged latency histogram bins
//!   (so percentiles over any selection of runs stay exact: see
//!   [`run::bins_percentile`]). The same result document is kept once
//!   (by its SHA-256).
//! - How: the schema is versioned (`PRAGMA user_version`) and migrated
//!   forward in one transaction on open ([`MIGRATIONS`]); a database from
//!   a newer iomark is refused, never changed. The database runs in WAL
//!   mode with a busy timeout, and each run is written in one immediate
//!   transaction: two writers at once wait for each other, and a writer
//!   killed midway leaves no partial run (SQLite rolls it back).
//! - Whose: iomark's databases carry SQLite's `application_id`
//!   [`APPLICATION_ID`] ("iomk"). Before SQLite opens anything, the file
//!   is looked at ([`examine`]): a file that is not SQLite, another
//!   application's database, a history of a newer schema, a link, or a
//!   `-wal`, `-shm` or `-journal` beside it that is a link, has other
//!   hard links or is not a regular file, is refused in one line and
//!   left as it is. A history made before the mark (no `application_id`,
//!   iomark's tables) is recognised, and marked by the next writer.
//! - Readers (`history`, `trend`, `compare @label`, `history check`,
//!   `export`) open it read-only ([`Store::open_read`]): they never
//!   migrate, create tables or switch the journal mode; on read-only
//!   media (where no `-shm` can be made) they read it as immutable.
//!
//! - Commands: the `history` and `trend` requests and their runner
//!   ([`cmd`]); `cli` parses into them.
//!
//! Nothing here runs while a benchmark measures: a run is recorded after
//! its results are written, and a failure to record leaves them.

pub mod cmd;
pub mod export;
pub mod run;
pub mod time;
pub mod trend;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

pub use run::{Run, TargetInfo, TestRun};

use crate::results::dataset::Metrics;

/// The environment variable naming the history database.
pub const ENV_DB: &str = "IOMARK_HISTORY_DB";

/// SQLite's `application_id` of an iomark history: the bytes "iomk".
pub const APPLICATION_ID: i32 = 0x696f_6d6b;

/// The files SQLite keeps beside a database.
pub const BESIDE: &[&str] = &["-wal", "-shm", "-journal"];

/// How long a writer waits for another to finish before giving up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// The error of a statement on the history at `path`, for closures that
/// run while the connection is borrowed (a transaction).
fn sql_err(path: &Path) -> impl Fn(rusqlite::Error) -> HistoryError + Copy + '_ {
    move |e| HistoryError::Sql {
        path: path.to_path_buf(),
        why: e.to_string(),
    }
}

/// Runs `f` again while SQLite says the database is busy, for up to
/// [`BUSY_TIMEOUT`]: for the statements where SQLite does not call its
/// busy handler (a lock upgrade that could deadlock).
fn retry_busy<T>(mut f: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let start = std::time::Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        match f() {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if matches!(
                    e.code,
                    rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                ) && start.elapsed() < BUSY_TIMEOUT =>
            {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            other => return other,
        }
    }
}

/// The schema, one step per version: step i takes a database from
/// `user_version` i to i + 1.
pub const MIGRATIONS: &[&str] = &[
    // 1: runs and their tests.
    "CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        digest TEXT NOT NULL UNIQUE,
        label TEXT,
        kind TEXT NOT NULL,
        title TEXT NOT NULL,
        time INTEGER NOT NULL,
        host TEXT NOT NULL,
        kernel TEXT NOT NULL,
        tool TEXT NOT NULL,
        version TEXT NOT NULL,
        target_path TEXT NOT NULL,
        device TEXT NOT NULL,
        device_model TEXT NOT NULL,
        device_serial TEXT NOT NULL,
        device_firmware TEXT NOT NULL,
        fs_type TEXT NOT NULL,
        mount_options TEXT NOT NULL,
        jobfile TEXT,
        jobfile_digest TEXT,
        source TEXT NOT NULL,
        interrupted INTEGER NOT NULL,
        ntests INTEGER NOT NULL
    );
    CREATE TABLE tests (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        name TEXT NOT NULL,
        dir TEXT NOT NULL,
        settings TEXT NOT NULL,
        bw_bytes REAL,
        iops REAL,
        lat_mean_ns REAL,
        lat_p99_ns REAL,
        sync_write INTEGER NOT NULL,
        passes TEXT NOT NULL,
        lat_kind TEXT NOT NULL,
        bins TEXT NOT NULL,
        PRIMARY KEY (run_id, key)
    );
    CREATE INDEX runs_label ON runs(label);
    CREATE INDEX runs_time ON runs(time);
    CREATE INDEX tests_key ON tests(key);",
];

/// What went wrong with the history.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("no place for the results history: {}", NO_PATH_HINT)]
    NoPath,
    #[error("results history '{path}': {why}")]
    Open { path: PathBuf, why: String },
    #[error("results history '{path}' was written by a newer iomark (schema version {found}; this iomark knows up to {known}): it is left as it is")]
    Newer {
        path: PathBuf,
        found: i64,
        known: i64,
    },
    #[error("results history '{path}': {why}")]
    Sql { path: PathBuf, why: String },
    #[error("'{path}' is not an iomark results history ({why}): it is left as it is; name another file with --history-db")]
    NotOurs { path: PathBuf, why: String },
}

/// What to do when no data folder is found.
#[cfg(not(any(windows, target_os = "macos")))]
const NO_PATH_HINT: &str = "set IOMARK_HISTORY_DB, XDG_DATA_HOME or HOME, or give --history-db";
#[cfg(any(windows, target_os = "macos"))]
const NO_PATH_HINT: &str =
    "the user's data folder is not known; set IOMARK_HISTORY_DB or give --history-db";

/// Where the history is: `flag` (`--history-db`), else the environment,
/// else the user's data folder (see the module doc).
pub fn db_path(flag: Option<&Path>) -> Result<PathBuf, HistoryError> {
    if let Some(p) = flag {
        return Ok(p.to_path_buf());
    }
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(p) = var(ENV_DB) {
        return Ok(PathBuf::from(p));
    }
    let data = data_dir().ok_or(HistoryError::NoPath)?;
    Ok(data.join("iomark").join("history.sqlite"))
}

/// The user's data folder on Windows (the local application-data
/// folder, which stays on this machine) and macOS
/// (`~/Library/Application Support`), as the system says.
#[cfg(any(windows, target_os = "macos"))]
fn data_dir() -> Option<PathBuf> {
    dirs::data_local_dir()
}

/// The user's data folder elsewhere: `$XDG_DATA_HOME` when absolute,
/// else `$HOME/.local/share`.
#[cfg(not(any(windows, target_os = "macos")))]
fn data_dir() -> Option<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    xdg_data_dir(var("XDG_DATA_HOME"), var("HOME"))
}

/// The XDG data folder from `XDG_DATA_HOME` and `HOME`.
#[cfg_attr(any(windows, target_os = "macos"), allow(dead_code))]
fn xdg_data_dir(
    xdg: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
) -> Option<PathBuf> {
    match (xdg, home) {
        (Some(x), _) if Path::new(&x).is_absolute() => Some(PathBuf::from(x)),
        (_, Some(h)) => Some(PathBuf::from(h).join(".local/share")),
        _ => None,
    }
}

/// What is at a history's path, as [`examine`] found it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    /// Nothing yet.
    Missing,
    /// An empty file: nothing in it to lose.
    Empty,
    /// An iomark history (its `application_id`).
    Ours,
    /// A history made before iomark marked its histories: no
    /// `application_id`, iomark's tables.
    Unmarked,
}

/// `path` with `suffix` appended to its name (`h.sqlite-wal`).
pub fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// A file SQLite keeps beside the history: refused when it is a link,
/// has other hard links or is not a regular file (SQLite would write
/// another file through it), as every file iomark writes.
fn check_beside(p: &Path) -> Result<(), String> {
    let m = match std::fs::symlink_metadata(p) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            return Err(format!(
                "cannot look at '{}': {}",
                p.display(),
                crate::job::jobfile::io_reason(&e)
            ))
        }
    };
    let why = if m.file_type().is_symlink() {
        "is a symbolic link"
    } else if !m.is_file() {
        "is not a regular file"
    } else if crate::sys::stat_path(p, false).is_ok_and(|st| st.nlink > 1) {
        // The link count as the system gives it (on Windows from the
        // file's handle: std's metadata has none there).
        "has other hard links"
    } else {
        return Ok(());
    };
    Err(format!(
        "'{}' {why}, and SQLite would write through it into another file; nothing was opened \
         (iomark writes its files only where no link is)",
        p.display()
    ))
}

/// The first bytes of `path` (up to `buf.len()`); how many.
fn read_head(path: &Path, buf: &mut [u8]) -> std::io::Result<usize> {
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// An SQLite URI naming `path`, with `query` (`immutable=1`).
fn uri(path: &Path, query: &str) -> String {
    let bytes = path.as_os_str().as_encoded_bytes();
    let mut out = String::from("file:");
    if cfg!(windows) && bytes.get(1) == Some(&b':') {
        out.push_str("///");
    }
    for &b in bytes {
        match b {
            b'\\' if cfg!(windows) => out.push('/'),
            b if b.is_ascii_alphanumeric() || b"/-._~:".contains(&b) => out.push(b as char),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out.push('?');
    out.push_str(query);
    out
}

/// The columns of each table the first migration makes.
fn first_schema() -> rusqlite::Result<Vec<(String, Vec<String>)>> {
    let c = Connection::open_in_memory()?;
    c.execute_batch(MIGRATIONS[0])?;
    tables_of(&c)
}

/// The tables of a database (not SQLite's own), by name, with their
/// columns.
fn tables_of(c: &Connection) -> rusqlite::Result<Vec<(String, Vec<String>)>> {
    let names: Vec<String> = c
        .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%' \
             ORDER BY name",
        )?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    names
        .into_iter()
        .map(|n| {
            let cols = c
                .prepare("SELECT name FROM pragma_table_info(?1)")?
                .query_map([&n], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            Ok((n, cols))
        })
        .collect()
}

/// Whether the SQLite file at `path` (no `application_id`) is a history
/// made before iomark marked them: iomark's tables, each with at least
/// the first schema's columns, and a schema version this iomark knows.
/// Read as immutable: nothing is written, no file made beside it.
fn unmarked(path: &Path, known: i64) -> rusqlite::Result<bool> {
    use rusqlite::OpenFlags as F;
    let c = Connection::open_with_flags(
        uri(path, "immutable=1"),
        F::SQLITE_OPEN_READ_ONLY | F::SQLITE_OPEN_URI | F::SQLITE_OPEN_NO_MUTEX,
    )?;
    let version: i64 = c.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if !(1..=known).contains(&version) {
        return Ok(false);
    }
    let found = tables_of(&c)?;
    let want = first_schema()?;
    Ok(found.len() == want.len()
        && found
            .iter()
            .zip(&want)
            .all(|((fname, fcols), (wname, wcols))| {
                fname == wname && wcols.iter().all(|w| fcols.contains(w))
            }))
}

/// Looks at the file at `path`, and at the files SQLite keeps beside it,
/// before SQLite opens anything: what is there, or why iomark must not
/// open it (see the module documentation). `known`: the schema versions
/// this iomark knows.
pub fn examine(path: &Path, known: i64) -> Result<Found, HistoryError> {
    let open_err = |why: String| HistoryError::Open {
        path: path.to_path_buf(),
        why,
    };
    let not_ours = |why: &str| HistoryError::NotOurs {
        path: path.to_path_buf(),
        why: why.to_string(),
    };
    for suffix in BESIDE {
        check_beside(&beside(path, suffix)).map_err(open_err)?;
    }
    let m = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Found::Missing),
        Err(e) => return Err(open_err(crate::job::jobfile::io_reason(&e))),
    };
    if m.file_type().is_symlink() {
        return Err(open_err(
            "it is a symbolic link; name the history file itself (iomark writes its files only \
             where no link is)"
                .into(),
        ));
    }
    if !m.is_file() {
        return Err(open_err("not a regular file".into()));
    }
    if m.len() == 0 {
        return Ok(Found::Empty);
    }
    let mut head = [0u8; 100];
    let n = read_head(path, &mut head).map_err(|e| {
        open_err(format!(
            "cannot read it: {}",
            crate::job::jobfile::io_reason(&e)
        ))
    })?;
    if n < head.len() || !head.starts_with(b"SQLite format 3\0") {
        return Err(not_ours("not an SQLite database"));
    }
    let be = |at: usize| i32::from_be_bytes([head[at], head[at + 1], head[at + 2], head[at + 3]]);
    let (version, app) = (i64::from(be(60)), be(68));
    if app == APPLICATION_ID {
        if version > known {
            return Err(HistoryError::Newer {
                path: path.to_path_buf(),
                found: version,
                known,
            });
        }
        return Ok(Found::Ours);
    }
    if app != 0 {
        return Err(not_ours(&format!(
            "an SQLite database of another application: application_id {:#010x}",
            app as u32
        )));
    }
    match unmarked(path, known) {
        Ok(true) => Ok(Found::Unmarked),
        Ok(false) => Err(not_ours("an SQLite database without iomark's tables")),
        Err(e) => Err(not_ours(&format!(
            "an SQLite database iomark cannot read: {e}"
        ))),
    }
}

/// An open history database.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

/// Which runs to take.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    pub ids: Vec<i64>,
    pub label: Option<String>,
    /// A part of the host name.
    pub host: Option<String>,
    /// A part of the device name, model or serial.
    pub device: Option<String>,
    /// A part of a test's key or name: runs with such a test, and of
    /// them only those tests.
    pub test: Option<String>,
    pub kind: Option<String>,
    /// Unix seconds, inclusive.
    pub since: Option<i64>,
    pub until: Option<i64>,
    /// The latest N runs (still listed oldest first).
    pub last: Option<usize>,
}

/// The result of recording a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Recorded {
    pub id: i64,
    /// False when the same result was already there.
    pub new: bool,
}

fn nan_null(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

fn metrics_json(m: &Metrics) -> serde_json::Value {
    m.to_json()
}

impl Store {
    fn err(&self, e: impl std::fmt::Display) -> HistoryError {
        HistoryError::Sql {
            path: self.path.clone(),
            why: e.to_string(),
        }
    }

    /// Opens (creating it and its directory when missing), marks and
    /// migrates the history at `path`, for writing; a file that is not an
    /// iomark history is refused before anything is written (see the
    /// module documentation).
    pub fn open(path: &Path) -> Result<Store, HistoryError> {
        Self::open_with(path, MIGRATIONS)
    }

    /// `open` with a given list of migrations (tests).
    pub fn open_with(path: &Path, migrations: &[&str]) -> Result<Store, HistoryError> {
        let open_err = |why: String| HistoryError::Open {
            path: path.to_path_buf(),
            why,
        };
        let found = examine(path, migrations.len() as i64)?;
        if found == Found::Missing {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|e| {
                    open_err(format!(
                        "cannot create '{}': {}",
                        dir.display(),
                        crate::job::jobfile::io_reason(&e)
                    ))
                })?;
            }
        } else if crate::sys::stat_path(path, false).is_ok_and(|st| st.nlink > 1) {
            return Err(open_err(
                "it has other hard links, so writing it would change another file too".into(),
            ));
        }
        use rusqlite::OpenFlags as F;
        let flags = F::SQLITE_OPEN_READ_WRITE
            | F::SQLITE_OPEN_CREATE
            | F::SQLITE_OPEN_NO_MUTEX
            | F::SQLITE_OPEN_NOFOLLOW;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| open_err(e.to_string()))?;
        let mut store = Store {
            conn,
            path: path.to_path_buf(),
        };
        store
            .conn
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| store.err(e))?;
        // The mark is the first thing written: a file another process
        // sees half made is either empty or marked.
        store.mark(migrations, found)?;
        // Two processes opening a new database at once both try to switch
        // it to WAL; SQLite answers one of them "busy" at once, without
        // its busy handler (it would deadlock otherwise), so wait here.
        let mode: String = retry_busy(|| {
            store
                .conn
                .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
        })
        .map_err(|e| store.err(e))?;
        if !mode.eq_ignore_ascii_case("wal") {
            crate::run::output::stderr_line(&format!(
                "iomark: note: results history '{}' runs in {mode} mode (WAL is not available there)",
                path.display()
            ));
        }
        store
            .conn
            .execute_batch("PRAGMA foreign_keys=ON")
            .map_err(|e| store.err(e))?;
        store.migrate(migrations)?;
        Ok(store)
    }

    /// Opens the history at `path` to read it: read-only, never
    /// migrated, marked or switched to another journal mode. On media
    /// where SQLite cannot make its `-shm` (read-only mounts and
    /// directories) it is read as immutable, unless a `-wal` beside it
    /// holds changes not yet in it.
    pub fn open_read(path: &Path) -> Result<Store, HistoryError> {
        Self::open_read_with(path, MIGRATIONS.len() as i64)
    }

    fn open_read_with(path: &Path, known: i64) -> Result<Store, HistoryError> {
        let open_err = |why: String| HistoryError::Open {
            path: path.to_path_buf(),
            why,
        };
        if matches!(examine(path, known)?, Found::Missing | Found::Empty) {
            return Err(open_err("no run is recorded in it yet".into()));
        }
        use rusqlite::OpenFlags as F;
        let flags = F::SQLITE_OPEN_READ_ONLY | F::SQLITE_OPEN_NO_MUTEX | F::SQLITE_OPEN_NOFOLLOW;
        let version_of = |conn: Connection| -> rusqlite::Result<(Connection, i64)> {
            conn.busy_timeout(BUSY_TIMEOUT)?;
            let v = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
            Ok((conn, v))
        };
        let (conn, version) = match Connection::open_with_flags(path, flags).and_then(version_of) {
            Ok(x) => x,
            Err(first) => {
                let wal = beside(path, "-wal");
                if std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0) {
                    return Err(open_err(first.to_string()));
                }
                Connection::open_with_flags(uri(path, "immutable=1"), flags | F::SQLITE_OPEN_URI)
                    .and_then(version_of)
                    .map_err(|_| open_err(first.to_string()))?
            }
        };
        if version > known {
            return Err(HistoryError::Newer {
                path: path.to_path_buf(),
                found: version,
                known,
            });
        }
        if version < known {
            return Err(open_err(format!(
                "its schema is version {version}, older than this iomark's ({known}); the next \
                 run recorded there updates it"
            )));
        }
        Ok(Store {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// Marks a new, empty or unmarked history as iomark's (and makes a
    /// new one), in one transaction, before anything else is written; a
    /// marked one of a newer schema is refused.
    fn mark(&mut self, migrations: &[&str], found: Found) -> Result<(), HistoryError> {
        let known = migrations.len() as i64;
        let err = sql_err(&self.path);
        let newer = |found: i64| HistoryError::Newer {
            path: self.path.clone(),
            found,
            known,
        };
        let state = |c: &Connection| -> rusqlite::Result<(i32, i64, i64)> {
            let app = c.query_row("PRAGMA application_id", [], |r| r.get(0))?;
            let version = c.query_row("PRAGMA user_version", [], |r| r.get(0))?;
            let objects = c.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?;
            Ok((app, version, objects))
        };
        let (app, version, _) = retry_busy(|| state(&self.conn)).map_err(err)?;
        if app == APPLICATION_ID {
            return if version > known {
                Err(newer(version))
            } else {
                Ok(())
            };
        }
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err)?;
        // Another process may have made it meanwhile: look again, locked.
        let (app, version, objects) = state(&tx).map_err(err)?;
        if app == APPLICATION_ID {
            return if version > known {
                Err(newer(version))
            } else {
                Ok(())
            };
        }
        let fresh = app == 0 && version == 0 && objects == 0;
        let unmarked = app == 0 && found == Found::Unmarked;
        if !(fresh || unmarked) {
            return Err(HistoryError::NotOurs {
                path,
                why: "it changed while iomark looked at it".into(),
            });
        }
        if fresh {
            for (i, step) in migrations.iter().enumerate() {
                tx.execute_batch(step).map_err(err)?;
                tx.pragma_update(None, "user_version", i as i64 + 1)
                    .map_err(err)?;
            }
        }
        tx.pragma_update(None, "application_id", APPLICATION_ID)
            .map_err(err)?;
        tx.commit().map_err(err)
    }

    fn migrate(&mut self, migrations: &[&str]) -> Result<(), HistoryError> {
        let known = migrations.len() as i64;
        let version = |c: &Connection| -> rusqlite::Result<i64> {
            c.query_row("PRAGMA user_version", [], |r| r.get(0))
        };
        let found = retry_busy(|| version(&self.conn)).map_err(|e| self.err(e))?;
        if found > known {
            return Err(HistoryError::Newer {
                path: self.path.clone(),
                found,
                known,
            });
        }
        if found == known {
            return Ok(());
        }
        let err = sql_err(&self.path);
        // Another process may be migrating too: take the write lock, then
        // look again.
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err)?;
        let now = version(&tx).map_err(err)?;
        for (i, step) in migrations.iter().enumerate().skip(now.max(0) as usize) {
            tx.execute_batch(step).map_err(err)?;
            tx.pragma_update(None, "user_version", i as i64 + 1)
                .map_err(err)?;
        }
        tx.commit().map_err(err)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version of the database.
    pub fn version(&self) -> Result<i64, HistoryError> {
        self.conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| self.err(e))
    }

    /// Records a run (once: a result already there keeps its row).
    pub fn record(&mut self, run: &Run) -> Result<Recorded, HistoryError> {
        let err = sql_err(&self.path);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err)?;
        let existing: Option<i64> = tx
            .query_row(
                "SELECT id FROM runs WHERE digest = ?1",
                [&run.digest],
                |r| r.get(0),
            )
            .optional()
            .map_err(err)?;
        if let Some(id) = existing {
            return Ok(Recorded { id, new: false });
        }
        let t = &run.target;
        tx.execute(
            "INSERT INTO runs (digest, label, kind, title, time, host, kernel, tool, version,
                target_path, device, device_model, device_serial, device_firmware, fs_type,
                mount_options, jobfile, jobfile_digest, source, interrupted, ntests)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                ?17, ?18, ?19, ?20, ?21)",
            params![
                run.digest,
                run.label,
                run.kind,
                run.title,
                run.time,
                run.host,
                run.kernel,
                run.tool,
                run.version,
                t.path,
                t.device,
                t.model,
                t.serial,
                t.firmware,
                t.fs_type,
                t.mount_options,
                run.jobfile,
                run.jobfile_digest,
                run.source,
                run.interrupted,
                run.tests.len() as i64,
            ],
        )
        .map_err(err)?;
        let id = tx.last_insert_rowid();
        {
            let mut st = tx
                .prepare(
                    "INSERT INTO tests (run_id, key, name, dir, settings, bw_bytes, iops,
                        lat_mean_ns, lat_p99_ns, sync_write, passes, lat_kind, bins)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                )
                .map_err(err)?;
            for x in &run.tests {
                let passes: Vec<serde_json::Value> = x.passes.iter().map(metrics_json).collect();
                let bins: Vec<(f64, u64)> = x.bins.clone();
                st.execute(params![
                    id,
                    x.key,
                    x.name,
                    x.dir,
                    serde_json::to_string(&x.settings).unwrap_or_default(),
                    nan_null(x.value.bw_bytes),
                    nan_null(x.value.iops),
                    nan_null(x.value.lat_mean_ns),
                    nan_null(x.value.lat_p99_ns),
                    x.value.sync_write,
                    serde_json::Value::Array(passes).to_string(),
                    x.lat_kind,
                    serde_json::to_string(&bins).unwrap_or_default(),
                ])
                .map_err(err)?;
            }
        }
        tx.commit().map_err(err)?;
        Ok(Recorded { id, new: true })
    }

    /// The runs `f` selects, oldest first, with their tests.
    pub fn runs(&self, f: &Filter) -> Result<Vec<Run>, HistoryError> {
        let mut sql = String::from(
            "SELECT id, label, kind, title, time, host, kernel, tool, version, target_path,
                device, device_model, device_serial, device_firmware, fs_type, mount_options,
                jobfile, jobfile_digest, source, interrupted, digest FROM runs WHERE 1=1",
        );
        use rusqlite::types::Value as V;
        let mut args: Vec<V> = Vec::new();
        // `template` names its parameter `{}`.
        let mut add = |sql: &mut String, template: &str, v: V| {
            args.push(v);
            sql.push_str(&template.replace("{}", &format!("?{}", args.len())));
        };
        if !f.ids.is_empty() {
            let list: Vec<String> = f.ids.iter().map(i64::to_string).collect();
            sql.push_str(&format!(" AND id IN ({})", list.join(",")));
        }
        if let Some(l) = &f.label {
            add(&mut sql, " AND label = {}", V::Text(l.clone()));
        }
        if let Some(h) = &f.host {
            add(
                &mut sql,
                " AND instr(lower(host), lower({})) > 0",
                V::Text(h.clone()),
            );
        }
        if let Some(d) = &f.device {
            add(
                &mut sql,
                " AND (instr(lower(device), lower({})) > 0 OR instr(lower(device_model), lower({})) > 0 \
                 OR instr(lower(device_serial), lower({})) > 0)",
                V::Text(d.clone()),
            );
        }
        if let Some(k) = &f.kind {
            add(&mut sql, " AND kind = {}", V::Text(k.clone()));
        }
        if let Some(t) = &f.test {
            add(
                &mut sql,
                " AND EXISTS (SELECT 1 FROM tests t WHERE t.run_id = runs.id AND \
                 (instr(lower(t.key), lower({})) > 0 \
                 OR instr(lower(t.name || ' ' || t.dir), lower({})) > 0))",
                V::Text(t.clone()),
            );
        }
        if let Some(s) = f.since {
            add(&mut sql, " AND time >= {}", V::Integer(s));
        }
        if let Some(u) = f.until {
            add(&mut sql, " AND time <= {}", V::Integer(u));
        }
        sql.push_str(" ORDER BY time DESC, id DESC");
        if let Some(n) = f.last {
            sql.push_str(&format!(" LIMIT {n}"));
        }
        let mut st = self.conn.prepare(&sql).map_err(|e| self.err(e))?;
        let mut runs: Vec<Run> = st
            .query_map(rusqlite::params_from_iter(args.iter()), |r| {
                let text = |i: usize| -> rusqlite::Result<String> { r.get(i) };
                Ok(Run {
                    id: Some(r.get(0)?),
                    label: r.get(1)?,
                    kind: text(2)?,
                    title: text(3)?,
                    time: r.get(4)?,
                    host: text(5)?,
                    kernel: text(6)?,
                    tool: text(7)?,
                    version: text(8)?,
                    target: TargetInfo {
                        path: text(9)?,
                        device: text(10)?,
                        model: text(11)?,
                        serial: text(12)?,
                        firmware: text(13)?,
                        fs_type: text(14)?,
                        mount_options: text(15)?,
                    },
                    jobfile: r.get(16)?,
                    jobfile_digest: r.get(17)?,
                    source: format!("history #{}", r.get::<_, i64>(0)?),
                    interrupted: r.get(19)?,
                    wine: false,
                    digest: text(20)?,
                    tests: Vec::new(),
                })
            })
            .map_err(|e| self.err(e))?
            .collect::<rusqlite::Result<_>>()
            .map_err(|e| self.err(e))?;
        runs.reverse();
        for run in &mut runs {
            run.tests = self.tests_of(run.id.unwrap_or(0), f.test.as_deref())?;
        }
        Ok(runs)
    }

    fn tests_of(&self, id: i64, test: Option<&str>) -> Result<Vec<TestRun>, HistoryError> {
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT key, name, dir, settings, bw_bytes, iops, lat_mean_ns, lat_p99_ns,
                    sync_write, passes, lat_kind, bins FROM tests WHERE run_id = ?1 ORDER BY rowid",
            )
            .map_err(|e| self.err(e))?;
        let num = |v: Option<f64>| v.unwrap_or(f64::NAN);
        let rows = st
            .query_map([id], |r| {
                let settings: String = r.get(3)?;
                let passes: String = r.get(9)?;
                let bins: String = r.get(11)?;
                Ok(TestRun {
                    key: r.get(0)?,
                    name: r.get(1)?,
                    dir: r.get(2)?,
                    settings: serde_json::from_str(&settings).unwrap_or_default(),
                    value: Metrics {
                        bw_bytes: num(r.get(4)?),
                        iops: num(r.get(5)?),
                        lat_mean_ns: num(r.get(6)?),
                        lat_p99_ns: num(r.get(7)?),
                        sync_write: r.get(8)?,
                    },
                    passes: serde_json::from_str::<Vec<serde_json::Value>>(&passes)
                        .unwrap_or_default()
                        .iter()
                        .map(Metrics::from_json)
                        .collect(),
                    lat_kind: r.get(10)?,
                    bins: serde_json::from_str(&bins).unwrap_or_default(),
                })
            })
            .map_err(|e| self.err(e))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))?;
        let keep = |t: &TestRun| match test {
            None => true,
            Some(p) => {
                let p = p.to_lowercase();
                t.key.to_lowercase().contains(&p)
                    || format!("{} {}", t.name, t.dir).to_lowercase().contains(&p)
            }
        };
        Ok(rows.into_iter().filter(keep).collect())
    }

    /// Checks the database: SQLite's integrity and foreign key checks,
    /// and that every run has all its tests. The problems found.
    pub fn check(&self) -> Result<Vec<String>, HistoryError> {
        let mut problems = Vec::new();
        let mut st = self
            .conn
            .prepare("PRAGMA integrity_check")
            .map_err(|e| self.err(e))?;
        let rows: Vec<String> = st
            .query_map([], |r| r.get(0))
            .map_err(|e| self.err(e))?
            .collect::<rusqlite::Result<_>>()
            .map_err(|e| self.err(e))?;
        problems.extend(rows.into_iter().filter(|r| r != "ok"));
        let fk: i64 = self
            .conn
            .query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |r| {
                r.get(0)
            })
            .map_err(|e| self.err(e))?;
        if fk > 0 {
            problems.push(format!("{fk} test row(s) without their run"));
        }
        let mut st = self
            .conn
            .prepare(
                "SELECT id, ntests, (SELECT count(*) FROM tests WHERE run_id = runs.id) FROM runs
                 WHERE ntests != (SELECT count(*) FROM tests WHERE run_id = runs.id)",
            )
            .map_err(|e| self.err(e))?;
        let bad: Vec<(i64, i64, i64)> = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(|e| self.err(e))?
            .collect::<rusqlite::Result<_>>()
            .map_err(|e| self.err(e))?;
        for (id, want, got) in bad {
            problems.push(format!("run #{id} has {got} of its {want} tests"));
        }
        Ok(problems)
    }

    /// How many runs the history holds.
    pub fn count(&self) -> Result<i64, HistoryError> {
        self.conn
            .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
            .map_err(|e| self.err(e))
    }

    /// Removes runs by id; how many went.
    pub fn delete(&mut self, ids: &[i64]) -> Result<usize, HistoryError> {
        let err = sql_err(&self.path);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err)?;
        let mut n = 0;
        for id in ids {
            n += tx
                .execute("DELETE FROM runs WHERE id = ?1", [id])
                .map_err(err)?;
        }
        tx.commit().map_err(err)?;
        Ok(n)
    }
}

/// A label as given to `--label`: text without control characters, at
/// most 100 characters, not starting with `@` or `#` (which name labels
/// and run ids in `compare` and `trend`).
pub fn check_label(v: &str) -> Result<String, String> {
    let t = v.trim();
    if t.is_empty() {
        return Err("give a name".into());
    }
    if t.chars().any(char::is_control) {
        return Err("a label cannot hold control characters".into());
    }
    if t.chars().count() > 100 {
        return Err("a label has at most 100 characters".into());
    }
    if t.starts_with(['@', '#']) {
        return Err(format!(
            "'{t}': a label cannot start with '@' or '#' (compare --base @{} names it)",
            t.trim_start_matches(['@', '#'])
        ));
    }
    Ok(t.to_string())
}

/// How a benchmark or job run is recorded: where, or not at all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordOptions {
    pub enabled: bool,
    pub db: Option<PathBuf>,
}

/// Records the result document `doc` (label, environment and figures
/// inside) as one run; the line to print on success, or the reason it
/// failed. `jobfile` is the job file text when the document lacks it.
pub fn record_document(
    opts: &RecordOptions,
    doc: &serde_json::Value,
    text: &str,
    source: &str,
    jobfile: Option<&str>,
) -> Result<String, String> {
    let mut run = run::from_value(doc, source)?;
    run.digest = run::digest(text.as_bytes());
    if run.jobfile.is_none() {
        if let Some(j) = jobfile {
            run.jobfile = Some(j.to_string());
            run.jobfile_digest = Some(run::digest(j.as_bytes()));
        }
    }
    let path = db_path(opts.db.as_deref()).map_err(|e| e.to_string())?;
    let mut store = Store::open(&path).map_err(|e| e.to_string())?;
    let rec = store.record(&run).map_err(|e| e.to_string())?;
    Ok(format!("run #{} in {}", rec.id, path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(digest: &str, label: &str, time: i64) -> Run {
        Run {
            label: Some(label.into()),
            kind: "quick".into(),
            title: "t".into(),
            time,
            tool: "iomark".into(),
            version: "0.1.0".into(),
            host: "h1".into(),
            digest: digest.into(),
            target: TargetInfo {
                device: "vda".into(),
                model: "Disk X".into(),
                serial: "SN1".into(),
                ..TargetInfo::default()
            },
            tests: vec![TestRun {
                key: "a/read".into(),
                name: "A".into(),
                dir: "read".into(),
                value: Metrics {
                    bw_bytes: 1.0,
                    iops: 2.0,
                    lat_mean_ns: 3.0,
                    lat_p99_ns: f64::NAN,
                    sync_write: false,
                },
                passes: vec![Metrics::default()],
                lat_kind: "lat".into(),
                bins: vec![(10.0, 3), (20.0, 1)],
                settings: [("bs".to_string(), "4k".to_string())].into(),
            }],
            ..Run::default()
        }
    }

    /// A history recorded by an earlier iomark (tests/fixtures/history:
    /// a sweep's results bundle and a job's json+ output, imported into
    /// recorded.sqlite): the same files read again are the runs it holds,
    /// recognised by their digest and equal field by field.
    #[test]
    fn runs_recorded_before_are_recognised() {
        let d = tempfile::tempdir().unwrap();
        let db = d.path().join("h.sqlite");
        std::fs::write(
            &db,
            include_bytes!("../../tests/fixtures/history/recorded.sqlite"),
        )
        .unwrap();
        let mut s = Store::open(&db).unwrap();
        let stored = s.runs(&Filter::default()).unwrap();
        assert_eq!(stored.len(), 2);
        for (file, text, digest) in [
            (
                "bundle.json",
                include_str!("../../tests/fixtures/history/bundle.json"),
                "f32de4556355f0b28f28e3699f6de9c06ee9bcfd62322bae1f6660f11d5fda9e",
            ),
            (
                "job.json",
                include_str!("../../tests/fixtures/history/job.json"),
                "06c9dcaf4d1d494f59021436b6749a83482fda1786518f43db9bc5897257651c",
            ),
        ] {
            let run = run::from_text(text, file).unwrap();
            assert_eq!(run.digest, digest, "{file}");
            let was = stored.iter().find(|r| r.digest == digest).unwrap();
            assert_eq!(
                s.record(&run).unwrap(),
                Recorded {
                    id: was.id.unwrap(),
                    new: false
                },
                "{file}"
            );
            // Each pass as the store keeps it (figures to 3 decimals).
            let kept = |r: &Run| -> Vec<Run> {
                let passes = r.tests.iter().flat_map(|t| &t.passes);
                let as_stored = passes.map(|p| Metrics::from_json(&metrics_json(p)));
                let tests = r.tests.iter().map(|t| TestRun {
                    passes: Vec::new(),
                    ..t.clone()
                });
                vec![
                    Run {
                        id: was.id,
                        source: was.source.clone(),
                        tests: tests.collect(),
                        ..r.clone()
                    },
                    Run {
                        tests: as_stored
                            .map(|p| TestRun {
                                passes: vec![p],
                                ..TestRun::default()
                            })
                            .collect(),
                        ..Run::default()
                    },
                ]
            };
            assert_eq!(kept(&run), kept(was), "{file}");
        }
    }

    #[test]
    fn runs_are_recorded_once_and_found_by_filter() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sub/h.sqlite");
        let mut s = Store::open(&p).unwrap();
        assert_eq!(s.version().unwrap(), MIGRATIONS.len() as i64);
        let a = s.record(&run("d1", "a", 100)).unwrap();
        assert!(a.new);
        assert_eq!(
            s.record(&run("d1", "a", 100)).unwrap(),
            Recorded {
                id: a.id,
                new: false
            }
        );
        s.record(&run("d2", "b", 200)).unwrap();
        s.record(&run("d3", "a", 300)).unwrap();
        let all = s.runs(&Filter::default()).unwrap();
        assert_eq!(
            all.iter().map(|r| r.time).collect::<Vec<_>>(),
            vec![100, 200, 300]
        );
        let back = &all[0];
        assert_eq!(back.tests[0].bins, vec![(10.0, 3), (20.0, 1)]);
        assert!(back.tests[0].value.lat_p99_ns.is_nan());
        assert_eq!(back.tests[0].settings["bs"], "4k");
        assert_eq!(back.target.serial, "SN1");
        let a_only = Filter {
            label: Some("a".into()),
            ..Filter::default()
        };
        assert_eq!(s.runs(&a_only).unwrap().len(), 2);
        let last = Filter {
            label: Some("a".into()),
            last: Some(1),
            ..Filter::default()
        };
        assert_eq!(s.runs(&last).unwrap()[0].time, 300);
        let dev = Filter {
            device: Some("disk x".into()),
            since: Some(150),
            ..Filter::default()
        };
        assert_eq!(s.runs(&dev).unwrap().len(), 2);
        let none = Filter {
            test: Some("zzz".into()),
            ..Filter::default()
        };
        assert!(s.runs(&none).unwrap().is_empty());
        assert!(s.check().unwrap().is_empty());
        assert_eq!(s.delete(&[a.id]).unwrap(), 1);
        assert_eq!(s.count().unwrap(), 2);
        assert!(s.check().unwrap().is_empty(), "its tests went with it");
    }

    #[test]
    fn the_schema_migrates_forward_and_a_newer_one_is_left_alone() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("h.sqlite");
        let one = [MIGRATIONS[0]];
        let mut s = Store::open_with(&p, &one).unwrap();
        s.record(&run("d1", "a", 1)).unwrap();
        drop(s);
        let two = [MIGRATIONS[0], "ALTER TABLE runs ADD COLUMN note TEXT"];
        let s = Store::open_with(&p, &two).unwrap();
        assert_eq!(s.version().unwrap(), 2);
        assert_eq!(s.runs(&Filter::default()).unwrap().len(), 1, "runs kept");
        drop(s);
        match Store::open_with(&p, &one) {
            Err(HistoryError::Newer {
                found: 2, known: 1, ..
            }) => {}
            Err(e) => panic!("{e}"),
            Ok(_) => panic!("a newer schema was opened"),
        }
    }

    /// SHA-256 of a file's bytes.
    fn sha(p: &Path) -> String {
        run::digest(&std::fs::read(p).unwrap())
    }

    /// The files SQLite keeps beside `p` that exist.
    fn beside_files(p: &Path) -> Vec<PathBuf> {
        BESIDE
            .iter()
            .map(|s| beside(p, s))
            .filter(|b| std::fs::symlink_metadata(b).is_ok())
            .collect()
    }

    /// An SQLite file made by `sql`.
    fn sqlite_file(p: &Path, sql: &str) {
        let c = Connection::open(p).unwrap();
        c.execute_batch(sql).unwrap();
    }

    #[test]
    fn files_that_are_not_iomarks_history_are_refused_and_left_as_they_are() {
        let d = tempfile::tempdir().unwrap();
        let text = d.path().join("notes.txt");
        std::fs::write(&text, "not a database\n").unwrap();
        let other = d.path().join("other.sqlite");
        sqlite_file(&other, "CREATE TABLE t (x); INSERT INTO t VALUES (1);");
        // Another application's, even with tables of the same names.
        let app = d.path().join("app.sqlite");
        sqlite_file(
            &app,
            &format!("PRAGMA application_id = 42; {}", MIGRATIONS[0]),
        );
        // An empty SQLite database (a header, no table).
        let bare = d.path().join("bare.sqlite");
        sqlite_file(&bare, "PRAGMA user_version = 0; VACUUM;");
        // An iomark history of a newer schema, in WAL mode.
        let newer = d.path().join("newer.sqlite");
        drop(Store::open(&newer).unwrap());
        sqlite_file(&newer, "PRAGMA user_version = 9;");
        for (p, why) in [
            (&text, "not an SQLite database"),
            (&other, "without iomark's tables"),
            (&app, "application_id 0x0000002a"),
            (&bare, "without iomark's tables"),
            (&newer, "newer iomark (schema version 9"),
        ] {
            assert!(std::fs::metadata(p).unwrap().len() > 0);
            let before = sha(p);
            let there = beside_files(p);
            let w = Store::open(p)
                .err()
                .expect("a writer refuses it")
                .to_string();
            let r = Store::open_read(p)
                .err()
                .expect("a reader refuses it")
                .to_string();
            for e in [&w, &r] {
                assert!(e.contains(why), "{}: {e}", p.display());
                assert!(e.contains("left as it is"), "{e}");
                assert!(!e.contains('\n'), "{e}");
            }
            assert_eq!(sha(p), before, "{} unchanged", p.display());
            assert_eq!(
                beside_files(p),
                there,
                "nothing made beside {}",
                p.display()
            );
        }
    }

    #[test]
    fn readers_change_nothing_and_writers_mark_their_history() {
        let d = tempfile::tempdir().unwrap();
        // A history recorded before the mark: read, it stays as it is.
        let old = d.path().join("old.sqlite");
        std::fs::write(
            &old,
            include_bytes!("../../tests/fixtures/history/recorded.sqlite"),
        )
        .unwrap();
        let before = sha(&old);
        let app = |p: &Path| -> i32 {
            let c =
                Connection::open_with_flags(p, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
            c.query_row("PRAGMA application_id", [], |r| r.get(0))
                .unwrap()
        };
        assert_eq!(examine(&old, 1).unwrap(), Found::Unmarked);
        let r = Store::open_read(&old).unwrap();
        assert_eq!(r.runs(&Filter::default()).unwrap().len(), 2);
        assert!(r.check().unwrap().is_empty());
        drop(r);
        assert_eq!(sha(&old), before, "read, the file is as it was");
        assert_eq!(app(&old), 0);
        // A writer marks it, keeping its runs.
        let w = Store::open(&old).unwrap();
        assert_eq!(w.count().unwrap(), 2);
        drop(w);
        assert_eq!(app(&old), APPLICATION_ID);
        assert_eq!(examine(&old, 1).unwrap(), Found::Ours);
        // A new history is marked from its first byte; an empty file is
        // not made one by a reader.
        let new = d.path().join("new.sqlite");
        drop(Store::open(&new).unwrap());
        assert_eq!(app(&new), APPLICATION_ID);
        let empty = d.path().join("empty.sqlite");
        std::fs::write(&empty, "").unwrap();
        assert!(Store::open_read(&empty).is_err());
        assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);
        assert!(beside_files(&empty).is_empty());
    }

    /// A link planted where SQLite keeps its `-wal`, `-shm` or
    /// `-journal`: refused, naming the file and why, before SQLite opens
    /// anything; the file it leads to is unchanged.
    #[cfg(unix)]
    #[test]
    fn links_beside_the_history_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let db = d.path().join("h.sqlite");
        Store::open(&db)
            .unwrap()
            .record(&run("d1", "a", 1))
            .unwrap();
        let victim = d.path().join("victim.txt");
        std::fs::write(&victim, "someone else's file\n").unwrap();
        let before = sha(&victim);
        let db_before = sha(&db);
        for suffix in BESIDE {
            let at = beside(&db, suffix);
            for (how, why) in [
                ("hard", "has other hard links"),
                ("soft", "is a symbolic link"),
            ] {
                if how == "hard" {
                    std::fs::hard_link(&victim, &at).unwrap();
                } else {
                    std::os::unix::fs::symlink(&victim, &at).unwrap();
                }
                let w = Store::open(&db).err().expect("writer refused").to_string();
                let r = Store::open_read(&db)
                    .err()
                    .expect("reader refused")
                    .to_string();
                for e in [w, r] {
                    assert!(e.contains(&format!("'{}' {why}", at.display())), "{e}");
                }
                std::fs::remove_file(&at).unwrap();
                assert_eq!(sha(&victim), before, "{suffix} {how}");
            }
        }
        assert_eq!(sha(&db), db_before);
        // The history itself through a link: refused too.
        let link = d.path().join("link.sqlite");
        std::os::unix::fs::symlink(&db, &link).unwrap();
        assert!(Store::open(&link)
            .err()
            .unwrap()
            .to_string()
            .contains("symbolic link"));
        assert_eq!(Store::open(&db).unwrap().count().unwrap(), 1);
    }

    #[test]
    fn the_path_follows_the_flag_then_the_environment() {
        assert_eq!(
            db_path(Some(Path::new("/x/h.db"))).unwrap(),
            PathBuf::from("/x/h.db")
        );
        // The XDG folders (Linux and other Unix systems; the paths are
        // Unix paths, which Windows does not take as absolute).
        #[cfg(unix)]
        {
            let os = |s: &str| Some(std::ffi::OsString::from(s));
            assert_eq!(
                xdg_data_dir(os("/d"), os("/home/u")),
                Some(PathBuf::from("/d"))
            );
            assert_eq!(
                xdg_data_dir(os("rel"), os("/home/u")),
                Some(PathBuf::from("/home/u/.local/share")),
                "a relative XDG_DATA_HOME is ignored"
            );
            assert_eq!(xdg_data_dir(None, None), None);
        }
    }

    /// On Windows and macOS the data folder comes from the system, not
    /// from HOME or XDG_DATA_HOME.
    #[cfg(any(windows, target_os = "macos"))]
    #[test]
    fn the_data_folder_is_the_systems() {
        let d = data_dir().expect("a data folder");
        if cfg!(windows) {
            assert!(
                d.ends_with("AppData\\Local") || d.to_string_lossy().contains("Local"),
                "{}",
                d.display()
            );
        } else {
            assert!(
                d.ends_with("Library/Application Support"),
                "{}",
                d.display()
            );
        }
    }

    #[test]
    fn a_directory_is_not_a_history() {
        let d = tempfile::tempdir().unwrap();
        assert!(matches!(
            Store::open(d.path()),
            Err(HistoryError::Open { .. })
        ));
    }
}
