/* SPDX-License-Identifier: MIT */
/*
 * perf.h - TraceLens's perf-model sheets (GEMM, ...; its PerfModel): the
 * ops of a category, each op instance's parameters, FLOPs and bytes moved
 * from its signature and its kernels' names.  stats_perf*.c group the
 * instances by op name and parameters into the sheet; a category is one
 * file (perf_NAME.c) defining `const struct perf_category
 * perf_category_NAME` and X(NAME, SHEET) in PERF_CATEGORIES (NAME the
 * `ev-stats perf --table` word, SHEET TraceLens's sheet).  Private to
 * lib/analysis.
 */
#ifndef EV_PERF_H
#define EV_PERF_H

#include <stddef.h>

#define PERF_MAXP 16    /* parameters of a model */
#define PERF_PVAL 192   /* the text of one */

/* An op instance as a model sees it. */
struct perf_inst {
	const char *sig;                 /* "aten::mm dims=[...] types=[...] ..." */
	const char *const *kernels;      /* its GPU events' names, in time order */
	size_t nk;
};

/* What a model makes of it. */
struct perf_model {
	size_t np;
	const char *pname[PERF_MAXP];    /* parameter names, TraceLens's order (static) */
	char pval[PERF_MAXP][PERF_PVAL]; /* their values as pandas' str() prints them */
	double flops;                    /* FLOPs */
	double bytes;                    /* bytes moved, NAN when TraceLens has none */
	const char *spec;                /* Compute Spec ("matrix_bf16"), "" when none */
};

struct perf_category {
	const char *sheet;               /* TraceLens's sheet */
	const char *const *ops;          /* op names modelled (NULL-terminated) */
	const char *const *unmodelled;   /* op names TraceLens puts on the sheet with a
	                                  * model evkit lacks (NULL-terminated): left
	                                  * out and said */
	/* EV_OK, or EV_ERR_FORMAT where TraceLens's model fails too (it then
	 * leaves the instance out). */
	int (*model)(const struct perf_inst *in, struct perf_model *m);
	const char *note;                /* said when the sheet has rows, NULL none */
	/* A backward sheet (Reduce_bwd): a row per forward op of `ops` that
	 * the stream links to a backward op (fwdbwd.h), with the kernels of
	 * that backward op's subtree; `model` gives TraceLens's flops_bwd and
	 * bytes_bwd. */
	int bwd;
	/* What TraceLens does when `model` returns PERF_NOARGS (the op lacks
	 * the args its model reads), said with their count; NULL none. */
	const char *noargs;
};

/* A model's answer beside EV_OK and EV_ERR_FORMAT: the op has not the
 * args the model reads (TraceLens then looks elsewhere, cat->noargs). */
#define PERF_NOARGS 1

#define PERF_CATEGORIES(X) \
	X(gemm, GEMM) \
	X(sdpa_fwd, SDPA_fwd) \
	X(conv_fwd, CONV_fwd) \
	X(conv_bwd, CONV_bwd) \
	X(binary, BinaryElementwise) \
	X(unary, UnaryElementwise) \
	X(norm, Normalization) \
	X(reduce, Reduce_fwd) \
	X(reduce_bwd, Reduce_bwd)
/* Models TraceLens picks by a pattern of the op's name (its perf-model
 * matchers, for generated kernel names) rather than by the name: `ops`
 * are name prefixes, and TraceLens writes no sheet of them, only their
 * numbers in unified_perf_summary (unified_groups.c). */
#define PERF_MATCHERS(X) \
	X(triton)
/* A category's --table number (the report picks its sheets by it). */
#define PERF_ENUM(n, sheet) PERF_##n,
enum perf_table { PERF_CATEGORIES(PERF_ENUM) PERF_NCATEGORIES };
#undef PERF_ENUM
#define PERF_DECLARE(n, sheet) extern const struct perf_category perf_category_##n;
PERF_CATEGORIES(PERF_DECLARE)
#undef PERF_DECLARE
#define PERF_DECLARE(n) extern const struct perf_category perf_category_##n;
PERF_MATCHERS(PERF_DECLARE)
#undef PERF_DECLARE

/* Whether the n bytes at s are an op name of TraceLens's registry that
 * its Triton model segments kernel names against (perf_triton_ops.c). */
int perf_triton_known_op(const char *s, size_t n);

/* Model helpers (perf_gemm.c), for the categories to share. */
/* The i-th item of the list field ("dims", "types", "strides") of a
 * signature: its text at *at, NULL when absent. */
const char *perf_sig_item(const char *sig, const char *field, size_t i);
/* The number of items of that list, -1 when the field is absent. */
long perf_sig_items(const char *sig, const char *field);
/* TraceLens's bytes per element of a dtype name (name2bpe), 0 unknown. */
int perf_dtype_bytes(const char *name);
/* TraceLens's precision of a dtype name (torch_dtype_map: "bf16"), NULL
 * when none. */
const char *perf_dtype_precision(const char *name);

/* Helpers shared by the categories (perf_args.c). */
/* A parameter printf'd into m; EV_ERR_FORMAT when too many or too long. */
int perf_param(struct perf_model *m, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The integers of a shape item "[a,b]" into v (at most max) and, when
 * prod is not NULL, their product; their number, -1 when it is not a list
 * of integers. */
int perf_shape(const char *item, long long *v, int max, long long *prod);
/* Python's str(tuple(item)) as parameter name; EV_ERR_FORMAT when item
 * is not a list (TraceLens's tuple() fails). */
int perf_tuple(struct perf_model *m, const char *name, const char *item);
/* A quoted type item: its name unquoted into name and Python's repr()
 * into repr; -1 when not a string. */
int perf_type(const char *item, char *name, size_t n, char *repr, size_t rn);
/* Whether item is a non-empty list (Python's truth of Input Dims[i]). */
int perf_truthy_list(const char *item);
/* "vector_" and TraceLens's precision of a dtype, "" when none. */
const char *perf_vector_spec(const char *dtype);
/* Helpers of the matrix categories (perf_gemm.c). */
/* A quoted type name at p into b, unquoted; -1 when not one. */
int perf_type_name(const char *p, char *b, size_t n);
/* Parameter `name`: tuple(Input Strides[i]) as Python prints it, None
 * without strides. */
int perf_stride_param(struct perf_model *m, const char *name, const char *sig, size_t i);
/* Parameter `name`: item i of a signature's list field as Python prints
 * it, lists as tuples ("(10, 64, 56, 56)"), strings quoted; EV_ERR_FORMAT
 * when absent. */
int perf_list_param(struct perf_model *m, const char *name, const char *sig, const char *field, size_t i);

#endif /* EV_PERF_H */
