//! `tabula analysis`: KataGo's JSON analysis engine protocol (its
//! `docs/Analysis_Engine.md`) on standard input and output, so that KaTrain-style
//! clients and scripts can drive Tabula.
//!
//! One query per line, one response per line. A query names a position (`moves` after
//! optional `initialStones`, `rules`, `komi`, `boardXSize`/`boardYSize`), the turns to
//! analyse, a visit budget and what to include (ownership, policy); each analysed turn
//! gets one final response (`isDuringSearch: false`), and partial ones every
//! `reportDuringSearchEvery` seconds. The actions `query_version`, `clear_cache`,
//! `terminate` and `terminate_all` are answered at once, also while a search runs. A
//! malformed query gets an error object (`{"error", "field", "id"}`) and the engine goes
//! on; it ends when its input does, after the queries already read.
//!
//! Every game can be analysed: Go in KataGo's exact format (GTP vertices, `pass`), other
//! games with their own move names, chosen by `--game` or a query's `"game"` field (a
//! Tabula extension). Values are reported from Black's (the first player's) side, as
//! KataGo's `reportAnalysisWinratesAs = BLACK`, unless `--report-as side` asks for the
//! side to move.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use serde_json::{json, Map, Value};
use tabula_core::{Game, Player};
use tabula_games::registry::{self, GameVisitor};
use tabula_games::Capabilities;
use tabula_search::analysis::{Analysis, AnalysisLimits, Analyzer, MctsAnalyzer, UctAnalyzer};
use tabula_search::uct::{playout_ownership, Light, UctConfig};

use crate::evaluators;

/// Run KataGo's JSON analysis engine protocol on stdin/stdout (for KaTrain-style clients
/// and scripts), for Go and every other game.
///
/// Example query (one line):
/// `{"id":"a","moves":[["B","E5"],["W","C3"]],"rules":"tromp-taylor","komi":7.5,"boardXSize":9,"boardYSize":9,"maxVisits":200}`
#[derive(Args)]
pub struct AnalysisArgs {
    /// The game of queries that name none (KataGo's never do: Go, sized by
    /// boardXSize/boardYSize).
    #[arg(long, default_value = "go")]
    game: String,
    /// The search: `auto` (network MCTS where --model is given or the game has a
    /// shipped model, else UCT over the game's playouts), `mcts` or `uct`.
    #[arg(long, default_value = "auto")]
    player: String,
    #[arg(long, help = evaluators::MODEL_HELP)]
    model: Option<String>,
    /// Visits per position for queries without maxVisits.
    #[arg(long, default_value_t = 500, value_parser = crate::input::count(1, 1_000_000_000))]
    max_visits: usize,
    /// Longest search of one position, in seconds, whatever maxVisits asks.
    #[arg(long, default_value_t = 60.0, value_parser = crate::input::seconds(0.001, 86_400.0))]
    max_time: f64,
    /// Whose side values are reported from: `black` (KataGo's default for this engine),
    /// `white`, or `side` (the side to move).
    #[arg(long, default_value = "black")]
    report_as: String,
    /// Seed of the searches.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    mix: evaluators::MixFlags,
}

/// Query fields read here; any other one gets a warning.
const FIELDS: &[&str] = &[
    "id",
    "game",
    "moves",
    "initialStones",
    "initialPlayer",
    "rules",
    "komi",
    "boardXSize",
    "boardYSize",
    "analyzeTurns",
    "maxVisits",
    "includeOwnership",
    "includePolicy",
    "includePVVisits",
    "reportDuringSearchEvery",
    "avoidMoves",
    "allowMoves",
    "priority",
    "priorities",
];

/// Query fields KataGo has and Tabula does not act on: accepted with a warning.
const IGNORED: &[&str] = &[
    "rootPolicyTemperature",
    "rootFpuReductionMax",
    "includeMovesOwnership",
    "overrideSettings",
    "whiteHandicapBonus",
];

/// What a response adds on request (besides the ownership, which costs a search).
#[derive(Clone, Copy)]
struct Include {
    /// `includePolicy`: the root's priors over the whole action space.
    policy: bool,
    /// `includePVVisits`: each principal variation's visits.
    pv_visits: bool,
}

/// Where responses go: one line each, whole, from either thread.
#[derive(Clone)]
struct Out(Arc<Mutex<io::Stdout>>);

impl Out {
    fn send(&self, v: &Value) {
        let mut out = match self.0.lock() {
            Ok(o) => o,
            Err(poisoned) => poisoned.into_inner(),
        };
        // a closed stdout leaves nobody to tell
        let _ = writeln!(out, "{v}").and_then(|_| out.flush());
    }

    fn error(&self, msg: &str, field: Option<&str>, id: Option<&str>) {
        let mut e = json!({ "error": msg });
        if let Some(f) = field {
            e["field"] = json!(f);
        }
        if let Some(i) = id {
            e["id"] = json!(i);
        }
        self.send(&e);
    }

    fn warning(&self, msg: &str, field: &str, id: &str) {
        self.send(&json!({ "warning": msg, "field": field, "id": id }));
    }
}

/// A termination: the query id (`None`: every query) and its turns (`None`: all).
type Termination = (Option<String>, Option<Vec<usize>>);

/// Terminations asked for, and the search they may stop.
#[derive(Default)]
struct Control {
    /// `(id, turns)`: queries to stop (`None` turns: all of them; `None` id: every query).
    terminated: Mutex<Vec<Termination>>,
    /// The query and turn being searched.
    current: Mutex<Option<(String, usize)>>,
    /// Set to stop the current search.
    stop: AtomicBool,
}

fn locked<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}

impl Control {
    fn is_terminated(&self, id: &str, turn: usize) -> bool {
        locked(&self.terminated).iter().any(|(tid, turns)| {
            tid.as_deref().is_none_or(|t| t == id)
                && turns.as_ref().is_none_or(|t| t.contains(&turn))
        })
    }

    fn terminate(&self, id: Option<String>, turns: Option<Vec<usize>>) {
        locked(&self.terminated).push((id, turns));
        if let Some((cid, turn)) = locked(&self.current).as_ref() {
            if self.is_terminated(cid, *turn) {
                self.stop.store(true, Ordering::SeqCst);
            }
        }
    }

    /// Marks `(id, turn)` as being searched; `false` if it was terminated already.
    fn start(&self, id: &str, turn: usize) -> bool {
        self.stop.store(false, Ordering::SeqCst);
        *locked(&self.current) = Some((id.to_string(), turn));
        // a terminate that came before `current` was set is seen here
        !self.is_terminated(id, turn)
    }

    fn finish(&self) {
        *locked(&self.current) = None;
    }
}

pub fn run(args: AnalysisArgs) -> Result<ExitCode> {
    if !["auto", "mcts", "uct"].contains(&args.player.as_str()) {
        anyhow::bail!("--player must be auto, mcts or uct");
    }
    if args.player == "uct" && args.model.is_some() {
        anyhow::bail!("--model is for network MCTS, not --player uct");
    }
    if !["black", "white", "side"].contains(&args.report_as.as_str()) {
        anyhow::bail!("--report-as must be black, white or side");
    }
    registry::canonical_name(&args.game)?;
    let out = Out(Arc::new(Mutex::new(io::stdout())));
    let control = Arc::new(Control::default());
    let (tx, rx) = mpsc::channel::<Map<String, Value>>();
    {
        let out = out.clone();
        let control = control.clone();
        std::thread::spawn(move || read_queries(&out, &control, &tx));
    }
    let mut queue = VecDeque::new();
    // Queries are searched one after another, in the order they came.
    while let Some(query) = queue.pop_front().or_else(|| rx.recv().ok()) {
        answer(&args, &out, &control, &query);
        queue.extend(rx.try_iter());
    }
    Ok(ExitCode::SUCCESS)
}

/// Reads standard input: actions are answered here at once, queries go to `tx`.
fn read_queries(out: &Out, control: &Control, tx: &mpsc::Sender<Map<String, Value>>) {
    for line in crate::input::lines(io::stdin().lock()) {
        let text = match line {
            Ok((_, Some(t))) => t,
            Ok((n, None)) => {
                out.error(&format!("line {n} is not UTF-8"), None, None);
                continue;
            }
            Err(e) => {
                out.error(&format!("cannot read input: {e}"), None, None);
                break;
            }
        };
        if text.trim().is_empty() {
            continue;
        }
        let query = match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(q)) => q,
            Ok(_) => {
                out.error("a query must be a JSON object", None, None);
                continue;
            }
            Err(e) => {
                out.error(&format!("could not parse JSON: {e}"), None, None);
                continue;
            }
        };
        let Some(id) = query.get("id").and_then(Value::as_str).map(String::from) else {
            out.error("a query needs an \"id\" string", Some("id"), None);
            continue;
        };
        let Some(action) = query.get("action") else {
            if tx.send(query).is_err() {
                break;
            }
            continue;
        };
        match action.as_str() {
            Some("query_version") => {
                let mut reply = query.clone();
                reply.insert("version".into(), json!(env!("CARGO_PKG_VERSION")));
                reply.insert("git_hash".into(), json!("<omitted>"));
                out.send(&Value::Object(reply));
            }
            // no cache outlives a query here
            Some("clear_cache") => out.send(&Value::Object(query)),
            Some("terminate") => {
                let Some(target) = query.get("terminateId").and_then(Value::as_str) else {
                    out.error(
                        "terminate needs a \"terminateId\" string",
                        Some("terminateId"),
                        Some(&id),
                    );
                    continue;
                };
                let turns = match query.get("turnNumbers") {
                    None => None,
                    Some(v) => match turn_list(v) {
                        Some(t) => Some(t),
                        None => {
                            out.error(
                                "turnNumbers must be a list of turn numbers",
                                Some("turnNumbers"),
                                Some(&id),
                            );
                            continue;
                        }
                    },
                };
                control.terminate(Some(target.to_string()), turns);
                out.send(&Value::Object(query));
            }
            Some("terminate_all") => {
                control.terminate(None, None);
                out.send(&Value::Object(query));
            }
            _ => out.error(
                &format!("unknown action {action}"),
                Some("action"),
                Some(&id),
            ),
        }
    }
}

fn turn_list(v: &Value) -> Option<Vec<usize>> {
    v.as_array()?
        .iter()
        .map(|t| t.as_u64().and_then(|t| usize::try_from(t).ok()))
        .collect()
}

/// A query's field error: the message and the field.
type FieldError = (String, &'static str);

fn bad(field: &'static str, msg: impl Into<String>) -> FieldError {
    (msg.into(), field)
}

/// The game spec a query names: its `game` (or `--game`), sized by boardXSize and
/// boardYSize when it gives them.
fn game_spec(args: &AnalysisArgs, q: &Map<String, Value>) -> Result<String, FieldError> {
    let spec = match q.get("game") {
        None => args.game.clone(),
        Some(v) => v
            .as_str()
            .ok_or_else(|| bad("game", "game must be a string"))?
            .to_string(),
    };
    let size = |field: &'static str| -> Result<Option<u64>, FieldError> {
        match q.get(field) {
            None => Ok(None),
            Some(v) => v
                .as_u64()
                .filter(|&n| (1..=64).contains(&n))
                .map(Some)
                .ok_or_else(|| bad(field, format!("{field} must be an integer from 1 to 64"))),
        }
    };
    match (size("boardXSize")?, size("boardYSize")?) {
        (None, None) => Ok(spec),
        (Some(x), Some(y)) => {
            let name = spec.split(':').next().unwrap_or(&spec);
            Ok(format!("{name}:{x}x{y}"))
        }
        (None, Some(_)) => Err(bad("boardXSize", "boardXSize is missing")),
        (Some(_), None) => Err(bad("boardYSize", "boardYSize is missing")),
    }
}

fn answer(args: &AnalysisArgs, out: &Out, control: &Control, q: &Map<String, Value>) {
    let id = q
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    for key in q.keys() {
        if IGNORED.contains(&key.as_str()) {
            out.warning("this field is not supported and was ignored", key, &id);
        } else if !FIELDS.contains(&key.as_str()) {
            out.warning("unexpected field, ignored", key, &id);
        }
    }
    let result = game_spec(args, q).and_then(|spec| {
        registry::visit(
            &spec,
            Query {
                args,
                out,
                control,
                q,
                id: &id,
            },
        )
        .map_err(|e| {
            bad(
                if q.contains_key("boardXSize") {
                    "boardXSize"
                } else {
                    "game"
                },
                e.to_string(),
            )
        })?
    });
    if let Err((msg, field)) = result {
        out.error(&msg, Some(field), Some(&id));
    }
}

struct Query<'a> {
    args: &'a AnalysisArgs,
    out: &'a Out,
    control: &'a Control,
    q: &'a Map<String, Value>,
    id: &'a str,
}

fn player_of(v: &Value) -> Option<Player> {
    match v.as_str()?.to_ascii_uppercase().as_str() {
        "B" | "BLACK" => Some(Player::First),
        "W" | "WHITE" => Some(Player::Second),
        _ => None,
    }
}

/// The text of a rules value for [`Capabilities::set_option`].
fn option_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn flag(q: &Map<String, Value>, field: &'static str) -> Result<bool, FieldError> {
    match q.get(field) {
        None => Ok(false),
        Some(v) => v
            .as_bool()
            .ok_or_else(|| bad(field, format!("{field} must be true or false"))),
    }
}

impl Query<'_> {
    /// The position before the first move: rules, komi, setup stones, first player.
    fn setup<G: Capabilities>(&self, game: &mut G) -> Result<(), FieldError> {
        let q = self.q;
        match q.get("rules") {
            None => {}
            Some(Value::Object(fields)) => {
                for (k, v) in fields {
                    if let Some(note) = game
                        .set_option(k, &option_text(v))
                        .map_err(|e| bad("rules", e))?
                    {
                        self.out.warning(&note, "rules", self.id);
                    }
                }
            }
            Some(v @ Value::String(_)) => {
                if let Some(note) = game
                    .set_option("rules", &option_text(v))
                    .map_err(|e| bad("rules", e))?
                {
                    self.out.warning(&note, "rules", self.id);
                }
            }
            Some(_) => return Err(bad("rules", "rules must be a string or an object")),
        }
        if let Some(k) = q.get("komi") {
            if !k.is_number() {
                return Err(bad("komi", "komi must be a number"));
            }
            game.set_option("komi", &k.to_string())
                .map_err(|e| bad("komi", e))?;
        }
        if let Some(stones) = q.get("initialStones") {
            let stones = stones.as_array().ok_or_else(|| {
                bad(
                    "initialStones",
                    "initialStones must be a list of [player, location]",
                )
            })?;
            for (i, s) in stones.iter().enumerate() {
                let (p, mv) = self
                    .player_move(game, s)
                    .map_err(|e| bad("initialStones", format!("stone {i}: {e}")))?;
                let p =
                    p.ok_or_else(|| bad("initialStones", format!("stone {i}: it needs a player")))?;
                game.place_setup_stone(p, mv)
                    .map_err(|e| bad("initialStones", format!("stone {i}: {e}")))?;
            }
        }
        if let Some(p) = q.get("initialPlayer") {
            let p = player_of(p)
                .ok_or_else(|| bad("initialPlayer", "initialPlayer must be \"B\" or \"W\""))?;
            game.give_turn(p).map_err(|e| bad("initialPlayer", e))?;
        }
        Ok(())
    }

    /// A `[player, move]` pair (or a bare move string, for games whose turns alternate).
    fn player_move<G: Game>(
        &self,
        game: &G,
        v: &Value,
    ) -> Result<(Option<Player>, G::Move), String> {
        let (player, text) = match v {
            Value::String(s) => (None, s.as_str()),
            Value::Array(pair) if pair.len() == 2 => {
                let p = player_of(&pair[0]).ok_or_else(|| format!("bad player {}", pair[0]))?;
                let m = pair[1]
                    .as_str()
                    .ok_or_else(|| format!("bad location {}", pair[1]))?;
                (Some(p), m)
            }
            _ => return Err(format!("expected [player, location], not {v}")),
        };
        let mv = game.parse_move(text).map_err(|e| e.to_string())?;
        Ok((player, mv))
    }

    /// The position after every move: turn 0 is the setup.
    fn positions<G: Capabilities>(&self, mut game: G) -> Result<Vec<G>, FieldError> {
        let moves = match self.q.get("moves") {
            None => return Err(bad("moves", "moves is required (an empty list for none)")),
            Some(m) => m
                .as_array()
                .ok_or_else(|| bad("moves", "moves must be a list of [player, location]"))?,
        };
        let mut positions = vec![game.clone()];
        for (i, m) in moves.iter().enumerate() {
            let (p, mv) = self
                .player_move(&game, m)
                .map_err(|e| bad("moves", format!("move {i}: {e}")))?;
            if let Some(p) = p {
                game.give_turn(p)
                    .map_err(|e| bad("moves", format!("move {i}: {e}")))?;
            }
            game.try_play(mv).map_err(|e| {
                bad(
                    "moves",
                    format!("illegal move {i} ({}): {e}", game.format_move(mv)),
                )
            })?;
            positions.push(game.clone());
        }
        Ok(positions)
    }

    fn analyzer<G: Capabilities>(
        &self,
        game: &G,
    ) -> Result<(Box<dyn Analyzer<G>>, String), FieldError> {
        let args = self.args;
        let model = args
            .model
            .clone()
            .or_else(|| evaluators::shipped_model(&game.name()).map(|p| p.display().to_string()));
        let mcts = match args.player.as_str() {
            "mcts" => true,
            "uct" => false,
            _ => model.is_some(),
        };
        if mcts {
            let Some(model) = model else {
                return Err(bad(
                    "game",
                    format!(
                        "no shipped network for {}: start with --model FILE (or untrained, uniform, rollout), or --player uct",
                        game.name()
                    ),
                ));
            };
            let model = Some(model);
            let settings = crate::evaluators::SearchFlags::default()
                .settings(game)
                .map_err(|e| bad("game", format!("{e:#}")))?;
            let (evaluator, label) =
                evaluators::evaluator(model.as_deref(), game, &settings, args.seed)
                    .map_err(|e| bad("game", format!("{e:#}")))?;
            let (evaluator, label) =
                args.mix
                    .mix(evaluator, label, game.uct_knowledge(), args.seed);
            let a = MctsAnalyzer {
                evaluator,
                settings,
                seed: args.seed,
                root_actions: None,
            };
            return Ok((Box::new(a), label));
        }
        let (config, knowledge, label) = match game.uct_knowledge() {
            // as `tabula gtp` plays: RAVE and little exploration, the priors explore
            Some(k) => (
                UctConfig {
                    exploration: 0.1,
                    rave: 3000.0,
                    seed: args.seed,
                    ..UctConfig::default()
                },
                k,
                "uct with the game's playouts",
            ),
            None => (
                UctConfig {
                    seed: args.seed,
                    ..UctConfig::default()
                },
                Box::new(Light) as Box<dyn tabula_search::Knowledge<G> + Send + Sync>,
                "uct with random playouts",
            ),
        };
        Ok((
            Box::new(UctAnalyzer {
                config,
                knowledge,
                root_actions: None,
            }),
            label.to_string(),
        ))
    }
}

/// One `avoidMoves`/`allowMoves` entry: `{"player", "moves", "untilDepth"}`.
struct MoveRule {
    player: Player,
    moves: Vec<String>,
    until_depth: u64,
}

/// The entries of `avoidMoves` or `allowMoves` (KataGo allows one `allowMoves` entry).
fn move_rules(q: &Map<String, Value>, field: &'static str) -> Result<Vec<MoveRule>, FieldError> {
    let Some(v) = q.get(field) else {
        return Ok(Vec::new());
    };
    let shape = || {
        bad(
            field,
            format!("{field} must be a list of {{\"player\", \"moves\", \"untilDepth\"}}"),
        )
    };
    let entries = v.as_array().ok_or_else(shape)?;
    if field == "allowMoves" && entries.len() > 1 {
        return Err(bad(field, "allowMoves takes one entry at most"));
    }
    entries
        .iter()
        .map(|e| {
            let e = e.as_object().ok_or_else(shape)?;
            let player = e
                .get("player")
                .and_then(player_of)
                .ok_or_else(|| bad(field, format!("{field}: player must be \"B\" or \"W\"")))?;
            let moves = e
                .get("moves")
                .and_then(Value::as_array)
                .and_then(|m| m.iter().map(|x| x.as_str().map(str::to_string)).collect())
                .ok_or_else(|| bad(field, format!("{field}: moves must be a list of locations")))?;
            let until_depth = e
                .get("untilDepth")
                .and_then(Value::as_u64)
                .filter(|&d| d >= 1)
                .ok_or_else(|| {
                    bad(
                        field,
                        format!("{field}: untilDepth must be an integer >= 1"),
                    )
                })?;
            Ok(MoveRule {
                player,
                moves,
                until_depth,
            })
        })
        .collect()
}

impl Query<'_> {
    /// The root actions `allowMoves` and `avoidMoves` leave at `pos` (`None`: no rule
    /// applies). Rules act on the root's moves only; one whose `untilDepth` reaches a
    /// move below the root is warned about once.
    fn root_actions<G: Capabilities>(
        &self,
        pos: &G,
        allow: &[MoveRule],
        avoid: &[MoveRule],
        warned: &mut bool,
    ) -> Result<Option<Vec<usize>>, FieldError> {
        if allow.is_empty() && avoid.is_empty() {
            return Ok(None);
        }
        if !*warned
            && allow
                .iter()
                .chain(avoid)
                // depth 0 is the root, the side to move's; its next move is at depth 2
                .any(|r| r.until_depth > if r.player == pos.to_move() { 2 } else { 1 })
        {
            *warned = true;
            self.out.warning(
                "allowMoves/avoidMoves restrict the moves at the root only; deeper plies are searched in full",
                if allow.is_empty() { "avoidMoves" } else { "allowMoves" },
                self.id,
            );
        }
        let actions = |rules: &[MoveRule], field: &'static str| -> Result<Vec<usize>, FieldError> {
            let mut out = Vec::new();
            for r in rules.iter().filter(|r| r.player == pos.to_move()) {
                for m in &r.moves {
                    let mv = pos
                        .parse_move(m)
                        .map_err(|e| bad(field, format!("{field}: {m}: {e}")))?;
                    out.push(pos.action_of(mv));
                }
            }
            Ok(out)
        };
        let allowed = actions(allow, "allowMoves")?;
        let avoided = actions(avoid, "avoidMoves")?;
        let applies_allow = allow.iter().any(|r| r.player == pos.to_move());
        let left: Vec<usize> = pos
            .legal_moves()
            .into_iter()
            .map(|m| pos.action_of(m))
            .filter(|a| (!applies_allow || allowed.contains(a)) && !avoided.contains(a))
            .collect();
        if left.is_empty() && !pos.is_terminal() {
            let field = if applies_allow {
                "allowMoves"
            } else {
                "avoidMoves"
            };
            return Err(bad(
                field,
                "allowMoves/avoidMoves leave no legal move to search",
            ));
        }
        Ok(Some(left))
    }
}

impl GameVisitor for Query<'_> {
    type Output = Result<(), FieldError>;

    fn visit<G: Capabilities>(self, mut game: G) -> Result<(), FieldError> {
        let q = self.q;
        self.setup(&mut game)?;
        let positions = self.positions(game)?;
        let last = positions.len() - 1;
        let turns = match q.get("analyzeTurns") {
            None => vec![last],
            Some(v) => turn_list(v)
                .filter(|t| t.iter().all(|&t| t <= last))
                .ok_or_else(|| {
                    bad(
                        "analyzeTurns",
                        format!("analyzeTurns must be a list of turns from 0 to {last}"),
                    )
                })?,
        };
        let max_visits = match q.get("maxVisits") {
            None => self.args.max_visits as u64,
            Some(v) => v
                .as_u64()
                .filter(|&n| (1..=1_000_000_000).contains(&n))
                .ok_or_else(|| bad("maxVisits", "maxVisits must be an integer from 1 to 10^9"))?,
        };
        let every = match q.get("reportDuringSearchEvery") {
            None => None,
            Some(v) => Some(
                v.as_f64()
                    .filter(|s| s.is_finite() && *s >= 0.001 && *s <= 86_400.0)
                    .map(Duration::from_secs_f64)
                    .ok_or_else(|| {
                        bad(
                            "reportDuringSearchEvery",
                            "reportDuringSearchEvery must be seconds from 0.001 to 86400",
                        )
                    })?,
            ),
        };
        let include_ownership = flag(q, "includeOwnership")?;
        let include = Include {
            policy: flag(q, "includePolicy")?,
            pv_visits: flag(q, "includePVVisits")?,
        };
        let (allow, avoid) = (move_rules(q, "allowMoves")?, move_rules(q, "avoidMoves")?);
        let mut warned = false;
        let roots = turns
            .iter()
            .map(|&t| self.root_actions(&positions[t], &allow, &avoid, &mut warned))
            .collect::<Result<Vec<_>, _>>()?;
        let (mut analyzer, _label) = self.analyzer(&positions[0])?;
        let limits = AnalysisLimits {
            max_visits: Some(max_visits),
            max_time: Some(Duration::from_secs_f64(self.args.max_time)),
            report_every: every,
            pv_length: 15,
        };
        for (turn, root) in turns.into_iter().zip(roots) {
            let pos = &positions[turn];
            analyzer.restrict_root(root);
            if !self.control.start(self.id, turn) {
                self.out.send(&json!({"id": self.id, "isDuringSearch": false, "noResults": true, "turnNumber": turn}));
                continue;
            }
            let ownership = if include_ownership {
                // a network without an ownership head leaves it to the playouts
                let own = analyzer.ownership(pos).or_else(|| {
                    pos.uct_knowledge()
                        .and_then(|k| playout_ownership(&k, pos, 400, self.args.seed))
                });
                if own.is_none() {
                    self.out.warning(
                        "this game has no ownership to report",
                        "includeOwnership",
                        self.id,
                    );
                }
                own
            } else {
                None
            };
            let respond = |a: &Analysis<G::Move>, during: bool| {
                self.out
                    .send(&self.response(pos, turn, a, during, ownership.as_deref(), include));
            };
            let a = analyzer.analyze(pos, &limits, &self.control.stop, &mut |a| respond(a, true));
            respond(&a, false);
            self.control.finish();
        }
        Ok(())
    }
}

impl Query<'_> {
    /// Whether values are flipped from the side to move's to the reporting side's.
    fn flip<G: Game>(&self, pos: &G) -> bool {
        match self.args.report_as.as_str() {
            "black" => pos.to_move() == Player::Second,
            "white" => pos.to_move() == Player::First,
            _ => false,
        }
    }

    fn response<G: Capabilities>(
        &self,
        pos: &G,
        turn: usize,
        a: &Analysis<G::Move>,
        during: bool,
        ownership: Option<&[f32]>,
        include: Include,
    ) -> Value {
        let flip = self.flip(pos);
        let rate = |p: f64| if flip { 1.0 - p } else { p };
        let lead = |s: f64| if flip { -s } else { s };
        let infos: Vec<Value> = a
            .moves
            .iter()
            .enumerate()
            .filter(|(_, m)| m.visits > 0)
            .map(|(order, m)| {
                // the bound stays a lower bound on the reported side's rate
                let lcb = if flip {
                    1.0 - (2.0 * m.win_rate - m.lcb)
                } else {
                    m.lcb
                };
                let mut v = json!({
                    "move": pos.format_move(m.mv),
                    "visits": m.visits,
                    "winrate": rate(m.win_rate),
                    "prior": m.prior,
                    "lcb": lcb,
                    "utility": 2.0 * rate(m.win_rate) - 1.0,
                    "utilityLcb": 2.0 * lcb - 1.0,
                    "order": order,
                    "pv": m.pv.iter().map(|&x| pos.format_move(x)).collect::<Vec<_>>(),
                });
                if let Some(s) = m.score_lead {
                    v["scoreLead"] = json!(lead(s));
                    v["scoreMean"] = json!(lead(s));
                }
                if let Some(sd) = m.score_stdev {
                    v["scoreStdev"] = json!(sd);
                }
                if include.pv_visits {
                    v["pvVisits"] = json!(m.pv_visits);
                }
                v
            })
            .collect();
        let hash = |g: &G| g.position_hash();
        let sym = (0..pos.symmetry_count())
            .map(|s| hash(&pos.transformed(s)))
            .min()
            .unwrap_or(hash(pos));
        let mut root = json!({
            "visits": a.visits,
            "winrate": rate(a.win_rate),
            "utility": 2.0 * rate(a.win_rate) - 1.0,
            "thisHash": format!("{:016X}", hash(pos)),
            "symHash": format!("{:016X}", sym),
            "currentPlayer": if pos.to_move() == Player::First { "B" } else { "W" },
        });
        if let Some(s) = a.score_lead {
            root["scoreLead"] = json!(lead(s));
        }
        let mut r = json!({
            "id": self.id,
            "isDuringSearch": during,
            "turnNumber": turn,
            "moveInfos": infos,
            "rootInfo": root,
        });
        if let Some(own) = ownership {
            // +1 the first player; from the reporting side's view
            let sign = match self.args.report_as.as_str() {
                "white" => -1.0,
                "side" if pos.to_move() == Player::Second => -1.0,
                _ => 1.0,
            };
            r["ownership"] = json!(own.iter().map(|&o| f64::from(o) * sign).collect::<Vec<_>>());
        }
        if include.policy {
            let mut policy = vec![-1.0f64; pos.action_count()];
            for m in &a.moves {
                policy[pos.action_of(m.mv)] = m.prior;
            }
            r["policy"] = json!(policy);
        }
        r
    }
}
