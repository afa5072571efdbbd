//! `memory`: the system's side of the one DRAM every unit shares (`model::memory`): the port that
//! arbitrates the units' requesters and routes the responses back in order.

pub mod mem_port;
