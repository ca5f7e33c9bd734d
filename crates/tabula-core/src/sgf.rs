//! SGF (FF[4]) records of Go games: read and write the main line.
//!
//! Read: SZ, KM, RU, HA, setup (AB/AW/AE stones and PL, on the root and between
//! moves, applied where they stand), B/W moves (`[]` or `[tt]` is a pass on boards up
//! to 19), RE, C comments (on the root and on moves), PB/PW names. Other properties are
//! kept out of the way; variations after the main line are skipped. The parser keeps
//! its own stack, so nesting depth is bounded by memory, not by the thread's stack. A
//! malformed file is refused with the line and column of the problem.

use std::fmt::Write as _;

use crate::game::{Game, GameError, Player};
use crate::go::{Go, GoRules, Ko};

/// A point as (row, col), row 0 at the top (SGF's own orientation).
pub type Point = (usize, usize);

/// One move of the record.
#[derive(Clone, Debug, PartialEq)]
pub struct SgfMove {
    /// Who played.
    pub player: Player,
    /// Where; `None` is a pass.
    pub point: Option<Point>,
    /// The move's comment, if any.
    pub comment: Option<String>,
}

/// A game record.
#[derive(Clone, Debug, PartialEq)]
pub struct SgfGame {
    /// Board side.
    pub size: usize,
    /// Komi.
    pub komi: f32,
    /// RU as written (e.g. `Chinese`, `Tromp-Taylor`).
    pub rules: Option<String>,
    /// HA.
    pub handicap: usize,
    /// AB: Black setup stones.
    pub black_setup: Vec<Point>,
    /// AW: White setup stones.
    pub white_setup: Vec<Point>,
    /// PL on the root: who moves first after the setup (`None`: as the moves say,
    /// or White after a handicap).
    pub to_move: Option<Player>,
    /// The moves of the main line.
    pub moves: Vec<SgfMove>,
    /// Setup nodes after the root, in order, each placed between two moves.
    pub later_setup: Vec<SgfSetup>,
    /// RE, e.g. `B+3.5`, `W+R`.
    pub result: Option<String>,
    /// The root comment.
    pub comment: Option<String>,
    /// PB.
    pub black_name: Option<String>,
    /// PW.
    pub white_name: Option<String>,
}

impl Default for SgfGame {
    fn default() -> Self {
        SgfGame {
            size: 19,
            komi: 0.0,
            rules: None,
            handicap: 0,
            black_setup: Vec::new(),
            white_setup: Vec::new(),
            to_move: None,
            moves: Vec::new(),
            later_setup: Vec::new(),
            result: None,
            comment: None,
            black_name: None,
            white_name: None,
        }
    }
}

/// Setup properties of a node after the root: they change the board in the middle of
/// the record (SGF FF[4]: AB and AW overwrite a point, AE empties it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SgfSetup {
    /// How many moves of the main line come before this node.
    pub after_moves: usize,
    /// AB.
    pub black: Vec<Point>,
    /// AW.
    pub white: Vec<Point>,
    /// AE.
    pub empty: Vec<Point>,
    /// PL: who moves next.
    pub to_move: Option<Player>,
}

impl SgfSetup {
    fn is_empty(&self) -> bool {
        self.black.is_empty()
            && self.white.is_empty()
            && self.empty.is_empty()
            && self.to_move.is_none()
    }

    fn apply(&self, g: &mut Go) -> Result<(), GameError> {
        for (stone, points) in [
            (None, &self.empty),
            (Some(Player::First), &self.black),
            (Some(Player::Second), &self.white),
        ] {
            for &(r, c) in points {
                g.set_setup_point(r, c, stone)?;
            }
        }
        if let Some(p) = self.to_move {
            g.set_to_move(p);
        }
        Ok(())
    }

    fn write(&self, s: &mut String) {
        for (tag, stones) in [
            ("AB", &self.black),
            ("AW", &self.white),
            ("AE", &self.empty),
        ] {
            if !stones.is_empty() {
                s.push_str(tag);
                for &pt in stones {
                    let _ = write!(s, "[{}]", point_text(pt));
                }
            }
        }
        if let Some(p) = self.to_move {
            s.push_str(if p == Player::First { "PL[B]" } else { "PL[W]" });
        }
    }
}

/// A malformed SGF file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("SGF line {line}, column {column}: {reason}")]
pub struct SgfError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong.
    pub reason: String,
}

struct Parser<'a> {
    text: &'a [u8],
    pos: usize,
}

type Node = Vec<(String, Vec<String>, usize)>; // (identifier, values, offset)

impl<'a> Parser<'a> {
    fn error_at(&self, offset: usize, reason: impl Into<String>) -> SgfError {
        let before = &self.text[..offset.min(self.text.len())];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
        SgfError {
            line,
            column,
            reason: reason.into(),
        }
    }

    fn skip_ws(&mut self) {
        while self.pos < self.text.len() && self.text[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.text.get(self.pos).copied()
    }

    fn expect(&mut self, b: u8) -> Result<(), SgfError> {
        match self.peek() {
            Some(c) if c == b => {
                self.pos += 1;
                Ok(())
            }
            Some(c) => Err(self.error_at(
                self.pos,
                format!("expected '{}', found '{}'", b as char, c as char),
            )),
            None => Err(self.error_at(
                self.pos,
                format!("expected '{}', found the end of the file", b as char),
            )),
        }
    }

    fn value(&mut self) -> Result<String, SgfError> {
        let start = self.pos;
        self.expect(b'[')?;
        let mut out = Vec::new();
        loop {
            match self.text.get(self.pos) {
                None => return Err(self.error_at(start, "property value never closed with ']'")),
                Some(b']') => {
                    self.pos += 1;
                    break;
                }
                Some(b'\\') => {
                    self.pos += 1;
                    match self.text.get(self.pos) {
                        Some(b'\n') => {} // soft line break
                        Some(&c) => out.push(c),
                        None => {
                            return Err(self.error_at(self.pos, "escape at the end of the file"))
                        }
                    }
                    self.pos += 1;
                }
                Some(&c) => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
        String::from_utf8(out).map_err(|_| self.error_at(start, "value is not UTF-8"))
    }

    fn node(&mut self) -> Result<Node, SgfError> {
        self.expect(b';')?;
        let mut props = Vec::new();
        while let Some(c) = self.peek() {
            if !c.is_ascii_uppercase() {
                if c.is_ascii_lowercase() {
                    return Err(self.error_at(self.pos, "property names are upper-case letters"));
                }
                break;
            }
            let start = self.pos;
            while self.pos < self.text.len() && self.text[self.pos].is_ascii_uppercase() {
                self.pos += 1;
            }
            let id = String::from_utf8_lossy(&self.text[start..self.pos]).into_owned();
            let mut values = Vec::new();
            while self.peek() == Some(b'[') {
                values.push(self.value()?);
            }
            if values.is_empty() {
                return Err(self.error_at(start, format!("property {id} has no value")));
            }
            props.push((id, values, start));
        }
        Ok(props)
    }

    /// Nodes up to the next variation or its end (at least one).
    fn sequence(&mut self, main: &mut Vec<Node>, on_main: bool) -> Result<(), SgfError> {
        let mut nodes = 0;
        while self.peek() == Some(b';') {
            let n = self.node()?;
            if on_main {
                main.push(n);
            }
            nodes += 1;
        }
        if nodes == 0 {
            return Err(self.error_at(self.pos, "a game tree needs at least one node ';'"));
        }
        Ok(())
    }

    /// A game tree: its main-line nodes (first variation at each fork). Iterative, with
    /// one small frame per open variation, so a deeply nested file cannot overflow the
    /// stack.
    fn tree(&mut self, main: &mut Vec<Node>) -> Result<(), SgfError> {
        struct Open {
            on_main: bool,
            children: usize,
        }
        self.expect(b'(')?;
        self.sequence(main, true)?;
        let mut open = vec![Open {
            on_main: true,
            children: 0,
        }];
        while let Some(top) = open.last_mut() {
            if self.peek() == Some(b'(') {
                self.pos += 1;
                let on_main = top.on_main && top.children == 0;
                top.children += 1;
                self.sequence(main, on_main)?;
                open.push(Open {
                    on_main,
                    children: 0,
                });
            } else {
                self.expect(b')')?;
                open.pop();
            }
        }
        Ok(())
    }
}

fn parse_point(v: &str, size: usize) -> Result<Option<Point>, String> {
    let b = v.as_bytes();
    if b.is_empty() || (v == "tt" && size <= 19) {
        return Ok(None);
    }
    if b.len() != 2 || !b[0].is_ascii_lowercase() || !b[1].is_ascii_lowercase() {
        return Err(format!("bad point {v:?}: expected two letters a-s"));
    }
    let (col, row) = ((b[0] - b'a') as usize, (b[1] - b'a') as usize);
    if col >= size || row >= size {
        return Err(format!("point {v:?} is off the {size}x{size} board"));
    }
    Ok(Some((row, col)))
}

fn point_text((row, col): Point) -> String {
    format!(
        "{}{}",
        (b'a' + col as u8) as char,
        (b'a' + row as u8) as char
    )
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace(']', "\\]")
}

impl SgfGame {
    /// Reads the first game of an SGF collection.
    pub fn parse(text: &str) -> Result<SgfGame, SgfError> {
        let mut p = Parser {
            text: text.as_bytes(),
            pos: 0,
        };
        let mut main = Vec::new();
        if p.peek().is_none() {
            return Err(p.error_at(0, "empty file"));
        }
        p.tree(&mut main)?;
        let mut game = SgfGame::default();
        for (i, node) in main.iter().enumerate() {
            // SZ first, so that points can be checked against it
            if let Some((_, v, at)) = node.iter().find(|(id, _, _)| id == "SZ") {
                if i != 0 {
                    return Err(p.error_at(*at, "SZ outside the root node"));
                }
                let size: usize = v[0]
                    .trim()
                    .parse()
                    .ok()
                    .filter(|s| (1..=19).contains(s))
                    .ok_or_else(|| p.error_at(*at, format!("board size {:?} is not 1-19", v[0])))?;
                game.size = size;
            }
            let mut move_here: Option<SgfMove> = None;
            let mut setup = SgfSetup {
                after_moves: game.moves.len(),
                ..SgfSetup::default()
            };
            for (id, values, at) in node {
                let at = *at;
                let bad = |r: String| p.error_at(at, r);
                match id.as_str() {
                    "GM" if values[0].trim() != "1" => {
                        return Err(bad(format!("GM[{}] is not Go", values[0])))
                    }
                    "KM" => {
                        game.komi = values[0]
                            .trim()
                            .parse()
                            .ok()
                            .filter(|k: &f32| k.is_finite())
                            .ok_or_else(|| bad(format!("komi {:?} is not a number", values[0])))?
                    }
                    "HA" => {
                        game.handicap = values[0]
                            .trim()
                            .parse()
                            .map_err(|_| bad(format!("handicap {:?} is not a number", values[0])))?
                    }
                    "RU" => game.rules = Some(values[0].clone()),
                    "RE" => game.result = Some(values[0].clone()),
                    "PB" => game.black_name = Some(values[0].clone()),
                    "PW" => game.white_name = Some(values[0].clone()),
                    "AB" | "AW" | "AE" => {
                        for v in values {
                            let pt = parse_point(v, game.size)
                                .map_err(bad)?
                                .ok_or_else(|| p.error_at(at, "a setup point cannot be a pass"))?;
                            if setup.black.contains(&pt)
                                || setup.white.contains(&pt)
                                || setup.empty.contains(&pt)
                            {
                                return Err(bad(format!(
                                    "point {v:?} is set up twice in one node"
                                )));
                            }
                            match id.as_str() {
                                "AB" => setup.black.push(pt),
                                "AW" => setup.white.push(pt),
                                _ => setup.empty.push(pt),
                            }
                        }
                    }
                    "PL" => {
                        setup.to_move = Some(match values[0].trim() {
                            "B" | "b" => Player::First,
                            "W" | "w" => Player::Second,
                            v => return Err(bad(format!("PL[{v}] is neither B nor W"))),
                        })
                    }
                    "B" | "W" => {
                        if move_here.is_some() {
                            return Err(bad("two moves in one node".into()));
                        }
                        let player = if id == "B" {
                            Player::First
                        } else {
                            Player::Second
                        };
                        move_here = Some(SgfMove {
                            player,
                            point: parse_point(&values[0], game.size).map_err(bad)?,
                            comment: None,
                        });
                    }
                    _ => {}
                }
            }
            if i == 0 {
                // the root's board is empty, so AE there changes nothing
                game.black_setup = setup.black;
                game.white_setup = setup.white;
                game.to_move = setup.to_move;
            } else if !setup.is_empty() {
                game.later_setup.push(setup);
            }
            let comment = node
                .iter()
                .find(|(id, _, _)| id == "C")
                .map(|(_, v, _)| v[0].clone());
            match move_here {
                Some(mut m) => {
                    m.comment = comment;
                    game.moves.push(m);
                }
                None if i == 0 => game.comment = comment,
                None => {}
            }
        }
        Ok(game)
    }

    /// Writes the record as FF[4].
    pub fn to_sgf(&self) -> String {
        let mut s = String::from("(;FF[4]GM[1]CA[UTF-8]AP[Tabula]");
        let _ = write!(s, "SZ[{}]KM[{}]", self.size, self.komi);
        if let Some(r) = &self.rules {
            let _ = write!(s, "RU[{}]", escape(r));
        }
        if self.handicap > 0 {
            let _ = write!(s, "HA[{}]", self.handicap);
        }
        for (tag, v) in [
            ("PB", &self.black_name),
            ("PW", &self.white_name),
            ("RE", &self.result),
            ("C", &self.comment),
        ] {
            if let Some(v) = v {
                let _ = write!(s, "{tag}[{}]", escape(v));
            }
        }
        SgfSetup {
            black: self.black_setup.clone(),
            white: self.white_setup.clone(),
            to_move: self.to_move,
            ..SgfSetup::default()
        }
        .write(&mut s);
        let mut setups = self.later_setup.iter().peekable();
        for (i, m) in self.moves.iter().enumerate() {
            while let Some(setup) = setups.next_if(|x| x.after_moves <= i) {
                s.push_str("\n;");
                setup.write(&mut s);
            }
            s.push(if i % 10 == 0 { '\n' } else { ' ' });
            let tag = if m.player == Player::First { 'B' } else { 'W' };
            let _ = write!(s, ";{tag}[{}]", m.point.map(point_text).unwrap_or_default());
            if let Some(c) = &m.comment {
                let _ = write!(s, "C[{}]", escape(c));
            }
        }
        for setup in setups {
            s.push_str("\n;");
            setup.write(&mut s);
        }
        s.push_str(")\n");
        s
    }

    /// Keeps the record up to (not including) move `moves + 1`, with the setup nodes
    /// that stand before it (GTP `loadsgf FILE N` loads up to move N - 1).
    pub fn truncate(&mut self, moves: usize) {
        self.moves.truncate(moves);
        self.later_setup.retain(|s| s.after_moves <= moves);
    }

    /// The rules the record names (positional superko, area scoring throughout;
    /// suicide only when RU says Tromp-Taylor or New Zealand).
    pub fn go_rules(&self) -> GoRules {
        let suicide = self.rules.as_deref().is_some_and(|r| {
            r.to_ascii_lowercase().contains("tromp") || r.eq_ignore_ascii_case("nz")
        });
        GoRules {
            komi: self.komi,
            ko: Ko::PositionalSuperko,
            suicide,
        }
    }

    /// Replays the record on a board; fails at the first illegal move, naming it.
    pub fn replay(&self) -> Result<Go, GameError> {
        self.replay_with(self.go_rules())
    }

    /// Replays the record under `rules`.
    pub fn replay_with(&self, rules: GoRules) -> Result<Go, GameError> {
        let mut g = Go::new(self.size, rules)?;
        for &(r, c) in &self.black_setup {
            g.place_setup(r, c, Player::First)?;
        }
        for &(r, c) in &self.white_setup {
            g.place_setup(r, c, Player::Second)?;
        }
        if let Some(p) = self.to_move {
            g.set_to_move(p);
        } else if !self.black_setup.is_empty() && self.white_setup.is_empty() && self.handicap > 0 {
            g.set_to_move(Player::Second);
        }
        let mut setups = self.later_setup.iter().peekable();
        for (i, m) in self.moves.iter().enumerate() {
            while let Some(setup) = setups.next_if(|s| s.after_moves <= i) {
                setup
                    .apply(&mut g)
                    .map_err(|e| GameError::Illegal(format!("setup before move {}: {e}", i + 1)))?;
            }
            // records may go on after two passes (a clean-up phase before counting)
            g.clear_passes();
            g.set_to_move(m.player);
            let action = match m.point {
                None => g.pass(),
                Some((r, c)) => (r * self.size + c) as u16,
            };
            g.try_play(action).map_err(|e| match e {
                GameError::Illegal(name) => GameError::Illegal(format!("{name} at move {}", i + 1)),
                other => GameError::Illegal(format!(
                    "{} at move {}: {other}",
                    g.format_move(action),
                    i + 1
                )),
            })?;
        }
        for setup in setups {
            setup
                .apply(&mut g)
                .map_err(|e| GameError::Illegal(format!("setup after the last move: {e}")))?;
        }
        Ok(g)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let game = SgfGame {
            size: 9,
            komi: 6.5,
            rules: Some("Chinese".into()),
            handicap: 2,
            black_setup: vec![(2, 6), (6, 2)],
            white_setup: vec![(4, 4)],
            to_move: Some(Player::Second),
            moves: vec![
                SgfMove {
                    player: Player::Second,
                    point: Some((2, 2)),
                    comment: Some("a [tricky] move\\".into()),
                },
                SgfMove {
                    player: Player::First,
                    point: None,
                    comment: None,
                },
                SgfMove {
                    player: Player::Second,
                    point: Some((8, 8)),
                    comment: None,
                },
            ],
            later_setup: vec![
                SgfSetup {
                    after_moves: 1,
                    black: vec![(0, 0)],
                    white: vec![(2, 6)],
                    empty: vec![(6, 2)],
                    to_move: None,
                },
                SgfSetup {
                    after_moves: 3,
                    empty: vec![(4, 4)],
                    to_move: Some(Player::First),
                    ..SgfSetup::default()
                },
            ],
            result: Some("W+2.5".into()),
            comment: Some("test".into()),
            black_name: Some("tabula".into()),
            white_name: Some("gnugo".into()),
        };
        let text = game.to_sgf();
        assert_eq!(SgfGame::parse(&text).unwrap(), game, "{text}");
        let g = game.replay().unwrap();
        assert_eq!(g.ply(), 3);
        // the later setup overwrote, emptied and added points where it stands
        assert_eq!(g.stone(0, 0), Some(Player::First));
        assert_eq!(g.stone(2, 6), Some(Player::Second));
        assert_eq!(g.stone(6, 2), None);
        assert_eq!(g.stone(4, 4), None, "emptied after the last move");
        assert_eq!(g.to_move(), Player::First, "PL after the last move");
    }

    #[test]
    fn setup_between_moves_applies_where_it_stands() {
        // AE frees a point that a later move takes; applied before move 1 (the old
        // reading) the file would be refused, since ee is empty then and B[ee] is
        // played on it before the AE.
        let text = "(;SZ[9];B[ee];W[dd];AE[ee];W[ee];B[cc])";
        let g = SgfGame::parse(text).unwrap();
        assert_eq!(g.later_setup.len(), 1);
        assert_eq!(g.later_setup[0].after_moves, 2);
        let board = g.replay().unwrap();
        assert_eq!(board.stone(4, 4), Some(Player::Second));
        // a stone removed from the middle of a chain leaves two working chains
        let split = SgfGame::parse("(;SZ[5]AB[aa][ba][ca];AE[ba];W[ab];W[ba];W[da])").unwrap();
        let board = split.replay().unwrap();
        assert_eq!(board.stone(0, 0), None, "aa alone, captured by ab and ba");
        assert_eq!(
            board.stone(0, 2),
            Some(Player::First),
            "ca still has a liberty"
        );
        // truncation keeps the setup standing before the kept moves
        let mut cut = g.clone();
        cut.truncate(2);
        assert_eq!(cut.later_setup.len(), 1);
        cut.truncate(1);
        assert!(cut.later_setup.is_empty());
    }

    #[test]
    fn deep_nesting_is_read_without_recursion() {
        let depth = 100_000;
        let text = format!("(;SZ[9]{}{})", "(;B[ee]".repeat(depth), ")".repeat(depth));
        let g = SgfGame::parse(&text).unwrap();
        assert_eq!(g.moves.len(), depth);
        let unclosed = format!("(;SZ[9]{}", "(;C[x]".repeat(depth));
        assert!(SgfGame::parse(&unclosed).is_err());
    }

    #[test]
    fn reads_real_world_features() {
        let text = "(;GM[1]FF[4]SZ[9]KM[7.5]RU[Tromp-Taylor]\n;B[ee]C[centre];W[tt](;B[dd])(;B[cc];W[aa]))";
        let g = SgfGame::parse(text).unwrap();
        assert_eq!(g.moves.len(), 3, "main line only");
        assert_eq!(g.moves[1].point, None, "tt is a pass");
        assert_eq!(g.moves[2].point, Some((3, 3)));
        assert_eq!(g.moves[0].comment.as_deref(), Some("centre"));
        assert!(g.go_rules().suicide);
        assert_eq!(g.replay().unwrap().ply(), 3);
        // moves after two passes (a clean-up phase) replay too
        let cleanup = SgfGame::parse("(;SZ[9];B[ee];W[];B[];W[dd];B[])").unwrap();
        let g = cleanup.replay().unwrap();
        assert_eq!(g.ply(), 5);
        assert_eq!(g.stone(3, 3), Some(Player::Second));
    }

    #[test]
    fn malformed_files_name_the_place() {
        let cases = [
            ("", "empty file"),
            ("(;SZ[9]", "expected ')'"),
            ("(;SZ[9];B[ee", "never closed"),
            ("(;SZ[30])", "not 1-19"),
            ("(;SZ[9];B[zz])", "off the 9x9 board"),
            ("(;SZ[9];B[e])", "bad point"),
            ("(;SZ[9]KM[x])", "komi"),
            ("(;GM[2])", "not Go"),
            ("(;SZ[9];B[ee]W[dd])", "two moves in one node"),
            ("(;SZ[9]\n;b[ee])", "line 2, column 2"),
            ("(;SZ[9];B)", "has no value"),
            ("(;SZ[9]AB[])", "cannot be a pass"),
            ("(;SZ[9]AB[aa]AW[aa])", "set up twice"),
            ("(;SZ[9];PL[X])", "neither B nor W"),
            ("(;SZ[9](;B[aa])", "expected ')'"),
            ("(;SZ[9](;B[aa]);W[bb])", "expected ')'"),
        ];
        for (text, want) in cases {
            let e = SgfGame::parse(text).unwrap_err().to_string();
            assert!(e.contains(want), "{text:?}: {e}");
        }
        // well-formed but illegal: playing on an occupied point
        let g = SgfGame::parse("(;SZ[9];B[ee];W[ee])").unwrap();
        let e = g.replay().unwrap_err().to_string();
        assert!(e.contains("move 2"), "{e}");
    }

    /// Fuzzing (see `scripts/fuzz.sh`): any text is read or refused without a panic;
    /// what is read replays or is refused, and writes back to the same record.
    mod fuzz {
        use super::*;
        use proptest::collection::vec;
        use proptest::prelude::*;

        fn token() -> impl Strategy<Value = String> {
            prop_oneof![
                Just("(".to_string()),
                Just(")".to_string()),
                Just(";".to_string()),
                Just("\n".to_string()),
                "(B|W|AB|AW|AE|PL|C|SZ|KM|HA|RU|GM|XY)",
                "\\[[a-u]{0,2}\\]",
                "\\[[0-9.e-]{0,5}\\]",
                "\\[[^\\]]{0,6}\\]",
                "(SZ\\[(1|2|5|9|19|20)\\]|KM\\[(6.5|nan|-1e9)\\]|RU\\[(Tromp-Taylor|Japanese)\\]|PL\\[[BWX]\\]|HA\\[[0-9]\\])",
                any::<char>().prop_map(String::from),
            ]
        }

        /// A plausible game: SZ, then nodes of moves and setup on the board.
        fn node(size: usize) -> impl Strategy<Value = String> {
            let point = (0..size + 1, 0..size + 1).prop_map(move |(c, r)| {
                if c == size {
                    String::new() // a pass (or an error for setup)
                } else {
                    point_text((r, c))
                }
            });
            (0u8..7, vec(point, 1..4)).prop_map(|(kind, pts)| {
                let tag = ["B", "W", "AB", "AW", "AE", "B", "W"][kind as usize];
                let values: String = if tag.len() == 1 {
                    format!("[{}]", pts[0])
                } else {
                    pts.iter().map(|p| format!("[{p}]")).collect()
                };
                format!(";{tag}{values}")
            })
        }

        fn check(text: &str) -> Result<(), TestCaseError> {
            let Ok(game) = SgfGame::parse(text) else {
                return Ok(());
            };
            let replayed = game.replay();
            let written = game.to_sgf();
            let again = SgfGame::parse(&written);
            prop_assert_eq!(again.as_ref().ok(), Some(&game), "{}", written);
            if let (Ok(a), Ok(b)) = (&replayed, again.map(|g| g.replay())) {
                prop_assert_eq!(a.to_string(), b.map(|b| b.to_string()).unwrap_or_default());
            }
            Ok(())
        }

        proptest! {
            #[test]
            fn fuzz_sgf_text(tokens in vec(token(), 0..80)) {
                check(&format!("(;{}", tokens.concat()))?;
                check(&tokens.concat())?;
            }

            #[test]
            fn fuzz_sgf_games(
                (size, nodes) in (1usize..=19).prop_flat_map(|n| (Just(n), vec(node(n), 0..60)))
            ) {
                check(&format!("(;SZ[{size}]RU[Tromp-Taylor]{})", nodes.concat()))?;
                check(&format!("(;SZ[{size}]{})", nodes.concat()))?;
            }
        }
    }
}
