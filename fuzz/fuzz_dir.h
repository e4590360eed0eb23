/* fuzz_dir.h: where the targets whose loaders read files put them.
 *
 * Files go to /dev/shm where there is one (memory: many times faster than
 * a disk's /tmp for these small writes), else /tmp, named with the
 * process id so that parallel fuzzers do not meet; the entries remove them
 * after each input, so nothing is left behind (libFuzzer ends with _Exit,
 * without atexit handlers, so a folder per process would stay). */
#ifndef FUZZ_DIR_H
#define FUZZ_DIR_H

#include <stdio.h>
#include <unistd.h>

static const char *fuzz_dir(void)
{
	static const char *dir;
	if (!dir)
		dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	return dir;
}

static const char *fuzz_tag(void)
{
	static char tag[64];
	if (!tag[0])
		snprintf(tag, sizeof tag, "ds_fuzz_%ld_", (long)getpid());
	return tag;
}

#endif
