// The element-wise and activation family: one generated family of kernels.
//
// Contract (dmlops.cuda.elementwise builds the name expressions and the parameters):
//   ew_contig<Op, Fused, SB, T0, T1, T2, TO, VEC, B, U, H, R>  every operand 1-D, stride 1 or 0
//                                                           (H = 0 and R = 0 by default)
//   ew_strided<Op, Fused, SB, T0, T1, T2, TO, NDIM, I, VEC> any strides (0 = broadcast, negative)
//   ew_rows2d<Op, Fused, SB, T0, T1, T2, TO, I, VEC, U>      two dimensions, U vectors a thread
// Op is an operator functor below (Op::arity inputs read, in the desc's member order);
// Fused a unary activation applied to the rounded result (ELEMENT_WISE_ADD1's
// FusedActivation) or NoFused; SB applies DML_SCALE_BIAS to every input. T0..T2
// are the storage types of the inputs (unused ones repeat T0), TO the output's.
// EwParams::q holds the operator's float attributes, f the fused activation's, k the
// integer ones, sb the float32 scale and bias.
//
// Numerics, as the NumPy reference (reference/elementwise.py) computes them:
// * inputs load as float (FLOAT16/FLOAT32), double (FLOAT64) or 64-bit integers;
// * exactly rounded operators compute what the reference computes in float64, rounded
//   once when stored: either in double with the same formula (__dadd_rn etc.: no
//   contraction into FMA), or in float32 where one float32 operation rounds the same
//   (+, -, *, /, sqrt of FLOAT16/FLOAT32 values: float32 has more than twice FLOAT16's
//   precision plus two bits, so the second rounding to FLOAT16 is innocuous);
// * transcendental operators use float32 libdevice functions (within the tolerance of
//   tests/oracles/elementwise.py), double ones for FLOAT64;
// * integer arithmetic is 64-bit wrap-around stored as the low bits; DIVIDE, the
//   moduli, MEAN and the shifts follow DirectML's 32-bit registers (descs/elementwise.py).
// Row kernels (SOFTMAX / LOG_SOFTMAX / HARDMAX) over rows of contiguous elements:
// ew_rows_warp<T, KIND, PER> one warp per row of at most 32 * PER elements, in registers;
// ew_rows<T, KIND, PER> one block per row, PER elements per thread in registers (0: read again);
// ew_row_chunk_stats<T>, ew_row_chunk_combine<T>, ew_row_chunk_apply<T, KIND>: long SOFTMAX /
// LOG_SOFTMAX rows in chunks of ROW_CHUNK elements, a block each (notes at the kernels).
#include "common.cuh"

#define EW_BLOCK 256
#define EW_UNROLL 4
#define ROW_BLOCK 256
#define ROW_WIDE_BLOCK 1024  // ew_rows<T, KIND, PER, ROW_WIDE_BLOCK>: rows of up to 16K in registers

struct EwParams {
    long long count;
    long long size[8];
    long long ostride[8];
    long long s0[8];
    long long s1[8];
    long long s2[8];
    long long k[4];
    double q[8];
    double f[8];
    double sb[2];
};

// -- traits -------------------------------------------------------------------------------

template <class X> struct IsF { static constexpr bool v = false; };
template <> struct IsF<float> { static constexpr bool v = true; };
template <> struct IsF<double> { static constexpr bool v = true; };

template <class I> struct UnsignedOf;
template <> struct UnsignedOf<int> { typedef unsigned int type; };
template <> struct UnsignedOf<long long> { typedef unsigned long long type; };

template <class T> struct Sgn { static constexpr bool v = false; };
template <> struct Sgn<i8> { static constexpr bool v = true; };
template <> struct Sgn<i16> { static constexpr bool v = true; };
template <> struct Sgn<i32> { static constexpr bool v = true; };
template <> struct Sgn<i64> { static constexpr bool v = true; };

template <class T> struct Lim;
template <> struct Lim<i8> { static constexpr long long lo = -128, hi = 127; };
template <> struct Lim<u8> { static constexpr long long lo = 0, hi = 255; };
template <> struct Lim<i16> { static constexpr long long lo = -32768, hi = 32767; };
template <> struct Lim<u16> { static constexpr long long lo = 0, hi = 65535; };

// -- loads: storage -> value ----------------------------------------------------------------

__device__ __forceinline__ float ldv(float v) { return v; }
__device__ __forceinline__ float ldv(half_t v) { return h2f(v); }
__device__ __forceinline__ double ldv(double v) { return v; }
__device__ __forceinline__ long long ldv(i8 v) { return v; }
__device__ __forceinline__ long long ldv(u8 v) { return v; }
__device__ __forceinline__ long long ldv(i16 v) { return v; }
__device__ __forceinline__ long long ldv(u16 v) { return v; }
__device__ __forceinline__ long long ldv(i32 v) { return v; }
__device__ __forceinline__ long long ldv(u32 v) { return v; }
__device__ __forceinline__ long long ldv(i64 v) { return v; }
__device__ __forceinline__ unsigned long long ldv(u64 v) { return v; }

// The raw bits, zero-extended (the bitwise operators; floats as their bit patterns).
__device__ __forceinline__ unsigned long long ldr(float v) { return __float_as_uint(v); }
__device__ __forceinline__ unsigned long long ldr(half_t v) { return v.bits; }
__device__ __forceinline__ unsigned long long ldr(double v) { return (unsigned long long)__double_as_longlong(v); }
__device__ __forceinline__ unsigned long long ldr(i8 v) { return (u8)v; }
__device__ __forceinline__ unsigned long long ldr(u8 v) { return v; }
__device__ __forceinline__ unsigned long long ldr(i16 v) { return (u16)v; }
__device__ __forceinline__ unsigned long long ldr(u16 v) { return v; }
__device__ __forceinline__ unsigned long long ldr(i32 v) { return (u32)v; }
__device__ __forceinline__ unsigned long long ldr(u32 v) { return v; }
__device__ __forceinline__ unsigned long long ldr(i64 v) { return (unsigned long long)v; }
__device__ __forceinline__ unsigned long long ldr(u64 v) { return v; }

// -- stores: value -> storage, rounding once ----------------------------------------------------

__device__ __forceinline__ half_t d2h(double d) {
    half_t h;
    asm("cvt.rn.f16.f64 %0, %1;" : "=h"(h.bits) : "d"(d));
    return h;
}

template <typename TO> struct St;
template <> struct St<float> {
    static __device__ __forceinline__ float f(float r) { return r; }
    static __device__ __forceinline__ float f(double r) { return (float)r; }
    static __device__ __forceinline__ float f(long long r) { return (float)r; }
    static __device__ __forceinline__ float f(unsigned long long r) { return (float)r; }
    static __device__ __forceinline__ float f(bool r) { return r ? 1.0f : 0.0f; }
};
template <> struct St<half_t> {
    static __device__ __forceinline__ half_t f(float r) { return f2h(r); }
    static __device__ __forceinline__ half_t f(double r) { return d2h(r); }
    static __device__ __forceinline__ half_t f(long long r) { return d2h((double)r); }
    static __device__ __forceinline__ half_t f(unsigned long long r) { return d2h((double)r); }
    static __device__ __forceinline__ half_t f(bool r) { return f2h(r ? 1.0f : 0.0f); }
};
template <> struct St<double> {
    static __device__ __forceinline__ double f(float r) { return r; }
    static __device__ __forceinline__ double f(double r) { return r; }
    static __device__ __forceinline__ double f(long long r) { return (double)r; }
    static __device__ __forceinline__ double f(unsigned long long r) { return (double)r; }
    static __device__ __forceinline__ double f(bool r) { return r ? 1.0 : 0.0; }
};
// Integers: float results truncate and saturate (NaN -> 0, Num<T>::from_acc); integer
// results keep their low bits (wrap-around), as the reference's store does.
template <typename T> struct StI {
    static __device__ __forceinline__ T f(float r) { return Num<T>::from_acc((double)r); }
    static __device__ __forceinline__ T f(double r) { return Num<T>::from_acc(r); }
    static __device__ __forceinline__ T f(long long r) { return (T)(unsigned long long)r; }
    static __device__ __forceinline__ T f(unsigned long long r) { return (T)r; }
    static __device__ __forceinline__ T f(bool r) { return (T)(r ? 1 : 0); }
};
template <> struct St<i8> : StI<i8> {};
template <> struct St<u8> : StI<u8> {};
template <> struct St<i16> : StI<i16> {};
template <> struct St<u16> : StI<u16> {};
template <> struct St<i32> : StI<i32> {};
template <> struct St<u32> : StI<u32> {};
template <> struct St<i64> : StI<i64> {};
template <> struct St<u64> : StI<u64> {};

// Bit patterns back into storage (the bitwise operators' results).
template <typename TO> __device__ __forceinline__ TO st_raw(unsigned long long r) { return (TO)r; }
template <> __device__ __forceinline__ float st_raw<float>(unsigned long long r) { return __uint_as_float((u32)r); }
template <> __device__ __forceinline__ double st_raw<double>(unsigned long long r) {
    return __longlong_as_double((long long)r);
}
template <> __device__ __forceinline__ half_t st_raw<half_t>(unsigned long long r) {
    half_t h;
    h.bits = (u16)r;
    return h;
}

__device__ __forceinline__ float nan_of(float) { return __int_as_float(0x7fc00000); }
__device__ __forceinline__ double nan_of(double) { return __longlong_as_double(0x7ff8000000000000LL); }

// -- math overloads (float: libdevice's float32 functions; double: the float64 ones) ---------

#define EW_MATH1(name, ff, df)                                          \
    __device__ __forceinline__ float name(float x) { return ff(x); }   \
    __device__ __forceinline__ double name(double x) { return df(x); }
#define EW_MATH2(name, ff, df)                                                   \
    __device__ __forceinline__ float name(float x, float y) { return ff(x, y); }  \
    __device__ __forceinline__ double name(double x, double y) { return df(x, y); }

EW_MATH1(m_acos, acosf, acos)
EW_MATH1(m_acosh, acoshf, acosh)
EW_MATH1(m_asin, asinf, asin)
EW_MATH1(m_asinh, asinhf, asinh)
EW_MATH1(m_atan, atanf, atan)
EW_MATH1(m_atanh, atanhf, atanh)
EW_MATH1(m_cos, cosf, cos)
EW_MATH1(m_cosh, coshf, cosh)
EW_MATH1(m_sin, sinf, sin)
EW_MATH1(m_sinh, sinhf, sinh)
EW_MATH1(m_tan, tanf, tan)
EW_MATH1(m_tanh, tanhf, tanh)
EW_MATH1(m_exp, expf, exp)
EW_MATH1(m_exp2, exp2f, exp2)
EW_MATH1(m_log2, log2f, log2)
EW_MATH1(m_expm1, expm1f, expm1)
EW_MATH1(m_log, logf, log)
EW_MATH1(m_log1p, log1pf, log1p)
EW_MATH1(m_sqrt, sqrtf, sqrt)
EW_MATH1(m_erf, erff, erf)
EW_MATH1(m_floor, floorf, floor)
EW_MATH1(m_ceil, ceilf, ceil)
EW_MATH1(m_rint, rintf, rint)
EW_MATH1(m_trunc, truncf, trunc)
EW_MATH1(m_fabs, fabsf, fabs)
EW_MATH2(m_pow, powf, pow)
EW_MATH2(m_atan2, atan2f, atan2)
EW_MATH2(m_fmax, fmaxf, fmax)
EW_MATH2(m_fmin, fminf, fmin)
EW_MATH2(add_rn, __fadd_rn, __dadd_rn)
EW_MATH2(sub_rn, __fsub_rn, __dsub_rn)
EW_MATH2(mul_rn, __fmul_rn, __dmul_rn)
EW_MATH2(div_rn, __fdiv_rn, __ddiv_rn)

// -- operator functors ------------------------------------------------------------------------
// f<T0>(q, k, inputs...): T0 is the first input's storage type (its width for the
// saturating ABS/NEGATE); the inputs are loaded values (ldv, or ldr when raw).

struct Unary {
    static constexpr int pair = 0;  // > 0: the FLOAT16 pair instruction of the *H2 functors
    static constexpr int arity = 1;
    static constexpr bool raw = false;
    static constexpr bool raw_out = false;
};
struct Binary {
    static constexpr int pair = 0;  // > 0: the FLOAT16 pair instruction of the *H2 functors
    static constexpr int arity = 2;
    static constexpr bool raw = false;
    static constexpr bool raw_out = false;
};
struct Ternary {
    static constexpr int pair = 0;  // > 0: the FLOAT16 pair instruction of the *H2 functors
    static constexpr int arity = 3;
    static constexpr bool raw = false;
    static constexpr bool raw_out = false;
};

#define EW_UNARY(Name, expr)                                                                          \
    struct Name : Unary {                                                                              \
        template <class T0, class X>                                                                   \
        static __device__ __forceinline__ auto f(const double* q, const long long* k, X x) { return expr; } \
    };
#define EW_BINARY(Name, expr)                                                                                  \
    struct Name : Binary {                                                                                      \
        template <class T0, class X, class Y>                                                                   \
        static __device__ __forceinline__ auto f(const double* q, const long long* k, X a, Y b) { return expr; } \
    };

template <class T0> __device__ __forceinline__ long long saturate(long long v) {
    return v < Lim<T0>::lo ? Lim<T0>::lo : (v > Lim<T0>::hi ? Lim<T0>::hi : v);
}

// ABS / NEGATE: 8- and 16-bit integers saturate, wider ones wrap (ABS(INT32_MIN) = INT32_MIN).
struct OpAbs : Unary {
    template <class T0, class X> static __device__ __forceinline__ X f(const double*, const long long*, X x) {
        if constexpr (IsF<X>::v) {
            return m_fabs(x);
        } else if constexpr (sizeof(T0) < 4) {
            return (X)saturate<T0>(x < 0 ? -(long long)x : (long long)x);
        } else {
            return x < (X)0 ? (X)(0ULL - (unsigned long long)x) : x;
        }
    }
};
struct OpNegate : Unary {
    template <class T0, class X> static __device__ __forceinline__ X f(const double*, const long long*, X x) {
        if constexpr (IsF<X>::v) {
            return -x;
        } else if constexpr (sizeof(T0) < 4) {
            return (X)saturate<T0>(-(long long)x);
        } else {
            return (X)(0ULL - (unsigned long long)x);
        }
    }
};

EW_UNARY(OpIdentity, x)

// IDENTITY / ABS / NEGATE of a float type into the same type, without ScaleBias or a fused
// activation (the host picks these names): the storage bits copied, the sign bit cleared,
// the sign bit flipped. DirectML keeps every NaN's payload through them, a signalling
// NaN's too (errata E197); the float path above would not: FLOAT16 loads through float and
// stores through cvt.rn.f16.f32, which turns every FLOAT16 NaN into 0x7fff, and a float
// negation or fabs may quiet a signalling NaN. Every other value gets the float path's
// bits (-0, infinities, subnormals included). x: the zero-extended bits (ldr).
template <int MODE> struct OpSignBits : Unary {
    static constexpr bool raw = true;
    static constexpr bool raw_out = true;
    template <class T0, class X> static __device__ __forceinline__ X f(const double*, const long long*, X x) {
        constexpr X sign = (X)1 << (8 * sizeof(T0) - 1);
        if constexpr (MODE == 0) return x;
        else if constexpr (MODE == 1) return x & ~sign;
        else return x ^ sign;
    }
};
struct OpIdentityBits : OpSignBits<0> {};
struct OpAbsBits : OpSignBits<1> {};
struct OpNegateBits : OpSignBits<2> {};
EW_UNARY(OpAcos, m_acos(x))
// ASINH / ACOSH / ATANH: DirectML's log formulas in float32 steps, the log in float64
__device__ __forceinline__ double log_f32(float v) { return log((double)v); }
EW_UNARY(OpAcosh, log_f32(__fadd_rn((float)x, sqrtf(__fsub_rn(__fmul_rn((float)x, (float)x), 1.0f)))))
EW_UNARY(OpAsin, m_asin(x))
EW_UNARY(OpAsinh, log_f32(__fadd_rn((float)x, sqrtf(__fadd_rn(__fmul_rn((float)x, (float)x), 1.0f)))))
// ATAN(NaN) = pi/4 (DirectML's range reduction drops the NaN)
EW_UNARY(OpAtan, x != x ? (X)0.78539816339744830962 : m_atan(x))
EW_UNARY(OpAtanh, 0.5 * log_f32(__fdiv_rn(__fadd_rn(1.0f, (float)x), __fsub_rn(1.0f, (float)x))))
EW_UNARY(OpCos, m_cos(x))
// SINH / COSH: (exp(x) +- exp(-x)) / 2 with exp rounded to float32 (DirectML overflows where it does)
EW_UNARY(OpCosh, ((double)expf((float)x) + (double)expf(-(float)x)) * 0.5)
EW_UNARY(OpSin, m_sin(x))
EW_UNARY(OpSinh, ((double)expf((float)x) - (double)expf(-(float)x)) * 0.5)
EW_UNARY(OpTan, m_tan(x))
EW_UNARY(OpTanh, m_tanh(x))
EW_UNARY(OpExp, m_exp(x))
EW_UNARY(OpLog, m_log(x))
EW_UNARY(OpSqrt, m_sqrt(x))
EW_UNARY(OpRecip, div_rn((X)1, x))
EW_UNARY(OpErf, m_erf(x))
EW_UNARY(OpFloor, m_floor(x))
EW_UNARY(OpCeil, m_ceil(x))
EW_UNARY(OpIsNan, x != x)
// IS_INFINITY, q[0]: 0 either, 1 positive, 2 negative (x - x is NaN for +-inf only)
EW_UNARY(OpIsInf, (x == x && (x - x) != (x - x)) && (q[0] == 0.0 || (q[0] == 1.0) == (x > (X)0)))
// THRESHOLD: x > Min ? x : Min (NaN and a tie of zeros give Min), in float64
EW_UNARY(OpThreshold, (double)x > q[0] ? (double)x : q[0])

// DirectML's pow: exp2(y * log2(|x|)); x < 0: NaN unless y is an integer, negated for an
// odd one; x = +-0 or NaN: 0 (so pow(1, NaN) and pow(inf, 0) are NaN, pow(0, -1) = 0)
template <class X> __device__ __forceinline__ X dml_pow(X x, X y) {
    const X r = m_exp2(y * m_log2(m_fabs(x)));
    if (x > (X)0) return r;
    if (!(x < (X)0)) return (X)0;
    if (y - m_floor(y) != (X)0) return nan_of(X());
    const X h = y / (X)2;
    return h - m_floor(h) != (X)0 ? -r : r;
}
EW_UNARY(OpConstantPow, dml_pow(x, (X)q[0]))
EW_UNARY(OpLogicalNot, x == (X)0)

// ROUND, q[0]: 0 halves to even, 1 toward zero, 2 halves away from zero in float32 steps
struct OpRound : Unary {
    template <class T0, class X> static __device__ __forceinline__ X f(const double* q, const long long*, X x) {
        if (q[0] == 0.0) return m_rint(x);
        if (q[0] == 1.0) return m_trunc(x);
        const float v = (float)x;
        return (X)(v >= 0.0f ? floorf(__fadd_rn(v, 0.5f)) : ceilf(__fsub_rn(v, 0.5f)));
    }
};

// SIGN: NaN and -0 give +0
struct OpSign : Unary {
    template <class T0, class X> static __device__ __forceinline__ X f(const double*, const long long*, X x) {
        if constexpr (IsF<X>::v) {
            return x > (X)0 ? (X)1 : (x < (X)0 ? (X)-1 : (X)0);
        } else {
            return x > (X)0 ? (X)1 : (x == (X)0 ? (X)0 : (X)-1);
        }
    }
};

// CLIP / CLIP1: max(min(x, Max), Min) as selects (float64); integers: bounds k[0], k[1]
struct OpClip : Unary {
    template <class T0, class X> static __device__ __forceinline__ auto f(const double* q, const long long* k, X x) {
        if constexpr (IsF<X>::v) {
            // selects keeping x only strictly inside: NaN -> Max, a tie of zeros takes the bound
            const double v = x;
            const double below = v < q[1] ? v : q[1];
            return below > q[0] ? below : q[0];
        } else {
            long long v = (long long)x;
            v = v < k[1] ? v : k[1];
            return v > k[0] ? v : k[0];
        }
    }
};

// BIT_COUNT: set bits of the raw pattern
struct OpBitCount : Unary {
    static constexpr bool raw = true;
    template <class T0, class X> static __device__ __forceinline__ long long f(const double*, const long long*, X x) {
        return (long long)__popcll(x);
    }
};
struct OpBitNot : Unary {
    static constexpr bool raw = true;
    static constexpr bool raw_out = true;
    template <class T0, class X> static __device__ __forceinline__ X f(const double*, const long long*, X x) {
        return ~x;
    }
};

#define EW_BITWISE(Name, op)                                                                                   \
    struct Name : Binary {                                                                                      \
        static constexpr bool raw = true;                                                                       \
        static constexpr bool raw_out = true;                                                                   \
        template <class T0, class X, class Y>                                                                   \
        static __device__ __forceinline__ X f(const double*, const long long*, X a, Y b) { return a op b; }     \
    };
EW_BITWISE(OpBitAnd, &)
EW_BITWISE(OpBitOr, |)
EW_BITWISE(OpBitXor, ^)

// ADD, SUBTRACT, MULTIPLY: IEEE (each one rounding), integers wrap around
struct OpAdd : Binary {
    template <class T0, class X, class Y> static __device__ __forceinline__ X f(const double*, const long long*, X a, Y b) {
        if constexpr (IsF<X>::v) return add_rn(a, b);
        else return (X)((unsigned long long)a + (unsigned long long)b);
    }
};
struct OpSubtract : Binary {
    template <class T0, class X, class Y> static __device__ __forceinline__ X f(const double*, const long long*, X a, Y b) {
        if constexpr (IsF<X>::v) return sub_rn(a, b);
        else return (X)((unsigned long long)a - (unsigned long long)b);
    }
};
struct OpMultiply : Binary {
    template <class T0, class X, class Y> static __device__ __forceinline__ X f(const double*, const long long*, X a, Y b) {
        if constexpr (IsF<X>::v) return mul_rn(a, b);
        else return (X)((unsigned long long)a * (unsigned long long)b);
    }
};
// ADD, SUBTRACT, MULTIPLY of FLOAT16 operands into FLOAT16 (no ScaleBias, no fused
// activation; the host picks these names): two halves per instruction, add / sub / mul
// .rn.f16x2, subnormals kept. One FLOAT16 rounding of the exact result is what the float32
// path gives too: float32 carries more than twice FLOAT16's precision plus two bits, so its
// first rounding never changes the second (a product of two halves is exact in float32).
// NaN results are NaN either way (payloads aside, as the tests compare them). Vectors of one
// element and tails take the inherited scalar f.
struct OpAddH2 : OpAdd {
    static constexpr int pair = 1;
};
struct OpSubtractH2 : OpSubtract {
    static constexpr int pair = 2;
};
struct OpMultiplyH2 : OpMultiply {
    static constexpr int pair = 3;
};

template <int PAIR> __device__ __forceinline__ u32 pair_op(u32 x, u32 y) {
    u32 r;
    if constexpr (PAIR == 1) asm("add.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(y));
    else if constexpr (PAIR == 2) asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(y));
    else asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(y));
    return r;
}

// DIFFERENCE_SQUARE: the difference rounded to float32, squared in float64
struct OpDifferenceSquare : Binary {
    template <class T0, class X, class Y> static __device__ __forceinline__ auto f(const double*, const long long*, X a, Y b) {
        if constexpr (IsF<X>::v) {
            const double d = (double)(float)__dsub_rn((double)a, (double)b);
            return __dmul_rn(d, d);
        } else {
            const unsigned long long d = (unsigned long long)a - (unsigned long long)b;
            return (X)(d * d);
        }
    }
};

// DirectML's 32-bit integer division (descs/elementwise.py)
__device__ __forceinline__ long long signed_divide(long long a, long long b) {
    const unsigned long long ua = (unsigned long long)(a < 0 ? -a : a) & 0xffffffffULL;
    const unsigned long long ub = (unsigned long long)(b < 0 ? -b : b) & 0xffffffffULL;
    const long long q = ub == 0 ? 0xffffffffLL : (long long)(ua / ub);
    return ((a < 0) != (b < 0)) ? -q : q;
}
__device__ __forceinline__ long long unsigned_quotient(long long a, long long b) {
    const unsigned long long ua = (unsigned long long)a & 0xffffffffULL, ub = (unsigned long long)b & 0xffffffffULL;
    return ub == 0 ? 0xffffffffLL : (long long)(ua / ub);
}
__device__ __forceinline__ long long unsigned_remainder(long long a, long long b) {
    const unsigned long long ua = (unsigned long long)a & 0xffffffffULL, ub = (unsigned long long)b & 0xffffffffULL;
    return ub == 0 ? 0xffffffffLL : (long long)(ua % ub);
}
__device__ __forceinline__ long long low32_signed(long long v) { return (long long)(int)(unsigned)(v & 0xffffffffLL); }

struct OpDivide : Binary {
    template <class T0, class X, class Y> static __device__ __forceinline__ X f(const double*, const long long*, X a, Y b) {
        if constexpr (IsF<X>::v) return div_rn(a, b);
        else if constexpr (Sgn<T0>::v) return (X)signed_divide(a, b);
        else return (X)unsigned_quotient(a, b);
    }
};
struct OpModulusTruncate : Binary {
    template <class T0, class X, class Y> static __device__ __forceinline__ X f(const double*, const long long*, X a, Y b) {
        if constexpr (Sgn<T0>::v) return (X)(a - signed_divide(a, b) * b);
        else return (X)unsigned_remainder(a, b);
    }
};
struct OpModulusFloor : Binary {
    template <class T0, class X, class Y> static __device__ __forceinline__ X f(const double*, const long long*, X a, Y b) {
        if constexpr (Sgn<T0>::v) {
            long long r = unsigned_remainder(a < 0 ? -a : a, b < 0 ? -b : b);
            r = low32_signed(a < 0 ? -r : r);
            return (X)((r != 0 && ((r < 0) != (b < 0))) ? r + b : r);
        } else {
            return (X)unsigned_remainder(a, b);
        }
    }
};

// MAX / MIN: NaN loses to a number; equal operands give A
struct OpMax : Binary {
    template <class T0, class X, class Y> static __device__ __forceinline__ X f(const double*, const long long*, X a, Y b) {
        if constexpr (IsF<X>::v) return ((b > a) || (a != a && b == b)) ? b : a;
        else return b > a ? b : a;
    }
};
struct OpMin : Binary {
    template <class T0, class X, class Y> static __device__ __forceinline__ X f(const double*, const long long*, X a, Y b) {
        if constexpr (IsF<X>::v) return ((b < a) || (a != a && b == b)) ? b : a;
        else return b < a ? b : a;
    }
};
// MEAN: (a + b) * 0.5 in float32; integers: the 32-bit sum halved toward zero
struct OpMean : Binary {
    template <class T0, class X, class Y> static __device__ __forceinline__ auto f(const double*, const long long*, X a, Y b) {
        if constexpr (IsF<X>::v) {
            return __fmul_rn(__fadd_rn((float)a, (float)b), 0.5f);
        } else if constexpr (Sgn<T0>::v) {
            return (long long)(low32_signed((long long)a + (long long)b) / 2);
        } else {
            return (long long)((((long long)a + (long long)b) & 0xffffffffLL) / 2);
        }
    }
};
// Shifts: the 32-bit register shifted by the count modulo 32
struct OpShiftLeft : Binary {
    template <class T0, class X, class Y> static __device__ __forceinline__ long long f(const double*, const long long*, X a, Y b) {
        return (long long)((unsigned)(unsigned long long)a << ((unsigned)(unsigned long long)b & 31u));
    }
};
struct OpShiftRight : Binary {
    template <class T0, class X, class Y> static __device__ __forceinline__ long long f(const double*, const long long*, X a, Y b) {
        return (long long)((unsigned)(unsigned long long)a >> ((unsigned)(unsigned long long)b & 31u));
    }
};

EW_BINARY(OpPow, dml_pow(a, (X)b))
// ATAN_YX: atan2, but a NaN beside a finite nonzero operand reads DirectML's atan(y / x)
// (pi/4, as ATAN(NaN)), shifted by -pi when x < 0
struct OpAtanYx : Binary {
    template <class T0, class X, class Y> static __device__ __forceinline__ X f(const double*, const long long*, X y, Y xv) {
        const X x = (X)xv;
        const X quarter = (X)0.78539816339744830962;
        if (y != y && (x - x) == (X)0 && x != (X)0) return x < (X)0 ? quarter - (X)3.14159265358979323846 : quarter;
        if (x != x && (y - y) == (X)0 && y != (X)0) return quarter;
        return m_atan2(y, x);
    }
};
EW_BINARY(OpEquals, a == b)
EW_BINARY(OpGreater, a > b)
EW_BINARY(OpGreaterEqual, a >= b)
EW_BINARY(OpLess, a < b)
EW_BINARY(OpLessEqual, a <= b)
EW_BINARY(OpLogicalAnd, (a != (X)0) && (b != (Y)0))
EW_BINARY(OpLogicalOr, (a != (X)0) || (b != (Y)0))
EW_BINARY(OpLogicalXor, (a != (X)0) != (b != (Y)0))

// CLIP_GRAD / CLIP_GRAD1: the gradient where Min < x < Max strictly, else 0 (a select)
struct OpClipGrad : Binary {
    template <class T0, class X, class Y> static __device__ __forceinline__ auto f(const double* q, const long long* k, X x, Y dy) {
        bool inside;
        if constexpr (IsF<X>::v) {
            inside = (double)x > q[0] && (double)x < q[1];
        } else {  // the bounds converted to the integer type (k)
            inside = (long long)x > k[0] && (long long)x < k[1];
        }
        if constexpr (IsF<Y>::v) return inside ? (double)dy : 0.0;
        else return inside ? dy : (Y)0;
    }
};
// RELU_GRAD: dy where x > 0
struct OpReluGrad : Binary {
    template <class T0, class X, class Y> static __device__ __forceinline__ Y f(const double*, const long long*, X x, Y dy) {
        return x > (X)0 ? dy : (Y)0;
    }
};
// PARAMETERIZED_RELU: x >= 0 ? x : slope * x (float64; -0 stays -0)
EW_BINARY(OpParameterizedRelu, (double)a >= 0.0 ? (double)a : __dmul_rn((double)b, (double)a))

struct OpIf : Ternary {
    template <class T0, class C, class X, class Y>
    static __device__ __forceinline__ X f(const double*, const long long*, C c, X a, Y b) {
        return c != (C)0 ? a : (X)b;
    }
};

// -- activations (also the fused ones: q is then EwParams::f) ----------------------------------

__device__ __forceinline__ float inf_of(float) { return __int_as_float(0x7f800000); }
__device__ __forceinline__ double inf_of(double) { return __longlong_as_double(0x7ff0000000000000LL); }

template <class X> __device__ __forceinline__ X softplus_core(X t) {
    // log1p(exp(t)) as the reference computes it in float64: exp overflows past 709.78;
    // below that max(t, 0) + log1p(exp(-|t|)), which float32 keeps finite; NaN stays NaN
    if (t > (X)709.782712893384) return inf_of(X());
    return (t > (X)0 ? t : (X)0) + m_log1p(m_exp(-m_fabs(t)));
}

EW_UNARY(ActRelu, x > (X)0 ? x : (X)0)
// zeros pass with their sign
EW_UNARY(ActLeakyRelu, (double)x >= 0.0 ? (double)x : __dmul_rn(q[0], (double)x))
EW_UNARY(ActElu, x > (X)0 ? x : (X)q[0] * m_expm1(x))
EW_UNARY(ActCelu, m_fmax((X)0, x) + m_fmin((X)0, (X)q[0] * ((X)expf((float)(x / (X)q[0])) - (X)1)))
EW_UNARY(ActScaledElu, (X)q[1] * (x > (X)0 ? x : (X)q[0] * m_expm1(x)))
EW_UNARY(ActSigmoid, (X)1 / ((X)1 + m_exp(-x)))
EW_UNARY(ActHardSigmoid, fmin(fmax(__dadd_rn(__dmul_rn(q[0], (double)x), q[1]), 0.0), 1.0))
struct ActHardSwish : Unary {
    template <class T0, class X> static __device__ __forceinline__ double f(const double* q, const long long*, X x) {
        double t = __dadd_rn(__dmul_rn(q[0], (double)x), q[1]);
        t = t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t);  // NaN stays NaN (np.clip)
        return __dmul_rn((double)x, t);
    }
};
EW_UNARY(ActSwish, x * ((X)1 / ((X)1 + m_exp(-((X)q[0] * x)))))
EW_UNARY(ActScaledTanh, (X)q[0] * m_tanh((X)q[1] * x))
EW_UNARY(ActSoftplus, softplus_core((X)q[0] * x) / (X)q[0])
EW_UNARY(ActParametricSoftplus, (X)q[0] * softplus_core((X)q[1] * x))
EW_UNARY(ActSoftsign, x / ((X)1 + m_fabs(x)))
EW_UNARY(ActLinear, __dadd_rn(__dmul_rn(q[0], (double)x), q[1]))
EW_UNARY(ActThresholdedRelu, (double)x <= q[0] ? 0.0 : (double)x)
struct ActShrink : Unary {
    template <class T0, class X> static __device__ __forceinline__ double f(const double* q, const long long*, X x) {
        const double v = x;  // q[0] Bias, q[1] Threshold
        return v > q[1] ? __dsub_rn(v, q[0]) : (v < -q[1] ? __dadd_rn(v, q[0]) : 0.0);  // x > Threshold first
    }
};
// GELU: x/2 (1 + erf(x / sqrt 2)). A FLOAT16 result (T: the stored type) takes x Phi(x) with
// Phi from Abramowitz-Stegun 7.1.26's erfc (|error| <= 1.5e-7, no cancellation in the
// negative tail) and fast float32 exp and division: a few float32 ulps, far inside one
// FLOAT16 ulp and the family's tolerance, at a third of erff's instructions (FLOAT16 GELU
// was bound by them: 86 % of copy on the H100, run 22). FLOAT32 and FLOAT64 keep erf.
__device__ __forceinline__ float gelu_half(float x) {
    const float z = fabsf(x) * 0.70710678118654752440f;
    const float t = __fdividef(1.0f, fmaf(0.3275911f, z, 1.0f));
    const float poly =
        t * fmaf(t, fmaf(t, fmaf(t, fmaf(t, 1.061405429f, -1.453152027f), 1.421413741f), -0.284496736f), 0.254829592f);
    const float tail = 0.5f * poly * __expf(-z * z);  // Phi(-|x|)
    return x * (x >= 0.0f ? 1.0f - tail : tail);
}
struct ActGelu : Unary {
    template <class T0, class X> static __device__ __forceinline__ auto f(const double*, const long long*, X x) {
        if constexpr (sizeof(T0) == 2 && IsF<X>::v) {  // half_t inputs (FLOAT16 arrive as float)
            return gelu_half((float)x);
        } else {
            return ((X)0.5 * x) * ((X)1 + m_erf(x * (X)0.70710678118654752440));
        }
    }
};
// A fused RELU multiplies by (x > 0): -0 for negative sums, NaN stays NaN
EW_UNARY(FusedRelu, x * (x > (X)0 ? (X)1 : (X)0))

// -- quantization (float32 steps, as the reference's formulas) ---------------------------------

// D3D's float-to-integer conversion of an integral float32 value: NaN -> 0, saturated to the
// output type's range [k[0], k[1]] (QUANTIZE_LINEAR's output is INT8 or UINT8).
__device__ __forceinline__ long long to_quantized(float v, const long long* k) {
    if (v != v) return 0;
    return v <= (float)k[0] ? k[0] : (v >= (float)k[1] ? k[1] : (long long)v);
}
// QUANTIZE_LINEAR: rint(x / scale) + zero_point, a float32 division (not a reciprocal
// multiply), halves to even, the zero point added as a float (an INT32 x rounds to float32 first)
struct OpQuantizeLinear : Ternary {
    template <class T0, class X, class S, class Z>
    static __device__ __forceinline__ long long f(const double*, const long long* k, X x, S s, Z z) {
        return to_quantized(__fadd_rn(rintf(__fdiv_rn((float)x, (float)s)), (float)z), k);
    }
};
struct OpQuantizeLinearNoZeroPoint : Binary {
    template <class T0, class X, class S>
    static __device__ __forceinline__ long long f(const double*, const long long* k, X x, S s) {
        return to_quantized(rintf(__fdiv_rn((float)x, (float)s)), k);
    }
};
// DEQUANTIZE_LINEAR: (float32(q) - float32(zero_point)) * scale: no integer subtraction
struct OpDequantizeLinear : Ternary {
    template <class T0, class X, class S, class Z>
    static __device__ __forceinline__ float f(const double*, const long long*, X x, S s, Z z) {
        return __fmul_rn(__fsub_rn((float)x, (float)z), (float)s);
    }
};
struct OpDequantizeLinearNoZeroPoint : Binary {
    template <class T0, class X, class S>
    static __device__ __forceinline__ float f(const double*, const long long*, X x, S s) {
        return __fmul_rn((float)x, (float)s);
    }
};

// QUANTIZED_LINEAR_ADD: A and B dequantized as DEQUANTIZE_LINEAR (float32 steps), added in
// float32, requantized as QUANTIZE_LINEAR. Its six one-element scale and zero-point tensors
// are gathered per call into a float32 table on the device (zero points convert exactly;
// an absent one is 0) whose address is k[3]: [AScale, AZero, BScale, BZero, OutScale,
// OutZero]. k[0], k[1]: the output's range; k[2] != 0: the value is clamped as a float, NaN
// becoming Min (descs/_elementwise_formulas.quantized_add_clamps_as_float), else converted
// as QUANTIZE_LINEAR converts (NaN -> 0).
struct OpQuantizedLinearAdd : Binary {
    template <class T0, class X, class Y>
    static __device__ __forceinline__ long long f(const double*, const long long* k, X a, Y b) {
        const float* s = reinterpret_cast<const float*>(k[3]);
        const float da = __fmul_rn(__fsub_rn((float)a, s[1]), s[0]);
        const float db = __fmul_rn(__fsub_rn((float)b, s[3]), s[2]);
        const float v = __fadd_rn(rintf(__fdiv_rn(__fadd_rn(da, db), s[4])), s[5]);
        return (v != v && k[2]) ? k[0] : to_quantized(v, k);
    }
};

// -- CAST (descs/data_movement.cast_array; data_movement's operator on this kernel family) -----

// Into a float type: the loaded value, rounded once by the store.
EW_UNARY(OpCastToFloat, x)
// Into an integer type, as the target's bit pattern; k = [Min, Max's bits, target signed,
// 32-bit register]. Floats truncate (NaN -> 0) and saturate, compared in double (Max of a
// 64-bit type rounds up to 2^63 / 2^64, which saturates, as the reference's float64 clip);
// integers pass through a 32-bit register (64-bit when either type is) read with the
// target's signedness, then saturate.
struct OpCastToInt : Unary {
    template <class T0, class X>
    static __device__ __forceinline__ unsigned long long f(const double*, const long long* k, X x) {
        const bool sgn = k[2] != 0;
        const unsigned long long hi = (unsigned long long)k[1];
        if constexpr (IsF<X>::v) {
            const double v = (double)x;
            if (v != v) return 0ULL;
            if (v >= (sgn ? (double)k[1] : (double)hi)) return hi;
            if (v <= (double)k[0]) return (unsigned long long)k[0];
            const double t = trunc(v);
            return sgn ? (unsigned long long)(long long)t : (unsigned long long)t;
        } else {
            unsigned long long bits = (unsigned long long)x;  // two's complement (a UINT64 its own)
            if (k[3]) bits &= 0xFFFFFFFFULL;
            if (sgn) {
                long long v = k[3] ? (long long)(int)(unsigned)bits : (long long)bits;
                v = v < k[0] ? k[0] : (v > k[1] ? k[1] : v);
                return (unsigned long long)v;
            }
            return bits > hi ? hi : bits;
        }
    }
};

struct NoFused {};
template <class F> struct IsNone { static constexpr bool v = false; };
template <> struct IsNone<NoFused> { static constexpr bool v = true; };

// -- the element computation ------------------------------------------------------------------

// DML_SCALE_BIAS: x * Scale + Bias in two float32 roundings; FLOAT16 rounds the result to
// FLOAT16, FLOAT64 widens the float32 result (the reference's _scale_bias).
template <class T> __device__ __forceinline__ float scale_bias(T raw, const EwParams& p) {
    return __fadd_rn(__fmul_rn((float)ldv(raw), (float)p.sb[0]), (float)p.sb[1]);
}
__device__ __forceinline__ float scale_bias(half_t raw, const EwParams& p) {
    const float y = __fadd_rn(__fmul_rn(h2f(raw), (float)p.sb[0]), (float)p.sb[1]);
    return h2f(f2h(y));
}
__device__ __forceinline__ double scale_bias(double raw, const EwParams& p) {
    return (double)__fadd_rn(__fmul_rn((float)raw, (float)p.sb[0]), (float)p.sb[1]);
}

template <class Op, bool SB, class T> __device__ __forceinline__ auto load(T raw, const EwParams& p) {
    if constexpr (Op::raw) return ldr(raw);
    else if constexpr (SB) return scale_bias(raw, p);  // every input (POW's ExponentTensor too)
    else return ldv(raw);
}

template <class Op, class Fz, class TO, class R> __device__ __forceinline__ TO finish(const EwParams& p, R r) {
    if constexpr (Op::raw_out) {
        return st_raw<TO>(r);
    } else if constexpr (IsNone<Fz>::v) {
        return St<TO>::f(r);
    } else {
        // the result rounded to the output type is what the activation reads
        const auto v = ldv(St<TO>::f(r));
        return St<TO>::f(Fz::template f<TO>(p.f, p.k, v));
    }
}

template <class Op, class Fz, bool SB, typename T0, typename T1, typename T2, typename TO>
__device__ __forceinline__ TO element(const EwParams& p, T0 a, T1 b, T2 c) {
    const auto x = load<Op, SB>(a, p);
    if constexpr (Op::arity == 1) {
        return finish<Op, Fz, TO>(p, Op::template f<T0>(p.q, p.k, x));
    } else if constexpr (Op::arity == 2) {
        return finish<Op, Fz, TO>(p, Op::template f<T0>(p.q, p.k, x, load<Op, SB>(b, p)));
    } else {
        return finish<Op, Fz, TO>(p, Op::template f<T0>(p.q, p.k, x, load<Op, SB>(b, p), load<Op, SB>(c, p)));
    }
}

template <typename T, int N> struct alignas(sizeof(T) * N) Vec {
    T v[N];
};

// VEC results from VEC elements of each operand: element by element, or two halves per
// instruction for the *H2 functors (Op::pair; the host checked every type is FLOAT16).
template <class Op, class Fz, bool SB, typename T0, typename T1, typename T2, typename TO, int VEC>
__device__ __forceinline__ Vec<TO, VEC> compute(
    const EwParams& p, const Vec<T0, VEC>& a, const Vec<T1, VEC>& b, const Vec<T2, VEC>& c) {
    Vec<TO, VEC> o;
    if constexpr (Op::pair != 0 && VEC % 2 == 0) {
#pragma unroll
        for (int j = 0; j < VEC; j += 2) {
            const u32 x = (u32)a.v[j].bits | ((u32)a.v[j + 1].bits << 16);
            const u32 y = (u32)b.v[j].bits | ((u32)b.v[j + 1].bits << 16);
            const u32 r = pair_op<Op::pair>(x, y);
            o.v[j].bits = (u16)(r & 0xffffu);
            o.v[j + 1].bits = (u16)(r >> 16);
        }
    } else {
#pragma unroll
        for (int j = 0; j < VEC; ++j) o.v[j] = element<Op, Fz, SB, T0, T1, T2, TO>(p, a.v[j], b.v[j], c.v[j]);
    }
    return o;
}

// A vector access of the contiguous kernel with cache hint H (bit 0: loads, bit 1: stores)
// marked streaming (ld.global.cs / st.global.cs: the line is evicted first, as data that
// is touched once); 4-, 8- and 16-byte vectors, others plain. Only the cache policy
// differs: the same bytes move.
// Bit 2 of H adds the L2 prefetch-size hint .L2::256B to 16-byte loads (the L2 may fetch
// the whole 256-byte span from memory at once); it changes no value either.
template <int H, typename V>
__device__ __forceinline__ V load_hinted(const V* p) {
    V r;
    if constexpr ((H & 4) != 0 && sizeof(V) == 16) {
        int4 t;
        if constexpr ((H & 1) != 0) {
            asm("ld.global.cs.L2::256B.v4.s32 {%0, %1, %2, %3}, [%4];"
                : "=r"(t.x), "=r"(t.y), "=r"(t.z), "=r"(t.w)
                : "l"(p));
        } else {
            asm("ld.global.L2::256B.v4.s32 {%0, %1, %2, %3}, [%4];"
                : "=r"(t.x), "=r"(t.y), "=r"(t.z), "=r"(t.w)
                : "l"(p));
        }
        memcpy(&r, &t, 16);
    } else if constexpr ((H & 1) != 0 && sizeof(V) == 16) {
        const int4 t = __ldcs(reinterpret_cast<const int4*>(p));
        memcpy(&r, &t, 16);
    } else if constexpr ((H & 1) != 0 && sizeof(V) == 8) {
        const int2 t = __ldcs(reinterpret_cast<const int2*>(p));
        memcpy(&r, &t, 8);
    } else if constexpr ((H & 1) != 0 && sizeof(V) == 4) {
        const int t = __ldcs(reinterpret_cast<const int*>(p));
        memcpy(&r, &t, 4);
    } else {
        r = *p;
    }
    return r;
}

template <int H, typename V>
__device__ __forceinline__ void store_hinted(V* p, const V& r) {
    if constexpr ((H & 2) != 0 && sizeof(V) == 16) {
        int4 t;
        memcpy(&t, &r, 16);
        __stcs(reinterpret_cast<int4*>(p), t);
    } else if constexpr ((H & 2) != 0 && sizeof(V) == 8) {
        int2 t;
        memcpy(&t, &r, 8);
        __stcs(reinterpret_cast<int2*>(p), t);
    } else if constexpr ((H & 2) != 0 && sizeof(V) == 4) {
        int t;
        memcpy(&t, &r, 4);
        __stcs(reinterpret_cast<int*>(p), t);
    } else {
        *p = r;
    }
}

// U vectors of VEC elements per thread, vectors first + u * B (u < U) of every operand,
// all loads issued before the first result is computed and stored; vectors from nv on
// are skipped. The body of the contiguous kernels.
template <class Op, class Fz, bool SB, typename T0, typename T1, typename T2, typename TO, int VEC, int B, int U,
          int H>
__device__ __forceinline__ void contig_chunk(const T0* a, const T1* b, const T2* c, TO* y, const EwParams& p,
                                             long long first, long long nv, bool va, bool vb, bool vc) {
    Vec<T0, VEC> ra[U];
    Vec<T1, VEC> rb[U];
    Vec<T2, VEC> rc[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
        const long long v = first + u * B;
        if (v < nv) {
            if (va) {
                ra[u] = load_hinted<H>(reinterpret_cast<const Vec<T0, VEC>*>(a) + v);
            } else {
#pragma unroll
                for (int j = 0; j < VEC; ++j) ra[u].v[j] = a[0];
            }
            if constexpr (Op::arity >= 2) {
                if (vb) {
                    rb[u] = load_hinted<H>(reinterpret_cast<const Vec<T1, VEC>*>(b) + v);
                } else {
#pragma unroll
                    for (int j = 0; j < VEC; ++j) rb[u].v[j] = b[0];
                }
            }
            if constexpr (Op::arity >= 3) {
                if (vc) {
                    rc[u] = load_hinted<H>(reinterpret_cast<const Vec<T2, VEC>*>(c) + v);
                } else {
#pragma unroll
                    for (int j = 0; j < VEC; ++j) rc[u].v[j] = c[0];
                }
            }
        }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
        const long long v = first + u * B;
        if (v < nv) {
            store_hinted<H>(reinterpret_cast<Vec<TO, VEC>*>(y) + v,
                           compute<Op, Fz, SB, T0, T1, T2, TO, VEC>(p, ra[u], rb[u], rc[u]));
        }
    }
}

// The tail of fewer than VEC elements after the nv vectors: threads 0 .. VEC - 2 of block 0.
template <class Op, class Fz, bool SB, typename T0, typename T1, typename T2, typename TO, int VEC, int B>
__device__ __forceinline__ void contig_tail(const T0* a, const T1* b, const T2* c, TO* y, const EwParams& p,
                                            long long nv, bool va, bool vb, bool vc) {
    if (VEC > 1) {
        const long long t = (long long)blockIdx.x * B + threadIdx.x;
        const long long i = nv * VEC + t;
        if (i < p.count) {
            const T0 x0 = a[va ? i : 0];
            const T1 x1 = Op::arity >= 2 ? b[vb ? i : 0] : T1();
            const T2 x2 = Op::arity >= 3 ? c[vc ? i : 0] : T2();
            y[i] = element<Op, Fz, SB, T0, T1, T2, TO>(p, x0, x1, x2);
        }
    }
}

// Every operand 1-D with element stride 1 (s*[0] != 0) or 0 (one broadcast value); VEC
// elements per vector access (the host checked the alignment of each stride-1 operand);
// B threads per block, U vectors per thread, one block per B * U vectors; H the cache
// hints of the vector accesses (load_hinted; 0 plain). R > 0: the host launches this
// instantiation with dynamic shared memory that nothing reads, so that at most R blocks
// fit a multiprocessor (an occupancy cap); R only keeps its function attributes (the
// shared-memory carveout) apart from the uncapped kernel's. The code is the same.
template <class Op, class Fz, bool SB, typename T0, typename T1, typename T2, typename TO, int VEC, int B, int U,
          int H = 0, int R = 0>
__global__ void __launch_bounds__(B) ew_contig(const T0* a, const T1* b, const T2* c, TO* y, const EwParams p) {
    const long long nv = p.count / VEC;
    const bool va = p.s0[0] != 0, vb = p.s1[0] != 0, vc = p.s2[0] != 0;
    const long long first = (long long)blockIdx.x * (B * U) + threadIdx.x;
    contig_chunk<Op, Fz, SB, T0, T1, T2, TO, VEC, B, U, H>(a, b, c, y, p, first, nv, va, vb, vc);
    contig_tail<Op, Fz, SB, T0, T1, T2, TO, VEC, B>(a, b, c, y, p, nv, va, vb, vc);
}

// One operand's VEC elements at offset o: a vector where its innermost stride is 1, the
// element repeated where it is 0 (VEC > 1: the host checked sizes, strides, alignment).
template <typename T, int VEC>
__device__ __forceinline__ Vec<T, VEC> load_vec(const T* base, long long o, long long inner) {
    Vec<T, VEC> r;
    if constexpr (VEC == 1) {
        r.v[0] = base[o];
    } else if (inner != 0) {
        r = *reinterpret_cast<const Vec<T, VEC>*>(base + o);
    } else {
#pragma unroll
        for (int j = 0; j < VEC; ++j) r.v[j] = base[o];
    }
    return r;
}

// VEC results at output offset o (VEC > 1: a whole vector; the host checked the alignment).
template <typename T, int VEC>
__device__ __forceinline__ void store_vec(T* base, long long o, const Vec<T, VEC>& r) {
    if constexpr (VEC == 1) {
        base[o] = r.v[0];
    } else {
        *reinterpret_cast<Vec<T, VEC>*>(base + o) = r;
    }
}

// Any layout: NDIM collapsed dimensions (outermost first), element strides per operand.
// VEC > 1: work items of VEC consecutive elements along the innermost dimension, whose
// size is a multiple of VEC and whose strides are 1 (output) or 0 / 1 (inputs).
template <class Op, class Fz, bool SB, typename T0, typename T1, typename T2, typename TO, int NDIM, typename I, int VEC>
__global__ void __launch_bounds__(EW_BLOCK)
    ew_strided(const T0* a, const T1* b, const T2* c, TO* y, const EwParams p) {
    const I n = (I)(p.count / VEC);
    const I step = (I)gridDim.x * (EW_BLOCK * EW_UNROLL);
    for (I first = (I)blockIdx.x * (EW_BLOCK * EW_UNROLL) + (I)threadIdx.x; first < n; first += step) {
        Vec<T0, VEC> ra[EW_UNROLL];
        Vec<T1, VEC> rb[EW_UNROLL];
        Vec<T2, VEC> rc[EW_UNROLL];
        I oy[EW_UNROLL];
#pragma unroll
        for (int u = 0; u < EW_UNROLL; ++u) {
            const I t = first + (I)(u * EW_BLOCK);
            if (t < n) {
                I r = t * (I)VEC, o0 = 0, o1 = 0, o2 = 0, oo = 0;
#pragma unroll
                for (int d = NDIM - 1; d >= 1; --d) {
                    const I s = (I)p.size[d];
                    const I q = r / s;
                    const I i = r - q * s;
                    r = q;
                    o0 += i * (I)p.s0[d];
                    o1 += i * (I)p.s1[d];
                    o2 += i * (I)p.s2[d];
                    oo += i * (I)p.ostride[d];
                }
                o0 += r * (I)p.s0[0];
                o1 += r * (I)p.s1[0];
                o2 += r * (I)p.s2[0];
                oo += r * (I)p.ostride[0];
                ra[u] = load_vec<T0, VEC>(a, o0, p.s0[NDIM - 1]);
                if constexpr (Op::arity >= 2) rb[u] = load_vec<T1, VEC>(b, o1, p.s1[NDIM - 1]);
                if constexpr (Op::arity >= 3) rc[u] = load_vec<T2, VEC>(c, o2, p.s2[NDIM - 1]);
                oy[u] = oo;
            }
        }
#pragma unroll
        for (int u = 0; u < EW_UNROLL; ++u) {
            const I t = first + (I)(u * EW_BLOCK);
            if (t < n) store_vec<TO, VEC>(y, oy[u], compute<Op, Fz, SB, T0, T1, T2, TO, VEC>(p, ra[u], rb[u], rc[u]));
        }
    }
}

// Two collapsed dimensions (rows of C = size[1] / VEC vectors; VEC as ew_strided's), walked
// as ew_strided walks them (consecutive threads, consecutive vectors: the memory order),
// U vectors a thread B threads apart, grid-stride. A vector's row and column come from
// one unsigned division by C, its offsets from two multiply-adds per operand.
template <class Op, class Fz, bool SB, typename T0, typename T1, typename T2, typename TO, typename I, int VEC, int U>
__global__ void __launch_bounds__(EW_BLOCK)
    ew_rows2d(const T0* a, const T1* b, const T2* c, TO* y, const EwParams p) {
    typedef typename UnsignedOf<I>::type UI;
    const UI cols = (UI)(p.size[1] / VEC);
    const UI n = (UI)(p.count / VEC);
    const I ra0 = (I)p.s0[0], rb0 = (I)p.s1[0], rc0 = (I)p.s2[0], ro = (I)p.ostride[0];
    const I ka = (I)(VEC * p.s0[1]), kb = (I)(VEC * p.s1[1]), kc = (I)(VEC * p.s2[1]), ko = (I)(VEC * p.ostride[1]);
    const UI step = (UI)gridDim.x * (EW_BLOCK * U);
    for (UI first = (UI)blockIdx.x * (EW_BLOCK * U) + threadIdx.x; first < n; first += step) {
        Vec<T0, VEC> va[U];
        Vec<T1, VEC> vb[U];
        Vec<T2, VEC> vc[U];
        I oy[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const UI t = first + (UI)(u * EW_BLOCK);
            if (t < n) {
                const UI row = t / cols;
                const I r = (I)row, k = (I)(t - row * cols);
                va[u] = load_vec<T0, VEC>(a, r * ra0 + k * ka, p.s0[1]);
                if constexpr (Op::arity >= 2) vb[u] = load_vec<T1, VEC>(b, r * rb0 + k * kb, p.s1[1]);
                if constexpr (Op::arity >= 3) vc[u] = load_vec<T2, VEC>(c, r * rc0 + k * kc, p.s2[1]);
                oy[u] = r * ro + k * ko;
            }
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
            if (first + (UI)(u * EW_BLOCK) < n) {
                store_vec<TO, VEC>(y, oy[u], compute<Op, Fz, SB, T0, T1, T2, TO, VEC>(p, va[u], vb[u], vc[u]));
            }
        }
    }
}

// -- SOFTMAX / LOG_SOFTMAX / HARDMAX over rows ------------------------------------------------

struct RowParams {
    long long rows;
    long long len;
    long long in_row;   // element offset between rows of the input
    long long out_row;  // ... of the output
};


struct RMax {  // NaN-ignoring maximum (np.fmax): NaN is its identity
    template <class A> __device__ __forceinline__ A operator()(A a, A b) const { return m_fmax(a, b); }
};
struct RSum {
    template <class A> __device__ __forceinline__ A operator()(A a, A b) const { return a + b; }
};

// Every thread of the block gets op over all threads' v (ident: op's identity); sh holds a
// value per warp of the block (at most 32).
template <class A, class R> __device__ __forceinline__ A block_reduce(A v, R op, A ident, A* sh) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
    const int w = threadIdx.x >> 5, l = threadIdx.x & 31;
    __syncthreads();  // sh may still be read by an earlier reduction
    if (l == 0) sh[w] = v;
    __syncthreads();
    v = l < (int)(blockDim.x >> 5) ? sh[l] : ident;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// HARDMAX's candidate: the first maximum among the non-NaN elements (index len = none).
template <class A> struct Best {
    A v;
    long long i;
};
template <class A> __device__ __forceinline__ Best<A> better(Best<A> x, Best<A> y, long long none) {
    if (y.i == none) return x;
    if (x.i == none) return y;
    if (y.v > x.v) return y;
    if (x.v > y.v) return x;
    return y.i < x.i ? y : x;  // equal values (-0 and +0 too): the first
}
template <class A> __device__ __forceinline__ long long block_argmax(Best<A> b, long long none, A* shv, long long* shi) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        Best<A> other;
        other.v = __shfl_xor_sync(0xffffffffu, b.v, o);
        other.i = __shfl_xor_sync(0xffffffffu, b.i, o);
        b = better(b, other, none);
    }
    const int w = threadIdx.x >> 5, l = threadIdx.x & 31;
    __syncthreads();
    if (l == 0) {
        shv[w] = b.v;
        shi[w] = b.i;
    }
    __syncthreads();
    if (l < (int)(blockDim.x >> 5)) {
        b.v = shv[l];
        b.i = shi[l];
    } else {
        b.i = none;
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        Best<A> other;
        other.v = __shfl_xor_sync(0xffffffffu, b.v, o);
        other.i = __shfl_xor_sync(0xffffffffu, b.i, o);
        b = better(b, other, none);
    }
    return b.i;
}

// The type of a row's sum: float64 for rows read again (PER == 0, longer than 16 * ROW_BLOCK),
// whose threads each add len / ROW_BLOCK exps (float32 running sums of like values drift: a
// row of 4M elements, all but one exp(-0.35), was 1.7e-3 off on the cpu backend); A otherwise.
template <int PER, class A> struct RowSum { typedef A T; };
template <class A> struct RowSum<0, A> { typedef double T; };

// KIND 0: SOFTMAX exp(x - m) / sum; 1: LOG_SOFTMAX (x - m) - log(max(sum, 1e-20)), m the
// NaN-ignoring maximum; 2: HARDMAX, 1 at the first maximum (a NaN first element wins).
// PER > 0: the row (len <= PER * B) stays in registers; 0: read again per pass. B: threads
// a block (ROW_BLOCK, or 1024 for rows of up to 16K elements held in registers).
template <typename T, int KIND, int PER, int B = ROW_BLOCK>
__global__ void __launch_bounds__(B) ew_rows(const T* x, T* y, const RowParams p) {
    typedef decltype(ldv(T())) A;
    __shared__ A sh[B / 32];
    __shared__ long long shi[B / 32];
    typedef typename RowSum<PER, A>::T S;
    __shared__ S shs[B / 32];
    const long long len = p.len;
    for (long long row = blockIdx.x; row < p.rows; row += gridDim.x) {
        const T* xr = x + row * p.in_row;
        T* yr = y + row * p.out_row;
        constexpr int R = PER > 0 ? PER : 1;
        A v[R];
        if constexpr (PER > 0) {
#pragma unroll
            for (int j = 0; j < PER; ++j) {
                const long long i = threadIdx.x + (long long)j * B;
                v[j] = i < len ? ldv(xr[i]) : nan_of(A());
            }
        }
        if constexpr (KIND == 2) {
            Best<A> b;
            b.v = A(0);
            b.i = len;
            if constexpr (PER > 0) {
#pragma unroll
                for (int j = 0; j < PER; ++j) {
                    const long long i = threadIdx.x + (long long)j * B;
                    const A e = v[j];
                    if (i < len && e == e && (b.i == len || e > b.v)) {
                        b.v = e;
                        b.i = i;
                    }
                }
            } else {
                for (long long i = threadIdx.x; i < len; i += B) {
                    const A e = ldv(xr[i]);
                    if (e == e && (b.i == len || e > b.v)) {
                        b.v = e;
                        b.i = i;
                    }
                }
            }
            long long best = block_argmax(b, len, sh, shi);
            const A x0 = ldv(xr[0]);
            if (best == len || x0 != x0) best = 0;
            for (long long i = threadIdx.x; i < len; i += B) yr[i] = St<T>::f(i == best ? A(1) : A(0));
        } else {
            A m = nan_of(A());
            if constexpr (PER > 0) {
#pragma unroll
                for (int j = 0; j < PER; ++j) m = m_fmax(m, v[j]);
            } else {
                for (long long i = threadIdx.x; i < len; i += B) m = m_fmax(m, ldv(xr[i]));
            }
            m = block_reduce(m, RMax(), nan_of(A()), sh);
            S total = S(0);
            if constexpr (PER > 0) {
#pragma unroll
                for (int j = 0; j < PER; ++j) {
                    const long long i = threadIdx.x + (long long)j * B;
                    if (i < len) {
                        v[j] = v[j] - m;  // the shifted value
                        total += m_exp(v[j]);
                    }
                }
            } else {
                for (long long i = threadIdx.x; i < len; i += B) total += (S)m_exp(ldv(xr[i]) - m);
            }
            total = block_reduce(total, RSum(), S(0), shs);
            const A s = (A)total;
            A t;
            if constexpr (KIND == 0) {
                t = (A)(S(1) / total);
            } else {
                const A floor_ = (A)1e-20f;  // LOG_SOFTMAX_MIN_SUM (float32)
                t = m_log((s != s || s < floor_) ? floor_ : s);
            }
            if constexpr (PER > 0) {
#pragma unroll
                for (int j = 0; j < PER; ++j) {
                    const long long i = threadIdx.x + (long long)j * B;
                    if (i < len) yr[i] = St<T>::f(KIND == 0 ? m_exp(v[j]) * t : v[j] - t);
                }
            } else {
                for (long long i = threadIdx.x; i < len; i += B) {
                    const A d = ldv(xr[i]) - m;
                    yr[i] = St<T>::f(KIND == 0 ? m_exp(d) * t : d - t);
                }
            }
        }
    }
}

// The same for rows of at most 32 * PER elements: one warp per row, the row in registers,
// warp shuffles only (4 rows per block of 128 threads).
template <typename T, int KIND, int PER>
__global__ void __launch_bounds__(128) ew_rows_warp(const T* x, T* y, const RowParams p) {
    typedef decltype(ldv(T())) A;
    const int lane = threadIdx.x & 31;
    const long long len = p.len;
    for (long long row = (long long)blockIdx.x * 4 + (threadIdx.x >> 5); row < p.rows; row += (long long)gridDim.x * 4) {
        const T* xr = x + row * p.in_row;
        T* yr = y + row * p.out_row;
        A v[PER];
#pragma unroll
        for (int j = 0; j < PER; ++j) {
            const long long i = lane + 32LL * j;
            v[j] = i < len ? ldv(xr[i]) : nan_of(A());
        }
        if constexpr (KIND == 2) {
            Best<A> b;
            b.v = A(0);
            b.i = len;
#pragma unroll
            for (int j = 0; j < PER; ++j) {
                const long long i = lane + 32LL * j;
                const A e = v[j];
                if (i < len && e == e && (b.i == len || e > b.v)) {
                    b.v = e;
                    b.i = i;
                }
            }
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) {
                Best<A> other;
                other.v = __shfl_xor_sync(0xffffffffu, b.v, o);
                other.i = __shfl_xor_sync(0xffffffffu, b.i, o);
                b = better(b, other, len);
            }
            const A x0 = __shfl_sync(0xffffffffu, v[0], 0);
            const long long best = (b.i == len || x0 != x0) ? 0 : b.i;
#pragma unroll
            for (int j = 0; j < PER; ++j) {
                const long long i = lane + 32LL * j;
                if (i < len) yr[i] = St<T>::f(i == best ? A(1) : A(0));
            }
        } else {
            A m = nan_of(A());
#pragma unroll
            for (int j = 0; j < PER; ++j) m = m_fmax(m, v[j]);
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) m = m_fmax(m, __shfl_xor_sync(0xffffffffu, m, o));
            A s = A(0);
#pragma unroll
            for (int j = 0; j < PER; ++j) {
                if (lane + 32LL * j < len) {
                    v[j] = KIND == 0 ? m_exp(v[j] - m) : v[j] - m;
                    s += KIND == 0 ? v[j] : m_exp(v[j]);
                }
            }
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
            A t;
            if constexpr (KIND == 0) {
                t = A(1) / s;
            } else {
                const A floor_ = (A)1e-20f;  // LOG_SOFTMAX_MIN_SUM (float32)
                t = m_log((s != s || s < floor_) ? floor_ : s);
            }
#pragma unroll
            for (int j = 0; j < PER; ++j) {
                const long long i = lane + 32LL * j;
                if (i < len) yr[i] = St<T>::f(KIND == 0 ? v[j] * t : v[j] - t);
            }
        }
    }
}

// -- SOFTMAX / LOG_SOFTMAX over long rows, in chunks of ROW_CHUNK elements ---------------------
// One block a row left most of the GPU idle where the rows are few (64 rows of 1M: 7 % of the
// copy rate) and read each row three times. Here a row is cut into chunks, in three kernels:
// ew_row_chunk_stats (a block a chunk) keeps its chunk in registers and writes the chunk's
// NaN-ignoring maximum m_c and s_c = sum exp(x - m_c) (float64); ew_row_chunk_combine (a block
// a row) writes the row's M = max m_c and S = sum s_c exp(m_c - M) (float64, in a fixed order:
// the same bits on every run); ew_row_chunk_apply (a block a chunk) reads its chunk again and
// writes exp(x - M) * (1 / S) or (x - M) - log(max(S, 1e-20)). Memory: the input read twice.
// A chunk whose maximum is -inf (all -inf, perhaps NaN) is shifted by 0 instead, so s_c is 0
// (or NaN); then s_c exp(m_c - M) is 0 for a finite M and NaN for M = -inf, and every NaN the
// single-pass sum would meet (a NaN element, inf - inf, a row of -inf) is met here as well.

#define ROW_CHUNK_PER 16
#define ROW_CHUNK 4096
static_assert(ROW_CHUNK == ROW_CHUNK_PER * ROW_BLOCK, "a chunk is a block's registers");

struct ChunkParams {
    i64 rows;
    i64 len;
    i64 in_row;
    i64 out_row;
    i64 chunks;  // chunks a row: ceil(len / ROW_CHUNK)
};

template <typename T>
__global__ void __launch_bounds__(ROW_BLOCK) ew_row_chunk_stats(const T* x, double2* stats, const ChunkParams p) {
    typedef decltype(ldv(T())) A;
    __shared__ A sh[ROW_BLOCK / 32];
    __shared__ double shs[ROW_BLOCK / 32];
    for (long long b = blockIdx.x; b < p.rows * p.chunks; b += gridDim.x) {
        const long long row = b / p.chunks, start = (b - row * p.chunks) * ROW_CHUNK;
        const long long n = p.len - start < ROW_CHUNK ? p.len - start : ROW_CHUNK;
        const T* xc = x + row * p.in_row + start;
        A v[ROW_CHUNK_PER];
        A m = nan_of(A());
#pragma unroll
        for (int j = 0; j < ROW_CHUNK_PER; ++j) {
            const int i = threadIdx.x + j * ROW_BLOCK;
            v[j] = i < n ? ldv(xc[i]) : nan_of(A());
            m = m_fmax(m, v[j]);
        }
        m = block_reduce(m, RMax(), nan_of(A()), sh);
        const A shift = (isinf(m) && m < A(0)) ? A(0) : m;
        double s = 0.0;
#pragma unroll
        for (int j = 0; j < ROW_CHUNK_PER; ++j)
            if (threadIdx.x + j * ROW_BLOCK < n) s += (double)m_exp(v[j] - shift);
        s = block_reduce(s, RSum(), 0.0, shs);
        if (threadIdx.x == 0) stats[b] = make_double2((double)m, s);
    }
}

template <typename T>
__global__ void __launch_bounds__(ROW_BLOCK) ew_row_chunk_combine(const double2* stats, double2* totals, const ChunkParams p) {
    typedef decltype(ldv(T())) A;
    __shared__ A sh[ROW_BLOCK / 32];
    __shared__ double shs[ROW_BLOCK / 32];
    for (long long row = blockIdx.x; row < p.rows; row += gridDim.x) {
        const double2* own = stats + row * p.chunks;
        A m = nan_of(A());
        for (long long c = threadIdx.x; c < p.chunks; c += ROW_BLOCK) m = m_fmax(m, (A)own[c].x);
        m = block_reduce(m, RMax(), nan_of(A()), sh);
        double s = 0.0;
        for (long long c = threadIdx.x; c < p.chunks; c += ROW_BLOCK) s += own[c].y * exp(own[c].x - (double)m);
        s = block_reduce(s, RSum(), 0.0, shs);
        if (threadIdx.x == 0) totals[row] = make_double2((double)m, s);
    }
}

template <typename T, int KIND>
__global__ void __launch_bounds__(ROW_BLOCK) ew_row_chunk_apply(const T* x, T* y, const double2* totals, const ChunkParams p) {
    typedef decltype(ldv(T())) A;
    for (long long b = blockIdx.x; b < p.rows * p.chunks; b += gridDim.x) {
        const long long row = b / p.chunks, start = (b - row * p.chunks) * ROW_CHUNK;
        const long long n = p.len - start < ROW_CHUNK ? p.len - start : ROW_CHUNK;
        const double2 total = totals[row];
        const A m = (A)total.x;
        A t;
        if constexpr (KIND == 0) {
            t = (A)(1.0 / total.y);
        } else {
            const A s = (A)total.y, floor_ = (A)1e-20f;  // LOG_SOFTMAX_MIN_SUM (float32)
            t = m_log((s != s || s < floor_) ? floor_ : s);
        }
        const T* xc = x + row * p.in_row + start;
        T* yc = y + row * p.out_row + start;
#pragma unroll
        for (int j = 0; j < ROW_CHUNK_PER; ++j) {
            const int i = threadIdx.x + j * ROW_BLOCK;
            if (i < n) {
                const A d = ldv(xc[i]) - m;
                yc[i] = St<T>::f(KIND == 0 ? m_exp(d) * t : d - t);
            }
        }
    }
}
