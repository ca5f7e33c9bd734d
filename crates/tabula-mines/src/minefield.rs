//! The Minesweeper engine: a seeded minefield, first-click rules, reveal with flood
//! fill, flags, chording, win and loss.

use std::collections::VecDeque;
use std::fmt;
use std::str::FromStr;

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::cell::{Cell, Dims};
use crate::error::MinesError;
use crate::view::{Seen, View};

/// What the first click is guaranteed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FirstClick {
    /// Nothing: the mines are placed before the click (AutoMine's rule).
    None,
    /// The clicked cell is never a mine.
    Safe,
    /// The clicked cell and its neighbours are mine-free, so it opens an area.
    Opening,
}

impl FromStr for FirstClick {
    type Err = MinesError;
    fn from_str(s: &str) -> Result<Self, MinesError> {
        match s.to_ascii_lowercase().as_str() {
            "none" => Ok(FirstClick::None),
            "safe" => Ok(FirstClick::Safe),
            "opening" => Ok(FirstClick::Opening),
            _ => Err(MinesError::BadConfig(format!(
                "unknown first-click rule {s:?} (none, safe, opening)"
            ))),
        }
    }
}

impl fmt::Display for FirstClick {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FirstClick::None => "none",
            FirstClick::Safe => "safe",
            FirstClick::Opening => "opening",
        })
    }
}

/// The classic difficulty levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Level {
    /// 9x9, 10 mines.
    Beginner,
    /// 16x16, 40 mines.
    Intermediate,
    /// 30x16, 99 mines.
    Expert,
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Level::Beginner => "beginner",
            Level::Intermediate => "intermediate",
            Level::Expert => "expert",
        })
    }
}

impl Level {
    /// `(width, height, mines)`.
    pub fn size(self) -> (usize, usize, usize) {
        match self {
            Level::Beginner => (9, 9, 10),
            Level::Intermediate => (16, 16, 40),
            Level::Expert => (30, 16, 99),
        }
    }
}

impl FromStr for Level {
    type Err = MinesError;
    fn from_str(s: &str) -> Result<Self, MinesError> {
        match s.to_ascii_lowercase().as_str() {
            "beginner" => Ok(Level::Beginner),
            "intermediate" => Ok(Level::Intermediate),
            "expert" => Ok(Level::Expert),
            _ => Err(MinesError::BadConfig(format!(
                "unknown level {s:?} (beginner, intermediate, expert)"
            ))),
        }
    }
}

/// The rules of one game: board size, mine count, first-click rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Config {
    /// Board size.
    pub dims: Dims,
    /// Number of mines.
    pub mines: usize,
    /// What the first click is guaranteed.
    pub first_click: FirstClick,
}

impl Config {
    /// A checked configuration: at least one cell, and room for the mines beside what
    /// the first-click rule keeps clear.
    pub fn new(
        width: usize,
        height: usize,
        mines: usize,
        first_click: FirstClick,
    ) -> Result<Config, MinesError> {
        if width == 0 || height == 0 {
            return Err(MinesError::BadConfig(
                "the board needs at least one cell".into(),
            ));
        }
        if width > 1000 || height > 1000 {
            return Err(MinesError::BadConfig(
                "at most 1000 rows and columns".into(),
            ));
        }
        let cells = width * height;
        let kept_clear = match first_click {
            FirstClick::None => 0,
            FirstClick::Safe => 1,
            FirstClick::Opening => 9.min(cells),
        };
        if mines + kept_clear > cells {
            return Err(MinesError::BadConfig(format!(
                "{mines} mines do not fit on {width}x{height} with the {first_click} first click"
            )));
        }
        Ok(Config {
            dims: Dims::new(width, height),
            mines,
            first_click,
        })
    }

    /// A classic level with a first-click rule.
    pub fn level(level: Level, first_click: FirstClick) -> Config {
        let (w, h, m) = level.size();
        Config {
            dims: Dims::new(w, h),
            mines: m,
            first_click,
        }
    }
}

/// Where the game stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Still going.
    Playing,
    /// Every safe cell is revealed.
    Won,
    /// A mine was revealed.
    Lost,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Hidden,
    Flagged,
    Revealed,
}

/// A game of Minesweeper. The same seed and the same clicks give the same game.
#[derive(Clone, Debug)]
pub struct Minefield {
    config: Config,
    rng: ChaCha8Rng,
    /// `None` until the mines are placed (at the first click, except under `FirstClick::None`).
    mines: Option<Vec<bool>>,
    /// Number of adjacent mines of every cell, once placed.
    counts: Vec<u8>,
    state: Vec<State>,
    revealed: usize,
    status: Status,
    exploded: Option<Cell>,
}

impl Minefield {
    /// A new game; with `FirstClick::None` the mines are placed now.
    pub fn new(config: Config, seed: u64) -> Minefield {
        let n = config.dims.cells();
        let mut m = Minefield {
            config,
            rng: ChaCha8Rng::seed_from_u64(seed),
            mines: None,
            counts: vec![0; n],
            state: vec![State::Hidden; n],
            revealed: 0,
            status: Status::Playing,
            exploded: None,
        };
        if config.first_click == FirstClick::None {
            m.place_mines(None);
        }
        m
    }

    /// A game with the mines exactly where `mines` says (row-major), for tests and
    /// saved games. The first-click rule is `None`: the layout is fixed.
    pub fn with_layout(dims: Dims, mines: Vec<bool>) -> Result<Minefield, MinesError> {
        if mines.len() != dims.cells() {
            return Err(MinesError::BadConfig(format!(
                "layout has {} cells, the board {}",
                mines.len(),
                dims.cells()
            )));
        }
        let count = mines.iter().filter(|&&m| m).count();
        let config = Config::new(dims.width, dims.height, count, FirstClick::None)?;
        let mut m = Minefield::new(Config { ..config }, 0);
        m.set_mines(mines);
        Ok(m)
    }

    fn place_mines(&mut self, first: Option<usize>) {
        let dims = self.config.dims;
        let mut clear = vec![false; dims.cells()];
        if let Some(i) = first {
            match self.config.first_click {
                FirstClick::None => {}
                FirstClick::Safe => clear[i] = true,
                FirstClick::Opening => {
                    clear[i] = true;
                    for j in dims.neighbours(i) {
                        clear[j] = true;
                    }
                }
            }
        }
        let mut candidates: Vec<usize> = (0..dims.cells()).filter(|&i| !clear[i]).collect();
        candidates.shuffle(&mut self.rng);
        let mut mines = vec![false; dims.cells()];
        for &i in candidates.iter().take(self.config.mines) {
            mines[i] = true;
        }
        self.set_mines(mines);
    }

    fn set_mines(&mut self, mines: Vec<bool>) {
        let dims = self.config.dims;
        for i in 0..dims.cells() {
            self.counts[i] = dims.neighbours(i).filter(|&j| mines[j]).count() as u8;
        }
        self.mines = Some(mines);
    }

    /// The rules of this game.
    pub fn config(&self) -> Config {
        self.config
    }

    /// Board size.
    pub fn dims(&self) -> Dims {
        self.config.dims
    }

    /// Where the game stands.
    pub fn status(&self) -> Status {
        self.status
    }

    /// Whether `cell` holds a mine (`None` before the mines are placed).
    pub fn is_mine(&self, cell: Cell) -> Option<bool> {
        let dims = self.dims();
        if !dims.contains(cell) {
            return None;
        }
        self.mines.as_ref().map(|m| m[dims.index(cell)])
    }

    /// The mine layout, once placed.
    pub fn layout(&self) -> Option<&[bool]> {
        self.mines.as_deref()
    }

    fn check(&self, cell: Cell) -> Result<usize, MinesError> {
        let dims = self.dims();
        if !dims.contains(cell) {
            return Err(MinesError::OutOfBounds(cell, dims.width, dims.height));
        }
        if self.status != Status::Playing {
            return Err(MinesError::BadMove("the game is over".into()));
        }
        Ok(dims.index(cell))
    }

    /// Reveals `cell`; a zero opens its neighbours, and theirs, and so on. Returns how
    /// many cells were revealed (0 if it already was). Refuses flagged cells.
    pub fn reveal(&mut self, cell: Cell) -> Result<usize, MinesError> {
        let i = self.check(cell)?;
        match self.state[i] {
            State::Revealed => return Ok(0),
            State::Flagged => {
                return Err(MinesError::BadMove(format!(
                    "cell {cell} is flagged; unflag it first"
                )))
            }
            State::Hidden => {}
        }
        if self.mines.is_none() {
            self.place_mines(Some(i));
        }
        Ok(self.open(i))
    }

    /// Opens a hidden cell (mines are placed): loses on a mine, floods zeros.
    fn open(&mut self, i: usize) -> usize {
        let mines = match &self.mines {
            Some(m) => m,
            None => return 0,
        };
        if mines[i] {
            self.state[i] = State::Revealed;
            self.status = Status::Lost;
            self.exploded = Some(self.dims().cell(i));
            return 1;
        }
        let dims = self.dims();
        let mut opened = 0;
        let mut queue = VecDeque::from([i]);
        self.state[i] = State::Revealed;
        while let Some(j) = queue.pop_front() {
            opened += 1;
            if self.counts[j] == 0 {
                for k in dims.neighbours(j) {
                    if self.state[k] == State::Hidden {
                        self.state[k] = State::Revealed;
                        queue.push_back(k);
                    }
                }
            }
        }
        self.revealed += opened;
        if self.revealed + self.config.mines == dims.cells() {
            self.status = Status::Won;
        }
        opened
    }

    /// Puts or removes a flag on a hidden cell; returns whether it is now flagged.
    pub fn toggle_flag(&mut self, cell: Cell) -> Result<bool, MinesError> {
        let i = self.check(cell)?;
        match self.state[i] {
            State::Hidden => {
                self.state[i] = State::Flagged;
                Ok(true)
            }
            State::Flagged => {
                self.state[i] = State::Hidden;
                Ok(false)
            }
            State::Revealed => Err(MinesError::BadMove(format!(
                "cell {cell} is already revealed"
            ))),
        }
    }

    /// Chording: on a revealed number with as many flags around it as its number,
    /// reveals every other hidden neighbour (and loses if a flag was wrong).
    pub fn chord(&mut self, cell: Cell) -> Result<usize, MinesError> {
        let i = self.check(cell)?;
        if self.state[i] != State::Revealed {
            return Err(MinesError::BadMove(format!("cell {cell} is not revealed")));
        }
        let dims = self.dims();
        let flags = dims
            .neighbours(i)
            .filter(|&j| self.state[j] == State::Flagged)
            .count();
        if flags != self.counts[i] as usize {
            return Err(MinesError::BadMove(format!(
                "cell {cell} shows {} but has {flags} flags around it",
                self.counts[i]
            )));
        }
        let targets: Vec<usize> = dims
            .neighbours(i)
            .filter(|&j| self.state[j] == State::Hidden)
            .collect();
        let mut opened = 0;
        for j in targets {
            if self.status != Status::Playing {
                break;
            }
            if self.state[j] == State::Hidden {
                opened += self.open(j);
            }
        }
        Ok(opened)
    }

    /// What the player sees (after a loss, the exploded mine shows as a mine).
    pub fn view(&self) -> View {
        let cells = (0..self.dims().cells())
            .map(|i| match self.state[i] {
                State::Hidden => Seen::Hidden,
                State::Flagged => Seen::Flagged,
                State::Revealed => {
                    if self.mines.as_ref().is_some_and(|m| m[i]) {
                        Seen::Mine
                    } else {
                        Seen::Number(self.counts[i])
                    }
                }
            })
            .collect();
        View::new(self.dims(), self.config.mines, cells)
    }

    /// The cell whose mine ended the game, if any.
    pub fn exploded(&self) -> Option<Cell> {
        self.exploded
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(rows: &[&str]) -> Minefield {
        let dims = Dims::new(rows[0].len(), rows.len());
        let mines = rows
            .iter()
            .flat_map(|r| r.chars().map(|c| c == '*'))
            .collect();
        Minefield::with_layout(dims, mines).unwrap()
    }

    #[test]
    fn flood_fill_opens_zeros_and_stops_at_numbers() {
        let mut m = layout(&["....", "....", "...*"]);
        let opened = m.reveal(Cell::new(0, 0)).unwrap();
        assert_eq!(opened, 11);
        assert_eq!(m.status(), Status::Won);
        assert_eq!(
            m.reveal(Cell::new(0, 0)),
            Err(MinesError::BadMove("the game is over".into()))
        );
    }

    #[test]
    fn losing_flags_and_chords() {
        let mut m = layout(&["*..", "...", "..*"]);
        assert_eq!(m.reveal(Cell::new(1, 1)), Ok(1));
        assert_eq!(m.view().get(Cell::new(1, 1)), Seen::Number(2));
        assert!(m.chord(Cell::new(1, 1)).is_err());
        assert_eq!(m.toggle_flag(Cell::new(0, 0)), Ok(true));
        assert!(m.reveal(Cell::new(0, 0)).is_err());
        assert_eq!(m.toggle_flag(Cell::new(2, 2)), Ok(true));
        // two flags around the 2: chording opens the other six, winning
        assert_eq!(m.chord(Cell::new(1, 1)), Ok(6));
        assert_eq!(m.status(), Status::Won);

        let mut m = layout(&["*..", "...", "..*"]);
        m.reveal(Cell::new(1, 1)).unwrap();
        m.toggle_flag(Cell::new(0, 1)).unwrap(); // wrong flags
        m.toggle_flag(Cell::new(0, 2)).unwrap();
        m.chord(Cell::new(1, 1)).unwrap();
        assert_eq!(m.status(), Status::Lost);
        assert!(m.exploded().is_some());
        assert!(m.reveal(Cell::new(9, 9)).is_err());
    }

    #[test]
    fn first_click_rules_hold_over_many_seeds() {
        for seed in 0..300u64 {
            for rule in [FirstClick::Safe, FirstClick::Opening] {
                let cfg = Config::level(Level::Expert, rule);
                let mut m = Minefield::new(cfg, seed);
                let click = Cell::new((seed % 16) as usize, (seed * 7 % 30) as usize);
                m.reveal(click).unwrap();
                assert_ne!(m.status(), Status::Lost);
                let mines = m.layout().unwrap();
                assert_eq!(mines.iter().filter(|&&x| x).count(), 99);
                let i = cfg.dims.index(click);
                assert!(!mines[i]);
                if rule == FirstClick::Opening {
                    assert!(cfg.dims.neighbours(i).all(|j| !mines[j]));
                    assert!(m.view().revealed_count() > 1);
                }
            }
        }
    }

    #[test]
    fn same_seed_same_game() {
        for rule in [FirstClick::None, FirstClick::Safe, FirstClick::Opening] {
            let cfg = Config::level(Level::Intermediate, rule);
            let mut a = Minefield::new(cfg, 42);
            let mut b = Minefield::new(cfg, 42);
            let _ = a.reveal(Cell::new(3, 4));
            let _ = b.reveal(Cell::new(3, 4));
            assert_eq!(a.layout(), b.layout());
            let mut c = Minefield::new(cfg, 43);
            let _ = c.reveal(Cell::new(3, 4));
            assert_ne!(a.layout(), c.layout());
        }
    }

    #[test]
    fn bad_configs() {
        assert!(Config::new(0, 5, 1, FirstClick::None).is_err());
        assert!(Config::new(3, 3, 1, FirstClick::Opening).is_err());
        assert!(Config::new(3, 3, 8, FirstClick::Safe).is_ok());
        assert!(Config::new(3, 3, 9, FirstClick::Safe).is_err());
        assert!("sideways".parse::<FirstClick>().is_err());
        assert_eq!("Expert".parse::<Level>(), Ok(Level::Expert));
    }
}
