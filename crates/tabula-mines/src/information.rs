//! What revealing a cell can still tell: forced guesses, which no information can
//! avoid, and dead cells, whose reveal tells nothing.
//!
//! Take a revealed number whose uncertain neighbours `W` hold `need` mines, with
//! `0 < need < |W|`. If each cell of `W` touches all the others or none of them, and
//! every other cell that touches some cell of `W` (hidden or revealed, known mines
//! aside) touches all of `W`, then every number that is or ever will be shown counts
//! `W`'s mines as one lump: no play can learn which cells of `W` hold them. Such a guess (the classic 50/50 is `|W| = 2`, `need = 1`) must be made some
//! time to win, its odds never change, and its safe cells show numbers that may help
//! elsewhere — so the best solvers make it at once (JSMinesweeper's "unavoidable
//! 50/50"), instead of first taking other risks that its numbers could have spared.
//!
//! A cell is dead when, if safe, its number is already known: the mines among its
//! uncertain neighbours are a fixed count. Revealing it can only be paid for, never
//! learnt from, and its risk can only shrink while it waits, so a guess should never
//! be a dead cell while a living one is left.

use crate::cell::Dims;
use crate::predictor::Probabilities;
use crate::view::{Seen, View};

/// Whether two distinct cells touch (king-move neighbours).
fn touch(dims: Dims, a: usize, b: usize) -> bool {
    let (ra, ca) = (a / dims.width, a % dims.width);
    let (rb, cb) = (b / dims.width, b % dims.width);
    a != b && ra.abs_diff(rb) <= 1 && ca.abs_diff(cb) <= 1
}

/// The cells of a forced guess in `view` (ascending), the safest such set when there
/// are several; `None` when there is none. `probs` must be exact: a cell is taken as
/// a known mine when `probs` says so.
pub fn forced_guess(view: &View, probs: &Probabilities) -> Option<Vec<usize>> {
    if probs.approximate {
        return None;
    }
    let dims = view.dims();
    let cells = view.cells();
    let mine = |i: usize| cells[i] == Seen::Mine || (cells[i].is_hidden() && probs.p[i] >= 1.0);
    let mut best: Option<(f64, Vec<usize>)> = None;
    let mut set = Vec::with_capacity(8);
    for (x, seen) in cells.iter().enumerate() {
        let Seen::Number(k) = *seen else { continue };
        set.clear();
        let mut need = i32::from(k);
        for j in dims.neighbours(x) {
            if mine(j) {
                need -= 1;
            } else if cells[j].is_hidden() && probs.p[j] > 0.0 {
                set.push(j);
            }
        }
        if need <= 0 || need as usize >= set.len() {
            continue;
        }
        let risk = f64::from(need) / set.len() as f64;
        if best.as_ref().is_some_and(|(r, _)| *r <= risk) {
            continue;
        }
        let sealed = set.iter().all(|&t| {
            let touched = set.iter().filter(|&&o| touch(dims, t, o)).count();
            (touched == 0 || touched == set.len() - 1)
                && dims.neighbours(t).all(|n| {
                    mine(n) || set.contains(&n) || set.iter().all(|&other| touch(dims, n, other))
                })
        });
        if sealed {
            best = Some((risk, set.clone()));
        }
    }
    best.map(|(_, set)| set)
}

/// Whether `cell` (hidden, not a known mine) is dead: its uncertain neighbours are
/// none, or exactly the uncertain neighbours of some revealed number (so their mines
/// are that number's remaining count). A sufficient test, not a complete one: a
/// count fixed by several numbers together is not seen. `probs` must be exact.
pub fn is_dead(view: &View, probs: &Probabilities, cell: usize) -> bool {
    let dims = view.dims();
    let cells = view.cells();
    let uncertain = |i: usize| cells[i].is_hidden() && probs.p[i] > 0.0 && probs.p[i] < 1.0;
    let mut around = [0usize; 8];
    let mut n = 0;
    for j in dims.neighbours(cell) {
        if uncertain(j) {
            around[n] = j;
            n += 1;
        }
    }
    let around = &around[..n];
    let Some(&first) = around.first() else {
        return true;
    };
    // a number whose uncertain neighbours, `cell` aside, are exactly `around`
    // touches `first`
    dims.neighbours(first).any(|x| {
        matches!(cells[x], Seen::Number(_)) && {
            let mut count = 0;
            dims.neighbours(x).all(|j| {
                if j == cell || !uncertain(j) {
                    return true;
                }
                count += 1;
                around.contains(&j)
            }) && count == n
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::ExactSolver;

    fn forced(text: &str) -> Option<Vec<usize>> {
        let view = View::parse(text).unwrap();
        let probs = ExactSolver::default().solve(&view).unwrap();
        forced_guess(&view, &probs)
    }

    #[test]
    fn a_sealed_pair_is_a_forced_50_50() {
        // The 1s share one mine between the two cells of the last column, and every
        // other cell around them is revealed and touches both.
        assert_eq!(forced("3x2 1\n01.\n01.\n"), Some(vec![2, 5]));
        // Hidden cells beyond the pair touch both of them: still forced.
        assert_eq!(forced("4x2 2\n01..\n01..\n"), Some(vec![2, 6]));
        // Two cells that do not touch, either side of a 1 in a row: each sees only
        // the 1, so neither can ever tell anything of the other.
        assert_eq!(forced("3x1 1\n.1.\n"), Some(vec![0, 2]));
    }

    #[test]
    fn a_cell_that_touches_only_one_of_them_breaks_it() {
        // (2,1) is hidden (and safe): it touches (1,2) but not (0,2), so its number
        // will tell them apart.
        assert_eq!(forced("4x3 2\n01..\n01..\n....\n"), None);
    }

    #[test]
    fn known_mines_do_not_break_a_seal() {
        // (2,1) and (2,2) hold mines: revealed ones, or a hidden one the 3 proves.
        assert_eq!(forced("3x3 3\n01.\n13.\n1**\n"), Some(vec![2, 5]));
        assert_eq!(forced("3x3 3\n01.\n13.\n1*.\n"), Some(vec![2, 5]));
    }

    fn dead(text: &str, row: usize, col: usize) -> bool {
        let view = View::parse(text).unwrap();
        let probs = ExactSolver::default().solve(&view).unwrap();
        is_dead(
            &view,
            &probs,
            view.dims().index(crate::cell::Cell::new(row, col)),
        )
    }

    #[test]
    fn a_cell_whose_number_is_known_is_dead() {
        // No uncertain neighbours: it can only show 0.
        assert!(dead("3x1 1\n.1.\n", 0, 0));
        // Either cell of a sealed 50/50: if safe, it shows the 1s' mine and nothing else.
        assert!(dead("3x2 1\n01.\n01.\n", 0, 2));
        // In an open area a cell sees cells no number pins down.
        assert!(!dead("3x3 1\n...\n.1.\n...\n", 0, 0));
        // (1,3) sees the pair and (0,3), which no number sees.
        assert!(!dead("4x2 2\n01..\n01..\n", 1, 3));
    }

    #[test]
    fn cells_that_can_inform_each_other_are_not_forced() {
        // One mine around a 1 in an open area: revealing a corner shows a number
        // that sees only some of the others.
        assert_eq!(forced("3x3 1\n...\n.1.\n...\n"), None);
        // No numbers at all.
        assert_eq!(forced("4x1 1\n....\n"), None);
        // A 1 on the bottom edge with five hidden cells around it: (0,0) would show
        // whether the mine is at (0,1) or (1,0), which it touches, or elsewhere.
        assert_eq!(forced("3x2 1\n...\n.1.\n"), None);
    }
}
