//! Search over any Tabula game.
//!
//! This crate owns the algorithms that look ahead: exact negamax with alpha-beta and a
//! transposition table, PUCT Monte-Carlo search behind an `Evaluator` (networks,
//! rollouts) with one set of [`SearchSettings`], UCT Monte-Carlo search (with optional
//! RAVE), game-tree counting (perft), agents that pick moves, the interface of exact
//! solvers with labelled test sets, and the Go bot (time controls, pass and resign
//! policy) that the GTP front end drives. It sees games only through the `Game` trait,
//! except the Go bot, which is about Go. Game-specific solvers live with their games
//! (Connect Four's in `tabula-connect4`).

pub mod agent;
pub mod analysis;
pub mod arena;
pub mod evaluator;
pub mod exact;
pub mod go_bot;
pub mod go_knowledge;
pub mod go_patterns;
pub mod last_good_reply;
pub mod mcts;
pub mod negamax;
pub mod perft;
pub mod playout_mix;
pub mod settings;
pub mod stats;
pub mod time_control;
pub mod uct;

pub use analysis::{Analysis, AnalysisLimits, Analyzer, MctsAnalyzer, MoveInfo, UctAnalyzer};
pub use evaluator::{
    CachedEvaluator, Evaluation, Evaluator, FinalEstimate, RolloutEvaluator, SymmetryAverage,
    UniformEvaluator,
};
pub use exact::{EvalSet, ExactSolver, SolveError, TestPosition};
pub use mcts::{search_many, ChildStats, FirstPlayUrgency, Mcts, MctsConfig, MctsResult, Proof};
pub use negamax::Negamax;
pub use playout_mix::PlayoutMix;
pub use settings::SearchSettings;
pub use uct::{Knowledge, Light, Uct, UctConfig};
