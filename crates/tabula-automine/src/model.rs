//! The learned mine model as a [`CellPredictor`]: any board size, one probability per
//! hidden cell.

use std::path::Path;
use std::sync::Arc;

use tabula_mines::labels::{encode, PLANES};
use tabula_mines::predictor::Probabilities;
use tabula_mines::{CellPredictor, MinesError, Seen, View};
use tabula_nn::{CellNetFile, CellNetwork, CellScratch};

use crate::AutoMineError;

/// The task name in a mine model's weight file.
pub const TASK: &str = "mines";

/// Below this predicted P(mine) a cell is reported safe by default: the agent then
/// reveals it with the others in one turn instead of asking the network again.
pub const SAFE_BELOW: f64 = 1e-3;

/// A mine-probability network ready to play. Each thread needs its own
/// ([`MineNet::for_thread`] shares the weights).
pub struct MineNet {
    net: Arc<CellNetwork>,
    scratch: CellScratch,
    logits: Vec<f32>,
    /// Cells predicted below this P(mine) are listed as safe (0 lists none).
    pub safe_below: f64,
}

impl MineNet {
    /// The model in `file`, checked to be a mine model.
    pub fn from_file(file: &CellNetFile) -> Result<MineNet, AutoMineError> {
        file.check_task(TASK, PLANES)?;
        Ok(MineNet {
            net: Arc::new(CellNetwork::from_file(file)?),
            scratch: CellScratch::default(),
            logits: Vec::new(),
            safe_below: SAFE_BELOW,
        })
    }

    /// Loads a weight file written by `tabula mines train`.
    pub fn load(path: &Path) -> Result<MineNet, AutoMineError> {
        Self::from_file(&CellNetFile::load(path)?)
    }

    /// A copy for another thread: the same weights, its own scratch memory.
    pub fn for_thread(&self) -> MineNet {
        MineNet {
            net: Arc::clone(&self.net),
            scratch: CellScratch::default(),
            logits: Vec::new(),
            safe_below: self.safe_below,
        }
    }

    /// P(mine) for every cell of `view` (0 on revealed numbers, 1 on revealed mines).
    pub fn probabilities(&mut self, view: &View) -> Vec<f64> {
        let dims = view.dims();
        let input = encode(view);
        self.net.forward(
            &input,
            [1, dims.height, dims.width],
            &mut self.scratch,
            &mut self.logits,
        );
        view.cells()
            .iter()
            .zip(&self.logits)
            .map(|(s, &z)| match s {
                Seen::Number(_) => 0.0,
                Seen::Mine => 1.0,
                Seen::Hidden | Seen::Flagged => sigmoid(z),
            })
            .collect()
    }
}

/// The logistic function, in f64 so that tiny probabilities keep their digits.
pub fn sigmoid(z: f32) -> f64 {
    1.0 / (1.0 + (-f64::from(z)).exp())
}

impl CellPredictor for MineNet {
    fn name(&self) -> &str {
        "net"
    }

    fn predict(&mut self, view: &View) -> Result<Probabilities, MinesError> {
        let p = self.probabilities(view);
        let safe = (0..p.len())
            .filter(|&i| view.cells()[i].is_hidden() && p[i] < self.safe_below)
            .collect();
        Ok(Probabilities {
            p,
            safe,
            mines: Vec::new(),
            approximate: true,
            ln_layouts: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tabula_nn::CellArch;

    #[test]
    fn a_probability_for_every_hidden_cell_of_any_board() {
        let arch = CellArch::parse(PLANES, "1x8").unwrap();
        let mut net = MineNet::from_file(&CellNetFile::initial(&arch, TASK, 1)).unwrap();
        for text in ["3x2 1\n01.\n01.\n", "1x1 0\n.\n", "30x16 99\n"] {
            let view = if text.starts_with("30x16") {
                tabula_mines::Minefield::new(
                    tabula_mines::Config::level(
                        tabula_mines::Level::Expert,
                        tabula_mines::FirstClick::Safe,
                    ),
                    3,
                )
                .view()
            } else {
                View::parse(text).unwrap()
            };
            let probs = net.predict(&view).unwrap();
            assert_eq!(probs.p.len(), view.cells().len());
            assert!(probs.approximate);
            for (s, &p) in view.cells().iter().zip(&probs.p) {
                assert!((0.0..=1.0).contains(&p), "{p}");
                if !s.is_hidden() {
                    assert_eq!(p, 0.0);
                }
            }
        }
    }

    #[test]
    fn a_model_for_another_task_or_encoding_is_refused() {
        let arch = CellArch::parse(PLANES, "1x4").unwrap();
        let err = MineNet::from_file(&CellNetFile::initial(&arch, "go", 1))
            .err()
            .unwrap();
        assert!(err.to_string().contains("trained for"), "{err}");
        let arch = CellArch::parse(PLANES - 2, "1x4").unwrap();
        let err = MineNet::from_file(&CellNetFile::initial(&arch, TASK, 1))
            .err()
            .unwrap();
        assert!(err.to_string().contains("planes"), "{err}");
    }
}
