//! A small deterministic generator (SplitMix64) for the checks' own choices (where to cut
//! an input) and for the bounded random run of `cargo test`: the same seed, the same inputs.

pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// A generator seeded by `data` itself, so that a check gives one outcome per input.
    pub fn from_bytes(data: &[u8]) -> Rng {
        let mut seed = 0xcbf2_9ce4_8422_2325u64;
        for b in data {
            seed = (seed ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        (self.next_u64() % n as u64) as usize
    }

    /// Ascending cut points inside `0..len`: `len` pieces of one byte when `single`, else a
    /// few random pieces.
    pub fn cuts(&mut self, len: usize, single: bool) -> Vec<usize> {
        if single {
            return (1..len).collect();
        }
        let mut cuts: Vec<usize> = (0..self.below(8) + 1)
            .map(|_| self.below(len + 1))
            .collect();
        cuts.sort_unstable();
        cuts.dedup();
        cuts
    }
}

/// `data` cut at `cuts` (ascending): the pieces, empty ones included.
pub fn pieces<'a>(data: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut at = 0;
    let mut out = Vec::with_capacity(cuts.len() + 1);
    for &cut in cuts {
        let cut = cut.clamp(at, data.len());
        out.push(&data[at..cut]);
        at = cut;
    }
    out.push(&data[at..]);
    out
}
