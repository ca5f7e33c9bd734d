//! AutoMine done right (seed 003): a fully convolutional network that learns mine
//! probabilities on boards of any size.
//!
//! - [`dataset`]: positions from games the exact agent plays, labelled with exact
//!   probabilities (never the teacher's estimates), split by game seed.
//! - [`run`]: a resumable training run in a directory.
//! - [`model`]: the trained network as a [`tabula_mines::CellPredictor`], so the agent,
//!   the solver command and the hint use it like any other estimator.
//! - [`eval`]: how close an estimator comes to the exact probabilities.

pub mod dataset;
pub mod error;
pub mod eval;
pub mod model;
pub mod run;

pub use error::AutoMineError;
pub use model::MineNet;
pub use run::{MinesRun, RunConfig};
