//! Training data: positions from games the exact agent plays, labelled with exact mine
//! probabilities, split by game seed into training, validation and test sets.
//!
//! Data games use seeds from [`DATA_SEED_BASE`] up, so they never share a layout with
//! the win-rate benchmarks (`tabula mines bench`, seeds from 1). A game's seed also
//! picks its first click, uniformly over the board, so positions cover every opening.
//! Positions whose probabilities the exact solver could only estimate are skipped.

use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use tabula_mines::{Agent, Cell, Config, Dims, ExactSolver, Minefield, Seen, Status, View};

use crate::error::io_err;
use crate::AutoMineError;

/// The first seed of data games (benchmarks use seeds from 1).
pub const DATA_SEED_BASE: u64 = 1 << 40;

/// Which set a game belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    /// Trained on.
    Train,
    /// Watched during training (losses in the metrics).
    Validation,
    /// Measured once at the end; never used to choose anything.
    Test,
}

impl Split {
    /// The set of the game with `seed`: one game in ten is validation, one is test.
    pub fn of(seed: u64) -> Split {
        match seed % 10 {
            0 => Split::Test,
            1 => Split::Validation,
            _ => Split::Train,
        }
    }
}

/// One labelled position.
#[derive(Clone, Debug, PartialEq)]
pub struct Position {
    /// The seed of the game it comes from.
    pub seed: u64,
    /// What the player saw.
    pub view: View,
    /// Exact P(mine) of every cell (0 on revealed cells).
    pub target: Vec<f32>,
}

/// Plays `games` games of `config` with the exact agent (seeds `first_seed..`) and
/// keeps each turn's position with probability `keep`. Runs on rayon's pool.
pub fn generate(
    config: Config,
    first_seed: u64,
    games: u64,
    keep: f64,
) -> Result<Vec<Position>, AutoMineError> {
    let per_game: Vec<Result<Vec<Position>, AutoMineError>> = (first_seed..first_seed + games)
        .into_par_iter()
        .map(|seed| play_and_record(config, seed, keep))
        .collect();
    let mut out = Vec::new();
    for g in per_game {
        out.extend(g?);
    }
    Ok(out)
}

/// One data game: the positions kept from it.
pub fn play_and_record(
    config: Config,
    seed: u64,
    keep: f64,
) -> Result<Vec<Position>, AutoMineError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed_f1c5);
    let mut game = Minefield::new(config, seed);
    let dims = config.dims;
    let first = dims.cell(rng.random_range(0..dims.cells()));
    game.reveal(first)?;
    let solver = ExactSolver::default();
    let mut agent = Agent::new(ExactSolver::default());
    let mut kept = Vec::new();
    while game.status() == Status::Playing {
        let view = game.view();
        let probs = solver.solve(&view)?;
        if !probs.approximate && rng.random_bool(keep.clamp(0.0, 1.0)) {
            kept.push(Position {
                seed,
                target: probs.p.iter().map(|&p| p as f32).collect(),
                view: view.clone(),
            });
        }
        agent.decide(&view, &probs).apply(&mut game)?;
    }
    Ok(kept)
}

const MAGIC: &[u8; 8] = b"TBMINES1";

fn seen_byte(s: Seen) -> u8 {
    match s {
        Seen::Number(k) => k,
        Seen::Hidden => 9,
        Seen::Flagged => 10,
        Seen::Mine => 11,
    }
}

fn byte_seen(b: u8) -> Option<Seen> {
    Some(match b {
        0..=8 => Seen::Number(b),
        9 => Seen::Hidden,
        10 => Seen::Flagged,
        11 => Seen::Mine,
        _ => return None,
    })
}

/// Writes positions to `path` (atomically: a temporary file renamed into place).
pub fn write(path: &Path, positions: &[Position]) -> Result<(), AutoMineError> {
    let tmp = path.with_extension("tmp");
    let file = std::fs::File::create(&tmp).map_err(io_err(&tmp))?;
    let mut w = BufWriter::new(file);
    let mut bytes = Vec::new();
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&(positions.len() as u64).to_le_bytes());
    w.write_all(&bytes).map_err(io_err(&tmp))?;
    for p in positions {
        let dims = p.view.dims();
        bytes.clear();
        bytes.extend_from_slice(&p.seed.to_le_bytes());
        for v in [dims.width, dims.height, p.view.mines()] {
            bytes.extend_from_slice(&(v as u32).to_le_bytes());
        }
        bytes.extend(p.view.cells().iter().map(|&s| seen_byte(s)));
        for t in &p.target {
            bytes.extend_from_slice(&t.to_le_bytes());
        }
        w.write_all(&bytes).map_err(io_err(&tmp))?;
    }
    w.flush().map_err(io_err(&tmp))?;
    drop(w);
    std::fs::rename(&tmp, path).map_err(io_err(path))
}

/// Reads positions written by [`write`]; a damaged file is an error, never a panic.
pub fn read(path: &Path) -> Result<Vec<Position>, AutoMineError> {
    let file = std::fs::File::open(path).map_err(io_err(path))?;
    let bad = |reason: String| AutoMineError::BadData {
        path: path.display().to_string(),
        reason,
    };
    let mut r = BufReader::new(file);
    let mut head = [0u8; 16];
    r.read_exact(&mut head)
        .map_err(|_| bad("shorter than its header".into()))?;
    if &head[..8] != MAGIC {
        return Err(bad("not a Tabula Minesweeper data file".into()));
    }
    let count = u64::from_le_bytes(head[8..16].try_into().unwrap_or_default());
    let mut out = Vec::new();
    let mut fixed = [0u8; 20];
    for k in 0..count {
        r.read_exact(&mut fixed)
            .map_err(|_| bad(format!("ends inside position {k} of {count}")))?;
        let word =
            |i: usize| u32::from_le_bytes(fixed[i..i + 4].try_into().unwrap_or_default()) as usize;
        let seed = u64::from_le_bytes(fixed[..8].try_into().unwrap_or_default());
        let (width, height, mines) = (word(8), word(12), word(16));
        if !(1..=1024).contains(&width) || !(1..=1024).contains(&height) || mines > width * height {
            return Err(bad(format!(
                "position {k} has a {width}x{height} board with {mines} mines"
            )));
        }
        let n = width * height;
        let mut cells = vec![0u8; n];
        let mut target = vec![0u8; 4 * n];
        r.read_exact(&mut cells)
            .and_then(|_| r.read_exact(&mut target))
            .map_err(|_| bad(format!("ends inside position {k} of {count}")))?;
        let cells = cells
            .iter()
            .map(|&b| byte_seen(b))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| bad(format!("position {k} has an unknown cell code")))?;
        let target: Vec<f32> = target
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        if target.iter().any(|t| !(0.0..=1.0).contains(t)) {
            return Err(bad(format!("position {k} has a target outside [0, 1]")));
        }
        out.push(Position {
            seed,
            view: View::new(Dims::new(width, height), mines, cells),
            target,
        });
    }
    Ok(out)
}

/// The cell that cell `i` goes to under one of the board's symmetries (8 on a square
/// board, 4 otherwise): `sym & 1` flips rows, `sym & 2` flips columns, `sym & 4`
/// transposes (square boards only). Every symmetry here is its own inverse.
pub fn symmetry_map(dims: Dims, sym: u8) -> impl Fn(usize) -> usize {
    let transpose = sym & 4 != 0 && dims.width == dims.height;
    move |i: usize| -> usize {
        let Cell { mut row, mut col } = dims.cell(i);
        if sym & 1 != 0 {
            row = dims.height - 1 - row;
        }
        if sym & 2 != 0 {
            col = dims.width - 1 - col;
        }
        if transpose {
            std::mem::swap(&mut row, &mut col);
        }
        dims.index(Cell::new(row, col))
    }
}

/// `p` under one of the board's symmetries (see [`symmetry_map`]).
pub fn transform(p: &Position, sym: u8) -> Position {
    let dims = p.view.dims();
    let map = symmetry_map(dims, sym);
    let mut cells = p.view.cells().to_vec();
    let mut target = p.target.clone();
    for i in 0..cells.len() {
        let j = map(i);
        cells[j] = p.view.cells()[i];
        target[j] = p.target[i];
    }
    Position {
        seed: p.seed,
        view: View::new(dims, p.view.mines(), cells),
        target,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tabula_mines::{FirstClick, Level};

    #[test]
    fn positions_are_exactly_labelled_and_round_trip() {
        let config = Config::level(Level::Beginner, FirstClick::Safe);
        let positions = generate(config, DATA_SEED_BASE, 6, 1.0).unwrap();
        assert!(positions.len() >= 6, "{}", positions.len());
        let solver = ExactSolver::default();
        for p in &positions {
            let exact = solver.solve(&p.view).unwrap();
            for (a, b) in exact.p.iter().zip(&p.target) {
                assert!((*a as f32 - b).abs() < 1e-6);
            }
        }
        let dir = std::env::temp_dir().join(format!("automine-data-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("d.bin");
        write(&path, &positions).unwrap();
        assert_eq!(read(&path).unwrap(), positions);
        // damaged files are refused with a reason
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        assert!(read(&path).unwrap_err().to_string().contains("ends inside"));
        std::fs::write(&path, b"garbage!garbage!").unwrap();
        assert!(read(&path)
            .unwrap_err()
            .to_string()
            .contains("not a Tabula"));
        let mut bad = bytes.clone();
        bad[16 + 20] = 200; // the first cell code of the first position
        std::fs::write(&path, &bad).unwrap();
        assert!(read(&path).unwrap_err().to_string().contains("cell code"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn splits_are_by_game_and_symmetries_keep_labels_consistent() {
        assert_eq!(Split::of(10), Split::Test);
        assert_eq!(Split::of(21), Split::Validation);
        assert_eq!(Split::of(22), Split::Train);
        let config = Config::level(Level::Beginner, FirstClick::Opening);
        let p = play_and_record(config, DATA_SEED_BASE + 3, 1.0)
            .unwrap()
            .remove(0);
        let solver = ExactSolver::default();
        for sym in 0..8 {
            let t = transform(&p, sym);
            let exact = solver.solve(&t.view).unwrap();
            for (a, b) in exact.p.iter().zip(&t.target) {
                assert!((*a as f32 - b).abs() < 1e-6, "symmetry {sym}");
            }
        }
        assert_eq!(transform(&p, 0), p);
    }
}
