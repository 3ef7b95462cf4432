// tma_test.cu -- end-to-end test of TMA tile loads: cuTensorMapEncodeTiled (obtained through
// cudaGetDriverEntryPointByVersion) + cp.async.bulk.tensor.{1,2,3}d ... mbarrier::complete_tx::bytes + mbarrier.
// Runs on an sm_90 GPU, or on the PTX emulator (libcudaemu.so preloaded, EMU_PTX_PATH pointing at this file's PTX;
// tests/test_emu_hopper.py does both where it can).
//
// Each load case fills shared memory with a poison byte, loads one box at (possibly) out-of-bounds coordinates,
// waits on the mbarrier for the full box byte count, copies the box (and 128 bytes past it) out, and compares it
// with a CPU model:
//   element (i0,i1,i2) of the box = tensor[c + i] when every coordinate is inside globalDim, else 0
//                                    (PTX ISA "Tensors" > "Tiled Mode" > "Out of Boundary Access", zero fill),
//                                    or a NaN (any f16 NaN) for the f16 cases encoded with
//                                    CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
//   dense byte offset  off = ((i2*B1 + i1)*B0 + i0) * elementSize           (dimension 0 fastest)
//   shared address     off ^ (((off >> 7) & (SW/16 - 1)) << 4)   for SWIZZLE_32B/64B/128B (SW = 32/64/128), the
//                      CUDA Programming Guide "TMA Swizzle" pattern smem[y][((y+offset)%n)^x] with a 1024-B aligned
//                      buffer (offset 0); the 128 bytes after the box stay poison.
//   The mbarrier expects prod(boxDim) * elementSize bytes even when the box is partly or entirely out of bounds
//   (PTX "cp.async.bulk.tensor": complete-tx with "amount of data copied in bytes"; the box is always written whole).
// Validation cases call cuTensorMapEncodeTiled with one documented requirement broken (CUDA Driver API, "Tensor Map
// Object Managment", cuTensorMapEncodeTiled) and expect CUDA_ERROR_INVALID_VALUE.
// Every box starts 16-byte aligned, as the ISA's Bounding Box must; `tma_test NAME` runs one of the misaligned boxes
// alone (its launch must fail).
// Prints one line per case; exits 0 when every case passes, 1 on any mismatch, 2 when it cannot run at all.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

typedef CUresult (*EncodeTiledFn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                                  const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
                                  CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

constexpr int BOX_BYTES_MAX = 16384;
constexpr int TAIL = 128;         // bytes after the box that must stay poison
constexpr uint8_t POISON = 0xAB;
constexpr unsigned WAIT_TRIES = 1u << 20;

__device__ __forceinline__ uint32_t smem_u32(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

// out: [0] = 1 if the mbarrier phase completed, 0 if it timed out; then the box bytes and TAIL bytes.
template <int RANK>
__global__ void tma_load(const __grid_constant__ CUtensorMap map, int c0, int c1, int c2, unsigned bytes,
                         uint8_t *out)
{
    __shared__ __align__(1024) uint8_t box[BOX_BYTES_MAX + TAIL];
    __shared__ __align__(8) uint64_t bar;
    for (unsigned i = threadIdx.x; i < bytes + TAIL; i += blockDim.x)
        box[i] = POISON;
    // generic-proxy writes of the poison before the async-proxy (TMA) writes of the box
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_u32(&bar)) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(&bar)), "r"(bytes)
                     : "memory");
        if (RANK == 1)
            asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                         " [%0], [%1, {%2}], [%3];" ::"r"(smem_u32(box)), "l"(&map), "r"(c0), "r"(smem_u32(&bar))
                         : "memory");
        else if (RANK == 2)
            asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                         " [%0], [%1, {%2, %3}], [%4];" ::"r"(smem_u32(box)), "l"(&map), "r"(c0), "r"(c1),
                         "r"(smem_u32(&bar))
                         : "memory");
        else
            asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                         " [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(smem_u32(box)), "l"(&map), "r"(c0), "r"(c1),
                         "r"(c2), "r"(smem_u32(&bar))
                         : "memory");
    }
    uint32_t done = 0;
    for (unsigned t = 0; t < WAIT_TRIES && !done; t++)
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n"
                     " selp.u32 %0, 1, 0, p;\n}" : "=r"(done) : "r"(smem_u32(&bar)) : "memory");
    if (threadIdx.x == 0)
        out[0] = (uint8_t)done;
    for (unsigned i = threadIdx.x; i < bytes + TAIL; i += blockDim.x)
        out[1 + i] = box[i];
}

// What a map fills outside the tensor: zeros (a UINT16 map), or NaN (CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA)
// in an f16 or a bf16 map, each with its own NaN: exponent all ones, fraction not zero.
enum Fill { ZERO_FILL, F16_NAN_FILL, BF16_NAN_FILL };

struct Case {
    const char *name;
    int rank;
    cuuint64_t dim[3];
    cuuint64_t stride[2];   // bytes, dims 1..rank-1
    cuuint32_t box[3];
    CUtensorMapSwizzle swizzle;
    int coord[3];
    Fill fill;
};

static const int ES = 2;   // bytes per element: UINT16, FLOAT16 and BFLOAT16 maps

static unsigned swizzle_bytes(CUtensorMapSwizzle s)
{
    switch (s) {
    case CU_TENSOR_MAP_SWIZZLE_32B: return 32;
    case CU_TENSOR_MAP_SWIZZLE_64B: return 64;
    case CU_TENSOR_MAP_SWIZZLE_128B: return 128;
    default: return 0;
    }
}

// The CPU model of the box in shared memory (see the header); nan_at marks the bytes of elements that must be NaN.
static std::vector<uint8_t> model(const Case &c, const std::vector<uint8_t> &g, unsigned bytes,
                                  std::vector<bool> &nan_at)
{
    std::vector<uint8_t> m(bytes + TAIL, POISON);
    nan_at.assign(bytes + TAIL, false);
    unsigned sw = swizzle_bytes(c.swizzle);
    cuuint32_t b[3] = {1, 1, 1};
    for (int d = 0; d < c.rank; d++) b[d] = c.box[d];
    for (unsigned i2 = 0; i2 < b[2]; i2++)
        for (unsigned i1 = 0; i1 < b[1]; i1++)
            for (unsigned i0 = 0; i0 < b[0]; i0++) {
                long long x[3] = {(long long)c.coord[0] + i0, (long long)c.coord[1] + i1, (long long)c.coord[2] + i2};
                bool in = true;
                for (int d = 0; d < c.rank; d++)
                    if (x[d] < 0 || x[d] >= (long long)c.dim[d]) in = false;
                uint16_t v = 0;
                if (in) {
                    size_t off = (size_t)x[0] * ES;
                    for (int d = 1; d < c.rank; d++) off += (size_t)x[d] * c.stride[d - 1];
                    memcpy(&v, &g[off], 2);
                }
                unsigned off = ((i2 * b[1] + i1) * b[0] + i0) * ES;
                unsigned addr = sw ? off ^ (((off >> 7) & (sw / 16 - 1)) << 4) : off;
                memcpy(&m[addr], &v, 2);
                if (!in && c.fill != ZERO_FILL) nan_at[addr] = nan_at[addr + 1] = true;
            }
    return m;
}

static EncodeTiledFn get_encode()
{
    void *fn = nullptr;
    cudaDriverEntryPointQueryResult q;
    cudaError_t e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q);
    if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || !fn) {
        printf("FAIL setup: cudaGetDriverEntryPointByVersion(cuTensorMapEncodeTiled): %s, status %d\n",
               cudaGetErrorString(e), (int)q);
        return nullptr;
    }
    return (EncodeTiledFn)fn;
}

static int run_load(EncodeTiledFn encode, const Case &c)
{
    // global tensor: every element a distinct nonzero u16, padding bytes 0xEE
    size_t total = c.dim[0] * ES;
    if (c.rank >= 2) total = c.stride[c.rank - 2] * c.dim[c.rank - 1];
    std::vector<uint8_t> g(total, 0xEE);
    cuuint64_t d1 = c.rank >= 2 ? c.dim[1] : 1, d2 = c.rank >= 3 ? c.dim[2] : 1;
    for (cuuint64_t z = 0; z < d2; z++)
        for (cuuint64_t y = 0; y < d1; y++)
            for (cuuint64_t x = 0; x < c.dim[0]; x++) {
                size_t off = x * ES + (c.rank >= 2 ? y * c.stride[0] : 0) + (c.rank >= 3 ? z * c.stride[1] : 0);
                uint16_t v = (uint16_t)(1 + ((x + 131 * y + 7919 * z) % 65000));
                memcpy(&g[off], &v, 2);
            }
    void *dg = nullptr;
    uint8_t *dout = nullptr;
    unsigned bytes = ES;
    for (int d = 0; d < c.rank; d++) bytes *= c.box[d];
    if (cudaMalloc(&dg, total) != cudaSuccess || cudaMalloc(&dout, 1 + bytes + TAIL) != cudaSuccess) {
        printf("FAIL %s: cudaMalloc\n", c.name);
        return 1;
    }
    cudaMemcpy(dg, g.data(), total, cudaMemcpyHostToDevice);
    cudaMemset(dout, 0x5A, 1 + bytes + TAIL);
    alignas(64) CUtensorMap map;
    cuuint32_t estride[3] = {1, 1, 1};
    static const CUtensorMapDataType type_of[] = {CU_TENSOR_MAP_DATA_TYPE_UINT16, CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                                                  CU_TENSOR_MAP_DATA_TYPE_BFLOAT16};
    CUresult r = encode(&map, type_of[c.fill], c.rank, dg,
                        c.dim, c.stride, c.box, estride, CU_TENSOR_MAP_INTERLEAVE_NONE, c.swizzle,
                        CU_TENSOR_MAP_L2_PROMOTION_NONE,
                        c.fill != ZERO_FILL ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA : CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        printf("FAIL %s: cuTensorMapEncodeTiled returned %d for a valid map\n", c.name, (int)r);
        cudaFree(dg);
        cudaFree(dout);
        return 1;
    }
    if (c.rank == 1)
        tma_load<1><<<1, 128>>>(map, c.coord[0], 0, 0, bytes, dout);
    else if (c.rank == 2)
        tma_load<2><<<1, 128>>>(map, c.coord[0], c.coord[1], 0, bytes, dout);
    else
        tma_load<3><<<1, 128>>>(map, c.coord[0], c.coord[1], c.coord[2], bytes, dout);
    cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess) e = cudaGetLastError();
    std::vector<uint8_t> got(1 + bytes + TAIL);
    if (e == cudaSuccess) e = cudaMemcpy(got.data(), dout, got.size(), cudaMemcpyDeviceToHost);
    cudaFree(dg);
    cudaFree(dout);
    if (e != cudaSuccess) {
        printf("FAIL %s: launch: %s\n", c.name, cudaGetErrorString(e));
        return 2;
    }
    if (got[0] != 1) {
        printf("FAIL %s: the mbarrier phase did not complete (expect_tx %u bytes = the whole box)\n", c.name, bytes);
        return 1;
    }
    std::vector<bool> nan_at;
    std::vector<uint8_t> want = model(c, g, bytes, nan_at);
    const uint16_t exponent = c.fill == BF16_NAN_FILL ? 0x7f80 : 0x7c00, fraction = c.fill == BF16_NAN_FILL ? 0x7f : 0x3ff;
    int nan_seen = -1; // the bits of the first NaN filled (which NaN is not documented: any is accepted)
    for (unsigned i = 0; i < bytes + TAIL; i++) {
        if (nan_at[i]) { // a NaN of the map's type, whichever (elements are 2-byte aligned)
            uint16_t h;
            memcpy(&h, &got[1 + (i & ~1u)], 2);
            if ((h & exponent) != exponent || !(h & fraction)) {
                printf("FAIL %s: shared bytes %u-%u are 0x%04x, want %s NaN (outside the tensor)\n", c.name, i & ~1u,
                       (i & ~1u) + 1, h, c.fill == BF16_NAN_FILL ? "a bf16" : "an f16");
                return 1;
            }
            if (nan_seen < 0) nan_seen = h;
            continue;
        }
        if (got[1 + i] != want[i]) {
            printf("FAIL %s: shared byte %u%s is 0x%02x, want 0x%02x\n", c.name, i, i >= bytes ? " (after the box)" : "",
                   got[1 + i], want[i]);
            return 1;
        }
    }
    printf("PASS %s: %u-byte box at (%d,%d,%d), swizzle %uB", c.name, bytes, c.coord[0], c.coord[1], c.coord[2],
           swizzle_bytes(c.swizzle));
    if (nan_seen >= 0) printf(", NaN filled as 0x%04x", nan_seen);
    printf("\n");
    return 0;
}

// One broken requirement per case: the encode must refuse it.
static int run_reject(EncodeTiledFn encode, void *dg, const char *name, int rank, cuuint64_t addr_off,
                      const cuuint64_t *dim, const cuuint64_t *stride, const cuuint32_t *box, const cuuint32_t *es,
                      CUtensorMapSwizzle sw)
{
    alignas(64) CUtensorMap map;
    CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_UINT16, rank, (char *)dg + addr_off, dim, stride, box, es,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, sw, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r == CUDA_ERROR_INVALID_VALUE) {
        printf("PASS %s: CUDA_ERROR_INVALID_VALUE\n", name);
        return 0;
    }
    printf("FAIL %s: cuTensorMapEncodeTiled returned %d, want CUDA_ERROR_INVALID_VALUE (%d)\n", name, (int)r,
           (int)CUDA_ERROR_INVALID_VALUE);
    return 1;
}

int main(int argc, char **argv)
{
    EncodeTiledFn encode = get_encode();
    if (!encode) return 2;
    const CUtensorMapSwizzle NONE = CU_TENSOR_MAP_SWIZZLE_NONE, S32 = CU_TENSOR_MAP_SWIZZLE_32B,
                             S64 = CU_TENSOR_MAP_SWIZZLE_64B, S128 = CU_TENSOR_MAP_SWIZZLE_128B;
    // 2D tensor 100 x 37 u16, rows 256 bytes apart (padding after 200 bytes); 3D adds 3 planes 40 rows apart.
    const Case cases[] = {
        {"2d_sw128_origin", 2, {100, 37, 0}, {256, 0}, {64, 16, 0}, S128, {0, 0, 0}},
        {"2d_sw128_edge", 2, {100, 37, 0}, {256, 0}, {64, 16, 0}, S128, {64, 32, 0}},
        {"2d_sw128_negative", 2, {100, 37, 0}, {256, 0}, {64, 16, 0}, S128, {-40, -5, 0}},
        {"2d_sw128_corner", 2, {100, 37, 0}, {256, 0}, {64, 8, 0}, S128, {96, 36, 0}},
        {"2d_sw64_edge", 2, {100, 37, 0}, {256, 0}, {32, 8, 0}, S64, {80, 33, 0}},
        {"2d_sw32_edge", 2, {100, 37, 0}, {256, 0}, {16, 8, 0}, S32, {88, -3, 0}},
        {"2d_none_edge", 2, {100, 37, 0}, {256, 0}, {24, 5, 0}, NONE, {88, 34, 0}},
        {"2d_none_outside", 2, {100, 37, 0}, {256, 0}, {16, 4, 0}, NONE, {200, 0, 0}},
        {"3d_none_corner", 3, {100, 37, 3}, {256, 256 * 40}, {8, 4, 2}, NONE, {96, 35, 2}},
        {"3d_sw128_edge", 3, {100, 37, 3}, {256, 256 * 40}, {64, 4, 2}, S128, {40, 34, 1}},
        {"1d_tail", 1, {1000, 0, 0}, {0, 0}, {64, 0, 0}, NONE, {960, 0, 0}},
        {"1d_negative", 1, {1000, 0, 0}, {0, 0}, {32, 0, 0}, NONE, {-16, 0, 0}},
        {"2d_sw128_nan_fill", 2, {100, 37, 0}, {256, 0}, {64, 16, 0}, S128, {-8, 30, 0}, F16_NAN_FILL},
        {"1d_nan_fill", 1, {1000, 0, 0}, {0, 0}, {32, 0, 0}, NONE, {984, 0, 0}, F16_NAN_FILL},
        {"2d_sw64_bf16_nan_fill", 2, {100, 37, 0}, {256, 0}, {32, 8, 0}, S64, {88, -3, 0}, BF16_NAN_FILL},
    };
    // Boxes whose address is not 16-byte aligned (the PTX ISA's Bounding Box rule): run one at a time, by name, on
    // the emulator, which must stop the launch with an error. An H100 stops it too (illegal instruction, measured
    // for the first); a failed launch is sticky, so they are never among the cases above.
    const Case misaligned[] = {
        {"misaligned_2d_sw128", 2, {100, 37, 0}, {256, 0}, {64, 16, 0}, S128, {-3, -5, 0}},
        {"misaligned_1d", 1, {1000, 0, 0}, {0, 0}, {32, 0, 0}, NONE, {-5, 0, 0}},
    };
    if (argc == 2) {
        for (const Case &c : misaligned)
            if (strcmp(argv[1], c.name) == 0) return run_load(encode, c);
        printf("FAIL setup: no misaligned case %s\n", argv[1]);
        return 2;
    }
    int failures = 0, fatal = 0;
    for (const Case &c : cases) {
        int r = run_load(encode, c);
        if (r) failures++;
        if (r == 2) fatal = 1;
        if (fatal) break;   // a failed launch is sticky: later cases cannot run
    }
    if (!fatal) {
        void *dg = nullptr;
        cudaMalloc(&dg, 1 << 16);
        cuuint64_t dim2[2] = {100, 37}, st[1] = {256}, st_bad[1] = {200}, st_big[1] = {1ull << 40};
        cuuint32_t box[2] = {64, 16}, box257[2] = {257, 1}, box_small[2] = {4, 4}, es1[2] = {1, 1}, es9[2] = {1, 9};
        cuuint64_t dim0[2] = {0, 37}, dim6[6] = {2, 2, 2, 2, 2, 2}, st6[5] = {16, 32, 64, 128, 256};
        cuuint32_t box6[6] = {8, 1, 1, 1, 1, 1}, es6[6] = {1, 1, 1, 1, 1, 1};
        failures += run_reject(encode, dg, "reject_address_not_16B", 2, 8, dim2, st, box, es1, NONE);
        failures += run_reject(encode, dg, "reject_stride_not_multiple_of_16", 2, 0, dim2, st_bad, box, es1, NONE);
        failures += run_reject(encode, dg, "reject_stride_2pow40", 2, 0, dim2, st_big, box, es1, NONE);
        failures += run_reject(encode, dg, "reject_box_257", 2, 0, dim2, st, box257, es1, NONE);
        failures += run_reject(encode, dg, "reject_inner_box_8_bytes", 2, 0, dim2, st, box_small, es1, NONE);
        failures += run_reject(encode, dg, "reject_element_stride_9", 2, 0, dim2, st, box, es9, NONE);
        failures += run_reject(encode, dg, "reject_global_dim_0", 2, 0, dim0, st, box, es1, NONE);
        failures += run_reject(encode, dg, "reject_sw64_inner_128_bytes", 2, 0, dim2, st, box, es1, S64);
        failures += run_reject(encode, dg, "reject_sw32_inner_128_bytes", 2, 0, dim2, st, box, es1, S32);
        failures += run_reject(encode, dg, "reject_rank_6", 6, 0, dim6, st6, box6, es6, NONE);
        cudaFree(dg);
    }
    printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
    return fatal ? 2 : (failures ? 1 : 0);
}
