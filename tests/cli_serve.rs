//! `tabula serve` end to end: the binary listens, says where, answers the API with the
//! shipped models, and refuses what it cannot use.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::refused;

/// Kills the server when the test ends, however it ends.
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn post(addr: &str, path: &str, body: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(
        s,
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

#[test]
fn serve_listens_where_it_says_and_plays_with_the_shipped_models() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tabula"))
        .args(["serve", "--addr", "127.0.0.1:0", "--max-seconds", "5"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tabula runs");
    let stdout = child.stdout.take().unwrap();
    let server = Server(child);
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_string();
    let state = post(&addr, "/api/state", r#"{"game":"connect4"}"#);
    assert!(state.starts_with("HTTP/1.1 200"), "{state}");
    assert!(
        state.contains("connect4.safetensors"),
        "the shipped model is offered: {state}"
    );
    let mv = post(
        &addr,
        "/api/move",
        r#"{"game":"connect4","moves":["4"],"player":{"kind":"mcts","sims":100}}"#,
    );
    assert!(mv.contains("\"played\""), "{mv}");
    let mines = post(
        &addr,
        "/api/mines",
        r#"{"level":"beginner","seed":3,"actions":[{"op":"reveal","row":2,"col":2}]}"#,
    );
    assert!(
        mines.contains("\"name\":\"net\""),
        "the shipped mine model overlays: {mines}"
    );
    drop(server);
}

#[test]
fn serve_refuses_an_address_or_model_it_cannot_use() {
    refused(
        &["serve", "--addr", "not-an-address"],
        "",
        "cannot listen on not-an-address",
    );
    refused(
        &[
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--mine-model",
            "models/connect4.safetensors",
        ],
        "",
        "models/connect4.safetensors",
    );
    refused(&["serve", "--max-seconds", "0"], "", "0");
}
