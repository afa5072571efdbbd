//! Any Verilated block, driven cycle by cycle from Rust.
//!
//! `build.rs` generates, from each block's port list, a C++ shim (`new`, `delete`, `eval`,
//! `cycle`) and the [`ModelInfo`] table that describes it. [`Verilated`] holds one instance:
//! inputs are staged in a word array, [`Verilated::cycle`] makes one FFI call (inputs set, clock
//! low, evaluate, outputs read: the values of this cycle; then the rising edge). A Verilated model
//! must stay on the thread that made it, so [`Verilated`] is neither `Send` nor `Sync`.

use crate::RtlError;
use std::ffi::c_void;
use std::marker::PhantomData;

/// One port of a Verilated block.
#[derive(Debug)]
pub struct PortInfo {
    /// Port name.
    pub name: &'static str,
    /// Input (else output).
    pub input: bool,
    /// Width in bits.
    pub width: u32,
    /// First word in the input or output array.
    pub word: usize,
}

/// A Verilated block as `build.rs` compiled it.
pub struct ModelInfo {
    /// Top module name.
    pub name: &'static str,
    /// Has a `clock` input (`cycle` toggles it).
    pub clocked: bool,
    /// Words of the input array.
    pub in_words: usize,
    /// Words of the output array.
    pub out_words: usize,
    /// Ports in declaration order.
    pub ports: &'static [PortInfo],
    new: unsafe extern "C" fn() -> *mut c_void,
    delete: unsafe extern "C" fn(*mut c_void),
    eval: unsafe extern "C" fn(*mut c_void, *const u32, *mut u32),
    cycle: unsafe extern "C" fn(*mut c_void, *const u32, *mut u32),
}

mod generated {
    #![allow(clippy::all, missing_docs)]
    use super::{ModelInfo, PortInfo};
    include!(concat!(env!("OUT_DIR"), "/models.rs"));
}

/// Every block this build can run.
pub fn models() -> &'static [ModelInfo] {
    generated::MODELS
}

/// A port, looked up once by name.
#[derive(Clone, Copy, Debug)]
pub struct PortId {
    word: usize,
    words: usize,
    width: u32,
    input: bool,
}

/// One running instance of a Verilated block.
pub struct Verilated {
    info: &'static ModelInfo,
    handle: *mut c_void,
    inputs: Vec<u32>,
    outputs: Vec<u32>,
    cycles: u64,
    _not_send: PhantomData<*const ()>,
}

impl Verilated {
    /// A new instance of block `name`, inputs all zero.
    pub fn new(name: &str) -> Result<Verilated, RtlError> {
        if !crate::verilated::AVAILABLE {
            return Err(RtlError::NotBuilt);
        }
        let info = models().iter().find(|m| m.name == name).ok_or_else(|| RtlError::UnknownBlock(name.to_string()))?;
        // SAFETY: `new` allocates a model and returns an opaque handle that only this struct owns.
        let handle = unsafe { (info.new)() };
        Ok(Verilated {
            info,
            handle,
            inputs: vec![0; info.in_words.max(1)],
            outputs: vec![0; info.out_words.max(1)],
            cycles: 0,
            _not_send: PhantomData,
        })
    }

    /// The block's description.
    pub fn info(&self) -> &'static ModelInfo {
        self.info
    }

    /// Looks a port up by name.
    pub fn port(&self, name: &str) -> Result<PortId, RtlError> {
        self.info
            .ports
            .iter()
            .find(|p| p.name == name)
            .map(|p| PortId { word: p.word, words: p.width.div_ceil(32) as usize, width: p.width, input: p.input })
            .ok_or_else(|| RtlError::UnknownPort { block: self.info.name.to_string(), port: name.to_string() })
    }

    /// Stages input `port` (at most 64 bits wide) for the next `eval` or `cycle`; the value is
    /// masked to the port's width.
    pub fn set(&mut self, port: PortId, value: u64) {
        debug_assert!(port.input && port.words <= 2);
        let value = if port.width >= 64 { value } else { value & ((1u64 << port.width) - 1) };
        self.inputs[port.word] = value as u32;
        if port.words == 2 {
            self.inputs[port.word + 1] = (value >> 32) as u32;
        }
    }

    /// Stages a wide input from its 32-bit words, least significant first.
    pub fn set_words(&mut self, port: PortId, words: &[u32]) {
        debug_assert!(port.input);
        for i in 0..port.words {
            self.inputs[port.word + i] = words.get(i).copied().unwrap_or(0);
        }
        let spare = port.words as u32 * 32 - port.width;
        if spare > 0 {
            self.inputs[port.word + port.words - 1] &= u32::MAX >> spare;
        }
    }

    /// Output `port` (at most 64 bits wide) as of the last `eval` or `cycle`.
    pub fn get(&self, port: PortId) -> u64 {
        debug_assert!(!port.input && port.words <= 2);
        let lo = self.outputs[port.word] as u64;
        if port.words == 2 {
            lo | (self.outputs[port.word + 1] as u64) << 32
        } else {
            lo
        }
    }

    /// A wide output's 32-bit words, least significant first.
    pub fn get_words(&self, port: PortId) -> &[u32] {
        &self.outputs[port.word..port.word + port.words]
    }

    /// Evaluates the combinational logic with the staged inputs (no clock edge).
    pub fn eval(&mut self) {
        // SAFETY: the handle is live; the arrays hold `in_words` and `out_words` words.
        unsafe { (self.info.eval)(self.handle, self.inputs.as_ptr(), self.outputs.as_mut_ptr()) };
    }

    /// One clock cycle: the staged inputs with the clock low, evaluate, outputs read (this
    /// cycle's values), then the rising edge.
    pub fn cycle(&mut self) {
        // SAFETY: as in `eval`.
        unsafe { (self.info.cycle)(self.handle, self.inputs.as_ptr(), self.outputs.as_mut_ptr()) };
        self.cycles += 1;
    }

    /// Cycles run so far.
    pub fn cycles(&self) -> u64 {
        self.cycles
    }
}

impl Drop for Verilated {
    fn drop(&mut self) {
        // SAFETY: the handle came from `new` and is freed once.
        unsafe { (self.info.delete)(self.handle) };
    }
}
