//! `tabula book`: builds a Connect Four opening book with the solver itself.

use std::collections::HashSet;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;
use tabula_core::{ConnectFour, Game};
use tabula_search::{OpeningBook, Solver};

use crate::solve::connect4_geometry;

/// The opening book compiled into the binary (7x6): exact scores of every position up
/// to its depth, made by `tabula book`.
pub const BUILTIN_BOOK: &str = include_str!("../data/connect4-book.txt");

/// Build an opening book: the exact score of every Connect Four position up to a
/// depth (one of each mirror pair), deepest first so that shallower positions are
/// solved with the deeper ones already in the book. Resumable: positions already in
/// the output file are skipped, and each new one is appended as soon as it is solved.
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
    #[arg(long, default_value_t = 256)]
    table_mb: usize,
}

/// The built-in book, for the standard board.
pub fn builtin() -> Result<Arc<OpeningBook>> {
    let book = OpeningBook::parse(tabula_core::connect4::Geometry::STANDARD, BUILTIN_BOOK)
        .context("the built-in opening book")?;
    Ok(Arc::new(book))
}

pub fn run(args: BookArgs) -> Result<ExitCode> {
    let geo = connect4_geometry(&args.game)?;
    if args.depth > 10 {
        anyhow::bail!(
            "--depth {} is too deep: ply 10 alone has millions of positions",
            args.depth
        );
    }
    let existing = match fs::read_to_string(&args.out) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("reading {}", args.out.display())),
    };
    let mut book =
        OpeningBook::parse(geo, &existing).with_context(|| format!("{}", args.out.display()))?;
    // one representative (with its move string) per mirror pair, by ply
    let mut levels: Vec<Vec<(String, ConnectFour)>> =
        vec![vec![(String::new(), ConnectFour::with_geometry(geo))]];
    for _ in 0..args.depth {
        let mut seen = HashSet::new();
        let mut next = Vec::new();
        for (moves, g) in levels.last().into_iter().flatten() {
            for mv in g.legal_moves() {
                let mut child = *g;
                child.play(mv);
                if child.is_terminal() {
                    continue;
                }
                let key = child.key().min(geo.mirror(child.key()));
                if seen.insert(key) {
                    next.push((format!("{moves}{}", mv + 1), child));
                }
            }
        }
        levels.push(next);
    }
    let mut out = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&args.out)
        .with_context(|| format!("opening {}", args.out.display()))?;
    let mut solver = Solver::new(geo, args.table_mb);
    for (ply, level) in levels.iter().enumerate().rev() {
        solver.set_book(Arc::new(book.clone()));
        let todo: Vec<_> = level
            .iter()
            .filter(|(_, g)| book.get(g).is_none())
            .collect();
        eprintln!(
            "ply {ply}: {} positions, {} to solve",
            level.len(),
            todo.len()
        );
        for (moves, g) in todo {
            let start = Instant::now();
            let score = solver.solve(g, false)?;
            book.insert(g, score as i8);
            writeln!(out, "{moves} {score}")?;
            out.flush()?;
            eprintln!("  {moves:<8} {score:>3}  {:.1?}", start.elapsed());
        }
    }
    eprintln!("book: {} positions up to ply {}", book.len(), book.depth());
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tabula_core::connect4::Geometry;

    /// Every book entry above the book's depth must be the negamax of its children's
    /// entries: the book is consistent with itself, and its root with the known
    /// value of Connect Four (score 1: the first player wins with their 21st stone).
    #[test]
    fn the_builtin_book_is_consistent() {
        let book = builtin().unwrap();
        assert_eq!(book.depth(), 2);
        let geo = Geometry::STANDARD;
        let mut checked = 0;
        let mut stack = vec![ConnectFour::with_geometry(geo)];
        while let Some(g) = stack.pop() {
            if g.ply() >= book.depth() {
                continue;
            }
            let Some(score) = book.get(&g) else { continue };
            let cells = geo.cells() as i32;
            let best = g
                .legal_moves()
                .into_iter()
                .map(|mv| {
                    if g.is_winning_move(mv as usize) {
                        (cells + 1 - g.ply() as i32) / 2
                    } else {
                        let mut c = g;
                        c.play(mv);
                        stack.push(c);
                        -book
                            .get(&c)
                            .expect("every child within the depth is in the book")
                    }
                })
                .max()
                .unwrap();
            assert_eq!(score, best, "entry {g}");
            checked += 1;
        }
        assert_eq!(checked, 1 + 7, "the root and its seven children");
        assert_eq!(
            book.get(&ConnectFour::new()),
            Some(1),
            "the first player wins"
        );
    }
}
