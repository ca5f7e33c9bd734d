//! Exact mine probabilities: for every hidden cell, the share of the mine layouts that
//! agree with every revealed number (and the total mine count) that put a mine there.
//!
//! How: each revealed number is a constraint "these hidden cells hold exactly k mines".
//! Hidden cells touched by a number (the frontier) are merged into boxes of cells that
//! touch exactly the same numbers: cells of a box are interchangeable, so only the box's
//! mine count matters, weighted by C(box size, count). Boxes linked by shared numbers
//! form independent components; each component's solutions are enumerated once, by
//! backtracking with bounds on every constraint, and summarised by mine count. The
//! components are then combined with the cells no number touches: a layout with `m`
//! mines on the frontier leaves `C(U, M - m)` ways to place the rest among the `U`
//! untouched cells. Weights are scaled (each component by its largest weight, the
//! binomials by their largest) so that nothing overflows on any board size.
//!
//! When enumeration would visit more than `budget` nodes, the solver falls back to the
//! teacher's estimates and says so (`approximate`).

use crate::error::MinesError;
use crate::predictor::CellPredictor;
pub use crate::predictor::Probabilities;
use crate::teacher::Teacher;
use crate::view::{Seen, View};

/// The exact solver.
#[derive(Clone, Copy, Debug)]
pub struct ExactSolver {
    /// Most enumeration nodes per position before falling back to estimates.
    pub budget: u64,
}

impl Default for ExactSolver {
    fn default() -> Self {
        ExactSolver { budget: 5_000_000 }
    }
}

/// A constraint: the boxes it covers hold exactly `need` mines.
struct Constraint {
    need: i64,
}

struct Component {
    boxes: Vec<usize>,
    constraints: Vec<usize>,
}

/// What enumeration of one component found, by the component's mine count `m`.
struct Tally {
    /// Total weight of the solutions with `m` mines.
    weight: Vec<f64>,
    /// Per box: weighted sum of the box's mine counts, by `m`.
    mine_sum: Vec<Vec<f64>>,
    /// Per box: whether some solution with `m` mines puts a mine in the box.
    can_mine: Vec<Vec<bool>>,
    /// Per box: whether some solution with `m` mines leaves a cell of the box empty.
    can_safe: Vec<Vec<bool>>,
}

struct BudgetExceeded;

/// Small binomial coefficients (boxes have at most 8 cells... or more on odd boards),
/// computed exactly in f64.
fn binomial(n: usize, k: usize) -> f64 {
    if k > n {
        return 0.0;
    }
    let k = k.min(n - k);
    let mut r = 1.0f64;
    for i in 0..k {
        r = r * (n - i) as f64 / (i + 1) as f64;
    }
    r.round()
}

fn convolve(a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; a.len() + b.len() - 1];
    for (i, &x) in a.iter().enumerate() {
        if x == 0.0 {
            continue;
        }
        for (j, &y) in b.iter().enumerate() {
            out[i + j] += x * y;
        }
    }
    out
}

/// Scales `v` so that its largest entry is 1; returns the natural log of the factor removed.
fn normalise(v: &mut [f64]) -> f64 {
    let max = v.iter().cloned().fold(0.0, f64::max);
    if max > 0.0 {
        for x in v.iter_mut() {
            *x /= max;
        }
        max.ln()
    } else {
        0.0
    }
}

impl ExactSolver {
    /// A solver that gives up on exactness after `budget` enumeration nodes.
    pub fn with_budget(budget: u64) -> Self {
        ExactSolver { budget }
    }

    /// Exact probabilities for `view`, or the teacher's estimates (marked
    /// `approximate`) if the enumeration budget runs out. Fails on an inconsistent
    /// position.
    pub fn solve(&self, view: &View) -> Result<Probabilities, MinesError> {
        let dims = view.dims();
        let cells = view.cells();
        let n = cells.len();
        let neighbours: Vec<Vec<usize>> = (0..n).map(|i| dims.neighbours(i).collect()).collect();

        // Constraints from numbers; known (revealed) mines are subtracted.
        let mut constraints = Vec::new();
        let mut cell_constraints: Vec<Vec<usize>> = vec![Vec::new(); n];
        for i in 0..n {
            let Seen::Number(k) = cells[i] else { continue };
            let known = neighbours[i]
                .iter()
                .filter(|&&j| cells[j] == Seen::Mine)
                .count() as i64;
            let hidden: Vec<usize> = neighbours[i]
                .iter()
                .copied()
                .filter(|&j| cells[j].is_hidden())
                .collect();
            let need = i64::from(k) - known;
            if need < 0 || need > hidden.len() as i64 {
                return Err(MinesError::Inconsistent);
            }
            if hidden.is_empty() {
                continue;
            }
            let id = constraints.len();
            constraints.push(Constraint { need });
            for j in hidden {
                cell_constraints[j].push(id);
            }
        }
        let revealed_mines = cells.iter().filter(|&&s| s == Seen::Mine).count();
        let remaining = view.mines() as i64 - revealed_mines as i64;
        if remaining < 0 {
            return Err(MinesError::Inconsistent);
        }
        let remaining = remaining as usize;

        // Boxes: frontier cells grouped by the exact set of constraints they touch.
        let mut boxes: Vec<Vec<usize>> = Vec::new(); // cells of each box
        let mut box_constraints: Vec<Vec<usize>> = Vec::new();
        {
            let mut by_signature: std::collections::HashMap<&[usize], usize> =
                std::collections::HashMap::new();
            for i in 0..n {
                if !cells[i].is_hidden() || cell_constraints[i].is_empty() {
                    continue;
                }
                let sig = cell_constraints[i].as_slice();
                let b = *by_signature.entry(sig).or_insert_with(|| {
                    boxes.push(Vec::new());
                    box_constraints.push(sig.to_vec());
                    boxes.len() - 1
                });
                boxes[b].push(i);
            }
        }
        let mut constraint_boxes: Vec<Vec<usize>> = vec![Vec::new(); constraints.len()];
        for (b, cs) in box_constraints.iter().enumerate() {
            for &c in cs {
                constraint_boxes[c].push(b);
            }
        }
        let unconstrained: Vec<usize> = (0..n)
            .filter(|&i| cells[i].is_hidden() && cell_constraints[i].is_empty())
            .collect();

        // Components, in an order where each box shares constraints with earlier ones,
        // so that constraints close (and prune) early.
        let mut components = Vec::new();
        let mut seen_box = vec![false; boxes.len()];
        for start in 0..boxes.len() {
            if seen_box[start] {
                continue;
            }
            let mut comp = Component {
                boxes: Vec::new(),
                constraints: Vec::new(),
            };
            let mut seen_c = vec![false; constraints.len()];
            let mut queue = std::collections::VecDeque::from([start]);
            seen_box[start] = true;
            while let Some(b) = queue.pop_front() {
                comp.boxes.push(b);
                for &c in &box_constraints[b] {
                    if !seen_c[c] {
                        seen_c[c] = true;
                        comp.constraints.push(c);
                        for &b2 in &constraint_boxes[c] {
                            if !seen_box[b2] {
                                seen_box[b2] = true;
                                queue.push_back(b2);
                            }
                        }
                    }
                }
            }
            components.push(comp);
        }

        let mut nodes = 0u64;
        let mut tallies = Vec::with_capacity(components.len());
        for comp in &components {
            match self.enumerate(
                comp,
                &boxes,
                &box_constraints,
                &constraints,
                &constraint_boxes,
                &mut nodes,
            ) {
                Ok(t) => tallies.push(t),
                Err(BudgetExceeded) => {
                    let mut est = Teacher.estimate(view);
                    est.approximate = true;
                    return Ok(est);
                }
            }
        }

        // Combine the components with the untouched cells.
        let u = unconstrained.len();
        let mut ln_scale = 0.0;
        let mut weights: Vec<Vec<f64>> = Vec::with_capacity(tallies.len());
        for t in &tallies {
            let mut w = t.weight.clone();
            ln_scale += normalise(&mut w);
            weights.push(w);
        }
        // ln C(u, k) for k = 0..=u, then scaled binomials over the frontier count m
        let mut ln_c = vec![0.0f64; u + 1];
        for k in 1..=u {
            ln_c[k] = ln_c[k - 1] + ((u - k + 1) as f64).ln() - (k as f64).ln();
        }
        let frontier_max: usize = weights.iter().map(|w| w.len() - 1).sum();
        let ln_c_at = |m: usize| -> Option<f64> {
            let rest = remaining.checked_sub(m)?;
            (rest <= u).then(|| ln_c[rest])
        };
        let ln_c_max = (0..=frontier_max)
            .filter_map(ln_c_at)
            .fold(f64::NEG_INFINITY, f64::max);
        if ln_c_max == f64::NEG_INFINITY {
            return Err(MinesError::Inconsistent);
        }
        let outside: Vec<f64> = (0..=frontier_max)
            .map(|m| ln_c_at(m).map_or(0.0, |l| (l - ln_c_max).exp()))
            .collect();
        let mut full = vec![1.0];
        for w in &weights {
            full = convolve(&full, w);
        }
        let z: f64 = full.iter().zip(&outside).map(|(f, o)| f * o).sum();
        if z <= 0.0 {
            return Err(MinesError::Inconsistent);
        }
        let ln_layouts = z.ln() + ln_scale + ln_c_max;

        let mut p = vec![0.0; n];
        let mut safe = Vec::new();
        let mut mines = Vec::new();
        for (i, s) in cells.iter().enumerate() {
            if *s == Seen::Mine {
                p[i] = 1.0;
            }
        }
        for (ci, comp) in components.iter().enumerate() {
            // the other components together, by their mine count
            let mut rest = vec![1.0];
            for (cj, w) in weights.iter().enumerate() {
                if cj != ci {
                    rest = convolve(&rest, w);
                }
            }
            // r[m]: weight of everything outside this component given it holds m mines
            let w = &weights[ci];
            let r: Vec<f64> = (0..w.len())
                .map(|m| {
                    rest.iter()
                        .enumerate()
                        .map(|(j, x)| x * outside.get(m + j).copied().unwrap_or(0.0))
                        .sum()
                })
                .collect();
            let t = &tallies[ci];
            let scale = t.weight.iter().cloned().fold(0.0, f64::max);
            for (bi, &b) in comp.boxes.iter().enumerate() {
                let size = boxes[b].len() as f64;
                let mut num = 0.0;
                let (mut any_mine, mut any_safe) = (false, false);
                for m in 0..w.len() {
                    if w[m] > 0.0 && r[m] > 0.0 {
                        num += t.mine_sum[bi][m] / scale * r[m];
                        any_mine |= t.can_mine[bi][m];
                        any_safe |= t.can_safe[bi][m];
                    }
                }
                let prob = if !any_mine {
                    0.0
                } else if !any_safe {
                    1.0
                } else {
                    (num / (size * z)).clamp(0.0, 1.0)
                };
                for &cell in &boxes[b] {
                    p[cell] = prob;
                    if !any_mine {
                        safe.push(cell);
                    } else if !any_safe {
                        mines.push(cell);
                    }
                }
            }
        }
        if u > 0 {
            let (mut num, mut any_mine, mut any_safe) = (0.0, false, false);
            for m in 0..full.len() {
                let x = full[m] * outside[m];
                if x > 0.0 {
                    let rest = remaining - m;
                    num += x * rest as f64 / u as f64;
                    any_mine |= rest > 0;
                    any_safe |= rest < u;
                }
            }
            let prob = if !any_mine {
                0.0
            } else if !any_safe {
                1.0
            } else {
                (num / z).clamp(0.0, 1.0)
            };
            for &cell in &unconstrained {
                p[cell] = prob;
                if !any_mine {
                    safe.push(cell);
                } else if !any_safe {
                    mines.push(cell);
                }
            }
        }
        safe.sort_unstable();
        mines.sort_unstable();
        Ok(Probabilities {
            p,
            safe,
            mines,
            approximate: false,
            ln_layouts: Some(ln_layouts),
        })
    }

    /// Enumerates every assignment of mine counts to the component's boxes that meets
    /// all its constraints.
    fn enumerate(
        &self,
        comp: &Component,
        boxes: &[Vec<usize>],
        box_constraints: &[Vec<usize>],
        constraints: &[Constraint],
        constraint_boxes: &[Vec<usize>],
        nodes: &mut u64,
    ) -> Result<Tally, BudgetExceeded> {
        let k = comp.boxes.len();
        let sizes: Vec<usize> = comp.boxes.iter().map(|&b| boxes[b].len()).collect();
        let max_m: usize = sizes.iter().sum();
        // local constraint state: remaining need and remaining unassigned capacity
        let mut need: Vec<i64> = vec![0; constraints.len()];
        let mut cap: Vec<i64> = vec![0; constraints.len()];
        for &c in &comp.constraints {
            need[c] = constraints[c].need;
            cap[c] = constraint_boxes[c]
                .iter()
                .map(|&b| boxes[b].len() as i64)
                .sum();
        }
        let mut tally = Tally {
            weight: vec![0.0; max_m + 1],
            mine_sum: vec![vec![0.0; max_m + 1]; k],
            can_mine: vec![vec![false; max_m + 1]; k],
            can_safe: vec![vec![false; max_m + 1]; k],
        };
        let binomials: Vec<Vec<f64>> = sizes
            .iter()
            .map(|&s| (0..=s).map(|j| binomial(s, j)).collect())
            .collect();
        let mut counts = vec![0usize; k];

        struct Search<'a> {
            comp: &'a Component,
            sizes: &'a [usize],
            box_constraints: &'a [Vec<usize>],
            binomials: &'a [Vec<f64>],
            budget: u64,
        }
        #[allow(clippy::too_many_arguments)]
        fn go(
            s: &Search<'_>,
            depth: usize,
            weight: f64,
            mines: usize,
            need: &mut [i64],
            cap: &mut [i64],
            counts: &mut [usize],
            tally: &mut Tally,
            nodes: &mut u64,
        ) -> Result<(), BudgetExceeded> {
            *nodes += 1;
            if *nodes > s.budget {
                return Err(BudgetExceeded);
            }
            if depth == s.comp.boxes.len() {
                tally.weight[mines] += weight;
                for (bi, &c) in counts.iter().enumerate() {
                    tally.mine_sum[bi][mines] += weight * c as f64;
                    tally.can_mine[bi][mines] |= c > 0;
                    tally.can_safe[bi][mines] |= c < s.sizes[bi];
                }
                return Ok(());
            }
            let b = s.comp.boxes[depth];
            let size = s.sizes[depth] as i64;
            let (mut lo, mut hi) = (0i64, size);
            for &c in &s.box_constraints[b] {
                lo = lo.max(need[c] - (cap[c] - size));
                hi = hi.min(need[c]);
            }
            if lo > hi {
                return Ok(());
            }
            for &c in &s.box_constraints[b] {
                cap[c] -= size;
            }
            for count in lo..=hi {
                for &c in &s.box_constraints[b] {
                    need[c] -= count;
                }
                counts[depth] = count as usize;
                let w = weight * s.binomials[depth][count as usize];
                let r = go(
                    s,
                    depth + 1,
                    w,
                    mines + count as usize,
                    need,
                    cap,
                    counts,
                    tally,
                    nodes,
                );
                for &c in &s.box_constraints[b] {
                    need[c] += count;
                }
                r?;
            }
            for &c in &s.box_constraints[b] {
                cap[c] += size;
            }
            Ok(())
        }
        let search = Search {
            comp,
            sizes: &sizes,
            box_constraints,
            binomials: &binomials,
            budget: self.budget,
        };
        go(
            &search,
            0,
            1.0,
            0,
            &mut need,
            &mut cap,
            &mut counts,
            &mut tally,
            nodes,
        )?;
        Ok(tally)
    }
}

impl CellPredictor for ExactSolver {
    fn name(&self) -> &str {
        "exact"
    }

    fn predict(&mut self, view: &View) -> Result<Probabilities, MinesError> {
        self.solve(view)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::{Cell, Dims};
    use crate::minefield::{Config, FirstClick, Minefield, Status};
    use rand::{Rng, SeedableRng};

    /// P(mine) by listing every layout of the remaining mines over the hidden cells.
    fn brute_force(view: &View) -> Option<Vec<f64>> {
        let dims = view.dims();
        let cells = view.cells();
        let hidden = view.hidden();
        let known = cells.iter().filter(|&&s| s == Seen::Mine).count();
        let m = view.mines().checked_sub(known)?;
        let mut count = 0u64;
        let mut per_cell = vec![0u64; cells.len()];
        let h = hidden.len();
        assert!(h <= 26, "too many hidden cells for brute force");
        let mut mine = vec![false; cells.len()];
        for (i, s) in cells.iter().enumerate() {
            mine[i] = *s == Seen::Mine;
        }
        for mask in 0u64..(1 << h) {
            if mask.count_ones() as usize != m {
                continue;
            }
            for (bit, &i) in hidden.iter().enumerate() {
                mine[i] = mask >> bit & 1 == 1;
            }
            let ok = (0..cells.len()).all(|i| match cells[i] {
                Seen::Number(k) => dims.neighbours(i).filter(|&j| mine[j]).count() == k as usize,
                _ => true,
            });
            if ok {
                count += 1;
                for &i in &hidden {
                    if mine[i] {
                        per_cell[i] += 1;
                    }
                }
            }
        }
        if count == 0 {
            return None;
        }
        let mut p: Vec<f64> = per_cell.iter().map(|&c| c as f64 / count as f64).collect();
        for (i, s) in cells.iter().enumerate() {
            if *s == Seen::Mine {
                p[i] = 1.0;
            }
        }
        Some(p)
    }

    #[test]
    fn matches_brute_force_on_random_small_positions() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let solver = ExactSolver::default();
        let mut checked = 0;
        while checked < 400 {
            let (w, h) = (rng.random_range(5..=6), rng.random_range(5..=6));
            let mines = rng.random_range(3..=10);
            let cfg = Config::new(w, h, mines, FirstClick::Safe).unwrap();
            let mut game = Minefield::new(cfg, rng.random());
            let first = Cell::new(rng.random_range(0..h), rng.random_range(0..w));
            game.reveal(first).unwrap();
            // reveal a few more safe cells at random
            let extra = rng.random_range(0..6);
            for _ in 0..extra {
                let v = game.view();
                let safe_hidden: Vec<usize> = v
                    .hidden()
                    .into_iter()
                    .filter(|&i| game.layout().is_some_and(|l| !l[i]))
                    .collect();
                if safe_hidden.is_empty() || game.status() != Status::Playing {
                    break;
                }
                let i = safe_hidden[rng.random_range(0..safe_hidden.len())];
                game.reveal(v.dims().cell(i)).unwrap();
            }
            let v = game.view();
            if v.hidden().len() > 24 {
                continue;
            }
            let want = brute_force(&v).expect("a real game is consistent");
            let got = solver.solve(&v).unwrap();
            assert!(!got.approximate);
            for (i, &want_p) in want.iter().enumerate() {
                if v.cells()[i].is_hidden() {
                    assert!(
                        (want_p - got.p[i]).abs() < 1e-9,
                        "cell {}: brute {} exact {}\n{v}",
                        v.dims().cell(i),
                        want_p,
                        got.p[i]
                    );
                    assert_eq!(got.safe.contains(&i), want_p == 0.0, "{v}");
                    assert_eq!(got.mines.contains(&i), want_p == 1.0, "{v}");
                }
            }
            // the layout count is right too
            checked += 1;
        }
    }

    #[test]
    fn counts_layouts_and_flags_inconsistency() {
        // one 1 over three cells plus one free cell, 1 mine: 3 layouts
        let v = View::parse("3x2 1\n...\n.1.\n").unwrap();
        let got = ExactSolver::default().solve(&v).unwrap();
        // the 1 at (1,1) touches all five hidden cells: 5 layouts
        assert!((got.ln_layouts.unwrap() - 5f64.ln()).abs() < 1e-9);
        assert!(got
            .p
            .iter()
            .enumerate()
            .all(|(i, &p)| i == 4 || (p - 0.2).abs() < 1e-12));
        // two 1s that need a mine on the only hidden cell, but two mines in total
        let bad = View::parse("3x1 2\n1.1\n").unwrap();
        assert_eq!(
            ExactSolver::default().solve(&bad),
            Err(MinesError::Inconsistent)
        );
        // numbers that contradict each other
        let bad = View::parse("3x1 1\n1.0\n").unwrap();
        assert_eq!(
            ExactSolver::default().solve(&bad),
            Err(MinesError::Inconsistent)
        );
        // more mines than the frontier and the rest can hold
        let bad = View::parse("2x2 3\n0.\n..\n").unwrap();
        assert!(ExactSolver::default().solve(&bad).is_err());
    }

    #[test]
    fn big_boards_do_not_overflow() {
        let dims = Dims::new(200, 200);
        let mut cells = vec![Seen::Hidden; dims.cells()];
        cells[0] = Seen::Number(1);
        let v = View::new(dims, 8000, cells);
        let got = ExactSolver::default().solve(&v).unwrap();
        assert!(got
            .p
            .iter()
            .skip(1)
            .all(|p| p.is_finite() && *p > 0.0 && *p < 1.0));
        assert!(got.ln_layouts.unwrap() > 1000.0);
    }

    #[test]
    fn falls_back_when_over_budget() {
        let v = View::parse("6x2 3\n......\n121211\n").unwrap();
        let got = ExactSolver::with_budget(3).solve(&v).unwrap();
        assert!(got.approximate);
        let exact = ExactSolver::default().solve(&v).unwrap();
        assert!(!exact.approximate);
    }
}
