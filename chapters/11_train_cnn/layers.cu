/* layers.cu: grid-stride GPU kernels around the element functions of layers.h (see layers_gpu.h).
 *
 * These layers are a few hundred thousand elements per step at most, so each kernel is the plainest
 * form: one thread per element, a grid-stride loop, and the element function that the CPU backend and
 * the cpu suite run too. Built into ./build/chapters/11_train_cnn/train_cnn.
 */
#include "check.h"
#include "layers_gpu.h"

static const int threads = 256;

/* Enough blocks to cover count, capped: the loop strides over the rest. */
static unsigned blocks_for(int64_t count)
{
    const int64_t blocks = (count + threads - 1) / threads;
    return (unsigned)(blocks < 4096 ? (blocks > 0 ? blocks : 1) : 4096);
}

#define FOR_EACH_ELEMENT(i, count) \
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (count); i += (int64_t)gridDim.x * blockDim.x)

__global__ void relu_forward_kernel(act_t *y, int64_t count)
{
    FOR_EACH_ELEMENT(i, count)
        relu_forward_element(y, i);
}

__global__ void relu_backward_kernel(act_t *grad, const act_t *a, int64_t count)
{
    FOR_EACH_ELEMENT(i, count)
        relu_backward_element(grad, a, i);
}

__global__ void pool_forward_kernel(const act_t *a, act_shape s, float *g)
{
    FOR_EACH_ELEMENT(e, (int64_t)s.batch * s.channels)
        pool_forward_element(a, s, g, e);
}

__global__ void pool_backward_kernel(const float *dg, act_shape s, act_t *da)
{
    FOR_EACH_ELEMENT(e, act_elems(s))
        pool_backward_element(dg, s, da, e);
}

__global__ void linear_forward_kernel(const float *g, const float *W, const float *bias, float *z, linear_shape s)
{
    FOR_EACH_ELEMENT(e, (int64_t)s.batch * s.out)
        linear_forward_element(g, W, bias, z, s, e);
}

__global__ void linear_backward_params_kernel(const float *dz, const float *g, float *dW, float *dbias,
                                              linear_shape s)
{
    FOR_EACH_ELEMENT(e, (int64_t)s.out * (s.in + 1))
        linear_backward_params_element(dz, g, dW, dbias, s, e);
}

__global__ void linear_backward_input_kernel(const float *dz, const float *W, float *dg, linear_shape s)
{
    FOR_EACH_ELEMENT(e, (int64_t)s.batch * s.in)
        linear_backward_input_element(dz, W, dg, s, e);
}

__global__ void softmax_xent_kernel(const float *z, const int *labels, float *loss, float *dz, int batch,
                                    int classes, float grad_scale)
{
    FOR_EACH_ELEMENT(b, batch)
        softmax_xent_element(z, labels, loss, dz, classes, grad_scale, (int)b);
}

__global__ void sgd_kernel(float *w, const float *grad, int64_t count, float step, int *overflow)
{
    FOR_EACH_ELEMENT(i, count)
        if (!sgd_element(&w[i], grad[i], step))
            *overflow = 1;
}

__global__ void sgd_half_kernel(float *w, act_t *w_half, const act_t *grad, int64_t count, float step,
                                int *overflow)
{
    FOR_EACH_ELEMENT(i, count) {
        if (!sgd_element(&w[i], act_load(grad[i]), step))
            *overflow = 1;
        w_half[i] = act_store(w[i]);
    }
}

__global__ void to_half_kernel(const float *src, act_t *dst, int64_t count)
{
    FOR_EACH_ELEMENT(i, count)
        dst[i] = act_store(src[i]);
}

extern "C" void gpu_relu_forward(void *y, int64_t count)
{
    relu_forward_kernel<<<blocks_for(count), threads>>>((act_t *)y, count);
    CUDA_CHECK_LAUNCH();
}

extern "C" void gpu_relu_backward(void *grad, const void *a, int64_t count)
{
    relu_backward_kernel<<<blocks_for(count), threads>>>((act_t *)grad, (const act_t *)a, count);
    CUDA_CHECK_LAUNCH();
}

extern "C" void gpu_pool_forward(const void *a, act_shape s, float *g)
{
    pool_forward_kernel<<<blocks_for((int64_t)s.batch * s.channels), threads>>>((const act_t *)a, s, g);
    CUDA_CHECK_LAUNCH();
}

extern "C" void gpu_pool_backward(const float *dg, act_shape s, void *da)
{
    pool_backward_kernel<<<blocks_for(act_elems(s)), threads>>>(dg, s, (act_t *)da);
    CUDA_CHECK_LAUNCH();
}

extern "C" void gpu_linear_forward(const float *g, const float *W, const float *bias, float *z, linear_shape s)
{
    linear_forward_kernel<<<blocks_for((int64_t)s.batch * s.out), threads>>>(g, W, bias, z, s);
    CUDA_CHECK_LAUNCH();
}

extern "C" void gpu_linear_backward(const float *dz, const float *g, const float *W, float *dW, float *dbias,
                                    float *dg, linear_shape s)
{
    linear_backward_params_kernel<<<blocks_for((int64_t)s.out * (s.in + 1)), threads>>>(dz, g, dW, dbias, s);
    CUDA_CHECK_LAUNCH();
    linear_backward_input_kernel<<<blocks_for((int64_t)s.batch * s.in), threads>>>(dz, W, dg, s);
    CUDA_CHECK_LAUNCH();
}

extern "C" void gpu_softmax_xent(const float *z, const int *labels, float *loss, float *dz, int batch, int classes,
                                 float grad_scale)
{
    softmax_xent_kernel<<<blocks_for(batch), threads>>>(z, labels, loss, dz, batch, classes, grad_scale);
    CUDA_CHECK_LAUNCH();
}

extern "C" void gpu_sgd(float *w, const float *grad, int64_t count, float step, int *overflow)
{
    sgd_kernel<<<blocks_for(count), threads>>>(w, grad, count, step, overflow);
    CUDA_CHECK_LAUNCH();
}

extern "C" void gpu_sgd_half(float *w, void *w_half, const void *grad, int64_t count, float step, int *overflow)
{
    sgd_half_kernel<<<blocks_for(count), threads>>>(w, (act_t *)w_half, (const act_t *)grad, count, step, overflow);
    CUDA_CHECK_LAUNCH();
}

extern "C" void gpu_to_half(const float *src, void *dst, int64_t count)
{
    to_half_kernel<<<blocks_for(count), threads>>>(src, (act_t *)dst, count);
    CUDA_CHECK_LAUNCH();
}
