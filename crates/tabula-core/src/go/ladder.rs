//! Ladders: whether a chain in atari can run, read move by move as players read a
//! ladder (Pachi's playouts and priors read them too; random playouts cannot, since a
//! ladder is lost only at its far end, many forced moves away).
//!
//! The reader is deliberately simple: the defender extends at its one liberty (or
//! counts as free if it can capture a neighbouring attacker chain in atari); with two
//! liberties after the extension the attacker tries an atari at each; three or more
//! liberties is freedom. A read that grows past a node budget calls the chain free, so
//! that giving up never makes a chain look caught.

use std::cell::RefCell;

use super::{Go, BLACK, EMPTY, WHITE};
use crate::Game;

/// Positions a ladder read may visit before it gives up and calls the chain free.
const LADDER_BUDGET: u32 = 64;

thread_local! {
    /// Boards a ladder read copies positions into: playouts read ladders often, and
    /// allocating a fresh board for every step cost them a tenth of their speed.
    static SCRATCH: RefCell<Vec<Go>> = const { RefCell::new(Vec::new()) };
}

/// A copy of `pos`'s board (without its history) in a board from the scratch pool.
fn scratch(pos: &Go) -> Go {
    match SCRATCH.with(|s| s.borrow_mut().pop()) {
        Some(mut g) => {
            pos.copy_board_into(&mut g);
            g
        }
        None => {
            let mut g = pos.clone();
            g.seen.clear();
            g
        }
    }
}

/// Gives a scratch board back to the pool.
fn release(g: Go) {
    SCRATCH.with(|s| {
        let mut s = s.borrow_mut();
        if s.len() < 2 * LADDER_BUDGET as usize + 2 {
            s.push(g);
        }
    });
}

impl Go {
    /// Whether the chain at `p`, in atari with its owner to move, is caught: running
    /// at its liberty leads into a ladder (or a net) the attacker wins, and no
    /// neighbouring attacker chain in atari can be captured instead.
    pub(crate) fn is_caught(&self, p: usize) -> bool {
        debug_assert!(self.liberties(p) == 1 && self.color[p] == Self::colour_of(self.to_move));
        let mut budget = LADDER_BUDGET;
        !self.can_run(p, &mut budget)
    }

    /// Whether a move of the player to move at the empty point `a` puts an opponent
    /// chain next to it in atari that cannot escape (a ladder or a net that works),
    /// without leaving the new stone itself in atari.
    pub(crate) fn ladder_atari(&self, a: usize) -> bool {
        let me = Self::colour_of(self.to_move);
        let opp = BLACK + WHITE - me;
        let mut libs = [0usize; 4];
        let targets: Vec<usize> = self
            .neighbours(a)
            .into_iter()
            .filter(|&q| self.color[q] == opp && self.chain_liberties(q, 3, &mut libs) == 2)
            .collect();
        if targets.is_empty() || self.liberties_after(a, me) < 2 || self.try_place(a, me).is_none()
        {
            return false;
        }
        let mut g = scratch(self);
        g.play(g.point_action(a));
        let caught = targets
            .into_iter()
            .any(|q| g.color[q] == opp && g.liberties(q) == 1 && g.is_caught(q));
        release(g);
        caught
    }

    /// Makes `dst` a copy of this position's board and state, reusing its allocations;
    /// the history (what superko compares) is left empty, as ladder reads never look
    /// at it. Every field is named, so that a new one cannot be forgotten here.
    fn copy_board_into(&self, dst: &mut Go) {
        let Go {
            n,
            stride,
            rules,
            color,
            next,
            head,
            plibs,
            lsum,
            lsum2,
            to_move,
            ko_point,
            passes,
            ply,
            board_hash,
            seen,
            captures,
            max_moves,
            resigned,
            setup_entry,
            last_move,
            previous_move,
            empties,
            empty_at,
        } = dst;
        *n = self.n;
        *stride = self.stride;
        *rules = self.rules;
        color.clone_from(&self.color);
        next.clone_from(&self.next);
        head.clone_from(&self.head);
        plibs.clone_from(&self.plibs);
        lsum.clone_from(&self.lsum);
        lsum2.clone_from(&self.lsum2);
        *to_move = self.to_move;
        *ko_point = self.ko_point;
        *passes = self.passes;
        *ply = self.ply;
        *board_hash = self.board_hash;
        seen.clear();
        *captures = self.captures;
        *max_moves = self.max_moves;
        *resigned = self.resigned;
        *setup_entry = self.setup_entry;
        *last_move = self.last_move;
        *previous_move = self.previous_move;
        empties.clone_from(&self.empties);
        empty_at.clone_from(&self.empty_at);
    }

    fn can_run(&self, p: usize, budget: &mut u32) -> bool {
        if *budget == 0 {
            return true;
        }
        *budget -= 1;
        let me = self.color[p];
        let opp = BLACK + WHITE - me;
        // capturing an attacker stone next to the chain counts as getting out
        let mut s = p;
        loop {
            for r in self.neighbours(s) {
                if self.color[r] == opp && self.liberties(r) == 1 {
                    return true;
                }
            }
            s = self.next[s] as usize;
            if s == p {
                break;
            }
        }
        let l = self.single_liberty(p);
        if self.try_place(l, me).is_none() {
            return false;
        }
        let mut g = scratch(self);
        g.play(g.point_action(l));
        let mut libs = [0usize; 4];
        let free = match g.chain_liberties(p, 3, &mut libs) {
            0 | 1 => false,
            2 => libs[..2].iter().all(|&a| !g.atari_catches(p, a, budget)),
            _ => true,
        };
        release(g);
        free
    }

    /// Whether the attacker, to move, catches the chain at `p` (two liberties) by an
    /// atari at its liberty `a`.
    fn atari_catches(&self, p: usize, a: usize, budget: &mut u32) -> bool {
        let me = Self::colour_of(self.to_move);
        if self.try_place(a, me).is_none() {
            return false;
        }
        let mut g = scratch(self);
        g.play(g.point_action(a));
        let caught = g.color[p] != EMPTY && g.liberties(p) == 1 && !g.can_run(p, budget);
        release(g);
        caught
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::go::{stones_from_rows, GoRules};
    use crate::{Game, Go, Player};

    fn board(rows: &[&str], to_move: Player) -> Go {
        let g = Go::from_stones(rows.len(), GoRules::default(), &stones_from_rows(rows));
        let mut g = g.unwrap();
        g.set_to_move(to_move);
        g
    }

    fn point(g: &Go, m: &str) -> usize {
        g.action_point(g.parse_move(m).unwrap())
    }

    /// The ladder every test starts from: White's C7 in atari (liberty C6), Black's
    /// D6 below to its right. Running at C6 leaves two liberties (B6, C5); Black's C5
    /// drives it left and the first column catches it.
    pub(crate) const LADDER: [&str; 9] = [
        ".........",
        "..X......",
        ".XOX.....",
        "...X.....",
        ".........",
        ".........",
        ".........",
        ".........",
        ".........",
    ];

    /// The ladder catches; a White stone at A7 breaks it (once White reaches B6, Black's
    /// B7 is in atari and White captures it).
    #[test]
    fn a_ladder_catches_and_a_breaker_frees() {
        let g = board(&LADDER, Player::Second);
        assert!(g.is_caught(point(&g, "C7")));
        let mut broken = LADDER;
        broken[2] = "OXOX.....";
        let g = board(&broken, Player::Second);
        assert!(!g.is_caught(point(&g, "C7")));
    }

    /// A chain in atari that can capture an attacker stone in atari is not caught, nor
    /// one whose extension reaches three liberties.
    #[test]
    fn a_capture_or_open_space_is_an_escape() {
        // Black's B7 is itself in atari (liberty B6): White captures it
        let mut rows = LADDER;
        rows[1] = "OOX......";
        rows[2] = "OXOX.....";
        let g = board(&rows, Player::Second);
        assert!(!g.is_caught(point(&g, "C7")));
        // White E5 in atari (liberty E4), nothing below it: three liberties there
        let g = board(
            &[
                ".........",
                ".........",
                ".........",
                "....X....",
                "...XOX...",
                ".........",
                ".........",
                ".........",
                ".........",
            ],
            Player::Second,
        );
        assert!(!g.is_caught(point(&g, "E5")));
    }

    /// Black's atari at D7 starts the working ladder on White's C7 (two liberties);
    /// with White's A7 on the board the same atari lets White out.
    #[test]
    fn a_ladder_atari_is_recognised() {
        let mut rows = LADDER;
        rows[2] = ".XO......";
        let g = board(&rows, Player::First);
        assert!(g.ladder_atari(point(&g, "D7")));
        assert!(!g.ladder_atari(point(&g, "H2")), "no chain next to it");
        rows[2] = "OXO......";
        let g = board(&rows, Player::First);
        assert!(!g.ladder_atari(point(&g, "D7")));
    }
}
