//! What a player sees of a minefield, and its plain-text format.
//!
//! ```text
//! # comments start with '#'
//! 9x9 10
//! 001F.....
//! 0012.....
//! ...
//! ```
//!
//! The first non-comment line is `WIDTHxHEIGHT MINES` (the total number of mines on the
//! board, found or not). Then one line per row, top to bottom, one character per cell:
//! `.` hidden, `F` flagged (hidden; flags are the player's guesses and solvers ignore
//! them), `0`–`8` a revealed number, `*` a revealed mine (a lost game).

use std::fmt;

use crate::cell::{Cell, Dims};
use crate::error::MinesError;

/// One cell as the player sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Seen {
    /// Not revealed.
    Hidden,
    /// Not revealed, flagged by the player.
    Flagged,
    /// Revealed, with this many mines around it.
    Number(u8),
    /// A revealed mine.
    Mine,
}

impl Seen {
    /// Hidden or flagged.
    pub fn is_hidden(self) -> bool {
        matches!(self, Seen::Hidden | Seen::Flagged)
    }
}

/// A position: board size, total mines, and every cell as seen.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct View {
    dims: Dims,
    mines: usize,
    cells: Vec<Seen>,
}

impl View {
    /// A view of `cells` (row-major) on a board of `dims` holding `mines` mines.
    pub fn new(dims: Dims, mines: usize, cells: Vec<Seen>) -> View {
        debug_assert_eq!(cells.len(), dims.cells());
        View { dims, mines, cells }
    }

    /// Board size.
    pub fn dims(&self) -> Dims {
        self.dims
    }

    /// Total mines on the board.
    pub fn mines(&self) -> usize {
        self.mines
    }

    /// Every cell, row-major.
    pub fn cells(&self) -> &[Seen] {
        &self.cells
    }

    /// The cell at `cell` (which must be on the board).
    pub fn get(&self, cell: Cell) -> Seen {
        self.cells[self.dims.index(cell)]
    }

    /// Sets the cell at row-major `index` (which must be on the board): for
    /// hypothetical positions ("what if this cell showed a 2?").
    pub fn set(&mut self, index: usize, seen: Seen) {
        self.cells[index] = seen;
    }

    /// Number of revealed cells.
    pub fn revealed_count(&self) -> usize {
        self.cells.iter().filter(|s| !s.is_hidden()).count()
    }

    /// Row-major indices of hidden (or flagged) cells.
    pub fn hidden(&self) -> Vec<usize> {
        (0..self.cells.len())
            .filter(|&i| self.cells[i].is_hidden())
            .collect()
    }

    /// Reads the text format (see the module documentation).
    pub fn parse(text: &str) -> Result<View, MinesError> {
        let bad = |line: usize, column: usize, reason: String| MinesError::BadFormat {
            line,
            column,
            reason,
        };
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.trim_end()))
            .filter(|(_, l)| !l.trim_start().starts_with('#') && !l.trim().is_empty());
        let (hline, header) = lines
            .next()
            .ok_or_else(|| bad(1, 1, "empty file: expected `WIDTHxHEIGHT MINES`".into()))?;
        let mut fields = header.split_whitespace();
        let (size, mines) = match (fields.next(), fields.next(), fields.next()) {
            (Some(s), Some(m), None) => (s, m),
            _ => {
                return Err(bad(
                    hline,
                    1,
                    format!("expected `WIDTHxHEIGHT MINES`, found {header:?}"),
                ))
            }
        };
        let (w, h) = size
            .split_once(['x', 'X'])
            .and_then(|(w, h)| Some((w.parse::<usize>().ok()?, h.parse::<usize>().ok()?)))
            .filter(|&(w, h)| w > 0 && h > 0 && w <= 1000 && h <= 1000)
            .ok_or_else(|| {
                bad(
                    hline,
                    1,
                    format!("bad board size {size:?}: expected e.g. 9x9"),
                )
            })?;
        let mines: usize = mines
            .parse()
            .map_err(|_| bad(hline, size.len() + 2, format!("bad mine count {mines:?}")))?;
        if mines > w * h {
            return Err(bad(
                hline,
                size.len() + 2,
                format!("{mines} mines do not fit in {} cells", w * h),
            ));
        }
        let dims = Dims::new(w, h);
        let mut cells = Vec::with_capacity(w * h);
        let mut rows = 0;
        for (n, line) in lines {
            if rows == h {
                return Err(bad(n, 1, format!("more than {h} rows")));
            }
            let chars: Vec<char> = line.trim_start().chars().collect();
            if chars.len() != w {
                return Err(bad(
                    n,
                    1,
                    format!("row has {} cells, expected {w}", chars.len()),
                ));
            }
            for (c, ch) in chars.into_iter().enumerate() {
                let seen = match ch {
                    '.' => Seen::Hidden,
                    'F' | 'f' => Seen::Flagged,
                    '*' => Seen::Mine,
                    '0'..='8' => Seen::Number(ch as u8 - b'0'),
                    _ => {
                        return Err(bad(
                            n,
                            c + 1,
                            format!("unexpected {ch:?}: use . F * or 0-8"),
                        ));
                    }
                };
                if let Seen::Number(k) = seen {
                    let around = dims.neighbours(rows * w + c).count();
                    if usize::from(k) > around {
                        return Err(bad(
                            n,
                            c + 1,
                            format!("{k} mines cannot fit around a cell with {around} neighbours"),
                        ));
                    }
                }
                cells.push(seen);
            }
            rows += 1;
        }
        if rows != h {
            return Err(bad(
                text.lines().count().max(1),
                1,
                format!("found {rows} rows, expected {h}"),
            ));
        }
        Ok(View::new(dims, mines, cells))
    }
}

/// Writes the text format.
impl fmt::Display for View {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}x{} {}", self.dims.width, self.dims.height, self.mines)?;
        for r in 0..self.dims.height {
            for c in 0..self.dims.width {
                let ch = match self.cells[r * self.dims.width + c] {
                    Seen::Hidden => '.',
                    Seen::Flagged => 'F',
                    Seen::Mine => '*',
                    Seen::Number(k) => (b'0' + k) as char,
                };
                write!(f, "{ch}")?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let text = "# a position\n4x3 2\n01..\n02F.\n01..\n";
        let v = View::parse(text).unwrap();
        assert_eq!(v.dims(), Dims::new(4, 3));
        assert_eq!(v.mines(), 2);
        assert_eq!(v.get(Cell::new(1, 2)), Seen::Flagged);
        assert_eq!(v.get(Cell::new(1, 1)), Seen::Number(2));
        assert_eq!(v.hidden().len(), 6);
        assert_eq!(View::parse(&v.to_string()).unwrap(), v);
    }

    #[test]
    fn malformed_inputs_name_the_place() {
        let cases = [
            ("", "empty file"),
            ("4x3\n", "expected `WIDTHxHEIGHT MINES`"),
            ("4y3 2\n", "bad board size"),
            ("4x3 two\n", "bad mine count"),
            ("2x2 5\n..\n..\n", "do not fit"),
            ("4x3 2\n01..\n02..\n", "found 2 rows"),
            (
                "4x3 2\n01..\n02...\n01..\n",
                "line 3, column 1: row has 5 cells",
            ),
            (
                "4x3 2\n01..\n0x..\n01..\n",
                "line 3, column 2: unexpected 'x'",
            ),
            ("4x3 2\n01..\n02..\n01..\n....\n", "more than 3 rows"),
            ("2x2 1\n4.\n..\n", "cannot fit around"),
        ];
        for (text, want) in cases {
            let e = View::parse(text).unwrap_err().to_string();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }

    mod fuzz {
        use super::*;
        use crate::exact::ExactSolver;
        use proptest::prelude::*;

        // Fuzzing (see `scripts/fuzz.sh`): any text is read or refused without a
        // panic; a position read writes back to itself, and the exact solver answers
        // it or refuses it as inconsistent.
        proptest! {
            #[test]
            fn fuzz_mines_position_files(
                (w, h, mines, cells) in (1usize..8, 1usize..8, 0usize..12).prop_flat_map(|(w, h, m)| {
                    (Just(w), Just(h), Just(m), proptest::collection::vec(
                        prop_oneof![8 => Just('.'), 1 => Just('F'), 6 => proptest::char::range('0', '3'), 1 => Just('*')],
                        w * h,
                    ))
                }),
                noise in "(|x|\\n|#|  |\\PC)",
                at in 0usize..200,
            ) {
                let mut text = format!("{w}x{h} {mines}\n");
                for row in cells.chunks(w) {
                    text.extend(row);
                    text.push('\n');
                }
                let mut cut = at.min(text.len());
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                text.insert_str(cut, &noise);
                let Ok(view) = View::parse(&text) else { return Ok(()) };
                prop_assert_eq!(View::parse(&view.to_string()).ok(), Some(view.clone()));
                if let Ok(p) = ExactSolver::with_budget(100_000).solve(&view) {
                    for i in view.hidden() {
                        let q = p.p[i];
                        prop_assert!((0.0..=1.0).contains(&q), "{}", q);
                    }
                    for &i in p.safe.iter().chain(&p.mines) {
                        prop_assert!(view.cells()[i].is_hidden());
                    }
                }
            }
        }
    }
}
