//! `derived`: every quantity derived from an [`Arch`]'s parameters, computed here and only here
//! (tile rows, chunk entries, panel heights, burst words, push slots, buffer sizes, index widths,
//! bandwidth), so that the model, the RTL, the compiler and the testbench cannot disagree on one.

use crate::Arch;

impl Arch {
    /// Rows in one tile (row panel): `lanes * acc_regs_per_lane`.
    pub fn tile_rows(&self) -> u32 {
        self.core.lanes * self.core.acc_regs_per_lane
    }

    /// The panel height for a matrix of `rows` rows: as few panels as the tile allows, of equal
    /// height (5120 rows on a 4096-row tile: two panels of 2560, not 4096 + 1024). Short panels
    /// mean short columns, whose partly used first and last chunks cost bursts and decoder slots.
    pub fn balanced_panel_rows(&self, rows: usize) -> u32 {
        let panels = rows.div_ceil(self.tile_rows() as usize).max(1);
        rows.div_ceil(panels) as u32
    }

    /// 32-bit words in one memory burst (`request_bytes / 4`): the width of every data port on
    /// the memory side of the RTL.
    pub fn burst_words(&self) -> usize {
        self.memory.request_bytes as usize / 4
    }

    /// Entries in one decoder chunk: `lanes * entries_per_lane`.
    pub fn chunk_entries(&self) -> u32 {
        self.core.lanes * self.core.entries_per_lane
    }

    /// Entries one accumulator lane can take from route in a cycle (its push slots):
    /// `min(lane_queue_depth, chunk entries)`; a lane's FIFO holds no more, and a slice has no
    /// more.
    pub fn push_slots(&self) -> u32 {
        self.core.lane_queue_depth.min(self.chunk_entries())
    }

    /// Bursts drain's write buffer holds: one tile of FP32 output, plus one burst (a panel's
    /// output need not start on a burst). A register row whose burst would not fit waits.
    pub fn drain_buffer_bursts(&self) -> u32 {
        (self.datapath.output_bytes() as u64 * self.tile_rows() as u64).div_ceil(self.memory.request_bytes as u64)
            as u32
            + 1
    }

    /// The largest K (columns) whose activations fit in the activation buffer.
    pub fn max_cols(&self) -> u32 {
        self.sram.activation_bytes / self.datapath.activation_bytes()
    }

    /// Bits of a row index within a tile.
    pub fn row_index_bits(&self) -> u32 {
        self.tile_rows().trailing_zeros()
    }

    /// Bits selecting a lane.
    pub fn lane_bits(&self) -> u32 {
        self.core.lanes.trailing_zeros()
    }

    /// Bits selecting an accumulator register within a lane.
    pub fn reg_bits(&self) -> u32 {
        self.core.acc_regs_per_lane.trailing_zeros()
    }

    /// Peak DRAM bandwidth in GB/s at the arch clock.
    pub fn memory_gbps(&self) -> f64 {
        self.memory.bytes_per_cycle as f64 * self.clock_mhz as f64 / 1000.0
    }
}

#[cfg(test)]
mod tests {
    use crate::Arch;

    #[test]
    fn balanced_panels_are_as_few_as_the_tile_allows_and_of_equal_height() {
        let edge = Arch::preset("edge").unwrap();
        assert_eq!(edge.tile_rows(), 4096);
        assert_eq!(edge.balanced_panel_rows(5120), 2560);
        assert_eq!(edge.balanced_panel_rows(4096), 4096);
        assert_eq!(edge.balanced_panel_rows(7168), 3584);
        let tiny = Arch::preset("tiny").unwrap();
        assert_eq!(tiny.tile_rows(), 32);
        assert_eq!(tiny.balanced_panel_rows(100), 25);
        assert_eq!(tiny.balanced_panel_rows(1), 1);
    }
}
