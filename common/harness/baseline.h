/* baseline.h: the libraries every chapter is measured against.
 *
 * cuDNN: for a problem, pass, data type and layout, the fastest algorithm cudnnFind* returns, in the
 * same math mode as our kernel (fp32: CUDNN_FMA_MATH, so cuDNN may not use TF32; fp16: tensor-op
 * math with fp32 accumulation), with the workspace it asks for, timed by time_gpu() exactly as our
 * kernels are. cuBLAS: the two hardware ceilings the roofline is drawn with.
 *
 * Built without cuDNN (no library found), every cuDNN call answers "not available" and the tables
 * say n/a.
 */
#ifndef BASELINE_H
#define BASELINE_H

#include <stdbool.h>

#include "conv.h"
#include "cudnn_conv.h"
#include "epilogue.h"
#include "timing.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    bool ok;             /* false: ms is meaningless and why says what happened */
    double ms;           /* median time of cuDNN's fastest algorithm */
    char algo[64];       /* that algorithm's name, e.g. "IMPLICIT_PRECOMP_GEMM" */
    char why[160];
} baseline_result;

/* cuDNN's best algorithm for this pass on this problem, on fresh random inputs. */
baseline_result cudnn_best(const conv_problem *prob, conv_pass pass, conv_dtype dtype, conv_layout layout,
                           const timing_opts *opts);

/* cuDNN's fused convolution + bias + activation (cudnnConvolutionBiasActivationForward) with this
 * epilogue (residual as its z operand, ReLU or identity), the fastest algorithm the fused call takes,
 * on fresh random inputs. Not ok for batch norm's scale and shift, which the fused API cannot express. */
baseline_result cudnn_fused_best(const conv_problem *prob, conv_dtype dtype, conv_layout layout, epilogue_ops ops,
                                 const timing_opts *opts);

/* The dense fp16 tensor-core rate in TFLOP/s, from a large square cuBLAS GEMM (fp32 accumulate). */
double ceiling_fp16_tflops(void);
/* The fp32 FMA rate in TFLOP/s, from a large square cuBLAS SGEMM in pedantic (no TF32) math. */
double ceiling_fp32_tflops(void);
/* Device-to-device copy bandwidth in GB/s, counting bytes read plus bytes written. */
double ceiling_copy_gbps(void);

#ifdef __cplusplus
}
#endif

#endif
