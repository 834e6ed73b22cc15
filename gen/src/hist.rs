//! Log-linear histogram of nanosecond values: exact below 128 ns, then 128 sub-buckets per
//! power of two (relative error under 0.8 %), up to 2^41 ns (about 36 minutes).

const SUB_BITS: u32 = 7;
const SUB: usize = 1 << SUB_BITS;
const MAX_EXP: u32 = 40;
const SIZE: usize = (MAX_EXP - SUB_BITS + 2) as usize * SUB;

#[derive(Clone)]
pub struct Hist {
    counts: Vec<u32>,
    pub n: u64,
    pub min: u64,
    pub max: u64,
}

impl Default for Hist {
    fn default() -> Self {
        Self::new()
    }
}

fn index(v: u64) -> usize {
    let v = v.min((1u64 << (MAX_EXP + 1)) - 1);
    if v < SUB as u64 {
        return v as usize;
    }
    let e = 63 - v.leading_zeros();
    let shift = e - SUB_BITS;
    let sub = ((v >> shift) as usize) & (SUB - 1);
    (e - SUB_BITS + 1) as usize * SUB + sub
}

/// Middle of a bucket.
fn value(i: usize) -> f64 {
    if i < SUB {
        return i as f64;
    }
    let shift = (i / SUB) as u32 - 1;
    let sub = (i % SUB) as u64;
    let lower = (SUB as u64 + sub) << shift;
    lower as f64 + ((1u64 << shift) as f64 - 1.0) / 2.0
}

impl Hist {
    pub fn new() -> Self {
        Hist { counts: vec![0; SIZE], n: 0, min: u64::MAX, max: 0 }
    }

    pub fn add(&mut self, v: u64) {
        self.counts[index(v)] += 1;
        self.n += 1;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    pub fn merge(&mut self, other: &Hist) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += *b;
        }
        self.n += other.n;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// The q-quantile (0..=1), clamped to the exact min and max; None when empty.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        if self.n == 0 {
            return None;
        }
        if q >= 1.0 {
            return Some(self.max as f64);
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c as u64;
            if seen >= rank {
                return Some(value(i).clamp(self.min as f64, self.max as f64));
            }
        }
        Some(self.max as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_small_values_and_bounded_error() {
        let mut h = Hist::new();
        for v in 0..100u64 {
            h.add(v);
        }
        assert_eq!(h.quantile(0.5), Some(49.0));
        let mut h = Hist::new();
        for v in 1..=100_000u64 {
            h.add(v * 100);
        }
        for q in [0.01, 0.5, 0.99] {
            let got = h.quantile(q).unwrap();
            let want = q * 10_000_000.0;
            assert!((got - want).abs() / want < 0.008, "{q}: {got} vs {want}");
        }
        assert_eq!(h.quantile(0.0), Some(100.0));
        assert_eq!(h.quantile(1.0), Some(10_000_000.0));
    }

    #[test]
    fn merge_adds_counts() {
        let (mut a, mut b) = (Hist::new(), Hist::new());
        a.add(10);
        b.add(1_000_000);
        b.add(2_000_000);
        a.merge(&b);
        assert_eq!((a.n, a.min, a.max), (3, 10, 2_000_000));
        assert!((a.quantile(0.5).unwrap() - 1_000_000.0).abs() < 8000.0);
    }

    #[test]
    fn huge_values_are_clamped_not_lost() {
        let mut h = Hist::new();
        h.add(u64::MAX);
        assert_eq!(h.n, 1);
        assert!(h.quantile(0.5).is_some());
    }
}
