// CUMULATIVE_SUMMATION, CUMULATIVE_PRODUCT on the GPU (dmlops.cuda.reduction), bit for bit.
//
// The host describes L lines of n elements: line l's coordinates are l decomposed over
// ksize (innermost last), its first element at input offset xb + sum(c * kx) and output
// offset ob + sum(c * ko); element j at + j * ax (input) and + j * ao (output). For
// AxisDirection DECREASING the host points xb / ob at the last element and negates ax /
// ao, so every kernel runs j = 0, 1, ... Each line is a sequential running tally in the
// input type, as the reference (float32 steps; FLOAT16 steps in float32 rounded to
// FLOAT16 each time, as NumPy's float16 add / multiply; integers wrap in their width);
// the sum starts from +0, the product from 1; EXCL writes the tally before the element.
// Every element is read before its output is written, so the output may be the input.
//
// * scan_lines: a thread per line (coalesced when the lines are adjacent in memory);
// * scan_tiles: a warp per 32 lines (blocks of 256 threads, 128 for 8-byte types), 32-element chunks staged through shared memory so
//   loads and stores are coalesced along the axis (for unit axis strides), each lane then
//   stepping its own line's chunk in order.

#include "common.cuh"

#define SCAN_MAX_DIMS 8

struct ScanParams {
    i64 lines;
    i64 n;
    i64 xb, ob;  // element offsets of every line's first element (the last for DECREASING)
    i64 ax, ao;  // axis strides (negated for DECREASING)
    i64 kdims;
    i64 ksize[SCAN_MAX_DIMS];
    i64 kx[SCAN_MAX_DIMS];
    i64 ko[SCAN_MAX_DIMS];
};

__device__ __forceinline__ void line_offsets(i64 l, const ScanParams& p, i64& xo, i64& oo) {
    xo = p.xb;
    oo = p.ob;
    for (int d = (int)p.kdims - 1; d >= 0; --d) {
        const i64 n = p.ksize[d];
        const i64 q = l / n;
        const i64 c = l - q * n;
        xo += c * p.kx[d];
        oo += c * p.ko[d];
        l = q;
    }
}

// One step of the tally in the type T.
template <typename T, bool SUM> struct Step {
    static __device__ __forceinline__ T start() { return SUM ? (T)0 : (T)1; }
    static __device__ __forceinline__ T step(T a, T v) {
        // integers: unsigned 64-bit arithmetic on the sign-extended bits, truncated: wraps in T's width
        const u64 r = SUM ? (u64)(i64)a + (u64)(i64)v : (u64)(i64)a * (u64)(i64)v;
        return (T)r;
    }
};
template <bool SUM> struct Step<float, SUM> {
    static __device__ __forceinline__ float start() { return SUM ? 0.0f : 1.0f; }
    static __device__ __forceinline__ float step(float a, float v) { return SUM ? __fadd_rn(a, v) : __fmul_rn(a, v); }
};
template <bool SUM> struct Step<double, SUM> {
    static __device__ __forceinline__ double start() { return SUM ? 0.0 : 1.0; }
    static __device__ __forceinline__ double step(double a, double v) { return SUM ? __dadd_rn(a, v) : __dmul_rn(a, v); }
};
template <bool SUM> struct Step<half_t, SUM> {
    static __device__ __forceinline__ half_t start() { return f2h(SUM ? 0.0f : 1.0f); }
    static __device__ __forceinline__ half_t step(half_t a, half_t v) {
        const float x = h2f(a), y = h2f(v);
        return f2h(SUM ? __fadd_rn(x, y) : __fmul_rn(x, y));
    }
};

template <typename T, bool SUM, bool EXCL>
__global__ void scan_lines(const T* x, T* out, const ScanParams p) {
    typedef Step<T, SUM> S;
    const i64 step = (i64)gridDim.x * blockDim.x;
    for (i64 l = (i64)blockIdx.x * blockDim.x + threadIdx.x; l < p.lines; l += step) {
        i64 xo, oo;
        line_offsets(l, p, xo, oo);
        const T* q = x + xo;
        T* o = out + oo;
        T a = S::start();
        for (i64 j = 0; j < p.n; ++j) {
            const T v = *q;
            if (EXCL) {
                *o = a;
                a = S::step(a, v);
            } else {
                a = S::step(a, v);
                *o = a;
            }
            q += p.ax;
            o += p.ao;
        }
    }
}

#define SCAN_TILE 32

template <typename T, bool SUM, bool EXCL>
__global__ void __launch_bounds__(256) scan_tiles(const T* x, T* out, const ScanParams p) {
    typedef Step<T, SUM> S;
    // 8 warps a block (4 for 8-byte types): at most 33 KiB of static shared memory
    constexpr int WARPS = sizeof(T) > 4 ? 4 : 8;
    __shared__ T tile[WARPS][SCAN_TILE][SCAN_TILE + 1];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    T(&t)[SCAN_TILE][SCAN_TILE + 1] = tile[warp];
    const i64 groups = (p.lines + 31) / 32;
    const i64 step = (i64)gridDim.x * (blockDim.x >> 5);
    for (i64 g = (i64)blockIdx.x * (blockDim.x >> 5) + warp; g < groups; g += step) {
        const i64 line = g * 32 + lane;
        i64 xo = 0, oo = 0;
        if (line < p.lines) line_offsets(line, p, xo, oo);
        const int valid = (int)min((i64)32, p.lines - g * 32);  // lines of this group
        T a = S::start();
        for (i64 c0 = 0; c0 < p.n; c0 += SCAN_TILE) {
            const int count = (int)min((i64)SCAN_TILE, p.n - c0);
            // load: row i of the tile is line i's chunk, lane = element
#pragma unroll  // 32 independent loads (stores) in flight
            for (int i = 0; i < 32; ++i) {
                const i64 base = __shfl_sync(0xffffffffu, xo, i);
                if (i < valid && lane < count) t[i][lane] = x[base + (c0 + lane) * p.ax];
            }
            __syncwarp();
            if (lane < valid) {
                for (int e = 0; e < count; ++e) {
                    const T v = t[lane][e];
                    if (EXCL) {
                        t[lane][e] = a;
                        a = S::step(a, v);
                    } else {
                        a = S::step(a, v);
                        t[lane][e] = a;
                    }
                }
            }
            __syncwarp();
#pragma unroll  // 32 independent loads (stores) in flight
            for (int i = 0; i < 32; ++i) {
                const i64 base = __shfl_sync(0xffffffffu, oo, i);
                if (i < valid && lane < count) out[base + (c0 + lane) * p.ao] = t[i][lane];
            }
            __syncwarp();
        }
    }
}
