// Separable gathers (descs/_separable_gathers.py): Output[o] = Input[sum_d table_d[o_d]], or the
// fill value where a table row is padding. PADDING(1), DEPTH_TO_SPACE(1), SPACE_TO_DEPTH(1).
//
// The tables hold input element offsets (coordinates times the input's element strides),
// concatenated, ND axes outermost first; PAD (the most negative I) marks a padding row. The
// output is walked row by row (a row: its innermost axis), 2^tpr_shift threads per row (E
// elements each per pass, R rows at once) and 256 / 2^tpr_shift row groups per block. Each group copies a chunk of p.chunk consecutive
// rows: it divides its first row's index into coordinates once, then steps them like an
// odometer (a 64-bit division per row per thread cost more than the row's copy), and per
// row adds its outer axes' table entries and copies the row's elements tpr apart, so a
// warp's stores are adjacent and its loads follow the innermost table (adjacent for
// PADDING's interior, b interleaved runs for DEPTH_TO_SPACE). T is the element's storage
// (its bits): no arithmetic, so every data type is exact.
#include "common.cuh"

struct TableCopyParams {
    long long rows;      // product of the output's outer sizes
    long long inner;     // the output's innermost size
    long long size[8];   // output sizes, ND of them (outermost first)
    long long ostride[8];// output element strides
    long long toff[8];   // each axis's first entry in the table array
    long long fill;      // the fill value's bits (low bytes)
    long long tpr_shift; // log2 of the threads per row
    long long chunk;     // consecutive rows per group
};

template <typename I> struct Pad;
template <> struct Pad<int> { static constexpr int v = (-2147483647 - 1); };
template <> struct Pad<long long> { static constexpr long long v = (-9223372036854775807LL - 1); };

template <typename T, int ND, typename I>
__global__ void __launch_bounds__(256)
    table_copy(const T* __restrict__ x, T* __restrict__ y, const I* __restrict__ table, const TableCopyParams p) {
    constexpr int E = 4;  // elements a thread takes of each row per pass
    constexpr int R = 4;  // rows a thread takes at once: R * E loads in flight before any store
    const int shift = (int)p.tpr_shift;
    const int lane = threadIdx.x & ((1 << shift) - 1);
    const long long group = (long long)blockIdx.x * (blockDim.x >> shift) + (threadIdx.x >> shift);
    const long long first = group * p.chunk;
    if (first >= p.rows) return;
    const long long last = first + p.chunk < p.rows ? first + p.chunk : p.rows;
    const T fill = *reinterpret_cast<const T*>(&p.fill);  // little-endian: the low bytes
    const I* inner_table = table + p.toff[ND - 1];
    const long long os = p.ostride[ND - 1];
    long long at[ND > 1 ? ND - 1 : 1];  // the next row's outer coordinates
    {
        long long rest = first;
#pragma unroll
        for (int d = ND - 2; d >= 0; --d) {
            at[d] = rest % p.size[d];
            rest /= p.size[d];
        }
    }
    for (long long r0 = first; r0 < last; r0 += R) {
        long long src[R], dst[R];
        bool pad[R], live[R];
#pragma unroll
        for (int q = 0; q < R; ++q) {  // R rows' offsets: independent table reads
            live[q] = r0 + q < last;
            src[q] = 0;
            dst[q] = 0;
            pad[q] = false;
            if (live[q]) {
#pragma unroll
                for (int d = 0; d < ND - 1; ++d) {
                    const I t = table[p.toff[d] + at[d]];
                    pad[q] |= t == Pad<I>::v;
                    src[q] += t == Pad<I>::v ? 0 : (long long)t;
                    dst[q] += at[d] * p.ostride[d];
                }
#pragma unroll
                for (int d = ND - 2; d >= 0; --d) {  // the odometer's carry
                    if (++at[d] < p.size[d]) break;
                    at[d] = 0;
                }
            }
        }
        for (long long w0 = lane; w0 < p.inner; w0 += (long long)E << shift) {
            I t[E];
#pragma unroll
            for (int k = 0; k < E; ++k) {
                const long long w = w0 + ((long long)k << shift);
                t[k] = w < p.inner ? inner_table[w] : Pad<I>::v;
            }
            T v[R][E];
#pragma unroll
            for (int q = 0; q < R; ++q) {
#pragma unroll
                for (int k = 0; k < E; ++k) {
                    const long long w = w0 + ((long long)k << shift);
                    if (live[q] && w < p.inner) v[q][k] = (pad[q] || t[k] == Pad<I>::v) ? fill : x[src[q] + (long long)t[k]];
                }
            }
#pragma unroll
            for (int q = 0; q < R; ++q) {
#pragma unroll
                for (int k = 0; k < E; ++k) {
                    const long long w = w0 + ((long long)k << shift);
                    if (live[q] && w < p.inner) y[dst[q] + w * os] = v[q][k];
                }
            }
        }
    }
}
