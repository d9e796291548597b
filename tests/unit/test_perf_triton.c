/* SPDX-License-Identifier: MIT */
/*
 * test_perf_triton.c - TraceLens's Triton model (perf_triton.c) on
 * hand-made op signatures, as kineto2ev writes them.
 *
 * The expected numbers are worked out by hand from the rules of
 * TraceLens's triton_compiled_perf_model.py (171dd74), as each case's
 * comment shows, and agree with its TritonCompiledPerfModel's
 * param_details, flops(), bytes() and get_compute_spec() on the same args
 * (run from /work/scratch/tracelens with Debian's python3).
 */
#include <math.h>
#include <string.h>

#include "analysis/perf.h"
#include "ev.h"
#include "unit.h"

static int model(const char *sig, struct perf_model *m)
{
	struct perf_inst in = { sig, NULL, 0 };
	memset(m, 0, sizeof *m);
	return perf_category_triton.model(&in, m);
}

static int param_is(const struct perf_model *m, const char *name, const char *val)
{
	for (size_t i = 0; i < m->np; i++)
		if (!strcmp(m->pname[i], name))
			return !strcmp(m->pval[i], val);
	return 0;
}

/* Pointwise: the ops _to_copy (0 FLOPs), add (1), gelu (8) over xnumel
 * 32: 9 * 32 = 288 FLOPs.  Bytes: 32 halves + 8 floats + 32 halves, and
 * one more write of 32 at the first tensor's 2 bytes: 64 + 32 + 64 + 64
 * = 224.  The first sized dtype is Half. */
static void test_pointwise(void)
{
	struct perf_model m;
	CHECK(model("triton_poi_fused__to_copy_add_gelu_7 dims=[[4,8],[8],[4,8],[]] "
	            "types=[\"c10::Half\",\"c10::Float\",\"c10::Half\",\"Scalar\"] strides=[[8,1],[1],[8,1],[]] "
	            "concrete=[\"\",\"\",\"\",\"32\"]", &m) == EV_OK);
	CHECK(m.np == 3);
	CHECK(param_is(&m, "fused_ops", "aten._to_copy, aten.add, aten.gelu"));
	CHECK(param_is(&m, "xnumel", "32") && param_is(&m, "rnumel", "1"));
	CHECK(m.flops == 288.0);
	CHECK(m.bytes == 224.0);
	CHECK(!strcmp(m.spec, "vector_half"));
}

/* Reduction: the last two sizes, xnumel 16 and rnumel 256.  "var_mean"
 * is one registry name, taken whole before "var" and "mean" (the longest
 * from the end): add (1) + var_mean (0, not in the FLOPs table), so
 * 1 * 16 * 256 = 4096 FLOPs.  Bytes 4096 bf16 + 256 floats = 8192 + 1024
 * = 9216, no extra write for a reduction. */
static void test_reduction(void)
{
	struct perf_model m;
	CHECK(model("triton_red_fused_add_var_mean_5 dims=[[16,256],[256],[],[]] "
	            "types=[\"c10::BFloat16\",\"c10::Float\",\"Scalar\",\"Scalar\"] strides=[[256,1],[1],[],[]] "
	            "concrete=[\"\",\"\",\"16\",\"256\"]", &m) == EV_OK);
	CHECK(param_is(&m, "fused_ops", "aten.add, aten.var_mean"));
	CHECK(param_is(&m, "xnumel", "16") && param_is(&m, "rnumel", "256"));
	CHECK(m.flops == 4096.0);
	CHECK(m.bytes == 9216.0);
	CHECK(!strcmp(m.spec, "vector_bfloat16"));
}

/* A persistent reduction with one size (xnumel 10, rnumel 1); a word no
 * registry name covers ("frobnicate"): no ops, 0 FLOPs.  Bytes 10 of
 * "float" (not a c10 name: 0 bytes) + 10 longs = 80; the spec names the
 * first tensor with a size, Long. */
static void test_unknown_word(void)
{
	struct perf_model m;
	CHECK(model("triton_per_fused_frobnicate_mul_2 dims=[[10],[10]] types=[\"float\",\"c10::Long\"] "
	            "strides=[[1],[1]] concrete=[\"\",\"\",\"10\"]", &m) == EV_OK);
	CHECK(param_is(&m, "fused_ops", ""));
	CHECK(param_is(&m, "xnumel", "10") && param_is(&m, "rnumel", "1"));
	CHECK(m.flops == 0.0);
	CHECK(m.bytes == 80.0);
	CHECK(!strcmp(m.spec, "vector_long"));
}

/* Python's int() of the Concrete Inputs: "x" is not one, " 1_024 " is
 * 1024, a JSON number is itself: xnumel 1024, rnumel 3; sum (1) over
 * 3072 elements; bytes (3072 + 1024) floats = 16384. */
static void test_concrete_ints(void)
{
	struct perf_model m;
	CHECK(model("triton_red_fused_sum_1 dims=[[1024,3],[1024]] types=[\"c10::Float\",\"c10::Float\"] "
	            "strides=[[3,1],[1]] concrete=[\"\",\"x\",\" 1_024 \",3]", &m) == EV_OK);
	CHECK(param_is(&m, "fused_ops", "aten.sum"));
	CHECK(param_is(&m, "xnumel", "1024") && param_is(&m, "rnumel", "3"));
	CHECK(m.flops == 3072.0);
	CHECK(m.bytes == 16384.0);
	CHECK(!strcmp(m.spec, "vector_float"));
}

/* A name without the trailing "_N" tells no ops (0 FLOPs) but the args
 * still give bytes: 5 floats, and the pointwise write again, 40. */
static void test_name_without_number(void)
{
	struct perf_model m;
	CHECK(model("triton_poi_fused_add dims=[[5]] types=[\"c10::Float\"] strides=[[1]] concrete=[\"5\"]", &m) ==
	      EV_OK);
	CHECK(param_is(&m, "fused_ops", ""));
	CHECK(m.flops == 0.0);
	CHECK(m.bytes == 40.0);
}

/* Without sizes, or without Concrete Inputs, Input Dims or Input type,
 * TraceLens goes to the Inductor cache (V1): the model says so. */
static void test_noargs(void)
{
	struct perf_model m;
	CHECK(model("triton_poi_fused_add_0 dims=[[5]] types=[\"c10::Float\"] strides=[[1]] concrete=[\"\",\"\"]", &m) ==
	      PERF_NOARGS);
	CHECK(model("triton_poi_fused_add_0 dims=[[5]] types=[\"c10::Float\"] strides=[[1]]", &m) == PERF_NOARGS);
	CHECK(model("triton_poi_fused_add_0 dims=[] types=[] strides=[] concrete=[\"5\"]", &m) == PERF_NOARGS);
	CHECK(model("triton_poi_fused_add_0", &m) == PERF_NOARGS);
}

/* The registry's lookup: whole names only. */
static void test_registry(void)
{
	CHECK(perf_triton_known_op("_unsafe_view", 12));
	CHECK(perf_triton_known_op("var_mean", 8));
	CHECK(perf_triton_known_op("addx", 3));
	CHECK(!perf_triton_known_op("unsafe", 6));
	CHECK(!perf_triton_known_op("", 0));
	CHECK(!perf_triton_known_op("zzzz", 4));
}

int main(void)
{
	RUN(test_pointwise);
	RUN(test_reduction);
	RUN(test_unknown_word);
	RUN(test_concrete_ints);
	RUN(test_name_without_number);
	RUN(test_noargs);
	RUN(test_registry);
	return unit_report("test_perf_triton");
}
