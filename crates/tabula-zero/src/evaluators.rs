//! Evaluators by name, the way every front end offers them: a weight file, the shipped
//! model of a game, or one of the built-in stand-ins (an untrained network, uniform
//! priors, random rollouts).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tabula_core::Game;
use tabula_nn::{search_evaluator, Architecture, Network, WeightFile};
use tabula_search::{
    CachedEvaluator, Evaluator, RolloutEvaluator, SearchSettings, UniformEvaluator,
};

use crate::ZeroError;

/// The names of the built-in evaluators, for menus and help texts.
pub const BUILT_IN: [&str; 3] = ["untrained", "uniform", "rollout"];

/// Where the shipped model of `game` is, if there is one: `models/<game>.safetensors`
/// (`:` written `-`, or left out: `go:9` → `go9`) under the current directory or under the source tree Tabula was
/// built from.
pub fn shipped_model(game: &str) -> Option<PathBuf> {
    // `go:9` ships as models/go9.safetensors; `connect4:6x5` would be connect4-6x5
    let files = [
        format!("{}.safetensors", game.replace(':', "-")),
        format!("{}.safetensors", game.replace(':', "")),
    ];
    [
        PathBuf::from("models"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models"),
    ]
    .into_iter()
    .flat_map(|dir| files.iter().map(move |f| dir.join(f)))
    .find(|p| p.is_file())
    .map(|p| p.canonicalize().unwrap_or(p))
}

/// Loads a weight file and checks that it was made for `game`.
pub fn load_network<G: Game>(path: &Path, game: &G) -> Result<Arc<Network>, ZeroError> {
    let file = WeightFile::load(path)?;
    file.check_game(game).map_err(|e| {
        ZeroError::Model(format!(
            "cannot use {} for {}: {e}",
            path.display(),
            game.name()
        ))
    })?;
    Ok(Arc::new(Network::from_weights(&file)?))
}

/// A freshly initialised network of `size` (e.g. `seed`) for `game`.
pub fn untrained_network<G: Game>(
    game: &G,
    size: &str,
    seed: u64,
) -> Result<Arc<Network>, ZeroError> {
    let arch = Architecture::preset(game, size)?;
    let file = WeightFile::initial(&arch, &game.name(), seed);
    Ok(Arc::new(Network::from_weights(&file)?))
}

/// The evaluator `spec` names — a `.safetensors` path or one of [`BUILT_IN`]; `None`:
/// the shipped model, else `untrained` — and a description of it. Networks evaluate up
/// to `search.eval_batch` positions at once.
pub fn evaluator<G: Game>(
    spec: Option<&str>,
    game: &G,
    search: &SearchSettings,
    seed: u64,
) -> Result<(Box<dyn Evaluator<G>>, String), ZeroError> {
    let spec = match spec {
        Some(s) => s.to_string(),
        None => shipped_model(&game.name())
            .map_or_else(|| "untrained".to_string(), |p| p.display().to_string()),
    };
    Ok(match spec.as_str() {
        "uniform" => (Box::new(UniformEvaluator), "uniform priors, value 0".into()),
        "rollout" => (
            Box::new(RolloutEvaluator::new(1, seed)),
            "uniform priors, random-playout value".into(),
        ),
        "untrained" => {
            let net = untrained_network(game, "seed", seed)?;
            let label = format!(
                "untrained {}x{} network (seed {seed})",
                net.arch().blocks,
                net.arch().channels
            );
            (Box::new(search_evaluator(net, game, search)?), label)
        }
        path => {
            let net = load_network(Path::new(path), game)?;
            let label = format!(
                "network {path} ({} blocks x {} channels)",
                net.arch().blocks,
                net.arch().channels
            );
            let eval = CachedEvaluator::new(search_evaluator(net, game, search)?, 1 << 16);
            (Box::new(eval), label)
        }
    })
}
