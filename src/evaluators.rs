//! Turning `--model` into an evaluator: a weight file, a shipped model, or one of the
//! built-in stand-ins (an untrained network, uniform priors, random rollouts).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::Args;
use tabula_core::Game;
use tabula_games::Capabilities;
use tabula_nn::{Architecture, Network, NetworkEvaluator, WeightFile};
use tabula_search::{
    CachedEvaluator, Evaluator, RolloutEvaluator, SearchSettings, UniformEvaluator,
};
use tabula_zero::ZeroConfig;

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
        s.validate().map_err(anyhow::Error::msg)?;
        Ok(s)
    }
}

/// The help text of `--model`, shared by the subcommands that take it.
pub const MODEL_HELP: &str = "Evaluator: a .safetensors weight file, or `untrained` (a freshly initialised \
network, seed 000's experiment), `uniform` (uniform priors, value 0) or `rollout` (uniform priors, \
random-playout value). Default: the shipped model models/GAME.safetensors if there is one, else `untrained`";

/// Where the shipped model of `game` is, if there is one: `models/<game>.safetensors`
/// under the current directory or under the source tree the binary was built from.
pub fn shipped_model(game: &str) -> Option<PathBuf> {
    let file = format!("{}.safetensors", game.replace(':', "-"));
    [
        PathBuf::from("models"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("models"),
    ]
    .into_iter()
    .map(|dir| dir.join(&file))
    .find(|p| p.is_file())
}

/// Loads a weight file and checks it against `game`.
pub fn load_network<G: Game>(path: &Path, game: &G) -> Result<Arc<Network>> {
    let file = WeightFile::load(path)?;
    file.check_game(game)
        .with_context(|| format!("cannot use {} for {}", path.display(), game.name()))?;
    Ok(Arc::new(Network::from_weights(&file)?))
}

/// A freshly initialised network of `size` (e.g. `seed`) for `game`.
pub fn untrained_network<G: Game>(game: &G, size: &str, seed: u64) -> Result<Arc<Network>> {
    let arch = Architecture::preset(game, size)?;
    let file = WeightFile::initial(&arch, &game.name(), seed);
    Ok(Arc::new(Network::from_weights(&file)?))
}

/// The evaluator `spec` names (see [`MODEL_HELP`]) and a description of it.
/// Networks evaluate up to `search.eval_batch` positions at once.
pub fn evaluator<G: Game>(
    spec: Option<&str>,
    game: &G,
    search: &SearchSettings,
    seed: u64,
) -> Result<(Box<dyn Evaluator<G>>, String)> {
    let shipped = shipped_model(&game.name());
    let spec = match spec {
        Some(s) => s.to_string(),
        None => shipped
            .as_ref()
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
            (
                Box::new(NetworkEvaluator::new(net, game, search.eval_batch)?),
                label,
            )
        }
        path => {
            let net = load_network(Path::new(path), game)?;
            let label = format!(
                "network {path} ({} blocks x {} channels)",
                net.arch().blocks,
                net.arch().channels
            );
            let eval = CachedEvaluator::new(
                NetworkEvaluator::new(net, game, search.eval_batch)?,
                1 << 16,
            );
            (Box::new(eval), label)
        }
    })
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
