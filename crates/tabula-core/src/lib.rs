//! Tabula's games and the one trait they share.
//!
//! This crate owns the rules: the [`Game`] trait every search algorithm is written
//! against, and the games themselves (tic-tac-toe, Connect Four, Go with SGF records).
//! It knows nothing of search or front ends. A new game is one file in this crate
//! implementing [`Game`], plus one line in the catalogue (`tabula-games`) so that front
//! ends can find it by name.

pub mod connect4;
pub mod game;
pub mod go;
pub mod mini_go;
pub mod sgf;
pub mod symmetry;
pub mod tictactoe;
pub mod zobrist;

pub use connect4::ConnectFour;
pub use game::{Game, GameError, Outcome, Player};
pub use go::{Go, GoRules};
pub use mini_go::MiniGo;
pub use tictactoe::TicTacToe;
