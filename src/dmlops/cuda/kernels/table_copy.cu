// Separable gathers (descs/_separable_gathers.py): Output[o] = Input[sum_d table_d[o_d]], or the
// fill value where a table row is padding. PADDING(1), DEPTH_TO_SPACE(1), SPACE_TO_DEPTH(1).
//
// The tables hold input element offsets (coordinates times the input's element strides),
// concatenated, ND axes outermost first; PAD (the most negative I) marks a padding row. The
// output is walked row by row (a row: its innermost axis), 2^tpr_shift threads per row and
// 256 / 2^tpr_shift rows per block at a time (grid-stride over rows): each thread resolves
// its row's outer axes once (ND - 1 table reads), then copies the row's elements
// tpr apart, so a warp's stores are adjacent and its loads follow the innermost table
// (adjacent for PADDING's interior, b interleaved runs for DEPTH_TO_SPACE). T is the
// element's storage (its bits): no arithmetic, so every data type is exact.
#include "common.cuh"

struct TableCopyParams {
    long long rows;      // product of the output's outer sizes
    long long inner;     // the output's innermost size
    long long size[8];   // output sizes, ND of them (outermost first)
    long long ostride[8];// output element strides
    long long toff[8];   // each axis's first entry in the table array
    long long fill;      // the fill value's bits (low bytes)
    long long tpr_shift; // log2 of the threads per row
};

template <typename I> struct Pad;
template <> struct Pad<int> { static constexpr int v = (-2147483647 - 1); };
template <> struct Pad<long long> { static constexpr long long v = (-9223372036854775807LL - 1); };

template <typename T, int ND, typename I>
__global__ void __launch_bounds__(256) table_copy(const T* x, T* y, const I* table, const TableCopyParams p) {
    const int shift = (int)p.tpr_shift;
    const int lane = threadIdx.x & ((1 << shift) - 1);
    const long long groups = (long long)(blockDim.x >> shift);
    T fill;
    {
        const long long bits = p.fill;
        fill = *reinterpret_cast<const T*>(&bits);  // little-endian: the low bytes
    }
    const I* inner_table = table + p.toff[ND - 1];
    for (long long r = (long long)blockIdx.x * groups + (threadIdx.x >> shift); r < p.rows;
         r += (long long)gridDim.x * groups) {
        long long rest = r, src = 0, dst = 0;
        bool pad = false;
#pragma unroll
        for (int d = ND - 2; d >= 0; --d) {
            const long long n = p.size[d];
            const long long i = rest % n;
            rest /= n;
            const I t = table[p.toff[d] + i];
            pad |= t == Pad<I>::v;
            src += pad ? 0 : (long long)t;
            dst += i * p.ostride[d];
        }
        const long long os = p.ostride[ND - 1];
        for (long long w = lane; w < p.inner; w += (1 << shift)) {
            const I t = inner_table[w];
            y[dst + w * os] = (pad || t == Pad<I>::v) ? fill : x[src + (long long)t];
        }
    }
}
