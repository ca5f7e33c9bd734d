//! An agent that plays whole games of Minesweeper by itself.
//!
//! Each turn it asks its predictor for mine probabilities. If some cells are certainly
//! safe it reveals all of them. Otherwise it must guess: when few layouts remain (and
//! the probabilities are exact) it searches the endgame exhaustively for the guess
//! with the best chance of winning; else it takes the least dangerous cell, breaking
//! near-ties by the chance that the cell is a zero (which opens an area and gives the
//! most information), and among those by position (corners and edges, then the order).

use std::collections::HashMap;

use rustc_hash::FxHashMap;

use crate::cell::{Cell, Dims};
use crate::error::MinesError;
use crate::information::{forced_guess, is_dead};
use crate::minefield::{FirstClick, Minefield, Status};
use crate::predictor::CellPredictor;
use crate::predictor::Probabilities;
use crate::risk::LongTermRisk;
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
    /// Whether guesses weigh the 50/50s that may yet form ([`crate::risk`]); `None`
    /// (the default) weighs them in games on boards of more than 300 cells that begin
    /// with a guaranteed opening, where it was measured to win more (expert: +0.34
    /// points on 100,000 tuning games, at 2.5 times the time), and not otherwise:
    /// no clear gain with a safe first cell (at 5 times the time) nor on beginner and
    /// intermediate boards (BENCHMARKS.md, issue 13).
    pub long_term_risk: Option<bool>,
    /// What `long_term_risk: None` means in the game being played.
    risk_by_default: bool,
}

impl<P: CellPredictor> Agent<P> {
    /// An agent using `predictor`. It makes no random choices: a game is reproduced by
    /// the minefield's seed alone. The defaults (endgame 256 layouts, look-ahead margin
    /// 0.1 over at most 16 cells) are the best measured on tuning seeds (BENCHMARKS.md,
    /// issue 13).
    pub fn new(predictor: P) -> Self {
        Agent {
            predictor,
            endgame_layouts: 256,
            lookahead_margin: 0.1,
            lookahead_cells: 16,
            first: None,
            long_term_risk: None,
            risk_by_default: false,
        }
    }

    /// The first click: a corner gives the best chance of a zero when only the cell is
    /// safe (or nothing is). With a guaranteed opening, the third cell from a corner,
    /// and the fourth on boards of more than 300 cells, as measured on tuning seeds
    /// (seeds from 10,000,001, never the benchmarks'; BENCHMARKS.md): beginner (2,2)
    /// 97.22%, (3,3) 96.97%, centre 96.32% (100,000 games); intermediate (2,2) 89.13%,
    /// (3,3) 88.92% (400,000 games; centre 87.52% of 20,000); expert (3,3) 54.05%,
    /// (2,2) 53.77% (100,000 games; centre 52.42% of 10,000).
    pub fn first_click(dims: Dims, rule: FirstClick) -> Cell {
        match rule {
            FirstClick::Opening => {
                let k = if is_large(dims) { 3 } else { 2 };
                Cell::new(k.min(dims.height / 2), k.min(dims.width / 2))
            }
            _ => Cell::new(0, 0),
        }
    }

    /// Plays `game` to the end.
    pub fn play(&mut self, game: &mut Minefield) -> Result<GameRecord, MinesError> {
        let mut record = GameRecord::default();
        let cfg = game.config();
        self.risk_by_default = cfg.first_click == FirstClick::Opening && is_large(cfg.dims);
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
            // Cells the predictor proves safe cheaply go first: revealing safe cells
            // in any order reaches the same position before the next guess, so this
            // changes the agent's speed, not its games.
            let quick = self.predictor.quick_safe(&view);
            if !quick.is_empty() {
                let dims = view.dims();
                Decision::Reveal(quick.into_iter().map(|i| dims.cell(i)).collect()).apply(game)?;
                record.turns += 1;
                continue;
            }
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
        // A guess no information can ever avoid is made at once (`forced`), and so is
        // a pseudo-50/50; among its cells, the one whose number may help most. Other
        // guesses that may settle a 50/50 before it forms are worth more than their
        // safety says (`risk`).
        let mut risk = None;
        let sealed = forced_guess(view, probs).or_else(|| {
            risk = (self.long_term_risk.unwrap_or(self.risk_by_default) && !probs.approximate)
                .then(|| LongTermRisk::new(view, probs, &mut self.predictor));
            risk.as_ref()
                .map(|r| r.pseudo.clone())
                .filter(|p| !p.is_empty())
        });
        if let Some(set) = sealed {
            let i = self.most_informative(view, &set, probs, None);
            return Decision::Guess {
                cell: dims.cell(i),
                risk: probs.p[i],
                endgame: false,
            };
        }
        let cells = view.cells();
        let mut candidates: Vec<usize> = (0..cells.len())
            .filter(|&i| cells[i].is_hidden() && probs.p[i] < 1.0)
            .collect();
        // Dead cells wait while a living one is left (`information`).
        if !probs.approximate {
            let living: Vec<usize> = candidates
                .iter()
                .copied()
                .filter(|&i| !is_dead(view, probs, i))
                .collect();
            if !living.is_empty() {
                candidates = living;
            }
        }
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
        // Cells whose risk is partly one the game will charge anyway join them when
        // what is left of it is within 10% of the safest (JSMinesweeper's cut).
        if let Some(r) = &mut risk {
            for &i in &candidates {
                let f = r.influence[i];
                if f > 0.0 && 1.0 - probs.p[i] + f > 0.9 * (1.0 - best) && !shortlist.contains(&i) {
                    shortlist.push(i);
                }
            }
            r.refine(view, probs, &mut self.predictor, &shortlist);
        }
        let i = if shortlist.is_empty() {
            candidates.first().copied().unwrap_or(0)
        } else {
            self.most_informative(view, &shortlist, probs, risk.as_ref())
        };
        Decision::Guess {
            cell: dims.cell(i),
            risk: probs.p[i],
            endgame: false,
        }
    }

    /// The cell of `cells` (not empty, best first by the caller's order) with the best
    /// chance of surviving it and the move after it, when the probabilities are exact,
    /// weighed up by its long-term `risk` bonus when given; else the first.
    fn most_informative(
        &mut self,
        view: &View,
        cells: &[usize],
        probs: &Probabilities,
        risk: Option<&LongTermRisk>,
    ) -> usize {
        let mut pick = cells[0];
        if !probs.approximate && cells.len() > 1 {
            let mut best_score = f64::NEG_INFINITY;
            let mut hypo = view.clone();
            for &i in cells {
                let bonus = risk.map_or(1.0, |r| r.bonus(i, probs));
                // a score is at most the chance the cell is safe (times its bonus): a
                // cell that cannot beat the best so far is not looked at
                if (1.0 - probs.p[i]) * bonus <= best_score + 1e-12 {
                    continue;
                }
                let to_beat = best_score / bonus;
                if let Some(score) = self.two_step_survival(&mut hypo, i, probs, to_beat) {
                    let score = score * bonus;
                    if score > best_score + 1e-12 {
                        best_score = score;
                        pick = i;
                    }
                }
            }
        }
        pick
    }

    /// The chance of surviving a guess at `cell` and the move after it: the cell is
    /// safe, and then either its number makes some cell certainly safe (progress for
    /// free) or the next guess is survived too. Each possible number is tried with the
    /// predictor (on `hypo`, a copy of the position that is restored before return);
    /// the share of layouts behind each weighs it. Returns `None` when no number could
    /// be weighed, or when the score certainly cannot exceed `to_beat`.
    fn two_step_survival(
        &mut self,
        hypo: &mut View,
        cell: usize,
        probs: &Probabilities,
        to_beat: f64,
    ) -> Option<f64> {
        let original = hypo.cells()[cell];
        let outcomes = self.outcomes(hypo, cell, probs, to_beat);
        hypo.set(cell, original);
        let outcomes = outcomes?;
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
        Some((1.0 - probs.p[cell]) * weighted / total)
    }

    /// Each number `cell` could show, tried on `hypo` (left changed): the log of its
    /// layouts and the chance of surviving the move after it. `None` when the predictor
    /// cannot count layouts, or when the score certainly cannot exceed `to_beat`.
    fn outcomes(
        &mut self,
        hypo: &mut View,
        cell: usize,
        probs: &Probabilities,
        to_beat: f64,
    ) -> Option<Vec<(f64, f64)>> {
        let risk = probs.p[cell];
        // The number must count the certain mines around the cell, and at most all the
        // uncertain ones too: other values have no layout, and are not tried.
        let dims = hypo.dims();
        let (mut sure, mut unsure) = (0u8, 0u8);
        for j in dims.neighbours(cell) {
            if hypo.cells()[j].is_hidden() {
                if probs.p[j] >= 1.0 {
                    sure += 1;
                } else if probs.p[j] > 0.0 {
                    unsure += 1;
                }
            } else if hypo.cells()[j] == Seen::Mine {
                sure += 1;
            }
        }
        // The layouts with the cell safe, in total: the shares of the numbers tried so
        // far bound the score from above, so a hopeless cell stops early.
        let ln_safe = probs.ln_layouts.map(|l| l + (1.0 - risk).ln());
        let mut outcomes = Vec::new();
        let (mut share_done, mut value_done) = (0.0, 0.0);
        for k in sure..=sure + unsure {
            hypo.set(cell, Seen::Number(k));
            let Ok(p) = self.predictor.predict(hypo) else {
                continue;
            };
            let ln = p.ln_layouts?;
            let value = next_value(hypo, &p);
            outcomes.push((ln, value));
            if let Some(ln_safe) = ln_safe {
                let share = (ln - ln_safe).exp();
                share_done += share;
                value_done += share * value;
                let bound = (1.0 - risk) * (value_done + (1.0 - share_done).max(0.0));
                if bound + 1e-9 <= to_beat {
                    return None;
                }
            }
        }
        Some(outcomes)
    }
}

/// Boards of more than 300 cells (expert, not intermediate), where the opening rule's
/// best first click and the worth of long-term risk were measured to differ.
fn is_large(dims: Dims) -> bool {
    dims.cells() > 300
}

/// What the position after a surviving guess is worth for the move after it: 1 when
/// it offers a certainly safe cell that is living (a dead safe cell is free to reveal
/// but tells nothing, so the next guess is still to come), else the chance of
/// surviving the safest living guess (the agent takes a dead cell only when nothing
/// else is left); 1 when every hidden cell left is a mine or safe (the game is won).
/// `p` must be exact for `view`.
fn next_value(view: &View, p: &Probabilities) -> f64 {
    if p.safe.iter().any(|&i| !is_dead(view, p, i)) {
        return 1.0;
    }
    let cells = view.cells();
    let (mut living, mut any) = (f64::INFINITY, f64::INFINITY);
    for (i, cell) in cells.iter().enumerate() {
        let q = p.p[i];
        if !cell.is_hidden() || q >= 1.0 || q <= 0.0 {
            continue;
        }
        any = any.min(q);
        // deadness is looked at only for a cell that would be the safest so far
        if q < living && !is_dead(view, p, i) {
            living = q;
        }
    }
    if living.is_finite() {
        1.0 - living
    } else if any.is_finite() && p.safe.is_empty() {
        1.0 - any
    } else {
        // only safe cells and mines are left: the game is won
        1.0
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
    // Sets of layouts are bit sets over their positions in `layouts`, sized for the
    // count (one word covers the default limit of 64).
    let best = match layouts.len() {
        0..=64 => Endgame::<1>::run(around, &layouts),
        65..=256 => Endgame::<4>::run(around, &layouts),
        257..=1024 => Endgame::<16>::run(around, &layouts),
        1025..=4096 => Endgame::<64>::run(around, &layouts),
        _ => None,
    };
    best.map(|k| unknown[k])
}

/// The exhaustive endgame search over at most `64 * W` layouts.
struct Endgame<'a, const W: usize> {
    /// Per unknown cell: its unknown neighbours (mask) and known mines around it.
    around: Vec<(u64, u32)>,
    /// Each layout: the unknown cells holding a mine.
    layouts: &'a [u64],
    /// Win probability by (set of layouts, cells revealed).
    memo: FxHashMap<([u64; W], u64), f64>,
    nodes: u64,
}

/// How many layouts `set` holds.
fn size<const W: usize>(set: &[u64; W]) -> u32 {
    set.iter().map(|w| w.count_ones()).sum()
}

/// Adds layout `l` to `set`.
fn insert<const W: usize>(set: &mut [u64; W], l: usize) {
    set[l / 64] |= 1 << (l % 64);
}

/// The layouts in `set`, by position.
fn members<const W: usize>(set: &[u64; W]) -> impl Iterator<Item = usize> + '_ {
    set.iter().enumerate().flat_map(|(w, &word)| {
        let mut bits = word;
        std::iter::from_fn(move || {
            (bits != 0).then(|| {
                let b = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                w * 64 + b
            })
        })
    })
}

impl<'a, const W: usize> Endgame<'a, W> {
    const NODE_LIMIT: u64 = 200_000;

    /// A search over `layouts`, with each unknown cell's surroundings in `around`.
    fn new(around: Vec<(u64, u32)>, layouts: &'a [u64]) -> Self {
        Endgame {
            around,
            layouts,
            memo: FxHashMap::default(),
            nodes: 0,
        }
    }

    /// All the layouts, as a set.
    fn all(&self) -> [u64; W] {
        let mut all = [0u64; W];
        for l in 0..self.layouts.len() {
            insert(&mut all, l);
        }
        all
    }

    /// The unknown cell to reveal first, searching from all of `layouts`.
    fn run(around: Vec<(u64, u32)>, layouts: &'a [u64]) -> Option<usize> {
        let mut search = Self::new(around, layouts);
        let all = search.all();
        search.best(&all, 0)?.1
    }

    /// Win probability from the layouts in `set` with `revealed` cells known safe,
    /// and the unknown cell to reveal next. `None` if the search ran out of budget.
    fn best(&mut self, set: &[u64; W], revealed: u64) -> Option<(f64, Option<usize>)> {
        self.nodes += 1;
        if self.nodes > Self::NODE_LIMIT {
            return None;
        }
        let count = size(set);
        if count == 1 {
            return Some((1.0, None));
        }
        let n = self.around.len();
        let valid = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
        let (mut any_mine, mut all_mine) = (0u64, u64::MAX);
        for l in members(set) {
            any_mine |= self.layouts[l];
            all_mine &= self.layouts[l];
        }
        let open = valid & !revealed;
        // cells that differ between layouts and are not yet revealed
        if open & (any_mine ^ all_mine) == 0 {
            // the layouts agree on every cell we could still learn: nothing to gain
            return Some((1.0 / f64::from(count), None));
        }
        let key = (*set, revealed);
        if let Some(&v) = self.memo.get(&key) {
            return Some((v, None));
        }
        let total = f64::from(count);
        // a cell safe in every layout is free to reveal: try only those, if any
        let safe_everywhere = open & !any_mine;
        let candidates = if safe_everywhere != 0 {
            safe_everywhere
        } else {
            open & !all_mine
        };
        // safest first, so that the bounds below cut early
        let mut mines = [0u32; 64];
        for l in members(set) {
            let mut bits = self.layouts[l] & candidates;
            while bits != 0 {
                mines[bits.trailing_zeros() as usize] += 1;
                bits &= bits - 1;
            }
        }
        let mut order = [0u8; 64];
        let mut len = 0;
        for k in (0..n).filter(|&k| candidates >> k & 1 == 1) {
            order[len] = k as u8;
            len += 1;
        }
        let order = &mut order[..len];
        order.sort_by_key(|&k| mines[usize::from(k)]);
        let mut best = (-1.0, None);
        for k in order.iter().map(|&k| usize::from(k)) {
            // the layouts where cell k is safe, by the number it would show
            let mut groups = [[0u64; W]; 9];
            let mut safe = 0u32;
            for l in members(set) {
                let layout = self.layouts[l];
                if layout >> k & 1 == 0 {
                    let number = (layout & self.around[k].0).count_ones() + self.around[k].1;
                    insert(&mut groups[(number as usize).min(8)], l);
                    safe += 1;
                }
            }
            // A cell wins at most as often as it is safe, and each group at most its
            // share: a cell that cannot beat the best so far is dropped unsearched
            // (exact: such a cell would not have been chosen).
            let mut left = f64::from(safe) / total;
            if left <= best.0 + 1e-12 {
                continue;
            }
            let mut win = 0.0;
            for g in &groups {
                let in_group = size(g);
                if in_group == 0 {
                    continue;
                }
                let share = f64::from(in_group) / total;
                let (w, _) = self.best(g, revealed | 1 << k)?;
                win += share * w;
                left -= share;
                if win + left <= best.0 + 1e-12 {
                    break;
                }
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

    /// The exact solver without its quick deductions: every turn is a full solve.
    struct SolveEveryTurn(ExactSolver);

    impl CellPredictor for SolveEveryTurn {
        fn name(&self) -> &str {
            "exact, every turn"
        }
        fn predict(&mut self, view: &View) -> Result<Probabilities, MinesError> {
            self.0.predict(view)
        }
    }

    #[test]
    fn quick_deductions_change_the_speed_not_the_games() {
        for rule in [FirstClick::Safe, FirstClick::Opening] {
            for seed in 0..30 {
                let cfg = Config::level(Level::Intermediate, rule);
                let mut a = Minefield::new(cfg, seed);
                let mut b = Minefield::new(cfg, seed);
                let quick = Agent::new(ExactSolver::default()).play(&mut a).unwrap();
                let full = Agent::new(SolveEveryTurn(ExactSolver::default()))
                    .play(&mut b)
                    .unwrap();
                assert_eq!(a.view(), b.view(), "{rule} seed {seed}");
                assert_eq!(
                    (quick.won, quick.guesses, quick.endgame_guesses),
                    (full.won, full.guesses, full.endgame_guesses)
                );
                // the quick path took turns of its own instead of full solves
                assert!(quick.turns >= full.turns);
            }
        }
    }

    #[test]
    fn the_look_ahead_stops_only_when_a_cell_cannot_win() {
        let mut checked = 0;
        for seed in 0..40 {
            let cfg = Config::level(Level::Expert, FirstClick::Safe);
            let mut game = Minefield::new(cfg, seed);
            let mut agent = Agent::new(ExactSolver::default());
            game.reveal(Cell::new(0, 0)).unwrap();
            while game.status() == Status::Playing {
                let view = game.view();
                let probs = ExactSolver::default().solve(&view).unwrap();
                if probs.safe.is_empty() {
                    // score a few of the safest cells in full, then with bounds
                    let mut cells: Vec<usize> = view
                        .hidden()
                        .into_iter()
                        .filter(|&i| probs.p[i] < 1.0)
                        .collect();
                    cells.sort_by(|&a, &b| probs.p[a].total_cmp(&probs.p[b]));
                    let mut hypo = view.clone();
                    for &i in cells.iter().take(4) {
                        let full = agent
                            .two_step_survival(&mut hypo, i, &probs, f64::NEG_INFINITY)
                            .unwrap();
                        assert_eq!(hypo, view, "the position is restored");
                        assert!(full <= 1.0 - probs.p[i] + 1e-12);
                        let below = agent.two_step_survival(&mut hypo, i, &probs, full - 0.01);
                        assert_eq!(below, Some(full));
                        for to_beat in [full + 1e-6, full + 0.05] {
                            if let Some(s) = agent.two_step_survival(&mut hypo, i, &probs, to_beat)
                            {
                                assert_eq!(s, full);
                            }
                        }
                        checked += 1;
                    }
                }
                agent.decide(&view, &probs).apply(&mut game).unwrap();
            }
        }
        assert!(checked > 50, "only {checked} cells checked");
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

    fn value_after(text: &str) -> f64 {
        let view = View::parse(text).unwrap();
        let probs = ExactSolver::default().solve(&view).unwrap();
        next_value(&view, &probs)
    }

    #[test]
    fn a_dead_safe_cell_is_not_progress() {
        // (0,1) is safe (next to the 0) but dead: no hidden cell around it is in
        // doubt. (0,3) is a mine, and one of the last three cells holds the other
        // mine: the next guess survives with 2/3, whatever (0,1) shows.
        let v = value_after("7x1 2\n0.1....\n");
        assert!((v - 2.0 / 3.0).abs() < 1e-9, "{v}");
        // Here the safe cells next to the 0 see cells in doubt: revealing them may
        // tell, so the position is worth a free move.
        assert_eq!(value_after("4x2 1\n0...\n....\n"), 1.0);
        // Only a mine is left hidden: the game is won.
        assert_eq!(value_after("3x1 1\n01.\n"), 1.0);
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
        let mut e = Endgame::<1>::new(vec![(0b10, 0), (0b01, 0)], &lay);
        let (win, best) = e.best(&[0b11], 0).unwrap();
        assert_eq!(unknown.len(), 2);
        assert!((win - 0.5).abs() < 1e-12 && best.is_some());
        // four in a row, one mine: revealing an inner cell shows a number that tells
        // a lot; the search finds a 3/4 guess that then wins for sure more often than 1/4
        let v = View::parse("4x1 1\n....\n").unwrap();
        let probs = ExactSolver::default().solve(&v).unwrap();
        let (_, lay) = layouts(&v, &probs, 64).unwrap();
        let around = vec![(0b0010, 0), (0b0101, 0), (0b1010, 0), (0b0100, 0)];
        let mut e = Endgame::<1>::new(around.clone(), &lay);
        let all = e.all();
        assert_eq!(all, [(1u64 << lay.len()) - 1]);
        let (win, _) = e.best(&all, 0).unwrap();
        // the same search with wider bit sets gives the same answer
        let mut wide = Endgame::<4>::new(around, &lay);
        let all4 = wide.all();
        assert_eq!(wide.best(&all4, 0).unwrap().0, win);
        // reveal cell 1 (3/4 safe): its number 0 or 1 locates the mine except when it
        // reads 1 with the mine on either side... exact value: 3/4 * (1/3 + 2/3 * 1/2)
        assert!(win >= 0.5 - 1e-12, "{win}");
    }

    /// Win probability by plain recursion over every open cell, with neither memo,
    /// bounds nor the surely-safe shortcut: the reference for the search.
    fn reference_win(around: &[(u64, u32)], layouts: &[u64], set: &[usize], revealed: u64) -> f64 {
        if set.len() == 1 {
            return 1.0;
        }
        let mut best = 1.0 / set.len() as f64;
        for (k, &(mask, known)) in around.iter().enumerate() {
            if revealed >> k & 1 == 1 {
                continue;
            }
            let mut groups: Vec<Vec<usize>> = vec![Vec::new(); 9];
            for &l in set {
                if layouts[l] >> k & 1 == 0 {
                    let number = (layouts[l] & mask).count_ones() + known;
                    groups[(number as usize).min(8)].push(l);
                }
            }
            let win: f64 = groups
                .iter()
                .filter(|g| !g.is_empty())
                .map(|g| {
                    g.len() as f64 / set.len() as f64
                        * reference_win(around, layouts, g, revealed | 1 << k)
                })
                .sum();
            best = best.max(win);
        }
        best
    }

    proptest::proptest! {
        #[test]
        fn the_endgame_search_finds_the_best_win_probability(
            n in 2usize..8,
            masks in proptest::collection::vec(0u64..256, 8),
            known in proptest::collection::vec(0u32..2, 8),
            picks in proptest::collection::btree_set(0u64..256, 2..24),
        ) {
            let full = (1u64 << n) - 1;
            let around: Vec<(u64, u32)> = (0..n)
                .map(|k| (masks[k] & full & !(1 << k), known[k]))
                .collect();
            let layouts: Vec<u64> = picks
                .iter()
                .map(|&p| p & full)
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            proptest::prop_assume!(layouts.len() >= 2);
            let mut search = Endgame::<1>::new(around.clone(), &layouts);
            let all = search.all();
            let (win, _) = search.best(&all, 0).unwrap();
            let set: Vec<usize> = (0..layouts.len()).collect();
            let expected = reference_win(&around, &layouts, &set, 0);
            proptest::prop_assert!((win - expected).abs() < 1e-9, "{} vs {}", win, expected);
        }
    }

    #[test]
    fn a_pseudo_fifty_fifty_is_guessed_at_once_when_long_term_risk_is_weighed() {
        // The pair (0,9),(0,10) between two mines will be a coin flip whenever the
        // one mine left is in it; every hidden cell is equally risky. By safety and
        // position alone the agent opens at the far end, at (0,0) or (0,7).
        let view = View::parse("12x1 3\n........*..*\n").unwrap();
        let mut solver = ExactSolver::default();
        let probs = solver.predict(&view).unwrap();
        let mut agent = Agent::new(solver);
        agent.endgame_layouts = 0;
        let pick = |agent: &mut Agent<ExactSolver>| match agent.decide(&view, &probs) {
            Decision::Guess { cell, .. } => cell.col,
            d => panic!("expected a guess, got {d:?}"),
        };
        assert!(pick(&mut agent) < 8);
        // by default it is weighed in large games that began with an opening
        agent.risk_by_default = true;
        assert!([9, 10].contains(&pick(&mut agent)));
        agent.long_term_risk = Some(false);
        assert!(pick(&mut agent) < 8);
        agent.risk_by_default = false;
        agent.long_term_risk = Some(true);
        assert!([9, 10].contains(&pick(&mut agent)));
    }
}
