//! `tabula book`: builds an opening book with the game's own solver (Connect Four).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Result};
use clap::Args;
use tabula_games::registry::{self, GameVisitor};
use tabula_games::Capabilities;

/// Build an opening book: the exact score of every position up to a depth (one of
/// each mirror pair), deepest first so that shallower positions are solved with the
/// deeper ones already in the book. Resumable: positions already in the output file
/// are skipped, and each new one is appended as soon as it is solved.
#[derive(Args)]
pub struct BookArgs {
    /// The game: connect4 or connect4:WxH.
    #[arg(default_value = "connect4")]
    game: String,
    /// Deepest ply to include.
    #[arg(long)]
    depth: usize,
    /// The book file (`moves score` lines).
    #[arg(long)]
    out: PathBuf,
    /// Transposition table size in MiB.
    #[arg(long, default_value_t = 256, value_parser = crate::input::count(1, crate::input::MAX_TABLE_MB))]
    table_mb: usize,
}

struct Build<'a>(&'a BookArgs);

impl GameVisitor for Build<'_> {
    type Output = Result<ExitCode>;

    fn visit<G: Capabilities>(self, game: G) -> Result<ExitCode> {
        let a = self.0;
        let mut log = |line: &str| eprintln!("{line}");
        let Some(built) = game.build_book(a.depth, &a.out, a.table_mb, &mut log) else {
            bail!("{} has no opening book to build", game.name());
        };
        let positions = built?;
        eprintln!("book: {positions} positions up to ply {}", a.depth);
        Ok(ExitCode::SUCCESS)
    }
}

pub fn run(args: BookArgs) -> Result<ExitCode> {
    registry::visit(&args.game, Build(&args))?
}
