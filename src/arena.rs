//! `tabula arena`: two players, alternating colours, with a 95% interval and an Elo
//! difference.

use std::process::ExitCode;

use anyhow::{bail, Result};
use clap::Args;
use serde_json::json;
use tabula_games::registry::{self, GameVisitor};
use tabula_games::Capabilities;
use tabula_search::agent::{Agent, MctsAgent, NegamaxAgent};
use tabula_search::arena::{play_match, MatchResult, RandomAgent};

use crate::evaluators;

/// Match two players and rate them.
///
/// Players: `random`; `minimax` (exhaustive negamax, small games) or `minimax:D` (searches
/// D moves ahead — the shallow fixed-depth α-β player); `solver` (perfect Connect Four);
/// `mcts` (the shipped model, or untrained) or `mcts:MODEL` where MODEL is a .safetensors
/// file or uniform / rollout / untrained. Example:
/// `tabula arena mcts:models/connect4.safetensors minimax:4 --game connect4 --games 20`.
#[derive(Args)]
pub struct ArenaArgs {
    /// Player A.
    a: String,
    /// Player B.
    b: String,
    /// The game.
    #[arg(long)]
    game: String,
    /// Games (colours alternate; pairs share a random opening).
    #[arg(long, default_value_t = 20)]
    games: usize,
    /// Simulations per move of MCTS players.
    #[arg(long, default_value_t = 200, value_parser = crate::input::count(1, 100_000_000))]
    sims: usize,
    #[command(flatten)]
    search: evaluators::SearchFlags,
    /// Random moves at the start of each pair of games (0: every game from the start).
    #[arg(long, default_value_t = 0)]
    opening_plies: usize,
    /// Seed of the openings and of random players.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

fn agent<G: Capabilities>(
    spec: &str,
    game: &G,
    args: &ArenaArgs,
    seed: u64,
) -> Result<Box<dyn Agent<G>>> {
    let (kind, param) = match spec.split_once(':') {
        Some((k, p)) => (k, Some(p)),
        None => (spec, None),
    };
    Ok(match kind {
        "random" => Box::new(RandomAgent::new(seed)),
        "minimax" => {
            let depth = match param {
                Some(d) => Some(
                    d.parse::<u32>()
                        .map_err(|_| anyhow::anyhow!("bad depth in {spec:?}"))?,
                ),
                None => None,
            };
            if depth.is_none() && !game.exhaustive_search_is_practical() {
                let solver = if game.perfect_agent(1).is_some() {
                    "`solver` or "
                } else {
                    ""
                };
                eprintln!(
                    "note: exhaustive minimax on {} is slow; use {solver}`minimax:D`",
                    game.name()
                );
            }
            Box::new(NegamaxAgent::<G>::new(depth))
        }
        "solver" => game.perfect_agent(64).ok_or_else(|| {
            anyhow::anyhow!("{} has no perfect player; use `minimax[:D]`", game.name())
        })??,
        "mcts" => {
            let search = args.search.settings(game)?;
            let (evaluator, label) = evaluators::evaluator(param, game, &search, seed)?;
            let config = search.mcts(args.sims, seed);
            Box::new(MctsAgent::new(config, evaluator, format!("mcts ({label})")))
        }
        _ => bail!("unknown player {spec:?}: use random, minimax[:D], solver or mcts[:MODEL]"),
    })
}

struct Arena<'a>(&'a ArenaArgs);

impl GameVisitor for Arena<'_> {
    type Output = Result<()>;

    fn visit<G: Capabilities>(self, game: G) -> Result<()> {
        let args = self.0;
        if args.games == 0 {
            bail!("--games must be positive");
        }
        let mut a = agent(&args.a, &game, args, args.seed)?;
        let mut b = agent(&args.b, &game, args, args.seed.wrapping_add(1))?;
        let (na, nb) = (a.name(), b.name());
        let quiet = args.json;
        let r = play_match(
            &game,
            a.as_mut(),
            b.as_mut(),
            args.games,
            args.opening_plies,
            args.seed,
            |r| {
                if !quiet {
                    eprint!(
                        "\r{} games: A {} / draw {} / B {}   ",
                        r.games(),
                        r.wins,
                        r.draws,
                        r.losses
                    );
                }
            },
        );
        if !quiet {
            eprintln!();
        }
        let (lo, hi) = r.interval95();
        let elo = MatchResult::elo(r.score());
        if args.json {
            println!(
                "{}",
                json!({"game": game.name(), "a": args.a, "b": args.b, "games": r.games(), "a_wins": r.wins,
                       "draws": r.draws, "b_wins": r.losses, "score": r.score(), "score_low": lo, "score_high": hi,
                       "elo": elo, "elo_low": MatchResult::elo(lo), "elo_high": MatchResult::elo(hi)})
            );
        } else {
            println!("A = {} [{na}]\nB = {} [{nb}]", args.a, args.b);
            println!(
                "{} games of {}: A wins {}, draws {}, B wins {}",
                r.games(),
                game.name(),
                r.wins,
                r.draws,
                r.losses
            );
            println!(
                "A's score {:.3} (95% interval {:.3}–{:.3}); Elo difference A−B {:+.0} ({:+.0} to {:+.0})",
                r.score(),
                lo,
                hi,
                elo,
                MatchResult::elo(lo),
                MatchResult::elo(hi)
            );
        }
        Ok(())
    }
}

pub fn run(args: ArenaArgs) -> Result<ExitCode> {
    registry::visit(&args.game, Arena(&args))??;
    Ok(ExitCode::SUCCESS)
}
