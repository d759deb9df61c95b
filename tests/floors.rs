//! The house keeps its floors (docs/architecture.md): reads every file of
//! `src/` (std only) and fails on an import cycle between top-level
//! modules, on an import that goes up the floors, and on a circle of file
//! imports that spans two folders.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The floors, top down; the rooms of one floor do not import each other.
const FLOORS: &[&[&str]] = &[
    &["main"],
    &["cli"],
    &["suite"],
    &["launch"],
    &["cluster", "history"],
    &["report"],
    &["run", "results"],
    &["workload", "stats"],
    &["engine"],
    &["host"],
    &["job", "outfile"],
    &["sys", "histogram"],
];

fn floor_of(room: &str) -> Option<usize> {
    FLOORS.iter().position(|f| f.contains(&room))
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The code of a file without comments, string literals and its test
/// module (test-only imports do not shape the house).
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]") {
        Some(i) => &text[..i],
        None => text,
    };
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let end = text[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
            i = end;
        } else if b[i] == b'"' && (i == 0 || b[i - 1] != b'\'') {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else {
            let c = text[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Every path that starts with `crate::` or `super::` in `code`, as its
/// segments (one path per member of a `{…}` group, nested groups too).
fn paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let chars: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let starts = |w: &str| {
            chars[i..].iter().take(w.len()).copied().eq(w.chars())
                && (i == 0 || !is_ident(chars[i - 1]) && chars[i - 1] != ':')
        };
        if starts("crate::") || starts("super::") {
            let (p, next) = path_at(&chars, i, Vec::new());
            out.extend(p);
            i = next;
        } else {
            i += 1;
        }
    }
    out
}

/// The paths of one path expression at `i`, prefixed by `prefix`.
fn path_at(chars: &[char], mut i: usize, prefix: Vec<String>) -> (Vec<Vec<String>>, usize) {
    let mut segs = prefix;
    loop {
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
        if i < chars.len() && chars[i] == '{' {
            let mut out = Vec::new();
            i += 1;
            loop {
                while i < chars.len() && (chars[i].is_whitespace() || chars[i] == ',') {
                    i += 1;
                }
                if i >= chars.len() || chars[i] == '}' {
                    return (out, i + 1);
                }
                let (p, next) = path_at(chars, i, segs.clone());
                out.extend(p);
                i = next.max(i + 1);
                // Skip `as name` and anything else up to the member's end.
                while i < chars.len() && chars[i] != ',' && chars[i] != '}' {
                    i += 1;
                }
            }
        }
        let start = i;
        while i < chars.len() && is_ident(chars[i]) {
            i += 1;
        }
        if start == i {
            return (vec![segs], i);
        }
        segs.push(chars[start..i].iter().collect());
        if chars.get(i) == Some(&':') && chars.get(i + 1) == Some(&':') {
            i += 2;
        } else {
            return (vec![segs], i);
        }
    }
}

/// The module path of a file under src/ (`src/a/b.rs` and `src/a/b/mod.rs`
/// are `[a, b]`; lib.rs is the crate root).
fn module_of(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src()).unwrap();
    let mut m: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let last = m.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        m.push(stem.to_string());
    }
    m
}

/// The file that defines the deepest module named by `path` (absolute,
/// without `crate`), if any.
fn file_of(modules: &BTreeMap<Vec<String>, PathBuf>, path: &[String]) -> Option<PathBuf> {
    (1..=path.len())
        .rev()
        .find_map(|n| modules.get(&path[..n]).cloned())
}

struct House {
    /// Top-level module → top-level module → the files that import it.
    rooms: BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
    /// File → files it imports.
    files: BTreeMap<PathBuf, BTreeSet<PathBuf>>,
}

fn survey() -> House {
    let mut all = Vec::new();
    rust_files(&src(), &mut all);
    let modules: BTreeMap<Vec<String>, PathBuf> =
        all.iter().map(|f| (module_of(f), f.clone())).collect();
    let mut house = House {
        rooms: BTreeMap::new(),
        files: BTreeMap::new(),
    };
    for f in &all {
        let rel = f.strip_prefix(src()).unwrap();
        let first = rel.iter().next().unwrap().to_string_lossy().into_owned();
        let room = first.trim_end_matches(".rs").to_string();
        if room == "lib" {
            continue;
        }
        let here = module_of(f);
        let text = fs::read_to_string(f).unwrap();
        for p in paths(&code(&text)) {
            let abs: Vec<String> = if p[0] == "crate" {
                p[1..].to_vec()
            } else {
                // super:: is relative to the module the file defines.
                let ups = p.iter().take_while(|s| *s == "super").count();
                let mut base = here.clone();
                for _ in 0..ups {
                    base.pop();
                }
                base.extend(p[ups..].iter().cloned());
                base
            };
            let Some(target) = file_of(&modules, &abs) else {
                continue;
            };
            if target != *f {
                house.files.entry(f.clone()).or_default().insert(target);
            }
            let to = abs[0].clone();
            if to != room && modules.contains_key(&abs[..1]) {
                house
                    .rooms
                    .entry(room.clone())
                    .or_default()
                    .entry(to)
                    .or_default()
                    .insert(rel.display().to_string());
            }
        }
    }
    house
}

/// Strongly connected components of more than one node (Tarjan).
fn circles<N: Ord + Clone>(graph: &BTreeMap<N, BTreeSet<N>>) -> Vec<Vec<N>> {
    struct T<'a, N: Ord> {
        g: &'a BTreeMap<N, BTreeSet<N>>,
        index: BTreeMap<N, usize>,
        low: BTreeMap<N, usize>,
        stack: Vec<N>,
        on: BTreeSet<N>,
        out: Vec<Vec<N>>,
    }
    fn visit<N: Ord + Clone>(t: &mut T<'_, N>, v: &N) {
        let n = t.index.len();
        t.index.insert(v.clone(), n);
        t.low.insert(v.clone(), n);
        t.stack.push(v.clone());
        t.on.insert(v.clone());
        for w in t.g.get(v).into_iter().flatten() {
            if !t.index.contains_key(w) {
                visit(t, w);
                let l = t.low[v].min(t.low[w]);
                t.low.insert(v.clone(), l);
            } else if t.on.contains(w) {
                let l = t.low[v].min(t.index[w]);
                t.low.insert(v.clone(), l);
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = t.stack.pop().unwrap();
                t.on.remove(&w);
                let done = w == *v;
                comp.push(w);
                if done {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        g: graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v) {
            visit(&mut t, v);
        }
    }
    t.out
}

#[test]
fn no_two_top_level_modules_import_each_other() {
    let house = survey();
    let graph: BTreeMap<String, BTreeSet<String>> = house
        .rooms
        .iter()
        .map(|(a, to)| (a.clone(), to.keys().cloned().collect()))
        .collect();
    let found = circles(&graph);
    let mut msg = String::new();
    for c in &found {
        msg.push_str(&format!("circle: {}\n", c.join(" <-> ")));
        for a in c {
            for (b, files) in &house.rooms[a] {
                if c.contains(b) {
                    let files: Vec<&String> = files.iter().collect();
                    msg.push_str(&format!("  {a} -> {b}: {files:?}\n"));
                }
            }
        }
    }
    assert!(found.is_empty(), "{msg}");
}

#[test]
fn imports_go_down_the_floors() {
    let house = survey();
    let mut wrong = Vec::new();
    for (a, to) in &house.rooms {
        let Some(fa) = floor_of(a) else {
            wrong.push(format!(
                "{a} is on no floor (tests/floors.rs, docs/architecture.md)"
            ));
            continue;
        };
        for (b, files) in to {
            match floor_of(b) {
                Some(fb) if fb > fa => {}
                _ => wrong.push(format!("{a} -> {b} goes up or sideways: {files:?}")),
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Circles of files across the folders of one room that are known and
/// still to be taken apart (each as its files, sorted); a new one fails.
const KNOWN_CIRCLES: &[&str] = &[
    // The command tables (cli/cmd/) and the help, man page and
    // completions built from them.
    "cli/cmd/bench.rs <-> cli/cmd/mod.rs <-> cli/completions.rs <-> cli/flags.rs <-> \
     cli/help.rs <-> cli/manpage.rs",
];

#[test]
fn no_circle_of_files_spans_two_folders() {
    let house = survey();
    let mut wrong = Vec::new();
    for c in circles(&house.files) {
        let folders: BTreeSet<&Path> = c.iter().filter_map(|f| f.parent()).collect();
        if folders.len() > 1 {
            let names: Vec<String> = c
                .iter()
                .map(|f| f.strip_prefix(src()).unwrap().display().to_string())
                .collect();
            let shown = names.join(" <-> ");
            if !KNOWN_CIRCLES.contains(&shown.as_str()) {
                wrong.push(shown);
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_survey_sees_imports() {
    // The reader itself: grouped, nested and relative paths.
    let p = paths("use crate::{a::b, c::{d, e::f}}; use super::super::g::h; x = crate::i::j(1);");
    let shown: Vec<String> = p.iter().map(|s| s.join("::")).collect();
    assert_eq!(
        shown,
        [
            "crate::a::b",
            "crate::c::d",
            "crate::c::e::f",
            "super::super::g::h",
            "crate::i::j"
        ]
    );
    assert!(survey().rooms["cli"].contains_key("suite"));
}
