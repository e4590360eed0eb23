/* fuzz_common.h: what the fuzz entries share (fuzz_entry.h, fuzz_api.h):
 * the input's size limit, the failure report, the byte reader and the
 * fixed graph.  Public API only, so that tests/test_api.c, which sees the
 * library as a caller does, can include fuzz_api.h. */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dansched.h"

/* Inputs longer than this are cut: the loaders are linear and the work
 * after loading is not the point. */
#define FUZZ_MAX_INPUT ((size_t)1 << 16)

static inline void fuzz_die(const char *what, const char *msg)
{
	fprintf(stderr, "fuzz: %s: %s\n", what, msg);
	abort();
}

/* The input read a byte at a time; zeros past its end. */
typedef struct fuzz_bytes {
	const uint8_t *d;
	size_t len, at;
} fuzz_bytes;

static inline unsigned fuzz_byte(fuzz_bytes *b)
{
	return b->at < b->len ? b->d[b->at++] : 0u;
}

/* The fixed graph the plan fuzzer reads plans for: a COPY_IN -> MOVE ->
 * MATMUL -> COPY -> vector -> COPY -> COPY_OUT chain whose L1 buffers
 * (3 x 2048 bytes, all needed at node 15) do not fit together, so valid
 * plans must spill.  11 buffers, 35 nodes. */
#define FUZZ_PLAN_GRAPH                                                       \
	"{\"Nodes\":["                                                        \
	"{\"Id\":0,\"Op\":\"ALLOC\",\"BufId\":0,\"Size\":2048,\"Type\":\"L1\"}," \
	"{\"Id\":1,\"Op\":\"ALLOC\",\"BufId\":1,\"Size\":2048,\"Type\":\"L1\"}," \
	"{\"Id\":2,\"Op\":\"COPY_IN\",\"Pipe\":\"MTE2\",\"Cycles\":300,"       \
	"\"Bufs\":[0]},"                                                      \
	"{\"Id\":3,\"Op\":\"COPY_IN\",\"Pipe\":\"MTE2\",\"Cycles\":300,"       \
	"\"Bufs\":[1]},"                                                      \
	"{\"Id\":4,\"Op\":\"ALLOC\",\"BufId\":2,\"Size\":128,\"Type\":\"L0A\"}," \
	"{\"Id\":5,\"Op\":\"ALLOC\",\"BufId\":3,\"Size\":128,\"Type\":\"L0B\"}," \
	"{\"Id\":6,\"Op\":\"MOVE\",\"Pipe\":\"MTE1\",\"Cycles\":31,"           \
	"\"Bufs\":[2,0]},"                                                    \
	"{\"Id\":7,\"Op\":\"MOVE\",\"Pipe\":\"MTE1\",\"Cycles\":31,"           \
	"\"Bufs\":[3,1]},"                                                    \
	"{\"Id\":8,\"Op\":\"ALLOC\",\"BufId\":4,\"Size\":256,\"Type\":\"L0C\"}," \
	"{\"Id\":9,\"Op\":\"MATMUL\",\"Pipe\":\"CUBE\",\"Cycles\":128,"        \
	"\"Bufs\":[4,3,2]},"                                                  \
	"{\"Id\":10,\"Op\":\"ALLOC\",\"BufId\":5,\"Size\":512,\"Type\":\"UB\"}," \
	"{\"Id\":11,\"Op\":\"COPY\",\"Pipe\":\"FIXP\",\"Cycles\":41,"          \
	"\"Bufs\":[5,4]},"                                                    \
	"{\"Id\":12,\"Op\":\"ALLOC\",\"BufId\":6,\"Size\":512,\"Type\":\"UB\"}," \
	"{\"Id\":13,\"Op\":\"EXP\",\"Pipe\":\"VECTOR\",\"Cycles\":60,"         \
	"\"Bufs\":[6,5]},"                                                    \
	"{\"Id\":14,\"Op\":\"ALLOC\",\"BufId\":7,\"Size\":2048,\"Type\":\"L1\"}," \
	"{\"Id\":15,\"Op\":\"COPY\",\"Pipe\":\"MTE3\",\"Cycles\":271,"         \
	"\"Bufs\":[7,6]},"                                                    \
	"{\"Id\":16,\"Op\":\"COPY_OUT\",\"Pipe\":\"MTE3\",\"Cycles\":100,"     \
	"\"Bufs\":[7]},"                                                      \
	"{\"Id\":17,\"Op\":\"ALLOC\",\"BufId\":8,\"Size\":128,\"Type\":\"L0A\"}," \
	"{\"Id\":18,\"Op\":\"MOVE\",\"Pipe\":\"MTE1\",\"Cycles\":31,"          \
	"\"Bufs\":[8,0]},"                                                    \
	"{\"Id\":19,\"Op\":\"ALLOC\",\"BufId\":9,\"Size\":256,\"Type\":\"L0C\"}," \
	"{\"Id\":20,\"Op\":\"ALLOC\",\"BufId\":10,\"Size\":128,\"Type\":\"L0B\"}," \
	"{\"Id\":21,\"Op\":\"MOVE\",\"Pipe\":\"MTE1\",\"Cycles\":31,"          \
	"\"Bufs\":[10,1]},"                                                   \
	"{\"Id\":22,\"Op\":\"MATMUL\",\"Pipe\":\"CUBE\",\"Cycles\":128,"       \
	"\"Bufs\":[9,10,8]},"                                                 \
	"{\"Id\":23,\"Op\":\"COPY_OUT\",\"Pipe\":\"FIXP\",\"Cycles\":263,"     \
	"\"Bufs\":[9]},"                                                      \
	"{\"Id\":24,\"Op\":\"FREE\",\"BufId\":0,\"Size\":2048,\"Type\":\"L1\"}," \
	"{\"Id\":25,\"Op\":\"FREE\",\"BufId\":1,\"Size\":2048,\"Type\":\"L1\"}," \
	"{\"Id\":26,\"Op\":\"FREE\",\"BufId\":2,\"Size\":128,\"Type\":\"L0A\"}," \
	"{\"Id\":27,\"Op\":\"FREE\",\"BufId\":3,\"Size\":128,\"Type\":\"L0B\"}," \
	"{\"Id\":28,\"Op\":\"FREE\",\"BufId\":4,\"Size\":256,\"Type\":\"L0C\"}," \
	"{\"Id\":29,\"Op\":\"FREE\",\"BufId\":5,\"Size\":512,\"Type\":\"UB\"}," \
	"{\"Id\":30,\"Op\":\"FREE\",\"BufId\":6,\"Size\":512,\"Type\":\"UB\"}," \
	"{\"Id\":31,\"Op\":\"FREE\",\"BufId\":7,\"Size\":2048,\"Type\":\"L1\"}," \
	"{\"Id\":32,\"Op\":\"FREE\",\"BufId\":8,\"Size\":128,\"Type\":\"L0A\"}," \
	"{\"Id\":33,\"Op\":\"FREE\",\"BufId\":9,\"Size\":256,\"Type\":\"L0C\"}," \
	"{\"Id\":34,\"Op\":\"FREE\",\"BufId\":10,\"Size\":128,\"Type\":\"L0B\"}" \
	"],\"Edges\":["                                                       \
	"[0,2],[1,3],[2,6],[4,6],[3,7],[5,7],[6,9],[7,9],[8,9],[9,11],"       \
	"[10,11],[11,13],[12,13],[13,15],[14,15],[15,16],[2,18],[17,18],"     \
	"[15,18],[3,21],[20,21],[18,21],[18,22],[21,22],[19,22],[22,23],"             \
	"[0,24],[6,24],[18,24],[1,25],[7,25],[21,25],[4,26],[9,26],"          \
	"[5,27],[9,27],[8,28],[11,28],[10,29],[13,29],[12,30],[15,30],"       \
	"[14,31],[16,31],[17,32],[22,32],[19,33],[23,33],[20,34],[22,34]"     \
	"]}"

#endif
