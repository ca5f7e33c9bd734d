//! `tabula play`: a person against the perfect player in the terminal.

use std::any::Any;
use std::io::{self, BufRead, Write};
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, ValueEnum};
use tabula_core::registry::{self, GameVisitor};
use tabula_core::{ConnectFour, Game, Outcome, Player};
use tabula_search::agent::{Agent, NegamaxAgent, SolverAgent};

/// Which side the person plays.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Side {
    /// Move first (X).
    First,
    /// Move second (O).
    Second,
}

/// Play in the terminal against the perfect player.
///
/// Type a move when asked (tic-tac-toe: the cell's number as drawn; Connect Four: the
/// column number), `help` for help, `quit` to stop.
#[derive(Args)]
pub struct PlayArgs {
    /// The game: tictactoe, connect4 or connect4:WxH.
    game: String,
    /// Which side you play.
    #[arg(long, value_enum, default_value = "first")]
    you: Side,
    /// Transposition table of the Connect Four solver, in MiB.
    #[arg(long, default_value_t = 256)]
    table_mb: usize,
}

/// The best player Tabula has for `game`: the dedicated solver for Connect Four,
/// exhaustive negamax for any other game.
fn perfect_agent<G: Game>(game: &G, table_mb: usize) -> Box<dyn Agent<G>> {
    if let Some(c4) = (game as &dyn Any).downcast_ref::<ConnectFour>() {
        let mut solver_agent = SolverAgent::new(c4.geometry(), table_mb);
        if let Ok(book) = crate::book::builtin() {
            solver_agent.set_book(book);
        }
        let agent: Box<dyn Agent<ConnectFour>> = Box::new(solver_agent);
        // G is ConnectFour here, so the downcast succeeds.
        if let Ok(agent) = (Box::new(agent) as Box<dyn Any>).downcast::<Box<dyn Agent<G>>>() {
            return *agent;
        }
    }
    Box::new(NegamaxAgent::new(None))
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
}

impl GameVisitor for Play {
    type Output = Result<()>;

    fn visit<G: Game>(self, mut game: G) -> Result<()> {
        if game.name().starts_with("go:") || game.name() == "mini-go" {
            anyhow::bail!(
                "{} has no opponent here yet: exhaustive search cannot play Go (a Monte-Carlo player and a GTP engine are planned)",
                game.name()
            );
        }
        let stdin = io::stdin();
        let mut lines = stdin.lock().lines();
        let mut out = io::stdout();
        let mut ai = perfect_agent(&game, self.table_mb);
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
                if game.ply() < 12 && game.name() == "connect4" {
                    writeln!(
                        out,
                        "AI is thinking (early 7x6 positions can take a minute to prove)..."
                    )?;
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
        },
    )??;
    Ok(ExitCode::SUCCESS)
}
