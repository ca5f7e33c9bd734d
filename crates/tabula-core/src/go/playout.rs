//! The heavy playout policy: playouts that answer the last move the way Go players
//! do, so that their results say something about the position.
//!
//! Each move, in order, each step taken with its probability and skipped when it finds
//! nothing:
//! 1. **Atari fights** around the last move: capture its chain if it is in atari;
//!    save an own chain it put in atari, by capturing a neighbour in atari or by
//!    extending when that gives two liberties or more (with two, only when the ladder
//!    that follows does not catch it: see `ladder.rs`). (Off by default.) **Two
//!    liberties**: an own chain the last move left with two liberties captures a
//!    neighbour in atari or extends to three. Then the search's **last
//!    good reply** to the last move, when it gives one (see
//!    `tabula_search::last_good_reply`), if it is playable and no self-atari of a group.
//! 2. **Nakade**: an eye space of three to five points next to the last move, enclosed
//!    by one colour, gets its vital point (the point with the most neighbours inside).
//! 3. **Atari** on the last move's chain when it has two liberties and the atari is
//!    not itself a self-atari.
//! 4. **3x3 patterns** of the empty points around the last move, drawn in proportion
//!    to their learned weights (`PatternWeights`), against a weight for "elsewhere".
//! 5. (Off by default.) A **global capture**: the liberty of any opponent chain in
//!    atari on the board.
//! 6. A **random** move that neither fills an own eye nor (with some probability)
//!    puts two or more own stones in atari (nor, off by default, a lone stone).
//!
//! Ko is played under the simple-ko rule (superko is not checked in playouts).

use std::sync::Arc;

use super::patterns::PatternWeights;
use super::{Go, BLACK, BORDER, EMPTY, WHITE};
use crate::{Game, GameError};

/// The farthest common-fate-graph distance [`MoveFeatures::cfg_distance`] tells apart.
pub const CFG_MAX: u8 = 3;

/// Probabilities and weights of the heavy playout policy.
#[derive(Clone, Debug)]
pub struct HeavyPolicy {
    /// Chance of looking for atari fights around the last move.
    pub capture: f64,
    /// Chance of looking for a nakade vital point.
    pub nakade: f64,
    /// Chance of giving atari to a two-liberty chain just played.
    pub atari: f64,
    /// Chance of looking at the 3x3 patterns around the last move.
    pub pattern: f64,
    /// The weight of "no local pattern move" against the patterns' gammas.
    pub elsewhere: f32,
    /// Chance of rejecting a random move that puts two or more own stones in atari.
    pub self_atari: f64,
    /// Chance of capturing an opponent chain in atari anywhere on the board, when
    /// nothing around the last move was played (Fuego's and Pachi's global capture).
    pub global_capture: f64,
    /// Chance of defending an own chain next to the last move that it left with two
    /// liberties: by capturing a neighbour in atari, or by extending to three or more.
    pub two_liberty: f64,
    /// Chance of rejecting a pattern or random move that puts a lone stone in atari
    /// (the group rule, `self_atari`, covers two stones or more).
    pub lone_self_atari: f64,
    /// Whether an escape from atari is read out as a ladder first (and not played
    /// when the ladder catches it).
    pub ladders: bool,
    /// The 3x3 pattern weights (by default the shipped ones).
    pub weights: Arc<PatternWeights>,
}

impl Default for HeavyPolicy {
    fn default() -> Self {
        HeavyPolicy {
            capture: 0.9,
            nakade: 0.9,
            atari: 0.2,
            pattern: 0.9,
            elsewhere: 2.0,
            self_atari: 0.95,
            global_capture: 0.0,
            two_liberty: 0.0,
            lone_self_atari: 0.0,
            ladders: true,
            weights: PatternWeights::shipped(),
        }
    }
}

impl HeavyPolicy {
    /// Sets probabilities and weights from `spec`, comma-separated `name=value` pairs:
    /// `capture`, `nakade`, `atari`, `pattern`, `self-atari`, `global-capture`,
    /// `two-liberty`, `lone-self-atari` (chances, 0 to 1) and
    /// `elsewhere` (a weight, 0 to 1000), e.g. `atari=0.5,elsewhere=4`. On an error
    /// nothing is changed.
    ///
    /// ```
    /// use tabula_core::go::playout::HeavyPolicy;
    /// let mut p = HeavyPolicy::default();
    /// p.set_options("atari=0.5,elsewhere=4").unwrap();
    /// assert_eq!((p.atari, p.elsewhere), (0.5, 4.0));
    /// assert!(p.set_options("atari=2").is_err());
    /// ```
    pub fn set_options(&mut self, spec: &str) -> Result<(), GameError> {
        let mut next = self.clone();
        for part in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let bad = |why: &str| GameError::BadSpec(format!("playout option {part:?}: {why}"));
            let (name, value) = part
                .split_once('=')
                .ok_or_else(|| bad("expected name=value"))?;
            let value: f64 = value
                .trim()
                .parse()
                .map_err(|_| bad("the value is not a number"))?;
            let chance = |v: f64| {
                (0.0..=1.0)
                    .contains(&v)
                    .then_some(v)
                    .ok_or_else(|| bad("a chance must lie in 0..=1"))
            };
            match name.trim() {
                "capture" => next.capture = chance(value)?,
                "nakade" => next.nakade = chance(value)?,
                "atari" => next.atari = chance(value)?,
                "pattern" => next.pattern = chance(value)?,
                "self-atari" => next.self_atari = chance(value)?,
                "global-capture" => next.global_capture = chance(value)?,
                "two-liberty" => next.two_liberty = chance(value)?,
                "lone-self-atari" => next.lone_self_atari = chance(value)?,
                "elsewhere" if (0.0..=1000.0).contains(&value) => next.elsewhere = value as f32,
                "elsewhere" => return Err(bad("the weight must lie in 0..=1000")),
                _ => {
                    return Err(bad(
                        "unknown name (capture, nakade, atari, pattern, self-atari, \
                         global-capture, two-liberty, lone-self-atari, elsewhere)",
                    ))
                }
            }
        }
        *self = next;
        Ok(())
    }
}

/// What a search's priors may know of a move, from the same knowledge as the playouts.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MoveFeatures {
    /// The pass move.
    pub pass: bool,
    /// The 3x3 pattern's gamma.
    pub gamma: f32,
    /// An answer to an atari fight around the last move (capture or escape).
    pub fight: bool,
    /// Captures at least one stone.
    pub captures: bool,
    /// Puts two or more own stones in atari without capturing.
    pub self_atari: bool,
    /// Fills an own eye.
    pub own_eye: bool,
    /// One of the eight points around the last move.
    pub near_last: bool,
    /// The common-fate-graph distance from the last move, 1 to [`CFG_MAX`] (0: farther,
    /// or no last move): see [`Go::cfg_distances`].
    pub cfg_distance: u8,
    /// Runs an own chain out of atari into a ladder that catches it.
    pub futile_run: bool,
    /// Puts an opponent chain in atari that cannot escape (a working ladder or net).
    pub ladder_atari: bool,
    /// Distance to the nearest edge (0: the first line).
    pub line: u8,
    /// No stone within two points either way (the 5x5 square around it is empty).
    pub open_area: bool,
}

/// Four 8-bit random numbers from one draw, for the steps' chances (drawing each from
/// the generator costs as much as a light playout move).
struct Chances(u32);

impl Chances {
    fn draw(random: &mut dyn FnMut(usize) -> usize) -> Self {
        Chances(random(1 << 32) as u32)
    }

    /// Whether step `k` (0..4) happens with probability `p` (to 1/256).
    fn take(&self, k: u32, p: f64) -> bool {
        p >= 1.0 || f64::from((self.0 >> (8 * k)) & 0xff) < p * 256.0
    }
}

fn chance(random: &mut dyn FnMut(usize) -> usize, p: f64) -> bool {
    p >= 1.0 || (random(1 << 16) as f64) < p * 65536.0
}

impl Go {
    /// The liberty of a chain in atari (its pseudo-liberties are all one point).
    pub(super) fn single_liberty(&self, p: usize) -> usize {
        let h = self.head[p] as usize;
        (self.lsum[h] / u32::from(self.plibs[h].max(1))) as usize
    }

    /// Liberties (0 to 3, 3 meaning "three or more") of the chain a stone of `me` at
    /// the empty point `p` would make, counting the stones it captures as freed.
    pub(super) fn liberties_after(&self, p: usize, me: u8) -> usize {
        let opp = BLACK + WHITE - me;
        let mut libs = [0usize; 4];
        let mut found = 0;
        let add = |q: usize, libs: &mut [usize; 4], found: &mut usize| {
            if q != p && *found < 3 && !libs[..*found].contains(&q) {
                libs[*found] = q;
                *found += 1;
            }
        };
        for q in self.neighbours(p) {
            match self.color[q] {
                EMPTY => add(q, &mut libs, &mut found),
                c if c == opp && self.liberties(q) == 1 => add(q, &mut libs, &mut found),
                c if c == me => {
                    let mut theirs = [0usize; 4];
                    let n = self.chain_liberties(q, 4, &mut theirs);
                    for &l in &theirs[..n] {
                        add(l, &mut libs, &mut found);
                    }
                }
                _ => {}
            }
        }
        found
    }

    /// Whether a stone of `me` at `p` joins own stones into a chain left in atari
    /// without capturing anything: a self-atari of two or more stones.
    fn is_group_self_atari(&self, p: usize, me: u8) -> bool {
        // the common case first: two empty neighbours are two liberties
        if self
            .neighbours(p)
            .iter()
            .filter(|&&q| self.color[q] == EMPTY)
            .count()
            >= 2
        {
            return false;
        }
        let opp = BLACK + WHITE - me;
        let joins = self.neighbours(p).iter().any(|&q| self.color[q] == me);
        let captures = self
            .neighbours(p)
            .iter()
            .any(|&q| self.color[q] == opp && self.liberties(q) == 1);
        joins && !captures && self.liberties_after(p, me) == 1
    }

    /// Whether a stone of `me` at `p`, touching no own stone, is left in atari without
    /// capturing anything.
    fn is_lone_self_atari(&self, p: usize, me: u8) -> bool {
        let opp = BLACK + WHITE - me;
        let mut empty = 0;
        for q in self.neighbours(p) {
            match self.color[q] {
                EMPTY => empty += 1,
                c if c == me => return false,
                c if c == opp && self.liberties(q) == 1 => return false,
                _ => {}
            }
        }
        empty == 1
    }

    /// Whether a playout rejects `p` as a lone stone's self-atari (with probability
    /// `policy.lone_self_atari`).
    fn rejects_lone_self_atari(
        &self,
        p: usize,
        me: u8,
        policy: &HeavyPolicy,
        random: &mut dyn FnMut(usize) -> usize,
    ) -> bool {
        policy.lone_self_atari > 0.0
            && self.is_lone_self_atari(p, me)
            && chance(random, policy.lone_self_atari)
    }

    /// Whether a playout may play at `p`: empty, not the ko point, not suicide, not
    /// an own eye.
    fn playable(&self, p: usize, me: u8) -> bool {
        self.color[p] == EMPTY
            && self.ko_point != Some(p)
            && !self.is_own_eye(p, me)
            && self.would_have_liberty(p, me)
    }

    fn atari_fights(&self, last: usize, me: u8, ladders: bool, out: &mut Vec<usize>) {
        let opp = BLACK + WHITE - me;
        if self.color[last] == opp && self.liberties(last) == 1 {
            out.push(self.single_liberty(last));
        }
        for q in self.neighbours(last) {
            if self.color[q] != me || self.liberties(q) != 1 {
                continue;
            }
            self.captures_around_chain(q, opp, out);
            // or run, if running gives two liberties and (with `ladders`) does not
            // run into a ladder the attacker wins
            let l = self.single_liberty(q);
            match self.liberties_after(l, me) {
                0 | 1 => {}
                2 if ladders && self.is_caught(q) => {}
                _ => out.push(l),
            }
        }
    }

    /// The liberties of `opp`'s chains in atari next to the chain at `q`: the points
    /// that capture a neighbour of it.
    fn captures_around_chain(&self, q: usize, opp: u8, out: &mut Vec<usize>) {
        let mut s = q;
        loop {
            for r in self.neighbours(s) {
                if self.color[r] == opp && self.liberties(r) == 1 {
                    out.push(self.single_liberty(r));
                }
            }
            s = self.next[s] as usize;
            if s == q {
                break;
            }
        }
    }

    /// Every empty point that captures an opponent chain (each chain in atari once:
    /// its liberty).
    fn global_captures(&self, me: u8, out: &mut Vec<usize>) {
        let opp = BLACK + WHITE - me;
        for &e in &self.empties {
            let p = e as usize;
            if self
                .neighbours(p)
                .iter()
                .any(|&q| self.color[q] == opp && self.liberties(q) == 1)
            {
                out.push(p);
            }
        }
    }

    /// The vital point of a small eye space next to `last`, if there is one.
    fn nakade_point(&self, last: usize) -> Option<usize> {
        for start in self.neighbours(last) {
            if self.color[start] != EMPTY {
                continue;
            }
            let mut region = [0usize; 6];
            let mut size = 1;
            region[0] = start;
            let mut i = 0;
            let mut border = EMPTY;
            let mut closed = true;
            while i < size && closed {
                for q in self.neighbours(region[i]) {
                    match self.color[q] {
                        EMPTY if !region[..size].contains(&q) => {
                            if size == region.len() {
                                closed = false;
                                break;
                            }
                            region[size] = q;
                            size += 1;
                        }
                        EMPTY => {}
                        c if c == BLACK || c == WHITE => {
                            if border == EMPTY {
                                border = c;
                            } else if border != c {
                                closed = false;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                i += 1;
            }
            if !closed || !(3..=5).contains(&size) || border == EMPTY {
                continue;
            }
            let inside = |p: usize| {
                self.neighbours(p)
                    .iter()
                    .filter(|q| region[..size].contains(q))
                    .count()
            };
            let best = (0..size).map(|k| inside(region[k])).max().unwrap_or(0);
            let mut vital = region[..size].iter().filter(|&&p| inside(p) == best);
            if let (Some(&v), None) = (vital.next(), vital.next()) {
                return Some(v);
            }
        }
        None
    }

    fn atari_on_last(&self, last: usize, me: u8, out: &mut Vec<usize>) {
        let opp = BLACK + WHITE - me;
        if self.color[last] != opp {
            return;
        }
        let mut libs = [0usize; 4];
        if self.chain_liberties(last, 3, &mut libs) == 2 {
            for &l in &libs[..2] {
                if self.liberties_after(l, me) >= 2 {
                    out.push(l);
                }
            }
        }
    }

    /// Defences of own chains next to `last` that it left with exactly two liberties:
    /// capture a neighbouring opponent chain in atari, or extend to a liberty that
    /// gives three or more.
    fn two_liberty_defences(&self, last: usize, me: u8, out: &mut Vec<usize>) {
        let opp = BLACK + WHITE - me;
        for q in self.neighbours(last) {
            if self.color[q] != me {
                continue;
            }
            let mut libs = [0usize; 4];
            if self.chain_liberties(q, 3, &mut libs) != 2 {
                continue;
            }
            self.captures_around_chain(q, opp, out);
            for &l in &libs[..2] {
                if self.liberties_after(l, me) >= 3 {
                    out.push(l);
                }
            }
        }
    }

    /// The liberties of the chain at `action` (empty if the point is empty), as actions.
    pub fn chain_liberty_actions(&self, action: u16) -> Vec<u16> {
        let p = self.action_point(action);
        if self.color[p] != BLACK && self.color[p] != WHITE {
            return Vec::new();
        }
        let mut out = Vec::new();
        for s in self.chain_stones(p) {
            for q in self.neighbours(s) {
                // off-board neighbours have no action: test the colour first
                if self.color[q] == EMPTY {
                    let a = self.point_action(q);
                    if !out.contains(&a) {
                        out.push(a);
                    }
                }
            }
        }
        out
    }

    /// The features of each of `moves` (legal moves of this position); with `ladders`,
    /// runs from atari and ataris are read out as ladders (`futile_run`,
    /// `ladder_atari`, and no `fight` for a run the ladder catches).
    pub fn move_features(
        &self,
        moves: &[u16],
        weights: &PatternWeights,
        ladders: bool,
    ) -> Vec<MoveFeatures> {
        let me = Self::colour_of(self.to_move);
        let opp = BLACK + WHITE - me;
        let mut fights = Vec::new();
        if let Some(last) = self.last_move {
            self.atari_fights(last, me, ladders, &mut fights);
        }
        let cfg = self.cfg_distances(CFG_MAX);
        moves
            .iter()
            .map(|&a| {
                if a == self.pass() {
                    return MoveFeatures {
                        pass: true,
                        gamma: 1.0,
                        ..MoveFeatures::default()
                    };
                }
                let p = self.action_point(a);
                let near_last = self.last_move.is_some_and(|l| self.around(l).contains(&p));
                let cfg_distance = cfg.get(p).copied().unwrap_or(0);
                let (r, c) = (a as usize / self.n, a as usize % self.n);
                let line = r.min(c).min(self.n - 1 - r).min(self.n - 1 - c);
                MoveFeatures {
                    line: line.min(u8::MAX as usize) as u8,
                    open_area: self.is_open_area(r, c),
                    pass: false,
                    gamma: weights.gamma(self.pattern_at(p, me)),
                    fight: fights.contains(&p),
                    captures: self
                        .neighbours(p)
                        .iter()
                        .any(|&q| self.color[q] == opp && self.liberties(q) == 1),
                    self_atari: self.is_group_self_atari(p, me),
                    own_eye: self.is_own_eye(p, me),
                    near_last,
                    cfg_distance,
                    futile_run: ladders
                        && self.neighbours(p).iter().any(|&q| {
                            self.color[q] == me
                                && self.liberties(q) == 1
                                && self.single_liberty(q) == p
                                && self.liberties_after(p, me) == 2
                                && self.is_caught(q)
                        }),
                    ladder_atari: ladders && self.ladder_atari(p),
                }
            })
            .collect()
    }

    /// Common-fate-graph distances from the last move, by board point (Bouzy's common
    /// fate graph, as Pachi's distance prior reads it): the last move's chain is at 0,
    /// and a step to a neighbouring point costs 1, a whole chain counting as one point
    /// — so every liberty of the chain just played on is at 1, however long the chain.
    /// Points farther than `max`, and every point when there is no last move, are 0.
    pub fn cfg_distances(&self, max: u8) -> Vec<u8> {
        const UNSEEN: u8 = u8::MAX;
        let mut dist = vec![UNSEEN; self.color.len()];
        let mut frontier = match self.last_move {
            Some(last) if self.color[last] == BLACK || self.color[last] == WHITE => {
                self.chain_stones(last)
            }
            _ => Vec::new(),
        };
        for &s in &frontier {
            dist[s] = 0;
        }
        for d in 1..=max.min(UNSEEN - 1) {
            let mut next = Vec::new();
            for &p in &frontier {
                for q in self.neighbours(p) {
                    if dist[q] != UNSEEN || self.color[q] == BORDER {
                        continue;
                    }
                    if self.color[q] == EMPTY {
                        dist[q] = d;
                        next.push(q);
                    } else {
                        for s in self.chain_stones(q) {
                            dist[s] = d;
                            next.push(s);
                        }
                    }
                }
            }
            frontier = next;
        }
        for d in &mut dist {
            if *d == UNSEEN {
                *d = 0;
            }
        }
        dist
    }

    /// Whether no stone lies within two points of (`r`, `c`) either way.
    fn is_open_area(&self, r: usize, c: usize) -> bool {
        let span = |x: usize| x.saturating_sub(2)..(x + 3).min(self.n);
        span(r).all(|rr| span(c).all(|cc| self.color[self.point(rr, cc)] == EMPTY))
    }

    /// A random one of the playable points among `cands` (which it filters), if any.
    fn pick_playable(
        &self,
        cands: &mut Vec<usize>,
        me: u8,
        random: &mut dyn FnMut(usize) -> usize,
    ) -> Option<u16> {
        cands.retain(|&p| self.playable(p, me));
        (!cands.is_empty()).then(|| self.point_action(cands[random(cands.len())]))
    }

    /// One move of a heavy playout (see the module documentation); `None` when the
    /// game is over.
    pub fn heavy_rollout_move(
        &self,
        policy: &HeavyPolicy,
        random: &mut dyn FnMut(usize) -> usize,
    ) -> Option<u16> {
        self.heavy_rollout_move_with_reply(policy, None, random)
    }

    /// One move of a heavy playout that tries `reply` (an action: the reply to the
    /// last move that won the last time it was played, see `last-good reply` in the
    /// search) right after the atari fights, when it is playable and no self-atari of a
    /// group.
    pub fn heavy_rollout_move_with_reply(
        &self,
        policy: &HeavyPolicy,
        reply: Option<u16>,
        random: &mut dyn FnMut(usize) -> usize,
    ) -> Option<u16> {
        if self.outcome().is_some() {
            return None;
        }
        let me = Self::colour_of(self.to_move);
        if let Some(last) = self.last_move {
            let mut cands: Vec<usize> = Vec::new();
            let chances = Chances::draw(random);
            if chances.take(0, policy.capture) {
                self.atari_fights(last, me, policy.ladders, &mut cands);
                if let Some(a) = self.pick_playable(&mut cands, me, random) {
                    return Some(a);
                }
            }
            if policy.two_liberty > 0.0 && chance(random, policy.two_liberty) {
                self.two_liberty_defences(last, me, &mut cands);
                if let Some(a) = self.pick_playable(&mut cands, me, random) {
                    return Some(a);
                }
            }
            if let Some(a) = reply.filter(|&a| a < self.pass()) {
                let p = self.action_point(a);
                if self.playable(p, me) && !self.is_group_self_atari(p, me) {
                    return Some(a);
                }
            }
            if chances.take(1, policy.nakade) {
                if let Some(v) = self.nakade_point(last) {
                    if self.playable(v, me) {
                        return Some(self.point_action(v));
                    }
                }
            }
            if chances.take(2, policy.atari) {
                self.atari_on_last(last, me, &mut cands);
                if let Some(a) = self.pick_playable(&mut cands, me, random) {
                    return Some(a);
                }
            }
            if chances.take(3, policy.pattern) {
                let around = self.around(last);
                let mut gammas = [0f32; 8];
                let mut total = 0f32;
                for (k, &q) in around.iter().enumerate() {
                    if self.playable(q, me) {
                        gammas[k] = policy.weights.gamma(self.pattern_at(q, me));
                        total += gammas[k];
                    }
                }
                if total > 0.0 {
                    let scale = 1 << 20;
                    let r = random(scale) as f32 / scale as f32 * (total + policy.elsewhere);
                    let mut acc = 0.0;
                    for (k, &g) in gammas.iter().enumerate() {
                        acc += g;
                        if g > 0.0 && r < acc {
                            // checked only for the point drawn: a self-atari
                            // falls through to a random move
                            let q = around[k];
                            if !self.is_group_self_atari(q, me)
                                && !self.rejects_lone_self_atari(q, me, policy, random)
                            {
                                return Some(self.point_action(q));
                            }
                            break;
                        }
                    }
                }
            }
        }
        if policy.global_capture > 0.0 && chance(random, policy.global_capture) {
            let mut cands = Vec::new();
            self.global_captures(me, &mut cands);
            if let Some(a) = self.pick_playable(&mut cands, me, random) {
                return Some(a);
            }
        }
        // a random move, rejecting big self-ataris
        let n = self.empties.len();
        if n == 0 {
            return Some(self.pass());
        }
        let start = random(n);
        for k in 0..n {
            let p = self.empties[(start + k) % n] as usize;
            if !self.playable(p, me) {
                continue;
            }
            if (self.is_group_self_atari(p, me) && chance(random, policy.self_atari))
                || self.rejects_lone_self_atari(p, me, policy, random)
            {
                continue;
            }
            return Some(self.point_action(p));
        }
        Some(self.pass())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::go::{stones_from_rows, GoRules};
    use crate::Player;

    /// A board from rows of `X`, `O`, `.` (top row first).
    fn board(rows: &[&str], to_move: Player, last: &str) -> Go {
        let stones = stones_from_rows(rows);
        let mut g = Go::from_stones(rows.len(), GoRules::default(), &stones).unwrap();
        g.set_to_move(to_move);
        g.last_move = Some(g.action_point(g.parse_move(last).unwrap()));
        g
    }

    /// Always take a step that applies (every chance 1).
    fn certain() -> HeavyPolicy {
        HeavyPolicy {
            capture: 1.0,
            nakade: 1.0,
            atari: 1.0,
            pattern: 1.0,
            self_atari: 1.0,
            ..HeavyPolicy::default()
        }
    }

    /// A small deterministic generator of `random(n)` draws.
    fn lcg(mut state: u64) -> impl FnMut(usize) -> usize {
        move |n: usize| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) as usize) % n
        }
    }

    fn moves(g: &Go, policy: &HeavyPolicy) -> std::collections::HashSet<String> {
        let mut random = lcg(7);
        (0..200)
            .map(|_| g.format_move(g.heavy_rollout_move(policy, &mut random).unwrap()))
            .collect()
    }

    #[test]
    fn a_chain_in_atari_after_the_last_move_is_captured() {
        // White's last move C3 is in atari (its liberty is C2)
        let g = board(
            &[".....", "..X..", ".XOX.", ".....", "....."],
            Player::First,
            "C3",
        );
        assert_eq!(moves(&g, &certain()), ["C2".to_string()].into());
    }

    #[test]
    fn an_own_chain_put_in_atari_runs_or_captures() {
        // White's B3 put Black's B4 in atari (liberty C4); White's B5 is in atari too
        // (liberty A5): capture it, or run to C4 (three liberties there)
        let g = board(
            &[".OX..", "OX...", ".O...", ".....", "....."],
            Player::First,
            "B3",
        );
        assert_eq!(
            moves(&g, &certain()),
            ["A5".to_string(), "C4".to_string()].into()
        );
        // running where the chain stays in atari (A3: one liberty, A2) is no escape,
        // and no other step plays that self-atari either
        let g = board(
            &["OO...", "XO...", ".O...", ".....", "....."],
            Player::First,
            "B3",
        );
        let got = moves(&g, &certain());
        assert!(!got.contains("A3") && got.len() > 3, "{got:?}");
    }

    #[test]
    fn the_last_good_reply_is_played_after_the_atari_fights_only() {
        let g = board(
            &[".....", ".....", "..X..", ".....", "....."],
            Player::Second,
            "C3",
        );
        let mut random = lcg(3);
        let mut play = |g: &Go, reply: &str| {
            let r = g.parse_move(reply).unwrap();
            let mv = g.heavy_rollout_move_with_reply(&certain(), Some(r), &mut random);
            g.format_move(mv.unwrap())
        };
        // nothing to fight about: the reply is played every time
        for _ in 0..20 {
            assert_eq!(play(&g, "D2"), "D2");
        }
        // an occupied point or a pass is no reply: some other move
        assert_ne!(play(&g, "C3"), "C3");
        // an atari fight comes first: White's last move C3 is in atari (liberty C2)
        let fight = board(
            &[".....", "..X..", ".XOX.", ".....", "....."],
            Player::First,
            "C3",
        );
        assert_eq!(play(&fight, "E1"), "C2");
        // a reply that puts a group in atari is not played (Black's A3 or B3 would
        // leave the four stones one liberty)
        let atari = board(
            &["OOOO.", "XXXO.", "..XO.", "OOOO.", "....."],
            Player::First,
            "E5",
        );
        assert_ne!(play(&atari, "A3"), "A3");
    }

    #[test]
    fn a_global_capture_takes_a_chain_in_atari_far_from_the_last_move() {
        // White's A5 is in atari (liberty A4), far from the last move (E1)
        let g = board(
            &["OX...", ".....", ".....", ".....", "....X"],
            Player::First,
            "E1",
        );
        let only = |global_capture| HeavyPolicy {
            global_capture,
            ..only(0.0, 0.0)
        };
        assert_eq!(moves(&g, &only(1.0)), ["A4".to_string()].into());
        assert!(moves(&g, &only(0.0)).len() > 3);
    }

    #[test]
    fn playout_options_are_read_and_refused_whole() {
        let mut p = HeavyPolicy::default();
        p.set_options(" capture=0.5, self-atari=1 ,elsewhere=0,two-liberty=0.25")
            .unwrap();
        p.set_options("lone-self-atari=0.75").unwrap();
        assert_eq!((p.capture, p.self_atari, p.elsewhere), (0.5, 1.0, 0.0));
        assert_eq!((p.two_liberty, p.lone_self_atari), (0.25, 0.75));
        for bad in [
            "atari",
            "atari=x",
            "atari=-0.1",
            "atari=NaN",
            "elsewhere=1e9",
            "fast=1",
        ] {
            let before = format!("{p:?}");
            assert!(
                p.set_options(&format!("nakade=0.1,{bad}")).is_err(),
                "{bad}"
            );
            assert_eq!(format!("{p:?}"), before, "{bad} changed the policy");
        }
        p.set_options("").unwrap();
        assert_eq!(p.capture, 0.5);
    }

    #[test]
    fn a_self_atari_of_a_big_group_is_not_played() {
        // Black's four stones (A4 B4 C4 C3) have two liberties, A3 and B3: playing
        // either joins them and leaves one, so no random move plays there
        let g = board(
            &["OOOO.", "XXXO.", "..XO.", "OOOO.", "....."],
            Player::First,
            "E5",
        );
        let got = moves(
            &g,
            &HeavyPolicy {
                capture: 0.0,
                nakade: 0.0,
                atari: 0.0,
                pattern: 0.0,
                ..certain()
            },
        );
        for bad in ["A3", "B3"] {
            assert!(!got.contains(bad), "{bad} in {got:?}");
        }
        assert!(got.len() > 3, "{got:?}");
    }

    /// Black's D7 put White's C7 in atari (the ladder tests' board); running at C6
    /// leaves two liberties, and the ladder that follows catches it at the edge.
    /// Without ladder reading the playout always runs; with it, it never runs as an
    /// answer to the atari (other steps may still pick C6 now and then). Where a White
    /// stone at A7 breaks the ladder, the run is the answer again.
    #[test]
    fn a_run_into_a_ladder_is_not_the_answer_to_atari() {
        let mut rows = crate::go::ladder::tests::LADDER;
        let g = board(&rows, Player::Second, "D7");
        let blind = HeavyPolicy {
            ladders: false,
            ..certain()
        };
        assert_eq!(moves(&g, &blind), ["C6".to_string()].into());
        let got = moves(&g, &certain());
        assert!(got.len() > 3, "{got:?}");
        rows[2] = "OXOX.....";
        let g = board(&rows, Player::Second, "D7");
        assert_eq!(moves(&g, &certain()), ["C6".to_string()].into());
    }

    /// Only the given steps (and the random move's group self-atari rule): the
    /// steps around the last move off.
    fn only(two_liberty: f64, lone_self_atari: f64) -> HeavyPolicy {
        HeavyPolicy {
            capture: 0.0,
            nakade: 0.0,
            atari: 0.0,
            pattern: 0.0,
            two_liberty,
            lone_self_atari,
            ..certain()
        }
    }

    #[test]
    fn a_chain_left_with_two_liberties_extends_to_three() {
        // White's D4 left Black's C4-C3 two liberties, C5 and D3; either extension
        // gives three
        let mut rows = [".....", ".OXO.", ".OX..", "..O..", "....."];
        let g = board(&rows, Player::First, "D4");
        let pair: std::collections::HashSet<String> = ["C5".into(), "D3".into()].into();
        assert_eq!(moves(&g, &only(1.0, 0.0)), pair);
        assert!(moves(&g, &only(0.0, 0.0)).len() > 3);
        // with White on B5 and D5, C5 leaves the chain one liberty: only D3 defends
        rows[0] = ".O.O.";
        let g = board(&rows, Player::First, "D4");
        assert_eq!(moves(&g, &only(1.0, 0.0)), ["D3".to_string()].into());
    }

    #[test]
    fn a_lone_stone_in_atari_is_rejected_when_asked() {
        // a Black stone at B5 would have one liberty (A5) and capture nothing
        let g = board(
            &["..O..", ".O...", ".....", ".....", "....."],
            Player::First,
            "B4",
        );
        assert!(moves(&g, &only(0.0, 0.0)).contains("B5"));
        let got = moves(&g, &only(0.0, 1.0));
        assert!(!got.contains("B5") && got.len() > 3, "{got:?}");
    }

    #[test]
    fn a_nakade_vital_point_is_chosen() {
        // White's straight three-point eye space B5-C5-D5: the vital point is C5
        let g = board(
            &["O...O", "OOOOO", "XXXXX", ".....", "....."],
            Player::First,
            "E5",
        );
        let got = moves(&g, &certain());
        assert_eq!(got, ["C5".to_string()].into(), "{got:?}");
    }

    #[test]
    fn common_fate_graph_distance_counts_a_chain_as_one_point() {
        let g = board(
            &[".....", ".XXX.", ".O...", ".....", "....."],
            Player::Second,
            "B4",
        );
        let at = |m: &str| g.cfg_distances(CFG_MAX)[g.action_point(g.parse_move(m).unwrap())];
        // the last move's chain B4-D4: every liberty at 1, E4 too, three points away
        for m in ["A4", "B5", "D5", "E4", "C3", "D3"] {
            assert_eq!(at(m), 1, "{m}");
        }
        // through the white stone on B3 (at 1 as a whole chain) and the liberties
        assert_eq!(at("B2"), 2);
        assert_eq!(at("A3"), 2);
        assert_eq!(at("E5"), 2);
        assert_eq!(at("A2"), 3);
        // four steps away: beyond the measure
        assert_eq!(at("A1"), 0);
        let moves: Vec<u16> = ["E4", "A1"]
            .iter()
            .map(|m| g.parse_move(m).unwrap())
            .collect();
        let f = g.move_features(&moves, &PatternWeights::default(), false);
        assert_eq!((f[0].cfg_distance, f[1].cfg_distance), (1, 0));
        assert!(
            !f[0].near_last,
            "E4 is not one of the eight points around B4"
        );
        // no last move, no distances
        let mut quiet = g.clone();
        quiet.last_move = None;
        assert!(quiet.cfg_distances(CFG_MAX).iter().all(|&d| d == 0));
    }
}
