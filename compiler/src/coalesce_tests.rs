//! The expert policies on random mixtures: at their limits they are the exact mixture, and the
//! traffic they count is what they load.

use crate::checkpoint::test_models::random_checkpoint;
use crate::checkpoint::{Checkpoint, Matrix};
use crate::coalesce::{calibrate_mixture, PolicyConfig, PolicyExec, Reuse, Scorer};
use crate::forward::{dot, greedy, silu, Dense};
use crate::speculate::{generate, Draft, Speculator};
use crate::tokenizer::TokenId;
use lacuna_spec::graph::{Gating, LlamaConfig, MoeConfig};
use lacuna_spec::speculation::{a8w4_channel_bytes, MoePolicy, TreeShape};

fn mixture(gating: Gating) -> Checkpoint {
    mixture_with(gating, false)
}

/// With `unrouted_mean`, the experts a token skips add their (random) mean outputs.
fn mixture_with(gating: Gating, unrouted_mean: bool) -> Checkpoint {
    let moe = MoeConfig { experts: 4, top_k: 2, expert_ffn: 6, gating, unrouted_mean };
    let c = LlamaConfig { layers: 3, vocab: 48, context: 96, moe: Some(moe), ..LlamaConfig::tiny() };
    random_checkpoint(&c, 11)
}

fn docs() -> Vec<Vec<TokenId>> {
    (0..6).map(|d| (0..12).map(|i| TokenId((d * 7 + i * 5) % 48)).collect()).collect()
}

fn config(policy: MoePolicy) -> PolicyConfig {
    PolicyConfig { policy, expert_budget: 3, channel_budget: 1.0, reuse: None }
}

const SHAPE: TreeShape = TreeShape { depth: 3, width: 3 };

fn run(ckpt: &Checkpoint, exec: &mut PolicyExec, prompt: &[TokenId]) -> (Vec<TokenId>, usize) {
    let draft = Draft::first(1, 3).unwrap();
    let (tokens, steps) = generate(ckpt, prompt, 12, SHAPE, &draft, &mut Dense, Some(exec)).unwrap();
    (tokens, steps.iter().map(|s| s.path.len()).sum())
}

#[test]
fn exact_policies_decode_the_exact_mixture_and_count_the_union_of_top_k() {
    for gating in [Gating::SoftmaxTopKNormalized, Gating::UnitTopK] {
        let ckpt = mixture(gating);
        let stats = calibrate_mixture(&ckpt, &docs(), 4).unwrap();
        let prompt = [TokenId(3), TokenId(5)];
        let want = greedy(&ckpt, &prompt, 12, &mut Dense).unwrap();
        for policy in [MoePolicy::NoSd, MoePolicy::Naive] {
            let mut exec = PolicyExec::new(&ckpt, config(policy), Some(&stats)).unwrap();
            assert_eq!(run(&ckpt, &mut exec, &prompt).0, want, "{policy}");
            let c = exec.counts;
            assert_eq!(c.block_steps, 3 * c.steps);
            let per_expert = 6 * a8w4_channel_bytes(8);
            assert_eq!(c.expert_bytes, c.experts_loaded * per_expert, "{policy}: whole experts");
            // One token loads its k experts; a tree loads at least that.
            assert!(c.experts_loaded >= 2 * c.block_steps, "{policy}");
        }
        // A budget as large as the experts is the union.
        let mut exec =
            PolicyExec::new(&ckpt, PolicyConfig { expert_budget: 4, ..config(MoePolicy::Budget) }, Some(&stats))
                .unwrap();
        assert_eq!(run(&ckpt, &mut exec, &prompt).0, want, "budget of every expert");
    }
}

#[test]
fn coalescing_with_room_for_every_channel_is_the_exact_mixture() {
    for (gating, mean) in [(Gating::SoftmaxTopKNormalized, false), (Gating::UnitTopK, false), (Gating::UnitTopK, true)]
    {
        let ckpt = mixture_with(gating, mean);
        let stats = calibrate_mixture(&ckpt, &docs(), 4).unwrap();
        for policy in [MoePolicy::Coalesced, MoePolicy::CoalescedCalibrated] {
            let cfg = PolicyConfig { channel_budget: 1e6, ..config(policy) };
            let mut exec = PolicyExec::new(&ckpt, cfg, Some(&stats)).unwrap();
            let mut naive = PolicyExec::new(&ckpt, config(MoePolicy::Naive), Some(&stats)).unwrap();
            // Same tree, same tokens: compare the verification logits of a teacher-forced step.
            let text: Vec<TokenId> = [4, 9, 1, 30, 2, 2].map(TokenId).to_vec();
            let draft = Draft::first(1, 3).unwrap();
            let (mut a, mut b) =
                (Speculator::new(&ckpt, SHAPE, &draft).unwrap(), Speculator::new(&ckpt, SHAPE, &draft).unwrap());
            a.prefill(&text[..2], &mut Dense, None).unwrap();
            b.prefill(&text[..2], &mut Dense, None).unwrap();
            // A chain with decoys: the path runs the full depth.
            let tree = crate::speculate_tests::chain_with_decoys(text[2], &text[3..], 48);
            let x = a
                .verify(tree.clone(), crate::speculate::Accept::Follow(&text[3..]), &mut Dense, Some(&mut exec))
                .unwrap();
            let y = b.verify(tree, crate::speculate::Accept::Follow(&text[3..]), &mut Dense, Some(&mut naive)).unwrap();
            assert_eq!(x.path.len(), text.len() - 2, "the path follows the whole chain");
            for (p, q) in x.logits.iter().zip(&y.logits) {
                let err = p.iter().zip(q).map(|(p, q)| (p - q).abs()).fold(0f32, f32::max);
                assert!(err < 1e-4, "{policy}: {err}");
            }
            assert_eq!(exec.counts.expert_bytes, naive.counts.expert_bytes, "{policy}: every routed channel, once");
            assert!(exec.counts.predictor_bytes > 0);
        }
    }
}

#[test]
fn a_small_channel_budget_loads_less_than_the_union_and_within_its_budget() {
    let ckpt = mixture(Gating::UnitTopK);
    let stats = calibrate_mixture(&ckpt, &docs(), 4).unwrap();
    let prompt = [TokenId(7)];
    let mut naive = PolicyExec::new(&ckpt, config(MoePolicy::Naive), Some(&stats)).unwrap();
    let (_, n_tokens) = run(&ckpt, &mut naive, &prompt);
    for policy in [MoePolicy::Coalesced, MoePolicy::CoalescedCalibrated] {
        let cfg = PolicyConfig { channel_budget: 0.25, ..config(policy) };
        let mut exec = PolicyExec::new(&ckpt, cfg, Some(&stats)).unwrap();
        let (_, tokens) = run(&ckpt, &mut exec, &prompt);
        let per_token = |e: &PolicyExec, t: usize| e.counts.expert_bytes as f64 / t as f64;
        assert!(per_token(&exec, tokens) < per_token(&naive, n_tokens), "{policy}");
        // A quarter of one token's need (2 x 6 channels) per depth: 3 channels, (depth + 1) times.
        let bound = exec.counts.block_steps * (SHAPE.depth as u64 + 1) * 3 * a8w4_channel_bytes(8);
        assert!(exec.counts.expert_bytes <= bound, "{policy}");
    }
}

#[test]
fn reuse_that_keeps_every_token_is_per_token_routing_and_less_loads_fewer_experts() {
    let ckpt = mixture(Gating::SoftmaxTopKNormalized);
    let stats = calibrate_mixture(&ckpt, &docs(), 4).unwrap();
    let doc: Vec<TokenId> = (0..20).map(|i| TokenId((i * 11) % 48)).collect();
    let whole = Draft::first(3, 3).unwrap();
    let mut logits = Vec::new();
    let mut loaded = Vec::new();
    for reuse in [
        None,
        Some(Reuse { scorer: Scorer::RouterConfidence, important: 1.0, reduced_k: 1 }),
        Some(Reuse { scorer: Scorer::RouterConfidence, important: 0.25, reduced_k: 1 }),
        Some(Reuse { scorer: Scorer::Spaced, important: 0.25, reduced_k: 1 }),
    ] {
        let mut exec =
            PolicyExec::new(&ckpt, PolicyConfig { reuse, ..config(MoePolicy::Naive) }, Some(&stats)).unwrap();
        let mut s = Speculator::new(&ckpt, TreeShape { depth: 0, width: 1 }, &whole).unwrap();
        logits.push(s.prefill(&doc, &mut Dense, Some(&mut exec)).unwrap());
        loaded.push(exec.counts.prefill_experts_loaded);
    }
    assert_eq!(logits[0], logits[1], "every token important: per-token routing");
    assert!(loaded[2] <= loaded[0] && loaded[3] <= loaded[0], "{loaded:?}");
}

#[test]
fn policies_without_what_they_need_are_refused() {
    let ckpt = mixture(Gating::UnitTopK);
    let stats = calibrate_mixture(&ckpt, &docs(), 4).unwrap();
    assert!(PolicyExec::new(&ckpt, config(MoePolicy::Coalesced), None).is_err());
    assert!(
        PolicyExec::new(&ckpt, PolicyConfig { expert_budget: 0, ..config(MoePolicy::Budget) }, Some(&stats)).is_err()
    );
    assert!(PolicyExec::new(
        &ckpt,
        PolicyConfig { channel_budget: f64::NAN, ..config(MoePolicy::Coalesced) },
        Some(&stats)
    )
    .is_err());
    for (important, reduced_k) in [(0.0, 1), (0.5, 0), (0.5, 3)] {
        let bad = Reuse { scorer: Scorer::Spaced, important, reduced_k };
        let cfg = PolicyConfig { reuse: Some(bad), ..config(MoePolicy::Naive) };
        assert!(PolicyExec::new(&ckpt, cfg, Some(&stats)).is_err(), "share {important}, reduced k {reduced_k} of 2");
    }
    let dense = random_checkpoint(&LlamaConfig::tiny(), 1);
    assert!(PolicyExec::new(&dense, config(MoePolicy::Naive), None).is_err());
    assert!(calibrate_mixture(&dense, &docs(), 4).is_err());
    assert!(calibrate_mixture(&ckpt, &docs(), 0).is_err() && calibrate_mixture(&ckpt, &docs(), 9).is_err());
}

/// A random expert (hidden 5, 4 channels) and its calibration statistics over `tokens`.
fn expert_and_stats(tokens: &[Vec<f32>]) -> (Matrix, Matrix, Matrix, super::BlockStats) {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let mut m = |rows: usize, cols: usize| Matrix {
        rows,
        cols,
        data: (0..rows * cols).map(|_| rng.random_range(-1.0f32..1.0)).collect(),
    };
    let (gate, up, down_t) = (m(4, 5), m(4, 5), m(4, 5));
    let act = |x: &[f32], j: usize| silu(dot(gate.row(j), x)) * dot(up.row(j), x);
    let n = tokens.len() as f32;
    let mean: Vec<f32> = (0..4).map(|j| tokens.iter().map(|x| act(x, j)).sum::<f32>() / n).collect();
    let mean_abs: Vec<f32> = (0..4).map(|j| tokens.iter().map(|x| act(x, j).abs()).sum::<f32>() / n).collect();
    let mut mean_out = vec![0f32; 5];
    for j in 0..4 {
        mean_out.iter_mut().zip(down_t.row(j)).for_each(|(y, d)| *y += mean[j] * d);
    }
    let empty = Matrix { rows: 0, cols: 0, data: vec![] };
    let stats = super::BlockStats {
        basis: empty,
        gate_lr: vec![],
        mean: vec![mean],
        mean_abs: vec![mean_abs],
        mean_abs_up: vec![vec![0.0; 4]],
        mean_out: vec![mean_out],
    };
    (gate, up, down_t, stats)
}

#[test]
fn calibration_adds_the_skipped_channels_mean_scaled_by_how_active_the_loaded_ones_are() {
    let tokens: Vec<Vec<f32>> = (0..6).map(|t| (0..5).map(|i| ((t * 5 + i) as f32 * 0.7).sin()).collect()).collect();
    let (gate, up, down_t, stats) = expert_and_stats(&tokens);
    let w = super::Expert { gate: &gate, up: &up, down_t: down_t.clone() };
    let x = &tokens[2];
    let out = |used: &[bool], calibrated: bool| super::partial_expert(&w, used, x, calibrated.then_some((&stats, 0)));
    // Every channel loaded: nothing is skipped, nothing added (bit for bit).
    assert_eq!(out(&[true; 4], true), out(&[true; 4], false));
    // Nothing loaded: the expert's mean output.
    assert_eq!(out(&[false; 4], true), stats.mean_out[0]);
    // Channels 0 and 2 loaded: the rest's mean, c - W[:,L] mu_L, times |a_L| / E|a_L|.
    let used = [true, false, true, false];
    let a = |j: usize| silu(dot(gate.row(j), x)) * dot(up.row(j), x);
    let kappa = (a(0).abs() + a(2).abs()) / (stats.mean_abs[0][0] + stats.mean_abs[0][2]);
    assert!(kappa > 0.0 && kappa != 1.0, "the test token is not a typical one: {kappa}");
    let (with, without) = (out(&used, true), out(&used, false));
    for i in 0..5 {
        let rest = stats.mean_out[0][i] - stats.mean[0][0] * down_t.row(0)[i] - stats.mean[0][2] * down_t.row(2)[i];
        assert!((with[i] - without[i] - kappa * rest).abs() < 1e-5, "output {i}");
    }
}

#[test]
fn the_trace_records_each_policys_passes_as_it_ran_and_counted() {
    use crate::moe_trace::{summarize, trace_policies, TraceOptions};
    use lacuna_spec::moe_trace::{Channels, MoeTrace, PassKind};
    let ckpt = mixture(Gating::SoftmaxTopKNormalized);
    let stats = calibrate_mixture(&ckpt, &docs(), 4).unwrap();
    let prompt = [TokenId(3), TokenId(5)];
    let draft = Draft::first(1, 3).unwrap();
    let opts = TraceOptions {
        shape: SHAPE,
        draft: draft.clone(),
        tokens: 12,
        expert_budget: 3,
        channel_budget: 0.5,
        reuse: None,
    };
    let written = trace_policies(&ckpt, &stats, &MoePolicy::ALL, &prompt, "t3 t5", &opts, &mut |_| {}).unwrap();
    let trace = MoeTrace::read(&serde_json::to_vec(&written).unwrap()).unwrap();
    assert_eq!(trace, written, "the reader takes what the recorder writes");
    let greedy_tokens = greedy(&ckpt, &prompt, 12, &mut Dense).unwrap();
    for p in &trace.policies {
        // The same run again, counted: the trace's bytes are the counts, its paths the tokens.
        let cfg = PolicyConfig { channel_budget: 0.5, ..config(p.policy) };
        let mut exec = PolicyExec::new(&ckpt, cfg, Some(&stats)).unwrap();
        let shape = if p.policy.speculates() { SHAPE } else { TreeShape { depth: 0, width: 1 } };
        let (tokens, steps) = generate(&ckpt, &prompt, 12, shape, &draft, &mut Dense, Some(&mut exec)).unwrap();
        let s = summarize(&trace, p);
        assert_eq!((s.steps, s.step_bytes), (steps.len(), exec.counts.expert_bytes), "{}", p.policy);
        assert_eq!(s.prefill_bytes, exec.counts.prefill_expert_bytes, "{}", p.policy);
        assert_eq!(p.passes[0].tokens, vec![3, 5], "the prefill is the prompt");
        let committed: Vec<u32> =
            p.passes[1..].iter().flat_map(|pass| pass.accepted.iter().map(|&i| pass.tokens[i as usize])).collect();
        let generated: Vec<u32> = steps.iter().flat_map(|s| s.tokens()).map(|t| t.0).collect();
        assert_eq!(committed, generated, "{}", p.policy);
        if matches!(p.policy, MoePolicy::NoSd | MoePolicy::Naive) {
            assert_eq!(tokens, greedy_tokens, "{}", p.policy);
        }
        let steps_loads = p.passes[1..].iter().flat_map(|pass| &pass.blocks).flat_map(|b| &b.loads);
        let partial = steps_loads.filter(|l| matches!(l.channels, Channels::Only(_))).count();
        let coalesces = matches!(p.policy, MoePolicy::Coalesced | MoePolicy::CoalescedCalibrated);
        assert_eq!(partial > 0, coalesces, "{}: half a token's channels load parts of experts", p.policy);
        let calibrated = p.passes.iter().flat_map(|pass| pass.blocks.iter().map(move |b| (pass.kind, b.calibrated)));
        for (kind, flagged) in calibrated {
            assert_eq!(flagged, p.policy == MoePolicy::CoalescedCalibrated && kind == PassKind::Verify);
        }
    }
}
