//! `tabula selfplay` (a self-play worker of a shared run) and `tabula copy-run` (a
//! shared run's objects from one store to another).

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use tabula_games::registry::{self, GameVisitor};
use tabula_games::Capabilities;
use tabula_zero::shared::{default_worker_id, run_worker, wait_for_run, WorkerOptions};
use tabula_zero::store::RunStore;

use crate::train::Bars;

/// Play self-play games for a shared run and upload them, with the newest network the
/// trainer has published, until the trainer finishes the run (or `--games` are played).
///
/// Start any number of workers, on any machines that reach the run's store:
/// `tabula selfplay --run s3://bucket/run` (with AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID,
/// AWS_SECRET_ACCESS_KEY, AWS_REGION, and AWS_ALLOW_HTTP=true for a plain-HTTP endpoint).
/// The game and the search settings come from the run's configuration. A killed worker
/// loses only the games it was playing; start it again at any time.
#[derive(Args)]
pub struct SelfPlayArgs {
    /// The shared run: s3://BUCKET/PREFIX, file:///DIR or a directory.
    #[arg(long)]
    run: String,
    /// This worker's name in game files and reports (default: host and process id).
    #[arg(long)]
    worker_id: Option<String>,
    /// Stop after this many games (default: when the trainer finishes the run).
    #[arg(long, value_parser = crate::input::count(1, 1_000_000_000))]
    games: Option<usize>,
    /// Self-play threads (default: the run's setting, one per core when 0).
    #[arg(long, value_parser = crate::input::count(1, 1024))]
    threads: Option<usize>,
    /// How long to wait for the run's trainer to create it, and for a failing store to
    /// recover, in seconds.
    #[arg(long, default_value_t = 300.0, value_parser = crate::input::seconds(0.0, 1e7))]
    wait: f64,
    /// No progress bars (log lines only).
    #[arg(long)]
    quiet: bool,
}

struct Worker<'a> {
    args: &'a SelfPlayArgs,
    store: &'a RunStore,
}

impl GameVisitor for Worker<'_> {
    type Output = Result<()>;

    fn visit<G: Capabilities>(self, game: G) -> Result<()> {
        let args = self.args;
        let options = WorkerOptions {
            id: args.worker_id.clone().unwrap_or_else(default_worker_id),
            games: args.games,
            threads: args.threads,
            wait: Duration::from_secs_f64(args.wait),
        };
        let progress = Bars::new(args.quiet);
        tabula_zero::Progress::start(&progress, "self-play", args.games.unwrap_or(0) as u64);
        let report = run_worker(self.store, game, &options, &progress);
        tabula_zero::Progress::finish(&progress);
        let report = report?;
        eprintln!(
            "worker {}: {} games uploaded ({} bytes, {:.0} bytes/game), {:.2} games/s; last generation {}",
            report.worker,
            report.games,
            report.bytes,
            report.bytes as f64 / report.games.max(1) as f64,
            report.games_per_s,
            report.generation
        );
        Ok(())
    }
}

pub fn run(args: SelfPlayArgs) -> Result<ExitCode> {
    let store = RunStore::open(&args.run)?;
    let game = wait_for_run(&store, Duration::from_secs_f64(args.wait))?;
    registry::visit(
        &game,
        Worker {
            args: &args,
            store: &store,
        },
    )
    .with_context(|| format!("the run trains {game:?}"))??;
    Ok(ExitCode::SUCCESS)
}

/// Copy every object of a run from one store to another (an S3 bucket to a local
/// directory, say), to resume it there: `tabula copy-run s3://bucket/run runs/local`,
/// then `tabula train GAME --run runs/local --distributed`. The destination must be empty.
#[derive(Args)]
pub struct CopyRunArgs {
    /// Where the run is (s3://BUCKET/PREFIX, file:///DIR or a directory).
    from: String,
    /// Where to copy it (an empty location).
    to: String,
}

pub fn copy_run(args: CopyRunArgs) -> Result<ExitCode> {
    let from = RunStore::open(&args.from)?;
    let to = RunStore::open(&args.to)?;
    let n = from.copy_to(&to)?;
    println!("copied {n} objects from {} to {}", args.from, args.to);
    Ok(ExitCode::SUCCESS)
}
