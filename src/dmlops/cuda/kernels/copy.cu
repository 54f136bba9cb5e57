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
// index * axis_stride for an index in [0, n) (after one wrap of a negative signed index;
// UINT64 reads as INT64). Any other index, and every element when flat_always is set
// (IndexDimensions 0 slabs past the first), reads DirectML's flat address (erratum E41):
// the raw address modulo 2^32, clamped to flat_last (the bound buffer's last element),
// and 0 at or beyond flat_limit (the elements the device array holds). Addresses count
// elements from the input view's first element, which is the buffer's first element.
// An in-range gather pays one compare per index; no host sync decides the path.
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
    i64 flat_limit;        // GATHER's flat reads (E41): elements readable from src[0]
    i64 flat_last;         // the bound buffer's last element
    i64 flat_always;       // != 0: every element reads its flat address
    i64 flat_axis_stride;  // the gathered axis' stride in elements (gather_rows' offsets are vectors)
    i64 flat_elem_bytes;   // element size (gather_rows)
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

// The index value DirectML uses: one wrap (+n) of a negative signed value (WRAP), UINT64
// read as INT64 (so 2^63 and more wrap too), UINT32 as it is. May lie outside [0, n).
template <typename IDX, bool WRAP> __device__ __forceinline__ i64 wrapped_index(IDX raw, i64 n) {
    const i64 v = (i64)raw;  // u64: two's complement
    const bool wrap = WRAP || sizeof(IDX) == 8 && (IDX)(-1) > (IDX)0;
    return (wrap && v < 0) ? v + n : v;
}
template <> __device__ __forceinline__ i64 wrapped_index<u32, false>(u32 raw, i64) { return (i64)raw; }

template <typename IDX, bool WRAP> struct Gather {
    static __device__ __forceinline__ i64 value(const IDX* __restrict__ idx, i64 pos, i64 n) {
        return wrapped_index<IDX, WRAP>(idx[pos], n);
    }
};
template <bool WRAP> struct Gather<NoIndex, WRAP> {
    static __device__ __forceinline__ i64 value(const NoIndex* __restrict__, i64, i64) { return 0; }
};

// Element `address` of the input's bound buffer (E41): modulo 2^32, clamped to the last
// element; what the device array does not hold (past the span) reads 0.
template <typename T> __device__ __forceinline__ T flat_read(const T* __restrict__ src, u64 address, const CopyParams& p) {
    u64 a = (u64)(u32)address;
    if (a > (u64)p.flat_last) a = (u64)p.flat_last;
    return a < (u64)p.flat_limit ? src[a] : (T)0;
}

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
                        const i64 r = Gather<IDX, WRAP>::value(idx, pos, p.axis_size);
                        const I at = s + (j + e) * (I)p.src_inner;
                        if ((u64)r < (u64)p.axis_size && !p.flat_always) {
                            vals[u].v[e] = src[at + (I)r * (I)p.axis_stride];
                        } else {
                            vals[u].v[e] = flat_read(src, (u64)(i64)at + (u64)r * (u64)p.axis_stride, p);
                        }
                    }
                } else {
                    i64 r = 0;
                    if (has_idx) r = Gather<IDX, WRAP>::value(idx, x, p.axis_size);
                    const bool flat = has_idx && ((u64)r >= (u64)p.axis_size || p.flat_always);
                    if (flat) {
                        // E41: element loads of flat addresses (a vector might straddle the end)
                        const u64 base = (u64)(i64)s + (u64)r * (u64)p.axis_stride;
#pragma unroll
                        for (int e = 0; e < VEC; ++e) {
                            const i64 step_e = MODE == 1 ? (i64)(j + e) : MODE == 2 ? -(i64)(j + e)
                                                                                  : (i64)((j + e) * (I)p.src_inner);
                            vals[u].v[e] = flat_read(src, base + (u64)step_e, p);
                        }
                    } else if (has_idx) {
                        s += (I)r * (I)p.axis_stride;
                    }
                    if (flat) {
                    } else if (MODE == 1) {
                        vals[u] = *reinterpret_cast<const V*>(src + s + j);
                    } else if (MODE == 2) {
                        const V rv = *reinterpret_cast<const V*>(src + s - j - (VEC - 1));
#pragma unroll
                        for (int e = 0; e < VEC; ++e) vals[u].v[e] = rv.v[VEC - 1 - e];
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
        i64 r[DMLOPS_GATHER_ROWS];  // the row's index; outside [0, n): flat reads (E41)
#pragma unroll
        for (int u = 0; u < DMLOPS_GATHER_ROWS; ++u) {
            I row = row0 + u;
            I so = (I)p.src_base, dof = (I)p.dst_base, x = (I)p.idx_base;
            r[u] = 0;
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
                r[u] = Gather<IDX, WRAP>::value(idx, x, p.axis_size);
                if ((u64)r[u] < (u64)p.axis_size && !p.flat_always) so += (I)r[u] * (I)p.axis_stride;
            }
            s[u] = so;
            d[u] = dof;
        }
        for (I j = lane; j < inner_vecs; j += 32) {
            U128 v[DMLOPS_GATHER_ROWS];
#pragma unroll
            for (int u = 0; u < DMLOPS_GATHER_ROWS; ++u) {
                if (row0 + u >= rows) continue;
                if ((u64)r[u] < (u64)p.axis_size && !p.flat_always) {
                    v[u] = src[s[u] + j];
                } else {
                    // E41, byte by byte: element k of the row at flat element address
                    // s * (16 / es) + r * axis_stride + k.
                    const i64 es = p.flat_elem_bytes;
                    const u64 row_at = (u64)(i64)s[u] * (u64)(16 / es) + (u64)r[u] * (u64)p.flat_axis_stride;
                    const unsigned char* bytes = reinterpret_cast<const unsigned char*>(src);
                    unsigned char out[16];
#pragma unroll
                    for (int b = 0; b < 16; ++b) {
                        u64 a = (u64)(u32)(row_at + (u64)((i64)j * (16 / es) + b / es));
                        if (a > (u64)p.flat_last) a = (u64)p.flat_last;
                        out[b] = a < (u64)p.flat_limit ? bytes[a * es + b % es] : 0;
                    }
                    v[u] = *reinterpret_cast<const U128*>(out);
                }
            }
#pragma unroll
            for (int u = 0; u < DMLOPS_GATHER_ROWS; ++u) {
                if (row0 + u < rows) store_streaming(dst + d[u] + j, v[u]);
            }
        }
    }
}
