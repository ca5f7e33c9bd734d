//! End to end: AlphaZero training on tic-tac-toe from the command line — the trained
//! network's MCTS never loses to minimax; a run killed mid-iteration resumes cleanly.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{tabula, text, ttt_arena_json};

fn tmp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tabula-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn a_short_tictactoe_run_never_loses_to_minimax() {
    let run = tmp("ttt");
    let config = run.with_extension("toml");
    std::fs::write(
        &config,
        "game = \"tictactoe\"\niterations = 10\n[eval]\nevery = 5\n",
    )
    .unwrap();
    let out = tabula(
        &[
            "train",
            "tictactoe",
            "--run",
            run.to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
            "--quiet",
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let best = run.join("best.safetensors");
    // From the empty board in both colours, and from every one-move opening in both.
    let r = ttt_arena_json(&best, "0", "2");
    assert_eq!(r["b_wins"], 0, "{r}");
    let r = ttt_arena_json(&best, "1", "18");
    assert_eq!(r["b_wins"], 0, "{r}");
    // Metrics: ten rows, accuracy measured at iterations 5 and 10.
    let csv = std::fs::read_to_string(run.join("metrics.csv")).unwrap();
    assert_eq!(csv.lines().count(), 11, "{csv}");
    let last: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(run.join("metrics.jsonl"))
            .unwrap()
            .lines()
            .last()
            .unwrap(),
    )
    .unwrap();
    let keeps = last["accuracy"]["mcts_keeps"]
        .as_f64()
        .expect("accuracy measured");
    assert!(keeps > 0.99, "{last}");
    // The plot renders.
    let out = tabula(&["plot", "--run", run.to_str().unwrap()], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(std::fs::read_to_string(run.join("curves.svg"))
        .unwrap()
        .contains("<svg"));
    // A learning curve of matches replaces the solver panel; a bad row is an error
    // that names its line.
    let curve = run.join("curve.csv");
    let svg = run.join("matches.svg");
    let plot = |csv: &str| {
        std::fs::write(&curve, csv).unwrap();
        let _ = std::fs::remove_file(&svg);
        tabula(
            &[
                "plot",
                "--run",
                run.to_str().unwrap(),
                "--matches",
                curve.to_str().unwrap(),
                "--out",
                svg.to_str().unwrap(),
            ],
            "",
        )
    };
    let header = "iteration,seconds,games_trained,match_games,wins,win_rate,ci_low,ci_high\n";
    let out = plot(&format!(
        "{header}5,30,500,16,4,0.25,0.1,0.5\n10,60,1000,16,8,0.5,0.28,0.72\n"
    ));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(std::fs::read_to_string(&svg)
        .unwrap()
        .contains("Win rate in matches"));
    for bad in [
        "5,30,500,16,4,1.5,0.1,0.5",
        "5,x,500,16,4,0.25,0.1,0.5",
        "5,30",
    ] {
        let out = plot(&format!("{header}{bad}\n"));
        assert!(!out.status.success(), "{bad} accepted");
        assert!(
            text(&out.stderr).contains("line 2"),
            "{bad}: {}",
            text(&out.stderr)
        );
        assert!(!svg.exists(), "{bad}: a plot was written");
    }
    let _ = std::fs::remove_dir_all(&run);
}

fn state_iteration(run: &Path) -> u64 {
    std::fs::read_to_string(run.join("state.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v["iteration"].as_u64())
        .unwrap_or(0)
}

#[test]
fn a_run_killed_mid_iteration_resumes_without_losing_or_repeating_iterations() {
    let run = tmp("resume");
    let config = run.with_extension("toml");
    std::fs::write(
        &config,
        "game = \"tictactoe\"\niterations = 3\n[selfplay]\ngames = 60\n[net]\nsteps = 60\n[eval]\nevery = 0\n[gate]\nenabled = true\ngames = 4\nsimulations = 20\n",
    )
    .unwrap();
    let args = [
        "train",
        "tictactoe",
        "--run",
        run.to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
        "--quiet",
    ];
    let mut child = Command::new(env!("CARGO_BIN_EXE_tabula"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill it (SIGKILL) once the first iteration is done and the second has begun.
    let start = Instant::now();
    while state_iteration(&run) < 1 {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no iteration finished"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    child.kill().unwrap();
    child.wait().unwrap();
    let killed_at = state_iteration(&run);
    assert!(killed_at < 3, "killed too late to test anything");
    // Resume with the same command (the stored configuration is used).
    let out = tabula(
        &[
            "train",
            "tictactoe",
            "--run",
            run.to_str().unwrap(),
            "--quiet",
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(state_iteration(&run), 3);
    let rows: Vec<u64> = std::fs::read_to_string(run.join("metrics.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["iteration"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(rows, vec![1, 2, 3]);
    // Gated: every iteration played an arena.
    for l in std::fs::read_to_string(run.join("metrics.jsonl"))
        .unwrap()
        .lines()
    {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        assert!(v["gate_score"].as_f64().is_some(), "{v}");
    }
    let csv = std::fs::read_to_string(run.join("metrics.csv")).unwrap();
    assert_eq!(csv.lines().count(), 4, "{csv}");
    for i in 0..=3 {
        let ckpt = run.join(format!("checkpoints/iter-{i:04}.safetensors"));
        let out = tabula(
            &[
                "analyze",
                "tictactoe",
                "--model",
                ckpt.to_str().unwrap(),
                "--sims",
                "20",
                "--json",
            ],
            "",
        );
        assert!(
            out.status.success(),
            "checkpoint {i}: {}",
            text(&out.stderr)
        );
    }
    for i in 1..=3 {
        assert!(run.join(format!("games/iter-{i:04}.jsonl.gz")).is_file());
    }
    let leftovers: Vec<_> = walk(&run)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // A different configuration for an existing run is refused.
    std::fs::write(
        &config,
        "game = \"tictactoe\"\niterations = 3\n[selfplay]\ngames = 61\n",
    )
    .unwrap();
    let out = tabula(&[&args[..], &[]].concat(), "");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("another configuration"),
        "{}",
        text(&out.stderr)
    );
    // Without state.json the run is not started over (which would overwrite it)
    // unless asked.
    std::fs::remove_file(run.join("state.json")).unwrap();
    let best = std::fs::read(run.join("best.safetensors")).unwrap();
    let out = tabula(&args[..4], "");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("--restart"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(std::fs::read(run.join("best.safetensors")).unwrap(), best);
    let _ = std::fs::remove_dir_all(&run);
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn a_teacher_starts_a_run_and_a_run_from_init_skips_it_and_continues_its_optimiser() {
    let run = tmp("teacher");
    let config = run.with_extension("toml");
    std::fs::write(
        &config,
        "game = \"tictactoe\"\niterations = 1\n[selfplay]\ngames = 6\n[teacher]\niterations = 1\nplayouts = 100\n[net]\nsteps = 2\n[eval]\nevery = 0\n",
    )
    .unwrap();
    let train = |dir: &Path, init: Option<&Path>| {
        let mut args = vec![
            "train",
            "tictactoe",
            "--run",
            dir.to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
            "--quiet",
        ];
        if let Some(p) = init {
            args.extend(["--init", p.to_str().unwrap()]);
        }
        let out = tabula(&args, "");
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stderr)
    };
    train(&run, None);
    let stats: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(run.join("games/iter-0001.stats.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(stats["games"], 6);
    assert_eq!(
        stats["targets"], stats["moves"],
        "the teacher's every move is a target"
    );
    assert_eq!(stats["evaluations"], 0, "no network played: {stats}");
    let second = tmp("teacher-init");
    let log = train(&second, Some(&run.join("best.safetensors")));
    assert!(log.contains("no teacher games"), "{log}");
    let stored = std::fs::read_to_string(second.join("config.toml")).unwrap();
    assert!(stored.contains("[teacher]\niterations = 0"), "{stored}");
    let stats: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(second.join("games/iter-0001.stats.json")).unwrap(),
    )
    .unwrap();
    assert!(
        stats["evaluations"].as_u64().unwrap() > 0,
        "the network played: {stats}"
    );
    // A network with its optimiser state beside it (NAME.optim, as checkpoints keep
    // theirs) continues that state; one that does not fit is refused before a run is made.
    let third = tmp("init-optim");
    let ckpt = run.join("checkpoints/iter-0001.safetensors");
    let log = train(&third, Some(&ckpt));
    assert!(log.contains("continuing the optimiser state"), "{log}");
    assert_eq!(
        std::fs::read(third.join("checkpoints/iter-0000.optim")).unwrap(),
        std::fs::read(run.join("checkpoints/iter-0001.optim")).unwrap()
    );
    let model = run.join("model.safetensors");
    std::fs::copy(&ckpt, &model).unwrap();
    std::fs::write(run.join("model.optim"), b"not an optimiser").unwrap();
    let fourth = tmp("init-bad-optim");
    let out = tabula(
        &[
            "train",
            "tictactoe",
            "--run",
            fourth.to_str().unwrap(),
            "--init",
            model.to_str().unwrap(),
            "--quiet",
        ],
        "",
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("model.optim does not fit"),
        "{}",
        text(&out.stderr)
    );
    assert!(!fourth.exists(), "a run was made");
    for dir in [&run, &second, &third] {
        let _ = std::fs::remove_dir_all(dir);
    }
}
