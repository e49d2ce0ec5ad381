/**
 * Waits for `promise` to settle (fulfilled or rejected) or for `ms`,
 * whichever comes first: a bounded wait for something that should end soon.
 * The timer does not keep the process alive.
 */
export function settleWithin(promise: Promise<unknown> | undefined, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    if (!promise) return resolve();
    setTimeout(resolve, ms).unref();
    promise.then(
      () => resolve(),
      () => resolve(),
    );
  });
}
