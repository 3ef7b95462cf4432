/* The timing model's independent check: six fp32 GEMM kernels of a public step-by-step series.
 *
 * What it computes: C = alpha * A B + beta * C, fp32, row-major, A M x K, B K x N, C M x N, with M, N and
 * K multiples of 128 (the series' kernels assume whole tiles; bench/model_sgemm.py refuses other sizes).
 *
 * Where they come from: Simon Boehm's worklog "How to Optimize a CUDA Matmul Kernel for cuBLAS-like
 * Performance" (siboehm.com/articles/22/CUDA-MMM, repository siboehm/SGEMM_CUDA), which publishes each
 * kernel's GFLOP/s at 4096 x 4096 x 4096, measured on an NVIDIA RTX A6000. These are written here from the
 * worklog's descriptions of its kernels 1-6 (the tile sizes and thread mappings it states); its code is not
 * used. The model is never built or tuned on this series: it is kept to check the model afterwards
 * (emu/README.md, "The timing model", and bench/model_sgemm.py, which models each kernel on the A6000's
 * file and compares it with the published figure).
 *
 * Run (what bench/model_sgemm.py does):
 *   nvcc -ptx -arch=sm_86 bench/validation/sgemm_worklog.cu -o /tmp/sgemm.ptx
 *   ./build/emu/ptxrun /tmp/sgemm.ptx sgemm_naive --grid 8,8 --block 32,32 ... --model a6000
 */

/* 1, naive: one thread per element of C, thread x along C's rows, so the 32 threads of a warp read 32
 * different rows of A (32 transactions) and write 32 rows of C. Blocks of 32 x 32. */
extern "C" __global__ void sgemm_naive(int M, int N, int K, float alpha, const float *A, const float *B,
                                       float beta, float *C)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    const int col = blockIdx.y * blockDim.y + threadIdx.y;
    float sum = 0.0f;
    for (int k = 0; k < K; k++)
        sum += A[row * K + k] * B[k * N + col];
    C[row * N + col] = alpha * sum + beta * C[row * N + col];
}

/* 2, coalesced: the same work, but consecutive threads take consecutive columns of C: a warp reads one
 * element of A (a broadcast) and 32 consecutive elements of B, and writes 32 consecutive elements of C.
 * One-dimensional blocks of 1024 threads, each a 32 x 32 tile of C. */
enum { COALESCE_TILE = 32 };

extern "C" __global__ void sgemm_coalesced(int M, int N, int K, float alpha, const float *A, const float *B,
                                           float beta, float *C)
{
    const int row = blockIdx.x * COALESCE_TILE + threadIdx.x / COALESCE_TILE;
    const int col = blockIdx.y * COALESCE_TILE + threadIdx.x % COALESCE_TILE;
    float sum = 0.0f;
    for (int k = 0; k < K; k++)
        sum += A[row * K + k] * B[k * N + col];
    C[row * N + col] = alpha * sum + beta * C[row * N + col];
}

/* 3, shared-memory tiles: the block's 32 x 32 tile of C walks K in steps of 32; each step every thread
 * copies one element of A's and one of B's 32 x 32 tiles to shared memory, then sums from there. */
enum { SMEM_TILE = 32 };

extern "C" __global__ void sgemm_smem(int M, int N, int K, float alpha, const float *A, const float *B,
                                      float beta, float *C)
{
    __shared__ float As[SMEM_TILE * SMEM_TILE], Bs[SMEM_TILE * SMEM_TILE];
    const int r = threadIdx.x / SMEM_TILE, c = threadIdx.x % SMEM_TILE;
    A += blockIdx.x * SMEM_TILE * K;
    B += blockIdx.y * SMEM_TILE;
    C += blockIdx.x * SMEM_TILE * N + blockIdx.y * SMEM_TILE;
    float sum = 0.0f;
    for (int k0 = 0; k0 < K; k0 += SMEM_TILE) {
        As[r * SMEM_TILE + c] = A[r * K + c];
        Bs[r * SMEM_TILE + c] = B[r * N + c];
        __syncthreads();
        A += SMEM_TILE;
        B += SMEM_TILE * N;
        for (int k = 0; k < SMEM_TILE; k++)
            sum += As[r * SMEM_TILE + k] * Bs[k * SMEM_TILE + c];
        __syncthreads();
    }
    C[r * N + c] = alpha * sum + beta * C[r * N + c];
}

/* 4, 1D block tiling: a 64 x 64 tile of C per block of 512 threads, K in steps of 8, and each thread
 * sums a column of 8 elements of C: one element of B from shared memory serves 8 multiply-adds. */
enum { T1_BM = 64, T1_BN = 64, T1_BK = 8, T1_TM = 8, T1_THREADS = T1_BM * T1_BN / T1_TM };

extern "C" __global__ void __launch_bounds__(T1_THREADS)
sgemm_1d_blocktiling(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C)
{
    __shared__ float As[T1_BM * T1_BK], Bs[T1_BK * T1_BN];
    const int t = threadIdx.x;
    const int out_row = t / T1_BN, out_col = t % T1_BN;  /* this thread's rows out_row*TM .. +TM-1 */
    const int a_row = t / T1_BK, a_col = t % T1_BK;      /* the element of A's 64 x 8 tile it copies */
    const int b_row = t / T1_BN, b_col = t % T1_BN;      /* and of B's 8 x 64 tile */
    A += blockIdx.y * T1_BM * K;
    B += blockIdx.x * T1_BN;
    C += blockIdx.y * T1_BM * N + blockIdx.x * T1_BN;
    float sum[T1_TM] = {0.0f};
    for (int k0 = 0; k0 < K; k0 += T1_BK) {
        As[a_row * T1_BK + a_col] = A[a_row * K + a_col];
        Bs[b_row * T1_BN + b_col] = B[b_row * N + b_col];
        __syncthreads();
        A += T1_BK;
        B += T1_BK * N;
        for (int k = 0; k < T1_BK; k++) {
            const float b = Bs[k * T1_BN + out_col];
            for (int i = 0; i < T1_TM; i++)
                sum[i] += As[(out_row * T1_TM + i) * T1_BK + k] * b;
        }
        __syncthreads();
    }
    for (int i = 0; i < T1_TM; i++) {
        float *c = &C[(out_row * T1_TM + i) * N + out_col];
        *c = alpha * sum[i] + beta * *c;
    }
}

/* 5, 2D block tiling: a 128 x 128 tile of C per block of 256 threads, K in steps of 8, each thread an
 * 8 x 8 tile of C as outer products of 8 values of A and 8 of B held in registers: 16 shared-memory loads
 * serve 64 multiply-adds. Each thread copies 4 elements of each operand tile per step. */
enum { T2_BM = 128, T2_BN = 128, T2_BK = 8, T2_TM = 8, T2_TN = 8, T2_THREADS = T2_BM * T2_BN / (T2_TM * T2_TN) };

extern "C" __global__ void __launch_bounds__(T2_THREADS)
sgemm_2d_blocktiling(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C)
{
    __shared__ float As[T2_BM * T2_BK], Bs[T2_BK * T2_BN];
    const int t = threadIdx.x;
    const int out_row = t / (T2_BN / T2_TN), out_col = t % (T2_BN / T2_TN);
    const int a_row = t / T2_BK, a_col = t % T2_BK, a_rows_per_pass = T2_THREADS / T2_BK;
    const int b_row = t / T2_BN, b_col = t % T2_BN, b_rows_per_pass = T2_THREADS / T2_BN;
    A += blockIdx.y * T2_BM * K;
    B += blockIdx.x * T2_BN;
    C += blockIdx.y * T2_BM * N + blockIdx.x * T2_BN;
    float sum[T2_TM][T2_TN] = {{0.0f}}, a[T2_TM], b[T2_TN];
    for (int k0 = 0; k0 < K; k0 += T2_BK) {
        for (int r = 0; r < T2_BM; r += a_rows_per_pass)
            As[(a_row + r) * T2_BK + a_col] = A[(a_row + r) * K + a_col];
        for (int r = 0; r < T2_BK; r += b_rows_per_pass)
            Bs[(b_row + r) * T2_BN + b_col] = B[(b_row + r) * N + b_col];
        __syncthreads();
        A += T2_BK;
        B += T2_BK * N;
        for (int k = 0; k < T2_BK; k++) {
            for (int i = 0; i < T2_TM; i++)
                a[i] = As[(out_row * T2_TM + i) * T2_BK + k];
            for (int j = 0; j < T2_TN; j++)
                b[j] = Bs[k * T2_BN + out_col * T2_TN + j];
            for (int i = 0; i < T2_TM; i++)
                for (int j = 0; j < T2_TN; j++)
                    sum[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
    for (int i = 0; i < T2_TM; i++)
        for (int j = 0; j < T2_TN; j++) {
            float *c = &C[(out_row * T2_TM + i) * N + out_col * T2_TN + j];
            *c = alpha * sum[i][j] + beta * *c;
        }
}

/* 6, vectorized: 5's tiles, with 16-byte accesses. A's tile is stored transposed in shared memory (k-major)
 * as it is copied, so a thread's 8 values of A at one k are contiguous, as its 8 values of B are: both
 * come in two 16-byte shared-memory loads. Global loads and C's reads and writes are 16 bytes too. */
extern "C" __global__ void __launch_bounds__(T2_THREADS)
sgemm_vectorized(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C)
{
    __shared__ __align__(16) float As[T2_BK * T2_BM], Bs[T2_BK * T2_BN];
    const int t = threadIdx.x;
    const int out_row = t / (T2_BN / T2_TN), out_col = t % (T2_BN / T2_TN);
    const int a_row = t / (T2_BK / 4), a_col4 = t % (T2_BK / 4) * 4;  /* 128 rows x 2 float4 */
    const int b_row = t / (T2_BN / 4), b_col4 = t % (T2_BN / 4) * 4;  /* 8 rows x 32 float4 */
    A += blockIdx.y * T2_BM * K;
    B += blockIdx.x * T2_BN;
    C += blockIdx.y * T2_BM * N + blockIdx.x * T2_BN;
    float sum[T2_TM][T2_TN] = {{0.0f}}, a[T2_TM], b[T2_TN];
    for (int k0 = 0; k0 < K; k0 += T2_BK) {
        const float4 a4 = *reinterpret_cast<const float4 *>(&A[a_row * K + a_col4]);
        As[(a_col4 + 0) * T2_BM + a_row] = a4.x;
        As[(a_col4 + 1) * T2_BM + a_row] = a4.y;
        As[(a_col4 + 2) * T2_BM + a_row] = a4.z;
        As[(a_col4 + 3) * T2_BM + a_row] = a4.w;
        *reinterpret_cast<float4 *>(&Bs[b_row * T2_BN + b_col4]) =
            *reinterpret_cast<const float4 *>(&B[b_row * N + b_col4]);
        __syncthreads();
        A += T2_BK;
        B += T2_BK * N;
        for (int k = 0; k < T2_BK; k++) {
            for (int i = 0; i < T2_TM; i += 4) {
                const float4 v = *reinterpret_cast<const float4 *>(&As[k * T2_BM + out_row * T2_TM + i]);
                a[i] = v.x, a[i + 1] = v.y, a[i + 2] = v.z, a[i + 3] = v.w;
            }
            for (int j = 0; j < T2_TN; j += 4) {
                const float4 v = *reinterpret_cast<const float4 *>(&Bs[k * T2_BN + out_col * T2_TN + j]);
                b[j] = v.x, b[j + 1] = v.y, b[j + 2] = v.z, b[j + 3] = v.w;
            }
            for (int i = 0; i < T2_TM; i++)
                for (int j = 0; j < T2_TN; j++)
                    sum[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
    for (int i = 0; i < T2_TM; i++)
        for (int j = 0; j < T2_TN; j += 4) {
            float4 *c = reinterpret_cast<float4 *>(&C[(out_row * T2_TM + i) * N + out_col * T2_TN + j]);
            float4 v = *c;
            v.x = alpha * sum[i][j + 0] + beta * v.x;
            v.y = alpha * sum[i][j + 1] + beta * v.y;
            v.z = alpha * sum[i][j + 2] + beta * v.z;
            v.w = alpha * sum[i][j + 3] + beta * v.w;
            *c = v;
        }
}
