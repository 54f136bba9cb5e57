// RESAMPLE2 (forward) and RESAMPLE_GRAD1 (its exact transpose, as a gather).
//
// Both work on four dimensions (fewer are padded with leading size-1 dimensions whose
// map is the identity). The per-axis maps are tables computed on the host with the
// semantics layer's float32 rules (dmlops.descs.resampling), so the selected indices are
// identical to the reference:
//   forward: for output index o of axis a, taps idx0 and idx1 and the weight t at
//            tab_off[a] + o (NEAREST uses idx0 only). LINEAR interpolates as DirectML
//            does (erratum E33): the axes whose bit is set in `interp`, one after the
//            other, outermost first, each as a + (b - a) * t in float32, rounded at
//            every step (no fused multiply-add); other axes read idx0 as it is.
//   grad:    for input index i of axis a, the CSR list [start[i], start[i + 1]) of
//            (output index, weight) pairs whose forward tap reads i. Taps of weight
//            exactly 0 are skipped (they add 0 even against inf/nan, like the
//            reference). Sums are formed in Num<T>::Acc and rounded once.
#include "common.cuh"

struct ResampleParams {
    i64 count;
    i64 out_size[4];  // the tensor being written
    i64 in_size[4];   // the tensor being read
    i64 x_stride[4];  // element strides of the tensor being read
    i64 y_stride[4];  // element strides of the tensor being written
    i64 tab_off[4];   // per-axis offsets into the tables
    i64 identity;     // grad: bit a set when axis a maps every index to itself (no table reads)
    i64 interp;       // forward LINEAR: bit a set when axis a is interpolated
};

// DirectML's interpolation step, float32 with every operation rounded (no contraction).
__device__ __forceinline__ float lerp_dml(float a, float b, float t) {
    return __fadd_rn(a, __fmul_rn(__fsub_rn(b, a), t));
}

template <typename T, bool LINEAR, typename I>
__global__ void __launch_bounds__(256) resample_fwd(const T* __restrict__ x, T* __restrict__ y,
                                                    const i64* __restrict__ idx0, const i64* __restrict__ idx1,
                                                    const float* __restrict__ tw, const ResampleParams p) {
    typedef typename Num<T>::Acc Acc;
    const I step = (I)gridDim.x * (I)blockDim.x;
    for (I t = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; t < (I)p.count; t += step) {
        I r = t;
        I o[4];
#pragma unroll
        for (int a = 3; a >= 0; --a) {
            o[a] = r % (I)p.out_size[a];
            r /= (I)p.out_size[a];
        }
        I dst = 0;
#pragma unroll
        for (int a = 0; a < 4; ++a) dst += o[a] * (I)p.y_stride[a];
        if (!LINEAR) {
            I src = 0;
#pragma unroll
            for (int a = 0; a < 4; ++a) src += (I)idx0[p.tab_off[a] + o[a]] * (I)p.x_stride[a];
            y[dst] = x[src];  // nearest neighbour: data movement, bit-exact
        } else {
        I off[4][2];
        float t[4];
#pragma unroll
        for (int a = 0; a < 4; ++a) {
            const i64 q = p.tab_off[a] + o[a];
            off[a][0] = (I)idx0[q] * (I)p.x_stride[a];
            off[a][1] = (I)idx1[q] * (I)p.x_stride[a];
            t[a] = tw[q];
        }
        const int interp = (int)p.interp;
        // Corner k holds tap (k >> 3) & 1 of axis 0, ..., k & 1 of axis 3; corners that
        // pick the second tap of an axis that is not interpolated are never read.
        float v[16];
#pragma unroll
        for (int k = 0; k < 16; ++k) {
            if (k & ~((interp & 1 ? 8 : 0) | (interp & 2 ? 4 : 0) | (interp & 4 ? 2 : 0) | (interp & 8 ? 1 : 0))) {
                v[k] = 0.0f;
                continue;
            }
            const I src = off[0][(k >> 3) & 1] + off[1][(k >> 2) & 1] + off[2][(k >> 1) & 1] + off[3][k & 1];
            v[k] = (float)Num<T>::to_acc(x[src]);
        }
        if (interp & 1) {
#pragma unroll
            for (int k = 0; k < 8; ++k) v[k] = lerp_dml(v[k], v[k + 8], t[0]);
        }
        if (interp & 2) {
#pragma unroll
            for (int k = 0; k < 4; ++k) v[k] = lerp_dml(v[k], v[k + 4], t[1]);
        }
        if (interp & 4) {
#pragma unroll
            for (int k = 0; k < 2; ++k) v[k] = lerp_dml(v[k], v[k + 2], t[2]);
        }
        if (interp & 8) v[0] = lerp_dml(v[0], v[1], t[3]);
        y[dst] = Num<T>::from_acc((Acc)v[0]);
        }
    }
}

// RESAMPLE2 fast path, FLOAT32 / FLOAT16, when only the last two of four axes resample
// (the first two are not interpolated and read every index as it is) and 32-bit offsets
// are exact: a thread per M outputs of one row, its coordinates by fast division once,
// the row's taps once and each column's as one 16-byte HWTaps (offsets and the weight
// t). The interpolation is resample_fwd's (height, then width, float32 lerps), so the
// bits equal resample_fwd's.
//
// STRIDED: a warp takes 32 x M consecutive outputs of a row and a thread every 32nd of
// them, so each of its column-table loads, input loads and stores is one coalesced run
// across the warp (rows of at least 32 x M outputs). Otherwise a thread takes M adjacent
// outputs and stores them as one vector; the lanes' column records are then M apart, so
// a warp's table load spans M x 4 cache lines.
// M adjacent elements stored as one vector (M * sizeof(T) bytes, aligned by the host).
template <typename T, int M> struct VecStore {
    static __device__ __forceinline__ void store(T* p, const T (&v)[M]) {
#pragma unroll
        for (int m = 0; m < M; ++m) p[m] = v[m];
    }
};
template <> struct VecStore<float, 4> {
    static __device__ __forceinline__ void store(float* p, const float (&v)[4]) {
        *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
    }
};
template <> struct VecStore<half_t, 4> {
    static __device__ __forceinline__ void store(half_t* p, const half_t (&v)[4]) {
        uint2 u;
        u.x = (u32)v[0].bits | ((u32)v[1].bits << 16);
        u.y = (u32)v[2].bits | ((u32)v[3].bits << 16);
        *reinterpret_cast<uint2*>(p) = u;
    }
};

struct ResampleHWParams {
    i64 count;        // threads
    i64 dv[6];        // fast_div magic numbers of div[0..2]
    i64 div[3];       // output groups per row (of M outputs, or STRIDED of 32 x M), OutputHeight, channels
    i64 out_w;        // OutputWidth
    i64 vec_store;    // 1: a thread's M outputs are one aligned vector (unit stride, host-checked)
    i64 interp;       // LINEAR: bit 0 set when height is interpolated, bit 1 when width is
    i64 x_stride[4];  // InputTensor
    i64 y_stride[4];  // OutputTensor
};

// One output index's two taps along an axis: element offsets (index x the input stride)
// and the weight t, loaded as one 16-byte piece.
struct __align__(16) HWTaps {
    int off0, off1;
    float t, unused;
};

__device__ __forceinline__ HWTaps load_taps(const HWTaps* t) {
    const int4 v = __ldg(reinterpret_cast<const int4*>(t));
    return HWTaps{v.x, v.y, __int_as_float(v.z), __int_as_float(v.w)};
}

template <typename T, bool LINEAR, int M, bool STRIDED>
__global__ void __launch_bounds__(256) resample_fwd_hw(const T* __restrict__ x, T* __restrict__ y,
                                                       const HWTaps* __restrict__ row_taps,
                                                       const HWTaps* __restrict__ col_taps,
                                                       const ResampleHWParams p) {
    typedef typename Num<T>::Acc Acc;
    const u32 t = blockIdx.x * 256u + threadIdx.x;
    if (t >= (u32)p.count) return;
    const PlaneItem item = plane_item(STRIDED ? t >> 5 : t, p.dv, p.div);
    const int q = item.group, oh = item.row;
    // Output m of this thread: first + m * step.
    const int first = STRIDED ? q * 32 * M + (int)(t & 31u) : q * M, step = STRIDED ? 32 : 1;
    const u32 plane = item.plane, n = item.n, c = item.c;
    const T* xp = x + (int)n * (int)p.x_stride[0] + (int)c * (int)p.x_stride[1];
    T* yp = y + (int)n * (int)p.y_stride[0] + (int)c * (int)p.y_stride[1] + oh * (int)p.y_stride[2];
    const int ys3 = (int)p.y_stride[3];
    const int out_w = (int)p.out_w;
    const HWTaps hr = load_taps(row_taps + oh);
    const T* row[2] = {xp + hr.off0, xp + hr.off1};
    const bool along_h = p.interp & 1, along_w = p.interp & 2;
    T outs[M];
#pragma unroll
    for (int m = 0; m < M; ++m) {
        const int ow = first + m * step;
        if (ow >= out_w) break;
        const HWTaps hc = load_taps(col_taps + ow);
        T& out = outs[m];
        if (!LINEAR) {
            out = row[0][hc.off0];  // nearest neighbour: data movement, bit-exact
        } else {
            // Height first, then width, as resample_fwd: the same float32 lerps.
            float left = (float)Num<T>::to_acc(row[0][hc.off0]);
            float right = along_w ? (float)Num<T>::to_acc(row[0][hc.off1]) : 0.0f;
            if (along_h) {
                left = lerp_dml(left, (float)Num<T>::to_acc(row[1][hc.off0]), hr.t);
                if (along_w) right = lerp_dml(right, (float)Num<T>::to_acc(row[1][hc.off1]), hr.t);
            }
            out = Num<T>::from_acc((Acc)(along_w ? lerp_dml(left, right, hc.t) : left));
        }
    }
    // One vector store where the host found every row's M-output groups aligned; else
    // one store per output (the last group of a row may be partial).
    if (!STRIDED && p.vec_store) {
        VecStore<T, M>::store(yp + first, outs);
        return;
    }
#pragma unroll
    for (int m = 0; m < M; ++m) {
        const int ow = first + m * step;
        if (ow >= out_w) break;
        yp[ow * ys3] = outs[m];
    }
}

// One (output index, weight) entry of axis a's CSR list; identity axes have exactly one
// entry (i, 1) and read no table.
template <typename W, typename I>
__device__ __forceinline__ void csr_entry(const i32* __restrict__ outs, const W* __restrict__ weights, bool identity,
                                          I i, I q, I& o, W& w) {
    if (identity) {
        o = i;
        w = W(1);
    } else {
        o = (I)outs[q];
        w = weights[q];
    }
}

template <typename T, typename W, typename I>
__global__ void __launch_bounds__(256) resample_grad(const T* __restrict__ dy, T* __restrict__ dx,
                                                     const i32* __restrict__ start, const i32* __restrict__ outs,
                                                     const W* __restrict__ weights, const ResampleParams p) {
    typedef typename Num<T>::Acc Acc;
    const I step = (I)gridDim.x * (I)blockDim.x;
    const int ident = (int)p.identity;
    for (I t = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; t < (I)p.count; t += step) {
        I r = t;
        I i[4];
#pragma unroll
        for (int a = 3; a >= 0; --a) {
            i[a] = r % (I)p.out_size[a];
            r /= (I)p.out_size[a];
        }
        I dst = 0, b[4], e[4];
#pragma unroll
        for (int a = 0; a < 4; ++a) {
            dst += i[a] * (I)p.y_stride[a];
            if (ident & (1 << a)) {
                b[a] = 0;
                e[a] = 1;
            } else {
                // p.tab_off[a] indexes `start` (one entry per input index plus one, per axis).
                b[a] = (I)start[p.tab_off[a] + i[a]];
                e[a] = (I)start[p.tab_off[a] + i[a] + 1];
            }
        }
        Acc acc = Acc(0);
        for (I q0 = b[0]; q0 < e[0]; ++q0) {
            I o0;
            W w0;
            csr_entry<W, I>(outs, weights, ident & 1, i[0], q0, o0, w0);
            const I s0 = o0 * (I)p.x_stride[0];
            for (I q1 = b[1]; q1 < e[1]; ++q1) {
                I o1;
                W w1;
                csr_entry<W, I>(outs, weights, ident & 2, i[1], q1, o1, w1);
                const I s1 = s0 + o1 * (I)p.x_stride[1];
                const Acc v1 = (Acc)w0 * (Acc)w1;
                for (I q2 = b[2]; q2 < e[2]; ++q2) {
                    I o2;
                    W w2;
                    csr_entry<W, I>(outs, weights, ident & 4, i[2], q2, o2, w2);
                    const I s2 = s1 + o2 * (I)p.x_stride[2];
                    const Acc v2 = v1 * (Acc)w2;
                    for (I q3 = b[3]; q3 < e[3]; ++q3) {
                        I o3;
                        W w3;
                        csr_entry<W, I>(outs, weights, ident & 8, i[3], q3, o3, w3);
                        acc += (v2 * (Acc)w3) * Num<T>::to_acc(dy[s2 + o3 * (I)p.x_stride[3]]);
                    }
                }
            }
        }
        dx[dst] = Num<T>::from_acc(acc);
    }
}

// RESAMPLE_GRAD1 fast path for the common case where only the last two axes resample
// (the first two are identity maps, e.g. NCHW): both CSR lists have at most L entries,
// so every InputGradient load of an element is issued before the first one is used
// (the generic kernel's runtime loops serialise them and end up latency-bound).
// Padded slots have weight 0 and load nothing; the sum is formed in Acc, rounded once.
template <typename T, typename W, typename I, int L>
__global__ void __launch_bounds__(256) resample_grad_hw(const T* __restrict__ dy, T* __restrict__ dx,
                                                        const i32* __restrict__ start, const i32* __restrict__ outs,
                                                        const W* __restrict__ weights, const ResampleParams p) {
    typedef typename Num<T>::Acc Acc;
    const I step = (I)gridDim.x * (I)blockDim.x;
    for (I t = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; t < (I)p.count; t += step) {
        I r = t;
        const I iw = r % (I)p.out_size[3];
        r /= (I)p.out_size[3];
        const I ih = r % (I)p.out_size[2];
        r /= (I)p.out_size[2];
        const I i1 = r % (I)p.out_size[1];
        const I i0 = r / (I)p.out_size[1];
        const I bh = (I)start[p.tab_off[2] + ih], eh = (I)start[p.tab_off[2] + ih + 1];
        const I bw = (I)start[p.tab_off[3] + iw], ew = (I)start[p.tab_off[3] + iw + 1];
        I oh[L], ow[L];
        W wh[L], ww[L];
#pragma unroll
        for (int k = 0; k < L; ++k) {
            const bool vh = bh + k < eh, vw = bw + k < ew;
            oh[k] = vh ? (I)outs[bh + k] : 0;
            wh[k] = vh ? weights[bh + k] : W(0);
            ow[k] = vw ? (I)outs[bw + k] : 0;
            ww[k] = vw ? weights[bw + k] : W(0);
        }
        const T* plane = dy + i0 * (I)p.x_stride[0] + i1 * (I)p.x_stride[1];
        Acc g[L][L];
#pragma unroll
        for (int a = 0; a < L; ++a) {
#pragma unroll
            for (int b = 0; b < L; ++b) {
                g[a][b] = (wh[a] != W(0) && ww[b] != W(0))
                              ? Num<T>::to_acc(plane[oh[a] * (I)p.x_stride[2] + ow[b] * (I)p.x_stride[3]])
                              : Acc(0);
            }
        }
        Acc acc = Acc(0);
#pragma unroll
        for (int a = 0; a < L; ++a) {
            if (wh[a] == W(0)) continue;
            Acc row = Acc(0);
#pragma unroll
            for (int b = 0; b < L; ++b) {
                if (ww[b] != W(0)) row += (Acc)ww[b] * g[a][b];
            }
            acc += (Acc)wh[a] * row;
        }
        dx[i0 * (I)p.y_stride[0] + i1 * (I)p.y_stride[1] + ih * (I)p.y_stride[2] + iw * (I)p.y_stride[3]] =
            Num<T>::from_acc(acc);
    }
}

// RESAMPLE_GRAD1 for a 2x last axis (identity first two axes, any H map): every thread
// writes 2 adjacent OutputGradient elements iw0 = 2l, 2l + 1 of one row, which read
// InputGradient columns 2 * iw + OFF + b, b < L (the host checked that every CSR entry of
// the W axis lies there, and of the H axis in rows sh * ih + offh + a, a < 4). Per-axis
// dense weight tables hold the summed weight of each such column (0: no entry, skipped,
// so a 0-weight tap never multiplies an inf/NaN). Each lane loads its own 4 columns
// [4l, 4l + 4) of a row with one vector load; the EL columns on its left and ER on its
// right come from the neighbouring lanes (shuffles), or are loaded directly at row and
// warp edges when their weight is not 0. Sums: over b inside a row, then over rows,
// in Num<T>::Acc, rounded once. div = (pairs per row, H, C).
struct ResampleX2Params {
    i64 count;  // threads
    i64 dv[6];
    i64 div[3];
    i64 x_stride[4];  // InputGradient (read)
    i64 y_stride[4];  // OutputGradient (written)
    i64 w;            // OutputGradient width
    i64 sh, offh;     // H axis rows: sh * ih + offh + a
};

template <typename T> struct Quad;
template <> struct Quad<float> {
    static __device__ __forceinline__ void load(const float* p, float (&v)[4]) {
        const float4 q = *reinterpret_cast<const float4*>(p);
        v[0] = q.x;
        v[1] = q.y;
        v[2] = q.z;
        v[3] = q.w;
    }
};
template <> struct Quad<half_t> {
    static __device__ __forceinline__ void load(const half_t* p, float (&v)[4]) {
        const uint2 q = *reinterpret_cast<const uint2*>(p);
        half_t h;
        h.bits = (u16)(q.x & 0xffffu);
        v[0] = h2f(h);
        h.bits = (u16)(q.x >> 16);
        v[1] = h2f(h);
        h.bits = (u16)(q.y & 0xffffu);
        v[2] = h2f(h);
        h.bits = (u16)(q.y >> 16);
        v[3] = h2f(h);
    }
};

// Two adjacent elements stored at once (unit inner stride, even offset).
template <typename T> struct Duo;
template <> struct Duo<float> {
    static __device__ __forceinline__ void store(float* p, float a, float b) {
        *reinterpret_cast<float2*>(p) = make_float2(a, b);
    }
};
template <> struct Duo<half_t> {
    static __device__ __forceinline__ void store(half_t* p, float a, float b) {
        const u32 lo = f2h(a).bits, hi = f2h(b).bits;
        *reinterpret_cast<u32*>(p) = lo | (hi << 16);
    }
};

template <typename T, int L, int OFF, bool VEC>
__global__ void __launch_bounds__(256) resample_grad_x2(const T* __restrict__ dy, T* __restrict__ dx,
                                                        const float4* __restrict__ dwh,
                                                        const float4* __restrict__ dww, const ResampleX2Params p) {
    constexpr int EL = OFF < 0 ? -OFF : 0;                       // columns left of the lane's 4
    constexpr int ER = OFF + 2 + L > 4 ? OFF + 2 + L - 4 : 0;  // and right of them
    constexpr int NW = EL + 4 + ER;
    const u32 t = blockIdx.x * 256u + threadIdx.x;
    const bool active = t < (u32)p.count;  // inactive lanes still take part in the shuffles
    const int lane = threadIdx.x & 31;
    const u32 tt = active ? t : 0u;
    const PlaneItem item = plane_item(tt, p.dv, p.div);
    const int l = item.group, ih = item.row;
    const u32 plane = item.plane, n = item.n, c = item.c;
    const int W = (int)p.w;
    const int iw0 = 2 * l;
    const bool left_ok = lane > 0 && l > 0;  // lane - 1 holds columns 4l - 4 .. 4l - 1 of the same row
    const bool right_ok = lane < 31 && iw0 + 2 < W && t + 1 < (u32)p.count;
    const float4 hq = dwh[ih];
    const float wh[4] = {hq.x, hq.y, hq.z, hq.w};
    float ww[2][4];
    {
        const float4 a = dww[iw0];
        const float4 b = iw0 + 1 < W ? dww[iw0 + 1] : make_float4(0.f, 0.f, 0.f, 0.f);
        ww[0][0] = a.x, ww[0][1] = a.y, ww[0][2] = a.z, ww[0][3] = a.w;
        ww[1][0] = b.x, ww[1][1] = b.y, ww[1][2] = b.z, ww[1][3] = b.w;
    }
    // Window position k (0 <= k < NW) is column 4l - EL + k; does any nonzero weight use it?
    bool need[NW];
#pragma unroll
    for (int k = 0; k < NW; ++k) need[k] = false;
#pragma unroll
    for (int x = 0; x < 2; ++x) {
#pragma unroll
        for (int b = 0; b < L; ++b) {
            const int k = 2 * x + OFF + b + EL;
            if (k >= 0 && k < NW) need[k] = need[k] || ww[x][b] != 0.f;
        }
    }
    const T* plane_p = dy + (int)n * (int)p.x_stride[0] + (int)c * (int)p.x_stride[1];
    const int xs2 = (int)p.x_stride[2];
    const int row0 = (int)p.sh * ih + (int)p.offh;
    float acc[2] = {0.f, 0.f};
#pragma unroll
    for (int a = 0; a < 4; ++a) {
        const bool rv = active && wh[a] != 0.f;
        const T* rowp = plane_p + (row0 + a) * xs2;
        float own[4] = {0.f, 0.f, 0.f, 0.f};
        if (rv) Quad<T>::load(rowp + 4 * l, own);
        float win[NW];
#pragma unroll
        for (int k = 0; k < 4; ++k) win[EL + k] = own[k];
#pragma unroll
        for (int k = 0; k < EL; ++k) {
            const float s = __shfl_up_sync(0xffffffffu, own[4 - EL + k], 1);
            win[k] = left_ok ? s : ((rv && need[k]) ? Num<T>::to_acc(rowp[4 * l - EL + k]) : 0.f);
        }
#pragma unroll
        for (int k = 0; k < ER; ++k) {
            const float s = __shfl_down_sync(0xffffffffu, own[k], 1);
            win[EL + 4 + k] = right_ok ? s : ((rv && need[EL + 4 + k]) ? Num<T>::to_acc(rowp[4 * l + 4 + k]) : 0.f);
        }
        if (rv) {
#pragma unroll
            for (int x = 0; x < 2; ++x) {
                float row = 0.f;
#pragma unroll
                for (int b = 0; b < L; ++b) {
                    if (ww[x][b] != 0.f) row += ww[x][b] * win[2 * x + OFF + b + EL];
                }
                acc[x] += wh[a] * row;
            }
        }
    }
    if (!active) return;
    T* out = dx + (int)n * (int)p.y_stride[0] + (int)c * (int)p.y_stride[1] + ih * (int)p.y_stride[2];
    if (VEC) {
        Duo<T>::store(out + iw0, acc[0], acc[1]);
    } else {
        const int ys3 = (int)p.y_stride[3];
        out[iw0 * ys3] = Num<T>::from_acc(acc[0]);
        if (iw0 + 1 < W) out[(iw0 + 1) * ys3] = Num<T>::from_acc(acc[1]);
    }
}
