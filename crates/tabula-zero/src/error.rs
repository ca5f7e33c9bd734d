//! Errors of the training crate.

use thiserror::Error;

/// What can go wrong in a training run.
#[derive(Debug, Error)]
pub enum ZeroError {
    /// A bad configuration file or value.
    #[error("bad configuration: {0}")]
    Config(String),
    /// A run directory in an unexpected state.
    #[error("run directory {dir}: {reason}")]
    Run {
        /// The directory.
        dir: String,
        /// What is wrong.
        reason: String,
    },
    /// Training produced a non-finite loss or weight: the iteration is not saved and
    /// the run stays at the last good checkpoint.
    #[error("training diverged in iteration {iteration}, step {step} ({what}); the run stays at iteration {kept} and its checkpoint — lower net.learning_rate in the run's config.toml, then resume")]
    Diverged {
        /// The iteration being trained.
        iteration: usize,
        /// The step (1-based) within it.
        step: usize,
        /// What was not finite.
        what: String,
        /// The last completed iteration.
        kept: usize,
    },
    /// A self-play record that cannot be read.
    #[error("bad game record in {file}: {reason}")]
    Record {
        /// The file.
        file: String,
        /// What is wrong.
        reason: String,
    },
    /// A worker thread panicked (a bug; its results are lost, not counted as zeros).
    #[error("a {0} thread panicked")]
    Panicked(&'static str),
    /// A model that cannot be used here (another game's weights, say).
    #[error("{0}")]
    Model(String),
    /// An object store (a shared run) failed, after retries where retrying can help.
    #[error("object store {store}: {key}: {reason}")]
    Store {
        /// The store (its URL).
        store: String,
        /// The object.
        key: String,
        /// What went wrong.
        reason: String,
    },
    /// A network error.
    #[error(transparent)]
    Nn(#[from] tabula_nn::NnError),
    /// An I/O error.
    #[error("{path}")]
    Io {
        /// The file.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

/// Wraps an I/O error with its path.
pub fn io_err(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> ZeroError + '_ {
    move |source| ZeroError::Io {
        path: path.display().to_string(),
        source,
    }
}
