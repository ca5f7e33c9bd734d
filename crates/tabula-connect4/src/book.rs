//! A Connect Four opening book: exact scores of every position up to a depth, made by
//! Tabula's own solver (`tabula book`), stored as Pons-style `moves score` lines.
//!
//! Positions are looked up under the smaller of their key and their mirror image's, so
//! one entry serves both. The solver consults the book at every node within its depth,
//! which turns the slow proofs at the start of the game into table look-ups.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use tabula_core::connect4::Geometry;
use tabula_core::{ConnectFour, Game};

use crate::solver::{Solver, SolverError};

/// The opening book compiled in (7x6): exact scores of every position up to its depth,
/// made by `tabula book connect4`.
pub const BUILTIN_BOOK: &str = include_str!("../data/connect4-book.txt");

/// The built-in book, for the standard board (parsed once per process).
pub fn builtin() -> Result<Arc<OpeningBook>, BookError> {
    static BOOK: std::sync::OnceLock<Arc<OpeningBook>> = std::sync::OnceLock::new();
    if let Some(book) = BOOK.get() {
        return Ok(book.clone());
    }
    let book = Arc::new(OpeningBook::parse(Geometry::STANDARD, BUILTIN_BOOK)?);
    Ok(BOOK.get_or_init(|| book).clone())
}

/// Why a book file was refused or could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BookError {
    /// The book file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// What went wrong.
        source: std::io::Error,
    },
    /// The solver refused a position.
    #[error(transparent)]
    Solver(#[from] SolverError),
    /// The solver's table does not fit in memory.
    #[error(transparent)]
    Memory(#[from] crate::table::TableTooLarge),
    /// A depth that would take far too long.
    #[error("depth {0} is too deep: ply 10 alone has millions of positions")]
    TooDeep(usize),
    /// A line that is not `moves score`.
    #[error("book line {line}: {reason}")]
    BadLine {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        reason: String,
    },
}

/// Exact scores of positions, by mirror-canonical key.
#[derive(Clone, Debug)]
pub struct OpeningBook {
    geo: Geometry,
    depth: usize,
    scores: HashMap<u64, i8>,
}

impl OpeningBook {
    /// An empty book for boards of `geo`.
    pub fn new(geo: Geometry) -> Self {
        OpeningBook {
            geo,
            depth: 0,
            scores: HashMap::new(),
        }
    }

    /// Reads `moves score` lines (blank lines and `#` comments are skipped).
    pub fn parse(geo: Geometry, text: &str) -> Result<Self, BookError> {
        let mut book = OpeningBook::new(geo);
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = |reason: String| BookError::BadLine {
                line: i + 1,
                reason,
            };
            let (moves, score) = match line.rsplit_once(char::is_whitespace) {
                Some((m, s)) => (m.trim(), s),
                None => ("", line), // the empty position
            };
            let score: i8 = score
                .parse()
                .map_err(|_| bad(format!("bad score {score:?}")))?;
            let game = ConnectFour::from_moves(geo, moves).map_err(|e| bad(e.to_string()))?;
            book.insert(&game, score);
        }
        Ok(book)
    }

    /// Records the exact score of `game`.
    pub fn insert(&mut self, game: &ConnectFour, score: i8) {
        self.depth = self.depth.max(game.ply());
        self.scores.insert(self.canonical(game.key()), score);
    }

    /// The deepest ply stored.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Number of positions stored.
    pub fn len(&self) -> usize {
        self.scores.len()
    }

    /// Whether the book is empty.
    pub fn is_empty(&self) -> bool {
        self.scores.is_empty()
    }

    /// The board size.
    pub fn geometry(&self) -> Geometry {
        self.geo
    }

    #[inline]
    fn canonical(&self, key: u64) -> u64 {
        key.min(self.geo.mirror(key))
    }

    /// The score of the position with this key (`current + mask`), if stored.
    #[inline]
    pub fn get_key(&self, key: u64) -> Option<i32> {
        self.scores.get(&self.canonical(key)).map(|&s| i32::from(s))
    }

    /// The score of `game`, if stored.
    pub fn get(&self, game: &ConnectFour) -> Option<i32> {
        self.get_key(game.key())
    }
}

/// Builds (or extends) the book in `out` with the exact score of every position up to
/// `depth` plies (one of each mirror pair), deepest first so that shallower positions
/// are solved with the deeper ones already in the book. Resumable: positions already
/// in the file are skipped, and each new one is appended as soon as it is solved.
/// `log` hears one line per level and per solved position. Returns the book.
pub fn build(
    geo: Geometry,
    depth: usize,
    out: &Path,
    table_mb: usize,
    log: &mut dyn FnMut(&str),
) -> Result<OpeningBook, BookError> {
    if depth > 10 {
        return Err(BookError::TooDeep(depth));
    }
    let io = |source| BookError::Io {
        path: out.display().to_string(),
        source,
    };
    let existing = match std::fs::read_to_string(out) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(io(e)),
    };
    let mut book = OpeningBook::parse(geo, &existing)?;
    // one representative (with its move string) per mirror pair, by ply
    let mut levels: Vec<Vec<(String, ConnectFour)>> =
        vec![vec![(String::new(), ConnectFour::with_geometry(geo))]];
    for _ in 0..depth {
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
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(out)
        .map_err(io)?;
    let mut solver = Solver::try_new(geo, table_mb)?;
    for (ply, level) in levels.iter().enumerate().rev() {
        solver.set_book(Arc::new(book.clone()));
        let todo: Vec<_> = level
            .iter()
            .filter(|(_, g)| book.get(g).is_none())
            .collect();
        log(&format!(
            "ply {ply}: {} positions, {} to solve",
            level.len(),
            todo.len()
        ));
        for (moves, g) in todo {
            let start = Instant::now();
            let score = solver.solve(g, false)?;
            book.insert(g, score as i8);
            writeln!(file, "{moves} {score}").map_err(io)?;
            file.flush().map_err(io)?;
            log(&format!("  {moves:<8} {score:>3}  {:.1?}", start.elapsed()));
        }
    }
    Ok(book)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn build_is_resumable_and_agrees_with_the_solver() {
        let geo = Geometry::new(5, 4).unwrap();
        let dir = std::env::temp_dir().join(format!("tabula-book-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("book.txt");
        let _ = std::fs::remove_file(&out);
        let mut lines = 0;
        let book = build(geo, 2, &out, 4, &mut |_| lines += 1).unwrap();
        let written = std::fs::read_to_string(&out).unwrap().lines().count();
        assert_eq!(written, book.len());
        // a second run solves nothing new and appends nothing
        let again = build(geo, 2, &out, 4, &mut |_| {}).unwrap();
        assert_eq!(again.len(), book.len());
        assert_eq!(
            std::fs::read_to_string(&out).unwrap().lines().count(),
            written
        );
        let mut solver = Solver::new(geo, 4);
        let root = ConnectFour::with_geometry(geo);
        assert_eq!(book.get(&root), Some(solver.solve(&root, false).unwrap()));
        assert!(matches!(
            build(geo, 11, &out, 4, &mut |_| {}),
            Err(BookError::TooDeep(11))
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn parse_lookup_and_mirror() {
        let geo = Geometry::STANDARD;
        let book = OpeningBook::parse(geo, "# test\n1\t-5\n4455 18\n44 many\n").unwrap_err();
        assert!(book.to_string().contains("line 4"), "{book}");
        let book = OpeningBook::parse(geo, "# test\n1 -5\n4455 18\n").unwrap();
        assert_eq!(book.len(), 2);
        assert_eq!(book.depth(), 4);
        let g = |m: &str| ConnectFour::from_moves(geo, m).unwrap();
        assert_eq!(book.get(&g("1")), Some(-5));
        assert_eq!(book.get(&g("7")), Some(-5), "mirror image");
        assert_eq!(book.get(&g("4433")), Some(18), "mirror of 4455");
        assert_eq!(book.get(&g("2")), None);
        assert!(OpeningBook::parse(geo, "48 1\n").is_err());
        assert!(OpeningBook::parse(geo, "44 x\n").is_err());
    }
}
