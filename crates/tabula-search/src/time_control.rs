//! Time controls: the clock as GTP describes it (`time_settings`, `time_left`) and how
//! long to think on the next move.

use std::time::Duration;

use tabula_core::Player;

/// Why a time setting was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct TimeError(String);

/// Main time, byo-yomi time and byo-yomi stones (Canadian byo-yomi, as in GTP).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeSettings {
    /// Main time in seconds.
    pub main: f64,
    /// Byo-yomi period in seconds (0: none).
    pub byo_yomi: f64,
    /// Stones to play in each byo-yomi period (0 with no byo-yomi).
    pub stones: u32,
}

/// The clock of both players and the engine's default pace.
#[derive(Clone, Debug, PartialEq)]
pub struct TimeControl {
    /// Seconds per move when no time settings are known.
    move_time: f64,
    settings: Option<TimeSettings>,
    /// Seconds and byo-yomi stones left, per colour, as last reported.
    left: [Option<(f64, u32)>; 2],
}

fn seconds(what: &str, v: f64) -> Result<f64, TimeError> {
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(TimeError(format!(
            "{what} must be a finite number of seconds >= 0 (got {v})"
        )))
    }
}

impl TimeControl {
    /// Longest thought on one move, whatever the clock says.
    pub const MAX_MOVE: f64 = 60.0;
    /// Shortest thought on one move.
    pub const MIN_MOVE: f64 = 0.01;

    /// A clock with no settings yet, thinking `move_time` seconds per move.
    pub fn new(move_time: f64) -> Result<TimeControl, TimeError> {
        let move_time = seconds("the time per move", move_time)?;
        if move_time == 0.0 {
            return Err(TimeError("the time per move must be positive".into()));
        }
        Ok(TimeControl {
            move_time,
            settings: None,
            left: [None, None],
        })
    }

    /// GTP `time_settings`: resets both clocks.
    pub fn set_settings(&mut self, main: f64, byo_yomi: f64, stones: u32) -> Result<(), TimeError> {
        let settings = TimeSettings {
            main: seconds("main time", main)?,
            byo_yomi: seconds("byo-yomi time", byo_yomi)?,
            stones,
        };
        self.settings = Some(settings);
        self.left = [None, None];
        Ok(())
    }

    /// GTP `time_left`: `player` has `left` seconds, and `stones` byo-yomi stones to play
    /// in them (0: main time).
    pub fn set_left(&mut self, player: Player, left: f64, stones: u32) -> Result<(), TimeError> {
        self.left[player.index()] = Some((seconds("time left", left)?, stones));
        Ok(())
    }

    /// The settings, if given.
    pub fn settings(&self) -> Option<TimeSettings> {
        self.settings
    }

    /// How long `player` should think with `empty_points` empty points on the board: a
    /// share of the main time sized to the moves that remain (about half the empty
    /// points plus a margin), or 80% of a byo-yomi stone's share.
    pub fn budget(&self, player: Player, empty_points: usize) -> Duration {
        let moves_left = empty_points as f64 / 2.0 + 10.0;
        let secs = match (self.left[player.index()], self.settings) {
            (Some((left, stones)), _) if stones > 0 => left / f64::from(stones) * 0.8,
            (Some((left, _)), _) => left / moves_left,
            (None, Some(s)) if s.main > 0.0 => s.main / moves_left,
            (None, Some(s)) if s.byo_yomi > 0.0 => s.byo_yomi / f64::from(s.stones.max(1)) * 0.8,
            _ => self.move_time,
        };
        Duration::from_secs_f64(secs.clamp(Self::MIN_MOVE, Self::MAX_MOVE))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets() {
        let mut t = TimeControl::new(1.5).unwrap();
        assert_eq!(t.budget(Player::First, 81), Duration::from_secs_f64(1.5));
        t.set_settings(100.0, 0.0, 0).unwrap();
        // 81 empty points: 50.5 moves to go
        let b = t.budget(Player::First, 81).as_secs_f64();
        assert!((b - 100.0 / 50.5).abs() < 1e-9, "{b}");
        t.set_left(Player::Second, 10.0, 5).unwrap();
        assert!((t.budget(Player::Second, 81).as_secs_f64() - 1.6).abs() < 1e-9);
        // the other colour still plays on main time
        assert!((t.budget(Player::First, 81).as_secs_f64() - 100.0 / 50.5).abs() < 1e-9);
        t.set_left(Player::First, 0.0, 0).unwrap();
        assert_eq!(
            t.budget(Player::First, 81).as_secs_f64(),
            TimeControl::MIN_MOVE
        );
        t.set_settings(0.0, 30.0, 10).unwrap();
        assert!((t.budget(Player::First, 3).as_secs_f64() - 2.4).abs() < 1e-9);
        t.set_settings(1e9, 0.0, 0).unwrap();
        assert_eq!(
            t.budget(Player::First, 0).as_secs_f64(),
            TimeControl::MAX_MOVE
        );
    }

    #[test]
    fn nonsense_is_refused_and_changes_nothing() {
        assert!(TimeControl::new(f64::NAN).is_err());
        assert!(TimeControl::new(-1.0).is_err());
        assert!(TimeControl::new(0.0).is_err());
        let mut t = TimeControl::new(1.0).unwrap();
        let before = t.clone();
        assert!(t.set_settings(10.0, -5.0, 0).is_err());
        assert!(t.set_settings(f64::INFINITY, 0.0, 0).is_err());
        assert!(t.set_left(Player::First, f64::NAN, 0).is_err());
        assert_eq!(t, before);
    }
}
