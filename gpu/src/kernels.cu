// lacuna's GPU kernels: spMspV y = W x over RLC-CSC, compiled at run time by NVRTC.
//
// The contract of every kernel (gpu/src/lib.rs has the whole of it):
// - the matrix is the flattened RlcMatrix of gpu/src/layout.rs: all panels' values (FP16 bits,
//   8 to a 16-byte word) and run lengths (4-bit, 8 to a 32-bit word) back to back, each panel
//   starting on a word; column pointers panel by panel (K + 1 each, relative to the panel);
//   a panel table {entry_base, row_start, rows};
// - column k takes part iff its activation's magnitude bits are nonzero and >= key (the FP16
//   threshold's bits: for finite non-negative FP16 values the order of the bits is the order of
//   the values), the rule of lacuna_spec::ActivationFilter;
// - a product is the exact FP32 product of two FP16 values (cvt.f32.f16 is exact, and so is the
//   FP32 product of two converted FP16 values: 22 significant bits at most, never below 2^-48),
//   so fmaf(w, x, acc) rounds exactly like acc + w * x: one round-to-nearest-even FP32 addition
//   of the product. The kernels use fmaf explicitly (one instruction); --fmad=false keeps the
//   compiler from fusing anything else;
// - rows come from the runs: row_j = j + sum_{l <= j} run_l within the column (spec/src/rlc.rs);
// - a padding entry (+0.0) is added like any other: its product is +-0.0, which cannot change an
//   accumulator that starts at +0.0 (lacuna_spec::numerics), so no test is spent on it.
//
// The kernels differ in who owns an accumulator and so in the order of additions:
// - lacuna_spmspv_golden: one warp owns a whole panel and visits its columns in increasing k, so
//   every row receives its products in the order of lacuna_golden::spmspv::column_order: the
//   result is bit-identical to it.
// - lacuna_spmspv_fast: in the spirit of the Celty kernel. A block owns one panel and a range of
//   columns; it compacts its active columns in shared memory (inactive columns are never
//   loaded), each warp decodes whole columns with 16-byte value loads and 32-bit run loads, a
//   warp-wide prefix sum gives the rows, and products are added into FP32 accumulators of the
//   whole panel in shared memory. Unlike Celty's kernel, each warp has accumulators of its own:
//   within a column every row occurs once, so a warp's lanes never collide and a plain
//   load-add-store suffices, where shared accumulators would need atomics (a float atomicAdd in
//   shared memory is a compare-and-swap loop on sm_90: ATOMS.CAST.SPIN in the SASS). At the end
//   the block sums its warps' accumulators row by row and either adds the nonzero sums into y
//   with atomicAdd (a native REDG.ADD.F32; y zeroed first) or stores them in a partial-sum
//   buffer, one row of it per column split, that lacuna_reduce_splits sums into y. The order of
//   additions varies from run to run; the result is checked against dense within the FP32 bound
//   (the bound holds for any order: every product passes through at most n - 1 additions).

typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned long long u64;

#define FULL_MASK 0xffffffffu

// One row panel of the flattened matrix (layout.rs: PanelDesc, same field order and size).
struct Panel {
    u64 entry_base;  // first stored entry of the panel in the flat arrays (a multiple of 8)
    u32 row_start;   // first row of y the panel owns
    u32 rows;        // rows of the panel
};

__device__ __forceinline__ float fp16_bits_to_f32(u16 h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}

__device__ __forceinline__ bool is_active(u16 xb, u32 key) {
    const u32 mag = xb & 0x7fffu;
    return mag != 0u && mag >= key;
}

// The run lengths of a word's entries [lo, hi) as prefix sums, without a loop: the nibbles outside
// [lo, hi) are cleared, the even and the odd entries' nibbles are spread one to a byte, and a
// multiplication by 0x01010101 sums each byte with the bytes below it (at most 4 x 15 = 60 in
// a byte, so no byte overflows). Byte b of `even` is then the sum of the runs of entries 0..=2b,
// byte b of `odd` that of entries 0..=2b+1; byte 3 of `odd` is the word's total.
struct WordRuns {
    u32 even, odd;
};

__device__ __forceinline__ WordRuns word_runs(u32 r, u32 lo, u32 hi) {
    const u32 from = lo >= 8u ? 0u : 0xffffffffu << (4u * lo);
    const u32 below = hi >= 8u ? 0xffffffffu : ~(0xffffffffu << (4u * hi));
    const u32 m = r & from & below;
    const u32 pe = (m & 0x0f0f0f0fu) * 0x01010101u;         // prefix sums of entries 0, 2, 4, 6
    const u32 po = ((m >> 4) & 0x0f0f0f0fu) * 0x01010101u;  // of entries 1, 3, 5, 7
    return WordRuns{pe + (po << 8), pe + po};
}

// One warp decodes the stored entries [s, e) of one column (indices relative to the panel's
// arrays `vals`/`runs`; a panel holds fewer than 2^31 entries, layout.rs checks it, so no index
// below overflows 32 bits) and adds w * xf into acc[row] for every entry, each row at most once.
// All 32 lanes must call it together with the same arguments.
//
// A warp step covers 32 words (256 entries), one word a lane. LOOKAHEAD steps go together (4 in the
// golden kernel, 3 in the fast one, whose register budget is 64): their loads are issued before
// any is used, their prefix sums over the warp are interleaved (the shuffles of one step do not
// wait for another's), and each lane computes its 8 rows independently of one another (row_j =
// the row before the word's first kept entry + the entries up to j + their runs, from
// word_runs) and reads the 8 accumulators before writing any (the rows are distinct, so the 8
// read-add-writes overlap instead of waiting for one another). The steps' additions are made in
// order of steps.
template <int LOOKAHEAD>
__device__ __forceinline__ void decode_column(const uint4* __restrict__ vals, const u32* __restrict__ runs,
                                              u32 s, u32 e, u32 rows, float xf, float* acc) {
    const u32 lane = threadIdx.x & 31u;
    const u32 wend = (e + 7u) >> 3;  // one past the column's last word
    int carry = -1;                  // the column's last row so far (-1: before its first)
    for (u32 w0 = s >> 3; w0 < wend; w0 += 32u * LOOKAHEAD) {
        uint4 v[LOOKAHEAD];
        u32 lo[LOOKAHEAD], hi[LOOKAHEAD];
        WordRuns wr[LOOKAHEAD];
        int incl[LOOKAHEAD];
#pragma unroll
        for (int u = 0; u < LOOKAHEAD; ++u) {
            const u32 w = w0 + 32u * u + lane;
            v[u] = make_uint4(0u, 0u, 0u, 0u);
            u32 r = 0u;
            if (w < wend) {
                v[u] = vals[w];
                r = runs[w];
            }
            const u32 first = w * 8u;  // the word's first entry (< 2^32)
            lo[u] = s > first ? min(s - first, 8u) : 0u;
            hi[u] = e > first ? min(e - first, 8u) : 0u;
            wr[u] = word_runs(r, lo[u], hi[u]);
            // The word's row steps (run + 1 per kept entry).
            incl[u] = (int)(wr[u].odd >> 24) + (int)(hi[u] > lo[u] ? hi[u] - lo[u] : 0u);
        }
        int excl[LOOKAHEAD];
#pragma unroll
        for (int u = 0; u < LOOKAHEAD; ++u) excl[u] = incl[u];
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
#pragma unroll
            for (int u = 0; u < LOOKAHEAD; ++u) {
                const int t = __shfl_up_sync(FULL_MASK, incl[u], d);
                if ((int)lane >= d) incl[u] += t;
            }
        }
#pragma unroll
        for (int u = 0; u < LOOKAHEAD; ++u) {
            excl[u] = carry + incl[u] - excl[u];  // the row before this lane's first kept entry
            carry += __shfl_sync(FULL_MASK, incl[u], 31);
        }
#pragma unroll
        for (int u = 0; u < LOOKAHEAD; ++u) {
            if (w0 + 32u * u >= wend) break;  // the same for every lane
            // Rows increase along the word, so checking its last row checks them all (a
            // validated matrix never fails this; it keeps a corrupted one inside the panel).
            const int last = excl[u] + (int)(wr[u].odd >> 24) + (int)(hi[u] > lo[u] ? hi[u] - lo[u] : 0u);
            const u32 keep = last < (int)rows ? (0xffu << lo[u]) & ~(0xffu << hi[u]) : 0u;
            const int row0 = excl[u] + 1 - (int)lo[u];
            const u32 half2[4] = {v[u].x, v[u].y, v[u].z, v[u].w};
            int row[8];
            float old[8];
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                const u32 pre = (((j & 1) ? wr[u].odd : wr[u].even) >> (8 * (j >> 1))) & 0xffu;
                row[j] = row0 + j + (int)pre;
                if (keep & (1u << j)) old[j] = acc[row[j]];
            }
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                if (keep & (1u << j)) {
                    const float w = fp16_bits_to_f32((u16)(half2[j >> 1] >> (16 * (j & 1))));
                    acc[row[j]] = __fmaf_rn(w, xf, old[j]);
                }
            }
        }
    }
}

// The deterministic golden kernel: one warp per panel, columns in increasing k.
// Launch: blocks of GOLDEN_WARPS warps, ceil(n_panels / GOLDEN_WARPS) blocks (layout.rs).
extern "C" __global__ void lacuna_spmspv_golden(const Panel* __restrict__ panels, u32 n_panels,
                                                const uint4* __restrict__ vals, const u32* __restrict__ runs,
                                                const u32* __restrict__ colptr, u32 cols,
                                                const u16* __restrict__ x, u32 key, float* __restrict__ y) {
    const u32 p = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (p >= n_panels) return;  // the whole warp leaves
    const u32 lane = threadIdx.x & 31u;
    const Panel pd = panels[p];
    float* acc = y + pd.row_start;
    for (u32 i = lane; i < pd.rows; i += 32u) acc[i] = 0.0f;  // accumulators start at +0.0
    __syncwarp();
    const u32* cp = colptr + (u64)p * ((u64)cols + 1u);
    const uint4* pv = vals + (pd.entry_base >> 3);
    const u32* pr = runs + (pd.entry_base >> 3);
    for (u32 k = 0; k < cols; ++k) {
        const u16 xb = x[k];
        if (!is_active(xb, key)) continue;
        // Within a column every row occurs once, so the lanes never touch the same accumulator.
        decode_column<4>(pv, pr, cp[k], cp[k + 1], pd.rows, fp16_bits_to_f32(xb), acc);
        __syncwarp();  // this column's additions are visible before the next column's
    }
}

// The fast kernel's warp steps a group: 3 fits its 64 registers without spilling (4 spills).
#define FAST_LOOKAHEAD 3

// The fast kernel. Launch: grid (n_panels, splits), blocks of whole warps, dynamic shared memory
// = warps x acc_words floats (acc_words >= the tallest panel, a multiple of 4), then
// cols_per_split words of active columns and one word counting them (layout.rs: FastGeometry).
// partial == nullptr: add into y (zeroed before) with atomicAdd; else store the block's sums in
// partial[split * m + row] for lacuna_reduce_splits. __launch_bounds__(1024): every tuning
// candidate can launch, and the register budget (64) leaves room for half a multiprocessor.
extern "C" __global__ void __launch_bounds__(1024)
lacuna_spmspv_fast(const Panel* __restrict__ panels, const uint4* __restrict__ vals, const u32* __restrict__ runs,
                   const u32* __restrict__ colptr, u32 cols, u32 cols_per_split, u32 acc_words,
                   const u16* __restrict__ x, u32 key, float* __restrict__ y, float* __restrict__ partial, u32 m) {
    extern __shared__ float4 smem4[];
    float* smem = (float*)smem4;
    const u32 tid = threadIdx.x, lane = tid & 31u, warp = tid >> 5, warps = blockDim.x >> 5;
    float* acc = smem + warp * acc_words;  // this warp's own accumulators
    u32* active = (u32*)(smem + warps * acc_words);
    u32& n_active = active[cols_per_split];
    const Panel pd = panels[blockIdx.x];
    const u32 k0 = blockIdx.y * cols_per_split;
    const u32 k1 = min(cols, k0 + cols_per_split);
    for (u32 i = lane; i < (pd.rows + 3u) / 4u; i += 32u) ((float4*)acc)[i] = make_float4(0.f, 0.f, 0.f, 0.f);
    if (tid == 0) n_active = 0u;
    __syncthreads();
    // The activation scan: each warp compacts its active columns with one shared atomic.
    for (u32 c = k0; c < k1; c += blockDim.x) {
        const u32 k = c + tid;
        const bool a = k < k1 && is_active(x[k], key);
        const u32 mask = __ballot_sync(FULL_MASK, a);
        u32 base = 0u;
        if (lane == 0 && mask != 0u) base = atomicAdd(&n_active, (u32)__popc(mask));
        base = __shfl_sync(FULL_MASK, base, 0);
        if (a) active[base + __popc(mask & ((1u << lane) - 1u))] = k;
    }
    __syncthreads();
    const u32 n = n_active;
    const u32* cp = colptr + (u64)blockIdx.x * ((u64)cols + 1u);
    const uint4* pv = vals + (pd.entry_base >> 3);
    const u32* pr = runs + (pd.entry_base >> 3);
    for (u32 i = warp; i < n; i += warps) {
        const u32 k = active[i];
        decode_column<FAST_LOOKAHEAD>(pv, pr, cp[k], cp[k + 1], pd.rows, fp16_bits_to_f32(x[k]), acc);
        __syncwarp();  // this column's additions are visible to every lane before the next column's
    }
    __syncthreads();
    for (u32 i = tid; i < pd.rows; i += blockDim.x) {
        float a = 0.0f;
        for (u32 w = 0; w < warps; ++w) a += smem[w * acc_words + i];
        if (partial != nullptr) {
            partial[(u64)blockIdx.y * m + pd.row_start + i] = a;
        } else if (a != 0.0f) {
            atomicAdd(&y[pd.row_start + i], a);  // adding +0.0 could not change y
        }
    }
}

// y[i] = the sum over splits of partial[split * m + i]. Launch: blocks of 1024 threads, one block
// per 32 rows (layout.rs: reduce_launch); warp w of a block sums the splits w, w + 32, ... of the
// block's 32 rows (lane = row, so each load is one coalesced 128-byte line), then the block adds
// the 32 warps' sums.
extern "C" __global__ void __launch_bounds__(1024)
lacuna_reduce_splits(const float* __restrict__ partial, u32 splits, u32 m, float* __restrict__ y) {
    __shared__ float part[32][33];
    const u32 lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    const u32 i = blockIdx.x * 32u + lane;
    float a = 0.0f;
    if (i < m) {
#pragma unroll 4
        for (u32 sp = warp; sp < splits; sp += 32u) a += partial[(u64)sp * m + i];
    }
    part[warp][lane] = a;
    __syncthreads();
    if (warp == 0) {
        float sum = 0.0f;
        for (u32 w = 0; w < 32u; ++w) sum += part[w][lane];
        if (i < m) y[i] = sum;
    }
}

// Reads `words` 16-byte words so that the L2 cache holds none of the timed kernel's data before a
// timed run. Reads leave clean lines, which cost no write-back when the timed kernel evicts them
// (a memset would leave dirty ones). The buffer holds zeros, so the store never happens, but the
// compiler cannot know that and must keep the loads.
extern "C" __global__ void lacuna_flush_l2(const uint4* __restrict__ buf, u64 words, u32* __restrict__ sink) {
    u32 acc = 0u;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < words; i += (u64)gridDim.x * blockDim.x) {
        const uint4 v = buf[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u) sink[0] = acc;
}
