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
///
/// `finished(set)` names a file, if any, that may hold the classification of all the
/// positions of `set`, in order (as `data/connect4-labels` ships them): when it does,
/// the first positions are taken from it instead of being classified again.
pub fn pons_test_set(
    dir: &Path,
    sets: &[&str],
    count: usize,
    cache: &Path,
    finished: &dyn Fn(&str) -> Option<PathBuf>,
    log: &mut dyn FnMut(&str),
) -> Result<EvalSet<ConnectFour>, TestSetError> {
    if let Some(bad) = sets
        .iter()
        .find(|s| !ALL_SETS.contains(s) && !is_file_name(s))
    {
        return Err(TestSetError::Format(format!(
            "no test set {bad:?} (Pons' sets are {}; a set of your own is a file name in {})",
            ALL_SETS.join(", "),
            dir.display()
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
    // Each set's first lines, and the moves of those that are still to play.
    let mut by_set = Vec::new();
    for &set in sets {
        let path = dir.join(set);
        let text = std::fs::read_to_string(&path).map_err(|source| TestSetError::Io {
            path: path.clone(),
            source,
        })?;
        let lines: Vec<(&str, PathBuf, String)> = text
            .lines()
            .take(per_set)
            .filter_map(|line| line.split_whitespace().next())
            .map(|moves| (set, path.clone(), moves.to_string()))
            .collect();
        by_set.push(lines);
    }
    let open: Vec<Vec<&str>> = by_set
        .iter()
        .map(|lines| {
            lines
                .iter()
                .map(|(_, _, m)| m.as_str())
                .filter(|m| !is_over(m))
                .collect()
        })
        .collect();
    // A cache of other positions (a set of one's own that was edited) is classified again.
    let from_cache = std::fs::read_to_string(cache).ok().map(|text| {
        serde_json::from_str::<Vec<Cached>>(&text)
            .map_err(|e| TestSetError::Format(format!("{}: {e}", cache.display())))
    });
    let cached: Vec<Cached> = match from_cache.transpose()? {
        Some(cached)
            if cached
                .iter()
                .map(|c| c.moves.as_str())
                .eq(open.iter().flatten().copied()) =>
        {
            cached
        }
        _ => {
            // A classification in progress goes on as it began; else each set's
            // finished labels, where they cover it, stand in for the solver.
            let resuming = progress_path(cache).exists();
            let mut taken = Vec::new();
            for (&set, moves) in sets.iter().zip(&open) {
                let labels = finished(set).filter(|_| !resuming).and_then(|path| {
                    let labels = finished_prefix(&path, moves)?;
                    log(&format!(
                        "{set}: the solver's labels from {}",
                        path.display()
                    ));
                    Some(labels)
                });
                taken.push(labels);
            }
            let todo: Vec<_> = by_set
                .iter()
                .zip(&taken)
                .filter(|(_, labels)| labels.is_none())
                .flat_map(|(lines, _)| lines.iter().cloned())
                .collect();
            let mut classified = classify(&todo, cache, log)?.into_iter();
            let mut out = Vec::new();
            for (moves, labels) in open.iter().zip(taken) {
                match labels {
                    Some(labels) => out.extend(labels),
                    None => out.extend(classified.by_ref().take(moves.len())),
                }
            }
            write_atomic(cache, &out)?;
            // The finished cache holds everything the progress file did.
            let _ = std::fs::remove_file(progress_path(cache));
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

/// Where the classification in progress is kept: one position per line, appended as
/// each is done, so that an interrupted labelling (hours for Test_L1_R3, whose early
/// positions take up to a minute each) resumes where it stopped.
pub fn progress_path(cache: &Path) -> PathBuf {
    let mut name = cache.as_os_str().to_owned();
    name.push(".partial");
    PathBuf::from(name)
}

/// Classifies the moves of `lines` (set, file, move string) in order, resuming from
/// and appending to the progress file of `cache`.
fn classify(
    lines: &[(&str, PathBuf, String)],
    cache: &Path,
    log: &mut dyn FnMut(&str),
) -> Result<Vec<Cached>, TestSetError> {
    use std::io::Write;
    let progress = progress_path(cache);
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| TestSetError::Io {
            path: path.clone(),
            source,
        }
    };
    let mut out: Vec<Cached> = Vec::new();
    if let Ok(text) = std::fs::read_to_string(&progress) {
        for line in text.lines() {
            // A line cut short by an interruption is classified again.
            let Ok(done) = serde_json::from_str::<Cached>(line) else {
                break;
            };
            out.push(done);
        }
        let expected = lines
            .iter()
            .map(|(_, _, moves)| moves)
            .filter(|moves| !is_over(moves));
        if out.len() > lines.len() || out.iter().zip(expected).any(|(c, m)| &c.moves != m) {
            return Err(TestSetError::Format(format!(
                "{} holds the progress of other positions; remove it to classify these",
                progress.display()
            )));
        }
        // Rewrite what was read, so that a cut line does not stay between two whole ones.
        let text: String = out
            .iter()
            .map(|c| serde_json::to_string(c).map(|l| l + "\n"))
            .collect::<Result<_, _>>()
            .map_err(|e| TestSetError::Format(e.to_string()))?;
        std::fs::write(&progress, text).map_err(io(&progress))?;
        if !out.is_empty() {
            log(&format!(
                "resuming the classification after {} positions",
                out.len()
            ));
        }
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&progress)
        .map_err(io(&progress))?;
    let geo = Geometry::STANDARD;
    let mut solver = Solver::new(geo, 64);
    if let Ok(book) = crate::book::builtin() {
        solver.set_book(book);
    }
    let mut done = 0;
    let mut last_set = "";
    let start = std::time::Instant::now();
    for (set, path, moves) in lines {
        let game = ConnectFour::from_moves(geo, moves).map_err(|e| {
            TestSetError::Format(format!("{}: bad position {moves:?}: {e}", path.display()))
        })?;
        if game.is_terminal() {
            continue;
        }
        done += 1;
        if done <= out.len() {
            continue;
        }
        if *set != last_set {
            log(&format!(
                "classifying the moves of the positions of {set} with the solver…"
            ));
            last_set = set;
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
        let c = Cached {
            moves: moves.clone(),
            optimal: pick(|c| c.0),
            keeps: pick(|c| c.1),
        };
        let line = serde_json::to_string(&c).map_err(|e| TestSetError::Format(e.to_string()))?;
        writeln!(file, "{line}").map_err(io(&progress))?;
        out.push(c);
        if done % 50 == 0 {
            log(&format!(
                "{done} positions classified ({:.0} s this time)",
                start.elapsed().as_secs_f64()
            ));
        }
    }
    Ok(out)
}

/// The labels of `moves` (a set's positions in order, from its first) when the
/// finished classification in `path` starts with exactly them; `None` when it is
/// missing, unreadable or of other positions.
fn finished_prefix(path: &Path, moves: &[&str]) -> Option<Vec<Cached>> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut all: Vec<Cached> = serde_json::from_str(&text).ok()?;
    if all.len() < moves.len() || all.iter().zip(moves).any(|(c, m)| c.moves != *m) {
        return None;
    }
    all.truncate(moves.len());
    Some(all)
}

/// Whether `name` names a file directly inside a folder (no path, no `..`).
fn is_file_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\'])
}

/// Whether a move string ends the game (such positions are skipped); a malformed one is
/// not, so that classifying reports it.
fn is_over(moves: &str) -> bool {
    ConnectFour::from_moves(Geometry::STANDARD, moves).is_ok_and(|g| g.is_terminal())
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder with a small Test_L3_R1 (end-game positions, quick to solve).
    fn fixture(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("tabula-test-set-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("Test_L3_R1"),
            "2252576253462244111563365343671351441 -1\n\
             7422341735647741166133573473242566 1\n\
             23163416124767223154467471272416755633 0\n\
             65214673556155731566316327373221417 -1\n",
        )
        .unwrap();
        dir
    }

    /// No finished labels anywhere.
    fn none(_: &str) -> Option<PathBuf> {
        None
    }

    #[test]
    fn finished_labels_stand_in_for_the_solver_only_for_their_own_positions() {
        let dir = fixture("finished");
        let cache = dir.join("labels.json");
        let finished = dir.join("finished.json");
        let finished_of = |_: &str| Some(finished.clone());
        // Labels no solver would give (column 7 everywhere) show where they came from.
        let moves = [
            "2252576253462244111563365343671351441",
            "7422341735647741166133573473242566",
            "23163416124767223154467471272416755633",
            "65214673556155731566316327373221417",
            "4444",
        ];
        let fake: Vec<Cached> = moves
            .iter()
            .map(|m| Cached {
                moves: m.to_string(),
                optimal: vec![6],
                keeps: vec![6],
            })
            .collect();
        std::fs::write(&finished, serde_json::to_string(&fake).unwrap()).unwrap();
        let mut logged = Vec::new();
        let set = pons_test_set(&dir, &["Test_L3_R1"], 2, &cache, &finished_of, &mut |l| {
            logged.push(l.to_string())
        })
        .unwrap();
        assert_eq!(set.positions.len(), 2);
        assert!(set.positions.iter().all(|p| p.optimal == [6]));
        assert!(
            logged.iter().any(|l| l.contains("finished.json")),
            "{logged:?}"
        );

        // Labels of other positions are not taken: the solver classifies.
        std::fs::remove_file(&cache).unwrap();
        std::fs::write(&finished, serde_json::to_string(&fake[1..]).unwrap()).unwrap();
        let set =
            pons_test_set(&dir, &["Test_L3_R1"], 2, &cache, &finished_of, &mut |_| {}).unwrap();
        let solved = pons_test_set(
            &dir,
            &["Test_L3_R1"],
            2,
            &dir.join("b.json"),
            &none,
            &mut |_| {},
        )
        .unwrap();
        for (a, b) in set.positions.iter().zip(&solved.positions) {
            assert_eq!((&a.optimal, &a.keeps), (&b.optimal, &b.keeps));
        }
        assert!(set.positions.iter().all(|p| p.optimal != [6]));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_interrupted_classification_resumes_where_it_stopped() {
        let dir = fixture("resume");
        let cache = dir.join("labels.json");
        let set = |log: &mut dyn FnMut(&str)| {
            pons_test_set(&dir, &["Test_L3_R1"], 0, &cache, &none, log).unwrap()
        };
        let whole = set(&mut |_| {});
        assert_eq!(whole.positions.len(), 4);
        assert!(
            !progress_path(&cache).exists(),
            "finished: no progress file left"
        );
        let full = std::fs::read_to_string(&cache).unwrap();
        let cached: Vec<Cached> = serde_json::from_str(&full).unwrap();

        // Stopped after two positions, in the middle of writing the third.
        std::fs::remove_file(&cache).unwrap();
        let mut progress = String::new();
        for c in &cached[..2] {
            progress += &(serde_json::to_string(c).unwrap() + "\n");
        }
        progress += &serde_json::to_string(&cached[2]).unwrap()[..10];
        std::fs::write(progress_path(&cache), progress).unwrap();
        let mut logged = Vec::new();
        let resumed = set(&mut |l| logged.push(l.to_string()));
        assert!(
            logged.iter().any(|l| l.contains("after 2 positions")),
            "{logged:?}"
        );
        assert_eq!(std::fs::read_to_string(&cache).unwrap(), full);
        for (a, b) in resumed.positions.iter().zip(&whole.positions) {
            assert_eq!((&a.optimal, &a.keeps), (&b.optimal, &b.keeps));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_set_of_ones_own_is_classified_and_an_edit_of_it_classified_again() {
        let dir = fixture("own");
        let cache = dir.join("labels.json");
        let lines = std::fs::read_to_string(dir.join("Test_L3_R1")).unwrap();
        let mut lines: Vec<&str> = lines.lines().collect();
        std::fs::write(dir.join("Mine"), lines[..2].join("\n")).unwrap();
        let mine = |log: &mut dyn FnMut(&str)| {
            pons_test_set(&dir, &["Mine"], 0, &cache, &none, log).unwrap()
        };
        let first = mine(&mut |_| {});
        assert_eq!(first.positions.len(), 2);
        // read back from the cache, not classified again
        let mut logged = Vec::new();
        assert_eq!(mine(&mut |l| logged.push(l.to_string())).positions.len(), 2);
        assert!(logged.is_empty(), "{logged:?}");
        // the file edited: its cache no longer answers for it
        lines.swap(0, 2);
        std::fs::write(dir.join("Mine"), lines[..2].join("\n")).unwrap();
        let mut logged = Vec::new();
        let edited = mine(&mut |l| logged.push(l.to_string()));
        assert!(
            logged.iter().any(|l| l.contains("classifying")),
            "{logged:?}"
        );
        let whole = pons_test_set(
            &dir,
            &["Test_L3_R1"],
            0,
            &dir.join("w.json"),
            &none,
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(edited.positions[0].optimal, whole.positions[2].optimal);
        assert_eq!(edited.positions[1].optimal, whole.positions[1].optimal);
        // a path is not a set's name
        for bad in ["../Mine", "", ".."] {
            let Err(err) = pons_test_set(&dir, &[bad], 0, &cache, &none, &mut |_| {}) else {
                panic!("{bad:?} was taken for a set");
            };
            assert!(err.to_string().contains("no test set"), "{err}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn progress_of_other_positions_is_refused_and_kept() {
        let dir = fixture("other");
        let cache = dir.join("labels.json");
        let other = r#"{"moves":"4444","optimal":[3],"keeps":[3]}"#.to_string() + "\n";
        std::fs::write(progress_path(&cache), &other).unwrap();
        let Err(err) = pons_test_set(&dir, &["Test_L3_R1"], 0, &cache, &none, &mut |_| {}) else {
            panic!("progress of other positions was taken");
        };
        assert!(err.to_string().contains("other positions"), "{err}");
        assert_eq!(
            std::fs::read_to_string(progress_path(&cache)).unwrap(),
            other
        );
        assert!(!cache.exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
