//! MoEfication of the real SmolLM2-135M-Instruct (a mixture derived from a dense model, labelled
//! so): split on Debian fortunes, measured on held-out riddles against the dense model.
//! `LACUNA_MOEFY_CONFIGS=16x4,16x8` prints other splits (the assertions expect the default, 16x8
//! then 16x16).

mod common;

use lacuna_compiler::checkpoint::Checkpoint;
use lacuna_compiler::corpus::Split;
use lacuna_compiler::eval::{accuracy, Numerics};
use lacuna_compiler::moefy::moefy;
use lacuna_compiler::passes::act_thresholds::Thresholds;
use lacuna_compiler::tokenizer::TokenId;

fn real() -> Option<(Checkpoint, Vec<Vec<TokenId>>, Vec<Vec<TokenId>>)> {
    let calib = std::env::var("LACUNA_MOEFY_CALIB").map_or(12, |v| v.parse().unwrap());
    let (ckpt, (calib, held)) = common::smollm2(|c| {
        Ok((common::documents(c, Split::Calibration, 4, calib, 64)?, common::documents(c, Split::HeldOut, 4, 4, 64)?))
    })?;
    Some((ckpt, calib, held))
}

#[test]
fn a_moefied_smollm2_keeps_most_of_the_dense_models_predictions() {
    let Some((ckpt, calib, held)) = real() else { return };
    let none = Thresholds::default();
    let (dense, dense_top1) = accuracy(&ckpt, Numerics::F32(&none), &held, None).unwrap();
    let mut rows = Vec::new();
    let asked = std::env::var("LACUNA_MOEFY_CONFIGS");
    let configs: Vec<(usize, usize)> = match &asked {
        Ok(v) => v
            .split(',')
            .map(|c| {
                let (e, k) = c.split_once('x').unwrap();
                (e.parse().unwrap(), k.parse().unwrap())
            })
            .collect(),
        Err(_) => vec![(16, 8), (16, 16)],
    };
    for &(e, k) in &configs {
        let (mix, split) = moefy(&ckpt, &calib, e, k, 1).unwrap();
        let (acc, _) = accuracy(&mix, Numerics::F32(&none), &held, Some(&dense_top1)).unwrap();
        let mean =
            |f: fn(&lacuna_compiler::moefy::SplitBlock) -> f64| split.iter().map(f).sum::<f64>() / split.len() as f64;
        eprintln!(
            "{}: perplexity {:.2} (dense {:.2}), top-1 agreement {:.3}; router R^2 {:.3}, recall {:.3}, mass {:.3} (oracle {:.3})",
            mix.name,
            acc.perplexity,
            dense.perplexity,
            acc.top1_agreement,
            mean(|b| b.router_r2),
            mean(|b| b.router_recall),
            mean(|b| b.router_mass),
            mean(|b| b.oracle_mass)
        );
        // The router finds the experts that carry the activation (measured 0.94-0.95 of the
        // oracle's choice on the calibration tokens).
        assert!(mean(|b| b.router_recall) > 0.8, "{}: router recall", mix.name);
        rows.push((k, acc));
    }
    if asked.is_ok() {
        return; // other splits: printed, not judged
    }
    // All 16 experts: the dense model, summed per expert (agreement ~1).
    let all = &rows[1].1;
    assert!(all.top1_agreement > 0.97 && (all.perplexity / dense.perplexity - 1.0).abs() < 0.01, "{all:?}");
    // Half the FFN per token: much worse, and measured, not assumed (docs/edgexpert.md: on 8
    // held-out documents 16x8 keeps 25 % of the dense model's next-token choices, 16x4 8 %; a
    // plain split of a SwiGLU FFN loses most of the model, which is what the next steps address).
    let half = &rows[0].1;
    assert!(half.top1_agreement < all.top1_agreement && half.top1_agreement > 0.1, "{rows:?}");
    assert!(half.perplexity > dense.perplexity, "{rows:?}");
}
