//! `tabula mines`: play Minesweeper, solve saved positions, benchmark the agent.

use std::fs;
use std::io::{self, BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use tabula_automine::MineNet;
use tabula_mines::{
    Agent, Cell, CellPredictor, Config, ExactSolver, FirstClick, GameRecord, Level, Minefield,
    Probabilities, Seen, Status, Teacher, View,
};
use tabula_search::stats::wilson95;

/// Minesweeper: play, solve positions, measure the agent.
#[derive(Args)]
pub struct MinesArgs {
    #[command(subcommand)]
    what: MinesCommand,
}

#[derive(Subcommand)]
enum MinesCommand {
    /// Play in the terminal. Commands: `r ROW COL` reveal, `f ROW COL` flag,
    /// `c ROW COL` chord, `hint` mine probabilities, `save FILE`, `quit`.
    Play(PlayArgs),
    /// Print the mine probability of every cell of a saved position (see README for
    /// the file format).
    Solve(SolveArgs),
    /// Let the agent play many games and report its win rate.
    Bench(BenchArgs),
    /// Train the learned mine model (AutoMine's CNN, fully convolutional) on exact
    /// probabilities; resumable, curves with `tabula plot --run DIR`.
    Train(crate::mines_train::TrainArgs),
    /// Measure a mine model against the exact probabilities of a run's held-out test
    /// positions, beside the teacher and the exact solver.
    Eval(crate::mines_train::EvalArgs),
}

/// Board options shared by `play` and `bench`.
#[derive(Args, Clone)]
struct BoardArgs {
    /// beginner (9x9, 10), intermediate (16x16, 40) or expert (30x16, 99).
    #[arg(long, default_value = "beginner", conflicts_with_all = ["width", "height", "mines"])]
    level: String,
    /// Custom width (with --height and --mines, instead of --level).
    #[arg(long, requires_all = ["height", "mines"])]
    width: Option<usize>,
    /// Custom height (with --width and --mines).
    #[arg(long, requires_all = ["width", "mines"])]
    height: Option<usize>,
    /// Custom mine count (with --width and --height).
    #[arg(long, requires_all = ["width", "height"])]
    mines: Option<usize>,
    /// First-click rule: none (mines placed before the click), safe (the first cell
    /// is never a mine), opening (the first cell and its neighbours are mine-free).
    #[arg(long, default_value = "opening")]
    rule: String,
}

impl BoardArgs {
    fn config(&self) -> Result<Config> {
        let rule: FirstClick = self.rule.parse()?;
        Ok(match (self.width, self.height, self.mines) {
            (Some(w), Some(h), Some(m)) => Config::new(w, h, m, rule)?,
            _ => Config::level(self.level.parse::<Level>()?, rule),
        })
    }
}

#[derive(Args)]
struct PlayArgs {
    #[command(flatten)]
    board: BoardArgs,
    /// Seed of the mine layout (default: from the clock).
    #[arg(long)]
    seed: Option<u64>,
    /// The estimator behind `hint`.
    #[command(flatten)]
    estimator: EstimatorArgs,
}

/// On, off, or the measured default.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Switch {
    Auto,
    On,
    Off,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SolverKind {
    /// Exact probabilities (falls back to the teacher past its budget).
    Exact,
    /// AutoMine's greedy local propagation.
    Teacher,
    /// The learned model (--model, default models/mines.safetensors).
    Net,
}

impl SolverKind {
    fn name(self) -> &'static str {
        match self {
            SolverKind::Exact => "exact",
            SolverKind::Teacher => "teacher",
            SolverKind::Net => "net",
        }
    }
}

/// The estimator `--solver` and `--model` name.
#[derive(Args, Clone)]
struct EstimatorArgs {
    /// Which estimator.
    #[arg(long, value_enum, default_value = "exact")]
    solver: SolverKind,
    /// The mine model for `--solver net` (default: the shipped models/mines.safetensors).
    #[arg(long)]
    model: Option<PathBuf>,
    /// With `--solver net`: give the cells beside no revealed number the probability the
    /// mine count leaves for them, (mines left − the net's expected mines elsewhere) /
    /// their number, as exact solvers do (`false`: the net's own estimates).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    count_interior: bool,
    /// With `--solver net`: passes that make the net's estimates agree with every
    /// revealed number (a number's hidden neighbours add up to the mines it lacks), by
    /// shifting their log-odds (0: none).
    #[arg(long, default_value_t = tabula_automine::model::FIT_ROUNDS, value_parser = crate::input::count(0, 10_000))]
    fit_numbers: usize,
    /// With `--solver net`: average the net over this many mirror images of the board
    /// (1, 2: and left to right, 4: and upside down), as many forward passes a turn.
    #[arg(long, default_value_t = 1, value_parser = crate::input::count(1, 4))]
    symmetries: usize,
}

/// A loaded estimator choice; `make` gives each thread its own predictor.
enum Estimator {
    Exact,
    Teacher,
    Net(MineNet),
}

impl EstimatorArgs {
    fn load(&self) -> Result<Estimator> {
        if ![1, 2, 4].contains(&self.symmetries) {
            bail!("--symmetries takes 1, 2 or 4 mirror images");
        }
        if self.model.is_some() && self.solver != SolverKind::Net {
            bail!("--model is the network of --solver net; add --solver net");
        }
        Ok(match self.solver {
            SolverKind::Exact => Estimator::Exact,
            SolverKind::Teacher => Estimator::Teacher,
            SolverKind::Net => {
                let path = match &self.model {
                    Some(p) => p.clone(),
                    None => crate::evaluators::shipped_model("mines").ok_or_else(|| {
                        anyhow::anyhow!(
                            "no shipped mine model (models/mines.safetensors): give --model"
                        )
                    })?,
                };
                let mut net =
                    MineNet::load(&path).with_context(|| format!("loading {}", path.display()))?;
                net.count_interior = self.count_interior;
                net.fit_rounds = self.fit_numbers;
                net.symmetries = self.symmetries;
                Estimator::Net(net)
            }
        })
    }
}

impl Estimator {
    fn make(&self) -> Box<dyn CellPredictor + Send> {
        match self {
            Estimator::Exact => Box::new(ExactSolver::default()),
            Estimator::Teacher => Box::new(Teacher),
            Estimator::Net(net) => Box::new(net.for_thread()),
        }
    }
}

#[derive(Args)]
struct SolveArgs {
    /// A position file.
    file: PathBuf,
    #[command(flatten)]
    estimator: EstimatorArgs,
}

#[derive(Args)]
struct BenchArgs {
    #[command(flatten)]
    board: BoardArgs,
    /// Number of games.
    #[arg(long, default_value_t = 1000, value_parser = crate::input::count(1, 1_000_000_000))]
    games: usize,
    /// Seed of the first game; game k uses seed + k.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Worker threads (default: all cores).
    #[arg(long, value_parser = crate::input::count(1, 1024))]
    threads: Option<usize>,
    #[command(flatten)]
    estimator: EstimatorArgs,
    /// Append the summary as one JSON line to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write one line per game to this new file: `SEED WON GUESSES` (WON is 1 or 0),
    /// so that two agents' runs on the same seeds can be compared game by game
    /// (`scripts/mines-paired.sh`). An existing file is not overwritten.
    #[arg(long)]
    games_out: Option<PathBuf>,
    /// Guesses within this P(mine) of the safest are compared by looking one move
    /// ahead (0 turns the look-ahead off).
    #[arg(long, default_value_t = 0.1)]
    lookahead_margin: f64,
    /// At most this many of those guesses are looked ahead from.
    #[arg(long, default_value_t = 16, value_parser = crate::input::count(1, 10_000))]
    lookahead_cells: usize,
    /// Most layouts for which the endgame is searched exhaustively (up to 4,096; on
    /// expert, 1,024 wins a few games in 10,000 more at a third of the speed).
    #[arg(long, default_value_t = 256)]
    endgame_layouts: usize,
    /// Weigh up guesses that could settle a 50/50 before it forms, and take
    /// pseudo-50/50s at once (the agent's "long-term risk", several times slower):
    /// `auto` does so on boards of more than 300 cells (expert) with a guaranteed
    /// opening, where it wins more, and not where no clear gain was measured.
    #[arg(long, value_enum, default_value_t = Switch::Auto)]
    long_term_risk: Switch,
    /// The agent's first click as ROW,COL (default: with the opening rule, the third
    /// cell from the top-left corner, the fourth on boards of more than 300 cells — the
    /// best measured; the top-left corner under the other rules).
    #[arg(long, value_parser = parse_row_col)]
    first_click: Option<Cell>,
}

fn parse_row_col(s: &str) -> Result<Cell, String> {
    let (r, c) = s.split_once(',').ok_or("expected ROW,COL")?;
    Ok(Cell::new(
        r.trim().parse().map_err(|_| format!("bad row {r:?}"))?,
        c.trim().parse().map_err(|_| format!("bad column {c:?}"))?,
    ))
}

pub fn run(args: MinesArgs) -> Result<ExitCode> {
    match args.what {
        MinesCommand::Play(a) => play(a),
        MinesCommand::Solve(a) => solve(a),
        MinesCommand::Bench(a) => bench(a),
        MinesCommand::Train(a) => crate::mines_train::train(a),
        MinesCommand::Eval(a) => crate::mines_train::eval(a),
    }
}

/// The board with row and column numbers; with `probs`, hidden cells show P(mine) in
/// tenths (`0`–`9`, `!` for a certain mine, `_` for certainly safe).
fn render(view: &View, probs: Option<&Probabilities>) -> String {
    let dims = view.dims();
    let mut s = String::from("    ");
    for c in 0..dims.width {
        s.push_str(&format!("{:>2}", c % 100));
    }
    s.push('\n');
    for r in 0..dims.height {
        s.push_str(&format!("{r:>3} "));
        for c in 0..dims.width {
            let i = dims.index(Cell::new(r, c));
            let ch = match (view.cells()[i], probs) {
                (Seen::Hidden, Some(p)) | (Seen::Flagged, Some(p)) => {
                    if p.mines.binary_search(&i).is_ok() {
                        '!'
                    } else if p.safe.binary_search(&i).is_ok() {
                        '_'
                    } else {
                        char::from(b'0' + ((p.p[i] * 10.0).floor() as u8).min(9))
                    }
                }
                (Seen::Hidden, None) => '.',
                (Seen::Flagged, None) => 'F',
                (Seen::Mine, _) => '*',
                (Seen::Number(0), _) => ' ',
                (Seen::Number(k), _) => char::from(b'0' + k),
            };
            s.push(' ');
            s.push(ch);
        }
        s.push('\n');
    }
    s
}

fn parse_cell(parts: &[&str], view: &View) -> Result<Cell> {
    let [r, c] = parts else {
        bail!("expected ROW COL, e.g. `r 3 4`");
    };
    let cell = Cell::new(
        r.parse().with_context(|| format!("bad row {r:?}"))?,
        c.parse().with_context(|| format!("bad column {c:?}"))?,
    );
    if !view.dims().contains(cell) {
        bail!(
            "{cell} is off the board (rows 0-{}, columns 0-{})",
            view.dims().height - 1,
            view.dims().width - 1
        );
    }
    Ok(cell)
}

fn play(args: PlayArgs) -> Result<ExitCode> {
    let config = args.board.config()?;
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    });
    let mut game = Minefield::new(config, seed);
    let mut out = io::stdout();
    writeln!(
        out,
        "Minesweeper {}x{}, {} mines, first click: {} (seed {seed}).",
        config.dims.width, config.dims.height, config.mines, config.first_click
    )?;
    writeln!(
        out,
        "Commands: r ROW COL (reveal), f ROW COL (flag), c ROW COL (chord), hint, save FILE, quit."
    )?;
    let mut hints = args.estimator.load()?.make();
    let mut lines = io::stdin().lock().lines();
    loop {
        let view = game.view();
        writeln!(out, "\n{}", render(&view, None))?;
        match game.status() {
            Status::Won => {
                writeln!(out, "You win!")?;
                return Ok(ExitCode::SUCCESS);
            }
            Status::Lost => {
                writeln!(out, "Boom. You lose.")?;
                return Ok(ExitCode::SUCCESS);
            }
            Status::Playing => {}
        }
        write!(out, "> ")?;
        out.flush()?;
        let Some(line) = lines.next() else {
            writeln!(out, "\n(end of input)")?;
            return Ok(ExitCode::SUCCESS);
        };
        let line = line?;
        let parts: Vec<&str> = line.split_whitespace().collect();
        let result: Result<()> = match parts.as_slice() {
            [] => Ok(()),
            ["quit" | "q" | "exit"] => return Ok(ExitCode::SUCCESS),
            ["hint" | "h"] => match hints.predict(&view) {
                Ok(p) => {
                    writeln!(
                        out,
                        "P(mine) in tenths; {}:\n{}",
                        if p.approximate {
                            "! = a mine, _ = safe, by the estimate (approximate)"
                        } else {
                            "! = certain mine, _ = certain safe"
                        },
                        render(&view, Some(&p))
                    )?;
                    Ok(())
                }
                Err(e) => Err(e.into()),
            },
            ["save", file] => fs::write(file, view.to_string())
                .with_context(|| format!("writing {file}"))
                .map(|_| ()),
            [cmd @ ("r" | "f" | "c"), rest @ ..] => parse_cell(rest, &view).and_then(|cell| {
                match *cmd {
                    "r" => game.reveal(cell).map(|_| ()),
                    "f" => game.toggle_flag(cell).map(|_| ()),
                    _ => game.chord(cell).map(|_| ()),
                }
                .map_err(Into::into)
            }),
            _ => Err(anyhow::anyhow!("unknown command {line:?}")),
        };
        if let Err(e) = result {
            writeln!(out, "{e:#}")?;
        }
    }
}

fn solve(args: SolveArgs) -> Result<ExitCode> {
    let text = fs::read_to_string(&args.file)
        .with_context(|| format!("reading {}", args.file.display()))?;
    let view = View::parse(&text).with_context(|| format!("{}", args.file.display()))?;
    let probs = args.estimator.load()?.make().predict(&view)?;
    let dims = view.dims();
    let mut out = io::stdout().lock();
    writeln!(
        out,
        "# P(mine) per cell ({}{}); revealed cells show their number in brackets",
        args.estimator.solver.name(),
        if probs.approximate && args.estimator.solver == SolverKind::Exact {
            ", APPROXIMATE: enumeration budget exceeded"
        } else {
            ""
        }
    )?;
    if let Some(l) = probs.ln_layouts {
        writeln!(
            out,
            "# consistent layouts: about 10^{:.2}",
            l / std::f64::consts::LN_10
        )?;
    }
    for r in 0..dims.height {
        let row: Vec<String> = (0..dims.width)
            .map(|c| {
                let i = dims.index(Cell::new(r, c));
                match view.cells()[i] {
                    Seen::Number(k) => format!("  [{k}]"),
                    Seen::Mine => "  [*]".to_string(),
                    _ => format!("{:.3}", probs.p[i]),
                }
            })
            .collect();
        writeln!(out, "{}", row.join(" "))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn bench(args: BenchArgs) -> Result<ExitCode> {
    let config = args.board.config()?;
    if let Some(c) = args.first_click {
        if !config.dims.contains(c) {
            bail!(
                "--first-click {c} is off the {}x{} board",
                config.dims.width,
                config.dims.height
            );
        }
    }
    // Created before the games are played, so a name already taken is refused at once.
    let mut games_out = match &args.games_out {
        Some(path) => Some(std::io::BufWriter::new(
            fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .with_context(|| {
                    format!("cannot create {} (it must not exist yet)", path.display())
                })?,
        )),
        None => None,
    };
    let estimator = args.estimator.load()?;
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()?;
    let bar = ProgressBar::new(args.games as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} games  {per_sec}  eta {eta}  {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let wins = AtomicUsize::new(0);
    let start = Instant::now();
    let records: Vec<Result<GameRecord, tabula_mines::MinesError>> = pool.install(|| {
        (0..args.games)
            .into_par_iter()
            .map(|k| {
                let seed = args.seed.wrapping_add(k as u64);
                let mut game = Minefield::new(config, seed);
                let mut agent = Agent::new(estimator.make());
                agent.lookahead_margin = args.lookahead_margin;
                agent.endgame_layouts = args.endgame_layouts;
                agent.lookahead_cells = args.lookahead_cells;
                agent.long_term_risk = match args.long_term_risk {
                    Switch::Auto => None,
                    Switch::On => Some(true),
                    Switch::Off => Some(false),
                };
                agent.first = args.first_click;
                let r = agent.play(&mut game);
                if r.as_ref().is_ok_and(|r| r.won) {
                    let w = wins.fetch_add(1, Ordering::Relaxed) + 1;
                    if w.is_multiple_of(64) {
                        bar.set_message(format!("{w} won"));
                    }
                }
                bar.inc(1);
                r
            })
            .collect()
    });
    bar.finish_and_clear();
    let elapsed = start.elapsed().as_secs_f64();
    let mut games = Vec::with_capacity(records.len());
    for r in records {
        games.push(r?);
    }
    if let Some(out) = games_out.as_mut() {
        for (k, g) in games.iter().enumerate() {
            writeln!(
                out,
                "{} {} {}",
                args.seed.wrapping_add(k as u64),
                u8::from(g.won),
                g.guesses
            )?;
        }
        out.flush()?;
    }
    let n = games.len();
    let won = games.iter().filter(|g| g.won).count();
    let (lo, hi) = wilson95(won as f64, n);
    let guesses: usize = games.iter().map(|g| g.guesses).sum();
    let approx: usize = games.iter().map(|g| g.approximate_turns).sum();
    let endgame: usize = games.iter().map(|g| g.endgame_guesses).sum();
    let rate = won as f64 / n.max(1) as f64;
    println!(
        "board:        {}x{}, {} mines, first click {}",
        config.dims.width, config.dims.height, config.mines, config.first_click
    );
    println!(
        "games:        {n} (seeds {}..{})",
        args.seed,
        args.seed + n as u64
    );
    println!(
        "win rate:     {:.2}%  (95% CI {:.2}% - {:.2}%)",
        rate * 100.0,
        lo * 100.0,
        hi * 100.0
    );
    println!(
        "speed:        {:.1} games/s on {threads} threads",
        n as f64 / elapsed
    );
    println!(
        "guesses/game: {:.3}  (endgame-searched: {endgame}, approximate turns: {approx})",
        guesses as f64 / n.max(1) as f64
    );
    if let Some(path) = args.json {
        let line = format!(
            "{}\n",
            serde_json::json!({
                "width": config.dims.width,
                "height": config.dims.height,
                "mines": config.mines,
                "rule": config.first_click.to_string(),
                "games": n,
                "seed": args.seed,
                "wins": won,
                "win_rate": rate,
                "ci_low": lo,
                "ci_high": hi,
                "games_per_s": n as f64 / elapsed,
                "threads": threads,
                "guesses_per_game": guesses as f64 / n.max(1) as f64,
                "solver": args.estimator.solver.name(),
            })
        );
        let mut f = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)?;
        f.write_all(line.as_bytes())?;
    }
    Ok(ExitCode::SUCCESS)
}
