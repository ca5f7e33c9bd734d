//! Connect Four on any board that fits a 64-bit bitboard (7x6 by default).
//!
//! The layout is Pascal Pons': bit `col * (height + 1) + row` is the cell `row` (0 = the
//! bottom) of column `col`, and each column keeps one spare bit on top so that shifts
//! never carry a stone from one column into the next. A position is two bitboards: the
//! stones of the side to move (`current`) and all stones (`mask`).

use std::fmt;

use crate::game::{Game, GameError, Outcome, Player};
use crate::zobrist;

const ZOBRIST: [u64; 129] = zobrist::table(0xC4);

/// The size of a Connect Four board and the bit masks derived from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Geometry {
    width: u8,
    height: u8,
    /// One bit at the bottom of every column.
    bottom: u64,
    /// Every playable cell.
    board: u64,
}

impl Geometry {
    /// The standard 7 columns × 6 rows.
    pub const STANDARD: Geometry = match Geometry::new(7, 6) {
        Ok(g) => g,
        Err(_) => panic!("7x6 fits"),
    };

    /// A board `width` columns wide and `height` rows high; `width * (height + 1)` must
    /// not exceed 64 (e.g. anything from 4x4 to 8x7).
    pub const fn new(width: usize, height: usize) -> Result<Geometry, &'static str> {
        if width == 0 || height == 0 {
            return Err("width and height must be at least 1");
        }
        if width > 16 {
            return Err("width must be at most 16");
        }
        if width * (height + 1) > 64 {
            return Err("width * (height + 1) must be at most 64 to fit a 64-bit bitboard");
        }
        let mut bottom = 0u64;
        let mut c = 0;
        while c < width {
            bottom |= 1 << (c * (height + 1));
            c += 1;
        }
        let column = (1u64 << height) - 1;
        Ok(Geometry {
            width: width as u8,
            height: height as u8,
            bottom,
            board: bottom * column,
        })
    }

    /// Number of columns.
    #[inline]
    pub fn width(&self) -> usize {
        self.width as usize
    }

    /// Number of rows.
    #[inline]
    pub fn height(&self) -> usize {
        self.height as usize
    }

    /// Number of cells.
    #[inline]
    pub fn cells(&self) -> usize {
        self.width() * self.height()
    }

    /// Every playable cell.
    #[inline]
    pub fn board_mask(&self) -> u64 {
        self.board
    }

    /// The cells of column `col`.
    #[inline]
    pub fn column_mask(&self, col: usize) -> u64 {
        ((1u64 << self.height) - 1) << (col * (self.height() + 1))
    }

    /// The top cell of column `col`.
    #[inline]
    pub fn top_mask(&self, col: usize) -> u64 {
        1u64 << (self.height() - 1 + col * (self.height() + 1))
    }

    /// The bottom cell of column `col`.
    #[inline]
    pub fn bottom_mask(&self, col: usize) -> u64 {
        1u64 << (col * (self.height() + 1))
    }

    /// The bit of `(col, row)`, row 0 at the bottom.
    #[inline]
    pub fn bit(&self, col: usize, row: usize) -> u64 {
        1u64 << (col * (self.height() + 1) + row)
    }

    /// Cells where a stone can be dropped now: the lowest empty cell of each column.
    #[inline]
    pub fn possible(&self, mask: u64) -> u64 {
        mask.wrapping_add(self.bottom) & self.board
    }

    /// Empty cells that would complete four in a row for the owner of `position`
    /// (including cells that cannot be played yet).
    #[inline]
    pub fn winning_positions(&self, position: u64, mask: u64) -> u64 {
        let p = position;
        // vertical: three stones below
        let mut r = (p << 1) & (p << 2) & (p << 3);
        for shift in [
            self.height as u32 + 1, // horizontal
            self.height as u32,     // diagonal /
            self.height as u32 + 2, // diagonal \
        ] {
            let mut q = (p << shift) & (p << (2 * shift));
            r |= q & (p << (3 * shift));
            r |= q & (p >> shift);
            q = (p >> shift) & (p >> (2 * shift));
            r |= q & (p << shift);
            r |= q & (p >> (3 * shift));
        }
        r & (self.board ^ mask)
    }

    /// The bitboard `bits` with its columns in reverse order (the mirror image). Keys
    /// (`current + mask`) mirror the same way, since no column carries into the next.
    #[inline]
    pub fn mirror(&self, bits: u64) -> u64 {
        let stride = self.height() + 1;
        let column = (1u64 << stride) - 1;
        let w = self.width();
        let mut out = 0;
        for c in 0..w {
            out |= ((bits >> (c * stride)) & column) << ((w - 1 - c) * stride);
        }
        out
    }

    /// Whether `position` holds four in a row.
    #[inline]
    pub fn has_alignment(&self, position: u64) -> bool {
        let p = position;
        let h = self.height as u32;
        for shift in [1, h + 1, h, h + 2] {
            let m = p & (p >> shift);
            if m & (m >> (2 * shift)) != 0 {
                return true;
            }
        }
        false
    }
}

impl Default for Geometry {
    fn default() -> Self {
        Geometry::STANDARD
    }
}

/// A Connect Four position. A move is a column, 0-based inside Tabula and written
/// 1-based (Pons' convention: `4455` plays the fourth, fourth, fifth, fifth columns).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConnectFour {
    geo: Geometry,
    /// Stones of the side to move.
    current: u64,
    /// All stones.
    mask: u64,
    moves: u8,
    /// Set when the last move made four in a row.
    won: bool,
    hash: u64,
}

impl Default for ConnectFour {
    fn default() -> Self {
        Self::new()
    }
}

impl ConnectFour {
    /// The empty 7x6 board.
    pub fn new() -> Self {
        Self::with_geometry(Geometry::STANDARD)
    }

    /// The empty board of the given size.
    pub fn with_geometry(geo: Geometry) -> Self {
        ConnectFour {
            geo,
            current: 0,
            mask: 0,
            moves: 0,
            won: false,
            hash: 0,
        }
    }

    /// The position after a Pons move string such as `4455` on the given board. Fails
    /// on a character that is not a column, a full column, or a move after the game ended.
    pub fn from_moves(geo: Geometry, moves: &str) -> Result<Self, GameError> {
        let mut g = Self::with_geometry(geo);
        for (i, ch) in moves.trim().chars().enumerate() {
            let at = |reason: String| GameError::BadMove {
                text: moves.trim().to_string(),
                reason: format!("move {} ({ch:?}): {reason}", i + 1),
            };
            let col = g
                .parse_move(&ch.to_string())
                .map_err(|e| at(e.to_string()))?;
            g.try_play(col).map_err(|e| at(e.to_string()))?;
        }
        Ok(g)
    }

    /// The board size.
    pub fn geometry(&self) -> Geometry {
        self.geo
    }

    /// Stones of the side to move.
    pub fn current(&self) -> u64 {
        self.current
    }

    /// All stones.
    pub fn mask(&self) -> u64 {
        self.mask
    }

    /// Whether column `col` has room for another stone.
    pub fn can_play(&self, col: usize) -> bool {
        col < self.geo.width() && self.mask & self.geo.top_mask(col) == 0
    }

    /// Whether the side to move can win by playing in `col` now.
    pub fn is_winning_move(&self, col: usize) -> bool {
        self.geo.winning_positions(self.current, self.mask)
            & self.geo.possible(self.mask)
            & self.geo.column_mask(col)
            != 0
    }

    /// Who owns `(col, row)`, row 0 at the bottom.
    pub fn cell(&self, col: usize, row: usize) -> Option<Player> {
        let bit = self.geo.bit(col, row);
        if self.mask & bit == 0 {
            None
        } else if (self.current & bit != 0) == (self.to_move() == Player::First) {
            Some(Player::First)
        } else {
            Some(Player::Second)
        }
    }

    /// A key that identifies the position exactly (Pons: `current + mask`).
    pub fn key(&self) -> u64 {
        self.current.wrapping_add(self.mask)
    }

    fn zobrist(bit_index: u32, player: Player) -> u64 {
        ZOBRIST[bit_index as usize * 2 + player.index()]
    }

    /// The mirror image (columns reversed).
    pub fn mirrored(&self) -> Self {
        let mut m = Self::with_geometry(self.geo);
        let w = self.geo.width();
        for col in 0..w {
            for row in 0..self.geo.height() {
                if let Some(p) = self.cell(col, row) {
                    let bit = self.geo.bit(w - 1 - col, row);
                    m.mask |= bit;
                    if p == self.to_move() {
                        m.current |= bit;
                    }
                    m.hash ^= Self::zobrist(bit.trailing_zeros(), p);
                }
            }
        }
        m.moves = self.moves;
        m.won = self.won;
        if !self.moves.is_multiple_of(2) {
            m.hash ^= ZOBRIST[128];
        }
        m
    }
}

impl Game for ConnectFour {
    type Move = u8;

    fn name(&self) -> String {
        if self.geo == Geometry::STANDARD {
            "connect4".into()
        } else {
            format!("connect4:{}x{}", self.geo.width, self.geo.height)
        }
    }

    fn to_move(&self) -> Player {
        if self.moves.is_multiple_of(2) {
            Player::First
        } else {
            Player::Second
        }
    }

    fn ply(&self) -> usize {
        self.moves as usize
    }

    fn legal_moves(&self) -> Vec<u8> {
        if self.is_terminal() {
            return Vec::new();
        }
        (0..self.geo.width())
            .filter(|&c| self.can_play(c))
            .map(|c| c as u8)
            .collect()
    }

    fn play(&mut self, mv: u8) {
        debug_assert!(self.is_legal(mv), "illegal Connect Four move {mv}");
        let col = mv as usize;
        let bit = (self.mask + self.geo.bottom_mask(col)) & self.geo.column_mask(col);
        let me = self.to_move();
        self.hash ^= Self::zobrist(bit.trailing_zeros(), me) ^ ZOBRIST[128];
        let mine = self.current | bit;
        self.won = self.geo.has_alignment(mine);
        self.current ^= self.mask; // the opponent's stones become the side to move's
        self.mask |= bit;
        self.moves += 1;
    }

    fn outcome(&self) -> Option<Outcome> {
        if self.won {
            Some(Outcome::Win(self.to_move().other()))
        } else if self.moves as usize == self.geo.cells() {
            Some(Outcome::Draw)
        } else {
            None
        }
    }

    fn position_hash(&self) -> u64 {
        self.hash
    }

    fn action_count(&self) -> usize {
        self.geo.width()
    }

    fn action_of(&self, mv: u8) -> usize {
        mv as usize
    }

    fn move_of(&self, action: usize) -> Option<u8> {
        (action < self.geo.width()).then_some(action as u8)
    }

    fn encoding_shape(&self) -> [usize; 3] {
        [3, self.geo.height(), self.geo.width()]
    }

    /// Row 0 of each plane is the top row, as the board is drawn.
    fn encode(&self, out: &mut [f32]) {
        let (h, w) = (self.geo.height(), self.geo.width());
        let me = self.to_move();
        for r in 0..h {
            for c in 0..w {
                let i = r * w + c;
                let cell = self.cell(c, h - 1 - r);
                out[i] = f32::from(cell == Some(me));
                out[h * w + i] = f32::from(cell == Some(me.other()));
                out[2 * h * w + i] = f32::from(cell.is_none());
            }
        }
    }

    fn symmetry_count(&self) -> usize {
        2
    }

    fn transformed(&self, sym: usize) -> Self {
        if sym == 0 {
            *self
        } else {
            self.mirrored()
        }
    }

    fn transform_action(&self, sym: usize, action: usize) -> usize {
        if sym == 0 {
            action
        } else {
            self.geo.width() - 1 - action
        }
    }

    fn transform_point(&self, sym: usize, row: usize, col: usize) -> (usize, usize) {
        if sym == 0 {
            (row, col)
        } else {
            (row, self.geo.width() - 1 - col)
        }
    }

    /// A 1-based column number.
    fn parse_move(&self, text: &str) -> Result<u8, GameError> {
        let t = text.trim();
        match t.parse::<usize>() {
            Ok(c) if (1..=self.geo.width()).contains(&c) => Ok((c - 1) as u8),
            _ => Err(GameError::BadMove {
                text: t.to_string(),
                reason: format!("expected a column from 1 to {}", self.geo.width()),
            }),
        }
    }

    fn format_move(&self, mv: u8) -> String {
        (mv + 1).to_string()
    }
}

/// Draws the board with X for the first player, O for the second, column numbers below.
impl fmt::Display for ConnectFour {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (h, w) = (self.geo.height(), self.geo.width());
        for row in (0..h).rev() {
            write!(f, "|")?;
            for col in 0..w {
                let ch = match self.cell(col, row) {
                    Some(Player::First) => 'X',
                    Some(Player::Second) => 'O',
                    None => '.',
                };
                write!(f, " {ch}")?;
            }
            writeln!(f, " |")?;
        }
        write!(f, "+")?;
        for _ in 0..w {
            write!(f, "--")?;
        }
        writeln!(f, "-+")?;
        write!(f, " ")?;
        for col in 0..w {
            write!(f, " {}", (col + 1) % 10)?;
        }
        writeln!(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn from_moves_and_wins() {
        let g = ConnectFour::from_moves(Geometry::STANDARD, "4455").unwrap();
        assert_eq!(g.ply(), 4);
        assert_eq!(g.to_move(), Player::First);
        assert!(!g.is_terminal());
        // vertical win for X
        let g = ConnectFour::from_moves(Geometry::STANDARD, "1212121").unwrap();
        assert_eq!(g.outcome(), Some(Outcome::Win(Player::First)));
        assert!(g.legal_moves().is_empty());
        // no move after the end
        let e = ConnectFour::from_moves(Geometry::STANDARD, "12121212").unwrap_err();
        assert!(e.to_string().contains("move 8"), "{e}");
        // full column
        let e = ConnectFour::from_moves(Geometry::STANDARD, "1111111").unwrap_err();
        assert!(e.to_string().contains("illegal"), "{e}");
        assert!(ConnectFour::from_moves(Geometry::STANDARD, "48").is_err());
        assert!(ConnectFour::from_moves(Geometry::STANDARD, "4a").is_err());
    }

    #[test]
    fn alignments_in_every_direction() {
        let geo = Geometry::STANDARD;
        // horizontal X: 1 2 3 4 on the bottom row
        let h = ConnectFour::from_moves(geo, "1122334").unwrap();
        assert_eq!(h.outcome(), Some(Outcome::Win(Player::First)));
        // diagonal / for X
        let d = ConnectFour::from_moves(geo, "12233434464").unwrap();
        assert_eq!(d.outcome(), Some(Outcome::Win(Player::First)));
        // diagonal \ for X (mirror)
        let m = ConnectFour::from_moves(geo, "76655454424").unwrap();
        assert_eq!(m.outcome(), Some(Outcome::Win(Player::First)));
        // no false alignment across the column boundary (vertical 3 + 1 wrap)
        let w = ConnectFour::from_moves(geo, "1717171").unwrap();
        assert_eq!(w.outcome(), Some(Outcome::Win(Player::First)));
        let no = ConnectFour::from_moves(geo, "111222").unwrap();
        assert!(!no.is_terminal());
    }

    #[test]
    fn geometries() {
        assert!(Geometry::new(8, 7).is_ok());
        assert!(Geometry::new(9, 7).is_err());
        assert!(Geometry::new(0, 4).is_err());
        let g = ConnectFour::with_geometry(Geometry::new(4, 4).unwrap());
        assert_eq!(g.name(), "connect4:4x4");
        assert_eq!(g.legal_moves(), vec![0, 1, 2, 3]);
    }

    #[test]
    fn display_shows_stones() {
        let g = ConnectFour::from_moves(Geometry::STANDARD, "44").unwrap();
        let s = g.to_string();
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[5], "| . . . X . . . |");
        assert_eq!(lines[4], "| . . . O . . . |");
        assert_eq!(lines[7], "  1 2 3 4 5 6 7");
    }

    fn random_game(seq: &[u8], geo: Geometry) -> (ConnectFour, Vec<u8>) {
        let mut g = ConnectFour::with_geometry(geo);
        let mut played = vec![];
        for &m in seq {
            let m = m % geo.width() as u8;
            if !g.is_terminal() && g.can_play(m as usize) {
                g.play(m);
                played.push(m);
            }
        }
        (g, played)
    }

    proptest! {
        #[test]
        fn hash_and_symmetry_consistent(seq in proptest::collection::vec(0u8..8, 0..60), w in 4usize..9, h in 4usize..8) {
            let Ok(geo) = Geometry::new(w, h) else { return Ok(()) };
            let (g, played) = random_game(&seq, geo);
            // incremental hash equals the hash rebuilt from the cells
            let rebuilt = g.mirrored().mirrored();
            prop_assert_eq!(rebuilt.position_hash(), g.position_hash());
            prop_assert_eq!(rebuilt, g);
            // copy-make: playing on a copy leaves the original untouched
            if let Some(&m) = g.legal_moves().first() {
                let before = g;
                let mut c = g;
                c.play(m);
                prop_assert_eq!(g, before);
                prop_assert_ne!(c.position_hash(), g.position_hash());
            }
            // the mirror of the game equals the mirrored moves played
            let mut mirrored_play = ConnectFour::with_geometry(geo);
            for &m in &played { mirrored_play.play(g.transform_action(1, m as usize) as u8); }
            prop_assert_eq!(mirrored_play, g.transformed(1));
            let mut mapped: Vec<usize> = g.legal_moves().iter().map(|&m| g.transform_action(1, m as usize)).collect();
            mapped.sort_unstable();
            let direct: Vec<usize> = g.transformed(1).legal_moves().iter().map(|&m| m as usize).collect();
            prop_assert_eq!(mapped, direct);
            // the key of the mirror image is the mirrored key
            prop_assert_eq!(g.mirrored().key(), geo.mirror(g.key()));
        }
    }

    // Fuzzing (see `scripts/fuzz.sh`): any move string is read or refused, naming the
    // move, without a panic; a refused move leaves the position as it was.
    proptest! {
        #[test]
        fn fuzz_connect4_move_strings(
            text in "[0-9a-z \\t\\n+-]{0,50}|\\PC{0,20}",
            w in 4usize..=9,
            h in 4usize..=8,
        ) {
            let Ok(geo) = Geometry::new(w, h) else { return Ok(()) };
            match ConnectFour::from_moves(geo, &text) {
                Ok(g) => prop_assert!(g.ply() <= text.trim().chars().count()),
                Err(e) => prop_assert!(e.to_string().contains("move"), "{}", e),
            }
            let mut g = ConnectFour::with_geometry(geo);
            for word in text.split_whitespace() {
                let before = g;
                if g.play_text(word).is_err() {
                    prop_assert_eq!(g, before);
                }
            }
        }
    }
}
