/*
 * outfile.c — atomic output files.
 *
 * Each output goes to a temporary file in the target's folder and is renamed
 * over the target only after it was written and flushed completely, so a
 * failed or interrupted run never leaves a truncated header behind for a
 * firmware build to pick up.  A run with several outputs finishes them all
 * before it publishes any, so a late failure (a picture Graphviz cannot
 * render) leaves none of them, not a header beside last run's JSON.
 */
#include "emit.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ar_out_open(ArOutFile *o, const char *path, ArError *err)
{
	struct stat st;
	int fd;
	memset(o, 0, sizeof *o);
	if (!strcmp(path, "-")) {
		o->f = stdout;
		return AR_OK;
	}
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return ar_fail(err, AR_EXIT_USAGE, "%s is a directory, not an "
			       "output file", path);
	o->path = ar_xstrdup(path);
	o->tmp = ar_xmalloc(strlen(path) + 16);
	sprintf(o->tmp, "%s.tmpXXXXXX", path);
	fd = mkstemp(o->tmp);
	if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
		int e = errno;
		if (fd >= 0) {
			close(fd);
			unlink(o->tmp);
		}
		free(o->path), free(o->tmp);
		o->path = o->tmp = NULL;
		return ar_fail(err, AR_EXIT_USAGE, "%s: cannot write: %s", path,
			       strerror(e));
	}
	/* mkstemp makes 0600 files; outputs get the usual umask'd mode. */
	{
		mode_t mask = umask(0);
		umask(mask);
		fchmod(fd, 0666 & ~mask);
	}
	return AR_OK;
}

int ar_out_finish(ArOutFile *o, ArError *err)
{
	int rc = AR_OK;
	if (!o->tmp) {
		if (fflush(o->f) != 0)
			rc = ar_fail(err, AR_EXIT_USAGE, "stdout: write failed: "
				     "%s", strerror(errno));
		return rc;
	}
	if (ferror(o->f) | (fclose(o->f) != 0)) {
		rc = ar_fail(err, AR_EXIT_USAGE, "%s: write failed: %s",
			     o->path, strerror(errno));
		unlink(o->tmp);
		free(o->path), free(o->tmp);
		memset(o, 0, sizeof *o);
		return rc;
	}
	o->f = NULL;
	return rc;
}

int ar_out_publish(ArOutFile *o, ArError *err)
{
	int rc = AR_OK;
	if (o->tmp && rename(o->tmp, o->path) != 0) {
		rc = ar_fail(err, AR_EXIT_USAGE, "%s: cannot rename into "
			     "place: %s", o->path, strerror(errno));
		unlink(o->tmp);
	}
	free(o->path), free(o->tmp);
	memset(o, 0, sizeof *o);
	return rc;
}

int ar_out_commit(ArOutFile *o, ArError *err)
{
	int rc = ar_out_finish(o, err);
	return rc ? rc : ar_out_publish(o, err);
}

void ar_out_abort(ArOutFile *o)
{
	if (o->tmp) {
		if (o->f)
			fclose(o->f);
		unlink(o->tmp);
	}
	free(o->path), free(o->tmp);
	memset(o, 0, sizeof *o);
}
