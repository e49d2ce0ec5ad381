/**
 * Saves a stream of bytes as a download without holding it in the page.
 *
 * Where the browser allows a service worker (https, or http on localhost)
 * and can transfer streams, the stream is handed to download-sw.js, which
 * answers a download request with it: the browser writes it to disk as it
 * comes, with its own download progress, and pulls the next block only when
 * it has room (backpressure all the way to the daemon).
 *
 * Elsewhere (plain http to another machine) the blocks become a Blob the
 * browser keeps, out of the page's JavaScript heap, until it is saved.
 */
const WORKER_URL = "download-sw.js";
const WORKER_SCOPE = "download/";
/** Chrome stops an idle service worker after 30 s; a message from the page keeps it for the download. */
const KEEPALIVE_MS = 10_000;
/** How long what a finished download used (its frame, its Blob URL) stays before it is let go. */
const LINGER_MS = 60_000;

export interface SaveRequest {
  readonly name: string;
  /** Sent as the download's length, so the browser shows its progress. */
  readonly size?: number;
  readonly mediaType?: string;
  readonly stream: ReadableStream<Uint8Array>;
}

/** How a streamed download ended, as the worker saw it. */
type Outcome = { outcome: "done" } | { outcome: "cancelled" } | { outcome: "failed"; message: string };

export async function saveStream(request: SaveRequest): Promise<"streamed" | "blob"> {
  const worker = await downloadWorker();
  if (worker && (await streamThroughWorker(worker, request))) return "streamed";
  await saveAsBlob(request);
  return "blob";
}

let workerPromise: Promise<ServiceWorker | undefined> | undefined;

/** The registered download worker once active, or undefined where there can be none. */
function downloadWorker(): Promise<ServiceWorker | undefined> {
  return (workerPromise ??= (async () => {
    if (!("serviceWorker" in navigator) || !isSecureContext) return undefined;
    try {
      const registration = await navigator.serviceWorker.register(WORKER_URL, { scope: WORKER_SCOPE });
      const worker = registration.active ?? registration.installing ?? registration.waiting;
      if (!worker) return undefined;
      if (worker.state !== "activated") {
        await new Promise<void>((resolve, reject) => {
          worker.addEventListener("statechange", () => {
            if (worker.state === "activated") resolve();
            else if (worker.state === "redundant") reject(new Error("the download worker was replaced"));
          });
        });
      }
      return worker;
    } catch {
      return undefined;
    }
  })());
}

async function streamThroughWorker(worker: ServiceWorker, request: SaveRequest): Promise<boolean> {
  const id = crypto.randomUUID();
  const channel = new MessageChannel();
  const ready = new Promise<void>((resolve) => (channel.port1.onmessage = () => resolve()));
  const { stream, ...headers } = request;
  try {
    worker.postMessage({ type: "download", id, ...headers, stream }, [stream as unknown as Transferable, channel.port2]);
  } catch {
    return false; // this browser cannot transfer streams
  }
  await ready;
  const frame = document.createElement("iframe");
  frame.hidden = true;
  frame.src = `${WORKER_SCOPE}${id}/${encodeURIComponent(request.name)}`;
  document.body.append(frame);
  const keepalive = setInterval(() => worker.postMessage({ type: "keepalive" }), KEEPALIVE_MS);
  // The worker says when the browser has taken the last byte, or why not.
  const ended = await new Promise<Outcome>((resolve) => {
    channel.port1.onmessage = (event) => resolve(event.data as Outcome);
  });
  clearInterval(keepalive);
  channel.port1.close();
  // The download belongs to the frame that asked for it: the frame stays a while, as the Blob URL below does.
  setTimeout(() => frame.remove(), LINGER_MS);
  if (ended.outcome === "cancelled") throw new Error("cancelled in the browser");
  if (ended.outcome === "failed") throw new Error(ended.message);
  return true;
}

async function saveAsBlob(request: SaveRequest): Promise<void> {
  const parts: Blob[] = [];
  const reader = request.stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(new Blob([value as Uint8Array<ArrayBuffer>]));
  }
  const url = URL.createObjectURL(new Blob(parts, { type: request.mediaType ?? "application/octet-stream" }));
  const link = document.createElement("a");
  link.href = url;
  link.download = request.name;
  document.body.append(link);
  link.click();
  link.remove();
  // The browser has started the save by now; the URL may go a little later.
  setTimeout(() => URL.revokeObjectURL(url), LINGER_MS);
}
