/* fuzz_csv.c: libFuzzer target for the CSV readers: the graph loader
 * and the table of published points.  The input is the nodes table (also
 * read as points), a NUL byte and the edges table; see fuzz_entry.h. */
#include "fuzz_dir.h"
#include "fuzz_entry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_csv_one(fuzz_dir(), fuzz_tag(), data, size);
	return 0;
}
