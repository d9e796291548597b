/* SPDX-License-Identifier: MIT */
/*
 * perf_binary.c - TraceLens's BinaryElementwise sheet: aten::add(_),
 * mul(_), div(_), sigmoid_backward, threshold_backward and Liger's
 * LigerSiLUMulFunction.  Parameters shape_in1, shape_in2, dtype_in1_in2_out,
 * stride_input1, stride_input2, stride_output (Input Dims, Input type and
 * Input Strides [0] and [1], and [2] when Input Dims[2] is a non-empty
 * tensor, else None); FLOPs one per element of the broadcast shape, bytes
 * each input's elements at its size plus the output's at the output type's
 * size (without one: the larger input size when both are tensors, else the
 * first's).  TraceLens's rules, as its PerfModel (perf_model.py) states
 * them.
 */
#include <math.h>
#include <string.h>

#include "analysis/perf.h"
#include "ev/stream.h"

static const char *const binary_ops[] = {
	"aten::div", "aten::div_", "aten::mul", "aten::mul_", "aten::add", "aten::add_", "aten::sigmoid_backward",
	"aten::threshold_backward", "LigerSiLUMulFunction", NULL,
};

static const char *const binary_unmodelled[] = {
	"aiter::dynamic_per_token_scaled_quant", "aiter::dynamic_per_group_scaled_quant",
	"vllm::triton_per_token_group_quant_fp8", "aiter::dynamic_per_tensor_quant", NULL,
};

#define MAXD 16

/* The broadcast shape's number of elements; -1 when the shapes do not
 * broadcast (TraceLens raises). */
static int broadcast(const long long *a, int na, const long long *b, int nb, long long *n)
{
	int nd = na > nb ? na : nb;
	*n = 1;
	for (int i = 0; i < nd; i++) {
		long long x = i < nd - na ? 1 : a[i - (nd - na)], y = i < nd - nb ? 1 : b[i - (nd - nb)];
		if (x != y && x != 1 && y != 1)
			return -1;
		*n *= x > y ? x : y;
	}
	return 0;
}

static int binary_model(const struct perf_inst *in, struct perf_model *m)
{
	const char *sig = in->sig;
	int liger = !strncmp(sig, "LigerSiLUMulFunction", 20) && (sig[20] == ' ' || !sig[20]);
	long long s1[MAXD], s2[MAXD], n1, n2, nout;
	int d1 = perf_shape(perf_sig_item(sig, "dims", 0), s1, MAXD, &n1);
	int d2 = perf_shape(perf_sig_item(sig, "dims", 1), s2, MAXD, &n2);
	char t1[64], r1[96], t2[64], r2[96], to[64], ro[96];
	if (d1 < 0 || d2 < 0 || perf_type(perf_sig_item(sig, "types", 0), t1, sizeof t1, r1, sizeof r1) ||
	    perf_type(perf_sig_item(sig, "types", 1), t2, sizeof t2, r2, sizeof r2))
		return EV_ERR_FORMAT;
	int has_out = !liger && perf_truthy_list(perf_sig_item(sig, "dims", 2));
	if (has_out && perf_type(perf_sig_item(sig, "types", 2), to, sizeof to, ro, sizeof ro))
		return EV_ERR_FORMAT;
	m->np = 0;
	int rc = perf_tuple(m, "shape_in1", perf_sig_item(sig, "dims", 0));
	rc = rc ? rc : perf_tuple(m, "shape_in2", perf_sig_item(sig, "dims", 1));
	rc = rc ? rc : perf_param(m, "dtype_in1_in2_out", "(%s, %s, %s)", r1, r2, has_out ? ro : "None");
	rc = rc ? rc : perf_tuple(m, "stride_input1", perf_sig_item(sig, "strides", 0));
	rc = rc ? rc : perf_tuple(m, "stride_input2", perf_sig_item(sig, "strides", 1));
	if (has_out)
		rc = rc ? rc : perf_tuple(m, "stride_output", perf_sig_item(sig, "strides", 2));
	else
		rc = rc ? rc : perf_param(m, "stride_output", "None");
	if (rc)
		return rc;
	if (broadcast(s1, d1, s2, d2, &nout))
		return EV_ERR_FORMAT;
	int b1 = perf_dtype_bytes(t1), b2 = perf_dtype_bytes(t2), bo = 0;
	if (has_out)
		bo = perf_dtype_bytes(to);
	else if (b1 && b2)
		bo = d1 > 0 && d2 > 0 ? (b1 > b2 ? b1 : b2) : b1;
	m->flops = (double)nout;
	m->bytes = b1 && b2 && bo ? (double)(n1 * b1 + n2 * b2 + nout * bo) : NAN;
	m->spec = perf_vector_spec(t1);
	return EV_OK;
}

const struct perf_category perf_category_binary = {
	.sheet = "BinaryElementwise",
	.ops = binary_ops,
	.unmodelled = binary_unmodelled,
	.model = binary_model,
};
