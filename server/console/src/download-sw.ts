/**
 * The console's download worker (see save-stream.ts): the page hands it a
 * stream, then requests download/<id>/<name>; the worker answers with the
 * stream as an attachment, so the browser saves it to disk as it arrives.
 * It holds no data of its own, only streams waiting for their request.
 */
interface DownloadOffer {
  type: "download";
  id: string;
  name: string;
  size?: number;
  mediaType?: string;
  stream: ReadableStream<Uint8Array>;
}

interface WorkerScope {
  addEventListener(type: "install", listener: (event: { waitUntil(promise: Promise<unknown>): void }) => void): void;
  addEventListener(type: "activate", listener: (event: { waitUntil(promise: Promise<unknown>): void }) => void): void;
  addEventListener(type: "message", listener: (event: { data: unknown; ports: readonly MessagePort[] }) => void): void;
  addEventListener(type: "fetch", listener: (event: { request: Request; respondWith(response: Response): void }) => void): void;
  skipWaiting(): Promise<void>;
  clients: { claim(): Promise<void> };
}

const scope = self as unknown as WorkerScope;
/** Streams offered and not yet requested; a request takes its stream out. */
const offers = new Map<string, { offer: DownloadOffer; port: MessagePort }>();

scope.addEventListener("install", (event) => event.waitUntil(scope.skipWaiting()));
scope.addEventListener("activate", (event) => event.waitUntil(scope.clients.claim()));

scope.addEventListener("message", (event) => {
  const offer = event.data as DownloadOffer;
  const port = event.ports[0];
  if (offer?.type !== "download" || !port) return; // a keepalive: receiving it was the point
  offers.set(offer.id, { offer, port });
  port.postMessage("ready");
});

/** `attachment` with the name in ASCII for old parsers and in UTF-8 for the rest (RFC 6266). */
function disposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\%]/g, "_");
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

scope.addEventListener("fetch", (event) => {
  const match = /\/download\/([0-9a-f-]{36})\//.exec(new URL(event.request.url).pathname);
  const id = match?.[1];
  const waiting = id === undefined ? undefined : offers.get(id);
  if (!waiting) return;
  offers.delete(id!);
  const { offer, port } = waiting;
  const reader = offer.stream.getReader();
  // The page hears how it ended (all sent, cancelled in the browser, or failed), so it never waits forever.
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (!done) return controller.enqueue(value);
          controller.close();
          port.postMessage({ outcome: "done" });
        } catch (error) {
          controller.error(error);
          port.postMessage({ outcome: "failed", message: String(error) });
        }
      },
      cancel(reason) {
        port.postMessage({ outcome: "cancelled" });
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
  const headers: Record<string, string> = {
    "content-type": offer.mediaType ?? "application/octet-stream",
    "content-disposition": disposition(offer.name),
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
  };
  if (offer.size !== undefined) headers["content-length"] = String(offer.size);
  event.respondWith(new Response(body, { headers }));
});
