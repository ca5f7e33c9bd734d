//! Helpers shared by the end-to-end tests: run `tabula` with arguments and input.

#![allow(dead_code)] // each test binary uses its own subset

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs `tabula ARGS` with `stdin` as its input, in the workspace root.
pub fn tabula(args: &[&str], stdin: &str) -> Output {
    tabula_bytes(args, stdin.as_bytes())
}

/// Runs `tabula ARGS` with raw bytes (not necessarily UTF-8) as its input.
pub fn tabula_bytes(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tabula"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tabula runs");
    // A run that refuses its arguments exits without reading its input: the pipe
    // may then be closed before (or while) the input is written, which is no error.
    match child.stdin.take().expect("stdin").write_all(stdin) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        r => r.expect("write stdin"),
    }
    child.wait_with_output().expect("tabula finishes")
}

/// Bytes as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs `tabula ARGS` expecting a refusal (exit status 2) whose message contains `says`;
/// returns the message.
pub fn refused(args: &[&str], stdin: &str, says: &str) -> String {
    let out = tabula(args, stdin);
    let err = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?}: {}",
        text(&out.stdout)
    );
    assert!(err.contains(says), "{args:?} should say {says:?}: {err}");
    err
}

/// `tabula arena mcts:MODEL minimax` on tic-tac-toe (200 simulations a move, `games`
/// games after `opening_plies` random plies), as its JSON summary.
pub fn ttt_arena_json(
    model: &std::path::Path,
    opening_plies: &str,
    games: &str,
) -> serde_json::Value {
    let model = format!("mcts:{}", model.display());
    let out = tabula(
        &[
            "arena",
            &model,
            "minimax",
            "--game",
            "tictactoe",
            "--games",
            games,
            "--sims",
            "200",
            "--opening-plies",
            opening_plies,
            "--json",
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_str(&text(&out.stdout)).expect("arena prints JSON")
}
