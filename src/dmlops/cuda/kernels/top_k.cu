// TOP_K, TOP_K1 on the GPU (dmlops.cuda.reduction), bit for bit with the reference.
//
// The host describes L lines of n elements (line l: coordinates l decomposed over ksize,
// innermost last; element j of the line at input offset sum(c * kx) + j * ax, output
// slot t at sum(c * kv) + t * av (values) and sum(c * ki) + t * ai (indices)). Output
// order: the larger key first, equal keys by ascending index (the reference's stable
// sorts). Keys are unsigned integers ordered as the values: floats by their bits with
// the sign folded in, -0 as +0 (equal values), every NaN the largest (NumPy sorts NaN
// last ascending); signed integers with the sign bit flipped. SMALLEST (TOP_K1
// INCREASING) complements the key. A value is written by reading the input element at
// the selected index again, so its bits are the input's.
//
// * top_k_warp: types of up to 4 bytes and K <= KMAX: a warp per line, each lane keeping
//   the KMAX best (key << 32 | ~index) composites of its elements sorted in registers,
//   then K rounds of a warp-wide maximum whose lane pops its head.
// * top_k_select: any type, any K: a warp per line, K rounds each picking the best element
//   ordered after the previous pick (O(K n)).

#include "common.cuh"

#define TOPK_MAX_DIMS 8
#define TOPK_LOADS 8  // elements a lane loads at once in top_k_warp

struct TopKParams {
    i64 lines;
    i64 n;
    i64 k;
    i64 ax, av, ai;
    i64 kdims;
    i64 ksize[TOPK_MAX_DIMS];
    i64 kx[TOPK_MAX_DIMS];
    i64 kv[TOPK_MAX_DIMS];
    i64 ki[TOPK_MAX_DIMS];
};

__device__ __forceinline__ void topk_offsets(i64 l, const TopKParams& p, i64& xo, i64& vo, i64& io) {
    xo = vo = io = 0;
    for (int d = (int)p.kdims - 1; d >= 0; --d) {
        const i64 n = p.ksize[d];
        const i64 q = l / n;
        const i64 c = l - q * n;
        xo += c * p.kx[d];
        vo += c * p.kv[d];
        io += c * p.ki[d];
        l = q;
    }
}

// Order-preserving unsigned keys (see the header).
template <typename T> struct SortKey;
template <> struct SortKey<float> {
    static __device__ __forceinline__ u64 key(float v) {
        u32 b = __float_as_uint(v);
        if (v != v) return 0xffffffffull;
        if ((b & 0x7fffffffu) == 0) b = 0;  // -0 equals +0
        return (u64)(b ^ ((b >> 31) ? 0xffffffffu : 0x80000000u));
    }
    static const int BITS = 32;
};
template <> struct SortKey<half_t> {
    static __device__ __forceinline__ u64 key(half_t v) {
        u32 b = v.bits;
        if ((b & 0x7fffu) > 0x7c00u) return 0xffffull;
        if ((b & 0x7fffu) == 0) b = 0;
        return (u64)(b ^ ((b >> 15) ? 0xffffu : 0x8000u));
    }
    static const int BITS = 16;
};
template <> struct SortKey<double> {
    static __device__ __forceinline__ u64 key(double v) {
        u64 b = (u64)__double_as_longlong(v);
        if (v != v) return ~0ull;
        if ((b & 0x7fffffffffffffffull) == 0) b = 0;
        return b ^ ((b >> 63) ? ~0ull : 0x8000000000000000ull);
    }
    static const int BITS = 64;
};
template <typename T, int B, bool SIGNED> struct IntKey {
    static __device__ __forceinline__ u64 key(T v) {
        const u64 mask = B == 64 ? ~0ull : ((1ull << B) - 1);
        return SIGNED ? (((u64)(i64)v ^ (1ull << (B - 1))) & mask) : (u64)v;
    }
    static const int BITS = B;
};
template <> struct SortKey<i8> : IntKey<i8, 8, true> {};
template <> struct SortKey<u8> : IntKey<u8, 8, false> {};
template <> struct SortKey<i16> : IntKey<i16, 16, true> {};
template <> struct SortKey<u16> : IntKey<u16, 16, false> {};
template <> struct SortKey<i32> : IntKey<i32, 32, true> {};
template <> struct SortKey<u32> : IntKey<u32, 32, false> {};
template <> struct SortKey<i64> : IntKey<i64, 64, true> {};
template <> struct SortKey<u64> : IntKey<u64, 64, false> {};

template <typename T, bool SMALLEST> __device__ __forceinline__ u64 order_key(T v) {
    const u64 k = SortKey<T>::key(v);
    const int B = SortKey<T>::BITS;
    const u64 mask = B == 64 ? ~0ull : ((1ull << B) - 1);
    return SMALLEST ? (~k & mask) : k;
}

template <typename T, typename IDX, bool SMALLEST, int KMAX>
__global__ void __launch_bounds__(256) top_k_warp(const T* __restrict__ x, T* __restrict__ values,
                                                  IDX* __restrict__ indices, const TopKParams p) {
    const int lane = threadIdx.x & 31;
    const i64 warps = (i64)gridDim.x * (blockDim.x >> 5);
    for (i64 l = (i64)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5); l < p.lines; l += warps) {
        i64 xo, vo, io;
        topk_offsets(l, p, xo, vo, io);
        const T* q = x + xo;
        u64 r[KMAX];
#pragma unroll
        for (int i = 0; i < KMAX; ++i) r[i] = 0;  // below every composite (index < 2^32 - 1)
        for (i64 j0 = lane; j0 < p.n; j0 += TOPK_LOADS * 32) {
            T v[TOPK_LOADS];  // loads in flight, then inserted in index order
#pragma unroll
            for (int u = 0; u < TOPK_LOADS; ++u) {
                const i64 j = j0 + 32 * u;
                if (j < p.n) v[u] = q[j * p.ax];
            }
#pragma unroll
            for (int u = 0; u < TOPK_LOADS; ++u) {
                const i64 j = j0 + 32 * u;
                if (j >= p.n) break;
                const u64 c = (order_key<T, SMALLEST>(v[u]) << 32) | (u64)(0xffffffffu - (u32)j);
                if (c > r[KMAX - 1]) {  // insert into the descending list
#pragma unroll
                    for (int i = KMAX - 1; i > 0; --i) r[i] = c > r[i - 1] ? r[i - 1] : (c > r[i] ? c : r[i]);
                    r[0] = c > r[0] ? c : r[0];
                }
            }
        }
        for (i64 t = 0; t < p.k; ++t) {
            u64 best = r[0];
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) {
                const u64 other = __shfl_xor_sync(0xffffffffu, best, o);
                best = other > best ? other : best;
            }
            if (r[0] == best) {  // composites are unique: one lane pops
#pragma unroll
                for (int i = 0; i < KMAX - 1; ++i) r[i] = r[i + 1];
                r[KMAX - 1] = 0;
            }
            if (lane == 0) {
                const i64 j = (i64)(0xffffffffu - (u32)best);
                values[vo + t * p.av] = q[j * p.ax];
                indices[io + t * p.ai] = (IDX)j;
            }
        }
    }
}

template <typename T, typename IDX, bool SMALLEST>
__global__ void __launch_bounds__(256) top_k_select(const T* __restrict__ x, T* __restrict__ values,
                                                    IDX* __restrict__ indices, const TopKParams p) {
    const int lane = threadIdx.x & 31;
    const i64 warps = (i64)gridDim.x * (blockDim.x >> 5);
    for (i64 l = (i64)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5); l < p.lines; l += warps) {
        i64 xo, vo, io;
        topk_offsets(l, p, xo, vo, io);
        const T* q = x + xo;
        u64 pk = 0;
        i64 pi = -1;  // the previous pick; -1: none yet
        for (i64 t = 0; t < p.k; ++t) {
            u64 bk = 0;
            i64 bi = -1;  // the best element ordered after the previous pick
            for (i64 j = lane; j < p.n; j += 32) {
                const u64 k = order_key<T, SMALLEST>(q[j * p.ax]);
                const bool after = pi < 0 || k < pk || (k == pk && j > pi);
                if (after && (bi < 0 || k > bk || (k == bk && j < bi))) {
                    bk = k;
                    bi = j;
                }
            }
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) {
                const u64 ok = __shfl_xor_sync(0xffffffffu, bk, o);
                const i64 oi = __shfl_xor_sync(0xffffffffu, bi, o);
                if (oi >= 0 && (bi < 0 || ok > bk || (ok == bk && oi < bi))) {
                    bk = ok;
                    bi = oi;
                }
            }
            pk = bk;
            pi = bi;  // K <= n: some element is always left
            if (lane == 0) {
                values[vo + t * p.av] = q[bi * p.ax];
                indices[io + t * p.ai] = (IDX)bi;
            }
        }
    }
}
