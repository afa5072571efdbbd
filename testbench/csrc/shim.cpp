// The C ABI between the Rust testbench and the Verilated models: one fused call per batch of
// operands (the combinational FP units), so that the cost of crossing the FFI is paid once.
// Each call makes its own VerilatedContext and model and destroys them before returning: a
// Verilated model must stay on the thread that made it, and nothing outlives a call.
#include <cstddef>
#include <cstdint>

#include "verilated.h"
#include "Vlacuna_fp16_mul.h"
#include "Vlacuna_fp32_add.h"

namespace {

// Evaluates `Unit` on every operand pair; `read(unit, i)` stores output i.
template <class Unit, class Operand, class Read>
void batch(const char* name, const Operand* a, const Operand* b, size_t n, Read read) {
    VerilatedContext context;
    Unit unit{&context, name};
    for (size_t i = 0; i < n; ++i) {
        unit.a = a[i];
        unit.b = b[i];
        unit.eval();
        read(unit, i);
    }
    unit.final();
}

}  // namespace

extern "C" {

void lacuna_fp16_mul_batch(const uint16_t* a, const uint16_t* b, uint32_t* product, uint8_t* invalid,
                           size_t n) {
    batch<Vlacuna_fp16_mul>("fp16_mul", a, b, n, [&](const Vlacuna_fp16_mul& u, size_t i) {
        product[i] = u.product;
        invalid[i] = u.invalid;
    });
}

void lacuna_fp32_add_batch(const uint32_t* a, const uint32_t* b, uint32_t* sum, size_t n) {
    batch<Vlacuna_fp32_add>("fp32_add", a, b, n, [&](const Vlacuna_fp32_add& u, size_t i) { sum[i] = u.sum; });
}

}  // extern "C"
