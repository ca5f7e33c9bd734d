//! Monte-Carlo tree search with PUCT, for any [`Game`] and any [`Evaluator`] (seed 000's
//! search, grown up).
//!
//! Each simulation **selects** down the tree by `Q + c·P·√N_parent / (1 + N)`, **expands**
//! the leaf with the evaluator's priors, **evaluates** it (the evaluator's value, or the
//! exact result at a terminal position) and **backs up** the value, negated at every ply.
//!
//! Nodes live in one arena (`Vec`), children in contiguous runs. A node's statistics are
//! from the side of the player who moved into it. To evaluate leaves in batches, one
//! search gathers several leaves before asking the evaluator, steering later descents
//! away from pending ones with a *virtual loss*; [`search_many`] advances many searches
//! (e.g. many self-play games) at once and evaluates all their leaves in one batch.
//! Root noise (Dirichlet), first-play urgency, move temperature and tree reuse are in
//! [`MctsConfig`] and [`Mcts::play`]. With [`MctsConfig::solver`] the tree also proves
//! results (Winands, Björnsson and Saito's MCTS-Solver): a node with a winning child, or
//! whose children are all proven, has a known value, which the search then uses instead
//! of its average; a proven win is taken soonest, a proven loss avoided while a move is
//! left that is not one. Deterministic for a seed and a deterministic evaluator.

use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Gamma};
use tabula_core::Game;

use crate::evaluator::{masked_priors, sample_index, Evaluation, Evaluator};

/// The value of a child that has not been visited yet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FirstPlayUrgency {
    /// A fixed value (seed 000 uses 0).
    Absolute(f32),
    /// The parent's value minus a reduction (Leela Zero's FPU reduction).
    ParentMinus(f32),
}

/// How an MCTS search runs.
#[derive(Clone, Copy, Debug)]
pub struct MctsConfig {
    /// `c` of the PUCT formula.
    pub c_puct: f32,
    /// Playouts added by each search.
    pub simulations: usize,
    /// Optional wall-clock limit per search (then `simulations` is an upper bound).
    pub time_limit: Option<Duration>,
    /// Leaves one search gathers before calling the evaluator.
    pub batch: usize,
    /// Virtual loss per pending descent (0 turns it off; then a batch stops at the first
    /// repeated leaf).
    pub virtual_loss: f32,
    /// Value of unvisited children.
    pub fpu: FirstPlayUrgency,
    /// Total Dirichlet concentration at the root, spread over the legal moves
    /// (α = `dirichlet_total / moves`, 10 ≈ AlphaZero's 0.3 for chess and 0.03 for Go);
    /// 0 turns the noise off.
    pub dirichlet_total: f32,
    /// Weight of the noise in the root priors.
    pub noise_weight: f32,
    /// Seed of the noise.
    pub seed: u64,
    /// KataGo's forced playouts (self-play): a root child with prior `P` gets at least
    /// `√(k · P · N)` of the root's `N` visits; `k` is this (KataGo: 2), 0 turns them
    /// off. Their visits are pruned from the policy target by
    /// [`MctsResult::pruned_policy`].
    pub forced_playouts: f32,
    /// Prove wins, draws and losses in the tree from its terminal positions
    /// (MCTS-Solver) and play by them.
    pub solver: bool,
    /// Each ply a value travels up the tree multiplies it by this (1: no discount), so
    /// that a win sooner is worth more than a win later and a loss later less bad than
    /// a loss sooner; a network it guides should be trained on results discounted the
    /// same way (plies to the end of the game).
    pub discount: f32,
}

impl Default for MctsConfig {
    fn default() -> Self {
        MctsConfig {
            c_puct: 2.0,
            simulations: 800,
            time_limit: None,
            batch: 8,
            virtual_loss: 1.0,
            fpu: FirstPlayUrgency::Absolute(0.0),
            dirichlet_total: 0.0,
            noise_weight: 0.25,
            seed: 0,
            forced_playouts: 0.0,
            solver: false,
            discount: 1.0,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum NodeState {
    Unexpanded,
    /// Waiting for the evaluator.
    Pending,
    Expanded,
    /// A finished game, with its value for the player who moved into it.
    Terminal(f32),
}

/// A game-theoretic value the search has proven (with [`MctsConfig::solver`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Proof {
    /// The result for the player who moved into the position: 1 a win, 0 a draw, −1 a
    /// loss (a game's own terminal values otherwise).
    pub value: f32,
    /// Plies from the position to the end of the game with best play as far as the
    /// tree has proven it (the winner ends it soonest, the loser as late as it can).
    pub plies: u16,
}

impl Proof {
    fn is_win(&self) -> bool {
        self.value > 0.0
    }

    fn is_loss(&self) -> bool {
        self.value < 0.0
    }
}

/// The proof of a position from its children's proofs (each for the player to move at
/// the position): lost for whoever moved into it if a child wins, else, once every child
/// is proven, the best child's result negated. Wins are taken soonest, losses latest.
fn proof_from_children(children: impl Iterator<Item = Option<Proof>>) -> Option<Proof> {
    let mut best: Option<Proof> = None;
    let mut all = true;
    for p in children {
        let Some(p) = p else {
            all = false;
            continue;
        };
        let better = match best {
            None => true,
            Some(b) if p.value != b.value => p.value > b.value,
            Some(b) if p.is_win() => p.plies < b.plies,
            Some(b) => p.plies > b.plies,
        };
        if better {
            best = Some(p);
        }
    }
    let best = best.filter(|b| all || b.is_win())?;
    Some(Proof {
        value: -best.value,
        plies: best.plies.saturating_add(1),
    })
}

#[derive(Clone, Debug)]
struct Node<M> {
    mv: Option<M>,
    prior: f32,
    visits: u32,
    /// Descents through this node that are still waiting for their leaf's value.
    in_flight: u32,
    /// Sum of backed-up values for the player who moved into this node.
    value_sum: f32,
    first_child: u32,
    child_count: u32,
    state: NodeState,
    /// The node's proven value (with [`MctsConfig::solver`]).
    proof: Option<Proof>,
}

impl<M> Node<M> {
    fn new(mv: Option<M>, prior: f32) -> Self {
        Node {
            mv,
            prior,
            visits: 0,
            in_flight: 0,
            value_sum: 0.0,
            first_child: 0,
            child_count: 0,
            state: NodeState::Unexpanded,
            proof: None,
        }
    }

    fn q(&self) -> f32 {
        if self.visits == 0 {
            0.0
        } else {
            self.value_sum / self.visits as f32
        }
    }
}

/// Statistics of one root child.
#[derive(Clone, Debug, PartialEq)]
pub struct ChildStats<M> {
    /// The move.
    pub mv: M,
    /// Its index in the game's action space.
    pub action: usize,
    /// Visits.
    pub visits: u32,
    /// The evaluator's prior (before root noise).
    pub prior: f32,
    /// Mean value for the player to move at the root (0 when unvisited).
    pub q: f32,
    /// The move ends the game.
    pub terminal: bool,
    /// The move's proven result for the player to move at the root (with
    /// [`MctsConfig::solver`]).
    pub proof: Option<Proof>,
}

/// What a search found.
#[derive(Clone, Debug)]
pub struct MctsResult<M> {
    /// Visits of the root (the root's own evaluation included, as in seed 000).
    pub root_visits: u32,
    /// Mean value for the player to move (its proven result, if there is one).
    pub value: f32,
    /// The root's proven result for the player to move (with [`MctsConfig::solver`]).
    pub proof: Option<Proof>,
    /// Root children, most visited first (ties: higher prior first).
    pub children: Vec<ChildStats<M>>,
    /// Playouts this search added.
    pub simulations: usize,
    /// Positions this search sent to the evaluator.
    pub evaluations: usize,
    /// Wall time of the search.
    pub elapsed: Duration,
}

impl<M: Copy> MctsResult<M> {
    /// The most visited move (a move that wins on the spot, if there is one). With
    /// proofs (the solver): the soonest proven win, else the most visited move not
    /// proven to lose, else the latest loss.
    pub fn best(&self) -> Option<M> {
        let proven_win = self
            .children
            .iter()
            .filter(|c| c.proof.is_some_and(|p| p.is_win()))
            .min_by_key(|c| c.proof.map_or(u16::MAX, |p| p.plies));
        let not_lost = || {
            self.children
                .iter()
                .find(|c| !c.proof.is_some_and(|p| p.is_loss()))
        };
        let latest_loss = || {
            self.children
                .iter()
                .max_by_key(|c| c.proof.map_or(0, |p| p.plies))
        };
        proven_win
            .or_else(|| self.children.iter().find(|c| c.terminal && c.q >= 1.0))
            .or_else(not_lost)
            .or_else(latest_loss)
            .map(|c| c.mv)
    }

    /// A move drawn with probability ∝ visits^(1/temperature); greedy at temperature 0.
    pub fn choose(&self, temperature: f32, rng: &mut impl Rng) -> Option<M> {
        if temperature <= 1e-3 || self.children.is_empty() {
            return self.best();
        }
        let weights: Vec<f32> = self
            .children
            .iter()
            .map(|c| (c.visits as f32).powf(1.0 / temperature))
            .collect();
        Some(self.children[sample_index(&weights, rng)].mv)
    }

    /// KataGo's policy target pruning: the root children's visits (as `(action, share)`
    /// of their sum) after taking off the forced playouts (`k` as in
    /// [`MctsConfig::forced_playouts`]) that did not earn their place. Every child but
    /// the most visited loses up to `√(k · P · N)` visits, as long as its PUCT score
    /// (`c_puct`, the root's `N`) stays below the best child's; a child left with one
    /// visit or none is dropped. With `k = 0` it is the plain visit distribution.
    pub fn pruned_policy(&self, c_puct: f32, k: f32) -> Vec<(usize, f32)> {
        let n = self.root_visits.max(1) as f32;
        let sqrt_n = n.sqrt();
        let best = self.children.iter().max_by_key(|c| c.visits);
        let puct = |q: f32, p: f32, visits: f32| q + c_puct * p * sqrt_n / (1.0 + visits);
        let best_score = best.map_or(0.0, |b| puct(b.q, b.prior, b.visits as f32));
        let kept: Vec<(usize, f32)> = self
            .children
            .iter()
            .map(|c| {
                let visits = c.visits as f32;
                if k <= 0.0 || best.is_some_and(|b| b.action == c.action) {
                    return (c.action, visits);
                }
                let forced = (k * c.prior * n).sqrt();
                // fewest visits that keep its score at or below the best's
                let gap = best_score - c.q;
                let needed = if gap > 0.0 {
                    (c_puct * c.prior * sqrt_n / gap - 1.0).ceil().max(0.0)
                } else {
                    visits
                };
                let pruned = needed.max(visits - forced).min(visits);
                (c.action, if pruned <= 1.0 { 0.0 } else { pruned })
            })
            .filter(|&(_, v)| v > 0.0)
            .collect();
        let total: f32 = kept.iter().map(|&(_, v)| v).sum();
        kept.into_iter()
            .map(|(a, v)| (a, v / total.max(1.0)))
            .collect()
    }

    /// The visit distribution over the action space (`action_count` entries), the policy
    /// target of self-play training.
    pub fn visit_distribution(&self, action_count: usize) -> Vec<f32> {
        let mut out = vec![0.0; action_count];
        let total: u32 = self.children.iter().map(|c| c.visits).sum();
        if total > 0 {
            for c in &self.children {
                out[c.action] = c.visits as f32 / total as f32;
            }
        }
        out
    }
}

/// A leaf gathered for evaluation: the path to it (root first) and its legal moves with
/// their action indices, generated once at the leaf so that delivering its evaluation
/// replays nothing.
struct PendingLeaf<M> {
    path: Vec<u32>,
    moves: Vec<(M, usize)>,
}

fn moves_and_actions<G: Game>(game: &G) -> Vec<(G::Move, usize)> {
    game.legal_moves()
        .into_iter()
        .map(|mv| (mv, game.action_of(mv)))
        .collect()
}

/// One search tree over a game, reusable from move to move.
pub struct Mcts<G: Game> {
    config: MctsConfig,
    root_game: G,
    nodes: Vec<Node<G::Move>>,
    rng: ChaCha8Rng,
    /// Evaluator priors of the root children before noise.
    root_priors: Vec<f32>,
    noise_applied: bool,
    pending: Vec<PendingLeaf<G::Move>>,
    /// The root's moves are these actions only (KataGo's `allowMoves`/`avoidMoves` at
    /// the root); `None`: every legal move.
    root_actions: Option<Vec<usize>>,
    playouts_left: usize,
    simulations: usize,
    evaluations: usize,
    started: Instant,
}

impl<G: Game> Mcts<G> {
    /// A search tree rooted at `game`.
    pub fn new(game: G, config: MctsConfig) -> Self {
        Mcts {
            rng: ChaCha8Rng::seed_from_u64(config.seed),
            config,
            root_game: game,
            nodes: vec![Node::new(None, 1.0)],
            root_priors: Vec::new(),
            noise_applied: false,
            pending: Vec::new(),
            root_actions: None,
            playouts_left: 0,
            simulations: 0,
            evaluations: 0,
            started: Instant::now(),
        }
    }

    /// Searches only these root actions (the other legal moves get no child); `None`:
    /// every legal move. Set it before the root is expanded (before the first
    /// [`Mcts::gather`]); a root with no move left is searched as having none.
    pub fn restrict_root(&mut self, actions: Option<Vec<usize>>) {
        self.root_actions = actions;
    }

    /// The position at the root.
    pub fn game(&self) -> &G {
        &self.root_game
    }

    /// The configuration.
    pub fn config(&self) -> &MctsConfig {
        &self.config
    }

    /// Changes the configuration (e.g. simulations per move) keeping the tree.
    pub fn set_config(&mut self, config: MctsConfig) {
        self.config = config;
    }

    /// Nodes in the arena.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Plays `mv` at the root, keeping the subtree below it (tree reuse). Returns an error
    /// and leaves the tree unchanged if the move is illegal.
    pub fn play(&mut self, mv: G::Move) -> Result<(), tabula_core::GameError> {
        let mut next = self.root_game.clone();
        next.try_play(mv)?;
        let root = &self.nodes[0];
        let child = (root.state == NodeState::Expanded)
            .then(|| {
                (root.first_child..root.first_child + root.child_count)
                    .find(|&c| self.nodes[c as usize].mv == Some(mv))
            })
            .flatten();
        let mut nodes = Vec::new();
        match child {
            Some(c) if self.nodes[c as usize].state != NodeState::Pending => {
                // Copy the subtree breadth-first so that children stay contiguous.
                let mut root = self.nodes[c as usize].clone();
                root.mv = None;
                root.prior = 1.0;
                nodes.push(root);
                let mut i = 0;
                while i < nodes.len() {
                    let (first, count) = (nodes[i].first_child, nodes[i].child_count);
                    if matches!(nodes[i].state, NodeState::Expanded) {
                        nodes[i].first_child = nodes.len() as u32;
                        for k in first..first + count {
                            nodes.push(self.nodes[k as usize].clone());
                        }
                    }
                    i += 1;
                }
            }
            _ => nodes.push(Node::new(None, 1.0)),
        }
        self.nodes = nodes;
        self.root_game = next;
        self.root_priors.clear();
        self.noise_applied = false;
        self.pending.clear();
        if self.nodes[0].state == NodeState::Expanded {
            self.root_priors = self.children(0).map(|c| self.nodes[c].prior).collect();
        }
        Ok(())
    }

    /// Moves the root down to `target` if the tree has searched it within `max_depth`
    /// plies of the root (a player's own move and the opponent's answer since its last
    /// search), keeping the subtree below it: the visits already spent there count
    /// towards the next search. Positions match by hash, ply and side to move. Returns
    /// `false`, the tree unchanged, when `target` is not there (a new tree is due).
    pub fn reroot(&mut self, target: &G, max_depth: usize) -> bool {
        let key = |g: &G| (g.position_hash(), g.ply(), g.to_move());
        let want = key(target);
        if key(&self.root_game) == want {
            return true;
        }
        let mut path = Vec::new();
        if !self.path_to(0, &self.root_game, &want, max_depth, &mut path) {
            return false;
        }
        // Every move of the path was played in the tree from this root, so none is
        // refused; a refusal would leave a valid tree rooted part way, reported as false.
        path.into_iter().all(|mv| self.play(mv).is_ok())
    }

    /// Depth-first search of the visited nodes below `node` (at `game`) for the position
    /// keyed `want`; on success `path` holds the moves to it.
    fn path_to(
        &self,
        node: usize,
        game: &G,
        want: &(u64, usize, tabula_core::Player),
        depth: usize,
        path: &mut Vec<G::Move>,
    ) -> bool {
        if depth == 0 || self.nodes[node].state != NodeState::Expanded {
            return false;
        }
        for c in self.children(node) {
            let child = &self.nodes[c];
            let Some(mv) = child.mv.filter(|_| child.visits > 0) else {
                continue;
            };
            let mut next = game.clone();
            next.play(mv);
            path.push(mv);
            if (next.position_hash(), next.ply(), next.to_move()) == *want
                || self.path_to(c, &next, want, depth - 1, path)
            {
                return true;
            }
            path.pop();
        }
        false
    }

    /// Visits of the root so far (kept ones included after [`Mcts::play`] or
    /// [`Mcts::reroot`]).
    pub fn root_visits(&self) -> u32 {
        self.nodes[0].visits
    }

    fn children(&self, node: usize) -> impl Iterator<Item = usize> {
        let n = &self.nodes[node];
        (n.first_child as usize)..(n.first_child + n.child_count) as usize
    }

    /// Starts a search of `config.simulations` more playouts (see [`Mcts::gather`]).
    pub fn begin(&mut self) {
        self.playouts_left = self.config.simulations;
        self.simulations = 0;
        self.evaluations = 0;
        self.started = Instant::now();
        self.noise_applied = false;
        self.apply_root_noise();
    }

    /// Whether the current search has finished (budget spent, time up, or the root is
    /// terminal) and nothing is waiting for the evaluator.
    pub fn done(&self) -> bool {
        if !self.pending.is_empty() {
            return false;
        }
        if self.root_game.is_terminal() {
            return true;
        }
        if self.nodes[0].state != NodeState::Expanded {
            return false;
        }
        self.playouts_left == 0
            || self
                .config
                .time_limit
                .is_some_and(|t| self.started.elapsed() >= t)
    }

    /// Selects up to `config.batch` leaves and appends their positions to `out` for
    /// evaluation; terminal leaves are backed up at once. Returns how many positions it
    /// appended; each must be answered, in order, by [`Mcts::deliver`].
    pub fn gather(&mut self, out: &mut Vec<G>) -> usize {
        debug_assert!(self.pending.is_empty(), "deliver before gathering again");
        if self.nodes[0].state == NodeState::Unexpanded {
            if self.root_game.is_terminal() {
                return 0;
            }
            self.nodes[0].state = NodeState::Pending;
            let mut moves = moves_and_actions(&self.root_game);
            if let Some(allowed) = &self.root_actions {
                moves.retain(|(_, a)| allowed.contains(a));
            }
            self.pending.push(PendingLeaf {
                path: vec![0],
                moves,
            });
            out.push(self.root_game.clone());
            return 1;
        }
        if self.done() {
            return 0;
        }
        let vl = self.config.virtual_loss > 0.0;
        let mut gathered = 0;
        let mut attempts = 0;
        while gathered < self.config.batch.max(1)
            && self.playouts_left > 0
            && attempts < 4 * self.config.batch.max(1)
        {
            attempts += 1;
            let mut game = self.root_game.clone();
            let mut path = vec![0u32];
            let mut node = 0usize;
            // a proven node below the root is a leaf with a known value
            while self.nodes[node].state == NodeState::Expanded
                && (node == 0 || self.nodes[node].proof.is_none())
            {
                let child = self.select_child(node);
                if let Some(mv) = self.nodes[child].mv {
                    game.play(mv);
                }
                path.push(child as u32);
                node = child;
            }
            match self.nodes[node].state {
                NodeState::Terminal(v) => {
                    self.backup(&path, v, false);
                    self.playouts_left -= 1;
                    self.simulations += 1;
                }
                NodeState::Expanded => {
                    // proven (the loop stops at no other expanded node)
                    let discount = self.config.discount;
                    let v = self.nodes[node]
                        .proof
                        .map_or(0.0, |p| p.value * discount.powi(i32::from(p.plies)));
                    self.backup(&path, v, false);
                    self.playouts_left -= 1;
                    self.simulations += 1;
                }
                NodeState::Unexpanded if game.is_terminal() => {
                    // Value for the player who moved into this node.
                    let v = -game.terminal_value().unwrap_or(0.0);
                    self.nodes[node].state = NodeState::Terminal(v);
                    self.backup(&path, v, false);
                    if self.config.solver {
                        self.nodes[node].proof = Some(Proof { value: v, plies: 0 });
                        self.prove_up(&path);
                    }
                    self.playouts_left -= 1;
                    self.simulations += 1;
                }
                NodeState::Unexpanded => {
                    self.nodes[node].state = NodeState::Pending;
                    for &n in &path {
                        self.nodes[n as usize].in_flight += 1;
                    }
                    let moves = moves_and_actions(&game);
                    self.pending.push(PendingLeaf { path, moves });
                    out.push(game);
                    self.playouts_left -= 1;
                    gathered += 1;
                    if !vl {
                        // Without virtual loss the next descent would find this leaf again.
                        break;
                    }
                }
                // A leaf already waiting: the batch has run into itself.
                _ => break,
            }
        }
        gathered
    }

    /// Answers the positions of the last [`Mcts::gather`], in order.
    pub fn deliver(&mut self, evaluations: &[Evaluation]) {
        let pending = std::mem::take(&mut self.pending);
        assert_eq!(
            pending.len(),
            evaluations.len(),
            "one evaluation per gathered leaf"
        );
        for (leaf, eval) in pending.into_iter().zip(evaluations) {
            let node = *leaf.path.last().unwrap_or(&0) as usize;
            let first = self.nodes.len() as u32;
            self.expand(&leaf.moves, &eval.priors);
            let n = &mut self.nodes[node];
            n.first_child = first;
            n.child_count = leaf.moves.len() as u32;
            n.state = NodeState::Expanded;
            self.evaluations += 1;
            let is_root = leaf.path.len() == 1;
            if is_root {
                self.root_priors = self.children(0).map(|c| self.nodes[c].prior).collect();
                // The root's own evaluation counts as its first visit (seed 000).
                self.nodes[0].visits += 1;
                self.nodes[0].value_sum += -eval.value;
                self.apply_root_noise();
            } else {
                self.backup(&leaf.path, -eval.value, true);
                self.simulations += 1;
            }
        }
    }

    /// Appends one child per move with its prior: the evaluator's weights over the
    /// action space restricted to `moves` and renormalised (uniform when the weights are
    /// missing, sum to zero, or are not finite).
    fn expand(&mut self, moves: &[(G::Move, usize)], priors: &[f32]) {
        let nodes = &mut self.nodes;
        masked_priors(moves, priors, |mv, p| nodes.push(Node::new(Some(mv), p)));
    }

    /// After the last node of `path` was proven: proves its ancestors that now follow
    /// from their children, stopping at the first that does not.
    fn prove_up(&mut self, path: &[u32]) {
        for &n in path.iter().rev().skip(1) {
            let n = n as usize;
            let proof = proof_from_children(self.children(n).map(|c| self.nodes[c].proof));
            if proof.is_none() || proof == self.nodes[n].proof {
                break;
            }
            self.nodes[n].proof = proof;
        }
    }

    /// Backs `value` (for the player who moved into the leaf) up the path.
    fn backup(&mut self, path: &[u32], mut value: f32, was_in_flight: bool) {
        let discount = self.config.discount;
        for &n in path.iter().rev() {
            let node = &mut self.nodes[n as usize];
            node.visits += 1;
            node.value_sum += value;
            if was_in_flight {
                node.in_flight -= 1;
            }
            value *= -discount;
        }
    }

    fn select_child(&self, node: usize) -> usize {
        let parent = &self.nodes[node];
        let vl = self.config.virtual_loss;
        let k = self.config.forced_playouts;
        if node == 0 && k > 0.0 {
            let total = parent.visits as f32;
            // the first child below its forced share (pending descents count)
            if let Some(c) = self.children(node).find(|&c| {
                let ch = &self.nodes[c];
                !matches!(ch.state, NodeState::Terminal(_))
                    && ((ch.visits + ch.in_flight) as f32) < (k * ch.prior * total).sqrt()
            }) {
                return c;
            }
        }
        let parent_n = parent.visits as f32 + vl * parent.in_flight as f32;
        let sqrt_n = parent_n.max(1.0).sqrt();
        let fpu = match self.config.fpu {
            FirstPlayUrgency::Absolute(v) => v,
            FirstPlayUrgency::ParentMinus(r) => -parent.q() - r,
        };
        let solver = self.config.solver;
        // One pass: the soonest proven win, if any, is played; otherwise the best score
        // among the moves not proven lost, or among all when every move is lost.
        let mut win: Option<(u16, usize)> = None;
        let mut open = (f32::NEG_INFINITY, parent.first_child as usize, false);
        let mut all = (f32::NEG_INFINITY, parent.first_child as usize);
        for c in self.children(node) {
            let child = &self.nodes[c];
            if let NodeState::Terminal(v) = child.state {
                if v >= 1.0 {
                    return c;
                }
            }
            let proof = child.proof.filter(|_| solver);
            if let Some(p) = proof.filter(Proof::is_win) {
                if win.is_none_or(|(plies, _)| p.plies < plies) {
                    win = Some((p.plies, c));
                }
                continue;
            }
            let n = child.visits as f32 + vl * child.in_flight as f32;
            let q = if let Some(p) = proof {
                p.value * self.config.discount.powi(i32::from(p.plies))
            } else if n == 0.0 {
                fpu
            } else {
                (child.value_sum - vl * child.in_flight as f32) / n
            };
            let score = q + self.config.c_puct * child.prior * sqrt_n / (1.0 + n);
            if score > all.0 {
                all = (score, c);
            }
            if !proof.is_some_and(|p| p.is_loss()) {
                open.2 = true;
                if score > open.0 {
                    open = (score, c, true);
                }
            }
        }
        match win {
            Some((_, c)) => c,
            None if open.2 => open.1,
            None => all.1,
        }
    }

    fn apply_root_noise(&mut self) {
        if self.noise_applied
            || self.config.dirichlet_total <= 0.0
            || self.config.noise_weight <= 0.0
        {
            return;
        }
        if self.nodes[0].state != NodeState::Expanded || self.root_priors.is_empty() {
            return;
        }
        let n = self.root_priors.len();
        let alpha = (self.config.dirichlet_total / n as f32).max(1e-3);
        let Ok(gamma) = Gamma::new(alpha, 1.0) else {
            return;
        };
        let noise: Vec<f32> = (0..n).map(|_| gamma.sample(&mut self.rng)).collect();
        let sum: f32 = noise.iter().sum();
        if sum.is_nan() || sum <= 0.0 {
            return;
        }
        let w = self.config.noise_weight;
        let first = self.nodes[0].first_child as usize;
        for (i, (p, eta)) in self.root_priors.iter().zip(&noise).enumerate() {
            self.nodes[first + i].prior = (1.0 - w) * p + w * eta / sum;
        }
        self.noise_applied = true;
    }

    /// The search's statistics so far.
    pub fn result(&self) -> MctsResult<G::Move> {
        let root = &self.nodes[0];
        let mut children: Vec<ChildStats<G::Move>> = if root.state == NodeState::Expanded {
            self.children(0)
                .enumerate()
                .filter_map(|(i, c)| {
                    let child = &self.nodes[c];
                    let mv = child.mv?;
                    Some(ChildStats {
                        mv,
                        action: self.root_game.action_of(mv),
                        visits: child.visits,
                        prior: self.root_priors.get(i).copied().unwrap_or(child.prior),
                        q: child.q(),
                        terminal: matches!(child.state, NodeState::Terminal(_)),
                        proof: child.proof,
                    })
                })
                .collect()
        } else {
            Vec::new()
        };
        children.sort_by(|a, b| b.visits.cmp(&a.visits).then(b.prior.total_cmp(&a.prior)));
        // A finished game's value is its result, not an empty search's 0.
        let value = match (self.root_game.terminal_value(), root.proof) {
            (Some(v), _) => v,
            (None, Some(p)) => -p.value,
            (None, None) => -root.q(),
        };
        MctsResult {
            root_visits: root.visits,
            value,
            proof: root.proof.map(|p| Proof {
                value: -p.value,
                ..p
            }),
            children,
            simulations: self.simulations,
            evaluations: self.evaluations,
            elapsed: self.started.elapsed(),
        }
    }

    /// The principal variation after root move `mv`: `mv`, then the most visited child
    /// at each node below it, at most `max` moves (empty if `mv` is not a root child).
    pub fn principal_variation(&self, mv: G::Move, max: usize) -> Vec<G::Move> {
        self.principal_variation_visits(mv, max).0
    }

    /// [`Mcts::principal_variation`] and the visits of each of its positions.
    pub fn principal_variation_visits(&self, mv: G::Move, max: usize) -> (Vec<G::Move>, Vec<u32>) {
        let (mut line, mut visits) = (Vec::new(), Vec::new());
        let mut node = match self.nodes[0].state {
            NodeState::Expanded => self.children(0).find(|&c| self.nodes[c].mv == Some(mv)),
            _ => None,
        };
        while let Some(n) = node {
            if line.len() >= max || self.nodes[n].visits == 0 {
                break;
            }
            line.extend(self.nodes[n].mv);
            visits.push(self.nodes[n].visits);
            node = match self.nodes[n].state {
                NodeState::Expanded => self
                    .children(n)
                    .filter(|&c| self.nodes[c].visits > 0)
                    .max_by_key(|&c| self.nodes[c].visits),
                _ => None,
            };
        }
        (line, visits)
    }

    /// Runs one whole search with `evaluator` and returns its statistics.
    pub fn search<E: Evaluator<G> + ?Sized>(&mut self, evaluator: &mut E) -> MctsResult<G::Move> {
        search_many(std::slice::from_mut(self), evaluator);
        self.result()
    }
}

/// Runs a search in every tree at once, evaluating the leaves of all of them in one
/// batch per round: how one worker thread plays many self-play games.
pub fn search_many<G: Game, E: Evaluator<G> + ?Sized>(trees: &mut [Mcts<G>], evaluator: &mut E) {
    for t in trees.iter_mut() {
        t.begin();
    }
    let mut positions = Vec::new();
    let mut counts = Vec::with_capacity(trees.len());
    let mut evals = Vec::new();
    loop {
        positions.clear();
        counts.clear();
        let mut active = false;
        for t in trees.iter_mut() {
            if t.done() {
                counts.push(0);
                continue;
            }
            active = true;
            counts.push(t.gather(&mut positions));
        }
        if !active {
            break;
        }
        if positions.is_empty() {
            continue;
        }
        evals.clear();
        evaluator.evaluate(&positions, &mut evals);
        let mut at = 0;
        for (t, &n) in trees.iter_mut().zip(&counts) {
            if n > 0 {
                t.deliver(&evals[at..at + n]);
                at += n;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluator::RolloutEvaluator;
    use tabula_core::{ConnectFour, TicTacToe};

    #[test]
    fn forced_playouts_visit_every_child_and_are_pruned_from_the_target() {
        let game = ConnectFour::new();
        let base = MctsConfig {
            simulations: 800,
            c_puct: 1.5,
            seed: 3,
            ..MctsConfig::default()
        };
        let forced = MctsConfig {
            forced_playouts: 2.0,
            ..base
        };
        let r = Mcts::new(game, forced).search(&mut HashEvaluator);
        let n = r.root_visits as f32;
        for c in &r.children {
            // each child got its share (a pending descent may leave it one short)
            assert!(c.visits as f32 + 1.0 >= (2.0 * c.prior * n).sqrt(), "{c:?}");
        }
        let target = r.pruned_policy(1.5, 2.0);
        let sum: f32 = target.iter().map(|&(_, p)| p).sum();
        assert!((sum - 1.0).abs() < 1e-4);
        let best = r.children[0].action;
        let share = |t: &[(usize, f32)], a: usize| t.iter().find(|x| x.0 == a).map_or(0.0, |x| x.1);
        let plain: Vec<(usize, f32)> = r
            .children
            .iter()
            .map(|c| {
                (
                    c.action,
                    c.visits as f32 / r.children.iter().map(|c| c.visits).sum::<u32>() as f32,
                )
            })
            .collect();
        // pruning moves mass to the best move: no other gains on it
        assert!(share(&target, best) >= share(&plain, best));
        let mut pruned = 0;
        for c in &r.children[1..] {
            let (t, p) = (
                share(&target, c.action) / share(&target, best),
                share(&plain, c.action) / share(&plain, best),
            );
            assert!(t <= p + 1e-6, "{c:?}");
            pruned += usize::from(t < p - 1e-6);
        }
        assert!(pruned > 0, "some forced playouts are pruned");
        // without forced playouts the target is the plain distribution
        let r0 = Mcts::new(game, base).search(&mut HashEvaluator);
        let t0 = r0.pruned_policy(1.5, 0.0);
        let total: u32 = r0.children.iter().map(|c| c.visits).sum();
        for c in &r0.children {
            assert!((share(&t0, c.action) - c.visits as f32 / total as f32).abs() < 1e-6);
        }
    }

    #[test]
    fn proofs_from_children_take_wins_soonest_and_losses_latest() {
        let p = |value, plies| Some(Proof { value, plies });
        let of = |c: &[Option<Proof>]| proof_from_children(c.iter().copied());
        // one winning child proves the position, whatever the others are
        assert_eq!(of(&[None, p(1.0, 4), p(1.0, 2)]), p(-1.0, 3));
        // no win and a child unproven: nothing is proven
        assert_eq!(of(&[None, p(-1.0, 1), p(0.0, 3)]), None);
        // every child proven: the best result, the latest of the losses
        assert_eq!(of(&[p(-1.0, 1), p(-1.0, 5)]), p(1.0, 6));
        assert_eq!(of(&[p(-1.0, 7), p(0.0, 2)]), p(0.0, 3));
        assert_eq!(of(&[]), None);
    }

    #[test]
    fn the_solver_proves_a_double_threat_and_plays_it() {
        // Red (to move) has 3 and 4 on the bottom row, 2 and 5 free on both sides:
        // any of 2 or 5 makes an open three that wins two plies later.
        let game =
            ConnectFour::from_moves(tabula_core::connect4::Geometry::STANDARD, "3344").unwrap();
        let config = MctsConfig {
            simulations: 2000,
            solver: true,
            ..MctsConfig::default()
        };
        let r = Mcts::new(game, config).search(&mut HashEvaluator);
        let proof = r.proof.expect("a win in three plies is proven");
        assert_eq!((proof.value, proof.plies), (1.0, 3));
        assert_eq!(r.value, 1.0);
        let best = r.best().unwrap();
        assert!(best == 1 || best == 4, "column {} does not win", best + 1);
        // the plain search reports no proof
        let plain = Mcts::new(
            game,
            MctsConfig {
                solver: false,
                ..config
            },
        )
        .search(&mut HashEvaluator);
        assert!(plain.proof.is_none() && plain.children.iter().all(|c| c.proof.is_none()));
    }

    /// Priors and values made up from the position hash: deterministic and uneven.
    struct HashEvaluator;

    fn mix(mut x: u64) -> u64 {
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51afd7ed558ccd);
        x ^ (x >> 29)
    }

    /// Uneven weights over the whole action space, illegal actions included (MCTS must
    /// mask them).
    fn hash_weights<G: Game>(g: &G) -> Vec<f32> {
        let h = g.position_hash();
        (0..g.action_count())
            .map(|a| 1.0 + (mix(h ^ a as u64) % 100) as f32)
            .collect()
    }

    impl<G: Game> Evaluator<G> for HashEvaluator {
        fn evaluate(&mut self, positions: &[G], out: &mut Vec<Evaluation>) {
            for g in positions {
                out.push(Evaluation {
                    priors: hash_weights(g),
                    value: (mix(g.position_hash()) % 1000) as f32 / 555.0 - 0.9,
                });
            }
        }
    }

    #[test]
    fn a_restricted_root_searches_only_its_actions() {
        let config = MctsConfig {
            simulations: 300,
            ..MctsConfig::default()
        };
        let mut tree = Mcts::new(TicTacToe::new(), config);
        tree.restrict_root(Some(vec![0, 8]));
        let r = tree.search(&mut HashEvaluator);
        let actions: Vec<usize> = r.children.iter().map(|c| c.action).collect();
        assert_eq!(actions.len(), 2, "{actions:?}");
        assert!(actions.contains(&0) && actions.contains(&8));
        assert!(r.children.iter().all(|c| c.visits > 0));
        let best = r.best().unwrap();
        assert!(best == 0 || best == 8, "the centre is not searched");
    }

    #[test]
    fn principal_variation_follows_the_most_visited_children_and_is_legal() {
        let config = MctsConfig {
            simulations: 400,
            ..MctsConfig::default()
        };
        let mut tree = Mcts::new(TicTacToe::new(), config);
        let result = tree.search(&mut HashEvaluator);
        let best = result.best().unwrap();
        let pv = tree.principal_variation(best, 9);
        assert!(pv.len() >= 2, "400 playouts reach below the root: {pv:?}");
        assert_eq!(pv[0], best);
        let mut game = TicTacToe::new();
        for &mv in &pv {
            assert!(game.try_play(mv).is_ok(), "{pv:?} is legal");
        }
        assert!(tree.principal_variation(best, 1).len() == 1);
        // A move that is not a root child (the board is empty: none is missing, so use
        // a tree rooted after a move) has no variation.
        let mut after = TicTacToe::new();
        after.play(4);
        let mut tree = Mcts::new(after, config);
        tree.search(&mut HashEvaluator);
        assert!(tree.principal_variation(4, 9).is_empty());
    }

    /// Seed 000's search written plainly (recursive, one leaf at a time), the reference
    /// for the arena/batched implementation.
    struct RefNode {
        mv: Option<usize>,
        prior: f32,
        visits: u32,
        value: f32,
        children: Vec<RefNode>,
        terminal: Option<f32>,
    }

    fn ref_simulate<G: Game>(node: &mut RefNode, game: &mut G, c: f32, discount: f32) -> f32 {
        // Returns the value for the player who moved into `node`.
        let v = if let Some(v) = node.terminal {
            v
        } else if game.is_terminal() {
            let v = -game.terminal_value().unwrap_or(0.0);
            node.terminal = Some(v);
            v
        } else if node.children.is_empty() {
            let mut out = Vec::new();
            HashEvaluator.evaluate(std::slice::from_ref(game), &mut out);
            // Seed 000's masked priors: the legal actions' weights, renormalised.
            let legal: Vec<(usize, f32)> = game
                .legal_moves()
                .into_iter()
                .map(|mv| (game.action_of(mv), out[0].priors[game.action_of(mv)]))
                .collect();
            let sum: f32 = legal.iter().map(|l| l.1).sum();
            node.children = legal
                .into_iter()
                .map(|(a, w)| RefNode {
                    mv: Some(a),
                    prior: w / sum,
                    visits: 0,
                    value: 0.0,
                    children: Vec::new(),
                    terminal: None,
                })
                .collect();
            -out[0].value
        } else {
            let sqrt_n = (node.visits.max(1) as f32).sqrt();
            let mut best = 0;
            let mut best_score = f32::NEG_INFINITY;
            for (i, ch) in node.children.iter().enumerate() {
                if ch.terminal.is_some_and(|v| v >= 1.0) {
                    best = i;
                    break;
                }
                let q = if ch.visits == 0 {
                    0.0
                } else {
                    ch.value / ch.visits as f32
                };
                let score = q + c * ch.prior * sqrt_n / (1.0 + ch.visits as f32);
                if score > best_score {
                    best_score = score;
                    best = i;
                }
            }
            let child = &mut node.children[best];
            let mv = game.move_of(child.mv.unwrap_or(0)).unwrap();
            game.play(mv);
            -discount * ref_simulate(child, game, c, discount)
        };
        node.visits += 1;
        node.value += v;
        v
    }

    #[test]
    fn batch_of_one_without_virtual_loss_matches_the_plain_algorithm_discounted_or_not() {
        let mut game = ConnectFour::default();
        game.play_text("4").unwrap();
        for discount in [1.0, 0.9] {
            let config = MctsConfig {
                simulations: 400,
                batch: 1,
                virtual_loss: 0.0,
                c_puct: 1.3,
                discount,
                ..MctsConfig::default()
            };
            let mut root = RefNode {
                mv: None,
                prior: 1.0,
                visits: 0,
                value: 0.0,
                children: Vec::new(),
                terminal: None,
            };
            for _ in 0..=config.simulations {
                ref_simulate(&mut root, &mut game.clone(), config.c_puct, discount);
            }
            for batch in [1, 8] {
                let result =
                    Mcts::new(game, MctsConfig { batch, ..config }).search(&mut HashEvaluator);
                assert_eq!(result.root_visits, root.visits);
                for ch in &root.children {
                    let mine = result
                        .children
                        .iter()
                        .find(|c| Some(c.action) == ch.mv)
                        .unwrap();
                    assert_eq!(mine.visits, ch.visits, "batch {batch}");
                    let q = if ch.visits == 0 {
                        0.0
                    } else {
                        ch.value / ch.visits as f32
                    };
                    assert!((mine.q - q).abs() < 1e-5);
                }
            }
        }
    }

    #[test]
    fn many_searches_in_one_batch_equal_the_searches_alone() {
        let config = MctsConfig {
            simulations: 200,
            batch: 8,
            ..MctsConfig::default()
        };
        let games: Vec<ConnectFour> = ["", "4", "44", "3", "445"]
            .iter()
            .map(|m| {
                let mut g = ConnectFour::default();
                for c in m.chars() {
                    g.play_text(&c.to_string()).unwrap();
                }
                g
            })
            .collect();
        let mut trees: Vec<Mcts<ConnectFour>> =
            games.iter().map(|g| Mcts::new(*g, config)).collect();
        search_many(&mut trees, &mut HashEvaluator);
        for (tree, g) in trees.iter().zip(&games) {
            let alone = Mcts::new(*g, config).search(&mut HashEvaluator);
            let together = tree.result();
            assert_eq!(alone.children, together.children);
            let visits: u32 = together.children.iter().map(|c| c.visits).sum();
            assert_eq!(visits as usize, config.simulations);
        }
    }

    #[test]
    fn same_seed_same_search_and_noise_changes_it() {
        let base = MctsConfig {
            simulations: 300,
            dirichlet_total: 10.0,
            seed: 5,
            ..MctsConfig::default()
        };
        let run = |config: MctsConfig| {
            Mcts::new(TicTacToe::new(), config)
                .search(&mut RolloutEvaluator::new(1, 3))
                .children
        };
        assert_eq!(run(base), run(base));
        assert_ne!(run(base), run(MctsConfig { seed: 6, ..base }));
    }

    #[test]
    fn tree_reuse_keeps_the_subtree_and_rejects_illegal_moves() {
        let config = MctsConfig {
            simulations: 500,
            ..MctsConfig::default()
        };
        let mut tree = Mcts::new(TicTacToe::new(), config);
        let result = tree.search(&mut HashEvaluator);
        let best = result.children[0].clone();
        tree.play(best.mv).unwrap();
        assert_eq!(tree.result().root_visits, best.visits);
        assert!(tree.play(best.mv).is_err(), "the cell is taken");
        assert_eq!(
            tree.result().root_visits,
            best.visits,
            "unchanged after an error"
        );
        let again = tree.search(&mut HashEvaluator);
        assert_eq!(
            again.root_visits as usize,
            best.visits as usize + config.simulations
        );
    }

    /// Re-rooting finds the position two plies down (the tree's own move and the
    /// opponent's answer) and keeps that subtree's visits; it refuses a position deeper
    /// than asked, leaving the tree as it was.
    #[test]
    fn reroot_moves_down_to_a_searched_position_or_refuses() {
        let config = MctsConfig {
            simulations: 800,
            ..MctsConfig::default()
        };
        let mut tree = Mcts::new(TicTacToe::new(), config);
        let result = tree.search(&mut HashEvaluator);
        let mine = result.children[0].mv;
        let mut after = TicTacToe::new();
        after.play(mine);
        // the answer the tree looked at most below its own move
        let (line, visits) = tree.principal_variation_visits(mine, 2);
        assert_eq!(line.len(), 2, "the search went two plies deep");
        let mut target = after;
        target.play(line[1]);
        let before = tree.root_visits();
        assert!(tree.reroot(&TicTacToe::new(), 2), "the root itself");
        assert_eq!(
            tree.root_visits(),
            before,
            "re-rooting at the root keeps it all"
        );
        // three plies away with a depth of two: refused, unchanged
        let mut deep = target;
        let third = deep.legal_moves()[0];
        deep.play(third);
        assert!(!tree.reroot(&deep, 2));
        assert_eq!(tree.root_visits(), before);
        assert!(tree.reroot(&target, 2));
        assert_eq!(tree.root_visits(), visits[1]);
        assert_eq!(tree.game().position_hash(), target.position_hash());
        let again = tree.search(&mut HashEvaluator);
        assert_eq!(
            again.root_visits as usize,
            visits[1] as usize + config.simulations
        );
    }

    #[test]
    fn terminal_root_has_no_moves_and_wins_in_one_are_taken() {
        let mut g = TicTacToe::new();
        for m in ["1", "4", "2", "5", "3"] {
            g.play_text(m).unwrap();
        }
        let result = Mcts::new(g, MctsConfig::default()).search(&mut HashEvaluator);
        assert!(result.children.is_empty() && result.best().is_none());
        // X has won: O, to move, has lost, and the value says so
        assert_eq!(result.value, -1.0);
        let mut g = TicTacToe::new();
        for m in ["1", "4", "2", "5"] {
            g.play_text(m).unwrap();
        }
        let config = MctsConfig {
            simulations: 50,
            ..MctsConfig::default()
        };
        let result = Mcts::new(g, config).search(&mut HashEvaluator);
        assert_eq!(g.format_move(result.best().unwrap()), "3");
    }

    #[test]
    fn temperature_and_visit_distribution() {
        let result = Mcts::new(
            TicTacToe::new(),
            MctsConfig {
                simulations: 100,
                ..MctsConfig::default()
            },
        )
        .search(&mut HashEvaluator);
        let dist = result.visit_distribution(9);
        assert!((dist.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        assert_eq!(result.choose(0.0, &mut rng), result.best());
        let picks: std::collections::HashSet<_> =
            (0..200).map(|_| result.choose(1.0, &mut rng)).collect();
        assert!(picks.len() > 1);
    }
}
