//! `act_path`: act_load, the activation SRAM and act_scan, wired: x from the memory port to the
//! activation queue, as one block for block-level co-simulation and for the core.
//!
//! ```text
//!  memory port --> [ act_load ] --burst--> [ act_sram ] --W values--> [ act_scan ] --> queue head
//!                      | loaded ----------------------------------------^
//! ```

use super::act_load::ActLoad;
use super::act_scan::ActScan;
use super::act_sram::ActSram;
use crate::wiring::many;
use lacuna_spec::Arch;
use rust_hdl::prelude::*;

/// The ports of [`ActPath`] as a top (block-level co-simulation).
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("clock", "clock"),
    ("reset", "synchronous reset: a new job"),
    ("x_base", "address of x (burst aligned)"),
    ("cols", "K: activations per panel"),
    ("panels", "panels of the job"),
    ("threshold", "activation threshold, a non-negative FP16"),
    ("req_ready", "the memory port takes act_load's request this cycle"),
    ("resp_valid", "act_load's next response (presented the cycle before its data is due)"),
    ("resp_data", "its burst, 32-bit word w"),
    ("pop", "colptr_fetch takes the queue's head this cycle"),
    ("req_valid", "act_load wants a burst"),
    ("req_addr", "its address"),
    ("loaded", "bytes of x in the SRAM"),
    ("head_valid", "the activation queue is not empty"),
    ("head_marker", "its head is an end-of-panel marker"),
    ("head_panel", "the head's panel"),
    ("head_k", "the head's column"),
    ("head_x", "the head's activation, FP16"),
    ("done", "every panel scanned and its marker queued"),
];

/// act_load + act_sram + act_scan.
#[derive(LogicBlock)]
pub struct ActPath {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// Address of x.
    pub x_base: Signal<In, Bits<32>>,
    /// K.
    pub cols: Signal<In, Bits<32>>,
    /// Panels.
    pub panels: Signal<In, Bits<16>>,
    /// Threshold.
    pub threshold: Signal<In, Bits<16>>,
    /// Request granted.
    pub req_ready: Signal<In, Bit>,
    /// Response.
    pub resp_valid: Signal<In, Bit>,
    /// Response data.
    pub resp_data: Vec<Signal<In, Bits<32>>>,
    /// Pop.
    pub pop: Signal<In, Bit>,
    /// Request.
    pub req_valid: Signal<Out, Bit>,
    /// Request address.
    pub req_addr: Signal<Out, Bits<32>>,
    /// Bytes loaded.
    pub loaded: Signal<Out, Bits<32>>,
    /// Queue not empty.
    pub head_valid: Signal<Out, Bit>,
    /// Head is a marker.
    pub head_marker: Signal<Out, Bit>,
    /// Head's panel.
    pub head_panel: Signal<Out, Bits<16>>,
    /// Head's column.
    pub head_k: Signal<Out, Bits<32>>,
    /// Head's activation.
    pub head_x: Signal<Out, Bits<16>>,
    /// All scanned.
    pub done: Signal<Out, Bit>,
    load: ActLoad,
    sram: ActSram,
    scan: ActScan,
}

impl ActPath {
    /// The activation path of `arch`.
    pub fn from_arch(arch: &Arch) -> ActPath {
        let (burst, width) = (arch.memory.request_bytes, arch.core.scan_width as usize);
        ActPath {
            clock: Default::default(),
            reset: Default::default(),
            x_base: Default::default(),
            cols: Default::default(),
            panels: Default::default(),
            threshold: Default::default(),
            req_ready: Default::default(),
            resp_valid: Default::default(),
            resp_data: many(arch.burst_words()),
            pop: Default::default(),
            req_valid: Default::default(),
            req_addr: Default::default(),
            loaded: Default::default(),
            head_valid: Default::default(),
            head_marker: Default::default(),
            head_panel: Default::default(),
            head_k: Default::default(),
            head_x: Default::default(),
            done: Default::default(),
            load: ActLoad::new(burst),
            sram: ActSram::new(arch.sram.activation_bytes as usize / 2, arch.burst_words(), width),
            scan: ActScan::from_arch(arch),
        }
    }
}

impl Logic for ActPath {
    #[hdl_gen]
    fn update(&mut self) {
        self.load.clock.next = self.clock.val();
        self.load.reset.next = self.reset.val();
        self.load.x_base.next = self.x_base.val();
        self.load.cols.next = self.cols.val();
        self.load.req_ready.next = self.req_ready.val();
        self.load.resp_valid.next = self.resp_valid.val();
        self.req_valid.next = self.load.req_valid.val();
        self.req_addr.next = self.load.req_addr.val();
        self.loaded.next = self.load.loaded.val();
        self.sram.clock.next = self.clock.val();
        self.sram.wr_enable.next = self.load.wr_enable.val();
        self.sram.wr_index.next = self.load.wr_index.val();
        for w in 0..self.resp_data.len() {
            self.sram.wr_data[w].next = self.resp_data[w].val();
        }
        self.scan.clock.next = self.clock.val();
        self.scan.reset.next = self.reset.val();
        self.scan.cols.next = self.cols.val();
        self.scan.panels.next = self.panels.val();
        self.scan.threshold.next = self.threshold.val();
        self.scan.loaded.next = self.load.loaded.val();
        self.scan.pop.next = self.pop.val();
        self.sram.rd_index.next = self.scan.read_index.val();
        for i in 0..self.scan.read_x.len() {
            self.scan.read_x[i].next = self.sram.rd_x[i].val();
        }
        self.head_valid.next = self.scan.head_valid.val();
        self.head_marker.next = self.scan.head_marker.val();
        self.head_panel.next = self.scan.head_panel.val();
        self.head_k.next = self.scan.head_k.val();
        self.head_x.next = self.scan.head_x.val();
        self.done.next = self.scan.done.val();
    }
}
