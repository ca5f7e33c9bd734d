//! Connect Four beyond its rules: everything exact that Tabula knows about the game.
//!
//! The rules live in `tabula_core::connect4` with the other games; this crate owns what
//! only Connect Four has: the strong [`Solver`] (after Pascal Pons) with its
//! two-bound transposition [`table`], the [`OpeningBook`] made by the solver itself
//! (and the one compiled in), the perfect [`SolverAgent`], and the accuracy test set
//! classified from Pons' test positions ([`test_set`]). It depends on core and search;
//! no generic crate depends on it, and front ends reach it only through the game
//! catalogue's capabilities (`tabula-games`).

pub mod agent;
pub mod book;
pub mod solver;
pub mod table;
pub mod test_set;

pub use agent::{describe_score, SolverAgent};
pub use book::{BookError, OpeningBook};
pub use solver::{Solver, SolverError, INVALID_MOVE};
pub use table::TableTooLarge;
