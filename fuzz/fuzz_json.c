/* fuzz_json.c: libFuzzer target for the JSON graph loader.
 * The input is the file's text; see fuzz_entry.h. */
#include "fuzz_entry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_json_one(data, size);
	return 0;
}
