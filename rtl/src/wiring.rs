//! Helpers for building blocks: `Vec`s of signals and constants, and rust-hdl Verilog AST
//! statements for blocks whose wiring is generated in Rust loops.
//!
//! rust-hdl's `#[hdl_gen]` indexes only one level of `Vec` per signal path: `lanes[l].free` works,
//! `lanes[l].push_target[k]` does not. Blocks that wire `Vec`s of sub-blocks with `Vec` ports
//! (`route::Route`, `backend::Backend`) therefore write their `hdl` as a list of assignments
//! built here, and their `update` as the same copies in Rust.

use rust_hdl::core::ast::{VerilogExpression, VerilogOp, VerilogStatement};
use rust_hdl::prelude::*;

/// `n` default values (signals, registers, sub-blocks).
pub fn many<T: Default>(n: usize) -> Vec<T> {
    (0..n).map(|_| T::default()).collect()
}

/// Constants 0..n of width N: rust-hdl can index with a loop variable but not compare with one.
pub fn index_constants<const N: usize>(n: usize) -> Vec<Constant<Bits<N>>> {
    (0..n).map(|i| Constant::new((i as LiteralType).into())).collect()
}

/// A constant of width N.
pub fn constant<const N: usize>(value: u64) -> Constant<Bits<N>> {
    Constant::new((value as LiteralType).into())
}

/// A signal by its rust-hdl path (`["lanes", 2, "free"]` is `lanes$2$free`).
pub fn sig(path: &[&dyn std::fmt::Display]) -> VerilogExpression {
    VerilogExpression::Signal(path.iter().map(|p| p.to_string()).collect::<Vec<_>>().join("$"))
}

/// `to = from;`
pub fn assign(to: VerilogExpression, from: VerilogExpression) -> VerilogStatement {
    VerilogStatement::Assignment(to, from)
}

/// The reduction of `terms` with `op` (`a op b op c ...`); `terms` must not be empty.
pub fn reduce(terms: Vec<VerilogExpression>, op: VerilogOp) -> VerilogExpression {
    let mut terms = terms.into_iter();
    let first = terms.next().expect("at least one term");
    terms.fold(first, |acc, t| VerilogExpression::Binary(Box::new(acc), op.clone(), Box::new(t)))
}
