//! AutoMine's "teacher" (seed 003): greedy local propagation of mine probabilities.
//!
//! For each revealed number, the unknown neighbours share its unexplained mines:
//! `P(mine) = (number - certain mines around) / unknown neighbours`. Certainties
//! (0 or 1) overwrite estimates and wake the numbers around the cell, through a queue;
//! between two estimates the more pessimistic (higher P(mine)) is kept. Cells that no
//! number touches get the density of the mines not yet accounted for.
//!
//! Faithful to AutoMine, with its two bugs fixed: cells already certain are never
//! updated again (the two lines whose absence let values leave [0, 1]), and
//! coordinates are one `(row, col)` type. Certainties are only ever derived from a
//! number whose remaining mines equal its unknown neighbours (all mines) or are zero
//! (all safe), which is sound, so every value stays in [0, 1].

use std::collections::VecDeque;

use crate::error::MinesError;
use crate::predictor::CellPredictor;
use crate::predictor::Probabilities;
use crate::view::{Seen, View};

/// The greedy teacher. Stateless; it never fails on a consistent position and never
/// reads more than each number's eight neighbours.
#[derive(Clone, Copy, Debug, Default)]
pub struct Teacher;

impl Teacher {
    /// Probabilities for `view`.
    pub fn estimate(&self, view: &View) -> Probabilities {
        let dims = view.dims();
        let cells = view.cells();
        let n = cells.len();
        let mut p = vec![f64::NAN; n]; // NaN: hidden and untouched
        let mut certain = vec![false; n];
        for i in 0..n {
            match cells[i] {
                Seen::Number(_) => p[i] = 0.0,
                Seen::Mine => {
                    p[i] = 1.0;
                    certain[i] = true;
                }
                _ => {}
            }
        }
        let mut queue: VecDeque<usize> = (0..n)
            .filter(|&i| matches!(cells[i], Seen::Number(_)))
            .collect();
        while let Some(i) = queue.pop_front() {
            let Seen::Number(value) = cells[i] else {
                continue;
            };
            let (mut mines, mut unknown) = (0usize, Vec::with_capacity(8));
            for j in dims.neighbours(i) {
                match cells[j] {
                    Seen::Mine => mines += 1,
                    Seen::Hidden | Seen::Flagged => {
                        if certain[j] {
                            if p[j] == 1.0 {
                                mines += 1;
                            }
                        } else {
                            unknown.push(j);
                        }
                    }
                    Seen::Number(_) => {}
                }
            }
            if unknown.is_empty() {
                continue;
            }
            let left = usize::from(value).saturating_sub(mines).min(unknown.len());
            let becomes_certain = left == 0 || left == unknown.len();
            let estimate = left as f64 / unknown.len() as f64;
            for j in unknown {
                if becomes_certain {
                    p[j] = estimate;
                    certain[j] = true;
                    // wake the numbers around the newly certain cell
                    for k in dims.neighbours(j) {
                        if k != i && matches!(cells[k], Seen::Number(_)) {
                            queue.push_back(k);
                        }
                    }
                } else if p[j].is_nan() || estimate > p[j] {
                    p[j] = estimate;
                }
            }
        }
        // untouched hidden cells: the density of the mines not yet located
        let known_mines = (0..n).filter(|&i| certain[i] && p[i] == 1.0).count();
        let uncertain = (0..n)
            .filter(|&i| cells[i].is_hidden() && !certain[i])
            .count();
        let density = if uncertain == 0 {
            0.0
        } else {
            (view.mines().saturating_sub(known_mines) as f64 / uncertain as f64).clamp(0.0, 1.0)
        };
        for x in p.iter_mut().filter(|x| x.is_nan()) {
            *x = density;
        }
        let safe = (0..n)
            .filter(|&i| cells[i].is_hidden() && certain[i] && p[i] == 0.0)
            .collect();
        let mines = (0..n)
            .filter(|&i| cells[i].is_hidden() && certain[i] && p[i] == 1.0)
            .collect();
        Probabilities {
            p,
            safe,
            mines,
            approximate: true,
            ln_layouts: None,
        }
    }
}

impl CellPredictor for Teacher {
    fn name(&self) -> &str {
        "teacher"
    }

    fn predict(&mut self, view: &View) -> Result<Probabilities, MinesError> {
        Ok(self.estimate(view))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::Cell;
    use crate::exact::ExactSolver;
    use crate::minefield::{Config, FirstClick, Minefield, Status};
    use rand::{Rng, SeedableRng};

    #[test]
    fn simple_certainties_and_estimates() {
        // a 1 with a single hidden neighbour: a certain mine
        let t = Teacher.estimate(&View::parse("2x1 1\n1.\n").unwrap());
        assert_eq!(t.p[1], 1.0);
        assert_eq!(t.mines, vec![1]);
        // two 1s sharing two hidden cells: one half each
        let t = Teacher.estimate(&View::parse("3x2 1\n01.\n01.\n").unwrap());
        assert_eq!((t.p[2], t.p[5]), (0.5, 0.5));
        assert!(t.safe.is_empty() && t.mines.is_empty());
        // propagation: the corner 1 pins (0,1) as the mine, which satisfies the 1 at
        // (1,1), so (1,2) and (0,2) become certainly safe
        let v = View::parse("3x2 1\n1..\n11.\n").unwrap();
        let t = Teacher.estimate(&v);
        assert_eq!(t.mines, vec![1]);
        assert_eq!(t.safe, vec![2, 5]);
        // the more pessimistic estimate wins: (0,2) is one of five cells around the 1
        // (1/5) and one of five around the 2 (2/5)
        let v = View::parse("5x2 2\n.....\n.1.2.\n").unwrap();
        let t = Teacher.estimate(&v);
        assert!((t.p[2] - 0.4).abs() < 1e-12, "{:?}", t.p);
        assert!((t.p[0] - 0.2).abs() < 1e-12, "{:?}", t.p);
    }

    /// Plays random safe clicks and checks the teacher on every position reached.
    #[test]
    fn values_in_range_and_local_certainties_found() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let exact = ExactSolver::default();
        for seed in 0..60u64 {
            let cfg = Config::new(8, 7, 9 + (seed % 6) as usize, FirstClick::Opening).unwrap();
            let mut m = Minefield::new(cfg, seed);
            m.reveal(Cell::new(3, 3)).unwrap();
            for _ in 0..12 {
                if m.status() != Status::Playing {
                    break;
                }
                let v = m.view();
                let t = Teacher.estimate(&v);
                assert!(t.p.iter().all(|x| (0.0..=1.0).contains(x)), "{v}");
                let d = v.dims();
                // every cell the teacher calls certain is certain
                let e = exact.solve(&v).unwrap();
                for &i in &t.safe {
                    assert!(
                        e.safe.contains(&i),
                        "teacher safe {} not certain:\n{v}",
                        d.cell(i)
                    );
                }
                for &i in &t.mines {
                    assert!(
                        e.mines.contains(&i),
                        "teacher mine {} not certain:\n{v}",
                        d.cell(i)
                    );
                }
                // no number is left whose unknowns are all mines or all safe
                for i in 0..d.cells() {
                    if let Seen::Number(k) = v.cells()[i] {
                        let nb: Vec<usize> = d
                            .neighbours(i)
                            .filter(|&j| v.cells()[j].is_hidden())
                            .collect();
                        let mines = nb.iter().filter(|j| t.mines.contains(j)).count();
                        let open: Vec<&usize> = nb
                            .iter()
                            .filter(|j| !t.mines.contains(j) && !t.safe.contains(j))
                            .collect();
                        if !open.is_empty() {
                            let left = k as usize - mines;
                            assert!(
                                left > 0 && left < open.len(),
                                "number at {} left unresolved:\n{v}",
                                d.cell(i)
                            );
                        }
                    }
                }
                // click a random safe hidden cell
                let hidden: Vec<usize> = v
                    .hidden()
                    .into_iter()
                    .filter(|&i| m.layout().is_some_and(|l| !l[i]))
                    .collect();
                if hidden.is_empty() {
                    break;
                }
                let pick = hidden[rng.random_range(0..hidden.len())];
                m.reveal(d.cell(pick)).unwrap();
            }
        }
    }
}
