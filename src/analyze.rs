//! `tabula analyze`: seed 000's table — the root's visits and its top children with
//! visits, prior P and Q — for any game and evaluator, as text or JSON.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use serde_json::json;
use tabula_games::registry::{self, GameVisitor};
use tabula_games::Capabilities;
use tabula_search::Mcts;

use crate::evaluators;

/// Run MCTS on a position and show what it found (seed 000's table).
///
/// Example: `tabula analyze mini-go --sims 500` reruns seed 000's experiment (an untrained
/// 3-layer network on an empty 7x7 board); `tabula analyze connect4 --moves 4453` analyses
/// a Connect Four position with the shipped model.
#[derive(Args)]
pub struct AnalyzeArgs {
    /// The game: tictactoe, connect4[:WxH], go[:N], mini-go.
    game: String,
    /// Moves played before the analysed position, separated by spaces or commas
    /// (Connect Four also takes Pons' digit strings such as 4453).
    #[arg(long, default_value = "")]
    moves: String,
    /// Simulations (playouts) of the search.
    #[arg(long, default_value_t = 500, value_parser = crate::input::count(1, 100_000_000))]
    sims: usize,
    #[arg(long, help = evaluators::MODEL_HELP)]
    model: Option<String>,
    /// Children to list.
    #[arg(long, default_value_t = 5)]
    top: usize,
    #[command(flatten)]
    search: evaluators::SearchFlags,
    /// Seed (of the untrained network and of rollouts).
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
}

struct Analyze<'a>(&'a AnalyzeArgs);

impl GameVisitor for Analyze<'_> {
    type Output = Result<()>;

    fn visit<G: Capabilities>(self, mut game: G) -> Result<()> {
        let args = self.0;
        evaluators::play_moves(&mut game, &args.moves)?;
        let search = args.search.settings(&game)?;
        let (mut evaluator, label) =
            evaluators::evaluator(args.model.as_deref(), &game, &search, args.seed)?;
        let config = search.mcts(args.sims, args.seed);
        let result = Mcts::new(game.clone(), config).search(&mut evaluator);
        let best = result.best().map(|m| game.format_move(m));
        let top: Vec<_> = result.children.iter().take(args.top).collect();
        if args.json {
            let children: Vec<_> = top
                .iter()
                .map(|c| {
                    json!({"move": game.format_move(c.mv), "visits": c.visits, "prior": c.prior, "q": c.q})
                })
                .collect();
            let out = json!({
                "game": game.name(),
                "moves": args.moves,
                "to_move": format!("{:?}", game.to_move()),
                "evaluator": label,
                "simulations": result.simulations,
                "c_puct": search.c_puct,
                "fpu_reduction": search.fpu_reduction,
                "root_visits": result.root_visits,
                "value": result.value,
                "best": best,
                "children": children,
                "seconds": result.elapsed.as_secs_f64(),
            });
            println!("{out}");
            return Ok(());
        }
        println!("=== {} — MCTS analysis ===", game.name());
        println!("{game}");
        println!("to move: {:?}   evaluator: {label}", game.to_move());
        println!(
            "MCTS: {} simulations, PUCT c = {}",
            result.simulations, search.c_puct
        );
        println!();
        match &best {
            Some(m) => println!("chosen move: {m}"),
            None => println!("the game is over: no move to choose"),
        }
        println!();
        println!(
            "root visits: {}   value for the side to move: {:+.4}",
            result.root_visits, result.value
        );
        println!("top {} children (by visits):", top.len());
        println!(
            "  {:>8} {:>8} {:>10} {:>10}",
            "move", "visits", "prior P", "Q value"
        );
        for c in top {
            println!(
                "  {:>8} {:>8} {:>10.4} {:>10.4}",
                game.format_move(c.mv),
                c.visits,
                c.prior,
                c.q
            );
        }
        Ok(())
    }
}

pub fn run(args: AnalyzeArgs) -> Result<ExitCode> {
    registry::visit(&args.game, Analyze(&args))??;
    Ok(ExitCode::SUCCESS)
}
