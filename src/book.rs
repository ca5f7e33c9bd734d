//! `tabula book`: builds an opening book with the game's own solver (Connect Four).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Result};
use clap::Args;
use tabula_games::registry::{self, GameVisitor};
use tabula_games::Capabilities;

/// Build the perfect player's opening book: every position to a depth where the
/// perfect player (either colour, against any replies) is to move, with the exact
/// score of each of its moves, so that `play` and `solve --analyze` answer there at
/// once. Built ply by ply; resumable: scores already in the output file are reused,
/// each new one is appended as soon as it is solved, and an interrupted build is
/// complete to the last finished ply. The built-in book was made this way
/// (crates/tabula-connect4/data/connect4-book.txt.gz; its header gives the command).
#[derive(Args)]
pub struct BookArgs {
    /// The game: connect4 or connect4:WxH.
    #[arg(default_value = "connect4")]
    game: String,
    /// Deepest ply at which the perfect player's turns are covered.
    #[arg(long)]
    depth: usize,
    /// The book file (`moves score` lines).
    #[arg(long)]
    out: PathBuf,
    /// Transposition table size in MiB.
    #[arg(long, default_value_t = 256, value_parser = crate::input::count(1, crate::input::MAX_TABLE_MB))]
    table_mb: usize,
    /// Solvers working at once (each with its own table).
    #[arg(long, default_value_t = 1, value_parser = crate::input::count(1, 256))]
    threads: usize,
}

struct Build<'a>(&'a BookArgs);

impl GameVisitor for Build<'_> {
    type Output = Result<ExitCode>;

    fn visit<G: Capabilities>(self, game: G) -> Result<ExitCode> {
        let a = self.0;
        let log = |line: &str| eprintln!("{line}");
        let Some(built) = game.build_book(a.depth, &a.out, a.table_mb, a.threads, &log) else {
            bail!("{} has no opening book to build", game.name());
        };
        let positions = built?;
        eprintln!(
            "book: {positions} positions, the player's turns covered to ply {}",
            a.depth
        );
        Ok(ExitCode::SUCCESS)
    }
}

pub fn run(args: BookArgs) -> Result<ExitCode> {
    registry::visit(&args.game, Build(&args))?
}
