/* memory.c: device memory as the emulator sees it. Device pointers are host pointers (cudaMalloc is
 * an aligned host allocation), so copies are memcpy; what makes it a device is that every access a
 * kernel makes is checked against this table of live allocations first, as compute-sanitizer's
 * memcheck does on a GPU.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu.h"

static emu_alloc *allocs; /* sorted by base */
static int n_allocs, cap_allocs;

void emu_alloc_add(uint64_t base, uint64_t size, const char *what, bool initialized)
{
    if (n_allocs == cap_allocs) {
        cap_allocs = cap_allocs ? 2 * cap_allocs : 64;
        allocs = realloc(allocs, (size_t)cap_allocs * sizeof *allocs);
    }
    int at = n_allocs;
    while (at > 0 && allocs[at - 1].base > base)
        at--;
    memmove(&allocs[at + 1], &allocs[at], (size_t)(n_allocs - at) * sizeof *allocs);
    /* one bit per byte: has anything written it since the allocation (initcheck)? */
    uint8_t *written = malloc((size_t)(size + 7) / 8 + 1);
    memset(written, initialized ? 0xff : 0, (size_t)(size + 7) / 8 + 1);
    allocs[at] = (emu_alloc){base, size, what, written};
    n_allocs++;
}

bool emu_alloc_remove(uint64_t base)
{
    for (int i = 0; i < n_allocs; i++)
        if (allocs[i].base == base) {
            free(allocs[i].written);
            memmove(&allocs[i], &allocs[i + 1], (size_t)(n_allocs - i - 1) * sizeof *allocs);
            n_allocs--;
            return true;
        }
    return false;
}

/* The last allocation below or at addr (binary search), or -1. */
static int floor_index(uint64_t addr)
{
    int lo = 0, hi = n_allocs - 1, found = -1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (allocs[mid].base <= addr)
            found = mid, lo = mid + 1;
        else
            hi = mid - 1;
    }
    return found;
}

const emu_alloc *emu_alloc_find(uint64_t addr, uint64_t size)
{
    int i = floor_index(addr);
    if (i < 0)
        return NULL;
    const emu_alloc *a = &allocs[i];
    /* within [base, base + size), written so that no sum can wrap */
    return size <= a->size && addr - a->base <= a->size - size ? a : NULL;
}

void emu_alloc_describe(uint64_t addr, uint64_t size, char *out, size_t out_len)
{
    int below = floor_index(addr), above = below + 1;
    const emu_alloc *a = below >= 0 ? &allocs[below] : NULL, *b = above < n_allocs ? &allocs[above] : NULL;
    uint64_t past = a ? addr - (a->base + a->size) : UINT64_MAX, before = b ? b->base - addr : UINT64_MAX;
    if (a && addr < a->base + a->size) /* starts inside, ends outside */
        snprintf(out, out_len, "%" PRIu64 " bytes at offset %" PRIu64 " run past the end of the %" PRIu64
                 "-byte %s at 0x%" PRIx64, size, addr - a->base, a->size, a->what, a->base);
    else if (a && past == 0 && past <= before)
        snprintf(out, out_len, "right after the end of the %" PRIu64 "-byte %s at 0x%" PRIx64, a->size, a->what,
                 a->base);
    else if (a && past <= before)
        snprintf(out, out_len, "%" PRIu64 " bytes past the end of the %" PRIu64 "-byte %s at 0x%" PRIx64, past,
                 a->size, a->what, a->base);
    else if (b)
        snprintf(out, out_len, "%" PRIu64 " bytes before the %" PRIu64 "-byte %s at 0x%" PRIx64, before, b->size,
                 b->what, b->base);
    else
        snprintf(out, out_len, "no device memory is allocated");
}

uint64_t emu_alloc_total(void)
{
    uint64_t total = 0;
    for (int i = 0; i < n_allocs; i++)
        total += allocs[i].size;
    return total;
}

/* The bitmap holds a bit per byte, eight bytes' bits per bitmap byte: an access's bytes are visited a
 * bitmap byte at a time, with the mask of the bits it covers there (an aligned access of up to 8 bytes is
 * one bitmap byte). */
static inline uint64_t bits_end(uint64_t i, uint64_t end) { return end < (i | 7) + 1 ? end : (i | 7) + 1; }
static inline uint8_t bits_mask(uint64_t i, uint64_t stop) { return (uint8_t)(((1u << (stop - i)) - 1) << (i % 8)); }

/* Blocks on other host threads mark neighbouring bytes at the same time: the bitmap's bytes are updated
 * and read atomically (a byte whose bits are set already is only read). */
void emu_mark_written(const emu_alloc *a, uint64_t addr, uint64_t size)
{
    for (uint64_t i = addr - a->base, end = i + size; i < end;) {
        const uint64_t stop = bits_end(i, end);
        const uint8_t bits = bits_mask(i, stop);
        if ((__atomic_load_n(&a->written[i / 8], __ATOMIC_RELAXED) & bits) != bits)
            __atomic_fetch_or(&a->written[i / 8], bits, __ATOMIC_RELAXED);
        i = stop;
    }
}

bool emu_lanes_written(const emu_alloc *a, const uint64_t *address, uint32_t lanes, uint64_t size)
{
    const uint8_t bits = (uint8_t)((1u << size) - 1);
    uint8_t missing = 0;
    for (uint32_t rest = lanes; rest; rest &= rest - 1) {
        const uint64_t i = address[__builtin_ctz(rest)] - a->base;
        missing |= (uint8_t)(bits & ~(__atomic_load_n(&a->written[i / 8], __ATOMIC_RELAXED) >> (i % 8)));
    }
    return !missing;
}

/* The bitmap bytes an access covers whole (all eight bits) are compared with 0xff as they are, without a mask. */
bool emu_all_written(const emu_alloc *a, uint64_t addr, uint64_t size, uint64_t *first_unwritten)
{
    for (uint64_t i = addr - a->base, end = i + size; i < end;) {
        const uint64_t stop = bits_end(i, end);
        const uint8_t bits = __atomic_load_n(&a->written[i / 8], __ATOMIC_RELAXED);
        if (stop - i == 8 ? bits != 0xff : (bits_mask(i, stop) & (uint8_t)~bits) != 0) {
            *first_unwritten = a->base + i / 8 * 8 + (uint64_t)__builtin_ctz(bits_mask(i, stop) & (uint8_t)~bits);
            return false;
        }
        i = stop;
    }
    return true;
}
