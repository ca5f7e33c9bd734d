//! Errors of the network crate.

use thiserror::Error;

/// What can go wrong building, loading or running a network.
#[derive(Debug, Error)]
pub enum NnError {
    /// A bad architecture description.
    #[error("bad network architecture: {0}")]
    Architecture(String),
    /// A weight file that does not fit the game or the architecture.
    #[error("weight file does not match: {0}")]
    Mismatch(String),
    /// A weight file that cannot be read as Tabula weights.
    #[error("bad weight file {path}: {reason}")]
    BadFile {
        /// The file.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
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
