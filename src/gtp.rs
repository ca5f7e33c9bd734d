//! `tabula gtp`: a Go Text Protocol (version 2) engine on standard input and output.
//!
//! Replies follow the spec: `=id result` or `?id message`, each ended by a blank line.
//! A malformed or illegal command is answered with `?` and leaves the engine's state
//! as it was. This file only speaks the protocol: `genmove` asks the library's Go bot
//! (`tabula_search::go_bot`), which owns the clock, the pass and resign policy and the
//! clean-up phase, over the best Go player Tabula has (UCT with heavy playouts and priors,
//! `tabula_search::go_knowledge`).

use std::collections::VecDeque;
use std::fs;
use std::io::{self, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use std::sync::Arc;

use anyhow::Context as _;
use tabula_core::go::patterns::PatternWeights;
use tabula_core::go::playout::{HeavyPolicy, CFG_MAX};
use tabula_core::sgf::{SgfGame, SgfMove};
use tabula_core::{Game, Go, GoRules, Player};
use tabula_search::analysis::AnalysisLimits;
use tabula_search::go_bot::{
    Decision, GoBot, GoPlayer, MctsPlayer, RandomPlayer, ResignPolicy, UctPlayer,
};
use tabula_search::go_knowledge::GoKnowledge;
use tabula_search::time_control::TimeControl;
use tabula_search::uct::RaveSchedule;
use tabula_search::UctConfig;

use crate::gtp_analysis;

/// Run a GTP engine for Go on standard input/output (for GoGui, Sabaki, twogtp, or
/// `tabula match`).
#[derive(Args, Clone)]
pub struct GtpArgs {
    /// Initial board size.
    #[arg(long, default_value_t = 9)]
    size: usize,
    /// Initial komi.
    #[arg(long, default_value_t = 7.5)]
    komi: f32,
    /// The player behind genmove and the analysis commands: `uct` (Monte-Carlo tree
    /// search over playouts, see --playouts), `mcts` (network-guided PUCT, see --model)
    /// or `random` (a random legal move that does not fill its own eyes).
    #[arg(long, default_value = "uct")]
    player: String,
    /// The network of `--player mcts`: a .safetensors file, or `rollout`, `uniform`,
    /// `untrained`. Default: the shipped model for the board size
    /// (models/go9.safetensors for 9x9), and an error on sizes that have none.
    #[arg(long)]
    model: Option<String>,
    /// Seconds per move when no time settings are given.
    #[arg(long, default_value_t = 1.0)]
    move_time: f64,
    /// Simulations per move at most (0: no limit but time).
    #[arg(long, default_value_t = 0)]
    sims: usize,
    /// Resign when the best move's win rate is below this (0 never resigns).
    #[arg(long, default_value_t = 0.05)]
    resign: f64,
    /// Seed of the search.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// RAVE equivalence parameter (0 turns RAVE off).
    #[arg(long, default_value_t = 3000.0, value_parser = crate::input::number(0.0, 1e9))]
    rave: f64,
    /// How RAVE is weighed against a move's own results: `visits` (β = √(k/(3n+k)) by
    /// its visits n) or `samples` (β = r/(r+n+rn/k), also by its RAVE samples r, so
    /// that the priors count until RAVE has seen the move often; Pachi's choice).
    #[arg(long, default_value = "samples", value_parser = ["visits", "samples"])]
    rave_schedule: String,
    /// UCB exploration constant (small: the priors do most of the exploring).
    #[arg(long, default_value_t = 0.1, value_parser = crate::input::number(0.0, 100.0))]
    exploration: f64,
    /// Share of a playout's result given by its margin rather than its winner (UCT
    /// player; 0 to 1, 0: only winning counts): among moves that win equally often,
    /// prefer the ones that win by more (Pachi's `val_scale`).
    #[arg(long, default_value_t = 0.0, value_parser = crate::input::number(0.0, 1.0))]
    score_weight: f64,
    /// The margin in points at which --score-weight's share is full.
    #[arg(long, default_value_t = 20.0, value_parser = crate::input::number(1.0, 1000.0))]
    score_points: f64,
    /// Playouts: `heavy` (answers to ataris, nakade, learned 3x3 patterns, no big
    /// self-ataris) or `light` (uniformly random moves that do not fill own eyes).
    #[arg(long, default_value = "heavy")]
    playouts: String,
    /// Heavy playouts' chances and weights, comma-separated `name=value` (defaults:
    /// capture=0.9,nakade=0.9,atari=0.2,pattern=0.9,self-atari=0.95,global-capture=0,
    /// two-liberty=0,lone-self-atari=0,elsewhere=2): the chance of each step of a
    /// playout move, of rejecting a big (or a lone stone's) self-atari, and the weight
    /// of a move away from the last one against the local 3x3 patterns'.
    #[arg(long, default_value = "")]
    playout_policy: String,
    /// Last good reply with forgetting (UCT player, heavy playouts): playouts try the
    /// reply to the last move that won the last time it was played in this search's
    /// playouts, right after the atari fights (Baier and Drake's LGRF-1).
    #[arg(long)]
    last_good_reply: bool,
    /// No priors for new tree nodes (by default they start from pattern and tactics
    /// knowledge).
    #[arg(long)]
    no_priors: bool,
    /// Prior: virtual wins for a move next to the opponent's last move (UCT player).
    #[arg(long, default_value_t = 0.0, value_parser = crate::input::number(0.0, 1e6))]
    prior_near: f64,
    /// Prior: virtual wins for a move at common-fate-graph distance 1, 2, 3 from the
    /// last move, comma-separated (UCT player; the liberties of the chain just played
    /// on are at 1, a chain counting as one point; Pachi's small-board numbers are
    /// 45,40,15). Default: none.
    #[arg(long, value_delimiter = ',', value_parser = crate::input::number(0.0, 1e6))]
    prior_cfg: Vec<f64>,
    /// Prior: virtual simulations by line in an empty area (UCT player): the first line
    /// counts as that many losses, the second half as many, the third as wins.
    #[arg(long, default_value_t = 0.0, value_parser = crate::input::number(0.0, 1e6))]
    prior_lines: f64,
    /// Prior: virtual wins in proportion to the square root of a move's share of the
    /// position's 3x3 pattern gammas (UCT player; Pachi's pattern prior).
    #[arg(long, default_value_t = 0.0, value_parser = crate::input::number(0.0, 1e6))]
    prior_share: f64,
    /// Prior: virtual simulations at an even result for every move (UCT player).
    #[arg(long, default_value_t = 10.0, value_parser = crate::input::number(0.0, 1e6))]
    prior_even: f64,
    /// Prior: virtual simulations weighted by a move's 3x3 pattern gamma (UCT player).
    #[arg(long, default_value_t = 10.0, value_parser = crate::input::number(0.0, 1e6))]
    prior_pattern: f64,
    /// Search threads (UCT player), sharing one tree: each walks down with a virtual
    /// loss and plays its playout outside the tree's lock.
    #[arg(long, default_value_t = 1, value_parser = crate::input::count(1, 256))]
    threads: usize,
    /// 3x3 pattern weights (`tabula go-patterns` writes them; default: the shipped
    /// crates/tabula-core/data/go-patterns.txt).
    #[arg(long)]
    patterns: Option<std::path::PathBuf>,
    #[command(flatten)]
    mix: crate::evaluators::MixFlags,
    /// Do not read ladders: neither in the heavy playouts (which otherwise do not run
    /// from atari into a ladder that catches) nor in the priors.
    #[arg(long)]
    no_ladders: bool,
    /// Start every search afresh instead of from the subtree the last search left below
    /// the position now on the board (both players reuse it by default).
    #[arg(long)]
    no_tree_reuse: bool,
}

const COMMANDS: &[&str] = &[
    "protocol_version",
    "name",
    "version",
    "known_command",
    "list_commands",
    "quit",
    "boardsize",
    "clear_board",
    "komi",
    "play",
    "genmove",
    "showboard",
    "undo",
    "final_score",
    "final_status_list",
    "fixed_handicap",
    "place_free_handicap",
    "set_free_handicap",
    "loadsgf",
    "printsgf",
    "time_settings",
    "time_left",
    "kgs-genmove_cleanup",
    "stop",
];

/// The playout policy (`heavy` or `light`), priors and pattern weights (a file, or the
/// shipped ones) the options ask for.
pub fn knowledge(
    playouts: &str,
    priors: bool,
    patterns: Option<&std::path::Path>,
) -> Result<GoKnowledge> {
    let weights = match patterns {
        Some(path) => {
            let text =
                fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
            Arc::new(PatternWeights::parse(&text).with_context(|| path.display().to_string())?)
        }
        None => PatternWeights::shipped(),
    };
    let playouts = match playouts {
        "heavy" => Some(HeavyPolicy {
            weights,
            ..HeavyPolicy::default()
        }),
        "light" => None,
        other => anyhow::bail!("--playouts must be heavy or light, not {other:?}"),
    };
    Ok(GoKnowledge {
        playouts,
        priors,
        ..GoKnowledge::default()
    })
}

/// The player `args` ask for, for `game`'s board size.
fn make_player(args: &GtpArgs, game: &Go) -> Result<Box<dyn GoPlayer>> {
    if args.prior_cfg.len() > CFG_MAX as usize {
        anyhow::bail!(
            "--prior-cfg takes at most {CFG_MAX} numbers (distances 1 to {CFG_MAX}), not {}",
            args.prior_cfg.len()
        );
    }
    let knowledge = || {
        knowledge(&args.playouts, !args.no_priors, args.patterns.as_deref())
            .map(|k| {
                GoKnowledge {
                    near: args.prior_near as f32,
                    cfg: std::array::from_fn(|d| {
                        args.prior_cfg.get(d).copied().unwrap_or(0.0) as f32
                    }),
                    lines: args.prior_lines as f32,
                    share: args.prior_share as f32,
                    even: args.prior_even as f32,
                    pattern: args.prior_pattern as f32,
                    ..k
                }
                .with_ladders(!args.no_ladders)
                .with_last_good_reply(args.last_good_reply)
            })
            .and_then(|mut k| {
                match &mut k.playouts {
                    Some(policy) => policy.set_options(&args.playout_policy)?,
                    None if !args.playout_policy.is_empty() || args.last_good_reply => {
                        anyhow::bail!("--playout-policy and --last-good-reply need heavy playouts")
                    }
                    None => {}
                }
                Ok(k)
            })
    };
    let simulations = if args.sims == 0 {
        usize::MAX
    } else {
        args.sims
    };
    Ok(match args.player.as_str() {
        "random" => Box::new(RandomPlayer),
        "mcts" => {
            let spec = match &args.model {
                Some(m) => m.clone(),
                None => crate::evaluators::shipped_model(&game.name())
                    .map(|p| p.display().to_string())
                    .with_context(|| {
                        format!(
                            "no shipped model for {} (models/go{}.safetensors): give --model FILE \
                             (or rollout, uniform, untrained)",
                            game.name(),
                            game.size()
                        )
                    })?,
            };
            let settings = crate::evaluators::SearchFlags::default().settings(game)?;
            let (evaluator, label) =
                crate::evaluators::evaluator(Some(&spec), game, &settings, args.seed)?;
            let (evaluator, label) = args
                .mix
                .mix(evaluator, label, Some(knowledge()?), args.seed);
            let mut player = MctsPlayer::new(evaluator, settings, simulations, knowledge()?, label);
            player.reuse_tree = !args.no_tree_reuse;
            Box::new(player)
        }
        _ => {
            let config = UctConfig {
                exploration: args.exploration,
                rave: args.rave,
                rave_schedule: if args.rave_schedule == "samples" {
                    RaveSchedule::Samples
                } else {
                    RaveSchedule::Visits
                },
                simulations,
                score_weight: args.score_weight,
                score_points: args.score_points,
                ..UctConfig::default()
            };
            let mut player = UctPlayer::new(config, knowledge()?, args.threads);
            player.reuse_tree = !args.no_tree_reuse;
            Box::new(player)
        }
    })
}

/// The engine's state.
pub struct Engine {
    game: Go,
    /// Earlier states, for undo.
    history: Vec<Go>,
    /// Setup and moves since the board was cleared or loaded, for printsgf (size,
    /// komi and rules are the game's, filled in when printed).
    record: SgfGame,
    bot: GoBot<Box<dyn GoPlayer>>,
    /// The options the engine was started with (a new board size builds its player
    /// again: a network is made for one size).
    args: GtpArgs,
}

type Reply = std::result::Result<String, String>;

fn parse_colour(s: &str) -> std::result::Result<Player, String> {
    match s.to_ascii_lowercase().as_str() {
        "b" | "black" => Ok(Player::First),
        "w" | "white" => Ok(Player::Second),
        _ => Err(format!("invalid color {s:?}")),
    }
}

impl Engine {
    /// A fresh engine.
    pub fn new(args: GtpArgs) -> Result<Engine> {
        let game = Go::new(
            args.size,
            GoRules {
                komi: args.komi,
                ..GoRules::default()
            },
        )?;
        let player = make_player(&args, &game)?;
        let resign = ResignPolicy {
            threshold: args.resign,
            min_simulations: 100,
        };
        let time = TimeControl::new(args.move_time)?;
        let bot = GoBot::new(player, time, resign, args.seed);
        Ok(Engine {
            game,
            history: Vec::new(),
            record: SgfGame::default(),
            bot,
            args,
        })
    }

    fn reset(&mut self, size: usize) -> std::result::Result<(), String> {
        let rules = self.game.rules();
        let game = Go::new(size, rules).map_err(|_| "unacceptable size".to_string())?;
        if size != self.game.size() && self.args.player == "mcts" {
            let player =
                make_player(&self.args, &game).map_err(|e| format!("unacceptable size: {e:#}"))?;
            *self.bot.player_mut() = player;
        }
        self.game = game;
        self.history.clear();
        self.record = SgfGame::default();
        self.bot.new_game();
        Ok(())
    }

    fn vertex(&self, s: &str) -> std::result::Result<u16, String> {
        self.game
            .parse_move(s)
            .map_err(|_| format!("invalid vertex {s:?}"))
    }

    fn play_move(&mut self, player: Player, action: u16) -> std::result::Result<(), String> {
        let mut next = self.game.clone();
        // GTP leaves ending the game to the controller: moves after two passes (a
        // clean-up phase) are allowed.
        next.clear_passes();
        next.set_to_move(player);
        if !next.is_legal_action(action) {
            return Err("illegal move".into());
        }
        next.play(action);
        self.history.push(std::mem::replace(&mut self.game, next));
        let point = (action != self.game.pass()).then(|| {
            (
                action as usize / self.game.size(),
                action as usize % self.game.size(),
            )
        });
        self.record.moves.push(SgfMove {
            player,
            point,
            comment: None,
        });
        Ok(())
    }

    fn genmove(&mut self, player: Player, cleanup: bool) -> Reply {
        match self
            .bot
            .genmove(&self.game, player, cleanup)
            .map_err(|e| e.to_string())?
        {
            Decision::Resign => Ok("resign".into()),
            Decision::Play(action) => {
                self.play_move(player, action)?;
                Ok(self.game.format_move(action))
            }
        }
    }

    /// The area score with the stones the bot reads as dead taken off.
    fn final_score(&mut self) -> String {
        Go::score_text(self.bot.without_dead_stones(&self.game).score())
    }

    fn to_sgf(&self) -> SgfGame {
        let rules = self.game.rules();
        SgfGame {
            size: self.game.size(),
            komi: rules.komi,
            rules: Some(rules.sgf_name().into()),
            ..self.record.clone()
        }
    }

    fn place_handicap(
        &mut self,
        points: &[(usize, usize)],
    ) -> std::result::Result<Vec<String>, String> {
        // Handicap comes before the first move: after moves (even passes that left
        // the board empty) the record and undo history would no longer match.
        if !self.game.is_empty_board() || !self.history.is_empty() || !self.record.moves.is_empty()
        {
            return Err("board not empty".into());
        }
        let mut g = self.game.clone();
        let mut names = Vec::new();
        for &(r, c) in points {
            g.place_handicap(r, c)
                .map_err(|_| "bad vertex list".to_string())?;
            names.push(g.format_move((r * g.size() + c) as u16));
        }
        g.set_to_move(Player::Second);
        self.game = g;
        self.record.handicap = points.len();
        self.record.black_setup = points.to_vec();
        Ok(names)
    }

    /// Executes one command; `Ok` and `Err` are the success and failure replies.
    pub fn execute(&mut self, command: &str, args: &[&str]) -> Reply {
        let n_args = |n: usize| {
            if args.len() == n {
                Ok(())
            } else {
                Err(format!("{command} takes {n} argument(s)"))
            }
        };
        match command {
            "protocol_version" => Ok("2".into()),
            "name" => Ok("Tabula".into()),
            "version" => Ok(env!("CARGO_PKG_VERSION").into()),
            "known_command" => {
                n_args(1)?;
                let known = COMMANDS.contains(&args[0]) || gtp_analysis::is_analysis(args[0]);
                Ok(known.to_string())
            }
            "list_commands" => Ok(COMMANDS
                .iter()
                .chain(gtp_analysis::COMMANDS)
                .copied()
                .collect::<Vec<_>>()
                .join("\n")),
            "quit" => Ok(String::new()),
            // analysis ends at the next command anyway; nothing runs in between
            "stop" => Ok(String::new()),
            "boardsize" => {
                n_args(1)?;
                let size: usize = args[0]
                    .parse()
                    .map_err(|_| "boardsize not an integer".to_string())?;
                if !(2..=19).contains(&size) {
                    return Err("unacceptable size".into());
                }
                self.reset(size)?;
                Ok(String::new())
            }
            "clear_board" => {
                let size = self.game.size();
                self.reset(size)?;
                Ok(String::new())
            }
            "komi" => {
                n_args(1)?;
                let komi: f32 = args[0]
                    .parse()
                    .ok()
                    .filter(|k: &f32| k.is_finite() && k.abs() < 1000.0)
                    .ok_or_else(|| "komi not a float".to_string())?;
                self.game.set_komi(komi);
                Ok(String::new())
            }
            "play" => {
                n_args(2)?;
                let player = parse_colour(args[0])?;
                let action = self.vertex(args[1])?;
                self.play_move(player, action)?;
                Ok(String::new())
            }
            "genmove" | "kgs-genmove_cleanup" => {
                n_args(1)?;
                let player = parse_colour(args[0])?;
                self.genmove(player, command == "kgs-genmove_cleanup")
            }
            "showboard" => Ok(format!("\n{}", self.game.to_string().trim_end())),
            "undo" => {
                let previous = self
                    .history
                    .pop()
                    .ok_or_else(|| "cannot undo".to_string())?;
                self.game = previous;
                self.record.moves.pop();
                Ok(String::new())
            }
            "final_score" => Ok(self.final_score()),
            "final_status_list" => {
                n_args(1)?;
                // Dead: what the player's playouts own for the other colour; no seki
                // is told apart (it counts as alive).
                let list = |stones: Vec<u16>| {
                    stones
                        .into_iter()
                        .map(|a| self.game.format_move(a))
                        .collect::<Vec<_>>()
                        .join(" ")
                };
                match args[0] {
                    "alive" => {
                        let dead = self.bot.dead_stones(&self.game);
                        let n = self.game.size();
                        let alive = (0..n * n)
                            .filter(|&a| self.game.stone(a / n, a % n).is_some())
                            .map(|a| a as u16)
                            .filter(|a| !dead.contains(a))
                            .collect();
                        Ok(list(alive))
                    }
                    "dead" => {
                        let dead = self.bot.dead_stones(&self.game);
                        Ok(list(dead))
                    }
                    "seki" => Ok(String::new()),
                    other => Err(format!("unknown status {other:?}")),
                }
            }
            "fixed_handicap" | "place_free_handicap" => {
                n_args(1)?;
                let stones: usize = args[0]
                    .parse()
                    .map_err(|_| "number of stones not an integer".to_string())?;
                let points = Go::fixed_handicap_points(self.game.size(), stones)
                    .map_err(|_| "invalid number of stones".to_string())?;
                Ok(self.place_handicap(&points)?.join(" "))
            }
            "set_free_handicap" => {
                // GTP: at least 2 stones, and at least one point left empty.
                let points = self.game.size() * self.game.size();
                if args.len() < 2 || args.len() >= points {
                    return Err("bad vertex list".into());
                }
                let mut points = Vec::new();
                for v in args {
                    let a = self.vertex(v)?;
                    if a == self.game.pass()
                        || points.contains(&(
                            a as usize / self.game.size(),
                            a as usize % self.game.size(),
                        ))
                    {
                        return Err("bad vertex list".into());
                    }
                    points.push((a as usize / self.game.size(), a as usize % self.game.size()));
                }
                self.place_handicap(&points)?;
                Ok(String::new())
            }
            "loadsgf" => {
                if args.is_empty() || args.len() > 2 {
                    return Err("loadsgf takes a file name and an optional move number".into());
                }
                let text =
                    fs::read_to_string(args[0]).map_err(|_| "cannot load file".to_string())?;
                let mut sgf =
                    SgfGame::parse(&text).map_err(|e| format!("cannot load file: {e}"))?;
                if let Some(n) = args.get(1) {
                    let upto: usize = n
                        .parse()
                        .map_err(|_| "move number not an integer".to_string())?;
                    sgf.truncate(upto.saturating_sub(1));
                }
                let game = sgf.replay().map_err(|e| format!("cannot load file: {e}"))?;
                self.game = game;
                self.history.clear();
                // what the file says of its result no longer holds once play goes on
                sgf.result = None;
                self.record = sgf;
                Ok(String::new())
            }
            "printsgf" => Ok(format!("\n{}", self.to_sgf().to_sgf().trim_end())),
            "time_settings" => {
                n_args(3)?;
                let main: f64 = args[0].parse().map_err(|_| "syntax error".to_string())?;
                let byo: f64 = args[1].parse().map_err(|_| "syntax error".to_string())?;
                let stones: u32 = args[2].parse().map_err(|_| "syntax error".to_string())?;
                self.bot
                    .time_mut()
                    .set_settings(main, byo, stones)
                    .map_err(|e| e.to_string())?;
                Ok(String::new())
            }
            "time_left" => {
                n_args(3)?;
                let player = parse_colour(args[0])?;
                let left: f64 = args[1].parse().map_err(|_| "syntax error".to_string())?;
                let stones: u32 = args[2].parse().map_err(|_| "syntax error".to_string())?;
                self.bot
                    .time_mut()
                    .set_left(player, left, stones)
                    .map_err(|e| e.to_string())?;
                Ok(String::new())
            }
            _ => Err("unknown command".into()),
        }
    }
}

/// Splits a GTP line into (id, command, arguments) after the spec's preprocessing:
/// control characters dropped, tabs to spaces, comments removed. `None` for an empty line.
pub fn parse_line(line: &str) -> Option<(Option<u32>, String, Vec<String>)> {
    let cleaned: String = line
        .split('#')
        .next()
        .unwrap_or("")
        .chars()
        .filter_map(|c| match c {
            '\t' => Some(' '),
            c if c.is_control() => None,
            c => Some(c),
        })
        .collect();
    let mut words = cleaned.split_whitespace();
    let first = words.next()?;
    let (id, command) = match first.parse::<u32>() {
        Ok(id) => (Some(id), words.next().unwrap_or("").to_string()),
        Err(_) => (None, first.to_string()),
    };
    Some((id, command, words.map(str::to_string).collect()))
}

pub fn run(args: GtpArgs) -> Result<ExitCode> {
    if !(2..=19).contains(&args.size) {
        anyhow::bail!("--size must be 2 to 19");
    }
    if !["uct", "mcts", "random"].contains(&args.player.as_str()) {
        anyhow::bail!("--player must be uct, mcts or random");
    }
    if args.model.is_some() && args.player != "mcts" {
        anyhow::bail!("--model is for --player mcts");
    }
    if !(0.0..1.0).contains(&args.resign) {
        anyhow::bail!("--resign must be a win rate from 0 (never) to below 1");
    }
    let mut engine = Engine::new(args)?;
    let input = Input::spawn();
    let mut out = io::stdout().lock();
    while let Some(line) = input.next() {
        let line = match line? {
            (_, Some(line)) => line,
            (n, None) => {
                // Not UTF-8: no id can be read from it, so the error reply has none.
                write!(out, "? line {n} is not UTF-8\n\n")?;
                out.flush()?;
                continue;
            }
        };
        let Some((id, command, words)) = parse_line(&line) else {
            continue;
        };
        let id_text = id.map(|i| i.to_string()).unwrap_or_default();
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        if gtp_analysis::is_analysis(&command) {
            engine.stream(&command, &words, &id_text, &input, &mut out)?;
            continue;
        }
        let reply = if command.is_empty() {
            Err("empty command".to_string())
        } else {
            engine.execute(&command, &words)
        };
        match reply {
            Ok(text) if text.is_empty() => write!(out, "={id_text}\n\n")?,
            Ok(text) => write!(out, "={id_text} {text}\n\n")?,
            Err(msg) => write!(out, "?{id_text} {msg}\n\n")?,
        }
        out.flush()?;
        if command == "quit" {
            break;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Standard input read on a thread of its own, so that a running analysis ends as soon
/// as the next line arrives (GTP's analysis commands run until then).
pub struct Input {
    lines: mpsc::Receiver<io::Result<crate::input::Line>>,
    /// Set whenever a line arrives (or the input ends).
    arrived: Arc<AtomicBool>,
    /// Held by the reader while it sends a line and sets `arrived`, and by [`Input::arm`]
    /// while it clears and checks: so that the flag of a line already taken is never
    /// set after an analysis began, nor that of a new line lost.
    handoff: Arc<std::sync::Mutex<()>>,
    /// Lines taken off the channel while checking for one.
    waiting: std::cell::RefCell<VecDeque<io::Result<crate::input::Line>>>,
}

impl Input {
    fn spawn() -> Input {
        let (tx, rx) = mpsc::channel();
        let arrived = Arc::new(AtomicBool::new(false));
        let handoff = Arc::new(std::sync::Mutex::new(()));
        let (flag, lock) = (arrived.clone(), handoff.clone());
        std::thread::spawn(move || {
            for line in crate::input::lines(io::stdin().lock()) {
                let failed = line.is_err();
                let _held = lock.lock();
                let sent = tx.send(line).is_ok();
                flag.store(true, Ordering::SeqCst);
                if !sent || failed {
                    return;
                }
            }
            let _held = lock.lock();
            flag.store(true, Ordering::SeqCst);
        });
        Input {
            lines: rx,
            arrived,
            handoff,
            waiting: Default::default(),
        }
    }

    /// The next line (`None`: the input has ended).
    fn next(&self) -> Option<io::Result<crate::input::Line>> {
        if let Some(line) = self.waiting.borrow_mut().pop_front() {
            return Some(line);
        }
        self.lines.recv().ok()
    }

    /// Arms the flag for a new analysis: clears it, and sets it again at once if a line
    /// (or the end of the input) is already waiting.
    fn arm(&self) -> &AtomicBool {
        let _held = self.handoff.lock();
        self.arrived.store(false, Ordering::SeqCst);
        let mut waiting = self.waiting.borrow_mut();
        loop {
            match self.lines.try_recv() {
                Ok(line) => waiting.push_back(line),
                Err(mpsc::TryRecvError::Empty) => break,
                Err(mpsc::TryRecvError::Disconnected) => {
                    self.arrived.store(true, Ordering::SeqCst);
                    break;
                }
            }
        }
        if !waiting.is_empty() {
            self.arrived.store(true, Ordering::SeqCst);
        }
        &self.arrived
    }
}

impl Engine {
    /// Runs an analysis command, writing its reply as it goes: `=id`, one `info` line
    /// per interval, and the blank line that ends a GTP reply when the next command (or
    /// an empty line) arrives — or, for the `…genmove_analyze` forms, `play MOVE` once
    /// the move is chosen. A malformed command gets a `?` reply and changes nothing.
    fn stream(
        &mut self,
        command: &str,
        args: &[&str],
        id: &str,
        input: &Input,
        out: &mut impl Write,
    ) -> io::Result<()> {
        let req = match gtp_analysis::parse(command, args) {
            Ok(r) => r,
            Err(msg) => {
                write!(out, "?{id} {msg}\n\n")?;
                return out.flush();
            }
        };
        let player = req.player.unwrap_or(self.game.to_move());
        let mut game = self.game.clone();
        game.set_to_move(player);
        if req.genmove {
            return self.stream_genmove(&req, player, id, out);
        }
        writeln!(out, "={id}")?;
        out.flush()?;
        let ownership = if req.ownership {
            self.bot.ownership(&self.game, player)
        } else {
            None
        };
        let limits = AnalysisLimits {
            max_visits: Some(ANALYSIS_MAX_VISITS),
            max_time: None,
            report_every: req.interval,
            pv_length: PV_LENGTH,
        };
        let mut failed = None;
        let stop = input.arm();
        let last = self
            .bot
            .analyze(&self.game, player, &limits, stop, &mut |a| {
                if failed.is_none() {
                    let line =
                        gtp_analysis::info_line(&req, &game, player, a, ownership.as_deref());
                    if let Err(e) = writeln!(out, "{line}").and_then(|_| out.flush()) {
                        failed = Some(e);
                    }
                }
            });
        if let Some(e) = failed {
            return Err(e);
        }
        // A search that spent its visit budget (--sims) shows where it ended, and the
        // reply still ends only when the next command comes, as GUIs expect.
        if !stop.load(Ordering::SeqCst) {
            let line = gtp_analysis::info_line(&req, &game, player, &last, ownership.as_deref());
            writeln!(out, "{line}")?;
            out.flush()?;
        }
        while !stop.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(5));
        }
        writeln!(out)?;
        out.flush()
    }

    fn stream_genmove(
        &mut self,
        req: &gtp_analysis::AnalyzeRequest,
        player: Player,
        id: &str,
        out: &mut impl Write,
    ) -> io::Result<()> {
        let game = {
            let mut g = self.game.clone();
            g.set_to_move(player);
            g
        };
        let every = req.interval.unwrap_or(Duration::MAX);
        let mut started = false;
        let mut failed = None;
        let decision = self
            .bot
            .genmove_analyze(&self.game, player, every, PV_LENGTH, &mut |a| {
                if failed.is_some() {
                    return;
                }
                let head = if started {
                    String::new()
                } else {
                    format!("={id}\n")
                };
                started = true;
                let line = gtp_analysis::info_line(req, &game, player, a, None);
                if let Err(e) = writeln!(out, "{head}{line}").and_then(|_| out.flush()) {
                    failed = Some(e);
                }
            });
        if let Some(e) = failed {
            return Err(e);
        }
        let head = if started {
            String::new()
        } else {
            format!("={id}\n")
        };
        match decision {
            Ok(Decision::Resign) => write!(out, "{head}play resign\n\n")?,
            Ok(Decision::Play(action)) => match self.play_move(player, action) {
                Ok(()) => write!(out, "{head}play {}\n\n", self.game.format_move(action))?,
                Err(msg) if !started => write!(out, "?{id} {msg}\n\n")?,
                // The bot only returns legal moves; should one not be, the reply
                // already begun still ends as a reply must.
                Err(_) => writeln!(out)?,
            },
            Err(e) if !started => write!(out, "?{id} {e}\n\n")?,
            Err(_) => writeln!(out)?,
        }
        out.flush()
    }
}

/// The longest principal variation an analysis line shows.
const PV_LENGTH: usize = 15;

/// Visits an analysis stops at (or at `--sims`, if lower): the trees keep every node,
/// about 6 KB per UCT visit on 9x9, so an analysis left running is bounded (≈ 0.6 GB).
const ANALYSIS_MAX_VISITS: u64 = 100_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preprocessing() {
        assert_eq!(parse_line("  # only a comment"), None);
        assert_eq!(parse_line(""), None);
        let (id, cmd, args) = parse_line("12 play\tb D4 # c").unwrap();
        assert_eq!(
            (id, cmd.as_str(), args),
            (Some(12), "play", vec!["b".to_string(), "D4".to_string()])
        );
        let (id, cmd, _) = parse_line("name\r").unwrap();
        assert_eq!((id, cmd.as_str()), (None, "name"));
    }

    mod fuzz {
        use super::*;
        use proptest::prelude::*;

        fn vertex() -> impl Strategy<Value = String> {
            prop_oneof![
                8 => "[A-F][1-6]",
                1 => Just("pass".to_string()),
                1 => "[A-HJ-Ta-z][0-9]{1,2}",
            ]
        }

        fn colour() -> impl Strategy<Value = String> {
            prop_oneof![
                8 => prop_oneof![Just("b"), Just("w"), Just("black"), Just("WHITE")],
                1 => Just("x"),
            ]
            .prop_map(String::from)
        }

        fn number() -> impl Strategy<Value = String> {
            prop_oneof![
                Just("0"),
                Just("1"),
                Just("2"),
                Just("3"),
                Just("4"),
                Just("5"),
                Just("7"),
                Just("9"),
                Just("19"),
                Just("25"),
                Just("-1"),
                Just("nan"),
                Just("inf"),
                Just("1e30"),
                Just("3.5"),
                Just("99999999999"),
            ]
            .prop_map(String::from)
        }

        fn word() -> impl Strategy<Value = String> {
            prop_oneof![vertex(), colour(), number(), "\\PC{0,4}"]
        }

        /// Mostly well-formed commands, with some of every kind of damage.
        fn line() -> impl Strategy<Value = String> {
            let command = prop_oneof![
                12 => (colour(), vertex()).prop_map(|(c, v)| format!("play {c} {v}")),
                4 => colour().prop_map(|c| format!("genmove {c}")),
                1 => colour().prop_map(|c| format!("kgs-genmove_cleanup {c}")),
                3 => Just("undo".to_string()),
                1 => number().prop_map(|n| format!("boardsize {n}")),
                1 => Just("clear_board".to_string()),
                1 => number().prop_map(|n| format!("komi {n}")),
                1 => number().prop_map(|n| format!("fixed_handicap {n}")),
                1 => number().prop_map(|n| format!("place_free_handicap {n}")),
                1 => proptest::collection::vec(vertex(), 0..6)
                    .prop_map(|v| format!("set_free_handicap {}", v.join(" "))),
                1 => (prop_oneof![Just("tests/gtp/game.sgf"), Just("tests/gtp/setup.sgf"), Just("missing.sgf")], proptest::option::of(number()))
                    .prop_map(|(f, n)| format!("loadsgf {f} {}", n.unwrap_or_default())),
                1 => Just("printsgf".to_string()),
                1 => Just("final_score".to_string()),
                1 => prop_oneof![Just("dead"), Just("alive"), Just("seki"), Just("x")]
                    .prop_map(|w| format!("final_status_list {w}")),
                1 => (number(), number(), number()).prop_map(|(a, b, c)| format!("time_settings {a} {b} {c}")),
                1 => (colour(), number(), number()).prop_map(|(p, a, b)| format!("time_left {p} {a} {b}")),
                1 => Just("showboard".to_string()),
                2 => ("[a-z_]{1,12}", proptest::collection::vec(word(), 0..4))
                    .prop_map(|(c, w)| format!("{c} {}", w.join(" "))),
            ];
            (
                prop_oneof![
                    Just(String::new()),
                    (0u32..100).prop_map(|i| format!("{i} "))
                ],
                command,
            )
                .prop_map(|(id, c)| format!("{id}{c}"))
        }

        fn fresh() -> Engine {
            Engine::new(GtpArgs {
                size: 5,
                komi: 7.5,
                player: "random".into(),
                move_time: 0.001,
                sims: 0,
                resign: 0.0,
                seed: 1,
                rave: 1000.0,
                rave_schedule: "visits".into(),
                exploration: 0.25,
                score_weight: 0.0,
                score_points: 20.0,
                playouts: "light".into(),
                playout_policy: String::new(),
                last_good_reply: false,
                model: None,
                no_priors: true,
                prior_near: 0.0,
                prior_cfg: Vec::new(),
                prior_lines: 0.0,
                prior_share: 0.0,
                prior_even: 10.0,
                prior_pattern: 10.0,
                patterns: None,
                mix: crate::evaluators::MixFlags {
                    playout_mix: 0.0,
                    mix_playouts: 1,
                },
                no_tree_reuse: false,
                no_ladders: false,
                threads: 1,
            })
            .unwrap()
        }

        /// What a failed command must leave unchanged.
        fn snapshot(e: &Engine) -> (String, usize, Player, f32) {
            (
                e.game.to_string(),
                e.record.moves.len(),
                e.game.to_move(),
                e.game.rules().komi,
            )
        }

        // Fuzzing (see `scripts/fuzz.sh`): a stream of GTP commands, well-formed or not,
        // is answered line by line without a panic; a `?` reply changes nothing; the
        // record printsgf writes always replays to the board shown.
        proptest! {
            #[test]
            fn fuzz_gtp_stream(lines in proptest::collection::vec(line(), 1..40)) {
                let mut engine = fresh();
                for line in &lines {
                    let Some((_, command, words)) = parse_line(line) else { continue };
                    let words: Vec<&str> = words.iter().map(String::as_str).collect();
                    let before = snapshot(&engine);
                    if engine.execute(&command, &words).is_err() {
                        prop_assert_eq!(snapshot(&engine), before, "{}", line);
                    }
                    let sgf = engine.to_sgf();
                    let replayed = sgf.replay();
                    prop_assert!(replayed.is_ok(), "{}: {:?}\n{}", line, replayed.err(), sgf.to_sgf());
                    if let Ok(board) = replayed {
                        prop_assert_eq!(board.to_string(), engine.game.to_string(), "{}", sgf.to_sgf());
                    }
                }
            }

            #[test]
            fn fuzz_gtp_line_preprocessing(line in "\\PC{0,40}|[0-9 #\\t\\x00-\\x1f]{0,20}") {
                if let Some((_, command, words)) = parse_line(&line) {
                    prop_assert!(!command.contains(char::is_whitespace));
                    prop_assert!(words.iter().all(|w| !w.is_empty() && !w.contains(char::is_control)));
                }
            }
        }
    }
}
