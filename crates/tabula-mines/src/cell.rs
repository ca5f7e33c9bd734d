//! Board coordinates: one type, `(row, col)`, everywhere.

use std::fmt;

/// A cell of the board: `row` counts from the top, `col` from the left, both from 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Cell {
    /// Row, from the top.
    pub row: usize,
    /// Column, from the left.
    pub col: usize,
}

impl Cell {
    /// The cell at `row`, `col`.
    pub const fn new(row: usize, col: usize) -> Cell {
        Cell { row, col }
    }
}

impl fmt::Display for Cell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}, {})", self.row, self.col)
    }
}

/// The size of a board and the arithmetic of its cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dims {
    /// Number of columns.
    pub width: usize,
    /// Number of rows.
    pub height: usize,
}

impl Dims {
    /// A board `width` columns wide and `height` rows high.
    pub const fn new(width: usize, height: usize) -> Dims {
        Dims { width, height }
    }

    /// Number of cells.
    pub fn cells(&self) -> usize {
        self.width * self.height
    }

    /// Whether `cell` is on the board.
    pub fn contains(&self, cell: Cell) -> bool {
        cell.row < self.height && cell.col < self.width
    }

    /// Index of `cell` in row-major order.
    #[inline]
    pub fn index(&self, cell: Cell) -> usize {
        cell.row * self.width + cell.col
    }

    /// The cell at row-major `index`.
    #[inline]
    pub fn cell(&self, index: usize) -> Cell {
        Cell::new(index / self.width, index % self.width)
    }

    /// Row-major indices of the up to 8 neighbours of the cell at `index`, in
    /// row-major order.
    #[inline]
    pub fn neighbours(&self, index: usize) -> Neighbours {
        let (r, c) = (index / self.width, index % self.width);
        let r0 = r.saturating_sub(1);
        let c0 = c.saturating_sub(1);
        Neighbours {
            width: self.width,
            centre: index,
            row: r0,
            col: c0,
            row_end: (r + 1).min(self.height - 1),
            col_start: c0,
            col_end: (c + 1).min(self.width - 1),
        }
    }
}

/// The neighbours of one cell (see [`Dims::neighbours`]): the 3x3 block around it,
/// clipped to the board, without the cell itself. Solvers walk it millions of times a
/// second, so it steps through the block directly.
#[derive(Clone, Debug)]
pub struct Neighbours {
    width: usize,
    centre: usize,
    row: usize,
    col: usize,
    row_end: usize,
    col_start: usize,
    col_end: usize,
}

impl Iterator for Neighbours {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        loop {
            if self.row > self.row_end {
                return None;
            }
            let i = self.row * self.width + self.col;
            if self.col < self.col_end {
                self.col += 1;
            } else {
                self.col = self.col_start;
                self.row += 1;
            }
            if i != self.centre {
                return Some(i);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbours_at_corners_edges_and_inside() {
        let d = Dims::new(4, 3); // 4 wide, 3 high
        assert_eq!(d.neighbours(0).count(), 3);
        assert_eq!(d.neighbours(1).count(), 5);
        assert_eq!(d.neighbours(5).count(), 8);
        assert_eq!(d.cell(5), Cell::new(1, 1));
        assert_eq!(d.index(Cell::new(2, 3)), 11);
        let mut n: Vec<usize> = d.neighbours(11).collect();
        n.sort_unstable();
        assert_eq!(n, vec![6, 7, 10]);
        assert!(!d.contains(Cell::new(3, 0)));
        assert!(!d.contains(Cell::new(0, 4)));
    }

    #[test]
    fn neighbours_are_the_clipped_block_in_row_major_order() {
        for (w, h) in [(1, 1), (1, 5), (5, 1), (2, 2), (4, 3), (9, 9), (30, 16)] {
            let d = Dims::new(w, h);
            for i in 0..d.cells() {
                let (r, c) = (i / w, i % w);
                let want: Vec<usize> = (0..d.cells())
                    .filter(|&j| {
                        let (rr, cc) = (j / w, j % w);
                        j != i && rr.abs_diff(r) <= 1 && cc.abs_diff(c) <= 1
                    })
                    .collect();
                assert_eq!(
                    d.neighbours(i).collect::<Vec<_>>(),
                    want,
                    "{w}x{h} cell {i}"
                );
            }
        }
    }
}
