//! Training a [`CellNet`]: binary cross-entropy of each cell's logit against a target
//! probability, counted only where a mask says so (e.g. hidden cells).
//!
//! Soft targets make the loss a proper scoring rule: its minimum over a cell is at the
//! target probability itself, so exact probabilities and true 0/1 layouts both train
//! the network towards the exact mine probability.

use burn::module::Module;
use burn::optim::{GradientsParams, ModuleOptimizer};
use burn::tensor::{Device, Tensor, TensorData};

use crate::cell_net::{CellArch, CellNet, CellNetFile};
use crate::train::{build_optimizer, scalar, training_device, TrainConfig};
use crate::NnError;

/// A batch of boards of one size.
#[derive(Clone, Debug, Default)]
pub struct CellBatch {
    /// Boards in the batch.
    pub size: usize,
    /// Board height.
    pub height: usize,
    /// Board width.
    pub width: usize,
    /// `[size][planes][height][width]`.
    pub inputs: Vec<f32>,
    /// Target probability per cell, `[size][height][width]`.
    pub target: Vec<f32>,
    /// 1 where the loss counts, 0 elsewhere, `[size][height][width]`.
    pub mask: Vec<f32>,
}

/// A cell network being trained, with its optimiser.
pub struct CellTrainer {
    arch: CellArch,
    task: String,
    /// `None` only inside [`CellTrainer::step`] (the optimiser takes it by value).
    model: Option<CellNet>,
    optimizer: ModuleOptimizer,
    device: Device,
    config: TrainConfig,
    steps: u64,
    /// `steps` when this trainer (and its optimiser) started.
    first_step: u64,
}

impl CellTrainer {
    /// Continues training the weights in `file` (a fresh one from
    /// [`CellNetFile::initial`] starts from scratch). The step count is read from the
    /// file's `steps` entry.
    pub fn from_file(file: &CellNetFile, config: TrainConfig) -> Result<CellTrainer, NnError> {
        let device = training_device();
        let model = file.to_model(&device)?;
        let steps = file
            .extra
            .get("steps")
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        Ok(CellTrainer {
            arch: file.arch,
            task: file.task.clone(),
            model: Some(model),
            optimizer: build_optimizer(&config),
            device,
            config,
            steps,
            first_step: steps,
        })
    }

    /// Training steps taken (carried across files).
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The current weights, with the step count.
    pub fn file(&self) -> CellNetFile {
        let mut file = CellNetFile::from_model(&self.model().valid(), &self.arch, &self.task);
        file.extra.insert("steps".into(), self.steps.to_string());
        file
    }

    fn loss(&self, batch: &CellBatch) -> Result<Tensor<1>, NnError> {
        let [n, h, w] = [batch.size, batch.height, batch.width];
        let cells = n * h * w;
        if cells == 0
            || batch.inputs.len() != cells * self.arch.planes
            || batch.target.len() != cells
            || batch.mask.len() != cells
        {
            return Err(NnError::Mismatch(format!(
                "a batch of {n} boards of {h}x{w} does not fit its data"
            )));
        }
        let counted: f32 = batch.mask.iter().sum();
        if counted <= 0.0 {
            return Err(NnError::Mismatch("the batch masks every cell".into()));
        }
        let d = &self.device;
        let x = Tensor::<4>::from_data(
            TensorData::new(batch.inputs.clone(), [n, self.arch.planes, h, w]),
            d,
        );
        let t = Tensor::<3>::from_data(TensorData::new(batch.target.clone(), [n, h, w]), d);
        let m = Tensor::<3>::from_data(TensorData::new(batch.mask.clone(), [n, h, w]), d);
        let z = self.model().forward(x);
        // BCE with logits, stable form: max(z, 0) − t·z + ln(1 + e^−|z|).
        let bce = z.clone().clamp_min(0.0) - t * z.clone() + z.abs().neg().exp().log1p();
        Ok((bce * m).sum().div_scalar(counted))
    }

    /// One optimiser step; returns the batch's loss (mean over masked cells) before it.
    pub fn step(&mut self, batch: &CellBatch) -> Result<f32, NnError> {
        let loss = self.loss(batch)?;
        let value = scalar(&loss);
        if !value.is_finite() {
            return Err(NnError::Mismatch(format!("the loss is {value}")));
        }
        let grads = loss.backward();
        let model = self.model.take().ok_or_else(|| {
            NnError::Mismatch(
                "the trainer lost its network in an earlier step that panicked".into(),
            )
        })?;
        let grads = GradientsParams::from_grads(grads, &model);
        // No optimiser state is ever loaded here: the steps since `from_file` are the
        // warm-up's count.
        let lr = self
            .config
            .learning_rate_after(self.steps, Some(self.steps - self.first_step));
        self.model = Some(self.optimizer.step(lr, model, grads));
        self.steps += 1;
        Ok(value)
    }

    fn model(&self) -> &CellNet {
        self.model
            .as_ref()
            .expect("the model is present outside a step")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn a_small_net_fits_a_tiny_fixed_set() {
        // Target: a cell is "on" when its left neighbour's plane is set — a local rule a
        // 3x3 convolution can learn exactly.
        let (n, h, w) = (4, 5, 6);
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut batch = CellBatch {
            size: n,
            height: h,
            width: w,
            ..CellBatch::default()
        };
        for _ in 0..n {
            let plane: Vec<f32> = (0..h * w)
                .map(|_| f32::from(rng.random_bool(0.5)))
                .collect();
            for y in 0..h {
                for x in 0..w {
                    let t = if x > 0 { plane[y * w + x - 1] } else { 0.5 };
                    batch.target.push(t);
                    batch.mask.push(f32::from(x != 3));
                }
            }
            batch.inputs.extend(plane.iter().map(|v| 1.0 - v));
            batch.inputs.extend(plane);
        }
        let arch = CellArch::parse(2, "1x8").unwrap();
        let config = TrainConfig {
            learning_rate: 1e-2,
            weight_decay: 0.0,
            ..TrainConfig::default()
        };
        let mut trainer =
            CellTrainer::from_file(&CellNetFile::initial(&arch, "t", 1), config).unwrap();
        let first = trainer.step(&batch).unwrap();
        let mut last = first;
        for _ in 0..300 {
            last = trainer.step(&batch).unwrap();
        }
        // the entropy of the 0.5 targets in column 0 is the floor: 5/25 of the cells
        let floor = h as f32 * std::f32::consts::LN_2 / (h * (w - 1)) as f32;
        assert!(first > 0.6, "{first}");
        assert!(last < floor + 0.05, "{first} -> {last} (floor {floor})");
        assert_eq!(trainer.steps(), 301);
        assert_eq!(trainer.file().extra["steps"], "301");
        // a batch whose data does not fit its stated shape is refused
        let mut bad = batch.clone();
        bad.target.pop();
        assert!(trainer.step(&bad).is_err());
        assert_eq!(trainer.steps(), 301);
    }
}
