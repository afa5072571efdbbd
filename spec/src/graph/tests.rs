//! The graph builders' invariants, on the tiny shapes.

use super::*;

fn tiny() -> LlamaConfig {
    LlamaConfig::tiny()
}

#[test]
fn every_operand_is_an_earlier_node_of_the_right_length() {
    for g in
        [Graph::decoder(&tiny()), Graph::decoder(&LlamaConfig::tiny_moe()), Graph::decoder(&LlamaConfig::tiny_gemma3())]
    {
        operands_come_first_with_their_lengths(&g);
    }
}

fn operands_come_first_with_their_lengths(g: &Graph) {
    for (i, n) in g.nodes.iter().enumerate() {
        let before = |id: NodeId| assert!((id.0 as usize) < i, "{} reads a later node", n.name);
        match n.op {
            Op::Embed { .. } => {}
            Op::RmsNorm { input, weight, heads } => {
                before(input);
                assert_eq!(g.node_at(input).len, n.len, "{}", n.name);
                assert_eq!(g.weight_at(weight).cols * heads, n.len, "{}", n.name);
            }
            Op::Rope { input, .. } | Op::Scale { input, .. } => {
                before(input);
                assert_eq!(g.node_at(input).len, n.len, "{}", n.name);
            }
            Op::Linear { input, weight, expert, .. } => {
                before(input);
                assert_eq!(g.node_at(input).len, g.weight_at(weight).cols, "{}", n.name);
                assert_eq!(n.len, g.weight_at(weight).rows, "{}", n.name);
                if let Some(slot) = expert {
                    before(slot.route);
                    assert!(matches!(g.node_at(slot.route).op, Op::Route { .. }), "{}", n.name);
                }
            }
            Op::Route { logits, top_k, .. } => {
                before(logits);
                assert_eq!(n.len, g.node_at(logits).len);
                assert!(top_k >= 1 && top_k <= n.len);
            }
            Op::Combine { route, ref experts, .. } => {
                before(route);
                assert_eq!(experts.len(), g.node_at(route).len, "{}", n.name);
                for &e in experts {
                    before(e);
                    assert_eq!(g.node_at(e).len, n.len, "{}", n.name);
                }
            }
            Op::Attention { q, k, v, .. } => [q, k, v].into_iter().for_each(before),
            Op::SwiGlu { gate: a, up: b } | Op::GeGlu { gate: a, up: b } | Op::Add { a, b } => {
                before(a);
                before(b);
                assert_eq!(g.node_at(a).len, g.node_at(b).len);
            }
        }
    }
}

#[test]
fn a_llama_step_has_seven_linears_per_layer_and_a_tied_head() {
    let g = Graph::decoder(&tiny());
    assert_eq!(g.linears().count(), 2 * 7 + 1);
    let (_, head, kind, _) = g.linears().last().unwrap();
    assert_eq!(kind, LinearKind::LmHead);
    assert_eq!(g.weight_at(head).tensor, "token_embd.weight");
    assert_eq!(g.output(), g.linears().last().unwrap().0);
}

#[test]
fn a_mixture_block_has_a_router_and_three_guarded_linears_per_expert() {
    let config = LlamaConfig::tiny_moe();
    let g = Graph::decoder(&config);
    // Per layer: q k v o, the router, 4 experts x (gate, up, down); then the head.
    assert_eq!(g.linears().count(), 2 * (4 + 1 + 4 * 3) + 1);
    let guarded: Vec<_> = g
        .nodes
        .iter()
        .filter_map(|n| match n.op {
            Op::Linear { expert: Some(slot), .. } => Some((n.name.clone(), slot.expert)),
            _ => None,
        })
        .collect();
    assert_eq!(guarded.len(), 2 * 4 * 3);
    assert!(guarded.contains(&("blk.1.ffn_down.3".to_string(), ExpertId(3))), "{guarded:?}");
    let names: Vec<&str> = g.weights.iter().map(|w| w.tensor.as_str()).collect();
    for t in ["blk.0.ffn_gate_inp.weight", "blk.0.ffn_gate.0.weight", "blk.1.ffn_down.3.weight"] {
        assert!(names.contains(&t), "{t}");
    }
    assert!(!names.contains(&"blk.0.ffn_gate.weight"));
}

#[test]
fn a_dense_config_serializes_without_a_moe_key_and_a_bad_mixture_is_refused() {
    let json = serde_json::to_string(&Graph::decoder(&tiny())).unwrap();
    assert!(!json.contains("moe") && !json.contains("expert"), "old graphs keep their bytes");
    let mut c = LlamaConfig::tiny_moe();
    c.moe.as_mut().unwrap().top_k = 5;
    assert!(c.check().unwrap_err().contains("4 experts, 5 chosen"));
    c.moe.as_mut().unwrap().top_k = 0;
    assert!(c.check().is_err());
    let mut c = LlamaConfig { layers: 4096, ..LlamaConfig::tiny_moe() };
    c.moe.as_mut().unwrap().experts = 1024;
    assert!(c.check().unwrap_err().contains("4194304 expert FFNs"), "{:?}", c.check());
}
