// ROI kernels: ROI_ALIGN (and ROI_ALIGN1, the same with RoiParams' offsets and
// AlignRegionsToCorners), ROI_ALIGN_GRAD (roi_align_grad) and ROI_POOLING (roi_pooling),
// the last two at the end of the file. ROI_ALIGN in four forms:
//  * roi_align_avg (AVERAGE, inputs whose channel stride is not 1): the separable
//    tap-list form, described at its definition below (off: its sums are not DirectML's);
//    With channel stride 1 (NHWC-strided) its threads take channels first, so each tap
//    load of a warp reads consecutive channels;
//  * roi_align_fast (a fixed sample count of 1 to 4, OutputWidth x samples <= 32, not
//    channels-last): a lane per sample column, the samples of an output passed round by
//    shuffles in DirectML's order, every sample evaluated; described at its definition;
//  * roi_align (any other case not channels-last): threads over (channel, bin) of one
//    ROI and a group of channels, every sample evaluated;
//  * roi_align_cl (channel stride 1): channels across the lanes of a warp,
//    every sample evaluated, so each tap load of a warp reads 32 consecutive channels.
// The ROI is the fastest-varying block index: all ROIs of one channel group run together,
// so the input planes they share stay in L2 instead of being fetched once per ROI.
//
// Sample coordinates follow dmlops.reference.roi exactly: float64 coordinates
// formed one correctly rounded operation at a time (no FMA contraction: __dmul_rn /
// __dadd_rn), ruling 5's sample counts, ruling 6's out-of-bounds test and clamping,
// ruling 4's nearest rule floor(x + 0.5). The per-sample kernels keep them in shared
// tables (or compute them per sample when an axis has more samples than the tables
// hold). Interpolation and the reduction run in Num<T>::Acc (float32 for FLOAT16),
// rounded once.
#include "common.cuh"

#define ROI_TABLE 1024

struct RoiParams {
    i64 num_rois, batch_count, channels, in_h, in_w, out_h, out_w;
    i64 channels_per_block;
    i64 x_stride[4];    // InputTensor N, C, H, W
    i64 y_stride[4];    // OutputTensor
    i64 roi_stride[2];  // ROITensor: ROI, coordinate
    i64 bi_stride;      // BatchIndicesTensor
    i64 min_samples, max_samples;
    double scale_x, scale_y, in_offset, out_offset, oob;
    i64 item_w;    // work items per channel of roi_align_avg (NCHW): OutputWidth, or more (idle lanes)
    i64 div_w[2];  // fast_div magic numbers of item_w
    i64 corners;   // ROI_ALIGN1's AlignRegionsToCorners (ROI_ALIGN: 0)
    i64 has_x;     // ROI_ALIGN_GRAD: InputTensor supplied
    i64 dx_stride[4];  // ROI_ALIGN_GRAD: OutputGradientTensor (0 without it)
};

// ROI_ALIGN is ROI_ALIGN1 with InputPixelOffset 0.5, OutputPixelOffset -0.5 and no
// AlignRegionsToCorners. With AlignRegionsToCorners (dmlops.reference.roi._axes): step =
// size / (NX - 1), a lone sample (NX = 1) at the region's centre start + size / 2, and a
// sample in bounds only inside [0, length - 1] (ends included). The lone sample is the
// general formula with step 0 and start at the centre (the coordinate is the same double),
// so the per-sample code keeps ROI_ALIGN's form, and in_bounds_run bisects with constant
// bounds per case (run 37: a branch per coordinate, a larger setup and bounds held in
// registers made ROI_ALIGN's AVERAGE kernel spill more and run 37 % slower; run 40: 3 %).
struct AxisSetup {
    double start, step;
    i64 samples;
    bool corners;
};

__device__ __forceinline__ AxisSetup axis_setup(double lo, double hi, double scale, i64 n_out, i64 mn, i64 mx,
                                                bool corners) {
    AxisSetup a;
    const double start = __dmul_rn(lo, scale);
    const double end = __dmul_rn(hi, scale);
    const double size = __dadd_rn(end, -start);
    const double ratio = fabs(size) / (double)n_out;
    double s;
    if (isfinite(ratio)) {
        s = fmin(fmax(ceil(ratio), (double)mn), (double)mx);
    } else {
        s = (double)mn;
    }
    a.samples = (i64)s;
    const i64 count = n_out * a.samples;
    a.corners = corners;
    if (corners && count == 1) {  // the region's centre: ((0 - OutputPixelOffset) * 0 + centre) is centre
        a.start = __dadd_rn(start, size / 2.0);
        a.step = 0.0;
    } else {
        a.start = start;
        a.step = size / (double)(corners ? count - 1 : count);
    }
    return a;
}

struct Tap {
    i32 first, second;
    double weight;  // of `second` (`first` has 1 - weight); the per-sample kernels use it as float
    bool in_bounds;
};

// coord = ((j - OutputPixelOffset) * step + start) - InputPixelOffset, rounded per op
// (AlignRegionsToCorners with one sample: centre - InputPixelOffset, as step is 0).
__device__ __forceinline__ double sample_coord(const AxisSetup& a, i64 j, double out_offset, double in_offset) {
    return __dadd_rn(__dadd_rn(__dmul_rn(__dadd_rn((double)j, -out_offset), a.step), a.start), -in_offset);
}

// Strictly inside (-1, length) (erratum E28); with AlignRegionsToCorners inside [0, length - 1].
__device__ __forceinline__ bool coord_in_bounds(const AxisSetup& a, double coord, i64 length) {
    return a.corners ? coord >= 0.0 && coord <= (double)(length - 1) : coord > -1.0 && coord < (double)length;
}

template <bool LINEAR>
__device__ __forceinline__ Tap make_tap(const AxisSetup& a, i64 j, double out_offset, double in_offset, i64 length) {
    const double coord = sample_coord(a, j, out_offset, in_offset);
    Tap t;
    t.in_bounds = coord_in_bounds(a, coord, length);
    double c = t.in_bounds ? coord : 0.0;
    c = fmin(fmax(c, 0.0), (double)(length - 1));
    if (LINEAR) {
        const double f = floor(c);
        t.first = (i32)f;
        // DirectML clamps the tap indices floor(coord) and floor(coord) + 1: in (-1, 0) both are
        // pixel 0 (erratum E38), at and past length - 1 both the last pixel.
        t.second = coord < 0.0 ? t.first : (t.first + 1 < length ? t.first + 1 : (i32)(length - 1));
        t.weight = c - f;
    } else {
        t.first = (i32)floor(__dadd_rn(c, 0.5));
        t.second = t.first;
        t.weight = 0.0;
    }
    return t;
}

// MAX's fold, DirectML's (erratum E29): a running max() from the type's lowest finite value
// (max_start), where only a strictly greater value replaces: NaN never does (D3D's max returns
// the non-NaN operand) and -inf never beats the start. Independent of the order of the samples.
template <typename Acc> __device__ __forceinline__ Acc max_step(Acc acc, Acc v) { return v > acc ? v : acc; }
__device__ __forceinline__ float max_start(const float*) { return -3.40282346638528859812e+38f; }  // -FLT_MAX
__device__ __forceinline__ float max_start(const half_t*) { return -65504.0f; }  // FLOAT16's lowest finite
__device__ __forceinline__ double max_start(const double*) { return -1.79769313486231570815e+308; }  // -DBL_MAX

// DirectML's interpolation (erratum E38): a + (b - a) * t, each operation rounded (no FMA
// contraction), so an infinite tap gives NaN even at weight 0 and b - a may overflow.
__device__ __forceinline__ float lerp(float a, float b, float t) { return __fadd_rn(a, __fmul_rn(__fadd_rn(b, -a), t)); }
__device__ __forceinline__ double lerp(double a, double b, double t) {
    return __dadd_rn(a, __dmul_rn(__dadd_rn(b, -a), t));
}
__device__ __forceinline__ float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add_rn(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ float div_rn(float a, float b) { return __fdiv_rn(a, b); }
__device__ __forceinline__ double div_rn(double a, double b) { return __ddiv_rn(a, b); }

// AVERAGE's running sum (DirectML's, erratum E38): `count` samples that read
// OutOfBoundsInputValue added one at a time. The result is that of `count` float32 additions
// in order, but computed in O(binades) steps: within one binade of the sum (one ulp) the
// increment fl(s + v) - s is the same for every s once two consecutive steps agree (the
// rounding depends on s only through the parity of s / ulp, which two equal steps cover), so
// the run of steps whose exact sums stay inside the binade (one ulp of margin) is one
// multiply-add. It stops early once the sum no longer changes (or is NaN). A region of 10^6
// out-of-bounds pixels (10^12 samples) then costs a few hundred steps per output.
__device__ __forceinline__ int binade(float x) {
    int e;
    frexpf(x, &e);
    return e < -126 ? -126 : e;  // the subnormals form one binade (one ulp, 2^-149)
}

template <typename Acc> __device__ __forceinline__ Acc add_repeated(Acc acc, Acc v, i64 count) {
    for (i64 i = 0; i < count; ++i) {  // FLOAT64 (not a ROI_ALIGN type): the plain loop
        const Acc next = add_rn(acc, v);
        if (next == acc || next != next) return next;
        acc = next;
    }
    return acc;
}

template <> __device__ __forceinline__ float add_repeated<float>(float acc, float v, i64 count) {
    i64 k = count;
    while (k > 0) {
        const float next = __fadd_rn(acc, v);
        if (next == acc || next != next) return next;
        bool jumped = false;
        if (k >= 3 && acc != 0.0f && next != 0.0f && (acc > 0.0f) == (next > 0.0f)) {
            const float next2 = __fadd_rn(next, v);
            const double d = __dadd_rn((double)next, -(double)acc);  // exact
            const int e = binade(acc);
            if (__dadd_rn((double)next2, -(double)next) == d && next2 != 0.0f && (next2 > 0.0f) == (acc > 0.0f) &&
                binade(next) == e && binade(next2) == e) {
                const double a = fabs((double)acc), step = fabs(d), w = fabs((double)v);
                const double ulp = ldexp(1.0, (e > -125 ? e : -125) - 24);
                const double hi = ldexp(1.0, e), lo = e > -126 ? ldexp(1.0, e - 1) : 0.0;
                i64 j;
                if ((d > 0.0) == (acc > 0.0f)) {  // |sum| grows: every exact sum below hi - ulp
                    j = (i64)floor((hi - ulp - a - w) / step) + 1;
                    while (j > 0 && __dadd_rn(__dadd_rn(__dadd_rn(a, __dmul_rn((double)(j - 1), step)), w), ulp) >= hi) --j;
                } else {  // |sum| shrinks: every exact sum at least lo + ulp, never through 0
                    j = (i64)floor((a - w - ulp - lo) / step) + 1;
                    while (j > 0 && (__dadd_rn(__dadd_rn(__dadd_rn(a, -__dmul_rn((double)(j - 1), step)), -w), -ulp) < lo ||
                                     __dadd_rn(a, -__dmul_rn((double)j, step)) <= 0.0))
                        --j;
                }
                if (j > k) j = k;
                if (j >= 2) {
                    acc = (float)__dadd_rn((double)acc, __dmul_rn((double)j, d));  // exact: in the binade
                    k -= j;
                    jumped = true;
                }
            }
        }
        if (!jumped) {
            acc = next;
            --k;
        }
    }
    return acc;
}

// The samples of one ROI along one axis: a shared-memory table built once per block
// (when the axis has at most `capacity` samples) or make_tap per sample otherwise.
struct TapTable {
    i32* first;
    i32* second;
    float* weight;
    bool* in_bounds;
    bool tabled;
};

template <bool LINEAR>
__device__ __forceinline__ void fill_table(TapTable& t, const AxisSetup& a, i64 n_out, i64 capacity, double out_offset,
                                           double in_offset, i64 length) {
    const i64 n = n_out * a.samples;
    t.tabled = n <= capacity;
    if (!t.tabled) return;
    for (i64 j = threadIdx.x; j < n; j += blockDim.x) {
        const Tap s = make_tap<LINEAR>(a, j, out_offset, in_offset, length);
        t.first[j] = s.first;
        t.second[j] = s.second;
        t.weight[j] = (float)s.weight;
        t.in_bounds[j] = s.in_bounds;
    }
}

template <bool LINEAR>
__device__ __forceinline__ Tap fetch(const TapTable& t, const AxisSetup& a, i64 j, double out_offset, double in_offset,
                                     i64 length) {
    Tap s;
    if (!t.tabled) {
        s = make_tap<LINEAR>(a, j, out_offset, in_offset, length);
        s.weight = (float)s.weight;  // as the tables hold it
        return s;
    }
    s.first = t.first[j];
    s.second = t.second[j];
    s.weight = t.weight[j];
    s.in_bounds = t.in_bounds[j];
    return s;
}

// in_bounds_run's bisection between the bounds `low` and `high` (CLOSED: ends in bounds).
template <bool CLOSED>
__device__ __forceinline__ void in_bounds_bisect(const AxisSetup& a, i64 j0, i64 j1, double out_offset,
                                                 double in_offset, double low, double high, i64& lo, i64& hi) {
    const bool rising = a.step >= 0.0;
    // First j whose coordinate is no longer before the run (below `low` rising, above `high` falling).
    i64 l = j0, h = j1;
    while (l < h) {
        const i64 m = l + (h - l) / 2;
        const double c = sample_coord(a, m, out_offset, in_offset);
        const bool before = rising ? (CLOSED ? c < low : c <= low) : (CLOSED ? c > high : c >= high);
        if (before) l = m + 1; else h = m;
    }
    lo = l;
    // First j from lo whose coordinate is past the run.
    h = j1;
    while (l < h) {
        const i64 m = l + (h - l) / 2;
        const double c = sample_coord(a, m, out_offset, in_offset);
        const bool past = rising ? (CLOSED ? c > high : c >= high) : (CLOSED ? c < low : c <= low);
        if (past) h = m; else l = m + 1;
    }
    hi = l;
}

// The in-bounds samples [lo, hi) of the samples [j0, j1) of one axis. A sample's coordinate
// is monotonic in j (every rounded operation of sample_coord is), so the in-bounds test
// -1 < coord < length holds on one run of j, found by bisection: O(log) coordinates
// instead of one per sample. Non-finite start or step put every sample out of bounds.
__device__ __forceinline__ void in_bounds_run(const AxisSetup& a, i64 j0, i64 j1, double out_offset, double in_offset,
                                              i64 length, i64& lo, i64& hi) {
    lo = hi = j0;
    if (j0 >= j1) return;
    if (!isfinite(a.start) || !isfinite(a.step)) return;
    if (a.corners) {  // AlignRegionsToCorners: [0, length - 1], ends included
        in_bounds_bisect<true>(a, j0, j1, out_offset, in_offset, 0.0, (double)(length - 1), lo, hi);
    } else {  // (-1, length), ends excluded (erratum E28)
        in_bounds_bisect<false>(a, j0, j1, out_offset, in_offset, -1.0, (double)length, lo, hi);
    }
}

// One output element evaluated sample by sample, in DirectML's arithmetic (erratum E38, as
// the reference): a LINEAR sample lerps along y first (both tap columns), then along x; MAX
// is DirectML's (max_step: NaN never wins); AVERAGE adds every sample, in order (sample
// rows, then the samples of a row; OutOfBoundsInputValue for those out of bounds), into a
// running sum in Acc from +0, then divides by the sample count.
//
// Along an axis without a table (more samples than the tables hold: adaptive sampling
// of a region far larger than the input, or a huge sample count) only the in-bounds run
// of samples is visited, so the work follows the samples that read the input, not the
// region's size (a region of 10^6 pixels would otherwise loop ~10^12 times per output).
// The skipped samples are out of bounds: AVERAGE adds them where they fall in the order
// (add_repeated), MAX folds OutOfBoundsInputValue in once (the fold ignores order).
template <typename T, bool MAX, bool LINEAR>
__device__ typename Num<T>::Acc per_sample_output(const T* plane, const RoiParams& p, const AxisSetup& ax,
                                                  const AxisSetup& ay, const TapTable& tx, const TapTable& ty, int oh,
                                                  int ow) {
    typedef typename Num<T>::Acc Acc;
    const Acc oob = (Acc)p.oob;
    Acc acc = MAX ? (Acc)max_start((const T*)nullptr) : Acc(0);  // MAX: from the lowest finite value
    const i64 y0 = oh * ay.samples, y1 = y0 + ay.samples, x0 = ow * ax.samples, x1 = x0 + ax.samples;
    i64 ylo = y0, yhi = y1, xlo = x0, xhi = x1;
    if (!ty.tabled) in_bounds_run(ay, y0, y1, p.out_offset, p.in_offset, p.in_h, ylo, yhi);
    if (!tx.tabled) in_bounds_run(ax, x0, x1, p.out_offset, p.in_offset, p.in_w, xlo, xhi);
    const i64 total = ay.samples * ax.samples;
    if (ylo >= yhi || xlo >= xhi) {  // every sample is out of bounds
        return MAX ? max_step(acc, oob) : div_rn(add_repeated(acc, oob, total), (Acc)total);
    }
    if (MAX && (ylo > y0 || xlo > x0)) {
        acc = max_step(acc, oob);  // some samples are skipped: they are out of bounds
    }
    if (!MAX) acc = add_repeated(acc, oob, (ylo - y0) * ax.samples);
    for (i64 jy = ylo; jy < yhi; ++jy) {
        const Tap sy = fetch<LINEAR>(ty, ay, jy, p.out_offset, p.in_offset, p.in_h);
        const T* row0 = plane + sy.first * p.x_stride[2];
        const T* row1 = plane + sy.second * p.x_stride[2];
        if (!MAX) acc = add_repeated(acc, oob, xlo - x0);
        for (i64 jx = xlo; jx < xhi; ++jx) {
            const Tap sx = fetch<LINEAR>(tx, ax, jx, p.out_offset, p.in_offset, p.in_w);
            Acc v;
            const bool ok = sy.in_bounds && sx.in_bounds;
            if (!ok) {
                v = oob;
            } else if (LINEAR) {
                const i64 xa = sx.first * p.x_stride[3], xb = sx.second * p.x_stride[3];
                const Acc wy = (Acc)sy.weight, wx = (Acc)sx.weight;
                const Acc r0 = lerp(Num<T>::to_acc(row0[xa]), Num<T>::to_acc(row1[xa]), wy);
                const Acc r1 = lerp(Num<T>::to_acc(row0[xb]), Num<T>::to_acc(row1[xb]), wy);
                v = lerp(r0, r1, wx);
            } else {
                v = Num<T>::to_acc(row0[sx.first * p.x_stride[3]]);
            }
            acc = MAX ? max_step(acc, v) : add_rn(acc, v);
        }
        if (MAX && xhi < x1) acc = max_step(acc, oob);  // the first skipped column follows the first row's run
        if (!MAX) acc = add_repeated(acc, oob, x1 - xhi);
    }
    if (MAX) return yhi < y1 ? max_step(acc, oob) : acc;  // skipped rows follow every visited one
    acc = add_repeated(acc, oob, (y1 - yhi) * ax.samples);
    return div_rn(acc, (Acc)total);
}

// Scaled start, step and sample count of both axes of ROI r.
struct RoiSetup {
    AxisSetup ax, ay;
    i64 batch;
};

template <typename T, typename BI>
__device__ __forceinline__ RoiSetup roi_setup(const T* rois, const BI* batch, i64 r, const RoiParams& p) {
    const T* roi = rois + r * p.roi_stride[0];
    const double x1 = (double)Num<T>::to_acc(roi[0]);
    const double y1 = (double)Num<T>::to_acc(roi[p.roi_stride[1]]);
    const double x2 = (double)Num<T>::to_acc(roi[2 * p.roi_stride[1]]);
    const double y2 = (double)Num<T>::to_acc(roi[3 * p.roi_stride[1]]);
    RoiSetup s;
    s.ax = axis_setup(x1, x2, p.scale_x, p.out_w, p.min_samples, p.max_samples, p.corners != 0);
    s.ay = axis_setup(y1, y2, p.scale_y, p.out_h, p.min_samples, p.max_samples, p.corners != 0);
    // Batch indices were checked on the host side (DataIndexError); clamp anyway so no
    // value can read outside the input.
    const u64 raw = (u64)batch[r * p.bi_stride];
    s.batch = raw < (u64)p.batch_count ? (i64)raw : p.batch_count - 1;
    return s;
}

#define ROI_TAP_TABLES(N)                                                                  \
    __shared__ i32 sx_first[N], sx_second[N], sy_first[N], sy_second[N];                  \
    __shared__ float sx_w[N], sy_w[N];                                                     \
    __shared__ bool sx_in[N], sy_in[N];                                                    \
    TapTable tx = {sx_first, sx_second, sx_w, sx_in, false};                               \
    TapTable ty = {sy_first, sy_second, sy_w, sy_in, false};                               \
    fill_table<LINEAR>(tx, s.ax, p.out_w, N, p.out_offset, p.in_offset, p.in_w);           \
    fill_table<LINEAR>(ty, s.ay, p.out_h, N, p.out_offset, p.in_offset, p.in_h);           \
    __syncthreads();

// Threads over (channel, bin) of one ROI and a group of channels, one output each.
template <typename T, typename BI, bool MAX, bool LINEAR>
__global__ void __launch_bounds__(256) roi_align(const T* __restrict__ x, const T* __restrict__ rois,
                                                 const BI* __restrict__ batch, T* __restrict__ y, const RoiParams p) {
    const i64 r = blockIdx.x;
    const RoiSetup s = roi_setup(rois, batch, r, p);
    ROI_TAP_TABLES(ROI_TABLE)
    const i64 c0 = (i64)blockIdx.y * p.channels_per_block;
    const int bins = (int)(p.out_h * p.out_w);
    const int out_w = (int)p.out_w;
    const int work = (int)p.channels_per_block * bins;
    for (int t = threadIdx.x; t < work; t += blockDim.x) {
        const int cl = t / bins;
        const int bin = t - cl * bins;
        const i64 c = c0 + cl;
        if (c >= p.channels) break;
        const int oh = bin / out_w;
        const int ow = bin - oh * out_w;
        const T* plane = x + s.batch * p.x_stride[0] + c * p.x_stride[1];
        const typename Num<T>::Acc v = per_sample_output<T, MAX, LINEAR>(plane, p, s.ax, s.ay, tx, ty, oh, ow);
        y[r * p.y_stride[0] + c * p.y_stride[1] + oh * p.y_stride[2] + ow * p.y_stride[3]] = Num<T>::from_acc(v);
    }
}

// Writes a block's staged outputs: tile[cl * pitch + bin] for its n_ch channels from c0
// of ROI output yr. With pitch == bins, and where each channel's bins are contiguous and
// the channels follow one another (NCHW outputs), the tile is one contiguous run; else a
// warp per channel places its bins through the output strides.
template <typename T>
__device__ __forceinline__ void write_tile(const RoiParams& p, const T* tile, int pitch, T* yr, i64 c0, int n_ch) {
    const int out_w = (int)p.out_w, bins = (int)p.out_h * out_w;
    const bool rows_dense = p.y_stride[3] == 1 && p.y_stride[2] == out_w;
    if (pitch == bins && rows_dense && p.y_stride[1] == bins) {
        T* dst = yr + c0 * p.y_stride[1];
        for (int e = threadIdx.x; e < n_ch * bins; e += blockDim.x) dst[e] = tile[e];
        return;
    }
    const int lane = threadIdx.x & 31, warps = blockDim.x >> 5;
    for (int cl = threadIdx.x >> 5; cl < n_ch; cl += warps) {
        const T* src = tile + cl * pitch;
        T* dst = yr + (c0 + cl) * p.y_stride[1];
        for (int bin = lane; bin < bins; bin += 32) {
            const int oh = bin / out_w, ow = bin - oh * out_w;
            dst[rows_dense ? bin : oh * p.y_stride[2] + ow * p.y_stride[3]] = src[bin];
        }
    }
}

// ROI_ALIGN with channels across the lanes of a warp, for inputs whose channel stride is 1
// (NHWC-strided). One block per (ROI, group of 32 channels); each warp takes whole bins,
// each lane one channel, so every tap load of a warp reads 32 consecutive channels of one
// pixel (coalesced). Results go through shared memory so that the NCHW output tile of
// the block is written contiguously.
#define ROI_STAGE 2048
#define ROI_TABLE_CL 512  // smaller tables than roi_align: more blocks per multiprocessor

template <typename T, typename BI, bool MAX, bool LINEAR>
__global__ void __launch_bounds__(256) roi_align_cl(const T* __restrict__ x, const T* __restrict__ rois,
                                                    const BI* __restrict__ batch, T* __restrict__ y, const RoiParams p) {
    __shared__ T sout[ROI_STAGE];
    const i64 r = blockIdx.x;
    const RoiSetup s = roi_setup(rois, batch, r, p);
    ROI_TAP_TABLES(ROI_TABLE_CL)
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    const i64 c = (i64)blockIdx.y * 32 + lane;
    const int bins = (int)(p.out_h * p.out_w);
    const int out_w = (int)p.out_w;
    const bool stage = bins * 32 <= ROI_STAGE;
    const T* plane = x + s.batch * p.x_stride[0] + c * p.x_stride[1];
    for (int bin = warp; bin < bins; bin += warps) {
        const int oh = bin / out_w;
        const int ow = bin - oh * out_w;
        if (c < p.channels) {
            const T out = Num<T>::from_acc(per_sample_output<T, MAX, LINEAR>(plane, p, s.ax, s.ay, tx, ty, oh, ow));
            if (stage) {
                sout[lane * bins + bin] = out;
            } else {
                y[r * p.y_stride[0] + c * p.y_stride[1] + oh * p.y_stride[2] + ow * p.y_stride[3]] = out;
            }
        }
    }
    if (stage) {
        __syncthreads();
        const i64 c0 = (i64)blockIdx.y * 32;
        write_tile(p, sout, bins, y + r * p.y_stride[0], c0, (int)(p.channels - c0 < 32 ? p.channels - c0 : 32));
    }
}

// ---------------------------------------------------------------------------------------
// AVERAGE in separable form, for any strides (the NCHW case).
//
// The sum over the in-bounds samples of output (oh, ow) is
//     sum_r Ay[oh, r] * sum_c Ax[ow, c] * X[r, c]
// where Ax[ow, c] is the summed weight of the column-c taps of output column ow's
// in-bounds samples (Ay likewise for rows). Taps of weight exactly 0 are dropped before
// summing, so the elements read are exactly the per-sample evaluation's (every in-bounds
// row tap of the output meets every in-bounds column tap) and inf/NaN propagate the same
// way; only the rounding order differs (the CPU backend and the reference's finite path
// use the same form). Out-of-bounds samples add OutOfBoundsInputValue / (sY * sX) each;
// an output with no in-bounds sample is exactly OutOfBoundsInputValue.
//
// Per block (one ROI, a group of channels): thread o < OutputWidth walks output column
// o's samples in order and writes its distinct column taps to shared memory: element
// offset and weight (summed in float64, divided by the sample count sY * sX and rounded
// once, so no division is left per output); threads 64 + o do the rows. Then a thread
// per output column (channel, ow) walks the output rows (column_per_thread below),
// reading its column taps one by one when they are few (fixed sampling of two) and in
// aligned 16-byte chunks of the row when they are many (adaptive sampling; chunk_per_
// thread). Profiled on the H100 with the benchmark's 1000 ROIs (docs/performance.md),
// this issues far fewer instructions than a thread per output element (whose warps span
// several output rows with different tap counts) or a warp per channel with lanes over
// the region's columns (whose per-row shuffle reductions cost more than the loads they
// save); staging the rows in shared memory moved more bytes than the taps and was slower.
// A ROI whose taps exceed the tables is evaluated per sample.
#define ROI_SEP_TAPS 512  // per axis: output extent x taps per output
#define ROI_SEP_OUT 64    // largest OutputHeight / OutputWidth (host-checked)
#define ROI_REG_TAPS 4    // column taps held in registers (two samples of LINEAR)

template <typename OFF, typename W> struct __align__(2 * sizeof(W)) TapEntry {
    OFF off;   // element offset of the row or column (u32 when the host found every offset < 2^31)
    W weight;  // summed tap weight (column taps: divided by the sample count)
};

// q + off as one wide multiply-add (IMAD.WIDE.U32): the compiler would otherwise re-form
// the 64-bit element index of every load from the plane base.
template <typename T> __device__ __forceinline__ const T* at(const T* q, u32 off) {
    const T* r;
    asm("mad.wide.u32 %0, %1, %2, %3;" : "=l"(r) : "r"(off), "r"((u32)sizeof(T)), "l"(q));
    return r;
}
template <typename T> __device__ __forceinline__ const T* at(const T* q, i64 off) { return q + off; }

// A read-only global load (the pointer from `at` is generic to the compiler).
template <typename T> __device__ __forceinline__ T load_nc(const T* q) { return *q; }
template <> __device__ __forceinline__ float load_nc(const float* q) { return __ldg(q); }
template <> __device__ __forceinline__ double load_nc(const double* q) { return __ldg(q); }
template <> __device__ __forceinline__ half_t load_nc(const half_t* q) {
    half_t h;
    h.bits = __ldg(reinterpret_cast<const unsigned short*>(q));
    return h;
}

// Accumulates the taps of one output element in sample order, merging repeats. The
// taps of consecutive samples are monotonic in the index, so a repeat is always one of
// the three most recently used entries (ascending: f, f + 1, then f' >= f; descending
// likewise); entries leave the window least recently used first. (A repeat that left
// the window would only cost a second entry, never a wrong sum.)
template <typename OFF, typename W> struct TapMerger {
    i64 stride;
    double scale;
    TapEntry<OFF, W>* out;
    int n, clock;
    i32 idx0, idx1, idx2;
    double sum0, sum1, sum2;
    int used0, used1, used2;

    __device__ __forceinline__ TapMerger(i64 s, double sc, TapEntry<OFF, W>* o)
        : stride(s), scale(sc), out(o), n(0), clock(0), idx0(-1), idx1(-1), idx2(-1), sum0(0.0), sum1(0.0),
          sum2(0.0), used0(0), used1(0), used2(0) {}

    __device__ __forceinline__ void flush(i32 i, double w) {
        if (i >= 0) {
            out[n].off = (OFF)((i64)i * stride);
            out[n].weight = (W)(w * scale);
            ++n;
        }
    }
    __device__ __forceinline__ void add(i32 i, double w) {
        if (w == 0.0) return;  // never read, as the reference skips zero-weight taps
        ++clock;
        if (idx0 == i) {
            sum0 += w;
            used0 = clock;
        } else if (idx1 == i) {
            sum1 += w;
            used1 = clock;
        } else if (idx2 == i) {
            sum2 += w;
            used2 = clock;
        } else if (used0 <= used1 && used0 <= used2) {
            flush(idx0, sum0);
            idx0 = i, sum0 = w, used0 = clock;
        } else if (used1 <= used2) {
            flush(idx1, sum1);
            idx1 = i, sum1 = w, used1 = clock;
        } else {
            flush(idx2, sum2);
            idx2 = i, sum2 = w, used2 = clock;
        }
    }
    __device__ __forceinline__ int finish() {
        // Least recently used first: the entries come out in sample order.
        for (int k = 0; k < 3; ++k) {
            if (used0 <= used1 && used0 <= used2) {
                flush(idx0, sum0);
                used0 = 0x7fffffff;
            } else if (used1 <= used2) {
                flush(idx1, sum1);
                used1 = 0x7fffffff;
            } else {
                flush(idx2, sum2);
                used2 = 0x7fffffff;
            }
        }
        return n;
    }
};

// The merged taps of output element o along one axis (weights times `scale`); returns
// their count and sets `inside` to the number of in-bounds samples.
template <bool LINEAR, typename OFF, typename W>
__device__ int axis_taps(const AxisSetup& a, int o, double out_offset, double in_offset, i64 length, i64 stride,
                         double scale, TapEntry<OFF, W>* out, int& inside) {
    TapMerger<OFF, W> m(stride, scale, out);
    inside = 0;
    for (i64 j = o * a.samples; j < (o + 1) * a.samples; ++j) {
        const Tap s = make_tap<LINEAR>(a, j, out_offset, in_offset, length);
        if (!s.in_bounds) continue;
        ++inside;
        if (LINEAR) {
            m.add(s.first, 1.0 - s.weight);
            m.add(s.second, s.weight);
        } else {
            m.add(s.first, 1.0);
        }
    }
    return m.finish();
}

// One output value from the lane sum: the out-of-bounds samples add
// OutOfBoundsInputValue / (sY * sX) each; no in-bounds sample gives exactly it.
template <typename Acc>
__device__ __forceinline__ Acc finish_average(Acc sum, int y_in, int x_in, double total, double oob) {
    if (y_in == 0 || x_in == 0) return (Acc)oob;
    if (oob != 0.0) {
        const double outside = total - (double)y_in * x_in;
        if (outside > 0.0) sum += (Acc)(outside * oob / total);
    }
    return sum;
}

// The work items of a block of n_ch channels: n_ch x OutputWidth for channels-last
// strides, n_ch x item_w otherwise, where item_w >= OutputWidth may leave idle lanes so
// that a warp's loads span fewer channel planes (4 with 7 outputs padded to 8, not 5-6):
// fewer L1 wavefronts per load.
template <bool CL> __device__ __forceinline__ int work_items(const RoiParams& p, int n_ch) {
    return n_ch * (int)(CL ? p.out_w : p.item_w);
}

// The output column (block channel cl, ow) of work item `item`: neighbouring items on
// neighbouring output columns of one channel, or, for channels-last strides, on
// neighbouring channels (so each tap load is a coalesced run). ow >= OutputWidth marks
// an idle item.
template <bool CL>
__device__ __forceinline__ void output_column(const RoiParams& p, int item, int n_ch, int& cl, int& ow) {
    if (CL) {
        ow = item / n_ch;
        cl = item - ow * n_ch;
    } else {
        cl = (int)fast_div((u32)item, p.div_w[0], p.div_w[1]);
        ow = item - cl * (int)p.item_w;
    }
}

// A thread per output column (channel, ow) of the block, walking the output rows:
// out[oh, ow] = sum_r Ay[oh, r] * sum_c Ax[ow, c] * X[r, c] over the merged taps. The
// column taps are the thread's own (held in registers when there are at most
// ROI_REG_TAPS, as with fixed sampling of two; absent ones predicated off); the row taps
// are the same for every thread of a warp at each step (one shared-memory broadcast, no
// divergence in the row loop). Neighbouring threads take neighbouring output columns of
// one channel, so a warp's loads of one row tap fall in a few row segments; with CL
// (channels-last strides) neighbouring channels of one output column, so each load of a
// warp is one coalesced run. Outputs go to `tile` (tile[cl * pitch + bin]) when it is not
// null, for the block to write out contiguously: a CL warp's direct stores land a channel
// apart, a 32-byte sector each (ncu, sr=2 fp32: 12.5 M sector writes against 1.6 M staged,
// the L2 busy with them; 277 -> 139 us). A CL tile's channel pitch is odd (bins | 1), so
// that a warp's stores, a channel apart, fall in different banks (8 x 8 outputs would
// otherwise be 32-way conflicts).
template <typename T, typename OFF, typename Acc, bool FEW_COLUMNS, bool CL>
__device__ __forceinline__ void column_per_thread(const RoiParams& p, const T* base, T* yr, i64 c0, i64 c_end,
                                                  const TapEntry<OFF, Acc>* sy_tab, const int* sy_n, const int* sy_in,
                                                  int y_per_out, const TapEntry<OFF, Acc>* sx_tab, const int* sx_n,
                                                  const int* sx_in, int x_per_out, double total, T* tile,
                                                  int pitch) {
    typedef TapEntry<OFF, Acc> Entry;
    const int out_w = (int)p.out_w, out_h = (int)p.out_h, n_ch = (int)(c_end - c0);
    const int items = work_items<CL>(p, n_ch);
    for (int item = threadIdx.x; item < items; item += blockDim.x) {
        int cl, ow;
        output_column<CL>(p, item, n_ch, cl, ow);
        if (ow >= out_w) continue;
        const T* plane = base + (c0 + cl) * p.x_stride[1];
        T* out = yr + (c0 + cl) * p.y_stride[1] + ow * p.y_stride[3];
        const Entry* cols = sx_tab + ow * x_per_out;
        const int n_cols = sx_n[ow], x_in = sx_in[ow];
        Entry e[ROI_REG_TAPS];
        const T* q[ROI_REG_TAPS];
        if (FEW_COLUMNS) {
#pragma unroll
            for (int k = 0; k < ROI_REG_TAPS; ++k) {
                e[k] = k < n_cols ? cols[k] : Entry{0, Acc(0)};
                q[k] = at(plane, e[k].off);
            }
        }
        for (int oh = 0; oh < out_h; ++oh) {
            const Entry* rows = sy_tab + oh * y_per_out;
            const int n_rows = sy_n[oh];
            Acc acc = Acc(0);
            if (FEW_COLUMNS) {
#pragma unroll 2
                for (int f = 0; f < n_rows; ++f) {
                    const Entry row = rows[f];
                    Acc v = Acc(0);
#pragma unroll
                    for (int k = 0; k < ROI_REG_TAPS; ++k) {
                        if (k < n_cols) v += e[k].weight * Num<T>::to_acc(load_nc(at(q[k], row.off)));
                    }
                    acc += row.weight * v;
                }
            } else {
                for (int f = 0; f < n_rows; ++f) {
                    const Entry row = rows[f];
                    const T* q_row = at(plane, row.off);
                    Acc v = Acc(0);
#pragma unroll 4
                    for (int k = 0; k < n_cols; ++k) {
                        const Entry col = cols[k];
                        v += col.weight * Num<T>::to_acc(load_nc(at(q_row, col.off)));
                    }
                    acc += row.weight * v;
                }
            }
            const T value = Num<T>::from_acc(finish_average(acc, sy_in[oh], x_in, total, p.oob));
            if (tile != nullptr) {
                tile[cl * pitch + oh * out_w + ow] = value;
            } else {
                out[oh * p.y_stride[2]] = value;
            }
        }
    }
}

// 16-byte column chunks (VEC, for rows of unit stride whose every chunk is 16-byte
// aligned and inside its row: the host checks the strides, the width and the base
// address). An output column's taps are grouped by the aligned chunk of V elements that
// holds them, with a weight per element (0 for the elements that are no tap of it);
// one 16-byte load then reads every tap of the chunk. Adjacent taps (both taps of a
// linear sample, and the dense taps of adaptive sampling) share a chunk, so a warp's
// load instructions and L1 wavefronts drop by up to V times against one load per tap.
template <typename T> struct Vec16;
template <> struct Vec16<float> {
    static constexpr int V = 4;
    static __device__ __forceinline__ void load(const float* q, float x[V]) {
        const float4 v = __ldg(reinterpret_cast<const float4*>(q));
        x[0] = v.x, x[1] = v.y, x[2] = v.z, x[3] = v.w;
    }
};
template <> struct Vec16<half_t> {
    static constexpr int V = 8;
    static __device__ __forceinline__ void load(const half_t* q, float x[V]) {
        const uint4 v = __ldg(reinterpret_cast<const uint4*>(q));
        const u32 w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            x[2 * i] = h2f(half_t{(u16)(w[i] & 0xffffu)});
            x[2 * i + 1] = h2f(half_t{(u16)(w[i] >> 16)});
        }
    }
};

template <typename OFF, int V> struct __align__(16) ColumnChunk {
    float w[V];  // weight of each element of the chunk (column weight / sample count), 0 if no tap
    OFF off;     // element offset of the chunk's first element in the row
};

// Thread `ow`'s column taps (unit column stride: offset == column) grouped into chunks,
// in tap order; returns their count.
template <typename OFF, int V>
__device__ int column_chunks(const TapEntry<OFF, float>* taps, int n, ColumnChunk<OFF, V>* out) {
    int m = 0;
    for (int k = 0; k < n; ++k) {
        const OFF first = taps[k].off & ~(OFF)(V - 1);
        if (m == 0 || out[m - 1].off != first) {
#pragma unroll
            for (int i = 0; i < V; ++i) out[m].w[i] = 0.0f;
            out[m].off = first;
            ++m;
        }
        out[m - 1].w[taps[k].off & (OFF)(V - 1)] = taps[k].weight;
    }
    return m;
}

// column_per_thread over chunks: per output row and chunk, one 16-byte load per row tap.
// Elements of weight 0 are selected away (never multiplied: no 0 * inf).
template <typename T, typename OFF>
__device__ __forceinline__ void chunk_per_thread(const RoiParams& p, const T* base, T* yr, i64 c0, i64 c_end,
                                                 const TapEntry<OFF, float>* sy_tab, const int* sy_n, const int* sy_in,
                                                 int y_per_out, const ColumnChunk<OFF, Vec16<T>::V>* sc_tab,
                                                 const int* sc_n, const int* sx_in, int x_per_out, double total) {
    typedef TapEntry<OFF, float> Entry;
    constexpr int V = Vec16<T>::V;
    const int out_h = (int)p.out_h, n_ch = (int)(c_end - c0);
    const int items = work_items<false>(p, n_ch);
    for (int item = threadIdx.x; item < items; item += blockDim.x) {
        int cl, ow;
        output_column<false>(p, item, n_ch, cl, ow);
        if (ow >= (int)p.out_w) continue;
        const T* plane = base + (c0 + cl) * p.x_stride[1];
        T* out = yr + (c0 + cl) * p.y_stride[1] + ow * p.y_stride[3];
        const ColumnChunk<OFF, V>* chunks = sc_tab + ow * x_per_out;
        const int n_chunks = sc_n[ow], x_in = sx_in[ow];
        for (int oh = 0; oh < out_h; ++oh) {
            const Entry* rows = sy_tab + oh * y_per_out;
            const int n_rows = sy_n[oh];
            float acc = 0.0f;
            for (int j = 0; j < n_chunks; ++j) {
                const ColumnChunk<OFF, V> chunk = chunks[j];
                const T* q = at(plane, chunk.off);
                float part = 0.0f;
#pragma unroll 4
                for (int f = 0; f < n_rows; ++f) {
                    const Entry row = rows[f];
                    float x[V];
                    Vec16<T>::load(at(q, row.off), x);
                    float v = 0.0f;
#pragma unroll
                    for (int i = 0; i < V; ++i) v += chunk.w[i] * (chunk.w[i] != 0.0f ? x[i] : 0.0f);
                    part += row.weight * v;
                }
                acc += part;
            }
            out[oh * p.y_stride[2]] = Num<T>::from_acc(finish_average(acc, sy_in[oh], x_in, total, p.oob));
        }
    }
}

// CL: channels-last strides (channel stride 1), threads over channels first. Never with
// VEC (unit column stride).
//
// STAGE: a block stages its outputs in shared memory (when they fit: 64 channels x 7 x 7
// do) and writes them out as one contiguous run; the chunk path (adaptive sampling, VEC)
// needs that memory for its chunk tables and stores directly. The CL warps' direct stores
// would land a channel apart (see column_per_thread).
#define ROI_OUT_TILE_BYTES 16384

template <typename T, typename BI, bool LINEAR, typename OFF, bool VEC, bool CL, bool STAGE>
__global__ void __launch_bounds__(256, 4) roi_align_avg(const T* __restrict__ x, const T* __restrict__ rois,
                                                        const BI* __restrict__ batch, T* __restrict__ y,
                                                        const RoiParams p) {
    typedef typename Num<T>::Acc Acc;
    typedef TapEntry<OFF, Acc> Entry;
    __shared__ Entry sx_tab[ROI_SEP_TAPS], sy_tab[ROI_SEP_TAPS];
    __shared__ int sx_n[ROI_SEP_OUT], sy_n[ROI_SEP_OUT], sx_in[ROI_SEP_OUT], sy_in[ROI_SEP_OUT];
    __shared__ int most_taps;
    __shared__ RoiSetup setup;
    // One buffer for either the output tile or, VEC, the column taps grouped by 16-byte chunk.
    typedef ColumnChunk<OFF, VEC ? Vec16<T>::V : 1> Chunk;
    constexpr int chunk_bytes = VEC ? (int)sizeof(Chunk) * ROI_SEP_TAPS : 0;
    constexpr int tile_bytes = STAGE ? ROI_OUT_TILE_BYTES : 0;
    __shared__ __align__(16) unsigned char scratch[chunk_bytes > tile_bytes ? chunk_bytes : (tile_bytes > 0 ? tile_bytes : 16)];
    Chunk* const sc_tab = reinterpret_cast<Chunk*>(scratch);
    __shared__ int sc_n[ROI_SEP_OUT];
    static_assert(!(VEC && CL), "16-byte column chunks need a unit column stride");

    const i64 r = blockIdx.x;
    if (threadIdx.x == 0) {
        setup = roi_setup(rois, batch, r, p);
        most_taps = 1;
    }
    __syncthreads();
    const RoiSetup s = setup;
    const int out_h = (int)p.out_h, out_w = (int)p.out_w;
    const i64 c0 = (i64)blockIdx.y * p.channels_per_block;
    const i64 c_end = c0 + p.channels_per_block < p.channels ? c0 + p.channels_per_block : p.channels;
    const i64 x_per_out = (LINEAR ? 2 : 1) * s.ax.samples, y_per_out = (LINEAR ? 2 : 1) * s.ay.samples;
    const T* base = x + s.batch * p.x_stride[0];
    T* yr = y + r * p.y_stride[0];
    if (x_per_out * out_w > ROI_SEP_TAPS || y_per_out * out_h > ROI_SEP_TAPS) {
        // Too many samples for the tables (block-uniform): evaluate per sample.
        TapTable none = {0, 0, 0, 0, false};
        const int bins = out_h * out_w;
        for (i64 t = threadIdx.x; t < (c_end - c0) * bins; t += blockDim.x) {
            const i64 c = c0 + t / bins;
            const int bin = (int)(t % bins), oh = bin / out_w, ow = bin % out_w;
            const Acc v =
                per_sample_output<T, false, LINEAR>(base + c * p.x_stride[1], p, s.ax, s.ay, none, none, oh, ow);
            yr[c * p.y_stride[1] + oh * p.y_stride[2] + ow * p.y_stride[3]] = Num<T>::from_acc(v);
        }
        return;
    }
    const double total = (double)s.ay.samples * (double)s.ax.samples;
    const int t = threadIdx.x;
    if (t < out_w) {
        int inside;
        const int n = axis_taps<LINEAR>(s.ax, t, p.out_offset, p.in_offset, p.in_w, p.x_stride[3], 1.0 / total,
                                        sx_tab + t * x_per_out, inside);
        sx_n[t] = n;
        sx_in[t] = inside;
        atomicMax(&most_taps, n);
    } else if (t >= 64 && t - 64 < out_h) {
        int inside;
        const int n = axis_taps<LINEAR>(s.ay, t - 64, p.out_offset, p.in_offset, p.in_h, p.x_stride[2], 1.0,
                                        sy_tab + (t - 64) * y_per_out, inside);
        sy_n[t - 64] = n;
        sy_in[t - 64] = inside;
    }
    __syncthreads();

    // Measured on the H100 (docs/performance.md): a few column taps (fixed sampling of two)
    // are fastest as scalar loads from registers (16-byte chunks would read 2-4 times the
    // bytes for the same taps); the dense taps of adaptive sampling fastest in chunks.
    const bool chunked = VEC && most_taps > ROI_REG_TAPS;
    const int pitch = CL ? (out_h * out_w) | 1 : out_h * out_w;
    const bool stage = STAGE && !chunked && (c_end - c0) * pitch * (i64)sizeof(T) <= ROI_OUT_TILE_BYTES;
    T* tile = stage ? reinterpret_cast<T*>(scratch) : nullptr;
    if (most_taps <= ROI_REG_TAPS) {
        column_per_thread<T, OFF, Acc, true, CL>(p, base, yr, c0, c_end, sy_tab, sy_n, sy_in, (int)y_per_out, sx_tab,
                                                 sx_n, sx_in, (int)x_per_out, total, tile, pitch);
    } else if constexpr (VEC) {
        if (t < out_w) sc_n[t] = column_chunks(sx_tab + t * x_per_out, sx_n[t], sc_tab + t * x_per_out);
        __syncthreads();
        chunk_per_thread<T, OFF>(p, base, yr, c0, c_end, sy_tab, sy_n, sy_in, (int)y_per_out, sc_tab, sc_n, sx_in,
                                 (int)x_per_out, total);
    } else {
        column_per_thread<T, OFF, Acc, false, CL>(p, base, yr, c0, c_end, sy_tab, sy_n, sy_in, (int)y_per_out, sx_tab,
                                                  sx_n, sx_in, (int)x_per_out, total, tile, pitch);
    }
    if (tile != nullptr) {
        __syncthreads();
        write_tile(p, tile, pitch, yr, c0, (int)(c_end - c0));
    }
}

// ---------------------------------------------------------------------------------------
// roi_align_fast: roi_align's per-sample evaluation, bit for bit (DirectML's arithmetic,
// erratum E38: per sample float32 lerps along y, both tap columns, then along x, each op
// rounded; AVERAGE a float32 running sum from +0 in sample order, sample rows then the
// samples of a row, divided by the count at the end; MAX's fold), for a fixed sample count
// S (MinimumSamplesPerOutput == MaximumSamplesPerOutput, 1 to 4) where OutputWidth x S <= 32,
// OutputHeight x S <= ROI_FAST_ROWS, row and column strides are >= 0 and every byte offset
// inside a plane is below 2^31 (the host checks them, and takes roi_align otherwise).
//
// A block per (ROI, group of channels). Its first warp writes the ROI's samples of both
// axes to shared memory (make_tap, as roi_align's tables, with the byte offsets already
// multiplied out: one 16-byte entry per sample); the other warps wait at the barrier, so
// the float64 setup runs once per block. Then a group of OutputWidth x S lanes takes one
// channel, a lane per sample column jx (its entry held in registers), and walks the output
// rows; a warp holds 32 / (OutputWidth x S) such groups, all at one output row. Per sample
// row each lane reads its sample's taps and interpolates; the first lane of each output
// then takes the samples of the S - 1 lanes after it by shuffles, in sample order, and adds
// them in DirectML's order, then stores the output. A warp load reads one image row of one
// or two channels (on the workloads' ROIs one or two 128-byte lines), where roi_align's
// thread per output spreads a warp load over the rows of five output rows.
//
// Measured on the H100 (docs/performance.md, run R): the tiny call's kernel (100 ROIs,
// 256 channels, 7 x 7, two samples) is bound by L1 wavefronts and latency. Two lanes per
// sample column (one per tap column: half the row loads, but a shuffle per sample row)
// and keeping the last two image rows across the sample rows of one output row (loads
// behind branches and copies of loaded values) were slower; KEEP keeps rows only across
// output rows.
#define ROI_FAST_ROWS 256  // largest OutputHeight x S (host-checked)
#define ROI_FAST_MIN_BLOCKS 6  // at most 40 registers: 6 blocks of 256 threads per multiprocessor, no spills
#define ROI_FAST_MIN_BLOCKS_KEEP 5  // at most 48: the kept taps need registers besides

struct __align__(16) FastTap {
    i32 first, second;  // byte offsets of the two taps in the plane (pixel index x stride x element size)
    float weight;       // of `second` (`first` has 1 - weight), as roi_align's tables hold it
    i32 in_bounds;
};

template <bool LINEAR>
__device__ __forceinline__ FastTap fast_tap(const AxisSetup& a, i64 j, const RoiParams& p, i64 length, i64 stride) {
    // stride: in bytes
    const Tap t = make_tap<LINEAR>(a, j, p.out_offset, p.in_offset, length);
    FastTap f;
    f.first = (i32)((i64)t.first * stride);
    f.second = (i32)((i64)t.second * stride);
    f.weight = (float)t.weight;
    f.in_bounds = t.in_bounds ? 1 : 0;
    return f;
}

// AVERAGE's division by the sample count S x S: a product with the exact reciprocal where
// that is a power of two (the same correctly rounded quotient), else the division.
template <int S> __device__ __forceinline__ float average_of(float sum) {
    if (S == 3) return __fdiv_rn(sum, 9.0f);
    return __fmul_rn(sum, 1.0f / (float)(S * S));
}

// q + off bytes (off < 2^31): a 32-bit add and its carry, where an element offset costs a
// 64-bit shift besides.
template <typename T> __device__ __forceinline__ const T* byte_at(const T* q, i32 off) {
    return reinterpret_cast<const T*>(reinterpret_cast<const char*>(q) + (u32)off);
}

// A sample row's taps at a lane's two tap columns: the first tap row's (a at the first
// column, c at the second) and the second tap row's (b, d).
template <typename Acc> struct SampleRowTaps {
    Acc a, b, c, d;
};

// KEEP: the first sample row of an output row takes the taps of the previous output row's
// last sample row again where it reads the same image rows (rows below a pixel apart, on
// small ROIs), instead of loading them; the kept values are the same bits. Only across
// output rows, so no load waits for another of its own output row. The tap rows come from
// the shared table, the same for every lane of a warp (its groups are at one output row),
// so the branches never diverge.
template <typename T, bool LINEAR>
__device__ __forceinline__ SampleRowTaps<typename Num<T>::Acc> sample_row_taps(
    const T* pa, const T* pb, const FastTap& ty, bool keep, const SampleRowTaps<typename Num<T>::Acc>& kept,
    i32 kept_first, i32 kept_second) {
    typedef typename Num<T>::Acc Acc;
    SampleRowTaps<Acc> t;
    if (keep && ty.first == kept_second) {
        t.a = kept.b, t.c = kept.d;
    } else if (keep && ty.first == kept_first) {
        t.a = kept.a, t.c = kept.c;
    } else {
        t.a = Num<T>::to_acc(load_nc(byte_at(pa, ty.first)));
        t.c = LINEAR ? Num<T>::to_acc(load_nc(byte_at(pb, ty.first))) : t.a;
    }
    if (!LINEAR) {
        t.b = t.d = t.a;
    } else if (keep && ty.second == kept_second) {
        t.b = kept.b, t.d = kept.d;
    } else if (keep && ty.second == kept_first) {
        t.b = kept.a, t.d = kept.c;
    } else {
        t.b = Num<T>::to_acc(load_nc(byte_at(pa, ty.second)));
        t.d = Num<T>::to_acc(load_nc(byte_at(pb, ty.second)));
    }
    return t;
}

template <typename T, typename BI, bool MAX, bool LINEAR, int S, bool KEEP>
__global__ void __launch_bounds__(256, KEEP ? ROI_FAST_MIN_BLOCKS_KEEP : ROI_FAST_MIN_BLOCKS) roi_align_fast(const T* __restrict__ x, const T* __restrict__ rois,
                                                      const BI* __restrict__ batch, T* __restrict__ y,
                                                      const RoiParams p) {
    typedef typename Num<T>::Acc Acc;
    static_assert(S >= 1 && S <= 4, "one to four samples per output and axis");
    __shared__ FastTap xtab[32];
    __shared__ FastTap ytab[ROI_FAST_ROWS];
    __shared__ i64 roi_batch;
    const i64 r = blockIdx.x;
    const int out_h = (int)p.out_h, nx = (int)p.out_w * S, ny = out_h * S;
    if (threadIdx.x < 32) {  // one warp sets the ROI up; the block's other warps wait at the barrier
        const RoiSetup s = roi_setup(rois, batch, r, p);  // its sample counts are S: MinimumSamples == MaximumSamples
        for (int j = threadIdx.x; j < nx + ny; j += 32) {
            if (j < nx) {
                xtab[j] = fast_tap<LINEAR>(s.ax, j, p, p.in_w, p.x_stride[3] * (i64)sizeof(T));
            } else {
                ytab[j - nx] = fast_tap<LINEAR>(s.ay, j - nx, p, p.in_h, p.x_stride[2] * (i64)sizeof(T));
            }
        }
        if (threadIdx.x == 0) roi_batch = s.batch;
    }
    __syncthreads();
    const int lane = threadIdx.x & 31;
    const int groups = 32 / nx;  // channels per warp
    const int g = lane / nx, jx = lane - g * nx;
    const bool lane_live = g < groups;  // lanes past the last group idle (they still shuffle)
    const int ow = jx / S;
    const int first_lane = lane - (jx - ow * S);  // the lane of the output's first sample column
    const FastTap tx = xtab[lane_live ? jx : 0];
    const i64 c0 = (i64)blockIdx.y * p.channels_per_block;
    const int n_ch = (int)(p.channels - c0 < p.channels_per_block ? p.channels - c0 : p.channels_per_block);
    const int step = (int)(blockDim.x >> 5) * groups;
    const Acc oob = (Acc)p.oob;
    const bool x_in = tx.in_bounds != 0;
    const T* base = x + roi_batch * p.x_stride[0];
    const i64 out_row = p.y_stride[2];
    for (int cw = (int)(threadIdx.x >> 5) * groups; cw < n_ch; cw += step) {  // warp-uniform: full-mask shuffles
        const int cl = cw + g;
        const bool live = lane_live && cl < n_ch;
        const T* plane = base + (c0 + (live ? cl : 0)) * p.x_stride[1];  // idle lanes read a valid plane
        const T* pa = byte_at(plane, tx.first);
        const T* pb = byte_at(plane, tx.second);
        // Opaque to the compiler, so it keeps the two pointers in registers instead of forming
        // them again from the parameters before each load (as it did, on each path of KEEP).
        asm("" : "+l"(pa), "+l"(pb));
        T* out = y + r * p.y_stride[0] + (c0 + cl) * p.y_stride[1] + ow * p.y_stride[3];
        SampleRowTaps<Acc> kept = {Acc(0), Acc(0), Acc(0), Acc(0)};
        i32 kept_first = -1, kept_second = -1;  // none yet (offsets are >= 0)
        for (int oh = 0; oh < out_h; ++oh, out += out_row) {
            Acc v[S];
            SampleRowTaps<Acc> last;
            i32 last_first = -1, last_second = -1;
#pragma unroll
            for (int ky = 0; ky < S; ++ky) {
                const FastTap ty = ytab[oh * S + ky];
                const SampleRowTaps<Acc> t =
                    sample_row_taps<T, LINEAR>(pa, pb, ty, KEEP && ky == 0, kept, kept_first, kept_second);
                const Acc value = LINEAR ? lerp(lerp(t.a, t.b, ty.weight), lerp(t.c, t.d, ty.weight), tx.weight) : t.a;
                v[ky] = (ty.in_bounds != 0 && x_in) ? value : oob;
                if (ky == S - 1) last = t, last_first = ty.first, last_second = ty.second;
            }
            if (KEEP) kept = last, kept_first = last_first, kept_second = last_second;
            Acc acc = MAX ? (Acc)max_start((const T*)nullptr) : Acc(0);
#pragma unroll
            for (int ky = 0; ky < S; ++ky) {
#pragma unroll
                for (int kx = 0; kx < S; ++kx) {  // the output's first lane: its own sample, then its neighbours'
                    const Acc w = kx == 0 ? v[ky] : __shfl_down_sync(0xffffffffu, v[ky], kx);
                    acc = MAX ? max_step(acc, w) : add_rn(acc, w);
                }
            }
            if (!MAX) acc = average_of<S>(acc);
            if (live && lane == first_lane) *out = Num<T>::from_acc(acc);
        }
    }
}

// ---------------------------------------------------------------------------------------
// The batch-index check (ruling 3): one block finds the lowest ROI whose BatchIndicesTensor
// value is outside [0, BatchCount) (all ones when none) and writes it straight into the
// host's pinned word through its mapped address, so no memset or copy is queued beside it.
// One block suffices: it reads one index per ROI, next to the ROI kernel's thousands of
// loads per ROI that it runs beside.
struct RoiCheckParams {
    i64 count, stride, batch_count;
};

#define ROI_CHECK_THREADS 1024

__device__ __forceinline__ u64 warp_min(u64 v) {
    for (int o = 16; o > 0; o >>= 1) {
        const u64 other = __shfl_xor_sync(0xffffffffu, v, o);
        v = other < v ? other : v;
    }
    return v;
}

template <typename BI>
__global__ void __launch_bounds__(ROI_CHECK_THREADS)
    roi_batch_check(const BI* __restrict__ batch, u64* __restrict__ first_bad, const RoiCheckParams p) {
    __shared__ u64 warp_first[ROI_CHECK_THREADS / 32];
    u64 first = ~0ull;
    for (i64 r = threadIdx.x; r < p.count; r += blockDim.x) {
        if ((u64)batch[r * p.stride] >= (u64)p.batch_count) {
            first = (u64)r;  // a thread's ROIs increase: its first bad one is its lowest
            break;
        }
    }
    first = warp_min(first);
    if ((threadIdx.x & 31) == 0) warp_first[threadIdx.x >> 5] = first;
    __syncthreads();
    if (threadIdx.x < 32) {
        first = warp_min(threadIdx.x < (blockDim.x >> 5) ? warp_first[threadIdx.x] : ~0ull);
        if (threadIdx.x == 0) *first_bad = first;
    }
}

// ---------------------------------------------------------------------------------------
// ROI_POOLING: a thread per output element (grid-stride over all of them), the max over its
// bin, bit for bit dmlops.descs.roi.pooling_bins and the reference's max (errata E190-E192).
struct RoiPoolParams {
    i64 count;  // NumROIs x ChannelCount x PooledHeight x PooledWidth
    i64 channels, in_h, in_w, pooled_h, pooled_w, batch_count;
    i64 x_stride[4];    // InputTensor
    i64 y_stride[4];    // OutputTensor
    i64 roi_stride[2];  // ROITensor {1, 1, NumROIs, 5}: ROI, value
    double scale;       // SpatialScale, already rounded to float32
};

// D3D's ftoi: truncation toward zero, saturated to int32, NaN to 0 (descs.roi.float_to_int32).
__device__ __forceinline__ i32 ftoi_sat(float v) {
    if (v != v) return 0;
    if (v >= 2147483648.0f) return 2147483647;
    if (v <= -2147483648.0f) return (i32)(-2147483647 - 1);
    return (i32)v;
}

// Bin `p` of `pooled` along one axis: [start, end) clamped to [0, length]. The corners are
// round(coordinate * SpatialScale) (float32 product, halves to even, ftoi); the region is
// max(last - first + 1, 1) pixels (int32, wrapping); the page's floor and ceil bounds in
// unsigned 32-bit arithmetic (PooledSize is a UINT), offset by `first` with int32 wrap.
__device__ __forceinline__ void pooling_bin(float first, float last, float scale, u32 p, u32 pooled, i64 length,
                                            i64& start, i64& end) {
    const i32 a = ftoi_sat(rintf(__fmul_rn(first, scale)));
    const i32 b = ftoi_sat(rintf(__fmul_rn(last, scale)));
    i32 size = (i32)((u32)b - (u32)a + 1u);
    if (size < 1) size = 1;
    const u32 lo = (p * (u32)size) / pooled;
    const u32 hi = ((p + 1u) * (u32)size + pooled - 1u) / pooled;
    const i64 s = (i64)(i32)(lo + (u32)a), e = (i64)(i32)(hi + (u32)a);
    start = s < 0 ? 0 : (s > length ? length : s);
    end = e < 0 ? 0 : (e > length ? length : e);
}

template <typename T>
__global__ void __launch_bounds__(256) roi_pooling(const T* __restrict__ x, const T* __restrict__ rois,
                                                   T* __restrict__ y, const RoiPoolParams p) {
    typedef typename Num<T>::Acc Acc;
    const Acc low = (Acc)max_start((const T*)nullptr);
    const float scale = (float)p.scale;
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < p.count; i += (i64)gridDim.x * blockDim.x) {
        const i64 pw = i % p.pooled_w, ph = (i / p.pooled_w) % p.pooled_h;
        const i64 rc = i / (p.pooled_w * p.pooled_h);
        const i64 c = rc % p.channels, r = rc / p.channels;
        const T* roi = rois + r * p.roi_stride[0];
        const float id = (float)Num<T>::to_acc(roi[0]);
        // The BatchID truncated and clamped to [0, BatchCount - 1] (E191).
        i64 b = ftoi_sat(id);
        b = b < 0 ? 0 : (b >= p.batch_count ? p.batch_count - 1 : b);
        const float x1 = (float)Num<T>::to_acc(roi[p.roi_stride[1]]), y1 = (float)Num<T>::to_acc(roi[2 * p.roi_stride[1]]);
        const float x2 = (float)Num<T>::to_acc(roi[3 * p.roi_stride[1]]), y2 = (float)Num<T>::to_acc(roi[4 * p.roi_stride[1]]);
        i64 ys, ye, xs, xe;
        pooling_bin(y1, y2, scale, (u32)ph, (u32)p.pooled_h, p.in_h, ys, ye);
        pooling_bin(x1, x2, scale, (u32)pw, (u32)p.pooled_w, p.in_w, xs, xe);
        T* out = y + r * p.y_stride[0] + c * p.y_stride[1] + ph * p.y_stride[2] + pw * p.y_stride[3];
        if (ye <= ys || xe <= xs) {
            *out = Num<T>::from_acc(Acc(0));  // an empty bin is +0 (E192)
            continue;
        }
        // From the lowest finite value, replaced only by a strictly greater element, rows then
        // columns (NaN never wins; of +0 and -0 the first is kept); the chosen element's bits are copied.
        const T* plane = x + b * p.x_stride[0] + c * p.x_stride[1];
        Acc best = low;
        const T* chosen = nullptr;
        for (i64 h = ys; h < ye; ++h) {
            const T* row = plane + h * p.x_stride[2];
            for (i64 w = xs; w < xe; ++w) {
                const T* q = row + w * p.x_stride[3];
                const Acc v = Num<T>::to_acc(*q);
                if (v > best) {
                    best = v;
                    chosen = q;
                }
            }
        }
        *out = chosen != nullptr ? *chosen : Num<T>::from_acc(low);
    }
}

// ---------------------------------------------------------------------------------------
// ROI_ALIGN_GRAD (dmlops.reference.roi.compute_roi_align_grad) in two kernels, both
// deterministic (no atomics; every float64 sum in a fixed order), the samples being
// ROI_ALIGN1's (the forward's AxisSetup / make_tap / in_bounds_run):
//
// * roi_align_grad: one block per ROI, its threads over (channel, output element). For
//   MAX it records the sample the forward's MAX picks (an out-of-bounds sample competing
//   as 0, erratum E195) in `pick` (ROI, channel, output: the sample's index ky * sX + kx
//   within its output, left at -1 when none or an out-of-bounds one wins). The ROI
//   gradient (E194): per in-bounds sample that gets a gradient, the LINEAR taps' slopes
//   times its share times the corners' factors, summed per thread in its fixed order and
//   over the block by a fixed tree; written as float64 to `droi` (packed NumROIs x 4).
// * roi_align_grad_input: the input gradient as a gather. A block owns input planes
//   (batch b, channel c) and visits the ROIs of batch b in order; per ROI a thread per
//   pixel of the ROI's tap span adds up, sample rows then columns, the shares of the
//   samples whose taps touch its pixel (found by bisection: the taps are monotonic in the
//   sample index), times their tap weights, into the plane's float64 sums (`acc`,
//   packed N, C, H, W); the plane is then rounded once into OutputGradientTensor.
// p.y_stride holds InputGradientTensor's strides, p.x_stride InputTensor's (0 without
// it), p.dx_stride OutputGradientTensor's.
#define ROI_GRAD_THREADS 256

template <typename T>
__device__ __forceinline__ float grad_sample_value(const T* plane, const RoiParams& p, const Tap& ty, const Tap& tx) {
    // The forward's float32 lerps along y, then x (for NEAREST both taps are one pixel, weight 0, as the reference).
    const T* row0 = plane + ty.first * p.x_stride[2];
    const T* row1 = plane + ty.second * p.x_stride[2];
    const i64 xa = tx.first * p.x_stride[3], xb = tx.second * p.x_stride[3];
    const float wy = (float)ty.weight, wx = (float)tx.weight;
    const float left = lerp((float)Num<T>::to_acc(row0[xa]), (float)Num<T>::to_acc(row1[xa]), wy);
    const float right = lerp((float)Num<T>::to_acc(row0[xb]), (float)Num<T>::to_acc(row1[xb]), wy);
    return lerp(left, right, wx);
}

// The corners' factors of output index j along an axis (descs.roi.roi_gradient_coefficients).
__device__ __forceinline__ void grad_factors(i64 j, i64 count, i64 length, bool corners, double& first, double& last) {
    const double span = corners ? (double)(length - 1) : (double)length;
    const i64 steps = corners ? count - 1 : count;
    last = steps > 0 ? (double)j * (span / (double)steps) : span / 2.0;
    first = span - last;
}

// One in-bounds sample's share g of the ROI gradient (the slopes of its LINEAR taps, in either mode).
template <typename T>
__device__ __forceinline__ void roi_gradient_sample(const T* plane, const RoiParams& p, const RoiSetup& s, i64 jy,
                                                    i64 jx, double g, int oh, int ow, double acc[4]) {
    const Tap ly = make_tap<true>(s.ay, jy, p.out_offset, p.in_offset, p.in_h);
    const Tap lx = make_tap<true>(s.ax, jx, p.out_offset, p.in_offset, p.in_w);
    const T* row0 = plane + ly.first * p.x_stride[2];
    const T* row1 = plane + ly.second * p.x_stride[2];
    const i64 xa = lx.first * p.x_stride[3], xb = lx.second * p.x_stride[3];
    const double tl = (double)Num<T>::to_acc(row0[xa]), tr = (double)Num<T>::to_acc(row0[xb]);
    const double bl = (double)Num<T>::to_acc(row1[xa]), br = (double)Num<T>::to_acc(row1[xb]);
    const double wy = (double)(float)ly.weight, wx = (double)(float)lx.weight;
    const double gx = g * ((1.0 - wy) * (tr - tl) + wy * (br - bl));
    const double gy = g * ((1.0 - wx) * (bl - tl) + wx * (br - tr));
    double fx1, fx2, fy1, fy2;
    grad_factors(ow, p.out_w * s.ax.samples, p.in_w, p.corners != 0, fx1, fx2);
    grad_factors(oh, p.out_h * s.ay.samples, p.in_h, p.corners != 0, fy1, fy2);
    acc[0] += gx * fx1;
    acc[1] += gy * fy1;
    acc[2] += gx * fx2;
    acc[3] += gy * fy2;
}

template <typename T, typename BI, bool MAX, bool LINEAR>
__global__ void __launch_bounds__(ROI_GRAD_THREADS)
    roi_align_grad(const T* __restrict__ x, const T* __restrict__ dy, const T* __restrict__ rois,
                   const BI* __restrict__ batch, i64* __restrict__ pick, double* __restrict__ droi, const RoiParams p) {
    __shared__ double part[4][ROI_GRAD_THREADS];
    const i64 r = blockIdx.x;
    const RoiSetup s = roi_setup(rois, batch, r, p);  // the batch clamped (the host raises for a bad one)
    const int out_w = (int)p.out_w;
    const i64 bins = p.out_h * p.out_w;
    const i64 sy = s.ay.samples, sx = s.ax.samples;
    double acc[4] = {0.0, 0.0, 0.0, 0.0};
    for (i64 t = threadIdx.x; t < p.channels * bins; t += blockDim.x) {
        const i64 c = t / bins;
        const int bin = (int)(t - c * bins), oh = bin / out_w, ow = bin - oh * out_w;
        const T* plane = x + s.batch * p.x_stride[0] + c * p.x_stride[1];
        double g = (double)Num<T>::to_acc(dy[r * p.y_stride[0] + c * p.y_stride[1] + oh * p.y_stride[2] +
                                             ow * p.y_stride[3]]);
        const i64 y0 = oh * sy, y1 = y0 + sy, x0 = ow * sx, x1 = x0 + sx;
        i64 ylo, yhi, xlo, xhi;
        in_bounds_run(s.ay, y0, y1, p.out_offset, p.in_offset, p.in_h, ylo, yhi);
        in_bounds_run(s.ax, x0, x1, p.out_offset, p.in_offset, p.in_w, xlo, xhi);
        if (ylo >= yhi || xlo >= xhi) continue;  // no sample in bounds: no gradient (MAX: 0 wins)
        if (!MAX) {
            if (!p.has_x || g == 0.0) continue;  // the ROI gradient only (the reference: g != 0)
            g = g / (double)(sy * sx);
            for (i64 jy = ylo; jy < yhi; ++jy) {
                const Tap ty = make_tap<LINEAR>(s.ay, jy, p.out_offset, p.in_offset, p.in_h);
                if (!ty.in_bounds) continue;
                for (i64 jx = xlo; jx < xhi; ++jx) {
                    const Tap tx = make_tap<LINEAR>(s.ax, jx, p.out_offset, p.in_offset, p.in_w);
                    if (tx.in_bounds) roi_gradient_sample<T>(plane, p, s, jy, jx, g, oh, ow, acc);
                }
            }
            continue;
        }
        // MAX: the forward's pick over the visited samples (a sample not in bounds competes as 0) ...
        float best = max_start((const float*)nullptr);
        i64 py = -1, px = -1;
        bool live = false;
        for (i64 jy = ylo; jy < yhi; ++jy) {
            const Tap ty = make_tap<LINEAR>(s.ay, jy, p.out_offset, p.in_offset, p.in_h);
            for (i64 jx = xlo; jx < xhi; ++jx) {
                const Tap tx = make_tap<LINEAR>(s.ax, jx, p.out_offset, p.in_offset, p.in_w);
                const bool ok = ty.in_bounds && tx.in_bounds;
                const float v = ok ? grad_sample_value<T>(plane, p, ty, tx) : 0.0f;
                if (v > best) {  // strictly greater: NaN never wins, the first of equals stays
                    best = v, py = jy, px = jx, live = ok;
                }
            }
        }
        // ... and the skipped (out-of-bounds) samples, each 0: the first of them in row-major
        // order, position (jy - y0) * sX + (jx - x0), wins over an equal pick after it.
        i64 first_skipped = -1;
        if (ylo > y0 || xlo > x0) {
            first_skipped = 0;
        } else if (xhi < x1) {
            first_skipped = xhi - x0;
        } else if (yhi < y1) {
            first_skipped = (yhi - y0) * sx;
        }
        if (first_skipped >= 0) {
            if (py < 0 || 0.0f > best || (0.0f == best && first_skipped < (py - y0) * sx + (px - x0))) live = false;
        }
        if (!live || py < 0) continue;
        pick[(r * p.channels + c) * bins + bin] = (py - y0) * sx + (px - x0);
        if (p.has_x && g != 0.0) roi_gradient_sample<T>(plane, p, s, py, px, g, oh, ow, acc);
    }
    // The block's ROI-gradient sums: a fixed tree over the threads' partials.
#pragma unroll
    for (int k = 0; k < 4; ++k) part[k][threadIdx.x] = acc[k];
    __syncthreads();
    for (int half = ROI_GRAD_THREADS / 2; half > 0; half >>= 1) {
        if ((int)threadIdx.x < half) {
#pragma unroll
            for (int k = 0; k < 4; ++k) part[k][threadIdx.x] += part[k][threadIdx.x + half];
        }
        __syncthreads();
    }
    if (threadIdx.x < 4) droi[r * 4 + threadIdx.x] = part[threadIdx.x][0];
}

// The float64 gradients rounded once: float32 directly; FLOAT16 through float32 rounded to
// odd, which then rounds to half as float64 -> half would (round-to-odd keeps the 13 extra
// bits' verdict), as NumPy does.
__device__ __forceinline__ float to_float_odd(double d) {
    float f = __double2float_rz(d);
    if ((double)f != d && f == f) {
        u32 bits = __float_as_uint(f);
        bits |= 1u;
        f = __uint_as_float(bits);
    }
    return f;
}
template <typename T> __device__ __forceinline__ T round_from_double(double d);
template <> __device__ __forceinline__ float round_from_double<float>(double d) { return __double2float_rn(d); }
template <> __device__ __forceinline__ half_t round_from_double<half_t>(double d) { return f2h(to_float_odd(d)); }

// The samples [lo, hi) of an axis's in-bounds run whose taps may touch pixel `pix`: those
// whose first tap is pix - 1 or pix (the second tap is the first or the next pixel). The
// first tap is monotonic over the run (`rising`: non-decreasing), so two bisections.
template <bool LINEAR>
__device__ __forceinline__ void touching_run(const AxisSetup& a, i64 lo, i64 hi, i64 pix, bool rising, double out_offset,
                                             double in_offset, i64 length, i64& j0, i64& j1) {
    // rising: [first >= pix - 1, first > pix); falling: [first <= pix, first < pix - 1)
    i64 l = lo, h = hi;
    while (l < h) {
        const i64 m = l + (h - l) / 2;
        const i64 f = make_tap<LINEAR>(a, m, out_offset, in_offset, length).first;
        if (rising ? f < pix - 1 : f > pix) l = m + 1; else h = m;
    }
    j0 = l;
    h = hi;
    while (l < h) {
        const i64 m = l + (h - l) / 2;
        const i64 f = make_tap<LINEAR>(a, m, out_offset, in_offset, length).first;
        if (rising ? f <= pix : f >= pix - 1) l = m + 1; else h = m;
    }
    j1 = l;
}

// The weight of pixel `pix` in a sample's taps (first: 1 - w, second: w; both when they coincide).
__device__ __forceinline__ double tap_weight(const Tap& t, i64 pix, bool linear) {
    const double w = linear ? (double)(float)t.weight : 0.0;
    return (t.first == pix ? 1.0 - w : 0.0) + (t.second == pix ? w : 0.0);
}

struct GradRoi {
    RoiSetup s;
    i64 ylo, yhi, xlo, xhi;  // the in-bounds runs of the whole axes
    i64 h0, h1, w0, w1;      // the tap span, ends included
    bool rise_y, rise_x;
};

template <typename T, typename BI, bool MAX, bool LINEAR>
__global__ void __launch_bounds__(ROI_GRAD_THREADS)
    roi_align_grad_input(const T* __restrict__ dy, const T* __restrict__ rois, const BI* __restrict__ batch,
                         const i64* __restrict__ pick, double* __restrict__ acc, T* __restrict__ dx,
                         const RoiParams p) {
    __shared__ GradRoi roi;
    const i64 planes = p.batch_count * p.channels, hw = p.in_h * p.in_w;
    const i64 bins = p.out_h * p.out_w;
    for (i64 plane = blockIdx.x; plane < planes; plane += gridDim.x) {
        const i64 b = plane / p.channels, c = plane - b * p.channels;
        double* sum = acc + plane * hw;
        for (i64 r = 0; r < p.num_rois; ++r) {
            const u64 raw = (u64)batch[r * p.bi_stride];
            if ((raw < (u64)p.batch_count ? (i64)raw : p.batch_count - 1) != b) continue;  // roi_setup's clamp; uniform
            if (threadIdx.x == 0) {
                GradRoi g;
                g.s = roi_setup(rois, batch, r, p);
                in_bounds_run(g.s.ay, 0, p.out_h * g.s.ay.samples, p.out_offset, p.in_offset, p.in_h, g.ylo, g.yhi);
                in_bounds_run(g.s.ax, 0, p.out_w * g.s.ax.samples, p.out_offset, p.in_offset, p.in_w, g.xlo, g.xhi);
                g.h0 = 0, g.h1 = -1, g.w0 = 0, g.w1 = -1, g.rise_y = g.rise_x = true;
                if (g.ylo < g.yhi && g.xlo < g.xhi) {
                    const Tap ya = make_tap<LINEAR>(g.s.ay, g.ylo, p.out_offset, p.in_offset, p.in_h);
                    const Tap yb = make_tap<LINEAR>(g.s.ay, g.yhi - 1, p.out_offset, p.in_offset, p.in_h);
                    const Tap xa = make_tap<LINEAR>(g.s.ax, g.xlo, p.out_offset, p.in_offset, p.in_w);
                    const Tap xb = make_tap<LINEAR>(g.s.ax, g.xhi - 1, p.out_offset, p.in_offset, p.in_w);
                    g.h0 = ya.first < yb.first ? ya.first : yb.first;
                    g.h1 = ya.second > yb.second ? ya.second : yb.second;
                    g.w0 = xa.first < xb.first ? xa.first : xb.first;
                    g.w1 = xa.second > xb.second ? xa.second : xb.second;
                    g.rise_y = yb.first >= ya.first;
                    g.rise_x = xb.first >= xa.first;
                }
                roi = g;
            }
            __syncthreads();
            const GradRoi g = roi;
            const i64 sy = g.s.ay.samples, sx = g.s.ax.samples;
            const i64 span_w = g.w1 - g.w0 + 1, span = (g.h1 - g.h0 + 1) * span_w;  // 0 when no sample is in bounds
            for (i64 k = threadIdx.x; k < span; k += blockDim.x) {
                const i64 hh = g.h0 + k / span_w, ww = g.w0 + k % span_w;
                i64 a0, a1, e0, e1;
                touching_run<LINEAR>(g.s.ay, g.ylo, g.yhi, hh, g.rise_y, p.out_offset, p.in_offset, p.in_h, a0, a1);
                touching_run<LINEAR>(g.s.ax, g.xlo, g.xhi, ww, g.rise_x, p.out_offset, p.in_offset, p.in_w, e0, e1);
                double part = 0.0;  // this ROI's share of the pixel, sample rows then columns (the reference's einsum order)
                for (i64 jy = a0; jy < a1; ++jy) {
                    const Tap ty = make_tap<LINEAR>(g.s.ay, jy, p.out_offset, p.in_offset, p.in_h);
                    const double wy = tap_weight(ty, hh, LINEAR);
                    if (!ty.in_bounds || wy == 0.0) continue;
                    const i64 oh = jy / sy;
                    for (i64 jx = e0; jx < e1; ++jx) {
                        const Tap tx = make_tap<LINEAR>(g.s.ax, jx, p.out_offset, p.in_offset, p.in_w);
                        const double wx = tap_weight(tx, ww, LINEAR);
                        if (!tx.in_bounds || wx == 0.0) continue;
                        const i64 ow = jx / sx;
                        // MAX: only the picked sample of output (oh, ow) has a share
                        const i64 sample = (jy - oh * sy) * sx + (jx - ow * sx);
                        if (MAX && pick[(r * p.channels + c) * bins + oh * p.out_w + ow] != sample) continue;
                        const double d = (double)Num<T>::to_acc(
                            dy[r * p.y_stride[0] + c * p.y_stride[1] + oh * p.y_stride[2] + ow * p.y_stride[3]]);
                        const double share = MAX ? d : d / (double)(sy * sx);  // AVERAGE: dy / (sY sX)
                        part += wy * share * wx;
                    }
                }
                sum[hh * p.in_w + ww] += part;
            }
            __syncthreads();  // the sums and `roi` are the next ROI's
        }
        for (i64 k = threadIdx.x; k < hw; k += blockDim.x) {
            const i64 hh = k / p.in_w, ww = k - hh * p.in_w;
            dx[b * p.dx_stride[0] + c * p.dx_stride[1] + hh * p.dx_stride[2] + ww * p.dx_stride[3]] =
                round_from_double<T>(sum[k]);
        }
    }
}

// The float64 ROI gradient (packed) rounded once into OutputROIGradientTensor (up to 4
// dimensions, any strides).
struct RoiStoreParams {
    i64 count;
    i64 sizes[4];
    i64 strides[4];
};

template <typename T>
__global__ void __launch_bounds__(256) roi_grad_store(const double* __restrict__ src, T* __restrict__ dst,
                                                      const RoiStoreParams p) {
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < p.count; i += (i64)gridDim.x * blockDim.x) {
        i64 rest = i, off = 0;
#pragma unroll
        for (int d = 3; d >= 0; --d) {
            const i64 k = rest % p.sizes[d];
            rest /= p.sizes[d];
            off += k * p.strides[d];
        }
        dst[off] = round_from_double<T>(src[i]);
    }
}
