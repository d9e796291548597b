/* SPDX-License-Identifier: MIT */
/*
 * classify.c - acelyzer's event classes for Flex events (its EventClass and
 * the FLEX dialect rules of categorize.py), by name and CollGroup.
 */
#include <string.h>

#include "ev/flex.h"
#include "ev/stream.h"

static const char *const class_names[EV_FC_COUNT] = {
	"OTHER", "COMPUTE_PREP", "COMPUTE_EXEC", "DATA_IN", "DATA_OUT", "SEN_DATA_CONVERT",
	"MAIU_BARRIER", "MAIU_WIREUP", "ROUNDTRIP_FLEX", "ROUNDTRIP_AIU", "MAIU_PROTOCOL_SERIAL",
	"MAIU_HDMA_PROTOCOL_WAIT_DATA", "MAIU_HDMA_PROTOCOL_WAIT_ACK", "MAIU_HDMA_PROTOCOL_SIGNAL_DATA",
	"MAIU_HDMA_PROTOCOL_SIGNAL_ACK", "MAIU_HDMA_PROTOCOL_MONITOR_NOTICE", "MAIU_HDMA_PROTOCOL_SEND_DATA",
	"MAIU_HDMA_PROTOCOL_RECV_DATA", "MAIU_P2PRDMA_PROTOCOL_SEND_DATA", "MAIU_P2PRDMA_PROTOCOL_RECV_DATA",
	"MAIU_PROTOCOL_SEND_DATA", "MAIU_PROTOCOL_RECV_DATA", "MAIU_PROTOCOL_SIGNAL_DATA",
	"MAIU_PROTOCOL_SIGNAL_ACK",
};

const char *ev_flex_class_name(unsigned c)
{
	return c < EV_FC_COUNT ? class_names[c] : NULL;
}

int ev_flex_class_parse(const char *s, size_t n, unsigned *c)
{
	for (unsigned i = 0; i < EV_FC_COUNT; i++)
		if (strlen(class_names[i]) == n && memcmp(class_names[i], s, n) == 0) {
			*c = i;
			return EV_OK;
		}
	return EV_ERR_ARG;
}

static int has(const char *h, size_t n, const char *needle)
{
	size_t m = strlen(needle);
	for (size_t i = 0; i + m <= n; i++)
		if (h[i] == needle[0] && memcmp(h + i, needle, m) == 0)
			return 1;
	return 0;
}

static int ends(const char *h, size_t n, const char *sfx)
{
	size_t m = strlen(sfx);
	return n >= m && memcmp(h + n - m, sfx, m) == 0;
}

static int equals(const char *h, size_t n, const char *s)
{
	return strlen(s) == n && memcmp(h, s, n) == 0;
}

int ev_flex_instr(const char *name, size_t n)
{
	static const char *const kw[] = { " DmaI", " Cmpt Prep", " Cmpt Exec", " DmaO" };
	for (int i = 0; i < 4; i++)
		if (has(name, n, kw[i]))
			return i;
	return -1;
}

/* "Compute of X" where X does not contain SenFusedDeviceNode. */
static int data_convert(const char *n, size_t len)
{
	for (size_t i = 0; i + 11 <= len; i++)
		if (memcmp(n + i, "Compute of ", 11) == 0)
			return !has(n + i + 11, len - i - 11, "SenFusedDeviceNode");
	return 0;
}

static unsigned classify_comm(const char *n, size_t len, unsigned c)
{
	if (has(n, len, "Host DMA") || has(n, len, "HCOLL")) {
		if (has(n, len, "Wdone DmaI") || has(n, len, "Wait for Data Avail Notice") ||
		    has(n, len, "Wait for Notice (gather notifications)") || has(n, len, "R5 Wait DATA"))
			return EV_FC_HDMA_WAIT_DATA;
		if (has(n, len, "Wait for ACK") || has(n, len, "R5 Wait ACK"))
			return EV_FC_HDMA_WAIT_ACK;
		if (has(n, len, "Send ACK Instruction") || has(n, len, "R5 Send ACK"))
			return EV_FC_HDMA_SIGNAL_ACK;
		if (has(n, len, "Send Instruction") || has(n, len, "HCOLL Signal") || has(n, len, "R5 Send DATA"))
			return EV_FC_HDMA_SIGNAL_DATA;
		if (has(n, len, "Wait for Notice") || has(n, len, "Wait for Delivery Notice"))
			return EV_FC_HDMA_MONITOR_NOTICE;
		if (c == EV_FC_DATA_OUT)
			return EV_FC_HDMA_SEND_DATA;
		if (c == EV_FC_DATA_IN)
			return EV_FC_HDMA_RECV_DATA;
		return c;
	}
	if (has(n, len, "DLM Wait"))
		return EV_FC_HDMA_WAIT_DATA;
	if (has(n, len, "Set BcList") || has(n, len, "Xseg to rank"))
		return EV_FC_MAIU_PROTOCOL_SERIAL;
	if (c == EV_FC_DATA_OUT)
		return EV_FC_P2PRDMA_SEND_DATA;
	if (c == EV_FC_DATA_IN)
		return EV_FC_P2PRDMA_RECV_DATA;
	return c;
}

unsigned ev_flex_classify(const char *n, size_t len, int collective)
{
	unsigned c = EV_FC_OTHER;
	if (ends(n, len, "Cmpt Prep"))
		c = EV_FC_COMPUTE_PREP;
	else if (ends(n, len, "Cmpt Exec"))
		c = EV_FC_COMPUTE_EXEC;
	else if (has(n, len, " DmaI"))
		c = EV_FC_DATA_IN;
	else if (has(n, len, " DmaO"))
		c = EV_FC_DATA_OUT;
	if (data_convert(n, len))
		c = EV_FC_SEN_DATA_CONVERT;
	if (equals(n, len, "PrepareAndSyncRdma"))
		c = EV_FC_MAIU_WIREUP;
	if (has(n, len, "Barrier:") || has(n, len, "barrier:"))
		c = EV_FC_MAIU_BARRIER;
	if (equals(n, len, "Flex RoundTrip"))
		c = EV_FC_ROUNDTRIP_FLEX;
	if (has(n, len, "AIU Roundtrip"))
		c = EV_FC_ROUNDTRIP_AIU;
	return collective ? classify_comm(n, len, c) : c;
}

unsigned ev_flex_refine(unsigned c, int have_bytes, uint64_t bytes)
{
	int signal = have_bytes && bytes == 128;
	if (c == EV_FC_DATA_OUT)
		return signal ? EV_FC_PROTOCOL_SIGNAL_DATA : EV_FC_PROTOCOL_SEND_DATA;
	if (c == EV_FC_DATA_IN)
		return signal ? EV_FC_PROTOCOL_SIGNAL_ACK : EV_FC_PROTOCOL_RECV_DATA;
	return c;
}

size_t ev_flex_norm_name(const char *s, size_t n, char *out)
{
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		if ((s[i] == '_' || s[i] == '-') && i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '9') {
			memcpy(out + o, "_[N]", 4);
			o += 4;
			i++;
			while (i < n && s[i] >= '0' && s[i] <= '9')
				i++;
			continue;
		}
		out[o++] = s[i++];
	}
	out[o] = '\0';
	return o;
}
