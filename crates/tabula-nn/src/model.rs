//! The policy/value network as a burn module (used for training and as the reference forward).
//!
//! A residual tower: a 3x3 stem convolution, `blocks` residual blocks (conv-BN-ReLU-conv-BN,
//! skip, ReLU), a policy head (1x1 conv-BN-ReLU, linear to the action logits) and a value
//! head (1x1 conv-BN-ReLU, linear, ReLU, linear, tanh).

use burn::module::Module;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::{BatchNorm, BatchNormConfig, Linear, LinearConfig, PaddingConfig2d};
use burn::tensor::activation::{relu, tanh};
use burn::tensor::{Device, Tensor};

use crate::arch::{Architecture, BN_EPSILON};

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
}

impl ResidualBlock {
    /// A block of `channels` channels.
    pub(crate) fn new(channels: usize, device: &Device) -> ResidualBlock {
        ResidualBlock {
            first: ConvBn::new(channels, channels, 3, device),
            second: ConvBn::new(channels, channels, 3, device),
        }
    }
}

/// The stem convolution and the residual blocks after it: the trunk every head reads.
pub(crate) fn tower(stem: &ConvBn, blocks: &[ResidualBlock], x: Tensor<4>) -> Tensor<4> {
    let mut h = relu(stem.forward(x));
    for block in blocks {
        let y = relu(block.first.forward(h.clone()));
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
}

impl PolicyValueNet {
    /// A freshly initialised network (burn's default initialisers).
    pub fn new(arch: &Architecture, device: &Device) -> PolicyValueNet {
        let c = arch.channels;
        let area = arch.area();
        PolicyValueNet {
            stem: ConvBn::new(arch.planes, c, 3, device),
            blocks: (0..arch.blocks)
                .map(|_| ResidualBlock::new(c, device))
                .collect(),
            policy_conv: ConvBn::new(c, arch.policy_channels, 1, device),
            policy_fc: LinearConfig::new(arch.policy_channels * area, arch.actions).init(device),
            value_conv: ConvBn::new(c, arch.value_channels, 1, device),
            value_fc1: LinearConfig::new(arch.value_channels * area, arch.value_hidden)
                .init(device),
            value_fc2: LinearConfig::new(arch.value_hidden, 1).init(device),
        }
    }

    /// Policy logits `[batch, actions]` and values `[batch, 1]` in [-1, 1] for input
    /// planes `[batch, planes, height, width]`.
    pub fn forward(&self, x: Tensor<4>) -> (Tensor<2>, Tensor<2>) {
        let h = tower(&self.stem, &self.blocks, x);
        let p = relu(self.policy_conv.forward(h.clone())).flatten::<2>(1, 3);
        let logits = self.policy_fc.forward(p);
        let v = relu(self.value_conv.forward(h)).flatten::<2>(1, 3);
        let v = relu(self.value_fc1.forward(v));
        let value = tanh(self.value_fc2.forward(v));
        (logits, value)
    }
}
