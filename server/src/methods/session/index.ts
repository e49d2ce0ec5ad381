/** The session family: execmux's session/* extensions, one file each. */
import { sessionList } from "./list.js";

export const sessionHandlers = {
  "session/list": sessionList,
} as const;
