//! `rope`: how [`super::Op::Rope`] pairs a head's elements, one style per family.

use serde::{Deserialize, Serialize};

/// RoPE's pairing of a head's elements ([`Op::Rope`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RopeStyle {
    /// Elements (2i, 2i+1): Llama, whose GGUF converter permutes Q and K rows to this order.
    #[default]
    Interleaved,
    /// Elements (i, i + head_dim/2): Gemma (llama.cpp's NEOX RoPE; Hugging Face's `rotate_half`).
    Halves,
}

impl RopeStyle {
    /// Whether it is the default, [`RopeStyle::Interleaved`].
    pub fn is_interleaved(&self) -> bool {
        *self == RopeStyle::Interleaved
    }
}
