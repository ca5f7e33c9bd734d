//! Training examples for a learned mine predictor: the network's input planes for a
//! position and the exact probabilities as targets (never the teacher's estimates,
//! which are only a baseline).

use crate::error::MinesError;
use crate::exact::ExactSolver;
use crate::view::{Seen, View};

/// Input planes per cell: hidden, flagged, revealed mine, revealed 0 … 8, then two
/// constant planes: "on the board" (1 everywhere, so that a convolution's zero padding
/// marks the border) and the density of the mines not yet revealed among the unrevealed
/// cells (the one global fact a local network cannot count for itself).
pub const PLANES: usize = 14;

/// One example: input planes `[PLANES, height, width]`, targets and a mask of the cells
/// the loss should count (the hidden ones).
#[derive(Clone, Debug, PartialEq)]
pub struct Example {
    /// Row-major planes.
    pub planes: Vec<f32>,
    /// P(mine) for every cell (0 where revealed).
    pub target: Vec<f32>,
    /// 1 for hidden cells, 0 elsewhere.
    pub mask: Vec<f32>,
    /// `[planes, height, width]`.
    pub shape: [usize; 3],
}

/// The input planes of `view`.
pub fn encode(view: &View) -> Vec<f32> {
    let n = view.cells().len();
    let mut planes = vec![0.0; PLANES * n];
    for (i, s) in view.cells().iter().enumerate() {
        let plane = match s {
            Seen::Hidden => 0,
            Seen::Flagged => 1,
            Seen::Mine => 2,
            Seen::Number(k) => 3 + usize::from(*k),
        };
        planes[plane * n + i] = 1.0;
    }
    let unrevealed = view.cells().iter().filter(|s| s.is_hidden()).count();
    let revealed_mines = view.cells().iter().filter(|s| **s == Seen::Mine).count();
    let density = if unrevealed == 0 {
        0.0
    } else {
        (view.mines().saturating_sub(revealed_mines) as f32 / unrevealed as f32).min(1.0)
    };
    planes[12 * n..13 * n].fill(1.0);
    planes[13 * n..].fill(density);
    planes
}

/// An example whose targets are the exact probabilities. Fails if the position is
/// inconsistent or too large to solve exactly within the solver's budget.
pub fn example(view: &View, solver: &ExactSolver) -> Result<Example, MinesError> {
    let probs = solver.solve(view)?;
    if probs.approximate {
        return Err(MinesError::BadMove(
            "position too large to label exactly".into(),
        ));
    }
    let dims = view.dims();
    Ok(Example {
        planes: encode(view),
        target: probs.p.iter().map(|&p| p as f32).collect(),
        mask: view
            .cells()
            .iter()
            .map(|s| f32::from(s.is_hidden()))
            .collect(),
        shape: [PLANES, dims.height, dims.width],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planes_and_targets() {
        let v = View::parse("3x2 1\n01.\n01.\n").unwrap();
        let e = example(&v, &ExactSolver::default()).unwrap();
        assert_eq!(e.shape, [PLANES, 2, 3]);
        let n = 6;
        // (0,0) is a revealed 0 -> plane 3; (0,1) a 1 -> plane 4; (0,2) hidden -> plane 0
        assert_eq!(e.planes[3 * n], 1.0);
        assert_eq!(e.planes[4 * n + 1], 1.0);
        assert_eq!(e.planes[2], 1.0);
        // one-hot planes, the board plane, and 1 mine among 2 hidden cells
        assert_eq!(e.planes[..12 * n].iter().sum::<f32>(), 6.0);
        assert_eq!(e.planes[12 * n..13 * n], [1.0; 6]);
        assert_eq!(e.planes[13 * n..], [0.5; 6]);
        assert_eq!(e.mask, vec![0.0, 0.0, 1.0, 0.0, 0.0, 1.0]);
        assert_eq!(e.target[2], 0.5);
        assert_eq!(e.target[0], 0.0);
    }
}
