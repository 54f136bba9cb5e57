// Separable gathers (descs/_separable_gathers.py): Output[o] = Input[sum_d table_d[o_d]], or the
// fill value where a table row is padding. PADDING(1), DEPTH_TO_SPACE(1), SPACE_TO_DEPTH(1).
//
// The tables hold input element offsets (coordinates times the input's element strides),
// concatenated, ND axes outermost first, each axis's table starting 16-byte aligned; PAD (the
// most negative I) marks a padding row. The output is walked row by row (a row: its innermost
// axis; grid-stride over rows), 2^tpr_shift threads per row and 256 / 2^tpr_shift rows per
// block at a time; a thread resolves its row's outer coordinates (divisions in I, 32-bit
// where every offset, the output's span and the row count fit, then by a multiply-high with
// the host's magic numbers) and takes E elements of the row per pass: E / V groups of V
// adjacent elements, the groups 2^tpr_shift * V apart, so that a warp's groups are adjacent.
// A thread's columns are the same in every row it takes, so their table entries are read once
// (as 16-byte words), before its rows; in each row every element's input is loaded before any
// is used (a padding entry reads the input's first element along that axis, then takes the
// fill value: no load waits on a branch), and a group is stored as 16-byte words where its
// address is aligned. T is the element's storage (its bits): no arithmetic, so every data
// type is exact.
//
// (Run 29-31, H200: a 64-bit division per row and thread made the kernel compute-bound, 17 %
// of copy; chunks of rows per thread with an odometer, 60 %. Runs 43-44: each element's load
// behind a branch on its table entry kept one table read in flight per thread, and FLOAT16
// took as long per element as FLOAT32, 61-64 % of copy. Runs A1-A3 (H200): the loads made
// independent, 77-82 % in FLOAT16; the entries hoisted out of the rows, 80-87 %; loading a
// thread's elements as words where its entries read one run of adjacent inputs or two
// interleaved runs (PADDING's rows, DEPTH_TO_SPACE's block columns) was slower, 80 %: it
// took 40 registers a thread against 32, and the branches on each row's alignment. Run G:
// where the tables allow, the host runs the gather on wider elements instead (_table_copy.py's
// `widened`): the same kernel; FLOAT16 PADDING as u32, 82.6 -> 92.5 % of copy, TILE as u64,
// 75.7 -> 85.8 % (H200).)
#include "common.cuh"

struct TableCopyParams {
    long long rows;       // product of the output's outer sizes
    long long inner;      // the output's innermost size
    long long size[8];    // output sizes, ND of them (outermost first)
    long long ostride[8]; // output element strides
    long long toff[8];    // each axis's first entry in the table array (16-byte aligned)
    long long magic[8];   // I = int: the multiplier of the division by size[d] (see Div)
    long long mshift[8];  // and its shift
    long long fill;       // the fill value's bits (low bytes)
    long long tpr_shift;  // log2 of the threads per row
};

template <typename I> struct Pad;
template <> struct Pad<int> { static constexpr int v = (-2147483647 - 1); };
template <> struct Pad<long long> { static constexpr long long v = (-9223372036854775807LL - 1); };

// n / d for 0 <= n < 2^31 as (mulhi(n, m) + n) >> s, with s = ceil(log2 d) and
// m = floor(2^32 (2^s - d) / d) + 1 (division by invariant integers, the round-up variant;
// the sum fits 32 unsigned bits because mulhi(n, m) <= n < 2^31). 64-bit I divides plainly.
template <typename I> struct Div;
template <> struct Div<int> {
    static __device__ __forceinline__ int quotient(int n, int, long long magic, long long shift) {
        const unsigned hi = __umulhi((unsigned)n, (unsigned)magic);
        return (int)((hi + (unsigned)n) >> (unsigned)shift);
    }
};
template <> struct Div<long long> {
    static __device__ __forceinline__ long long quotient(long long n, long long d, long long, long long) {
        return n / d;
    }
};

template <typename T, int N> struct alignas(sizeof(T) * N) TcVec {
    T v[N];
};

// E: elements a thread takes of its row per pass; V: adjacent elements per group (V > 1 only
// where the output's innermost stride is 1, which the stores assume). PADDED: some table
// entry is PAD (without, the kernel never compares with it).
template <typename T, int ND, typename I, int E = 8, int V = 1, bool PADDED = true>
__global__ void __launch_bounds__(256)
    table_copy(const T* __restrict__ x, T* __restrict__ y, const I* __restrict__ table, const TableCopyParams p) {
    static_assert(E % V == 0 && E <= 32, "a thread's elements are whole groups (at most 32: a bit each)");
    constexpr int G = E / V;                                          // groups per thread and pass
    constexpr int TW = V * (int)sizeof(I) < 16 ? V : 16 / (int)sizeof(I);  // table entries per load
    constexpr int SW = V * (int)sizeof(T) < 16 ? V : 16 / (int)sizeof(T);  // elements per store
    const int shift = (int)p.tpr_shift;
    const I lane = (I)(threadIdx.x & ((1u << shift) - 1));
    const I groups = (I)(blockDim.x >> shift);
    const T fill = *reinterpret_cast<const T*>(&p.fill);  // little-endian: the low bytes
    const I* inner_table = table + p.toff[ND - 1];
    const I inner = (I)p.inner, os = (I)p.ostride[ND - 1];
    const I gap = ((I)V) << shift, pass = gap * (I)G;
    // A thread's columns are the same in every row it takes (grid-stride over rows keeps its
    // lane): their table entries are read once per pass, before the rows (one pass wherever
    // 2^tpr_shift * E covers the row, which the host arranges up to 256 E elements).
    for (I w0 = lane * (I)V; w0 < inner; w0 += pass) {
        I off[E];
        unsigned padk = 0;  // bit k: element k reads the fill value
#pragma unroll
        for (int g = 0; g < G; ++g) {
            const I w = w0 + (I)g * gap;
            if (w + (I)V <= inner) {  // w is a multiple of V: aligned 16-byte words
#pragma unroll
                for (int c = 0; c < V; c += TW) {
                    const TcVec<I, TW> e = *reinterpret_cast<const TcVec<I, TW>*>(inner_table + w + c);
#pragma unroll
                    for (int k = 0; k < TW; ++k) off[g * V + c + k] = e.v[k];
                }
            } else {  // the row's end: entries past it repeat its last (loaded, not stored)
#pragma unroll
                for (int k = 0; k < V; ++k) off[g * V + k] = inner_table[min(w + (I)k, inner - 1)];
            }
        }
        if (PADDED) {
#pragma unroll
            for (int k = 0; k < E; ++k) {
                if (off[k] == Pad<I>::v) {
                    padk |= 1u << k;
                    off[k] = 0;  // a padding entry reads the first element along its axis
                }
            }
        }
        const I step = (I)gridDim.x * groups;
        for (I r = (I)blockIdx.x * groups + (I)(threadIdx.x >> shift); r < (I)p.rows; r += step) {
            // the row's outer coordinates (the outermost is what remains: r < rows)
            I rest = r, src = 0, dst = 0;
            bool skip = false;
#pragma unroll
            for (int d = ND - 2; d >= 0; --d) {
                I i = rest;
                if (d > 0) {
                    const I n = (I)p.size[d];
                    const I q = Div<I>::quotient(rest, n, p.magic[d], p.mshift[d]);
                    i = rest - q * n;
                    rest = q;
                }
                const I t = table[p.toff[d] + i];
                if (PADDED) {
                    skip |= t == Pad<I>::v;
                    src += t == Pad<I>::v ? (I)0 : t;
                } else {
                    src += t;
                }
                dst += i * (I)p.ostride[d];
            }
            T v[E];
            if (skip) {  // a padding row
#pragma unroll
                for (int k = 0; k < E; ++k) v[k] = fill;
            } else {
#pragma unroll
                for (int k = 0; k < E; ++k) v[k] = x[src + off[k]];
                if (PADDED && padk) {
#pragma unroll
                    for (int k = 0; k < E; ++k)
                        if (padk & (1u << k)) v[k] = fill;
                }
            }
#pragma unroll
            for (int g = 0; g < G; ++g) {
                const I w = w0 + (I)g * gap;
                T* out = y + dst + w * os;
                if (V > 1 && w + (I)V <= inner && ((unsigned long long)out % (sizeof(T) * SW)) == 0) {
#pragma unroll
                    for (int c = 0; c < V; c += SW) {
                        TcVec<T, SW> word;
#pragma unroll
                        for (int k = 0; k < SW; ++k) word.v[k] = v[g * V + c + k];
                        *reinterpret_cast<TcVec<T, SW>*>(out + c) = word;  // os is 1 here
                    }
                } else {
#pragma unroll
                    for (int k = 0; k < V; ++k)
                        if (w + (I)k < inner) y[dst + (w + (I)k) * os] = v[g * V + k];
                }
            }
        }
    }
}
