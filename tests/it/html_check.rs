//! Checks for iomark's HTML and SVG reports: well-formed XML, nothing
//! loaded from outside the file, charts that say what they show (every
//! time chart names its pass or run, bar legends are filled squares, each
//! axis writes its ticks in one unit style), tables without empty header
//! rows or raw `_us`/`_bytes` keys, and — when Chromium is installed — a
//! headless render to PNG with no console messages and no network request
//! made by the page (read from Chromium's net log), and a render at a
//! phone's width (390 px) that does not scroll sideways.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use crate::common::Bounded;

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
                .output_bounded()
                .map(|o| o.status.success())
                .unwrap_or(false)
        })
        .map(|b| b.to_string())
}

/// Renders the page headless to a PNG beside it; asserts it rendered, the
/// console stayed silent and the page requested nothing over the network.
/// Not on Windows: Linux's Chromium renders the same HTML in the Linux
/// run of these tests.
pub fn render(html: &Path) {
    if cfg!(windows) {
        return;
    }
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
    let out = std::process::Command::new(&bin)
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
        .output_bounded()
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
    let what = html.display().to_string();
    let charts = check_xml(&text, &what);
    check_self_contained(&text, &what);
    let stats = check_charts(&text, &what);
    assert_eq!(
        stats.charts, charts,
        "{what}: every <svg> is an iomark chart"
    );
    check_tables(&text, &what);
    render(html);
    if let Some(p) = probe(html, 390, false) {
        check_narrow(&p, &what);
    }
    charts
}

fn parse(text: &str) -> roxmltree::Document<'_> {
    let opt = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    };
    roxmltree::Document::parse_with_options(text, opt).expect("well-formed")
}

fn classes<'a>(n: &roxmltree::Node<'a, '_>) -> Vec<&'a str> {
    n.attribute("class")
        .map(|c| c.split_whitespace().collect())
        .unwrap_or_default()
}

/// All text below a node, joined.
pub fn text_of(n: &roxmltree::Node) -> String {
    n.descendants()
        .filter(|d| d.is_text())
        .filter_map(|d| d.text())
        .collect::<Vec<_>>()
        .join("")
}

/// What `check_charts` saw.
#[derive(Debug, Default)]
pub struct ChartStats {
    pub charts: usize,
    /// Charts with time on the x axis (all captioned with their pass).
    pub time_charts: usize,
    /// Their captions, in page order.
    pub time_captions: Vec<String>,
    /// Bar chart legends (all with filled squares).
    pub bar_legends: usize,
    /// Numeric axes checked for one unit style.
    pub axes: usize,
}

/// Tick labels of one axis use one unit style: never a plain "5000" next
/// to "10k" (a number of a thousand or more without its suffix, or any
/// mantissa of 1000 or more), and on a linear axis one suffix for all
/// ticks but 0.
pub fn check_axis_labels(labels: &[String], scale: &str) -> Result<(), String> {
    let parsed: Vec<(f64, String)> = labels
        .iter()
        .filter_map(|l| {
            let end = l
                .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
                .unwrap_or(l.len());
            let m: f64 = l[..end].parse().ok()?;
            Some((m, l[end..].to_string()))
        })
        .collect();
    let suffixed = parsed.iter().any(|(_, s)| !s.is_empty());
    for (m, s) in &parsed {
        if m.abs() >= 1000.0 && (suffixed || !s.is_empty()) {
            return Err(format!("'{m}{s}' among {labels:?}"));
        }
    }
    if scale == "linear" {
        let mut units: Vec<&str> = parsed
            .iter()
            .filter(|(m, _)| *m != 0.0)
            .map(|(_, s)| s.as_str())
            .collect();
        units.sort();
        units.dedup();
        if units.len() > 1 {
            return Err(format!("units {units:?} on one linear axis: {labels:?}"));
        }
    }
    Ok(())
}

/// The checks on every chart of a page (or a standalone SVG).
pub fn check_charts(text: &str, what: &str) -> ChartStats {
    let doc = parse(text);
    let mut st = ChartStats::default();
    for svg in doc
        .descendants()
        .filter(|n| n.is_element() && n.tag_name().name() == "svg")
    {
        let cls = classes(&svg);
        if !cls.contains(&"chart") {
            continue;
        }
        st.charts += 1;
        let title = svg
            .descendants()
            .find(|n| classes(n).contains(&"chart-title"))
            .map(|n| text_of(&n))
            .unwrap_or_default();
        let x_title = svg
            .descendants()
            .find(|n| {
                let c = classes(n);
                c.contains(&"axis-title") && c.contains(&"x")
            })
            .map(|n| text_of(&n))
            .unwrap_or_default();
        if x_title.starts_with("time") {
            st.time_charts += 1;
            let sub = svg
                .descendants()
                .find(|n| classes(n).contains(&"subtitle"))
                .map(|n| text_of(&n))
                .unwrap_or_default();
            assert!(
                sub.contains("pass") || sub.contains("run"),
                "{what}: the time chart '{title}' does not say which pass it shows (caption: '{sub}')"
            );
            st.time_captions.push(sub);
        }
        for lg in svg.descendants().filter(|n| classes(n).contains(&"legend")) {
            let swatches: Vec<&str> = lg
                .descendants()
                .filter(|n| classes(n).contains(&"swatch"))
                .map(|n| n.tag_name().name())
                .collect();
            assert!(
                !swatches.is_empty(),
                "{what}: '{title}': legend without swatches"
            );
            if cls.contains(&"bar-chart") || cls.contains(&"histogram") {
                st.bar_legends += 1;
                assert!(
                    swatches.iter().all(|s| *s == "rect"),
                    "{what}: bar chart '{title}' has legend swatches {swatches:?}"
                );
            } else {
                assert!(
                    swatches.iter().all(|s| *s == "line"),
                    "{what}: line chart '{title}' has legend swatches {swatches:?}"
                );
            }
        }
        for axis in svg
            .descendants()
            .filter(|n| classes(n).first().is_some_and(|c| c.starts_with("ticks-")))
        {
            let c = classes(&axis);
            let scale = c.get(1).copied().unwrap_or("");
            if scale == "fixed" {
                continue;
            }
            let labels: Vec<String> = axis
                .children()
                .filter(|n| n.is_element())
                .map(|n| text_of(&n))
                .collect();
            st.axes += 1;
            if let Err(e) = check_axis_labels(&labels, scale) {
                panic!("{what}: chart '{title}', axis {}: {e}", c[0]);
            }
        }
    }
    st
}

/// Tables: no header row with an empty cell, no raw `_us`/`_ms`/`_ns`/
/// `_bytes` keys in any cell. Returns the number of tables.
pub fn check_tables(text: &str, what: &str) -> usize {
    let doc = parse(text);
    let mut n = 0;
    for t in doc
        .descendants()
        .filter(|n| n.is_element() && n.tag_name().name() == "table")
    {
        n += 1;
        for head in t
            .descendants()
            .filter(|n| n.is_element() && n.tag_name().name() == "thead")
        {
            for th in head
                .descendants()
                .filter(|n| n.is_element() && n.tag_name().name() == "th")
            {
                assert!(
                    !text_of(&th).trim().is_empty(),
                    "{what}: a table's header row has an empty cell"
                );
            }
        }
        for cell in t
            .descendants()
            .filter(|n| n.is_element() && matches!(n.tag_name().name(), "th" | "td"))
        {
            let text = text_of(&cell);
            for tok in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
                assert!(
                    !["_us", "_ms", "_ns", "_bytes"]
                        .iter()
                        .any(|s| tok.ends_with(s)),
                    "{what}: raw key '{tok}' in a table"
                );
            }
        }
    }
    n
}

/// Layout facts measured in Chromium with the page in a frame `width` px
/// wide (headless Chromium's windows are at least 500 px wide, a frame
/// can be a phone's width), with the print style sheet applied when
/// `print`: document and frame width, each chart's box, each
/// CrystalDiskMark figure's width against its cell. None when Chromium is
/// missing. The console must stay silent.
pub fn probe(html: &Path, width: u32, print: bool) -> Option<Value> {
    let Some(bin) = chromium() else {
        eprintln!("skipped layout check: chromium is not installed (apt-get install chromium)");
        return None;
    };
    let text = std::fs::read_to_string(html).expect("read report");
    let source = serde_json::to_string(&text).unwrap().replace("</", "<\\/");
    let wrapper = format!(
        "<!DOCTYPE html><html><head><style>body{{margin:0}}iframe{{border:0;display:block}}</style></head><body>\
         <script>(function(){{\
         var f=document.createElement('iframe');\
         f.width='{width}'; f.height='1200';\
         f.addEventListener('load', function(){{\
           var d=f.contentDocument, w=f.contentWindow;\
           if ({print}) {{ var css='';\
             for (var i=0;i<d.styleSheets.length;i++) {{ var rs=d.styleSheets[i].cssRules;\
               for (var j=0;j<rs.length;j++) {{ var r=rs[j];\
                 if (r.media && r.media.mediaText.indexOf('print')>=0) {{\
                   for (var k=0;k<r.cssRules.length;k++) css+=r.cssRules[k].cssText+'\\n'; }} }} }}\
             var st=d.createElement('style'); st.textContent=css; d.head.appendChild(st); }}\
           var out={{sw:d.documentElement.scrollWidth, cw:d.documentElement.clientWidth, iw:w.innerWidth,\
                     charts:[], big:[], first:null, cdm_head:null}};\
           var cs=d.querySelectorAll('svg.chart');\
           for (var i=0;i<cs.length;i++) {{ var b=cs[i].getBoundingClientRect();\
             var t=cs[i].querySelector('.chart-title');\
             out.charts.push({{top:Math.round(b.top+w.scrollY), left:Math.round(b.left),\
               width:Math.round(b.width), title:t?t.textContent:''}}); }}\
           var bs=d.querySelectorAll('.cdm .big');\
           for (var i=0;i<bs.length;i++) {{ var e=bs[i]; var s=w.getComputedStyle(e);\
             out.big.push({{text:e.textContent, sw:e.scrollWidth, cw:e.parentNode.clientWidth,\
               font_px:parseFloat(s.fontSize), color:s.color}}); }}\
           out.scrolled=[];\
           var ts=d.querySelectorAll('table');\
           for (var i=0;i<ts.length;i++) {{ var t=ts[i]; if (t.scrollWidth<=t.clientWidth+1) continue;\
             t.scrollLeft=t.scrollWidth; var tl=t.getBoundingClientRect().left, worst=0;\
             var rs=t.querySelectorAll('tr');\
             for (var j=0;j<rs.length;j++) {{ var c=rs[j].firstElementChild; if (!c) continue;\
               worst=Math.max(worst, Math.abs(c.getBoundingClientRect().left-tl)); }}\
             out.scrolled.push({{first:(rs[0]&&rs[0].firstElementChild)?rs[0].firstElementChild.textContent:'',\
               moved:Math.round(worst), by:t.scrollLeft}}); t.scrollLeft=0; }}\
           var fs=d.querySelector('.first'); if (fs) out.first=w.getComputedStyle(fs).breakAfter;\
           var h=d.querySelector('.cdm tbody th'); if (h) {{ var hs=w.getComputedStyle(h);\
             out.cdm_head={{color:hs.color, background:hs.backgroundColor}}; }}\
           document.body.setAttribute('data-probe', JSON.stringify(out));\
         }});\
         f.srcdoc={source};\
         document.body.appendChild(f);\
         }})();</script></body></html>"
    );
    let dir = tempfile::tempdir().expect("probe dir");
    let copy = dir.path().join("probe.html");
    std::fs::write(&copy, wrapper).unwrap();
    let profile = tempfile::tempdir().expect("chromium profile dir");
    let out = std::process::Command::new(&bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--enable-logging=stderr",
            "--v=0",
            "--hide-scrollbars",
            "--dump-dom",
        ])
        .arg(format!("--window-size={},1300", (width + 40).max(500)))
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("file://{}", copy.display()))
        .output_bounded()
        .expect("run chromium");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "chromium failed: {stderr}");
    let console: Vec<&str> = stderr.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(
        console.is_empty(),
        "console messages at {width} px from {}: {console:?}",
        html.display()
    );
    let dom = String::from_utf8_lossy(&out.stdout);
    let start = dom
        .find("data-probe=\"")
        .unwrap_or_else(|| panic!("the probe did not run on {}", html.display()))
        + "data-probe=\"".len();
    let end = start + dom[start..].find('"').expect("end of the probe");
    let json = dom[start..end]
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    Some(serde_json::from_str(&json).expect("probe JSON"))
}

/// A page measured at a phone's width does not scroll sideways, and every
/// CrystalDiskMark figure fits its cell.
pub fn check_narrow(p: &Value, what: &str) {
    let (sw, iw) = (p["sw"].as_f64().unwrap(), p["iw"].as_f64().unwrap());
    assert!(
        iw <= 400.0,
        "{what}: the frame is {iw} px wide, not a phone's"
    );
    assert!(
        sw <= iw && sw <= p["cw"].as_f64().unwrap(),
        "{what}: at {iw} px the page is {sw} px wide (scrolls sideways): {p}"
    );
    for c in p["charts"].as_array().into_iter().flatten() {
        assert!(
            c["left"].as_f64().unwrap() >= 0.0
                && c["left"].as_f64().unwrap() + c["width"].as_f64().unwrap() <= iw,
            "{what}: chart {c} sticks out at {iw} px"
        );
    }
    for b in p["big"].as_array().into_iter().flatten() {
        assert!(
            b["sw"].as_f64().unwrap() <= b["cw"].as_f64().unwrap(),
            "{what}: figure {b} overflows its cell at {iw} px"
        );
    }
    // A table wider than the phone scrolls inside its box, its first
    // column staying in view.
    for t in p["scrolled"].as_array().into_iter().flatten() {
        assert!(
            t["by"].as_f64().unwrap() > 0.0 && t["moved"].as_f64().unwrap() <= 1.0,
            "{what}: at {iw} px, scrolling table {t} moves its first column"
        );
    }
}

/// A standalone SVG file: well-formed, an <svg> root, self-contained.
pub fn check_svg_file(path: &Path) {
    let text = std::fs::read_to_string(path).expect("read svg");
    assert!(text.starts_with("<svg"), "{}", path.display());
    assert_eq!(check_xml(&text, &path.display().to_string()), 1);
    check_self_contained(&text, &path.display().to_string());
    assert_eq!(check_charts(&text, &path.display().to_string()).charts, 1);
}

#[test]
fn the_checks_catch_external_content() {
    let bad = "<!DOCTYPE html><html><body><img src=\"http://example.com/x.png\"/></body></html>";
    let r = std::panic::catch_unwind(|| check_self_contained(bad, "bad"));
    assert!(r.is_err());
    let broken = "<html><body><p>unclosed</body></html>";
    assert!(std::panic::catch_unwind(|| check_xml(broken, "broken")).is_err());
}

// Checks the Chromium render itself (Linux's Chromium).
#[cfg(unix)]
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

#[test]
fn the_axis_check_catches_mixed_unit_styles() {
    let l = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(check_axis_labels(&l(&["0", "5000", "10k"]), "linear").is_err());
    assert!(check_axis_labels(&l(&["0", "500µs", "1ms"]), "linear").is_err());
    assert!(check_axis_labels(&l(&["100", "1000", "10k"]), "log10").is_err());
    assert!(check_axis_labels(&l(&["0", "5k", "10k", "15k"]), "linear").is_ok());
    assert!(check_axis_labels(&l(&["1µs", "10µs", "1ms"]), "log10").is_ok());
    assert!(check_axis_labels(&l(&["1", "2", "1024", "2048"]), "log2").is_ok());
}

#[test]
fn the_table_and_chart_checks_catch_what_they_look_for() {
    let page = |body: &str| {
        format!("<html xmlns=\"http://www.w3.org/1999/xhtml\"><body>{body}</body></html>")
    };
    let empty_head = page("<table><thead><tr><th></th><th></th></tr></thead></table>");
    assert!(std::panic::catch_unwind(|| check_tables(&empty_head, "t")).is_err());
    let raw = page("<table><tbody><tr><th>runtime_us</th><td>2000000</td></tr></tbody></table>");
    assert!(std::panic::catch_unwind(|| check_tables(&raw, "t")).is_err());
    let good = page("<table><tbody><tr><th>runtime</th><td>2 s</td></tr></tbody></table>");
    assert_eq!(check_tables(&good, "t"), 1);
    let svg = |inner: &str| {
        page(&format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart line-chart\">{inner}</svg>"
        ))
    };
    let unlabelled = svg("<text class=\"axis-title x\">time (s)</text>");
    assert!(std::panic::catch_unwind(|| check_charts(&unlabelled, "t")).is_err());
    let labelled = svg(
        "<text class=\"subtitle\"><tspan>Shows pass 2 of 3.</tspan></text>\
         <text class=\"axis-title x\">time (s)</text>",
    );
    assert_eq!(check_charts(&labelled, "t").time_charts, 1);
    let bars = page(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart bar-chart\">\
         <g class=\"legend\"><line class=\"swatch\"/><text>a</text></g></svg>",
    );
    assert!(std::panic::catch_unwind(|| check_charts(&bars, "t")).is_err());
}
