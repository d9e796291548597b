/* SPDX-License-Identifier: MIT */
/*
 * classify.c - kernel classes and timeline buckets by name, under the rule
 * sets of TraceLens (two eras) and HTA, so that every tool classifies the
 * same kernel the same way.  The rules are written out as string tests
 * rather than regular expressions: they run once per distinct name, but
 * the tests document exactly which names match.
 */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "ev/analysis.h"
#include "ev/stream.h"

int ev_rules_parse(const char *s, enum ev_rules *r)
{
	if (!strcmp(s, "tracelens"))
		*r = EV_RULES_TRACELENS;
	else if (!strcmp(s, "tracelens-2025"))
		*r = EV_RULES_TRACELENS_2025;
	else if (!strcmp(s, "hta"))
		*r = EV_RULES_HTA;
	else
		return EV_ERR_ARG;
	return EV_OK;
}

const char *ev_rules_name(enum ev_rules r)
{
	switch (r) {
	case EV_RULES_TRACELENS_2025: return "tracelens-2025";
	case EV_RULES_HTA: return "hta";
	case EV_RULES_TRACELENS:
	default: return "tracelens";
	}
}

int ev_kclass_list_parse(const char *list, unsigned *mask)
{
	if (!strcmp(list, "all")) {
		*mask = ~0u;
		return EV_OK;
	}
	unsigned m = 0;
	const char *p = list;
	for (;;) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char word[32];
		unsigned v;
		if (n == 0 || n >= sizeof word)
			return EV_ERR_ARG;
		memcpy(word, p, n);
		word[n] = '\0';
		if (ev_kclass_parse(word, &v) != EV_OK || v >= 32)
			return EV_ERR_ARG;
		m |= 1u << v;
		if (!e)
			break;
		p = e + 1;
	}
	*mask = m;
	return EV_OK;
}

/* Does h contain n, ignoring case?  n is lower-case and starts with a
 * letter: only offsets whose byte is that letter in either case are
 * compared (a compare at every offset was most of ev-stats timeline's
 * first sight of a 300-byte kernel name). */
static int contains_ci(const char *h, const char *n)
{
	size_t ln = strlen(n);
	unsigned char first = (unsigned char)n[0];
	for (; *h; h++)
		if (((unsigned char)*h | 0x20) == first && strncasecmp(h, n, ln) == 0)
			return 1;
	return 0;
}

static int starts(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

/* s equals p, optionally followed by ".kd" (ROCm code object suffix). */
static int is_or_kd(const char *s, const char *p)
{
	size_t n = strlen(p);
	return strncmp(s, p, n) == 0 && (s[n] == '\0' || strcmp(s + n, ".kd") == 0);
}

/* TraceLens HEAD: ^(MEMORY_COPY_(HOST_TO_DEVICE|DEVICE_TO_HOST|DEVICE_TO_DEVICE)
 * |__amd_rocclr_copyBuffer(Rect)?(Aligned)?)(\.kd)?$ */
static int rocm_copy_kernel(const char *n)
{
	static const char *const names[] = {
		"MEMORY_COPY_HOST_TO_DEVICE", "MEMORY_COPY_DEVICE_TO_HOST", "MEMORY_COPY_DEVICE_TO_DEVICE",
		"__amd_rocclr_copyBuffer", "__amd_rocclr_copyBufferRect", "__amd_rocclr_copyBufferAligned",
		"__amd_rocclr_copyBufferRectAligned",
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (is_or_kd(n, names[i]))
			return 1;
	return 0;
}

static int hta_comm(const char *n)
{
	return starts(n, "nccl") || starts(n, "hip") || starts(n, "hccl") || strstr(n, "ncclKernel") != NULL;
}

int ev_is_comm_name(enum ev_rules r, const char *name)
{
	switch (r) {
	case EV_RULES_TRACELENS_2025:
		return strstr(name, "nccl") != NULL;
	case EV_RULES_HTA:
		return hta_comm(name);
	case EV_RULES_TRACELENS:
	default:
		return contains_ci(name, "nccl") || contains_ci(name, "rccl") || contains_ci(name, "cross_device_reduce");
	}
}

/* Tensile/hipBLASLt names: C<3 letters>_A<3>_B<3> (Cijk_Ailk_Bljk_...). */
static int tensile_name(const char *n)
{
	if (strlen(n) < 11)
		return 0;
	return n[0] == 'C' && isalpha((unsigned char)n[1]) && isalpha((unsigned char)n[2]) &&
	       isalpha((unsigned char)n[3]) && n[4] == '_' && n[5] == 'A' && n[9] == '_' && n[10] == 'B';
}

/* Any of the lower-case words in a NULL-terminated list inside lc? */
static int has_any(const char *lc, const char *const *words)
{
	for (; *words; words++)
		if (strstr(lc, *words))
			return 1;
	return 0;
}

/* A cuDNN convolution by cuDNN's own naming: its implicit-GEMM engines
 * are "scudnn"/"hcudnn" or an MMA shape before "cudnn" ("h884cudnn",
 * "s1688cudnn"), and a name that says cudnn has a conv word other than
 * "convert" (cudnn::ops::convertTensor_kernel converts layouts). */
static int cudnn_conv(const char *lc)
{
	for (const char *p = strstr(lc, "cudnn"); p; p = strstr(p + 1, "cudnn"))
		if (p > lc && (p[-1] == 's' || p[-1] == 'h' || isdigit((unsigned char)p[-1])))
			return 1;
	if (!strstr(lc, "cudnn"))
		return 0;
	for (const char *p = strstr(lc, "conv"); p; p = strstr(p + 1, "conv"))
		if (strncmp(p, "convert", 7) != 0)
			return 1;
	return 0;
}

/* A fill kernel proper (a constant written to a buffer, as memset does):
 * "fill_kernel" not preceded by a word of its own, so masked_fill and
 * index_fill, which read a mask or an index, stay compute. */
static int plain_fill(const char *lc)
{
	for (const char *p = strstr(lc, "fill_kernel"); p; p = strstr(p + 1, "fill_kernel"))
		if (p == lc || !(isalnum((unsigned char)p[-1]) || p[-1] == '_'))
			return 1;
	return 0;
}

/* The class rules proper, on the lower-cased name.  The order matters and
 * is tested on real names (tests/unit/test_nccl_names.c):
 *  - attention first: flash-attention and fused MHA kernels are built from
 *    cutlass/CK GEMM templates and carry "gemm"/"cutlass" in their names;
 *  - convolution before GEMM: cuDNN's and MIOpen's implicit-GEMM
 *    convolutions say "implicit_gemm"/"igemm", "scudnn" or "xmma_cudnn",
 *    and "conv" alone is not enough ("convert" is in Triton's fused
 *    elementwise names);
 *  - GEMM: BLAS libraries, Tensile/hipBLASLt, CUTLASS/CK, Triton matmuls,
 *    MoE grouped GEMMs;
 *  - normalisation, softmax and reductions; memset (fills proper only:
 *    masked_fill is elementwise); elementwise. */
static unsigned class_of_lower(const char *lc, const char *orig)
{
	static const char *const attention[] = {
		"flash", "fmha", "attention", "attn", "sdpa", "mha_fwd", "mha_bwd", "fwd_splitkv", "paged_attention",
		"unified_attention", "xformers", "scaled_dot_product", NULL,
	};
	static const char *const conv[] = {
		"convolution", "conv1d", "conv2d", "conv3d", "convolve", "_conv_", "conv_fwd", "conv_bwd",
		"conv_kernel", "winograd", "implicit_gemm", "implicit_convolve", "fprop", "dgrad", "wgrad",
		"igemm_fwd", "igemm_bwd", "igemm_wrw", "miopenconv", "naive_conv", "conv_bn", NULL,
	};
	static const char *const gemm[] = {
		"gemm", "nvjet", "cublaslt", "cublas", "xmma", "cutlass", "matmul", "cijk_", "hipblaslt",
		"wvsplitk", "_mm_", "triton_tem_fused_mm", "triton_tem_fused_addmm", "triton_tem_fused_bmm",
		"bmm_", "fused_moe", "moe_gemm", "grouped_mm", "splitkreduce", "ampere_sgemm", "volta_sgemm",
		"sm90_xmma", "sm80_xmma", "dot_kernel", "gemv", NULL,
	};
	static const char *const reduce[] = {
		"rmsnorm", "rms_norm", "layernorm", "layer_norm", "groupnorm", "group_norm", "batchnorm",
		"batch_norm", "bn_fw", "bn_bw", "norm_kernel", "softmax", "reduce", "reduction", "norm", NULL,
	};
	static const char *const memset_w[] = { "fillbuffer", "memset", NULL };
	static const char *const elementwise[] = {
		"elementwise", "vectorized", "multi_tensor_apply", "unrolled_elementwise", "pointwise",
		"triton_poi_", NULL,
	};
	if (has_any(lc, attention))
		return EV_KC_ATTENTION;
	if (has_any(lc, conv) || cudnn_conv(lc))
		return EV_KC_CONV;
	if (tensile_name(orig) || has_any(lc, gemm))
		return EV_KC_GEMM;
	if (has_any(lc, reduce) || strncmp(lc, "triton_red_", 11) == 0 || strncmp(lc, "triton_per_", 11) == 0)
		return EV_KC_REDUCE;
	if (has_any(lc, memset_w) || plain_fill(lc))
		return EV_KC_MEMSET;
	if (has_any(lc, elementwise))
		return EV_KC_ELEMENTWISE;
	return EV_KC_OTHER;
}

unsigned ev_kernel_class(enum ev_rules r, const char *name)
{
	if (ev_is_comm_name(r, name))
		return EV_KC_COMM;
	if (r == EV_RULES_TRACELENS && rocm_copy_kernel(name))
		return EV_KC_MEMCPY;
	/* One lower-case copy, then plain substring searches: far cheaper
	 * than a case-insensitive compare at every offset per pattern.  Names
	 * longer than the buffer are classified on their first part (the
	 * words that decide a class come early in every name we know). */
	char lc[1024];
	size_t n = 0;
	for (; name[n] && n + 1 < sizeof lc; n++)
		lc[n] = (char)tolower((unsigned char)name[n]);
	lc[n] = '\0';
	return class_of_lower(lc, name);
}

int ev_timeline_bucket(enum ev_rules r, unsigned type, const char *name)
{
	if (type == EV_MEMCPY)
		return r == EV_RULES_HTA && hta_comm(name) ? EV_BUCKET_COMM : EV_BUCKET_MEMCPY;
	if (type != EV_KERNEL && type != EV_MEMSET)
		return EV_BUCKET_NONE;
	if (r == EV_RULES_HTA) {
		/* HTA's memory class (Memcpy/Memset/dma names) is the memcpy
		 * bucket; OTHER kernels count as computation in these rows. */
		switch (ev_hta_kind(name)) {
		case EV_HTA_COMMUNICATION: return EV_BUCKET_COMM;
		case EV_HTA_MEMORY: return EV_BUCKET_MEMCPY;
		default: return EV_BUCKET_COMP;
		}
	}
	if (type == EV_KERNEL && r == EV_RULES_TRACELENS && rocm_copy_kernel(name))
		return EV_BUCKET_MEMCPY;
	return ev_is_comm_name(r, name) ? EV_BUCKET_COMM : EV_BUCKET_COMP;
}

int ev_hta_kind(const char *n)
{
	if (hta_comm(n))
		return EV_HTA_COMMUNICATION;
	if (starts(n, "Memcpy") || starts(n, "hipMemcpy") || starts(n, "Memset") || starts(n, "hipMemset") ||
	    starts(n, "dma"))
		return EV_HTA_MEMORY;
	/* Not computation: (^nccl)|(.*Memcpy)|(.*Memset)|(.*dma)|(^.*Sync)|
	 * (^Stream Wait Event)|(cuda.*LaunchKernel)|(^runFunction)|(^hip)|
	 * (^job_exe)|(^packet)|(^pe_exe)|(^cpum_exe_subgraph)|(^hccl)|
	 * (^collective_subgraph_execution), all anchored at the start. */
	if (strstr(n, "Memcpy") || strstr(n, "Memset") || strstr(n, "dma") || strstr(n, "Sync") ||
	    starts(n, "Stream Wait Event") || (starts(n, "cuda") && strstr(n + 4, "LaunchKernel")) ||
	    starts(n, "runFunction") || starts(n, "job_exe") || starts(n, "packet") || starts(n, "pe_exe") ||
	    starts(n, "cpum_exe_subgraph") || starts(n, "collective_subgraph_execution"))
		return EV_HTA_OTHER;
	return EV_HTA_COMPUTATION;
}

const char *ev_hta_kind_name(int kind)
{
	switch (kind) {
	case EV_HTA_COMPUTATION: return "COMPUTATION";
	case EV_HTA_COMMUNICATION: return "COMMUNICATION";
	case EV_HTA_MEMORY: return "MEMORY";
	default: return "OTHER";
	}
}
