/*
 * devdb.h — device datasheet table: dense peaks per precision, clocks, DRAM bandwidth.
 */
#ifndef KPROF_DEVDB_H
#define KPROF_DEVDB_H

#include "kprof/arena.h"
#include "kprof/dtype.h"

struct kp_diag;
struct kp_devdb_pat;

/* One dense datasheet peak and the SM clock it assumes. */
struct kp_peak {
	double flop_per_s; /* dense peak, FLOP/s (OP/s for int8); 0 = unknown */
	int clk_ref_mhz;   /* SM clock the peak was computed at; 0 unknown (never scaled) */
	const char *flag;  /* "datasheet" "secondary" "derived" "unverified" "observed";
				NULL when the peak is unknown */
};

/* One device entry.  All strings live in the db's arena. */
struct kp_device {
	const char *name;   /* canonical, e.g. "NVIDIA H100 80GB HBM3" */
	const char **exact; /* names matched exactly (case-insensitive) */
	int nexact;
	const char **substr; /* anchored substrings, tried longest first */
	int nsubstr;
	int sms;
	int clk_max_mhz;
	double mem_gb;
	double mem_bw_byte_per_s; /* datasheet DRAM bandwidth, B/s */
	int mem_clk_mhz;          /* memory clock the bandwidth assumes (0 unknown) */
	int bus_bits;
	int no_clock_scaling; /* firmware-capped parts (H20) */
	struct kp_peak peak[PREC_N];
	const char *source;     /* spec-sheet URL(s) and date */
	const char *confidence; /* overall flag */
	int line;               /* line of the entry in its file */
	int match_sms;          /* >0: applies only to parts reporting this SM/CU count */
	int cc_major, cc_minor; /* 'cc': computeMajor.computeMinor as deviceProperties
					report it (ROCm: the gfx target's, gfx90a 9.0); 0.0 unknown */
	/* Flags of the numbers above (static strings, as kp_peak.flag; never NULL). */
	const char *sms_flag;
	const char *clk_flag; /* clk_max_mhz */
	const char *mem_flag; /* mem_gb */
	const char *bw_flag;  /* mem_bw_byte_per_s */
	const char *mem_clk_flag;
	const char *bus_flag;
	double l2_bytes;     /* L2 cache, bytes (the table's l2_mb x 2^20); 0 unknown */
	const char *l2_flag; /* l2_bytes */
	/* Links (doc/devices.md): per direction, B/s; 0 unknown. */
	const char *host_link;     /* "PCIe 5.0 x16", "NVLink-C2C"; NULL unknown */
	double host_bw_byte_per_s; /* host <-> device (HtoD, DtoH) */
	const char *host_flag;
	double peer_bw_byte_per_s; /* device <-> device peer copies (NVLink, Infinity Fabric) */
	const char *peer_flag;
};

/* The path a memcpy or memset crosses (kernrole_mempath()), and so the peak it is held to. */
enum kp_mempath {
	MEMPATH_DRAM = 0, /* kernels, memsets: device memory */
	MEMPATH_DTOD,     /* device-to-device copies: each byte read and written in DRAM */
	MEMPATH_HOST,     /* HtoD, DtoH: the host link */
	MEMPATH_PEER,     /* PtoP: the peer link, else the host link (PCIe peer-to-peer) */
	MEMPATH_UNKNOWN,  /* HtoH and kinds kprof does not know: no peak */
};

struct kp_devdb {
	struct kp_arena arena;
	struct kp_device *dev;
	int ndev;
	const char *origin;       /* "built-in" or the file path */
	struct kp_devdb_pat *pat; /* all entries' patterns, longest first (devdb.c) */
	int npat;
};

/* What a trace's deviceProperties say about a device; 0 = not recorded. */
struct kp_devprops {
	int sms;                /* numSms (CUs on AMD) */
	long long mem_bytes;    /* totalGlobalMem */
	int cc_major, cc_minor; /* computeMajor, computeMinor */
};

#define DEVDB_MAX_CAND 8

/* Entries that match a device's properties (devdb_match_props). */
struct kp_devmatch {
	const struct kp_device *dev;                  /* the pick: cand[0] when same_peaks */
	const struct kp_device *cand[DEVDB_MAX_CAND]; /* the first candidates, table order */
	int ncand;                                    /* all candidates (may exceed the array) */
	int same_peaks;                               /* every candidate has cand[0]'s peaks,
							 clocks and DRAM bandwidth */
};

/* the text of device_db/, compiled into the binary by make */
extern const char devdb_builtin_text[];

/* Prototypes */
/*
 * Parse a device table text.  Errors are "ORIGIN:LINE: error: ..." in @d with
 * status 3.  Returns 0 or -1.
 */
int devdb_parse(struct kp_devdb *db, const char *text, size_t len, const char *origin,
		struct kp_diag *d);
int devdb_load_builtin(struct kp_devdb *db, struct kp_diag *d);
/* Read and parse @path (status 4 when unreadable, 3 when malformed). */
int devdb_load_file(struct kp_devdb *db, const char *path, struct kp_diag *d);
/*
 * The table a command should use: @path (--device-db) if not NULL, else
 * $KPROF_DEVICE_DB if set and not empty, else the built-in table.  Errors as
 * devdb_load_file().
 */
int devdb_load_default(struct kp_devdb *db, const char *path, struct kp_diag *d);
/*
 * Find the entry for a reported device name: exact names first, then anchored
 * substrings longest first ("L40S" before "L40" before "L4"; "H20" whole word only).
 * @how receives "exact" or "pattern 'H100'" (static or arena string).  NULL if none.
 */
const struct kp_device *devdb_match(const struct kp_devdb *db, const char *name, const char **how);
/*
 * devdb_match() that also knows the part's SM/CU count (deviceProperties
 * numSms; <= 0 unknown): entries with match_sms set are skipped when @sms is
 * known and differs ("AMD Instinct MI250X/MI250" is 110 CUs per GCD on an
 * MI250X, 104 on an MI250).  With @sms unknown such an entry still matches and
 * @how says "exact (SM count not checked)".
 */
const struct kp_device *devdb_match_sms(const struct kp_devdb *db, const char *name, int sms,
					const char **how);
/*
 * A name that does not identify a part: empty (ROCm 7 traces) or "AMD Radeon Graphics" (some
 * ROCm builds, and every AMD APU).  Such devices are matched by their properties instead.
 */
int devdb_generic_name(const char *name);
/*
 * Match by properties alone: entries whose sms, cc and memory agree with @q (memory: @q's
 * bytes in GiB within 90%..103% of the entry's marketed mem_gb, which covers ECC and
 * reserved memory; 40 and 80 GB parts stay apart).  All three must be known on both sides.
 * Fills @m; returns the number of candidates.  @m->dev is set only when every candidate
 * has the same peaks (e.g. MI210 and one MI250 GCD): otherwise the caller must not guess.
 */
int devdb_match_props(const struct kp_devdb *db, const struct kp_devprops *q,
		      struct kp_devmatch *m);
/* The device a trace ran on, as devdb_choose() found it. */
struct kp_devchoice {
	const struct kp_device *dev; /* the entry; NULL when none */
	const char *name;            /* the name looked up: --device's, else the trace's; NULL none */
	const char *how;             /* how it matched: devdb_match_sms()'s, or @buf; NULL */
	const char *warning;         /* @buf when matching by properties failed; NULL */
	char buf[1024];
};
/*
 * The one way every command picks the device entry: @override (--device NAME) by name alone;
 * else the trace's @name with its properties @q (NULL: none recorded), by name and SM count
 * (devdb_match_sms()), then, for a generic name (devdb_generic_name()), by properties
 * (devdb_match_props()) with a warning in @c when none or several different entries match.
 * @c's strings point into @c, @db, @override or @name.
 */
void devdb_choose(const struct kp_devdb *db, const char *override, const char *name,
		  const struct kp_devprops *q, struct kp_devchoice *c);
/*
 * Entries a user-typed @name could mean: those with @name as a word of their canonical
 * name or of one of their exact names ("H100": the SXM5, PCIe and NVL parts).  The first
 * @cap go to @out; returns how many there are.  @sms > 0 leaves out entries whose
 * match_sms differs (devdb_match_sms()).
 */
int devdb_candidates(const struct kp_devdb *db, const char *name, int sms,
		     const struct kp_device **out, int cap);
/*
 * When a user-typed @name (kprof devices NAME, --device NAME) matches an entry by pattern
 * while it could mean several (devdb_candidates()), the note saying which entry was picked,
 * why, and how to choose another, into @buf: "'H100' could mean 3 entries: ...".  Returns 1
 * then, else 0 (exact names and names of one entry need no note).
 */
int devdb_pick_note(const struct kp_devdb *db, const char *name, int sms, char *buf, size_t cap);
/* The entry whose canonical name is @name (case-insensitive), or NULL. */
const struct kp_device *devdb_find(const struct kp_devdb *db, const char *name);
/*
 * Clock-adjusted dense peak, FLOP/s:  peak × min(f, clk_ref) / clk_ref
 * (doc/devices.md §4.2; never divided by the max clock).  f <= 0 means "the clock
 * the peak assumes" (no adjustment); no_clock_scaling parts ignore f.
 * 0 when unknown.
 */
double devdb_peak_flops(const struct kp_device *dev, enum kp_prec prec, double sm_clock_mhz);
/* DRAM bandwidth, B/s; scaled by mem_clock/mem_clk_ref only when mem_clock_mhz > 0 and lower. */
double devdb_peak_bw(const struct kp_device *dev, double mem_clock_mhz);
/*
 * Peak bandwidth of a memory path, B/s: DRAM for MEMPATH_DRAM, half of it for
 * MEMPATH_DTOD (the bytes of a copy are read and written), the host link, the peer
 * link (else the host link).  0 when unknown.
 */
double devdb_path_bw(const struct kp_device *dev, enum kp_mempath path);
void devdb_free(struct kp_devdb *db);

#endif /* KPROF_DEVDB_H */
