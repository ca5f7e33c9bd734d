//! Errors of the learned mine model, its data and its training runs.

use thiserror::Error;

/// What can go wrong.
#[derive(Debug, Error)]
pub enum AutoMineError {
    /// A network that cannot be used.
    #[error(transparent)]
    Network(#[from] tabula_nn::NnError),
    /// A Minesweeper error (a bad position, an impossible board).
    #[error(transparent)]
    Mines(#[from] tabula_mines::MinesError),
    /// A run directory problem (lock, atomic write).
    #[error(transparent)]
    Run(#[from] tabula_zero::ZeroError),
    /// A data file that cannot be read as positions.
    #[error("bad data file {path}: {reason}")]
    BadData {
        /// The file.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A bad setting.
    #[error("{0}")]
    Config(String),
    /// An I/O error.
    #[error("cannot read or write {path}")]
    Io {
        /// The file.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

/// A closure that names `path` in an I/O error.
pub(crate) fn io_err(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> AutoMineError + '_ {
    move |source| AutoMineError::Io {
        path: path.display().to_string(),
        source,
    }
}
