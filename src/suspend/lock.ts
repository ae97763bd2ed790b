// The admission lock: one suspend or resume at a time, in arrival order, so a recheck of activity and the
// handshake it leads to are never interleaved with another's.

export class AdmissionLock {
  #tail: Promise<unknown> = Promise.resolve();

  run<T>(work: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(work, work);
    this.#tail = result.catch(() => undefined);
    return result;
  }
}
