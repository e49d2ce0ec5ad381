// What an executable needs from the machine it runs on, read from its ELF
// header: its architecture, and whether it asks for a dynamic loader (and so
// for the libc that loader comes with). The prebuilt process host must ask
// for none: then it runs on any Linux of its architecture, glibc or musl.
import { closeSync, openSync, readSync } from "node:fs";

const PT_INTERP = 3;
const PT_DYNAMIC = 2;
/** e_machine values, by Node's names for the architectures. */
const MACHINES = { 62: "x64", 183: "arm64", 243: "riscv64" };

/** { arch, static } of a 64-bit little-endian ELF executable; throws on anything else. */
export function elfInfo(path) {
  const fd = openSync(path, "r");
  try {
    const header = Buffer.alloc(64);
    readSync(fd, header, 0, 64, 0);
    if (header.readUInt32BE(0) !== 0x7f454c46) throw new Error(`${path} is not an ELF file`);
    if (header[4] !== 2 || header[5] !== 1) throw new Error(`${path} is not a 64-bit little-endian ELF file`);
    const machine = header.readUInt16LE(18);
    const phoff = Number(header.readBigUInt64LE(32));
    const phentsize = header.readUInt16LE(54);
    const phnum = header.readUInt16LE(56);
    const table = Buffer.alloc(phentsize * phnum);
    readSync(fd, table, 0, table.length, phoff);
    const types = Array.from({ length: phnum }, (_, index) => table.readUInt32LE(index * phentsize));
    return {
      arch: MACHINES[machine] ?? `e_machine ${machine}`,
      static: !types.includes(PT_INTERP) && !types.includes(PT_DYNAMIC),
    };
  } finally {
    closeSync(fd);
  }
}
