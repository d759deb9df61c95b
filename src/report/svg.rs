//! Small, dependency-free SVG charts for the HTML report and the sweep
//! files: line charts (linear, log2 or log10 axes, optional error bars),
//! grouped bar charts and histograms.
//!
//! Output is deterministic (fixed number formatting, no randomness, no
//! clocks) and well-formed XML, so it can be embedded in XHTML, saved as
//! `.svg`, parsed by tests and diffed. Charts never load fonts, images or
//! scripts.

use std::fmt::Write;

/// Okabe–Ito palette: distinguishable with common colour-vision deficiencies.
pub const PALETTE: [&str; 8] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442",
];

pub fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Escapes text for XML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => o.push(' '),
            c => o.push(c),
        }
    }
    o
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    Linear,
    Log2,
    Log10,
}

/// How tick values are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Plain number with SI suffix (k, M, G) when large.
    Number,
    /// Bytes with binary suffix (4k, 1m) — for block sizes.
    Bytes,
    /// Nanoseconds shown as ns/µs/ms/s.
    Nanos,
    /// Seconds.
    Seconds,
}

#[derive(Clone, Debug)]
pub struct Axis {
    pub label: String,
    pub scale: Scale,
    pub format: Format,
    /// Start a linear axis at zero.
    pub from_zero: bool,
    /// Fixed ticks (value, label) instead of computed ones.
    pub ticks: Option<Vec<(f64, String)>>,
}

impl Axis {
    pub fn new(label: &str, scale: Scale, format: Format) -> Axis {
        Axis {
            label: label.to_string(),
            scale,
            format,
            from_zero: scale == Scale::Linear,
            ticks: None,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Error bars: (x, low, high).
    pub ranges: Vec<(f64, f64, f64)>,
    pub dashed: bool,
    pub markers: bool,
    /// Palette index (None: the series' position).
    pub color: Option<usize>,
}

#[derive(Clone, Debug)]
pub struct LineChart {
    pub title: String,
    /// A smaller line (wrapped) under the title: what the chart shows,
    /// e.g. which pass of a run. Empty: none.
    pub subtitle: String,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    pub width: u32,
    pub height: u32,
}

/// A number written compactly, without a suffix: about 3 significant
/// digits, trailing zeros dropped.
pub fn digits(d: f64) -> String {
    let s = if d.abs() >= 100.0 || d.fract().abs() < 1e-9 {
        format!("{d:.0}")
    } else if d.abs() >= 10.0 {
        format!("{d:.1}")
    } else if d.abs() >= 1.0 {
        format!("{d:.2}")
    } else {
        format!("{d:.3}")
    };
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    if s == "-0" {
        "0".into()
    } else {
        s
    }
}

/// Formats a number compactly: 3 significant digits, k/M/G suffixes
/// from a thousand up (5k, 10k, 2.5M).
pub fn num(v: f64) -> String {
    let (div, suffix) = unit(Format::Number, v.abs());
    format!("{}{suffix}", digits(v / div))
}

pub fn bytes_label(v: f64) -> String {
    let (div, suffix) = unit(Format::Bytes, v.abs());
    format!("{}{suffix}", digits(v / div))
}

pub fn nanos_label(ns: f64) -> String {
    let (div, suffix) = unit(Format::Nanos, ns.abs());
    format!("{}{suffix}", digits(ns / div))
}

/// The unit a value of magnitude `mag` is written in: (divisor, suffix).
/// An axis writes all its ticks in the unit of its largest tick (linear
/// axes) or each tick in its own (log axes), so "5000" never stands next
/// to "10k".
fn unit(f: Format, mag: f64) -> (f64, &'static str) {
    let pick = |table: &[(f64, &'static str)], last: &'static str| {
        table
            .iter()
            .copied()
            .find(|(d, _)| mag >= *d)
            .unwrap_or((1.0, last))
    };
    match f {
        Format::Number => pick(&[(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")], ""),
        Format::Bytes => pick(
            &[
                (1099511627776.0, "t"),
                (1073741824.0, "g"),
                (1048576.0, "m"),
                (1024.0, "k"),
            ],
            "",
        ),
        Format::Nanos => pick(&[(1e9, "s"), (1e6, "ms"), (1e3, "µs")], "ns"),
        Format::Seconds => (1.0, "s"),
    }
}

/// A tick label of its own unit (log axes, tooltips).
fn label(v: f64, f: Format) -> String {
    match f {
        Format::Number => num(v),
        Format::Bytes => bytes_label(v),
        Format::Nanos => nanos_label(v),
        Format::Seconds => format!("{}s", digits(v)),
    }
}

/// Tick labels of a linear axis, all in the unit of the largest tick.
fn linear_labels(values: &[f64], f: Format) -> Vec<String> {
    let mag = values.iter().map(|v| v.abs()).fold(0.0, f64::max);
    let (div, suffix) = unit(f, mag);
    values
        .iter()
        .map(|v| {
            if *v == 0.0 {
                "0".to_string()
            } else {
                format!("{}{suffix}", digits(v / div))
            }
        })
        .collect()
}

/// Tick labels of a log axis: each in its own unit, except counts on a
/// log2 axis (queue depths, job counts), which stay whole numbers.
fn log_label(v: f64, f: Format, scale: Scale) -> String {
    if scale == Scale::Log2 && f == Format::Number && v >= 1.0 {
        format!("{v:.0}")
    } else {
        label(v, f)
    }
}

/// A 1-2-5 step giving about `n` intervals over `span`.
fn nice_step(span: f64, n: f64) -> f64 {
    if span <= 0.0 || !span.is_finite() {
        return 1.0;
    }
    let raw = span / n;
    let mag = 10f64.powf(raw.log10().floor());
    let r = raw / mag;
    let m = if r <= 1.0 {
        1.0
    } else if r <= 2.0 {
        2.0
    } else if r <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

/// Round ticks (a 1-2-5 step) for a linear axis over `lo`..`hi`: the
/// axis's ends and the tick values.
pub fn round_ticks(lo: f64, hi: f64, from_zero: bool) -> (f64, f64, Vec<f64>) {
    let mut axis = Axis::new("", Scale::Linear, Format::Number);
    axis.from_zero = from_zero;
    let (a, b, t) = axis_ticks(&axis, lo, hi);
    (a, b, t.into_iter().map(|x| x.0).collect())
}

/// The axis range and ticks for data between `lo` and `hi`.
fn axis_ticks(axis: &Axis, lo: f64, hi: f64) -> (f64, f64, Vec<(f64, String)>) {
    if let Some(t) = &axis.ticks {
        let tlo = t.iter().map(|x| x.0).fold(lo, f64::min);
        let thi = t.iter().map(|x| x.0).fold(hi, f64::max);
        return (tlo, thi, t.clone());
    }
    match axis.scale {
        Scale::Linear => {
            let mut lo = if axis.from_zero { lo.min(0.0) } else { lo };
            let mut hi = hi;
            if hi - lo <= 0.0 {
                let pad = if hi == 0.0 { 1.0 } else { hi.abs() * 0.1 };
                lo = if axis.from_zero { lo } else { lo - pad };
                hi += pad;
            }
            let step = nice_step(hi - lo, 5.0);
            let start = (lo / step).floor() * step;
            let end = (hi / step).ceil() * step;
            let mut values = Vec::new();
            let mut k = 0;
            loop {
                let v = start + step * k as f64;
                if v > end + step * 1e-9 || k > 50 {
                    break;
                }
                values.push(if v.abs() < step * 1e-9 { 0.0 } else { v });
                k += 1;
            }
            let labels = linear_labels(&values, axis.format);
            (start, end, values.into_iter().zip(labels).collect())
        }
        Scale::Log2 | Scale::Log10 => {
            let base: f64 = if axis.scale == Scale::Log2 { 2.0 } else { 10.0 };
            let lo = lo.max(f64::MIN_POSITIVE);
            let hi = hi.max(lo);
            let mut a = lo.log(base).floor();
            let mut b = hi.log(base).ceil();
            if b <= a {
                a -= 1.0;
                b += 1.0;
            }
            let count = (b - a) as usize + 1;
            let every = count.div_ceil(10).max(1);
            let mut ticks = Vec::new();
            for (i, e) in (a as i64..=b as i64).enumerate() {
                let v = base.powi(e as i32);
                if i % every == 0 {
                    ticks.push((v, log_label(v, axis.format, axis.scale)));
                }
            }
            if axis.scale == Scale::Log10 && b - a <= 1.0 {
                for m in [2.0, 5.0] {
                    let v = base.powf(a) * m;
                    ticks.push((v, log_label(v, axis.format, axis.scale)));
                }
                ticks.sort_by(|x, y| x.0.total_cmp(&y.0));
            }
            (base.powf(a), base.powf(b), ticks)
        }
    }
}

fn project(scale: Scale, v: f64, lo: f64, hi: f64) -> f64 {
    let (v, lo, hi) = match scale {
        Scale::Linear => (v, lo, hi),
        Scale::Log2 | Scale::Log10 => (
            v.max(f64::MIN_POSITIVE).ln(),
            lo.max(f64::MIN_POSITIVE).ln(),
            hi.max(f64::MIN_POSITIVE).ln(),
        ),
    };
    if hi - lo == 0.0 {
        0.5
    } else {
        (v - lo) / (hi - lo)
    }
}

const ML: f64 = 64.0;
const MR: f64 = 16.0;
const MT: f64 = 30.0;
/// Height of one subtitle line.
const SUB_LINE: f64 = 13.0;

/// How a legend entry shows its series: a line (line charts) or a filled
/// square (bars).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Swatch {
    Line { dashed: bool },
    Square,
}

fn legend_width(name: &str) -> f64 {
    22.0 + name.chars().count() as f64 * 6.5 + 14.0
}

fn legend_height(names: &[String], width: f64) -> f64 {
    if names.len() <= 1 {
        return 0.0;
    }
    let mut x = ML;
    let mut rows = 1.0;
    for n in names {
        let w = legend_width(n);
        if x + w > width - MR && x > ML {
            rows += 1.0;
            x = ML;
        }
        x += w;
    }
    rows * 16.0 + 4.0
}

fn legend(out: &mut String, names: &[(String, &str, Swatch)], width: f64, top: f64) {
    if names.len() <= 1 {
        return;
    }
    out.push_str("<g class=\"legend\">");
    let mut x = ML;
    let mut y = top;
    for (name, col, swatch) in names {
        let w = legend_width(name);
        if x + w > width - MR && x > ML {
            y += 16.0;
            x = ML;
        }
        match swatch {
            Swatch::Line { dashed } => {
                let dash = if *dashed {
                    " stroke-dasharray=\"5 3\""
                } else {
                    ""
                };
                let _ = write!(
                    out,
                    "<line class=\"swatch\" x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"{col}\" stroke-width=\"2\"{dash}/>",
                    x,
                    y - 4.0,
                    x + 18.0,
                    y - 4.0,
                );
            }
            Swatch::Square => {
                let _ = write!(
                    out,
                    "<rect class=\"swatch\" x=\"{:.1}\" y=\"{:.1}\" width=\"10\" height=\"10\" fill=\"{col}\"/>",
                    x + 4.0,
                    y - 9.0,
                );
            }
        }
        let _ = write!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\">{}</text>",
            x + 22.0,
            y,
            esc(name)
        );
        x += w;
    }
    out.push_str("</g>");
}

/// A subtitle broken into lines that fit the chart's width.
fn wrap(text: &str, width: f64) -> Vec<String> {
    let max = ((width - 16.0) / 5.6).max(20.0) as usize;
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for w in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + w.chars().count() > max {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(w);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// Opens the SVG with its title and the subtitle's lines; the caller makes
/// room for those below the title (`sub_height`). `kind` is a class name
/// (line-chart, bar-chart, histogram).
fn open_svg(out: &mut String, w: f64, h: f64, kind: &str, title: &str, subtitle: &[String]) {
    let wide = if w > 600.0 { " wide" } else { "" };
    let full = if subtitle.is_empty() {
        title.to_string()
    } else {
        format!("{title} — {}", subtitle.join(" "))
    };
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w:.0}\" height=\"{h:.0}\" \
         viewBox=\"0 0 {w:.0} {h:.0}\" role=\"img\" font-family=\"sans-serif\" class=\"chart {kind}{wide}\">\
         <title>{}</title><rect x=\"0\" y=\"0\" width=\"{w:.0}\" height=\"{h:.0}\" fill=\"#ffffff\"/>\
         <text class=\"chart-title\" x=\"{:.1}\" y=\"18\" font-size=\"13\" font-weight=\"bold\" text-anchor=\"middle\">{}</text>",
        esc(&full),
        w / 2.0,
        esc(title)
    );
    if !subtitle.is_empty() {
        out.push_str(
            "<text class=\"subtitle\" font-size=\"10\" fill=\"#444444\" text-anchor=\"middle\">",
        );
        for (i, l) in subtitle.iter().enumerate() {
            let _ = write!(
                out,
                "<tspan x=\"{:.1}\" y=\"{:.1}\">{}</tspan>",
                w / 2.0,
                31.0 + SUB_LINE * i as f64,
                esc(l)
            );
        }
        out.push_str("</text>");
    }
}

fn sub_height(lines: &[String]) -> f64 {
    SUB_LINE * lines.len() as f64
}

/// Draws both axes with grid lines; returns the plot rectangle.
#[allow(clippy::too_many_arguments)]
fn frame(
    out: &mut String,
    x: &Axis,
    y: &Axis,
    xt: &[(f64, String)],
    yt: &[(f64, String)],
    xr: (f64, f64),
    yr: (f64, f64),
    rect: (f64, f64, f64, f64),
) {
    let (l, t, r, b) = rect;
    let _ = write!(
        out,
        "<rect x=\"{l:.1}\" y=\"{t:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"none\" stroke=\"#999999\"/>",
        r - l,
        b - t
    );
    let scale_name = |a: &Axis| {
        if a.ticks.is_some() {
            "fixed"
        } else {
            match a.scale {
                Scale::Linear => "linear",
                Scale::Log2 => "log2",
                Scale::Log10 => "log10",
            }
        }
    };
    let mut labels = String::new();
    for (v, s) in yt {
        let py = b - project(y.scale, *v, yr.0, yr.1) * (b - t);
        let _ = write!(
            out,
            "<line x1=\"{l:.1}\" y1=\"{py:.1}\" x2=\"{r:.1}\" y2=\"{py:.1}\" stroke=\"#e5e5e5\"/>"
        );
        let _ = write!(
            labels,
            "<text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            l - 4.0,
            py + 3.5,
            esc(s)
        );
    }
    if !yt.is_empty() {
        let _ = write!(
            out,
            "<g class=\"ticks-y {}\" font-size=\"10\" text-anchor=\"end\">{labels}</g>",
            scale_name(y)
        );
    }
    labels.clear();
    for (v, s) in xt {
        let px = l + project(x.scale, *v, xr.0, xr.1) * (r - l);
        let _ = write!(
            out,
            "<line x1=\"{px:.1}\" y1=\"{t:.1}\" x2=\"{px:.1}\" y2=\"{b:.1}\" stroke=\"#eeeeee\"/>"
        );
        let _ = write!(
            labels,
            "<text x=\"{px:.1}\" y=\"{:.1}\">{}</text>",
            b + 13.0,
            esc(s)
        );
    }
    if !xt.is_empty() {
        let _ = write!(
            out,
            "<g class=\"ticks-x {}\" font-size=\"10\" text-anchor=\"middle\">{labels}</g>",
            scale_name(x)
        );
    }
    if !x.label.is_empty() {
        let _ = write!(
            out,
            "<text class=\"axis-title x\" x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\">{}</text>",
            (l + r) / 2.0,
            b + 28.0,
            esc(&x.label),
        );
    }
    let _ = write!(
        out,
        "<text class=\"axis-title y\" x=\"12\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\" transform=\"rotate(-90 12 {:.1})\">{}</text>",
        (t + b) / 2.0,
        (t + b) / 2.0,
        esc(&y.label)
    );
}

fn usable(scale: Scale, v: f64) -> bool {
    v.is_finite() && (scale == Scale::Linear || v > 0.0)
}

/// A line chart; series with no usable point are listed but not drawn.
#[allow(clippy::too_many_lines)]
pub fn line_chart(c: &LineChart) -> String {
    let w = c.width as f64;
    let names: Vec<String> = c.series.iter().map(|s| s.name.clone()).collect();
    let lh = legend_height(&names, w);
    let sub = wrap(&c.subtitle, w);
    let sh = sub_height(&sub);
    let h = c.height as f64 + sh + lh;
    let mut out = String::new();
    open_svg(&mut out, w, h, "line-chart", &c.title, &sub);
    let pts =
        |f: &dyn Fn(&(f64, f64)) -> f64, scale: Scale, extra: &dyn Fn(&Series) -> Vec<f64>| {
            let mut v: Vec<f64> = c
                .series
                .iter()
                .flat_map(|s| {
                    let mut a: Vec<f64> = s.points.iter().map(f).collect();
                    a.extend(extra(s));
                    a
                })
                .filter(|v| usable(scale, *v))
                .collect();
            v.sort_by(|a, b| a.total_cmp(b));
            v
        };
    let xs = pts(&|p| p.0, c.x.scale, &|_| Vec::new());
    let ys = pts(&|p| p.1, c.y.scale, &|s| {
        s.ranges.iter().flat_map(|r| [r.1, r.2]).collect()
    });
    let (l, t, r, b) = (ML, MT + sh, w - MR, c.height as f64 + sh - 36.0);
    if xs.is_empty() || ys.is_empty() {
        let _ = write!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"middle\" fill=\"#666666\">no data</text></svg>",
            w / 2.0,
            (t + b) / 2.0
        );
        return out;
    }
    let (x0, x1, xt) = axis_ticks(&c.x, xs[0], xs[xs.len() - 1]);
    let (y0, y1, yt) = axis_ticks(&c.y, ys[0], ys[ys.len() - 1]);
    frame(
        &mut out,
        &c.x,
        &c.y,
        &xt,
        &yt,
        (x0, x1),
        (y0, y1),
        (l, t, r, b),
    );
    let px = |v: f64| l + project(c.x.scale, v, x0, x1) * (r - l);
    let py = |v: f64| b - project(c.y.scale, v, y0, y1) * (b - t);
    let mut legend_items = Vec::new();
    for (i, s) in c.series.iter().enumerate() {
        let col = color(s.color.unwrap_or(i));
        legend_items.push((s.name.clone(), col, Swatch::Line { dashed: s.dashed }));
        let p: Vec<(f64, f64)> = s
            .points
            .iter()
            .copied()
            .filter(|(x, y)| usable(c.x.scale, *x) && usable(c.y.scale, *y))
            .collect();
        for (x, lo, hi) in &s.ranges {
            if usable(c.x.scale, *x) && usable(c.y.scale, *lo) && usable(c.y.scale, *hi) {
                let _ = write!(
                    out,
                    "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"{col}\" stroke-width=\"1\" opacity=\"0.6\"/>",
                    px(*x),
                    py(*lo),
                    px(*x),
                    py(*hi)
                );
            }
        }
        if p.len() > 1 {
            let d: Vec<String> = p
                .iter()
                .map(|(x, y)| format!("{:.1},{:.1}", px(*x), py(*y)))
                .collect();
            let dash = if s.dashed {
                " stroke-dasharray=\"5 3\""
            } else {
                ""
            };
            let _ = write!(
                out,
                "<polyline fill=\"none\" stroke=\"{col}\" stroke-width=\"1.8\"{dash} points=\"{}\"/>",
                d.join(" ")
            );
        }
        if s.markers || p.len() == 1 {
            for (x, y) in &p {
                let _ = write!(
                    out,
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.8\" fill=\"{col}\"/>",
                    px(*x),
                    py(*y)
                );
            }
        }
    }
    legend(&mut out, &legend_items, w, b + 46.0);
    out.push_str("</svg>");
    out
}

/// A grouped bar chart: one group of bars per category, one bar per set.
pub fn bar_chart(
    title: &str,
    y: &Axis,
    categories: &[String],
    sets: &[(String, Vec<f64>)],
    width: u32,
) -> String {
    let w = width as f64;
    let names: Vec<String> = sets.iter().map(|s| s.0.clone()).collect();
    // Category labels: level when they fit under their group, else
    // rotated by 30°, with room made for them below and to the left.
    let plot_w0 = w - ML - MR;
    let group_w0 = plot_w0 / categories.len().max(1) as f64;
    let label_px = categories
        .iter()
        .map(|c| c.chars().count() as f64 * 5.4)
        .fold(0.0, f64::max);
    let rotated = label_px > group_w0 * 0.95;
    let (left, drop) = if rotated {
        let cos = 0.866;
        (
            ML.max(label_px * cos - group_w0 * 0.5 + 8.0),
            label_px * 0.5 + 18.0,
        )
    } else {
        (ML, 18.0)
    };
    let plot_h = 180.0;
    let (l, t, r, b) = (left, MT, w - MR, MT + plot_h);
    let lh = legend_height(&names, w);
    let h = b + drop + 10.0 + lh;
    let mut out = String::new();
    open_svg(&mut out, w, h, "bar-chart", title, &[]);
    let vals: Vec<f64> = sets
        .iter()
        .flat_map(|s| s.1.iter().copied())
        .filter(|v| usable(y.scale, *v))
        .collect();
    if vals.is_empty() || categories.is_empty() {
        out.push_str("</svg>");
        return out;
    }
    let hi = vals.iter().copied().fold(f64::MIN, f64::max);
    let lo = vals.iter().copied().fold(f64::MAX, f64::min);
    let (y0, y1, yt) = axis_ticks(y, lo, hi);
    let xaxis = Axis::new("", Scale::Linear, Format::Number);
    frame(
        &mut out,
        &xaxis,
        y,
        &[],
        &yt,
        (0.0, 1.0),
        (y0, y1),
        (l, t, r, b),
    );
    let group_w = (r - l) / categories.len() as f64;
    let bar_w = (group_w * 0.8) / sets.len().max(1) as f64;
    let mut cat_labels = String::new();
    for (ci, cat) in categories.iter().enumerate() {
        let gx = l + group_w * ci as f64 + group_w * 0.1;
        for (si, (set, v)) in sets.iter().enumerate() {
            if let Some(v) = v.get(ci).copied().filter(|v| usable(y.scale, *v)) {
                let top = b - project(y.scale, v, y0, y1) * (b - t);
                let who = if sets.len() > 1 {
                    format!("{set}, {cat}")
                } else {
                    cat.clone()
                };
                let _ = write!(
                    out,
                    "<rect class=\"bar\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\"><title>{}</title></rect>",
                    gx + bar_w * si as f64,
                    top,
                    (bar_w - 1.0).max(1.0),
                    (b - top).max(0.0),
                    color(si),
                    esc(&format!("{who}: {} {}", label(v, y.format), y.label))
                );
            }
        }
        let cx = gx + group_w * 0.4;
        if rotated {
            let _ = write!(
                cat_labels,
                "<text x=\"{cx:.1}\" y=\"{:.1}\" font-size=\"9\" text-anchor=\"end\" transform=\"rotate(-30 {cx:.1} {:.1})\">{}</text>",
                b + 12.0,
                b + 12.0,
                esc(cat)
            );
        } else {
            let _ = write!(
                cat_labels,
                "<text x=\"{cx:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"middle\">{}</text>",
                b + 13.0,
                esc(cat)
            );
        }
    }
    let _ = write!(out, "<g class=\"categories\">{cat_labels}</g>");
    let items: Vec<(String, &str, Swatch)> = sets
        .iter()
        .enumerate()
        .map(|(i, s)| (s.0.clone(), color(i), Swatch::Square))
        .collect();
    legend(&mut out, &items, w, b + drop + 14.0);
    out.push_str("</svg>");
    out
}

/// A histogram over a log10 x axis: `bins` are (low, high, count).
pub fn histogram(
    title: &str,
    subtitle: &str,
    x_label: &str,
    bins: &[(f64, f64, f64)],
    width: u32,
    height: u32,
) -> String {
    let w = width as f64;
    let sub = wrap(subtitle, w);
    let sh = sub_height(&sub);
    let h = height as f64 + sh;
    let mut out = String::new();
    open_svg(&mut out, w, h, "histogram", title, &sub);
    let bins: Vec<(f64, f64, f64)> = bins
        .iter()
        .copied()
        .filter(|(a, b, c)| *a > 0.0 && b > a && *c > 0.0)
        .collect();
    let (l, t, r, b) = (ML, MT + sh, w - MR, h - 36.0);
    if bins.is_empty() {
        let _ = write!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"middle\" fill=\"#666666\">no histogram data</text></svg>",
            w / 2.0,
            (t + b) / 2.0
        );
        return out;
    }
    let xa = Axis::new(x_label, Scale::Log10, Format::Nanos);
    let mut ya = Axis::new("share of I/Os (%)", Scale::Linear, Format::Number);
    ya.from_zero = true;
    let total: f64 = bins.iter().map(|x| x.2).sum();
    let lo = bins.iter().map(|x| x.0).fold(f64::MAX, f64::min);
    let hi = bins.iter().map(|x| x.1).fold(f64::MIN, f64::max);
    let top = bins.iter().map(|x| x.2 / total * 100.0).fold(0.0, f64::max);
    let (x0, x1, xt) = axis_ticks(&xa, lo, hi);
    let (y0, y1, yt) = axis_ticks(&ya, 0.0, top);
    frame(
        &mut out,
        &xa,
        &ya,
        &xt,
        &yt,
        (x0, x1),
        (y0, y1),
        (l, t, r, b),
    );
    for (a, bb, c) in &bins {
        let xa_ = l + project(Scale::Log10, *a, x0, x1) * (r - l);
        let xb_ = l + project(Scale::Log10, *bb, x0, x1) * (r - l);
        let pct = c / total * 100.0;
        let top = b - project(Scale::Linear, pct, y0, y1) * (b - t);
        let _ = write!(
            out,
            "<rect class=\"bar\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\"><title>{}</title></rect>",
            xa_,
            top,
            (xb_ - xa_).max(0.8),
            (b - top).max(0.0),
            color(0),
            esc(&format!(
                "{}–{}: {:.2}%",
                nanos_label(*a),
                nanos_label(*bb),
                pct
            ))
        );
    }
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_compact() {
        assert_eq!(num(0.0), "0");
        assert_eq!(num(1.5), "1.5");
        assert_eq!(num(12345.0), "12.3k");
        assert_eq!(num(2_000_000.0), "2M");
        assert_eq!(bytes_label(4096.0), "4k");
        assert_eq!(bytes_label(1048576.0), "1m");
        assert_eq!(nanos_label(1500.0), "1.5µs");
        assert_eq!(nanos_label(2e6), "2ms");
    }

    fn tick_labels(a: &Axis, lo: f64, hi: f64) -> Vec<String> {
        axis_ticks(a, lo, hi).2.into_iter().map(|t| t.1).collect()
    }

    #[test]
    fn a_linear_axis_writes_every_tick_in_one_unit() {
        let n = Axis::new("IOPS", Scale::Linear, Format::Number);
        assert_eq!(tick_labels(&n, 0.0, 14000.0), ["0", "5k", "10k", "15k"]);
        assert_eq!(
            tick_labels(&n, 0.0, 1900.0),
            ["0", "0.5k", "1k", "1.5k", "2k"]
        );
        assert_eq!(
            tick_labels(&n, 0.0, 390.0),
            ["0", "100", "200", "300", "400"]
        );
        let t = Axis::new("latency", Scale::Linear, Format::Nanos);
        assert_eq!(tick_labels(&t, 0.0, 1.4e6), ["0", "0.5ms", "1ms", "1.5ms"]);
    }

    #[test]
    fn log_axes_suffix_each_tick_and_keep_counts_whole() {
        let n = Axis::new("IOPS", Scale::Log10, Format::Number);
        assert_eq!(
            tick_labels(&n, 2.0, 50_000.0),
            ["1", "10", "100", "1k", "10k", "100k"]
        );
        let qd = Axis::new("qd", Scale::Log2, Format::Number);
        let l = tick_labels(&qd, 1.0, 1024.0);
        assert_eq!(l.last().unwrap(), "1024");
        let ns = Axis::new("lat", Scale::Log10, Format::Nanos);
        assert_eq!(
            tick_labels(&ns, 2000.0, 5e6),
            ["1µs", "10µs", "100µs", "1ms", "10ms"]
        );
        let b = Axis::new("bs", Scale::Log2, Format::Bytes);
        assert_eq!(tick_labels(&b, 512.0, 2048.0), ["512", "1k", "2k"]);
    }

    #[test]
    fn bar_legends_are_squares_and_line_legends_lines() {
        let y = Axis::new("MiB/s", Scale::Linear, Format::Number);
        let bars = bar_chart(
            "t",
            &y,
            &["a".to_string(), "b".to_string()],
            &[
                ("one".into(), vec![1.0, 2.0]),
                ("two".into(), vec![3.0, 4.0]),
            ],
            460,
        );
        let legend = &bars[bars.find("<g class=\"legend\">").unwrap()..];
        assert_eq!(legend.matches("<rect class=\"swatch\"").count(), 2);
        assert!(!legend.contains("<line"));
        let lines = line_chart(&LineChart {
            title: "t".into(),
            subtitle: String::new(),
            x: Axis::new("x", Scale::Linear, Format::Number),
            y,
            series: vec![
                Series {
                    name: "one".into(),
                    points: vec![(0.0, 1.0), (1.0, 2.0)],
                    ..Series::default()
                },
                Series {
                    name: "two".into(),
                    points: vec![(0.0, 2.0), (1.0, 1.0)],
                    ..Series::default()
                },
            ],
            width: 460,
            height: 240,
        });
        let legend = &lines[lines.find("<g class=\"legend\">").unwrap()..];
        assert_eq!(legend.matches("<line class=\"swatch\"").count(), 2);
    }

    #[test]
    fn long_subtitles_wrap_inside_the_chart() {
        let l = wrap(&"word ".repeat(60), 460.0);
        assert!(l.len() > 1);
        assert!(l.iter().all(|x| x.chars().count() as f64 * 5.6 <= 460.0));
    }

    #[test]
    fn linear_ticks_are_round() {
        let a = Axis::new("y", Scale::Linear, Format::Number);
        let (lo, hi, t) = axis_ticks(&a, 3.0, 97.0);
        assert_eq!(lo, 0.0);
        assert_eq!(hi, 100.0);
        assert_eq!(t.len(), 6);
        assert_eq!(t[1].1, "20");
    }

    #[test]
    fn log2_ticks_cover_the_range() {
        let a = Axis::new("qd", Scale::Log2, Format::Number);
        let (lo, hi, t) = axis_ticks(&a, 1.0, 256.0);
        assert_eq!((lo, hi), (1.0, 256.0));
        assert_eq!(t.first().unwrap().1, "1");
        assert_eq!(t.last().unwrap().1, "256");
    }

    #[test]
    fn charts_are_deterministic_and_escape_text() {
        let c = LineChart {
            title: "a <b> & c".into(),
            subtitle: "Shows pass 1 of 1.".into(),
            x: Axis::new("x", Scale::Log2, Format::Number),
            y: Axis::new("y", Scale::Linear, Format::Number),
            series: vec![
                Series {
                    name: "one".into(),
                    points: vec![(1.0, 10.0), (2.0, 20.0), (4.0, 25.0)],
                    ranges: vec![(2.0, 18.0, 22.0)],
                    markers: true,
                    ..Series::default()
                },
                Series {
                    name: "two".into(),
                    points: vec![(1.0, 5.0), (4.0, f64::NAN)],
                    dashed: true,
                    ..Series::default()
                },
            ],
            width: 400,
            height: 240,
        };
        let a = line_chart(&c);
        assert_eq!(a, line_chart(&c));
        assert!(a.contains("a &lt;b&gt; &amp; c"));
        assert!(a.contains("<tspan") && a.contains("Shows pass 1 of 1."));
        assert!(!a.contains("NaN"));
        assert!(a.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(a.ends_with("</svg>"));
    }
}
