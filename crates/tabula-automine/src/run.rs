//! A training run of the mine model in a directory, resumable at any point.
//!
//! `DIR/automine.json` holds the configuration; `DIR/data/<level>-<rule>.bin` the
//! labelled positions of each board (made once, written atomically, so an interrupted
//! run regenerates only what is missing); `DIR/model.safetensors` the latest network
//! with its step count and training seconds; `DIR/metrics.jsonl` one line per
//! evaluation. Killing the trainer loses at most the steps since the last evaluation.
//! Adam's moments are not saved: a resumed run restarts them (a few hundred steps of
//! slightly larger updates).

use std::path::{Path, PathBuf};
use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use tabula_mines::labels::{encode, PLANES};
use tabula_mines::{Config, FirstClick, Level};
use tabula_nn::{CellArch, CellBatch, CellNetFile, CellTrainer, TrainConfig};
use tabula_zero::lock::RunLock;
use tabula_zero::run::write_atomic;
use tabula_zero::Progress;

use crate::dataset::{self, Position, Split, DATA_SEED_BASE};
use crate::error::io_err;
use crate::eval::{measure, Quality};
use crate::model::{MineNet, TASK};
use crate::AutoMineError;

/// One kind of board the model learns from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Board {
    /// The level.
    pub level: Level,
    /// The first-click rule.
    pub rule: FirstClick,
}

impl Board {
    /// `LEVEL/RULE`, e.g. `expert/safe`.
    pub fn parse(text: &str) -> Result<Board, AutoMineError> {
        let (l, r) = text.split_once('/').ok_or_else(|| {
            AutoMineError::Config(format!(
                "board {text:?} is not LEVEL/RULE, e.g. expert/safe"
            ))
        })?;
        Ok(Board {
            level: l.parse()?,
            rule: r.parse()?,
        })
    }

    /// The game configuration.
    pub fn config(&self) -> Config {
        Config::level(self.level, self.rule)
    }

    /// The first seed of this board's data games: each board has its own range, so
    /// adding a board changes no other board's data.
    pub fn first_seed(&self) -> u64 {
        let l = self.level as u64;
        let r = self.rule as u64;
        DATA_SEED_BASE + ((l * 3 + r) << 32)
    }

    fn data_file(&self) -> String {
        format!("data/{}-{}.bin", self.level, self.rule)
    }
}

impl std::fmt::Display for Board {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.level, self.rule)
    }
}

/// How a run is made.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    /// The trunk, `BLOCKSxCHANNELS`.
    pub size: String,
    /// Boards, `LEVEL/RULE`.
    pub boards: Vec<String>,
    /// Data games per board (all three splits).
    pub games: u64,
    /// Share of each game's turns kept as positions.
    pub keep: f64,
    /// Positions per training batch.
    pub batch: usize,
    /// Total training steps (a resumed run continues up to this).
    pub steps: u64,
    /// Evaluate, save and log every this many steps.
    pub eval_every: u64,
    /// Validation positions per board used at each evaluation.
    pub validation_positions: usize,
    /// Optimiser settings.
    pub train: TrainConfig,
    /// Seed of the initial weights and of batch sampling.
    pub seed: u64,
}

/// The defaults are the shipped model's first stage (`models/mines.json`).
impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            size: "4x32".into(),
            boards: ["beginner", "intermediate", "expert"]
                .iter()
                .flat_map(|l| ["safe", "opening"].map(|r| format!("{l}/{r}")))
                .collect(),
            games: 5000,
            keep: 0.3,
            batch: 32,
            steps: 12_000,
            eval_every: 500,
            validation_positions: 300,
            train: TrainConfig {
                learning_rate: 1e-3,
                lr_decay_steps: 8_000,
                lr_decay: 0.3,
                weight_decay: 1e-5,
                ..TrainConfig::default()
            },
            seed: 1,
        }
    }
}

impl RunConfig {
    /// The boards, parsed.
    pub fn boards(&self) -> Result<Vec<Board>, AutoMineError> {
        if self.boards.is_empty() {
            return Err(AutoMineError::Config("no boards to train on".into()));
        }
        self.boards.iter().map(|b| Board::parse(b)).collect()
    }

    /// Checks every field.
    pub fn validate(&self) -> Result<(), AutoMineError> {
        self.boards()?;
        CellArch::parse(PLANES, &self.size)?;
        let bad = |m: &str| Err(AutoMineError::Config(m.into()));
        if !(1..=10_000_000).contains(&self.games) {
            return bad("games must be 1 to 10,000,000");
        }
        if !(self.keep > 0.0 && self.keep <= 1.0) {
            return bad("keep must be in (0, 1]");
        }
        if !(1..=4096).contains(&self.batch) {
            return bad("batch must be 1 to 4096");
        }
        if self.eval_every == 0 {
            return bad("eval_every must be at least 1");
        }
        for (name, v, lo, hi) in self.train.ranges() {
            if !(lo..=hi).contains(&v) {
                return bad(&format!("train.{name} must lie in [{lo}, {hi}] (got {v})"));
            }
        }
        Ok(())
    }

    /// Whether a run made with `other` can continue with these settings: the data
    /// (boards, games, keep), the network's size and the seed must agree; the schedule
    /// (steps, batch, optimiser, evaluation) may change on resume.
    fn same_run(&self, other: &RunConfig) -> bool {
        (&self.size, &self.boards, self.games, self.keep, self.seed)
            == (
                &other.size,
                &other.boards,
                other.games,
                other.keep,
                other.seed,
            )
    }
}

/// One evaluation, as a line of `metrics.jsonl`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MinesMetrics {
    /// Training steps so far.
    pub step: u64,
    /// Training seconds so far (data generation excluded), across resumes.
    pub seconds: f64,
    /// Mean training loss since the previous line.
    pub train_loss: f64,
    /// Per board: validation KL divergence from the exact probabilities (nats/cell).
    pub validation_kl: Vec<(String, f64)>,
    /// Per board: share of validation positions whose safest cell is exactly safest.
    pub validation_safest: Vec<(String, f64)>,
}

/// Reads `metrics.jsonl` of a run.
pub fn read_metrics(dir: &Path) -> Result<Vec<MinesMetrics>, AutoMineError> {
    let path = dir.join("metrics.jsonl");
    let text = std::fs::read_to_string(&path).map_err(io_err(&path))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str(l).map_err(|e| AutoMineError::BadData {
                path: path.display().to_string(),
                reason: e.to_string(),
            })
        })
        .collect()
}

/// Whether `dir` holds a mine-model run.
pub fn is_run(dir: &Path) -> bool {
    dir.join("automine.json").is_file()
}

/// An open run (it holds the directory's lock).
pub struct MinesRun {
    dir: PathBuf,
    config: RunConfig,
    _lock: RunLock,
}

impl MinesRun {
    /// Opens `dir`, creating it if needed. A run made with another configuration is
    /// refused unless `restart`, which first deletes what the run made (data, model,
    /// metrics); only the step target may change on resume.
    pub fn open(dir: &Path, config: RunConfig, restart: bool) -> Result<MinesRun, AutoMineError> {
        config.validate()?;
        std::fs::create_dir_all(dir.join("data")).map_err(io_err(dir))?;
        let lock = RunLock::acquire(dir)?;
        let path = dir.join("automine.json");
        if restart {
            for f in ["automine.json", "model.safetensors", "metrics.jsonl"] {
                let p = dir.join(f);
                if p.exists() {
                    std::fs::remove_file(&p).map_err(io_err(&p))?;
                }
            }
            // Only the files a run writes: a directory given by mistake keeps the rest.
            for level in [Level::Beginner, Level::Intermediate, Level::Expert] {
                for rule in [FirstClick::None, FirstClick::Safe, FirstClick::Opening] {
                    let board = Board { level, rule }.data_file();
                    for p in [dir.join(&board), dir.join(&board).with_extension("tmp")] {
                        if p.exists() {
                            std::fs::remove_file(&p).map_err(io_err(&p))?;
                        }
                    }
                }
            }
        } else if path.is_file() {
            let stored = stored_config(dir)?;
            if !stored.same_run(&config) {
                return Err(AutoMineError::Config(format!(
                    "{} was made with another configuration ({}); use the same options, or --restart to delete it and start again",
                    dir.display(),
                    path.display()
                )));
            }
        } else if dir.join("model.safetensors").exists() {
            return Err(AutoMineError::Config(format!(
                "{} holds a model but no automine.json; --restart to start again there",
                dir.display()
            )));
        }
        let json = serde_json::to_string_pretty(&config).unwrap_or_default();
        write_atomic(&path, json.as_bytes())?;
        Ok(MinesRun {
            dir: dir.to_path_buf(),
            config,
            _lock: lock,
        })
    }

    /// The labelled positions of `board`, generated if the run has none yet.
    pub fn data(
        &self,
        board: Board,
        progress: &dyn Progress,
    ) -> Result<Vec<Position>, AutoMineError> {
        let path = self.dir.join(board.data_file());
        if path.is_file() {
            return dataset::read(&path);
        }
        progress.message(&format!(
            "generating {} games of {board} (exact labels)…",
            self.config.games
        ));
        let chunk = 100;
        let mut positions = Vec::new();
        progress.start(&format!("data {board}"), self.config.games);
        let mut done = 0;
        while done < self.config.games {
            let n = chunk.min(self.config.games - done);
            positions.extend(dataset::generate(
                board.config(),
                board.first_seed() + done,
                n,
                self.config.keep,
            )?);
            for _ in 0..n {
                progress.tick();
            }
            done += n;
        }
        progress.finish();
        dataset::write(&path, &positions)?;
        Ok(positions)
    }

    /// Trains up to the configured step target. `init` seeds a new run's network (a
    /// shipped model, to continue its training); a resumed run ignores it.
    pub fn train(
        &self,
        init: Option<&CellNetFile>,
        progress: &dyn Progress,
    ) -> Result<CellNetFile, AutoMineError> {
        let boards = self.config.boards()?;
        let mut train_sets = Vec::new();
        let mut validation_sets = Vec::new();
        for &b in &boards {
            let data = self.data(b, progress)?;
            let (train, rest): (Vec<_>, Vec<_>) = data
                .into_iter()
                .partition(|p| Split::of(p.seed) == Split::Train);
            let mut validation: Vec<Position> = rest
                .into_iter()
                .filter(|p| Split::of(p.seed) == Split::Validation)
                .collect();
            validation.truncate(self.config.validation_positions);
            if train.is_empty() {
                return Err(AutoMineError::Config(format!(
                    "no training positions for {b}: raise games or keep"
                )));
            }
            train_sets.push(train);
            validation_sets.push(validation);
        }
        let model_path = self.dir.join("model.safetensors");
        let start = if model_path.is_file() {
            CellNetFile::load(&model_path)?
        } else if let Some(file) = init {
            let want = CellArch::parse(PLANES, &self.config.size)?;
            if (file.arch.blocks, file.arch.channels) != (want.blocks, want.channels) {
                return Err(AutoMineError::Config(format!(
                    "the initial model is {}x{}, the run's size is {}: give --size {}x{}",
                    file.arch.blocks,
                    file.arch.channels,
                    self.config.size,
                    file.arch.blocks,
                    file.arch.channels
                )));
            }
            let mut f = file.clone();
            f.extra.insert("init".into(), "given".into());
            f
        } else {
            let arch = CellArch::parse(PLANES, &self.config.size)?;
            CellNetFile::initial(&arch, TASK, self.config.seed)
        };
        start.check_task(TASK, PLANES)?;
        let mut seconds: f64 = start
            .extra
            .get("seconds")
            .and_then(|s| s.parse().ok())
            .unwrap_or(0.0);
        let mut trainer = CellTrainer::from_file(&start, self.config.train.clone())?;
        let target = self.config.steps;
        if trainer.steps() >= target {
            if !model_path.is_file() {
                // An initial model counts its own steps: a target at or below them
                // would train nothing and leave the run without a model.
                return Err(AutoMineError::Config(format!(
                    "the initial model has {} steps already, the run's target is {target}: \
                     give --steps above {} (steps count from the initial model's)",
                    trainer.steps(),
                    trainer.steps()
                )));
            }
            progress.message(&format!("the run has {} steps already", trainer.steps()));
            return Ok(start);
        }
        // The loop always saves at the target step, so this ends as the saved model.
        let mut saved = start;
        progress.start("training steps", target - trainer.steps());
        let mut loss_sum = 0.0;
        let mut loss_count = 0usize;
        let mut clock = Instant::now();
        while trainer.steps() < target {
            let step = trainer.steps();
            let mut rng = ChaCha8Rng::seed_from_u64(
                self.config.seed ^ step.wrapping_mul(0x9e37_79b9_7f4a_7c15),
            );
            let set = &train_sets[step as usize % train_sets.len()];
            let batch = make_batch(set, self.config.batch, &mut rng);
            let loss = trainer.step(&batch)?;
            loss_sum += f64::from(loss);
            loss_count += 1;
            progress.tick();
            let next = trainer.steps();
            if next % self.config.eval_every == 0 || next == target {
                seconds += clock.elapsed().as_secs_f64();
                let mut file = trainer.file();
                file.extra.insert("seconds".into(), format!("{seconds:.1}"));
                file.extra
                    .insert("boards".into(), self.config.boards.join(","));
                let mut net = MineNet::from_file(&file)?;
                let qualities: Vec<Quality> = validation_sets
                    .iter()
                    .map(|v| measure(v, |view| net.probabilities(view)))
                    .collect();
                let line = MinesMetrics {
                    step: next,
                    seconds,
                    train_loss: loss_sum / loss_count.max(1) as f64,
                    validation_kl: boards
                        .iter()
                        .zip(&qualities)
                        .map(|(b, q)| (b.to_string(), q.kl))
                        .collect(),
                    validation_safest: boards
                        .iter()
                        .zip(&qualities)
                        .map(|(b, q)| (b.to_string(), q.safest_agrees))
                        .collect(),
                };
                file.save(&model_path)?;
                saved = file;
                append_metrics(&self.dir, &line)?;
                progress.message(&format!(
                    "step {next}: loss {:.4}, validation KL {}",
                    line.train_loss,
                    line.validation_kl
                        .iter()
                        .map(|(b, k)| format!("{b} {k:.4}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
                loss_sum = 0.0;
                loss_count = 0;
                clock = Instant::now();
            }
        }
        progress.finish();
        Ok(saved)
    }
}

/// The configuration stored in a run directory.
pub fn stored_config(dir: &Path) -> Result<RunConfig, AutoMineError> {
    let path = dir.join("automine.json");
    let text = std::fs::read_to_string(&path).map_err(io_err(&path))?;
    serde_json::from_str(&text).map_err(|e| AutoMineError::BadData {
        path: path.display().to_string(),
        reason: e.to_string(),
    })
}

/// The held-out test positions of every board of the run in `dir` (read without the
/// run's lock, so a run can be measured while it trains).
pub fn test_sets(dir: &Path) -> Result<Vec<(Board, Vec<Position>)>, AutoMineError> {
    stored_config(dir)?
        .boards()?
        .into_iter()
        .map(|b| {
            let data = dataset::read(&dir.join(b.data_file()))?;
            Ok((
                b,
                data.into_iter()
                    .filter(|p| Split::of(p.seed) == Split::Test)
                    .collect(),
            ))
        })
        .collect()
}

fn append_metrics(dir: &Path, line: &MinesMetrics) -> Result<(), AutoMineError> {
    use std::io::Write;
    let path = dir.join("metrics.jsonl");
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(io_err(&path))?;
    let text = serde_json::to_string(line).unwrap_or_default();
    writeln!(f, "{text}").map_err(io_err(&path))
}

/// `size` positions drawn from `set`, each under a random symmetry of its board.
pub fn make_batch(set: &[Position], size: usize, rng: &mut impl Rng) -> CellBatch {
    let dims = set[0].view.dims();
    let mut batch = CellBatch {
        size,
        height: dims.height,
        width: dims.width,
        ..CellBatch::default()
    };
    for _ in 0..size {
        let p = dataset::transform(&set[rng.random_range(0..set.len())], rng.random_range(0..8));
        batch.inputs.extend(encode(&p.view));
        batch.target.extend(&p.target);
        batch
            .mask
            .extend(p.view.cells().iter().map(|s| f32::from(s.is_hidden())));
    }
    batch
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::generate;

    #[test]
    fn the_net_overfits_a_handful_of_positions() {
        let board = Board::parse("beginner/safe").unwrap();
        let mut set = generate(board.config(), board.first_seed(), 6, 1.0).unwrap();
        set.truncate(8);
        let arch = CellArch::parse(PLANES, "2x16").unwrap();
        let config = TrainConfig {
            learning_rate: 3e-3,
            weight_decay: 0.0,
            ..TrainConfig::default()
        };
        let mut trainer =
            CellTrainer::from_file(&CellNetFile::initial(&arch, TASK, 2), config).unwrap();
        let kl = |t: &CellTrainer| {
            let mut net = MineNet::from_file(&t.file()).unwrap();
            measure(&set, |v| net.probabilities(v)).kl
        };
        let before = kl(&trainer);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for _ in 0..300 {
            let batch = make_batch(&set, 8, &mut rng);
            trainer.step(&batch).unwrap();
        }
        let after = kl(&trainer);
        assert!(before > 0.05, "{before}");
        assert!(after < before / 5.0, "KL {before} -> {after}");
    }

    #[test]
    fn boards_parse_and_runs_refuse_other_data() {
        assert_eq!(
            Board::parse("expert/opening").unwrap().to_string(),
            "expert/opening"
        );
        assert!(Board::parse("expert").is_err());
        assert!(Board::parse("huge/safe").is_err());
        let a = RunConfig::default();
        assert!(a.same_run(&RunConfig {
            steps: 5,
            eval_every: 7,
            ..a.clone()
        }));
        assert!(!a.same_run(&RunConfig {
            games: 5,
            ..a.clone()
        }));
        let bad = RunConfig {
            keep: f64::NAN,
            ..a.clone()
        };
        assert!(bad.validate().is_err());
        let bad = RunConfig {
            boards: vec![],
            ..a
        };
        assert!(bad.validate().is_err());
    }
}
