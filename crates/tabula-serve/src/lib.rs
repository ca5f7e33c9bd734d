//! `tabula serve`: a web app to play and analyse every registered game, to watch
//! Minesweeper's mine probabilities, and to follow a training run — one binary, pages
//! embedded ([`assets`]), JSON over HTTP for actions, Server-Sent Events for live
//! search.
//!
//! The server keeps no game state: every request carries the game and its moves (or a
//! Minesweeper seed and the player's actions), so many clients never share anything
//! and undo is the client dropping a move. Searches run on Tokio's blocking pool, at
//! most [`Limits::concurrent`] at once, each bounded in simulations and time and
//! cancelled when its client goes away; the async runtime only moves bytes.
//!
//! The API (all JSON; errors are `{"error": "..."}` with a 4xx status):
//!
//! | route | what |
//! |---|---|
//! | `GET /api/games` | the games and their presets |
//! | `POST /api/state` `{game, moves}` | board, legal moves, outcome, players, models |
//! | `POST /api/click` `{game, moves, row, col}` | plays the move at a point |
//! | `POST /api/move` `{game, moves, player: {kind, model, sims, seconds}}` | an AI's move |
//! | `POST /api/analyze` `{game, moves, model, sims, seconds}` | MCTS statistics |
//! | `GET /api/analyze/live?game=&moves=a,b&model=&sims=` | the same, streamed (SSE) |
//! | `POST /api/solve` `{game, moves}` | the exact score of every move |
//! | `GET /api/mines/levels` | Minesweeper levels and first-click rules |
//! | `POST /api/mines` `{level, rule, seed, actions}` | board, overlays, next move |
//! | `GET /api/run?dir=DIR` | a training run's metrics |

pub mod analysis;
pub mod assets;
pub mod error;
pub mod games;
pub mod mines;
pub mod players;
pub mod runs;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::header;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;
use tabula_automine::MineNet;
use tokio::sync::{mpsc, Semaphore};
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::StreamExt;

pub use error::{ApiError, ServeError};

/// The largest request body accepted.
pub const MAX_BODY: usize = 256 << 10;

/// Caps on the work one request may ask for.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Simulations (or playouts) per search.
    pub max_sims: usize,
    /// Wall time per search.
    pub max_time: Duration,
    /// Searches running at once (more wait their turn).
    pub concurrent: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_sims: 1_000_000,
            max_time: Duration::from_secs(60),
            concurrent: std::thread::available_parallelism().map_or(2, |n| n.get()) * 2,
        }
    }
}

/// How the server runs.
#[derive(Clone, Debug, Default)]
pub struct ServeConfig {
    /// The training run the dashboard shows by default.
    pub run: Option<PathBuf>,
    /// The learned mine model for the Minesweeper overlay (`None`: none shown).
    pub mine_model: Option<PathBuf>,
    /// Caps on searches.
    pub limits: Limits,
}

/// What every handler shares.
struct App {
    limits: Limits,
    run: Option<PathBuf>,
    searches: Arc<Semaphore>,
    mine_net: Option<MineNet>,
}

type Shared = Arc<App>;

/// The application: pages and API.
pub fn router(config: &ServeConfig) -> Result<Router, ApiError> {
    let mine_net = match &config.mine_model {
        Some(p) => {
            Some(MineNet::load(p).map_err(|e| ApiError::bad(format!("{}: {e}", p.display())))?)
        }
        None => None,
    };
    let app = Arc::new(App {
        limits: config.limits,
        run: config.run.clone(),
        searches: Arc::new(Semaphore::new(config.limits.concurrent.max(1))),
        mine_net,
    });
    Ok(Router::new()
        .route("/", get(|| async { page("index.html") }))
        .route("/play", get(|| async { page("play.html") }))
        .route("/mines", get(|| async { page("mines.html") }))
        .route("/train", get(|| async { page("train.html") }))
        .route("/static/{name}", get(static_file))
        .route("/api/games", get(|| async { Json(games::catalogue()) }))
        .route("/api/state", post(state))
        .route("/api/click", post(click))
        .route("/api/move", post(ai_move))
        .route("/api/solve", post(solve))
        .route("/api/analyze", post(analyze))
        .route("/api/analyze/live", get(analyze_live))
        .route("/api/mines/levels", get(|| async { Json(mines::levels()) }))
        .route("/api/mines", post(mines_state))
        .route("/api/run", get(run_metrics))
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .with_state(app))
}

/// Serves `router` on `addr` until Ctrl-C, calling `ready` with the bound address
/// (port 0 picks a free one).
pub fn run(
    config: &ServeConfig,
    addr: &str,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), ServeError> {
    let app = router(config).map_err(|e| ServeError::Config(e.to_string()))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| ServeError::Bind {
                addr: addr.to_string(),
                source,
            })?;
        ready(listener.local_addr()?);
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await?;
        Ok(())
    })
}

fn page(name: &str) -> Response {
    embedded(name)
}

async fn static_file(Path(name): Path<String>) -> Response {
    embedded(&name)
}

fn embedded(name: &str) -> Response {
    match assets::get(name) {
        Some((mime, text)) => ([(header::CONTENT_TYPE, mime)], text).into_response(),
        None => ApiError::NotFound(format!("no file {name:?}")).into_response(),
    }
}

/// Reads a JSON body, answering malformed ones with a 400 that says what is wrong.
fn parse<T: DeserializeOwned>(body: &Bytes) -> Result<T, ApiError> {
    serde_json::from_slice(body).map_err(|e| ApiError::bad(format!("bad request: {e}")))
}

/// Sets its flag when dropped: a handler future dropped because the client went away
/// cancels the search it started.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Waits for one of the search slots.
async fn search_slot(app: &App) -> Result<tokio::sync::OwnedSemaphorePermit, ApiError> {
    app.searches
        .clone()
        .acquire_owned()
        .await
        .map_err(|_| ApiError::Internal("the server is shutting down".into()))
}

/// Runs `work` on the blocking pool once a search slot is free.
async fn blocking<T: Send + 'static>(
    app: &App,
    work: impl FnOnce(&AtomicBool) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let permit = search_slot(app).await?;
    let cancel = Arc::new(AtomicBool::new(false));
    let _guard = CancelOnDrop(cancel.clone());
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        work(&cancel)
    })
    .await
    .map_err(|e| ApiError::Internal(format!("the search failed: {e}")))?
}

/// Runs cheap `work` (replaying a game's moves) on the blocking pool without waiting
/// for a search slot, so that boards stay quick while searches queue.
async fn quick<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ApiError::Internal(format!("the request failed: {e}")))?
}

async fn state(body: Bytes) -> Result<Json<Value>, ApiError> {
    let pos: games::Position = parse(&body)?;
    Ok(Json(quick(move || games::state(&pos)).await?))
}

async fn click(body: Bytes) -> Result<Json<Value>, ApiError> {
    let c: games::Click = parse(&body)?;
    Ok(Json(quick(move || games::click(c)).await?))
}

async fn ai_move(State(app): State<Shared>, body: Bytes) -> Result<Json<Value>, ApiError> {
    let req: games::MoveRequest = parse(&body)?;
    let limits = app.limits;
    Ok(Json(
        blocking(&app, move |_| games::ai_move(&req, limits)).await?,
    ))
}

async fn solve(State(app): State<Shared>, body: Bytes) -> Result<Json<Value>, ApiError> {
    let pos: games::Position = parse(&body)?;
    Ok(Json(blocking(&app, move |_| games::solve(&pos)).await?))
}

async fn analyze(State(app): State<Shared>, body: Bytes) -> Result<Json<Value>, ApiError> {
    let req: analysis::AnalysisRequest = parse(&body)?;
    let limits = app.limits;
    let result = blocking(&app, move |cancel| {
        let mut last = Value::Null;
        let pos = req.position();
        pos.visit(analysis::Analysis {
            request: &req,
            limits,
            every: Duration::MAX,
            cancel,
            emit: |snap| {
                last = snap;
                true
            },
        })?;
        Ok(last)
    })
    .await?;
    Ok(Json(result))
}

async fn analyze_live(
    State(app): State<Shared>,
    Query(q): Query<analysis::LiveQuery>,
) -> Result<Sse<impl tokio_stream::Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let req = analysis::AnalysisRequest::from(q);
    let pos = req.position();
    // A bad position is a plain 400, before the stream starts.
    pos.check()?;
    let limits = app.limits;
    let permit = search_slot(&app).await?;
    let (tx, rx) = mpsc::channel::<Event>(4);
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let cancel = AtomicBool::new(false);
        let sent = pos.visit(analysis::Analysis {
            request: &req,
            limits,
            every: Duration::from_millis(200),
            cancel: &cancel,
            // A failed send means the client has gone: stop searching.
            emit: |snap: Value| {
                let event = Event::default().event("update").data(snap.to_string());
                tx.blocking_send(event).is_ok()
            },
        });
        if let Err(e) = sent {
            let _ = tx.blocking_send(Event::default().event("failed").data(e.to_string()));
        }
    });
    let stream = ReceiverStream::new(rx).map(Ok);
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

async fn mines_state(State(app): State<Shared>, body: Bytes) -> Result<Json<Value>, ApiError> {
    let req: mines::MinesRequest = parse(&body)?;
    let shared = app.clone();
    Ok(Json(
        blocking(&app, move |_| mines::state(&req, shared.mine_net.as_ref())).await?,
    ))
}

#[derive(Deserialize)]
struct RunQuery {
    dir: Option<String>,
}

async fn run_metrics(
    State(app): State<Shared>,
    Query(q): Query<RunQuery>,
) -> Result<Json<Value>, ApiError> {
    let dir = match (q.dir.filter(|d| !d.is_empty()), &app.run) {
        (Some(d), _) => PathBuf::from(d),
        (None, Some(d)) => d.clone(),
        (None, None) => {
            return Err(ApiError::bad(
                "no run directory: give ?dir=DIR, or start the server with --run DIR",
            ))
        }
    };
    Ok(Json(blocking(&app, move |_| runs::metrics(&dir)).await?))
}
