//! Runs one core job (spMspV or gemv) on the Verilated core (`rtl::core::Core`) against a memory with the cycle
//! model's timing (`model::memory::Memory`): the RTL engine of the three-way agreement.
//!
//! The memory image is laid out by `lacuna_spec::job::JobLayout`, as the model's addresses are.
//! Each cycle the core's request is evaluated first (its valid/address/data do not depend on the
//! memory's answer), offered to the timing model, and the cycle is then run with `mem_ready` set
//! accordingly; a request's response is presented in the cycle before it completes. The job's
//! cycle count is the model's: the later of the cycle after `done` and the last completion.

use crate::model::{PortId, Verilated};
use crate::RtlError;
use lacuna_model::memory::{MemClient, Memory};
use lacuna_model::Job;
use lacuna_spec::{Arch, FaultCode};
use std::collections::VecDeque;

/// One memory request: the cycle it was accepted, the client (`MemClient::id`: 0 drain,
/// 1 act_load, 2 colptr_fetch, 3 chunk values, 4 chunk runs) and the address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Request {
    /// Cycle accepted.
    pub cycle: u64,
    /// Client id.
    pub client: u64,
    /// Address.
    pub addr: u64,
}

/// A fault the core reported (its `error_*` outputs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct CoreFault {
    /// The code on the RTL's `error_code`.
    pub code: FaultCode,
    /// Panel.
    pub panel: u64,
    /// Column.
    pub col: u64,
    /// Row (code 1) or colptr\[k\] (code 2).
    pub a: u64,
    /// colptr\[k+1\] (code 2).
    pub b: u64,
    /// The cycle the fault was raised.
    pub cycle: u64,
}

/// The outcome of one job on the RTL.
#[derive(Clone, Debug)]
pub struct CoreRun {
    /// y as the core wrote it to memory.
    pub y: Vec<f32>,
    /// Cycles, counted as the model counts them.
    pub cycles: u64,
    /// The cycle `done` was high.
    pub done_cycle: u64,
    /// The fault, if any.
    pub fault: Option<CoreFault>,
    /// An Inf or NaN was seen.
    pub invalid: bool,
    /// Every memory request accepted, in order.
    pub requests: Vec<Request>,
}

/// Why a job could not be run on the RTL.
#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    /// The Verilated core is missing or lacks a port.
    #[error(transparent)]
    Rtl(#[from] RtlError),
    /// `done` never came.
    #[error("the RTL core did not finish within {0} cycles")]
    Timeout(u64),
    /// The job interface refused the job (code 3).
    #[error(
        "the RTL core refused the job (no panel or more than core.max_panels, panels not filling whole bursts of y, or x too large)"
    )]
    Refused,
    /// `error_code` carried a value that is no [`FaultCode`].
    #[error("the RTL core reported fault code {0}, which the spec does not define")]
    UnknownFaultCode(u64),
}

/// The core's ports, looked up once.
struct Ports {
    reset: PortId,
    table_write: PortId,
    table_index: PortId,
    start: PortId,
    mem_ready: PortId,
    mem_resp_valid: PortId,
    mem_resp_data: Vec<PortId>,
    mem_req_valid: PortId,
    mem_req_addr: PortId,
    mem_req_write: PortId,
    mem_req_data: Vec<PortId>,
    mem_req_client: PortId,
    done: PortId,
    error: [PortId; 6],
    invalid: PortId,
}

/// The memory image of `job` for `arch` (x, every panel's arrays; y zeroed).
pub fn memory_image(arch: &Arch, job: &Job) -> Vec<u8> {
    let layout = job.layout(arch);
    let mut image = vec![0u8; (layout.bytes + arch.memory.request_bytes as u64) as usize];
    let mut put = |at: u64, bytes: &[u8]| image[at as usize..at as usize + bytes.len()].copy_from_slice(bytes);
    let x: Vec<u8> = job.x.iter().flat_map(|v| v.to_bits().to_le_bytes()).collect();
    put(layout.x, &x);
    for (p, pl) in job.panels.iter().zip(&layout.panels) {
        let values: Vec<u8> = p.values.iter().flat_map(|v| v.to_bits().to_le_bytes()).collect();
        put(pl.values, &values);
        put(pl.runs, p.runs);
        let colptr: Vec<u8> = p.colptr.iter().flat_map(|v| v.to_le_bytes()).collect();
        put(pl.colptr, &colptr);
    }
    image
}

/// The signals [`run_core`] records into a waveform, one sample per cycle.
pub const TRACED: &[(&str, u32)] = &[
    ("mem_req_valid", 1),
    ("mem_req_addr", 32),
    ("mem_req_write", 1),
    ("mem_req_client", 3),
    ("mem_ready", 1),
    ("mem_resp_valid", 1),
    ("act_loaded", 32),
    ("drain_panel", 16),
    ("done", 1),
    ("error", 1),
    ("error_code", 8),
];

/// Runs `job` on the Verilated core of `arch`, for at most `max_cycles` cycles; with `trace`,
/// records [`TRACED`] every cycle.
pub fn run_core(
    arch: &Arch,
    job: &Job,
    max_cycles: u64,
    mut trace: Option<&mut crate::vcd::Vcd>,
) -> Result<CoreRun, CoreError> {
    let words = arch.burst_words();
    let burst = arch.memory.request_bytes as usize;
    let layout = job.layout(arch);
    let mut image = memory_image(arch, job);
    let mut rtl = Verilated::new(&lacuna_rtl::top_name(arch))?;
    let p = |n: &str| rtl.port(n);
    let ports = Ports {
        reset: p("reset")?,
        table_write: p("table_write")?,
        table_index: p("table_index")?,
        start: p("start")?,
        mem_ready: p("mem_ready")?,
        mem_resp_valid: p("mem_resp_valid")?,
        mem_resp_data: (0..words).map(|w| p(&format!("mem_resp_data_{w}"))).collect::<Result<_, _>>()?,
        mem_req_valid: p("mem_req_valid")?,
        mem_req_addr: p("mem_req_addr")?,
        mem_req_write: p("mem_req_write")?,
        mem_req_data: (0..words).map(|w| p(&format!("mem_req_data_{w}"))).collect::<Result<_, _>>()?,
        mem_req_client: p("mem_req_client")?,
        done: p("done")?,
        error: [p("error")?, p("error_code")?, p("error_panel")?, p("error_col")?, p("error_a")?, p("error_b")?],
        invalid: p("invalid")?,
    };
    let traced: Vec<PortId> = TRACED
        .iter()
        .filter(|(n, _)| !matches!(*n, "mem_ready" | "mem_resp_valid"))
        .map(|(n, _)| p(n))
        .collect::<Result<_, _>>()?;
    // The job's registers and its panel table, by the spec's register map (names = ports).
    let (regs, table) = job.registers(arch);
    let regs: Vec<(PortId, u64)> =
        regs.values().iter().map(|(r, v)| Ok((p(r.name)?, *v))).collect::<Result<_, CoreError>>()?;
    let table: Vec<Vec<(PortId, u64)>> = table
        .iter()
        .map(|e| e.values().iter().map(|(r, v)| Ok((p(r.name)?, *v))).collect::<Result<_, CoreError>>())
        .collect::<Result<_, _>>()?;
    let _ = p;

    // Reset, the registers and the panel table, then start.
    rtl.set(ports.reset, 1);
    rtl.cycle();
    rtl.set(ports.reset, 0);
    for &(port, value) in &regs {
        rtl.set(port, value);
    }
    for (i, entry) in table.iter().enumerate() {
        rtl.set(ports.table_write, 1);
        rtl.set(ports.table_index, i as u64);
        for &(port, value) in entry {
            rtl.set(port, value);
        }
        rtl.cycle();
    }
    rtl.set(ports.table_write, 0);
    rtl.set(ports.start, 1);
    rtl.cycle();
    rtl.set(ports.start, 0);
    if rtl.get(ports.done) == 1 {
        return Err(CoreError::Refused);
    }

    let mut mem = Memory::new(&arch.memory);
    // Requests in flight: (completion cycle, address, a write).
    let mut flight: VecDeque<(u64, u64, bool)> = VecDeque::new();
    let mut fault: Option<CoreFault> = None;
    let mut requests = Vec::new();
    for t in 0..max_cycles {
        mem.tick(t);
        let answer = flight.front().copied().filter(|&(done, _, _)| done == t + 1);
        rtl.set(ports.mem_resp_valid, answer.is_some() as u64);
        let mut data = vec![0u32; words];
        if let Some((_, addr, false)) = answer {
            for (w, d) in data.iter_mut().enumerate() {
                // Outside the image (only a wrong address does that) reads 0: the divergence
                // report names the request, a panic would not.
                let at = addr as usize + 4 * w;
                *d = image.get(at..at + 4).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
            }
        }
        for (&port, &d) in ports.mem_resp_data.iter().zip(&data) {
            rtl.set(port, d as u64);
        }
        if answer.is_some() {
            flight.pop_front();
        }
        rtl.set(ports.mem_ready, 0);
        rtl.eval();
        let mut accepted = false;
        if rtl.get(ports.mem_req_valid) == 1 {
            let write = rtl.get(ports.mem_req_write) == 1;
            let addr = rtl.get(ports.mem_req_addr);
            let kind = if write { MemClient::Outputs } else { MemClient::Values };
            if let Some(done) = mem.request(t, kind) {
                accepted = true;
                flight.push_back((done, addr, write));
                requests.push(Request { cycle: t, client: rtl.get(ports.mem_req_client), addr });
                if write {
                    let bytes: Vec<u8> =
                        ports.mem_req_data.iter().flat_map(|&w| (rtl.get(w) as u32).to_le_bytes()).collect();
                    let at = (addr as usize).min(image.len());
                    let end = (at + burst).min(image.len());
                    image[at..end].copy_from_slice(&bytes[..end - at]);
                }
            }
        }
        rtl.set(ports.mem_ready, accepted as u64);
        rtl.cycle();
        if let Some(vcd) = trace.as_deref_mut() {
            let v: Vec<u64> = traced.iter().map(|&port| rtl.get(port)).collect();
            let sample = [&v[..4], &[accepted as u64, answer.is_some() as u64], &v[4..]].concat();
            vcd.sample(t, sample);
        }
        if fault.is_none() && rtl.get(ports.error[0]) == 1 {
            // The error registers show a fault raised in the previous cycle.
            fault = Some(read_fault(&rtl, &ports, t.saturating_sub(1))?);
        }
        if rtl.get(ports.done) == 1 {
            // A fault raised in the last cycle is in the registers after this edge.
            rtl.eval();
            if fault.is_none() && rtl.get(ports.error[0]) == 1 {
                fault = Some(read_fault(&rtl, &ports, t)?);
            }
            let y_at = layout.y as usize;
            let y = (0..job.rows as usize)
                .map(|r| f32::from_le_bytes(image[y_at + 4 * r..y_at + 4 * r + 4].try_into().expect("4 bytes")))
                .collect();
            return Ok(CoreRun {
                y,
                cycles: (t + 1).max(mem.last_completion()),
                done_cycle: t,
                fault,
                invalid: rtl.get(ports.invalid) == 1,
                requests,
            });
        }
    }
    Err(CoreError::Timeout(max_cycles))
}

fn read_fault(rtl: &Verilated, ports: &Ports, cycle: u64) -> Result<CoreFault, CoreError> {
    let e = &ports.error;
    let code = rtl.get(e[1]);
    Ok(CoreFault {
        code: FaultCode::from_code(code).ok_or(CoreError::UnknownFaultCode(code))?,
        panel: rtl.get(e[2]),
        col: rtl.get(e[3]),
        a: rtl.get(e[4]),
        b: rtl.get(e[5]),
        cycle,
    })
}
