//! Medians and percentiles of samples.

/// The median of `samples` (mean of the middle two for an even count; 0
/// for none). NaNs sort last.
pub fn median(samples: &[f64]) -> f64 {
    percentile(samples, 50.0)
}

/// The `p`th percentile (0–100) of `samples` by linear interpolation
/// between closest ranks; 0 for no samples.
pub fn percentile(samples: &[f64], p: f64) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    let mut v = samples.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = (p.clamp(0.0, 100.0) / 100.0) * (v.len() - 1) as f64;
    let lo = rank.floor() as usize;
    let hi = rank.ceil() as usize;
    let (a, b) = (v[lo.min(v.len() - 1)], v[hi.min(v.len() - 1)]);
    a + (b - a) * (rank - lo as f64)
}

/// Time `runs` calls of `f` (after one untimed warm-up call), in seconds.
pub fn time_runs<E>(runs: usize, mut f: impl FnMut() -> Result<(), E>) -> Result<Vec<f64>, E> {
    f()?;
    let mut out = Vec::with_capacity(runs);
    for _ in 0..runs.max(1) {
        let start = std::time::Instant::now();
        f()?;
        out.push(start.elapsed().as_secs_f64());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_percentiles() {
        assert_eq!(median(&[]), 0.0);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        let v: Vec<f64> = (1..=101).map(f64::from).collect();
        assert_eq!(percentile(&v, 99.0), 100.0);
        assert_eq!(percentile(&v, 0.0), 1.0);
        assert_eq!(percentile(&v, 100.0), 101.0);
    }
}
