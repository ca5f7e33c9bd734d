//! The shape of a policy/value network: input planes, board, action space, tower size.

use serde::{Deserialize, Serialize};
use tabula_core::Game;

use crate::NnError;

/// The heads on top of the tower.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Heads {
    /// AlphaZero's: the policy and value heads read the whole board through dense
    /// layers.
    #[default]
    Dense,
    /// KataGo's kind, for board games whose actions are the points plus a pass (Go): a
    /// policy logit per point from a 1x1 convolution, the pass logit and the value from
    /// global pooling (mean and max of each channel over the board), and two auxiliary
    /// heads trained on the game's end — final ownership of every point and the final
    /// score.
    Katago,
}

/// Everything needed to build a network's layers (and to check a weight file against a game).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Architecture {
    /// Input planes (the game's encoding).
    pub planes: usize,
    /// Board height.
    pub height: usize,
    /// Board width.
    pub width: usize,
    /// Size of the policy head (the game's action space, pass included).
    pub actions: usize,
    /// Residual blocks after the stem convolution (each two 3x3 convolutions).
    pub blocks: usize,
    /// Channels of the tower.
    pub channels: usize,
    /// Channels of the policy head's 1x1 convolution.
    pub policy_channels: usize,
    /// Channels of the value head's 1x1 convolution.
    pub value_channels: usize,
    /// Width of the value head's hidden layer.
    pub value_hidden: usize,
    /// The kind of heads (files written before there was a choice have dense ones).
    #[serde(default)]
    pub heads: Heads,
    /// Every how many residual blocks one carries a global-pooling branch (KataGo's
    /// gpool blocks; block `i` has one when `(i + 1) % pool_every == 0`); 0: none
    /// (files written before there was a choice).
    #[serde(default)]
    pub pool_every: usize,
    /// Channels of each pooling branch.
    #[serde(default)]
    pub pool_channels: usize,
}

/// Batch-norm epsilon used in training and folded into the convolutions for inference.
pub const BN_EPSILON: f64 = 1e-5;

impl Architecture {
    /// A tower of `blocks` residual blocks of `channels` channels for `game`'s encoding.
    pub fn for_game<G: Game>(game: &G, blocks: usize, channels: usize) -> Architecture {
        let [planes, height, width] = game.encoding_shape();
        Architecture {
            planes,
            height,
            width,
            actions: game.action_count(),
            blocks,
            channels,
            policy_channels: 2,
            value_channels: 2,
            value_hidden: channels.clamp(32, 128),
            heads: Heads::Dense,
            pool_every: 0,
            pool_channels: 0,
        }
    }

    /// The same tower with a global-pooling branch in every `every`-th residual block
    /// (0: none), of a quarter of the tower's channels as in KataGo's nets (32 of 128).
    pub fn with_global_pooling(mut self, every: usize) -> Architecture {
        self.pool_every = every;
        self.pool_channels = if every == 0 {
            0
        } else {
            (self.channels / 4).max(1)
        };
        self
    }

    /// Whether residual block `i` has a global-pooling branch.
    pub fn has_pooling(&self, i: usize) -> bool {
        self.pool_every > 0 && self.pool_channels > 0 && (i + 1).is_multiple_of(self.pool_every)
    }

    /// How many residual blocks have a global-pooling branch.
    pub fn pooling_blocks(&self) -> usize {
        (0..self.blocks).filter(|&i| self.has_pooling(i)).count()
    }

    /// The same tower with `heads`; KataGo's heads need an action per board point plus
    /// one (the pass).
    pub fn with_heads(mut self, heads: Heads) -> Result<Architecture, NnError> {
        if heads == Heads::Katago && self.actions != self.area() + 1 {
            return Err(NnError::Architecture(format!(
                "KataGo's heads need one action per point and a pass ({} + 1), not {} actions",
                self.area(),
                self.actions
            )));
        }
        self.heads = heads;
        Ok(self)
    }

    /// Whether the network predicts ownership and score.
    pub fn has_aux_heads(&self) -> bool {
        self.heads == Heads::Katago
    }

    /// The tower named by a preset (`seed`, `small`, `medium`, `large`, `huge`) or by
    /// `BLOCKSxCHANNELS` (e.g. `6x64`).
    pub fn preset<G: Game>(game: &G, name: &str) -> Result<Architecture, NnError> {
        let (blocks, channels) = Self::preset_size(name)?;
        Ok(Architecture::for_game(game, blocks, channels))
    }

    /// The (blocks, channels) a preset or `BLOCKSxCHANNELS` name stands for, or why the
    /// name is not one.
    pub fn preset_size(name: &str) -> Result<(usize, usize), NnError> {
        Ok(match name {
            // Seed 000's net: three 3x3 convolutions of 16 channels (the stem and one block).
            "seed" => (1, 16),
            "small" => (2, 32),
            "medium" => (4, 64),
            // 13 convolution layers of 128 channels.
            "large" => (6, 128),
            "huge" => (10, 128),
            other => parse_size(other).ok_or_else(|| {
                NnError::Architecture(format!(
                    "unknown network size {other:?}: use seed, small, medium, large, huge or BLOCKSxCHANNELS such as 6x64"
                ))
            })?,
        })
    }

    /// Checks that every dimension lies in a range a real network has (a file may say
    /// anything; products of these numbers size allocations and must not overflow).
    pub fn validate(&self) -> Result<(), NnError> {
        let limits = [
            ("planes", self.planes, 1, 1024),
            ("height", self.height, 1, 64),
            ("width", self.width, 1, 64),
            ("actions", self.actions, 1, 64 * 64 + 1),
            ("blocks", self.blocks, 0, 1024),
            ("channels", self.channels, 1, 4096),
            ("policy_channels", self.policy_channels, 1, 4096),
            ("value_channels", self.value_channels, 1, 4096),
            ("value_hidden", self.value_hidden, 1, 65_536),
            ("pool_every", self.pool_every, 0, 1024),
            ("pool_channels", self.pool_channels, 0, 4096),
        ];
        if self.heads == Heads::Katago && self.actions != self.area() + 1 {
            return Err(NnError::Architecture(
                "KataGo's heads need one action per point and a pass".into(),
            ));
        }
        for (name, value, lo, hi) in limits {
            if !(lo..=hi).contains(&value) {
                return Err(NnError::Architecture(format!(
                    "{name} = {value} is outside {lo}..={hi}"
                )));
            }
        }
        Ok(())
    }

    /// Board points (`height * width`).
    pub fn area(&self) -> usize {
        self.height * self.width
    }

    /// Floating-point multiply-adds per position (one FMA = 2 FLOP), the figure behind
    /// the benchmarks' GFLOP/s.
    pub fn flops_per_position(&self) -> f64 {
        let area = self.area() as f64;
        let c = self.channels as f64;
        let stem = self.planes as f64 * 9.0 * c * area;
        let gc = self.pool_channels as f64;
        let tower = self.blocks as f64 * 2.0 * c * 9.0 * c * area
            + self.pooling_blocks() as f64 * (gc * 9.0 * c * area + 2.0 * gc * c + c * area);
        let (pc, vc, h) = (
            self.policy_channels as f64,
            self.value_channels as f64,
            self.value_hidden as f64,
        );
        let heads = match self.heads {
            Heads::Dense => {
                (pc + vc) * c * area + pc * area * self.actions as f64 + vc * area * h + h
            }
            // 1x1 convolutions, per-point policy and ownership, pooled value and score
            Heads::Katago => {
                (pc + vc + 1.0) * c * area + pc * area + 2.0 * pc + 2.0 * vc * h + 2.0 * h
            }
        };
        2.0 * (stem + tower + heads)
    }

    /// Checks that this network reads `game`'s encoding and writes its action space.
    pub fn check_game<G: Game>(&self, game: &G) -> Result<(), NnError> {
        let [planes, height, width] = game.encoding_shape();
        if [planes, height, width] != [self.planes, self.height, self.width]
            || game.action_count() != self.actions
        {
            return Err(NnError::Mismatch(format!(
                "the network reads {}x{}x{} planes with {} actions, but {} encodes {}x{}x{} with {} actions",
                self.planes,
                self.height,
                self.width,
                self.actions,
                game.name(),
                planes,
                height,
                width,
                game.action_count()
            )));
        }
        Ok(())
    }
}

fn parse_size(text: &str) -> Option<(usize, usize)> {
    let (b, c) = text.split_once('x')?;
    let blocks: usize = b.parse().ok()?;
    let channels: usize = c.parse().ok()?;
    (blocks <= 64 && (1..=1024).contains(&channels)).then_some((blocks, channels))
}
