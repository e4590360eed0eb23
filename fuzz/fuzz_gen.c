/* fuzz_gen.c: libFuzzer target for generated graphs planned: a kind, a
 * size, a seed and capacities (tight ones among them) for
 * dansched_generate, and options for dansched_schedule, its plan checked
 * against dansched_evaluate; see fuzz_api.h (fuzz_gen_one). */
#include "fuzz_api.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_gen_one(NULL, data, size);
	return 0;
}
