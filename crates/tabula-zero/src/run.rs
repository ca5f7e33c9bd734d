//! A training run: the AlphaZero loop over a run directory that survives being killed.
//!
//! Layout of `DIR`:
//! - `config.toml` — the run's configuration, written once;
//! - `state.json` — iterations completed, best and latest checkpoints, totals (written last
//!   in each iteration, atomically: the iteration is done when this file says so);
//! - `checkpoints/iter-NNNN.safetensors` — the network after iteration N (0: initial),
//!   and `checkpoints/iter-NNNN.optim` the optimiser's state then (Adam's moments);
//! - `best.safetensors` — a copy of the network self-play uses;
//! - `games/iter-NNNN.jsonl.gz` — the self-play games of iteration N ([`crate::records`]);
//! - `games/iter-NNNN.stats.json` — that self-play's statistics (for a resumed
//!   iteration's metrics);
//! - `metrics.csv` and `metrics.jsonl` — one row per iteration;
//! - `lock` — held while a trainer works on the run ([`crate::lock`]).
//!
//! Every file is written to a temporary name and renamed, so a crash leaves either the old
//! or the new file. On restart, rows and files beyond the last completed iteration are
//! discarded or reused (a finished self-play file is reused), so no iteration is lost or
//! counted twice. A resumed run continues the optimiser from the latest checkpoint's state
//! (a run from before states were saved, or one started with `--init`, starts it afresh).
//! A directory with a run's files but no `state.json` is not started over unless asked
//! (`restart`), and a diverging loss stops the run at its last good checkpoint.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use tabula_core::Game;
use tabula_nn::{
    search_evaluator, Architecture, Losses, Network, NetworkEvaluator, Trainer, WeightFile,
};
use tabula_search::agent::MctsAgent;
use tabula_search::arena::play_match;
use tabula_search::Evaluator;

use crate::accuracy::{measure, Accuracy, EvalSet};
use crate::config::ZeroConfig;
use crate::error::io_err;
use crate::lock::RunLock;
use crate::records::{read_records, write_records, GameRecord};
use crate::replay::ReplayBuffer;
use crate::selfplay::{play_games, SelfPlayStats};
use crate::teacher::{play_teacher_games, KnowledgeSource};
use crate::ZeroError;

/// What the run has done so far (`state.json`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    /// Iterations completed.
    pub iteration: usize,
    /// The checkpoint self-play uses (relative to the run directory).
    pub best: String,
    /// The newest checkpoint.
    pub latest: String,
    /// Training steps taken.
    pub steps: u64,
    /// Self-play games played.
    pub games: usize,
    /// Wall time spent in completed iterations.
    pub seconds: f64,
}

/// One row of the metrics.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// The iteration.
    pub iteration: usize,
    /// Total wall time at its end.
    pub seconds: f64,
    /// Self-play seconds of this iteration.
    pub selfplay_seconds: f64,
    /// Training seconds of this iteration.
    pub train_seconds: f64,
    /// Games so far.
    pub games: usize,
    /// Training steps so far.
    pub steps: u64,
    /// Positions in the replay buffer.
    pub replay: usize,
    /// Mean losses over the iteration's steps.
    pub losses: Losses,
    /// Mean entropy (nats) of the network's policy on positions of this iteration's games.
    pub policy_entropy: f64,
    /// Self-play games per second.
    pub games_per_s: f64,
    /// This iteration's self-play.
    pub selfplay: SelfPlayStats,
    /// False resigns / would-be resigns in no-resign games (none when no game would have
    /// resigned).
    pub false_resign_rate: Option<f64>,
    /// Arena score of the new network against the best (gated runs).
    pub gate_score: Option<f64>,
    /// The new network became the best.
    pub promoted: bool,
    /// Accuracy against the solver (when measured).
    pub accuracy: Option<Accuracy>,
    /// Shared runs: seconds the trainer waited for games with none arriving.
    #[serde(default)]
    pub idle_seconds: Option<f64>,
    /// Shared runs: self-play workers whose games this generation trained on.
    #[serde(default)]
    pub workers: Option<usize>,
}

/// Receives progress (the CLI draws bars from it).
pub trait Progress: Sync {
    /// A phase with `total` steps begins.
    fn start(&self, phase: &str, total: u64);
    /// One step of the phase is done.
    fn tick(&self);
    /// The phase is over.
    fn finish(&self);
    /// A line of news.
    fn message(&self, line: &str);
}

/// Progress that goes nowhere.
pub struct Silent;

impl Progress for Silent {
    fn start(&self, _: &str, _: u64) {}
    fn tick(&self) {}
    fn finish(&self) {}
    fn message(&self, _: &str) {}
}

/// Writes `bytes` to `path` atomically.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ZeroError> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).map_err(io_err(&tmp))?;
    std::fs::rename(&tmp, path).map_err(io_err(path))
}

fn checkpoint_name(iteration: usize) -> String {
    format!("checkpoints/iter-{iteration:04}.safetensors")
}

/// The optimiser state saved beside a checkpoint.
fn optimizer_name(checkpoint: &str) -> String {
    let stem = checkpoint
        .strip_suffix(".safetensors")
        .unwrap_or(checkpoint);
    format!("{stem}.optim")
}

/// An optimiser state (Adam's moments) known to fit a network: the only way to make
/// one is [`OptimizerState::check`], so a run given one need not check it again.
pub struct OptimizerState(Vec<u8>);

impl OptimizerState {
    /// `bytes` if they fit `init`'s network under `config`'s optimiser.
    pub fn check(
        init: &WeightFile,
        config: &ZeroConfig,
        bytes: Vec<u8>,
    ) -> Result<Self, ZeroError> {
        let mut trainer = Trainer::from_weights(init, config.net.optimizer.clone())?;
        trainer.load_optimizer_state(&bytes)?;
        Ok(OptimizerState(bytes))
    }
}

/// Where the optimiser state of a network file lies: beside it, `NAME.optim` for
/// `NAME.safetensors` (as a run's checkpoints keep theirs; ship it with a model so that
/// `--init` continues its optimiser).
pub fn optimizer_path(weights: &Path) -> PathBuf {
    weights.with_extension("optim")
}

fn stats_name(iteration: usize) -> String {
    format!("games/iter-{iteration:04}.stats.json")
}

fn games_name(iteration: usize) -> String {
    format!("games/iter-{iteration:04}.jsonl.gz")
}

/// One column of `metrics.csv`: its name and how a row writes it. Header and rows come
/// from this one list, so they cannot drift apart.
type Column = (&'static str, fn(&Metrics) -> String);

fn opt(x: Option<f64>) -> String {
    x.map_or(String::new(), |v| format!("{v:.4}"))
}

const CSV_COLUMNS: &[Column] = &[
    ("iteration", |m| m.iteration.to_string()),
    ("seconds", |m| format!("{:.1}", m.seconds)),
    ("selfplay_seconds", |m| format!("{:.1}", m.selfplay_seconds)),
    ("train_seconds", |m| format!("{:.1}", m.train_seconds)),
    ("games", |m| m.games.to_string()),
    ("steps", |m| m.steps.to_string()),
    ("replay", |m| m.replay.to_string()),
    ("policy_loss", |m| format!("{:.4}", m.losses.policy)),
    ("value_loss", |m| format!("{:.4}", m.losses.value)),
    ("policy_entropy", |m| format!("{:.4}", m.policy_entropy)),
    ("games_per_s", |m| format!("{:.2}", m.games_per_s)),
    ("first_wins", |m| m.selfplay.first_wins.to_string()),
    ("second_wins", |m| m.selfplay.second_wins.to_string()),
    ("draws", |m| m.selfplay.draws.to_string()),
    ("resigned", |m| m.selfplay.resigned.to_string()),
    ("false_resign_rate", |m| opt(m.false_resign_rate)),
    ("gate_score", |m| opt(m.gate_score)),
    ("promoted", |m| (m.promoted as u8).to_string()),
    ("policy_optimal", |m| {
        opt(m.accuracy.map(|a| a.policy_optimal))
    }),
    ("policy_keeps", |m| opt(m.accuracy.map(|a| a.policy_keeps))),
    ("mcts_optimal", |m| opt(m.accuracy.map(|a| a.mcts_optimal))),
    ("mcts_keeps", |m| opt(m.accuracy.map(|a| a.mcts_keeps))),
    ("idle_seconds", |m| opt(m.idle_seconds)),
    ("workers", |m| {
        m.workers.map_or(String::new(), |w| w.to_string())
    }),
    ("ownership_loss", |m| format!("{:.4}", m.losses.ownership)),
    ("score_loss", |m| format!("{:.4}", m.losses.score)),
];

pub(crate) fn csv_header() -> String {
    CSV_COLUMNS
        .iter()
        .map(|c| c.0)
        .collect::<Vec<_>>()
        .join(",")
}

impl Metrics {
    pub(crate) fn csv(&self) -> String {
        CSV_COLUMNS
            .iter()
            .map(|c| c.1(self))
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// Reads the metrics of a run (`metrics.jsonl`).
pub fn read_metrics(dir: &Path) -> Result<Vec<Metrics>, ZeroError> {
    let path = dir.join("metrics.jsonl");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err(&path)(e)),
    };
    parse_metrics(&text).map_err(|reason| ZeroError::Run {
        dir: dir.display().to_string(),
        reason,
    })
}

/// The rows of a `metrics.jsonl` text.
pub(crate) fn parse_metrics(text: &str) -> Result<Vec<Metrics>, String> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).map_err(|e| format!("bad metrics line: {e}")))
        .collect()
}

/// Reads `state.json`.
pub fn read_state(dir: &Path) -> Result<RunState, ZeroError> {
    let path = dir.join("state.json");
    let text = std::fs::read_to_string(&path).map_err(io_err(&path))?;
    serde_json::from_str(&text).map_err(|e| ZeroError::Run {
        dir: dir.display().to_string(),
        reason: format!("bad state.json: {e}"),
    })
}

/// The configuration stored in a run directory, if the run exists.
pub fn stored_config(dir: &Path, defaults: &ZeroConfig) -> Result<Option<ZeroConfig>, ZeroError> {
    let path = dir.join("config.toml");
    match std::fs::read_to_string(&path) {
        Ok(text) => ZeroConfig::from_toml(&text, defaults).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_err(&path)(e)),
    }
}

/// A run directory being trained.
pub struct Run<'a, G: Game> {
    dir: PathBuf,
    config: ZeroConfig,
    start: G,
    eval_set: Option<&'a EvalSet<G>>,
    teacher: Option<&'a KnowledgeSource<'a, G>>,
    progress: &'a dyn Progress,
    _lock: RunLock,
}

impl<'a, G: Game> Run<'a, G> {
    /// Opens `dir` for training, taking its lock: creates the run with `config` if the
    /// directory holds none, resumes it otherwise (storing `config`, which may extend
    /// it), and starts it over only when `restart` says so. A directory that holds a
    /// run's files without its `state.json` is refused unless `restart`: starting over
    /// would overwrite them. A new run starts from `init`'s weights when given (a
    /// shipped network, to continue training elsewhere), from random ones otherwise.
    /// Games start at `start`; accuracy is measured on `eval_set` if given.
    #[allow(clippy::too_many_arguments)]
    pub fn open(
        dir: &Path,
        config: ZeroConfig,
        start: G,
        init: Option<&WeightFile>,
        eval_set: Option<&'a EvalSet<G>>,
        progress: &'a dyn Progress,
        restart: bool,
    ) -> Result<Self, ZeroError> {
        config.validate_for(&start.name())?;
        std::fs::create_dir_all(dir).map_err(io_err(dir))?;
        let lock = RunLock::acquire(dir)?;
        let run = Run {
            dir: dir.to_path_buf(),
            config,
            start,
            eval_set,
            teacher: None,
            progress,
            _lock: lock,
        };
        let has_state = run.path("state.json").exists();
        if restart {
            run.clear()?;
        } else if !has_state {
            if let Some(file) = run.run_files()?.first() {
                return Err(ZeroError::Run {
                    dir: dir.display().to_string(),
                    reason: format!(
                        "it holds a run's files ({} and more) but no state.json, so it cannot be resumed; pass --restart to start it over, deleting them",
                        file.display()
                    ),
                });
            }
        }
        for sub in ["checkpoints", "games"] {
            let d = dir.join(sub);
            std::fs::create_dir_all(&d).map_err(io_err(&d))?;
        }
        if restart || !has_state {
            run.create(init)?;
        } else if init.is_some() {
            return Err(ZeroError::Run {
                dir: dir.display().to_string(),
                reason: "it already holds a run; --init starts new runs only (give a new directory, or --restart)".into(),
            });
        } else if stored_config(dir, &run.config)?.as_ref() != Some(&run.config) {
            // Extending a run (more iterations, another time limit): keep it in step.
            write_atomic(&run.path("config.toml"), run.config.to_toml().as_bytes())?;
        }
        Ok(run)
    }

    /// Gives the game's knowledge (heavy playouts, priors): the UCT teacher of the
    /// first `teacher.iterations` plays with it (without it, light playouts), and the
    /// replay buffer settles the end of every counted game with it before taking
    /// ownership and score targets (Go's dead stones off; [`ReplayBuffer::with_settling`]).
    pub fn with_knowledge(mut self, knowledge: &'a KnowledgeSource<'a, G>) -> Self {
        self.teacher = Some(knowledge);
        self
    }

    /// Continues the optimiser of the network a new run started from (`--init`):
    /// `state`, Adam's moments saved beside that network ([`optimizer_path`]), becomes
    /// the state of checkpoint 0, so that the first steps do not restart Adam from zero
    /// moments (whose first updates move every weight by about the learning rate). Only
    /// for a run that has not trained yet.
    pub fn continue_optimizer(self, state: &OptimizerState) -> Result<Self, ZeroError> {
        if read_state(&self.dir)?.iteration > 0 {
            return Err(ZeroError::Run {
                dir: self.dir.display().to_string(),
                reason: "it has trained already; an --init optimiser state is for new runs".into(),
            });
        }
        write_atomic(&self.path(&optimizer_name(&checkpoint_name(0))), &state.0)?;
        Ok(self)
    }

    /// The files a run writes that are in the directory (not the cached eval set).
    fn run_files(&self) -> Result<Vec<PathBuf>, ZeroError> {
        let mut found = Vec::new();
        for name in [
            "state.json",
            "config.toml",
            "best.safetensors",
            "metrics.csv",
            "metrics.jsonl",
        ] {
            if self.path(name).exists() {
                found.push(self.path(name));
            }
        }
        for sub in ["checkpoints", "games"] {
            let d = self.path(sub);
            match std::fs::read_dir(&d) {
                Ok(entries) => {
                    for e in entries {
                        found.push(e.map_err(io_err(&d))?.path());
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io_err(&d)(e)),
            }
        }
        Ok(found)
    }

    /// Deletes the run's files, to start over.
    fn clear(&self) -> Result<(), ZeroError> {
        for path in self.run_files()? {
            std::fs::remove_file(&path).map_err(io_err(&path))?;
        }
        Ok(())
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    fn create(&self, init: Option<&WeightFile>) -> Result<(), ZeroError> {
        write_atomic(&self.path("config.toml"), self.config.to_toml().as_bytes())?;
        let weights = initial_weights(&self.start, &self.config, init)?;
        weights.save(&self.path(&checkpoint_name(0)))?;
        weights.save(&self.path("best.safetensors"))?;
        for name in ["metrics.csv", "metrics.jsonl"] {
            let _ = std::fs::remove_file(self.path(name));
        }
        let state = RunState {
            iteration: 0,
            best: checkpoint_name(0),
            latest: checkpoint_name(0),
            ..RunState::default()
        };
        self.save_state(&state)
    }

    fn save_state(&self, state: &RunState) -> Result<(), ZeroError> {
        let text = serde_json::to_string_pretty(state).unwrap_or_default();
        write_atomic(&self.path("state.json"), text.as_bytes())
    }

    /// Drops metrics rows beyond the completed iterations (left by a crash).
    fn trim_metrics(&self, iteration: usize) -> Result<(), ZeroError> {
        let rows: Vec<Metrics> = read_metrics(&self.dir)?
            .into_iter()
            .filter(|m| m.iteration <= iteration)
            .collect();
        let mut jsonl = String::new();
        let mut csv = format!("{}\n", csv_header());
        for r in &rows {
            jsonl.push_str(&serde_json::to_string(r).unwrap_or_default());
            jsonl.push('\n');
            csv.push_str(&r.csv());
            csv.push('\n');
        }
        write_atomic(&self.path("metrics.jsonl"), jsonl.as_bytes())?;
        write_atomic(&self.path("metrics.csv"), csv.as_bytes())
    }

    fn append_metrics(&self, m: &Metrics) -> Result<(), ZeroError> {
        for (name, line) in [
            (
                "metrics.jsonl",
                serde_json::to_string(m).unwrap_or_default(),
            ),
            ("metrics.csv", m.csv()),
        ] {
            let path = self.path(name);
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(&path)
                .map_err(io_err(&path))?;
            writeln!(f, "{line}").map_err(io_err(&path))?;
            f.sync_data().map_err(io_err(&path))?;
        }
        Ok(())
    }

    fn load_net(&self, name: &str) -> Result<(WeightFile, Arc<Network>), ZeroError> {
        let file = WeightFile::load(&self.path(name))?;
        file.check_game(&self.start)?;
        let net = Arc::new(Network::from_weights(&file)?);
        Ok((file, net))
    }

    /// Runs iterations until `config.iterations` are done or the time limit is reached.
    /// Returns the final state.
    pub fn train(&self) -> Result<RunState, ZeroError> {
        let mut state = read_state(&self.dir)?;
        self.trim_metrics(state.iteration)?;
        let cfg = &self.config;
        // The replay buffer from the games of the completed iterations, newest last.
        // Read backwards until the window is full, then add oldest first.
        let mut replay = ReplayBuffer::new(&self.start, cfg.net.replay_window)
            .with_settling(self.teacher.and_then(|k| k()));
        let mut recent = Vec::new();
        let mut held = 0;
        for it in (1..=state.iteration).rev() {
            if held >= cfg.net.replay_window {
                break;
            }
            let records = read_records(&self.path(&games_name(it)))?;
            held += records.iter().map(|r| r.moves.len()).sum::<usize>();
            recent.push((it, records));
        }
        for (it, records) in recent.iter().rev() {
            self.add_records(&mut replay, *it, records)?;
        }
        let (latest, _) = self.load_net(&state.latest)?;
        let mut trainer = Trainer::from_weights(&latest, cfg.net.optimizer.clone())?;
        let optim_path = self.path(&optimizer_name(&state.latest));
        match std::fs::read(&optim_path) {
            Ok(bytes) => {
                if let Err(e) = trainer.load_optimizer_state(&bytes) {
                    self.progress.message(&format!(
                        "{}: {e}; the optimiser starts afresh",
                        optim_path.display()
                    ));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_err(&optim_path)(e)),
        }
        let (_, mut best_net) = self.load_net(&state.best)?;
        let threads = cfg.selfplay.thread_count();
        while state.iteration < cfg.iterations {
            if cfg.time_limit_s > 0 && state.seconds >= cfg.time_limit_s as f64 {
                self.progress
                    .message(&format!("time limit of {} s reached", cfg.time_limit_s));
                break;
            }
            let it = state.iteration + 1;
            let t0 = Instant::now();
            // 1. Self-play (reused if a crash came after it was saved).
            let games_path = self.path(&games_name(it));
            let (records, stats) = if games_path.exists() {
                let records = read_records(&games_path)?;
                self.progress.message(&format!(
                    "iteration {it}: reusing {} saved games",
                    records.len()
                ));
                // The statistics were saved before the games (see below); a run from
                // before they were saved counts the games at least.
                let stats = std::fs::read_to_string(self.path(&stats_name(it)))
                    .ok()
                    .and_then(|t| serde_json::from_str(&t).ok())
                    .unwrap_or_else(|| SelfPlayStats {
                        games: records.len(),
                        moves: records.iter().map(|r| r.moves.len()).sum(),
                        ..SelfPlayStats::default()
                    });
                (records, stats)
            } else {
                let taught = it <= cfg.teacher.iterations;
                let phase = if taught { "teacher games" } else { "self-play" };
                self.progress.start(
                    &format!("iteration {it}: {phase}"),
                    cfg.selfplay.games as u64,
                );
                let tick = |_: &GameRecord| self.progress.tick();
                let seed = cfg.seed.wrapping_mul(1_000_003).wrapping_add(it as u64);
                let (records, stats) = if taught {
                    play_teacher_games(
                        &self.start,
                        cfg.selfplay.games,
                        &cfg.teacher,
                        &cfg.selfplay,
                        self.teacher.unwrap_or(&|| None),
                        seed,
                        &tick,
                    )?
                } else {
                    play_games(
                        &self.start,
                        best_net.clone(),
                        cfg.selfplay.games,
                        &cfg.search,
                        &cfg.selfplay,
                        seed,
                        &tick,
                    )?
                };
                self.progress.finish();
                let stats_text = serde_json::to_string(&stats).unwrap_or_default();
                write_atomic(&self.path(&stats_name(it)), stats_text.as_bytes())?;
                write_records(&games_path, &records)?;
                (records, stats)
            };
            self.add_records(&mut replay, it, &records)?;
            let selfplay_seconds = t0.elapsed().as_secs_f64();
            // 2. Training.
            let t1 = Instant::now();
            let mut rng = ChaCha8Rng::seed_from_u64(
                cfg.seed ^ (it as u64).wrapping_mul(0xA24B_AED4_963E_E407),
            );
            let (losses, mut weights) = train_round(
                &mut trainer,
                &replay,
                cfg,
                &mut rng,
                self.progress,
                it,
                state.iteration,
            )?;
            weights.extra.insert("iteration".into(), it.to_string());
            weights.save(&self.path(&checkpoint_name(it)))?;
            write_atomic(
                &self.path(&optimizer_name(&checkpoint_name(it))),
                &trainer.optimizer_state()?,
            )?;
            let candidate = Arc::new(Network::from_weights(&weights)?);
            let train_seconds = t1.elapsed().as_secs_f64();
            // 3. Gating.
            let (gate_score, promoted) = if cfg.gate.enabled {
                let score = self.arena(&candidate, &best_net, it)?;
                (Some(score), score >= cfg.gate.threshold)
            } else {
                (None, true)
            };
            if promoted {
                best_net = candidate.clone();
                state.best = checkpoint_name(it);
                weights.save(&self.path("best.safetensors"))?;
            }
            // 4. Accuracy against the solver.
            let measure_now =
                cfg.eval.every > 0 && (it % cfg.eval.every == 0 || it == cfg.iterations);
            let accuracy = match (self.eval_set, measure_now) {
                (Some(set), true) => {
                    self.progress.message(&format!(
                        "iteration {it}: measuring accuracy on {}",
                        set.name
                    ));
                    Some(measure(
                        set,
                        &best_net,
                        &cfg.search,
                        cfg.eval.simulations,
                        threads,
                    )?)
                }
                _ => None,
            };
            state.iteration = it;
            state.latest = checkpoint_name(it);
            state.steps = trainer.steps();
            state.games += records.len();
            state.seconds += t0.elapsed().as_secs_f64();
            let m = Metrics {
                iteration: it,
                seconds: state.seconds,
                selfplay_seconds,
                train_seconds,
                games: state.games,
                steps: state.steps,
                replay: replay.len(),
                losses,
                policy_entropy: policy_entropy(
                    &self.start,
                    &records,
                    &candidate,
                    cfg.search.eval_batch,
                    &mut rng,
                ),
                games_per_s: stats.games as f64 / stats.seconds.max(1e-9),
                false_resign_rate: (stats.would_resign > 0)
                    .then(|| stats.false_resigns as f64 / stats.would_resign as f64),
                selfplay: stats,
                gate_score,
                promoted,
                accuracy,
                idle_seconds: None,
                workers: None,
            };
            self.append_metrics(&m)?;
            self.save_state(&state)?;
            self.progress.message(&summary(&m));
        }
        Ok(state)
    }

    /// Adds iteration `it`'s games to the replay buffer.
    fn add_records(
        &self,
        replay: &mut ReplayBuffer<G>,
        it: usize,
        records: &[GameRecord],
    ) -> Result<(), ZeroError> {
        for r in records {
            replay
                .add_game(
                    &self.start,
                    r,
                    self.config.selfplay.value_mix,
                    self.config.search.discount,
                )
                .map_err(|reason| ZeroError::Record {
                    file: games_name(it),
                    reason,
                })?;
        }
        Ok(())
    }

    /// The new network's score against the best in an arena.
    fn arena(
        &self,
        candidate: &Arc<Network>,
        best: &Arc<Network>,
        it: usize,
    ) -> Result<f64, ZeroError> {
        let cfg = &self.config.gate;
        let search = &self.config.search;
        let mcts = search.mcts(cfg.simulations, it as u64);
        let mut a = MctsAgent::new(
            mcts,
            Box::new(search_evaluator(candidate.clone(), &self.start, search)?),
            "new",
        );
        let mut b = MctsAgent::new(
            mcts,
            Box::new(search_evaluator(best.clone(), &self.start, search)?),
            "best",
        );
        self.progress
            .start(&format!("iteration {it}: gating"), cfg.games as u64);
        let r = play_match(&self.start, &mut a, &mut b, cfg.games, 2, it as u64, |_| {
            self.progress.tick()
        });
        self.progress.finish();
        Ok(r.score())
    }
}

/// The weights a new run starts from: `init` (checked against the game) or random ones
/// of the configured size.
pub(crate) fn initial_weights<G: Game>(
    start: &G,
    config: &ZeroConfig,
    init: Option<&WeightFile>,
) -> Result<WeightFile, ZeroError> {
    if let Some(w) = init {
        w.check_game(start)?;
        // The configured trainer must accept it (its architecture is the file's own).
        Trainer::from_weights(w, config.net.optimizer.clone())?;
        return Ok(w.clone());
    }
    let arch = Architecture::preset(start, &config.net.size)?
        .with_heads(config.net.heads)?
        .with_global_pooling(config.net.global_pooling);
    Ok(Trainer::new(
        &arch,
        &start.name(),
        config.net.optimizer.clone(),
        config.seed,
    )
    .weights())
}

/// Training steps for one iteration over a window of `positions`: `net.steps`, fewer
/// where `net.max_reuse` caps the samples per position (at least one step).
pub(crate) fn steps_for(net: &crate::config::NetConfig, positions: usize) -> usize {
    if net.max_reuse <= 0.0 {
        return net.steps;
    }
    let cap = (net.max_reuse * positions as f64 / net.batch_size.max(1) as f64).ceil();
    net.steps.min(cap as usize).max(1)
}

/// One round of training for iteration `it`: [`steps_for`] steps on batches drawn from
/// `replay`; returns the mean losses and the new weights. A non-finite loss or weight is
/// [`ZeroError::Diverged`], naming `kept`, the iteration the run stays at.
pub(crate) fn train_round<G: Game>(
    trainer: &mut Trainer,
    replay: &ReplayBuffer<G>,
    cfg: &ZeroConfig,
    rng: &mut ChaCha8Rng,
    progress: &dyn Progress,
    it: usize,
    kept: usize,
) -> Result<(Losses, WeightFile), ZeroError> {
    let averaged;
    let replay = if cfg.net.average_positions {
        averaged = replay.averaged();
        &averaged
    } else {
        replay
    };
    let steps = steps_for(&cfg.net, replay.len());
    progress.start(&format!("iteration {it}: training"), steps as u64);
    let mut sum = Losses::default();
    for step in 1..=steps {
        let batch = replay.batch(cfg.net.batch_size, cfg.net.symmetries, rng);
        let l = trainer.step(&batch)?;
        if !l.total().is_finite() {
            progress.finish();
            return Err(ZeroError::Diverged {
                iteration: it,
                step,
                what: format!(
                    "policy loss {}, value loss {}, ownership loss {}, score loss {}",
                    l.policy, l.value, l.ownership, l.score
                ),
                kept,
            });
        }
        sum.policy += l.policy;
        sum.value += l.value;
        sum.ownership += l.ownership;
        sum.score += l.score;
        progress.tick();
    }
    progress.finish();
    let n = steps.max(1) as f32;
    let losses = Losses {
        policy: sum.policy / n,
        value: sum.value / n,
        ownership: sum.ownership / n,
        score: sum.score / n,
    };
    let weights = trainer.weights();
    if let Some(t) = weights
        .tensors
        .iter()
        .find(|t| t.data.iter().any(|v| !v.is_finite()))
    {
        return Err(ZeroError::Diverged {
            iteration: it,
            step: steps,
            what: format!("tensor {} holds a non-finite weight", t.name),
            kept,
        });
    }
    Ok((losses, weights))
}

/// Mean entropy (nats) of the network's policy over the legal moves of up to 256
/// positions of this iteration's self-play games.
pub(crate) fn policy_entropy<G: Game>(
    start: &G,
    records: &[GameRecord],
    net: &Arc<Network>,
    eval_batch: usize,
    rng: &mut ChaCha8Rng,
) -> f64 {
    // Draw up to 256 of the positions before a move, uniformly, and replay only the
    // games they come from, up to the last drawn position of each.
    let total: usize = records.iter().map(|r| r.moves.len()).sum();
    if total == 0 {
        return 0.0;
    }
    let mut picks: Vec<usize> = (0..total.min(256))
        .map(|_| rng.random_range(0..total))
        .collect();
    picks.sort_unstable();
    let mut positions: Vec<G> = Vec::with_capacity(picks.len());
    let (mut first, mut picked) = (0, 0);
    for r in records {
        let end = first + r.moves.len();
        let mut game = start.clone();
        let mut ply = first;
        while picked < picks.len() && picks[picked] < end {
            // Play up to the drawn position; the record's moves were checked for
            // legality when it entered the replay buffer.
            while ply < picks[picked] {
                let Some(mv) = game.move_of(r.moves[ply - first] as usize) else {
                    return 0.0;
                };
                game.play(mv);
                ply += 1;
            }
            positions.push(game.clone());
            picked += 1;
        }
        first = end;
    }
    let n = positions.len();
    let Ok(mut evaluator) = NetworkEvaluator::new(net.clone(), start, eval_batch) else {
        return 0.0;
    };
    let mut evals = Vec::new();
    evaluator.evaluate(&positions, &mut evals);
    let total: f64 = evals
        .iter()
        .zip(&positions)
        .map(|(e, g)| {
            e.legal_priors(g)
                .into_iter()
                .filter(|p| p.1 > 0.0)
                .map(|(_, p)| -(p as f64) * (p as f64).ln())
                .sum::<f64>()
        })
        .sum();
    total / n.max(1) as f64
}

pub(crate) fn summary(m: &Metrics) -> String {
    let acc = m.accuracy.map_or(String::new(), |a| {
        format!(
            "  accuracy: policy {:.1}% (keeps result {:.1}%), mcts {:.1}% ({:.1}%)",
            100.0 * a.policy_optimal,
            100.0 * a.policy_keeps,
            100.0 * a.mcts_optimal,
            100.0 * a.mcts_keeps
        )
    });
    format!(
        "iteration {}: loss p {:.3} v {:.3}{}, entropy {:.2}, {} games ({:.1}/s; W/D/L first {}/{}/{}), {:.0} s total{}{}",
        m.iteration,
        m.losses.policy,
        m.losses.value,
        if m.losses.ownership > 0.0 || m.losses.score > 0.0 {
            format!(" own {:.3} score {:.3}", m.losses.ownership, m.losses.score)
        } else {
            String::new()
        },
        m.policy_entropy,
        m.games,
        m.games_per_s,
        m.selfplay.first_wins,
        m.selfplay.draws,
        m.selfplay.second_wins,
        m.seconds,
        m.gate_score.map_or(String::new(), |s| format!(", gate {:.2}{}", s, if m.promoted { " (promoted)" } else { "" })),
        acc
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use tabula_core::TicTacToe;

    fn small_config() -> ZeroConfig {
        ZeroConfig::for_game(
            "tictactoe",
            "iterations = 1\n[selfplay]\ngames = 2\nsimulations = 8\n[net]\nsteps = 2\nbatch_size = 8\n[eval]\nevery = 0\n[gate]\nenabled = false\n",
        )
        .unwrap()
    }

    #[test]
    fn max_reuse_caps_the_steps_of_a_nearly_empty_window() {
        let mut net = crate::config::NetConfig {
            steps: 60,
            batch_size: 256,
            ..Default::default()
        };
        assert_eq!(steps_for(&net, 100), 60, "no cap by default");
        net.max_reuse = 1.0;
        // 2,370 positions sampled at most once each: 10 batches of 256
        assert_eq!(steps_for(&net, 2_370), 10);
        assert_eq!(steps_for(&net, 0), 1, "always at least one step");
        assert_eq!(
            steps_for(&net, 150_000),
            60,
            "a full window takes every step"
        );
    }

    fn tmp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tabula-run-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn open(dir: &Path, restart: bool) -> Result<Run<'static, TicTacToe>, ZeroError> {
        Run::open(
            dir,
            small_config(),
            TicTacToe::new(),
            None,
            None,
            &Silent,
            restart,
        )
    }

    #[test]
    fn a_run_without_state_is_not_started_over_unless_asked() {
        let dir = tmp("no-state");
        open(&dir, false).unwrap().train().unwrap();
        let checkpoint = std::fs::read(dir.join(checkpoint_name(1))).unwrap();
        // the optimiser's state lies beside the checkpoint and fits its network
        let weights = WeightFile::load(&dir.join(checkpoint_name(1))).unwrap();
        let mut trainer = Trainer::from_weights(&weights, small_config().net.optimizer).unwrap();
        let state = std::fs::read(dir.join(optimizer_name(&checkpoint_name(1)))).unwrap();
        trainer.load_optimizer_state(&state).unwrap();
        std::fs::remove_file(dir.join("state.json")).unwrap();
        let err = open(&dir, false).err().expect("refused").to_string();
        assert!(
            err.contains("no state.json") && err.contains("--restart"),
            "{err}"
        );
        assert_eq!(
            std::fs::read(dir.join(checkpoint_name(1))).unwrap(),
            checkpoint,
            "nothing overwritten"
        );
        assert!(
            !dir.join("lock").exists(),
            "the refused open released its lock"
        );
        // asked to, it starts over: the old iterations' files are gone
        let run = open(&dir, true).unwrap();
        assert!(!dir.join(checkpoint_name(1)).exists());
        assert!(!dir.join(games_name(1)).exists());
        assert_eq!(read_state(&dir).unwrap().iteration, 0);
        // while it is open, a second trainer is refused
        let err = open(&dir, false).err().expect("locked").to_string();
        assert!(err.contains("another trainer"), "{err}");
        drop(run);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_diverging_loss_stops_at_the_last_good_checkpoint() {
        let dir = tmp("diverge");
        let run = open(&dir, false).unwrap();
        // The trainer resumes from a network whose weights are finite but huge, so
        // that its logits and losses overflow.
        let mut blown = WeightFile::load(&dir.join(checkpoint_name(0))).unwrap();
        for t in &mut blown.tensors {
            for v in &mut t.data {
                *v = if *v == 0.0 { 1e30 } else { *v * 1e30 };
            }
        }
        blown
            .save(&dir.join("checkpoints/blown.safetensors"))
            .unwrap();
        let mut state = read_state(&dir).unwrap();
        state.latest = "checkpoints/blown.safetensors".into();
        run.save_state(&state).unwrap();
        let err = run.train().unwrap_err();
        assert!(
            matches!(
                err,
                ZeroError::Diverged {
                    iteration: 1,
                    kept: 0,
                    ..
                }
            ),
            "{err}"
        );
        assert_eq!(read_state(&dir).unwrap(), state, "state unchanged");
        assert!(!dir.join(checkpoint_name(1)).exists(), "nothing saved");
        assert!(read_metrics(&dir).unwrap().is_empty());
        drop(run);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_first_iterations_are_played_by_the_teacher_then_by_the_network() {
        let dir = tmp("teacher");
        let mut config = small_config();
        config.iterations = 2;
        config.teacher.iterations = 1;
        config.teacher.playouts = 50;
        let called = std::sync::atomic::AtomicUsize::new(0);
        type Found = Option<Box<dyn tabula_search::uct::Knowledge<TicTacToe> + Send + Sync>>;
        let knowledge = || -> Found {
            called.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            None
        };
        Run::open(&dir, config, TicTacToe::new(), None, None, &Silent, false)
            .unwrap()
            .with_knowledge(&knowledge)
            .train()
            .unwrap();
        assert!(
            called.into_inner() > 0,
            "the teacher asked for its knowledge"
        );
        // The teacher's games make every position a policy target, played out to the
        // end; the network's (playout-cap randomisation off here) too, but by MCTS,
        // whose root values carry the network's noise.
        let taught = read_records(&dir.join(games_name(1))).unwrap();
        assert_eq!(taught.len(), 2);
        assert!(taught.iter().all(|r| r.policy.iter().all(|p| p.is_some())));
        assert!(taught.iter().all(|r| r.no_resign));
        let metrics = read_metrics(&dir).unwrap();
        assert_eq!(metrics.len(), 2);
        assert_eq!(metrics[1].games, 4);
        assert_eq!(read_state(&dir).unwrap().iteration, 2);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A tower with global-pooling branches trains, is saved with them, and resumes
    /// (weights and optimiser state) from its checkpoint.
    #[test]
    fn a_run_with_global_pooling_trains_and_resumes() {
        let dir = tmp("pooling");
        let mut config = small_config();
        config.net.size = "2x8".into();
        config.net.global_pooling = 1;
        let start = |config: ZeroConfig| {
            Run::open(&dir, config, TicTacToe::new(), None, None, &Silent, false)
                .unwrap()
                .train()
                .unwrap()
        };
        start(config.clone());
        config.iterations = 2;
        let state = start(config);
        assert_eq!(state.iteration, 2);
        let file = WeightFile::load(&dir.join(&state.latest)).unwrap();
        assert_eq!(file.arch.pooling_blocks(), 2);
        assert!(file
            .tensors
            .iter()
            .any(|t| t.name == "blocks.1.pool_fc.weight"));
        tabula_nn::Network::from_weights(&file).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_resumed_iteration_reports_its_saved_selfplay_statistics() {
        let dir = tmp("reuse");
        open(&dir, false).unwrap().train().unwrap();
        let first = read_metrics(&dir).unwrap().remove(0);
        assert!(first.games_per_s > 0.0 && first.selfplay.games == 2);
        // as if killed after self-play: the iteration's state and metrics are lost
        let mut state = read_state(&dir).unwrap();
        state.iteration = 0;
        state.latest = checkpoint_name(0);
        state.best = checkpoint_name(0);
        state.games = 0;
        open(&dir, false).unwrap().save_state(&state).unwrap();
        open(&dir, false).unwrap().train().unwrap();
        let again = read_metrics(&dir).unwrap().remove(0);
        assert_eq!(again.selfplay, first.selfplay);
        assert_eq!(again.games_per_s, first.games_per_s);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
