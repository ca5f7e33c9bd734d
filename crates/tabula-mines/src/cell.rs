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

    /// Row-major indices of the up to 8 neighbours of the cell at `index`.
    #[inline]
    pub fn neighbours(&self, index: usize) -> impl Iterator<Item = usize> + '_ {
        let (r, c) = ((index / self.width) as isize, (index % self.width) as isize);
        let (h, w) = (self.height as isize, self.width as isize);
        (-1isize..=1)
            .flat_map(move |dr| (-1isize..=1).map(move |dc| (r + dr, c + dc)))
            .filter(move |&(rr, cc)| (rr, cc) != (r, c) && rr >= 0 && rr < h && cc >= 0 && cc < w)
            .map(move |(rr, cc)| (rr * w + cc) as usize)
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
}
