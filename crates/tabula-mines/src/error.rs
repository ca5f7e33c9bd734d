//! Errors of the Minesweeper crate.

use crate::cell::Cell;

/// What can go wrong with a board, a move or a position.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MinesError {
    /// Width, height or mine count that cannot make a game.
    #[error("bad configuration: {0}")]
    BadConfig(String),
    /// A cell outside the board.
    #[error("cell {0} is outside the {1}x{2} board")]
    OutOfBounds(Cell, usize, usize),
    /// A move the game does not allow now.
    #[error("{0}")]
    BadMove(String),
    /// A malformed position file.
    #[error("line {line}, column {column}: {reason}")]
    BadFormat {
        /// 1-based line.
        line: usize,
        /// 1-based character column.
        column: usize,
        /// What is wrong there.
        reason: String,
    },
    /// No layout of mines agrees with the numbers shown.
    #[error("inconsistent position: no placement of the mines agrees with the numbers")]
    Inconsistent,
}
