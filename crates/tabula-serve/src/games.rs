//! The board-game API: the catalogue, a position's state, a player's move and the exact
//! solver's view. Requests name a game and the moves played from its start, so the
//! server keeps no game state and undo is dropping the last move.

use serde::Deserialize;
use serde_json::{json, Value};
use tabula_core::{Outcome, Player};
use tabula_games::registry::{self, GameVisitor, GAMES};
use tabula_games::Capabilities;
use tabula_search::exact::INVALID_MOVE;

use crate::error::ApiError;
use crate::players::{self, PlayerSpec};
use crate::Limits;

/// A position: the game (as `tabula` names it, e.g. `go:9`) and the moves from its start.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Position {
    /// The game's specification.
    pub game: String,
    /// Moves in the game's own notation (`D4`, `pass`, a column number, a cell number).
    #[serde(default)]
    pub moves: Vec<String>,
}

/// At most this many moves in a request (a 19x19 game with captures stays far below).
pub const MAX_MOVES: usize = 2_000;

impl Position {
    /// Builds the game and hands it, with the moves played, to `f`.
    pub fn visit<F: PositionVisitor>(&self, f: F) -> Result<F::Output, ApiError> {
        if self.moves.len() > MAX_MOVES {
            return Err(ApiError::bad(format!(
                "at most {MAX_MOVES} moves in a position"
            )));
        }
        registry::visit(&self.game, Played(self, f)).map_err(ApiError::bad)?
    }
}

struct Replayed;

impl PositionVisitor for Replayed {
    type Output = ();
    fn visit<G: Capabilities>(self, _game: G) -> Result<(), ApiError> {
        Ok(())
    }
}

impl Position {
    /// Checks that the game exists and every move is legal.
    pub fn check(&self) -> Result<(), ApiError> {
        self.visit(Replayed)
    }
}

/// Something done with a position whatever its game.
pub trait PositionVisitor {
    /// What it returns.
    type Output;
    /// Called with the game after the moves.
    fn visit<G: Capabilities>(self, game: G) -> Result<Self::Output, ApiError>;
}

struct Played<'a, F>(&'a Position, F);

impl<F: PositionVisitor> GameVisitor for Played<'_, F> {
    type Output = Result<F::Output, ApiError>;
    fn visit<G: Capabilities>(self, mut game: G) -> Self::Output {
        for (i, text) in self.0.moves.iter().enumerate() {
            game.play_text(text)
                .map_err(|e| ApiError::bad(format!("move {} ({text:?}): {e}", i + 1)))?;
        }
        self.1.visit(game)
    }
}

/// The side's number in JSON: 1 moves first, 2 second.
pub fn side(p: Player) -> u8 {
    p.index() as u8 + 1
}

/// A move as JSON: its name and its point on the board view (`null` for a pass).
pub fn move_json<G: Capabilities>(game: &G, mv: G::Move) -> Value {
    json!({ "move": game.format_move(mv), "point": game.move_point(mv) })
}

/// Everything a front end draws for a position.
pub fn state_json<G: Capabilities>(game: &G, moves: &[String]) -> Value {
    let view = game.board_view();
    let outcome = game.outcome().map(|o| {
        let pieces = view.as_ref().map_or(["first", "second"], |v| v.pieces);
        match o {
            Outcome::Draw => json!({"winner": 0, "text": "draw"}),
            Outcome::Win(p) => {
                json!({"winner": side(p), "text": format!("{} wins", pieces[p.index()])})
            }
        }
    });
    let legal: Vec<Value> = if game.is_terminal() {
        Vec::new()
    } else {
        game.legal_moves()
            .into_iter()
            .map(|mv| move_json(game, mv))
            .collect()
    };
    // Asked once: building a solver allocates its table.
    let has_solver = game.exact_solver(1, false).is_some();
    json!({
        "game": game.name(),
        "moves": moves,
        "ply": game.ply(),
        "to_move": side(game.to_move()),
        "board": view,
        "text": game.to_string(),
        "outcome": outcome,
        "legal": legal,
        "players": players::available(game, has_solver),
        "models": players::models(game),
        "solver": has_solver,
    })
}

struct State<'a>(&'a [String]);

impl PositionVisitor for State<'_> {
    type Output = Value;
    fn visit<G: Capabilities>(self, game: G) -> Result<Value, ApiError> {
        Ok(state_json(&game, self.0))
    }
}

/// `POST /api/state`: the position after `moves`.
pub fn state(pos: &Position) -> Result<Value, ApiError> {
    pos.visit(State(&pos.moves))
}

/// A click on the board: the move it makes (if legal) and the position after it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Click {
    /// The game's specification.
    pub game: String,
    /// Moves played so far.
    #[serde(default)]
    pub moves: Vec<String>,
    /// The row clicked (0 at the top).
    pub row: usize,
    /// The column clicked.
    pub col: usize,
}

struct Clicked(usize, usize, Vec<String>);

impl PositionVisitor for Clicked {
    type Output = Value;
    fn visit<G: Capabilities>(self, mut game: G) -> Result<Value, ApiError> {
        let Clicked(row, col, mut moves) = self;
        if game.is_terminal() {
            return Err(ApiError::bad("the game is over"));
        }
        let mv = game
            .move_at(row, col)
            .ok_or_else(|| ApiError::bad(format!("no legal move at row {row}, column {col}")))?;
        moves.push(game.format_move(mv));
        game.try_play(mv).map_err(ApiError::bad)?;
        Ok(state_json(&game, &moves))
    }
}

/// `POST /api/click`: plays the move at a point of the board.
pub fn click(c: Click) -> Result<Value, ApiError> {
    let pos = Position {
        game: c.game,
        moves: c.moves,
    };
    pos.visit(Clicked(c.row, c.col, pos.moves.clone()))
}

/// A request for an AI move.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoveRequest {
    /// The game's specification.
    pub game: String,
    /// Moves played so far.
    #[serde(default)]
    pub moves: Vec<String>,
    /// Who plays.
    pub player: PlayerSpec,
}

struct AiMove<'a>(&'a PlayerSpec, Limits, Vec<String>);

impl PositionVisitor for AiMove<'_> {
    type Output = Value;
    fn visit<G: Capabilities>(self, mut game: G) -> Result<Value, ApiError> {
        let AiMove(spec, limits, mut moves) = self;
        if game.is_terminal() {
            return Err(ApiError::bad("the game is over"));
        }
        let mut agent = players::agent(spec, &game, limits)?;
        let choice = agent
            .choose(&game)
            .ok_or_else(|| ApiError::Internal("the player found no move".into()))?;
        let played = move_json(&game, choice.mv);
        moves.push(game.format_move(choice.mv));
        game.try_play(choice.mv)
            .map_err(|e| ApiError::Internal(format!("the player chose an illegal move: {e}")))?;
        Ok(json!({
            "played": played,
            "player": agent.name(),
            "evaluation": choice.evaluation,
            "state": state_json(&game, &moves),
        }))
    }
}

/// `POST /api/move`: the named player's move, and the position after it.
pub fn ai_move(req: &MoveRequest, limits: Limits) -> Result<Value, ApiError> {
    let pos = Position {
        game: req.game.clone(),
        moves: req.moves.clone(),
    };
    pos.visit(AiMove(&req.player, limits, req.moves.clone()))
}

struct Solve;

impl PositionVisitor for Solve {
    type Output = Value;
    fn visit<G: Capabilities>(self, game: G) -> Result<Value, ApiError> {
        let mut solver = game
            .exact_solver(64, true)
            .ok_or_else(|| ApiError::NotFound(format!("{} has no exact solver", game.name())))?
            .map_err(|e| ApiError::Internal(e.to_string()))?;
        if game.is_terminal() {
            return Ok(json!({"game": game.name(), "weak": false, "moves": []}));
        }
        // Exact scores of early positions can take the solver minutes; their results
        // (win, draw or loss) often come at once. Within the budget, the best that can.
        solver.set_node_limit(Some(SOLVE_NODES));
        let mut weak = false;
        let scores = match solver.analyze(&game, false) {
            Ok(s) => s,
            Err(_) => {
                weak = true;
                match solver.analyze(&game, true) {
                    Ok(s) => s,
                    Err(e) => {
                        return Ok(json!({"game": game.name(), "weak": true, "moves": [],
                                         "unsolved": format!("too deep for a quick solve ({e})")}))
                    }
                }
            }
        };
        let moves: Vec<Value> = scores
            .iter()
            .enumerate()
            .filter_map(|(action, s)| {
                let score = (*s).filter(|&s| s != INVALID_MOVE)?;
                let mv = game.move_of(action)?;
                let word = match score.signum() {
                    1 => "win",
                    0 => "draw",
                    _ => "loss",
                };
                let mut m = move_json(&game, mv);
                m["score"] = json!(score);
                m["result"] = json!(word);
                Some(m)
            })
            .collect();
        Ok(json!({"game": game.name(), "weak": weak, "moves": moves}))
    }
}

/// Positions the solver may search for one answer (about a second).
pub const SOLVE_NODES: u64 = 20_000_000;

/// `POST /api/solve`: the exact score of every legal move, from the side to move
/// (positive wins, 0 draws, negative loses; Connect Four in Pons' scale); where that
/// takes more than [`SOLVE_NODES`] positions, only its sign (`"weak": true`); where
/// even that does, nothing (`"unsolved"`).
pub fn solve(pos: &Position) -> Result<Value, ApiError> {
    pos.visit(Solve)
}

/// `GET /api/games`: every game, its presets and what it offers.
pub fn catalogue() -> Value {
    let games: Vec<Value> = GAMES
        .iter()
        .map(|g| json!({"name": g.name, "options": g.options, "presets": g.presets}))
        .collect();
    json!({ "games": games })
}
