//! The learned mine model as a [`CellPredictor`]: any board size, one probability per
//! hidden cell.

use std::path::Path;
use std::sync::Arc;

use tabula_mines::labels::{encode, PLANES};
use tabula_mines::predictor::Probabilities;
use tabula_mines::{CellPredictor, MinesError, Seen, View};
use tabula_nn::{CellNetFile, CellNetwork, CellScratch};

use crate::dataset::symmetry_map;
use crate::AutoMineError;

/// The task name in a mine model's weight file.
pub const TASK: &str = "mines";

/// Below this predicted P(mine) a cell is reported safe by default: the agent then
/// reveals it with the others in one turn instead of asking the network again.
pub const SAFE_BELOW: f64 = 1e-3;

/// Rounds of [`fit_numbers`] by default: on expert boards the fit has converged by then
/// (300 rounds played the same games as 100 but ten in 3,000).
pub const FIT_ROUNDS: usize = 100;

/// A mine-probability network ready to play. Each thread needs its own
/// ([`MineNet::for_thread`] shares the weights).
pub struct MineNet {
    net: Arc<CellNetwork>,
    scratch: CellScratch,
    logits: Vec<f32>,
    /// Cells predicted below this P(mine) are listed as safe (0 lists none).
    pub safe_below: f64,
    /// Give the unconstrained cells the probability the mine count implies
    /// ([`count_interior`]) instead of the network's own.
    pub count_interior: bool,
    /// Rounds at most of [`fit_numbers`] (0: none).
    pub fit_rounds: usize,
    /// Mirror images of the board the network reads, its logits averaged (1: the board
    /// as it is, 2: and flipped left to right, 4: and both flipped upside down). The
    /// rules are the same on every mirror image and training drew them at random, so
    /// the average keeps the estimate and lowers the network's own noise, at this many
    /// forward passes.
    pub symmetries: usize,
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
            count_interior: true,
            fit_rounds: FIT_ROUNDS,
            symmetries: 1,
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
            count_interior: self.count_interior,
            fit_rounds: self.fit_rounds,
            symmetries: self.symmetries,
        }
    }

    /// P(mine) for every cell of `view` (0 on revealed numbers, 1 on revealed mines).
    pub fn probabilities(&mut self, view: &View) -> Vec<f64> {
        let dims = view.dims();
        let n = dims.height * dims.width;
        let input = encode(view);
        // Left to right first, then upside down, then both (`symmetry_map`'s bits).
        const MIRRORS: [u8; 4] = [0, 2, 1, 3];
        let images = self.symmetries.clamp(1, MIRRORS.len());
        let mut sum = vec![0.0f32; n];
        let mut mirrored = Vec::new();
        for &sym in &MIRRORS[..images] {
            // Position i of the mirror image shows cell map(i) of the board.
            let map = symmetry_map(dims, sym);
            let x = if sym == 0 {
                &input
            } else {
                mirrored.clear();
                mirrored.extend((0..input.len()).map(|k| input[k / n * n + map(k % n)]));
                &mirrored
            };
            self.net.forward(
                x,
                [1, dims.height, dims.width],
                &mut self.scratch,
                &mut self.logits,
            );
            for (i, &z) in self.logits.iter().enumerate() {
                sum[map(i)] += z;
            }
        }
        let mut p: Vec<f64> = view
            .cells()
            .iter()
            .zip(&sum)
            .map(|(s, &z)| match s {
                Seen::Number(_) => 0.0,
                Seen::Mine => 1.0,
                Seen::Hidden | Seen::Flagged => sigmoid(z / images as f32),
            })
            .collect();
        if self.fit_rounds > 0 {
            fit_numbers(view, &mut p, self.fit_rounds, self.count_interior);
        } else if self.count_interior {
            count_interior(view, &mut p);
        }
        p
    }
}

/// Sets every unconstrained hidden cell (no revealed number beside it) of `view` to the
/// probability the mine count implies: (mines left − the expected mines on the rest of
/// the hidden cells) / unconstrained cells. Exactly, these cells are alike — each holds
/// a mine with the same probability, and all probabilities add up to the mines left —
/// but a convolutional network sees the count only as an average density and can put
/// them anywhere. The result is kept within [`SAFE_BELOW`] of 0 and 1, so that the count
/// alone, from estimates elsewhere that may be off, never calls a cell certain.
pub fn count_interior(view: &View, p: &mut [f64]) {
    Interior::of(view).apply(p);
}

/// What [`count_interior`] needs of a view, found once for the many passes of
/// [`fit_numbers`]: the unconstrained hidden cells, the other hidden cells, and the
/// mines left.
struct Interior {
    cells: Vec<usize>,
    frontier: Vec<usize>,
    left: f64,
}

impl Interior {
    fn of(view: &View) -> Interior {
        let dims = view.dims();
        let cells = view.cells();
        let mut interior = Interior {
            cells: Vec::new(),
            frontier: Vec::new(),
            left: 0.0,
        };
        let mut revealed_mines = 0;
        for (i, s) in cells.iter().enumerate() {
            match s {
                Seen::Mine => revealed_mines += 1,
                Seen::Number(_) => {}
                Seen::Hidden | Seen::Flagged => {
                    if dims
                        .neighbours(i)
                        .any(|j| matches!(cells[j], Seen::Number(_)))
                    {
                        interior.frontier.push(i);
                    } else {
                        interior.cells.push(i);
                    }
                }
            }
        }
        interior.left = view.mines().saturating_sub(revealed_mines) as f64;
        interior
    }

    fn apply(&self, p: &mut [f64]) {
        if self.cells.is_empty() {
            return;
        }
        let elsewhere: f64 = self.frontier.iter().map(|&i| p[i]).sum();
        let q =
            ((self.left - elsewhere) / self.cells.len() as f64).clamp(SAFE_BELOW, 1.0 - SAFE_BELOW);
        for &i in &self.cells {
            p[i] = q;
        }
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

/// Makes the estimates agree with every revealed number: the probabilities of a number's
/// hidden neighbours must add up to the mines it still lacks, as exact probabilities
/// do (a number's count is certain, so its expectation is too). Each of up to `rounds`
/// passes (fewer once every number is met to 10⁻⁴) shifts, number by number, the
/// log-odds of its hidden neighbours by one amount that meets its count (iterative
/// proportional fitting), then, with `interior`, resets the unconstrained cells by the
/// mine count ([`count_interior`]). Certain estimates (0 or 1) stay as they are.
pub fn fit_numbers(view: &View, p: &mut [f64], rounds: usize, interior: bool) {
    let dims = view.dims();
    let cells = view.cells();
    // every number with hidden neighbours: its hidden neighbours and the mines it lacks
    let mut constraints: Vec<(Vec<usize>, f64)> = Vec::new();
    for (i, s) in cells.iter().enumerate() {
        let Seen::Number(k) = *s else { continue };
        let mut hidden = Vec::new();
        let mut known = 0;
        for j in dims.neighbours(i) {
            match cells[j] {
                Seen::Hidden | Seen::Flagged => hidden.push(j),
                Seen::Mine => known += 1,
                Seen::Number(_) => {}
            }
        }
        if !hidden.is_empty() {
            constraints.push((hidden, f64::from(k) - f64::from(known)));
        }
    }
    let count = interior.then(|| Interior::of(view));
    let logit = |q: f64| (q / (1.0 - q)).ln();
    let sig = |z: f64| 1.0 / (1.0 + (-z).exp());
    let mut z = Vec::new();
    for _ in 0..rounds {
        let mut worst = 0f64;
        for (hidden, target) in &constraints {
            let mut want = *target;
            z.clear();
            for &j in hidden {
                if p[j] >= 1.0 {
                    want -= 1.0;
                } else if p[j] > 0.0 {
                    z.push((j, logit(p[j])));
                }
            }
            if z.is_empty() || want <= 0.0 || want >= z.len() as f64 {
                continue;
            }
            // Newton's method on the shift b: sum of sigmoid(z + b) = want (the sum is
            // increasing and convex-concave; steps are capped so that it cannot jump).
            let mut b = 0.0;
            for step in 0..30 {
                let (mut f, mut df) = (-want, 0.0);
                for &(_, zj) in &z {
                    let s = sig(zj + b);
                    f += s;
                    df += s * (1.0 - s);
                }
                if step == 0 {
                    worst = worst.max(f.abs());
                }
                if f.abs() < 1e-9 {
                    break;
                }
                b -= (f / df.max(1e-12)).clamp(-4.0, 4.0);
            }
            for &(j, zj) in &z {
                p[j] = sig(zj + b).clamp(1e-9, 1.0 - 1e-9);
            }
        }
        if let Some(count) = &count {
            count.apply(p);
        }
        if worst < 1e-4 {
            break;
        }
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
    fn averaging_over_mirror_images_gives_mirrored_boards_mirrored_estimates() {
        let arch = CellArch::parse(PLANES, "1x8").unwrap();
        let mut net = MineNet::from_file(&CellNetFile::initial(&arch, TASK, 7)).unwrap();
        net.count_interior = false;
        net.fit_rounds = 0;
        let board = View::parse("4x3 3\n1...\n2...\n..1.\n").unwrap();
        let flipped = View::parse("4x3 3\n...1\n...2\n.1..\n").unwrap();
        let mirror =
            |p: &[f64]| -> Vec<f64> { (0..12).map(|i| p[i / 4 * 4 + 3 - i % 4]).collect() };
        let one = net.probabilities(&board);
        assert!(
            one.iter()
                .zip(mirror(&net.probabilities(&flipped)))
                .any(|(a, b)| (a - b).abs() > 1e-4),
            "an untrained network is not symmetric by itself"
        );
        for images in [2, 4] {
            net.symmetries = images;
            let a = net.probabilities(&board);
            let b = mirror(&net.probabilities(&flipped));
            for (x, y) in a.iter().zip(&b) {
                assert!((x - y).abs() < 1e-5, "{images} images: {a:?} against {b:?}");
            }
            assert_ne!(a, one);
        }
    }

    #[test]
    fn unconstrained_cells_take_the_density_the_count_leaves() {
        // 4x1, 2 mines: a revealed 1 at the left; its neighbour is constrained, the
        // two cells beyond it are not.
        let view = View::parse("4x1 2\n1...\n").unwrap();
        let mut p = vec![0.0, 0.9, 0.1, 0.7];
        count_interior(&view, &mut p);
        assert_eq!(p[..2], [0.0, 0.9]);
        // 2 mines − 0.9 expected on the frontier, over two cells
        assert!(
            (p[2] - 0.55).abs() < 1e-12 && (p[3] - 0.55).abs() < 1e-12,
            "{p:?}"
        );
        // a frontier that claims every mine does not make the rest certainly safe
        let mut p = vec![0.0, 1.0, 0.3, 0.3];
        let view = View::parse("4x1 1\n1...\n").unwrap();
        count_interior(&view, &mut p);
        assert_eq!(p[2], SAFE_BELOW);
        // no unconstrained cell: nothing changes
        let view = View::parse("3x1 1\n.1.\n").unwrap();
        let mut p = vec![0.5, 0.0, 0.5];
        count_interior(&view, &mut p);
        assert_eq!(p, [0.5, 0.0, 0.5]);
    }

    #[test]
    fn fitted_estimates_meet_every_number() {
        // 5x2, 3 mines: a 1 and a 2 on the top row share hidden neighbours.
        //   1 2 . . .
        //   . . . . .
        let view = View::parse("5x2 3\n12...\n.....\n").unwrap();
        let mut p = vec![0.0, 0.0, 0.2, 0.3, 0.4, 0.1, 0.2, 0.3, 0.5, 0.6];
        fit_numbers(&view, &mut p, 500, true);
        let sum = |cells: &[usize]| cells.iter().map(|&i| p[i]).sum::<f64>();
        // the 1 at (0,0) sees (1,0), (1,1); the 2 at (0,1) sees (0,2), (1,0..=2)
        assert!((sum(&[5, 6]) - 1.0).abs() < 1e-4, "{p:?}");
        assert!((sum(&[2, 5, 6, 7]) - 2.0).abs() < 1e-4, "{p:?}");
        // and the mine count holds over the whole board
        assert!((sum(&[2, 3, 4, 5, 6, 7, 8, 9]) - 3.0).abs() < 1e-3, "{p:?}");
        // unconstrained cells are alike
        assert_eq!(p[3], p[4]);
        assert_eq!(p[8], p[9]);
        // a number whose mine is certain leaves its other cells to the estimates (the
        // fit never calls a cell safe by itself)
        let view = View::parse("3x1 1\n.1.\n").unwrap();
        let mut p = vec![1.0, 0.0, 0.4];
        fit_numbers(&view, &mut p, 10, true);
        assert_eq!(p, [1.0, 0.0, 0.4]);
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
