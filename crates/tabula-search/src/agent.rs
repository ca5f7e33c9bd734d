//! Agents: something that picks a move in a position, with a word on why. Front ends
//! play people against agents and agents against each other through this one trait.

use tabula_core::Game;

use crate::negamax::{describe, Negamax};

/// A move an agent picked and its evaluation in words.
#[derive(Clone, Debug, PartialEq)]
pub struct Choice<M> {
    /// The move.
    pub mv: M,
    /// What the agent thinks of the position, from its own side, e.g. "win in 3 moves".
    pub evaluation: String,
}

/// Picks moves in games of type `G`.
pub trait Agent<G: Game> {
    /// A short name, e.g. "minimax".
    fn name(&self) -> String;
    /// A move for the side to move, or `None` when the game is over.
    fn choose(&mut self, game: &G) -> Option<Choice<G::Move>>;
    /// A word for the user before a choice that may take long here (e.g. a solver's
    /// proof early in the game); `None` when the answer comes at once.
    fn thinking_note(&self, _game: &G) -> Option<String> {
        None
    }
}

/// Perfect play by exhaustive negamax (small games only).
#[derive(Default)]
pub struct NegamaxAgent<G: Game> {
    search: Negamax<G>,
}

impl<G: Game> NegamaxAgent<G> {
    /// An agent that searches to the end of the game, or `depth` moves ahead.
    pub fn new(depth: Option<u32>) -> Self {
        NegamaxAgent {
            search: Negamax::with_depth(depth),
        }
    }
}

impl<G: Game> Agent<G> for NegamaxAgent<G> {
    fn name(&self) -> String {
        "minimax".into()
    }

    fn choose(&mut self, game: &G) -> Option<Choice<G::Move>> {
        let (mv, v) = self.search.best_move(game)?;
        Some(Choice {
            mv,
            evaluation: describe(v, game.ply()),
        })
    }
}

/// PUCT Monte-Carlo search with any evaluator (a network, rollouts, uniform priors),
/// reusing its tree from move to move.
pub struct MctsAgent<G: Game> {
    tree: Option<crate::mcts::Mcts<G>>,
    config: crate::mcts::MctsConfig,
    evaluator: Box<dyn crate::evaluator::Evaluator<G>>,
    label: String,
}

impl<G: Game> MctsAgent<G> {
    /// An agent searching with `config` and `evaluator`, called `label` (e.g. "mcts(net)").
    pub fn new(
        config: crate::mcts::MctsConfig,
        evaluator: Box<dyn crate::evaluator::Evaluator<G>>,
        label: impl Into<String>,
    ) -> Self {
        MctsAgent {
            tree: None,
            config,
            evaluator,
            label: label.into(),
        }
    }

    /// Searches `game` (reusing the tree when `game` is its root or one move below it)
    /// and returns the statistics.
    pub fn analyze(&mut self, game: &G) -> crate::mcts::MctsResult<G::Move> {
        let hash = game.position_hash();
        let reusable = self.tree.as_mut().is_some_and(|t| {
            if t.game().position_hash() == hash && t.game().ply() == game.ply() {
                return true;
            }
            let next = t.game().legal_moves().into_iter().find(|&mv| {
                let mut g = t.game().clone();
                g.play(mv);
                g.position_hash() == hash && g.ply() == game.ply()
            });
            next.is_some_and(|mv| t.play(mv).is_ok())
        });
        if !reusable {
            self.tree = None;
        }
        let tree = self
            .tree
            .get_or_insert_with(|| crate::mcts::Mcts::new(game.clone(), self.config));
        tree.search(&mut self.evaluator)
    }
}

impl<G: Game> Agent<G> for MctsAgent<G> {
    fn name(&self) -> String {
        self.label.clone()
    }

    fn choose(&mut self, game: &G) -> Option<Choice<G::Move>> {
        let result = self.analyze(game);
        let mv = result.best()?;
        let visits = result.children.first().map_or(0, |c| c.visits);
        if let Some(t) = self.tree.as_mut() {
            let _ = t.play(mv);
        }
        Some(Choice {
            mv,
            evaluation: format!(
                "value {:+.2}, {} of {} visits",
                result.value, visits, result.root_visits
            ),
        })
    }
}

/// UCT with random (or the game's heavy) playouts, no network: the classic
/// Monte-Carlo player.
pub struct UctAgent<G: Game> {
    search: crate::uct::Uct<G, Box<dyn crate::uct::Knowledge<G>>>,
}

impl<G: Game> UctAgent<G> {
    /// An agent searching with `config` and the game's `knowledge` (`None`: light
    /// random playouts).
    pub fn new(
        config: crate::uct::UctConfig,
        knowledge: Option<Box<dyn crate::uct::Knowledge<G>>>,
    ) -> Self {
        let knowledge = knowledge.unwrap_or_else(|| Box::new(crate::uct::Light));
        UctAgent {
            search: crate::uct::Uct::with_knowledge(config, knowledge),
        }
    }
}

impl<G: Game> Agent<G> for UctAgent<G> {
    fn name(&self) -> String {
        "uct".into()
    }

    fn choose(&mut self, game: &G) -> Option<Choice<G::Move>> {
        let result = self.search.search(game);
        let mv = result.best?;
        let visits = result.moves.first().map_or(0, |m| m.visits);
        Some(Choice {
            mv,
            evaluation: format!(
                "win rate {:.0}%, {visits} of {} playouts",
                100.0 * result.win_rate,
                result.simulations
            ),
        })
    }
}
