//! The accuracy-speed front as an SVG (plotters): decode-step speedup against perplexity
//! relative to dense (log scale), every point of the grid as a dot, each allocation's Pareto
//! front as a line, the 5 % and 10 % perplexity bounds as vertical lines.

use crate::cmd::eval_front::Point;
use anyhow::Result;
use plotters::prelude::*;
use std::path::Path;

/// Writes the plot of `points` (one model) to `path`.
pub fn plot(path: &Path, model: &str, points: &[Point]) -> Result<()> {
    let ratio = |p: &Point| 1.0 + p.perplexity_increase;
    let (x0, x1) = points.iter().map(ratio).fold((1.0f64, 1.2f64), |(a, b), r| (a.min(r), b.max(r)));
    let y1 = points.iter().map(|p| p.speedup_vs_dense).fold(1.0f64, f64::max) * 1.1;
    let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("decode-step speedup against perplexity: {model}"), ("sans-serif", 17))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(55)
        .build_cartesian_2d((x0 * 0.97..x1 * 1.1).log_scale(), 0.0..y1)?;
    chart
        .configure_mesh()
        .x_desc("perplexity / dense perplexity (log scale)")
        .y_desc("speedup over dense FP16 GEMV (whole decode step)")
        .draw()?;
    for (bound, label) in [(1.05, "+5 %"), (1.10, "+10 %")] {
        if bound < x1 * 1.1 {
            let grey = BLACK.mix(0.35);
            chart
                .draw_series(LineSeries::new([(bound, 0.0), (bound, y1)], grey.stroke_width(1)))?
                .label(format!("perplexity {label}"))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], grey.stroke_width(1)));
        }
    }
    let mut allocations: Vec<_> = points.iter().map(|p| p.allocation).collect();
    allocations.dedup();
    allocations.sort_by_key(|a| a.name());
    allocations.dedup();
    for (i, alloc) in allocations.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let mine: Vec<&Point> = points.iter().filter(|p| p.allocation == *alloc).collect();
        chart.draw_series(
            mine.iter().map(|p| Circle::new((ratio(p), p.speedup_vs_dense), 3, color.mix(0.4).filled())),
        )?;
        let mut front: Vec<(f64, f64)> =
            mine.iter().filter(|p| p.on_front).map(|p| (ratio(p), p.speedup_vs_dense)).collect();
        front.sort_by(|a, b| a.0.total_cmp(&b.0));
        chart
            .draw_series(LineSeries::new(front.iter().copied(), color.stroke_width(2)))?
            .label(format!("{} (Pareto front)", alloc.name()))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        chart.draw_series(front.iter().map(|&p| Circle::new(p, 4, color.filled())))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
