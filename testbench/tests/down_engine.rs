//! The down engine's lane product in RTL, Verilated, against rule 3 of `lacuna_spec::a8w4`
//! (`down_product`: `(f32(a) * f32(scale)) * f32(q)`) bit for bit: every finite FP16 operand
//! with every INT4 weight at edge-case scales, random triples, and the non-finite operands
//! flagged; then a whole down column added into an output row in load order through the RTL
//! product and the RTL FP32 adder, equal to the model's `down_engine::accumulate`.

use half::f16;
use lacuna_model::expert_unit::down_engine;
use lacuna_spec::a8w4::{down_product, Int4Vector, GROUP, INT4_MAX, INT4_MIN};
use lacuna_testbench::model::{PortId, Verilated};
use lacuna_testbench::verilated;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

struct Lane {
    rtl: Verilated,
    a: PortId,
    scale: PortId,
    q: PortId,
    product: PortId,
    invalid: PortId,
}

impl Lane {
    fn new() -> Lane {
        let rtl = Verilated::new("lacuna_down_product").expect("this test needs the RTL built (Verilator)");
        let p = |n: &str| rtl.port(n).unwrap();
        let (a, scale, q, product, invalid) = (p("a"), p("scale"), p("q"), p("product"), p("invalid"));
        Lane { rtl, a, scale, q, product, invalid }
    }

    /// The RTL's (product bits, invalid) for one triple.
    fn run(&mut self, a: u16, scale: u16, q: i8) -> (u32, bool) {
        self.rtl.set(self.a, a as u64);
        self.rtl.set(self.scale, scale as u64);
        self.rtl.set(self.q, (q as u8 & 0xf) as u64);
        self.rtl.eval();
        (self.rtl.get(self.product) as u32, self.rtl.get(self.invalid) != 0)
    }

    /// Checks one triple against the spec; returns whether it was a finite (compared) one.
    fn check(&mut self, a: u16, scale: u16, q: i8) -> bool {
        let (got, invalid) = self.run(a, scale, q);
        let (x, s) = (f16::from_bits(a), f16::from_bits(scale));
        let finite = x.is_finite() && s.is_finite();
        assert_eq!(invalid, !finite, "invalid for {a:#06x} x {scale:#06x}");
        if finite {
            let want = down_product(x, s, q).to_bits();
            assert_eq!(got, want, "({x} x {s}) x {q}: rtl {got:#010x}, spec {want:#010x}");
        }
        finite
    }
}

const INT4: std::ops::RangeInclusive<i8> = INT4_MIN..=INT4_MAX;

#[test]
fn every_fp16_operand_times_every_int4_weight_at_edge_scales_is_the_specs_product() {
    let mut lane = Lane::new();
    // One, the smallest subnormal and normal, the largest finite, a negative scale, a zero, a
    // scale with every fraction bit set (its products round).
    let scales: [u16; 7] = [0x3c00, 0x0001, 0x0400, 0x7bff, 0xb555, 0x0000, 0x3fff];
    let mut compared = 0;
    for &scale in &scales {
        for a in 0..=u16::MAX {
            for q in INT4 {
                compared += lane.check(a, scale, q) as usize;
            }
        }
    }
    // Every finite FP16 operand (63,488 of 65,536 patterns) with each scale and weight.
    assert_eq!(compared, 63_488 * scales.len() * 16);
}

#[test]
fn two_million_random_triples_and_every_non_finite_operand_agree_with_the_spec() {
    let mut lane = Lane::new();
    let mut rng = ChaCha8Rng::seed_from_u64(0x646f776e);
    for _ in 0..2_000_000 {
        lane.check(rng.random(), rng.random(), rng.random_range(INT4));
    }
    for bits in [0x7c00u16, 0xfc00, 0x7e00, 0xfe01] {
        assert!(!lane.check(bits, 0x3c00, 3) && !lane.check(0x3c00, bits, -8));
    }
}

#[test]
fn a_down_column_added_into_an_output_row_through_the_rtl_equals_the_models_accumulation() {
    let mut lane = Lane::new();
    let mut rng = ChaCha8Rng::seed_from_u64(0x636f6c);
    // Rows of SmolLM2-135M's hidden size (576) and a short last group; synthetic values over
    // several binades, the down operands of a streamed expert, channel by channel in load order.
    for hidden in [576usize, 40] {
        let mut y_model = vec![0f32; hidden];
        let mut y_rtl = vec![0u32; hidden];
        for _channel in 0..24 {
            let column: Vec<f32> = (0..hidden)
                .map(|_| rng.random_range(-1.0f32..1.0).powi(3) * 2f32.powi(rng.random_range(-8..2)))
                .collect();
            let column = Int4Vector::quantize(&column).unwrap();
            let a = f16::from_f32(rng.random_range(-4.0f32..4.0) * 2f32.powi(rng.random_range(-10..6)));
            down_engine::accumulate(&mut y_model, a, &column);
            let (mut products, mut sums) = (Vec::new(), Vec::new());
            for r in 0..hidden {
                let (p, invalid) = lane.run(a.to_bits(), column.scale(r / GROUP).to_bits(), column.value(r));
                assert!(!invalid);
                products.push(p);
                sums.push(y_rtl[r]);
            }
            y_rtl = verilated::fp32_add(&sums, &products).unwrap();
        }
        for r in 0..hidden {
            assert_eq!(
                y_rtl[r],
                y_model[r].to_bits(),
                "hidden {hidden}, row {r}: rtl {}, model {}",
                f32::from_bits(y_rtl[r]),
                y_model[r]
            );
        }
    }
}
