/* counters.c: adding up and printing what launches did (emu.h: emu_counters). The metrics follow
 * Nsight Compute's definitions, named beside each line; they are counts of what the emulator executed,
 * never measurements of a GPU. */
#include <stdio.h>
#include <string.h>

#include "emu.h"

void emu_counters_add(emu_counters *into, const emu_counters *from)
{
    const uint64_t *f = (const uint64_t *)from;
    uint64_t *t = (uint64_t *)into;
    for (size_t i = 0; i < sizeof *from / sizeof(uint64_t); i++)
        t[i] += f[i];
}

static const char *const class_names[CLASS_COUNT] = {
    [CLASS_TENSOR] = "tensor", [CLASS_FP32] = "fp32", [CLASS_FP64] = "fp64", [CLASS_FP16] = "fp16",
    [CLASS_INTEGER] = "integer", [CLASS_CONVERSION] = "conversion", [CLASS_CONTROL] = "control",
    [CLASS_GLOBAL] = "global memory", [CLASS_SHARED] = "shared memory", [CLASS_OTHER_MEMORY] = "param/local",
    [CLASS_SYNC] = "sync"};

/* "_Z20conv_naive_k_fastest12conv_problem..." -> "conv_naive_k_fastest" (the name, without the types). */
void emu_short_name(const char *mangled, char *out, size_t out_len)
{
    const char *p = mangled;
    if (strncmp(p, "_Z", 2) == 0) {
        p += 2;
        size_t len = 0;
        while (*p >= '0' && *p <= '9')
            len = 10 * len + (size_t)(*p++ - '0');
        if (len && len < out_len && strlen(p) >= len) {
            memcpy(out, p, len);
            out[len] = 0;
            return;
        }
    }
    snprintf(out, out_len, "%s", mangled);
}

static double ratio(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 0.0; }

void emu_counters_print(FILE *out, const char *kernel, const emu_counters *c)
{
    char name[256];
    emu_short_name(kernel, name, sizeof name);
    fprintf(out, "emu counts for %s (%llu launch%s; counted by the emulator, not measured):\n", name,
            (unsigned long long)c->launches, c->launches == 1 ? "" : "es");
    if (c->emulated_blocks < c->grid_blocks)
        fprintf(out, "  sampled             %llu of the grids' %llu blocks emulated, counts scaled to the grids\n",
                (unsigned long long)c->emulated_blocks, (unsigned long long)c->grid_blocks);
    fprintf(out, "  instructions        %llu warp instructions, %llu thread instructions: %.1f%% of lanes active "
            "(SIMT efficiency)\n",
            (unsigned long long)c->warp_instructions, (unsigned long long)c->thread_instructions,
            100.0 * ratio(c->thread_instructions, 32 * c->warp_instructions));
    fprintf(out, "  by class            ");
    for (int k = 0; k < CLASS_COUNT; k++)
        if (c->by_class[k])
            fprintf(out, "%s %.1f%%  ", class_names[k], 100.0 * ratio(c->by_class[k], c->warp_instructions));
    fprintf(out, "\n");
    if (c->global_load_requests)
        fprintf(out, "  global loads        %llu requests, %llu sectors: %.2f sectors per request; %.4g bytes requested\n",
                (unsigned long long)c->global_load_requests, (unsigned long long)c->global_load_sectors,
                ratio(c->global_load_sectors, c->global_load_requests), (double)c->global_load_bytes);
    if (c->global_store_requests)
        fprintf(out, "  global stores       %llu requests, %llu sectors: %.2f sectors per request; %.4g bytes requested\n",
                (unsigned long long)c->global_store_requests, (unsigned long long)c->global_store_sectors,
                ratio(c->global_store_sectors, c->global_store_requests), (double)c->global_store_bytes);
    if (c->shared_load_requests)
        fprintf(out, "  shared loads        %llu requests, %llu wavefronts (ideal %llu): %llu bank conflicts\n",
                (unsigned long long)c->shared_load_requests, (unsigned long long)c->shared_load_wavefronts,
                (unsigned long long)c->shared_load_ideal,
                (unsigned long long)(c->shared_load_wavefronts - c->shared_load_ideal));
    if (c->shared_store_requests)
        fprintf(out, "  shared stores       %llu requests, %llu wavefronts (ideal %llu): %llu bank conflicts\n",
                (unsigned long long)c->shared_store_requests, (unsigned long long)c->shared_store_wavefronts,
                (unsigned long long)c->shared_store_ideal,
                (unsigned long long)(c->shared_store_wavefronts - c->shared_store_ideal));
    if (c->barriers)
        fprintf(out, "  barriers            %llu warp arrivals\n", (unsigned long long)c->barriers);
    if (c->tensor_flops)
        fprintf(out, "  tensor-core FLOPs   %.4g\n", (double)c->tensor_flops);
}
