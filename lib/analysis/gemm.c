/* SPDX-License-Identifier: MIT */
/*
 * gemm.c - TraceLens's GEMM roofline numbers (FLOPs and data moved) from a
 * launching op's signature as kineto2ev writes it:
 * "aten::mm dims=[[M,K],[K,N]] types=["c10::BFloat16",...] ...".
 */
#include <stdlib.h>
#include <string.h>

#include "ev/nccl.h"
#include "ev/stats.h"
#include "ev/stream.h"

/* Parse "[[a,b],[c,d]]" style dims of a signature into up to 4 shapes of
 * up to 4 dims.  Returns the number of shapes. */
static int parse_dims(const char *p, int64_t dims[4][4], int nd[4])
{
	int ns = 0;
	if (*p != '[')
		return 0;
	p++;
	while (*p && *p != ']' && ns < 4) {
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p != '[')
			return ns;
		p++;
		nd[ns] = 0;
		while (*p && *p != ']') {
			char *e;
			long long v = strtoll(p, &e, 10);
			if (e == p)
				return ns;
			if (nd[ns] < 4)
				dims[ns][nd[ns]++] = v;
			p = e;
			if (*p == ',')
				p++;
		}
		if (*p == ']')
			p++;
		ns++;
	}
	return ns;
}

/* Bytes per element of the index-th quoted type of types=["c10::BFloat16",
 * "c10::BFloat16",...]: the one element-type table (ev_torch_dtype), so
 * that GEMMs of int8 ("signed char") or fp8 have their data moved too. */
static double type_bytes(const char *types, int index)
{
	const char *p = types;
	for (int i = 0; p && i <= index; i++) {
		p = strchr(p, '"');
		if (!p)
			return 0;
		const char *e = strchr(p + 1, '"');
		if (!e)
			return 0;
		if (i == index) {
			char word[64];
			size_t n = (size_t)(e - p - 1);
			if (n >= sizeof word)
				return 0;
			memcpy(word, p + 1, n);
			word[n] = '\0';
			return ev_dtype_size(ev_torch_dtype(word));
		}
		p = e + 1;
	}
	return 0;
}

/* TraceLens's GEMM formulas from an op signature "aten::mm dims=[...]
 * types=[...] ...": FLOPs = 2MNK(B) (+MN if bias), bytes = MK+KN+MN (+N). */
void ev_gemm_model(const char *sig, double *gflop, double *mbytes)
{
	*gflop = *mbytes = 0;
	const char *sp = strchr(sig, ' ');
	size_t oplen = sp ? (size_t)(sp - sig) : strlen(sig);
	const char *d = strstr(sig, " dims=");
	const char *t = strstr(sig, " types=");
	if (!d)
		return;
	int64_t dims[4][4] = { { 0 } };
	int nd[4] = { 0 };
	int ns = parse_dims(d + 6, dims, nd);
	double M = 0, N = 0, K = 0, B = 1, bias = 0;
	int ia = 0, ib = 1;
#define OPIS(x) (oplen == strlen(x) && !strncmp(sig, x, oplen))
	if ((OPIS("aten::mm") || OPIS("aten::matmul")) && ns >= 2 && nd[0] == 2 && nd[1] == 2) {
		M = (double)dims[0][0]; K = (double)dims[0][1]; N = (double)dims[1][1];
	} else if (OPIS("aten::addmm") && ns >= 3 && nd[1] == 2 && nd[2] == 2) {
		M = (double)dims[1][0]; K = (double)dims[1][1]; N = (double)dims[2][1];
		bias = 1; ia = 1; ib = 2;
	} else if ((OPIS("aten::bmm") || OPIS("aten::baddbmm")) && ns >= 2) {
		int o = OPIS("aten::baddbmm") ? 1 : 0;
		if (ns < 2 + o || nd[o] != 3 || nd[o + 1] != 3)
			return;
		B = (double)dims[o][0]; M = (double)dims[o][1]; K = (double)dims[o][2]; N = (double)dims[o + 1][2];
		bias = o; ia = o; ib = o + 1;
	} else if (OPIS("aten::linear") && ns >= 2 && nd[0] >= 2 && nd[1] == 2) {
		M = 1;
		for (int i = 0; i + 1 < nd[0]; i++)
			M *= (double)dims[0][i];
		K = (double)dims[0][nd[0] - 1]; N = (double)dims[1][0];
		bias = ns >= 3 && nd[2] == 1;
	} else {
		return;
	}
#undef OPIS
	double flop = 2 * M * N * K * B + (bias ? M * N * B : 0);
	double ba = t ? type_bytes(t, ia) : 0, bb = t ? type_bytes(t, ib) : 0;
	if (ba == 0 || bb == 0)
		ba = bb = 0;
	*gflop = flop / 1e9;
	if (ba > 0)
		*mbytes = (B * (M * K * ba + K * N * bb + M * N * ba) + (bias ? N * ba : 0)) / (1024.0 * 1024.0);
}


/* One of "_" + letters + "_" at p: 1 when the three letters follow x. */
static int axis3(const char *p, char x)
{
	return p[0] == x && p[1] >= 'a' && p[1] <= 'z' && p[2] >= 'a' && p[2] <= 'z' && p[3] >= 'a' && p[3] <= 'z';
}

unsigned ev_gemm_layout(const char *name)
{
	/* Tensile: "C" + 3 axis letters, "_A" + 3, "_B" + 3 anywhere in the
	 * name; Ailk = A as stored, Alik = A transposed; Bljk / Bjlk the same
	 * for B.  Other letters are a Tensile name with no layout known. */
	for (const char *p = name ? strchr(name, 'C') : NULL; p; p = strchr(p + 1, 'C')) {
		if (!axis3(p, 'C') || p[4] != '_' || !axis3(p + 5, 'A') || p[9] != '_' || !axis3(p + 10, 'B'))
			continue;
		unsigned a = !strncmp(p + 5, "Ailk", 4) ? 1 : !strncmp(p + 5, "Alik", 4) ? 2 : 0;
		unsigned b = !strncmp(p + 10, "Bljk", 4) ? 1 : !strncmp(p + 10, "Bjlk", 4) ? 2 : 0;
		return 1 + 3 * a + b;
	}
	/* cuBLAS nvjet: the last "_" field starts with N/T for A and B. */
	if (name && !strncmp(name, "nvjet", 5)) {
		const char *u = strrchr(name, '_');
		if (u && u[1] && u[2])
			return 1 + 3 * (u[1] == 'T' ? 2u : 1u) + (u[2] == 'T' ? 2u : 1u);
	}
	return 0;
}
