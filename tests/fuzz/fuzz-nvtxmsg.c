/*
 * fuzz-nvtxmsg.c — libFuzzer harness for capture/intercept/nvtxmsg.c: the input bytes, cut at
 * the first NUL, are an NVTX range's message as any program may write one, parsed by
 * nvtxmsg_parse() as hostops.c does for every range of a capture.
 *
 * Checked beyond the sanitizers: the result contract of hostops.h (0 an op message, 1 not one,
 * -1 with a reason); a parsed message's name non-empty, shorter than its buffer and ending
 * where the first field begins; every count within its bound; sizes >= 0; types and texts
 * NUL-terminated in their slots; one type and one text per input unless the lists were past
 * a bound, in which case none is kept.
 * Build and run: tests/fuzz/run.sh nvtxmsg.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "intercept/hostops.h"

#define FUZZ_NAME "fuzz-nvtxmsg"
#include "fuzz.h"

static void check_parsed(const char *msg, const struct kp_nvtx_msg *m)
{
	size_t len = strnlen(m->name, sizeof(m->name));
	CHECK(len > 0 && len < sizeof(m->name));
	CHECK(!strncmp(msg, m->name, len) && msg[len] == ',' && msg[len + 1] == ' ');
	CHECK(m->nslots >= 0 && m->nslots <= NVTX_MAX_SLOTS);
	CHECK(m->ninput_ids >= 0 && m->ninput_ids <= NVTX_MAX_SLOTS);
	CHECK(m->ndtypes >= 0 && m->ndtypes <= NVTX_MAX_SLOTS);
	CHECK(m->nconc >= 0 && m->nconc <= NVTX_MAX_SLOTS);
	if (m->over)
		CHECK(!m->has_sizes && !m->nslots && !m->ninput_ids && !m->ndtypes && !m->nconc);
	if (!m->has_sizes)
		CHECK(m->nslots == 0 && m->ndtypes == 0 && m->nconc == 0);
	if (m->ndtypes)
		CHECK(m->ndtypes == m->nslots);
	if (m->nconc)
		CHECK(m->nconc == m->nslots);
	for (int i = 0; i < m->nslots; i++) {
		CHECK(m->slot[i].nd >= 0 && m->slot[i].nd <= NVTX_MAX_DIMS);
		for (int d = 0; d < m->slot[i].nd; d++)
			CHECK(m->slot[i].d[d] >= 0);
	}
	for (int i = 0; i < m->ndtypes; i++)
		CHECK(memchr(m->dtype[i], 0, sizeof(m->dtype[i])) != NULL);
	for (int i = 0; i < m->nconc; i++)
		CHECK(memchr(m->conc[i], 0, sizeof(m->conc[i])) != NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *msg = malloc(size + 1);
	if (!msg)
		return 0;
	memcpy(msg, data, size);
	msg[size] = '\0';
	struct kp_nvtx_msg *m = malloc(sizeof(*m));
	if (!m) {
		free(msg);
		return 0;
	}
	memset(m, 0xa5, sizeof(*m)); /* what the parser leaves unset must not be read */
	char why[128] = "";
	int rc = nvtxmsg_parse(msg, m, why, sizeof(why));
	CHECK(rc >= -1 && rc <= 1);
	if (rc < 0)
		CHECK(why[0] != '\0' && memchr(why, 0, sizeof(why)));
	else if (rc == 0)
		check_parsed(msg, m);
	free(m);
	free(msg);
	return 0;
}
