/*
 * outfile.c — atomic output files.
 *
 * Each output goes to a temporary file in the target's folder and is renamed
 * over the target only after it was written and flushed completely, so a
 * failed or interrupted run never leaves a truncated header behind for a
 * firmware build to pick up.  A run with several outputs finishes them all
 * before it publishes any, so a late failure (a picture Graphviz cannot
 * render) leaves none of them, not a header beside last run's JSON.
 *
 * Rerunning on an unchanged model is the common case (a build step), and
 * creating, filling and renaming a file over its twin was most of what a
 * run spent in the kernel (ext4 also starts writing the new file out on a
 * rename over an old one).  So the bytes are first compared with the
 * target's as they come: while they match nothing is written, and an output
 * found identical is left in place, its modification time set to now as a
 * rewrite would (make's rules see a fresh output).  At the first byte that
 * differs the temporary is created, the matching start copied into it from
 * the target, and writing goes on there.  Either way the target only ever
 * holds a whole old or a whole new output.
 *
 * A target that exists but is no regular file (/dev/null, a FIFO) is
 * written straight: renaming over it would replace the device itself.
 */
#define _GNU_SOURCE             /* fopencookie: the comparing stream */
#include "emit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK ((size_t)1 << 16)

/* The stream under an ArOutFile's FILE. */
struct ArOutSink {
	const char *path;           /* the ArOutFile's */
	char *tmp;                  /* NULL until the temporary exists */
	int old;                    /* the target while bytes match, else -1 */
	int fd;                     /* the temporary while open, else -1 */
	off_t same;                 /* bytes written, all equal to the target's */
	bool identical;             /* closed: the target holds the output */
	char *buf;                  /* CHUNK bytes for reading the target */
};

static void sink_free(struct ArOutSink *s)
{
	if (s->old >= 0)
		close(s->old);
	if (s->fd >= 0)
		close(s->fd);
	if (s->tmp)
		unlink(s->tmp);
	free(s->tmp), free(s->buf);
	free(s);
}

static bool write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		p += k, n -= (size_t)k;
	}
	return true;
}

/* Reads n bytes of the target at `at` into s->buf; fewer only at its end. */
static size_t read_old(struct ArOutSink *s, off_t at, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t k = pread(s->old, s->buf + got, n - got, at + (off_t)got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	return got;
}

static bool close_tmp(struct ArOutSink *s)
{
	int rc = close(s->fd);
	s->fd = -1;
	return rc == 0;
}

/* The output differs from the target (or there is none): the temporary,
 * holding the target's first s->same bytes, which match the output so
 * far; the target is read no more. */
static bool diverge(struct ArOutSink *s)
{
	mode_t mask;
	s->tmp = ar_xmalloc(strlen(s->path) + 16);
	sprintf(s->tmp, "%s.tmpXXXXXX", s->path);
	if ((s->fd = mkstemp(s->tmp)) < 0) {
		free(s->tmp);
		s->tmp = NULL;
		return false;
	}
	/* mkstemp makes 0600 files; outputs get the usual umask'd mode. */
	mask = umask(0);
	umask(mask);
	fchmod(s->fd, 0666 & ~mask);
	for (off_t at = 0; at < s->same;) {
		size_t want = s->same - at < (off_t)CHUNK ?
			      (size_t)(s->same - at) : CHUNK;
		if (read_old(s, at, want) != want ||
		    !write_all(s->fd, s->buf, want))
			return false;
		at += (off_t)want;
	}
	if (s->old >= 0)
		close(s->old);
	s->old = -1;
	return true;
}

/* buf's n bytes are the target's from s->same on. */
static bool matches(struct ArOutSink *s, const char *buf, size_t n)
{
	for (size_t done = 0; done < n;) {
		size_t want = n - done < CHUNK ? n - done : CHUNK;
		if (read_old(s, s->same + (off_t)done, want) != want ||
		    memcmp(s->buf, buf + done, want))
			return false;
		done += want;
	}
	return true;
}

static ssize_t sink_write(void *cookie, const char *buf, size_t n)
{
	struct ArOutSink *s = cookie;
	if (s->old >= 0) {
		/* Only whole matching writes are skipped, so the temporary
		 * starts with bytes the target has. */
		if (matches(s, buf, n)) {
			s->same += (off_t)n;
			return (ssize_t)n;
		}
		if (!diverge(s))
			return -1;
	}
	return write_all(s->fd, buf, n) ? (ssize_t)n : -1;
}

/* At fclose: a target longer than the output is not the output. */
static int sink_close(void *cookie)
{
	struct ArOutSink *s = cookie;
	struct stat st;
	if (s->old >= 0) {
		if (fstat(s->old, &st) == 0 && st.st_size == s->same) {
			s->identical = true;
			return 0;
		}
		if (!diverge(s))
			return EOF;
	}
	return close_tmp(s) ? 0 : EOF;
}

/* The folder of path takes new files (a changed output's temporary). */
static bool folder_writable(const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) + (slash == path) : 1;
	char *dir = ar_xmalloc(n + 1);
	bool ok;
	memcpy(dir, slash ? path : ".", n);
	dir[n] = '\0';
	ok = access(dir, W_OK | X_OK) == 0;
	free(dir);
	return ok;
}

int ar_out_open(ArOutFile *o, const char *path, ArError *err)
{
	static const cookie_io_functions_t io = {NULL, sink_write, NULL,
						 sink_close};
	struct ArOutSink *s;
	struct stat st;
	bool exists;
	int e;

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
			return ar_fail(err, AR_EXIT_USAGE, "%s: cannot write: %s",
				       path, strerror(errno));
		o->path = ar_xstrdup(path);
		return AR_OK;
	}
	o->path = ar_xstrdup(path);
	s = ar_xcalloc(1, sizeof *s);
	s->path = o->path;
	s->buf = ar_xmalloc(CHUNK);
	s->fd = -1;
	s->old = exists ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	if ((s->old < 0 && !diverge(s)) || !folder_writable(path) ||
	    !(o->f = fopencookie(s, "w", io))) {
		e = errno;
		sink_free(s);
		free(o->path);
		o->path = NULL;
		return ar_fail(err, AR_EXIT_USAGE, "%s: cannot write: %s", path,
			       strerror(e));
	}
	o->sink = s;
	return AR_OK;
}

int ar_out_finish(ArOutFile *o, ArError *err)
{
	int rc = AR_OK;
	if (!o->path) {
		if (fflush(o->f) != 0)
			rc = ar_fail(err, AR_EXIT_USAGE, "stdout: write failed: "
				     "%s", strerror(errno));
		return rc;
	}
	if (ferror(o->f) | (fclose(o->f) != 0)) {
		rc = ar_fail(err, AR_EXIT_USAGE, "%s: write failed: %s",
			     o->path, strerror(errno));
		o->f = NULL;
		ar_out_abort(o);
		return rc;
	}
	o->f = NULL;
	return rc;
}

int ar_out_publish(ArOutFile *o, ArError *err)
{
	struct ArOutSink *s = o->sink;
	int rc = AR_OK;
	/* A target that cannot take a new time is replaced by a copy. */
	if (s && s->identical && futimens(s->old, NULL) != 0 &&
	    (!diverge(s) || !close_tmp(s)))
		rc = ar_fail(err, AR_EXIT_USAGE, "%s: write failed: %s",
			     o->path, strerror(errno));
	if (!rc && s && s->tmp) {
		if (rename(s->tmp, s->path) != 0)
			rc = ar_fail(err, AR_EXIT_USAGE, "%s: cannot rename "
				     "into place: %s", o->path, strerror(errno));
		else
			free(s->tmp), s->tmp = NULL;
	}
	ar_out_abort(o);
	return rc;
}

int ar_out_commit(ArOutFile *o, ArError *err)
{
	int rc = ar_out_finish(o, err);
	return rc ? rc : ar_out_publish(o, err);
}

/* Also the end of a published output: its temporary is gone by then. */
void ar_out_abort(ArOutFile *o)
{
	if (o->f && o->path)
		fclose(o->f);
	if (o->sink)
		sink_free(o->sink);
	free(o->path);
	memset(o, 0, sizeof *o);
}
