//! Minesweeper: a single-player game of hidden information.
//!
//! This crate owns the engine ([`Minefield`]), what a player sees of it ([`View`], with
//! a plain-text format), two ways to estimate where the mines are ([`Teacher`], the
//! greedy local propagation of seed 003's AutoMine, and [`ExactSolver`], exact
//! probabilities by counting layouts), and an [`Agent`] that plays whole games.
//! Estimators share the [`CellPredictor`] trait so that a learned model can be dropped
//! in beside them; [`labels`] turns positions into training examples for one.
//!
//! Coordinates are always a [`Cell`] `(row, col)`; nothing here takes `(x, y)`.

pub mod agent;
pub mod cell;
pub mod error;
pub mod exact;
pub mod information;
pub mod labels;
pub mod minefield;
pub mod predictor;
pub mod risk;
pub mod teacher;
pub mod view;

pub use agent::{Agent, GameRecord};
pub use cell::{Cell, Dims, Neighbours};
pub use error::MinesError;
pub use exact::{ExactSolver, Probabilities};
pub use minefield::{Config, FirstClick, Level, Minefield, Status};
pub use predictor::CellPredictor;
pub use teacher::Teacher;
pub use view::{Seen, View};
