/* SPDX-License-Identifier: MIT */
/*
 * Runs a libFuzzer target's inputs without libFuzzer: each argument is a
 * file or a directory of files.  For the meson test that replays the
 * committed corpus with any compiler.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned long ran;

static void run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		exit(2);
	}
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		exit(2);
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	ran++;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		struct stat st;
		DIR *d;
		struct dirent *e;

		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "replay: %s: not found\n", argv[i]);
			return 2;
		}
		if (!S_ISDIR(st.st_mode)) {
			run_file(argv[i]);
			continue;
		}
		d = opendir(argv[i]);
		while (d && (e = readdir(d))) {
			char path[4096];

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			run_file(path);
		}
		if (d)
			closedir(d);
	}
	if (!ran) {
		fprintf(stderr, "replay: no input found\n");
		return 2;
	}
	printf("replay: %lu inputs, all properties held\n", ran);
	return 0;
}
