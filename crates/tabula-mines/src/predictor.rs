//! The interface every mine-probability estimator offers: the exact solver, the
//! AutoMine teacher, and the learned model (`tabula_automine::MineNet`).

use crate::error::MinesError;
use crate::view::View;

/// Estimates, for every hidden cell of a position, the probability that it holds a mine.
pub trait CellPredictor {
    /// A short name for reports (`exact`, `teacher`, …).
    fn name(&self) -> &str;

    /// Probabilities for every cell of `view` (revealed cells get 0).
    fn predict(&mut self, view: &View) -> Result<Probabilities, MinesError>;

    /// Cells this predictor would call certainly safe, found without a full
    /// prediction (ascending; possibly only some of them). An agent reveals these
    /// first and predicts only when there are none. The default finds none, so an
    /// estimator is judged by its own predictions alone.
    fn quick_safe(&mut self, _view: &View) -> Vec<usize> {
        Vec::new()
    }
}

/// A boxed predictor is a predictor, so front ends can choose one at run time.
impl<P: CellPredictor + ?Sized> CellPredictor for Box<P> {
    fn name(&self) -> &str {
        self.as_ref().name()
    }

    fn predict(&mut self, view: &View) -> Result<Probabilities, MinesError> {
        self.as_mut().predict(view)
    }

    fn quick_safe(&mut self, view: &View) -> Vec<usize> {
        self.as_mut().quick_safe(view)
    }
}

/// Mine probabilities for a position.
#[derive(Clone, Debug, PartialEq)]
pub struct Probabilities {
    /// P(mine) for every cell, row-major (0 for revealed numbers, 1 for revealed mines).
    pub p: Vec<f64>,
    /// Hidden cells that are certainly safe, ascending.
    pub safe: Vec<usize>,
    /// Hidden cells that certainly hold a mine, ascending.
    pub mines: Vec<usize>,
    /// True when these are estimates, not exact values.
    pub approximate: bool,
    /// Natural logarithm of the number of consistent layouts, when exact.
    pub ln_layouts: Option<f64>,
}
