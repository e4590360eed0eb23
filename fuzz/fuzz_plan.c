/* fuzz_plan.c: libFuzzer target for the result-file readers and the
 * replay.  The input is the schedule, a NUL byte, the memory file, a NUL
 * byte and the spill file, read for a small fixed graph; see
 * fuzz_entry.h. */
#include "fuzz_dir.h"
#include "fuzz_entry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_plan_one(fuzz_dir(), fuzz_tag(), data, size);
	return 0;
}
