//! `tabula go-patterns`: learns the heavy playouts' 3x3 pattern weights from games the
//! engine plays against itself, and writes them in the text format of
//! `tabula_core::go::patterns` (the shipped file is `crates/tabula-core/data/go-patterns.txt`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use tabula_search::go_patterns::{count_patterns, SelfPlay};

/// Learn 3x3 pattern weights for Go's heavy playouts by self-play: the engine, with the
/// knowledge it has (`--patterns`, default the shipped weights), plays itself; each
/// pattern's weight is how much more often than average its point was chosen.
#[derive(Args)]
pub struct GoPatternsArgs {
    /// Where to write the weights (refused if the file exists, unless --force).
    #[arg(long)]
    out: PathBuf,
    /// Replace --out if it exists.
    #[arg(long)]
    force: bool,
    /// Board size of the games.
    #[arg(long, default_value_t = 9, value_parser = crate::input::count(5, 19))]
    size: usize,
    /// Games to play.
    #[arg(long, default_value_t = 200, value_parser = crate::input::count(1, 1_000_000))]
    games: usize,
    /// UCT simulations per move.
    #[arg(long, default_value_t = 1000, value_parser = crate::input::count(1, 10_000_000))]
    sims: usize,
    /// Worker threads.
    #[arg(long, default_value_t = 2, value_parser = crate::input::count(1, 1024))]
    threads: usize,
    /// Seed of the first game.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The weights the engine plays with while learning (default: the shipped ones).
    #[arg(long)]
    patterns: Option<PathBuf>,
    /// Leave out patterns seen as a candidate fewer times than this (they keep weight 1).
    #[arg(long, default_value_t = 20)]
    min_seen: u64,
}

pub fn run(args: GoPatternsArgs) -> Result<ExitCode> {
    if args.out.exists() && !args.force {
        bail!("{} exists; pass --force to replace it", args.out.display());
    }
    let knowledge = crate::gtp::knowledge("heavy", true, args.patterns.as_deref())?;
    let plan = SelfPlay {
        size: args.size,
        games: args.games,
        simulations: args.sims,
        threads: args.threads,
        seed: args.seed,
    };
    let bar = ProgressBar::new(args.games as u64);
    bar.set_style(
        ProgressStyle::with_template("self-play [{bar:30}] {pos}/{len} games, eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let start = Instant::now();
    let counts = count_patterns(&plan, &knowledge, &|| bar.inc(1));
    bar.finish_and_clear();
    let weights = counts.gammas(args.min_seen);
    let header = format!(
        "3x3 pattern gammas for Go's heavy playouts, learned by self-play.\n\
         Made by: tabula go-patterns --size {} --games {} --sims {} --seed {} --min-seen {}{}\n\
         {} patterns, {:.0} s.",
        args.size,
        args.games,
        args.sims,
        args.seed,
        args.min_seen,
        args.patterns
            .as_ref()
            .map_or(String::new(), |p| format!(" --patterns {}", p.display())),
        weights.len(),
        start.elapsed().as_secs_f64()
    );
    std::fs::write(&args.out, weights.to_text(&header))
        .with_context(|| format!("writing {}", args.out.display()))?;
    println!(
        "{} patterns from {} games in {:.0} s → {}",
        weights.len(),
        args.games,
        start.elapsed().as_secs_f64(),
        args.out.display()
    );
    Ok(ExitCode::SUCCESS)
}
