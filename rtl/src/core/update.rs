//! `core`'s behaviour in one cycle (the `update` rust-hdl emits as Verilog): the block's contract,
//! ports and state are in `mod.rs`.

use super::*;

impl Logic for Core {
    #[hdl_gen]
    fn update(&mut self) {
        // The job interface: start, the refusal check, the run register.
        self.unsupported.next = (self.panels.val() > self.max_panels.val())
            || (self.panels.val() == self.zero16.val())
            || (self.panel_rows.val() > self.tile_rows.val())
            || ((self.panel_rows.val() & self.burst_rows_mask.val()) != self.zero32.val())
            || (self.cols.val() > self.max_cols.val());
        self.new_job.next = self.start.val() && !self.run.q.val();
        self.block_reset.next = self.reset.val() || !self.run.q.val();
        self.run.clock.next = self.clock.val();
        self.run.reset.next = self.reset.val();
        self.run.d.next = self.run.q.val();
        if self.new_job.val() && !self.unsupported.val() {
            self.run.d.next = true;
        }
        self.running.next = self.run.q.val();

        // The panel table, one copy per reader.
        self.widen_table_index.narrow.next = self.table_index.val();
        self.table_colptr_mem.clock.next = self.clock.val();
        self.table_colptr_mem.wr_enable.next = self.table_write.val();
        self.table_colptr_mem.wr_row.next = self.widen_table_index.wide.val();
        self.table_colptr_mem.wr_offset.next = self.zero32.val();
        self.table_colptr_mem.wr_data[0].next = self.table_colptr.val();
        self.table_colptr_mem.wr_data[1].next = self.table_entries.val();
        self.table_chunk_mem.clock.next = self.clock.val();
        self.table_chunk_mem.wr_enable.next = self.table_write.val();
        self.table_chunk_mem.wr_row.next = self.widen_table_index.wide.val();
        self.table_chunk_mem.wr_offset.next = self.zero32.val();
        self.table_chunk_mem.wr_data[0].next = self.table_values.val();
        self.table_chunk_mem.wr_data[1].next = self.table_runs.val();
        self.table_rows_mem.clock.next = self.clock.val();
        self.table_rows_mem.wr_enable.next = self.table_write.val();
        self.table_rows_mem.wr_row.next = self.widen_table_index.wide.val();
        self.table_rows_mem.wr_offset.next = self.zero32.val();
        self.table_rows_mem.wr_data[0].next = self.table_rows.val();

        // drain, first in the cycle.
        self.drain.clock.next = self.clock.val();
        self.drain.reset.next = self.block_reset.val();
        self.drain.panel_rows.next = self.panel_rows.val();
        self.drain.m.next = self.m.val();
        self.drain.y_base.next = self.y_base.val();
        for l in 0..self.backend.read_value.len() {
            self.drain.read_value[l].next = self.backend.read_value[l].val();
            self.lane_ports_used[l].next = self.backend.ports_used[l].val();
        }
        self.drain.start.next = self.backend.start_drain.val();
        self.drain.req_ready.next = self.drain_ready.val();
        self.drain_panel.next = self.backend.drain_panel.val();

        // route and the lanes.
        self.backend.clock.next = self.clock.val();
        self.backend.reset.next = self.block_reset.val();
        self.backend.drain_idle.next = self.drain.idle.val();
        self.backend.issue_enable.next = !self.drain.reading.val();
        self.backend.read_enable.next = self.drain.read_enable.val();
        self.backend.read_index.next = self.drain.read_index.val();
        self.backend.in_valid.next = self.decode.out_valid.val();
        self.backend.in_marker.next = self.decode.out_marker.val();
        self.backend.in_panel.next = self.decode.out_panel.val();
        for e in 0..self.decode.out_row.len() {
            self.backend.in_entry_valid[e].next = self.decode.out_entry_valid[e].val();
            self.backend.in_row[e].next = self.decode.out_row[e].val();
            self.backend.in_product[e].next = self.decode.out_product[e].val();
        }

        // The multiplier and the decoder, from the fetch buffer's head.
        self.decode.clock.next = self.clock.val();
        self.decode.reset.next = self.block_reset.val();
        self.decode.out_ready.next = self.backend.in_ready.val();
        self.decode.halt.next = self.fault.q.val();
        self.decode.in_valid.next = self.chunk.head_valid.val();
        self.decode.in_marker.next = self.chunk.head_marker.val();
        self.decode.in_panel.next = self.chunk.head_panel.val();
        self.decode.in_k.next = self.chunk.head_k.val();
        self.decode.in_first.next = self.chunk.head_first.val();
        self.decode.in_lo.next = self.chunk.head_lo.val();
        self.decode.in_hi.next = self.chunk.head_hi.val();
        self.decode.in_x.next = self.chunk.head_x.val();
        self.widen_slice_panel.narrow.next = self.chunk.head_panel.val();
        self.table_rows_mem.rd_row.next = self.widen_slice_panel.wide.val();
        self.table_rows_mem.rd_offset.next = self.zero32.val();
        self.decode.in_rows.next = self.table_rows_mem.rd[0].val();
        for e in 0..self.chunk.head_value.len() {
            self.decode.in_value[e].next = self.chunk.head_value[e].val();
            self.decode.in_run[e].next = self.chunk.head_run[e].val();
        }

        // A fault this cycle (a run past its panel) stops the front end before it steps; bad
        // pointers, found by colptr_fetch's step, stop the issue phase.
        self.halt_step.next = self.fault.q.val() || self.decode.overrun.val();
        self.halt_issue.next = self.halt_step.val() || self.colptr.error.val();

        // The front end: chunk_fetch, colptr_fetch, the activation path.
        self.chunk.clock.next = self.clock.val();
        self.chunk.reset.next = self.block_reset.val();
        self.chunk.pop.next = self.decode.in_ready.val();
        self.chunk.halt.next = self.halt_step.val();
        self.chunk.halt_issue.next = self.halt_issue.val();
        self.chunk.in_valid.next = self.colptr.head_valid.val();
        self.chunk.in_marker.next = self.colptr.head_marker.val();
        self.chunk.in_panel.next = self.colptr.head_panel.val();
        self.chunk.in_k.next = self.colptr.head_k.val();
        self.chunk.in_x.next = self.colptr.head_x.val();
        self.chunk.in_start.next = self.colptr.head_start.val();
        self.chunk.in_end.next = self.colptr.head_end.val();
        self.widen_col_panel.narrow.next = self.colptr.head_panel.val();
        self.table_chunk_mem.rd_row.next = self.widen_col_panel.wide.val();
        self.table_chunk_mem.rd_offset.next = self.zero32.val();
        self.chunk.in_values.next = self.table_chunk_mem.rd[0].val();
        self.chunk.in_runs.next = self.table_chunk_mem.rd[1].val();
        self.chunk.req_ready.next = self.chunk_ready.val();
        self.chunk.resp_valid.next = self.chunk_resp.val();
        self.chunk.resp_runs.next = self.chunk_resp_runs.val();
        self.chunk.dense.next = self.dense.val();

        self.colptr.clock.next = self.clock.val();
        self.colptr.reset.next = self.block_reset.val();
        self.colptr.out_pop.next = self.chunk.in_pop.val();
        self.colptr.halt.next = self.halt_step.val();
        self.colptr.in_valid.next = self.act.head_valid.val();
        self.colptr.in_marker.next = self.act.head_marker.val();
        self.colptr.in_panel.next = self.act.head_panel.val();
        self.colptr.in_k.next = self.act.head_k.val();
        self.colptr.in_x.next = self.act.head_x.val();
        self.widen_act_panel.narrow.next = self.act.head_panel.val();
        self.table_colptr_mem.rd_row.next = self.widen_act_panel.wide.val();
        self.table_colptr_mem.rd_offset.next = self.zero32.val();
        self.colptr.in_colptr.next = self.table_colptr_mem.rd[0].val();
        self.colptr.in_entries.next = self.table_colptr_mem.rd[1].val();
        self.colptr.req_ready.next = self.colptr_ready.val();
        self.colptr.resp_valid.next = self.colptr_resp.val();

        self.act.clock.next = self.clock.val();
        self.act.reset.next = self.block_reset.val();
        self.act.x_base.next = self.x_base.val();
        self.act.cols.next = self.cols.val();
        self.act.panels.next = self.panels.val();
        self.act.threshold.next = self.threshold.val();
        self.act.pop.next = self.colptr.in_pop.val();
        self.act.req_ready.next = self.act_ready.val();
        self.act.resp_valid.next = self.act_resp.val();
        self.act_loaded.next = self.act.loaded.val();
        for w in 0..self.mem_resp_data.len() {
            self.act.resp_data[w].next = self.mem_resp_data[w].val();
            self.colptr.resp_data[w].next = self.mem_resp_data[w].val();
            self.chunk.resp_data[w].next = self.mem_resp_data[w].val();
        }

        // The issue phase: every requester's request to the system's port, which grants one.
        self.drain_req_valid.next = self.drain.req_valid.val();
        self.drain_req_addr.next = self.drain.req_addr.val();
        for w in 0..self.mem_resp_data.len() {
            self.drain_req_data[w].next = self.drain.req_data[w].val();
        }
        self.act_req_valid.next = self.act.req_valid.val() && !self.halt_issue.val();
        self.act_req_addr.next = self.act.req_addr.val();
        self.colptr_req_valid.next = self.colptr.req_valid.val();
        self.colptr_req_addr.next = self.colptr.req_addr.val();
        self.chunk_req_valid.next = self.chunk.req_valid.val();
        self.chunk_req_addr.next = self.chunk.req_addr.val();
        self.chunk_req_runs.next = self.chunk.req_runs.val();
        self.accepted.next =
            self.drain_ready.val() || self.act_ready.val() || self.colptr_ready.val() || self.chunk_ready.val();

        // Faults: the first one is kept.
        self.fault.clock.next = self.clock.val();
        self.fault.reset.next = self.reset.val();
        self.fault.d.next = self.fault.q.val();
        self.code.clock.next = self.clock.val();
        self.code.reset.next = self.reset.val();
        self.code.d.next = self.code.q.val();
        self.fault_panel.clock.next = self.clock.val();
        self.fault_panel.reset.next = self.reset.val();
        self.fault_panel.d.next = self.fault_panel.q.val();
        self.fault_col.clock.next = self.clock.val();
        self.fault_col.reset.next = self.reset.val();
        self.fault_col.d.next = self.fault_col.q.val();
        self.fault_a.clock.next = self.clock.val();
        self.fault_a.reset.next = self.reset.val();
        self.fault_a.d.next = self.fault_a.q.val();
        self.fault_b.clock.next = self.clock.val();
        self.fault_b.reset.next = self.reset.val();
        self.fault_b.d.next = self.fault_b.q.val();
        self.saw_invalid.clock.next = self.clock.val();
        self.saw_invalid.reset.next = self.reset.val();
        self.saw_invalid.d.next = self.saw_invalid.q.val();
        if self.run.q.val() && (self.decode.invalid.val() || self.backend.invalid.val()) {
            self.saw_invalid.d.next = true;
        }
        if self.run.q.val() && !self.fault.q.val() {
            if self.decode.overrun.val() {
                self.fault.d.next = true;
                self.code.d.next = self.code_overrun.val();
                self.fault_panel.d.next = self.decode.overrun_panel.val();
                self.fault_col.d.next = self.decode.overrun_k.val();
                self.fault_a.d.next = self.decode.overrun_row.val();
                self.fault_b.d.next = self.zero32.val();
            } else if self.colptr.error.val() {
                self.fault.d.next = true;
                self.code.d.next = self.code_pointer.val();
                self.fault_panel.d.next = self.colptr.error_panel.val();
                self.fault_col.d.next = self.colptr.error_k.val();
                self.fault_a.d.next = self.colptr.error_start.val();
                self.fault_b.d.next = self.colptr.error_end.val();
            }
        }
        if self.new_job.val() {
            self.fault.d.next = self.unsupported.val();
            self.code.d.next = self.zero8.val();
            if self.unsupported.val() {
                self.code.d.next = self.code_unsupported.val();
            }
            self.fault_panel.d.next = self.zero16.val();
            self.fault_col.d.next = self.zero32.val();
            self.fault_a.d.next = self.zero32.val();
            self.fault_b.d.next = self.zero32.val();
            self.saw_invalid.d.next = false;
        }
        self.error.next = self.fault.q.val();
        self.error_code.next = self.code.q.val();
        self.error_panel.next = self.fault_panel.q.val();
        self.error_col.next = self.fault_col.q.val();
        self.error_a.next = self.fault_a.q.val();
        self.error_b.next = self.fault_b.q.val();
        self.invalid.next = self.saw_invalid.q.val();

        // Finished? (model::core's test, on this cycle's outcome.)
        self.drained.clock.next = self.clock.val();
        self.drained.reset.next = self.block_reset.val();
        self.drained_now.next = self.drained.q.val();
        if self.drain.done_panel.val() {
            self.drained_now.next = self.drained.q.val() + self.one16.val();
        }
        self.drained.d.next = self.drained_now.val();
        self.upstream_idle.next = self.act.done.val()
            && !self.act.head_valid.val()
            && self.colptr.idle.val()
            && self.colptr.empty.val()
            && self.chunk.idle.val()
            && self.chunk.empty.val();
        self.pipeline_empty.next = self.decode.empty.val()
            && self.backend.in_ready.val()
            && self.drain.idle.val()
            && !self.drain.pending.val();
        self.quiet.next = (self.outstanding.val() == self.zero32.val()) && !self.accepted.val();
        self.finished.next =
            self.upstream_idle.val() && self.pipeline_empty.val() && (self.drained_now.val() == self.panels.val());
        if self.fault.q.val() || self.decode.overrun.val() || self.colptr.error.val() {
            self.finished.next = self.quiet.val() && !self.drain.pending.val();
        }
        self.done.next = (self.run.q.val() && self.finished.val()) || (self.new_job.val() && self.unsupported.val());
        if self.run.q.val() && self.finished.val() {
            self.run.d.next = false;
        }
    }
}
