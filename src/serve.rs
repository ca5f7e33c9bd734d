//! `tabula serve`: the web app (play, analyse, Minesweeper overlays, training curves).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use tabula_serve::{Limits, ServeConfig};

/// Serve the web app: play and analyse every game in a browser, watch the search live,
/// see Minesweeper's mine probabilities, follow a training run's curves.
///
/// Example: `tabula serve --open`, then use the page it opens. It listens on
/// 127.0.0.1 (this machine only) unless `--addr` says otherwise; Ctrl-C stops it.
#[derive(Args)]
pub struct ServeArgs {
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: String,
    /// Open the app in the default browser once it listens.
    #[arg(long)]
    open: bool,
    /// A training run directory the dashboard shows (the page can name another).
    #[arg(long)]
    run: Option<PathBuf>,
    /// The learned mine model for the Minesweeper overlay (default: the shipped
    /// models/mines.safetensors, if present).
    #[arg(long)]
    mine_model: Option<PathBuf>,
    /// Most simulations one search may run.
    #[arg(long, default_value_t = 1_000_000, value_parser = crate::input::count(1, 100_000_000))]
    max_sims: usize,
    /// Most seconds one search may run.
    #[arg(long, default_value_t = 60, value_parser = crate::input::count(1, 3600))]
    max_seconds: usize,
}

pub fn run(args: ServeArgs) -> Result<ExitCode> {
    let mine_model = args
        .mine_model
        .or_else(|| crate::evaluators::shipped_model("mines"));
    let config = ServeConfig {
        run: args.run,
        mine_model,
        limits: Limits {
            max_sims: args.max_sims,
            max_time: Duration::from_secs(args.max_seconds as u64),
            ..Limits::default()
        },
    };
    let open = args.open;
    tabula_serve::run(&config, &args.addr, |addr| {
        let url = format!("http://{addr}/");
        println!("Tabula is serving {url}  (Ctrl-C stops it)");
        if open {
            // The browser runs on its own; a missing opener is only a note.
            if let Err(e) = std::process::Command::new("xdg-open").arg(&url).spawn() {
                eprintln!("note: could not open a browser ({e}); open {url} yourself");
            }
        }
    })?;
    Ok(ExitCode::SUCCESS)
}
