//! `tabula play`: a person against the perfect player in the terminal.

use std::io::{self, BufRead, Write};
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, ValueEnum};
use tabula_core::{Outcome, Player};
use tabula_games::registry::{self, GameVisitor};
use tabula_games::Capabilities;
use tabula_search::agent::{Agent, MctsAgent};

/// Which side the person plays.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Side {
    /// Move first (X).
    First,
    /// Move second (O).
    Second,
}

/// Which AI plays against you.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum Opponent {
    /// The game's perfect player: the Connect Four solver, exhaustive negamax for
    /// tic-tac-toe (Go has none).
    Perfect,
    /// Monte-Carlo tree search guided by a network (`--model`).
    Mcts,
}

/// Play in the terminal against the perfect player or MCTS.
///
/// Type a move when asked (tic-tac-toe: the cell's number as drawn; Connect Four: the
/// column number; Go: a point such as D4, or pass), `help` for help, `quit` to stop.
#[derive(Args)]
pub struct PlayArgs {
    /// The game: tictactoe, connect4[:WxH], go[:N] or mini-go (Go needs --player mcts).
    game: String,
    /// Which side you play.
    #[arg(long, value_enum, default_value = "first")]
    you: Side,
    /// The AI: perfect (exact search) or mcts (network-guided search).
    #[arg(long, value_enum, default_value = "perfect")]
    player: Opponent,
    #[arg(long, help = crate::evaluators::MODEL_HELP)]
    model: Option<String>,
    /// Simulations per move of the MCTS player.
    #[arg(long, default_value_t = 800, value_parser = crate::input::count(1, 100_000_000))]
    sims: usize,
    #[command(flatten)]
    search: crate::evaluators::SearchFlags,
    #[command(flatten)]
    mix: crate::evaluators::MixFlags,
    /// Transposition table of the perfect player (the Connect Four solver), in MiB.
    #[arg(long, default_value_t = 256, value_parser = crate::input::count(1, crate::input::MAX_TABLE_MB))]
    table_mb: usize,
}

fn side_name(p: Player) -> &'static str {
    match p {
        Player::First => "X",
        Player::Second => "O",
    }
}

struct Play {
    you: Player,
    table_mb: usize,
    player: Opponent,
    model: Option<String>,
    sims: usize,
    search: crate::evaluators::SearchFlags,
    mix: crate::evaluators::MixFlags,
}

impl GameVisitor for Play {
    type Output = Result<()>;

    fn visit<G: Capabilities>(self, mut game: G) -> Result<()> {
        let stdin = io::stdin();
        let mut lines = stdin.lock().lines();
        let mut out = io::stdout();
        let mut ai = match self.player {
            Opponent::Perfect => game.perfect_agent(self.table_mb).ok_or_else(|| {
                anyhow::anyhow!(
                    "{} has no perfect player: use --player mcts (for Go, also `tabula gtp` with a Go GUI)",
                    game.name()
                )
            })??,
            Opponent::Mcts => {
                let search = self.search.settings(&game)?;
                let (evaluator, label) =
                    crate::evaluators::evaluator(self.model.as_deref(), &game, &search, 42)?;
                let (evaluator, label) = self.mix.mix(evaluator, label, game.uct_knowledge(), 42);
                writeln!(out, "MCTS evaluator: {label}")?;
                let config = search.mcts(self.sims, 42);
                Box::new(MctsAgent::new(config, evaluator, "MCTS")) as Box<dyn Agent<G>>
            }
        };
        writeln!(
            out,
            "{}: you play {} against the {} player. Type a move, 'help' or 'quit'.",
            game.name(),
            side_name(self.you),
            ai.name()
        )?;
        loop {
            writeln!(out, "\n{game}")?;
            if let Some(o) = game.outcome() {
                let msg = match o {
                    Outcome::Draw => "Draw.".to_string(),
                    Outcome::Win(p) if p == self.you => "You win!".to_string(),
                    Outcome::Win(p) => format!("{} wins.", side_name(p)),
                };
                writeln!(out, "Game over: {msg}")?;
                return Ok(());
            }
            if game.to_move() == self.you {
                write!(out, "Your move ({}): ", side_name(self.you))?;
                out.flush()?;
                let Some(line) = lines.next() else {
                    writeln!(out, "\n(end of input)")?;
                    return Ok(());
                };
                let line = line?;
                let text = line.trim();
                match text {
                    "" => continue,
                    "quit" | "exit" | "q" => return Ok(()),
                    "help" | "?" => {
                        let legal: Vec<String> = game
                            .legal_moves()
                            .into_iter()
                            .map(|m| game.format_move(m))
                            .collect();
                        writeln!(out, "Legal moves: {}", legal.join(" "))?;
                        continue;
                    }
                    _ => {}
                }
                if let Err(e) = game.play_text(text) {
                    writeln!(out, "{e}. Try again ('help' lists the legal moves).")?;
                }
            } else {
                if let Some(note) = ai.thinking_note(&game) {
                    writeln!(out, "{note}")?;
                    out.flush()?;
                }
                let Some(choice) = ai.choose(&game) else {
                    anyhow::bail!("the AI found no move in a position that is not over");
                };
                writeln!(
                    out,
                    "AI ({}) plays {}   [evaluation for the AI: {}]",
                    side_name(game.to_move()),
                    game.format_move(choice.mv),
                    choice.evaluation
                )?;
                game.try_play(choice.mv)?;
            }
        }
    }
}

pub fn run(args: PlayArgs) -> Result<ExitCode> {
    let you = match args.you {
        Side::First => Player::First,
        Side::Second => Player::Second,
    };
    registry::visit(
        &args.game,
        Play {
            you,
            table_mb: args.table_mb,
            player: args.player,
            model: args.model,
            sims: args.sims,
            search: args.search,
            mix: args.mix,
        },
    )??;
    Ok(ExitCode::SUCCESS)
}
