//! The results history: every run of `quick`, `suite` and `sweep` (and
//! job runs given `--label` or `--history`) kept in one SQLite database,
//! so that last month's run of the same test on the same device can be
//! found, drawn as a trend and compared.
//!
//! - Where: `--history-db PATH`, else `IOMARK_HISTORY_DB`, else
//!   `$XDG_DATA_HOME/iomark/history.sqlite`, else
//!   `~/.local/share/iomark/history.sqlite` ([`db_path`]).
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
    #[error("no place for the results history: set {ENV_DB}, XDG_DATA_HOME or HOME, or give --history-db")]
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
}

/// Where the history is: `flag` (`--history-db`), else the environment
/// (see the module doc).
pub fn db_path(flag: Option<&Path>) -> Result<PathBuf, HistoryError> {
    if let Some(p) = flag {
        return Ok(p.to_path_buf());
    }
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(p) = var(ENV_DB) {
        return Ok(PathBuf::from(p));
    }
    let data = match (var("XDG_DATA_HOME"), var("HOME")) {
        (Some(x), _) if Path::new(&x).is_absolute() => PathBuf::from(x),
        (_, Some(h)) => PathBuf::from(h).join(".local/share"),
        _ => return Err(HistoryError::NoPath),
    };
    Ok(data.join("iomark").join("history.sqlite"))
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

    /// Opens (creating it and its directory when missing) and migrates
    /// the history at `path`.
    pub fn open(path: &Path) -> Result<Store, HistoryError> {
        Self::open_with(path, MIGRATIONS)
    }

    /// `open` with a given list of migrations (tests).
    pub fn open_with(path: &Path, migrations: &[&str]) -> Result<Store, HistoryError> {
        let open_err = |why: String| HistoryError::Open {
            path: path.to_path_buf(),
            why,
        };
        match std::fs::metadata(path) {
            Ok(m) if !m.is_file() => return Err(open_err("not a regular file".into())),
            Ok(_) => {}
            Err(_) => {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir).map_err(|e| {
                        open_err(format!(
                            "cannot create '{}': {}",
                            dir.display(),
                            crate::job::jobfile::io_reason(&e)
                        ))
                    })?;
                }
            }
        }
        let conn = Connection::open(path).map_err(|e| open_err(e.to_string()))?;
        let mut store = Store {
            conn,
            path: path.to_path_buf(),
        };
        store
            .conn
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| store.err(e))?;
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

    #[test]
    fn the_path_follows_the_flag_then_the_environment() {
        assert_eq!(
            db_path(Some(Path::new("/x/h.db"))).unwrap(),
            PathBuf::from("/x/h.db")
        );
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
