//! `tabula solve connect4`: scores of positions, in the format of Pons' `c4solver`.

use std::any::Any;
use std::io::{self, BufRead, Write};
use std::process::ExitCode;

use anyhow::{bail, Result};
use clap::Args;
use tabula_core::connect4::Geometry;

use tabula_core::registry::{self, GameVisitor};
use tabula_core::{ConnectFour, Game};
use tabula_search::Solver;

/// Solve Connect Four positions.
///
/// Each position is a move string of 1-based columns (`4455`), from the arguments or,
/// when there are none, from standard input one per line. A line may carry a second
/// field, the expected score (as in Pons' test sets); a mismatch is reported on stderr.
/// Prints `moves score`, or with --analyze `moves` and one score per column (-1000 for
/// a full column). Scores are from the side to move: 22 minus the winner's stone count
/// on 7x6, negative for a loss, 0 for a draw. Invalid lines are reported on stderr and
/// skipped; the exit status is 1 if any line was invalid or mismatched.
#[derive(Args)]
pub struct SolveArgs {
    /// The game: connect4 or connect4:WxH (e.g. connect4:6x5).
    game: String,
    /// Positions to solve (default: read standard input). `""` is the empty board.
    positions: Vec<String>,
    /// Only win (1), draw (0) or loss (-1).
    #[arg(long)]
    weak: bool,
    /// Score every column instead of the position.
    #[arg(long)]
    analyze: bool,
    /// Transposition table size in MiB.
    #[arg(long, default_value_t = Solver::DEFAULT_TABLE_MB)]
    table_mb: usize,
    /// Do not use the built-in opening book (7x6): prove every score by search.
    #[arg(long)]
    no_book: bool,
}

/// Finds the Connect Four board in a game built by the registry.
struct Connect4Board;

impl GameVisitor for Connect4Board {
    type Output = Option<Geometry>;
    fn visit<G: Game>(self, game: G) -> Option<Geometry> {
        (&game as &dyn Any)
            .downcast_ref::<ConnectFour>()
            .map(|c4| c4.geometry())
    }
}

/// The board size named by a `connect4[:WxH]` game spec (names and sizes are read
/// by the game registry, like every other command's).
pub fn connect4_geometry(spec: &str) -> Result<Geometry> {
    match registry::visit(spec, Connect4Board)? {
        Some(geo) => Ok(geo),
        None => bail!("the solver plays only connect4 (got {spec:?})"),
    }
}

/// A line of input: the position and, if given, the expected score.
fn parse_line(geo: Geometry, line: &str) -> Result<(String, ConnectFour, Option<i32>)> {
    let mut fields = line.split_whitespace();
    let moves = fields.next().unwrap_or("").to_string();
    let expected = match fields.next() {
        None => None,
        Some(f) => match f.parse::<i32>() {
            Ok(v) => Some(v),
            Err(_) => bail!("second field {f:?} is not a score"),
        },
    };
    if let Some(extra) = fields.next() {
        bail!("unexpected field {extra:?}");
    }
    let game = ConnectFour::from_moves(geo, &moves)?;
    Ok((moves, game, expected))
}

pub fn run(args: SolveArgs) -> Result<ExitCode> {
    let geo = connect4_geometry(&args.game)?;
    let mut solver = Solver::new(geo, args.table_mb);
    if !args.no_book {
        solver.set_book(crate::book::builtin()?);
    }
    let mut out = io::stdout().lock();
    let mut failures = 0usize;
    let mut handle = |n: usize, line: &str, out: &mut dyn Write| -> Result<()> {
        let (moves, game, expected) = match parse_line(geo, line) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("line {n}: invalid position {:?}: {e:#}", line.trim());
                failures += 1;
                return Ok(());
            }
        };
        if args.analyze {
            match solver.analyze(&game, args.weak) {
                Ok(scores) => {
                    let s: Vec<String> = scores.iter().map(|s| s.to_string()).collect();
                    writeln!(out, "{moves} {}", s.join(" "))?;
                }
                Err(e) => {
                    eprintln!("line {n}: cannot solve {moves:?}: {e}");
                    failures += 1;
                }
            }
        } else {
            match solver.solve(&game, args.weak) {
                Ok(score) => {
                    writeln!(out, "{moves} {score}")?;
                    if let Some(want) = expected {
                        let want = if args.weak { want.signum() } else { want };
                        if want != score {
                            eprintln!("line {n}: {moves}: expected {want}, solved {score}");
                            failures += 1;
                        }
                    }
                }
                Err(e) => {
                    eprintln!("line {n}: cannot solve {moves:?}: {e}");
                    failures += 1;
                }
            }
        }
        out.flush()?;
        Ok(())
    };
    if args.positions.is_empty() {
        for (i, line) in io::stdin().lock().lines().enumerate() {
            let line = line?;
            if line.trim().is_empty() {
                continue;
            }
            handle(i + 1, &line, &mut out)?;
        }
    } else {
        for (i, p) in args.positions.iter().enumerate() {
            handle(i + 1, p, &mut out)?;
        }
    }
    if failures > 0 {
        eprintln!("{failures} line(s) failed");
        Ok(ExitCode::from(1))
    } else {
        Ok(ExitCode::SUCCESS)
    }
}
