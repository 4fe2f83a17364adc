// gpu_probe: measures, on one GPU, the figures gdrsim takes as GPU and copy-engine parameters:
// cudaMemcpy from and to pinned host memory (latency of a synchronous copy and bandwidth, by
// size), the launch cost of a kernel (queued back to back and as one launch-and-wait round trip
// from the host), device-to-device copy bandwidth, and the rate of a reduction kernel
// (dst[i] += src[i], two loads and one store per element: NCCL's reduce of a received slice).
//
// Build and run on a machine with a GPU: `scripts/device/run.sh` (nvcc -O3 -arch=sm_90).
// Output: one CSV line per measurement on stdout, `what,bytes,median_us,rate_GBps,reps`.
// Times are medians of `reps` timed repetitions after warm-ups; rates are bytes / median time
// (for the reduction: output bytes, i.e. the bytes of dst, per second).
#include <cuda_runtime.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                   \
  do {                                                                             \
    cudaError_t e = (x);                                                           \
    if (e != cudaSuccess) {                                                        \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x,               \
                   cudaGetErrorString(e));                                         \
      std::exit(1);                                                                \
    }                                                                              \
  } while (0)

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

static double now_us() {
  using namespace std::chrono;
  return duration<double, std::micro>(steady_clock::now().time_since_epoch()).count();
}

static void line(const char* what, size_t bytes, double us, int reps) {
  double rate = us > 0 ? (double)bytes / (us * 1e3) : 0.0;  // bytes per ns = GB/s
  std::printf("%s,%zu,%.3f,%.3f,%d\n", what, bytes, us, rate, reps);
  std::fflush(stdout);
}

__global__ void empty_kernel() {}

template <typename T>
__global__ void reduce_into(T* __restrict__ dst, const T* __restrict__ src, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (; i < n; i += stride) dst[i] = dst[i] + src[i];
}

// float4-wide variant: the vectorised loads a tuned reduction (NCCL's) uses.
__global__ void reduce_into_f4(float4* __restrict__ dst, const float4* __restrict__ src,
                               size_t n4) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (; i < n4; i += stride) {
    float4 a = dst[i], b = src[i];
    dst[i] = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
  }
}

// Kernel stores into / loads from pinned, mapped host memory over PCIe: NCCL's host path without
// GPUDirect (its kernels write the send FIFO in host memory and read the receive FIFO from it).
__global__ void store_to_host(float4* __restrict__ host, size_t n4) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (; i < n4; i += stride) host[i] = make_float4(1.f, 2.f, 3.f, (float)i);
}
__global__ void load_from_host(const float4* __restrict__ host, float4* __restrict__ dev,
                               size_t n4) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (; i < n4; i += stride) dev[i] = host[i];
}

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("# device,%s,cc%d.%d,sms=%d,pcie=%04x:%02x:%02x\n", prop.name, prop.major,
              prop.minor, prop.multiProcessorCount, prop.pciDomainID, prop.pciBusID,
              prop.pciDeviceID);
  std::printf("what,bytes,median_us,rate_GBps,reps\n");

  const size_t max_bytes = size_t(1) << 30;
  void* host = nullptr;
  CHECK(cudaHostAlloc(&host, max_bytes, cudaHostAllocDefault));
  std::fill((char*)host, (char*)host + max_bytes, 1);
  char* dev_a = nullptr;
  char* dev_b = nullptr;
  CHECK(cudaMalloc(&dev_a, max_bytes));
  CHECK(cudaMalloc(&dev_b, max_bytes));
  CHECK(cudaMemset(dev_a, 0, max_bytes));
  CHECK(cudaMemset(dev_b, 0, max_bytes));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));

  // 1. Synchronous cudaMemcpy, timed on the host clock as an application sees it (the staged
  // path's copy: post, DMA, wait).
  for (int dir = 0; dir < 2; ++dir) {
    const char* what = dir == 0 ? "memcpy_h2d_sync" : "memcpy_d2h_sync";
    for (size_t bytes = 8; bytes <= max_bytes; bytes *= 4) {
      int reps = bytes <= (1 << 20) ? 200 : (bytes <= (64 << 20) ? 20 : 5);
      std::vector<double> t;
      for (int r = 0; r < reps + 3; ++r) {
        double a = now_us();
        if (dir == 0)
          CHECK(cudaMemcpy(dev_a, host, bytes, cudaMemcpyHostToDevice));
        else
          CHECK(cudaMemcpy(host, dev_a, bytes, cudaMemcpyDeviceToHost));
        double b = now_us();
        if (r >= 3) t.push_back(b - a);
      }
      line(what, bytes, median(t), reps);
    }
  }

  // 2. Copy-engine bandwidth: back-to-back async copies timed by events (no host in the loop).
  for (int dir = 0; dir < 2; ++dir) {
    const char* what = dir == 0 ? "memcpy_h2d_stream" : "memcpy_d2h_stream";
    for (size_t bytes = 64 << 10; bytes <= max_bytes; bytes *= 4) {
      int per = (int)std::max<size_t>(1, (256u << 20) / bytes);
      per = std::min(per, 256);
      std::vector<double> t;
      for (int r = 0; r < 8; ++r) {
        CHECK(cudaEventRecord(e0, s));
        for (int k = 0; k < per; ++k) {
          if (dir == 0)
            CHECK(cudaMemcpyAsync(dev_a, host, bytes, cudaMemcpyHostToDevice, s));
          else
            CHECK(cudaMemcpyAsync(host, dev_a, bytes, cudaMemcpyDeviceToHost, s));
        }
        CHECK(cudaEventRecord(e1, s));
        CHECK(cudaEventSynchronize(e1));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, e0, e1));
        if (r >= 2) t.push_back(ms * 1e3 / per);
      }
      line(what, bytes, median(t), 6 * per);
    }
  }

  // 3. Kernel launch: queued back to back (GPU time per launch) and launch + wait from the host.
  {
    std::vector<double> t;
    for (int r = 0; r < 8; ++r) {
      const int n = 2000;
      CHECK(cudaEventRecord(e0, s));
      for (int k = 0; k < n; ++k) empty_kernel<<<1, 32, 0, s>>>();
      CHECK(cudaEventRecord(e1, s));
      CHECK(cudaEventSynchronize(e1));
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, e0, e1));
      if (r >= 2) t.push_back(ms * 1e3 / n);
    }
    line("launch_queued", 0, median(t), 6 * 2000);
    std::vector<double> u;
    for (int r = 0; r < 1003; ++r) {
      double a = now_us();
      empty_kernel<<<1, 32, 0, s>>>();
      CHECK(cudaStreamSynchronize(s));
      double b = now_us();
      if (r >= 3) u.push_back(b - a);
    }
    line("launch_sync_roundtrip", 0, median(u), 1000);
  }

  // 4. Device-to-device copy (bytes counted once: the bytes copied) and reductions.
  const int threads = 512;
  const int blocks = prop.multiProcessorCount * 4;
  for (size_t bytes = 64 << 10; bytes <= max_bytes; bytes *= 4) {
    int per = (int)std::min<size_t>(200, std::max<size_t>(5, (4ull << 30) / bytes));
    for (int kind = 0; kind < 4; ++kind) {
      const char* what = kind == 0   ? "copy_d2d"
                         : kind == 1 ? "reduce_f32"
                         : kind == 2 ? "reduce_f32x4"
                                     : "reduce_bf16";
      std::vector<double> t;
      for (int r = 0; r < 7; ++r) {
        CHECK(cudaEventRecord(e0, s));
        for (int k = 0; k < per; ++k) {
          if (kind == 0)
            CHECK(cudaMemcpyAsync(dev_b, dev_a, bytes, cudaMemcpyDeviceToDevice, s));
          else if (kind == 1)
            reduce_into<float><<<blocks, threads, 0, s>>>((float*)dev_b, (const float*)dev_a,
                                                          bytes / 4);
          else if (kind == 2)
            reduce_into_f4<<<blocks, threads, 0, s>>>((float4*)dev_b, (const float4*)dev_a,
                                                      bytes / 16);
          else
            reduce_into<__nv_bfloat16><<<blocks, threads, 0, s>>>(
                (__nv_bfloat16*)dev_b, (const __nv_bfloat16*)dev_a, bytes / 2);
        }
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(e1, s));
        CHECK(cudaEventSynchronize(e1));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, e0, e1));
        if (r >= 2) t.push_back(ms * 1e3 / per);
      }
      line(what, bytes, median(t), 5 * per);
    }
  }
  // 5. Kernels storing into and loading from mapped host memory (the same pinned buffer).
  float4* mapped = nullptr;
  CHECK(cudaHostGetDevicePointer((void**)&mapped, host, 0));
  for (size_t bytes = 64 << 10; bytes <= (256u << 20); bytes *= 4) {
    int per = (int)std::min<size_t>(200, std::max<size_t>(3, (1ull << 30) / bytes));
    for (int kind = 0; kind < 2; ++kind) {
      std::vector<double> t;
      for (int r = 0; r < 7; ++r) {
        CHECK(cudaEventRecord(e0, s));
        for (int k = 0; k < per; ++k) {
          if (kind == 0)
            store_to_host<<<blocks, threads, 0, s>>>(mapped, bytes / 16);
          else
            load_from_host<<<blocks, threads, 0, s>>>(mapped, (float4*)dev_b, bytes / 16);
        }
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(e1, s));
        CHECK(cudaEventSynchronize(e1));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, e0, e1));
        if (r >= 2) t.push_back(ms * 1e3 / per);
      }
      line(kind == 0 ? "kernel_store_host" : "kernel_load_host", bytes, median(t), 5 * per);
    }
  }
  return 0;
}
