// MAX_POOLING2 (forward, optional indices) and MAX_POOLING_GRAD (as a gather).
//
// Spatial dimensions are always handled as three (D, H, W); a 4-D tensor gets a
// leading spatial dimension of size 1 with window 1 and stride 1. Strides of every
// tensor are element strides of its logical {N, C, D, H, W} view.
//
// Selection rule (DirectML's, measured on DirectML 1.15.4): padding never takes part;
// the running state starts as (L, the window's first in-bounds element), L the lowest
// finite value of the type (-FLT_MAX, -65504, -DBL_MAX, an integer type's minimum); a
// later element replaces it only if strictly greater than the running value (ties keep
// the lowest logical index, as the window is scanned row-major; NaN never replaces).
// The kernels compare keys PoolKey<T>::of(v) = (isnan(v) || v < L) ? L : v with "the
// first in-bounds element starts, a later one replaces only if strictly greater": the
// same selection. The output value is the running key (a window of only NaN / -inf
// gives L, any other the selected element bit for bit). A window with no in-bounds
// element (padding only) selects nothing: value L, index 0 (the literal global index
// 0), and MAX_POOLING_GRAD drops its gradient.
#include "common.cuh"

// The selection key of T (Num<T>'s key type: float for FLOAT16), its lowest value L and
// the output value of a running key.
template <typename T> struct PoolKey;
template <> struct PoolKey<float> {
    typedef float K;
    static __device__ __forceinline__ float lowest() { return -3.40282346638528859812e+38f; }  // -FLT_MAX
    // fmaxf: the larger (NaN -> L, -inf -> L), bit-exact otherwise (-0.0 stays -0.0).
    static __device__ __forceinline__ float of(float v) { return fmaxf(v, lowest()); }
    static __device__ __forceinline__ float value(float k) { return k; }
    static __device__ __forceinline__ float none() { return __int_as_float(0xff800000); }  // -inf < L
};
template <> struct PoolKey<double> {
    typedef double K;
    static __device__ __forceinline__ double lowest() { return -1.79769313486231570815e+308; }  // -DBL_MAX
    static __device__ __forceinline__ double of(double v) { return fmax(v, lowest()); }
    static __device__ __forceinline__ double value(double k) { return k; }
    static __device__ __forceinline__ double none() { return __longlong_as_double(0xfff0000000000000ULL); }
};
template <> struct PoolKey<half_t> {
    typedef float K;
    static __device__ __forceinline__ float lowest() { return -65504.0f; }  // FLOAT16's lowest finite value
    static __device__ __forceinline__ float of(half_t v) { return fmaxf(h2f(v), lowest()); }
    // A key is a FLOAT16 value (never NaN): the round trip is exact.
    static __device__ __forceinline__ half_t value(float k) { return f2h(k); }
    static __device__ __forceinline__ float none() { return __int_as_float(0xff800000); }
};
template <typename T, T LO> struct PoolIntKey {  // the integer types: the key is the value
    typedef T K;
    static __device__ __forceinline__ T lowest() { return LO; }
    static __device__ __forceinline__ T of(T v) { return v; }
    static __device__ __forceinline__ T value(T k) { return k; }
};
template <> struct PoolKey<i8> : PoolIntKey<i8, (i8)-128> {};
template <> struct PoolKey<u8> : PoolIntKey<u8, (u8)0> {};
template <> struct PoolKey<i16> : PoolIntKey<i16, (i16)-32768> {};
template <> struct PoolKey<u16> : PoolIntKey<u16, (u16)0> {};
template <> struct PoolKey<i32> : PoolIntKey<i32, (i32)(-2147483647 - 1)> {};
template <> struct PoolKey<u32> : PoolIntKey<u32, 0u> {};
template <> struct PoolKey<i64> : PoolIntKey<i64, (i64)(-9223372036854775807LL - 1)> {};
template <> struct PoolKey<u64> : PoolIntKey<u64, 0ull> {};

struct PoolParams {
    i64 count;  // work items: output elements (forward) or input elements (grad)
    i64 n, c;
    i64 in_size[3];
    i64 out_size[3];
    i64 stride[3];
    i64 window[3];
    i64 pad[3];
    i64 dil[3];
    i64 x_stride[5];  // InputTensor
    i64 y_stride[5];  // OutputTensor (forward) / InputGradientTensor (grad)
    i64 z_stride[5];  // OutputIndicesTensor (forward) / OutputGradientTensor (grad)
};

struct NoIndexOut {
    int unused;
};

// The output position (n, c, od, oh, ow) of the general kernels' work item t, the
// outermost dimension first, and the start of its (n, c) input plane.
template <typename I> struct PoolPosition {
    I n, c, od, oh, ow;
};

template <typename I> __device__ __forceinline__ PoolPosition<I> pool_position(I t, const PoolParams& p) {
    PoolPosition<I> q;
    q.ow = t % (I)p.out_size[2];
    t /= (I)p.out_size[2];
    q.oh = t % (I)p.out_size[1];
    t /= (I)p.out_size[1];
    q.od = t % (I)p.out_size[0];
    t /= (I)p.out_size[0];
    q.c = t % (I)p.c;
    q.n = t / (I)p.c;
    return q;
}

template <typename T, typename I>
__device__ __forceinline__ const T* pool_plane(const T* x, const PoolParams& p, const PoolPosition<I>& q) {
    return x + q.n * (I)p.x_stride[0] + q.c * (I)p.x_stride[1];
}

// The window walk every general pooling kernel shares: visit(value, id, ih, iw, k) for
// each in-bounds element of output (od, oh, ow)'s window, in window order (depth, then
// height, then width; k is the element's offset in the window, (kd KH + kh) KW + kw).
// Elements in the padding are skipped, so a visitor sees exactly the input elements that
// DirectML's window covers.
template <typename T, typename I, class Visit>
__device__ __forceinline__ void for_window(const T* __restrict__ plane, const PoolParams& p,
                                           const PoolPosition<I>& q, Visit&& visit) {
    const I d0 = q.od * (I)p.stride[0] - (I)p.pad[0];
    const I h0 = q.oh * (I)p.stride[1] - (I)p.pad[1];
    const I w0 = q.ow * (I)p.stride[2] - (I)p.pad[2];
    for (I kd = 0; kd < (I)p.window[0]; ++kd) {
        const I id = d0 + kd * (I)p.dil[0];
        if (id < 0 || id >= (I)p.in_size[0]) continue;
        for (I kh = 0; kh < (I)p.window[1]; ++kh) {
            const I ih = h0 + kh * (I)p.dil[1];
            if (ih < 0 || ih >= (I)p.in_size[1]) continue;
            const T* row = plane + id * (I)p.x_stride[2] + ih * (I)p.x_stride[3];
            for (I kw = 0; kw < (I)p.window[2]; ++kw) {
                const I iw = w0 + kw * (I)p.dil[2];
                if (iw < 0 || iw >= (I)p.in_size[2]) continue;
                visit(row[iw * (I)p.x_stride[4]], id, ih, iw, (kd * (I)p.window[1] + kh) * (I)p.window[2] + kw);
            }
        }
    }
}

// Argmax of the window of output position q in its (n, c) plane: the running key over
// for_window's order, the first in-bounds element starting it and only a strictly greater
// key replacing it. Returns `position(id, ih, iw, k)` of the selected element (-1 for a
// window of padding only) and its value in best_value (L for a window of padding only).
template <typename T, typename I, class Position>
__device__ __forceinline__ I window_argmax(const T* __restrict__ plane, const PoolParams& p,
                                           const PoolPosition<I>& q, T& best_value, Position&& position) {
    typedef typename PoolKey<T>::K K;
    I best = -1;
    K best_k = PoolKey<T>::lowest();
    for_window<T, I>(plane, p, q, [&](const T& value, I id, I ih, I iw, I k) {
        const K key = PoolKey<T>::of(value);
        if (best < 0 || key > best_k) {
            best_k = key;
            best = position(id, ih, iw, k);
        }
    });
    best_value = PoolKey<T>::value(best_k);
    return best;
}

// window_argmax's position for MAX_POOLING's indices: the spatial linear index
// (d H + h) W + w of the selected element in its plane.
template <typename I> struct SpatialIndex {
    const PoolParams& p;
    __device__ __forceinline__ I operator()(I id, I ih, I iw, I) const {
        return (id * (I)p.in_size[1] + ih) * (I)p.in_size[2] + iw;
    }
};

template <typename IDXOUT> struct IndexStore {
    template <typename I> static __device__ __forceinline__ void store(IDXOUT* z, I off, I value) {
        z[off] = (IDXOUT)value;
    }
};
template <> struct IndexStore<NoIndexOut> {
    template <typename I> static __device__ __forceinline__ void store(NoIndexOut*, I, I) {}
};

template <typename T, typename IDXOUT, typename I>
__global__ void __launch_bounds__(256) max_pool(const T* __restrict__ x, T* __restrict__ y, IDXOUT* __restrict__ z,
                                                const PoolParams p) {
    const I step = (I)gridDim.x * (I)blockDim.x;
    const I image = (I)(p.in_size[0] * p.in_size[1] * p.in_size[2]);
    for (I t = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; t < (I)p.count; t += step) {
        const PoolPosition<I> q = pool_position(t, p);
        T v;
        const I best = window_argmax<T, I>(pool_plane(x, p, q), p, q, v, SpatialIndex<I>{p});
        y[q.n * (I)p.y_stride[0] + q.c * (I)p.y_stride[1] + q.od * (I)p.y_stride[2] + q.oh * (I)p.y_stride[3] +
          q.ow * (I)p.y_stride[4]] = v;
        IndexStore<IDXOUT>::store(z,
                                  q.n * (I)p.z_stride[0] + q.c * (I)p.z_stride[1] + q.od * (I)p.z_stride[2] +
                                      q.oh * (I)p.z_stride[3] + q.ow * (I)p.z_stride[4],
                                  best < 0 ? (I)0 : (q.n * (I)p.c + q.c) * image + best);  // padding only: 0
    }
}

// Candidate output positions of input coordinate i along one spatial axis: o with
// o * stride - pad + k * dil == i for some k in [0, window), 0 <= o < out.
template <typename I> __device__ __forceinline__ I candidate(I i, I k, I s, I pad, I dil, I out) {
    const I q = i + pad - k * dil;
    if (q < 0 || q % s != 0) return -1;
    const I o = q / s;
    return o < out ? o : -1;
}

// MAX_POOLING_GRAD as a gather: every OutputGradient element re-evaluates the argmax
// of each window that contains it and sums InputGradient over the windows that select
// it. No atomics, no zero-fill pass; the sum is formed in Num<T>::Acc (float32 for
// FLOAT16) and rounded once.
template <typename T, typename I>
__global__ void __launch_bounds__(256) max_pool_grad(const T* __restrict__ x, const T* __restrict__ dy,
                                                     T* __restrict__ dx, const PoolParams p) {
    typedef typename Num<T>::Acc Acc;
    const I step = (I)gridDim.x * (I)blockDim.x;
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
        const I me = (id * (I)p.in_size[1] + ih) * (I)p.in_size[2] + iw;
        const T* plane = x + n * (I)p.x_stride[0] + c * (I)p.x_stride[1];
        const T* gplane = dy + n * (I)p.y_stride[0] + c * (I)p.y_stride[1];
        Acc acc = Acc(0);
        for (I kd = 0; kd < (I)p.window[0]; ++kd) {
            const I od = candidate<I>(id, kd, (I)p.stride[0], (I)p.pad[0], (I)p.dil[0], (I)p.out_size[0]);
            if (od < 0) continue;
            for (I kh = 0; kh < (I)p.window[1]; ++kh) {
                const I oh = candidate<I>(ih, kh, (I)p.stride[1], (I)p.pad[1], (I)p.dil[1], (I)p.out_size[1]);
                if (oh < 0) continue;
                for (I kw = 0; kw < (I)p.window[2]; ++kw) {
                    const I ow = candidate<I>(iw, kw, (I)p.stride[2], (I)p.pad[2], (I)p.dil[2], (I)p.out_size[2]);
                    if (ow < 0) continue;
                    const PoolPosition<I> q = {n, c, od, oh, ow};
                    T v;
                    if (window_argmax<T, I>(plane, p, q, v, SpatialIndex<I>{p}) == me) {
                        acc += Num<T>::to_acc(gplane[od * (I)p.y_stride[2] + oh * (I)p.y_stride[3] +
                                                     ow * (I)p.y_stride[4]]);
                    }
                }
            }
        }
        dx[n * (I)p.z_stride[0] + c * (I)p.z_stride[1] + id * (I)p.z_stride[2] + ih * (I)p.z_stride[3] +
           iw * (I)p.z_stride[4]] = Num<T>::from_acc(acc);
    }
}

// Two-pass MAX_POOLING_GRAD, pass 1: the window offset k = (kd * KH + kh) * KW + kw of
// every window's argmax (same rule as window_argmax), into a packed {N, C, OD, OH, OW}
// array of A (u8 when the window has at most 255 elements).
template <typename T, typename A, typename I>
__global__ void __launch_bounds__(256) max_pool_argmax(const T* __restrict__ x, A* __restrict__ arg,
                                                       const PoolParams p) {
    const I step = (I)gridDim.x * (I)blockDim.x;
    const I out_total = (I)(p.n * p.c * p.out_size[0] * p.out_size[1] * p.out_size[2]);
    for (I t = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; t < out_total; t += step) {
        const PoolPosition<I> q = pool_position(t, p);
        T unused;
        // the offset in the window (-1, 255 as u8: a window of padding only, which selects nothing)
        const I best = window_argmax<T, I>(pool_plane(x, p, q), p, q, unused, [](I, I, I, I k) { return k; });
        arg[t] = (A)best;
    }
}

// Pass 2: every OutputGradient element visits the windows that contain it and adds
// InputGradient where the stored argmax offset is its own offset in that window. Along
// each axis the containing windows are o in [ceil((i + pad - (K - 1) dil) / s),
// floor((i + pad) / s)] with (i + pad - o s) divisible by dil; k = (i + pad - o s) / dil.
// A gather: no atomics, no zero fill, a fixed summation order.
template <typename I> struct AxisRange {
    I lo, hi, top;
};

template <typename I> __device__ __forceinline__ AxisRange<I> axis_range(I i, I k, I s, I pad, I dil, I out) {
    AxisRange<I> r;
    r.top = i + pad;
    const I low = r.top - (k - 1) * dil;
    r.lo = low <= 0 ? 0 : (low + s - 1) / s;
    const I hi = r.top / s;
    r.hi = hi < out - 1 ? hi : out - 1;
    return r;
}

template <typename I> __device__ __forceinline__ I window_offset(I top, I o, I s, I dil) {
    const I rem = top - o * s;
    if (dil == 1) return rem;
    return rem % dil == 0 ? rem / dil : -1;
}

template <typename T, typename A, typename I>
__global__ void __launch_bounds__(256) max_pool_grad_gather(const A* __restrict__ arg, const T* __restrict__ dy,
                                                            T* __restrict__ dx, const PoolParams p) {
    typedef typename Num<T>::Acc Acc;
    const I step = (I)gridDim.x * (I)blockDim.x;
    const I out_d = (I)p.out_size[0], out_h = (I)p.out_size[1], out_w = (I)p.out_size[2];
    const I win_h = (I)p.window[1], win_w = (I)p.window[2];
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
        const A* aplane = arg + (n * (I)p.c + c) * (out_d * out_h * out_w);
        const T* gplane = dy + n * (I)p.y_stride[0] + c * (I)p.y_stride[1];
        const AxisRange<I> rd = axis_range<I>(id, (I)p.window[0], (I)p.stride[0], (I)p.pad[0], (I)p.dil[0], out_d);
        const AxisRange<I> rh = axis_range<I>(ih, win_h, (I)p.stride[1], (I)p.pad[1], (I)p.dil[1], out_h);
        const AxisRange<I> rw = axis_range<I>(iw, win_w, (I)p.stride[2], (I)p.pad[2], (I)p.dil[2], out_w);
        Acc acc = Acc(0);
        for (I od = rd.lo; od <= rd.hi; ++od) {
            const I kd = window_offset<I>(rd.top, od, (I)p.stride[0], (I)p.dil[0]);
            if (kd < 0) continue;
            for (I oh = rh.lo; oh <= rh.hi; ++oh) {
                const I kh = window_offset<I>(rh.top, oh, (I)p.stride[1], (I)p.dil[1]);
                if (kh < 0) continue;
                for (I ow = rw.lo; ow <= rw.hi; ++ow) {
                    const I kw = window_offset<I>(rw.top, ow, (I)p.stride[2], (I)p.dil[2]);
                    if (kw < 0) continue;
                    const I k = (kd * win_h + kh) * win_w + kw;
                    if ((I)aplane[(od * out_h + oh) * out_w + ow] == k) {
                        acc += Num<T>::to_acc(gplane[od * (I)p.y_stride[2] + oh * (I)p.y_stride[3] + ow * (I)p.y_stride[4]]);
                    }
                }
            }
        }
        dx[n * (I)p.z_stride[0] + c * (I)p.z_stride[1] + id * (I)p.z_stride[2] + ih * (I)p.z_stride[3] +
           iw * (I)p.z_stride[4]] = Num<T>::from_acc(acc);
    }
}

// MAX_POOLING_GRAD pass 2 fast path for 2-D pooling whose windows overlap at most R
// times per axis (R = ceil(((K - 1) * dil + 1) / s) <= 4): the argmax offsets and the
// gradients of all candidate windows are loaded before any is used.
template <typename T, typename A, typename I, int R>
__global__ void __launch_bounds__(256) max_pool_grad_gather2d(const A* __restrict__ arg, const T* __restrict__ dy,
                                                              T* __restrict__ dx, const PoolParams p) {
    typedef typename Num<T>::Acc Acc;
    const I step = (I)gridDim.x * (I)blockDim.x;
    const I out_h = (I)p.out_size[1], out_w = (I)p.out_size[2];
    const I win_w = (I)p.window[2];
    for (I t = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; t < (I)p.count; t += step) {
        I r = t;
        const I iw = r % (I)p.in_size[2];
        r /= (I)p.in_size[2];
        const I ih = r % (I)p.in_size[1];
        r /= (I)p.in_size[1];
        const I c = r % (I)p.c;
        const I n = r / (I)p.c;
        const A* aplane = arg + (n * (I)p.c + c) * (out_h * out_w);
        const T* gplane = dy + n * (I)p.y_stride[0] + c * (I)p.y_stride[1];
        const AxisRange<I> rh = axis_range<I>(ih, (I)p.window[1], (I)p.stride[1], (I)p.pad[1], (I)p.dil[1], out_h);
        const AxisRange<I> rw = axis_range<I>(iw, win_w, (I)p.stride[2], (I)p.pad[2], (I)p.dil[2], out_w);
        I kh[R], kw[R];
#pragma unroll
        for (int a = 0; a < R; ++a) {
            const I oh = rh.lo + a;
            kh[a] = oh <= rh.hi ? window_offset<I>(rh.top, oh, (I)p.stride[1], (I)p.dil[1]) : -1;
            const I ow = rw.lo + a;
            kw[a] = ow <= rw.hi ? window_offset<I>(rw.top, ow, (I)p.stride[2], (I)p.dil[2]) : -1;
        }
        I sel[R][R];
        Acc g[R][R];
#pragma unroll
        for (int a = 0; a < R; ++a) {
#pragma unroll
            for (int b = 0; b < R; ++b) {
                const bool ok = kh[a] >= 0 && kw[b] >= 0;
                const I oh = rh.lo + a, ow = rw.lo + b;
                sel[a][b] = ok ? (I)aplane[oh * out_w + ow] : -1;
                g[a][b] = ok ? Num<T>::to_acc(gplane[oh * (I)p.y_stride[3] + ow * (I)p.y_stride[4]]) : Acc(0);
            }
        }
        Acc acc = Acc(0);
#pragma unroll
        for (int a = 0; a < R; ++a) {
#pragma unroll
            for (int b = 0; b < R; ++b) {
                if (kh[a] >= 0 && kw[b] >= 0 && sel[a][b] == kh[a] * win_w + kw[b]) acc += g[a][b];
            }
        }
        dx[n * (I)p.z_stride[0] + c * (I)p.z_stride[1] + ih * (I)p.z_stride[3] + iw * (I)p.z_stride[4]] =
            Num<T>::from_acc(acc);
    }
}

// Pass 1 fast path for 2-D windows of at most KMAX x KMAX elements: every tap of the
// window is loaded (predicated) before the scan, so the loads overlap instead of
// waiting for each other; the scan order and rule are window_argmax's.
template <typename T, typename A, typename I, int KMAX>
__global__ void __launch_bounds__(256) max_pool_argmax2d(const T* __restrict__ x, A* __restrict__ arg,
                                                         const PoolParams p) {
    typedef typename PoolKey<T>::K K;
    const I step = (I)gridDim.x * (I)blockDim.x;
    const I out_h = (I)p.out_size[1], out_w = (I)p.out_size[2];
    const I out_total = (I)(p.n * p.c) * out_h * out_w;
    const I kh_n = (I)p.window[1], kw_n = (I)p.window[2];
    for (I t = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; t < out_total; t += step) {
        I r = t;
        const I ow = r % out_w;
        r /= out_w;
        const I oh = r % out_h;
        r /= out_h;
        const I c = r % (I)p.c;
        const I n = r / (I)p.c;
        const T* plane = x + n * (I)p.x_stride[0] + c * (I)p.x_stride[1];
        const I h0 = oh * (I)p.stride[1] - (I)p.pad[1];
        const I w0 = ow * (I)p.stride[2] - (I)p.pad[2];
        K v[KMAX][KMAX];
        bool in[KMAX][KMAX];
#pragma unroll
        for (int a = 0; a < KMAX; ++a) {
            const I ih = h0 + a * (I)p.dil[1];
            const bool row_ok = a < kh_n && ih >= 0 && ih < (I)p.in_size[1];
#pragma unroll
            for (int b = 0; b < KMAX; ++b) {
                const I iw = w0 + b * (I)p.dil[2];
                in[a][b] = row_ok && b < kw_n && iw >= 0 && iw < (I)p.in_size[2];
                v[a][b] = in[a][b] ? PoolKey<T>::of(plane[ih * (I)p.x_stride[3] + iw * (I)p.x_stride[4]]) : K();
            }
        }
        I best = -1;  // a window of padding only
        K best_k = K();
#pragma unroll
        for (int a = 0; a < KMAX; ++a) {
#pragma unroll
            for (int b = 0; b < KMAX; ++b) {
                if (in[a][b] && (best < 0 || v[a][b] > best_k)) {
                    best_k = v[a][b];
                    best = a * kw_n + b;
                }
            }
        }
        arg[t] = (A)best;
    }
}

// Lean 2-D MAX_POOLING_GRAD (dilation 1, KH x KW window, SH x SW stride known at
// compile time, 32-bit offsets, fast division by the run-time extents).
//
// Magic divisors of the thread decomposition (see fast_div): dv[0..1] for div[0], dv[2..3]
// for div[1], dv[4..5] for div[2] (C).
struct PoolDivParams {
    i64 count;   // threads
    i64 dv[6];
    i64 div[3];  // the divisors themselves
};

// The argmax of each of M horizontally adjacent windows over their loaded keys v
// (PoolKey<T>::of of the elements; rows rok and columns cok in bounds), scanned row-major
// with window_argmax's rule (the first in-bounds element starts, strictly greater
// replaces): the in-window offset kh * KW + kw (255 when no element is in bounds: the
// window is padding only) and its key.
template <typename K, int KH, int KW, int SW, int M, int XC>
__device__ __forceinline__ void scan_windows(const K (&v)[KH][XC], const bool (&rok)[KH], const bool (&cok)[XC],
                                             int (&best)[M], K (&best_key)[M]) {
#pragma unroll
    for (int m = 0; m < M; ++m) {
        int b = 255;
        K bv = K();
#pragma unroll
        for (int kh = 0; kh < KH; ++kh) {
#pragma unroll
            for (int kw = 0; kw < KW; ++kw) {
                const int j = m * SW + kw;
                const K e = v[kh][j];
                if (rok[kh] && cok[j] && (b == 255 || e > bv)) {
                    bv = e;
                    b = kh * KW + kw;
                }
            }
        }
        best[m] = b;
        best_key[m] = bv;
    }
}

// Pass 1 with M horizontally adjacent windows per thread (M = 2 or 4): the windows share
// input columns (XC = (M - 1) * SW + KW of them per row instead of M * KW), so each row
// segment is loaded once into registers, as the comparison key (float for FLOAT16).
// Every window is still scanned row-major with window_argmax's rule (first in-bounds
// element starts, strictly greater replaces, over PoolKey keys), so ties, NaN and -inf
// give the same byte as a one-window scan; a window of padding only gives 255. The M
// bytes go out as one 16/32-bit store when OW
// is a multiple of M (packed array, allocation aligned). div = (ceil(OW / M), OH, C).
//
// VEC (host-checked: inner stride 1, W and the row / plane strides multiples of
// V = M * SW, the base aligned to V elements, 16-byte multiple V * sizeof(T), PW <= V,
// the left padding PW known at compile time): thread q loads the V columns
// [q * V, q * V + V) with 16-byte loads and takes the PW columns on its left and the
// KW - SW - PW columns on its right from the neighbouring lanes by shuffle (when that
// lane is the neighbouring q of the same row; else a guarded scalar load).
template <typename T, int KH, int KW, int SH, int SW, int M, bool VEC, int PW>
__global__ void __launch_bounds__(256) max_pool_argmax_k2d_m(const T* __restrict__ x, u8* __restrict__ arg,
                                                             const PoolParams p, const PoolDivParams q) {
    typedef typename PoolKey<T>::K K;
    constexpr int XC = (M - 1) * SW + KW;
    constexpr int V = M * SW;
    constexpr int R = KW - SW - PW > 0 ? KW - SW - PW : 0;  // right columns from lane + 1
    const u32 count = (u32)q.count;
    const u32 t0 = blockIdx.x * 256u + threadIdx.x;
    if (!VEC && t0 >= count) return;
    const bool active = t0 < count;
    const u32 t = active ? t0 : count - 1;  // VEC: inactive lanes still take part in the shuffles
    const PlaneItem item = plane_item(t, q.dv, q.div);
    const int qw = item.group, oh = item.row;
    const u32 plane = item.plane, n = item.n, c = item.c;
    const T* xp = x + (int)n * (int)p.x_stride[0] + (int)c * (int)p.x_stride[1];
    const int H = (int)p.in_size[1], W = (int)p.in_size[2];
    const int OW = (int)p.out_size[2];
    const int pw = VEC ? PW : (int)p.pad[2];
    const int h0 = oh * SH - (int)p.pad[1], w0 = qw * V - pw;
    const int xs3 = (int)p.x_stride[3], xs4 = (int)p.x_stride[4];
    bool cok[XC];
#pragma unroll
    for (int j = 0; j < XC; ++j) cok[j] = w0 + j >= 0 && w0 + j < W;
    K v[KH][XC];
    bool rok[KH];
#pragma unroll
    for (int kh = 0; kh < KH; ++kh) {
        const int ih = h0 + kh;
        rok[kh] = ih >= 0 && ih < H;
        if (VEC) {
            const int lane = threadIdx.x & 31;
            const int nq = (int)q.div[0];
            const bool left_lane = lane > 0 && qw > 0;     // lane - 1 holds q - 1 of this row
            const bool right_lane = lane < 31 && qw + 1 < nq;  // lane + 1 holds q + 1
            const int ihc = rok[kh] ? ih : 0;
            const T* rp = xp + ihc * xs3;
            T mid[V];
            if (qw * V < W) {
#pragma unroll
                for (int k = 0; k < V * (int)sizeof(T) / 16; ++k)
                    reinterpret_cast<uint4*>(mid)[k] = reinterpret_cast<const uint4*>(rp + qw * V)[k];
            } else {
#pragma unroll
                for (int k = 0; k < V; ++k) mid[k] = T();
            }
            K mk[V];
#pragma unroll
            for (int k = 0; k < V; ++k) mk[k] = PoolKey<T>::of(mid[k]);
#pragma unroll
            for (int j = 0; j < PW; ++j) {
                const K s = __shfl_up_sync(0xffffffffu, mk[V - PW + j], 1);
                v[kh][j] = left_lane ? s : (rok[kh] && cok[j] ? PoolKey<T>::of(rp[w0 + j]) : K());
            }
#pragma unroll
            for (int k = 0; k < V && PW + k < XC; ++k) v[kh][PW + k] = mk[k];
#pragma unroll
            for (int j = 0; j < R; ++j) {
                const K s = __shfl_down_sync(0xffffffffu, mk[j], 1);
                v[kh][PW + V + j] = right_lane ? s : (rok[kh] && cok[PW + V + j] ? PoolKey<T>::of(rp[w0 + PW + V + j]) : K());
            }
        } else {
#pragma unroll
            for (int j = 0; j < XC; ++j) v[kh][j] = (rok[kh] && cok[j]) ? PoolKey<T>::of(xp[ih * xs3 + (w0 + j) * xs4]) : K();
        }
    }
    if (!active) return;
    int best[M];
    K best_key[M];
    scan_windows<K, KH, KW, SW, M, XC>(v, rok, cok, best, best_key);
    u32 packed = 0;
#pragma unroll
    for (int m = 0; m < M; ++m) packed |= (u32)best[m] << (8 * m);
    const int base = ((int)plane * (int)p.out_size[1] + oh) * OW + qw * M;
    if (OW % M == 0) {
        if (M == 4) *reinterpret_cast<u32*>(arg + base) = packed;
        else if (M == 2) *reinterpret_cast<u16*>(arg + base) = (u16)packed;
        else {
#pragma unroll
            for (int m = 0; m < M; ++m) arg[base + m] = (u8)best[m];
        }
    } else {
#pragma unroll
        for (int m = 0; m < M; ++m)
            if (qw * M + m < OW) arg[base + m] = (u8)best[m];
    }
}

// MAX_POOLING2 fast path (2-D, dilation 1, the KH x KW window and SH x SW stride known
// at compile time, 32-bit offsets, FLOAT32 / FLOAT16): M horizontally adjacent windows per
// thread share their input columns (XC per row instead of M * KW loads), scanned with
// window_argmax's rule, so the values and indices equal the generic max_pool's. Each
// window's maximum goes to OutputTensor and, unless IDXOUT is NoIndexOut, the flat index
// (n * C + c) * H * W + h * W + w of its element to OutputIndicesTensor. The value is
// the running key (PoolKey<T>::value: the selected element's bits, or L where the key
// was clamped); a window of padding only writes L and index 0. div = (ceil(OW / M), OH, C).
template <typename T, typename IDXOUT, int KH, int KW, int SH, int SW, int M>
__global__ void __launch_bounds__(256) max_pool_k2d_m(const T* __restrict__ x, T* __restrict__ y,
                                                      IDXOUT* __restrict__ z, const PoolParams p,
                                                      const PoolDivParams q) {
    typedef typename PoolKey<T>::K K;
    constexpr int XC = (M - 1) * SW + KW;
    const u32 t = blockIdx.x * 256u + threadIdx.x;
    if (t >= (u32)q.count) return;
    const PlaneItem item = plane_item(t, q.dv, q.div);
    const int qw = item.group, oh = item.row;
    const u32 plane = item.plane, n = item.n, c = item.c;
    const T* xp = x + (int)n * (int)p.x_stride[0] + (int)c * (int)p.x_stride[1];
    const int H = (int)p.in_size[1], W = (int)p.in_size[2], OW = (int)p.out_size[2];
    const int h0 = oh * SH - (int)p.pad[1], w0 = qw * M * SW - (int)p.pad[2];
    const int xs3 = (int)p.x_stride[3], xs4 = (int)p.x_stride[4];
    bool cok[XC], rok[KH];
    K v[KH][XC];
#pragma unroll
    for (int j = 0; j < XC; ++j) cok[j] = w0 + j >= 0 && w0 + j < W;
#pragma unroll
    for (int kh = 0; kh < KH; ++kh) {
        const int ih = h0 + kh;
        rok[kh] = ih >= 0 && ih < H;
#pragma unroll
        for (int j = 0; j < XC; ++j) v[kh][j] = (rok[kh] && cok[j]) ? PoolKey<T>::of(xp[ih * xs3 + (w0 + j) * xs4]) : K();
    }
    int best[M];
    K best_key[M];
    scan_windows<K, KH, KW, SW, M, XC>(v, rok, cok, best, best_key);
    const i64 image = (i64)plane * H * W;  // plane = n * C + c
#pragma unroll
    for (int m = 0; m < M; ++m) {
        const int ow = qw * M + m;
        if (ow >= OW) break;
        T value = PoolKey<T>::value(PoolKey<T>::lowest());
        i64 index = 0;  // a window of padding only: L and the literal index 0, as window_argmax
        if (best[m] != 255) {
            const int ih = h0 + best[m] / KW, iw = w0 + m * SW + best[m] % KW;
            index = image + (i64)ih * W + iw;
            value = PoolKey<T>::value(best_key[m]);
        }
        const int y_off = (int)n * (int)p.y_stride[0] + (int)c * (int)p.y_stride[1] + oh * (int)p.y_stride[3] +
                          ow * (int)p.y_stride[4];
        y[y_off] = value;
        const int z_off = (int)n * (int)p.z_stride[0] + (int)c * (int)p.z_stride[1] + oh * (int)p.z_stride[3] +
                          ow * (int)p.z_stride[4];
        IndexStore<IDXOUT>::store(z, (i64)z_off, index);
    }
}

// Two adjacent OutputGradient elements stored at once (VEC: inner stride 1, even offset).
template <typename T> struct Pair;
template <> struct Pair<float> {
    static __device__ __forceinline__ void store(float* p, float a, float b) {
        *reinterpret_cast<float2*>(p) = make_float2(a, b);
    }
};
template <> struct Pair<half_t> {
    static __device__ __forceinline__ void store(half_t* p, float a, float b) {
        const u32 lo = f2h(a).bits, hi = f2h(b).bits;
        *reinterpret_cast<u32*>(p) = lo | (hi << 16);
    }
};
template <> struct Pair<double> {
    static __device__ __forceinline__ void store(double* p, double a, double b) {
        p[0] = a;
        p[1] = b;
    }
};

// Every thread owns a 2 x 2 block of OutputGradient; the <= NWY x NWX windows that
// contain any of its elements are read once (InputGradient and the argmax), and each
// element sums, in ascending (oh, ow), the InputGradient of the windows that selected it
// (Num<T>::Acc, rounded once); the argmaxes are pass 1's bytes.
// div = (ceil(W / 2), ceil(H / 2), C). No atomics, no zero fill.
//
// DH, DW >= 0 (host-computed where the stride divides the block, 2): the kh, kw of the
// block's first element in its first window, the same for every block, so that every
// window test below is decided at compile time (pass 2 was bound by instruction issue).
// -1: computed per thread.
template <typename T, int KH, int KW, int SH, int SW, bool VEC, int BW, int DH, int DW>
__device__ __forceinline__ void blk2d_body(const u8* __restrict__ arg,
                                           const T* __restrict__ dy, T* __restrict__ dx, const PoolParams& p,
                                           const PoolDivParams& q) {
    typedef typename Num<T>::Acc Acc;
    constexpr int NWY = KH / SH + 1;  // (2 + KH - 2) / SH + 1: windows touching 2 rows
    constexpr int NWX = (BW + KW - 2) / SW + 1;  // windows touching BW columns
    const u32 t = blockIdx.x * 256u + threadIdx.x;
    if (t >= (u32)q.count) return;
    const PlaneItem item = plane_item(t, q.dv, q.div);
    const int bx = item.group, by = item.row;
    const u32 plane = item.plane, n = item.n, c = item.c;
    const int H = (int)p.in_size[1], W = (int)p.in_size[2];
    const int OH = (int)p.out_size[1], OW = (int)p.out_size[2];
    const int ph = (int)p.pad[1], pw = (int)p.pad[2];
    const int ih0 = 2 * by, iw0 = BW * bx;
    // Window (oh0, ow0) is the first to hold (ih0, iw0), at its (dh, dw): ceil((i + pad - K + 1) / S).
    const int oh0 = DH >= 0 ? (ih0 + ph - DH) / SH : floor_div<SH>(ih0 + ph - KH + SH);
    const int ow0 = DW >= 0 ? (iw0 + pw - DW) / SW : floor_div<SW>(iw0 + pw - KW + SW);
    const int dh = DH >= 0 ? DH : ih0 + ph - oh0 * SH, dw = DW >= 0 ? DW : iw0 + pw - ow0 * SW;

    bool wv[NWY][NWX];
    int sel[NWY][NWX];
    Acc g[NWY][NWX];
    const T* gp = dy + (int)n * (int)p.y_stride[0] + (int)c * (int)p.y_stride[1];
#pragma unroll
    for (int a = 0; a < NWY; ++a) {
#pragma unroll
        for (int b = 0; b < NWX; ++b) {
            const int oh = oh0 + a, ow = ow0 + b;
            wv[a][b] = oh >= 0 && oh < OH && ow >= 0 && ow < OW;
            g[a][b] = wv[a][b] ? Num<T>::to_acc(gp[oh * (int)p.y_stride[3] + ow * (int)p.y_stride[4]]) : Acc(0);
            sel[a][b] = wv[a][b] ? (int)arg[((int)plane * OH + oh) * OW + ow] : 255;
        }
    }
    Acc acc[2][BW];
#pragma unroll
    for (int y = 0; y < 2; ++y) {
#pragma unroll
        for (int xx = 0; xx < BW; ++xx) {
            Acc s = Acc(0);
#pragma unroll
            for (int a = 0; a < NWY; ++a) {
                const int kh = dh + y - a * SH;
#pragma unroll
                for (int b = 0; b < NWX; ++b) {
                    const int kw = dw + xx - b * SW;
                    if (kh >= 0 && kh < KH && kw >= 0 && kw < KW && sel[a][b] == kh * KW + kw) s += g[a][b];
                }
            }
            acc[y][xx] = s;
        }
    }
    T* dp = dx + (int)n * (int)p.z_stride[0] + (int)c * (int)p.z_stride[1];
    const int zs3 = (int)p.z_stride[3], zs4 = (int)p.z_stride[4];
#pragma unroll
    for (int y = 0; y < 2; ++y) {
        const int ih = ih0 + y;
        if (ih >= H) break;
#pragma unroll
        for (int k = 0; k < BW; k += 2) {
            if (iw0 + k >= W) break;
            if (VEC) {  // W is even: both columns of the pair exist
                Pair<T>::store(dp + ih * zs3 + iw0 + k, acc[y][k], acc[y][k + 1]);
            } else {
                dp[ih * zs3 + (iw0 + k) * zs4] = Num<T>::from_acc(acc[y][k]);
                if (iw0 + k + 1 < W) dp[ih * zs3 + (iw0 + k + 1) * zs4] = Num<T>::from_acc(acc[y][k + 1]);
            }
        }
    }
}

template <typename T, int KH, int KW, int SH, int SW, bool VEC, int DH, int DW>
__global__ void __launch_bounds__(256) max_pool_grad_blk2d(const u8* __restrict__ arg, const T* __restrict__ dy,
                                                           T* __restrict__ dx, const PoolParams p,
                                                           const PoolDivParams q) {
    blk2d_body<T, KH, KW, SH, SW, VEC, 2, DH, DW>(arg, dy, dx, p, q);
}

// Raw storage of B bytes, for vector loads and stores of T through a union.
template <int B> struct Raw;
template <> struct Raw<2> {
    typedef u16 type;
};
template <> struct Raw<4> {
    typedef u32 type;
};
template <> struct Raw<8> {
    typedef uint2 type;
};
template <> struct Raw<16> {
    typedef uint4 type;
};

// The argmax bytes of windows ow0 .. ow0 + N - 1 (N <= 5) of one row of the packed array,
// 255 for windows outside [0, OW) or when !ok: the (at most two) aligned 32-bit words
// holding them are read, only those holding a wanted byte (the array is allocated in
// whole words), and shifted into place.
template <int N>
__device__ __forceinline__ void argmax_run(const u8* __restrict__ arg, int row_base, int ow0, int OW, bool ok,
                                           int (&sel)[N]) {
    static_assert(N <= 5, "two words shifted by up to 3 bytes hold 5 bytes");
    const int a = row_base + ow0;
    const int lo = row_base + (ow0 > 0 ? ow0 : 0), hi = row_base + (ow0 + N < OW ? ow0 + N : OW);  // wanted [lo, hi)
    const int w = a >> 2;  // floor, also for a < 0
    const u32* words = reinterpret_cast<const u32*>(arg);
    const u32 w0 = ok && 4 * w < hi && 4 * w + 4 > lo ? words[w] : 0u;
    const u32 w1 = ok && 4 * w + 4 < hi && 4 * w + 8 > lo ? words[w + 1] : 0u;
    const u64 both = (((u64)w1 << 32) | w0) >> (8 * (a & 3));
#pragma unroll
    for (int j = 0; j < N; ++j) sel[j] = ok && a + j >= lo && a + j < hi ? (int)((both >> (8 * j)) & 0xffu) : 255;
}

// InputGradient of windows ow0 .. ow0 + N - 1 of one row (inner stride 1) as Acc, 0 outside
// [0, OW) or when !ok: GV at a time where a group lies wholly in the row (the host checks
// that ow0, the row / plane strides and the base are GV-aligned), else one by one.
template <typename T, int N, int GV>
__device__ __forceinline__ void grad_run(const T* __restrict__ rp, int ow0, int OW, bool ok,
                                         typename Num<T>::Acc (&g)[N]) {
    typedef typename Num<T>::Acc Acc;
#pragma unroll
    for (int k = 0; k < N; k += GV) {
        const int o = ow0 + k;
        if (GV > 1 && k + GV <= N && ok && o >= 0 && o + GV <= OW) {
            union {
                typename Raw<GV * (int)sizeof(T)>::type v;
                T e[GV];
            } u;
            u.v = *reinterpret_cast<const typename Raw<GV * (int)sizeof(T)>::type*>(rp + o);
#pragma unroll
            for (int i = 0; i < GV; ++i) g[k + i] = Num<T>::to_acc(u.e[i]);
        } else {
#pragma unroll
            for (int i = 0; i < GV && k + i < N; ++i)
                g[k + i] = ok && o + i >= 0 && o + i < OW ? Num<T>::to_acc(rp[o + i]) : Acc(0);
        }
    }
}

// Pass 2 with one 16-byte row chunk per thread: CW = 16 / sizeof(T) columns of one row of
// OutputGradient, consecutive threads on consecutive chunks (a warp stores 512 contiguous
// bytes with one 16-byte store per thread). The chunk at (ih, iw0 = CW * cx) lies in window
// rows oh0 .. oh0 + NWY - 1 and columns ow0 .. ow0 + NWX - 1. With SW dividing CW, column j
// of the chunk is kw = DW + j - b * SW in window column ow0 + b for every chunk, DW =
// KW - SW + ((PW - KW + SW) mod SW) known at compile time, so each (j, b) test is one
// compare of an argmax byte with kh * KW + kw or none. Each element sums in ascending
// (oh, ow), starting from 0, exactly like blk2d_body: bit-identical results (Num<T>::Acc,
// rounded once). Host-checked: OutputGradient inner stride 1, W and the row / plane
// strides multiples of CW, base 16-byte aligned (per call); InputGradient loaded GV
// elements at a time (see grad_run; GV = 1: scalar loads). div = (W / CW, H, C).
template <typename T, int KH, int KW, int SH, int SW, int DW, int GV>
__global__ void __launch_bounds__(256) max_pool_grad_row16(const u8* __restrict__ arg, const T* __restrict__ dy,
                                                           T* __restrict__ dx, const PoolParams p,
                                                           const PoolDivParams q) {
    typedef typename Num<T>::Acc Acc;
    constexpr int CW = 16 / (int)sizeof(T);
    static_assert(CW % SW == 0, "the window columns of a chunk must not depend on the chunk");
    constexpr int NWY = (KH - 1) / SH + 1;        // window rows holding one input row
    constexpr int NWX = (CW + KW - 2) / SW + 1;  // window columns touching CW columns
    const u32 t = blockIdx.x * 256u + threadIdx.x;
    if (t >= (u32)q.count) return;
    const PlaneItem item = plane_item(t, q.dv, q.div);
    const int cx = item.group, ih = item.row;
    const u32 plane = item.plane, n = item.n, c = item.c;
    const int OH = (int)p.out_size[1], OW = (int)p.out_size[2];
    const int ph = (int)p.pad[1];
    const int oh0 = floor_div<SH>(ih + ph - KH + SH);  // ceil((ih + ph - KH + 1) / SH)
    const int dh = ih + ph - oh0 * SH;                 // kh of row ih in window row oh0
    const int ow0 = cx * (CW / SW) + ((int)p.pad[2] - DW) / SW;  // an exact division
    const T* gp = dy + (int)n * (int)p.y_stride[0] + (int)c * (int)p.y_stride[1];
    int key[NWY][NWX];  // argmax offset - kh * KW: equals kw where the window selected (ih, kw)
    Acc g[NWY][NWX];
#pragma unroll
    for (int a = 0; a < NWY; ++a) {
        const int oh = oh0 + a, kh = dh - a * SH;
        const bool ok = kh >= 0 && kh < KH && oh >= 0 && oh < OH;
        int sel[NWX];
        argmax_run<NWX>(arg, ((int)plane * OH + oh) * OW, ow0, OW, ok, sel);
        grad_run<T, NWX, GV>(gp + oh * (int)p.y_stride[3], ow0, OW, ok, g[a]);
#pragma unroll
        for (int b = 0; b < NWX; ++b) key[a][b] = ok ? sel[b] - kh * KW : -1;  // 255 - kh * KW > KW - 1 (K <= 5)
    }
    union {
        uint4 v;
        T e[CW];
    } out;
#pragma unroll
    for (int j = 0; j < CW; ++j) {
        Acc s = Acc(0);
#pragma unroll
        for (int a = 0; a < NWY; ++a) {
#pragma unroll
            for (int b = 0; b < NWX; ++b) {
                const int kw = DW + j - b * SW;
                if (kw >= 0 && kw < KW && key[a][b] == kw) s += g[a][b];
            }
        }
        out.e[j] = Num<T>::from_acc(s);
    }
    T* dp = dx + (int)n * (int)p.z_stride[0] + (int)c * (int)p.z_stride[1] + ih * (int)p.z_stride[3] + cx * CW;
    *reinterpret_cast<uint4*>(dp) = out.v;
}

// ---------------------------------------------------------------------------------------
// Single-pass 2-D MAX_POOLING_GRAD: column strips streamed down the rows.
//
// OutputGradient is cut into SH x SW blocks; block (i, j) holds rows [i SH, i SH + SH)
// and columns [j SW, j SW + SW). Along each axis the windows that hold any element of
// block i are i + DLO .. i + DHI (DLO = ceil((P - K + 1) / S), DHI = floor((S - 1 + P) / S),
// compile-time with the padding P), and the element's offset in each of them is a
// compile-time constant, so every "did this window select me" test is one compare of the
// window's argmax with a constant.
//
// Lane L of a warp computes the argmax of window column j + DLO_W, where j is its column
// block (the blocks of all planes are numbered consecutively); block j needs the windows
// of lanes L .. L + EW (EW = DHI_W - DLO_W), read by shuffle, so the last EW lanes of a
// warp only compute windows and own no block. A warp walks the block rows of one strip
// (host: strip_rows block rows) from the top, keeping the argmax and InputGradient of the
// NWH = DHI_H - DLO_H + 1 window rows the current block row needs, and computing one new
// window row per step; the input rows the new window shares with the previous one stay in
// registers. InputTensor, InputGradientTensor and OutputGradientTensor are each touched
// once, apart from the NWH - 1 window rows each strip recomputes and the window columns
// of the EW helper lanes of each warp; no argmax array goes through memory.
//
// Same rule as window_argmax (first in-bounds element starts, strictly greater replaces,
// over PoolKey keys; a window of padding only selects nothing) and the same sums as
// blk2d_body (ascending (oh, ow), from 0, in
// Num<T>::Acc, rounded once): identical bits. Host-checked: the last column block of a
// plane needs no window beyond OW (OW <= ceil(W / SW) + DLO_W), because the lanes after it
// belong to the next plane; 32-bit offsets. VEC (SW = 2): paired stores as blk2d.
struct StreamParams {
    i64 blocks;      // column blocks of all planes: N * C * ceil(W / SW)
    i64 col_warps;   // warps across them, 32 - EW blocks each
    i64 strips;      // row strips per column of warps
    i64 strip_rows;  // block rows per strip
    i64 dv[4];       // fast_div magic numbers of div[0] and div[1]
    i64 div[2];      // ceil(W / SW), C
};


template <typename T, int KH, int KW, int SH, int SW, int PH, int PW, bool VEC>
__global__ void __launch_bounds__(256) max_pool_grad_stream2d(const T* __restrict__ x, const T* __restrict__ dy,
                                                              T* __restrict__ dx, const PoolParams p,
                                                              const StreamParams s) {
    typedef typename Num<T>::Acc Acc;
    typedef typename PoolKey<T>::K K;
    // ceil((P - K + 1) / S) = -floor((K - 1 - P) / S)
    constexpr int DLO_H = -floor_div<SH>(KH - 1 - PH), DHI_H = floor_div<SH>(SH - 1 + PH);
    constexpr int DLO_W = -floor_div<SW>(KW - 1 - PW), DHI_W = floor_div<SW>(SW - 1 + PW);
    constexpr int NWH = DHI_H - DLO_H + 1, EW = DHI_W - DLO_W;
    constexpr int KEEP = KH > SH ? KH - SH : 0;  // input rows a window shares with the previous one
    constexpr int NEWR = KH - KEEP;              // rows it adds
    static_assert(!VEC || SW == 2, "paired stores cover one block row");
    const int lane = threadIdx.x & 31;
    const int warp = (int)((blockIdx.x * 256u + threadIdx.x) >> 5);
    if (warp >= (int)(s.col_warps * s.strips)) return;  // whole warps leave together
    const int cw = warp % (int)s.col_warps, strip = warp / (int)s.col_warps;
    const int flat = cw * (32 - EW) + lane;
    const bool live = flat < (int)s.blocks;  // dead lanes still take part in the shuffles
    const bool owner = live && lane < 32 - EW;
    const u32 f = live ? (u32)flat : 0u;
    const u32 plane = fast_div(f, s.dv[0], s.dv[1]);
    const int j = (int)(f - plane * (u32)s.div[0]);
    const u32 n = fast_div(plane, s.dv[2], s.dv[3]);
    const u32 c = plane - n * (u32)s.div[1];
    const int H = (int)p.in_size[1], W = (int)p.in_size[2];
    const int OH = (int)p.out_size[1], OW = (int)p.out_size[2];
    const int oc = j + DLO_W;  // this lane's window column
    const bool col_ok = live && oc >= 0 && oc < OW;
    const int xs3 = (int)p.x_stride[3], xs4 = VEC ? 1 : (int)p.x_stride[4], ys3 = (int)p.y_stride[3];
    const int zs3 = (int)p.z_stride[3], zs4 = VEC ? 1 : (int)p.z_stride[4];
    const int w0 = oc * SW - PW;
    // Column w0 of row 0 and the InputGradient column oc (dereferenced only in bounds).
    const T* xc = x + (int)n * (int)p.x_stride[0] + (int)c * (int)p.x_stride[1] + w0 * xs4;
    const T* gp = dy + (int)n * (int)p.y_stride[0] + (int)c * (int)p.y_stride[1] + oc * (int)p.y_stride[4];
    T* dp = dx + (int)n * (int)p.z_stride[0] + (int)c * (int)p.z_stride[1] + j * SW * zs4;
    bool cok[KW];
#pragma unroll
    for (int kw = 0; kw < KW; ++kw) cok[kw] = col_ok && w0 + kw >= 0 && w0 + kw < W;

    // Raw elements: the keys (PoolKey<T>::of) are formed in absorb, where they are used, so
    // that nothing waits for a load a step ahead of its use (clamping at the load made the
    // FLOAT32 kernel 30% slower on the H100).
    auto load_row = [&](int ih, T(&row)[KW], bool& ok) {
        ok = ih >= 0 && ih < H;
        const T* rp = xc + ih * xs3;
#pragma unroll
        for (int kw = 0; kw < KW; ++kw) row[kw] = ok && cok[kw] ? rp[kw * xs4] : T();
    };
    // The rows window row oh adds and its InputGradient, loaded a step ahead of their use.
    struct Fresh {
        T v[NEWR][KW];
        bool rok[NEWR];
        Acc g;
    };
    auto fetch = [&](int oh, Fresh& fr) {
#pragma unroll
        for (int r = 0; r < NEWR; ++r) load_row(oh * SH - PH + KEEP + r, fr.v[r], fr.rok[r]);
        fr.g = col_ok && oh >= 0 && oh < OH ? Num<T>::to_acc(gp[oh * ys3]) : Acc(0);
    };
    // The newest window's rows (keys) and whether each is inside the plane; the argmax
    // (255: none) and InputGradient of window rows i + DLO_H + a, a < NWH.
    K v[KH][KW];  // padding: PoolKey<T>::none() (-inf), below every key
    int sel[NWH];
    Acc g[NWH];
#pragma unroll
    for (int a = 0; a < NWH; ++a) {
        sel[a] = 255;
        g[a] = Acc(0);
    }
    // Window row oh from the previous window's last KEEP rows and `fr`: the argmax, in
    // window_argmax's order and rule. Padding holds none() (-inf), below every key (>= L),
    // so "the first in-bounds element starts, a strictly greater one replaces" is a plain
    // running "strictly greater" from none() (255 stays for a window of padding only).
    auto absorb = [&](int oh, const Fresh& fr) {
#pragma unroll
        for (int kh = 0; kh < KH; ++kh) {
            const int r = kh < KEEP ? 0 : kh - KEEP;
#pragma unroll
            for (int kw = 0; kw < KW; ++kw)
                v[kh][kw] = kh < KEEP ? v[kh < KEEP ? kh + SH : 0][kw]
                                      : (fr.rok[r] && cok[kw] ? PoolKey<T>::of(fr.v[r][kw]) : PoolKey<T>::none());
        }
        int b = 255;
        K bv = PoolKey<T>::none();
#pragma unroll
        for (int kh = 0; kh < KH; ++kh) {
#pragma unroll
            for (int kw = 0; kw < KW; ++kw) {
                if (v[kh][kw] > bv) {
                    bv = v[kh][kw];
                    b = kh * KW + kw;
                }
            }
        }
#pragma unroll
        for (int a = 0; a + 1 < NWH; ++a) {
            sel[a] = sel[a + 1];
            g[a] = g[a + 1];
        }
        sel[NWH - 1] = col_ok && oh >= 0 && oh < OH ? b : 255;
        g[NWH - 1] = fr.g;
    };

    const int nbh = (H + SH - 1) / SH;
    const int i0 = strip * (int)s.strip_rows;
    const int i1 = i0 + (int)s.strip_rows < nbh ? i0 + (int)s.strip_rows : nbh;
    // Window rows i0 + DLO_H .. i0 + DHI_H - 1 (none when NWH = 1, where K <= S and no
    // rows are kept); the first window's KEEP shared rows are loaded straight into v. Each
    // step then adds window row i + DHI_H.
    constexpr int PRE = NWH - 1;
    const int first = i0 + DHI_H - PRE;
#pragma unroll
    for (int kh = 0; kh < KEEP; ++kh) {
        T row[KW];
        bool ok;
        load_row(first * SH - PH + kh, row, ok);
#pragma unroll
        for (int kw = 0; kw < KW; ++kw) v[kh + SH][kw] = ok && cok[kw] ? PoolKey<T>::of(row[kw]) : PoolKey<T>::none();
    }
    // The next step's loads are issued before this step computes (loading two or three
    // steps ahead measured slower on the H100: more registers, fewer warps).
    Fresh next;
#pragma unroll
    for (int a = 0; a < PRE; ++a) {
        fetch(first + a, next);
        absorb(first + a, next);
    }
    fetch(i0 + DHI_H, next);
    for (int i = i0; i < i1; ++i) {
        const Fresh cur = next;
        if (i + 1 < i1) fetch(i + 1 + DHI_H, next);
        absorb(i + DHI_H, cur);
        // The windows of lanes lane .. lane + EW (window columns j + DLO_W .. j + DHI_W);
        // a lane past the plane's last block holds another plane's window: none here.
        int ns[NWH][EW + 1];
        Acc ng[NWH][EW + 1];
#pragma unroll
        for (int a = 0; a < NWH; ++a) {
            ns[a][0] = sel[a];
            ng[a][0] = g[a];
#pragma unroll
            for (int b = 1; b <= EW; ++b) {
                const int sb = __shfl_down_sync(0xffffffffu, sel[a], b);
                ns[a][b] = j + b < (int)s.div[0] ? sb : 255;
                ng[a][b] = __shfl_down_sync(0xffffffffu, g[a], b);
            }
        }
        if (!owner) continue;
        Acc acc[SH][SW];
#pragma unroll
        for (int y = 0; y < SH; ++y) {
#pragma unroll
            for (int xx = 0; xx < SW; ++xx) {
                Acc sum = Acc(0);
#pragma unroll
                for (int a = 0; a < NWH; ++a) {
                    const int kh = y + PH - (DLO_H + a) * SH;  // offset in window row i + DLO_H + a
#pragma unroll
                    for (int b = 0; b <= EW; ++b) {
                        const int kw = xx + PW - (DLO_W + b) * SW;
                        if (kh >= 0 && kh < KH && kw >= 0 && kw < KW && ns[a][b] == kh * KW + kw) sum += ng[a][b];
                    }
                }
                acc[y][xx] = sum;
            }
        }
#pragma unroll
        for (int y = 0; y < SH; ++y) {
            const int ih = i * SH + y;
            if (ih >= H) break;
            if (VEC) {  // W is even: both columns of the pair exist
                Pair<T>::store(dp + ih * zs3, acc[y][0], acc[y][1]);
            } else {
#pragma unroll
                for (int xx = 0; xx < SW; ++xx)
                    if (j * SW + xx < W) dp[ih * zs3 + xx * zs4] = Num<T>::from_acc(acc[y][xx]);
            }
        }
    }
}
