/* parse.c: PTX text -> ptx_module (ptx.h).
 *
 * PTX is line-oriented enough to read in one pass per kernel with a small tokenizer: statements end in
 * ';', directives start with '.', labels end in ':', `{ }` open scopes (inline asm declares registers
 * in them). Two things need a look ahead:
 *   - shared memory: a kernel's static `.shared` variables get offsets before its instructions are
 *     decoded, because `mov.u32 %r1, tile;` turns the address of `tile` into a constant. So each
 *     kernel body is scanned once for the shared variables it names, laid out, then decoded;
 *   - branch targets: labels may come after the branch; they are patched when the body ends.
 * Everything the emulator cannot run is refused here, with the PTX line, so an unsupported kernel
 * fails when it is loaded rather than halfway through a launch.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounded.h"
#include "ptx.h"

/* ---------------------------------------------------------------------------------------------- */
/* Tokens                                                                                         */

typedef enum { TOK_END, TOK_IDENT, TOK_NUMBER, TOK_STRING, TOK_PUNCT } tok_kind;

typedef struct {
    tok_kind kind;
    const char *start;
    int len;
    int line;
} token;

typedef struct {
    const char *text, *p, *path;
    int line;
    token tok;        /* the current token */
    char *err;
    size_t err_len;
    bool failed;
    const struct func_names *funcs; /* the module's functions: their names stand for their addresses */
} lexer;

static bool ident_start(char c) { return isalpha((unsigned char)c) || c == '_' || c == '$' || c == '%' || c == '.'; }
static bool ident_char(char c) { return isalnum((unsigned char)c) || c == '_' || c == '$' || c == '.'; }

static void skip_space(lexer *lx)
{
    for (;;) {
        while (*lx->p && isspace((unsigned char)*lx->p)) {
            if (*lx->p == '\n')
                lx->line++;
            lx->p++;
        }
        if (lx->p[0] == '/' && lx->p[1] == '/') {
            while (*lx->p && *lx->p != '\n')
                lx->p++;
        } else if (lx->p[0] == '/' && lx->p[1] == '*') {
            lx->p += 2;
            while (*lx->p && !(lx->p[0] == '*' && lx->p[1] == '/')) {
                if (*lx->p == '\n')
                    lx->line++;
                lx->p++;
            }
            if (*lx->p)
                lx->p += 2;
        } else {
            return;
        }
    }
}

static void advance(lexer *lx)
{
    skip_space(lx);
    token *t = &lx->tok;
    t->start = lx->p;
    t->line = lx->line;
    char c = *lx->p;
    if (!c) {
        t->kind = TOK_END, t->len = 0;
        return;
    }
    if (ident_start(c)) {
        lx->p++;
        /* identifiers keep their dots and '::' (mma.sync.aligned..., %tid.x, shared::cta) */
        while (ident_char(*lx->p) || (lx->p[0] == ':' && lx->p[1] == ':' && ident_char(lx->p[2])))
            lx->p += lx->p[0] == ':' ? 2 : 1;
        t->kind = TOK_IDENT;
    } else if (isdigit((unsigned char)c)) {
        lx->p++;
        while (isalnum((unsigned char)*lx->p) || *lx->p == '.' ||
               ((*lx->p == '-' || *lx->p == '+') && (lx->p[-1] == 'e' || lx->p[-1] == 'E') &&
                !(t->start[0] == '0' && (t->start[1] == 'x' || t->start[1] == 'X' || t->start[1] == 'f' ||
                                         t->start[1] == 'F' || t->start[1] == 'd' || t->start[1] == 'D'))))
            lx->p++;
        t->kind = TOK_NUMBER;
    } else if (c == '"') {
        /* a string ends on its line: one that runs on is refused where it is used (never echoed whole) */
        lx->p++;
        while (*lx->p && *lx->p != '"' && *lx->p != '\n')
            lx->p++;
        if (*lx->p == '"')
            lx->p++;
        t->kind = TOK_STRING;
    } else {
        lx->p++;
        t->kind = TOK_PUNCT;
    }
    t->len = (int)(lx->p - t->start);
}

static bool is(const lexer *lx, const char *s)
{
    return lx->tok.len == (int)strlen(s) && memcmp(lx->tok.start, s, (size_t)lx->tok.len) == 0;
}

/* The one way the parser fails: "PATH:LINE: what", one line. Pieces of the input in `what` go through
 * quoted() (bounded.h) or tok_quote() below, so no raw byte of the text reaches the message. */
static bool failf(lexer *lx, int line, const char *fmt, ...)
{
    if (lx->failed)
        return false;
    lx->failed = true;
    int n = snprintf(lx->err, lx->err_len, "%s:%d: ", shown_path(lx->path).s, line);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < lx->err_len)
        vsnprintf(lx->err + n, lx->err_len - (size_t)n, fmt, ap);
    va_end(ap);
    return false;
}

/* The current token, quoted for a message. */
static bounded_quote tok_quote(const lexer *lx) { return quoted(lx->tok.start, (size_t)lx->tok.len); }

static bool expect(lexer *lx, const char *s)
{
    if (!is(lx, s))
        return failf(lx, lx->tok.line, "expected '%s', found %s", s, tok_quote(lx).s);
    advance(lx);
    return true;
}

static bool out_of_memory(lexer *lx) { return failf(lx, lx->tok.line, "out of host memory"); }

/* A copy of the current token, NULL (and the parse failed) when there is no memory for it. */
static char *tok_dup(lexer *lx)
{
    char *s = malloc((size_t)lx->tok.len + 1);
    if (!s)
        return out_of_memory(lx), NULL;
    memcpy(s, lx->tok.start, (size_t)lx->tok.len);
    s[lx->tok.len] = 0;
    return s;
}

/* A number token as an unsigned integer in [0, max] (decimal, or hex with 0x), or a one-line error
 * naming `what`. Every count, size, alignment and index in the PTX text is read this way. */
static bool tok_u64(lexer *lx, const char *what, uint64_t max, uint64_t *out)
{
    char buf[32];
    if (lx->tok.kind == TOK_NUMBER && lx->tok.len < (int)sizeof buf) {
        memcpy(buf, lx->tok.start, (size_t)lx->tok.len);
        buf[lx->tok.len] = 0;
        if (bounded_u64(buf, 0, max, out)) {
            advance(lx);
            return true;
        }
    }
    return failf(lx, lx->tok.line, "%s must be an integer from 0 to %llu, found %s", what, (unsigned long long)max,
                 tok_quote(lx).s);
}

/* Skips to the end of the current line (for directives that have no ';': .loc, .file, .version). */
static void skip_line(lexer *lx)
{
    while (*lx->p && *lx->p != '\n')
        lx->p++;
    advance(lx);
}

/* Skips a balanced { ... } (debug sections). */
static void skip_braces(lexer *lx)
{
    int depth = 0;
    do {
        if (is(lx, "{"))
            depth++;
        else if (is(lx, "}"))
            depth--;
        advance(lx);
    } while (depth > 0 && lx->tok.kind != TOK_END);
}

/* ---------------------------------------------------------------------------------------------- */
/* Types and names                                                                                */

static const char *const type_names[T_COUNT] = {
    [T_NONE] = "", [T_PRED] = "pred", [T_B8] = "b8", [T_B16] = "b16", [T_B32] = "b32", [T_B64] = "b64",
    [T_B128] = "b128", [T_U8] = "u8", [T_U16] = "u16", [T_U32] = "u32", [T_U64] = "u64", [T_S8] = "s8",
    [T_S16] = "s16", [T_S32] = "s32", [T_S64] = "s64", [T_F16] = "f16", [T_F16X2] = "f16x2", [T_BF16] = "bf16",
    [T_BF16X2] = "bf16x2", [T_F32] = "f32", [T_F64] = "f64", [T_TF32] = "tf32"};

const char *ptx_type_name(ptx_type type) { return type_names[type]; }

static ptx_type type_of(const char *s)
{
    for (int t = 1; t < T_COUNT; t++)
        if (strcmp(s, type_names[t]) == 0)
            return (ptx_type)t;
    return T_NONE;
}

static const char *const op_names[OP_COUNT] = {
#define INSTRUCTION(opcode, name, class, handler, isa) [OP_##opcode] = name,
#include "instructions.def"
#undef INSTRUCTION
};

const char *ptx_op_name(ptx_op op) { return op_names[op]; }

/* ---------------------------------------------------------------------------------------------- */
/* Growable arrays                                                                                */

/* Makes room for one more element in the array *array_at (a T **, elements of elem_size bytes):
 * doubles the capacity (from 16). False, with the array as it was and the parse failed, when the
 * capacity would pass INT_MAX or realloc fails. */
static bool grow_array(lexer *lx, void *array_at, int *cap, size_t elem_size)
{
    if (*cap > INT_MAX / 2)
        return out_of_memory(lx);
    int new_cap = *cap ? 2 * *cap : 16;
    void *array;
    memcpy(&array, array_at, sizeof array);
    void *grown = realloc(array, (size_t)new_cap * elem_size);
    if (!grown)
        return out_of_memory(lx);
    memcpy(array_at, &grown, sizeof grown);
    *cap = new_cap;
    return true;
}

/* Appends value; an expression, false when there was no room (grow_array failed the parse). */
#define PUSH(lx, array, count, cap, value)                                                           \
    (((count) < (cap) || grow_array((lx), &(array), &(cap), sizeof *(array))) &&                     \
     ((array)[(count)++] = (value), true))

/* ---------------------------------------------------------------------------------------------- */
/* Hash tables: names and constants to indexes in amortised constant time                        */

/* FNV-1a, over a name or a constant's 8 bytes. */
static uint32_t hash_bytes(const void *data, size_t len)
{
    const uint8_t *p = data;
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

/* An open-addressing table of indexes into an array the caller owns (of labels, variables, constants):
 * the table holds index + 1 (0: empty), the array the keys. Lookups pass the key's hash and a function
 * that tells whether the element at an index has that key; growing rehashes with key_hash. Kept at most
 * half full, so a probe is short and a lookup or an insertion costs amortised constant time: the
 * parse of a kernel with N names or constants is O(N), not O(N^2). */
typedef struct {
    int32_t *bucket;
    uint32_t size;     /* a power of two, or 0 */
    int32_t count;
} index_table;

typedef bool (*key_equals)(const void *array, int32_t index, const void *key, size_t len);
typedef uint32_t (*key_hash)(const void *array, int32_t index);

/* The index whose element has this key, or -1. */
static int32_t table_find(const index_table *t, const void *array, key_equals same, uint32_t hash,
                          const void *key, size_t len)
{
    if (!t->size)
        return -1;
    for (uint32_t h = hash & (t->size - 1);; h = (h + 1) & (t->size - 1)) {
        int32_t at = t->bucket[h];
        if (at == 0)
            return -1;
        if (same(array, at - 1, key, len))
            return at - 1;
    }
}

/* Adds index (whose key is not in the table yet) under hash. */
static bool table_add(lexer *lx, index_table *t, const void *array, key_hash rehash, uint32_t hash, int32_t index)
{
    if (2 * ((uint64_t)t->count + 1) > t->size) {
        uint32_t size = t->size ? 2 * t->size : 64;
        int32_t *bucket = size > (1u << 30) ? NULL : calloc(size, sizeof *bucket);
        if (!bucket)
            return out_of_memory(lx);
        for (uint32_t i = 0; i < t->size; i++)
            if (t->bucket[i]) {
                uint32_t h = rehash(array, t->bucket[i] - 1) & (size - 1);
                while (bucket[h])
                    h = (h + 1) & (size - 1);
                bucket[h] = t->bucket[i];
            }
        free(t->bucket);
        t->bucket = bucket;
        t->size = size;
    }
    uint32_t h = hash & (t->size - 1);
    while (t->bucket[h])
        h = (h + 1) & (t->size - 1);
    t->bucket[h] = index + 1;
    t->count++;
    return true;
}

static void table_free(index_table *t)
{
    free(t->bucket);
    memset(t, 0, sizeof *t);
}

/* Arrays of elements whose first member is `char *name` (labels, variables, parameters, kernels) are
 * looked up by name through these two, given the element size in a small wrapper per array type. */
#define NAMED_KEYS(type)                                                                               \
    static bool type##_named(const void *array, int32_t i, const void *key, size_t len)                \
    {                                                                                                  \
        const char *name = ((const type *)array)[i].name;                                              \
        return strlen(name) == len && memcmp(name, key, len) == 0;                                     \
    }                                                                                                  \
    static uint32_t type##_hash(const void *array, int32_t i)                                          \
    {                                                                                                  \
        const char *name = ((const type *)array)[i].name;                                              \
        return hash_bytes(name, strlen(name));                                                         \
    }
NAMED_KEYS(ptx_var)
NAMED_KEYS(ptx_param)
NAMED_KEYS(ptx_kernel)

NAMED_KEYS(ptx_func)

/* The module's functions by name (ptx_parse's), which every lexer of the module can reach. */
typedef struct func_names {
    ptx_module *mod;
    index_table index;
} func_names;

/* The module function (.func) of that name, or -1. */
static int find_func(const func_names *funcs, const char *name, int len)
{
    if (!funcs)
        return -1;
    return table_find(&funcs->index, funcs->mod->funcs, ptx_func_named, hash_bytes(name, (size_t)len), name,
                      (size_t)len);
}

/* ---------------------------------------------------------------------------------------------- */
/* Register names -> slots, with the scopes `{ }` open                                            */

typedef struct {
    char *name;
    int32_t slot;
    int depth;       /* scope depth it was declared at */
    int shadowed;    /* index of the entry it hides, -1 if none */
} reg_entry;

typedef struct {
    reg_entry *entries;
    int n, cap;
    int *table;      /* open addressing: entry index + 1, 0 = empty */
    int table_size;
    int used;        /* buckets not empty: live names and the names closed scopes left behind (-1) */
} reg_map;

/* The bucket holding `name`, or NULL. Buckets hold entry index + 1; 0 is empty, -1 a deleted name. */
static int *reg_find_bucket(reg_map *m, const char *name, int len)
{
    uint32_t mask = (uint32_t)m->table_size - 1, h = hash_bytes(name, (size_t)len) & mask;
    for (;;) {
        int *b = &m->table[h];
        if (*b == 0)
            return NULL;
        if (*b > 0) {
            const char *e = m->entries[*b - 1].name;
            if ((int)strlen(e) == len && memcmp(e, name, (size_t)len) == 0)
                return b;
        }
        h = (h + 1) & mask;
    }
}

/* Where to put `name`: its own bucket if present, else the first free one on its probe path. */
static int *reg_insert_bucket(reg_map *m, const char *name, int len)
{
    int *found = reg_find_bucket(m, name, len);
    if (found)
        return found;
    uint32_t mask = (uint32_t)m->table_size - 1, h = hash_bytes(name, (size_t)len) & mask;
    while (m->table[h] > 0)
        h = (h + 1) & mask;
    return &m->table[h];
}

/* Rebuilds the table with room for twice the live names, dropping what closed scopes left behind (so
 * many small scopes cannot fill it up with deleted buckets and make a lookup probe forever). */
static bool reg_grow(lexer *lx, reg_map *m)
{
    int size = 1024;
    while (size < 4 * (m->n + 1) && size <= (1 << 28))
        size *= 2;
    int *table = size > (1 << 28) ? NULL : calloc((size_t)size, sizeof *table);
    if (!table)
        return out_of_memory(lx);
    free(m->table);
    m->table = table;
    m->table_size = size;
    m->used = m->n;
    for (int i = 0; i < m->n; i++) { /* every live entry, oldest first, so the newest wins */
        const char *name = m->entries[i].name;
        *reg_insert_bucket(m, name, (int)strlen(name)) = i + 1;
    }
    return true;
}

/* Declares name (taking it over) at scope depth. A name already declared in the same scope is refused,
 * as ptxas refuses it; one from an outer scope is hidden until this scope closes. */
static bool reg_define(lexer *lx, reg_map *m, char *name, int32_t slot, int depth, int line)
{
    if ((2 * (m->used + 1) > m->table_size && !reg_grow(lx, m)) || slot < 0) {
        free(name);
        return false;
    }
    int *b = reg_insert_bucket(m, name, (int)strlen(name));
    if (*b > 0 && m->entries[*b - 1].depth == depth) {
        failf(lx, line, "register %s is declared twice in the same scope", quoted_str(name).s);
        free(name);
        return false;
    }
    reg_entry e = {name, slot, depth, *b > 0 ? *b - 1 : -1};
    if (!PUSH(lx, m->entries, m->n, m->cap, e)) {
        free(name);
        return false;
    }
    if (*b == 0)
        m->used++;
    *b = m->n;
    return true;
}

static int32_t reg_lookup(reg_map *m, const char *name, int len)
{
    if (!m->table_size)
        return -1;
    int *b = reg_find_bucket(m, name, len);
    return b ? m->entries[*b - 1].slot : -1;
}

/* Closing a scope forgets its names (and uncovers what they hid). */
static void reg_close_scope(reg_map *m, int depth)
{
    while (m->n > 0 && m->entries[m->n - 1].depth > depth) {
        reg_entry *e = &m->entries[m->n - 1];
        int *b = reg_find_bucket(m, e->name, (int)strlen(e->name));
        *b = e->shadowed >= 0 ? e->shadowed + 1 : -1;
        free(e->name);
        m->n--;
    }
}

static void reg_free(reg_map *m)
{
    for (int i = 0; i < m->n; i++)
        free(m->entries[i].name);
    free(m->entries);
    free(m->table);
    memset(m, 0, sizeof *m);
}

/* ---------------------------------------------------------------------------------------------- */
/* Kernel under construction                                                                      */

/* A function's signature as written: `(returns) name (parameters)` of a .func or of a .callprototype (PTX
 * ISA 9.0, sections 7.1 "Function Declarations and Definitions" and 11.3.2 ".callprototype"). */
typedef struct {
    int n_returns, n_params;
    bool reg[2 * PTX_MAX_FUNC_PARAMS];       /* .reg, not .param (returns first, then parameters) */
    uint8_t type[2 * PTX_MAX_FUNC_PARAMS];   /* ptx_type */
    uint32_t size[2 * PTX_MAX_FUNC_PARAMS];
    char *name[2 * PTX_MAX_FUNC_PARAMS];     /* NULL in a prototype ("_") */
} fsig;

/* A module function while the module is read: where its body is, and its signature with the names. */
typedef struct {
    lexer body;            /* at its body's '{' (has_body) */
    bool has_body;
    bool address_taken;    /* its name stands somewhere but in a call (a mov, a call table): any kernel may
                              reach it through a pointer, so every kernel has it */
    uint32_t mark;         /* == kbuild.mark: the kernel being read reaches it */
    fsig sig;
} fdef;

/* The module under construction: what its kernels share while they are parsed. */
typedef struct {
    index_table var_index;    /* mod->vars by name */
    index_table kernel_index; /* mod->kernels by name */
    uint32_t *var_mark;       /* per module variable: 1 + the index of the last kernel whose body names it */
    int vars_cap, var_mark_cap, kernels_cap;
    fdef *fdefs;              /* per mod->funcs */
    int funcs_cap, fdefs_cap, n_fdefs;
    uint64_t link_tokens;     /* tokens of function bodies read into kernels so far (PTX_MAX_LINK_TOKENS) */
} mbuild;

typedef struct { char *name; int32_t index; int line; } label_def;
typedef struct { char *name; int32_t insn; int line; } label_use;
typedef struct { char *name; int32_t first, count; } branch_list; /* a .branchtargets list */
/* A .param variable of a call's scope, and in a .func also its own .local variables and parameters, with its
 * scope; slot >= 0 in a .func: the slot that holds its address in the activation (each has its own frame). */
typedef struct { ptx_var var; int depth; int32_t slot; } call_param;
typedef struct { int32_t insn, func; } call_site;                 /* a direct call, its target set when linked */
/* A ".callprototype" or ".calltargets" directive of the body: an indirect call's list of possible targets */
typedef struct { char *name; fsig sig; int32_t first, count; /* count < 0: a prototype */ } call_list;
NAMED_KEYS(label_def)

typedef struct {
    lexer *lx;
    ptx_module *mod;
    ptx_kernel *k;
    reg_map regs;
    int depth;
    int n_code_cap, n_slots_of, n_slots_of_cap, const_slot_cap, const_value_cap, sreg_slot_cap, sreg_which_cap;
    index_table const_index; /* k->const_value -> its index */
    label_def *labels;
    int n_labels, labels_cap;
    index_table label_index;
    label_use *uses;
    int n_uses, uses_cap;
    call_param *call_params; /* .param variables declared in the body (a call's arguments), innermost last;
                                they live in the thread's local memory, and go when their { } scope closes */
    int n_call_params, call_params_cap;
    branch_list *lists;     /* the .branchtargets lists, by name */
    int n_lists, lists_cap;
    label_use *entries;     /* their labels, each resolved into k->branch_targets[insn] at the end */
    int n_entries, entries_cap, branch_targets_cap;
    ptx_var *locals;        /* kernel-scope .shared/.local variables */
    int n_locals, locals_cap;
    index_table local_index;
    mbuild *mb;             /* the module's variables (ptx_parse's) */
    index_table param_index;
    uint32_t mark;          /* mb->var_mark[i] == mark: the body names module variable i (1 + kernel index) */
    int32_t *named;         /* those variables' indexes, in declaration order */
    int n_named, named_cap;
    int cur_file, cur_line; /* the last .loc */
    int sreg_slot[SREG_COUNT];
    uint8_t *slot_types;    /* each register slot's declared type (ptx_type), to tell a predicate operand */
    int n_slot_types, slot_types_cap;
    int func;               /* the module function whose body is read into the kernel (link_functions), -1: the
                               kernel's own body */
    ptx_frame *frame;       /* that function's frame in this kernel */
    int frame_vars_cap;
    call_site *calls;       /* direct calls of module functions, whose entries are known once all are read */
    int n_calls, calls_cap;
    call_list *call_lists;  /* the body's .callprototype and .calltargets */
    int n_call_lists, call_lists_cap, call_targets_cap;
    int32_t *reached;       /* the functions the kernel reaches (calls, through calls, or by address) */
    int n_reached, reached_cap;
} kbuild;

/* A new slot, or -1 (and the parse failed) past PTX_MAX_SLOTS: every warp holds all of a kernel's slots
 * for each of its 32 threads, so their number is bounded before any warp is allocated. */
static int32_t new_slot(kbuild *b)
{
    if (b->k->n_slots >= PTX_MAX_SLOTS) {
        failf(b->lx, b->lx->tok.line, "kernel %s needs more than %d registers and constants (the emulator's limit)",
              quoted_str(b->k->name).s, PTX_MAX_SLOTS);
        return -1;
    }
    return b->k->n_slots++;
}

static bool const_equals(const void *array, int32_t i, const void *key, size_t len)
{
    (void)len;
    return ((const uint64_t *)array)[i] == *(const uint64_t *)key;
}

static uint32_t const_hash(const void *array, int32_t i) { return hash_bytes(&((const uint64_t *)array)[i], 8); }

/* The slot of a constant: one per distinct value in a kernel, found by hash. -1 if the parse failed. */
static int32_t const_slot(kbuild *b, uint64_t value)
{
    ptx_kernel *k = b->k;
    uint32_t hash = hash_bytes(&value, sizeof value);
    int32_t i = table_find(&b->const_index, k->const_value, const_equals, hash, &value, sizeof value);
    if (i >= 0)
        return k->const_slot[i];
    int32_t slot = new_slot(b);
    int n = k->n_consts;
    if (slot < 0 || !PUSH(b->lx, k->const_slot, n, b->const_slot_cap, slot) ||
        !PUSH(b->lx, k->const_value, k->n_consts, b->const_value_cap, value))
        return -1;
    if (!table_add(b->lx, &b->const_index, k->const_value, const_hash, hash, k->n_consts - 1))
        return -1;
    return slot;
}

static const struct { const char *name; ptx_sreg which; } sreg_names[] = {
    {"%tid.x", SREG_TID_X}, {"%tid.y", SREG_TID_Y}, {"%tid.z", SREG_TID_Z},
    {"%ntid.x", SREG_NTID_X}, {"%ntid.y", SREG_NTID_Y}, {"%ntid.z", SREG_NTID_Z},
    {"%ctaid.x", SREG_CTAID_X}, {"%ctaid.y", SREG_CTAID_Y}, {"%ctaid.z", SREG_CTAID_Z},
    {"%nctaid.x", SREG_NCTAID_X}, {"%nctaid.y", SREG_NCTAID_Y}, {"%nctaid.z", SREG_NCTAID_Z},
    {"%laneid", SREG_LANEID}, {"%warpid", SREG_WARPID}, {"%nwarpid", SREG_NWARPID}, {"%smid", SREG_SMID},
    {"%nsmid", SREG_NSMID}, {"%gridid", SREG_GRIDID}, {"%lanemask_eq", SREG_LANEMASK_EQ},
    {"%lanemask_le", SREG_LANEMASK_LE}, {"%lanemask_lt", SREG_LANEMASK_LT}, {"%lanemask_ge", SREG_LANEMASK_GE},
    {"%lanemask_gt", SREG_LANEMASK_GT}, {"%dynamic_smem_size", SREG_DYNAMIC_SMEM_SIZE},
    {"%total_smem_size", SREG_TOTAL_SMEM_SIZE}, {"%clock", SREG_CLOCK}, {"%clock64", SREG_CLOCK64},
    {"%globaltimer", SREG_GLOBALTIMER}};

static int32_t sreg_slot(kbuild *b, const char *name, int len)
{
    for (size_t i = 0; i < sizeof sreg_names / sizeof sreg_names[0]; i++)
        if ((int)strlen(sreg_names[i].name) == len && memcmp(sreg_names[i].name, name, (size_t)len) == 0) {
            ptx_sreg which = sreg_names[i].which;
            if (b->sreg_slot[which] < 0) {
                ptx_kernel *k = b->k;
                int32_t slot = new_slot(b);
                int n = k->n_sregs;
                if (slot < 0 || !PUSH(b->lx, k->sreg_slot, n, b->sreg_slot_cap, slot) ||
                    !PUSH(b->lx, k->sreg_which, k->n_sregs, b->sreg_which_cap, (uint8_t)which))
                    return -2; /* the parse failed (not "no such special register") */
                b->sreg_slot[which] = slot;
            }
            return b->sreg_slot[which];
        }
    return -1;
}

/* A variable visible in the kernel by name: its own .shared/.local first, then the module's. */
static call_param *find_call_param(kbuild *b, const char *name, int len)
{
    for (int i = b->n_call_params - 1; i >= 0; i--) { /* a call's .param variables, innermost scope first */
        ptx_var *v = &b->call_params[i].var;
        if ((int)strlen(v->name) == len && strncmp(v->name, name, (size_t)len) == 0)
            return &b->call_params[i];
    }
    return NULL;
}

static ptx_var *find_var(kbuild *b, const char *name, int len)
{
    uint32_t hash = hash_bytes(name, (size_t)len);
    int32_t i = table_find(&b->local_index, b->locals, ptx_var_named, hash, name, (size_t)len);
    if (i >= 0)
        return &b->locals[i];
    i = table_find(&b->mb->var_index, b->mod->vars, ptx_var_named, hash, name, (size_t)len);
    return i >= 0 ? &b->mod->vars[i] : NULL;
}

static ptx_param *find_param(kbuild *b, const char *name, int len)
{
    if (b->func >= 0) /* a .func sees its own parameters (call params), never the kernel's */
        return NULL;
    int32_t i = table_find(&b->param_index, b->k->params, ptx_param_named, hash_bytes(name, (size_t)len), name,
                           (size_t)len);
    return i >= 0 ? &b->k->params[i] : NULL;
}

/* Adds a kernel-scope variable, refusing a second one of the same name. Takes v's allocations. */
static bool add_local(kbuild *b, ptx_var *v, int line)
{
    uint32_t hash = hash_bytes(v->name, strlen(v->name));
    if (table_find(&b->local_index, b->locals, ptx_var_named, hash, v->name, strlen(v->name)) >= 0) {
        failf(b->lx, line, "variable %s is declared twice in kernel %s", quoted_str(v->name).s,
              quoted_str(b->k->name).s);
        free(v->name), free(v->init);
        return false;
    }
    if (!PUSH(b->lx, b->locals, b->n_locals, b->locals_cap, *v)) {
        free(v->name), free(v->init);
        return false;
    }
    return table_add(b->lx, &b->local_index, b->locals, ptx_var_hash, hash, b->n_locals - 1);
}

/* ---------------------------------------------------------------------------------------------- */
/* Operands                                                                                       */

typedef enum { LIT_INT, LIT_F32, LIT_F64, LIT_REAL } lit_kind;

typedef enum { O_SLOT, O_LIT, O_VEC, O_MEM, O_LABEL, O_SINK } operand_kind;

typedef struct {
    operand_kind kind;
    int32_t slot;               /* O_SLOT (a register or special register), O_MEM base (-1: none) */
    bool negated;               /* !%p */
    lit_kind lit;               /* O_LIT */
    uint64_t bits;              /* O_LIT: integer value or float bits; O_MEM: the constant offset */
    double real;                /* O_LIT of kind LIT_REAL */
    ptx_space sym_space;        /* O_SLOT/O_MEM from a symbol: its state space, SPACE_GENERIC otherwise */
    uint64_t sym_size;          /* a variable's size in bytes (a call checks its .param arguments' sizes) */
    int func;                   /* 1 + the module function the name is (O_LIT: its address), 0 if none */
    int vec_first, vec_count;   /* O_VEC: elements in kbuild's scratch list */
    char *label;                /* O_LABEL */
    int line;
} operand;

#define MAX_OPERANDS (2 * PTX_MAX_FUNC_PARAMS + 2) /* a call: its returns, target, arguments, list */
#define MAX_VEC 160 /* wgmma m64n256k16: 128 accumulators, plus A */

typedef struct {
    operand op[MAX_OPERANDS];
    int n;
    operand vec[MAX_VEC];       /* the elements of vector operands */
    int n_vec;
    int call_returns;           /* call: the operands in its (return list) before the target, 0 if none */
    int call_args_end;          /* call: where its (argument list) ends, -1 if it has none */
} operand_list;

/* A literal (PTX ISA, "Constants"): integers in decimal, hex (0x), octal (0) or binary (0b), with an
 * optional U; 0fXXXXXXXX and 0dXXXXXXXXXXXXXXXX float bit patterns; decimal reals. An integer must fit
 * in 64 bits (the ISA's literals are 64-bit), and `negative` negates it modulo 2^64, so
 * -9223372036854775808 is INT64_MIN and never a signed overflow. */
static bool parse_number(lexer *lx, bool negative, operand *o)
{
    char buf[72];
    if (lx->tok.len >= (int)sizeof buf)
        return failf(lx, lx->tok.line, "malformed number %s", tok_quote(lx).s);
    memcpy(buf, lx->tok.start, (size_t)lx->tok.len);
    buf[lx->tok.len] = 0;
    o->kind = O_LIT;
    char *end;
    errno = 0;
    if ((buf[1] == 'f' || buf[1] == 'F') && buf[0] == '0') {
        o->lit = LIT_F32;
        o->bits = strtoull(buf + 2, &end, 16);
        if (lx->tok.len != 10) /* exactly eight hex digits */
            end = buf;
    } else if ((buf[1] == 'd' || buf[1] == 'D') && buf[0] == '0') {
        o->lit = LIT_F64;
        o->bits = strtoull(buf + 2, &end, 16);
        if (lx->tok.len != 18) /* exactly sixteen */
            end = buf;
    } else if (strchr(buf, '.') || ((strchr(buf, 'e') || strchr(buf, 'E')) && !(buf[1] == 'x' || buf[1] == 'X'))) {
        o->lit = LIT_REAL;
        o->real = strtod(buf, &end);
        if (negative)
            o->real = -o->real;
        negative = false;
    } else {
        o->lit = LIT_INT;
        int base = 10;
        const char *digits = buf;
        if (buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X'))
            base = 16, digits = buf + 2;
        else if (buf[0] == '0' && (buf[1] == 'b' || buf[1] == 'B'))
            base = 2, digits = buf + 2;
        else if (buf[0] == '0' && buf[1])
            base = 8, digits = buf + 1;
        o->bits = strtoull(digits, &end, base);
        if (end == digits || !isxdigit((unsigned char)*digits)) /* no digits, or strtoull's own sign */
            end = buf;
        else if (*end == 'U' || *end == 'u')
            end++;
    }
    if (*end || end == buf)
        return failf(lx, lx->tok.line, "malformed number %s", tok_quote(lx).s);
    if (errno == ERANGE)
        return failf(lx, lx->tok.line, "number %s does not fit in 64 bits", tok_quote(lx).s);
    if (negative) {
        if (o->lit == LIT_F32)
            o->bits ^= 0x80000000u;
        else if (o->lit == LIT_F64)
            o->bits ^= 0x8000000000000000ull;
        else
            o->bits = 0 - o->bits; /* two's complement negation, defined for every value */
    }
    advance(lx);
    return true;
}

/* A name in an operand: register, special register, or symbol (variable or parameter). */
static bool parse_name(kbuild *b, operand *o)
{
    lexer *lx = b->lx;
    const char *name = lx->tok.start;
    int len = lx->tok.len;
    o->line = lx->tok.line;
    o->sym_space = SPACE_GENERIC;
    if (len == 1 && name[0] == '_') {
        o->kind = O_SINK;
        advance(lx);
        return true;
    }
    int32_t slot = reg_lookup(&b->regs, name, len);
    if (slot < 0 && name[0] == '%')
        slot = sreg_slot(b, name, len);
    if (lx->failed)
        return false;
    if (slot >= 0) {
        o->kind = O_SLOT;
        o->slot = slot;
        advance(lx);
        return true;
    }
    call_param *cp = find_call_param(b, name, len);
    if (cp && cp->slot >= 0) { /* a .func's variable: its address is the activation's, in a slot */
        o->kind = O_SLOT;
        o->slot = cp->slot;
        o->sym_space = SPACE_LOCAL;
        o->sym_size = cp->var.size;
        advance(lx);
        return true;
    }
    ptx_var *var = cp ? &cp->var : find_var(b, name, len);
    ptx_param *param = var ? NULL : find_param(b, name, len);
    if (var || param) {
        uint64_t address = param ? param->offset
                           : var->space == SPACE_SHARED || var->space == SPACE_LOCAL ? var->offset
                                                                                      : (uint64_t)(uintptr_t)var->storage;
        o->kind = O_LIT;
        o->lit = LIT_INT;
        o->bits = address;
        o->sym_space = param ? SPACE_PARAM : var->space;
        o->sym_size = param ? param->size : var->size;
        advance(lx);
        if (is(lx, "+") || is(lx, "-")) { /* sym+offset */
            bool minus = is(lx, "-");
            advance(lx);
            if (is(lx, "-"))
                minus = !minus, advance(lx);
            operand off = {0};
            if (lx->tok.kind != TOK_NUMBER || !parse_number(lx, minus, &off) || off.lit != LIT_INT)
                return failf(lx, o->line, "malformed address offset after %s", quoted(name, (size_t)len).s);
            o->bits += off.bits;
        }
        return true;
    }
    if (name[0] == '%')
        return failf(lx, o->line, "undeclared register %s", quoted(name, (size_t)len).s);
    const int func = find_func(b->lx->funcs, name, len);
    if (func >= 0) { /* a function's name stands for its address (PTX ISA 9.0, section 6.4.4 "Labels and
                        Function Names as Operands") */
        o->kind = O_LIT;
        o->lit = LIT_INT;
        o->bits = PTX_FUNC_ADDRESS(func);
        o->func = func + 1;
        advance(lx);
        return true;
    }
    o->kind = O_LABEL; /* a branch target (checked when the body ends) */
    o->label = tok_dup(lx);
    advance(lx);
    return o->label != NULL;
}

static bool parse_operand(kbuild *b, operand_list *list, operand *o);

static bool parse_vector(kbuild *b, operand_list *list, operand *o)
{
    lexer *lx = b->lx;
    advance(lx); /* { */
    o->kind = O_VEC;
    o->vec_first = list->n_vec;
    o->vec_count = 0;
    while (!is(lx, "}")) {
        if (list->n_vec == MAX_VEC)
            return failf(lx, lx->tok.line, "vector operand too long");
        operand *e = &list->vec[list->n_vec++];
        memset(e, 0, sizeof *e);
        if (!parse_operand(b, list, e))
            return false;
        if (e->kind == O_VEC || e->kind == O_MEM)
            return failf(lx, e->line, "nested vector or address in a vector operand");
        o->vec_count++;
        if (is(lx, ","))
            advance(lx);
        else if (!is(lx, "}"))
            return failf(lx, lx->tok.line, "expected ',' or '}' in a vector operand");
    }
    advance(lx);
    return true;
}

/* [reg], [reg+imm], [sym+imm], [imm], and the tensor form [tensor-map, {coordinates}] */
static bool parse_address(kbuild *b, operand_list *list, operand *o)
{
    lexer *lx = b->lx;
    advance(lx); /* [ */
    o->kind = O_MEM;
    o->slot = -1;
    o->bits = 0;
    o->sym_space = SPACE_GENERIC;
    bool minus = false;
    if (is(lx, "-"))
        minus = true, advance(lx);
    if (lx->tok.kind == TOK_NUMBER) {
        operand lit = {0};
        if (!parse_number(lx, minus, &lit) || lit.lit != LIT_INT)
            return failf(lx, o->line, "malformed address");
        o->bits = lit.bits;
    } else {
        operand base = {0};
        if (!parse_name(b, &base))
            return false;
        if (base.kind == O_SLOT)
            o->slot = base.slot, o->sym_space = base.sym_space; /* a register, or a .func's variable */
        else if (base.kind == O_LIT)
            o->bits = base.bits, o->sym_space = base.sym_space;
        else {
            free(base.label);
            return failf(lx, o->line, "unknown name in an address");
        }
        while (is(lx, "+") || is(lx, "-")) {
            bool neg = is(lx, "-");
            advance(lx);
            if (is(lx, "-"))
                neg = !neg, advance(lx);
            operand off = {0};
            if (lx->tok.kind != TOK_NUMBER || !parse_number(lx, neg, &off) || off.lit != LIT_INT)
                return failf(lx, o->line, "malformed address offset");
            o->bits += off.bits;
        }
    }
    o->vec_count = 0;
    if (is(lx, ",")) { /* [map, {c0, c1, ...}] */
        advance(lx);
        operand coords = {0};
        if (!is(lx, "{") || !parse_vector(b, list, &coords))
            return lx->failed ? false : failf(lx, o->line, "expected {coordinates} in a tensor address");
        o->vec_first = coords.vec_first;
        o->vec_count = coords.vec_count;
    }
    return expect(lx, "]");
}

static bool parse_operand(kbuild *b, operand_list *list, operand *o)
{
    lexer *lx = b->lx;
    o->line = lx->tok.line;
    if (is(lx, "{"))
        return parse_vector(b, list, o);
    if (is(lx, "["))
        return parse_address(b, list, o);
    if (is(lx, "!")) {
        advance(lx);
        if (!parse_name(b, o))
            return false;
        if (o->kind != O_SLOT)
            return failf(lx, o->line, "'!' applies only to a predicate register");
        o->negated = true;
        return true;
    }
    if (is(lx, "-")) {
        advance(lx);
        if (lx->tok.kind != TOK_NUMBER)
            return failf(lx, o->line, "expected a number after '-'");
        return parse_number(lx, true, o);
    }
    if (lx->tok.kind == TOK_NUMBER)
        return parse_number(lx, false, o);
    if (lx->tok.kind == TOK_IDENT)
        return parse_name(b, o);
    return failf(lx, o->line, "unexpected %s in an operand", tok_quote(lx).s);
}

/* ---------------------------------------------------------------------------------------------- */
/* Decoding: opcode text + operands -> insn                                                       */

/* The bits a literal stands for in an operand of the given type. */
static uint64_t literal_bits(const operand *o, ptx_type type)
{
    if (type == T_F32) {
        float f;
        switch (o->lit) {
        case LIT_F32: return o->bits;
        case LIT_F64: { double d; memcpy(&d, &o->bits, 8); f = (float)d; break; }
        case LIT_REAL: f = (float)o->real; break;
        default: f = (float)(int64_t)o->bits; break;
        }
        uint32_t u;
        memcpy(&u, &f, 4);
        return u;
    }
    if (type == T_F64) {
        double d;
        switch (o->lit) {
        case LIT_F64: return o->bits;
        case LIT_F32: { uint32_t u = (uint32_t)o->bits; float f; memcpy(&f, &u, 4); d = f; break; }
        case LIT_REAL: d = o->real; break;
        default: d = (double)(int64_t)o->bits; break;
        }
        uint64_t u;
        memcpy(&u, &d, 8);
        return u;
    }
    return o->bits; /* integers and bit patterns: the low bits are the value */
}

typedef struct {
    kbuild *b;
    insn *in;
    operand_list *ops;
    const char *text;  /* the opcode as written */
    const char *shown; /* the same, quoted for messages */
} decoder;

static bool is_b128_register(const kbuild *b, const operand *o)
{
    return o->kind == O_SLOT && o->slot < b->n_slot_types && b->slot_types[o->slot] == T_B128;
}

/* Appends one operand (of the given type, for literals) to the instruction's slot list. */
static bool add_slot(decoder *d, const operand *o, ptx_type type)
{
    kbuild *b = d->b;
    int32_t slot;
    if (o->kind == O_SLOT) {
        slot = o->slot;
        if (o->negated)
            return failf(b->lx, o->line, "'!%%p' is not supported as an operand of %s", d->shown);
        if (is_b128_register(b, o)) /* PTX ISA "Fundamental Types": .b128 is for ld, st, mov, atom.exch, atom.cas */
            return failf(b->lx, o->line, "%s: a .b128 register is an operand of ld, st and mov of .b128 only",
                         d->shown);
    } else if (o->kind == O_LIT) {
        slot = const_slot(b, literal_bits(o, type));
    } else if (o->kind == O_SINK) {
        slot = new_slot(b); /* a write nobody reads */
    } else {
        return failf(b->lx, o->line, "operand of %s must be a register or a constant", d->shown);
    }
    return slot >= 0 && PUSH(b->lx, b->k->slots_of, b->n_slots_of, b->n_slots_of_cap, slot);
}

/* A scalar or vector operand: vectors add each element, a .b128 register its two slots (low half
 * first: register_slot). Returns the number of slots added. */
static int add_value(decoder *d, const operand *o, ptx_type type)
{
    if (type == T_B128 && o->kind != O_VEC) {
        if (!is_b128_register(d->b, o)) {
            failf(d->b->lx, o->line, "%s: its value must be a .b128 register", d->shown);
            return -1;
        }
        for (int32_t half = 0; half < 2; half++)
            if (!PUSH(d->b->lx, d->b->k->slots_of, d->b->n_slots_of, d->b->n_slots_of_cap, o->slot + half))
                return -1;
        return 2;
    }
    if (o->kind == O_VEC) {
        for (int i = 0; i < o->vec_count; i++)
            if (!add_slot(d, &d->ops->vec[o->vec_first + i], type))
                return -1;
        return o->vec_count;
    }
    return add_slot(d, o, type) ? 1 : -1;
}

static bool set_address(decoder *d, const operand *o)
{
    if (o->kind == O_MEM) {
        d->in->addr_base = o->slot;
        d->in->addr_offset = (int64_t)o->bits;
        if (o->sym_space != SPACE_GENERIC && d->in->space == SPACE_GENERIC)
            d->in->space = (uint8_t)o->sym_space; /* [param_name] in a generic ld: that space */
        if (o->sym_space == SPACE_LOCAL && d->in->space == SPACE_PARAM)
            d->in->space = SPACE_LOCAL; /* st.param/ld.param of a call's .param variable: in local memory here */
        return true;
    }
    if (o->kind == O_SLOT) { /* some forms take the address as a plain register */
        d->in->addr_base = o->slot;
        d->in->addr_offset = 0;
        return true;
    }
    return failf(d->b->lx, o->line, "%s needs an address operand [..]", d->shown);
}

/* The modifiers of an opcode: "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" -> parts. */
typedef struct {
    char parts[24][40];
    int n;
    bool used[24];
} modifiers;

static void split_opcode(const char *text, modifiers *m)
{
    m->n = 0;
    memset(m->used, 0, sizeof m->used);
    const char *p = text;
    while (*p && m->n < 24) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        if (len > 39)
            len = 39;
        memcpy(m->parts[m->n], p, len);
        m->parts[m->n][len] = 0;
        m->n++;
        if (!dot)
            break;
        p = dot + 1;
    }
}

static bool take(modifiers *m, const char *s)
{
    for (int i = 1; i < m->n; i++)
        if (!m->used[i] && strcmp(m->parts[i], s) == 0)
            return m->used[i] = true;
    return false;
}

/* Whether s is among the modifiers, taken or not. */
static bool named(const modifiers *m, const char *s)
{
    for (int i = 1; i < m->n; i++)
        if (strcmp(m->parts[i], s) == 0)
            return true;
    return false;
}

/* Takes the next unused type modifier, T_NONE if none is left. */
static ptx_type take_type(modifiers *m)
{
    for (int i = 1; i < m->n; i++)
        if (!m->used[i]) {
            ptx_type t = type_of(m->parts[i]);
            if (t != T_NONE) {
                m->used[i] = true;
                return t;
            }
        }
    return T_NONE;
}

static ptx_type wide_type(ptx_type t)
{
    switch (t) {
    case T_S16: return T_S32;
    case T_S32: return T_S64;
    case T_U16: return T_U32;
    case T_U32: return T_U64;
    default: return T_NONE;
    }
}

static ptx_space take_space(modifiers *m)
{
    static const struct { const char *name; ptx_space space; } spaces[] = {
        {"global", SPACE_GLOBAL}, {"shared", SPACE_SHARED}, {"shared::cta", SPACE_SHARED},
        {"local", SPACE_LOCAL}, {"param", SPACE_PARAM}, {"param::entry", SPACE_PARAM}, {"const", SPACE_CONST}};
    for (size_t i = 0; i < sizeof spaces / sizeof spaces[0]; i++)
        if (take(m, spaces[i].name))
            return spaces[i].space;
    return SPACE_GENERIC;
}

static void take_rounding(modifiers *m, insn *in)
{
    static const char *const names[] = {"", "rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "rna"};
    for (int r = 1; r < 10; r++)
        if (take(m, names[r]))
            in->rounding = (uint8_t)r;
}

/* Modifiers that change nothing an emulator can observe: caching and eviction hints, memory-order
 * scopes and the .sync/.aligned spellings checked elsewhere. */
/* Cache hints change nothing here. The memory-order qualifiers change nothing an interpreter running one
 * block at a time could see, but they matter to racecheck ("Memory Consistency Model": two strong
 * accesses do not race; a release and an acquire synchronize), so they are kept as flags. */
static void take_hints(modifiers *m, insn *in)
{
    static const char *const hints[] = {"nc", "ca", "cg", "cs", "lu", "cv", "wb", "wt", "L1::no_allocate",
                                        "L1::evict_last", "L1::evict_first", "L1::evict_normal",
                                        "L1::evict_unchanged", "L2::evict_last", "L2::evict_first",
                                        "L2::evict_normal", "L2::64B", "L2::128B", "L2::256B", "L2::cache_hint",
                                        "weak", "cta", "gpu", "sys", "cluster"};
    for (size_t i = 0; i < sizeof hints / sizeof hints[0]; i++)
        while (take(m, hints[i]))
            ;
    if (take(m, "relaxed") | take(m, "volatile"))
        in->flags |= F_STRONG;
    if (take(m, "acquire"))
        in->flags |= F_STRONG | F_ACQUIRE;
    if (take(m, "release"))
        in->flags |= F_STRONG | F_RELEASE;
    if (take(m, "acq_rel"))
        in->flags |= F_STRONG | F_ACQUIRE | F_RELEASE;
}

static bool finish_modifiers(decoder *d, modifiers *m)
{
    for (int i = 1; i < m->n; i++)
        if (!m->used[i])
            return failf(d->b->lx, d->in->ptx_line, "unsupported modifier '.%s' in %s", m->parts[i], d->shown);
    return true;
}

static bool need_operands(decoder *d, int n)
{
    if (d->ops->n != n)
        return failf(d->b->lx, d->in->ptx_line, "%s takes %d operands, found %d", d->shown, n, d->ops->n);
    return true;
}

/* Destination then sources, all of the instruction's type. */
static bool plain(decoder *d, int n_src, ptx_type src_type)
{
    if (!need_operands(d, 1 + n_src))
        return false;
    if (add_value(d, &d->ops->op[0], d->in->type) != 1)
        return false;
    for (int i = 1; i <= n_src; i++)
        if (add_value(d, &d->ops->op[i], src_type) != 1)
            return false;
    d->in->n_dst = 1;
    d->in->n_src = (uint8_t)n_src;
    return true;
}

/* cp.async.wait_group N, cp.async.bulk.wait_group N, wgmma.wait_group N: N is a constant, kept in
 * addr_offset. */
static bool decode_group_wait(decoder *d, modifiers *m, ptx_op op)
{
    d->in->op = (uint16_t)op;
    if (!finish_modifiers(d, m) || !need_operands(d, 1))
        return false;
    const operand *n = &d->ops->op[0];
    if (n->kind != O_LIT || n->lit != LIT_INT)
        return failf(d->b->lx, d->in->ptx_line, "%s needs a constant group count", d->shown);
    d->in->addr_offset = (int64_t)n->bits;
    return true;
}

static bool unsupported(decoder *d)
{
    return failf(d->b->lx, d->in->ptx_line, "instruction %s is not supported by the emulator", d->shown);
}

/* One operand of a call of a .func against the callee's return value or parameter i of sig (PTX ISA 9.0,
 * section 9.7.12.5 "call": "Arguments may be registers, immediate constants, or variables in .param space";
 * the operands are "type-checked against" the callee's or the prototype's signature). A .param one must
 * be a variable of the call's scope of the callee's size (its address goes to the callee); a .reg one a
 * register, or for a parameter an immediate (its value goes to the callee). */
static bool call_operand(decoder *d, const fsig *sig, int i, const operand *o, const char *callee)
{
    const bool ret = i < sig->n_returns;
    const int which = ret ? i + 1 : i - sig->n_returns + 1;
    if (!sig->reg[i]) {
        if ((o->kind != O_LIT && o->kind != O_SLOT) || o->sym_space != SPACE_LOCAL)
            return failf(d->b->lx, o->line, "call of %s: its %s %d is a .param, so the call's operand must be a .param "
                         "variable of the call", callee, ret ? "return value" : "parameter", which);
        if (o->sym_size != sig->size[i])
            return failf(d->b->lx, o->line, "call of %s: its %s %d has %u bytes, the call's .param variable %llu", callee,
                         ret ? "return value" : "parameter", which, sig->size[i], (unsigned long long)o->sym_size);
        return add_value(d, o, T_U64) == 1;
    }
    if (!(o->kind == O_SLOT && o->sym_space == SPACE_GENERIC) && !(!ret && o->kind == O_LIT &&
                                                                    o->sym_space == SPACE_GENERIC))
        return failf(d->b->lx, o->line, "call of %s: its %s %d is a .reg, so the call's operand must be a register%s",
                     callee, ret ? "return value" : "parameter", which, ret ? "" : " or a constant");
    return add_value(d, o, (ptx_type)sig->type[i]) == 1;
}

static uint64_t signature_of(const fsig *sig);

/* A call of a .func: named (direct) or through a register (indirect, with its list of targets after the
 * arguments). Operands: the returns, the target register (indirect), the arguments. */
static bool decode_function_call(decoder *d, int t)
{
    kbuild *b = d->b;
    insn *in = d->in;
    const operand_list *ops = d->ops;
    const operand *target = &ops->op[t];
    const int args_end = ops->call_args_end >= 0 ? ops->call_args_end : t + 1;
    const fsig *sig;
    char callee[256];
    if (target->func) {
        const int f = target->func - 1;
        const ptx_func *func = &b->mod->funcs[f];
        snprintf(callee, sizeof callee, "%s", quoted_str(func->name).s);
        if (!func->defined)
            return failf(b->lx, in->ptx_line, "call of %s: the module declares it but does not define it (separate "
                         "compilation, -rdc, is not supported)", callee);
        if (args_end != ops->n)
            return failf(b->lx, in->ptx_line, "%s: a direct call takes no list of targets", d->shown);
        sig = &b->mb->fdefs[f].sig;
        in->mode = CALL_FUNCTION;
        in->addr_offset = f;
        call_site site = {(int32_t)b->k->n_code, f};
        if (!PUSH(b->lx, b->calls, b->n_calls, b->calls_cap, site))
            return false;
    } else {
        /* indirect: "Indirect calls require an additional operand, flist or fproto" */
        if (args_end != ops->n - 1 || ops->op[args_end].kind != O_LABEL)
            return failf(b->lx, in->ptx_line, "%s: an indirect call needs a .callprototype or .calltargets label after "
                         "its arguments (a call table as the list is not supported)", d->shown);
        const char *list_name = ops->op[args_end].label;
        const call_list *list = NULL;
        for (int i = 0; i < b->n_call_lists && !list; i++)
            if (strcmp(b->call_lists[i].name, list_name) == 0)
                list = &b->call_lists[i];
        if (!list)
            return failf(b->lx, in->ptx_line, "%s: %s is no .callprototype or .calltargets declared before it", d->shown,
                         quoted_str(list_name).s);
        snprintf(callee, sizeof callee, "the functions of %s", quoted_str(list_name).s);
        sig = &list->sig;
        in->mode = CALL_INDIRECT;
        in->addr_offset = (int64_t)signature_of(sig);
        in->target = list->count < 0 ? -1 : list->first;
        in->dst_offset = list->count < 0 ? 0 : list->count;
    }
    if (t != sig->n_returns || args_end - t - 1 != sig->n_params)
        return failf(b->lx, in->ptx_line, "call of %s: it takes %d return value(s) and %d parameter(s), the call gives "
                     "%d and %d", callee, sig->n_returns, sig->n_params, t, args_end - t - 1);
    for (int i = 0; i < t; i++)
        if (!call_operand(d, sig, i, &ops->op[i], callee))
            return false;
    if (in->mode == CALL_INDIRECT && !add_value(d, target, T_U64))
        return false;
    for (int i = t + 1; i < args_end; i++)
        if (!call_operand(d, sig, sig->n_returns + i - t - 1, &ops->op[i], callee))
            return false;
    in->n_dst = (uint8_t)t;
    in->n_src = (uint8_t)(args_end - t - 1 + (in->mode == CALL_INDIRECT));
    return true;
}

/* Arithmetic and logic: [op].[mods].type d, a[, b[, c]] */
static const struct arithmetic {
    const char *name;
    ptx_op op;
    int n_src;
} arithmetic[] = {
    {"add", OP_ADD, 2}, {"sub", OP_SUB, 2}, {"mul", OP_MUL, 2}, {"mad", OP_MAD, 3}, {"fma", OP_FMA, 3},
    {"div", OP_DIV, 2}, {"rem", OP_REM, 2}, {"abs", OP_ABS, 1}, {"neg", OP_NEG, 1}, {"min", OP_MIN, 2},
    {"max", OP_MAX, 2}, {"and", OP_AND, 2}, {"or", OP_OR, 2}, {"xor", OP_XOR, 2}, {"not", OP_NOT, 1},
    {"cnot", OP_CNOT, 1}, {"popc", OP_POPC, 1}, {"clz", OP_CLZ, 1}, {"brev", OP_BREV, 1},
    {"sad", OP_SAD, 3}, {"mul24", OP_MUL24, 2}, {"mad24", OP_MAD24, 3}, {"copysign", OP_COPYSIGN, 2},
    {"addc", OP_ADDC, 2}, {"subc", OP_SUBC, 2}, {"madc", OP_MADC, 3},
    {"rcp", OP_RCP, 1}, {"sqrt", OP_SQRT, 1}, {"rsqrt", OP_RSQRT, 1}, {"ex2", OP_EX2, 1}, {"lg2", OP_LG2, 1},
    {"sin", OP_SIN, 1}, {"cos", OP_COS, 1}, {"tanh", OP_TANH, 1}};

static const struct arithmetic *arithmetic_of(const char *mnemonic)
{
    for (size_t i = 0; i < sizeof arithmetic / sizeof arithmetic[0]; i++)
        if (strcmp(mnemonic, arithmetic[i].name) == 0)
            return &arithmetic[i];
    return NULL;
}

static bool decode_arithmetic(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    operand_list *ops = d->ops;
    const struct arithmetic *row = arithmetic_of(base);
    in->op = (uint16_t)row->op;
    take_rounding(m, in);
    if (take(m, "sat")) in->flags |= F_SAT;
    if (take(m, "ftz")) in->flags |= F_FTZ;
    if (take(m, "approx")) in->flags |= F_APPROX;
    if (take(m, "full")) in->flags |= F_FULL;
    if (take(m, "hi")) in->flags |= F_HI;
    if (take(m, "lo")) in->flags |= F_LO;
    if (take(m, "wide")) in->flags |= F_WIDE;
    if (take(m, "cc")) in->flags |= F_CC;
    if (take(m, "NaN")) in->flags |= F_NAN;
    if (take(m, "relu")) in->flags |= F_RELU;
    if (take(m, "xorsign") || take(m, "abs")) /* min/max.xorsign.abs: sm_100 and later */
        return unsupported(d);
    in->type = (uint8_t)take_type(m);
    if (in->type == T_NONE)
        return failf(d->b->lx, in->ptx_line, "%s has no type", d->shown);
    if (!finish_modifiers(d, m))
        return false;
    /* "Half Precision Floating Point Instructions: fma": .relu on the f16 and bf16 forms alone */
    if ((in->flags & F_RELU) && (in->op != OP_FMA || (in->type != T_F16 && in->type != T_F16X2 &&
                                                       in->type != T_BF16 && in->type != T_BF16X2)))
        return failf(d->b->lx, in->ptx_line, "%s: .relu is for fma on f16, f16x2, bf16 and bf16x2", d->shown);
    /* PTX ISA, "Extended-Precision Integer Arithmetic Instructions": .cc on add, sub, mad and their
     * carry-in forms, 32- and 64-bit integers only; mad's forms take .hi or .lo */
    const bool extended = in->op == OP_ADDC || in->op == OP_SUBC || in->op == OP_MADC;
    if (extended || (in->flags & F_CC)) {
        const bool mad_form = in->op == OP_MAD || in->op == OP_MADC;
        if (!extended && in->op != OP_ADD && in->op != OP_SUB && !mad_form)
            return failf(d->b->lx, in->ptx_line, "%s: .cc is for add, sub and mad", d->shown);
        if (in->type != T_U32 && in->type != T_S32 && in->type != T_U64 && in->type != T_S64)
            return failf(d->b->lx, in->ptx_line, "%s: carry arithmetic takes .u32, .s32, .u64 or .s64", d->shown);
        if (in->flags & (F_SAT | F_WIDE) || (mad_form && !(in->flags & (F_HI | F_LO))))
            return failf(d->b->lx, in->ptx_line, "%s: carry arithmetic takes no .sat or .wide; mad takes .hi or .lo",
                         d->shown);
    }
    ptx_type src = (ptx_type)in->type;
    if ((in->op == OP_MUL || in->op == OP_MAD) && (in->flags & F_WIDE)) {
        in->stype = (uint8_t)src;
        ptx_type wide = wide_type(src);
        if (wide == T_NONE)
            return failf(d->b->lx, in->ptx_line, "%s: .wide needs a 16- or 32-bit integer type", d->shown);
        if (!need_operands(d, 1 + row->n_src) || add_value(d, &ops->op[0], wide) != 1 ||
            add_value(d, &ops->op[1], src) != 1 || add_value(d, &ops->op[2], src) != 1)
            return false;
        if (in->op == OP_MAD && add_value(d, &ops->op[3], wide) != 1)
            return false;
        in->n_dst = 1;
        in->n_src = (uint8_t)row->n_src;
        return true;
    }
    if (in->op == OP_POPC || in->op == OP_CLZ) { /* d is .u32 whatever the source width */
        if (!need_operands(d, 2) || add_value(d, &ops->op[0], T_U32) != 1 || add_value(d, &ops->op[1], src) != 1)
            return false;
        in->n_dst = 1, in->n_src = 1;
        return true;
    }
    if ((in->op == OP_MIN || in->op == OP_MAX) && ops->n == 4)
        return plain(d, 3, src); /* three-input min/max */
    return plain(d, row->n_src, src);
}

static bool decode_shift(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    operand_list *ops = d->ops;
    in->op = base[2] == 'l' ? OP_SHL : OP_SHR;
    in->type = (uint8_t)take_type(m);
    if (!finish_modifiers(d, m) || !need_operands(d, 3))
        return false;
    if (add_value(d, &ops->op[0], in->type) != 1 || add_value(d, &ops->op[1], in->type) != 1 ||
        add_value(d, &ops->op[2], T_U32) != 1)
        return false;
    in->n_dst = 1, in->n_src = 2;
    return true;
}

static bool decode_shf(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    in->op = OP_SHF;
    if (take(m, "l")) in->flags |= F_SHIFT_LEFT;
    else if (!take(m, "r")) return failf(d->b->lx, in->ptx_line, "%s needs .l or .r", d->shown);
    if (take(m, "clamp")) in->flags |= F_SHIFT_CLAMP;
    else if (!take(m, "wrap")) return failf(d->b->lx, in->ptx_line, "%s needs .clamp or .wrap", d->shown);
    in->type = (uint8_t)take_type(m);
    return finish_modifiers(d, m) && plain(d, 3, T_B32);
}

/* "bfind{.shiftamt}.type d, a": .u32/.s32/.u64/.s64 a, .u32 d */
static bool decode_bfind(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    operand_list *ops = d->ops;
    in->op = OP_BFIND;
    in->mode = (uint8_t)take(m, "shiftamt");
    in->type = (uint8_t)take_type(m);
    if (!finish_modifiers(d, m))
        return false;
    if (in->type != T_U32 && in->type != T_S32 && in->type != T_U64 && in->type != T_S64)
        return failf(d->b->lx, in->ptx_line, "%s: bfind takes .u32, .s32, .u64 or .s64", d->shown);
    if (!need_operands(d, 2) || add_value(d, &ops->op[0], T_U32) != 1 || add_value(d, &ops->op[1], in->type) != 1)
        return false;
    in->n_dst = 1, in->n_src = 1;
    return true;
}

static bool decode_dot_product(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    operand_list *ops = d->ops;
    /* "dp4a.atype.btype d, a, b, c" and "dp2a.mode.atype.btype": .u32 or .s32 each; c and d are .u32
     * when both are .u32, else .s32 (the same 32 bits either way) */
    in->op = base[2] == '4' ? OP_DP4A : OP_DP2A;
    if (in->op == OP_DP2A) {
        if (take(m, "hi")) in->flags |= F_HI;
        else if (take(m, "lo")) in->flags |= F_LO;
        else return failf(d->b->lx, in->ptx_line, "%s needs .lo or .hi", d->shown);
    }
    in->type = (uint8_t)take_type(m);  /* a's */
    in->stype = (uint8_t)take_type(m); /* b's */
    if (!finish_modifiers(d, m))
        return false;
    if ((in->type != T_U32 && in->type != T_S32) || (in->stype != T_U32 && in->stype != T_S32))
        return failf(d->b->lx, in->ptx_line, "%s: a and b are each .u32 or .s32", d->shown);
    if (!need_operands(d, 4))
        return false;
    for (int i = 0; i < 4; i++)
        if (add_value(d, &ops->op[i], T_B32) != 1)
            return false;
    in->n_dst = 1, in->n_src = 3;
    return true;
}

static bool decode_lop3(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    in->op = OP_LOP3;
    in->type = (uint8_t)take_type(m);
    return finish_modifiers(d, m) && plain(d, 4, T_B32);
}

static bool decode_bit_field(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    operand_list *ops = d->ops;
    bool insert = base[2] == 'i';
    in->op = insert ? OP_BFI : OP_BFE;
    in->type = (uint8_t)take_type(m);
    if (!finish_modifiers(d, m) || !need_operands(d, insert ? 5 : 4))
        return false;
    int n_typed = insert ? 3 : 2; /* d, a (and b for bfi) are of the type; pos, len are u32 */
    for (int i = 0; i < ops->n; i++)
        if (add_value(d, &ops->op[i], i < n_typed ? (ptx_type)in->type : T_U32) != 1)
            return false;
    in->n_dst = 1, in->n_src = (uint8_t)(ops->n - 1);
    return true;
}

static bool decode_prmt(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    in->op = OP_PRMT;
    static const char *const modes[] = {"", "f4e", "b4e", "rc8", "ecl", "ecr", "rc16"};
    for (int i = 1; i < 7; i++)
        if (take(m, modes[i]))
            in->mode = (uint8_t)i;
    in->type = (uint8_t)take_type(m);
    return finish_modifiers(d, m) && plain(d, 3, T_B32);
}

static bool decode_testp(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    operand_list *ops = d->ops;
    static const char *const modes[] = {"finite", "infinite", "number", "notanumber", "normal", "subnormal"};
    in->op = OP_TESTP;
    bool found = false;
    for (int i = 0; i < 6; i++)
        if (take(m, modes[i]))
            in->mode = (uint8_t)i, found = true;
    in->type = (uint8_t)take_type(m);
    if (!found || !finish_modifiers(d, m) || !need_operands(d, 2))
        return found ? false : unsupported(d);
    if (add_value(d, &ops->op[0], T_PRED) != 1 || add_value(d, &ops->op[1], in->type) != 1)
        return false;
    in->n_dst = 1, in->n_src = 1;
    return true;
}

static bool decode_compare(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    operand_list *ops = d->ops;
    static const char *const cmps[] = {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs",
                                       "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"};
    bool setp = base[3] == 'p';
    in->op = setp ? OP_SETP : OP_SET;
    bool found = false;
    for (int i = 0; i < 18 && !found; i++)
        if (take(m, cmps[i]))
            in->mode = (uint8_t)i, found = true;
    if (!found)
        return failf(d->b->lx, in->ptx_line, "%s has no comparison operator", d->shown);
    if (take(m, "and")) in->combine = 1;
    else if (take(m, "or")) in->combine = 2;
    else if (take(m, "xor")) in->combine = 3;
    if (take(m, "ftz")) in->flags |= F_FTZ;
    ptx_type dtype = setp ? T_PRED : take_type(m);
    in->type = (uint8_t)take_type(m);
    if (!setp) { /* set.CmpOp.dtype.stype: the first type is the destination's */
        in->stype = (uint8_t)in->type;
        in->type = (uint8_t)dtype;
    }
    if (!finish_modifiers(d, m))
        return false;
    ptx_type cmp_type = setp ? (ptx_type)in->type : (ptx_type)in->stype;
    /* setp.CmpOp.type p[|q], a, b[, {!}c] ; the parser reads "p|q" as p, then q as its own operand */
    int n = ops->n;
    const operand *c = NULL;
    if (in->combine) {
        c = &ops->op[n - 1];
        n--;
    }
    if (n < 3 || n > 4)
        return need_operands(d, 3);
    int n_dst = n - 2;
    for (int i = 0; i < n_dst; i++)
        if (add_value(d, &ops->op[i], setp ? T_PRED : dtype) != 1)
            return false;
    if (add_value(d, &ops->op[n_dst], cmp_type) != 1 || add_value(d, &ops->op[n_dst + 1], cmp_type) != 1)
        return false;
    if (c) {
        if (c->kind != O_SLOT)
            return failf(d->b->lx, c->line, "%s: the combining operand must be a predicate", d->shown);
        if (!PUSH(d->b->lx, d->b->k->slots_of, d->b->n_slots_of, d->b->n_slots_of_cap, c->slot))
            return false;
        if (c->negated)
            in->flags |= F_NEG_PRED;
    }
    in->n_dst = (uint8_t)n_dst;
    in->n_src = (uint8_t)(2 + (c != NULL));
    return true;
}

static bool decode_selp(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    operand_list *ops = d->ops;
    in->op = OP_SELP;
    in->type = (uint8_t)take_type(m);
    if (!finish_modifiers(d, m) || !need_operands(d, 4))
        return false;
    if (add_value(d, &ops->op[0], in->type) != 1 || add_value(d, &ops->op[1], in->type) != 1 ||
        add_value(d, &ops->op[2], in->type) != 1 || add_value(d, &ops->op[3], T_PRED) != 1)
        return false;
    in->n_dst = 1, in->n_src = 3;
    return true;
}

static bool decode_slct(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    operand_list *ops = d->ops;
    in->op = OP_SLCT;
    if (take(m, "ftz")) in->flags |= F_FTZ;
    in->type = (uint8_t)take_type(m);
    in->stype = (uint8_t)take_type(m);
    if (!finish_modifiers(d, m) || !need_operands(d, 4))
        return false;
    if (add_value(d, &ops->op[0], in->type) != 1 || add_value(d, &ops->op[1], in->type) != 1 ||
        add_value(d, &ops->op[2], in->type) != 1 || add_value(d, &ops->op[3], in->stype) != 1)
        return false;
    in->n_dst = 1, in->n_src = 3;
    return true;
}

static bool decode_mov(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    operand_list *ops = d->ops;
    in->op = OP_MOV;
    in->type = (uint8_t)take_type(m);
    if (!finish_modifiers(d, m) || !need_operands(d, 2))
        return false;
    const operand *dst = &ops->op[0], *src = &ops->op[1];
    int bits = ptx_type_bits(in->type);
    /* mov.b32 {a, b}, x (unpack) and mov.b32 x, {a, b} (pack): elements are bits / count wide */
    int nd = dst->kind == O_VEC ? dst->vec_count : 1, ns = src->kind == O_VEC ? src->vec_count : 1;
    if (nd > 1 && ns > 1)
        return failf(d->b->lx, in->ptx_line, "%s with vectors on both sides", d->shown);
    ptx_type part = T_NONE;
    int parts = nd > 1 ? nd : ns;
    if (parts > 1) {
        int part_bits = bits / parts;
        part = part_bits == 8 ? T_B8 : part_bits == 16 ? T_B16 : part_bits == 32 ? T_B32 : part_bits == 64 ? T_B64 : T_NONE;
        if (part == T_NONE || part_bits * parts != bits)
            return failf(d->b->lx, in->ptx_line, "%s: %d parts do not divide %d bits", d->shown, parts, bits);
    }
    /* slots, not values: a .b128 register is two (exec_mov moves each) */
    const int n_dst = add_value(d, dst, nd > 1 ? part : (ptx_type)in->type);
    const int n_src = n_dst < 0 ? -1 : add_value(d, src, ns > 1 ? part : (ptx_type)in->type);
    if (n_src < 0)
        return false;
    in->n_dst = (uint8_t)n_dst, in->n_src = (uint8_t)n_src;
    return true;
}

static bool decode_cvt(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    in->op = OP_CVT;
    take_rounding(m, in);
    if (take(m, "sat")) in->flags |= F_SAT;
    if (take(m, "ftz")) in->flags |= F_FTZ;
    if (take(m, "relu")) in->flags |= F_RELU;
    in->type = (uint8_t)take_type(m);
    in->stype = (uint8_t)take_type(m);
    if (in->type == T_NONE || in->stype == T_NONE || !finish_modifiers(d, m))
        return d->b->lx->failed ? false : failf(d->b->lx, in->ptx_line, "%s needs two types", d->shown);
    /* "cvt.frnd2{.relu}.f16.f32" and its f16x2, bf16 and bf16x2 forms: .relu on those alone */
    if ((in->flags & F_RELU) && (in->stype != T_F32 || (in->type != T_F16 && in->type != T_F16X2 &&
                                                          in->type != T_BF16 && in->type != T_BF16X2)))
        return failf(d->b->lx, in->ptx_line, "%s: .relu is for f32 to f16, f16x2, bf16 or bf16x2", d->shown);
    /* cvt.rn.f16x2.f32 d, a, b: two sources (a goes to the upper half) */
    int n_src = (in->type == T_F16X2 || in->type == T_BF16X2) ? 2 : 1;
    return plain(d, n_src, (ptx_type)in->stype);
}

static bool decode_address_space(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    operand_list *ops = d->ops;
    in->op = base[0] == 'c' ? OP_CVTA : OP_ISSPACEP;
    bool to = take(m, "to");
    in->space = (uint8_t)take_space(m);
    in->type = (uint8_t)take_type(m);
    if (to)
        in->flags |= F_CVTA_TO;
    if (!finish_modifiers(d, m) || !need_operands(d, 2))
        return false;
    if (add_value(d, &ops->op[0], in->op == OP_ISSPACEP ? T_PRED : (ptx_type)in->type) != 1)
        return false;
    if (add_value(d, &ops->op[1], in->op == OP_ISSPACEP ? T_U64 : (ptx_type)in->type) != 1)
        return false;
    in->n_dst = 1, in->n_src = 1;
    return true;
}

static bool decode_load_store(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    operand_list *ops = d->ops;
    bool load = base[0] == 'l';
    in->op = load ? OP_LD : OP_ST;
    in->space = (uint8_t)take_space(m);
    in->vec = 1;
    if (take(m, "v2")) in->vec = 2;
    else if (take(m, "v4")) in->vec = 4;
    else if (take(m, "v8")) in->vec = 8;
    in->type = (uint8_t)take_type(m);
    if (in->type == T_NONE || !finish_modifiers(d, m) || !need_operands(d, 2))
        return d->b->lx->failed ? false : failf(d->b->lx, in->ptx_line, "%s needs a type", d->shown);
    const bool b128 = in->type == T_B128; /* PTX ISA "ld", "st": .b128 (PTX ISA 8.3, sm_70 or higher) */
    if (b128 && in->vec > 1)
        return failf(d->b->lx, in->ptx_line, "%s: .b128 does not come in vectors", d->shown);
    if (in->type == T_PRED) /* PTX ISA "ld", "st": .type is .b, .u, .s or .f of 8 to 128 bits */
        return failf(d->b->lx, in->ptx_line, "%s: .pred is not a type ld or st takes", d->shown);
    const operand *value = &ops->op[load ? 0 : 1], *address = &ops->op[load ? 1 : 0];
    int n = add_value(d, value, (ptx_type)in->type);
    if (n < 0)
        return false;
    if (b128) /* the 16 bytes of one register's two slots: run as the ld/st.v2.b64 of the same bytes, which needs
               * the same alignment (natural: 16) */
        in->type = T_B64, in->vec = 2;
    if (n != in->vec)
        return failf(d->b->lx, in->ptx_line, "%s moves %d values but names %d", d->shown, in->vec, n);
    if (load)
        in->n_dst = (uint8_t)n;
    else
        in->n_src = (uint8_t)n;
    return set_address(d, address);
}

static bool decode_atomic(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    operand_list *ops = d->ops;
    static const char *const ops_names[] = {"add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas"};
    in->op = base[0] == 'a' ? OP_ATOM : OP_RED;
    in->space = (uint8_t)take_space(m);
    bool found = false;
    for (int i = 0; i < 10; i++)
        if (take(m, ops_names[i]))
            in->mode = (uint8_t)i, found = true;
    if (!found)
        return failf(d->b->lx, in->ptx_line, "%s has no operation", d->shown);
    take(m, "noftz");
    in->type = (uint8_t)take_type(m);
    if (!finish_modifiers(d, m))
        return false;
    if (in->type == T_NONE)
        return failf(d->b->lx, in->ptx_line, "%s needs a type", d->shown);
    if (in->type == T_F16 || in->type == T_F16X2 || in->type == T_BF16 || in->type == T_BF16X2 ||
        in->type == T_B128)
        return unsupported(d);
    if (in->type == T_PRED) /* PTX ISA "atom", "red": .type is .b, .u, .s or .f of 16 to 128 bits */
        return failf(d->b->lx, in->ptx_line, "%s: .pred is not a type atom or red takes", d->shown);
    int first = 0;
    if (in->op == OP_ATOM) {
        if (add_value(d, &ops->op[0], in->type) != 1)
            return false;
        in->n_dst = 1;
        first = 1;
    }
    if (!set_address(d, &ops->op[first]))
        return false;
    int n_src = in->mode == ATOM_CAS ? 2 : 1;
    if (ops->n != first + 1 + n_src)
        return need_operands(d, first + 1 + n_src);
    for (int i = 0; i < n_src; i++)
        if (add_value(d, &ops->op[first + 1 + i], in->type) != 1)
            return false;
    in->n_src = (uint8_t)n_src;
    return true;
}

static bool decode_prefetch(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    operand_list *ops = d->ops;
    in->op = OP_PREFETCH;
    in->space = (uint8_t)take_space(m);
    take(m, "L1"), take(m, "L2");
    return finish_modifiers(d, m) && need_operands(d, 1) && set_address(d, &ops->op[0]);
}

static bool decode_bra(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    operand_list *ops = d->ops;
    in->op = OP_BRA;
    if (take(m, "uni"))
        in->flags |= F_UNI;
    if (!finish_modifiers(d, m) || !need_operands(d, 1))
        return false;
    if (ops->op[0].kind != O_LABEL)
        return failf(d->b->lx, in->ptx_line, "%s needs a label (indirect branches are not supported)", d->shown);
    label_use use = {ops->op[0].label, (int32_t)d->b->k->n_code, in->ptx_line};
    if (!PUSH(d->b->lx, d->b->uses, d->b->n_uses, d->b->uses_cap, use))
        return false; /* the label is freed with the operands */
    ops->op[0].label = NULL;
    return true;
}

static bool decode_call(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    operand_list *ops = d->ops;
    /* "call{.uni} (ret), f, (args)" (PTX ISA 9.0, section 9.7.12.5 "call"): f is a .func of the module (a
     * direct call), a register holding a function's address and then a .callprototype or .calltargets
     * list (an indirect call), or the CUDA runtime's vprintf (one .b32 return, the format and the
     * argument buffer) or __assertfail (message, file, line, function, char size). */
    in->op = OP_CALL;
    take(m, "uni");
    if (!finish_modifiers(d, m))
        return false;
    const int t = ops->call_returns;
    if (t >= ops->n)
        return failf(d->b->lx, in->ptx_line, "%s names no function", d->shown);
    const operand *target = &ops->op[t];
    if (target->func || target->kind == O_SLOT)
        return decode_function_call(d, t);
    if (target->kind != O_LABEL)
        return failf(d->b->lx, in->ptx_line, "%s: operand %d is neither a function nor a register holding one's "
                     "address", d->shown, t + 1);
    const int callee = t;
    const char *name = ops->op[callee].label;
    const bool printf_call = strcmp(name, "vprintf") == 0, assert_call = strcmp(name, "__assertfail") == 0;
    if (!printf_call && !assert_call)
        return failf(d->b->lx, in->ptx_line, "call of %s: no function of that name is declared in the module",
                     quoted_str(name).s);
    const int want_returns = printf_call ? 1 : 0, want_args = printf_call ? 2 : 5;
    if (callee != want_returns || ops->n - callee - 1 != want_args)
        return failf(d->b->lx, in->ptx_line, "call of %s takes %d return value(s) and %d arguments", name,
                     want_returns, want_args);
    in->mode = printf_call ? CALL_VPRINTF : CALL_ASSERTFAIL;
    for (int i = 0; i < ops->n; i++) {
        if (i == callee)
            continue;
        if ((ops->op[i].kind != O_LIT && ops->op[i].kind != O_SLOT) || ops->op[i].sym_space != SPACE_LOCAL)
            return failf(d->b->lx, in->ptx_line, "%s: operand %d is not a .param variable of the call", d->shown,
                         i + 1);
        if (add_value(d, &ops->op[i], T_U64) != 1) /* its offset in the thread's local memory */
            return false;
    }
    in->n_dst = 0, in->n_src = (uint8_t)(ops->n - 1);
    return true;
}

/* "brx.idx{.uni} index, tlist": a .branchtargets list declared before */
static bool decode_brx(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    operand_list *ops = d->ops;
    in->op = OP_BRX;
    if (!take(m, "idx"))
        return failf(d->b->lx, in->ptx_line, "%s: brx needs .idx", d->shown);
    if (take(m, "uni"))
        in->flags |= F_UNI;
    if (!finish_modifiers(d, m) || !need_operands(d, 2))
        return false;
    if (ops->op[1].kind != O_LABEL)
        return failf(d->b->lx, in->ptx_line, "%s: the second operand is a .branchtargets list's name", d->shown);
    const branch_list *list = NULL;
    for (int i = 0; i < d->b->n_lists && !list; i++)
        if (strcmp(d->b->lists[i].name, ops->op[1].label) == 0)
            list = &d->b->lists[i];
    if (!list)
        return failf(d->b->lx, in->ptx_line, "%s: no .branchtargets list %s before it", d->shown,
                     quoted_str(ops->op[1].label).s);
    in->target = list->first;
    in->addr_offset = list->count;
    if (add_value(d, &ops->op[0], T_U32) != 1)
        return false;
    in->n_dst = 0, in->n_src = 1;
    return true;
}

static bool decode_thread_end(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    in->op = base[0] == 'r' ? OP_RET : base[0] == 'e' ? OP_EXIT : OP_TRAP;
    /* "ret": "Return execution to caller's environment. A divergent return suspends threads until all
     * threads are ready to return to the caller" (section 9.7.12.6); in a kernel the thread is done */
    in->mode = d->b->func >= 0 ? RET_FUNCTION : RET_KERNEL;
    take(m, "uni");
    return finish_modifiers(d, m) && need_operands(d, 0);
}

static bool decode_fence(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    /* One block runs at a time on one host thread and its memory is coherent, so orderings between
     * its own threads, and between the generic and async proxies ("fence.proxy.async"), hold already.
     * What a missing fence would break is racecheck's business (racecheck.c), not the interpreter's. */
    in->op = OP_MEMBAR;
    take(m, "sc"), take(m, "gl");
    const bool mbarrier_init = take(m, "mbarrier_init");
    if (mbarrier_init) /* orders prior mbarrier.init for the async proxy (racecheck) */
        in->flags |= F_MBAR_INIT_FENCE;
    bool proxy = take(m, "proxy"), async = take(m, "async");
    if (proxy && async)
        in->flags |= F_PROXY_ASYNC;
    const ptx_space space = take_space(m); /* .shared is .shared::cta */
    /* its reach (ptx.h); the scope, .cta or wider, take_hints took already */
    in->mode = mbarrier_init || (proxy && space == SPACE_GLOBAL)           ? FENCE_VIEW_ONLY
               : named(m, "cta") || (proxy && space == SPACE_SHARED) ? FENCE_CTA
                                                                     : FENCE_GPU;
    take(m, "shared::cluster");
    return finish_modifiers(d, m);
}

/* nanosleep and pmevent: hints, nothing for an emulator to do (their operands are not read) */
static bool decode_hint(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    in->op = strcmp(base, "nanosleep") == 0 ? OP_NANOSLEEP : OP_PMEVENT;
    take_type(m);
    return finish_modifiers(d, m);
}

static bool decode_barrier(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    operand_list *ops = d->ops;
    /* bar.sync == barrier.sync.aligned; bar.warp.sync is the warp barrier (PTX ISA, "bar, barrier") */
    if (strcmp(base, "bar") == 0 && take(m, "warp")) {
        in->op = OP_BAR_WARP;
        if (!finish_modifiers(d, m) || !need_operands(d, 1))
            return false;
        if (add_value(d, &ops->op[0], T_B32) != 1)
            return false;
        in->n_src = 1;
        return true;
    }
    take(m, "cta");
    bool red = false;
    if (take(m, "arrive"))
        in->op = OP_BAR_ARRIVE;
    else if (take(m, "red"))
        in->op = OP_BAR_RED, red = true;
    else
        in->op = OP_BAR, take(m, "sync");
    if (strcmp(base, "bar") == 0)
        in->flags |= F_ALIGNED; /* "bar{.cta}.sync is equivalent to barrier{.cta}.sync.aligned" */
    if (red) {
        if (take(m, "popc")) in->mode = ATOM_POPC;
        else if (take(m, "and")) in->mode = ATOM_AND;
        else if (take(m, "or")) in->mode = ATOM_OR;
        in->type = (uint8_t)take_type(m);
    }
    if (!finish_modifiers(d, m))
        return false;
    int first = 0;
    if (red) {
        if (add_value(d, &ops->op[0], in->type) != 1)
            return false;
        in->n_dst = 1;
        first = 1;
    }
    int n = ops->n - first;
    if (n < 1 || n > (red ? 3 : 2))
        return failf(d->b->lx, in->ptx_line, "%s: wrong number of operands", d->shown);
    for (int i = 0; i < n; i++) {
        bool is_pred = red && i == n - 1;
        const operand *o = &ops->op[first + i];
        if (is_pred && o->negated) {
            in->flags |= F_NEG_PRED;
            operand plain_o = *o;
            plain_o.negated = false;
            if (add_value(d, &plain_o, T_PRED) != 1)
                return false;
        } else if (add_value(d, o, is_pred ? T_PRED : T_U32) != 1) {
            return false;
        }
    }
    if (n == (red ? 3 : 2))
        in->flags |= F_HAS_COUNT;
    in->n_src = (uint8_t)n;
    return true;
}

static bool decode_mbarrier(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    operand_list *ops = d->ops;
    /* "Parallel Synchronization and Communication Instructions: mbarrier": the object is 8 bytes of
     * shared memory; its layout is the implementation's (exec.c's mbar_* say this one's) */
    static const struct { const char *name; ptx_op op; } forms[] = {
        {"init", OP_MBAR_INIT}, {"arrive", OP_MBAR_ARRIVE}, {"expect_tx", OP_MBAR_EXPECT_TX},
        {"complete_tx", OP_MBAR_COMPLETE_TX}, {"try_wait", OP_MBAR_TRY_WAIT}, {"test_wait", OP_MBAR_TRY_WAIT},
        {"inval", OP_MBAR_INVAL}};
    bool found = false;
    for (size_t i = 0; i < sizeof forms / sizeof forms[0] && !found; i++)
        if (take(m, forms[i].name))
            in->op = (uint16_t)forms[i].op, found = true;
    if (!found) /* arrive_drop, pending_count: not needed yet */
        return unsupported(d);
    if (strstr(d->text, "test_wait"))
        in->flags |= F_TEST_WAIT;
    if (in->op == OP_MBAR_ARRIVE && take(m, "expect_tx"))
        in->flags |= F_EXPECT_TX;
    if (in->op == OP_MBAR_TRY_WAIT && take(m, "parity"))
        in->flags |= F_PARITY;
    in->space = (uint8_t)take_space(m);
    in->type = (uint8_t)take_type(m);
    if (in->type != T_B64 || !finish_modifiers(d, m))
        return d->b->lx->failed ? false : unsupported(d);
    /* [dst,] [addr], operands... : mbarrier.init [a], count; arrive state, [a]{, count};
     * arrive.expect_tx state, [a], tx; expect_tx/complete_tx [a], tx; try_wait p, [a], parity|state */
    int first = 0;
    if (in->op == OP_MBAR_ARRIVE || in->op == OP_MBAR_TRY_WAIT) {
        if (add_value(d, &ops->op[0], in->op == OP_MBAR_TRY_WAIT ? T_PRED : T_B64) != 1)
            return false;
        in->n_dst = 1;
        first = 1;
    }
    if (ops->n <= first || !set_address(d, &ops->op[first]))
        return d->b->lx->failed ? false : need_operands(d, first + 1);
    int n_src = ops->n - first - 1;
    if (n_src > 2 || (in->op == OP_MBAR_INVAL && n_src) || (in->op != OP_MBAR_ARRIVE && in->op != OP_MBAR_INVAL &&
                                                            in->op != OP_MBAR_TRY_WAIT && n_src != 1))
        return failf(d->b->lx, in->ptx_line, "%s: wrong number of operands", d->shown);
    for (int i = 0; i < n_src; i++) /* try_wait's optional suspend-time hint is read and ignored */
        if (add_value(d, &ops->op[first + 1 + i],
                      in->op == OP_MBAR_TRY_WAIT && !(in->flags & F_PARITY) && i == 0 ? T_B64 : T_U32) != 1)
            return false;
    in->n_src = (uint8_t)n_src;
    return true;
}

static bool decode_wgmma(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    operand_list *ops = d->ops;
    /* "Asynchronous Multiply-and-Accumulate Instruction: wgmma.*" */
    if (take(m, "fence") || take(m, "commit_group")) {
        in->op = strstr(d->text, "fence") ? OP_WGMMA_FENCE : OP_WGMMA_COMMIT;
        return finish_modifiers(d, m) && need_operands(d, 0);
    }
    if (take(m, "wait_group"))
        return decode_group_wait(d, m, OP_WGMMA_WAIT);
    if (!take(m, "mma_async"))
        return unsupported(d);
    /* wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}.{f16,bf16} d, a-desc|{a}, b-desc, scale-d,
     *     imm-scale-a, imm-scale-b[, imm-trans-a], imm-trans-b
     * Its slots, in the order hopper.c's wgmma_operands_of names them: d, A, b-desc, scale-d. */
    in->op = OP_WGMMA_MMA;
    int n = 0;
    for (int i = 1; i < m->n && !n; i++) {
        int parsed = 0;
        if (!m->used[i] && sscanf(m->parts[i], "m64n%dk16%n", &n, &parsed) == 1 && m->parts[i][parsed] == 0)
            m->used[i] = true;
        else
            n = 0;
    }
    in->type = (uint8_t)take_type(m);
    ptx_type a = take_type(m), b = take_type(m);
    if (!finish_modifiers(d, m))
        return false;
    if (n < 8 || n > 256 || n % 8 || in->type != T_F32 || a != b || (a != T_F16 && a != T_BF16))
        return unsupported(d);
    in->stype = (uint8_t)a;
    in->size = (uint8_t)(n / 8);
    const bool a_regs = ops->n == 7;
    if (ops->n != 8 && ops->n != 7)
        return need_operands(d, 8);
    if (a_regs)
        in->flags |= F_A_REGS;
    if (add_value(d, &ops->op[0], T_F32) != n / 2)
        return failf(d->b->lx, in->ptx_line, "%s needs %d accumulator registers", d->shown, n / 2);
    in->n_dst = (uint8_t)(n / 2);
    int given = add_value(d, &ops->op[1], a_regs ? T_B32 : T_B64);
    if (given != (a_regs ? 4 : 1) || add_value(d, &ops->op[2], T_B64) != 1 || add_value(d, &ops->op[3], T_PRED) != 1)
        return d->b->lx->failed ? false : failf(d->b->lx, in->ptx_line, "%s: wrong A, B or scale-d operand", d->shown);
    in->n_src = (uint8_t)(given + 2);
    /* the immediates: scale-a, scale-b in {1, -1}, the transposes in {0, 1} -> mode bits */
    int first_imm = 4;
    for (int i = first_imm; i < ops->n; i++)
        if (ops->op[i].kind != O_LIT || ops->op[i].lit != LIT_INT)
            return failf(d->b->lx, in->ptx_line, "%s: scale and transpose operands must be constants", d->shown);
    int64_t scale_a = (int64_t)ops->op[4].bits, scale_b = (int64_t)ops->op[5].bits;
    int64_t trans_a = a_regs ? 0 : (int64_t)ops->op[6].bits, trans_b = (int64_t)ops->op[a_regs ? 6 : 7].bits;
    if ((scale_a != 1 && scale_a != -1) || (scale_b != 1 && scale_b != -1) || (trans_a & ~1) || (trans_b & ~1))
        return failf(d->b->lx, in->ptx_line, "%s: scales must be 1 or -1, transposes 0 or 1", d->shown);
    in->mode = (uint8_t)(trans_a | trans_b << 1 | (scale_a < 0) << 2 | (scale_b < 0) << 3);
    return true;
}

static bool decode_setmaxnreg(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    operand_list *ops = d->ops;
    /* setmaxnreg.{inc,dec}.sync.aligned.u32 imm-reg-count ("Miscellaneous Instructions: setmaxnreg") */
    in->op = OP_SETMAXNREG;
    if (take(m, "inc"))
        in->flags |= F_INC;
    else if (!take(m, "dec"))
        return unsupported(d);
    in->type = (uint8_t)take_type(m);
    if (!finish_modifiers(d, m) || !need_operands(d, 1))
        return false;
    if (ops->op[0].kind != O_LIT || ops->op[0].lit != LIT_INT)
        return failf(d->b->lx, in->ptx_line, "%s needs a constant register count", d->shown);
    int64_t count = (int64_t)ops->op[0].bits;
    if (count < 24 || count > 256 || count % 8)
        return failf(d->b->lx, in->ptx_line, "%s: the register count %lld must be a multiple of 8 in [24, 256]",
                     d->shown, (long long)count);
    in->addr_offset = count;
    return true;
}

static bool decode_elect(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    operand_list *ops = d->ops;
    /* elect.sync d|p, membermask: one leader lane of the members ("elect.sync") */
    in->op = OP_ELECT;
    if (!finish_modifiers(d, m) || ops->n != 3)
        return d->b->lx->failed ? false : need_operands(d, 3);
    if (add_value(d, &ops->op[0], T_B32) != 1 || add_value(d, &ops->op[1], T_PRED) != 1 ||
        add_value(d, &ops->op[2], T_B32) != 1)
        return false;
    in->n_dst = 2, in->n_src = 1;
    return true;
}

static bool decode_cp_async(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    operand_list *ops = d->ops;
    if (!take(m, "async"))
        return unsupported(d);
    if (take(m, "bulk") && !strstr(d->text, ".tensor")) {
        /* cp.async.bulk ("Data Movement and Conversion Instructions: cp.async.bulk"):
         *   .shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], size, [mbar]
         *   .global.shared::cta.bulk_group [dst], [src], size;  commit_group;  wait_group{.read} N */
        if (take(m, "commit_group")) {
            in->op = OP_BULK_COMMIT;
            return finish_modifiers(d, m) && need_operands(d, 0);
        }
        if (take(m, "wait_group")) {
            take(m, "read"); /* waits for the reads only: landing the whole copy then is as good */
            return decode_group_wait(d, m, OP_BULK_WAIT);
        }
        in->op = OP_BULK_COPY;
        bool to_shared = take(m, "shared::cluster"), to_global = !to_shared && take(m, "global");
        bool from_global = to_shared && take(m, "global"), from_shared = to_global && take(m, "shared::cta");
        bool via_mbarrier = take(m, "mbarrier::complete_tx::bytes"), via_group = take(m, "bulk_group");
        if (!((from_global && via_mbarrier) || (from_shared && via_group)) || !finish_modifiers(d, m))
            return d->b->lx->failed ? false : unsupported(d);
        if (to_global)
            in->flags |= F_TO_GLOBAL;
        if (!need_operands(d, to_shared ? 4 : 3))
            return false;
        const operand *dst = &ops->op[0], *src = &ops->op[1];
        if (dst->kind != O_MEM || src->kind != O_MEM || (to_shared && ops->op[3].kind != O_MEM))
            return failf(d->b->lx, in->ptx_line, "%s needs [dst], [src], size%s", d->shown,
                         to_shared ? ", [mbarrier]" : "");
        /* sources: dst base, size, mbarrier base (shared form); src is the memory operand */
        operand dst_base = dst->slot >= 0 ? (operand){.kind = O_SLOT, .slot = dst->slot}
                                          : (operand){.kind = O_LIT, .lit = LIT_INT, .bits = 0};
        if (!add_slot(d, &dst_base, T_U64) || add_value(d, &ops->op[2], T_U32) != 1)
            return false;
        in->n_src = 2;
        if (to_shared) {
            const operand *bar = &ops->op[3];
            operand bar_base = bar->slot >= 0 ? (operand){.kind = O_SLOT, .slot = bar->slot}
                                              : (operand){.kind = O_LIT, .lit = LIT_INT, .bits = 0};
            if (!add_slot(d, &bar_base, T_U32))
                return false;
            in->mbar_offset = (int32_t)bar->bits;
            in->n_src = 3;
        }
        in->dst_offset = (int32_t)dst->bits;
        in->addr_base = src->slot;
        in->addr_offset = (int64_t)src->bits;
        return true;
    }
    if (take(m, "commit_group")) {
        in->op = OP_CP_ASYNC_COMMIT;
        return finish_modifiers(d, m) && need_operands(d, 0);
    }
    if (take(m, "wait_group"))
        return decode_group_wait(d, m, OP_CP_ASYNC_WAIT);
    if (take(m, "wait_all")) {
        in->op = OP_CP_ASYNC_WAIT_ALL;
        return finish_modifiers(d, m) && need_operands(d, 0);
    }
    if (strstr(d->text, ".bulk.tensor")) {
        /* cp.async.bulk.tensor.Nd.shared::cluster.global{.tile}.mbarrier::complete_tx::bytes
         *     [dst], [tensor-map, {c0, ...}], [mbar]   ("cp.async.bulk.tensor") */
        in->op = OP_TMA_LOAD;
        if (!take(m, "tensor"))
            return unsupported(d);
        static const char *const dims[] = {"1d", "2d", "3d", "4d", "5d"};
        for (int i = 0; i < 5; i++)
            if (take(m, dims[i]))
                in->vec = (uint8_t)(i + 1);
        take(m, "tile");
        bool to_shared = take(m, "shared::cluster") || take(m, "shared::cta");
        bool from_global = take(m, "global");
        bool complete_tx = take(m, "mbarrier::complete_tx::bytes");
        if (!in->vec || !to_shared || !from_global || !complete_tx || !finish_modifiers(d, m))
            return d->b->lx->failed ? false : unsupported(d);
        if (!need_operands(d, 3))
            return false;
        const operand *dst = &ops->op[0], *src = &ops->op[1], *bar = &ops->op[2];
        if (dst->kind != O_MEM || src->kind != O_MEM || bar->kind != O_MEM || src->vec_count != in->vec)
            return failf(d->b->lx, in->ptx_line, "%s needs [dst], [map, {%d coordinates}], [mbarrier]", d->shown,
                         in->vec);
        operand dst_base = dst->slot >= 0 ? (operand){.kind = O_SLOT, .slot = dst->slot}
                                          : (operand){.kind = O_LIT, .lit = LIT_INT, .bits = 0};
        operand bar_base = bar->slot >= 0 ? (operand){.kind = O_SLOT, .slot = bar->slot}
                                          : (operand){.kind = O_LIT, .lit = LIT_INT, .bits = 0};
        if (!add_slot(d, &dst_base, T_U32) || !add_slot(d, &bar_base, T_U32))
            return false;
        for (int i = 0; i < src->vec_count; i++)
            if (!add_slot(d, &ops->vec[src->vec_first + i], T_S32))
                return false;
        in->n_src = (uint8_t)(2 + src->vec_count);
        in->dst_offset = (int32_t)dst->bits;
        in->mbar_offset = (int32_t)bar->bits;
        in->addr_base = src->slot;
        in->addr_offset = (int64_t)src->bits;
        in->space = src->sym_space != SPACE_GENERIC ? (uint8_t)src->sym_space : SPACE_GENERIC;
        return true;
    }
    if (take(m, "mbarrier"))
        return unsupported(d);
    in->op = OP_CP_ASYNC;
    /* cp.async.ca|cg.shared{::cta}.global [dst], [src], cp-size{, src-size | , ignore-src} */
    bool shared = take(m, "shared") || take(m, "shared::cta");
    bool global = take(m, "global");
    if (!shared || !global || !finish_modifiers(d, m))
        return d->b->lx->failed ? false : unsupported(d);
    if (ops->n < 3 || ops->n > 4)
        return failf(d->b->lx, in->ptx_line, "%s: wrong number of operands", d->shown);
    if (ops->op[2].kind != O_LIT || ops->op[2].lit != LIT_INT)
        return failf(d->b->lx, in->ptx_line, "%s needs a constant copy size", d->shown);
    in->size = (uint8_t)ops->op[2].bits;
    if (in->size != 4 && in->size != 8 && in->size != 16)
        return failf(d->b->lx, in->ptx_line, "%s: copy size %d is not 4, 8 or 16", d->shown, in->size);
    /* sources: the dst address and the src address as slots, then src-size or ignore-src */
    if (ops->op[0].kind != O_MEM || ops->op[1].kind != O_MEM)
        return failf(d->b->lx, in->ptx_line, "%s needs [dst], [src]", d->shown);
    operand dst_base = {.kind = O_SLOT, .slot = ops->op[0].slot};
    if (ops->op[0].slot < 0)
        dst_base = (operand){.kind = O_LIT, .lit = LIT_INT, .bits = 0};
    if (add_slot(d, &dst_base, T_U32) != true)
        return false;
    in->dst_offset = (int32_t)ops->op[0].bits;
    in->addr_base = ops->op[1].slot; /* the global source is the instruction's memory operand */
    in->addr_offset = (int64_t)ops->op[1].bits;
    in->n_src = 1;
    if (ops->n == 4) {
        const operand *extra = &ops->op[3];
        if (extra->kind == O_SLOT && extra->negated)
            return unsupported(d);
        /* a predicate register: ignore-src; otherwise a size */
        bool pred = extra->kind == O_SLOT && extra->slot < d->b->n_slot_types &&
                    d->b->slot_types[extra->slot] == T_PRED;
        if (pred)
            in->flags |= F_IGNORE_SRC;
        if (add_value(d, extra, pred ? T_PRED : T_U32) != 1)
            return false;
        in->n_src = 2;
    }
    return true;
}

static bool decode_ldmatrix(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    operand_list *ops = d->ops;
    in->op = OP_LDMATRIX;
    if (!take(m, "m8n8"))
        return unsupported(d);
    if (take(m, "x1")) in->vec = 1;
    else if (take(m, "x2")) in->vec = 2;
    else if (take(m, "x4")) in->vec = 4;
    else return unsupported(d);
    if (take(m, "trans"))
        in->flags |= F_TRANS;
    in->space = (uint8_t)take_space(m);
    in->type = (uint8_t)take_type(m);
    if (in->type != T_B16 || !finish_modifiers(d, m) || !need_operands(d, 2))
        return d->b->lx->failed ? false : unsupported(d);
    if (add_value(d, &ops->op[0], T_B32) != in->vec)
        return failf(d->b->lx, in->ptx_line, "%s needs %d destination registers", d->shown, in->vec);
    in->n_dst = in->vec;
    return set_address(d, &ops->op[1]);
}

static bool decode_mma(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    operand_list *ops = d->ops;
    /* mma.sync.aligned.m16n8k16.row.col.dtype.f16.f16.ctype (and bf16; and m16n8k8) */
    in->op = OP_MMA;
    in->vec = take(m, "m16n8k16") ? 16 : take(m, "m16n8k8") ? 8 : 0; /* K */
    if (!in->vec || !take(m, "row") || !take(m, "col"))
        return unsupported(d);
    in->type = (uint8_t)take_type(m);   /* D */
    ptx_type a = take_type(m), b = take_type(m);
    in->stype = (uint8_t)a;              /* A and B */
    ptx_type c = take_type(m);
    if (!finish_modifiers(d, m))
        return false;
    if (a != b || (a != T_F16 && a != T_BF16) || (in->type != T_F32 && in->type != T_F16) ||
        (c != T_F32 && c != T_F16) || (a == T_BF16 && (in->type != T_F32 || c != T_F32)))
        return unsupported(d);
    if (c != in->type) /* ptxas refuses it too */
        return failf(d->b->lx, in->ptx_line,
                     "%s: .dtype must be the same as .ctype at .m16n8k8 and .m16n8k16 (PTX ISA, \"Warp-level "
                     "matrix multiply-accumulate instruction: mma\")", d->shown);
    const int nd = in->type == T_F32 ? 4 : 2, nc = nd;
    const int na = in->vec / 4, nb = in->vec / 8; /* registers of A and of B */
    if (!need_operands(d, 4) || add_value(d, &ops->op[0], in->type == T_F32 ? T_F32 : T_B32) != nd ||
        add_value(d, &ops->op[1], T_B32) != na || add_value(d, &ops->op[2], T_B32) != nb ||
        add_value(d, &ops->op[3], c == T_F32 ? T_F32 : T_B32) != nc)
        return d->b->lx->failed ? false
                                : failf(d->b->lx, in->ptx_line, "%s: wrong fragment sizes", d->shown);
    in->n_dst = (uint8_t)nd;
    in->n_src = (uint8_t)(na + nb + nc);
    return true;
}

static bool decode_wmma(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    operand_list *ops = d->ops;
    bool load = take(m, "load"), store = !load && take(m, "store"), mma = !load && !store && take(m, "mma");
    if (!load && !store && !mma)
        return unsupported(d);
    if (!take(m, "m16n16k16"))
        return unsupported(d);
    if (mma) {
        /* wmma.mma.sync.aligned.alayout.blayout.m16n16k16.dtype.ctype d, a, b, c (f16 inputs) */
        in->op = OP_WMMA_MMA;
        if (take(m, "row")) in->flags |= F_ROW_A;
        else if (!take(m, "col")) return unsupported(d);
        if (take(m, "row")) in->flags |= F_ROW_B;
        else if (!take(m, "col")) return unsupported(d);
        in->type = (uint8_t)take_type(m);
        ptx_type c = take_type(m);
        in->mode = (uint8_t)c;
        if (!finish_modifiers(d, m) || !need_operands(d, 4))
            return false;
        if ((in->type != T_F32 && in->type != T_F16) || (c != T_F32 && c != T_F16))
            return unsupported(d);
        int nd = in->type == T_F32 ? 8 : 4, nc = c == T_F32 ? 8 : 4;
        if (add_value(d, &ops->op[0], in->type) != nd || add_value(d, &ops->op[1], T_B32) != 8 ||
            add_value(d, &ops->op[2], T_B32) != 8 || add_value(d, &ops->op[3], c) != nc)
            return d->b->lx->failed ? false
                                    : failf(d->b->lx, in->ptx_line, "%s: wrong fragment sizes", d->shown);
        in->n_dst = (uint8_t)nd, in->n_src = (uint8_t)(16 + nc);
        return true;
    }
    /* wmma.load.{a,b,c}.sync.aligned.layout.m16n16k16{.space}.type r, [p]{, stride}
       wmma.store.d.sync.aligned.layout.m16n16k16{.space}.type [p], r{, stride} */
    in->op = load ? OP_WMMA_LOAD : OP_WMMA_STORE;
    if (take(m, "a")) in->mode = WMMA_A;
    else if (take(m, "b")) in->mode = WMMA_B;
    else if (take(m, "c")) in->mode = WMMA_C;
    else if (take(m, "d")) in->mode = WMMA_D;
    else return unsupported(d);
    if (take(m, "row")) in->flags |= F_ROW_A;
    else if (!take(m, "col")) return unsupported(d);
    in->space = (uint8_t)take_space(m);
    in->type = (uint8_t)take_type(m);
    if (!finish_modifiers(d, m))
        return false;
    if (in->type != T_F16 && in->type != T_F32)
        return unsupported(d);
    bool matrix_ab = in->mode == WMMA_A || in->mode == WMMA_B;
    int n = matrix_ab ? 8 : in->type == T_F32 ? 8 : 4;
    const operand *frag = &ops->op[load ? 0 : 1], *address = &ops->op[load ? 1 : 0];
    if (ops->n < 2 || ops->n > 3)
        return need_operands(d, 3);
    if (add_value(d, frag, in->type == T_F32 ? T_F32 : T_B32) != n)
        return failf(d->b->lx, in->ptx_line, "%s needs %d fragment registers", d->shown, n);
    if (load)
        in->n_dst = (uint8_t)n;
    else
        in->n_src = (uint8_t)n;
    /* the stride (elements), 16 when not given: one more source after the fragment */
    operand stride = {.kind = O_LIT, .lit = LIT_INT, .bits = 16};
    if (add_value(d, ops->n == 3 ? &ops->op[2] : &stride, T_U32) != 1)
        return false;
    in->n_src++;
    return set_address(d, address);
}

static bool decode_shfl(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    operand_list *ops = d->ops;
    in->op = OP_SHFL;
    static const char *const modes[] = {"up", "down", "bfly", "idx"};
    bool found = false;
    for (int i = 0; i < 4; i++)
        if (take(m, modes[i]))
            in->mode = (uint8_t)i, found = true;
    in->type = (uint8_t)take_type(m);
    if (!found || !finish_modifiers(d, m))
        return d->b->lx->failed ? false : unsupported(d);
    /* shfl.sync.mode.b32 d[|p], a, b, c, membermask */
    int n = ops->n, n_dst = n - 4;
    if (n_dst < 1 || n_dst > 2)
        return need_operands(d, 5);
    if (add_value(d, &ops->op[0], T_B32) != 1 || (n_dst == 2 && add_value(d, &ops->op[1], T_PRED) != 1))
        return false;
    for (int i = n_dst; i < n; i++)
        if (add_value(d, &ops->op[i], T_B32) != 1)
            return false;
    in->n_dst = (uint8_t)n_dst, in->n_src = 4;
    return true;
}

static bool decode_vote(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    operand_list *ops = d->ops;
    in->op = OP_VOTE;
    static const char *const modes[] = {"all", "any", "uni", "ballot"};
    bool found = false;
    for (int i = 0; i < 4; i++)
        if (take(m, modes[i]))
            in->mode = (uint8_t)i, found = true;
    in->type = (uint8_t)take_type(m);
    if (!found || !finish_modifiers(d, m) || !need_operands(d, 3))
        return d->b->lx->failed ? false : unsupported(d);
    const operand *pred = &ops->op[1];
    if (pred->negated)
        in->flags |= F_NEG_PRED;
    operand p = *pred;
    p.negated = false;
    if (add_value(d, &ops->op[0], in->mode == VOTE_BALLOT ? T_B32 : T_PRED) != 1 ||
        add_value(d, &p, T_PRED) != 1 || add_value(d, &ops->op[2], T_B32) != 1)
        return false;
    in->n_dst = 1, in->n_src = 2;
    return true;
}

static bool decode_activemask(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    in->op = OP_ACTIVEMASK;
    in->type = (uint8_t)take_type(m);
    return finish_modifiers(d, m) && plain(d, 0, T_B32);
}

static bool decode_redux(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    static const char *const ops_names[] = {"add", "min", "max", "inc", "dec", "and", "or", "xor"};
    in->op = OP_REDUX;
    bool found = false;
    for (int i = 0; i < 8; i++)
        if (take(m, ops_names[i]))
            in->mode = (uint8_t)i, found = true;
    in->type = (uint8_t)take_type(m);
    if (!found || (in->type != T_U32 && in->type != T_S32 && in->type != T_B32) || !finish_modifiers(d, m))
        return d->b->lx->failed ? false : unsupported(d);
    return plain(d, 2, (ptx_type)in->type);
}

static bool decode_match(decoder *d, modifiers *m, const char *base)
{
    insn *in = d->in;
    operand_list *ops = d->ops;
    /* match.any.sync.type d, a, membermask;  match.all.sync.type d[|p], a, membermask */
    in->op = OP_MATCH;
    if (take(m, "all"))
        in->mode = VOTE_ALL;
    else if (take(m, "any"))
        in->mode = VOTE_ANY;
    else
        return unsupported(d);
    in->type = (uint8_t)take_type(m);
    if (!finish_modifiers(d, m))
        return false;
    int n_dst = ops->n - 2;
    if (n_dst < 1 || n_dst > (in->mode == VOTE_ALL ? 2 : 1))
        return need_operands(d, 3);
    if (add_value(d, &ops->op[0], T_B32) != 1 || (n_dst == 2 && add_value(d, &ops->op[1], T_PRED) != 1) ||
        add_value(d, &ops->op[n_dst], in->type) != 1 || add_value(d, &ops->op[n_dst + 1], T_B32) != 1)
        return false;
    in->n_dst = (uint8_t)n_dst, in->n_src = 2;
    return true;
}

/* The decoder of each mnemonic but the arithmetic ones (above): its modifiers, types and operands into the
 * instruction (false after reporting what is wrong, or that the emulator does not implement it). */
typedef bool family_decoder(decoder *d, modifiers *m, const char *base);
static const struct {
    const char *mnemonic;
    family_decoder *decode;
} families[] = {
    {"shl", decode_shift}, {"shr", decode_shift},
    {"shf", decode_shf},
    {"bfind", decode_bfind},
    {"dp4a", decode_dot_product}, {"dp2a", decode_dot_product},
    {"lop3", decode_lop3},
    {"bfe", decode_bit_field}, {"bfi", decode_bit_field},
    {"prmt", decode_prmt},
    {"testp", decode_testp},
    {"setp", decode_compare}, {"set", decode_compare},
    {"selp", decode_selp},
    {"slct", decode_slct},
    {"mov", decode_mov},
    {"cvt", decode_cvt},
    {"cvta", decode_address_space}, {"isspacep", decode_address_space},
    {"ld", decode_load_store}, {"st", decode_load_store},
    {"atom", decode_atomic}, {"red", decode_atomic},
    {"prefetch", decode_prefetch}, {"prefetchu", decode_prefetch},
    {"bra", decode_bra},
    {"call", decode_call},
    {"brx", decode_brx},
    {"ret", decode_thread_end}, {"exit", decode_thread_end}, {"trap", decode_thread_end},
    {"membar", decode_fence}, {"fence", decode_fence},
    {"nanosleep", decode_hint}, {"pmevent", decode_hint},
    {"bar", decode_barrier}, {"barrier", decode_barrier},
    {"mbarrier", decode_mbarrier},
    {"wgmma", decode_wgmma},
    {"setmaxnreg", decode_setmaxnreg},
    {"elect", decode_elect},
    {"cp", decode_cp_async},
    {"ldmatrix", decode_ldmatrix},
    {"mma", decode_mma},
    {"wmma", decode_wmma},
    {"shfl", decode_shfl},
    {"vote", decode_vote},
    {"activemask", decode_activemask},
    {"redux", decode_redux},
    {"match", decode_match},
};

/* One instruction's text into d->in: what every family shares (hints, .sync, .aligned), then its mnemonic's
 * decoder. */
static bool decode(decoder *d)
{
    insn *in = d->in;
    modifiers m;
    split_opcode(d->text, &m);
    const char *base = m.parts[0];
    in->addr_base = -1;
    in->target = -1;
    take_hints(&m, in);
    take(&m, "sync"); /* the warp-synchronous forms are the only ones this emulator knows */
    if (take(&m, "aligned"))
        in->flags |= F_ALIGNED;

    if (arithmetic_of(base))
        return decode_arithmetic(d, &m, base);
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
        if (strcmp(base, families[i].mnemonic) == 0)
            return families[i].decode(d, &m, base);
    return unsupported(d);
}

/* ---------------------------------------------------------------------------------------------- */
/* Declarations                                                                                   */

/* The most bytes a variable of a state space may have (ptx.h, "What the parser accepts"). */
static uint64_t space_limit(ptx_space space)
{
    switch (space) {
    case SPACE_SHARED: return PTX_MAX_SHARED_BYTES;
    case SPACE_LOCAL: return PTX_MAX_LOCAL_BYTES;
    case SPACE_PARAM: return PTX_MAX_PARAM_BYTES;
    default: return PTX_MAX_VAR_BYTES;
    }
}

static const char *space_name(ptx_space space)
{
    static const char *const names[] = {"", ".global", ".shared", ".local", ".param", ".const"};
    return names[space];
}

/* ".align N": N a power of two, at most PTX_MAX_ALIGN (PTX ISA, "Variables": "byte-count must be a power
 * of two"). */
static bool parse_align(lexer *lx, uint64_t *align)
{
    advance(lx); /* .align */
    int line = lx->tok.line;
    if (!tok_u64(lx, ".align", PTX_MAX_ALIGN, align))
        return false;
    if (*align == 0 || (*align & (*align - 1)))
        return failf(lx, line, ".align %llu is not a power of two", (unsigned long long)*align);
    return true;
}

/* ".align N .type name[size] [= {...}]" after the state space; returns the variable. On failure
 * nothing of it is left allocated. */
static bool parse_var_decl(lexer *lx, ptx_space space, bool is_extern, ptx_var *var)
{
    memset(var, 0, sizeof *var);
    var->space = space;
    var->is_extern = is_extern;
    var->align = 0;
    ptx_type type = T_NONE;
    int vec = 1;
    while (lx->tok.kind == TOK_IDENT && lx->tok.start[0] == '.') {
        if (is(lx, ".align")) {
            if (!parse_align(lx, &var->align))
                return false;
        } else if (is(lx, ".v2") || is(lx, ".v4")) {
            vec = lx->tok.start[2] - '0';
            advance(lx);
        } else {
            char name[16];
            snprintf(name, sizeof name, "%.*s", lx->tok.len - 1, lx->tok.start + 1);
            type = type_of(name);
            if (type == T_NONE)
                return failf(lx, lx->tok.line, "unsupported variable attribute %s", tok_quote(lx).s);
            advance(lx);
        }
    }
    if (lx->tok.kind != TOK_IDENT)
        return failf(lx, lx->tok.line, "expected a variable name, found %s", tok_quote(lx).s);
    int line = lx->tok.line;
    if (!(var->name = tok_dup(lx)))
        return false;
    advance(lx);
    uint64_t elem = (uint64_t)(ptx_type_bits(type) / 8) * (uint64_t)vec, count = 1, limit = space_limit(space);
    if (!elem)
        elem = 1;
    while (is(lx, "[")) {
        advance(lx);
        if (is(lx, "]")) {
            count = 0; /* unsized: .extern .shared x[] */
        } else {
            uint64_t n;
            if (!tok_u64(lx, "an array size", UINT64_MAX, &n)) /* the product is checked */
                goto fail;
            if (!bounded_mul(count, n, limit, &count))
                count = limit + 1; /* reported below, with the element size */
        }
        if (!expect(lx, "]"))
            goto fail;
    }
    if (!bounded_mul(elem, count, limit, &var->size)) {
        failf(lx, line, "%s variable %s is larger than %llu bytes (the emulator's limit)", space_name(space),
              quoted_str(var->name).s, (unsigned long long)limit);
        goto fail;
    }
    if (!var->align)
        var->align = elem;
    if (is(lx, "=")) {
        advance(lx);
        var->init = calloc(1, var->size ? var->size : 1);
        if (!var->init) {
            out_of_memory(lx);
            goto fail;
        }
        uint64_t at = 0;
        bool braces = is(lx, "{");
        if (braces)
            advance(lx);
        while (!is(lx, ";") && lx->tok.kind != TOK_END) {
            if (is(lx, ",") || is(lx, "{") || is(lx, "}")) {
                advance(lx);
                continue;
            }
            const int func = lx->tok.kind == TOK_IDENT ? find_func(lx->funcs, lx->tok.start, lx->tok.len) : -1;
            if (func >= 0) { /* a call table: "initialized to a list of function names" (section 9.7.12.5) */
                const uint64_t address = PTX_FUNC_ADDRESS(func);
                if (elem / (uint64_t)vec != 8) {
                    failf(lx, lx->tok.line, "%s: a function's address needs a 64-bit element", quoted_str(var->name).s);
                    goto fail;
                }
                if (at + 8 <= var->size)
                    memcpy(var->init + at, &address, 8);
                at += 8;
                advance(lx);
                continue;
            }
            bool neg = false;
            if (is(lx, "-"))
                neg = true, advance(lx);
            operand lit = {0};
            if (lx->tok.kind != TOK_NUMBER || !parse_number(lx, neg, &lit)) {
                failf(lx, lx->tok.line, "unsupported initializer for %s", quoted_str(var->name).s);
                goto fail;
            }
            uint64_t bits = literal_bits(&lit, type);
            if (at + elem / (uint64_t)vec <= var->size)
                memcpy(var->init + at, &bits, elem / (uint64_t)vec);
            at += elem / (uint64_t)vec;
        }
    }
    if (expect(lx, ";"))
        return true;
fail:
    free(var->name), free(var->init);
    var->name = NULL, var->init = NULL;
    return false;
}

/* ---------------------------------------------------------------------------------------------- */
/* Functions' signatures                                                                          */

static void fsig_free(fsig *sig)
{
    for (int i = 0; i < sig->n_returns + sig->n_params; i++)
        free(sig->name[i]);
    memset(sig, 0, sizeof *sig);
}

/* A .callprototype's list owns its signature's parameter names; a .calltargets list borrows none (NULL). */
static void call_list_free(call_list *l)
{
    free(l->name);
    fsig_free(&l->sig);
}

/* "(.param .b32 a, .reg .f32 b, .param .align 8 .b8 s[16])": a return or parameter list (PTX ISA 9.0, sections
 * 7.1 and 5.1.6.4: device function parameters are in .param or in .reg). Names may be "_" (a prototype's). */
static bool parse_param_list(lexer *lx, fsig *sig, bool returns)
{
    if (!expect(lx, "("))
        return false;
    while (!is(lx, ")")) {
        const int i = sig->n_returns + sig->n_params;
        if ((returns ? sig->n_returns : sig->n_params) == PTX_MAX_FUNC_PARAMS)
            return failf(lx, lx->tok.line, "more than %d %s (the emulator's limit)", PTX_MAX_FUNC_PARAMS,
                         returns ? "return values" : "parameters");
        if (!is(lx, ".param") && !is(lx, ".reg"))
            return failf(lx, lx->tok.line, "expected .param or .reg in a function's %s, found %s",
                         returns ? "return values" : "parameters", tok_quote(lx).s);
        sig->reg[i] = is(lx, ".reg");
        advance(lx);
        ptx_type type = T_NONE;
        uint64_t align = 0, count = 1;
        int vec = 1;
        while (lx->tok.kind == TOK_IDENT && lx->tok.start[0] == '.') {
            if (is(lx, ".align")) {
                if (!parse_align(lx, &align))
                    return false;
            } else if (is(lx, ".v2") || is(lx, ".v4")) {
                vec = lx->tok.start[2] - '0';
                advance(lx);
            } else if (is(lx, ".ptr") || is(lx, ".global") || is(lx, ".shared") || is(lx, ".const") ||
                       is(lx, ".local")) {
                advance(lx);
            } else {
                char name[16];
                snprintf(name, sizeof name, "%.*s", lx->tok.len - 1, lx->tok.start + 1);
                if ((type = type_of(name)) == T_NONE)
                    return failf(lx, lx->tok.line, "unsupported parameter attribute %s", tok_quote(lx).s);
                advance(lx);
            }
        }
        if (lx->tok.kind != TOK_IDENT || type == T_NONE)
            return failf(lx, lx->tok.line, "expected a type and a parameter name, found %s", tok_quote(lx).s);
        const bool placeholder = lx->tok.len == 1 && lx->tok.start[0] == '_';
        if (!placeholder && !(sig->name[i] = tok_dup(lx)))
            return false;
        returns ? sig->n_returns++ : sig->n_params++; /* owns the name from here */
        advance(lx);
        if (is(lx, "[")) {
            advance(lx);
            if (!tok_u64(lx, "a parameter's array size", PTX_MAX_PARAM_BYTES, &count) || !expect(lx, "]"))
                return false;
        }
        uint64_t size;
        if (!bounded_mul((uint64_t)(ptx_type_bits(type) / 8 ? ptx_type_bits(type) / 8 : 1) * (uint64_t)vec, count,
                         PTX_MAX_PARAM_BYTES, &size))
            return failf(lx, lx->tok.line, "a parameter of more than %d bytes", PTX_MAX_PARAM_BYTES);
        if (sig->reg[i] && (count != 1 || vec != 1))
            return failf(lx, lx->tok.line, "a .reg parameter must be a scalar");
        if (sig->reg[i] && type == T_B128)
            return failf(lx, lx->tok.line, "a .reg .b128 parameter is not supported by the emulator");
        sig->type[i] = (uint8_t)type;
        sig->size[i] = (uint32_t)size;
        (void)align;
        if (is(lx, ","))
            advance(lx);
        else if (!is(lx, ")"))
            return failf(lx, lx->tok.line, "expected ',' or ')' in a parameter list, found %s", tok_quote(lx).s);
    }
    advance(lx);
    return true;
}

/* "[(returns)] name [(parameters)]" of a .func or a .callprototype (whose name is "_"); the name into *name. */
static bool parse_signature(lexer *lx, fsig *sig, char **name)
{
    memset(sig, 0, sizeof *sig);
    *name = NULL;
    if (is(lx, "(") && !parse_param_list(lx, sig, true))
        return false;
    if (lx->tok.kind != TOK_IDENT || lx->tok.start[0] == '.')
        return failf(lx, lx->tok.line, "expected a function name, found %s", tok_quote(lx).s);
    if (!(*name = tok_dup(lx)))
        return false;
    advance(lx);
    if (is(lx, "(") && !parse_param_list(lx, sig, false)) {
        free(*name), *name = NULL;
        return false;
    }
    return true;
}

/* What must agree between an indirect call's prototype and the function it reaches: the counts, and each
 * return value's and parameter's state space and size. */
static uint64_t signature_of(const fsig *sig)
{
    uint8_t key[2 + 5 * 2 * PTX_MAX_FUNC_PARAMS];
    size_t n = 0;
    key[n++] = (uint8_t)sig->n_returns, key[n++] = (uint8_t)sig->n_params;
    for (int i = 0; i < sig->n_returns + sig->n_params; i++) {
        key[n++] = sig->reg[i];
        memcpy(key + n, &sig->size[i], 4), n += 4;
    }
    return (uint64_t)hash_bytes(key, n) | (uint64_t)sig->n_returns << 32 | (uint64_t)sig->n_params << 40;
}

static bool same_signature(const fsig *a, const fsig *c)
{
    if (a->n_returns != c->n_returns || a->n_params != c->n_params)
        return false;
    for (int i = 0; i < a->n_returns + a->n_params; i++)
        if (a->reg[i] != c->reg[i] || a->size[i] != c->size[i])
            return false;
    return true;
}

/* ---------------------------------------------------------------------------------------------- */
/* Kernels                                                                                        */

/* Lays out the shared variables a kernel names (its own, and the module's its body names, which the
 * scan in parse_body marked in mb->var_mark) before decoding; refuses more than PTX_MAX_SHARED_BYTES. */
static bool layout_shared(kbuild *b)
{
    ptx_kernel *k = b->k;
    uint64_t offset = 0, dynamic_align = 16;
    int counts[2] = {b->n_named, b->n_locals}; /* the module's the body names, then the kernel's own */
    for (int set = 0; set < 2; set++)
        for (int i = 0; i < counts[set]; i++) {
            ptx_var *v = set == 0 ? &b->mod->vars[b->named[i]] : &b->locals[i];
            if (v->space != SPACE_SHARED)
                continue;
            if (v->is_extern && v->size == 0) {
                if (v->align > dynamic_align)
                    dynamic_align = v->align;
                continue;
            }
            uint64_t end;
            if (!bounded_align_up(offset, v->align, PTX_MAX_SHARED_BYTES, &offset) ||
                !bounded_add(offset, v->size, PTX_MAX_SHARED_BYTES, &end))
                return failf(b->lx, k->first_line, "kernel %s has more than %d bytes of static shared memory",
                             quoted_str(k->name).s, PTX_MAX_SHARED_BYTES);
            v->offset = offset;
            offset = end;
        }
    k->static_smem = offset;
    k->dynamic_smem_align = dynamic_align;
    /* dynamic shared memory starts after the static part, aligned (every extern array shares it); both
     * are at most 2^16 here, so this cannot wrap */
    uint64_t dynamic_at = (offset + dynamic_align - 1) / dynamic_align * dynamic_align;
    for (int set = 0; set < 2; set++)
        for (int i = 0; i < counts[set]; i++) {
            ptx_var *v = set == 0 ? &b->mod->vars[b->named[i]] : &b->locals[i];
            if (v->space == SPACE_SHARED && v->is_extern && v->size == 0)
                v->offset = dynamic_at;
        }
    return true;
}

static bool parse_params(kbuild *b)
{
    lexer *lx = b->lx;
    ptx_kernel *k = b->k;
    int cap = 0;
    if (!expect(lx, "("))
        return false;
    uint64_t offset = 0;
    while (!is(lx, ")")) {
        if (!is(lx, ".param"))
            return failf(lx, lx->tok.line, "expected .param in the parameter list, found %s", tok_quote(lx).s);
        advance(lx);
        ptx_param p = {0};
        uint64_t align = 0;
        ptx_type type = T_NONE;
        uint64_t count = 1;
        while (lx->tok.kind == TOK_IDENT && lx->tok.start[0] == '.') {
            if (is(lx, ".align")) {
                if (!parse_align(lx, &align))
                    return false;
            } else if (is(lx, ".ptr") || is(lx, ".global") || is(lx, ".shared") || is(lx, ".const") ||
                       is(lx, ".local")) {
                advance(lx);
            } else {
                char name[16];
                snprintf(name, sizeof name, "%.*s", lx->tok.len - 1, lx->tok.start + 1);
                type = type_of(name);
                if (type == T_NONE)
                    return failf(lx, lx->tok.line, "unsupported parameter attribute %s", tok_quote(lx).s);
                advance(lx);
            }
        }
        if (lx->tok.kind != TOK_IDENT)
            return failf(lx, lx->tok.line, "expected a parameter name, found %s", tok_quote(lx).s);
        int line = lx->tok.line;
        uint32_t hash = hash_bytes(lx->tok.start, (size_t)lx->tok.len);
        if (table_find(&b->param_index, k->params, ptx_param_named, hash, lx->tok.start, (size_t)lx->tok.len) >= 0)
            return failf(lx, line, "parameter %s is declared twice", tok_quote(lx).s);
        if (!(p.name = tok_dup(lx)))
            return false;
        advance(lx);
        if (!PUSH(lx, k->params, k->n_params, cap, p)) {
            free(p.name);
            return false;
        }
        if (!table_add(lx, &b->param_index, k->params, ptx_param_hash, hash, k->n_params - 1))
            return false;
        if (is(lx, "[")) {
            advance(lx);
            if (!tok_u64(lx, "a parameter's array size", PTX_MAX_PARAM_BYTES, &count) || !expect(lx, "]"))
                return false;
        }
        ptx_param *q = &k->params[k->n_params - 1];
        uint64_t elem = (uint64_t)ptx_type_bits(type) / 8;
        q->type = type;
        q->align = align ? align : elem;
        if (!bounded_mul(elem, count, PTX_MAX_PARAM_BYTES, &q->size) ||
            !bounded_align_up(offset, q->align, PTX_MAX_PARAM_BYTES, &q->offset) ||
            !bounded_add(q->offset, q->size, PTX_MAX_PARAM_BYTES, &offset))
            return failf(lx, line, "kernel %s has more than %d bytes of parameters", quoted_str(k->name).s,
                         PTX_MAX_PARAM_BYTES);
        if (is(lx, ","))
            advance(lx);
    }
    k->param_bytes = offset;
    advance(lx);
    return true;
}

/* A new register slot of the declared type; -1 if the parse failed. A slot holds 64 bits, so a .b128
 * register is two slots, its low half first: ld, st and mov of .b128 name both (add_value). */
static int32_t register_slot(kbuild *b, ptx_type type)
{
    int32_t slot = new_slot(b);
    if (slot < 0)
        return -1;
    while (b->n_slot_types <= slot)
        if (!PUSH(b->lx, b->slot_types, b->n_slot_types, b->slot_types_cap, (uint8_t)T_NONE))
            return -1;
    b->slot_types[slot] = (uint8_t)type;
    if (type == T_B128 && register_slot(b, T_B64) < 0) /* the high half, at slot + 1 */
        return -1;
    return slot;
}

static bool parse_reg_decl(kbuild *b)
{
    lexer *lx = b->lx;
    advance(lx); /* .reg */
    ptx_type type = T_NONE;
    while (lx->tok.kind == TOK_IDENT && lx->tok.start[0] == '.') { /* .b32, .pred, .v2 ... */
        char name[16];
        snprintf(name, sizeof name, "%.*s", lx->tok.len - 1, lx->tok.start + 1);
        if (type_of(name) != T_NONE)
            type = type_of(name);
        advance(lx);
    }
    for (;;) {
        if (lx->tok.kind != TOK_IDENT)
            return failf(lx, lx->tok.line, "expected a register name, found %s", tok_quote(lx).s);
        int line = lx->tok.line;
        char *name = tok_dup(lx);
        if (!name)
            return false;
        advance(lx);
        if (is(lx, "<")) { /* %r<93>: %r0 .. %r92 */
            advance(lx);
            uint64_t count;
            if (!tok_u64(lx, "a register count", PTX_MAX_SLOTS, &count) || !expect(lx, ">")) {
                free(name);
                return false;
            }
            size_t room = strlen(name) + 24;
            for (uint64_t i = 0; i < count; i++) {
                char *each = malloc(room);
                if (!each) {
                    free(name);
                    return out_of_memory(lx);
                }
                snprintf(each, room, "%s%llu", name, (unsigned long long)i);
                if (!reg_define(lx, &b->regs, each, register_slot(b, type), b->depth, line)) {
                    free(name);
                    return false;
                }
            }
            free(name);
        } else if (!reg_define(lx, &b->regs, name, register_slot(b, type), b->depth, line)) {
            return false;
        }
        if (is(lx, ","))
            advance(lx);
        else
            break;
    }
    return expect(lx, ";");
}

/* A non-negative decimal integer at *p in the rest of the current line (spaces and tabs before it),
 * at most max; false if there is none or it is larger. For the directives read as raw text. */
static bool line_int(const char **p, int max, int *out)
{
    const char *s = *p;
    while (*s == ' ' || *s == '\t')
        s++;
    if (!isdigit((unsigned char)*s))
        return false;
    int64_t value = 0;
    for (; isdigit((unsigned char)*s); s++)
        if ((value = value * 10 + (*s - '0')) > max)
            return false;
    *p = s;
    *out = (int)value;
    return true;
}

/* .loc FILE LINE COL[, function_name ..., inlined_at ...]: the source line of what follows. With
 * inlining, the first numbers are the inlined function's own line, which is what a reader wants. A .loc
 * this cannot read leaves no source line (it only labels messages). */
static void parse_loc(kbuild *b)
{
    lexer *lx = b->lx;
    const char *p = lx->p;
    int file, line;
    if (line_int(&p, PTX_MAX_FILE_INDEX, &file) && line_int(&p, INT_MAX, &line))
        b->cur_file = file, b->cur_line = line;
    else
        b->cur_file = 0, b->cur_line = 0;
    skip_line(lx);
}

static bool parse_instruction(kbuild *b, int32_t guard, bool guard_neg)
{
    lexer *lx = b->lx;
    ptx_kernel *k = b->k;
    char text[160];
    if (lx->tok.len >= (int)sizeof text)
        return failf(lx, lx->tok.line, "unknown instruction %s", tok_quote(lx).s);
    snprintf(text, sizeof text, "%.*s", lx->tok.len, lx->tok.start);
    int line = lx->tok.line;
    advance(lx);
    operand_list *ops = calloc(1, sizeof *ops);
    if (!ops)
        return out_of_memory(lx);
    bool ok = true;
    const bool call = strncmp(text, "call", 4) == 0 && (text[4] == '\0' || text[4] == '.');
    ops->call_args_end = -1;
    bool in_returns = false;
    while (ok && !is(lx, ";")) {
        if (call && (is(lx, "(") || is(lx, ")"))) { /* call (ret), f, (args), list: the lists are read flat */
            if (is(lx, "(") && ops->n == 0)
                in_returns = true;
            else if (is(lx, ")") && in_returns)
                in_returns = false, ops->call_returns = ops->n;
            else if (is(lx, ")"))
                ops->call_args_end = ops->n;
            advance(lx);
            if (is(lx, ","))
                advance(lx);
            continue;
        }
        if (lx->tok.kind == TOK_END) {
            ok = failf(lx, line, "missing ';' after %s", quoted_str(text).s);
        } else if (ops->n == MAX_OPERANDS) {
            ok = failf(lx, line, "too many operands for %s", quoted_str(text).s);
        } else {
            operand *o = &ops->op[ops->n++];
            memset(o, 0, sizeof *o);
            ok = parse_operand(b, ops, o);
            if (is(lx, ",") || is(lx, "|"))
                advance(lx);
        }
    }
    insn in = {0};
    if (ok) {
        advance(lx);
        in.guard = guard;
        in.ptx_line = line;
        in.src_file = b->cur_file;
        in.src_line = b->cur_line;
        in.operands = (uint32_t)b->n_slots_of;
        bounded_quote shown = quoted_str(text);
        decoder d = {b, &in, ops, text, shown.s};
        ok = decode(&d);
    }
    for (int i = 0; i < ops->n; i++) /* the labels named (bra took its own) */
        free(ops->op[i].label);
    for (int i = 0; i < ops->n_vec; i++)
        free(ops->vec[i].label);
    free(ops);
    if (!ok)
        return false;
    if (guard_neg)
        in.flags |= F_GUARD_NEG;
    return PUSH(lx, k->code, k->n_code, b->n_code_cap, in);
}

/* Defines a label at the next instruction; a name defined twice is refused (ptxas refuses it too), as
 * the first definition winning would silently send some branches elsewhere. */
static bool define_label(kbuild *b)
{
    lexer *lx = b->lx;
    uint32_t hash = hash_bytes(lx->tok.start, (size_t)lx->tok.len);
    int32_t earlier = table_find(&b->label_index, b->labels, label_def_named, hash, lx->tok.start, (size_t)lx->tok.len);
    if (earlier >= 0)
        return failf(lx, lx->tok.line, "label %s is defined twice (first at line %d)", tok_quote(lx).s,
                     b->labels[earlier].line);
    label_def def = {tok_dup(lx), (int32_t)b->k->n_code, lx->tok.line};
    if (!def.name)
        return false;
    if (!PUSH(lx, b->labels, b->n_labels, b->labels_cap, def)) {
        free(def.name);
        return false;
    }
    return table_add(lx, &b->label_index, b->labels, label_def_hash, hash, b->n_labels - 1);
}

static int compare_index(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, c = *(const int32_t *)y;
    return (a > c) - (a < c);
}

/* Whether the text after a label's colon is a .branchtargets directive. */
static bool starts_branch_targets(const char *after_colon)
{
    while (*after_colon == ' ' || *after_colon == '\t')
        after_colon++;
    return strncmp(after_colon, ".branchtargets", 14) == 0 && !isalnum((unsigned char)after_colon[14]) &&
           after_colon[14] != '_';
}

/* "NAME: .branchtargets L1, L2, ...;" (PTX ISA, "Control Flow Directives: .branchtargets"): a list brx.idx
 * names, of labels resolved once the body is read. */
static bool parse_branch_targets(kbuild *b)
{
    lexer *lx = b->lx;
    const int line = lx->tok.line;
    for (int i = 0; i < b->n_lists; i++)
        if ((int)strlen(b->lists[i].name) == lx->tok.len && strncmp(b->lists[i].name, lx->tok.start, lx->tok.len) == 0)
            return failf(lx, line, ".branchtargets list %s is declared twice", tok_quote(lx).s);
    branch_list list = {tok_dup(lx), b->k->n_branch_targets, 0};
    if (!list.name)
        return false;
    if (!PUSH(lx, b->lists, b->n_lists, b->lists_cap, list)) {
        free(list.name);
        return false;
    }
    advance(lx); /* the name */
    advance(lx); /* ':' */
    advance(lx); /* .branchtargets */
    for (;;) {
        if (lx->tok.kind != TOK_IDENT || lx->tok.start[0] == '.')
            return failf(lx, lx->tok.line, ".branchtargets needs labels, found %s", tok_quote(lx).s);
        label_use entry = {tok_dup(lx), b->k->n_branch_targets, lx->tok.line};
        if (!entry.name)
            return false;
        if (!PUSH(lx, b->entries, b->n_entries, b->entries_cap, entry)) {
            free(entry.name);
            return false;
        }
        if (!PUSH(lx, b->k->branch_targets, b->k->n_branch_targets, b->branch_targets_cap, (int32_t)-1))
            return false;
        b->lists[b->n_lists - 1].count++;
        advance(lx);
        if (is(lx, ";"))
            break;
        if (!expect(lx, ","))
            return false;
    }
    advance(lx);
    return true;
}

/* Marks function f (-1: none) as one the kernel reaches. */
static bool reach(kbuild *b, int f)
{
    if (f < 0 || b->mb->fdefs[f].mark == b->mark)
        return true;
    b->mb->fdefs[f].mark = b->mark;
    return PUSH(b->lx, b->reached, b->n_reached, b->reached_cap, (int32_t)f);
}

/* The scan before a body is decoded: its own .shared variables (a kernel's: `own`) and the module variables
 * it names, marked for layout_shared. */
static bool scan_body(kbuild *b, lexer scan, bool own)
{
    lexer *lx = b->lx;
    int depth = 0;
    do {
        if (!own && ++b->mb->link_tokens > PTX_MAX_LINK_TOKENS)
            return failf(lx, scan.tok.line, "the module's functions, read into each kernel that reaches them, are "
                         "more than %d tokens (the emulator's limit)", PTX_MAX_LINK_TOKENS);
        if (is(&scan, "{"))
            depth++;
        else if (is(&scan, "}"))
            depth--;
        if (own && is(&scan, ".shared")) {
            int line = scan.tok.line;
            advance(&scan);
            ptx_var v;
            bool ok = parse_var_decl(&scan, SPACE_SHARED, false, &v) && add_local(b, &v, line);
            lx->failed = scan.failed; /* scan wrote any message into the same buffer */
            if (!ok || lx->failed)
                return false;
            continue;
        }
        if (scan.tok.kind == TOK_IDENT) {
            int32_t i = table_find(&b->mb->var_index, b->mod->vars, ptx_var_named,
                                   hash_bytes(scan.tok.start, (size_t)scan.tok.len), scan.tok.start,
                                   (size_t)scan.tok.len);
            if (i >= 0 && b->mb->var_mark[i] != b->mark) { /* a mark per kernel: nothing to clear */
                b->mb->var_mark[i] = b->mark;
                if (!PUSH(lx, b->named, b->n_named, b->named_cap, i))
                    return false;
            }
            if (!reach(b, find_func(lx->funcs, scan.tok.start, scan.tok.len)))
                return false;
        }
        if (is(&scan, ".loc") || is(&scan, ".file"))
            skip_line(&scan);
        else
            advance(&scan);
    } while (depth > 0 && scan.tok.kind != TOK_END);
    return true;
}

/* Whether the token is the label of a directive: "NAME: .calltargets ..." (nvcc writes "NAME : ..."). */
static bool labels_directive(const lexer *lx, const char *directive)
{
    if (lx->tok.kind != TOK_IDENT || lx->tok.start[0] == '.')
        return false;
    const char *p = lx->p;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p++ != ':')
        return false;
    while (*p == ' ' || *p == '\t')
        p++;
    const size_t n = strlen(directive);
    return strncmp(p, directive, n) == 0 && !isalnum((unsigned char)p[n]) && p[n] != '_';
}

/* "NAME: .callprototype (returns) _ (parameters);" and "NAME: .calltargets f, g;" (PTX ISA 9.0, sections
 * 11.3.2 and 11.3.3): the lists an indirect call names, of the targets it may reach. Every function of a
 * .calltargets list must have one signature, which the call's operands are checked against. */
static bool parse_call_list(kbuild *b, bool prototype)
{
    lexer *lx = b->lx;
    const int line = lx->tok.line;
    for (int i = 0; i < b->n_call_lists; i++)
        if ((int)strlen(b->call_lists[i].name) == lx->tok.len &&
            strncmp(b->call_lists[i].name, lx->tok.start, (size_t)lx->tok.len) == 0)
            return failf(lx, line, "%s is declared twice", tok_quote(lx).s);
    call_list list = {tok_dup(lx), {0}, b->k->n_call_targets, prototype ? -1 : 0};
    if (!list.name || !PUSH(lx, b->call_lists, b->n_call_lists, b->call_lists_cap, list)) {
        free(list.name);
        return false;
    }
    call_list *l = &b->call_lists[b->n_call_lists - 1];
    advance(lx); /* the name */
    advance(lx); /* ':' */
    advance(lx); /* the directive */
    if (prototype) {
        char *name;
        if (!parse_signature(lx, &l->sig, &name))
            return false;
        free(name);
        return expect(lx, ";");
    }
    for (;;) {
        const int f = lx->tok.kind == TOK_IDENT ? find_func(b->lx->funcs, lx->tok.start, lx->tok.len) : -1;
        if (f < 0)
            return failf(lx, lx->tok.line, ".calltargets names %s, which is no function declared before it",
                         tok_quote(lx).s);
        const fsig *sig = &b->mb->fdefs[f].sig;
        if (l->count == 0) {
            l->sig = *sig;
            for (int i = 0; i < sig->n_returns + sig->n_params; i++)
                l->sig.name[i] = NULL; /* the list borrows no names */
        } else if (!same_signature(&l->sig, sig)) {
            return failf(lx, lx->tok.line, ".calltargets %s: %s has another signature than the functions before it",
                         quoted_str(l->name).s, tok_quote(lx).s);
        }
        if (!PUSH(lx, b->k->call_targets, b->k->n_call_targets, b->call_targets_cap, (int32_t)f))
            return false;
        l->count++;
        advance(lx);
        if (is(lx, ";"))
            break;
        if (!expect(lx, ","))
            return false;
    }
    advance(lx);
    return true;
}

/* A variable of a .func's frame (a .local, or a call's .param): a place in the frame, and a slot that holds
 * its address in each activation. */
/* A kernel's own per-thread variable (a .local, or a call's .param outside any .func): at the next offset of
 * the kernel's local depot aligned to align, which grows to hold it. */
static bool place_in_local_depot(kbuild *b, ptx_var *v, uint64_t align, int line)
{
    ptx_kernel *k = b->k;
    if (!bounded_align_up(k->local_bytes, align, PTX_MAX_LOCAL_BYTES, &v->offset) ||
        !bounded_add(v->offset, v->size, PTX_MAX_LOCAL_BYTES, &k->local_bytes)) {
        free(v->name), free(v->init);
        return failf(b->lx, line, "kernel %s has more than %d bytes of .local memory per thread",
                     quoted_str(k->name).s, PTX_MAX_LOCAL_BYTES);
    }
    return true;
}

static bool add_frame_var(kbuild *b, ptx_var *v, int line)
{
    ptx_frame *f = b->frame;
    uint64_t offset, end;
    const uint64_t align = v->align ? v->align : 8;
    if (!bounded_align_up(f->frame_bytes, align, PTX_STACK_BYTES, &offset) ||
        !bounded_add(offset, v->size, PTX_STACK_BYTES, &end)) {
        free(v->name), free(v->init);
        return failf(b->lx, line, "function %s has more than %u bytes of .local and .param variables (the "
                     "emulator's stack per thread)", quoted_str(b->mod->funcs[b->func].name).s, PTX_STACK_BYTES);
    }
    free(v->init), v->init = NULL;
    f->frame_bytes = (uint32_t)end;
    if (align > f->frame_align)
        f->frame_align = (uint32_t)align;
    v->space = SPACE_LOCAL;
    v->offset = offset;
    call_param param = {*v, b->depth, register_slot(b, T_U64)};
    int n = f->n_vars;
    if (param.slot < 0 || !PUSH(b->lx, f->var_slot, n, b->frame_vars_cap, param.slot)) {
        free(v->name);
        return false;
    }
    f->var_offset = realloc(f->var_offset, (size_t)b->frame_vars_cap * sizeof *f->var_offset);
    if (!f->var_offset) {
        free(v->name);
        return out_of_memory(b->lx);
    }
    f->var_offset[f->n_vars++] = (uint32_t)offset;
    if (!PUSH(b->lx, b->call_params, b->n_call_params, b->call_params_cap, param)) {
        free(v->name);
        return false;
    }
    return true;
}

/* Forgets a body's labels and lists once they are resolved: each function has its own. */
static void forget_labels(kbuild *b)
{
    for (int i = 0; i < b->n_labels; i++)
        free(b->labels[i].name);
    for (int i = 0; i < b->n_uses; i++)
        free(b->uses[i].name);
    for (int i = 0; i < b->n_entries; i++)
        free(b->entries[i].name);
    for (int i = 0; i < b->n_lists; i++)
        free(b->lists[i].name);
    for (int i = 0; i < b->n_call_lists; i++)
        call_list_free(&b->call_lists[i]);
    b->n_labels = b->n_uses = b->n_entries = b->n_lists = b->n_call_lists = 0;
    table_free(&b->label_index);
}

static bool parse_body(kbuild *b)
{
    lexer *lx = b->lx;
    ptx_kernel *k = b->k;
    /* first the body's extent, its own `.shared` variables ("demoted" statics) and the module variables
     * it names, and those the module's functions name (they run in the kernel): shared memory is laid out
     * before any instruction is decoded. A function's body is read after the kernel's (link_functions). */
    if (b->func < 0) {
        if (!scan_body(b, *lx, true))
            return false;
        for (int f = 0; f < b->mb->n_fdefs; f++) /* a pointer may reach any function whose address is taken */
            if (b->mb->fdefs[f].address_taken && !reach(b, f))
                return false;
        for (int i = 0; i < b->n_reached; i++) /* and what they name, in turn (the list grows) */
            if (b->mb->fdefs[b->reached[i]].has_body && !scan_body(b, b->mb->fdefs[b->reached[i]].body, false))
                return false;
        if (b->n_named > 1) /* (qsort's array must not be NULL, even for no elements) */
            qsort(b->named, (size_t)b->n_named, sizeof *b->named, compare_index); /* declaration order */
        if (!layout_shared(b))
            return false;
    }
    if (!expect(lx, "{"))
        return false;
    b->depth = 1;
    for (;;) {
        if (lx->failed)
            return false;
        if (lx->tok.kind == TOK_END)
            return failf(lx, lx->tok.line, "%s %s has no closing '}'", b->func < 0 ? "kernel" : "function",
                         quoted_str(b->func < 0 ? k->name : b->mod->funcs[b->func].name).s);
        if (is(lx, "}")) {
            reg_close_scope(&b->regs, --b->depth);
            while (b->n_call_params > 0 && b->call_params[b->n_call_params - 1].depth > b->depth)
                free(b->call_params[--b->n_call_params].var.name);
            advance(lx);
            if (b->depth == 0)
                break;
            continue;
        }
        if (is(lx, "{")) {
            b->depth++;
            advance(lx);
            continue;
        }
        if (is(lx, ".reg")) {
            if (!parse_reg_decl(b))
                return false;
            continue;
        }
        if (is(lx, ".loc")) {
            parse_loc(b);
            continue;
        }
        if (is(lx, ".pragma")) {
            while (!is(lx, ";") && lx->tok.kind != TOK_END)
                advance(lx);
            advance(lx);
            continue;
        }
        if (is(lx, ".shared")) { /* laid out already, above */
            if (b->func >= 0)
                return failf(lx, lx->tok.line, "a .shared variable declared in function %s (the emulator takes them "
                             "at module scope, where nvcc puts them)", quoted_str(b->mod->funcs[b->func].name).s);
            while (!is(lx, ";") && lx->tok.kind != TOK_END)
                advance(lx);
            advance(lx);
            continue;
        }
        if (is(lx, ".param")) { /* a call's argument or return value: a per-thread variable of its scope */
            int line = lx->tok.line;
            advance(lx);
            ptx_var v;
            if (!parse_var_decl(lx, SPACE_LOCAL, false, &v))
                return false;
            if (b->func >= 0) { /* in a .func: in its frame, one per activation */
                if (!add_frame_var(b, &v, line))
                    return false;
                continue;
            }
            free(v.init), v.init = NULL;
            if (!place_in_local_depot(b, &v, v.align ? v.align : 8, line))
                return false;
            call_param param = {v, b->depth, -1};
            if (!PUSH(lx, b->call_params, b->n_call_params, b->call_params_cap, param)) {
                free(v.name);
                return false;
            }
            continue;
        }
        if (is(lx, ".local")) { /* per-thread memory: the local depot grows */
            int line = lx->tok.line;
            advance(lx);
            ptx_var v;
            if (!parse_var_decl(lx, SPACE_LOCAL, false, &v))
                return false;
            if (b->func >= 0) { /* in a .func: in its frame, one per activation */
                if (!add_frame_var(b, &v, line))
                    return false;
                continue;
            }
            if (!place_in_local_depot(b, &v, v.align, line))
                return false;
            if (!add_local(b, &v, line))
                return false;
            continue;
        }
        if (lx->tok.kind == TOK_IDENT && lx->tok.start[0] == '.')
            return failf(lx, lx->tok.line, "unsupported directive %s in a kernel body", tok_quote(lx).s);
        if (labels_directive(lx, ".callprototype") || labels_directive(lx, ".calltargets")) {
            if (!parse_call_list(b, labels_directive(lx, ".callprototype")))
                return false;
            continue;
        }
        /* a .branchtargets list ("NAME: .branchtargets L1, L2, ...;"), or a label? */
        if (lx->tok.kind == TOK_IDENT && lx->p[0] == ':' && starts_branch_targets(lx->p + 1)) {
            if (!parse_branch_targets(b))
                return false;
            continue;
        }
        if (lx->tok.kind == TOK_IDENT && lx->p[0] == ':') {
            if (!define_label(b))
                return false;
            advance(lx);
            advance(lx);
            continue;
        }
        int32_t guard = -1;
        bool guard_neg = false;
        if (is(lx, "@")) {
            advance(lx);
            if (is(lx, "!"))
                guard_neg = true, advance(lx);
            guard = reg_lookup(&b->regs, lx->tok.start, lx->tok.len);
            if (guard < 0)
                return failf(lx, lx->tok.line, "unknown guard predicate %s", tok_quote(lx).s);
            advance(lx);
        }
        if (lx->tok.kind != TOK_IDENT)
            return failf(lx, lx->tok.line, "expected an instruction, found %s", tok_quote(lx).s);
        if (!parse_instruction(b, guard, guard_neg))
            return false;
    }
    /* branch targets: every one a label of this kernel */
    for (int i = 0; i < b->n_uses; i++) {
        const char *name = b->uses[i].name;
        int32_t j = table_find(&b->label_index, b->labels, label_def_named, hash_bytes(name, strlen(name)), name,
                               strlen(name));
        if (j < 0)
            return failf(lx, b->uses[i].line, "branch to undefined label %s", quoted_str(name).s);
        k->code[b->uses[i].insn].target = b->labels[j].index;
    }
    /* each .branchtargets entry: a label of this kernel */
    for (int i = 0; i < b->n_entries; i++) {
        const char *name = b->entries[i].name;
        int32_t j = table_find(&b->label_index, b->labels, label_def_named, hash_bytes(name, strlen(name)), name,
                               strlen(name));
        if (j < 0)
            return failf(lx, b->entries[i].line, ".branchtargets names undefined label %s", quoted_str(name).s);
        k->branch_targets[b->entries[i].insn] = b->labels[j].index;
    }
    forget_labels(b);
    /* falling off the end is a return */
    insn ret = {.op = OP_RET, .mode = b->func >= 0 ? RET_FUNCTION : RET_KERNEL, .guard = -1, .addr_base = -1,
                .target = -1, .ptx_line = lx->tok.line};
    /* a kernel without operands still gets an operand list: the interpreter takes slots_of + operands for
     * every instruction, and an offset from a null pointer is undefined even when it is 0 */
    if (!b->n_slots_of_cap && !grow_array(lx, &k->slots_of, &b->n_slots_of_cap, sizeof *k->slots_of))
        return false;
    return PUSH(lx, k->code, k->n_code, b->n_code_cap, ret);
}

static void kbuild_free(kbuild *b)
{
    reg_free(&b->regs);
    for (int i = 0; i < b->n_labels; i++)
        free(b->labels[i].name);
    for (int i = 0; i < b->n_uses; i++)
        free(b->uses[i].name);
    for (int i = 0; i < b->n_entries; i++)
        free(b->entries[i].name);
    for (int i = 0; i < b->n_call_params; i++)
        free(b->call_params[i].var.name);
    free(b->call_params);
    for (int i = 0; i < b->n_lists; i++)
        free(b->lists[i].name);
    for (int i = 0; i < b->n_call_lists; i++)
        call_list_free(&b->call_lists[i]);
    free(b->call_lists);
    free(b->calls);
    free(b->reached);
    free(b->entries);
    free(b->lists);
    for (int i = 0; i < b->n_locals; i++)
        free(b->locals[i].name), free(b->locals[i].init);
    free(b->labels);
    free(b->uses);
    free(b->locals);
    free(b->slot_types);
    free(b->named);
    table_free(&b->const_index);
    table_free(&b->label_index);
    table_free(&b->local_index);
    table_free(&b->param_index);
}

/* Everything a kernel owns; for ptx_free, and for a kernel whose parse failed halfway. */
static void kernel_free(ptx_kernel *k)
{
    free(k->name);
    for (int j = 0; j < k->n_params; j++)
        free(k->params[j].name);
    free(k->params);
    free(k->code);
    free(k->slots_of);
    free(k->branch_targets);
    free(k->const_slot);
    free(k->poison_slot);
    free(k->const_value);
    free(k->sreg_slot);
    free(k->sreg_which);
    for (int i = 0; i < k->n_frames; i++)
        free(k->frames[i].var_slot), free(k->frames[i].var_offset);
    free(k->frames);
    free(k->call_targets);
}

/* .maxntid X[, Y[, Z]], .reqntid ..., .maxnreg N: up to three integers, each at least 1. */
static bool parse_dims(lexer *lx, const char *what, uint64_t dims[3])
{
    int line = lx->tok.line;
    advance(lx);
    int n = 0;
    dims[0] = dims[1] = dims[2] = 1;
    while (lx->tok.kind == TOK_NUMBER) {
        if (n == 3)
            return failf(lx, line, "%s takes at most three numbers", what);
        if (!tok_u64(lx, what, UINT32_MAX, &dims[n]))
            return false;
        if (dims[n++] == 0)
            return failf(lx, line, "%s must be at least 1", what);
        if (is(lx, ","))
            advance(lx);
    }
    if (n == 0)
        return failf(lx, line, "%s needs a number, found %s", what, tok_quote(lx).s);
    return true;
}

/* ".extern .func (.param .b32 r) vprintf (.param .b64 a, .param .b64 b);" and "__assertfail": the CUDA
 * runtime's device-side printf and assert, which the emulator provides. Skips the declaration and returns
 * true for those two; for any other name leaves the lexer as it was and returns false. */
static bool extern_runtime_func(lexer *lx)
{
    lexer look = *lx;
    advance(&look); /* .func */
    if (is(&look, "(")) /* the return value's declaration */
        while (!is(&look, ")") && look.tok.kind != TOK_END)
            advance(&look);
    if (is(&look, ")"))
        advance(&look);
    if (look.tok.kind != TOK_IDENT || (!(look.tok.len == 7 && strncmp(look.tok.start, "vprintf", 7) == 0) &&
                                       !(look.tok.len == 12 && strncmp(look.tok.start, "__assertfail", 12) == 0)))
        return false;
    while (!is(&look, ";") && look.tok.kind != TOK_END)
        advance(&look);
    advance(&look);
    *lx = look;
    return true;
}

/* Reads the functions the kernel reaches (parse_body's scan: those its body names, those whose address the
 * module takes anywhere, since a pointer may reach them, and those these name, in turn) into the kernel after
 * its own code (PTX ISA 9.0, section 7.1), each with its frame: the slots it declares from here on are its
 * own, its parameters' slots first. A function no kernel reaches is never read. Then each direct call gets its callee's
 * entry, and the kernel's local memory a stack after its own .local variables. */
static bool link_functions(kbuild *b)
{
    ptx_module *mod = b->mod;
    ptx_kernel *k = b->k;
    if (!b->n_reached)
        return true;
    lexer *outer = b->lx;
    if (!(k->frames = calloc((size_t)mod->n_funcs, sizeof *k->frames)))
        return out_of_memory(outer);
    k->n_frames = mod->n_funcs;
    for (int f = 0; f < mod->n_funcs; f++)
        k->frames[f].entry = -1; /* not defined, or not reached from this kernel */
    bool ok = true;
    for (int i = 0; ok && i < b->n_reached; i++) {
        const int f = b->reached[i];
        ptx_frame *frame = &k->frames[f];
        if (!b->mb->fdefs[f].has_body)
            continue;
        const fsig *sig = &b->mb->fdefs[f].sig;
        lexer body = b->mb->fdefs[f].body;
        b->lx = &body, b->func = f, b->frame = frame, b->frame_vars_cap = 0;
        frame->entry = k->n_code;
        frame->first_slot = k->n_slots;
        frame->frame_align = 16;
        b->depth = 1; /* the parameters are the body's (parse_body opens it at depth 1 too) */
        for (int i = 0; ok && i < sig->n_returns + sig->n_params; i++) {
            const int32_t slot = register_slot(b, sig->reg[i] ? (ptx_type)sig->type[i] : T_U64);
            char *name = sig->name[i] ? strdup(sig->name[i]) : NULL;
            ok = slot >= 0 && name;
            if (ok && sig->reg[i]) {
                ok = reg_define(&body, &b->regs, name, slot, 1, mod->funcs[f].line);
            } else if (ok) { /* a .param: its slot holds the address of the caller's variable */
                call_param param = {{.name = name, .space = SPACE_LOCAL, .size = sig->size[i]}, 1, slot};
                ok = PUSH(&body, b->call_params, b->n_call_params, b->call_params_cap, param);
                if (!ok)
                    free(name);
            } else {
                free(name);
                if (slot >= 0)
                    out_of_memory(&body);
            }
            frame->arg_slot[i] = slot;
        }
        ok = ok && parse_body(b);
        frame->end_slot = k->n_slots;
        outer->failed = body.failed; /* (the message is in the same buffer) */
        ok = ok && !body.failed;
    }
    b->lx = outer, b->func = -1, b->frame = NULL;
    for (int i = 0; ok && i < b->n_calls; i++)
        k->code[b->calls[i].insn].target = k->frames[b->calls[i].func].entry;
    k->stack_base = k->local_bytes;
    k->local_bytes += PTX_STACK_BYTES; /* (a kernel's own is at most PTX_MAX_LOCAL_BYTES: no overflow) */
    return ok;
}

static bool parse_entry(lexer *lx, ptx_module *mod, mbuild *mb)
{
    advance(lx); /* .entry */
    if (lx->tok.kind != TOK_IDENT)
        return failf(lx, lx->tok.line, "expected a kernel name after .entry, found %s", tok_quote(lx).s);
    ptx_kernel k = {0};
    if (!(k.name = tok_dup(lx)))
        return false;
    k.first_line = lx->tok.line;
    advance(lx);
    kbuild b = {.lx = lx, .mod = mod, .k = &k, .mb = mb, .mark = (uint32_t)mod->n_kernels + 1, .func = -1};
    for (int i = 0; i < SREG_COUNT; i++)
        b.sreg_slot[i] = -1;
    bool ok = parse_params(&b);
    /* performance directives (PTX ISA, "Performance-Tuning Directives") */
    while (ok && lx->tok.kind == TOK_IDENT && lx->tok.start[0] == '.' && !is(lx, ".entry")) {
        uint64_t dims[3];
        if (is(lx, ".maxntid")) {
            /* a maximum, so one beyond what a block can have constrains nothing more than the device does:
             * the product is taken exactly and capped there, never wrapped */
            if ((ok = parse_dims(lx, ".maxntid", dims))) {
                uint64_t product;
                if (!bounded_mul(dims[0], dims[1], PTX_MAX_THREADS, &product) ||
                    !bounded_mul(product, dims[2], PTX_MAX_THREADS, &product))
                    product = PTX_MAX_THREADS;
                k.max_threads = (int)product;
            }
        } else if (is(lx, ".reqntid")) {
            uint64_t product;
            if ((ok = parse_dims(lx, ".reqntid", dims))) {
                if (!bounded_mul(dims[0], dims[1], PTX_MAX_THREADS, &product) ||
                    !bounded_mul(product, dims[2], PTX_MAX_THREADS, &product))
                    ok = failf(lx, lx->tok.line, ".reqntid asks for more than %d threads per block", PTX_MAX_THREADS);
                else
                    for (int i = 0; i < 3; i++)
                        k.req_threads[i] = (int)dims[i];
            }
        } else if (is(lx, ".maxnreg")) {
            if ((ok = parse_dims(lx, ".maxnreg", dims)))
                k.max_registers = dims[0] > 255 ? 255 : (int)dims[0]; /* a thread has at most 255 */
        } else if (is(lx, ".minnctapersm") || is(lx, ".maxnctapersm") || is(lx, ".noreturn") ||
                   is(lx, ".pragma")) {
            advance(lx); /* hints to ptxas about occupancy: nothing the emulator does depends on them */
            while (lx->tok.kind == TOK_NUMBER || is(lx, ",") || lx->tok.kind == TOK_STRING || is(lx, ";"))
                advance(lx);
        } else {
            ok = failf(lx, lx->tok.line, "unsupported directive %s before kernel %s's body", tok_quote(lx).s,
                       quoted_str(k.name).s);
        }
    }
    ok = ok && parse_body(&b) && link_functions(&b) && (ptx_find_poisoned_registers(&k) || out_of_memory(lx));
    if (ok)
        ptx_set_counter_classes(&k);
    kbuild_free(&b);
    ok = ok && PUSH(lx, mod->kernels, mod->n_kernels, mb->kernels_cap, k);
    if (!ok)
        kernel_free(&k);
    return ok;
}

/* ".func [(returns)] name [(parameters)] [directives] {body}" or a declaration ending in ';' (PTX ISA 9.0,
 * section 7.1): the module's functions, found before any kernel is read, so that a kernel can call one
 * defined after it, and a call table can hold one declared before it. A declaration and a definition of one
 * name must agree; a name is defined once. The CUDA runtime's vprintf and __assertfail are no module
 * functions (extern_runtime_func). */
static bool collect_function(lexer *lx, func_names *names, mbuild *mb)
{
    ptx_module *mod = names->mod;
    const int line = lx->tok.line;
    advance(lx); /* .func */
    fdef def = {0};
    char *name;
    if (!parse_signature(lx, &def.sig, &name)) {
        fsig_free(&def.sig);
        return false;
    }
    while (lx->tok.kind == TOK_IDENT && lx->tok.start[0] == '.') { /* .noreturn, .pragma "..." */
        advance(lx);
        if (lx->tok.kind == TOK_STRING)
            advance(lx);
    }
    def.has_body = is(lx, "{");
    if (def.has_body) {
        def.body = *lx; /* (collect_functions goes on through the body) */
    } else if (!expect(lx, ";")) {
        free(name), fsig_free(&def.sig);
        return false;
    }
    const int f = find_func(names, name, (int)strlen(name));
    if (f >= 0) {
        fdef *earlier = &mb->fdefs[f];
        bool fine = same_signature(&earlier->sig, &def.sig);
        if (fine && def.has_body && earlier->has_body)
            failf(lx, line, "function %s is defined twice (first at line %d)", quoted_str(name).s, mod->funcs[f].line);
        else if (!fine)
            failf(lx, line, "function %s is declared with another signature at line %d", quoted_str(name).s,
                  mod->funcs[f].line);
        if (!lx->failed && def.has_body) { /* the definition's names are the body's */
            fsig_free(&earlier->sig);
            def.address_taken = earlier->address_taken;
            *earlier = def;
            mod->funcs[f].defined = true;
            mod->funcs[f].line = line;
        } else {
            fsig_free(&def.sig);
        }
        free(name);
        return !lx->failed;
    }
    ptx_func func = {.name = name, .line = line, .defined = def.has_body, .n_returns = (uint8_t)def.sig.n_returns,
                     .n_params = (uint8_t)def.sig.n_params, .signature = signature_of(&def.sig)};
    for (int i = 0; i < def.sig.n_returns + def.sig.n_params; i++)
        func.reg[i] = def.sig.reg[i], func.size[i] = def.sig.size[i];
    int n = mod->n_funcs;
    if (!PUSH(lx, mod->funcs, n, mb->funcs_cap, func)) {
        free(name), fsig_free(&def.sig);
        return false;
    }
    if (!PUSH(lx, mb->fdefs, mb->n_fdefs, mb->fdefs_cap, def)) {
        free(name), fsig_free(&def.sig);
        return false;
    }
    mod->n_funcs = n;
    return table_add(lx, &names->index, mod->funcs, ptx_func_hash, hash_bytes(name, strlen(name)), n - 1);
}

/* The first pass over the module: its functions (collect_function, at the top level of the text), and which
 * of them have their address taken: a name that stands anywhere but in a call statement (a mov, a call
 * table's initializer, a .calltargets list). */
static bool collect_functions(lexer scan, func_names *names, mbuild *mb)
{
    bool after_extern = false, in_call = false;
    int depth = 0;
    while (scan.tok.kind != TOK_END && !scan.failed) {
        if (depth == 0 && is(&scan, ".func") && !after_extern) {
            if (!collect_function(&scan, names, mb))
                break;
            continue;
        }
        after_extern = depth == 0 && is(&scan, ".extern");
        if (scan.tok.kind == TOK_IDENT) {
            if ((scan.tok.len == 4 || (scan.tok.len > 4 && scan.tok.start[4] == '.')) &&
                strncmp(scan.tok.start, "call", 4) == 0)
                in_call = true;
            const int f = in_call ? -1 : find_func(names, scan.tok.start, scan.tok.len);
            if (f >= 0)
                mb->fdefs[f].address_taken = true;
        } else if (is(&scan, ";")) {
            in_call = false;
        }
        if (is(&scan, "{"))
            depth++;
        else if (is(&scan, "}"))
            depth--;
        if (is(&scan, ".loc") || is(&scan, ".file") || is(&scan, ".version") || is(&scan, ".target") ||
            is(&scan, ".address_size"))
            skip_line(&scan);
        else
            advance(&scan);
    }
    return !scan.failed;
}

/* A .func in the main pass: collected already; its header and body are skipped. */
static void skip_function(lexer *lx)
{
    while (!is(lx, ";") && !is(lx, "{") && lx->tok.kind != TOK_END)
        advance(lx);
    if (is(lx, "{"))
        skip_braces(lx);
    else
        advance(lx);
}

/* .file N "path" [, ...]: the source file messages name for .loc N. N at most PTX_MAX_FILE_INDEX, the
 * path on the same line and free of control characters (it is printed in messages). */
static bool parse_file(lexer *lx, ptx_module *mod)
{
    int line = lx->tok.line;
    const char *p = lx->p;
    int index;
    if (!line_int(&p, PTX_MAX_FILE_INDEX, &index))
        return failf(lx, line, ".file needs an index from 0 to %d", PTX_MAX_FILE_INDEX);
    while (*p == ' ' || *p == '\t')
        p++;
    const char *q1 = *p == '"' ? p : NULL, *q2 = q1 ? q1 + 1 : NULL;
    while (q2 && *q2 != '"') {
        if (*q2 == 0 || (unsigned char)*q2 < 0x20 || *q2 == 0x7f)
            return failf(lx, line, ".file %d: the path must be one quoted line of printable text", index);
        q2++;
    }
    if (index > 0 && q2) {
        if (index >= mod->n_files) {
            char **files = realloc(mod->files, (size_t)(index + 1) * sizeof *mod->files);
            if (!files)
                return out_of_memory(lx);
            mod->files = files;
            for (int i = mod->n_files; i <= index; i++)
                mod->files[i] = NULL;
            mod->n_files = index + 1;
        }
        free(mod->files[index]);
        if (!(mod->files[index] = strndup(q1 + 1, (size_t)(q2 - q1 - 1))))
            return out_of_memory(lx);
    }
    skip_line(lx);
    return true;
}

/* A module variable (.global, .const, .shared at module scope): one name once, and for .global and
 * .const host memory that lives as long as the module. */
static bool parse_module_var(lexer *lx, ptx_module *mod, mbuild *mb, bool is_extern)
{
    int line = lx->tok.line;
    ptx_space space = is(lx, ".shared") ? SPACE_SHARED : is(lx, ".global") ? SPACE_GLOBAL : SPACE_CONST;
    advance(lx);
    ptx_var v;
    if (!parse_var_decl(lx, space, is_extern, &v))
        return false;
    uint32_t hash = hash_bytes(v.name, strlen(v.name));
    if (table_find(&mb->var_index, mod->vars, ptx_var_named, hash, v.name, strlen(v.name)) >= 0) {
        failf(lx, line, "variable %s is declared twice", quoted_str(v.name).s);
        free(v.name), free(v.init);
        return false;
    }
    if (space != SPACE_SHARED) {
        v.storage = calloc(1, v.size ? v.size : 1);
        if (!v.storage) {
            free(v.name), free(v.init);
            return out_of_memory(lx);
        }
        if (v.init)
            memcpy(v.storage, v.init, v.size);
    }
    int n_marks = mod->n_vars;
    if (!PUSH(lx, mb->var_mark, n_marks, mb->var_mark_cap, 0u) || !PUSH(lx, mod->vars, mod->n_vars, mb->vars_cap, v)) {
        free(v.name), free(v.init), free(v.storage);
        return false;
    }
    return table_add(lx, &mb->var_index, mod->vars, ptx_var_hash, hash, mod->n_vars - 1);
}

ptx_module *ptx_parse(const char *text, const char *path, char *err, size_t err_len)
{
    lexer lx = {.text = text, .p = text, .path = path, .line = 1, .err = err, .err_len = err_len};
    if (strnlen(text, (size_t)PTX_MAX_TEXT_BYTES + 1) > PTX_MAX_TEXT_BYTES) {
        failf(&lx, 1, "more than %d bytes of PTX (the emulator's limit)", PTX_MAX_TEXT_BYTES);
        return NULL;
    }
    ptx_module *mod = calloc(1, sizeof *mod);
    if (!mod || !(mod->path = strdup(shown_path(path).s))) { /* messages name it: escaped once, here */
        free(mod);
        out_of_memory(&lx);
        return NULL;
    }
    mbuild mb = {0};
    func_names names = {mod, {0}};
    lx.funcs = &names;
    advance(&lx);
    if (!collect_functions(lx, &names, &mb))
        lx.failed = true;
    while (lx.tok.kind != TOK_END && !lx.failed) {
        if (is(&lx, ".version") || is(&lx, ".target") || is(&lx, ".address_size")) {
            skip_line(&lx);
        } else if (is(&lx, ".file")) {
            parse_file(&lx, mod);
        } else if (is(&lx, ".section")) {
            advance(&lx);
            advance(&lx); /* its name */
            skip_braces(&lx);
        } else if (is(&lx, ".visible") || is(&lx, ".weak")) {
            advance(&lx);
        } else if (is(&lx, ".entry")) {
            int line = lx.tok.line;
            if (parse_entry(&lx, mod, &mb)) {
                const char *name = mod->kernels[mod->n_kernels - 1].name;
                uint32_t hash = hash_bytes(name, strlen(name));
                if (table_find(&mb.kernel_index, mod->kernels, ptx_kernel_named, hash, name, strlen(name)) >= 0)
                    failf(&lx, line, "kernel %s is defined twice", quoted_str(name).s);
                else
                    table_add(&lx, &mb.kernel_index, mod->kernels, ptx_kernel_hash, hash, mod->n_kernels - 1);
            }
        } else if (is(&lx, ".func")) {
            skip_function(&lx);
        } else if (is(&lx, ".extern") || is(&lx, ".shared") || is(&lx, ".global") || is(&lx, ".const")) {
            bool is_extern = is(&lx, ".extern");
            if (is_extern)
                advance(&lx);
            if (is(&lx, ".func")) {
                if (is_extern && extern_runtime_func(&lx))
                    continue;
                failf(&lx, lx.tok.line, ".extern .func: a function of another module (separate compilation, -rdc, "
                      "is not supported; the emulator provides the CUDA runtime's vprintf and __assertfail)");
                continue;
            }
            if (!is(&lx, ".shared") && !is(&lx, ".global") && !is(&lx, ".const"))
                failf(&lx, lx.tok.line, "unsupported .extern %s", tok_quote(&lx).s);
            else
                parse_module_var(&lx, mod, &mb, is_extern);
        } else {
            failf(&lx, lx.tok.line, "unsupported top-level statement %s", tok_quote(&lx).s);
        }
    }
    table_free(&mb.var_index);
    table_free(&mb.kernel_index);
    free(mb.var_mark);
    for (int i = 0; i < mb.n_fdefs; i++)
        fsig_free(&mb.fdefs[i].sig);
    free(mb.fdefs);
    table_free(&names.index);
    if (lx.failed) {
        ptx_free(mod);
        return NULL;
    }
    return mod;
}

void ptx_free(ptx_module *mod)
{
    if (!mod)
        return;
    for (int i = 0; i < mod->n_kernels; i++)
        kernel_free(&mod->kernels[i]);
    for (int i = 0; i < mod->n_vars; i++)
        free(mod->vars[i].name), free(mod->vars[i].init), free(mod->vars[i].storage);
    for (int i = 0; i < mod->n_files; i++)
        free(mod->files[i]);
    free(mod->files);
    for (int i = 0; i < mod->n_funcs; i++)
        free(mod->funcs[i].name);
    free(mod->funcs);
    free(mod->vars);
    free(mod->kernels);
    free(mod->path);
    free(mod);
}

const ptx_kernel *ptx_find_kernel(const ptx_module *mod, const char *name)
{
    for (int i = 0; i < mod->n_kernels; i++)
        if (strcmp(mod->kernels[i].name, name) == 0)
            return &mod->kernels[i];
    return NULL;
}
