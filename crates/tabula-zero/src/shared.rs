//! A run shared by many machines through an object store ([`crate::store`]): self-play
//! workers upload games, one trainer consumes them and publishes networks.
//!
//! Layout under the run's prefix (KataGo's shared-directory design, on object storage):
//! - `config.toml` — the run's configuration (the trainer writes it);
//! - `models/GGGGGG.safetensors` — the network of generation G (0: the initial one);
//! - `LATEST` — the newest published generation, moved by a conditional put (an update
//!   that fails if someone else moved it), after everything it points to is written;
//! - `games/GGGGGG/WORKER-ID.jsonl.gz` — write-once game files ([`crate::records`]),
//!   under the generation whose network played them;
//! - `workers/WORKER.json` — each worker's last report (games, rate, generation);
//! - `trainer/state.json` — what the trainer has consumed and done;
//! - `metrics.jsonl`, `metrics.csv` — one row per generation, as for a local run;
//! - `lock.json` — the trainer's lease: created only if absent, renewed while the
//!   trainer lives, taken over only once expired;
//! - `FINISHED` — the trainer reached its last generation; workers stop.
//!
//! Faults: a worker uploads its finished games as they end, so a killed worker loses the
//! games it was playing; a killed trainer resumes from its last saved generation and
//! consumes again the games it had read after it; a worker on an older generation still
//! contributes (games from the last [`STALE_GENERATIONS`] generations are used).

use std::collections::{BTreeSet, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use tabula_core::Game;
use tabula_nn::{Network, Trainer, WeightFile};

use crate::accuracy::{measure, EvalSet};
use crate::config::ZeroConfig;
use crate::lock::{alive, host};
use crate::records::{decode_records, encode_records, GameRecord};
use crate::replay::ReplayBuffer;
use crate::run::{
    csv_header, initial_weights, parse_metrics, policy_entropy, summary, train_round, Metrics,
    Progress,
};
use crate::selfplay::{play_games, SelfPlayStats};
use crate::store::{RunStore, Version};
use crate::teacher::KnowledgeSource;
use crate::ZeroError;

/// The pointer to the newest generation.
pub const LATEST: &str = "LATEST";
/// The run's configuration.
pub const CONFIG: &str = "config.toml";
/// Written when the trainer has reached its last generation.
pub const FINISHED: &str = "FINISHED";
const STATE: &str = "trainer/state.json";
const LOCK: &str = "lock.json";
/// Games played by a network this many generations older than the newest are still
/// trained on; older ones are not looked for.
pub const STALE_GENERATIONS: usize = 8;

/// The key of generation `g`'s network.
pub fn model_key(g: usize) -> String {
    format!("models/{g:06}.safetensors")
}

fn games_prefix(g: usize) -> String {
    format!("games/{g:06}")
}

/// The generation a game file's key names.
fn generation_of(key: &str) -> Option<usize> {
    key.strip_prefix("games/")?.split('/').next()?.parse().ok()
}

fn now_unix() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

fn run_error(store: &RunStore, reason: impl Into<String>) -> ZeroError {
    ZeroError::Run {
        dir: store.url().to_string(),
        reason: reason.into(),
    }
}

/// The newest published generation and the pointer's version, if the run has one.
pub fn read_latest(store: &RunStore) -> Result<Option<(usize, Version)>, ZeroError> {
    let Some(o) = store.get(LATEST)? else {
        return Ok(None);
    };
    let g = std::str::from_utf8(&o.bytes)
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .ok_or_else(|| run_error(store, "LATEST does not hold a generation number"))?;
    Ok(Some((g, o.version)))
}

/// The run's configuration, if it has one (over `defaults`).
pub fn read_config(
    store: &RunStore,
    defaults: &ZeroConfig,
) -> Result<Option<ZeroConfig>, ZeroError> {
    match store.get(CONFIG)? {
        None => Ok(None),
        Some(o) => {
            let text = String::from_utf8(o.bytes.to_vec())
                .map_err(|_| run_error(store, "config.toml is not UTF-8"))?;
            ZeroConfig::from_toml(&text, defaults).map(Some)
        }
    }
}

/// The game a shared run trains, from its configuration.
pub fn game_of(store: &RunStore) -> Result<Option<String>, ZeroError> {
    #[derive(Deserialize)]
    struct GameOnly {
        game: String,
    }
    match store.get(CONFIG)? {
        None => Ok(None),
        Some(o) => {
            let text = String::from_utf8(o.bytes.to_vec())
                .map_err(|_| run_error(store, "config.toml is not UTF-8"))?;
            let g: GameOnly = toml::from_str(&text)
                .map_err(|e| run_error(store, format!("config.toml names no game: {e}")))?;
            Ok(Some(g.game))
        }
    }
}

/// The metrics rows of a shared run.
pub fn read_shared_metrics(store: &RunStore) -> Result<Vec<Metrics>, ZeroError> {
    match store.get("metrics.jsonl")? {
        None => Ok(Vec::new()),
        Some(o) => {
            parse_metrics(&String::from_utf8_lossy(&o.bytes)).map_err(|r| run_error(store, r))
        }
    }
}

/// A game file the trainer has read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Consumed {
    key: String,
    positions: usize,
}

/// What the trainer has done (`trainer/state.json`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SharedState {
    /// The newest generation the trainer made.
    pub generation: usize,
    /// Training steps taken.
    pub steps: u64,
    /// Games trained on.
    pub games: usize,
    /// Wall time of the completed generations.
    pub seconds: f64,
    /// The game files read, oldest first: those the replay window still holds, and
    /// every file of the generations that are still looked at.
    consumed: Vec<Consumed>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct LeaseBody {
    owner: String,
    host: String,
    pid: u32,
    expires_unix: f64,
}

/// The trainer's hold on a shared run: `lock.json`, created only if absent and renewed
/// by a thread every third of its length. Another trainer is refused until the lease
/// expires (its holder stopped renewing: it died) — or at once if the holder was a
/// process of the same machine that is gone; one that finds it void takes it over with a
/// conditional put, so two cannot both succeed. Dropping it releases the run.
pub struct Lease {
    lost: Arc<AtomicBool>,
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<std::thread::JoinHandle<()>>,
    store: RunStore,
    owner: String,
}

impl Lease {
    /// Takes the run's lease for `seconds` (renewed until dropped), or says who holds it.
    pub fn acquire(store: &RunStore, seconds: f64) -> Result<Lease, ZeroError> {
        let owner = format!("{:016x}", rand::rng().random::<u64>());
        let body = move |owner: &str| LeaseBody {
            owner: owner.to_string(),
            host: host(),
            pid: std::process::id(),
            expires_unix: now_unix() + seconds,
        };
        let json = |b: &LeaseBody| serde_json::to_vec(b).unwrap_or_default();
        let version = match store.create_versioned(LOCK, json(&body(&owner)))? {
            Some(v) => v,
            None => {
                let held = store.get(LOCK)?;
                let Some(held) = held else {
                    return Err(run_error(
                        store,
                        "its lease was released just now; try again",
                    ));
                };
                let theirs: Option<LeaseBody> = serde_json::from_slice(&held.bytes).ok();
                // A lease is void once expired, or at once when its holder was a process
                // of this machine that no longer exists (a killed trainer restarted here).
                let live = |t: &&LeaseBody| {
                    let dead_here = t.host == host()
                        && t.pid != std::process::id()
                        && alive(t.pid) == Some(false);
                    t.expires_unix > now_unix() && !dead_here
                };
                if let Some(t) = theirs.as_ref().filter(live) {
                    return Err(run_error(
                        store,
                        format!(
                            "another trainer (pid {} on {}) holds this run; its lease ends {:.0} s after it last renewed it (it renews every {:.0} s while it runs)",
                            t.pid,
                            t.host,
                            (t.expires_unix - now_unix()).max(0.0),
                            seconds / 3.0
                        ),
                    ));
                }
                let Some(v) = store.update(LOCK, json(&body(&owner)), &held.version)? else {
                    return Err(run_error(
                        store,
                        "another trainer took over its expired lease just now",
                    ));
                };
                v
            }
        };
        let lost = Arc::new(AtomicBool::new(false));
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let renew_store = store.handle()?;
        let thread = {
            let (lost, stop, owner) = (lost.clone(), stop.clone(), owner.clone());
            std::thread::spawn(move || {
                let mut version = version;
                let (flag, cv) = &*stop;
                loop {
                    let Ok(guard) = flag.lock() else { return };
                    let Ok((guard, _)) =
                        cv.wait_timeout(guard, Duration::from_secs_f64(seconds / 3.0))
                    else {
                        return;
                    };
                    if *guard {
                        return;
                    }
                    drop(guard);
                    match renew_store.update(LOCK, json(&body(&owner)), &version) {
                        Ok(Some(v)) => version = v,
                        Ok(None) => {
                            tracing::error!("the run's lease was taken over by another trainer");
                            lost.store(true, Ordering::SeqCst);
                            return;
                        }
                        // Retried inside; keep trying while the lease lasts.
                        Err(e) => tracing::warn!("renewing the run's lease failed: {e}"),
                    }
                }
            })
        };
        Ok(Lease {
            lost,
            stop,
            thread: Some(thread),
            store: store.handle()?,
            owner,
        })
    }

    /// An error if another trainer has taken the run over.
    pub fn check(&self) -> Result<(), ZeroError> {
        if self.lost.load(Ordering::SeqCst) {
            return Err(run_error(
                &self.store,
                "this trainer's lease was taken over by another trainer (it failed to renew in time); stopping without publishing",
            ));
        }
        Ok(())
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let (flag, cv) = &*self.stop;
        if let Ok(mut g) = flag.lock() {
            *g = true;
            cv.notify_all();
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        if self.lost.load(Ordering::SeqCst) {
            return;
        }
        // Release only our own lease.
        if let Ok(Some(o)) = self.store.get(LOCK) {
            let mine =
                serde_json::from_slice::<LeaseBody>(&o.bytes).is_ok_and(|b| b.owner == self.owner);
            if mine {
                let _ = self.store.delete(LOCK);
            }
        }
    }
}

/// How the trainer of a shared run waits.
#[derive(Clone, Debug)]
pub struct TrainerOptions {
    /// Stop with an error after this long without a new game file.
    pub idle_timeout: Duration,
    /// Time between looks for new games.
    pub poll: Duration,
    /// The lease's length.
    pub lease_seconds: f64,
}

impl Default for TrainerOptions {
    fn default() -> Self {
        TrainerOptions {
            idle_timeout: Duration::from_secs(600),
            poll: Duration::from_millis(500),
            lease_seconds: 60.0,
        }
    }
}

/// The trainer of a shared run.
pub struct SharedTrainer<'a, G: Game> {
    store: RunStore,
    config: ZeroConfig,
    start: G,
    eval_set: Option<&'a EvalSet<G>>,
    progress: &'a dyn Progress,
    options: TrainerOptions,
    lease: Lease,
    knowledge: Option<&'a KnowledgeSource<'a, G>>,
}

impl<'a, G: Game> SharedTrainer<'a, G> {
    /// Takes the run's lease and creates the run with `config` if the store holds none
    /// (starting from `init`'s weights if given), or resumes it (storing `config`, which
    /// may extend it).
    pub fn open(
        store: RunStore,
        config: ZeroConfig,
        start: G,
        init: Option<&WeightFile>,
        eval_set: Option<&'a EvalSet<G>>,
        progress: &'a dyn Progress,
        options: TrainerOptions,
    ) -> Result<Self, ZeroError> {
        config.validate_for(&start.name())?;
        let lease = Lease::acquire(&store, options.lease_seconds)?;
        let t = SharedTrainer {
            store,
            config,
            start,
            eval_set,
            progress,
            options,
            lease,
            knowledge: None,
        };
        if read_latest(&t.store)?.is_none() {
            t.create(init)?;
        } else if init.is_some() {
            return Err(run_error(
                &t.store,
                "it already holds a run; --init starts new runs only",
            ));
        } else if read_config(&t.store, &t.config)?.as_ref() != Some(&t.config) {
            t.store.put(CONFIG, t.config.to_toml())?;
        }
        Ok(t)
    }

    /// Writes generation 0; `LATEST` last, so a crash before it leaves no run.
    fn create(&self, init: Option<&WeightFile>) -> Result<(), ZeroError> {
        let weights = initial_weights(&self.start, &self.config, init)?;
        self.store.put(&model_key(0), weights.to_bytes()?)?;
        self.store.put(STATE, state_json(&SharedState::default()))?;
        self.store.put("metrics.jsonl", Vec::new())?;
        self.store
            .put("metrics.csv", format!("{}\n", csv_header()))?;
        self.store.put(CONFIG, self.config.to_toml())?;
        self.store.delete(FINISHED)?;
        if !self.store.create(LATEST, "0\n")? {
            return Err(run_error(
                &self.store,
                "another trainer created the run at the same time",
            ));
        }
        Ok(())
    }

    fn read_state(&self) -> Result<SharedState, ZeroError> {
        let o = self
            .store
            .get(STATE)?
            .ok_or_else(|| run_error(&self.store, "trainer/state.json is missing"))?;
        serde_json::from_slice(&o.bytes)
            .map_err(|e| run_error(&self.store, format!("bad trainer/state.json: {e}")))
    }

    fn load_weights(&self, g: usize) -> Result<WeightFile, ZeroError> {
        let key = model_key(g);
        let o = self
            .store
            .get(&key)?
            .ok_or_else(|| run_error(&self.store, format!("{key} is missing")))?;
        let w = WeightFile::from_bytes(&o.bytes)
            .map_err(|e| run_error(&self.store, format!("{key}: {e}")))?;
        w.check_game(&self.start)?;
        Ok(w)
    }

    /// Reads a game file into the replay buffer (and `records` if given); a file that
    /// cannot be read (a broken worker) is skipped with a warning, not fatal.
    fn read_games(
        &self,
        key: &str,
        replay: &mut ReplayBuffer<G>,
        records: Option<&mut Vec<GameRecord>>,
    ) -> Result<usize, ZeroError> {
        let Some(o) = self.store.get(key)? else {
            return Ok(0);
        };
        let read = decode_records(&o.bytes, key).and_then(|rs| {
            for r in &rs {
                r.replay(&self.start).map_err(|reason| ZeroError::Record {
                    file: key.to_string(),
                    reason,
                })?;
            }
            Ok(rs)
        });
        let rs = match read {
            Ok(rs) => rs,
            Err(e) => {
                self.progress
                    .message(&format!("skipping a bad game file: {e}"));
                return Ok(0);
            }
        };
        let mut positions = 0;
        for r in &rs {
            positions += r.moves.len();
            replay
                .add_game(
                    &self.start,
                    r,
                    self.config.selfplay.value_mix,
                    self.config.search.discount,
                )
                .map_err(|reason| ZeroError::Record {
                    file: key.to_string(),
                    reason,
                })?;
        }
        if let Some(out) = records {
            out.extend(rs);
        }
        Ok(positions)
    }

    /// Gives the game's knowledge, with which the replay buffer settles the end of
    /// every counted game before taking ownership and score targets
    /// ([`ReplayBuffer::with_settling`]).
    pub fn with_knowledge(mut self, knowledge: &'a KnowledgeSource<'a, G>) -> Self {
        self.knowledge = Some(knowledge);
        self
    }

    /// Trains until `config.iterations` generations are published or the time limit is
    /// reached, consuming the workers' games. Returns the final state.
    pub fn train(&self) -> Result<SharedState, ZeroError> {
        let cfg = &self.config;
        let mut state = self.read_state()?;
        let (mut latest, mut version) =
            read_latest(&self.store)?.ok_or_else(|| run_error(&self.store, "LATEST is missing"))?;
        if state.generation < latest {
            return Err(run_error(
                &self.store,
                format!(
                    "LATEST says generation {latest} but the trainer's state stops at {}",
                    state.generation
                ),
            ));
        }
        if state.generation > latest {
            // Killed between saving its state and moving the pointer: finish publishing.
            version = self.publish(state.generation, &version)?;
            latest = state.generation;
        }
        let mut rows: Vec<Metrics> = read_shared_metrics(&self.store)?
            .into_iter()
            .filter(|m| m.iteration <= latest)
            .collect();
        if state.generation < cfg.iterations {
            self.store.delete(FINISHED)?;
        }
        // The replay window from the files consumed, newest last.
        let mut replay = ReplayBuffer::new(&self.start, cfg.net.replay_window)
            .with_settling(self.knowledge.and_then(|k| k()));
        let mut held = 0;
        let from = state
            .consumed
            .iter()
            .rposition(|c| {
                held += c.positions;
                held >= cfg.net.replay_window
            })
            .unwrap_or(0);
        for c in &state.consumed[from..] {
            self.read_games(&c.key, &mut replay, None)?;
        }
        let mut seen: HashSet<String> = state.consumed.iter().map(|c| c.key.clone()).collect();
        let weights = self.load_weights(state.generation)?;
        let mut trainer = Trainer::from_weights(&weights, cfg.net.optimizer.clone())?;
        let threads = cfg.selfplay.thread_count();
        while state.generation < cfg.iterations {
            if cfg.time_limit_s > 0 && state.seconds >= cfg.time_limit_s as f64 {
                self.progress
                    .message(&format!("time limit of {} s reached", cfg.time_limit_s));
                break;
            }
            let g = state.generation + 1;
            let t0 = Instant::now();
            // 1. Wait for enough new games.
            let mut records = Vec::new();
            let mut workers = BTreeSet::new();
            let mut idle = 0.0;
            let mut last_news = Instant::now();
            self.progress
                .start(&format!("generation {g}: games"), cfg.selfplay.games as u64);
            while records.len() < cfg.selfplay.games {
                self.lease.check()?;
                let mut new = Vec::new();
                for gen in state.generation.saturating_sub(STALE_GENERATIONS)..=state.generation {
                    for key in self.store.list(&games_prefix(gen))? {
                        if key.ends_with(".jsonl.gz") && !seen.contains(&key) {
                            new.push(key);
                        }
                    }
                }
                if new.is_empty() {
                    if last_news.elapsed() > self.options.idle_timeout {
                        self.progress.finish();
                        return Err(run_error(
                            &self.store,
                            format!(
                                "no self-play games arrived for {:.0} s; start workers with `tabula selfplay --run {}` (the run resumes where it stopped)",
                                self.options.idle_timeout.as_secs_f64(),
                                self.store.url()
                            ),
                        ));
                    }
                    std::thread::sleep(self.options.poll);
                    idle += self.options.poll.as_secs_f64();
                    continue;
                }
                last_news = Instant::now();
                for key in new {
                    let before = records.len();
                    let positions = self.read_games(&key, &mut replay, Some(&mut records))?;
                    for _ in before..records.len() {
                        self.progress.tick();
                    }
                    if let Some(w) = key.rsplit('/').next().and_then(|f| f.rsplit_once('-')) {
                        workers.insert(w.0.to_string());
                    }
                    seen.insert(key.clone());
                    state.consumed.push(Consumed { key, positions });
                }
            }
            self.progress.finish();
            let selfplay_seconds = t0.elapsed().as_secs_f64();
            // 2. Training.
            let t1 = Instant::now();
            let mut rng = ChaCha8Rng::seed_from_u64(
                cfg.seed ^ (g as u64).wrapping_mul(0xA24B_AED4_963E_E407),
            );
            let (losses, mut weights) = train_round(
                &mut trainer,
                &replay,
                cfg,
                &mut rng,
                self.progress,
                g,
                state.generation,
            )?;
            weights.extra.insert("iteration".into(), g.to_string());
            let net = Arc::new(Network::from_weights(&weights)?);
            self.lease.check()?;
            self.store.put(&model_key(g), weights.to_bytes()?)?;
            let train_seconds = t1.elapsed().as_secs_f64();
            // 3. Accuracy against the solver.
            let measure_now =
                cfg.eval.every > 0 && (g % cfg.eval.every == 0 || g == cfg.iterations);
            let accuracy = match (self.eval_set, measure_now) {
                (Some(set), true) => {
                    self.progress.message(&format!(
                        "generation {g}: measuring accuracy on {}",
                        set.name
                    ));
                    Some(measure(
                        set,
                        &net,
                        &cfg.search,
                        cfg.eval.simulations,
                        threads,
                    )?)
                }
                _ => None,
            };
            // 4. Metrics and state, then the pointer.
            let stats = stats_of(&records, selfplay_seconds);
            state.generation = g;
            state.steps = trainer.steps();
            state.games += records.len();
            state.seconds += t0.elapsed().as_secs_f64();
            prune(&mut state.consumed, cfg.net.replay_window, g);
            let m = Metrics {
                iteration: g,
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
                    &net,
                    cfg.search.eval_batch,
                    &mut rng,
                ),
                games_per_s: stats.games as f64 / selfplay_seconds.max(1e-9),
                false_resign_rate: (stats.would_resign > 0)
                    .then(|| stats.false_resigns as f64 / stats.would_resign as f64),
                selfplay: stats,
                gate_score: None,
                promoted: true,
                accuracy,
                idle_seconds: Some(idle),
                workers: Some(workers.len()),
            };
            rows.push(m.clone());
            self.save_metrics(&rows)?;
            self.store.put(STATE, state_json(&state))?;
            version = self.publish(g, &version)?;
            self.progress.message(&summary(&m));
        }
        if state.generation >= cfg.iterations {
            self.store
                .put(FINISHED, format!("{}\n", state.generation))?;
        }
        Ok(state)
    }

    /// Moves `LATEST` to `g`, if it is still where this trainer left it.
    fn publish(&self, g: usize, version: &Version) -> Result<Version, ZeroError> {
        self.lease.check()?;
        self.store
            .update(LATEST, format!("{g}\n"), version)?
            .ok_or_else(|| {
                run_error(
                    &self.store,
                    "LATEST was moved by someone else: another trainer is writing this run",
                )
            })
    }

    fn save_metrics(&self, rows: &[Metrics]) -> Result<(), ZeroError> {
        let mut jsonl = String::new();
        let mut csv = format!("{}\n", csv_header());
        for r in rows {
            jsonl.push_str(&serde_json::to_string(r).unwrap_or_default());
            jsonl.push('\n');
            csv.push_str(&r.csv());
            csv.push('\n');
        }
        self.store.put("metrics.jsonl", jsonl)?;
        self.store.put("metrics.csv", csv)
    }
}

fn state_json(state: &SharedState) -> String {
    serde_json::to_string_pretty(state).unwrap_or_default()
}

/// Keeps the consumed files that the replay window holds or that are still listed.
fn prune(consumed: &mut Vec<Consumed>, window: usize, generation: usize) {
    let oldest_listed = generation.saturating_sub(STALE_GENERATIONS + 1);
    let mut held = 0;
    let mut keep = vec![false; consumed.len()];
    for (i, c) in consumed.iter().enumerate().rev() {
        keep[i] = held < window || generation_of(&c.key).is_none_or(|g| g >= oldest_listed);
        held += c.positions;
    }
    let mut i = 0;
    consumed.retain(|_| {
        i += 1;
        keep[i - 1]
    });
}

/// Self-play statistics of records consumed in `seconds`.
fn stats_of(records: &[GameRecord], seconds: f64) -> SelfPlayStats {
    let mut s = SelfPlayStats {
        seconds,
        ..SelfPlayStats::default()
    };
    s.add_records(records);
    s
}

/// A self-play worker's settings.
#[derive(Clone, Debug)]
pub struct WorkerOptions {
    /// Its name in game files and reports (letters, digits, `.`, `_`, `-`).
    pub id: String,
    /// Stop after this many games (`None`: until the run is finished).
    pub games: Option<usize>,
    /// Self-play threads (`None`: the run's setting).
    pub threads: Option<usize>,
    /// How long to wait for the run to exist, and for a failing store to recover.
    pub wait: Duration,
}

/// A worker's last report (`workers/ID.json`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkerReport {
    /// The worker.
    pub worker: String,
    /// The generation it plays with.
    pub generation: usize,
    /// Games it uploaded.
    pub games: usize,
    /// Bytes of game files it uploaded.
    pub bytes: u64,
    /// Seconds it spent playing.
    pub seconds: f64,
    /// Games per second.
    pub games_per_s: f64,
}

/// Checks a worker id.
pub fn check_worker_id(id: &str) -> Result<(), ZeroError> {
    let ok = !id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(ZeroError::Config(format!(
            "worker id {id:?}: use 1 to 64 letters, digits, '.', '_' or '-'"
        )))
    }
}

/// A default worker id: this host and process.
pub fn default_worker_id() -> String {
    let h: String = host()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-'))
        .take(40)
        .collect();
    format!("{h}_{}", std::process::id())
}

/// Waits up to `wait` for the run at `store` to be created by its trainer; returns its
/// game's name.
pub fn wait_for_run(store: &RunStore, wait: Duration) -> Result<String, ZeroError> {
    let t0 = Instant::now();
    loop {
        if read_latest(store)?.is_some() {
            if let Some(game) = game_of(store)? {
                return Ok(game);
            }
        }
        if t0.elapsed() > wait {
            return Err(run_error(
                store,
                format!(
                    "no run there after {:.0} s; start its trainer first (`tabula train GAME --run {}`)",
                    wait.as_secs_f64(),
                    store.url()
                ),
            ));
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// Plays self-play games for the run at `store` with its newest network, uploading each
/// game file as games end, and picking up new generations between rounds, until the
/// trainer has finished the run or `options.games` are played. Returns the report.
pub fn run_worker<G: Game>(
    store: &RunStore,
    start: G,
    options: &WorkerOptions,
    progress: &dyn Progress,
) -> Result<WorkerReport, ZeroError> {
    check_worker_id(&options.id)?;
    let defaults = ZeroConfig::generic(&start.name());
    let mut config =
        read_config(store, &defaults)?.ok_or_else(|| run_error(store, "config.toml is missing"))?;
    if config.game != start.name() {
        return Err(ZeroError::Config(format!(
            "the run trains {}, not {}",
            config.game,
            start.name()
        )));
    }
    if let Some(t) = options.threads {
        config.selfplay.threads = t;
    }
    let mut report = WorkerReport {
        worker: options.id.clone(),
        ..WorkerReport::default()
    };
    let mut current: Option<(usize, Arc<Network>)> = None;
    let mut rng = ChaCha8Rng::from_rng(&mut rand::rng());
    let round = config.selfplay.thread_count() * config.selfplay.parallel_games.max(1);
    loop {
        if store.get(FINISHED)?.is_some() {
            progress.message("the trainer has finished the run");
            break;
        }
        let left = options
            .games
            .map_or(usize::MAX, |n| n.saturating_sub(report.games));
        if left == 0 {
            break;
        }
        // 1. The newest network.
        let (g, _) = read_latest(store)?.ok_or_else(|| run_error(store, "LATEST is missing"))?;
        if current.as_ref().map(|c| c.0) != Some(g) {
            let key = model_key(g);
            let o = store
                .get(&key)?
                .ok_or_else(|| run_error(store, format!("{key} is missing")))?;
            let w = WeightFile::from_bytes(&o.bytes)
                .map_err(|e| run_error(store, format!("{key}: {e}")))?;
            w.check_game(&start)?;
            current = Some((g, Arc::new(Network::from_weights(&w)?)));
            progress.message(&format!("{}: playing with generation {g}", options.id));
        }
        let Some((g, net)) = current.clone() else {
            continue;
        };
        // 2. A round of games, uploaded as they end.
        let count = round.min(left);
        let seed: u64 = rng.random();
        let (tx, rx) = mpsc::channel::<GameRecord>();
        let t0 = Instant::now();
        let played = std::thread::scope(|scope| {
            let (start, config, net) = (&start, &config, net.clone());
            let player = scope.spawn(move || {
                let tx = Mutex::new(tx);
                play_games(
                    start,
                    net,
                    count,
                    &config.search,
                    &config.selfplay,
                    seed,
                    &|r| {
                        if let Ok(tx) = tx.lock() {
                            let _ = tx.send(r.clone());
                        }
                    },
                )
            });
            let mut pending = Vec::new();
            let mut failing_since: Option<Instant> = None;
            let mut open = true;
            while open || !pending.is_empty() {
                if open {
                    match rx.recv_timeout(Duration::from_millis(200)) {
                        Ok(r) => pending.push(r),
                        Err(mpsc::RecvTimeoutError::Timeout) => {}
                        Err(mpsc::RecvTimeoutError::Disconnected) => open = false,
                    }
                    pending.extend(rx.try_iter());
                }
                if pending.is_empty() {
                    continue;
                }
                match upload(store, g, &options.id, &pending, &mut rng) {
                    Ok(bytes) => {
                        report.games += pending.len();
                        report.bytes += bytes;
                        for _ in 0..pending.len() {
                            progress.tick();
                        }
                        pending.clear();
                        failing_since = None;
                    }
                    Err(e) => {
                        let since = *failing_since.get_or_insert_with(Instant::now);
                        if since.elapsed() > options.wait {
                            return Err(e);
                        }
                        progress.message(&format!(
                            "upload failed, keeping {} games to try again: {e}",
                            pending.len()
                        ));
                        std::thread::sleep(Duration::from_secs(1));
                    }
                }
            }
            player
                .join()
                .unwrap_or(Err(ZeroError::Panicked("self-play")))
                .map(|(records, _)| records.len())
        })?;
        report.seconds += t0.elapsed().as_secs_f64();
        report.generation = g;
        report.games_per_s = report.games as f64 / report.seconds.max(1e-9);
        let _ = played;
        store.put(
            &format!("workers/{}.json", options.id),
            serde_json::to_vec_pretty(&report).unwrap_or_default(),
        )?;
    }
    Ok(report)
}

/// Uploads `records` as one write-once game file of generation `g`; returns its size.
fn upload(
    store: &RunStore,
    g: usize,
    id: &str,
    records: &[GameRecord],
    rng: &mut ChaCha8Rng,
) -> Result<u64, ZeroError> {
    let bytes = encode_records(records);
    let size = bytes.len() as u64;
    // A fresh random name each time; the create-only put never replaces a file.
    loop {
        let key = format!(
            "{}/{id}-{:016x}.jsonl.gz",
            games_prefix(g),
            rng.random::<u64>()
        );
        if store.create(&key, bytes.clone())? {
            return Ok(size);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::Silent;
    use tabula_core::TicTacToe;

    fn config() -> ZeroConfig {
        ZeroConfig::for_game(
            "tictactoe",
            "iterations = 2\n[selfplay]\ngames = 8\nsimulations = 8\nthreads = 1\nparallel_games = 4\n[net]\nsteps = 2\nbatch_size = 8\n[eval]\nevery = 0\n[gate]\nenabled = false\n",
        )
        .unwrap()
    }

    fn quick() -> TrainerOptions {
        TrainerOptions {
            idle_timeout: Duration::from_secs(30),
            poll: Duration::from_millis(20),
            lease_seconds: 60.0,
        }
    }

    #[test]
    fn a_trainer_and_a_worker_share_a_run_in_memory() {
        let store = RunStore::open("memory://").unwrap();
        let trainer = SharedTrainer::open(
            store.handle().unwrap(),
            config(),
            TicTacToe::new(),
            None,
            None,
            &Silent,
            quick(),
        )
        .unwrap();
        // a second trainer is refused while the first holds the lease
        let err = SharedTrainer::open(
            store.handle().unwrap(),
            config(),
            TicTacToe::new(),
            None,
            None,
            &Silent,
            quick(),
        )
        .err()
        .expect("refused")
        .to_string();
        assert!(err.contains("another trainer"), "{err}");
        let worker_store = store.handle().unwrap();
        let worker = std::thread::spawn(move || {
            let options = WorkerOptions {
                id: "w1".into(),
                games: None,
                threads: Some(1),
                wait: Duration::from_secs(10),
            };
            run_worker(&worker_store, TicTacToe::new(), &options, &Silent)
        });
        let state = trainer.train().unwrap();
        assert_eq!(state.generation, 2);
        assert!(state.games >= 16);
        let report = worker.join().unwrap().unwrap();
        assert!(report.games >= 16, "{report:?}");
        assert_eq!(read_latest(&store).unwrap().unwrap().0, 2);
        assert!(store.get(FINISHED).unwrap().is_some());
        let rows = read_shared_metrics(&store).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].workers, Some(1));
        drop(trainer);
        assert!(store.get(LOCK).unwrap().is_none(), "the lease is released");
    }

    #[test]
    fn an_expired_lease_is_taken_over_and_the_old_holder_cannot_publish() {
        let store = RunStore::open("memory://").unwrap();
        let stale = LeaseBody {
            owner: "dead".into(),
            host: "elsewhere".into(),
            pid: 1,
            expires_unix: now_unix() - 1.0,
        };
        store
            .put(LOCK, serde_json::to_vec(&stale).unwrap())
            .unwrap();
        let lease = Lease::acquire(&store, 0.3).unwrap();
        lease.check().unwrap();
        // Someone overwrites the lock: the next renewal notices, and the holder is told
        // it lost the run (and does not release the other's lock).
        let other = LeaseBody {
            owner: "other".into(),
            ..stale
        };
        store
            .put(LOCK, serde_json::to_vec(&other).unwrap())
            .unwrap();
        std::thread::sleep(Duration::from_millis(400));
        let err = lease.check().unwrap_err().to_string();
        assert!(err.contains("taken over"), "{err}");
        drop(lease);
        assert!(store.get(LOCK).unwrap().is_some());
    }

    #[test]
    fn pruning_keeps_the_window_and_the_listed_generations() {
        let c = |g: usize, p| Consumed {
            key: format!("games/{g:06}/w-1.jsonl.gz"),
            positions: p,
        };
        let mut v: Vec<Consumed> = (0..30).map(|g| c(g, 10)).collect();
        prune(&mut v, 50, 29);
        // the last 5 files fill the window; generations 20.. are still listed
        assert_eq!(v.first().unwrap().key, c(20, 10).key);
        assert_eq!(v.len(), 10);
    }

    #[test]
    fn worker_ids_are_checked() {
        check_worker_id("gpu-1").unwrap();
        assert!(check_worker_id("a/b").is_err());
        assert!(check_worker_id("").is_err());
        assert!(check_worker_id("../x").is_err());
        check_worker_id("node_3.a").unwrap();
        check_worker_id(&default_worker_id()).unwrap();
    }
}
