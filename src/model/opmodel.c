/*
 * opmodel.c — FLOPs and compulsory bytes of one recorded PyTorch op (pure math, no I/O).
 * The formulas and slot tables are in doc/flops-bytes.md; section numbers refer to it.
 * This file owns the dispatch: it finds an op's row in the families' tables (the GEMM,
 * convolution, attention, pointwise and norm files src/opmodel-*.c), checks its slots, runs
 * the row's model and applies Inductor's own counts; the shared readers are in
 * src/model/opmodel-args.c, the shared types in include/kprof/opmodel-internal.h.
 */
#include "kprof/opmodel-internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * The families, each with its rows sorted by name (strcmp order) for bsearch; a name is in
 * one family at most.  Composites without a model (aten::linear, matmul, conv2d,
 * scaled_dot_product_attention, _scaled_dot_product_attention_math, dropout's autograd
 * nodes, ...) are absent: their children carry the work (§5).
 */
static const struct opm_family *const families[] = {
	&opm_family_gemm,      &opm_family_conv, &opm_family_attn,
	&opm_family_pointwise, &opm_family_norm,
};

static int cmp_model(const void *key, const void *elem)
{
	return strcmp(key, ((const struct model *)elem)->name);
}

/* The row of @name and its family (in *@fam); NULL when no family models it */
static const struct model *lookup(const char *name, const struct opm_family **fam)
{
	if (name == NULL || (strncmp(name, "aten::", 6) != 0 && strncmp(name, "kprof::", 7) != 0))
		return NULL;
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		const struct model *m = bsearch(name, families[i]->models, families[i]->n,
						sizeof(struct model), cmp_model);
		if (m != NULL) {
			*fam = families[i];
			return m;
		}
	}
	return NULL;
}

int opmodel_causal_slot(const char *name)
{
	const struct opm_family *fam;
	const struct model *m = lookup(name, &fam);

	if (m == NULL || fam->causal_slot == NULL)
		return -1;
	return fam->causal_slot(m);
}

enum kp_model_class opmodel_class(const char *name)
{
	const struct opm_family *fam;
	const struct model *m = lookup(name, &fam);

	return m != NULL ? m->cls : MODEL_NONE;
}

/* Every slot well-formed: dims present and >= 0, TensorList elements present. */
static const char *check_slots(const struct kp_op_in *in)
{
	int i, j;

	if (in->nslots < 0 || (in->nslots > 0 && in->slots == NULL))
		return "op has a negative slot count or no slots array";
	for (i = 0; i < in->nslots; i++) {
		const struct kp_slot *s = &in->slots[i];

		if (s->ndim < 0 || (s->ndim > 0 && s->dims == NULL) || s->ndim > MAXDIM)
			return "op slot has a bad dims array";
		for (j = 0; j < s->ndim; j++) {
			if (s->dims[j] == KP_DIM_BAD)
				return "dimension out of range in the op's Input Dims";
			if (s->dims[j] < 0)
				return "negative dimension in the op's Input Dims";
		}
		if (s->nlist < 0 || (s->nlist > 0 && s->list == NULL))
			return "op TensorList slot has no elements";
	}
	return NULL;
}

/*
 * Inductor's kernel_flop / kernel_num_gb win (PA).  bytes = round(gb * 1e9);
 * a value beyond int64 is dropped.
 */
static void apply_inductor(const struct kp_op_in *in, struct kp_cost *c)
{
	if (in->kernel_flop >= 0)
		c->flops = in->kernel_flop;
	if (in->kernel_num_gb >= 0 && in->kernel_num_gb * 1e9 < 9.2e18)
		c->bytes = llround(in->kernel_num_gb * 1e9);
}

int opmodel_eval(const struct kp_op_in *in, struct kp_cost *out)
{
	const struct opm_family *fam;
	const struct model *m = lookup(in->name, &fam);
	int inductor = in->kernel_flop >= 0 || in->kernel_num_gb >= 0;
	const char *bad;
	int rc;

	memset(out, 0, sizeof(*out));
	out->cls = MODEL_NONE;
	out->flops = -1;
	out->bytes = -1;
	out->move_bytes = -1;
	out->math_bytes = -1;
	out->dtype = DT_NONE;
	out->prec = PREC_NONE;

	if (m == NULL) {
		if (!inductor)
			return 1;
		/* an Inductor kernel: its own counts are the model */
		out->cls = in->kernel_flop > 0 ? MODEL_PRIMARY : MODEL_SECONDARY;
		out->family = "inductor";
		apply_inductor(in, out);
		return 0;
	}

	out->cls = m->cls;
	out->family = m->family;
	/* secondary ops model bytes only: FLOPs stay -1 so primary totals stay FC-comparable */
	bad = check_slots(in);
	if (bad != NULL) {
		out->note = bad;
		rc = -1;
	} else {
		rc = m->eval(in, m, out);
		if (m->cls == MODEL_SECONDARY)
			out->flops = -1;
		if (rc == 0 && (out->flops == OVF || out->bytes == OVF)) {
			out->note = "shape product overflows int64";
			rc = -1;
		}
	}
	out->prec = dtype_prec(out->dtype);
	if (rc != 0 || out->bytes < 0 || out->move_bytes < 0 || out->math_bytes < 0)
		out->move_bytes = out->math_bytes = -1;
	if (rc != 0) {
		out->flops = -1;
		out->bytes = -1;
	} else if (out->bytes == UNK && out->note == NULL) {
		out->note = "tensor of unknown dtype: bytes unknown";
	}
	if (inductor) {
		apply_inductor(in, out);
		out->move_bytes = out->math_bytes = -1;
		if (rc != 0 && out->flops >= 0 && out->bytes >= 0) {
			out->note = NULL;
			rc = 0;
		}
	}
	return rc;
}

int opmodel_signature(const struct kp_op_in *in, char *buf, size_t cap)
{
	const struct opm_family *fam;
	const struct model *m;

	if (!in || !in->name || !buf || cap == 0 || check_slots(in) != NULL)
		return -1;
	if (opmodel_sig_carrier(in->name))
		return opm_attn_top_signature(in, buf, cap);
	if ((m = lookup(in->name, &fam)) == NULL || m->cls != MODEL_PRIMARY)
		return -1;
	return fam->signature != NULL ? fam->signature(in, m, buf, cap) : -1;
}
