// ROI_ALIGN: one block per (ROI, group of channels); threads over (channel, bin row,
// bin column) of the group, so a warp reads nearby taps of one input plane. The ROI is
// the fastest-varying block index: all ROIs of one channel group run together, so the
// input planes they share stay in L2 instead of being fetched once per ROI.
//
// Per block, the sample coordinates of the ROI along each axis are computed once into
// shared memory (tap indices, weight, in-bounds flag), following
// dmlops.reference.roi_align exactly: float64 coordinates formed one correctly
// rounded operation at a time (no FMA contraction: __dmul_rn/__dadd_rn), ruling 5's
// sample counts, ruling 6's out-of-bounds test and clamping, ruling 4's nearest rule
// floor(x + 0.5). When an axis has more samples than the tables hold (huge adaptive
// counts), its coordinates are computed per sample instead.
// Interpolation and the reduction run in Num<T>::Acc (float32 for FLOAT16), rounded once.
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
};

struct AxisSetup {
    double start, step;
    i64 samples;
};

__device__ __forceinline__ AxisSetup axis_setup(double lo, double hi, double scale, i64 n_out, i64 mn, i64 mx) {
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
    a.start = start;
    a.step = size / (double)(n_out * a.samples);
    return a;
}

struct Tap {
    i32 first, second;
    float weight;
    bool in_bounds;
};

template <bool LINEAR>
__device__ __forceinline__ Tap make_tap(const AxisSetup& a, i64 j, double out_offset, double in_offset, i64 length) {
    // coord = ((j - OutputPixelOffset) * step + start) - InputPixelOffset, rounded per op.
    const double coord = __dadd_rn(__dadd_rn(__dmul_rn(__dadd_rn((double)j, -out_offset), a.step), a.start), -in_offset);
    Tap t;
    t.in_bounds = coord >= -1.0 && coord <= (double)length;
    double c = t.in_bounds ? coord : 0.0;
    c = fmin(fmax(c, 0.0), (double)(length - 1));
    if (LINEAR) {
        const double f = floor(c);
        t.first = (i32)f;
        t.second = t.first + 1 < length ? t.first + 1 : (i32)(length - 1);
        t.weight = (float)(c - f);
    } else {
        t.first = (i32)floor(__dadd_rn(c, 0.5));
        t.second = t.first;
        t.weight = 0.0f;
    }
    return t;
}

template <typename Acc> __device__ __forceinline__ Acc lerp(Acc a, Acc b, Acc w) {
    // (1 - w) a + w b with zero-weight taps skipped (no 0 * inf), as the reference.
    const Acc left = w == Acc(1) ? Acc(0) : (Acc(1) - w) * a;
    const Acc right = w == Acc(0) ? Acc(0) : w * b;
    return left + right;
}

template <typename T, typename BI, bool MAX, bool LINEAR>
__global__ void __launch_bounds__(256) roi_align(const T* __restrict__ x, const T* __restrict__ rois,
                                                 const BI* __restrict__ batch, T* __restrict__ y, const RoiParams p) {
    typedef typename Num<T>::Acc Acc;
    __shared__ i32 sx_first[ROI_TABLE], sx_second[ROI_TABLE], sy_first[ROI_TABLE], sy_second[ROI_TABLE];
    __shared__ float sx_w[ROI_TABLE], sy_w[ROI_TABLE];
    __shared__ bool sx_in[ROI_TABLE], sy_in[ROI_TABLE];

    const i64 r = blockIdx.x;
    const T* roi = rois + r * p.roi_stride[0];
    const double x1 = (double)Num<T>::to_acc(roi[0]);
    const double y1 = (double)Num<T>::to_acc(roi[p.roi_stride[1]]);
    const double x2 = (double)Num<T>::to_acc(roi[2 * p.roi_stride[1]]);
    const double y2 = (double)Num<T>::to_acc(roi[3 * p.roi_stride[1]]);
    const AxisSetup ax = axis_setup(x1, x2, p.scale_x, p.out_w, p.min_samples, p.max_samples);
    const AxisSetup ay = axis_setup(y1, y2, p.scale_y, p.out_h, p.min_samples, p.max_samples);
    const i64 nx = p.out_w * ax.samples, ny = p.out_h * ay.samples;
    const bool x_table = nx <= ROI_TABLE, y_table = ny <= ROI_TABLE;
    if (x_table) {
        for (i64 j = threadIdx.x; j < nx; j += blockDim.x) {
            const Tap t = make_tap<LINEAR>(ax, j, p.out_offset, p.in_offset, p.in_w);
            sx_first[j] = t.first;
            sx_second[j] = t.second;
            sx_w[j] = t.weight;
            sx_in[j] = t.in_bounds;
        }
    }
    if (y_table) {
        for (i64 j = threadIdx.x; j < ny; j += blockDim.x) {
            const Tap t = make_tap<LINEAR>(ay, j, p.out_offset, p.in_offset, p.in_h);
            sy_first[j] = t.first;
            sy_second[j] = t.second;
            sy_w[j] = t.weight;
            sy_in[j] = t.in_bounds;
        }
    }
    __syncthreads();

    // Batch indices were checked on the host side (DataIndexError); clamp anyway so no
    // value can read outside the input.
    const u64 raw = (u64)batch[r * p.bi_stride];
    const i64 b = raw < (u64)p.batch_count ? (i64)raw : p.batch_count - 1;
    const i64 c0 = (i64)blockIdx.y * p.channels_per_block;
    const int bins = (int)(p.out_h * p.out_w);
    const int out_w = (int)p.out_w;
    const int work = (int)p.channels_per_block * bins;
    const Acc oob = (Acc)p.oob;
    const i64 total = ax.samples * ay.samples;
    for (int t = threadIdx.x; t < work; t += blockDim.x) {
        const int cl = t / bins;
        const int bin = t - cl * bins;
        const i64 c = c0 + cl;
        if (c >= p.channels) break;
        const int oh = bin / out_w;
        const int ow = bin - oh * out_w;
        const T* plane = x + b * p.x_stride[0] + c * p.x_stride[1];
        Acc acc = MAX ? -Acc(1) / Acc(0) : Acc(0);  // -inf for MAX
        i64 inside = 0;
        for (i64 jy = oh * ay.samples; jy < (oh + 1) * ay.samples; ++jy) {
            Tap ty;
            if (y_table) {
                ty.first = sy_first[jy];
                ty.second = sy_second[jy];
                ty.weight = sy_w[jy];
                ty.in_bounds = sy_in[jy];
            } else {
                ty = make_tap<LINEAR>(ay, jy, p.out_offset, p.in_offset, p.in_h);
            }
            const T* row0 = plane + ty.first * p.x_stride[2];
            const T* row1 = plane + ty.second * p.x_stride[2];
            for (i64 jx = ow * ax.samples; jx < (ow + 1) * ax.samples; ++jx) {
                Tap tx;
                if (x_table) {
                    tx.first = sx_first[jx];
                    tx.second = sx_second[jx];
                    tx.weight = sx_w[jx];
                    tx.in_bounds = sx_in[jx];
                } else {
                    tx = make_tap<LINEAR>(ax, jx, p.out_offset, p.in_offset, p.in_w);
                }
                Acc v;
                const bool ok = ty.in_bounds && tx.in_bounds;
                if (!ok) {
                    v = oob;
                } else if (LINEAR) {
                    const i64 xa = tx.first * p.x_stride[3], xb = tx.second * p.x_stride[3];
                    const Acc wy = (Acc)ty.weight, wx = (Acc)tx.weight;
                    const Acc r0 = lerp<Acc>(Num<T>::to_acc(row0[xa]), Num<T>::to_acc(row1[xa]), wy);
                    const Acc r1 = lerp<Acc>(Num<T>::to_acc(row0[xb]), Num<T>::to_acc(row1[xb]), wy);
                    v = lerp<Acc>(r0, r1, wx);
                } else {
                    v = Num<T>::to_acc(row0[tx.first * p.x_stride[3]]);
                }
                if (MAX) {
                    if (!(acc != acc) && !(v <= acc)) acc = v;  // NaN propagates and stays
                } else if (ok) {
                    acc += v;
                    ++inside;
                }
            }
        }
        Acc result;
        if (MAX) {
            result = acc;
        } else if (inside == 0) {
            result = oob;  // every sample out of bounds: exactly OutOfBoundsInputValue
        } else {
            // Out-of-bounds samples count in the mean with OutOfBoundsInputValue.
            const i64 outside = total - inside;
            if (outside > 0) acc += (Acc)outside * oob;
            result = acc / (Acc)total;
        }
        y[r * p.y_stride[0] + c * p.y_stride[1] + oh * p.y_stride[2] + ow * p.y_stride[3]] = Num<T>::from_acc(result);
    }
}

// ROI_ALIGN with channels across the lanes of a warp, for inputs whose channel stride is 1
// (NHWC-strided). One block per (ROI, group of 32 channels); the sample tables are built once per block exactly as in roi_align; each
// warp takes whole bins, each lane one channel, so every tap load of a warp reads 32
// consecutive channels of one pixel (coalesced). The per-channel arithmetic (sample
// order, lerp, the reduction, out-of-bounds handling) is roi_align's. Results go through
// shared memory so that the NCHW output tile of the block is written contiguously.
#define ROI_STAGE 2048
#define ROI_TABLE_CL 512  // smaller tables than roi_align: more blocks per multiprocessor

template <typename T, typename BI, bool MAX, bool LINEAR>
__global__ void __launch_bounds__(256) roi_align_cl(const T* __restrict__ x, const T* __restrict__ rois,
                                                    const BI* __restrict__ batch, T* __restrict__ y, const RoiParams p) {
    typedef typename Num<T>::Acc Acc;
    __shared__ i32 sx_first[ROI_TABLE_CL], sx_second[ROI_TABLE_CL], sy_first[ROI_TABLE_CL], sy_second[ROI_TABLE_CL];
    __shared__ float sx_w[ROI_TABLE_CL], sy_w[ROI_TABLE_CL];
    __shared__ bool sx_in[ROI_TABLE_CL], sy_in[ROI_TABLE_CL];
    __shared__ T sout[ROI_STAGE];

    const i64 r = blockIdx.x;
    const T* roi = rois + r * p.roi_stride[0];
    const double x1 = (double)Num<T>::to_acc(roi[0]);
    const double y1 = (double)Num<T>::to_acc(roi[p.roi_stride[1]]);
    const double x2 = (double)Num<T>::to_acc(roi[2 * p.roi_stride[1]]);
    const double y2 = (double)Num<T>::to_acc(roi[3 * p.roi_stride[1]]);
    const AxisSetup ax = axis_setup(x1, x2, p.scale_x, p.out_w, p.min_samples, p.max_samples);
    const AxisSetup ay = axis_setup(y1, y2, p.scale_y, p.out_h, p.min_samples, p.max_samples);
    const i64 nx = p.out_w * ax.samples, ny = p.out_h * ay.samples;
    const bool x_table = nx <= ROI_TABLE_CL, y_table = ny <= ROI_TABLE_CL;
    if (x_table) {
        for (i64 j = threadIdx.x; j < nx; j += blockDim.x) {
            const Tap t = make_tap<LINEAR>(ax, j, p.out_offset, p.in_offset, p.in_w);
            sx_first[j] = t.first;
            sx_second[j] = t.second;
            sx_w[j] = t.weight;
            sx_in[j] = t.in_bounds;
        }
    }
    if (y_table) {
        for (i64 j = threadIdx.x; j < ny; j += blockDim.x) {
            const Tap t = make_tap<LINEAR>(ay, j, p.out_offset, p.in_offset, p.in_h);
            sy_first[j] = t.first;
            sy_second[j] = t.second;
            sy_w[j] = t.weight;
            sy_in[j] = t.in_bounds;
        }
    }
    __syncthreads();

    const u64 raw = (u64)batch[r * p.bi_stride];
    const i64 b = raw < (u64)p.batch_count ? (i64)raw : p.batch_count - 1;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    const i64 c = (i64)blockIdx.y * 32 + lane;
    const int bins = (int)(p.out_h * p.out_w);
    const int out_w = (int)p.out_w;
    const bool stage = bins * 32 <= ROI_STAGE;
    const Acc oob = (Acc)p.oob;
    const i64 total = ax.samples * ay.samples;
    const T* base = x + b * p.x_stride[0] + c * p.x_stride[1];
    for (int bin = warp; bin < bins; bin += warps) {
        const int oh = bin / out_w;
        const int ow = bin - oh * out_w;
        if (c < p.channels) {
            Acc acc = MAX ? -Acc(1) / Acc(0) : Acc(0);  // -inf for MAX
            i64 inside = 0;
            for (i64 jy = oh * ay.samples; jy < (oh + 1) * ay.samples; ++jy) {
                Tap ty;
                if (y_table) {
                    ty.first = sy_first[jy];
                    ty.second = sy_second[jy];
                    ty.weight = sy_w[jy];
                    ty.in_bounds = sy_in[jy];
                } else {
                    ty = make_tap<LINEAR>(ay, jy, p.out_offset, p.in_offset, p.in_h);
                }
                const T* row0 = base + ty.first * p.x_stride[2];
                const T* row1 = base + ty.second * p.x_stride[2];
                for (i64 jx = ow * ax.samples; jx < (ow + 1) * ax.samples; ++jx) {
                    Tap tx;
                    if (x_table) {
                        tx.first = sx_first[jx];
                        tx.second = sx_second[jx];
                        tx.weight = sx_w[jx];
                        tx.in_bounds = sx_in[jx];
                    } else {
                        tx = make_tap<LINEAR>(ax, jx, p.out_offset, p.in_offset, p.in_w);
                    }
                    Acc v;
                    const bool ok = ty.in_bounds && tx.in_bounds;
                    if (!ok) {
                        v = oob;
                    } else if (LINEAR) {
                        const i64 xa = tx.first * p.x_stride[3], xb = tx.second * p.x_stride[3];
                        const Acc wy = (Acc)ty.weight, wx = (Acc)tx.weight;
                        const Acc r0 = lerp<Acc>(Num<T>::to_acc(row0[xa]), Num<T>::to_acc(row1[xa]), wy);
                        const Acc r1 = lerp<Acc>(Num<T>::to_acc(row0[xb]), Num<T>::to_acc(row1[xb]), wy);
                        v = lerp<Acc>(r0, r1, wx);
                    } else {
                        v = Num<T>::to_acc(row0[tx.first * p.x_stride[3]]);
                    }
                    if (MAX) {
                        if (!(acc != acc) && !(v <= acc)) acc = v;  // NaN propagates and stays
                    } else if (ok) {
                        acc += v;
                        ++inside;
                    }
                }
            }
            Acc result;
            if (MAX) {
                result = acc;
            } else if (inside == 0) {
                result = oob;
            } else {
                const i64 outside = total - inside;
                if (outside > 0) acc += (Acc)outside * oob;
                result = acc / (Acc)total;
            }
            const T out = Num<T>::from_acc(result);
            if (stage) {
                sout[lane * bins + bin] = out;
            } else {
                y[r * p.y_stride[0] + c * p.y_stride[1] + oh * p.y_stride[2] + ow * p.y_stride[3]] = out;
            }
        }
    }
    if (stage) {
        __syncthreads();
        for (int e = threadIdx.x; e < 32 * bins; e += blockDim.x) {
            const int cl = e / bins, bin = e - (e / bins) * bins;
            const i64 ch = (i64)blockIdx.y * 32 + cl;
            if (ch < p.channels) {
                const int oh = bin / out_w, ow = bin - (bin / out_w) * out_w;
                y[r * p.y_stride[0] + ch * p.y_stride[1] + oh * p.y_stride[2] + ow * p.y_stride[3]] = sout[e];
            }
        }
    }
}
