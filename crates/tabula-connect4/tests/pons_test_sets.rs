//! Pascal Pons' Connect Four test sets, solved exactly: every line's score must match.
//!
//! The sets live in `../shared/data/connect4/` beside the checkout (override with
//! `TABULA_C4_DATA`). They are reference data and are not copied into the repository.

use std::path::PathBuf;

use tabula_connect4::Solver;
use tabula_core::connect4::Geometry;
use tabula_core::ConnectFour;

fn data_dir() -> PathBuf {
    match std::env::var_os("TABULA_C4_DATA") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/connect4"),
    }
}

fn check_set(name: &str, weak: bool) {
    let path = data_dir().join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e} (set TABULA_C4_DATA)", path.display()));
    let mut solver = Solver::new(Geometry::STANDARD, 16);
    let mut count = 0;
    for (i, line) in text.lines().enumerate() {
        let mut f = line.split_whitespace();
        let moves = f.next().expect("moves");
        let want: i32 = f.next().expect("score").parse().expect("integer score");
        let game = ConnectFour::from_moves(Geometry::STANDARD, moves)
            .unwrap_or_else(|e| panic!("{name}:{}: {e}", i + 1));
        let got = solver.solve(&game, weak).expect("solvable");
        let want = if weak { want.signum() } else { want };
        assert_eq!(got, want, "{name}:{}: {moves}", i + 1);
        count += 1;
    }
    assert_eq!(count, 1000, "{name} should have 1000 positions");
}

#[test]
fn end_easy_l3_r1() {
    check_set("Test_L3_R1", false);
}

#[test]
fn middle_easy_l2_r1() {
    check_set("Test_L2_R1", false);
}

#[test]
fn beginning_easy_l1_r1() {
    check_set("Test_L1_R1", false);
}

#[test]
fn middle_medium_l2_r2() {
    check_set("Test_L2_R2", false);
}

#[test]
fn weak_middle_medium_l2_r2() {
    check_set("Test_L2_R2", true);
}

/// `classify_moves` (one solve and a null-window test per column) agrees with exact
/// scores of every column.
#[test]
fn move_classification_matches_exact_column_scores() {
    let path = data_dir().join("Test_L2_R1");
    let text = std::fs::read_to_string(&path).expect("Test_L2_R1");
    let mut solver = Solver::new(Geometry::STANDARD, 16);
    for line in text.lines().take(150) {
        let moves = line.split_whitespace().next().expect("moves");
        let game = ConnectFour::from_moves(Geometry::STANDARD, moves).expect("valid");
        let scores = solver.analyze(&game, false).expect("solvable");
        let (score, classes) = solver.classify_moves(&game).expect("solvable");
        let playable: Vec<usize> = (0..7).filter(|&c| game.can_play(c)).collect();
        let best = playable.iter().map(|&c| scores[c]).max().expect("a move");
        assert_eq!(score, best, "{moves}");
        for c in 0..7 {
            let want = if game.can_play(c) {
                (scores[c] == best, scores[c].signum() == best.signum())
            } else {
                (false, false)
            };
            assert_eq!(classes[c], want, "{moves} column {}", c + 1);
        }
    }
}

/// On early positions (Test_L1_R1), where exact column scores take minutes, the
/// classification's score is the set's, some column is optimal, every optimal column
/// keeps the result, and full columns are neither.
#[test]
fn classification_of_early_positions_is_consistent_with_the_set() {
    let text = std::fs::read_to_string(data_dir().join("Test_L1_R1")).expect("set");
    let mut solver = Solver::new(Geometry::STANDARD, 64);
    for line in text.lines().take(10) {
        let mut fields = line.split_whitespace();
        let moves = fields.next().expect("moves");
        let want: i32 = fields.next().expect("score").parse().expect("integer");
        let game = ConnectFour::from_moves(Geometry::STANDARD, moves).expect("valid");
        let (score, classes) = solver.classify_moves(&game).expect("solvable");
        assert_eq!(score, want, "{moves}");
        assert!(classes.iter().any(|c| c.0), "{moves}: no optimal column");
        for (col, &(optimal, keeps)) in classes.iter().enumerate() {
            assert!(!optimal || keeps, "{moves} column {col}");
            assert!(game.can_play(col) || !keeps, "{moves} column {col} is full");
        }
    }
}

/// The solver's labels shipped in `data/connect4-labels/` (what `tabula accuracy
/// --labels` reads) hold every position of their set in order, each with an optimal
/// column among the result-keeping playable ones; on the quick end-game set they are
/// what the solver says afresh.
#[test]
fn shipped_labels_match_the_sets_and_the_solver() {
    let labels = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/connect4-labels");
    let mut solver = Solver::new(Geometry::STANDARD, 16);
    for set in tabula_connect4::test_set::ALL_SETS {
        let path = labels.join(format!("tabula-eval-connect4-{set}-0.json"));
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let cached: Vec<serde_json::Value> = serde_json::from_str(&text).expect("a JSON list");
        let lines = std::fs::read_to_string(data_dir().join(set)).expect("set");
        assert_eq!(cached.len(), 1000, "{set}");
        for (i, (entry, line)) in cached.iter().zip(lines.lines()).enumerate() {
            let moves = line.split_whitespace().next().expect("moves");
            assert_eq!(entry["moves"], moves, "{set}: position {}", i + 1);
            let columns = |key: &str| -> Vec<usize> {
                entry[key]
                    .as_array()
                    .expect("a list")
                    .iter()
                    .map(|c| c.as_u64().expect("a column") as usize)
                    .collect()
            };
            let (optimal, keeps) = (columns("optimal"), columns("keeps"));
            let game = ConnectFour::from_moves(Geometry::STANDARD, moves).expect("valid");
            assert!(!optimal.is_empty(), "{set}: {moves}");
            assert!(optimal.iter().all(|c| keeps.contains(c)), "{set}: {moves}");
            assert!(keeps.iter().all(|&c| game.can_play(c)), "{set}: {moves}");
            if set == "Test_L3_R1" && i < 200 {
                let (_, classes) = solver.classify_moves(&game).expect("solvable");
                let want = |f: fn(&(bool, bool)) -> bool| -> Vec<usize> {
                    (0..7).filter(|&c| f(&classes[c])).collect()
                };
                assert_eq!(optimal, want(|c| c.0), "{moves}");
                assert_eq!(keeps, want(|c| c.1), "{moves}");
            }
        }
    }
}
