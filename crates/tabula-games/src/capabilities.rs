//! [`Capabilities`]: what a game offers beyond its rules, declared by the game's type
//! (see the crate documentation for why a trait), and each game's declaration.

use std::path::{Path, PathBuf};

use tabula_connect4::test_set::TestSetError;
use tabula_connect4::{BookError, Solver, SolverAgent, TableTooLarge};
use tabula_core::go::Ko;
use tabula_core::{ConnectFour, Game, Go, MiniGo, Player, TicTacToe};
use tabula_search::agent::{Agent, NegamaxAgent};
use tabula_search::exact::{EvalSet, ExactSolver};
use tabula_search::go_knowledge::GoKnowledge;
use tabula_search::uct::Knowledge;

use crate::view::{go_columns, go_rows, BoardView, Layout};

/// Why a capability a game offers could not deliver.
#[derive(Debug, thiserror::Error)]
pub enum CapabilityError {
    /// The opening book could not be read or built.
    #[error(transparent)]
    Book(#[from] BookError),
    /// The accuracy test set could not be made.
    #[error(transparent)]
    TestSet(#[from] TestSetError),
    /// A table of the size asked for does not fit in memory.
    #[error(transparent)]
    Memory(#[from] TableTooLarge),
}

/// Where a game may find the data behind its accuracy test set.
#[derive(Clone, Debug)]
pub struct TestSetSource {
    /// A folder of reference data (Pons' Connect Four test sets).
    pub data_dir: PathBuf,
    /// Positions wanted (0: all the game has).
    pub positions: usize,
    /// A file where a slow classification is kept between runs.
    pub cache: PathBuf,
    /// The named subsets wanted (of [`Capabilities::test_set_names`]); empty: the
    /// game's default mix.
    pub sets: Vec<String>,
    /// A folder of finished classifications of whole named sets, kept under
    /// [`labels_file`] names (the repository ships `data/connect4-labels`): a set found
    /// there is not classified again.
    pub finished: Option<PathBuf>,
}

/// The file in the labels folder `dir` that keeps the classification of `positions`
/// positions (0: all) of `game`'s test set `stem` (`default`: the game's default mix).
pub fn labels_file(dir: &Path, game: &str, stem: &str, positions: usize) -> PathBuf {
    dir.join(format!("tabula-eval-{game}-{stem}-{positions}.json"))
}

/// What a game offers beyond its rules. Every method has a default meaning "not
/// offered"; a game overrides what it has.
pub trait Capabilities: Game {
    /// The perfect player, if one answers in reasonable time (`table_mb`: memory for
    /// its tables).
    fn perfect_agent(
        &self,
        _table_mb: usize,
    ) -> Option<Result<Box<dyn Agent<Self>>, CapabilityError>> {
        None
    }

    /// A dedicated exact solver for positions of this game (with the opening book if
    /// `book` and the game has one for this board).
    fn exact_solver(
        &self,
        _table_mb: usize,
        _book: bool,
    ) -> Option<Result<Box<dyn ExactSolver<Self>>, CapabilityError>> {
        None
    }

    /// Test positions with every move labelled by exact search, the yardstick of a
    /// learner's accuracy.
    fn test_set(
        &self,
        _source: &TestSetSource,
        _log: &mut dyn FnMut(&str),
    ) -> Option<Result<EvalSet<Self>, CapabilityError>> {
        None
    }

    /// The named subsets of the test set (e.g. Pons' six Connect Four sets), each to be
    /// measured on its own; empty when the test set is one whole.
    fn test_set_names(&self) -> &'static [&'static str] {
        &[]
    }

    /// The game's training defaults as TOML laid over the generic ones (e.g. a larger
    /// network); empty when the generic defaults suit it.
    fn training_defaults(&self) -> &'static str {
        ""
    }

    /// Builds or extends the perfect player's opening book in `out` to `depth` plies
    /// (resumable; `threads` solvers with tables of `table_mb` MiB), returning the
    /// number of positions in it.
    fn build_book(
        &self,
        _depth: usize,
        _out: &Path,
        _table_mb: usize,
        _threads: usize,
        _log: &(dyn Fn(&str) + Sync),
    ) -> Option<Result<usize, CapabilityError>> {
        None
    }

    /// Whether exhaustive negamax finishes in reasonable time from the start.
    fn exhaustive_search_is_practical(&self) -> bool {
        false
    }

    /// Knowledge for UCT beyond the rules (heavy playouts, priors), if the game has
    /// any; UCT otherwise plays light random playouts.
    fn uct_knowledge(&self) -> Option<Box<dyn Knowledge<Self> + Send + Sync>> {
        None
    }

    /// The board as a grid a front end can draw, if the game has one.
    fn board_view(&self) -> Option<BoardView> {
        None
    }

    /// The move a click on `(row, col)` of [`Capabilities::board_view`] makes, if it is
    /// legal (Connect Four: any cell of a column plays the column).
    fn move_at(&self, _row: usize, _col: usize) -> Option<Self::Move> {
        None
    }

    /// Where `mv` shows on the board view (where the piece lands), `None` for moves that
    /// have no point (a pass).
    fn move_point(&self, _mv: Self::Move) -> Option<(usize, usize)> {
        None
    }

    /// Sets a rule option by the name analysis protocols give it (KataGo's `komi`,
    /// `rules` and the fields of its rules object), before the first move. `Ok(Some(
    /// note))` when the game can only come close to what was asked; `Err` when it has
    /// no such option or the value is bad (then nothing changed).
    fn set_option(&mut self, key: &str, _value: &str) -> Result<Option<String>, String> {
        Err(format!("{} has no option {key:?}", self.name()))
    }

    /// Puts a stone of `player` where `mv` would play, without it counting as a move
    /// (KataGo's `initialStones`), in games that have setup stones.
    fn place_setup_stone(&mut self, _player: Player, _mv: Self::Move) -> Result<(), String> {
        Err(format!("{} has no setup stones", self.name()))
    }

    /// Gives the turn to `player`, in games where either side may move next (Go);
    /// elsewhere only the side already to move is accepted.
    fn give_turn(&mut self, player: Player) -> Result<(), String> {
        if self.to_move() == player {
            Ok(())
        } else {
            Err(format!("it is not {player:?}'s turn in {}", self.name()))
        }
    }
}

/// `mv` if it is legal in `game`.
fn legal<G: Game>(game: &G, mv: G::Move) -> Option<G::Move> {
    game.is_legal(mv).then_some(mv)
}

impl Capabilities for TicTacToe {
    fn perfect_agent(
        &self,
        _table_mb: usize,
    ) -> Option<Result<Box<dyn Agent<Self>>, CapabilityError>> {
        Some(Ok(Box::new(NegamaxAgent::new(None))))
    }

    fn test_set(
        &self,
        _source: &TestSetSource,
        _log: &mut dyn FnMut(&str),
    ) -> Option<Result<EvalSet<Self>, CapabilityError>> {
        Some(Ok(EvalSet::exhaustive(self)))
    }

    fn training_defaults(&self) -> &'static str {
        // Temperature on every move: the games visit unusual positions (blunders
        // included), which is what the last fraction of a percent of accuracy needs.
        "iterations = 20\n[selfplay]\ntemperature_moves = 9\n"
    }

    fn exhaustive_search_is_practical(&self) -> bool {
        true
    }

    fn board_view(&self) -> Option<BoardView> {
        Some(BoardView::new(3, 3, Layout::Cells, ["X", "O"], |r, c| {
            self.cell(r * 3 + c)
        }))
    }

    fn move_at(&self, row: usize, col: usize) -> Option<u8> {
        (row < 3 && col < 3).then(|| legal(self, (row * 3 + col) as u8))?
    }

    fn move_point(&self, mv: u8) -> Option<(usize, usize)> {
        Some((mv as usize / 3, mv as usize % 3))
    }
}

impl Capabilities for ConnectFour {
    fn perfect_agent(
        &self,
        table_mb: usize,
    ) -> Option<Result<Box<dyn Agent<Self>>, CapabilityError>> {
        Some(
            SolverAgent::try_new(self.geometry(), table_mb)
                .map(|mut agent| {
                    if let Ok(book) = tabula_connect4::book::builtin() {
                        agent.set_book(book);
                    }
                    Box::new(agent) as Box<dyn Agent<Self>>
                })
                .map_err(CapabilityError::from),
        )
    }

    fn exact_solver(
        &self,
        table_mb: usize,
        book: bool,
    ) -> Option<Result<Box<dyn ExactSolver<Self>>, CapabilityError>> {
        Some(
            Solver::try_new(self.geometry(), table_mb)
                .map(|mut solver| {
                    if book {
                        if let Ok(book) = tabula_connect4::book::builtin() {
                            solver.set_book(book); // ignored on boards it was not made for
                        }
                    }
                    Box::new(solver) as Box<dyn ExactSolver<Self>>
                })
                .map_err(CapabilityError::from),
        )
    }

    fn test_set(
        &self,
        source: &TestSetSource,
        log: &mut dyn FnMut(&str),
    ) -> Option<Result<EvalSet<Self>, CapabilityError>> {
        // Pons' sets are 7x6 positions.
        (self.geometry() == tabula_core::connect4::Geometry::STANDARD).then(|| {
            use tabula_connect4::test_set::{pons_test_set, SETS};
            let named: Vec<&str> = source.sets.iter().map(String::as_str).collect();
            let finished = |set: &str| {
                source
                    .finished
                    .as_deref()
                    .map(|dir| labels_file(dir, &self.name(), set, 0))
            };
            pons_test_set(
                &source.data_dir,
                if named.is_empty() { &SETS } else { &named },
                source.positions,
                &source.cache,
                &finished,
                log,
            )
            .map_err(CapabilityError::from)
        })
    }

    fn test_set_names(&self) -> &'static [&'static str] {
        if self.geometry() == tabula_core::connect4::Geometry::STANDARD {
            &tabula_connect4::test_set::ALL_SETS
        } else {
            &[]
        }
    }

    fn training_defaults(&self) -> &'static str {
        r#"iterations = 200
[selfplay]
games = 200
simulations = 200
fast_simulations = 40
temperature_moves = 8
resign_threshold = 0.9
parallel_games = 64
[net]
size = "4x48"
replay_window = 200000
steps = 200
batch_size = 256
[eval]
every = 2
simulations = 200
positions = 500
"#
    }

    fn build_book(
        &self,
        depth: usize,
        out: &Path,
        table_mb: usize,
        threads: usize,
        log: &(dyn Fn(&str) + Sync),
    ) -> Option<Result<usize, CapabilityError>> {
        Some(
            tabula_connect4::book::grow(self.geometry(), depth, out, table_mb, threads, log)
                .map(|b| b.len())
                .map_err(CapabilityError::from),
        )
    }

    fn exhaustive_search_is_practical(&self) -> bool {
        self.geometry().cells() <= 16
    }

    fn board_view(&self) -> Option<BoardView> {
        let (w, h) = (self.geometry().width(), self.geometry().height());
        let view = BoardView::new(h, w, Layout::Columns, ["red", "yellow"], |r, c| {
            self.cell(c, h - 1 - r)
        });
        Some(view.labelled((1..=w).map(|c| c.to_string()).collect(), Vec::new()))
    }

    fn move_at(&self, row: usize, col: usize) -> Option<u8> {
        let geo = self.geometry();
        (row < geo.height() && col < geo.width()).then(|| legal(self, col as u8))?
    }

    fn move_point(&self, mv: u8) -> Option<(usize, usize)> {
        let (col, h) = (mv as usize, self.geometry().height());
        let filled = (0..h).take_while(|&r| self.cell(col, r).is_some()).count();
        // Where the piece lands; a full column points at its top cell.
        Some((h - 1 - filled.min(h - 1), col))
    }
}

/// Go's training defaults (mini-go's too).
const GO_TRAINING: &str = r#"iterations = 100
[selfplay]
simulations = 200
temperature_moves = 12
[net]
size = "medium"
replay_window = 200000
batch_size = 256
[eval]
every = 0
"#;

impl Capabilities for Go {
    fn training_defaults(&self) -> &'static str {
        GO_TRAINING
    }

    fn board_view(&self) -> Option<BoardView> {
        let n = self.size();
        let view = BoardView::new(n, n, Layout::Intersections, ["black", "white"], |r, c| {
            self.stone(r, c)
        });
        Some(view.labelled(go_columns(n), go_rows(n)))
    }

    fn move_at(&self, row: usize, col: usize) -> Option<u16> {
        let n = self.size();
        (row < n && col < n).then(|| legal(self, (row * n + col) as u16))?
    }

    fn move_point(&self, mv: u16) -> Option<(usize, usize)> {
        let n = self.size();
        (mv != self.pass()).then_some((mv as usize / n, mv as usize % n))
    }

    fn uct_knowledge(&self) -> Option<Box<dyn Knowledge<Self> + Send + Sync>> {
        Some(Box::new(GoKnowledge::default()))
    }

    fn set_option(&mut self, key: &str, value: &str) -> Result<Option<String>, String> {
        let mut rules = self.rules();
        let flag = |v: &str| match v.to_ascii_lowercase().as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(format!("{key} must be true or false, not {v:?}")),
        };
        let note = match key {
            "komi" => {
                let komi: f32 = value
                    .parse()
                    .ok()
                    .filter(|k: &f32| k.is_finite() && k.abs() <= 150.0 && (k * 2.0).fract() == 0.0)
                    .ok_or_else(|| {
                        format!(
                            "komi must be an integer or half-integer in [-150, 150], not {value}"
                        )
                    })?;
                self.set_komi(komi);
                return Ok(None);
            }
            "rules" => {
                let (ko, suicide, note) = match value.to_ascii_lowercase().as_str() {
                    "tromp-taylor" => (Ko::PositionalSuperko, true, None),
                    "chinese" => (Ko::Simple, false, None),
                    "chinese-ogs" | "chinese-kgs" => (Ko::PositionalSuperko, false, None),
                    "aga" | "bga" => (
                        Ko::PositionalSuperko,
                        false,
                        Some("situational superko is played as positional superko"),
                    ),
                    "new-zealand" => (
                        Ko::PositionalSuperko,
                        true,
                        Some("situational superko is played as positional superko"),
                    ),
                    "japanese" | "korean" => (
                        Ko::Simple,
                        false,
                        Some("territory scoring is played as area scoring"),
                    ),
                    "stone-scoring" => (
                        Ko::Simple,
                        false,
                        Some("stone scoring is played as area scoring"),
                    ),
                    _ => return Err(format!("unknown rules {value:?}")),
                };
                rules.ko = ko;
                rules.suicide = suicide;
                note
            }
            "ko" => {
                rules.ko = match value.to_ascii_uppercase().as_str() {
                    "SIMPLE" => Ko::Simple,
                    "POSITIONAL" => Ko::PositionalSuperko,
                    "SITUATIONAL" => Ko::PositionalSuperko,
                    _ => return Err(format!("unknown ko rule {value:?}")),
                };
                value
                    .eq_ignore_ascii_case("SITUATIONAL")
                    .then_some("situational superko is played as positional superko")
            }
            "suicide" => {
                rules.suicide = flag(value)?;
                None
            }
            "scoring" => match value.to_ascii_uppercase().as_str() {
                "AREA" => None,
                "TERRITORY" => Some("territory scoring is played as area scoring"),
                _ => return Err(format!("unknown scoring {value:?}")),
            },
            "tax" => match value.to_ascii_uppercase().as_str() {
                "NONE" => None,
                "SEKI" | "ALL" => Some("taxes are not played: plain area scoring"),
                _ => return Err(format!("unknown tax {value:?}")),
            },
            "hasButton" => (flag(value)?).then_some("button Go is not played"),
            "whiteHandicapBonus" => match value {
                "0" => None,
                "N" | "N-1" => Some("no handicap bonus is given: add it to komi"),
                _ => {
                    return Err(format!(
                        "whiteHandicapBonus must be 0, N or N-1, not {value:?}"
                    ))
                }
            },
            _ => return Err(format!("Go has no option {key:?}")),
        };
        if rules != self.rules() {
            if self.ply() > 0 || !self.is_empty_board() {
                return Err("rules change only before the first move".into());
            }
            *self = Go::new(self.size(), rules).map_err(|e| e.to_string())?;
        }
        Ok(note.map(String::from))
    }

    fn place_setup_stone(&mut self, player: Player, mv: u16) -> Result<(), String> {
        let n = self.size();
        if mv == self.pass() {
            return Err("a setup stone needs a point, not a pass".into());
        }
        let (r, c) = (mv as usize / n, mv as usize % n);
        if self.stone(r, c).is_some() {
            return Err(format!("{} already has a stone", self.format_move(mv)));
        }
        self.set_setup_point(r, c, Some(player))
            .map_err(|e| e.to_string())
    }

    fn give_turn(&mut self, player: Player) -> Result<(), String> {
        self.set_to_move(player);
        Ok(())
    }
}

impl Capabilities for MiniGo {
    fn training_defaults(&self) -> &'static str {
        GO_TRAINING
    }

    fn board_view(&self) -> Option<BoardView> {
        let n = tabula_core::mini_go::SIZE;
        let view = BoardView::new(n, n, Layout::Intersections, ["black", "white"], |r, c| {
            self.stone(r, c)
        });
        Some(view.labelled(go_columns(n), go_rows(n)))
    }

    fn move_at(&self, row: usize, col: usize) -> Option<u16> {
        let n = tabula_core::mini_go::SIZE;
        (row < n && col < n).then(|| legal(self, (row * n + col) as u16))?
    }

    fn move_point(&self, mv: u16) -> Option<(usize, usize)> {
        let n = tabula_core::mini_go::SIZE;
        ((mv as usize) < n * n).then_some((mv as usize / n, mv as usize % n))
    }
}
