#[test]
fn emit() {
    for a in ["tiny"] {
        let arch = lacuna_spec::Arch::preset(a).unwrap();
        for m in lacuna_rtl::blocks(&arch).unwrap() {
            std::fs::write(format!("/tmp/emit/{}.v", m.name), &m.verilog).unwrap();
        }
    }
}
