//! `tabula`: the command line of the Tabula game-AI engine.
//!
//! Each subcommand lives in its own module; they call the library crates and own only
//! input, output and error reporting.

mod analysis_engine;
mod analyze;
mod arena;
mod bench;
mod bench_nn;
mod book;
mod evaluators;
mod go_patterns;
mod gtp;
mod gtp_analysis;
mod input;
mod matches;
mod mines;
mod mines_train;
mod perft;
mod play;
mod selfplay;
mod serve;
mod solve;
mod train;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Tabula: play against strong game AI, solve positions, and look inside the search.
#[derive(Parser)]
#[command(name = "tabula", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Play a game in the terminal against the perfect player or MCTS.
    Play(play::PlayArgs),
    /// Run MCTS on a position and show root visits and the top moves (seed 000's table).
    Analyze(analyze::AnalyzeArgs),
    /// Train a network from self-play (AlphaZero) in a resumable run directory.
    Train(train::TrainArgs),
    /// Play self-play games for a shared run (object store) and upload them.
    Selfplay(selfplay::SelfPlayArgs),
    /// Copy a shared run's objects to another store or directory (to resume it there).
    CopyRun(selfplay::CopyRunArgs),
    /// Draw a training run's learning curves as an SVG.
    Plot(train::PlotArgs),
    /// Measure a network's share of optimal moves against the exact solver.
    Accuracy(train::AccuracyArgs),
    /// Match two players (minimax, solver, mcts with a model, random) and rate them.
    Arena(arena::ArenaArgs),
    /// Solve Connect Four positions given as move strings (Pascal Pons' format).
    Solve(solve::SolveArgs),
    /// Count move sequences and distinct positions by ply (checks a game's rules).
    Perft(perft::PerftArgs),
    /// Measure speed: the solver, playouts, network inference, network-guided MCTS.
    Bench(bench::BenchArgs),
    /// Run a Go engine speaking GTP v2 on standard input and output.
    Gtp(gtp::GtpArgs),
    /// Answer KataGo-style JSON analysis queries on standard input (KaTrain, scripts; any game).
    Analysis(analysis_engine::AnalysisArgs),
    /// Play Go matches between two GTP engines with a referee (e.g. against GnuGo).
    Match(matches::MatchArgs),
    /// Learn the Go playouts' 3x3 pattern weights from the engine's own games.
    GoPatterns(go_patterns::GoPatternsArgs),
    /// Build a Connect Four opening book with the solver.
    Book(book::BookArgs),
    /// Minesweeper: play, solve a saved position, benchmark the agent.
    Mines(mines::MinesArgs),
    /// Serve the web app: play, analyse live, Minesweeper overlays, training curves.
    Serve(serve::ServeArgs),
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Play(a) => play::run(a),
        Command::Analyze(a) => analyze::run(a),
        Command::Train(a) => train::run(a),
        Command::Selfplay(a) => selfplay::run(a),
        Command::CopyRun(a) => selfplay::copy_run(a),
        Command::Plot(a) => train::plot(a),
        Command::Accuracy(a) => train::accuracy(a),
        Command::Arena(a) => arena::run(a),
        Command::Solve(a) => solve::run(a),
        Command::Perft(a) => perft::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Mines(a) => mines::run(a),
        Command::Book(a) => book::run(a),
        Command::Gtp(a) => gtp::run(a),
        Command::Analysis(a) => analysis_engine::run(a),
        Command::Match(a) => matches::run(a),
        Command::GoPatterns(a) => go_patterns::run(a),
        Command::Serve(a) => serve::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
