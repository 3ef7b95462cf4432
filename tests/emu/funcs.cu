// funcs.cu -- device functions nvcc does not inline, for the emulator's ISA tests (tests/test_emu_isa.py).
// funcs.ptx and funcs_g.ptx are this file compiled by
//     nvcc -arch=sm_80 -ptx funcs.cu -o funcs.ptx          (CUDA 13.0)
//     nvcc -arch=sm_80 -ptx -G funcs.cu -o funcs_g.ptx     (the same, for debugging: every value in .local)
// and are what the tests run: .func definitions with .param parameters and return values, call.uni,
// ld.param/st.param on both sides, a struct passed by value and one returned, a float and a double returned,
// recursion (factorial, fibonacci, one with a local array per activation), function pointers (a call table
// in global memory and a selected pointer, through .callprototype), printf inside a function.
#include <cstdio>

struct Pair { int a; float b; double c; };
struct Two { int lo, hi; };

__device__ __noinline__ int add(int a, int b) { return a + b; }
__device__ __noinline__ float scale(float x, Pair s) { return x * s.b + (float)s.a + (float)s.c; }
__device__ __noinline__ double half_of(double x) { return x * 0.5; }
__device__ __noinline__ Two split16(unsigned v) { Two t = {(int)(v & 0xffff), (int)(v >> 16)}; return t; }
__device__ __noinline__ void store_twice(int *p, int v) { p[0] = v; p[1] = 2 * v; }

__device__ __noinline__ unsigned fact(unsigned n) { return n <= 1 ? 1u : n * fact(n - 1); }
__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
// each activation has its own local array: the caller's a[] must be intact after the callee filled its own
__device__ __noinline__ int layered(int n, int k)
{
    volatile int a[8];
    for (int i = 0; i < 8; i++)
        a[i] = n * 10 + i;
    int below = n > 0 ? layered(n - 1, k + 1) : 0;
    return below + a[(n + k) & 7];
}

__device__ __noinline__ int twice(int x) { return 2 * x; }
__device__ __noinline__ int thrice(int x) { return 3 * x; }
__device__ __noinline__ int negate(int x) { return -x; }
typedef int (*unary)(int);
__device__ unary table[3] = {twice, thrice, negate};

__device__ __noinline__ void say(int t, float v) { printf("thread %d says %.2f\n", t, v); }

extern "C" __global__ void direct_calls(const int *x, int *out, float *fo, double *dout)
{
    int t = threadIdx.x;
    out[t] = add(x[t], t);
    Pair s = {x[t], 0.25f * (float)t, 0.5};
    fo[t] = scale((float)x[t], s);
    dout[t] = half_of((double)x[t]);
    Two two = split16((unsigned)x[t]);
    out[32 + t] = two.lo;
    out[64 + t] = two.hi;
    store_twice(out + 96 + 2 * t, x[t]);
}

extern "C" __global__ void recursion(const int *n, int *out)
{
    int t = threadIdx.x;
    out[t] = (int)fact((unsigned)n[t] % 13u);
    out[32 + t] = fib(n[t] % 16);
    out[64 + t] = layered(n[t] % 8, t);
}

extern "C" __global__ void pointers(const int *op, const int *x, int *out)
{
    int t = threadIdx.x;
    out[t] = table[op[t] % 3](x[t]);
    unary f = (x[t] & 1) ? thrice : twice;
    out[32 + t] = f(x[t]);
}

// lanes call at different times, from different call sites, and recurse to different depths (out[32 + t], the
// active mask after the join, is not checked: the ISA promises no reconvergence there)
extern "C" __global__ void divergent(const int *x, int *out)
{
    int t = threadIdx.x;
    int v;
    if (x[t] & 1)
        v = fib(x[t] % 12);
    else
        v = add(fib(x[t] % 9), 1000);
    out[t] = v;
    out[32 + t] = (int)__activemask();
}

extern "C" __global__ void printing(const float *v)
{
    int t = threadIdx.x;
    if (t % 2 == 1)
        say(t, v[t]);
}
