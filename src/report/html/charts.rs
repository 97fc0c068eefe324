//! The report's charts, drawn by plotters' SVG backend into strings: a trend per check, the
//! distribution of per-query deltas, the judge calibration and answer length vs faithfulness.
//! Every text from data is redacted on its raw form before plotters escapes it
//! ([`super::shown`]); the `<svg>` element is made to scale with its box.

use std::ops::Range;

use plotters::prelude::*;

use super::shown::{Shown, plain};
use crate::error::{Error, Result};

/// Width and height of every chart's drawing, in SVG units (the page scales it to its box).
const SIZE: (u32, u32) = (420, 230);
const FONT: &str = "sans-serif";
/// Label size as plotters takes it (it writes 0.81 of it: 15.3 SVG units, about 12 px in a
/// chart 330 px wide).
const LABEL: f64 = 19.0;
/// The series colour (GitHub's blue).
const SERIES: RGBColor = RGBColor(9, 105, 218);
const BASELINE: RGBColor = RGBColor(26, 127, 55);
const LIMIT: RGBColor = RGBColor(207, 34, 46);
const BAND: RGBColor = RGBColor(212, 167, 44);
const GRID: RGBColor = RGBColor(208, 215, 222);

fn failed(chart: &str) -> impl Fn(String) -> Error + '_ {
    move |message| Error::Chart {
        chart: chart.to_string(),
        message,
    }
}

/// Draws with `draw` into an SVG string sized [`SIZE`], made to scale with the page.
fn svg(
    title: &str,
    draw: impl FnOnce(
        &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    ) -> std::result::Result<(), String>,
) -> Result<String> {
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, SIZE).into_drawing_area();
        root.fill(&WHITE)
            .map_err(|e| failed(title)(e.to_string()))?;
        draw(&root).map_err(failed(title))?;
        root.present().map_err(|e| failed(title)(e.to_string()))?;
    }
    // Scale with the box; the namespace is implied inside HTML (and names no resource to load).
    let head = format!(
        r#"<svg width="{}" height="{}" viewBox="0 0 {} {}" xmlns="http://www.w3.org/2000/svg">"#,
        SIZE.0, SIZE.1, SIZE.0, SIZE.1
    );
    let scaled = format!(
        r#"<svg class="chart" viewBox="0 0 {} {}" role="img" aria-label="{}">"#,
        SIZE.0,
        SIZE.1,
        attribute(title)
    );
    if !text.starts_with(&head) {
        return Err(failed(title)(
            "unexpected SVG header from plotters".to_string(),
        ));
    }
    Ok(text.replacen(&head, &scaled, 1))
}

/// `text` redacted and escaped for a double-quoted attribute (maud escapes `"`).
fn attribute(text: &str) -> String {
    maud::html! { (Shown(text)) }.into_string()
}

/// `lo..hi` widened by a tenth on each side (and to a small span when flat).
fn padded(lo: f64, hi: f64) -> Range<f64> {
    let span = if hi - lo > 1e-9 {
        hi - lo
    } else {
        lo.abs().max(1.0) * 0.1
    };
    (lo - span * 0.1)..(hi + span * 0.1)
}

fn bounds(values: impl IntoIterator<Item = f64>) -> Option<(f64, f64)> {
    values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold(None, |acc, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
}

fn text_err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// One run of a trend: its label on the x axis, mean and 95% interval.
#[derive(Debug, Clone)]
pub(super) struct TrendPoint {
    pub label: String,
    pub mean: f64,
    pub interval: [f64; 2],
}

/// What a trend chart shows besides its runs: the baseline's mean and the band the rule
/// tolerates (from the baseline to `tolerated`, the baseline minus the limit in the worse
/// direction).
#[derive(Debug, Clone, Copy)]
pub(super) struct TrendBands {
    pub baseline: f64,
    pub tolerated: Option<f64>,
}

/// The runs of one check, oldest first (the current run last), against its baseline band.
pub(super) fn trend(title: &str, points: &[TrendPoint], bands: TrendBands) -> Result<String> {
    let values = points
        .iter()
        .flat_map(|p| [p.mean, p.interval[0], p.interval[1]])
        .chain([bands.baseline])
        .chain(bands.tolerated);
    let (lo, hi) = bounds(values).unwrap_or((0.0, 1.0));
    let x_range = -0.5..(points.len().max(1) as f64 - 0.5);
    let labels: Vec<String> = points.iter().map(|p| plain(&p.label)).collect();
    svg(title, |root| {
        let mut chart = ChartBuilder::on(root)
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(62)
            .build_cartesian_2d(x_range.clone(), padded(lo, hi))
            .map_err(text_err)?;
        let label_of = |x: &f64| {
            let i = x.round();
            if (x - i).abs() > 1e-6 || i < 0.0 {
                return String::new();
            }
            labels.get(i as usize).cloned().unwrap_or_default()
        };
        chart
            .configure_mesh()
            .disable_x_mesh()
            .light_line_style(TRANSPARENT)
            .bold_line_style(GRID)
            .x_labels(points.len().clamp(1, 8))
            .x_label_formatter(&label_of)
            .y_labels(5)
            .y_label_formatter(&|y| format!("{y:.3}"))
            .label_style((FONT, LABEL))
            .draw()
            .map_err(text_err)?;
        if let Some(tolerated) = bands.tolerated {
            let (a, b) = (tolerated.min(bands.baseline), tolerated.max(bands.baseline));
            chart
                .draw_series([Rectangle::new(
                    [(x_range.start, a), (x_range.end, b)],
                    BAND.mix(0.18).filled(),
                )])
                .map_err(text_err)?;
            chart
                .draw_series(LineSeries::new(
                    [(x_range.start, tolerated), (x_range.end, tolerated)],
                    LIMIT.stroke_width(1),
                ))
                .map_err(text_err)?;
        }
        chart
            .draw_series(LineSeries::new(
                [
                    (x_range.start, bands.baseline),
                    (x_range.end, bands.baseline),
                ],
                BASELINE.stroke_width(2),
            ))
            .map_err(text_err)?;
        let at = |i: usize| i as f64;
        chart
            .draw_series(points.iter().enumerate().map(|(i, p)| {
                ErrorBar::new_vertical(
                    at(i),
                    p.interval[0],
                    p.mean,
                    p.interval[1],
                    SERIES.mix(0.5),
                    6,
                )
            }))
            .map_err(text_err)?;
        chart
            .draw_series(LineSeries::new(
                points.iter().enumerate().map(|(i, p)| (at(i), p.mean)),
                SERIES.stroke_width(2),
            ))
            .map_err(text_err)?;
        let last = points.len().saturating_sub(1);
        chart
            .draw_series(points.iter().enumerate().map(|(i, p)| {
                let radius = if i == last { 5 } else { 3 };
                Circle::new((at(i), p.mean), radius, SERIES.filled())
            }))
            .map_err(text_err)?;
        Ok(())
    })
}

/// The distribution of per-query deltas (`current - baseline`) of a check, with zero, the mean
/// delta and the mean delta the rule tolerates (`tolerated`) marked.
pub(super) fn deltas(title: &str, deltas: &[f64], tolerated: Option<f64>) -> Result<String> {
    const BINS: usize = 24;
    let mean = crate::stats::mean(deltas);
    let (lo, hi) =
        bounds(deltas.iter().copied().chain([0.0]).chain(tolerated)).unwrap_or((-1.0, 1.0));
    let (lo, hi) = if hi - lo < 1e-9 {
        (lo - 0.5, hi + 0.5)
    } else {
        (lo, hi)
    };
    let width = (hi - lo) / BINS as f64;
    let mut counts = [0usize; BINS];
    for &d in deltas.iter().filter(|d| d.is_finite()) {
        counts[(((d - lo) / width) as usize).min(BINS - 1)] += 1;
    }
    let top = counts.iter().copied().max().unwrap_or(0).max(1) as f64;
    svg(title, |root| {
        let mut chart = ChartBuilder::on(root)
            .margin(10)
            .x_label_area_size(54)
            .y_label_area_size(56)
            .build_cartesian_2d(padded(lo, hi), 0.0..top * 1.1)
            .map_err(text_err)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .light_line_style(TRANSPARENT)
            .bold_line_style(GRID)
            .x_labels(6)
            .x_label_formatter(&|x| format!("{:+.2}", if x.abs() < 0.005 { 0.0 } else { *x }))
            .y_labels(4)
            .y_label_formatter(&|y| format!("{y:.0}"))
            .label_style((FONT, LABEL))
            .x_desc("current - baseline, per query")
            .y_desc("queries")
            .axis_desc_style((FONT, LABEL))
            .draw()
            .map_err(text_err)?;
        chart
            .draw_series(
                counts
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| **c > 0)
                    .map(|(i, &count)| {
                        let x0 = lo + width * i as f64;
                        Rectangle::new(
                            [(x0 + width * 0.05, 0.0), (x0 + width * 0.95, count as f64)],
                            SERIES.mix(0.75).filled(),
                        )
                    }),
            )
            .map_err(text_err)?;
        let vertical = |x: f64, color: RGBColor, width: u32| {
            LineSeries::new([(x, 0.0), (x, top * 1.1)], color.stroke_width(width))
        };
        chart
            .draw_series(vertical(0.0, RGBColor(110, 119, 129), 1))
            .map_err(text_err)?;
        if let Some(tolerated) = tolerated {
            chart
                .draw_series(vertical(tolerated, LIMIT, 2))
                .map_err(text_err)?;
        }
        if mean.is_finite() {
            chart
                .draw_series(vertical(mean, BASELINE, 2))
                .map_err(text_err)?;
        }
        Ok(())
    })
}

/// One estimate of the calibration chart: its name and 95% interval.
#[derive(Debug, Clone)]
pub(super) struct Estimate {
    pub name: String,
    pub value: f64,
    pub interval: (f64, f64),
}

/// Estimates with their intervals, one row each (top to bottom in the given order).
pub(super) fn estimates(title: &str, rows: &[Estimate]) -> Result<String> {
    let (lo, hi) = bounds(
        rows.iter()
            .flat_map(|r| [r.value, r.interval.0, r.interval.1]),
    )
    .unwrap_or((0.0, 1.0));
    let names: Vec<String> = rows.iter().map(|r| plain(&r.name)).collect();
    let n = rows.len().max(1) as f64;
    svg(title, |root| {
        let mut chart = ChartBuilder::on(root)
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(110)
            .margin_right(28)
            .build_cartesian_2d(padded(lo, hi), -0.5..n - 0.5)
            .map_err(text_err)?;
        // Row i is drawn at y = n - 1 - i, so that the first row is on top.
        let row_name = |y: &f64| {
            let i = y.round();
            if (y - i).abs() > 1e-6 || i < 0.0 || i >= n {
                return String::new();
            }
            names
                .get((n - 1.0 - i) as usize)
                .cloned()
                .unwrap_or_default()
        };
        chart
            .configure_mesh()
            .disable_y_mesh()
            .light_line_style(TRANSPARENT)
            .bold_line_style(GRID)
            .x_labels(6)
            .x_label_formatter(&|x| format!("{x:.3}"))
            .y_labels(rows.len().max(1))
            .y_label_formatter(&row_name)
            .label_style((FONT, LABEL))
            .draw()
            .map_err(text_err)?;
        let y = |i: usize| n - 1.0 - i as f64;
        chart
            .draw_series(rows.iter().enumerate().map(|(i, r)| {
                ErrorBar::new_horizontal(
                    y(i),
                    r.interval.0,
                    r.value,
                    r.interval.1,
                    SERIES.stroke_width(2),
                    8,
                )
            }))
            .map_err(text_err)?;
        chart
            .draw_series(
                rows.iter()
                    .enumerate()
                    .map(|(i, r)| Circle::new((r.value, y(i)), 4, SERIES.filled())),
            )
            .map_err(text_err)?;
        Ok(())
    })
}

/// A scatter of `(x, y)` points with its axis names.
pub(super) fn scatter(title: &str, points: &[(f64, f64)], axes: (&str, &str)) -> Result<String> {
    let (x_lo, x_hi) = bounds(points.iter().map(|p| p.0)).unwrap_or((0.0, 1.0));
    let (y_lo, y_hi) = bounds(points.iter().map(|p| p.1)).unwrap_or((0.0, 1.0));
    svg(title, |root| {
        let mut chart = ChartBuilder::on(root)
            .margin(10)
            .x_label_area_size(54)
            .y_label_area_size(64)
            .build_cartesian_2d(padded(x_lo.min(0.0), x_hi), padded(y_lo.min(0.0), y_hi))
            .map_err(text_err)?;
        chart
            .configure_mesh()
            .light_line_style(TRANSPARENT)
            .bold_line_style(GRID)
            .x_labels(6)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_labels(5)
            .y_label_formatter(&|y| format!("{y:.2}"))
            .label_style((FONT, LABEL))
            .x_desc(plain(axes.0))
            .y_desc(plain(axes.1))
            .axis_desc_style((FONT, LABEL))
            .draw()
            .map_err(text_err)?;
        chart
            .draw_series(
                points
                    .iter()
                    .map(|&(x, y)| Circle::new((x, y), 3, SERIES.mix(0.55).filled())),
            )
            .map_err(text_err)?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trend_is_a_scaling_svg_whose_texts_are_escaped() {
        let points = vec![
            TrendPoint {
                label: "<b>&".into(),
                mean: 0.8,
                interval: [0.75, 0.85],
            },
            TrendPoint {
                label: "now".into(),
                mean: 0.78,
                interval: [0.74, 0.82],
            },
        ];
        let bands = TrendBands {
            baseline: 0.8,
            tolerated: Some(0.77),
        };
        let svg = trend("recall@5 [<all>]", &points, bands).unwrap();
        assert!(
            svg.starts_with(r#"<svg class="chart" viewBox="0 0 420 230""#),
            "{svg}"
        );
        assert!(
            svg.contains(r#"aria-label="recall@5 [&lt;all&gt;]""#),
            "{svg}"
        );
        assert!(
            svg.contains("&lt;b&gt;&amp;"),
            "the x label is escaped: {svg}"
        );
        assert!(!svg.contains("<b>"), "{svg}");
        assert!(!svg.contains("http"), "no namespace URL left: {svg}");
        assert!(svg.trim_end().ends_with("</svg>"));
    }

    #[test]
    fn deltas_put_every_finite_value_in_a_bin() {
        let svg = deltas("d", &[-0.5, 0.0, 0.0, 0.25], Some(-0.1)).unwrap();
        // Three bins hold values (the two zeros share one): three bars.
        let bars = svg.matches("<rect").count();
        // The background, the plotting area, and the bars.
        assert!(bars >= 3, "{svg}");
        let constant = deltas("d", &[0.0, 0.0], None).unwrap();
        assert!(constant.contains("<rect"), "{constant}");
    }

    #[test]
    fn padded_ranges_never_collapse() {
        assert!(padded(0.5, 0.5).end > padded(0.5, 0.5).start);
        assert_eq!(padded(0.0, 1.0), -0.1..1.1);
    }
}
