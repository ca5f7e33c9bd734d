//! How good a mine-probability estimate is, against the exact probabilities of held-out
//! positions: cross-entropy and its excess over the exact distribution's own entropy
//! (the KL divergence), Brier score, calibration, and how often the estimate's safest
//! cell is one of the exactly safest.

use serde::Serialize;
use tabula_mines::View;

use crate::dataset::Position;

/// Clamp for logarithms: an estimate of exactly 0 or 1 on a cell that is not certain
/// would be an infinite loss.
const EPS: f64 = 1e-6;

/// Calibration bins (predicted P(mine) in tenths).
pub const BINS: usize = 10;

/// The quality of an estimator on a set of positions. Means are per hidden cell.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Quality {
    /// Positions measured.
    pub positions: usize,
    /// Hidden cells measured.
    pub cells: usize,
    /// Cross-entropy against the exact probabilities (nats per cell).
    pub cross_entropy: f64,
    /// The same minus the exact probabilities' entropy: 0 for a perfect estimate.
    pub kl: f64,
    /// Mean squared error against the exact probabilities.
    pub brier: f64,
    /// Share of positions (with a non-certain hidden cell) where the estimate's safest
    /// cell is an exactly safest one.
    pub safest_agrees: f64,
    /// Per bin of predicted P(mine): cells, mean prediction, mean exact probability.
    pub calibration: Vec<(usize, f64, f64)>,
    /// Cells predicted below [`crate::model::SAFE_BELOW`] (which the agent reveals
    /// without a second look).
    pub claimed_safe: usize,
    /// Of those, cells that may hold a mine (exact P(mine) above 0).
    pub claimed_safe_wrong: usize,
}

/// Measures `estimate` (P(mine) for every cell of a view) on `positions`.
pub fn measure(positions: &[Position], mut estimate: impl FnMut(&View) -> Vec<f64>) -> Quality {
    let mut q = Quality {
        calibration: vec![(0, 0.0, 0.0); BINS],
        ..Quality::default()
    };
    let (mut ce, mut h, mut brier) = (0.0, 0.0, 0.0);
    let mut agree = 0usize;
    let mut counted = 0usize;
    for p in positions {
        let predicted = estimate(&p.view);
        q.positions += 1;
        let mut best: Option<(usize, f64)> = None;
        let mut exact_best = f64::INFINITY;
        for (i, s) in p.view.cells().iter().enumerate() {
            if !s.is_hidden() {
                continue;
            }
            let t = f64::from(p.target[i]);
            let e = predicted[i].clamp(EPS, 1.0 - EPS);
            ce -= t * e.ln() + (1.0 - t) * (1.0 - e).ln();
            let tc = t.clamp(EPS, 1.0 - EPS);
            if t > 0.0 && t < 1.0 {
                h -= t * tc.ln() + (1.0 - t) * (1.0 - tc).ln();
            }
            brier += (predicted[i] - t).powi(2);
            if predicted[i] < crate::model::SAFE_BELOW {
                q.claimed_safe += 1;
                q.claimed_safe_wrong += usize::from(t > 1e-6);
            }
            q.cells += 1;
            let bin = ((predicted[i] * BINS as f64) as usize).min(BINS - 1);
            let c = &mut q.calibration[bin];
            c.0 += 1;
            c.1 += predicted[i];
            c.2 += t;
            if best.is_none_or(|(_, b)| predicted[i] < b) {
                best = Some((i, predicted[i]));
            }
            exact_best = exact_best.min(t);
        }
        if let Some((i, _)) = best {
            // Positions with a certainly safe cell are easy for any estimator that
            // finds one; they count too (a miss there is a needless risk).
            counted += 1;
            agree += usize::from(f64::from(p.target[i]) <= exact_best + 1e-6);
        }
    }
    let cells = q.cells.max(1) as f64;
    q.cross_entropy = ce / cells;
    q.kl = (ce - h) / cells;
    q.brier = brier / cells;
    q.safest_agrees = agree as f64 / counted.max(1) as f64;
    for c in &mut q.calibration {
        if c.0 > 0 {
            c.1 /= c.0 as f64;
            c.2 /= c.0 as f64;
        }
    }
    q
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::{generate, DATA_SEED_BASE};
    use tabula_mines::{Config, FirstClick, Level, Teacher};

    #[test]
    fn the_exact_probabilities_score_perfectly_and_the_teacher_does_not() {
        let config = Config::level(Level::Beginner, FirstClick::Safe);
        let positions = generate(config, DATA_SEED_BASE + 100, 20, 1.0).unwrap();
        let exact = measure(&positions, |v| {
            let p = positions.iter().find(|p| &p.view == v).unwrap();
            p.target.iter().map(|&t| f64::from(t)).collect()
        });
        assert!(exact.kl.abs() < 1e-6, "{exact:?}");
        assert!(exact.brier < 1e-12);
        assert_eq!(exact.claimed_safe_wrong, 0);
        assert!(exact.claimed_safe > 0);
        assert_eq!(exact.safest_agrees, 1.0);
        let teacher = measure(&positions, |v| Teacher.estimate(v).p);
        assert!(teacher.kl > 0.001, "{teacher:?}");
        assert!(teacher.brier > 0.0);
        assert_eq!(teacher.cells, exact.cells);
        let binned: usize = teacher.calibration.iter().map(|c| c.0).sum();
        assert_eq!(binned, teacher.cells);
    }
}
