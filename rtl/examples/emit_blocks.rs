//! Writes every block of one arch as Verilog, one module per file, without building the
//! testbench (no Verilator needed): `cargo run -p lacuna-rtl --example emit_blocks -- ARCH DIR`.
//! `lacuna emit-verilog` does the same with a manifest and the lint/synthesis checks.
use std::error::Error;

fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let arch = lacuna_spec::Arch::load(&args.next().unwrap_or_else(|| "tiny".into()))?;
    let dir = std::path::PathBuf::from(args.next().unwrap_or_else(|| "verilog".into()));
    std::fs::create_dir_all(&dir)?;
    for module in lacuna_rtl::blocks(&arch)? {
        for (file, text) in module.files() {
            std::fs::write(dir.join(file), text)?;
        }
        println!("{}", module.name);
    }
    Ok(())
}
