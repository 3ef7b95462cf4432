/* Chapter 09, step 09a: depthwise convolution, one thread per output vector.
 *
 * What it computes: fprop with groups = C = K (one R x S filter per channel, as in MobileNet and
 * EfficientNet), fp16 NHWC activations, KRSC filters ([C][R][S] here), fp32 accumulation, fp16 output,
 * with any padding, stride and dilation (h and w separately). Why such a convolution needs kernels of
 * its own, and what they share: depthwise.cuh; the index math: depthwise.h.
 *
 * How: one thread per output vector (8 channels of one pixel): 16-byte loads of x straight from global
 * memory, R*S of them per vector; L1 and L2 serve the reuse between neighbouring pixels. The taps come
 * from global memory too, one fp16 at a time (8 channels of one tap are R*S apart in KRSC).
 *
 * Run:
 *   ./build/conv run 09a --n 32 --c 144 --h 56 --w 56 --k 144 --r 3 --s 3 --pad 1 --groups 144
 */
#include <stdint.h>
#include <stdio.h>

#include <cuda_fp16.h>

#include "check.h"
#include "conv.h"
#include "depthwise.cuh"
#include "depthwise.h"

enum { A_THREADS = 256 };

static __global__ void __launch_bounds__(A_THREADS)
dw_direct(const conv_problem prob, const __half *__restrict__ x, const __half *__restrict__ w,
          __half *__restrict__ y)
{
    const int index = blockIdx.x * A_THREADS + threadIdx.x;
    if (index >= dw_vector_threads(&prob))
        return;
    const dw_vector v = dw_vector_of(index, &prob);
    if (v.c >= prob.c)
        return; /* a spare slot of a short last run */

    float acc[DW_VEC] = {0.0f};
    for (int r = 0; r < prob.r; r++) {
        const int h = tap_input_coord(v.p, r, prob.stride_h, prob.pad_h, prob.dil_h);
        if ((unsigned)h >= (unsigned)prob.h)
            continue; /* the zero padding adds nothing */
        for (int s = 0; s < prob.s; s++) {
            const int w_in = tap_input_coord(v.q, s, prob.stride_w, prob.pad_w, prob.dil_w);
            if ((unsigned)w_in >= (unsigned)prob.w)
                continue;
            float in[DW_VEC];
            unpack8(__ldg((const uint4 *)(x + dw_x_offset(&prob, v.n, h, w_in, v.c))), in);
#pragma unroll
            for (int j = 0; j < DW_VEC; j++)
                acc[j] = fmaf(in[j], __half2float(__ldg(w + dw_w_offset(&prob, v.c + j, r, s))), acc[j]);
        }
    }
    *(uint4 *)(y + dw_y_offset(&prob, v.n, v.p, v.q, v.c)) = pack8(acc);
}

extern "C" bool supports_09a(const conv_problem *prob, char *why, size_t why_len)
{
    return supports_vectors("09a", prob, why, why_len);
}

extern "C" void launch_09a(const conv_problem *prob, void *x, void *w, void *y, void *workspace)
{
    (void)workspace;
    const int blocks = tiles_covering(dw_vector_threads(prob), A_THREADS);
    dw_direct<<<blocks, A_THREADS>>>(*prob, (const __half *)x, (const __half *)w, (__half *)y);
    CUDA_CHECK_LAUNCH();
}
