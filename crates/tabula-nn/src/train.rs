//! One training step of the policy/value network with burn on the `flex` CPU backend
//! (or CUDA behind the `cuda` feature).
//!
//! The loss is the cross-entropy of the policy logits against the search's visit
//! distribution plus the mean squared error of the value against the game result;
//! weight decay is the optimiser's (an L2 term on every weight). Adam or SGD with
//! momentum, with a step learning-rate schedule.

use burn::module::{Module, ModuleVisitor, Param};
use burn::optim::decay::WeightDecayConfig;
use burn::optim::momentum::MomentumConfig;
use burn::optim::{AdamConfig, GradientsParams, ModuleOptimizer, SgdConfig};
use burn::tensor::loss::cross_entropy_with_logits;
use burn::tensor::Gradients;
use burn::tensor::{Device, Tensor, TensorData};
use serde::{Deserialize, Serialize};

use crate::arch::Architecture;
use crate::model::PolicyValueNet;
use crate::weights::WeightFile;
use crate::NnError;

/// The optimiser.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OptimizerKind {
    /// Adam (default).
    Adam,
    /// SGD with momentum (AlphaZero's choice).
    Sgd,
}

/// How the network is trained.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrainConfig {
    /// Adam or SGD with momentum.
    pub optimizer: OptimizerKind,
    /// Learning rate at step 0.
    pub learning_rate: f64,
    /// Multiply the learning rate by `lr_decay` every `lr_decay_steps` steps (0: never).
    pub lr_decay_steps: u64,
    /// The decay factor of the schedule.
    pub lr_decay: f64,
    /// A cyclical learning rate (Smith's triangular schedule): over every
    /// `lr_cycle_steps` steps the rate climbs from `lr_cycle_low` times the scheduled
    /// rate to the scheduled rate and back (0: a constant rate between decays). The
    /// low phases let the network settle into what the window holds; the high ones keep
    /// it from settling for good while self-play moves on.
    pub lr_cycle_steps: u64,
    /// The low end of a cycle, as a share of the scheduled rate (0 to 1).
    pub lr_cycle_low: f64,
    /// SGD momentum.
    pub momentum: f64,
    /// L2 weight decay.
    pub weight_decay: f64,
    /// Ramp the learning rate up linearly over this many steps whenever the optimiser
    /// starts without saved moments (a new run, or one started from `--init`), so that
    /// Adam's first, noisy estimates do not shake a network that is already good
    /// (0: no warm-up). A resumed run that loads its optimiser state skips it.
    pub warmup_steps: u64,
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            optimizer: OptimizerKind::Adam,
            learning_rate: 2e-3,
            lr_decay_steps: 0,
            lr_decay: 0.5,
            lr_cycle_steps: 0,
            lr_cycle_low: 0.1,
            momentum: 0.9,
            weight_decay: 1e-4,
            warmup_steps: 0,
        }
    }
}

impl TrainConfig {
    /// Each numeric field with the range it must lie in, as `(name, value, low, high)`,
    /// for the configurations that embed this one to check (NaN fails every range).
    pub fn ranges(&self) -> [(&'static str, f64, f64, f64); 5] {
        [
            ("learning_rate", self.learning_rate, 1e-9, 10.0),
            ("lr_decay", self.lr_decay, 0.0, 1.0),
            ("lr_cycle_low", self.lr_cycle_low, 0.0, 1.0),
            ("momentum", self.momentum, 0.0, 1.0),
            ("weight_decay", self.weight_decay, 0.0, 1.0),
        ]
    }

    /// The learning rate at `step`.
    pub fn learning_rate_at(&self, step: u64) -> f64 {
        let scheduled = match self.lr_decay_steps {
            0 => self.learning_rate,
            n => self.learning_rate * self.lr_decay.powi((step / n).min(1000) as i32),
        };
        match self.lr_cycle_steps {
            0 => scheduled,
            n => {
                // 0 at a cycle's ends, 1 at its middle
                let phase = (step % n) as f64 / n as f64;
                let height = 1.0 - (2.0 * phase - 1.0).abs();
                scheduled * (self.lr_cycle_low + (1.0 - self.lr_cycle_low) * height)
            }
        }
    }

    /// The learning rate at `step` when the optimiser has taken `fresh` steps since it
    /// started without saved moments (`None`: it continues a saved state), warm-up
    /// included.
    pub fn learning_rate_after(&self, step: u64, fresh: Option<u64>) -> f64 {
        let lr = self.learning_rate_at(step);
        match fresh {
            Some(k) if k < self.warmup_steps => lr * (k + 1) as f64 / self.warmup_steps as f64,
            _ => lr,
        }
    }
}

/// A batch of training samples.
#[derive(Clone, Debug, Default)]
pub struct Batch {
    /// Samples in the batch.
    pub size: usize,
    /// `size` encodings, `[planes][height][width]` each.
    pub inputs: Vec<f32>,
    /// `size` policy targets over the action space (each sums to 1).
    pub policy: Vec<f32>,
    /// `size` value targets in [-1, 1] for the side to move.
    pub value: Vec<f32>,
    /// Auxiliary targets, for networks with KataGo's heads (empty otherwise): the final
    /// score lead of the side to move in points, `size` entries…
    pub score: Vec<f32>,
    /// …the final owner of every point (+1 the side to move), `size × points`…
    pub ownership: Vec<f32>,
    /// …and each sample's weight for them (0 where the game did not end in a count).
    pub aux_weight: Vec<f32>,
}

/// Weight of the ownership loss (mean squared error per point), as in KataGo (1.5 per
/// point over the board's area).
pub const OWNERSHIP_LOSS_WEIGHT: f32 = 1.5;
/// Weight of the score loss (squared error in units of `SCORE_SCALE` points).
pub const SCORE_LOSS_WEIGHT: f32 = 0.25;

/// The losses of one batch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Losses {
    /// Policy cross-entropy.
    pub policy: f32,
    /// Value mean squared error.
    pub value: f32,
    /// Ownership loss, weighted (0 without KataGo's heads).
    #[serde(default)]
    pub ownership: f32,
    /// Score loss, weighted (0 without KataGo's heads).
    #[serde(default)]
    pub score: f32,
}

impl Losses {
    /// Their sum (what is minimised, besides weight decay).
    pub fn total(&self) -> f32 {
        self.policy + self.value + self.ownership + self.score
    }
}

/// The device training runs on: CUDA with the `cuda` feature, else the flex CPU
/// backend; autodiff on.
pub fn training_device() -> Device {
    #[cfg(feature = "cuda")]
    {
        Device::cuda(0usize).autodiff()
    }
    #[cfg(not(feature = "cuda"))]
    {
        Device::flex().autodiff()
    }
}

/// The gradient of every named tensor.
pub type NamedGradients = Vec<(String, Vec<f32>)>;

/// A network being trained, with its optimiser.
pub struct Trainer {
    arch: Architecture,
    game: String,
    /// The network; `None` only inside [`Trainer::step`], which moves it through the
    /// optimiser by value (as burn's own loops do) instead of building a throw-away
    /// network to swap in.
    model: Option<PolicyValueNet>,
    optimizer: ModuleOptimizer,
    device: Device,
    config: TrainConfig,
    steps: u64,
    /// Steps taken since the optimiser started without saved state (`None` once a
    /// saved state was loaded): what the warm-up counts.
    fresh_steps: Option<u64>,
}

impl Trainer {
    /// A fresh network of shape `arch` for `game`, initialised from `seed`.
    pub fn new(arch: &Architecture, game: &str, config: TrainConfig, seed: u64) -> Trainer {
        let device = training_device();
        device.seed(seed);
        let model = PolicyValueNet::new(arch, &device);
        Self::with_model(model, arch, game, config, device)
    }

    /// Continues training the weights in `file`.
    pub fn from_weights(file: &WeightFile, config: TrainConfig) -> Result<Trainer, NnError> {
        let device = training_device();
        let model = file.to_model(&device)?;
        let mut t = Self::with_model(model, &file.arch, &file.game, config, device);
        t.steps = file
            .extra
            .get("steps")
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        Ok(t)
    }

    fn with_model(
        model: PolicyValueNet,
        arch: &Architecture,
        game: &str,
        config: TrainConfig,
        device: Device,
    ) -> Trainer {
        let optimizer = build_optimizer(&config);
        Trainer {
            arch: arch.clone(),
            game: game.to_string(),
            model: Some(model),
            optimizer,
            device,
            config,
            steps: 0,
            fresh_steps: Some(0),
        }
    }

    /// Training steps taken (carried across weight files).
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The architecture.
    pub fn arch(&self) -> &Architecture {
        &self.arch
    }

    /// The current weights (with the step count in the metadata).
    pub fn weights(&self) -> WeightFile {
        let mut file = WeightFile::from_model(&self.model().valid(), &self.arch, &self.game);
        file.extra.insert("steps".into(), self.steps.to_string());
        file
    }

    fn tensors(&self, batch: &Batch) -> Result<(Tensor<4>, Tensor<2>, Tensor<2>), NnError> {
        let a = &self.arch;
        let n = batch.size;
        if n == 0
            || batch.inputs.len() != n * a.planes * a.area()
            || batch.policy.len() != n * a.actions
            || batch.value.len() != n
        {
            return Err(NnError::Mismatch(format!(
                "batch of {n} does not fit the network's shapes"
            )));
        }
        let x = Tensor::<4>::from_data(
            TensorData::new(batch.inputs.clone(), [n, a.planes, a.height, a.width]),
            &self.device,
        );
        let p = Tensor::<2>::from_data(
            TensorData::new(batch.policy.clone(), [n, a.actions]),
            &self.device,
        );
        let z = Tensor::<2>::from_data(TensorData::new(batch.value.clone(), [n, 1]), &self.device);
        Ok((x, p, z))
    }

    /// The loss terms of `batch`: policy, value, and (with KataGo's heads) weighted
    /// ownership and score losses.
    fn loss_tensors(&self, batch: &Batch) -> Result<Vec<Tensor<1>>, NnError> {
        let (x, p, z) = self.tensors(batch)?;
        let (logits, value, aux) = self.model().forward_all(x);
        let policy_loss = cross_entropy_with_logits(logits, p);
        let diff = value - z;
        let value_loss = (diff.clone() * diff).mean();
        let mut terms = vec![policy_loss, value_loss];
        if let Some(aux) = aux {
            let (n, area) = (batch.size, self.arch.area());
            if batch.score.len() != n
                || batch.ownership.len() != n * area
                || batch.aux_weight.len() != n
            {
                return Err(NnError::Mismatch(format!(
                    "batch of {n} lacks the score and ownership targets the network's heads need"
                )));
            }
            let w = Tensor::<2>::from_data(
                TensorData::new(batch.aux_weight.clone(), [n, 1]),
                &self.device,
            );
            let own = Tensor::<2>::from_data(
                TensorData::new(batch.ownership.clone(), [n, area]),
                &self.device,
            );
            let scaled: Vec<f32> = batch.score.iter().map(|s| s / crate::SCORE_SCALE).collect();
            let score = Tensor::<2>::from_data(TensorData::new(scaled, [n, 1]), &self.device);
            let d = aux.ownership - own;
            let own_loss = ((d.clone() * d).mean_dim(1) * w.clone()).mean() * OWNERSHIP_LOSS_WEIGHT;
            let d = aux.score - score;
            let score_loss = (d.clone() * d * w).mean() * SCORE_LOSS_WEIGHT;
            terms.push(own_loss);
            terms.push(score_loss);
        }
        Ok(terms)
    }

    fn losses(terms: &[Tensor<1>]) -> (Losses, Tensor<1>) {
        let get = |i: usize| terms.get(i).map_or(0.0, scalar);
        let losses = Losses {
            policy: get(0),
            value: get(1),
            ownership: get(2),
            score: get(3),
        };
        let total = terms
            .iter()
            .cloned()
            .reduce(|a, b| a + b)
            .expect("policy and value terms");
        (losses, total)
    }

    /// The optimiser's state (Adam's moments and step counts, SGD's momentum) as bytes,
    /// to save beside a checkpoint so that a resumed run continues it.
    pub fn optimizer_state(&self) -> Result<Vec<u8>, NnError> {
        crate::optim_state::save(self.config.optimizer, self.model(), &self.optimizer)
    }

    /// Continues with an optimiser state saved by [`Trainer::optimizer_state`] for this
    /// network and optimiser; on an error nothing changes.
    pub fn load_optimizer_state(&mut self, bytes: &[u8]) -> Result<(), NnError> {
        let loaded = crate::optim_state::read(bytes, self.config.optimizer, self.model())?;
        let model = self.take_model()?;
        let fresh = build_optimizer(&self.config);
        let (model, optimizer) = crate::optim_state::apply(loaded, model, fresh);
        self.model = Some(model);
        self.optimizer = optimizer;
        self.fresh_steps = None;
        Ok(())
    }

    /// One optimiser step on `batch`; returns the batch's losses before the step.
    pub fn step(&mut self, batch: &Batch) -> Result<Losses, NnError> {
        let (losses, total) = Self::losses(&self.loss_tensors(batch)?);
        let grads = total.backward();
        let model = self.take_model()?;
        let grads = GradientsParams::from_grads(grads, &model);
        let lr = self
            .config
            .learning_rate_after(self.steps, self.fresh_steps);
        if let Some(fresh) = self.fresh_steps.as_mut() {
            *fresh += 1;
        }
        self.model = Some(self.optimizer.step(lr, model, grads));
        self.steps += 1;
        Ok(losses)
    }

    /// The losses on `batch` (training-mode batch norm) and the gradient of their sum
    /// with respect to every named tensor, without changing the network.
    pub fn gradients(&self, batch: &Batch) -> Result<(Losses, NamedGradients), NnError> {
        let (losses, total) = Self::losses(&self.loss_tensors(batch)?);
        let grads = total.backward();
        let mut c = GradCollector {
            path: Vec::new(),
            grads: &grads,
            out: Vec::new(),
        };
        self.model().visit(&mut c);
        Ok((losses, c.out))
    }

    /// Replaces the weights (e.g. to probe the loss around a point).
    pub fn set_weights(&mut self, file: &WeightFile) -> Result<(), NnError> {
        if file.arch != self.arch {
            return Err(NnError::Mismatch(
                "the weight file has another architecture".into(),
            ));
        }
        self.model = Some(file.to_model(&self.device)?);
        Ok(())
    }

    fn model(&self) -> &PolicyValueNet {
        self.model
            .as_ref()
            .expect("the model is present outside a step")
    }

    fn take_model(&mut self) -> Result<PolicyValueNet, NnError> {
        self.model.take().ok_or_else(|| {
            NnError::Mismatch(
                "the trainer lost its network in an earlier step that panicked".into(),
            )
        })
    }
}

pub(crate) fn scalar(t: &Tensor<1>) -> f32 {
    t.to_data()
        .try_to_vec::<f32>()
        .ok()
        .and_then(|v| v.first().copied())
        .unwrap_or(f32::NAN)
}

pub(crate) fn build_optimizer(config: &TrainConfig) -> ModuleOptimizer {
    let decay =
        (config.weight_decay > 0.0).then(|| WeightDecayConfig::new(config.weight_decay as f32));
    match config.optimizer {
        OptimizerKind::Adam => AdamConfig::new().with_weight_decay(decay).init(),
        OptimizerKind::Sgd => SgdConfig::new()
            .with_weight_decay(decay)
            .with_momentum(Some(
                MomentumConfig::new()
                    .with_momentum(config.momentum)
                    .with_dampening(0.0),
            ))
            .init(),
    }
}

struct GradCollector<'a> {
    path: Vec<String>,
    grads: &'a Gradients,
    out: Vec<(String, Vec<f32>)>,
}

impl ModuleVisitor for GradCollector<'_> {
    fn enter_module(&mut self, name: &str, _container: &str) {
        self.path.push(name.to_string());
    }
    fn exit_module(&mut self, _name: &str, _container: &str) {
        self.path.pop();
    }
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        if let Some(g) = param.val().grad(self.grads) {
            let data = g
                .into_data()
                .convert::<f32>()
                .try_to_vec::<f32>()
                .unwrap_or_default();
            self.out.push((self.path.join("."), data));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use tabula_core::{Game, TicTacToe};

    fn random_batch(arch: &Architecture, n: usize, seed: u64) -> Batch {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut games: Vec<TicTacToe> = Vec::new();
        while games.len() < n {
            let mut g = TicTacToe::new();
            for _ in 0..rng.random_range(1..5) {
                let moves = g.legal_moves();
                g.play(moves[rng.random_range(0..moves.len())]);
            }
            if games.iter().all(|h| h.position_hash() != g.position_hash()) {
                games.push(g);
            }
        }
        let mut batch = Batch {
            size: n,
            ..Batch::default()
        };
        let per = arch.planes * arch.area();
        for g in &games {
            let mut x = vec![0.0; per];
            g.encode(&mut x);
            batch.inputs.extend(x);
            let mut p: Vec<f32> = (0..arch.actions).map(|_| rng.random::<f32>()).collect();
            let s: f32 = p.iter().sum();
            p.iter_mut().for_each(|v| *v /= s);
            batch.policy.extend(p);
            batch.value.push(rng.random_range(-1.0..1.0));
        }
        batch
    }

    #[test]
    fn a_cyclical_rate_climbs_and_falls_within_each_cycle() {
        let config = TrainConfig {
            learning_rate: 1e-3,
            lr_decay_steps: 400,
            lr_decay: 0.5,
            lr_cycle_steps: 100,
            lr_cycle_low: 0.2,
            ..TrainConfig::default()
        };
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(
            close(config.learning_rate_at(0), 2e-4),
            "a cycle starts low"
        );
        assert!(close(config.learning_rate_at(25), 6e-4));
        assert!(close(config.learning_rate_at(50), 1e-3), "and peaks midway");
        assert!(close(config.learning_rate_at(75), 6e-4));
        assert!(
            close(config.learning_rate_at(100), 2e-4),
            "the next one starts low"
        );
        // the step decay scales the whole cycle
        assert!(close(config.learning_rate_at(450), 5e-4));
        let flat = TrainConfig {
            lr_cycle_steps: 0,
            ..config
        };
        assert!(close(flat.learning_rate_at(0), 1e-3));
    }

    #[test]
    fn warm_up_ramps_a_fresh_optimiser_only() {
        let config = TrainConfig {
            learning_rate: 1e-3,
            lr_decay_steps: 100,
            lr_decay: 0.5,
            warmup_steps: 4,
            ..TrainConfig::default()
        };
        // a network from --init at step 150: the decayed rate, ramped over 4 steps
        let lr = |fresh| config.learning_rate_after(150, fresh);
        assert!((lr(Some(0)) - 1.25e-4).abs() < 1e-12);
        assert!((lr(Some(3)) - 5e-4).abs() < 1e-12);
        assert!((lr(Some(4)) - 5e-4).abs() < 1e-12);
        assert!(
            (lr(None) - 5e-4).abs() < 1e-12,
            "a loaded state is not warmed up"
        );
        let off = TrainConfig::default();
        assert_eq!(off.learning_rate_after(0, Some(0)), off.learning_rate);

        // The trainer counts its fresh steps: with a warm-up the first step moves the
        // weights less than without, and a trainer that loaded its state does not warm up.
        let game = TicTacToe::new();
        let arch = Architecture::for_game(&game, 1, 8);
        let batch = random_batch(&arch, 8, 6);
        let plain = TrainConfig {
            learning_rate: 1e-2,
            ..TrainConfig::default()
        };
        let warm = TrainConfig {
            warmup_steps: 100,
            ..plain.clone()
        };
        let start = Trainer::new(&arch, "tictactoe", plain.clone(), 2).weights();
        let moved = |config: &TrainConfig, state: Option<&[u8]>| -> f32 {
            let mut t = Trainer::from_weights(&start, config.clone()).unwrap();
            if let Some(s) = state {
                t.load_optimizer_state(s).unwrap();
            }
            t.step(&batch).unwrap();
            let w = t.weights();
            // Learned parameters only: batch norm's running statistics move without
            // the optimiser.
            w.tensors
                .iter()
                .zip(&start.tensors)
                .filter(|(x, _)| !x.name.contains("running"))
                .flat_map(|(x, y)| x.data.iter().zip(&y.data).map(|(p, q)| (p - q).abs()))
                .fold(0.0, f32::max)
        };
        let (full, ramped) = (moved(&plain, None), moved(&warm, None));
        assert!(ramped < full * 0.05, "{ramped} vs {full}");
        let mut other = Trainer::from_weights(&start, plain.clone()).unwrap();
        other.step(&batch).unwrap();
        let state = other.optimizer_state().unwrap();
        let resumed = moved(&warm, Some(&state));
        assert!(resumed > full * 0.5, "{resumed} vs {full}");
    }

    #[test]
    fn gradients_match_finite_differences() {
        let game = TicTacToe::new();
        let arch = Architecture::for_game(&game, 1, 4);
        let mut trainer = Trainer::new(&arch, "tictactoe", TrainConfig::default(), 1);
        let batch = random_batch(&arch, 6, 2);
        let (_, grads) = trainer.gradients(&batch).unwrap();
        let base = trainer.weights();
        let eps = 5e-3;
        let mut checked = 0;
        for (name, grad) in &grads {
            // Batch-norm shifts right before a ReLU and the running statistics are skipped:
            // the former are fine, the latter have no gradient.
            for i in [0, grad.len() / 2, grad.len() - 1] {
                let probe = |delta: f32, t: &mut Trainer| {
                    let mut w = base.clone();
                    let tensor = w.tensors.iter_mut().find(|t| &t.name == name).unwrap();
                    tensor.data[i] += delta;
                    t.set_weights(&w).unwrap();
                    t.gradients(&batch).unwrap().0.total() as f64
                };
                let numeric =
                    (probe(eps, &mut trainer) - probe(-eps, &mut trainer)) / (2.0 * eps as f64);
                let analytic = grad[i] as f64;
                let tol = 2e-3 + 0.05 * analytic.abs().max(numeric.abs());
                assert!(
                    (numeric - analytic).abs() < tol,
                    "{name}[{i}]: backprop {analytic}, finite differences {numeric}"
                );
                checked += 1;
            }
        }
        assert!(checked >= 3 * 20, "{checked}");
    }

    #[test]
    fn a_tiny_net_overfits_a_handful_of_positions() {
        let game = TicTacToe::new();
        let arch = Architecture::for_game(&game, 1, 16);
        let config = TrainConfig {
            learning_rate: 1e-2,
            weight_decay: 0.0,
            ..TrainConfig::default()
        };
        let mut trainer = Trainer::new(&arch, "tictactoe", config, 3);
        let mut batch = random_batch(&arch, 8, 4);
        // Sharp targets: one move each, so the reachable policy loss is near zero.
        for (i, row) in batch.policy.chunks_mut(arch.actions).enumerate() {
            row.iter_mut().for_each(|v| *v = 0.0);
            row[i % arch.actions] = 1.0;
        }
        let first = trainer.step(&batch).unwrap();
        let mut last = first;
        for _ in 0..300 {
            last = trainer.step(&batch).unwrap();
        }
        assert!(first.total() > 1.5, "{first:?}");
        assert!(
            last.policy < 0.1 && last.value < 0.02,
            "{first:?} -> {last:?}"
        );
        assert_eq!(trainer.steps(), 301);
        // SGD with momentum learns too.
        let config = TrainConfig {
            optimizer: OptimizerKind::Sgd,
            learning_rate: 0.05,
            ..TrainConfig::default()
        };
        let mut sgd = Trainer::new(&arch, "tictactoe", config, 3);
        let start = sgd.step(&batch).unwrap();
        for _ in 0..200 {
            last = sgd.step(&batch).unwrap();
        }
        assert!(last.total() < start.total() * 0.3, "{start:?} -> {last:?}");
    }

    /// Ownership that depends on the whole board (every point belongs to whoever has
    /// more stones anywhere): a one-block tower sees 5x5 around a point, so only a
    /// global-pooling branch lets each point learn it (80 steps: loss ~0.87 without,
    /// ~0.0004 with).
    #[test]
    fn global_pooling_lets_every_point_read_the_whole_board() {
        let game = tabula_core::Go::new(9, Default::default()).unwrap();
        let base = Architecture::for_game(&game, 1, 16)
            .with_heads(crate::Heads::Katago)
            .unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let (n, area, planes) = (64, base.area(), base.planes);
        let mut batch = Batch {
            size: n,
            ..Batch::default()
        };
        for _ in 0..n {
            let mut x = vec![0.0; planes * area];
            let mut lead = 0i32;
            // stones far apart, so that no 5x5 window holds the count
            for _ in 0..rng.random_range(1..5) {
                let (p, sign) = (rng.random_range(0..area), rng.random_range(0..2));
                if x[p] + x[area + p] == 0.0 {
                    x[sign * area + p] = 1.0;
                    lead += if sign == 0 { 1 } else { -1 };
                }
            }
            let owner = if lead >= 0 { 1.0 } else { -1.0 };
            batch.inputs.extend(x);
            let mut p = vec![0.0; base.actions];
            p[0] = 1.0;
            batch.policy.extend(p);
            batch.value.push(0.0);
            batch.score.push(0.0);
            batch.ownership.extend(std::iter::repeat_n(owner, area));
            batch.aux_weight.push(1.0);
        }
        let config = TrainConfig {
            learning_rate: 1e-2,
            weight_decay: 0.0,
            ..TrainConfig::default()
        };
        let ownership_loss = |arch: &Architecture| {
            let mut trainer = Trainer::new(arch, "go:9", config.clone(), 5);
            let mut last = trainer.step(&batch).unwrap();
            for _ in 0..80 {
                last = trainer.step(&batch).unwrap();
            }
            last.ownership
        };
        let plain = ownership_loss(&base);
        let pooled = ownership_loss(&base.clone().with_global_pooling(1));
        assert!(
            pooled < 0.5 * plain,
            "ownership loss with pooling {pooled}, without {plain}"
        );
    }

    /// A trainer rebuilt from a checkpoint and its optimiser state takes exactly the
    /// step the original takes; rebuilt from the weights alone (Adam restarted) it
    /// does not.
    #[test]
    fn a_resumed_trainer_continues_the_optimiser() {
        let game = TicTacToe::new();
        let arch = Architecture::for_game(&game, 1, 8);
        let config = TrainConfig {
            learning_rate: 1e-2,
            ..TrainConfig::default()
        };
        let batch = random_batch(&arch, 8, 5);
        let mut original = Trainer::new(&arch, "tictactoe", config.clone(), 7);
        for _ in 0..5 {
            original.step(&batch).unwrap();
        }
        let (weights, state) = (original.weights(), original.optimizer_state().unwrap());
        let mut resumed = Trainer::from_weights(&weights, config.clone()).unwrap();
        resumed.load_optimizer_state(&state).unwrap();
        let mut restarted = Trainer::from_weights(&weights, config.clone()).unwrap();
        for t in [&mut original, &mut resumed, &mut restarted] {
            t.step(&batch).unwrap();
        }
        let diff = |a: &Trainer, b: &Trainer| -> f32 {
            let (a, b) = (a.weights(), b.weights());
            a.tensors
                .iter()
                .zip(&b.tensors)
                .flat_map(|(x, y)| x.data.iter().zip(&y.data).map(|(p, q)| (p - q).abs()))
                .fold(0.0, f32::max)
        };
        assert!(
            diff(&original, &resumed) < 1e-6,
            "{}",
            diff(&original, &resumed)
        );
        assert!(diff(&original, &restarted) > 1e-4, "Adam's moments matter");
        // a state that is not this network's, or not a state, is refused and changes nothing
        let before = resumed.weights();
        let other = Trainer::new(
            &Architecture::for_game(&game, 2, 8),
            "tictactoe",
            config.clone(),
            1,
        );
        let sgd = Trainer::new(
            &arch,
            "tictactoe",
            TrainConfig {
                optimizer: OptimizerKind::Sgd,
                ..config
            },
            1,
        );
        for bad in [
            other.optimizer_state().unwrap(),
            sgd.optimizer_state().unwrap(),
            b"TABULA-OPTIM-1\n\xff".to_vec(),
            state[..state.len() / 2].to_vec(),
            Vec::new(),
        ] {
            assert!(resumed.load_optimizer_state(&bad).is_err());
        }
        assert_eq!(resumed.weights().tensors, before.tensors);
        resumed.step(&batch).unwrap();
        original.step(&batch).unwrap();
        assert!(
            diff(&original, &resumed) < 1e-6,
            "still the original's state"
        );
    }
}
