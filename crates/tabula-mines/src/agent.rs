//! An agent that plays whole games of Minesweeper by itself.
//!
//! Each turn it asks its predictor for mine probabilities. If some cells are certainly
//! safe it reveals all of them. Otherwise it must guess: when few layouts remain (and
//! the probabilities are exact) it searches the endgame exhaustively for the guess
//! with the best chance of winning; else it takes the least dangerous cell, breaking
//! near-ties by the chance that the cell is a zero (which opens an area and gives the
//! most information), and among those by position (corners and edges, then the order).

use std::collections::HashMap;

use crate::cell::{Cell, Dims};
use crate::error::MinesError;
use crate::minefield::{FirstClick, Minefield, Status};
use crate::predictor::CellPredictor;
use crate::predictor::Probabilities;
use crate::view::{Seen, View};

/// How one game went.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GameRecord {
    /// Whether the agent won.
    pub won: bool,
    /// Clicks that were not certainly safe (the first click included unless the rule
    /// made it safe).
    pub guesses: usize,
    /// Turns taken (a batch of certain reveals counts as one).
    pub turns: usize,
    /// Turns on which the predictor could only estimate.
    pub approximate_turns: usize,
    /// Guesses chosen by the exhaustive endgame search.
    pub endgame_guesses: usize,
}

/// What the agent does next.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// Reveal these cells, all certainly safe.
    Reveal(Vec<Cell>),
    /// Reveal this cell, which holds a mine with probability `risk`.
    Guess {
        /// The cell.
        cell: Cell,
        /// P(mine) of the cell.
        risk: f64,
        /// Whether the endgame search chose it.
        endgame: bool,
    },
}

impl Decision {
    /// Makes the move in `game`: every cell of a reveal (until the game ends), or the
    /// guess.
    pub fn apply(&self, game: &mut Minefield) -> Result<(), MinesError> {
        match self {
            Decision::Reveal(cells) => {
                for &c in cells {
                    if game.status() != Status::Playing {
                        break;
                    }
                    game.reveal(c)?;
                }
            }
            Decision::Guess { cell, .. } => {
                game.reveal(*cell)?;
            }
        }
        Ok(())
    }
}

/// A Minesweeper player built on any [`CellPredictor`].
pub struct Agent<P: CellPredictor> {
    predictor: P,
    /// Most layouts for which the endgame is searched exhaustively.
    pub endgame_layouts: usize,
    /// Guesses whose risk is within this of the least risky are compared by looking
    /// one move ahead.
    pub lookahead_margin: f64,
    /// At most this many cells are compared by looking ahead.
    pub lookahead_cells: usize,
    /// Where to click first (default: [`Agent::first_click`]).
    pub first: Option<Cell>,
}

impl<P: CellPredictor> Agent<P> {
    /// An agent using `predictor`. It makes no random choices: a game is reproduced by
    /// the minefield's seed alone.
    pub fn new(predictor: P) -> Self {
        Agent {
            predictor,
            endgame_layouts: 64,
            lookahead_margin: 0.05,
            lookahead_cells: 8,
            first: None,
        }
    }

    /// The first click: a corner gives the best chance of a zero when only the cell is
    /// safe (or nothing is). With a guaranteed opening, the third cell from a corner on
    /// small boards and the fourth on larger ones, as measured on tuning seeds (100,000
    /// beginner games: (2,2) 97.22%, (3,3) 96.97%, centre 96.32%; 20,000 intermediate:
    /// (3,3) 89.13%, (2,2) 88.96%, centre 87.52%; 10,000 expert: (3,3) 53.67%, (2,2)
    /// 53.45%, centre 52.42%; seeds from 10,000,001, never the benchmarks'; BENCHMARKS.md).
    pub fn first_click(dims: Dims, rule: FirstClick) -> Cell {
        match rule {
            FirstClick::Opening => {
                let k = if dims.height.min(dims.width) >= 16 {
                    3
                } else {
                    2
                };
                Cell::new(k.min(dims.height / 2), k.min(dims.width / 2))
            }
            _ => Cell::new(0, 0),
        }
    }

    /// Plays `game` to the end.
    pub fn play(&mut self, game: &mut Minefield) -> Result<GameRecord, MinesError> {
        let mut record = GameRecord::default();
        let cfg = game.config();
        if game.view().revealed_count() == 0 {
            let first = self
                .first
                .unwrap_or_else(|| Self::first_click(cfg.dims, cfg.first_click));
            if cfg.first_click == FirstClick::None {
                record.guesses += 1;
            }
            game.reveal(first)?;
            record.turns += 1;
        }
        while game.status() == Status::Playing {
            let view = game.view();
            let probs = self.predictor.predict(&view)?;
            record.approximate_turns += usize::from(probs.approximate);
            let decision = self.decide(&view, &probs);
            if let Decision::Guess { endgame, .. } = decision {
                record.guesses += 1;
                record.endgame_guesses += usize::from(endgame);
            }
            decision.apply(game)?;
            record.turns += 1;
        }
        record.won = game.status() == Status::Won;
        Ok(record)
    }

    /// The next move in `view`, given its probabilities.
    pub fn decide(&mut self, view: &View, probs: &Probabilities) -> Decision {
        let dims = view.dims();
        if !probs.safe.is_empty() {
            return Decision::Reveal(probs.safe.iter().map(|&i| dims.cell(i)).collect());
        }
        if !probs.approximate {
            if let Some(i) = endgame_guess(view, probs, self.endgame_layouts) {
                return Decision::Guess {
                    cell: dims.cell(i),
                    risk: probs.p[i],
                    endgame: true,
                };
            }
        }
        let cells = view.cells();
        let candidates: Vec<usize> = (0..cells.len())
            .filter(|&i| cells[i].is_hidden() && probs.p[i] < 1.0)
            .collect();
        let best = candidates
            .iter()
            .map(|&i| probs.p[i])
            .fold(f64::INFINITY, f64::min);
        // Rank the near-safest cells by the chance they are zeros (which open areas),
        // then by how few hidden neighbours they have (corners and edges).
        let zero_chance = |i: usize| -> f64 {
            (1.0 - probs.p[i])
                * dims
                    .neighbours(i)
                    .filter(|&j| cells[j].is_hidden())
                    .map(|j| 1.0 - probs.p[j])
                    .product::<f64>()
        };
        let hidden_around = |i: usize| dims.neighbours(i).filter(|&j| cells[j].is_hidden()).count();
        let mut near: Vec<(usize, f64)> = candidates
            .iter()
            .filter(|&&i| probs.p[i] <= best + self.lookahead_margin)
            .map(|&i| (i, zero_chance(i)))
            .collect();
        near.sort_by(|a, b| {
            probs.p[a.0]
                .partial_cmp(&probs.p[b.0])
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal))
                .then(hidden_around(a.0).cmp(&hidden_around(b.0)))
        });
        // Many cells off the frontier share one probability; a few stand for them all.
        let mut shortlist = Vec::new();
        let mut interior = 0;
        for &(i, _) in &near {
            let on_frontier = dims
                .neighbours(i)
                .any(|j| matches!(cells[j], Seen::Number(_)));
            if !on_frontier {
                if interior >= 2 {
                    continue;
                }
                interior += 1;
            }
            shortlist.push(i);
            if shortlist.len() >= self.lookahead_cells {
                break;
            }
        }
        let mut pick = shortlist.first().copied();
        if !probs.approximate && shortlist.len() > 1 {
            let mut best_score = f64::NEG_INFINITY;
            for &i in &shortlist {
                if let Some(score) = self.two_step_survival(view, i, probs.p[i]) {
                    if score > best_score + 1e-12 {
                        best_score = score;
                        pick = Some(i);
                    }
                }
            }
        }
        let i = pick.unwrap_or_else(|| candidates.first().copied().unwrap_or(0));
        Decision::Guess {
            cell: dims.cell(i),
            risk: probs.p[i],
            endgame: false,
        }
    }

    /// The chance of surviving a guess at `cell` and the move after it: the cell is
    /// safe, and then either its number makes some cell certainly safe (progress for
    /// free) or the next guess is survived too. Each possible number is tried with the
    /// predictor; the share of layouts behind each weighs it.
    fn two_step_survival(&mut self, view: &View, cell: usize, risk: f64) -> Option<f64> {
        let mut outcomes: Vec<(f64, f64)> = Vec::new(); // (ln layouts, value)
        let mut cells = view.cells().to_vec();
        for k in 0..=8u8 {
            cells[cell] = Seen::Number(k);
            let hypo = View::new(view.dims(), view.mines(), cells.clone());
            let Ok(p) = self.predictor.predict(&hypo) else {
                continue;
            };
            let ln = p.ln_layouts?;
            let value = if !p.safe.is_empty() {
                1.0
            } else {
                let min = (0..hypo.cells().len())
                    .filter(|&i| hypo.cells()[i].is_hidden())
                    .map(|i| p.p[i])
                    .fold(1.0, f64::min);
                1.0 - min
            };
            outcomes.push((ln, value));
        }
        let top = outcomes
            .iter()
            .map(|o| o.0)
            .fold(f64::NEG_INFINITY, f64::max);
        if top == f64::NEG_INFINITY {
            return None;
        }
        let (mut total, mut weighted) = (0.0, 0.0);
        for (ln, v) in outcomes {
            let w = (ln - top).exp();
            total += w;
            weighted += w * v;
        }
        Some((1.0 - risk) * weighted / total)
    }
}

/// Every layout of mines on the cells not known for certain, when there are at most
/// `limit` of them. Each layout is the set of unknown cells (by position in `unknown`)
/// that hold a mine, as a bit mask.
fn layouts(view: &View, probs: &Probabilities, limit: usize) -> Option<(Vec<usize>, Vec<u64>)> {
    let dims = view.dims();
    let cells = view.cells();
    let known_mine = |i: usize| cells[i] == Seen::Mine || probs.mines.binary_search(&i).is_ok();
    let unknown: Vec<usize> = (0..cells.len())
        .filter(|&i| cells[i].is_hidden() && !known_mine(i))
        .collect();
    if unknown.len() > 64 {
        return None;
    }
    let known = (0..cells.len()).filter(|&i| known_mine(i)).count();
    let to_place = view.mines().checked_sub(known)?;
    let pos: HashMap<usize, usize> = unknown.iter().enumerate().map(|(k, &i)| (i, k)).collect();
    // constraints over unknown cells: (mask of unknown positions, mines needed)
    let mut constraints = Vec::new();
    for (i, seen) in cells.iter().enumerate() {
        if let Seen::Number(k) = *seen {
            let mut mask = 0u64;
            let mut need = i64::from(k);
            for j in dims.neighbours(i) {
                if known_mine(j) {
                    need -= 1;
                } else if let Some(&p) = pos.get(&j) {
                    mask |= 1 << p;
                }
            }
            if mask != 0 {
                constraints.push((mask, need));
            }
        }
    }
    let mut out = Vec::new();
    let mut nodes = 0u64;
    #[allow(clippy::too_many_arguments)]
    fn go(
        k: usize,
        n: usize,
        mines: u64,
        placed: usize,
        to_place: usize,
        constraints: &[(u64, i64)],
        out: &mut Vec<u64>,
        limit: usize,
        nodes: &mut u64,
    ) -> bool {
        *nodes += 1;
        if out.len() > limit || *nodes > 2_000_000 {
            return false;
        }
        if placed > to_place || to_place - placed > n - k {
            return true;
        }
        // every constraint must still be reachable
        let decided = if k == 64 { u64::MAX } else { (1u64 << k) - 1 };
        for &(mask, need) in constraints {
            let have = (mines & mask).count_ones() as i64;
            let open = (mask & !decided).count_ones() as i64;
            if have > need || have + open < need {
                return true;
            }
        }
        if k == n {
            out.push(mines);
            return true;
        }
        go(
            k + 1,
            n,
            mines | (1 << k),
            placed + 1,
            to_place,
            constraints,
            out,
            limit,
            nodes,
        ) && go(
            k + 1,
            n,
            mines,
            placed,
            to_place,
            constraints,
            out,
            limit,
            nodes,
        )
    }
    let complete = go(
        0,
        unknown.len(),
        0,
        0,
        to_place,
        &constraints,
        &mut out,
        limit,
        &mut nodes,
    );
    (complete && !out.is_empty() && out.len() <= limit).then_some((unknown, out))
}

/// The guess with the best chance of winning, found by searching every sequence of
/// reveals over the remaining layouts; `None` if there are too many layouts.
fn endgame_guess(view: &View, probs: &Probabilities, limit: usize) -> Option<usize> {
    if probs
        .ln_layouts
        .is_some_and(|l| l > (limit as f64).ln() + 1e-9)
    {
        return None;
    }
    let (unknown, layouts) = layouts(view, probs, limit)?;
    if layouts.len() < 2 {
        return None;
    }
    let dims = view.dims();
    let cells = view.cells();
    let pos: HashMap<usize, usize> = unknown.iter().enumerate().map(|(k, &i)| (i, k)).collect();
    // For each unknown cell: which of its neighbours are unknown (mask), and how many
    // known mines surround it, so that its number under a layout is cheap to compute.
    let mut around = vec![(0u64, 0u32); unknown.len()];
    for (k, &i) in unknown.iter().enumerate() {
        for j in dims.neighbours(i) {
            if let Some(&p) = pos.get(&j) {
                around[k].0 |= 1 << p;
            } else if cells[j] == Seen::Mine || probs.mines.binary_search(&j).is_ok() {
                around[k].1 += 1;
            }
        }
    }
    let mut search = Endgame {
        around,
        memo: HashMap::new(),
        nodes: 0,
    };
    let (_, best) = search.best(&layouts, 0)?;
    best.map(|k| unknown[k])
}

struct Endgame {
    around: Vec<(u64, u32)>,
    memo: HashMap<(Vec<u64>, u64), f64>,
    nodes: u64,
}

impl Endgame {
    const NODE_LIMIT: u64 = 200_000;

    /// Win probability from this set of layouts with `revealed` cells known safe, and
    /// the unknown cell to reveal next. `None` if the search ran out of budget.
    fn best(&mut self, layouts: &[u64], revealed: u64) -> Option<(f64, Option<usize>)> {
        self.nodes += 1;
        if self.nodes > Self::NODE_LIMIT {
            return None;
        }
        if layouts.len() == 1 {
            return Some((1.0, None));
        }
        let n = self.around.len();
        let any_mine = layouts.iter().fold(0u64, |a, &l| a | l);
        let all_mine = layouts.iter().fold(u64::MAX, |a, &l| a & l);
        // cells that differ between layouts and are not yet revealed
        let informative: Vec<usize> = (0..n)
            .filter(|&k| {
                revealed >> k & 1 == 0 && (any_mine >> k & 1 == 1) != (all_mine >> k & 1 == 1)
            })
            .collect();
        let safe_everywhere: Vec<usize> = (0..n)
            .filter(|&k| revealed >> k & 1 == 0 && any_mine >> k & 1 == 0)
            .collect();
        if informative.is_empty() {
            // the layouts agree on every cell we could still learn: nothing to gain
            return Some((1.0 / layouts.len() as f64, None));
        }
        let key = (layouts.to_vec(), revealed);
        if let Some(&v) = self.memo.get(&key) {
            return Some((v, None));
        }
        let total = layouts.len() as f64;
        // a cell safe in every layout is free to reveal: take the most informative one
        let mut best = (-1.0, None);
        let candidates: Vec<usize> = if safe_everywhere.is_empty() {
            (0..n)
                .filter(|&k| revealed >> k & 1 == 0 && all_mine >> k & 1 == 0)
                .collect()
        } else {
            safe_everywhere
        };
        for &k in &candidates {
            let mut groups: HashMap<u32, Vec<u64>> = HashMap::new();
            for &l in layouts {
                if l >> k & 1 == 0 {
                    let number = (l & self.around[k].0).count_ones() + self.around[k].1;
                    groups.entry(number).or_default().push(l);
                }
            }
            let mut win = 0.0;
            for g in groups.values() {
                let (w, _) = self.best(g, revealed | 1 << k)?;
                win += g.len() as f64 / total * w;
            }
            if win > best.0 + 1e-12 {
                best = (win, Some(k));
            }
        }
        self.memo.insert(key, best.0);
        Some(best)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::ExactSolver;
    use crate::minefield::{Config, Level};

    /// Remembers the first position it is asked about.
    struct FirstSeen(ExactSolver, Option<View>);

    impl CellPredictor for FirstSeen {
        fn name(&self) -> &str {
            "first-seen"
        }
        fn predict(&mut self, view: &View) -> Result<Probabilities, MinesError> {
            self.1.get_or_insert_with(|| view.clone());
            self.0.predict(view)
        }
    }

    #[test]
    fn the_first_click_option_is_honoured_by_every_rule() {
        let cell = Cell::new(5, 7);
        for rule in [FirstClick::None, FirstClick::Safe, FirstClick::Opening] {
            for seed in 0..10 {
                let cfg = Config::level(Level::Intermediate, rule);
                let mut game = Minefield::new(cfg, seed);
                let mut agent = Agent::new(FirstSeen(ExactSolver::default(), None));
                agent.first = Some(cell);
                agent.play(&mut game).unwrap();
                match agent.predictor.1 {
                    // the first click was the only click before the agent's first look
                    Some(first) => {
                        let revealed = first.get(cell);
                        assert!(matches!(revealed, Seen::Number(_)), "{rule}: {revealed:?}");
                        if rule == FirstClick::Opening {
                            assert_eq!(revealed, Seen::Number(0));
                        }
                    }
                    // lost (or won) on the first click: only possible without a guarantee
                    None => {
                        assert_eq!(rule, FirstClick::None);
                        assert_eq!(game.exploded(), Some(cell));
                    }
                }
            }
        }
    }

    #[test]
    fn never_clicks_a_proven_mine_nor_guesses_with_a_safe_cell_available() {
        let solver = ExactSolver::default();
        let mut wins = 0;
        for seed in 0..40u64 {
            let cfg = Config::level(Level::Beginner, FirstClick::Safe);
            let mut game = Minefield::new(cfg, seed);
            let mut agent = Agent::new(ExactSolver::default());
            game.reveal(Agent::<ExactSolver>::first_click(cfg.dims, cfg.first_click))
                .unwrap();
            while game.status() == Status::Playing {
                let view = game.view();
                let probs = solver.solve(&view).unwrap();
                match agent.decide(&view, &probs) {
                    Decision::Reveal(cells) => {
                        for c in cells {
                            if game.status() != Status::Playing {
                                break;
                            }
                            let i = cfg.dims.index(c);
                            assert!(probs.safe.contains(&i));
                            assert_eq!(
                                game.is_mine(c),
                                Some(false),
                                "a certain-safe cell held a mine"
                            );
                            game.reveal(c).unwrap();
                        }
                    }
                    Decision::Guess { cell, risk, .. } => {
                        assert!(probs.safe.is_empty(), "guessed while a safe cell existed");
                        let i = cfg.dims.index(cell);
                        assert!(!probs.mines.contains(&i), "clicked a proven mine");
                        assert!(risk < 1.0);
                        game.reveal(cell).unwrap();
                    }
                }
            }
            wins += usize::from(game.status() == Status::Won);
        }
        assert!(wins >= 30, "only {wins}/40 beginner games won");
    }

    #[test]
    fn same_seed_same_record() {
        let cfg = Config::level(Level::Intermediate, FirstClick::Opening);
        let run = |seed| {
            let mut g = Minefield::new(cfg, seed);
            Agent::new(ExactSolver::default()).play(&mut g).unwrap()
        };
        assert_eq!(run(3), run(3));
    }

    #[test]
    fn endgame_search_plays_coin_flips_and_uses_information() {
        // No numbers: four cells, one mine. Every guess is a 1/4 risk; the search is
        // used and reports the chance of winning from here.
        let v = View::parse("4x1 1\n....\n").unwrap();
        let probs = ExactSolver::default().solve(&v).unwrap();
        let mut agent = Agent::new(ExactSolver::default());
        match agent.decide(&v, &probs) {
            Decision::Guess { endgame, risk, .. } => {
                assert!(endgame);
                assert!((risk - 0.25).abs() < 1e-12);
            }
            d => panic!("expected a guess, got {d:?}"),
        }
        // a pure 50/50 is won half the time, whatever the order
        let v = View::parse("2x1 1\n..\n").unwrap();
        let probs = ExactSolver::default().solve(&v).unwrap();
        let (unknown, lay) = layouts(&v, &probs, 64).unwrap();
        assert_eq!(lay.len(), 2);
        let mut e = Endgame {
            around: vec![(0b10, 0), (0b01, 0)],
            memo: HashMap::new(),
            nodes: 0,
        };
        let (win, best) = e.best(&lay, 0).unwrap();
        assert_eq!(unknown.len(), 2);
        assert!((win - 0.5).abs() < 1e-12 && best.is_some());
        // four in a row, one mine: revealing an inner cell shows a number that tells
        // a lot; the search finds a 3/4 guess that then wins for sure more often than 1/4
        let v = View::parse("4x1 1\n....\n").unwrap();
        let probs = ExactSolver::default().solve(&v).unwrap();
        let (_, lay) = layouts(&v, &probs, 64).unwrap();
        let around = vec![(0b0010, 0), (0b0101, 0), (0b1010, 0), (0b0100, 0)];
        let mut e = Endgame {
            around,
            memo: HashMap::new(),
            nodes: 0,
        };
        let (win, _) = e.best(&lay, 0).unwrap();
        // reveal cell 1 (3/4 safe): its number 0 or 1 locates the mine except when it
        // reads 1 with the mine on either side... exact value: 3/4 * (1/3 + 2/3 * 1/2)
        assert!(win >= 0.5 - 1e-12, "{win}");
    }
}
