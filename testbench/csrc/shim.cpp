// The C ABI between the Rust testbench and the Verilated models: one fused call per batch of
// operands (the combinational FP units), so that the cost of crossing the FFI is paid once.
// Each call makes its own VerilatedContext and model and destroys them before returning: a
// Verilated model must stay on the thread that made it, and nothing outlives a call.
#include <cstddef>
#include <cstdint>

#include "verilated.h"
#include "Vlacuna_fp16_mul.h"
#include "Vlacuna_fp32_add.h"

extern "C" {

void lacuna_fp16_mul_batch(const uint16_t* a, const uint16_t* b, uint32_t* product, uint8_t* invalid,
                           size_t n) {
    VerilatedContext context;
    Vlacuna_fp16_mul unit{&context, "fp16_mul"};
    for (size_t i = 0; i < n; ++i) {
        unit.a = a[i];
        unit.b = b[i];
        unit.eval();
        product[i] = unit.product;
        invalid[i] = unit.invalid;
    }
    unit.final();
}

void lacuna_fp32_add_batch(const uint32_t* a, const uint32_t* b, uint32_t* sum, size_t n) {
    VerilatedContext context;
    Vlacuna_fp32_add unit{&context, "fp32_add"};
    for (size_t i = 0; i < n; ++i) {
        unit.a = a[i];
        unit.b = b[i];
        unit.eval();
        sum[i] = unit.sum;
    }
    unit.final();
}

}  // extern "C"
