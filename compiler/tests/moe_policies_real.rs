//! The expert policies of speculative decoding on a mixture derived from the real
//! SmolLM2-135M-Instruct (MoEfication): exact policies agree with the exact mixture, the lossy
//! ones load fewer expert bytes a step than the naive union and keep some agreement. Sized for
//! the suite (1 prompt, 1 held-out document; too few to compare calibration's accuracy, which
//! docs/edgexpert.md measures); the figures of
//! docs/edgexpert.md come from `lacuna eval --moe`. `LACUNA_MOE=16x4 LACUNA_TREE=4x4
//! LACUNA_BUDGET=0.5 LACUNA_TOKENS=24` print other settings (judged by the same bounds).

mod common;

use lacuna_compiler::checkpoint::Checkpoint;
use lacuna_compiler::coalesce::calibrate_mixture;
use lacuna_compiler::corpus::Split;
use lacuna_compiler::moe_eval::{evaluate_policies, MoeEvalConfig};
use lacuna_compiler::moefy::moefy;
use lacuna_compiler::speculate::Draft;
use lacuna_compiler::tokenizer::TokenId;
use lacuna_spec::speculation::{MoePolicy, TreeShape};

type Docs = Vec<Vec<TokenId>>;

fn real() -> Option<(Checkpoint, Docs, Docs)> {
    let (ckpt, (calib, held)) = common::smollm2(|c| {
        Ok((common::documents(c, Split::Calibration, 4, 32, 64)?, common::documents(c, Split::HeldOut, 4, 1, 64)?))
    })?;
    Some((ckpt, calib, held))
}

fn env<T: std::str::FromStr>(name: &str, default: &str) -> T {
    std::env::var(name).unwrap_or_else(|_| default.into()).parse().unwrap_or_else(|_| panic!("{name}"))
}

#[test]
fn lossy_policies_load_fewer_expert_bytes_a_step_than_the_union_and_exact_ones_agree_fully() {
    let Some((ckpt, calib, held)) = real() else { return };
    let moe: String = env("LACUNA_MOE", "16x8");
    let (e, k) = moe.split_once('x').unwrap();
    let (mix, _) = moefy(&ckpt, &calib, e.parse().unwrap(), k.parse().unwrap(), 1).unwrap();
    let stats = calibrate_mixture(&mix, &calib, 32).unwrap();
    let cfg = MoeEvalConfig {
        shape: env::<TreeShape>("LACUNA_TREE", "3x3"),
        draft: Draft::parse(&env::<String>("LACUNA_DRAFT", "0-9,20-29"), ckpt.graph.config.layers).unwrap(),
        tokens: env("LACUNA_TOKENS", "8"),
        prompt_tokens: 16,
        expert_budget: env("LACUNA_EXPERT_BUDGET", "6"),
        channel_budget: env("LACUNA_BUDGET", "0.25"),
    };
    let prompts: Docs = held.iter().map(|d| d[..16].to_vec()).collect();
    let held: Docs = held.into_iter().map(|d| d.into_iter().take(36).collect()).collect();
    let rows =
        evaluate_policies(&mix, &stats, &MoePolicy::ALL, &prompts, &held, &cfg, &mut |s| eprintln!("{s}")).unwrap();
    for r in &rows {
        eprintln!(
            "{:<22} tok/step {:.2} experts/blk {:5.2} bytes/tok {:9.0} (+pred {:7.0}) top1 {:.3} ppl {:8.2} prefill experts {:.2}",
            r.policy.name(),
            r.tokens_per_step,
            r.unique_experts_per_step,
            r.expert_bytes_per_token,
            r.predictor_bytes_per_token,
            r.top1_agreement,
            r.perplexity,
            r.prefill_unique_experts
        );
    }
    let row = |p: MoePolicy| rows.iter().find(|r| r.policy == p).unwrap();
    let (no_sd, naive) = (row(MoePolicy::NoSd), row(MoePolicy::Naive));
    assert_eq!(no_sd.tokens_per_step, 1.0);
    assert!(naive.tokens_per_step > 1.0, "the self-draft is accepted beyond the root");
    assert_eq!((no_sd.top1_agreement, naive.top1_agreement), (1.0, 1.0), "exact policies");
    // A tree's union is larger than one token's experts per step.
    assert!(naive.unique_experts_per_step > no_sd.unique_experts_per_step);
    // Bytes per step (not per token: the lossy policies decode their own text, so their
    // acceptance differs): a quarter of one token's need per depth over 4 depths is one token's
    // need, below the union of a 3x3 tree.
    let per_step = |p: MoePolicy| row(p).expert_bytes_per_token * row(p).tokens_per_step;
    for p in [MoePolicy::Budget, MoePolicy::Coalesced, MoePolicy::CoalescedCalibrated] {
        let r = row(p);
        assert!(per_step(p) < per_step(MoePolicy::Naive), "{p}: fewer bytes a step than the union");
        // Loose: one document (about 20 positions); at a quarter budget calibration measured 0.16.
        assert!(r.top1_agreement > 0.05 && r.top1_agreement <= 1.0 && r.perplexity.is_finite(), "{p}: {r:?}");
        assert!(r.predicted >= 16, "{p}: scored positions");
    }
    assert!(row(MoePolicy::Budget).unique_experts_per_step <= 6.0, "the budget holds");
}
