//! Writes every block of one arch as Verilog, one module per file: `cargo run -p lacuna-rtl
//! --example emit_blocks -- ARCH DIR` (the CLI's `emit-verilog` without the testbench build).
fn main() {
    let mut args = std::env::args().skip(1);
    let arch = lacuna_spec::Arch::load(&args.next().unwrap_or_else(|| "tiny".into())).expect("arch");
    let dir = std::path::PathBuf::from(args.next().unwrap_or_else(|| "verilog".into()));
    std::fs::create_dir_all(&dir).expect("output folder");
    for module in lacuna_rtl::blocks(&arch).expect("emit") {
        for (file, text) in module.files() {
            std::fs::write(dir.join(file), text).expect("write");
        }
        println!("{}", module.name);
    }
}
