//! `tabula perft`: node counts by ply for any game.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use clap::Args;
use tabula_games::registry::{self, GameVisitor};
use tabula_games::Capabilities;
use tabula_search::perft::perft;

/// Count move sequences and distinct positions by ply.
#[derive(Args)]
pub struct PerftArgs {
    /// The game: tictactoe, connect4 or connect4:WxH (e.g. connect4:6x5).
    game: String,
    /// How many plies deep to count.
    depth: usize,
}

/// Memory budget for one ply, as positions times board size: a ply may hold
/// `BUDGET / action_count` positions (states grow with the board; a Go 19x19 state is
/// a few kilobytes).
const BUDGET: usize = 50_000_000;

struct Perft(usize);

impl GameVisitor for Perft {
    type Output = ();
    fn visit<G: Capabilities>(self, game: G) {
        let start = Instant::now();
        let max_positions = BUDGET / game.action_count().max(1);
        let rows = perft(&game, self.0, max_positions);
        println!(
            "{:>4} {:>14} {:>12} {:>10}",
            "ply", "nodes", "positions", "finished"
        );
        for r in &rows {
            println!(
                "{:>4} {:>14} {:>12} {:>10}",
                r.ply, r.nodes, r.positions, r.terminal
            );
        }
        if rows.len() <= self.0 && rows.last().is_some_and(|r| r.positions > 0) {
            println!(
                "stopped: ply {} would hold more than {max_positions} positions",
                rows.len()
            );
        }
        let total: u64 = rows.iter().map(|r| r.positions).sum();
        println!(
            "{} distinct positions in plies 0-{} ({:.2?})",
            total,
            rows.last().map_or(0, |r| r.ply),
            start.elapsed()
        );
    }
}

pub fn run(args: PerftArgs) -> Result<ExitCode> {
    registry::visit(&args.game, Perft(args.depth))?;
    Ok(ExitCode::SUCCESS)
}
