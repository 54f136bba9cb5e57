// RANDOM_GENERATOR (Philox 4x32-10), bit-exact with the NumPy reference.
//
// One thread a Philox block: block b adds b to the 128-bit counter of the state (words
// 0..3, word 0 least significant; the carry runs up), runs the ten rounds with the key
// (words 4, 5) bumped by the Weyl constants between rounds, and stores its four words at
// 4 b of a contiguous output, the last block cut at n. The state is read through its
// element stride (a strided state tensor). With WRITE_STATE, thread 0 of block 0 also
// writes OutputStateTensor: the counter plus the block count (mod 2^128), the key kept.
// The constants are dmlops.descs.random's (PHILOX_MULTIPLIERS, PHILOX_WEYL, PHILOX_ROUNDS).

#include "common.cuh"

struct RandomParams {
    i64 n;             // output words
    i64 state_stride;  // element stride of InputStateTensor's last axis
    i64 out_state_stride;
};

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u
#define PHILOX_ROUNDS 10

// counter + offset (mod 2^128), four 32-bit words least significant first.
__device__ __forceinline__ void add_to_counter(const u32 c[4], u64 offset, u32 x[4]) {
    u64 t = (u64)c[0] + (offset & 0xffffffffull);
    x[0] = (u32)t;
    t = (u64)c[1] + (offset >> 32) + (t >> 32);
    x[1] = (u32)t;
    t = (u64)c[2] + (t >> 32);
    x[2] = (u32)t;
    x[3] = c[3] + (u32)(t >> 32);
}

struct alignas(16) U4 {
    u32 v[4];
};

// ILP Philox blocks per thread and loop step (b, b + T, ..., b + (ILP - 1) T for a grid of
// T threads), so the independent chains of multiplies interleave and a warp's stores stay
// adjacent for each of them.
template <bool WRITE_STATE, int ILP>
__global__ void philox4x32_10(const u32* __restrict__ state, u32* __restrict__ out, u32* __restrict__ out_state,
                              const RandomParams p) {
    u32 c[4];
    for (int i = 0; i < 4; ++i) c[i] = state[i * p.state_stride];
    const u32 key0 = state[4 * p.state_stride], key1 = state[5 * p.state_stride];
    const i64 blocks = (p.n + 3) / 4;
    const bool aligned = ((u64)out & 15) == 0;  // block b's words start at 16 b bytes
    if (WRITE_STATE && blockIdx.x == 0 && threadIdx.x == 0) {
        u32 next[4];
        add_to_counter(c, (u64)blocks, next);
        for (int i = 0; i < 4; ++i) out_state[i * p.out_state_stride] = next[i];
        out_state[4 * p.out_state_stride] = key0;
        out_state[5 * p.out_state_stride] = key1;
    }
    // the round keys, the same for every block: once per thread, then reused by its blocks
    u32 rk0[PHILOX_ROUNDS], rk1[PHILOX_ROUNDS];
    rk0[0] = key0;
    rk1[0] = key1;
#pragma unroll
    for (int r = 1; r < PHILOX_ROUNDS; ++r) {
        rk0[r] = rk0[r - 1] + PHILOX_W0;
        rk1[r] = rk1[r - 1] + PHILOX_W1;
    }
    const i64 threads = (i64)gridDim.x * blockDim.x;
    for (i64 b0 = (i64)blockIdx.x * blockDim.x + threadIdx.x; b0 < blocks; b0 += ILP * threads) {
        u32 x[ILP][4];
#pragma unroll
        for (int u = 0; u < ILP; ++u) add_to_counter(c, (u64)(b0 + u * threads), x[u]);
#pragma unroll
        for (int r = 0; r < PHILOX_ROUNDS; ++r) {
#pragma unroll
            for (int u = 0; u < ILP; ++u) {
                // one 32 x 32 -> 64-bit multiply each (IMAD.WIDE), not a high and a low multiply
                const u64 p0 = (u64)PHILOX_M0 * x[u][0], p1 = (u64)PHILOX_M1 * x[u][2];
                const u32 hi0 = (u32)(p0 >> 32), lo0 = (u32)p0;
                const u32 hi1 = (u32)(p1 >> 32), lo1 = (u32)p1;
                const u32 y0 = hi1 ^ x[u][1] ^ rk0[r], y2 = hi0 ^ x[u][3] ^ rk1[r];
                x[u][0] = y0;
                x[u][1] = lo1;
                x[u][2] = y2;
                x[u][3] = lo0;
            }
        }
#pragma unroll
        for (int u = 0; u < ILP; ++u) {
            const i64 b = b0 + u * threads;
            if (b >= blocks) break;
            const i64 base = 4 * b;
            if (base + 4 <= p.n && aligned) {
                // one 16-byte store: a warp writes 512 adjacent bytes in one instruction, where
                // four 4-byte stores each touched every fourth word of them (run 27: 75 % of the
                // write rate with those)
                U4 v;
#pragma unroll
                for (int j = 0; j < 4; ++j) v.v[j] = x[u][j];
                *reinterpret_cast<U4*>(out + base) = v;
            } else if (base + 4 <= p.n) {
#pragma unroll
                for (int j = 0; j < 4; ++j) out[base + j] = x[u][j];
            } else {
                for (int j = 0; base + j < p.n; ++j) out[base + j] = x[u][j];
            }
        }
    }
}
