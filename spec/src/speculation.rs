//! Speculative decoding of mixtures: the draft tree's shape, the expert policies a step can
//! follow, and the A8W4 storage whose bytes count the expert traffic (issue 15; the expert unit
//! of issue 16 runs what these describe).
//!
//! A step verifies a tree: its root is the token already decided, each depth below holds up to
//! `width` candidates for the next position (the most probable paths of the draft), so a tree
//! has at most `1 + depth * width` nodes and the tokens of one depth exclude each other (at most
//! one of them is accepted).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The most depth or width a tree may have (a step's tokens are bounded by their product).
pub const MAX_TREE_DEPTH: usize = 16;
/// See [`MAX_TREE_DEPTH`].
pub const MAX_TREE_WIDTH: usize = 16;

/// A draft tree's shape: `depth` positions ahead of the root, `width` candidates at each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TreeShape {
    /// Positions drafted beyond the root (0: no speculation, one token per step).
    pub depth: usize,
    /// Candidates kept at each depth (the most probable paths).
    pub width: usize,
}

impl TreeShape {
    /// The most nodes a tree of this shape has, the root included.
    pub fn max_nodes(self) -> usize {
        1 + self.depth * self.width
    }
}

impl fmt::Display for TreeShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.depth, self.width)
    }
}

impl FromStr for TreeShape {
    type Err = String;

    /// `DxW`, e.g. `4x4`; depth 0..=16, width 1..=16.
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("tree shape '{s}' is not DxW (depth 0..={MAX_TREE_DEPTH}, width 1..={MAX_TREE_WIDTH})");
        let (d, w) = s.split_once('x').ok_or_else(bad)?;
        let (depth, width): (usize, usize) = (d.parse().map_err(|_| bad())?, w.parse().map_err(|_| bad())?);
        if depth > MAX_TREE_DEPTH || width == 0 || width > MAX_TREE_WIDTH {
            return Err(bad());
        }
        Ok(TreeShape { depth, width })
    }
}

/// How the experts of a speculative step are loaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MoePolicy {
    /// No speculation: one token per step, its top-k experts.
    NoSd,
    /// Every tree token gets its own top-k; the step loads their union.
    Naive,
    /// A fixed number of experts per block and step (those with the most routing weight over
    /// the tree); each token takes its top k among them (MoE-Spec style).
    Budget,
    /// Depth-aware coalescing: per depth, only the salient channels of the routed experts
    /// within a channel budget, channels loaded for another depth reused.
    Coalesced,
    /// [`MoePolicy::Coalesced`] plus computational calibration: the skipped channels' expected
    /// contribution added from calibration statistics, without loading their weights.
    CoalescedCalibrated,
}

impl MoePolicy {
    /// Every policy, in the order reports list them.
    pub const ALL: [MoePolicy; 5] =
        [MoePolicy::NoSd, MoePolicy::Naive, MoePolicy::Budget, MoePolicy::Coalesced, MoePolicy::CoalescedCalibrated];

    /// The name in reports and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            MoePolicy::NoSd => "no-sd",
            MoePolicy::Naive => "naive",
            MoePolicy::Budget => "budget",
            MoePolicy::Coalesced => "coalesced",
            MoePolicy::CoalescedCalibrated => "coalesced-calibrated",
        }
    }

    /// Whether the step verifies a draft tree (all but [`MoePolicy::NoSd`]).
    pub fn speculates(self) -> bool {
        self != MoePolicy::NoSd
    }
}

impl fmt::Display for MoePolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for MoePolicy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        MoePolicy::ALL.into_iter().find(|p| p.name() == s).ok_or_else(|| {
            let names: Vec<&str> = MoePolicy::ALL.iter().map(|p| p.name()).collect();
            format!("unknown policy '{s}' (one of {})", names.join(", "))
        })
    }
}

/// A8W4 weights, as the expert unit reads them ([`crate::a8w4`] defines the format): INT4 values
/// packed two to a byte, in groups of [`A8W4_GROUP`] consecutive values, each group with an FP16
/// scale. An expert is stored channel-major (channel j: its gate row, up row and down column,
/// each a vector of the hidden size) so that any subset of channels is a set of whole records.
pub use crate::a8w4::GROUP as A8W4_GROUP;

/// Bytes of `values` A8W4 weights in whole groups: the packed values plus one FP16 scale per
/// started group.
pub fn a8w4_bytes(values: usize) -> u64 {
    crate::a8w4::vector_bytes(values)
}

/// Bytes of one expert channel in A8W4 (gate row, up row, down column of `hidden` values each).
pub fn a8w4_channel_bytes(hidden: usize) -> u64 {
    crate::a8w4::channel_bytes(hidden)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_shapes_parse_as_depth_by_width_and_bad_ones_are_refused() {
        assert_eq!("4x3".parse::<TreeShape>(), Ok(TreeShape { depth: 4, width: 3 }));
        assert_eq!("4x3".parse::<TreeShape>().unwrap().max_nodes(), 13);
        for bad in ["", "4", "4x0", "17x2", "2x17", "ax2", "2x-1", "4x3x2"] {
            assert!(bad.parse::<TreeShape>().is_err(), "{bad}");
        }
    }

    #[test]
    fn policies_round_trip_through_their_names() {
        for p in MoePolicy::ALL {
            assert_eq!(p.name().parse::<MoePolicy>(), Ok(p));
            assert_eq!(serde_json::to_string(&p).unwrap(), format!("\"{}\"", p.name()));
        }
        assert!("greedy".parse::<MoePolicy>().is_err());
    }

    #[test]
    fn a8w4_counts_half_a_byte_a_weight_and_a_scale_a_group() {
        assert_eq!(a8w4_bytes(64), 32 + 4);
        assert_eq!(a8w4_bytes(33), 17 + 4);
        assert_eq!(a8w4_channel_bytes(576), 3 * (288 + 36));
    }
}
