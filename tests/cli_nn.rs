//! End to end: `tabula analyze`, `play --player mcts` and `arena`, with good and bad input.

mod common;

use common::{refused, tabula, text};

#[test]
fn analyze_prints_seed_000s_table_and_json() {
    let out = tabula(
        &[
            "analyze",
            "mini-go",
            "--sims",
            "100",
            "--model",
            "untrained",
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("root visits: 101"), "{s}");
    assert!(
        s.contains("prior P") && s.contains("Q value") && s.contains("chosen move:"),
        "{s}"
    );

    let out = tabula(
        &[
            "analyze", "connect4", "--moves", "4453", "--sims", "200", "--model", "rollout",
            "--json", "--top", "3",
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_str(&text(&out.stdout)).expect("one JSON object");
    assert_eq!(v["root_visits"], 201);
    assert_eq!(v["children"].as_array().map(|a| a.len()), Some(3));
    let visits: u64 = v["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["visits"].as_u64().unwrap())
        .sum();
    assert!(visits <= 200);
    assert!(v["best"].is_string());
}

/// Every command searches with the training configuration's `[search]` settings unless
/// a flag overrides them, and refuses settings that cannot work.
#[test]
fn one_set_of_search_settings() {
    // every game's own training defaults read as a configuration
    for game in ["tictactoe", "go:9", "mini-go", "connect4:6x5"] {
        let out = tabula(&["train", game, "--print-config"], "");
        assert!(out.status.success(), "{game}: {}", text(&out.stderr));
    }
    let out = tabula(&["train", "connect4", "--print-config"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let config = text(&out.stdout);
    assert!(config.contains("size = \"4x48\""), "{config}");
    assert!(config.contains("[search]"), "{config}");
    assert!(config.contains("c_puct = 1.5") && config.contains("fpu_reduction = 0.2"));
    let json = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec![
            "analyze",
            "tictactoe",
            "--sims",
            "50",
            "--model",
            "uniform",
            "--json",
        ];
        args.extend_from_slice(extra);
        let out = tabula(&args, "");
        assert!(out.status.success(), "{}", text(&out.stderr));
        serde_json::from_str(&text(&out.stdout)).expect("one JSON object")
    };
    let v = json(&[]);
    assert_eq!(v["c_puct"], 1.5);
    assert!((v["fpu_reduction"].as_f64().unwrap() - 0.2).abs() < 1e-6);
    let v = json(&["--c-puct", "2", "--fpu-reduction", "0"]);
    assert_eq!(v["c_puct"], 2.0);
    assert_eq!(v["fpu_reduction"], 0.0);
    for bad in [
        ["--c-puct", "nan"],
        ["--c-puct=-1", "--top=5"],
        ["--leaves-per-search", "0"],
    ] {
        let mut args = vec!["analyze", "tictactoe", "--sims", "10", "--model", "uniform"];
        args.extend_from_slice(&bad);
        common::refused(&args, "", "search");
    }
}

#[test]
fn analyze_rejects_bad_moves_and_mismatched_models() {
    let out = tabula(&["analyze", "connect4", "--moves", "4458"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("expected a column"),
        "{}",
        text(&out.stderr)
    );

    let out = tabula(
        &[
            "analyze",
            "connect4",
            "--model",
            "models/tictactoe.safetensors",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("trained for tictactoe, not connect4"), "{err}");

    let out = tabula(
        &[
            "analyze",
            "tictactoe",
            "--model",
            "no/such/file.safetensors",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no/such/file.safetensors"));

    let garbage =
        std::env::temp_dir().join(format!("tabula-garbage-{}.safetensors", std::process::id()));
    std::fs::write(&garbage, b"not a weight file at all").unwrap();
    let out = tabula(
        &["analyze", "tictactoe", "--model", garbage.to_str().unwrap()],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("bad weight file"),
        "{}",
        text(&out.stderr)
    );
    let _ = std::fs::remove_file(garbage);
}

#[test]
fn play_against_mcts_with_the_shipped_model() {
    // The person plays 1, 2, 3 …; MCTS blocks and wins, never crashing on illegal input.
    let out = tabula(
        &["play", "tictactoe", "--player", "mcts", "--sims", "200"],
        "1\n1\nzz\n2\n4\n6\n8\n9\n7\n3\n5\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("models/tictactoe.safetensors"), "{s}");
    assert!(s.contains("Game over"), "{s}");
    assert!(!s.contains("You win"), "{s}");
}

#[test]
fn arena_reports_a_score_and_rejects_unknown_players() {
    let out = tabula(
        &[
            "arena",
            "minimax",
            "random",
            "--game",
            "tictactoe",
            "--games",
            "6",
            "--json",
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    assert_eq!(v["b_wins"], 0);
    assert!(v["score"].as_f64().unwrap() > 0.5 && v["elo"].as_f64().unwrap() > 0.0);

    let out = tabula(
        &["arena", "minimax", "grandmaster", "--game", "tictactoe"],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("unknown player"),
        "{}",
        text(&out.stderr)
    );
    // `solver` is the game's perfect player: negamax for tic-tac-toe, none for Go
    let out = tabula(
        &[
            "arena",
            "solver",
            "random",
            "--game",
            "tictactoe",
            "--games",
            "2",
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("B wins 0"),
        "{}",
        text(&out.stdout)
    );
    let out = tabula(&["arena", "solver", "random", "--game", "go:5"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("no perfect player"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn accuracy_of_the_shipped_tictactoe_model() {
    let out = tabula(&["accuracy", "tictactoe", "--sims", "200"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("4520 non-terminal tictactoe positions"), "{s}");
    assert!(s.contains("MCTS optimal 99."), "{s}");
    // tic-tac-toe's test set is one whole
    let out = tabula(&["accuracy", "tictactoe", "--sets", "Test_L3_R1"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("no named ones"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn accuracy_reports_each_named_connect4_set_on_its_own() {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/data/connect4");
    let dir = std::env::temp_dir().join(format!("tabula-labels-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let labels = dir.to_str().expect("UTF-8 path");
    let args = [
        "accuracy",
        "connect4",
        "--sets",
        "Test_L3_R1,Test_L2_R2",
        "--positions",
        "6",
        "--sims",
        "50",
        "--eval-data",
        data,
        "--labels",
        labels,
    ];
    let out = tabula(&args, "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    for set in ["6 positions of Test_L3_R1:", "6 positions of Test_L2_R2:"] {
        assert!(s.contains(set), "{s}");
    }
    assert_eq!(s.matches("result mistakes").count(), 2, "{s}");
    // the labels are kept, and read back the second time
    let kept = std::fs::read_dir(labels).expect("labels").count();
    assert_eq!(kept, 2);
    let again = tabula(&args, "");
    assert_eq!(text(&again.stdout), s);
    assert!(!text(&again.stderr).contains("classifying"));

    let mut bad = args;
    bad[3] = "Test_L9_R9";
    refused(&bad, "", "Test_L1_R3");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn accuracy_measures_a_set_of_ones_own_averaged_over_the_mirror() {
    let dir = std::env::temp_dir().join(format!("tabula-own-set-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(
        dir.join("Tune_end"),
        "2252576253462244111563365343671351441 -1\n7422341735647741166133573473242566 1\n",
    )
    .expect("set file");
    let data = dir.to_str().expect("UTF-8 path");
    let labels = dir.join("labels");
    let labels = labels.to_str().expect("UTF-8 path");
    let mut args = [
        "accuracy",
        "connect4",
        "--sets",
        "Tune_end",
        "--positions",
        "0",
        "--sims",
        "50",
        "--eval-data",
        data,
        "--labels",
        labels,
        "--symmetries",
        "2",
    ];
    let out = tabula(&args, "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("2 positions of Tune_end:"), "{s}");
    // Connect Four has two symmetries; nine is no game's
    args[13] = "9";
    refused(&args, "", "symmetries must lie in 1..=8");
    let _ = std::fs::remove_dir_all(&dir);
}
