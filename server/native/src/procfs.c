#define _GNU_SOURCE
#include "procfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util.h"

static int outer_proc = -1;

void procfs_set_outer(int dirfd) { outer_proc = dirfd; }
int procfs_outer(void) { return outer_proc; }

static int open_in_proc(int proc_dir, const char *relative) {
  if (proc_dir >= 0) return openat(proc_dir, relative, O_RDONLY | O_CLOEXEC);
  char path[256];
  snprintf(path, sizeof path, "/proc/%s", relative);
  return open(path, O_RDONLY | O_CLOEXEC);
}

static ssize_t read_small(int fd, char *buf, size_t cap) {
  ssize_t total = 0;
  while ((size_t)total < cap - 1) {
    ssize_t n = read(fd, buf + total, cap - 1 - (size_t)total);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    total += n;
  }
  buf[total < 0 ? 0 : total] = 0;
  return total;
}

int read_proc_stat(int proc_dir, pid_t pid, struct proc_stat *out) {
  char relative[64], text[1024];
  snprintf(relative, sizeof relative, "%d/stat", (int)pid);
  int fd = open_in_proc(proc_dir, relative);
  if (fd < 0) return -1;
  ssize_t n = read_small(fd, text, sizeof text);
  close(fd);
  char *close_paren = n > 0 ? strrchr(text, ')') : NULL;
  if (!close_paren) return -1;
  /* After "(comm) ": state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime priority nice threads itrealvalue starttime */
  unsigned long long start = 0;
  int ppid, pgrp, session;
  char state;
  if (sscanf(close_paren + 2, "%c %d %d %d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu", &state, &ppid, &pgrp, &session, &start) != 5) return -1;
  *out = (struct proc_stat){.state = state, .ppid = ppid, .pgrp = pgrp, .session = session, .start_time = start};
  return 0;
}

static void push(pid_t **v, size_t *len, size_t *cap, pid_t pid) {
  if (*len == *cap) {
    *cap = *cap ? *cap * 2 : 32;
    *v = xrealloc(*v, *cap * sizeof **v);
  }
  (*v)[(*len)++] = pid;
}

size_t proc_tree_members(pid_t root, pid_t **out) {
  pid_t *found = NULL, *pending = NULL;
  size_t found_len = 0, found_cap = 0, pending_len = 0, pending_cap = 0;
  push(&pending, &pending_len, &pending_cap, root);
  while (pending_len > 0) {
    pid_t pid = pending[--pending_len];
    int seen = 0;
    for (size_t i = 0; i < found_len && !seen; i++) seen = found[i] == pid;
    if (seen) continue;
    push(&found, &found_len, &found_cap, pid);
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *tasks = opendir(path);
    if (!tasks) continue;
    struct dirent *task;
    while ((task = readdir(tasks))) {
      if (task->d_name[0] == '.') continue;
      char children_path[512], text[65536];
      snprintf(children_path, sizeof children_path, "%s/%s/children", path, task->d_name);
      int fd = open(children_path, O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      read_small(fd, text, sizeof text);
      close(fd);
      for (char *word = strtok(text, " \n"); word; word = strtok(NULL, " \n")) push(&pending, &pending_len, &pending_cap, (pid_t)atoi(word));
    }
    closedir(tasks);
  }
  free(pending);
  *out = found;
  return found_len;
}

pid_t outer_pid_of(pid_t pid) {
  if (outer_proc < 0) return pid;
  int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  if (pidfd < 0) return pid;
  char relative[64], text[2048];
  snprintf(relative, sizeof relative, "self/fdinfo/%d", pidfd);
  int fd = openat(outer_proc, relative, O_RDONLY | O_CLOEXEC);
  pid_t outer = pid;
  if (fd >= 0) {
    read_small(fd, text, sizeof text);
    close(fd);
    char *nspid = strstr(text, "NSpid:");
    if (nspid) outer = (pid_t)strtol(nspid + 6, NULL, 10);
  }
  close(pidfd);
  return outer > 0 ? outer : pid;
}
