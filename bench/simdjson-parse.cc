// simdjson-parse.cc — the parse floor for bench/parse-floor.sh and bench/host-speed.sh: DOM-parse
// each FILE with simdjson (Debian's libsimdjson-dev; a bench-only dependency, not needed by make
// or make check).  Each file is read into memory first (simdjson::padded_string::load), then
// parsed 1 + N times with the one parser, so the times are parsing alone.
// Prints "FILE BYTES FIRST_S WARM_S" per file:
//   FIRST_S  the first parse in this process: the parser allocates its tape and string buffers
//            for the document's size and the pages are faulted in while it parses (the "cold"
//            parse that bench/RESULTS.md's parse-floor entries before 2026-11-28 called
//            "simdjson parse");
//   WARM_S   the best of the N parses after it, parser and document reused: the warmed DOM parse
//            (-n N, default 0: then WARM_S = FIRST_S).
// Build: g++ -O2 -std=c++17 -o /tmp/kprof-bench/simdjson-parse bench/simdjson-parse.cc -lsimdjson
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <simdjson.h>

static int parse_once(simdjson::dom::parser &parser, const simdjson::padded_string &json,
		      const char *path, double *s)
{
	auto t0 = std::chrono::steady_clock::now();
	simdjson::dom::element doc;
	auto err = parser.parse(json).get(doc);
	auto t1 = std::chrono::steady_clock::now();
	if (err) {
		fprintf(stderr, "simdjson-parse: error: %s: %s\n", path,
			simdjson::error_message(err));
		return 3;
	}
	*s = std::chrono::duration<double>(t1 - t0).count();
	return 0;
}

int main(int argc, char **argv)
{
	int runs = 0, i = 1;
	if (argc > 2 && !strcmp(argv[1], "-n")) {
		runs = atoi(argv[2]);
		i = 3;
	}
	if (i >= argc || runs < 0) {
		fprintf(stderr, "usage: simdjson-parse [-n N] FILE...\n");
		return 2;
	}
	simdjson::dom::parser parser;
	for (; i < argc; i++) {
		simdjson::padded_string json;
		if (simdjson::padded_string::load(argv[i]).get(json)) {
			fprintf(stderr, "simdjson-parse: error: cannot read '%s'\n", argv[i]);
			return 4;
		}
		double first, best = 1e30, s;
		if (parse_once(parser, json, argv[i], &first))
			return 3;
		for (int r = 0; r < runs; r++) {
			if (parse_once(parser, json, argv[i], &s))
				return 3;
			if (s < best)
				best = s;
		}
		printf("%s %zu %.6f %.6f\n", argv[i], json.size(), first, runs ? best : first);
	}
	return 0;
}
