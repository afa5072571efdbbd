//! The compile driver: a real checkpoint to a program, pass by pass.
//!
//! Order: calibrate on the dense model (Wanda's input norms) → prune the weights → calibrate
//! the activation thresholds on the pruned model → measure the sparsity they reach on held-out
//! text → lower every linear layer → record a decode trace of the compiled model on a real
//! prompt → the program (manifest, image, trace). Each stage reports progress through a
//! callback, so the CLI can show it.

use crate::calibrate::{capture, Capture};
use crate::checkpoint::{Checkpoint, Matrix};
use crate::corpus::{fortunes, join, Split, SOURCE};
use crate::forward::{argmax, Batch, LinearExec, LinearSite};
use crate::passes::act_thresholds::{calibrate, Sparsify, Thresholds};
use crate::passes::allocate::{
    kind_levels, kind_thresholds, measure_kinds, owl, Allocation, InputKind, KindSensitivity, SENSITIVITY_DOCS,
};
use crate::passes::lower::{lower_linears, Layout};
use crate::passes::prune_weights::{prune_blocks, prune_model, PruneMethod};
use crate::tokenizer::TokenId;
use half::f16;
use lacuna_spec::graph::{LayerId, NodeId};
use lacuna_spec::program::{Program, Settings};
use lacuna_spec::trace::{Trace, TraceHeader, TraceInput, TraceReader};
use lacuna_spec::Arch;
use std::collections::BTreeMap;

/// What to compile.
#[derive(Clone, Debug)]
pub struct CompileOptions {
    /// Target weight sparsity of every block linear (0..1).
    pub weight_sparsity: f64,
    /// How to prune.
    pub method: PruneMethod,
    /// Target activation sparsity (0..1).
    pub act_sparsity: f64,
    /// Where the targets go: the same everywhere, or by measured sensitivity.
    pub allocation: Allocation,
    /// How each layer's job and layout are chosen.
    pub layout: Layout,
    /// The target architecture.
    pub arch: Arch,
    /// Calibration documents (4 fortunes each).
    pub calibration_docs: usize,
    /// Held-out documents (4 riddles each).
    pub held_out_docs: usize,
    /// Tokens per document at most.
    pub max_tokens: usize,
    /// The prompt of the recorded decode trace.
    pub prompt: String,
    /// Tokens generated (greedily) after the prompt in the trace.
    pub generate: usize,
}

impl CompileOptions {
    /// The defaults for an arch: 32 calibration and 8 held-out documents of up to 64 tokens, the
    /// trace of "The capital of France is" and 3 generated tokens.
    pub fn new(arch: Arch, weight_sparsity: f64, method: PruneMethod, act_sparsity: f64) -> Self {
        CompileOptions {
            weight_sparsity,
            method,
            act_sparsity,
            allocation: Allocation::Uniform,
            layout: Layout::Auto,
            arch,
            calibration_docs: 32,
            held_out_docs: 8,
            max_tokens: 64,
            prompt: "The capital of France is".into(),
            generate: 3,
        }
    }
}

/// A compiled program, in memory.
#[derive(Debug)]
pub struct Compiled {
    /// The manifest.
    pub program: Program,
    /// The memory image.
    pub image: Vec<u8>,
    /// The decode trace.
    pub trace: Trace,
    /// The generated text of the trace (the compiled model's greedy answer).
    pub generated: String,
    /// The checkpoint as compiled: pruned weights (f32).
    pub checkpoint: Checkpoint,
    /// The activation thresholds.
    pub thresholds: Thresholds,
    /// Each block's weight sparsity under the sensitivity allocation (empty when uniform).
    pub block_weight_sparsity: BTreeMap<LayerId, f64>,
    /// Each input kind's activation sparsity under the sensitivity allocation.
    pub act_levels: Option<BTreeMap<InputKind, f64>>,
}

/// Records each step's linear-layer inputs (FP16) while an inner executor computes.
pub struct Recorder<E> {
    /// The executor that computes.
    pub inner: E,
    /// Per step (position), per input node: the FP16 vector.
    pub steps: BTreeMap<usize, BTreeMap<NodeId, Vec<f16>>>,
}

impl<E: LinearExec> LinearExec for Recorder<E> {
    fn linear(&mut self, site: LinearSite, w: &Matrix, x: &[f32]) -> Vec<f32> {
        self.steps
            .entry(site.position)
            .or_default()
            .entry(site.input)
            .or_insert_with(|| x.iter().map(|&v| f16::from_f32(v)).collect());
        self.inner.linear(site, w, x)
    }
}

/// Compiles a checkpoint; `progress` is told each stage as it starts.
pub fn compile(
    mut ckpt: Checkpoint,
    opts: &CompileOptions,
    mut progress: impl FnMut(&str),
) -> Result<Compiled, String> {
    refuse_mixture(&ckpt)?;
    // Refused before the long work (pruning, captures, the sensitivity measurement).
    opts.allocation.check_act_target(opts.act_sparsity)?;
    let calib = texts(Split::Calibration, opts.calibration_docs)?;
    let mut calibration_tokens = 0;
    let mut block_weight_sparsity = BTreeMap::new();
    if opts.weight_sparsity > 0.0 {
        progress(&format!(
            "pruning to {:.0} % ({:?}, {})",
            100.0 * opts.weight_sparsity,
            opts.method,
            opts.allocation.name()
        ));
        let dense_capture = match needs_dense_capture(opts) {
            true => {
                let (cap, n) =
                    capture(&ckpt, &calib, opts.max_tokens, false).map_err(|e| format!("calibration: {e}"))?;
                calibration_tokens = n;
                Some(cap)
            }
            false => None,
        };
        block_weight_sparsity = prune(&mut ckpt, opts, dense_capture.as_ref())?;
    }
    let mut cal = None;
    if opts.act_sparsity > 0.0 {
        progress(&format!("calibrating activation thresholds for {:.0} %", 100.0 * opts.act_sparsity));
        let c = calibrate_pruned(&ckpt, opts, &mut progress)?;
        calibration_tokens = c.tokens;
        cal = Some(c);
    }
    let p = finish(&ckpt, cal.as_ref(), opts, calibration_tokens, progress)?;
    Ok(Compiled {
        program: p.program,
        image: p.image,
        trace: p.trace,
        generated: p.generated,
        checkpoint: ckpt,
        thresholds: p.thresholds,
        block_weight_sparsity,
        act_levels: p.act_levels,
    })
}

/// Why `ckpt` cannot become a program: a mixture of experts. A program runs every linear layer
/// each step on the core; a mixture's experts run on the expert unit as its routing says (issue
/// 16 brings their A8W4 image and program). The golden forward (`lacuna forward`) runs a mixture
/// already, and `lacuna compile DENSE --moe ExK` writes a derived mixture's MoE trace.
pub fn refuse_mixture(ckpt: &Checkpoint) -> Result<(), String> {
    match &ckpt.graph.config.moe {
        Some(m) => Err(format!(
            "{}: a mixture of {} experts (top {}) cannot be compiled to a program until the expert unit exists (issue 16); `lacuna forward` runs it",
            ckpt.file_name(),
            m.experts,
            m.top_k
        )),
        None => Ok(()),
    }
}

/// The first `n` documents (4 fortunes each) of a split of the text.
pub fn texts(split: Split, n: usize) -> Result<Vec<String>, String> {
    Ok(join(&fortunes(split)?, 4).into_iter().take(n).collect())
}

/// Whether pruning under `opts` reads the dense model's calibration capture (Wanda's input
/// norms, which OWL's outlier ratios read too; magnitude scores need none).
pub fn needs_dense_capture(opts: &CompileOptions) -> bool {
    opts.weight_sparsity > 0.0 && opts.method == PruneMethod::Wanda
}

/// Prunes `ckpt` (dense) to `opts.weight_sparsity` under its method and allocation;
/// `dense_capture` is the dense model's ([`needs_dense_capture`]). Returns each block's
/// sparsity (empty when uniform).
pub fn prune(
    ckpt: &mut Checkpoint,
    opts: &CompileOptions,
    dense_capture: Option<&Capture>,
) -> Result<BTreeMap<LayerId, f64>, String> {
    let x = opts.weight_sparsity;
    match opts.allocation {
        Allocation::Uniform => prune_model(ckpt, opts.method, x, dense_capture).map(|_| BTreeMap::new()),
        Allocation::Sensitivity => {
            let per_block = owl(ckpt, dense_capture, opts.method, x);
            prune_blocks(ckpt, opts.method, &|l| per_block.get(&l).copied().unwrap_or(x), dense_capture)
                .map(|_| per_block)
        }
    }
    .map_err(|e| e.to_string())
}

/// What the activation thresholds are calibrated from: the pruned model's calibration capture
/// and, under the sensitivity allocation, each input kind's measured sensitivity.
#[derive(Clone, Debug)]
pub struct Calibration {
    /// The capture.
    pub capture: Capture,
    /// Its tokens.
    pub tokens: usize,
    /// The measured sensitivity (sensitivity allocation only).
    pub kinds: Option<KindSensitivity>,
}

/// Calibrates the pruned `ckpt` for `opts` (what [`finish`] needs when `opts.act_sparsity > 0`).
pub fn calibrate_pruned(
    ckpt: &Checkpoint,
    opts: &CompileOptions,
    mut progress: impl FnMut(&str),
) -> Result<Calibration, String> {
    let calib = texts(Split::Calibration, opts.calibration_docs)?;
    // The sensitivity allocation may threshold the LM head's input: capture it too.
    let head = opts.allocation == Allocation::Sensitivity;
    let (capture, tokens) = capture(ckpt, &calib, opts.max_tokens, head).map_err(|e| format!("calibration: {e}"))?;
    let kinds = match opts.allocation {
        Allocation::Uniform => None,
        Allocation::Sensitivity => {
            progress("measuring each input kind's sensitivity (46 passes over 4 calibration documents)");
            let docs: Vec<Vec<TokenId>> = calib
                .iter()
                .take(SENSITIVITY_DOCS)
                .map(|t| ckpt.tokenizer.encode(t).into_iter().take(opts.max_tokens).collect())
                .collect();
            Some(measure_kinds(ckpt, &capture, &docs)?)
        }
    };
    Ok(Calibration { capture, tokens, kinds })
}

/// A program of a pruned model, before it is bundled with the checkpoint.
#[derive(Debug)]
pub struct ProgramParts {
    /// The manifest.
    pub program: Program,
    /// The memory image.
    pub image: Vec<u8>,
    /// The decode trace.
    pub trace: Trace,
    /// The trace's generated text.
    pub generated: String,
    /// The activation thresholds.
    pub thresholds: Thresholds,
    /// Each input kind's activation sparsity under the sensitivity allocation.
    pub act_levels: Option<BTreeMap<InputKind, f64>>,
}

/// The rest of a compile after pruning: the activation thresholds under the allocation (from
/// `cal`, the pruned model's calibration, needed when `opts.act_sparsity > 0`), the sparsity they reach
/// on the held-out text (skipped when `opts.held_out_docs` is 0), lowering, the program and its
/// decode trace.
pub fn finish(
    ckpt: &Checkpoint,
    cal: Option<&Calibration>,
    opts: &CompileOptions,
    calibration_tokens: usize,
    mut progress: impl FnMut(&str),
) -> Result<ProgramParts, String> {
    opts.allocation.check_act_target(opts.act_sparsity)?;
    let held = texts(Split::HeldOut, opts.held_out_docs)?;
    let mut thresholds = Thresholds::default();
    let mut held_out_act_sparsity = 0.0;
    let mut act_levels = None;
    if opts.act_sparsity > 0.0 {
        let cal = cal.ok_or("activation thresholds need the pruned model's calibration")?;
        thresholds = match &cal.kinds {
            None => calibrate(ckpt, &cal.capture, opts.act_sparsity),
            Some(k) => {
                let levels = kind_levels(k, opts.act_sparsity);
                let t = kind_thresholds(ckpt, &cal.capture, &levels, opts.act_sparsity);
                act_levels = Some(levels);
                t
            }
        }
        .map_err(|e| e.to_string())?;
        if !held.is_empty() {
            progress("measuring activation sparsity on held-out text");
            let held_tokens: Vec<Vec<TokenId>> =
                held.iter().map(|t| ckpt.tokenizer.encode(t).into_iter().take(opts.max_tokens).collect()).collect();
            let mut sp = Sparsify::new(&thresholds);
            crate::forward::run_sequences(ckpt, &held_tokens, 16, &mut sp, None).map_err(|e| e.to_string())?;
            held_out_act_sparsity = sp.sparsity();
        }
    }

    progress(&format!("lowering {} linear layers for arch {}", ckpt.graph.linears().count(), opts.arch.name));
    let lowered = lower_linears(ckpt, &thresholds, &opts.arch, opts.layout).map_err(|e| e.to_string())?;
    let settings = Settings {
        weight_sparsity: opts.weight_sparsity,
        prune_method: format!("{:?}", opts.method).to_lowercase(),
        act_sparsity: opts.act_sparsity,
        allocation: opts.allocation.name().into(),
        layout: opts.layout,
        calibration: format!(
            "{SOURCE}: fortunes, {} documents of 4, up to {} tokens",
            texts(Split::Calibration, opts.calibration_docs)?.len(),
            opts.max_tokens
        ),
        calibration_tokens,
        held_out_act_sparsity,
        held_out: format!("{SOURCE}: riddles, {} documents of 4", held.len()),
    };
    let (program, image) = crate::program::assemble(&ckpt.graph, &lowered, &opts.arch, model_name(ckpt), settings);
    progress("recording the decode trace");
    // A uniform trace's text is what it was before allocations existed (committed traces
    // compare byte for byte).
    let mut settings_text = format!(
        "weights {:.0} % {:?}, activations {:.0} %",
        100.0 * opts.weight_sparsity,
        opts.method,
        100.0 * opts.act_sparsity
    );
    if opts.allocation != Allocation::Uniform {
        settings_text.push_str(&format!(", {} allocation", opts.allocation.name()));
    }
    let (trace, generated) =
        record_trace(ckpt, &thresholds, &program.layers, &opts.prompt, opts.generate, settings_text)?;
    Ok(ProgramParts { program, image, trace, generated, thresholds, act_levels })
}

/// How programs and traces name the model: its name and file.
fn model_name(ckpt: &Checkpoint) -> String {
    format!("{} ({})", ckpt.name, ckpt.file_name())
}

/// Records a decode trace of `ckpt` (pruned) with `thresholds`: the prompt, one token at a time,
/// then `generate` greedy tokens; each step's linear-layer inputs in FP16. `layers` (the
/// program's) name the inputs and their readers. Returns the trace and the generated text.
pub fn record_trace(
    ckpt: &Checkpoint,
    thresholds: &Thresholds,
    layers: &[lacuna_spec::program::ProgramLayer],
    prompt_text: &str,
    generate: usize,
    settings: String,
) -> Result<(Trace, String), String> {
    let prompt = ckpt.tokenizer.encode(prompt_text);
    if prompt.is_empty() {
        return Err("the trace prompt is empty".into());
    }
    let mut rec = Recorder { inner: Sparsify::new(thresholds), steps: BTreeMap::new() };
    let mut seq = Batch::new(ckpt, 1);
    let mut tokens = prompt.clone();
    let mut logits = Vec::new();
    for &t in &prompt {
        logits = seq.step(&[(0, t)], &mut rec).map_err(|e| e.to_string())?.remove(0);
    }
    let mut generated = Vec::new();
    for i in 0..generate {
        let t = argmax(&logits);
        generated.push(t);
        if i + 1 < generate {
            tokens.push(t);
            logits = seq.step(&[(0, t)], &mut rec).map_err(|e| e.to_string())?.remove(0);
        }
    }
    // The trace's inputs: every distinct linear input, in first-use order, with its readers.
    let mut inputs: Vec<TraceInput> = Vec::new();
    for l in layers {
        let reader = TraceReader { node: l.node, name: l.name.clone(), threshold_bits: l.threshold_bits };
        match inputs.iter_mut().find(|i| i.node == l.input) {
            Some(i) => i.readers.push(reader),
            None => inputs.push(TraceInput {
                node: l.input,
                name: ckpt.graph.node_at(l.input).name.clone(),
                len: l.cols as usize,
                readers: vec![reader],
            }),
        }
    }
    let steps =
        (0..tokens.len()).map(|pos| inputs.iter().map(|i| rec.steps[&pos][&i.node].clone()).collect()).collect();
    let trace = Trace {
        header: TraceHeader {
            model: model_name(ckpt),
            settings,
            prompt: prompt_text.into(),
            tokens: tokens.iter().map(|t| t.0).collect(),
            prompt_tokens: prompt.len(),
            inputs,
            routing: None,
        },
        steps,
    };
    Ok((trace, ckpt.tokenizer.decode(&generated)))
}
