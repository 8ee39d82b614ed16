//! The eval's two charts, drawn with plotters' SVG backend: precision,
//! recall and F1 as grouped bars per context mode (`chart.svg`), and recall
//! against tokens per review, one labelled point per mode
//! (`recall-tokens.svg`) — the question the modes exist to answer is whether
//! more context buys recall, and at what token cost.

use std::ops::Range;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::prelude::*;

use crate::eval::ModeSummary;

/// Bar chart file name (linked from `report.md` and the README's copy).
pub const BARS_FILE: &str = "chart.svg";
/// Scatter file name (linked from `report.md`).
pub const SCATTER_FILE: &str = "recall-tokens.svg";

const SIZE: (u32, u32) = (720, 380);
const FONT: &str = "sans-serif";
/// Tableau's first colours: distinguishable, also in greyscale print.
const COLORS: [RGBColor; 3] = [
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0x59, 0xa1, 0x4f),
];

/// A drawing error as an `anyhow` error (plotters' error type borrows
/// nothing but is generic over the backend's).
fn drawing<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow::anyhow!("drawing the eval chart: {e}")
}

/// The bar chart's x axis: one unit per mode, a tick at each group's
/// centre (plotters' numeric axes put ticks at round numbers).
struct Groups(usize);

impl Ranged for Groups {
    // Labels come from `x_label_formatter`; the default only has to exist.
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let share = value / self.0 as f64;
        limit.0 + (f64::from(limit.1 - limit.0) * share).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            vec![]
        } else {
            (0..self.0).map(|i| i as f64 + 0.5).collect()
        }
    }

    fn range(&self) -> Range<f64> {
        0.0..self.0 as f64
    }
}

/// Grouped bars: precision, recall and F1 for each mode, values on top.
pub fn bars_svg(modes: &[ModeSummary]) -> anyhow::Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(drawing)?;
        let mut chart = ChartBuilder::on(&root)
            .caption("Precision, recall and F1 per context mode", (FONT, 18))
            .margin(12)
            .x_label_area_size(30)
            .y_label_area_size(44)
            // Head-room above 1.0 keeps the legend off the bars.
            .build_cartesian_2d(Groups(modes.len().max(1)), 0.0..1.3)
            .map_err(drawing)?;
        let label = |x: &f64| {
            modes
                .get(x.floor().max(0.0) as usize)
                .map(|m| m.mode.clone())
                .unwrap_or_default()
        };
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_label_formatter(&label)
            .y_label_formatter(&|y| format!("{y:.1}"))
            .y_desc("score")
            .label_style((FONT, 13))
            .draw()
            .map_err(drawing)?;
        const WIDTH: f64 = 0.26;
        for (j, name) in ["precision", "recall", "F1"].into_iter().enumerate() {
            let color = COLORS[j];
            let value = move |m: &ModeSummary| [m.precision, m.recall, m.f1][j];
            let x0 = move |i: usize| i as f64 + 0.11 + j as f64 * WIDTH;
            chart
                .draw_series(
                    modes
                        .iter()
                        .enumerate()
                        .map(|(i, m)| Rectangle::new([(x0(i), 0.0), (x0(i) + WIDTH * 0.92, value(m))], color.filled())),
                )
                .map_err(drawing)?
                .label(name)
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled()));
            chart
                .draw_series(
                    modes
                        .iter()
                        .enumerate()
                        .map(|(i, m)| Text::new(format!("{:.2}", value(m)), (x0(i), value(m) + 0.045), (FONT, 11))),
                )
                .map_err(drawing)?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font((FONT, 12))
            .draw()
            .map_err(drawing)?;
        root.present().map_err(drawing)?;
    }
    Ok(svg)
}

/// Tokens per review of a mode (its total over every review it ran).
fn tokens_per_review(m: &ModeSummary) -> f64 {
    m.tokens as f64 / m.reviews.max(1) as f64
}

/// Recall (y) against tokens per review (x), one labelled point per mode.
pub fn recall_tokens_svg(modes: &[ModeSummary]) -> anyhow::Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(drawing)?;
        let most = modes.iter().map(tokens_per_review).fold(0.0, f64::max);
        // Room right of the costliest point for its label. The offline
        // engine spends no tokens: an axis of 0..1 rather than an empty
        // range plotters cannot map.
        let x_max = if most > 0.0 { most * 1.6 } else { 1.0 };
        let mut chart = ChartBuilder::on(&root)
            .caption("Recall against tokens per review", (FONT, 18))
            .margin(12)
            // The last tick label is centred on the axis' end.
            .margin_right(28)
            .x_label_area_size(40)
            .y_label_area_size(44)
            .build_cartesian_2d(0.0..x_max, 0.0..1.05)
            .map_err(drawing)?;
        let x_range = chart.x_range();
        chart
            .configure_mesh()
            .x_desc("tokens per review (prompt + cached + completion)")
            .y_desc("recall")
            .x_label_formatter(&|x| {
                if x_range.end - x_range.start >= 10.0 {
                    format!("{x:.0}")
                } else {
                    format!("{x:.1}")
                }
            })
            .y_label_formatter(&|y| format!("{y:.1}"))
            .label_style((FONT, 13))
            .draw()
            .map_err(drawing)?;
        let points: Vec<(f64, f64)> = modes.iter().map(|m| (tokens_per_review(m), m.recall)).collect();
        // Modes on (nearly) the same spot — the offline engine's often
        // are — get their labels stacked instead of printed over each other.
        let near = |a: (f64, f64), b: (f64, f64)| (a.0 - b.0).abs() / x_max < 0.06 && (a.1 - b.1).abs() < 0.06;
        chart
            .draw_series(modes.iter().enumerate().map(|(i, m)| {
                let color = COLORS[i % COLORS.len()];
                let stacked = points[..i].iter().filter(|p| near(**p, points[i])).count() as i32;
                EmptyElement::at(points[i])
                    + Circle::new((0, 0), 6, color.filled())
                    + Text::new(
                        format!("{} ({:.2}, {:.0} tokens)", m.mode, m.recall, points[i].0),
                        (10, -8 + 16 * stacked),
                        (FONT, 13),
                    )
            }))
            .map_err(drawing)?;
        root.present().map_err(drawing)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(name: &str, precision: f64, recall: f64, tokens: u64) -> ModeSummary {
        ModeSummary {
            mode: name.into(),
            reviews: 4,
            precision,
            recall,
            f1: 2.0 * precision * recall / (precision + recall),
            clean_false_positives: 0,
            tokens,
            usd_per_review: 0.0,
            latency_p50_ms: 10.0,
            latency_max_ms: 20.0,
            recall_spread: 0.0,
            live_calls: 0,
            replayed_calls: 0,
            explained: None,
            model_alone: None,
            model_before_critic: None,
            model_alone_explained: None,
        }
    }

    fn figures() -> Vec<ModeSummary> {
        vec![
            mode("diff_only", 1.0, 0.5, 4_000),
            mode("full_files", 0.8, 0.75, 40_000),
            mode("graph_rag", 1.0, 0.9, 12_000),
        ]
    }

    /// An SVG document (one root element, closed) that names every mode.
    fn assert_svg_naming_modes(svg: &str, modes: &[ModeSummary]) {
        assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(200)]);
        assert!(svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<svg").count(), 1);
        for m in modes {
            assert!(svg.contains(&m.mode), "{} missing", m.mode);
        }
    }

    #[test]
    fn bars_name_every_mode_and_metric_and_follow_the_figures() {
        let modes = figures();
        let svg = bars_svg(&modes).unwrap();
        assert_svg_naming_modes(&svg, &modes);
        for text in ["precision", "recall", "F1", "0.75", "0.90"] {
            assert!(svg.contains(text), "{text} missing");
        }
        // Nine bars, one per (mode, metric), plus the legend's three swatches.
        let fills = |svg: &str, c: &str| svg.matches(&format!("fill=\"{c}\"")).count();
        assert_eq!(
            fills(&svg, "#4E79A7") + fills(&svg, "#F28E2B") + fills(&svg, "#59A14F"),
            12
        );
        let mut worse = figures();
        worse[2].recall = 0.6;
        worse[2].f1 = 0.75;
        assert_ne!(bars_svg(&worse).unwrap(), svg, "other figures, another chart");
        assert_eq!(bars_svg(&modes).unwrap(), svg, "same figures, same bytes");
    }

    #[test]
    fn the_scatter_labels_each_mode_with_its_point() {
        let modes = figures();
        let svg = recall_tokens_svg(&modes).unwrap();
        assert_svg_naming_modes(&svg, &modes);
        assert!(svg.contains("graph_rag (0.90, 3000 tokens)"), "{svg}");
        assert_eq!(svg.matches("<circle").count(), 3);
        let mut cheaper = figures();
        cheaper[2].tokens = 2_000;
        let other = recall_tokens_svg(&cheaper).unwrap();
        assert_ne!(other, svg);
        assert!(other.contains("graph_rag (0.90, 500 tokens)"));
    }

    #[test]
    fn the_offline_engine_without_tokens_still_draws() {
        let modes = vec![mode("diff_only", 1.0, 0.9, 0), mode("graph_rag", 1.0, 1.0, 0)];
        let svg = recall_tokens_svg(&modes).unwrap();
        assert_svg_naming_modes(&svg, &modes);
        assert!(svg.contains("graph_rag (1.00, 0 tokens)"));
        assert_svg_naming_modes(&bars_svg(&[]).unwrap(), &[]);
    }
}
