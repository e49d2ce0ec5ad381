/**
 * The few globals the SDK uses that exist in both Node and browsers. Declared
 * here instead of pulling in the DOM or Node type libraries, so that using
 * either platform's API by mistake is a compile error.
 */
declare function setTimeout(callback: () => void, ms: number): unknown;
declare function clearTimeout(handle: unknown): void;
declare function queueMicrotask(callback: () => void): void;
declare class TextDecoder {
  constructor(label?: string, options?: { fatal?: boolean });
  decode(bytes?: Uint8Array, options?: { stream?: boolean }): string;
}
declare class TextEncoder {
  encode(text: string): Uint8Array;
}
