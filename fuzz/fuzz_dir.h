/* fuzz_dir.h: one temporary folder per fuzzing process, for the targets
 * whose loaders read files.  Created at first use, removed at exit; in
 * /dev/shm where there is one (memory, many times faster than a disk's
 * /tmp for these small writes), else in /tmp. */
#ifndef FUZZ_DIR_H
#define FUZZ_DIR_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fuzz_dir[64];

static void fuzz_dir_remove(void)
{
	DIR *d = opendir(fuzz_dir);
	if (d) {
		struct dirent *de;
		while ((de = readdir(d))) {
			char p[600];
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			snprintf(p, sizeof p, "%s/%s", fuzz_dir, de->d_name);
			remove(p);
		}
		closedir(d);
	}
	rmdir(fuzz_dir);
}

static const char *fuzz_dir_get(void)
{
	static const char *const tmpl[] = {"/dev/shm/ds_fuzz_XXXXXX",
					   "/tmp/ds_fuzz_XXXXXX"};
	if (fuzz_dir[0])
		return fuzz_dir;
	for (size_t i = 0; i < 2; i++) {
		snprintf(fuzz_dir, sizeof fuzz_dir, "%s", tmpl[i]);
		if (mkdtemp(fuzz_dir)) {
			atexit(fuzz_dir_remove);
			return fuzz_dir;
		}
	}
	perror("mkdtemp");
	abort();
}

#endif
