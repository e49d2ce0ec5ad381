/*
 * The files of a persistent host's address in the daemon's state directory:
 * PATH (the socket daemons connect to), PATH.lock (held while a host serves
 * PATH: one host per address) and PATH.log (the host's stderr from the
 * moment it holds the lock; before, the stderr of the daemon that started
 * it).
 *
 * A host that exits removes them (the log only when empty: it says why a
 * host ended). One that was SIGKILLed cannot; the next host to start in the
 * same directory removes those of every address whose lock nobody holds,
 * as the next host in a cgroup removes the cgroups of dead hosts.
 */
#ifndef EXECMUX_ADDRESS_H
#define EXECMUX_ADDRESS_H

/* Takes PATH.lock and makes PATH.log stderr: the lock's descriptor, or -1 when another host holds it (or it cannot be made). */
int address_lock(const char *socket_path);

/* Removes the files of the directory's other addresses whose lock nobody holds (at most 4096 entries looked at). */
void address_sweep(const char *socket_path);

/* Removes PATH, PATH.log when empty, and PATH.lock, whose lock this host holds until it exits. */
void address_release(const char *socket_path);

#endif
