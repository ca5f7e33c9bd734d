//! Live analysis: what a search thinks of a position while it runs — the figures analysis
//! GUIs show (Lizzie's and Sabaki's `lz-analyze`, KaTrain's `kata-analyze` and KataGo's
//! JSON analysis engine): every candidate's visits, win rate, prior, lower confidence
//! bound and principal variation, reported at intervals until a visit or time budget is
//! spent or the caller says stop.
//!
//! [`Analyzer`] is the interface; [`MctsAnalyzer`] (network-guided PUCT over any
//! evaluator) and [`UctAnalyzer`] (UCT over a game's playouts) implement it for any game.
//! Front ends turn an [`Analysis`] into their protocol's lines.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tabula_core::Game;

use crate::evaluator::Evaluator;
use crate::mcts::Mcts;
use crate::settings::SearchSettings;
use crate::uct::{Knowledge, Uct, UctConfig};

/// One candidate move of an analysis.
#[derive(Clone, Debug, PartialEq)]
pub struct MoveInfo<M> {
    /// The move.
    pub mv: M,
    /// Search visits through it.
    pub visits: u32,
    /// Its estimated probability of winning for the side to move at the root, 0 to 1
    /// (0.5 while unvisited).
    pub win_rate: f64,
    /// The search's prior for it, 0 to 1 (the network's policy; for UCT, its share of
    /// the knowledge priors' virtual wins).
    pub prior: f64,
    /// A lower confidence bound of `win_rate` ([`lower_confidence_bound`]).
    pub lcb: f64,
    /// The expected final score lead of the side to move after it, in points, where the
    /// search measures scores.
    pub score_lead: Option<f64>,
    /// The standard deviation of that score.
    pub score_stdev: Option<f64>,
    /// The principal variation, starting with the move itself.
    pub pv: Vec<M>,
    /// The visits of each position of `pv` (KataGo's `pvVisits`): the first is
    /// `visits`.
    pub pv_visits: Vec<u32>,
}

/// A snapshot of a search.
#[derive(Clone, Debug, PartialEq)]
pub struct Analysis<M> {
    /// Visits of the root (simulations so far).
    pub visits: u64,
    /// The root's estimated probability of winning for the side to move.
    pub win_rate: f64,
    /// The root's expected score lead for the side to move, where measured.
    pub score_lead: Option<f64>,
    /// Candidate moves, best first (the move the search would play is first): by
    /// visits, then win rate, then prior.
    pub moves: Vec<MoveInfo<M>>,
    /// Time spent so far.
    pub elapsed: Duration,
}

impl<M: Copy> Analysis<M> {
    /// The move the search would play now.
    pub fn best(&self) -> Option<M> {
        self.moves.first().map(|m| m.mv)
    }

    /// Puts `moves` in report order (visits, then win rate, then prior, all descending).
    pub fn rank(moves: &mut [MoveInfo<M>]) {
        moves.sort_by(|a, b| {
            b.visits
                .cmp(&a.visits)
                .then(b.win_rate.total_cmp(&a.win_rate))
                .then(b.prior.total_cmp(&a.prior))
        });
    }
}

/// A lower confidence bound on a win rate `p` measured over `visits` results: `p` minus
/// 1.96 standard errors, with the per-result variance `p(1−p)` floored at 0.05 so that a
/// few lucky visits do not look certain. 0 for an unvisited move (it is ranked last).
/// Searches here keep no per-node variance; this is the normal approximation over
/// win/loss results, in the manner of Leela Zero's LCB.
pub fn lower_confidence_bound(p: f64, visits: u32) -> f64 {
    if visits == 0 {
        return 0.0;
    }
    let variance = (p * (1.0 - p)).max(0.05);
    (p - 1.96 * (variance / f64::from(visits)).sqrt()).clamp(0.0, 1.0)
}

/// When an analysis ends and how often it reports.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AnalysisLimits {
    /// Stop after this many root visits (`None`: no limit).
    pub max_visits: Option<u64>,
    /// Stop after this long (`None`: no limit, only `stop` ends it).
    pub max_time: Option<Duration>,
    /// Report a snapshot this often (`None`: only the final one is returned).
    pub report_every: Option<Duration>,
    /// The longest principal variation to report.
    pub pv_length: usize,
}

impl Default for AnalysisLimits {
    fn default() -> Self {
        AnalysisLimits {
            max_visits: Some(1000),
            max_time: None,
            report_every: None,
            pv_length: 15,
        }
    }
}

impl AnalysisLimits {
    /// The visit limit as a search's simulation budget (`usize::MAX`: none).
    fn simulations(&self) -> usize {
        self.max_visits
            .map_or(usize::MAX, |v| usize::try_from(v).unwrap_or(usize::MAX))
    }
}

/// A search that can be watched while it runs.
pub trait Analyzer<G: Game> {
    /// Searches `game` (the side to move plays) within `limits`, calling `report` with a
    /// snapshot every `limits.report_every`, until the budget is spent or `stop` is set
    /// (checked often: a stop is answered within milliseconds). Returns the final
    /// snapshot. A finished game gets an analysis with no moves.
    fn analyze(
        &mut self,
        game: &G,
        limits: &AnalysisLimits,
        stop: &AtomicBool,
        report: &mut dyn FnMut(&Analysis<G::Move>),
    ) -> Analysis<G::Move>;

    /// Who owns each point at the end (+1 the first player to −1 the second,
    /// row-major), if this search can tell: a network's ownership head, or the
    /// playouts' final positions.
    fn ownership(&mut self, _game: &G) -> Option<Vec<f32>> {
        None
    }

    /// Later searches consider only these root actions (`None`: every legal move), as
    /// KataGo's `allowMoves`/`avoidMoves` with `untilDepth` 1.
    fn restrict_root(&mut self, actions: Option<Vec<usize>>);
}

/// Calls `report` when a report is due; tracks when the last one was made.
struct Reporter {
    every: Option<Duration>,
    last: Instant,
}

impl Reporter {
    fn new(every: Option<Duration>) -> Self {
        Reporter {
            every,
            last: Instant::now(),
        }
    }

    fn due(&mut self) -> bool {
        match self.every {
            Some(e) if self.last.elapsed() >= e => {
                self.last = Instant::now();
                true
            }
            _ => false,
        }
    }
}

/// The win rate of a proven result (1 a win, ½ a draw, 0 a loss).
fn proven_rate(value: f32) -> f64 {
    if value > 0.0 {
        1.0
    } else if value < 0.0 {
        0.0
    } else {
        0.5
    }
}

/// PUCT MCTS over an evaluator `E` (a network, rollouts, uniform priors).
pub struct MctsAnalyzer<E> {
    /// Leaf evaluation.
    pub evaluator: E,
    /// Search settings (c_puct, first-play urgency, batch).
    pub settings: SearchSettings,
    /// Seed of the search.
    pub seed: u64,
    /// The root's moves are these actions only (`None`: every legal move).
    pub root_actions: Option<Vec<usize>>,
}

/// The snapshot of an MCTS search so far.
pub fn mcts_snapshot<G: Game>(tree: &Mcts<G>, pv_length: usize) -> Analysis<G::Move> {
    let result = tree.result();
    let mut moves: Vec<MoveInfo<G::Move>> = result
        .children
        .iter()
        .map(|c| {
            let (pv, pv_visits) = tree.principal_variation_visits(c.mv, pv_length);
            // a proven result is certain: its win rate is 1, ½ or 0, its bound the same
            let proven = c.proof.map(|p| proven_rate(p.value));
            let win_rate = proven.unwrap_or(if c.visits > 0 {
                f64::from((c.q + 1.0) / 2.0).clamp(0.0, 1.0)
            } else {
                0.5
            });
            MoveInfo {
                mv: c.mv,
                visits: c.visits,
                win_rate,
                prior: f64::from(c.prior),
                lcb: proven.unwrap_or_else(|| lower_confidence_bound(win_rate, c.visits)),
                score_lead: None,
                score_stdev: None,
                pv,
                pv_visits,
            }
        })
        .collect();
    Analysis::rank(&mut moves);
    // the search's own choice first (with proofs it may not be the most visited move)
    if let Some(at) = result
        .best()
        .and_then(|best| moves.iter().position(|m| m.mv == best))
    {
        moves[..=at].rotate_right(1);
    }
    Analysis {
        visits: u64::from(result.root_visits),
        win_rate: result.proof.map_or_else(
            || f64::from((result.value + 1.0) / 2.0).clamp(0.0, 1.0),
            |p| proven_rate(p.value),
        ),
        score_lead: None,
        moves,
        elapsed: result.elapsed,
    }
}

impl<E> MctsAnalyzer<E> {
    /// Searches on in `tree`, whose root is the position analysed (a new tree, or one
    /// kept from an earlier search and moved down with [`Mcts::reroot`]): the visits it
    /// holds count towards `limits.max_visits`, as KataGo's do.
    pub fn analyze_tree<G: Game>(
        &mut self,
        tree: &mut Mcts<G>,
        limits: &AnalysisLimits,
        stop: &AtomicBool,
        report: &mut dyn FnMut(&Analysis<G::Move>),
    ) -> Analysis<G::Move>
    where
        E: Evaluator<G>,
    {
        let game = tree.game().clone();
        let mut config = self.settings.mcts(usize::MAX, self.seed);
        // A fresh search ends at the limit plus the root's own evaluation; a kept
        // root's visits include that evaluation already.
        let kept = (tree.root_visits() as usize).saturating_sub(1);
        config.simulations = limits.simulations().saturating_sub(kept);
        config.time_limit = limits.max_time;
        tree.set_config(config);
        let mut reporter = Reporter::new(limits.report_every);
        let mut positions = Vec::new();
        let mut evaluations = Vec::new();
        let mut scores = Scores::new(&game, &mut self.evaluator);
        tree.begin();
        while !tree.done() && !stop.load(Ordering::Relaxed) {
            positions.clear();
            let n = tree.gather(&mut positions);
            if n > 0 {
                evaluations.clear();
                self.evaluator.evaluate(&positions, &mut evaluations);
                tree.deliver(&evaluations);
            }
            if reporter.due() {
                let mut a = mcts_snapshot(tree, limits.pv_length);
                scores.fill(&game, &mut a, &mut self.evaluator);
                report(&a);
            }
        }
        let mut a = mcts_snapshot(tree, limits.pv_length);
        scores.fill(&game, &mut a, &mut self.evaluator);
        a
    }
}

impl<G: Game, E: Evaluator<G>> Analyzer<G> for MctsAnalyzer<E> {
    fn analyze(
        &mut self,
        game: &G,
        limits: &AnalysisLimits,
        stop: &AtomicBool,
        report: &mut dyn FnMut(&Analysis<G::Move>),
    ) -> Analysis<G::Move> {
        let mut tree = Mcts::new(game.clone(), self.settings.mcts(usize::MAX, self.seed));
        tree.restrict_root(self.root_actions.clone());
        self.analyze_tree(&mut tree, limits, stop, report)
    }

    fn ownership(&mut self, game: &G) -> Option<Vec<f32>> {
        self.evaluator.final_estimate(game).map(|e| e.ownership)
    }

    fn restrict_root(&mut self, actions: Option<Vec<usize>>) {
        self.root_actions = actions;
    }
}

/// Score leads from an evaluator's score head (for the side to move at the root): the
/// root's, and each visited move's from the position after it, asked once per move.
struct Scores<M> {
    root: Option<f64>,
    after: Vec<(M, f64)>,
}

impl<M: Copy + PartialEq> Scores<M> {
    fn new<G: Game<Move = M>, E: Evaluator<G>>(game: &G, evaluator: &mut E) -> Self {
        let me = game.to_move();
        let root = evaluator.final_estimate(game).map(|e| {
            let s = f64::from(e.score);
            if me == tabula_core::Player::First {
                s
            } else {
                -s
            }
        });
        Scores {
            root,
            after: Vec::new(),
        }
    }

    fn fill<G: Game<Move = M>, E: Evaluator<G>>(
        &mut self,
        game: &G,
        a: &mut Analysis<M>,
        evaluator: &mut E,
    ) {
        if self.root.is_none() {
            return;
        }
        a.score_lead = self.root;
        let me = game.to_move();
        for m in a.moves.iter_mut().filter(|m| m.visits > 0) {
            let known = self.after.iter().find(|(mv, _)| *mv == m.mv).map(|x| x.1);
            let s = known.or_else(|| {
                let mut g = game.clone();
                g.play(m.mv);
                let s = if g.is_terminal() {
                    None
                } else {
                    evaluator.final_estimate(&g).map(|e| {
                        let s = f64::from(e.score);
                        if me == tabula_core::Player::First {
                            s
                        } else {
                            -s
                        }
                    })
                }?;
                self.after.push((m.mv, s));
                Some(s)
            });
            m.score_lead = s;
        }
    }
}

/// UCT (with RAVE) over a game's playout knowledge; it measures the final score of its
/// playouts when the knowledge can score a finished game.
pub struct UctAnalyzer<G: Game> {
    /// The search's settings (`simulations`, `time_limit` and `seed` are set per call
    /// from the limits).
    pub config: UctConfig,
    /// Playout policy and priors.
    pub knowledge: Box<dyn Knowledge<G>>,
    /// The root's moves are these actions only (`None`: every legal move).
    pub root_actions: Option<Vec<usize>>,
}

impl<G: Game> Analyzer<G> for UctAnalyzer<G> {
    fn analyze(
        &mut self,
        game: &G,
        limits: &AnalysisLimits,
        stop: &AtomicBool,
        report: &mut dyn FnMut(&Analysis<G::Move>),
    ) -> Analysis<G::Move> {
        let config = UctConfig {
            simulations: limits.simulations(),
            time_limit: limits.max_time,
            track_score: true,
            ..self.config
        };
        let mut uct = Uct::with_knowledge(config, &*self.knowledge);
        uct.restrict_root(self.root_actions.clone());
        let mut reporter = Reporter::new(limits.report_every);
        uct.search_with(game, |uct, _| {
            if reporter.due() {
                report(&uct.analysis(limits.pv_length));
            }
            !stop.load(Ordering::Relaxed)
        });
        uct.analysis(limits.pv_length)
    }

    fn ownership(&mut self, game: &G) -> Option<Vec<f32>> {
        crate::uct::playout_ownership(&self.knowledge, game, 400, self.config.seed)
    }

    fn restrict_root(&mut self, actions: Option<Vec<usize>>) {
        self.root_actions = actions;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluator::UniformEvaluator;
    use crate::uct::Light;
    use tabula_core::TicTacToe;

    fn won_for_x() -> TicTacToe {
        // X to move wins at once in cell 3 (index 2)
        let mut g = TicTacToe::new();
        for m in [0, 3, 1, 4] {
            g.play(m);
        }
        g
    }

    fn check(a: &Analysis<u8>, visits: u64) {
        assert_eq!(a.best(), Some(2), "{a:?}");
        assert!(a.visits >= visits, "{a:?}");
        assert!(a.win_rate > 0.8, "{a:?}");
        let order: Vec<u32> = a.moves.iter().map(|m| m.visits).collect();
        assert!(order.windows(2).all(|w| w[0] >= w[1]), "{order:?}");
        let prior: f64 = a.moves.iter().map(|m| m.prior).sum();
        assert!((prior - 1.0).abs() < 1e-3, "priors sum to {prior}");
        for m in &a.moves {
            assert!(m.lcb <= m.win_rate && (0.0..=1.0).contains(&m.lcb), "{m:?}");
            if m.visits == 0 {
                assert!(m.pv.is_empty(), "{m:?}");
                continue;
            }
            assert_eq!(m.pv.first(), Some(&m.mv));
            // every principal variation is a legal line
            let mut g = won_for_x();
            for &mv in &m.pv {
                assert!(g.try_play(mv).is_ok(), "{:?}", m.pv);
            }
        }
    }

    /// An MCTS analyser with uniform priors and the default settings.
    fn uniform_mcts() -> MctsAnalyzer<Box<UniformEvaluator>> {
        MctsAnalyzer {
            evaluator: Box::new(UniformEvaluator),
            settings: SearchSettings::default(),
            seed: 1,
            root_actions: None,
        }
    }

    #[test]
    fn mcts_and_uct_analyses_find_the_win_and_report_as_asked() {
        let limits = AnalysisLimits {
            max_visits: Some(3000),
            max_time: Some(Duration::from_secs(20)),
            report_every: Some(Duration::ZERO),
            pv_length: 5,
        };
        let stop = AtomicBool::new(false);
        let mut mcts = uniform_mcts();
        let mut reports = 0;
        let a = mcts.analyze(&won_for_x(), &limits, &stop, &mut |_| reports += 1);
        check(&a, 3000);
        assert!(reports > 10, "{reports} reports");
        let mut uct = UctAnalyzer {
            config: UctConfig::default(),
            knowledge: Box::new(Light),
            root_actions: None,
        };
        let mut last = 0;
        let a = uct.analyze(&won_for_x(), &limits, &stop, &mut |r| {
            assert!(r.visits >= last);
            last = r.visits;
        });
        check(&a, 3000);
        assert!(last > 0);
    }

    #[test]
    fn a_proven_win_is_reported_as_certain_and_first() {
        let limits = AnalysisLimits {
            max_visits: Some(200),
            max_time: Some(Duration::from_secs(20)),
            report_every: None,
            pv_length: 5,
        };
        let stop = AtomicBool::new(false);
        let mut mcts = uniform_mcts();
        let a = mcts.analyze(&won_for_x(), &limits, &stop, &mut |_| {});
        assert_eq!(a.best(), Some(2));
        assert_eq!(
            (a.win_rate, a.moves[0].win_rate, a.moves[0].lcb),
            (1.0, 1.0, 1.0)
        );
        // without the solver the same search only estimates it
        mcts.settings.solver = false;
        let a = mcts.analyze(&won_for_x(), &limits, &stop, &mut |_| {});
        assert!(a.win_rate < 1.0 && a.moves[0].lcb < 1.0, "{a:?}");
    }

    #[test]
    fn a_set_stop_ends_the_search_at_once() {
        let limits = AnalysisLimits {
            max_visits: None,
            max_time: None,
            report_every: None,
            pv_length: 5,
        };
        let stop = AtomicBool::new(true);
        let started = Instant::now();
        let mut uct = UctAnalyzer {
            config: UctConfig::default(),
            knowledge: Box::new(Light),
            root_actions: None,
        };
        let a = uct.analyze(&TicTacToe::new(), &limits, &stop, &mut |_| {});
        assert!(a.visits <= 16, "{a:?}");
        let mut mcts = uniform_mcts();
        mcts.analyze(&TicTacToe::new(), &limits, &stop, &mut |_| {});
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn lcb_is_below_the_rate_and_tightens_with_visits() {
        assert_eq!(lower_confidence_bound(0.9, 0), 0.0);
        let few = lower_confidence_bound(0.6, 10);
        let many = lower_confidence_bound(0.6, 10_000);
        assert!(few < many && many < 0.6, "{few} {many}");
        assert!(lower_confidence_bound(1.0, 1) < 0.7);
    }
}
