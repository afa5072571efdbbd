//! `accumulator`: L lanes of R FP32 registers, each lane fed by a FIFO and issuing in order.
//!
//! ```text
//!                         +--------------------------- lane l (AccLane) ---------------------------+
//!  push_count[l] -------->| FIFO (lane_queue_depth entries of (reg, product))                      |
//!  push[l][k] (reg,prod)->|   head P entries --> hazard check (scoreboard + same-cycle ports)      |
//!  free[l] <--------------|   issue up to P in order --> R FP32 regs read --> P x fp32_add          |
//!  quiet[l] <-------------|   --> (A-1 stages, the adder's) --> register write, scoreboard clear   |
//!  issue_enable --------->|                                                                        |
//!  read_enable/index ---->|   drain port: read_value = regs[index]; the register resets to +0.0    |
//!  read_value[l] <--------|                                                                        |
//!                         +------------------------------------------------------------------------+
//! ```
//!
//! Contract (docs/microarchitecture.md, "accumulator"): per cycle a lane issues up to
//! `acc_write_ports` (P) entries from the head of its FIFO, in order, while `issue_enable` is high
//! (drain is not reading). An entry issues only when no add to its register is in flight (the
//! scoreboard bit, set at issue and cleared by the write-back `acc_add_latency` (A) cycles later)
//! and no earlier port of the same cycle targets the same register; the first entry that cannot
//! issue stops the lane. `free` is the FIFO's free slots after this cycle's issue: route pushes at
//! most that many entries, which can issue from the next cycle.
//!
//! The adder: the register's value plus the product, round to nearest even, pipelined in
//! A - 1 register stages (`fp32_add::pipe`: align | add | round, balanced for the clock, with the
//! valid bit and the target in a delay line beside it), then the register write at the end of
//! cycle t + A - 1 for an issue in cycle t. `quiet`: the FIFO is empty and nothing is in
//! flight.

use super::reg_file::RegFile;
use crate::fp32_add::pipe::Fp32AddPipe;
use crate::reg::Reg;
use crate::wiring::{index_constants, many};
use rust_hdl::prelude::*;

/// The A - 1 pipeline registers beside one adder: the valid bit and the target register.
#[derive(LogicBlock)]
pub struct DelayLine {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// A sum enters the first stage.
    pub in_valid: Signal<In, Bit>,
    /// Its register.
    pub in_target: Signal<In, Bits<16>>,
    /// A sum leaves the last stage.
    pub out_valid: Signal<Out, Bit>,
    /// Its register.
    pub out_target: Signal<Out, Bits<16>>,
    valid: Vec<Reg<Bit>>,
    target: Vec<Reg<Bits<16>>>,
}

impl DelayLine {
    /// A line of `stages` registers (at least 1).
    pub fn new(stages: usize) -> DelayLine {
        assert!(stages >= 1);
        DelayLine {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            in_target: Default::default(),
            out_valid: Default::default(),
            out_target: Default::default(),
            valid: (0..stages).map(|_| Reg::default()).collect(),
            target: (0..stages).map(|_| Reg::default()).collect(),
        }
    }
}

impl Logic for DelayLine {
    #[hdl_gen]
    fn update(&mut self) {
        for i in 0..self.valid.len() {
            self.valid[i].clock.next = self.clock.val();
            self.valid[i].reset.next = self.reset.val();
            self.target[i].clock.next = self.clock.val();
            self.target[i].reset.next = self.reset.val();
        }
        self.valid[0].d.next = self.in_valid.val();
        self.target[0].d.next = self.in_target.val();
        for i in 1..self.valid.len() {
            self.valid[i].d.next = self.valid[i - 1].q.val();
            self.target[i].d.next = self.target[i - 1].q.val();
        }
        // The last stage drives the outputs (rust-hdl indexes only with loop variables: the
        // last of these assignments wins).
        for i in 0..self.valid.len() {
            self.out_valid.next = self.valid[i].q.val();
            self.out_target.next = self.target[i].q.val();
        }
    }
}

/// The ports of [`AccLane`] (a top module in the block-level tests).
pub const LANE_PORTS: &[crate::emit::PortDoc] = &[
    ("clock", "clock"),
    ("reset", "synchronous reset, active high"),
    ("issue_enable", "issue allowed this cycle (drain is not reading)"),
    ("push_count", "entries pushed this cycle, at most free"),
    ("push_target", "pushed entry k: its register in the lane"),
    ("push_product", "pushed entry k: its FP32 product"),
    ("free", "FIFO slots free after this cycle's issue"),
    ("quiet", "FIFO empty and no add in flight"),
    ("invalid", "an add issued this cycle has an Inf or NaN operand (an overflowed register)"),
    ("all_ports_used", "every port issued this cycle (port-limited stall counter)"),
    ("read_enable", "drain reads read_index this cycle and resets it to +0.0"),
    ("read_index", "the register drain reads"),
    ("read_value", "its FP32 value"),
];

/// One accumulator lane: FIFO, in-order issue on P ports, R registers, P adders.
#[derive(LogicBlock)]
pub struct AccLane {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// Issue allowed this cycle (drain is not reading).
    pub issue_enable: Signal<In, Bit>,
    /// Entries pushed this cycle (at most `free`).
    pub push_count: Signal<In, Bits<8>>,
    /// The pushed entries' registers, in order (slots `push_count..` are ignored).
    pub push_target: Vec<Signal<In, Bits<16>>>,
    /// The pushed entries' products.
    pub push_product: Vec<Signal<In, Bits<32>>>,
    /// FIFO slots free after this cycle's issue.
    pub free: Signal<Out, Bits<8>>,
    /// FIFO empty and no add in flight.
    pub quiet: Signal<Out, Bit>,
    /// An add issued this cycle reads a register that overflowed to Inf: the core reports it as
    /// an error instead of accumulating garbage.
    pub invalid: Signal<Out, Bit>,
    /// Every port issued this cycle (for the port-limited stall counter).
    pub all_ports_used: Signal<Out, Bit>,
    /// Drain reads register `read_index` this cycle (and resets it to +0.0).
    pub read_enable: Signal<In, Bit>,
    /// The register drain reads.
    pub read_index: Signal<In, Bits<16>>,
    /// Its value.
    pub read_value: Signal<Out, Bits<32>>,
    fifo_target: Vec<Reg<Bits<16>>>,
    fifo_product: Vec<Reg<Bits<32>>>,
    head: Reg<Bits<8>>,
    count: Reg<Bits<8>>,
    file: RegFile,
    adders: Vec<Fp32AddPipe>,
    lines: Vec<DelayLine>,
    cand_target: Vec<Signal<Local, Bits<16>>>,
    cand_product: Vec<Signal<Local, Bits<32>>>,
    cand_value: Vec<Signal<Local, Bits<32>>>,
    cand_busy: Vec<Signal<Local, Bit>>,
    issue: Vec<Signal<Local, Bit>>,
    go: Vec<Signal<Local, Bit>>,
    cand_slot: Vec<Signal<Local, Bits<8>>>,
    push_slot: Vec<Signal<Local, Bits<8>>>,
    head_next: Signal<Local, Bits<8>>,
    in_flight: Signal<Local, Bit>,
    issued: Signal<Local, Bits<8>>,
    remaining: Signal<Local, Bits<8>>,
    idx8: Vec<Constant<Bits<8>>>,
    depth: Constant<Bits<8>>,
    one8: Constant<Bits<8>>,
    zero8: Constant<Bits<8>>,
    inf32: Constant<Bits<32>>,
    pipelined: Constant<Bit>,
}

impl AccLane {
    /// One accumulator lane of `arch`.
    pub fn from_arch(arch: &lacuna_spec::Arch) -> AccLane {
        let c = &arch.core;
        AccLane::new(
            c.acc_regs_per_lane as usize,
            c.acc_write_ports as usize,
            c.acc_add_latency as usize,
            c.lane_queue_depth as usize,
            arch.push_slots() as usize,
        )
    }

    /// A lane of `regs` registers, `ports` adds per cycle, add latency `latency`, a FIFO of
    /// `depth` entries (2..=64) taking up to `max_push` pushes per cycle.
    pub fn new(regs: usize, ports: usize, latency: usize, depth: usize, max_push: usize) -> AccLane {
        assert!(ports >= 1 && (2..=64).contains(&depth) && max_push >= 1 && regs >= 1 && latency >= 1);
        let lines = if latency > 1 { ports } else { 0 };
        AccLane {
            clock: Default::default(),
            reset: Default::default(),
            issue_enable: Default::default(),
            push_count: Default::default(),
            push_target: many(max_push),
            push_product: many(max_push),
            free: Default::default(),
            quiet: Default::default(),
            invalid: Default::default(),
            all_ports_used: Default::default(),
            read_enable: Default::default(),
            read_index: Default::default(),
            read_value: Default::default(),
            fifo_target: many(depth),
            fifo_product: many(depth),
            head: Reg::default(),
            count: Reg::default(),
            file: RegFile::new(regs, ports),
            adders: (0..ports).map(|_| Fp32AddPipe::new(latency - 1)).collect(),
            lines: (0..lines).map(|_| DelayLine::new(latency - 1)).collect(),
            cand_target: many(ports),
            cand_product: many(ports),
            cand_value: many(ports),
            cand_busy: many(ports),
            issue: many(ports),
            go: many(ports + 1),
            cand_slot: many(ports),
            push_slot: many(max_push),
            head_next: Default::default(),
            in_flight: Default::default(),
            issued: Default::default(),
            remaining: Default::default(),
            idx8: index_constants(depth.max(ports).max(max_push)),
            depth: Constant::new((depth as LiteralType).into()),
            one8: Constant::new((1 as LiteralType).into()),
            zero8: Constant::new((0 as LiteralType).into()),
            inf32: Constant::new((0x7f80_0000 as LiteralType).into()),
            pipelined: Constant::new(latency > 1),
        }
    }
}

impl Logic for AccLane {
    #[hdl_gen]
    fn update(&mut self) {
        // Registers hold their value unless written below.
        self.head.clock.next = self.clock.val();
        self.head.reset.next = self.reset.val();
        self.head.d.next = self.head.q.val();
        self.count.clock.next = self.clock.val();
        self.count.reset.next = self.reset.val();
        self.count.d.next = self.count.q.val();
        for i in 0..self.fifo_target.len() {
            self.fifo_target[i].clock.next = self.clock.val();
            self.fifo_target[i].reset.next = self.reset.val();
            self.fifo_target[i].d.next = self.fifo_target[i].q.val();
            self.fifo_product[i].clock.next = self.clock.val();
            self.fifo_product[i].reset.next = self.reset.val();
            self.fifo_product[i].d.next = self.fifo_product[i].q.val();
        }
        self.file.clock.next = self.clock.val();
        self.file.reset.next = self.reset.val();
        for p in 0..self.lines.len() {
            self.lines[p].clock.next = self.clock.val();
            self.lines[p].reset.next = self.reset.val();
        }

        // The P head entries, their registers' values and scoreboard bits.
        for p in 0..self.cand_target.len() {
            self.cand_slot[p].next = self.head.q.val() + self.idx8[p].val();
            if self.cand_slot[p].val() >= self.depth.val() {
                self.cand_slot[p].next = self.cand_slot[p].val() - self.depth.val();
            }
            self.cand_target[p].next = self.fifo_target[0].q.val();
            self.cand_product[p].next = self.fifo_product[0].q.val();
            for i in 0..self.fifo_target.len() {
                if self.cand_slot[p].val() == self.idx8[i].val() {
                    self.cand_target[p].next = self.fifo_target[i].q.val();
                    self.cand_product[p].next = self.fifo_product[i].q.val();
                }
            }
            self.file.read_index[p].next = self.cand_target[p].val();
        }
        for p in 0..self.cand_target.len() {
            self.cand_value[p].next = self.file.read_value[p].val();
            self.cand_busy[p].next = self.file.read_busy[p].val();
        }

        // In-order issue: port p issues when every earlier port did, its entry exists, its
        // register is not busy and no earlier port of this cycle targets the same register.
        self.go[0].next = self.issue_enable.val();
        self.issued.next = self.zero8.val();
        for p in 0..self.issue.len() {
            self.issue[p].next =
                self.go[p].val() && (self.idx8[p].val() < self.count.q.val()) && !self.cand_busy[p].val();
            for q in 0..self.issue.len() {
                if (self.idx8[q].val() < self.idx8[p].val()) && (self.cand_target[q].val() == self.cand_target[p].val())
                {
                    self.issue[p].next = false;
                }
            }
            self.go[p + 1].next = self.issue[p].val();
            if self.issue[p].val() {
                self.issued.next = self.issued.val() + self.one8.val();
            }
        }

        // The adders: register value + product, into the pipeline (or straight back, A = 1).
        for p in 0..self.adders.len() {
            self.adders[p].clock.next = self.clock.val();
            self.adders[p].reset.next = self.reset.val();
            self.adders[p].a.next = self.cand_value[p].val();
            self.adders[p].b.next = self.cand_product[p].val();
        }
        for p in 0..self.lines.len() {
            self.lines[p].in_valid.next = self.issue[p].val();
            self.lines[p].in_target.next = self.cand_target[p].val();
        }

        // Write-back: the sums leaving the pipeline (which clears the scoreboard bit), or with
        // no pipeline (A = 1) the sums of this cycle's issues.
        for p in 0..self.issue.len() {
            self.file.set_busy[p].next = self.issue[p].val() && self.pipelined.val();
            self.file.wb_valid[p].next = self.issue[p].val();
            self.file.wb_index[p].next = self.cand_target[p].val();
            self.file.wb_value[p].next = self.adders[p].sum.val();
        }
        for p in 0..self.lines.len() {
            self.file.wb_valid[p].next = self.lines[p].out_valid.val();
            self.file.wb_index[p].next = self.lines[p].out_target.val();
            self.file.wb_value[p].next = self.adders[p].sum.val();
        }

        // Drain's read port: the value, and the register back to +0.0.
        self.file.drain_index.next = self.read_index.val();
        self.file.drain_clear.next = self.read_enable.val();
        self.read_value.next = self.file.drain_value.val();

        // The FIFO: pop what issued, push behind the tail.
        self.head_next.next = self.head.q.val() + self.issued.val();
        if self.head_next.val() >= self.depth.val() {
            self.head_next.next = self.head_next.val() - self.depth.val();
        }
        self.head.d.next = self.head_next.val();
        self.remaining.next = self.count.q.val() - self.issued.val();
        self.free.next = self.depth.val() - self.remaining.val();
        for k in 0..self.push_target.len() {
            self.push_slot[k].next = self.head.q.val() + self.count.q.val() + self.idx8[k].val();
            if self.push_slot[k].val() >= self.depth.val() {
                self.push_slot[k].next = self.push_slot[k].val() - self.depth.val();
            }
            if self.push_slot[k].val() >= self.depth.val() {
                self.push_slot[k].next = self.push_slot[k].val() - self.depth.val();
            }
            for i in 0..self.fifo_target.len() {
                if (self.idx8[k].val() < self.push_count.val()) && (self.push_slot[k].val() == self.idx8[i].val()) {
                    self.fifo_target[i].d.next = self.push_target[k].val();
                    self.fifo_product[i].d.next = self.push_product[k].val();
                }
            }
        }
        self.count.d.next = self.remaining.val() + self.push_count.val();
        for p in 0..self.go.len() {
            self.all_ports_used.next = self.go[p].val();
        }
        self.in_flight.next = self.file.any_busy.val();
        self.quiet.next = (self.count.q.val() == self.zero8.val()) && !self.in_flight.val();
        // A register that overflowed to Inf (exponent field 255) is about to be added to.
        self.invalid.next = false;
        for p in 0..self.issue.len() {
            if self.issue[p].val() && ((self.cand_value[p].val() & self.inf32.val()) == self.inf32.val()) {
                self.invalid.next = true;
            }
        }
    }
}
