//! Self-play game records: one JSON object per game per line, gzip-compressed, one file
//! per iteration (`games/iter-NNNN.jsonl.gz`).
//!
//! A record holds the moves as action indices from the game's start position, the
//! search's visit distribution at each position (sparse `[action, probability]` pairs;
//! `null` for fast searches that are not policy targets), the root value for the side
//! to move at each position, and the result from the first player's side.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;

use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;
use serde::{Deserialize, Serialize};
use tabula_core::{Game, Outcome, Player};

use crate::error::io_err;
use crate::ZeroError;

/// One self-play game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameRecord {
    /// Actions played, from the start position.
    pub moves: Vec<u32>,
    /// Visit distribution before each move (`None`: a fast search, not a policy target).
    pub policy: Vec<Option<Vec<(u32, f32)>>>,
    /// Root value for the side to move before each move.
    pub root_value: Vec<f32>,
    /// +1 the first player won, -1 the second, 0 a draw.
    pub result: f32,
    /// The game ended by resignation.
    pub resigned: bool,
    /// Resignation was disabled in this game (to measure false resigns).
    pub no_resign: bool,
    /// In a no-resign game: the player (0 first, 1 second) who would have resigned first.
    pub would_resign: Option<u8>,
}

impl GameRecord {
    /// A game with no moves yet; `no_resign` games never resign.
    pub fn new(no_resign: bool) -> GameRecord {
        GameRecord {
            moves: Vec::new(),
            policy: Vec::new(),
            root_value: Vec::new(),
            result: 0.0,
            resigned: false,
            no_resign,
            would_resign: None,
        }
    }

    /// The result for `player`.
    pub fn result_for(&self, player: Player) -> f32 {
        match player {
            Player::First => self.result,
            Player::Second => -self.result,
        }
    }

    /// The result of an outcome from the first player's side.
    pub fn result_of(outcome: Option<Outcome>) -> f32 {
        outcome.map_or(0.0, |o| o.value_for(Player::First))
    }

    /// Replays the moves from `start`, checking each; returns every position before a
    /// move and the final one.
    pub fn replay<G: Game>(&self, start: &G) -> Result<Vec<G>, String> {
        let mut out = Vec::with_capacity(self.moves.len() + 1);
        let last = self.walk(start, |_, g| out.push(g.clone()))?;
        out.push(last);
        Ok(out)
    }

    /// Replays the moves from `start`, checking each, and shows `visit` the position
    /// before move `i` as `visit(i, position)`; returns the final position. Nothing is
    /// kept that `visit` does not keep.
    pub fn walk<G: Game>(&self, start: &G, mut visit: impl FnMut(usize, &G)) -> Result<G, String> {
        let mut game = start.clone();
        for (i, &a) in self.moves.iter().enumerate() {
            visit(i, &game);
            let mv = game
                .move_of(a as usize)
                .filter(|m| game.is_legal(*m))
                .ok_or_else(|| format!("move {} (action {a}) is illegal", i + 1))?;
            game.play(mv);
        }
        Ok(game)
    }
}

/// The compressed bytes of `records` (one JSON line each, gzip).
pub fn encode_records(records: &[GameRecord]) -> Vec<u8> {
    let mut gz = GzEncoder::new(Vec::new(), Compression::default());
    for r in records {
        // A record is plain numbers and vectors: it always serialises, and writing to a
        // vector cannot fail.
        let line = serde_json::to_string(r).unwrap_or_default();
        let _ = writeln!(gz, "{line}");
    }
    gz.finish().unwrap_or_default()
}

/// Reads bytes written by [`encode_records`]; `name` names them in errors.
pub fn decode_records(bytes: &[u8], name: &str) -> Result<Vec<GameRecord>, ZeroError> {
    let reader = BufReader::new(GzDecoder::new(bytes));
    let mut out = Vec::new();
    for (i, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| ZeroError::Record {
            file: name.to_string(),
            reason: format!("line {}: {e}", i + 1),
        })?;
        if line.trim().is_empty() {
            continue;
        }
        out.push(serde_json::from_str(&line).map_err(|e| ZeroError::Record {
            file: name.to_string(),
            reason: format!("line {}: {e}", i + 1),
        })?);
    }
    Ok(out)
}

/// Writes `records` to `path` atomically (temporary file, then rename).
pub fn write_records(path: &Path, records: &[GameRecord]) -> Result<(), ZeroError> {
    crate::run::write_atomic(path, &encode_records(records))
}

/// Reads a file written by [`write_records`].
pub fn read_records(path: &Path) -> Result<Vec<GameRecord>, ZeroError> {
    let bytes = std::fs::read(path).map_err(io_err(path))?;
    decode_records(&bytes, &path.display().to_string())
}
