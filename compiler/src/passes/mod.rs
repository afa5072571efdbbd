//! The compiler's passes over a real checkpoint, one file each, in the order they run:
//!
//! 1. [`prune_weights`]: unstructured weight pruning to x % per linear layer (magnitude, Wanda);
//! 2. [`act_thresholds`]: per-input activation thresholds for a target activation sparsity
//!    (TEAL style), calibrated on real text, checked on held-out text;
//!    [`allocate`]: where a target mean goes, uniform or by measured sensitivity (OWL per block
//!    for the weights, TEAL's greedy allocation per input for the activations);
//! 3. [`lower`]: tiling into row panels for the `Arch`, RLC-CSC encoding, and one core job per
//!    linear layer of the decode step;
//! 4. placement (`lacuna_spec::placement`, part of the program format): the rest of the step
//!    (attention over the KV cache as dense core jobs; norms, RoPE, softmax, SiLU and adds on the
//!    vector unit), with the work of each.

pub mod act_thresholds;
pub mod allocate;
pub mod lower;
pub mod prune_weights;
