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
// * scan_tiles: a warp per LINES lines, chunks of W elements of each line staged through
//   shared memory so loads and stores are coalesced along the axis (for unit axis
//   strides), each lane then stepping its own line's chunk in order.

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

// Warps of a scan_tiles block staging W elements of LINES lines each: at most 33 KiB of
// static shared memory a block, at most 8 warps (the host's _scan_warps mirrors this).
__host__ __device__ constexpr int scan_warps(int w, int size, int lines) {
    const int fit = 33792 / (lines * (w + 1) * size);
    return fit > 8 ? 8 : (fit < 1 ? 1 : fit);
}

// One element of a line's tally, in place: the inclusive or the exclusive output.
template <typename S, bool EXCL, typename T> __device__ __forceinline__ void scan_step(T& e, T& a) {
    const T v = e;
    if (EXCL) {
        e = a;
        a = S::step(a, v);
    } else {
        a = S::step(a, v);
        e = a;
    }
}

// A warp per LINES (8, 16 or 32) lines, W (a multiple of 32) elements of each a chunk:
// every line's chunk is W contiguous elements (for a unit axis stride), W / 32 coalesced
// accesses in a row; lanes 0..LINES - 1 then step their lines' chunks. Fewer lines a warp
// make more warps (the lines bound the warps: a line is one sequential chain), so more
// loads in flight; the register cap (launch bounds) keeps them resident.
template <typename T, bool SUM, bool EXCL, int W, int LINES>
__global__ void __launch_bounds__(256, LINES >= 16 ? 64 / LINES : 5)
    scan_tiles(const T* x, T* out, const ScanParams p) {
    typedef Step<T, SUM> S;
    constexpr int WARPS = scan_warps(W, (int)sizeof(T), LINES);
    constexpr int U = W / 32;                      // loads a lane makes per line a chunk
    constexpr int LOADS = LINES == 32 ? 32 : 16;   // loads in flight (more spill under the register cap)
    constexpr int BATCH = LOADS / U < LINES ? LOADS / U : LINES;  // lines loaded together
    static_assert(W % 32 == 0 && U <= 16 && LINES <= 32 && LINES % BATCH == 0, "scan_tiles shape");
    __shared__ T tile[WARPS][LINES][W + 1];  // row i: line i's chunk (W + 1: lane i's walk hits bank (i + e) % 32)
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    T(&t)[LINES][W + 1] = tile[warp];
    const i64 groups = (p.lines + LINES - 1) / LINES;
    const i64 step = (i64)gridDim.x * WARPS;
    for (i64 g = (i64)blockIdx.x * WARPS + warp; g < groups; g += step) {
        const i64 line = g * LINES + lane;
        i64 xo = 0, oo = 0;
        if (lane < LINES && line < p.lines) line_offsets(line, p, xo, oo);
        const int valid = (int)min((i64)LINES, p.lines - g * LINES);  // lines of this group
        T a = S::start();
        for (i64 c0 = 0; c0 < p.n; c0 += W) {
            const int count = (int)min((i64)W, p.n - c0);
            // LOADS loads in flight (BATCH lines of W / 32 loads), then stored to the tile
#pragma unroll
            for (int i0 = 0; i0 < LINES; i0 += BATCH) {
                T v[BATCH][U];
#pragma unroll
                for (int r = 0; r < BATCH; ++r) {
                    const i64 base = __shfl_sync(0xffffffffu, xo, i0 + r);
#pragma unroll
                    for (int u = 0; u < U; ++u) {
                        const int e = u * 32 + lane;
                        if (i0 + r < valid && e < count) v[r][u] = x[base + (c0 + e) * p.ax];
                    }
                }
#pragma unroll
                for (int r = 0; r < BATCH; ++r) {
#pragma unroll
                    for (int u = 0; u < U; ++u) {
                        const int e = u * 32 + lane;
                        if (i0 + r < valid && e < count) t[i0 + r][e] = v[r][u];
                    }
                }
            }
            __syncwarp();
            if (lane < valid) {
                if (count == W) {
#pragma unroll 32
                    for (int e = 0; e < W; ++e) scan_step<S, EXCL>(t[lane][e], a);
                } else {
                    for (int e = 0; e < count; ++e) scan_step<S, EXCL>(t[lane][e], a);
                }
            }
            __syncwarp();
#pragma unroll 4  // (a full unroll spills under the register cap)
            for (int i = 0; i < LINES; ++i) {
                const i64 base = __shfl_sync(0xffffffffu, oo, i);
#pragma unroll
                for (int u = 0; u < U; ++u) {
                    const int e = u * 32 + lane;
                    if (i < valid && e < count) out[base + (c0 + e) * p.ao] = t[i][e];
                }
            }
            __syncwarp();
        }
    }
}
