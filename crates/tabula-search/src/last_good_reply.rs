//! Last good reply with forgetting (LGRF-1, Baier and Drake 2010): a playout policy
//! that adapts during a search. After every playout, each move of the winner is
//! stored as *the* reply to the move before it; each move of the loser that is the
//! stored reply to its predecessor is forgotten. Playouts then try the stored reply to
//! the last move before their usual policy, so the answers that won local fights in
//! this search's earlier playouts are played again in later ones.
//!
//! The table is shared by every thread of a search (relaxed atomics: a lost or torn
//! update only costs a reply, never correctness) and kept from move to move, since
//! forgetting clears replies that stop winning.

use std::sync::atomic::{AtomicU32, Ordering};

use tabula_core::{Outcome, Player};

/// The reply table: for each player and each previous action, one action (or none).
#[derive(Debug)]
pub struct LastGoodReply {
    actions: usize,
    /// `action + 1` of the reply, 0 for none; index `player * actions + previous`.
    replies: Vec<AtomicU32>,
}

impl LastGoodReply {
    /// An empty table for a game of `actions` actions.
    pub fn new(actions: usize) -> Self {
        LastGoodReply {
            actions,
            replies: (0..2 * actions).map(|_| AtomicU32::new(0)).collect(),
        }
    }

    /// The number of actions the table was made for.
    pub fn actions(&self) -> usize {
        self.actions
    }

    fn slot(&self, player: Player, previous: usize) -> Option<&AtomicU32> {
        (previous < self.actions).then(|| &self.replies[player.index() * self.actions + previous])
    }

    /// `player`'s stored reply to `previous`, if any.
    pub fn reply(&self, player: Player, previous: usize) -> Option<usize> {
        match self.slot(player, previous)?.load(Ordering::Relaxed) {
            0 => None,
            a => Some(a as usize - 1),
        }
    }

    /// Learns from a playout: `before` (the action that led to its first position, if
    /// any), then `actions` in order, the first by `first`, the players alternating.
    /// A draw or an unfinished playout teaches nothing.
    pub fn learn(
        &self,
        before: Option<usize>,
        first: Player,
        actions: impl IntoIterator<Item = usize>,
        outcome: Option<Outcome>,
    ) {
        let Some(Outcome::Win(winner)) = outcome else {
            return;
        };
        let mut previous = before;
        let mut mover = first;
        for a in actions {
            if let Some(slot) = previous.and_then(|p| self.slot(mover, p)) {
                let code = a as u32 + 1;
                if mover == winner {
                    slot.store(code, Ordering::Relaxed);
                } else {
                    // forget a reply that just lost (if it is still the stored one)
                    let _ = slot.compare_exchange(code, 0, Ordering::Relaxed, Ordering::Relaxed);
                }
            }
            previous = Some(a);
            mover = mover.other();
        }
    }

    /// Forgets every reply (a new game).
    pub fn clear(&self) {
        for r in &self.replies {
            r.store(0, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_winner_replies_are_stored_and_the_loser_ones_forgotten() {
        let t = LastGoodReply::new(10);
        // First plays 1, Second 2, First 3; First wins
        t.learn(
            Some(0),
            Player::First,
            [1, 2, 3],
            Some(Outcome::Win(Player::First)),
        );
        assert_eq!(t.reply(Player::First, 0), Some(1));
        assert_eq!(t.reply(Player::First, 2), Some(3));
        assert_eq!(
            t.reply(Player::Second, 1),
            None,
            "the loser's reply is not stored"
        );
        // Second wins a playout with the same 2 after 1: stored; then First's
        // 3 after 2 loses and is forgotten, its 1 after 0 too
        t.learn(
            Some(0),
            Player::First,
            [1, 2, 3],
            Some(Outcome::Win(Player::Second)),
        );
        assert_eq!(t.reply(Player::Second, 1), Some(2));
        assert_eq!(t.reply(Player::First, 2), None);
        assert_eq!(t.reply(Player::First, 0), None);
    }

    #[test]
    fn a_losing_move_forgets_only_its_own_reply() {
        let t = LastGoodReply::new(10);
        t.learn(
            None,
            Player::Second,
            [4, 5],
            Some(Outcome::Win(Player::First)),
        );
        assert_eq!(t.reply(Player::First, 4), Some(5));
        // First plays 6 after 4 and loses: the stored 5 stays
        t.learn(
            None,
            Player::Second,
            [4, 6],
            Some(Outcome::Win(Player::Second)),
        );
        assert_eq!(t.reply(Player::First, 4), Some(5));
    }

    #[test]
    fn draws_and_out_of_range_actions_teach_nothing() {
        let t = LastGoodReply::new(3);
        t.learn(Some(0), Player::First, [1, 2], Some(Outcome::Draw));
        t.learn(Some(0), Player::First, [1, 2], None);
        t.learn(
            Some(7),
            Player::First,
            [1],
            Some(Outcome::Win(Player::First)),
        );
        assert!((0..3).all(|a| t.reply(Player::First, a).is_none()));
        assert!((0..3).all(|a| t.reply(Player::Second, a).is_none()));
        assert_eq!(t.reply(Player::First, 99), None);
        t.learn(
            Some(0),
            Player::First,
            [1],
            Some(Outcome::Win(Player::First)),
        );
        t.clear();
        assert_eq!(t.reply(Player::First, 0), None);
    }
}
