// AVERAGE_POOLING(1), LP_POOLING(1) (window sums), AVERAGE_POOLING_GRAD (a gather) and
// MAX_UNPOOLING (a scatter with a conflict check).
//
// The window geometry and PoolParams are MAX_POOLING2's (pooling.cu, included): spatial
// dimensions as three (D, H, W), element strides of the logical {N, C, D, H, W} views
// (dmlops.cuda.pooling.pool_params fills it). Window element k of output o reads input
// coordinate o * Stride + k * Dilation - StartPadding; padding never takes part.
//
// Numerics are the reference's (dmlops.reference.pooling) step for step, so the results
// are bit-identical to it (except LP_POOLING with P other than 0, 1, 2: see pool_term):
//
// * window sums: a float32 sum from +0 of a term of every in-bounds element, in
//   row-major window order (kd, kh, kw), each addition rounded. Adding +0.0 for a padding
//   element instead of skipping it gives the same bits (a sum from +0 is never -0, and
//   s + 0 == s for every other s, NaN and inf included): the 2-D fast path does that.
// * x * x (LP 2) is __fmul_rn: a contracted fma(x, x, s) would round once, not twice.
// * AVERAGE_POOLING_GRAD: float64 sums of float32 shares in the reference's order,
//   rounded once to the tensor type (FLOAT16 straight from float64: cvt.rn.f16.f64).
#include "pooling.cu"

enum PoolSumMode { POOL_AVERAGE = 0, POOL_LP1 = 1, POOL_LP2 = 2, POOL_LPP = 3, POOL_LP0 = 4 };

struct SumParams {
    double p;      // LP_POOLING: float32(P) widened to float64 (the term's exponent)
    double inv_p;  // LP_POOLING: float32(1) / float32(P) widened to float64 (the finish's exponent)
    i64 full;      // AVERAGE_POOLING with IncludePadding: prod(WindowSize); -1: divide by the in-bounds count
};

// log(v) of a finite float64 v > 0 without libdevice's log (whose PTX approximates a
// reciprocal with flush-to-zero, rcp.approx.ftz.f64): v = m * 2^e with m in [sqrt(1/2),
// sqrt(2)), log(m) = 2 atanh(z) = 2 (z + z^3 / 3 + ...), z = (m - 1) / (m + 1), |z| <= 0.1716;
// 14 terms leave a remainder below 2^-60 of the sum. Within a few float64 ulps of log(v).
__device__ __forceinline__ double pool_log(double v) {
    int e;
    double m = frexp(v, &e);  // m in [0.5, 1)
    if (m < 0.70710678118654752440) {
        m *= 2.0;
        --e;
    }
    const double z = (m - 1.0) / (m + 1.0);
    const double z2 = z * z;
    double term = z, sum = 0.0;
#pragma unroll
    for (int k = 1; k < 28; k += 2) {
        sum += term * (1.0 / k);
        term *= z2;
    }
    return 2.0 * sum + (double)e * 0.69314718055994530942;
}

// b^y for float64 b >= 0 (b from float32) and y > 0: exp(y log b), relative error about
// 1e-13 at worst (|y log b| < 1000 ulp-scaled), far below float32 rounding.
__device__ __forceinline__ double pool_pow(double b, double y) {
    if (b == 0.0 || b > 1.79769313486231570815e+308) return b;  // 0^y = 0, inf^y = inf (y > 0)
    return exp(y * pool_log(b));
}

// What one in-bounds element adds to its window's float32 sum.
template <int MODE> __device__ __forceinline__ float pool_term(float v, double p) {
    if (MODE == POOL_AVERAGE) return v;
    if (MODE == POOL_LP1) return fabsf(v);
    if (MODE == POOL_LP2) return __fmul_rn(v, v);
    // POOL_LPP: the reference's DirectML power, a float64 power of |v| (libm's pow there,
    // pool_pow here) rounded to float32, NaN as 0. Both are far more accurate than float32,
    // so after the rounding they agree except next to a float32 rounding boundary: the
    // reference's own stated tolerance for these P. (libdevice's pow would serve as well,
    // but its PTX holds an .ftz instruction, which the compile test forbids.)
    if (v != v) return 0.0f;
    return (float)pool_pow((double)fabsf(v), p);
}

// A window's float32 result from its sum and its number of in-bounds elements.
template <int MODE> __device__ __forceinline__ float pool_finish(float total, i64 count, const SumParams& s) {
    if (MODE == POOL_AVERAGE) return total / (float)(s.full >= 0 ? s.full : count);  // 0 / 0 = NaN: padding only
    if (MODE == POOL_LP1) return total;
    if (MODE == POOL_LP2) return sqrtf(total);                     // --prec-sqrt=true: correctly rounded
    if (MODE == POOL_LPP) return (float)pool_pow((double)total, s.inv_p);  // total >= 0, never NaN (NaN terms are 0)
    // POOL_LP0: |x|^0 = 1 for every in-bounds element, then s^(1/0) = s^inf
    return count > 1 ? __int_as_float(0x7f800000) : (float)count;
}

// One thread per output element, any window (1-D to 3-D, dilations, zero Strides or
// WindowSize, windows past the input). Grid-stride over p.count outputs.
template <typename T, int MODE, typename I>
__global__ void __launch_bounds__(256) pool_sum(const T* __restrict__ x, T* __restrict__ y, const PoolParams p,
                                                const SumParams s) {
    const I step = (I)gridDim.x * (I)blockDim.x;
    for (I t = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; t < (I)p.count; t += step) {
        const PoolPosition<I> q = pool_position(t, p);
        float total = 0.0f;
        i64 count = 0;
        for_window<T, I>(pool_plane(x, p, q), p, q, [&](const T& value, I, I, I, I) {
            ++count;
            if (MODE != POOL_LP0) total += pool_term<MODE>(Num<T>::to_acc(value), s.p);
        });
        y[q.n * (I)p.y_stride[0] + q.c * (I)p.y_stride[1] + q.od * (I)p.y_stride[2] + q.oh * (I)p.y_stride[3] +
          q.ow * (I)p.y_stride[4]] = Num<T>::from_acc(pool_finish<MODE>(total, count, s));
    }
}

// 2-D fast path: window KH x KW and stride SH x SW known at compile time, dilation 1,
// M horizontally adjacent outputs per thread sharing their input columns (each column
// loaded and its term formed once), 32-bit offsets (host-checked), the thread index
// decomposed by fast_div (q: groups of M outputs per row, OH, C). Every output's sum
// sees the same additions in the same order as pool_sum's (padding adds +0.0, see the
// top of the file). MODE: POOL_AVERAGE, POOL_LP1 or POOL_LP2.
template <typename T, int MODE, int KH, int KW, int SH, int SW, int M>
__global__ void __launch_bounds__(256) pool_sum_k2d(const T* __restrict__ x, T* __restrict__ y, const PoolParams p,
                                                    const PoolDivParams q, const SumParams s) {
    constexpr int NC = (M - 1) * SW + KW;  // input columns of the M windows
    const u32 t = blockIdx.x * 256u + threadIdx.x;
    if (t >= (u32)q.count) return;
    const PlaneItem it = plane_item(t, q.dv, q.div);
    const int oh = it.row, ow0 = it.group * M;
    const int H = (int)p.in_size[1], W = (int)p.in_size[2], OW = (int)p.out_size[2];
    const int h0 = oh * SH - (int)p.pad[1], w0 = ow0 * SW - (int)p.pad[2];
    const int xs3 = (int)p.x_stride[3], xs4 = (int)p.x_stride[4];
    const T* plane = x + (int)it.n * (int)p.x_stride[0] + (int)it.c * (int)p.x_stride[1];
    bool cok[NC];
#pragma unroll
    for (int j = 0; j < NC; ++j) cok[j] = w0 + j >= 0 && w0 + j < W;
    float total[M];
#pragma unroll
    for (int m = 0; m < M; ++m) total[m] = 0.0f;
    int rows = 0;
#pragma unroll
    for (int kh = 0; kh < KH; ++kh) {
        const int ih = h0 + kh;
        if (ih < 0 || ih >= H) continue;
        ++rows;
        const T* rp = plane + ih * xs3;
        float v[NC];
#pragma unroll
        for (int j = 0; j < NC; ++j) v[j] = cok[j] ? pool_term<MODE>(Num<T>::to_acc(rp[(w0 + j) * xs4]), s.p) : 0.0f;
#pragma unroll
        for (int m = 0; m < M; ++m) {
#pragma unroll
            for (int kw = 0; kw < KW; ++kw) total[m] += v[m * SW + kw];
        }
    }
    T* yp = y + (int)it.n * (int)p.y_stride[0] + (int)it.c * (int)p.y_stride[1] + oh * (int)p.y_stride[3];
#pragma unroll
    for (int m = 0; m < M; ++m) {
        if (ow0 + m >= OW) break;
        int cols = 0;
#pragma unroll
        for (int kw = 0; kw < KW; ++kw) cols += cok[m * SW + kw] ? 1 : 0;
        yp[(ow0 + m) * (int)p.y_stride[4]] = Num<T>::from_acc(pool_finish<MODE>(total[m], (i64)(rows * cols), s));
    }
}

// -- AVERAGE_POOLING_GRAD --------------------------------------------------------------------
//
// PoolParams as MAX_POOLING_GRAD's: in_size = OutputGradientTensor's spatial sizes (the
// forward input), out_size = InputGradientTensor's, y_stride = InputGradientTensor's
// strides, z_stride = OutputGradientTensor's, count = OutputGradient elements.
struct AvgGradParams {
    i64 include_padding;  // the divisor counts the window inside the padded input (erratum E171)
    i64 active;           // 0 when a Stride is 0: DirectML sends nothing anywhere (zeros out)
    i64 end_pad[3];
};

// Window o's part along one axis inside [0, n), or with IncludePadding inside the padded
// input [-a, n + e) (descs.pooling.average_divisors; WindowSize k, Dilation 1).
__device__ __forceinline__ i64 divisor_axis(i64 o, i64 s, i64 k, i64 a, i64 e, i64 n, bool include) {
    const i64 start = o * s - a;
    const i64 lo = include ? -a : 0, hi = include ? n + e : n;
    const i64 top = start + k < hi ? start + k : hi;
    const i64 bottom = start > lo ? start : lo;
    return top > bottom ? top - bottom : 0;
}

template <typename T> struct StoreF64;
template <> struct StoreF64<float> {
    static __device__ __forceinline__ float of(double v) { return (float)v; }  // cvt.rn.f32.f64
};
template <> struct StoreF64<half_t> {
    static __device__ __forceinline__ half_t of(double v) {  // one rounding, as NumPy's float64 -> float16
        half_t h;
        asm("cvt.rn.f16.f64 %0, %1;" : "=h"(h.bits) : "d"(v));
        return h;
    }
};

// A gather: each OutputGradient element sums share(o) = float32(dy[o]) / float32(divisor(o))
// in float64 over the windows o holding it, in increasing window offset (kd, kh, kw)
// row-major -- the order of the reference's additions (one bincount per offset), i.e. the
// windows in decreasing (od, oh, ow) -- from +0, and is stored once. No atomics.
template <typename T, typename I>
__global__ void __launch_bounds__(256) avg_pool_grad(const T* __restrict__ dy, T* __restrict__ dx, const PoolParams p,
                                                     const AvgGradParams g) {
    const I step = (I)gridDim.x * (I)blockDim.x;
    const bool include = g.include_padding != 0;
    for (I t = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; t < (I)p.count; t += step) {
        I r = t;
        const I iw = r % (I)p.in_size[2];
        r /= (I)p.in_size[2];
        const I ih = r % (I)p.in_size[1];
        r /= (I)p.in_size[1];
        const I id = r % (I)p.in_size[0];
        r /= (I)p.in_size[0];
        const I c = r % (I)p.c;
        const I n = r / (I)p.c;
        double acc = 0.0;
        if (g.active) {  // every Stride >= 1 here (axis_range divides by it)
            const T* gplane = dy + n * (I)p.y_stride[0] + c * (I)p.y_stride[1];
            const AxisRange<I> rd = axis_range<I>(id, (I)p.window[0], (I)p.stride[0], (I)p.pad[0], (I)p.dil[0],
                                                  (I)p.out_size[0]);
            const AxisRange<I> rh = axis_range<I>(ih, (I)p.window[1], (I)p.stride[1], (I)p.pad[1], (I)p.dil[1],
                                                  (I)p.out_size[1]);
            const AxisRange<I> rw = axis_range<I>(iw, (I)p.window[2], (I)p.stride[2], (I)p.pad[2], (I)p.dil[2],
                                                  (I)p.out_size[2]);
            for (I od = rd.hi; od >= rd.lo; --od) {
                if (window_offset<I>(rd.top, od, (I)p.stride[0], (I)p.dil[0]) < 0) continue;
                const i64 cd = divisor_axis(od, p.stride[0], p.window[0], p.pad[0], g.end_pad[0], p.in_size[0], include);
                for (I oh = rh.hi; oh >= rh.lo; --oh) {
                    if (window_offset<I>(rh.top, oh, (I)p.stride[1], (I)p.dil[1]) < 0) continue;
                    const i64 ch =
                        divisor_axis(oh, p.stride[1], p.window[1], p.pad[1], g.end_pad[1], p.in_size[1], include);
                    for (I ow = rw.hi; ow >= rw.lo; --ow) {
                        if (window_offset<I>(rw.top, ow, (I)p.stride[2], (I)p.dil[2]) < 0) continue;
                        const i64 cw =
                            divisor_axis(ow, p.stride[2], p.window[2], p.pad[2], g.end_pad[2], p.in_size[2], include);
                        const float v = Num<T>::to_acc(
                            gplane[od * (I)p.y_stride[2] + oh * (I)p.y_stride[3] + ow * (I)p.y_stride[4]]);
                        acc += (double)(v / (float)(cd * ch * cw));  // the float32 division, as the forward's
                    }
                }
            }
        }
        dx[n * (I)p.z_stride[0] + c * (I)p.z_stride[1] + id * (I)p.z_stride[2] + ih * (I)p.z_stride[3] +
           iw * (I)p.z_stride[4]] = StoreF64<T>::of(acc);
    }
}

// -- MAX_UNPOOLING ---------------------------------------------------------------------------
//
// Data movement on raw bits (B: u8, u16, u32 or u64 by element size). The host zeroes a
// packed flat scratch of the output's element count, max_unpool_scatter writes every input
// element whose index (low 32 bits, erratum E170) is below that count, then
// max_unpool_check raises *flag where an element's target holds other bits: some writer
// of every target written with different bits sees that (whichever write won), and no
// writer of a target written with equal bits does. The host reads the flag once and only
// then copies the scratch into the caller's output.
struct UnpoolParams {
    i64 count;      // input elements
    i64 out_count;  // output elements (the flat scratch)
    i64 size[4];    // InputTensor's (and IndicesTensor's) Sizes
    i64 x_stride[4];
    i64 i_stride[4];
};

template <typename B, typename IDX>
__global__ void __launch_bounds__(256) max_unpool_scatter(const B* __restrict__ x, const IDX* __restrict__ idx,
                                                          B* __restrict__ out, const UnpoolParams p) {
    const i64 step = (i64)gridDim.x * (i64)blockDim.x;
    for (i64 t = (i64)blockIdx.x * (i64)blockDim.x + (i64)threadIdx.x; t < p.count; t += step) {
        i64 r = t, xo = 0, io = 0;
#pragma unroll
        for (int d = 3; d >= 0; --d) {
            const i64 k = r % p.size[d];
            r /= p.size[d];
            xo += k * p.x_stride[d];
            io += k * p.i_stride[d];
        }
        const u64 target = (u64)idx[io] & 0xffffffffull;
        if (target < (u64)p.out_count) out[target] = x[xo];
    }
}

template <typename B, typename IDX>
__global__ void __launch_bounds__(256) max_unpool_check(const B* __restrict__ x, const IDX* __restrict__ idx,
                                                        const B* __restrict__ out, int* __restrict__ flag,
                                                        const UnpoolParams p) {
    const i64 step = (i64)gridDim.x * (i64)blockDim.x;
    for (i64 t = (i64)blockIdx.x * (i64)blockDim.x + (i64)threadIdx.x; t < p.count; t += step) {
        i64 r = t, xo = 0, io = 0;
#pragma unroll
        for (int d = 3; d >= 0; --d) {
            const i64 k = r % p.size[d];
            r /= p.size[d];
            xo += k * p.x_stride[d];
            io += k * p.i_stride[d];
        }
        const u64 target = (u64)idx[io] & 0xffffffffull;
        if (target < (u64)p.out_count && out[target] != x[xo]) *flag = 1;  // every racer stores 1
    }
}
