//! The catalogue of games by name, so that front ends can offer every game without
//! naming any: they hand a [`GameVisitor`] to [`visit`], which builds the game a
//! specification names and calls the visitor with its concrete type.
//!
//! A specification is `name` or `name:options`, e.g. `connect4` or `connect4:6x5`.
//! Each entry of [`GAMES`] builds its game into [`Built`], the one closed list of game
//! types, and [`Built::accept`] is the one place that turns it back into a type.

use tabula_core::connect4::{ConnectFour, Geometry};
use tabula_core::{GameError, Go, GoRules, MiniGo, TicTacToe};

use crate::Capabilities;

/// Something front ends do with a game whatever its type.
pub trait GameVisitor {
    /// What the visit returns.
    type Output;
    /// Called with the freshly built game.
    fn visit<G: Capabilities>(self, game: G) -> Self::Output;
}

/// A game built from a specification, before it is handed to a visitor.
pub enum Built {
    /// Tic-tac-toe.
    TicTacToe(TicTacToe),
    /// Connect Four on some board.
    ConnectFour(ConnectFour),
    /// Go (any size); boxed, it is far larger than the others.
    Go(Box<Go>),
    /// Seed 000's mini-go.
    MiniGo(MiniGo),
}

impl Built {
    /// Hands the game to `visitor` with its concrete type.
    pub fn accept<V: GameVisitor>(self, visitor: V) -> V::Output {
        match self {
            Built::TicTacToe(g) => visitor.visit(g),
            Built::ConnectFour(g) => visitor.visit(g),
            Built::Go(g) => visitor.visit(*g),
            Built::MiniGo(g) => visitor.visit(g),
        }
    }
}

/// One line of the catalogue.
pub struct GameInfo {
    /// The name used on the command line.
    pub name: &'static str,
    /// Other accepted names.
    pub aliases: &'static [&'static str],
    /// What the options after `:` mean.
    pub options: &'static str,
    /// Specifications a menu offers (e.g. `go:9`), the plain name first.
    pub presets: &'static [&'static str],
    /// Builds the game from the options after `:` (`None`: no options given).
    pub build: fn(Option<&str>) -> Result<Built, GameError>,
}

/// Every game Tabula knows.
pub const GAMES: &[GameInfo] = &[
    GameInfo {
        name: "tictactoe",
        aliases: &["ttt"],
        options: "none",
        presets: &["tictactoe"],
        build: |o| no_options("tictactoe", o).map(|_| Built::TicTacToe(TicTacToe::new())),
    },
    GameInfo {
        name: "connect4",
        aliases: &["c4", "connect-four"],
        options: "WIDTHxHEIGHT, default 7x6; width*(height+1) <= 64",
        presets: &["connect4", "connect4:6x5", "connect4:8x7"],
        build: |o| {
            let geo = match o {
                None => Geometry::STANDARD,
                Some(o) => {
                    let (w, h) = parse_size(o)?;
                    Geometry::new(w, h)
                        .map_err(|e| GameError::BadSpec(format!("connect4:{o}: {e}")))?
                }
            };
            Ok(Built::ConnectFour(ConnectFour::with_geometry(geo)))
        },
    },
    GameInfo {
        name: "go",
        aliases: &["baduk", "weiqi"],
        options: "board size 2-19 (default 7), then optionally komi, e.g. go:9 or go:7,komi=9; \
                  area scoring, komi 7.5, positional superko",
        presets: &["go:7", "go:9", "go:13", "go:19"],
        build: |o| {
            let mut parts = o.unwrap_or("").split(',');
            let size_text = parts.next().unwrap_or("").trim();
            let bad = || {
                GameError::BadSpec(format!(
                    "go:{}: expected a board size and options, e.g. go:9 or go:7,komi=9",
                    o.unwrap_or("")
                ))
            };
            let size = match size_text {
                "" => 7,
                // `go:9x9` too, so that a width and a height can name a Go board
                t => match parse_size(t) {
                    Ok((w, h)) if w == h => w,
                    Ok(_) => {
                        return Err(GameError::BadSpec(format!("go:{t}: Go boards are square")))
                    }
                    Err(_) => t.parse().map_err(|_| bad())?,
                },
            };
            let mut rules = GoRules::default();
            for part in parts {
                match part.trim().split_once('=') {
                    Some(("komi", k)) => {
                        rules.komi = k
                            .trim()
                            .parse()
                            .ok()
                            .filter(|k: &f32| k.is_finite() && k.abs() <= 150.0)
                            .ok_or_else(bad)?
                    }
                    _ => return Err(bad()),
                }
            }
            Ok(Built::Go(Box::new(Go::new(size, rules)?)))
        },
    },
    GameInfo {
        name: "mini-go",
        aliases: &["minigo"],
        options: "none: seed 000's 7x7 toy rules (no captures, 44 moves, more stones wins)",
        presets: &["mini-go"],
        build: |o| no_options("mini-go", o).map(|_| Built::MiniGo(MiniGo::new())),
    },
];

fn no_options(name: &str, options: Option<&str>) -> Result<(), GameError> {
    match options {
        None => Ok(()),
        Some(o) => Err(GameError::BadSpec(format!(
            "{name} takes no options (got {o:?})"
        ))),
    }
}

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

/// Builds the game `spec` names.
pub fn build(spec: &str) -> Result<Built, GameError> {
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
    (info.build)(options)
}

/// Builds the game `spec` names and hands it to `visitor`.
pub fn visit<V: GameVisitor>(spec: &str, visitor: V) -> Result<V::Output, GameError> {
    Ok(build(spec)?.accept(visitor))
}

struct Name;

impl GameVisitor for Name {
    type Output = String;
    fn visit<G: Capabilities>(self, game: G) -> String {
        game.name()
    }
}

/// The canonical name of the game `spec` names (e.g. `go` → `go:7`).
pub fn canonical_name(spec: &str) -> Result<String, GameError> {
    visit(spec, Name)
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
        assert_eq!(visit("go:9x9", Name).unwrap(), "go:9");
        assert_eq!(visit("go:7,komi=9", Name).unwrap(), "go:7");
        assert_eq!(visit("mini-go", Name).unwrap(), "mini-go");
        for bad in [
            "chess",
            "connect4:9x9",
            "connect4:7",
            "connect4:ax6",
            "tictactoe:4x4",
            "mini-go:9",
            "go:abc",
            "go:40",
            "go:9x7",
            "go:9,komi=nan",
            "go:9,handicap=2",
            "",
        ] {
            assert!(visit(bad, Name).is_err(), "{bad}");
        }
    }

    /// What each game offers, asked through the trait (as front ends ask).
    struct Offers;

    impl GameVisitor for Offers {
        type Output = (bool, bool, bool);
        fn visit<G: Capabilities>(self, game: G) -> (bool, bool, bool) {
            (
                game.perfect_agent(1).is_some(),
                game.exact_solver(1, false).is_some(),
                game.exhaustive_search_is_practical(),
            )
        }
    }

    #[test]
    fn capabilities_by_game() {
        assert_eq!(visit("tictactoe", Offers).unwrap(), (true, false, true));
        assert_eq!(visit("connect4", Offers).unwrap(), (true, true, false));
        assert_eq!(visit("connect4:4x4", Offers).unwrap(), (true, true, true));
        assert_eq!(visit("go:9", Offers).unwrap(), (false, false, false));
        assert_eq!(visit("mini-go", Offers).unwrap(), (false, false, false));
    }
}
