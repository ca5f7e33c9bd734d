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
//!
//! An agent asks for thousands of solves a second, so a solve works in flat buffers
//! kept per thread and allocates only its answer. [`trivially_safe`] finds the cells
//! single numbers prove safe, for the turns that need no full solve.

use std::cell::RefCell;

use crate::cell::Dims;
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

/// No box, no constraint.
const NONE: u32 = u32::MAX;

/// Binomial coefficients C(n, k) for n, k ≤ 8: a box's cells all surround one number,
/// so no box holds more than 8.
const BINOMIAL: [[f64; 9]; 9] = {
    let mut t = [[0.0; 9]; 9];
    let mut n = 0;
    while n < 9 {
        t[n][0] = 1.0;
        let mut k = 1;
        while k <= n {
            t[n][k] = t[n - 1][k - 1] + if k < n { t[n - 1][k] } else { 0.0 };
            k += 1;
        }
        n += 1;
    }
    t
};

/// The working memory of one solve, reused by the next one on the same thread.
#[derive(Default)]
struct Scratch {
    /// Per constraint: mines still needed, and unassigned cells left (during search).
    need: Vec<i64>,
    cap: Vec<i64>,
    /// Per cell: the constraints it touches (ascending), and how many.
    cell_cons: Vec<[u32; 8]>,
    cell_ncons: Vec<u8>,
    /// Per cell: its box, or `NONE`.
    box_of: Vec<u32>,
    /// Per box: the first cell (whose constraints are the box's), its cells (CSR).
    box_first: Vec<u32>,
    box_start: Vec<u32>,
    box_cells: Vec<u32>,
    /// Per constraint: its boxes, ascending (CSR).
    con_start: Vec<u32>,
    con_boxes: Vec<u32>,
    /// Hidden cells no number touches.
    unconstrained: Vec<u32>,
    /// Components: boxes in search order (CSR).
    comp_start: Vec<u32>,
    comp_boxes: Vec<u32>,
    seen_box: Vec<bool>,
    seen_con: Vec<bool>,
    /// Per component: where its tally starts in `weight` (length max mines + 1), and in
    /// the per-box arrays (boxes × (max mines + 1)).
    tally_start: Vec<u32>,
    tally_box_start: Vec<usize>,
    /// Total weight of the solutions with `m` mines.
    weight: Vec<f64>,
    /// Per box and `m`: weighted sum of the box's mine counts; whether some solution
    /// puts a mine in the box; whether some solution leaves one of its cells empty.
    mine_sum: Vec<f64>,
    can_mine: Vec<bool>,
    can_safe: Vec<bool>,
    counts: Vec<usize>,
    /// Combination: each component's weights scaled to a largest of 1 (flat, as `weight`).
    scaled: Vec<f64>,
    ln_c: Vec<f64>,
    outside: Vec<f64>,
    full: Vec<f64>,
    rest: Vec<f64>,
    tmp: Vec<f64>,
    r: Vec<f64>,
    /// Per box: cells counted so far; write positions while filling CSR arrays; the
    /// box sizes of the component being searched.
    box_len: Vec<u32>,
    fill: Vec<u32>,
    sizes: Vec<usize>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

struct BudgetExceeded;

/// `out = a * b` (polynomial product), skipping zero terms of `a`.
fn convolve_into(a: &[f64], b: &[f64], out: &mut Vec<f64>) {
    out.clear();
    out.resize(a.len() + b.len() - 1, 0.0);
    for (i, &x) in a.iter().enumerate() {
        if x == 0.0 {
            continue;
        }
        for (j, &y) in b.iter().enumerate() {
            out[i + j] += x * y;
        }
    }
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

/// The constraints cell `i` touches, ascending.
fn touched<'a>(cell_cons: &'a [[u32; 8]], cell_ncons: &[u8], i: usize) -> &'a [u32] {
    &cell_cons[i][..usize::from(cell_ncons[i])]
}

/// Entry `i` of a compressed array whose entries start at `start[i]`.
fn span(start: &[u32], i: usize) -> std::ops::Range<usize> {
    start[i] as usize..start[i + 1] as usize
}

/// Resets `v` to `len` copies of `x`, keeping its memory.
fn reset<T: Clone>(v: &mut Vec<T>, len: usize, x: T) {
    v.clear();
    v.resize(len, x);
}

/// The backtracking search over one component's boxes.
struct Search<'a> {
    boxes: &'a [u32],
    sizes: &'a [usize],
    cell_cons: &'a [[u32; 8]],
    cell_ncons: &'a [u8],
    box_first: &'a [u32],
    budget: u64,
    /// Entries per mine count in this component's tally.
    width: usize,
}

/// This component's tally, and the search state.
struct SearchState<'a> {
    need: &'a mut [i64],
    cap: &'a mut [i64],
    counts: &'a mut [usize],
    weight: &'a mut [f64],
    mine_sum: &'a mut [f64],
    can_mine: &'a mut [bool],
    can_safe: &'a mut [bool],
    nodes: &'a mut u64,
}

impl Search<'_> {
    fn constraints(&self, depth: usize) -> &[u32] {
        let first = self.box_first[self.boxes[depth] as usize] as usize;
        touched(self.cell_cons, self.cell_ncons, first)
    }

    fn go(
        &self,
        st: &mut SearchState<'_>,
        depth: usize,
        weight: f64,
        mines: usize,
    ) -> Result<(), BudgetExceeded> {
        *st.nodes += 1;
        if *st.nodes > self.budget {
            return Err(BudgetExceeded);
        }
        if depth == self.boxes.len() {
            st.weight[mines] += weight;
            for (bi, &c) in st.counts.iter().enumerate() {
                let at = bi * self.width + mines;
                st.mine_sum[at] += weight * c as f64;
                st.can_mine[at] |= c > 0;
                st.can_safe[at] |= c < self.sizes[bi];
            }
            return Ok(());
        }
        let size = self.sizes[depth] as i64;
        let cons = self.constraints(depth);
        let (mut lo, mut hi) = (0i64, size);
        for &c in cons {
            let c = c as usize;
            lo = lo.max(st.need[c] - (st.cap[c] - size));
            hi = hi.min(st.need[c]);
        }
        if lo > hi {
            return Ok(());
        }
        for &c in cons {
            st.cap[c as usize] -= size;
        }
        let mut result = Ok(());
        for count in lo..=hi {
            for &c in cons {
                st.need[c as usize] -= count;
            }
            st.counts[depth] = count as usize;
            let w = weight * BINOMIAL[size as usize][count as usize];
            result = self.go(st, depth + 1, w, mines + count as usize);
            for &c in cons {
                st.need[c as usize] += count;
            }
            if result.is_err() {
                break;
            }
        }
        for &c in cons {
            st.cap[c as usize] += size;
        }
        result
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
        SCRATCH.with(|s| match s.try_borrow_mut() {
            Ok(mut s) => self.solve_in(view, &mut s),
            // only if a solve ever ran inside another on this thread
            Err(_) => self.solve_in(view, &mut Scratch::default()),
        })
    }

    fn solve_in(&self, view: &View, s: &mut Scratch) -> Result<Probabilities, MinesError> {
        let dims = view.dims();
        let cells = view.cells();
        let n = cells.len();

        // Constraints from numbers; known (revealed) mines are subtracted.
        s.need.clear();
        s.cap.clear();
        reset(&mut s.cell_ncons, n, 0);
        s.cell_cons.resize(n, [NONE; 8]);
        for i in 0..n {
            let Seen::Number(k) = cells[i] else { continue };
            let (mut known, mut hidden) = (0i64, 0i64);
            for j in dims.neighbours(i) {
                match cells[j] {
                    Seen::Mine => known += 1,
                    Seen::Hidden | Seen::Flagged => hidden += 1,
                    Seen::Number(_) => {}
                }
            }
            let need = i64::from(k) - known;
            if need < 0 || need > hidden {
                return Err(MinesError::Inconsistent);
            }
            if hidden == 0 {
                continue;
            }
            let id = s.need.len() as u32;
            s.need.push(need);
            s.cap.push(hidden);
            for j in dims.neighbours(i) {
                if cells[j].is_hidden() {
                    let k = usize::from(s.cell_ncons[j]);
                    s.cell_cons[j][k] = id;
                    s.cell_ncons[j] += 1;
                }
            }
        }
        let revealed_mines = cells.iter().filter(|&&c| c == Seen::Mine).count();
        let remaining = view.mines() as i64 - revealed_mines as i64;
        if remaining < 0 {
            return Err(MinesError::Inconsistent);
        }
        let remaining = remaining as usize;
        let ncons = s.need.len();

        // Boxes: frontier cells grouped by the exact set of constraints they touch, in
        // order of their first cell. Cells of one box surround a common number, so the
        // earlier cells of a box lie in the 5x5 window before a cell.
        reset(&mut s.box_of, n, NONE);
        s.box_first.clear();
        s.unconstrained.clear();
        s.box_len.clear();
        for (i, cell) in cells.iter().enumerate() {
            if !cell.is_hidden() {
                continue;
            }
            let nc = s.cell_ncons[i];
            if nc == 0 {
                s.unconstrained.push(i as u32);
                continue;
            }
            let sig = touched(&s.cell_cons, &s.cell_ncons, i);
            let b = earlier_in_window(dims, i)
                .find(|&j| s.box_of[j] != NONE && touched(&s.cell_cons, &s.cell_ncons, j) == sig)
                .map(|j| s.box_of[j]);
            let b = b.unwrap_or_else(|| {
                s.box_first.push(i as u32);
                s.box_len.push(0);
                (s.box_first.len() - 1) as u32
            });
            s.box_of[i] = b;
            s.box_len[b as usize] += 1;
        }
        let nboxes = s.box_first.len();
        s.box_start.clear();
        let mut at = 0;
        for &l in &s.box_len {
            s.box_start.push(at);
            at += l;
        }
        s.box_start.push(at);
        reset(&mut s.box_cells, at as usize, 0);
        s.fill.clear();
        s.fill.extend_from_slice(&s.box_start[..nboxes]);
        for i in 0..n {
            let b = s.box_of[i];
            if b != NONE {
                s.box_cells[s.fill[b as usize] as usize] = i as u32;
                s.fill[b as usize] += 1;
            }
        }
        // Each constraint's boxes, ascending.
        reset(&mut s.con_start, ncons + 1, 0);
        for &first in &s.box_first {
            for &c in touched(&s.cell_cons, &s.cell_ncons, first as usize) {
                s.con_start[c as usize + 1] += 1;
            }
        }
        for c in 0..ncons {
            s.con_start[c + 1] += s.con_start[c];
        }
        reset(&mut s.con_boxes, s.con_start[ncons] as usize, 0);
        s.fill.clear();
        s.fill.extend_from_slice(&s.con_start[..ncons]);
        for (b, &first) in s.box_first.iter().enumerate() {
            for &c in touched(&s.cell_cons, &s.cell_ncons, first as usize) {
                s.con_boxes[s.fill[c as usize] as usize] = b as u32;
                s.fill[c as usize] += 1;
            }
        }

        // Components, in an order where each box shares constraints with earlier ones,
        // so that constraints close (and prune) early.
        reset(&mut s.seen_box, nboxes, false);
        reset(&mut s.seen_con, ncons, false);
        s.comp_start.clear();
        s.comp_boxes.clear();
        for start in 0..nboxes {
            if s.seen_box[start] {
                continue;
            }
            let head0 = s.comp_boxes.len();
            s.comp_start.push(head0 as u32);
            s.seen_box[start] = true;
            s.comp_boxes.push(start as u32);
            let mut head = head0;
            while head < s.comp_boxes.len() {
                let b = s.comp_boxes[head] as usize;
                head += 1;
                for &c in touched(&s.cell_cons, &s.cell_ncons, s.box_first[b] as usize) {
                    let c = c as usize;
                    if s.seen_con[c] {
                        continue;
                    }
                    s.seen_con[c] = true;
                    for e in span(&s.con_start, c) {
                        let b2 = s.con_boxes[e] as usize;
                        if !s.seen_box[b2] {
                            s.seen_box[b2] = true;
                            s.comp_boxes.push(b2 as u32);
                        }
                    }
                }
            }
        }
        let ncomps = s.comp_start.len();
        s.comp_start.push(s.comp_boxes.len() as u32);

        // Enumerate each component into its tally.
        let mut nodes = 0u64;
        s.tally_start.clear();
        s.tally_box_start.clear();
        s.weight.clear();
        s.mine_sum.clear();
        s.can_mine.clear();
        s.can_safe.clear();
        for ci in 0..ncomps {
            let boxes = &s.comp_boxes[span(&s.comp_start, ci)];
            s.sizes.clear();
            s.sizes
                .extend(boxes.iter().map(|&b| span(&s.box_start, b as usize).len()));
            let width = s.sizes.iter().sum::<usize>() + 1;
            let (t0, tb0) = (s.weight.len(), s.mine_sum.len());
            s.tally_start.push(t0 as u32);
            s.tally_box_start.push(tb0);
            s.weight.resize(t0 + width, 0.0);
            let per_box = boxes.len() * width;
            s.mine_sum.resize(tb0 + per_box, 0.0);
            s.can_mine.resize(tb0 + per_box, false);
            s.can_safe.resize(tb0 + per_box, false);
            reset(&mut s.counts, boxes.len(), 0);
            let search = Search {
                boxes,
                sizes: &s.sizes,
                cell_cons: &s.cell_cons,
                cell_ncons: &s.cell_ncons,
                box_first: &s.box_first,
                budget: self.budget,
                width,
            };
            let mut state = SearchState {
                need: &mut s.need,
                cap: &mut s.cap,
                counts: &mut s.counts,
                weight: &mut s.weight[t0..],
                mine_sum: &mut s.mine_sum[tb0..],
                can_mine: &mut s.can_mine[tb0..],
                can_safe: &mut s.can_safe[tb0..],
                nodes: &mut nodes,
            };
            if search.go(&mut state, 0, 1.0, 0).is_err() {
                let mut est = Teacher.estimate(view);
                est.approximate = true;
                return Ok(est);
            }
        }
        s.tally_start.push(s.weight.len() as u32);

        // Combine the components with the untouched cells.
        let u = s.unconstrained.len();
        let mut ln_scale = 0.0;
        s.scaled.clone_from(&s.weight);
        for ci in 0..ncomps {
            ln_scale += normalise(&mut s.scaled[span(&s.tally_start, ci)]);
        }
        // ln C(u, k) for k = 0..=u, then scaled binomials over the frontier count m
        reset(&mut s.ln_c, u + 1, 0.0);
        for k in 1..=u {
            s.ln_c[k] = s.ln_c[k - 1] + ((u - k + 1) as f64).ln() - (k as f64).ln();
        }
        let frontier_max: usize = s.weight.len() - ncomps;
        let ln_c = &s.ln_c;
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
        s.outside.clear();
        s.outside
            .extend((0..=frontier_max).map(|m| ln_c_at(m).map_or(0.0, |l| (l - ln_c_max).exp())));
        reset(&mut s.full, 1, 1.0);
        for ci in 0..ncomps {
            let w = &s.scaled[span(&s.tally_start, ci)];
            convolve_into(&s.full, w, &mut s.tmp);
            std::mem::swap(&mut s.full, &mut s.tmp);
        }
        let z: f64 = s.full.iter().zip(&s.outside).map(|(f, o)| f * o).sum();
        if z <= 0.0 {
            return Err(MinesError::Inconsistent);
        }
        let ln_layouts = z.ln() + ln_scale + ln_c_max;

        let mut p = vec![0.0; n];
        let mut safe = Vec::new();
        let mut mines = Vec::new();
        for (i, c) in cells.iter().enumerate() {
            if *c == Seen::Mine {
                p[i] = 1.0;
            }
        }
        for ci in 0..ncomps {
            // the other components together, by their mine count
            reset(&mut s.rest, 1, 1.0);
            for cj in 0..ncomps {
                if cj != ci {
                    let w = &s.scaled[span(&s.tally_start, cj)];
                    convolve_into(&s.rest, w, &mut s.tmp);
                    std::mem::swap(&mut s.rest, &mut s.tmp);
                }
            }
            // r[m]: weight of everything outside this component given it holds m mines
            let tally = span(&s.tally_start, ci);
            let width = tally.len();
            let w = &s.scaled[tally.clone()];
            s.r.clear();
            s.r.extend((0..width).map(|m| {
                s.rest
                    .iter()
                    .enumerate()
                    .map(|(j, x)| x * s.outside.get(m + j).copied().unwrap_or(0.0))
                    .sum::<f64>()
            }));
            let scale = s.weight[tally].iter().cloned().fold(0.0, f64::max);
            let boxes = &s.comp_boxes[span(&s.comp_start, ci)];
            for (bi, &b) in boxes.iter().enumerate() {
                let b = b as usize;
                let members = &s.box_cells[span(&s.box_start, b)];
                let size = members.len() as f64;
                let base = s.tally_box_start[ci] + bi * width;
                let mut num = 0.0;
                let (mut any_mine, mut any_safe) = (false, false);
                for (m, &wm) in w.iter().enumerate() {
                    if wm > 0.0 && s.r[m] > 0.0 {
                        num += s.mine_sum[base + m] / scale * s.r[m];
                        any_mine |= s.can_mine[base + m];
                        any_safe |= s.can_safe[base + m];
                    }
                }
                let prob = if !any_mine {
                    0.0
                } else if !any_safe {
                    1.0
                } else {
                    (num / (size * z)).clamp(0.0, 1.0)
                };
                for &cell in members {
                    let cell = cell as usize;
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
            for m in 0..s.full.len() {
                let x = s.full[m] * s.outside[m];
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
            for &cell in &s.unconstrained {
                let cell = cell as usize;
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
}

/// The cells before `i` (row-major) within two rows and columns of it.
fn earlier_in_window(dims: Dims, i: usize) -> impl Iterator<Item = usize> {
    let (r, c) = (i / dims.width, i % dims.width);
    let (w, h) = (dims.width, dims.height);
    (r.saturating_sub(2)..=r.min(h - 1))
        .flat_map(move |rr| (c.saturating_sub(2)..=(c + 2).min(w - 1)).map(move |cc| rr * w + cc))
        .take_while(move |&j| j < i)
}

impl CellPredictor for ExactSolver {
    fn name(&self) -> &str {
        "exact"
    }

    fn predict(&mut self, view: &View) -> Result<Probabilities, MinesError> {
        self.solve(view)
    }

    fn quick_safe(&mut self, view: &View) -> Vec<usize> {
        trivially_safe(view)
    }
}

/// Hidden cells proved safe by single numbers alone, ascending: a number whose mines
/// are all found clears its other hidden neighbours, and a number with exactly as many
/// hidden neighbours as missing mines marks them all as mines; repeated until nothing
/// changes. Every cell found is one the exact solver calls safe, at a small fraction of
/// its cost (the agent's turns are mostly such cells). On an inconsistent view the
/// answer means nothing (the solver would refuse the view).
pub fn trivially_safe(view: &View) -> Vec<usize> {
    const UNKNOWN: u8 = 0;
    const MINE: u8 = 1;
    const SAFE: u8 = 2;
    const OPEN: u8 = 3;
    thread_local! {
        static BUFFERS: RefCell<(Vec<u8>, Vec<bool>, Vec<u32>)> = RefCell::default();
    }
    BUFFERS.with(|b| {
        let mut b = b.borrow_mut();
        let (known, queued, queue) = &mut *b;
        let dims = view.dims();
        let cells = view.cells();
        known.clear();
        known.extend(cells.iter().map(|&c| match c {
            Seen::Mine => MINE,
            Seen::Hidden | Seen::Flagged => UNKNOWN,
            Seen::Number(_) => OPEN,
        }));
        queued.clear();
        queued.extend(cells.iter().map(|c| matches!(c, Seen::Number(_))));
        queue.clear();
        queue.extend((0..cells.len() as u32).filter(|&i| queued[i as usize]));
        let mut safe = Vec::new();
        while let Some(i) = queue.pop() {
            let i = i as usize;
            queued[i] = false;
            let Seen::Number(k) = cells[i] else { continue };
            let (mut mines, mut open) = (0usize, [0usize; 8]);
            let mut n_open = 0;
            for j in dims.neighbours(i) {
                match known[j] {
                    MINE => mines += 1,
                    UNKNOWN => {
                        open[n_open] = j;
                        n_open += 1;
                    }
                    _ => {}
                }
            }
            let k = usize::from(k);
            // (a number with too many or too few mines around it decides nothing)
            let mark = if n_open == 0 {
                continue;
            } else if mines == k {
                SAFE
            } else if mines + n_open == k {
                MINE
            } else {
                continue;
            };
            for &j in &open[..n_open] {
                known[j] = mark;
                if mark == SAFE {
                    safe.push(j);
                }
                // the numbers around a newly known cell may now decide more
                for n in dims.neighbours(j) {
                    if known[n] == OPEN && !queued[n] {
                        queued[n] = true;
                        queue.push(n as u32);
                    }
                }
            }
        }
        safe.sort_unstable();
        safe
    })
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
    fn trivial_deductions_are_a_subset_of_the_exact_safe_cells() {
        // a lone 1 in a corner decides nothing
        let v = View::parse("3x3 1\n1..\n...\n...\n").unwrap();
        assert!(trivially_safe(&v).is_empty());
        // the 1 at (0,2) sees only (0,1): a mine, which satisfies the 1 at (1,0), so
        // (0,0) is safe
        let v = View::parse("4x2 1\n..10\n1110\n").unwrap();
        assert_eq!(trivially_safe(&v), vec![0]);
        // and on positions from real games, every cell found is exactly safe
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let mut found = 0;
        for _ in 0..300 {
            let cfg = Config::new(16, 16, 40, FirstClick::Safe).unwrap();
            let mut game = Minefield::new(cfg, rng.random());
            game.reveal(Cell::new(rng.random_range(0..16), rng.random_range(0..16)))
                .unwrap();
            for _ in 0..rng.random_range(0..20) {
                let v = game.view();
                let safe = trivially_safe(&v);
                let exact = ExactSolver::default().solve(&v).unwrap();
                for i in &safe {
                    assert!(exact.safe.contains(i), "{i} is not exactly safe\n{v}");
                }
                found += safe.len();
                let Some(&i) = safe.first().or(exact.safe.first()) else {
                    break;
                };
                game.reveal(v.dims().cell(i)).unwrap();
                if game.status() != Status::Playing {
                    break;
                }
            }
        }
        assert!(found > 1000, "only {found} cells found");
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
