//! `tabula train` (the AlphaZero loop over a run directory) and `tabula plot` (its
//! curves as an SVG).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use tabula_games::registry::{self, GameVisitor};
use tabula_games::Capabilities;
use tabula_games::TestSetSource;
use tabula_nn::WeightFile;
use tabula_zero::run::{optimizer_path, read_metrics, stored_config, OptimizerState};
use tabula_zero::shared::{model_key, read_config, SharedTrainer, TrainerOptions};
use tabula_zero::store::{is_url, RunStore};
use tabula_zero::{EvalSet, Progress, Run, ZeroConfig};

/// Train a network from self-play (AlphaZero), in a run directory that can be resumed.
///
/// `tabula train tictactoe --run runs/ttt` starts (or resumes) a run with the game's
/// default configuration; `--config FILE` gives a TOML file (see README) for a new run.
/// Kill it at any time; the same command resumes after the last completed iteration.
///
/// Shared runs: `--run s3://bucket/prefix` (or `--run DIR --distributed`) makes this the
/// trainer of a run whose self-play comes from `tabula selfplay` workers on any number
/// of machines (README: "Training on many machines").
#[derive(Args)]
pub struct TrainArgs {
    /// The game: tictactoe, connect4[:WxH], go[:N], mini-go.
    game: String,
    /// The run: a directory (created if missing, resumed if it holds a run), or an
    /// object store URL (s3://BUCKET/PREFIX, file:///DIR) for a shared run.
    #[arg(long, required_unless_present = "print_config")]
    run: Option<String>,
    /// Train a shared run: consume the games of `tabula selfplay` workers and publish
    /// networks for them (implied by an s3:// or file:// --run).
    #[arg(long)]
    distributed: bool,
    /// Start a new run from this network (e.g. models/connect4.safetensors) instead of
    /// random weights, to continue training on another machine. Its optimiser state
    /// (Adam's moments), when saved beside it as NAME.optim as a run's checkpoints keep
    /// theirs, continues too; otherwise the optimiser starts afresh (consider
    /// net.optimizer.warmup_steps).
    #[arg(long)]
    init: Option<PathBuf>,
    /// Shared runs: stop (resumably) when no game has arrived for this many seconds.
    #[arg(long, default_value_t = 600.0, value_parser = crate::input::seconds(1.0, 1e7))]
    idle_timeout: f64,
    /// A TOML configuration for a new run (fields not given keep the game's defaults).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Run up to this many iterations (overrides the configuration; extends a run).
    #[arg(long)]
    iterations: Option<usize>,
    /// Stop after this many seconds of training in total (overrides the configuration).
    #[arg(long)]
    time_limit: Option<u64>,
    /// Start the run in DIR over, deleting its checkpoints, games and metrics (needed
    /// when DIR holds a run's files but no state.json to resume from).
    #[arg(long)]
    restart: bool,
    /// Print the default configuration of GAME as TOML and exit.
    #[arg(long)]
    print_config: bool,
    /// Pons' Connect Four test sets, for the accuracy measurement.
    #[arg(long, default_value = "../shared/data/connect4")]
    eval_data: PathBuf,
    /// The solver's finished classifications of whole test sets (the repository's
    /// data/connect4-labels): the measurement takes its positions' labels from there
    /// instead of classifying them at the start of the run (minutes).
    #[arg(long, default_value = "data/connect4-labels")]
    labels: PathBuf,
    /// No progress bars (log lines only).
    #[arg(long)]
    quiet: bool,
}

/// Progress bars on stderr.
pub(crate) struct Bars {
    bar: std::sync::Mutex<Option<ProgressBar>>,
    quiet: bool,
}

impl Bars {
    /// Bars, or log lines only when `quiet`.
    pub(crate) fn new(quiet: bool) -> Bars {
        Bars {
            bar: std::sync::Mutex::new(None),
            quiet,
        }
    }
}

impl Progress for Bars {
    fn start(&self, phase: &str, total: u64) {
        if self.quiet {
            return;
        }
        let bar = ProgressBar::new(total);
        bar.set_style(
            ProgressStyle::with_template("{msg:32} [{bar:30}] {pos}/{len} {per_sec} eta {eta}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.set_message(phase.to_string());
        if let Ok(mut b) = self.bar.lock() {
            *b = Some(bar);
        }
    }
    fn tick(&self) {
        if let Ok(b) = self.bar.lock() {
            if let Some(b) = b.as_ref() {
                b.inc(1);
            }
        }
    }
    fn finish(&self) {
        if let Ok(mut b) = self.bar.lock() {
            if let Some(b) = b.take() {
                b.finish_and_clear();
            }
        }
    }
    fn message(&self, line: &str) {
        eprintln!("{line}");
    }
}

/// The set a run measures its accuracy on, if its configuration asks for one and the
/// game offers one (a failure to build it is a warning, not a stop).
fn run_eval_set<G: Capabilities>(
    game: &G,
    args: &TrainArgs,
    config: &ZeroConfig,
    cache: &Path,
) -> Option<EvalSet<G>> {
    if config.eval.every == 0 {
        return None;
    }
    let set = test_set(
        game,
        &args.eval_data,
        &[],
        config.eval.positions,
        cache,
        &args.labels,
    )
    .unwrap_or_else(|e| {
        eprintln!("warning: no accuracy measurement: {e:#}");
        None
    });
    if let Some(set) = &set {
        eprintln!("accuracy is measured on {}", set.name);
    }
    set
}

/// The accuracy test set of `game`, if it offers one: every tic-tac-toe position, or
/// `count` positions of Pons' sets in `data` for 7x6 Connect Four (`sets` of them, or
/// the default mix when empty; the classification cached in `cache`, the labels of
/// whole sets taken from the folder `finished` where it has them).
fn test_set<G: Capabilities>(
    game: &G,
    data: &Path,
    sets: &[&str],
    count: usize,
    cache: &Path,
    finished: &Path,
) -> Result<Option<EvalSet<G>>> {
    let source = TestSetSource {
        data_dir: data.to_path_buf(),
        positions: count,
        cache: cache.to_path_buf(),
        sets: sets.iter().map(|s| s.to_string()).collect(),
        finished: Some(finished.to_path_buf()),
    };
    let mut log = |line: &str| eprintln!("{line}");
    Ok(game.test_set(&source, &mut log).transpose()?)
}

struct Train<'a>(&'a TrainArgs);

impl GameVisitor for Train<'_> {
    type Output = Result<()>;

    fn visit<G: Capabilities>(self, game: G) -> Result<()> {
        let args = self.0;
        let defaults = crate::evaluators::training_config(&game)?;
        if args.print_config {
            print!("{}", defaults.to_toml());
            return Ok(());
        }
        let Some(location) = args.run.as_deref() else {
            bail!("--run DIR is required");
        };
        let init = match &args.init {
            Some(path) => Some(
                WeightFile::load(path)
                    .with_context(|| format!("reading --init {}", path.display()))?,
            ),
            None => None,
        };
        if args.distributed || is_url(location) {
            return train_shared(args, location, game, &defaults, init.as_ref());
        }
        let dir = Path::new(location);
        let stored = stored_config(dir, &defaults)?;
        let new_run = stored.is_none() || args.restart;
        let mut config = resolve_config(args, location, stored, &defaults)?;
        if init.is_some() && new_run && config.teacher.iterations > 0 {
            // A network given to start from has had its teaching: continue by self-play.
            eprintln!("note: the run starts from --init, so it plays no teacher games (teacher.iterations = 0)");
            config.teacher.iterations = 0;
        }
        // a shipped network's optimiser state (MODEL.optim beside it) continues with it;
        // checked before the run is made
        let init_optimizer = match (&args.init, &init) {
            (Some(path), Some(weights)) if new_run && optimizer_path(path).exists() => {
                let optim = optimizer_path(path);
                let bytes = std::fs::read(&optim)
                    .with_context(|| format!("reading {}", optim.display()))?;
                let state = OptimizerState::check(weights, &config, bytes).with_context(|| {
                    format!("{} does not fit {}", optim.display(), path.display())
                })?;
                eprintln!(
                    "note: continuing the optimiser state of {}",
                    optim.display()
                );
                Some(state)
            }
            _ => None,
        };
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let eval_set = run_eval_set(&game, args, &config, &dir.join("eval-set.json"));
        let progress = Bars::new(args.quiet);
        let knowledge_game = game.clone();
        let knowledge = move || knowledge_game.uct_knowledge();
        let run = Run::open(
            dir,
            config,
            game,
            init.as_ref(),
            eval_set.as_ref(),
            &progress,
            args.restart,
        )?
        .with_knowledge(&knowledge);
        let run = match &init_optimizer {
            Some(state) => run.continue_optimizer(state)?,
            None => run,
        };
        let state = run.train()?;
        eprintln!(
            "run {}: {} iterations, {} games, {} training steps, {:.0} s; best network: {}",
            dir.display(),
            state.iteration,
            state.games,
            state.steps,
            state.seconds,
            dir.join("best.safetensors").display()
        );
        Ok(())
    }
}

/// The configuration to train with: the stored one (a given `--config` must match it),
/// or the given one, or the game's defaults; with `--iterations`/`--time-limit` applied.
fn resolve_config(
    args: &TrainArgs,
    location: &str,
    stored: Option<ZeroConfig>,
    defaults: &ZeroConfig,
) -> Result<ZeroConfig> {
    let read = |path: &Path| -> Result<ZeroConfig> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        Ok(ZeroConfig::from_toml(&text, defaults)?)
    };
    let mut config = match (&stored, &args.config) {
        (_, Some(path)) if args.restart => read(path)?,
        (Some(stored), Some(path)) => {
            let given = read(path)?;
            if &given != stored {
                bail!(
                    "{location} already holds a run with another configuration; resume it without --config, or start a new run"
                );
            }
            given
        }
        (Some(stored), None) => stored.clone(),
        (None, Some(path)) => read(path)?,
        (None, None) => defaults.clone(),
    };
    if config.game != defaults.game {
        bail!(
            "the configuration is for {}, not {}",
            config.game,
            defaults.game
        );
    }
    if let Some(n) = args.iterations {
        config.iterations = n;
    }
    if let Some(t) = args.time_limit {
        config.time_limit_s = t;
    }
    Ok(config)
}

/// `tabula train` on a shared run: the trainer role.
fn train_shared<G: Capabilities>(
    args: &TrainArgs,
    location: &str,
    game: G,
    defaults: &ZeroConfig,
    init: Option<&WeightFile>,
) -> Result<()> {
    if args.restart {
        bail!("--restart is for run directories; start a shared run over under a new prefix");
    }
    let store = RunStore::open(location)?;
    let stored = read_config(&store, defaults)?;
    let config = resolve_config(args, location, stored, defaults)?;
    if config.gate.enabled {
        eprintln!("note: shared runs publish every generation (no gating)");
    }
    if config.teacher.iterations > 0 {
        bail!("teacher games (teacher.iterations) are played by local runs only; set it to 0 for a shared run");
    }
    // The run lives in a store: the set's classification is cached beside the machine's
    // other temporary files instead.
    let cache = std::env::temp_dir().join(format!(
        "tabula-eval-{}-{}.json",
        game.name(),
        config.eval.positions
    ));
    let eval_set = run_eval_set(&game, args, &config, &cache);
    let progress = Bars::new(args.quiet);
    let options = TrainerOptions {
        idle_timeout: std::time::Duration::from_secs_f64(args.idle_timeout),
        ..TrainerOptions::default()
    };
    let knowledge_game = game.clone();
    let knowledge = move || knowledge_game.uct_knowledge();
    let trainer = SharedTrainer::open(
        store,
        config,
        game,
        init,
        eval_set.as_ref(),
        &progress,
        options,
    )?
    .with_knowledge(&knowledge);
    eprintln!(
        "training the shared run {location}; start workers with `tabula selfplay --run {location}`"
    );
    let state = trainer.train()?;
    eprintln!(
        "run {location}: generation {}, {} games, {} training steps, {:.0} s; newest network: {}",
        state.generation,
        state.games,
        state.steps,
        state.seconds,
        model_key(state.generation)
    );
    Ok(())
}

pub fn run(args: TrainArgs) -> Result<ExitCode> {
    registry::visit(&args.game, Train(&args))??;
    Ok(ExitCode::SUCCESS)
}

/// Draw a run's learning curves (losses, policy entropy, accuracy against the solver) as
/// an SVG.
#[derive(Args)]
pub struct PlotArgs {
    /// The run directory.
    #[arg(long)]
    run: PathBuf,
    /// Output file (default: DIR/curves.svg).
    #[arg(long)]
    out: Option<PathBuf>,
    /// A learning curve of matches (`scripts/go-curve.sh`'s curve.csv: columns
    /// seconds, win_rate, ci_low, ci_high) drawn in the lower panel instead of the
    /// accuracy against the solver — for games with no solver, such as Go.
    #[arg(long)]
    matches: Option<PathBuf>,
}

/// Reads a learning curve of matches: (wall minutes, win %, low %, high %) per row.
fn read_match_curve(path: &Path) -> Result<Vec<[f64; 4]>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the match curve {}", path.display()))?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    let column = |name: &str| {
        header
            .iter()
            .position(|h| h.trim() == name)
            .with_context(|| format!("{}: no `{name}` column", path.display()))
    };
    let cols = [
        column("seconds")?,
        column("win_rate")?,
        column("ci_low")?,
        column("ci_high")?,
    ];
    let mut points = Vec::new();
    for (i, line) in lines.enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let fields: Vec<&str> = line.split(',').collect();
        let mut p = [0.0; 4];
        for (k, &c) in cols.iter().enumerate() {
            let v: f64 = fields
                .get(c)
                .and_then(|f| f.trim().parse().ok())
                .filter(|v: &f64| v.is_finite() && *v >= 0.0 && (k == 0 || *v <= 1.0))
                .with_context(|| {
                    format!(
                        "{} line {}: `{}` is not a valid row",
                        path.display(),
                        i + 2,
                        line
                    )
                })?;
            p[k] = if k == 0 { v / 60.0 } else { 100.0 * v };
        }
        points.push(p);
    }
    if points.is_empty() {
        bail!("{} holds no matches", path.display());
    }
    points.sort_by(|a, b| a[0].total_cmp(&b[0]));
    Ok(points)
}

/// A curve: its name, colour and points (minutes, value).
type Curve = (String, plotters::style::RGBColor, Vec<(f64, f64)>);

/// Draws `curves` against wall time (0..`t_max` minutes) in `area`, values 0..`y_max`.
fn draw_panel(
    area: &plotters::drawing::DrawingArea<plotters::prelude::SVGBackend, plotters::coord::Shift>,
    caption: &str,
    y_desc: &str,
    t_max: f64,
    y_max: f64,
    legend: plotters::chart::SeriesLabelPosition,
    curves: Vec<Curve>,
) -> Result<()> {
    use plotters::prelude::*;
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d(0.0..t_max, 0.0..y_max)?;
    chart
        .configure_mesh()
        .x_desc("wall time (minutes)")
        .y_desc(y_desc)
        .draw()?;
    for (name, color, points) in curves {
        chart
            .draw_series(LineSeries::new(points, color.stroke_width(2)))?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
    }
    chart
        .configure_series_labels()
        .position(legend)
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .draw()?;
    Ok(())
}

pub fn plot(args: PlotArgs) -> Result<ExitCode> {
    use plotters::prelude::*;
    if tabula_automine::run::is_run(&args.run) {
        if args.matches.is_some() {
            bail!("--matches draws a game run's match curve; a mine-model run has none");
        }
        return plot_mines(&args);
    }
    let rows = read_metrics(&args.run)?;
    if rows.is_empty() {
        bail!(
            "{} has no metrics yet (run `tabula train` first)",
            args.run.display()
        );
    }
    let matches = args.matches.as_deref().map(read_match_curve).transpose()?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| args.run.join("curves.svg"));
    let root = SVGBackend::new(&out, (1000, 800)).into_drawing_area();
    root.fill(&WHITE)?;
    let (top, bottom) = root.split_vertically(400);
    let minutes = |s: f64| s / 60.0;
    let t_max = minutes(rows.last().map_or(1.0, |r| r.seconds))
        .max(matches.iter().flatten().map(|p| p[0]).fold(0.0, f64::max))
        .max(1e-3);
    // Losses and entropy against wall time.
    let curve = |f: fn(&tabula_zero::Metrics) -> f64| -> Vec<(f64, f64)> {
        rows.iter().map(|r| (minutes(r.seconds), f(r))).collect()
    };
    let losses = vec![
        (
            "policy loss".into(),
            BLUE,
            curve(|r| r.losses.policy as f64),
        ),
        ("value loss".into(), RED, curve(|r| r.losses.value as f64)),
        ("policy entropy".into(), GREEN, curve(|r| r.policy_entropy)),
    ];
    let l_max = losses
        .iter()
        .flat_map(|c| c.2.iter().map(|p| p.1))
        .fold(0.1, f64::max);
    draw_panel(
        &top,
        "Training losses",
        "loss / nats",
        t_max,
        l_max * 1.05,
        SeriesLabelPosition::MiddleRight,
        losses,
    )?;
    // The lower panel: a learning curve of matches when given, else the accuracy
    // against the solver (where it was measured).
    let (caption, y_desc, curves): (&str, &str, Vec<Curve>) = if let Some(points) = matches {
        let line = |k: usize| points.iter().map(|p| (p[0], p[k])).collect();
        (
            "Win rate in matches (95% interval)",
            "% of games won",
            vec![
                ("win rate".into(), BLUE, line(1)),
                ("interval, low".into(), CYAN, line(2)),
                ("interval, high".into(), CYAN, line(3)),
            ],
        )
    } else {
        let accuracy = |f: fn(&tabula_zero::Accuracy) -> f64| -> Vec<(f64, f64)> {
            rows.iter()
                .filter_map(|r| r.accuracy.map(|a| (minutes(r.seconds), 100.0 * f(&a))))
                .collect()
        };
        (
            "Optimal moves against the exact solver (%)",
            "% of test positions",
            vec![
                ("MCTS: optimal".into(), BLUE, accuracy(|a| a.mcts_optimal)),
                (
                    "MCTS: keeps result".into(),
                    CYAN,
                    accuracy(|a| a.mcts_keeps),
                ),
                (
                    "raw policy: optimal".into(),
                    RED,
                    accuracy(|a| a.policy_optimal),
                ),
                (
                    "raw policy: keeps result".into(),
                    MAGENTA,
                    accuracy(|a| a.policy_keeps),
                ),
            ],
        )
    };
    draw_panel(
        &bottom,
        caption,
        y_desc,
        t_max,
        100.0,
        SeriesLabelPosition::LowerRight,
        curves,
    )?;
    root.present()?;
    println!("wrote {}", out.display());
    Ok(ExitCode::SUCCESS)
}

/// The curves of a mine-model run: training loss, and per board the validation KL
/// divergence from the exact probabilities and the safest-cell agreement.
fn plot_mines(args: &PlotArgs) -> Result<ExitCode> {
    use plotters::prelude::*;
    let rows = tabula_automine::run::read_metrics(&args.run)?;
    if rows.is_empty() {
        bail!("{} has no metrics yet", args.run.display());
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| args.run.join("curves.svg"));
    let root = SVGBackend::new(&out, (1000, 1200)).into_drawing_area();
    root.fill(&WHITE)?;
    let panels = root.split_evenly((3, 1));
    let minutes = |s: f64| s / 60.0;
    let t_max = minutes(rows.last().map_or(1.0, |r| r.seconds)).max(1e-3);
    let loss: Vec<(f64, f64)> = rows
        .iter()
        .map(|r| (minutes(r.seconds), r.train_loss))
        .collect();
    let l_max = loss.iter().map(|p| p.1).fold(0.1, f64::max);
    draw_panel(
        &panels[0],
        "Training loss (cross-entropy against exact P(mine))",
        "nats / hidden cell",
        t_max,
        l_max * 1.05,
        SeriesLabelPosition::UpperRight,
        vec![("training loss".into(), BLUE, loss)],
    )?;
    let colours = [BLUE, RED, GREEN, MAGENTA, CYAN, BLACK];
    let per_board = |pick: fn(&tabula_automine::run::MinesMetrics) -> &Vec<(String, f64)>,
                     scale: f64|
     -> Vec<Curve> {
        let names: Vec<String> = pick(&rows[0]).iter().map(|(b, _)| b.clone()).collect();
        names
            .iter()
            .enumerate()
            .map(|(k, name)| {
                let points = rows
                    .iter()
                    .filter_map(|r| {
                        pick(r)
                            .iter()
                            .find(|(b, _)| b == name)
                            .map(|(_, v)| (minutes(r.seconds), v * scale))
                    })
                    .collect();
                (name.clone(), colours[k % colours.len()], points)
            })
            .collect()
    };
    let kl = per_board(|r| &r.validation_kl, 1.0);
    let kl_max = kl
        .iter()
        .flat_map(|c| c.2.iter().map(|p| p.1))
        .fold(0.01, f64::max);
    draw_panel(
        &panels[1],
        "Validation: KL divergence from the exact probabilities",
        "nats / hidden cell",
        t_max,
        kl_max * 1.05,
        SeriesLabelPosition::UpperRight,
        kl,
    )?;
    draw_panel(
        &panels[2],
        "Validation: the net's safest cell is an exactly safest cell (%)",
        "% of positions",
        t_max,
        100.0,
        SeriesLabelPosition::LowerRight,
        per_board(|r| &r.validation_safest, 100.0),
    )?;
    root.present()?;
    println!("wrote {}", out.display());
    Ok(ExitCode::SUCCESS)
}

/// Measure a network's accuracy against the exact solver: the share of test positions
/// where its raw policy's move and its MCTS move are optimal (or keep the result).
///
/// Tic-tac-toe: all 4,520 non-terminal positions; Connect Four: Pons' test sets, each
/// reported on its own (by default the first N/2 positions of Test_L2_R1 and Test_L1_R1
/// together).
#[derive(Args)]
pub struct AccuracyArgs {
    /// The game: tictactoe or connect4.
    game: String,
    /// The network (default: the shipped model).
    #[arg(long)]
    model: Option<PathBuf>,
    /// Simulations of the MCTS measurement.
    #[arg(long, default_value_t = 800, value_parser = crate::input::count(1, 100_000_000))]
    sims: usize,
    #[command(flatten)]
    search: crate::evaluators::SearchFlags,
    /// Test positions (Connect Four: per named set, or in all with the default mix; 0:
    /// all of them, 1,000 per set).
    #[arg(long, default_value_t = 400)]
    positions: usize,
    /// Named test sets to measure one by one, comma-separated, or `all` (Connect Four:
    /// Test_L3_R1, Test_L2_R1, Test_L2_R2, Test_L1_R1, Test_L1_R2, Test_L1_R3). Default:
    /// the mix training runs measure on. A file of your own in --eval-data, in Pons'
    /// format (a move string per line), is measured by its name the same way: a tuning
    /// set, so that choices are never made on the test sets.
    #[arg(long, value_delimiter = ',')]
    sets: Vec<String>,
    /// Pons' Connect Four test sets.
    #[arg(long, default_value = "../shared/data/connect4")]
    eval_data: PathBuf,
    /// A folder where the solver's classification of each set is kept (computed if
    /// missing; data/connect4-labels holds the shipped one, and is read for whole sets
    /// when this is not given).
    #[arg(long)]
    labels: Option<PathBuf>,
}

struct Measure<'a>(&'a AccuracyArgs);

impl GameVisitor for Measure<'_> {
    type Output = Result<()>;
    fn visit<G: Capabilities>(self, game: G) -> Result<()> {
        let a = self.0;
        let path = match &a.model {
            Some(p) => p.clone(),
            None => crate::evaluators::shipped_model(&game.name()).ok_or_else(|| {
                anyhow::anyhow!("no shipped model for {}: give --model", game.name())
            })?,
        };
        let net = crate::evaluators::load_network(&path, &game)?;
        let known = game.test_set_names();
        let sets: Vec<&str> = if a.sets.iter().any(|s| s == "all") {
            known.to_vec()
        } else {
            a.sets.iter().map(String::as_str).collect()
        };
        // Beside the named sets, a file of one's own in the same folder (a tuning set).
        let own = |s: &str| !known.is_empty() && a.eval_data.join(s).is_file();
        if let Some(bad) = sets.iter().find(|s| !known.contains(s) && !own(s)) {
            bail!(
                "{} has no test set {bad:?} (it has: {})",
                game.name(),
                if known.is_empty() {
                    "one whole set, no named ones".to_string()
                } else {
                    known.join(", ")
                }
            );
        }
        let labels = a.labels.clone().unwrap_or_else(std::env::temp_dir);
        std::fs::create_dir_all(&labels)
            .with_context(|| format!("creating {}", labels.display()))?;
        // One measurement per named set, or one of the default mix.
        let groups: Vec<Vec<&str>> = if sets.is_empty() {
            vec![vec![]]
        } else {
            sets.iter().map(|&s| vec![s]).collect()
        };
        let search = a.search.settings(&game)?;
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        println!("{}, MCTS at {} simulations:", path.display(), a.sims);
        for group in groups {
            let stem = if group.is_empty() {
                "default"
            } else {
                group[0]
            };
            let cache = tabula_games::labels_file(&labels, &game.name(), stem, a.positions);
            let finished = a
                .labels
                .as_deref()
                .unwrap_or(Path::new("data/connect4-labels"));
            let Some(set) = test_set(&game, &a.eval_data, &group, a.positions, &cache, finished)?
            else {
                bail!(
                    "no accuracy test set for {} (tictactoe and connect4 have one)",
                    game.name()
                );
            };
            let acc = tabula_zero::accuracy::measure(&set, &net, &search, a.sims, threads)?;
            println!(
                "  {}: raw policy optimal {:.2}%, keeps the result {:.2}%; \
                 MCTS optimal {:.2}%, keeps the result {:.2}% (result mistakes {:.2}%)",
                set.name,
                100.0 * acc.policy_optimal,
                100.0 * acc.policy_keeps,
                100.0 * acc.mcts_optimal,
                100.0 * acc.mcts_keeps,
                100.0 * (1.0 - acc.mcts_keeps)
            );
        }
        Ok(())
    }
}

pub fn accuracy(args: AccuracyArgs) -> Result<ExitCode> {
    registry::visit(&args.game, Measure(&args))??;
    Ok(ExitCode::SUCCESS)
}
