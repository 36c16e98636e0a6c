// tests/gpu/dram_ceiling.cu — the DRAM traffic a plain program reaches on this GPU, the
// ceiling for kprof capture's memory-bound workloads (tests/gpu/workloads_vs_torch.py prints
// it beside them).  For each size in MiB of one tensor (arguments; default 512 and 1024):
// cudaMemcpyAsync device to device, a copy kernel (1 read : 1 write, the forwards' pattern),
// a kernel reading two tensors and writing one (the backwards'), a read-only pass, and the
// copy kernel again with default-cached and L2-only loads and stores (the others stream, as
// kprof's kernels do); each kernel the best over a few launch shapes (16-byte vectors, U
// vectors a thread in flight, a grid-stride loop over B blocks of 256 an SM), timed with CUDA
// events over 20 calls after 3.  GB/s counts bytes read plus bytes written; % is of the DRAM
// peak from the memory clock and bus width (the peak capture prints).
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(x)                                                                                      \
	do {                                                                                       \
		cudaError_t e_ = (x);                                                              \
		if (e_ != cudaSuccess) {                                                           \
			fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                   \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

enum { K_COPY, K_R2W1, K_READ };

/* cache policy of the loads and stores: 0 streaming (ld.cs / st.cs, as kprof's kernels), 1 the
 * defaults, 2 L2 only (ld.cg / st.cg) */
template <int P> __device__ __forceinline__ uint4 ld(const uint4 *p)
{
	return P == 0 ? __ldcs(p) : P == 2 ? __ldcg(p) : *p;
}
template <int P> __device__ __forceinline__ void st(uint4 *p, uint4 v)
{
	if (P == 0)
		__stcs(p, v);
	else if (P == 2)
		__stcg(p, v);
	else
		*p = v;
}

template <int K, int U, int P = 0>
__global__ void __launch_bounds__(256) mem_kernel(uint4 *o, const uint4 *a, const uint4 *b, long n)
{
	long stride = (long)gridDim.x * blockDim.x * U;
	unsigned acc = 0;
	for (long base = (long)blockIdx.x * blockDim.x * U + threadIdx.x; base < n;
	     base += stride) {
		uint4 va[U], vb[U];
#pragma unroll
		for (int u = 0; u < U; u++) {
			long i = base + (long)u * blockDim.x;
			va[u] = i < n ? ld<P>(a + i) : make_uint4(0, 0, 0, 0);
			if (K == K_R2W1)
				vb[u] = i < n ? ld<P>(b + i) : make_uint4(0, 0, 0, 0);
		}
#pragma unroll
		for (int u = 0; u < U; u++) {
			long i = base + (long)u * blockDim.x;
			if (K == K_READ) {
				acc ^= va[u].x ^ va[u].y ^ va[u].z ^ va[u].w;
			} else if (i < n) {
				uint4 v = va[u];
				if (K == K_R2W1)
					v.x += vb[u].x, v.y += vb[u].y, v.z += vb[u].z,
						v.w += vb[u].w;
				st<P>(o + i, v);
			}
		}
	}
	if (K == K_READ && acc == 0x9e3779b9u) /* keeps the loads; practically never true */
		o[0] = make_uint4(acc, 0, 0, 0);
}

static double time_ms(cudaEvent_t e0, cudaEvent_t e1, void (*fn)(void *), void *ctx)
{
	for (int i = 0; i < 3; i++)
		fn(ctx);
	CK(cudaEventRecord(e0, 0));
	for (int i = 0; i < 20; i++)
		fn(ctx);
	CK(cudaEventRecord(e1, 0));
	CK(cudaEventSynchronize(e1));
	float ms = 0;
	CK(cudaEventElapsedTime(&ms, e0, e1));
	CK(cudaGetLastError());
	return ms / 20;
}

struct run {
	uint4 *o, *a, *b;
	long n;
	int kind, u, blocks, pol;
};

static void launch(void *p)
{
	struct run *r = (struct run *)p;
	dim3 g((unsigned)r->blocks), t(256);
#define L(K, U) mem_kernel<K, U><<<g, t>>>(r->o, r->a, r->b, r->n)
#define BY_U(K) (r->u == 1 ? L(K, 1) : r->u == 2 ? L(K, 2) : r->u == 4 ? L(K, 4) : L(K, 8))
	if (r->kind == K_COPY && r->pol == 1)
		r->u == 4 ? mem_kernel<K_COPY, 4, 1><<<g, t>>>(r->o, r->a, r->b, r->n)
			  : mem_kernel<K_COPY, 1, 1><<<g, t>>>(r->o, r->a, r->b, r->n);
	else if (r->kind == K_COPY && r->pol == 2)
		r->u == 4 ? mem_kernel<K_COPY, 4, 2><<<g, t>>>(r->o, r->a, r->b, r->n)
			  : mem_kernel<K_COPY, 1, 2><<<g, t>>>(r->o, r->a, r->b, r->n);
	else if (r->kind == K_COPY)
		BY_U(K_COPY);
	else if (r->kind == K_R2W1)
		BY_U(K_R2W1);
	else
		BY_U(K_READ);
#undef BY_U
#undef L
}

static void memcpy_fn(void *p)
{
	struct run *r = (struct run *)p;
	CK(cudaMemcpyAsync(r->o, r->a, (size_t)r->n * 16, cudaMemcpyDeviceToDevice, 0));
}

int main(int argc, char **argv)
{
	int dev = 0, khz = 0, bits = 0, sms = 0;
	CK(cudaGetDevice(&dev));
	CK(cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, dev));
	CK(cudaDeviceGetAttribute(&bits, cudaDevAttrGlobalMemoryBusWidth, dev));
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
	double peak = 2.0 * khz * 1e3 * bits / 8 / 1e9;
	cudaEvent_t e0, e1;
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	printf("# DRAM peak %.0f GB/s; GB/s = bytes read + written; best launch: U vectors a "
	       "thread x B blocks an SM\n",
	       peak);
	printf("%8s %-10s %9s %9s %6s  %s\n", "MiB", "pattern", "ms", "GB/s", "%peak", "best");
	int nsz = argc > 1 ? argc - 1 : 2;
	for (int k = 0; k < nsz; k++) {
		long mib = argc > 1 ? atol(argv[k + 1]) : (k ? 1024 : 512);
		struct run r = { NULL, NULL, NULL, mib << 16, 0, 0, 0, 0 };
		CK(cudaMalloc(&r.o, (size_t)r.n * 16));
		CK(cudaMalloc(&r.a, (size_t)r.n * 16));
		CK(cudaMalloc(&r.b, (size_t)r.n * 16));
		CK(cudaMemset(r.a, 1, (size_t)r.n * 16));
		CK(cudaMemset(r.b, 2, (size_t)r.n * 16));
		double bytes1 = (double)r.n * 16;
		double ms = time_ms(e0, e1, memcpy_fn, &r);
		printf("%8ld %-10s %9.4f %9.1f %5.1f%%  cudaMemcpyAsync\n", mib, "memcpy", ms,
		       2 * bytes1 / ms / 1e6, 100 * 2 * bytes1 / ms / 1e6 / peak);
		static const char *names[] = { "copy", "read2write1", "read" };
		static const double mult[] = { 2, 3, 1 };
		static const char *pols[] = { "", " default-cache", " L2-only" };
		for (int kp = 0; kp < 5; kp++) {
			int kind = kp < 3 ? kp : K_COPY, pol = kp < 3 ? 0 : kp - 2;
			double best = 1e30;
			int bu = 0, bb = 0;
			for (int u = 1; u <= 8; u *= (pol ? 4 : 2))
				for (int bl = 2; bl <= 16; bl *= 2) {
					r.kind = kind, r.u = u, r.blocks = bl * sms, r.pol = pol;
					double t = time_ms(e0, e1, launch, &r);
					if (t < best)
						best = t, bu = u, bb = bl;
				}
			double gbs = mult[kind] * bytes1 / best / 1e6;
			printf("%8ld %-10s %9.4f %9.1f %5.1f%%  U=%d B=%d%s\n", mib, names[kind],
			       best, gbs, 100 * gbs / peak, bu, bb, pols[pol]);
		}
		CK(cudaFree(r.o));
		CK(cudaFree(r.a));
		CK(cudaFree(r.b));
	}
	return 0;
}
