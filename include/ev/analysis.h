/* SPDX-License-Identifier: MIT */
/*
 * ev/analysis.h - analyses over records: clipping, kernel classes, op
 * categories, coverage, computation/communication overlap and
 * distributions.  Their results are written as tables (ev/table.h).
 */
#ifndef EV_ANALYSIS_H
#define EV_ANALYSIS_H

#include "ev/stream.h"
#include "ev/table.h"

/* The workbook (ev/xlsx.h), named but not used here: ev/stats.h's
 * prototypes take one and see this declaration. */
struct ev_xlsx;

/* ------------------------------------------------------------------ */
/* Clipping of same-stream overruns (lib/analysis/clip.c).                       */

/* Some traces have a kernel whose duration runs past the start of the next
 * kernel on its stream (TraceLens issue #669), which a stream cannot do.
 * The clipper takes records in time order, holds each kernel until the next
 * kernel of its (rank, stream) starts or the stream passes its end, cuts it
 * at the next start (flag EV_F_CLIPPED) as Perfetto draws it, and writes
 * everything in the same order.  Memory: the records inside one kernel. */
typedef struct ev_clipper ev_clipper;
int ev_clipper_open(ev_clipper **c, ev_writer *w) EV_RESULT_USED;
int ev_clipper_add(ev_clipper *c, const struct ev_rec *r) EV_RESULT_USED;
int ev_clipper_finish(ev_clipper *c) EV_RESULT_USED; /* writes what is held */
uint64_t ev_clipper_clipped(const ev_clipper *c);
void ev_clipper_free(ev_clipper *c);

/* ------------------------------------------------------------------ */
/* Kernel classification rule sets (lib/analysis/classify.c).                   */

/* tracelens: TraceLens HEAD (nccl|rccl|cross_device_reduce in any case is
 * communication; ROCm legacy copy kernels are memcpy).  tracelens-2025: the
 * Dec-2025 TraceLens aorta ran ("nccl" case-sensitive substring).  hta:
 * HTA's anchored name patterns. */
enum ev_rules { EV_RULES_TRACELENS = 0, EV_RULES_TRACELENS_2025 = 1, EV_RULES_HTA = 2 };
int ev_rules_parse(const char *s, enum ev_rules *r); /* 0 or EV_ERR_ARG */
const char *ev_rules_name(enum ev_rules r);
/* Kernel class (enum ev_kclass) of a kernel name under a rule set. */
unsigned ev_kernel_class(enum ev_rules r, const char *name);
/* A comma list of class names ("gemm,attention") or "all" as a bit mask
 * (bit per enum ev_kclass).  0 or EV_ERR_ARG (unknown name, empty item). */
int ev_kclass_list_parse(const char *list, unsigned *mask);
/* Does the name count as communication under the rule set? */
int ev_is_comm_name(enum ev_rules r, const char *name);
/* TraceLens's GPU-timeline bucket of a GPU event (type kernel, memcpy or
 * memset), or EV_BUCKET_NONE for other types. */
enum ev_bucket { EV_BUCKET_NONE = -1, EV_BUCKET_COMP = 0, EV_BUCKET_COMM = 1, EV_BUCKET_MEMCPY = 2 };
int ev_timeline_bucket(enum ev_rules r, unsigned type, const char *name);
/* HTA's kernel type of a GPU event name. */
enum ev_hta_kind { EV_HTA_COMPUTATION = 0, EV_HTA_COMMUNICATION = 1, EV_HTA_MEMORY = 2, EV_HTA_OTHER = 3 };
int ev_hta_kind(const char *name);
const char *ev_hta_kind_name(int kind);

/* ------------------------------------------------------------------ */
/* Op categories (lib/analysis/op_category.c).                         */

/* Op categories as TraceLens names them, from the launching op's name
 * (and, for ops without a table entry, the first kernel's name).  Returns
 * a constant string: "GEMM", "CONV_fwd", "CONV_bwd", "SDPA_fwd",
 * "SDPA_bwd", "NORM_fwd", "NORM_bwd", "InferenceAttention", "elementwise",
 * "reduce", "multi_tensor_apply", "triton", "record_param_comms", "NCCL",
 * "memcpy", "other". */
const char *ev_op_category(const char *op_name, const char *kernel_name);

/* ------------------------------------------------------------------ */
/* Interval coverage sweep (lib/analysis/cover.c).                              */

/* Measures the union algebra of up to EV_COVER_MAX interval classes in one
 * pass: feed intervals in non-decreasing start order; the time covered by
 * each exact combination of classes is accumulated (time[mask]).  Memory
 * is constant: coverage before the latest start is final.  Times are
 * doubles so that callers can work in exact ns offsets or, to reproduce
 * tools that parse JSON microseconds into doubles, in those doubles. */
#define EV_COVER_MAX 4
struct ev_cover {
	double frontier;            /* time accounted up to */
	double end[EV_COVER_MAX];   /* furthest end seen per class */
	double first, last;         /* earliest start, latest end of all */
	int started;
	double time[1u << EV_COVER_MAX];
};
void ev_cover_init(struct ev_cover *c);
/* Add [start, end) of class k.  start must not go below the previous call's. */
void ev_cover_add(struct ev_cover *c, unsigned k, double start, double end);
/* Account everything (call once at the end). */
void ev_cover_finish(struct ev_cover *c);
/* Time covered by classes with (mask & want) == want and (mask & avoid) == 0. */
double ev_cover_measure(const struct ev_cover *c, unsigned want, unsigned avoid);

/* ------------------------------------------------------------------ */
/* Computation/communication overlap (lib/analysis/overlap.c): for every   */
/* compute kernel, the communication kernels that ran at the same time on  */
/* its rank; per rank, the communication hidden under computation.         */

#define EV_OVERLAP_NAMES 4
struct ev_overlap_opts {
	enum ev_rules rules;   /* what is communication */
	unsigned class_mask;   /* compute kernels reported: bit per enum ev_kclass */
	int kernel_names;      /* name communication by its kernel, not by the
	                          collective (allreduce, ...) of the coll or p2p
	                          record that follows it */
};
/* A compute kernel once the stream has passed its end. */
struct ev_overlap_kernel {
	struct ev_rec rec;
	int64_t end;                       /* ev_rec_end(&rec) */
	uint32_t count;                    /* communication kernels overlapping it */
	uint64_t best, best_name;          /* the largest single overlap (ns), its name */
	uint64_t union_ns;                 /* all overlaps, none counted twice */
	uint64_t names[EV_OVERLAP_NAMES];  /* the first names that overlapped */
	uint32_t nnames;
	int more;                          /* more names than names[] holds */
};
/* One rank, after ev_overlap_finish. */
struct ev_overlap_rank {
	uint32_t src, rank;
	double comm_ns, hidden_ns;         /* communication time, the part under computation */
	double overlap_pct;                /* hidden share of comm_ns: HTA's comp_comm_overlap */
	uint64_t kernels, overlapped;      /* compute kernels reported, those with an overlap */
};
/* What the input held, to say why a result is empty. */
struct ev_overlap_counts { uint64_t kernels, comm, selected; };
typedef struct ev_overlap ev_overlap;
/* Names are looked up (and collective names interned) in st.  emit gets
 * each compute kernel when the stream passes its end, in end order, so that
 * records written for them keep the stream in time order; a status other
 * than EV_OK from it is returned by the call that closed the kernel. */
int ev_overlap_new(ev_overlap **ov, ev_strtab *st, const struct ev_overlap_opts *o,
                   int (*emit)(void *ctx, const struct ev_overlap_kernel *k), void *ctx) EV_RESULT_USED;
/* The next record; records must come in time order (the caller checks). */
int ev_overlap_add(ev_overlap *ov, const struct ev_rec *r) EV_RESULT_USED;
/* The end of the stream: every open kernel is emitted and the per-rank
 * totals are made. */
int ev_overlap_finish(ev_overlap *ov) EV_RESULT_USED;
/* The totals by (src, rank); *n is 0 before ev_overlap_finish. */
const struct ev_overlap_rank *ev_overlap_ranks(const ev_overlap *ov, size_t *n);
struct ev_overlap_counts ev_overlap_counts(const ev_overlap *ov);
void ev_overlap_free(ev_overlap *ov);

/* ------------------------------------------------------------------ */
/* Distributions (lib/analysis/dist.c): count, sum, mean, std, min, max exactly, */
/* quantiles exactly while the samples fit a shared budget, then from a */
/* log-bucket sketch with relative error at most EV_DIST_SKETCH_ERR.     */

#define EV_DIST_SKETCH_ERR 0.005
struct ev_dist_pool {
	uint64_t budget, used; /* samples kept exactly, all dists */
	uint64_t sketched;     /* dists moved to the sketch */
};
struct ev_dist {
	uint64_t n;
	double sum, mean, m2;      /* Welford */
	double min, max;
	int64_t min_ts, max_ts;    /* time stamps of the min and max samples */
	double *v; size_t len, cap; /* exact samples while exact */
	uint32_t *bucket; int32_t bmin, bmax; /* sketch: counts per log bucket */
	uint64_t zeros;            /* sketch: samples <= 0 */
	int sketch;
	int sorted;
	int mapped;                /* v is a mapping of its own (dist.c) */
};
void ev_dist_init(struct ev_dist *d);
int ev_dist_add(struct ev_dist *d, struct ev_dist_pool *pool, double x, int64_t ts) EV_RESULT_USED;
/* The moments and extremes of x alone, no sample kept: for a table that
 * shows no quantile, whose samples would only take the budget (and so
 * memory) from the others.  Quantiles of such a dist are NAN. */
void ev_dist_add_moments(struct ev_dist *d, double x, int64_t ts);
double ev_dist_std(const struct ev_dist *d); /* sample std (n-1), 0 for n < 2 */
/* Quantile q in [0,1]: linear interpolation between order statistics
 * (numpy's default) when exact; the sketch's bucket value otherwise. */
double ev_dist_quantile(struct ev_dist *d, double q);
void ev_dist_free(struct ev_dist *d);
/* ev_dist_free, giving d's exact samples back to the pool's budget. */
void ev_dist_release(struct ev_dist *d, struct ev_dist_pool *pool);
/* d becomes the distribution of d's and src's samples; src is emptied. */
int ev_dist_merge(struct ev_dist *d, struct ev_dist *src, struct ev_dist_pool *pool) EV_RESULT_USED;

#endif /* EV_ANALYSIS_H */
