/* fuzz_api.c: libFuzzer target for the public API's entry points that
 * take caller values (the builder, plans from arrays, options, capacity
 * strings, generated graphs, name lookups); see fuzz_api.h. */
#include "fuzz_api.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_api_one(NULL, data, size);
	return 0;
}
