//! Safe wrappers around the Verilated models (`csrc/shim.cpp`).
//!
//! Each call builds its own Verilated model inside the C++ shim and destroys it before
//! returning, so these functions are safe to call from any thread.

use crate::RtlError;

/// Whether this build links the Verilated models.
pub const AVAILABLE: bool = cfg!(lacuna_verilator);

#[cfg(lacuna_verilator)]
mod ffi {
    extern "C" {
        pub fn lacuna_fp16_mul_batch(a: *const u16, b: *const u16, product: *mut u32, invalid: *mut u8, n: usize);
        pub fn lacuna_fp32_add_batch(a: *const u32, b: *const u32, sum: *mut u32, n: usize);
    }
}

/// Outputs of a combinational FP unit over a batch: result bits and the `invalid` flag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitOutputs {
    /// The result's IEEE binary32 bits, one per operand pair.
    pub bits: Vec<u32>,
    /// The unit's `invalid` output, one per operand pair.
    pub invalid: Vec<bool>,
}

/// `fp16_mul` on every pair `(a[i], b[i])` (FP16 bit patterns).
pub fn fp16_mul(a: &[u16], b: &[u16]) -> Result<UnitOutputs, RtlError> {
    if a.len() != b.len() {
        return Err(RtlError::LengthMismatch(a.len(), b.len()));
    }
    #[cfg(lacuna_verilator)]
    {
        let mut bits = vec![0u32; a.len()];
        let mut invalid = vec![0u8; a.len()];
        // SAFETY: every pointer covers `a.len()` elements of its type; the shim reads a and b and
        // writes bits and invalid at indices below n only.
        unsafe { ffi::lacuna_fp16_mul_batch(a.as_ptr(), b.as_ptr(), bits.as_mut_ptr(), invalid.as_mut_ptr(), a.len()) };
        Ok(UnitOutputs { bits, invalid: invalid.into_iter().map(|v| v != 0).collect() })
    }
    #[cfg(not(lacuna_verilator))]
    Err(RtlError::NotBuilt)
}

/// `fp32_add` on every pair `(a[i], b[i])` (FP32 bit patterns): the sums' bits.
pub fn fp32_add(a: &[u32], b: &[u32]) -> Result<Vec<u32>, RtlError> {
    if a.len() != b.len() {
        return Err(RtlError::LengthMismatch(a.len(), b.len()));
    }
    #[cfg(lacuna_verilator)]
    {
        let mut bits = vec![0u32; a.len()];
        // SAFETY: as in `fp16_mul`.
        unsafe { ffi::lacuna_fp32_add_batch(a.as_ptr(), b.as_ptr(), bits.as_mut_ptr(), a.len()) };
        Ok(bits)
    }
    #[cfg(not(lacuna_verilator))]
    Err(RtlError::NotBuilt)
}
