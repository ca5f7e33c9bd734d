//! Long-term risk: the 50/50s that may yet form, and what a guess now does about them.
//!
//! Two hidden cells side by side that hold one mine between them can never be told
//! apart once every cell touching one of them but not the other is a mine (or off the
//! board): every number that is or will be shown counts their mine as one lump, and
//! some later guess must take the coin flip. A 2x2 block whose mines lie on one
//! diagonal is the same when its four corner neighbours are mines. While such a wall
//! is still incomplete, the chance that it will close is a risk the game charges
//! anyway — unless a guess in the pattern, or at a missing wall cell, settles it
//! first. So guessing there costs less than its P(mine) says, and the agent weighs it
//! up (JSMinesweeper's "50/50 influence", reimplemented from its description). When
//! every layout with a mine on a cell is such a pattern (a pseudo-50/50), guessing it
//! now loses nothing that waiting could save, and its number comes sooner.
//!
//! The share of layouts in which a pattern forms is counted exactly: the pattern's
//! mine cells and missing walls are set as known mines in a copy of the position, and
//! the predictor's layout count there is compared with the position's.

use crate::cell::{Cell, Dims};
use crate::information::is_dead;
use crate::predictor::{CellPredictor, Probabilities};
use crate::view::{Seen, View};

/// Most wall cells that may still be missing for a pattern through a candidate guess
/// to count.
const MAX_MISSING: usize = 3;
/// Most missing wall cells of the patterns looked for over the whole board (pairs,
/// blocks): only these lend their risk to their walls and make pseudo-50/50s.
const MAX_MISSING_NEAR: [usize; 3] = [1, 1, 2];
/// Share of layouts below which a nearly closed pattern lends its walls no risk.
const WALL_THRESHOLD: f64 = 0.025;
/// Patterns that cannot form in more than this share of layouts are not counted: they
/// would move a guess's worth by under 0.2%.
const MIN_SHARE: f64 = 0.002;

/// What the 50/50s that may form mean for each cell.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LongTermRisk {
    /// Per cell, the share of layouts in which a 50/50 that a guess at the cell would
    /// settle forms (at most the cell's P(mine) and P(safe)); 0 elsewhere.
    pub influence: Vec<f64>,
    /// Living cells each of whose mine layouts is such a 50/50 (pseudo-50/50s),
    /// ascending.
    pub pseudo: Vec<usize>,
    /// Per cell: the pairs' shares (they add up: a cell can settle several), the
    /// largest block's (blocks overlap heavily), and the shares of the nearly closed
    /// patterns it is a missing wall of.
    pairs: Vec<f64>,
    blocks: Vec<f64>,
    walls: Vec<f64>,
    /// Per pattern shape and anchor, whether it has been looked at.
    visited: Vec<bool>,
    /// Layouts of the position (natural log); `None` when they are not counted.
    ln_total: Option<f64>,
}

impl LongTermRisk {
    /// The nearly closed patterns of the whole of `view`: pseudo-50/50s, and the
    /// influence they lend their cells and missing walls. `probs` must be exact and carry
    /// a layout count (else nothing is found); `predictor` counts the layouts of
    /// hypothetical positions, and must be exact too.
    pub fn new<P: CellPredictor + ?Sized>(
        view: &View,
        probs: &Probabilities,
        predictor: &mut P,
    ) -> Self {
        let n = view.cells().len();
        let mut risk = LongTermRisk {
            influence: vec![0.0; n],
            pairs: vec![0.0; n],
            blocks: vec![0.0; n],
            walls: vec![0.0; n],
            visited: vec![false; PATTERNS.len() * n],
            ln_total: probs.ln_layouts.filter(|_| !probs.approximate),
            ..Default::default()
        };
        if risk.ln_total.is_some() {
            let mut hypo = view.clone();
            for shape in 0..PATTERNS.len() {
                for anchor in 0..n {
                    risk.visit(view, probs, predictor, &mut hypo, shape, anchor, true);
                }
            }
            for i in 0..n {
                risk.update(i, probs);
            }
            risk.pseudo.sort_unstable();
        }
        risk
    }

    /// Counts, for each of `cells`, the patterns through it whose walls are further from
    /// closing (up to [`MAX_MISSING`] missing), into its influence.
    pub fn refine<P: CellPredictor + ?Sized>(
        &mut self,
        view: &View,
        probs: &Probabilities,
        predictor: &mut P,
        cells: &[usize],
    ) {
        if self.ln_total.is_none() {
            return;
        }
        let dims = view.dims();
        let mut hypo = view.clone();
        for &cell in cells {
            for (shape, pattern) in PATTERNS.iter().enumerate() {
                for &(dr, dc) in pattern.cells {
                    if let Some(anchor) = offset(dims, cell, (-dr, -dc)) {
                        self.visit(view, probs, predictor, &mut hypo, shape, anchor, false);
                    }
                }
            }
        }
        for &i in cells {
            self.update(i, probs);
        }
    }

    /// The factor by which a guess at `cell` is worth more than its safety alone says:
    /// 1 + 0.9 · influence / P(safe) (JSMinesweeper's weighting).
    pub fn bonus(&self, cell: usize, probs: &Probabilities) -> f64 {
        let safe = 1.0 - probs.p[cell];
        match self.influence.get(cell) {
            Some(&f) if f > 0.0 && safe > 0.0 => 1.0 + 0.9 * f / safe,
            _ => 1.0,
        }
    }

    fn update(&mut self, i: usize, probs: &Probabilities) {
        let f = self.pairs[i] + self.blocks[i] + self.walls[i];
        self.influence[i] = f.min(probs.p[i]).min(1.0 - probs.p[i]).max(0.0);
    }

    /// Counts the pattern `shape` at `anchor` once: only when nearly closed if `near`.
    #[allow(clippy::too_many_arguments)]
    fn visit<P: CellPredictor + ?Sized>(
        &mut self,
        view: &View,
        probs: &Probabilities,
        predictor: &mut P,
        hypo: &mut View,
        shape: usize,
        anchor: usize,
        near: bool,
    ) {
        let key = shape * view.cells().len() + anchor;
        let Some(ln_total) = self.ln_total.filter(|_| !self.visited[key]) else {
            return;
        };
        // looked at once, unless left for `refine` below
        self.visited[key] = true;
        let pattern = &PATTERNS[shape];
        let dims = view.dims();
        let cells = view.cells();
        let uncertain = |i: usize| cells[i].is_hidden() && probs.p[i] > 0.0 && probs.p[i] < 1.0;
        let mut members = [0usize; 4];
        for (k, &o) in pattern.cells.iter().enumerate() {
            match offset(dims, anchor, o) {
                Some(i) if uncertain(i) => members[k] = i,
                _ => return,
            }
        }
        let members = &members[..pattern.cells.len()];
        let mut missing = [0usize; 6];
        let mut m = 0;
        for &o in pattern.walls {
            let Some(w) = offset(dims, anchor, o) else {
                continue;
            };
            match cells[w] {
                Seen::Mine => {}
                Seen::Hidden | Seen::Flagged if probs.p[w] >= 1.0 => {}
                // a wall that is or will be a number sees one side only
                Seen::Number(_) => return,
                _ if probs.p[w] <= 0.0 => return,
                _ => {
                    missing[m] = w;
                    m += 1;
                }
            }
        }
        let missing = &missing[..m];
        let close = m <= MAX_MISSING_NEAR[shape];
        if near && !close {
            self.visited[key] = false;
            return;
        }
        if m > MAX_MISSING {
            return;
        }
        // no pattern forms more often than its least likely cell is as it needs
        let bound = missing
            .iter()
            .map(|&w| probs.p[w])
            .chain(members.iter().enumerate().map(|(k, &c)| {
                if pattern.mines.contains(&k) {
                    probs.p[c]
                } else {
                    1.0 - probs.p[c]
                }
            }))
            .fold(1.0, f64::min);
        if bound < MIN_SHARE {
            return;
        }
        let Some(share) = pattern_share(hypo, predictor, ln_total, members, pattern.mines, missing)
        else {
            return;
        };
        if share <= 0.0 {
            return;
        }
        for &c in members {
            if shape < 2 {
                self.pairs[c] += share;
            } else {
                self.blocks[c] = self.blocks[c].max(share);
            }
        }
        if close && share > WALL_THRESHOLD {
            for &w in missing {
                self.walls[w] += share;
            }
        }
        if close {
            for &c in members {
                // every layout with a mine at `c` is this pattern (or its mirror)
                if share >= probs.p[c] * (1.0 - 1e-9)
                    && !self.pseudo.contains(&c)
                    && !is_dead(view, probs, c)
                {
                    self.pseudo.push(c);
                }
            }
        }
    }
}

/// One shape a 50/50 can take, anchored at its top-left cell.
struct Pattern {
    /// The pattern's cells: (row, col) offsets from the anchor.
    cells: &'static [(isize, isize)],
    /// Which of `cells` hold the mines in the layouts counted (the other half of the
    /// 50/50 is the mirror image, equally likely).
    mines: &'static [usize],
    /// Cells that must all be mines: each touches some but not all of `cells`.
    walls: &'static [(isize, isize)],
}

const PATTERNS: [Pattern; 3] = [
    // two cells side by side
    Pattern {
        cells: &[(0, 0), (0, 1)],
        mines: &[0],
        walls: &[(-1, -1), (0, -1), (1, -1), (-1, 2), (0, 2), (1, 2)],
    },
    // two cells one above the other
    Pattern {
        cells: &[(0, 0), (1, 0)],
        mines: &[0],
        walls: &[(-1, -1), (-1, 0), (-1, 1), (2, -1), (2, 0), (2, 1)],
    },
    // a 2x2 block, mines on a diagonal
    Pattern {
        cells: &[(0, 0), (0, 1), (1, 0), (1, 1)],
        mines: &[0, 3],
        walls: &[(-1, -1), (-1, 2), (2, -1), (2, 2)],
    },
];

/// The cell at `offset` from `anchor`, if it is on the board.
fn offset(dims: Dims, anchor: usize, (dr, dc): (isize, isize)) -> Option<usize> {
    let Cell { row, col } = dims.cell(anchor);
    let r = row.checked_add_signed(dr)?;
    let c = col.checked_add_signed(dc)?;
    dims.contains(Cell::new(r, c))
        .then(|| dims.index(Cell::new(r, c)))
}

/// The share of layouts in which `members` form the 50/50 with mines at the cells
/// `mines` picks (its others safe) and every cell of `missing` a mine. Counted on
/// `hypo`, a copy of the position that is restored before return. The chance that
/// two safe cells of a block are both safe is taken as the product of their chances.
fn pattern_share<P: CellPredictor + ?Sized>(
    hypo: &mut View,
    predictor: &mut P,
    ln_total: f64,
    members: &[usize],
    mines: &[usize],
    missing: &[usize],
) -> Option<f64> {
    let placed: Vec<usize> = missing
        .iter()
        .copied()
        .chain(mines.iter().map(|&k| members[k]))
        .collect();
    let before: Vec<Seen> = placed.iter().map(|&i| hypo.cells()[i]).collect();
    for &i in &placed {
        hypo.set(i, Seen::Mine);
    }
    let result = predictor.predict(hypo);
    for (&i, &seen) in placed.iter().zip(&before) {
        hypo.set(i, seen);
    }
    let p = match result {
        Ok(p) if !p.approximate => p,
        // no layout at all: the pattern cannot form
        Err(crate::error::MinesError::Inconsistent) => return Some(0.0),
        _ => return None,
    };
    let ln = p.ln_layouts?;
    let mut share = (ln - ln_total).exp();
    for (k, &m) in members.iter().enumerate() {
        if !mines.contains(&k) {
            share *= 1.0 - p.p[m];
        }
    }
    Some(share)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::ExactSolver;

    fn risk_of(text: &str) -> (View, Probabilities, LongTermRisk) {
        let view = View::parse(text).unwrap();
        let mut solver = ExactSolver::default();
        let probs = solver.predict(&view).unwrap();
        let risk = LongTermRisk::new(&view, &probs, &mut solver);
        (view, probs, risk)
    }

    #[test]
    fn a_pair_walled_in_that_cannot_hold_two_mines_is_a_pseudo_fifty_fifty() {
        // (0,9),(0,10) lie between two mines; the one mine left is somewhere among
        // the ten hidden cells, so whenever it is in the pair no number will ever say
        // which of the two holds it. No other pair can close: its missing wall would
        // need a second mine.
        let (_, probs, risk) = risk_of("12x1 3\n........*..*\n");
        assert_eq!(risk.pseudo, vec![9, 10]);
        assert!((risk.influence[9] - 0.1).abs() < 1e-9, "{risk:?}");
        assert_eq!(risk.influence[3], 0.0);
        assert!((risk.bonus(9, &probs) - (1.0 + 0.9 * 0.1 / 0.9)).abs() < 1e-9);
        assert_eq!(risk.bonus(3, &probs), 1.0);
    }

    #[test]
    fn a_missing_wall_shares_the_risk_of_the_pattern_it_would_close() {
        // Two mines in four cells, no numbers: six layouts. The pair (0,0),(0,1)
        // closes when (0,2) is a mine, and holds its mine at (0,0) in one layout:
        // {0,2}. The pair (0,1),(0,2) would need both walls and its own mine.
        let (_, _, risk) = risk_of("4x1 2\n....\n");
        let sixth = 1.0 / 6.0;
        for (cell, want) in [(0, sixth), (1, 2.0 * sixth), (2, 2.0 * sixth), (3, sixth)] {
            assert!(
                (risk.influence[cell] - want).abs() < 1e-9,
                "{cell}: {risk:?}"
            );
        }
        assert!(risk.pseudo.is_empty());
    }

    #[test]
    fn refining_counts_the_patterns_further_from_closing() {
        // Three mines in five cells, ten layouts. Over the board, (0,1) is in the
        // pair (0,0),(0,1), which closes when (0,2) is a mine: {0,2,3} and {0,2,4}.
        // Refined, it also counts the pair (0,1),(0,2) with both walls missing: {0,1,3}.
        let view = View::parse("5x1 3\n.....\n").unwrap();
        let mut solver = ExactSolver::default();
        let probs = solver.predict(&view).unwrap();
        let mut risk = LongTermRisk::new(&view, &probs, &mut solver);
        assert!((risk.influence[1] - 0.2).abs() < 1e-9, "{risk:?}");
        risk.refine(&view, &probs, &mut solver, &[1]);
        assert!((risk.influence[1] - 0.3).abs() < 1e-9, "{risk:?}");
    }

    #[test]
    fn estimates_find_nothing() {
        let view = View::parse("4x1 2\n....\n").unwrap();
        let mut solver = ExactSolver::default();
        let mut probs = solver.predict(&view).unwrap();
        probs.approximate = true;
        let risk = LongTermRisk::new(&view, &probs, &mut solver);
        assert!(risk.influence.iter().all(|&f| f == 0.0));
    }
}
