//! A Connect Four opening book: the perfect player's book, made by Tabula's own solver
//! (`tabula book`), stored as Pons-style `moves score` lines.
//!
//! It holds every position the perfect player can face to some depth, playing either
//! colour against any replies, with the exact score of each of its moves there
//! ([`grow`]), so that the player answers at once and an analysis of every column is a
//! look-up all through the opening, where proofs take seconds to minutes. Positions are
//! looked up under the smaller of their key and their mirror image's, so one entry
//! serves both. The solver consults the book at every node within its depth.

use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tabula_core::connect4::Geometry;
use tabula_core::{ConnectFour, Game};

use crate::solver::{Solver, SolverError};

/// The opening book compiled in (7x6), gzip'd: exact scores of every position the
/// perfect player can meet to its depth, made by `tabula book connect4` and stored as
/// `gzip -9n` of the text (to extend it: `gunzip -k`, grow, `gzip -9nf`).
const BUILTIN_BOOK_GZ: &[u8] = include_bytes!("../data/connect4-book.txt.gz");

/// The text of the built-in book (unpacked once per process).
pub fn builtin_text() -> Result<&'static str, BookError> {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    if let Some(text) = TEXT.get() {
        return Ok(text);
    }
    let mut text = String::new();
    flate2::read::GzDecoder::new(BUILTIN_BOOK_GZ)
        .read_to_string(&mut text)
        .map_err(|source| BookError::Io {
            path: "the built-in book".into(),
            source,
        })?;
    Ok(TEXT.get_or_init(|| text))
}

/// The built-in book, for the standard board (parsed once per process).
pub fn builtin() -> Result<Arc<OpeningBook>, BookError> {
    static BOOK: std::sync::OnceLock<Arc<OpeningBook>> = std::sync::OnceLock::new();
    if let Some(book) = BOOK.get() {
        return Ok(book.clone());
    }
    let book = Arc::new(OpeningBook::parse(Geometry::STANDARD, builtin_text()?)?);
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
    #[error(
        "depth {0} is too deep: the book grows sevenfold every two plies (at most {MAX_DEPTH})"
    )]
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

    /// The perfect player's move in `game` and the position's score, when the book
    /// holds the score of every move: the first optimal column from the centre out,
    /// with left and right read in the orientation the book stores (the smaller key of
    /// the mirror pair), so that mirror images get mirror-image moves and one stored
    /// line of play serves both.
    pub fn best_move(&self, game: &ConnectFour) -> Option<(u8, i32)> {
        if game.geometry() != self.geo || game.is_terminal() {
            return None;
        }
        let w = self.geo.width();
        let cells = self.geo.cells() as i32;
        let flip = game.key() > self.geo.mirror(game.key());
        let mut best: Option<(u8, i32)> = None;
        for i in 0..w {
            // centre outwards, left first: 3 2 4 1 5 0 6 on seven columns
            let c = if i % 2 == 1 {
                w / 2 - i.div_ceil(2)
            } else {
                w / 2 + i / 2
            };
            let col = if flip { w - 1 - c } else { c };
            if !game.can_play(col) {
                continue;
            }
            let score = if game.is_winning_move(col) {
                (cells + 1 - game.ply() as i32) / 2
            } else {
                let mut child = *game;
                child.play(col as u8);
                if child.is_terminal() {
                    0 // the board is full: a draw
                } else {
                    -self.get(&child)?
                }
            };
            if best.is_none_or(|(_, s)| score > s) {
                best = Some((col as u8, score));
            }
        }
        best
    }
}

/// Deepest ply [`grow`] accepts: past it the tree has hundreds of thousands of turns.
pub const MAX_DEPTH: usize = 16;

/// Grows the book in `out` into the perfect player's book to `depth`: every position
/// up to ply `depth` where the perfect player, playing either colour and choosing its
/// moves with [`OpeningBook::best_move`], is to move against any replies at all, with
/// the exact score of each of its moves (so that both its choice and an analysis of
/// every column are table look-ups), and the score of the position itself.
///
/// Built ply by ply from the root, since which positions the player can face depends on
/// the moves it chose before; mirror images are stored once. Resumable: scores already
/// in the file are reused, each new one is appended as soon as it is solved, and an
/// interrupted build leaves a book that is complete to the last finished ply.
/// `threads` solvers (each with a table of `table_mb` MiB) share a ply's positions.
/// `log` hears one line per ply and one per solved position. Returns the book.
pub fn grow(
    geo: Geometry,
    depth: usize,
    out: &Path,
    table_mb: usize,
    threads: usize,
    log: &(dyn Fn(&str) + Sync),
) -> Result<OpeningBook, BookError> {
    if depth > MAX_DEPTH {
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
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(out)
        .map_err(io)?;
    let file = Mutex::new(file);
    let write = |line: &str| -> Result<(), BookError> {
        let mut f = file.lock().unwrap_or_else(|e| e.into_inner());
        writeln!(f, "{line}").and_then(|()| f.flush()).map_err(io)
    };
    let mut solvers = (0..threads.max(1))
        .map(|_| Solver::try_new(geo, table_mb))
        .collect::<Result<Vec<_>, _>>()?;
    // The player's turns at each ply, one per mirror pair: moving first it is to move
    // at the root, moving second after each of the opponent's first moves.
    let root = ConnectFour::with_geometry(geo);
    let mut turns: Vec<Vec<(String, ConnectFour)>> = vec![Vec::new(); depth + 3];
    turns[0].push((String::new(), root));
    turns[1] = children("", &root);
    for ply in 0..=depth {
        let level = dedup(std::mem::take(&mut turns[ply]));
        let started = Instant::now();
        // children whose score is missing, in the order of their parents (neighbours
        // share transpositions in a solver's table)
        let mut seen = HashSet::new();
        let mut todo = Vec::new();
        for (moves, g) in &level {
            for (child_moves, child) in children(moves, g) {
                if book.get(&child).is_none() && seen.insert(book.canonical(child.key())) {
                    todo.push((child_moves, child));
                }
            }
        }
        log(&format!(
            "ply {ply}: {} turns of the player, {} moves to solve",
            level.len(),
            todo.len()
        ));
        let snapshot = Arc::new(book.clone());
        let next = AtomicUsize::new(0);
        let failed: Mutex<Option<BookError>> = Mutex::new(None);
        let solved: Mutex<Vec<(ConnectFour, i8)>> = Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            for solver in solvers.iter_mut() {
                solver.set_book(snapshot.clone());
                let (todo, next, failed, solved, write) = (&todo, &next, &failed, &solved, &write);
                scope.spawn(move || loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((moves, g)) = todo.get(i) else { break };
                    if failed.lock().map_or(true, |f| f.is_some()) {
                        break;
                    }
                    let start = Instant::now();
                    let result = solver
                        .solve(g, false)
                        .map_err(BookError::from)
                        .and_then(|score| write(&format!("{moves} {score}")).map(|()| score));
                    match result {
                        Ok(score) => {
                            if let Ok(mut s) = solved.lock() {
                                s.push((*g, score as i8));
                            }
                            log(&format!(
                                "  {moves:<16} {score:>3}  {:.2?}  ({}/{})",
                                start.elapsed(),
                                i + 1,
                                todo.len()
                            ));
                        }
                        Err(e) => {
                            if let Ok(mut f) = failed.lock() {
                                f.get_or_insert(e);
                            }
                            break;
                        }
                    }
                });
            }
        });
        if let Some(e) = failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
            return Err(e);
        }
        for (g, score) in solved.into_inner().unwrap_or_else(|e| e.into_inner()) {
            book.insert(&g, score);
        }
        // the turns' own scores, their choices, and the turns two plies on
        for (moves, g) in &level {
            let (mv, score) = book
                .best_move(g)
                .expect("every child of this ply's turns was just scored");
            if book.get(g).is_none() {
                book.insert(g, score as i8);
                write(&format!("{moves} {score}"))?;
            }
            let mut after = *g;
            after.play(mv);
            if !after.is_terminal() && ply + 2 <= depth {
                let after_moves = format!("{moves}{}", mv + 1);
                turns[ply + 2].extend(children(&after_moves, &after));
            }
        }
        log(&format!("ply {ply}: done in {:.1?}", started.elapsed()));
    }
    Ok(book)
}

/// The children of `g` after which the game goes on, with their move strings: the
/// moves the player must score at its turn, and the replies that lead to its next turns.
fn children(moves: &str, g: &ConnectFour) -> Vec<(String, ConnectFour)> {
    let mut out = Vec::new();
    for mv in g.legal_moves() {
        if g.is_winning_move(mv as usize) {
            continue;
        }
        let mut child = *g;
        child.play(mv);
        if !child.is_terminal() {
            out.push((format!("{moves}{}", mv + 1), child));
        }
    }
    out
}

/// One position of each mirror pair, in first-seen order.
fn dedup(level: Vec<(String, ConnectFour)>) -> Vec<(String, ConnectFour)> {
    let mut seen = HashSet::new();
    level
        .into_iter()
        .filter(|(_, g)| seen.insert(g.key().min(g.geometry().mirror(g.key()))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every entry whose children are all in the book (or end the game) is the negamax
    /// of their scores; returns how many were checked.
    fn check_negamax(book: &OpeningBook, entries: &[ConnectFour]) -> usize {
        let mut checked = 0;
        for g in entries {
            if let Some((_, best)) = book.best_move(g) {
                assert_eq!(book.get(g), Some(best), "entry {g}");
                checked += 1;
            }
        }
        checked
    }

    /// Walks the perfect player's turns to `depth` for both colours, asserting that the
    /// book has a move at each, and that mirror images get mirror-image moves.
    /// Returns the number of turns.
    fn check_coverage(book: &OpeningBook, depth: usize) -> usize {
        let geo = book.geometry();
        let root = ConnectFour::with_geometry(geo);
        let mut stack = vec![root];
        stack.extend(children("", &root).into_iter().map(|(_, g)| g));
        let mut seen = HashSet::new();
        let mut turns = 0;
        while let Some(g) = stack.pop() {
            if g.ply() > depth || !seen.insert(g.key()) {
                continue;
            }
            let (mv, _) = book
                .best_move(&g)
                .unwrap_or_else(|| panic!("no book move for the player's turn {g}"));
            let mirror = g.mirrored();
            let (mirror_mv, _) = book.best_move(&mirror).expect("the mirror image");
            if mirror.key() != g.key() {
                assert_eq!(mirror_mv as usize, geo.width() - 1 - mv as usize, "{g}");
            }
            turns += 1;
            let mut after = g;
            after.play(mv);
            stack.extend(children("", &after).into_iter().map(|(_, g)| g));
        }
        turns
    }

    fn entries(geo: Geometry, text: &str) -> Vec<ConnectFour> {
        text.lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .map(|l| {
                let moves = l.rsplit_once(' ').map_or("", |(m, _)| m);
                ConnectFour::from_moves(geo, moves).unwrap()
            })
            .collect()
    }

    /// The built-in book covers the perfect player's turns to the depth its header
    /// names, is consistent with itself, and gives the known value of Connect Four
    /// (score 1: the first player wins with their 21st stone).
    #[test]
    fn the_builtin_book_is_complete_and_consistent() {
        let book = builtin().unwrap();
        let geo = Geometry::STANDARD;
        let text = builtin_text().unwrap();
        let header = text
            .lines()
            .find_map(|l| l.strip_prefix("# covered to ply "))
            .expect("the header names the depth");
        let depth: usize = header.trim().parse().unwrap();
        assert!(check_coverage(&book, depth) > 0);
        let all = entries(geo, builtin_text().unwrap());
        assert_eq!(all.len(), book.len(), "one line per mirror pair");
        assert!(check_negamax(&book, &all) > depth);
        assert_eq!(
            book.get(&ConnectFour::new()),
            Some(1),
            "the first player wins"
        );
    }

    /// A few of the built-in book's deepest entries, proved again without the book.
    #[test]
    fn the_builtin_book_agrees_with_the_solver() {
        let geo = Geometry::STANDARD;
        let book = builtin().unwrap();
        let all = entries(geo, builtin_text().unwrap());
        let deepest = all.iter().map(|g| g.ply()).max().unwrap();
        let last: Vec<_> = all.iter().filter(|g| g.ply() == deepest).collect();
        let mut solver = Solver::new(geo, 16);
        for g in last.iter().step_by(last.len() / 5 + 1) {
            assert_eq!(solver.solve(g, false).ok(), book.get(g), "{g}");
        }
    }

    #[test]
    fn grow_is_resumable_complete_and_agrees_with_the_solver() {
        let geo = Geometry::new(5, 4).unwrap();
        let dir = std::env::temp_dir().join(format!("tabula-book-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("book.txt");
        let _ = std::fs::remove_file(&out);
        let lines = AtomicUsize::new(0);
        let log = |_: &str| {
            lines.fetch_add(1, Ordering::Relaxed);
        };
        let book = grow(geo, 6, &out, 4, 2, &log).unwrap();
        assert!(lines.load(Ordering::Relaxed) > 7, "a line per ply at least");
        let text = std::fs::read_to_string(&out).unwrap();
        assert_eq!(text.lines().count(), book.len());
        assert!(check_coverage(&book, 6) > 10);
        let all = entries(geo, &text);
        assert!(check_negamax(&book, &all) > 10);
        let mut solver = Solver::new(geo, 4);
        for g in &all {
            assert_eq!(solver.solve(g, false).ok(), book.get(g), "{g}");
        }
        // a second run solves nothing new and appends nothing; a deeper one extends it
        let again = grow(geo, 6, &out, 4, 1, &|_| {}).unwrap();
        assert_eq!(again.len(), book.len());
        assert_eq!(std::fs::read_to_string(&out).unwrap(), text);
        let deeper = grow(geo, 8, &out, 4, 1, &|_| {}).unwrap();
        assert!(deeper.len() > book.len());
        assert!(check_coverage(&deeper, 8) > 0);
        assert!(std::fs::read_to_string(&out).unwrap().starts_with(&text));
        assert!(matches!(
            grow(geo, MAX_DEPTH + 1, &out, 4, 1, &|_| {}),
            Err(BookError::TooDeep(_))
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn best_move_needs_every_column() {
        let geo = Geometry::STANDARD;
        let g = |m: &str| ConnectFour::from_moves(geo, m).unwrap();
        let mut book = OpeningBook::new(geo);
        // X to move after 445: every column scored but the centre's
        for c in ["1", "2", "3", "5", "6", "7"] {
            book.insert(&g(&format!("445{c}")), 3);
        }
        assert_eq!(book.best_move(&g("445")), None);
        book.insert(&g("4454"), -2);
        assert_eq!(
            book.best_move(&g("445")),
            Some((3, 2)),
            "the centre, worth 2"
        );
        // ties go to the centre, then left, in the stored orientation
        book.insert(&g("4454"), 3);
        assert_eq!(book.best_move(&g("445")), Some((3, -3)));
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
