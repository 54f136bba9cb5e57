"""Read bandwidth of the GPU's L2 cache, for the ROI_ALIGN sector-footprint bound.

``python3 bench/l2_bandwidth.py`` streams 16-32 MiB buffers (L2-resident on an H100's
50 MiB L2) many times with 16-byte ``ld.global.cg`` loads (cached in L2 only) and a 2 GiB
buffer once (DRAM), and prints the read rate of each: the best case of L2-to-SM traffic,
against which docs/performance.md sets the workload's sector footprint
(``bench/roi_workload.py``).
"""

from __future__ import annotations

import cupy as cp

SOURCE = r"""
extern "C" __global__ void read_all(const float4* __restrict__ a, long long n4, int passes, float* out) {
    float s = 0.f;
    const long long tid = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    const long long step = (long long)gridDim.x * blockDim.x;
    for (int p = 0; p < passes; ++p)
        for (long long i = tid; i < n4; i += step) {
            const float4 v = __ldcg(a + i);
            s += v.x + v.y + v.z + v.w;
        }
    out[tid] = s;
}
"""


def main() -> None:
    kernel = cp.RawKernel(SOURCE, "read_all")
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    blocks, threads = sms * 8, 256
    out = cp.empty(blocks * threads, cp.float32)
    for mib in (16, 24, 32, 2048):
        a = cp.random.random(mib * 2**20 // 4, dtype=cp.float32)
        passes = max(1, 2048 // mib)
        args = (a, cp.int64(a.size // 4), cp.int32(passes), out)
        kernel((blocks,), (threads,), args)
        times = []
        for _ in range(5):
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            kernel((blocks,), (threads,), args)
            end.record()
            end.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, end) / 1e3)
        t = sorted(times)[len(times) // 2]
        print(f"{mib} MiB read {passes} times: {a.nbytes * passes / t / 1e12:.2f} TB/s", flush=True)


if __name__ == "__main__":
    main()
