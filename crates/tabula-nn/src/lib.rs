//! Policy/value networks for Tabula.
//!
//! - [`arch`]: the network's shape, presets from seed 000's 3-layer net up.
//! - [`model`]: the burn module, trained on the `flex` CPU backend ([`train`]).
//! - [`weights`]: safetensors files with metadata; mismatches are clear errors.
//! - [`infer`]: the forward pass used by search — im2col + SGEMM, batch norm folded in,
//!   single-threaded, one per search worker.
//! - [`cell_net`], [`cell_train`]: a fully convolutional network with one output per
//!   cell for boards of any size (Minesweeper's mine probabilities).
//! - [`evaluator`]: the network as a `tabula_search::Evaluator` for any game.

pub mod arch;
pub mod cell_net;
pub mod cell_train;
pub mod error;
pub mod evaluator;
pub mod infer;
pub mod model;
mod optim_state;
pub mod train;
pub mod weights;

pub use arch::{Architecture, Heads};
pub use cell_net::{CellArch, CellNet, CellNetFile, CellNetwork, CellScratch};
pub use cell_train::{CellBatch, CellTrainer};
pub use error::NnError;
pub use evaluator::{search_evaluator, NetworkEvaluator};
pub use infer::{AuxOutput, Network, Scratch};
pub use model::{PolicyValueNet, SCORE_SCALE};
pub use train::{Batch, Losses, TrainConfig, Trainer};
pub use weights::WeightFile;
