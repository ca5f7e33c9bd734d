//! [`SearchSettings`]: the knobs that define Tabula's network-guided search, one value
//! shared by self-play, accuracy, analysis, play and arenas, so that what a command
//! measures is the search a run trains with.

use serde::{Deserialize, Serialize};

use crate::mcts::{FirstPlayUrgency, MctsConfig};

/// How PUCT search explores and batches. The training configuration owns one (its
/// `[search]` table); every command starts from the game's and lets flags override it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SearchSettings {
    /// `c` of the PUCT formula.
    pub c_puct: f32,
    /// First-play urgency: unvisited children get the parent's value minus this.
    pub fpu_reduction: f32,
    /// Leaves one search gathers per evaluator call (virtual loss spreads them).
    pub leaves_per_search: usize,
    /// Virtual loss per pending descent.
    pub virtual_loss: f32,
    /// Largest batch a network evaluator runs at once (8–16 keeps its scratch in cache).
    pub eval_batch: usize,
    /// Prove results in the tree from its finished games (MCTS-Solver; see
    /// [`MctsConfig::solver`]).
    pub solver: bool,
    /// Discount per ply of the values backed up the tree (1: none; see
    /// [`MctsConfig::discount`]). Training discounts its value targets the same way.
    pub discount: f32,
    /// Network evaluations averaged over this many of the game's symmetries (1: none;
    /// see [`crate::SymmetryAverage`]): a small ensemble at that many times the cost.
    pub symmetries: usize,
}

impl Default for SearchSettings {
    fn default() -> Self {
        SearchSettings {
            c_puct: 1.5,
            fpu_reduction: 0.2,
            leaves_per_search: 4,
            virtual_loss: 1.0,
            eval_batch: 16,
            solver: true,
            discount: 1.0,
            symmetries: 1,
        }
    }
}

impl SearchSettings {
    /// An MCTS configuration with these settings, `simulations` per search, no root
    /// noise, seeded with `seed`.
    pub fn mcts(&self, simulations: usize, seed: u64) -> MctsConfig {
        MctsConfig {
            c_puct: self.c_puct,
            simulations: simulations.max(1),
            time_limit: None,
            batch: self.leaves_per_search.max(1),
            virtual_loss: self.virtual_loss,
            fpu: FirstPlayUrgency::ParentMinus(self.fpu_reduction),
            dirichlet_total: 0.0,
            noise_weight: 0.25,
            seed,
            forced_playouts: 0.0,
            solver: self.solver,
            discount: self.discount,
        }
    }

    /// Rejects values the search cannot use.
    pub fn validate(&self) -> Result<(), String> {
        let finite = [
            ("c_puct", self.c_puct),
            ("fpu_reduction", self.fpu_reduction),
            ("virtual_loss", self.virtual_loss),
            ("discount", self.discount),
        ];
        if let Some((name, v)) = finite.iter().find(|(_, v)| !v.is_finite()) {
            return Err(format!("search.{name} must be a finite number (got {v})"));
        }
        if self.c_puct <= 0.0 || self.c_puct > 100.0 {
            return Err(format!(
                "search.c_puct must lie in (0, 100] (got {})",
                self.c_puct
            ));
        }
        if !(-2.0..=2.0).contains(&self.fpu_reduction) {
            return Err(format!(
                "search.fpu_reduction must lie in [-2, 2] (got {})",
                self.fpu_reduction
            ));
        }
        if !(0.5..=1.0).contains(&self.discount) {
            return Err(format!(
                "search.discount must lie in [0.5, 1] (got {})",
                self.discount
            ));
        }
        if self.virtual_loss < 0.0 {
            return Err("search.virtual_loss must not be negative".into());
        }
        if self.leaves_per_search == 0 || self.leaves_per_search > 1024 {
            return Err("search.leaves_per_search must lie in 1..=1024".into());
        }
        if self.symmetries == 0 || self.symmetries > 8 {
            return Err(format!(
                "search.symmetries must lie in 1..=8 (got {})",
                self.symmetries
            ));
        }
        if self.eval_batch == 0 || self.eval_batch > 4096 {
            return Err("search.eval_batch must lie in 1..=4096".into());
        }
        Ok(())
    }
}
