//! A real game against GnuGo through `tabula match`: the GTP path end to end, the
//! referee, SGF output, and area scores that agree with GnuGo's own `final_score`
//! (Chinese rules) once the clean-up phase has captured the dead stones.
//!
//! Needs `/usr/games/gnugo` (`apt-get install gnugo`; `.ci/run` installs it). Without
//! it the test fails, unless `TABULA_SKIP_GNUGO=1` says to skip it: a missing opponent
//! never passes silently.

use std::path::Path;
use std::process::Command;

const GNUGO: &str = "/usr/games/gnugo";

/// Whether GnuGo is here; without it the test fails unless told to skip.
fn gnugo_present() -> bool {
    if Path::new(GNUGO).exists() {
        return true;
    }
    assert!(
        std::env::var_os("TABULA_SKIP_GNUGO").is_some(),
        "{GNUGO} is not installed: `apt-get install gnugo`, or set TABULA_SKIP_GNUGO=1 to skip"
    );
    eprintln!("skipped (TABULA_SKIP_GNUGO): {GNUGO} is not installed");
    false
}

#[test]
fn short_game_against_gnugo() {
    // a fixed number of simulations (not a time limit) and GnuGo's fixed seed make the
    // games reproducible
    two_games("--sims 1500 --move-time 10 --resign 0", "uct", 2);
}

/// Network MCTS behind GTP (the shipped 7x7 network, fixed visits): legal games, and
/// dead stones (judged by the playouts) taken off so that the counts agree. One of the
/// two games ends when GnuGo, which knows no superko, repeats a position (the referee
/// plays positional superko and forfeits it), so one game is counted.
#[test]
fn network_mcts_game_against_gnugo() {
    two_games(
        "--player mcts --size 7 --sims 200 --move-time 10 --resign 0",
        "mcts",
        1,
    );
}

/// Two 7x7 games against GnuGo level 1; at least `scored` of them counted, and every
/// count agrees with GnuGo's.
fn two_games(engine_args: &str, label: &str, scored: usize) {
    if !gnugo_present() {
        return;
    }
    let out_dir = std::env::temp_dir().join(format!("tabula-match-{label}-{}", std::process::id()));
    let engine = format!("{} gtp {engine_args}", env!("CARGO_BIN_EXE_tabula"));
    let opponent = format!("{GNUGO} --mode gtp --level 1 --chinese-rules --seed 1");
    let out = Command::new(env!("CARGO_BIN_EXE_tabula"))
        .args([
            "match",
            "--engine",
            &engine,
            "--opponent",
            &opponent,
            "--games",
            "2",
            "--size",
            "7",
        ])
        .arg("--out")
        .arg(&out_dir)
        .output()
        .expect("tabula match runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("of 2"), "{stdout}");
    assert!(stdout.contains("GNU Go"), "{stdout}");
    // the games went to a score, and GnuGo counts them as the referee does
    let line = stdout
        .lines()
        .find(|l| l.contains("scored games"))
        .unwrap_or_else(|| panic!("no scoring line in {stdout}"));
    let numbers: Vec<usize> = line
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    assert!(
        numbers.len() == 2 && numbers[0] == numbers[1] && numbers[1] >= scored,
        "{stdout}"
    );
    for game in ["game-001.sgf", "game-002.sgf"] {
        let sgf = std::fs::read_to_string(out_dir.join(game)).expect("SGF written");
        let parsed = tabula_sgf_check(&sgf);
        assert!(parsed > 10, "a real game has moves: {sgf}");
    }
    assert!(out_dir.join("summary.json").exists());
}

/// Counts the moves of an SGF file by its `;B[`/`;W[` nodes.
fn tabula_sgf_check(sgf: &str) -> usize {
    assert!(sgf.starts_with("(;FF[4]GM[1]"), "{sgf}");
    sgf.matches(";B[").count() + sgf.matches(";W[").count()
}

/// An opponent that knows `set_random_seed` (GnuGo) gets `--seed` plus the game's
/// number before every game.
#[test]
fn the_opponent_gets_a_new_seed_every_game() {
    if !gnugo_present() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("tabula-match-seeds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let log = dir.join("gnugo-input.txt");
    // the match runs the opponent through `sh -c`: tee shows what GnuGo was sent
    let opponent = format!(
        "tee {} | {GNUGO} --mode gtp --level 1 --chinese-rules",
        log.display()
    );
    let engine = format!(
        "{} gtp --player random --size 5",
        env!("CARGO_BIN_EXE_tabula")
    );
    let out = Command::new(env!("CARGO_BIN_EXE_tabula"))
        .args(["match", "--engine", &engine, "--opponent", &opponent])
        .args(["--games", "2", "--size", "5", "--seed", "41", "--out"])
        .arg(dir.join("match"))
        .output()
        .expect("tabula match runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sent = std::fs::read_to_string(&log).expect("GnuGo's input logged");
    let seeds: Vec<&str> = sent
        .lines()
        .filter(|l| l.starts_with("set_random_seed"))
        .collect();
    assert_eq!(
        seeds,
        ["set_random_seed 41", "set_random_seed 42"],
        "{sent}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
