// The indexing operators (cuda/data_movement.py): GATHER_ELEMENTS, SCATTER_ELEMENTS,
// GATHER_ND(1), SCATTER_ND, ONE_HOT, REVERSE_SUBSEQUENCES, DIAGONAL_MATRIX(1).
//
// Data moves as raw elements of 1, 2, 4 or 8 bytes (T = u8, u16, u32, u64): bit-exact,
// NaN payloads included. The host collapses each iteration space (cuda/_plan.collapse)
// into at most 8 dimensions, outermost first, with one element-stride vector per operand
// (st0..st3; a stride vector may also be a coordinate: unit stride on one dimension and
// 0 elsewhere gives that coordinate as the "offset"). I is the offset type (int when every
// offset and the work count fit in 31 bits, else long long).
//
// Index checks: a kernel never reads or writes outside its operands. An index outside
// its axis sets bit 0 of *flag and moves nothing; a duplicate scatter target sets bit 1.
// The host reads the flag once per call and raises the reference's DataIndexError (or,
// for GATHER_ND's flat reads, computes the rare out-of-range case on the host).
#include "common.cuh"

#define IX_MAXD 8
#define IX_UNROLL 4

struct IxParams {
    i64 count;            // work items (elements, lines or index tuples)
    i64 ndim;             // dimensions of the iteration space (0 to 8)
    i64 n;                // the data's size on Axis
    i64 m;                // the indices' size on Axis (SCATTER_ELEMENTS), the tuple size k (ND)
    i64 axis_stride[4];   // per operand: element stride along Axis
    i64 scalar[4];        // per kernel (see each kernel)
    i64 size[IX_MAXD];    // collapsed sizes, outermost first
    i64 st0[IX_MAXD];     // element strides of operands 0..3
    i64 st1[IX_MAXD];
    i64 st2[IX_MAXD];
    i64 st3[IX_MAXD];
    i64 tuple_n[IX_MAXD];       // GATHER_ND / SCATTER_ND: the sizes the tuple's values index
    i64 tuple_stride[IX_MAXD];  // ... and the data's (or the target table's) strides for them
    i64 tuple_out[IX_MAXD];     // SCATTER_ND: the Output's strides for them
};

// Offsets of work item q in the four operands.
template <typename I>
__device__ __forceinline__ void ix_offsets(I q, const IxParams& p, I& o0, I& o1, I& o2, I& o3) {
    o0 = 0;
    o1 = 0;
    o2 = 0;
    o3 = 0;
#pragma unroll
    for (int k = IX_MAXD - 1; k >= 0; --k) {
        if (k < p.ndim) {
            // the outermost coordinate is what is left (q < count = the sizes' product): no division
            const I n = (I)p.size[k];
            const I c = k == 0 ? q : q % n;
            if (k != 0) q /= n;
            o0 += c * (I)p.st0[k];
            o1 += c * (I)p.st1[k];
            o2 += c * (I)p.st2[k];
            o3 += c * (I)p.st3[k];
        }
    }
}

// The index value DirectML uses (as copy.cu's wrapped_index): one wrap (+n) of a negative
// signed value (WRAP), UINT64 read as INT64 (2^63 and more wrap too), UINT32 as it is.
// May lie outside [0, n).
template <typename IDX, bool WRAP> __device__ __forceinline__ i64 index_value(IDX raw, i64 n) {
    const i64 v = (i64)raw;  // u64: two's complement
    const bool wrap = WRAP || (sizeof(IDX) == 8 && (IDX)(-1) > (IDX)0);
    return (wrap && v < 0) ? v + n : v;
}
template <> __device__ __forceinline__ i64 index_value<u32, false>(u32 raw, i64) { return (i64)raw; }

// GATHER_ELEMENTS: Output[o] = Input[o with o[Axis] = Indices[o]], one pass. Operands over
// the output's iteration space: 0 Input (0 on Axis), 1 Indices, 2 Output. An index outside
// the axis sets the flag and leaves its output element as it was.
template <typename T, typename IDX, bool WRAP, typename I>
__global__ void __launch_bounds__(256) gather_elements(const T* __restrict__ src, const IDX* __restrict__ idx,
                                                       T* __restrict__ dst, u32* __restrict__ flag,
                                                       const IxParams p) {
    const I count = (I)p.count;
    const I step = (I)gridDim.x * (I)blockDim.x;
    const i64 n = p.n;
    const I axis_stride = (I)p.axis_stride[0];
    for (I q0 = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; q0 < count; q0 += step * IX_UNROLL) {
        I s[IX_UNROLL], d[IX_UNROLL];
        i64 r[IX_UNROLL];
#pragma unroll
        for (int u = 0; u < IX_UNROLL; ++u) {
            const I q = q0 + (I)u * step;
            r[u] = -1;
            if (q < count) {
                I x, unused;
                ix_offsets<I>(q, p, s[u], x, d[u], unused);
                r[u] = index_value<IDX, WRAP>(idx[x], n);
            }
        }
#pragma unroll
        for (int u = 0; u < IX_UNROLL; ++u) {
            const I q = q0 + (I)u * step;
            if (q < count) {
                if ((u64)r[u] < (u64)n) {
                    dst[d[u]] = src[s[u] + (I)r[u] * axis_stride];
                } else {
                    *flag = 1u;  // any writer: the host only tests it
                }
            }
        }
    }
}

// GATHER_ELEMENTS along the innermost axis of rows that fit shared memory: a block stages
// its row of Input (p.n elements, coalesced) in shared memory, then gathers the row's
// Indices from there, so the random reads never leave the SM and DRAM sees Input, Indices
// and Output once each. Rows: p.count of them (the outer coordinates, collapsed to one
// stride per operand: tuple_stride[0] Input, [1] Indices, [2] Output); p.m indices per row;
// axis_stride[0..2]: the operands' element strides along the axis. A bad index sets *flag.
// VEC > 1 (the host checked: unit axis strides, p.n and p.m and the row strides multiples
// of VEC, the pointers aligned to VEC elements): VEC consecutive elements per access.
template <typename T, int N> struct alignas(sizeof(T) * N) IxVec {
    T v[N];
};

template <typename T, typename IDX, bool WRAP, int VEC>
__global__ void __launch_bounds__(256) gather_elements_rows(const T* __restrict__ src, const IDX* __restrict__ idx,
                                                            T* __restrict__ dst, u32* __restrict__ flag,
                                                            const IxParams p) {
    extern __shared__ unsigned char gather_row_raw[];
    T* row = reinterpret_cast<T*>(gather_row_raw);
    const i64 n = p.n, m = p.m;
    const i64 sa = p.axis_stride[0], ia = p.axis_stride[1], da = p.axis_stride[2];
    bool bad = false;
    for (i64 r = blockIdx.x; r < p.count; r += gridDim.x) {
        const T* s = src + r * p.tuple_stride[0];
        const IDX* ix = idx + r * p.tuple_stride[1];
        T* d = dst + r * p.tuple_stride[2];
        __syncthreads();  // every read of the previous row's copy is done
        if constexpr (VEC > 1) {
            for (i64 j = threadIdx.x; j < n / VEC; j += blockDim.x)
                reinterpret_cast<IxVec<T, VEC>*>(row)[j] = reinterpret_cast<const IxVec<T, VEC>*>(s)[j];
        } else {
            for (i64 j = threadIdx.x; j < n; j += blockDim.x) row[j] = s[j * sa];
        }
        __syncthreads();
        if constexpr (VEC > 1) {
            for (i64 j = threadIdx.x; j < m / VEC; j += blockDim.x) {
                const IxVec<IDX, VEC> k = reinterpret_cast<const IxVec<IDX, VEC>*>(ix)[j];
                IxVec<T, VEC> o;
#pragma unroll
                for (int e = 0; e < VEC; ++e) {
                    const i64 v = index_value<IDX, WRAP>(k.v[e], n);
                    const bool ok = (u64)v < (u64)n;
                    bad |= !ok;
                    o.v[e] = row[ok ? v : 0];  // a bad index: the call raises; its element is not kept
                }
                reinterpret_cast<IxVec<T, VEC>*>(d)[j] = o;
            }
        } else {
            for (i64 j = threadIdx.x; j < m; j += blockDim.x) {
                const i64 v = index_value<IDX, WRAP>(ix[j * ia], n);
                if ((u64)v < (u64)n) {
                    d[j * da] = row[v];
                } else {
                    bad = true;
                }
            }
        }
    }
    if (bad) *flag = 1u;  // any writer: the host only tests it
}

// The position an index names on an axis of n < 2^31 elements, or -1 outside it: as
// index_value, in 32-bit arithmetic for 32-bit index types.
template <typename IDX, bool WRAP> __device__ __forceinline__ int axis_slot(IDX raw, int n) {
    if constexpr (sizeof(IDX) == 8) {
        const i64 v = index_value<IDX, WRAP>(raw, (i64)n);
        return (u64)v < (u64)n ? (int)v : -1;
    } else if constexpr ((IDX)(-1) > (IDX)0) {
        return (u32)raw < (u32)n ? (int)raw : -1;
    } else {
        int v = (int)raw;
        if (WRAP && v < 0) v += n;
        return (u32)v < (u32)n ? v : -1;
    }
}

// SCATTER_ELEMENTS along the innermost axis of lines that fit shared memory, in one pass
// over DRAM: a block takes a line at a time; (A) it reads the line's Indices and Updates
// (U accesses a thread in flight), copies the updates into shared memory at their own
// positions and claims each target with atomicMax on a shared winner table (the largest
// update position, the last in row-major order, wins, as the reference's _write; an index
// outside the axis sets flag bit 0 and claims nothing, an earlier claim bit 1); (B) each
// output element is written once, from its winning update in shared memory or from the
// Input where none landed, and the winner table is reset for the next line. Operands as
// scatter_elements: 0 Input, 1 Output, 2 Indices, 3 Updates; line strides tuple_stride[0..3],
// axis strides axis_stride[0..3] (each line's offsets fit 31 bits: the host checked);
// p.n targets and p.m updates per line; p.scalar[0] == 0: the checking pass only (nothing
// written). Shared memory: n ints (rounded up to 32 bytes), then m elements. src and dst
// may be one array: each output element is read and written by one thread.
template <typename T, typename IDX, bool WRAP, int VEC, int U>
__global__ void __launch_bounds__(256) scatter_elements_staged(const T* src, const IDX* __restrict__ idx,
                                                               const T* __restrict__ upd, T* dst,
                                                               u32* __restrict__ flag, const IxParams p) {
    typedef IxVec<T, VEC> TV;
    typedef IxVec<IDX, VEC> KV;
    typedef IxVec<int, VEC> WV;
    extern __shared__ __align__(32) unsigned char scatter_staged_raw[];
    const int n = (int)p.n;
    int* win = reinterpret_cast<int*>(scatter_staged_raw);
    WV* win_v = reinterpret_cast<WV*>(scatter_staged_raw);
    const T* staged = reinterpret_cast<const T*>(scatter_staged_raw + ((n * 4 + 31) / 32) * 32);
    TV* staged_v = reinterpret_cast<TV*>(scatter_staged_raw + ((n * 4 + 31) / 32) * 32);
    const int nv = (int)(p.n / VEC), mv = (int)(p.m / VEC);
    const int sa = VEC > 1 ? 1 : (int)p.axis_stride[0], da = VEC > 1 ? 1 : (int)p.axis_stride[1];
    const int ia = VEC > 1 ? 1 : (int)p.axis_stride[2], ua = VEC > 1 ? 1 : (int)p.axis_stride[3];
    const bool write = p.scalar[0] != 0;
    const int tid = threadIdx.x, threads = blockDim.x;
    u32 bits = 0;
    for (int j = tid; j < n; j += threads) win[j] = -1;
    __syncthreads();
    for (i64 line = blockIdx.x; line < p.count; line += gridDim.x) {
        const TV* s = reinterpret_cast<const TV*>(src + line * p.tuple_stride[0]);
        TV* d = reinterpret_cast<TV*>(dst + line * p.tuple_stride[1]);
        const KV* ix = reinterpret_cast<const KV*>(idx + line * p.tuple_stride[2]);
        const TV* up = reinterpret_cast<const TV*>(upd + line * p.tuple_stride[3]);
        for (int a0 = tid; a0 < mv; a0 += threads * U) {
            KV k[U];
            TV w[U];
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const int a = a0 + u * threads;
                if (a < mv) {
                    k[u] = ix[a * ia];
                    if (write) w[u] = up[a * ua];
                }
            }
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const int a = a0 + u * threads;
                if (a < mv) {
                    if (write) staged_v[a] = w[u];
#pragma unroll
                    for (int e = 0; e < VEC; ++e) {
                        const int r = axis_slot<IDX, WRAP>(k[u].v[e], n);
                        if (r < 0) {
                            bits |= 1u;
                        } else if (atomicMax(&win[r], a * VEC + e) >= 0) {
                            bits |= 2u;
                        }
                    }
                }
            }
        }
        __syncthreads();
        for (int j0 = tid; j0 < nv; j0 += threads * U) {
            WV c[U];
            TV o[U];
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const int j = j0 + u * threads;
                if (j < nv) {
                    c[u] = win_v[j];
                    bool missing = false;
#pragma unroll
                    for (int e = 0; e < VEC; ++e) missing |= c[u].v[e] < 0;
                    if (write && missing) o[u] = s[j * sa];  // the Input where no update landed
                }
            }
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const int j = j0 + u * threads;
                if (j < nv) {
                    WV reset;
#pragma unroll
                    for (int e = 0; e < VEC; ++e) reset.v[e] = -1;
                    win_v[j] = reset;
                    if (write) {
#pragma unroll
                        for (int e = 0; e < VEC; ++e) {
                            if (c[u].v[e] >= 0) o[u].v[e] = staged[c[u].v[e]];
                        }
                        d[j * da] = o[u];
                    }
                }
            }
        }
        __syncthreads();  // the next line reuses the winners and the staged updates
    }
    if (bits) atomicOr(flag, bits);
}

// SCATTER_ELEMENTS, one pass per tile of lines (a line: every element along Axis at one
// coordinate of the other dimensions; duplicates can only target one line). Per tile:
//   1. winner[j] = -1 for each target j of each line,
//   2. each update a claims its target: atomicMax(winner[target], a) (bad index: flag bit 0;
//      an earlier claim: a duplicate, flag bit 1); the largest a, the last update in
//      row-major order, wins, as the reference's _write,
//   3. (p.scalar[0] != 0) Output[j] = winner[j] >= 0 ? Updates[winner[j]] : Input[j]:
//      p.scalar[2] == 0: as a gather per output element (stores in order, reads of the
//      updates scattered within the line); != 0: the winning updates stored where they
//      point (reads in order, stores scattered), then the input where no update landed.
// Every output element is written once; the input is read only where no update lands. With p.scalar[0] == 0 the kernel only checks (strict mode's pass
// before anything is written). Operands over the line space: 0 Input, 1 Output, 2 Indices,
// 3 Updates; p.n targets per line, p.m updates per line, p.scalar[1] lines per tile.
// SHARED: the winners of a tile in shared memory (lines_per_tile * n <= SC_CAP), else in
// `scratch` (gridDim.x * n ints, one line per tile). src and dst may be one array (an
// in-place scatter): each output element is read and written by one thread.
#define SC_CAP 8192
#define SC_LINES 256
#define SC_BLOCK 512

template <bool SHARED> struct TileIndex {
    typedef int T;
};
template <> struct TileIndex<false> {
    typedef i64 T;
};

template <typename T, typename IDX, bool WRAP, bool SHARED>
__global__ void __launch_bounds__(SC_BLOCK)
    scatter_elements(const T* src, const IDX* __restrict__ idx, const T* __restrict__ upd, T* dst, int* __restrict__ scratch, u32* __restrict__ flag, const IxParams p) {
    typedef typename TileIndex<SHARED>::T K;
    __shared__ int shared_winner[SHARED ? SC_CAP : 1];
    __shared__ i64 base[4][SC_LINES];
    const i64 lines = p.count;
    const K n = (K)p.n, m = (K)p.m;
    const i64 per_tile = p.scalar[1];
    const bool write = p.scalar[0] != 0;
    int* winner = SHARED ? shared_winner : scratch + (i64)blockIdx.x * p.n;
    for (i64 tile = blockIdx.x; tile * per_tile < lines; tile += gridDim.x) {
        const i64 line0 = tile * per_tile;
        const K in_tile = (K)(lines - line0 < per_tile ? lines - line0 : per_tile);
        for (K t = threadIdx.x; t < in_tile; t += blockDim.x) {
            i64 o0, o1, o2, o3;
            ix_offsets<i64>(line0 + t, p, o0, o1, o2, o3);
            base[0][t] = o0;
            base[1][t] = o1;
            base[2][t] = o2;
            base[3][t] = o3;
        }
        for (K k = threadIdx.x; k < in_tile * n; k += blockDim.x) winner[k] = -1;
        __syncthreads();
        for (K k = threadIdx.x; k < in_tile * m; k += blockDim.x) {
            const K line = k / m;
            const K a = k - line * m;
            const i64 r = index_value<IDX, WRAP>(idx[base[2][line] + (i64)a * p.axis_stride[2]], p.n);
            if ((u64)r >= (u64)p.n) {
                atomicOr(flag, 1u);
                continue;
            }
            if (atomicMax(&winner[line * n + (K)r], (int)a) >= 0) atomicOr(flag, 2u);
        }
        __syncthreads();
        if (write && p.scalar[2] != 0) {
            // 3 as scatter stores: each winning update moves (Indices and Updates read in
            // order, the stores scattered within the line), then the input fills the rest
            for (K k = threadIdx.x; k < in_tile * m; k += blockDim.x) {
                const K line = k / m;
                const K a = k - line * m;
                const i64 r = index_value<IDX, WRAP>(idx[base[2][line] + (i64)a * p.axis_stride[2]], p.n);
                if ((u64)r < (u64)p.n && winner[line * n + (K)r] == (int)a) {
                    dst[base[1][line] + r * p.axis_stride[1]] = upd[base[3][line] + (i64)a * p.axis_stride[3]];
                }
            }
            for (K k = threadIdx.x; k < in_tile * n; k += blockDim.x) {
                if (winner[k] < 0) {
                    const K line = k / n;
                    const K j = k - line * n;
                    dst[base[1][line] + (i64)j * p.axis_stride[1]] = src[base[0][line] + (i64)j * p.axis_stride[0]];
                }
            }
        } else if (write) {
            // 3 as gathers: each output element read from its winner (reads scattered
            // within the line) or the input, the stores in order
            for (K k = threadIdx.x; k < in_tile * n; k += blockDim.x) {
                const K line = k / n;
                const K j = k - line * n;
                const int a = winner[k];
                const T v = a >= 0 ? upd[base[3][line] + (i64)a * p.axis_stride[3]]
                                   : src[base[0][line] + (i64)j * p.axis_stride[0]];
                dst[base[1][line] + (i64)j * p.axis_stride[1]] = v;
            }
        }
        __syncthreads();  // the next tile reuses base and winner
    }
}

// GATHER_ND(1): Output[o] = Input[(0..., batch(o), tuple(o), trailing(o))] over the output's
// iteration space (the indices' grid then the input's trailing sizes). Operands: 0 Input
// (batch and trailing strides; 0 elsewhere), 1 Indices (the tuple's first value; 0 over
// trailing), 2 Output. p.m tuple values, each along p.axis_stride[1] in Indices, indexing a
// size tuple_n[t] of Input's stride tuple_stride[t]. A value outside its dimension (after
// the one wrap) sets the flag and writes nothing: the host then computes DirectML's flat
// read (E160) or raises.
template <typename T, typename IDX, bool WRAP, typename I>
__global__ void __launch_bounds__(256) gather_nd(const T* __restrict__ src, const IDX* __restrict__ idx,
                                                 T* __restrict__ dst, u32* __restrict__ flag, const IxParams p) {
    const I count = (I)p.count;
    const I step = (I)gridDim.x * (I)blockDim.x;
    const int k = (int)p.m;
    for (I q = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; q < count; q += step) {
        I s, x, d, unused;
        ix_offsets<I>(q, p, s, x, d, unused);
        bool ok = true;
#pragma unroll
        for (int t = 0; t < IX_MAXD; ++t) {
            if (t < k) {
                const i64 r = index_value<IDX, WRAP>(idx[x + (I)t * (I)p.axis_stride[1]], p.tuple_n[t]);
                ok = ok && (u64)r < (u64)p.tuple_n[t];
                if (ok) s += (I)r * (I)p.tuple_stride[t];
            }
        }
        if (ok) {
            dst[d] = src[s];
        } else {
            *flag = 1u;
        }
    }
}

// SCATTER_ND, pass 1: each index tuple q (p.count of them, operand 0: its first value in
// Indices) claims its target slice in `winner` (the target table, filled with -1: the
// tuple's values times tuple_stride[t]). The largest q (the last in row-major order)
// wins; an earlier claim sets flag bit 1, a value outside its dimension bit 0.
template <typename IDX, bool WRAP>
__global__ void __launch_bounds__(256) scatter_nd_claim(const IDX* __restrict__ idx, int* __restrict__ winner,
                                                        u32* __restrict__ flag, const IxParams p) {
    const i64 step = (i64)gridDim.x * blockDim.x;
    const int k = (int)p.m;
    for (i64 q = (i64)blockIdx.x * blockDim.x + threadIdx.x; q < p.count; q += step) {
        i64 x, u1, u2, u3;
        ix_offsets<i64>(q, p, x, u1, u2, u3);
        i64 target = 0;
        bool ok = true;
        for (int t = 0; t < k; ++t) {
            const i64 r = index_value<IDX, WRAP>(idx[x + t * p.axis_stride[0]], p.tuple_n[t]);
            ok = ok && (u64)r < (u64)p.tuple_n[t];
            target += r * p.tuple_stride[t];
        }
        if (!ok) {
            atomicOr(flag, 1u);
        } else if (atomicMax(&winner[target], (int)q) >= 0) {
            atomicOr(flag, 2u);
        }
    }
}

// SCATTER_ND, pass 2 (after Output = Input, and only when pass 1 found every value in
// range): each update element is stored when its tuple won its target. Operands over the
// updates' iteration space (the indices' grid, then the trailing sizes): 0 Updates,
// 1 Indices (the tuple's first value; 0 over trailing), 2 Output's trailing offset (0 over
// the grid), 3 the tuple's number (row-major over the grid; 0 over trailing). Tuple value
// t moves the target by tuple_stride[t] and the output by tuple_out[t].
template <typename T, typename IDX, bool WRAP, typename I>
__global__ void __launch_bounds__(256) scatter_nd_write(const T* __restrict__ upd, const IDX* __restrict__ idx,
                                                        T* dst, const int* __restrict__ winner, const IxParams p) {
    const I count = (I)p.count;
    const I step = (I)gridDim.x * (I)blockDim.x;
    const int k = (int)p.m;
    for (I q = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; q < count; q += step) {
        I u, x, d, j;
        ix_offsets<I>(q, p, u, x, d, j);
        i64 target = 0;
        for (int t = 0; t < k; ++t) {
            const i64 r = index_value<IDX, WRAP>(idx[x + (I)t * (I)p.axis_stride[0]], p.tuple_n[t]);
            target += r * p.tuple_stride[t];  // in range: pass 1 said so
            d += (I)r * (I)p.tuple_out[t];
        }
        if (winner[target] == (int)j) dst[d] = upd[u];
    }
}

// ONE_HOT: Output[o] = o[Axis] == position(Indices[o with o[Axis] = 0]) ? OnValue : OffValue.
// Operands: 0 Output, 1 Indices (0 on Axis), 2 o[Axis] (unit stride on Axis). OffValue and
// OnValue: values[p.scalar[0]] and values[p.scalar[1]]. The position as the semantics
// layer's one_hot_positions: UINT64 compared whole; other types one wrap (WRAP), then
// their low 32 bits (E161).
template <typename T, typename IDX, bool WRAP, typename I>
__global__ void __launch_bounds__(256) one_hot(const IDX* __restrict__ idx, const T* __restrict__ values,
                                               T* __restrict__ dst, const IxParams p) {
    const I count = (I)p.count;
    const I step = (I)gridDim.x * (I)blockDim.x;
    const T off = values[p.scalar[0]], on = values[p.scalar[1]];
    const i64 n = p.n;
    for (I q = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; q < count; q += step) {
        I d, x, c, unused;
        ix_offsets<I>(q, p, d, x, c, unused);
        const IDX raw = idx[x];
        i64 position;
        if (sizeof(IDX) == 8 && (IDX)(-1) > (IDX)0) {
            position = (u64)raw < (u64)n ? (i64)raw : -1;
        } else {
            i64 v = (i64)raw;
            if (WRAP && v < 0) v += n;
            const i64 low = v & 0xFFFFFFFFLL;
            position = low < n ? low : -1;
        }
        dst[d] = (i64)c == position ? on : off;
    }
}

// REVERSE_SUBSEQUENCES: Output[o] = Input[o with o[Axis] = source], L the length's low 32
// bits, source = o[Axis] < L ? min(L - 1 - o[Axis], n - 1) : o[Axis] (E162). Operands:
// 0 Input (0 on Axis), 1 Output, 2 SequenceLengths (0 on Axis), 3 o[Axis].
template <typename T, typename LEN, typename I>
__global__ void __launch_bounds__(256) reverse_subsequences(const T* __restrict__ src, const LEN* __restrict__ lengths,
                                                            T* __restrict__ dst, const IxParams p) {
    const I count = (I)p.count;
    const I step = (I)gridDim.x * (I)blockDim.x;
    const i64 n = p.n;
    for (I q = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; q < count; q += step) {
        I s, d, l, c;
        ix_offsets<I>(q, p, s, d, l, c);
        const i64 length = (i64)(u32)(u64)(i64)lengths[l];
        const i64 i = (i64)c;
        i64 source = i;
        if (i < length) {
            source = length - 1 - i;
            if (source > n - 1) source = n - 1;
        }
        dst[d] = src[s + (I)source * (I)p.axis_stride[0]];
    }
}

// DIAGONAL_MATRIX(1): Output[o] = fill ? Value : (HAS_INPUT ? Input[o] : 0) with
// topX = column - row (operand 2) and fill = (end >= begin) ^ (topX >= begin) ^ (topX < end)
// (descs.data_movement.diagonal_fill). Operands: 0 Output, 1 Input, 2 topX. Value's bits in
// p.scalar[0]; begin, end in p.scalar[1], p.scalar[2].
template <typename T, bool HAS_INPUT, typename I>
__global__ void __launch_bounds__(256) diagonal_matrix(const T* __restrict__ src, T* __restrict__ dst,
                                                       const IxParams p) {
    const I count = (I)p.count;
    const I step = (I)gridDim.x * (I)blockDim.x;
    const u64 bits = (u64)p.scalar[0];
    const T value = *reinterpret_cast<const T*>(&bits);  // the low bytes (little-endian)
    const i64 begin = p.scalar[1], end = p.scalar[2];
    for (I q = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; q < count; q += step) {
        I d, s, top_x, unused;
        ix_offsets<I>(q, p, d, s, top_x, unused);
        const bool fill = (end >= begin) ^ ((i64)top_x >= begin) ^ ((i64)top_x < end);
        dst[d] = fill ? value : (HAS_INPUT ? src[s] : (T)0);
    }
}
