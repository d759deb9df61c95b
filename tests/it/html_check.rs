//! Checks for iomark's HTML and SVG reports: well-formed XML, nothing
//! loaded from outside the file, and — when Chromium is installed — a
//! headless render to PNG with no console messages and no network request
//! made by the page (read from Chromium's net log).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

const SVG_NS: &str = "http://www.w3.org/2000/svg";

/// Parses the text as XML; returns the number of SVG elements.
pub fn check_xml(text: &str, what: &str) -> usize {
    let opt = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    };
    let doc = roxmltree::Document::parse_with_options(text, opt)
        .unwrap_or_else(|e| panic!("{what} is not well-formed XML: {e}"));
    doc.descendants()
        .filter(|n| n.is_element() && n.tag_name().name() == "svg")
        .inspect(|n| {
            assert_eq!(
                n.tag_name().namespace(),
                Some(SVG_NS),
                "{what}: <svg> without the SVG namespace"
            )
        })
        .count()
}

/// No element or attribute that would load anything.
pub fn check_self_contained(text: &str, what: &str) {
    let opt = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    };
    let doc = roxmltree::Document::parse_with_options(text, opt).expect("well-formed");
    for n in doc.descendants().filter(|n| n.is_element()) {
        let tag = n.tag_name().name();
        assert!(
            !matches!(
                tag,
                "script"
                    | "link"
                    | "img"
                    | "iframe"
                    | "object"
                    | "embed"
                    | "audio"
                    | "video"
                    | "source"
                    | "image"
                    | "use"
                    | "foreignObject"
            ),
            "{what}: <{tag}> element"
        );
        for a in n.attributes() {
            let name = a.name();
            assert!(
                !matches!(name, "src" | "href" | "srcset" | "action" | "data")
                    || a.value().starts_with('#'),
                "{what}: <{tag} {name}=\"{}\">",
                a.value()
            );
            assert!(!name.starts_with("on"), "{what}: event handler {name}");
        }
        if tag == "style" {
            let css = n.text().unwrap_or("");
            assert!(!css.contains("url("), "{what}: url() in CSS");
            assert!(!css.contains("@import"), "{what}: @import in CSS");
        }
    }
}

/// The Chromium binary, when installed.
pub fn chromium() -> Option<String> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find(|b| {
            std::process::Command::new(b)
                .arg("--version")
                .output()
                .map(|o| o.status.success())
                .unwrap_or(false)
        })
        .map(|b| b.to_string())
}

/// Renders the page headless to a PNG beside it; asserts it rendered, the
/// console stayed silent and the page requested nothing over the network.
pub fn render(html: &Path) {
    let Some(bin) = chromium() else {
        crate::common::missing(
            "chromium is not installed (apt-get install chromium): the page is not rendered",
        );
        return;
    };
    let html = std::fs::canonicalize(html).expect("report path");
    let png: PathBuf = html.with_extension("png");
    let netlog = html.with_extension("netlog.json");
    let profile = tempfile::tempdir().expect("chromium profile dir");
    let out = assert_cmd::Command::new(&bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            // Nothing may leave the machine, whatever Chromium tries itself.
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1200,2400",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--log-net-log={}", netlog.display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", html.display()))
        .timeout(Duration::from_secs(120))
        .output()
        .expect("run chromium");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "chromium failed on {}: {stderr}",
        html.display()
    );
    let image = std::fs::read(&png).expect("chromium wrote no screenshot");
    assert!(
        image.len() > 1000 && image.starts_with(b"\x89PNG"),
        "not a PNG: {}",
        png.display()
    );
    let console: Vec<&str> = stderr.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(
        console.is_empty(),
        "console messages from {}: {console:?}",
        html.display()
    );
    // Requests the page itself made carry its file:// isolation key.
    let log: Value = serde_json::from_str(&std::fs::read_to_string(&netlog).expect("net log"))
        .expect("net log is JSON");
    let start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"].as_u64();
    let mut page_requests = Vec::new();
    for e in log["events"].as_array().into_iter().flatten() {
        if e["type"].as_u64() != start_job {
            continue;
        }
        let key = e["params"]["network_isolation_key"].as_str().unwrap_or("");
        let url = e["params"]["url"].as_str().unwrap_or("");
        if key.starts_with("file://") && !url.starts_with("file:") && !url.starts_with("data:") {
            page_requests.push(url.to_string());
        }
    }
    assert!(
        page_requests.is_empty(),
        "the page requested {page_requests:?}"
    );
    let _ = std::fs::remove_file(&netlog);
}

/// All checks on one HTML report; returns the number of charts.
pub fn check_report(html: &Path) -> usize {
    let text = std::fs::read_to_string(html).expect("read report");
    let charts = check_xml(&text, &html.display().to_string());
    check_self_contained(&text, &html.display().to_string());
    render(html);
    charts
}

/// A standalone SVG file: well-formed, an <svg> root, self-contained.
pub fn check_svg_file(path: &Path) {
    let text = std::fs::read_to_string(path).expect("read svg");
    assert!(text.starts_with("<svg"), "{}", path.display());
    assert_eq!(check_xml(&text, &path.display().to_string()), 1);
    check_self_contained(&text, &path.display().to_string());
}

#[test]
fn the_checks_catch_external_content() {
    let bad = "<!DOCTYPE html><html><body><img src=\"http://example.com/x.png\"/></body></html>";
    let r = std::panic::catch_unwind(|| check_self_contained(bad, "bad"));
    assert!(r.is_err());
    let broken = "<html><body><p>unclosed</body></html>";
    assert!(std::panic::catch_unwind(|| check_xml(broken, "broken")).is_err());
}

#[test]
fn the_render_check_catches_console_errors_and_requests() {
    if chromium().is_none() {
        crate::common::missing("chromium is not installed (apt-get install chromium)");
        return;
    }
    let dir = crate::common::tempdir();
    let p = dir.path().join("bad.html");
    std::fs::write(
        &p,
        "<!DOCTYPE html><html><body><img src=\"http://example.invalid/x.png\"/>\
         <script>console.error('boom')</script></body></html>",
    )
    .unwrap();
    let r = std::panic::catch_unwind(|| render(&p));
    let msg = r
        .err()
        .and_then(|e| e.downcast_ref::<String>().cloned())
        .expect("render must fail");
    assert!(
        msg.contains("console") || msg.contains("requested"),
        "{msg}"
    );
}
