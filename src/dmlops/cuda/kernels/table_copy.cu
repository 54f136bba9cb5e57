// Separable gathers (descs/_separable_gathers.py): Output[o] = Input[sum_d table_d[o_d]], or the
// fill value where a table row is padding. PADDING(1), DEPTH_TO_SPACE(1), SPACE_TO_DEPTH(1).
//
// The tables hold input element offsets (coordinates times the input's element strides),
// concatenated, ND axes outermost first; PAD (the most negative I) marks a padding row. The
// output is walked row by row (a row: its innermost axis; grid-stride over rows),
// 2^tpr_shift threads per row and 256 / 2^tpr_shift rows per block at a time; a thread
// resolves its row's outer coordinates (divisions in I, 32-bit where every offset, the
// output's span and the row count fit) and takes E elements of the row per pass, tpr
// apart, loading all E before storing them: a warp's stores are adjacent and its loads
// follow the innermost table (adjacent for PADDING's interior, b interleaved runs for
// DEPTH_TO_SPACE). T is the element's storage (its bits): no arithmetic, so every data type
// is exact. (Run 29-31, H200: a 64-bit division per row and thread made the kernel
// compute-bound, 17 % of copy; chunks of rows per thread with an odometer, 60 %.)
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

template <typename T, int N> struct alignas(sizeof(T) * N) TcVec {
    T v[N];
};

// E: elements a thread takes of its row per pass. CONSEC: those E are adjacent (the host
// asks for it where the output's innermost stride is 1), stored as one vector where their
// address is aligned; else they are 2^tpr_shift apart (a warp's scalar stores adjacent).
template <typename T, int ND, typename I, int E = 4, bool CONSEC = false>
__global__ void __launch_bounds__(256)
    table_copy(const T* __restrict__ x, T* __restrict__ y, const I* __restrict__ table, const TableCopyParams p) {
    const int shift = (int)p.tpr_shift;
    const int lane = threadIdx.x & ((1 << shift) - 1);
    const I groups = (I)(blockDim.x >> shift);
    const T fill = *reinterpret_cast<const T*>(&p.fill);  // little-endian: the low bytes
    const I* inner_table = table + p.toff[ND - 1];
    const I inner = (I)p.inner, os = (I)p.ostride[ND - 1];
    const I first = CONSEC ? (I)lane * E : (I)lane, pass = (I)E << shift, gap = CONSEC ? (I)1 : (I)1 << shift;
    for (I r = (I)blockIdx.x * groups + (I)(threadIdx.x >> shift); r < (I)p.rows; r += (I)gridDim.x * groups) {
        // the row's outer coordinates: divisions in I (32-bit wherever the host found that enough)
        I rest = r, src = 0, dst = 0;
        bool pad = false;
#pragma unroll
        for (int d = ND - 2; d >= 0; --d) {
            const I n = (I)p.size[d];
            const I q = rest / n;
            const I i = rest - q * n;
            rest = q;
            const I t = table[p.toff[d] + i];
            pad |= t == Pad<I>::v;
            src += t == Pad<I>::v ? (I)0 : t;
            dst += i * (I)p.ostride[d];
        }
        for (I w0 = first; w0 < inner; w0 += pass) {
            T v[E];
#pragma unroll
            for (int k = 0; k < E; ++k) {
                const I w = w0 + (I)k * gap;
                if (w < inner) {
                    const I t = inner_table[w];
                    v[k] = (pad || t == Pad<I>::v) ? fill : x[src + t];
                }
            }
            T* out = y + dst + w0 * os;
            if (CONSEC && w0 + E <= inner && ((unsigned long long)out % (sizeof(T) * E)) == 0) {
                TcVec<T, E> o;
#pragma unroll
                for (int k = 0; k < E; ++k) o.v[k] = v[k];
                *reinterpret_cast<TcVec<T, E>*>(out) = o;  // os is 1 here
            } else {
#pragma unroll
                for (int k = 0; k < E; ++k) {
                    const I w = w0 + (I)k * gap;
                    if (w < inner) y[dst + w * os] = v[k];
                }
            }
        }
    }
}
