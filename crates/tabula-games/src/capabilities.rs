//! [`Capabilities`]: what a game offers beyond its rules, declared by the game's type
//! (see the crate documentation for why a trait), and each game's declaration.

use std::path::{Path, PathBuf};

use tabula_connect4::test_set::TestSetError;
use tabula_connect4::{BookError, Solver, SolverAgent, TableTooLarge};
use tabula_core::{ConnectFour, Game, Go, MiniGo, TicTacToe};
use tabula_search::agent::{Agent, NegamaxAgent};
use tabula_search::exact::{EvalSet, ExactSolver};
use tabula_search::go_knowledge::GoKnowledge;
use tabula_search::uct::Knowledge;

/// Why a capability a game offers could not deliver.
#[derive(Debug, thiserror::Error)]
pub enum CapabilityError {
    /// The opening book could not be read or built.
    #[error(transparent)]
    Book(#[from] BookError),
    /// The accuracy test set could not be made.
    #[error(transparent)]
    TestSet(#[from] TestSetError),
    /// A table of the size asked for does not fit in memory.
    #[error(transparent)]
    Memory(#[from] TableTooLarge),
}

/// Where a game may find the data behind its accuracy test set.
#[derive(Clone, Debug)]
pub struct TestSetSource {
    /// A folder of reference data (Pons' Connect Four test sets).
    pub data_dir: PathBuf,
    /// Positions wanted (0: all the game has).
    pub positions: usize,
    /// A file where a slow classification is kept between runs.
    pub cache: PathBuf,
}

/// What a game offers beyond its rules. Every method has a default meaning "not
/// offered"; a game overrides what it has.
pub trait Capabilities: Game {
    /// The perfect player, if one answers in reasonable time (`table_mb`: memory for
    /// its tables).
    fn perfect_agent(
        &self,
        _table_mb: usize,
    ) -> Option<Result<Box<dyn Agent<Self>>, CapabilityError>> {
        None
    }

    /// A dedicated exact solver for positions of this game (with the opening book if
    /// `book` and the game has one for this board).
    fn exact_solver(
        &self,
        _table_mb: usize,
        _book: bool,
    ) -> Option<Result<Box<dyn ExactSolver<Self>>, CapabilityError>> {
        None
    }

    /// Test positions with every move labelled by exact search, the yardstick of a
    /// learner's accuracy.
    fn test_set(
        &self,
        _source: &TestSetSource,
        _log: &mut dyn FnMut(&str),
    ) -> Option<Result<EvalSet<Self>, CapabilityError>> {
        None
    }

    /// The game's training defaults as TOML laid over the generic ones (e.g. a larger
    /// network); empty when the generic defaults suit it.
    fn training_defaults(&self) -> &'static str {
        ""
    }

    /// Builds or extends an opening book of every position to `depth` plies in `out`
    /// (resumable), returning the number of positions in it.
    fn build_book(
        &self,
        _depth: usize,
        _out: &Path,
        _table_mb: usize,
        _log: &mut dyn FnMut(&str),
    ) -> Option<Result<usize, CapabilityError>> {
        None
    }

    /// Whether exhaustive negamax finishes in reasonable time from the start.
    fn exhaustive_search_is_practical(&self) -> bool {
        false
    }

    /// Knowledge for UCT beyond the rules (heavy playouts, priors), if the game has
    /// any; UCT otherwise plays light random playouts.
    fn uct_knowledge(&self) -> Option<Box<dyn Knowledge<Self>>> {
        None
    }
}

impl Capabilities for TicTacToe {
    fn perfect_agent(
        &self,
        _table_mb: usize,
    ) -> Option<Result<Box<dyn Agent<Self>>, CapabilityError>> {
        Some(Ok(Box::new(NegamaxAgent::new(None))))
    }

    fn test_set(
        &self,
        _source: &TestSetSource,
        _log: &mut dyn FnMut(&str),
    ) -> Option<Result<EvalSet<Self>, CapabilityError>> {
        Some(Ok(EvalSet::exhaustive(self)))
    }

    fn training_defaults(&self) -> &'static str {
        // Temperature on every move: the games visit unusual positions (blunders
        // included), which is what the last fraction of a percent of accuracy needs.
        "iterations = 20\n[selfplay]\ntemperature_moves = 9\n"
    }

    fn exhaustive_search_is_practical(&self) -> bool {
        true
    }
}

impl Capabilities for ConnectFour {
    fn perfect_agent(
        &self,
        table_mb: usize,
    ) -> Option<Result<Box<dyn Agent<Self>>, CapabilityError>> {
        Some(
            SolverAgent::try_new(self.geometry(), table_mb)
                .map(|mut agent| {
                    if let Ok(book) = tabula_connect4::book::builtin() {
                        agent.set_book(book);
                    }
                    Box::new(agent) as Box<dyn Agent<Self>>
                })
                .map_err(CapabilityError::from),
        )
    }

    fn exact_solver(
        &self,
        table_mb: usize,
        book: bool,
    ) -> Option<Result<Box<dyn ExactSolver<Self>>, CapabilityError>> {
        Some(
            Solver::try_new(self.geometry(), table_mb)
                .map(|mut solver| {
                    if book {
                        if let Ok(book) = tabula_connect4::book::builtin() {
                            solver.set_book(book); // ignored on boards it was not made for
                        }
                    }
                    Box::new(solver) as Box<dyn ExactSolver<Self>>
                })
                .map_err(CapabilityError::from),
        )
    }

    fn test_set(
        &self,
        source: &TestSetSource,
        log: &mut dyn FnMut(&str),
    ) -> Option<Result<EvalSet<Self>, CapabilityError>> {
        // Pons' sets are 7x6 positions.
        (self.geometry() == tabula_core::connect4::Geometry::STANDARD).then(|| {
            tabula_connect4::test_set::pons_test_set(
                &source.data_dir,
                source.positions,
                &source.cache,
                log,
            )
            .map_err(CapabilityError::from)
        })
    }

    fn training_defaults(&self) -> &'static str {
        r#"iterations = 200
[selfplay]
games = 200
simulations = 200
fast_simulations = 40
temperature_moves = 8
resign_threshold = 0.9
parallel_games = 64
[net]
size = "4x48"
replay_window = 200000
steps = 200
batch_size = 256
[eval]
every = 2
simulations = 200
positions = 500
"#
    }

    fn build_book(
        &self,
        depth: usize,
        out: &Path,
        table_mb: usize,
        log: &mut dyn FnMut(&str),
    ) -> Option<Result<usize, CapabilityError>> {
        Some(
            tabula_connect4::book::build(self.geometry(), depth, out, table_mb, log)
                .map(|b| b.len())
                .map_err(CapabilityError::from),
        )
    }

    fn exhaustive_search_is_practical(&self) -> bool {
        self.geometry().cells() <= 16
    }
}

/// Go's training defaults (mini-go's too).
const GO_TRAINING: &str = r#"iterations = 100
[selfplay]
simulations = 200
temperature_moves = 12
[net]
size = "medium"
replay_window = 200000
batch_size = 256
[eval]
every = 0
"#;

impl Capabilities for Go {
    fn training_defaults(&self) -> &'static str {
        GO_TRAINING
    }

    fn uct_knowledge(&self) -> Option<Box<dyn Knowledge<Self>>> {
        Some(Box::new(GoKnowledge::default()))
    }
}

impl Capabilities for MiniGo {
    fn training_defaults(&self) -> &'static str {
        GO_TRAINING
    }
}
