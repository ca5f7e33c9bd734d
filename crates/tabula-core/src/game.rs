//! The [`Game`] trait: what every search algorithm in Tabula knows about a game.
//!
//! It is the seeds' five methods (`possible_moves`, `play`, `is_terminal`,
//! `winner_value`, `to_input`) in Rust form, plus what real search and learning need:
//! a fixed action index space for networks, a Zobrist hash for transpositions, the
//! symmetry group for augmentation, a text rendering and a move parser.
//!
//! States are `Clone` and [`Game::play`] changes a state in place; searches that need
//! to back up copy the state first ("copy-make"). Tic-tac-toe and Connect Four states
//! are a few machine words, so a copy is as cheap as the bookkeeping an undo would
//! need, and copy-make leaves no way to undo the wrong move (BENCHMARKS.md, "Copy-make",
//! has the figures). Go's state is larger and carries its history for superko; its
//! searches copy once per simulation, not per move.

use std::fmt;
use std::hash::Hash;

/// One of the two sides of a two-player game (the first side moves first).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Player {
    /// The side that moves first (X in tic-tac-toe, Black in Go).
    First,
    /// The side that moves second.
    Second,
}

impl Player {
    /// The other side.
    #[inline]
    pub fn other(self) -> Player {
        match self {
            Player::First => Player::Second,
            Player::Second => Player::First,
        }
    }

    /// 0 for the first player, 1 for the second.
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }
}

/// How a finished game ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// This side won.
    Win(Player),
    /// Nobody won.
    Draw,
}

impl Outcome {
    /// +1 if `player` won, -1 if it lost, 0 for a draw.
    #[inline]
    pub fn value_for(self, player: Player) -> f32 {
        match self {
            Outcome::Win(p) if p == player => 1.0,
            Outcome::Win(_) => -1.0,
            Outcome::Draw => 0.0,
        }
    }
}

/// Why a move or a position given by a user was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GameError {
    /// The text does not name a move of this game.
    #[error("cannot read move {text:?}: {reason}")]
    BadMove {
        /// What was given.
        text: String,
        /// Why it is not a move.
        reason: String,
    },
    /// A well-formed move that the rules forbid here.
    #[error("illegal move {0}")]
    Illegal(String),
    /// The game has already ended.
    #[error("the game is over")]
    GameOver,
    /// A game name or option that no game has.
    #[error("{0}")]
    BadSpec(String),
}

/// A game Tabula can search, learn and play.
///
/// Values are always seen from the side to move, as in the seeds: `+1` a win for the
/// player whose turn it is.
pub trait Game: Clone + Send + Sync + fmt::Display + 'static {
    /// A move. Small and `Copy`; its meaning may depend on the state (e.g. a column).
    type Move: Copy + Eq + Hash + fmt::Debug + Send + Sync + 'static;

    /// The game's name as the command line spells it (e.g. `connect4`), with any
    /// non-default variant (e.g. `connect4:6x5`).
    fn name(&self) -> String;

    /// The side whose turn it is.
    fn to_move(&self) -> Player;

    /// Number of moves played from the initial position.
    fn ply(&self) -> usize;

    /// Every legal move here, in a fixed order; empty when the game is over.
    fn legal_moves(&self) -> Vec<Self::Move>;

    /// Plays `mv`, which must be legal here (checked only by debug assertions; use
    /// [`Game::try_play`] for moves that come from outside).
    fn play(&mut self, mv: Self::Move);

    /// How the game ended, or `None` while it is still going.
    fn outcome(&self) -> Option<Outcome>;

    /// A Zobrist-style hash of the position (everything that decides future play).
    fn position_hash(&self) -> u64;

    // ---- network interface ----

    /// Size of the fixed action index space (`0..action_count()`), the policy width.
    fn action_count(&self) -> usize;

    /// Index of `mv` in the action space.
    fn action_of(&self, mv: Self::Move) -> usize;

    /// The move with this action index, if the index is in range (legality not checked).
    fn move_of(&self, action: usize) -> Option<Self::Move>;

    /// Shape of the tensor encoding: `[planes, height, width]`.
    fn encoding_shape(&self) -> [usize; 3];

    /// Writes the tensor encoding (row-major planes; plane 0: stones of the side to move,
    /// plane 1: the opponent's, plane 2: empty points, then whatever the game adds) into
    /// `out`, whose length is the product of [`Game::encoding_shape`].
    fn encode(&self, out: &mut [f32]);

    // ---- symmetries ----

    /// Order of the symmetry group used for augmentation (1 = none). Symmetry 0 is the identity.
    fn symmetry_count(&self) -> usize {
        1
    }

    /// The position mapped by symmetry `sym` (in `0..symmetry_count()`).
    fn transformed(&self, sym: usize) -> Self {
        debug_assert_eq!(sym, 0);
        self.clone()
    }

    /// Where action `action` goes under symmetry `sym`.
    fn transform_action(&self, sym: usize, action: usize) -> usize {
        debug_assert_eq!(sym, 0);
        action
    }

    /// Where point `(row, col)` of the encoding's planes goes under symmetry `sym`: the
    /// same map [`Game::transformed`] applies to the board, so that an encoded position
    /// can be transformed without its state (`encode(transformed(s))` is `encode` with
    /// every plane's points moved by this map).
    fn transform_point(&self, sym: usize, row: usize, col: usize) -> (usize, usize) {
        debug_assert_eq!(sym, 0);
        (row, col)
    }

    // ---- text ----

    /// Reads a move written as [`Game::format_move`] writes it. Checks the syntax and
    /// the board's bounds, not legality.
    fn parse_move(&self, text: &str) -> Result<Self::Move, GameError>;

    /// Writes a move for people and for move lists.
    fn format_move(&self, mv: Self::Move) -> String;

    // ---- provided ----

    /// A move for a fast random playout, drawn with `random(n)` (uniform in `0..n`);
    /// `None` when the game is over. By default a uniformly random legal move; games
    /// override it with something cheaper or wiser (Go skips filling its own eyes).
    fn rollout_move(&self, random: &mut dyn FnMut(usize) -> usize) -> Option<Self::Move> {
        let moves = self.legal_moves();
        if moves.is_empty() {
            None
        } else {
            Some(moves[random(moves.len())])
        }
    }

    /// True once the game has ended.
    /// The final owner of every point of a game that ended in a count (+1 the first
    /// player, −1 the second, 0 neither; row-major over the encoding's board) and the
    /// final score for the first player: the auxiliary targets of networks that predict
    /// them (Go). `None` for games without territory or a game that did not end in a
    /// count (a resignation).
    fn final_ownership(&self) -> Option<(Vec<f32>, f32)> {
        None
    }

    fn is_terminal(&self) -> bool {
        self.outcome().is_some()
    }

    /// The result from the side to move (+1, 0, -1), or `None` while the game goes on:
    /// the seeds' `winner_value`.
    fn terminal_value(&self) -> Option<f32> {
        self.outcome().map(|o| o.value_for(self.to_move()))
    }

    /// Whether `mv` is legal here.
    fn is_legal(&self, mv: Self::Move) -> bool {
        self.legal_moves().contains(&mv)
    }

    /// Plays `mv` if it is legal; otherwise leaves the state unchanged and says why.
    fn try_play(&mut self, mv: Self::Move) -> Result<(), GameError> {
        if self.is_terminal() {
            return Err(GameError::GameOver);
        }
        if !self.is_legal(mv) {
            return Err(GameError::Illegal(self.format_move(mv)));
        }
        self.play(mv);
        Ok(())
    }

    /// Parses and plays one move given as text; the state is unchanged on error.
    fn play_text(&mut self, text: &str) -> Result<Self::Move, GameError> {
        let mv = self.parse_move(text)?;
        self.try_play(mv)?;
        Ok(mv)
    }
}
