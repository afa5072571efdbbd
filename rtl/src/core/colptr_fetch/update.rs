//! `colptr_fetch`'s behaviour in one cycle (the `update` rust-hdl emits as Verilog): the block's
//! contract, ports and state are in `mod.rs`.

use super::*;

impl Logic for ColptrFetch {
    #[hdl_gen]
    fn update(&mut self) {
        // Every register holds unless assigned below.
        self.cur_valid.clock.next = self.clock.val();
        self.cur_valid.reset.next = self.reset.val();
        self.cur_panel.clock.next = self.clock.val();
        self.cur_panel.reset.next = self.reset.val();
        self.cur_k.clock.next = self.clock.val();
        self.cur_k.reset.next = self.reset.val();
        self.cur_x.clock.next = self.clock.val();
        self.cur_x.reset.next = self.reset.val();
        self.cur_entries.clock.next = self.clock.val();
        self.cur_entries.reset.next = self.reset.val();
        self.cur_b0.clock.next = self.clock.val();
        self.cur_b0.reset.next = self.reset.val();
        self.cur_b0.d.next = self.cur_b0.q.val();
        self.cur_b1.clock.next = self.clock.val();
        self.cur_b1.reset.next = self.reset.val();
        self.cur_b1.d.next = self.cur_b1.q.val();
        self.cur_two.clock.next = self.clock.val();
        self.cur_two.reset.next = self.reset.val();
        self.cur_off0.clock.next = self.clock.val();
        self.cur_off0.reset.next = self.reset.val();
        self.cur_off0.d.next = self.cur_off0.q.val();
        self.cur_off1.clock.next = self.clock.val();
        self.cur_off1.reset.next = self.reset.val();
        self.cur_off1.d.next = self.cur_off1.q.val();
        self.cur_iss0.clock.next = self.clock.val();
        self.cur_iss0.reset.next = self.reset.val();
        self.cur_iss1.clock.next = self.clock.val();
        self.cur_iss1.reset.next = self.reset.val();
        self.cur_arr0.clock.next = self.clock.val();
        self.cur_arr0.reset.next = self.reset.val();
        self.cur_arr1.clock.next = self.clock.val();
        self.cur_arr1.reset.next = self.reset.val();
        self.cur_start.clock.next = self.clock.val();
        self.cur_start.reset.next = self.reset.val();
        self.cur_end.clock.next = self.clock.val();
        self.cur_end.reset.next = self.reset.val();
        self.last_valid.clock.next = self.clock.val();
        self.last_valid.reset.next = self.reset.val();
        self.last_valid.d.next = self.last_valid.q.val();
        self.last_addr.clock.next = self.clock.val();
        self.last_addr.reset.next = self.reset.val();
        self.last_addr.d.next = self.last_addr.q.val();
        for w in 0..self.last_data.len() {
            self.last_data[w].clock.next = self.clock.val();
            self.last_data[w].reset.next = self.reset.val();
            self.last_data[w].d.next = self.last_data[w].q.val();
        }
        self.ring.clock.next = self.clock.val();
        self.ring.reset.next = self.reset.val();
        for i in 0..self.q_k.len() {
            self.q_marker[i].clock.next = self.clock.val();
            self.q_marker[i].reset.next = self.reset.val();
            self.q_marker[i].d.next = self.q_marker[i].q.val();
            self.q_panel[i].clock.next = self.clock.val();
            self.q_panel[i].reset.next = self.reset.val();
            self.q_panel[i].d.next = self.q_panel[i].q.val();
            self.q_k[i].clock.next = self.clock.val();
            self.q_k[i].reset.next = self.reset.val();
            self.q_k[i].d.next = self.q_k[i].q.val();
            self.q_x[i].clock.next = self.clock.val();
            self.q_x[i].reset.next = self.reset.val();
            self.q_x[i].d.next = self.q_x[i].q.val();
            self.q_start[i].clock.next = self.clock.val();
            self.q_start[i].reset.next = self.reset.val();
            self.q_start[i].d.next = self.q_start[i].q.val();
            self.q_end[i].clock.next = self.clock.val();
            self.q_end[i].reset.next = self.reset.val();
            self.q_end[i].d.next = self.q_end[i].q.val();
        }

        // The column queue's head, and the pop that comes first in the cycle.
        self.head_valid.next = self.ring.count.val() != self.zero8.val();
        self.head_marker.next = false;
        self.head_panel.next = self.zero16.val();
        self.head_k.next = self.zero32.val();
        self.head_x.next = self.zero16.val();
        self.head_start.next = self.zero32.val();
        self.head_end.next = self.zero32.val();
        for i in 0..self.q_k.len() {
            if self.ring.head.val() == self.idx8[i].val() {
                self.head_marker.next = self.q_marker[i].q.val();
                self.head_panel.next = self.q_panel[i].q.val();
                self.head_k.next = self.q_k[i].q.val();
                self.head_x.next = self.q_x[i].q.val();
                self.head_start.next = self.q_start[i].q.val();
                self.head_end.next = self.q_end[i].q.val();
            }
        }
        self.ring.pop.next = self.out_pop.val() && self.head_valid.val();
        self.after_pop.next = self.ring.count.val();
        if self.ring.pop.val() {
            self.after_pop.next = self.ring.count.val() - self.one8.val();
        }
        self.room.next = self.after_pop.val() < self.depth.val();

        // The head column's bursts and where its pointers lie in them, and the pointers of the
        // kept burst.
        self.addr.next = self.in_colptr.val() + (self.in_k.val() << self.two32.val());
        self.n_b0.next = self.addr.val() & self.burst_high.val();
        self.n_b1.next = (self.addr.val() + self.four32.val()) & self.burst_high.val();
        self.n_off0.next = (self.addr.val() & self.burst_low.val()) >> self.two32.val();
        self.n_off1.next = ((self.addr.val() + self.four32.val()) & self.burst_low.val()) >> self.two32.val();
        self.last_start.next = self.zero32.val();
        self.last_end.next = self.zero32.val();
        for w in 0..self.last_data.len() {
            if self.n_off0.val() == self.word[w].val() {
                self.last_start.next = self.last_data[w].q.val();
            }
            if self.n_off1.val() == self.word[w].val() {
                self.last_end.next = self.last_data[w].q.val();
            }
        }

        // Take the head when holding nothing: a marker passes, a column becomes `cur`.
        self.n_valid.next = self.cur_valid.q.val();
        self.n_panel.next = self.cur_panel.q.val();
        self.n_k.next = self.cur_k.q.val();
        self.n_x.next = self.cur_x.q.val();
        self.n_entries.next = self.cur_entries.q.val();
        self.n_two.next = self.cur_two.q.val();
        self.n_iss0.next = self.cur_iss0.q.val();
        self.n_iss1.next = self.cur_iss1.q.val();
        self.n_arr0.next = self.cur_arr0.q.val();
        self.n_arr1.next = self.cur_arr1.q.val();
        self.n_start.next = self.cur_start.q.val();
        self.n_end.next = self.cur_end.q.val();
        self.in_pop.next = false;
        self.push_marker.next = false;
        if !self.halt.val() && !self.cur_valid.q.val() && self.in_valid.val() {
            if self.in_marker.val() {
                if self.room.val() {
                    self.push_marker.next = true;
                    self.in_pop.next = true;
                }
            } else {
                self.in_pop.next = true;
                self.n_valid.next = true;
                self.n_panel.next = self.in_panel.val();
                self.n_k.next = self.in_k.val();
                self.n_x.next = self.in_x.val();
                self.n_entries.next = self.in_entries.val();
                self.n_two.next = self.n_b0.val() != self.n_b1.val();
                self.n_iss0.next = self.last_valid.q.val() && (self.last_addr.q.val() == self.n_b0.val());
                self.n_iss1.next =
                    !self.n_two.val() || (self.last_valid.q.val() && (self.last_addr.q.val() == self.n_b1.val()));
                self.n_arr0.next = self.n_iss0.val();
                self.n_arr1.next = self.n_iss1.val();
                if self.n_iss0.val() {
                    self.n_start.next = self.last_start.val();
                    if !self.n_two.val() {
                        self.n_end.next = self.last_end.val();
                    }
                }
                if self.n_two.val() && self.n_iss1.val() {
                    self.n_end.next = self.last_end.val();
                }
                self.cur_b0.d.next = self.n_b0.val();
                self.cur_b1.d.next = self.n_b1.val();
                self.cur_off0.d.next = self.n_off0.val();
                self.cur_off1.d.next = self.n_off1.val();
            }
        }

        // Both pointers here and room: check, then queue the column (or drop an empty one).
        self.complete.next =
            !self.halt.val() && self.n_valid.val() && self.n_arr0.val() && self.n_arr1.val() && self.room.val();
        self.error.next = false;
        self.push_column.next = false;
        self.error_start.next = self.n_start.val();
        self.error_end.next = self.n_end.val();
        self.error_panel.next = self.n_panel.val();
        self.error_k.next = self.n_k.val();
        self.held.next = self.n_valid.val();
        if self.complete.val() {
            self.held.next = false;
            if (self.n_start.val() > self.n_end.val()) || (self.n_end.val() > self.n_entries.val()) {
                self.error.next = true;
            } else {
                self.push_column.next = self.n_end.val() > self.n_start.val();
            }
        }
        self.pushed.next = self.push_marker.val() || self.push_column.val();
        for j in 0..self.q_k.len() {
            if self.pushed.val() && (self.ring.tail.val() == self.idx8[j].val()) {
                self.q_marker[j].d.next = self.push_marker.val();
                self.q_panel[j].d.next = self.in_panel.val();
                if self.push_column.val() {
                    self.q_panel[j].d.next = self.n_panel.val();
                }
                self.q_k[j].d.next = self.n_k.val();
                self.q_x[j].d.next = self.n_x.val();
                self.q_start[j].d.next = self.n_start.val();
                self.q_end[j].d.next = self.n_end.val();
            }
        }
        self.ring.push.next = self.zero8.val();
        if self.pushed.val() {
            self.ring.push.next = self.one8.val();
        }
        self.idle.next = !self.held.val();
        self.empty.next = !self.pushed.val() && (self.after_pop.val() == self.zero8.val());

        // Issue phase: the first missing burst.
        self.req_valid.next = !self.halt.val() && self.held.val() && !(self.n_iss0.val() && self.n_iss1.val());
        self.req_addr.next = self.cur_b1.q.val();
        if !self.n_iss0.val() {
            self.req_addr.next = self.cur_b0.q.val();
        }
        if !self.cur_valid.q.val() {
            // Taken this cycle: the bursts are not registered yet.
            self.req_addr.next = self.n_b1.val();
            if !self.n_iss0.val() {
                self.req_addr.next = self.n_b0.val();
            }
        }
        self.iss0_after.next = self.n_iss0.val();
        self.iss1_after.next = self.n_iss1.val();
        if self.req_valid.val() && self.req_ready.val() {
            if !self.n_iss0.val() {
                self.iss0_after.next = true;
            } else {
                self.iss1_after.next = true;
            }
            self.last_valid.d.next = true;
            self.last_addr.d.next = self.req_addr.val();
        }

        // A response fills the first missing burst from the next cycle (and is kept as `last`).
        self.resp_start.next = self.zero32.val();
        self.resp_end.next = self.zero32.val();
        for w in 0..self.resp_data.len() {
            if self.n_off0.val() == self.word[w].val() {
                self.resp_start.next = self.resp_data[w].val();
            }
            if self.n_off1.val() == self.word[w].val() {
                self.resp_end.next = self.resp_data[w].val();
            }
        }
        if self.cur_valid.q.val() {
            self.resp_start.next = self.zero32.val();
            self.resp_end.next = self.zero32.val();
            for w in 0..self.resp_data.len() {
                if self.cur_off0.q.val() == self.word[w].val() {
                    self.resp_start.next = self.resp_data[w].val();
                }
                if self.cur_off1.q.val() == self.word[w].val() {
                    self.resp_end.next = self.resp_data[w].val();
                }
            }
        }
        self.arr0_after.next = self.n_arr0.val();
        self.arr1_after.next = self.n_arr1.val();
        self.start_after.next = self.n_start.val();
        self.end_after.next = self.n_end.val();
        if self.resp_valid.val() {
            for w in 0..self.last_data.len() {
                self.last_data[w].d.next = self.resp_data[w].val();
            }
            if !self.n_arr0.val() {
                self.arr0_after.next = true;
                self.start_after.next = self.resp_start.val();
                if !self.n_two.val() {
                    self.end_after.next = self.resp_end.val();
                }
            } else {
                self.arr1_after.next = true;
                self.end_after.next = self.resp_end.val();
            }
        }

        self.cur_valid.d.next = self.held.val();
        self.cur_panel.d.next = self.n_panel.val();
        self.cur_k.d.next = self.n_k.val();
        self.cur_x.d.next = self.n_x.val();
        self.cur_entries.d.next = self.n_entries.val();
        self.cur_two.d.next = self.n_two.val();
        self.cur_iss0.d.next = self.iss0_after.val();
        self.cur_iss1.d.next = self.iss1_after.val();
        self.cur_arr0.d.next = self.arr0_after.val();
        self.cur_arr1.d.next = self.arr1_after.val();
        self.cur_start.d.next = self.start_after.val();
        self.cur_end.d.next = self.end_after.val();
    }
}
