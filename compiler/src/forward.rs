//! The golden forward pass: one decode step of a [`Graph`] on the CPU in f32, with a KV cache.
//!
//! Contract: [`Forward::step`] runs the graph's nodes in order for one token at the next
//! position and returns the logits; attention appends the step's key and value to each layer's
//! cache first, so a prompt is fed one token at a time and every later step attends to all
//! earlier ones. Every linear layer goes through a [`LinearExec`], the seam the compiler's
//! passes use: [`Dense`] is the plain f32 product; calibration records the inputs, activation
//! sparsity zeroes them, the hardware path runs them as spMspV jobs. Everything else is f32
//! arithmetic written out here (RMSNorm, RoPE on interleaved pairs as GGUF stores Llama or on
//! half-split pairs as Gemma, sliding-window attention, softmax, SiLU, GELU).
//!
//! Numerics: products are summed in f32 in blocks of 8 lanes (the order is fixed, so results
//! are reproducible run to run and across thread counts).

use crate::checkpoint::{Checkpoint, Matrix};
pub use crate::kernels::{argmax, dot, matvec, matvec_batch, nll, rms_norm, route, silu, softmax};
use crate::kernels::{gelu_tanh, rope, rope_halves};
use crate::tokenizer::TokenId;
use lacuna_spec::graph::{LayerId, LinearKind, NodeId, Op, RopeStyle};
use std::collections::BTreeMap;

/// Why a step could not run.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ForwardError {
    /// The token id is not in the vocabulary.
    #[error("token {0} is outside the vocabulary of {1}")]
    BadToken(u32, usize),
    /// The context is full.
    #[error("the context of {0} tokens is full")]
    ContextFull(usize),
    /// A step feeds one sequence twice (a tree goes through [`Batch::feed`]).
    #[error("sequence {0} is fed twice in one step")]
    TwiceInOneStep(usize),
    /// A fed token's position is not its sequence's committed length plus its context.
    #[error("a token at position {0} cannot follow {1} committed tokens and {2} in its context")]
    BadContext(usize, usize, usize),
    /// A fed token's context names a slot that does not exist or was not fed that deep.
    #[error("slot {0} is not in the sequence's scratch at this block")]
    NoSlot(usize),
}

/// Where a linear layer sits, for the executor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinearSite {
    /// The graph node.
    pub node: NodeId,
    /// The node of its input vector (q, k and v share one; so do gate and up).
    pub input: NodeId,
    /// What it computes.
    pub kind: LinearKind,
    /// Its block (none for the LM head).
    pub layer: Option<LayerId>,
    /// Position of the token in the sequence.
    pub position: usize,
}

/// Runs the linear layers of a step.
pub trait LinearExec {
    /// Returns `w x` (or what the executor makes of it) for the layer at `site`.
    fn linear(&mut self, site: LinearSite, w: &Matrix, x: &[f32]) -> Vec<f32>;

    /// The same layer for several sequences at once (one vector each, same order as `sites`);
    /// it must give what [`LinearExec::linear`] gives for each. The default runs them one by one.
    fn linear_batch(&mut self, sites: &[LinearSite], w: &Matrix, xs: &[&[f32]]) -> Vec<Vec<f32>> {
        sites.iter().zip(xs).map(|(s, x)| self.linear(*s, w, x)).collect()
    }
}

/// The dense f32 product.
#[derive(Clone, Copy, Debug, Default)]
pub struct Dense;

impl LinearExec for Dense {
    fn linear(&mut self, _: LinearSite, w: &Matrix, x: &[f32]) -> Vec<f32> {
        matvec(w, x)
    }

    fn linear_batch(&mut self, _: &[LinearSite], w: &Matrix, xs: &[&[f32]]) -> Vec<Vec<f32>> {
        matvec_batch(w, xs)
    }
}

/// One layer's cache: keys and values of every committed position, `kv_heads * head_dim` each.
#[derive(Clone, Debug, Default)]
struct KvCache {
    k: Vec<f32>,
    v: Vec<f32>,
}

/// A fed token whose keys and values wait, uncommitted, in its sequence's scratch (a node of a
/// draft tree). [`Batch::commit`] appends chosen slots to the cache; [`Batch::discard`] drops them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot(pub usize);

/// One token fed to [`Batch::feed`]: its sequence, its position (RoPE), and the uncommitted
/// tokens it attends to besides the committed cache (its ancestors in a tree, root first).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Feed {
    /// The sequence.
    pub seq: usize,
    /// The token.
    pub token: TokenId,
    /// Its position: the committed length plus its depth in the tree.
    pub position: usize,
    /// Earlier slots of the same sequence it attends to, in position order (then itself).
    pub context: Vec<Slot>,
}

/// One sequence's state: its caches, the position of its next token, and uncommitted tokens'
/// keys and values (`[slot][layer]`; none for a block the pass skipped).
#[derive(Clone, Debug)]
struct Sequence {
    cache: Vec<KvCache>,
    position: usize,
    scratch: Vec<Vec<Option<KeyValue>>>,
}

/// One token's key and value at one block.
type KeyValue = (Vec<f32>, Vec<f32>);

/// Every node's output for each fed token (`[node][token]`).
pub type NodeValues = Vec<Vec<Vec<f32>>>;

/// Runs a block's mixture in place of the graph's experts: the seam the expert policies of
/// speculative decoding use (which experts and which of their channels each token gets).
pub trait MixtureExec {
    /// For the tokens of one [`Batch::feed`] (in feed order) at block `layer`: each one's FFN
    /// input `x` and router logits. Says how the block's mixture runs for them.
    fn mixture(&mut self, layer: LayerId, x: &[&[f32]], logits: &[&[f32]]) -> Mixing;
}

/// How a block's mixture runs ([`MixtureExec::mixture`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Mixing {
    /// As the graph says: its routing, its experts.
    Graph,
    /// The graph's experts under these routing weights (one vector per token).
    Routes(Vec<Vec<f32>>),
    /// These routing weights and these outputs (one pair per token); the graph's experts do
    /// not run.
    Outputs(Vec<(Vec<f32>, Vec<f32>)>),
}

/// Several sequences decoded side by side: each step feeds one token to any subset of them,
/// and their linear layers run as one batch ([`LinearExec::linear_batch`]). Each sequence's
/// results are bit-identical to decoding it alone with [`Forward`], and a token fed as a tree
/// node ([`Batch::feed`]) gets the bits it would get fed alone after its ancestors.
pub struct Batch<'a> {
    ckpt: &'a Checkpoint,
    seqs: Vec<Sequence>,
    /// RoPE inverse frequencies (one per pair of a head) of each node's base (empty for nodes
    /// that are no RoPE).
    inv_freq: Vec<Vec<f32>>,
    /// The block of each node (from its name, `blk.N.*`).
    block_of: Vec<Option<usize>>,
    /// Per block: the residual entering it (its norm's input) and its last node (the residual
    /// leaving it).
    blocks: Vec<(NodeId, NodeId)>,
}

impl<'a> Batch<'a> {
    /// `n` empty sequences.
    pub fn new(ckpt: &'a Checkpoint, n: usize) -> Self {
        let c = &ckpt.graph.config;
        let frequencies =
            |base: f32| (0..c.head_dim / 2).map(|i| 1.0 / base.powf((2 * i) as f32 / c.head_dim as f32)).collect();
        let inv_freq = (ckpt.graph.nodes.iter())
            .map(|n| match n.op {
                Op::Rope { base, .. } => frequencies(base.unwrap_or(c.rope_base)),
                _ => Vec::new(),
            })
            .collect();
        let seq = Sequence { cache: vec![KvCache::default(); c.layers], position: 0, scratch: Vec::new() };
        let nodes = &ckpt.graph.nodes;
        let block_of: Vec<Option<usize>> =
            nodes.iter().map(|n| n.name.strip_prefix("blk.")?.split('.').next()?.parse().ok()).collect();
        let blocks = (0..c.layers)
            .map(|l| {
                let first = block_of.iter().position(|&b| b == Some(l)).expect("every block has nodes");
                let last = block_of.iter().rposition(|&b| b == Some(l)).expect("every block has nodes");
                let Op::RmsNorm { input, .. } = nodes[first].op else { panic!("block {l} starts with its norm") };
                assert!(matches!(nodes[last].op, Op::Add { .. }), "block {l} ends with its residual");
                (input, NodeId(last as u32))
            })
            .collect();
        Batch { ckpt, seqs: vec![seq; n], inv_freq, block_of, blocks }
    }

    /// Tokens committed so far by sequence `s`.
    pub fn position(&self, s: usize) -> usize {
        self.seqs[s].position
    }

    /// Feeds `(sequence, token)` pairs (each sequence at most once) and returns their logits.
    pub fn step(
        &mut self,
        tokens: &[(usize, TokenId)],
        exec: &mut dyn LinearExec,
    ) -> Result<Vec<Vec<f32>>, ForwardError> {
        Ok(self.step_values(tokens, exec)?.pop().unwrap_or_default())
    }

    /// Feeds `(sequence, token)` pairs and returns every node's output for each (`[node][pair]`).
    pub fn step_values(
        &mut self,
        tokens: &[(usize, TokenId)],
        exec: &mut dyn LinearExec,
    ) -> Result<Vec<Vec<Vec<f32>>>, ForwardError> {
        self.step_nodes(tokens, exec, self.ckpt.graph.nodes.len())
    }

    /// Feeds `(sequence, token)` pairs but stops before the logits (the LM head, a fifth of
    /// the step's weights): for calibration runs that only look inside the blocks.
    pub fn step_hidden(&mut self, tokens: &[(usize, TokenId)], exec: &mut dyn LinearExec) -> Result<(), ForwardError> {
        self.step_nodes(tokens, exec, self.ckpt.graph.nodes.len() - 1).map(|_| ())
    }

    fn step_nodes(
        &mut self,
        tokens: &[(usize, TokenId)],
        exec: &mut dyn LinearExec,
        nodes: usize,
    ) -> Result<Vec<Vec<Vec<f32>>>, ForwardError> {
        if let Some(&(s, _)) = tokens.iter().enumerate().find_map(|(i, t)| tokens[..i].iter().find(|u| u.0 == t.0)) {
            return Err(ForwardError::TwiceInOneStep(s));
        }
        let feeds: Vec<Feed> = tokens
            .iter()
            .map(|&(seq, token)| Feed { seq, token, position: self.seqs[seq].position, context: Vec::new() })
            .collect();
        let (slots, values) = self.feed(&feeds, exec, None, nodes, &[])?;
        for (f, s) in feeds.iter().zip(slots) {
            self.commit(f.seq, &[s]);
        }
        Ok(values)
    }

    /// Appends the keys and values of `slots` (in order; each fed through every block) to
    /// sequence `s`'s cache, advances its position by their number and drops the other slots.
    pub fn commit(&mut self, s: usize, slots: &[Slot]) {
        let seq = &mut self.seqs[s];
        for slot in slots {
            let kv = &seq.scratch[slot.0];
            for (cache, kv) in seq.cache.iter_mut().zip(kv) {
                let (k, v) = kv.as_ref().unwrap_or_else(|| panic!("commit: slot {} skipped a block", slot.0));
                cache.k.extend_from_slice(k);
                cache.v.extend_from_slice(v);
            }
        }
        seq.position += slots.len();
        seq.scratch.clear();
    }

    /// Drops sequence `s`'s uncommitted slots.
    pub fn discard(&mut self, s: usize) {
        self.seqs[s].scratch.clear();
    }

    /// Runs the first `nodes` nodes of the graph for `feeds`, but not the blocks `skip` marks
    /// (a skipped block passes its input on, as a residual stream without it would), and keeps
    /// each token's keys and values uncommitted; returns their slots and every node's output for
    /// each (`[node][feed]`; empty for skipped nodes). `mixture`, where given, runs the blocks'
    /// mixtures ([`MixtureExec`]).
    pub fn feed(
        &mut self,
        feeds: &[Feed],
        exec: &mut dyn LinearExec,
        mut mixture: Option<&mut dyn MixtureExec>,
        nodes: usize,
        skip: &[bool],
    ) -> Result<(Vec<Slot>, NodeValues), ForwardError> {
        let ckpt = self.ckpt;
        let c = &ckpt.graph.config;
        for f in feeds {
            if f.token.0 as usize >= c.vocab {
                return Err(ForwardError::BadToken(f.token.0, c.vocab));
            }
            if f.position >= c.context {
                return Err(ForwardError::ContextFull(c.context));
            }
            let seq = &self.seqs[f.seq];
            if f.position != seq.position + f.context.len() {
                return Err(ForwardError::BadContext(f.position, seq.position, f.context.len()));
            }
        }
        // Slots in feed order: a token's context may name slots of earlier feeds of this call.
        let mut slots = Vec::with_capacity(feeds.len());
        for f in feeds {
            let scratch = &mut self.seqs[f.seq].scratch;
            if let Some(s) = f.context.iter().find(|s| s.0 >= scratch.len()) {
                let fed = slots.len();
                for (g, s) in feeds[..fed].iter().zip(&slots).rev() {
                    let Slot(s) = *s;
                    self.seqs[g.seq].scratch.truncate(s);
                }
                return Err(ForwardError::NoSlot(s.0));
            }
            scratch.push(vec![None; c.layers]);
            slots.push(Slot(scratch.len() - 1));
        }
        let mut values: Vec<Vec<Vec<f32>>> = Vec::with_capacity(ckpt.graph.nodes.len());
        // The mixture outputs the hook gave, by route node.
        let mut mixed: BTreeMap<NodeId, Vec<Vec<f32>>> = BTreeMap::new();
        for (i, node) in ckpt.graph.nodes.iter().enumerate().take(nodes) {
            let val = |id: NodeId, b: usize| &values[id.0 as usize][b];
            if let Some(l) = self.block_of[i].filter(|&l| skip.get(l) == Some(&true)) {
                // A skipped block: nothing, but its last node (the residual out) is its input.
                let (entry, exit) = self.blocks[l];
                let out =
                    if i == exit.0 as usize { values[entry.0 as usize].clone() } else { vec![Vec::new(); feeds.len()] };
                values.push(out);
                continue;
            }
            let out: Vec<Vec<f32>> = match node.op {
                Op::Linear { input, weight, kind, layer, expert } => {
                    // An expert's layer runs for the tokens whose routing chose it; the others get
                    // zeros, which `Combine` does not read.
                    let runs: Vec<usize> = (0..feeds.len())
                        .filter(|&b| {
                            expert.is_none_or(|slot| {
                                !mixed.contains_key(&slot.route) && val(slot.route, b)[slot.expert.0 as usize] != 0.0
                            })
                        })
                        .collect();
                    let sites: Vec<LinearSite> = runs
                        .iter()
                        .map(|&b| LinearSite {
                            node: NodeId(i as u32),
                            input,
                            kind,
                            layer,
                            position: feeds[b].position,
                        })
                        .collect();
                    let xs: Vec<&[f32]> = runs.iter().map(|&b| val(input, b).as_slice()).collect();
                    let ys =
                        if runs.is_empty() { Vec::new() } else { exec.linear_batch(&sites, ckpt.weight(weight), &xs) };
                    assert_eq!(ys.len(), runs.len(), "an executor returns one vector per input");
                    let mut out = vec![Vec::new(); feeds.len()];
                    for (&b, y) in runs.iter().zip(ys) {
                        out[b] = y;
                    }
                    for o in out.iter_mut().filter(|o| o.is_empty()) {
                        *o = vec![0.0; node.len];
                    }
                    out
                }
                Op::Route { logits, top_k, gating } => {
                    let given = mixture.as_mut().and_then(|m| {
                        let Op::Linear { input, layer: Some(layer), .. } = ckpt.graph.node_at(logits).op else {
                            return None;
                        };
                        let xs: Vec<&[f32]> = (0..feeds.len()).map(|b| val(input, b).as_slice()).collect();
                        let ls: Vec<&[f32]> = (0..feeds.len()).map(|b| val(logits, b).as_slice()).collect();
                        Some(m.mixture(layer, &xs, &ls))
                    });
                    let routes = |given: Vec<Vec<f32>>| {
                        assert_eq!(given.len(), feeds.len(), "a mixture hook answers for every token");
                        given
                    };
                    match given.unwrap_or(Mixing::Graph) {
                        Mixing::Graph => (0..feeds.len()).map(|b| route(val(logits, b), top_k, gating)).collect(),
                        Mixing::Routes(given) => routes(given),
                        Mixing::Outputs(given) => {
                            let (given, outs): (Vec<_>, Vec<_>) = given.into_iter().unzip();
                            mixed.insert(NodeId(i as u32), outs);
                            routes(given)
                        }
                    }
                }
                Op::Combine { route, .. } if mixed.contains_key(&route) => mixed.remove(&route).unwrap_or_default(),
                _ => {
                    let mut outs = Vec::with_capacity(feeds.len());
                    for (b, f) in feeds.iter().enumerate() {
                        outs.push(match node.op {
                            Op::Embed { table } => ckpt.weight(table).row(f.token.0 as usize).to_vec(),
                            Op::RmsNorm { input, weight, heads } => {
                                let x = val(input, b);
                                let gain = &ckpt.weight(weight).data;
                                // The graph's check holds gain x heads = the input's length.
                                debug_assert_eq!(gain.len() * heads, x.len(), "{}", node.name);
                                x.chunks_exact(gain.len().max(1)).flat_map(|x| rms_norm(x, gain, c.rms_eps)).collect()
                            }
                            Op::Scale { input, factor } => val(input, b).iter().map(|x| x * factor).collect(),
                            Op::Rope { input, style, .. } => {
                                let mut x = val(input, b).clone();
                                let inv_freq = &self.inv_freq[i];
                                match style {
                                    RopeStyle::Interleaved => rope(&mut x, c.head_dim, inv_freq, f.position),
                                    RopeStyle::Halves => rope_halves(&mut x, c.head_dim, inv_freq, f.position),
                                }
                                x
                            }
                            Op::Attention { q, k, v, layer, window } => {
                                let l = layer.0 as usize;
                                let seq = &mut self.seqs[f.seq];
                                seq.scratch[slots[b].0][l] = Some((val(k, b).clone(), val(v, b).clone()));
                                let mut rows = Vec::with_capacity(f.context.len() + 1);
                                for s in f.context.iter().chain([&slots[b]]) {
                                    let (k, v) = seq.scratch[s.0][l].as_ref().ok_or(ForwardError::NoSlot(s.0))?;
                                    rows.push((k.as_slice(), v.as_slice()));
                                }
                                let shape = Heads { heads: c.heads, kv_heads: c.kv_heads, head_dim: c.head_dim };
                                attention(val(q, b), &seq.cache[l], &rows, shape, window)
                            }
                            Op::SwiGlu { gate, up } => {
                                val(gate, b).iter().zip(val(up, b)).map(|(&g, &u)| silu(g) * u).collect()
                            }
                            Op::GeGlu { gate, up } => {
                                val(gate, b).iter().zip(val(up, b)).map(|(&g, &u)| gelu_tanh(g) * u).collect()
                            }
                            Op::Add { a, b: r } => val(a, b).iter().zip(val(r, b)).map(|(x, y)| x + y).collect(),
                            Op::Combine { route, ref experts, mean } => {
                                let mut y = vec![0.0f32; node.len];
                                for (i, (&w, &e)) in val(route, b).iter().zip(experts).enumerate() {
                                    if w != 0.0 {
                                        y.iter_mut().zip(val(e, b)).for_each(|(y, &v)| *y += w * v);
                                    } else if let Some(mean) = mean {
                                        y.iter_mut().zip(ckpt.weight(mean).row(i)).for_each(|(y, &v)| *y += v);
                                    }
                                }
                                y
                            }
                            Op::Linear { .. } | Op::Route { .. } => unreachable!("handled above"),
                        });
                    }
                    outs
                }
            };
            debug_assert!(out.iter().all(|o| o.len() == node.len), "{}", node.name);
            values.push(out);
        }
        Ok((slots, values))
    }
}

/// One sequence being decoded: the checkpoint, the caches and the next position.
pub struct Forward<'a>(Batch<'a>);

impl<'a> Forward<'a> {
    /// An empty sequence.
    pub fn new(ckpt: &'a Checkpoint) -> Self {
        Forward(Batch::new(ckpt, 1))
    }

    /// Tokens decoded so far (the position of the next one).
    pub fn position(&self) -> usize {
        self.0.position(0)
    }

    /// Runs one step for `token` and returns the logits.
    pub fn step(&mut self, token: TokenId, exec: &mut dyn LinearExec) -> Result<Vec<f32>, ForwardError> {
        Ok(self.0.step(&[(0, token)], exec)?.pop().unwrap_or_default())
    }

    /// Runs one step and returns every node's output (the last is the logits).
    pub fn step_values(&mut self, token: TokenId, exec: &mut dyn LinearExec) -> Result<Vec<Vec<f32>>, ForwardError> {
        Ok(self.0.step_values(&[(0, token)], exec)?.into_iter().map(|mut v| v.pop().unwrap_or_default()).collect())
    }
}

/// A callback given (list, position, logits) for each step of [`run_sequences`].
pub type StepLogits<'a> = dyn FnMut(usize, usize, &[f32]) + 'a;

/// Feeds each token list through its own sequence (teacher forcing), up to `batch` sequences
/// side by side, and hands every step's logits to `each(list, position, logits)`; with
/// `each` = `None` the logits are not computed at all.
pub fn run_sequences(
    ckpt: &Checkpoint,
    lists: &[Vec<TokenId>],
    batch: usize,
    exec: &mut dyn LinearExec,
    mut each: Option<&mut StepLogits>,
) -> Result<(), ForwardError> {
    for (g, group) in lists.chunks(batch.max(1)).enumerate() {
        let mut b = Batch::new(ckpt, group.len());
        let longest = group.iter().map(Vec::len).max().unwrap_or(0);
        for pos in 0..longest {
            let tokens: Vec<(usize, TokenId)> =
                group.iter().enumerate().filter_map(|(s, l)| l.get(pos).map(|&t| (s, t))).collect();
            match each.as_mut() {
                Some(each) => {
                    let logits = b.step(&tokens, exec)?;
                    for (&(s, _), l) in tokens.iter().zip(&logits) {
                        each(g * batch.max(1) + s, pos, l);
                    }
                }
                None => b.step_hidden(&tokens, exec)?,
            }
        }
    }
    Ok(())
}

/// The attention heads' shape.
#[derive(Clone, Copy)]
struct Heads {
    heads: usize,
    kv_heads: usize,
    head_dim: usize,
}

/// One query over the cache and then `extra` (uncommitted keys and values, the query's own
/// last): per head, softmax of the scaled scores against every key of its KV group, then the
/// weighted sum of the values, in position order (a token attends to the same keys in the same
/// order whether they were committed or not, so it gets the same bits). With a `window`, only
/// the last `window` positions (the query's own included) take part.
fn attention(q: &[f32], cache: &KvCache, extra: &[(&[f32], &[f32])], shape: Heads, window: Option<usize>) -> Vec<f32> {
    let Heads { heads, kv_heads, head_dim: hd } = shape;
    let kv_dim = kv_heads * hd;
    let positions = cache.k.len() / kv_dim;
    let group = heads / kv_heads;
    let scale = 1.0 / (hd as f32).sqrt();
    let mut out = vec![0f32; heads * hd];
    for (h, o) in out.chunks_exact_mut(hd).enumerate() {
        let qh = &q[h * hd..(h + 1) * hd];
        let g = h / group;
        let key = |p: usize| match p.checked_sub(positions) {
            None => &cache.k[p * kv_dim + g * hd..][..hd],
            Some(e) => &extra[e].0[g * hd..][..hd],
        };
        let value = |p: usize| match p.checked_sub(positions) {
            None => &cache.v[p * kv_dim + g * hd..][..hd],
            Some(e) => &extra[e].1[g * hd..][..hd],
        };
        let all = positions + extra.len();
        let first = window.map_or(0, |w| all.saturating_sub(w));
        let mut scores: Vec<f32> = (first..all).map(|p| dot(qh, key(p)) * scale).collect();
        softmax(&mut scores);
        for (p, s) in (first..all).zip(&scores) {
            o.iter_mut().zip(value(p)).for_each(|(o, v)| *o += s * v);
        }
    }
    out
}

/// Greedy decoding: feeds the prompt, then `new` tokens, each the argmax of the last logits
/// (nothing for an empty prompt).
pub fn greedy(
    ckpt: &Checkpoint,
    prompt: &[TokenId],
    new: usize,
    exec: &mut dyn LinearExec,
) -> Result<Vec<TokenId>, ForwardError> {
    let mut f = Forward::new(ckpt);
    if prompt.is_empty() {
        return Ok(Vec::new());
    }
    let mut logits = Vec::new();
    for &t in prompt {
        logits = f.step(t, exec)?;
    }
    let mut out = Vec::new();
    for _ in 0..new {
        let t = argmax(&logits);
        out.push(t);
        if out.len() < new {
            logits = f.step(t, exec)?;
        }
    }
    Ok(out)
}
