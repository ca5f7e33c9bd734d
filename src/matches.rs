//! `tabula match`: Go games between two GTP engines, refereed by Tabula's own rules.
//!
//! Colours alternate. The referee checks every move (an illegal move loses the game),
//! and after two passes asks both engines to clean up (`kgs-genmove_cleanup` where the
//! engine knows it) until dead stones are captured and both pass again; the final
//! position is scored by Tromp-Taylor area scoring and, where the engine offers
//! `final_score`, compared with the engine's own count. Every game is written as SGF.
//!
//! An opponent that crashes or falls silent voids the game it was playing (written as
//! `RE[Void]`, left out of the win rate) and is started afresh for the next one: a
//! long match against GnuGo should not die with it. The engine under test gets no
//! such grace: its failure ends the match with an error.

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitCode, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use tabula_core::sgf::{SgfGame, SgfMove};
use tabula_core::{Game, Go, GoRules, Player};

use tabula_search::stats::wilson95;

/// Play Go matches between two GTP engines (by default `tabula gtp` against another).
#[derive(Args)]
pub struct MatchArgs {
    /// The opponent's command line, e.g. "/usr/games/gnugo --mode gtp --level 1 --chinese-rules".
    #[arg(long)]
    opponent: String,
    /// The engine under test (default: this program's `gtp` with --move-time 1).
    #[arg(long)]
    engine: Option<String>,
    /// Number of games (colours alternate; the engine under test is Black in game 1).
    #[arg(long, default_value_t = 2, value_parser = crate::input::count(1, 1_000_000))]
    games: usize,
    /// Board size.
    #[arg(long, default_value_t = 9)]
    size: usize,
    /// Komi.
    #[arg(long, default_value_t = 7.5)]
    komi: f32,
    /// Folder for the SGF files and summary.json.
    #[arg(long, default_value = "runs/match")]
    out: PathBuf,
    /// Engines that know the GTP command `set_random_seed` (GnuGo does) are given the
    /// seed `--seed` + the game's number before each game: each game draws on a seed
    /// of its own, whatever the games before it did.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Skip the clean-up phase after both engines pass.
    #[arg(long)]
    no_cleanup: bool,
    /// Seconds to wait for any one reply of an engine before giving up on it (and
    /// killing it): a hung engine ends the match with an error instead of hanging it.
    #[arg(long, default_value_t = 300.0, value_parser = crate::input::seconds(0.001, 86_400.0))]
    reply_timeout: f64,
}

/// A GTP engine in a child process. Its output is read by a thread of its own, so that
/// every wait for a reply has a deadline.
struct Engine {
    name: String,
    /// The command line it was started with (to start it again).
    command: String,
    /// Set once it crashed, fell silent or spoke something other than GTP.
    broken: bool,
    child: Child,
    stdin: ChildStdin,
    /// Lines of the engine's output (`None` once it closed it or failed).
    lines: Receiver<Option<String>>,
    timeout: Duration,
    think: Duration,
    moves: u32,
    cleanup: bool,
    /// It knows `set_random_seed`.
    seeds: bool,
}

impl Engine {
    fn start(command: &str, timeout: Duration) -> Result<Engine> {
        let mut shell = Command::new("sh");
        shell
            .arg("-c")
            .arg(command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        // Its own process group, so that killing it also kills what the shell started.
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut shell, 0);
        let mut child = shell
            .spawn()
            .with_context(|| format!("starting {command:?}"))?;
        let stdin = child.stdin.take().ok_or_else(|| anyhow!("no stdin"))?;
        let stdout = BufReader::new(child.stdout.take().ok_or_else(|| anyhow!("no stdout"))?);
        let (tx, lines) = mpsc::channel();
        let mut stdout = stdout;
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match stdout.read_until(b'\n', &mut buf) {
                    Ok(n) if n > 0 => {
                        let line = String::from_utf8_lossy(&buf);
                        let line = line.trim_end_matches(['\r', '\n']).to_string();
                        if tx.send(Some(line)).is_err() {
                            return;
                        }
                    }
                    _ => break,
                }
            }
            let _ = tx.send(None);
        });
        let mut e = Engine {
            name: command.to_string(),
            command: command.to_string(),
            broken: false,
            child,
            stdin,
            lines,
            timeout,
            think: Duration::ZERO,
            moves: 0,
            cleanup: false,
            seeds: false,
        };
        let name = match e.send("name") {
            Ok(reply) => reply.map_err(|m| anyhow!("{command}: name failed: {m}"))?,
            Err(err) => {
                return Err(e
                    .exit_reason()
                    .map_or(err, |why| anyhow!("{command}: {why}")))
            }
        };
        let version = e.send("version")?.unwrap_or_default();
        e.name = format!("{name} {version}").trim().to_string();
        e.cleanup = e
            .send("known_command kgs-genmove_cleanup")?
            .is_ok_and(|r| r == "true");
        e.seeds = e
            .send("known_command set_random_seed")?
            .is_ok_and(|r| r == "true");
        Ok(e)
    }

    /// Sends a command; the outer error is a broken or silent engine, the inner one a
    /// `?` reply.
    fn send(&mut self, command: &str) -> Result<std::result::Result<String, String>> {
        let reply = self.exchange(command);
        self.broken |= reply.is_err();
        reply
    }

    fn exchange(&mut self, command: &str) -> Result<std::result::Result<String, String>> {
        writeln!(self.stdin, "{command}").with_context(|| format!("{}: write", self.name))?;
        self.stdin.flush()?;
        let deadline = Instant::now() + self.timeout;
        let mut reply = String::new();
        loop {
            let wait = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(wait) {
                Ok(Some(line)) => line,
                Ok(None) | Err(RecvTimeoutError::Disconnected) => {
                    bail!("{}: engine closed its output after {command:?}", self.name)
                }
                Err(RecvTimeoutError::Timeout) => bail!(
                    "{}: no reply to {command:?} within {:.1} s (see --reply-timeout)",
                    self.name,
                    self.timeout.as_secs_f64()
                ),
            };
            if line.is_empty() {
                if reply.is_empty() {
                    continue; // stray blank line before the reply
                }
                break;
            }
            if reply.is_empty() && !line.starts_with(['=', '?']) {
                bail!(
                    "{}: {line:?} is not a GTP reply (to {command:?})",
                    self.name
                );
            }
            if !reply.is_empty() {
                reply.push('\n');
            }
            reply.push_str(&line);
        }
        let (status, rest) = reply.split_at(1);
        let text = rest
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .trim()
            .to_string();
        Ok(if status == "=" { Ok(text) } else { Err(text) })
    }

    /// Why the engine is gone, if it exited within a second: the shell answers 127
    /// for a program it cannot find and 126 for one it cannot run.
    fn exit_reason(&mut self) -> Option<String> {
        for _ in 0..100 {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(match status.code() {
                    Some(127) => "could not start: command not found (exit status 127)".into(),
                    Some(126) => "could not start: not executable (exit status 126)".into(),
                    _ => format!("exited before answering ({status})"),
                });
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        None
    }

    fn must(&mut self, command: &str) -> Result<String> {
        self.send(command)?
            .map_err(|m| anyhow!("{}: {command:?} failed: {m}", self.name))
    }
}

impl Drop for Engine {
    /// Asks the engine to quit, and kills it (with everything it started) if it has
    /// not within two seconds: a broken engine must not hang the match runner.
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        for _ in 0..200 {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        #[cfg(unix)]
        {
            // the group the engine leads (see `start`); `kill` is POSIX
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", self.child.id())])
                .stderr(Stdio::null())
                .status();
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How one game ended.
struct GameResult {
    winner: Option<Player>,
    reason: String,
    score: Option<f32>,
    engine_score: Option<String>,
}

fn colour(p: Player) -> &'static str {
    match p {
        Player::First => "b",
        Player::Second => "w",
    }
}

fn play_game(
    black: &mut Engine,
    white: &mut Engine,
    size: usize,
    komi: f32,
    cleanup: bool,
    seed: u64,
    record: &mut Vec<SgfMove>,
) -> Result<GameResult> {
    let mut referee = Go::new(
        size,
        GoRules {
            komi,
            ..GoRules::default()
        },
    )?;
    for e in [&mut *black, &mut *white] {
        e.must(&format!("boardsize {size}"))?;
        e.must("clear_board")?;
        e.must(&format!("komi {komi}"))?;
        if e.seeds {
            e.must(&format!("set_random_seed {seed}"))?;
        }
    }
    let mut cleaning = false;
    let limit = 2 * size * size + 40;
    while record.len() < limit * 2 {
        let player = referee.to_move();
        let (mover, other) = if player == Player::First {
            (&mut *black, &mut *white)
        } else {
            (&mut *white, &mut *black)
        };
        let command = if cleaning && mover.cleanup {
            "kgs-genmove_cleanup"
        } else {
            "genmove"
        };
        let start = Instant::now();
        let reply = mover.must(&format!("{command} {}", colour(player)))?;
        mover.think += start.elapsed();
        mover.moves += 1;
        if reply.eq_ignore_ascii_case("resign") {
            return Ok(GameResult {
                winner: Some(player.other()),
                reason: "resignation".into(),
                score: None,
                engine_score: None,
            });
        }
        let action = match referee.parse_move(&reply) {
            Ok(a) if referee.is_legal_action(a) => a,
            _ => {
                return Ok(GameResult {
                    winner: Some(player.other()),
                    reason: format!("illegal move {reply:?} by {}", mover.name),
                    score: None,
                    engine_score: None,
                })
            }
        };
        other.must(&format!(
            "play {} {}",
            colour(player),
            referee.format_move(action)
        ))?;
        referee.play(action);
        let point =
            (action != referee.pass()).then(|| (action as usize / size, action as usize % size));
        record.push(SgfMove {
            player,
            point,
            comment: None,
        });
        if referee.consecutive_passes() >= 2 || referee.is_terminal() {
            if cleanup && !cleaning && referee.consecutive_passes() >= 2 {
                // both passed: go on under clean-up until they pass again
                cleaning = true;
                referee.clear_passes();
                continue;
            }
            break;
        }
    }
    let score = referee.score();
    let winner = if score > 0.0 {
        Some(Player::First)
    } else if score < 0.0 {
        Some(Player::Second)
    } else {
        None
    };
    Ok(GameResult {
        winner,
        reason: "score".into(),
        score: Some(score),
        engine_score: None,
    })
}

pub fn run(args: MatchArgs) -> Result<ExitCode> {
    if !(2..=19).contains(&args.size) {
        bail!("--size must be 2 to 19");
    }
    let own = std::env::current_exe().context("finding this program")?;
    let engine_cmd = args
        .engine
        .clone()
        .unwrap_or_else(|| format!("{} gtp --move-time 1", own.display()));
    for name in ["summary.json", "game-001.sgf"] {
        if args.out.join(name).exists() {
            bail!(
                "{} holds an earlier match ({name}); choose another --out or remove it",
                args.out.display()
            );
        }
    }
    fs::create_dir_all(&args.out).with_context(|| format!("creating {}", args.out.display()))?;
    let timeout = Duration::from_secs_f64(args.reply_timeout);
    let mut ours = Engine::start(&engine_cmd, timeout)?;
    let mut theirs = Engine::start(&args.opponent, timeout)?;
    let (mut wins, mut losses, mut draws, mut voids, mut agree, mut compared) =
        (0usize, 0usize, 0usize, 0usize, 0usize, 0usize);
    for game in 0..args.games {
        let ours_black = game % 2 == 0;
        let mut record = Vec::new();
        let played = if ours_black {
            play_game(
                &mut ours,
                &mut theirs,
                args.size,
                args.komi,
                !args.no_cleanup,
                args.seed.wrapping_add(game as u64),
                &mut record,
            )
        } else {
            play_game(
                &mut theirs,
                &mut ours,
                args.size,
                args.komi,
                !args.no_cleanup,
                args.seed.wrapping_add(game as u64),
                &mut record,
            )
        };
        let mut result = match played {
            Ok(result) => result,
            // the opponent failed, not the engine under test: no result
            Err(err) if theirs.broken && !ours.broken => GameResult {
                winner: None,
                reason: format!("void, the opponent failed: {err:#}"),
                score: None,
                engine_score: None,
            },
            Err(err) => return Err(err),
        };
        let void = theirs.broken;
        if result.score.is_some() && !void {
            result.engine_score = theirs.send("final_score").ok().and_then(Result::ok);
        }
        // broken now also after a failed `final_score`, whose game still counts
        if theirs.broken {
            tracing::warn!("{}: started afresh after game {}", theirs.name, game + 1);
            let mut fresh = Engine::start(&theirs.command.clone(), timeout)?;
            // its thinking time so far still counts in the match's time per move
            fresh.think = theirs.think;
            fresh.moves = theirs.moves;
            theirs = fresh;
        }
        let our_colour = if ours_black {
            Player::First
        } else {
            Player::Second
        };
        match result.winner {
            _ if void => voids += 1,
            Some(p) if p == our_colour => wins += 1,
            Some(_) => losses += 1,
            None => draws += 1,
        }
        let re = match (result.winner, result.score, result.reason.as_str()) {
            _ if void => "Void".into(),
            (_, Some(s), _) => Go::score_text(s),
            (Some(Player::First), None, "resignation") => "B+R".into(),
            (Some(Player::Second), None, "resignation") => "W+R".into(),
            (Some(Player::First), None, _) => "B+F".into(),
            (Some(Player::Second), None, _) => "W+F".into(),
            (None, None, _) => "Void".into(),
        };
        if let (Some(s), Some(e)) = (result.score, &result.engine_score) {
            compared += 1;
            // by value: GnuGo writes an integer score as "W+6.0", the referee "W+6"
            if score_value(e).is_some_and(|v| (v - s).abs() < 1e-3) {
                agree += 1;
            }
        }
        let (pb, pw) = if ours_black {
            (&ours.name, &theirs.name)
        } else {
            (&theirs.name, &ours.name)
        };
        let sgf = SgfGame {
            size: args.size,
            komi: args.komi,
            rules: Some(GoRules::default().sgf_name().into()),
            moves: record,
            result: Some(re.clone()),
            comment: Some(format!(
                "tabula match game {}: {}; referee {}; {} says {}",
                game + 1,
                result.reason,
                result.score.map_or("-".into(), Go::score_text),
                theirs.name,
                result.engine_score.clone().unwrap_or_else(|| "-".into())
            )),
            black_name: Some(pb.clone()),
            white_name: Some(pw.clone()),
            ..SgfGame::default()
        };
        let path = args.out.join(format!("game-{:03}.sgf", game + 1));
        fs::write(&path, sgf.to_sgf()).with_context(|| format!("writing {}", path.display()))?;
        println!(
            "game {:>3}: engine as {}  {re:<8} ({}; opponent's count {})",
            game + 1,
            if ours_black { "Black" } else { "White" },
            result.reason,
            result.engine_score.unwrap_or_else(|| "-".into())
        );
    }
    let n = wins + losses + draws;
    let (lo, hi) = wilson95(wins as f64, n);
    let avg = |e: &Engine| e.think.as_secs_f64() / f64::from(e.moves.max(1));
    println!("engine:    {}", ours.name);
    println!("opponent:  {}", theirs.name);
    println!("result:    {wins} wins, {losses} losses, {draws} draws of {n}");
    println!(
        "win rate:  {:.1}% (95% CI {:.1}% - {:.1}%)",
        100.0 * wins as f64 / n.max(1) as f64,
        lo * 100.0,
        hi * 100.0
    );
    println!(
        "time/move: engine {:.3} s, opponent {:.3} s",
        avg(&ours),
        avg(&theirs)
    );
    println!("scoring:   referee and opponent agree on {agree} of {compared} scored games");
    if voids > 0 {
        println!("void:      {voids} games (the opponent failed; not counted above)");
    }
    let summary = format!(
        "{{\"engine\":{:?},\"opponent\":{:?},\"size\":{},\"komi\":{},\"games\":{n},\"wins\":{wins},\"losses\":{losses},\"draws\":{draws},\"void\":{voids},\"win_rate\":{:.4},\"ci_low\":{lo:.4},\"ci_high\":{hi:.4},\"engine_s_per_move\":{:.4},\"opponent_s_per_move\":{:.4},\"scores_compared\":{compared},\"scores_agree\":{agree}}}\n",
        ours.name,
        theirs.name,
        args.size,
        args.komi,
        wins as f64 / n.max(1) as f64,
        avg(&ours),
        avg(&theirs)
    );
    fs::write(args.out.join("summary.json"), summary)?;
    Ok(ExitCode::SUCCESS)
}

/// The score a GTP `final_score` reply states, for Black (`B+3.5` → 3.5, `W+6.0` → −6,
/// `0` → 0); `None` for anything else (a resignation, a malformed reply).
fn score_value(text: &str) -> Option<f32> {
    let t = text.trim();
    if t == "0" {
        return Some(0.0);
    }
    let (sign, rest) = match t.get(..2) {
        Some("B+") | Some("b+") => (1.0, &t[2..]),
        Some("W+") | Some("w+") => (-1.0, &t[2..]),
        _ => return None,
    };
    rest.parse::<f32>()
        .ok()
        .filter(|v| v.is_finite())
        .map(|v| sign * v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_compare_by_value() {
        assert_eq!(score_value("W+6.0"), Some(-6.0));
        assert_eq!(score_value("W+6.0"), score_value(&Go::score_text(-6.0)));
        assert_eq!(score_value("B+2.5"), Some(2.5));
        assert_eq!(score_value("0"), Some(0.0));
        for bad in ["B+R", "W+", "", "resign", "B+nan", "X+3"] {
            assert_eq!(score_value(bad), None, "{bad}");
        }
    }
}
