// RESAMPLE2 (forward) and RESAMPLE_GRAD1 (its exact transpose, as a gather).
//
// Both work on four dimensions (fewer are padded with leading size-1 dimensions whose
// map is the identity). The per-axis maps are tables computed on the host with the
// reference's float32 coordinate rule (dmlops.reference._resample.axis_taps), so the
// selected indices are identical to the reference:
//   forward: for output index o of axis a, taps (idx0, w0) and (idx1, w1) at
//            tab_off[a] + o (NEAREST uses idx0 only);
//   grad:    for input index i of axis a, the CSR list [start[i], start[i + 1]) of
//            (output index, weight) pairs whose forward tap reads i.
// Taps of weight exactly 0 are skipped (they add 0 even against inf/nan, like the
// reference). Sums are formed in Num<T>::Acc and rounded once.
#include "common.cuh"

struct ResampleParams {
    i64 count;
    i64 out_size[4];  // the tensor being written
    i64 in_size[4];   // the tensor being read
    i64 x_stride[4];  // element strides of the tensor being read
    i64 y_stride[4];  // element strides of the tensor being written
    i64 tab_off[4];   // per-axis offsets into the tables
    i64 identity;     // grad: bit a set when axis a maps every index to itself (no table reads)
};

template <typename T, bool LINEAR, typename I>
__global__ void __launch_bounds__(256) resample_fwd(const T* __restrict__ x, T* __restrict__ y,
                                                    const i64* __restrict__ idx0, const i64* __restrict__ idx1,
                                                    const double* __restrict__ w0, const double* __restrict__ w1,
                                                    const ResampleParams p) {
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
        Acc w[4][2];
#pragma unroll
        for (int a = 0; a < 4; ++a) {
            const i64 q = p.tab_off[a] + o[a];
            off[a][0] = (I)idx0[q] * (I)p.x_stride[a];
            off[a][1] = (I)idx1[q] * (I)p.x_stride[a];
            w[a][0] = (Acc)w0[q];
            w[a][1] = (Acc)w1[q];
        }
        Acc acc = Acc(0);
#pragma unroll
        for (int a0 = 0; a0 < 2; ++a0) {
            if (w[0][a0] == Acc(0)) continue;
#pragma unroll
            for (int a1 = 0; a1 < 2; ++a1) {
                if (w[1][a1] == Acc(0)) continue;
                const Acc w01 = w[0][a0] * w[1][a1];
#pragma unroll
                for (int a2 = 0; a2 < 2; ++a2) {
                    if (w[2][a2] == Acc(0)) continue;
                    const Acc w012 = w01 * w[2][a2];
#pragma unroll
                    for (int a3 = 0; a3 < 2; ++a3) {
                        if (w[3][a3] == Acc(0)) continue;
                        const T v = x[off[0][a0] + off[1][a1] + off[2][a2] + off[3][a3]];
                        acc += (w012 * w[3][a3]) * Num<T>::to_acc(v);
                    }
                }
            }
        }
        y[dst] = Num<T>::from_acc(acc);
        }
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
