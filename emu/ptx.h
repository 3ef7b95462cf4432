/* ptx.h: a PTX program as the emulator holds it, after parsing and before running.
 *
 * The parser (parse.c) reads PTX text once and decodes every instruction into an `insn`: an opcode,
 * its types and modifiers, and its operands as *slots*. A slot is one 64-bit value per thread. Every
 * operand becomes a slot, so the interpreter (exec.c) never looks at text again and never asks "is
 * this operand a register or a constant?":
 *
 *   a register       %r7, %rd2, %f1, %p3, ... one slot each (scoped `{ .reg ... }` blocks get their own)
 *   a constant       -1, 0f3F800000, 16 ...   a slot filled with that value when a warp starts
 *   a special reg    %tid.x, %laneid, ...      a slot filled per thread when a warp starts
 *   a symbol         a shared array, a param   a slot holding its address in that state space
 *
 * A memory operand [base+offset] is a base slot plus a constant byte offset.
 */
#ifndef EMU_PTX_H
#define EMU_PTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Fundamental types (PTX ISA, "Fundamental Types"). The enum order groups them by kind. */
typedef enum {
    T_NONE,
    T_PRED,
    T_B8, T_B16, T_B32, T_B64, T_B128,
    T_U8, T_U16, T_U32, T_U64,
    T_S8, T_S16, T_S32, T_S64,
    T_F16, T_F16X2, T_BF16, T_BF16X2, T_F32, T_F64, T_TF32,
    T_COUNT
} ptx_type;

/* The instructions the emulator implements (instructions.def: one row each). Anything else is refused when
 * the PTX is loaded. */
typedef enum {
#define INSTRUCTION(opcode, name, class, handler, isa) OP_##opcode,
#include "instructions.def"
#undef INSTRUCTION
    OP_COUNT
} ptx_op;

typedef enum { SPACE_GENERIC, SPACE_GLOBAL, SPACE_SHARED, SPACE_LOCAL, SPACE_PARAM, SPACE_CONST } ptx_space;

/* Comparison operators of setp/set (PTX ISA, "Comparison and Selection Instructions"). The u-forms
 * are the "unordered" float comparisons that are true when either operand is NaN. */
typedef enum {
    CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE, CMP_LO, CMP_LS, CMP_HI, CMP_HS,
    CMP_EQU, CMP_NEU, CMP_LTU, CMP_LEU, CMP_GTU, CMP_GEU, CMP_NUM, CMP_NAN
} ptx_cmp;

/* Rounding: none given, the four float roundings, the four float-to-integer roundings. */
typedef enum { RND_NONE, RND_RN, RND_RZ, RND_RM, RND_RP, RND_RNI, RND_RZI, RND_RMI, RND_RPI, RND_RNA } ptx_rounding;

/* Modifier flags. */
enum {
    F_SAT = 1 << 0, F_FTZ = 1 << 1, F_APPROX = 1 << 2, F_HI = 1 << 3, F_LO = 1 << 4, F_WIDE = 1 << 5,
    F_UNI = 1 << 6, F_TRANS = 1 << 7, F_ALIGNED = 1 << 8, F_CC = 1 << 9, F_NAN = 1 << 10, F_SHIFT_CLAMP = 1 << 11,
    F_SHIFT_LEFT = 1 << 12, F_ROW_A = 1 << 13, F_ROW_B = 1 << 14, F_NEG_PRED = 1 << 15, F_HAS_COUNT = 1 << 16,
    F_FULL = 1 << 17, F_PROXY_ASYNC = 1 << 18 /* fence.proxy.async */, F_IGNORE_SRC = 1 << 20,
    F_STRONG = 1 << 19,       /* .relaxed, .acquire, .release, .acq_rel, .volatile: a strong access, not a race */
    F_RELEASE = 1 << 29,      /* .release, .acq_rel */
    F_ACQUIRE = 1 << 30,      /* .acquire, .acq_rel */
    F_CVTA_TO = 1 << 21,      /* cvta.to.space: generic -> the space (plain cvta: the space -> generic) */
    F_EXPECT_TX = 1 << 23,    /* mbarrier.arrive.expect_tx */
    F_PARITY = 1 << 24,       /* mbarrier.try_wait.parity: the operand is a phase parity, not a state */
    F_MBAR_INIT_FENCE = 1 << 24, /* fence.mbarrier_init (F_PARITY's bit: the two opcodes never meet) */
    F_INC = 1 << 25,          /* setmaxnreg.inc (else .dec) */
    F_A_REGS = 1 << 26,       /* wgmma: A from registers, not a descriptor */
    F_TEST_WAIT = 1 << 27,    /* mbarrier.test_wait: never blocks */
    F_RELU = 1 << 27,         /* fma, cvt .relu (F_TEST_WAIT's bit: the opcodes never meet) */
    F_TO_GLOBAL = 1 << 28,    /* cp.async.bulk from shared to global (a bulk group), not to shared (an mbarrier) */
    F_GUARD_NEG = 1 << 22     /* the guard is @!p */
};

/* What a call calls (insn.mode of OP_CALL): the CUDA runtime's device-side printf and assert, which nvcc
 * emits as calls to these extern functions (device_calls.c); or a .func of the module, named (a direct call)
 * or through a function's address in a register (an indirect call: functions.c). Operands of a call of a
 * .func: its return operands (n_dst), then the register holding the target (indirect only), then its
 * arguments. A direct call's `target` is the callee's first instruction and `addr_offset` its index in
 * ptx_module.funcs; an indirect call's `addr_offset` is the signature its prototype or .calltargets list
 * gives (ptx_func.signature), its `target` the first of its .calltargets in ptx_kernel.call_targets (-1:
 * a .callprototype, any function of that signature) and `dst_offset` their number. */
enum { CALL_VPRINTF, CALL_ASSERTFAIL, CALL_FUNCTION, CALL_INDIRECT };
/* ret (insn.mode of OP_RET): the kernel's (the thread exits) or a .func's (back to the caller). */
enum { RET_KERNEL, RET_FUNCTION };
/* How far a fence reaches (insn.mode of OP_MEMBAR), as ptxas compiles it for sm_90: a GPU-wide memory barrier
 * (membar.gl/.sys; fence.sc/.acq_rel at .gpu, .cluster or .sys; fence.proxy.async of all state spaces or of
 * .shared::cluster: MEMBAR.*.GPU or .SYS, most with an invalidation of the L1, CCTL.IVALL); one within the CTA
 * (membar.cta; fence.sc/.acq_rel.cta; fence.proxy.async.shared::cta: MEMBAR.*.CTA); or no memory barrier at
 * all (fence.proxy.async.global, fence.mbarrier_init: FENCE.VIEW.ASYNC alone). Read by the timing model. */
enum { FENCE_GPU, FENCE_CTA, FENCE_VIEW_ONLY };

/* Sub-modes shared by several families (the meaning depends on the opcode). */
enum {
    /* shfl */ SHFL_UP, SHFL_DOWN, SHFL_BFLY, SHFL_IDX,
    /* vote */ VOTE_ALL = 0, VOTE_ANY, VOTE_UNI, VOTE_BALLOT,
    /* atom / red / redux / bar.red */
    ATOM_ADD = 0, ATOM_MIN, ATOM_MAX, ATOM_INC, ATOM_DEC, ATOM_AND, ATOM_OR, ATOM_XOR, ATOM_EXCH, ATOM_CAS,
    ATOM_POPC,
    /* prmt */ PRMT_DEFAULT = 0, PRMT_F4E, PRMT_B4E, PRMT_RC8, PRMT_ECL, PRMT_ECR, PRMT_RC16,
    /* wmma matrix */ WMMA_A = 0, WMMA_B, WMMA_C, WMMA_D,
    /* testp */ TESTP_FINITE = 0, TESTP_INFINITE, TESTP_NUMBER, TESTP_NOTANUMBER, TESTP_NORMAL, TESTP_SUBNORMAL,
};

/* Where a special register's per-thread value comes from (filled when a warp starts). */
typedef enum {
    SREG_TID_X, SREG_TID_Y, SREG_TID_Z, SREG_NTID_X, SREG_NTID_Y, SREG_NTID_Z,
    SREG_CTAID_X, SREG_CTAID_Y, SREG_CTAID_Z, SREG_NCTAID_X, SREG_NCTAID_Y, SREG_NCTAID_Z,
    SREG_LANEID, SREG_WARPID, SREG_NWARPID, SREG_SMID, SREG_NSMID, SREG_GRIDID,
    SREG_LANEMASK_EQ, SREG_LANEMASK_LE, SREG_LANEMASK_LT, SREG_LANEMASK_GE, SREG_LANEMASK_GT,
    SREG_DYNAMIC_SMEM_SIZE, SREG_TOTAL_SMEM_SIZE, SREG_CLOCK, SREG_CLOCK64, SREG_GLOBALTIMER,
    SREG_COUNT
} ptx_sreg;

typedef struct {
    uint16_t op;           /* ptx_op */
    uint16_t sass;         /* the machine instructions ptxas made of its line for the modeled GPU, in all the
                              copies of its block (model.c; read when its kernel's has_sass is true) */
    uint8_t type;          /* the instruction's type (the destination's, for cvt) */
    uint8_t stype;         /* cvt's source type; setp's compared type is `type` */
    uint8_t space;         /* ptx_space of a memory operand */
    uint8_t mode;          /* cmp (setp/set), the sub-mode of shfl/vote/atom/prmt/wmma, ... */
    uint8_t rounding;      /* ptx_rounding */
    uint8_t vec;           /* elements per memory access (1, 2, 4), ldmatrix's matrices, wmma's fragment, mma's K */
    uint8_t combine;       /* setp's optional .and/.or/.xor with a predicate: 0, 1 = and, 2 = or, 3 = xor */
    uint8_t n_dst, n_src;  /* operand counts: destinations first, then sources */
    uint8_t size;          /* bytes of a cp.async copy; the shape of an mma/wmma */
    uint8_t copies;        /* the copies ptxas made of its basic block (a loop unrolled): a run of it is sass /
                              copies machine instructions, spread over a warp's runs (model.c) */
    uint8_t sass_bytes;    /* the bytes a thread moves in the widest load or store ptxas made of its line
                              (LDS.128: 16; model.c), 0 where it made none */
    uint8_t sass_on_fma;   /* most of the machine instructions ptxas made of its line are IMADs, which go down
                              the FMA pipe, not the integer ALU (model.c) */
    uint8_t sass_fixed;    /* none of those machine instructions sets a dependence counter: their results are
                              waited for by the stall counts alone (model.c) */
    uint8_t if_converted;  /* a forward conditional bra of whose line ptxas made no branch: it predicated the
                              instructions the bra skips instead (model.c) */
    uint8_t counter_class; /* the counters' class (emu_class: class_of, interp.h), set when its kernel is loaded */
    uint16_t sass_stalls;  /* the cycles the stall counts of those machine instructions hold a warp for, in all
                              the copies of its block (model.c; read with sass) */
    uint32_t flags;        /* F_* */
    int32_t guard;         /* predicate slot guarding the instruction, -1 if none (F_NEG_PRED: @!p) */
    uint32_t operands;     /* index of the first operand slot in kernel->slots_of */
    int32_t addr_base;     /* memory operand: base slot (-1: the constant offset alone) */
    int64_t addr_offset;   /* memory operand: constant byte offset; cp.async.wait_group: its N; brx.idx: the
                              length of its .branchtargets list */
    int32_t dst_offset;    /* cp.async, cp.async.bulk.tensor: the shared destination's constant offset */
    int32_t mbar_offset;   /* cp.async.bulk.tensor: the mbarrier operand's constant offset */
    int32_t target;        /* bra: the instruction index jumped to; brx.idx: its list's first branch_targets entry */
    int32_t ptx_line;      /* where the instruction stands in the PTX text */
    int32_t src_file, src_line; /* the CUDA source line it came from (.loc), 0 if unknown */
    uint32_t sass_order;   /* where ptxas put its line: the index of the line's first machine instruction in the
                              machine code, or 0 where ptxas made none of it (folded into others, it takes no
                              issue cycle and goes as early as what it depends on allows; model.c) */
} insn;

/* A variable in a state space the kernel uses (a shared array, the local depot, a module global). */
typedef struct {
    char *name;
    ptx_space space;
    uint64_t size, align;
    uint64_t offset;       /* shared/local: byte offset in the block's/thread's memory */
    bool is_extern;        /* `.extern .shared` with no size: dynamic shared memory */
    uint8_t *init;         /* module .global/.const: initial bytes (NULL: zeros) */
    void *storage;         /* module .global/.const: where it lives while the module is loaded */
} ptx_var;

typedef struct {
    char *name;
    ptx_type type;
    uint64_t size, align, offset; /* in the kernel's parameter buffer */
} ptx_param;

/* A device function (PTX ISA 9.0, section 7.1 "Function Declarations and Definitions": .func), as
 * calls see it. Parameters and return values are in the .param state space (what nvcc emits) or in
 * .reg (which the ISA allows for device functions: section 5.1.6.4 "Device Function Parameters"). */
#define PTX_MAX_FUNC_PARAMS 32   /* return values and parameters of one function, each */
typedef struct {
    char *name;
    int line;                    /* the PTX line of its definition (of its first declaration until then) */
    bool defined;
    uint8_t n_returns, n_params;
    bool reg[2 * PTX_MAX_FUNC_PARAMS];  /* .reg, not .param: the returns first, then the parameters */
    uint32_t size[2 * PTX_MAX_FUNC_PARAMS]; /* bytes */
    uint64_t signature;          /* a hash of the counts, spaces and sizes: what an indirect call compares */
} ptx_func;

/* The address a function's name stands for (a `mov` of it, a call table's entries): an address in no state
 * space, so a call through anything else is caught, and no load from it succeeds. */
#define PTX_FUNC_WINDOW 0x0004000000000000ull
#define PTX_FUNC_ADDRESS(index) (PTX_FUNC_WINDOW + 16 * ((uint64_t)(index) + 1))

/* A function as one kernel runs it: its code is part of every kernel of its module that reaches it (calls it,
 * through calls or not, or could through a pointer: its address is taken somewhere in the module), after
 * the kernel's own, compiled with the kernel's slots. Each activation has its own frame: the slots [first_slot, end_slot)
 * (its registers, and slots holding the addresses of its variables) are saved at a call and restored at its
 * ret, and its .local and .param variables (frame_bytes) are on the thread's stack in local memory. */
typedef struct {
    int32_t entry;               /* its first instruction in the kernel's code, -1: not defined */
    int32_t first_slot, end_slot;
    uint32_t frame_bytes, frame_align;
    int32_t *var_slot;           /* each variable's slot, which holds its address in this activation */
    uint32_t *var_offset;        /* and its offset in the frame */
    int n_vars;
    int32_t arg_slot[2 * PTX_MAX_FUNC_PARAMS]; /* each return value, then each parameter: a .param one's slot
                                                  holds the address of the caller's variable, a .reg one is a
                                                  register of the callee */
} ptx_frame;

/* Each thread's stack: room for the frames of the calls it is in, standing in for the GPU's
 * cudaLimitStackSize (1 KiB by default; the emulator's frames are not ptxas's, so its own size). An
 * activation takes 16 bytes (a return address and a frame pointer), its frame's variables, and 4 bytes per
 * slot of its frame (the registers a callee saves); a call past the end is a stack overflow, reported. */
#define PTX_STACK_BYTES (16u << 10)
/* The tokens of function bodies read into kernels, over the module: a function is read into each kernel that
 * reaches it (calls it, through calls or by its address), so a hostile module with many kernels and many
 * functions could make that quadratic. Far above what real modules need. */
#define PTX_MAX_LINK_TOKENS (1 << 24)

typedef struct {
    char *name;            /* the mangled name, as cudaLaunchKernel's registration knows it */
    int first_line;
    ptx_param *params;
    int n_params;
    uint64_t param_bytes;
    insn *code;
    int n_code;
    int32_t *slots_of;     /* operand slot lists, indexed by insn.operands */
    int32_t *branch_targets; /* the .branchtargets lists, one after another: instruction indexes */
    int n_branch_targets;
    int n_slots;           /* registers + constants + special registers + symbols */
    /* slots filled when a warp starts: constants (one value for every thread), special registers */
    int32_t *const_slot;
    uint64_t *const_value;
    int n_consts;
    int32_t *sreg_slot;
    uint8_t *sreg_which;   /* ptx_sreg */
    int n_sregs;
    /* the registers some path may read before writing them: poisoned again at every block start (poison.c) */
    int32_t *poison_slot;
    int n_poison_slots;
    uint64_t static_smem;  /* bytes of `.shared` variables the kernel uses */
    uint64_t dynamic_smem_align;
    uint64_t local_bytes;  /* `.local` bytes per thread (with the stack, when the module has functions) */
    uint64_t stack_base;   /* where the stack starts in local memory (PTX_STACK_BYTES before its end) */
    ptx_frame *frames;     /* per module function (ptx_module.funcs), NULL when the module has none */
    int n_frames;
    int32_t *call_targets; /* the .calltargets lists, one after another: function indexes */
    int n_call_targets;
    int max_threads;       /* .maxntid (product), 0 if none */
    int max_registers;     /* .maxnreg, 0 if none */
    int ptxas_registers;   /* per thread, as ptxas -v gives them for the modeled GPU (model.c); 0 unknown,
                              -1: ptxas refuses the kernel for that GPU (not modeled) */
    bool has_sass;         /* its instructions' .sass were read from that machine code (model.c) */
    int req_threads[3];    /* .reqntid, 0 if none */
} ptx_kernel;

typedef struct {
    char *path;            /* where the text came from, for messages (escaped: one printable line) */
    char **files;          /* .file N "path" -> files[N] */
    int n_files;
    ptx_kernel *kernels;
    int n_kernels;
    ptx_var *vars;         /* module-scope variables */
    int n_vars;
    ptx_func *funcs;       /* device functions (.func) declared or defined */
    int n_funcs;
} ptx_module;

/* What the parser accepts (emu/README.md, "Limits"). PTX is input like any other: every size, count and
 * index in it is checked against these before it is used, so a hostile file gets a one-line error, never
 * a crash, a hang or an allocation it could not pay for. Each is far above what a real kernel uses (the
 * largest this project builds: 1.3 MB of PTX, about 4,400 registers of one type, 9 source files). */
enum {
    PTX_MAX_TEXT_BYTES = 256 << 20,     /* one PTX text */
    PTX_MAX_SLOTS = 1 << 18,            /* per kernel: registers, distinct constants, special registers */
    PTX_MAX_FILE_INDEX = 1 << 16,       /* .file N */
    PTX_MAX_ALIGN = 1 << 16,            /* .align N (and N must be a power of two: PTX ISA, "Variables") */
    PTX_MAX_PARAM_BYTES = 32764,        /* a kernel's parameters (CUDA C++ Programming Guide, "Function
                                           Parameters": 32,764 bytes on Volta and later) */
    PTX_MAX_LOCAL_BYTES = 512 << 10,    /* .local per thread (Programming Guide, "Compute Capabilities":
                                           512 KB of local memory per thread) */
    PTX_MAX_SHARED_BYTES = 227 << 10,   /* a kernel's static .shared (an H100's 227 KB per block at most) */
    PTX_MAX_THREADS = 1024              /* .maxntid / .reqntid: threads per block */
};
#define PTX_MAX_VAR_BYTES (1ull << 30)  /* a module .global or .const variable: host memory here */

/* Parses PTX text. On failure returns NULL and writes one line ("PATH:LINE: what") to err. */
ptx_module *ptx_parse(const char *text, const char *path, char *err, size_t err_len);
void ptx_free(ptx_module *module);
const ptx_kernel *ptx_find_kernel(const ptx_module *module, const char *name);
/* Finds the kernel's poison_slot list (poison.c); false when the host has no memory for it. */
bool ptx_find_poisoned_registers(ptx_kernel *k);
/* Sets every instruction's counter_class (counters.c). */
void ptx_set_counter_classes(ptx_kernel *k);

const char *ptx_type_name(ptx_type type);

/* A type's width in bits (0: none); inline, as the interpreter asks it at every instruction. */
static inline int ptx_type_bits(ptx_type type)
{
    switch (type) {
    case T_PRED: return 1;
    case T_B8: case T_U8: case T_S8: return 8;
    case T_B16: case T_U16: case T_S16: case T_F16: case T_BF16: return 16;
    case T_B32: case T_U32: case T_S32: case T_F32: case T_F16X2: case T_BF16X2: case T_TF32: return 32;
    case T_B64: case T_U64: case T_S64: case T_F64: return 64;
    case T_B128: return 128;
    default: return 0;
    }
}
const char *ptx_op_name(ptx_op op);

#endif
