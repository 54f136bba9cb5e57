// Strided copy (SLICE1) and gather (GATHER): data movement by element size.
//
// The host collapses the logical iteration space (see dmlops/cuda/_plan.py) into NDIM
// outer dimensions and one innermost dimension. Each work item moves VEC consecutive
// output elements of the innermost dimension:
//   MODE 0: element-wise loads along the source's inner stride,
//   MODE 1: one vector load (source inner stride +1),
//   MODE 2: one vector load reversed in registers (source inner stride -1).
// The stores are one vector store (VEC > 1 requires a unit destination inner stride).
// GATHER adds IDX (the index type): the element offset of the gathered axis is
// clamp(index) * axis_stride, with clamp_index mapping every value into [0, n - 1], so
// no index value can address memory outside the input.
#include "common.cuh"

#define DMLOPS_MAXD 8

struct CopyParams {
    i64 count;        // work items (vectors)
    i64 inner_vecs;   // work items per innermost row
    i64 src_base;     // element offsets of the first element (may be negative for src)
    i64 dst_base;
    i64 src_inner;    // innermost strides in elements
    i64 dst_inner;
    i64 idx_base;
    i64 idx_inner;    // != 0 when the innermost dimension is an index dimension
    i64 axis_size;    // gathered axis: size and input stride
    i64 axis_stride;
    i64 size[DMLOPS_MAXD];  // outer dimensions, outermost first
    i64 src_stride[DMLOPS_MAXD];
    i64 dst_stride[DMLOPS_MAXD];
    i64 idx_stride[DMLOPS_MAXD];
};

struct NoIndex {
    int unused;
};

template <typename IDX> struct HasIndex {
    static const bool value = true;
};
template <> struct HasIndex<NoIndex> {
    static const bool value = false;
};

template <typename T, int N> struct alignas(sizeof(T) * N) Vec {
    T v[N];
};

template <typename IDX, bool WRAP> struct Gather {
    static __device__ __forceinline__ i64 offset(const IDX* __restrict__ idx, i64 pos, i64 n, i64 stride) {
        return clamp_index<IDX, WRAP>(idx[pos], n) * stride;
    }
};
template <bool WRAP> struct Gather<NoIndex, WRAP> {
    static __device__ __forceinline__ i64 offset(const NoIndex* __restrict__, i64, i64, i64) { return 0; }
};

#define DMLOPS_UNROLL 4

template <typename T, int VEC, int MODE, int NDIM, typename I, typename IDX, bool WRAP>
__global__ void __launch_bounds__(256) strided_copy(const T* __restrict__ src, T* __restrict__ dst,
                                                    const IDX* __restrict__ idx, const CopyParams p) {
    typedef Vec<T, VEC> V;
    const bool has_idx = HasIndex<IDX>::value;
    const I count = (I)p.count;
    const I inner_vecs = (I)p.inner_vecs;
    const I step = (I)gridDim.x * (I)blockDim.x;
    for (I w0 = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; w0 < count; w0 += step * DMLOPS_UNROLL) {
        V vals[DMLOPS_UNROLL];
        I dsts[DMLOPS_UNROLL];
#pragma unroll
        for (int u = 0; u < DMLOPS_UNROLL; ++u) {
            const I w = w0 + (I)u * step;
            if (w < count) {
                I row = w / inner_vecs;
                const I j = (w - row * inner_vecs) * VEC;
                I s = (I)p.src_base, d = (I)p.dst_base, x = (I)p.idx_base;
#pragma unroll
                for (int k = NDIM - 1; k >= 0; --k) {
                    const I n = (I)p.size[k];
                    const I c = row % n;
                    row /= n;
                    s += c * (I)p.src_stride[k];
                    d += c * (I)p.dst_stride[k];
                    if (has_idx) x += c * (I)p.idx_stride[k];
                }
                dsts[u] = d + j * (I)p.dst_inner;
                if (has_idx && p.idx_inner != 0) {
                    // The innermost dimension is an index dimension: one index per element.
#pragma unroll
                    for (int e = 0; e < VEC; ++e) {
                        const I pos = x + (j + e) * (I)p.idx_inner;
                        const I off = (I)Gather<IDX, WRAP>::offset(idx, pos, p.axis_size, p.axis_stride);
                        vals[u].v[e] = src[s + off + (j + e) * (I)p.src_inner];
                    }
                } else {
                    if (has_idx) s += (I)Gather<IDX, WRAP>::offset(idx, x, p.axis_size, p.axis_stride);
                    if (MODE == 1) {
                        vals[u] = *reinterpret_cast<const V*>(src + s + j);
                    } else if (MODE == 2) {
                        const V r = *reinterpret_cast<const V*>(src + s - j - (VEC - 1));
#pragma unroll
                        for (int e = 0; e < VEC; ++e) vals[u].v[e] = r.v[VEC - 1 - e];
                    } else {
#pragma unroll
                        for (int e = 0; e < VEC; ++e) vals[u].v[e] = src[s + (j + e) * (I)p.src_inner];
                    }
                }
            }
        }
#pragma unroll
        for (int u = 0; u < DMLOPS_UNROLL; ++u) {
            const I w = w0 + (I)u * step;
            if (w < count) {
                if (VEC == 1) {
                    dst[dsts[u]] = vals[u].v[0];
                } else {
                    *reinterpret_cast<V*>(dst + dsts[u]) = vals[u];
                }
            }
        }
    }
}

// Strict GATHER: the smallest row-major position of an index outside [-n, n) (signed,
// WRAP) or [0, n) (unsigned). The atomicMin only finds the first offender; it never
// touches output data, and its result does not depend on the order of the threads.
struct CheckParams {
    i64 count;
    i64 base;
    i64 ndim;
    i64 axis_size;
    i64 size[DMLOPS_MAXD];
    i64 stride[DMLOPS_MAXD];
};

template <typename IDX> __device__ __forceinline__ bool index_ok(IDX v, i64 n, bool wrap);
template <> __device__ __forceinline__ bool index_ok<i32>(i32 v, i64 n, bool wrap) {
    return (wrap ? (i64)v >= -n : v >= 0) && (i64)v < n;
}
template <> __device__ __forceinline__ bool index_ok<i64>(i64 v, i64 n, bool wrap) {
    return (wrap ? v >= -n : v >= 0) && v < n;
}
template <> __device__ __forceinline__ bool index_ok<u32>(u32 v, i64 n, bool) { return (i64)v < n; }
template <> __device__ __forceinline__ bool index_ok<u64>(u64 v, i64 n, bool) { return v < (u64)n; }

template <typename IDX, bool WRAP>
__global__ void gather_check(const IDX* __restrict__ idx, u64* __restrict__ first_bad, const CheckParams p) {
    const i64 step = (i64)gridDim.x * blockDim.x;
    for (i64 q = (i64)blockIdx.x * blockDim.x + threadIdx.x; q < p.count; q += step) {
        i64 rest = q, off = p.base;
        for (int k = (int)p.ndim - 1; k >= 0; --k) {
            const i64 c = rest % p.size[k];
            rest /= p.size[k];
            off += c * p.stride[k];
        }
        if (!index_ok<IDX>(idx[off], p.axis_size, WRAP)) atomicMin(first_bad, (u64)q);
    }
}

// GATHER fast path for rows of 16-byte vectors (the innermost dimension is contiguous in
// source and destination and not an index dimension): one warp per output row, so each
// row's index is read and its coordinates decomposed once, and the row moves as 32
// consecutive 16-byte vectors per instruction. ROWS rows per warp are in flight at once;
// stores stream past L1/L2 (st.global.cs): the output is not read again here.
struct alignas(16) U128 {
    unsigned int a, b, c, d;
};

__device__ __forceinline__ void store_streaming(U128* ptr, const U128& v) {
    asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(ptr), "r"(v.a), "r"(v.b), "r"(v.c), "r"(v.d)
                 : "memory");
}

#define DMLOPS_GATHER_ROWS 4

template <int NDIM, typename I, typename IDX, bool WRAP>
__global__ void __launch_bounds__(256) gather_rows(const U128* __restrict__ src, U128* __restrict__ dst,
                                                   const IDX* __restrict__ idx, const CopyParams p) {
    // Offsets in p are element offsets of `vec_elems`-element vectors: the host divides them.
    const I inner_vecs = (I)p.inner_vecs;
    const I rows = (I)p.count / inner_vecs;
    const int lane = threadIdx.x & 31;
    const I warp = ((I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x) >> 5;
    const I warps = ((I)gridDim.x * (I)blockDim.x) >> 5;
    for (I row0 = warp * DMLOPS_GATHER_ROWS; row0 < rows; row0 += warps * DMLOPS_GATHER_ROWS) {
        I s[DMLOPS_GATHER_ROWS], d[DMLOPS_GATHER_ROWS];
#pragma unroll
        for (int u = 0; u < DMLOPS_GATHER_ROWS; ++u) {
            I row = row0 + u;
            I so = (I)p.src_base, dof = (I)p.dst_base, x = (I)p.idx_base;
            if (row < rows) {
#pragma unroll
                for (int k = NDIM - 1; k >= 0; --k) {
                    const I n = (I)p.size[k];
                    const I c = row % n;
                    row /= n;
                    so += c * (I)p.src_stride[k];
                    dof += c * (I)p.dst_stride[k];
                    x += c * (I)p.idx_stride[k];
                }
                so += (I)Gather<IDX, WRAP>::offset(idx, x, p.axis_size, p.axis_stride);
            }
            s[u] = so;
            d[u] = dof;
        }
        for (I j = lane; j < inner_vecs; j += 32) {
            U128 v[DMLOPS_GATHER_ROWS];
#pragma unroll
            for (int u = 0; u < DMLOPS_GATHER_ROWS; ++u) {
                if (row0 + u < rows) v[u] = src[s[u] + j];
            }
#pragma unroll
            for (int u = 0; u < DMLOPS_GATHER_ROWS; ++u) {
                if (row0 + u < rows) store_streaming(dst + d[u] + j, v[u]);
            }
        }
    }
}
