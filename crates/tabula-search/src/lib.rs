//! Search over any Tabula game.
//!
//! This crate owns the algorithms that look ahead: exact negamax with alpha-beta and a
//! transposition table, PUCT Monte-Carlo search behind an `Evaluator` (networks,
//! rollouts), UCT Monte-Carlo search (with optional RAVE) for any
//! [`tabula_core::Game`], game-tree counting (perft), agents that pick moves, and the
//! specialised Connect Four solver with its opening book. It sees games only through
//! the `Game` trait, except the Connect Four solver, which works on the bitboards.

pub mod agent;
pub mod arena;
pub mod connect4_solver;
pub mod evaluator;
pub mod mcts;
pub mod negamax;
pub mod opening_book;
pub mod perft;
pub mod solver_table;
pub mod uct;

pub use connect4_solver::{Solver, SolverError};
pub use evaluator::{CachedEvaluator, Evaluation, Evaluator, RolloutEvaluator, UniformEvaluator};
pub use mcts::{search_many, ChildStats, FirstPlayUrgency, Mcts, MctsConfig, MctsResult};
pub use negamax::Negamax;
pub use opening_book::OpeningBook;
pub use uct::{Uct, UctConfig};
