//! End-to-end tests of `tabula mines`.

mod common;

use common::{refused, tabula, text};

fn temp_file(name: &str, contents: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tabula-cli-mines-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, contents).expect("write temp file");
    path
}

#[test]
fn solve_prints_the_probability_grid() {
    let path = temp_file("pos.txt", "# two 1s sharing two cells\n3x2 1\n01.\n01.\n");
    let out = tabula(&["mines", "solve", path.to_str().unwrap()], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    let rows: Vec<&str> = s.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(rows, ["  [0]   [1] 0.500", "  [0]   [1] 0.500"], "{s}");
    assert!(s.contains("consistent layouts: about 10^0.30"), "{s}");
    let out = tabula(
        &[
            "mines",
            "solve",
            "--solver",
            "teacher",
            path.to_str().unwrap(),
        ],
        "",
    );
    assert!(text(&out.stdout).contains("0.500"));
}

#[test]
fn solve_rejects_bad_files_clearly() {
    let path = temp_file("bad.txt", "3x2 1\n01.\n0x.\n");
    let out = tabula(&["mines", "solve", path.to_str().unwrap()], "");
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("line 3, column 2"), "{err}");
    let path = temp_file("inconsistent.txt", "3x1 2\n1.1\n");
    let out = tabula(&["mines", "solve", path.to_str().unwrap()], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("inconsistent"));
    let out = tabula(&["mines", "solve", "/nonexistent/file"], "");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn bench_reports_a_win_rate_with_an_interval() {
    let json = temp_file("bench.jsonl", "");
    let out = tabula(
        &[
            "mines",
            "bench",
            "--level",
            "beginner",
            "--games",
            "40",
            "--threads",
            "1",
            "--json",
            json.to_str().unwrap(),
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("win rate:") && s.contains("95% CI"), "{s}");
    assert!(s.contains("guesses/game:"), "{s}");
    let line = std::fs::read_to_string(&json).unwrap();
    assert!(line.contains("\"games\":40"), "{line}");
    let out = tabula(&["mines", "bench", "--level", "godlike"], "");
    assert_eq!(out.status.code(), Some(2));
    let out = tabula(
        &[
            "mines", "bench", "--width", "3", "--height", "3", "--mines", "5",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(2), "opening needs 9 free cells");
}

#[test]
fn play_takes_commands_and_survives_bad_input() {
    let save = std::env::temp_dir().join(format!("tabula-mines-save-{}.txt", std::process::id()));
    let input = format!(
        "r 4 4\nhint\nr 99 99\nf 4 4\ndance\nsave {}\nquit\n",
        save.display()
    );
    let out = tabula(
        &["mines", "play", "--level", "beginner", "--seed", "7"],
        &input,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("P(mine) in tenths"), "{s}");
    assert!(s.contains("off the board"), "{s}");
    assert!(s.contains("already revealed"), "{s}");
    assert!(s.contains("unknown command"), "{s}");
    let saved = std::fs::read_to_string(&save).expect("saved position");
    assert!(saved.starts_with("9x9 10\n"), "{saved}");
}

/// A custom board needs all three of width, height and mines, and never mixes with a
/// level: nothing the user typed is silently ignored.
#[test]
fn board_options_are_all_or_nothing() {
    for args in [
        &[
            "mines", "bench", "--level", "expert", "--mines", "50", "--games", "1",
        ][..],
        &[
            "mines", "bench", "--height", "5", "--mines", "3", "--games", "1",
        ],
        &["mines", "bench", "--width", "5", "--games", "1"],
    ] {
        common::refused(args, "", "error: ");
    }
    let out = tabula(
        &[
            "mines", "bench", "--width", "5", "--height", "5", "--mines", "3", "--games", "2",
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn the_mine_model_trains_resumes_and_plays_from_the_cli() {
    let dir = std::env::temp_dir().join(format!("tabula-cli-automine-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let run = dir.join("run");
    let run_s = run.to_str().unwrap();
    let train_at = |run: &str, extra: &[&str]| {
        let mut args = vec![
            "mines",
            "train",
            "--run",
            run,
            "--boards",
            "beginner/safe",
            "--games",
            "30",
            "--size",
            "1x8",
            "--eval-every",
            "2",
            "--quiet",
        ];
        args.extend_from_slice(extra);
        tabula(&args, "")
    };
    let train = |extra: &[&str]| train_at(run_s, extra);
    let out = train(&["--steps", "4"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let model = run.join("model.safetensors");
    let metrics = || std::fs::read_to_string(run.join("metrics.jsonl")).unwrap();
    assert_eq!(metrics().lines().count(), 2);
    assert!(metrics().contains("\"validation_kl\":[[\"beginner/safe\""));
    // resuming continues from the saved step count
    let out = train(&["--steps", "6"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with("6 steps"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(metrics().lines().count(), 3);
    // other data is another run: refused unless --restart
    let mut args = vec![
        "mines", "train", "--run", run_s, "--games", "40", "--steps", "6",
    ];
    refused(&args, "", "another configuration");
    // --restart starts again, deleting only what a run writes
    let keep = run.join("data").join("notes.txt");
    std::fs::write(&keep, "mine").unwrap();
    let out = train(&["--steps", "2", "--restart"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(metrics().lines().count(), 1);
    assert!(keep.is_file());
    let out = train(&["--steps", "6"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // the held-out test set is measured beside the teacher and the exact solver
    let out = tabula(&["mines", "eval", "--run", run_s, "--calibration"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    for who in [
        "beginner/safe net",
        "beginner/safe teacher",
        "beginner/safe exact",
    ] {
        assert!(s.contains(who), "{s}");
    }
    // the net plays, solves and hints
    let m = model.to_str().unwrap();
    let out = tabula(
        &[
            "mines", "bench", "--games", "4", "--solver", "net", "--model", m, "--rule", "safe",
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("games:        4"));
    let pos = temp_file("net.txt", "3x2 1\n01.\n01.\n");
    let out = tabula(
        &[
            "mines",
            "solve",
            "--solver",
            "net",
            "--model",
            m,
            pos.to_str().unwrap(),
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("# P(mine) per cell (net"));
    let out = tabula(
        &[
            "mines", "play", "--seed", "3", "--solver", "net", "--model", m,
        ],
        "r 0 0\nhint\nquit\n",
    );
    assert!(
        text(&out.stdout).contains("by the estimate"),
        "{}",
        text(&out.stdout)
    );
    refused(
        &["mines", "solve", "--model", m, pos.to_str().unwrap()],
        "",
        "add --solver net",
    );
    // curves
    let out = tabula(&["plot", "--run", run_s], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(run.join("curves.svg").is_file());
    // a new run from this model counts on from its 6 steps: a target at or below them
    // is refused (it would train nothing), one above them trains the difference
    let run2 = dir.join("run2");
    let run2_s = run2.to_str().unwrap();
    let init = |steps: &str| train_at(run2_s, &["--init", m, "--steps", steps]);
    let out = init("6");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("give --steps above 6"),
        "{}",
        text(&out.stderr)
    );
    assert!(!run2.join("model.safetensors").exists());
    let out = init("8");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("8 steps"));
    // a policy/value network is not a mine model
    let c4 = concat!(env!("CARGO_MANIFEST_DIR"), "/models/connect4.safetensors");
    refused(
        &[
            "mines", "bench", "--games", "1", "--solver", "net", "--model", c4,
        ],
        "",
        "tabula-cellnet",
    );
    args = vec!["mines", "train", "--run", run_s, "--init", c4, "--restart"];
    refused(&args, "", "tabula-cellnet");
    let _ = std::fs::remove_dir_all(&dir);
}
