/** The filesystem family: fs/* requests, one file each, as upstream's exec-server serves them. */
import { fsCanonicalize } from "./canonicalize.js";
import { fsClose } from "./close.js";
import { fsCopy } from "./copy.js";
import { fsCreateDirectory } from "./create-directory.js";
import { fsGetMetadata } from "./get-metadata.js";
import { fsOpen } from "./open.js";
import { fsReadBlock } from "./read-block.js";
import { fsReadDirectory } from "./read-directory.js";
import { fsReadFile } from "./read-file.js";
import { fsRemove } from "./remove.js";
import { fsWalk } from "./walk.js";
import { fsWatchMissing } from "./watch-missing.js";
import { fsWriteBlock } from "./write-block.js";
import { fsWriteFile } from "./write-file.js";

export const fsHandlers = {
  "fs/readFile": fsReadFile,
  "fs/writeFile": fsWriteFile,
  "fs/createDirectory": fsCreateDirectory,
  "fs/getMetadata": fsGetMetadata,
  "fs/canonicalize": fsCanonicalize,
  "fs/readDirectory": fsReadDirectory,
  "fs/walk": fsWalk,
  "fs/remove": fsRemove,
  "fs/copy": fsCopy,
  "fs/open": fsOpen,
  "fs/readBlock": fsReadBlock,
  "fs/close": fsClose,
  "fs/writeBlock": fsWriteBlock,
  "fs/watchMissing": fsWatchMissing,
} as const;
