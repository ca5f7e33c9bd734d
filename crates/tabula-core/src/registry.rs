//! The catalogue of games by name, so that front ends can offer every game without
//! naming any: they hand a [`GameVisitor`] to [`visit`], which builds the game a
//! specification names and calls the visitor with its concrete type.
//!
//! A specification is `name` or `name:options`, e.g. `connect4` or `connect4:6x5`.

use crate::connect4::{ConnectFour, Geometry};
use crate::game::{Game, GameError};
use crate::go::{Go, GoRules};
use crate::tictactoe::TicTacToe;

/// Something front ends do with a game whatever its type.
pub trait GameVisitor {
    /// What the visit returns.
    type Output;
    /// Called with the freshly built game.
    fn visit<G: Game>(self, game: G) -> Self::Output;
}

/// One line of the catalogue.
pub struct GameInfo {
    /// The name used on the command line.
    pub name: &'static str,
    /// Other accepted names.
    pub aliases: &'static [&'static str],
    /// What the options after `:` mean.
    pub options: &'static str,
}

/// Every game Tabula knows.
pub const GAMES: &[GameInfo] = &[
    GameInfo {
        name: "tictactoe",
        aliases: &["ttt"],
        options: "none",
    },
    GameInfo {
        name: "connect4",
        aliases: &["c4", "connect-four"],
        options: "WIDTHxHEIGHT, default 7x6; width*(height+1) <= 64",
    },
    GameInfo {
        name: "go",
        aliases: &["baduk", "weiqi"],
        options:
            "board size 2-19 (default 7), e.g. go:9; area scoring, komi 7.5, positional superko",
    },
    GameInfo {
        name: "mini-go",
        aliases: &["minigo"],
        options: "none: seed 000's 7x7 toy rules (no captures, 44 moves, more stones wins)",
    },
];

/// The names of all games, for help texts and error messages.
pub fn names() -> String {
    GAMES.iter().map(|g| g.name).collect::<Vec<_>>().join(", ")
}

/// Reads `WxH` (e.g. `6x5`).
pub fn parse_size(text: &str) -> Result<(usize, usize), GameError> {
    let bad = || {
        GameError::BadSpec(format!(
            "bad board size {text:?}: expected WIDTHxHEIGHT, e.g. 7x6"
        ))
    };
    let (w, h) = text.split_once(['x', 'X']).ok_or_else(bad)?;
    Ok((
        w.trim().parse().map_err(|_| bad())?,
        h.trim().parse().map_err(|_| bad())?,
    ))
}

struct Name;

impl GameVisitor for Name {
    type Output = String;
    fn visit<G: Game>(self, game: G) -> String {
        game.name()
    }
}

/// The canonical name of the game `spec` names (e.g. `go` → `go:7`).
pub fn canonical_name(spec: &str) -> Result<String, GameError> {
    visit(spec, Name)
}

/// Builds the game `spec` names and hands it to `visitor`.
pub fn visit<V: GameVisitor>(spec: &str, visitor: V) -> Result<V::Output, GameError> {
    let (name, options) = match spec.split_once(':') {
        Some((n, o)) => (n.trim(), Some(o.trim())),
        None => (spec.trim(), None),
    };
    let info = GAMES
        .iter()
        .find(|g| {
            g.name.eq_ignore_ascii_case(name)
                || g.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
        })
        .ok_or_else(|| {
            GameError::BadSpec(format!("unknown game {name:?}; known games: {}", names()))
        })?;
    let no_options = || match options {
        None => Ok(()),
        Some(o) => Err(GameError::BadSpec(format!(
            "{} takes no options (got {o:?})",
            info.name
        ))),
    };
    match info.name {
        "tictactoe" => {
            no_options()?;
            Ok(visitor.visit(TicTacToe::new()))
        }
        "connect4" => {
            let geo = match options {
                None => Geometry::STANDARD,
                Some(o) => {
                    let (w, h) = parse_size(o)?;
                    Geometry::new(w, h)
                        .map_err(|e| GameError::BadSpec(format!("connect4:{o}: {e}")))?
                }
            };
            Ok(visitor.visit(ConnectFour::with_geometry(geo)))
        }
        "go" => {
            let size = match options {
                None => 7,
                Some(o) => o.parse().map_err(|_| {
                    GameError::BadSpec(format!("go:{o}: expected a board size, e.g. go:9"))
                })?,
            };
            Ok(visitor.visit(Go::new(size, GoRules::default())?))
        }
        "mini-go" => {
            no_options()?;
            Ok(visitor.visit(Go::new(7, GoRules::mini_go())?))
        }
        other => Err(GameError::BadSpec(format!(
            "game {other} is listed but cannot be built"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs() {
        assert_eq!(visit("tictactoe", Name).unwrap(), "tictactoe");
        assert_eq!(visit("TTT", Name).unwrap(), "tictactoe");
        assert_eq!(visit("connect4", Name).unwrap(), "connect4");
        assert_eq!(visit("c4:6x5", Name).unwrap(), "connect4:6x5");
        assert_eq!(visit("connect4:7x6", Name).unwrap(), "connect4");
        assert_eq!(visit("go", Name).unwrap(), "go:7");
        assert_eq!(visit("go:19", Name).unwrap(), "go:19");
        assert_eq!(visit("mini-go", Name).unwrap(), "mini-go");
        for bad in [
            "chess",
            "connect4:9x9",
            "connect4:7",
            "connect4:ax6",
            "tictactoe:4x4",
            "",
        ] {
            assert!(visit(bad, Name).is_err(), "{bad}");
        }
    }
}
