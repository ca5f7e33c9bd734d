//! The forward pass used by search: im2col + SGEMM on the CPU, single-threaded.
//!
//! Batch norm is folded into the convolutions when the weights are loaded, so a layer is
//! one matrix product plus bias and ReLU. Activations are laid out channel-major over the
//! whole batch (`[channels][batch · board]`), so each convolution is a single GEMM
//! `W[out][in·9] × columns[in·9][batch · board]`. One [`Network`] (read-only, shareable)
//! serves any number of threads, each with its own [`Scratch`]; batches of 8–16 keep
//! the scratch in cache.

use crate::arch::{Architecture, BN_EPSILON};
use crate::weights::{find_tensor, NamedTensor, WeightFile};
use crate::NnError;

/// A convolution with batch norm folded in: `w` is `[out][in · k · k]`.
#[derive(Clone, Debug)]
pub(crate) struct Conv {
    pub(crate) inputs: usize,
    pub(crate) outputs: usize,
    pub(crate) kernel: usize,
    pub(crate) w: Vec<f32>,
    pub(crate) b: Vec<f32>,
}

/// A linear layer: `w` is `[in][out]` (burn's layout).
#[derive(Clone, Debug)]
struct Dense {
    inputs: usize,
    outputs: usize,
    w: Vec<f32>,
    b: Vec<f32>,
}

/// A network ready for inference.
#[derive(Clone, Debug)]
pub struct Network {
    arch: Architecture,
    stem: Conv,
    blocks: Vec<Block>,
    policy_conv: Conv,
    policy_fc: Dense,
    value_conv: Conv,
    value_fc1: Dense,
    value_fc2: Dense,
    /// KataGo's heads (see [`crate::Heads`]): per-point policy logits, score, ownership.
    aux: Option<AuxHeads>,
}

/// A residual block: two convolutions, and between them a global-pooling branch's
/// bias per channel where the architecture puts one. The branch's convolution reads
/// the same input as the first, so the two are one convolution here (`first`'s
/// outputs are the block's channels, then the branch's): one im2col, one GEMM.
#[derive(Clone, Debug)]
struct Block {
    first: Conv,
    second: Conv,
    pool_fc: Option<Dense>,
}

/// `a` and `b` (same inputs and kernel) as one convolution: `a`'s outputs, then `b`'s.
fn stack(a: Conv, b: Conv) -> Result<Conv, NnError> {
    if a.inputs != b.inputs || a.kernel != b.kernel {
        return Err(NnError::Mismatch(
            "a pooling branch's convolution disagrees with its block's".into(),
        ));
    }
    Ok(Conv {
        outputs: a.outputs + b.outputs,
        w: [a.w, b.w].concat(),
        b: [a.b, b.b].concat(),
        ..a
    })
}

#[derive(Clone, Debug)]
struct AuxHeads {
    policy_point: Conv,
    score_fc: Dense,
    ownership_conv: Conv,
}

/// What a network with auxiliary heads predicts besides policy and value.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AuxOutput {
    /// Final score lead of the side to move, in points, one per position.
    pub score: Vec<f32>,
    /// Final owner of every point (+1 the side to move, −1 the other), `points` per
    /// position.
    pub ownership: Vec<f32>,
}

/// Per-thread working memory of [`Network::forward`].
#[derive(Default, Debug)]
pub struct Scratch {
    x: Vec<f32>,
    y: Vec<f32>,
    t: Vec<f32>,
    cols: Vec<f32>,
    flat: Vec<f32>,
    hidden: Vec<f32>,
}

/// `c = a · b (+ c if accumulate)`, all row-major and contiguous: `a` is m×k, `b` k×n,
/// `c` m×n.
pub fn gemm(m: usize, k: usize, n: usize, a: &[f32], b: &[f32], c: &mut [f32], accumulate: bool) {
    assert!(a.len() >= m * k && b.len() >= k * n && c.len() >= m * n);
    if m == 0 || n == 0 {
        return;
    }
    let beta = if accumulate { 1.0 } else { 0.0 };
    // SAFETY: sgemm reads a[i·k + j] (i < m, j < k) and b[i·n + j] (i < k, j < n) and
    // writes c[i·n + j] (i < m, j < n) through the given row strides and unit column
    // strides; the assertion above puts every such index inside its slice. `c` is a
    // unique borrow, so it aliases neither `a` nor `b`. With beta = 0 sgemm does not
    // read c's old contents, so uninitialised-looking data there is harmless (it is
    // initialised f32 anyway).
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            1.0,
            a.as_ptr(),
            k as isize,
            1,
            b.as_ptr(),
            n as isize,
            1,
            beta,
            c.as_mut_ptr(),
            n as isize,
            1,
        );
    }
}

/// The convolution `{prefix}.conv` with the batch norm `{prefix}.bn` folded in.
pub(crate) fn fold(tensors: &[NamedTensor], prefix: &str) -> Result<Conv, NnError> {
    let w = find_tensor(tensors, &format!("{prefix}.conv.weight"))?;
    let [outputs, inputs, kh, kw] = <[usize; 4]>::try_from(w.shape.as_slice())
        .map_err(|_| NnError::Mismatch(format!("{prefix}.conv.weight is not 4-D")))?;
    if kh != kw {
        return Err(NnError::Mismatch(format!("{prefix}: non-square kernel")));
    }
    let get = |name: &str| -> Result<&[f32], NnError> {
        let t = find_tensor(tensors, &format!("{prefix}.bn.{name}"))?;
        if t.data.len() != outputs {
            return Err(NnError::Mismatch(format!(
                "{prefix}.bn.{name} has the wrong length"
            )));
        }
        Ok(&t.data)
    };
    let (gamma, beta, mean, var) = (
        get("gamma")?,
        get("beta")?,
        get("running_mean")?,
        get("running_var")?,
    );
    let per_out = inputs * kh * kw;
    let mut folded = w.data.clone();
    let mut bias = vec![0.0; outputs];
    for o in 0..outputs {
        let scale = gamma[o] / (var[o] + BN_EPSILON as f32).sqrt();
        for x in &mut folded[o * per_out..(o + 1) * per_out] {
            *x *= scale;
        }
        bias[o] = beta[o] - mean[o] * scale;
    }
    Ok(Conv {
        inputs,
        outputs,
        kernel: kh,
        w: folded,
        b: bias,
    })
}

/// A convolution with its own bias and no batch norm (`{prefix}.weight`, `.bias`).
fn plain_conv(file: &WeightFile, prefix: &str) -> Result<Conv, NnError> {
    let w = file.tensor(&format!("{prefix}.weight"))?;
    let [outputs, inputs, kh, kw] = <[usize; 4]>::try_from(w.shape.as_slice())
        .map_err(|_| NnError::Mismatch(format!("{prefix}.weight is not 4-D")))?;
    if kh != kw {
        return Err(NnError::Mismatch(format!("{prefix}: non-square kernel")));
    }
    let b = bias(file, prefix, outputs)?;
    Ok(Conv {
        inputs,
        outputs,
        kernel: kh,
        w: w.data.clone(),
        b,
    })
}

/// Means then maxima of each of `channels` channels over every position's board: `x`
/// is `[channels][batch · area]`, `out` `[batch][2 · channels]` (burn's `global_pool`).
fn global_pool(x: &[f32], channels: usize, batch: usize, area: usize, out: &mut Vec<f32>) {
    out.resize(batch * 2 * channels, 0.0);
    let n = batch * area;
    for b in 0..batch {
        for c in 0..channels {
            let v = &x[c * n + b * area..][..area];
            out[b * 2 * channels + c] = v.iter().sum::<f32>() / area as f32;
            out[b * 2 * channels + channels + c] =
                v.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        }
    }
}

/// The bias `{prefix}.bias` of a layer with `outputs` outputs.
fn bias(file: &WeightFile, prefix: &str, outputs: usize) -> Result<Vec<f32>, NnError> {
    let b = file.tensor(&format!("{prefix}.bias"))?.data.clone();
    if b.len() != outputs {
        return Err(NnError::Mismatch(format!(
            "{prefix}.bias has the wrong length"
        )));
    }
    Ok(b)
}

fn dense(file: &WeightFile, prefix: &str) -> Result<Dense, NnError> {
    let w = file.tensor(&format!("{prefix}.weight"))?;
    let [inputs, outputs] = <[usize; 2]>::try_from(w.shape.as_slice())
        .map_err(|_| NnError::Mismatch(format!("{prefix}.weight is not 2-D")))?;
    // Every dense layer of the model has a bias: a file without one is malformed.
    let b = bias(file, prefix, outputs)?;
    Ok(Dense {
        inputs,
        outputs,
        w: w.data.clone(),
        b,
    })
}

impl Network {
    /// Builds the inference network from a weight file.
    pub fn from_weights(file: &WeightFile) -> Result<Network, NnError> {
        let arch = file.arch.clone();
        let t = &file.tensors;
        let net = Network {
            stem: fold(t, "stem")?,
            blocks: (0..arch.blocks)
                .map(|i| {
                    let first = fold(t, &format!("blocks.{i}.first"))?;
                    let second = fold(t, &format!("blocks.{i}.second"))?;
                    Ok(if arch.has_pooling(i) {
                        Block {
                            first: stack(first, fold(t, &format!("blocks.{i}.pool_conv"))?)?,
                            second,
                            pool_fc: Some(dense(file, &format!("blocks.{i}.pool_fc"))?),
                        }
                    } else {
                        Block {
                            first,
                            second,
                            pool_fc: None,
                        }
                    })
                })
                .collect::<Result<_, NnError>>()?,
            policy_conv: fold(t, "policy_conv")?,
            policy_fc: dense(file, "policy_fc")?,
            value_conv: fold(t, "value_conv")?,
            value_fc1: dense(file, "value_fc1")?,
            value_fc2: dense(file, "value_fc2")?,
            aux: match arch.heads {
                crate::Heads::Dense => None,
                crate::Heads::Katago => Some(AuxHeads {
                    policy_point: plain_conv(file, "policy_point")?,
                    score_fc: dense(file, "score_fc")?,
                    ownership_conv: plain_conv(file, "ownership_conv")?,
                }),
            },
            arch,
        };
        let a = &net.arch;
        let conv_ok = |c: &Conv, inputs: usize, outputs: usize, kernel: usize| {
            c.inputs == inputs
                && c.outputs == outputs
                && c.kernel == kernel
                && c.w.len() == inputs * outputs * kernel * kernel
        };
        let dense_ok = |d: &Dense, inputs: usize, outputs: usize| {
            d.inputs == inputs && d.outputs == outputs && d.w.len() == inputs * outputs
        };
        let heads_ok = match &net.aux {
            None => {
                dense_ok(&net.policy_fc, a.policy_channels * a.area(), a.actions)
                    && dense_ok(&net.value_fc1, a.value_channels * a.area(), a.value_hidden)
            }
            Some(x) => {
                dense_ok(&net.policy_fc, 2 * a.policy_channels, 1)
                    && dense_ok(&net.value_fc1, 2 * a.value_channels, a.value_hidden)
                    && conv_ok(&x.policy_point, a.policy_channels, 1, 1)
                    && dense_ok(&x.score_fc, a.value_hidden, 1)
                    && conv_ok(&x.ownership_conv, a.channels, 1, 1)
            }
        };
        let ok = conv_ok(&net.stem, a.planes, a.channels, 3)
            && net.blocks.iter().enumerate().all(|(i, b)| {
                let pool = if a.has_pooling(i) { a.pool_channels } else { 0 };
                conv_ok(&b.first, a.channels, a.channels + pool, 3)
                    && conv_ok(&b.second, a.channels, a.channels, 3)
                    && match &b.pool_fc {
                        None => pool == 0,
                        Some(fc) => dense_ok(fc, 2 * pool, a.channels),
                    }
            })
            && conv_ok(&net.policy_conv, a.channels, a.policy_channels, 1)
            && conv_ok(&net.value_conv, a.channels, a.value_channels, 1)
            && heads_ok
            && dense_ok(&net.value_fc2, a.value_hidden, 1);
        if !ok {
            return Err(NnError::Mismatch(
                "tensor shapes disagree with the architecture".into(),
            ));
        }
        Ok(net)
    }

    /// The architecture.
    pub fn arch(&self) -> &Architecture {
        &self.arch
    }

    /// Runs `batch` positions. `input` holds `batch` encodings (`[planes][height][width]`
    /// each, as [`tabula_core::Game::encode`] writes them); `logits` receives `batch ×
    /// actions` policy logits and `values` `batch` values in [-1, 1].
    pub fn forward(
        &self,
        input: &[f32],
        batch: usize,
        scratch: &mut Scratch,
        logits: &mut Vec<f32>,
        values: &mut Vec<f32>,
    ) {
        self.forward_aux(input, batch, scratch, logits, values, None);
    }

    /// [`Network::forward`], and with `aux` (for a network that has the heads) the
    /// predicted score and ownership too.
    pub fn forward_aux(
        &self,
        input: &[f32],
        batch: usize,
        scratch: &mut Scratch,
        logits: &mut Vec<f32>,
        values: &mut Vec<f32>,
        aux: Option<&mut AuxOutput>,
    ) {
        let a = &self.arch;
        let area = a.area();
        let n = batch * area;
        assert_eq!(input.len(), batch * a.planes * area, "input size");
        // [batch][planes][area] -> [planes][batch · area]
        scratch.x.resize(a.planes * n, 0.0);
        for b in 0..batch {
            for p in 0..a.planes {
                let src = &input[(b * a.planes + p) * area..][..area];
                scratch.x[p * n + b * area..][..area].copy_from_slice(src);
            }
        }
        let Scratch {
            x,
            y,
            t,
            cols,
            flat,
            hidden,
        } = scratch;
        self.conv(&self.stem, x, y, cols, batch, None);
        std::mem::swap(x, y);
        for block in &self.blocks {
            self.conv(&block.first, x, t, cols, batch, None);
            if let Some(fc) = &block.pool_fc {
                // t holds the block's channels, then the branch's
                let c = fc.outputs;
                global_pool(&t[c * n..], block.first.outputs - c, batch, area, flat);
                hidden.resize(batch * c, 0.0);
                self.linear(fc, flat, batch, hidden, false);
                for ch in 0..c {
                    for b in 0..batch {
                        let bias = hidden[b * c + ch];
                        for v in &mut t[ch * n + b * area..][..area] {
                            *v += bias;
                        }
                    }
                }
            }
            self.conv(&block.second, t, y, cols, batch, Some(x));
            std::mem::swap(x, y);
        }
        logits.resize(batch * a.actions, 0.0);
        hidden.resize(batch * a.value_hidden, 0.0);
        let shape = [batch, a.height, a.width];
        match &self.aux {
            None => {
                self.conv(&self.policy_conv, x, y, cols, batch, None);
                flatten(y, a.policy_channels, batch, area, flat);
                self.linear(&self.policy_fc, flat, batch, logits, false);
                self.conv(&self.value_conv, x, y, cols, batch, None);
                flatten(y, a.value_channels, batch, area, flat);
                self.linear(&self.value_fc1, flat, batch, hidden, true);
            }
            Some(heads) => {
                // policy: a logit per point, the pass from the pooled channels
                self.conv(&self.policy_conv, x, y, cols, batch, None);
                heads.policy_point.apply(y, t, cols, shape, None, false);
                let mut pass = [0f32; 1];
                global_pool(y, a.policy_channels, batch, area, flat);
                for b in 0..batch {
                    let row = &mut logits[b * a.actions..(b + 1) * a.actions];
                    row[..area].copy_from_slice(&t[b * area..(b + 1) * area]);
                    self.linear(
                        &self.policy_fc,
                        &flat[b * 2 * a.policy_channels..],
                        1,
                        &mut pass,
                        false,
                    );
                    row[area] = pass[0];
                }
                self.conv(&self.value_conv, x, y, cols, batch, None);
                global_pool(y, a.value_channels, batch, area, flat);
                self.linear(&self.value_fc1, flat, batch, hidden, true);
                if let Some(out) = aux {
                    out.score.resize(batch, 0.0);
                    self.linear(&heads.score_fc, hidden, batch, &mut out.score, false);
                    for s in out.score.iter_mut() {
                        *s *= crate::SCORE_SCALE;
                    }
                    heads.ownership_conv.apply(x, t, cols, shape, None, false);
                    out.ownership.clear();
                    out.ownership.extend(t[..n].iter().map(|v| v.tanh()));
                }
            }
        }
        values.resize(batch, 0.0);
        self.linear(&self.value_fc2, hidden, batch, values, false);
        for v in values.iter_mut() {
            *v = v.tanh();
        }
    }

    fn conv(
        &self,
        conv: &Conv,
        x: &[f32],
        out: &mut Vec<f32>,
        cols: &mut Vec<f32>,
        batch: usize,
        skip: Option<&[f32]>,
    ) {
        let shape = [batch, self.arch.height, self.arch.width];
        conv.apply(x, out, cols, shape, skip, true);
    }

    fn linear(&self, layer: &Dense, x: &[f32], batch: usize, out: &mut [f32], relu: bool) {
        for row in out.chunks_exact_mut(layer.outputs).take(batch) {
            row.copy_from_slice(&layer.b);
        }
        gemm(batch, layer.inputs, layer.outputs, x, &layer.w, out, true);
        if relu {
            for v in out.iter_mut() {
                *v = v.max(0.0);
            }
        }
    }
}

impl Conv {
    /// `out = conv(x) + bias (+ skip)`, then ReLU if `relu`, over a whole batch laid
    /// out `[channels][batch · height · width]`; `shape` is `[batch, height, width]`.
    pub(crate) fn apply(
        &self,
        x: &[f32],
        out: &mut Vec<f32>,
        cols: &mut Vec<f32>,
        shape: [usize; 3],
        skip: Option<&[f32]>,
        relu: bool,
    ) {
        let [batch, h, w] = shape;
        let n = batch * h * w;
        out.resize(self.outputs * n, 0.0);
        for (o, row) in out.chunks_exact_mut(n).enumerate() {
            row.fill(self.b[o]);
            if let Some(s) = skip {
                for (r, s) in row.iter_mut().zip(&s[o * n..(o + 1) * n]) {
                    *r += s;
                }
            }
        }
        let k = self.inputs * self.kernel * self.kernel;
        if self.kernel == 1 {
            gemm(
                self.outputs,
                self.inputs,
                n,
                &self.w,
                &x[..self.inputs * n],
                out,
                true,
            );
        } else {
            im2col3(x, self.inputs, batch, h, w, cols);
            gemm(self.outputs, k, n, &self.w, cols, out, true);
        }
        if relu {
            for v in out.iter_mut() {
                *v = v.max(0.0);
            }
        }
    }
}

/// `[channels][batch · area]` -> `[batch][channels · area]` (burn's flatten order).
fn flatten(x: &[f32], channels: usize, batch: usize, area: usize, out: &mut Vec<f32>) {
    let n = batch * area;
    out.resize(batch * channels * area, 0.0);
    for b in 0..batch {
        for c in 0..channels {
            out[(b * channels + c) * area..][..area]
                .copy_from_slice(&x[c * n + b * area..][..area]);
        }
    }
}

/// Columns of a 3x3, padding-1 convolution: `cols[c·9 + ky·3 + kx][b·area + y·w + x]`.
fn im2col3(x: &[f32], channels: usize, batch: usize, h: usize, w: usize, cols: &mut Vec<f32>) {
    let area = h * w;
    let n = batch * area;
    cols.resize(channels * 9 * n, 0.0);
    for c in 0..channels {
        for ky in 0..3 {
            for kx in 0..3 {
                let row = &mut cols[((c * 9) + ky * 3 + kx) * n..][..n];
                for b in 0..batch {
                    let src = &x[c * n + b * area..][..area];
                    let dst = &mut row[b * area..][..area];
                    for y in 0..h {
                        let sy = y as isize + ky as isize - 1;
                        let d = &mut dst[y * w..][..w];
                        if sy < 0 || sy >= h as isize {
                            d.fill(0.0);
                            continue;
                        }
                        let s = &src[sy as usize * w..][..w];
                        // x + kx - 1 in range: a shifted copy with a zero at one edge.
                        match kx {
                            0 => {
                                d[0] = 0.0;
                                d[1..].copy_from_slice(&s[..w - 1]);
                            }
                            1 => d.copy_from_slice(s),
                            _ => {
                                d[..w - 1].copy_from_slice(&s[1..]);
                                d[w - 1] = 0.0;
                            }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::PolicyValueNet;
    use burn::tensor::{Device, Tensor, TensorData};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use tabula_core::{ConnectFour, Game, Go, TicTacToe};

    #[test]
    fn gemm_matches_the_definition() {
        let (m, k, n) = (5, 7, 3);
        let a: Vec<f32> = (0..m * k).map(|i| (i % 7) as f32 - 3.0).collect();
        let b: Vec<f32> = (0..k * n).map(|i| (i % 5) as f32 * 0.5).collect();
        let mut c = vec![1.0; m * n];
        gemm(m, k, n, &a, &b, &mut c, true);
        for i in 0..m {
            for j in 0..n {
                let want: f32 = 1.0 + (0..k).map(|t| a[i * k + t] * b[t * n + j]).sum::<f32>();
                assert!((c[i * n + j] - want).abs() < 1e-5);
            }
        }
    }

    fn agree_with_burn<G: Game>(game: G, size: &str) {
        agree_with_burn_heads(game, size, crate::Heads::Dense, 0);
    }

    fn agree_with_burn_heads<G: Game>(game: G, size: &str, heads: crate::Heads, pooling: usize) {
        let arch = crate::Architecture::preset(&game, size)
            .unwrap()
            .with_heads(heads)
            .unwrap()
            .with_global_pooling(pooling);
        let device = Device::default();
        let model = PolicyValueNet::new(&arch, &device);
        let mut file = WeightFile::from_model(&model, &arch, &game.name());
        crate::weights::randomise(&mut file.tensors, 3);
        let model = file.to_model(&device).unwrap();
        let net = Network::from_weights(&file).unwrap();
        let batch = 5;
        let per = arch.planes * arch.area();
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let input: Vec<f32> = (0..batch * per)
            .map(|_| rng.random_range(-1.0..1.0))
            .collect();
        let x = Tensor::<4>::from_data(
            TensorData::new(input.clone(), [batch, arch.planes, arch.height, arch.width]),
            &device,
        );
        let (p, v, extra) = model.forward_all(x);
        let p = p.into_data().try_to_vec::<f32>().unwrap();
        let v = v.into_data().try_to_vec::<f32>().unwrap();
        let (mut logits, mut values) = (Vec::new(), Vec::new());
        let mut aux = AuxOutput::default();
        net.forward_aux(
            &input,
            batch,
            &mut Scratch::default(),
            &mut logits,
            &mut values,
            Some(&mut aux),
        );
        let (mut want_score, mut want_own) = (Vec::new(), Vec::new());
        if let Some(e) = extra {
            want_score = e.score.into_data().try_to_vec::<f32>().unwrap();
            want_score
                .iter_mut()
                .for_each(|s| *s *= crate::SCORE_SCALE / 100.0);
            want_own = e.ownership.into_data().try_to_vec::<f32>().unwrap();
            assert_eq!(want_own.len(), batch * arch.area());
        }
        let got_score: Vec<f32> = aux.score.iter().map(|s| s / 100.0).collect();
        assert_eq!(got_score.len(), want_score.len());
        assert_eq!(aux.ownership.len(), want_own.len());
        let worst = p
            .iter()
            .zip(&logits)
            .chain(v.iter().zip(&values))
            .chain(want_score.iter().zip(&got_score))
            .chain(want_own.iter().zip(&aux.ownership))
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f32::max);
        assert!(
            worst < 1e-4,
            "{} {size}: max difference {worst}",
            game.name()
        );
        // One position at a time gives the same answers as the batch.
        for b in 0..batch {
            let (mut l1, mut v1) = (Vec::new(), Vec::new());
            net.forward(
                &input[b * per..(b + 1) * per],
                1,
                &mut Scratch::default(),
                &mut l1,
                &mut v1,
            );
            for (x, y) in l1.iter().zip(&logits[b * arch.actions..]) {
                assert!((x - y).abs() < 1e-5);
            }
            assert!((v1[0] - values[b]).abs() < 1e-5);
        }
    }

    #[test]
    fn shapes_that_disagree_with_the_architecture_are_refused() {
        let game = TicTacToe::new();
        let arch = crate::Architecture::preset(&game, "2x8").unwrap();
        let model = PolicyValueNet::new(&arch, &Device::default());
        let file = WeightFile::from_model(&model, &arch, &game.name());
        assert!(Network::from_weights(&file).is_ok());
        let mut bad = file.clone();
        let t = bad
            .tensors
            .iter_mut()
            .find(|t| t.name == "blocks.1.first.conv.weight")
            .unwrap();
        t.shape = vec![8, 8, 1, 9];
        assert!(Network::from_weights(&bad).is_err());
        let mut bad = file.clone();
        bad.arch.value_hidden += 1;
        assert!(Network::from_weights(&bad).is_err());
        // a file whose architecture names pooling branches it does not hold
        let mut bad = file.clone();
        bad.arch = bad.arch.with_global_pooling(1);
        assert!(Network::from_weights(&bad).is_err());
        assert!(bad.to_model(&Device::default()).is_err());
    }

    #[test]
    fn forward_agrees_with_burn_to_1e4() {
        agree_with_burn(TicTacToe::new(), "seed");
        agree_with_burn(ConnectFour::default(), "2x32");
        agree_with_burn(Go::new(9, Default::default()).unwrap(), "2x16");
        for n in [5, 9] {
            agree_with_burn_heads(
                Go::new(n, Default::default()).unwrap(),
                "2x16",
                crate::Heads::Katago,
                0,
            );
        }
        // global-pooling branches in the tower (blocks 1 and 3; every block)
        agree_with_burn_heads(
            Go::new(9, Default::default()).unwrap(),
            "4x16",
            crate::Heads::Katago,
            2,
        );
        agree_with_burn_heads(ConnectFour::default(), "2x8", crate::Heads::Dense, 1);
        // KataGo's heads need a pass beside the points
        let c4 = crate::Architecture::preset(&ConnectFour::default(), "2x16").unwrap();
        assert!(c4.with_heads(crate::Heads::Katago).is_err());
    }
}
