//! GTP's analysis extensions, as analysis GUIs speak them: Leela Zero's `lz-analyze`
//! (Lizzie, Sabaki), KataGo's `kata-analyze` (KaTrain, Lizzie, Sabaki) and Sayuri's
//! `analyze`, and their `…genmove_analyze` forms. This file reads their arguments and
//! writes their `info` lines in the formats of KataGo's `docs/GTP_Extensions.md`; the
//! search behind them is the library bot's (`GoBot::analyze`).

use std::time::Duration;

use tabula_core::{Game, Go, Player};
use tabula_search::analysis::Analysis;

/// Which line format a command speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// Leela Zero's: win rate, prior and LCB as integers ×10000.
    Lz,
    /// KataGo's: floats, scores, utility, optional ownership.
    Kata,
}

/// What an analysis command asks for.
#[derive(Clone, Debug, PartialEq)]
pub struct AnalyzeRequest {
    /// The line format.
    pub dialect: Dialect,
    /// Whether the command also plays the move (`…genmove_analyze`).
    pub genmove: bool,
    /// The player to analyse for (default: the side to move).
    pub player: Option<Player>,
    /// How often to write a line (`None`: only when the search ends).
    pub interval: Option<Duration>,
    /// List at least this many moves, unvisited ones included.
    pub min_moves: usize,
    /// List at most this many moves.
    pub max_moves: Option<usize>,
    /// Append the predicted ownership (`kata-analyze … ownership true`).
    pub ownership: bool,
    /// Follow each principal variation with the visits of its positions
    /// (`kata-analyze … pvVisits true`).
    pub pv_visits: bool,
}

/// The analysis commands this engine knows.
pub const COMMANDS: &[&str] = &[
    "lz-analyze",
    "kata-analyze",
    "analyze",
    "lz-genmove_analyze",
    "kata-genmove_analyze",
    "genmove_analyze",
];

/// Whether `command` is one of [`COMMANDS`].
pub fn is_analysis(command: &str) -> bool {
    COMMANDS.contains(&command)
}

fn colour(s: &str) -> Option<Player> {
    match s.to_ascii_lowercase().as_str() {
        "b" | "black" => Some(Player::First),
        "w" | "white" => Some(Player::Second),
        _ => None,
    }
}

fn centiseconds(s: &str) -> Result<Duration, String> {
    match s.parse::<f64>() {
        Ok(cs) if cs.is_finite() && (0.0..=360_000.0).contains(&cs) => {
            Ok(Duration::from_secs_f64(cs / 100.0))
        }
        _ => Err(format!(
            "invalid interval {s:?} (centiseconds, 0 to 360000)"
        )),
    }
}

/// Reads `command`'s arguments: `[player] [interval] [key value]…` with the keys
/// `interval`, `minmoves`, `maxmoves` and, for the KataGo dialect, `ownership` and
/// `pvVisits`. An
/// interval of 0 (or none) writes a line only when the search ends.
pub fn parse(command: &str, args: &[&str]) -> Result<AnalyzeRequest, String> {
    let dialect = if command.starts_with("kata-") {
        Dialect::Kata
    } else {
        Dialect::Lz
    };
    let mut req = AnalyzeRequest {
        dialect,
        genmove: command.ends_with("genmove_analyze"),
        player: None,
        interval: None,
        min_moves: 0,
        max_moves: None,
        ownership: false,
        pv_visits: false,
    };
    let mut rest = args;
    if let Some(p) = rest.first().and_then(|s| colour(s)) {
        req.player = Some(p);
        rest = &rest[1..];
    }
    if let Some(first) = rest.first() {
        if first.parse::<f64>().is_ok() {
            req.interval = Some(centiseconds(first)?);
            rest = &rest[1..];
        }
    }
    let count = |key: &str, v: &str| {
        v.parse::<usize>()
            .ok()
            .filter(|&n| n <= 1_000)
            .ok_or_else(|| format!("invalid {key} {v:?} (0 to 1000)"))
    };
    while let Some((key, tail)) = rest.split_first() {
        let value = tail.first().ok_or_else(|| format!("{key} needs a value"))?;
        match *key {
            "interval" => req.interval = Some(centiseconds(value)?),
            "minmoves" => req.min_moves = count(key, value)?,
            "maxmoves" => req.max_moves = Some(count(key, value)?),
            "ownership" | "pvVisits" if dialect == Dialect::Kata => {
                let on = match *value {
                    "true" => true,
                    "false" => false,
                    v => return Err(format!("{key} must be true or false, not {v:?}")),
                };
                if *key == "ownership" {
                    req.ownership = on;
                } else {
                    req.pv_visits = on;
                }
            }
            other => return Err(format!("unknown analysis option {other:?}")),
        }
        rest = &tail[1..];
    }
    if req.interval == Some(Duration::ZERO) {
        req.interval = None;
    }
    Ok(req)
}

/// A float as KataGo writes them: at most six decimals, no trailing zeros.
fn float(x: f64) -> String {
    let s = format!("{x:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.into()
    }
}

/// A probability as Leela Zero writes it: an integer ×10000 in 0…10000.
fn per10k(p: f64) -> i64 {
    (p.clamp(0.0, 1.0) * 10_000.0).round() as i64
}

/// One report line: `info move … pv …` (KataGo's: `… pvVisits …` if asked) for each
/// listed move (all on one line, as GUIs read it), then ` ownership …` (row-major from the top-left point, +1 for the
/// player analysed) if asked and known. `ownership` is +1 Black to −1 White.
pub fn info_line(
    req: &AnalyzeRequest,
    game: &Go,
    player: Player,
    analysis: &Analysis<u16>,
    ownership: Option<&[f32]>,
) -> String {
    let listed = analysis
        .moves
        .iter()
        .enumerate()
        .take_while(|(i, m)| m.visits > 0 || *i < req.min_moves)
        .take(req.max_moves.unwrap_or(usize::MAX));
    let mut parts: Vec<String> = Vec::new();
    for (order, m) in listed {
        let mv = game.format_move(m.mv);
        let pv: Vec<String> = m.pv.iter().map(|&a| game.format_move(a)).collect();
        let pv = pv.join(" ");
        let info = match req.dialect {
            Dialect::Lz => format!(
                "info move {mv} visits {} winrate {} prior {} lcb {} order {order} pv {pv}",
                m.visits,
                per10k(m.win_rate),
                per10k(m.prior),
                per10k(m.lcb),
            ),
            Dialect::Kata => {
                let mut s = format!(
                    "info move {mv} visits {} utility {} winrate {}",
                    m.visits,
                    float(2.0 * m.win_rate - 1.0),
                    float(m.win_rate)
                );
                if let Some(lead) = m.score_lead {
                    s.push_str(&format!(" scoreMean {} ", float(lead)));
                    if let Some(sd) = m.score_stdev {
                        s.push_str(&format!("scoreStdev {} ", float(sd)));
                    }
                    s.push_str(&format!("scoreLead {}", float(lead)));
                }
                s.push_str(&format!(
                    " prior {} lcb {} utilityLcb {} order {order} pv {pv}",
                    float(m.prior),
                    float(m.lcb),
                    float(2.0 * m.lcb - 1.0)
                ));
                if req.pv_visits {
                    let visits: Vec<String> = m.pv_visits.iter().map(u32::to_string).collect();
                    s.push_str(&format!(" pvVisits {}", visits.join(" ")));
                }
                s
            }
        };
        parts.push(info.trim_end().to_string());
    }
    let mut line = parts.join(" ");
    if req.ownership && req.dialect == Dialect::Kata {
        if let Some(own) = ownership {
            let sign = if player == Player::First { 1.0 } else { -1.0 };
            let values: Vec<String> = own.iter().map(|&o| float(f64::from(o) * sign)).collect();
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str("ownership ");
            line.push_str(&values.join(" "));
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use tabula_core::GoRules;
    use tabula_search::analysis::MoveInfo;

    #[test]
    fn arguments() {
        let r = parse("lz-analyze", &["b", "50"]).unwrap();
        assert_eq!(r.player, Some(Player::First));
        assert_eq!(r.interval, Some(Duration::from_millis(500)));
        assert_eq!((r.dialect, r.genmove), (Dialect::Lz, false));
        let r = parse(
            "kata-analyze",
            &["W", "interval", "10", "ownership", "true", "maxmoves", "3"],
        )
        .unwrap();
        assert_eq!(r.player, Some(Player::Second));
        assert_eq!(r.interval, Some(Duration::from_millis(100)));
        assert!(r.ownership);
        assert_eq!(r.max_moves, Some(3));
        let r = parse("kata-genmove_analyze", &["10"]).unwrap();
        assert!(r.genmove && r.player.is_none());
        assert_eq!(parse("analyze", &["0"]).unwrap().interval, None);
        for bad in [
            &["b", "-5"][..],
            &["b", "nan"],
            &["interval"],
            &["minmoves", "x"],
            &["avoid", "b", "D4", "1"],
            &["ownership", "maybe"],
        ] {
            assert!(parse("kata-analyze", bad).is_err(), "{bad:?}");
        }
        // ownership is KataGo's key, not Leela Zero's
        assert!(parse("lz-analyze", &["ownership", "true"]).is_err());
    }

    fn analysis(game: &Go) -> Analysis<u16> {
        let mv = |s: &str| game.parse_move(s).unwrap();
        let info = |m: &str, visits: u32, win_rate, prior, pv: &[&str]| MoveInfo {
            mv: mv(m),
            visits,
            win_rate,
            prior,
            lcb: win_rate - 0.1,
            score_lead: Some(1.5),
            score_stdev: Some(10.0),
            pv: pv.iter().map(|s| mv(s)).collect(),
            pv_visits: (0..pv.len() as u32).map(|i| visits >> i).collect(),
        };
        Analysis {
            visits: 30,
            win_rate: 0.6,
            score_lead: Some(1.5),
            moves: vec![
                info("E5", 20, 0.61234567, 0.5, &["E5", "D4"]),
                info("D4", 10, 0.55, 0.3, &["D4"]),
                info("C3", 0, 0.5, 0.2, &[]),
            ],
            elapsed: Duration::ZERO,
        }
    }

    #[test]
    fn leela_zero_and_katago_lines() {
        let game = Go::new(9, GoRules::default()).unwrap();
        let a = analysis(&game);
        let lz = parse("lz-analyze", &["b", "10"]).unwrap();
        assert_eq!(
            info_line(&lz, &game, Player::First, &a, None),
            "info move E5 visits 20 winrate 6123 prior 5000 lcb 5123 order 0 pv E5 D4 \
             info move D4 visits 10 winrate 5500 prior 3000 lcb 4500 order 1 pv D4"
        );
        let lz_min = parse("lz-analyze", &["minmoves", "3", "maxmoves", "3"]).unwrap();
        assert!(info_line(&lz_min, &game, Player::First, &a, None)
            .ends_with("info move C3 visits 0 winrate 5000 prior 2000 lcb 4000 order 2 pv"));
        let kata = parse(
            "kata-analyze",
            &["10", "ownership", "true", "maxmoves", "1"],
        )
        .unwrap();
        let own = vec![1.0f32; 81];
        let line = info_line(&kata, &game, Player::Second, &a, Some(&own));
        assert!(
            line.starts_with(
                "info move E5 visits 20 utility 0.224691 winrate 0.612346 scoreMean 1.5 \
                 scoreStdev 10 scoreLead 1.5 prior 0.5 lcb 0.512346 utilityLcb 0.024691 \
                 order 0 pv E5 D4 ownership -1 -1"
            ),
            "{line}"
        );
        // White analyses: Black's points are -1 for it, one per point
        assert_eq!(
            line.split(" ownership ").nth(1).unwrap().split(' ').count(),
            81
        );
        let kata = parse("kata-analyze", &["10", "pvVisits", "true"]).unwrap();
        let line = info_line(&kata, &game, Player::First, &a, None);
        assert!(
            line.contains(" order 0 pv E5 D4 pvVisits 20 10 info move D4 ")
                && line.ends_with(" order 1 pv D4 pvVisits 10"),
            "{line}"
        );
        assert!(parse("kata-analyze", &["pvVisits", "yes"]).is_err());
        assert!(parse("lz-analyze", &["pvVisits", "true"]).is_err());
    }
}
