// simdjson-parse.cc — the parse floor for bench/parse-floor.sh: DOM-parse each FILE with
// simdjson (Debian's libsimdjson-dev; a bench-only dependency, not needed by make or make check).
// Prints "FILE BYTES SECONDS" per file: the best of -n N parses (default 1) of the file, read
// into memory first (simdjson::padded_string::load), so the time is parsing alone.
// Build: g++ -O2 -std=c++17 -o /tmp/kprof-bench/simdjson-parse bench/simdjson-parse.cc -lsimdjson
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <simdjson.h>

int main(int argc, char **argv)
{
	int runs = 1, i = 1;
	if (argc > 2 && !strcmp(argv[1], "-n")) {
		runs = atoi(argv[2]);
		i = 3;
	}
	if (i >= argc || runs < 1) {
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
		double best = 1e30;
		for (int r = 0; r < runs; r++) {
			auto t0 = std::chrono::steady_clock::now();
			simdjson::dom::element doc;
			auto err = parser.parse(json).get(doc);
			auto t1 = std::chrono::steady_clock::now();
			if (err) {
				fprintf(stderr, "simdjson-parse: error: %s: %s\n", argv[i],
					simdjson::error_message(err));
				return 3;
			}
			double s = std::chrono::duration<double>(t1 - t0).count();
			if (s < best)
				best = s;
		}
		printf("%s %zu %.6f\n", argv[i], json.size(), best);
	}
	return 0;
}
