//! Live analysis: network-guided MCTS on a position, reported as it runs — visits,
//! prior and value of every candidate, principal variations — as one JSON answer or as
//! a stream of Server-Sent Events that stops when the client goes away.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{json, Value};
use tabula_games::Capabilities;
use tabula_search::mcts::Mcts;
use tabula_search::playout_mix::{mixed, DEFAULT_LAMBDA};
use tabula_zero::evaluators;

use crate::error::ApiError;
use crate::games::{side, PositionVisitor};
use crate::players::{default_model, search_settings, simulations, time_limit};
use crate::Limits;

/// Candidates whose principal variation is reported (the rest: statistics only).
const PV_MOVES: usize = 12;
/// Longest principal variation reported.
const PV_LENGTH: usize = 16;
/// Simulations between two looks at the clock and the client.
const CHUNK: usize = 64;

/// What to analyse and how long.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnalysisRequest {
    /// The game's specification.
    pub game: String,
    /// Moves from the start.
    #[serde(default)]
    pub moves: Vec<String>,
    /// The evaluator (see [`crate::players::PlayerSpec::model`]).
    pub model: Option<String>,
    /// Simulations in all (default 2,000; capped by the server).
    pub sims: Option<usize>,
    /// A time limit in seconds (capped by the server).
    pub seconds: Option<f64>,
    /// Seed of the evaluator's randomness.
    pub seed: Option<u64>,
}

impl AnalysisRequest {
    /// The position to analyse.
    pub fn position(&self) -> crate::games::Position {
        crate::games::Position {
            game: self.game.clone(),
            moves: self.moves.clone(),
        }
    }
}

/// The same request as URL query parameters (`moves` separated by commas), for
/// `EventSource`, which can only `GET`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LiveQuery {
    /// The game's specification.
    pub game: String,
    /// Moves from the start, separated by commas.
    #[serde(default)]
    pub moves: String,
    /// The evaluator.
    pub model: Option<String>,
    /// Simulations in all.
    pub sims: Option<usize>,
    /// A time limit in seconds.
    pub seconds: Option<f64>,
    /// Seed.
    pub seed: Option<u64>,
}

impl From<LiveQuery> for AnalysisRequest {
    fn from(q: LiveQuery) -> Self {
        AnalysisRequest {
            game: q.game,
            moves: q
                .moves
                .split(',')
                .map(str::trim)
                .filter(|m| !m.is_empty())
                .map(String::from)
                .collect(),
            model: q.model.filter(|m| !m.is_empty()),
            sims: q.sims,
            seconds: q.seconds,
            seed: q.seed,
        }
    }
}

/// Runs an analysis, handing a snapshot to `emit` at most every `every` and once at
/// the end (`"done": true`); stops early when `emit` returns false or `cancel` is set.
pub struct Analysis<'a, F> {
    /// The request.
    pub request: &'a AnalysisRequest,
    /// The server's caps.
    pub limits: Limits,
    /// Time between snapshots.
    pub every: Duration,
    /// Set when nobody wants the answer any more.
    pub cancel: &'a AtomicBool,
    /// Receives each snapshot; false stops the search.
    pub emit: F,
}

impl<F: FnMut(Value) -> bool> PositionVisitor for Analysis<'_, F> {
    type Output = ();

    fn visit<G: Capabilities>(mut self, game: G) -> Result<(), ApiError> {
        let req = self.request;
        let settings = search_settings(&game)?;
        let seed = req.seed.unwrap_or(42);
        let model = req.model.clone().unwrap_or_else(|| default_model(&game));
        let (evaluator, label) =
            evaluators::evaluator(Some(&model), &game, &settings, seed).map_err(ApiError::bad)?;
        // as `tabula gtp` plays: playouts mixed in where the game has them (Go)
        let mut evaluator = mixed(evaluator, game.uct_knowledge(), DEFAULT_LAMBDA, 1, seed);
        let total = simulations(req.sims, 2_000, self.limits)?;
        let limit = time_limit(req.seconds, self.limits)?;
        let started = Instant::now();
        let mut config = settings.mcts(CHUNK, seed);
        let mut tree = Mcts::new(game.clone(), config);
        let mut done_sims = 0;
        let mut last_emit = Instant::now();
        loop {
            let left = limit.saturating_sub(started.elapsed());
            config.simulations = CHUNK.min(total - done_sims).max(1);
            config.time_limit = Some(left);
            tree.set_config(config);
            let added = tree.search(&mut evaluator).simulations;
            done_sims += added;
            let finished = added == 0
                || done_sims >= total
                || started.elapsed() >= limit
                || game.is_terminal();
            if finished || last_emit.elapsed() >= self.every {
                last_emit = Instant::now();
                let snap = snapshot(&tree, &label, done_sims, started.elapsed(), finished);
                if !(self.emit)(snap) {
                    return Ok(());
                }
            }
            if finished || self.cancel.load(Ordering::Relaxed) {
                return Ok(());
            }
        }
    }
}

/// The tree's statistics as JSON, values from the side to move's view (−1 … 1).
fn snapshot<G: Capabilities>(
    tree: &Mcts<G>,
    label: &str,
    simulations: usize,
    elapsed: Duration,
    done: bool,
) -> Value {
    let game = tree.game();
    let result = tree.result();
    let children: Vec<Value> = result
        .children
        .iter()
        .enumerate()
        .map(|(i, c)| {
            // Each move's name and where it lands, in the position it is played in.
            let (pv, points): (Vec<String>, Vec<Value>) = if i < PV_MOVES && c.visits > 0 {
                tree.principal_variation(c.mv, PV_LENGTH)
                    .into_iter()
                    .scan(game.clone(), |g, mv| {
                        let step = (g.format_move(mv), json!(g.move_point(mv)));
                        g.play(mv);
                        Some(step)
                    })
                    .unzip()
            } else {
                (Vec::new(), Vec::new())
            };
            json!({
                "move": game.format_move(c.mv),
                "point": game.move_point(c.mv),
                "visits": c.visits,
                "prior": c.prior,
                "q": c.q,
                "pv": pv,
                "pv_points": points,
            })
        })
        .collect();
    json!({
        "game": game.name(),
        "to_move": side(game.to_move()),
        "evaluator": label,
        "simulations": simulations,
        "root_visits": result.root_visits,
        "value": result.value,
        "best": result.best().map(|m| game.format_move(m)),
        "children": children,
        "seconds": elapsed.as_secs_f64(),
        "done": done,
    })
}
