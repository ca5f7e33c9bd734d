//! [`BoardView`]: a game's board as a grid that any front end can draw and click,
//! without knowing the game (the web app's boards, heatmaps and click-to-move).

use serde::Serialize;
use tabula_core::Player;

/// How pieces sit on the grid, which decides how a front end draws it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// Pieces inside square cells (tic-tac-toe).
    Cells,
    /// Pieces dropped into columns (Connect Four): a click anywhere in a column plays it.
    Columns,
    /// Stones on the intersections of lines (Go).
    Intersections,
}

/// A snapshot of a board: `rows` × `cols` points, row 0 at the top.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BoardView {
    /// Rows, top to bottom.
    pub rows: usize,
    /// Columns, left to right.
    pub cols: usize,
    /// How to draw it.
    pub layout: Layout,
    /// Each point's owner, row by row: 1 for the first player, 2 for the second, 0 empty.
    pub cells: Vec<u8>,
    /// The names of the two sides' pieces, e.g. `["X", "O"]` or `["black", "white"]`.
    pub pieces: [&'static str; 2],
    /// Column labels, left to right, and row labels, top to bottom (empty: none).
    pub col_labels: Vec<String>,
    /// Row labels, top to bottom.
    pub row_labels: Vec<String>,
}

impl BoardView {
    /// A view of a `rows` × `cols` board whose owner at each point `owner(row, col)` tells.
    pub fn new(
        rows: usize,
        cols: usize,
        layout: Layout,
        pieces: [&'static str; 2],
        owner: impl Fn(usize, usize) -> Option<Player>,
    ) -> Self {
        let cells = (0..rows)
            .flat_map(|r| (0..cols).map(move |c| (r, c)))
            .map(|(r, c)| match owner(r, c) {
                None => 0,
                Some(Player::First) => 1,
                Some(Player::Second) => 2,
            })
            .collect();
        BoardView {
            rows,
            cols,
            layout,
            cells,
            pieces,
            col_labels: Vec::new(),
            row_labels: Vec::new(),
        }
    }

    /// Adds labels to the view.
    pub fn labelled(mut self, cols: Vec<String>, rows: Vec<String>) -> Self {
        self.col_labels = cols;
        self.row_labels = rows;
        self
    }

    /// The owner code of `(row, col)` (0 off the board).
    pub fn at(&self, row: usize, col: usize) -> u8 {
        if row < self.rows && col < self.cols {
            self.cells[row * self.cols + col]
        } else {
            0
        }
    }
}

/// Go's column letters (A–T without I), for Go-like boards of `n` columns.
pub fn go_columns(n: usize) -> Vec<String> {
    ('A'..='Z')
        .filter(|&c| c != 'I')
        .take(n)
        .map(String::from)
        .collect()
}

/// Go's row numbers, top to bottom (`n` at the top, 1 at the bottom).
pub fn go_rows(n: usize) -> Vec<String> {
    (1..=n).rev().map(|r| r.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use crate::registry::{visit, GameVisitor, GAMES};
    use crate::Capabilities;

    /// Plays random legal moves and checks at every position that each legal move with
    /// a point is what a click on that point plays, and that pieces appear where moves
    /// land.
    struct ClicksRoundTrip;

    impl GameVisitor for ClicksRoundTrip {
        type Output = ();
        fn visit<G: Capabilities>(self, mut game: G) {
            let mut seed = 12345u64;
            for _ in 0..40 {
                let view = game
                    .board_view()
                    .expect("every registered game has a board");
                assert_eq!(view.cells.len(), view.rows * view.cols);
                let moves = game.legal_moves();
                if moves.is_empty() {
                    break;
                }
                for &mv in &moves {
                    if let Some((r, c)) = game.move_point(mv) {
                        assert_eq!(view.at(r, c), 0, "{}: a move onto a piece", game.name());
                        assert_eq!(game.move_at(r, c), Some(mv), "{}", game.name());
                    }
                }
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let mv = moves[(seed >> 33) as usize % moves.len()];
                let point = game.move_point(mv);
                let mover = game.to_move();
                game.play(mv);
                if let (Some((r, c)), Some(after)) = (point, game.board_view()) {
                    // Go captures never take the stone just played.
                    assert_eq!(after.at(r, c), mover.index() as u8 + 1, "{}", game.name());
                }
                if game.is_terminal() {
                    break;
                }
            }
        }
    }

    #[test]
    fn a_click_on_a_moves_point_plays_that_move_in_every_game() {
        for info in GAMES {
            for spec in info.presets {
                visit(spec, ClicksRoundTrip).unwrap();
            }
        }
    }

    #[test]
    fn clicks_off_the_board_or_on_pieces_play_nothing() {
        struct OffBoard;
        impl GameVisitor for OffBoard {
            type Output = ();
            fn visit<G: Capabilities>(self, game: G) {
                let view = game.board_view().unwrap();
                assert_eq!(game.move_at(view.rows + 5, 0), None);
                assert_eq!(game.move_at(0, view.cols), None);
            }
        }
        for info in GAMES {
            visit(info.presets[0], OffBoard).unwrap();
        }
    }
}
