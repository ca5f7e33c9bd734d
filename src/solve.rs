//! `tabula solve connect4`: scores of positions by the game's exact solver, in the
//! format of Pons' `c4solver` for Connect Four.

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::{bail, Result};
use clap::Args;
use tabula_games::registry::{self, GameVisitor};
use tabula_games::Capabilities;
use tabula_search::exact::INVALID_MOVE;

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
    #[arg(long, default_value_t = 64, value_parser = crate::input::count(1, crate::input::MAX_TABLE_MB))]
    table_mb: usize,
    /// Do not use the built-in opening book (7x6): prove every score by search.
    #[arg(long)]
    no_book: bool,
}

/// A line of input: the position's moves and, if given, the expected score.
fn parse_line(line: &str) -> Result<(String, Option<i32>)> {
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
    Ok((moves, expected))
}

struct Solve<'a>(&'a SolveArgs);

impl GameVisitor for Solve<'_> {
    type Output = Result<ExitCode>;

    fn visit<G: Capabilities>(self, start: G) -> Result<ExitCode> {
        let args = self.0;
        let Some(solver) = start.exact_solver(args.table_mb, !args.no_book) else {
            bail!("{} has no exact solver (connect4 has one)", start.name());
        };
        let mut solver = solver?;
        let mut out = io::stdout().lock();
        let mut failures = 0usize;
        let mut bad_lines = 0usize;
        let mut handle = |n: usize, line: &str, out: &mut dyn Write| -> Result<()> {
            let parsed = parse_line(line).and_then(|(moves, expected)| {
                let mut game = start.clone();
                crate::evaluators::play_moves(&mut game, &moves)?;
                Ok((moves, game, expected))
            });
            let (moves, game, expected) = match parsed {
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
                        let s: Vec<String> = scores
                            .iter()
                            .map(|s| s.unwrap_or(INVALID_MOVE).to_string())
                            .collect();
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
            for line in crate::input::lines(io::stdin().lock()) {
                match line? {
                    (_, Some(line)) if line.trim().is_empty() => {}
                    (n, Some(line)) => handle(n, &line, &mut out)?,
                    (n, None) => {
                        eprintln!("line {n}: not UTF-8");
                        bad_lines += 1;
                    }
                }
            }
        } else {
            for (i, p) in args.positions.iter().enumerate() {
                handle(i + 1, p, &mut out)?;
            }
        }
        let failures = failures + bad_lines;
        if failures > 0 {
            eprintln!("{failures} line(s) failed");
            Ok(ExitCode::from(1))
        } else {
            Ok(ExitCode::SUCCESS)
        }
    }
}

pub fn run(args: SolveArgs) -> Result<ExitCode> {
    registry::visit(&args.game, Solve(&args))?
}
