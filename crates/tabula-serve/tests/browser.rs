//! The web app in a real browser: Debian's Chromium driven over the DevTools protocol
//! (chromiumoxide; no browser download). Each page loads, takes a click, and shows
//! the AI's answer. With `TABULA_SCREENSHOTS=1` each page is saved under
//! `docs/screenshots/` for the README.

mod common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use chromiumoxide::browser::{Browser, BrowserConfig};
use chromiumoxide::page::ScreenshotParams;
use chromiumoxide::Page;
use futures_util::StreamExt;
use tabula_serve::ServeConfig;

const CHROMIUM: &str = "/usr/bin/chromium";

/// Evaluates `expr` until it is true, for at most `limit`; whether it became true.
async fn wait_until(page: &Page, expr: &str, limit: Duration) -> bool {
    let started = Instant::now();
    loop {
        let v: bool = page
            .evaluate(format!("!!({expr})"))
            .await
            .ok()
            .and_then(|r| r.into_value().ok())
            .unwrap_or(false);
        if v {
            return true;
        }
        if started.elapsed() > limit {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Evaluates `expr` until it is true, for at most 60 s.
async fn wait_for(page: &Page, expr: &str) {
    if !wait_until(page, expr, Duration::from_secs(60)).await {
        let body: String = eval(page, "document.body.innerText").await;
        panic!("timed out waiting for {expr}; the page says:\n{body}");
    }
}

/// Words in the move list: it grows by one with every move played.
const MOVE_WORDS: &str = "document.getElementById('moves').textContent.trim().split(' ').length";

/// Clicks a board until the page takes it as a move, then waits until the move list
/// holds `words` words (the AI has answered). The page ignores clicks while it is busy
/// (as it would a person's): on a loaded machine the first click can land while the
/// page is still settling, so it is repeated (at most five times) while the move list
/// has not changed.
async fn play_click(page: &Page, selector: &str, words: usize) {
    let before: usize = eval(page, MOVE_WORDS).await;
    for _ in 0..5 {
        click(page, selector).await;
        let changed = format!("{MOVE_WORDS} !== {before}");
        if wait_until(page, &changed, Duration::from_secs(10)).await {
            break;
        }
    }
    wait_for(page, &format!("{MOVE_WORDS} === {words}")).await;
}

async fn eval<T: serde::de::DeserializeOwned>(page: &Page, expr: &str) -> T {
    page.evaluate(expr).await.unwrap().into_value().unwrap()
}

async fn screenshot(page: &Page, name: &str) {
    if std::env::var("TABULA_SCREENSHOTS").is_ok_and(|v| v == "1") {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/screenshots");
        std::fs::create_dir_all(&dir).unwrap();
        page.save_screenshot(
            ScreenshotParams::builder().full_page(true).build(),
            dir.join(name),
        )
        .await
        .unwrap();
    }
}

/// Clicks the centre of the first element `selector` matches. Boards are clicked through
/// their `<svg>`, which outlives the redraws live analysis makes (a point's own shapes
/// may be replaced between finding and clicking them).
async fn click(page: &Page, selector: &str) {
    page.find_element(selector)
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_plays_in_a_real_browser() {
    assert!(
        std::path::Path::new(CHROMIUM).exists(),
        "browser tests need Debian's chromium at {CHROMIUM} (apt-get install -y chromium; .ci/run does)"
    );
    let run = std::env::temp_dir().join(format!("tabula-browser-run-{}", std::process::id()));
    std::fs::create_dir_all(&run).unwrap();
    let rows: String = (1..=20)
        .map(|i| {
            format!(
                "{{\"iteration\":{i},\"policy_loss\":{},\"accuracy\":{}}}\n",
                3.0 / i as f64,
                0.5 + i as f64 / 50.0
            )
        })
        .collect();
    std::fs::write(run.join("metrics.jsonl"), rows).unwrap();
    let addr = common::start(ServeConfig {
        run: Some(run.clone()),
        mine_model: Some(common::models().join("mines.safetensors")),
        ..ServeConfig::default()
    });
    let profile = std::env::temp_dir().join(format!("tabula-chromium-{}", std::process::id()));
    let config = BrowserConfig::builder()
        .chrome_executable(CHROMIUM)
        .new_headless_mode()
        .no_sandbox()
        .user_data_dir(&profile)
        .window_size(1400, 900)
        .launch_timeout(Duration::from_secs(60))
        .request_timeout(Duration::from_secs(60))
        .args([
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .build()
        .unwrap();
    let (mut browser, mut handler) = Browser::launch(config).await.expect("chromium starts");
    let events = tokio::spawn(async move { while handler.next().await.is_some() {} });
    let base = format!("http://{addr}");

    // Home: the three pages are linked.
    let page = browser.new_page(format!("{base}/")).await.unwrap();
    wait_for(
        &page,
        "document.getElementById('games').textContent.includes('go:19')",
    )
    .await;
    let links: usize = eval(&page, "document.querySelectorAll('a[href=\"/play\"], a[href=\"/mines\"], a[href=\"/train\"]').length").await;
    assert!(links >= 3);
    screenshot(&page, "home.png").await;

    // Tic-tac-toe against the perfect player: click the centre, see the reply.
    page.goto(format!("{base}/play?game=tictactoe"))
        .await
        .unwrap();
    wait_for(&page, "document.querySelector('#board rect.hit')").await;
    // the middle of a 3x3 board is cell 5
    play_click(&page, "#board", 3).await;
    let moves: String = eval(&page, "document.getElementById('moves').textContent").await;
    assert!(moves.starts_with("Moves: 5 "), "{moves}");
    let evaluation: String = eval(&page, "document.getElementById('evaluation').textContent").await;
    assert!(evaluation.contains("played"), "{evaluation}");
    // Live analysis draws a heatmap and a candidate table.
    wait_for(&page, "document.querySelectorAll('#board g.mark').length > 0 && document.querySelectorAll('#cands tbody tr').length > 0").await;

    // Connect Four: the solver's exact column scores beside the network's view.
    // (From the middle game: early positions take the solver too long to score.)
    page.goto(format!(
        "{base}/play?game=connect4&moves=4,4,3,5,3,3,5,2,6,6"
    ))
    .await
    .unwrap();
    wait_for(&page, "document.querySelector('#board rect.hit')").await;
    // the middle column
    play_click(&page, "#board", 13).await;
    wait_for(&page, "[...document.querySelectorAll('#cands tbody td')].some(td => /^(win|draw|loss) \\(-?[0-9]+\\)$/.test(td.textContent))").await;
    wait_for(
        &page,
        "document.querySelectorAll('#board g.mark').length > 0",
    )
    .await;
    screenshot(&page, "connect4.png").await;

    // Go 9x9 against UCT: a stone, an answer, a heatmap.
    page.goto(format!("{base}/play?game=go:9")).await.unwrap();
    wait_for(&page, "document.querySelector('#board rect.hit')").await;
    page.evaluate("document.getElementById('p2').value = 'uct'; document.getElementById('seconds').value = '0.5'; document.getElementById('model').value = 'rollout'").await.unwrap();
    // E5, the centre
    play_click(&page, "#board", 3).await;
    let moves: String = eval(&page, "document.getElementById('moves').textContent").await;
    assert!(moves.starts_with("Moves: E5 "), "{moves}");
    wait_for(
        &page,
        "document.querySelectorAll('#board g.mark').length > 0",
    )
    .await;
    let stones: usize = eval(
        &page,
        "document.querySelectorAll('#board > circle[stroke=\"#222\"]').length",
    )
    .await;
    assert!(stones >= 2, "{stones} stones drawn");
    screenshot(&page, "play.png").await;

    // Minesweeper: reveal the marked first cell, see numbers and three heatmaps.
    page.goto(format!("{base}/mines")).await.unwrap();
    wait_for(
        &page,
        "document.querySelectorAll('#board g.mcell').length === 81",
    )
    .await;
    click(&page, "#board g.mcell[data-row='2'][data-col='2'] rect").await;
    wait_for(
        &page,
        "document.querySelectorAll('#heatmaps svg').length === 3",
    )
    .await;
    let status: String = eval(&page, "document.getElementById('status').textContent").await;
    assert!(!status.contains(" 0 cells revealed"), "{status}");
    click(&page, "#step").await;
    wait_for(
        &page,
        "!/ 9 cells revealed/.test(document.getElementById('status').textContent)",
    )
    .await;
    screenshot(&page, "mines.png").await;

    // Training: the run's curves.
    page.goto(format!("{base}/train")).await.unwrap();
    wait_for(
        &page,
        "document.querySelectorAll('#charts .chart polyline').length === 2",
    )
    .await;
    screenshot(&page, "train.png").await;

    browser.close().await.unwrap();
    let _ = browser.wait().await;
    events.abort();
    let _ = std::fs::remove_dir_all(&run);
    let _ = std::fs::remove_dir_all(&profile);
}
