//! `fault`: the codes of the faults a core job can end with, as the RTL's `error_code` carries
//! them and the testbench compares them.
//!
//! The cycle model reports faults with their details (`lacuna_model::Fault`, whose `code` maps
//! to these); the RTL's job interface has one more, the refusal of a job it cannot run.

/// A fault code on the core's `error_code` port (serialized as that number).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FaultCode {
    /// No fault.
    None,
    /// An entry decodes to a row past its panel.
    RunOverrun,
    /// `colptr[k] > colptr[k+1]` or `colptr[k+1] > entries`.
    BadColumnPointer,
    /// The job does not fit the RTL's job interface (too many panels, panel rows not filling
    /// whole bursts of y, x larger than the activation SRAM).
    UnsupportedJob,
}

impl FaultCode {
    /// Every code, in code order.
    pub const ALL: [FaultCode; 4] =
        [FaultCode::None, FaultCode::RunOverrun, FaultCode::BadColumnPointer, FaultCode::UnsupportedJob];

    /// The value on `error_code`.
    pub const fn code(self) -> u64 {
        match self {
            FaultCode::None => 0,
            FaultCode::RunOverrun => 1,
            FaultCode::BadColumnPointer => 2,
            FaultCode::UnsupportedJob => 3,
        }
    }

    /// The fault with code `code`, if any.
    pub fn from_code(code: u64) -> Option<FaultCode> {
        FaultCode::ALL.into_iter().find(|f| f.code() == code)
    }
}

impl serde::Serialize for FaultCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_distinct_and_read_back() {
        for (i, f) in FaultCode::ALL.into_iter().enumerate() {
            assert_eq!(f.code(), i as u64);
            assert_eq!(FaultCode::from_code(f.code()), Some(f));
        }
        assert_eq!(FaultCode::from_code(4), None);
    }
}
