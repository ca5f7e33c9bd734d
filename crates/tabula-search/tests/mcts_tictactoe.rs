//! PUCT MCTS with a uniform prior and random rollouts, checked against the exact
//! minimax values on every non-terminal tic-tac-toe position.

use std::collections::HashSet;

use tabula_core::{Game, TicTacToe};
use tabula_search::negamax::WIN;
use tabula_search::{Mcts, MctsConfig, Negamax, RolloutEvaluator};

fn all_positions() -> Vec<TicTacToe> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let mut stack = vec![TicTacToe::new()];
    while let Some(g) = stack.pop() {
        if !seen.insert(g.position_hash()) || g.is_terminal() {
            continue;
        }
        for mv in g.legal_moves() {
            let mut c = g;
            c.play(mv);
            stack.push(c);
        }
        out.push(g);
    }
    out
}

#[test]
fn mcts_wins_quick_wins_and_never_throws_a_draw() {
    let positions = all_positions();
    assert_eq!(positions.len(), 4520);
    let mut exact = Negamax::<TicTacToe>::new();
    let config = MctsConfig {
        simulations: 3000,
        c_puct: 1.5,
        seed: 7,
        ..MctsConfig::default()
    };
    let mut evaluator = RolloutEvaluator::new(1, 11);
    let (mut quick_wins, mut draws) = (0, 0);
    for g in &positions {
        let values = exact.analyze(g);
        let best = values.iter().map(|(_, v)| *v).max().unwrap();
        let result = Mcts::new(*g, config).search(&mut evaluator);
        let mv = result.best().unwrap();
        let chosen = values.iter().find(|(m, _)| *m == mv).unwrap().1;
        let ply = g.ply() as i32;
        if best == WIN - ply - 1 {
            quick_wins += 1;
            assert_eq!(chosen, best, "missed the win in one in\n{g}");
        } else if best >= WIN - ply - 3 {
            quick_wins += 1;
            assert!(chosen > 0, "missed the forced win in two in\n{g}");
        } else if best == 0 {
            draws += 1;
            assert!(
                chosen >= 0,
                "chose a losing move where a draw exists in\n{g}"
            );
        }
        let total: u32 = result.children.iter().map(|c| c.visits).sum();
        assert_eq!(total as usize, config.simulations);
    }
    assert!(quick_wins > 1000 && draws > 500, "{quick_wins} {draws}");
}

/// −1, 0 or 1 (`f32::signum` gives 1 for 0).
fn sign(v: f32) -> i32 {
    (v > 0.0) as i32 - (v < 0.0) as i32
}

#[test]
fn solver_proofs_agree_with_minimax_and_proven_wins_are_taken() {
    let mut exact = Negamax::<TicTacToe>::new();
    let config = MctsConfig {
        simulations: 300,
        c_puct: 1.5,
        seed: 7,
        solver: true,
        ..MctsConfig::default()
    };
    let mut evaluator = RolloutEvaluator::new(1, 11);
    let (mut proven_roots, mut proven_children) = (0, 0);
    for g in &all_positions() {
        let values = exact.analyze(g);
        let best = values.iter().map(|(_, v)| *v).max().unwrap();
        let ply = g.ply() as i32;
        let result = Mcts::new(*g, config).search(&mut evaluator);
        if let Some(p) = result.proof {
            proven_roots += 1;
            assert_eq!(sign(p.value), best.signum(), "root of\n{g}");
            assert_eq!(result.value, p.value);
        }
        for c in &result.children {
            let Some(p) = c.proof else { continue };
            proven_children += 1;
            let exact_value = values.iter().find(|(m, _)| *m == c.mv).unwrap().1;
            assert_eq!(sign(p.value), exact_value.signum(), "{c:?} in\n{g}");
            if p.value > 0.0 {
                // a proven win is no faster than the fastest one
                assert!(
                    exact_value >= WIN - ply - 1 - p.plies as i32,
                    "{c:?} in\n{g}"
                );
            }
        }
        let mv = result.best().unwrap();
        let chosen = values.iter().find(|(m, _)| *m == mv).unwrap().1;
        if result
            .children
            .iter()
            .any(|c| c.proof.is_some_and(|p| p.value > 0.0))
        {
            assert!(chosen > 0, "a proven win was not played in\n{g}");
        }
        if result.proof.is_some() {
            // the result is kept (a proven win may be slower than the fastest)
            assert_eq!(
                sign(chosen as f32),
                best.signum(),
                "a proven position lost in\n{g}"
            );
        }
    }
    assert!(
        proven_roots > 1000 && proven_children > 5000,
        "{proven_roots} {proven_children}"
    );
}
