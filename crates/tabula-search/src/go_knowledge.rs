//! Go knowledge for UCT: heavy playouts and priors from the same tactics and 3x3
//! patterns (in the manner of Pachi's and Fuego's priors; the numbers are this
//! project's own).
//!
//! Every new node's children start with `even` virtual simulations at an even result,
//! so that no move is judged on one playout. Then, per move: its 3x3 pattern adds
//! `pattern` simulations won in the proportion γ/(1+γ); an answer to an atari fight
//! adds `tactics` wins, a capture half that, an atari that wins a ladder `tactics`
//! wins; a self-atari of a group, a run from atari into a ladder that catches it or
//! the filling of an own eye adds `tactics` losses; the pass adds `tactics` losses
//! while the board still has more than a few playable points. A move next to the last
//! one adds `near` wins, and one at common-fate-graph distance d ≤ 3 from it `cfg[d-1]`
//! wins (Pachi's distance prior, in short and in full); in an empty area, the
//! first line adds `lines` losses, the second half that, and the third `lines` wins
//! (Fuego's and Pachi's line priors).

use std::sync::Arc;

use tabula_core::go::patterns::PatternWeights;
use tabula_core::go::playout::{HeavyPolicy, MoveFeatures, CFG_MAX};
use tabula_core::go::MAX_SIZE;
use tabula_core::{Game, Go, Outcome, Player};

use crate::last_good_reply::LastGoodReply;
use crate::uct::Knowledge;

/// Heavy playouts and priors for Go.
#[derive(Clone, Debug)]
pub struct GoKnowledge {
    /// The playout policy (light playouts when `None`).
    pub playouts: Option<HeavyPolicy>,
    /// Whether new nodes get priors.
    pub priors: bool,
    /// Virtual simulations at an even result for every move.
    pub even: f32,
    /// Virtual simulations weighted by the 3x3 pattern's gamma.
    pub pattern: f32,
    /// Virtual simulations for tactical features.
    pub tactics: f32,
    /// Virtual wins for a move next to the last one.
    pub near: f32,
    /// Virtual wins for a move at common-fate-graph distance 1, 2 and 3 from the last
    /// move (Pachi's distance prior; its small-board numbers are 45, 40 and 15).
    pub cfg: [f32; CFG_MAX as usize],
    /// Virtual simulations for a move's line in an empty area.
    pub lines: f32,
    /// Virtual wins for a move in proportion to the square root of its share of the
    /// position's pattern gammas (Pachi's pattern prior: a likely move starts with
    /// many wins, an unlikely one with few).
    pub share: f32,
    /// Whether the priors read ladders (a run into a ladder that catches it is a loss,
    /// an atari that wins one a win).
    pub ladders: bool,
    /// Last good replies, learned from the search's own playouts and tried by the
    /// heavy playouts after the atari fights (`None`: off).
    pub replies: Option<Arc<LastGoodReply>>,
}

impl Default for GoKnowledge {
    fn default() -> Self {
        GoKnowledge {
            playouts: Some(HeavyPolicy::default()),
            priors: true,
            even: 10.0,
            pattern: 10.0,
            tactics: 20.0,
            near: 0.0,
            cfg: [0.0; CFG_MAX as usize],
            lines: 0.0,
            share: 0.0,
            ladders: true,
            replies: None,
        }
    }
}

impl GoKnowledge {
    /// Light playouts and no priors (the engine as it was before this knowledge).
    pub fn light() -> Self {
        GoKnowledge {
            playouts: None,
            priors: false,
            ..GoKnowledge::default()
        }
    }

    /// This knowledge with last-good-reply playouts on (a fresh table) or off.
    pub fn with_last_good_reply(mut self, on: bool) -> Self {
        self.replies = on.then(|| Arc::new(LastGoodReply::new(MAX_SIZE * MAX_SIZE + 1)));
        self
    }

    /// This knowledge with ladder reading on or off, in the playouts and the priors
    /// alike.
    pub fn with_ladders(mut self, on: bool) -> Self {
        self.ladders = on;
        if let Some(policy) = &mut self.playouts {
            policy.ladders = on;
        }
        self
    }

    fn prior(&self, f: &MoveFeatures, crowded: bool) -> (f32, f32) {
        let mut visits = self.even;
        let mut wins = self.even * 0.5;
        if f.pass {
            if crowded {
                visits += self.tactics;
            }
            return (visits, wins);
        }
        let g = f.gamma.max(1e-3);
        visits += self.pattern;
        wins += self.pattern * g / (1.0 + g);
        if f.fight {
            visits += self.tactics;
            wins += self.tactics;
        } else if f.captures {
            visits += self.tactics * 0.5;
            wins += self.tactics * 0.5;
        }
        if f.ladder_atari {
            visits += self.tactics;
            wins += self.tactics;
        }
        if f.self_atari || f.own_eye || f.futile_run {
            visits += self.tactics;
        }
        if f.near_last {
            visits += self.near;
            wins += self.near;
        }
        if let Some(&w) = self.cfg.get((f.cfg_distance as usize).wrapping_sub(1)) {
            visits += w;
            wins += w;
        }
        if f.open_area {
            match f.line {
                0 => visits += self.lines,
                1 => visits += self.lines * 0.5,
                2 => {
                    visits += self.lines;
                    wins += self.lines;
                }
                _ => {}
            }
        }
        (visits, wins)
    }
}

/// Ownership: for every point (row-major), the mean area owner at the end of
/// `playouts` playouts from `pos` with `knowledge`'s policy, +1 Black to −1 White.
pub fn ownership(pos: &Go, knowledge: &GoKnowledge, playouts: usize, seed: u64) -> Vec<f32> {
    // GoKnowledge always tells owners
    crate::uct::playout_ownership(knowledge, pos, playouts, seed)
        .unwrap_or_else(|| vec![0.0; pos.size() * pos.size()])
}

/// The stones the ownership says are dead: on a point the other colour owns in at
/// least three playouts out of four (ownership beyond ±0.5 against them).
pub fn dead_stones(pos: &Go, ownership: &[f32]) -> Vec<u16> {
    let n = pos.size();
    (0..n * n)
        .filter(|&a| match pos.stone(a / n, a % n) {
            Some(tabula_core::Player::First) => ownership[a] < -0.5,
            Some(tabula_core::Player::Second) => ownership[a] > 0.5,
            None => false,
        })
        .map(|a| a as u16)
        .collect()
}

/// `pos` with the stones on `points` taken off (what a count after agreeing on dead
/// stones sees).
pub fn without_stones(pos: &Go, points: &[u16]) -> Go {
    let mut g = pos.clone();
    let n = g.size();
    for &a in points {
        let a = a as usize;
        // points of the board's own stones, so this cannot fail
        let _ = g.set_setup_point(a / n, a % n, None);
    }
    g
}

impl Knowledge<Go> for GoKnowledge {
    fn playout_move(&self, game: &Go, random: &mut dyn FnMut(usize) -> usize) -> Option<u16> {
        match &self.playouts {
            Some(policy) => {
                let reply = self.replies.as_ref().and_then(|table| {
                    let last = game.last_action()?;
                    table.reply(game.to_move(), usize::from(last))
                });
                // the table spans the largest board; the playout ignores a reply that
                // is no point of this one
                let reply = reply.and_then(|a| u16::try_from(a).ok());
                game.heavy_rollout_move_with_reply(policy, reply, random)
            }
            None => game.rollout_move(random),
        }
    }

    fn learns(&self) -> bool {
        self.replies.is_some() && self.playouts.is_some()
    }

    fn learn(&self, before: Option<u16>, first: Player, moves: &[u16], outcome: Option<Outcome>) {
        if let Some(table) = &self.replies {
            let actions = moves.iter().map(|&m| usize::from(m));
            table.learn(before.map(usize::from), first, actions, outcome);
        }
    }

    fn priors(&self, game: &Go, moves: &[u16], out: &mut Vec<(f32, f32)>) {
        if !self.priors {
            return;
        }
        // the playouts' weights, or with light playouts the shipped ones (read once)
        let weights = match &self.playouts {
            Some(p) => p.weights.clone(),
            None => PatternWeights::shipped(),
        };
        let features = game.move_features(moves, &weights, self.ladders);
        // passing is right once little is left to play; before that it is a loss
        let crowded = moves.len() > game.action_count() / 4;
        out.extend(features.iter().map(|f| self.prior(f, crowded)));
        if self.share > 0.0 {
            let total: f32 = features.iter().filter(|f| !f.pass).map(|f| f.gamma).sum();
            for (o, f) in out.iter_mut().zip(&features) {
                if !f.pass && total > 0.0 {
                    let k = self.share * (f.gamma / total).sqrt();
                    o.0 += k;
                    o.1 += k;
                }
            }
        }
    }

    fn final_score(&self, game: &Go) -> Option<f32> {
        Some(game.score())
    }

    fn final_owners(&self, game: &Go) -> Option<Vec<f32>> {
        Some(game.area_ownership())
    }

    /// Self-play ends when both players pass, often with hopeless stones still on the
    /// board (neither side gains by taking them off); counted as they stand, they teach
    /// the ownership head that dead stones live. The playouts, played on from the end
    /// (passes forgotten), say which are dead, as in the clean-up phase.
    fn settled_final(&self, game: &Go, seed: u64) -> Option<(Vec<f32>, f32)> {
        game.final_ownership()?;
        let mut pos = game.clone();
        pos.clear_passes();
        let dead = dead_stones(&pos, &ownership(&pos, self, SETTLE_PLAYOUTS, seed));
        if dead.is_empty() {
            return None;
        }
        let settled = without_stones(&pos, &dead);
        Some((settled.area_ownership(), settled.score()))
    }
}

/// Playouts that settle a finished self-play game: a stone is dead when three in four
/// of them end with the point the opponent's.
const SETTLE_PLAYOUTS: usize = 100;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uct::{Uct, UctConfig};
    use tabula_core::go::stones_from_rows;
    use tabula_core::GoRules;

    #[test]
    fn priors_favour_tactics_and_shun_self_atari() {
        let k = GoKnowledge::default();
        let even = k.prior(
            &MoveFeatures {
                gamma: 1.0,
                ..MoveFeatures::default()
            },
            true,
        );
        let value = |(v, w): (f32, f32)| w / v;
        let fight = k.prior(
            &MoveFeatures {
                gamma: 1.0,
                fight: true,
                ..MoveFeatures::default()
            },
            true,
        );
        let atari = k.prior(
            &MoveFeatures {
                gamma: 1.0,
                self_atari: true,
                ..MoveFeatures::default()
            },
            true,
        );
        assert!((value(even) - 0.5).abs() < 1e-6);
        assert!(value(fight) > 0.7 && value(atari) < 0.3);
        let good = k.prior(
            &MoveFeatures {
                gamma: 9.0,
                ..MoveFeatures::default()
            },
            true,
        );
        assert!(value(good) > value(even));
    }

    /// The distance and line priors, and the pattern-share prior, each move a move's
    /// starting value the way they say (13x13, one stone at G7, White to move).
    #[test]
    fn near_line_and_share_priors_shape_the_start() {
        let mut g = Go::new(13, GoRules::default()).unwrap();
        g.play(g.parse_move("G7").unwrap());
        let moves: Vec<u16> = ["C3", "B2", "A1", "H7", "G10"]
            .iter()
            .map(|m| g.parse_move(m).unwrap())
            .collect();
        let values = |k: &GoKnowledge| {
            let mut out = Vec::new();
            k.priors(&g, &moves, &mut out);
            out.iter().map(|&(v, w)| w / v).collect::<Vec<f32>>()
        };
        let plain = values(&GoKnowledge::default());
        let shaped = values(&GoKnowledge {
            near: 10.0,
            lines: 10.0,
            ..GoKnowledge::default()
        });
        let [c3, b2, a1, h7, g10] = shaped[..] else {
            panic!("five priors")
        };
        assert!(
            c3 > plain[0],
            "third line in an empty corner: {c3} vs {}",
            plain[0]
        );
        assert!(b2 < plain[1] && a1 < plain[2] && a1 < b2, "{a1} {b2}");
        assert!(h7 > plain[3], "next to the last move");
        assert_eq!(g10, plain[4], "fourth line, near nothing");
        // the distance prior by the common fate graph: each distance from the last move
        // takes its own number of wins, and a move farther than three none
        let cfg = GoKnowledge {
            cfg: [40.0, 20.0, 10.0],
            ..GoKnowledge::default()
        };
        let up: Vec<u16> = ["G8", "G9", "G10", "G11"]
            .iter()
            .map(|m| g.parse_move(m).unwrap())
            .collect();
        let (mut with, mut without) = (Vec::new(), Vec::new());
        cfg.priors(&g, &up, &mut with);
        GoKnowledge::default().priors(&g, &up, &mut without);
        for ((a, b), expected) in with.iter().zip(&without).zip([40.0, 20.0, 10.0, 0.0]) {
            assert!(
                (a.1 - b.1 - expected).abs() < 1e-3,
                "{a:?} {b:?} {expected}"
            );
        }
        // the share prior adds wins in proportion to the square root of each move's
        // share of the gammas, as visits and wins alike
        let share = GoKnowledge {
            share: 100.0,
            ..GoKnowledge::default()
        };
        let mut out = Vec::new();
        share.priors(&g, &moves, &mut out);
        let mut base = Vec::new();
        GoKnowledge::default().priors(&g, &moves, &mut base);
        let total: f32 = moves.len() as f32;
        for ((a, b), &m) in out.iter().zip(&base).zip(&moves) {
            let extra = a.1 - b.1;
            assert!(extra > 0.0 && (a.0 - b.0 - extra).abs() < 1e-4, "{m}");
            assert!(extra <= 100.0 && extra >= 100.0 * (0.001f32 / total).sqrt());
        }
    }

    /// With ladders read, running into a ladder that catches starts as a loss and the
    /// atari that starts a working ladder as a win; without, the run starts as a win
    /// (an answer to atari) and the atari as an ordinary move.
    #[test]
    fn ladder_priors_turn_a_futile_run_and_a_winning_atari() {
        let rows = [
            ".........",
            "..X......",
            ".XO......",
            "...X.....",
            ".........",
            ".........",
            ".........",
            ".........",
            ".........",
        ];
        let value = |g: &Go, m: &str, ladders: bool| {
            let mut out = Vec::new();
            let k = GoKnowledge {
                ladders,
                ..GoKnowledge::default()
            };
            k.priors(g, &[g.parse_move(m).unwrap()], &mut out);
            out[0].1 / out[0].0
        };
        // Black to move: D7 is the ladder atari on White's C7
        let g = Go::from_stones(9, GoRules::default(), &stones_from_rows(&rows)).unwrap();
        assert!(value(&g, "D7", true) > 0.6);
        assert!(value(&g, "D7", true) > value(&g, "D7", false) + 0.1);
        // after it, White's run at C6 is futile
        let mut g = g;
        g.play(g.parse_move("D7").unwrap());
        assert!(value(&g, "C6", true) < 0.4);
        assert!(value(&g, "C6", false) > 0.6);
    }

    #[test]
    fn a_heavy_search_captures_what_is_in_atari() {
        // 7x7, a capturing race in the corner: Black's five stones (liberty D1) and
        // White's three (liberty A1) are both in atari; Black to move must capture
        let rows = [
            ".......", ".......", ".......", "OOOO...", "XXXO...", "OOXO...", ".OX....",
        ];
        let g = Go::from_stones(7, GoRules::default(), &stones_from_rows(&rows)).unwrap();
        let r = Uct::with_knowledge(
            UctConfig {
                simulations: 3000,
                rave: 1000.0,
                exploration: 0.1,
                ..UctConfig::default()
            },
            GoKnowledge::default(),
        )
        .search(&g);
        assert_eq!(r.best.map(|a| g.format_move(a)), Some("A1".into()));
    }

    #[test]
    fn a_search_with_last_good_reply_learns_replies_and_still_captures() {
        let rows = [
            ".......", ".......", ".......", "OOOO...", "XXXO...", "OOXO...", ".OX....",
        ];
        let g = Go::from_stones(7, GoRules::default(), &stones_from_rows(&rows)).unwrap();
        let knowledge = GoKnowledge::default().with_last_good_reply(true);
        let table = knowledge.replies.clone().unwrap();
        assert!(knowledge.learns());
        let config = UctConfig {
            simulations: 3000,
            rave: 1000.0,
            exploration: 0.1,
            ..UctConfig::default()
        };
        let r = Uct::with_knowledge(config, knowledge).search(&g);
        assert_eq!(r.best.map(|a| g.format_move(a)), Some("A1".into()));
        let stored = (0..table.actions())
            .filter(|&a| table.reply(Player::First, a).is_some())
            .count();
        assert!(stored > 5, "{stored} replies stored");
        // off by default, and light playouts never learn
        assert!(!GoKnowledge::default().learns());
        assert!(!GoKnowledge::light().with_last_good_reply(true).learns());
    }

    #[test]
    fn ownership_sees_a_dead_stone_inside_territory() {
        // 7x7: Black owns the left side with a wall on column C; White's lone stone at
        // A4 inside it cannot live; White's wall on column E owns the right side
        let rows = [
            "..X.O..", "..X.O..", "..X.O..", "O.X.O..", "..X.O..", "..X.O..", "..X.O..",
        ];
        let g = Go::from_stones(7, GoRules::default(), &stones_from_rows(&rows)).unwrap();
        let own = ownership(&g, &GoKnowledge::default(), 300, 5);
        let a4 = g.parse_move("A4").unwrap();
        assert_eq!(dead_stones(&g, &own), vec![a4]);
        assert!(own[g.parse_move("B2").unwrap() as usize] > 0.5);
        assert!(own[g.parse_move("F2").unwrap() as usize] < -0.5);
    }

    /// A game both players passed out with White's dead A4 still inside Black's side is
    /// settled with A4 off: Black owns the side and the score moves to Black; a game
    /// with nothing dead, or one that was resigned, keeps its own count.
    #[test]
    fn settling_a_finished_game_takes_dead_stones_off() {
        let rows = [
            "..X.O..", "..X.O..", "..X.O..", "O.X.O..", "..X.O..", "..X.O..", "..X.O..",
        ];
        let mut g = Go::from_stones(7, GoRules::default(), &stones_from_rows(&rows)).unwrap();
        let pass = g.pass();
        g.play(pass);
        g.play(pass);
        assert!(g.is_terminal());
        let k = GoKnowledge::default();
        let (own, score) = g.final_ownership().unwrap();
        let a4 = g.parse_move("A4").unwrap() as usize;
        let b4 = g.parse_move("B4").unwrap() as usize;
        assert_eq!(
            (own[a4], own[b4]),
            (-1.0, 0.0),
            "as it stands: A4 White's, B4 no one's"
        );
        let (settled, settled_score) = k.settled_final(&g, 1).expect("a dead stone");
        assert_eq!((settled[a4], settled[b4]), (1.0, 1.0));
        // columns A and B (14 points) become Black's, A4 no longer White's
        assert_eq!(settled_score - score, 15.0);
        // nothing dead: the game's own count stands
        let rows = [
            "..X.O..", "..X.O..", "..X.O..", "..X.O..", "..X.O..", "..X.O..", "..X.O..",
        ];
        let mut alive = Go::from_stones(7, GoRules::default(), &stones_from_rows(&rows)).unwrap();
        alive.play(pass);
        alive.play(pass);
        assert_eq!(k.settled_final(&alive, 1), None);
        // a resigned game has no count to settle
        let mut resigned = g.clone();
        resigned.resign(tabula_core::Player::First);
        assert_eq!(k.settled_final(&resigned, 1), None);
    }
}
