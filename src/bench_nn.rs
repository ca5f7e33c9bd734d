//! `tabula bench nn` and `tabula bench mcts`: network inference and network-guided search
//! speed, with the share of the CPU's peak FLOP/s the inference reaches.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use clap::Args;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tabula_core::Game;
use tabula_games::registry::{self, GameVisitor};
use tabula_games::Capabilities;
use tabula_nn::infer::gemm;
use tabula_nn::{
    Architecture, Batch, Heads, Network, NetworkEvaluator, Scratch, Trainer, WeightFile,
};
use tabula_search::{search_many, Evaluation, Evaluator, Mcts, MctsConfig, SearchSettings};

use tabula_search::stats::median;

/// Network inference speed.
#[derive(Args)]
pub struct NnBench {
    /// The game whose encoding the network reads (e.g. go:9, go:19, connect4).
    #[arg(long, default_value = "go:9")]
    game: String,
    /// Tower size, BLOCKSxCHANNELS or a preset.
    #[arg(long, default_value = "6x64")]
    size: String,
    /// Batch sizes to measure.
    #[arg(long, value_delimiter = ',', default_value = "1,8,16,64")]
    batches: Vec<usize>,
    /// Thread counts to measure (one evaluator per thread).
    #[arg(long, value_delimiter = ',', default_value = "1,2")]
    threads: Vec<usize>,
    /// Seconds per measurement (median of five parts).
    #[arg(long, default_value_t = 2.0)]
    seconds: f64,
    /// Also time burn-flex's forward pass (batch 64) and a training step (batch 256).
    #[arg(long)]
    burn: bool,
    /// The heads: `dense` (AlphaZero's) or `katago` (per-point policy, pooled value,
    /// ownership and score; games whose actions are the points and a pass).
    #[arg(long, default_value = "dense")]
    heads: String,
    /// A global-pooling branch in every this many residual blocks (0: none).
    #[arg(long, default_value_t = 0, value_parser = crate::input::count(0, 1024))]
    global_pooling: usize,
}

/// Network-guided MCTS speed.
#[derive(Args)]
pub struct MctsBench {
    /// The game.
    #[arg(long, default_value = "go:9")]
    game: String,
    /// Tower size.
    #[arg(long, default_value = "6x64")]
    size: String,
    /// Simulations per search.
    #[arg(long, default_value_t = 800, value_parser = crate::input::count(1, 100_000_000))]
    sims: usize,
    /// Numbers of games searched at once on each thread.
    #[arg(long, value_delimiter = ',', default_value = "1,16,64")]
    games: Vec<usize>,
    /// Leaves each search gathers per round.
    #[arg(long, default_value_t = 8)]
    leaves: usize,
    /// Threads.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// The heads: `dense` or `katago` (see `bench nn`).
    #[arg(long, default_value = "dense")]
    heads: String,
    /// A global-pooling branch in every this many residual blocks (0: none).
    #[arg(long, default_value_t = 0, value_parser = crate::input::count(0, 1024))]
    global_pooling: usize,
}

/// Single-thread SGEMM GFLOP/s on 512x512x512 (median of five runs): the peak figure.
pub fn sgemm_peak() -> f64 {
    let n = 512;
    let a: Vec<f32> = (0..n * n).map(|i| (i % 17) as f32 * 0.01).collect();
    let b = a.clone();
    let mut c = vec![0.0; n * n];
    let mut rates = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let reps = 4;
        for _ in 0..reps {
            gemm(n, n, n, &a, &b, &mut c, false);
        }
        rates.push(reps as f64 * 2.0 * (n * n * n) as f64 / t.elapsed().as_secs_f64() / 1e9);
    }
    median(&mut rates)
}

fn random_network<G: Game>(
    game: &G,
    size: &str,
    heads: &str,
    pooling: usize,
) -> Result<(Arc<Network>, WeightFile)> {
    let heads = match heads {
        "dense" => Heads::Dense,
        "katago" => Heads::Katago,
        other => anyhow::bail!("--heads must be dense or katago, not {other:?}"),
    };
    let arch = Architecture::preset(game, size)?
        .with_heads(heads)?
        .with_global_pooling(pooling);
    let file = WeightFile::initial(&arch, &game.name(), 1);
    Ok((Arc::new(Network::from_weights(&file)?), file))
}

struct NnVisit<'a>(&'a NnBench);

impl GameVisitor for NnVisit<'_> {
    type Output = Result<()>;
    fn visit<G: Capabilities>(self, game: G) -> Result<()> {
        let b = self.0;
        let (net, file) = random_network(&game, &b.size, &b.heads, b.global_pooling)?;
        let arch = net.arch().clone();
        let flops = arch.flops_per_position();
        let peak = sgemm_peak();
        println!(
            "network {} {}x{}{} ({:.1} MFLOP/position); single-core SGEMM peak {:.1} GFLOP/s",
            game.name(),
            arch.blocks,
            arch.channels,
            match arch.pooling_blocks() {
                0 => String::new(),
                k => format!(
                    " ({k} with global pooling of {} channels)",
                    arch.pool_channels
                ),
            },
            flops / 1e6,
            peak
        );
        println!(
            "{:>7} {:>7} {:>12} {:>10} {:>12}",
            "threads", "batch", "positions/s", "GFLOP/s", "%peak/thread"
        );
        let per = arch.planes * arch.area();
        for &threads in &b.threads {
            for &batch in &b.batches {
                let part = Duration::from_secs_f64(b.seconds / 5.0);
                let mut rates = Vec::new();
                for _ in 0..5 {
                    let counts: Vec<f64> = std::thread::scope(|s| {
                        let hs: Vec<_> = (0..threads)
                            .map(|t| {
                                let net = net.clone();
                                s.spawn(move || {
                                    let mut rng = ChaCha8Rng::seed_from_u64(t as u64);
                                    let input: Vec<f32> = (0..batch * per)
                                        .map(|_| rng.random_range(0.0..1.0))
                                        .collect();
                                    let mut scratch = Scratch::default();
                                    let (mut l, mut v) = (Vec::new(), Vec::new());
                                    let start = Instant::now();
                                    let mut n = 0u64;
                                    while start.elapsed() < part {
                                        net.forward(&input, batch, &mut scratch, &mut l, &mut v);
                                        n += batch as u64;
                                    }
                                    n as f64 / start.elapsed().as_secs_f64()
                                })
                            })
                            .collect();
                        hs.into_iter().map(|h| h.join().unwrap_or(0.0)).collect()
                    });
                    rates.push(counts.iter().sum::<f64>());
                }
                let rate = median(&mut rates);
                let gflops = rate * flops / 1e9;
                println!(
                    "{threads:>7} {batch:>7} {rate:>12.0} {gflops:>10.1} {:>11.0}%",
                    100.0 * gflops / threads as f64 / peak
                );
            }
        }
        if b.burn {
            burn_figures(&file, &arch)?;
        }
        Ok(())
    }
}

/// burn-flex's forward pass (batch 64) and training step (batch 256), medians of five.
fn burn_figures(file: &WeightFile, arch: &Architecture) -> Result<()> {
    use burn::tensor::{Device, Tensor, TensorData};
    let device = Device::flex();
    let model = file.to_model(&device)?;
    let per = arch.planes * arch.area();
    let input = vec![0.5f32; 64 * per];
    let mut rates = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let x = Tensor::<4>::from_data(
            TensorData::new(input.clone(), [64, arch.planes, arch.height, arch.width]),
            &device,
        );
        let (p, _) = model.forward(x);
        let _ = p.into_data();
        rates.push(64.0 / t.elapsed().as_secs_f64());
    }
    println!(
        "burn-flex forward, batch 64: {:.0} positions/s",
        median(&mut rates)
    );
    let mut trainer = Trainer::new(arch, &file.game, Default::default(), 1);
    let batch = Batch {
        size: 256,
        inputs: vec![0.5; 256 * per],
        policy: vec![1.0 / arch.actions as f32; 256 * arch.actions],
        value: vec![0.0; 256],
        score: vec![0.0; 256],
        ownership: vec![0.0; 256 * arch.area()],
        aux_weight: vec![1.0; 256],
    };
    let mut times = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        trainer.step(&batch)?;
        times.push(t.elapsed().as_secs_f64());
    }
    println!(
        "burn-flex training step, batch 256: {:.3} s",
        median(&mut times)
    );
    Ok(())
}

/// Times the evaluator, to split search time into evaluation and tree work.
struct Timed<E> {
    inner: E,
    spent: Duration,
}

impl<G: Game, E: Evaluator<G>> Evaluator<G> for Timed<E> {
    fn evaluate(&mut self, positions: &[G], out: &mut Vec<Evaluation>) {
        let t = Instant::now();
        self.inner.evaluate(positions, out);
        self.spent += t.elapsed();
    }
}

struct MctsVisit<'a>(&'a MctsBench);

impl GameVisitor for MctsVisit<'_> {
    type Output = Result<()>;
    fn visit<G: Capabilities>(self, game: G) -> Result<()> {
        let b = self.0;
        let (net, _) = random_network(&game, &b.size, &b.heads, b.global_pooling)?;
        println!(
            "MCTS on {} with a {}x{} network, {} simulations per search, {} leaves per round, {} thread(s)",
            game.name(),
            net.arch().blocks,
            net.arch().channels,
            b.sims,
            b.leaves,
            b.threads
        );
        println!(
            "{:>6} {:>14} {:>16} {:>18}",
            "games", "simulations/s", "evaluation share", "search overhead"
        );
        for &games in &b.games {
            let results: Vec<(u64, Duration, Duration)> = std::thread::scope(|s| {
                let hs: Vec<_> = (0..b.threads.max(1))
                    .map(|t| {
                        let net = net.clone();
                        let game = game.clone();
                        s.spawn(move || -> Result<(u64, Duration, Duration)> {
                            let mut eval = Timed {
                                inner: NetworkEvaluator::new(
                                    net,
                                    &game,
                                    SearchSettings::default().eval_batch,
                                )?,
                                spent: Duration::ZERO,
                            };
                            let config = MctsConfig {
                                simulations: b.sims,
                                batch: b.leaves,
                                seed: t as u64,
                                dirichlet_total: 10.0,
                                ..MctsConfig::default()
                            };
                            let mut trees: Vec<Mcts<G>> = (0..games)
                                .map(|i| {
                                    Mcts::new(
                                        game.clone(),
                                        MctsConfig {
                                            seed: i as u64,
                                            ..config
                                        },
                                    )
                                })
                                .collect();
                            let start = Instant::now();
                            search_many(&mut trees, &mut eval);
                            let sims: u64 =
                                trees.iter().map(|t| t.result().simulations as u64).sum();
                            Ok((sims, start.elapsed(), eval.spent))
                        })
                    })
                    .collect();
                hs.into_iter()
                    .map(|h| {
                        h.join()
                            .unwrap_or_else(|_| Err(anyhow::anyhow!("a search thread panicked")))
                    })
                    .collect::<Result<Vec<_>>>()
            })?;
            let sims: u64 = results.iter().map(|r| r.0).sum();
            let wall = results
                .iter()
                .map(|r| r.1)
                .max()
                .unwrap_or_default()
                .as_secs_f64();
            let total: f64 = results.iter().map(|r| r.1.as_secs_f64()).sum();
            let eval: f64 = results.iter().map(|r| r.2.as_secs_f64()).sum();
            println!(
                "{games:>6} {:>14.0} {:>15.1}% {:>17.1}%",
                sims as f64 / wall,
                100.0 * eval / total,
                100.0 * (total - eval) / eval.max(1e-9)
            );
        }
        Ok(())
    }
}

pub fn nn(b: NnBench) -> Result<()> {
    registry::visit(&b.game, NnVisit(&b))?
}

pub fn mcts(b: MctsBench) -> Result<()> {
    registry::visit(&b.game, MctsVisit(&b))?
}
