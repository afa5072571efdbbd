//! Tests of the MoE trace format (`crate::moe_trace`): a well-formed trace round-trips through
//! JSON, and every broken rule is refused with where it broke.

use super::*;
use crate::moe::Gating;

/// Two blocks of 4x2 experts of 6 channels; a 2x2 tree; `coalesced-calibrated` with a prefill
/// of 3 tokens and one step of a root and two children (the first accepted).
fn trace() -> MoeTrace {
    let r = |a: u32, b: u32| Routing { experts: vec![ExpertId(a), ExpertId(b)], weights: vec![0.75, 0.25] };
    let all = |e: u32| ExpertLoad { expert: ExpertId(e), channels: Channels::All };
    let prefill_block =
        BlockTrace { routing: vec![r(0, 1), r(1, 2), r(0, 2)], loads: vec![all(0), all(1), all(2)], calibrated: false };
    let step_block = BlockTrace {
        routing: vec![r(0, 1), r(1, 3), r(2, 3)],
        loads: vec![
            ExpertLoad { expert: ExpertId(0), channels: Channels::Only(vec![0, 4]) },
            ExpertLoad { expert: ExpertId(1), channels: Channels::Only(vec![5]) },
            ExpertLoad { expert: ExpertId(3), channels: Channels::Only(vec![1, 2, 3]) },
        ],
        calibrated: true,
    };
    MoeTrace {
        format: FORMAT.into(),
        version: VERSION,
        model: "MoE derived from tiny (MoEfication)".into(),
        layers: 2,
        hidden: 8,
        moe: MoeConfig {
            experts: 4,
            top_k: 2,
            expert_ffn: 6,
            gating: Gating::SoftmaxTopKNormalized,
            unrouted_mean: false,
        },
        tree: TreeShape { depth: 2, width: 2 },
        draft: "0-0".into(),
        prompt: "abc".into(),
        policies: vec![PolicyTrace {
            policy: MoePolicy::CoalescedCalibrated,
            passes: vec![
                PassTrace {
                    kind: PassKind::Prefill,
                    tokens: vec![1, 2, 3],
                    parents: vec![None, Some(0), Some(1)],
                    accepted: vec![0, 1, 2],
                    blocks: vec![prefill_block.clone(), prefill_block],
                },
                PassTrace {
                    kind: PassKind::Verify,
                    tokens: vec![4, 5, 6],
                    parents: vec![None, Some(0), Some(0)],
                    accepted: vec![0, 1],
                    blocks: vec![step_block.clone(), step_block],
                },
            ],
        }],
    }
}

#[test]
fn a_well_formed_trace_round_trips_through_json_and_counts_its_bytes() {
    let t = trace();
    let bytes = serde_json::to_vec(&t).unwrap();
    assert_eq!(MoeTrace::read(&bytes).unwrap(), t);
    let step = &t.policies[0].passes[1].blocks[0];
    assert_eq!(t.block_bytes(step), 6 * a8w4_channel_bytes(8), "2 + 1 + 3 channels");
    assert_eq!(t.block_bytes(&t.policies[0].passes[0].blocks[0]), 18 * a8w4_channel_bytes(8), "3 whole experts");
}

type Spoil = fn(&mut MoeTrace);

#[test]
fn every_broken_rule_is_refused_with_where_it_broke() {
    let cases: Vec<(Spoil, &str)> = vec![
        (|t| t.version = 2, "version 2"),
        (|t| t.moe.top_k = 5, "exceed the graph's limits"),
        (|t| t.layers = 0, "exceed the graph's limits"),
        (|t| t.tree.width = 0, "tree shape"),
        (|t| t.policies.push(t.policies[0].clone()), "traced twice"),
        (|t| t.policies[0].passes.swap(0, 1), "pass 0: a Verify pass"),
        (|t| t.policies[0].passes[0].parents[2] = Some(0), "pass 0: token 2 has parent Some(0)"),
        (|t| t.policies[0].passes[1].parents[2] = Some(2), "token 2 has parent Some(2)"),
        (|t| t.policies[0].passes[1].parents[0] = Some(0), "token 0 has parent"),
        (|t| t.policies[0].passes[1].tokens.push(7), "4 tokens and 3 parents"),
        (|t| t.policies[0].passes[1].accepted = vec![0, 2, 1], "not a chain"),
        (|t| t.policies[0].passes[1].accepted = vec![1], "not a chain"),
        (|t| t.policies[0].passes[0].accepted = vec![0, 1], "not a chain"),
        (|t| _ = t.policies[0].passes[1].blocks.pop(), "1 block traces for 2 blocks"),
        (|t| _ = t.policies[0].passes[1].blocks[1].routing.pop(), "block 1: 2 routings"),
        (|t| t.policies[0].passes[1].blocks[0].calibrated = false, "calibrated false"),
        (|t| t.policies[0].passes[0].blocks[0].calibrated = true, "pass 0: block 0: calibrated true"),
        (|t| t.policies[0].passes[1].blocks[0].loads.swap(0, 1), "ascending order"),
        (|t| t.policies[0].passes[1].blocks[0].loads[2].expert = ExpertId(4), "expert 4 loaded"),
        (
            |t| t.policies[0].passes[1].blocks[0].loads[0].channels = Channels::Only(vec![4, 0]),
            "not a proper ascending part",
        ),
        (
            |t| t.policies[0].passes[1].blocks[0].loads[0].channels = Channels::Only(vec![6]),
            "not a proper ascending part",
        ),
        (
            |t| t.policies[0].passes[1].blocks[0].loads[0].channels = Channels::Only(vec![]),
            "not a proper ascending part",
        ),
        (
            |t| t.policies[0].passes[1].blocks[0].routing[1].experts[1] = ExpertId(1),
            "token 1: expert 1 out of 0..4 or repeated",
        ),
        (|t| _ = t.policies[0].passes[1].blocks[0].routing[1].weights.pop(), "token 1: 2 experts, 1 weights"),
        (
            |t| t.policies[0].passes[1].blocks[0].routing[1].weights[0] = -0.5,
            "not finite, non-negative and non-increasing",
        ),
        (|t| t.policies[0].passes[1].blocks[0].routing[1].experts[0] = ExpertId(9), "token 1: expert 9"),
        (|t| _ = t.policies[0].passes[0].blocks[0].loads.pop(), "expert 2 is used, but not loaded"),
        (|t| t.policies[0].passes[0].blocks[0].loads[0].channels = Channels::Only(vec![1]), "in a coalesced step"),
        (|t| t.policies[0].passes[1].blocks[0].loads[0].channels = Channels::Only((0..6).collect()), "6 channels"),
        (
            |t| {
                t.policies[0].passes[0].blocks[0]
                    .loads
                    .push(ExpertLoad { expert: ExpertId(3), channels: Channels::All })
            },
            "expert 3 loaded, which no token uses",
        ),
        (|t| t.policies[0].passes[1].blocks[0].routing[0].weights = vec![0.25, 0.75], "non-increasing"),
        (|t| t.tree.width = 1, "more than 1 tokens at depth 1"),
        (|t| t.policies.clear(), "no policy traced"),
        (|t| t.policies[0].passes.clear(), "no pass"),
        (|t| t.policies[0].policy = MoePolicy::NoSd, "tokens and 3 parents (1 to 1 tokens)"),
    ];
    for (spoil, expected) in cases {
        let mut t = trace();
        spoil(&mut t);
        let e = MoeTrace::read(&serde_json::to_vec(&t).unwrap()).expect_err(expected);
        assert!(e.contains(expected), "expected '{expected}' in: {e}");
    }
}

#[test]
fn a_step_deeper_than_the_tree_or_a_file_that_is_not_a_trace_is_refused() {
    let mut t = trace();
    t.tree.depth = 0;
    let e = MoeTrace::read(&serde_json::to_vec(&t).unwrap()).unwrap_err();
    assert!(e.contains("tokens and 3 parents (1 to 1 tokens)"), "{e}");
    t.tree = TreeShape { depth: 1, width: 4 };
    let s = t.policies[0].passes.get_mut(1).unwrap();
    s.parents = vec![None, Some(0), Some(1)];
    s.accepted = vec![0, 1, 2];
    let e = MoeTrace::read(&serde_json::to_vec(&t).unwrap()).unwrap_err();
    assert!(e.contains("token 2 lies deeper than the tree's 1"), "{e}");
    for bad in [&b"not json"[..], br#"{"format": "lacuna-moe-trace"}"#, b""] {
        assert!(MoeTrace::read(bad).unwrap_err().starts_with("not a lacuna MoE trace"));
    }
    let mut v = serde_json::to_value(trace()).unwrap();
    v["surprise"] = 1.into();
    assert!(MoeTrace::read(v.to_string().as_bytes()).unwrap_err().contains("unknown field"));
}

#[test]
fn a_routing_lists_the_chosen_experts_by_decreasing_weight() {
    let r = Routing::from_weights(&[0.0, 0.25, 0.0, 0.5, 0.25]);
    assert_eq!(r.experts, vec![ExpertId(3), ExpertId(1), ExpertId(4)]);
    assert_eq!(r.weights, vec![0.5, 0.25, 0.25]);
}
