//! The Connect Four accuracy test set: positions from Pascal Pons' test sets, each
//! move classified by the solver as optimal (keeps the exact score) and as keeping the
//! result. The solver is the yardstick only; these positions are never trained on.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tabula_core::connect4::Geometry;
use tabula_core::{ConnectFour, Game};
use tabula_search::exact::{EvalSet, TestPosition};

use crate::solver::{Solver, SolverError};

/// The sets training runs measure on by default, half of the positions each.
pub const SETS: [&str; 2] = ["Test_L2_R1", "Test_L1_R1"];

/// All six of Pons' sets: end, middle and beginning of the game (L3, L2, L1), easy to
/// hard (R1..R3).
pub const ALL_SETS: [&str; 6] = [
    "Test_L3_R1",
    "Test_L2_R1",
    "Test_L2_R2",
    "Test_L1_R1",
    "Test_L1_R2",
    "Test_L1_R3",
];

/// Why the test set could not be made.
#[derive(Debug, thiserror::Error)]
pub enum TestSetError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
    /// A malformed line or cache.
    #[error("{0}")]
    Format(String),
    /// The solver refused a position.
    #[error(transparent)]
    Solver(#[from] SolverError),
}

#[derive(Serialize, Deserialize)]
struct Cached {
    moves: String,
    optimal: Vec<usize>,
    keeps: Vec<usize>,
}

/// `count` positions (0: all 1,000 of each) of `sets` (names of [`ALL_SETS`]) in
/// `dir`, an equal share from each, classified by the solver; the classification is
/// kept in `cache` (written atomically) and read back from it next time, since the
/// early positions of Test_L1_R1 take a minute or two.
pub fn pons_test_set(
    dir: &Path,
    sets: &[&str],
    count: usize,
    cache: &Path,
    log: &mut dyn FnMut(&str),
) -> Result<EvalSet<ConnectFour>, TestSetError> {
    if let Some(bad) = sets.iter().find(|s| !ALL_SETS.contains(s)) {
        return Err(TestSetError::Format(format!(
            "no test set {bad:?} (Pons' sets are {})",
            ALL_SETS.join(", ")
        )));
    }
    if sets.is_empty() {
        return Err(TestSetError::Format("no test set named".into()));
    }
    let per_set = if count == 0 {
        usize::MAX
    } else {
        count.div_ceil(sets.len())
    };
    let geo = Geometry::STANDARD;
    let cached: Vec<Cached> = match std::fs::read_to_string(cache) {
        Ok(text) => serde_json::from_str(&text)
            .map_err(|e| TestSetError::Format(format!("{}: {e}", cache.display())))?,
        Err(_) => {
            let mut solver = Solver::new(geo, 64);
            if let Ok(book) = crate::book::builtin() {
                solver.set_book(book);
            }
            let mut out = Vec::new();
            for &set in sets {
                let path = dir.join(set);
                let text = std::fs::read_to_string(&path).map_err(|source| TestSetError::Io {
                    path: path.clone(),
                    source,
                })?;
                log(&format!(
                    "classifying the moves of {} positions of {set} with the solver…",
                    per_set.min(1000)
                ));
                for line in text.lines().take(per_set) {
                    let Some(moves) = line.split_whitespace().next() else {
                        continue;
                    };
                    let game = ConnectFour::from_moves(geo, moves).map_err(|e| {
                        TestSetError::Format(format!("{}: bad line {line:?}: {e}", path.display()))
                    })?;
                    if game.is_terminal() {
                        continue;
                    }
                    let (_, classes) = solver.classify_moves(&game)?;
                    let pick = |f: fn(&(bool, bool)) -> bool| {
                        classes
                            .iter()
                            .enumerate()
                            .filter(|(_, c)| f(c))
                            .map(|(i, _)| i)
                            .collect()
                    };
                    out.push(Cached {
                        moves: moves.to_string(),
                        optimal: pick(|c| c.0),
                        keeps: pick(|c| c.1),
                    });
                }
            }
            write_atomic(cache, &out)?;
            out
        }
    };
    let mut positions = Vec::new();
    for c in cached {
        let game = ConnectFour::from_moves(geo, &c.moves).map_err(|e| {
            TestSetError::Format(format!(
                "{}: bad position {:?}: {e}",
                cache.display(),
                c.moves
            ))
        })?;
        positions.push(TestPosition {
            game,
            optimal: c.optimal,
            keeps: c.keeps,
        });
    }
    Ok(EvalSet {
        name: format!("{} positions of {}", positions.len(), sets.join(" and ")),
        positions,
    })
}

fn write_atomic(path: &Path, cached: &[Cached]) -> Result<(), TestSetError> {
    let io = |source| TestSetError::Io {
        path: path.to_path_buf(),
        source,
    };
    let text = serde_json::to_string(cached).map_err(|e| TestSetError::Format(e.to_string()))?;
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)
}
