//! End-to-end tests of the `tabula` command line.

mod common;

use common::{tabula, text};

#[test]
fn solve_prints_pons_scores() {
    let out = tabula(&["solve", "connect4", "4455", "44455554221"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "4455 18\n44455554221 -15\n");
}

#[test]
fn solve_reports_invalid_lines_and_goes_on() {
    let input = "4455\n448\n1111111\n12121212\nabc\n44455554221 -15\n4455 3\n";
    let out = tabula(&["solve", "connect4"], input);
    assert_eq!(out.status.code(), Some(1));
    // valid lines are still solved, in order
    assert_eq!(text(&out.stdout), "4455 18\n44455554221 -15\n4455 18\n");
    let err = text(&out.stderr);
    for needle in [
        "line 2",
        "line 3",
        "line 4",
        "line 5",
        "line 7: 4455: expected 3, solved 18",
    ] {
        assert!(err.contains(needle), "stderr lacks {needle:?}:\n{err}");
    }
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn solve_weak_and_analyze() {
    let out = tabula(&["solve", "connect4", "--weak", "4455", "44455554221"], "");
    assert_eq!(text(&out.stdout), "4455 1\n44455554221 -1\n");
    // Test_L3_R1, first line; column 4 is full
    let pos = "2252576253462244111563365343671351441";
    let out = tabula(&["solve", "connect4", "--analyze", pos], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let line = text(&out.stdout);
    let fields: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(fields.len(), 8, "{line}");
    assert_eq!(fields[0], pos);
    assert_eq!(fields[4], "-1000");
    let best = fields[1..].iter().map(|s| s.parse::<i32>().unwrap()).max();
    assert_eq!(best, Some(-1));
}

#[test]
fn solve_reads_a_test_set_from_stdin_and_agrees() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/data/connect4/Test_L3_R1"
    );
    let data = std::fs::read_to_string(path).expect("Pons' test set beside the checkout");
    let first: String = data.lines().take(100).map(|l| format!("{l}\n")).collect();
    let out = tabula(&["solve", "connect4"], &first);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), first);
}

#[test]
fn the_empty_board_from_the_opening_book() {
    // column scores of the empty board: only the centre wins (DESIGN.md's oracle)
    let out = tabula(&["solve", "connect4", "--analyze", ""], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), " -2 -1 0 1 0 -1 -2\n");
    let out = tabula(&["solve", "connect4", "", "4", "44"], "");
    assert_eq!(text(&out.stdout), " 1\n4 -1\n44 1\n");
    // on the perfect player's lines the book scores every column deep into the opening
    // (`--analyze --no-book 444` proves the first line in about a minute)
    let out = tabula(&["solve", "connect4", "--analyze", "444", "4444"], "");
    assert_eq!(
        text(&out.stdout),
        "444 -4 -4 -3 -1 -3 -4 -4\n4444 -2 -2 -2 1 -2 -2 -2\n"
    );
}

#[test]
fn solve_small_boards_and_bad_specs() {
    let out = tabula(&["solve", "connect4:4x4", ""], "");
    assert_eq!(text(&out.stdout), " 0\n");
    let out = tabula(&["solve", "tictactoe", "1"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("no exact solver"),
        "{}",
        text(&out.stderr)
    );
    let out = tabula(&["solve", "connect4:9x9", "1"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("64"), "{}", text(&out.stderr));
}

#[test]
fn a_line_that_is_not_utf8_is_reported_and_the_batch_goes_on() {
    let out = common::tabula_bytes(&["solve", "connect4"], b"4455 18\n\xff\n44455554221 -15\n");
    assert_eq!(out.status.code(), Some(1), "one bad line");
    assert_eq!(text(&out.stdout), "4455 18\n44455554221 -15\n");
    assert!(
        text(&out.stderr).contains("line 2: not UTF-8"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn counts_out_of_range_are_refused() {
    for args in [
        &["solve", "connect4", "--table-mb", "100000000", "4"][..],
        &["mines", "bench", "--games", "0"],
        &["mines", "bench", "--threads", "20000", "--games", "1"],
        &["analyze", "tictactoe", "--sims", "0"],
        &["match", "--opponent", "true", "--games", "0"],
    ] {
        common::refused(args, "", "not in");
    }
}

/// Total memory and swap in KiB, and whether the kernel refuses allocations beyond
/// them (heuristic overcommit), read from /proc; `None` where that cannot be told.
fn memory_is_bounded_below(kib: u64) -> Option<bool> {
    let mode = std::fs::read_to_string("/proc/sys/vm/overcommit_memory").ok()?;
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = info.lines().find(|l| l.starts_with(name))?;
        line.split_whitespace().nth(1)?.parse().ok()
    };
    let total = field("MemTotal:")? + field("SwapTotal:")?;
    Some(mode.trim() != "1" && total < kib)
}

#[test]
fn a_table_the_machine_cannot_hold_is_an_error_not_an_abort() {
    // 64 GiB, the largest accepted; where the kernel refuses it (less memory than
    // that and no unbounded overcommit) the refusal must be a message
    if memory_is_bounded_below(60 << 20) != Some(true) {
        eprintln!("skipped: this machine might grant a 64 GiB table");
        return;
    }
    let out = tabula(&["solve", "connect4", "--table-mb", "65536", "4"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("cannot be allocated"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn perft_counts() {
    let out = tabula(&["perft", "tictactoe", "9"], "");
    assert!(out.status.success());
    let s = text(&out.stdout);
    assert!(s.contains("127872"), "{s}");
    assert!(s.contains("5478 distinct positions"), "{s}");
    let out = tabula(&["perft", "connect4", "5"], "");
    let s = text(&out.stdout);
    assert!(
        s.lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["5", "16807", "4263", "0"]),
        "{s}"
    );
    let out = tabula(&["perft", "chess", "3"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("unknown game"));
}

#[test]
fn play_tictactoe_reprompts_on_bad_input_and_never_loses() {
    // The person tries an occupied cell, garbage and an out-of-range cell, then plays on.
    let input = "5\n5\nbanana\n0\n1\n2\n3\n4\n6\n7\n8\n9\n";
    let out = tabula(&["play", "tictactoe"], input);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("illegal move 5"), "{s}");
    assert!(s.contains("cannot read move \"banana\""), "{s}");
    assert!(s.contains("Game over"), "{s}");
    assert!(!s.contains("You win"), "{s}");
    assert!(s.contains("AI (O) plays"), "{s}");
    assert!(s.contains("evaluation for the AI"), "{s}");
}

#[test]
fn play_as_second_and_stop_at_end_of_input() {
    let out = tabula(&["play", "ttt", "--you", "second"], "help\nquit\n");
    assert!(out.status.success());
    let s = text(&out.stdout);
    assert!(s.contains("AI (X) plays 1"), "{s}");
    assert!(s.contains("Legal moves: 2 3 4 5 6 7 8 9"), "{s}");
    let out = tabula(&["play", "connect4:5x4"], "3\n");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("(end of input)"));
}

#[test]
fn bench_playouts_times_searches_on_a_shared_tree() {
    let out = tabula(
        &[
            "bench",
            "playouts",
            "--size",
            "9",
            "--policy",
            "heavy",
            "--seconds",
            "0.2",
            "--search-threads",
            "1,2",
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    for threads in ["on 1 thread(s)", "on 2 thread(s)"] {
        let line = stdout
            .lines()
            .find(|l| l.starts_with("search sims/s:") && l.contains(threads))
            .unwrap_or_else(|| panic!("no search line {threads:?} in:\n{stdout}"));
        let rate: f64 = line.split_whitespace().nth(2).unwrap().parse().unwrap();
        assert!(rate > 0.0, "{line}");
    }
    common::refused(
        &["bench", "playouts", "--search-threads", "0"],
        "",
        "not in",
    );
    common::refused(
        &["bench", "playouts", "--rave", "nan"],
        "",
        "expected a number",
    );
}
