/*
 * outfile.c — atomic output files.
 *
 * Each output goes to a temporary file in the target's folder and is renamed
 * over the target only after it was written and flushed completely, so a
 * failed or interrupted run never leaves a truncated header behind for a
 * firmware build to pick up.  A run with several outputs finishes them all
 * before it publishes any, so a late failure (a picture Graphviz cannot
 * render) leaves none of them, not a header beside last run's JSON.
 * A target that exists and is no regular file (/dev/null, a FIFO, a
 * terminal) is written in place: a rename would replace the device node
 * itself (as root, `--json /dev/null` turned /dev/null into a file), and
 * without write access to its folder the temporary cannot be made at all.
 */
#include "emit.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ar_out_open(ArOutFile *o, const char *path, ArError *err)
{
	struct stat st;
	bool exists;
	int fd;
	memset(o, 0, sizeof *o);
	if (!strcmp(path, "-")) {
		o->f = stdout;
		return AR_OK;
	}
	exists = stat(path, &st) == 0;
	if (exists && S_ISDIR(st.st_mode))
		return ar_fail(err, AR_EXIT_USAGE, "%s is a directory, not an "
			       "output file", path);
	if (exists && !S_ISREG(st.st_mode)) {
		if (!(o->f = fopen(path, "w")))
			return ar_fail(err, AR_EXIT_USAGE, "%s: cannot write: "
				       "%s", path, strerror(errno));
		o->path = ar_xstrdup(path);
		return AR_OK;
	}
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
		/* stdout stays open; a device written in place is closed. */
		bool bad = fflush(o->f) != 0 || ferror(o->f);
		if (o->f != stdout) {
			bad |= fclose(o->f) != 0;
			o->f = NULL;
		}
		if (bad)
			rc = ar_fail(err, AR_EXIT_USAGE, "%s: write failed: %s",
				     o->path ? o->path : "stdout",
				     strerror(errno));
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
	} else if (o->f && o->f != stdout) {
		fclose(o->f);       /* a device written in place */
	}
	free(o->path), free(o->tmp);
	memset(o, 0, sizeof *o);
}
