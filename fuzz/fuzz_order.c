/* fuzz_order.c: libFuzzer target for every entry point that takes an
 * order: orders of a small fixed graph, topological or not, and plans
 * with spills made from them and changed, go to the placer, DLR, CPE, the
 * replay, the spill renumbering and the public API; see fuzz_entry.h. */
#include "fuzz_dir.h"
#include "fuzz_entry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_order_one(ds_heap_std(), fuzz_dir(), fuzz_tag(), data, size);
	return 0;
}
