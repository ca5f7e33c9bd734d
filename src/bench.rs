//! `tabula bench`: speed measurements recorded in BENCHMARKS.md.

use std::fs;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use tabula_games::registry::{self, GameVisitor};
use tabula_games::Capabilities;
use tabula_search::stats::median;
use tabula_search::uct::search_parallel;
use tabula_search::{Knowledge, Light, Uct, UctConfig};

/// Measure speed.
#[derive(Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    what: BenchCommand,
}

#[derive(Subcommand)]
enum BenchCommand {
    /// Solve every position of a test set (`moves score` lines), check each score and
    /// report time and nodes per position.
    Solver(SolverBench),
    /// Random playouts per second on one thread, from the initial position.
    Playouts(PlayoutBench),
    /// Network inference: positions/s by batch and threads, and the share of peak FLOP/s.
    Nn(crate::bench_nn::NnBench),
    /// Network-guided MCTS: simulations/s for one game and many games at once.
    Mcts(crate::bench_nn::MctsBench),
    /// How fast the perfect player answers: games against random or best replies (it plays
    /// each colour in turn), timing its move (as in `play`) and an analysis of every
    /// column from a fresh solver (as in `solve --analyze`) at every ply.
    Perfect(PerfectBench),
}

#[derive(Args)]
struct PerfectBench {
    /// The game (connect4 or connect4:WxH).
    #[arg(long, default_value = "connect4")]
    game: String,
    /// Games to play.
    #[arg(long, default_value_t = 20, value_parser = crate::input::count(1, 1_000_000))]
    games: usize,
    /// Seed of the random replies.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Transposition table size in MiB (the defaults of `play` and `solve`).
    #[arg(long, default_value_t = 64, value_parser = crate::input::count(1, crate::input::MAX_TABLE_MB))]
    table_mb: usize,
    /// Analyse without the built-in opening book.
    #[arg(long)]
    no_book: bool,
    /// How often the opponent plays a best reply (chosen at random among the exactly
    /// optimal ones, from the analysis) instead of a random one: 0 random play, 1
    /// perfect play; in between the long, balanced games a good human plays.
    #[arg(long, default_value_t = 0.5, value_parser = crate::input::probability)]
    strength: f64,
}

#[derive(Args)]
struct PlayoutBench {
    /// The game (e.g. go, connect4, tictactoe).
    #[arg(long, default_value = "go")]
    game: String,
    /// Board size for Go (shorthand for --game go:SIZE).
    #[arg(long)]
    size: Option<usize>,
    /// How long to run, in seconds (the figure is the median of five equal parts).
    #[arg(long, default_value_t = 5.0)]
    seconds: f64,
    /// Seed of the playouts.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// `light` (uniformly random moves) or `heavy` (the game's playout policy, for
    /// games that have one: Go).
    #[arg(long, default_value = "light")]
    policy: String,
    /// Also time whole UCT searches (RAVE, priors where the game has them, as
    /// `tabula gtp` plays) on each of these thread counts, e.g. 1,2: simulations/s of
    /// threads sharing one tree.
    #[arg(long, value_delimiter = ',', value_parser = crate::input::count(1, 256))]
    search_threads: Vec<usize>,
    /// The searches' RAVE equivalence (as `tabula gtp --rave`).
    #[arg(long, default_value_t = 3000.0, value_parser = crate::input::number(0.0, 1e9))]
    rave: f64,
    /// The searches' exploration constant (as `tabula gtp --exploration`).
    #[arg(long, default_value_t = 0.1, value_parser = crate::input::number(0.0, 100.0))]
    exploration: f64,
}

struct Playouts {
    seconds: f64,
    seed: u64,
    heavy: bool,
    search_threads: Vec<usize>,
    rave: f64,
    exploration: f64,
}

impl GameVisitor for Playouts {
    type Output = Result<()>;
    fn visit<G: Capabilities>(self, game: G) -> Result<()> {
        let knowledge: Box<dyn Knowledge<G> + Send + Sync> = if self.heavy {
            game.uct_knowledge()
                .ok_or_else(|| anyhow::anyhow!("{} has no heavy playouts", game.name()))?
        } else {
            Box::new(Light)
        };
        let mut uct = Uct::with_knowledge(
            UctConfig {
                seed: self.seed,
                ..UctConfig::default()
            },
            &*knowledge,
        );
        let mut rates = Vec::new();
        let (mut total_games, mut total_moves) = (0u64, 0u64);
        for _ in 0..5 {
            let start = Instant::now();
            let mut games = 0u64;
            while start.elapsed().as_secs_f64() < self.seconds / 5.0 {
                for _ in 0..32 {
                    let mut g = game.clone();
                    uct.playout_with_knowledge(&mut g);
                    total_moves += (g.ply() - game.ply()) as u64;
                    games += 1;
                }
            }
            total_games += games;
            rates.push(games as f64 / start.elapsed().as_secs_f64());
        }
        let rate = median(&mut rates);
        println!("game:            {}", game.name());
        println!(
            "playouts/s:      {rate:.0} ({} playouts; median of 5 runs, one thread)",
            if self.heavy { "heavy" } else { "light" }
        );
        println!(
            "moves/playout:   {:.1}",
            total_moves as f64 / total_games.max(1) as f64
        );
        println!(
            "moves/s:         {:.0}",
            rate * total_moves as f64 / total_games.max(1) as f64
        );
        for &threads in &self.search_threads {
            let config = UctConfig {
                seed: self.seed,
                rave: self.rave,
                exploration: self.exploration,
                simulations: usize::MAX,
                time_limit: Some(Duration::from_secs_f64(self.seconds / 5.0)),
                ..UctConfig::default()
            };
            let mut rates: Vec<f64> = (0..5)
                .map(|_| {
                    let start = Instant::now();
                    let r = search_parallel(config, &&*knowledge, &game, threads);
                    r.simulations as f64 / start.elapsed().as_secs_f64()
                })
                .collect();
            println!(
                "search sims/s:   {:.0} on {threads} thread(s) sharing one tree (median of 5 searches)",
                median(&mut rates)
            );
        }
        Ok(())
    }
}

#[derive(Args)]
struct SolverBench {
    /// A file of `moves score` lines, e.g. ../shared/data/connect4/Test_L2_R2.
    #[arg(long)]
    set: PathBuf,
    /// The game (connect4 or connect4:WxH).
    #[arg(long, default_value = "connect4")]
    game: String,
    /// Weak solving (win/draw/loss only).
    #[arg(long)]
    weak: bool,
    /// Transposition table size in MiB.
    #[arg(long, default_value_t = 64, value_parser = crate::input::count(1, crate::input::MAX_TABLE_MB))]
    table_mb: usize,
    /// Keep the transposition table between positions (by default each position is
    /// solved from an empty table; clearing is not timed).
    #[arg(long)]
    keep_table: bool,
    /// Solve only the first N positions.
    #[arg(long)]
    limit: Option<usize>,
    /// Use the built-in opening book (off by default: the benchmark measures search).
    #[arg(long)]
    book: bool,
}

pub fn run(args: BenchArgs) -> Result<ExitCode> {
    match args.what {
        BenchCommand::Solver(b) => registry::visit(&b.game.clone(), SolverRun(b))?,
        BenchCommand::Nn(b) => crate::bench_nn::nn(b).map(|_| ExitCode::SUCCESS),
        BenchCommand::Mcts(b) => crate::bench_nn::mcts(b).map(|_| ExitCode::SUCCESS),
        BenchCommand::Perfect(b) => registry::visit(&b.game.clone(), PerfectRun(b))?,
        BenchCommand::Playouts(b) => {
            let spec = match b.size {
                Some(n) => format!("{}:{n}", b.game.split(':').next().unwrap_or("go")),
                None => b.game.clone(),
            };
            let heavy = match b.policy.as_str() {
                "light" => false,
                "heavy" => true,
                other => anyhow::bail!("--policy must be light or heavy, not {other:?}"),
            };
            let run = Playouts {
                seconds: b.seconds.max(0.05),
                seed: b.seed,
                heavy,
                search_threads: b.search_threads,
                rave: b.rave,
                exploration: b.exploration,
            };
            registry::visit(&spec, run)??;
            Ok(ExitCode::SUCCESS)
        }
    }
}

struct SolverRun(SolverBench);

impl GameVisitor for SolverRun {
    type Output = Result<ExitCode>;

    fn visit<G: Capabilities>(self, start: G) -> Result<ExitCode> {
        let b = self.0;
        let Some(solver) = start.exact_solver(b.table_mb, b.book) else {
            anyhow::bail!("{} has no exact solver to benchmark", start.name());
        };
        let mut solver = solver?;
        let text =
            fs::read_to_string(&b.set).with_context(|| format!("reading {}", b.set.display()))?;
        let (mut times, mut nodes) = (Vec::new(), Vec::new());
        let mut wrong = 0;
        for (i, line) in text.lines().enumerate().take(b.limit.unwrap_or(usize::MAX)) {
            let mut f = line.split_whitespace();
            let (Some(moves), Some(want)) = (f.next(), f.next()) else {
                anyhow::bail!("{}:{}: expected `moves score`", b.set.display(), i + 1);
            };
            let want: i32 = want
                .parse()
                .with_context(|| format!("{}:{}: bad score", b.set.display(), i + 1))?;
            let mut game = start.clone();
            crate::evaluators::play_moves(&mut game, moves)
                .with_context(|| format!("{}:{}", b.set.display(), i + 1))?;
            if !b.keep_table {
                solver.clear();
            }
            solver.reset_nodes();
            let started = Instant::now();
            let got = solver.solve(&game, b.weak)?;
            times.push(started.elapsed().as_secs_f64());
            nodes.push(solver.nodes() as f64);
            let want = if b.weak { want.signum() } else { want };
            if got != want {
                wrong += 1;
                eprintln!("{moves}: expected {want}, solved {got}");
            }
        }
        let n = times.len().max(1) as f64;
        let total_time: f64 = times.iter().sum();
        let total_nodes: f64 = nodes.iter().sum();
        println!("set:            {}", b.set.display());
        println!("positions:      {} ({} wrong)", times.len(), wrong);
        println!("mean time:      {:.1} µs", total_time / n * 1e6);
        println!("median time:    {:.1} µs", median(&mut times) * 1e6);
        println!("mean nodes:     {:.0}", total_nodes / n);
        println!("median nodes:   {:.0}", median(&mut nodes));
        println!(
            "speed:          {:.2} M nodes/s",
            total_nodes / total_time.max(1e-12) / 1e6
        );
        Ok(if wrong == 0 {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        })
    }
}

struct PerfectRun(PerfectBench);

impl GameVisitor for PerfectRun {
    type Output = Result<ExitCode>;

    fn visit<G: Capabilities>(self, start: G) -> Result<ExitCode> {
        use rand::{Rng, SeedableRng};
        let b = self.0;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(b.seed);
        // seconds by ply: the player's moves, and the analyses
        let (mut moves, mut analyses): (Vec<Vec<f64>>, Vec<Vec<f64>>) = (Vec::new(), Vec::new());
        let record = |by_ply: &mut Vec<Vec<f64>>, ply: usize, secs: f64| {
            if by_ply.len() <= ply {
                by_ply.resize(ply + 1, Vec::new());
            }
            by_ply[ply].push(secs);
        };
        for game_index in 0..b.games {
            let player_side = if game_index % 2 == 0 {
                tabula_core::Player::First
            } else {
                tabula_core::Player::Second
            };
            let (Some(agent), Some(solver)) = (
                start.perfect_agent(b.table_mb),
                start.exact_solver(b.table_mb, !b.no_book),
            ) else {
                anyhow::bail!("{} has no perfect player to benchmark", start.name());
            };
            let (mut agent, mut solver) = (agent?, solver?);
            let mut game = start.clone();
            while !game.is_terminal() {
                let ply = game.ply();
                solver.clear();
                let started = Instant::now();
                let scores = solver.analyze(&game, false)?;
                record(&mut analyses, ply, started.elapsed().as_secs_f64());
                let mv = if game.to_move() == player_side {
                    let started = Instant::now();
                    let choice = agent.choose(&game).context("the player has no move")?;
                    record(&mut moves, ply, started.elapsed().as_secs_f64());
                    choice.mv
                } else {
                    let mut legal = game.legal_moves();
                    if rng.random_bool(b.strength) {
                        let score =
                            |mv: &G::Move| scores.get(game.action_of(*mv)).copied().flatten();
                        let best = legal.iter().filter_map(&score).max();
                        legal.retain(|mv| score(mv) == best);
                    }
                    legal[rng.random_range(0..legal.len())]
                };
                game.play(mv);
            }
        }
        println!(
            "{} games of the perfect player against replies best with probability {} (seed {})",
            b.games, b.strength, b.seed
        );
        println!("ply  moves  move median  move max  analyses  analysis median  analysis max");
        let mut worst: (f64, f64) = (0.0, 0.0);
        let mut over = (0usize, 0usize);
        for ply in 0..moves.len().max(analyses.len()) {
            let mut m = moves.get(ply).cloned().unwrap_or_default();
            let mut a = analyses.get(ply).cloned().unwrap_or_default();
            let max = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
            let (mmax, amax) = (max(&m), max(&a));
            worst = (worst.0.max(mmax), worst.1.max(amax));
            over.0 += m.iter().filter(|&&t| t > 1.0).count();
            over.1 += a.iter().filter(|&&t| t > 1.0).count();
            let med = |v: &mut Vec<f64>| if v.is_empty() { 0.0 } else { median(v) };
            println!(
                "{ply:>3}  {:>5}  {:>9.4}s  {:>7.3}s  {:>8}  {:>13.4}s  {:>11.3}s",
                m.len(),
                med(&mut m),
                mmax,
                a.len(),
                med(&mut a),
                amax
            );
        }
        println!(
            "slowest move {:.3}s ({} over 1 s), slowest analysis {:.3}s ({} over 1 s)",
            worst.0, over.0, worst.1, over.1
        );
        Ok(ExitCode::SUCCESS)
    }
}
