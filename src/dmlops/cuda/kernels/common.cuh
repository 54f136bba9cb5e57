// Shared definitions of the dmlops CUDA kernels.
//
// The kernels are compiled by NVRTC at run time (dmlops.cuda._compile) and must not depend on
// any header: no <cstdint>, no <cuda_fp16.h>. FLOAT16 is stored as its 16 raw bits and
// converted with the PTX cvt instructions (round to nearest even), so every FLOAT16
// result is computed in float32 and rounded once when stored.
#pragma once

typedef signed char i8;
typedef unsigned char u8;
typedef short i16;
typedef unsigned short u16;
typedef int i32;
typedef unsigned int u32;
typedef long long i64;
typedef unsigned long long u64;

// FLOAT16 storage type: raw bits, distinct from u16 so that templates can tell them apart.
struct half_t {
    u16 bits;
};

__device__ __forceinline__ float h2f(half_t h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.bits));
    return f;
}

__device__ __forceinline__ half_t f2h(float f) {
    half_t h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.bits) : "f"(f));
    return h;
}

// Arithmetic traits: Acc is the accumulation type (float for FLOAT16/FLOAT32, double for
// FLOAT64 and the integer types, so that integer results round like the float64
// reference); to_acc/from_acc convert, rounding once. Float -> integer stores truncate
// toward zero and saturate, as DirectML and the reference's store() do.
template <typename T> struct Num;

template <> struct Num<float> {
    typedef float Acc;
    static __device__ __forceinline__ float to_acc(float v) { return v; }
    static __device__ __forceinline__ float from_acc(float v) { return v; }
    static __device__ __forceinline__ bool is_nan(float v) { return v != v; }
    static __device__ __forceinline__ float key(float v) { return v; }
};
template <> struct Num<double> {
    typedef double Acc;
    static __device__ __forceinline__ double to_acc(double v) { return v; }
    static __device__ __forceinline__ double from_acc(double v) { return v; }
    static __device__ __forceinline__ bool is_nan(double v) { return v != v; }
    static __device__ __forceinline__ double key(double v) { return v; }
};
template <> struct Num<half_t> {
    typedef float Acc;
    static __device__ __forceinline__ float to_acc(half_t v) { return h2f(v); }
    static __device__ __forceinline__ half_t from_acc(float v) { return f2h(v); }
    static __device__ __forceinline__ bool is_nan(half_t v) { return (v.bits & 0x7fff) > 0x7c00; }
    static __device__ __forceinline__ float key(half_t v) { return h2f(v); }
};

template <typename T, long long LO, unsigned long long HI> struct IntNum {
    typedef double Acc;
    static __device__ __forceinline__ double to_acc(T v) { return (double)v; }
    static __device__ __forceinline__ T from_acc(double v) {
        if (v != v) return (T)0;  // NaN -> 0, as D3D's ftoi/ftou (and the reference)
        double r = trunc(v);        // toward zero, as DirectML (erratum E30)
        if (!(r >= (double)LO)) return (T)LO;
        if (r >= (double)HI) return (T)HI;
        return (T)r;
    }
    static __device__ __forceinline__ bool is_nan(T) { return false; }
    static __device__ __forceinline__ T key(T v) { return v; }
};
template <> struct Num<i8> : IntNum<i8, -128, 127> {};
template <> struct Num<u8> : IntNum<u8, 0, 255> {};
template <> struct Num<i16> : IntNum<i16, -32768, 32767> {};
template <> struct Num<u16> : IntNum<u16, 0, 65535> {};
template <> struct Num<i32> : IntNum<i32, -2147483647LL - 1, 2147483647ULL> {};
template <> struct Num<u32> : IntNum<u32, 0, 4294967295ULL> {};
template <> struct Num<i64> : IntNum<i64, -9223372036854775807LL - 1, 9223372036854775807ULL> {};
template <> struct Num<u64> : IntNum<u64, 0, 18446744073709551615ULL> {};

// An index value mapped into [0, n - 1]: signed types wrap once (when WRAP), then clamp
// (ruling 2). No value of any index type can produce an out-of-range offset.
template <typename IDX, bool WRAP> __device__ __forceinline__ i64 clamp_index(IDX raw, i64 n);

template <> __device__ __forceinline__ i64 clamp_index<i32, true>(i32 raw, i64 n) {
    i64 v = raw;
    if (v < 0) v += n;
    return v < 0 ? 0 : (v >= n ? n - 1 : v);
}
template <> __device__ __forceinline__ i64 clamp_index<i32, false>(i32 raw, i64 n) {
    i64 v = raw;
    return v < 0 ? 0 : (v >= n ? n - 1 : v);
}
template <> __device__ __forceinline__ i64 clamp_index<i64, true>(i64 raw, i64 n) {
    i64 v = raw;
    if (v < 0) v += n;  // raw >= INT64_MIN and n > 0: no overflow
    return v < 0 ? 0 : (v >= n ? n - 1 : v);
}
template <> __device__ __forceinline__ i64 clamp_index<i64, false>(i64 raw, i64 n) {
    return raw < 0 ? 0 : (raw >= n ? n - 1 : raw);
}
template <> __device__ __forceinline__ i64 clamp_index<u32, false>(u32 raw, i64 n) {
    return (i64)raw >= n ? n - 1 : (i64)raw;
}
template <> __device__ __forceinline__ i64 clamp_index<u64, false>(u64 raw, i64 n) {
    return raw >= (u64)n ? n - 1 : (i64)raw;  // compared unsigned: 2^64 - 1 clamps, never wraps
}

// Division by a run-time divisor d through a host-computed magic number (m, s):
// floor(n / d) = (umulhi(n, m) + n) >> s for every 0 <= n < 2^31 (PyTorch's IntDivider;
// dmlops.cuda._runtime.fast_div computes m and s). Four instructions instead of ~20.
__device__ __forceinline__ u32 fast_div(u32 n, long long m, long long s) {
    return (__umulhi(n, (u32)m) + n) >> (u32)s;
}

// Work item t of a grid over N x C planes x rows x groups per row (a group: whatever a
// thread owns along the row), decomposed with fast_div by div = (groups per row, rows, C)
// and their magic numbers dv (two per divisor).
struct PlaneItem {
    int group, row;
    u32 plane, n, c;  // plane = n * C + c
};
__device__ __forceinline__ PlaneItem plane_item(u32 t, const long long (&dv)[6], const long long (&div)[3]) {
    PlaneItem it;
    const u32 r = fast_div(t, dv[0], dv[1]);
    it.group = (int)(t - r * (u32)div[0]);
    it.plane = fast_div(r, dv[2], dv[3]);
    it.row = (int)(r - it.plane * (u32)div[1]);
    it.n = fast_div(it.plane, dv[4], dv[5]);
    it.c = it.plane - it.n * (u32)div[2];
    return it;
}

// Floor of a / b for a compile-time b > 0 and any sign of a (also in constant expressions).
template <int B> __host__ __device__ __forceinline__ constexpr int floor_div(int a) {
    return a >= 0 ? a / B : -((-a + B - 1) / B);
}
