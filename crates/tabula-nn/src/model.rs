//! The policy/value network as a burn module (used for training and as the reference forward).
//!
//! A residual tower: a 3x3 stem convolution, `blocks` residual blocks (conv-BN-ReLU-conv-BN,
//! skip, ReLU), a policy head (1x1 conv-BN-ReLU, linear to the action logits) and a value
//! head (1x1 conv-BN-ReLU, linear, ReLU, linear, tanh). Blocks the architecture names
//! ([`Architecture::has_pooling`]) add KataGo's global-pooling branch between their two
//! convolutions.
//!
//! With KataGo's heads ([`Heads::Katago`]) the policy head's 1x1 convolution is followed
//! by another to one logit per point, and the pass logit comes from the head's channels
//! pooled over the board (mean and max) through `policy_fc`; the value head pools its
//! channels the same way before `value_fc1`, and beside the value a linear `score_fc`
//! predicts the final score (in units of [`SCORE_SCALE`] points) and a 1x1 convolution
//! `ownership_conv` the final owner of every point (tanh, +1 the side to move).

use burn::module::{Module, Param};
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::{BatchNorm, BatchNormConfig, Linear, LinearConfig, PaddingConfig2d};
use burn::tensor::activation::{relu, tanh};
use burn::tensor::{Device, Tensor};

use crate::arch::{Architecture, Heads, BN_EPSILON};

/// The initial pass logit of KataGo's heads (point logits start near 0).
const PASS_BIAS: f32 = -2.0;

/// Points per unit of the score head's output (KataGo scales scores by 1/20 too).
pub const SCORE_SCALE: f32 = 20.0;

/// What a forward pass of a network with auxiliary heads adds.
#[derive(Debug)]
pub struct AuxOutputs {
    /// Final score for the side to move, in units of [`SCORE_SCALE`] points: `[batch, 1]`.
    pub score: Tensor<2>,
    /// Final ownership of every point, +1 the side to move: `[batch, points]`.
    pub ownership: Tensor<2>,
}

/// Means and maxima of every channel over the board: `[batch, 2 · channels]`.
pub(crate) fn global_pool(x: Tensor<4>) -> Tensor<2> {
    let [b, c, _, _] = x.dims();
    let mean = x.clone().flatten::<3>(2, 3).mean_dim(2).reshape([b, c]);
    let max = x.flatten::<3>(2, 3).max_dim(2).reshape([b, c]);
    Tensor::cat(vec![mean, max], 1)
}

/// A convolution without bias followed by batch norm.
#[derive(Module, Debug)]
pub struct ConvBn {
    /// The convolution.
    pub conv: Conv2d,
    /// Its batch norm.
    pub bn: BatchNorm,
}

impl ConvBn {
    pub(crate) fn new(inputs: usize, outputs: usize, kernel: usize, device: &Device) -> ConvBn {
        let padding = if kernel == 3 {
            PaddingConfig2d::Explicit(1, 1, 1, 1)
        } else {
            PaddingConfig2d::Valid
        };
        ConvBn {
            conv: Conv2dConfig::new([inputs, outputs], [kernel, kernel])
                .with_padding(padding)
                .with_bias(false)
                .init(device),
            bn: BatchNormConfig::new(outputs)
                .with_epsilon(BN_EPSILON)
                .init(device),
        }
    }

    pub(crate) fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        self.bn.forward(self.conv.forward(x))
    }
}

/// One residual block.
#[derive(Module, Debug)]
pub struct ResidualBlock {
    /// First convolution.
    pub first: ConvBn,
    /// Second convolution (before the skip connection).
    pub second: ConvBn,
    /// A global-pooling branch (KataGo's gpool blocks): a 3x3 convolution to a few
    /// channels whose means and maxima over the board…
    pub pool_conv: Option<ConvBn>,
    /// …become, through this linear layer, a bias per channel of the first
    /// convolution's output, so that every point sees the whole board (a ko fight or
    /// a big group's life elsewhere) within one block.
    pub pool_fc: Option<Linear>,
}

impl ResidualBlock {
    /// A block of `channels` channels, with a pooling branch of `pool_channels`
    /// channels unless that is 0.
    pub(crate) fn new(channels: usize, pool_channels: usize, device: &Device) -> ResidualBlock {
        let pooled = pool_channels > 0;
        ResidualBlock {
            first: ConvBn::new(channels, channels, 3, device),
            second: ConvBn::new(channels, channels, 3, device),
            pool_conv: pooled.then(|| ConvBn::new(channels, pool_channels, 3, device)),
            pool_fc: pooled.then(|| {
                // Zero weights: a new pooling branch starts as a plain block.
                let mut fc = LinearConfig::new(2 * pool_channels, channels).init(device);
                fc.weight =
                    Param::from_tensor(Tensor::zeros([2 * pool_channels, channels], device));
                fc.bias = Some(Param::from_tensor(Tensor::zeros([channels], device)));
                fc
            }),
        }
    }
}

/// The residual blocks of `arch`, with pooling branches where it puts them.
pub(crate) fn residual_blocks(arch: &Architecture, device: &Device) -> Vec<ResidualBlock> {
    (0..arch.blocks)
        .map(|i| {
            let pool = if arch.has_pooling(i) {
                arch.pool_channels
            } else {
                0
            };
            ResidualBlock::new(arch.channels, pool, device)
        })
        .collect()
}

/// The stem convolution and the residual blocks after it: the trunk every head reads.
pub(crate) fn tower(stem: &ConvBn, blocks: &[ResidualBlock], x: Tensor<4>) -> Tensor<4> {
    let mut h = relu(stem.forward(x));
    for block in blocks {
        let mut y = relu(block.first.forward(h.clone()));
        if let (Some(conv), Some(fc)) = (&block.pool_conv, &block.pool_fc) {
            let g = global_pool(relu(conv.forward(h.clone())));
            let [b, c, _, _] = y.dims();
            y = y + fc.forward(g).reshape([b, c, 1, 1]);
        }
        h = relu(block.second.forward(y) + h);
    }
    h
}

/// The whole network.
#[derive(Module, Debug)]
pub struct PolicyValueNet {
    /// Stem convolution from the input planes.
    pub stem: ConvBn,
    /// The residual tower.
    pub blocks: Vec<ResidualBlock>,
    /// Policy head convolution.
    pub policy_conv: ConvBn,
    /// Policy head linear layer (to the action logits).
    pub policy_fc: Linear,
    /// Value head convolution.
    pub value_conv: ConvBn,
    /// Value head hidden layer.
    pub value_fc1: Linear,
    /// Value head output.
    pub value_fc2: Linear,
    /// KataGo's heads: the policy's per-point logits.
    pub policy_point: Option<Conv2d>,
    /// KataGo's heads: the final score, from the value head's hidden layer.
    pub score_fc: Option<Linear>,
    /// KataGo's heads: final ownership per point.
    pub ownership_conv: Option<Conv2d>,
}

impl PolicyValueNet {
    /// A freshly initialised network (burn's default initialisers).
    pub fn new(arch: &Architecture, device: &Device) -> PolicyValueNet {
        let c = arch.channels;
        let area = arch.area();
        let katago = arch.heads == Heads::Katago;
        let point_conv = |inputs: usize| {
            Conv2dConfig::new([inputs, 1], [1, 1])
                .with_bias(true)
                .init(device)
        };
        let (policy_in, policy_out, value_in) = if katago {
            (2 * arch.policy_channels, 1, 2 * arch.value_channels)
        } else {
            (
                arch.policy_channels * area,
                arch.actions,
                arch.value_channels * area,
            )
        };
        let mut policy_fc = LinearConfig::new(policy_in, policy_out).init(device);
        if katago {
            // The pass starts unlikely (about a sixth of an average point's prior on
            // 7x7): burn's initialiser gives a layer of a few inputs logits of ±1 or more,
            // and a net that passes at random teaches its value head that the passer
            // loses — in a run that started so, one colour kept passing and lost 97% of
            // its games by the fifth iteration.
            policy_fc.weight = Param::from_tensor(Tensor::zeros([policy_in, policy_out], device));
            policy_fc.bias = Some(Param::from_tensor(Tensor::full(
                [policy_out],
                PASS_BIAS,
                device,
            )));
        }
        PolicyValueNet {
            stem: ConvBn::new(arch.planes, c, 3, device),
            blocks: residual_blocks(arch, device),
            policy_conv: ConvBn::new(c, arch.policy_channels, 1, device),
            policy_fc,
            value_conv: ConvBn::new(c, arch.value_channels, 1, device),
            value_fc1: LinearConfig::new(value_in, arch.value_hidden).init(device),
            value_fc2: LinearConfig::new(arch.value_hidden, 1).init(device),
            policy_point: katago.then(|| point_conv(arch.policy_channels)),
            score_fc: katago.then(|| LinearConfig::new(arch.value_hidden, 1).init(device)),
            ownership_conv: katago.then(|| point_conv(c)),
        }
    }

    /// Policy logits `[batch, actions]` and values `[batch, 1]` in [-1, 1] for input
    /// planes `[batch, planes, height, width]`.
    pub fn forward(&self, x: Tensor<4>) -> (Tensor<2>, Tensor<2>) {
        let (logits, value, _) = self.forward_all(x);
        (logits, value)
    }

    /// [`PolicyValueNet::forward`] and, with KataGo's heads, score and ownership.
    pub fn forward_all(&self, x: Tensor<4>) -> (Tensor<2>, Tensor<2>, Option<AuxOutputs>) {
        let h = tower(&self.stem, &self.blocks, x);
        let [b, _, height, width] = h.dims();
        let p = relu(self.policy_conv.forward(h.clone()));
        let v = relu(self.value_conv.forward(h.clone()));
        match (&self.policy_point, &self.score_fc, &self.ownership_conv) {
            (Some(point), Some(score_fc), Some(own)) => {
                let points = point.forward(p.clone()).reshape([b, height * width]);
                let pass = self.policy_fc.forward(global_pool(p));
                let logits = Tensor::cat(vec![points, pass], 1);
                let hidden = relu(self.value_fc1.forward(global_pool(v)));
                let value = tanh(self.value_fc2.forward(hidden.clone()));
                let score = score_fc.forward(hidden);
                let ownership = tanh(own.forward(h).reshape([b, height * width]));
                (logits, value, Some(AuxOutputs { score, ownership }))
            }
            _ => {
                let logits = self.policy_fc.forward(p.flatten::<2>(1, 3));
                let hidden = relu(self.value_fc1.forward(v.flatten::<2>(1, 3)));
                (logits, tanh(self.value_fc2.forward(hidden)), None)
            }
        }
    }
}
