//! `lacuna inspect FILE.rlc [--json]`: storage figures and the validation verdict.

use crate::table::Table;
use anyhow::Result;
use lacuna_spec::read_rlc;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `lacuna inspect`.
#[derive(clap::Args)]
pub struct Args {
    /// The .rlc file.
    file: PathBuf,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> Result<ExitCode> {
    let name = a.file.display().to_string();
    let bytes = std::fs::read(&a.file).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
    let m = match read_rlc(&bytes) {
        Ok(m) => m,
        Err(e) => {
            if a.json {
                let v = serde_json::json!({ "file": name, "valid": false, "error": e.to_string() });
                println!("{v}");
            }
            anyhow::bail!("{name} is not a valid .rlc file: {e}");
        }
    };
    let s = m.stats();
    if a.json {
        let mut v = serde_json::to_value(s)?;
        v["file"] = name.into();
        v["file_bytes"] = bytes.len().into();
        v["valid"] = true.into();
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(ExitCode::SUCCESS);
    }
    let dense = s.dense_fp16_bytes as f64;
    println!("{name}: {} bytes, valid", bytes.len());
    println!("shape            {} x {} ({} panel(s) of up to {} rows)", s.rows, s.cols, s.panels, s.panel_rows);
    println!(
        "nonzeros         {} ({:.2} % weight sparsity)",
        s.nnz,
        100.0 * (1.0 - s.nnz as f64 / (s.rows * s.cols) as f64)
    );
    println!("stored entries   {} (nonzeros + padding entries)", s.stored_entries);
    println!(
        "padding entries  {} (0.0, 15) inside columns; {} tail entries pad the arrays to 8",
        s.padding_entries, s.tail_entries
    );
    println!();
    let mut t = Table::new(&["format", "bytes", "of dense FP16"]);
    for (fmt, b) in [
        ("dense FP16", s.dense_fp16_bytes),
        ("RLC-CSC (FP16 + 4-bit runs)", s.bytes),
        ("CSC (FP16 + 16-bit row index)", s.csc16_bytes),
        ("bitmap (1 bit/weight + FP16)", s.bitmap_bytes),
    ] {
        t.row(vec![fmt.into(), b.to_string(), format!("{:.3}", b as f64 / dense)]);
    }
    print!("{}", t.render());
    Ok(ExitCode::SUCCESS)
}
