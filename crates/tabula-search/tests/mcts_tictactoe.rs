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
