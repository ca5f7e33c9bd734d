//! `tabula analysis`, KataGo's JSON analysis protocol: a scripted query file gets the
//! expected responses (structure, turns, ownership, policy), every malformed query an
//! error object naming its field, and the engine never exits before its input ends;
//! `terminate` stops a search that would otherwise run for minutes.

mod common;

use common::{tabula, text};
use serde_json::Value;

fn responses(args: &[&str], queries: &[&str]) -> Vec<Value> {
    let mut input = queries.join("\n");
    input.push('\n');
    let mut all = vec!["analysis"];
    all.extend_from_slice(args);
    let out = tabula(&all, &input);
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn by_id<'a>(rs: &'a [Value], id: &str) -> Vec<&'a Value> {
    rs.iter().filter(|r| r["id"] == id).collect()
}

/// `pvVisits` (asked for with `includePVVisits`): one count per move of the `pv`,
/// the move's own visits first, never more below than above.
fn check_pv_visits(info: &Value) {
    let visits: Vec<u64> = info["pvVisits"]
        .as_array()
        .unwrap_or_else(|| panic!("no pvVisits in {info}"))
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(visits.len(), info["pv"].as_array().unwrap().len(), "{info}");
    assert_eq!(visits[0], info["visits"].as_u64().unwrap(), "{info}");
    assert!(visits.windows(2).all(|w| w[1] <= w[0]), "{info}");
}

#[test]
fn go_queries_in_katago_format() {
    let rs = responses(
        &["--max-visits", "100"],
        &[
            r#"{"id":"a","moves":[["B","E5"],["W","C3"]],"rules":"tromp-taylor","komi":7.5,"boardXSize":9,"boardYSize":9,"analyzeTurns":[0,2],"includeOwnership":true,"includePolicy":true,"includePVVisits":true}"#,
            r#"{"id":"q","action":"query_version"}"#,
            r#"{"id":"s","initialStones":[["B","D4"],["W","C3"]],"initialPlayer":"W","moves":[],"rules":{"ko":"SIMPLE","scoring":"AREA","suicide":false},"komi":0.5,"boardXSize":7,"boardYSize":7,"maxVisits":50,"reportDuringSearchEvery":0.001}"#,
        ],
    );
    let version = by_id(&rs, "q");
    assert_eq!(version.len(), 1);
    assert_eq!(version[0]["action"], "query_version");
    assert!(version[0]["version"].is_string());
    let a = by_id(&rs, "a");
    assert_eq!(a.len(), 2, "{a:?}");
    let turns: Vec<u64> = a
        .iter()
        .map(|r| r["turnNumber"].as_u64().unwrap())
        .collect();
    assert_eq!(turns, [0, 2]);
    for r in &a {
        assert_eq!(r["isDuringSearch"], false);
        let infos = r["moveInfos"].as_array().unwrap();
        assert!(!infos.is_empty());
        let visits: u64 = infos.iter().map(|m| m["visits"].as_u64().unwrap()).sum();
        assert!((99..=100).contains(&visits), "{visits}");
        for (order, m) in infos.iter().enumerate() {
            assert_eq!(m["order"], order as u64);
            let mv = m["move"].as_str().unwrap();
            assert!(mv == "pass" || mv.len() == 2, "{mv}");
            assert_eq!(m["pv"][0], mv);
            check_pv_visits(m);
            for k in ["winrate", "prior", "lcb", "scoreLead", "utility"] {
                assert!(m[k].is_number(), "{k} in {m}");
            }
        }
        assert!(r["rootInfo"]["visits"].as_u64().unwrap() >= 99);
        assert_eq!(r["rootInfo"]["thisHash"].as_str().unwrap().len(), 16);
        assert_eq!(r["ownership"].as_array().unwrap().len(), 81);
        let policy = r["policy"].as_array().unwrap();
        assert_eq!(policy.len(), 82);
        let legal: f64 = policy
            .iter()
            .map(|p| p.as_f64().unwrap())
            .filter(|&p| p >= 0.0)
            .sum();
        assert!((legal - 1.0).abs() < 1e-3, "{legal}");
    }
    // turn 2: E5 and C3 are occupied, so illegal in the policy and not among the moves
    let t2 = a[1];
    for (point, index) in [("E5", 4 * 9 + 4), ("C3", 6 * 9 + 2)] {
        assert_eq!(t2["policy"][index], -1.0, "{point}");
        assert!(t2["moveInfos"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["move"] != point));
    }
    assert_eq!(t2["rootInfo"]["currentPlayer"], "B");
    // setup stones, White first, a rules object; partial reports before the final one
    let s = by_id(&rs, "s");
    assert!(s.len() >= 2, "{s:?}");
    assert!(s[..s.len() - 1].iter().all(|r| r["isDuringSearch"] == true));
    let last = s[s.len() - 1];
    assert_eq!(last["isDuringSearch"], false);
    assert_eq!(last["rootInfo"]["currentPlayer"], "W");
    assert!(
        last["moveInfos"][0].get("pvVisits").is_none(),
        "not asked for"
    );
    assert!(last["moveInfos"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m["move"] != "D4" && m["move"] != "C3"));
}

#[test]
fn malformed_queries_get_error_objects_and_the_engine_goes_on() {
    let rs = responses(
        &["--max-visits", "20"],
        &[
            r#"{"moves":[],"rules":"tromp-taylor","boardXSize":9,"boardYSize":9}"#,
            "not json",
            "[1,2]",
            r#"{"id":"m1","moves":[["B","E5"],["W","E5"]],"rules":"tromp-taylor","boardXSize":9,"boardYSize":9}"#,
            r#"{"id":"m2","moves":[["B","Z99"]],"rules":"tromp-taylor","boardXSize":9,"boardYSize":9}"#,
            r#"{"id":"m3","moves":[],"rules":"tromp-taylor","boardXSize":25,"boardYSize":25}"#,
            r#"{"id":"m4","moves":[],"rules":"tromp-taylor","boardXSize":9,"boardYSize":7}"#,
            r#"{"id":"m5","moves":[],"rules":"martian","boardXSize":9,"boardYSize":9}"#,
            r#"{"id":"m6","moves":[],"rules":"tromp-taylor","komi":"x","boardXSize":9,"boardYSize":9}"#,
            r#"{"id":"m7","moves":[],"rules":"tromp-taylor","komi":1e9,"boardXSize":9,"boardYSize":9}"#,
            r#"{"id":"m8","moves":[],"rules":"tromp-taylor","boardXSize":9,"boardYSize":9,"analyzeTurns":[3]}"#,
            r#"{"id":"m9","moves":[],"rules":"tromp-taylor","boardXSize":9,"boardYSize":9,"maxVisits":0}"#,
            r#"{"id":"m10","rules":"tromp-taylor","boardXSize":9,"boardYSize":9}"#,
            r#"{"id":"m11","moves":[["X","E5"]],"rules":"tromp-taylor","boardXSize":9,"boardYSize":9}"#,
            r#"{"id":"m12","action":"explode"}"#,
            r#"{"id":"m13","action":"terminate"}"#,
            r#"{"id":"ok","moves":[["B","E5"]],"rules":"tromp-taylor","komi":7.5,"boardXSize":9,"boardYSize":9}"#,
        ],
    );
    let error = |id: Option<&str>| -> &Value {
        rs.iter()
            .find(|r| r.get("error").is_some() && r.get("id").and_then(Value::as_str) == id)
            .unwrap_or_else(|| panic!("no error for {id:?} in {rs:?}"))
    };
    assert_eq!(error(None)["field"], "id");
    let no_id: Vec<_> = rs
        .iter()
        .filter(|r| r.get("error").is_some() && r.get("id").is_none())
        .collect();
    assert_eq!(
        no_id.len(),
        3,
        "missing id, not JSON, not an object: {no_id:?}"
    );
    for (id, field) in [
        ("m1", "moves"),
        ("m2", "moves"),
        ("m3", "boardXSize"),
        ("m4", "boardXSize"),
        ("m5", "rules"),
        ("m6", "komi"),
        ("m7", "komi"),
        ("m8", "analyzeTurns"),
        ("m9", "maxVisits"),
        ("m10", "moves"),
        ("m11", "moves"),
        ("m12", "action"),
        ("m13", "terminateId"),
    ] {
        let e = error(Some(id));
        assert_eq!(e["field"], field, "{id}: {e}");
        assert!(!e["error"].as_str().unwrap().is_empty());
        assert!(
            by_id(&rs, id).iter().all(|r| r.get("moveInfos").is_none()),
            "{id} has no analysis"
        );
    }
    // after all that, a good query is answered
    let ok = by_id(&rs, "ok");
    assert_eq!(ok.len(), 1);
    assert_eq!(ok[0]["rootInfo"]["currentPlayer"], "W");
}

#[test]
fn terminate_stops_a_long_search_and_other_games_use_their_move_names() {
    let started = std::time::Instant::now();
    let rs = responses(
        &["--max-time", "600"],
        &[
            r#"{"id":"long","moves":[],"rules":"tromp-taylor","boardXSize":9,"boardYSize":9,"maxVisits":1000000000}"#,
            r#"{"id":"t","action":"terminate","terminateId":"long"}"#,
            r#"{"id":"c4","game":"connect4","moves":["4","4","4"],"maxVisits":100}"#,
        ],
    );
    assert!(
        started.elapsed().as_secs() < 60,
        "terminate ended the search"
    );
    let long = by_id(&rs, "long");
    assert_eq!(long.last().unwrap()["isDuringSearch"], false);
    assert_eq!(by_id(&rs, "t")[0]["terminateId"], "long");
    let c4 = by_id(&rs, "c4");
    let infos = c4[0]["moveInfos"].as_array().unwrap();
    assert!(infos
        .iter()
        .all(|m| ["1", "2", "3", "4", "5", "6", "7"].contains(&m["move"].as_str().unwrap())));
    // after three plies in column 4 the second player (W) must block it
    assert_eq!(c4[0]["rootInfo"]["currentPlayer"], "W");
    assert_eq!(infos[0]["move"], "4", "{infos:?}");
}

#[test]
fn the_shipped_7x7_network_answers_through_the_same_protocol() {
    let rs = responses(
        &["--player", "mcts"],
        &[
            r#"{"id":"n","moves":[["B","D4"]],"rules":"chinese","komi":9,"boardXSize":7,"boardYSize":7,"maxVisits":100,"includeOwnership":true,"includePolicy":true,"includePVVisits":true}"#,
            r#"{"id":"m","moves":[],"rules":"chinese","komi":9,"boardXSize":13,"boardYSize":13,"maxVisits":10}"#,
        ],
    );
    let n = by_id(&rs, "n");
    assert_eq!(n.len(), 1, "{rs:?}");
    let r = n[0];
    assert_eq!(r["ownership"].as_array().unwrap().len(), 49);
    assert_eq!(r["policy"].as_array().unwrap().len(), 50);
    assert_eq!(r["policy"][3 * 7 + 3], -1.0, "D4 is taken");
    let visits: u64 = r["moveInfos"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["visits"].as_u64().unwrap())
        .sum();
    assert!((99..=100).contains(&visits), "{visits}");
    r["moveInfos"]
        .as_array()
        .unwrap()
        .iter()
        .for_each(check_pv_visits);
    // no 13x13 network is shipped: the query is refused, the engine goes on
    let m = by_id(&rs, "m");
    assert!(m[0]["error"].as_str().unwrap().contains("go:13"), "{m:?}");
}

#[test]
fn allow_and_avoid_moves_restrict_the_root_and_bad_rules_are_errors() {
    let rs = responses(
        &["--max-visits", "60"],
        &[
            // KaTrain's region of interest: White may only answer at C3, G7 or pass
            r#"{"id":"allow","moves":[["B","E5"]],"boardXSize":9,"boardYSize":9,"allowMoves":[{"player":"W","moves":["C3","G7","pass"],"untilDepth":1}]}"#,
            // Black's two central points are avoided
            r#"{"id":"avoid","moves":[],"boardXSize":9,"boardYSize":9,"avoidMoves":[{"player":"B","moves":["E5","D5"],"untilDepth":1}]}"#,
            // White to move: a rule for Black leaves White's root whole
            r#"{"id":"other","moves":[["B","A1"]],"boardXSize":9,"boardYSize":9,"allowMoves":[{"player":"B","moves":["A2"],"untilDepth":1}]}"#,
            r#"{"id":"deep","moves":[],"boardXSize":9,"boardYSize":9,"avoidMoves":[{"player":"B","moves":["E5"],"untilDepth":4}]}"#,
            r#"{"id":"e1","moves":[],"boardXSize":9,"boardYSize":9,"allowMoves":[{"player":"B","moves":["Z9"],"untilDepth":1}]}"#,
            r#"{"id":"e2","moves":[["B","E5"]],"boardXSize":9,"boardYSize":9,"allowMoves":[{"player":"W","moves":["E5"],"untilDepth":1}]}"#,
            r#"{"id":"e3","moves":[],"boardXSize":9,"boardYSize":9,"avoidMoves":{"player":"B"}}"#,
            r#"{"id":"e4","moves":[],"boardXSize":9,"boardYSize":9,"allowMoves":[{"player":"B","moves":["E5"],"untilDepth":0}]}"#,
            r#"{"id":"e5","moves":[],"boardXSize":9,"boardYSize":9,"allowMoves":[{"player":"B","moves":["E5"],"untilDepth":1},{"player":"B","moves":["D5"],"untilDepth":1}]}"#,
            r#"{"id":"e6","moves":[],"boardXSize":9,"boardYSize":9,"avoidMoves":[{"player":"X","moves":["E5"],"untilDepth":1}]}"#,
        ],
    );
    let moves = |r: &Value| -> Vec<String> {
        let mut m: Vec<String> = r["moveInfos"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["move"].as_str().unwrap().to_string())
            .collect();
        m.sort();
        m
    };
    let allow = by_id(&rs, "allow");
    assert_eq!(allow.len(), 1, "{rs:?}");
    // the two allowed points, and pass (always legal) if the search tried it
    let allowed = moves(allow[0]);
    assert!(
        allowed.starts_with(&["C3".to_string(), "G7".to_string()])
            && allowed
                .iter()
                .all(|m| ["C3", "G7", "pass"].contains(&m.as_str())),
        "{allowed:?}"
    );
    let avoid = by_id(&rs, "avoid");
    let black = moves(avoid[0]);
    assert!(
        !black.is_empty()
            && !black.contains(&"E5".to_string())
            && !black.contains(&"D5".to_string()),
        "{black:?}"
    );
    let other = by_id(&rs, "other");
    let white = other.iter().find(|r| r.get("moveInfos").is_some()).unwrap();
    assert!(moves(white).len() > 1, "White's root is not restricted");
    let deep = by_id(&rs, "deep");
    assert!(deep.iter().any(|r| r["warning"]
        .as_str()
        .is_some_and(|w| w.contains("root only"))));
    assert!(deep.iter().any(|r| r
        .get("moveInfos")
        .is_some_and(|_| !moves(r).contains(&"E5".to_string()))));
    for (id, field) in [
        ("e1", "allowMoves"),
        ("e2", "allowMoves"),
        ("e3", "avoidMoves"),
        ("e4", "allowMoves"),
        ("e5", "allowMoves"),
        ("e6", "avoidMoves"),
    ] {
        let r = by_id(&rs, id);
        assert_eq!(r.len(), 1, "{id}: {r:?}");
        assert_eq!(r[0]["field"], field, "{id}: {}", r[0]);
        assert!(r[0]["error"].as_str().is_some(), "{id}: {}", r[0]);
    }
}

/// Go's network is mixed with playouts as `tabula gtp` plays it unless `--playout-mix
/// 0` asks for the network alone (the values differ); a weight outside 0..1 or not a
/// number is refused before any query is read.
#[test]
fn go_analysis_mixes_playouts_unless_told_not_to() {
    let query = [
        r#"{"id":"q","moves":[["B","D4"],["W","C3"]],"rules":"chinese","komi":9,"boardXSize":7,"boardYSize":7,"maxVisits":60}"#,
    ];
    let winrate = |args: &[&str]| {
        let rs = responses(args, &query);
        rs[0]["rootInfo"]["winrate"].as_f64().unwrap()
    };
    let mixed = winrate(&["--player", "mcts"]);
    let alone = winrate(&["--player", "mcts", "--playout-mix", "0"]);
    assert_ne!(mixed, alone);
    assert_eq!(
        mixed,
        winrate(&["--player", "mcts", "--playout-mix", "0.75"])
    );
    for bad in ["nan", "1.5", "-0.1"] {
        let out = tabula(&["analysis", &format!("--playout-mix={bad}")], "");
        assert!(!out.status.success(), "{bad} accepted");
        assert!(text(&out.stderr).contains("--playout-mix"), "{bad}");
    }
}
