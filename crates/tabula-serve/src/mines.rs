//! The Minesweeper API: a game replayed from its seed and the player's actions (so the
//! server keeps no state and undo is dropping the last action), with the mine
//! probabilities of the exact solver, the AutoMine teacher and the learned model side by
//! side, and the agent's next move.

use serde::Deserialize;
use serde_json::{json, Value};
use tabula_automine::MineNet;
use tabula_mines::{
    Agent, Cell, Config, ExactSolver, FirstClick, Level, Minefield, Probabilities, Seen, Status,
    Teacher, View,
};

use crate::error::ApiError;

/// The largest board side the web app plays (the exact solver's cost grows with it).
pub const MAX_SIDE: usize = 64;

/// One thing the player did.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Action {
    /// `reveal`, `flag` (toggles) or `chord` (reveals around a satisfied number).
    pub op: Op,
    /// The row (0 at the top).
    pub row: usize,
    /// The column.
    pub col: usize,
}

/// What an [`Action`] does.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    /// Reveal the cell.
    Reveal,
    /// Flag or unflag the cell.
    Flag,
    /// Reveal the neighbours of a number whose mines are all flagged.
    Chord,
}

/// A game: its rules, its seed and the player's actions so far.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MinesRequest {
    /// `beginner`, `intermediate` or `expert`; or give width, height and mines.
    pub level: Option<String>,
    /// Columns.
    pub width: Option<usize>,
    /// Rows.
    pub height: Option<usize>,
    /// Mines.
    pub mines: Option<usize>,
    /// What the first click is guaranteed: `none`, `safe` or `opening` (default).
    pub rule: Option<String>,
    /// The seed that places the mines.
    pub seed: u64,
    /// The player's actions, in order.
    #[serde(default)]
    pub actions: Vec<Action>,
}

impl MinesRequest {
    fn config(&self) -> Result<Config, ApiError> {
        let rule: FirstClick = self
            .rule
            .as_deref()
            .unwrap_or("opening")
            .parse()
            .map_err(ApiError::bad)?;
        match (&self.level, self.width, self.height, self.mines) {
            (Some(level), None, None, None) => {
                let level: Level = level.parse().map_err(ApiError::bad)?;
                Ok(Config::level(level, rule))
            }
            (None, Some(w), Some(h), Some(m)) => {
                if w > MAX_SIDE || h > MAX_SIDE {
                    return Err(ApiError::bad(format!(
                        "at most {MAX_SIDE} rows and columns here"
                    )));
                }
                Config::new(w, h, m, rule).map_err(ApiError::bad)
            }
            _ => Err(ApiError::bad(
                "give either a level, or width, height and mines (not both)",
            )),
        }
    }

    /// The game after the actions.
    pub fn replay(&self) -> Result<Minefield, ApiError> {
        let config = self.config()?;
        if self.actions.len() > 4 * config.dims.cells() {
            return Err(ApiError::bad("more actions than this board can take"));
        }
        let mut game = Minefield::new(config, self.seed);
        for (i, a) in self.actions.iter().enumerate() {
            if game.status() != Status::Playing {
                return Err(ApiError::bad(format!(
                    "action {}: the game is already over",
                    i + 1
                )));
            }
            let cell = Cell::new(a.row, a.col);
            let done = match a.op {
                Op::Reveal => game.reveal(cell).map(|_| ()),
                Op::Flag => game.toggle_flag(cell).map(|_| ()),
                Op::Chord => game.chord(cell).map(|_| ()),
            };
            done.map_err(|e| ApiError::bad(format!("action {} at {cell}: {e}", i + 1)))?;
        }
        Ok(game)
    }
}

fn seen_code(s: Seen) -> i8 {
    match s {
        Seen::Hidden => -1,
        Seen::Flagged => -2,
        Seen::Mine => -3,
        Seen::Number(n) => n as i8,
    }
}

fn probabilities_json(name: &str, p: &Probabilities) -> Value {
    json!({
        "name": name,
        "p": p.p,
        "safe": p.safe,
        "mines": p.mines,
        "approximate": p.approximate,
    })
}

fn cell_json(c: Cell) -> Value {
    json!([c.row, c.col])
}

/// `POST /api/mines`: the board after the actions, three estimates of where the mines
/// are, and what the agent (exact probabilities) would do next.
pub fn state(req: &MinesRequest, net: Option<&MineNet>) -> Result<Value, ApiError> {
    let game = req.replay()?;
    let view: View = game.view();
    let dims = view.dims();
    let status = match game.status() {
        Status::Playing => "playing",
        Status::Won => "won",
        Status::Lost => "lost",
    };
    let mut out = json!({
        "width": dims.width,
        "height": dims.height,
        "mines": view.mines(),
        "rule": game.config().first_click.to_string(),
        "seed": req.seed,
        "status": status,
        "cells": view.cells().iter().map(|&s| seen_code(s)).collect::<Vec<_>>(),
        "revealed": view.revealed_count(),
        "exploded": game.exploded().map(cell_json),
    });
    if game.status() != Status::Playing {
        let layout: Vec<Value> = game
            .layout()
            .unwrap_or(&[])
            .iter()
            .enumerate()
            .filter(|(_, &m)| m)
            .map(|(i, _)| cell_json(dims.cell(i)))
            .collect();
        out["layout"] = json!(layout);
        return Ok(out);
    }
    if view.revealed_count() == 0 {
        let first = Agent::<Teacher>::first_click(dims, game.config().first_click);
        out["next"] = json!({"kind": "first", "cells": [cell_json(first)], "risk": null});
        return Ok(out);
    }
    let exact = ExactSolver::default().solve(&view);
    let teacher = Teacher.estimate(&view);
    let mut overlays = vec![];
    match &exact {
        Ok(p) => overlays.push(probabilities_json("exact", p)),
        Err(e) => overlays.push(json!({"name": "exact", "error": e.to_string()})),
    }
    overlays.push(probabilities_json("teacher", &teacher));
    if let Some(net) = net {
        let p = net.for_thread().probabilities(&view);
        overlays.push(json!({"name": "net", "p": p, "approximate": true}));
    }
    out["overlays"] = json!(overlays);
    // The agent's move from exact probabilities (the teacher's when the exact count
    // is over its budget).
    let decision = match &exact {
        Ok(p) => Agent::new(ExactSolver::default()).decide(&view, p),
        Err(_) => Agent::new(Teacher).decide(&view, &teacher),
    };
    let next = match decision {
        tabula_mines::agent::Decision::Reveal(cells) => {
            json!({"kind": "safe", "cells": cells.into_iter().map(cell_json).collect::<Vec<_>>(), "risk": 0.0})
        }
        tabula_mines::agent::Decision::Guess { cell, risk, .. } => {
            json!({"kind": "guess", "cells": [cell_json(cell)], "risk": risk})
        }
    };
    out["next"] = next;
    Ok(out)
}

/// `GET /api/mines/levels`: the classic levels and rules.
pub fn levels() -> Value {
    let levels: Vec<Value> = [Level::Beginner, Level::Intermediate, Level::Expert]
        .into_iter()
        .map(|l| {
            let (w, h, m) = l.size();
            json!({"name": l.to_string(), "width": w, "height": h, "mines": m})
        })
        .collect();
    json!({"levels": levels, "rules": ["opening", "safe", "none"]})
}
