//! The few statistics Tabula reports: 95% intervals of win rates and scores, and
//! medians of repeated measurements. One place, so that every command's interval is
//! the same interval.

/// The two-sided 95% quantile of the standard normal distribution.
pub const Z95: f64 = 1.959_963_984_540_054;

/// Wilson score interval at 95% for `successes` out of `n` (`successes` may be
/// fractional, e.g. wins plus half the draws); `(0, 1)` when `n` is 0.
pub fn wilson95(successes: f64, n: usize) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let (p, n) = (successes / n as f64, n as f64);
    let z2 = Z95 * Z95;
    let denom = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denom;
    let half = Z95 * ((p * (1.0 - p) + z2 / (4.0 * n)) / n).sqrt() / denom;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// The median of `v` (sorted in place); 0 for an empty slice.
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        0.0
    } else if v.len() % 2 == 1 {
        v[v.len() / 2]
    } else {
        (v[v.len() / 2 - 1] + v[v.len() / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_interval() {
        let (lo, hi) = wilson95(50.0, 100);
        assert!((lo - 0.404).abs() < 0.002 && (hi - 0.596).abs() < 0.002);
        assert_eq!(wilson95(0.0, 0), (0.0, 1.0));
        let (lo, hi) = wilson95(100.0, 100);
        assert!(lo > 0.96 && hi == 1.0);
    }

    #[test]
    fn medians() {
        assert_eq!(median(&mut []), 0.0);
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
