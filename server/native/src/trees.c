#define _GNU_SOURCE
#include "trees.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procfs.h"
#include "util.h"

static struct trees_info info = {.kind = CONTAIN_TREE, .root = ""};
static char *root_dir;     /* <own cgroup>/execmux-<pid>-<hex> */
static char *home_dir;     /* where the host itself lives: its own cgroup */
static char *v1_pids_root; /* the v1 pids hierarchy's directory for the host, when pids are limited there */
static char *v1_pids_home;
static uint32_t pids_max;
static unsigned long next_session, next_process;

const struct trees_info *trees_info(void) { return &info; }

static int write_file(const char *dir, const char *name, const char *text) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = write(fd, text, strlen(text));
  int saved = errno;
  close(fd);
  errno = saved;
  return n == (ssize_t)strlen(text) ? 0 : -1;
}

static int read_file(const char *dir, const char *name, char *out, size_t cap) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = read(fd, out, cap - 1);
  close(fd);
  if (n < 0) return -1;
  out[n] = 0;
  return (int)n;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s) {
  char *w = s;
  for (char *r = s; *r; r++) {
    if (r[0] == '\\' && r[1] >= '0' && r[1] <= '7' && r[2] && r[3]) {
      *w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
      r += 3;
    } else {
      *w++ = *r;
    }
  }
  *w = 0;
}

/* The mount point of a hierarchy: fstype "cgroup2", or a v1 "cgroup" carrying `option` (e.g. "pids"). */
static char *mount_point(const char *fstype, const char *option) {
  FILE *f = fopen("/proc/self/mountinfo", "re");
  if (!f) return NULL;
  char *line = NULL, *found = NULL;
  size_t cap = 0;
  while (!found && getline(&line, &cap, f) > 0) {
    char *dash = strstr(line, " - ");
    if (!dash) continue;
    char type[64], source[256], options[1024] = "";
    if (sscanf(dash + 3, "%63s %255s %1023s", type, source, options) < 2 || strcmp(type, fstype)) continue;
    if (option) {
      int has = 0;
      for (char *o = strtok(options, ","); o; o = strtok(NULL, ",")) has |= !strcmp(o, option);
      if (!has) continue;
    }
    /* ID PARENT MAJ:MIN ROOT MOUNTPOINT ...: only a mount of the hierarchy's root maps paths one to one. */
    char root[4096], point[4096];
    if (sscanf(line, "%*s %*s %*s %4095s %4095s", root, point) != 2 || strcmp(root, "/")) continue;
    unescape(point);
    found = xstrdup(point);
  }
  free(line);
  fclose(f);
  return found;
}

/* Whether a comma-separated list holds `name`. */
static int list_has(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
    if (!strncmp(p, name, n) && (p[n] == ',' || p[n] == 0)) return 1;
  }
  return 0;
}

/* This process's path in a hierarchy: the "0::/x" line for v2 (controller NULL), "N:pids:/x" for v1. */
static char *own_path(const char *controller) {
  FILE *f = fopen("/proc/self/cgroup", "re");
  if (!f) return NULL;
  char *line = NULL, *found = NULL;
  size_t cap = 0;
  while (!found && getline(&line, &cap, f) > 0) {
    line[strcspn(line, "\n")] = 0;
    char *first = strchr(line, ':');
    char *second = first ? strchr(first + 1, ':') : NULL;
    if (!second) continue;
    *first = 0, *second = 0;
    const char *controllers = first + 1;
    int v2 = !strcmp(line, "0") && !*controllers;
    int match = controller ? !v2 && list_has(controllers, controller) : v2;
    if (match && !strstr(second + 1, "(deleted)")) found = xstrdup(second + 1);
  }
  free(line);
  fclose(f);
  return found;
}

static char *join2(const char *a, const char *b) {
  size_t n = strlen(a) + strlen(b) + 2;
  char *s = xmalloc(n);
  snprintf(s, n, "%s/%s", a, b);
  return s;
}

/* Whether a pid (the machine's) names a live process: asked of the machine's /proc, since the host's own may be a namespace's. */
static int pid_alive(int pid) {
  char name[32];
  snprintf(name, sizeof name, "%d", pid);
  int outer = procfs_outer();
  if (outer >= 0) return faccessat(outer, name, F_OK, 0) == 0;
  return kill(pid, 0) == 0 || errno == EPERM;
}

/* Removes a host directory of a dead host: its session and process directories first, all of them empty. */
static void remove_tree(const char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d))) {
      if (e->d_type != DT_DIR || e->d_name[0] == '.') continue;
      char *sub = join2(dir, e->d_name);
      remove_tree(sub);
      free(sub);
    }
    closedir(d);
  }
  rmdir(dir);
}

/*
 * Directories of hosts that died with everything they started (every execmux
 * process SIGKILLed at once): nobody was left to remove them, so the next
 * host in the same cgroup does, once their owner is gone and they are empty.
 * Looked at once, at start, at most 4096 entries.
 */
static void remove_stale(const char *parent) {
  DIR *d = opendir(parent);
  if (!d) return;
  struct dirent *e;
  for (int looked = 0; looked < 4096 && (e = readdir(d)); looked++) {
    int pid;
    char hex[16];
    if (e->d_type != DT_DIR || sscanf(e->d_name, "execmux-%d-%8[0-9a-f]", &pid, hex) != 2) continue;
    if (pid_alive(pid)) continue;
    char *dir = join2(parent, e->d_name);
    remove_tree(dir);
    free(dir);
  }
  closedir(d);
}

static void random_hex(char out[9]) {
  unsigned char bytes[4] = {0};
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    (void)!read(fd, bytes, sizeof bytes);
    close(fd);
  }
  snprintf(out, 9, "%02x%02x%02x%02x", bytes[0], bytes[1], bytes[2], bytes[3]);
}

/* Makes the host's v2 directory and proves it works: a child with cgroup.kill, and the right to move in and out. */
static int cgroup_v2_init(void) {
  char *mount = mount_point("cgroup2", NULL);
  char *own = own_path(NULL);
  if (!mount || !own) {
    free(mount), free(own);
    return -1;
  }
  home_dir = own[0] == '/' && own[1] == 0 ? xstrdup(mount) : join2(mount, own[0] == '/' ? own + 1 : own);
  free(mount), free(own);
  remove_stale(home_dir);
  char name[64], hex[9];
  random_hex(hex);
  snprintf(name, sizeof name, "execmux-%d-%s", (int)outer_pid_of(getpid()), hex);
  root_dir = join2(home_dir, name);
  if (mkdir(root_dir, 0755) < 0) goto fail;
  char *probe = join2(root_dir, "probe");
  int ok = mkdir(probe, 0755) == 0;
  char kill_path[4200];
  snprintf(kill_path, sizeof kill_path, "%s/cgroup.kill", probe);
  ok = ok && access(kill_path, F_OK) == 0 && write_file(probe, "cgroup.procs", "0") == 0 && write_file(home_dir, "cgroup.procs", "0") == 0;
  rmdir(probe);
  free(probe);
  if (!ok) {
    rmdir(root_dir);
    goto fail;
  }
  return 0;
fail:
  free(root_dir), free(home_dir);
  root_dir = home_dir = NULL;
  return -1;
}

/* A per-session pids.max: on v2 if the pids controller can be enabled below the host's directory, else on v1's pids hierarchy. */
static void pids_init(void) {
  char controllers[512];
  if (read_file(root_dir, "cgroup.controllers", controllers, sizeof controllers) > 0 && strstr(controllers, "pids") &&
      write_file(root_dir, "cgroup.subtree_control", "+pids") == 0) {
    info.pids_limit = 1;
    return;
  }
  char *mount = mount_point("cgroup", "pids");
  char *own = own_path("pids");
  if (mount && own) {
    v1_pids_home = own[0] == '/' && own[1] == 0 ? xstrdup(mount) : join2(mount, own[0] == '/' ? own + 1 : own);
    remove_stale(v1_pids_home);
    v1_pids_root = join2(v1_pids_home, strrchr(root_dir, '/') + 1);
    if (mkdir(v1_pids_root, 0755) == 0) {
      info.pids_limit = 1;
    } else {
      free(v1_pids_root), free(v1_pids_home);
      v1_pids_root = v1_pids_home = NULL;
    }
  }
  free(mount), free(own);
}

int trees_init(const char *want, uint32_t max) {
  pids_max = max;
  if (strcmp(want, "process-tree") != 0 && cgroup_v2_init() == 0) {
    info.kind = CONTAIN_CGROUP;
    info.root = root_dir;
    if (pids_max) pids_init();
    return 0;
  }
  if (!strcmp(want, "cgroup")) return -1;
  info.kind = CONTAIN_TREE;
  return 0;
}

char *trees_session_new(const char *session_key) {
  (void)session_key;
  if (info.kind != CONTAIN_CGROUP) return NULL;
  char name[32];
  snprintf(name, sizeof name, "s%lu", next_session++);
  char *dir = join2(root_dir, name);
  if (mkdir(dir, 0755) < 0) {
    free(dir);
    return NULL;
  }
  if (pids_max && info.pids_limit) {
    char limit[32];
    snprintf(limit, sizeof limit, "%u", pids_max);
    if (v1_pids_root) {
      char *v1 = join2(v1_pids_root, name);
      if (mkdir(v1, 0755) == 0) write_file(v1, "pids.max", limit);
      free(v1);
    } else {
      write_file(dir, "pids.max", limit);
    }
  }
  return dir;
}

char *trees_process_new(const char *session_dir) {
  if (!session_dir) return NULL;
  char name[32];
  snprintf(name, sizeof name, "p%lu", next_process++);
  char *dir = join2(session_dir, name);
  if (mkdir(dir, 0755) < 0) {
    free(dir);
    return NULL;
  }
  return dir;
}

uint64_t trees_cgroup_id(const char *dir) {
  struct stat st;
  return dir && stat(dir, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* Set while the host sits in a session's v1 pids cgroup for a spawn. */
static int in_v1_session;

static char *v1_dir_of(const char *session_dir) {
  return v1_pids_root && session_dir ? join2(v1_pids_root, strrchr(session_dir, '/') + 1) : NULL;
}

int trees_enter(const char *process_dir, const char *session_dir) {
  in_v1_session = 0;
  if (process_dir && write_file(process_dir, "cgroup.procs", "0") < 0) return -1;
  char *v1 = v1_dir_of(session_dir);
  if (v1 && write_file(v1, "cgroup.procs", "0") == 0) in_v1_session = 1;
  free(v1);
  return 0;
}

void trees_leave(void) {
  if (home_dir) write_file(home_dir, "cgroup.procs", "0");
  if (in_v1_session) write_file(v1_pids_home, "cgroup.procs", "0");
  in_v1_session = 0;
}

void trees_session_remove(const char *session_dir) {
  if (!session_dir) return;
  char *v1 = v1_dir_of(session_dir);
  if (v1) rmdir(v1);
  free(v1);
  rmdir(session_dir);
}

void signal_tree_by_proc(pid_t root, int sig) {
  pid_t *members = NULL;
  size_t count = proc_tree_members(root, &members);
  for (size_t i = 0; i < count; i++) kill(members[i], sig);
  free(members);
}

void trees_signal(const char *dir, pid_t leader, int sig) {
  if (dir) {
    char text[65536];
    if (read_file(dir, "cgroup.procs", text, sizeof text) >= 0) {
      for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) kill((pid_t)atoi(line), sig);
    }
    if (sig == SIGKILL) write_file(dir, "cgroup.kill", "1");
    return;
  }
  if (leader > 0) {
    kill(-leader, sig);
    signal_tree_by_proc(leader, sig);
  }
}

void trees_kill_session(const char *session_dir, const pid_t *leaders, int count) {
  if (session_dir) {
    write_file(session_dir, "cgroup.kill", "1");
    return;
  }
  for (int i = 0; i < count; i++) trees_signal(NULL, leaders[i], SIGKILL);
}

void trees_kill_all(void) {
  if (root_dir) write_file(root_dir, "cgroup.kill", "1");
}

int trees_populated(const char *dir) {
  char events[256];
  if (!dir || read_file(dir, "cgroup.events", events, sizeof events) < 0) return 0;
  return strstr(events, "populated 1") != NULL;
}

int trees_remove(const char *dir) {
  if (!dir) return 0;
  if (rmdir(dir) == 0 || errno == ENOENT) return 0;
  return -1;
}

void trees_dispose(void) {
  if (root_dir) remove_tree(root_dir);
  if (v1_pids_root) remove_tree(v1_pids_root);
}
