//! The Go bot: everything about playing a Go game well that is not the search itself
//! and not the protocol — how long to think ([`TimeControl`]), when to pass, when to
//! resign, and what to play in the clean-up phase — over any [`GoPlayer`] (UCT today,
//! network MCTS) — and analysis of a position while a GUI watches. KataGo splits it the
//! same way: `search/` owns the bot and its time controls, the GTP front end only speaks
//! the protocol.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use tabula_core::{Game, Go, Player};

use crate::analysis::{Analysis, AnalysisLimits, Analyzer, MctsAnalyzer, UctAnalyzer};
use crate::evaluator::Evaluator;
use crate::go_knowledge::{dead_stones, ownership, without_stones, GoKnowledge};
use crate::mcts::Mcts;
use crate::settings::SearchSettings;
use crate::time_control::TimeControl;
use crate::uct::{Uct, UctConfig};

/// What a player's search found in a Go position.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Answer {
    /// The chosen action (`None`: no move, e.g. the game is over).
    pub action: Option<u16>,
    /// The estimated probability that the side to move wins (`None`: no estimate).
    pub win_rate: Option<f64>,
    /// Simulations behind the estimate.
    pub simulations: usize,
}

/// A Go player the bot can drive: the best move in a position within a time budget.
pub trait GoPlayer {
    /// A short name.
    fn name(&self) -> String;
    /// Searches `pos` (the side to move plays) for at most `budget`, seeded by `seed`.
    fn search(&mut self, pos: &Go, budget: Duration, seed: u64) -> Answer;

    /// Who owns each point at the end, as the player's playouts see it (+1 Black to
    /// −1 White, row-major), if it can tell.
    fn ownership(&mut self, _pos: &Go, _seed: u64) -> Option<Vec<f32>> {
        None
    }

    /// The ownership that decides which stones are dead at the end of a game (the
    /// clean-up phase, `final_status_list`, `final_score`); by default
    /// [`GoPlayer::ownership`].
    fn final_ownership(&mut self, pos: &Go, seed: u64) -> Option<Vec<f32>> {
        self.ownership(pos, seed)
    }

    /// Searches `pos` within `limits` while reporting snapshots (see
    /// [`Analyzer::analyze`]). By default one plain search, reported as its move alone.
    fn analyze(
        &mut self,
        pos: &Go,
        limits: &AnalysisLimits,
        seed: u64,
        _stop: &AtomicBool,
        _report: &mut dyn FnMut(&Analysis<u16>),
    ) -> Analysis<u16> {
        let budget = limits.max_time.unwrap_or(Duration::from_secs(1));
        let answer = self.search(pos, budget, seed);
        let win_rate = answer.win_rate.unwrap_or(0.5);
        Analysis {
            visits: answer.simulations as u64,
            win_rate,
            score_lead: None,
            moves: answer
                .action
                .map(|mv| crate::analysis::MoveInfo {
                    mv,
                    visits: answer.simulations as u32,
                    win_rate,
                    prior: 1.0,
                    lcb: crate::analysis::lower_confidence_bound(
                        win_rate,
                        answer.simulations as u32,
                    ),
                    score_lead: None,
                    score_stdev: None,
                    pv: vec![mv],
                    pv_visits: vec![answer.simulations as u32],
                })
                .into_iter()
                .collect(),
            elapsed: budget,
        }
    }
}

impl<P: GoPlayer + ?Sized> GoPlayer for Box<P> {
    fn name(&self) -> String {
        (**self).name()
    }
    fn search(&mut self, pos: &Go, budget: Duration, seed: u64) -> Answer {
        (**self).search(pos, budget, seed)
    }
    fn ownership(&mut self, pos: &Go, seed: u64) -> Option<Vec<f32>> {
        (**self).ownership(pos, seed)
    }
    fn final_ownership(&mut self, pos: &Go, seed: u64) -> Option<Vec<f32>> {
        (**self).final_ownership(pos, seed)
    }
    fn analyze(
        &mut self,
        pos: &Go,
        limits: &AnalysisLimits,
        seed: u64,
        stop: &AtomicBool,
        report: &mut dyn FnMut(&Analysis<u16>),
    ) -> Analysis<u16> {
        (**self).analyze(pos, limits, seed, stop, report)
    }
}

impl Answer {
    /// The answer an analysis gives: its best move, that move's win rate and the root's
    /// visits.
    pub fn from_analysis(a: &Analysis<u16>) -> Answer {
        Answer {
            action: a.best(),
            win_rate: a.moves.first().map(|m| m.win_rate),
            simulations: usize::try_from(a.visits).unwrap_or(usize::MAX),
        }
    }
}

/// UCT (with RAVE) over the game's playouts.
pub struct UctPlayer {
    /// The search's settings; `time_limit` and `seed` are set per move.
    pub config: UctConfig,
    /// Playout policy and priors.
    pub knowledge: GoKnowledge,
    /// Search threads sharing one tree ([`crate::uct::search_parallel`]).
    pub threads: usize,
    /// Whether a search starts from the subtree the last one left for the position
    /// reached since (its own move and the opponent's answer), as Pachi and KataGo do.
    pub reuse_tree: bool,
    /// The last search's tree.
    tree: Option<Uct<Go, GoKnowledge>>,
}

impl UctPlayer {
    /// A player searching with `config` and `knowledge` on `threads` threads; it
    /// reuses its tree.
    pub fn new(config: UctConfig, knowledge: GoKnowledge, threads: usize) -> Self {
        UctPlayer {
            config,
            knowledge,
            threads,
            reuse_tree: true,
            tree: None,
        }
    }
}

impl GoPlayer for UctPlayer {
    fn name(&self) -> String {
        "uct".into()
    }

    fn search(&mut self, pos: &Go, budget: Duration, seed: u64) -> Answer {
        let config = UctConfig {
            time_limit: Some(budget),
            seed,
            ..self.config
        };
        // Two plies: the move this player chose last and the opponent's answer.
        let mut tree = self
            .tree
            .take()
            .filter(|_| self.reuse_tree)
            .and_then(|mut t| t.reroot(pos, 2).then_some(t))
            .unwrap_or_else(|| Uct::with_knowledge(config, self.knowledge.clone()));
        *tree.config_mut() = config;
        let result = tree.search_threads(pos, self.threads);
        self.tree = Some(tree);
        Answer {
            action: result.best,
            win_rate: Some(result.win_rate),
            simulations: result.simulations,
        }
    }

    fn ownership(&mut self, pos: &Go, seed: u64) -> Option<Vec<f32>> {
        Some(ownership(pos, &self.knowledge, OWNERSHIP_PLAYOUTS, seed))
    }

    /// One search thread: the analysis streams from a single search's hook.
    fn analyze(
        &mut self,
        pos: &Go,
        limits: &AnalysisLimits,
        seed: u64,
        stop: &AtomicBool,
        report: &mut dyn FnMut(&Analysis<u16>),
    ) -> Analysis<u16> {
        let mut analyzer = UctAnalyzer {
            config: UctConfig {
                seed,
                ..self.config
            },
            knowledge: Box::new(self.knowledge.clone()),
            root_actions: None,
        };
        let limits = AnalysisLimits {
            max_visits: cap_visits(limits.max_visits, self.config.simulations),
            ..*limits
        };
        analyzer.analyze(pos, &limits, stop, report)
    }
}

/// The tighter of an analysis' visit limit and a player's own simulation cap.
fn cap_visits(limit: Option<u64>, cap: usize) -> Option<u64> {
    let cap = (cap != usize::MAX).then_some(cap as u64);
    match (limit, cap) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Network-guided PUCT MCTS (any evaluator: a trained network, rollouts), with the
/// playouts of `knowledge` for what the network does not tell (ownership, hence dead
/// stones and the clean-up phase).
pub struct MctsPlayer {
    /// Leaf evaluation.
    pub evaluator: Box<dyn Evaluator<Go>>,
    /// PUCT settings.
    pub settings: SearchSettings,
    /// Simulations per move at most (`usize::MAX`: time decides).
    pub simulations: usize,
    /// Playouts for ownership.
    pub knowledge: GoKnowledge,
    /// What the evaluator is, for `name`.
    pub label: String,
    /// Whether a search starts from the subtree the last one left for the position
    /// reached since (its own move and the opponent's answer), as KataGo does.
    pub reuse_tree: bool,
    /// The last search's tree.
    tree: Option<Mcts<Go>>,
}

impl MctsPlayer {
    /// A player searching with `evaluator` under `settings`, at most `simulations` per
    /// move, with `knowledge`'s playouts for ownership; it reuses its tree.
    pub fn new(
        evaluator: Box<dyn Evaluator<Go>>,
        settings: SearchSettings,
        simulations: usize,
        knowledge: GoKnowledge,
        label: String,
    ) -> Self {
        MctsPlayer {
            evaluator,
            settings,
            simulations,
            knowledge,
            label,
            reuse_tree: true,
            tree: None,
        }
    }
}

impl GoPlayer for MctsPlayer {
    fn name(&self) -> String {
        format!("mcts ({})", self.label)
    }

    fn search(&mut self, pos: &Go, budget: Duration, seed: u64) -> Answer {
        let limits = AnalysisLimits {
            max_visits: None,
            max_time: Some(budget),
            report_every: None,
            pv_length: 1,
        };
        Answer::from_analysis(&self.analyze(
            pos,
            &limits,
            seed,
            &AtomicBool::new(false),
            &mut |_| {},
        ))
    }

    /// The network's ownership head where it has one, else the playouts'.
    fn ownership(&mut self, pos: &Go, seed: u64) -> Option<Vec<f32>> {
        if let Some(e) = self.evaluator.final_estimate(pos) {
            return Some(e.ownership);
        }
        self.final_ownership(pos, seed)
    }

    /// The playouts' ownership, not the head's. Against GnuGo the shipped 9x9
    /// network's head found no dead stones in the three games whose counts then
    /// disagreed; the playouts found exactly GnuGo's. (Likely why: the head learns the
    /// ends of self-play games as they were scored, stones on the board, so hopeless
    /// stones that neither player took off count as alive there.)
    fn final_ownership(&mut self, pos: &Go, seed: u64) -> Option<Vec<f32>> {
        Some(ownership(pos, &self.knowledge, OWNERSHIP_PLAYOUTS, seed))
    }

    fn analyze(
        &mut self,
        pos: &Go,
        limits: &AnalysisLimits,
        seed: u64,
        stop: &AtomicBool,
        report: &mut dyn FnMut(&Analysis<u16>),
    ) -> Analysis<u16> {
        let mut analyzer = MctsAnalyzer {
            evaluator: &mut self.evaluator,
            settings: self.settings,
            seed,
            root_actions: None,
        };
        let limits = AnalysisLimits {
            max_visits: cap_visits(limits.max_visits, self.simulations),
            ..*limits
        };
        // Two plies: the move this player chose last and the opponent's answer.
        let mut tree = self
            .tree
            .take()
            .filter(|_| self.reuse_tree)
            .and_then(|mut t| t.reroot(pos, 2).then_some(t))
            .unwrap_or_else(|| Mcts::new(pos.clone(), self.settings.mcts(usize::MAX, seed)));
        let analysis = analyzer.analyze_tree(&mut tree, &limits, stop, report);
        self.tree = Some(tree);
        analysis
    }
}

/// Who watches a genmove: report interval, longest principal variation, the reporter.
type Watch<'a> = (Duration, usize, &'a mut dyn FnMut(&Analysis<u16>));

/// Playouts behind an ownership estimate (dead stones, clean-up, final score).
const OWNERSHIP_PLAYOUTS: usize = 400;

/// A random playout move (it does not fill its own eyes): a sparring partner.
pub struct RandomPlayer;

impl GoPlayer for RandomPlayer {
    fn name(&self) -> String {
        "random".into()
    }

    fn search(&mut self, pos: &Go, _budget: Duration, seed: u64) -> Answer {
        let mut state = seed;
        let mut random = |n: usize| {
            state = tabula_core::zobrist::mix(state);
            (state % n as u64) as usize
        };
        Answer {
            action: pos.rollout_move(&mut random),
            win_rate: None,
            simulations: 0,
        }
    }
}

/// What the bot decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Play this action (the pass action included).
    Play(u16),
    /// Give up.
    Resign,
}

/// Why the bot cannot move.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BotError {
    /// Nothing is left to play.
    #[error("the game is over")]
    GameOver,
}

/// A win rate below which a game is lost whatever is played: the bot then answers the
/// opponent's pass with a pass even when it does not resign.
const HOPELESS: f64 = 0.01;

/// When to resign.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ResignPolicy {
    /// Resign when the best move's win rate is below this (0: never).
    pub threshold: f64,
    /// …and the estimate rests on at least this many simulations.
    pub min_simulations: usize,
}

/// A Go bot: a player, a clock and the policies around them.
pub struct GoBot<P> {
    player: P,
    time: TimeControl,
    resign: ResignPolicy,
    seed: u64,
    games: u64,
    moves_searched: u64,
}

impl<P: GoPlayer> GoBot<P> {
    /// A bot playing with `player`, thinking as `time` allows, seeded by `seed`.
    pub fn new(player: P, time: TimeControl, resign: ResignPolicy, seed: u64) -> Self {
        GoBot {
            player,
            time,
            resign,
            seed,
            games: 0,
            moves_searched: 0,
        }
    }

    /// The clock (GTP `time_settings` and `time_left` set it).
    pub fn time_mut(&mut self) -> &mut TimeControl {
        &mut self.time
    }

    /// The player.
    pub fn player(&self) -> &P {
        &self.player
    }

    /// The player, to change or replace it.
    pub fn player_mut(&mut self) -> &mut P {
        &mut self.player
    }

    /// A new game starts: it searches with new random numbers.
    pub fn new_game(&mut self) {
        self.games += 1;
    }

    fn seed_for(&self, salt: u64) -> u64 {
        tabula_core::zobrist::mix(self.seed ^ (self.games << 32) ^ salt)
            .wrapping_add(self.moves_searched)
    }

    /// The stones the player's ownership estimate reads as dead (none if it cannot
    /// tell), as actions.
    pub fn dead_stones(&mut self, game: &Go) -> Vec<u16> {
        let seed = self.seed_for(0xdead);
        match self.player.final_ownership(game, seed) {
            Some(own) => dead_stones(game, &own),
            None => Vec::new(),
        }
    }

    /// The position with the dead stones taken off (what the final score counts).
    pub fn without_dead_stones(&mut self, game: &Go) -> Go {
        without_stones(game, &self.dead_stones(game))
    }

    /// A clean-up move: a capture or a liberty of an opponent chain the ownership
    /// reads as dead (never a self-atari of a group or an own eye), or a pass when none
    /// is left; without an ownership estimate, any capture.
    fn cleanup_move(&mut self, pos: &Go) -> Option<u16> {
        let seed = self.seed_for(0xc1ea);
        let Some(own) = self.player.final_ownership(pos, seed) else {
            return pos.capturing_moves().first().copied();
        };
        let n = pos.size();
        let me = pos.to_move();
        let dead: Vec<u16> = dead_stones(pos, &own)
            .into_iter()
            .filter(|&a| pos.stone(a as usize / n, a as usize % n) == Some(me.other()))
            .collect();
        if dead.is_empty() {
            return Some(pos.pass());
        }
        let mut liberties: Vec<u16> = dead
            .iter()
            .flat_map(|&a| pos.chain_liberty_actions(a))
            .filter(|&a| pos.is_legal_action(a))
            .collect();
        liberties.sort_unstable();
        liberties.dedup();
        if let Some(&c) = pos.capturing_moves().iter().find(|c| liberties.contains(c)) {
            return Some(c);
        }
        let features = pos.move_features(
            &liberties,
            &tabula_core::go::patterns::PatternWeights::shipped(),
            false,
        );
        liberties
            .iter()
            .zip(features)
            .find(|(_, f)| !f.self_atari && !f.own_eye)
            .map(|(&a, _)| a)
    }

    /// The bot's move for `player` in `game` (as played so far: its passes count). In
    /// the `cleanup` phase (KGS `kgs-genmove_cleanup`) it never passes early: it fills
    /// the liberties of the opponent's stones its ownership reads as dead (any stone
    /// in atari, for a player without ownership) and passes once none are left, so
    /// that dead stones leave the board before the count.
    ///
    /// It passes when the opponent has just passed and the board already scores in its
    /// favour, or the search finds the game lost whatever it plays (a win rate under 1%),
    /// resigns under the resign policy, and never returns a move that the
    /// game's rules (positional superko included) forbid: the search plays its
    /// playouts under simple ko, so an illegal choice becomes a pass.
    pub fn genmove(
        &mut self,
        game: &Go,
        player: Player,
        cleanup: bool,
    ) -> Result<Decision, BotError> {
        self.genmove_watched(game, player, cleanup, None)
    }

    /// [`GoBot::genmove`] while `watch` receives snapshots of the search every
    /// `report_every` of its limits (GTP `kata-genmove_analyze`); the clock, not the
    /// limits, decides how long it thinks.
    pub fn genmove_analyze(
        &mut self,
        game: &Go,
        player: Player,
        report_every: Duration,
        pv_length: usize,
        report: &mut dyn FnMut(&Analysis<u16>),
    ) -> Result<Decision, BotError> {
        self.genmove_watched(game, player, false, Some((report_every, pv_length, report)))
    }

    /// An analysis of `game` with `player` to move, within `limits`, until `stop` is set
    /// (GTP `lz-analyze`, `kata-analyze`).
    pub fn analyze(
        &mut self,
        game: &Go,
        player: Player,
        limits: &AnalysisLimits,
        stop: &AtomicBool,
        report: &mut dyn FnMut(&Analysis<u16>),
    ) -> Analysis<u16> {
        let mut pos = game.clone();
        pos.clear_passes();
        pos.set_to_move(player);
        let seed = self.seed_for(0xa5a5);
        self.moves_searched += 1;
        self.player.analyze(&pos, limits, seed, stop, report)
    }

    /// Who owns each point at the end (+1 Black to −1 White, row-major) as the player
    /// reads `game` with `player` to move, if it can tell.
    pub fn ownership(&mut self, game: &Go, player: Player) -> Option<Vec<f32>> {
        let mut pos = game.clone();
        pos.clear_passes();
        pos.set_to_move(player);
        let seed = self.seed_for(0x0a0a);
        self.player.ownership(&pos, seed)
    }

    fn genmove_watched(
        &mut self,
        game: &Go,
        player: Player,
        cleanup: bool,
        watch: Option<Watch<'_>>,
    ) -> Result<Decision, BotError> {
        let mut pos = game.clone();
        let passes = pos.consecutive_passes();
        pos.clear_passes();
        pos.set_to_move(player);
        if pos.is_terminal() {
            return Err(BotError::GameOver);
        }
        let me_ahead = match player {
            Player::First => pos.score() > 0.0,
            Player::Second => pos.score() < 0.0,
        };
        if !cleanup && passes >= 1 && me_ahead {
            return Ok(Decision::Play(pos.pass()));
        }
        // A won search is indifferent to the margin and may pass with dead stones still
        // on the board; in clean-up, the opponent's dead stones are taken off first.
        let capture = if cleanup {
            self.cleanup_move(&pos)
        } else {
            None
        };
        let action = match capture {
            Some(a) => a,
            None => {
                let budget = self.time.budget(player, pos.empty_points());
                let seed = self.seed_for(0);
                let answer = match watch {
                    None => self.player.search(&pos, budget, seed),
                    Some((every, pv_length, report)) => {
                        let limits = AnalysisLimits {
                            max_visits: None,
                            max_time: Some(budget),
                            report_every: Some(every),
                            pv_length,
                        };
                        let stop = AtomicBool::new(false);
                        let a = self.player.analyze(&pos, &limits, seed, &stop, report);
                        Answer::from_analysis(&a)
                    }
                };
                if let Some(w) = answer.win_rate {
                    if self.resign.threshold > 0.0
                        && answer.simulations >= self.resign.min_simulations
                        && w < self.resign.threshold
                    {
                        return Ok(Decision::Resign);
                    }
                    // A lost game played on (resignation off): after the opponent's pass
                    // no move changes the result, and a search indifferent among losing
                    // moves would fill its own eyes. Pass and let the count end it.
                    if !cleanup
                        && passes >= 1
                        && answer.simulations >= self.resign.min_simulations
                        && w < HOPELESS
                    {
                        return Ok(Decision::Play(pos.pass()));
                    }
                }
                // Under area scoring, dead stones left on the board count for their
                // owner, so the search itself prefers capturing them to passing.
                answer.action.unwrap_or(pos.pass())
            }
        };
        self.moves_searched += 1;
        Ok(Decision::Play(if pos.is_legal_action(action) {
            action
        } else {
            pos.pass()
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tabula_core::GoRules;

    /// A player that always answers the same.
    struct Fixed(Answer);

    impl GoPlayer for Fixed {
        fn name(&self) -> String {
            "fixed".into()
        }
        fn search(&mut self, _: &Go, _: Duration, _: u64) -> Answer {
            self.0
        }
    }

    fn bot(answer: Answer) -> GoBot<Fixed> {
        let resign = ResignPolicy {
            threshold: 0.1,
            min_simulations: 100,
        };
        GoBot::new(Fixed(answer), TimeControl::new(0.01).unwrap(), resign, 1)
    }

    fn go(moves: &[&str]) -> Go {
        let mut g = Go::new(5, GoRules::default()).unwrap();
        for m in moves {
            g.play_text(m).unwrap();
        }
        g
    }

    /// A network head that reads every stone on the board as alive.
    struct AllAlive;

    impl Evaluator<Go> for AllAlive {
        fn evaluate(&mut self, positions: &[Go], out: &mut Vec<crate::Evaluation>) {
            out.extend(positions.iter().map(|_| crate::Evaluation {
                priors: Vec::new(),
                value: 0.0,
            }));
        }
        fn final_estimate(&mut self, pos: &Go) -> Option<crate::evaluator::FinalEstimate> {
            let n = pos.size();
            let ownership = (0..n * n)
                .map(|a| match pos.stone(a / n, a % n) {
                    Some(Player::First) => 1.0,
                    Some(Player::Second) => -1.0,
                    None => 0.0,
                })
                .collect();
            Some(crate::evaluator::FinalEstimate {
                ownership,
                score: 0.0,
            })
        }
    }

    #[test]
    fn the_network_player_judges_dead_stones_by_its_playouts() {
        // White's lone A4 inside Black's side cannot live (as in go_knowledge's test)
        let rows = [
            "..X.O..", "..X.O..", "..X.O..", "O.X.O..", "..X.O..", "..X.O..", "..X.O..",
        ];
        let stones = tabula_core::go::stones_from_rows(&rows);
        let g = Go::from_stones(7, GoRules::default(), &stones).unwrap();
        let player = MctsPlayer::new(
            Box::new(AllAlive),
            SearchSettings::default(),
            50,
            GoKnowledge::default(),
            "all alive".into(),
        );
        let mut bot = GoBot::new(
            player,
            TimeControl::new(0.01).unwrap(),
            ResignPolicy {
                threshold: 0.0,
                min_simulations: 0,
            },
            1,
        );
        let a4 = g.parse_move("A4").unwrap();
        // the head (analysis' ownership) sees A4 alive; the count takes it off
        let head = bot.ownership(&g, Player::First).unwrap();
        assert!(head[a4 as usize] < -0.5);
        assert_eq!(bot.dead_stones(&g), vec![a4]);
        // Black to move in clean-up fills A4's liberties: a liberty of A4 is played
        let Decision::Play(m) = bot.genmove(&g, Player::First, true).unwrap() else {
            panic!("clean-up does not resign");
        };
        assert!(
            ["A3", "A5", "B4"].contains(&g.format_move(m).as_str()),
            "{}",
            g.format_move(m)
        );
    }

    /// An evaluator that counts the positions it is asked about (uniform priors).
    struct Counting(std::sync::Arc<std::sync::atomic::AtomicUsize>);

    impl Evaluator<Go> for Counting {
        fn evaluate(&mut self, positions: &[Go], out: &mut Vec<crate::Evaluation>) {
            self.0
                .fetch_add(positions.len(), std::sync::atomic::Ordering::Relaxed);
            out.extend(positions.iter().map(|_| crate::Evaluation {
                priors: Vec::new(),
                value: 0.0,
            }));
        }
    }

    /// After its move and the opponent's answer, the network player searches on from
    /// the subtree it had already grown there (a visit cap counts those visits, as
    /// KataGo's maxVisits does); with reuse off, or after an answer it never looked at
    /// deep enough, it searches afresh.
    #[test]
    fn the_network_player_reuses_its_tree_after_the_opponents_answer() {
        let evaluations = |reuse: bool| {
            let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let mut player = MctsPlayer::new(
                Box::new(Counting(count.clone())),
                SearchSettings::default(),
                400,
                GoKnowledge::default(),
                "counting".into(),
            );
            player.reuse_tree = reuse;
            let mut g = go(&[]);
            let limit = Duration::from_secs(60);
            let first = player.search(&g, limit, 1);
            g.play(first.action.unwrap());
            // the opponent answers with the reply the tree liked best
            let tree = player.tree.as_ref().unwrap();
            let reply = tree.principal_variation(first.action.unwrap(), 2)[1];
            g.play(reply);
            let before = count.load(std::sync::atomic::Ordering::Relaxed);
            let second = player.search(&g, limit, 2);
            assert_eq!(second.simulations, 401, "the cap holds either way");
            count.load(std::sync::atomic::Ordering::Relaxed) - before
        };
        let fresh = evaluations(false);
        let reused = evaluations(true);
        assert!(
            fresh >= 390,
            "a fresh search evaluates its 400 visits: {fresh}"
        );
        assert!(
            reused + 5 < fresh,
            "the kept subtree saves evaluations: {reused} of {fresh}"
        );
    }

    #[test]
    fn resigns_only_on_a_confident_low_estimate() {
        let low = |simulations| Answer {
            action: Some(0),
            win_rate: Some(0.05),
            simulations,
        };
        let g = go(&[]);
        assert_eq!(
            bot(low(500)).genmove(&g, Player::First, false),
            Ok(Decision::Resign)
        );
        assert_eq!(
            bot(low(50)).genmove(&g, Player::First, false),
            Ok(Decision::Play(0))
        );
    }

    #[test]
    fn passes_after_a_pass_when_ahead_and_plays_on_in_cleanup() {
        // White is ahead on an empty board by komi; black passed.
        let g = go(&["pass"]);
        let answer = Answer {
            action: Some(12),
            win_rate: Some(0.9),
            simulations: 1000,
        };
        let pass = g.pass();
        assert_eq!(
            bot(answer).genmove(&g, Player::Second, false),
            Ok(Decision::Play(pass))
        );
        assert_eq!(
            bot(answer).genmove(&g, Player::Second, true),
            Ok(Decision::Play(12))
        );
    }

    #[test]
    fn a_lost_game_without_resignation_answers_a_pass_with_a_pass() {
        // Black A1, A2 against White B1 and komi: Black is behind when White passes.
        let g = go(&["A1", "B1", "A2", "pass"]);
        let answer = |win_rate| Answer {
            action: Some(12),
            win_rate: Some(win_rate),
            simulations: 1000,
        };
        let never_resigns = |win_rate| {
            let resign = ResignPolicy {
                threshold: 0.0,
                min_simulations: 100,
            };
            GoBot::new(
                Fixed(answer(win_rate)),
                TimeControl::new(0.01).unwrap(),
                resign,
                1,
            )
        };
        let play = |a| Ok(Decision::Play(a));
        assert_eq!(
            never_resigns(0.001).genmove(&g, Player::First, false),
            play(g.pass())
        );
        // still a game: play on; in clean-up: play on
        assert_eq!(
            never_resigns(0.3).genmove(&g, Player::First, false),
            play(12)
        );
        assert_eq!(
            never_resigns(0.001).genmove(&g, Player::First, true),
            play(12)
        );
        // no pass to answer: play on
        let before = go(&["A1", "B1", "A2", "B2"]);
        assert_eq!(
            never_resigns(0.001).genmove(&before, Player::First, false),
            play(12)
        );
    }

    #[test]
    fn cleanup_takes_stones_in_atari_first() {
        // black C1, white B1, black B2: white B1 has one liberty left, at A1
        let g = go(&["C1", "B1", "B2", "pass"]);
        let captures = {
            let mut p = g.clone();
            p.set_to_move(Player::First);
            p.capturing_moves()
        };
        assert!(!captures.is_empty(), "the position has a capture");
        let answer = Answer {
            action: Some(0),
            win_rate: Some(0.5),
            simulations: 10,
        };
        assert_eq!(
            bot(answer).genmove(&g, Player::First, true),
            Ok(Decision::Play(captures[0]))
        );
    }

    #[test]
    fn an_illegal_choice_becomes_a_pass() {
        let g = go(&["C3"]);
        let occupied = g.parse_move("C3").unwrap();
        let answer = Answer {
            action: Some(occupied),
            win_rate: Some(0.5),
            simulations: 10,
        };
        assert_eq!(
            bot(answer).genmove(&g, Player::First, false),
            Ok(Decision::Play(g.pass()))
        );
    }

    #[test]
    fn uct_and_random_players_answer_legal_moves() {
        let g = go(&["C3"]);
        let mut b = GoBot::new(
            Box::new(UctPlayer::new(
                UctConfig {
                    simulations: 200,
                    rave: 1000.0,
                    exploration: 0.25,
                    ..UctConfig::default()
                },
                GoKnowledge::default(),
                1,
            )) as Box<dyn GoPlayer>,
            TimeControl::new(5.0).unwrap(),
            ResignPolicy {
                threshold: 0.0,
                min_simulations: 100,
            },
            7,
        );
        assert_eq!(b.player().name(), "uct");
        let Ok(Decision::Play(a)) = b.genmove(&g, Player::Second, false) else {
            panic!("a move")
        };
        assert!(g.is_legal_action(a));
        let mut r = GoBot::new(RandomPlayer, TimeControl::new(1.0).unwrap(), b.resign, 3);
        let Ok(Decision::Play(a)) = r.genmove(&g, Player::Second, false) else {
            panic!("a move")
        };
        assert!(g.is_legal_action(a));
    }
}
