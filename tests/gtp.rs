//! GTP transcripts: each `tests/gtp/*.txt` holds the commands sent to `tabula gtp`
//! (lines starting with `> `) and, after each, the exact reply expected.

mod common;

use common::{tabula, tabula_bytes, text};

fn run_transcript(path: &std::path::Path) {
    let transcript = std::fs::read_to_string(path).expect("transcript");
    let mut input = String::new();
    let mut expected = String::new();
    for line in transcript.lines() {
        match line.strip_prefix("> ") {
            Some(cmd) => {
                input.push_str(cmd);
                input.push('\n');
            }
            None => {
                expected.push_str(line);
                expected.push('\n');
            }
        }
    }
    let out = tabula(&["gtp", "--move-time", "0.05"], &input);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let got = text(&out.stdout);
    assert_eq!(got, expected, "transcript {}", path.display());
}

#[test]
fn transcripts() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/gtp");
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).expect("tests/gtp") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "txt") {
            run_transcript(&path);
            count += 1;
        }
    }
    assert!(count >= 3, "found {count} transcripts");
}

#[test]
fn genmove_plays_legal_moves_and_ends_the_game() {
    // Two engines' worth of genmoves on one board until the game ends.
    let mut input = String::from("boardsize 5\nkomi 0.5\n");
    for _ in 0..60 {
        input.push_str("genmove b\ngenmove w\n");
    }
    input.push_str("final_score\n");
    let out = tabula(&["gtp", "--sims", "200", "--resign", "0"], &input);
    let got = text(&out.stdout);
    let replies: Vec<&str> = got.split("\n\n").filter(|r| !r.is_empty()).collect();
    // every genmove reply is a vertex or a pass, and at some point both sides pass
    let mut moves: Vec<&str> = Vec::new();
    for r in &replies[2..replies.len() - 1] {
        if moves.ends_with(&["pass", "pass"]) {
            break; // the game is over; what the controller asks after that is its business
        }
        let mv = r
            .strip_prefix("= ")
            .unwrap_or_else(|| panic!("bad reply {r:?} in\n{got}"));
        assert!(
            mv == "pass" || (mv.len() == 2 && "ABCDE".contains(&mv[..1])),
            "{mv}"
        );
        moves.push(mv);
    }
    assert!(
        moves.ends_with(&["pass", "pass"]),
        "the engine never ended the game:\n{got}"
    );
    // and every move is legal where it was played (suicide, ko and superko included)
    let mut board = tabula_core::Go::new(5, tabula_core::GoRules::default()).expect("5x5");
    for (i, mv) in moves.iter().enumerate() {
        use tabula_core::Game;
        assert!(
            board.play_text(mv).is_ok(),
            "move {} ({mv}) is illegal in\n{board}",
            i + 1
        );
    }
    let last = replies.last().unwrap();
    assert!(
        last.starts_with("= B+") || last.starts_with("= W+") || *last == "= 0",
        "{last}"
    );
}

#[test]
fn match_refuses_broken_engines_without_hanging() {
    let dir = std::env::temp_dir().join(format!("tabula-broken-{}", std::process::id()));
    let dir = dir.to_str().expect("utf-8 temp dir");
    // `cat` echoes commands back instead of answering them
    let out = tabula(
        &["match", "--opponent", "cat", "--games", "1", "--out", dir],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("is not a GTP reply"),
        "{}",
        text(&out.stderr)
    );
    // `true` exits at once (the runner meets a closed pipe, reading or writing)
    let out = tabula(
        &["match", "--opponent", "true", "--games", "1", "--out", dir],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).starts_with("error: true:"),
        "{}",
        text(&out.stderr)
    );
    // a program that is not there is named as such
    let out = tabula(
        &[
            "match",
            "--opponent",
            "no-such-engine-here --mode gtp",
            "--games",
            "1",
            "--out",
            dir,
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("could not start: command not found"),
        "{}",
        text(&out.stderr)
    );
    // an engine that never answers is given up on (and killed) after the timeout
    let started = std::time::Instant::now();
    let out = tabula(
        &[
            "match",
            "--opponent",
            "sleep 1000",
            "--reply-timeout",
            "1",
            "--games",
            "1",
            "--out",
            dir,
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("no reply to \"name\" within 1.0 s"),
        "{}",
        text(&out.stderr)
    );
    assert!(started.elapsed().as_secs() < 60, "gave up in time");
    let out = tabula(&["match", "--opponent", "x", "--reply-timeout", "nan"], "");
    assert_eq!(out.status.code(), Some(2), "NaN timeout refused");
}

/// An opponent that crashes mid-game voids that game, is started afresh for the next,
/// and the match goes on; a second match into the same folder is refused.
#[test]
fn a_crashing_opponent_voids_its_game_and_the_match_goes_on() {
    let dir = std::env::temp_dir().join(format!("tabula-crashy-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out_dir = dir.to_str().expect("utf-8 temp dir");
    let engine = format!(
        "{} gtp --size 5 --player random",
        env!("CARGO_BIN_EXE_tabula")
    );
    // answers everything but `genmove`, where it dies
    let crashy = r#"while read -r c; do case "$c" in genmove*) exit 3;; name*) printf '= crashy\n\n';; *) printf '= \n\n';; esac; done"#;
    let args = [
        "match",
        "--engine",
        &engine,
        "--opponent",
        crashy,
        "--games",
        "2",
        "--size",
        "5",
        "--out",
        out_dir,
    ];
    let out = tabula(&args, "");
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("0 wins, 0 losses, 0 draws of 0"),
        "{stdout}"
    );
    assert!(stdout.contains("void:      2 games"), "{stdout}");
    for game in ["game-001.sgf", "game-002.sgf"] {
        let sgf = std::fs::read_to_string(dir.join(game)).expect("SGF written");
        assert!(sgf.contains("RE[Void]"), "{sgf}");
    }
    let summary = std::fs::read_to_string(dir.join("summary.json")).expect("summary");
    assert!(summary.contains("\"void\":2"), "{summary}");
    // nothing is overwritten
    let again = tabula(&args, "");
    assert_eq!(again.status.code(), Some(2));
    assert!(
        text(&again.stderr).contains("holds an earlier match"),
        "{}",
        text(&again.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("summary.json")).ok(),
        Some(summary)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_line_that_is_not_utf8_is_answered_and_the_session_goes_on() {
    let out = tabula_bytes(
        &["gtp", "--size", "5"],
        b"1 play b C3\n\xff\xfe play w\n2 showboard\n3 quit\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("? line 2 is not UTF-8"), "{s}");
    assert!(
        s.contains("=2") && s.contains("X"),
        "the stone is still there: {s}"
    );
    assert!(s.contains("=3"), "{s}");
}

#[test]
fn nonsense_numbers_are_refused() {
    for args in [
        ["--move-time", "nan"],
        ["--move-time=-1", "--size=9"],
        ["--exploration", "nan"],
        ["--resign", "2"],
        ["--rave=-3", "--size=9"],
        ["--prior-cfg", "45,nan"],
        ["--prior-cfg", "1,2,3,4"],
    ] {
        let mut all = vec!["gtp"];
        all.extend_from_slice(&args);
        common::refused(&all, "genmove b\nquit\n", "error: ");
    }
    let out = tabula(
        &["gtp", "--size", "5", "--sims", "50"],
        "1 time_settings 10 -5 0\n2 time_left b nan 0\n3 genmove b\n4 quit\n",
    );
    let s = text(&out.stdout);
    assert!(
        s.contains("?1 ") && s.contains("?2 ") && s.contains("=3 "),
        "{s}"
    );
}

#[test]
fn free_handicap_cannot_fill_the_board() {
    let all: Vec<&str> = ["A1", "A2", "B1", "B2"].to_vec();
    let input = format!(
        "1 boardsize 2\n2 set_free_handicap {}\n3 set_free_handicap A1 A2 B1\n4 quit\n",
        all.join(" ")
    );
    let out = tabula(&["gtp", "--size", "2"], &input);
    let s = text(&out.stdout);
    assert!(s.contains("?2 bad vertex list"), "{s}");
    assert!(s.contains("=3"), "{s}");
}

#[test]
fn dead_stones_are_found_counted_and_cleaned_up() {
    // 7x7: Black's wall on column B, White's on column C, and a White stone at A4 in
    // Black's one-point-wide corridor, which cannot live
    let mut input = String::from("boardsize 7\nclear_board\nkomi 0.5\n");
    for row in 1..=7 {
        input.push_str(&format!("play b B{row}\nplay w C{row}\n"));
    }
    input.push_str("play w A4\nfinal_status_list dead\nfinal_score\nkgs-genmove_cleanup b\nquit\n");
    let out = tabula(&["gtp", "--move-time", "0.2"], &input);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let replies: Vec<String> = text(&out.stdout)
        .split("\n\n")
        .map(|r| r.trim().to_string())
        .collect();
    let n = replies.len();
    assert!(n >= 5, "{replies:?}");
    // boardsize, clear_board, komi, 14 plays, A4 — then the three questions
    assert_eq!(replies[18], "= A4", "{replies:?}");
    // Black: columns A and B (14); White: C to G (35); komi 0.5
    assert_eq!(replies[19], "= W+21.5", "{replies:?}");
    assert!(
        replies[20] == "= A3" || replies[20] == "= A5",
        "clean-up fills a liberty of the dead stone: {replies:?}"
    );
}
