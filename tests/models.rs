//! The shipped models play as their README says: tic-tac-toe never loses to minimax;
//! Connect Four wins every game as the first player against random play and beats a
//! shallow fixed-depth alpha-beta player; the 7x7 Go network opens at the centre (the
//! known best first move of 7x7) and does not read the empty board at komi 9 as decided.

use std::path::Path;
use std::sync::Arc;

use tabula_core::{ConnectFour, Game, Go, GoRules, Outcome, Player, TicTacToe};
use tabula_nn::{Network, NetworkEvaluator, WeightFile};
use tabula_search::agent::{Agent, MctsAgent, NegamaxAgent};
use tabula_search::arena::{play_game, play_match, RandomAgent};
use tabula_search::MctsConfig;

fn mcts<G: Game>(file: &str, game: &G, sims: usize) -> MctsAgent<G> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("models")
        .join(file);
    let weights = WeightFile::load(&path).expect("the shipped model loads");
    weights.check_game(game).expect("made for this game");
    let net = Arc::new(Network::from_weights(&weights).expect("valid weights"));
    let config = MctsConfig {
        simulations: sims,
        c_puct: 1.5,
        ..MctsConfig::default()
    };
    MctsAgent::new(
        config,
        Box::new(NetworkEvaluator::new(net, game, 16).expect("fits")),
        "mcts",
    )
}

#[test]
fn go7_model_opens_at_the_centre_and_sees_an_even_game_at_komi_9() {
    let rules = GoRules {
        komi: 9.0,
        ..GoRules::default()
    };
    let start = Go::new(7, rules).unwrap();
    let mut a = mcts("go7.safetensors", &start, 1600);
    let r = a.analyze(&start);
    let best = r.best().map(|m| start.format_move(m));
    assert_eq!(best.as_deref(), Some("D4"), "{:?}", &r.children[..3]);
    // The shipped network values the empty board at about -0.4 to -0.46 for Black (a
    // 27-30% win rate) after 2,200 self-play games: it opens right but has not yet
    // learned that komi 9 is even (BENCHMARKS.md). This bound only says the game is not
    // read as decided; "near even" is the target still open.
    assert!(
        r.value.abs() < 0.6,
        "value of the empty board at komi 9: {}",
        r.value
    );
}

#[test]
fn tictactoe_model_never_loses_to_minimax() {
    let start = TicTacToe::new();
    let mut a = mcts("tictactoe.safetensors", &start, 200);
    let mut b = NegamaxAgent::new(None);
    let r = play_match(&start, &mut a, &mut b, 18, 1, 3, |_| {});
    assert_eq!(r.losses, 0, "{r:?}");
}

#[test]
fn connect4_model_beats_random_as_first_player() {
    let start = ConnectFour::default();
    let mut a = mcts("connect4.safetensors", &start, 200);
    for seed in 0..20 {
        let mut random = RandomAgent::new(seed);
        let outcome = play_game(&start, &mut a as &mut dyn Agent<ConnectFour>, &mut random);
        assert_eq!(outcome, Some(Outcome::Win(Player::First)), "game {seed}");
    }
}

#[test]
fn connect4_model_beats_a_shallow_alpha_beta_player() {
    let start = ConnectFour::default();
    let mut a = mcts("connect4.safetensors", &start, 400);
    let mut b = NegamaxAgent::new(Some(DEPTH));
    let r = play_match(&start, &mut a, &mut b, 20, 2, 5, |_| {});
    assert!(r.score() >= THRESHOLD, "{r:?}: score {}", r.score());
}

/// The α-β player searches this many moves ahead (a horizon scores 0).
const DEPTH: u32 = 4;
/// Required share of the points over 20 games (wins + draws/2).
const THRESHOLD: f64 = 0.8;

/// The shipped mine model, on positions from games no run has generated (seeds past
/// every data range), beats the AutoMine teacher it replaces on every level: its
/// probabilities are closer to the exact ones, and its safest cell is more often an
/// exactly safest cell; nearly every cell it calls safe (P(mine) < 0.001) is safe (the
/// net proves nothing: on expert about 1 in 500 such cells may hold a mine).
#[test]
fn mine_model_beats_the_teacher_on_every_level() {
    use tabula_automine::dataset::play_and_record;
    use tabula_automine::eval::measure;
    use tabula_automine::run::Board;
    use tabula_automine::MineNet;
    use tabula_mines::{FirstClick, Level, Teacher};

    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/mines.safetensors");
    let mut net = MineNet::load(&path).expect("the shipped mine model loads");
    for level in [Level::Beginner, Level::Intermediate, Level::Expert] {
        let board = Board {
            level,
            rule: FirstClick::Safe,
        };
        let mut positions = Vec::new();
        for k in 0..40 {
            let seed = board.first_seed() + 1_000_000_000 + k;
            positions.extend(play_and_record(board.config(), seed, 0.3).unwrap());
        }
        let ours = measure(&positions, |v| net.probabilities(v));
        let teacher = measure(&positions, |v| Teacher.estimate(v).p);
        assert!(ours.positions >= 40, "{board}: {ours:?}");
        assert!(
            ours.kl < teacher.kl,
            "{board}: KL {} vs {}",
            ours.kl,
            teacher.kl
        );
        assert!(
            ours.safest_agrees > teacher.safest_agrees,
            "{board}: {} vs {}",
            ours.safest_agrees,
            teacher.safest_agrees
        );
        assert!(
            ours.claimed_safe_wrong * 100 <= ours.claimed_safe,
            "{board}: {} of {} cells called safe may hold a mine",
            ours.claimed_safe_wrong,
            ours.claimed_safe
        );
    }
}
