//! AlphaZero training for any Tabula game.
//!
//! - [`config`]: the run's TOML configuration with per-game defaults;
//! - [`selfplay`]: games through the batched MCTS, many at once per thread;
//! - [`teacher`]: UCT games for a run's first iterations;
//! - [`records`]: the compressed game-record files;
//! - [`replay`]: the replay window and symmetry-augmented batches;
//! - [`accuracy`]: the share of optimal moves against an exact solver;
//! - [`run`]: the loop over a resumable run directory, with metrics;
//! - [`lock`]: one trainer per run directory;
//! - [`store`]: where a run's objects live (S3, a directory, memory) behind `object_store`;
//! - [`shared`]: a run shared by one trainer and many self-play workers through a store.

pub mod accuracy;
pub mod config;
pub mod error;
pub mod evaluators;
pub mod lock;
pub mod records;
pub mod replay;
pub mod run;
pub mod selfplay;
pub mod shared;
pub mod store;
pub mod teacher;

pub use accuracy::{Accuracy, EvalSet, TestPosition};
pub use config::ZeroConfig;
pub use error::ZeroError;
pub use run::{Metrics, Progress, Run, RunState, Silent};
