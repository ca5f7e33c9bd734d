//! GTP analysis commands against a live `tabula gtp`: `lz-analyze` and `kata-analyze`
//! stream `info` lines in their formats until the next command, whose reply follows the
//! blank line that ends theirs with nothing mixed in; `kata-genmove_analyze` ends with
//! `play MOVE` and plays it.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A running engine: commands in, its stdout lines out (read on a thread, so that a
/// test can wait with a deadline).
struct Engine {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
}

impl Engine {
    fn start(args: &[&str]) -> Engine {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tabula"))
            .arg("gtp")
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("tabula gtp runs");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Engine {
            child,
            stdin,
            lines: rx,
        }
    }

    fn send(&mut self, command: &str) {
        writeln!(self.stdin, "{command}").expect("write");
        self.stdin.flush().expect("flush");
    }

    fn line(&self) -> String {
        self.lines
            .recv_timeout(Duration::from_secs(60))
            .expect("a line within 60 s")
    }

    /// Lines up to the blank line that ends a reply (not included).
    fn reply(&self) -> Vec<String> {
        let mut lines = Vec::new();
        loop {
            let l = self.line();
            if l.is_empty() {
                return lines;
            }
            lines.push(l);
        }
    }

    /// The lines of a streaming reply: waits until `n` info lines came, then sends
    /// `next` and collects the rest up to the blank line that ends it (`next`'s own
    /// reply comes after).
    fn stream(&mut self, n: usize, next: &str) -> Vec<String> {
        let mut lines = vec![self.line()];
        let deadline = Instant::now() + Duration::from_secs(60);
        while lines.len() < n + 1 {
            assert!(Instant::now() < deadline, "only {lines:?}");
            let l = self.line();
            assert!(
                !l.is_empty(),
                "the reply ended before the next command: {lines:?}"
            );
            lines.push(l);
        }
        self.send(next);
        lines.extend(self.reply());
        lines
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `info` records of one line: each a list of key/value words (pv: the rest).
fn records(line: &str) -> Vec<Vec<(String, String)>> {
    let mut out = Vec::new();
    let info = line.split(" ownership ").next().unwrap_or("");
    for rec in info.split("info ").filter(|r| !r.trim().is_empty()) {
        let words: Vec<&str> = rec.split_whitespace().collect();
        let pv_at = words.iter().position(|w| *w == "pv").expect("a pv");
        let mut fields: Vec<(String, String)> = words[..pv_at]
            .chunks(2)
            .map(|kv| (kv[0].to_string(), kv.get(1).unwrap_or(&"").to_string()))
            .collect();
        fields.push(("pv".into(), words[pv_at + 1..].join(" ")));
        out.push(fields);
    }
    out
}

fn field<'a>(rec: &'a [(String, String)], key: &str) -> &'a str {
    rec.iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no {key} in {rec:?}"))
}

#[test]
fn lz_analyze_streams_until_the_next_command() {
    let mut e = Engine::start(&["--size", "9"]);
    e.send("play b E5");
    assert_eq!(e.reply(), ["="]);
    e.send("7 lz-analyze w 5");
    let lines = e.stream(3, "8 name");
    assert_eq!(lines[0], "=7");
    // the analysis ended with a blank line, and the next command's reply comes whole
    // after it
    assert_eq!(e.reply(), ["=8 Tabula"]);
    let infos = &lines[1..];
    assert!(infos.len() >= 3, "{lines:?}");
    let mut last_visits = 0;
    for line in infos {
        assert!(line.starts_with("info move "), "{line}");
        let recs = records(line);
        let total: u64 = recs
            .iter()
            .map(|r| field(r, "visits").parse::<u64>().unwrap())
            .sum();
        assert!(total >= last_visits, "visits only grow: {line}");
        last_visits = total;
        for (order, r) in recs.iter().enumerate() {
            let keys: Vec<&str> = r.iter().map(|(k, _)| k.as_str()).collect();
            assert_eq!(
                keys,
                ["move", "visits", "winrate", "prior", "lcb", "order", "pv"],
                "{line}"
            );
            for k in ["winrate", "prior", "lcb"] {
                let v: i64 = field(r, k).parse().expect("an integer ×10000");
                assert!((0..=10_000).contains(&v), "{k} {v} in {line}");
            }
            assert_eq!(field(r, "order"), order.to_string());
            let mv = field(r, "move");
            assert!(field(r, "pv").starts_with(mv), "{line}");
            assert_ne!(mv, "E5", "an occupied point is not a candidate");
        }
    }
    // nothing else arrives after the reply to `name`
    assert!(e.lines.recv_timeout(Duration::from_millis(300)).is_err());
    // and the engine is still in sync: a normal command gets a normal reply
    e.send("9 showboard");
    assert!(e.reply()[0].starts_with("=9"));
}

#[test]
fn kata_analyze_with_ownership_and_genmove_analyze() {
    let mut e = Engine::start(&["--size", "9", "--move-time", "0.3"]);
    e.send("kata-analyze b interval 5 ownership true maxmoves 4");
    let lines = e.stream(2, "no_such_command");
    assert_eq!(lines[0], "=");
    assert_eq!(e.reply(), ["? unknown command"]);
    for line in &lines[1..] {
        let recs = records(line);
        assert!(!recs.is_empty() && recs.len() <= 4, "{line}");
        for r in &recs {
            for k in ["winrate", "prior", "lcb"] {
                let v: f64 = field(r, k).parse().expect("a float");
                assert!((0.0..=1.0).contains(&v), "{k} {v}");
            }
            let _: f64 = field(r, "scoreLead").parse().expect("a score lead");
            let _: f64 = field(r, "utility").parse().expect("a utility");
        }
        let own: Vec<f64> = line
            .split(" ownership ")
            .nth(1)
            .expect("ownership")
            .split(' ')
            .map(|v| v.parse().expect("a float"))
            .collect();
        assert_eq!(own.len(), 81, "{line}");
        assert!(own.iter().all(|o| (-1.0..=1.0).contains(o)));
    }
    // a malformed analysis command changes nothing and streams nothing
    e.send("lz-analyze b -3");
    assert_eq!(e.reply().len(), 1);
    // kata-genmove_analyze: info lines, then the move, which is on the board afterwards
    e.send("kata-genmove_analyze b 5");
    let reply = e.reply();
    assert_eq!(reply[0], "=");
    let played = reply
        .last()
        .expect("a move")
        .strip_prefix("play ")
        .expect("play MOVE");
    assert!(
        reply[1..reply.len() - 1]
            .iter()
            .all(|l| l.starts_with("info move ")),
        "{reply:?}"
    );
    e.send("genmove w");
    let answer = e.reply();
    assert!(answer[0].starts_with("= "), "{answer:?}");
    if played != "pass" {
        e.send(&format!("play b {played}"));
        assert_eq!(e.reply(), ["? illegal move"], "{played} is taken");
    }
}

#[test]
fn a_search_that_spends_its_visits_waits_for_the_next_command() {
    let mut e = Engine::start(&["--size", "9", "--sims", "40", "--playouts", "light"]);
    e.send("lz-analyze b 1000");
    assert_eq!(e.line(), "=");
    // the budget is spent long before the interval: the final snapshot is shown...
    assert!(e.line().starts_with("info move "));
    // ...and the reply stays open
    assert!(e.lines.recv_timeout(Duration::from_millis(500)).is_err());
    e.send("name");
    assert_eq!(
        e.reply(),
        Vec::<String>::new(),
        "the blank line that ends the analysis"
    );
    assert_eq!(e.reply(), ["= Tabula"]);
}
