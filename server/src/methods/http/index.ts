/** The http family: http/request, whose streamed bodies arrive as http/request/bodyDelta. */
import { httpRequest } from "./request.js";

export const httpHandlers = {
  "http/request": httpRequest,
} as const;
