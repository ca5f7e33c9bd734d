//! A fully convolutional network with one output per board cell, for any board size:
//! the shape of AutoMine's mine-probability model done right (seed 003 ends in a dense
//! layer that fixes its board to 10x10).
//!
//! The trunk is the policy/value network's (a 3x3 stem and residual blocks, batch norm
//! folded for inference); the head is a 1x1 convolution to one logit per cell. Weight
//! files are safetensors with format `tabula-cellnet`, a `task` (what the planes mean,
//! e.g. `mines`) and the architecture; the same file feeds training (burn) and the fast
//! forward pass ([`CellNetwork`]).

use std::collections::BTreeMap;
use std::path::Path;

use burn::module::Module;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::tensor::{Device, Tensor};
use serde::{Deserialize, Serialize};

use crate::infer::{fold, Conv};
use crate::model::{tower, ConvBn, ResidualBlock};
use crate::weights::{
    collect_tensors, extra_entries, find_tensor, load_tensors, metadata, read_file, read_metadata,
    read_tensors, serialize, write_atomically, NamedTensor,
};
use crate::NnError;

/// The `format` metadata value of a cell-network weight file.
pub const CELL_FORMAT: &str = "tabula-cellnet";

/// The shape of a cell network: it reads `planes` input planes on a board of any size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CellArch {
    /// Input planes.
    pub planes: usize,
    /// Residual blocks after the stem.
    pub blocks: usize,
    /// Channels of the trunk.
    pub channels: usize,
}

impl CellArch {
    /// `planes` input planes and a trunk named `BLOCKSxCHANNELS` (e.g. `4x32`).
    pub fn parse(planes: usize, size: &str) -> Result<CellArch, NnError> {
        let (blocks, channels) = crate::Architecture::preset_size(size)?;
        let arch = CellArch {
            planes,
            blocks,
            channels,
        };
        arch.validate()?;
        Ok(arch)
    }

    /// Checks that every dimension lies in a range a real network has.
    pub fn validate(&self) -> Result<(), NnError> {
        for (name, value, lo, hi) in [
            ("planes", self.planes, 1, 1024),
            ("blocks", self.blocks, 0, 1024),
            ("channels", self.channels, 1, 4096),
        ] {
            if !(lo..=hi).contains(&value) {
                return Err(NnError::Architecture(format!(
                    "{name} = {value} is outside {lo}..={hi}"
                )));
            }
        }
        Ok(())
    }

    /// Multiply-adds × 2 per board cell.
    pub fn flops_per_cell(&self) -> f64 {
        let c = self.channels as f64;
        2.0 * (self.planes as f64 * 9.0 * c + self.blocks as f64 * 2.0 * 9.0 * c * c + c)
    }
}

/// The network as a burn module (training and the reference forward).
#[derive(Module, Debug)]
pub struct CellNet {
    /// Stem convolution from the input planes.
    pub stem: ConvBn,
    /// The residual tower.
    pub blocks: Vec<ResidualBlock>,
    /// 1x1 convolution to one logit per cell.
    pub head: Conv2d,
}

impl CellNet {
    /// A freshly initialised network.
    pub fn new(arch: &CellArch, device: &Device) -> CellNet {
        let c = arch.channels;
        CellNet {
            stem: ConvBn::new(arch.planes, c, 3, device),
            blocks: (0..arch.blocks)
                .map(|_| ResidualBlock::new(c, 0, device))
                .collect(),
            head: Conv2dConfig::new([c, 1], [1, 1]).init(device),
        }
    }

    /// Logits `[batch, height, width]` for planes `[batch, planes, height, width]`.
    pub fn forward(&self, x: Tensor<4>) -> Tensor<3> {
        let h = tower(&self.stem, &self.blocks, x);
        self.head.forward(h).squeeze_dim::<3>(1)
    }
}

/// A cell network's weights with what they are for.
#[derive(Clone, Debug, PartialEq)]
pub struct CellNetFile {
    /// What the input planes mean (e.g. `mines`); a model is refused for another task.
    pub task: String,
    /// The network's shape.
    pub arch: CellArch,
    /// Free-form facts (training steps, data, …).
    pub extra: BTreeMap<String, String>,
    /// The tensors, in the model's visiting order.
    pub tensors: Vec<NamedTensor>,
}

impl CellNetFile {
    /// The weights of `model`.
    pub fn from_model(model: &CellNet, arch: &CellArch, task: &str) -> CellNetFile {
        CellNetFile {
            task: task.to_string(),
            arch: *arch,
            extra: BTreeMap::new(),
            tensors: collect_tensors(model),
        }
    }

    /// A freshly initialised network (seeded), made on the CPU.
    pub fn initial(arch: &CellArch, task: &str, seed: u64) -> CellNetFile {
        let device = Device::flex();
        device.seed(seed);
        CellNetFile::from_model(&CellNet::new(arch, &device), arch, task)
    }

    /// A burn model on `device` holding these weights.
    pub fn to_model(&self, device: &Device) -> Result<CellNet, NnError> {
        // Check the shapes against the architecture before allocating what it claims.
        CellNetwork::from_file(self)?;
        load_tensors(CellNet::new(&self.arch, device), &self.tensors, device)
    }

    /// Checks that the file was made for `task` and reads `planes` planes.
    pub fn check_task(&self, task: &str, planes: usize) -> Result<(), NnError> {
        if self.task != task {
            return Err(NnError::Mismatch(format!(
                "the network was trained for {:?}, not {task:?}",
                self.task
            )));
        }
        if self.arch.planes != planes {
            return Err(NnError::Mismatch(format!(
                "the network reads {} planes, {task} encodes {planes}",
                self.arch.planes
            )));
        }
        Ok(())
    }

    /// The safetensors bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>, NnError> {
        let meta = metadata(
            &self.extra,
            [
                ("format", CELL_FORMAT.to_string()),
                ("task", self.task.clone()),
                (
                    "architecture",
                    serde_json::to_string(&self.arch).unwrap_or_default(),
                ),
            ],
        );
        serialize(&self.tensors, meta)
    }

    /// Parses safetensors bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<CellNetFile, String> {
        let meta = read_metadata(bytes, CELL_FORMAT)?;
        let get = |k: &str| meta.get(k).ok_or_else(|| format!("metadata has no {k:?}"));
        let arch: CellArch = serde_json::from_str(get("architecture")?)
            .map_err(|e| format!("bad architecture metadata: {e}"))?;
        arch.validate()
            .map_err(|e| format!("bad architecture metadata: {e}"))?;
        let tensors = read_tensors(bytes)?;
        let extra = extra_entries(&meta, &["task", "architecture"]);
        let file = CellNetFile {
            task: get("task")?.clone(),
            arch,
            extra,
            tensors,
        };
        CellNetwork::from_file(&file).map_err(|e| e.to_string())?;
        Ok(file)
    }

    /// Writes the file atomically.
    pub fn save(&self, path: &Path) -> Result<(), NnError> {
        write_atomically(path, &self.to_bytes()?)
    }

    /// Reads a file written by [`CellNetFile::save`].
    pub fn load(path: &Path) -> Result<CellNetFile, NnError> {
        Self::from_bytes(&read_file(path)?).map_err(|reason| NnError::BadFile {
            path: path.display().to_string(),
            reason,
        })
    }
}

/// A cell network ready for inference (im2col + GEMM, batch norm folded, one thread).
#[derive(Clone, Debug)]
pub struct CellNetwork {
    arch: CellArch,
    stem: Conv,
    blocks: Vec<(Conv, Conv)>,
    head: Conv,
}

/// Per-thread working memory of [`CellNetwork::forward`].
#[derive(Default, Debug)]
pub struct CellScratch {
    x: Vec<f32>,
    y: Vec<f32>,
    t: Vec<f32>,
    cols: Vec<f32>,
}

impl CellNetwork {
    /// Builds the inference network; fails if a tensor is missing or misshapen.
    pub fn from_file(file: &CellNetFile) -> Result<CellNetwork, NnError> {
        let a = file.arch;
        let t = &file.tensors;
        let w = find_tensor(t, "head.weight")?;
        let b = find_tensor(t, "head.bias")?;
        let head = Conv {
            inputs: a.channels,
            outputs: 1,
            kernel: 1,
            w: w.data.clone(),
            b: b.data.clone(),
        };
        let net = CellNetwork {
            arch: a,
            stem: fold(t, "stem")?,
            blocks: (0..a.blocks)
                .map(|i| {
                    Ok((
                        fold(t, &format!("blocks.{i}.first"))?,
                        fold(t, &format!("blocks.{i}.second"))?,
                    ))
                })
                .collect::<Result<_, NnError>>()?,
            head,
        };
        let conv_ok = |c: &Conv, inputs: usize, outputs: usize, kernel: usize| {
            c.inputs == inputs
                && c.outputs == outputs
                && c.kernel == kernel
                && c.w.len() == inputs * outputs * kernel * kernel
                && c.b.len() == outputs
        };
        let c = a.channels;
        let ok = conv_ok(&net.stem, a.planes, c, 3)
            && net
                .blocks
                .iter()
                .all(|(f, s)| conv_ok(f, c, c, 3) && conv_ok(s, c, c, 3))
            && conv_ok(&net.head, c, 1, 1)
            && w.shape == [1, c, 1, 1];
        // The stem and every block convolution carry a weight and four batch-norm
        // tensors; the head a weight and a bias.
        let named = 5 + 10 * a.blocks + 2;
        if !ok || t.len() != named {
            return Err(NnError::Mismatch(
                "tensor shapes disagree with the architecture".into(),
            ));
        }
        Ok(net)
    }

    /// The architecture.
    pub fn arch(&self) -> &CellArch {
        &self.arch
    }

    /// Logits for `batch` boards of `height × width`: `input` is `[batch][planes][height]
    /// [width]`, `logits` receives `[batch][height][width]`.
    pub fn forward(
        &self,
        input: &[f32],
        [batch, height, width]: [usize; 3],
        scratch: &mut CellScratch,
        logits: &mut Vec<f32>,
    ) {
        let area = height * width;
        let n = batch * area;
        let planes = self.arch.planes;
        assert_eq!(input.len(), batch * planes * area, "input size");
        let CellScratch { x, y, t, cols } = scratch;
        // [batch][planes][area] -> [planes][batch · area]
        x.resize(planes * n, 0.0);
        for b in 0..batch {
            for p in 0..planes {
                x[p * n + b * area..][..area]
                    .copy_from_slice(&input[(b * planes + p) * area..][..area]);
            }
        }
        let shape = [batch, height, width];
        self.stem.apply(x, y, cols, shape, None, true);
        std::mem::swap(x, y);
        for (first, second) in &self.blocks {
            first.apply(x, t, cols, shape, None, true);
            second.apply(t, y, cols, shape, Some(x), true);
            std::mem::swap(x, y);
        }
        // One output channel: [1][batch · area] is already [batch][height][width].
        self.head.apply(x, logits, cols, shape, None, false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::TensorData;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn forward_agrees_with_burn_on_any_board_size() {
        let arch = CellArch::parse(5, "2x8").unwrap();
        let mut file = CellNetFile::initial(&arch, "test", 1);
        crate::weights::randomise(&mut file.tensors, 2);
        let device = Device::default();
        let model = file.to_model(&device).unwrap();
        let net = CellNetwork::from_file(&file).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for (batch, h, w) in [(1, 1, 1), (3, 4, 7), (2, 9, 9), (1, 16, 30)] {
            let input: Vec<f32> = (0..batch * 5 * h * w)
                .map(|_| rng.random_range(-1.0..1.0))
                .collect();
            let x =
                Tensor::<4>::from_data(TensorData::new(input.clone(), [batch, 5, h, w]), &device);
            let want = model.forward(x).into_data().try_to_vec::<f32>().unwrap();
            let mut got = Vec::new();
            net.forward(&input, [batch, h, w], &mut CellScratch::default(), &mut got);
            assert_eq!(got.len(), batch * h * w);
            let worst = want
                .iter()
                .zip(&got)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f32::max);
            assert!(worst < 1e-4, "{batch}x{h}x{w}: {worst}");
        }
    }

    #[test]
    fn files_round_trip_and_mismatches_are_refused() {
        let arch = CellArch::parse(14, "1x4").unwrap();
        let mut file = CellNetFile::initial(&arch, "mines", 7);
        file.extra.insert("steps".into(), "12".into());
        let mut back = CellNetFile::from_bytes(&file.to_bytes().unwrap()).unwrap();
        let mut sorted = file.clone();
        sorted.tensors.sort_by(|a, b| a.name.cmp(&b.name));
        back.tensors.sort_by(|a, b| a.name.cmp(&b.name));
        assert!(back == sorted, "the file changed on its way through bytes");
        back.check_task("mines", 14).unwrap();
        assert!(back.check_task("go", 14).is_err());
        assert!(back.check_task("mines", 12).is_err());
        // a policy/value file is not a cell network, nor the other way round
        let game = tabula_core::TicTacToe::new();
        let pv = crate::WeightFile::initial(
            &crate::Architecture::preset(&game, "seed").unwrap(),
            "tictactoe",
            1,
        );
        let err = CellNetFile::from_bytes(&pv.to_bytes().unwrap()).unwrap_err();
        assert!(err.contains("format"), "{err}");
        assert!(crate::WeightFile::from_bytes(&file.to_bytes().unwrap()).is_err());
        // a file whose architecture disagrees with its tensors
        let mut wrong = file.clone();
        wrong.arch.channels = 8;
        let err = CellNetFile::from_bytes(&wrong.to_bytes().unwrap()).unwrap_err();
        assert!(err.contains("missing") || err.contains("disagree"), "{err}");
        let mut extra = file.clone();
        extra.tensors.push(NamedTensor {
            name: "stray".into(),
            shape: vec![1],
            data: vec![0.0],
        });
        assert!(CellNetFile::from_bytes(&extra.to_bytes().unwrap()).is_err());
        let mut poisoned = file.clone();
        poisoned.tensors[0].data[0] = f32::NAN;
        assert!(CellNetFile::from_bytes(&poisoned.to_bytes().unwrap()).is_err());
    }
}
