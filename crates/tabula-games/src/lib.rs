//! Tabula's catalogue of games: every game by name ([`registry`]) and what each game
//! offers beyond its rules ([`Capabilities`]).
//!
//! # Why an extension trait, here
//!
//! Some games have what others lack: Connect Four a strong solver, an opening book and
//! an accuracy set from Pons' positions; tic-tac-toe exhaustive search; Go none of
//! these. Front ends must offer each where it exists without naming a game, so the game's
//! own type declares it: [`Capabilities`] is a trait over [`Game`] whose every method
//! has a "not offered" default, and each game's `impl` fills in what it has. Front ends
//! are generic over `G: Capabilities` and ask (`game.perfect_agent(..)` is `None` for
//! Go), never downcast.
//!
//! The alternatives were weighed: associated items on `Game` itself would make the rules
//! crate depend on search and on the Connect Four solver (the arrows must point the other
//! way); a closed enum of games (shakmaty's `VariantPosition`) would put a `match` on
//! every game into every capability, where a trait keeps each game's answers together.
//! The trait lives in this crate because Rust's orphan rule wants the `impl` beside the
//! trait or the type, and this is the one crate that may see every game and every
//! game's extras (`tabula-connect4`); the generic crates (search, networks, training)
//! never depend on it, and take what they need (an accuracy set, training defaults) as
//! values from the front end.
//!
//! Adding a game: its rules in one file of `tabula-core` (or its own crate), then one
//! entry in [`registry::GAMES`] with its `impl Capabilities` (empty if it offers
//! nothing beyond the rules).

pub mod capabilities;
pub mod registry;
pub mod view;

pub use capabilities::{labels_file, Capabilities, CapabilityError, TestSetSource};
pub use registry::{canonical_name, names, visit, GameVisitor, GAMES};
pub use view::{BoardView, Layout};
