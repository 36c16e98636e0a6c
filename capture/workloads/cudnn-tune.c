/*
 * cudnn-tune.c — which of cuDNN's engine configurations a case keeps: the heuristics' order,
 * the fallback list without engines already offered, the fastest timed one (cudnn-tune.h).
 */
#include "workloads/cudnn-tune.h"

#include <math.h>
#include <stdio.h>

/* cudnnBackendNumericalNote_t */
enum { NOTE_TENSOR_CORE = 0, NOTE_DOWN_CONVERT_INPUTS = 1 };

int tune_skip_notes(const int *notes, int n, int strict)
{
	for (int i = 0; i < n; i++)
		if (notes[i] == NOTE_DOWN_CONVERT_INPUTS ||
		    (strict && notes[i] == NOTE_TENSOR_CORE))
			return 1;
	return 0;
}

static int cap(const struct tune *t)
{
	return t->max > 0 && t->max < TUNE_MAX ? t->max : TUNE_MAX;
}

int tune_wants(const struct tune *t, int64_t engine, int src)
{
	if (t->n >= cap(t))
		return 0;
	if (src == TUNE_FALLBACK && engine >= 0)
		for (int i = 0; i < t->n; i++)
			if (t->c[i].engine == engine)
				return 0;
	return 1;
}

int tune_add(struct tune *t, int64_t engine, int src, int rank)
{
	if (t->n >= cap(t))
		return -1;
	t->c[t->n] = (struct tune_cand){ .engine = engine, .src = src, .rank = rank, .ms = -1 };
	return t->n++;
}

int tune_reps(double one_ms)
{
	if (!(one_ms > 0)) /* not measured (or NaN): the most */
		return 20;
	double r = ceil(1.0 / one_ms);
	return r < 1 ? 1 : r > 20 ? 20 : (int)r;
}

int tune_best(const struct tune *t)
{
	int b = -1;
	for (int i = 0; i < t->n; i++)
		if (t->c[i].ms >= 0 && (b < 0 || t->c[i].ms < t->c[b].ms))
			b = i;
	return b;
}

static const char *src_name(int src)
{
	return src == TUNE_FALLBACK ? "fallback" : "heuristics";
}

char *tune_describe(const struct tune *t, int best, char *buf, size_t cap_)
{
	if (best < 0 || best >= t->n) {
		snprintf(buf, cap_, "no engine");
		return buf;
	}
	const struct tune_cand *k = &t->c[best], *f = &t->c[0];
	int timed = 0;
	for (int i = 0; i < t->n; i++)
		timed += t->c[i].ms >= 0;
	if (k->ms < 0)
		snprintf(buf, cap_, "engine %lld (%s #%d, untimed: the only candidate)",
			 (long long)k->engine, src_name(k->src), k->rank);
	else if (best == 0 || f->ms < 0)
		snprintf(buf, cap_, "engine %lld (%s #%d, fastest of %d timed: %.4g ms)",
			 (long long)k->engine, src_name(k->src), k->rank, timed, k->ms);
	else
		snprintf(buf, cap_,
			 "engine %lld (%s #%d, fastest of %d timed: %.4g ms; %s #%d engine %lld "
			 "%.4g ms)",
			 (long long)k->engine, src_name(k->src), k->rank, timed, k->ms,
			 src_name(f->src), f->rank, (long long)f->engine, f->ms);
	return buf;
}
