//! `tabula mines train` and `tabula mines eval`: the learned mine model's training run
//! and its measurement on held-out positions.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;
use tabula_automine::eval::{measure, Quality};
use tabula_automine::run::RunConfig;
use tabula_automine::{MineNet, MinesRun};
use tabula_mines::{ExactSolver, Teacher};
use tabula_nn::CellNetFile;

use crate::train::Bars;

/// Options of `tabula mines train`; those not given keep the run's stored values (or
/// the defaults for a new run).
#[derive(Args)]
pub struct TrainArgs {
    /// The run directory (created if missing; an interrupted run resumes).
    #[arg(long)]
    run: PathBuf,
    /// Network trunk, BLOCKSxCHANNELS (default 4x32).
    #[arg(long)]
    size: Option<String>,
    /// Boards to learn from, comma-separated LEVEL/RULE (default: beginner,
    /// intermediate, expert, each with the safe and opening rules).
    #[arg(long, value_delimiter = ',')]
    boards: Option<Vec<String>>,
    /// Data games per board, played by the exact agent (default 5000; one in ten is
    /// held out for validation, one for test).
    #[arg(long, value_parser = crate::input::count(1, 10_000_000))]
    games: Option<usize>,
    /// Share of each game's turns kept as training positions (default 0.3).
    #[arg(long, value_parser = crate::input::probability)]
    keep: Option<f64>,
    /// Positions per batch (default 32).
    #[arg(long, value_parser = crate::input::count(1, 4096))]
    batch: Option<usize>,
    /// Train up to this many steps in total (default 12000; raise it to continue a
    /// finished run). With --init the total counts the initial model's steps too.
    #[arg(long, value_parser = crate::input::count(1, 1_000_000_000))]
    steps: Option<usize>,
    /// Save, evaluate and log every this many steps (default 500).
    #[arg(long, value_parser = crate::input::count(1, 1_000_000_000))]
    eval_every: Option<usize>,
    /// Start a new run from this model (e.g. models/mines.safetensors) instead of
    /// random weights; a resumed run keeps its own.
    #[arg(long)]
    init: Option<PathBuf>,
    /// Delete what the run directory holds (data, model, metrics) and start again.
    #[arg(long)]
    restart: bool,
    /// No progress bars (log lines only).
    #[arg(long)]
    quiet: bool,
}

/// Options of `tabula mines eval`.
#[derive(Args)]
pub struct EvalArgs {
    /// The run whose held-out test positions are measured.
    #[arg(long)]
    run: PathBuf,
    /// The model (default: the run's own model.safetensors).
    #[arg(long)]
    model: Option<PathBuf>,
    /// At most this many test positions per board.
    #[arg(long, default_value_t = 2000, value_parser = crate::input::count(1, 10_000_000))]
    positions: usize,
    /// Print each board's calibration table too.
    #[arg(long)]
    calibration: bool,
}

pub fn train(args: TrainArgs) -> Result<ExitCode> {
    let mut config = if tabula_automine::run::is_run(&args.run) && !args.restart {
        tabula_automine::run::stored_config(&args.run)?
    } else {
        RunConfig::default()
    };
    if let Some(s) = args.size {
        config.size = s;
    }
    if let Some(b) = args.boards {
        config.boards = b;
    }
    if let Some(g) = args.games {
        config.games = g as u64;
    }
    if let Some(k) = args.keep {
        config.keep = k;
    }
    if let Some(b) = args.batch {
        config.batch = b;
    }
    if let Some(s) = args.steps {
        config.steps = s as u64;
    }
    if let Some(e) = args.eval_every {
        config.eval_every = e as u64;
    }
    let init = args
        .init
        .as_deref()
        .map(CellNetFile::load)
        .transpose()
        .context("--init")?;
    let run = MinesRun::open(&args.run, config, args.restart)?;
    let progress = Bars::new(args.quiet);
    let file = run.train(init.as_ref(), &progress)?;
    println!(
        "{} steps; model in {}",
        file.extra.get("steps").map_or("?", String::as_str),
        args.run.join("model.safetensors").display()
    );
    Ok(ExitCode::SUCCESS)
}

pub fn eval(args: EvalArgs) -> Result<ExitCode> {
    if !tabula_automine::run::is_run(&args.run) {
        anyhow::bail!(
            "{} is not a mine-model run (no automine.json)",
            args.run.display()
        );
    }
    let model = args
        .model
        .clone()
        .unwrap_or_else(|| args.run.join("model.safetensors"));
    let mut net = MineNet::load(&model).with_context(|| format!("loading {}", model.display()))?;
    let sets = tabula_automine::run::test_sets(&args.run)?;
    println!(
        "model {} on held-out test games (never trained on or tuned with)",
        model.display()
    );
    println!(
        "{:<22} {:>9} {:>8} {:>9} {:>9} {:>9} {:>10} {:>14} {:>10}",
        "board / estimator",
        "positions",
        "cells",
        "KL",
        "log-loss",
        "Brier",
        "safest ok",
        "safe (wrong)",
        "boards/s"
    );
    for (board, mut set) in sets {
        set.truncate(args.positions);
        let timed = |name: &str, q: Quality, secs: f64| {
            println!(
                "{:<22} {:>9} {:>8} {:>9.5} {:>9.5} {:>9.6} {:>9.2}% {:>14} {:>10.0}",
                format!("{board} {name}"),
                q.positions,
                q.cells,
                q.kl,
                q.cross_entropy,
                q.brier,
                100.0 * q.safest_agrees,
                format!("{} ({})", q.claimed_safe, q.claimed_safe_wrong),
                q.positions as f64 / secs.max(1e-9)
            );
            q
        };
        let t = Instant::now();
        let q = measure(&set, |v| net.probabilities(v));
        let net_q = timed("net", q, t.elapsed().as_secs_f64());
        let t = Instant::now();
        let q = measure(&set, |v| Teacher.estimate(v).p);
        timed("teacher", q, t.elapsed().as_secs_f64());
        let solver = ExactSolver::default();
        let t = Instant::now();
        let q = measure(&set, |v| {
            solver
                .solve(v)
                .map_or_else(|_| vec![0.5; v.cells().len()], |p| p.p)
        });
        timed("exact", q, t.elapsed().as_secs_f64());
        if args.calibration {
            println!("  calibration of the net (predicted bin: cells, mean predicted, mean exact)");
            for (k, (n, p, e)) in net_q.calibration.iter().enumerate() {
                if *n > 0 {
                    println!(
                        "  {:.1}-{:.1}: {n:>8} {p:.4} {e:.4}",
                        k as f64 / 10.0,
                        (k + 1) as f64 / 10.0
                    );
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
