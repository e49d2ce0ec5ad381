/** The daemon's file system as the console uses it, over the fs/* methods of the console's connection. */
import { ErrorCode, RpcRequestError, type ExecmuxClient } from "@execmux/client";

export interface RemoteEntry {
  readonly name: string;
  readonly path: string;
  readonly isDirectory: boolean;
  readonly isFile: boolean;
  /** Undefined when its metadata could not be read (it vanished, or no permission). */
  readonly size: number | undefined;
  readonly modifiedAtMs: number | undefined;
}

/** Metadata for at most this many entries of a listing (each is a request); the rest show no size. */
const METADATA_LIMIT = 500;
const METADATA_CONCURRENCY = 8;

export const joinPath = (directory: string, name: string) => `${directory.replace(/\/+$/, "")}/${name}`;
export const parentOf = (path: string) => path.replace(/\/+$/, "").replace(/\/[^/]*$/, "") || "/";
export const baseName = (path: string) => path.replace(/\/+$/, "").split("/").pop() || "/";

/** A `file://` URI (the daemon may answer with one) as a native path. */
export function toNativePath(pathOrUri: string): string {
  return pathOrUri.startsWith("file://") ? decodeURIComponent(new URL(pathOrUri).pathname) : pathOrUri;
}

export const isNotFound = (error: unknown) => error instanceof RpcRequestError && error.code === ErrorCode.NotFound;

export class RemoteFiles {
  constructor(private readonly client: ExecmuxClient) {}

  /**
   * Where a process of this session is now: for a terminal, its foreground
   * job's folder (a shell at its prompt, with its `cd`s; a shell that
   * `sh -c` started is a child of the process the daemon knows), else the
   * process's own. Read from /proc on the daemon's machine; undefined when
   * that cannot be read.
   */
  async workingDirectory(processId: string): Promise<string | undefined> {
    const info = (await this.client.list()).find((process) => process.processId === processId);
    if (!info?.pid) return undefined;
    const foreground = await this.foregroundGroup(info.pid);
    for (const pid of foreground && foreground !== info.pid ? [foreground, info.pid] : [info.pid]) {
      try {
        return toNativePath((await this.client.request("fs/canonicalize", { path: `/proc/${pid}/cwd` })).path);
      } catch {
        // Gone (a job that just ended) or not ours to read: try the next.
      }
    }
    return undefined;
  }

  /** The foreground process group of `pid`'s terminal (its leader's pid), from /proc/<pid>/stat; undefined without a terminal. */
  private async foregroundGroup(pid: number): Promise<number | undefined> {
    try {
      const { dataBase64 } = await this.client.request("fs/readFile", { path: `/proc/${pid}/stat` });
      const stat = atob(dataBase64);
      // After "pid (comm)": state ppid pgrp session tty_nr tpgid ...; comm may hold spaces and parentheses.
      const tpgid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[5]);
      return Number.isInteger(tpgid) && tpgid > 0 ? tpgid : undefined;
    } catch {
      return undefined;
    }
  }

  async home(): Promise<string> {
    const info = await this.client.request("environment/info", null).catch(() => undefined);
    return info?.userHomeDir ? toNativePath(info.userHomeDir) : "/";
  }

  async list(directory: string): Promise<RemoteEntry[]> {
    const { entries } = await this.client.request("fs/readDirectory", { path: directory });
    const sorted = entries
      .map((entry) => ({ name: entry.fileName, isDirectory: entry.isDirectory, isFile: entry.isFile }))
      .sort((a, b) => Number(b.isDirectory) - Number(a.isDirectory) || a.name.localeCompare(b.name));
    const result: RemoteEntry[] = sorted.map((entry) => ({ ...entry, path: joinPath(directory, entry.name), size: undefined, modifiedAtMs: undefined }));
    let next = 0;
    const worker = async () => {
      for (let index = next++; index < Math.min(result.length, METADATA_LIMIT); index = next++) {
        const entry = result[index]!;
        try {
          const metadata = await this.client.request("fs/getMetadata", { path: entry.path });
          result[index] = { ...entry, size: metadata.size, modifiedAtMs: metadata.modifiedAtMs };
        } catch {
          // Gone since the listing, or unreadable: shown without a size.
        }
      }
    };
    await Promise.all(Array.from({ length: METADATA_CONCURRENCY }, worker));
    return result;
  }

  async size(path: string): Promise<number> {
    const metadata = await this.client.request("fs/getMetadata", { path });
    if (!metadata.isFile) throw new Error(`${path} is not a regular file`);
    return metadata.size;
  }

  async exists(path: string): Promise<boolean> {
    try {
      await this.client.request("fs/getMetadata", { path, followSymlinks: false });
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }

  /** `name`, or `name (1).ext`, `name (2).ext`, ... : the first that does not exist in `directory` yet. */
  async freeName(directory: string, name: string): Promise<string> {
    const dot = name.lastIndexOf(".");
    const [stem, extension] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ""];
    for (let attempt = 0; ; attempt++) {
      const candidate = attempt === 0 ? name : `${stem} (${attempt})${extension}`;
      if (!(await this.exists(joinPath(directory, candidate)))) return candidate;
    }
  }

  async remove(path: string): Promise<void> {
    await this.client.request("fs/remove", { path, recursive: false, force: true });
  }

  /** Whether the daemon streams file writes (fs/open mode "replace" and fs/writeBlock, upstream's `fileWriteStreaming`). */
  async streamsWrites(): Promise<boolean> {
    const info = await this.client.request("environment/info", null).catch(() => undefined);
    return info?.capabilities.fileWriteStreaming === true;
  }
}
