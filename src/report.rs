//! Report files for machines and people: JSON, CSV, and an SVG plot (plotters).

use anyhow::{Context, Result};
use plotters::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// One kernel on one job, as reported.
#[derive(Serialize, Clone)]
pub struct Row {
    pub shape: String,
    pub weight_sparsity: f64,
    pub act_sparsity: f64,
    pub kernel: &'static str,
    pub cycles: u64,
    pub latency_us: f64,
    pub speedup_vs_dense: f64,
    pub roofline_fraction: f64,
    pub energy_pj: f64,
    pub bytes_loaded: u64,
    pub arch: String,
    pub arch_hash: String,
    pub provenance: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counters: Option<lacuna_model::Counters>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy_by_unit: Option<lacuna_model::energy::Energy>,
}

/// Writes `simulate.json`, `simulate.csv` and `speedup.svg` into `dir`.
pub fn write_simulate(dir: &Path, rows: &[Row]) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    std::fs::write(dir.join("simulate.json"), serde_json::to_string_pretty(rows)?)?;
    let mut csv = String::from(
        "shape,weight_sparsity,act_sparsity,kernel,cycles,latency_us,speedup_vs_dense,roofline_fraction,energy_pj,bytes_loaded,arch,arch_hash,provenance\n",
    );
    for r in rows {
        csv.push_str(&format!(
            "{},{},{},{},{},{:.3},{:.4},{:.4},{:.1},{},{},{},{}\n",
            r.shape,
            r.weight_sparsity,
            r.act_sparsity,
            r.kernel,
            r.cycles,
            r.latency_us,
            r.speedup_vs_dense,
            r.roofline_fraction,
            r.energy_pj,
            r.bytes_loaded,
            csv_field(&r.arch),
            r.arch_hash,
            csv_field(&r.provenance)
        ));
    }
    std::fs::write(dir.join("simulate.csv"), csv)?;
    plot_speedup(&dir.join("speedup.svg"), rows)
}

/// Geometric-mean speedup over the shapes, per kernel, against the sparsity level.
fn plot_speedup(path: &Path, rows: &[Row]) -> Result<()> {
    let mut series: BTreeMap<&str, BTreeMap<i64, Vec<f64>>> = BTreeMap::new();
    for r in rows {
        let level = (r.weight_sparsity * 100.0).round() as i64;
        series.entry(r.kernel).or_default().entry(level).or_default().push(r.speedup_vs_dense.ln());
    }
    let points: BTreeMap<&str, Vec<(f64, f64)>> = series
        .iter()
        .map(|(k, by_level)| {
            let pts =
                by_level.iter().map(|(l, v)| (*l as f64, (v.iter().sum::<f64>() / v.len() as f64).exp())).collect();
            (*k, pts)
        })
        .collect();
    let xs = points.values().flatten().map(|p| p.0);
    let (x0, x1) = xs.clone().fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    let ymax = points.values().flatten().map(|p| p.1).fold(1.0, f64::max) * 1.1;
    let root = SVGBackend::new(path, (800, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("speedup over dense FP16 GEMV ({})", rows[0].provenance.split(':').next().unwrap_or("")),
            ("sans-serif", 18),
        )
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d((x0 - 5.0)..(x1 + 5.0), 0.0..ymax)?;
    chart.configure_mesh().x_desc("dual sparsity (%)").y_desc("speedup (geometric mean over shapes)").draw()?;
    for (i, (kernel, pts)) in points.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))?
            .label(*kernel)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
    }
    chart.configure_series_labels().background_style(WHITE.mix(0.8)).border_style(BLACK).draw()?;
    root.present()?;
    Ok(())
}
