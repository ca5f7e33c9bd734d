//! Players by name, as the web app offers them: the perfect player where a game has
//! one, network-guided MCTS with a chosen model, classic UCT, random. Every search is
//! bounded by the server's [`Limits`].

use std::time::Duration;

use serde::Deserialize;
use tabula_games::Capabilities;
use tabula_search::agent::{Agent, MctsAgent, UctAgent};
use tabula_search::arena::RandomAgent;
use tabula_search::playout_mix::{mixed, DEFAULT_LAMBDA};
use tabula_search::uct::{Knowledge, UctConfig};
use tabula_zero::evaluators;
use tabula_zero::ZeroConfig;

use crate::error::ApiError;
use crate::Limits;

/// Who plays: `kind` is `perfect`, `mcts`, `uct` or `random`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlayerSpec {
    /// The kind of player.
    pub kind: String,
    /// MCTS's evaluator: a weight file or `untrained`, `uniform`, `rollout` (default:
    /// the game's shipped model, else `rollout`).
    pub model: Option<String>,
    /// Simulations (MCTS) or playouts (UCT) per move.
    pub sims: Option<usize>,
    /// A time limit per move in seconds (capped by the server).
    pub seconds: Option<f64>,
    /// Seed of random choices.
    pub seed: Option<u64>,
}

/// The player kinds `game` supports, best first (`has_solver`: the game has an exact
/// solver).
pub fn available<G: Capabilities>(game: &G, has_solver: bool) -> Vec<&'static str> {
    let mut kinds = Vec::new();
    if game.exhaustive_search_is_practical() || has_solver {
        kinds.push("perfect");
    }
    kinds.extend(["mcts", "uct", "random"]);
    kinds
}

/// The evaluators MCTS may use on `game`: its shipped model first if it has one.
pub fn models<G: Capabilities>(game: &G) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(p) = evaluators::shipped_model(&game.name()) {
        out.push(p.display().to_string());
    }
    out.extend(evaluators::BUILT_IN.iter().rev().map(|s| s.to_string()));
    out
}

/// The default evaluator for `game`: its shipped model, else random rollouts (an
/// untrained network would show only noise).
pub fn default_model<G: Capabilities>(game: &G) -> String {
    evaluators::shipped_model(&game.name())
        .map_or_else(|| "rollout".to_string(), |p| p.display().to_string())
}

/// The search settings of `game`'s training configuration.
pub fn search_settings<G: Capabilities>(
    game: &G,
) -> Result<tabula_search::SearchSettings, ApiError> {
    Ok(ZeroConfig::for_game(&game.name(), game.training_defaults())
        .map_err(|e| ApiError::Internal(e.to_string()))?
        .search)
}

/// A checked time limit: `seconds` if given (positive and finite), capped.
pub fn time_limit(seconds: Option<f64>, limits: Limits) -> Result<Duration, ApiError> {
    match seconds {
        None => Ok(limits.max_time),
        Some(s) if s.is_finite() && s > 0.0 => Ok(Duration::from_secs_f64(s).min(limits.max_time)),
        Some(s) => Err(ApiError::bad(format!(
            "seconds must be a positive number (got {s})"
        ))),
    }
}

/// A checked simulation count: `sims` if given (at least 1), capped; else `default`.
pub fn simulations(sims: Option<usize>, default: usize, limits: Limits) -> Result<usize, ApiError> {
    match sims {
        Some(0) => Err(ApiError::bad("sims must be at least 1")),
        Some(n) => Ok(n.min(limits.max_sims)),
        None => Ok(default.min(limits.max_sims)),
    }
}

/// The player `spec` names, for `game`.
pub fn agent<G: Capabilities>(
    spec: &PlayerSpec,
    game: &G,
    limits: Limits,
) -> Result<Box<dyn Agent<G>>, ApiError> {
    let seed = spec.seed.unwrap_or(1);
    let time = time_limit(spec.seconds, limits)?;
    Ok(match spec.kind.as_str() {
        "random" => Box::new(RandomAgent::new(seed)),
        "perfect" => game
            .perfect_agent(64)
            .ok_or_else(|| ApiError::bad(format!("{} has no perfect player", game.name())))?
            .map_err(|e| ApiError::Internal(e.to_string()))?,
        "mcts" => {
            let settings = search_settings(game)?;
            let model = spec.model.clone().unwrap_or_else(|| default_model(game));
            let (evaluator, label) = evaluators::evaluator(Some(&model), game, &settings, seed)
                .map_err(ApiError::bad)?;
            // as `tabula gtp` plays: playouts mixed in where the game has them (Go)
            let evaluator = mixed(evaluator, game.uct_knowledge(), DEFAULT_LAMBDA, 1, seed);
            let mut config = settings.mcts(simulations(spec.sims, 800, limits)?, seed);
            config.time_limit = Some(time);
            Box::new(MctsAgent::new(config, evaluator, format!("mcts ({label})")))
        }
        "uct" => {
            let knowledge = game.uct_knowledge();
            let mut config = UctConfig {
                simulations: simulations(spec.sims, 20_000, limits)?,
                time_limit: Some(time),
                seed,
                ..UctConfig::default()
            };
            if knowledge.is_some() {
                // `tabula gtp`'s settings: RAVE and priors do the exploring.
                config.rave = 3000.0;
                config.exploration = 0.1;
            }
            Box::new(UctAgent::new(
                config,
                knowledge.map(|k| -> Box<dyn Knowledge<G>> { k }),
            ))
        }
        other => {
            return Err(ApiError::bad(format!(
                "unknown player {other:?}: perfect, mcts, uct or random"
            )))
        }
    })
}
