//! `chunk_fetch`'s behaviour in one cycle (the `update` rust-hdl emits as Verilog): the block's
//! contract, ports and state are in `mod.rs`.

use super::*;

impl Logic for ChunkFetch {
    #[hdl_gen]
    fn update(&mut self) {
        // Every register holds unless assigned below.
        self.col_valid.clock.next = self.clock.val();
        self.col_valid.reset.next = self.reset.val();
        self.col_panel.clock.next = self.clock.val();
        self.col_panel.reset.next = self.reset.val();
        self.col_panel.d.next = self.col_panel.q.val();
        self.col_k.clock.next = self.clock.val();
        self.col_k.reset.next = self.reset.val();
        self.col_k.d.next = self.col_k.q.val();
        self.col_x.clock.next = self.clock.val();
        self.col_x.reset.next = self.reset.val();
        self.col_x.d.next = self.col_x.q.val();
        self.col_start.clock.next = self.clock.val();
        self.col_start.reset.next = self.reset.val();
        self.col_start.d.next = self.col_start.q.val();
        self.col_end.clock.next = self.clock.val();
        self.col_end.reset.next = self.reset.val();
        self.col_end.d.next = self.col_end.q.val();
        self.col_values.clock.next = self.clock.val();
        self.col_values.reset.next = self.reset.val();
        self.col_values.d.next = self.col_values.q.val();
        self.col_runs.clock.next = self.clock.val();
        self.col_runs.reset.next = self.reset.val();
        self.col_runs.d.next = self.col_runs.q.val();
        self.next_chunk.clock.next = self.clock.val();
        self.next_chunk.reset.next = self.reset.val();
        self.iss_valid.clock.next = self.clock.val();
        self.iss_valid.reset.next = self.reset.val();
        self.iss_need_v.clock.next = self.clock.val();
        self.iss_need_v.reset.next = self.reset.val();
        self.iss_need_r.clock.next = self.clock.val();
        self.iss_need_r.reset.next = self.reset.val();
        self.iss_vb.clock.next = self.clock.val();
        self.iss_vb.reset.next = self.reset.val();
        self.iss_rb.clock.next = self.clock.val();
        self.iss_rb.reset.next = self.reset.val();
        for i in 0..self.iss_meta.len() {
            self.iss_meta[i].clock.next = self.clock.val();
            self.iss_meta[i].reset.next = self.reset.val();
        }
        self.lastv_valid.clock.next = self.clock.val();
        self.lastv_valid.reset.next = self.reset.val();
        self.lastv_addr.clock.next = self.clock.val();
        self.lastv_addr.reset.next = self.reset.val();
        self.lastv_addr.d.next = self.lastv_addr.q.val();
        self.lastv_seq.clock.next = self.clock.val();
        self.lastv_seq.reset.next = self.reset.val();
        self.lastv_seq.d.next = self.lastv_seq.q.val();
        self.lastr_valid.clock.next = self.clock.val();
        self.lastr_valid.reset.next = self.reset.val();
        self.lastr_addr.clock.next = self.clock.val();
        self.lastr_addr.reset.next = self.reset.val();
        self.lastr_addr.d.next = self.lastr_addr.q.val();
        self.lastr_seq.clock.next = self.clock.val();
        self.lastr_seq.reset.next = self.reset.val();
        self.lastr_seq.d.next = self.lastr_seq.q.val();
        self.issued_v.clock.next = self.clock.val();
        self.issued_v.reset.next = self.reset.val();
        self.issued_v.d.next = self.issued_v.q.val();
        self.issued_r.clock.next = self.clock.val();
        self.issued_r.reset.next = self.reset.val();
        self.issued_r.d.next = self.issued_r.q.val();
        self.arrived_v.clock.next = self.clock.val();
        self.arrived_v.reset.next = self.reset.val();
        self.arrived_v.d.next = self.arrived_v.q.val();
        self.arrived_r.clock.next = self.clock.val();
        self.arrived_r.reset.next = self.reset.val();
        self.arrived_r.d.next = self.arrived_r.q.val();
        self.ring.clock.next = self.clock.val();
        self.ring.reset.next = self.reset.val();
        self.desc8.clock.next = self.clock.val();
        self.desc16.clock.next = self.clock.val();
        self.desc32.clock.next = self.clock.val();
        self.values.clock.next = self.clock.val();
        self.runs.clock.next = self.clock.val();

        // The buffer's head: its descriptor, and its data from the stores by burst number.
        self.desc8.rd_row.next = self.ring.head.val();
        self.desc8.rd_offset.next = self.zero32.val();
        self.desc16.rd_row.next = self.ring.head.val();
        self.desc16.rd_offset.next = self.zero32.val();
        self.desc32.rd_row.next = self.ring.head.val();
        self.desc32.rd_offset.next = self.zero32.val();
        self.values.rd_row.next = self.desc32.rd[1].val() & self.slot_mask.val();
        self.values.rd_offset.next = self.desc32.rd[3].val();
        self.runs.rd_row.next = self.desc32.rd[2].val() & self.slot_mask.val();
        self.runs.rd_offset.next = self.desc32.rd[4].val();
        self.dv.next = self.arrived_v.q.val() - self.desc32.rd[1].val();
        self.dr.next = self.arrived_r.q.val() - self.desc32.rd[2].val();
        self.head_marker.next = (self.desc8.rd[0].val() & self.one8.val()) != self.zero8.val();
        self.head_first.next = (self.desc8.rd[0].val() & self.two8.val()) != self.zero8.val();
        self.head_valid.next = (self.ring.count.val() != self.zero32.val())
            && (self.head_marker.val()
                || ((self.dv.val() != self.zero32.val())
                    && (self.dv.val() < self.sign32.val())
                    && (self.dense.val()
                        || ((self.dr.val() != self.zero32.val()) && (self.dr.val() < self.sign32.val())))));
        self.head_panel.next = self.desc16.rd[0].val();
        self.head_x.next = self.desc16.rd[1].val();
        self.head_k.next = self.desc32.rd[0].val();
        self.head_lo.next = self.desc8.rd[1].val();
        self.head_hi.next = self.desc8.rd[2].val();
        for e in 0..self.head_value.len() {
            self.head_value[e].next = self.values.rd[e].val();
            self.head_run[e].next = self.runs.rd[e].val();
            if self.dense.val() {
                self.head_run[e].next = self.zero16.val();
            }
        }

        // The decoder's pop comes first in the cycle.
        self.ring.pop.next = self.pop.val() && self.head_valid.val();
        self.after_pop.next = self.ring.count.val();
        if self.ring.pop.val() {
            self.after_pop.next = self.ring.count.val() - self.one32.val();
        }

        // The step: take a column or pass a marker, then cut one slice.
        self.widen_panel.narrow.next = self.in_panel.val();
        self.widen_x.narrow.next = self.in_x.val();
        self.n_col_valid.next = self.col_valid.q.val();
        self.n_next.next = self.next_chunk.q.val();
        self.n_lastv_valid.next = self.lastv_valid.q.val();
        self.n_lastr_valid.next = self.lastr_valid.q.val();
        self.n_iss_valid.next = self.iss_valid.q.val();
        for i in 0..self.s_meta.len() {
            self.s_meta[i].next = self.iss_meta[i].q.val();
        }
        self.s_vb.next = self.iss_vb.q.val();
        self.s_rb.next = self.iss_rb.q.val();
        self.s_need_v.next = self.iss_need_v.q.val();
        self.s_need_r.next = self.iss_need_r.q.val();
        self.in_pop.next = false;
        self.push.next = false;
        self.jc.next = self.n_next.val() << self.log_chunk.val();
        self.lo_abs.next = self.zero32.val();
        self.hi_abs.next = self.zero32.val();
        self.vaddr.next = self.zero32.val();
        self.raddr.next = self.zero32.val();
        if !self.halt.val() && !self.iss_valid.q.val() && (self.after_pop.val() < self.capacity.val()) {
            if !self.col_valid.q.val() && self.in_valid.val() {
                self.in_pop.next = true;
                if self.in_marker.val() {
                    self.push.next = true;
                    self.s_meta[0].next = self.one32.val();
                    self.s_meta[1].next = self.widen_panel.wide.val();
                    self.n_lastv_valid.next = false;
                    self.n_lastr_valid.next = false;
                } else {
                    self.n_col_valid.next = true;
                    self.col_panel.d.next = self.widen_panel.wide.val();
                    self.col_k.d.next = self.in_k.val();
                    self.col_x.d.next = self.widen_x.wide.val();
                    self.col_start.d.next = self.in_start.val();
                    self.col_end.d.next = self.in_end.val();
                    self.col_values.d.next = self.in_values.val();
                    self.col_runs.d.next = self.in_runs.val();
                    self.n_next.next = self.in_start.val() >> self.log_chunk.val();
                    // The slice below reads the column from the input this cycle.
                    self.s_meta[1].next = self.widen_panel.wide.val();
                    self.s_meta[2].next = self.in_k.val();
                    self.s_meta[3].next = self.widen_x.wide.val();
                    self.lo_abs.next = self.in_start.val();
                    self.hi_abs.next = self.in_end.val();
                    self.vaddr.next = self.in_values.val();
                    self.raddr.next = self.in_runs.val();
                }
            }
            if self.col_valid.q.val() {
                self.s_meta[1].next = self.col_panel.q.val();
                self.s_meta[2].next = self.col_k.q.val();
                self.s_meta[3].next = self.col_x.q.val();
                self.lo_abs.next = self.col_start.q.val();
                self.hi_abs.next = self.col_end.q.val();
                self.vaddr.next = self.col_values.q.val();
                self.raddr.next = self.col_runs.q.val();
            }
            if self.n_col_valid.val() {
                // Chunk j = n_next: entries jc .. jc + C of the column's lo_abs .. hi_abs.
                self.jc.next = self.n_next.val() << self.log_chunk.val();
                self.s_meta[0].next = self.zero32.val();
                if self.lo_abs.val() <= self.jc.val() {
                    if self.lo_abs.val() == self.jc.val() {
                        self.s_meta[0].next = self.two32.val();
                    }
                    self.lo_abs.next = self.jc.val();
                } else {
                    self.s_meta[0].next = self.two32.val();
                }
                if (self.jc.val() + self.chunk_size.val()) >= self.hi_abs.val() {
                    self.n_col_valid.next = false;
                } else {
                    self.hi_abs.next = self.jc.val() + self.chunk_size.val();
                }
                self.s_meta[4].next = self.lo_abs.val() - self.jc.val();
                self.s_meta[5].next = self.hi_abs.val() - self.jc.val();
                self.n_next.next = self.n_next.val() + self.one32.val();
                self.vaddr.next = self.vaddr.val() + (self.jc.val() << self.one32.val());
                self.raddr.next = self.raddr.val() + (self.jc.val() >> self.one32.val());
                self.s_vb.next = self.vaddr.val() & self.burst_high.val();
                self.s_rb.next = self.raddr.val() & self.burst_high.val();
                self.s_meta[8].next = (self.vaddr.val() & self.burst_low.val()) >> self.one32.val();
                self.s_meta[9].next = (self.raddr.val() & self.burst_low.val()) << self.one32.val();
                self.s_meta[6].next = self.lastv_seq.q.val();
                self.s_meta[7].next = self.lastr_seq.q.val();
                self.s_need_v.next = !(self.lastv_valid.q.val() && (self.lastv_addr.q.val() == self.s_vb.val()));
                self.s_need_r.next =
                    !self.dense.val() && !(self.lastr_valid.q.val() && (self.lastr_addr.q.val() == self.s_rb.val()));
                if self.s_need_v.val() || self.s_need_r.val() {
                    self.n_iss_valid.next = true;
                } else {
                    self.push.next = true;
                }
            }
        }

        // Issue phase: the cut slice's missing bursts, values first.
        self.req_valid.next = !self.halt_issue.val() && self.n_iss_valid.val();
        self.req_runs.next = !self.s_need_v.val();
        self.req_addr.next = self.s_rb.val();
        if self.s_need_v.val() {
            self.req_addr.next = self.s_vb.val();
        }
        self.lastv_valid.d.next = self.n_lastv_valid.val();
        self.lastr_valid.d.next = self.n_lastr_valid.val();
        for i in 0..self.s_meta.len() {
            self.meta_after[i].next = self.s_meta[i].val();
        }
        self.need_v_after.next = self.s_need_v.val();
        self.need_r_after.next = self.s_need_r.val();
        self.iss_valid_after.next = self.n_iss_valid.val();
        self.push_after.next = self.push.val();
        if self.req_valid.val() && self.req_ready.val() {
            if self.s_need_v.val() {
                self.meta_after[6].next = self.issued_v.q.val();
                self.issued_v.d.next = self.issued_v.q.val() + self.one32.val();
                self.lastv_valid.d.next = true;
                self.lastv_addr.d.next = self.s_vb.val();
                self.lastv_seq.d.next = self.issued_v.q.val();
                self.need_v_after.next = false;
            } else {
                self.meta_after[7].next = self.issued_r.q.val();
                self.issued_r.d.next = self.issued_r.q.val() + self.one32.val();
                self.lastr_valid.d.next = true;
                self.lastr_addr.d.next = self.s_rb.val();
                self.lastr_seq.d.next = self.issued_r.q.val();
                self.need_r_after.next = false;
            }
            if !self.need_v_after.val() && !self.need_r_after.val() {
                self.push_after.next = true;
                self.iss_valid_after.next = false;
            }
        }

        // The slice (or marker) enters the buffer at its tail.
        self.desc8.wr_enable.next = self.push_after.val();
        self.desc8.wr_row.next = self.ring.tail.val();
        self.desc8.wr_offset.next = self.zero32.val();
        self.desc8.wr_data[0].next = self.meta_after[0].val()
            + (self.meta_after[4].val() << self.eight32.val())
            + (self.meta_after[5].val() << self.sixteen32.val());
        self.desc16.wr_enable.next = self.push_after.val();
        self.desc16.wr_row.next = self.ring.tail.val();
        self.desc16.wr_offset.next = self.zero32.val();
        self.desc16.wr_data[0].next = self.meta_after[1].val() + (self.meta_after[3].val() << self.sixteen32.val());
        self.desc32.wr_enable.next = self.push_after.val();
        self.desc32.wr_row.next = self.ring.tail.val();
        self.desc32.wr_offset.next = self.zero32.val();
        self.desc32.wr_data[0].next = self.meta_after[2].val();
        self.desc32.wr_data[1].next = self.meta_after[6].val();
        self.desc32.wr_data[2].next = self.meta_after[7].val();
        self.desc32.wr_data[3].next = self.meta_after[8].val();
        self.desc32.wr_data[4].next = self.meta_after[9].val();
        for i in 0..self.s_meta.len() {
            self.iss_meta[i].d.next = self.meta_after[i].val();
        }
        self.ring.push.next = self.zero32.val();
        if self.push_after.val() {
            self.ring.push.next = self.one32.val();
        }
        self.col_valid.d.next = self.n_col_valid.val();
        self.next_chunk.d.next = self.n_next.val();
        self.iss_valid.d.next = self.iss_valid_after.val();
        self.iss_need_v.d.next = self.need_v_after.val();
        self.iss_need_r.d.next = self.need_r_after.val();
        self.iss_vb.d.next = self.s_vb.val();
        self.iss_rb.d.next = self.s_rb.val();
        self.idle.next = !self.n_col_valid.val() && !self.iss_valid_after.val();
        self.empty.next = !self.push_after.val() && (self.after_pop.val() == self.zero32.val());

        // Responses are written to their store by burst number.
        self.values.wr_enable.next = self.resp_valid.val() && !self.resp_runs.val();
        self.values.wr_row.next = self.arrived_v.q.val() & self.slot_mask.val();
        self.values.wr_offset.next = self.zero32.val();
        self.runs.wr_enable.next = self.resp_valid.val() && self.resp_runs.val();
        self.runs.wr_row.next = self.arrived_r.q.val() & self.slot_mask.val();
        self.runs.wr_offset.next = self.zero32.val();
        for w in 0..self.resp_data.len() {
            self.values.wr_data[w].next = self.resp_data[w].val();
        }
        for w in 0..self.resp_data.len() {
            self.runs.wr_data[w].next = self.resp_data[w].val();
        }
        if self.resp_valid.val() {
            if self.resp_runs.val() {
                self.arrived_r.d.next = self.arrived_r.q.val() + self.one32.val();
            } else {
                self.arrived_v.d.next = self.arrived_v.q.val() + self.one32.val();
            }
        }
    }
}
