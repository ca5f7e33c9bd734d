//! Monte-Carlo tree search with UCT and random playouts, for any [`Game`].
//!
//! Each simulation walks down the tree by UCB1 (win rate + `c·√(ln N / n)`), expands a
//! leaf with all its moves, plays the game out with [`Game::rollout_move`] and backs the
//! result up. Nodes live in one arena (`Vec`), children in contiguous runs. Values are
//! kept from the side of the player who made the move into a node. The move played is
//! the most visited. Deterministic for a given seed.
//!
//! With `rave` on, each node also keeps all-moves-as-first statistics (RAVE, Gelly &
//! Silver): a move's value is learned from every simulation in which its player
//! played it later on, and blended with the node's own value by
//! `β = √(k / (3n + k))`, which matters early (few visits) and fades as `n` grows.
//! It helps in games where a move's value depends little on when it is played (Go).
//!
//! What the search knows of a game beyond its rules comes from a [`Knowledge`]: the
//! playout policy (by default [`Game::rollout_move`], light random moves) and priors
//! for new nodes — virtual simulations that start a move's value where knowledge
//! says (Go's heavy playouts and 3x3 patterns: `crate::go_knowledge`).
//!
//! Several threads can grow one tree together ([`search_parallel`]): the walk down
//! and the back-up hold a lock, the playouts run outside it, and a virtual loss keeps
//! the threads off each other's paths.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tabula_core::{Game, Outcome, Player};

use crate::analysis::{lower_confidence_bound, Analysis, MoveInfo};

/// How long and how widely to search.
#[derive(Clone, Copy, Debug)]
pub struct UctConfig {
    /// Exploration constant `c` of UCB1.
    pub exploration: f64,
    /// Simulations per search (an upper bound when a time limit is set).
    pub simulations: usize,
    /// Wall-clock limit per search.
    pub time_limit: Option<Duration>,
    /// Seed of the playouts.
    pub seed: u64,
    /// Blend in all-moves-as-first statistics (RAVE) with this equivalence `k`
    /// (0 turns RAVE off).
    pub rave: f64,
    /// How the RAVE value is weighed against a node's own.
    pub rave_schedule: RaveSchedule,
    /// Keep each node's mean final score (from [`Knowledge::final_score`]), for
    /// analysis; off in play, where only winning counts.
    pub track_score: bool,
    /// Share of a playout's result given by its margin instead of its winner (0 to
    /// 1; 0: winning is all). A result is `(1 − w)·win + w·(1 + m)/2` with the margin
    /// `m` = final score / [`score_points`](Self::score_points), clamped to ±1:
    /// among moves that win equally often, the search prefers those that win by
    /// more, a buffer against its own misjudgements (Pachi's `val_scale`).
    pub score_weight: f64,
    /// The margin (points) at which the score's share of a result is full.
    pub score_points: f64,
}

impl Default for UctConfig {
    fn default() -> Self {
        UctConfig {
            exploration: 1.0,
            simulations: 10_000,
            time_limit: None,
            seed: 1,
            rave: 0.0,
            rave_schedule: RaveSchedule::Samples,
            track_score: false,
            score_weight: 0.0,
            score_points: 20.0,
        }
    }
}

/// How RAVE's all-moves-as-first value is weighed against a node's own value: the
/// weight β of the RAVE value, with equivalence `k`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RaveSchedule {
    /// β = √(k / (3n + k)) by the node's visits n (Gelly and Silver's hand-set
    /// schedule): the RAVE value decides while n is small, however few its samples.
    Visits,
    /// β = r / (r + n + r·n/k) by its RAVE samples r and its visits n, prior visits
    /// included (Gelly and Silver's minimum-error schedule, as Pachi): a move seen
    /// once or twice in other simulations is judged by its prior until more come.
    /// The default: on 9x9 it beat `Visits` in 25 of 30 games at equal time.
    #[default]
    Samples,
}

impl RaveSchedule {
    /// The weight of the RAVE value for a move with `n` visits (priors included) and
    /// `r` RAVE samples, at equivalence `k`.
    pub fn beta(self, k: f64, n: f64, r: f64) -> f64 {
        match self {
            RaveSchedule::Visits => (k / (3.0 * n + k)).sqrt(),
            RaveSchedule::Samples => r / (r + n + r * n / k),
        }
    }
}

/// Game knowledge a UCT search uses: how playouts pick moves, and priors for new nodes.
pub trait Knowledge<G: Game> {
    /// The next move of a playout (`None` when the game is over).
    fn playout_move(&self, game: &G, random: &mut dyn FnMut(usize) -> usize) -> Option<G::Move> {
        game.rollout_move(random)
    }

    /// Virtual simulations for each of `moves` (the children of a new node, legal in
    /// `game`): `(visits, wins for the player to move)`. Leave `out` empty for none.
    fn priors(&self, _game: &G, _moves: &[G::Move], _out: &mut Vec<(f32, f32)>) {}

    /// The final score of a finished playout for the first player (Go: Black's area
    /// minus White's minus komi), if the game has scores.
    fn final_score(&self, _game: &G) -> Option<f32> {
        None
    }

    /// Who owns each point of a finished playout (+1 the first player, −1 the second,
    /// 0 neither; row-major), if the game has territory.
    fn final_owners(&self, _game: &G) -> Option<Vec<f32>> {
        None
    }

    /// The final owners and score (as [`Game::final_ownership`]) of a game that ended
    /// in a count, once the stones these playouts read as dead are taken off, as
    /// players agree on them before counting (Go). `None` when nothing needs settling:
    /// the game's own count stands.
    fn settled_final(&self, _game: &G, _seed: u64) -> Option<(Vec<f32>, f32)> {
        None
    }

    /// Whether the search should show [`Knowledge::learn`] every simulation's playout
    /// (a playout policy that adapts during a search, such as last-good-reply).
    fn learns(&self) -> bool {
        false
    }

    /// A finished playout: `before`, the move that led to its first position (the
    /// last tree move; `None` from the root), then its `moves` in order, the first
    /// by `first`; and its outcome.
    fn learn(
        &self,
        _before: Option<G::Move>,
        _first: Player,
        _moves: &[G::Move],
        _outcome: Option<Outcome>,
    ) {
    }
}

macro_rules! forward_knowledge {
    ($($t:ty),*) => {$(
        impl<G: Game, K: Knowledge<G> + ?Sized> Knowledge<G> for $t {
            fn playout_move(
                &self,
                game: &G,
                random: &mut dyn FnMut(usize) -> usize,
            ) -> Option<G::Move> {
                (**self).playout_move(game, random)
            }

            fn priors(&self, game: &G, moves: &[G::Move], out: &mut Vec<(f32, f32)>) {
                (**self).priors(game, moves, out)
            }

            fn final_score(&self, game: &G) -> Option<f32> {
                (**self).final_score(game)
            }

            fn final_owners(&self, game: &G) -> Option<Vec<f32>> {
                (**self).final_owners(game)
            }

            fn settled_final(&self, game: &G, seed: u64) -> Option<(Vec<f32>, f32)> {
                (**self).settled_final(game, seed)
            }

            fn learns(&self) -> bool {
                (**self).learns()
            }

            fn learn(
                &self,
                before: Option<G::Move>,
                first: Player,
                moves: &[G::Move],
                outcome: Option<Outcome>,
            ) {
                (**self).learn(before, first, moves, outcome)
            }
        }
    )*};
}

forward_knowledge!(Box<K>, &K);

/// No knowledge: light random playouts, no priors.
#[derive(Clone, Copy, Debug, Default)]
pub struct Light;

impl<G: Game> Knowledge<G> for Light {}

#[derive(Clone)]
struct Node<M> {
    mv: Option<M>,
    /// The player who made `mv`.
    mover: Player,
    first_child: u32,
    child_count: u32,
    expanded: bool,
    visits: u32,
    /// Sum of results for `mover` (win 1, draw 0.5, loss 0).
    wins: f64,
    /// Simulations below the parent in which `mover` played `mv` at some point.
    amaf_visits: u32,
    /// Sum of their results for `mover`.
    amaf_wins: f64,
    /// Virtual simulations from the priors, counted in the value but not in `visits`.
    prior_visits: f32,
    /// Their wins for `mover`.
    prior_wins: f32,
    /// Sum of final scores for `mover` (with `track_score`).
    score_sum: f64,
    /// Sum of their squares.
    score_squares: f64,
}

impl<M> Node<M> {
    fn new(mv: Option<M>, mover: Player, prior_visits: f32, prior_wins: f32) -> Self {
        Node {
            mv,
            mover,
            first_child: 0,
            child_count: 0,
            expanded: false,
            visits: 0,
            wins: 0.0,
            amaf_visits: 0,
            amaf_wins: 0.0,
            prior_visits,
            prior_wins,
            score_sum: 0.0,
            score_squares: 0.0,
        }
    }
}

/// One root move after a search.
#[derive(Clone, Debug, PartialEq)]
pub struct MoveStats<M> {
    /// The move.
    pub mv: M,
    /// Simulations through it.
    pub visits: u32,
    /// Mean result for the player to move at the root (0 to 1).
    pub win_rate: f64,
}

/// What a search found.
#[derive(Clone, Debug)]
pub struct UctResult<M> {
    /// The most visited move (`None` if the game is over).
    pub best: Option<M>,
    /// Every root move, most visited first.
    pub moves: Vec<MoveStats<M>>,
    /// Simulations run.
    pub simulations: usize,
    /// Win rate of the best move for the side to move.
    pub win_rate: f64,
}

impl<M: Copy> UctResult<M> {
    /// A move drawn with probability ∝ visits^(1/temperature); the best at
    /// temperature 0 (as [`crate::MctsResult::choose`]).
    pub fn choose(&self, temperature: f32, rng: &mut impl Rng) -> Option<M> {
        if temperature <= 1e-3 || self.moves.is_empty() {
            return self.best;
        }
        let weights: Vec<f32> = self
            .moves
            .iter()
            .map(|m| (m.visits as f32).powf(1.0 / temperature))
            .collect();
        Some(self.moves[crate::evaluator::sample_index(&weights, rng)].mv)
    }

    /// The result of root `moves` after `simulations`: most visited first (ties to the
    /// higher win rate), the first of them best.
    fn ranked(mut moves: Vec<MoveStats<M>>, simulations: usize) -> UctResult<M> {
        moves.sort_by(|a, b| {
            b.visits
                .cmp(&a.visits)
                .then(b.win_rate.total_cmp(&a.win_rate))
        });
        UctResult {
            best: moves.first().map(|m| m.mv),
            win_rate: moves.first().map_or(0.5, |m| m.win_rate),
            moves,
            simulations,
        }
    }
}

/// A UCT searcher.
pub struct Uct<G: Game, K: Knowledge<G> = Light> {
    config: UctConfig,
    rng: ChaCha8Rng,
    nodes: Vec<Node<G::Move>>,
    knowledge: K,
    priors: Vec<(f32, f32)>,
    /// The root's moves are these actions only; `None`: every legal move.
    root_actions: Option<Vec<usize>>,
    started: Instant,
    /// The position at the root of `nodes`.
    root_game: Option<G>,
    /// Whether the next search continues the tree [`Uct::reroot`] kept.
    kept: bool,
}

/// What identifies a position for tree reuse: hash, ply and side to move.
fn position_key<G: Game>(g: &G) -> (u64, usize, Player) {
    (g.position_hash(), g.ply(), g.to_move())
}

impl<G: Game> Uct<G> {
    /// A searcher with this configuration and no game knowledge.
    pub fn new(config: UctConfig) -> Self {
        Uct::with_knowledge(config, Light)
    }

    /// Plays `game` to its end with rollout moves; returns the outcome.
    pub fn playout(game: &mut G, rng: &mut ChaCha8Rng) -> Option<Outcome> {
        playout_recording(&Light, game, rng, None, None)
    }
}

/// Plays `game` to its end with `knowledge`'s playout moves, recording for each
/// player which actions it played if asked; returns the outcome.
fn playout_recording<G: Game, K: Knowledge<G>>(
    knowledge: &K,
    game: &mut G,
    rng: &mut ChaCha8Rng,
    mut played: Option<&mut [Vec<bool>; 2]>,
    mut moves: Option<&mut Vec<G::Move>>,
) -> Option<Outcome> {
    let mut random = |n: usize| rng.random_range(0..n);
    while let Some(mv) = knowledge.playout_move(game, &mut random) {
        if let Some(p) = played.as_deref_mut() {
            p[game.to_move().index()][game.action_of(mv)] = true;
        }
        if let Some(m) = moves.as_deref_mut() {
            m.push(mv);
        }
        game.play(mv);
    }
    game.outcome()
}

/// Plays a simulation's `game` out from the leaf with `knowledge`'s policy, adding the
/// playout's moves to `played` when RAVE is on and showing them to a knowledge that
/// learns (`before`: the last tree move; `moves`: a buffer); the outcome and, with
/// `track_score` or a score weight, the final score for the first player.
fn simulate<G: Game, K: Knowledge<G>>(
    config: &UctConfig,
    knowledge: &K,
    game: &mut G,
    rng: &mut ChaCha8Rng,
    played: &mut [Vec<bool>; 2],
    before: Option<G::Move>,
    moves: &mut Vec<G::Move>,
) -> (Option<Outcome>, Option<f64>) {
    let learns = knowledge.learns();
    moves.clear();
    let first = game.to_move();
    let outcome = playout_recording(
        knowledge,
        game,
        rng,
        (config.rave > 0.0).then_some(played),
        learns.then_some(&mut *moves),
    );
    if learns {
        knowledge.learn(before, first, moves, outcome);
    }
    let score = if config.track_score || config.score_weight > 0.0 {
        knowledge.final_score(game).map(f64::from)
    } else {
        None
    };
    (outcome, score)
}

impl<G: Game, K: Knowledge<G>> Uct<G, K> {
    /// A searcher with this configuration that uses `knowledge`.
    pub fn with_knowledge(config: UctConfig, knowledge: K) -> Self {
        Uct {
            config,
            rng: ChaCha8Rng::seed_from_u64(config.seed),
            nodes: Vec::new(),
            knowledge,
            priors: Vec::new(),
            root_actions: None,
            started: Instant::now(),
            root_game: None,
            kept: false,
        }
    }

    /// Searches only these root actions (KataGo's `allowMoves`/`avoidMoves` at the
    /// root); `None`: every legal move.
    pub fn restrict_root(&mut self, actions: Option<Vec<usize>>) {
        self.root_actions = actions;
    }

    /// Plays `game` to its end with this searcher's playout policy.
    pub fn playout_with_knowledge(&mut self, game: &mut G) -> Option<Outcome> {
        playout_recording(&self.knowledge, game, &mut self.rng, None, None)
    }

    /// The configuration.
    pub fn config_mut(&mut self) -> &mut UctConfig {
        &mut self.config
    }

    fn result_for(outcome: Option<Outcome>, player: Player) -> f64 {
        match outcome {
            Some(Outcome::Win(p)) if p == player => 1.0,
            Some(Outcome::Win(_)) => 0.0,
            _ => 0.5,
        }
    }

    /// A playout's result for `player` (0 to 1): its winner, blended with its final
    /// `score` (for the first player) when the configuration weighs the margin.
    fn reward(&self, outcome: Option<Outcome>, score: Option<f64>, player: Player) -> f64 {
        let win = Self::result_for(outcome, player);
        let w = self.config.score_weight;
        match score {
            Some(s) if w > 0.0 => {
                let s = if player == Player::First { s } else { -s };
                let m = (s / self.config.score_points.max(1e-9)).clamp(-1.0, 1.0);
                (1.0 - w) * win + w * 0.5 * (1.0 + m)
            }
            _ => win,
        }
    }

    /// Searches from `root`.
    pub fn search(&mut self, root: &G) -> UctResult<G::Move> {
        self.search_with(root, |_, _| true)
    }

    /// Searches from `root`, calling `hook(self, simulations)` every 16 simulations;
    /// the search stops early when it returns `false` (a caller watching the search:
    /// [`Uct::analysis`]).
    pub fn search_with(
        &mut self,
        root: &G,
        mut hook: impl FnMut(&Self, usize) -> bool,
    ) -> UctResult<G::Move> {
        let mut sims = self.begin(root);
        let start = self.started;
        let mut path = Vec::with_capacity(64);
        let mut played: [Vec<bool>; 2] = [Vec::new(), Vec::new()];
        let mut moves = Vec::new();
        while sims < self.config.simulations {
            if sims.is_multiple_of(16) {
                if self.config.time_limit.is_some_and(|t| start.elapsed() >= t) {
                    break;
                }
                if !hook(self, sims) {
                    break;
                }
            }
            if root.is_terminal() {
                break;
            }
            let mut game = root.clone();
            self.descend(root, &mut game, &mut path, &mut played, false);
            let before = path.last().and_then(|&i| self.nodes[i].mv);
            let (outcome, score) = simulate(
                &self.config,
                &self.knowledge,
                &mut game,
                &mut self.rng,
                &mut played,
                before,
                &mut moves,
            );
            self.back_up(root, &path, outcome, score, &played, false);
            sims += 1;
        }
        self.summary(sims)
    }

    /// Starts a new tree at `root`.
    fn reset(&mut self, root: &G) {
        self.nodes.clear();
        self.nodes
            .push(Node::new(None, root.to_move().other(), 0.0, 0.0));
        self.started = Instant::now();
        self.root_game = Some(root.clone());
    }

    /// Starts a search at `root`: on the subtree [`Uct::reroot`] kept for it (with
    /// new random numbers from the configuration's seed), else on a new tree. Returns
    /// the simulations already behind the root, which count towards the cap.
    fn begin(&mut self, root: &G) -> usize {
        let kept = std::mem::take(&mut self.kept)
            && self
                .root_game
                .as_ref()
                .is_some_and(|g| position_key(g) == position_key(root));
        if kept {
            self.started = Instant::now();
            self.rng = ChaCha8Rng::seed_from_u64(self.config.seed);
            self.nodes[0].visits as usize
        } else {
            self.reset(root);
            0
        }
    }

    /// Moves the root down to `target` if the last search reached it within
    /// `max_depth` plies (the player's own move and the opponent's answer), keeping the
    /// subtree below it for the next search on `target`, whose simulations there count
    /// as spent. Returns `false`, the tree unchanged, when `target` is not in the tree.
    pub fn reroot(&mut self, target: &G, max_depth: usize) -> bool {
        let Some(game) = self.root_game.clone().filter(|_| !self.nodes.is_empty()) else {
            return false;
        };
        let want = position_key(target);
        let found = if position_key(&game) == want {
            Some(0)
        } else {
            self.find(0, &game, &want, max_depth)
        };
        let Some(node) = found else {
            return false;
        };
        self.keep_subtree(node);
        self.root_game = Some(target.clone());
        self.kept = true;
        true
    }

    /// The visited node below `node` (at `game`), at most `depth` plies down, whose
    /// position is keyed `want`.
    fn find(
        &self,
        node: usize,
        game: &G,
        want: &(u64, usize, Player),
        depth: usize,
    ) -> Option<usize> {
        if depth == 0 {
            return None;
        }
        let n = &self.nodes[node];
        (n.first_child as usize..(n.first_child + n.child_count) as usize).find_map(|c| {
            let mv = self.nodes[c].mv.filter(|_| self.nodes[c].visits > 0)?;
            let mut next = game.clone();
            next.play(mv);
            if position_key(&next) == *want {
                Some(c)
            } else {
                self.find(c, &next, want, depth - 1)
            }
        })
    }

    /// Keeps only the subtree below `root`, renumbered with `root` first (children stay
    /// in one block each, as [`Uct::descend`] made them).
    fn keep_subtree(&mut self, root: usize) {
        let mut nodes = vec![self.nodes[root].clone()];
        let mut from = vec![root];
        let mut i = 0;
        while i < nodes.len() {
            let (first, count) = (
                self.nodes[from[i]].first_child,
                self.nodes[from[i]].child_count,
            );
            nodes[i].first_child = nodes.len() as u32;
            for c in first..first + count {
                nodes.push(self.nodes[c as usize].clone());
                from.push(c as usize);
            }
            i += 1;
        }
        self.nodes = nodes;
    }

    /// One simulation's way down from the root: selects, expands a leaf and steps into
    /// one of its new children, playing the moves on `game` (a copy of `root`) and
    /// leaving the nodes in `path` and, with RAVE, the moves each side played in
    /// `played`. With `virtual_loss`, each node on the path counts the visit at once, as
    /// a loss for its mover until [`Uct::back_up`] adds the result, so that searches
    /// sharing the tree spread out instead of following each other.
    fn descend(
        &mut self,
        root: &G,
        game: &mut G,
        path: &mut Vec<usize>,
        played: &mut [Vec<bool>; 2],
        virtual_loss: bool,
    ) {
        path.clear();
        let mut node = 0usize;
        path.push(node);
        // select
        while self.nodes[node].expanded && self.nodes[node].child_count > 0 {
            node = self.select(node);
            if let Some(mv) = self.nodes[node].mv {
                game.play(mv);
            }
            path.push(node);
        }
        // expand
        if !self.nodes[node].expanded && !game.is_terminal() {
            let mut moves = game.legal_moves();
            if let (0, Some(allowed)) = (node, &self.root_actions) {
                moves.retain(|m| allowed.contains(&game.action_of(*m)));
            }
            let first = self.nodes.len() as u32;
            let mover = game.to_move();
            self.priors.clear();
            self.knowledge.priors(game, &moves, &mut self.priors);
            let with_priors = self.priors.len() == moves.len();
            for (i, mv) in moves.into_iter().enumerate() {
                let (prior_visits, prior_wins) = if with_priors {
                    self.priors[i]
                } else {
                    (0.0, 0.0)
                };
                self.nodes
                    .push(Node::new(Some(mv), mover, prior_visits, prior_wins));
            }
            let count = self.nodes.len() as u32 - first;
            let n = &mut self.nodes[node];
            n.expanded = true;
            n.first_child = first;
            n.child_count = count;
            // step into one new child, so every simulation reaches a root move
            if count > 0 {
                node = self.select(node);
                if let Some(mv) = self.nodes[node].mv {
                    game.play(mv);
                }
                path.push(node);
            }
        }
        if virtual_loss {
            for &i in path.iter() {
                self.nodes[i].visits += 1;
            }
        }
        if self.config.rave > 0.0 {
            // actions played by each player from the root on: the tree part here, the
            // playout's in `simulate`
            for side in played.iter_mut() {
                side.clear();
                side.resize(root.action_count(), false);
            }
            for &i in &path[1..] {
                let n = &self.nodes[i];
                if let Some(mv) = n.mv {
                    played[n.mover.index()][root.action_of(mv)] = true;
                }
            }
        }
    }

    /// Adds a simulation's `outcome` (and final `score`) to the nodes on its `path`,
    /// and with RAVE to the siblings whose move their player made later (`played`).
    /// With `virtual_loss`, the visits were counted on the way down.
    fn back_up(
        &mut self,
        root: &G,
        path: &[usize],
        outcome: Option<Outcome>,
        score: Option<f64>,
        played: &[Vec<bool>; 2],
        virtual_loss: bool,
    ) {
        let rewards = [
            self.reward(outcome, score, Player::First),
            self.reward(outcome, score, Player::Second),
        ];
        for &i in path {
            let n = &mut self.nodes[i];
            if !virtual_loss {
                n.visits += 1;
            }
            n.wins += rewards[n.mover.index()];
            if let Some(s) = score {
                let s = if n.mover == Player::First { s } else { -s };
                n.score_sum += s;
                n.score_squares += s * s;
            }
        }
        if self.config.rave > 0.0 {
            // every child of a node on the path whose move its player played later
            for &i in path {
                let (first, count) = (
                    self.nodes[i].first_child as usize,
                    self.nodes[i].child_count as usize,
                );
                for c in first..first + count {
                    let ch = &mut self.nodes[c];
                    if let Some(mv) = ch.mv {
                        if played[ch.mover.index()][root.action_of(mv)] {
                            ch.amaf_visits += 1;
                            ch.amaf_wins += rewards[ch.mover.index()];
                        }
                    }
                }
            }
        }
    }

    /// A snapshot of the current (or last) search from the root's side to move: every
    /// root move with its visits, win rate, prior share, principal variation (at most
    /// `pv_length` moves) and, with `track_score`, its mean final score.
    pub fn analysis(&self, pv_length: usize) -> Analysis<G::Move> {
        let Some(root) = self.nodes.first() else {
            return Analysis {
                visits: 0,
                win_rate: 0.5,
                score_lead: None,
                moves: Vec::new(),
                elapsed: Duration::ZERO,
            };
        };
        let children = root.first_child as usize..(root.first_child + root.child_count) as usize;
        let prior_total: f64 = children
            .clone()
            .map(|c| f64::from(self.nodes[c].prior_wins))
            .sum();
        let uniform = 1.0 / children.len().max(1) as f64;
        let score = |n: &Node<G::Move>| {
            (self.config.track_score && n.visits > 0).then(|| {
                let mean = n.score_sum / f64::from(n.visits);
                let var = (n.score_squares / f64::from(n.visits) - mean * mean).max(0.0);
                (mean, var.sqrt())
            })
        };
        let mut moves: Vec<MoveInfo<G::Move>> = children
            .filter_map(|c| {
                let n = &self.nodes[c];
                let win_rate = if n.visits > 0 {
                    n.wins / f64::from(n.visits)
                } else {
                    0.5
                };
                let prior = if prior_total > 0.0 {
                    f64::from(n.prior_wins) / prior_total
                } else {
                    uniform
                };
                let s = score(n);
                let (pv, pv_visits) = self.principal_variation(c, pv_length);
                Some(MoveInfo {
                    mv: n.mv?,
                    visits: n.visits,
                    win_rate,
                    prior,
                    lcb: lower_confidence_bound(win_rate, n.visits),
                    score_lead: s.map(|s| s.0),
                    score_stdev: s.map(|s| s.1),
                    pv,
                    pv_visits,
                })
            })
            .collect();
        Analysis::rank(&mut moves);
        // the root's own statistics are kept for the player who moved into it
        let win_rate = if root.visits > 0 {
            1.0 - root.wins / f64::from(root.visits)
        } else {
            0.5
        };
        Analysis {
            visits: u64::from(root.visits),
            win_rate,
            score_lead: score(root).map(|s| -s.0),
            moves,
            elapsed: self.started.elapsed(),
        }
    }

    /// The line from node `from` down the most visited children, at most `max` moves,
    /// and the visits of each.
    fn principal_variation(&self, from: usize, max: usize) -> (Vec<G::Move>, Vec<u32>) {
        let (mut line, mut visits) = (Vec::new(), Vec::new());
        let mut node = from;
        while line.len() < max && self.nodes[node].visits > 0 {
            line.extend(self.nodes[node].mv);
            visits.push(self.nodes[node].visits);
            let n = &self.nodes[node];
            let children = n.first_child as usize..(n.first_child + n.child_count) as usize;
            match children
                .filter(|&c| self.nodes[c].visits > 0)
                .max_by_key(|&c| self.nodes[c].visits)
            {
                Some(c) => node = c,
                None => break,
            }
        }
        (line, visits)
    }

    fn select(&mut self, node: usize) -> usize {
        let n = &self.nodes[node];
        let (first, count) = (n.first_child as usize, n.child_count as usize);
        let ln_parent = (n.visits.max(1) as f64).ln();
        // without priors, unvisited children first, in a random order (with them, the
        // priors' virtual simulations stand in for a first visit)
        if self.nodes[first].prior_visits == 0.0 {
            let offset = self.rng.random_range(0..count);
            for k in 0..count {
                let c = first + (offset + k) % count;
                if self.nodes[c].visits == 0 {
                    return c;
                }
            }
        }
        let mut best = first;
        let mut best_score = f64::NEG_INFINITY;
        let k = self.config.rave;
        for c in first..first + count {
            let ch = &self.nodes[c];
            let n = ch.visits as f64 + f64::from(ch.prior_visits);
            let mut value = (ch.wins + f64::from(ch.prior_wins)) / n.max(1e-9);
            if k > 0.0 && ch.amaf_visits > 0 {
                let beta = self
                    .config
                    .rave_schedule
                    .beta(k, n, f64::from(ch.amaf_visits));
                value = beta * (ch.amaf_wins / ch.amaf_visits as f64) + (1.0 - beta) * value;
            }
            let score = value + self.config.exploration * (ln_parent / n.max(1.0)).sqrt();
            if score > best_score {
                best_score = score;
                best = c;
            }
        }
        best
    }

    fn summary(&self, sims: usize) -> UctResult<G::Move> {
        let root = &self.nodes[0];
        let moves: Vec<MoveStats<G::Move>> = (root.first_child
            ..root.first_child + root.child_count)
            .filter_map(|i| {
                let n = &self.nodes[i as usize];
                n.mv.map(|mv| MoveStats {
                    mv,
                    visits: n.visits,
                    win_rate: if n.visits > 0 {
                        n.wins / n.visits as f64
                    } else {
                        0.5
                    },
                })
            })
            .collect();
        UctResult::ranked(moves, sims)
    }
}

/// The mean result of `playouts` playouts from `pos` with `knowledge`'s policy, for the
/// side to move there (−1 to 1; a playout without an outcome counts 0).
pub fn mean_playout_value<G: Game, K: Knowledge<G>>(
    knowledge: &K,
    pos: &G,
    playouts: usize,
    rng: &mut ChaCha8Rng,
) -> f32 {
    let me = pos.to_move();
    let mut total = 0.0;
    for _ in 0..playouts.max(1) {
        let mut g = pos.clone();
        let outcome = playout_recording(knowledge, &mut g, rng, None, None);
        total += outcome.map_or(0.0, |o| o.value_for(me));
    }
    total / playouts.max(1) as f32
}

/// Ownership: every point's mean owner at the end of `playouts` playouts from `pos`
/// with `knowledge`'s policy (+1 the first player to −1 the second, row-major), if the
/// knowledge can tell owners.
pub fn playout_ownership<G: Game, K: Knowledge<G>>(
    knowledge: &K,
    pos: &G,
    playouts: usize,
    seed: u64,
) -> Option<Vec<f32>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut sum: Option<Vec<f32>> = None;
    for _ in 0..playouts.max(1) {
        let mut g = pos.clone();
        playout_recording(knowledge, &mut g, &mut rng, None, None);
        let owners = knowledge.final_owners(&g)?;
        match &mut sum {
            Some(s) => s.iter_mut().zip(&owners).for_each(|(s, o)| *s += o),
            None => sum = Some(owners),
        }
    }
    let n = playouts.max(1) as f32;
    sum.map(|s| s.into_iter().map(|x| x / n).collect())
}

/// Tree parallelism: `threads` searches of `root` share one tree behind a lock, held
/// only to walk down and to back up — the playouts, nearly all the work, run outside
/// it — with a virtual loss on the path a search is playing out below, so that the
/// others look elsewhere. `config.simulations` and the time limit are for all of them
/// together; each thread's playouts draw from their own seed (`config.seed + 1 + t`),
/// so with several threads the result depends on timing. With one thread it is
/// [`Uct::search`].
pub fn search_parallel<G: Game, K: Knowledge<G> + Clone + Send>(
    config: UctConfig,
    knowledge: &K,
    root: &G,
    threads: usize,
) -> UctResult<G::Move> {
    Uct::with_knowledge(config, knowledge.clone()).search_threads(root, threads)
}

impl<G: Game, K: Knowledge<G> + Clone + Send> Uct<G, K> {
    /// Searches from `root` on `threads` threads sharing this tree (see
    /// [`search_parallel`]), continuing the subtree [`Uct::reroot`] kept for `root`.
    pub fn search_threads(&mut self, root: &G, threads: usize) -> UctResult<G::Move> {
        if threads <= 1 || root.is_terminal() {
            return self.search(root);
        }
        let begun = AtomicUsize::new(self.begin(root));
        let (config, started, knowledge) = (self.config, self.started, self.knowledge.clone());
        let tree = Mutex::new(self);
        // a poisoned lock means a search thread panicked, which the scope re-raises
        let lock = || tree.lock().unwrap_or_else(PoisonError::into_inner);
        std::thread::scope(|scope| {
            for t in 0..threads {
                let (lock, begun, knowledge) = (&lock, &begun, knowledge.clone());
                scope.spawn(move || {
                    let mut rng = ChaCha8Rng::seed_from_u64(config.seed.wrapping_add(1 + t as u64));
                    let mut path = Vec::with_capacity(64);
                    let mut played: [Vec<bool>; 2] = [Vec::new(), Vec::new()];
                    let mut moves = Vec::new();
                    while begun.fetch_add(1, Ordering::Relaxed) < config.simulations
                        && config.time_limit.is_none_or(|l| started.elapsed() < l)
                    {
                        let mut game = root.clone();
                        let before = {
                            let mut tree = lock();
                            tree.descend(root, &mut game, &mut path, &mut played, true);
                            path.last().and_then(|&i| tree.nodes[i].mv)
                        };
                        let (outcome, score) = simulate(
                            &config,
                            &knowledge,
                            &mut game,
                            &mut rng,
                            &mut played,
                            before,
                            &mut moves,
                        );
                        lock().back_up(root, &path, outcome, score, &played, true);
                    }
                });
            }
        });
        let uct = tree.into_inner().unwrap_or_else(PoisonError::into_inner);
        // every simulation passes the root once
        let sims = uct.nodes[0].visits as usize;
        uct.summary(sims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::negamax::Negamax;
    use tabula_core::{ConnectFour, Go, GoRules, TicTacToe};

    #[test]
    fn a_score_weight_blends_the_margin_into_the_result() {
        let win = Some(Outcome::Win(Player::First));
        let plain: Uct<Go> = Uct::new(UctConfig::default());
        assert_eq!(plain.reward(win, Some(30.0), Player::First), 1.0);
        let weighed: Uct<Go> = Uct::new(UctConfig {
            score_weight: 0.1,
            score_points: 20.0,
            ..UctConfig::default()
        });
        // a win by 10 of 20 points: 0.9 + 0.1 * 0.75; for the loser 0.1 * 0.25
        assert!((weighed.reward(win, Some(10.0), Player::First) - 0.975).abs() < 1e-12);
        assert!((weighed.reward(win, Some(10.0), Player::Second) - 0.025).abs() < 1e-12);
        // margins beyond the scale are clamped; without a score the winner decides
        assert!((weighed.reward(win, Some(500.0), Player::First) - 1.0).abs() < 1e-12);
        assert_eq!(weighed.reward(win, None, Player::Second), 0.0);
    }

    /// After a search and two plies, the tree moves its root down to the position
    /// reached and keeps the subtree (its visits count towards the cap, on one thread or
    /// two); a position it never reached leaves it unchanged, and a search there starts
    /// afresh.
    #[test]
    fn reroot_keeps_the_subtree_of_the_position_reached() {
        let cfg = UctConfig {
            simulations: 3000,
            seed: 5,
            ..Default::default()
        };
        for threads in [1, 2] {
            let mut uct = Uct::new(cfg);
            let root = ConnectFour::new();
            let first = uct.search_threads(&root, threads);
            let children = |uct: &Uct<ConnectFour>, n: usize| {
                let n = &uct.nodes[n];
                n.first_child as usize..(n.first_child + n.child_count) as usize
            };
            let mine = children(&uct, 0)
                .find(|&c| uct.nodes[c].mv == first.best)
                .unwrap();
            let answer = children(&uct, mine)
                .max_by_key(|&c| uct.nodes[c].visits)
                .unwrap();
            let kept = uct.nodes[answer].visits;
            assert!(kept > 10, "the answer was searched: {kept}");
            let mut g = root;
            g.play(first.best.unwrap());
            g.play(uct.nodes[answer].mv.unwrap());

            let nodes = uct.nodes.len();
            let mut elsewhere = ConnectFour::new();
            for m in [0, 0, 0] {
                elsewhere.play(m);
            }
            assert!(!uct.reroot(&elsewhere, 2), "never reached");
            assert_eq!(uct.nodes.len(), nodes, "a failed reroot changes nothing");

            assert!(uct.reroot(&g, 2));
            assert_eq!(uct.nodes[0].visits, kept);
            let legal = g.legal_moves();
            assert!(children(&uct, 0).all(|c| legal.contains(&uct.nodes[c].mv.unwrap())));
            let second = uct.search_threads(&g, threads);
            assert_eq!(
                second.simulations, 3000,
                "kept visits count towards the cap"
            );
            assert_eq!(uct.nodes[0].visits, 3000);

            let fresh = uct.search_threads(&elsewhere, threads);
            assert_eq!(fresh.simulations, 3000);
            let legal = elsewhere.legal_moves();
            assert!(children(&uct, 0).all(|c| legal.contains(&uct.nodes[c].mv.unwrap())));
        }
    }

    /// The visits schedule trusts one RAVE sample as much as a thousand; the samples
    /// schedule leaves a move to its prior until RAVE has seen it often, and to its own
    /// results once it has many.
    #[test]
    fn the_samples_schedule_weighs_rave_by_its_samples() {
        let k = 3000.0;
        let (v, s) = (RaveSchedule::Visits, RaveSchedule::Samples);
        assert_eq!(v.beta(k, 30.0, 1.0), v.beta(k, 30.0, 1000.0));
        assert!(v.beta(k, 30.0, 1.0) > 0.98);
        assert!(
            s.beta(k, 30.0, 1.0) < 0.05,
            "one sample against 30 prior visits"
        );
        assert!(s.beta(k, 30.0, 3000.0) > 0.9, "many samples, few visits");
        assert!(
            s.beta(k, 30_000.0, 60_000.0) < 0.1,
            "many visits of its own"
        );
        for (n, r) in [(0.0, 1.0), (5.0, 7.0), (1e6, 1e6)] {
            assert!((0.0..=1.0).contains(&s.beta(k, n, r)));
        }
    }

    #[test]
    fn finds_tictactoe_wins_and_blocks() {
        // X to move wins at once in cell 3 (index 2)
        let mut g = TicTacToe::new();
        for m in [0, 3, 1, 4] {
            g.play(m);
        }
        let r = Uct::new(UctConfig {
            simulations: 2000,
            ..Default::default()
        })
        .search(&g);
        assert_eq!(r.best, Some(2));
        assert_eq!(r.simulations, 2000);
        assert_eq!(
            r.moves.iter().map(|m| m.visits as usize).sum::<usize>(),
            2000
        );
        // O to move must block at 2
        let mut g = TicTacToe::new();
        for m in [0, 4, 1] {
            g.play(m);
        }
        let r = Uct::new(UctConfig {
            simulations: 4000,
            ..Default::default()
        })
        .search(&g);
        assert_eq!(r.best, Some(2));
        let mut exact = Negamax::new();
        let mut after = g;
        after.play(2);
        assert!(exact.value(&after) <= 0, "blocking keeps O alive");
    }

    #[test]
    fn rave_search_finds_the_same_tictactoe_win() {
        let mut g = TicTacToe::new();
        for m in [0, 3, 1, 4] {
            g.play(m);
        }
        let cfg = UctConfig {
            simulations: 2000,
            rave: 300.0,
            exploration: 0.4,
            ..Default::default()
        };
        let r = Uct::new(cfg).search(&g);
        assert_eq!(r.best, Some(2));
        assert_eq!(
            r.moves.iter().map(|m| m.visits as usize).sum::<usize>(),
            2000
        );
    }

    #[test]
    fn parallel_searches_share_one_tree_and_undo_their_virtual_losses() {
        let mut g = TicTacToe::new();
        for m in [0, 3, 1, 4] {
            g.play(m);
        }
        let cfg = UctConfig {
            simulations: 2000,
            ..Default::default()
        };
        let r = search_parallel(cfg, &Light, &g, 2);
        assert_eq!(r.best, Some(2));
        assert_eq!(r.simulations, 2000);
        // one tree: the root's moves hold every simulation once, not once per thread
        assert_eq!(
            r.moves.iter().map(|m| m.visits as usize).sum::<usize>(),
            2000
        );
        // the immediate win is a win in every playout through it: no virtual loss is
        // left counted against it
        assert_eq!(r.moves[0].win_rate, 1.0);
        // the time limit holds for all the threads together
        let timed = UctConfig {
            simulations: usize::MAX,
            time_limit: Some(Duration::from_millis(50)),
            ..cfg
        };
        let started = Instant::now();
        let r = search_parallel(timed, &Light, &ConnectFour::new(), 2);
        assert!(started.elapsed() < Duration::from_secs(2));
        assert!(r.simulations > 0);
    }

    #[test]
    fn deterministic_for_a_seed() {
        let g = ConnectFour::new();
        let cfg = UctConfig {
            simulations: 300,
            seed: 9,
            ..Default::default()
        };
        let a = Uct::new(cfg).search(&g);
        let b = Uct::new(cfg).search(&g);
        assert_eq!(a.moves, b.moves);
    }

    #[test]
    fn go_playouts_end_and_search_runs() {
        let g = Go::new(9, GoRules::default()).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for _ in 0..20 {
            let mut p = g.clone();
            let outcome = Uct::<Go>::playout(&mut p, &mut rng);
            assert!(outcome.is_some());
            assert!(p.ply() < 2 * 81 + 21);
        }
        let r = Uct::new(UctConfig {
            simulations: 200,
            ..Default::default()
        })
        .search(&g);
        assert!(r.best.is_some());
    }
}
