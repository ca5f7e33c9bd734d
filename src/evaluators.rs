//! The flags every searching subcommand shares, and `--model` (the evaluators
//! themselves are built by [`tabula_zero::evaluators`]).

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::Args;
use tabula_core::Game;
use tabula_games::Capabilities;
use tabula_nn::Network;
use tabula_search::playout_mix::{mixed, DEFAULT_LAMBDA};
use tabula_search::uct::Knowledge;
use tabula_search::{Evaluator, SearchSettings};
use tabula_zero::ZeroConfig;

pub use tabula_zero::evaluators::shipped_model;

/// Flags that override the search settings of the game's training configuration (its
/// `[search]` table, `tabula train GAME --print-config`), so that every command searches
/// as training does unless told otherwise.
#[derive(Args, Clone, Debug, Default)]
pub struct SearchFlags {
    /// Exploration constant c of PUCT (default: the game's training setting, 1.5).
    #[arg(long)]
    pub c_puct: Option<f32>,
    /// First-play urgency: unvisited moves get the parent's value minus this.
    #[arg(long)]
    pub fpu_reduction: Option<f32>,
    /// Leaves one search gathers per network batch.
    #[arg(long)]
    pub leaves_per_search: Option<usize>,
    /// Prove wins, draws and losses in the search tree from the finished games it
    /// reaches (MCTS-Solver) and play by them: `true` or `false` (default: the game's
    /// training setting).
    #[arg(long)]
    pub solver: Option<bool>,
    /// Discount per ply of the values the search backs up (1: none), for a network
    /// trained with that discount (default: the game's training setting).
    #[arg(long)]
    pub discount: Option<f32>,
    /// Average every network evaluation over this many of the board's symmetries (1:
    /// none; Connect Four has 2, square Go boards 8): a small ensemble that costs as many
    /// network evaluations per simulation.
    #[arg(long)]
    pub symmetries: Option<usize>,
}

/// The game's default training configuration: the generic defaults with the game's own
/// laid over them.
pub fn training_config<G: Capabilities>(game: &G) -> Result<ZeroConfig> {
    Ok(ZeroConfig::for_game(
        &game.name(),
        game.training_defaults(),
    )?)
}

impl SearchFlags {
    /// The game's search settings with these flags laid over them, checked.
    pub fn settings<G: Capabilities>(&self, game: &G) -> Result<SearchSettings> {
        let mut s = training_config(game)?.search;
        if let Some(c) = self.c_puct {
            s.c_puct = c;
        }
        if let Some(f) = self.fpu_reduction {
            s.fpu_reduction = f;
        }
        if let Some(l) = self.leaves_per_search {
            s.leaves_per_search = l;
        }
        if let Some(on) = self.solver {
            s.solver = on;
        }
        if let Some(d) = self.discount {
            s.discount = d;
        }
        if let Some(k) = self.symmetries {
            s.symmetries = k;
        }
        s.validate().map_err(anyhow::Error::msg)?;
        Ok(s)
    }
}

/// How a network MCTS mixes playouts into its leaf values (AlphaGo's leaf evaluation),
/// for games whose playouts know something (Go).
#[derive(Args, Clone, Debug)]
pub struct MixFlags {
    /// Mix each leaf's network value with the result of playouts from it, AlphaGo's λ:
    /// value = (1 − λ)·network + λ·playouts, in games with a playout policy (Go; others
    /// ignore it). 0: the network alone. (On 9x9, 1 s a move against GnuGo level 10, the
    /// network of iteration 64 won 75% alone, 80% at 0.5 and 88.8% at 0.75; the shipped
    /// iteration 102 won 96.3% at 0.75; BENCHMARKS.md.)
    #[arg(long, default_value_t = f64::from(DEFAULT_LAMBDA), value_parser = crate::input::number(0.0, 1.0))]
    pub playout_mix: f64,
    /// Playouts per leaf when --playout-mix is above 0.
    #[arg(long, default_value_t = 1, value_parser = crate::input::count(1, 1000))]
    pub mix_playouts: usize,
}

impl Default for MixFlags {
    fn default() -> Self {
        MixFlags {
            playout_mix: f64::from(DEFAULT_LAMBDA),
            mix_playouts: 1,
        }
    }
}

impl MixFlags {
    /// `evaluator` (described by `label`) with `knowledge`'s playouts mixed in, or
    /// unchanged when λ is 0 or there is no knowledge.
    pub fn mix<G: Game, K: Knowledge<G> + Send + 'static>(
        &self,
        evaluator: Box<dyn Evaluator<G>>,
        label: String,
        knowledge: Option<K>,
        seed: u64,
    ) -> (Box<dyn Evaluator<G>>, String) {
        let lambda = self.playout_mix as f32;
        let label = if knowledge.is_some() && lambda > 0.0 {
            format!("{label}, mixed with playouts at λ {lambda}")
        } else {
            label
        };
        let evaluator = mixed(evaluator, knowledge, lambda, self.mix_playouts, seed);
        (evaluator, label)
    }
}

/// The help text of `--model`, shared by the subcommands that take it.
pub const MODEL_HELP: &str = "Evaluator: a .safetensors weight file, or `untrained` (a freshly initialised \
network, seed 000's experiment), `uniform` (uniform priors, value 0) or `rollout` (uniform priors, \
random-playout value). Default: the shipped model models/GAME.safetensors if there is one, else `untrained`";

/// Loads a weight file and checks it against `game`.
pub fn load_network<G: Game>(path: &Path, game: &G) -> Result<Arc<Network>> {
    Ok(tabula_zero::evaluators::load_network(path, game)?)
}

/// The evaluator `spec` names (see [`MODEL_HELP`]) and a description of it.
pub fn evaluator<G: Game>(
    spec: Option<&str>,
    game: &G,
    search: &SearchSettings,
    seed: u64,
) -> Result<(Box<dyn Evaluator<G>>, String)> {
    Ok(tabula_zero::evaluators::evaluator(
        spec, game, search, seed,
    )?)
}

/// Plays a move list on `game`: moves separated by spaces or commas; a token that is not
/// one move is read as a run of one-character moves (Connect Four's `4453`).
pub fn play_moves<G: Game>(game: &mut G, moves: &str) -> Result<()> {
    for token in moves
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|t| !t.is_empty())
    {
        let mut trial = game.clone();
        if trial.play_text(token).is_ok() {
            *game = trial;
            continue;
        }
        let mut trial = game.clone();
        for (i, ch) in token.char_indices() {
            trial.play_text(&ch.to_string()).with_context(|| {
                format!(
                    "move {:?} (character {} of {token:?}) in {}",
                    ch,
                    i + 1,
                    game.name()
                )
            })?;
        }
        *game = trial;
    }
    Ok(())
}
