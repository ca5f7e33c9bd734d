//! Go on square boards from 2x2 to 19x19, with Tromp-Taylor area scoring.
//!
//! Rules (defaults first): captures; suicide illegal (legal under Tromp-Taylor, where a
//! suicidal move removes the player's own chain); ko by positional superko (a move may
//! not recreate any earlier board), or simple ko as an option; two passes in a row end
//! the game; area scoring with komi. Seed 000's toy rules (no captures, the game ends
//! after 44 moves, more stones wins) are their own game, [`crate::mini_go`].
//!
//! The board is padded with a border so that neighbours need no bounds checks. Chains
//! are kept incrementally as circular linked lists with a head per stone; liberties are
//! counted exactly, on demand, over a chain's stones.

use std::fmt;

use crate::game::{Game, GameError, Outcome, Player};
use crate::symmetry;
use crate::zobrist;

mod ladder;
pub mod patterns;
pub mod playout;

const EMPTY: u8 = 0;
const BLACK: u8 = 1;
const WHITE: u8 = 2;
const BORDER: u8 = 3;

/// Largest board side.
pub const MAX_SIZE: usize = 19;
/// Zobrist keys: (padded point, colour) pairs, then the side-to-move key.
const ZOBRIST: [u64; 21 * 21 * 2 + 1] = zobrist::table(0x60);
const SIDE_KEY: usize = 21 * 21 * 2;

/// How a repeated position is prevented.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ko {
    /// No move may recreate a board seen before in the game (Tromp-Taylor).
    PositionalSuperko,
    /// Only the immediate recapture of a single stone is forbidden.
    Simple,
}

/// Input planes of Go's network encoding ([`Game::encode`]).
pub const INPUT_PLANES: usize = 15;

/// The rule set of a game.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GoRules {
    /// Points given to White.
    pub komi: f32,
    /// Ko rule.
    pub ko: Ko,
    /// Whether a move that leaves its own chain without liberties is legal (it then
    /// removes that chain).
    pub suicide: bool,
}

impl Default for GoRules {
    fn default() -> Self {
        GoRules {
            komi: 7.5,
            ko: Ko::PositionalSuperko,
            suicide: false,
        }
    }
}

impl GoRules {
    /// The name SGF's RU gives these rules, one that [`crate::sgf::SgfGame::go_rules`]
    /// reads back as the same rules (suicide is what tells them apart there).
    pub fn sgf_name(&self) -> &'static str {
        if self.suicide {
            "Tromp-Taylor"
        } else {
            "Chinese"
        }
    }

    /// Tromp-Taylor: positional superko and suicide allowed.
    pub fn tromp_taylor(komi: f32) -> Self {
        GoRules {
            komi,
            ko: Ko::PositionalSuperko,
            suicide: true,
        }
    }
}

/// A Go position with its history (for superko and for undoing in front ends).
#[derive(Clone, Debug)]
pub struct Go {
    n: usize,
    stride: usize,
    rules: GoRules,
    color: Vec<u8>,
    /// Next stone of the same chain (circular).
    next: Vec<u16>,
    /// Head (representative) of the chain each stone belongs to.
    head: Vec<u16>,
    /// Per chain head: pseudo-liberties (stone-empty adjacencies), and the sum and sum
    /// of squares of their points. A chain has no liberty when the count is 0 and
    /// exactly one when `count * sum_sq == sum²` (all its pseudo-liberties are one
    /// point); this answers every question the rules ask in constant time.
    plibs: Vec<u16>,
    lsum: Vec<u32>,
    lsum2: Vec<u64>,
    to_move: Player,
    /// Point where a simple-ko recapture is forbidden now.
    ko_point: Option<usize>,
    passes: u8,
    ply: usize,
    /// Zobrist hash of the stones alone (what positional superko compares).
    board_hash: u64,
    /// Hashes of every board seen so far, in order (a vector: appending is what every
    /// move does, scanning only what a superko check does).
    seen: Vec<u64>,
    /// Stones captured by Black and by White.
    captures: [u32; 2],
    /// A limit on the game's length, after which it is scored as it stands.
    max_moves: usize,
    /// Set when the game ended by resignation.
    resigned: Option<Player>,
    /// The index in `seen` of the board a setup wrote, so that further setup stones
    /// before the next move replace it: a setup is one change of position, and its
    /// intermediate boards were never positions of the game.
    setup_entry: Option<usize>,
    /// The point of the last move (`None` after a pass, a setup or at the start): where
    /// the heavy playout policy looks first.
    last_move: Option<usize>,
    /// The point of the move before it (`None` likewise), for the network's input.
    previous_move: Option<usize>,
    /// The empty points (padded indices), in no order, so that playouts draw from
    /// them without scanning the whole board; `empty_at[p]` is p's place in it.
    empties: Vec<u16>,
    empty_at: Vec<u16>,
}

impl Go {
    /// An empty `size`×`size` board (2 ≤ size ≤ 19, or 1 for tests) under `rules`.
    pub fn new(size: usize, rules: GoRules) -> Result<Go, GameError> {
        if !(1..=MAX_SIZE).contains(&size) {
            return Err(GameError::BadSpec(format!(
                "Go board size must be 1 to {MAX_SIZE}, not {size}"
            )));
        }
        if !rules.komi.is_finite() || rules.komi.abs() > 1000.0 {
            return Err(GameError::BadSpec(format!(
                "komi {} is not a sensible number",
                rules.komi
            )));
        }
        Ok(Go::blank(size, rules))
    }

    /// An empty board of a size and rules already checked by [`Go::new`].
    fn blank(size: usize, rules: GoRules) -> Go {
        let stride = size + 2;
        let mut color = vec![BORDER; stride * stride];
        for r in 0..size {
            for c in 0..size {
                color[(r + 1) * stride + c + 1] = EMPTY;
            }
        }
        let points = stride * stride;
        let mut g = Go {
            n: size,
            stride,
            rules,
            color,
            next: (0..points as u16).collect(),
            head: (0..points as u16).collect(),
            plibs: vec![0; points],
            lsum: vec![0; points],
            lsum2: vec![0; points],
            to_move: Player::First,
            ko_point: None,
            passes: 0,
            ply: 0,
            board_hash: 0,
            seen: Vec::new(),
            captures: [0, 0],
            max_moves: 2 * size * size + 20,
            resigned: None,
            setup_entry: None,
            last_move: None,
            previous_move: None,
            empties: Vec::with_capacity(size * size),
            empty_at: vec![u16::MAX; points],
        };
        for r in 0..size {
            for c in 0..size {
                let p = g.point(r, c);
                g.add_empty(p);
            }
        }
        g.seen.push(0);
        g
    }

    /// Board side.
    pub fn size(&self) -> usize {
        self.n
    }

    /// The rules.
    pub fn rules(&self) -> GoRules {
        self.rules
    }

    /// Changes komi (allowed at any time, as GTP does).
    pub fn set_komi(&mut self, komi: f32) {
        self.rules.komi = komi;
    }

    /// Stones captured by `player` so far.
    pub fn captures(&self, player: Player) -> u32 {
        self.captures[player.index()]
    }

    /// The action of the last move if it put a stone on the board (`None` at the
    /// start, after a pass or a setup).
    pub fn last_action(&self) -> Option<u16> {
        self.last_move.map(|p| self.point_action(p))
    }

    /// The action index of the pass move.
    pub fn pass(&self) -> u16 {
        (self.n * self.n) as u16
    }

    #[inline]
    fn point(&self, row: usize, col: usize) -> usize {
        (row + 1) * self.stride + col + 1
    }

    #[inline]
    fn row_col(&self, p: usize) -> (usize, usize) {
        (p / self.stride - 1, p % self.stride - 1)
    }

    #[inline]
    fn action_point(&self, action: u16) -> usize {
        let a = action as usize;
        self.point(a / self.n, a % self.n)
    }

    #[inline]
    fn point_action(&self, p: usize) -> u16 {
        let (r, c) = self.row_col(p);
        (r * self.n + c) as u16
    }

    #[inline]
    fn neighbours(&self, p: usize) -> [usize; 4] {
        [p - self.stride, p - 1, p + 1, p + self.stride]
    }

    /// The eight points around `p`, row by row from the north-west (the order of the
    /// 3x3 pattern codes).
    #[inline]
    fn around(&self, p: usize) -> [usize; 8] {
        let s = self.stride;
        [
            p - s - 1,
            p - s,
            p - s + 1,
            p - 1,
            p + 1,
            p + s - 1,
            p + s,
            p + s + 1,
        ]
    }

    fn colour_of(player: Player) -> u8 {
        match player {
            Player::First => BLACK,
            Player::Second => WHITE,
        }
    }

    /// Who has a stone at (row, col), row 0 at the top.
    pub fn stone(&self, row: usize, col: usize) -> Option<Player> {
        match self.color[self.point(row, col)] {
            BLACK => Some(Player::First),
            WHITE => Some(Player::Second),
            _ => None,
        }
    }

    #[inline]
    fn key(p: usize, c: u8) -> u64 {
        ZOBRIST[p * 2 + (c as usize - 1)]
    }

    /// Liberties of the chain through `p`: 0, 1, or 2 for "two or more", from the
    /// chain's counters (checked against a walk of the chain in debug builds).
    #[inline]
    fn liberties(&self, p: usize) -> usize {
        let h = self.head[p] as usize;
        let n = u64::from(self.plibs[h]);
        let count = if n == 0 {
            0
        } else if n * self.lsum2[h] == u64::from(self.lsum[h]) * u64::from(self.lsum[h]) {
            1
        } else {
            2
        };
        debug_assert_eq!(
            count,
            self.liberties_by_walk(p, 2),
            "liberty counters of {p}"
        );
        count
    }

    #[inline]
    fn add_liberty(&mut self, head: usize, point: usize) {
        self.plibs[head] += 1;
        self.lsum[head] += point as u32;
        self.lsum2[head] += (point * point) as u64;
    }

    #[inline]
    fn remove_liberty(&mut self, head: usize, point: usize) {
        self.plibs[head] -= 1;
        self.lsum[head] -= point as u32;
        self.lsum2[head] -= (point * point) as u64;
    }

    /// Places a stone of colour `c` on the empty point `p` and joins it to its
    /// neighbours of the same colour; captures nothing.
    fn place_stone(&mut self, p: usize, c: u8) {
        self.color[p] = c;
        self.remove_empty(p);
        self.board_hash ^= Self::key(p, c);
        self.plibs[p] = 0;
        self.lsum[p] = 0;
        self.lsum2[p] = 0;
        for q in self.neighbours(p) {
            match self.color[q] {
                EMPTY => self.add_liberty(p, q),
                BLACK | WHITE => {
                    let h = self.head[q] as usize;
                    self.remove_liberty(h, p);
                }
                _ => {}
            }
        }
        for q in self.neighbours(p) {
            if self.color[q] == c {
                self.merge(q, p);
            }
        }
    }

    /// Exact number of liberties of the chain through `p`, counted up to `limit`, by
    /// walking the chain (the reference the counters are checked against).
    fn liberties_by_walk(&self, p: usize, limit: usize) -> usize {
        debug_assert!((1..=2).contains(&limit));
        self.chain_liberties(p, limit, &mut [0; 4])
    }

    /// Distinct liberties of the chain through `p`, up to `limit` (≤ 4) of them, found
    /// by walking the chain; returns how many, the points in `out`.
    fn chain_liberties(&self, p: usize, limit: usize, out: &mut [usize; 4]) -> usize {
        let mut found = 0;
        let mut s = p;
        loop {
            for q in self.neighbours(s) {
                if self.color[q] == EMPTY && !out[..found].contains(&q) {
                    out[found] = q;
                    found += 1;
                    if found >= limit {
                        return found;
                    }
                }
            }
            s = self.next[s] as usize;
            if s == p {
                return found;
            }
        }
    }

    fn chain_stones(&self, p: usize) -> Vec<usize> {
        let mut out = vec![p];
        let mut s = self.next[p] as usize;
        while s != p {
            out.push(s);
            s = self.next[s] as usize;
        }
        out
    }

    /// Removes the chain through `p`; returns how many stones it had.
    fn remove_chain(&mut self, p: usize) -> usize {
        let stones = self.chain_stones(p);
        for &s in &stones {
            self.board_hash ^= Self::key(s, self.color[s]);
            self.color[s] = EMPTY;
            self.next[s] = s as u16;
            self.head[s] = s as u16;
            self.add_empty(s);
        }
        // every stone next to a removed one gains it as a liberty
        for &s in &stones {
            for q in self.neighbours(s) {
                if matches!(self.color[q], BLACK | WHITE) {
                    let h = self.head[q] as usize;
                    self.add_liberty(h, s);
                }
            }
        }
        stones.len()
    }

    fn add_empty(&mut self, p: usize) {
        self.empty_at[p] = self.empties.len() as u16;
        self.empties.push(p as u16);
    }

    fn remove_empty(&mut self, p: usize) {
        let i = self.empty_at[p] as usize;
        let last = self.empties.len() - 1;
        self.empties.swap(i, last);
        self.empty_at[self.empties[i] as usize] = i as u16;
        self.empties.pop();
        self.empty_at[p] = u16::MAX;
    }

    fn merge(&mut self, a: usize, b: usize) {
        let (ha, hb) = (self.head[a] as usize, self.head[b] as usize);
        if ha == hb {
            return;
        }
        // relabel b's chain, then splice the two circular lists
        let mut s = hb;
        loop {
            self.head[s] = ha as u16;
            s = self.next[s] as usize;
            if s == hb {
                break;
            }
        }
        self.next.swap(ha, hb);
        self.plibs[ha] += self.plibs[hb];
        self.lsum[ha] += self.lsum[hb];
        self.lsum2[ha] += self.lsum2[hb];
    }

    /// What playing at `p` would do, without doing it: the captures it makes and
    /// whether it is legal. Checks everything but superko.
    fn try_place(&self, p: usize, me: u8) -> Option<Vec<usize>> {
        if self.color[p] != EMPTY {
            return None;
        }
        if self.ko_point == Some(p) {
            return None;
        }
        let opp = BLACK + WHITE - me;
        let mut captured_heads = Vec::new();
        let mut has_liberty = false;
        for q in self.neighbours(p) {
            let c = self.color[q];
            if c == EMPTY {
                has_liberty = true;
            } else if c == me {
                // our chain keeps a liberty other than p
                if self.liberties(q) >= 2 {
                    has_liberty = true;
                }
            } else if c == opp && self.liberties(q) == 1 {
                let h = self.head[q] as usize;
                if !captured_heads.contains(&h) {
                    captured_heads.push(h);
                }
            }
        }
        if !has_liberty && captured_heads.is_empty() && !self.rules.suicide {
            return None;
        }
        Some(captured_heads)
    }

    /// The board hash after playing `p` (for the superko check), computed by playing
    /// on a copy of the stones only.
    fn hash_after(&self, p: usize, me: u8, captured: &[usize]) -> u64 {
        let mut h = self.board_hash ^ Self::key(p, me);
        for &c in captured {
            for s in self.chain_stones(c) {
                h ^= Self::key(s, self.color[s]);
            }
        }
        if captured.is_empty() {
            // a suicide removes the mover's own chain, including the new stone
            let mut alive = false;
            for q in self.neighbours(p) {
                if self.color[q] == EMPTY || (self.color[q] == me && self.liberties(q) >= 2) {
                    alive = true;
                }
            }
            if !alive {
                h ^= Self::key(p, me);
                let mut seen_heads = Vec::new();
                for q in self.neighbours(p) {
                    if self.color[q] == me && !seen_heads.contains(&self.head[q]) {
                        seen_heads.push(self.head[q]);
                        for s in self.chain_stones(q) {
                            h ^= Self::key(s, me);
                        }
                    }
                }
            }
        }
        h
    }

    /// Whether placing a stone at `action` is legal now (passes are always legal).
    pub fn is_legal_action(&self, action: u16) -> bool {
        if self.outcome().is_some() {
            return false;
        }
        if action == self.pass() {
            return true;
        }
        if action > self.pass() {
            return false;
        }
        let p = self.action_point(action);
        let me = Self::colour_of(self.to_move);
        let Some(captured) = self.try_place(p, me) else {
            return false;
        };
        if self.rules.ko == Ko::PositionalSuperko {
            let h = self.hash_after(p, me, &captured);
            if self.seen.contains(&h) {
                return false;
            }
        }
        true
    }

    /// Places a handicap stone for Black (before play starts).
    pub fn place_handicap(&mut self, row: usize, col: usize) -> Result<(), GameError> {
        self.place_setup(row, col, Player::First)
    }

    /// Places a setup stone (SGF AB/AW, handicap) without it counting as a move.
    pub fn place_setup(&mut self, row: usize, col: usize, player: Player) -> Result<(), GameError> {
        if row >= self.n || col >= self.n {
            return Err(GameError::Illegal(format!(
                "setup point {row},{col} is off the board"
            )));
        }
        let p = self.point(row, col);
        if self.color[p] != EMPTY {
            let name = self.format_move(self.point_action(p));
            return Err(GameError::Illegal(format!(
                "setup point {name} is occupied"
            )));
        }
        self.place_stone(p, Self::colour_of(player));
        self.record_setup();
        Ok(())
    }

    /// Enters the board a setup made into the superko history: before any move it is
    /// the game's first position; later, one entry per run of setup changes.
    fn record_setup(&mut self) {
        self.last_move = None;
        self.previous_move = None;
        if self.ply == 0 {
            self.seen.clear();
        }
        let last = self.seen.len().wrapping_sub(1);
        if self.setup_entry == Some(last) {
            self.seen[last] = self.board_hash;
        } else {
            self.seen.push(self.board_hash);
            self.setup_entry = Some(self.seen.len() - 1);
        }
    }

    /// Sets a point to a stone or to empty by setup (SGF AB/AW/AE in any node): the
    /// point is overwritten whatever was there, nothing is captured, no move counts,
    /// and the new board joins the superko history.
    pub fn set_setup_point(
        &mut self,
        row: usize,
        col: usize,
        stone: Option<Player>,
    ) -> Result<(), GameError> {
        if row >= self.n || col >= self.n {
            return Err(GameError::Illegal(format!(
                "setup point {row},{col} is off the board"
            )));
        }
        let p = self.point(row, col);
        let want = stone.map_or(EMPTY, Self::colour_of);
        if self.color[p] == want {
            return Ok(());
        }
        if self.color[p] == EMPTY {
            self.place_stone(p, want);
        } else {
            // Removing a stone splits chains and frees liberties; rebuilding the board
            // (rare: only setup does it) keeps every chain invariant without a special
            // case.
            let mut t = Go::blank(self.n, self.rules);
            for q in 0..self.color.len() {
                let c = if q == p { want } else { self.color[q] };
                if c == BLACK || c == WHITE {
                    t.place_stone(q, c);
                }
            }
            self.color = t.color;
            self.next = t.next;
            self.head = t.head;
            self.plibs = t.plibs;
            self.lsum = t.lsum;
            self.lsum2 = t.lsum2;
            self.board_hash = t.board_hash;
            self.empties = t.empties;
            self.empty_at = t.empty_at;
        }
        self.ko_point = None;
        self.record_setup();
        Ok(())
    }

    /// The standard fixed handicap points for `stones` stones (2–9; GTP
    /// `fixed_handicap`), as (row, col) with row 0 at the top.
    pub fn fixed_handicap_points(
        size: usize,
        stones: usize,
    ) -> Result<Vec<(usize, usize)>, GameError> {
        // GTP: up to 9 stones on odd boards from 9x9, up to 4 on 7x7 and on even boards.
        if !(2..=9).contains(&stones)
            || size < 7
            || ((size == 7 || size.is_multiple_of(2)) && stones > 4)
        {
            return Err(GameError::BadSpec(format!(
                "no fixed handicap of {stones} stones on {size}x{size}"
            )));
        }
        let edge = if size >= 13 { 3 } else { 2 };
        let (lo, mid, hi) = (edge, size / 2, size - 1 - edge);
        // GTP order: corners, then sides, then centre
        let corners = [(hi, lo), (lo, hi), (lo, lo), (hi, hi)];
        let mut pts: Vec<(usize, usize)> = corners[..stones.min(4)].to_vec();
        match stones {
            5 => pts.push((mid, mid)),
            6 => pts.extend([(mid, lo), (mid, hi)]),
            7 => pts.extend([(mid, lo), (mid, hi), (mid, mid)]),
            8 => pts.extend([(mid, lo), (mid, hi), (hi, mid), (lo, mid)]),
            9 => pts.extend([(mid, lo), (mid, hi), (hi, mid), (lo, mid), (mid, mid)]),
            _ => {}
        }
        Ok(pts)
    }

    /// Number of empty points (kept up to date move by move).
    pub fn empty_points(&self) -> usize {
        self.empties.len()
    }

    /// Whether no stone is on the board.
    pub fn is_empty_board(&self) -> bool {
        self.color.iter().all(|&c| c == EMPTY || c == BORDER)
    }

    /// Marks the game as resigned by `player`.
    pub fn resign(&mut self, player: Player) {
        self.resigned = Some(player);
    }

    /// Sets whose turn it is (handicap games start with White; GTP `play` may move
    /// either colour).
    pub fn set_to_move(&mut self, player: Player) {
        if self.to_move != player {
            self.to_move = player;
            self.ko_point = None;
        }
    }

    /// Tromp-Taylor area score: Black's stones and empty regions reaching only Black,
    /// minus White's, minus komi. (Mini-go: stones only.)
    pub fn score(&self) -> f32 {
        let (mut black, mut white) = (0i32, 0i32);
        self.for_each_area_owner(|_, owner| match owner {
            Some(Player::First) => black += 1,
            Some(Player::Second) => white += 1,
            None => {}
        });
        black as f32 - white as f32 - self.rules.komi
    }

    /// Who each point belongs to under area scoring, row-major: a stone's colour, or
    /// for an empty point the one colour its empty region reaches (`None`: both or
    /// neither).
    pub fn area_owners(&self) -> Vec<Option<Player>> {
        let mut owners = vec![None; self.n * self.n];
        self.for_each_area_owner(|a, owner| owners[a] = owner);
        owners
    }

    /// [`Go::area_owners`] as numbers: +1 Black, −1 White, 0 neither (the ownership
    /// networks and playout statistics use).
    pub fn area_ownership(&self) -> Vec<f32> {
        let mut own = vec![0.0; self.n * self.n];
        self.for_each_area_owner(|a, owner| {
            own[a] = match owner {
                Some(Player::First) => 1.0,
                Some(Player::Second) => -1.0,
                None => 0.0,
            }
        });
        own
    }

    /// Calls `f(action, owner)` for every point under area scoring (see
    /// [`Go::area_owners`]), without collecting them: scoring ends every playout.
    fn for_each_area_owner(&self, mut f: impl FnMut(usize, Option<Player>)) {
        let mut visited = vec![false; self.color.len()];
        let mut region = Vec::new();
        for r in 0..self.n {
            for c in 0..self.n {
                let p = self.point(r, c);
                match self.color[p] {
                    BLACK => f(r * self.n + c, Some(Player::First)),
                    WHITE => f(r * self.n + c, Some(Player::Second)),
                    EMPTY if !visited[p] => {
                        // flood the empty region and see which colours it touches
                        region.clear();
                        region.push(p);
                        visited[p] = true;
                        let mut touches = 0u8;
                        let mut i = 0;
                        while i < region.len() {
                            let s = region[i];
                            i += 1;
                            for q in self.neighbours(s) {
                                match self.color[q] {
                                    EMPTY if !visited[q] => {
                                        visited[q] = true;
                                        region.push(q);
                                    }
                                    BLACK => touches |= 1,
                                    WHITE => touches |= 2,
                                    _ => {}
                                }
                            }
                        }
                        let owner = match touches {
                            1 => Some(Player::First),
                            2 => Some(Player::Second),
                            _ => None,
                        };
                        for &s in &region {
                            f(self.point_action(s) as usize, owner);
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    /// An empty point whose neighbours are all `me` (or the edge) and whose diagonals
    /// hold at most one opponent stone (none on the edge): filling it would only
    /// weaken the chain around it.
    fn is_own_eye(&self, p: usize, me: u8) -> bool {
        if self
            .neighbours(p)
            .iter()
            .any(|&q| self.color[q] != me && self.color[q] != BORDER)
        {
            return false;
        }
        let opp = BLACK + WHITE - me;
        let s = self.stride;
        let diagonals = [p - s - 1, p - s + 1, p + s - 1, p + s + 1];
        let bad = diagonals.iter().filter(|&&q| self.color[q] == opp).count();
        let edge = diagonals.iter().any(|&q| self.color[q] == BORDER);
        bad + usize::from(edge) < 2
    }

    /// Whether a stone placed at `p` keeps a liberty or captures (it is not suicide).
    fn would_have_liberty(&self, p: usize, me: u8) -> bool {
        let opp = BLACK + WHITE - me;
        self.neighbours(p).iter().any(|&q| {
            let c = self.color[q];
            c == EMPTY
                || (c == me && self.liberties(q) >= 2)
                || (c == opp && self.liberties(q) == 1)
        })
    }

    /// Legal moves of the side to move that capture at least one opponent stone.
    pub fn capturing_moves(&self) -> Vec<u16> {
        let me = Self::colour_of(self.to_move);
        let opp = BLACK + WHITE - me;
        self.empties
            .iter()
            .map(|&p| p as usize)
            .filter(|&p| {
                self.neighbours(p)
                    .iter()
                    .any(|&q| self.color[q] == opp && self.liberties(q) == 1)
            })
            .map(|p| self.point_action(p))
            .filter(|&a| self.is_legal_action(a))
            .collect()
    }

    /// A score as GTP and SGF write results: `B+3.5`, `W+0.5`, or `0`.
    pub fn score_text(score: f32) -> String {
        if score > 0.0 {
            format!("B+{score}")
        } else if score < 0.0 {
            format!("W+{}", -score)
        } else {
            "0".into()
        }
    }

    /// Whether every chain on the board has a liberty (a legal Go position).
    pub fn all_chains_have_liberties(&self) -> bool {
        (0..self.n * self.n).all(|a| {
            let p = self.action_point(a as u16);
            self.color[p] == EMPTY || self.liberties(p) >= 1
        })
    }

    /// A board with the given stones (row-major; `None` empty), Black to move, chains
    /// built but nothing captured, for tests and setup. Superko history starts here.
    pub fn from_stones(
        size: usize,
        rules: GoRules,
        stones: &[Option<Player>],
    ) -> Result<Go, GameError> {
        let mut g = Go::new(size, rules)?;
        if stones.len() != size * size {
            return Err(GameError::BadSpec(format!(
                "expected {} points, got {}",
                size * size,
                stones.len()
            )));
        }
        for (a, s) in stones.iter().enumerate() {
            if let Some(pl) = s {
                let p = g.action_point(a as u16);
                g.place_stone(p, Self::colour_of(*pl));
            }
        }
        g.seen.clear();
        g.seen.push(g.board_hash);
        Ok(g)
    }

    /// Forgets the passes just played, so the game goes on (a GTP referee's clean-up
    /// phase after both sides passed with dead stones still on the board).
    pub fn clear_passes(&mut self) {
        self.passes = 0;
    }

    /// Number of consecutive passes that ended the last moves.
    pub fn consecutive_passes(&self) -> u8 {
        self.passes
    }
}

impl Game for Go {
    type Move = u16;

    fn name(&self) -> String {
        format!("go:{}", self.n)
    }

    fn to_move(&self) -> Player {
        self.to_move
    }

    fn ply(&self) -> usize {
        self.ply
    }

    fn legal_moves(&self) -> Vec<u16> {
        if self.outcome().is_some() {
            return Vec::new();
        }
        let mut moves: Vec<u16> = (0..self.pass())
            .filter(|&a| self.is_legal_action(a))
            .collect();
        moves.push(self.pass());
        moves
    }

    fn play(&mut self, mv: u16) {
        // Superko is not asserted: fast playouts (`rollout_move`) check simple ko only.
        debug_assert!(
            mv == self.pass()
                || self
                    .try_place(self.action_point(mv), Self::colour_of(self.to_move))
                    .is_some(),
            "illegal Go move {mv}"
        );
        self.ply += 1;
        let me = Self::colour_of(self.to_move);
        self.to_move = self.to_move.other();
        self.ko_point = None;
        self.previous_move = self.last_move;
        if mv == self.pass() {
            self.passes += 1;
            self.last_move = None;
            return;
        }
        self.passes = 0;
        let p = self.action_point(mv);
        self.last_move = Some(p);
        self.place_stone(p, me);
        let mut captured = 0;
        let mut single_capture = None;
        // opponent chains left without a liberty are captured
        let opp = BLACK + WHITE - me;
        for q in self.neighbours(p) {
            if self.color[q] == opp && self.plibs[self.head[q] as usize] == 0 {
                let k = self.remove_chain(q);
                if k == 1 {
                    single_capture = Some(q);
                }
                captured += k;
            }
        }
        let mover = self.to_move.other().index();
        self.captures[mover] += captured as u32;
        if self.liberties(p) == 0 {
            // suicide (only reached when the rules allow it)
            let k = self.remove_chain(p);
            self.captures[1 - mover] += k as u32;
        } else if captured == 1 && self.next[p] as usize == p && self.liberties(p) == 1 {
            self.ko_point = single_capture;
        }
        self.seen.push(self.board_hash);
    }

    fn outcome(&self) -> Option<Outcome> {
        if let Some(p) = self.resigned {
            return Some(Outcome::Win(p.other()));
        }
        if self.passes >= 2 || self.ply >= self.max_moves {
            let s = self.score();
            return Some(if s > 0.0 {
                Outcome::Win(Player::First)
            } else if s < 0.0 {
                Outcome::Win(Player::Second)
            } else {
                Outcome::Draw
            });
        }
        None
    }

    /// A light playout move: a random empty point that is legal under simple ko (superko
    /// is not checked in playouts) and does not fill one of the mover's own eyes; a
    /// pass when there is none.
    fn rollout_move(&self, random: &mut dyn FnMut(usize) -> usize) -> Option<u16> {
        if self.outcome().is_some() {
            return None;
        }
        let me = Self::colour_of(self.to_move);
        let n = self.empties.len();
        if n == 0 {
            return Some(self.pass());
        }
        let start = random(n);
        for k in 0..n {
            let p = self.empties[(start + k) % n] as usize;
            if self.is_own_eye(p, me) {
                continue;
            }
            if self.ko_point != Some(p) && self.would_have_liberty(p, me) {
                return Some(self.point_action(p));
            }
        }
        Some(self.pass())
    }

    fn position_hash(&self) -> u64 {
        let side = if self.to_move == Player::Second {
            ZOBRIST[SIDE_KEY]
        } else {
            0
        };
        let ko = self.ko_point.map_or(0, |p| zobrist::mix(p as u64 ^ 0x6b6f));
        self.board_hash ^ side ^ ko ^ (u64::from(self.passes) << 62)
    }

    fn action_count(&self) -> usize {
        self.n * self.n + 1
    }

    fn action_of(&self, mv: u16) -> usize {
        mv as usize
    }

    fn move_of(&self, action: usize) -> Option<u16> {
        (action <= self.n * self.n).then_some(action as u16)
    }

    fn encoding_shape(&self) -> [usize; 3] {
        [INPUT_PLANES, self.n, self.n]
    }

    /// Planes (KataGo's kind of input, smaller): own stones, opponent stones, empty
    /// points, the simple-ko point; own chains with 1, 2, 3+ liberties, the opponent's
    /// likewise; the last and the previous move; Black to move (all ones or zeros);
    /// komi for the side to move / 15; the board (ones, which tell the edge apart from
    /// the convolutions' zero padding).
    fn encode(&self, out: &mut [f32]) {
        let nn = self.n * self.n;
        out[..INPUT_PLANES * nn].fill(0.0);
        let me = Self::colour_of(self.to_move);
        let komi = if self.to_move == Player::Second {
            self.rules.komi
        } else {
            -self.rules.komi
        } / 15.0;
        let black = f32::from(self.to_move == Player::First);
        let mut libs = vec![0u8; self.color.len()];
        for a in 0..nn {
            let p = self.action_point(a as u16);
            let c = self.color[p];
            out[a] = f32::from(c == me);
            out[nn + a] = f32::from(c != me && c != EMPTY);
            out[2 * nn + a] = f32::from(c == EMPTY);
            if c != EMPTY {
                let h = self.head[p] as usize;
                if libs[h] == 0 {
                    libs[h] = self.chain_liberties(p, 3, &mut [0; 4]) as u8;
                }
                let plane = if c == me { 4 } else { 7 } + (libs[h].clamp(1, 3) - 1) as usize;
                out[plane * nn + a] = 1.0;
            }
            out[12 * nn + a] = black;
            out[13 * nn + a] = komi;
            out[14 * nn + a] = 1.0;
        }
        for (plane, point) in [
            (3, self.ko_point),
            (10, self.last_move),
            (11, self.previous_move),
        ] {
            if let Some(p) = point {
                out[plane * nn + self.point_action(p) as usize] = 1.0;
            }
        }
    }

    fn final_ownership(&self) -> Option<(Vec<f32>, f32)> {
        if self.resigned.is_some() {
            return None;
        }
        Some((self.area_ownership(), self.score()))
    }

    fn symmetry_count(&self) -> usize {
        symmetry::SQUARE_SYMMETRIES
    }

    fn transformed(&self, sym: usize) -> Self {
        // This board's size and rules were checked when it was made, so the image is
        // built without a fallible constructor (and never silently left untransformed).
        let mut t = Go::blank(self.n, self.rules);
        for a in 0..self.n * self.n {
            let inv = self.transform_action(symmetry::square_inverse(sym), a);
            if let Some(pl) = self.stone(inv / self.n, inv % self.n) {
                let p = t.action_point(a as u16);
                t.place_stone(p, Self::colour_of(pl));
            }
        }
        t.seen.clear();
        t.seen.push(t.board_hash);
        t.to_move = self.to_move;
        t.ply = self.ply;
        t.passes = self.passes;
        t.captures = self.captures;
        t.max_moves = self.max_moves;
        t.resigned = self.resigned;
        let image = |t: &Go, p: usize| {
            let a = self.transform_action(sym, self.point_action(p) as usize);
            t.point(a / self.n, a % self.n)
        };
        t.last_move = self.last_move.map(|p| image(&t, p));
        t.previous_move = self.previous_move.map(|p| image(&t, p));
        t.ko_point = self.ko_point.map(|k| {
            let a = self.transform_action(sym, self.point_action(k) as usize);
            t.point(a / self.n, a % self.n)
        });
        t
    }

    fn transform_action(&self, sym: usize, action: usize) -> usize {
        if action >= self.n * self.n {
            return action;
        }
        let (r, c) = symmetry::square(sym, self.n, action / self.n, action % self.n);
        r * self.n + c
    }

    fn transform_point(&self, sym: usize, row: usize, col: usize) -> (usize, usize) {
        symmetry::square(sym, self.n, row, col)
    }

    /// GTP coordinates: a column letter (A–T without I) and a row number counted from
    /// the bottom, e.g. `D4`; or `pass`.
    fn parse_move(&self, text: &str) -> Result<u16, GameError> {
        Ok(match parse_vertex(self.n, text)? {
            Some(p) => p as u16,
            None => self.pass(),
        })
    }

    fn format_move(&self, mv: u16) -> String {
        format_vertex(self.n, (mv != self.pass()).then_some(mv as usize))
    }
}

/// Reads a GTP vertex on an `n`×`n` board: a column letter (A–T without I) and a row
/// number counted from the bottom, e.g. `D4` → `Some(row * n + col)` with row 0 at the
/// top; `pass` → `None`.
pub(crate) fn parse_vertex(n: usize, text: &str) -> Result<Option<usize>, GameError> {
    let t = text.trim();
    let bad = |reason: &str| GameError::BadMove {
        text: t.to_string(),
        reason: reason.to_string(),
    };
    if t.eq_ignore_ascii_case("pass") {
        return Ok(None);
    }
    let mut chars = t.chars();
    let letter = chars
        .next()
        .ok_or_else(|| bad("empty move"))?
        .to_ascii_uppercase();
    if !letter.is_ascii_uppercase() || letter == 'I' {
        return Err(bad("expected a column letter A-T (no I) or pass"));
    }
    let col = (letter as u8 - b'A') as usize - usize::from(letter > 'I');
    let row_from_bottom: usize = chars
        .as_str()
        .parse()
        .map_err(|_| bad("expected a row number"))?;
    if col >= n || row_from_bottom == 0 || row_from_bottom > n {
        return Err(bad(&format!("off the {n}x{n} board")));
    }
    Ok(Some((n - row_from_bottom) * n + col))
}

/// Writes a point (`row * n + col`, row 0 at the top) as a GTP vertex, `None` as `pass`.
pub(crate) fn format_vertex(n: usize, point: Option<usize>) -> String {
    match point {
        None => "pass".into(),
        Some(p) => {
            let (r, c) = (p / n, p % n);
            let letter = (b'A' + c as u8 + u8::from(c >= 8)) as char;
            format!("{letter}{}", n - r)
        }
    }
}

/// Draws an `n`×`n` board with GTP coordinates around it; X is Black, O is White.
/// Stones drawn as rows of `X` (Black), `O` (White) and `.` (any other character is
/// empty), top row first: row-major, as [`Go::from_stones`] takes them.
pub fn stones_from_rows(rows: &[&str]) -> Vec<Option<Player>> {
    rows.iter()
        .flat_map(|r| {
            r.chars().map(|c| match c {
                'X' => Some(Player::First),
                'O' => Some(Player::Second),
                _ => None,
            })
        })
        .collect()
}

pub(crate) fn draw_board(
    f: &mut fmt::Formatter<'_>,
    n: usize,
    stone: impl Fn(usize, usize) -> Option<Player>,
) -> fmt::Result {
    let letters: String = (0..n)
        .map(|c| format!(" {}", (b'A' + c as u8 + u8::from(c >= 8)) as char))
        .collect();
    writeln!(f, "   {letters}")?;
    for r in 0..n {
        write!(f, "{:>2} ", n - r)?;
        for c in 0..n {
            let ch = match stone(r, c) {
                Some(Player::First) => 'X',
                Some(Player::Second) => 'O',
                None => '.',
            };
            write!(f, " {ch}")?;
        }
        writeln!(f, " {}", n - r)?;
    }
    writeln!(f, "   {letters}")
}

/// Draws the board with GTP coordinates; X is Black, O is White.
impl fmt::Display for Go {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        draw_board(f, self.n, |r, c| self.stone(r, c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn play(g: &mut Go, moves: &str) {
        for m in moves.split_whitespace() {
            let mv = g.parse_move(m).unwrap();
            assert!(g.is_legal_action(mv), "{m} illegal in\n{g}");
            g.play(mv);
        }
    }

    fn go9() -> Go {
        Go::new(9, GoRules::default()).unwrap()
    }

    #[test]
    fn capture_and_multi_stone_capture() {
        let mut g = go9();
        play(&mut g, "E5 D5 A1 F5 A2 E4 A3 E6");
        assert_eq!(g.stone(4, 4), None, "E5 captured");
        assert_eq!(g.captures(Player::Second), 1);
        let mut g = go9();
        // two black stones E5 E6 surrounded
        play(&mut g, "E5 D5 E6 D6 A1 F5 A2 F6 A3 E4 A4 E7");
        assert_eq!(g.stone(4, 4), None);
        assert_eq!(g.stone(3, 4), None);
        assert_eq!(g.captures(Player::Second), 2);
    }

    #[test]
    fn suicide_illegal_by_default_and_legal_under_tromp_taylor() {
        // Black B1 with White on A2, B2 and C1: Black A1 would leave {A1, B1} with no
        // liberty and capture nothing
        let setup = "B1 A2 J9 B2 J8 C1";
        let mut g = go9();
        play(&mut g, setup);
        let a1 = g.parse_move("A1").unwrap();
        assert!(!g.is_legal_action(a1), "suicide is illegal by default");
        let mut tt = Go::new(9, GoRules::tromp_taylor(7.5)).unwrap();
        play(&mut tt, setup);
        assert!(tt.is_legal_action(a1));
        tt.play(a1);
        assert_eq!(tt.stone(8, 0), None, "the suicidal chain is removed");
        assert_eq!(tt.stone(8, 1), None);
        assert_eq!(tt.captures(Player::Second), 2);
        // a one-stone suicide would recreate the board: superko forbids it even here
        let mut one = Go::new(9, GoRules::tromp_taylor(7.5)).unwrap();
        play(&mut one, "J9 A2 J8 B1");
        assert!(!one.is_legal_action(a1));
    }

    #[test]
    fn simple_ko_and_superko() {
        let board = stones_from_rows(&[".XO..", "X.XO.", ".XO..", ".....", "....."]);
        for ko_rule in [Ko::Simple, Ko::PositionalSuperko] {
            let rules = GoRules {
                ko: ko_rule,
                ..GoRules::default()
            };
            let mut k = Go::from_stones(5, rules, &board).unwrap();
            k.set_to_move(Player::Second);
            // White plays B4 (row 1, col 1), capturing the black stone at C4 (row 1, col 2)
            let w = k.parse_move("B4").unwrap();
            assert!(k.is_legal_action(w));
            k.play(w);
            assert_eq!(k.stone(1, 2), None, "C4 captured");
            // Black may not retake at C4 at once
            let retake = k.parse_move("C4").unwrap();
            assert!(
                !k.is_legal_action(retake),
                "immediate ko recapture under {ko_rule:?}"
            );
            // after a move elsewhere and an answer, retaking is legal
            play(&mut k, "E1 E2");
            assert!(k.is_legal_action(retake));
        }
    }

    #[test]
    fn positional_superko_forbids_any_repetition() {
        // On 2x2, a cycle: after B a, W b, B passes?.. Construct: Black A1, White B2,
        // Black B1 captures? Use the known 2x2 result instead: under superko the game
        // terminates and Black wins by 1 with perfect play (checked by search in the
        // search crate). Here: a position can never repeat in a game.
        let mut g = Go::new(
            2,
            GoRules {
                komi: 0.0,
                ..GoRules::default()
            },
        )
        .unwrap();
        let mut seen = HashSet::new();
        seen.insert(g.board_hash);
        let mut rng = 12345u64;
        while g.outcome().is_none() {
            let moves = g.legal_moves();
            rng = zobrist::mix(rng);
            let mv = moves[(rng % moves.len() as u64) as usize];
            g.play(mv);
            if mv != g.pass() {
                assert!(seen.insert(g.board_hash), "board repeated:\n{g}");
            }
        }
    }

    #[test]
    fn positional_superko_forbids_a_cycle_that_simple_ko_allows() {
        // Search short 2x2 games under simple ko for a move that recreates an earlier
        // board without being an immediate ko recapture.
        fn find(g: &Go, depth: usize) -> Option<(Go, u16)> {
            if depth == 0 || g.outcome().is_some() {
                return None;
            }
            for mv in g.legal_moves() {
                if mv == g.pass() {
                    continue;
                }
                let mut c = g.clone();
                c.play(mv);
                if g.seen.contains(&c.board_hash) {
                    return Some((g.clone(), mv));
                }
                if let Some(found) = find(&c, depth - 1) {
                    return Some(found);
                }
            }
            None
        }
        let simple = GoRules {
            komi: 0.0,
            ko: Ko::Simple,
            ..GoRules::default()
        };
        let (position, mv) = find(&Go::new(2, simple).unwrap(), 8).expect("a cycle on 2x2");
        assert!(
            position.is_legal_action(mv),
            "simple ko allows the repetition"
        );
        let mut superko = position.clone();
        superko.rules.ko = Ko::PositionalSuperko;
        assert!(
            !superko.is_legal_action(mv),
            "positional superko forbids it:\n{position}"
        );
    }

    #[test]
    fn passes_end_the_game_and_area_scoring() {
        let mut g = Go::new(
            5,
            GoRules {
                komi: 0.5,
                ..GoRules::default()
            },
        )
        .unwrap();
        // Black wall on column C, White wall on column D: Black owns A-C (15), White D-E (10)
        play(&mut g, "C1 D1 C2 D2 C3 D3 C4 D4 C5 D5 pass");
        assert!(g.outcome().is_none());
        play(&mut g, "pass");
        assert_eq!(g.score(), 15.0 - 10.0 - 0.5);
        assert_eq!(g.outcome(), Some(Outcome::Win(Player::First)));
        assert!(g.legal_moves().is_empty());
    }

    #[test]
    fn scoring_of_dame_eyes_seki_and_disjoint_territories() {
        let rules = GoRules {
            komi: 0.0,
            ..GoRules::default()
        };
        // dame: the middle column touches both colours and counts for nobody
        let g = Go::from_stones(
            5,
            rules,
            &stones_from_rows(&["X.O..", "X.O..", "X.O..", "X.O..", "X.O.."]),
        )
        .unwrap();
        // Black: 5 stones; White: 5 stones + 10 empty reaching only White; dame 5
        assert_eq!(g.score(), 5.0 - 15.0);
        // an eye counts for its owner: Black 11 stones + 5 below; White 7 stones + 2
        let eyes = Go::from_stones(
            5,
            rules,
            &stones_from_rows(&["XO.OX", "XO.OX", "XOOOX", "XXXXX", "....."]),
        )
        .unwrap();
        assert!(eyes.all_chains_have_liberties());
        assert_eq!(eyes.score(), 16.0 - 9.0);
        // seki: Black's three stones and White's chain share their only two
        // liberties, A4 and C4; whoever fills one is captured, so both stay, alive,
        // and the two shared points count for nobody
        let seki = Go::from_stones(
            4,
            rules,
            &stones_from_rows(&[".X.O", "OXXO", "OOOO", "OOOO"]),
        )
        .unwrap();
        assert!(seki.all_chains_have_liberties());
        assert_eq!(seki.score(), 3.0 - 11.0);
        let mut filled = seki.clone();
        play(&mut filled, "A4");
        assert_eq!(
            filled.stone(0, 1),
            Some(Player::First),
            "self-atari, not yet captured"
        );
        play(&mut filled, "C4");
        assert_eq!(
            filled.stone(0, 1),
            None,
            "White captures the four black stones"
        );
        assert_eq!(filled.captures(Player::Second), 4);
        // disjoint territories of one colour add up
        let g = Go::from_stones(
            5,
            rules,
            &stones_from_rows(&[".X.X.", "XX.XX", ".....", "OOOOO", "....."]),
        )
        .unwrap();
        // Black: 6 stones + A5 + E5 (two separate one-point regions) = 8; C5, C4 and
        // the middle row touch both colours (dame). White: 5 stones + the bottom row = 10
        assert_eq!(g.score(), 8.0 - 10.0);
    }

    #[test]
    fn legal_positions_by_brute_force() {
        // every colouring of the board in which every chain has a liberty
        let count = |n: usize| -> u64 {
            let pts = n * n;
            let mut total = 0;
            let mut digits = vec![0u8; pts];
            loop {
                let stones: Vec<Option<Player>> = digits
                    .iter()
                    .map(|d| match d {
                        1 => Some(Player::First),
                        2 => Some(Player::Second),
                        _ => None,
                    })
                    .collect();
                if Go::from_stones(n, GoRules::default(), &stones)
                    .unwrap()
                    .all_chains_have_liberties()
                {
                    total += 1;
                }
                // next colouring in base 3
                let mut i = 0;
                loop {
                    if i == pts {
                        return total;
                    }
                    digits[i] += 1;
                    if digits[i] < 3 {
                        break;
                    }
                    digits[i] = 0;
                    i += 1;
                }
            }
        };
        assert_eq!(count(1), 1);
        assert_eq!(count(2), 57);
        assert_eq!(count(3), 12675);
    }

    #[test]
    fn handicap_and_coordinates() {
        let pts = Go::fixed_handicap_points(9, 4).unwrap();
        let g = go9();
        let names: Vec<String> = pts
            .iter()
            .map(|&(r, c)| g.format_move((r * 9 + c) as u16))
            .collect();
        assert_eq!(names, ["C3", "G7", "C7", "G3"]);
        let pts = Go::fixed_handicap_points(19, 9).unwrap();
        let g19 = Go::new(19, GoRules::default()).unwrap();
        let names: Vec<String> = pts
            .iter()
            .map(|&(r, c)| g19.format_move((r * 19 + c) as u16))
            .collect();
        assert_eq!(
            names,
            ["D4", "Q16", "D16", "Q4", "D10", "Q10", "K4", "K16", "K10"]
        );
        assert!(Go::fixed_handicap_points(9, 10).is_err());
        // 7x7 takes at most 4 (GTP), as even boards do
        assert_eq!(Go::fixed_handicap_points(7, 4).unwrap().len(), 4);
        for (size, stones) in [(7, 5), (7, 9), (8, 5), (5, 2)] {
            assert!(
                Go::fixed_handicap_points(size, stones).is_err(),
                "{size} {stones}"
            );
        }
        let mut h = go9();
        for (r, c) in Go::fixed_handicap_points(9, 2).unwrap() {
            h.place_handicap(r, c).unwrap();
        }
        assert_eq!(h.stone(6, 2), Some(Player::First));
        assert!(h.place_handicap(6, 2).is_err());
        assert_eq!(g.parse_move("J9").unwrap(), 8);
        assert_eq!(g.format_move(8), "J9");
        assert_eq!(g.parse_move("pass").unwrap(), 81);
        for bad in ["I5", "Z1", "A0", "A10", "", "55"] {
            assert!(g.parse_move(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_empty_point_list_follows_the_board() {
        let mut g = go9();
        let mut state = 7u64;
        for _ in 0..400 {
            let mut random = |n: usize| {
                state = zobrist::mix(state);
                (state % n as u64) as usize
            };
            let Some(mv) = g.rollout_move(&mut random) else {
                break;
            };
            g.play(mv);
            let mut listed: Vec<usize> = g.empties.iter().map(|&p| p as usize).collect();
            listed.sort_unstable();
            let actual: Vec<usize> = (0..81)
                .map(|a| g.action_point(a))
                .filter(|&p| g.color[p] == EMPTY)
                .collect();
            assert_eq!(listed, actual);
            for (i, &p) in g.empties.iter().enumerate() {
                assert_eq!(g.empty_at[p as usize] as usize, i);
            }
        }
    }

    #[test]
    fn capturing_moves_are_found() {
        let mut g = go9();
        play(&mut g, "E5 D5 A1 F5 A2 E4 A3");
        // White to move can take E5 at E6
        let caps: Vec<String> = g
            .capturing_moves()
            .iter()
            .map(|&m| g.format_move(m))
            .collect();
        assert_eq!(caps, ["E6"]);
        play(&mut g, "pass");
        assert!(g.capturing_moves().is_empty());
    }

    #[test]
    fn symmetry_maps_legal_moves_and_hash_consistently() {
        let mut g = go9();
        play(&mut g, "C3 D4 E5 F6 G7 B2 J9");
        for sym in 0..8 {
            let t = g.transformed(sym);
            let mut mapped: Vec<usize> = g
                .legal_moves()
                .iter()
                .map(|&m| g.transform_action(sym, m as usize))
                .collect();
            mapped.sort_unstable();
            let direct: Vec<usize> = t.legal_moves().iter().map(|&m| m as usize).collect();
            assert_eq!(mapped, direct, "sym {sym}");
            assert_eq!(t.score(), g.score());
        }
        assert_eq!(g.transformed(0).position_hash(), g.position_hash());
    }
}
