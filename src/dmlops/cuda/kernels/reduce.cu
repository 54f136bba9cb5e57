// REDUCE (every function), ARGMAX, ARGMIN on the GPU (dmlops.cuda.reduction).
//
// The host collapses a reduction to M output rows of R reduced elements: row r's kept
// coordinates are r decomposed over ksize (innermost last), its input offset
// sum(c * kx) and output offset sum(c * ko); element j (0 <= j < R, row-major over the
// reduced axes in axis order) is at input offset + j * rs. Three kernels:
//
// * reduce_rows: a block per (row, split), its threads striding over the row (coalesced
//   when rs is 1; VEC > 1 loads 16-byte vectors), a warp-shuffle then shared-memory tree;
// * reduce_cols: a thread per (row, split), walking its rows' elements in order
//   (coalesced when the innermost kept stride is 1: adjacent threads, adjacent rows);
// * reduce_combine: a thread per row, folding the splits' partial states in split
//   order (deterministic: no atomics, the same result on every run).
// With p.splits == 1 the first two write the output themselves; else partial states go
// to ws[split * rows + row] and reduce_combine finishes.
//
// Numerics (the reference's, dmlops.reference.reduction):
// * float SUM, AVERAGE, L1, L2, SUM_SQUARE, LOG_SUM, LOG_SUM_EXP, MULTIPLY accumulate in
//   float64 from +0 (MULTIPLY from 1), the float32 roundings of the reference kept (the
//   sum of squares before sqrt, the sum before log, each exp), the result rounded once to
//   the output type. Only the order of the float64 additions differs from the reference.
// * integer SUM / MULTIPLY wrap in 64 bits (unsigned arithmetic on the two's complement
//   bits), then truncate to the type: exactly the reference's wrap-around.
// * ARG*: (key, index) pairs under a total order (the better key, ties to the lower
//   index, or the higher one for DECREASING), so any tree gives the scan's result: NaN is
//   skipped (no candidate); index 0 when the row's first element is NaN or every element
//   is NaN (DirectML's scan: a NaN first element is never replaced).
// * MAX / MIN: the value alone; NaN skipped, all NaN gives -inf (MAX) / +inf (MIN), of
//   equal values the first one's bits (-0 vs +0): see the value-only Op and first_zero.

#include "common.cuh"

#define F_SUM 0
#define F_AVERAGE 1
#define F_L1 2
#define F_L2 3
#define F_SUM_SQUARE 4
#define F_LOG_SUM 5
#define F_LOG_SUM_EXP 6
#define F_MULTIPLY 7
#define F_MAX 10
#define F_MIN 11
#define F_ARGMAX 12
#define F_ARGMIN 13
#define F_ARGMAX_LAST 14
#define F_ARGMIN_LAST 15

#define MAX_KEPT 8
#define COL_LOADS 8  // elements a reduce_cols thread loads at once

struct ReduceParams {
    i64 rows;    // M output elements
    i64 n;       // R reduced elements per row
    i64 rs;      // input stride of the reduced (flattened) axis
    i64 chunk;   // reduced elements per split (a multiple of VEC)
    i64 splits;  // splits per row (blockIdx.y of reduce_rows / reduce_cols)
    i64 kdims;   // kept dimensions (<= MAX_KEPT)
    i64 ksize[MAX_KEPT];
    i64 kx[MAX_KEPT];  // input strides of the kept dimensions
    i64 ko[MAX_KEPT];  // output strides of the kept dimensions
};

__device__ __forceinline__ void row_offsets(i64 r, const ReduceParams& p, i64& xo, i64& oo) {
    xo = 0;
    oo = 0;
    for (int d = (int)p.kdims - 1; d >= 0; --d) {
        const i64 n = p.ksize[d];
        const i64 q = r / n;
        const i64 c = r - q * n;
        xo += c * p.kx[d];
        oo += c * p.ko[d];
        r = q;
    }
}

template <typename T> struct IsFloat { static const bool value = false; };
template <> struct IsFloat<float> { static const bool value = true; };
template <> struct IsFloat<double> { static const bool value = true; };
template <> struct IsFloat<half_t> { static const bool value = true; };

// The comparison key of a value (FLOAT16 as float, exact; small integers widened to int).
template <typename T> struct KeyOf;
template <> struct KeyOf<float> { typedef float K; };
template <> struct KeyOf<half_t> { typedef float K; };
template <> struct KeyOf<double> { typedef double K; };
template <> struct KeyOf<i8> { typedef int K; };
template <> struct KeyOf<i16> { typedef int K; };
template <> struct KeyOf<i32> { typedef int K; };
template <> struct KeyOf<u8> { typedef unsigned K; };
template <> struct KeyOf<u16> { typedef unsigned K; };
template <> struct KeyOf<u32> { typedef unsigned K; };
template <> struct KeyOf<i64> { typedef long long K; };
template <> struct KeyOf<u64> { typedef unsigned long long K; };

template <typename T> __device__ __forceinline__ T from_f64(double v);
template <> __device__ __forceinline__ float from_f64<float>(double v) { return __double2float_rn(v); }
template <> __device__ __forceinline__ double from_f64<double>(double v) { return v; }
template <> __device__ __forceinline__ half_t from_f64<half_t>(double v) {
    half_t h;
    asm("cvt.rn.f16.f64 %0, %1;" : "=h"(h.bits) : "d"(v));  // one rounding, as NumPy's astype
    return h;
}

// float32 rounding of a float64 value, back in float64 (the reference's .astype(F32)).
__device__ __forceinline__ double f32_round(double v) { return (double)__double2float_rn(v); }

// Natural log in float64, accurate to a few float64 ulps (ample: the result is rounded to
// float32 or FLOAT16). libdevice's log starts from rcp.approx.ftz.f64, which the kernels'
// no-flush rule (tests/test_cuda_kernels_compile.py) keeps out of this file; here
// log(x) = e ln2 + 2 atanh((m - 1) / (m + 1)) for x = m 2^e, m in [sqrt(1/2), sqrt(2)),
// the series of atanh to f^21 (|f| < 0.172: the next term is below 2^-60 of the sum).
__device__ __forceinline__ double log_f64(double x) {
    if (!(x > 0.0) || x == __longlong_as_double(0x7ff0000000000000ll)) {
        if (x == 0.0) return -__longlong_as_double(0x7ff0000000000000ll);
        return x == x && x > 0.0 ? x : __longlong_as_double(0x7ff8000000000000ll);  // +inf; NaN for x < 0 or NaN
    }
    int e;
    double m = frexp(x, &e);  // [0.5, 1)
    if (m < 0.70710678118654752440) {
        m *= 2.0;
        e -= 1;
    }
    const double f = (m - 1.0) / (m + 1.0), f2 = f * f;
    double t = 1.0 / 21.0;
    t = t * f2 + 1.0 / 19.0;
    t = t * f2 + 1.0 / 17.0;
    t = t * f2 + 1.0 / 15.0;
    t = t * f2 + 1.0 / 13.0;
    t = t * f2 + 1.0 / 11.0;
    t = t * f2 + 1.0 / 9.0;
    t = t * f2 + 1.0 / 7.0;
    t = t * f2 + 1.0 / 5.0;
    t = t * f2 + 1.0 / 3.0;
    const double s = 2.0 * f + 2.0 * f * f2 * t;
    const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
    return (double)e * ln2_hi + ((double)e * ln2_lo + s);
}

// Op<T, OUT, F>: the State a thread folds its elements into (init, add in index order;
// add_any where the order of equal values may be lost, reduce_rows's strided threads),
// combine (a the earlier elements' state where the order matters), shfl and finish.
// FIXUP: reduce_rows's block then runs first_zero on its result.
template <typename T, typename OUT, int F, bool FLOAT = IsFloat<T>::value, bool EXT = (F >= F_MAX),
          bool ARG = (F >= F_ARGMAX)>
struct Op;

// Float sums and products in float64.
template <typename T, typename OUT, int F> struct Op<T, OUT, F, true, false, false> {
    typedef double State;
    static const bool FIXUP = false;
    static __device__ __forceinline__ State init() { return F == F_MULTIPLY ? 1.0 : 0.0; }
    static __device__ __forceinline__ void add(State& s, T v, i64) {
        const double x = (double)Num<T>::to_acc(v);
        if constexpr (F == F_SUM || F == F_AVERAGE || F == F_LOG_SUM) s += x;
        if constexpr (F == F_L1) s += fabs(x);
        if constexpr (F == F_L2 || F == F_SUM_SQUARE) s += x * x;  // exact in float64 (a float32 square)
        if constexpr (F == F_LOG_SUM_EXP) s += f32_round(exp(x));  // each exp a float32 value: exp(89) is inf
        if constexpr (F == F_MULTIPLY) s *= x;
    }
    static __device__ __forceinline__ void add_any(State& s, T v, i64 j) { add(s, v, j); }
    static __device__ __forceinline__ State combine(State a, State b) { return F == F_MULTIPLY ? a * b : a + b; }
    static __device__ __forceinline__ State shfl(State s, int o) { return __shfl_down_sync(0xffffffffu, s, o); }
    static __device__ __forceinline__ OUT finish(State s, const T*, i64 n) {
        double r = s;
        if constexpr (F == F_AVERAGE) r = s / (double)n;
        if constexpr (F == F_L2) r = sqrt(f32_round(s));  // the sum of squares is a float32 value
        if constexpr (F == F_LOG_SUM || F == F_LOG_SUM_EXP) r = log_f64(f32_round(s));
        return from_f64<OUT>(r);
    }
};

// Integer SUM / MULTIPLY: wrap-around in 64 bits, truncated to the type.
template <typename T, typename OUT, int F> struct Op<T, OUT, F, false, false, false> {
    typedef u64 State;
    static const bool FIXUP = false;
    static __device__ __forceinline__ State init() { return F == F_MULTIPLY ? 1ull : 0ull; }
    static __device__ __forceinline__ void add(State& s, T v, i64) {
        const u64 x = (u64)(typename KeyOf<T>::K)v;  // sign-extended for signed types
        if constexpr (F == F_MULTIPLY)
            s *= x;
        else
            s += x;
    }
    static __device__ __forceinline__ void add_any(State& s, T v, i64 j) { add(s, v, j); }
    static __device__ __forceinline__ State combine(State a, State b) { return F == F_MULTIPLY ? a * b : a + b; }
    static __device__ __forceinline__ State shfl(State s, int o) { return __shfl_down_sync(0xffffffffu, s, o); }
    static __device__ __forceinline__ OUT finish(State s, const T*, i64) { return (OUT)(T)s; }
};

// MAX, MIN: the value alone, as its key (no index: the index traffic cost a quarter of
// the rate). add keeps the first of equal keys (a later element replaces the state only
// when strictly better, or the state is none yet: NaN), so a thread walking its elements
// in order, and a fold of states in element order, keep the first one's bits, the
// reference's (which only matters for -0 vs +0). add_any (fmax / fmin: NaN skipped) keeps
// any of equal keys; reduce_rows's block then looks up the first zero of its chunk when
// its result is a zero (FIXUP, first_zero: rare on real data). All NaN: the state stays
// NaN, finished as -inf (MAX) / +inf (MIN). Integers: no NaN, no -0; init the identity.
__device__ __forceinline__ float kmax(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ double kmax(double a, double b) { return fmax(a, b); }
__device__ __forceinline__ float kmin(float a, float b) { return fminf(a, b); }
__device__ __forceinline__ double kmin(double a, double b) { return fmin(a, b); }

template <typename T, typename OUT, int F, bool FLOAT> struct Op<T, OUT, F, FLOAT, true, false> {
    typedef typename KeyOf<T>::K K;
    typedef K State;
    static const bool LARGEST = F == F_MAX;
    static const bool FIXUP = FLOAT;
    static __device__ __forceinline__ State init() {
        if constexpr (FLOAT) {
            return (K)__int_as_float(0x7fffffff);  // NaN: no candidate yet
        } else {
            const bool is_signed = (K)-1 < (K)0;
            const K hi = is_signed ? (K)(~0ull >> (65 - 8 * (int)sizeof(K))) : (K)~0ull;
            const K lo = is_signed ? (K)(-hi - 1) : (K)0;
            return LARGEST ? lo : hi;  // the identity
        }
    }
    static __device__ __forceinline__ K key_of(T v) { return (K)Num<T>::key(v); }
    static __device__ __forceinline__ bool is_zero(State s) { return s == (K)0; }
    // b (later) replaces a when strictly better or a is none (NaN); a NaN b never does
    static __device__ __forceinline__ State combine(State a, State b) {
        const bool better = LARGEST ? b > a : b < a;
        if constexpr (FLOAT)
            return (better || a != a) ? b : a;
        else
            return better ? b : a;
    }
    static __device__ __forceinline__ void add(State& s, T v, i64) { s = combine(s, key_of(v)); }
    static __device__ __forceinline__ void add_any(State& s, T v, i64) {
        const K k = key_of(v);
        if constexpr (FLOAT)
            s = LARGEST ? kmax(s, k) : kmin(s, k);
        else
            s = (LARGEST ? k > s : k < s) ? k : s;
    }
    static __device__ __forceinline__ State shfl(State s, int o) { return __shfl_down_sync(0xffffffffu, s, o); }
    static __device__ __forceinline__ OUT finish(State s, const T*, i64) {
        if constexpr (FLOAT) {
            const float inf = __int_as_float(0x7f800000);
            if (s != s) return Num<T>::from_acc(LARGEST ? -inf : inf);
            return Num<T>::from_acc((typename Num<T>::Acc)s);  // the float keys convert back exactly (-0 kept)
        } else {
            return (OUT)(T)s;
        }
    }
};

template <typename K> struct Best {
    K key;
    i64 idx;  // -1: no candidate yet
};

// ARGMAX, ARGMIN (F_ARG*_LAST: ties to the last index, AxisDirection DECREASING).
template <typename T, typename OUT, int F, bool FLOAT> struct Op<T, OUT, F, FLOAT, true, true> {
    typedef typename KeyOf<T>::K K;
    typedef Best<K> State;
    static const bool FIXUP = false;
    static const bool LARGEST = F == F_ARGMAX || F == F_ARGMAX_LAST;
    static const bool LAST = F == F_ARGMAX_LAST || F == F_ARGMIN_LAST;
    static __device__ __forceinline__ State init() {
        State s;
        s.key = (K)0;
        s.idx = -1;
        return s;
    }
    // b (a candidate) beats a: the better key, or the same key at the preferred index
    static __device__ __forceinline__ bool beats(K bk, i64 bi, const State& a) {
        if (a.idx < 0) return true;
        if (LARGEST ? bk > a.key : bk < a.key) return true;
        return bk == a.key && (LAST ? bi > a.idx : bi < a.idx);
    }
    static __device__ __forceinline__ void add(State& s, T v, i64 j) {
        if (Num<T>::is_nan(v)) return;
        const K k = (K)Num<T>::key(v);
        if (beats(k, j, s)) {
            s.key = k;
            s.idx = j;
        }
    }
    static __device__ __forceinline__ void add_any(State& s, T v, i64 j) { add(s, v, j); }
    static __device__ __forceinline__ State combine(State a, State b) {
        return (b.idx >= 0 && beats(b.key, b.idx, a)) ? b : a;
    }
    static __device__ __forceinline__ State shfl(State s, int o) {
        State t;
        t.key = __shfl_down_sync(0xffffffffu, s.key, o);
        t.idx = __shfl_down_sync(0xffffffffu, s.idx, o);
        return t;
    }
    static __device__ __forceinline__ OUT finish(State s, const T* first, i64) {
        if (s.idx < 0 || Num<T>::is_nan(*first)) return (OUT)0;
        return (OUT)s.idx;
    }
};

// A block's states folded into thread 0's (warp shuffles, then one warp over the warps' results).
template <typename O> __device__ __forceinline__ typename O::State block_reduce(typename O::State s,
                                                                                typename O::State* part) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) s = O::combine(s, O::shfl(s, o));
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int warps = blockDim.x >> 5;
    if (warps > 1) {
        if (lane == 0) part[warp] = s;
        __syncthreads();
        if (warp == 0) {
            s = lane < warps ? part[lane] : O::init();
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) s = O::combine(s, O::shfl(s, o));
        }
        __syncthreads();  // part is reused by the next row
    }
    return s;
}

// FIXUP (float MAX / MIN): thread 0's acc is the block's result over elements lo..hi - 1
// of the row q (stride rs), some element of the largest (smallest) key; when that key is
// a zero, the reference's result is the first zero's bits (-0 or +0): the block finds it
// (the least index of a zero, atomicMin: the same on every run). Rare on real data.
template <typename O, typename T, int BLOCK>
__device__ __forceinline__ typename O::State first_zero(typename O::State acc, const T* q, i64 lo, i64 hi, i64 rs) {
    __shared__ int zero;
    __shared__ unsigned long long first;
    if (threadIdx.x == 0) {
        zero = O::is_zero(acc);
        first = (unsigned long long)hi;
    }
    __syncthreads();
    if (zero) {  // the same branch for the whole block
        for (i64 j = lo + threadIdx.x; j < hi; j += BLOCK) {
            if (O::is_zero(O::key_of(q[j * rs]))) {
                atomicMin(&first, (unsigned long long)j);
                break;
            }
        }
        __syncthreads();
        if (threadIdx.x == 0) acc = O::key_of(q[(i64)first * rs]);  // some element is a zero: first < hi
    }
    __syncthreads();  // zero and first are rewritten for the next row
    return acc;
}

// 16 bytes of V elements of T.
template <typename T, int V> union Vec16 {
    uint4 u;
    T v[V];
};

template <typename T, typename OUT, int F, int VEC, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    reduce_rows(const T* __restrict__ x, OUT* __restrict__ out, typename Op<T, OUT, F>::State* __restrict__ ws,
                const ReduceParams p) {
    typedef Op<T, OUT, F> O;
    typedef typename O::State S;
    __shared__ S part[BLOCK / 32];
    const i64 s = blockIdx.y;
    const i64 lo = s * p.chunk;
    const i64 hi = min(p.n, lo + p.chunk);
    for (i64 r = blockIdx.x; r < p.rows; r += gridDim.x) {
        i64 xo, oo;
        row_offsets(r, p, xo, oo);
        S acc = O::init();
        if (VEC > 1) {
            // rs == 1, the row start, chunk and R multiples of VEC, the base 16-byte aligned
            const uint4* v = reinterpret_cast<const uint4*>(x + xo + lo);
            const i64 nv = (hi - lo) / VEC;
#pragma unroll 4
            for (i64 i = threadIdx.x; i < nv; i += BLOCK) {
                Vec16<T, VEC> w;
                w.u = __ldg(v + i);
#pragma unroll
                for (int e = 0; e < VEC; ++e) O::add_any(acc, w.v[e], lo + i * VEC + e);
            }
        } else {
            const T* q = x + xo;
#pragma unroll 4
            for (i64 j = lo + threadIdx.x; j < hi; j += BLOCK) O::add_any(acc, q[j * p.rs], j);
        }
        acc = block_reduce<O>(acc, part);
        if constexpr (O::FIXUP) acc = first_zero<O, T, BLOCK>(acc, x + xo, lo, hi, p.rs);
        if (threadIdx.x == 0) {
            if (p.splits == 1)
                out[oo] = O::finish(acc, x + xo, p.n);
            else
                ws[s * p.rows + r] = acc;
        }
    }
}

template <typename T, typename OUT, int F>
__global__ void reduce_cols(const T* __restrict__ x, OUT* __restrict__ out, typename Op<T, OUT, F>::State* __restrict__ ws,
                            const ReduceParams p) {
    typedef Op<T, OUT, F> O;
    typedef typename O::State S;
    const i64 s = blockIdx.y;
    const i64 lo = s * p.chunk;
    const i64 hi = min(p.n, lo + p.chunk);
    const i64 step = (i64)gridDim.x * blockDim.x;
    for (i64 r = (i64)blockIdx.x * blockDim.x + threadIdx.x; r < p.rows; r += step) {
        i64 xo, oo;
        row_offsets(r, p, xo, oo);
        S acc = O::init();
        const T* q = x + xo + lo * p.rs;
        i64 j = lo;
        for (; j + COL_LOADS <= hi; j += COL_LOADS) {  // loads in flight, then added in order
            T v[COL_LOADS];
#pragma unroll
            for (int u = 0; u < COL_LOADS; ++u) v[u] = q[u * p.rs];
#pragma unroll
            for (int u = 0; u < COL_LOADS; ++u) O::add(acc, v[u], j + u);
            q += COL_LOADS * p.rs;
        }
        for (; j < hi; ++j, q += p.rs) O::add(acc, *q, j);
        if (p.splits == 1)
            out[oo] = O::finish(acc, x + xo, p.n);
        else
            ws[s * p.rows + r] = acc;
    }
}

template <typename T, typename OUT, int F>
__global__ void reduce_combine(const T* __restrict__ x, OUT* __restrict__ out,
                               const typename Op<T, OUT, F>::State* __restrict__ ws, const ReduceParams p) {
    typedef Op<T, OUT, F> O;
    typedef typename O::State S;
    const i64 step = (i64)gridDim.x * blockDim.x;
    for (i64 r = (i64)blockIdx.x * blockDim.x + threadIdx.x; r < p.rows; r += step) {
        i64 xo, oo;
        row_offsets(r, p, xo, oo);
        S acc = ws[r];
        i64 s = 1;
        for (; s + 8 <= p.splits; s += 8) {  // eight loads in flight, folded in split order
            S part[8];
#pragma unroll
            for (int u = 0; u < 8; ++u) part[u] = ws[(s + u) * p.rows + r];
#pragma unroll
            for (int u = 0; u < 8; ++u) acc = O::combine(acc, part[u]);
        }
        for (; s < p.splits; ++s) acc = O::combine(acc, ws[s * p.rows + r]);
        out[oo] = O::finish(acc, x + xo, p.n);
    }
}
