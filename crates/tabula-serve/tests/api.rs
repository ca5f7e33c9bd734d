//! The HTTP API end to end on a real socket: every answer, every refusal.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::{get, post, request, start};
use serde_json::json;
use tabula_serve::{Limits, ServeConfig};

fn server() -> std::net::SocketAddr {
    start(ServeConfig {
        mine_model: Some(common::models().join("mines.safetensors")),
        ..ServeConfig::default()
    })
}

#[test]
fn pages_and_static_files_are_served_and_nothing_else() {
    let addr = server();
    for page in [
        "/",
        "/play",
        "/mines",
        "/train",
        "/static/play.js",
        "/static/app.css",
    ] {
        let a = get(addr, page);
        assert_eq!(a.status, 200, "{page}");
    }
    assert!(get(addr, "/play")
        .headers
        .contains("content-type: text/html"));
    for bad in [
        "/static/../Cargo.toml",
        "/static/..%2FCargo.toml",
        "/static/nope.js",
        "/etc/passwd",
    ] {
        assert_eq!(get(addr, bad).status, 404, "{bad}");
    }
}

#[test]
fn every_game_in_the_catalogue_has_a_board_and_legal_moves() {
    let addr = server();
    let games = get(addr, "/api/games").json();
    let presets: Vec<String> = games["games"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["presets"].as_array().unwrap().iter())
        .map(|p| p.as_str().unwrap().to_string())
        .collect();
    assert!(presets.contains(&"go:19".to_string()) && presets.contains(&"mini-go".to_string()));
    for game in presets {
        let s = post(addr, "/api/state", &json!({"game": game})).json();
        let board = &s["board"];
        let cells = board["rows"].as_u64().unwrap() * board["cols"].as_u64().unwrap();
        assert_eq!(
            board["cells"].as_array().unwrap().len() as u64,
            cells,
            "{game}"
        );
        assert!(!s["legal"].as_array().unwrap().is_empty(), "{game}");
        assert_eq!(s["to_move"], 1);
    }
}

#[test]
fn bad_requests_get_a_clear_400_and_change_nothing() {
    let addr = server();
    let cases = [
        (json!({"game": "chess"}), "unknown game"),
        (json!({"game": "go:9", "moves": ["D4", "D4"]}), "move 2"),
        (json!({"game": "connect4", "moves": ["9"]}), "move 1"),
        (
            json!({"game": "go:9", "moves": ["D4"], "extra": 1}),
            "unknown field",
        ),
        (json!({"moves": []}), "missing field"),
    ];
    for (body, needle) in cases {
        let a = post(addr, "/api/state", &body);
        assert_eq!(a.status, 400, "{body}");
        let e = a.json()["error"].as_str().unwrap().to_string();
        assert!(e.contains(needle), "{body}: {e}");
    }
    let a = request(addr, "POST", "/api/state", Some(b"{not json"));
    assert_eq!(a.status, 400);
    assert!(a.json()["error"].as_str().unwrap().contains("bad request"));
    let a = request(addr, "POST", "/api/state", Some(&[0xff, 0xfe, 0x00]));
    assert_eq!(a.status, 400);
    let huge = vec![b' '; tabula_serve::MAX_BODY + 10];
    assert_eq!(request(addr, "POST", "/api/state", Some(&huge)).status, 413);
    // A click on an occupied point, a finished game, negative seconds, zero simulations,
    // a player the game lacks, another game's model.
    let a = post(
        addr,
        "/api/click",
        &json!({"game": "tictactoe", "moves": ["5"], "row": 1, "col": 1}),
    );
    assert_eq!(a.status, 400);
    let over = json!({"game": "tictactoe", "moves": ["1", "4", "2", "5", "3"], "player": {"kind": "random"}});
    assert!(post(addr, "/api/move", &over).json()["error"]
        .as_str()
        .unwrap()
        .contains("over"));
    let negative = request(
        addr,
        "POST",
        "/api/move",
        Some(br#"{"game":"tictactoe","player":{"kind":"mcts","seconds":-1}}"#),
    );
    assert_eq!(negative.status, 400);
    let zero = post(
        addr,
        "/api/analyze",
        &json!({"game": "tictactoe", "sims": 0}),
    );
    assert_eq!(zero.status, 400);
    let who = post(
        addr,
        "/api/move",
        &json!({"game": "go:9", "player": {"kind": "perfect"}}),
    );
    assert!(who.json()["error"]
        .as_str()
        .unwrap()
        .contains("no perfect player"));
    let model = post(
        addr,
        "/api/move",
        &json!({"game": "go:9", "player": {"kind": "mcts", "model": "models/connect4.safetensors"}}),
    );
    assert_eq!(model.status, 400);
}

#[test]
fn a_click_plays_the_move_at_its_point_and_players_answer() {
    let addr = server();
    let s = post(
        addr,
        "/api/click",
        &json!({"game": "connect4", "moves": ["4"], "row": 0, "col": 3}),
    )
    .json();
    assert_eq!(s["moves"], json!(["4", "4"]));
    // The perfect player completes its row.
    let win = post(
        addr,
        "/api/move",
        &json!({"game": "tictactoe", "moves": ["1", "4", "2", "5"], "player": {"kind": "perfect"}}),
    )
    .json();
    assert_eq!(win["played"]["move"], "3");
    assert_eq!(win["state"]["outcome"]["winner"], 1);
    for kind in ["mcts", "uct", "random"] {
        let r = post(
            addr,
            "/api/move",
            &json!({"game": "go:7", "moves": ["D4"], "player": {"kind": kind, "sims": 200, "model": "rollout"}}),
        );
        assert_eq!(r.status, 200, "{kind}: {}", r.body);
        let j = r.json();
        assert_eq!(j["state"]["moves"].as_array().unwrap().len(), 2, "{kind}");
        assert!(!j["evaluation"].as_str().unwrap().is_empty());
    }
}

#[test]
fn the_solver_scores_every_connect_four_column_and_only_the_centre_wins() {
    let addr = server();
    let s = post(addr, "/api/solve", &json!({"game": "connect4"})).json();
    let moves = s["moves"].as_array().unwrap();
    assert_eq!(moves.len(), 7);
    for m in moves {
        let wins = m["score"].as_i64().unwrap() > 0;
        assert_eq!(wins, m["move"] == "4", "{m}");
    }
    assert_eq!(
        post(addr, "/api/solve", &json!({"game": "go:9"})).status,
        404
    );
}

#[test]
fn analysis_reports_visits_priors_and_legal_principal_variations() {
    let addr = server();
    let a = post(
        addr,
        "/api/analyze",
        &json!({"game": "tictactoe", "moves": ["5"], "sims": 300}),
    )
    .json();
    assert_eq!(a["done"], true);
    assert_eq!(a["simulations"], 300);
    let kids = a["children"].as_array().unwrap();
    assert_eq!(kids.len(), 8);
    let visits: u64 = kids.iter().map(|c| c["visits"].as_u64().unwrap()).sum();
    assert!(visits >= 290, "{visits}");
    let priors: f64 = kids.iter().map(|c| c["prior"].as_f64().unwrap()).sum();
    assert!((priors - 1.0).abs() < 1e-3);
    let pv: Vec<String> = kids[0]["pv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect();
    assert_eq!(pv[0], kids[0]["move"].as_str().unwrap());
    let mut moves = vec!["5".to_string()];
    moves.extend(pv);
    assert_eq!(
        post(
            addr,
            "/api/state",
            &json!({"game": "tictactoe", "moves": moves})
        )
        .status,
        200
    );
}

/// Reads SSE events from a live analysis until one is done (or `stop_after` events).
fn events(
    addr: std::net::SocketAddr,
    query: &str,
    stop_after: usize,
) -> (TcpStream, Vec<serde_json::Value>) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(
        s,
        "GET /api/analyze/live?{query} HTTP/1.1\r\nHost: x\r\n\r\n"
    )
    .unwrap();
    let mut reader = BufReader::new(s.try_clone().unwrap());
    let mut out = Vec::new();
    let mut line = String::new();
    while out.len() < stop_after {
        line.clear();
        if reader.read_line(&mut line).unwrap() == 0 {
            break;
        }
        if let Some(data) = line.strip_prefix("data: ") {
            let v: serde_json::Value = serde_json::from_str(data.trim()).unwrap();
            let done = v["done"] == true;
            out.push(v);
            if done {
                break;
            }
        }
    }
    (s, out)
}

#[test]
fn live_analysis_streams_updates_until_done() {
    let addr = server();
    let (_s, evs) = events(addr, "game=go:9&moves=E5,C3&model=rollout&sims=3000", 1000);
    let last = evs.last().unwrap();
    assert_eq!(last["done"], true);
    assert_eq!(last["simulations"], 3000);
    assert_eq!(last["to_move"], 1);
    assert!(evs.iter().all(|e| e["children"].as_array().is_some()));
    // A bad position is refused before any stream starts.
    let bad = get(addr, "/api/analyze/live?game=go:9&moves=Z1");
    assert_eq!(bad.status, 400);
    assert!(bad.json()["error"].as_str().unwrap().contains("Z1"));
}

#[test]
fn a_client_that_goes_away_cancels_its_search() {
    // One search slot: the next request can only run once the first search stopped.
    let addr = start(ServeConfig {
        limits: Limits {
            concurrent: 1,
            ..Limits::default()
        },
        ..ServeConfig::default()
    });
    let (s, evs) = events(
        addr,
        "game=go:19&model=rollout&sims=100000000&seconds=600",
        1,
    );
    assert_eq!(evs.len(), 1);
    drop(s);
    let started = Instant::now();
    let a = post(
        addr,
        "/api/analyze",
        &json!({"game": "tictactoe", "sims": 50}),
    );
    assert_eq!(a.status, 200);
    // The abandoned search had up to 600 s left; it stopped at its next report.
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn minesweeper_replays_actions_and_shows_three_estimates() {
    let addr = server();
    let base = json!({"level": "beginner", "rule": "opening", "seed": 7});
    let s = post(addr, "/api/mines", &base).json();
    assert_eq!(s["status"], "playing");
    assert_eq!(s["next"]["kind"], "first");
    let first = s["next"]["cells"][0].clone();
    let mut req = base.clone();
    req["actions"] = json!([{"op": "reveal", "row": first[0], "col": first[1]}]);
    let s = post(addr, "/api/mines", &req).json();
    assert!(
        s["revealed"].as_u64().unwrap() >= 9,
        "the opening rule opens an area"
    );
    let names: Vec<&str> = s["overlays"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["exact", "teacher", "net"]);
    for o in s["overlays"].as_array().unwrap() {
        let p = o["p"].as_array().unwrap();
        assert_eq!(p.len(), 81);
        assert!(p.iter().all(|x| (0.0..=1.0).contains(&x.as_f64().unwrap())));
    }
    // Same seed, same actions: the same board.
    assert_eq!(post(addr, "/api/mines", &req).json()["cells"], s["cells"]);
    // The agent's moves, replayed, finish the game.
    let mut actions = req["actions"].as_array().unwrap().clone();
    for _ in 0..100 {
        let mut r = base.clone();
        r["actions"] = json!(actions);
        let s = post(addr, "/api/mines", &r).json();
        if s["status"] != "playing" {
            assert!(s["layout"].as_array().unwrap().len() == 10);
            break;
        }
        for c in s["next"]["cells"].as_array().unwrap() {
            actions.push(json!({"op": "reveal", "row": c[0], "col": c[1]}));
        }
    }
    for (bad, needle) in [
        (
            json!({"level": "beginner", "seed": 1, "actions": [{"op": "reveal", "row": 9, "col": 0}]}),
            "action 1",
        ),
        (
            json!({"level": "beginner", "width": 5, "seed": 1}),
            "either a level",
        ),
        (json!({"level": "huge", "seed": 1}), "unknown level"),
        (
            json!({"width": 500, "height": 5, "mines": 3, "seed": 1}),
            "at most",
        ),
        (
            json!({"level": "beginner", "rule": "lucky", "seed": 1}),
            "first-click",
        ),
        (
            json!({"level": "beginner", "seed": 1, "actions": [{"op": "dig", "row": 0, "col": 0}]}),
            "unknown variant",
        ),
    ] {
        let a = post(addr, "/api/mines", &bad);
        assert_eq!(a.status, 400, "{bad}");
        let e = a.json()["error"].as_str().unwrap().to_string();
        assert!(e.contains(needle), "{bad}: {e}");
    }
}

#[test]
fn the_dashboard_reads_a_runs_metrics_while_it_is_written() {
    let dir = std::env::temp_dir().join(format!("tabula-serve-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("metrics.jsonl"),
        "{\"iteration\":1,\"loss\":2.5}\n{\"iteration\":2,\"loss\":2.1}\n{\"iteration\":3,\"lo",
    )
    .unwrap();
    let addr = start(ServeConfig {
        run: Some(dir.clone()),
        ..ServeConfig::default()
    });
    let r = get(addr, "/api/run").json();
    assert_eq!(
        r["rows"].as_array().unwrap().len(),
        2,
        "the half-written row is skipped"
    );
    assert_eq!(r["rows"][1]["loss"], 2.1);
    let other = server();
    assert_eq!(get(other, "/api/run").status, 400);
    assert_eq!(get(other, "/api/run?dir=/nonexistent-tabula").status, 404);
    let q = format!("/api/run?dir={}", dir.display());
    assert_eq!(get(other, &q).json()["rows"].as_array().unwrap().len(), 2);
    std::fs::remove_dir_all(&dir).unwrap();
}
