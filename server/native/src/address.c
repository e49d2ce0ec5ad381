/* The files of a persistent host's address: see address.h. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "address.h"

#define LOCK_SUFFIX ".lock"

/* PATH + suffix into `out`: 0, or -1 when it does not fit. */
static int with_suffix(char *out, size_t size, const char *path, const char *suffix) {
  int n = snprintf(out, size, "%s%s", path, suffix);
  return n >= 0 && (size_t)n < size ? 0 : -1;
}

/*
 * Locks the file at `lock_path`, the one the path names when the lock is
 * taken: a host that removes a stale lock file does so while holding its
 * lock, so a lock taken on a file no longer at the path is let go and the
 * new file is tried.
 */
static int lock_at(const char *lock_path) {
  for (int tries = 0; tries < 8; tries++) {
    int fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
      close(fd);
      return -1;
    }
    struct stat held, named;
    if (fstat(fd, &held) == 0 && stat(lock_path, &named) == 0 && held.st_dev == named.st_dev && held.st_ino == named.st_ino) return fd;
    close(fd);
  }
  return -1;
}

int address_lock(const char *socket_path) {
  char lock_path[4200], log_path[4200];
  if (with_suffix(lock_path, sizeof lock_path, socket_path, LOCK_SUFFIX) < 0 || with_suffix(log_path, sizeof log_path, socket_path, ".log") < 0) return -1;
  int fd = lock_at(lock_path);
  if (fd < 0) return -1;
  /* The log is opened only under the lock, so a sweep never removes one a starting host is about to write. */
  int log = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (log >= 0) {
    dup2(log, STDERR_FILENO);
    close(log);
  }
  return fd;
}

/* PATH.log, when it is empty. */
static void remove_empty_log(const char *socket_path) {
  char log_path[4200];
  struct stat st;
  if (with_suffix(log_path, sizeof log_path, socket_path, ".log") == 0 && lstat(log_path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0) unlink(log_path);
}

void address_sweep(const char *socket_path) {
  char directory[4200];
  if (with_suffix(directory, sizeof directory, socket_path, "") < 0) return;
  char *slash = strrchr(directory, '/');
  if (!slash) return;
  *slash = 0;
  const char *own = slash + 1;
  DIR *d = opendir(directory[0] ? directory : "/");
  if (!d) return;
  struct dirent *e;
  for (int looked = 0; looked < 4096 && (e = readdir(d)); looked++) {
    size_t length = strlen(e->d_name);
    size_t suffix = strlen(LOCK_SUFFIX);
    if (strncmp(e->d_name, "host-", 5) != 0 || length <= suffix || strcmp(e->d_name + length - suffix, LOCK_SUFFIX) != 0) continue;
    if (strncmp(e->d_name, own, length - suffix) == 0 && own[length - suffix] == 0) continue;
    char lock_path[4200], base[4200];
    if (snprintf(lock_path, sizeof lock_path, "%s/%s", directory, e->d_name) >= (int)sizeof lock_path) continue;
    memcpy(base, lock_path, strlen(lock_path) - suffix);
    base[strlen(lock_path) - suffix] = 0;
    int fd = lock_at(lock_path);
    if (fd < 0) continue; /* a live host serves that address */
    unlink(base);
    remove_empty_log(base);
    unlink(lock_path);
    close(fd);
  }
  closedir(d);
}

void address_release(const char *socket_path) {
  char lock_path[4200];
  unlink(socket_path);
  remove_empty_log(socket_path);
  if (with_suffix(lock_path, sizeof lock_path, socket_path, LOCK_SUFFIX) == 0) unlink(lock_path);
}
