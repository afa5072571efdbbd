//! `rtl_fit`: the limits of the RTL generator, beside the arch they constrain.
//!
//! `Arch::validate` admits every arch the cycle model runs (a job of more than `core.max_panels`
//! panels is refused by every engine alike): architects explore cores larger than
//! the RTL builds (a 256-lane core, 4 KiB bursts). The RTL has fixed widths (8-bit queue counts
//! and entry offsets, 16-bit rows and register indices, a 32-bit address space) and emits its
//! SRAMs as register arrays; [`Arch::rtl_fit`] names the first limit an arch passes, and
//! `lacuna_rtl::blocks` (and so `emit-verilog`, `cosim` and the testbench) refuses such an arch
//! with that message instead of emitting hardware that would silently wrap.
//!
//! | limit | why |
//! |---|---|
//! | chunk entries (lanes x entries_per_lane) <= 127 | 8-bit entry offsets and counts in the decoder |
//! | tile rows (lanes x acc_regs_per_lane) <= 65,536; acc_regs_per_lane <= 32,768 | 16-bit rows and register indices |
//! | lane_queue_depth <= 64; activation_queue_depth, scan_width, column_queue_depth <= 127 | 8-bit queue counts |
//! | acc_write_ports <= 16 | the lane's port muxes are generated for at most 16 |
//! | max_outstanding <= 4096; request_bytes <= 512 | the id FIFO and the burst's data ports |
//! | activation SRAM <= 1 MiB, colptr SRAM <= 64 KiB | emitted as register arrays (a real flow uses macros) |
//! | 2 x chunk entries <= request_bytes; 4 x lanes <= request_bytes | a chunk's values and a register row each lie in one burst |
//! | latency_cycles >= 1 | a response is registered the cycle after its request |
//! | max_panels <= 4096 | the panel table is emitted as register arrays, 160 bits an entry |
//! | expert_unit.down_lanes <= 256 | each lane is a module of its own in the Verilog (rust-hdl writes one per instance): `edge`'s 256 are 14 MB |
//! | expert_unit.dot_units <= 64 | each unit is a module of its own (~4,000 flip-flops' worth of pipeline) |
//! | expert_unit.fp32_lanes divides 32 | the token store takes a quantizer chunk into one 32-value group row |
//! | expert unit output rows (max_tokens + 1 row sets x max_hidden, rounded up to whole lane blocks, power-of-two blocks) <= 1 MiB | the down engine's row store is emitted as a register array |

use crate::Arch;

impl Arch {
    /// Whether the RTL generator can build this arch: `Err` names the first limit it passes
    /// (the table above).
    pub fn rtl_fit(&self) -> Result<(), String> {
        let c = &self.core;
        let m = &self.memory;
        let limits = [
            ("core.lanes * core.entries_per_lane (chunk entries)", self.chunk_entries(), 127),
            ("core.lanes * core.acc_regs_per_lane (tile rows)", self.tile_rows(), 65_536),
            ("core.acc_regs_per_lane", c.acc_regs_per_lane, 32_768),
            ("core.lane_queue_depth", c.lane_queue_depth, 64),
            ("core.activation_queue_depth", c.activation_queue_depth, 127),
            ("core.scan_width", c.scan_width, 127),
            ("core.acc_write_ports", c.acc_write_ports, 16),
            ("core.column_queue_depth", c.column_queue_depth, 127),
            ("core.max_panels", c.max_panels, 4096),
            ("memory.max_outstanding", m.max_outstanding, 4096),
            ("memory.request_bytes", m.request_bytes, 512),
            ("sram.activation_bytes", self.sram.activation_bytes, 1 << 20),
            ("sram.colptr_bytes", self.sram.colptr_bytes, 1 << 16),
        ];
        let u = &self.expert_unit;
        let blocks = u.max_hidden.div_ceil(u.down_lanes).next_power_of_two() as u64;
        let store = (u.max_tokens as u64 + 1) * blocks * u.down_lanes as u64 * 4;
        let expert = [
            ("expert_unit.down_lanes", u.down_lanes as u64, 256),
            ("expert_unit.dot_units", u.dot_units as u64, 64),
            ("the expert unit's output rows (bytes)", store, 1 << 20),
        ];
        if let Some((what, value, max)) = expert.into_iter().find(|l| l.1 > l.2) {
            return Err(format!("{what} is {value}, the RTL holds at most {max}"));
        }
        // The token store takes the quantizer's chunks whole into one 32-value group row.
        if 32 % u.fp32_lanes != 0 {
            return Err(format!(
                "expert_unit.fp32_lanes is {}: the RTL's token store takes a chunk into one group, so it must divide 32",
                u.fp32_lanes
            ));
        }
        if let Some((what, value, max)) = limits.into_iter().find(|l| l.1 > l.2) {
            return Err(format!("{what} is {value}, the RTL holds at most {max}"));
        }
        // The RTL's core is built for one datapath (its FP16 multipliers and FP32 adders).
        match self.datapath {
            crate::Datapath::Fp16Fp32 => {}
        }
        let (value, output) = (self.datapath.weight_bytes(), self.datapath.output_bytes());
        if value * self.chunk_entries() > m.request_bytes {
            return Err(format!(
                "a chunk's values ({value} bytes x {} entries) must lie in one memory request of {} bytes",
                self.chunk_entries(),
                m.request_bytes
            ));
        }
        if output * c.lanes > m.request_bytes {
            return Err(format!(
                "a register row ({output} bytes x {} lanes) must fit one memory request of {} bytes",
                c.lanes, m.request_bytes
            ));
        }
        if m.latency_cycles == 0 {
            return Err("memory.latency_cycles is 0, the RTL needs at least 1".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::Arch;

    #[test]
    fn the_presets_fit_the_rtl_and_a_larger_core_is_named() {
        for p in crate::arch::PRESET_NAMES {
            Arch::preset(p).unwrap().rtl_fit().unwrap();
        }
        let mut a = Arch::preset("edge").unwrap();
        a.core.max_panels = 5000;
        a.validate().unwrap();
        assert_eq!(a.rtl_fit().unwrap_err(), "core.max_panels is 5000, the RTL holds at most 4096");
        let mut b = Arch::preset("edge").unwrap();
        b.expert_unit.down_lanes = 512;
        b.validate().unwrap();
        assert_eq!(b.rtl_fit().unwrap_err(), "expert_unit.down_lanes is 512, the RTL holds at most 256");
        let mut c = Arch::preset("edge").unwrap();
        c.expert_unit.max_tokens = 64;
        assert!(c.rtl_fit().unwrap_err().starts_with("the expert unit's output rows (bytes) is 1064960"));
        let mut d = Arch::preset("tiny").unwrap();
        d.expert_unit.fp32_lanes = 3;
        d.validate().unwrap();
        assert!(d.rtl_fit().unwrap_err().contains("must divide 32"));
    }
}
